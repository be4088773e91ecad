//! A project's index as one file: copied to be offered with a published commit (a fresh
//! clone of that commit starts from it instead of indexing every file), and checked when one
//! arrives from the team index before it becomes a project's index.
//!
//! A file that arrives is untrusted input: it is opened read-only and defensively, its schema
//! untrusted (nothing in it runs), and it is taken only if its schema is exactly the one this
//! booger makes and SQLite finds nothing damaged in it.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};

use super::vectors::ChunkVector;
use super::{Result, Store, StoreError, migrate, schema};
use crate::source::chunk::Chunk;

/// The version of the index's schema: a copy is taken only by a booger of the same one.
pub(crate) fn format() -> i32 {
    schema::MIGRATIONS.len() as i32
}

impl Store {
    /// A consistent copy of the index (not the notes) at `to`, written by one read: the
    /// writer goes on meanwhile. The copy is scratch, not synced to disk (a copy takes the
    /// connection's `synchronous`, and waiting for the disk to hold 1.5 GB took seconds).
    /// Abandoned, with an error, soon after `stop` is set.
    pub(crate) fn copy_into(&self, to: &Path, stop: &Arc<AtomicBool>) -> Result<()> {
        let to = to.to_string_lossy().into_owned();
        self.read(|c| {
            c.execute_batch("PRAGMA main.synchronous = OFF")?;
            let stop = Arc::clone(stop);
            c.progress_handler(1_000, Some(move || stop.load(Ordering::Relaxed)))?;
            let copied = c.execute("VACUUM main INTO ?1", [&to]).map(|_| ());
            c.progress_handler(0, None::<fn() -> bool>)?;
            c.execute_batch("PRAGMA main.synchronous = NORMAL")?;
            copied
        })
    }
}

/// The files an index file holds, as (path, hash).
pub(crate) fn files_of(file: &Path) -> Result<Vec<(String, String)>> {
    let sql = |source| StoreError::Sqlite { path: file.to_owned(), source };
    let c = open_untrusted(file).map_err(sql)?;
    let mut stmt = c.prepare("SELECT path, content_hash FROM files").map_err(sql)?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(sql)?;
    rows.collect::<rusqlite::Result<_>>().map_err(sql)
}

/// The files of an index file in pieces of about `files` each, as ranges of their ids (for
/// [`files_with_chunks`] on several threads).
pub(crate) fn file_id_pieces(file: &Path, files: i64) -> Result<Vec<std::ops::Range<i64>>> {
    let sql = |source| StoreError::Sqlite { path: file.to_owned(), source };
    let c = open_untrusted(file).map_err(sql)?;
    let (low, high): (Option<i64>, Option<i64>) =
        c.query_row("SELECT min(id), max(id) FROM files", [], |r| Ok((r.get(0)?, r.get(1)?))).map_err(sql)?;
    let (Some(low), Some(high)) = (low, high) else { return Ok(Vec::new()) };
    let step = files.max(1);
    Ok((low..=high).step_by(step as usize).map(|a| a..(a + step).min(high + 1)).collect())
}

/// Calls `each` with every file whose id is in `ids` an index file holds, as (path, content
/// hash, its chunks), one file at a time, until it returns false.
pub(crate) fn files_with_chunks(
    file: &Path,
    ids: std::ops::Range<i64>,
    mut each: impl FnMut(String, String, Vec<Chunk>) -> bool,
) -> Result<()> {
    let sql = |source| StoreError::Sqlite { path: file.to_owned(), source };
    let c = open_untrusted(file).map_err(sql)?;
    let mut stmt = c
        .prepare(concat!(
            "SELECT f.path, f.content_hash, c.kind, c.name, ",
            super::in_text::signature_of_c!(),
            ", c.parent, ",
            super::in_text::doc_of_c!(),
            ", booger_text(c.content), c.start_line, c.end_line, c.start_byte, c.end_byte
                 FROM files f LEFT JOIN chunks c ON c.file_id = f.id WHERE f.id >= ?1 AND f.id < ?2 ORDER BY f.id"
        ))
        .map_err(sql)?;
    let mut rows = stmt.query([ids.start, ids.end]).map_err(sql)?;
    let mut current: Option<(String, String, Vec<Chunk>)> = None;
    while let Some(r) = rows.next().map_err(sql)? {
        let path: String = r.get(0).map_err(sql)?;
        if current.as_ref().is_some_and(|(p, _, _)| *p != path)
            && let Some((p, h, chunks)) = current.take()
            && !each(p, h, chunks)
        {
            return Ok(());
        }
        let (_, _, chunks) = match &mut current {
            Some(c) => c,
            None => current.insert((path, r.get(1).map_err(sql)?, Vec::new())),
        };
        if r.get_ref(2).map_err(sql)?.as_str_or_null().map_err(|e| sql(e.into()))?.is_none() {
            continue; // a file without chunks
        }
        chunks.push(super::files::chunk_at(r, 2).map_err(sql)?);
    }
    if let Some((p, h, chunks)) = current {
        each(p, h, chunks);
    }
    Ok(())
}

/// Calls `each` with every vector an index file holds, in chunk order, with what makes its
/// chunk the same one in a copy of the file ([`ChunkVector`]), until it returns false.
pub(crate) fn vectors_in(file: &Path, mut each: impl FnMut(ChunkVector) -> bool) -> Result<()> {
    let sql = |source| StoreError::Sqlite { path: file.to_owned(), source };
    let c = open_untrusted(file).map_err(sql)?;
    let mut stmt = c
        .prepare(
            "SELECT e.chunk_id, c.start_byte, c.end_byte, f.path, f.content_hash, m.name, e.vector
             FROM embeddings e JOIN chunks c ON c.id = e.chunk_id JOIN files f ON f.id = c.file_id
                  JOIN embedding_models m ON m.id = e.model",
        )
        .map_err(sql)?;
    let mut rows = stmt.query([]).map_err(sql)?;
    while let Some(r) = rows.next().map_err(sql)? {
        let vector = ChunkVector {
            chunk_id: r.get(0).map_err(sql)?,
            start_byte: r.get(1).map_err(sql)?,
            end_byte: r.get(2).map_err(sql)?,
            path: r.get(3).map_err(sql)?,
            content_hash: r.get(4).map_err(sql)?,
            model: r.get(5).map_err(sql)?,
            vector: r.get(6).map_err(sql)?,
        };
        if !each(vector) {
            break;
        }
    }
    Ok(())
}

/// Empties from the index file `file` (a copy of this booger's own, about to be offered)
/// what a clone makes again after its first run, as a from-scratch run leaves it for after:
/// the vectors (offered apart, received in the background) and grep's trigram rows (written
/// by the clone's background pass, every file listed as pending; grep reads a pending file
/// whole meanwhile). The trigram rows are near random: a third of the offer once compressed.
/// Their pages are overwritten with zeros: they take no room compressed, and a clone writes
/// no bytes for them.
pub(crate) fn clear_for_clones(file: &Path) -> Result<()> {
    let sql = |source| StoreError::Sqlite { path: file.to_owned(), source };
    // This booger's own copy, so not opened defensively (which would keep the journal): a
    // crash meanwhile just leaves it to be made again. Without foreign keys the table is
    // emptied page by page, not row by row.
    let c = Connection::open_with_flags(file, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(sql)?;
    super::register_chunk_functions(&c).map_err(sql)?;
    c.execute_batch(
        "PRAGMA foreign_keys = OFF; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
         PRAGMA secure_delete = ON; DELETE FROM embeddings;
         INSERT INTO chunk_grams(chunk_grams) VALUES ('delete-all');
         DELETE FROM grams_pending; INSERT INTO grams_pending SELECT id FROM files;",
    )
    .map_err(sql)
}

/// Why a received index file was not taken.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    #[error("its schema is not this booger's ({0})")]
    Schema(String),
    #[error("SQLite finds it damaged: {0}")]
    Damaged(String),
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
}

/// Checks a received index file: its schema exactly a fresh index's (tables, indexes,
/// virtual tables and their SQL, the schema version), and `quick_check` clean.
pub(crate) fn check_received(file: &Path) -> std::result::Result<(), Refused> {
    let c = open_untrusted(file)?;
    let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version != i64::from(format()) {
        return Err(Refused::Schema(format!("version {version}, this booger's {}", format())));
    }
    let found = schema_of(&c)?;
    let want = schema_of(&fresh()?)?;
    if found != want {
        let odd = found.iter().find(|e| !want.contains(e)).or_else(|| want.iter().find(|e| !found.contains(e)));
        return Err(Refused::Schema(odd.map_or_else(String::new, |e| format!("{} {}", e.0, e.1))));
    }
    // Every table's b-tree (the full-text indexes' shadow tables among them), page by page,
    // on a connection per core taking the next table. Not the full-text indexes' own
    // consistency check, which reads them whole through FTS5 (four times the time on a
    // 1.5 GB index); FTS5 reports a damaged one when read.
    let tables: Vec<&str> =
        found.iter().filter(|e| e.0 == "table" && !is_virtual(&found, &e.1)).map(|e| e.1.as_str()).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..crate::base::threads::cores().clamp(1, 4))
            .map(|_| {
                s.spawn(|| -> std::result::Result<(), Refused> {
                    let c = open_untrusted(file)?;
                    while let Some(name) = tables.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                        check_table(&c, name)?;
                    }
                    Ok(())
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

/// `quick_check` of one table's b-tree and its indexes.
fn check_table(c: &Connection, name: &str) -> std::result::Result<(), Refused> {
    let verdict: Vec<String> = c
        .prepare(&format!("PRAGMA quick_check(\"{name}\")"))?
        .query_map([], |r| r.get(0))?
        .take(5)
        .collect::<rusqlite::Result<_>>()?;
    if verdict != ["ok"] {
        return Err(Refused::Damaged(format!("{name}: {}", verdict.join("; "))));
    }
    Ok(())
}

/// Whether the table `name` of `entries` is a virtual table (its SQL says so).
fn is_virtual(entries: &[SchemaEntry], name: &str) -> bool {
    entries.iter().any(|(_, n, _, sql)| n == name && sql.as_deref().is_some_and(|s| s.starts_with("CREATE VIRTUAL")))
}

/// Makes a checked file this machine's: a content generation counted from now (as a new
/// index's), the publisher's own choices (the `meta` keys `choices`) dropped, and the files
/// `here` as (path, size, time) on disk: the caller checked them to hold what the file says
/// they hold, so a run finds them unchanged without reading them. Every other file is marked
/// changed (no hash, no time): the run chunks it afresh, whatever the file said of it.
pub(crate) fn adopt_received(file: &Path, choices: &[&str], here: &[Verified]) -> std::result::Result<(), Refused> {
    let mut c = Connection::open_with_flags(file, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    defend(&c)?;
    super::register_chunk_functions(&c)?;
    let tx = c.transaction()?;
    let generation = super::first_generation().to_string();
    tx.execute("UPDATE meta SET value = ?1 WHERE key = 'generation'", [&generation])?;
    for key in choices {
        tx.execute("DELETE FROM meta WHERE key = ?1", [key])?;
    }
    tx.execute("UPDATE files SET mtime_ns = -1, content_hash = ''", [])?;
    {
        let mut stamp =
            tx.prepare("UPDATE files SET size_bytes = ?2, mtime_ns = ?3, content_hash = ?4 WHERE path = ?1")?;
        for (path, size, mtime_ns, hash) in here {
            stamp.execute(rusqlite::params![path, *size as i64, mtime_ns, hash])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// A file of a received index found to be as it is on disk: (path, size, time, content hash).
pub(crate) type Verified = (String, u64, i64, String);

/// An index file opened to be read, nothing in its schema trusted to run.
fn open_untrusted(file: &Path) -> rusqlite::Result<Connection> {
    let c = Connection::open_with_flags(file, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    defend(&c)?;
    super::text::register_own(&c)?;
    super::register_chunk_functions(&c)?;
    Ok(c)
}

fn defend(c: &Connection) -> rusqlite::Result<()> {
    c.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    c.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    Ok(())
}

/// A fresh index's schema, in memory (with the notes beside it, as its migrations expect).
fn fresh() -> std::result::Result<Connection, Refused> {
    let mut c = Connection::open_in_memory()?;
    super::register_chunk_functions(&c)?;
    c.execute("ATTACH ':memory:' AS notes", [])?;
    let memory = Path::new(":memory:");
    migrate(&mut c, "notes", schema::NOTES_MIGRATIONS, memory)
        .and_then(|()| migrate(&mut c, "main", schema::MIGRATIONS, memory))
        .map_err(|e| Refused::Schema(format!("cannot make a fresh one to compare: {e}")))?;
    Ok(c)
}

/// A schema entry: type, name, table, SQL.
type SchemaEntry = (String, String, String, Option<String>);

/// Every schema entry, in order.
fn schema_of(c: &Connection) -> rusqlite::Result<Vec<SchemaEntry>> {
    c.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{file_write, project};

    /// A real index with one file, copied as a publish copies it.
    fn copied() -> (tempfile::TempDir, std::path::PathBuf) {
        let (dir, root, index) = project(&[]);
        let store = Store::open(&index, &root).unwrap();
        store.write_batch(&[file_write("a.py", "def a():\n    return 1\n", true)], &[], "now").unwrap();
        let copy = dir.path().join("copy.db");
        store.copy_into(&copy, &Arc::default()).unwrap();
        (dir, copy)
    }

    /// A copy told to stop ends with an error soon after, instead of copying the whole index
    /// (a publish that failed does not wait for it).
    #[test]
    fn a_copy_told_to_stop_ends_early() {
        let (dir, root, index) = project(&[]);
        let store = Store::open(&index, &root).unwrap();
        let files: Vec<_> = (0..300)
            .map(|i| file_write(&format!("m{i}.py"), &format!("def f_{i}(x):\n    return x + {i}\n"), true))
            .collect();
        store.write_batch(&files, &[], "now").unwrap();
        let copy = dir.path().join("copy.db");
        assert!(store.copy_into(&copy, &Arc::new(AtomicBool::new(true))).is_err());
        std::fs::remove_file(&copy).ok();
        store.copy_into(&copy, &Arc::default()).unwrap();
        assert_eq!(files_of(&copy).unwrap().len(), 300);
    }

    /// A copy is taken, and adopting it gives it a generation of its own, drops the
    /// publisher's choices and stamps the files said to be on disk as they are.
    #[test]
    fn a_copy_of_a_real_index_is_taken_and_made_this_machines() {
        let (_dir, copy) = copied();
        check_received(&copy).unwrap();
        assert_eq!(files_of(&copy).unwrap(), vec![("a.py".to_owned(), "def a():\n    return 1\n".to_owned())]);
        let meta = |key: &str| -> Option<String> {
            let c = Connection::open(&copy).unwrap();
            c.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).ok()
        };
        Connection::open(&copy).unwrap().execute("INSERT INTO meta VALUES ('with_generated', 'true')", []).unwrap();
        let before = meta("generation");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let mut seen = Vec::new();
        files_with_chunks(&copy, 0..i64::MAX, |path, hash, chunks| {
            seen.push((path, hash, chunks.iter().map(|c| c.content.clone()).collect::<Vec<_>>()));
            true
        })
        .unwrap();
        assert_eq!(
            seen,
            [("a.py".to_owned(), "def a():\n    return 1\n".to_owned(), vec!["def a():\n    return 1".to_owned()])]
        );
        let stamped = || -> (i64, i64, String) {
            let c = Connection::open(&copy).unwrap();
            c.query_row("SELECT size_bytes, mtime_ns, content_hash FROM files WHERE path = 'a.py'", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap()
        };
        // Not found on disk as the file says: marked changed, for the run to chunk afresh.
        adopt_received(&copy, &[], &[]).unwrap();
        assert_eq!((stamped().1, stamped().2), (-1, String::new()));
        adopt_received(&copy, &["with_generated"], &[("a.py".to_owned(), 22, 7, "h".to_owned())]).unwrap();
        check_received(&copy).unwrap();
        assert_ne!(meta("generation"), before);
        assert_eq!(meta("with_generated"), None);
        assert_eq!(stamped(), (22, 7, "h".to_owned()));
    }

    /// A copy cleared for clones holds no trigram rows and lists every file as pending: a
    /// daemon opening it finds the same chunks by trigram before its pass (reading pending
    /// files whole) and after.
    #[test]
    fn a_copy_cleared_for_clones_leaves_grep_its_pass() {
        let (dir, copy) = copied();
        clear_for_clones(&copy).unwrap();
        check_received(&copy).unwrap();
        let count = |sql: &str| -> i64 { Connection::open(&copy).unwrap().query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(count("SELECT count(*) FROM grams_pending"), count("SELECT count(*) FROM files"));
        let index = dir.path().join("clone");
        std::fs::create_dir_all(&index).unwrap();
        std::fs::rename(&copy, index.join(super::super::DB_FILE)).unwrap();
        let store = Store::open(&index, &dir.path().join("p")).unwrap();
        let names = |store: &Store| -> Vec<String> {
            let mut set = crate::store::grams::GramSet::default();
            set.add("return 1");
            let expr = set.take_tokens().replace(' ', " AND ");
            crate::store::testing::scanned(store, &expr).iter().map(|c| c.path.clone()).collect()
        };
        assert_eq!(names(&store), ["a.py"]);
        assert_eq!(store.fill_grams(10).unwrap(), 1);
        assert_eq!((store.grams_pending().unwrap(), names(&store)), (0, vec!["a.py".to_owned()]));
    }

    /// Whatever a hostile copy adds to its schema (a view, a trigger, an index, a table) it
    /// is refused before anything in it could run; so is another schema version or a damaged file.
    #[test]
    fn a_copy_that_is_not_what_this_booger_makes_is_refused() {
        for added in [
            "CREATE VIEW v AS SELECT * FROM files",
            "CREATE TRIGGER t AFTER UPDATE ON meta BEGIN DELETE FROM files; END",
            "CREATE INDEX odd ON files (language)",
            "CREATE TABLE extra (x)",
        ] {
            let (_dir, copy) = copied();
            Connection::open(&copy).unwrap().execute_batch(added).unwrap();
            assert!(matches!(check_received(&copy), Err(Refused::Schema(_))), "{added}");
        }
        let (_dir, copy) = copied();
        Connection::open(&copy).unwrap().pragma_update(None, "user_version", format() + 1).unwrap();
        assert!(matches!(check_received(&copy), Err(Refused::Schema(_))));

        let (_dir, copy) = copied();
        let mut bytes = std::fs::read(&copy).unwrap();
        let page = 4096;
        for b in &mut bytes[page + 8..2 * page] {
            *b = 0xA5; // the second page's cells scrambled
        }
        std::fs::write(&copy, &bytes).unwrap();
        assert!(check_received(&copy).is_err());

        let (_dir, copy) = copied();
        std::fs::write(&copy, b"not a database at all, just bytes").unwrap();
        assert!(check_received(&copy).is_err());
    }
}
