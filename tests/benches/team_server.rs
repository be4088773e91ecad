//! The team server under load, on a real PostgreSQL (started here, as the tests start it):
//! fifty remote agents, each with a token of its own, calling search, grep, symbols and
//! workspace-search over fifty published repositories; the same with PostgreSQL restarted in
//! the middle; one token flooding past its rate beside ten others; five hundred idle
//! connections (from another address) beside them. Latencies are whole HTTP round trips, measured by the clients;
//! the floor beside them is `/health` on the same server (no query).
//!
//! `cargo bench -p booger-tests --bench team_server` (release; a few minutes on two cores).
//! `BOOGER_TEAM_REPOS` (default 50) repositories, crates of the cargo registry.

use std::time::{Duration, Instant};

use booger_tests::team_server::{Remote, TeamServer, add_token, agent, crates};
use booger_tests::{Env, describe, proc_status_kb};
use serde_json::{Value, json};

const CLIENTS: usize = 50;
const CALLS: usize = 30;

/// What one call came to.
#[derive(Clone, Copy, PartialEq)]
enum Came {
    Answered,
    /// Failed, saying to retry (isError "try again", or 503 with Retry-After).
    Retryable,
    Refused,
    Failed,
}

fn pct(times: &mut [f64], p: f64) -> f64 {
    times.sort_by(f64::total_cmp);
    times.get(((times.len().max(1) - 1) as f64 * p) as usize).copied().unwrap_or(f64::NAN)
}

/// The calls agent `i` makes, in turn: search, grep, symbols, workspace-search.
fn call_for(i: usize, k: usize, repos: &[String]) -> (&'static str, Value) {
    const QUERIES: [&str; 6] = [
        "parse error message",
        "read bytes from buffer",
        "iterator next item",
        "config builder default",
        "unsafe pointer cast",
        "format display impl",
    ];
    const PATTERNS: [&str; 4] = ["fn new\\(", "impl Default for", "unsafe impl", "TODO"];
    let repo = &repos[(i + k) % repos.len()];
    match k % 4 {
        0 => ("search", json!({"query": QUERIES[(i + k) % QUERIES.len()], "repository": repo})),
        1 => ("grep", json!({"pattern": PATTERNS[(i + k) % PATTERNS.len()], "repository": repo, "head_limit": 20})),
        2 => ("symbols", json!({"repository": repo, "name": "new", "head_limit": 50})),
        _ => ("workspace-search", json!({"query": QUERIES[(i * 7 + k) % QUERIES.len()]})),
    }
}

fn ask(remote: &Remote, tool: &str, args: Value) -> (Came, f64) {
    let started = Instant::now();
    let a = remote.ask(tool, args);
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let came = match a.status {
        200 => match serde_json::from_str::<Value>(&a.body) {
            Ok(v) if v["result"]["isError"] == false => Came::Answered,
            Ok(v) if v["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("try again")) => {
                Came::Retryable
            }
            _ => Came::Failed,
        },
        503 if a.retry_after.is_some() => Came::Retryable,
        429 => Came::Refused,
        _ => Came::Failed,
    };
    (came, ms)
}

/// Every agent's calls at once; each agent opens its session first.
fn load(url: &str, tokens: &[String], repos: &[String], calls: usize) -> Vec<(Came, f64)> {
    let threads: Vec<_> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (url, t, repos) = (url.to_owned(), t.clone(), repos.to_vec());
            std::thread::spawn(move || {
                let remote = Remote::open(&url, &t);
                (0..calls)
                    .map(|k| {
                        let (tool, args) = call_for(i, k, &repos);
                        ask(&remote, tool, args)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
}

fn summary(label: &str, results: &[(Came, f64)]) -> (f64, f64) {
    let mut ms: Vec<f64> = results.iter().filter(|(c, _)| *c == Came::Answered).map(|(_, m)| *m).collect();
    let count = |c: Came| results.iter().filter(|(k, _)| *k == c).count();
    let (p50, p95) = (pct(&mut ms, 0.5), pct(&mut ms, 0.95));
    println!(
        "| {label} | {} | {} | {} | {} | {p50:.0} | {p95:.0} |",
        results.len(),
        count(Came::Failed),
        count(Came::Retryable),
        count(Came::Refused),
    );
    (p50, p95)
}

fn main() {
    let env = Env::new();
    let mut pg = booger_tests::postgres::start(env.dir.path());
    let daemon = env.start_daemon_with(&["--team-url", &pg.url]);
    let n: usize = std::env::var("BOOGER_TEAM_REPOS").ok().and_then(|n| n.parse().ok()).unwrap_or(50);
    let dirs = crates(env.dir.path(), n);
    let started = Instant::now();
    for r in &dirs {
        let out = env.run_within(None, &["projects", "add", r.to_str().unwrap()], Duration::from_secs(600));
        assert!(out.status.success(), "{}", describe(&out));
        let out = env.run_within(Some(r), &["publish"], Duration::from_secs(600));
        assert!(out.status.success(), "{}", describe(&out));
    }
    drop(daemon);
    let repos: Vec<String> = dirs.iter().map(|d| d.file_name().unwrap().to_string_lossy().into_owned()).collect();
    println!(
        "{} repositories published in {:.0} s; PostgreSQL 18 on loopback (fsync off)\n",
        repos.len(),
        started.elapsed().as_secs_f64()
    );
    let tokens: Vec<String> =
        (0..CLIENTS).map(|i| add_token(&env, &pg.url, &format!("agent-{i}"), &["*"], Some(100_000))).collect();
    let server = TeamServer::start(&env, &pg.url, &[]);
    let url = server.mcp();

    // The floor: /health round trips on one connection.
    let http = agent();
    let mut floor: Vec<f64> = (0..200)
        .map(|_| {
            let s = Instant::now();
            let _ = http.get(format!("{}/health", server.base)).call().unwrap().body_mut().read_to_string();
            s.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    println!("floor: GET /health p50 {:.2} ms\n", pct(&mut floor, 0.5));
    println!("| run | calls | failed | retryable | 429 | p50 ms | p95 ms |\n|---|---|---|---|---|---|---|");

    // Warm: each repository's pages in PostgreSQL's cache, as on a server in use.
    let _ = load(&url, &tokens[..10], &repos, 20);
    // Each tool alone, one agent: what a call costs without a queue.
    let one = Remote::open(&url, &tokens[0]);
    for k in 0..4 {
        let mut ms: Vec<f64> =
            (0..24).map(|i| ask(&one, call_for(i, k, &repos).0, call_for(i, k, &repos).1).1).collect();
        println!(
            "one agent, {:<17} p50 {:>5.1} ms, p95 {:>5.1} ms",
            call_for(0, k, &repos).0,
            pct(&mut ms.clone(), 0.5),
            pct(&mut ms, 0.95)
        );
    }
    println!();
    let results = load(&url, &tokens, &repos, CALLS);
    let (_, p95) = summary(&format!("{CLIENTS} agents x {CALLS} calls"), &results);
    let rss_mb = proc_status_kb(server.pid(), "VmHWM:") as f64 / 1024.0;

    // PostgreSQL restarted while fifty agents call.
    let restarter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        pg.stop();
        std::thread::sleep(Duration::from_millis(500));
        pg.restart();
        pg
    });
    let during = load(&url, &tokens, &repos, CALLS);
    let pg = restarter.join().unwrap();
    summary("the same, PostgreSQL restarted at 1.5 s", &during);
    let after = load(&url, &tokens[..10], &repos, 10);
    summary("after the restart, 10 agents x 10", &after);

    // One token far past its rate beside ten agents.
    let flood_token = add_token(&env, &pg.url, "flood", &["*"], Some(60));
    let quiet = load(&url, &tokens[..10], &repos, CALLS);
    let (_, quiet_p95) = summary("10 agents, nobody flooding", &quiet);
    // 1,000 requests past its rate, as fast as one client sends them, while the ten call.
    let flooder = {
        let (url, t) = (url.clone(), flood_token.clone());
        std::thread::spawn(move || {
            let remote = Remote::open(&url, &t);
            std::thread::sleep(Duration::from_millis(200));
            let statuses: Vec<u16> = (0..1_060).map(|_| remote.ask("status", json!({})).status).collect();
            (statuses.len(), statuses.iter().filter(|s| **s == 429).count())
        })
    };
    let beside = load(&url, &tokens[..10], &repos, CALLS);
    let (sent, refused) = flooder.join().unwrap();
    let (_, flood_p95) =
        summary(&format!("10 agents beside a token flooding ({sent} requests, {refused} got 429)"), &beside);

    // Five hundred idle connections beside them, from another address (one address holds an
    // eighth of the server's connections at most: past that it is refused).
    let addr: std::net::SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    let idle: Vec<std::net::TcpStream> = (0..500).map(|_| booger_tests::connect_from([127, 0, 0, 2], addr)).collect();
    let with_idle = load(&url, &tokens[..10], &repos, CALLS);
    summary("10 agents beside 500 idle connections from one other address", &with_idle);
    drop(idle);

    let metrics = booger_tests::team_server::metrics(&server.base);
    println!("\nserver-side mean per call, all runs:");
    for tool in ["search", "grep", "symbols", "workspace-search"] {
        let total = |what: &str| -> f64 {
            metrics
                .lines()
                .filter(|l| l.starts_with(what) && l.contains(&format!("tool=\"{tool}\"")))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .sum()
        };
        let (sum, count) = (total("booger_team_call_seconds_sum"), total("booger_team_call_seconds_count"));
        println!("  {tool:<17} {:>6.1} ms over {count} calls", sum / count.max(1.0) * 1000.0);
    }
    let threads = proc_status_kb(server.pid(), "Threads:");
    println!("team server threads: {threads}");
    let failed = results.iter().filter(|(c, _)| *c != Came::Answered).count();
    let unclean = during.iter().filter(|(c, _)| *c == Came::Failed).count();
    let after_ok = after.iter().all(|(c, _)| *c == Came::Answered);
    println!("\n| goal | measured | met? |\n|---|---|---|");
    println!(
        "| {CLIENTS} x {CALLS} calls: 0 failures, p95 <= 300 ms | {failed} failures, p95 {p95:.0} ms | {} |",
        if failed == 0 && p95 <= 300.0 { "yes" } else { "no" }
    );
    println!("| server RSS <= 300 MB | peak {rss_mb:.0} MB | {} |", if rss_mb <= 300.0 { "yes" } else { "no" });
    println!(
        "| PostgreSQL restarted: calls fail cleanly, later ones succeed | {unclean} unclean failures; afterwards all answered: {after_ok} | {} |",
        if unclean == 0 && after_ok { "yes" } else { "no" }
    );
    let slower = flood_p95 / quiet_p95 - 1.0;
    println!(
        "| a flooding token slows others' p95 <= 20% | {:+.0}% ({quiet_p95:.0} -> {flood_p95:.0} ms) | {} |",
        slower * 100.0,
        if slower <= 0.2 { "yes" } else { "no" }
    );
    drop(server);
    drop(pg);
}
