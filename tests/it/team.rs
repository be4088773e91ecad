//! The team index on a real PostgreSQL server (started by the test itself; see
//! `booger_tests::postgres`): publishing commits content-addressed by blob id.

use std::os::unix::fs::PermissionsExt;

use booger_tests::{Env, commit_all, describe, git, write};
use serde_json::Value;

fn publish(env: &Env, repo: &std::path::Path, extra: &[&str]) -> (bool, Value, String) {
    let mut args = vec!["publish", "--json"];
    args.extend_from_slice(extra);
    let out = env.run_in(Some(repo), &args);
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.success(), json, describe(&out))
}

/// Registers `repo` and publishes its HEAD, which must work: the publish's answer.
fn add_and_publish(env: &Env, repo: &std::path::Path) -> Value {
    assert!(env.run(&["projects", "add", repo.to_str().unwrap()]).status.success());
    let (ok, published, said) = publish(env, repo, &[]);
    assert!(ok, "{said}");
    published
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
    let first = add_and_publish(&env, &repo);
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
    let repo = env.git_project("lonely");
    write(&repo, "a.py", "def a():\n    return 1\n");
    commit_all(&repo, "one");
    {
        let _d = env.start_daemon_with(&["--team-url", ""]);
        assert!(env.run(&["projects", "add", repo.to_str().unwrap()]).status.success());
        let (ok, _, said) = publish(&env, &repo, &[]);
        assert!(!ok && said.contains("no team index"), "{said}");
    }
    {
        let _d = env.start_daemon_with(&["--team-url", "postgresql://booger:secret@127.0.0.1:1/booger"]);
        let (ok, _, said) = publish(&env, &repo, &[]);
        assert!(!ok && said.contains("cannot reach the team index at 127.0.0.1:1/booger"), "{said}");
        assert!(!said.contains("secret"), "the password leaked: {said}");
    }
    let d = env.start_daemon_with(&["--team-url", &pg.url]);
    let (ok, _, said) = publish(&env, &repo, &[]);
    assert!(ok, "{said}\n{}", d.log_text());

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
    let (ok, _, said) = publish(&env, &repo, &[]);
    assert!(!ok && said.contains("newer booger"), "{said}");
}

/// A server of schema 7 kept a blob's trigrams as `tsvector` words (five base-32 digits; a
/// shape trigram's four after an `x`); the step to 8 turns each back into the number a fresh
/// publish stores, and the step to 9 indexes them by group.
#[test]
fn a_schema_7_server_keeps_its_trigrams_through_the_migration() {
    let env = Env::new();
    let pg = booger_tests::postgres::start(env.dir.path());
    let _d = env.start_daemon_with(&["--team-url", &pg.url]);
    let repo = env.git_project("oldgrams");
    write(&repo, "src/parse.py", "def parse_header(line):\n    return line.upper()  # TODO: Unicode\n");
    write(&repo, "include/poll.h", "#define EPOLL_WAIT 3\nint wait_for(int fd, long ms);\n");
    commit_all(&repo, "first");
    add_and_publish(&env, &repo);
    let grams = "SELECT string_agg(blob_id || '=' || array_to_string(gram_ids, ','), ';' ORDER BY blob_id) FROM blobs";
    let published = pg.sql(grams);
    assert!(published.matches('=').count() == 2 && published.len() > 200, "{published}");
    // Back to schema 7: each number written as the word it was stored as, no groups.
    let digit = |shift: u32| format!("substr('0123456789abcdefghijklmnopqrstuv', ((g >> {shift}) & 31) + 1, 1)");
    let byte_word = [20, 15, 10, 5, 0].map(digit).join(" || ");
    let shape_word = [15, 10, 5, 0].map(digit).join(" || ");
    pg.sql(&format!(
        "ALTER TABLE blobs ADD COLUMN grams tsvector;
         UPDATE blobs SET grams = (SELECT string_agg(CASE WHEN g >= 16777216 THEN 'x' || {shape_word}
                                                     ELSE {byte_word} END, ' ')
                                   FROM unnest(gram_ids) AS g)::tsvector;
         ALTER TABLE blobs DROP COLUMN gram_ids, DROP COLUMN group_id;
         DROP TABLE blob_groups;
         CREATE INDEX blobs_grams ON blobs USING gin (grams);
         UPDATE booger_schema SET version = 7"
    ));
    assert_eq!(pg.sql("SELECT count(*) FROM blobs WHERE length(grams) > 50"), "2");
    // The next connection migrates: the same numbers, under their index.
    let (ok, _, said) = publish(&env, &repo, &[]);
    assert!(ok, "{said}");
    assert_eq!(pg.sql("SELECT version FROM booger_schema"), "10");
    assert_eq!(pg.sql(grams), published);
    // The step to 9 puts them in a group whose trigrams hold theirs, under the group's index.
    let grouped = "SELECT count(*) FROM blobs b JOIN blob_groups g ON g.id = b.group_id WHERE g.gram_ids @> b.gram_ids";
    assert_eq!(pg.sql(grouped), "2");
    assert_eq!(pg.sql("SELECT count(*) FROM pg_indexes WHERE indexname = 'blob_groups_gram_ids'"), "1");
    // grep --team finds a blob through its group (from a daemon where it is not registered).
    let apart = Env::new();
    let _d2 = apart.start_daemon_with(&["--team-url", &pg.url]);
    let away = apart.git_project("away");
    write(&away, "x.txt", "nothing\n");
    commit_all(&away, "x");
    assert!(apart.run(&["projects", "add", away.to_str().unwrap()]).status.success());
    let found = apart.run_in(Some(&away), &["grep", "--team", "--json", "EPOLL_WAIT"]);
    assert!(String::from_utf8_lossy(&found.stdout).contains("oldgrams@"), "{}", describe(&found));
    assert!(String::from_utf8_lossy(&found.stdout).contains("include/poll.h"), "{}", describe(&found));
    let none = apart.run_in(Some(&away), &["grep", "--team", "--json", "EPOLL_NEVER_WRITTEN"]);
    assert!(
        none.status.success() && !String::from_utf8_lossy(&none.stdout).contains("oldgrams@"),
        "{}",
        describe(&none)
    );
}

/// The root hash of `repo`'s index, after a run, as `status` reports it.
fn root_hash(env: &Env, repo: &std::path::Path) -> String {
    let out = env.run_in(Some(repo), &["index", "--json"]);
    assert!(out.status.success(), "{}", describe(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["report"]["root_hash"].as_str().unwrap().to_owned()
}

/// The number a daemon's log line saying `what` gives as `key`.
fn logged(log: &str, what: &str, key: &str) -> Option<u64> {
    let line = log.lines().find(|l| l.contains(what))?;
    let value = line.split(&format!(" {key}=")).nth(1)?;
    value.split(' ').next()?.parse().ok()
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
    // A header that marks the file generated (set aside by the run, so not filled), and one
    // blob under two languages' names (chunked once by the team, as text: filled only where
    // the name agrees).
    write(&origin, "gen/api_pb.py", "# Code generated by protoc. DO NOT EDIT.\ndef stub():\n    return 0\n");
    write(&origin, "pkg/same.txt", "def twin():\n    return 2\n");
    write(&origin, "pkg/twin.py", "def twin():\n    return 2\n");
    // Text with a NUL past the binary sniff: indexed locally, since PostgreSQL's text holds none.
    write(&origin, "notes/late_nul.txt", format!("{}\0tail\n", "words ".repeat(2000)));
    commit_all(&origin, "tasks");
    // A file git does not track: the origin's own index is not the commit's, so it is not
    // offered as a prebuilt index (clones are filled file by file, as this test means).
    write(&origin, "scratch.py", "def draft():\n    return 'mine'\n");
    assert!(env.run(&["projects", "add", origin.to_str().unwrap()]).status.success());
    // (Indexed first: a publish while the first run is still going finds an index that holds
    // too little, and says that instead.)
    assert!(env.run_in(Some(&origin), &["index"]).status.success());
    let (ok, published, said) = publish(&env, &origin, &[]);
    assert!(ok && published["new_commit"] == true, "{said}");
    let prebuilt = &published["prebuilt_index"];
    assert!(prebuilt["state"] == "skipped" && prebuilt["why"].as_str().unwrap().contains("scratch.py"), "{said}");
    assert_eq!(pg.sql("SELECT count(*) FROM snapshot_parts"), "0");
    // The binary file and the one holding a NUL are refused once, and not read again.
    assert_eq!(pg.sql("SELECT count(*) FROM refused_blobs"), "2");
    git(&origin, &["commit", "-q", "--allow-empty", "-m", "again"]);
    let (ok, again, said) = publish(&env, &origin, &[]);
    assert!(ok && again["new_commit"] == true && again["blobs_sent"] == 0, "{said}");
    git(&origin, &["reset", "-q", "--hard", "HEAD~1"]);

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
    // 29 unchanged tasks, the README and the text twin; not the edited task, the generated
    // file or the Python twin (its blob was chunked as text).
    assert!(log.contains("filled from the team index") && log.contains("files=31"), "{log}");

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

/// A publish from an index that holds just the commit offers it whole; a fresh clone of that
/// commit starts from it (nothing parsed but its own edits), and its index is a from-scratch
/// one's. Its vectors follow apart: the clone takes those of the chunks it holds as published
/// and embeds only its own edits. A stored copy that is not as stored (its parts altered) is
/// not used: damaged vectors are embedded here instead; a damaged index is filled file by
/// file instead, to the same index.
#[test]
fn a_clone_starts_from_the_prebuilt_index_published_with_its_commit() {
    let env = Env::new();
    let pg = booger_tests::postgres::start(env.dir.path());
    let d = env.start_daemon_with(&["--team-url", &pg.url]);
    let origin = env.git_project("origin");
    for i in 0..40 {
        write(&origin, &format!("lib/part{i}.py"), format!("def piece_{i}(x):\n    return x - {i}\n"));
    }
    write(&origin, "README.md", "# Parts\n");
    commit_all(&origin, "parts");
    assert!(env.run(&["projects", "add", origin.to_str().unwrap()]).status.success());
    assert!(env.run_in(Some(&origin), &["index"]).status.success());
    let vectors = env.embedded(&origin)["embedded"].as_u64().unwrap();
    let (ok, published, said) = publish(&env, &origin, &[]);
    assert!(ok, "{said}");
    let prebuilt = &published["prebuilt_index"];
    assert_eq!(prebuilt["state"], "sent", "{said}");
    assert!(prebuilt["packed_bytes"].as_u64().unwrap() < prebuilt["bytes"].as_u64().unwrap(), "{said}");
    // Publishing again stores nothing new.
    let (ok, again, said) = publish(&env, &origin, &[]);
    assert!(ok && again["prebuilt_index"]["state"] == "stored already", "{said}");
    // Even at `BOOGER_LOG=debug` (the tests' level), the statements and their parameters (a
    // file's chunks, a prebuilt index's parts) stay out of the log.
    let log = d.log_text();
    assert!(log.contains("DEBUG") && !log.contains("executing statement"), "{}", &log[..log.len().min(2000)]);
    // The working tree is the commit's: the index was copied while the rows were sent.
    assert!(log.contains("prebuilt index offered") && log.contains("copied_ahead=true"), "{log}");
    // A commit that changes little sends none: clones of it start from the one stored.
    let first = git(&origin, &["rev-parse", "HEAD"]);
    git(&origin, &["commit", "-q", "--allow-empty", "-m", "nothing changed"]);
    let (ok, next, said) = publish(&env, &origin, &[]);
    assert!(ok && next["new_commit"] == true && next["prebuilt_index"]["state"] == "not needed", "{said}");
    let out = env.run(&["team", "status", "--json"]);
    let status: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(status["repositories"][0]["prebuilt_index"], first.trim(), "{}", describe(&out));

    let make = |name: &str| {
        let dir = env.dir.path().join(name);
        git(env.dir.path(), &["clone", "-q", origin.to_str().unwrap(), dir.to_str().unwrap()]);
        write(&dir, "lib/part7.py", "def piece_7(x):\n    return x * 700  # changed in this clone\n");
        write(&dir, "lib/fresh.py", "def brand_new():\n    return 'untracked'\n");
        dir
    };
    let other = Env::new();
    let o = other.start_daemon_with(&["--team-url", &pg.url]);
    let clone = make("clone");
    assert!(other.run(&["projects", "add", clone.to_str().unwrap()]).status.success());
    let out = other.run_in(Some(&clone), &["index", "--json"]);
    assert!(out.status.success(), "{}", describe(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = o.log_text();
    assert!(log.contains(&format!("commit={} ", first.trim())), "started from the one stored: {log}");
    // (The first run may be the one `projects add` started: its line in the log says.)
    assert!(log.contains("parsed=2 ") && !log.contains("parsed=4"), "only the edit and the new file are parsed: {log}");
    let db = other.index_dir(&clone).join("index.db");
    assert_eq!(std::fs::metadata(&db).unwrap().permissions().mode() & 0o777, 0o600);
    let found = |q: &str| {
        let out = other.run_in(Some(&clone), &["search", "--output-mode", "files_with_matches", q]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(found("piece_23").contains("lib/part23.py"), "{}", found("piece_23"));
    assert!(found("changed in this clone").contains("lib/part7.py"), "{}", found("changed in this clone"));
    assert!(found("brand_new").contains("lib/fresh.py"), "{}", found("brand_new"));
    // Every vector but the edited function's came from the team; the edit and the new file's
    // function are embedded here.
    assert_eq!(other.embedded(&clone)["embedded"].as_u64().unwrap(), vectors + 1);
    let log = o.log_text();
    assert_eq!(logged(&log, "vectors taken from the team index", "vectors"), Some(vectors - 1), "{log}");
    assert_eq!(logged(&log, "INFO boogerd::engine::project::embedding: embedded", "chunks"), Some(2), "{log}");

    let plain = Env::new();
    let _p = plain.start_daemon();
    let scratch = make("scratch");
    assert!(plain.run(&["projects", "add", scratch.to_str().unwrap()]).status.success());
    let want = root_hash(&plain, &scratch);
    assert_eq!(report["report"]["root_hash"], want.as_str(), "the clone's index differs from a from-scratch one");

    // Vectors altered on the server: none taken, all embedded here.
    pg.sql("UPDATE snapshot_vectors SET data = overlay(data placing '\\x00ff'::bytea from 40)");
    let fourth = Env::new();
    let f = fourth.start_daemon_with(&["--team-url", &pg.url]);
    let damaged = make("damaged");
    assert!(fourth.run(&["projects", "add", damaged.to_str().unwrap()]).status.success());
    assert_eq!(root_hash(&fourth, &damaged), want);
    assert_eq!(fourth.embedded(&damaged)["embedded"].as_u64().unwrap(), vectors + 1);
    let log = f.log_text();
    assert!(log.contains("vectors not taken from the team index"), "{log}");
    assert_eq!(
        logged(&log, "INFO boogerd::engine::project::embedding: embedded", "chunks"),
        Some(vectors + 1),
        "{log}"
    );

    // Parts altered on the server: refused, and the clone is filled file by file.
    pg.sql("UPDATE snapshot_parts SET data = overlay(data placing '\\x00ff'::bytea from 40)");
    let third = Env::new();
    let t = third.start_daemon_with(&["--team-url", &pg.url]);
    let altered = make("altered");
    assert!(third.run(&["projects", "add", altered.to_str().unwrap()]).status.success());
    assert_eq!(root_hash(&third, &altered), want);
    let log = t.log_text();
    assert!(log.contains("prebuilt index not used") && log.contains("filled from the team index"), "{log}");
    assert!(!third.index_dir(&altered).join("index.db.from-team").exists());
}

/// The `(repository-tagged path, line)` of each line of a `grep --json` answer.
fn grep_lines(v: &Value) -> std::collections::BTreeSet<(String, u64)> {
    let results = v["results"].as_array().cloned().unwrap_or_default();
    results.iter().map(|r| (r["path"].as_str().unwrap_or("").to_owned(), r["line"].as_u64().unwrap_or(0))).collect()
}

/// Repositories nobody here has checked out answer `workspace-search --team` and `grep --team`
/// from the team index, each at its latest published commit on its default branch; a project
/// registered here answers from its own index; a team index out of reach costs the local
/// answer nothing, is said, and is used again once back.
#[test]
fn team_search_and_grep_read_published_repositories_at_their_heads() {
    let env = Env::new();
    let mut pg = booger_tests::postgres::start(env.dir.path());
    let _d = env.start_daemon_with(&["--team-url", &pg.url]);
    let alpha = env.git_project("alpha");
    git(&alpha, &["checkout", "-qb", "main"]);
    write(&alpha, "src/ledger.py", "def reconcile_ledger(entries):\n    # TODO: rounding\n    return sum(entries)\n");
    write(&alpha, "docs/guide.md", "# Guide\n\nReconcile the ledger monthly.\n");
    // Enough files that main's next commit is kept as what it changes from this one.
    for i in 0..30 {
        write(&alpha, &format!("src/part_{i}.py"), format!("def part_{i}(value):\n    return value\n"));
    }
    commit_all(&alpha, "ledger");
    let beta = env.git_project("beta");
    write(&beta, "lib/parser.c", "int parse_header(const char *h) {\n    /* TODO: header */\n    return 0;\n}\n");
    commit_all(&beta, "parser");
    for repo in [&alpha, &beta] {
        add_and_publish(&env, repo);
    }
    // A feature branch is published but is not the head; main's next commit is.
    git(&alpha, &["checkout", "-qb", "feature"]);
    write(&alpha, "src/feature.py", "def feature_only_marker():\n    return 1\n");
    commit_all(&alpha, "feature");
    assert!(publish(&env, &alpha, &[]).0);
    git(&alpha, &["checkout", "-q", "main"]);
    write(&alpha, "src/settle.py", "def settle_accounts(ledger):\n    # TODO: currencies\n    return ledger\n");
    write(&alpha, "src/part_3.py", "def part_three(value):\n    # TODO: rename\n    return value\n");
    std::fs::remove_file(alpha.join("src/part_7.py")).unwrap();
    commit_all(&alpha, "settle");
    assert!(publish(&env, &alpha, &[]).0);
    // Its list is the three files it changed, kept against the first commit's.
    let head = git(&alpha, &["rev-parse", "HEAD"]).trim().to_owned();
    let rows = format!(
        "SELECT count(*) FROM commit_files f JOIN commits c USING (repo_id, sha) WHERE c.sha = '{head}' AND c.base IS NOT NULL"
    );
    assert_eq!(pg.sql(&rows), "3", "the head's list is kept as what it changed");
    let head = head[..12].to_owned();
    // team-status: each repository at its head, with its commits.
    let out = env.run(&["team", "status", "--json"]);
    assert!(out.status.success(), "{}", describe(&out));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let repos = status["repositories"].as_array().cloned().unwrap_or_default();
    let alpha_row = repos.iter().find(|r| r["name"] == "alpha").expect("alpha listed");
    assert!(alpha_row["head"].as_str().unwrap().starts_with(&head), "{status}");
    assert_eq!((alpha_row["commits"].clone(), alpha_row["files"].clone()), (3.into(), 32.into()), "{status}");
    assert_eq!(status["schema"], 10, "{status}");
    assert!(!out.stdout.windows(6).any(|w| w == b"booger@"), "no user in the server's name");

    // Another machine: its own project, and a clone of beta with work of its own.
    let here = Env::new();
    let _d2 = here.start_daemon_with(&["--team-url", &pg.url]);
    let mine = here.git_project("mine");
    write(&mine, "mine.py", "def reconcile_local():\n    # TODO: mine\n    return 0\n");
    commit_all(&mine, "mine");
    let beta_here = here.dir.path().join("beta");
    git(here.dir.path(), &["clone", "-q", beta.to_str().unwrap(), beta_here.to_str().unwrap()]);
    write(&beta_here, "lib/extra.c", "int only_in_working_tree(void) { return 1; }\n");
    for p in [&mine, &beta_here] {
        assert!(here.run(&["projects", "add", p.to_str().unwrap()]).status.success());
        assert!(here.run_in(Some(p), &["index"]).status.success());
    }
    let files = |q: &str| {
        let out = here.run_in(Some(&mine), &["workspace-search", "--team", "--output-mode", "files_with_matches", q]);
        assert!(out.status.success(), "{}", describe(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let found = files("reconcile ledger");
    assert!(found.contains(&format!("alpha@{head}:src/ledger.py")), "{found}");
    assert!(found.contains("mine:mine.py"), "the local project too: {found}");
    assert!(files("settle_accounts").contains(&format!("alpha@{head}:src/settle.py")));
    assert!(!files("feature_only_marker").contains("feature.py"), "a branch that is not the head");
    // A file the head changed, one it has from its base, one it no longer has.
    assert!(files("part_three").contains(&format!("alpha@{head}:src/part_3.py")));
    assert!(files("part_5").contains(&format!("alpha@{head}:src/part_5.py")));
    assert!(!files("part_7").contains("src/part_7.py"));
    let beta_hits = files("parse_header only_in_working_tree");
    assert!(beta_hits.contains("beta:lib/extra.c") && beta_hits.contains("beta:lib/parser.c"), "{beta_hits}");
    assert!(!beta_hits.contains("beta@"), "beta is registered here: its own index answers: {beta_hits}");

    // grep --team finds exactly the lines git finds in each head, and in this project (grep
    // reads one project here; every other repository comes from the team index).
    let out = here.run_in(Some(&mine), &["grep", "--team", "--json", "TODO|return [a-z]+"]);
    assert!(out.status.success(), "{}", describe(&out));
    let got = grep_lines(&serde_json::from_slice(&out.stdout).unwrap());
    let mut want = std::collections::BTreeSet::new();
    for (name, repo) in [("alpha", &alpha), ("beta", &beta), ("mine", &mine)] {
        let sha = git(repo, &["rev-parse", "HEAD"]).trim().to_owned();
        let label = if name == "mine" { String::new() } else { format!("{name}@{}:", &sha[..12]) };
        for line in git(repo, &["grep", "-n", "-E", "TODO|return [a-z]+", &sha]).lines() {
            let mut parts = line.splitn(4, ':');
            let (_, path, n) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
            want.insert((format!("{label}{path}"), n.parse::<u64>().unwrap()));
        }
    }
    assert_eq!(got, want, "grep --team against git grep");

    // The server goes away: the local answer stands and says so; it comes back: used again.
    pg.stop();
    let out =
        here.run_in(Some(&mine), &["workspace-search", "--team", "--output-mode", "files_with_matches", "reconcile"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success() && text.contains("mine:mine.py"), "{}", describe(&out));
    assert!(text.contains("team index not searched"), "{text}");
    let out = here.run_in(Some(&mine), &["workspace-search", "--team", "--json", "reconcile"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(v["note"].as_str().unwrap_or("").contains("team index not searched"), "the JSON says so too: {v}");
    let status = here.run_in(Some(&mine), &["status"]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("unreachable"), "{}", describe(&status));
    // Nothing local matches and the team index was not read: a failure, not "no matches".
    for args in [&["grep", "--team", "zebra_unheard_of"][..], &["workspace-search", "--team", "zebra_unheard_of"]] {
        let out = here.run_in(Some(&mine), args);
        assert!(!out.status.success() && describe(&out).contains("team index not searched"), "{}", describe(&out));
    }
    pg.restart();
    let back = std::time::Instant::now();
    while !files("reconcile ledger").contains("alpha@") {
        assert!(back.elapsed() < std::time::Duration::from_secs(15), "the team index was not used again");
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

/// A publish cut off halfway (the server stopped under it) leaves its commit invisible; the
/// next publish sends only what the server still lacks and completes it.
#[test]
fn a_publish_cut_off_halfway_shows_nothing_and_the_next_completes_it() {
    let env = Env::new();
    let mut pg = booger_tests::postgres::start(env.dir.path());
    let _d = env.start_daemon_with(&["--team-url", &pg.url]);
    let repo = env.git_project("halfway");
    for i in 0..4000 {
        write(&repo, &format!("m{}/f{i}.py", i % 40), format!("def unit_{i}(x):\n    return x * {i}\n"));
    }
    commit_all(&repo, "many");
    assert!(env.run(&["projects", "add", repo.to_str().unwrap()]).status.success());
    let mut publishing = env
        .booger(Some(&repo))
        .args(["publish", "--json"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("publish");
    // Stop the server once some blobs are in and the commit is not.
    let started = std::time::Instant::now();
    loop {
        let blobs: u64 = pg.try_sql("SELECT count(*) FROM blobs").and_then(|n| n.parse().ok()).unwrap_or(0);
        if blobs > 0 {
            break;
        }
        assert!(publishing.try_wait().unwrap().is_none(), "the publish ended before the server could be stopped");
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "no blob arrived");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    pg.stop();
    assert!(!publishing.wait().unwrap().success(), "a publish whose server went away must fail");
    pg.restart();
    assert_eq!(pg.sql("SELECT count(*) FROM commits"), "0", "a commit half sent is not visible");
    let sent_before: u64 = pg.sql("SELECT count(*) FROM blobs").parse().unwrap();
    assert!(sent_before > 0 && sent_before < 4000, "{sent_before}");
    let (ok, done, said) = publish(&env, &repo, &[]);
    assert!(ok && done["new_commit"] == true, "{said}");
    assert_eq!(done["blobs_sent"].as_u64().unwrap() + sent_before, 4000, "only what was missing is sent: {done}");
    assert_eq!(pg.sql("SELECT count(*) FROM commit_files"), "4000");
}

/// `sslmode=require`: the daemon reaches a server whose certificate the team's CA signed
/// (`--team-ca`), over TLS; without that CA it refuses the server, saying why.
#[test]
fn tls_to_the_team_index_checks_the_servers_certificate() {
    let env = Env::new();
    let certs = booger_tests::tls_proxy::test_certs();
    let pg = booger_tests::postgres::start(env.dir.path());
    let proxy = booger_tests::tls_proxy::start(pg.port, &certs.cert, &certs.key);
    let ca_file = env.dir.path().join("team-ca.pem");
    std::fs::write(&ca_file, &certs.ca).unwrap();
    let url = format!("postgresql://booger@127.0.0.1:{}/booger?sslmode=require", proxy.port);

    let _d = env.start_daemon_with(&["--team-url", &url, "--team-ca", ca_file.to_str().unwrap()]);
    let repo = env.git_project("secure");
    write(&repo, "a.py", "def guarded():\n    return 1\n");
    commit_all(&repo, "one");
    add_and_publish(&env, &repo);
    let out =
        env.run_in(Some(&repo), &["workspace-search", "--team", "--output-mode", "files_with_matches", "guarded"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("a.py"), "{}", describe(&out));
    assert!(proxy.sessions() >= 2, "the publish and the search each came over TLS");

    // A daemon that does not trust the team's CA refuses the server.
    let other = Env::new();
    let _d2 = other.start_daemon_with(&["--team-url", &url]);
    let theirs = other.git_project("theirs");
    write(&theirs, "b.py", "def b():\n    return 2\n");
    commit_all(&theirs, "one");
    assert!(other.run(&["projects", "add", theirs.to_str().unwrap()]).status.success());
    let (ok, _, said) = publish(&other, &theirs, &[]);
    assert!(
        !ok && said.contains("cannot reach the team index") && said.to_lowercase().contains("certificate"),
        "{said}"
    );
}
