//! Writing one batch of files: rows, chunks, full-text and trigram rows, in one transaction.

use std::borrow::Cow;

use rusqlite::{CachedStatement, Connection, OptionalExtension, params};

use super::files::{FileWrite, forget_files};
use super::reuse::Plan;
use super::tally::Change;
use super::{Result, Store, grams, words};

impl Store {
    /// Applies one batch in one transaction: a file's row and its chunks change together, so
    /// an interrupted run leaves every file either old or new, never half-written. `written`
    /// is handed the files and their chunks' ids in the order written (new rows' ids, and the
    /// old ids a rewritten file's unchanged chunks keep: see `reuse`) once every row is in,
    /// before the commit, which then overlaps what it does with them (a batch that fails to
    /// commit fails its run).
    pub(crate) fn write_files(
        &self,
        writes: Vec<FileWrite>,
        deletes: &[String],
        indexed_at: &str,
        written: impl FnOnce(Vec<FileWrite>, Vec<i64>),
    ) -> Result<()> {
        let changes_content = writes.iter().any(|w| w.chunks.is_some()) || !deletes.is_empty();
        if changes_content {
            self.content_changed();
        }
        let generation = self.content_generation();
        let packer = super::text::Packer::of(&self.texts);
        self.write(|c| {
            let tx = c.transaction()?;
            if changes_content {
                super::save_generation(&tx, generation)?;
            }
            let (change, ids, trained) = {
                // Every old row goes before any new one is written: FTS5 flushes its pending
                // rows whenever a write switches between deleting and inserting, or its rowids
                // stop increasing.
                // A rewritten file's unchanged chunks keep their rows (see `reuse`); its other
                // old chunks go with the deleted files'.
                let plan = Plan::make(&tx, &writes, &self.texts)?;
                // A dictionary trained since: stored with these rows, taken by the next ones.
                let trained = self.texts.take_trained(&tx)?;
                let mut change =
                    forget_files(&tx, deletes.iter().map(String::as_str), &plan.rows, plan.dropped.clone())?;
                let mut st = Statements::new(&tx, &packer)?;
                for path in deletes {
                    st.forget_file(path, &mut change)?;
                    st.delete_file.execute([path])?;
                }
                let mut grams = Vec::new();
                for w in &writes {
                    grams.extend(st.write_file(w, &plan, indexed_at, &mut change)?);
                }
                st.write_grams(grams)?;
                (change, std::mem::take(&mut st.ids), trained)
            };
            written(writes, ids);
            tx.commit()?;
            self.tallied(&change);
            if let Some(t) = trained {
                self.texts.install(t);
            }
            if changes_content {
                self.texts.train_if_due(c, &self.readers)?;
            }
            Ok(())
        })
        .inspect(|_| self.files_written())
    }

    /// [`Store::write_files`] with nothing handed on.
    #[cfg(test)]
    pub(crate) fn write_batch(&self, writes: &[FileWrite], deletes: &[String], indexed_at: &str) -> Result<()> {
        self.write_files(writes.to_vec(), deletes, indexed_at, |_, _| {})
    }
}

impl Store {
    /// Leaves the names index out until [`Store::restore_names_index`]: kept up to date row by
    /// row, it is an insert at a random place of its B-tree per chunk, a fifth of a first
    /// index's writer on /usr/include (10.0 s against 8.0 s, median of three, making it from
    /// the table once the chunks are in included: 0.4 s of it). Lookups by name scan the
    /// table meanwhile.
    pub(crate) fn pause_names_index(&self) -> Result<()> {
        self.write(|c| c.execute_batch("DROP INDEX IF EXISTS chunks_name"))
    }

    /// Makes the names index if it is not there. Its sort spills to a temporary file past the
    /// writer's cache (the connection keeps temporary data in memory otherwise: the names of
    /// two million chunks held 27 MB more at the large tree's peak).
    pub(crate) fn restore_names_index(&self) -> Result<()> {
        self.write(|c| {
            c.execute_batch(&format!(
                "PRAGMA temp_store = FILE; {}; PRAGMA temp_store = MEMORY;",
                super::names::NAMES_INDEX
            ))
        })
    }
}

/// WAL pages a large run lets pile up before they are copied into the database (64 MB of
/// 4 KB pages), and SQLite's default, which the rest of the time keeps the journal small.
const BULK_CHECKPOINT_PAGES: u32 = 16_384;
pub(super) const CHECKPOINT_PAGES: u32 = 1_000;

impl Store {
    /// Checkpoints the WAL every 64 MB, not every 4 MB (SQLite's default), from a large run's
    /// start until the next [`Store::checkpoint`], which the background pass writing the run's
    /// trigram rows makes when it ends: the run itself leaves the journal to it
    /// ([`Store::folds_later`]). A checkpoint copies every page written since into the
    /// database, and each of a run's batches (4 MB of source, its chunk and full-text rows
    /// about twice that) rewrote the same last pages of the tables: with the default, every
    /// commit was followed by a checkpoint. The standard library's index on 2 cores (medians
    /// of 5, alternated, a busy machine): the writer busy 1.02 -> 0.80 s and the run's end
    /// 17 -> 3 ms (folding the journal back there took 110 ms: the work had only moved).
    pub(crate) fn bulk_writes(&self) -> Result<()> {
        self.bulk.store(true, std::sync::atomic::Ordering::SeqCst);
        self.write(|c| c.execute_batch(&format!("PRAGMA wal_autocheckpoint = {BULK_CHECKPOINT_PAGES};")))
    }
}

/// The statements a batch writes with, prepared once per batch (and cached by SQLite's
/// connection between batches).
struct Statements<'c> {
    conn: &'c Connection,
    /// What chunk texts not compressed where they were chunked are compressed with.
    packer: &'c super::text::Packer,
    /// A file's row as it was (id, language, size), taken out of the counts.
    old_file: CachedStatement<'c>,
    delete_file: CachedStatement<'c>,
    touch: CachedStatement<'c>,
    upsert: CachedStatement<'c>,
    insert_chunk: CachedStatement<'c>,
    insert_text: CachedStatement<'c>,
    insert_grams: CachedStatement<'c>,
    pending: CachedStatement<'c>,
    moved: CachedStatement<'c>,
    /// The ids of the chunks written so far, kept or inserted.
    ids: Vec<i64>,
}

impl<'c> Statements<'c> {
    fn new(conn: &'c Connection, packer: &'c super::text::Packer) -> rusqlite::Result<Self> {
        Ok(Self {
            conn,
            packer,
            old_file: conn.prepare_cached("SELECT id, language, size_bytes FROM files WHERE path = ?1")?,
            delete_file: conn.prepare_cached("DELETE FROM files WHERE path = ?1")?,
            touch: conn.prepare_cached("UPDATE files SET size_bytes = ?2, mtime_ns = ?3 WHERE path = ?1")?,
            upsert: conn.prepare_cached(
                "INSERT INTO files(path, content_hash, size_bytes, mtime_ns, language, indexed_at, problem)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT(path) DO UPDATE SET content_hash = excluded.content_hash, size_bytes = excluded.size_bytes,
                    mtime_ns = excluded.mtime_ns, language = excluded.language, indexed_at = excluded.indexed_at,
                    problem = excluded.problem",
            )?,
            insert_chunk: conn.prepare_cached(
                "INSERT INTO chunks(file_id, kind, name, signature, parent, doc, content, start_line, end_line, start_byte, end_byte)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?,
            insert_text: conn
                .prepare_cached("INSERT INTO chunks_fts(rowid, name, content, words) VALUES (?1, ?2, ?3, ?4)")?,
            insert_grams: conn.prepare_cached("INSERT INTO chunk_grams(rowid, grams) VALUES (?1, ?2)")?,
            pending: conn.prepare_cached("INSERT OR IGNORE INTO grams_pending(file_id) VALUES (?1)")?,
            moved: conn.prepare_cached(
                "UPDATE chunks SET start_line = ?2, end_line = ?3, start_byte = ?4, end_byte = ?5 WHERE id = ?1",
            )?,
            ids: Vec::new(),
        })
    }

    /// Takes the file at `path` out of the counts; its row's id, if it had one.
    fn forget_file(&mut self, path: &str, change: &mut Change) -> rusqlite::Result<Option<i64>> {
        let old = self
            .old_file
            .query_row([path], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))
            .optional()?;
        Ok(old.map(|(id, language, bytes)| {
            change.file(&language, -1, -bytes);
            id
        }))
    }

    /// One file's row and its chunks (only size and time when its content is the same).
    /// Returns the file's trigram rows, for [`Statements::write_grams`].
    fn write_file<'w>(
        &mut self,
        w: &'w FileWrite,
        plan: &Plan,
        indexed_at: &str,
        change: &mut Change,
    ) -> rusqlite::Result<Vec<(i64, Cow<'w, str>)>> {
        let Some(chunks) = &w.chunks else {
            self.touch.execute(params![w.path, w.size as i64, w.mtime_ns])?;
            return Ok(Vec::new());
        };
        let existing = self.forget_file(&w.path, change)?;
        // Not `RETURNING id`: SQLite runs RETURNING as a trigger, under a savepoint. An
        // update keeps the row's id; an insert's is the last one inserted.
        self.upsert.execute(params![w.path, w.hash, w.size as i64, w.mtime_ns, w.language, indexed_at, w.problem])?;
        let id = existing.unwrap_or_else(|| self.conn.last_insert_rowid());
        change.file(&w.language, 1, w.size as i64);
        if w.grams.is_none() {
            self.pending.execute([id])?;
        }
        let mut ids = Vec::with_capacity(chunks.len());
        for (k, ch) in chunks.iter().enumerate() {
            if let Some(old) = plan.kept(&w.path, k) {
                ids.push(old.id);
                // Its full-text row and its vectors stay as they are; a moved one's place
                // is written.
                if old.moved {
                    self.moved.execute(params![
                        old.id,
                        ch.start_line,
                        ch.end_line,
                        ch.start_byte as i64,
                        ch.end_byte as i64
                    ])?;
                }
                continue;
            }
            let made;
            let ways = match w.ways.as_ref().and_then(|ways| ways.get(k)) {
                Some(ways) => ways,
                None => {
                    made = super::in_text::Ways::of(ch);
                    &made
                }
            };
            self.insert_chunk.execute(params![
                id,
                ch.kind.as_str(),
                ch.name,
                super::in_text::stored(ways.signature.as_deref(), Some(&ch.signature)),
                ch.parent,
                super::in_text::stored(ways.doc.as_deref(), ch.doc.as_deref()),
                super::text::stored(&ch.content, k, w.packed.as_ref(), self.packer),
                ch.start_line,
                ch.end_line,
                ch.start_byte as i64,
                ch.end_byte as i64
            ])?;
            let chunk = self.conn.last_insert_rowid();
            ids.push(chunk);
            let made;
            let words = match w.words.as_ref().and_then(|v| v.get(k)) {
                Some(words) => words,
                None => {
                    made = words::ChunkWords::of(&ch.name, &ch.content);
                    &made
                }
            };
            self.insert_text.execute(params![chunk, words.name, words.bag.text(), words.split])?;
            change.chunk(
                ch.kind.as_str(),
                super::bare::is_bare(ch.kind, ch.start_line, ch.end_line, ch.doc.as_deref()),
                1,
            );
        }
        self.ids.extend_from_slice(&ids);
        // The file's trigram rows, all of its chunks' (its old rows went before any write).
        let Some(blocks) = &w.grams else { return Ok(Vec::new()) };
        let texts = || chunks.iter().map(grams::chunk_text).map(|(t, own)| (t.to_owned(), own)).collect();
        Ok(grams::rows_of(blocks, &ids, texts))
    }

    /// A batch's trigram rows, in id order: FTS5 flushes its pending rows whenever the rowids
    /// it is given stop increasing, as a rewrite's kept chunks' old ids would.
    fn write_grams(&mut self, mut rows: Vec<(i64, Cow<'_, str>)>) -> rusqlite::Result<()> {
        rows.sort_unstable_by_key(|(row, _)| *row);
        for (row, tokens) in rows {
            self.insert_grams.execute(params![row, tokens.as_ref()])?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::index::{Options, Progress, run};
    use crate::store::Store;

    fn has_names_index(store: &Store) -> bool {
        store
            .read(|c| {
                c.query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'chunks_name'",
                    [],
                    |r| r.get::<_, i64>(0),
                )
            })
            .unwrap()
            == 1
    }

    /// A first index of more than a few files writes its chunks before their names index and
    /// makes it at its end; an index opened after a run stopped in between makes it too.
    #[test]
    fn a_first_index_makes_its_names_index_at_its_end() {
        let texts: Vec<(String, String)> =
            (0..100).map(|i| (format!("m/f{i}.py"), format!("def name_{i}():\n    return {i}\n"))).collect();
        let files: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let (_dir, root, index) = crate::store::testing::project(&files);
        let store = Store::open(&index, &root).unwrap();
        assert!(has_names_index(&store));
        run(&root, &store, Options::default(), &Progress::default()).unwrap();
        assert!(has_names_index(&store));
        assert_eq!(store.chunks_named("name_42", &Default::default(), 10).unwrap().len(), 1);

        store.pause_names_index().unwrap();
        assert!(!has_names_index(&store));
        assert_eq!(
            store.chunks_named("name_42", &Default::default(), 10).unwrap().len(),
            1,
            "found by a scan meanwhile"
        );
        drop(store);
        assert!(has_names_index(&Store::open(&index, &root).unwrap()), "made again when the index is opened");
    }
}
