//! `/mcp`: MCP over Streamable HTTP. Each POST carries one JSON-RPC message (or a batch) and is
//! answered by the same methods the socket serves (`rpc::answer`), so every tool runs the one
//! way it runs for `booger mcp`. `initialize` opens a session, named by the `Mcp-Session-Id`
//! header the answer carries; later requests send it back, and it holds what a socket
//! connection holds: the negotiated revision, the tool profile, the session whose focus and
//! notes tools keep apart. `GET` opens the session's event stream (booger starts no
//! requests of its own, so it only closes when the session or the daemon ends), `DELETE`
//! ends the session.
//!
//! `/mcp?project=NAME_OR_PATH` gives the session a default project (a socket client's is
//! its directory); `&tools=core,git` chooses what `tools/list` shows, as `booger mcp --tools`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::watch;

use super::State as Shared;
use crate::base::sync::Recover;
use crate::fronts::connection::Connection;
use crate::fronts::mcp::http::{json_reply, refuse, session_id, unknown_version, with_session};
use crate::fronts::rpc;
use crate::tools::Session;

/// Sessions kept at once; past this, the one unused longest is ended if it has rested
/// [`EVICTABLE`], else the new one is refused: opening sessions must not end the ones in use.
const MAX_SESSIONS: usize = 64;
/// How long a session must have gone unused before a new one may take its place.
const EVICTABLE: Duration = Duration::from_secs(300);
/// A session unused this long is ended when a new one starts.
const IDLE: Duration = Duration::from_secs(3600);

/// One MCP client over HTTP.
struct HttpSession {
    connection: Arc<Connection>,
    last_used: Mutex<Instant>,
    /// Set once the session ends: its event streams close.
    ended: watch::Sender<bool>,
}

impl HttpSession {
    fn end(&self) {
        self.ended.send_replace(true);
        crate::base::metrics::get().mcp_sessions_open.fetch_sub(1, Ordering::Relaxed);
    }
}

#[derive(Default)]
pub struct Sessions(Mutex<HashMap<String, Arc<HttpSession>>>);

impl Sessions {
    fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let s = self.0.lock().recover().get(id).cloned()?;
        *s.last_used.lock().recover() = Instant::now();
        Some(s)
    }

    /// Keeps `session` under `id`, first ending the idle ones and, at the limit, the one
    /// unused longest if it has rested long enough; false (nothing kept) when every session is
    /// in use.
    fn insert(&self, id: String, session: Arc<HttpSession>) -> bool {
        let mut map = self.0.lock().recover();
        let idle = |s: &HttpSession| s.last_used.lock().recover().elapsed();
        map.retain(|_, s| {
            let keep = idle(s) < IDLE;
            if !keep {
                s.end();
            }
            keep
        });
        if map.len() >= MAX_SESSIONS {
            let oldest = map.iter().max_by_key(|(_, s)| idle(s)).filter(|(_, s)| idle(s) >= EVICTABLE);
            let Some(oldest) = oldest.map(|(k, _)| k.clone()) else { return false };
            if let Some(s) = map.remove(&oldest) {
                s.end();
            }
        }
        crate::base::metrics::get().mcp_sessions_open.fetch_add(1, Ordering::Relaxed);
        map.insert(id, session);
        true
    }

    fn remove(&self, id: &str) -> bool {
        let removed = self.0.lock().recover().remove(id);
        removed.map(|s| s.end()).is_some()
    }
}

#[derive(serde::Deserialize, Default)]
pub struct Options {
    project: Option<String>,
    tools: Option<String>,
}

/// The client accepts `kind` (or anything).
fn accepts(headers: &HeaderMap, kind: &str) -> bool {
    headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_none_or(|a| a.contains(kind) || a.contains("*/*"))
}

pub async fn post(
    State(s): State<Arc<Shared>>,
    Query(options): Query<Options>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !accepts(&headers, "application/json") {
        return refuse(StatusCode::NOT_ACCEPTABLE, "MCP answers are application/json: accept it");
    }
    let text = match std::str::from_utf8(&body) {
        Ok(t) => t,
        Err(_) => return json_reply(StatusCode::BAD_REQUEST, rpc::parse_error("message is not UTF-8")),
    };
    let message: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return json_reply(StatusCode::BAD_REQUEST, rpc::parse_error(&e.to_string())),
    };
    if message.get("method").and_then(Value::as_str) == Some("initialize") {
        return initialize(&s, options, message).await;
    }
    let Some(id) = session_id(&headers) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "no Mcp-Session-Id header: send `initialize` first and then the session id its answer carries",
        );
    };
    let Some(session) = s.mcp.get(id) else {
        return refuse(
            StatusCode::NOT_FOUND,
            "no such MCP session (it ended, or the daemon restarted): initialize again",
        );
    };
    if let Some(refusal) = unknown_version(&headers) {
        return refusal;
    }
    match rpc::answer(message, &s.methods, &session.connection).await {
        Some(reply) => json_reply(StatusCode::OK, reply),
        // Notifications and responses only.
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// `initialize`: a new session, answered with its id when the handshake succeeds.
async fn initialize(s: &Shared, options: Options, message: Value) -> Response {
    let profile = match options.tools.as_deref().map(booger_proto::tools::Profile::parse).transpose() {
        Ok(p) => p.unwrap_or_default(),
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &format!("tools={}: {e}", options.tools.unwrap_or_default())),
    };
    let id = super::guard::new_token();
    let project = options.project.map(std::path::PathBuf::from);
    let connection = Connection::new(|_| Session {
        id: format!("http-{}", &id[..16]),
        project,
        register: false,
        shell: false,
        measuring: false,
        read_only: !s.daemon.config.http_allow_writes,
    });
    *connection.tools.lock().recover() = profile;
    let Some(reply) = rpc::answer(message, &s.methods, &connection).await else {
        return refuse(StatusCode::BAD_REQUEST, "`initialize` must be a request (with an id)");
    };
    let accepted = serde_json::from_str::<Value>(&reply).is_ok_and(|r| r.get("result").is_some());
    let mut response = json_reply(StatusCode::OK, reply);
    if accepted {
        let session =
            Arc::new(HttpSession { connection, last_used: Mutex::new(Instant::now()), ended: watch::channel(false).0 });
        if !s.mcp.insert(id.clone(), session) {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many MCP sessions in use: end one (DELETE /mcp with its Mcp-Session-Id) or try again later",
            );
        }
        response = with_session(response, &id);
    }
    response
}

/// The session's event stream: open until the session or the daemon ends.
pub async fn get(State(s): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if !accepts(&headers, "text/event-stream") {
        return refuse(StatusCode::NOT_ACCEPTABLE, "the MCP event stream is text/event-stream: accept it");
    }
    let Some(session) = session_id(&headers).and_then(|id| s.mcp.get(id)) else {
        return refuse(StatusCode::NOT_FOUND, "no such MCP session: initialize first, then send its Mcp-Session-Id");
    };
    let mut ended = session.ended.subscribe();
    let stopped = s.daemon.stopped();
    let closed = async move {
        tokio::select! {
            _ = ended.wait_for(|e| *e) => {}
            () = stopped => {}
        }
    };
    let stream = futures_util::stream::once(closed).filter_map(|()| async { None::<Result<Event, Infallible>> });
    // A comment a minute: a quiet session's stream is not taken for an idle connection.
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(60))).into_response()
}

pub async fn delete(State(s): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    match session_id(&headers) {
        Some(id) if s.mcp.remove(id) => StatusCode::NO_CONTENT.into_response(),
        _ => refuse(StatusCode::NOT_FOUND, "no such MCP session"),
    }
}
