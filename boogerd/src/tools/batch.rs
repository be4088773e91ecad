//! `batch`: several tool calls in one round trip, answered in order.

use booger_proto::answers::{self, Answered};
use booger_proto::tools::args;
use booger_proto::wire::ToolReply;
use serde_json::Value;

use super::call::{Call, Outcome, ToolError, answer};
use super::lookup;

/// What a batch's answer may hold, text and structured content together: three answers at
/// the default budget.
const BUDGET_CHARS: usize =
    3 * crate::domain::search::format::DEFAULT_MAX_TOKENS * crate::domain::search::format::CHARS_PER_TOKEN;

pub(super) fn run(call: &Call, a: args::Batch) -> Outcome {
    let calls = a.calls;
    if calls.is_empty() {
        return Err(ToolError::Refused(
            "batch: `calls` is empty; give up to 20 {\"tool\": ..., \"arguments\": {...}} objects".to_owned(),
        ));
    }
    let mut text = String::new();
    let mut results = Vec::new();
    let mut spent = 0;
    let mut failed = 0;
    for (i, one) in calls.iter().enumerate() {
        let name = one.get("tool").and_then(Value::as_str).unwrap_or_default();
        let reply = within(call, name, one.get("arguments").cloned().unwrap_or(Value::Null));
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
        results.push(Answered { tool: name.to_owned(), is_error: reply.is_error, text: Some(shown), data: Some(data) });
    }
    // The batch itself succeeded; each call reports its own error.
    let mut reply = answer(text.trim_end(), &answers::Batch { results, failed: failed as u64, ..Default::default() });
    reply.is_error = failed == calls.len();
    Ok(reply)
}

/// One call of the batch, checked as a call on its own would be, run within the batch's.
fn within(call: &Call, name: &str, arguments: Value) -> ToolReply {
    if name == "batch" {
        return ToolReply::error("batch: a batch cannot contain another batch; list its calls directly");
    }
    let Some((spec, handler)) = lookup(name) else {
        return ToolReply::error(format!("unknown tool `{name}`; tools/list names the available tools"));
    };
    if let Err(message) = spec.validate(&arguments) {
        return ToolReply::error(message);
    }
    // A batch is read-only as a whole only if each of its calls is.
    if let Some(refusal) = super::refused_read_only(call.session, spec) {
        return refusal;
    }
    match super::paths::prepare(call.daemon, call.session, name, arguments) {
        Ok(a) => handler(call, &a).unwrap_or_else(ToolReply::from),
        Err(message) => ToolReply::error(message),
    }
}
