//! What a token may read and what a remote tool is: nothing of a repository the token does
//! not name, by any tool; the local tool of that name, with its arguments and meaning.

use std::time::{Duration, Instant};

use booger_tests::team_server::{Remote, agent, post, text};
use serde_json::{Value, json};

use super::{Fixture, fixture};

/// Calls that try every way to reach beta (by name, by its commits, by its words), with the
/// calls that find the same in alpha.
fn probes(tool: &str, f: &Fixture) -> Vec<(Value, Value)> {
    let [b1, b2] = &f.beta_commits;
    let [a1, _] = &f.alpha_commits;
    let pair = |beta: Value, alpha: Value| (beta, alpha);
    match tool {
        "search" => vec![
            pair(
                json!({"query": "zebrafish swim Reef", "repository": "beta"}),
                json!({"query": "aardvark swim Burrow", "repository": "alpha"}),
            ),
            pair(json!({"query": "zebrafish swim Reef"}), json!({"query": "aardvark swim Burrow"})),
            pair(json!({"query": "zebrafish", "commit": &b1[..10]}), json!({"query": "aardvark", "commit": &a1[..10]})),
        ],
        "hybrid-search" => vec![
            pair(
                json!({"query": "zebrafish swim Reef", "repository": "beta"}),
                json!({"query": "aardvark swim Burrow", "repository": "alpha"}),
            ),
            pair(json!({"query": "zebrafish swim Reef"}), json!({"query": "aardvark swim Burrow"})),
        ],
        "tests-for" => vec![
            pair(json!({"symbol": "zebrafish_swim"}), json!({"symbol": "aardvark_swim"})),
            pair(
                json!({"symbol": "zebrafish_swim", "repository": "beta"}),
                json!({"symbol": "aardvark_swim", "repository": "alpha"}),
            ),
        ],
        "workspace-search" => {
            vec![pair(json!({"query": "zebrafish swim Reef hold"}), json!({"query": "aardvark swim Burrow hold"}))]
        }
        "grep" => vec![
            pair(json!({"pattern": "zebrafish"}), json!({"pattern": "aardvark"})),
            pair(
                json!({"pattern": "z.brafish", "repository": "beta", "commit": b1}),
                json!({"pattern": "a.rdvark", "repository": "alpha", "commit": a1}),
            ),
            pair(
                json!({"pattern": "Notes", "path_prefix": "README.md"}),
                json!({"pattern": "aardvark", "path_prefix": "README.md"}),
            ),
        ],
        "symbols" => vec![
            pair(json!({"repository": "beta"}), json!({"repository": "alpha"})),
            pair(
                json!({"repository": "beta", "path": "src", "commit": "main"}),
                json!({"repository": "alpha", "path": "src/*.py"}),
            ),
            pair(json!({"repository": "alpha", "commit": b2}), json!({"repository": "alpha", "commit": a1})),
        ],
        "references" => vec![
            pair(json!({"symbol": "zebrafish_swim"}), json!({"symbol": "aardvark_swim"})),
            pair(
                json!({"symbol": "zebrafish_swim", "repository": "beta"}),
                json!({"symbol": "aardvark_swim", "repository": "alpha"}),
            ),
        ],
        "directory-summary" => vec![
            pair(json!({"repository": "beta"}), json!({"repository": "alpha"})),
            pair(json!({"repository": "beta", "path": "src"}), json!({"repository": "alpha", "path": "src"})),
        ],
        "branch-diff" => vec![
            pair(json!({"repository": "beta", "base": b1}), json!({"repository": "alpha", "base": a1})),
            pair(json!({"repository": "alpha", "base": b1, "commit": b2}), json!({"repository": "alpha", "base": a1})),
        ],
        "status" => vec![pair(json!({}), json!({}))],
        other => panic!("no probes for {other}"),
    }
}

/// What of beta no alpha token may see: its words, names, paths and commits (less what the
/// call itself named: an error may echo the arguments it was given).
fn beta_secrets(f: &Fixture) -> Vec<String> {
    let mut s: Vec<String> = ["zebrafish", "Reef", "beta"].map(str::to_owned).to_vec();
    for c in &f.beta_commits {
        s.push(c[..8].to_owned());
    }
    s
}

/// A token for alpha gets nothing of beta from `tool` (the same calls for alpha find
/// alpha's: the check can fail), and beta's token finds beta's.
fn sees_nothing_of_another(tool: &str) {
    let f = fixture();
    let (alice, bob) = (Remote::open(&f.server.mcp(), &f.alpha), Remote::open(&f.server.mcp(), &f.beta));
    for (to_beta, to_alpha) in probes(tool, &f) {
        let answer = alice.call(tool, to_beta.clone()).to_string();
        for secret in beta_secrets(&f).iter().filter(|s| !to_beta.to_string().contains(s.as_str())) {
            assert!(!answer.contains(secret.as_str()), "{tool} {to_beta}: alpha's token learned {secret:?}: {answer}");
        }
        let own = alice.call(tool, to_alpha.clone());
        assert_eq!(own["isError"], false, "{tool} {to_alpha}: {own}");
        assert!(own.to_string().contains("aardvark") || own.to_string().contains("alpha"), "{tool} {to_alpha}: {own}");
    }
    let (to_beta, _) = probes(tool, &f).remove(0);
    let theirs = bob.call(tool, to_beta.clone());
    assert!(
        theirs.to_string().contains("zebrafish") || theirs.to_string().contains("beta"),
        "{tool} {to_beta}: beta's token: {theirs}"
    );
}

macro_rules! access {
    ($($test:ident: $tool:literal),+ $(,)?) => {$(
        #[test]
        fn $test() {
            sees_nothing_of_another($tool);
        }
    )+};
}

access! {
    search_gives_a_token_nothing_of_a_repository_it_may_not_read: "search",
    hybrid_search_gives_a_token_nothing_of_a_repository_it_may_not_read: "hybrid-search",
    tests_for_gives_a_token_nothing_of_a_repository_it_may_not_read: "tests-for",
    workspace_search_gives_a_token_nothing_of_a_repository_it_may_not_read: "workspace-search",
    grep_gives_a_token_nothing_of_a_repository_it_may_not_read: "grep",
    symbols_give_a_token_nothing_of_a_repository_it_may_not_read: "symbols",
    references_give_a_token_nothing_of_a_repository_it_may_not_read: "references",
    directory_summary_gives_a_token_nothing_of_a_repository_it_may_not_read: "directory-summary",
    branch_diff_gives_a_token_nothing_of_a_repository_it_may_not_read: "branch-diff",
    status_gives_a_token_nothing_of_a_repository_it_may_not_read: "status",
}

/// Branch-diff between a commit kept as what it changed and the whole one it is kept against,
/// both ways: the one file the second commit changed, with its definitions, and none of the
/// files it did not touch.
#[test]
fn branch_diff_reads_a_commit_kept_as_what_it_changed_both_ways() {
    let f = fixture();
    let alice = Remote::open(&f.server.mcp(), &f.alpha);
    let [a1, a2] = &f.alpha_commits;
    let kept = f.pg.sql(&format!("SELECT count(*) FROM commits WHERE sha = '{a2}' AND base = '{a1}'"));
    assert_eq!(kept, "1", "the second commit is kept against the first");
    for (base, head, gone) in [(a1, a2, false), (a2, a1, true)] {
        let r = alice.call("branch-diff", json!({"repository": "alpha", "base": base, "commit": head}));
        let files = r["structuredContent"]["files"].as_array().cloned().unwrap_or_default();
        assert_eq!(files.len(), 1, "{r}");
        let (path, change) = (files[0]["path"].as_str(), files[0]["change"].as_str());
        assert_eq!((path, change), (Some("src/aardvark.py"), Some("modified")), "{r}");
        assert_eq!(files[0]["removed"].to_string().contains("aardvark_rest"), gone, "{r}");
        assert_eq!(files[0]["changed"].to_string().contains("aardvark_rest"), !gone, "{r}");
    }
}

#[test]
fn every_remote_tool_is_probed_and_none_writes() {
    let f = fixture();
    let list = post(
        &agent(),
        &f.server.mcp(),
        Some(&f.alpha),
        Some(&Remote::open(&f.server.mcp(), &f.alpha).session),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    let tools = list.json()["result"]["tools"].as_array().unwrap().clone();
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        assert!(!probes(name, &f).is_empty(), "{name}");
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
    }
    assert_eq!(tools.len(), 10);
}

/// A tool of the team server is the local tool of that name: the same arguments, described
/// the same (`repository` and `commit` where the local one has `project`), the same answer
/// schema, and the same meaning: on the same files, the same lines, mentions and definitions,
/// paged, cut and laid out alike.
#[test]
fn a_team_tool_takes_the_local_tools_arguments_and_means_the_same() {
    let f = fixture();
    let alice = Remote::open(&f.server.mcp(), &f.alpha);
    let team = post(
        &agent(),
        &f.server.mcp(),
        Some(&f.alpha),
        Some(&alice.session),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    let team = team.json()["result"]["tools"].as_array().unwrap().clone();
    let mut m = f.env.mcp_with(None, &["--tools", "all"]);
    m.handshake("2025-11-25");
    let local = m.request("tools/list", json!({}))["result"]["tools"].as_array().unwrap().clone();
    for t in &team {
        let name = t["name"].as_str().unwrap();
        let l = local.iter().find(|l| l["name"] == name).unwrap_or_else(|| panic!("{name} is not a local tool"));
        let props = |v: &Value, aside: [&str; 2]| {
            let mut p = v["inputSchema"]["properties"].as_object().unwrap().clone();
            p.retain(|k, _| !aside.contains(&k.as_str()));
            p
        };
        assert_eq!(props(t, ["repository", "commit"]), props(l, ["project", "team"]), "{name}: other arguments");
        if !["directory-summary", "branch-diff", "status"].contains(&name) {
            assert_eq!(t["outputSchema"], l["outputSchema"], "{name}: another answer");
        }
    }

    // The same calls on the local index of alpha (its working tree is its published head)
    // and on the team index: the same places, named repository@commit:path there.
    let root = f.env.project("alpha");
    let head = &f.alpha_commits[1][..12];
    let local_call = |tool: &str, args: Value| {
        let started = Instant::now();
        loop {
            let (said, data, failed) = f.env.call(&root, "same", tool, args.clone());
            if !failed {
                return data;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "{tool}: {said}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let places = |data: &Value, keys: &[&str]| -> Vec<String> {
        let rows = data["results"].as_array().cloned().unwrap_or_default();
        let mut out: Vec<String> = rows
            .iter()
            .map(|r| {
                let at = r["path"].as_str().unwrap_or_default();
                let at = at.strip_prefix(&format!("alpha@{head}:")).unwrap_or(at);
                let rest: Vec<String> = keys.iter().map(|k| r[*k].to_string()).collect();
                format!("{at} {}", rest.join(" "))
            })
            .collect();
        out.sort();
        out
    };
    for (tool, args, keys) in [
        ("grep", json!({"pattern": "aardvark_swim", "context": 1}), &["line", "text"][..]),
        ("grep", json!({"pattern": "def part_", "path_prefix": "src/*_part_[1-3].py"}), &["line"][..]),
        ("references", json!({"symbol": "aardvark_swim", "scope": "call"}), &["line", "class", "within"][..]),
        ("references", json!({"symbol": "aardvark_swim", "output_mode": "files_with_matches"}), &["mentions"][..]),
        ("symbols", json!({"path": "src", "kind": "class"}), &["start_line", "name", "signature"][..]),
        ("symbols", json!({"path": "src", "output_mode": "files_with_matches"}), &["symbols"][..]),
        ("tests-for", json!({"symbol": "aardvark_swim"}), &["name", "start_line"][..]),
    ] {
        let mut on_team = args.clone();
        on_team["repository"] = json!("alpha");
        let theirs = alice.call(tool, on_team.clone());
        assert_eq!(theirs["isError"], false, "{tool} {on_team}: {theirs}");
        let ours = local_call(tool, args.clone());
        let (theirs, ours) = (places(&theirs["structuredContent"], keys), places(&ours, keys));
        assert!(!ours.is_empty(), "{tool} {args}: nothing local to compare");
        assert_eq!(theirs, ours, "{tool} {args}: the team index answered otherwise");
    }

    // Paging, a cut and a count mean the same.
    let page = alice.call("grep", json!({"pattern": "return", "repository": "alpha", "head_limit": 2}));
    let next = page["structuredContent"]["cursor"].as_str().unwrap_or_else(|| panic!("no cursor: {page}")).to_owned();
    let rest = alice.call("grep", json!({"pattern": "return", "repository": "alpha", "cursor": next}));
    let first: Vec<Value> = page["structuredContent"]["results"].as_array().unwrap().clone();
    let then: Vec<Value> = rest["structuredContent"]["results"].as_array().unwrap().clone();
    assert_eq!(first.len(), 2, "{page}");
    assert!(!then.is_empty() && then.iter().all(|l| !first.contains(l)), "{rest}");
    let counted = alice.call("references", json!({"symbol": "aardvark_swim", "output_mode": "count"}));
    assert!(counted["structuredContent"]["total"].as_u64().is_some_and(|n| n >= 2), "{counted}");
    let files = alice.call("search", json!({"query": "aardvark swim", "output_mode": "files_with_matches"}));
    let rows = files["structuredContent"]["results"].as_array().unwrap().clone();
    assert!(!rows.is_empty() && rows.iter().all(|r| r["chunks"].is_array()), "{files}");
    let small = alice.call("search", json!({"query": "aardvark swim", "output_mode": "signatures", "head_limit": 1}));
    assert_eq!(small["structuredContent"]["results"].as_array().map(Vec::len), Some(1), "{small}");
    let glob = alice.call("search", json!({"query": "part", "path_prefix": "src/*_part_2.py"}));
    let rows = glob["structuredContent"]["results"].as_array().unwrap().clone();
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r["path"].as_str().unwrap().ends_with("src/aardvark_part_2.py")),
        "{glob}"
    );
    // branch-diff's path_prefix, a prefix or a glob, as the local tool takes it.
    let base = &f.alpha_commits[0];
    for (prefix, files) in [("src", 1), ("src/*.py", 1), ("tests", 0), ("src/aardvark_part_?.py", 0)] {
        let d = alice.call("branch-diff", json!({"repository": "alpha", "base": base, "path_prefix": prefix}));
        let listed = d["structuredContent"]["files"].as_array().map(Vec::len);
        assert_eq!(listed, Some(files), "branch-diff path_prefix {prefix}: {d}");
    }
    // What a published commit cannot have is refused, saying why.
    let staged =
        alice.call("branch-diff", json!({"repository": "alpha", "base": f.alpha_commits[0], "include": "staged"}));
    assert_eq!(staged["isError"], true, "{staged}");
    assert!(text(&staged).contains("leave include out"), "{staged}");
}
