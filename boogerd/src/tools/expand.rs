//! `search-expand`: search, then the outline of the files the best results are in.

use booger_proto::answers::{self, Outline};
use booger_proto::tools::args;

use super::call::{Call, Outcome, answer, failed, filters, quoted};
use crate::domain::search::Query;
use crate::domain::search::format::{self, OutputMode, Page};
use crate::store::search::Filters;

/// What an answer costs unless `max_tokens` says otherwise: about what `search` answers
/// with by default (its content mode stays near 4,000 characters for 10 results). With the
/// general budget of 6,000 tokens three outlines came to 16 KB.
const DEFAULT_MAX_TOKENS: usize = 1_000;

pub(super) fn run(call: &Call, a: args::SearchExpand) -> Outcome {
    let query = a.query.as_str();
    let snap = call.snapshot(a.on.project.as_deref())?;
    let (project, store) = (&snap.project, &snap.store);
    let f = filters(&a.filters);
    let head_limit = a.head_limit.unwrap_or(5);
    let searcher = snap.searcher();
    let hits = searcher.search(&Query::parse(query), query, &f, head_limit).map_err(|e| failed("search-expand", e))?;
    if hits.is_empty() {
        let why = call.explain_empty(project, store, &f, &format!("No matches for {}.", quoted(query)));
        return Ok(answer(why.clone(), &answers::SearchExpand { reason: Some(why), ..Default::default() }));
    }
    let max_tokens = a.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let page = Page { offset: 0, head_limit, max_lines: 0, max_tokens: max_tokens / 3, cursor: None, snippets: false };
    let found = format::render(&hits, &Default::default(), &[], OutputMode::FilesWithMatches, page, "");
    let mut files: Vec<&str> = Vec::new();
    for h in hits.iter().take(page.head_limit) {
        if !files.contains(&h.chunk.path.as_str()) {
            files.push(&h.chunk.path);
        }
    }
    files.truncate(a.top_files.unwrap_or(3));
    let mut text = found.text;
    let per_file = (max_tokens * 2 / 3) / files.len().max(1);
    let mut outlines = Vec::new();
    for file in &files {
        let chunks = store
            .chunks_where(&Filters { path: Some((*file).to_owned()), ..Default::default() }, None, 10_000)
            .unwrap_or_default();
        let o = format::outline(
            &chunks,
            OutputMode::Signatures,
            Page { offset: 0, head_limit: 500, max_lines: 0, max_tokens: per_file, cursor: None, snippets: false },
        );
        text.push_str(&format!("\n\n== outline of {file}\n{}", o.text));
        outlines.push(Outline { path: (*file).to_owned(), symbols: o.results });
    }
    Ok(answer(text, &answers::SearchExpand { results: found.results, outlines: Some(outlines), ..Default::default() }))
}
