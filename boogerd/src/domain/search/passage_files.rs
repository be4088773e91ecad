//! The files a pasted issue, traceback or log asks to change, for `files_with_matches`.
//!
//! A file's score adds four kinds of evidence, each on a 0-1 scale times its weight:
//! - its bm25 as a whole file for the passage's weighted words ([`RankingIndex::rank_files`]),
//!   against the best file's: the file the words point to;
//! - its chunks' evidence as lexical search ranks them ([`by_file`]), against the best
//!   file's: a function that holds the passage's names and words;
//! - the files the text names (a traceback's frames, paths, dotted modules), by how much of
//!   the path agrees;
//! - a definition of an identifier the text writes as code (`builtin_str(method)`), shared
//!   among the files defining it.
//!
//! Then what a fix seldom edits keeps a share of its score: test files (unless the title is
//! about tests), prose, and documentation or example folders.

use std::collections::{HashMap, VecDeque};

use super::files::{FileHit, by_file, lexical_evidence, sort};
use super::passage::Passage;
use super::ranking_index::RankingIndex;
use super::{Hit, Query, is_test_file};
use crate::store::search::Filters;
use crate::store::{Store, StoreError};

/// The weights of the four kinds of evidence.
const FILE_BM25: f64 = 1.0;
const CHUNKS: f64 = 1.0;
const MENTIONED: f64 = 0.4;
const DEFINES: f64 = 0.2;

/// The share of its score a test file keeps when the passage is not about tests.
const TEST_SHARE: f64 = 0.3;
/// The share prose and documentation or example folders keep.
const ASIDE_SHARE: f64 = 0.3;

/// A name defined in more files than this is too common to point anywhere (`__init__`).
const DEFINED_IN_AT_MOST: usize = 5;

/// The files of `hits` for `passage`, best first.
pub(super) fn rank<'a>(
    store: &Store,
    ranking: &RankingIndex,
    query: &Query,
    hits: &'a [Hit],
) -> Result<Vec<FileHit<'a>>, StoreError> {
    let Some(passage) = &query.passage else { return Ok(by_file(hits, lexical_evidence)) };
    let mut files = by_file(hits, lexical_evidence);
    let bm25: HashMap<String, f64> = ranking.rank_files(&passage.tokens, &Filters::default()).into_iter().collect();
    let best_bm25 = bm25.values().copied().fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let best_chunks = files.iter().map(|f| f.score).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let defined = definitions(store, passage)?;
    let about_tests = passage.about_tests();
    let asks_for_docs = query.asks_for_docs();
    for f in &mut files {
        let mut s = FILE_BM25 * bm25.get(f.path).copied().unwrap_or(0.0) / best_bm25
            + CHUNKS * f.score.max(0.0) / best_chunks
            + MENTIONED * mentioned(passage, f.path)
            + DEFINES * defined.get(f.path).copied().unwrap_or(0.0);
        if !about_tests && is_test_file(f.path) {
            s *= TEST_SHARE;
        }
        if !asks_for_docs && is_aside(f) {
            s *= ASIDE_SHARE;
        }
        f.score = s;
    }
    sort(&mut files);
    Ok(files)
}

/// How many times the best chunk of the next file a further chunk of a file already shown
/// must score to come before it. A passage's chunk scores add up dozens of words (50 to 150
/// where a query's are 10 to 30), so "clearly better" is a ratio here, not a question's
/// margin.
const CLEARLY_BETTER: f64 = 1.5;

/// Puts a passage's chunks in the order of their files: the best chunk of each file as the
/// files rank, unless a further chunk of a file already shown is clearly better
/// ([`CLEARLY_BETTER`]). An agent reading the answer meets the file to change first, and ten
/// places rather than ten pieces of one.
pub(super) fn lead_with_files(
    store: &Store,
    ranking: &RankingIndex,
    query: &Query,
    hits: Vec<Hit>,
) -> Result<Vec<Hit>, StoreError> {
    let files: Vec<String> = rank(store, ranking, query, &hits)?.iter().map(|f| f.path.to_owned()).collect();
    let place: HashMap<&str, usize> = files.iter().enumerate().map(|(i, p)| (p.as_str(), i)).collect();
    // Each file's chunks, best first (the hits are in score order).
    let mut queues: Vec<VecDeque<usize>> = vec![VecDeque::new(); files.len()];
    for (i, h) in hits.iter().enumerate() {
        if let Some(&f) = place.get(h.chunk.path.as_str()) {
            queues[f].push_back(i);
        }
    }
    let mut order: Vec<usize> = Vec::with_capacity(hits.len());
    let (mut next, mut shown): (usize, Vec<usize>) = (0, Vec::new());
    loop {
        while next < queues.len() && queues[next].is_empty() {
            next += 1;
        }
        let fresh = queues.get(next).and_then(|q| q.front().copied());
        let again = shown
            .iter()
            .filter_map(|&f| queues[f].front().map(|&i| (f, i)))
            .max_by(|a: &(usize, usize), b| hits[a.1].score.total_cmp(&hits[b.1].score).then(b.0.cmp(&a.0)));
        let from = match (fresh, again) {
            (Some(f), Some((file, a))) if hits[a].score >= CLEARLY_BETTER * hits[f].score.max(0.0) => file,
            (Some(_), _) => {
                shown.push(next);
                next += 1;
                next - 1
            }
            (None, Some((file, _))) => file,
            (None, None) => break,
        };
        order.extend(queues[from].pop_front());
    }
    let mut taken: Vec<Option<Hit>> = hits.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| taken[i].take()).collect())
}

/// How strongly the text names `path`: 1 for a file name and a folder that agree (a frame's
/// `site-packages/_pytest/main.py` names `src/_pytest/main.py`), half for a file name alone.
fn mentioned(passage: &Passage, path: &str) -> f64 {
    let agree = passage.mentions.iter().map(|m| m.matches(path)).max().unwrap_or(0);
    match agree {
        0 => 0.0,
        1 => 0.5,
        _ => 1.0,
    }
}

/// Per file, its share of the definitions of the names the passage writes as code: a name
/// defined in one file gives it 1, in three files a third each.
fn definitions(store: &Store, passage: &Passage) -> Result<HashMap<String, f64>, StoreError> {
    let mut out: HashMap<String, f64> = HashMap::new();
    for name in &passage.names {
        let mut paths: Vec<String> = store
            .chunks_named(name, &Filters::default(), DEFINED_IN_AT_MOST * 4)?
            .into_iter()
            .filter(|c| crate::source::chunk::is_code(c.kind) && !is_test_file(&c.path))
            .map(|c| c.path)
            .collect();
        paths.dedup();
        if paths.is_empty() || paths.len() > DEFINED_IN_AT_MOST {
            continue;
        }
        let share = 1.0 / paths.len() as f64;
        for p in paths {
            let v = out.entry(p).or_insert(0.0);
            *v = (*v + share).min(1.0);
        }
    }
    Ok(out)
}

/// What a fix seldom edits, though it may well speak of the same things: prose, text that
/// is no code a parser knows (translations, data, configuration), a minified file, and what
/// is in a documentation, example, benchmark or vendored folder.
fn is_aside(f: &FileHit<'_>) -> bool {
    let file = f.path.rsplit('/').next().unwrap_or(f.path);
    f.chunks.first().is_some_and(|h| super::is_prose(&h.chunk) || h.chunk.language == "text")
        || file.contains(".min.")
        || f.path.split('/').rev().skip(1).any(|seg| {
            // Any case: `Docs/` and `Example/` in Swift and .NET trees.
            [
                "doc",
                "docs",
                "example",
                "examples",
                "benchmarks",
                "bench",
                "vendor",
                "vendored",
                "third_party",
                "node_modules",
            ]
            .iter()
            .any(|a| seg.eq_ignore_ascii_case(a))
        })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{indexed_among_others, search};
    use super::super::{Context, Query, Searcher};
    use crate::store::search::Filters;

    /// The files of a pasted `text`, as files_with_matches ranks them, and its answer's paths
    /// in order.
    fn ranked(
        store: &crate::store::Store,
        ranking: &crate::domain::search::ranking_index::RankingIndex,
        text: &str,
    ) -> (Vec<String>, Vec<String>) {
        let context = Context::default();
        let hits = search(store, Some(ranking), text, &Filters::default(), &context, 10).unwrap();
        let s = Searcher { store, ranking: Some(ranking), context: &context };
        let files = s.rank_files(&Query::parse(text), &hits).unwrap();
        (files.iter().map(|f| f.path.to_owned()).collect(), hits.iter().map(|h| h.chunk.path.clone()).collect())
    }

    const REGEX: &str =
        "def parse_regex(value):\n    \"\"\"Compiles an option's pattern.\"\"\"\n    return compile(value)\n";
    const MANAGER: &str = "class OptionsManager:\n    def load_configuration(self, path):\n        \"\"\"Reads the configuration file and every option in it, then checks each option value.\"\"\"\n        for option in read(path):\n            self.set_option(option, option.value)\n\n    def set_option(self, option, value):\n        \"\"\"Sets one option's value from the configuration.\"\"\"\n        self.options[option] = value\n";

    /// A traceback names the file to change: its frame's path (under another root) tells it
    /// from its twin in another folder, which speaks more of the report's words.
    #[test]
    fn a_traceback_frame_names_the_file_to_change() {
        let dir = tempfile::tempdir().unwrap();
        let twin = "def parse_regex(value):\n    \"\"\"Compiles the pattern of an option with an escape.\"\"\"\n    return compile(value)\n";
        let files = [("tool/a/regex.py", REGEX), ("tool/b/regex.py", twin)];
        let (store, ranking) = indexed_among_others(dir.path(), &files);
        let report = "A pattern in an option crashes the tool\n\n\
            Setting a pattern with an escape in the configuration makes the tool crash when it starts:\n\n\
            Traceback (most recent call last):\n  \
            File \"/home/me/run.py\", line 8, in <module>\n    \
            main()\n  \
            File \"/home/me/venv/lib/python3.9/site-packages/tool/a/regex.py\", line 3, in compile\n    \
            return compile(value)\nerror: bad escape\n\nThe option is read from the configuration file as is.";
        let (files, _) = ranked(&store, &ranking, report);
        assert_eq!(files[..2], ["tool/a/regex.py", "tool/b/regex.py"], "{files:?}");
        // Without the traceback, the twin speaking more of the words comes first.
        let plain = report.split("Traceback").next().unwrap().to_owned()
            + " The option is read from the configuration file as is.";
        let (files, _) = ranked(&store, &ranking, &plain);
        assert_eq!(files[0], "tool/b/regex.py", "{files:?}");
    }

    /// A report is answered with the code it is about before its tests and documentation,
    /// which say the same words more often; a report that asks for tests gets them first.
    #[test]
    fn a_report_is_answered_with_code_before_its_tests_and_docs() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            (
                "src/units.py",
                "def render_units(column):\n    \"\"\"Shows a column's units in the overview.\"\"\"\n    return column.units\n",
            ),
            (
                "tests/test_units.py",
                "def test_render_units_in_overview():\n    column = Column(units='m')\n    assert render_units(column) == 'm'  # the overview shows the units of the column\n\n\ndef test_units_of_each_column_in_overview():\n    assert render_units(Column(units='s')) == 's'\n",
            ),
            (
                "docs/units.md",
                "# Units\n\nThe overview shows the units of each column: a column's units follow its name in the overview.\n",
            ),
        ];
        let (store, ranking) = indexed_among_others(dir.path(), &files);
        let report = "The overview drops the units of a column\n\nWhen a column has units, the overview should show the units next to \
            the column name, as the documentation of units says. Today render_units is never called for the overview, so \
            the units of every column are missing from it.";
        let (files, answer) = ranked(&store, &ranking, report);
        assert_eq!(files[0], "src/units.py", "{files:?}");
        assert_eq!(answer[0], "src/units.py", "the answer leads with the file to change: {answer:?}");
        let asks =
            format!("Add tests for the units of a column in the overview\n\n{}", report.split_once("\n\n").unwrap().1);
        let (files, _) = ranked(&store, &ranking, &asks);
        assert_eq!(files[0], "tests/test_units.py", "{files:?}");
    }

    /// A passage's answer takes one chunk of each file, in the files' order, before a second
    /// chunk of any of them.
    #[test]
    fn a_passage_answer_leads_with_one_chunk_per_file() {
        let dir = tempfile::tempdir().unwrap();
        let files = [("tool/config/regex.py", REGEX), ("tool/config/manager.py", MANAGER)];
        let (store, ranking) = indexed_among_others(dir.path(), &files);
        let report = "Setting an option value in the configuration file is lost\n\nWhen the configuration is loaded, \
            set_option and load_configuration both read the option value, but the value of each option from the \
            configuration file is dropped; the pattern of parse_regex is not compiled either.";
        let (files, answer) = ranked(&store, &ranking, report);
        assert_eq!(files[..2], ["tool/config/manager.py", "tool/config/regex.py"], "{files:?}");
        // The manager's methods both outscore the pattern's function, but not by half again.
        assert!(answer.iter().filter(|p| *p == "tool/config/manager.py").count() >= 2, "{answer:?}");
        assert_eq!(answer[..2], ["tool/config/manager.py", "tool/config/regex.py"], "{answer:?}");
    }
}
