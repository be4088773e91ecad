//! `/health`, `/api/status` and the status page.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde_json::{Value, json};

use super::State as Shared;

/// 200 while serving, 503 once stopping: what a monitor or a service manager polls.
pub async fn health(State(s): State<Arc<Shared>>) -> Response {
    let d = &s.daemon;
    let stopping = d.is_stopping();
    let body = json!({
        "status": if stopping { "stopping" } else { "serving" },
        "version": env!("CARGO_PKG_VERSION"),
        "pid": std::process::id(),
        "uptime_s": d.started.elapsed().as_secs(),
        "projects": d.registry.read().expect("registry lock").projects().len(),
    });
    let status = if stopping { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::OK };
    (status, [(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

/// The daemon's facts and each project's state, as the status page shows them.
pub async fn status_json(State(s): State<Arc<Shared>>) -> Json<Value> {
    let daemon = s.daemon.clone();
    let facts = tokio::task::spawn_blocking(move || overview(&daemon)).await.unwrap_or(Value::Null);
    Json(facts)
}

fn overview(daemon: &crate::Daemon) -> Value {
    let mut facts = daemon.facts();
    let projects: Vec<Value> = facts["projects"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut p| {
            let root = std::path::PathBuf::from(p["root"].as_str().unwrap_or_default());
            let handle = daemon.projects.get(&root);
            if let Some(stats) = handle.store_if_open().and_then(|s| s.summary().ok()) {
                p["files"] = json!(stats.stats.files);
                p["chunks"] = json!(stats.stats.chunks);
                p["languages"] = json!(stats.stats.languages);
            }
            p["watch"] = handle.live.status();
            p["indexing"] = json!(handle.is_indexing());
            p["index_bytes"] = json!(crate::storage::size_on_disk(&handle.index_dir));
            p
        })
        .collect();
    facts["projects"] = Value::Array(projects);
    facts
}

/// The status page. For now a plain table of what `/api/status` holds.
pub async fn index(State(s): State<Arc<Shared>>) -> Html<String> {
    let daemon = s.daemon.clone();
    let facts = tokio::task::spawn_blocking(move || overview(&daemon)).await.unwrap_or(Value::Null);
    let mut rows = String::new();
    for p in facts["projects"].as_array().into_iter().flatten() {
        let cell = |v: &Value| escape(&v.as_str().map_or_else(|| v.to_string(), str::to_owned));
        rows.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            cell(&p["name"]),
            cell(&p["root"]),
            cell(&p["files"]),
            cell(&p["chunks"]),
            cell(&p["watch"]["state"]),
        ));
    }
    Html(format!(
        "<!doctype html><html lang=en><meta charset=utf-8><title>booger</title>\
         <h1>booger {}</h1><p>pid {} · up {} s</p>\
         <table><thead><tr><th>project<th>root<th>files<th>chunks<th>watch</tr></thead><tbody>\n{rows}</tbody></table>",
        escape(env!("CARGO_PKG_VERSION")),
        facts["pid"],
        facts["uptime_s"],
    ))
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
