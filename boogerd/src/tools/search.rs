//! `search`: ranked chunks for a query, in the output mode the caller can afford.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, explain_empty, filters, project_store, scope, volatile};
use crate::domain::search::confidence::{self, Calibration, Confidence};
use crate::domain::search::format::{self, Mode};
use crate::engine::Daemon;

/// What every ranked search starts from: the query, the project and its index, the page
/// and the filters (`search`, `semantic-search`, `hybrid-search`).
pub(super) struct Request<'a> {
    pub query: &'a str,
    pub project: crate::engine::registry::Project,
    pub store: std::sync::Arc<crate::store::Store>,
    pub page: format::Page,
    pub filters: crate::store::search::Filters,
    /// Keep every result whatever the confidence (`eval` measuring the ranking).
    pub uncut: bool,
}

impl<'a> Request<'a> {
    pub fn open(daemon: &Daemon, session: &Session, args: &'a Value) -> Result<Self, ToolReply> {
        let query = args.get("query").and_then(Value::as_str).unwrap_or_default();
        let (project, store) = project_store(daemon, session, args)?;
        let page = super::page(args, 10, 40)?;
        Ok(Self { query, project, store, page, filters: filters(args), uncut: session.measuring })
    }
}

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let request = match Request::open(daemon, session, args) {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    let ctx = volatile(&request.store, scope(session, args));
    let warm = daemon.projects.get(&request.project.root).warm(&request.store);
    let reach = request.page.reach();
    let hits = match crate::domain::search::search(
        &request.store,
        warm.as_deref(),
        request.query,
        &request.filters,
        &ctx,
        reach,
    ) {
        Ok(h) => h,
        Err(e) => return ToolReply::error(format!("search: {e}")),
    };
    request.respond(args, &hits, None, "", warm.as_deref())
}

/// How many candidates an answer with no good match shows.
const CLOSEST: usize = 5;

impl Request<'_> {
    /// The answer for ranked `hits` (or, in files mode, `files` when given: hybrid search
    /// fuses file rankings, semantic search ranks files by its own hits) in the caller's
    /// output mode and budget. Without `files`, the hits are lexical search's, and their
    /// files are ranked by [`crate::domain::search::files::rank`]. `note` (why the ranking
    /// is what it is) goes first when not empty. With the ranking index (`warm`), the answer
    /// carries its confidence, and a first page below the project's threshold says "no good
    /// match", shows the few closest candidates briefly and what to try instead.
    pub fn respond(
        &self,
        args: &Value,
        hits: &[crate::domain::search::Hit],
        files: Option<Vec<crate::domain::search::files::FileHit<'_>>>,
        note: &str,
        warm: Option<&crate::domain::search::postings::Postings>,
    ) -> ToolReply {
        let Self { query, project, store, page, filters, uncut } = self;
        let mode = Mode::parse(args.get("output_mode").and_then(Value::as_str), Mode::Content);
        if hits.is_empty() && files.as_ref().is_none_or(Vec::is_empty) {
            let why = explain_empty(
                project,
                store,
                filters,
                &format!("No matches for {shown}.", shown = super::quoted(query)),
            );
            let text = if note.is_empty() { why.clone() } else { format!("{note}\n{why}") };
            let mut data = json!({ "results": [], "total": 0, "reason": why });
            if warm.is_some() {
                merge(&mut data, &Confidence::nothing(&Calibration::of(store)));
            }
            return ToolReply::ok(text, data);
        }
        let parsed = crate::domain::search::Query::parse(query);
        let files = match (mode == Mode::FilesWithMatches, files) {
            (false, _) => None,
            (true, Some(f)) => Some(f),
            (true, None) => match crate::domain::search::rank_files(store, warm, &parsed, hits) {
                Ok(f) => Some(f),
                Err(e) => return ToolReply::error(format!("search: {e}")),
            },
        };
        // The first results as the answer shows them: a file by its best chunk.
        let first: Vec<i64> = match &files {
            Some(f) => f.iter().take(10).map(|f| f.chunks[0].chunk.id).collect(),
            None => hits.iter().take(10).map(|h| h.chunk.id).collect(),
        };
        let confidence = warm.map(|w| {
            let words = confidence::words_of(&parsed, w);
            if parsed.passage.is_some() {
                let mut paths: Vec<&str> = match &files {
                    Some(f) => f.iter().take(10).map(|f| f.path).collect(),
                    None => hits.iter().take(10).map(|h| h.chunk.path.as_str()).collect(),
                };
                paths.dedup();
                confidence::assess_files(w, &words, &paths, &Calibration::of(store))
            } else {
                confidence::assess(w, &words, &first, &Calibration::of(store))
            }
        });
        let mut header = if note.is_empty() { String::new() } else { format!("{note}\n") };
        let mut page = *page;
        // A passage's answer is never cut to "no good match": the threshold is calibrated on
        // short queries, and a report pasted into a project is about it (on the issue set,
        // reports about other projects of the same language scored as high as their own).
        let doubtful = confidence
            .as_ref()
            .filter(|c| !c.high() && !uncut && page.offset == 0 && page.cursor.is_none() && parsed.passage.is_none());
        if let Some(c) = doubtful {
            header.push_str(&no_good_match(query, c));
            page.head_limit = page.head_limit.min(CLOSEST);
        }
        let (r, total) = match &files {
            Some(files) => (format::render_files(files, page, &header), files.len()),
            None => {
                // The closest candidates of a doubtful answer are listed briefly.
                let mode = if doubtful.is_some() && mode == Mode::Content { Mode::Signatures } else { mode };
                let (from, _, to) = page.span(hits.len());
                let ids: Vec<i64> = hits.iter().take(to).skip(from).map(|h| h.chunk.id).collect();
                let contents =
                    if mode == Mode::Content { store.contents(&ids).unwrap_or_default() } else { Default::default() };
                (format::render(hits, &contents, &parsed.words, mode, page, &header), hits.len())
            }
        };
        let mut text = r.text;
        let mut data = json!({ "project": project.name, "total": total, "results": r.results, "cursor": r.cursor });
        if !note.is_empty() {
            data["note"] = json!(note);
        }
        if let Some(c) = &confidence {
            merge(&mut data, c);
        }
        if doubtful.is_some() {
            let tries = suggestions();
            text.push_str(&format!("\ntry {}", tries.join("; or ")));
            data["no_good_match"] = json!(true);
            data["suggestions"] = json!(tries);
        }
        ToolReply::ok(text, data)
    }
}

/// Puts the confidence's fields at the top level of an answer's data.
fn merge(data: &mut Value, c: &Confidence) {
    for (k, v) in c.json().as_object().into_iter().flatten() {
        data[k] = v.clone();
    }
}

/// The first line of an answer with no good match.
fn no_good_match(query: &str, c: &Confidence) -> String {
    let unknown = if c.unknown.is_empty() {
        String::new()
    } else {
        let words: Vec<String> = c.unknown.iter().take(5).map(|w| format!("\"{w}\"")).collect();
        format!("; no file here has {}", words.join(", "))
    };
    format!(
        "no good match for {}: the closest result holds {} of the query's {} word(s) (confidence {:.2}, below {:.2}{}){unknown}\n",
        super::quoted(query),
        c.held,
        c.words,
        c.score,
        c.threshold,
        if c.calibrated { ", calibrated on this project's history" } else { "" },
    )
}

/// What to try when nothing matched well.
fn suggestions() -> Vec<String> {
    vec![
        "other words for what the code does (names, terms the code itself would use)".to_owned(),
        format!("{} for an exact name or string", crate::base::hints::tool("grep", "pattern")),
        format!("a path filter ({}) to search one part of the project", crate::base::hints::name("path_prefix")),
    ]
}
