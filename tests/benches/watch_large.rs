//! The live index on a large tree: quiet while files are read, exact and cheap while they
//! change.
//!
//! `cargo bench -p booger-tests --bench watch_large` (needs python3 and git; 20-30 minutes on
//! two cores, most of it the first index and its embeddings). The tree: copies of
//! /usr/include, the cargo registry's sources and the standard library's .py files (30k+
//! files) in one git repository, indexed, embedded and searched by a real daemon. Then:
//! - a full read: `rg` (or `grep -r` where rg is missing) over the tree, changing nothing:
//!   events the daemon received, batches, re-walks, re-surveys, daemon CPU;
//! - edits: a unique function appended to a .py file, then `search` until it is found, 100 times
//!   (100 ms apart): p50/p95/max, how often the first answer had it, RSS per edit;
//! - a branch switch: `git checkout` of a branch rewriting 1,000 files, until the watch is
//!   idle, against indexing just those files from scratch in the same run; then `booger index`
//!   must find nothing left to do;
//! - idle: daemon CPU over 30 s of nothing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use booger_tests::live::{
    cpu_ticks, edit_until_found, ms, pct, search, session, status, wait_settled, wait_until, watch,
};
use booger_tests::{Env, Raw, describe, git, proc_status_kb};
use serde_json::Value;

const EDITS: usize = 100;
const SWITCHED: usize = 1000;
const IDLE: Duration = Duration::from_secs(30);

fn main() {
    let env = Env::new();
    let root = env.dir.path().join("large");
    let t = Instant::now();
    let files = build_tree(&root);
    eprintln!("tree: {} files in {:.0} s", count_files(&root), t.elapsed().as_secs_f64());
    let daemon = env.start_daemon();
    let pid = daemon.child.id();
    let t = Instant::now();
    let out = env.run_within(None, &["index", root.to_str().unwrap()], Duration::from_secs(3600));
    assert!(out.status.success(), "{}", describe(&out));
    let indexed = t.elapsed();
    let mut conn = session(&env, &root);
    search(&mut conn, "warm up");
    wait_until_within(Duration::from_secs(3600), || ready(&mut conn));
    wait_settled(&mut conn);
    let facts = status(&mut conn);
    println!("# booger live index on a large tree\n");
    println!(
        "{} files, {} chunks; first index {:.0} s; {} directories watched.\n",
        facts["project"]["index"]["files"],
        facts["project"]["index"]["chunks"],
        indexed.as_secs_f64(),
        watch(&mut conn)["watched_dirs"]
    );
    full_read(&mut conn, &root, pid);
    edits(&mut conn, &files, pid);
    switch(&env, &mut conn, &root);
    idle(&mut conn, pid);
    drop(daemon);
}

/// The tree, committed on `main`, with a `feature` branch that rewrites [`SWITCHED`] files;
/// returns the .py files, which the edits append to.
fn build_tree(root: &Path) -> Vec<PathBuf> {
    booger_tests::copy_large_tree(root);
    // Files from /usr/include and the standard library: the crates carry .gitignore files of
    // their own, which may leave a file out of the index.
    let mut code = Vec::new();
    list(&root.join("include"), &mut code);
    list(&root.join("python"), &mut code);
    code.retain(|p| {
        p.extension().is_some_and(|x| x == "c" || x == "h" || x == "py")
            && std::fs::metadata(p).is_ok_and(|m| m.len() < 256 * 1024)
    });
    code.sort();
    assert!(code.len() > SWITCHED * 4, "too few source files: {}", code.len());
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["-c", "core.compression=0", "add", "-A"]);
    git(root, &["commit", "-q", "-m", "main"]);
    git(root, &["checkout", "-q", "-b", "feature"]);
    // Every k-th source file takes the next one's content: real code, different chunks.
    let step = code.len() / SWITCHED;
    let chosen: Vec<PathBuf> = code.iter().step_by(step).take(SWITCHED).cloned().collect();
    let contents: Vec<Vec<u8>> = chosen.iter().map(|f| std::fs::read(f).unwrap()).collect();
    for (i, f) in chosen.iter().enumerate() {
        std::fs::write(f, &contents[(i + 1) % contents.len()]).unwrap();
    }
    git(root, &["-c", "core.compression=0", "commit", "-q", "-am", "feature"]);
    git(root, &["checkout", "-q", "main"]);
    code.retain(|p| p.extension().is_some_and(|x| x == "py") && !chosen.contains(p));
    code
}

fn full_read(conn: &mut Raw, root: &Path, pid: u32) {
    let before = counters(conn);
    let cpu0 = cpu_ticks(pid);
    let t = Instant::now();
    let reader = match Command::new("rg").args(["-c", "--no-ignore", "-uuu", "zq_never_there_qz"]).arg(root).output() {
        Ok(_) => "rg -uuu",
        Err(_) => {
            Command::new("grep").args(["-r", "-c", "zq_never_there_qz"]).arg(root).output().unwrap();
            "grep -r"
        }
    };
    let read = t.elapsed();
    // Whatever the read caused has had time to arrive and be applied; the daemon's CPU is
    // read before `status` is asked anything (answering it costs CPU too).
    std::thread::sleep(Duration::from_secs(2));
    let cpu = cpu_ticks(pid) - cpu0;
    wait_settled(conn);
    let after = counters(conn);
    let d = |k: &str| after[k] - before[k];
    println!("## A full read of the tree (`{reader}`), nothing changed\n");
    println!(
        "| read time | events received | overflows | batches applied | files re-indexed | whole walks | re-surveys | daemon CPU |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| {} | {} | {} | {} | {} | {} | {} | {:.2} s |\n",
        ms(read),
        d("events"),
        d("overflows"),
        d("batches"),
        d("changed"),
        d("whole_walks"),
        d("resurveys"),
        cpu as f64 / ticks_per_s()
    );
}

fn edits(conn: &mut Raw, files: &[PathBuf], pid: u32) {
    // Anonymous memory (the heap: the daemon's own) and file pages mapped (the ranking
    // index's segment as queries touch it: the kernel's page cache, reclaimable), sampled
    // after every edit: single samples swing with whatever a thread had just allocated.
    let rss = || (proc_status_kb(pid, "RssAnon:"), proc_status_kb(pid, "RssFile:"));
    let before = rss();
    let mut samples = Vec::new();
    // What the daemon says it holds: SQLite's page caches and the warm ranking index.
    let held = |conn: &mut Raw| {
        let m = status(conn)["memory"].clone();
        (m["sqlite_bytes"].as_u64().unwrap_or(0) / 1024, m["warm_bytes"].as_u64().unwrap_or(0) / 1024)
    };
    let held_before = held(conn);
    let mut held_samples = Vec::new();
    let mut times = Vec::new();
    let mut first_fresh = 0;
    for i in 0..EDITS {
        let token = format!("large_token_{i}_{}", std::process::id());
        let file = &files[(i * 7919) % files.len()];
        let (took, fresh) = edit_until_found(conn, file, &token);
        times.push(took);
        first_fresh += usize::from(fresh);
        samples.push(rss());
        held_samples.push(held(conn));
        std::thread::sleep(Duration::from_millis(100));
    }
    times.sort();
    println!("## Edits: append a unique function to a file, then `search` for it ({EDITS} edits)\n");
    println!("| p50 | p95 | max | first answer already fresh |");
    println!("|---|---|---|---|");
    println!(
        "| {} | {} | {} | {first_fresh}/{EDITS} |\n",
        ms(pct(&times, 50)),
        ms(pct(&times, 95)),
        ms(*times.last().unwrap()),
    );
    let mb = |kb: u64| kb as f64 / 1024.0;
    let median = |part: &[(u64, u64)], pick: Pick| {
        let mut v: Vec<u64> = part.iter().map(pick).collect();
        v.sort();
        v[v.len() / 2]
    };
    println!("| RSS (MB) | before | after edit 1 | median, edits 2-11 | median, last 10 edits | max |");
    println!("|---|---|---|---|---|---|");
    let rows: [(&str, Pick, Sample, &[Sample]); 4] = [
        ("anonymous (heap)", |s| s.0, before, &samples),
        ("file pages mapped (ranking segment)", |s| s.1, before, &samples),
        ("SQLite's page caches (in the heap)", |s| s.0, held_before, &held_samples),
        ("warm ranking index (in the heap)", |s| s.1, held_before, &held_samples),
    ];
    for (name, pick, first, all) in rows {
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            mb(pick(&first)),
            mb(pick(&all[0])),
            mb(median(&all[1..11], pick)),
            mb(median(&all[EDITS - 10..], pick)),
            mb(all.iter().map(pick).max().unwrap()),
        );
    }
    println!();
}

/// Two figures sampled together, in KB.
type Sample = (u64, u64);
/// One of them.
type Pick = fn(&Sample) -> u64;

fn switch(env: &Env, conn: &mut Raw, root: &Path) {
    wait_settled(conn);
    let before = watch(conn)["batches_applied"].as_u64().unwrap();
    let started = Instant::now();
    git(root, &["checkout", "-q", "feature"]);
    let git_done = started.elapsed();
    wait_until(|| watch(conn)["batches_applied"].as_u64().unwrap() > before);
    let consistent = wait_settled(conn) - started;
    let batches = watch(conn)["batches_applied"].as_u64().unwrap() - before;
    let changed: Vec<String> =
        git(root, &["diff", "--name-only", "main", "feature"]).lines().map(str::to_owned).collect();

    // The same files indexed from scratch by the same daemon.
    let scratch = env.dir.path().join("scratch");
    for f in &changed {
        let dst = scratch.join(f);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(root.join(f), dst).unwrap();
    }
    let s = Instant::now();
    let out = env.run_within(None, &["index", scratch.to_str().unwrap()], Duration::from_secs(600));
    assert!(out.status.success(), "{}", describe(&out));
    let from_scratch = s.elapsed();
    // Nothing stale: a full reconcile with the disk finds nothing left to change.
    let out = env.run_within(None, &["index", root.to_str().unwrap(), "--json"], Duration::from_secs(600));
    assert!(out.status.success(), "{}", describe(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let report = &answer["report"];
    let left = report["parsed"].as_u64().unwrap_or(u64::MAX) + report["deleted"].as_u64().unwrap_or(u64::MAX);
    println!("## Branch switch: `git checkout` rewriting {} files\n", changed.len());
    println!(
        "| git checkout | until the watch is idle | batches | the same files from scratch | ratio | left for `booger index` |"
    );
    println!("|---|---|---|---|---|---|");
    println!(
        "| {} | {} | {batches} | {} | {:.2}x | {} |\n",
        ms(git_done),
        ms(consistent),
        ms(from_scratch),
        consistent.as_secs_f64() / from_scratch.as_secs_f64(),
        if left == 0 { "nothing".to_owned() } else { format!("{left} files ({report})") }
    );
}

fn idle(conn: &mut Raw, pid: u32) {
    wait_settled(conn);
    wait_until_within(Duration::from_secs(1800), || ready(conn));
    std::thread::sleep(Duration::from_secs(2));
    let cpu0 = cpu_ticks(pid);
    std::thread::sleep(IDLE);
    let cpu = cpu_ticks(pid) - cpu0;
    println!("## Idle\n");
    println!("| daemon CPU over {} s | RSS |", IDLE.as_secs());
    println!("|---|---|");
    println!("| {:.2} s | {} MB |", cpu as f64 / ticks_per_s(), proc_status_kb(pid, "VmRSS:") / 1024);
}

/// The ranking index is built and the embeddings are complete: background work is done.
fn ready(conn: &mut Raw) -> bool {
    let index = &status(conn)["project"]["index"];
    let e = &index["embeddings"];
    index["ranking_index"] == "ready" && (e.is_null() || (e["running"] == false && e["embedded"] == e["embeddable"]))
}

/// The counters a full read might move.
fn counters(conn: &mut Raw) -> std::collections::HashMap<&'static str, i64> {
    let s = status(conn);
    let w = &s["project"]["index"]["watch"];
    let n = |v: &Value| v.as_i64().unwrap_or(0);
    [
        ("events", n(&s["watches"]["events"])),
        ("overflows", n(&s["watches"]["overflows"])),
        ("batches", n(&w["batches_applied"])),
        ("changed", n(&w["files_changed"])),
        ("whole_walks", n(&w["whole_walks"])),
        ("resurveys", n(&w["resurveys"])),
    ]
    .into_iter()
    .collect()
}

fn wait_until_within(limit: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !f() {
        assert!(Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn list(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != ".git" {
                list(&p, out);
            }
        } else {
            out.push(p);
        }
    }
}

fn count_files(root: &Path) -> usize {
    let mut v = Vec::new();
    list(root, &mut v);
    v.len()
}

fn ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}
