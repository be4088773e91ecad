//! The search-side tools over a real indexed project: ranking, output modes, filters, token
//! budgets and cursors, empty answers that say why, volatile context and sessions.

use std::path::Path;

use booger_tests::{Env, write};
use serde_json::{Value, json};

/// A small multi-language project with definitions, calls, imports and tests.
fn project(env: &Env, name: &str) -> std::path::PathBuf {
    let root = env.project(name);
    write(
        &root,
        "src/config.rs",
        "use std::path::Path;\n\n/// Reads the configuration file.\npub fn parse_config(path: &Path) -> Config {\n    let text = std::fs::read_to_string(path).unwrap();\n    Config { text }\n}\n\npub struct Config {\n    pub text: String,\n}\n",
    );
    write(
        &root,
        "src/main.rs",
        "mod config;\nuse config::parse_config;\n\nfn main() {\n    let c: Config = parse_config(Path::new(\"booger.toml\"));\n    println!(\"{}\", c.text);\n}\n\nfn handle_request() {}\n",
    );
    write(
        &root,
        "src/server.py",
        "import socket\n\nclass HTTPServer:\n    \"\"\"Serves HTTP.\"\"\"\n\n    def serve_forever(self):\n        \"\"\"Accept connections until shutdown.\"\"\"\n        while True:\n            self.handle_one()\n\n    def handle_one(self):\n        pass\n\n\ndef retry_upload(blob, attempts=3):\n    \"\"\"Retry a failed upload with backoff.\"\"\"\n    return blob\n",
    );
    write(
        &root,
        "tests/test_server.py",
        "from src.server import HTTPServer, retry_upload\n\ndef test_retry_upload():\n    assert retry_upload(b'x')\n\ndef test_serve_forever_stops():\n    HTTPServer().serve_forever\n",
    );
    write(&root, "web/app.ts", "export function parseConfig(raw: string): object {\n  return JSON.parse(raw);\n}\n");
    write(
        &root,
        "docs/guide.md",
        "# Guide\n\nHow to configure the server.\n\n## Retries\n\nUploads are retried three times.\n",
    );
    let out = env.run(&["index", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    root
}

/// Searches once and waits until the project's in-memory ranking index is ready, so later
/// calls in a test all take the same ranking path.
pub(crate) fn warm(env: &Env, root: &Path) {
    env.call(root, "warmup", "search", json!({ "query": "warm", "output_mode": "count" }));
    let deadline = std::time::Instant::now() + booger_tests::TIMEOUT;
    while env.json(&["status", root.to_str().unwrap()])["project"]["index"]["ranking_index"] != "ready" {
        assert!(std::time::Instant::now() < deadline, "ranking index never became ready");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

pub(crate) fn search(env: &Env, root: &Path, args: Value) -> (String, Value, bool) {
    env.call(root, "s1", "search", args)
}

#[test]
fn definitions_rank_first_in_every_output_mode() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "modes");
    let (text, data, err) = search(&env, &root, json!({ "query": "parse_config" }));
    assert!(!err, "{text}");
    let first = &data["results"][0];
    assert_eq!(
        (first["path"].as_str(), first["name"].as_str()),
        (Some("src/config.rs"), Some("parse_config")),
        "{text}"
    );
    // content mode shows numbered lines.
    assert!(text.contains("4:pub fn parse_config(path: &Path) -> Config {"), "{text}");

    let (sig, _, _) = search(&env, &root, json!({ "query": "parse_config", "output_mode": "signatures" }));
    assert!(sig.contains("src/config.rs:3-7 [function] pub fn parse_config(path: &Path) -> Config"), "{sig}");
    let (files, fdata, _) =
        search(&env, &root, json!({ "query": "parse_config", "output_mode": "files_with_matches", "head_limit": 2 }));
    let paths: Vec<&str> = fdata["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
    let distinct: std::collections::BTreeSet<&str> = paths.iter().copied().collect();
    assert_eq!(paths.len(), 2, "head_limit counts files: {files}");
    assert_eq!(distinct.len(), paths.len(), "each file once: {files}");
    // One line per file, with its best chunks' lines and names.
    assert!(files.lines().nth(1).unwrap().starts_with("src/config.rs:3-7 parse_config"), "{files}");
    let (count, _, _) = search(&env, &root, json!({ "query": "parse_config", "output_mode": "count" }));
    assert!(count.ends_with("result(s)") && !count.starts_with('0'), "{count}");
    // camelCase is found by its words.
    let (_, data, _) = search(&env, &root, json!({ "query": "parse config", "language": "typescript" }));
    assert_eq!(data["results"][0]["name"], "parseConfig");
}

#[test]
fn filters_paging_and_safe_punctuation() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "filters");
    let (_, data, _) =
        search(&env, &root, json!({ "query": "retry upload", "kind": "function", "path_prefix": "src" }));
    let paths: Vec<&str> = data["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["src/server.py"]);
    let (_, data, _) = search(&env, &root, json!({ "query": "retry", "path_prefix": "tests/*.py" }));
    assert!(data["results"].as_array().unwrap().iter().all(|r| r["path"].as_str().unwrap().starts_with("tests/")));
    // Paging: offset continues where head_limit stopped.
    let (_, all, _) =
        search(&env, &root, json!({ "query": "server", "output_mode": "files_with_matches", "head_limit": 50 }));
    let (_, page2, _) = search(
        &env,
        &root,
        json!({ "query": "server", "output_mode": "files_with_matches", "head_limit": 2, "offset": 2 }),
    );
    assert_eq!(page2["results"][0], all["results"][2]);
    // FTS5 syntax characters are data, not operators.
    for q in ["tree-sitter", "os.path", "std::io", "a/b", "\"unbalanced", "NOT AND OR", "*", "(x"] {
        let (text, _, err) = search(&env, &root, json!({ "query": q }));
        assert!(!err, "{q}: {text}");
    }
    // AND finds nothing, OR still answers.
    let (_, data, _) = search(&env, &root, json!({ "query": "retry zebraquux" }));
    assert!(!data["results"].as_array().unwrap().is_empty());
}

#[test]
fn empty_answers_say_why_and_how_to_fix_it() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "empty");
    let (text, _, err) = search(&env, &root, json!({ "query": "zebraquux" }));
    assert!(!err && text.contains("No matches for \"zebraquux\""), "{text}");
    let (text, _, _) = search(&env, &root, json!({ "query": "config", "path_prefix": "nope/" }));
    assert!(text.contains("No file or folder \"nope\" in empty") && !text.contains("booger index"), "{text}");
    // A project whose index holds no files.
    let hollow = env.project("hollow");
    env.run(&["index", hollow.to_str().unwrap()]);
    let (text, _, err) = search(&env, &hollow, json!({ "query": "x" }));
    assert!(!err && text.contains("No indexed files. Run: booger index"), "{text}");
    let unregistered = env.project("unregistered");
    let (text, _, err) = search(&env, &unregistered, json!({ "query": "x" }));
    assert!(err && text.contains("booger projects add"), "{text}");
    // Bad arguments are tool errors that say how to fix them.
    let (text, _, err) = search(&env, &root, json!({ "query": "x", "head_limit": -1 }));
    assert!(err && text.contains("`head_limit` must be an integer from 1 to 500"), "{text}");
    let (text, _, err) = search(&env, &root, json!({ "head_limit": 3 }));
    assert!(err && text.contains("missing required argument `query`"), "{text}");
    let (text, _, err) = search(&env, &root, json!({ "query": "x", "output_mode": "everything" }));
    assert!(
        err && text.contains("`output_mode` must be one of content, signatures, files_with_matches, count"),
        "{text}"
    );
}

#[test]
fn a_cut_answer_continues_exactly_where_it_stopped() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "budget");
    let body: String = (0..300).map(|i| format!("    value_{i} = compute_total({i})\n")).collect();
    write(&root, "big.py", format!("def compute_total(x):\n    return x\n\ndef giant():\n{body}"));
    env.run(&["index", root.to_str().unwrap()]);
    let args = |cursor: Option<&str>| {
        let mut a = json!({ "query": "compute_total", "max_lines": 1000, "head_limit": 5, "max_tokens": 300 });
        if let Some(c) = cursor {
            a["cursor"] = json!(c);
        }
        a
    };
    let (full, _, _) = search(
        &env,
        &root,
        json!({ "query": "compute_total", "max_lines": 1000, "head_limit": 5, "max_tokens": 20000 }),
    );
    let mut pieces = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let (text, data, err) = search(&env, &root, args(cursor.as_deref()));
        assert!(!err, "{text}");
        assert!(text.len() <= 300 * 4 + 200, "answer over budget: {} chars", text.len());
        pieces.push(text);
        match data["cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert!(pieces.len() > 3, "the budget never cut");
    assert!(pieces[0].contains("call again with cursor"));
    // Every code line of the full answer appears once across the pieces, in order.
    let lines = |t: &str| {
        t.lines()
            .filter(|l| l.split(':').next().is_some_and(|n| n.parse::<u32>().is_ok()))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let joined: Vec<String> = pieces.iter().flat_map(|p| lines(p)).collect();
    assert_eq!(joined, lines(&full));
}

#[test]
fn notes_focus_visit_and_forget_are_per_session() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "context");
    warm(&env, &root);
    let (_, _, err) =
        env.call(&root, "alice", "annotate", json!({ "target": "src/server.py", "note": "retry logic is flaky" }));
    assert!(!err);
    let (text, data, _) = env.call(&root, "alice", "search", json!({ "query": "retry upload" }));
    assert!(text.contains("[note] retry logic is flaky"), "{text}");
    assert!(data["results"][0]["notes"].is_array());
    // Bob does not see Alice's note unless it is shared.
    let (text, _, _) = env.call(&root, "bob", "search", json!({ "query": "retry upload" }));
    assert!(!text.contains("[note]"), "{text}");
    env.call(
        &root,
        "alice",
        "annotate",
        json!({ "target": "retry_upload", "note": "everyone: see RFC", "session": "shared" }),
    );
    let (text, _, _) = env.call(&root, "bob", "search", json!({ "query": "retry upload" }));
    assert!(text.contains("[note] everyone: see RFC"), "{text}");
    let (list, _, _) = env.call(&root, "bob", "annotations", json!({}));
    assert!(list.contains("everyone: see RFC (shared)") && !list.contains("flaky"), "{list}");

    // Focus lifts a path; visited sinks it.
    let ranked = |session: &str| {
        let (_, d, _) = env.call(
            &root,
            session,
            "search",
            json!({ "query": "server", "output_mode": "signatures", "head_limit": 20 }),
        );
        d["results"].as_array().unwrap().clone()
    };
    let rank_of = |session: &str, path: &str| ranked(session).iter().position(|r| r["path"] == path).unwrap();
    let last = ranked("carol").last().unwrap()["path"].as_str().unwrap().to_owned();
    let before = rank_of("carol", &last);
    assert!(before > 0, "the test needs a path that is not first");
    env.call(&root, "carol", "focus", json!({ "paths": [&last] }));
    assert!(rank_of("carol", &last) < before, "focus did not lift {last}");
    assert_eq!(rank_of("dave", &last), before, "focus leaked into another session");
    let score_of = |session: &str, path: &str| {
        ranked(session).iter().find(|r| r["path"] == path).unwrap()["score"].as_f64().unwrap()
    };
    let before = score_of("erin", "src/server.py");
    env.call(&root, "erin", "visit", json!({ "paths": ["src/server.py"] }));
    assert!((score_of("erin", "src/server.py") - (before - 3.0)).abs() < 0.01, "visited paths rank 3 lower");

    // Expiry and forget.
    env.call(&root, "alice", "annotate", json!({ "target": "src/main.rs", "note": "short-lived", "ttl": 1 }));
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    let (list, _, _) = env.call(&root, "alice", "annotations", json!({}));
    assert!(!list.contains("short-lived"), "{list}");
    let (text, _, _) = env.call(&root, "alice", "forget", json!({}));
    assert!(text.starts_with("Forgot"), "{text}");
    let (list, _, _) = env.call(&root, "alice", "annotations", json!({}));
    assert!(
        list.contains("everyone: see RFC") && !list.contains("flaky"),
        "shared notes survive a session's forget: {list}"
    );
    // Notes belong to the agents: re-indexing keeps them.
    env.run(&["index", root.to_str().unwrap(), "--full"]);
    let (list, _, _) = env.call(&root, "bob", "annotations", json!({}));
    assert!(list.contains("everyone: see RFC"), "{list}");
}

#[test]
fn references_are_classified_and_scoped() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "refs");
    let (text, data, err) = env.call(&root, "s", "references", json!({ "symbol": "parse_config" }));
    assert!(!err, "{text}");
    let classes: Vec<(String, String)> = data["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["path"].as_str().unwrap().to_owned(), m["class"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(classes[0], ("src/config.rs".to_owned(), "definition".to_owned()), "{text}");
    assert!(classes.contains(&("src/main.rs".to_owned(), "import".to_owned())), "{text}");
    assert!(classes.contains(&("src/main.rs".to_owned(), "call".to_owned())), "{text}");
    assert!(text.contains("src/main.rs:5 [call] in main:"), "{text}");
    let (text, data, _) = env.call(&root, "s", "references", json!({ "symbol": "Config", "scope": "type" }));
    assert!(data["results"].as_array().unwrap().iter().all(|m| m["class"] == "type"), "{text}");
    assert!(text.contains("src/config.rs:4 [type]"), "{text}");
    let (count, _, _) = env.call(&root, "s", "references", json!({ "symbol": "parse_config", "output_mode": "count" }));
    assert!(count.contains("1 definition"), "{count}");
    let (text, _, _) = env.call(&root, "s", "references", json!({ "symbol": "nothing_here" }));
    assert!(text.contains("No matches for symbol 'nothing_here'"), "{text}");
}

#[test]
fn outlines_summaries_tests_grep_and_changes() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "nav");
    let (text, _, _) = env.call(&root, "s", "symbols", json!({ "path": "src/server.py" }));
    assert!(text.contains("src/server.py\n  1-1 [import] import socket\n  3-5 [class] class HTTPServer"), "{text}");
    assert!(text.contains("[method] def serve_forever(self)"), "{text}");
    // A cut outline continues from its cursor; a made-up cursor is refused.
    let (cut, data, _) = env.call(&root, "s", "symbols", json!({ "path": "src", "max_tokens": 50 }));
    let cursor = data["cursor"].as_str().unwrap_or_else(|| panic!("no cursor: {cut}")).to_owned();
    let (rest, _, err) = env.call(&root, "s", "symbols", json!({ "path": "src", "max_tokens": 50, "cursor": cursor }));
    assert!(!err && rest != cut, "{rest}");
    let (text, _, err) = env.call(&root, "s", "changed-since", json!({ "since": "2000-01-01", "cursor": "x" }));
    assert!(err && text.contains("is not one this tool returned"), "{text}");
    let (count, _, _) = env.call(&root, "s", "symbols", json!({ "path": "src", "output_mode": "count" }));
    assert!(count.contains("in 3 file(s)"), "{count}");

    // A test suite's `setup` is not one of the project's entry points.
    write(&root, "tests/conftest.py", "def setup():\n    pass\n");
    let out = env.run(&["index", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    let (text, data, _) = env.call(&root, "s", "directory-summary", json!({}));
    assert!(text.contains("entry points") && text.contains("fn main()") && text.contains("handle_request"), "{text}");
    assert!(!text.contains("def setup()"), "{text}");
    assert_eq!(data["subdirectories"]["src"], 3);

    let (text, _, _) = env.call(&root, "s", "tests-for", json!({ "symbol": "retry_upload" }));
    assert!(text.contains("tests/test_server.py") && text.contains("test_retry_upload"), "{text}");
    let (text, _, _) = env.call(&root, "s", "tests-for", json!({ "symbol": "serve_forever", "output_mode": "count" }));
    assert!(text.starts_with("1 test(s)"), "{text}");
    // A JavaScript or TypeScript test is its runner call, named by its description.
    write(
        &root,
        "web/app.test.ts",
        "describe('parseConfig', () => {\n  it('reads an empty object', () => {\n    expect(parseConfig('{}')).toEqual({})\n  })\n})\n",
    );
    env.run(&["index", root.to_str().unwrap()]);
    let (text, _, _) = env.call(&root, "s", "tests-for", json!({ "symbol": "parseConfig" }));
    assert!(text.contains("web/app.test.ts\n  2-4 [test] it('reads an empty object'"), "{text}");

    let (text, _, _) = env.call(&root, "s", "grep", json!({ "pattern": r"def \w+_forever", "context": 1 }));
    assert!(
        text.contains("src/server.py:6:    def serve_forever(self):") && text.contains("src/server.py-7-"),
        "{text}"
    );
    assert!(text.starts_with("2 matching line(s)"), "{text}");
    let (text, _, err) = env.call(&root, "s", "grep", json!({ "pattern": "(unclosed" }));
    assert!(err && text.contains("invalid regex") && text.contains("literal=true"), "{text}");
    let (text, _, err) = env.call(&root, "s", "grep", json!({ "pattern": "(unclosed", "literal": true }));
    assert!(!err && text.starts_with("No lines match"), "{text}");

    let (text, _, err) = env.call(&root, "s", "changed-since", json!({ "since": "last tuesday" }));
    assert!(err && text.contains("RFC 3339"), "{text}");
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    let mark = boogerd::base::time::now_rfc3339();
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    write(
        &root,
        "web/app.ts",
        "export function parseConfig(raw: string): object { return {}; }\nexport function fresh(): void {}\n",
    );
    env.run(&["index", root.to_str().unwrap()]);
    let (text, data, _) = env.call(&root, "s", "changed-since", json!({ "since": mark }));
    let paths: Vec<&str> = data["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert!(!paths.is_empty() && paths.iter().all(|p| *p == "web/app.ts"), "{text}");
}

#[test]
fn workspace_search_expand_and_batch() {
    let env = Env::new();
    let _d = env.start_daemon();
    let a = project(&env, "alpha");
    let b = env.project("beta");
    write(&b, "lib.go", "package lib\n\n// ParseConfig parses.\nfunc ParseConfig(s string) string { return s }\n");
    env.run(&["index", b.to_str().unwrap()]);

    let (text, data, _) =
        env.call(&a, "s", "workspace-search", json!({ "query": "parse config", "output_mode": "files_with_matches" }));
    let paths: Vec<&str> = data["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert!(
        paths.iter().any(|p| p.starts_with("alpha:")) && paths.iter().any(|p| p.starts_with("beta:lib.go")),
        "{text}"
    );

    let (text, data, _) = env.call(&a, "s", "search-expand", json!({ "query": "retry upload", "top_files": 1 }));
    assert!(text.contains("== outline of src/server.py") && text.contains("class HTTPServer"), "{text}");
    assert_eq!(data["outlines"].as_array().unwrap().len(), 1);

    let calls = json!([
        { "tool": "search", "arguments": { "query": "parse_config", "output_mode": "count" } },
        { "tool": "grep", "arguments": { "pattern": "(" } },
        { "tool": "batch", "arguments": { "calls": [] } },
        { "tool": "symbols", "arguments": { "path": "src/config.rs", "output_mode": "count" } },
    ]);
    let (text, data, err) = env.call(&a, "s", "batch", json!({ "calls": calls }));
    assert!(!err, "{text}");
    let r = data["results"].as_array().unwrap();
    assert_eq!(r.len(), 4);
    assert_eq!(
        (r[0]["isError"].as_bool(), r[1]["isError"].as_bool(), r[2]["isError"].as_bool(), r[3]["isError"].as_bool()),
        (Some(false), Some(true), Some(true), Some(false))
    );
    assert!(r[2]["text"].as_str().unwrap().contains("cannot contain another batch"));
    let too_many: Vec<Value> = (0..21).map(|_| json!({ "tool": "status" })).collect();
    let (text, _, err) = env.call(&a, "s", "batch", json!({ "calls": too_many }));
    assert!(err && text.contains("up to 20"), "{text}");
}

/// `workspace-search` ranks files as `search` does: by their chunks and by the share of the
/// query's words each holds anywhere, looked up in its own project. The function that holds
/// three of the words ranks its file first by chunks alone; the file that holds every word,
/// spread over two functions, is the one a task would change.
#[test]
fn workspace_files_rank_by_the_query_words_they_hold_in_their_project() {
    let env = Env::new();
    let _d = env.start_daemon();
    let a = env.project("alpha");
    let b = env.project("beta");
    write(
        &a,
        "cache/store.py",
        "def expire(cache):\n    \"\"\"Evict stale items.\"\"\"\n    cache.pop()\n\n\ndef save(cache):\n    \"\"\"Write the entries to disk.\"\"\"\n    dump(cache)\n",
    );
    write(
        &b,
        "memory.py",
        "def purge(items):\n    \"\"\"Evict stale entries; evict stale entries first.\"\"\"\n    return items\n",
    );
    for root in [&a, &b] {
        for i in 0..30 {
            write(root, &format!("lib/m{i}.py"), format!("def helper_{i}(x):\n    return x + {i}\n"));
        }
        let out = env.run(&["index", root.to_str().unwrap()]);
        assert!(out.status.success(), "{}", booger_tests::describe(&out));
    }
    let query = json!({ "query": "evict stale entries from disk", "output_mode": "files_with_matches" });
    let (text, data, err) = env.call(&a, "s", "workspace-search", query);
    assert!(!err, "{text}");
    let paths: Vec<&str> = data["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert_eq!(paths[..2], ["alpha:cache/store.py", "beta:memory.py"], "{text}");
}

/// Content answers show a long chunk's declaration and the lines that match, mark what they
/// leave out and say how to see it all; `max_lines` shows the chunk's lines as they are.
#[test]
fn content_shows_the_lines_that_match_and_how_to_see_the_rest() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = env.project("snippets");
    let mut body = String::from("def upload_batch(items):\n    \"\"\"Send every item.\"\"\"\n");
    for i in 0..40 {
        body.push_str(&format!("    step_{i}(items)\n"));
    }
    body.push_str("    if attempts > limit:\n        raise RetryBudgetExhausted(attempts)\n    return items\n");
    write(&root, "jobs.py", &body);
    let out = env.run(&["index", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    let (text, data, err) = search(&env, &root, json!({ "query": "retry budget exhausted" }));
    assert!(!err, "{text}");
    assert!(text.contains("1:def upload_batch(items):"), "the declaration: {text}");
    assert!(text.contains("44:        raise RetryBudgetExhausted(attempts)"), "the matching line: {text}");
    assert!(text.contains("⋮\n") && text.contains("more line(s): max_lines=45 shows them"), "{text}");
    assert!(!text.contains("step_20"), "an unmatched middle line was shown: {text}");
    assert!(data["results"][0]["content"].as_str().unwrap().contains("RetryBudgetExhausted"));
    let (whole, _, _) = search(&env, &root, json!({ "query": "retry budget exhausted", "max_lines": 100 }));
    assert!(whole.contains("23:    step_20(items)") && !whole.contains('⋮'), "{whole}");
}

/// Inputs have limits with clear errors, and no input makes an answer break its budget: a
/// pasted issue of 25,000 characters is searched (a query has no length limit below the
/// message's), a long pattern is refused, a long note is cut where search shows it, a long
/// query is not echoed whole.
#[test]
fn long_inputs_are_searched_refused_or_cut_never_echoed_whole() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "limits");
    let issue = format!(
        "parse_config fails on an empty file\n\n{}",
        "When the config file is empty the server stops. ".repeat(540)
    );
    assert!(issue.len() > 25_000);
    let (text, data, err) = search(&env, &root, json!({ "query": issue, "output_mode": "files_with_matches" }));
    assert!(!err, "{}", &text[..text.len().min(300)]);
    assert_eq!(data["results"][0]["path"], "src/config.rs", "{text}");
    assert!(text.len() < 2_000, "{} bytes: the query was echoed whole", text.len());
    let (text, _, err) = env.call(&root, "s1", "grep", json!({ "pattern": "w".repeat(5_000) }));
    assert!(err && text.contains("at most 4096") && text.len() < 300, "{}", &text[..text.len().min(300)]);
    let note = "n".repeat(4_000);
    let (_, _, err) = env.call(&root, "s1", "annotate", json!({ "target": "src/config.rs", "note": note }));
    assert!(!err);
    let (text, data, _) = search(&env, &root, json!({ "query": "parse_config", "max_tokens": 50 }));
    assert!(text.len() <= 200 + 150, "{} bytes for max_tokens=50: {text}", text.len());
    assert!(data.to_string().len() < 4_000, "the structured answer carries the note whole");
    let missing = format!("zzz{}", "q".repeat(3_000));
    let (text, _, _) = search(&env, &root, json!({ "query": missing }));
    assert!(text.len() < 600, "{} bytes: the query was echoed whole", text.len());
}

/// Notes have a cap per session and a budget per answer: a flood of notes neither grows
/// without end nor comes back whole, in the text or in the structured answer.
#[test]
fn notes_are_capped_and_listed_within_the_budget() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "notes");
    let long = "x".repeat(2_000);
    let calls: Vec<Value> = (0..1_000)
        .map(|i| json!({ "tool": "annotate", "arguments": { "target": format!("src/f{i}.rs"), "note": long, "session": "shared" } }))
        .collect();
    for chunk in calls.chunks(20) {
        let (text, _, err) = env.call(&root, "s", "batch", json!({ "calls": chunk }));
        assert!(!err, "{text}");
    }
    let (text, _, err) =
        env.call(&root, "s", "annotate", json!({ "target": "src/x.rs", "note": "one more", "session": "shared" }));
    assert!(err && text.contains("1000 notes") && text.contains("forget"), "{text}");
    let (text, data, err) = env.call(&root, "s", "annotations", json!({ "session": "shared" }));
    assert!(!err);
    assert!(text.len() <= 6_000 * 4 + 200, "{} bytes of text", text.len());
    assert!(data.to_string().len() <= 6_000 * 4 + 2_000, "{} bytes of structuredContent", data.to_string().len());
    assert_eq!(data["total"], 1_000);
    let shown = data["annotations"].as_array().unwrap().len();
    assert!(text.contains(&format!("offset={shown}")), "{text}");
    let (_, page, _) = env.call(&root, "s", "annotations", json!({ "session": "shared", "offset": shown }));
    assert_eq!(page["annotations"][0]["target"], format!("src/f{shown}.rs"));

    // A batch has one budget for the whole answer: ten full answers are not ten times it.
    let calls: Vec<Value> =
        (0..10).map(|_| json!({ "tool": "annotations", "arguments": { "session": "shared" } })).collect();
    let (text, data, err) = env.call(&root, "s", "batch", json!({ "calls": calls }));
    assert!(!err);
    let size = text.len() + data.to_string().len();
    assert!(size <= 2 * 3 * 6_000 * 4 + 10_000, "{size} bytes for the batch");
    assert!(text.contains("reached its budget"), "{}", &text[text.len().saturating_sub(300)..]);
}

/// The first answer after an index run ranks as every later one: the run leaves the ranking
/// index current before it returns (built when there is none, a held one taking even a
/// checkout's many files as a delta), so no query after `booger index` is answered from
/// FTS5 while a build runs in the background.
#[test]
fn the_first_answer_after_an_index_or_a_checkout_ranks_from_the_ranking_index() {
    let env = Env::new();
    // Without the watcher, only `booger index` applies the checkout: nothing else races it.
    let _d = env.start_daemon_with(&["--no-watch"]);
    let root = env.project("first-second");
    for i in 0..120 {
        write(
            &root,
            &format!("src/part_{i}.py"),
            format!("def handle_part_{i}(request):\n    return request.part_{i}\n"),
        );
    }
    booger_tests::git(&root, &["init", "-q"]);
    booger_tests::commit_all(&root, "parts");
    booger_tests::git(&root, &["checkout", "-q", "-b", "renamed"]);
    for i in 0..100 {
        write(
            &root,
            &format!("src/part_{i}.py"),
            format!("def resolve_piece_{i}(request):\n    return request.piece_{i}\n"),
        );
    }
    booger_tests::commit_all(&root, "renamed");
    booger_tests::git(&root, &["checkout", "-q", "main"]);
    let root_arg = root.to_str().unwrap();
    let ranking = |env: &Env| env.json(&["status", root_arg])["project"]["index"]["ranking_index"].clone();

    let out = env.run(&["index", root_arg]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    assert_eq!(ranking(&env), "ready", "a first index leaves its ranking index built");
    let (text, data, _) = search(&env, &root, json!({ "query": "handle_part_7", "output_mode": "files_with_matches" }));
    assert_eq!(data["results"][0]["path"], "src/part_7.py", "{text}");

    // A checkout changing most files: the held index takes them as a delta at once.
    booger_tests::git(&root, &["checkout", "-q", "renamed"]);
    let out = env.run(&["index", root_arg]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    assert_eq!(ranking(&env), "ready", "an index after a checkout leaves its ranking index current");
    let (text, data, _) =
        search(&env, &root, json!({ "query": "resolve_piece_7", "output_mode": "files_with_matches" }));
    assert_eq!(data["results"][0]["path"], "src/part_7.py", "{text}");

    // A full rebuild over a held ranking index: the run builds a new base beside its writes,
    // which replaces the held one (and the older base on disk) before the run returns.
    write(&root, "src/part_8.py", "def settle_fragment_8(request):\n    return request\n");
    let out = env.run(&["index", root_arg, "--full"]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    assert_eq!(ranking(&env), "ready", "a full index leaves its ranking index current");
    let (text, data, _) =
        search(&env, &root, json!({ "query": "settle_fragment_8", "output_mode": "files_with_matches" }));
    assert_eq!(data["results"][0]["path"], "src/part_8.py", "{text}");
    let (text, data, _) = search(&env, &root, json!({ "query": "resolve_piece_8", "output_mode": "signatures" }));
    assert!(data["results"].as_array().unwrap().iter().all(|r| r["name"] != "resolve_piece_8"), "{text}");
    let bases: Vec<String> = std::fs::read_dir(env.index_dir(&root))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("rank-"))
        .collect();
    assert_eq!(bases.len(), 1, "one ranking base on disk: {bases:?}");
}
