//! What `tools/list` costs an agent session and what its hints promise: the default list is
//! small, profiles choose more, a tool marked read-only changes nothing, and no default
//! answer carries more than 16 KB of structured content.

use std::collections::BTreeMap;
use std::path::Path;

use booger_proto::tools::{Effect, Kind, TOOLS, ToolSpec};
use booger_tests::{Env, describe, git, stderr};
use serde_json::{Map, Value, json};

/// The budget the default `tools/list` answer stays within, in bytes of JSON on the wire.
const DEFAULT_LIST_BYTES: usize = 12 * 1024;

fn listed(env: &Env, args: &[&str]) -> (usize, Vec<Value>) {
    let mut m = env.mcp_with(None, args);
    m.handshake("2025-11-25");
    let answer = m.request("tools/list", json!({}));
    let bytes = answer.to_string().len();
    (bytes, answer["result"]["tools"].as_array().unwrap().clone())
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().map(|t| t["name"].as_str().unwrap()).collect()
}

#[test]
fn the_default_list_is_small_and_profiles_choose_more() {
    let env = Env::new();
    let _d = env.start_daemon();
    let (bytes, core) = listed(&env, &[]);
    assert!(bytes <= DEFAULT_LIST_BYTES, "the default tools/list is {bytes} bytes (budget {DEFAULT_LIST_BYTES})");
    eprintln!("default tools/list: {} tools, {bytes} bytes", core.len());
    for must in ["search", "symbols", "references", "grep", "batch"] {
        assert!(names(&core).contains(&must), "{must} is not in the default list: {:?}", names(&core));
    }

    let (all_bytes, all) = listed(&env, &["--tools", "all"]);
    assert_eq!(names(&all), booger_proto::tools::names());
    eprintln!("--tools all: {} tools, {all_bytes} bytes", all.len());
    let (_, some) = listed(&env, &["--tools=git,annotate"]);
    assert_eq!(names(&some), ["changed-since", "annotate", "branch-diff", "draft-commit", "changelog"]);

    // A misspelt profile is a usage error that names the choices.
    let out = env.run(&["mcp", "--tools", "core,serch"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("unknown tool or group `serch`"), "{}", describe(&out));

    // A tool left out of the list still answers, by name or in a batch.
    let mut m = env.mcp(None);
    m.handshake("2025-11-25");
    let r = m.request("tools/call", json!({ "name": "projects", "arguments": {} }));
    assert_eq!(r["result"]["isError"], false, "{r}");
}

#[test]
fn hints_match_what_each_tool_does() {
    let env = Env::new();
    let _d = env.start_daemon();
    let (_, all) = listed(&env, &["--tools", "all"]);
    let hints: BTreeMap<&str, &Value> = all.iter().map(|t| (t["name"].as_str().unwrap(), &t["annotations"])).collect();
    let hint = |tool: &str, key: &str| hints[tool].get(key).and_then(Value::as_bool);
    for t in TOOLS {
        assert_eq!(hint(t.name, "openWorldHint"), Some(false), "{}", t.name);
        assert_eq!(hint(t.name, "readOnlyHint"), Some(t.effect == Effect::ReadOnly), "{}", t.name);
    }
    // Reads only, though it runs git.
    assert_eq!(hint("branch-diff", "readOnlyHint"), Some(true));
    for tool in ["index", "focus", "visit"] {
        assert_eq!(hint(tool, "idempotentHint"), Some(true), "{tool}");
        assert_eq!(hint(tool, "destructiveHint"), Some(false), "{tool}");
    }
    for tool in ["forget", "projects"] {
        assert_eq!(hint(tool, "destructiveHint"), Some(true), "{tool}");
    }
    assert_eq!(hint("annotate", "idempotentHint"), Some(false), "each call adds a note");
}

/// Arguments a tool accepts, from its required parameters' names.
fn minimal_arguments(t: &ToolSpec) -> Value {
    let mut args = Map::new();
    for p in t.params.iter().filter(|p| p.required) {
        let v = match (p.name, p.kind) {
            ("query", _) => json!("parse config"),
            ("symbol", _) => json!("parse_config"),
            ("pattern", _) => json!("fn \\w+"),
            ("since", _) => json!("2020-01-01T00:00:00Z"),
            ("target", _) => json!("src/lib.rs"),
            ("note", _) => json!("entry point"),
            (_, Kind::Strings) => json!(["src/lib.rs"]),
            (name, kind) => panic!("no sample value for {}'s {name} ({kind:?})", t.name),
        };
        args.insert(p.name.to_owned(), v);
    }
    Value::Object(args)
}

/// Every file under `dir` (the repository's .git included) and every row of every table of
/// the SQLite files there, as text: what a write would change.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            if e.file_type().unwrap().is_dir() {
                stack.push(path);
            } else if name.ends_with(".db") {
                out.insert(name, rows(&path));
            } else if name.ends_with("-wal")
                || name.ends_with("-shm")
                || name.ends_with(".log")
                || name.ends_with(".seg")
                || name.ends_with(".tmp")
            {
                // The database's journal (its rows are read through the .db), the log, and the
                // ranking segment: a cache of the index, rebuilt from it after a release.
            } else {
                out.insert(name, String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned());
            }
        }
    }
    out
}

fn rows(db: &Path) -> String {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut out = String::new();
    for t in tables {
        let mut stmt = c.prepare(&format!("SELECT * FROM \"{t}\"")).unwrap();
        let n = stmt.column_count();
        let mut q = stmt.query([]).unwrap();
        while let Some(row) = q.next().unwrap() {
            let values: Vec<String> = (0..n)
                .map(|i| match row.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    other => format!("{other:?}"),
                })
                .collect();
            out.push_str(&format!("{t} {}\n", values.join(" ")));
        }
    }
    out
}

/// The files (or databases) whose content differs, and those gone.
fn changes(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> Vec<String> {
    let mut changed: Vec<String> =
        after.iter().filter(|(k, v)| before.get(*k) != Some(v)).map(|(k, _)| k.clone()).collect();
    changed.extend(before.keys().filter(|k| !after.contains_key(*k)).map(|k| format!("{k} (removed)")));
    changed
}

fn assert_unchanged(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>, what: &str) {
    let changed = changes(before, after);
    assert!(changed.is_empty(), "{what} changed {changed:?}");
}

/// The snapshot without the index's record of its last run (when, how long): a second run
/// of the same index writes a new record and changes nothing else.
fn without_run_record(mut snapshot: BTreeMap<String, String>) -> BTreeMap<String, String> {
    for text in snapshot.values_mut() {
        *text = text
            .lines()
            .filter(|l| !l.starts_with("meta last_indexed_at ") && !l.starts_with("meta last_report "))
            .map(|l| format!("{l}\n"))
            .collect();
    }
    snapshot
}

#[test]
fn a_read_only_tool_writes_nothing_and_an_idempotent_one_writes_once() {
    let env = Env::new();
    let root = env.project("still");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "/// Parse a config.\npub fn parse_config(s: &str) -> usize {\n    s.len()\n}\n",
    )
    .unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    git(&root, &["tag", "v1"]);
    git(&root, &["checkout", "-qb", "feature"]);
    std::fs::write(root.join("src/extra.rs"), "pub fn extra() -> u32 {\n    1\n}\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "feat: extra"]);
    // `publish` writes to the team index only: a real server, which the snapshot of this
    // machine's files must not see change.
    let pg = booger_tests::postgres::start(env.dir.path());
    let _d = env.start_daemon_with(&["--no-embed", "--no-watch", "--team-url", &pg.url]);
    assert!(env.run_in(Some(&root), &["index"]).status.success());
    // Notes and focus exist, so reading them is exercised too.
    env.call(&root, "t", "annotate", json!({ "target": "src/lib.rs", "note": "entry" }));
    env.call(&root, "t", "focus", json!({ "paths": ["src"] }));

    let state = || {
        let mut s = snapshot(&root);
        s.extend(snapshot(&env.home).into_iter().map(|(k, v)| (format!("<data>/{k}"), v)));
        s
    };
    let before = state();
    for t in TOOLS.iter().filter(|t| t.effect == Effect::ReadOnly) {
        let (text, _, is_error) = env.call(&root, "t", t.name, minimal_arguments(t));
        assert!(!is_error, "{}: {text}", t.name);
        assert_unchanged(&before, &state(), &format!("{}, marked read-only,", t.name));
    }

    // The snapshot sees a write: a note is one.
    env.call(&root, "t", "annotate", json!({ "target": "src/extra.rs", "note": "second" }));
    let noted = state();
    assert!(changes(&before, &noted).iter().any(|c| c.ends_with(".db")), "the snapshot missed a note being written");

    for t in TOOLS.iter().filter(|t| t.effect == Effect::Idempotent && t.name != "embed") {
        let args = minimal_arguments(t);
        let (text, _, is_error) = env.call(&root, "t", t.name, args.clone());
        assert!(!is_error, "{}: {text}", t.name);
        let once = without_run_record(state());
        let (text, _, is_error) = env.call(&root, "t", t.name, args);
        assert!(!is_error, "{}: {text}", t.name);
        let what = format!("a second call of {}, marked idempotent,", t.name);
        assert_unchanged(&once, &without_run_record(state()), &what);
    }
}

/// What an answer may cost a session by default: MCP hands the model the structured content
/// too (`--json` prints it), so no tool's default answer carries more than this.
const ANSWER_BYTES: usize = 16 * 1024;

/// Every result-returning tool, called with its defaults on a project large enough to fill any
/// page (1,200 functions, their tests, a common name everywhere), answers within
/// [`ANSWER_BYTES`] of structured content; a caller who raises `max_tokens` gets more.
#[test]
fn every_default_answer_fits_sixteen_kilobytes_of_structured_content() {
    let env = Env::new();
    let _d = env.start_daemon();
    let proj = env.git_project("wide");
    for f in 0..60 {
        let mut body = String::new();
        for i in 0..20 {
            body.push_str(&format!(
                "def search_handler_{f}_{i}(request, options=None):\n    \"\"\"Search the index for the request.\"\"\"\n    return search(request, options)\n\n"
            ));
        }
        booger_tests::write(&proj, &format!("pkg/m{f}.py"), &body);
        booger_tests::write(
            &proj,
            &format!("tests/test_m{f}.py"),
            format!(
                "def test_search_{f}():\n    assert search('q{f}')\n\ndef test_search_more_{f}():\n    search('x')\n"
            ),
        );
    }
    assert!(env.run(&["index", proj.to_str().unwrap()]).status.success());
    let calls = [
        ("search", json!({ "query": "search handler request" })),
        ("search", json!({ "query": "search handler request", "output_mode": "files_with_matches" })),
        ("symbols", json!({})),
        ("changed-since", json!({ "since": "2020-01-01" })),
        ("references", json!({ "symbol": "search" })),
        ("grep", json!({ "pattern": "search" })),
        ("directory-summary", json!({})),
        ("tests-for", json!({ "symbol": "search" })),
        ("search-expand", json!({ "query": "search handler" })),
        ("workspace-search", json!({ "query": "search handler" })),
        ("status", json!({})),
    ];
    for (tool, args) in calls {
        let (_, data, err) = env.call(&proj, "budget", tool, args.clone());
        assert!(!err, "{tool} {args}: {data}");
        let bytes = data.to_string().len();
        assert!(bytes <= ANSWER_BYTES, "{tool} {args}: {bytes} bytes of structured content");
    }
    // The budget is the caller's to raise.
    let (_, data, _) = env.call(&proj, "budget", "symbols", json!({ "max_tokens": 20000 }));
    assert!(data.to_string().len() > ANSWER_BYTES, "max_tokens raises the budget");
}
