//! `search`: ranked chunks for a query, in the output mode the caller can afford.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, explain_empty, filters, project_store, scope, volatile};
use crate::Daemon;
use crate::search::format::{self, Mode};

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let query = args.get("query").and_then(Value::as_str).unwrap_or_default();
    let (project, store) = match project_store(daemon, session, args) {
        Ok(ps) => ps,
        Err(reply) => return reply,
    };
    let page = match super::page(args, 10, 40) {
        Ok(p) => p,
        Err(reply) => return reply,
    };
    let filters = filters(args);
    let ctx = volatile(&store, scope(session, args));
    let warm = daemon.projects.get(&project.root).warm(&store);
    let hits = match crate::search::search(&store, warm.as_deref(), query, &filters, &ctx, page.reach()) {
        Ok(h) => h,
        Err(e) => return ToolReply::error(format!("search: {e}")),
    };
    let mode = Mode::parse(args.get("output_mode").and_then(Value::as_str), Mode::Content);
    if hits.is_empty() {
        let why = explain_empty(&project, &store, &filters, &format!("No matches for {query:?}."));
        return ToolReply::ok(why.clone(), json!({ "results": [], "total": 0, "reason": why }));
    }
    let (from, _, to) = page.span(hits.len());
    let ids: Vec<i64> = hits.iter().take(to).skip(from).map(|h| h.chunk.id).collect();
    let contents = if mode == Mode::Content { store.contents(&ids).unwrap_or_default() } else { Default::default() };
    let r = format::render(&hits, &contents, mode, page, "");
    ToolReply::ok(
        r.text,
        json!({ "project": project.name, "total": hits.len(), "results": r.results, "cursor": r.cursor }),
    )
}
