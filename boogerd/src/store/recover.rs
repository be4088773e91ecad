//! A damaged index: set aside (never deleted), replaced by a fresh one that is rebuilt from
//! the files, with the agents' own rows (notes, focus) carried over as far as they can be read.
//!
//! The index is derived from the project's files, so everything in it can be made again,
//! except what agents wrote into it: annotations and the work set.

use std::path::{Path, PathBuf};

use super::{DB_FILE, Store, StoreError};

impl StoreError {
    /// SQLite says the file is damaged, or is no database at all.
    pub(crate) fn is_corrupt(&self) -> bool {
        matches!(
            self,
            StoreError::Sqlite { source: rusqlite::Error::SqliteFailure(e, _), .. }
                if matches!(e.code, rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
        )
    }
}

/// Renames `file` in `dir` (and its write-ahead log and shared memory) to
/// `<file>.corrupt-<unix seconds>`; returns the new path of the database file.
pub(crate) fn set_aside(dir: &Path, file: &str) -> std::io::Result<PathBuf> {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let aside = dir.join(format!("{file}.corrupt-{stamp}"));
    std::fs::rename(dir.join(file), &aside)?;
    for suffix in ["-wal", "-shm"] {
        let from = dir.join(format!("{file}{suffix}"));
        if from.exists() {
            let _ = std::fs::rename(&from, dir.join(format!("{file}.corrupt-{stamp}{suffix}")));
        }
    }
    Ok(aside)
}

/// What was done with a damaged index.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Recovery {
    /// When (RFC 3339).
    pub at: String,
    /// What SQLite said.
    pub error: String,
    /// Where the damaged file now is.
    pub set_aside: PathBuf,
}

/// Replaces the damaged database `file` in `dir` (the index, or the notes beside it) of the
/// project at `root` with a fresh one. The notes carry over as far as SQLite can read them
/// (from a damaged notes file, or from an index made before the notes had a file of their
/// own). A fresh index starts empty, with the ranking index made for the old one deleted: the
/// caller has it rebuilt from the files, as any new index.
pub(crate) fn replace(dir: &Path, root: &Path, file: &str, why: &str) -> Result<(Store, Recovery), StoreError> {
    let aside = set_aside(dir, file).map_err(|source| StoreError::Create { path: dir.to_owned(), source })?;
    if file == DB_FILE {
        crate::base::storage::remove_derived(dir);
    }
    let store = Store::open(dir, root)?;
    let kept = store.salvage(&aside);
    tracing::warn!(root = %root.display(), error = why, aside = %aside.display(), rows_kept = kept,
        "a damaged database was set aside and replaced");
    Ok((store, Recovery { at: crate::base::time::now_rfc3339(), error: why.to_owned(), set_aside: aside }))
}

/// Which of a store's two databases SQLite's `quick_check` finds damaged now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Damaged {
    Index,
    Notes,
    Neither,
}

impl Store {
    /// Checks the index, then the notes (reads every page: for after a query saw damage).
    pub(crate) fn check(&self) -> Damaged {
        let conn = self.writer.lock();
        let ok = |schema: &str| {
            conn.query_row(&format!("PRAGMA {schema}.quick_check(1)"), [], |r| r.get::<_, String>(0))
                .is_ok_and(|s| s == "ok")
        };
        if !ok("main") {
            Damaged::Index
        } else if !ok("notes") {
            Damaged::Notes
        } else {
            Damaged::Neither
        }
    }
}

/// Copies the annotations and work set of the database at `old` into the ones of `into` (an
/// attached schema of `conn`), as far as SQLite can still read them; returns the rows copied.
/// A database without them (an index since the notes moved out) gives nothing, quietly.
pub(super) fn carry_notes(conn: &rusqlite::Connection, old: &Path, into: &str) -> usize {
    if conn.execute("ATTACH DATABASE ?1 AS old", [old.to_string_lossy()]).is_err() {
        return 0;
    }
    let mut rows = 0;
    for table in ["annotations", "workset"] {
        let exists = conn
            .query_row("SELECT count(*) FROM old.sqlite_master WHERE type = 'table' AND name = ?1", [table], |r| {
                r.get::<_, i64>(0)
            })
            .is_ok_and(|n| n > 0);
        if !exists {
            continue;
        }
        match conn.execute(&format!("INSERT OR IGNORE INTO {into}.{table} SELECT * FROM old.{table}"), []) {
            Ok(n) => rows += n,
            Err(e) => tracing::warn!(table, error = %e, "cannot carry rows over from the damaged database"),
        }
    }
    let _ = conn.execute("DETACH DATABASE old", []);
    rows
}

impl Store {
    /// Copies the annotations and work set that the set-aside database `old` still holds (an
    /// index from before the notes had a database of their own) into this store's notes.
    pub(crate) fn salvage(&self, old: &Path) -> usize {
        let conn = self.writer.lock();
        carry_notes(&conn, old, "notes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::storage::NOTES_FILE;
    use crate::store::context::Scope;

    #[test]
    fn notes_outlive_a_replaced_index_and_a_damaged_notes_file_gives_up_what_it_can() {
        let (_dir, root, index) = crate::store::testing::project(&[]);
        let old = Store::open(&index, &root).unwrap();
        old.annotate("src/a.rs", "keep me", Scope::Shared, "2026-11-24T00:00:00Z", None).unwrap();
        old.add_workset("focus", &["src".to_owned()], Scope::Session("s"), "2026-11-24T00:00:00Z").unwrap();
        drop(old);
        let notes = |s: &Store| s.annotations(Scope::Shared, None, "2026-11-24T00:00:01Z").unwrap().len();

        // The index replaced: the notes were never in it.
        let (fresh, r) = replace(&index, &root, DB_FILE, "test").unwrap();
        assert!(r.set_aside.is_file() && index.join(DB_FILE).is_file());
        assert_eq!(notes(&fresh), 1);
        assert_eq!(fresh.workset(Scope::Session("s")).unwrap().0, ["src"]);
        drop(fresh);

        // The notes replaced: the rows SQLite can read come over.
        let (fresh, r) = replace(&index, &root, NOTES_FILE, "test").unwrap();
        assert!(r.set_aside.to_string_lossy().contains("notes.db.corrupt-"));
        assert_eq!(notes(&fresh), 1);
        drop(fresh);

        // Unreadable notes: a fresh, empty notes file, and the index opens.
        std::fs::write(index.join(NOTES_FILE), "not a database".repeat(300)).unwrap();
        let _ = std::fs::remove_file(index.join("notes.db-wal"));
        let reopened = Store::open(&index, &root).unwrap();
        assert_eq!(notes(&reopened), 0);
        assert!(
            std::fs::read_dir(&index)
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("notes.db.corrupt-"))
                .count()
                >= 2
        );
    }

    /// An index made before the notes had their own file: opening it moves them there.
    #[test]
    fn notes_move_out_of_an_older_index() {
        let (_dir, root, index) = crate::store::testing::project(&[]);
        std::fs::create_dir_all(&index).unwrap();
        {
            let c = rusqlite::Connection::open(index.join(DB_FILE)).unwrap();
            for m in &crate::store::schema::MIGRATIONS[..3] {
                c.execute_batch(m).unwrap();
            }
            c.pragma_update(None, "user_version", 3).unwrap();
            c.execute(
                "INSERT INTO annotations(target, note, session_id, created_at) VALUES ('a.rs', 'old note', NULL, '2026-01-01T00:00:00Z')",
                [],
            )
            .unwrap();
        }
        let store = Store::open(&index, &root).unwrap();
        let notes = store.annotations(Scope::Shared, None, "2026-11-24T00:00:00Z").unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].note, "old note");
        assert!(index.join(NOTES_FILE).is_file());
    }
}
