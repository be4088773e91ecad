//! What the daemon costs while people forget it is running.
//!
//! `cargo bench -p booger-tests --bench memory` (needs python3, git and tar; about 20 min).
//! Seven projects in one daemon: the five repositories of ../shared/eval/repos (axum,
//! requests, cobra, hiredis, zustand), a copy of the Python standard library and a copy of
//! `/usr/include`. Two daemons on the same indexes, in the same run:
//! - baseline: nothing is ever released (`--idle-release-secs` a day, an unlimited budget),
//!   which is how boogerd held memory before idle release;
//! - default: boogerd's defaults (release after 10 idle minutes, the default budget).
//!
//! Each: RSS once every project is indexed and embedded, peak RSS (VmHWM, reset first) over
//! one `search` and one `hybrid-search` per project, RSS after `BOOGER_BENCH_IDLE_SECS`
//! (default 660: the 10 minutes plus the release timer's minute) of nothing, and threads.
//! Then, with release after 2 s: the first `booger search` (whole process) on a released
//! project against a warm one, on the standard library and `/usr/include`; threads with 50
//! registered projects; and on the `/usr/include` copy indexed from scratch, the cold index
//! time against the time until the static embedding tier covers it (that part alone with
//! `BOOGER_BENCH_LARGE_ONLY=1`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use booger_tests::{DaemonProc, Env, copy_tree, describe, proc_status_kb};
use serde_json::Value;

const REPOS: &[&str] = &["axum", "requests", "cobra", "hiredis", "zustand"];
const QUERY: &str = "parse the configuration and report errors";
const ROUNDS: usize = 7;

fn main() {
    let env = Env::new();
    if std::env::var_os("BOOGER_BENCH_LARGE_ONLY").is_some() {
        large_tree(&env);
        return;
    }
    let corpora = corpora(&env);
    let idle =
        Duration::from_secs(std::env::var("BOOGER_BENCH_IDLE_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(660));
    println!("# booger memory benchmark\n");
    println!(
        "Seven projects (five repositories, the standard library, /usr/include), one search and one hybrid search each, then {} s idle.\n",
        idle.as_secs()
    );
    println!("| daemon | RSS indexed + embedded | peak while answering | RSS right after | RSS after idle | threads |");
    println!("|---|---|---|---|---|---|");
    let baseline = env.start_daemon_with(&["--idle-release-secs", "86400", "--memory-budget", "1000000"]);
    register(&env, &corpora);
    row(&env, "baseline (never released)", baseline, &corpora, Duration::from_secs(70));
    let default = env.start_daemon();
    row(&env, "default (release after 10 min idle)", default, &corpora, idle);

    let quick = env.start_daemon_with(&["--idle-release-secs", "2"]);
    wait_ready(&env, &corpora);
    println!("\n## First query on a released project (whole `booger search` process, p50 of {ROUNDS})\n");
    println!("| project | warm | first after release | ratio |");
    println!("|---|---|---|---|");
    for name in ["stdlib", "usr-include"] {
        let root = corpora.iter().find(|p| p.ends_with(name)).unwrap();
        let (warm, cold) = first_query(&env, root);
        println!("| {name} | {} | {} | {:.1}x |", ms(warm), ms(cold), cold.as_secs_f64() / warm.as_secs_f64());
    }
    for i in 0..43 {
        let p = env.project(&format!("tiny-{i}"));
        std::fs::write(p.join("main.py"), format!("def tiny_{i}():\n    return {i}\n")).unwrap();
        env.json(&["projects", "add", p.to_str().unwrap()]);
    }
    std::thread::sleep(Duration::from_secs(5));
    let threads = proc_status_kb(quick.child.id(), "Threads:");
    println!("\nThreads with 50 registered projects: {threads}\n");
    stop(quick);
    large_tree(&env);
}

/// Extracts the five repositories and copies the standard library and /usr/include.
fn corpora(env: &Env) -> Vec<PathBuf> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval/repos");
    let work = env.dir.path().join("corpora");
    std::fs::create_dir_all(&work).unwrap();
    let mut out = Vec::new();
    for name in REPOS {
        let tar = Command::new("tar")
            .arg("xzf")
            .arg(shared.join(format!("{name}.git.tar.gz")))
            .arg("-C")
            .arg(&work)
            .output()
            .unwrap();
        assert!(tar.status.success(), "{}", describe(&tar));
        booger_tests::git(&work, &["clone", "-q", &format!("{name}.git"), name]);
        out.push(std::fs::canonicalize(work.join(name)).unwrap());
    }
    let stdlib = work.join("stdlib");
    copy_tree(&booger_tests::python_stdlib(), &stdlib, &["py"], &["site-packages", "__pycache__"]);
    let include = work.join("usr-include");
    copy_tree(Path::new("/usr/include"), &include, &[], &[]);
    out.push(std::fs::canonicalize(stdlib).unwrap());
    out.push(std::fs::canonicalize(include).unwrap());
    out
}

fn register(env: &Env, corpora: &[PathBuf]) {
    for root in corpora {
        env.json(&["projects", "add", root.to_str().unwrap()]);
    }
}

/// Until every project is indexed, watched and fully embedded by the static tier.
fn wait_ready(env: &Env, corpora: &[PathBuf]) {
    let deadline = Instant::now() + Duration::from_secs(1800);
    for root in corpora {
        loop {
            let s = env.json(&["status", "--project", root.to_str().unwrap()]);
            let index = &s["project"]["index"];
            let e = &index["embeddings"];
            let done = index["exists"] == true
                && index["watch"]["state"] == "watching"
                && e["embedded"].as_u64().is_some()
                && e["embedded"] == e["embeddable"];
            if done {
                break;
            }
            assert!(Instant::now() < deadline, "{} never became ready: {s}", root.display());
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

fn row(env: &Env, label: &str, daemon: DaemonProc, corpora: &[PathBuf], idle: Duration) {
    let pid = daemon.child.id();
    wait_ready(env, corpora);
    std::thread::sleep(Duration::from_secs(2));
    let indexed = proc_status_kb(pid, "VmRSS:");
    // Reset the peak, so it covers the queries only.
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
    for root in corpora {
        for tool in ["search", "hybrid-search"] {
            let out =
                env.run_within(None, &[tool, QUERY, "--project", root.to_str().unwrap()], Duration::from_secs(60));
            assert!(out.status.success(), "{}", describe(&out));
        }
    }
    let peak = proc_status_kb(pid, "VmHWM:");
    let after = proc_status_kb(pid, "VmRSS:");
    std::thread::sleep(idle);
    let idle_rss = proc_status_kb(pid, "VmRSS:");
    let threads = proc_status_kb(pid, "Threads:");
    println!("| {label} | {} | {} | {} | {} | {threads} |", mb(indexed), mb(peak), mb(after), mb(idle_rss));
    stop(daemon);
}

/// Whole-process `booger search` on a warm project, then on one released 2 s before: p50s.
fn first_query(env: &Env, root: &Path) -> (Duration, Duration) {
    let run = |q: &str| {
        let t = Instant::now();
        let out = env.run_within(None, &["search", q, "--project", root.to_str().unwrap()], Duration::from_secs(60));
        assert!(out.status.success(), "{}", describe(&out));
        t.elapsed()
    };
    let words = ["buffer", "socket", "parse", "error", "thread", "signal", "format", "stream", "open", "read"];
    // Warm: let the ranking index build, then time queries in a row.
    run("warm up");
    let deadline = Instant::now() + Duration::from_secs(300);
    while env.json(&["status", "--project", root.to_str().unwrap()])["project"]["index"]["ranking_index"] != "ready" {
        assert!(Instant::now() < deadline, "ranking index never ready");
        run("warm up");
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut warm: Vec<Duration> = (0..ROUNDS).map(|i| run(words[i % words.len()])).collect();
    let mut cold = Vec::new();
    for i in 0..ROUNDS {
        // Released once idle for 2 s (checked every second), and not rebuilding.
        std::thread::sleep(Duration::from_secs(4));
        let status = env.json(&["status", "--project", root.to_str().unwrap()]);
        let warm_bytes = status["projects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["root"] == root.to_str().unwrap())
            .unwrap()["warm_bytes"]
            .clone();
        if warm_bytes != 0 {
            std::thread::sleep(Duration::from_secs(10));
        }
        cold.push(run(words[(i + 3) % words.len()]));
    }
    (median(&mut warm), median(&mut cold))
}

/// Cold index of a fresh copy of /usr/include, and how long until the static tier covers it.
fn large_tree(env: &Env) {
    let root = env.dir.path().join("large");
    copy_tree(Path::new("/usr/include"), &root, &[], &[]);
    let d = env.start_daemon();
    let started = Instant::now();
    let out = env.run_within(None, &["index", root.to_str().unwrap()], Duration::from_secs(1800));
    assert!(out.status.success(), "{}", describe(&out));
    let indexed = started.elapsed();
    let t = Instant::now();
    let first = env.run_within(None, &["search", QUERY, "--project", root.to_str().unwrap()], Duration::from_secs(60));
    let first_search = t.elapsed();
    assert!(first.status.success());
    // Polled gently with `embed` (its coverage counts cost the daemon a little CPU each).
    let mut covered = None;
    while covered.is_none() {
        let e: Value = env.json(&["embed", "--project", root.to_str().unwrap()]);
        if e["embedded"].as_u64().is_some() && e["embedded"] == e["embeddable"] && e["running"] == false {
            covered = Some(started.elapsed());
        }
        assert!(started.elapsed() < Duration::from_secs(3600), "embedding never finished");
        std::thread::sleep(Duration::from_millis(1000));
    }
    let covered = covered.unwrap();
    let pid = d.child.id();
    let cpu = || proc_cpu_ms(pid);
    std::thread::sleep(Duration::from_secs(5));
    let before = cpu();
    std::thread::sleep(Duration::from_secs(30));
    let idle_cpu = cpu() - before;
    println!("## A large tree: a copy of /usr/include indexed from scratch\n");
    println!(
        "| cold index | first search (whole process) | static tier covers it (from the start) | ratio to the index time | daemon CPU over 30 s idle after |"
    );
    println!("|---|---|---|---|---|");
    println!(
        "| {:.1} s | {} | {:.1} s | {:.2}x | {idle_cpu} ms |",
        indexed.as_secs_f64(),
        ms(first_search),
        covered.as_secs_f64(),
        covered.as_secs_f64() / indexed.as_secs_f64()
    );
    stop(d);
}

/// User + system CPU time of a process, in ms.
fn proc_cpu_ms(pid: u32) -> u64 {
    let ticks = booger_tests::cpu_ticks(pid);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    ticks * 1000 / hz
}

fn stop(mut d: DaemonProc) {
    d.signal(libc::SIGTERM);
    d.wait();
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn mb(kb: u64) -> String {
    format!("{:.0} MB", kb as f64 / 1024.0)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
