//! The team index on a real PostgreSQL server (started by the test itself; see
//! `booger_tests::postgres`): publishing commits content-addressed by blob id.

use booger_tests::{Env, commit_all, describe, git, write};
use serde_json::Value;

fn publish(env: &Env, repo: &std::path::Path, extra: &[&str]) -> (bool, Value, String) {
    let mut args = vec!["publish", "--json"];
    args.extend_from_slice(extra);
    let out = env.run_in(Some(repo), &args);
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.success(), json, describe(&out))
}

/// A commit is published once: its files by blob id, the blobs the server lacks sent once
/// whatever their paths, branches or later commits; publishing again sends nothing.
#[test]
fn publishing_sends_each_blob_once_and_a_commit_whole() {
    let env = Env::new();
    let pg = booger_tests::postgres::start(env.dir.path());
    let _d = env.start_daemon_with(&["--team-url", &pg.url]);
    let repo = env.git_project("teamrepo");
    write(&repo, "src/app.py", "def serve(port):\n    return port\n");
    write(&repo, "src/util.py", "def helper(x):\n    return x * 2\n");
    write(&repo, "copy/util.py", "def helper(x):\n    return x * 2\n");
    write(&repo, "README.md", "# Team repo\n\nServes things.\n");
    commit_all(&repo, "first");
    assert!(env.run(&["projects", "add", repo.to_str().unwrap()]).status.success());

    let (ok, first, said) = publish(&env, &repo, &[]);
    assert!(ok, "{said}");
    assert_eq!(first["files"], 4, "{first}");
    assert_eq!(first["blobs_sent"], 3, "the two identical files are one blob: {first}");
    assert_eq!(first["new_commit"], true, "{first}");
    assert_eq!(pg.sql("SELECT count(*) FROM commit_files"), "4");
    assert_eq!(pg.sql("SELECT count(*) FROM blobs"), "3");
    assert!(pg.sql("SELECT count(*) FROM chunks").parse::<u32>().unwrap() >= 3);
    assert_eq!(pg.sql("SELECT name FROM chunks WHERE kind = 'function' ORDER BY name LIMIT 1"), "helper");
    // Each blob carries the hash the local index records for the same bytes.
    let blob = git(&repo, &["rev-parse", "HEAD:src/app.py"]);
    let hash = pg.sql(&format!("SELECT content_hash FROM blobs WHERE blob_id = '{}'", blob.trim()));
    assert!(env.run(&["index", repo.to_str().unwrap()]).status.success());
    let keys = env.store(&repo).chunk_keys().unwrap();
    let local = keys.iter().find(|(p, _)| p == "src/app.py").and_then(|(_, k)| k.split(':').next());
    assert_eq!(Some(hash.as_str()), local, "the team's hash of src/app.py is the local index's");

    let (ok, again, said) = publish(&env, &repo, &[]);
    assert!(ok, "{said}");
    assert_eq!((again["blobs_sent"].clone(), again["new_commit"].clone()), (0.into(), false.into()), "{again}");

    // The next commit sends only what changed; a branch of the same files sends nothing.
    write(&repo, "src/app.py", "def serve(port, host):\n    return (host, port)\n");
    write(&repo, "src/new.py", "def fresh():\n    return 1\n");
    commit_all(&repo, "second");
    let (ok, second, said) = publish(&env, &repo, &[]);
    assert!(ok, "{said}");
    assert_eq!((second["files"].clone(), second["blobs_sent"].clone()), (5.into(), 2.into()), "{second}");
    git(&repo, &["checkout", "-qb", "feature"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "same tree"]);
    let (ok, branch, said) = publish(&env, &repo, &[]);
    assert!(ok && branch["new_commit"] == true && branch["blobs_sent"] == 0, "{said}");
    let (ok, old, said) = publish(&env, &repo, &["--rev", "HEAD~2"]);
    assert!(ok && old["new_commit"] == false, "the first commit again: {said}");
    assert_eq!(pg.sql("SELECT count(*) FROM commits"), "3");
    assert_eq!(pg.sql("SELECT count(*) FROM blobs"), "5");
}

/// An unreachable server and a schema newer than this booger give clear errors (and a
/// failing exit code), never a password.
#[test]
fn a_server_out_of_reach_or_too_new_is_refused_clearly() {
    let env = Env::new();
    let pg = booger_tests::postgres::start(env.dir.path());
    let _d = env.start_daemon();
    let repo = env.git_project("lonely");
    write(&repo, "a.py", "def a():\n    return 1\n");
    commit_all(&repo, "one");
    assert!(env.run(&["projects", "add", repo.to_str().unwrap()]).status.success());

    let (ok, _, said) = publish(&env, &repo, &[]);
    assert!(!ok && said.contains("no team index"), "{said}");
    let (ok, _, said) = publish(&env, &repo, &["--team-url", "postgresql://booger:secret@127.0.0.1:1/booger"]);
    assert!(!ok && said.contains("cannot reach the team index at 127.0.0.1:1/booger"), "{said}");
    assert!(!said.contains("secret"), "the password leaked: {said}");

    let (ok, _, said) = publish(&env, &repo, &["--team-url", &pg.url]);
    assert!(ok, "{said}");
    pg.sql("UPDATE booger_schema SET version = 99");
    let (ok, _, said) = publish(&env, &repo, &["--team-url", &pg.url]);
    assert!(!ok && said.contains("newer booger"), "{said}");
}
