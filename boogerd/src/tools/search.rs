//! `search`: ranked chunks for a query, in the output mode the caller can afford.

use booger_proto::answers;
use booger_proto::tools::args;

use super::call::{Call, Outcome, answer, failed, filters, page, quoted};
use crate::domain::search::confidence::{self, Calibration, Confidence};
use crate::domain::search::files::FileHit;
use crate::domain::search::format::{self, OutputMode};
use crate::domain::search::ranking_index::RankingIndex;
use crate::domain::search::{Hit, Query};
use crate::engine::project::Snapshot;
use crate::store::Store;

/// What every ranked search starts from: the query (parsed once), the project's snapshot and
/// what search reads of it, the page, the filters and the output mode (`search`,
/// `semantic-search`, `hybrid-search`).
pub(super) struct Request<'a> {
    pub text: &'a str,
    pub query: Query,
    pub snapshot: Snapshot,
    pub page: format::Page,
    pub filters: crate::store::search::Filters,
    pub mode: OutputMode,
    /// Keep every result whatever the confidence (`eval` measuring the ranking).
    pub uncut: bool,
}

impl<'a> Request<'a> {
    pub(super) fn open(call: &Call, a: &'a args::Search) -> Result<Self, super::ToolError> {
        let q = &a.query;
        let snapshot = call.snapshot(a.on.project.as_deref())?;
        Ok(Self {
            text: &q.query,
            query: Query::parse(&q.query),
            page: page(&q.paging, q.max_lines, 10, 40)?,
            filters: filters(&q.filters),
            mode: OutputMode::of(q.output_mode, OutputMode::Content),
            uncut: call.session.measuring,
            snapshot,
        })
    }
}

pub(super) fn run(call: &Call, a: args::Search) -> Outcome {
    #[cfg(feature = "team")]
    if let Some(answered) = super::team::while_filling(call, &a) {
        return answered;
    }
    let request = Request::open(call, &a)?;
    let hits = request
        .snapshot
        .searcher()
        .search(&request.query, request.text, &request.filters, request.page.reach())
        .map_err(|e| failed("search", e))?;
    request.respond(call, &hits, None, "", true)
}

/// How many candidates an answer with no good match shows.
const CLOSEST: usize = 5;

impl Request<'_> {
    /// The answer for ranked `hits` (or, in files mode, `files` when given: hybrid search
    /// fuses file rankings, semantic search ranks files by its own hits) in the caller's
    /// output mode and budget. Without `files`, the hits are lexical search's, and their
    /// files are ranked by [`crate::domain::search::Searcher::rank_files`]. `note` (why the ranking
    /// is what it is) goes first when not empty. When `judged`, with the ranking index, the answer
    /// carries its confidence, and a first page below the project's threshold says "no good
    /// match", shows the few closest candidates briefly and what to try instead.
    pub(super) fn respond(
        &self,
        call: &Call,
        hits: &[Hit],
        files: Option<Vec<FileHit<'_>>>,
        note: &str,
        judged: bool,
    ) -> Outcome {
        let Self { text: query, query: parsed, snapshot, page, filters, mode, uncut } = self;
        let searcher = snapshot.searcher();
        let (project, store, mode) = (&snapshot.project, &snapshot.store, *mode);
        // The confidence is the lexical side's: semantic answers go without (a concept can
        // match without its words).
        let ranking_index = searcher.ranking.filter(|_| judged);
        if hits.is_empty() && files.as_ref().is_none_or(Vec::is_empty) {
            let why = call.explain_empty(project, store, filters, &format!("No matches for {}.", quoted(query)));
            let text = if note.is_empty() { why.clone() } else { format!("{note}\n{why}") };
            let mut data = answers::Search { total: Some(0), reason: Some(why), ..Default::default() };
            if ranking_index.is_some() {
                Confidence::nothing(&Calibration::of(store)).fill(&mut data);
            }
            return Ok(answer(text, &data));
        }
        let files = match (mode == OutputMode::FilesWithMatches, files) {
            (false, _) => None,
            (true, Some(f)) => Some(f),
            (true, None) => Some(searcher.rank_files(parsed, hits).map_err(|e| failed("search", e))?),
        };
        let confidence = ranking_index.map(|w| judge(w, parsed, hits, files.as_deref(), store));
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
            // The closest candidates of a doubtful answer are listed briefly.
            None if doubtful.is_some() && mode == OutputMode::Content => {
                (self.render(hits, OutputMode::Signatures, page, &header), hits.len())
            }
            None => (self.render(hits, mode, page, &header), hits.len()),
        };
        let mut text = r.text;
        let mut data = answers::Search {
            project: Some(project.name.clone()),
            total: Some(total as u64),
            results: r.results,
            cursor: r.cursor,
            note: (!note.is_empty()).then(|| note.to_owned()),
            ..Default::default()
        };
        if let Some(c) = &confidence {
            c.fill(&mut data);
        }
        if doubtful.is_some() {
            let tries = suggestions();
            text.push_str(&format!("\ntry {}", tries.join("; or ")));
            data.no_good_match = Some(true);
            data.suggestions = Some(tries);
        }
        Ok(answer(text, &data))
    }
}

impl Request<'_> {
    /// A page of ranked chunks in `mode`, their code read for content mode.
    fn render(
        &self,
        hits: &[Hit],
        mode: OutputMode,
        page: format::Page,
        header: &str,
    ) -> format::Rendered<answers::RankedRow> {
        let (from, _, to) = page.span(hits.len());
        let ids: Vec<i64> = hits.iter().take(to).skip(from).map(|h| h.chunk.id).collect();
        let store = &self.snapshot.store;
        let contents =
            if mode == OutputMode::Content { store.contents(&ids).unwrap_or_default() } else { Default::default() };
        format::render(hits, &contents, &self.query.words, mode, page, header)
    }
}

/// How much of the query the first results hold, against the project's threshold: a
/// passage's by its first files, a short query's by its first chunks (a file by its best).
fn judge(w: &RankingIndex, query: &Query, hits: &[Hit], files: Option<&[FileHit<'_>]>, store: &Store) -> Confidence {
    let words = confidence::words_of(query, w);
    if query.passage.is_some() {
        let mut paths: Vec<&str> = match files {
            Some(f) => f.iter().take(10).map(|f| f.path).collect(),
            None => hits.iter().take(10).map(|h| h.chunk.path.as_str()).collect(),
        };
        paths.dedup();
        return confidence::assess_files(w, &words, &paths, &Calibration::of(store));
    }
    let first: Vec<i64> = match files {
        Some(f) => f.iter().take(10).map(|f| f.chunks[0].chunk.id).collect(),
        None => hits.iter().take(10).map(|h| h.chunk.id).collect(),
    };
    confidence::assess(w, &words, &first, &Calibration::of(store))
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
        quoted(query),
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
