//! The live index: freshness after an edit, a branch switch, and the cost of watching idle.
//!
//! `cargo bench -p booger-tests --bench watch` (needs python3 and git). On a copy of the
//! Python standard library, with a real daemon:
//! - freshness: append a function with a unique name to a file, then `search` for it at once
//!   on an open connection, repeating until it is found; 60 edits, p50/p95/max, and how often
//!   the very first answer already had it (read-your-writes);
//! - branch switch: `git checkout` of a branch that rewrites 2,000 files, timed until the
//!   watcher has applied everything, against a full `booger index` of just those 2,000 files
//!   in the same run; then the live index is checked against a fresh full index;
//! - idle: with the standard library, /usr/include and booger's own sources watched, daemon
//!   CPU time and context switches over 60 s of nothing changing, and its RSS.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use booger_tests::live::{
    context_switches, cpu_ticks, edit_until_found, ms, pct, search, session, status, wait_settled, wait_until, watch,
};
use booger_tests::{Env, copy_tree, describe, git};

const EDITS: usize = 60;
const STORM_FILES: usize = 2000;
const IDLE: Duration = Duration::from_secs(60);

fn main() {
    let env = Env::new();
    let stdlib = env.dir.path().join("stdlib");
    copy_tree(&booger_tests::python_stdlib(), &stdlib, &["py"], &["site-packages", "__pycache__"]);
    let mut daemon = env.start_daemon();
    index(&env, &stdlib);
    println!("# booger watch benchmark\n");
    freshness(&env, &stdlib);
    storm(&env, &stdlib);
    // A fresh daemon for the idle figures: three projects, reconciled at start.
    env.json(&["projects", "remove", "storm"]);
    env.json(&["projects", "remove", "scratch"]);
    daemon.signal(libc::SIGTERM);
    daemon.wait();
    let daemon = env.start_daemon();
    idle(&env, &stdlib, daemon.child.id());
}

fn freshness(env: &Env, root: &Path) {
    let mut conn = session(env, root);
    // Warm: the ranking index exists, as it does for a project in use.
    search(&mut conn, "warm up");
    wait_until(|| status(&mut conn)["project"]["index"]["ranking_index"] == "ready");
    let files: Vec<PathBuf> = python_files(root);
    let mut times = Vec::new();
    let mut first_fresh = 0;
    for i in 0..EDITS {
        let token = format!("fresh_token_{i}_{}", std::process::id());
        let file = &files[(i * 97) % files.len()];
        let (took, fresh) = edit_until_found(&mut conn, file, &token);
        times.push(took);
        first_fresh += usize::from(fresh);
        // Agents pause between edits; so do we, so each edit is its own batch.
        std::thread::sleep(Duration::from_millis(100));
    }
    times.sort();
    println!("## Freshness: write a unique function, then `search` for it ({EDITS} edits, standard library)\n");
    println!("| p50 | p95 | max | first answer already fresh |");
    println!("|---|---|---|---|");
    println!(
        "| {} | {} | {} | {first_fresh}/{EDITS} |\n",
        ms(pct(&times, 50)),
        ms(pct(&times, 95)),
        ms(*times.last().unwrap())
    );
}

fn storm(env: &Env, stdlib: &Path) {
    // Two copies of the standard library: 3,580 files, 2,000 of which the branch rewrites.
    let repo = env.dir.path().join("storm");
    copy_tree(stdlib, &repo.join("a"), &["py"], &[".booger"]);
    copy_tree(stdlib, &repo.join("b"), &["py"], &[".booger"]);
    let files = python_files(&repo);
    assert!(files.len() >= STORM_FILES, "need {STORM_FILES} files, have {}", files.len());
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "main"]);
    git(&repo, &["checkout", "-q", "-b", "feature"]);
    // The feature branch rewrites 2,000 files with other real code (each takes the next
    // file's content), so every one of them parses to different chunks.
    let contents: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let changed: Vec<&PathBuf> = files.iter().take(STORM_FILES).collect();
    for (i, f) in changed.iter().enumerate() {
        std::fs::write(f, &contents[(i + 1) % contents.len()]).unwrap();
    }
    git(&repo, &["commit", "-q", "-am", "feature"]);
    git(&repo, &["checkout", "-q", "main"]);
    index(env, &repo);
    let mut conn = session(env, &repo);
    search(&mut conn, "warm up");
    wait_until(|| status(&mut conn)["project"]["index"]["ranking_index"] == "ready");
    wait_settled(&mut conn);
    let before = watch(&mut conn)["batches_applied"].as_u64().unwrap();

    let started = Instant::now();
    git(&repo, &["checkout", "-q", "feature"]);
    let git_done = started.elapsed();
    wait_until(|| watch(&mut conn)["batches_applied"].as_u64().unwrap() > before);
    let consistent = wait_settled(&mut conn) - started;
    let batches = watch(&mut conn)["batches_applied"].as_u64().unwrap() - before;

    // The same 2,000 files indexed from scratch, same daemon, same run.
    let scratch = env.dir.path().join("scratch");
    for f in &changed {
        let dst = scratch.join(f.strip_prefix(&repo).unwrap());
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(f, dst).unwrap();
    }
    let s = Instant::now();
    index(env, &scratch);
    let from_scratch = s.elapsed();

    // Check: the live index equals a fresh full index of the checked-out tree.
    let live_root = status(&mut conn)["project"]["index"]["root_hash"].as_str().unwrap().to_owned();
    let copy = env.dir.path().join("storm-copy");
    copy_tree(&repo, &copy, &[], &[".booger", ".git"]);
    let store = boogerd::store::Store::open(&env.dir.path().join("storm-copy-index"), &copy).unwrap();
    let fresh = boogerd::engine::index::run(&copy, &store, Default::default(), &Default::default()).unwrap();
    println!("## Branch switch: `git checkout` rewriting {STORM_FILES} of {} files\n", files.len());
    println!(
        "| git checkout | until the index is consistent | batches | {STORM_FILES} files indexed from scratch | ratio | index equals a fresh one |"
    );
    println!("|---|---|---|---|---|---|");
    println!(
        "| {} | {} | {batches} | {} | {:.2}x | {} |\n",
        ms(git_done),
        ms(consistent),
        ms(from_scratch),
        consistent.as_secs_f64() / from_scratch.as_secs_f64(),
        if fresh.root_hash == live_root { "yes (same Merkle root)" } else { "NO" }
    );
}

fn idle(env: &Env, stdlib: &Path, pid: u32) {
    let include = env.dir.path().join("include");
    copy_tree(Path::new("/usr/include"), &include, &[], &[]);
    let own = env.dir.path().join("booger-src");
    copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".."), &own, &[], &["target", ".git"]);
    for root in [&include, &own] {
        index(env, root);
    }
    let mut dirs = 0;
    for root in [stdlib, &include, &own] {
        let mut conn = session(env, root);
        wait_settled(&mut conn);
        dirs += watch(&mut conn)["watched_dirs"].as_u64().unwrap();
        // The background work indexing starts (ranking segment, embeddings) finishes first:
        // idle is what follows.
        wait_until(|| {
            let index = &status(&mut conn)["project"]["index"];
            let e = &index["embeddings"];
            index["ranking_index"] == "ready"
                && (e.is_null() || (e["running"] == false && e["embedded"] == e["embeddable"]))
        });
    }
    std::thread::sleep(Duration::from_secs(2));
    let rss_watching = booger_tests::proc_status_kb(pid, "VmRSS:");
    let (cpu0, switches0) = (cpu_ticks(pid), context_switches(pid));
    std::thread::sleep(IDLE);
    let (cpu1, switches1) = (cpu_ticks(pid), context_switches(pid));
    // Threads that exist in both readings (a thread that ended would make the sum go back).
    let switches: u64 = switches1.iter().filter_map(|(tid, n)| switches0.get(tid).map(|m| n.saturating_sub(*m))).sum();
    // Then searched once each: their ranking indexes are built and held.
    for root in [stdlib, &include, &own] {
        let mut conn = session(env, root);
        search(&mut conn, "warm up");
        wait_until(|| status(&mut conn)["project"]["index"]["ranking_index"] == "ready");
    }
    let rss_searched = booger_tests::proc_status_kb(pid, "VmRSS:");
    let tick = 1.0 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    println!("## Idle: 3 projects watched (standard library, /usr/include, booger's sources), nothing changing\n");
    println!(
        "| watched directories | daemon CPU over {} s | context switches (all threads) | RSS watching | RSS after one search in each | peak RSS (indexing /usr/include) |",
        IDLE.as_secs()
    );
    println!("|---|---|---|---|---|---|");
    println!(
        "| {dirs} | {:.2} s | {switches} | {} MB | {} MB | {} MB |",
        (cpu1 - cpu0) as f64 * tick,
        rss_watching / 1024,
        rss_searched / 1024,
        booger_tests::proc_status_kb(pid, "VmHWM:") / 1024,
    );
}

fn index(env: &Env, root: &Path) {
    let out = env.run_within(None, &["index", root.to_str().unwrap()], Duration::from_secs(600));
    assert!(out.status.success(), "{}", describe(&out));
}

fn python_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().filter_map(Result::ok) {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                if e.file_name() != ".booger" && e.file_name() != ".git" {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "py") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
