//! Ranking tests: the ranking index against FTS5, and the re-ranking factors on small projects.

use super::*;

/// `files` written under `root`, indexed, and their ranking index built.
pub(super) fn indexed(root: &std::path::Path, files: &[(&str, &str)]) -> (Store, ranking_index::RankingIndex) {
    for (p, body) in files {
        std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
        std::fs::write(root.join(p), body).unwrap();
    }
    let store = Store::open(&root.join(".booger"), root).unwrap();
    crate::engine::index::run(
        root,
        &store,
        crate::engine::index::Options::default(),
        &crate::engine::index::Progress::default(),
    )
    .unwrap();
    let ranking = ranking_index::RankingIndex::build(&store, &root.join(".booger")).unwrap();
    (store, ranking)
}

/// `text` searched as a tool searches it, by the ranking index (`ranking`) or by FTS5.
pub(super) fn search(
    store: &Store,
    ranking: Option<&ranking_index::RankingIndex>,
    text: &str,
    filters: &Filters,
    context: &Context,
    need: usize,
) -> Result<Vec<Hit>, StoreError> {
    Searcher { store, ranking, context }.search(&Query::parse(text), text, filters, need)
}

/// [`indexed`], among 60 small unrelated modules (so that the query's words are rare, as in a
/// real project, and weigh what they would there).
pub(super) fn indexed_among_others(
    root: &std::path::Path,
    files: &[(&str, &str)],
) -> (Store, ranking_index::RankingIndex) {
    let others: Vec<(String, String)> =
        (0..60).map(|i| (format!("lib/m{i}.py"), format!("def helper_{i}(x):\n    return x + {i}\n"))).collect();
    let mut all = files.to_vec();
    all.extend(others.iter().map(|(p, body)| (p.as_str(), body.as_str())));
    indexed(root, &all)
}

/// The in-memory index and FTS5 must agree: the ranking path is an optimisation only.
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
    let (store, ranking) = indexed(root, &files);
    let ctx = Context::default();
    // Words that appear in no path: the ranking index also ranks by path words, FTS5 does not.
    for q in ["retry upload", "parse_config", "accept connections shutdown", "upload", "configuration reads"] {
        let a = search(&store, Some(&ranking), q, &Filters::default(), &ctx, 10).unwrap();
        let b = search(&store, None, q, &Filters::default(), &ctx, 10).unwrap();
        let names =
            |h: &[Hit]| h.iter().take(3).map(|h| (h.chunk.path.clone(), h.chunk.name.clone())).collect::<Vec<_>>();
        assert_eq!(names(&a), names(&b), "{q}");
        // Plain words score alike; a joined word (`parse_config`) is one FTS5 term of two
        // words, whose rows count a word once a column, and two counted terms here: it ranks
        // the same but scores a little differently.
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
    let (store, ranking) = indexed(root, &files);
    let ctx = Context::default();
    for p in [Some(&ranking), None] {
        let hits = search(&store, p, "fix(parser): validate bool flag", &Filters::default(), &ctx, 10).unwrap();
        assert_eq!(hits[0].chunk.path, "parser/lib.rs", "ranking: {}", p.is_some());
    }
    // The methods share no word with the query but the split `OptionalFromRequest`: only
    // the ranking index, which splits query words, finds them.
    {
        let p = Some(&ranking);
        let hits =
            search(&store, p, "Implement OptionalFromRequest for Multipart", &Filters::default(), &ctx, 10).unwrap();
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
        .map(|i| {
            format!(
                "def retry_upload_{i}(blob):\n    \"\"\"Retry a failed upload of blob {i}.\"\"\"\n    return blob\n\n"
            )
        })
        .collect();
    let tests = "def test_upload_once():\n    assert retry(1)\n\ndef test_upload_twice():\n    assert retry(2)\n\ndef test_upload_thrice():\n    assert retry(3)\n";
    let (store, ranking) = indexed(root, &[("upload.py", code.as_str()), ("tests/test_upload.py", tests)]);
    let ctx = Context::default();
    let first_page = |q: &str| -> Vec<String> {
        let hits = search(&store, Some(&ranking), q, &Filters::default(), &ctx, 10).unwrap();
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

/// While a run rewrites files, the ranking index held from before answers (a checkout's
/// queries rank as usual, at its speed): the chunks the run replaced are left out, the
/// files it has not touched answer as before.
#[test]
fn a_stale_ranking_index_leaves_out_the_chunks_a_run_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let files = [
        ("a.py", "def retry_upload(blob):\n    \"\"\"Retry a failed upload.\"\"\"\n    return blob\n"),
        ("b.py", "def retry_upload_later(blob):\n    \"\"\"Retry an upload later.\"\"\"\n    return blob\n"),
    ];
    let (store, held) = indexed(root, &files);
    std::fs::write(root.join("a.py"), "def send_report(r):\n    return r\n").unwrap();
    let progress = crate::engine::index::Progress::default();
    crate::engine::index::run(root, &store, crate::engine::index::Options::default(), &progress).unwrap();
    assert_ne!(held.content_generation, store.content_generation());
    let hits = search(&store, Some(&held), "retry upload", &Filters::default(), &Context::default(), 10).unwrap();
    let found: Vec<(&str, &str)> = hits.iter().map(|h| (h.chunk.path.as_str(), h.chunk.name.as_str())).collect();
    assert_eq!(found, [("b.py", "retry_upload_later")], "a.py's old chunk is gone from the store");
    // A full re-index replaces every chunk the held index knows: FTS5 answers, with the new.
    let full = crate::engine::index::Options { full: true, ..Default::default() };
    crate::engine::index::run(root, &store, full, &progress).unwrap();
    let hits = search(&store, Some(&held), "retry upload", &Filters::default(), &Context::default(), 10).unwrap();
    assert_eq!((hits[0].chunk.path.as_str(), hits[0].chunk.name.as_str()), ("b.py", "retry_upload_later"));
    let rows = store.candidates_by_id(&[(hits[0].chunk.id, 0.0)]).unwrap();
    assert_eq!(rows[0].name, "retry_upload_later", "a chunk of now, not a number taken again");
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
    let progress = crate::engine::index::Progress::default();
    crate::engine::index::run(root, &store, crate::engine::index::Options::default(), &progress).unwrap();
    let before = ranking_index::RankingIndex::build(&store, &root.join(".booger")).unwrap();
    // Edit one file, delete one, add one.
    write("a.py", "def retry_download(blob):\n    \"\"\"Retry a failed download.\"\"\"\n    return blob\n");
    std::fs::remove_file(root.join("b.py")).unwrap();
    write("c/e.py", "def upload_config(server):\n    return server\n");
    let report = crate::engine::index::run(root, &store, crate::engine::index::Options::default(), &progress).unwrap();
    let mut changed = report.changed.clone();
    changed.sort();
    assert_eq!(changed, ["a.py", "b.py", "c/e.py"]);
    let updated = before.updated(&store, &report.changed, None).unwrap();
    // A released project maps its old base again and catches up from the chunk keys.
    let reopened = ranking_index::RankingIndex::open(&store, &root.join(".booger")).unwrap().unwrap();
    let rebuilt = ranking_index::RankingIndex::build(&store, &root.join(".booger")).unwrap();
    assert_eq!(updated.content_generation, store.content_generation());
    assert_eq!(reopened.content_generation, store.content_generation());
    let ctx = Context::default();
    for q in ["retry upload", "retry download", "parse config", "upload config server", "serve"] {
        let hits = |p: &ranking_index::RankingIndex| {
            let h = search(&store, Some(p), q, &Filters::default(), &ctx, 10).unwrap();
            h.iter().map(|h| (h.chunk.path.clone(), h.chunk.name.clone(), (h.score * 1e6).round())).collect::<Vec<_>>()
        };
        assert_eq!(hits(&updated), hits(&rebuilt), "{q}");
        assert_eq!(hits(&reopened), hits(&rebuilt), "{q}");
    }
    // A full rebuild of the store gives the same content new chunk ids: the keys notice.
    crate::engine::index::run(
        root,
        &store,
        crate::engine::index::Options { full: true, ..Default::default() },
        &progress,
    )
    .unwrap();
    let caught_up = rebuilt.catch_up(&store).unwrap();
    let fresh = ranking_index::RankingIndex::build(&store, &root.join(".booger")).unwrap();
    let ids = |p: &ranking_index::RankingIndex| {
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
        std::fs::write(root.join(format!("m/f{i}.py")), format!("def {word}_{i}(x):\n    return x  # {word} value\n"))
            .unwrap();
    };
    for i in 0..80 {
        write(i, "alpha");
    }
    let store = crate::store::Store::open(&root.join(".booger"), root).unwrap();
    let progress = crate::engine::index::Progress::default();
    crate::engine::index::run(root, &store, crate::engine::index::Options::default(), &progress).unwrap();
    let mut p = ranking_index::RankingIndex::build(&store, &root.join(".booger")).unwrap();
    let ctx = Context::default();
    let hits = |p: &ranking_index::RankingIndex, q: &str| {
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
        let report =
            crate::engine::index::run(root, &store, crate::engine::index::Options::default(), &progress).unwrap();
        p = p.updated(&store, &report.changed, None).unwrap();
        if step % 12 == 11 || step == 74 {
            let rebuilt = ranking_index::RankingIndex::build(&store, &root.join(".booger")).unwrap();
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

/// Vectors' prose goes after their code for semantic search, out of a fused list, and stays
/// where it was when the query asks for documentation.
#[test]
fn prose_found_by_vectors_is_demoted_unless_asked_for() {
    let hit = |id: i64, path: &str| {
        let language = if path.ends_with(".md") { "markdown" } else { "python" };
        let chunk = Candidate {
            id,
            path: path.into(),
            language: language.into(),
            kind: booger_proto::tools::ChunkKind::Function,
            name: String::new(),
            signature: String::new(),
            parent: None,
            start_line: 1,
            end_line: 1,
            bytes: 10,
            bm25: 0.0,
        };
        Hit { chunk, score: 1.0 / id as f64, notes: Vec::new() }
    };
    let list = || vec![hit(1, "docs/retries.md"), hit(2, "net/retry.py"), hit(3, "CHANGES.rst"), hit(4, "net/io.py")];
    let paths = |h: &[Hit]| h.iter().map(|h| h.chunk.path.clone()).collect::<Vec<_>>();
    let mut hits = list();
    demote_prose(&mut hits, "retry failed uploads", false);
    assert_eq!(paths(&hits), ["net/retry.py", "net/io.py", "docs/retries.md", "CHANGES.rst"]);
    let mut hits = list();
    demote_prose(&mut hits, "retry failed uploads", true);
    assert_eq!(paths(&hits), ["net/retry.py", "net/io.py"]);
    let mut hits = list();
    demote_prose(&mut hits, "docs for retries", true);
    assert_eq!(paths(&hits).len(), 4);
}

/// Release notes restate a commit's subject word for word: they come after every piece of
/// code that matches, unless the query asks about releases.
#[test]
fn release_notes_come_after_the_code() {
    let dir = tempfile::tempdir().unwrap();
    let entry = "- Retry the upload when the connection times out: retry, upload, connection, times out.\n";
    let changelog = format!("# Changes\n\n## 2.1\n\n{}", entry.repeat(4));
    // Other code, so the query's words are rare (as in a real project) and weigh what they do there.
    let files = [
        ("CHANGELOG.md", changelog.as_str()),
        ("net/upload.py", "def send(blob):\n    \"\"\"Sends blob; on timeout, tries again.\"\"\"\n    return blob\n"),
        ("net/io.py", "def connect():\n    \"\"\"Opens the connection.\"\"\"\n"),
    ];
    let (store, ranking) = indexed_among_others(dir.path(), &files);
    let ctx = Context::default();
    let paths = |q: &str| -> Vec<String> {
        let hits = search(&store, Some(&ranking), q, &Filters::default(), &ctx, 10).unwrap();
        hits.iter().map(|h| h.chunk.path.clone()).collect()
    };
    let found = paths("retry the upload when the connection times out");
    let notes = found.iter().position(|p| p == "CHANGELOG.md").expect("the changelog matches");
    assert!(
        found[..notes].iter().any(|p| p == "net/upload.py") && found[..notes].iter().any(|p| p == "net/io.py"),
        "{found:?}"
    );
    assert_eq!(paths("changelog: retry the upload when the connection times out")[0], "CHANGELOG.md");
}

/// `q`'s hits and, as files_with_matches ranks them, its files' paths, by the ranking index
/// (`ranking`) or by FTS5.
fn hits_and_files(store: &Store, ranking: Option<&ranking_index::RankingIndex>, q: &str) -> (Vec<Hit>, Vec<String>) {
    let context = Context::default();
    let hits = search(store, ranking, q, &Filters::default(), &context, 10).unwrap();
    let s = Searcher { store, ranking, context: &context };
    let files = s.rank_files(&Query::parse(q), &hits).unwrap().iter().map(|f| f.path.to_owned()).collect();
    (hits, files)
}

/// files_with_matches: a file holding every word of a task across its functions comes before
/// a file with one function holding most of them, on both paths (the words are found in the
/// ranking index, or by FTS5).
#[test]
fn files_rank_by_the_query_words_they_hold_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "cache/store.py",
            "def expire(cache):\n    \"\"\"Evict stale items.\"\"\"\n    cache.pop()\n\n\ndef save(cache):\n    \"\"\"Write the entries to disk.\"\"\"\n    dump(cache)\n",
        ),
        (
            "cache/memory.py",
            "def purge(items):\n    \"\"\"Evict stale entries first (see staleEntries).\"\"\"\n    return items\n",
        ),
    ];
    let (store, ranking) = indexed_among_others(dir.path(), &files);
    for w in [Some(&ranking), None] {
        let (hits, order) = hits_and_files(&store, w, "evict stale entries from disk");
        // The chunks alone put the one function that holds three words first.
        let alone: Vec<(&str, f64)> =
            files::by_file(&hits, files::lexical_evidence).iter().map(|f| (f.path, f.score)).collect();
        assert_eq!(alone[0].0, "cache/memory.py", "ranking: {}: {alone:?}", w.is_some());
        assert_eq!(order[..2], ["cache/store.py", "cache/memory.py"], "ranking: {}: {alone:?}", w.is_some());
    }
}

/// Code between items (a module's table of limits) is a poorer answer than a function that
/// speaks of the same words, but fair evidence for its file: the table is what a change to
/// the limits edits.
#[test]
fn a_module_table_ranks_its_file_but_not_above_functions_among_answers() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "wire/limits.py",
            "HEADER_LIMITS = {\n    'max_bytes': 8192,\n    'max_count': 100,\n    'timeout_seconds': 30,\n    'encoding': 'latin-1',\n    'strict': True,\n}\n\n\ndef clamp(n):\n    return n\n",
        ),
        (
            "wire/reader.py",
            "def read(stream):\n    \"\"\"Stop at the header limits: max bytes, max count.\"\"\"\n    return stream\n",
        ),
    ];
    let (store, ranking) = indexed_among_others(dir.path(), &files);
    for w in [Some(&ranking), None] {
        let (hits, order) = hits_and_files(&store, w, "header limits max bytes");
        let answers: Vec<(&str, &str)> = hits.iter().map(|h| (h.chunk.path.as_str(), h.chunk.kind.as_str())).collect();
        let scores: Vec<f64> = hits.iter().map(|h| h.score).collect();
        assert_eq!(
            answers[..2],
            [("wire/reader.py", "function"), ("wire/limits.py", "block")],
            "ranking: {}: {scores:?}",
            w.is_some()
        );
        assert_eq!(order[..2], ["wire/limits.py", "wire/reader.py"], "ranking: {}: {answers:?}", w.is_some());
    }
}

/// A question's first page spreads over files: the second and third chunks of the file that
/// holds most of its words wait for the best chunk of another file, unless clearly better
/// (here the second scores 1.4 more: less than the margin).
#[test]
fn a_question_first_page_takes_one_chunk_per_file_first() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "router/table.py",
            "def match_path(path):\n    \"\"\"Match a path against the route table, trailing slash too.\"\"\"\n    return path\n\n\ndef strip_slash(path):\n    \"\"\"A trailing slash on a path is dropped before the route table is read.\"\"\"\n    return path\n\n\ndef route_table():\n    \"\"\"The route table, each path with its trailing slash.\"\"\"\n    return {}\n",
        ),
        (
            "router/redirect.py",
            "def redirect(path):\n    \"\"\"Redirects a path that ends in a trailing slash.\"\"\"\n    return path\n",
        ),
    ];
    let (store, ranking) = indexed_among_others(dir.path(), &files);
    // The ranking index's scores (FTS5's differ by a little more than the margin here).
    {
        let w = Some(&ranking);
        let hits = search(
            &store,
            w,
            "how does the router match a path with a trailing slash",
            &Filters::default(),
            &Context::default(),
            10,
        )
        .unwrap();
        let paths: Vec<&str> = hits.iter().map(|h| h.chunk.path.as_str()).collect();
        assert_eq!(paths[..2], ["router/table.py", "router/redirect.py"], "ranking: {}: {paths:?}", w.is_some());
    }
    // A change request keeps its ranking: its chunks are the places to edit, wherever they are.
    let hits = search(
        &store,
        Some(&ranking),
        "fix matching a path with a trailing slash in the route table",
        &Filters::default(),
        &Context::default(),
        10,
    )
    .unwrap();
    assert_eq!(hits[1].chunk.path, "router/table.py");
}

/// A question that says "changes" or "history" of what code does does not ask for release
/// notes; one that names the docs does, and so does a short query naming the changes.
#[test]
fn a_question_asks_for_docs_only_by_naming_them() {
    assert!(!Query::parse("where is a store built that changes only when actions are sent?").asks_for_docs());
    assert!(Query::parse("where do the docs explain persisting a store?").asks_for_docs());
    assert!(Query::parse("changes in 2.0").asks_for_docs());
}

/// A quoted phrase finds the chunks holding its words in that order (in the text, or in a
/// mixed-case name split), not those holding them apart, on both paths (the ranking index
/// leaves a phrase to FTS5).
#[test]
fn a_quoted_phrase_finds_its_words_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "a.py",
            "def first():\n    \"\"\"Retry the upload once.\"\"\"\n\n\ndef second():\n    \"\"\"The upload retry loop.\"\"\"\n",
        ),
        ("b.py", "def third():\n    return uploadRetry()\n"),
    ];
    let (store, ranking) = indexed_among_others(dir.path(), &files);
    for w in [Some(&ranking), None] {
        let hits = search(&store, w, "\"upload retry\"", &Filters::default(), &Context::default(), 10).unwrap();
        let mut names: Vec<&str> = hits.iter().map(|h| h.chunk.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["second", "third"], "ranking: {}", w.is_some());
    }
}

/// A name written with its owner (`Value::Null`) is the owner's: another type's chunk of
/// that name (a `RawValue::NULL` constant, short and scored high by bm25) comes after the
/// owner's own, on both paths.
#[test]
fn a_member_written_with_its_owner_is_the_owners() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let files = [
        (
            "src/raw.rs",
            "pub struct RawValue;\n\nimpl RawValue {\n    pub const NULL: &'static RawValue = &RawValue;\n}\n",
        ),
        (
            "src/value.rs",
            "/// A JSON value.\npub enum Value {\n    /// JSON's null.\n    Null,\n    Bool(bool),\n    Number(f64),\n}\n",
        ),
    ];
    let (store, ranking) = indexed_among_others(root, &files);
    let ctx = Context::default();
    for p in [Some(&ranking), None] {
        let hits = search(&store, p, "Value::Null", &Filters::default(), &ctx, 10).unwrap();
        let first = |name: &str| hits.iter().position(|h| h.chunk.name == name).unwrap_or(usize::MAX);
        assert!(
            first("Value") < first("NULL") && first("NULL") < usize::MAX,
            "ranking: {}: {:?}",
            p.is_some(),
            hits.iter().map(|h| &h.chunk.name).collect::<Vec<_>>()
        );
    }
}
