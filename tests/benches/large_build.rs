//! Building a large tree within a laptop's means: how long every default tier takes beside
//! the index itself, the daemon's peak memory from a cold start to idle, and the index's size
//! beside the source.
//!
//! `cargo bench -p booger-tests --bench large_build` (release; 10-20 minutes on two cores).
//! The tree: `BOOGER_LARGE_TREE` when set (a u-boot or kernel checkout), else copies of
//! /usr/include, the cargo registry's sources and the standard library's .py files, the
//! largest tree every machine here has. A fresh daemon indexes it (`booger index`, timed),
//! then `status` is polled every second until the ranking index, the trigram rows and the
//! embeddings are done; the kernel's high-water mark (`VmHWM`) is the peak RSS.

use std::path::Path;
use std::time::{Duration, Instant};

use booger_tests::live::{session, status};
use booger_tests::{Env, describe, proc_status_kb};
use serde_json::Value;

fn main() {
    let env = Env::new();
    let root = booger_tests::large_tree(env.dir.path());
    let daemon = env.start_daemon();
    let pid = daemon.child.id();
    let t = Instant::now();
    // RSS every 250 ms: when the peak comes says which tier makes it.
    let samples = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(f64, u64)>::new()));
    let sampling = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let (samples, sampling) = (samples.clone(), sampling.clone());
        std::thread::spawn(move || {
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                let rss = proc_status_kb(pid, "VmRSS:");
                samples.lock().unwrap().push((t.elapsed().as_secs_f64(), rss));
                std::thread::sleep(Duration::from_millis(250));
            }
        })
    };
    let out = env.run_within(None, &["index", root.to_str().unwrap(), "--json"], Duration::from_secs(3600));
    assert!(out.status.success(), "{}", describe(&out));
    let indexed = t.elapsed();
    let hwm_index = proc_status_kb(pid, "VmHWM:");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut conn = session(&env, &root);
    // The tiers, each when `status` first says it is done.
    let (mut ranking, mut grams, mut embeddings) = (None, None, None);
    let deadline = Instant::now() + Duration::from_secs(3600);
    let facts = loop {
        let s = status(&mut conn);
        let index = &s["project"]["index"];
        let e = &index["embeddings"];
        let now = t.elapsed();
        if index["ranking_index"] == "ready" {
            ranking.get_or_insert(now);
        }
        if index["grep_index"]["ready"] == true {
            grams.get_or_insert(now);
        }
        if e.is_null() || (e["running"] == false && e["embedded"] == e["embeddable"]) {
            embeddings.get_or_insert(now);
        }
        if ranking.is_some() && grams.is_some() && embeddings.is_some() {
            break s;
        }
        assert!(Instant::now() < deadline, "the tiers never finished: {index}");
        std::thread::sleep(Duration::from_secs(1));
    };
    std::thread::sleep(Duration::from_secs(5));
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    sampler.join().unwrap();
    let index = &facts["project"]["index"];
    let source = index["source_bytes"].as_u64().unwrap_or(0);
    let disk = index["size_on_disk"].as_u64().unwrap_or(0);
    let tree = tree_bytes(&root);
    let all = [ranking, grams, embeddings].into_iter().flatten().max().unwrap();
    let mb = |b: u64| b as f64 / 1e6;
    println!("# building a large tree\n");
    println!(
        "{} files found, {} indexed ({} set aside, {} skipped), {} chunks; {:.0} MB of indexed source in a {:.0} MB tree.\n",
        report["report"]["files"],
        index["files"],
        report["report"]["set_aside_total"],
        report["report"]["skipped"].as_array().map_or(0, Vec::len),
        index["chunks"],
        mb(source),
        mb(tree),
    );
    println!("| index | ranking index | trigram rows | embeddings | all tiers | all / index |");
    println!("|---|---|---|---|---|---|");
    let s = |d: Option<Duration>| d.map_or("-".to_owned(), |d| format!("{:.1} s", d.as_secs_f64()));
    println!(
        "| {:.1} s | {} | {} | {} | {:.1} s | **{:.2}x** |\n",
        indexed.as_secs_f64(),
        s(ranking),
        s(grams),
        s(embeddings),
        all.as_secs_f64(),
        all.as_secs_f64() / indexed.as_secs_f64()
    );
    println!("| peak RSS during the index | peak RSS to idle | RSS idle | index on disk | / indexed source | / tree |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| {:.0} MB | **{:.0} MB** | {:.0} MB | {:.0} MB | **{:.2}x** | {:.2}x |",
        hwm_index as f64 / 1024.0,
        proc_status_kb(pid, "VmHWM:") as f64 / 1024.0,
        proc_status_kb(pid, "VmRSS:") as f64 / 1024.0,
        mb(disk),
        disk as f64 / source.max(1) as f64,
        disk as f64 / tree.max(1) as f64,
    );
    let samples = samples.lock().unwrap();
    let (at, peak) = samples.iter().copied().fold((0.0, 0), |m, (at, kb)| if kb > m.1 { (at, kb) } else { m });
    println!("\nRSS peak (sampled every 250 ms) {:.0} MB at {at:.0} s; RSS at each tier's end:", peak as f64 / 1024.0);
    for (what, when) in
        [("index", Some(indexed)), ("ranking index", ranking), ("trigram rows", grams), ("embeddings", embeddings)]
    {
        let Some(when) = when else { continue };
        let max = samples.iter().filter(|(s, _)| *s <= when.as_secs_f64()).map(|(_, kb)| *kb).max().unwrap_or(0);
        println!("- {what} ({:.0} s): max so far {:.0} MB", when.as_secs_f64(), max as f64 / 1024.0);
    }
    drop(daemon);
}

/// Bytes of every regular file under `dir`, `.git` aside.
fn tree_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    for e in entries.filter_map(Result::ok) {
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() && e.file_name() != ".git" {
            total += tree_bytes(&e.path());
        } else if t.is_file() {
            total += e.metadata().map_or(0, |m| m.len());
        }
    }
    total
}
