//! Search quality, token cost and speed on the Python standard library, in one run.
//!
//! `cargo bench -p booger-tests --bench search` (needs python3, and `rg` for the token
//! comparison: `apt-get install ripgrep`). It copies the standard library's .py files
//! (site-packages excluded, as ../shared/eval defines the corpus), starts a real daemon and:
//! - quality: runs ../shared/eval/score.py on `booger search` (files_with_matches, 10 results)
//!   and on the eval's grep baseline in the same run, and prints the fixed reference row;
//! - token cost: seed 002's queries, `search` in signatures mode (10 results) against `rg -n`
//!   over the same files;
//! - speed: tool round trips on an open connection (daemon work + ~20 µs of framing), whole
//!   `booger search` processes, workspace-search over 10 registered projects, and 20
//!   concurrent clients × 120 mixed calls.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use booger_tests::{Env, Raw, bin, copy_tree, describe};
use serde_json::{Value, json};

const SEED_QUERIES: &[&str] = &["parse", "error", "config", "search", "dispatch", "schema", "test"];

fn main() {
    let eval = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval");
    let stdlib = booger_tests::python_stdlib();
    let env = Env::new();
    let root = env.dir.path().join("stdlib");
    copy_tree(&stdlib, &root, &["py"], &["site-packages", "__pycache__"]);
    let mut daemon = env.start_daemon();
    let out = env.run_within(None, &["index", root.to_str().unwrap()], Duration::from_secs(600));
    assert!(out.status.success(), "{}", describe(&out));
    let queries: Vec<Value> = std::fs::read_to_string(eval.join("stdlib-queries.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();

    wait_for_ranking_index(&env, &root);
    quality(&env, &eval, &root);
    tokens(&env, &root);
    // A fresh daemon for the timings: no query of the quality runs is cached.
    daemon.signal(libc::SIGTERM);
    daemon.wait();
    let _daemon = env.start_daemon();
    speed(&env, &root, &queries, &stdlib);
}

fn quality(env: &Env, eval: &Path, root: &Path) {
    println!("## Quality ({} via score.py)\n", eval.join("stdlib-queries.jsonl").display());
    println!("| method | all | nl | latency, avg output |");
    println!("|---|---|---|---|");
    let booger = bin("booger");
    let runs = [
        (
            "booger `search` (files_with_matches, 10)",
            format!(
                "{} search {{query}} --project {{root}} --output-mode files_with_matches --head-limit {{k}}",
                booger.display()
            ),
        ),
        (
            "booger `search` (signatures, 10)",
            format!(
                "{} search {{query}} --project {{root}} --output-mode signatures --head-limit {{k}}",
                booger.display()
            ),
        ),
        (
            "`grep_baseline.sh` (same run)",
            format!("{} {{query}} {{root}} {{k}}", eval.join("grep_baseline.sh").display()),
        ),
    ];
    for (label, cmd) in runs {
        let [all, nl, latency] = booger_tests::score_py(env, eval, root, &cmd);
        println!("| {label} | {all} | {nl} | {latency} |");
    }
    println!(
        "| seeds' booger (fixed reference, eval README) | n=120 R@1=0.442 R@5=0.650 R@10=0.667 MRR@10=0.519 SymHit@10=0.558 | R@10=0.583 SymHit@10=0.500 | 159 ms, 127,504 chars |\n"
    );
}

fn tokens(env: &Env, root: &Path) {
    println!("## Token cost: `search` signatures (10 results) vs `rg -n` over the same .py files\n");
    println!("| query | rg chars | booger chars | reduction |");
    println!("|---|---|---|---|");
    let mut ratios = Vec::new();
    for q in SEED_QUERIES {
        let rg = Command::new("rg").args(["-n", "--type", "py", q]).arg(root).stdout(Stdio::piped()).output();
        let Ok(rg) = rg else {
            println!("| {q} | (rg missing: apt-get install ripgrep) | | |");
            continue;
        };
        let rg_chars = String::from_utf8_lossy(&rg.stdout).replace(&format!("{}/", root.display()), "").len();
        let out = env.run(&[
            "search",
            q,
            "--project",
            root.to_str().unwrap(),
            "--output-mode",
            "signatures",
            "--head-limit",
            "10",
        ]);
        let ours = out.stdout.len();
        let ratio = rg_chars as f64 / ours.max(1) as f64;
        ratios.push(ratio);
        println!("| `{q}` | {rg_chars} | {ours} | {ratio:.0}x |");
    }
    ratios.sort_by(f64::total_cmp);
    if !ratios.is_empty() {
        println!("\nmedian reduction: **{:.0}x**\n", ratios[ratios.len() / 2]);
    }
}

fn call(c: &mut Raw, id: u64, tool: &str, args: Value) -> (Duration, bool) {
    let t = Instant::now();
    let r = c.request(id, "booger/call", json!({ "tool": tool, "arguments": args }));
    (t.elapsed(), r.get("result").is_some_and(|x| !x["isError"].as_bool().unwrap_or(true)))
}

fn connect(env: &Env, project: &Path) -> Raw {
    let mut c = env.connect();
    c.request(0, "booger/hello", json!({ "protocol": booger_proto::wire::PROTOCOL_VERSION, "client": "bench", "project": project, "session": "bench" }));
    c
}

fn speed(env: &Env, root: &Path, queries: &[Value], stdlib: &Path) {
    println!("## Speed (warm daemon, indexed standard library)\n");
    println!("| measure | p50 | p95 | calls |");
    println!("|---|---|---|---|");
    let mut c = connect(env, root);
    let texts: Vec<&str> = queries.iter().map(|q| q["query"].as_str().unwrap()).collect();
    // Warm-up on other queries: pools open, pages cached, no eval query seen yet.
    for (i, q) in SEED_QUERIES.iter().enumerate() {
        call(&mut c, i as u64, "search", json!({ "query": format!("{q} handler"), "output_mode": "signatures" }));
    }
    // The first search started the in-memory ranking index; measure once it is ready.
    wait_for_ranking_index(env, root);
    let (first, second) = texts.split_at(60);
    let mut t: Vec<Duration> = first
        .iter()
        .enumerate()
        .map(|(i, q)| call(&mut c, i as u64 + 1, "search", json!({ "query": q, "output_mode": "signatures" })).0)
        .collect();
    row("`search`, first time a query is asked (eval queries, signatures, 10), open connection", &mut t);
    // Whole processes, also on queries not asked before.
    let mut t = whole_processes(env, root, second);
    row("`booger search` whole process, first time a query is asked", &mut t);
    let mut t: Vec<Duration> = texts
        .iter()
        .enumerate()
        .map(|(i, q)| call(&mut c, i as u64 + 1, "search", json!({ "query": q, "output_mode": "signatures" })).0)
        .collect();
    row("`search`, repeated query (candidate cache), open connection", &mut t);
    let mut t = whole_processes(env, root, first);
    row("`booger search` whole process, repeated query", &mut t);
    let mut t: Vec<Duration> = SEED_QUERIES
        .iter()
        .enumerate()
        .map(|(i, q)| call(&mut c, i as u64, "search", json!({ "query": q, "output_mode": "signatures" })).0)
        .collect();
    row("`search`, seed 002 single words, first time (signatures, 10)", &mut t);
    let symbols: Vec<String> = queries
        .iter()
        .flat_map(|q| {
            q["gold"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g["symbol"].as_str().unwrap().rsplit('.').next().unwrap().to_owned())
        })
        .collect();
    let mut t: Vec<Duration> = symbols
        .iter()
        .enumerate()
        .map(|(i, s)| {
            call(&mut c, i as u64, "references", json!({ "symbol": s, "output_mode": "content", "head_limit": 20 })).0
        })
        .collect();
    row("`references` (gold symbols, 20 lines), open connection", &mut t);
    let files: Vec<String> = queries
        .iter()
        .flat_map(|q| q["gold"].as_array().unwrap().iter().map(|g| g["path"].as_str().unwrap().to_owned()))
        .collect();
    let mut t: Vec<Duration> =
        files.iter().enumerate().map(|(i, f)| call(&mut c, i as u64, "symbols", json!({ "path": f })).0).collect();
    row("`symbols` (gold files), open connection", &mut t);

    // workspace-search over 10 registered projects: ten packages of the standard library.
    let packages = [
        "asyncio",
        "email",
        "json",
        "http",
        "unittest",
        "xml",
        "multiprocessing",
        "concurrent",
        "logging",
        "importlib",
    ];
    for p in packages {
        let dir = env.dir.path().join("ws").join(p);
        copy_tree(&stdlib.join(p), &dir, &["py"], &["site-packages", "__pycache__"]);
        let out = env.run_within(None, &["index", dir.to_str().unwrap()], Duration::from_secs(600));
        assert!(out.status.success(), "{}", describe(&out));
    }
    let projects = env.json(&["projects"])["projects"].as_array().unwrap().len();
    let mut t: Vec<Duration> = SEED_QUERIES
        .iter()
        .cycle()
        .take(70)
        .enumerate()
        .map(|(i, q)| call(&mut c, i as u64, "workspace-search", json!({ "query": q, "output_mode": "signatures" })).0)
        .collect();
    row(&format!("`workspace-search` over {projects} projects (signatures, 10)"), &mut t);

    // 20 concurrent clients × 120 mixed calls. A write (a note) first empties the query cache,
    // so each query is cold the first time any client asks it.
    call(&mut c, 9_999, "annotate", json!({ "target": "os.py", "note": "bench" }));
    let started = Instant::now();
    let results: Vec<(Vec<Duration>, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..20)
            .map(|client| {
                let texts = &texts;
                let symbols = &symbols;
                let files = &files;
                s.spawn(move || {
                    let mut c = connect(env, root);
                    let mut times = Vec::new();
                    let mut failures = 0;
                    for i in 0..120usize {
                        let k = client * 131 + i;
                        let (d, ok) = match i % 4 {
                            0 => call(
                                &mut c,
                                i as u64,
                                "search",
                                json!({ "query": texts[k % texts.len()], "output_mode": "signatures" }),
                            ),
                            1 => call(
                                &mut c,
                                i as u64,
                                "references",
                                json!({ "symbol": symbols[k % symbols.len()], "head_limit": 20 }),
                            ),
                            2 => call(&mut c, i as u64, "symbols", json!({ "path": files[k % files.len()] })),
                            _ => call(
                                &mut c,
                                i as u64,
                                "search",
                                json!({ "query": texts[k % texts.len()], "output_mode": "files_with_matches" }),
                            ),
                        };
                        failures += usize::from(!ok);
                        times.push(d);
                    }
                    (times, failures)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let wall = started.elapsed();
    let failures: usize = results.iter().map(|r| r.1).sum();
    let mut all: Vec<Duration> = results.into_iter().flat_map(|r| r.0).collect();
    row(
        &format!(
            "20 clients × 120 mixed calls, queries partly repeated ({failures} failures, {:.1} s wall)",
            wall.as_secs_f64()
        ),
        &mut all,
    );
    println!();
}

/// A first search starts the project's in-memory ranking index; wait until it is ready.
fn wait_for_ranking_index(env: &Env, root: &Path) {
    env.run(&["search", "warm", "--project", root.to_str().unwrap(), "--output-mode", "count"]);
    let deadline = Instant::now() + Duration::from_secs(120);
    while env.json(&["status", root.to_str().unwrap()])["project"]["index"]["ranking_index"] != "ready" {
        assert!(Instant::now() < deadline, "ranking index never became ready");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The wall time of one `booger search` process per query.
fn whole_processes(env: &Env, root: &Path, queries: &[&str]) -> Vec<Duration> {
    queries
        .iter()
        .map(|q| {
            let mut cmd = env.booger(Some(root));
            cmd.args(["search", q, "--output-mode", "signatures"]).stdout(Stdio::null()).stderr(Stdio::null());
            let s = Instant::now();
            assert!(cmd.status().unwrap().success());
            s.elapsed()
        })
        .collect()
}

fn row(label: &str, t: &mut [Duration]) {
    t.sort();
    let p = |q: usize| t[(t.len() - 1) * q / 100];
    println!("| {label} | {} | {} | {} |", ms(p(50)), ms(p(95)), t.len());
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}
