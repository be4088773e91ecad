//! The background pass that writes the trigram rows a large run left pending: a file listed
//! in `grams_pending` has none yet (grep reads it whole meanwhile); its rows are made from its
//! stored chunks, as the workers make a small run's ([`super::grams`]).

use super::grams::{blocks_of, own_start, row_ids};

/// A pending file's trigram rows, made by [`super::Store::fill_grams`] before it writes them.
struct PendingRows {
    id: i64,
    /// The content the rows were made from.
    hash: String,
    /// Its rows: ids and tokens.
    rows: Vec<(i64, String)>,
}

/// The rows of the first `max_files` pending files, made from their stored chunks (a
/// pending file has no rows: marking it pending took them).
fn pending_rows(c: &rusqlite::Connection, max_files: usize) -> rusqlite::Result<Vec<PendingRows>> {
    let mut pending = c.prepare_cached(
        "SELECT p.file_id, coalesce(f.content_hash, '') FROM grams_pending p LEFT JOIN files f ON f.id = p.file_id
         ORDER BY p.file_id LIMIT ?1",
    )?;
    let mut texts = c.prepare_cached(
        "SELECT id, booger_text(content), kind, end_byte - start_byte FROM chunks WHERE file_id = ?1 ORDER BY id",
    )?;
    let files = pending.query_map([max_files as i64], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    let mut out = Vec::new();
    for file in files {
        let (id, hash) = file?;
        let (mut ids, mut texts_of) = (Vec::new(), Vec::new());
        let mut chunks = texts.query([id])?;
        while let Some(r) = chunks.next()? {
            let content = super::text::read(r, 1)?.to_owned();
            let kind = crate::source::chunk::kind_named(r.get_ref(2)?.as_str().unwrap_or_default());
            let own = own_start(kind, &content, r.get::<_, i64>(3)? as usize);
            ids.push(r.get(0)?);
            texts_of.push((content, own));
        }
        let texts: Vec<(&str, usize)> = texts_of.iter().map(|(t, own)| (t.as_str(), *own)).collect();
        let rows = row_ids(blocks_of(&texts, Some(&ids)).into_iter().map(|b| (b.chunks, b.tokens)), &ids);
        out.push(PendingRows { id, hash, rows });
    }
    Ok(out)
}

impl super::Store {
    /// Writes the trigram rows of up to `max_files` files that a large run left pending, in
    /// one short transaction; returns how many it wrote (0: none are pending). The rows are
    /// made from the stored chunks before the writer is taken, so that the other writers (the
    /// embedding pass, the watcher) wait only for the inserts.
    pub(crate) fn fill_grams(&self, max_files: usize) -> super::Result<usize> {
        let files = self.read(|c| pending_rows(c, max_files))?;
        if files.is_empty() {
            return Ok(0);
        }
        self.write_pending_rows(&files)
    }

    /// Writes rows [`pending_rows`] made, in one transaction; returns how many files it was
    /// given.
    fn write_pending_rows(&self, files: &[PendingRows]) -> super::Result<usize> {
        self.write(|c| {
            let tx = c.transaction()?;
            {
                // Only a file still pending with the content it was read with is written: one
                // rewritten since is pending again with other chunks, written, or gone. (A mark
                // without its file goes.)
                let mut done = tx.prepare_cached(
                    "DELETE FROM grams_pending WHERE file_id = ?1
                       AND coalesce((SELECT content_hash FROM files WHERE id = ?1), '') = ?2",
                )?;
                let mut rows: Vec<&(i64, String)> = Vec::new();
                for file in files {
                    if done.execute(rusqlite::params![file.id, file.hash])? == 1 {
                        rows.extend(&file.rows);
                    }
                }
                // In rowid order: FTS5 flushes its pending rows whenever they stop increasing.
                rows.sort_unstable_by_key(|(row, _)| *row);
                let mut insert = tx.prepare_cached("INSERT INTO chunk_grams(rowid, grams) VALUES (?1, ?2)")?;
                for (row, tokens) in rows {
                    insert.execute(rusqlite::params![row, tokens])?;
                }
            }
            tx.commit()?;
            Ok(files.len())
        })
    }

    /// Files whose trigram row is still to be written.
    pub(crate) fn grams_pending(&self) -> super::Result<u64> {
        self.read(|c| c.query_row("SELECT count(*) FROM grams_pending", [], |r| r.get::<_, i64>(0))).map(|n| n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::pending_rows;

    /// Rows made from a file's chunks are not written if the file was rewritten before the
    /// writer was taken: it stays pending, and the next pass makes them from the new chunks.
    #[test]
    fn rows_of_a_file_rewritten_meanwhile_are_not_written() {
        use crate::store::testing::{file_write, scanned_for};
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("index"), dir.path()).unwrap();
        store.write_batch(&[file_write("a.py", "def alpha_zq():\n    pass\n", false)], &[], "t").unwrap();
        let made = store.read(|c| pending_rows(c, 10)).unwrap();
        store.write_batch(&[file_write("a.py", "def beta_zq():\n    pass\n", false)], &[], "t").unwrap();
        assert_eq!(store.write_pending_rows(&made).unwrap(), 1);
        assert_eq!(store.grams_pending().unwrap(), 1, "still pending: its rows were of the old chunks");
        while store.fill_grams(10).unwrap() > 0 {}
        assert_eq!(store.grams_pending().unwrap(), 0);
        assert_eq!(scanned_for(&store, "beta_zq").len(), 1, "the new chunk's row");
        assert!(scanned_for(&store, "alpha_zq").is_empty(), "no row of the old chunk");
    }
}
