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

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

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
use crate::fronts::mcp::sessions::{self, Ends, Limits};
use crate::fronts::rpc;
use crate::tools::Session;

/// Sessions kept at once; past this, the one unused longest is ended if it has rested five
/// minutes, else the new one is refused: opening sessions must not end the ones in use. One
/// owner: whoever holds the daemon's HTTP token.
pub(super) const LIMITS: Limits =
    Limits { max: 64, per_owner: 64, idle: Duration::from_secs(3600), evictable: Duration::from_secs(300) };

/// The daemon's MCP sessions over HTTP.
pub(super) type Sessions = sessions::Sessions<(), HttpSession>;

/// One MCP client over HTTP.
pub(crate) struct HttpSession {
    connection: Arc<Connection>,
    /// Set once the session ends: its event streams close.
    ended: watch::Sender<bool>,
}

impl Ends for HttpSession {
    fn end(&self) {
        self.ended.send_replace(true);
        crate::base::metrics::get().mcp_sessions_open.fetch_sub(1, Ordering::Relaxed);
    }
}

#[derive(serde::Deserialize, Default)]
pub(super) struct Options {
    project: Option<String>,
    tools: Option<String>,
}

/// The client accepts `kind` (or anything).
fn accepts(headers: &HeaderMap, kind: &str) -> bool {
    headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_none_or(|a| a.contains(kind) || a.contains("*/*"))
}

pub(super) async fn post(
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
    let Some(session) = s.mcp.get(id, ()) else {
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
        let session = HttpSession { connection, ended: watch::channel(false).0 };
        if !s.mcp.open(id.clone(), (), session) {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many MCP sessions in use: end one (DELETE /mcp with its Mcp-Session-Id) or try again later",
            );
        }
        crate::base::metrics::get().mcp_sessions_open.fetch_add(1, Ordering::Relaxed);
        response = with_session(response, &id);
    }
    response
}

/// The session's event stream: open until the session or the daemon ends.
pub(super) async fn get(State(s): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if !accepts(&headers, "text/event-stream") {
        return refuse(StatusCode::NOT_ACCEPTABLE, "the MCP event stream is text/event-stream: accept it");
    }
    let Some(session) = session_id(&headers).and_then(|id| s.mcp.get(id, ())) else {
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

pub(super) async fn delete(State(s): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    match session_id(&headers) {
        Some(id) if s.mcp.close(id, ()) => StatusCode::NO_CONTENT.into_response(),
        _ => refuse(StatusCode::NOT_FOUND, "no such MCP session"),
    }
}
