//! `/health`, the status page and its JSON, and the page's one action.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde_json::{Value, json};

use super::State as Shared;
use super::overview::overview;
use crate::base::sync::Recover;
use crate::tools::{self, Session};

/// The page: one file, its style and script inline, compiled into the binary.
const PAGE: &str = include_str!("status.html");

/// 200 while serving, 503 once stopping: what a monitor or a service manager polls.
pub(super) async fn health(State(s): State<Arc<Shared>>) -> Response {
    let d = &s.daemon;
    let stopping = d.is_stopping();
    let body = json!({
        "status": if stopping { "stopping" } else { "serving" },
        "version": env!("CARGO_PKG_VERSION"),
        "pid": std::process::id(),
        "uptime_s": d.started.elapsed().as_secs(),
        "projects": d.registry.read().recover().projects().len(),
    });
    let status = if stopping { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::OK };
    (status, [(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

/// What the status page shows, as JSON.
pub(super) async fn status_json(State(s): State<Arc<Shared>>) -> Json<Value> {
    let daemon = s.daemon.clone();
    Json(tokio::task::spawn_blocking(move || overview(&daemon)).await.unwrap_or(Value::Null))
}

/// The status page. It fills itself from `/api/events`.
pub(super) async fn index() -> Response {
    (
        [
            (header::CACHE_CONTROL, "no-store"),
            // Nothing from elsewhere: the page is all inline.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; \
                 frame-ancestors 'none'",
            ),
        ],
        Html(PAGE),
    )
        .into_response()
}

/// Re-indexes a project (the page's button): started now, followed on the page.
pub(super) async fn reindex(State(s): State<Arc<Shared>>, Path(name): Path<String>) -> Response {
    let daemon = s.daemon.clone();
    let Some(project) = daemon.registry.read().recover().find(&name).cloned() else {
        return (StatusCode::NOT_FOUND, format!("no project named {name}\n")).into_response();
    };
    if daemon.projects.get(&project.root).is_indexing() {
        return (StatusCode::CONFLICT, format!("{name} is being indexed already\n")).into_response();
    }
    tokio::spawn(async move {
        let args = json!({ "project": project.name });
        match tools::call(daemon, Session::anonymous(0), "index", args, None).await {
            Ok(reply) if reply.is_error => {
                tracing::warn!(project = %project.name, error = %reply.text, "re-index failed")
            }
            _ => tracing::info!(project = %project.name, "re-indexed from the status page"),
        }
    });
    (StatusCode::ACCEPTED, Json(json!({ "project": name, "indexing": true }))).into_response()
}
