//! `symbols`: the outline of a file or directory.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, explain_empty, filters, int, project_store};
use crate::Daemon;
use crate::search::format::{self, Cursor, Mode, Page};

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
    let cursor = args.get("cursor").and_then(Value::as_str).and_then(Cursor::parse);
    let mode = Mode::parse(args.get("output_mode").and_then(Value::as_str), Mode::Signatures);
    let page = Page {
        offset: int(args, "offset", 0),
        head_limit: int(args, "head_limit", 200),
        max_lines: 0,
        max_tokens: int(args, "max_tokens", format::DEFAULT_MAX_TOKENS),
    };
    let r = format::outline(&chunks, mode, page, cursor);
    ToolReply::ok(r.text, json!({ "project": project.name, "results": r.results, "cursor": r.cursor }))
}
