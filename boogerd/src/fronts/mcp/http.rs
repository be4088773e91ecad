//! MCP's Streamable HTTP transport as both HTTP fronts speak it (the daemon's `/mcp` and the
//! team server's): its headers, the revision header's check, and the two kinds of reply, a
//! plain-text refusal when no JSON-RPC message can be answered and a JSON body otherwise.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::PROTOCOL_VERSIONS;

pub(crate) const SESSION_HEADER: &str = "mcp-session-id";
pub(crate) const VERSION_HEADER: &str = "mcp-protocol-version";

/// A plain-text refusal at the HTTP level (no JSON-RPC message could be answered).
pub(crate) fn refuse(status: StatusCode, why: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{why}\n")).into_response()
}

pub(crate) fn json_reply(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The session a request names, if any.
pub(crate) fn session_id(headers: &HeaderMap) -> Option<&str> {
    headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok())
}

/// `response` carrying the id of the session `initialize` opened.
pub(crate) fn with_session(mut response: Response, id: &str) -> Response {
    response.headers_mut().insert(SESSION_HEADER, HeaderValue::from_str(id).expect("hex is a valid header"));
    response
}

/// The refusal of a request whose `MCP-Protocol-Version` is not one booger speaks.
pub(crate) fn unknown_version(headers: &HeaderMap) -> Option<Response> {
    let v = headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok())?;
    (!PROTOCOL_VERSIONS.contains(&v)).then(|| {
        let known = PROTOCOL_VERSIONS.join(", ");
        refuse(StatusCode::BAD_REQUEST, &format!("MCP-Protocol-Version {v} is not one booger speaks ({known})"))
    })
}
