//! Indexing through the daemon: incremental counters, deletes and renames, the Merkle root,
//! files that must be skipped or reported, bad paths, and a kill -9 in the middle of a run.

use std::path::Path;
use std::time::{Duration, Instant};

use booger_proto::tools::ChunkKind;
use booger_tests::{Env, describe, stderr, stdout, write};
use serde_json::Value;

/// A small project in several languages.
fn sample(root: &Path) {
    write(
        root,
        "src/lib.rs",
        "/// Parses.\npub fn parse_config(s: &str) -> u32 { s.len() as u32 }\n\npub struct Server;\n",
    );
    write(
        root,
        "app/main.py",
        "import os\n\ndef which(cmd):\n    \"\"\"Find cmd.\"\"\"\n    return None\n\nclass Cache:\n    def get(self, k):\n        return k\n",
    );
    write(root, "web/app.ts", "export function greet(name: string): string { return name; }\n");
    write(root, "cmd/main.go", "package main\n\nfunc main() {}\n");
    write(root, "c/util.c", "#include <stdio.h>\nint add(int a, int b) { return a + b; }\n");
    write(root, "README.md", "# Sample\n\nA sample project.\n\n## Usage\n\nRun it.\n");
    write(root, "notes.txt", "plain text notes\n");
}

/// These tests count what explicit `index` runs do, so the watcher must not get there first.
fn daemon(env: &Env) -> booger_tests::DaemonProc {
    env.start_daemon_with(&["--no-watch"])
}

fn index(env: &Env, root: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["index", root.to_str().unwrap()];
    args.extend_from_slice(extra);
    env.json(&args)["report"].clone()
}

/// Sets a file's mtime to `secs` after the epoch, without touching its content.
fn set_mtime(path: &Path, secs: u64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(std::time::UNIX_EPOCH + Duration::from_secs(secs)).unwrap();
}

#[test]
fn incremental_runs_parse_only_what_changed() {
    let env = Env::new();
    let root = env.project("inc");
    sample(&root);
    let _d = daemon(&env);

    let r = index(&env, &root, &[]);
    assert_eq!((r["files"].as_u64(), r["parsed"].as_u64()), (Some(7), Some(7)), "{r}");
    assert!(r["chunks_written"].as_u64().unwrap() >= 12, "{r}");

    // Nothing changed: nothing read.
    let r = index(&env, &root, &[]);
    assert_eq!(
        (r["parsed"].as_u64(), r["unchanged"].as_u64(), r["touched"].as_u64()),
        (Some(0), Some(7), Some(0)),
        "{r}"
    );

    // One edit: exactly one file parsed.
    write(&root, "app/main.py", "def which(cmd, path=None):\n    return path\n");
    let r = index(&env, &root, &[]);
    assert_eq!((r["parsed"].as_u64(), r["unchanged"].as_u64()), (Some(1), Some(6)), "{r}");
    let chunks = env.store(&root).chunks_of("app/main.py").unwrap();
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].signature, "def which(cmd, path=None)");

    // A touch without a change: read and hashed, not parsed.
    set_mtime(&root.join("src/lib.rs"), 1_000_000);
    let r = index(&env, &root, &[]);
    assert_eq!((r["parsed"].as_u64(), r["touched"].as_u64()), (Some(0), Some(1)), "{r}");

    // full: true re-parses everything.
    let r = index(&env, &root, &["--full"]);
    assert_eq!(r["parsed"].as_u64(), Some(7), "{r}");
}

#[test]
fn deletes_and_renames_leave_no_trace_of_the_old_path() {
    let env = Env::new();
    let root = env.project("ren");
    sample(&root);
    let _d = daemon(&env);
    index(&env, &root, &[]);

    std::fs::remove_file(root.join("notes.txt")).unwrap();
    std::fs::rename(root.join("src/lib.rs"), root.join("src/core.rs")).unwrap();
    let r = index(&env, &root, &[]);
    assert_eq!((r["deleted"].as_u64(), r["parsed"].as_u64()), (Some(2), Some(1)), "{r}");
    let s = env.store(&root);
    assert!(s.chunks_of("notes.txt").unwrap().is_empty());
    assert!(s.chunks_of("src/lib.rs").unwrap().is_empty());
    assert!(s.chunks_of("src/core.rs").unwrap().iter().any(|c| c.name == "parse_config"));
    // The full-text index forgot them too.
    assert_eq!(s.fts_count("\"plain text notes\"").unwrap(), 0);
    assert_eq!(s.fts_count("parse_config").unwrap(), 1);
    // A removed directory takes its files along.
    std::fs::remove_dir_all(root.join("web")).unwrap();
    let r = index(&env, &root, &[]);
    assert_eq!(r["deleted"].as_u64(), Some(1), "{r}");
    assert_eq!(env.json(&["status", root.to_str().unwrap()])["project"]["index"]["files"], 5);
}

#[test]
fn merkle_root_follows_content_not_mtimes() {
    let env = Env::new();
    let a = env.project("tree-a");
    let b = env.project("tree-b");
    sample(&a);
    sample(&b);
    let _d = daemon(&env);
    let ra = index(&env, &a, &[])["root_hash"].as_str().unwrap().to_owned();
    let rb = index(&env, &b, &[])["root_hash"].as_str().unwrap().to_owned();
    assert_eq!(ra, rb, "two indexes of the same tree have the same fingerprint");

    set_mtime(&a.join("README.md"), 2_000_000);
    assert_eq!(index(&env, &a, &[])["root_hash"].as_str().unwrap(), ra, "a touch changes nothing");

    write(&a, "README.md", "# Sample\n\nEdited.\n");
    let edited = index(&env, &a, &[])["root_hash"].as_str().unwrap().to_owned();
    assert_ne!(edited, ra);
    let status = env.json(&["status", a.to_str().unwrap()]);
    assert_eq!(status["project"]["index"]["root_hash"], edited.as_str());
}

#[test]
fn ignored_binary_large_odd_files_are_skipped_or_reported_never_lost() {
    let env = Env::new();
    let root = env.project("odd");
    sample(&root);
    write(&root, ".gitignore", "build/\n*.log\n");
    write(&root, "build/gen.rs", "fn generated() {}");
    write(&root, "debug.log", "log line");
    write(&root, "logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    write(&root, "latin1.py", b"# caf\xe9\ndef f():\n    return 1\n");
    let big: String = (0..60_000).map(|i| format!("line {i} of a generated table\n")).collect(); // ~1.8 MB
    write(&root, "data/big.txt", &big);
    std::os::unix::fs::symlink(&root, root.join("loop")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join("outside")).unwrap();
    let _d = daemon(&env);

    let r = index(&env, &root, &[]);
    let reasons = |k: &str| -> Vec<(String, String)> {
        r[k].as_array()
            .unwrap()
            .iter()
            .map(|s| (s["path"].as_str().unwrap().to_owned(), s["reason"].as_str().unwrap().to_owned()))
            .collect()
    };
    let skipped = reasons("skipped");
    assert!(skipped.iter().any(|(p, why)| p == "logo.png" && why == "binary"), "{skipped:?}");
    assert!(skipped.iter().any(|(p, why)| p == "loop" && why.contains("symlink")), "{skipped:?}");
    assert!(skipped.iter().any(|(p, why)| p == "outside" && why.contains("symlink")), "{skipped:?}");
    let problems = reasons("problems");
    assert!(problems.iter().any(|(p, why)| p == "data/big.txt" && why.contains("fixed-size blocks")), "{problems:?}");
    assert!(problems.iter().any(|(p, why)| p == "latin1.py" && why.contains("UTF-8")), "{problems:?}");

    let s = env.store(&root);
    assert!(s.chunks_of("build/gen.rs").unwrap().is_empty(), "gitignored file indexed");
    assert!(s.chunks_of("debug.log").unwrap().is_empty(), "gitignored file indexed");
    // The large file is all there, in blocks.
    let blocks = s.chunks_of("data/big.txt").unwrap();
    assert!(blocks.len() > 50);
    assert_eq!(blocks.iter().map(|c| c.content.as_str()).collect::<String>(), big);
    // Nothing of the index itself or of what the symlinks point to.
    assert!(!root.join(".booger").exists(), "the index was written into the repository");

    // status reports the same problems, and still lists the skipped files after a restart.
    let text = stdout(&env.run(&["status", root.to_str().unwrap()]));
    assert!(text.contains("indexed with problems") && text.contains("data/big.txt"), "{text}");
    drop(_d);
    let _d = daemon(&env);
    let text = stdout(&env.run(&["status", root.to_str().unwrap()]));
    assert!(text.contains("logo.png: binary"), "{text}");
}

/// status an agent can afford: on a tree with 3,000 files indexed with problems and 500
/// skipped, the JSON (as the CLI and MCP's structuredContent carry it) lists the first 20 of
/// each with their counts, within 16 KB; `--all` lists every one.
#[test]
fn status_lists_the_first_problems_with_their_counts_and_all_on_request() {
    let env = Env::new();
    let root = env.project("noisy");
    sample(&root);
    for i in 0..3_000 {
        write(&root, &format!("corpus/in_{i:04}.py"), b"# \xe9\xff not utf-8\n");
    }
    for i in 0..500 {
        write(&root, &format!("blobs/b_{i:03}.bin"), b"\0\x01\x02binary");
    }
    let _d = daemon(&env);
    index(&env, &root, &[]);
    let project = root.to_str().unwrap();
    let out = env.run(&["status", project, "--json"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(out.stdout.len() <= 16 * 1024, "{} bytes of status JSON", out.stdout.len());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let index = &v["project"]["index"];
    assert_eq!(index["problems_total"], 3_000, "{index}");
    assert_eq!(index["problems"].as_array().unwrap().len(), 20, "{index}");
    assert_eq!(index["last_report"]["skipped_total"], 500, "{index}");
    assert_eq!(index["last_report"]["skipped"].as_array().unwrap().len(), 20, "{index}");
    let text = stdout(&env.run(&["status", project]));
    assert!(text.contains("indexed with problems (3000)") && text.contains("`status --all` lists them"), "{text}");
    let all = env.json(&["status", project, "--all"]);
    assert_eq!(all["project"]["index"]["problems"].as_array().unwrap().len(), 3_000);
    assert_eq!(all["project"]["index"]["last_report"]["skipped"].as_array().unwrap().len(), 500);
    // Over MCP, the structured answer is as small.
    let (_, data, err) = env.call(&root, "s", "status", serde_json::json!({}));
    assert!(!err && data.to_string().len() <= 16 * 1024, "{} bytes of structuredContent", data.to_string().len());
}

/// Generated, vendored and fuzz-corpus files are set aside by default, by the repository's
/// `.gitattributes` first and by convention otherwise; status counts them, and
/// `--with-generated` brings them back (remembered) until `--with-generated=false`.
#[test]
fn generated_and_vendored_files_are_set_aside_and_can_be_brought_back() {
    let env = Env::new();
    let root = env.project("shipped");
    sample(&root);
    let marker = "zanzibar_quokka_marker";
    write(
        &root,
        ".gitattributes",
        "gen/** linguist-generated
src/*.snap -diff
vendor/ours.py -linguist-vendored
",
    );
    write(&root, "gen/api.py", format!("def {marker}():\n    pass\n"));
    write(&root, "src/out.snap", format!("{marker} snapshot\n"));
    write(&root, "vendor/lib/x.py", format!("def {marker}_vendored():\n    pass\n"));
    write(&root, "vendor/ours.py", format!("def {marker}_ours():\n    pass\n"));
    write(&root, "fuzz/corpus/query/0a1b2c", format!("{marker} fuzz input\n"));
    write(&root, "proto/api.pb.go", format!("package proto\n// {marker}\n"));
    write(&root, "src/codec.rs", format!("// Code generated by gen.sh. DO NOT EDIT.\nfn {marker}_codec() {{}}\n"));
    let _d = daemon(&env);
    let project = root.to_str().unwrap();
    let report = index(&env, &root, &[]);
    assert_eq!(report["set_aside_total"], 6, "{report}");
    assert_eq!(report["set_aside_kinds"]["generated"], 3, "{report}");
    let found = |env: &Env| -> Vec<String> {
        let v = env.json(&["grep", marker, "--project", project]);
        let mut files: Vec<String> =
            v["results"].as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap().to_owned()).collect();
        files.dedup();
        files
    };
    assert_eq!(found(&env), ["vendor/ours.py"], "only the file its attributes keep");
    let text = stdout(&env.run(&["status", project]));
    assert!(text.contains("set aside, not indexed: 6 files") && text.contains("--with-generated"), "{text}");
    let search = stdout(&env.run(&["search", marker, "--project", project]));
    assert!(!search.contains("fuzz/corpus") && !search.contains("gen/api.py"), "{search}");

    let report = index(&env, &root, &["--with-generated"]);
    assert_eq!((report["set_aside_total"].as_u64(), report["parsed"].as_u64()), (Some(0), Some(6)), "{report}");
    assert_eq!(found(&env).len(), 7);
    // Remembered by later runs, until turned off.
    assert_eq!(index(&env, &root, &[])["set_aside_total"], 0);
    let report = index(&env, &root, &["--with-generated=false"]);
    assert_eq!((report["set_aside_total"].as_u64(), report["deleted"].as_u64()), (Some(6), Some(6)), "{report}");
    assert_eq!(found(&env), ["vendor/ours.py"]);
}

/// A project directory replaced by a link is not followed: the index is kept as it was, and
/// nothing from where the link leads is read.
#[cfg(unix)]
#[test]
fn a_project_replaced_by_a_link_is_not_followed() {
    let env = Env::new();
    let root = env.project("linked-away");
    sample(&root);
    let elsewhere = env.project("elsewhere");
    write(&elsewhere, "private.py", "def private_key_material():\n    pass\n");
    let _d = daemon(&env);
    index(&env, &root, &[]);
    std::fs::rename(&root, env.project("moved-away")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &root).unwrap();
    let out = env.run(&["index", "--project", "linked-away"]);
    assert!(!out.status.success() && stderr(&out).contains("replaced by a link"), "{}", describe(&out));
    let v = env.json(&["grep", "private_key_material", "--project", "linked-away"]);
    assert_eq!(v["total"], 0, "{v}");
}

#[test]
fn bad_paths_get_clear_errors() {
    let env = Env::new();
    let _d = daemon(&env);
    let out = env.run(&["index", "/no/such/dir"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr(&out).contains("does not exist"), "{}", describe(&out));
    let file = env.dir.path().join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let out = env.run(&["index", file.to_str().unwrap()]);
    assert!(stderr(&out).contains("not a directory"), "{}", describe(&out));
    let out = env.run(&["index", "--project", "nope"]);
    assert!(stderr(&out).contains("no project named nope"), "{}", describe(&out));
}

#[test]
fn read_only_calls_create_nothing() {
    let env = Env::new();
    let root = env.project("untouched");
    sample(&root);
    let _d = daemon(&env);
    let out = env.run_in(Some(&root), &["status"]);
    assert!(out.status.success());
    assert!(!root.join(".booger").exists(), "status created .booger/");
    assert!(!env.index_dir(&root).exists(), "status created an index");
}

#[test]
fn adding_a_project_indexes_it_in_the_background() {
    let env = Env::new();
    let root = env.project("bg");
    sample(&root);
    let _d = daemon(&env);
    assert!(env.run(&["projects", "add", root.to_str().unwrap()]).status.success());
    let deadline = Instant::now() + booger_tests::TIMEOUT;
    loop {
        let s = env.json(&["status", root.to_str().unwrap()]);
        if s["project"]["index"]["files"] == 7 {
            break;
        }
        assert!(Instant::now() < deadline, "background index did not finish: {s}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn add_all_finds_repositories_and_manifests() {
    let env = Env::new();
    let base = env.project("workspace");
    std::fs::create_dir_all(base.join("a/.git")).unwrap();
    write(&base, "b/Cargo.toml", "[package]\nname = \"b\"\n");
    write(&base, "group/c/package.json", "{}");
    write(&base, "group/c/sub/go.mod", "module x\n"); // inside a project: not separate
    write(&base, "node_modules/dep/package.json", "{}");
    write(&base, "plain/readme.txt", "not a project");
    let _d = daemon(&env);
    let v = env.json(&["projects", "add-all", base.to_str().unwrap()]);
    let mut roots: Vec<String> =
        v["added"].as_array().unwrap().iter().map(|p| p["root"].as_str().unwrap().to_owned()).collect();
    roots.sort();
    let expect: Vec<String> =
        ["a", "b", "group/c"].iter().map(|r| base.join(r).to_string_lossy().into_owned()).collect();
    assert_eq!(roots, expect);
    // Again: nothing new.
    assert_eq!(env.json(&["projects", "add-all", base.to_str().unwrap()])["added"], serde_json::json!([]));
}

#[test]
fn kill_9_mid_index_then_restart_gives_a_complete_consistent_index() {
    let env = Env::new();
    let root = env.project("big");
    for i in 0..1500 {
        let body: String = (0..40).map(|j| format!("def f_{i}_{j}(x):\n    return x + {j}\n\n")).collect();
        write(&root, &format!("pkg{}/m{i}.py", i % 20), body);
    }
    let mut d = daemon(&env);
    let mut cmd = env.booger(None);
    cmd.args(["index", root.to_str().unwrap(), "--json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut client = cmd.spawn().unwrap();
    // Wait until the run is writing, then kill the daemon without warning.
    let deadline = Instant::now() + booger_tests::TIMEOUT;
    loop {
        let s = env.json(&["status", root.to_str().unwrap()]);
        // Mid-run (the point of the test); or, on a machine fast enough to finish first,
        // after the run, which must survive a kill just the same.
        if s["project"]["index"]["progress"]["done"].as_u64().unwrap_or(0) > 100
            || s["project"]["index"]["files"] == 1500
        {
            break;
        }
        assert!(Instant::now() < deadline, "indexing never got going: {s}");
        std::thread::sleep(Duration::from_millis(5));
    }
    d.signal(libc::SIGKILL);
    d.wait();
    let _ = client.wait();

    let _d2 = daemon(&env);
    let r = index(&env, &root, &[]);
    assert_eq!(r["files"].as_u64(), Some(1500), "{r}");
    // The same tree indexed from scratch elsewhere has the same fingerprint and chunk count.
    let copy = env.project("big-copy");
    for entry in std::fs::read_dir(&root).unwrap().filter_map(Result::ok) {
        if entry.file_name() == ".booger" {
            continue;
        }
        let dst = copy.join(entry.file_name());
        std::fs::create_dir_all(&dst).unwrap();
        for f in std::fs::read_dir(entry.path()).unwrap().filter_map(Result::ok) {
            std::fs::copy(f.path(), dst.join(f.file_name())).unwrap();
        }
    }
    let fresh = index(&env, &copy, &[]);
    assert_eq!(r["root_hash"], fresh["root_hash"]);
    let (a, b) = (env.store(&root).stats().unwrap(), env.store(&copy).stats().unwrap());
    assert_eq!((a.files, a.chunks), (b.files, b.chunks));
    assert_eq!(env.store(&root).fts_count("f_1499_39").unwrap(), 1);
}

#[test]
fn size_limit_is_configurable_and_huge_files_are_reported() {
    let env = Env::new();
    let root = env.project("sizes");
    write(&root, "small.py", "def a():\n    return 1\n");
    let medium: String = (0..100).map(|i| format!("def f{i}():\n    return {i}\n")).collect(); // ~2.3 KB
    write(&root, "medium.py", &medium);
    // A sparse 40 MB file: beyond any limit, never read.
    std::fs::File::create(root.join("dump.sql")).unwrap().set_len(40 * 1024 * 1024).unwrap();
    let _d = env.start_daemon_with(&["--no-watch", "--max-file-size", "1000"]);
    let r = index(&env, &root, &[]);
    let problems = r["problems"].to_string();
    assert!(problems.contains("medium.py") && problems.contains("larger than 1000 bytes"), "{problems}");
    let skipped = r["skipped"].to_string();
    assert!(skipped.contains("dump.sql") && skipped.contains("larger than 32 MB"), "{skipped}");
    assert!(env.store(&root).chunks_of("medium.py").unwrap().iter().all(|c| c.kind == ChunkKind::Raw));
    assert_eq!(env.store(&root).chunks_of("small.py").unwrap()[0].kind, ChunkKind::Function);
}
