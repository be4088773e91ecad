//! The Model Context Protocol, served by the daemon itself.
//!
//! `booger mcp` only pumps bytes; everything MCP means lives here: version negotiation in
//! `initialize`, `tools/list` derived from the tool catalogue in booger-proto, `tools/call`
//! through the same dispatch as the CLI, and one resource (`booger://status`).
//!
//! Errors follow the protocol's split: a call that cannot be dispatched (unknown tool,
//! malformed params) is a JSON-RPC error (-32602); a tool that ran and failed answers
//! `isError: true` with a message that says how to fix the call.

pub(crate) mod http;
pub(crate) mod sessions;

use std::sync::Arc;

use booger_proto::tools::Profile;
use booger_proto::wire::{RpcError, code};
use serde_json::{Value, json};

use crate::base::sync::Recover;
use crate::engine::Daemon;
use crate::fronts::connection::Connection;
use crate::tools;

/// Protocol revisions this server speaks, newest first.
pub(crate) const PROTOCOL_VERSIONS: &[&str] = &["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

pub(crate) const STATUS_URI: &str = "booger://status";

const INSTRUCTIONS: &str = "booger is a warm local code index. Use its tools instead of reading \
    files blindly: `status` shows what is indexed, `projects` registers repositories. Every tool \
    defaults to this session's project; pass `project` to ask about another.";

pub(crate) fn invalid_params(message: impl Into<String>) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, message)
}

/// The revision to answer `initialize` with: the client's when booger speaks it, else its
/// newest (the client then decides whether it can continue).
pub(crate) fn negotiate(params: &Value) -> Result<&'static str, RpcError> {
    let requested = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("initialize: `protocolVersion` (a string such as \"2025-11-25\") is required"))?;
    Ok(PROTOCOL_VERSIONS.iter().find(|v| **v == requested).copied().unwrap_or(PROTOCOL_VERSIONS[0]))
}

/// `initialize` on the daemon: the revision, what it serves and how to use it.
pub(crate) fn initialize(params: &Value, conn: &Connection) -> Result<Value, RpcError> {
    let version = negotiate(params)?;
    let requested = params["protocolVersion"].as_str().unwrap_or_default();
    let client = params.pointer("/clientInfo/name").and_then(Value::as_str).unwrap_or("unknown");
    tracing::info!(connection = conn.id, client, requested, negotiated = version, "mcp initialize");
    *conn.mcp_version.lock().recover() = Some(version.to_owned());
    Ok(json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": { "listChanged": false },
            "resources": { "subscribe": false, "listChanged": false },
            "prompts": { "listChanged": false },
        },
        "serverInfo": { "name": "booger", "title": "booger code index", "version": env!("CARGO_PKG_VERSION") },
        "instructions": INSTRUCTIONS,
    }))
}

/// A tool's answer as `tools/call` returns it: the text the model reads, and the data as
/// structured content (its shape is the tool's outputSchema) when there is any.
pub(crate) fn tool_result(text: String, data: Value, is_error: bool) -> Value {
    let mut answer = json!({ "content": [{ "type": "text", "text": text }], "isError": is_error });
    if data.is_object() {
        answer["structuredContent"] = data;
    }
    answer
}

/// The tools of the session's profile (every tool stays callable).
pub(crate) fn tools_list(profile: Profile) -> Value {
    let tools: Vec<Value> = profile.tools().map(|t| tool_entry(t, t.output_schema())).collect();
    json!({ "tools": tools })
}

/// One tool as `tools/list` describes it, with the schema of its answer.
pub(crate) fn tool_entry(t: &booger_proto::tools::ToolSpec, output_schema: Value) -> Value {
    json!({
        "name": t.name,
        "title": t.title,
        "description": t.description,
        "inputSchema": t.input_schema(),
        "outputSchema": output_schema,
        "annotations": t.effect.annotations(),
    })
}

pub(crate) async fn tools_call(params: Value, daemon: Arc<Daemon>, conn: &Connection) -> Result<Value, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("tools/call: `name` (a tool name from tools/list) is required"))?;
    let args = params.get("arguments").cloned().unwrap_or(Value::Null);
    let session = conn.session();
    // Every answer that carries data also carries it as structured content (its shape is the
    // tool's outputSchema). The text is what the model reads: the readable answer, or for
    // tools that answer JSON over MCP (unless the call chose another output mode), the data.
    let as_json = booger_proto::tools::find(name).is_some_and(|t| t.mcp_json)
        && args.get("output_mode").is_none_or(|m| m.is_null() || m == "json");
    let reply = tools::call(daemon, session, name, args, None).await.map_err(|e| invalid_params(e.to_string()))?;
    if reply.is_error {
        return Ok(tool_result(reply.text, Value::Null, true));
    }
    let mut data = reply.data;
    if as_json && let Some(obj) = data.as_object_mut() {
        // Read-your-writes metadata is for search answers; keep it out of the diff.
        obj.remove("index");
        obj.remove("indexes");
    }
    let text = if as_json { data.to_string() } else { reply.text };
    Ok(tool_result(text, data, false))
}

pub(crate) fn resources_list() -> Value {
    json!({ "resources": [{
        "uri": STATUS_URI,
        "name": "status",
        "title": "booger daemon status",
        "description": "The daemon's pid, version, uptime, socket, data directory and registered projects.",
        "mimeType": "application/json",
    }]})
}

pub(crate) fn resources_read(params: &Value, daemon: &Daemon) -> Result<Value, RpcError> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("resources/read: `uri` is required; resources/list names them"))?;
    if uri != STATUS_URI {
        return Err(RpcError::new(
            code::RESOURCE_NOT_FOUND,
            format!("Resource not found: {uri}; resources/list names the available resources"),
        )
        .with_data(json!({ "uri": uri })));
    }
    let text = serde_json::to_string_pretty(&daemon.facts()).expect("facts serialize");
    Ok(json!({ "contents": [{ "uri": STATUS_URI, "mimeType": "application/json", "text": text }] }))
}
