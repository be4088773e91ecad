//! Semantic and hybrid search with the static embedding table, over a real daemon: vectors
//! computed in the background after indexing and after edits, coverage in `status` and
//! `embed`, fusion modes, and the lexical fallback when there are no vectors.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use booger_tests::{Env, TIMEOUT, write};
use serde_json::{Value, json};

const FILES: &[(&str, &str)] = &[
    (
        "app/mail.py",
        "def send_email(recipients, subject, body):\n    \"\"\"Deliver a mail message to every recipient through the SMTP server.\"\"\"\n    server = connect_smtp()\n    for r in recipients:\n        server.sendmail(r, subject, body)\n",
    ),
    (
        "app/archive.py",
        "def compress_folder(path, target):\n    \"\"\"Pack every file under path into one zip archive.\"\"\"\n    with zipfile.ZipFile(target, \"w\") as z:\n        for f in walk(path):\n            z.write(f)\n",
    ),
    (
        "app/retry.py",
        "def upload_with_backoff(blob, attempts=5):\n    \"\"\"Send the blob to storage; when the transfer fails, wait longer and try again.\"\"\"\n    for n in range(attempts):\n        if put(blob):\n            return True\n        sleep(2 ** n)\n    return False\n",
    ),
    (
        "app/dates.py",
        "def parse_timestamp(text):\n    \"\"\"Read an ISO 8601 date and time into a datetime.\"\"\"\n    return datetime.fromisoformat(text)\n",
    ),
];

pub fn project(env: &Env, name: &str) -> PathBuf {
    let root = env.project(name);
    for (rel, body) in FILES {
        write(&root, rel, body);
    }
    let out = env.run(&["index", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    root
}

fn call(env: &Env, root: &Path, tool: &str, args: Value) -> (String, Value) {
    let (text, data, is_error) = env.call(root, "semantic-tests", tool, args.clone());
    assert!(!is_error, "{tool} {args}: {text}");
    (text, data)
}

fn first(data: &Value) -> String {
    data["results"][0]["name"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn semantic_search_finds_code_described_in_other_words() {
    let env = Env::new();
    let root = project(&env, "sem");
    let coverage = env.embedded(&root);
    assert!(coverage["model"].as_str().unwrap().starts_with("static-"), "{coverage}");
    for (query, want) in [
        ("notify people by electronic mail", "send_email"),
        ("retry a failed upload", "upload_with_backoff"),
        ("make a compressed bundle of a directory", "compress_folder"),
        ("convert a string to a point in time", "parse_timestamp"),
    ] {
        let (text, data) = call(&env, &root, "semantic-search", json!({ "query": query, "output_mode": "signatures" }));
        assert_eq!(first(&data), want, "{query}: {text}");
        assert!(data.get("note").is_none(), "fully embedded, so no note: {data}");
    }
    // Filters apply to semantic results.
    let (_, data) =
        call(&env, &root, "semantic-search", json!({ "query": "retry a failed upload", "path_prefix": "app/mail.py" }));
    assert_eq!(data["results"].as_array().unwrap().len(), 1, "{data}");
    assert_eq!(first(&data), "send_email");

    // status reports the coverage.
    let status = env.json(&["status", root.to_str().unwrap()]);
    let e = &status["project"]["index"]["embeddings"];
    assert_eq!(e["embedded"], e["embeddable"], "{e}");
}

#[test]
fn edits_are_embedded_and_deleted_chunks_lose_their_vectors() {
    let env = Env::new();
    let root = project(&env, "edits");
    let before = env.embedded(&root);
    write(
        &root,
        "app/cache.py",
        "def evict_oldest(cache):\n    \"\"\"Drop the least recently used entry when the cache is full.\"\"\"\n    cache.popitem(last=False)\n",
    );
    std::fs::remove_file(root.join("app/dates.py")).unwrap();
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let (_, data) =
            call(&env, &root, "semantic-search", json!({ "query": "discard the stalest item from a full store" }));
        if first(&data) == "evict_oldest" {
            break;
        }
        assert!(Instant::now() < deadline, "the new function was never found semantically: {data}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let after = env.embedded(&root);
    assert_eq!(after["embeddable"], before["embeddable"], "one function added, one removed: {before} {after}");
    let (_, data) = call(
        &env,
        &root,
        "semantic-search",
        json!({ "query": "convert a string to a point in time", "head_limit": 50 }),
    );
    assert!(!data.to_string().contains("parse_timestamp"), "a deleted function is not found: {data}");

    // force: everything again, same coverage.
    let (text, _) = call(&env, &root, "embed", json!({ "action": "force" }));
    assert!(text.contains("embedded"), "{text}");
    assert_eq!(env.embedded(&root)["embedded"], after["embedded"]);
}

#[test]
fn hybrid_search_fuses_both_rankings() {
    let env = Env::new();
    let root = project(&env, "hybrid");
    env.embedded(&root);
    // An identifier (lexical) and a description (semantic) both land.
    let (_, data) = call(&env, &root, "hybrid-search", json!({ "query": "parse_timestamp" }));
    assert_eq!(first(&data), "parse_timestamp");
    let (_, data) = call(&env, &root, "hybrid-search", json!({ "query": "notify people by electronic mail" }));
    assert_eq!(first(&data), "send_email");
    for args in [
        json!({ "query": "retry a failed upload", "fusion": "alpha" }),
        json!({ "query": "retry a failed upload", "fusion": "alpha", "alpha": 0.2 }),
        json!({ "query": "retry a failed upload", "k": 5, "output_mode": "files_with_matches" }),
    ] {
        let (text, data) = call(&env, &root, "hybrid-search", args.clone());
        assert_eq!(first(&data), "upload_with_backoff", "{args}: {text}");
    }
    let (text, _, is_error) = env.call(&root, "t", "hybrid-search", json!({ "query": "x", "alpha": 2 }));
    assert!(is_error && text.contains("`alpha` must be a number from 0 to 1"), "{text}");
}

/// A question's vectors re-rank lexical search's candidates in `hybrid-search`: two
/// functions hold its words equally, and the one that does what it asks comes first.
#[test]
fn a_questions_vectors_pick_among_lexical_search_answers() {
    let env = Env::new();
    let root = env.project("rerank");
    write(&root, "app/retry.py", FILES[2].1);
    write(
        &root,
        "app/report.py",
        "def upload_report(failed):\n    \"\"\"Count each failed upload in the upload report.\"\"\"\n    report.failed_uploads += len(failed)\n    return report\n",
    );
    let out = env.run(&["index", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    env.embedded(&root);
    let question = json!({ "query": "where is a failed upload sent again?", "output_mode": "signatures" });
    let (text, data) = call(&env, &root, "search", question.clone());
    assert_eq!(first(&data), "upload_report", "lexically a tie, in path order: {text}");
    let (text, data) = call(&env, &root, "hybrid-search", question);
    assert_eq!(first(&data), "upload_with_backoff", "{text}");
    assert_eq!(data["results"].as_array().unwrap().len(), 2, "{text}");
}

/// `semantic-search` ranks files by its vectors alone: a file whose code holds every word of
/// the query (which lifts a file in `search`'s files) but means something else stays behind
/// the one that does what the query says.
#[test]
fn semantic_files_rank_by_meaning_not_by_the_words_they_hold() {
    let env = Env::new();
    let root = project(&env, "semfiles");
    write(
        &root,
        "app/ledger.py",
        "def tally(rows):\n    \"\"\"Sum the rows.\"\"\"\n    # notify people by electronic mail\n    return sum(rows)\n",
    );
    assert!(env.run(&["index", root.to_str().unwrap()]).status.success());
    env.embedded(&root);
    let args = json!({ "query": "notify people by electronic mail", "output_mode": "files_with_matches" });
    let (text, data) = call(&env, &root, "semantic-search", args);
    assert_eq!(data["results"][0]["path"], "app/mail.py", "{text}");
}

#[test]
fn without_embeddings_the_answer_is_lexical_and_says_so() {
    let env = Env::new();
    let _daemon = env.start_daemon_with(&["--no-embed"]);
    let root = project(&env, "off");
    for tool in ["semantic-search", "hybrid-search"] {
        let (text, data) = call(&env, &root, tool, json!({ "query": "upload_with_backoff" }));
        assert_eq!(first(&data), "upload_with_backoff", "{tool}: {text}");
        assert!(text.contains("embeddings are off") && text.contains("lexical results"), "{tool}: {text}");
    }
    let (text, _, is_error) = env.call(&root, "t", "embed", json!({}));
    assert!(is_error && text.contains("--no-embed"), "{text}");
    let status = env.json(&["status", root.to_str().unwrap()]);
    assert!(status["project"]["index"]["embeddings"].is_null(), "{status}");
}
