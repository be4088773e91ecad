//! Volatile context: annotations and the workset (focus, visited), scoped by session.
//!
//! A row with `session_id` NULL is shared by every session; otherwise only its session sees
//! it. Expired annotations are invisible at once and deleted on the next write.
//!
//! They live in a database of their own beside the index (`notes.db`), attached to every
//! connection as `notes`: the index is derived from the files and may be set aside and
//! rebuilt when damaged; the agents' notes cannot be made again.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::{Result, Store, StoreError};

/// Attaches the notes database at `path` as `notes` (a reader's connection).
pub(super) fn attach_notes(c: &Connection, path: &Path) -> rusqlite::Result<()> {
    c.execute("ATTACH DATABASE ?1 AS notes", [path.to_string_lossy()])?;
    Ok(())
}

/// Creates (private to the user) or opens the notes database at `path`, attaches it to the
/// writer and brings its schema up to date. A damaged one is set aside and replaced by a fresh
/// one holding what could still be read from it.
pub(super) fn open_notes(writer: &mut Connection, path: &Path) -> Result<()> {
    match attach_and_migrate(writer, path) {
        Err(e) if e.is_corrupt() => {
            let _ = writer.execute("DETACH DATABASE notes", []);
            let dir = path.parent().unwrap_or(Path::new("."));
            let file = path.file_name().and_then(|f| f.to_str()).unwrap_or(crate::base::storage::NOTES_FILE);
            let aside = super::recover::set_aside(dir, file)
                .map_err(|source| StoreError::Create { path: path.to_owned(), source })?;
            attach_and_migrate(writer, path)?;
            let kept = super::recover::carry_notes(writer, &aside, "notes");
            tracing::warn!(db = %path.display(), error = %e, aside = %aside.display(), rows_kept = kept,
                "the notes database was damaged: set aside and replaced");
            Ok(())
        }
        other => other,
    }
}

fn attach_and_migrate(writer: &mut Connection, path: &Path) -> Result<()> {
    let sql = |source| StoreError::Sqlite { path: path.to_owned(), source };
    crate::base::storage::create_private_file(path)
        .map_err(|source| StoreError::Create { path: path.to_owned(), source })?;
    attach_notes(writer, path).map_err(sql)?;
    writer.execute_batch("PRAGMA notes.journal_mode = WAL; PRAGMA notes.synchronous = NORMAL;").map_err(sql)?;
    super::migrate(writer, "notes", super::schema::NOTES_MIGRATIONS, path)
}

/// What the volatile context contributes to one search (what `search` re-ranks by).
#[derive(Debug, Default, Clone)]
pub struct Context {
    pub focus: Vec<String>,
    pub visited: Vec<String>,
    /// (target, note): a path, a symbol name, or `path:line`.
    pub notes: Vec<(String, String)>,
    /// The earliest expiry among the notes: a cached context is good until then.
    pub expires: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Annotation {
    pub id: i64,
    pub target: String,
    pub note: String,
    pub session: Option<String>,
    pub created_at: String,
    pub expires_at: Option<String>,
}

/// Which session's rows a call sees or changes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scope<'a> {
    /// This session's rows and the shared ones.
    Session(&'a str),
    /// Shared rows only (written with no session).
    Shared,
}

impl Scope<'_> {
    fn id(&self) -> Option<&str> {
        match self {
            Scope::Session(s) => Some(s),
            Scope::Shared => None,
        }
    }
}

/// Live notes a session (or the shared context) may hold in one project: more than any agent
/// writes by hand, few enough that listing them stays cheap.
pub(crate) const MAX_NOTES: usize = 1000;

impl Store {
    /// `Ok(None)` when `scope` already holds [`MAX_NOTES`] live notes.
    pub(crate) fn annotate(
        &self,
        target: &str,
        note: &str,
        scope: Scope,
        now: &str,
        expires_at: Option<&str>,
    ) -> Result<Option<i64>> {
        self.write(|c| {
            c.execute("DELETE FROM notes.annotations WHERE expires_at IS NOT NULL AND expires_at <= ?1", [now])?;
            let held: i64 = c.query_row(
                "SELECT count(*) FROM notes.annotations WHERE session_id IS ?1",
                params![scope.id()],
                |r| r.get(0),
            )?;
            if held >= MAX_NOTES as i64 {
                return Ok(None);
            }
            c.execute(
                "INSERT INTO notes.annotations(target, note, session_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![target, note, scope.id(), now, expires_at],
            )?;
            Ok(Some(c.last_insert_rowid()))
        })
    }

    /// Live annotations visible to `scope`, optionally only those on `target`.
    pub(crate) fn annotations(&self, scope: Scope, target: Option<&str>, now: &str) -> Result<Vec<Annotation>> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, target, note, session_id, created_at, expires_at FROM notes.annotations
                 WHERE (session_id IS NULL OR session_id = ?1)
                   AND (expires_at IS NULL OR expires_at > ?2)
                   AND (?3 IS NULL OR target = ?3)
                 ORDER BY id",
            )?;
            let rows = stmt.query_map(params![scope.id(), now, target], |r| {
                Ok(Annotation {
                    id: r.get(0)?,
                    target: r.get(1)?,
                    note: r.get(2)?,
                    session: r.get(3)?,
                    created_at: r.get(4)?,
                    expires_at: r.get(5)?,
                })
            })?;
            rows.collect()
        })
    }

    /// Adds paths to the focus or visited set of `scope` (a path already there is kept once).
    pub(crate) fn add_workset(&self, kind: &str, paths: &[String], scope: Scope, now: &str) -> Result<usize> {
        self.write(|c| {
            let tx = c.transaction()?;
            let mut added = 0;
            for p in paths {
                let exists: Option<i64> = tx
                    .query_row(
                        "SELECT id FROM notes.workset WHERE kind = ?1 AND path = ?2 AND session_id IS ?3",
                        params![kind, p, scope.id()],
                        |r| r.get(0),
                    )
                    .optional()?;
                if exists.is_none() {
                    tx.execute(
                        "INSERT INTO notes.workset(path, kind, session_id, created_at) VALUES (?1, ?2, ?3, ?4)",
                        params![p, kind, scope.id(), now],
                    )?;
                    added += 1;
                }
            }
            tx.commit()?;
            Ok(added)
        })
    }

    /// (focus, visited) paths visible to `scope`.
    pub(crate) fn workset(&self, scope: Scope) -> Result<(Vec<String>, Vec<String>)> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT DISTINCT kind, path FROM notes.workset WHERE session_id IS NULL OR session_id = ?1 ORDER BY path",
            )?;
            let mut focus = Vec::new();
            let mut visited = Vec::new();
            for row in stmt.query_map(params![scope.id()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
                let (kind, path) = row?;
                if kind == "focus" { focus.push(path) } else { visited.push(path) }
            }
            Ok((focus, visited))
        })
    }

    /// Clears volatile context: one session's rows, the shared rows, or (`None`) everything.
    /// Returns (annotations, workset entries) removed.
    pub(crate) fn forget(&self, scope: Option<Scope>) -> Result<(usize, usize)> {
        self.write(|c| {
            let tx = c.transaction()?;
            let counts = match scope {
                Some(s) => (
                    tx.execute("DELETE FROM notes.annotations WHERE session_id IS ?1", [s.id()])?,
                    tx.execute("DELETE FROM notes.workset WHERE session_id IS ?1", [s.id()])?,
                ),
                None => {
                    (tx.execute("DELETE FROM notes.annotations", [])?, tx.execute("DELETE FROM notes.workset", [])?)
                }
            };
            tx.commit()?;
            Ok(counts)
        })
    }
}
