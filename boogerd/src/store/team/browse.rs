//! Reading a published commit the way an agent browses a checkout: its definitions, its
//! files under a directory, and what changed between two commits. Every statement starts from
//! [`HEADS`], so it reads only commits its reader may read.

use postgres::types::ToSql;

use super::search::{HEADS, TeamFilters, file_of, head_file, hit};
use super::{Result, TeamHit, TeamStore};

/// Kinds that are not definitions: what `symbols` leaves out.
const NOT_DEFINITIONS: &str = "'{block,gap,raw,section,import}'::text[]";

/// One file of a published commit.
#[derive(Debug, Clone)]
pub(crate) struct TeamFile {
    pub path: String,
    /// None for a blob the team index does not hold (binary, huge).
    pub language: Option<String>,
    pub bytes: u64,
    /// Its top-level definitions, in order (asked for only for a directory's own files).
    pub names: Vec<String>,
}

/// How a file differs between two commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Added,
    Removed,
    Modified,
}

impl Change {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Modified => "modified",
        }
    }
}

/// A file that differs between two commits, and the definitions that did.
#[derive(Debug, Clone)]
pub(crate) struct ChangedFile {
    pub path: String,
    pub change: Change,
    /// Definitions new or changed in the later commit.
    pub changed: Vec<String>,
    /// Definitions gone from it.
    pub removed: Vec<String>,
}

impl TeamStore {
    /// The definitions at each readable head (or the filters' commit), in repository, path
    /// and line order, at most `limit`.
    pub(crate) fn symbols(&mut self, f: &TeamFilters<'_>, limit: i64) -> Result<Vec<TeamHit>> {
        let reader = f.reader.token();
        let mut params = f.heads_params(&reader);
        params.push(&limit);
        let filters = f.sql(&mut params);
        let head_file = head_file();
        let sql = format!(
            "{HEADS}
             SELECT h.name, h.sha, f.path, b.language, ch.kind, ch.name, ch.signature, ch.parent, ch.start_line,
                    ch.end_line, ch.start_byte, ch.end_byte, ''::text
             FROM heads h
             JOIN commit_files f ON {head_file}
             JOIN chunks ch ON ch.blob_id = f.blob_id
             JOIN blobs b ON b.blob_id = f.blob_id
             WHERE ch.name <> '' AND ch.kind <> ALL ({NOT_DEFINITIONS}) {filters}
             ORDER BY h.name, f.path, ch.ord
             LIMIT $5"
        );
        self.client.query(&sql, &params)?.iter().map(|r| hit(r, 0.0)).collect()
    }

    /// The files at each readable head (or the filters' commit) under the filters' path
    /// prefix, in path order, at most `limit`; those directly in `dir` (a prefix ending in
    /// `/`, or empty) with their top-level definitions.
    pub(crate) fn files(&mut self, f: &TeamFilters<'_>, dir: &str, limit: i64) -> Result<Vec<TeamFile>> {
        let reader = f.reader.token();
        let depth = dir.chars().count() as i32;
        let mut params = f.heads_params(&reader);
        params.extend([&limit as &(dyn ToSql + Sync), &depth]);
        let filters = f.sql(&mut params);
        let head_file = head_file();
        let sql = format!(
            "{HEADS}
             SELECT f.path, b.language, coalesce(b.size_bytes, 0),
                    CASE WHEN strpos(substr(f.path, $6 + 1), '/') = 0 THEN array(
                        SELECT ch.name FROM chunks ch
                        WHERE ch.blob_id = f.blob_id AND ch.name <> '' AND ch.parent IS NULL
                              AND ch.kind <> ALL ({NOT_DEFINITIONS})
                        ORDER BY ch.ord LIMIT 12) ELSE '{{}}'::text[] END
             FROM heads h
             JOIN commit_files f ON {head_file}
             LEFT JOIN blobs b ON b.blob_id = f.blob_id
             WHERE true {filters}
             ORDER BY h.name, f.path
             LIMIT $5"
        );
        self.client
            .query(&sql, &params)?
            .iter()
            .map(|r| {
                Ok(TeamFile {
                    path: r.try_get(0)?,
                    language: r.try_get(1)?,
                    bytes: r.try_get::<_, i64>(2)?.max(0) as u64,
                    names: r.try_get(3)?,
                })
            })
            .collect()
    }

    /// The commit `f` picks in its one repository (its head, or the commit or branch it
    /// names), if its reader may read it.
    pub(crate) fn resolve(&mut self, f: &TeamFilters<'_>) -> Result<Option<(String, String)>> {
        let reader = f.reader.token();
        let params = f.heads_params(&reader);
        let row = self.client.query_opt(&format!("{HEADS} SELECT h.name, h.sha FROM heads h LIMIT 1"), &params)?;
        Ok(row.map(|r| Ok::<_, postgres::Error>((r.try_get(0)?, r.try_get(1)?))).transpose()?)
    }

    /// The files that differ between `base` (a full commit id of the same repository) and
    /// the commit `f` picks, under `f`'s path (its language and kind do not apply to files),
    /// with the definitions that changed, in path order, at most `limit`.
    pub(crate) fn changed_files(&mut self, f: &TeamFilters<'_>, base: &str, limit: i64) -> Result<Vec<ChangedFile>> {
        let reader = f.reader.token();
        let mut params = f.heads_params(&reader);
        params.extend([&base as &(dyn ToSql + Sync), &limit]);
        let only = TeamFilters { path_prefix: f.path_prefix, path_glob: f.path_glob.clone(), ..TeamFilters::default() };
        let paths = only.sql(&mut params);
        let (head_file, base_file) = (head_file(), file_of("f", "h.repo_id", "e.sha", "e.base", "hidden_e"));
        let sql = format!(
            "{HEADS},
             hidden_e AS MATERIALIZED (SELECT e.repo_id, e.base, o.path FROM heads h
                                       JOIN commits e ON e.repo_id = h.repo_id AND e.sha = $5::text
                                       JOIN commit_files o ON o.repo_id = e.repo_id AND o.sha = e.sha
                                       WHERE e.base IS NOT NULL),
             later AS (SELECT f.path, f.blob_id FROM heads h JOIN commit_files f ON {head_file}),
             earlier AS (SELECT f.path, f.blob_id FROM heads h
                         JOIN commits e ON e.repo_id = h.repo_id AND e.sha = $5::text
                         JOIN commit_files f ON {base_file}),
             d AS (SELECT coalesce(l.path, e.path) AS path, e.blob_id AS old, l.blob_id AS new
                   FROM later l FULL JOIN earlier e ON e.path = l.path
                   WHERE e.blob_id IS DISTINCT FROM l.blob_id)
             SELECT d.path, d.old IS NULL, d.new IS NULL,
                    array(SELECT n.name FROM chunks n
                          WHERE n.blob_id = d.new AND n.name <> '' AND n.kind <> ALL ({NOT_DEFINITIONS})
                                AND NOT EXISTS (SELECT 1 FROM chunks o
                                                WHERE o.blob_id = d.old AND o.name = n.name AND o.content = n.content)
                          ORDER BY n.ord),
                    array(SELECT o.name FROM chunks o
                          WHERE o.blob_id = d.old AND o.name <> '' AND o.kind <> ALL ({NOT_DEFINITIONS})
                                AND NOT EXISTS (SELECT 1 FROM chunks n WHERE n.blob_id = d.new AND n.name = o.name)
                          ORDER BY o.ord)
             FROM d, LATERAL (SELECT d.path) f WHERE true {paths} ORDER BY d.path LIMIT $6"
        );
        self.client
            .query(&sql, &params)?
            .iter()
            .map(|r| {
                let (added, removed): (bool, bool) = (r.try_get(1)?, r.try_get(2)?);
                let change = if added {
                    Change::Added
                } else if removed {
                    Change::Removed
                } else {
                    Change::Modified
                };
                let dedup = |mut v: Vec<String>| {
                    let mut seen = std::collections::HashSet::new();
                    v.retain(|n| seen.insert(n.clone()));
                    v
                };
                Ok(ChangedFile {
                    path: r.try_get(0)?,
                    change,
                    changed: dedup(r.try_get(3)?),
                    removed: dedup(r.try_get(4)?),
                })
            })
            .collect()
    }
}
