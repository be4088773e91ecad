//! `search-expand`: search, then the outline of the files the best results are in.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, explain_empty, filters, int, project_store, scope, volatile};
use crate::domain::search::format::{self, Mode, Page};
use crate::engine::Daemon;
use crate::store::search::Filters;

/// What an answer costs unless `max_tokens` says otherwise: about what `search` answers
/// with by default (its content mode stays near 4,000 characters for 10 results). With the
/// general budget of 6,000 tokens three outlines came to 16 KB.
const DEFAULT_MAX_TOKENS: usize = 1_000;

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let query = args.get("query").and_then(Value::as_str).unwrap_or_default();
    let (project, store) = match project_store(daemon, session, args) {
        Ok(ps) => ps,
        Err(reply) => return reply,
    };
    let f = filters(args);
    let warm = daemon.projects.get(&project.root).warm(&store);
    let hits = match crate::domain::search::search(
        &store,
        warm.as_deref(),
        query,
        &f,
        &volatile(&store, scope(session, args)),
        int(args, "head_limit", 5),
    ) {
        Ok(h) => h,
        Err(e) => return ToolReply::error(format!("search-expand: {e}")),
    };
    if hits.is_empty() {
        let why =
            explain_empty(&project, &store, &f, &format!("No matches for {shown}.", shown = super::quoted(query)));
        return ToolReply::ok(why.clone(), json!({ "results": [], "reason": why }));
    }
    let max_tokens = int(args, "max_tokens", DEFAULT_MAX_TOKENS);
    let page = Page {
        offset: 0,
        head_limit: int(args, "head_limit", 5),
        max_lines: 0,
        max_tokens: max_tokens / 3,
        cursor: None,
        snippets: false,
    };
    let found = format::render(&hits, &Default::default(), &[], Mode::FilesWithMatches, page, "");
    let mut files: Vec<&str> = Vec::new();
    for h in hits.iter().take(page.head_limit) {
        if !files.contains(&h.chunk.path.as_str()) {
            files.push(&h.chunk.path);
        }
    }
    files.truncate(int(args, "top_files", 3));
    let mut text = found.text;
    let per_file = (max_tokens * 2 / 3) / files.len().max(1);
    let mut outlines = Vec::new();
    for file in &files {
        let chunks = store
            .chunks_where(&Filters { path: Some((*file).to_owned()), ..Default::default() }, None, 10_000)
            .unwrap_or_default();
        let o = format::outline(
            &chunks,
            Mode::Signatures,
            Page { offset: 0, head_limit: 500, max_lines: 0, max_tokens: per_file, cursor: None, snippets: false },
        );
        text.push_str(&format!("\n\n== outline of {file}\n{}", o.text));
        outlines.push(json!({ "path": file, "symbols": o.results }));
    }
    ToolReply::ok(text, json!({ "results": found.results, "outlines": outlines }))
}
