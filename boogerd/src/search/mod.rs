//! Lexical search: FTS5 candidates, then re-ranking.
//!
//! ```text
//! query ─▶ AND of all terms ─┐
//!        └▶ OR of all terms ─┴▶ candidates (AND hits keep a bonus) ─▶ re-rank ─▶ hits
//! ```
//! Re-ranking starts from bm25 (name, content, split identifiers; and the path in the warm
//! index) and adds the seeds' factors: code chunks +3, focused paths +5, visited paths -3,
//! annotated targets +2; and its own:
//! - a chunk *named* by the query +6 (the definition over its mentions; in any case style when
//!   the query writes a compound identifier: `IntoFuture` names `into_future`), the members of
//!   a type it names +2;
//! - +0.5 for each query word in the file's name (at most 2);
//! - +4 in a commit subject's scope (`read: …`, `fix(persist): …`) or a file the query names
//!   (`test_requests.py`);
//! - a kind the query asks for (`class X`, `def x`) +2;
//! - test code -4, or +4 when the query is about tests: test names are sentences full of query
//!   words, but an agent asking how something works wants the code that does it; -1 for a
//!   change request, whose tests change with its code;
//! - prose -6 (release notes -12) unless the query asks for documentation;
//! - imports -2, and no code bonus: they mention names without defining anything.
//!
//! The methods of a Rust impl block share 0.3 of its header's score: the header names the
//! trait they implement. A change request's first page holds its two best tests
//! (`show_tests`): the tests a change must update rank below its code. Long chunks lose
//! nothing: answers show their matching lines, not all of them (the seeds' -4 for oversized
//! chunks paid for tokens no answer spends now).
//! `files` ranks files from these chunks for `files_with_matches`.

pub mod confidence;
pub mod files;
pub mod format;
pub mod grams;
pub mod lines;
pub mod postings;
pub mod query;
pub mod segment;
pub mod semantic;
pub mod snippet;
mod tombstones;

use std::collections::HashMap;

use crate::store::search::{Candidate, Filters};
use crate::store::{Store, StoreError};
pub use query::Query;

/// How many candidates each FTS pass fetches for re-ranking.
const CANDIDATES: usize = 300;
/// The warm index's passes (all terms, any term) each keep this many for re-ranking.
const WARM_CANDIDATES: usize = 200;

pub use crate::store::context::Context;

#[derive(Debug, Clone)]
pub struct Hit {
    pub chunk: Candidate,
    pub score: f64,
    /// Notes whose target is this chunk's file, symbol or lines.
    pub notes: Vec<String>,
}

/// Ranks chunks for `query`. Returns every ranked hit (the caller pages and formats); the
/// first `need` carry their full metadata, the rest what ranking needed. `warm` is the
/// project's ranking index, when it is built and current.
pub fn search(
    store: &Store,
    warm: Option<&postings::Postings>,
    text: &str,
    filters: &Filters,
    ctx: &Context,
    need: usize,
) -> Result<Vec<Hit>, StoreError> {
    let query = Query::parse(text);
    if query.is_empty() {
        return Ok(Vec::new());
    }
    let mut by_id: HashMap<i64, (Candidate, f64)> = HashMap::new();
    // The warm index answers unless the query quotes an exact phrase (that needs FTS5's
    // positions); words joined by punctuation count as their separate tokens there.
    if let Some(p) = warm.filter(|_| !text.contains('"') && postings::Postings::supports(filters)) {
        let tokens = query.tokens();
        for (c, all_terms) in
            store.cached_rank(&tokens, filters, p.content_generation, || p.rank(&tokens, filters, WARM_CANDIDATES))
        {
            let bonus = if query.terms.len() > 1 && all_terms { 3.0 } else { 0.0 };
            by_id.insert(c.id, (c, bonus));
        }
        let mut hits = finish(by_id, &query, text, ctx);
        // Read the full rows (signature, parent) of the hits that will be shown.
        let page: Vec<(i64, f64)> = hits.iter().take(need).map(|h| (h.chunk.id, h.chunk.bm25)).collect();
        let mut full: HashMap<i64, Candidate> = store.candidates_by_id(&page)?.into_iter().map(|c| (c.id, c)).collect();
        for h in hits.iter_mut().take(need) {
            if let Some(c) = full.remove(&h.chunk.id) {
                h.chunk = c;
            }
        }
        return Ok(hits);
    }
    for c in store.fts_candidates(&query.and(), filters, CANDIDATES)? {
        // Every term matched: worth more than a partial OR match.
        let bonus = if query.terms.len() > 1 { 3.0 } else { 0.0 };
        by_id.insert(c.id, (c, bonus));
    }
    if query.terms.len() > 1 {
        for c in store.fts_candidates(&query.or(), filters, CANDIDATES)? {
            by_id.entry(c.id).or_insert((c, 0.0));
        }
    }
    Ok(finish(by_id, &query, text, ctx))
}

/// Re-ranks the candidates (with their AND bonus) into hits, best first.
fn finish(by_id: HashMap<i64, (Candidate, f64)>, query: &Query, text: &str, ctx: &Context) -> Vec<Hit> {
    let hints = kind_hints(text);
    let wants_tests = query.words.iter().any(|w| w.starts_with("test") || w == "spec");
    let asks_for_docs = query.words.iter().any(|w| DOC_WORDS.contains(&w.as_str()));
    let mut hits: Vec<Hit> = by_id
        .into_values()
        .map(|(chunk, bonus)| {
            let notes = notes_for(&chunk, ctx);
            let mut score = -chunk.bm25 + bonus + rerank(&chunk, query, &hints, ctx, !notes.is_empty());
            if is_test(&chunk) {
                // A query about tests ("add tests for digest auth") wants them before the code
                // they exercise, which holds the same words; a change request's tests change
                // with its code: they lose only a quarter.
                score += if wants_tests {
                    TEST_PENALTY
                } else if query.change {
                    -TEST_PENALTY / 4.0
                } else {
                    -TEST_PENALTY
                };
            }
            if !asks_for_docs && is_prose(&chunk) {
                // Prose explains code in the words of a question, which is why it matches
                // them so well; the code is what a code search is for. Release notes most of
                // all: they restate each change in its commit's words.
                score -= if is_release_notes(&chunk.path) { 12.0 } else { PROSE_PENALTY };
            }
            if chunk.kind == "import" {
                // An import names what its file uses and explains none of it.
                score -= IMPORT_PENALTY;
            }
            Hit { chunk, score, notes }
        })
        .collect();
    inherit_impl_headers(&mut hits);
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.chunk.path.cmp(&b.chunk.path))
            .then(a.chunk.start_line.cmp(&b.chunk.start_line))
    });
    if query.change && !wants_tests {
        show_tests(&mut hits);
    }
    hits
}

/// How many results the first page of an answer holds (`head_limit`'s default).
const FIRST_PAGE: usize = 10;

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

/// What a Rust impl header's score gives each of its members among the hits.
const IMPL_SHARE: f64 = 0.3;

/// A method of an impl block whose header matches the query shares that match: the header
/// (`impl<S> OptionalFromRequest<S> for Multipart`) names the trait and type the method's
/// body works for, words the body itself seldom repeats. (A Python or TypeScript class chunk
/// holds its docstring and fields, an answer of its own: its members share nothing.)
fn inherit_impl_headers(hits: &mut [Hit]) {
    // Per file, each impl header's first line, type (as its methods name their parent) and score.
    let mut headers: HashMap<&str, Vec<(u32, String, f64)>> = HashMap::new();
    for h in hits.iter().filter(|h| h.chunk.kind == "impl") {
        let ty = crate::index::chunk::code::container_parent_name(&h.chunk.name);
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
                .map_or(0.0, |(_, _, score)| IMPL_SHARE * score.max(0.0))
        })
        .collect();
    for (h, share) in hits.iter_mut().zip(shares) {
        h.score += share;
    }
}

/// What test code loses against the code it tests, or gains when the query is about tests.
const TEST_PENALTY: f64 = 4.0;

/// What an import loses among the answers (and gets back when it ranks its file).
pub const IMPORT_PENALTY: f64 = 2.0;

/// What a chunk in a commit subject's scope, or in a file the query names, gains: `read:
/// validate bools` is a change to `read.c`, whatever else mentions bools.
const SCOPE: f64 = 4.0;

/// What prose loses against code when the query does not ask for documentation.
const PROSE_PENALTY: f64 = 6.0;

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

fn rerank(c: &Candidate, q: &Query, hints: &[&str], ctx: &Context, annotated: bool) -> f64 {
    let mut s = 0.0;
    if crate::index::chunk::is_code(&c.kind) {
        s += 3.0;
    }
    if !c.name.is_empty() && names_the_chunk(&c.name, q) {
        s += 6.0;
    } else if c.parent.as_deref().is_some_and(|p| !p.is_empty() && names_the_chunk(p, q)) {
        // A member of the type the query names: where that type's work is done.
        s += 2.0;
    }
    s += PATH_WORD * path_words(&c.path, q).min(2) as f64;
    if (!q.scope.is_empty() && in_scope(&c.path, &q.scope)) || names_the_file(&c.path, &q.files) {
        s += SCOPE;
    }
    if !hints.is_empty() && hints.contains(&c.kind.as_str()) {
        s += 2.0;
    }
    if ctx.focus.iter().any(|p| under(&c.path, p)) {
        s += 5.0;
    }
    if ctx.visited.iter().any(|p| under(&c.path, p)) {
        s -= 3.0;
    }
    if annotated {
        s += 2.0;
    }
    s
}

/// Test code: in a test folder or file, a test function, or inside a test module.
pub fn is_test(c: &Candidate) -> bool {
    let path = c.path.as_str();
    let file = path.rsplit('/').next().unwrap_or(path);
    path.split('/').any(|seg| matches!(seg, "test" | "tests" | "testing" | "__tests__" | "spec"))
        || file.starts_with("test_")
        || file.contains("_test.")
        || file.contains(".test.")
        || file.contains(".spec.")
        || c.name.starts_with("test_")
        || c.name.starts_with("Test")
        // Rust's `mod tests` / `mod test`.
        || c.parent.as_deref().is_some_and(|p| p == "tests" || p == "test")
}

/// What each query word in a file's name (`persist` in `persist.ts`, `sse` in `sse.rs`,
/// `completions` in `bash_completions.go`) adds to the file's chunks, for at most two words.
const PATH_WORD: f64 = 0.5;

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
    let words = crate::store::words::split_identifier(stem);
    words.len() > 1 && words.iter().any(|w| named(w))
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
            "def" | "fn" | "func" | "function" | "method" => hints.extend(["function", "method"]),
            _ => {}
        }
    }
    hints
}

/// `path` is `prefix` or inside it.
pub fn under(path: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    prefix.is_empty() || path == prefix || path.strip_prefix(prefix).is_some_and(|r| r.starts_with('/'))
}

/// Notes that target this chunk: its file (or a folder above it), its symbol, or a line in it.
pub fn notes_for(c: &Candidate, ctx: &Context) -> Vec<String> {
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
mod tests {
    use super::*;

    /// `files` written under `root`, indexed, and their ranking index built.
    fn indexed(root: &std::path::Path, files: &[(&str, &str)]) -> (Store, postings::Postings) {
        for (p, body) in files {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), body).unwrap();
        }
        let store = Store::open(&root.join(".booger"), root).unwrap();
        crate::index::run(root, &store, crate::index::Options::default(), &crate::index::Progress::default()).unwrap();
        let warm = postings::Postings::build(&store, &root.join(".booger")).unwrap();
        (store, warm)
    }

    /// The in-memory index and FTS5 must agree: the warm path is an optimisation only.
    #[test]
    fn warm_index_ranks_like_fts5() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let files = [
            (
                "net/server.py",
                "class HTTPServer:\n    def serve_forever(self):\n        \"\"\"Accept connections until shutdown.\"\"\"\n        pass\n\ndef retry_upload(blob, attempts=3):\n    \"\"\"Retry a failed upload.\"\"\"\n    return blob\n",
            ),
            (
                "config.rs",
                "/// Reads the configuration.\npub fn parse_config(path: &str) -> u32 { 0 }\npub fn load() { parse_config(\"x\"); }\n",
            ),
            ("docs/guide.md", "# Guide\n\nUploads are retried three times when the server fails.\n"),
            ("tests/test_server.py", "def test_retry_upload():\n    assert retry_upload(b'x')\n"),
        ];
        let (store, warm) = indexed(root, &files);
        let ctx = Context::default();
        // Words that appear in no path: the warm index also ranks by path words, FTS5 does not.
        for q in ["retry upload", "parse_config", "accept connections shutdown", "upload", "configuration reads"] {
            let a = search(&store, Some(&warm), q, &Filters::default(), &ctx, 10).unwrap();
            let b = search(&store, None, q, &Filters::default(), &ctx, 10).unwrap();
            let names =
                |h: &[Hit]| h.iter().take(3).map(|h| (h.chunk.path.clone(), h.chunk.name.clone())).collect::<Vec<_>>();
            assert_eq!(names(&a), names(&b), "{q}");
            // Plain words score alike; a joined word (`parse_config`) is a phrase for FTS5 and
            // two terms here, which ranks the same but scores a little differently.
            if !q.contains('_') {
                assert!((a[0].score - b[0].score).abs() < 0.5, "{q}: {} vs {}", a[0].score, b[0].score);
            }
        }
    }

    /// A commit subject's scope puts its folder first (the twin elsewhere would win on its
    /// path), and the method of the impl block whose
    /// header the query names outranks its twin in another impl, on both paths.
    #[test]
    fn change_requests_rank_by_scope_and_impl_header() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let files = [
            ("parser/lib.rs", "/// Validates a bool flag.\npub fn check_flag(b: &str) -> bool { b == \"t\" }\n"),
            ("net/lib.rs", "/// Validates a bool flag.\npub fn check_flag(b: &str) -> bool { b == \"t\" }\n"),
            (
                "src/multipart.rs",
                "pub struct Multipart<T> {\n    inner: T,\n}\n\nimpl<T, S> OptionalFromRequest<S> for Multipart<T> {\n    fn from_request(req: Request) -> Self {\n        read(req)\n    }\n}\n\nimpl<T, S> FromRequest<S> for Multipart<T> {\n    fn from_request(req: Request) -> Option<Multipart<T>> {\n        read(req)\n    }\n}\n",
            ),
        ];
        let (store, warm) = indexed(root, &files);
        let ctx = Context::default();
        for p in [Some(&warm), None] {
            let hits = search(&store, p, "fix(parser): validate bool flag", &Filters::default(), &ctx, 10).unwrap();
            assert_eq!(hits[0].chunk.path, "parser/lib.rs", "warm: {}", p.is_some());
        }
        // The methods share no word with the query but the split `OptionalFromRequest`: only
        // the warm index, which splits query words, finds them.
        {
            let p = Some(&warm);
            let hits = search(&store, p, "Implement OptionalFromRequest for Multipart", &Filters::default(), &ctx, 10)
                .unwrap();
            let methods: Vec<u32> =
                hits.iter().filter(|h| h.chunk.name == "from_request").map(|h| h.chunk.start_line).collect();
            assert_eq!(methods, [6, 12], "the method of `impl OptionalFromRequest` first");
        }
    }

    /// A change request's first page holds its two best tests, in their order, even where a
    /// dozen functions outrank them; a question's page does not make room for them; a query
    /// about tests puts them first.
    #[test]
    fn a_change_request_shows_its_tests() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let code: String = (0..14)
            .map(|i| format!("def retry_upload_{i}(blob):\n    \"\"\"Retry a failed upload of blob {i}.\"\"\"\n    return blob\n\n"))
            .collect();
        let tests = "def test_upload_once():\n    assert retry(1)\n\ndef test_upload_twice():\n    assert retry(2)\n\ndef test_upload_thrice():\n    assert retry(3)\n";
        let (store, warm) = indexed(root, &[("upload.py", code.as_str()), ("tests/test_upload.py", tests)]);
        let ctx = Context::default();
        let first_page = |q: &str| -> Vec<String> {
            let hits = search(&store, Some(&warm), q, &Filters::default(), &ctx, 10).unwrap();
            hits.iter().take(FIRST_PAGE).map(|h| h.chunk.name.clone()).collect()
        };
        let page = first_page("fix retry of a failed upload");
        assert_eq!(page[8..], ["test_upload_once", "test_upload_twice"], "{page:?}");
        let page = first_page("retry of a failed upload");
        assert!(page.iter().all(|n| n.starts_with("retry_upload")), "{page:?}");
        // A query about tests wants them first.
        let page = first_page("tests of a failed upload retry");
        assert!(page[..3].iter().all(|n| n.starts_with("test_upload")), "{page:?}");
    }

    #[test]
    fn a_scope_names_folders_stems_and_words_of_compound_stems() {
        let scope = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(in_scope("src/read.c", &scope(&["read"])));
        assert!(in_scope("src/json_lines.rs", &scope(&["jsonlines"])));
        assert!(in_scope("src/middleware/devtools.ts", &scope(&["devtool"])));
        assert!(in_scope("src/middleware/x.ts", &scope(&["middleware"])));
        assert!(in_scope("tests/persistAsync.test.tsx", &scope(&["persist"])));
        assert!(in_scope("bash_completions.go", &scope(&["completion"])));
        assert!(!in_scope("src/persistence.ts", &scope(&["persist"])));
        assert!(!in_scope("src/reader.c", &scope(&["read"])));
        assert!(!in_scope("read/x.c", &scope(&["write"])));
    }

    #[test]
    fn updated_warm_index_ranks_like_a_rebuilt_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |p: &str, body: &str| {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), body).unwrap();
        };
        write("a.py", "def retry_upload(blob):\n    \"\"\"Retry a failed upload.\"\"\"\n    return blob\n");
        write("b.py", "def parse_config(path):\n    return path\n");
        write("c/d.py", "class Server:\n    def serve(self):\n        pass\n");
        let store = crate::store::Store::open(&root.join(".booger"), root).unwrap();
        let progress = crate::index::Progress::default();
        crate::index::run(root, &store, crate::index::Options::default(), &progress).unwrap();
        let before = postings::Postings::build(&store, &root.join(".booger")).unwrap();
        // Edit one file, delete one, add one.
        write("a.py", "def retry_download(blob):\n    \"\"\"Retry a failed download.\"\"\"\n    return blob\n");
        std::fs::remove_file(root.join("b.py")).unwrap();
        write("c/e.py", "def upload_config(server):\n    return server\n");
        let report = crate::index::run(root, &store, crate::index::Options::default(), &progress).unwrap();
        let mut changed = report.changed.clone();
        changed.sort();
        assert_eq!(changed, ["a.py", "b.py", "c/e.py"]);
        let updated = before.updated(&store, &report.changed).unwrap();
        // A released project maps its old base again and catches up from the chunk keys.
        let reopened = postings::Postings::open(&store, &root.join(".booger")).unwrap().unwrap();
        let rebuilt = postings::Postings::build(&store, &root.join(".booger")).unwrap();
        assert_eq!(updated.content_generation, store.content_generation());
        assert_eq!(reopened.content_generation, store.content_generation());
        let ctx = Context::default();
        for q in ["retry upload", "retry download", "parse config", "upload config server", "serve"] {
            let hits = |p: &postings::Postings| {
                let h = search(&store, Some(p), q, &Filters::default(), &ctx, 10).unwrap();
                h.iter()
                    .map(|h| (h.chunk.path.clone(), h.chunk.name.clone(), (h.score * 1e6).round()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(hits(&updated), hits(&rebuilt), "{q}");
            assert_eq!(hits(&reopened), hits(&rebuilt), "{q}");
        }
        // A full rebuild of the store gives the same content new chunk ids: the keys notice.
        crate::index::run(root, &store, crate::index::Options { full: true, ..Default::default() }, &progress).unwrap();
        let caught_up = rebuilt.catch_up(&store).unwrap();
        let fresh = postings::Postings::build(&store, &root.join(".booger")).unwrap();
        let ids = |p: &postings::Postings| {
            search(&store, Some(p), "retry download", &Filters::default(), &ctx, 10)
                .unwrap()
                .iter()
                .map(|h| h.chunk.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&caught_up), ids(&fresh));
        assert!(!ids(&fresh).is_empty());
    }

    /// Edits one file at a time, past the point where recent files fold into the delta and
    /// again: every step ranks like a fresh build.
    #[test]
    fn many_single_file_updates_rank_like_a_rebuilt_index() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |i: usize, word: &str| {
            std::fs::create_dir_all(root.join("m")).unwrap();
            std::fs::write(
                root.join(format!("m/f{i}.py")),
                format!("def {word}_{i}(x):\n    return x  # {word} value\n"),
            )
            .unwrap();
        };
        for i in 0..80 {
            write(i, "alpha");
        }
        let store = crate::store::Store::open(&root.join(".booger"), root).unwrap();
        let progress = crate::index::Progress::default();
        crate::index::run(root, &store, crate::index::Options::default(), &progress).unwrap();
        let mut p = postings::Postings::build(&store, &root.join(".booger")).unwrap();
        let ctx = Context::default();
        let hits = |p: &postings::Postings, q: &str| {
            search(&store, Some(p), q, &Filters::default(), &ctx, 20)
                .unwrap()
                .iter()
                .map(|h| (h.chunk.path.clone(), h.chunk.name.clone(), (h.score * 1e6).round()))
                .collect::<Vec<_>>()
        };
        for step in 0..75 {
            // Some files change twice (once into the delta, once into the recent segment).
            let i = (step * 7) % 80;
            write(i, if step % 2 == 0 { "beta" } else { "gamma" });
            let report = crate::index::run(root, &store, crate::index::Options::default(), &progress).unwrap();
            p = p.updated(&store, &report.changed).unwrap();
            if step % 12 == 11 || step == 74 {
                let rebuilt = postings::Postings::build(&store, &root.join(".booger")).unwrap();
                for q in ["alpha value", "beta", "gamma value", "value"] {
                    assert_eq!(hits(&p, q), hits(&rebuilt, q), "step {step}: {q}");
                }
                // Rebuilding wrote a new base file: continue from the rebuilt index half the time.
                if step % 24 == 23 {
                    p = rebuilt;
                }
            }
        }
    }
}
