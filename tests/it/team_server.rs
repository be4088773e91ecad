//! The team server (`boogerd --serve-team`) on a real PostgreSQL: remote agents with tokens of
//! their own, each reading only the repositories its token names.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use booger_tests::postgres::Postgres;
use booger_tests::team_server::{Remote, TeamServer, add_token, agent, post, revoke_token, text};
use booger_tests::{DaemonProc, Env, commit_all, describe, git, write};
use serde_json::{Value, json};

/// Two published repositories, two commits each, and a token for each.
struct Fixture {
    server: TeamServer,
    _daemon: DaemonProc,
    pg: Postgres,
    env: Env,
    /// Reads `alpha` only.
    alpha: String,
    /// Reads `beta` only.
    beta: String,
    /// beta's commits, first and second: what no alpha token may learn.
    beta_commits: [String; 2],
    alpha_commits: [String; 2],
}

impl Fixture {
    fn new() -> Fixture {
        let env = Env::new();
        let pg = booger_tests::postgres::start(env.dir.path());
        let daemon = env.start_daemon_with(&["--team-url", &pg.url]);
        let publish = |name: &str, word: &str, class: &str| {
            let repo = env.git_project(name);
            write(
                &repo,
                &format!("src/{word}.py"),
                format!(
                    "def {word}_swim(depth):\n    return depth * 2\n\nclass {class}:\n    def hold(self):\n        return {word}_swim(3)\n"
                ),
            );
            write(&repo, "README.md", format!("# {name}\n\nNotes about the {word}.\n"));
            write(
                &repo,
                &format!("tests/test_{word}.py"),
                format!("def test_{word}_swims():\n    assert {word}_swim(2, 1) == 2\n"),
            );
            // Enough files that the second commit is kept as what it changed.
            for i in 0..8 {
                write(&repo, &format!("src/{word}_part_{i}.py"), format!("def part_{i}():\n    return {i}\n"));
            }
            commit_all(&repo, "first");
            assert!(env.run(&["projects", "add", repo.to_str().unwrap()]).status.success());
            let out = env.run_in(Some(&repo), &["publish"]);
            assert!(out.status.success(), "{}", describe(&out));
            let first = git(&repo, &["rev-parse", "HEAD"]).trim().to_owned();
            write(
                &repo,
                &format!("src/{word}.py"),
                format!(
                    "def {word}_swim(depth, speed):\n    return depth * speed\n\ndef {word}_rest():\n    return 0\n\nclass {class}:\n    def hold(self):\n        return {word}_swim(3, 1)\n"
                ),
            );
            commit_all(&repo, "second");
            let out = env.run_in(Some(&repo), &["publish"]);
            assert!(out.status.success(), "{}", describe(&out));
            [first, git(&repo, &["rev-parse", "HEAD"]).trim().to_owned()]
        };
        let alpha_commits = publish("alpha", "aardvark", "Burrow");
        let beta_commits = publish("beta", "zebrafish", "Reef");
        let alpha = add_token(&env, &pg.url, "alice", &["alpha"], None);
        let beta = add_token(&env, &pg.url, "bob", &["be?a"], None);
        let server = TeamServer::start(&env, &pg.url, &[]);
        Fixture { server, _daemon: daemon, pg, env, alpha, beta, beta_commits, alpha_commits }
    }
}

/// How many tests use the shared fixture: the last one to finish stops it.
const USERS: usize = 19;
static SHARED: Mutex<(Option<Arc<Fixture>>, usize)> = Mutex::new((None, 0));

struct Lease(Arc<Fixture>);

impl std::ops::Deref for Lease {
    type Target = Fixture;
    fn deref(&self) -> &Fixture {
        &self.0
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        shared.1 += 1;
        if shared.1 == USERS {
            shared.0 = None;
        }
    }
}

fn fixture() -> Lease {
    let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    let f = shared.0.get_or_insert_with(|| {
        // When only some of these tests run, the last user never comes: the fixture is
        // stopped as the test process exits.
        // SAFETY: registers a function with no arguments that only drops the fixture.
        unsafe { libc::atexit(stop_shared) };
        Arc::new(Fixture::new())
    });
    Lease(f.clone())
}

extern "C" fn stop_shared() {
    if let Ok(mut shared) = SHARED.try_lock() {
        shared.0 = None;
    }
}

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

/// No token, a wrong one, a revoked one: 401, the revoked one within a second. A session is
/// its token's: another token's request naming it is told there is no such session.
#[test]
fn tokens_are_checked_revoked_within_a_second_and_sessions_are_their_tokens() {
    let f = fixture();
    let url = f.server.mcp();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let http = agent();
    let none = post(&http, &url, None, None, &list);
    assert_eq!(none.status, 401, "{none:?}");
    assert!(none.body.contains("Authorization: Bearer"), "{none:?}");
    let wrong = post(&http, &url, Some("bgt_0000"), None, &list);
    assert_eq!(wrong.status, 401, "{wrong:?}");
    // A web page's request, even with a live token: its origin is not allowed.
    let page = http
        .post(&url)
        .header("authorization", &format!("Bearer {}", f.alpha))
        .header("origin", "https://evil.example")
        .header("content-type", "application/json")
        .send(list.to_string())
        .unwrap();
    assert_eq!(page.status().as_u16(), 403);

    let carol = add_token(&f.env, &f.pg.url, "carol", &["alpha"], None);
    let remote = Remote::open(&url, &carol);
    assert_eq!(remote.call("status", json!({}))["isError"], false);
    // Alice's token with carol's session: not hers.
    let replay = post(&http, &url, Some(&f.alpha), Some(&remote.session), &list);
    assert_eq!(replay.status, 404, "{replay:?}");
    assert!(post(&http, &url, Some(&carol), Some(&remote.session), &list).status == 200);

    revoke_token(&f.env, &f.pg.url, "carol");
    let revoked = Instant::now();
    loop {
        let a = remote.ask("status", json!({}));
        if a.status == 401 {
            break;
        }
        assert!(revoked.elapsed() < Duration::from_secs(1), "a revoked token still answered after 1 s: {a:?}");
        // Meanwhile, it reads nothing: every query checks the token.
        assert!(!a.body.contains("alpha@"), "a revoked token read alpha: {a:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Bad arguments are the caller's to fix.
    let bad = Remote::open(&url, &f.alpha).call("grep", json!({"pattern": "("}));
    assert_eq!(bad["isError"], true, "{bad}");
    assert!(text(&bad).contains("literal=true"), "{bad}");
    let unknown = Remote::open(&url, &f.alpha).ask("index", json!({}));
    assert_eq!(unknown.json()["error"]["code"], -32602, "{unknown:?}");
}

/// A malformed message gets the JSON-RPC code the daemon's own fronts give it: the team
/// server reads messages as they do.
#[test]
fn malformed_json_rpc_gets_the_codes_every_front_gives() {
    let f = fixture();
    let url = f.server.mcp();
    let session = Remote::open(&url, &f.alpha).session;
    let raw = |body: &str| {
        let r = agent()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", &format!("Bearer {}", f.alpha))
            .header("mcp-session-id", &session)
            .config()
            .http_status_as_error(false)
            .build()
            .send(body.to_owned())
            .unwrap();
        let v: Value = serde_json::from_str(&r.into_body().read_to_string().unwrap()).unwrap();
        v["error"]["code"].as_i64()
    };
    assert_eq!(raw("{not json"), Some(-32700));
    assert_eq!(raw(r#"{"id": 1, "method": "tools/list"}"#), Some(-32600), "no jsonrpc member");
    assert_eq!(raw(r#"{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}"#), Some(-32600), "an object id");
    assert_eq!(raw(r#"[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]"#), Some(-32600), "a batch");
    assert_eq!(raw(r#"{"jsonrpc": "2.0", "id": 1, "method": "resources/list"}"#), Some(-32601));
    assert_eq!(raw(r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": 3}"#), Some(-32600));
}

/// Past its rate a token gets 429 with Retry-After, every time; another token is served.
#[test]
fn past_its_rate_a_token_gets_429_and_others_are_served() {
    let f = fixture();
    let url = f.server.mcp();
    let hasty = add_token(&f.env, &f.pg.url, "hasty", &["alpha"], Some(30));
    // initialize and its notification are calls too: 28 of 30 are left.
    let remote = Remote::open(&url, &hasty);
    let answers: Vec<_> = (0..1_030).map(|_| remote.ask("status", json!({}))).collect();
    let ok = answers.iter().filter(|a| a.status == 200).count();
    let limited: Vec<_> = answers.iter().filter(|a| a.status == 429).collect();
    // (The bucket refills a call every 2 s while the loop runs.)
    let others: Vec<_> = answers.iter().filter(|a| a.status != 200 && a.status != 429).collect();
    assert!(
        (27..=30).contains(&ok) && others.is_empty(),
        "{ok} answered, {} refused, others: {others:?}",
        limited.len()
    );
    for a in &limited {
        assert!(
            a.retry_after.as_deref().is_some_and(|r| r.parse::<u64>().is_ok_and(|s| (1..=3).contains(&s))),
            "{a:?}"
        );
    }
    assert!(limited[0].body.contains("30 calls a minute"), "{:?}", limited[0]);
    let other = Remote::open(&url, &f.alpha).call("status", json!({}));
    assert_eq!(other["isError"], false, "{other}");
    // /metrics only with its own secret, whatever the peer's address (a reverse proxy on the
    // same host makes every peer loopback).
    let url = format!("{}/metrics", f.server.base);
    assert_eq!(agent().get(&url).call().unwrap().status().as_u16(), 401);
    let wrong = agent().get(&url).header("Authorization", "Bearer nope").call().unwrap();
    assert_eq!(wrong.status().as_u16(), 401);
    let metrics = booger_tests::team_server::metrics(&f.server.base);
    let counted = format!("booger_team_rate_limited_total{{token=\"hasty\"}} {}", limited.len());
    assert!(metrics.contains(&counted), "{counted} not in {metrics}");
}

/// A 100 MB body is refused without being read whole, and five hundred idle connections
/// and a client that sends its headers a byte at a time do not keep others from answers.
#[test]
fn a_huge_body_idle_connections_and_a_slow_client_leave_others_served() {
    use std::io::{Read, Write};
    let f = fixture();
    let addr = f.server.base.trim_start_matches("http://").to_owned();
    let mut big = std::net::TcpStream::connect(&addr).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        f.alpha,
        100 << 20
    );
    big.write_all(head.as_bytes()).unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..100 {
        if big.write_all(&chunk).is_err() {
            break; // the server stopped reading: it answered already
        }
    }
    let mut reply = String::new();
    big.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = big.read_to_string(&mut reply);
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply:?}");

    // (Fewer than one address's share of connections: the test's client has the same address.)
    let idle: Vec<std::net::TcpStream> = (0..200).map(|_| std::net::TcpStream::connect(&addr).unwrap()).collect();
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHo").unwrap();
    let started = Instant::now();
    let answer = Remote::open(&f.server.mcp(), &f.alpha).call("search", json!({"query": "aardvark"}));
    assert_eq!(answer["isError"], false, "{answer}");
    assert!(started.elapsed() < Duration::from_secs(2), "served in {:?}", started.elapsed());
    drop(idle);
}

/// The official MCP Python SDK's Streamable HTTP client lists the tools and calls them; it
/// checks each answer against the outputSchema the tool published.
#[test]
fn official_sdk_lists_and_calls_the_team_server() {
    let f = fixture();
    let calls = json!([
        {"tool": "status"},
        {"tool": "search", "arguments": {"query": "aardvark swim"}},
        {"tool": "workspace-search", "arguments": {"query": "Burrow"}},
        {"tool": "grep", "arguments": {"pattern": "aardvark_swim"}},
        {"tool": "symbols", "arguments": {"repository": "alpha", "path": "src"}},
        {"tool": "references", "arguments": {"symbol": "aardvark_swim"}},
        {"tool": "directory-summary", "arguments": {"repository": "alpha"}},
        {"tool": "branch-diff", "arguments": {"repository": "alpha", "base": f.alpha_commits[0]}},
        {"tool": "search", "arguments": {"query": "zebrafish", "repository": "beta"}},
        {"tool": "hybrid-search", "arguments": {"query": "aardvark swim"}},
        {"tool": "tests-for", "arguments": {"symbol": "aardvark_swim", "repository": "alpha"}},
        // Every output mode of the listing tools, as the local daemon's SDK test calls them.
        {"tool": "search", "arguments": {"query": "aardvark swim", "output_mode": "files_with_matches"}},
        {"tool": "search", "arguments": {"query": "aardvark swim", "output_mode": "signatures", "head_limit": 1}},
        {"tool": "search", "arguments": {"query": "aardvark swim", "output_mode": "count"}},
        {"tool": "symbols", "arguments": {"repository": "alpha", "output_mode": "files_with_matches"}},
        {"tool": "symbols", "arguments": {"repository": "alpha", "output_mode": "count"}},
        {"tool": "references", "arguments": {"symbol": "aardvark_swim", "output_mode": "files_with_matches"}},
        {"tool": "references", "arguments": {"symbol": "aardvark_swim", "output_mode": "count"}},
        {"tool": "tests-for", "arguments": {"symbol": "aardvark_swim", "output_mode": "files_with_matches"}},
        {"tool": "grep", "arguments": {"pattern": "aardvark_swim", "context": 2, "head_limit": 1}},
        {"tool": "branch-diff", "arguments": {"repository": "alpha", "base": f.alpha_commits[0], "output_mode": "list"}},
        {"tool": "directory-summary", "arguments": {"repository": "alpha", "path": "src", "max_tokens": 50}},
    ]);
    let mut py = booger_tests::python_with_mcp(&f.env);
    py.env("BOOGER_TEAM_TOKEN", &f.alpha)
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python/mcp_team_client.py"))
        .arg(f.server.mcp())
        .arg(calls.to_string());
    let out = booger_tests::output_within(py, Duration::from_secs(120));
    assert!(out.status.success(), "{}", describe(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(&out)));
    assert_eq!(v["server"], "booger-team", "{v}");
    assert_eq!(v["tools"].as_array().unwrap().len(), 10, "{v}");
    let results = v["calls"].as_array().unwrap();
    for r in &results[..8] {
        assert_eq!(r["isError"], false, "{r}");
    }
    assert!(results[1]["text"].as_str().unwrap().contains("alpha@"), "{v}");
    assert!(
        results[7]["text"].as_str().unwrap().contains("aardvark_rest"),
        "branch-diff names the new definition: {v}"
    );
    assert_eq!(results[8]["isError"], true, "{v}");
    assert_eq!(results[9]["isError"], false, "{v}");
    assert!(results[9]["text"].as_str().unwrap().contains("no embeddings"), "{v}");
    assert!(results[10]["text"].as_str().unwrap().contains("test_aardvark_swims"), "tests-for finds the test: {v}");
    for r in &results[11..] {
        assert_eq!(r["isError"], false, "{r}");
    }
    // The audit says who asked what of which repository, and how much it found (written
    // within a second or so).
    let audited = "SELECT count(*) FROM audit a JOIN tokens t ON t.id = a.token_id
                   WHERE t.name = 'alice' AND a.tool = 'branch-diff' AND a.repo = 'alpha' AND a.results = 1 AND a.ok";
    let started = Instant::now();
    while f.pg.sql(audited) == "0" {
        assert!(started.elapsed() < Duration::from_secs(5), "no audit row: {}", f.pg.sql("SELECT * FROM audit"));
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// PostgreSQL restarted under a running team server: calls meanwhile fail cleanly, saying
/// to retry; once it is back, calls succeed without restarting boogerd.
#[test]
fn the_team_server_rides_out_a_restart_of_postgresql() {
    let env = Env::new();
    let mut pg = booger_tests::postgres::start(env.dir.path());
    let _daemon = env.start_daemon_with(&["--team-url", &pg.url]);
    let repo = env.git_project("gamma");
    write(&repo, "lib.rs", "pub fn gamma_ray() -> u32 {\n    7\n}\n");
    commit_all(&repo, "one");
    assert!(env.run(&["projects", "add", repo.to_str().unwrap()]).status.success());
    assert!(env.run_in(Some(&repo), &["publish"]).status.success());
    let token = add_token(&env, &pg.url, "ci", &["*"], None);
    let server = TeamServer::start(&env, &pg.url, &[]);
    let remote = Remote::open(&server.mcp(), &token);
    assert_eq!(remote.call("search", json!({"query": "gamma ray"}))["isError"], false);
    pg.stop();
    let down = remote.ask("search", json!({"query": "gamma ray"}));
    match down.status {
        200 => {
            let v = down.json();
            assert_eq!(v["result"]["isError"], true, "{v}");
            assert!(text(&v["result"]).contains("try again"), "{v}");
        }
        503 => assert_eq!(down.retry_after.as_deref(), Some("1"), "{down:?}"),
        _ => panic!("{down:?}"),
    }
    pg.restart();
    let back = Instant::now();
    loop {
        let a = remote.ask("search", json!({"query": "gamma ray"}));
        if a.status == 200 && a.json()["result"]["isError"] == false {
            assert!(a.body.contains("gamma@"), "{a:?}");
            break;
        }
        assert!(back.elapsed() < Duration::from_secs(15), "not back: {a:?}\n{}", server.said());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Given a certificate and key, the team server speaks TLS itself: a client that trusts the
/// certificate's CA is served, plain HTTP gets no answer, and a client that does not trust it
/// is refused in the handshake.
#[test]
fn tls_on_the_team_servers_own_listener() {
    use std::io::{Read, Write};

    use rustls::pki_types::pem::PemObject;
    let f = fixture();
    let certs = booger_tests::tls_proxy::test_certs();
    let dir = tempfile::tempdir().unwrap();
    let (cert_file, key_file) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_file, &certs.cert).unwrap();
    std::fs::write(&key_file, &certs.key).unwrap();
    let server = TeamServer::start(
        &f.env,
        &f.pg.url,
        &["--team-cert", cert_file.to_str().unwrap(), "--team-key", key_file.to_str().unwrap()],
    );
    let port: u16 = server.base.rsplit(':').next().unwrap().parse().unwrap();

    let https = |trusted: &str| -> std::io::Result<String> {
        let mut roots = rustls::RootCertStore::empty();
        for c in rustls::pki_types::CertificateDer::pem_slice_iter(trusted.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, std::net::TcpStream::connect(("127.0.0.1", port))?);
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        .to_string();
        write!(
            tls,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            f.alpha,
            body.len()
        )?;
        let mut reply = String::new();
        tls.read_to_string(&mut reply)?;
        Ok(reply)
    };
    let reply = https(&certs.ca).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.to_ascii_lowercase().contains("mcp-session-id:"), "{reply}");
    // A CA the server's certificate does not come from: the handshake fails.
    assert!(https(&booger_tests::tls_proxy::test_certs().ca).is_err(), "a certificate from an unknown CA was trusted");
    // Plain HTTP to the TLS port gets no HTTP answer.
    let mut plain = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    plain.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    plain.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let _ = plain.read_to_end(&mut got);
    assert!(!String::from_utf8_lossy(&got).contains("200 OK"), "{}", String::from_utf8_lossy(&got));
}
