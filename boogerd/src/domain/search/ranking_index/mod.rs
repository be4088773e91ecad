//! The ranking index: term → postings, on disk and memory-mapped, plus a small delta.
//!
//! FTS5 computes bm25 for every row a query matches (about 0.5 µs each), so a common word
//! costs milliseconds. Here each posting costs a few nanoseconds: scores accumulate
//! term-at-a-time into one slot per chunk. The formula is FTS5's bm25 with the same column
//! weights (name, content, split identifiers) plus the file's path, so the re-ranking keeps
//! its scale; only this index ranks by path words.
//!
//! A project's index is a *base* segment written to its index folder (`rank-<generation>.seg`,
//! memory-mapped: an idle project costs no heap, and a released one comes back by mapping
//! the file again) and two segments in memory holding the files changed since: the *delta*
//! and, changed after it was built, the *recent* files, with the older parts' chunks of
//! those files marked deleted. An edit rebuilds only the recent segment (its files, not the
//! delta's); every few dozen files it is folded into a new delta, and once the delta grows
//! past a share of the base a new base is written in the background. bm25's statistics
//! (live chunks, document frequencies, average length) skip deleted chunks, so the ranking
//! equals a fresh build's.
//!
//! Until the index matches the store's content (and for glob filters, which need SQL) search
//! uses FTS5. Tokens are alphanumeric runs, lowercased and stemmed (Snowball English): the
//! terms of `base::terms`, which the full-text rows hold too.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::segment::{Builder, Segment, prepared};
use super::tombstones::Tombstones;
use crate::base::sync::Recover;
use crate::base::terms::stem;
use crate::store::search::{BM25_WEIGHTS, Filters, PATH_WEIGHT};
use crate::store::{Store, StoreError};

pub(crate) use super::segment::tokens;

mod files;

pub(crate) use files::PASSAGE_TERMS;

const K1: f64 = 1.2;
const B: f64 = 0.75;
/// A delta larger than this share of the base (or than `MERGE_MIN` chunks) asks for a new base.
const MERGE_SHARE: f64 = 0.1;
const MERGE_MIN: u32 = 5_000;

/// The recent segment is folded into the delta once it would hold more files than this: an
/// edit rebuilds at most this many files, and a fold (the delta's files) comes this rarely.
const RECENT_FILES: usize = 32;

#[derive(Debug, thiserror::Error)]
pub(crate) enum RankError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("ranking index {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Damaged(#[from] super::segment::Damaged),
}

pub struct RankingIndex {
    /// The store content generation this matches.
    pub content_generation: u64,
    base: Arc<Segment>,
    /// Files changed since the base was written, as of when it was built.
    delta: Arc<Segment>,
    /// Files changed since the delta was built.
    recent: Arc<Segment>,
    /// Chunks of the base and the delta (numbered base first) that a later part replaces.
    deleted: Tombstones,
    /// Chunks of the base and the delta not deleted, and their total length.
    live: u32,
    live_len: u64,
}

/// A run's changed files as the store holds them after it, built while they were written
/// (see `engine::index::alongside`): what [`RankingIndex::updated`] reads back otherwise.
pub(crate) struct ChangedFiles(Segment);

impl ChangedFiles {
    /// What `b` holds, for the store's content `generation`.
    pub(crate) fn built(b: Builder, generation: u64) -> Result<Self, RankError> {
        Ok(Self(in_memory(b, generation)?))
    }
}

/// One ranked chunk: what re-ranking needs (signature and parent left empty until the page
/// is read), and whether it matched every term.
pub(crate) type Ranked = (crate::store::search::Candidate, bool);

/// One word of a query, as [`RankingIndex::coverage`] finds it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Coverage {
    /// Chunks holding it.
    pub chunks: usize,
    pub idf: f64,
    /// Bit `i`: the `i`th chunk asked about holds it.
    pub held: u64,
}

/// Score and term-count slots, one per chunk of the largest project ranked (17 MB at two
/// million chunks). Kept between queries in a pool, not per thread: queries run on whichever
/// blocking thread is free, and one buffer per thread grew the daemon by that much per
/// thread. Queries hold at most one each, and run one per core.
type Scratch = (Vec<f64>, Vec<u8>);

static SCRATCH: Mutex<Vec<Scratch>> = Mutex::new(Vec::new());

/// Frees the pooled score buffers (nothing is warm: the next query allocates again).
pub(crate) fn release_scratch() -> usize {
    let pool = std::mem::take(&mut *SCRATCH.lock().recover());
    pool.iter().map(|(s, c)| s.capacity() * 8 + c.capacity()).sum()
}

const FILE_PREFIX: &str = "rank-";
const FILE_SUFFIX: &str = ".seg";

impl RankingIndex {
    /// Builds a new base from the whole store, writes it into `dir` and maps it.
    pub(crate) fn build(store: &Store, dir: &Path) -> Result<RankingIndex, RankError> {
        // The build's tables are large allocations, mapped afresh rather than made from the
        // free heap an index run leaves: that goes back to the OS first, or it adds to the
        // build's peak.
        crate::base::memory::trim();
        let mut b = Builder::spilling_into(dir);
        let generation = prepared::scan_into(&mut b, |sink| store.scan_snapshot(sink))?;
        let path = Self::write_base(b, generation, dir)?;
        let io = |source| RankError::Io { path: path.clone(), source };
        let base = Arc::new(Segment::map(&path).map_err(io)?);
        Ok(Self::on(base, generation))
    }

    /// Writes what `b` holds into `dir` as the base for the store's content `generation`
    /// (what [`open`](Self::open) maps next) and removes the older bases; its path.
    pub(crate) fn write_base(b: Builder, generation: u64, dir: &Path) -> Result<PathBuf, RankError> {
        let [raw, terms, bytes, capacity, runs, chunks] = b.held();
        tracing::debug!(raw, terms, bytes, capacity, runs, chunks, "ranking index: built, writing");
        let path = dir.join(format!("{FILE_PREFIX}{generation}{FILE_SUFFIX}"));
        let io = |source| RankError::Io { path: path.clone(), source };
        let tmp = dir.join(format!("{FILE_PREFIX}{generation}{FILE_SUFFIX}.tmp"));
        let written = (|| {
            let file = crate::base::storage::create_private(&tmp).map_err(io)?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
            b.write(generation, &mut w).map_err(io)?;
            let file = w.into_inner().map_err(|e| io(e.into_error()))?;
            file.sync_data().map_err(io)?;
            std::fs::rename(&tmp, &path).map_err(io)
        })();
        if let Err(e) = written {
            // A full disk must not leave half a file behind.
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        // A held index keeps its own base mapped (the mapping outlives the name).
        remove_others(dir, &path);
        Ok(path)
    }

    /// Maps the newest base in `dir` and brings it up to the store's content by a delta of
    /// the files whose chunks differ. `None` when there is no base yet.
    pub(crate) fn open(store: &Store, dir: &Path) -> Result<Option<RankingIndex>, RankError> {
        let Some(path) = newest(dir) else { return Ok(None) };
        let base = match Segment::map(&path) {
            Ok(s) => Arc::new(s),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "unreadable ranking index; rebuilding");
                let _ = std::fs::remove_file(&path);
                return Ok(None);
            }
        };
        Self::caught_up(base, store).map(Some)
    }

    /// This index's base brought up to the store's content: a delta of the files whose
    /// chunks differ from the base's (by content hash, first chunk id and count) (a rebuild raced with edits, or the project was
    /// released and edited meanwhile).
    pub(crate) fn catch_up(&self, store: &Store) -> Result<RankingIndex, RankError> {
        Self::caught_up(Arc::clone(&self.base), store)
    }

    fn caught_up(base: Arc<Segment>, store: &Store) -> Result<RankingIndex, RankError> {
        let generation = base.generation;
        let p = Self::on(base, generation);
        let now = store.content_generation();
        if now == generation {
            return Ok(p);
        }
        let keys = store.chunk_keys()?;
        let mut changed: Vec<String> = Vec::new();
        let mut seen = vec![false; p.base.files as usize];
        for (path, key) in &keys {
            match p.base.find_file(path) {
                Some(f) => {
                    seen[f] = true;
                    if p.base.key(f) != key {
                        changed.push(path.clone());
                    }
                }
                None => changed.push(path.clone()),
            }
        }
        changed.extend((0..p.base.files as usize).filter(|&f| !seen[f]).map(|f| p.base.path(f).to_owned()));
        p.updated_to(store, &changed, None, now)
    }

    fn on(base: Arc<Segment>, generation: u64) -> RankingIndex {
        let empty = Arc::new(empty_segment());
        RankingIndex {
            content_generation: generation,
            live: base.docs,
            live_len: base.total_len,
            deleted: Tombstones::new(base.docs as usize),
            base,
            delta: Arc::clone(&empty),
            recent: empty,
        }
    }

    /// A copy in which the chunks of the `changed` files are what the store holds for them
    /// now (none, for a deleted file). Costs the delta's files, not the project's: the base
    /// is shared, its chunks of these files marked deleted. `built`: those files as the run
    /// that changed them built them, taken in place of reading them back when they are all
    /// the new part holds.
    pub(crate) fn updated(
        &self,
        store: &Store,
        changed: &[String],
        built: Option<ChangedFiles>,
    ) -> Result<RankingIndex, RankError> {
        self.updated_to(store, changed, built, store.content_generation())
    }

    fn updated_to(
        &self,
        store: &Store,
        changed: &[String],
        built: Option<ChangedFiles>,
        generation: u64,
    ) -> Result<RankingIndex, RankError> {
        let mut deleted = self.deleted.clone();
        let (mut live, mut live_len) = (self.live, self.live_len);
        for (seg, offset) in [(&*self.base, 0), (&*self.delta, self.base.docs)] {
            for path in changed {
                let Some(f) = seg.find_file(path) else { continue };
                for d in seg.file_docs(f) {
                    if deleted.set((offset + d) as usize) {
                        live -= 1;
                        live_len -= u64::from(seg.doc_len(d));
                    }
                }
            }
        }
        // The recent segment's files and those just changed, read again from the store; past
        // `RECENT_FILES` the delta's files too, into a new delta. With nothing recent (and
        // past it, no delta), the new part holds just the changed files: as built, if they were,
        // for the store's content now (a watcher's batch is taken after its run let go of the
        // index, and another run may have written since).
        let built = built.map(|b| b.0).filter(|b| self.recent.files == 0 && b.generation == generation);
        let mut recent = files_of(&self.recent);
        recent.extend(changed.iter().cloned());
        recent.sort();
        recent.dedup();
        let (delta, recent) = if recent.len() <= RECENT_FILES {
            let recent = match built {
                Some(seg) => seg,
                None => segment_of(store, &recent, generation)?,
            };
            (Arc::clone(&self.delta), Arc::new(recent))
        } else {
            let mut all = files_of(&self.delta);
            all.extend(recent);
            all.sort();
            all.dedup();
            // The old delta's chunks leave with it: what it held is in the new one.
            for d in 0..self.delta.docs {
                let slot = (self.base.docs + d) as usize;
                if !deleted.get(slot) {
                    live -= 1;
                    live_len -= u64::from(self.delta.doc_len(d));
                }
            }
            let delta = match built.filter(|_| self.delta.files == 0) {
                Some(seg) => seg,
                None => segment_of(store, &all, generation)?,
            };
            deleted.resize(self.base.docs as usize);
            deleted.resize(self.base.docs as usize + delta.docs as usize);
            live += delta.docs;
            live_len += delta.total_len;
            (Arc::new(delta), Arc::new(empty_segment()))
        };
        Ok(RankingIndex {
            content_generation: generation,
            base: Arc::clone(&self.base),
            delta,
            recent,
            deleted,
            live,
            live_len,
        })
    }

    /// The delta has grown enough that a new base is worth writing.
    pub(crate) fn wants_merge(&self) -> bool {
        let changed = self.delta.docs + self.recent.docs + (self.base.docs + self.delta.docs - self.live);
        changed > MERGE_MIN.max((f64::from(self.base.docs) * MERGE_SHARE) as u32)
    }

    /// Heap held: the delta, the recent files and the deleted bits (the base is mapped).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.base.heap_bytes() + self.delta.heap_bytes() + self.recent.heap_bytes() + self.deleted.heap_bytes()
    }

    fn is_deleted(&self, slot: u32) -> bool {
        self.deleted.get(slot as usize)
    }

    /// The three parts with the slot their first chunk has (chunks are numbered base first,
    /// then delta, then recent).
    fn parts(&self) -> [(&Segment, u32); 3] {
        [(&*self.base, 0), (&*self.delta, self.base.docs), (&*self.recent, self.base.docs + self.delta.docs)]
    }

    /// Can this index answer for these filters (globs need SQL)?
    pub(crate) fn supports(filters: &Filters) -> bool {
        !filters.path.as_deref().is_some_and(|p| p.contains(['*', '?', '[']))
    }

    /// Ranks the chunks matching all `words` (up to `limit`) and any of them (up to `limit`).
    /// `words` are single words (no phrases), each with the weight its bm25 is multiplied by.
    pub(crate) fn rank(&self, words: &[(String, f64)], filters: &Filters, limit: usize) -> Vec<Ranked> {
        let stems: Vec<(String, f64)> = words.iter().map(|(w, weight)| (stem(&w.to_lowercase()), *weight)).collect();
        let n_terms = words.len();
        let parts = self.parts();
        let n = parts.iter().map(|(seg, _)| seg.docs as usize).sum::<usize>();
        let live = u64::from(self.live) + u64::from(self.recent.docs);
        let avgdl = ((self.live_len + self.recent.total_len) as f64 / live.max(1) as f64).max(1.0);
        let file_ok = parts.map(|(seg, _)| file_filter(seg, filters));
        // A segment stores a kind as its position in the catalogue's list, the enum's order.
        let kind = filters.kind.map(|k| k as u8);
        let weights = [BM25_WEIGHTS[0], BM25_WEIGHTS[1], BM25_WEIGHTS[2], PATH_WEIGHT];
        let any_deleted = self.live < self.base.docs + self.delta.docs;
        let mut scratch = SCRATCH.lock().recover().pop().unwrap_or_default();
        let out = {
            let (scores, counts) = &mut scratch;
            if scores.len() < n {
                scores.resize(n, 0.0);
                counts.resize(n, 0);
            }
            let mut touched: Vec<u32> = Vec::new();
            for (stem, weight) in &stems {
                // Each list is looked up once; a list with deleted chunks is decoded twice
                // (their count is the term's document frequency's correction).
                let lists = parts.map(|(seg, offset)| (seg.postings(stem), seg, offset));
                let mut hits = 0;
                for (list, _, offset) in &lists {
                    hits += list.len();
                    if any_deleted {
                        hits -= list.clone().filter(|(d, _)| self.is_deleted(offset + d)).count();
                    }
                }
                if hits == 0 {
                    continue;
                }
                let hits = hits as f64;
                let idf = weight * ((live as f64 - hits + 0.5) / (hits + 0.5)).ln().max(1e-6);
                for (list, seg, offset) in lists {
                    // `for_each`, not `for`: a list is fastest read whole (`segment::lists`).
                    list.for_each(|(d, tf)| {
                        let slot = offset + d;
                        if any_deleted && self.is_deleted(slot) {
                            return;
                        }
                        let freq: f64 = tf.iter().zip(weights).map(|(t, w)| f64::from(*t) * w).sum();
                        let norm = K1 * (1.0 - B + B * f64::from(seg.doc_len(d)) / avgdl);
                        let i = slot as usize;
                        if counts[i] == 0 {
                            touched.push(slot);
                        }
                        counts[i] = counts[i].saturating_add(1);
                        scores[i] += idf * (freq * (K1 + 1.0)) / (freq + norm);
                    });
                }
            }
            let passes = |slot: u32| {
                let (p, d) = self.locate(slot);
                let seg = parts[p].0;
                file_ok[p].as_ref().is_none_or(|ok| ok[seg.doc_file(d) as usize])
                    && kind.is_none_or(|k| seg.doc_kind(d) == k)
            };
            let all: Vec<(u32, f64, bool)> = touched
                .iter()
                .filter(|&&slot| passes(slot))
                .map(|&slot| (slot, scores[slot as usize], counts[slot as usize] as usize >= n_terms))
                .collect();
            for &slot in &touched {
                scores[slot as usize] = 0.0;
                counts[slot as usize] = 0;
            }
            self.best(all, limit)
        };
        let mut pool = SCRATCH.lock().recover();
        if pool.len() < crate::base::threads::cores() {
            pool.push(scratch);
        }
        out
    }

    /// The best `limit` of the chunks `all` scored (slot, score, has every word): those with
    /// every word first, then the best of the rest.
    fn best(&self, mut all: Vec<(u32, f64, bool)>, limit: usize) -> Vec<Ranked> {
        let by_score = |a: &(u32, f64, bool), b: &(u32, f64, bool)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        let mut and: Vec<(u32, f64, bool)> = all.iter().filter(|x| x.2).copied().collect();
        top(&mut and, limit, by_score);
        top(&mut all, limit, by_score);
        let mut out: Vec<Ranked> = and.iter().map(|&(slot, s, _)| (self.candidate(slot, s), true)).collect();
        for &(slot, s, a) in &all {
            if !a {
                out.push((self.candidate(slot, s), false));
            }
        }
        out
    }

    /// For each of `words` (stemmed as `rank` stems them): how many chunks hold it, its
    /// inverse document frequency (as bm25 weighs it; a word in no chunk weighs most), and
    /// which of the chunks `ids` (the first 64) hold it.
    pub(crate) fn coverage(&self, words: &[String], ids: &[i64]) -> Vec<Coverage> {
        let live = f64::from(self.live) + f64::from(self.recent.docs);
        let ids = &ids[..ids.len().min(64)];
        words
            .iter()
            .map(|w| {
                let (mut hits, mut held) = (0usize, 0u64);
                self.for_each_live(&stem(&w.to_lowercase()), |_, seg, d, _| {
                    hits += 1;
                    let id = seg.doc_id(d);
                    if let Some(i) = ids.iter().position(|x| *x == id) {
                        held |= 1 << i;
                    }
                });
                let idf = ((live - hits as f64 + 0.5) / (hits as f64 + 0.5)).ln().max(1e-6);
                Coverage { chunks: hits, idf, held }
            })
            .collect()
    }

    /// For each of `paths`: bit `i` is set when some chunk of the file holds `words[i]` (the
    /// first 64 words, stemmed as `rank` stems them) in its name, text or identifiers (a
    /// word only in the path does not count: FTS5 does not index paths). Costs one walk of
    /// each word's postings.
    pub(crate) fn words_in_files(&self, words: &[String], paths: &[&str]) -> Vec<u64> {
        // Per part, per file number: 1 + the file's place in `paths`, or 0 when not asked
        // about (a changed file's live chunks are all in one part; the others' are deleted).
        // An array, not a map: it is read once per posting.
        let wanted = self.parts().map(|(seg, _)| {
            let mut places = vec![0u32; seg.files as usize];
            for (i, p) in paths.iter().enumerate() {
                if let Some(f) = seg.find_file(p) {
                    places[f] = i as u32 + 1;
                }
            }
            places
        });
        let mut held = vec![0u64; paths.len()];
        for (bit, word) in words.iter().take(64).enumerate() {
            self.for_each_live(&stem(&word.to_lowercase()), |part, seg, d, tf| {
                if tf[..3].iter().all(|t| *t == 0) {
                    return;
                }
                let place = wanted[part].get(seg.doc_file(d) as usize).copied().unwrap_or(0);
                if place > 0 {
                    held[place as usize - 1] |= 1 << bit;
                }
            });
        }
        held
    }

    /// Calls `f` with each posting of `stem` in every part, without deleted chunks: the
    /// part (0 base, 1 delta, 2 recent) and its segment, the chunk's number in it, its
    /// counts per column.
    fn for_each_live(&self, stem: &str, mut f: impl FnMut(usize, &Segment, u32, [u8; 4])) {
        let any_deleted = self.live < self.base.docs + self.delta.docs;
        for (part, (seg, offset)) in self.parts().into_iter().enumerate() {
            for (d, tf) in seg.postings(stem) {
                if !(any_deleted && self.is_deleted(offset + d)) {
                    f(part, seg, d, tf);
                }
            }
        }
    }

    /// The chunks it ranks.
    pub(crate) fn chunks(&self) -> usize {
        self.live as usize + self.recent.docs as usize
    }

    /// Which part a slot is in, and its chunk number there.
    fn locate(&self, slot: u32) -> (usize, u32) {
        let (b, d) = (self.base.docs, self.delta.docs);
        if slot < b {
            (0, slot)
        } else if slot < b + d {
            (1, slot - b)
        } else {
            (2, slot - b - d)
        }
    }

    fn candidate(&self, slot: u32, score: f64) -> crate::store::search::Candidate {
        let (p, d) = self.locate(slot);
        self.parts()[p].0.candidate(d, score)
    }
}

/// The paths of a segment's files.
fn files_of(seg: &Segment) -> Vec<String> {
    (0..seg.files as usize).map(|f| seg.path(f).to_owned()).collect()
}

/// An in-memory segment of `files` as the store holds them now. An edit's few files are
/// read and added on this thread; more (a checkout, a fold into the delta) on two.
fn segment_of(store: &Store, files: &[String], generation: u64) -> Result<Segment, RankError> {
    let mut b = Builder::default();
    if files.len() <= RECENT_FILES {
        store.scan_files(files, |c, content| b.add(c, content, ""))?;
    } else {
        prepared::scan_into(&mut b, |sink| store.scan_files(files, |c, content| sink.chunk(c, content, "")))?;
    }
    in_memory(b, generation)
}

fn in_memory(b: Builder, generation: u64) -> Result<Segment, RankError> {
    let mut bytes = Vec::new();
    b.write(generation, &mut bytes).expect("writing to memory");
    Ok(Segment::from_vec(bytes)?)
}

/// Per file of `seg`: passes the language and path-prefix filters (`None`: no file filter).
fn file_filter(seg: &Segment, f: &Filters) -> Option<Vec<bool>> {
    if f.language.is_none() && f.path.is_none() {
        return None;
    }
    let prefix = f.path.as_deref().map(|p| p.trim_start_matches("./").trim_end_matches('/'));
    Some(
        (0..seg.files as usize)
            .map(|file| {
                let path = seg.path(file);
                f.language.is_none_or(|l| l.as_str() == seg.language(file))
                    && prefix.is_none_or(|p| {
                        p.is_empty() || path == p || path.strip_prefix(p).is_some_and(|r| r.starts_with('/'))
                    })
            })
            .collect(),
    )
}

fn empty_segment() -> Segment {
    let mut bytes = Vec::new();
    Builder::default().write(0, &mut bytes).expect("writing to memory");
    Segment::from_vec(bytes).expect("an empty segment is valid")
}

/// The base file with the highest generation in `dir`.
fn newest(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let generation: u64 = name.strip_prefix(FILE_PREFIX)?.strip_suffix(FILE_SUFFIX)?.parse().ok()?;
            Some((generation, e.path()))
        })
        .max_by_key(|(g, _)| *g)
        .map(|(_, p)| p)
}

/// Removes the other base files (older generations, temporary files of a crashed build).
fn remove_others(dir: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(FILE_PREFIX) && e.path() != keep {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Keeps the best `k` of `v`, sorted.
fn top<T>(v: &mut Vec<T>, k: usize, cmp: impl Fn(&T, &T) -> std::cmp::Ordering + Copy) {
    if v.len() > k {
        v.select_nth_unstable_by(k, cmp);
        v.truncate(k);
    }
    v.sort_by(cmp);
}
