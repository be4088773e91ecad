//! `changed-since`: the symbols of files re-indexed after a time.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, filters, project_store};
use crate::domain::search::format::{self, Mode};
use crate::engine::Daemon;

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let since = args.get("since").and_then(Value::as_str).unwrap_or_default();
    let Some(unix) = crate::base::time::parse_rfc3339(since) else {
        return ToolReply::error(format!(
            "changed-since: {since:?} is not an RFC 3339 time; write it like 2026-11-22T09:30:00Z or 2026-11-22T10:30:00+01:00 (or a date, 2026-11-22)"
        ));
    };
    let (project, store) = match project_store(daemon, session, args) {
        Ok(ps) => ps,
        Err(reply) => return reply,
    };
    // Stored times are `YYYY-MM-DDTHH:MM:SSZ`, so they compare as strings.
    let after = crate::base::time::rfc3339(unix);
    let f = filters(args);
    let chunks = match store.chunks_where(&f, Some(&after), 200_000) {
        Ok(c) => c,
        Err(e) => return ToolReply::error(format!("changed-since: {e}")),
    };
    if chunks.is_empty() {
        let last = store.meta("last_indexed_at").ok().flatten().unwrap_or_default();
        return ToolReply::ok(
            format!("Nothing re-indexed in {} after {after} (last index run: {last}).", project.name),
            json!({ "results": [], "since": after }),
        );
    }
    let mode = Mode::parse(args.get("output_mode").and_then(Value::as_str), Mode::Signatures);
    let page = match super::page(args, 200, 0) {
        Ok(p) => p,
        Err(reply) => return reply,
    };
    let r = format::outline(&chunks, mode, page);
    ToolReply::ok(format!("changed since {after}: {}", r.text), json!({ "since": after, "results": r.results }))
}
