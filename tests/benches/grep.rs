//! `grep` against `rg` on the same files, and heavy calls mixed with light ones, in one run.
//!
//! `cargo bench -p booger-tests --bench grep` (needs python3 and `rg`: `apt-get install
//! ripgrep`). It copies the standard library's .py files, starts a real daemon, indexes them,
//! and prints:
//! - per pattern (literals, alternations, classes, anchors, none): whole-process medians of
//!   `booger grep` and `rg -n` over the same files, and whether they count the same lines;
//! - 20 client processes × 30 calls each (a third `grep`, a third `search`, a third
//!   `symbols`) at once: p50 and p95 per tool, and failures.
//!
//! `BOOGER_BENCH_TREE=/path` adds the first table for another tree (e.g. a copy of
//! /usr/include and ~/.cargo/registry/src).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use booger_tests::{Env, bin, copy_tree, describe};
use serde_json::Value;

const PATTERNS: &[&str] = &[
    "def __init__",
    "raise ValueError",
    "import os",
    "TODO|FIXME|XXX",
    "self\\.\\w+ = None",
    "^class \\w+\\(",
    "return$",
    "(Header|Message)Parser",
    "[A-Z]{3,}_[A-Z]+ =",
    "\\bencode\\b",
    "except \\w+Error as",
    "isinstance\\(\\w+, (str|bytes)\\)",
    "http://",
    "logging\\.getLogger",
    "yield from",
    "__all__ = \\[",
    "lambda",
    "async def",
    "@property",
    "sys\\.exit\\(",
    "os\\.path\\.join",
    "subprocess\\.run",
    "\\d{4}",
    "^\\s+#",
];

/// Added for the other tree: C and Rust shapes (closing braces, qualifiers, macros, generics).
const TREE_PATTERNS: &[&str] =
    &["^}", "unsafe fn", "static inline", "#define \\w+_H\\b", "impl<T", "\\s+$", "^#include <\\w+\\.h>"];

/// Match sets up to this many lines are compared line by line (larger ones by count).
const SET_LIMIT: u64 = 20_000;

const RUNS: usize = 7;

fn main() {
    let env = Env::new();
    let root = env.dir.path().join("stdlib");
    copy_tree(&booger_tests::python_stdlib(), &root, &["py"], &["site-packages", "__pycache__"]);
    let _daemon = env.start_daemon_with(&["--no-embed"]);
    let started = Instant::now();
    let out = env.run_within(None, &["index", root.to_str().unwrap()], Duration::from_secs(900));
    assert!(out.status.success(), "{}", describe(&out));
    println!("indexed the standard library in {:.1} s", started.elapsed().as_secs_f64());
    grep_index_ready(&env, &root, started);
    against_rg(&env, &root, "the Python standard library (.py)", PATTERNS);
    // Before the other tree: its ranking index is still being built in the background after
    // its run, which would take a core from the load.
    load(&env, &root);
    if let Ok(tree) = std::env::var("BOOGER_BENCH_TREE") {
        let tree = Path::new(&tree);
        let started = Instant::now();
        let out =
            env.run_within(None, &["projects", "add", tree.to_str().unwrap(), "--force"], Duration::from_secs(60));
        assert!(out.status.success(), "{}", describe(&out));
        let out = env.run_within(None, &["index", tree.to_str().unwrap()], Duration::from_secs(3600));
        assert!(out.status.success(), "{}", describe(&out));
        println!("indexed {} in {:.1} s", tree.display(), started.elapsed().as_secs_f64());
        grep_index_ready(&env, tree, started);
        let patterns: Vec<&str> = PATTERNS.iter().chain(TREE_PATTERNS).copied().collect();
        against_rg(&env, tree, &tree.display().to_string(), &patterns);
    }
}

/// Waits until the background pass has written every trigram row (a large run leaves them
/// to it; grep reads the pending files whole meanwhile), and says when that was.
fn grep_index_ready(env: &Env, root: &Path, started: Instant) {
    loop {
        let s = env.json(&["status", root.to_str().unwrap()]);
        if s["project"]["index"]["grep_index"]["ready"] == true {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(3600), "the grep index never became ready");
        std::thread::sleep(Duration::from_millis(200));
    }
    println!("grep index ready {:.1} s after the run started\n", started.elapsed().as_secs_f64());
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(mut cmd: Command) -> Duration {
    let t = Instant::now();
    let status = cmd.stdout(Stdio::null()).stderr(Stdio::null()).status().expect("run");
    assert!(status.success() || status.code() == Some(1), "{cmd:?}: {status:?}");
    t.elapsed()
}

fn against_rg(env: &Env, root: &Path, what: &str, patterns: &[&str]) {
    println!("## grep on {what}: whole-process medians of {RUNS} runs\n");
    println!("| pattern | booger grep | rg -n | rg / booger | lines (booger, rg) | same lines |");
    println!("|---|---|---|---|---|---|");
    let booger = bin("booger");
    let mut ratios = Vec::new();
    let (mut same, mut same_sets, mut total_b, mut total_r) = (0, 0, Duration::ZERO, Duration::ZERO);
    let mut differences = Vec::new();
    for p in patterns {
        let b = median(
            (0..RUNS)
                .map(|_| {
                    let mut c = env.command(&booger);
                    c.args(["grep", p, "--project", root.to_str().unwrap()]);
                    time(c)
                })
                .collect(),
        );
        let r = median(
            (0..RUNS)
                .map(|_| {
                    let mut c = Command::new("rg");
                    c.args(["-n", p]).arg(root);
                    time(c)
                })
                .collect(),
        );
        let counted: Value = env.json(&["grep", p, "--project", root.to_str().unwrap(), "--head-limit", "1"]);
        let b_lines = counted["total"].as_u64().unwrap_or(0);
        let rg = Command::new("rg").args(["-c", "--no-filename", p]).arg(root).output().expect("rg");
        let r_lines: u64 =
            String::from_utf8_lossy(&rg.stdout).lines().filter_map(|l| l.trim().parse::<u64>().ok()).sum();
        same += usize::from(b_lines == r_lines);
        let sets = (b_lines.max(r_lines) <= SET_LIMIT).then(|| {
            let (b, r) = (booger_lines(env, root, p), rg_lines(root, p));
            let first = b
                .symmetric_difference(&r)
                .next()
                .map(|x| format!("`{p}`: {}:{} only in {}", x.0, x.1, if b.contains(x) { "booger's" } else { "rg's" }));
            differences.extend(first.clone());
            first.is_none()
        });
        same_sets += usize::from(sets == Some(true));
        let ratio = r.as_secs_f64() / b.as_secs_f64();
        ratios.push(ratio);
        total_b += b;
        total_r += r;
        println!(
            "| `{p}` | {:.1} ms | {:.1} ms | {ratio:.2}x | {b_lines}, {r_lines}{} | {} |",
            b.as_secs_f64() * 1e3,
            r.as_secs_f64() * 1e3,
            if b_lines == r_lines { "" } else { " ≠" },
            match sets {
                Some(true) => "yes",
                Some(false) => "no",
                None => "(too many to list)",
            }
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "\n{} patterns: median rg/booger {:.2}x; booger {:.0} ms, rg {:.0} ms in all; same line count on {same} of {}; same lines (path and number, sets of up to {SET_LIMIT}) on {same_sets}\n",
        patterns.len(),
        ratios[ratios.len() / 2],
        total_b.as_secs_f64() * 1e3,
        total_r.as_secs_f64() * 1e3,
        patterns.len()
    );
    for d in differences {
        println!("- {d}");
    }
    println!();
}

/// Every line `booger grep` matches, as (path, line), page by page.
fn booger_lines(env: &Env, root: &Path, pattern: &str) -> BTreeSet<(String, u64)> {
    let mut lines = BTreeSet::new();
    loop {
        let offset = lines.len().to_string();
        let page: Value = env.json(&[
            "grep",
            pattern,
            "--project",
            root.to_str().unwrap(),
            "--head-limit",
            "500",
            "--max-tokens",
            "20000",
            "--offset",
            &offset,
        ]);
        let results = page["results"].as_array().cloned().unwrap_or_default();
        let before = lines.len();
        lines.extend(
            results
                .iter()
                .map(|r| (r["path"].as_str().unwrap_or_default().to_owned(), r["line"].as_u64().unwrap_or(0))),
        );
        if lines.len() == before || lines.len() as u64 >= page["total"].as_u64().unwrap_or(0) {
            return lines;
        }
    }
}

/// Every line `rg` matches under `root`, as (path relative to it, line).
fn rg_lines(root: &Path, pattern: &str) -> BTreeSet<(String, u64)> {
    let out =
        Command::new("rg").args(["-n", "--no-heading", "--with-filename", pattern, "."]).current_dir(root).output();
    let out = out.expect("rg");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let path = parts.next()?.strip_prefix("./")?.to_owned();
            Some((path, parts.next()?.parse().ok()?))
        })
        .collect()
}

/// Rounds of the load: the machines are shared and noisy, so the median round is quoted.
const LOAD_ROUNDS: usize = 3;

fn load(env: &Env, root: &Path) {
    const CLIENTS: usize = 20;
    println!("## {CLIENTS} client processes × {CALLS} calls at once (a third each grep, search, symbols)\n");
    println!("| round | failures | search p95 | symbols p95 | grep p50 | grep p95 | all p95 | wall |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut all_p95 = Vec::new();
    for round in 1..=LOAD_ROUNDS {
        let started = Instant::now();
        let results: Vec<(&str, Duration, bool)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..CLIENTS).map(|c| s.spawn(move || client(env, root, c))).collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let wall = started.elapsed();
        let pct = |tool: &str, p: usize| {
            let mut t: Vec<Duration> =
                results.iter().filter(|(k, ..)| tool == "all" || *k == tool).map(|(_, d, _)| *d).collect();
            t.sort();
            t[t.len() * p / 100].as_secs_f64() * 1e3
        };
        let failed = results.iter().filter(|(_, _, ok)| !ok).count();
        println!(
            "| {round} | {failed} of {} | {:.0} ms | {:.0} ms | {:.0} ms | {:.0} ms | {:.0} ms | {:.1} s |",
            results.len(),
            pct("search", 95),
            pct("symbols", 95),
            pct("grep", 50),
            pct("grep", 95),
            pct("all", 95),
            wall.as_secs_f64()
        );
        all_p95.push(pct("all", 95));
    }
    all_p95.sort_by(f64::total_cmp);
    println!("\nall calls p95, median of {LOAD_ROUNDS} rounds: {:.0} ms\n", all_p95[LOAD_ROUNDS / 2]);
}

/// Calls of one client process a round.
const CALLS: usize = 30;

/// One client's calls, one after another: grep, search, symbols in turn.
fn client<'a>(env: &Env, root: &Path, c: usize) -> Vec<(&'a str, Duration, bool)> {
    let queries =
        ["parse a config file", "http request headers", "json decode error", "thread pool", "unicode normalize"];
    let names = ["urlopen", "JSONDecoder", "Thread", "normalize", "getLogger"];
    let booger = bin("booger");
    let mut out = Vec::new();
    for k in 0..CALLS {
        let i = c * CALLS + k;
        let mut cmd = env.command(&booger);
        let tool = match k % 3 {
            0 => {
                // Every pattern in turn (i is a multiple of 3 here).
                cmd.args(["grep", PATTERNS[(i / 3) % PATTERNS.len()]]);
                "grep"
            }
            1 => {
                cmd.args(["search", queries[i % queries.len()]]);
                "search"
            }
            _ => {
                cmd.args(["symbols", names[i % names.len()]]);
                "symbols"
            }
        };
        cmd.args(["--project", root.to_str().unwrap()]);
        let t = Instant::now();
        let ok = cmd.stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
        out.push((tool, t.elapsed(), ok));
    }
    out
}
