//! `batch`: several tool calls in one round trip, answered in order.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, lookup};
use crate::engine::Daemon;

/// What a batch's answer may hold, text and structured content together: three answers at
/// the default budget.
const BUDGET_CHARS: usize =
    3 * crate::domain::search::format::DEFAULT_MAX_TOKENS * crate::domain::search::format::CHARS_PER_TOKEN;

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let calls = args.get("calls").and_then(Value::as_array).cloned().unwrap_or_default();
    if calls.is_empty() {
        return ToolReply::error(
            "batch: `calls` is empty; give up to 20 {\"tool\": ..., \"arguments\": {...}} objects",
        );
    }
    let mut text = String::new();
    let mut results = Vec::new();
    let mut spent = 0;
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
        // One budget for the whole answer, text and structured content alike: twenty calls
        // at their own budgets would be twenty answers' worth. A call past it is run but not
        // shown, and says how to see it.
        let size = reply.text.len() + reply.data.to_string().len();
        let (shown, data) = if spent + size <= BUDGET_CHARS || spent == 0 {
            spent += size;
            (reply.text, reply.data)
        } else {
            let why = format!(
                "[not shown: the batch's answer reached its budget of {} tokens; call {name} on its own]",
                BUDGET_CHARS / crate::domain::search::format::CHARS_PER_TOKEN
            );
            (why, Value::Null)
        };
        text.push_str(&format!("## {}. {name}{}\n{shown}\n\n", i + 1, if reply.is_error { " (error)" } else { "" }));
        results.push(json!({ "tool": name, "isError": reply.is_error, "text": shown, "data": data }));
    }
    // The batch itself succeeded; each call reports its own error.
    let mut reply = ToolReply::ok(text.trim_end(), json!({ "results": results, "failed": failed }));
    reply.is_error = failed == calls.len();
    reply
}
