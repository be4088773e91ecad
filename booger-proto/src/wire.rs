//! The socket protocol between `booger` and `boogerd`.
//!
//! One JSON-RPC 2.0 message per line, in both directions (the MCP stdio framing, so
//! `booger mcp` is a plain byte pump). A connection starts with a [`HELLO`] request that
//! checks [`PROTOCOL_VERSION`] and names the connection's default project and session; then
//! MCP methods (`initialize`, `tools/call`, ...) and the booger methods below may follow.

use serde_json::{Value, json};

/// Bumped whenever a change would make an older client and a newer daemon misunderstand
/// each other. Client and daemon compare it in [`HELLO`].
pub const PROTOCOL_VERSION: u32 = 1;

/// `{"protocol": u32, "client": str, "project": str?, "session": str?}` →
/// `{"protocol": u32, "version": str, "pid": u32}`.
pub const HELLO: &str = "booger/hello";
/// The `client` a shell's `booger <tool>` says hello as: answers speak of flags to it.
pub const SHELL_CLIENT: &str = "booger-cli";
/// `{"tool": str, "arguments": object, "progress": str?}` → [`ToolReply`] as JSON. Used by
/// the CLI: the same handler as MCP `tools/call`, but the reply keeps both the text and the
/// structured data. `progress` is a token the caller picks to ask [`PROGRESS`] about the call
/// while it runs.
pub const CALL: &str = "booger/call";
/// `{"client": "claude-code", "event": object}` → `{"output": str|null}`: what a client's
/// hook (`booger hook`) prints for the event; null when booger leaves it to the client.
pub const HOOK: &str = "booger/hook";
/// `{"token": str}` → the [`Progress`] of the running call made with that token, or `null`
/// (not running, or nothing to report). Asked on another connection: a call holds its own.
pub const PROGRESS: &str = "booger/progress";
/// No params → daemon facts (pid, version, uptime, socket, data dir, projects).
pub const DAEMON_STATUS: &str = "daemon/status";
/// No params → `{}`; the daemon then stops gracefully.
pub const SHUTDOWN: &str = "shutdown";
/// The end of a client's input, sent as [`END_OF_INPUT_LINE`] (a notification): the daemon
/// answers what is in flight, then closes. The half-close of transports that have none
/// (Windows named pipes); on a Unix socket the client shuts its write half instead.
pub const END_OF_INPUT: &str = "booger/end";
/// The one spelling of the [`END_OF_INPUT`] notification, matched byte for byte.
pub const END_OF_INPUT_LINE: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"booger/end\"}";

/// JSON-RPC 2.0 error codes.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP: `resources/read` of a URI the server does not have.
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// booger: client and daemon speak different protocol versions.
    pub const PROTOCOL_MISMATCH: i64 = -32010;
    /// booger mcp: the daemon stopped while a request was in flight; it reconnected, and the
    /// request can be sent again.
    pub const DAEMON_RESTARTED: i64 = -32011;
}

/// What a tool answers. `text` is for people and agents (MCP `content`); `data` is the same
/// answer as structured JSON (`booger <tool> --json`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReply {
    pub text: String,
    pub data: Value,
    pub is_error: bool,
    /// The work goes on after this answer (which says how far it got): the same call again
    /// answers with more, or with the result. A client that waits calls again.
    pub running: bool,
}

impl ToolReply {
    pub fn ok(text: impl Into<String>, data: Value) -> Self {
        Self { text: text.into(), data, is_error: false, running: false }
    }

    /// A failed call. `message` should say how to fix the call.
    pub fn error(message: impl Into<String>) -> Self {
        let text = message.into();
        Self { data: json!({ "error": text }), text, is_error: true, running: false }
    }

    /// An answer about work that goes on (see [`ToolReply::running`]).
    pub fn still_running(text: impl Into<String>, data: Value) -> Self {
        Self { running: true, ..Self::ok(text, data) }
    }

    pub fn to_json(&self) -> Value {
        let mut v = json!({ "text": self.text, "data": self.data, "isError": self.is_error });
        if self.running {
            v["running"] = Value::Bool(true);
        }
        v
    }

    pub fn from_json(v: &Value) -> Option<Self> {
        Some(Self {
            text: v.get("text")?.as_str()?.to_owned(),
            data: v.get("data").cloned().unwrap_or(Value::Null),
            is_error: v.get("isError").and_then(Value::as_bool).unwrap_or(false),
            running: v.get("running").and_then(Value::as_bool).unwrap_or(false),
        })
    }
}

/// How far a running call got, in its own unit (`files`, `queries`): what [`PROGRESS`]
/// answers, and what a client draws without knowing the tool.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    pub done: u64,
    /// 0 while the total is not known yet.
    pub total: u64,
    pub unit: String,
    /// Units a second so far, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_s: Option<f64>,
    /// Seconds left at that rate, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eta_s: Option<u64>,
}

/// A JSON-RPC request line (with a trailing newline); `Value::Null` params are left out.
pub fn request_line(id: u64, method: &str, params: Value) -> String {
    let mut req = json!({ "jsonrpc": "2.0", "id": id, "method": method });
    if !params.is_null() {
        req["params"] = params;
    }
    let mut s = req.to_string();
    s.push('\n');
    s
}

/// Splits a response into its result or its error object.
pub fn response_result(v: &Value) -> Result<&Value, RpcError> {
    if let Some(err) = v.get("error") {
        let mut e = RpcError::new(
            err.get("code").and_then(Value::as_i64).unwrap_or(code::INTERNAL_ERROR),
            err.get("message").and_then(Value::as_str).unwrap_or("unknown error"),
        );
        e.data = err.get("data").cloned();
        return Err(e);
    }
    v.get("result").ok_or_else(|| RpcError::new(code::INTERNAL_ERROR, "response has neither result nor error"))
}

/// A JSON-RPC error object: what a daemon's method answers when it cannot, and what a client
/// reads from such an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError { code, message: message.into(), data: None }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The error as a response's `error` member.
    pub fn to_json(&self) -> Value {
        let mut e = json!({ "code": self.code, "message": self.message });
        if let Some(data) = &self.data {
            e["data"] = data.clone();
        }
        e
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}
