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
    let repo = env.project("history");
    git(&repo, &["init", "-q"]);
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
    assert_eq!(first["gold_files"], json!(["upload.py"]), "gone.py is gone and helper.py was renamed: {v}");
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
    let origin = env.project("origin");
    git(&origin, &["init", "-q"]);
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
    let empty = env.project("empty");
    git(&empty, &["init", "-q"]);
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
