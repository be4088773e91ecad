//! What the status page shows, as JSON (`/api/status`, and each event of `/api/events`), and
//! a cheap fingerprint of it that tells the event stream when there is something new.
//!
//! Neither opens an index: a project whose index is not loaded shows the counts it had when
//! it was last open (memory follows use, not the page).

use std::hash::{Hash, Hasher};
use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use crate::base::sync::Recover;
use crate::engine::Daemon;
use crate::engine::project::ProjectHandle;

/// Problem files listed per project (the count is always given).
const LISTED_PROBLEMS: usize = 5;

/// The daemon and every project, as the page renders them.
pub(super) fn overview(daemon: &Daemon) -> Value {
    let registered = daemon.registry.read().recover().projects().to_vec();
    let projects: Vec<Value> = registered
        .iter()
        .map(|p| {
            let mut v = project(daemon, &daemon.projects.get(&p.root));
            v["name"] = json!(p.name);
            v["root"] = json!(p.root);
            v["added_at"] = json!(p.added_at);
            v["in_repo"] = json!(p.in_repo);
            v
        })
        .collect();
    let m = crate::base::metrics::get();
    let (calls_minute, micros_minute) = m.last_minute();
    let (sample, quantiles) = m.latest_latency(&[0.5, 0.95]);
    // Not `daemon.facts()`: its heap figures walk the allocator's free lists, which takes
    // milliseconds on a fragmented heap, for every refresh of every open page.
    let (rss, threads) = crate::base::memory::process().unwrap_or((0, 0));
    let (warm, warm_projects) = daemon.projects.resident();
    let embeddings = daemon.projects.embedding().map(|e| json!({ "tiers": e.model_ids(), "problem": e.problem }));
    let http_problem = daemon.http.get().and_then(|h| h.as_ref().err()).cloned();
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "pid": std::process::id(),
        "started_at": daemon.started_at,
        "uptime_s": daemon.started.elapsed().as_secs(),
        "memory": {
            "rss_bytes": rss,
            "threads": threads,
            "warm_bytes": warm,
            "warm_projects": warm_projects,
            "budget_bytes": daemon.config.memory_budget,
        },
        "connections": m.connections_open.load(Ordering::Relaxed),
        "mcp_sessions": m.mcp_sessions_open.load(Ordering::Relaxed),
        "requests": {
            "calls": m.calls(),
            "last_minute": calls_minute,
            "last_minute_mean_ms": (calls_minute > 0).then(|| micros_minute as f64 / calls_minute as f64 / 1000.0),
            // Of the latest calls (`latency_sample` of them), measured, not bucket bounds.
            "latency_sample": sample,
            "p50_ms": quantiles.first(),
            "p95_ms": quantiles.get(1),
        },
        "problems": http_problem.into_iter().chain(embeddings.as_ref().and_then(|e| e["problem"].as_str().map(str::to_owned))).collect::<Vec<_>>(),
        "embeddings": embeddings,
        "projects": projects,
    })
}

fn project(daemon: &Daemon, h: &std::sync::Arc<ProjectHandle>) -> Value {
    let watch = h.live.status();
    let mut v = json!({
        "loaded": false,
        "state": watch["state"],
        "reason": watch["reason"],
        "pending": watch["queue"],
        "lag_s": h.live.lag().as_secs_f64(),
        "last_change": watch["last_change_applied"]["at"],
        "last_walk": watch["last_whole_walk"]["at"],
        "index_bytes": crate::base::storage::size_on_disk(&h.index_dir),
        "idle_s": h.idle_for().as_secs(),
    });
    if h.is_indexing() {
        let p = &h.progress;
        v["indexing"] = json!({
            "done": p.done.load(Ordering::Relaxed),
            "total": p.total.load(Ordering::Relaxed),
        });
    }
    if let Some(r) = h.last_report.lock().recover().as_ref() {
        v["last_run_ms"] = json!(r.elapsed_ms);
    }
    if let Some((stats, loaded)) = h.stats() {
        v["loaded"] = json!(loaded);
        v["files"] = json!(stats.files);
        v["chunks"] = json!(stats.chunks);
        v["source_bytes"] = json!(stats.source_bytes);
        let mut languages: Vec<(&String, &u64)> = stats.languages.iter().collect();
        languages.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        v["languages"] = json!(languages);
        v["problem_count"] = json!(stats.problems_total);
        v["problems"] = stats.problems.iter().take(LISTED_PROBLEMS).map(|(p, why)| json!([p, why])).collect();
    }
    let mut problems: Vec<String> = Vec::new();
    if let Some(r) = h.recovered() {
        problems.push(format!(
            "damaged index set aside at {} ({}) and rebuilt: {}",
            r.at,
            r.set_aside.display(),
            r.error
        ));
    }
    if let Some(e) = h.vectors.last_error.lock().recover().clone() {
        problems.push(format!("embedding: {e}"));
    }
    v["alerts"] = json!(problems);
    // The last eval: from the index while it is loaded, else as last seen (the page never
    // opens an index).
    let mut seen = h.eval_seen.lock().recover();
    if let Some(store) = h.store_if_open() {
        *seen = crate::tools::last_eval(&store).map(|e| {
            let f = |m: &str, k: &str| e["methods"][m]["all"][k].clone();
            json!({
                "at": e["at"],
                "queries": e["queries"],
                "search_r10": f("search", "R@10"),
                "search_mrr": f("search", "MRR@10"),
                "grep_r10": f("grep-rank", "R@10"),
                "threshold": e["calibration"]["threshold"],
            })
        });
    }
    if let Some(q) = seen.as_ref() {
        v["quality"] = q.clone();
    }
    drop(seen);
    if let (Some(e), Some(store)) = (daemon.projects.embedding(), h.store_if_open()) {
        let tiers: Vec<Value> = e
            .tiers
            .iter()
            .filter_map(|t| {
                let c = store.coverage(t.id()).ok()?;
                Some(json!({ "model": t.id(), "embedded": c.embedded, "embeddable": c.embeddable }))
            })
            .collect();
        v["embedding"] = json!({ "tiers": tiers, "running": h.vectors.busy.load(Ordering::Relaxed) });
    }
    v
}

/// Changes whenever something the page shows changes, except slow drifts (memory, uptime,
/// disk size), which the stream's periodic refresh covers. Reads atomics and small locks
/// only: the event stream computes it every second per open page.
pub(super) fn fingerprint(daemon: &Daemon) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let m = crate::base::metrics::get();
    m.calls().hash(&mut h);
    m.connections_open.load(Ordering::Relaxed).hash(&mut h);
    m.mcp_sessions_open.load(Ordering::Relaxed).hash(&mut h);
    let registered = daemon.registry.read().recover().projects().to_vec();
    for p in &registered {
        p.name.hash(&mut h);
        let handle = daemon.projects.get(&p.root);
        handle.is_indexing().hash(&mut h);
        handle.progress.done.load(Ordering::Relaxed).hash(&mut h);
        handle.progress.total.load(Ordering::Relaxed).hash(&mut h);
        handle.store_if_open().map(|s| s.write_count()).hash(&mut h);
        handle.vectors.busy.load(Ordering::Relaxed).hash(&mut h);
        handle.vectors.embedded.load(Ordering::Relaxed).hash(&mut h);
        let f = handle.live.freshness();
        f.pending_count.hash(&mut h);
        (f.state as u8).hash(&mut h);
    }
    h.finish()
}
