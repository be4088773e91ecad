//! A damaged index: set aside (never deleted), replaced by a fresh one that is rebuilt from
//! the files, with the agents' own rows (notes, focus) carried over as far as they can be read.
//!
//! The index is derived from the project's files, so everything in it can be made again,
//! except what agents wrote into it: annotations and the work set.

use std::path::{Path, PathBuf};

use super::{DB_FILE, Store, StoreError};

impl StoreError {
    /// SQLite says the file is damaged, or is no database at all.
    pub fn is_corrupt(&self) -> bool {
        matches!(
            self,
            StoreError::Sqlite { source: rusqlite::Error::SqliteFailure(e, _), .. }
                if matches!(e.code, rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
        )
    }
}

/// Renames the index in `dir` (and its write-ahead log and shared memory) to
/// `index.db.corrupt-<unix seconds>`; returns the new path of the database file.
pub fn set_aside(dir: &Path) -> std::io::Result<PathBuf> {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let aside = dir.join(format!("{DB_FILE}.corrupt-{stamp}"));
    std::fs::rename(dir.join(DB_FILE), &aside)?;
    for suffix in ["-wal", "-shm"] {
        let from = dir.join(format!("{DB_FILE}{suffix}"));
        if from.exists() {
            let _ = std::fs::rename(&from, dir.join(format!("{DB_FILE}.corrupt-{stamp}{suffix}")));
        }
    }
    Ok(aside)
}

/// Replaces the damaged index in `dir` (for the project at `root`) with a fresh one holding
/// the notes that could be read from it. The caller indexes the fresh one in full, as any new
/// index.
pub fn replace(dir: &Path, root: &Path, why: &StoreError) -> Result<Store, StoreError> {
    let aside = set_aside(dir).map_err(|source| StoreError::Create { path: dir.to_owned(), source })?;
    let store = Store::open(dir, root)?;
    let kept = store.salvage(&aside);
    tracing::warn!(root = %root.display(), error = %why, aside = %aside.display(), rows_kept = kept,
        "the index was damaged: set aside and rebuilt");
    Ok(store)
}

impl Store {
    /// Copies the annotations and work set of the set-aside database `old` into this (fresh)
    /// index, as far as SQLite can still read them; returns how many rows came over.
    pub fn salvage(&self, old: &Path) -> usize {
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if conn.execute("ATTACH DATABASE ?1 AS old", [old.to_string_lossy()]).is_err() {
            return 0;
        }
        let mut rows = 0;
        for table in ["annotations", "workset"] {
            match conn.execute(&format!("INSERT OR IGNORE INTO main.{table} SELECT * FROM old.{table}"), []) {
                Ok(n) => rows += n,
                Err(e) => tracing::warn!(table, error = %e, "cannot carry rows over from the damaged index"),
            }
        }
        let _ = conn.execute("DETACH DATABASE old", []);
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::context::Scope;

    #[test]
    fn set_aside_keeps_the_file_and_salvage_carries_the_notes_over() {
        let dir = tempfile::tempdir().unwrap();
        let (root, index) = (dir.path().join("p"), dir.path().join("i"));
        std::fs::create_dir_all(&root).unwrap();
        let old = Store::open(&index, &root).unwrap();
        old.annotate("src/a.rs", "keep me", Scope::Shared, "2026-11-24T00:00:00Z", None).unwrap();
        old.add_workset("focus", &["src".to_owned()], Scope::Session("s"), "2026-11-24T00:00:00Z").unwrap();
        drop(old);
        let aside = set_aside(&index).unwrap();
        assert!(aside.is_file() && !index.join(DB_FILE).exists());
        let fresh = Store::open(&index, &root).unwrap();
        assert_eq!(fresh.salvage(&aside), 2);
        let notes = fresh.annotations(Scope::Shared, None, "2026-11-24T00:00:01Z").unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(fresh.workset(Scope::Session("s")).unwrap().0, ["src"]);
        // Nothing readable: nothing carried, no error.
        std::fs::write(&aside, "not a database").unwrap();
        assert_eq!(fresh.salvage(&aside), 0);
    }
}
