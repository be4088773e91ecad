//! `booger eval` on real git repositories with scripted histories: which commits become
//! queries and what their gold is, a shallow clone, an empty history.

use booger_tests::{Env, commit_all as commit, describe, git, write};
use serde_json::{Value, json};

/// The `eval` answer's data for `repo` (the CLI waits for its result), with the mined queries.
fn eval(env: &Env, repo: &std::path::Path) -> Value {
    env.json(&["eval", "--project", repo.to_str().unwrap(), "--details"])
}

#[test]
fn the_miner_keeps_descriptive_commits_of_a_few_source_files() {
    let env = Env::new();
    let repo = env.git_project("history");
    write(&repo, "upload.py", "def retry_upload(blob):\n    return blob\n\n\ndef other():\n    return 1\n");
    write(&repo, "helper.py", "def helper():\n    return 2\n");
    write(&repo, "gone.py", "def gone():\n    return 3\n");
    commit(&repo, "Add upload retries for the client (#12)");
    // Documentation only.
    write(&repo, "README.md", "# history\n");
    commit(&repo, "Document the retry behaviour in detail");
    // A sweep of five source files.
    for i in 0..5 {
        write(&repo, &format!("sweep/s{i}.py"), format!("def s{i}():\n    return {i}\n"));
    }
    commit(&repo, "Add the sweep modules all at once");
    // A rename and a deletion.
    git(&repo, &["mv", "helper.py", "helpers.py"]);
    commit(&repo, "Rename the helper module to something clearer");
    std::fs::remove_file(repo.join("gone.py")).unwrap();
    commit(&repo, "Remove the module nobody imports anymore");
    // A routine subject.
    write(&repo, "upload.py", "def retry_upload(blob):\n    return blob\n\n\ndef other():\n    return 11\n");
    commit(&repo, "Bump version to 1.2.3");
    // A merge of a branch with one real change.
    git(&repo, &["checkout", "-q", "-b", "topic"]);
    write(&repo, "topic.py", "def topic_feature():\n    return 'topic'\n");
    commit(&repo, "Add the topic feature behind a flag");
    git(&repo, &["checkout", "-q", "main"]);
    git(&repo, &["merge", "-q", "--no-ff", "-m", "Merge branch topic into main", "topic"]);
    // A change to one function.
    write(
        &repo,
        "upload.py",
        "def retry_upload(blob):\n    return send(blob, retries=3)\n\n\ndef other():\n    return 11\n",
    );
    commit(&repo, "Fix the backoff when uploads are retried");

    let _d = env.start_daemon();
    assert!(env.run(&["index", repo.to_str().unwrap()]).status.success());
    let v = eval(&env, &repo);
    let subjects: Vec<&str> = v["details"].as_array().unwrap().iter().map(|q| q["subject"].as_str().unwrap()).collect();
    assert_eq!(
        subjects,
        [
            "Fix the backoff when uploads are retried",
            "Add the topic feature behind a flag",
            "Add upload retries for the client"
        ],
        "{v}"
    );
    let fix = &v["details"][0];
    assert_eq!(fix["gold_files"], json!(["upload.py"]), "{v}");
    assert_eq!(
        fix["gold_functions"],
        json!([{ "path": "upload.py", "name": "retry_upload", "start_line": 1, "end_line": 2 }])
    );
    let first = &v["details"][2];
    // gone.py is gone; helper.py is gold under the name a later commit gave it, its function
    // found there.
    assert_eq!(first["gold_files"], json!(["helpers.py", "upload.py"]), "{v}");
    assert_eq!(
        first["gold_functions"][0],
        json!({ "path": "helpers.py", "name": "helper", "start_line": 1, "end_line": 2 })
    );
    let skipped = &v["history"]["skipped"];
    assert_eq!(skipped["no_source"], 1, "{v}");
    assert_eq!(skipped["too_many_files"], 1, "{v}");
    assert_eq!(skipped["subject"], 1, "{v}");
    assert_eq!(skipped["gone_or_renamed"], 2, "{v}");
    assert_eq!(v["history"]["scanned"], 8, "the merge is not scanned: {v}");
    // Three queries are too few to measure: said, with the figures all the same.
    assert!(v["message"].as_str().unwrap().contains("too little history"), "{v}");
    assert_eq!(v["methods"]["search"]["all"]["n"], 3, "{v}");
    assert!(v["methods"]["grep-rank"]["all"]["R@10"].as_f64().is_some(), "{v}");
    // Kept: `status` shows it, and a second call answers from it.
    let status = env.json(&["status", "--project", repo.to_str().unwrap()]);
    assert_eq!(status["project"]["index"]["eval"]["queries"], 3, "{status}");
    assert_eq!(eval(&env, &repo)["at"], v["at"]);
}

#[test]
fn a_shallow_clone_and_an_empty_history_say_what_they_have() {
    let env = Env::new();
    let origin = env.git_project("origin");
    for i in 0..6 {
        write(&origin, &format!("m{i}.py"), format!("def feature_{i}():\n    return {i}\n"));
        commit(&origin, &format!("Add feature number {i} to the module"));
    }
    let clone = env.project("shallow");
    std::fs::remove_dir(&clone).unwrap();
    git(
        env.dir.path(),
        &["clone", "-q", "--depth", "3", &format!("file://{}", origin.display()), clone.to_str().unwrap()],
    );
    let empty = env.git_project("empty");
    write(&empty, "a.py", "def a():\n    return 1\n");

    let _d = env.start_daemon();
    for p in [&clone, &empty] {
        assert!(env.run(&["index", p.to_str().unwrap()]).status.success());
    }
    let v = eval(&env, &clone);
    assert_eq!(v["history"]["shallow"], true, "{v}");
    // The oldest commit of a shallow clone shows its whole tree as added: not a change.
    assert_eq!(v["history"]["skipped"]["shallow_boundary"], 1, "{v}");
    assert_eq!(v["queries"], 2, "{v}");
    assert!(v["message"].as_str().unwrap().contains("git fetch --unshallow"), "{v}");
    let out = env.run(&["eval", "--project", empty.to_str().unwrap()]);
    assert!(out.status.success(), "{}", describe(&out));
    let text = booger_tests::stdout(&out);
    assert!(text.contains("0 queries from 0 commits") && text.contains("too little history"), "{text}");
}

/// The everyday English words of the foreign queries.
const EVERYDAY: &str = include_str!("../data/everyday_words.txt");

/// A history of 60 one-function commits, each subject in the words of its code. Each module's
/// docstring also has three everyday words, so foreign queries meet a word here and there.
fn scripted_history(env: &Env) -> std::path::PathBuf {
    let repo = env.git_project("calibrated");
    let modules = ["upload", "download", "cache", "router", "parser", "session", "proxy", "socket", "logger", "config"];
    let adjectives =
        ["expired", "partial", "duplicate", "empty", "oversized", "malformed", "stale", "missing", "nested", "unicode"];
    let nouns = ["headers", "chunks", "tokens", "entries", "payloads", "records", "frames", "fields", "paths", "keys"];
    let everyday: Vec<&str> = EVERYDAY.split_whitespace().collect();
    let mut bodies: Vec<String> = modules
        .iter()
        .enumerate()
        .map(|(i, m)| format!("\"\"\"The {m} layer: {}.\"\"\"\n", everyday[i * 7..i * 7 + 3].join(", ")))
        .collect();
    for i in 0..60 {
        let (m, a, n) = (i % 10, (i * 3 + i / 10) % 10, (i * 7 + i / 10) % 10);
        bodies[m].push_str(&format!(
            "\n\ndef handle_{a}_{n}(value):\n    \"\"\"Handle {a} {n} for the {m} layer.\"\"\"\n    return value\n",
            a = adjectives[a],
            n = nouns[n],
            m = modules[m],
        ));
        write(&repo, &format!("{}.py", modules[m]), &bodies[m]);
        commit(&repo, &format!("Handle {} {} in the {} module", adjectives[a], nouns[n], modules[m]));
    }
    repo
}

/// An everyday word one of `repo`'s docstrings has.
fn everyday_word_in(repo: &std::path::Path) -> String {
    let text = std::fs::read_to_string(repo.join("upload.py")).unwrap();
    EVERYDAY.split_whitespace().find(|w| text.contains(*w)).unwrap().to_owned()
}

/// `n` queries of 3 to 5 everyday English words that are not a topic of `repo` (in at most
/// one of its files).
fn foreign_queries(repo: &std::path::Path, n: usize) -> Vec<String> {
    let texts: Vec<String> = std::fs::read_dir(repo)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default().to_lowercase())
        .collect();
    let words: Vec<&str> =
        EVERYDAY.split_whitespace().filter(|w| texts.iter().filter(|t| t.contains(*w)).count() <= 1).collect();
    boogerd::domain::search::confidence::word_queries(&words, n, 0x2545_f491_4f6c_dd1d)
}

#[test]
fn search_knows_when_it_has_no_good_answer_before_and_after_calibration() {
    let env = Env::new();
    let repo = scripted_history(&env);
    let _d = env.start_daemon();
    assert!(env.run(&["index", repo.to_str().unwrap()]).status.success());
    let project = repo.to_str().unwrap();
    let search = |q: &str, extra: &[&str]| {
        let mut args = vec!["search", q, "--project", project];
        args.extend_from_slice(extra);
        env.json(&args)
    };

    // Without calibration the defaults judge.
    let own = search("Handle stale tokens in the cache module", &[]);
    assert_eq!(own["confidence"], "high", "{own}");
    assert_eq!(own["calibrated"], false, "{own}");
    assert!(own["confidence_score"].as_f64().unwrap() > own["confidence_threshold"].as_f64().unwrap(), "{own}");
    let foreign = foreign_queries(&repo, 50);
    let low = |queries: &[String]| queries.iter().filter(|q| search(q, &[])["confidence"] == "low").count();
    assert!(low(&foreign) >= 40, "uncalibrated: {} of 50 foreign queries flagged", low(&foreign));

    // Calibrated from the history: the older half places the threshold, the newer half checks it.
    let v = eval(&env, &repo);
    assert_eq!(v["queries"], 60, "{v}");
    let c = &v["calibration"];
    assert_eq!(c["validation"]["calibrated_on"], 30, "{v}");
    assert_eq!(c["validation"]["validated_on"], 30, "{v}");
    assert!(c["validation"]["subjects_flagged"].as_f64().unwrap() <= 0.1, "{v}");
    assert!(c["validation"]["foreign_flagged"].as_f64().unwrap() >= 0.8, "{v}");
    let threshold = c["threshold"].as_f64().unwrap();
    let status = env.json(&["status", "--project", project]);
    assert_eq!(status["project"]["index"]["calibration"]["threshold"], c["threshold"], "{status}");
    let text = booger_tests::stdout(&env.run(&["status", "--project", project]));
    assert!(text.contains("calibrated") && text.contains("no good match below"), "{text}");

    // At least 80% of foreign queries flagged, at most 10% of the project's own subjects.
    let flagged = low(&foreign);
    assert!(flagged >= 40, "calibrated at {threshold}: {flagged} of 50 foreign queries flagged");
    let subjects: Vec<String> =
        v["details"].as_array().unwrap().iter().map(|q| q["subject"].as_str().unwrap().to_owned()).collect();
    assert!(low(&subjects) <= 6, "{} of 60 subjects flagged", low(&subjects));

    // A flagged answer with candidates says so first, lists a few briefly and what to try.
    let with_candidates: Vec<Value> = foreign
        .iter()
        .map(|q| search(q, &[]))
        .filter(|d| d["confidence"] == "low" && d["total"].as_u64().unwrap() > 0)
        .collect();
    assert!(with_candidates.len() >= 10, "most foreign queries meet one of the sprinkled words");
    let data = &with_candidates[0];
    assert_eq!(data["no_good_match"], true, "{data}");
    assert!(data["results"].as_array().unwrap().len() <= 5, "{data}");
    assert_eq!(data["calibrated"], true, "{data}");
    assert!(data["suggestions"].as_array().unwrap().len() >= 3, "{data}");
    let words = ["maple", "violin", "garden"].map(|w| w.to_owned());
    let q = format!("{} {}", everyday_word_in(&repo), words.join(" "));
    let text = booger_tests::stdout(&env.run(&["search", &q, "--project", project]));
    assert!(text.starts_with("no good match for"), "{text}");
    assert!(text.contains("booger grep PATTERN") && text.contains("--path-prefix"), "{text}");
    assert!(text.contains("\"maple\""), "names the word no file has: {text}");
    // Asking for the next page is asking for more: not cut.
    let paged = search(&q, &["--offset", "1"]);
    assert!(paged.get("no_good_match").is_none(), "{paged}");

    // Hybrid search answers with the calibrated weight, and at weight 0 ranks files as search.
    let w = c["semantic_weight"].as_f64().unwrap();
    let files = |tool: &str, extra: &[&str]| {
        let mut args = vec![tool, "Handle stale tokens in the cache module", "--project", project];
        args.extend_from_slice(&["--output-mode", "files_with_matches"]);
        args.extend_from_slice(extra);
        let v = env.json(&args);
        v["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    let ws = w.to_string();
    assert_eq!(files("hybrid-search", &[]), files("hybrid-search", &["--semantic-weight", &ws]));
    // A question is answered by lexical search's candidates, re-ranked by its vectors (no
    // fused weight ranked above lexical search on every set: BENCHMARKS.md); a weight the
    // call names fuses as asked.
    let places = |tool: &str, limit: &str, extra: &[&str]| {
        let mut args = vec![tool, "where are stale tokens kept", "--project", project, "--head-limit", limit];
        args.extend_from_slice(extra);
        let v = env.json(&args);
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["path"].clone(), r["start_line"].clone()))
            .collect::<Vec<_>>()
    };
    let question = |extra: &[&str]| places("hybrid-search", "20", extra);
    let candidates = places("search", "100", &[]);
    let reranked = question(&[]);
    assert!(reranked.iter().all(|r| candidates.contains(r)), "only lexical candidates: {reranked:?}");
    assert_ne!(question(&["--semantic-weight", "0"]), question(&["--semantic-weight", "1"]), "the weight is read");
    assert_eq!(files("hybrid-search", &["--semantic-weight", "0"]), files("search", &[]));
}
