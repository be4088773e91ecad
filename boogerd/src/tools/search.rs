//! `search`: ranked chunks for a query, in the output mode the caller can afford.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, explain_empty, filters, project_store, scope, volatile};
use crate::Daemon;
use crate::search::format::{self, Mode};

/// What every ranked search starts from: the query, the project and its index, the page
/// and the filters (`search`, `semantic-search`, `hybrid-search`).
pub(super) struct Request<'a> {
    pub query: &'a str,
    pub project: crate::registry::Project,
    pub store: std::sync::Arc<crate::store::Store>,
    pub page: format::Page,
    pub filters: crate::store::search::Filters,
}

impl<'a> Request<'a> {
    pub fn open(daemon: &Daemon, session: &Session, args: &'a Value) -> Result<Self, ToolReply> {
        let query = args.get("query").and_then(Value::as_str).unwrap_or_default();
        let (project, store) = project_store(daemon, session, args)?;
        let page = super::page(args, 10, 40)?;
        Ok(Self { query, project, store, page, filters: filters(args) })
    }
}

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let Request { query, project, store, page, filters } = match Request::open(daemon, session, args) {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    let ctx = volatile(&store, scope(session, args));
    let warm = daemon.projects.get(&project.root).warm(&store);
    let hits = match crate::search::search(&store, warm.as_deref(), query, &filters, &ctx, page.reach()) {
        Ok(h) => h,
        Err(e) => return ToolReply::error(format!("search: {e}")),
    };
    respond(&project, &store, args, &filters, &hits, page, query, "")
}

/// The answer for ranked `hits` in the caller's output mode and budget; `note` (why the
/// ranking is what it is) goes first when not empty.
#[allow(clippy::too_many_arguments)]
pub(super) fn respond(
    project: &crate::registry::Project,
    store: &crate::store::Store,
    args: &Value,
    filters: &crate::store::search::Filters,
    hits: &[crate::search::Hit],
    page: format::Page,
    query: &str,
    note: &str,
) -> ToolReply {
    let mode = Mode::parse(args.get("output_mode").and_then(Value::as_str), Mode::Content);
    if hits.is_empty() {
        let why =
            explain_empty(project, store, filters, &format!("No matches for {shown}.", shown = super::quoted(query)));
        let text = if note.is_empty() { why.clone() } else { format!("{note}\n{why}") };
        return ToolReply::ok(text, json!({ "results": [], "total": 0, "reason": why }));
    }
    let header = if note.is_empty() { String::new() } else { format!("{note}\n") };
    if mode == Mode::FilesWithMatches {
        let files = crate::search::files::by_file(hits);
        let r = format::render_files(&files, page, &header);
        let mut data =
            json!({ "project": project.name, "total": files.len(), "results": r.results, "cursor": r.cursor });
        if !note.is_empty() {
            data["note"] = json!(note);
        }
        return ToolReply::ok(r.text, data);
    }
    let (from, _, to) = page.span(hits.len());
    let ids: Vec<i64> = hits.iter().take(to).skip(from).map(|h| h.chunk.id).collect();
    let contents = if mode == Mode::Content { store.contents(&ids).unwrap_or_default() } else { Default::default() };
    let words = crate::search::Query::parse(query).words;
    let r = format::render(hits, &contents, &words, mode, page, &header);
    let mut data = json!({ "project": project.name, "total": hits.len(), "results": r.results, "cursor": r.cursor });
    if !note.is_empty() {
        data["note"] = json!(note);
    }
    ToolReply::ok(r.text, data)
}
