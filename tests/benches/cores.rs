//! What more cores buy a cold index, and where the serial time goes.
//!
//! `cargo bench -p booger-tests --bench cores` (needs `taskset`, from util-linux). The Python
//! standard library is copied once; then for 1, 2, 4, ... cores up to all this machine has, a fresh
//! daemon is started on that many CPUs only (`taskset -c`, one thread of each physical core first:
//! it sizes its workers by the CPUs it may use, as on a machine with that many) and indexes the
//! copy cold. Printed: the index's wall time (the `booger index` call, the ranking index made
//! current included), the daemon's CPU-seconds over it, and the busy time of the stages that run on
//! one thread, from the run's report: the walk, the single writer, the finish (Merkle root,
//! checkpoint), the ranking index's builder (on its own thread while the files are written) and
//! making the ranking index current after the writes (waiting for that builder, writing its base).
//! The serial share counts the longer of the writer and the builder (they run side by side), the
//! walk, the finish and what comes after the writes. Goals (issue 63, on 2 cores): the serial
//! stages ≤ 20% of the 2-core index time; 2 cores ≥ 1.7x faster than 1 at CPU-seconds ≤ 1.3x. On a
//! machine with 16: all cores ≥ 4x faster than 2, CPU-seconds ≤ 1.3x. `BENCH_CORES=1,2` picks
//! counts; `BENCH_TREE=DIR` indexes that tree (copied whole) instead of the standard library, for a
//! machine with many cores, where the standard library is over in a second.

use std::time::{Duration, Instant};

use booger_tests::{Env, copy_tree, cpu_ticks, describe};
use serde_json::Value;

struct Row {
    cores: usize,
    wall: f64,
    cpu: f64,
    stages: Value,
}

fn main() {
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let counts: Vec<usize> = match std::env::var("BENCH_CORES") {
        Ok(list) => list.split(',').filter_map(|c| c.trim().parse().ok()).filter(|&c| c >= 1 && c <= all).collect(),
        Err(_) => std::iter::successors(Some(1), |c| Some(c * 2)).take_while(|&c| c < all).chain([all]).collect(),
    };
    let corpus = Env::new();
    let src = corpus.dir.path().join("tree");
    let tree = std::env::var_os("BENCH_TREE").filter(|t| !t.is_empty());
    match &tree {
        Some(dir) => copy_tree(std::path::Path::new(dir), &src, &[], &[]),
        None => copy_tree(&booger_tests::python_stdlib(), &src, &["py"], &["site-packages"]),
    }
    let what = tree.as_ref().map_or("the Python standard library".to_owned(), |t| format!("`{}`", t.to_string_lossy()));
    println!("## Cores (a cold `booger index` of {what}, {all} cores here)\n");
    println!(
        "| cores | index s | CPU-s | speed-up vs 1 | CPU vs 1 | walk | writer busy | ranking builder (alongside) | finish | ranking after the writes | serial share |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut rows: Vec<Row> = Vec::new();
    for &cores in &counts {
        let env = Env::new();
        let root = env.dir.path().join("tree");
        copy_tree(&src, &root, &[], &[]);
        // Just copied: the page cache holds the files for every round alike.
        let daemon = env.start_daemon_on_cpus(&booger_tests::cpu_list(cores));
        let pid = daemon.child.id();
        let before = cpu_ticks(pid);
        let t = Instant::now();
        let out = env.run_within(None, &["index", root.to_str().unwrap(), "--json"], Duration::from_secs(1800));
        let wall = t.elapsed().as_secs_f64();
        let cpu = (cpu_ticks(pid) - before) as f64 / 100.0;
        assert!(out.status.success(), "{}", describe(&out));
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        let stages = answer["report"]["stages"].clone();
        let ms = |k: &str| stages[k].as_f64().unwrap_or(0.0) / 1000.0;
        let serial = serial_seconds(&stages);
        let first = rows.first().map_or((wall, cpu), |r| (r.wall, r.cpu));
        println!(
            "| {cores} | {wall:.2} | {cpu:.2} | {:.2}x | {:.2}x | {:.2} s | {:.2} s | {:.2} s | {:.2} s | {:.2} s | {:.0}% |",
            first.0 / wall,
            cpu / first.1,
            ms("walk_ms"),
            ms("write_ms"),
            ms("ranking_alongside_ms"),
            ms("finish_ms"),
            ms("ranking_ms") + ms("ranking_written_ms"),
            100.0 * serial / wall
        );
        rows.push(Row { cores, wall, cpu, stages });
        drop(daemon);
    }
    println!("\nGoals (issue 63):\n");
    let at = |n: usize| rows.iter().find(|r| r.cores == n);
    if let Some(two) = at(2) {
        let serial = serial_seconds(&two.stages) / two.wall;
        println!("- serial stages ≤ 20% of the 2-core index ({:.0}%): {}", serial * 100.0, verdict(serial <= 0.20));
        if let Some(one) = at(1) {
            let (speed, cpu) = (one.wall / two.wall, two.cpu / one.cpu);
            println!(
                "- 2 cores ≥ 1.7x faster than 1 ({speed:.2}x) at CPU-seconds ≤ 1.3x ({cpu:.2}x): {}",
                verdict(speed >= 1.7 && cpu <= 1.3)
            );
        }
        if let Some(most) = rows.last().filter(|r| r.cores >= 16) {
            let (speed, cpu) = (two.wall / most.wall, most.cpu / two.cpu);
            println!(
                "- {} cores ≥ 4x faster than 2 ({speed:.2}x) at CPU-seconds ≤ 1.3x ({cpu:.2}x): {}",
                most.cores,
                verdict(speed >= 4.0 && cpu <= 1.3)
            );
        }
    }
}

/// Seconds of a run on one thread at a time: the walk, the longer of the writer and the
/// ranking builder beside it, the finish, and the ranking index made current after the writes.
fn serial_seconds(stages: &Value) -> f64 {
    let ms = |k: &str| stages[k].as_f64().unwrap_or(0.0) / 1000.0;
    ms("walk_ms")
        + ms("write_ms").max(ms("ranking_alongside_ms"))
        + ms("finish_ms")
        + ms("ranking_ms")
        + ms("ranking_written_ms")
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}
