//! Indexing speed against its floors, on corpora every machine has.
//!
//! `cargo bench -p booger-tests --bench index` copies each corpus into a temp dir (so every
//! run starts from the same files), then measures in one run:
//! - floor 1, read: walk and read every file (what `cat` would cost);
//! - floor 2, parse: tree-sitter parse of every file on all cores, no chunking, no store;
//! - chunk: parse + chunk on all cores, no store;
//! - booger: `booger index` through a real daemon, full; then a no-change re-index
//!   (median of 5, once the background work the run started, the ranking segment, grep's
//!   trigram rows and the embeddings, is done); the daemon's peak RSS (that work included); the index's size on
//!   disk and the ranking segment's share. "grep index ready": when status first said the
//!   trigram rows were all written (polled every 200 ms, counted from the run's start).
//!
//! Corpora: the Python standard library (.py files, site-packages excluded, as the eval set
//! defines it), /usr/include, and ~/.cargo/registry/src if present. `BENCH_CORPORA` picks some
//! (`stdlib,include,cargo`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use booger_tests::{Env, copy_tree, describe};
use boogerd::engine::index::walk;
use boogerd::source::{chunk, lang::Lang};

struct Corpus {
    name: &'static str,
    src: PathBuf,
    /// Only files with these extensions (empty: everything).
    exts: &'static [&'static str],
    /// Folders left out of the copy.
    skip: &'static [&'static str],
}

fn main() {
    let wanted = std::env::var("BENCH_CORPORA").unwrap_or_else(|_| "stdlib,include,cargo".to_owned());
    let stdlib = booger_tests::python_stdlib();
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_default());
    let cargo_src = std::env::var("CARGO_HOME").map(PathBuf::from).unwrap_or(home.join(".cargo")).join("registry/src");
    let corpora = [
        Corpus { name: "stdlib", src: stdlib, exts: &["py"], skip: &["site-packages"] },
        Corpus { name: "include", src: PathBuf::from("/usr/include"), exts: &[], skip: &[] },
        Corpus { name: "cargo", src: cargo_src, exts: &[], skip: &[] },
    ];
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    println!("{workers} cores; medians where repeated\n");
    println!(
        "| corpus | files | MB | chunks | read floor | parse floor ({workers} threads) | parse+chunk | booger index (full) | grep index ready | vs parse floor | files/s | MB/s | no-change re-index | on disk (x source) | of which ranking segment | daemon peak RSS |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for c in corpora.iter().filter(|c| wanted.split(',').any(|w| w == c.name)) {
        if !c.src.is_dir() {
            println!("| {} | (missing: {}) |", c.name, c.src.display());
            continue;
        }
        run(c, workers);
    }
}

fn run(c: &Corpus, workers: usize) {
    let env = Env::new();
    let root = env.dir.path().join(c.name);
    copy_tree(&c.src, &root, c.exts, c.skip);
    // Warm the page cache so every measurement sees the same disk state.
    let files = walk::walk(&root).files;
    let bytes: u64 = files.iter().map(|f| f.size).sum();

    let t = Instant::now();
    let mut read_total = 0usize;
    for f in &files {
        read_total += std::fs::read(&f.abs).map_or(0, |b| b.len());
    }
    let read_floor = t.elapsed();
    assert!(read_total as u64 <= bytes + 1);

    let parse_floor = parallel(&files, workers, |path, bytes| {
        let lang = Lang::detect(path, bytes);
        chunk::parse::parse_only(lang, bytes);
    });
    let chunk_time = parallel(&files, workers, |path, bytes| {
        let big = bytes.len() as u64 > boogerd::source::DEFAULT_MAX_FILE_BYTES;
        std::hint::black_box(chunk::chunk_file(path, bytes, big));
    });

    let daemon = env.start_daemon();
    let t = Instant::now();
    let out = env.run_within(None, &["index", root.to_str().unwrap(), "--json"], Duration::from_secs(1800));
    let full = t.elapsed();
    assert!(out.status.success(), "{}", describe(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Background work the run started (the ranking segment, embeddings) finishes first, so
    // the no-change runs measure themselves.
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut grep_ready = None;
    loop {
        let s = env.json(&["status", root.to_str().unwrap()]);
        let index = &s["project"]["index"];
        let e = &index["embeddings"];
        let embedded = e.is_null() || (e["running"] == false && e["embedded"] == e["embeddable"]);
        let grep = index["grep_index"]["ready"] == true;
        if grep && grep_ready.is_none() {
            grep_ready = Some(t.elapsed());
        }
        if (index["ranking_index"] == "ready" && embedded && grep) || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut again = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let out = env.run(&["index", root.to_str().unwrap(), "--json"]);
        again.push(t.elapsed());
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["report"]["parsed"], 0, "a no-change run parsed files");
    }
    again.sort();
    let status = env.json(&["status", root.to_str().unwrap()]);
    let disk = status["project"]["index"]["size_on_disk"].as_u64().unwrap_or(0);
    let segment = segment_bytes(Path::new(status["project"]["index"]["dir"].as_str().unwrap_or("")));
    let rss = booger_tests::proc_status_kb(daemon.child.id(), "VmHWM:");
    let mb = bytes as f64 / 1e6;
    println!(
        "| {} | {} | {:.1} | {} | {} | {} | {} | {} | {} | {:.2}x | {:.0} | {:.1} | {} | {:.1} MB ({:.2}x) | {:.1} MB | {:.0} MB |",
        c.name,
        files.len(),
        mb,
        report["report"]["chunks_written"],
        secs(read_floor),
        secs(parse_floor),
        secs(chunk_time),
        secs(full),
        grep_ready.map_or("(not ready)".to_owned(), |g| format!("after {}", secs(g))),
        full.as_secs_f64() / parse_floor.as_secs_f64(),
        files.len() as f64 / full.as_secs_f64(),
        mb / full.as_secs_f64(),
        ms(again[again.len() / 2]),
        disk as f64 / 1e6,
        disk as f64 / bytes as f64,
        segment as f64 / 1e6,
        rss as f64 / 1024.0,
    );
}

/// Bytes of the ranking segment files in an index folder.
fn segment_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".seg"))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Runs `f` over every file's bytes on `workers` threads; returns the wall time.
fn parallel(files: &[walk::Walked], workers: usize, f: impl Fn(&Path, &[u8]) + Sync) -> Duration {
    let next = AtomicUsize::new(0);
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                while let Some(file) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Ok(bytes) = std::fs::read(&file.abs)
                        && !walk::looks_binary(&bytes)
                    {
                        f(Path::new(&file.rel), &bytes);
                    }
                }
            });
        }
    });
    t.elapsed()
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}
