//! `symbols`: the outline of a file or directory.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, explain_empty, filters, project_store};
use crate::domain::search::format::{self, Mode};
use crate::engine::Daemon;

/// Outlines stop at this many chunks (a whole large project); paging goes through them.
const OUTLINE_MAX: usize = 200_000;

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let (project, store) = match project_store(daemon, session, args) {
        Ok(ps) => ps,
        Err(reply) => return reply,
    };
    let mut f = filters(args);
    f.path = args
        .get("path")
        .and_then(Value::as_str)
        .map(|p| p.trim_start_matches("./").to_owned())
        .filter(|p| !p.is_empty());
    let chunks = match store.chunks_where(&f, None, OUTLINE_MAX) {
        Ok(c) => c,
        Err(e) => return ToolReply::error(format!("symbols: {e}")),
    };
    if chunks.is_empty() {
        let why = explain_empty(&project, &store, &f, "No symbols match.");
        return ToolReply::ok(why.clone(), json!({ "results": [], "reason": why }));
    }
    let mode = Mode::parse(args.get("output_mode").and_then(Value::as_str), Mode::Signatures);
    let page = match super::page(args, 200, 0) {
        Ok(p) => p,
        Err(reply) => return reply,
    };
    let r = format::outline(&chunks, mode, page);
    ToolReply::ok(r.text, json!({ "project": project.name, "results": r.results, "cursor": r.cursor }))
}
