//! `batch`: several tool calls in one round trip, answered in order.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, lookup};
use crate::Daemon;

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let calls = args.get("calls").and_then(Value::as_array).cloned().unwrap_or_default();
    if calls.is_empty() {
        return ToolReply::error(
            "batch: `calls` is empty; give up to 20 {\"tool\": ..., \"arguments\": {...}} objects",
        );
    }
    let mut text = String::new();
    let mut results = Vec::new();
    let mut failed = 0;
    for (i, call) in calls.iter().enumerate() {
        let name = call.get("tool").and_then(Value::as_str).unwrap_or_default();
        let call_args = call.get("arguments").cloned().unwrap_or(Value::Null);
        let reply = if name == "batch" {
            ToolReply::error("batch: a batch cannot contain another batch; list its calls directly")
        } else {
            match lookup(name) {
                None => ToolReply::error(format!("unknown tool `{name}`; tools/list names the available tools")),
                Some((spec, handler)) => match spec.validate(&call_args) {
                    Err(message) => ToolReply::error(message),
                    // A batch is read-only as a whole only if each of its calls is.
                    Ok(()) => match super::refused_read_only(session, spec) {
                        Some(refusal) => refusal,
                        None => match super::paths::prepare(daemon, session, name, call_args) {
                            Ok(a) => handler(daemon, session, &a),
                            Err(message) => ToolReply::error(message),
                        },
                    },
                },
            }
        };
        failed += usize::from(reply.is_error);
        text.push_str(&format!(
            "## {}. {name}{}\n{}\n\n",
            i + 1,
            if reply.is_error { " (error)" } else { "" },
            reply.text
        ));
        results.push(json!({ "tool": name, "isError": reply.is_error, "text": reply.text, "data": reply.data }));
    }
    // The batch itself succeeded; each call reports its own error.
    let mut reply = ToolReply::ok(text.trim_end(), json!({ "results": results, "failed": failed }));
    reply.is_error = failed == calls.len();
    reply
}
