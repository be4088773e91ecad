//! Lexical search: FTS5 candidates, then re-ranking.
//!
//! ```text
//! query ─▶ AND of all terms ─┐
//!        └▶ OR of all terms ─┴▶ candidates (AND hits keep a bonus) ─▶ re-rank ─▶ hits
//! ```
//! Re-ranking starts from bm25 (name, content, split identifiers; and the path in the ranking
//! index) and adds the factors of [`weights::WEIGHTS`], one table with the reason for each:
//! the seeds' (code, focused and visited paths, annotated targets) and booger's own (a chunk
//! the query names and the members of a type it names, query words in the file's name, a
//! commit subject's scope or a file the query names, a kind it asks for, test code, prose and
//! release notes, imports, the share of an impl header's score its methods get).
//!
//! A change request's first page holds its two best tests
//! (`show_tests`): the tests a change must update rank below its code. Long chunks lose
//! nothing: answers show their matching lines, not all of them (the seeds' -4 for oversized
//! chunks paid for tokens no answer spends now).
//! `files` ranks files from these chunks, and by the share of the query's words each file holds,
//! for `files_with_matches`.
//!
//! A question's first page is spread over files (`spread`); its one-line chunks, example
//! programs, type definitions, tests and prose rank lower, and a declaration's match counts
//! for its definition (`question`). A pasted passage (an issue, a
//! traceback: `passage`) is ranked by its heaviest words, each with its weight, and its
//! chunks are put in the order of the files it asks to change (`passage_files`).

pub mod confidence;
pub(crate) mod files;
pub(crate) mod format;
pub(crate) mod grams;
#[cfg(feature = "team")]
pub(crate) mod lexemes;
pub(crate) mod lines;
pub(crate) mod owners;
pub(crate) mod passage;
mod passage_files;
pub mod query;
pub(crate) mod question;
pub(crate) mod ranking_index;
pub(crate) mod segment;
pub(crate) mod semantic;
pub(crate) mod snippet;
mod tombstones;
pub(crate) mod weights;
pub(crate) mod words;

use std::collections::HashMap;

use booger_proto::tools::ChunkKind;
use weights::WEIGHTS;

use crate::store::search::{Candidate, Filters};
use crate::store::{Store, StoreError};
pub(crate) use query::Query;

/// How many candidates each FTS pass fetches for re-ranking.
const CANDIDATES: usize = 300;
/// The ranking index's passes (all terms, any term) each keep this many for re-ranking.
const WARM_CANDIDATES: usize = 200;
/// A passage's: no chunk holds all its words, and its files are ranked from these chunks
/// (the file its words point to must have one among them).
const PASSAGE_CANDIDATES: usize = 1_000;

pub(crate) use crate::store::context::Context;

#[derive(Debug, Clone)]
pub struct Hit {
    pub chunk: Candidate,
    pub score: f64,
    /// Notes whose target is this chunk's file, symbol or lines.
    pub notes: Vec<String>,
}

/// What one query reads in one project: the store, the ranking index when it is current
/// (FTS5 answers otherwise), and the notes, focus and visited files of the caller's session.
/// Borrowed from a snapshot taken once per call (the engine's project snapshot lends it);
/// every step of a search reads from it.
#[derive(Clone, Copy)]
pub struct Searcher<'a> {
    pub store: &'a Store,
    pub ranking: Option<&'a ranking_index::RankingIndex>,
    pub context: &'a Context,
}

impl Searcher<'_> {
    /// Ranks chunks for `query` (parsed from `text`). Returns every ranked hit (the caller
    /// pages and formats); the first `need` carry their full metadata, the rest what
    /// ranking needed.
    pub(crate) fn search(
        &self,
        query: &Query,
        text: &str,
        filters: &Filters,
        need: usize,
    ) -> Result<Vec<Hit>, StoreError> {
        let (store, ctx) = (self.store, self.context);
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let mut by_id: HashMap<i64, (Candidate, f64)> = HashMap::new();
        // Words joined by punctuation count as their separate words on both paths; a quoted
        // phrase's chunks are those holding its words, each then checked for them in order.
        let warm = match self.ranking.filter(|_| ranking_index::RankingIndex::supports(filters)) {
            Some(p) => self.ranked(p, query, filters)?.map(|ranked| (p, ranked)),
            None => None,
        };
        if let Some((p, ranked)) = warm {
            for (c, all_terms) in ranked {
                let bonus = if query.terms.len() > 1 && all_terms { WEIGHTS.all_words } else { 0.0 };
                by_id.insert(c.id, (c, bonus));
            }
            keep_phrases(store, query, &mut by_id)?;
            let mut hits = finish(store, by_id, query, text, ctx);
            if query.passage.is_some() {
                hits = passage_files::lead_with_files(store, p, query, hits)?;
            }
            // Read the full rows (signature, parent) of the hits that will be shown.
            let page: Vec<(i64, f64)> = hits.iter().take(need).map(|h| (h.chunk.id, h.chunk.bm25)).collect();
            let mut full: HashMap<i64, Candidate> =
                store.candidates_by_id(&page)?.into_iter().map(|c| (c.id, c)).collect();
            for h in hits.iter_mut().take(need) {
                if let Some(c) = full.remove(&h.chunk.id) {
                    h.chunk = c;
                }
            }
            return Ok(hits);
        }
        for c in store.fts_candidates(&query.and(), filters, CANDIDATES)? {
            // Every term matched: worth more than a partial OR match.
            let bonus = if query.terms.len() > 1 { WEIGHTS.all_words } else { 0.0 };
            by_id.insert(c.id, (c, bonus));
        }
        if query.terms.len() > 1 {
            for c in store.fts_candidates(&query.or(), filters, CANDIDATES)? {
                by_id.entry(c.id).or_insert((c, 0.0));
            }
        }
        keep_phrases(store, query, &mut by_id)?;
        Ok(finish(store, by_id, query, text, ctx))
    }

    /// The ranking index's candidates for `query`. While a run rewrites files (the index is
    /// brought current when it ends) the chunks it has replaced are gone from the store and
    /// left out; `None` when that is most of them (a full re-index empties the store first):
    /// FTS5, which has the run's new rows, answers then.
    fn ranked(
        &self,
        p: &ranking_index::RankingIndex,
        query: &Query,
        filters: &Filters,
    ) -> Result<Option<Vec<ranking_index::Ranked>>, StoreError> {
        let store = self.store;
        let (tokens, limit) = match query.passage {
            Some(_) => (p.heaviest(&query.weighted_tokens(), ranking_index::PASSAGE_TERMS), PASSAGE_CANDIDATES),
            None => (query.weighted_tokens(), WARM_CANDIDATES),
        };
        let mut ranked = store.cached_rank(&tokens, filters, p.content_generation, || p.rank(&tokens, filters, limit));
        if p.content_generation != store.content_generation() {
            // A chunk is the index's if its number still names the same place (a number
            // freed by the run may be taken again by one of its new chunks).
            let ids: Vec<(i64, f64)> = ranked.iter().map(|(c, _)| (c.id, c.bm25)).collect();
            let now: HashMap<i64, Candidate> = store.candidates_by_id(&ids)?.into_iter().map(|c| (c.id, c)).collect();
            let before = ranked.len();
            ranked.retain(|(c, _)| {
                now.get(&c.id).is_some_and(|n| {
                    (n.path.as_str(), n.start_line, n.end_line, n.name.as_str())
                        == (c.path.as_str(), c.start_line, c.end_line, c.name.as_str())
                })
            });
            if ranked.len() * 2 < before {
                return Ok(None);
            }
        }
        Ok(Some(ranked))
    }

    /// The files of `hits` for `query`, best first: a passage (an issue report, a
    /// traceback) by what it mentions and defines ([`passage_files::rank`]) when the
    /// ranking index is there, a query of a few words by the share of its words each file
    /// holds ([`files::rank`]).
    pub(crate) fn rank_files<'a>(&self, query: &Query, hits: &'a [Hit]) -> Result<Vec<files::FileHit<'a>>, StoreError> {
        match (&query.passage, self.ranking) {
            (Some(_), Some(w)) => passage_files::rank(self.store, w, query, hits),
            _ => files::rank(self.store, self.ranking, query, hits),
        }
    }
}

/// The order of an answer: best score first, equal scores by path and line (the hits come
/// from a map, in no set order).
pub(crate) fn answer_order(a: &Hit, b: &Hit) -> std::cmp::Ordering {
    b.score.total_cmp(&a.score).then(a.chunk.path.cmp(&b.chunk.path)).then(a.chunk.start_line.cmp(&b.chunk.start_line))
}

/// Keeps the candidates holding every phrase the query quotes, its words in order: in the
/// chunk's text, or in its mixed-case names split (`DefaultContext`: "default context"). The
/// candidates hold the words (neither index keeps where).
fn keep_phrases(store: &Store, query: &Query, by_id: &mut HashMap<i64, (Candidate, f64)>) -> Result<(), StoreError> {
    if query.phrases.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = by_id.keys().copied().collect();
    let texts = store.contents(&ids)?;
    by_id.retain(|id, _| {
        texts.get(id).is_some_and(|t| {
            let split = crate::store::words::words_for("", t);
            query.phrases.iter().all(|p| query::holds_phrase(t, p) || query::holds_phrase(&split, p))
        })
    });
    Ok(())
}

/// Re-ranks the candidates (with their AND bonus) into hits, best first.
fn finish(store: &Store, by_id: HashMap<i64, (Candidate, f64)>, query: &Query, text: &str, ctx: &Context) -> Vec<Hit> {
    let hints = kind_hints(text);
    let unowned = owners::unowned(&query.qualified, by_id.values().map(|(c, _)| c));
    let wants_tests = query.wants_tests();
    let asks_for_docs = query.asks_for_docs();
    let mut hits: Vec<Hit> = by_id
        .into_values()
        .map(|(chunk, bonus)| {
            let notes = notes_for(&chunk, ctx);
            let mut score = -chunk.bm25 + bonus + rerank(&chunk, query, &unowned, &hints, ctx, !notes.is_empty());
            if is_test(&chunk) {
                // A query about tests ("add tests for digest auth") wants them before the code
                // they exercise, which holds the same words; a change request's tests change
                // with its code: they lose only a quarter.
                score += if wants_tests {
                    WEIGHTS.test
                } else if query.change {
                    -WEIGHTS.test / 4.0
                } else if query.question {
                    -WEIGHTS.question_test
                } else {
                    -WEIGHTS.test
                };
            }
            if !asks_for_docs && is_prose(&chunk) {
                // Prose explains code in the words of a question, which is why it matches
                // them so well; the code is what a code search is for. Release notes most of
                // all: they restate each change in its commit's words.
                score -= if is_release_notes(&chunk.path) {
                    WEIGHTS.release_notes
                } else if query.question {
                    WEIGHTS.question_prose
                } else {
                    WEIGHTS.prose
                };
            }
            if chunk.kind == ChunkKind::Import {
                // An import names what its file uses and explains none of it.
                score -= WEIGHTS.import;
            }
            if query.question {
                score += question::chunk_factor(&chunk);
            }
            Hit { chunk, score, notes }
        })
        .collect();
    inherit_impl_headers(&mut hits);
    if query.question {
        question::lend_declarations(&mut hits);
        // Best effort: a text that cannot be read lends nothing.
        if let Ok(texts) = store.contents(&question::callers(&hits)) {
            question::lend_to_callees(&mut hits, &texts);
        }
    } else {
        question::definitions_before_declarations(&mut hits);
    }
    hits.sort_by(answer_order);
    if query.question {
        spread(&mut hits, WEIGHTS.spread_margin);
    }
    if query.change && !wants_tests {
        show_tests(&mut hits);
    }
    hits
}

/// How many results the first page of an answer holds (`head_limit`'s default).
const FIRST_PAGE: usize = 10;

/// Spreads the first two pages over files: a chunk of a file already shown waits for the
/// best chunk of a file not yet shown unless it is clearly better (by `margin`). A question
/// is answered in several places (the route table, the handler, the matcher), and the
/// chunks of the one file holding most of its words crowded them out. Scores stay: a file
/// still ranks on its own evidence in files mode.
fn spread(hits: &mut Vec<Hit>, margin: f64) {
    let window = (2 * FIRST_PAGE).min(hits.len());
    let mut order: Vec<usize> = (0..hits.len()).collect();
    let mut shown: Vec<&str> = Vec::with_capacity(window);
    for i in 0..window {
        let seen = |j: usize| shown.contains(&hits[order[j]].chunk.path.as_str());
        if seen(i)
            && let Some(j) = (i + 1..order.len()).find(|&j| !seen(j))
            && hits[order[i]].score < hits[order[j]].score + margin
        {
            order[i..=j].rotate_right(1);
        }
        shown.push(hits[order[i]].chunk.path.as_str());
    }
    if order.iter().enumerate().all(|(i, &o)| i == o) {
        return;
    }
    let mut taken: Vec<Option<Hit>> = std::mem::take(hits).into_iter().map(Some).collect();
    *hits = order.into_iter().filter_map(|i| taken[i].take()).collect();
}

/// How many test chunks a change request's first page holds, when the project has them.
const TESTS_SHOWN: usize = 2;

/// Brings a change request's best tests into the last places of its first page, in their
/// order, when fewer are there. A change to code is a change to the tests that pin it, and
/// tests rank below the code they exercise (their names are what the code does, not what the
/// task says); without this, the tests a change must update seldom reach the page. Their
/// scores stay: a file still ranks on its own evidence.
fn show_tests(hits: &mut Vec<Hit>) {
    if hits.len() <= FIRST_PAGE {
        return;
    }
    let shown = hits[..FIRST_PAGE].iter().filter(|h| is_test(&h.chunk)).count();
    let missing = TESTS_SHOWN.saturating_sub(shown);
    let later: Vec<usize> = (FIRST_PAGE..hits.len()).filter(|&i| is_test(&hits[i].chunk)).take(missing).collect();
    // Taken out from the back, so the earlier indices hold; put in from the front, in rank order.
    let tests: Vec<Hit> = later.iter().rev().map(|&i| hits.remove(i)).collect();
    let first = FIRST_PAGE - tests.len();
    for (j, h) in tests.into_iter().rev().enumerate() {
        hits.insert(first + j, h);
    }
}

/// A method of an impl block whose header matches the query shares that match: the header
/// (`impl<S> OptionalFromRequest<S> for Multipart`) names the trait and type the method's
/// body works for, words the body itself seldom repeats. (A Python or TypeScript class chunk
/// holds its docstring and fields, an answer of its own: its members share nothing.)
fn inherit_impl_headers(hits: &mut [Hit]) {
    // Per file, each impl header's first line, type (as its methods name their parent) and score.
    let mut headers: HashMap<&str, Vec<(u32, String, f64)>> = HashMap::new();
    for h in hits.iter().filter(|h| h.chunk.kind == ChunkKind::Impl) {
        let ty = crate::source::chunk::code::container_parent_name(&h.chunk.name);
        headers.entry(h.chunk.path.as_str()).or_default().push((h.chunk.start_line, ty, h.score));
    }
    if headers.is_empty() {
        return;
    }
    let shares: Vec<f64> = hits
        .iter()
        .map(|h| {
            let (Some(parent), Some(list)) = (h.chunk.parent.as_deref(), headers.get(h.chunk.path.as_str())) else {
                return 0.0;
            };
            // The member's own block: the nearest header above it for its type.
            list.iter()
                .filter(|(line, ty, _)| *line < h.chunk.start_line && ty == parent)
                .max_by_key(|(line, _, _)| *line)
                .map_or(0.0, |(_, _, score)| WEIGHTS.impl_share * score.max(0.0))
        })
        .collect();
    for (h, share) in hits.iter_mut().zip(shares) {
        h.score += share;
    }
}

/// Words that ask for documentation (or release notes) rather than code.
const DOC_WORDS: &[&str] = &[
    "doc",
    "docs",
    "documentation",
    "document",
    "readme",
    "guide",
    "tutorial",
    "changelog",
    "release",
    "releases",
    "history",
    "news",
    "changes",
    "faq",
    "manual",
];

/// Words of [`DOC_WORDS`] that a question uses for what code does ("a store that changes
/// only when…", "the history of the state"), not for release notes.
const VERB_LIKE_DOC_WORDS: &[&str] = &["changes", "release", "releases", "history", "news", "document"];

impl Query {
    /// The query names documentation (or release notes): prose is what it wants. A passage
    /// asks in its title (its body may well point at the docs it read).
    fn asks_for_docs(&self) -> bool {
        let words = self.passage.as_ref().map_or(&self.words, |p| &p.title);
        words
            .iter()
            .any(|w| DOC_WORDS.contains(&w.as_str()) && !(self.question && VERB_LIKE_DOC_WORDS.contains(&w.as_str())))
    }
}

/// Prose in a list ranked by vectors, unless `query` asks for documentation: kept after the
/// code, in rank order, for `semantic-search`; dropped when the list is fused with `search`'s
/// (`fused`), which has already weighed the prose against its penalty. Vectors put prose that
/// explains a task in the task's own words nearest of all; a vote from them would undo that.
pub(crate) fn demote_prose(hits: &mut Vec<Hit>, query: &str, fused: bool) {
    if Query::parse(query).asks_for_docs() {
        return;
    }
    if fused {
        hits.retain(|h| !is_prose(&h.chunk));
    } else {
        hits.sort_by_key(|h| is_prose(&h.chunk));
    }
}

/// Prose: Markdown, reStructuredText, AsciiDoc, plain text.
fn is_prose(c: &Candidate) -> bool {
    let ext = c.path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    c.language == "markdown" || matches!(ext.as_str(), "md" | "rst" | "txt" | "adoc" | "org")
}

/// Release notes (CHANGELOG, HISTORY, NEWS, ...) restate every change in the words of its
/// commit: they match a task's words without being where the task is done.
fn is_release_notes(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let stem = file.split('.').next().unwrap_or(&file);
    matches!(stem, "changelog" | "changes" | "history" | "news" | "releases" | "release-notes" | "release_notes")
}

fn rerank(
    c: &Candidate,
    q: &Query,
    unowned: &[(String, String)],
    hints: &[&str],
    ctx: &Context,
    annotated: bool,
) -> f64 {
    let mut s = 0.0;
    let w = &WEIGHTS;
    if crate::source::chunk::is_code(c.kind) {
        s += w.code;
    }
    if !c.name.is_empty()
        && names_the_chunk(&c.name, q)
        && !owners::names_another_owner(unowned, &c.name, c.parent.as_deref(), &c.path)
    {
        s += w.named;
    } else if c.parent.as_deref().is_some_and(|p| !p.is_empty() && names_the_chunk(p, q)) {
        s += w.member;
    }
    s += w.path_word * path_words(&c.path, q).min(w.path_words_counted) as f64;
    if (!q.scope.is_empty() && in_scope(&c.path, &q.scope)) || names_the_file(&c.path, &q.files) {
        s += w.scope;
    }
    if !hints.is_empty() && hints.contains(&c.kind.as_str()) {
        s += w.kind_hint;
    }
    if ctx.focus.iter().any(|p| under(&c.path, p)) {
        s += w.focus;
    }
    if ctx.visited.iter().any(|p| under(&c.path, p)) {
        s -= w.visited;
    }
    if annotated {
        s += w.annotated;
    }
    s
}

/// Test code: in a test folder or file, a test function, or inside a test module.
pub(crate) fn is_test(c: &Candidate) -> bool {
    is_test_file(&c.path)
        || c.name.starts_with("test_")
        || c.name.starts_with("Test")
        // Rust's `mod tests` / `mod test`.
        || c.parent.as_deref().is_some_and(|p| p == "tests" || p == "test")
}

/// A test file: in a test folder, or named as one, by every language's conventions.
pub(crate) use crate::source::lang::is_test_path as is_test_file;

/// How many of the query's words (of three letters or more) name the file: its stem or a
/// part of it between `_`, `-` and `.`.
fn path_words(path: &str, q: &Query) -> usize {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
    q.words
        .iter()
        .filter(|w| w.len() >= 3)
        .filter(|w| stem.eq_ignore_ascii_case(w) || stem.split(['_', '-', '.']).any(|p| p.eq_ignore_ascii_case(w)))
        .count()
}

/// The path is in a commit subject's scope: a folder, the file's stem or a word of a
/// compound stem is named by it (`read` → `read.c`, `jsonlines` → `json_lines.rs`,
/// `devtool` → `devtools.ts`, `persist` → `persistAsync.test.tsx`).
fn in_scope(path: &str, scope: &[String]) -> bool {
    let named = |seg: &str| scope.iter().any(|w| same_word(seg, w));
    let (folders, file) = path.rsplit_once('/').unwrap_or(("", path));
    let stem = file.split('.').next().unwrap_or(file);
    if folders.split('/').any(named) || named(stem) {
        return true;
    }
    // Only a stem with word boundaries (`_`, `-`, an upper-case letter) has words to split:
    // most stems have none, and this runs for every candidate of a scoped query.
    (stem.contains(['_', '-']) || stem.contains(char::is_uppercase))
        && crate::store::words::split_identifier(stem).iter().any(|w| named(w))
}

/// `seg` is the bare word `w` (lowercase letters and digits), or either is the other's
/// plural. Compared without allocating: this runs for every candidate of a scoped query.
fn same_word(seg: &str, w: &str) -> bool {
    let bare = || query::bare_chars(seg);
    let s = || std::iter::once('s');
    bare().eq(w.chars()) || bare().eq(w.chars().chain(s())) || bare().chain(s()).eq(w.chars())
}

/// The query writes out the file's name (or the end of its path).
fn names_the_file(path: &str, files: &[String]) -> bool {
    files.iter().any(|f| {
        let Some(cut) = path.len().checked_sub(f.len()) else { return false };
        path.get(cut..).is_some_and(|end| end.eq_ignore_ascii_case(f)) && (cut == 0 || path.as_bytes()[cut - 1] == b'/')
    })
}

/// The query is the chunk's name: one of its words, or all of them joined (`parse config`
/// names `parse_config` and `parseconfig`).
fn names_the_chunk(name: &str, q: &Query) -> bool {
    if q.words.iter().skip(q.naming_from).any(|w| w.eq_ignore_ascii_case(name)) {
        return true;
    }
    if q.idents.iter().any(|i| query::bare_identifier_chars(name).eq(i.chars())) {
        return true;
    }
    // Compared lazily: this runs for every candidate of every query.
    let plain = name.chars().filter(|c| *c != '_').map(|c| c.to_ascii_lowercase());
    q.words.len() > 1 && q.words.iter().flat_map(|w| w.chars()).eq(plain)
}

/// `class X` asks for classes, `def x` / `fn x` / `func x` for functions.
fn kind_hints(text: &str) -> Vec<&'static str> {
    let mut hints = Vec::new();
    for w in text.split_whitespace().map(str::to_lowercase) {
        match w.as_str() {
            "class" | "struct" | "type" | "interface" | "enum" | "trait" => {
                hints.extend(["class", "struct", "type", "interface", "enum", "trait", "typedef"])
            }
            "def" | "fn" | "func" | "fun" | "function" | "method" => hints.extend(["function", "method"]),
            _ => {}
        }
    }
    hints
}

/// `path` is `prefix` or inside it.
pub(crate) fn under(path: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    prefix.is_empty() || path == prefix || path.strip_prefix(prefix).is_some_and(|r| r.starts_with('/'))
}

/// Notes that target this chunk: its file (or a folder above it), its symbol, or a line in it.
pub(crate) fn notes_for(c: &Candidate, ctx: &Context) -> Vec<String> {
    ctx.notes
        .iter()
        .filter(|(target, _)| {
            if let Some((path, line)) = target.rsplit_once(':')
                && let Ok(line) = line.parse::<u32>()
            {
                return path == c.path && (c.start_line..=c.end_line).contains(&line);
            }
            under(&c.path, target)
                || (!c.name.is_empty() && (*target == c.name || target.ends_with(&format!(".{}", c.name))))
        })
        .map(|(_, note)| note.clone())
        .collect()
}

#[cfg(test)]
mod tests;
