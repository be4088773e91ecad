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

    // A daemon whose team index is out of reach indexes and answers locally, as before.
    let apart = Env::new();
    let _d2 = apart.start_daemon_with(&["--team-url", "postgresql://booger@127.0.0.1:1/booger"]);
    let clone = apart.dir.path().join("clone");
    git(apart.dir.path(), &["clone", "-q", repo.to_str().unwrap(), clone.to_str().unwrap()]);
    assert!(apart.run(&["projects", "add", clone.to_str().unwrap()]).status.success());
    let out = apart.run_in(Some(&clone), &["index"]);
    assert!(out.status.success(), "{}", describe(&out));
    let found = apart.run_in(Some(&clone), &["search", "--output-mode", "files_with_matches", "a"]);
    assert!(String::from_utf8_lossy(&found.stdout).contains("a.py"), "{}", describe(&found));

    pg.sql("UPDATE booger_schema SET version = 99");
    let (ok, _, said) = publish(&env, &repo, &["--team-url", &pg.url]);
    assert!(!ok && said.contains("newer booger"), "{said}");
}

/// The root hash of `repo`'s index, after a run, as `status` reports it.
fn root_hash(env: &Env, repo: &std::path::Path) -> String {
    let out = env.run_in(Some(repo), &["index", "--json"]);
    assert!(out.status.success(), "{}", describe(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["report"]["root_hash"].as_str().unwrap().to_owned()
}

/// A fresh clone whose HEAD is published fills its index from the team index: the files it
/// holds unchanged are not parsed, local edits and new files are, and the index is the one a
/// from-scratch run makes (same Merkle root, same answers).
#[test]
fn a_clone_of_a_published_commit_fills_its_index_from_the_team() {
    let env = Env::new();
    let pg = booger_tests::postgres::start(env.dir.path());
    let d = env.start_daemon_with(&["--team-url", &pg.url]);
    let origin = env.git_project("origin");
    for i in 0..30 {
        write(&origin, &format!("pkg/m{i}.py"), format!("def task_{i}(x):\n    return x + {i}\n"));
    }
    write(&origin, "README.md", "# Origin\n\nDoes tasks.\n");
    write(&origin, "blob.bin", [0u8, 1, 2, 3, 0, 9]);
    // Text with a NUL past the binary sniff: indexed locally, since PostgreSQL's text holds none.
    write(&origin, "notes/late_nul.txt", format!("{}\0tail\n", "words ".repeat(2000)));
    commit_all(&origin, "tasks");
    assert!(env.run(&["projects", "add", origin.to_str().unwrap()]).status.success());
    let (ok, published, said) = publish(&env, &origin, &[]);
    assert!(ok && published["new_commit"] == true, "{said}");

    // Two identical clones with the same local work: one filled from the team, one from scratch.
    let make = |name: &str| {
        let dir = env.dir.path().join(name);
        git(env.dir.path(), &["clone", "-q", origin.to_str().unwrap(), dir.to_str().unwrap()]);
        write(&dir, "pkg/m3.py", "def task_3(x):\n    return x * 300  # edited here\n");
        write(&dir, "pkg/local.py", "def only_here():\n    return 'untracked'\n");
        dir
    };
    let seeded = make("seeded");
    assert!(env.run(&["projects", "add", seeded.to_str().unwrap()]).status.success());
    let seeded_root = root_hash(&env, &seeded);
    let log = d.log_text();
    assert!(log.contains("filled from the team index") && log.contains("files=30"), "{log}");

    let other = Env::new();
    let _plain = other.start_daemon();
    let scratch = make("scratch");
    assert!(other.run(&["projects", "add", scratch.to_str().unwrap()]).status.success());
    assert_eq!(seeded_root, root_hash(&other, &scratch), "the seeded index differs from a from-scratch one");

    // Answers come from both kinds of file: seeded (unchanged) and parsed here (edited, new).
    let paths = |q: &str| {
        let out = env.run_in(Some(&seeded), &["search", "--output-mode", "files_with_matches", q]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(paths("task_17").contains("pkg/m17.py"), "{}", paths("task_17"));
    assert!(paths("edited here").contains("pkg/m3.py"), "{}", paths("edited here"));
    assert!(paths("only_here").contains("pkg/local.py"), "{}", paths("only_here"));
}
