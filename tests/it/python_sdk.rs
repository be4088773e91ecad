//! The official MCP Python SDK talks to `booger mcp` over stdio. The harness installs the
//! pinned SDK with pip into `target/py-mcp` on first use.

use std::path::Path;

use booger_tests::{Env, bin, describe};
use serde_json::Value;

/// Runs tests/python/mcp_sdk_client.py (the official SDK driving `booger mcp` in `dir`) with
/// `extra` arguments and the env's variables plus `vars`; its JSON report.
fn sdk_client(env: &Env, dir: &Path, extra: &[&str], vars: &[(&str, &str)]) -> Value {
    let mut py = booger_tests::python_with_mcp(env);
    py.envs(vars.iter().copied())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("python/mcp_sdk_client.py"))
        .arg(bin("booger"))
        .arg(dir)
        .args(extra);
    let out = booger_tests::output_within(py, std::time::Duration::from_secs(120));
    assert!(out.status.success(), "{}", describe(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(&out)))
}

#[test]
fn official_python_sdk_initializes_lists_and_calls() {
    let env = Env::new();
    let proj = env.project("zeta");
    // No daemon yet: `booger mcp` starts one under the SDK.
    // The env's variables reach booger through python.
    let v = sdk_client(&env, &proj, &[], &[]);
    assert_eq!(v["server"], "booger");
    assert!(v["protocolVersion"].as_str().unwrap().starts_with("20"), "{v}");
    assert!(v["tools"].as_array().unwrap().iter().any(|t| t == "status"), "{v}");
    assert_eq!(v["statusIsError"], false, "{v}");
    assert!(v["status"].as_str().unwrap().contains("boogerd"), "{v}");
    assert_eq!(v["badIsError"], true, "{v}");
    assert!(v["badText"].as_str().unwrap().contains("must be a string"), "{v}");
    // A directory that is neither a repository nor has a manifest is not registered.
    let (_, data, _) = env.call(&proj, "t", "projects", serde_json::json!({}));
    assert_eq!(data["projects"], serde_json::json!([]), "{data}");
}

/// An agent opens a repository booger has never seen: its first `search` (a new `booger mcp`
/// with no daemon running, as MCP Inspector's CLI starts servers) registers the project,
/// waits for its first index, and answers with results: not "not a registered project", not
/// "run booger index".
#[test]
fn first_call_in_an_unseen_repository_just_works() {
    let env = Env::new();
    let repo = env.git_project("fresh-repo");
    // Enough files that the first index takes a moment (a few hundred milliseconds here), few
    // enough that it ends within the call's wait with the whole suite running beside it on
    // two cores (600 files once took longer, and the answer came from the first 543).
    let body: String = (0..30).map(|j| format!("def step_{j}(x):\n    return x + {j}\n\n")).collect();
    for i in 0..300 {
        std::fs::write(repo.join(format!("mod_{i}.py")), format!("def handler_{i}():\n    return {i}\n\n{body}"))
            .unwrap();
    }
    std::fs::write(repo.join("retry.py"), "def retry_failed_uploads(queue):\n    return queue\n").unwrap();
    let sub = repo.join("src");
    std::fs::create_dir(&sub).unwrap();
    // Started in a subdirectory: the repository's root is the project.
    let v = sdk_client(&env, &sub, &["retry failed uploads"], &[]);
    assert_eq!(v["isError"], false, "{v}");
    let text = v["text"].as_str().unwrap();
    assert!(!text.contains("not a registered project"), "{text}");
    assert!(text.contains("retry.py"), "no result in the first answer: {text}");
    assert!(!text.contains("booger index"), "told to index by hand: {text}");
    let (_, data, _) = env.call(&repo, "t", "projects", serde_json::json!({}));
    let roots: Vec<&str> = data["projects"].as_array().unwrap().iter().filter_map(|p| p["root"].as_str()).collect();
    assert_eq!(roots, [repo.to_str().unwrap()], "{data}");

    // `--no-register` leaves another repository alone.
    let other = env.git_project("other-repo");
    let v = sdk_client(&env, &other, &["anything"], &[("BOOGER_AUTO_REGISTER", "0")]);
    assert!(v["text"].as_str().unwrap().contains("not a registered project"), "{v}");
}

/// Every tool publishes an outputSchema, and every successful answer carries structured
/// content that the official SDK validates against it.
#[test]
fn every_answer_is_structured_and_matches_its_output_schema() {
    let env = Env::new();
    let repo = env.git_project("shapes");
    std::fs::write(repo.join("Cargo.toml"), "[package]\nname = \"shapes\"\n").unwrap();
    std::fs::create_dir(repo.join("src")).unwrap();
    std::fs::write(
        repo.join("src/lib.rs"),
        "/// Parse a config.\npub fn parse_config(s: &str) -> usize { s.len() }\n\n#[cfg(test)]\nmod tests {\n    \
         #[test]\n    fn test_parse_config() { super::parse_config(\"x\"); }\n}\n",
    )
    .unwrap();
    booger_tests::git(&repo, &["add", "-A"]);
    booger_tests::git(&repo, &["commit", "-qm", "init"]);
    booger_tests::git(&repo, &["tag", "v1"]);
    booger_tests::git(&repo, &["checkout", "-qb", "feature"]);
    std::fs::write(repo.join("src/extra.rs"), "pub fn extra() -> u32 {\n    1\n}\n").unwrap();
    booger_tests::git(&repo, &["add", "-A"]);
    booger_tests::git(&repo, &["commit", "-qm", "feat: extra"]);
    let pg = booger_tests::postgres::start(env.dir.path());
    let _daemon = env.start_daemon_with(&["--team-url", &pg.url]);
    for args in [&["projects", "add", repo.to_str().unwrap()][..], &["index"]] {
        let out = env.run_in(Some(&repo), args);
        assert!(out.status.success(), "{args:?}: {}", describe(&out));
    }
    // A second project: answers drawn from several projects keep their schemas too.
    let second = env.git_project("second");
    std::fs::write(second.join("extra.py"), "def extra_steps():\n    return 2\n").unwrap();
    for args in [&["projects", "add", second.to_str().unwrap()][..], &["index", second.to_str().unwrap()]] {
        let out = env.run_in(Some(&repo), args);
        assert!(out.status.success(), "{args:?}: {}", describe(&out));
    }
    let second = second.to_str().unwrap();

    let calls = serde_json::json!([
        { "tool": "status" },
        { "tool": "projects" },
        { "tool": "index" },
        { "tool": "search", "arguments": { "query": "parse config" } },
        { "tool": "search", "arguments": { "query": "parse config", "output_mode": "count" } },
        { "tool": "search", "arguments": { "query": "parse config", "output_mode": "signatures" } },
        { "tool": "search", "arguments": { "query": "parse config", "output_mode": "files_with_matches" } },
        { "tool": "symbols", "arguments": { "path": "src" } },
        { "tool": "symbols", "arguments": { "path": "src", "output_mode": "files_with_matches" } },
        { "tool": "symbols", "arguments": { "output_mode": "count" } },
        { "tool": "references", "arguments": { "symbol": "parse_config" } },
        { "tool": "references", "arguments": { "symbol": "parse_config", "output_mode": "count" } },
        { "tool": "references", "arguments": { "symbol": "parse_config", "output_mode": "files_with_matches" } },
        { "tool": "grep", "arguments": { "pattern": "fn \\w+" } },
        { "tool": "grep", "arguments": { "pattern": "no such text anywhere" } },
        { "tool": "directory-summary" },
        { "tool": "tests-for", "arguments": { "symbol": "parse_config" } },
        { "tool": "tests-for", "arguments": { "symbol": "parse_config", "output_mode": "files_with_matches" } },
        { "tool": "changed-since", "arguments": { "since": "2020-01-01" } },
        { "tool": "search-expand", "arguments": { "query": "parse_config" } },
        { "tool": "workspace-search", "arguments": { "query": "extra" } },
        { "tool": "batch", "arguments": { "calls": [{ "tool": "grep", "arguments": { "pattern": "extra" } }] } },
        { "tool": "batch", "arguments": { "calls": [
            { "tool": "search", "arguments": { "query": "extra" } },
            { "tool": "search", "arguments": { "query": "extra", "project": second } },
            { "tool": "symbols", "arguments": { "project": second } },
        ] } },
        { "tool": "annotate", "arguments": { "target": "src/lib.rs", "note": "parser entry" } },
        { "tool": "annotations" },
        { "tool": "focus", "arguments": { "paths": ["src/lib.rs"] } },
        { "tool": "visit", "arguments": { "paths": ["src/extra.rs"] } },
        { "tool": "forget" },
        { "tool": "branch-diff", "arguments": { "base": "main" } },
        { "tool": "branch-diff", "arguments": { "base": "main", "output_mode": "list" } },
        { "tool": "branch-diff", "arguments": { "base": "main", "output_mode": "files" } },
        { "tool": "draft-commit", "arguments": { "base": "main" } },
        { "tool": "changelog", "arguments": { "from": "v1" } },
        { "tool": "embed" },
        { "tool": "eval" },
        { "tool": "semantic-search", "arguments": { "query": "read settings" } },
        { "tool": "hybrid-search", "arguments": { "query": "parse settings" } },
        { "tool": "hybrid-search", "arguments": { "query": "parse settings", "output_mode": "files_with_matches" } },
        { "tool": "workspace-search", "arguments": { "query": "extra", "output_mode": "files_with_matches" } },
        { "tool": "publish" },
        { "tool": "team-status" },
    ]);
    let report = sdk_client(&env, &repo, &["--calls", &calls.to_string()], &[("BOOGER_TOOLS", "all")]);
    let report = report.as_array().expect("one entry per call");
    for entry in report {
        assert!(entry.get("invalid").is_none(), "the SDK rejected the structured content: {entry}");
        assert_eq!(entry["hasOutputSchema"], true, "{entry}");
        assert_eq!(entry["isError"], false, "{entry}");
        assert_eq!(entry["structured"], true, "{entry}");
    }
    // Both projects answered: `index` is still one object, `indexes` has each.
    let (_, data, _) = env.call(&repo, "t", "workspace-search", serde_json::json!({ "query": "extra" }));
    assert!(data["index"].is_object(), "{data}");
    assert_eq!(data["indexes"].as_array().map(Vec::len), Some(2), "{data}");
    let called: std::collections::BTreeSet<&str> = report.iter().filter_map(|e| e["tool"].as_str()).collect();
    for t in booger_proto::tools::TOOLS {
        assert!(called.contains(t.name), "no call exercises {}'s output schema", t.name);
    }
}
