//! The git tools over real repositories made with `git` in temp directories: symbol changes
//! in every language, duplicate names, renames, deletions, binary files, staged versus
//! unstaged work, commit messages and changelogs, auto-focus, MCP's JSON, and every error case.

use std::path::{Path, PathBuf};

use booger_tests::{Env, commit_all, git, write};
use serde_json::{Value, json};

/// A registered project that is a git repository with one commit on `main` holding `files`.
fn repo(env: &Env, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = env.git_project(name);
    for (rel, body) in files {
        write(&root, rel, body);
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "base"]);
    register(env, &root);
    root
}

fn register(env: &Env, root: &Path) {
    let out = env.run(&["projects", "add", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
}

/// Calls `tool` as a session in `root`: (text, data), asserting it succeeded.
fn ok(env: &Env, root: &Path, tool: &str, args: Value) -> (String, Value) {
    let (text, data, is_error) = env.call(root, "git-tests", tool, args.clone());
    assert!(!is_error, "{tool} {args} failed: {text}");
    (text, data)
}

/// Calls `tool` and expects a tool error: its message.
fn err(env: &Env, root: &Path, tool: &str, args: Value) -> String {
    let (text, _, is_error) = env.call(root, "git-tests", tool, args.clone());
    assert!(is_error, "{tool} {args} should fail, got: {text}");
    text
}

fn file<'a>(data: &'a Value, path: &str) -> &'a Value {
    data["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in the diff: {data}"))
}

/// Qualified names (`Parent::name`) in one change list of one file, without the top-level
/// code pseudo-symbol.
fn names(f: &Value, list: &str) -> Vec<String> {
    f[list]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|s| s["kind"] != "block")
                .map(|s| match s["parent"].as_str() {
                    Some(p) => format!("{p}::{}", s["name"].as_str().unwrap()),
                    None => s["name"].as_str().unwrap().to_owned(),
                })
                .collect()
        })
        .unwrap_or_default()
}

const BASE_FILES: &[(&str, &str)] = &[
    ("src/lib.rs", "pub fn keep() -> u32 {\n    1\n}\n\npub fn change() -> u32 {\n    1\n}\n\npub fn gone() {}\n"),
    ("app/main.py", "def keep():\n    return 1\n\ndef change():\n    return 1\n\ndef gone():\n    pass\n"),
    (
        "cmd/main.go",
        "package main\n\nfunc Keep() int {\n\treturn 1\n}\n\nfunc Change() int {\n\treturn 1\n}\n\nfunc Gone() {}\n",
    ),
    (
        "lib/util.c",
        "int keep(void) {\n    return 1;\n}\n\nint change(void) {\n    return 1;\n}\n\nvoid gone(void) {}\n",
    ),
    (
        "web/app.ts",
        "export function keep(): number {\n  return 1;\n}\n\nexport function change(): number {\n  return 1;\n}\n\nexport function gone(): void {}\n",
    ),
    ("web/old.js", "function keep() {\n  return 1;\n}\n\nfunction change() {\n  return 1;\n}\n\nfunction gone() {}\n"),
];

const HEAD_FILES: &[(&str, &str)] = &[
    ("src/lib.rs", "pub fn keep() -> u32 {\n    1\n}\n\npub fn change() -> u32 {\n    2\n}\n\npub fn fresh() {}\n"),
    ("app/main.py", "def keep():\n    return 1\n\ndef change():\n    return 2\n\ndef fresh():\n    pass\n"),
    (
        "cmd/main.go",
        "package main\n\nfunc Keep() int {\n\treturn 1\n}\n\nfunc Change() int {\n\treturn 2\n}\n\nfunc Fresh() {}\n",
    ),
    (
        "lib/util.c",
        "int keep(void) {\n    return 1;\n}\n\nint change(void) {\n    return 2;\n}\n\nvoid fresh(void) {}\n",
    ),
    (
        "web/app.ts",
        "export function keep(): number {\n  return 1;\n}\n\nexport function change(): number {\n  return 2;\n}\n\nexport function fresh(): void {}\n",
    ),
    ("web/old.js", "function keep() {\n  return 1;\n}\n\nfunction change() {\n  return 2;\n}\n\nfunction fresh() {}\n"),
];

#[test]
fn a_function_added_modified_and_removed_in_every_language() {
    let env = Env::new();
    let root = repo(&env, "langs", BASE_FILES);
    git(&root, &["checkout", "-q", "-b", "feature"]);
    for (rel, body) in HEAD_FILES {
        write(&root, rel, body);
    }
    commit_all(&root, "feature");

    let (text, data) = ok(&env, &root, "branch-diff", json!({}));
    assert_eq!(data["base"], "main", "{data}");
    assert_eq!(data["head"], "feature");
    assert_eq!(data["files"].as_array().unwrap().len(), 6, "{data}");
    for (rel, _) in HEAD_FILES {
        let f = file(&data, rel);
        assert_eq!(f["status"], "modified", "{rel}: {f}");
        let lower = |v: Vec<String>| v.into_iter().map(|n| n.to_lowercase()).collect::<Vec<_>>();
        assert_eq!(lower(names(f, "added")), ["fresh"], "{rel}: {f}");
        assert_eq!(lower(names(f, "modified")), ["change"], "{rel}: {f}");
        assert_eq!(lower(names(f, "removed")), ["gone"], "{rel}: {f}");
        let m = &f["modified"][0];
        assert_eq!(m["diff"], "+1 -1", "{rel}: {m}");
    }
    assert_eq!(data["totals"], json!({ "files": 6, "added": 6, "modified": 6, "removed": 6 }));
    // The readable list says the same, one line per symbol.
    assert!(text.contains("src/lib.rs (modified)\n  + function fresh :9"), "{text}");
    assert!(text.contains("  ~ function change :5-7 (+1 -1)"), "{text}");
    assert!(text.contains("  - function gone :9"), "{text}");

    // The CLI prints the list; --json the same data.
    let out = env.run_in(Some(&root), &["branch-diff"]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    assert!(booger_tests::stdout(&out).starts_with("feature vs main"), "{}", booger_tests::stdout(&out));
    let cli = env.json(&["branch-diff", "main", "--project", root.to_str().unwrap()]);
    assert_eq!(cli["totals"], data["totals"]);
}

#[test]
fn duplicate_names_stay_distinct() {
    let env = Env::new();
    let base = "struct A;\nimpl A {\n    fn new() -> A {\n        A\n    }\n}\n\nstruct B;\nimpl B {\n    fn new() -> B {\n        B\n    }\n}\n";
    let py = "def f():\n    return 1\n\ndef f():\n    return 2\n";
    let root = repo(&env, "dups", &[("src/lib.rs", base), ("dup.py", py)]);
    git(&root, &["checkout", "-q", "-b", "feature"]);
    write(&root, "src/lib.rs", base.replace("        B\n", "        let b = B;\n        b\n"));
    write(&root, "dup.py", "def f():\n    return 1\n\ndef f():\n    return 3\n\ndef f():\n    return 4\n");
    commit_all(&root, "feature");

    let (_, data) = ok(&env, &root, "branch-diff", json!({}));
    let rs = file(&data, "src/lib.rs");
    assert_eq!(names(rs, "modified"), ["B::new"], "{rs}");
    assert!(names(rs, "added").is_empty() && names(rs, "removed").is_empty(), "{rs}");
    let py = file(&data, "dup.py");
    // The second `f` changed, a third was added; the first is untouched.
    assert_eq!(py["modified"][0]["lines"], json!([4, 5]), "{py}");
    assert_eq!(py["modified"].as_array().unwrap().len(), 1, "{py}");
    assert_eq!(py["added"][0]["lines"], json!([7, 8]), "{py}");
}

#[test]
fn renames_deletions_and_binary_files() {
    let env = Env::new();
    let body = "def alpha():\n    return 1\n\ndef beta():\n    return 2\n\ndef gamma():\n    return 3\n\ndef delta():\n    return 4\n";
    let root = repo(
        &env,
        "files",
        &[("old_name.py", body), ("doomed.go", "package p\n\nfunc Doomed() {}\n\nfunc AlsoDoomed() {}\n")],
    );
    git(&root, &["checkout", "-q", "-b", "feature"]);
    git(&root, &["mv", "old_name.py", "new_name.py"]);
    write(&root, "new_name.py", body.replace("return 4", "return 44"));
    git(&root, &["rm", "-q", "doomed.go"]);
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend((0..2000u32).map(|i| (i * 7 % 251) as u8));
    std::fs::write(root.join("logo.png"), &png).unwrap();
    commit_all(&root, "feature");

    let (text, data) = ok(&env, &root, "branch-diff", json!({}));
    let renamed = file(&data, "new_name.py");
    assert_eq!(renamed["status"], "renamed", "{renamed}");
    assert_eq!(renamed["old_path"], "old_name.py");
    assert_eq!(names(renamed, "modified"), ["delta"], "{renamed}");
    assert!(names(renamed, "added").is_empty() && names(renamed, "removed").is_empty(), "{renamed}");
    assert!(text.contains("old_name.py → new_name.py (renamed)"), "{text}");

    let deleted = file(&data, "doomed.go");
    assert_eq!(deleted["status"], "deleted");
    assert_eq!(names(deleted, "removed"), ["Doomed", "AlsoDoomed"], "{deleted}");

    let png = file(&data, "logo.png");
    assert_eq!((png["status"].as_str(), png["binary"].as_bool()), (Some("added"), Some(true)), "{png}");
    assert!(png.get("added").is_none(), "a binary file has no symbols: {png}");
    assert_eq!(text.matches("logo.png").count(), 1, "binary files are named once: {text}");
}

#[test]
fn staged_unstaged_and_untracked_work() {
    let env = Env::new();
    let root = repo(&env, "work", &[("a.py", "def a():\n    return 1\n"), ("b.py", "def b():\n    return 1\n")]);
    git(&root, &["checkout", "-q", "-b", "feature"]);
    write(&root, "a.py", "def a():\n    return 1\n\ndef staged_fn():\n    pass\n");
    git(&root, &["add", "a.py"]);
    write(&root, "b.py", "def b():\n    return 2\n");
    write(&root, "c.py", "def untracked_fn():\n    pass\n");

    let paths = |data: &Value| -> Vec<String> {
        data["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_owned()).collect()
    };
    let (text, data) = ok(&env, &root, "branch-diff", json!({}));
    assert!(paths(&data).is_empty(), "committed only: {data}");
    assert!(text.contains("No committed changes") && text.contains("include=staged"), "{text}");
    let (_, data) = ok(&env, &root, "branch-diff", json!({ "include": "staged" }));
    assert_eq!(paths(&data), ["a.py"]);
    assert_eq!(names(file(&data, "a.py"), "added"), ["staged_fn"]);
    let (_, data) = ok(&env, &root, "branch-diff", json!({ "include": "unstaged" }));
    assert_eq!(paths(&data), ["a.py", "b.py", "c.py"]);
    assert_eq!(names(file(&data, "b.py"), "modified"), ["b"]);
    assert_eq!(file(&data, "c.py")["status"], "added");

    // draft-commit describes what is staged when something is…
    let (msg, data) = ok(&env, &root, "draft-commit", json!({}));
    assert_eq!(data["include"], "staged", "{data}");
    assert!(msg.starts_with("feat(a): add staged_fn\n"), "{msg}");
    assert!(!msg.contains("untracked_fn") && !msg.contains("b.py"), "{msg}");
    // … and every uncommitted change when nothing is.
    git(&root, &["reset", "-q"]);
    let (msg, data) = ok(&env, &root, "draft-commit", json!({}));
    assert_eq!(data["include"], "unstaged", "{data}");
    assert!(msg.contains("staged_fn") && msg.contains("untracked_fn") && msg.contains("b.py: b"), "{msg}");
    // On a clean tree there is nothing to commit, and it says so in those words.
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "work"]);
    let (msg, data) = ok(&env, &root, "draft-commit", json!({}));
    assert_eq!(data["message"], Value::Null, "{data}");
    assert!(msg.contains("the working tree is clean") && !msg.contains("unstaged"), "{msg}");
}

#[test]
fn draft_commit_and_changelog() {
    let env = Env::new();
    let root = repo(&env, "release", &[("src/search/rank.rs", "pub fn score() -> f64 {\n    1.0\n}\n")]);
    git(&root, &["tag", "v1.0"]);
    // Many symbols: the subject still fits in 72 characters, the body lists them all.
    let many: String = (0..40).map(|i| format!("pub fn boost_{i}(x: f64) -> f64 {{\n    x * {i}.0\n}}\n\n")).collect();
    write(&root, "src/search/rank.rs", format!("pub fn score() -> f64 {{\n    2.0\n}}\n\n{many}"));
    write(&root, "src/search/query.rs", "pub fn parse(q: &str) -> Vec<String> {\n    vec![q.to_owned()]\n}\n");
    commit_all(&root, "search work");
    git(&root, &["tag", "v1.1"]);
    write(&root, "README.md", "# Release\n\nNotes.\n");
    commit_all(&root, "docs");

    let (msg, _) = ok(&env, &root, "draft-commit", json!({ "base": "v1.0", "path_prefix": "src" }));
    let subject = msg.lines().next().unwrap();
    assert!(subject.chars().count() < 72, "{subject:?}");
    assert!(subject.starts_with("feat(search): add "), "{subject:?}");
    assert_eq!(msg.lines().nth(1), Some(""), "a blank line after the subject: {msg}");
    assert!(msg.contains("boost_39") && msg.contains("src/search/query.rs: parse"), "{msg}");
    assert!(msg.contains("Modified:\n- src/search/rank.rs: score"), "{msg}");

    // Between two tags.
    let (md, _) = ok(&env, &root, "changelog", json!({ "from": "v1.0", "to": "v1.1" }));
    assert!(md.starts_with("## Changes from v1.0 to v1.1"), "{md}");
    let added = md.split("### Added").nth(1).unwrap().split("###").next().unwrap();
    assert!(added.contains("`src/search/query.rs`: `parse`") && added.contains("`boost_0`"), "{md}");
    assert!(md.contains("### Modified\n\n- `src/search/rank.rs`: `score`"), "{md}");
    assert!(!md.contains("README"), "{md}");
    // A tagged release: from the tag before it.
    let (md, data) = ok(&env, &root, "changelog", json!({ "to": "v1.1" }));
    assert_eq!(data["from"], "v1.0", "{data}");
    assert!(md.contains("`boost_0`"), "{md}");
    // Default: since the latest tag.
    let (md, data) = ok(&env, &root, "changelog", json!({}));
    assert_eq!(data["from"], "v1.1", "{data}");
    assert!(md.contains("`README.md`: `Release`") && !md.contains("boost_0"), "{md}");
}

#[test]
fn focusing_the_changed_files_puts_them_first_in_search() {
    let env = Env::new();
    let handler = |n: &str| format!("def handle_{n}(request):\n    return render_template(request)\n");
    let mut files: Vec<(String, String)> =
        (0..6).map(|i| (format!("views/v{i}.py"), handler(&format!("view{i}")))).collect();
    files.push(("views/zz_changed.py".to_owned(), handler("changed")));
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let root = repo(&env, "focus", &refs);
    let out = env.run(&["index", root.to_str().unwrap()]);
    assert!(out.status.success());
    git(&root, &["checkout", "-q", "-b", "feature"]);
    write(&root, "views/zz_changed.py", format!("{}\n# touched\n", handler("changed")));
    commit_all(&root, "touch");

    let first = |env: &Env| {
        let (_, data) = ok(
            env,
            &root,
            "search",
            json!({ "query": "render_template request", "output_mode": "files_with_matches" }),
        );
        data["results"][0]["path"].as_str().unwrap().to_owned()
    };
    let unaided = first(&env);
    assert_ne!(unaided, "views/zz_changed.py", "the fixture must not rank the changed file first unaided");
    // branch-diff reads only; the agent focuses the files it names.
    let (_, data) = ok(&env, &root, "branch-diff", json!({}));
    let changed: Vec<&str> = data["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(changed, ["views/zz_changed.py"], "{data}");
    assert_eq!(first(&env), unaided, "branch-diff changed the ranking");
    ok(&env, &root, "focus", json!({ "paths": changed }));
    assert_eq!(first(&env), "views/zz_changed.py");
    // Another session has its own focus.
    let (_, data, _) = env.call(&root, "someone-else", "search", json!({ "query": "render_template request" }));
    assert_eq!(data["results"].as_array().unwrap().len(), 7, "{data}");
}

#[test]
fn mcp_answers_json_with_structured_content() {
    let env = Env::new();
    let root = repo(&env, "mcp", BASE_FILES);
    git(&root, &["checkout", "-q", "-b", "feature"]);
    write(&root, "src/lib.rs", HEAD_FILES[0].1);
    commit_all(&root, "feature");
    let mut mcp = env.mcp(Some(&root));
    mcp.handshake("2025-06-18");
    let r = mcp.request("tools/call", json!({ "name": "branch-diff", "arguments": {} }));
    let res = &r["result"];
    assert_eq!(res["isError"], false, "{r}");
    let text: Value = serde_json::from_str(res["content"][0]["text"].as_str().unwrap()).expect("the text is JSON");
    assert_eq!(text, res["structuredContent"]);
    assert_eq!(names(file(&text, "src/lib.rs"), "added"), ["fresh"]);
    // An explicit output mode is honoured.
    let r = mcp.request("tools/call", json!({ "name": "branch-diff", "arguments": { "output_mode": "files" } }));
    let t = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(t.contains("src/lib.rs (modified) +1 ~1 -1"), "{t}");
    let r = mcp.request("tools/call", json!({ "name": "branch-diff", "arguments": { "include": "everything" } }));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"]["content"][0]["text"].as_str().unwrap().contains("committed, staged, unstaged"), "{r}");
}

#[test]
fn errors_say_what_is_wrong_and_what_to_do() {
    let env = Env::new();
    // Not a repository.
    let plain = env.project("plain");
    write(&plain, "a.py", "def a(): pass\n");
    register(&env, &plain);
    let e = err(&env, &plain, "branch-diff", json!({}));
    assert!(e.contains("not inside a git repository") && e.contains("git init"), "{e}");

    // Unknown base ref; a ref that looks like an option.
    let root = repo(&env, "r", &[("a.py", "def a():\n    return 1\n")]);
    let e = err(&env, &root, "branch-diff", json!({ "base": "nope" }));
    assert!(e.contains("unknown ref `nope`") && e.contains("Branches: main"), "{e}");
    let e = err(&env, &root, "branch-diff", json!({ "base": "--output=/tmp/x" }));
    assert!(e.contains("not a valid ref"), "{e}");

    // On main with no upstream: nothing committed beyond it, and the answer says how to see work.
    let (text, _) = ok(&env, &root, "branch-diff", json!({}));
    assert!(text.contains("No committed changes"), "{text}");

    // Detached HEAD: fine against main; without any trunk, a clear error.
    write(&root, "a.py", "def a():\n    return 2\n");
    commit_all(&root, "two");
    git(&root, &["checkout", "-q", "--detach", "HEAD"]);
    let (text, data) = ok(&env, &root, "branch-diff", json!({ "base": "HEAD~1" }));
    assert!(data["head"].as_str().unwrap().starts_with("HEAD (detached at "), "{data}");
    assert_eq!(names(file(&data, "a.py"), "modified"), ["a"], "{text}");
    git(&root, &["branch", "-q", "-m", "main", "trunk"]);
    let e = err(&env, &root, "branch-diff", json!({}));
    assert!(e.contains("HEAD is detached") && e.contains("pass `base`"), "{e}");

    // An empty repository: nothing committed, but staged work can be described.
    let empty = env.git_project("empty");
    register(&env, &empty);
    let e = err(&env, &empty, "branch-diff", json!({}));
    assert!(e.contains("no commits yet") && e.contains("include=staged"), "{e}");
    write(&empty, "first.rs", "pub fn first() {}\n");
    git(&empty, &["add", "first.rs"]);
    let (msg, _) = ok(&env, &empty, "draft-commit", json!({}));
    assert!(msg.starts_with("feat(first): add first"), "{msg}");
}

#[test]
fn a_shallow_clone_without_the_merge_base_is_a_marked_partial_answer() {
    let env = Env::new();
    let origin = env.git_project("origin");
    write(&origin, "m.py", "def base():\n    return 0\n");
    commit_all(&origin, "c1");
    git(&origin, &["checkout", "-q", "-b", "feature"]);
    write(&origin, "f.py", "def feature_fn():\n    return 1\n");
    commit_all(&origin, "f1");
    git(&origin, &["checkout", "-q", "main"]);
    write(&origin, "m.py", "def base():\n    return 1\n");
    commit_all(&origin, "c2");

    let clones = env.project("clones");
    let url = format!("file://{}", origin.display());
    git(&clones, &["clone", "-q", "--depth", "1", "--no-single-branch", "--branch", "feature", &url, "shallow"]);
    let shallow = clones.join("shallow");
    register(&env, &shallow);
    let (text, data) = ok(&env, &shallow, "branch-diff", json!({ "output_mode": "list" }));
    let warnings = data["warnings"].to_string();
    assert!(warnings.contains("shallow clone") && warnings.contains("git fetch --deepen"), "{data}");
    assert!(text.contains("! shallow clone"), "{text}");
    assert_eq!(data["base"], "origin/main");
    assert_eq!(names(file(&data, "f.py"), "added"), ["feature_fn"], "{data}");
}

#[test]
fn a_repository_mid_merge_marks_conflicted_files() {
    let env = Env::new();
    let root = repo(&env, "merge", &[("a.py", "def a():\n    return 0\n"), ("b.py", "def b():\n    return 0\n")]);
    git(&root, &["checkout", "-q", "-b", "feature"]);
    write(&root, "a.py", "def a():\n    return 1\n");
    write(&root, "b.py", "def b():\n    return 1\n\ndef b2():\n    pass\n");
    commit_all(&root, "feature");
    git(&root, &["checkout", "-q", "main"]);
    write(&root, "a.py", "def a():\n    return 2\n");
    commit_all(&root, "main");
    git(&root, &["checkout", "-q", "feature"]);
    // Merge main into feature: a.py conflicts.
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "merge", "main"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(!out.status.success(), "the merge must conflict");

    let (_, data) = ok(&env, &root, "branch-diff", json!({ "include": "unstaged" }));
    assert!(data["warnings"].to_string().contains("a merge is in progress"), "{data}");
    let a = file(&data, "a.py");
    assert_eq!(a["status"], "conflicted", "{a}");
    assert!(a.get("modified").is_none(), "conflict markers are not compared: {a}");
    assert_eq!(names(file(&data, "b.py"), "added"), ["b2"], "{data}");
    // Committed changes only: still answered, with the note.
    let (_, data) = ok(&env, &root, "branch-diff", json!({}));
    assert!(data["warnings"].to_string().contains("only committed changes"), "{data}");
}

#[test]
fn a_project_in_a_subdirectory_sees_only_its_own_files() {
    let env = Env::new();
    let root = env.git_project("mono");
    write(&root, "svc/api/handler.go", "package api\n\nfunc Handle() {}\n");
    write(&root, "web/index.ts", "export function render(): void {}\n");
    commit_all(&root, "base");
    git(&root, &["checkout", "-q", "-b", "feature"]);
    write(&root, "svc/api/handler.go", "package api\n\nfunc Handle() {}\n\nfunc Health() {}\n");
    write(&root, "web/index.ts", "export function render(): void {}\nexport function hydrate(): void {}\n");
    commit_all(&root, "both");
    write(&root, "svc/new file.go", "package svc\n\nfunc Spaced() {}\n");
    let svc = root.join("svc");
    register(&env, &svc);

    let (_, data) = ok(&env, &svc, "branch-diff", json!({ "include": "unstaged" }));
    let paths: Vec<&str> = data["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["api/handler.go", "new file.go"], "paths are relative to the project: {data}");
    assert_eq!(names(file(&data, "api/handler.go"), "added"), ["Health"]);
    assert_eq!(names(file(&data, "new file.go"), "added"), ["Spaced"]);
}

/// A repository's own configuration runs nothing: an fsmonitor hook, clean and smudge filters,
/// textconv and external diff drivers, hooks and pagers set in `.git/config` (which a tarball,
/// a zip or a shared folder delivers with the files) are all switched off for booger's git.
#[test]
fn a_repository_configuration_runs_no_program() {
    configured_programs_do_not_run(|root, key, value| {
        git(root, &["config", key, value]);
    });
}

/// Nor does what `.git/config` pulls in from a file of its own through `[include]` or
/// `[includeIf]` (round two read only `.git/config` itself: a filter defined in an included
/// file ran from branch-diff, draft-commit and publish).
#[test]
fn an_included_configuration_runs_no_program() {
    configured_programs_do_not_run(|root, key, value| {
        let git_dir = root.join(".git");
        let (file, section) = if key.starts_with("filter.") {
            ("plain.inc", "include")
        } else {
            ("conditional.inc", "includeIf.gitdir:{dir}/")
        };
        let section = section.replace("{dir}", &git_dir.parent().unwrap().display().to_string());
        let inc = git_dir.join(file);
        git(root, &["config", "--file", inc.to_str().unwrap(), key, value]);
        git(root, &["config", "--replace-all", &format!("{section}.path"), file]);
    });
}

/// Sets each program-running key with `set(root, key, value)`, then calls every git tool;
/// nothing may run.
fn configured_programs_do_not_run(set: impl Fn(&Path, &str, &str)) {
    let env = Env::new();
    let root = repo(&env, "hostile", &[("a.py", "def a():\n    return 1\n"), ("b.py", "def b():\n    return 1\n")]);
    git(&root, &["checkout", "-q", "-b", "feature"]);
    // Stat-dirty and changed files make git hash the working tree (where filters run).
    write(&root, "a.py", "def a():\n    return 2\n");
    write(&root, "c.py", "def c():\n    pass\n");
    write(&root, ".gitattributes", "* filter=evil diff=evil\n");
    // The test's own git runs nothing from here on: only booger's does.
    let marks = env.dir.path().join("ran");
    std::fs::create_dir_all(&marks).unwrap();
    let run = |what: &str| format!("touch {}/{what}; cat", marks.display());
    for (key, value) in [
        ("core.fsmonitor", run("fsmonitor")),
        ("filter.evil.clean", run("clean")),
        ("filter.evil.smudge", run("smudge")),
        ("filter.evil.process", run("process")),
        ("diff.evil.textconv", run("textconv")),
        ("diff.evil.command", run("diffcommand")),
        ("diff.external", run("external")),
        ("core.pager", run("pager")),
        ("core.hooksPath", marks.display().to_string()),
    ] {
        set(&root, key, &value);
    }
    for args in [json!({}), json!({ "include": "unstaged" }), json!({ "include": "staged" })] {
        ok(&env, &root, "branch-diff", args);
    }
    ok(&env, &root, "draft-commit", json!({}));
    ok(&env, &root, "changelog", json!({}));
    let ran: Vec<String> =
        std::fs::read_dir(&marks).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(ran.is_empty(), "the repository's configuration ran: {ran:?}");
}

/// A file name a commit brings is printed safely: a newline in it cannot forge a line of the
/// answer, an escape sequence does not reach the terminal.
#[test]
fn hostile_names_in_a_diff_are_printed_escaped() {
    let env = Env::new();
    let root = repo(&env, "names", &[("a.py", "def a():\n    return 1\n")]);
    git(&root, &["checkout", "-q", "-b", "feature"]);
    write(&root, "x\nauth.rs:42:    let admin_password = 1;.py", "def forged():\n    pass\n");
    write(&root, "t\u{1b}]52;c;aGk=\u{7}.py", "def title():\n    pass\n");
    commit_all(&root, "names");
    let (text, data) = ok(&env, &root, "branch-diff", json!({}));
    assert!(!text.lines().any(|l| l.trim_start().starts_with("auth.rs:42")), "a forged line: {text}");
    assert!(!text.contains('\u{1b}') && !data.to_string().contains('\u{1b}'), "{text}");
    assert!(text.contains("x\\nauth.rs:42"), "{text}");
}
