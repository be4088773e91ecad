//! Reads for the search tools: full-text candidates, chunk contents, and the counts that
//! explain an empty answer.

use std::collections::{HashMap, VecDeque};

use booger_proto::tools::{ChunkKind, Language};
use rusqlite::types::Value as SqlValue;

use super::{Result, Store};

use crate::base::sync::Recover;

/// Column weights for `bm25()`: name, content, words (split identifiers); the in-memory
/// ranking index adds the path with [`PATH_WEIGHT`].
pub(crate) const BM25_WEIGHTS: [f64; 3] = [8.0, 1.0, 2.0];
pub(crate) const PATH_WEIGHT: f64 = 3.0;

/// Candidate lists of recent queries, for one count of the store's writes.
/// Agents repeat queries and page through answers; a hit here skips FTS5 entirely.
#[derive(Default)]
pub(crate) struct Cache {
    writes: u64,
    candidates: HashMap<String, Vec<Candidate>>,
    order: VecDeque<String>,
    /// Warm-index rankings by query, as ranked at this count of writes.
    ranked: HashMap<String, Vec<(Candidate, bool)>>,
    /// Volatile context by session (None: the shared one), as read at this count of writes.
    pub context: HashMap<Option<String>, std::sync::Arc<super::context::Context>>,
}

const CACHE_ENTRIES: usize = 256;

impl Cache {
    fn sync(&mut self, writes: u64) {
        if self.writes != writes {
            *self = Cache { writes, ..Cache::default() };
        }
    }
}

/// Restrictions every search-side tool shares.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub language: Option<Language>,
    pub kind: Option<ChunkKind>,
    /// A path prefix, or a glob if it contains `*`, `?` or `[`.
    pub path: Option<String>,
}

/// What [`Store::scan_snapshot`] hands its chunks to.
pub trait ScanSink {
    /// The snapshot's chunk and file counts, before the first chunk.
    fn sizes(&mut self, chunks: usize, files: usize);
    /// One chunk, its content and its file's content hash.
    fn chunk(&mut self, c: &Candidate, content: &str, hash: &str);
}

/// One chunk as the ranking sees it (no content yet: that is fetched for the winners only).
#[derive(Debug, Clone)]
pub struct Candidate {
    pub id: i64,
    pub path: String,
    pub language: String,
    pub kind: ChunkKind,
    pub name: String,
    pub signature: String,
    pub parent: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub bytes: usize,
    /// FTS5 bm25: negative, smaller is better.
    pub bm25: f64,
}

impl Filters {
    /// SQL conditions over `f` (files) and `c` (chunks), with their parameters.
    pub(super) fn sql(&self, params: &mut Vec<SqlValue>) -> String {
        let mut sql = String::new();
        if let Some(l) = self.language {
            params.push(SqlValue::Text(l.as_str().to_owned()));
            sql.push_str(&format!(" AND f.language = ?{}", params.len()));
        }
        if let Some(k) = self.kind {
            params.push(SqlValue::Text(k.as_str().to_owned()));
            sql.push_str(&format!(" AND c.kind = ?{}", params.len()));
        }
        if let Some(p) = &self.path {
            if p.contains(['*', '?', '[']) {
                params.push(SqlValue::Text(p.clone()));
                sql.push_str(&format!(" AND f.path GLOB ?{}", params.len()));
            } else {
                let prefix = p.trim_start_matches("./").trim_end_matches('/');
                params.push(SqlValue::Text(prefix.to_owned()));
                params.push(SqlValue::Text(format!("{}/*", glob_escape(prefix))));
                let n = params.len();
                sql.push_str(&format!(" AND (f.path = ?{} OR f.path GLOB ?{n})", n - 1));
            }
        }
        sql
    }
}

fn glob_escape(s: &str) -> String {
    s.chars().map(|c| if matches!(c, '*' | '?' | '[') { format!("[{c}]") } else { c.to_string() }).collect()
}

fn candidate(r: &rusqlite::Row) -> rusqlite::Result<Candidate> {
    Ok(Candidate {
        id: r.get(0)?,
        path: r.get(1)?,
        language: r.get(2)?,
        kind: crate::source::chunk::kind_named(r.get_ref(3)?.as_str()?),
        name: r.get(4)?,
        signature: r.get(5)?,
        parent: r.get(6)?,
        start_line: r.get(7)?,
        end_line: r.get(8)?,
        bytes: r.get::<_, i64>(9)? as usize,
        bm25: r.get(10)?,
    })
}

const CANDIDATE_COLUMNS: &str = concat!(
    "c.id, f.path, f.language, c.kind, c.name, ",
    super::in_text::signature_of_c!(),
    ", c.parent, c.start_line, c.end_line, c.end_byte - c.start_byte"
);

impl Store {
    /// The volatile context of `scope` at the current count of writes, cached: every write
    /// (a note, a focus) changes the count, so a cached context is never stale. Notes
    /// past their expiry are dropped on read.
    pub(crate) fn cached_context(
        &self,
        scope: super::context::Scope,
        now: &str,
        load: impl FnOnce() -> super::context::Context,
    ) -> std::sync::Arc<super::context::Context> {
        let key = match scope {
            super::context::Scope::Session(s) => Some(s.to_owned()),
            super::context::Scope::Shared => None,
        };
        let writes = self.write_count();
        let mut cache = self.cache.lock().recover();
        cache.sync(writes);
        if let Some(c) = cache.context.get(&key)
            && c.expires.as_deref().is_none_or(|e| e > now)
        {
            return c.clone();
        }
        drop(cache);
        let fresh = std::sync::Arc::new(load());
        let mut cache = self.cache.lock().recover();
        cache.sync(writes);
        cache.context.insert(key, fresh.clone());
        fresh
    }

    /// A warm-index ranking for `tokens`, cached with the query candidates. `ranked_at` is the
    /// content generation the ranking index was built from.
    pub(crate) fn cached_rank(
        &self,
        tokens: &[(String, f64)],
        filters: &Filters,
        ranked_at: u64,
        rank: impl FnOnce() -> Vec<(Candidate, bool)>,
    ) -> Vec<(Candidate, bool)> {
        let words: Vec<String> = tokens.iter().map(|(t, w)| format!("{t}*{w}")).collect();
        let key = format!("{ranked_at}\u{1}{}\u{1}{filters:?}", words.join(" "));
        let writes = self.write_count();
        {
            let mut cache = self.cache.lock().recover();
            cache.sync(writes);
            if let Some(hit) = cache.ranked.get(&key) {
                return hit.clone();
            }
        }
        let fresh = rank();
        let mut cache = self.cache.lock().recover();
        cache.sync(writes);
        if cache.ranked.len() >= CACHE_ENTRIES {
            cache.ranked.clear();
        }
        cache.ranked.insert(key, fresh.clone());
        fresh
    }

    /// The best `limit` chunks for an FTS5 `MATCH` expression, by weighted bm25.
    pub fn fts_candidates(&self, expr: &str, filters: &Filters, limit: usize) -> Result<Vec<Candidate>> {
        let key = format!("{expr}\u{1}{filters:?}\u{1}{limit}");
        let writes = self.write_count();
        {
            let mut cache = self.cache.lock().recover();
            cache.sync(writes);
            if let Some(hit) = cache.candidates.get(&key) {
                return Ok(hit.clone());
            }
        }
        let found = self.fts_candidates_uncached(expr, filters, limit)?;
        let mut cache = self.cache.lock().recover();
        cache.sync(writes);
        if cache.order.len() >= CACHE_ENTRIES
            && let Some(old) = cache.order.pop_front()
        {
            cache.candidates.remove(&old);
        }
        cache.order.push_back(key.clone());
        cache.candidates.insert(key, found.clone());
        Ok(found)
    }

    fn fts_candidates_uncached(&self, expr: &str, filters: &Filters, limit: usize) -> Result<Vec<Candidate>> {
        if filters.language.is_none() && filters.kind.is_none() && filters.path.is_none() {
            return self.fts_candidates_unfiltered(expr, limit);
        }
        let mut params = vec![SqlValue::Text(expr.to_owned())];
        let cond = filters.sql(&mut params);
        let [wn, wc, ww] = BM25_WEIGHTS;
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS}, booger_bm25(chunks_fts, {wn}, {wc}, {ww}) AS rank
             FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file_id
             WHERE chunks_fts MATCH ?1{cond}
             ORDER BY rank LIMIT {limit}"
        );
        self.read(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map(rusqlite::params_from_iter(params), candidate)?;
            rows.collect()
        })
    }

    /// Without filters, rank inside FTS5 first and join only the winners: joining every match
    /// before the sort costs more than ranking (a common word matches tens of thousands of rows).
    fn fts_candidates_unfiltered(&self, expr: &str, limit: usize) -> Result<Vec<Candidate>> {
        let [wn, wc, ww] = BM25_WEIGHTS;
        let sql = format!(
            "WITH top AS (SELECT rowid AS id, booger_bm25(chunks_fts, {wn}, {wc}, {ww}) AS rank
                          FROM chunks_fts WHERE chunks_fts MATCH ?1 ORDER BY rank LIMIT {limit})
             SELECT {CANDIDATE_COLUMNS}, top.rank FROM top JOIN chunks c ON c.id = top.id JOIN files f ON f.id = c.file_id
             ORDER BY top.rank"
        );
        self.read(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map([expr], candidate)?;
            rows.collect()
        })
    }

    /// The paths of the files with a chunk matching an FTS5 expression.
    pub(crate) fn files_matching(&self, expr: &str) -> Result<std::collections::HashSet<String>> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT DISTINCT f.path
                 FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file_id
                 WHERE chunks_fts MATCH ?1",
            )?;
            let rows = stmt.query_map([expr], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// The chunks holding every word of `name`, unranked, with their text (for line-level
    /// work: references, tests-for): of those `keep` accepts before their text is read, those
    /// `holds` accepts with it, at most `limit`. Cheap: no bm25. The full-text rows say which
    /// chunks hold the name's words, not whether together (`fulltext`), so the caller's
    /// `holds` says which count toward the limit.
    pub(crate) fn fts_matches(
        &self,
        name: &str,
        filters: &Filters,
        limit: usize,
        keep: impl Fn(&Candidate) -> bool,
        holds: impl Fn(&Candidate, &str) -> bool,
    ) -> Result<Vec<(Candidate, String)>> {
        let mut params = vec![SqlValue::Text(super::fulltext::every_word(name))];
        let cond = filters.sql(&mut params);
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS}, 0.0, booger_text(c.content)
             FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file_id
             WHERE chunks_fts MATCH ?1{cond}"
        );
        self.read(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
            let mut out = Vec::new();
            while out.len() < limit
                && let Some(r) = rows.next()?
            {
                let c = candidate(r)?;
                if keep(&c) {
                    let text = super::text::read(r, 11)?;
                    if holds(&c, text) {
                        out.push((c, text.to_owned()));
                    }
                }
            }
            Ok(out)
        })
    }

    /// Every chunk with its content and its file's content hash, files in path order, all
    /// read from one snapshot; returns the content generation of that snapshot (what a
    /// ranking segment built from it is valid for).
    pub(crate) fn scan_snapshot(&self, sink: &mut (impl ScanSink + ?Sized)) -> Result<u64> {
        // Files in path order from their index, then each file's chunks: SQLite sorts one
        // file's chunks at a time. Joined the other way it copied every chunk's text into one
        // sorter first (in memory: `temp_store = MEMORY`), 1.1 GB on a 35k-file tree.
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS}, 0.0, booger_text(c.content), f.content_hash FROM files f CROSS JOIN chunks c ON c.file_id = f.id
             ORDER BY f.path, c.start_byte, c.id"
        );
        self.read(|c| {
            let tx = c.unchecked_transaction()?;
            let generation: u64 = {
                use rusqlite::OptionalExtension;
                tx.query_row("SELECT value FROM meta WHERE key = 'generation'", [], |r| r.get::<_, String>(0))
                    .optional()?
                    .and_then(|g| g.parse().ok())
                    .unwrap_or(0)
            };
            let (chunks, files): (i64, i64) =
                tx.query_row("SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM files)", [], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
            sink.sizes(chunks.max(0) as usize, files.max(0) as usize);
            {
                let mut stmt = tx.prepare(&sql)?;
                let mut rows = stmt.query([])?;
                while let Some(r) = rows.next()? {
                    let cand = candidate(r)?;
                    sink.chunk(&cand, super::text::read(r, 11)?, r.get_ref(12)?.as_str().unwrap_or_default());
                }
            }
            tx.commit()?;
            Ok(generation)
        })
    }

    /// Every chunk of the given files with its content, file by file.
    pub(crate) fn scan_files(&self, paths: &[String], mut each: impl FnMut(&Candidate, &str)) -> Result<()> {
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS}, 0.0, booger_text(c.content) FROM chunks c JOIN files f ON f.id = c.file_id
             WHERE f.path = ?1 ORDER BY c.start_byte, c.id"
        );
        self.read(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            for path in paths {
                let mut rows = stmt.query([path])?;
                while let Some(r) = rows.next()? {
                    let cand = candidate(r)?;
                    each(&cand, super::text::read(r, 11)?);
                }
            }
            Ok(())
        })
    }

    /// Candidates by chunk id, in the order of `ids` (ids that no longer exist are skipped).
    pub(crate) fn candidates_by_id(&self, ids: &[(i64, f64)]) -> Result<Vec<Candidate>> {
        self.candidates_in(ids, &Filters::default())
    }

    /// [`candidates_by_id`](Self::candidates_by_id), keeping only those `filters` allow.
    pub(crate) fn candidates_in(&self, ids: &[(i64, f64)], filters: &Filters) -> Result<Vec<Candidate>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // The ids as parameters, so the statement is prepared once per count of ids (a page's
        // worth, mostly) and not once per call.
        let mut params: Vec<SqlValue> = ids.iter().map(|(id, _)| SqlValue::Integer(*id)).collect();
        let list = (1..=ids.len()).map(|i| format!("?{i}")).collect::<Vec<_>>().join(",");
        let cond = filters.sql(&mut params);
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({list}){cond}"
        );
        let mut found: HashMap<i64, Candidate> = self.read(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map(rusqlite::params_from_iter(params), candidate)?;
            rows.map(|r| r.map(|c| (c.id, c))).collect()
        })?;
        Ok(ids
            .iter()
            .filter_map(|(id, bm25)| {
                found.remove(id).map(|mut c| {
                    c.bm25 = *bm25;
                    c
                })
            })
            .collect())
    }

    /// Chunks whose name is exactly `name` (any kind), for definitions and outlines, through
    /// the names index (`store::names`: without it every chunk was read, 20 ms a lookup on
    /// the standard library).
    pub(crate) fn chunks_named(&self, name: &str, filters: &Filters, limit: usize) -> Result<Vec<Candidate>> {
        let mut params = vec![SqlValue::Text(name.to_owned()), SqlValue::Integer(super::names::name_key(name))];
        let cond = filters.sql(&mut params);
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id
             WHERE {}{cond} ORDER BY f.path, c.start_line LIMIT {limit}",
            super::names::NAME_MATCH
        );
        self.read(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map(rusqlite::params_from_iter(params), candidate)?;
            rows.collect()
        })
    }

    /// Every chunk under the filters, in file order (outlines, summaries, changed-since).
    pub(crate) fn chunks_where(
        &self,
        filters: &Filters,
        indexed_after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Candidate>> {
        let mut params = Vec::new();
        let mut cond = filters.sql(&mut params);
        if let Some(t) = indexed_after {
            params.push(SqlValue::Text(t.to_owned()));
            cond.push_str(&format!(" AND f.indexed_at > ?{}", params.len()));
        }
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id
             WHERE 1 = 1{cond} ORDER BY f.path, c.start_byte, c.id LIMIT {limit}"
        );
        self.read(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map(rusqlite::params_from_iter(params), candidate)?;
            rows.collect()
        })
    }

    /// The content of each chunk in `ids`.
    pub(crate) fn contents(&self, ids: &[i64]) -> Result<HashMap<i64, String>> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        self.read(|c| {
            let mut stmt = c.prepare(&format!("SELECT id, booger_text(content) FROM chunks WHERE id IN ({list})"))?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, super::text::read(r, 1)?.to_owned())))?;
            rows.collect()
        })
    }

    /// How many files the filters leave, ignoring `kind` (0 explains an empty answer).
    pub(crate) fn count_files(&self, filters: &Filters) -> Result<u64> {
        let without_kind = Filters { kind: None, ..filters.clone() };
        let mut params = Vec::new();
        let cond = without_kind.sql(&mut params);
        self.read(|c| {
            let sql = format!("SELECT count(*) FROM files f WHERE 1 = 1{cond}");
            c.query_row(&sql, rusqlite::params_from_iter(params), |r| r.get::<_, i64>(0)).map(|n| n as u64)
        })
    }

    /// Files and their languages and indexing times under a path (directory summaries).
    pub(crate) fn files_under(&self, filters: &Filters) -> Result<Vec<(String, String, String)>> {
        let without_kind = Filters { kind: None, ..filters.clone() };
        let mut params = Vec::new();
        let cond = without_kind.sql(&mut params);
        self.read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT f.path, f.language, f.indexed_at FROM files f WHERE 1 = 1{cond} ORDER BY f.path"
            ))?;
            let rows = stmt.query_map(rusqlite::params_from_iter(params), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect()
        })
    }
}
