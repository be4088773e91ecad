//! `search`: ranked chunks for a query, in the output mode the caller can afford.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, explain_empty, filters, int, project_store, scope, volatile};
use crate::Daemon;
use crate::search::format::{self, Cursor, Mode, Page};

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let query = args.get("query").and_then(Value::as_str).unwrap_or_default();
    let (project, store) = match project_store(daemon, session, args) {
        Ok(ps) => ps,
        Err(reply) => return reply,
    };
    let cursor = match args.get("cursor").and_then(Value::as_str) {
        Some(c) => match Cursor::parse(c) {
            Some(c) => Some(c),
            None => {
                return ToolReply::error(format!(
                    "search: cursor {c:?} is not one this tool returned; drop it to start over"
                ));
            }
        },
        None => None,
    };
    let filters = filters(args);
    let ctx = volatile(&store, scope(session, args));
    let warm = daemon.projects.get(&project.root).warm(&store);
    let need = match args.get("cursor").and_then(Value::as_str).and_then(Cursor::parse) {
        Some(c) => c.end,
        None => int(args, "offset", 0) + int(args, "head_limit", 10),
    };
    let hits = match crate::search::search(&store, warm.as_deref(), query, &filters, &ctx, need) {
        Ok(h) => h,
        Err(e) => return ToolReply::error(format!("search: {e}")),
    };
    let mode = Mode::parse(args.get("output_mode").and_then(Value::as_str), Mode::Content);
    if hits.is_empty() {
        let why = explain_empty(&project, &store, &filters, &format!("No matches for {query:?}."));
        return ToolReply::ok(why.clone(), json!({ "results": [], "total": 0, "reason": why }));
    }
    let page = Page {
        offset: int(args, "offset", 0),
        head_limit: int(args, "head_limit", 10),
        max_lines: int(args, "max_lines", 40),
        max_tokens: int(args, "max_tokens", format::DEFAULT_MAX_TOKENS),
    };
    let (from, to) = match cursor {
        Some(c) => (c.index, c.end),
        None => (page.offset, page.offset + page.head_limit),
    };
    let ids: Vec<i64> = hits.iter().take(to).skip(from).map(|h| h.chunk.id).collect();
    let contents = if mode == Mode::Content { store.contents(&ids).unwrap_or_default() } else { Default::default() };
    let r = format::render(&hits, &contents, mode, page, cursor, "");
    ToolReply::ok(
        r.text,
        json!({ "project": project.name, "total": hits.len(), "results": r.results, "cursor": r.cursor }),
    )
}
