//! grep's reads: the chunks a trigram query leaves (see [`super::grams`] and
//! [`crate::domain::search::grams`]), or every chunk, handed on in file and line order with their text.

use booger_proto::tools::ChunkKind;
use rusqlite::types::Value as SqlValue;

use super::search::Filters;
use super::{Result, Store};

/// Whether [`Store::scan`] hands a chunk on, given its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    Yes,
    No,
    /// Read no further (what was kept so far is still handed on).
    Stop,
}

/// A chunk as [`Store::scan`] reads it for grep: where it is, and no more (a scan reads
/// thousands, and each string more is an allocation each).
#[derive(Debug, Clone)]
pub(crate) struct Scanned {
    pub id: i64,
    pub path: String,
    pub kind: ChunkKind,
    pub start_line: u32,
    /// The length of its own span (see [`super::grams::own_start`]).
    pub bytes: usize,
}

const SCANNED_COLUMNS: &str = "c.id, f.path, c.kind, c.start_line, c.end_byte - c.start_byte, c.content";
const SCANNED_CONTENT: usize = 5;

fn scanned(r: &rusqlite::Row) -> rusqlite::Result<Scanned> {
    Ok(Scanned {
        id: r.get(0)?,
        path: r.get(1)?,
        kind: crate::source::chunk::kind_named(r.get_ref(2)?.as_str()?),
        start_line: r.get(3)?,
        bytes: r.get::<_, i64>(4)? as usize,
    })
}

/// The most chunk text [`Store::scan`] holds at once to put chunks read by id in path order.
const MAX_KEPT_BYTES: usize = 32 << 20;

/// Which chunks a trigram query leaves for [`Store::scan`].
enum Narrowed {
    /// No query: every chunk.
    No,
    /// The chunks satisfying the query (sorted); `few`: up to a third of all chunks, read by
    /// id; more are read in path order, the others passed over.
    Ids { ids: Vec<i64>, few: bool },
    /// Some files' trigrams are still to be written: the chunks satisfying the query
    /// (sorted), and every chunk of those files (by path).
    Pending { ids: Vec<i64>, files: std::collections::HashSet<String> },
}

impl Store {
    /// The chunks under the filters whose content `keep` wants, with that content, in file
    /// and line order (grep): every one, or with `grams` (an FTS5 query on `chunk_grams`, see
    /// [`super::grams`]) those of the rows whose trigrams satisfy it and those of files whose
    /// trigrams are still pending. `each` returns false to stop.
    pub(crate) fn scan(
        &self,
        filters: &Filters,
        grams: Option<&str>,
        mut keep: impl FnMut(&str) -> Keep,
        mut each: impl FnMut(&Scanned, &str) -> bool,
    ) -> Result<()> {
        let narrowed = match grams {
            Some(g) => self.candidates_of(g)?,
            None => Narrowed::No,
        };
        let (only, pending) = match narrowed {
            Narrowed::Ids { ids, few } => {
                if few && self.scan_ids(&ids, filters, &mut keep, &mut each)? {
                    return Ok(());
                }
                (Some(ids), Default::default())
            }
            Narrowed::Pending { ids, files } => (Some(ids), files),
            Narrowed::No => (None, Default::default()),
        };
        // Passed over before its text is read: a chunk the trigrams rule out, unless its
        // file's trigrams are still pending.
        let passed_over = |r: &rusqlite::Row| {
            only.as_ref().is_some_and(|ids| ids.binary_search(&r.get::<_, i64>(0).unwrap_or_default()).is_err())
                && !r.get_ref(1).ok().and_then(|p| p.as_str().ok()).is_some_and(|p| pending.contains(p))
        };
        let mut params: Vec<SqlValue> = Vec::new();
        let cond = filters.sql(&mut params);
        // Files in path order and each file's chunks by id, as the indexes hold them: no
        // sorter, into which SQLite would first copy the text of every chunk read. Only the
        // chunks `keep` accepts are copied out, and put in line order per file.
        let sql = format!(
            "SELECT {SCANNED_COLUMNS} FROM files f CROSS JOIN chunks c ON c.file_id = f.id
             WHERE 1 = 1{cond} ORDER BY f.path, c.id"
        );
        self.read(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
            let mut file: Vec<(Scanned, String)> = Vec::new();
            let mut flush = |file: &mut Vec<(Scanned, String)>| {
                file.sort_by_key(|(c, _)| (c.start_line, c.id));
                let go_on = file.iter().all(|(c, text)| each(c, text));
                file.clear();
                go_on
            };
            while let Some(r) = rows.next()? {
                if passed_over(r) {
                    continue;
                }
                let content = super::text::decoded(r, SCANNED_CONTENT, &self.texts)?;
                match keep(&content) {
                    Keep::Yes => {}
                    Keep::No => continue,
                    Keep::Stop => break,
                }
                let cand = scanned(r)?;
                if file.last().is_some_and(|(last, _)| last.path != cand.path) && !flush(&mut file) {
                    return Ok(());
                }
                file.push((cand, content.into_owned()));
            }
            flush(&mut file);
            Ok(())
        })
    }

    /// How to read the chunks satisfying `grams`. Up to a third of all chunks, reading them by
    /// id beats reading every row in path order (on 25,000 files, a rare literal took 110 ms
    /// that way; on the standard library, 17,000 of 76,000 chunks took 61 ms against 79);
    /// more are read in path order, the others passed over before their text is read. While
    /// some file's trigrams are pending, its chunks are candidates too, left to the query.
    fn candidates_of(&self, grams: &str) -> Result<Narrowed> {
        let all = self.with_tally(|t| t.kinds.values().sum::<u64>())? as i64;
        self.read(|c| {
            // Each row covers a few consecutive chunks of a file (see `grams::row_chunks`).
            let mut stmt = c.prepare_cached(super::grams::MATCHED_ROWS)?;
            let mut ids: Vec<i64> = Vec::new();
            for row in stmt.query_map([grams], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?)))? {
                let (row, next) = row?;
                ids.extend(super::grams::row_chunks(row, next));
            }
            ids.sort_unstable();
            let mut pending =
                c.prepare_cached("SELECT f.path FROM grams_pending p JOIN files f ON f.id = p.file_id")?;
            let files: std::collections::HashSet<String> =
                pending.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
            if !files.is_empty() {
                return Ok(Narrowed::Pending { ids, files });
            }
            Ok(Narrowed::Ids { few: ids.len() as i64 * 3 <= all, ids })
        })
    }

    /// [`scan`](Self::scan) over the chunks `ids` (sorted), read in that order, sorted once
    /// kept. Returns false, having called `each` for none, if those kept hold more than
    /// [`MAX_KEPT_BYTES`]: a path-order pass then reads them a file at a time instead.
    fn scan_ids(
        &self,
        ids: &[i64],
        filters: &Filters,
        keep: &mut impl FnMut(&str) -> Keep,
        each: &mut impl FnMut(&Scanned, &str) -> bool,
    ) -> Result<bool> {
        let list: rusqlite::vtab::array::Array =
            std::rc::Rc::new(ids.iter().map(|&id| SqlValue::Integer(id)).collect());
        let mut params: Vec<SqlValue> = vec![SqlValue::Null]; // ?1 is the list
        let cond = filters.sql(&mut params);
        let sql = format!(
            "SELECT {SCANNED_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id
             WHERE c.id IN rarray(?1){cond}"
        );
        let kept: Option<Vec<(Scanned, String)>> = self.read(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let mut all: Vec<&dyn rusqlite::ToSql> = vec![&list];
            all.extend(params[1..].iter().map(|p| p as &dyn rusqlite::ToSql));
            let mut rows = stmt.query(all.as_slice())?;
            let (mut kept, mut bytes) = (Vec::new(), 0);
            while let Some(r) = rows.next()? {
                let content = super::text::decoded(r, SCANNED_CONTENT, &self.texts)?;
                match keep(&content) {
                    Keep::Yes => {
                        bytes += content.len();
                        kept.push((scanned(r)?, content.into_owned()));
                    }
                    Keep::No => continue,
                    Keep::Stop => break,
                }
                if bytes > MAX_KEPT_BYTES {
                    return Ok(None);
                }
            }
            Ok(Some(kept))
        })?;
        let Some(mut kept) = kept else { return Ok(false) };
        kept.sort_by(|(a, _), (b, _)| (&a.path, a.start_line, a.id).cmp(&(&b.path, b.start_line, b.id)));
        for (cand, text) in &kept {
            if !each(cand, text) {
                break;
            }
        }
        Ok(true)
    }
}
