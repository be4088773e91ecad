//! `/mcp` on the team server: MCP over Streamable HTTP, one JSON-RPC message per POST.
//! `initialize` opens a session owned by the token that sent it; every later request names
//! it (`Mcp-Session-Id`) and must come with the same token. The server starts no requests
//! of its own, so `GET` (an event stream) is not offered (405), as the transport allows.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Extension;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use booger_proto::remote;
use booger_proto::wire::code;
use serde_json::{Value, json};

use super::Shared;
use crate::base::sync::Recover;
use crate::fronts::mcp::http::{json_reply, refuse, session_id, unknown_version, with_session};
use crate::fronts::mcp::sessions::{self, Limits};
use crate::fronts::rpc::{self, Message};
use crate::store::team::{Audited, Reader, Token};
use crate::tools::remote::{RemoteError, RemoteReply};

/// Sessions kept at once, and per token; past either, the one unused longest is ended (the
/// token's own when it holds its limit). A session unused an hour is ended.
pub(super) const LIMITS: Limits =
    Limits { max: 10_000, per_owner: 256, idle: Duration::from_secs(3600), evictable: Duration::ZERO };

/// The team server's MCP sessions, each owned by the token (its id) that opened it.
pub(super) type Sessions = sessions::Sessions<i64, ()>;

const INSTRUCTIONS: &str = "booger's team index: code search over the repositories your token may read, \
    each at its latest published commit unless you name one. `status` lists them; `search`, `grep`, \
    `symbols` and `references` take `repository` and `commit`, and otherwise the arguments of the local tools \
    of the same names.";

fn json_value(status: StatusCode, body: Value) -> Response {
    json_reply(status, body.to_string())
}

/// One JSON-RPC message per POST, read as every front reads one ([`rpc::read_message`]).
pub(super) async fn post(
    State(s): State<Arc<Shared>>,
    Extension(token): Extension<Token>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let message: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return json_reply(StatusCode::BAD_REQUEST, rpc::parse_error(&e.to_string())),
    };
    if message.is_array() {
        let why = "Invalid request: one JSON-RPC message (an object) per request: batches are not taken";
        return json_reply(StatusCode::BAD_REQUEST, rpc::error_reply(&Value::Null, code::INVALID_REQUEST, why));
    }
    let message = match rpc::read_message(message) {
        Ok(m) => m,
        Err(reply) => return json_reply(StatusCode::BAD_REQUEST, reply),
    };
    if let Message::Request { id, method, params } = &message
        && method == "initialize"
    {
        return initialize(&s, &token, id, params);
    }
    if let Message::Notification { method, .. } = &message
        && method == "initialize"
    {
        return refuse(StatusCode::BAD_REQUEST, "`initialize` must be a request (with an id)");
    }
    if session_id(&headers).and_then(|sid| s.sessions.get(sid, token.id)).is_none() {
        // Whether the session exists for another token is not said.
        return refuse(StatusCode::NOT_FOUND, "no such MCP session for this token: send `initialize` first");
    }
    if let Some(refusal) = unknown_version(&headers) {
        return refusal;
    }
    let Message::Request { id, method, params } = message else {
        // A notification or a response: nothing to answer.
        return StatusCode::ACCEPTED.into_response();
    };
    let answer = match method.as_str() {
        "ping" => Ok(json!({})),
        "tools/list" => Ok(tools_list()),
        "tools/call" => tools_call(&s, &token, params).await,
        other => {
            Err((code::METHOD_NOT_FOUND, format!("method {other:?} is not served here: tools/list and tools/call are")))
        }
    };
    match answer {
        Ok(result) => json_value(StatusCode::OK, json!({ "jsonrpc": "2.0", "id": id, "result": result })),
        Err((c, m)) => json_reply(StatusCode::OK, rpc::error_reply(&id, c, &m)),
    }
}

fn initialize(s: &Shared, token: &Token, id: &Value, params: &Value) -> Response {
    let version = match crate::fronts::mcp::negotiate(params) {
        Ok(v) => v,
        Err(e) => return json_value(StatusCode::OK, json!({ "jsonrpc": "2.0", "id": id, "error": e.to_json() })),
    };
    let session = crate::base::secret::new_token();
    // Never refused: at a limit the longest unused session gives way (`LIMITS.evictable` is 0).
    s.sessions.open(session.clone(), token.id, ());
    tracing::info!(token = %token.name, version, "team session opened");
    let result = json!({
        "protocolVersion": version,
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": { "name": "booger-team", "title": "booger team index", "version": env!("CARGO_PKG_VERSION") },
        "instructions": INSTRUCTIONS,
    });
    with_session(json_value(StatusCode::OK, json!({ "jsonrpc": "2.0", "id": id, "result": result })), &session)
}

fn tools_list() -> Value {
    let tools: Vec<Value> = remote::tools()
        .iter()
        .map(|t| {
            crate::fronts::mcp::tool_entry(
                t,
                remote::output_schema(t.name).unwrap_or_else(|| json!({ "type": "object" })),
            )
        })
        .collect();
    json!({ "tools": tools })
}

/// Runs one tool on a connection of the pool, at most as many at once as it holds; audits it.
async fn tools_call(s: &Arc<Shared>, token: &Token, params: Value) -> Result<Value, (i64, String)> {
    let Some(name) = params.get("name").and_then(Value::as_str).map(str::to_owned) else {
        return Err((code::INVALID_PARAMS, "tools/call: `name` (a tool from tools/list) is required".to_owned()));
    };
    let args = params.get("arguments").cloned().unwrap_or(Value::Null);
    let repo = args.get("repository").and_then(Value::as_str).map(str::to_owned);
    let started = Instant::now();
    let outcome = {
        let _slot = s.running.acquire().await.expect("the semaphore is never closed");
        let (pool, reader, tool) = (s.pool.clone(), Reader::Token(token.id), name.clone());
        tokio::task::spawn_blocking(move || {
            let mut conn = pool.get().map_err(|e| e.to_string())?;
            Ok::<_, String>(crate::tools::remote::call(&mut conn, reader, &tool, args))
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r)
    };
    let took = started.elapsed();
    let reply = match outcome {
        Ok(Ok(reply)) => reply,
        Ok(Err(RemoteError::Unknown(tool))) => {
            return Err((code::INVALID_PARAMS, RemoteError::Unknown(tool).to_string()));
        }
        Ok(Err(e)) => failure(e.to_string()),
        Err(why) => failure(format!("the team index cannot be read now ({why}); try again shortly")),
    };
    s.metrics.called(&token.name, &name, took, !reply.is_error);
    s.audit.lock().recover().push(Audited {
        token: token.id,
        tool: name,
        repo,
        millis: took.as_millis().min(u32::MAX as u128) as u32,
        results: reply.results.min(u32::MAX as usize) as u32,
        ok: !reply.is_error,
    });
    Ok(crate::fronts::mcp::tool_result(reply.text, reply.data, reply.is_error))
}

fn failure(text: String) -> RemoteReply {
    RemoteReply { text, data: Value::Null, is_error: true, results: 0 }
}

/// No event stream: the server has nothing to send unasked.
pub(super) async fn get() -> Response {
    let mut r = refuse(StatusCode::METHOD_NOT_ALLOWED, "the team server sends no events: POST requests to /mcp");
    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
    r
}

pub(super) async fn delete(
    State(s): State<Arc<Shared>>,
    Extension(token): Extension<Token>,
    headers: HeaderMap,
) -> Response {
    match session_id(&headers) {
        Some(id) if s.sessions.close(id, token.id) => StatusCode::NO_CONTENT.into_response(),
        _ => refuse(StatusCode::NOT_FOUND, "no such MCP session for this token"),
    }
}
