//! `/metrics`: Prometheus text exposition (version 0.0.4) of the daemon's counters and each
//! project's state. Names follow Prometheus conventions: `booger_` prefix, `_total` for
//! counters, base units (`_seconds`, `_bytes`).

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use booger_proto::tools::TOOLS;

use super::State as Shared;
use crate::base::metrics::{self, BUCKETS, METHODS, RPC_ERROR_CODES};
use crate::base::sync::Recover;

pub(super) async fn metrics(State(s): State<Arc<Shared>>) -> impl IntoResponse {
    let daemon = s.daemon.clone();
    let text = tokio::task::spawn_blocking(move || render(&daemon)).await.unwrap_or_default();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], text)
}

/// One metric family: its HELP and TYPE lines, then samples.
struct Out(String);

impl Out {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{k}=\"{}\"", label_value(v));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {value}");
    }

    fn one(&mut self, name: &str, kind: &str, help: &str, value: impl std::fmt::Display) {
        self.family(name, kind, help);
        self.sample(name, &[], value);
    }
}

fn label_value(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

fn load(c: &std::sync::atomic::AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

pub(super) fn render(daemon: &crate::engine::Daemon) -> String {
    let m = metrics::get();
    let mut o = Out(String::with_capacity(16 * 1024));
    o.family("booger_build_info", "gauge", "The running boogerd's version.");
    o.sample("booger_build_info", &[("version", env!("CARGO_PKG_VERSION"))], 1);
    o.one("booger_uptime_seconds", "gauge", "Seconds since boogerd started.", daemon.started.elapsed().as_secs());
    let (rss, threads) = crate::base::memory::process().unwrap_or((0, 0));
    o.one("booger_resident_memory_bytes", "gauge", "Resident memory of boogerd.", rss);
    o.one("booger_threads", "gauge", "Threads of boogerd.", threads);
    let (warm, warm_projects) = daemon.projects.resident();
    o.one("booger_warm_bytes", "gauge", "Heap held by projects' warm structures.", warm);
    o.one("booger_warm_projects", "gauge", "Projects holding warm structures.", warm_projects);
    o.one("booger_connections_open", "gauge", "Open socket connections.", load(&m.connections_open));
    o.one("booger_connections_total", "counter", "Socket connections accepted.", load(&m.connections_total));

    o.family("booger_rpc_requests_total", "counter", "JSON-RPC requests by method.");
    for (name, c) in METHODS.iter().zip(&m.methods) {
        o.sample("booger_rpc_requests_total", &[("method", name)], load(c));
    }
    o.family("booger_rpc_errors_total", "counter", "JSON-RPC error replies by kind.");
    for ((kind, _), c) in RPC_ERROR_CODES.iter().zip(&m.rpc_errors) {
        o.sample("booger_rpc_errors_total", &[("code", kind)], load(c));
    }
    o.family("booger_tool_calls_total", "counter", "Tool calls by tool.");
    for (t, s) in TOOLS.iter().zip(&m.tools) {
        o.sample("booger_tool_calls_total", &[("tool", t.name)], load(&s.calls));
    }
    o.family("booger_tool_errors_total", "counter", "Tool calls that answered isError, by tool.");
    for (t, s) in TOOLS.iter().zip(&m.tools) {
        o.sample("booger_tool_errors_total", &[("tool", t.name)], load(&s.errors));
    }
    o.family("booger_tool_timeouts_total", "counter", "Heavy tool calls stopped by their deadline.");
    for (t, s) in TOOLS.iter().zip(&m.tools) {
        o.sample("booger_tool_timeouts_total", &[("tool", t.name)], load(&s.timeouts));
    }
    o.family("booger_tool_call_duration_seconds", "histogram", "Time to answer a tool call.");
    for (t, s) in TOOLS.iter().zip(&m.tools).filter(|(_, s)| load(&s.calls) > 0) {
        for (le, b) in BUCKETS.iter().map(|le| le.to_string()).chain(["+Inf".to_owned()]).zip(&s.buckets) {
            o.sample("booger_tool_call_duration_seconds_bucket", &[("tool", t.name), ("le", &le)], load(b));
        }
        o.sample("booger_tool_call_duration_seconds_sum", &[("tool", t.name)], load(&s.micros) as f64 / 1e6);
        o.sample("booger_tool_call_duration_seconds_count", &[("tool", t.name)], load(&s.calls));
    }
    o.one("booger_http_requests_total", "counter", "HTTP requests.", load(&m.http_requests));
    o.one(
        "booger_http_refused_total",
        "counter",
        "HTTP requests refused (no token, foreign Origin or Host).",
        load(&m.http_refused),
    );
    o.one("booger_mcp_http_sessions", "gauge", "MCP sessions open over HTTP.", load(&m.mcp_sessions_open));
    projects(daemon, &mut o);
    o.0
}

/// What one project shows, read once per scrape.
struct Row {
    name: String,
    /// Files, chunks, generation: from an index that is open.
    counts: Option<(u64, u64, u64)>,
    index_bytes: u64,
    pending: usize,
    /// The last run's duration in seconds and its problem files.
    last_run: Option<(f64, usize)>,
    indexing: bool,
    mode: String,
    lag: f64,
    /// Chunks without a vector, per embedding model (projects with an open index).
    backlog: Vec<(String, u64)>,
}

/// Each registered project. Counts that need the index come from projects whose index is
/// open; a scrape never opens one (memory follows use, not scrapes).
fn projects(daemon: &crate::engine::Daemon, o: &mut Out) {
    let projects = daemon.registry.read().recover().projects().to_vec();
    let rows: Vec<Row> = projects
        .iter()
        .map(|p| {
            let h = daemon.projects.get(&p.root);
            let counts = h.store_if_open().and_then(|s| {
                let summary = s.summary().ok()?;
                Some((summary.stats.files, summary.stats.chunks, s.content_generation()))
            });
            let last_run =
                h.last_report.lock().recover().as_ref().map(|r| (r.elapsed_ms as f64 / 1000.0, r.problems.len()));
            let mode = serde_json::to_value(h.live.mode()).ok().and_then(|m| m.as_str().map(str::to_owned));
            let backlog = match (daemon.projects.embedding(), h.store_if_open()) {
                (Some(e), Some(store)) => e
                    .tiers
                    .iter()
                    .filter_map(|t| {
                        let c = store.coverage(t.id()).ok()?;
                        Some((t.id().to_owned(), c.embeddable.saturating_sub(c.embedded)))
                    })
                    .collect(),
                _ => Vec::new(),
            };
            Row {
                name: p.name.clone(),
                counts,
                index_bytes: crate::base::storage::size_on_disk(&h.index_dir),
                pending: h.live.freshness().pending_count,
                last_run,
                indexing: h.is_indexing(),
                mode: mode.unwrap_or_else(|| "unknown".to_owned()),
                lag: h.live.lag().as_secs_f64(),
                backlog,
            }
        })
        .collect();
    let gauge = |o: &mut Out, name: &str, help: &str, value: &dyn Fn(&Row) -> Option<f64>| {
        o.family(name, "gauge", help);
        for r in &rows {
            if let Some(v) = value(r) {
                o.sample(name, &[("project", &r.name)], v);
            }
        }
    };
    let files = "Files in the project's index (projects with an open index).";
    gauge(o, "booger_project_files", files, &|r| r.counts.map(|c| c.0 as f64));
    let chunks = "Chunks in the project's index (projects with an open index).";
    gauge(o, "booger_project_chunks", chunks, &|r| r.counts.map(|c| c.1 as f64));
    let generation = "Index generation: moves on every change of files or chunks.";
    gauge(o, "booger_project_index_generation", generation, &|r| r.counts.map(|c| c.2 as f64));
    gauge(o, "booger_project_index_bytes", "Size of the project's index on disk.", &|r| Some(r.index_bytes as f64));
    gauge(o, "booger_project_pending_changes", "Changed paths not yet indexed.", &|r| Some(r.pending as f64));
    let lag = "Seconds the oldest change not yet in the index has waited (0 when fresh).";
    gauge(o, "booger_project_freshness_lag_seconds", lag, &|r| Some(r.lag));
    let took = "Duration of the last indexing run.";
    gauge(o, "booger_project_last_index_duration_seconds", took, &|r| r.last_run.map(|l| l.0));
    let problems = "Files indexed with problems in the last run.";
    gauge(o, "booger_project_problems", problems, &|r| r.last_run.map(|l| l.1 as f64));
    let indexing = "1 while the project is being indexed.";
    gauge(o, "booger_project_indexing", indexing, &|r| Some(f64::from(u8::from(r.indexing))));
    let backlog = "Chunks waiting for an embedding, per model (projects with an open index).";
    o.family("booger_project_embedding_backlog_chunks", "gauge", backlog);
    for r in &rows {
        for (model, n) in &r.backlog {
            o.sample("booger_project_embedding_backlog_chunks", &[("project", &r.name), ("model", model)], n);
        }
    }
    o.family("booger_project_watch_mode", "gauge", "1 for the project's watch mode.");
    for r in &rows {
        o.sample("booger_project_watch_mode", &[("project", &r.name), ("mode", &r.mode)], 1);
    }
}
