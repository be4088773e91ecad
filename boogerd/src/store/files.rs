//! Files and their chunks: what the indexer reads back and writes in batches.

use std::collections::{BTreeMap, HashMap};

use rusqlite::OptionalExtension;

use super::tally::{Counted, counted_columns};
use super::{Result, Store};
use crate::base::sync::Recover;
use crate::source::chunk::Chunk;

/// What the index knows of a file, for change detection.
#[derive(Debug, Clone)]
pub(crate) struct FileState {
    pub size: u64,
    pub mtime_ns: i64,
    pub hash: String,
}

/// One file's new state. With `chunks: None` only size and mtime changed (same content).
#[derive(Debug, Clone)]
pub(crate) struct FileWrite {
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub hash: String,
    pub language: String,
    pub problem: Option<String>,
    pub chunks: Option<Vec<Chunk>>,
    /// The chunks' `chunk_grams` rows, a block of consecutive chunks each
    /// ([`super::grams::blocks_of`]), or `None` to leave them to [`Store::fill_grams`] (a
    /// large run).
    pub grams: Option<Vec<super::grams::Block>>,
    /// Each chunk's words for its full-text row and ranking postings
    /// ([`super::words::ChunkWords`]), made where the file was chunked so the single writer
    /// only writes; `None`: made by the writer.
    pub words: Option<Vec<super::words::ChunkWords>>,
    /// Each chunk's text as stored when compressed ([`super::Packer::pack`]), made where the
    /// file was chunked; `None`: compressed by the writer.
    pub packed: Option<super::text::Packed>,
    /// Each chunk's ways to read its signature and doc back from its text
    /// ([`super::in_text::Ways`]), made where the file was chunked; `None`: made by the writer.
    pub ways: Option<Vec<super::in_text::Ways>>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stats {
    pub files: u64,
    pub chunks: u64,
    pub source_bytes: u64,
    pub languages: BTreeMap<String, u64>,
    pub kinds: BTreeMap<String, u64>,
    /// Files not chunked structurally, with the reason (the first [`PROBLEMS_KEPT`] by path).
    pub problems: Vec<(String, String)>,
    /// How many files there are with a problem, all of them.
    pub problems_total: u64,
}

/// How many files indexed with a problem the stats list.
pub(super) const PROBLEMS_KEPT: usize = 200;

/// Files indexed with a problem, and the problem: (path, why), the first [`PROBLEMS_KEPT`];
/// and how many there are.
pub(super) type Problems = std::sync::Arc<(Vec<(String, String)>, u64)>;

/// [`Stats`] and the Merkle root of one content generation.
#[derive(Debug, Clone)]
pub(crate) struct Summary {
    pub stats: Stats,
    pub root_hash: String,
}

/// Removes the chunks of the deleted files `paths` with their rows (see [`forget_rows`]) and
/// their pending trigram marks, the chunks `also` (those a rewrite does not keep), and the
/// trigram rows of the deleted files and of the rewritten files, whose old chunks are
/// `rewritten` (a file's rows are written whole, from all of its chunks, kept or new), in
/// the caller's transaction.
pub(super) fn forget_files<'a>(
    tx: &rusqlite::Transaction,
    paths: impl Iterator<Item = &'a str>,
    rewritten: &[i64],
    also: Vec<Counted>,
) -> rusqlite::Result<super::tally::Change> {
    let mut ids_of = tx.prepare_cached(concat!(
        "SELECT ",
        counted_columns!(),
        " FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?1"
    ))?;
    let mut file_of = tx.prepare_cached("SELECT id FROM files WHERE path = ?1")?;
    let mut rows = also;
    let mut files: Vec<i64> = Vec::new();
    for path in paths {
        files.extend(file_of.query_row([path], |r| r.get::<_, i64>(0)).optional()?);
        for row in ids_of.query_map([path], |r| Counted::read(r, 0))? {
            rows.push(row?);
        }
    }
    // A row's id is its first chunk's (`grams::row_chunks`): the files' rows are among their
    // chunks' ids.
    let mut grams: Vec<i64> = rows.iter().map(|r| r.id).chain(rewritten.iter().copied()).collect();
    rows.sort_unstable();
    let change = forget_rows(tx, &rows)?;
    // In rowid order, as the full-text rows (see `forget_rows`).
    grams.sort_unstable();
    grams.dedup();
    let mut forget_grams = tx.prepare_cached("DELETE FROM chunk_grams WHERE rowid = ?1")?;
    for row in grams {
        forget_grams.execute([row])?;
    }
    files.sort_unstable();
    let mut pending = tx.prepare_cached("DELETE FROM grams_pending WHERE file_id = ?1")?;
    for id in files {
        pending.execute([id])?;
    }
    Ok(change)
}

/// Removes the chunks `rows` (sorted by id) with their full-text rows and vectors. Each
/// statement touches one table and fires nothing, so none runs under a savepoint (where FTS5
/// would flush its pending rows), and full-text rows go in rowid order.
fn forget_rows(tx: &rusqlite::Transaction, rows: &[Counted]) -> rusqlite::Result<super::tally::Change> {
    let mut change = super::tally::Change::default();
    let mut chunk = tx.prepare_cached("DELETE FROM chunks WHERE id = ?1")?;
    let mut text = tx.prepare_cached("DELETE FROM chunks_fts WHERE rowid = ?1")?;
    let mut models = tx.prepare_cached(
        "SELECT m.name FROM embeddings e JOIN embedding_models m ON m.id = e.model WHERE e.chunk_id = ?1",
    )?;
    let mut vectors = tx.prepare_cached("DELETE FROM embeddings WHERE chunk_id = ?1")?;
    for r in rows {
        change.chunk(&r.kind, r.bare, -1);
        chunk.execute([r.id])?;
    }
    for &Counted { id, .. } in rows {
        text.execute([id])?;
        for model in models.query_map([id], |r| r.get::<_, String>(0))? {
            change.vector(&model?, -1);
        }
        vectors.execute([id])?;
    }
    Ok(change)
}

/// A `SELECT path, size_bytes, mtime_ns, content_hash` row.
fn file_state(r: &rusqlite::Row) -> rusqlite::Result<(String, FileState)> {
    Ok((r.get(0)?, FileState { size: r.get::<_, i64>(1)? as u64, mtime_ns: r.get(2)?, hash: r.get(3)? }))
}

impl Store {
    pub(crate) fn file_states(&self) -> Result<HashMap<String, FileState>> {
        self.read(|c| {
            let mut stmt = c.prepare("SELECT path, size_bytes, mtime_ns, content_hash FROM files")?;
            let rows = stmt.query_map([], file_state)?;
            rows.collect()
        })
    }

    /// The indexed files a partial run covers (see [`crate::source::Survey`]).
    pub(crate) fn file_states_in(&self, scope: &crate::source::Survey) -> Result<HashMap<String, FileState>> {
        if scope.deep.iter().any(String::is_empty) {
            return self.file_states();
        }
        self.read(|c| {
            // Paths under `d/` sort between `d/` and `d0` ('0' follows '/'), so each
            // directory is one range of the path index.
            let mut stmt = c.prepare_cached(
                "SELECT path, size_bytes, mtime_ns, content_hash FROM files WHERE path >= ?1 AND path < ?2",
            )?;
            let mut out = HashMap::new();
            for dir in scope.deep.iter().chain(&scope.shallow) {
                let (lo, hi) = if dir.is_empty() {
                    (String::new(), "\u{10ffff}".to_owned())
                } else {
                    (format!("{dir}/"), format!("{dir}0"))
                };
                let rows = stmt.query_map([&lo, &hi], file_state)?;
                for row in rows {
                    let (path, state) = row?;
                    if scope.contains(&path) {
                        out.insert(path, state);
                    }
                }
            }
            Ok(out)
        })
    }

    /// Has the next run read every file again (its content hash kept, so an unchanged file is
    /// not parsed again): what a change of which files to set aside needs, since a header can
    /// decide that.
    pub(crate) fn recheck_all(&self) -> Result<()> {
        self.write(|c| {
            c.execute("UPDATE files SET mtime_ns = -1", [])?;
            Ok(())
        })
    }

    /// Forgets every file and chunk (a full rebuild); annotations and the workset stay.
    pub(crate) fn clear_files(&self) -> Result<()> {
        self.content_changed();
        let generation = self.content_generation();
        self.write(|c| {
            let tx = c.transaction()?;
            tx.execute_batch(
                "DELETE FROM embeddings; DELETE FROM chunks; DELETE FROM files;
                 INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all');
                 INSERT INTO chunk_grams(chunk_grams) VALUES ('delete-all'); DELETE FROM grams_pending;",
            )?;
            super::save_generation(&tx, generation)?;
            tx.commit()?;
            *self.tally.lock().recover() = Some(super::tally::Tally::default());
            Ok(())
        })?;
        self.files_written();
        Ok(())
    }

    /// Per file with chunks, in path order: `content hash:first chunk id:chunk count`. Two
    /// equal keys mean the same chunks under the same ids (a file's chunks are written
    /// together, with consecutive ids), which is what the ranking index's base must match.
    pub fn chunk_keys(&self) -> Result<Vec<(String, String)>> {
        self.read(|c| {
            let mut stmt = c.prepare(
                "SELECT f.path, f.content_hash || ':' || min(c.id) || ':' || count(*)
                 FROM files f JOIN chunks c ON c.file_id = f.id GROUP BY f.id ORDER BY f.path",
            )?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })
    }

    /// Every file's path and content hash, sorted by path (for the Merkle root).
    pub fn hashes(&self) -> Result<Vec<(String, String)>> {
        self.read(|c| {
            let mut stmt = c.prepare("SELECT path, content_hash FROM files ORDER BY path")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })
    }

    /// Counts and the Merkle root, recomputed only after files were written. (Not keyed by
    /// the content generation: a batch bumps that before it commits, and a summary read in
    /// between would be kept, stale, until the next change.)
    pub(crate) fn summary(&self) -> Result<std::sync::Arc<Summary>> {
        let commits = self.file_commits.load(std::sync::atomic::Ordering::SeqCst);
        if let Some((g, s)) = self.summary.lock().recover().as_ref()
            && *g == commits
        {
            return Ok(s.clone());
        }
        let hashes = self.hashes()?;
        let fresh = std::sync::Arc::new(Summary {
            stats: self.stats()?,
            root_hash: crate::source::hash::merkle_root(hashes.iter().map(|(p, h)| (p.as_str(), h.as_str()))),
        });
        *self.summary.lock().recover() = Some((commits, fresh.clone()));
        Ok(fresh)
    }

    /// Files or chunks were committed: summaries computed before are stale.
    pub(super) fn files_written(&self) {
        self.file_commits.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// The last summary computed, whatever has been written since: what `status` shows while
    /// a run writes (each batch would otherwise ask for two full scans of a growing index).
    pub(crate) fn last_summary(&self) -> Option<std::sync::Arc<Summary>> {
        self.summary.lock().recover().as_ref().map(|(_, s)| s.clone())
    }

    /// [`stats`](Self::stats) when the counts are in memory already: never a scan to count
    /// them (what releasing a project keeps for the status page).
    pub(crate) fn counted_stats(&self) -> Option<Stats> {
        if self.tally.lock().recover().is_none() {
            return None;
        }
        self.stats().ok()
    }

    pub fn stats(&self) -> Result<Stats> {
        let mut s = self.with_tally(|t| Stats {
            files: t.languages.values().map(|(files, _)| files).sum(),
            chunks: t.kinds.values().sum(),
            source_bytes: t.languages.values().map(|(_, bytes)| bytes).sum(),
            languages: t.languages.iter().map(|(l, (files, _))| (l.clone(), *files)).collect(),
            kinds: t.kinds.clone(),
            problems: Vec::new(),
            problems_total: 0,
        })?;
        let problems = self.problems()?;
        (s.problems, s.problems_total) = (problems.0.clone(), problems.1);
        Ok(s)
    }

    /// Files indexed with a problem (the first [`PROBLEMS_KEPT`] by path) and their count,
    /// read once per files generation.
    fn problems(&self) -> Result<Problems> {
        let commits = self.file_commits.load(std::sync::atomic::Ordering::SeqCst);
        if let Some((g, p)) = self.problems.lock().recover().as_ref()
            && *g == commits
        {
            return Ok(p.clone());
        }
        let fresh = std::sync::Arc::new(self.read(|c| {
            let mut problems = c.prepare(&format!(
                "SELECT path, problem FROM files WHERE problem IS NOT NULL ORDER BY path LIMIT {PROBLEMS_KEPT}"
            ))?;
            let listed =
                problems.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<Vec<_>>>()?;
            let total = if listed.len() < PROBLEMS_KEPT {
                listed.len() as u64
            } else {
                c.query_row("SELECT count(*) FROM files WHERE problem IS NOT NULL", [], |r| r.get::<_, i64>(0))? as u64
            };
            Ok((listed, total))
        })?);
        *self.problems.lock().recover() = Some((commits, fresh.clone()));
        Ok(fresh)
    }

    /// Every file indexed with a problem, by path (`status --all`).
    pub(crate) fn all_problems(&self) -> Result<Vec<(String, String)>> {
        self.read(|c| {
            let mut all = c.prepare("SELECT path, problem FROM files WHERE problem IS NOT NULL ORDER BY path")?;
            all.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect()
        })
    }

    /// Chunks of one file, in order.
    pub fn chunks_of(&self, path: &str) -> Result<Vec<Chunk>> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(concat!(
                "SELECT c.kind, c.name, ",
                super::in_text::signature_of_c!(),
                ", c.parent, ",
                super::in_text::doc_of_c!(),
                ", booger_text(c.content), c.start_line, c.end_line, c.start_byte, c.end_byte
                 FROM chunks c WHERE c.file_id = (SELECT id FROM files WHERE path = ?1) ORDER BY c.start_byte, c.id",
            ))?;
            let rows = stmt.query_map([path], |r| chunk_at(r, 0))?;
            rows.collect()
        })
    }

    /// The chunks of `path` if the index holds exactly the version with content hash `hash`
    /// (the git tools reuse them instead of parsing that version again).
    pub(crate) fn chunks_if_current(&self, path: &str, hash: &str) -> Result<Option<Vec<Chunk>>> {
        Ok(self.indexed_version(path, hash)?.map(|(chunks, _)| chunks))
    }

    /// [`chunks_if_current`](Self::chunks_if_current), with the file's problem (why it was not
    /// chunked structurally, if it was not).
    pub(crate) fn indexed_version(&self, path: &str, hash: &str) -> Result<Option<(Vec<Chunk>, Option<String>)>> {
        let current: Option<(String, Option<String>)> = self.read(|c| {
            use rusqlite::OptionalExtension;
            c.query_row("SELECT content_hash, problem FROM files WHERE path = ?1", [path], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
        })?;
        match current {
            Some((h, problem)) if h == hash => Ok(Some((self.chunks_of(path)?, problem))),
            _ => Ok(None),
        }
    }

    /// How many chunks' full-text rows hold every word of `words` (split at anything but
    /// letters and digits, as a query's are): the index's own self-check.
    pub fn fts_count(&self, words: &str) -> Result<u64> {
        let expr = super::fulltext::every_word(words);
        self.read(|c| {
            c.query_row("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?1", [expr], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
        })
    }
}

/// A chunk read from a row whose columns from `at` on are kind, name, signature, parent, doc,
/// content, start and end line, start and end byte (a kind this booger does not know reads
/// as `raw`; a negative offset as past any file, which no check passes).
pub(super) fn chunk_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Chunk> {
    let kind: String = r.get(at)?;
    let offset =
        |i: usize| -> rusqlite::Result<usize> { Ok(usize::try_from(r.get::<_, i64>(at + i)?).unwrap_or(usize::MAX)) };
    Ok(Chunk {
        kind: crate::source::chunk::kind_named(&kind),
        name: r.get(at + 1)?,
        signature: r.get(at + 2)?,
        parent: r.get(at + 3)?,
        doc: r.get(at + 4)?,
        content: super::text::read(r, at + 5)?.to_owned(),
        start_line: r.get(at + 6)?,
        end_line: r.get(at + 7)?,
        start_byte: offset(8)?,
        end_byte: offset(9)?,
    })
}

#[cfg(test)]
mod tests {
    use crate::engine::index::{Options, Progress, run};
    use crate::store::Store;

    /// A closed store has folded its WAL back into the database and refuses every later
    /// write (a background pass racing the daemon's stop), while what it holds still reads.
    #[test]
    fn a_closed_store_refuses_writes_after_its_last_checkpoint() {
        let (_dir, root, index) = crate::store::testing::project(&[("a.py", "def alpha_one():\n    pass\n")]);
        let store = Store::open(&index, &root).unwrap();
        run(&root, &store, Options::default(), &Progress::default()).unwrap();
        let write = crate::store::testing::file_write("b.py", "def beta_two():\n    pass\n", false);
        store.write_batch(std::slice::from_ref(&write), &[], "t").unwrap();
        let wal = store.path.with_file_name(format!("{}-wal", store.path.file_name().unwrap().to_string_lossy()));
        assert!(std::fs::metadata(&wal).unwrap().len() > 0, "the batch is in the WAL");

        store.close().unwrap();
        assert_eq!(std::fs::metadata(&wal).unwrap().len(), 0, "the WAL folded back and truncated");
        assert!(matches!(store.write_batch(&[write], &[], "t"), Err(crate::store::StoreError::Cancelled)));
        assert_eq!(std::fs::metadata(&wal).unwrap().len(), 0, "nothing written after the close");
        assert_eq!(store.fts_count("beta_two").unwrap(), 1);
    }

    /// The full-text rows follow their chunks through rewrites, deletions and a full
    /// rebuild (the store writes them itself; no trigger does), and FTS5 finds itself
    /// consistent.
    #[test]
    fn full_text_rows_follow_their_chunks() {
        let (_dir, root, index) = crate::store::testing::project(&[
            ("a.py", "def alpha_one():\n    pass\n"),
            ("b.py", "def beta_two():\n    fooBarBaz = 1\n"),
        ]);
        let store = Store::open(&index, &root).unwrap();
        let progress = Progress::default();
        let index = |full| run(&root, &store, Options { full, ..Options::default() }, &progress).unwrap();
        let count = |q: &str| store.fts_count(q).unwrap();
        let grams = |q: &str| -> i64 {
            let mut set = crate::store::grams::GramSet::default();
            set.add(q);
            let e = set.take_tokens().replace(' ', " AND ");
            store
                .read(|c| {
                    c.query_row("SELECT count(*) FROM chunk_grams WHERE chunk_grams MATCH ?1", [&e], |r| r.get(0))
                })
                .unwrap()
        };
        index(false);
        assert_eq!((count("alpha"), count("beta"), count("baz")), (1, 1, 1));
        assert_eq!((grams("alpha_one"), grams("fooBarBaz")), (1, 1));

        std::fs::write(root.join("a.py"), "def gamma_three():\n    pass\n\ndef delta_four():\n    pass\n").unwrap();
        std::fs::remove_file(root.join("b.py")).unwrap();
        index(false);
        assert_eq!((count("alpha"), count("beta"), count("baz")), (0, 0, 0), "old rows are gone");
        assert_eq!((count("gamma"), count("delta")), (1, 1));
        assert_eq!((grams("alpha_one"), grams("fooBarBaz"), grams("delta_four")), (0, 0, 1), "trigram rows too");

        index(true);
        assert_eq!((count("alpha"), count("gamma"), count("delta")), (0, 1, 1), "a full rebuild keeps one row each");
        assert_eq!((grams("gamma_three"), grams("delta_four")), (1, 1));
        store
            .write(|c| c.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 0)", []))
            .unwrap();
        let triggers: i64 = store
            .read(|c| c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(triggers, 0);
    }

    /// Past the calling thread's deadline a long statement is interrupted; without one, or
    /// within it, the same statement runs to the end.
    #[test]
    fn a_heavy_calls_deadline_interrupts_its_statements() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("index"), dir.path()).unwrap();
        let long = |store: &Store| {
            store.read(|c| {
                c.query_row(
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) SELECT count(*) FROM n",
                    [],
                    |r| r.get::<_, i64>(0),
                )
            })
        };
        assert_eq!(long(&store).unwrap(), 3_000_000);
        let (out, passed) = crate::base::deadline::within(std::time::Duration::from_millis(1), || long(&store));
        assert!(passed && out.is_err(), "{out:?}");
        let (out, _) = crate::base::deadline::within(std::time::Duration::from_secs(60), || long(&store));
        assert_eq!(out.unwrap(), 3_000_000, "the reader is usable again, and untouched by the last deadline");
    }

    /// A large run leaves trigram rows pending; grep's candidates include those files until
    /// the background pass writes the rows, and a rewrite or deletion forgets either kind.
    #[test]
    fn pending_trigram_rows_are_read_until_written() {
        use crate::store::testing::{file_write as write, scanned_for};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("index"), dir.path()).unwrap();
        let files_with = |literal: &str| -> Vec<String> {
            let mut paths: Vec<String> = scanned_for(&store, literal).into_iter().map(|c| c.path).collect();
            paths.dedup();
            paths
        };
        store
            .write_batch(
                &[
                    write("a.py", "def alpha_one():\n    pass\n", false),
                    write("b.py", "def beta_two():\n    pass\n", true),
                ],
                &[],
                "t",
            )
            .unwrap();
        assert_eq!(store.grams_pending().unwrap(), 1);
        assert_eq!(files_with("beta_two"), ["a.py", "b.py"], "a pending file is always a candidate");
        assert_eq!(store.fill_grams(10).unwrap(), 1);
        assert_eq!((store.grams_pending().unwrap(), store.fill_grams(10).unwrap()), (0, 0));
        assert_eq!(files_with("beta_two"), ["b.py"]);
        assert_eq!(files_with("alpha_one"), ["a.py"], "the background pass wrote a's row");

        store.write_batch(&[write("a.py", "def gamma():\n    pass\n", false)], &["b.py".to_owned()], "t").unwrap();
        assert_eq!(files_with("alpha_one"), ["a.py"], "pending again after a rewrite");
        store.fill_grams(10).unwrap();
        assert_eq!((files_with("alpha_one"), files_with("beta_two")), (vec![], vec![]), "old rows are gone");
        assert_eq!(files_with("gamma"), ["a.py"]);

        // Among many chunks, a rare literal's few candidates are looked up one by one: the
        // same files, in path order.
        let many: Vec<_> = (0..40)
            .map(|i| write(&format!("m/{:02}.py", 40 - i), &format!("def f{i}():\n    return {i}\n"), true))
            .collect();
        store.write_batch(&many, &[], "t").unwrap();
        assert_eq!(files_with("f17()"), ["m/23.py"]);
        assert_eq!(files_with("gamma"), ["a.py"]);
        assert_eq!(files_with("return 3").len(), 11, "return 3 and return 3x");
        assert_eq!(files_with("return").len(), 41, "only common trigrams: nothing narrows it, every file is read");
        store
            .write(|c| c.execute("INSERT INTO chunk_grams(chunk_grams, rank) VALUES ('integrity-check', 0)", []))
            .unwrap();
    }

    /// The background pass writes the rows a small run writes with the chunks: the same
    /// candidates for literals, line edges and shapes, Markdown pieces that start mid-line
    /// included.
    #[test]
    fn background_trigram_rows_are_the_inline_ones() {
        use crate::store::testing::{file_write, scanned};
        let long: String = (0..120).map(|i| format!("Zeta {i} is HERE_{i}. ")).collect();
        let files = [
            ("a.py", "MAX_SIZE = 1990\n\nclass A:\n    # note\n    def f(self):\n        return\n".to_owned()),
            ("b.md", format!("# Title\n\n{long}\n\nlast line\n")),
            ("c.c", "#define FOO_H 1\r\nint x = 0x20241;\r\n}\r\n".to_owned()),
        ];
        let candidates = |inline: bool| {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(&dir.path().join("index"), dir.path()).unwrap();
            let writes: Vec<_> = files.iter().map(|(path, text)| file_write(path, text, inline)).collect();
            store.write_batch(&writes, &[], "t").unwrap();
            while store.fill_grams(10).unwrap() > 0 {}
            ["^Zeta", "HERE_\\d+\\.$", "\\d{4}", "^\\s+#", "return$", "[A-Z]{3,}_[A-Z]+ =", "0x\\d+", "^int"]
                .iter()
                .map(|p| {
                    let e = crate::domain::search::grams::required(p, false).expect("narrowed");
                    scanned(&store, &e).into_iter().map(|c| (c.path, c.start_line)).collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        };
        let inline = candidates(true);
        assert_eq!(inline, candidates(false));
        assert!(inline.iter().all(|c| !c.is_empty()), "every pattern finds its chunk: {inline:?}");
    }
}
