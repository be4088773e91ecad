//! Indexing a project: walk, detect changes, chunk, store.
//!
//! ```text
//! walk ──▶ size+mtime equal to the index? ──yes──▶ unchanged (not read)
//!                    │ no
//!                    ▼
//!          read, NUL sniff, BLAKE3 ── same hash ──▶ touched (mtime updated, not parsed)
//!                    │ new hash
//!                    ▼
//!          chunk on every core ──▶ one writer, batched transactions
//! ```
//!
//! Re-indexing costs O(changed files) plus a walk and a stat per file. Per-file trouble
//! (unreadable, binary, a parse that fails) is data in the [`IndexReport`]; only the store
//! failing aborts a run, and because each batch is one transaction, an interrupted run
//! leaves a consistent index that the next run completes.

mod alongside;
pub(crate) mod origin;
mod prepare;
pub mod walk;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use serde::Serialize;

use crate::base::sync::Recover;
use crate::domain::search::ranking_index::ChangedFiles;
use crate::source::{DEFAULT_MAX_FILE_BYTES, Survey, hash};
use crate::store::{FileWrite, Store, StoreError};
use alongside::Target;
use prepare::{Outcome, process};
use walk::Skipped;

/// A batch is committed when it holds this many files or this much chunk text.
pub(crate) const BATCH_FILES: usize = 500;
const BATCH_BYTES: usize = 4 * 1024 * 1024;
/// A run that reads more files, or more bytes, than these leaves their trigram rows (for
/// `grep`) to a pass in the background: FTS5 would spend longer on them than on the rest of
/// the run, and grep reads the files still pending whole meanwhile. A smaller run (an edit,
/// a small pull) writes them with the chunks; a checkout answers first. (The count was 256,
/// and a 200-file checkout spent a third of its run on them; by count alone, a checkout of
/// hiredis 300 commits back, 61 files and 0.7 MB, spent two thirds of its write on them.)
const GRAMS_INLINE_FILES: usize = 64;
const GRAMS_INLINE_BYTES: u64 = 256 * 1024;
/// A first index of more files than this makes its names index after its writes (see
/// [`Store::pause_names_index`]); a few files' names go in faster than the index is made.
const NAMES_LATER_FILES: usize = 64;
/// Parsed files that may wait for the writer. Large enough that parsers keep going while the
/// writer commits a batch (FTS5 does most of its work then), small enough to bound memory.
const QUEUE_FILES: usize = 1024;

#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Forget the index and parse everything.
    pub full: bool,
    pub max_file_bytes: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self { full: false, max_file_bytes: DEFAULT_MAX_FILE_BYTES }
    }
}

/// Live counters of a run, read by `status` while it goes.
#[derive(Debug, Default)]
pub struct Progress {
    pub running: AtomicBool,
    /// Set when the project is removed: a run stops between files and writes nothing more.
    pub cancelled: AtomicBool,
    /// Files that need reading (not unchanged).
    pub total: AtomicU64,
    pub done: AtomicU64,
    pub started: Mutex<Option<Instant>>,
    /// The run under way rewrites every file (`Options::full`): nothing of the ranking index
    /// held from before it stays.
    pub rewriting_all: AtomicBool,
}

/// Saved in the index's `meta` after every run, so `status` can show it after a restart.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct IndexReport {
    /// Files the walk found.
    pub files: u64,
    /// Skipped by the size+mtime fast path, not even read.
    pub unchanged: u64,
    /// Read and hashed, same content: only the mtime was updated.
    pub touched: u64,
    /// Chunked and written.
    pub parsed: u64,
    /// Gone from disk (or now binary/unreadable) and removed from the index.
    pub deleted: u64,
    pub chunks_written: u64,
    pub bytes_parsed: u64,
    pub elapsed_ms: u64,
    pub root_hash: String,
    pub skipped: Vec<Skipped>,
    /// Generated, vendored and fuzz-corpus files left out ([`origin`]), the first 200 once
    /// saved; `set_aside_total` counts them all.
    pub set_aside: Vec<Skipped>,
    pub set_aside_total: u64,
    /// How many were set aside for each reason (`generated`, `vendored`, ...).
    pub set_aside_kinds: std::collections::BTreeMap<String, u64>,
    /// Files indexed only as raw or fixed-size blocks, or with a caveat.
    pub problems: Vec<Skipped>,
    /// Where the run's time went on the stages that run on one thread (what more cores
    /// cannot shorten); the rest is the workers' reading, hashing and chunking.
    pub stages: Stages,
    /// Files whose chunks changed (written or removed): what the ranking index must update.
    #[serde(skip)]
    pub changed: Vec<String>,
    /// Directories the walk entered: what the watcher watches.
    #[serde(skip)]
    pub dirs: Vec<String>,
    /// The ranking index was built alongside and its base written: the run's caller maps it.
    #[serde(skip)]
    pub ranked_alongside: bool,
}

/// Milliseconds of a run's serial stages.
#[derive(Debug, Clone, Copy, Default, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Stages {
    /// The walk of the tree and the read of what the index knows of it.
    pub walk_ms: u64,
    /// The single writer's busy time: SQLite inserts, FTS5 rows, commits.
    pub write_ms: u64,
    /// The Merkle root, the checkpoint and the saved report.
    pub finish_ms: u64,
    /// Making the ranking index current before the run returns (after `elapsed_ms`).
    pub ranking_ms: u64,
    /// The ranking index's part for the run's files (a first index's base, a later run's
    /// changed files), built on its own thread while they were written: that thread's busy
    /// time (alongside the writer, not after it).
    pub ranking_alongside_ms: u64,
    /// Waiting for that thread once the files were written, and writing a base.
    pub ranking_written_ms: u64,
}

impl IndexReport {
    /// A copy with at most `keep` entries in each list (the counts stay whole).
    pub(crate) fn trimmed(&self, keep: usize) -> Self {
        let first = |v: &[Skipped]| v[..v.len().min(keep)].to_vec();
        Self {
            skipped: first(&self.skipped),
            set_aside: first(&self.set_aside),
            problems: first(&self.problems),
            changed: Vec::new(),
            dirs: Vec::new(),
            root_hash: self.root_hash.clone(),
            set_aside_kinds: self.set_aside_kinds.clone(),
            ..*self
        }
    }
}

/// The index's `meta` key that, set to `true`, has generated and vendored files indexed too.
pub(crate) const WITH_GENERATED: &str = "with_generated";

/// True if the project asked for its generated and vendored files to be indexed.
pub(crate) fn with_generated(store: &Store) -> Result<bool, StoreError> {
    Ok(store.meta(WITH_GENERATED)?.as_deref() == Some("true"))
}

/// Moves the files of `tree` that [`origin`] sets aside out of its files; the rest are marked
/// for the header check unless the repository's attributes say they are not generated.
pub(crate) fn sort_out(root: &Path, tree: &mut walk::Tree, extra_dirs: &[String], with_generated: bool) {
    if with_generated {
        return;
    }
    let dirs = tree.dirs.iter().chain(extra_dirs).map(String::as_str);
    let attributes = origin::Attributes::load(root, dirs);
    let files = std::mem::take(&mut tree.files);
    for mut w in files {
        match attributes.origin(&w.rel) {
            Some(o) => tree.set_aside.push(Skipped { path: w.rel, reason: o.label().to_owned() }),
            None => {
                w.header_decides = attributes.header_decides(&w.rel);
                tree.files.push(w);
            }
        }
    }
}

/// Brings the whole index of `root` up to date with the disk, and saves the report and
/// the Merkle root.
pub fn run(root: &Path, store: &Store, opts: Options, progress: &Progress) -> Result<IndexReport, StoreError> {
    run_ranked(root, store, opts, progress, Ranking::default()).map(|(report, _)| report)
}

/// What [`run_ranked`] builds of the ranking index alongside its writes (see [`alongside`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct Ranking<'a> {
    /// When the index holds nothing yet (a first index, or `full`): the base, written here.
    pub base_dir: Option<&'a Path>,
    /// Otherwise: the changed files, for a ranking index held in memory to take.
    pub changed: bool,
}

/// [`run`], building what `ranking` asks for alongside the writes: a first index's base is
/// written (the report says so), a later run's changed files are returned.
pub(crate) fn run_ranked(
    root: &Path,
    store: &Store,
    opts: Options,
    progress: &Progress,
    ranking: Ranking<'_>,
) -> Result<(IndexReport, Option<ChangedFiles>), StoreError> {
    let started = Instant::now();
    let _running = progress.start(started);
    if opts.full {
        progress.rewriting_all.store(true, Ordering::SeqCst);
        store.clear_files()?;
    }
    let with = with_generated(store)?;
    let mut tree = walk::walk(root);
    if progress.cancelled.load(Ordering::SeqCst) {
        return Err(StoreError::Cancelled);
    }
    sort_out(root, &mut tree, &[], with);
    let known = store.file_states()?;
    let walk_ms = started.elapsed().as_millis() as u64;
    let first = known.is_empty();
    let target = match ranking.base_dir {
        Some(dir) if first => Some(Target::Base(dir)),
        _ => ranking.changed.then_some(Target::Changed).filter(|_| !first),
    };
    let (mut report, changed) = apply(store, tree, known, opts, progress, target, first)?;
    report.stages.walk_ms = walk_ms;
    if progress.cancelled.load(Ordering::SeqCst) {
        return Err(StoreError::Cancelled);
    }
    let finishing = Instant::now();
    let hashes = store.hashes()?;
    report.root_hash = hash::merkle_root(hashes.iter().map(|(p, h)| (p.as_str(), h.as_str())));
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    report.stages.finish_ms = finishing.elapsed().as_millis() as u64;
    // A run that found nothing to do writes nothing: the checkpoint and the saved report
    // would wait for the writer, which the background work of the run before (ranking
    // segment, trigram rows) may hold for seconds.
    let wrote = opts.full || report.parsed > 0 || report.deleted > 0 || report.touched > 0;
    if !wrote && store.meta("root_hash")?.as_deref() == Some(report.root_hash.as_str()) {
        return Ok((report, changed));
    }
    // A large run's journal is folded back by the pass writing its trigram rows after it.
    if !store.folds_later() {
        store.checkpoint()?;
    }
    report.stages.finish_ms = finishing.elapsed().as_millis() as u64;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    let saved = report.trimmed(200);
    let indexed_at = crate::base::time::now_rfc3339();
    store.set_meta(&[
        ("root_hash", &report.root_hash),
        ("last_indexed_at", &indexed_at),
        ("last_report", &serde_json::to_string(&saved).expect("report serializes")),
    ])?;
    Ok((report, changed))
}

/// Brings only `scope` up to date from `tree`, a survey of that scope: what the watcher
/// runs for a batch of changes. The report's `files` counts the files surveyed. With
/// `build_changed`, the changed files are built alongside for the ranking index.
pub(crate) fn run_part(
    root: &Path,
    store: &Store,
    mut tree: walk::Tree,
    scope: &Survey,
    opts: Options,
    progress: &Progress,
    build_changed: bool,
) -> Result<(IndexReport, Option<ChangedFiles>), StoreError> {
    let started = Instant::now();
    let _running = progress.start(started);
    let scoped: Vec<String> = scope.shallow.iter().chain(&scope.deep).cloned().collect();
    sort_out(root, &mut tree, &scoped, with_generated(store)?);
    let known = store.file_states_in(scope)?;
    let target = build_changed.then_some(Target::Changed);
    let (mut report, changed) = apply(store, tree, known, opts, progress, target, false)?;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok((report, changed))
}

/// Writes what differs between the walked `tree` and the `known` index rows of the same
/// part of the project; with a `target`, builds that alongside. `first`: the
/// index holds nothing yet, and a run of more than a few files writes the chunks before their
/// names index (see [`Store::pause_names_index`]).
fn apply(
    store: &Store,
    tree: walk::Tree,
    known: HashMap<String, crate::store::FileState>,
    opts: Options,
    progress: &Progress,
    target: Option<Target<'_>>,
    first: bool,
) -> Result<(IndexReport, Option<ChangedFiles>), StoreError> {
    let walk::Tree { files: walked, skipped, set_aside, dirs } = tree;
    let mut report = IndexReport { files: walked.len() as u64, skipped, set_aside, dirs, ..Default::default() };
    let mut writing = std::time::Duration::ZERO;
    let on_disk: HashSet<&str> = walked.iter().map(|w| w.rel.as_str()).collect();
    let mut deletes: Vec<String> = known.keys().filter(|p| !on_disk.contains(p.as_str())).cloned().collect();
    let todo: Vec<&walk::Walked> = walked
        .iter()
        .filter(|w| !known.get(&w.rel).is_some_and(|k| k.size == w.size && k.mtime_ns == w.mtime_ns))
        .collect();
    report.unchanged = (walked.len() - todo.len()) as u64;
    progress.total.store(todo.len() as u64, Ordering::SeqCst);
    progress.done.store(0, Ordering::SeqCst);

    let indexed_at = crate::base::time::now_rfc3339();
    let next = AtomicUsize::new(0);
    let inline_grams =
        todo.len() <= GRAMS_INLINE_FILES && todo.iter().map(|w| w.size).sum::<u64>() <= GRAMS_INLINE_BYTES;
    let names_paused = first && todo.len() > NAMES_LATER_FILES;
    if names_paused {
        store.pause_names_index()?;
    }
    // A run that leaves its trigram rows to the background pass leaves its journal to it too:
    // the pass folds the WAL back when it ends (as does the embedding pass), and a checkpoint
    // at the run's end (4-5 ms of hiredis's 61-file checkout) only did it first (see
    // [`Store::bulk_writes`]).
    if !inline_grams {
        store.bulk_writes()?;
    }
    let workers = crate::base::threads::cores().clamp(1, 16);
    let (tx, rx) = sync_channel::<(usize, Outcome)>(QUEUE_FILES);
    let written = std::thread::scope(|s| -> Result<Option<ChangedFiles>, StoreError> {
        for _ in 0..workers.min(todo.len().max(1)) {
            let tx = tx.clone();
            let (todo, next, known) = (&todo, &next, &known);
            s.spawn(move || {
                crate::base::threads::lower_priority();
                while !progress.cancelled.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(w) = todo.get(i) else { break };
                    let previous = known.get(&w.rel).map(|k| k.hash.as_str());
                    let packer = store.packer();
                    if tx.send((i, process(w, previous, opts.max_file_bytes, inline_grams, &packer))).is_err() {
                        break; // the writer failed
                    }
                }
            });
        }
        drop(tx);
        let to_read: u64 = todo.iter().map(|w| w.size).sum();
        let alongside =
            target.filter(|t| t.fits(to_read)).map(|target| alongside::Alongside::start(s, target, todo.len()));
        // This thread is the single writer.
        let mut batch = Vec::new();
        let mut positions = Vec::new();
        let mut nothing = Vec::new();
        let mut batch_bytes = 0;
        let mut commit =
            |batch: &mut Vec<FileWrite>, positions: &mut Vec<usize>, nothing: &mut Vec<usize>, deletes: &[String]| {
                let t = Instant::now();
                // The ranking builder takes the batch before its commit, and works through it
                // while SQLite commits.
                store.write_files(std::mem::take(batch), deletes, &indexed_at, |writes, ids| {
                    if let Some(a) = &alongside {
                        a.nothing(nothing);
                        a.written(std::mem::take(positions), writes, ids);
                    }
                })?;
                writing += t.elapsed();
                positions.clear();
                nothing.clear();
                Ok::<_, StoreError>(())
            };
        for (i, outcome) in rx {
            if progress.cancelled.load(Ordering::Relaxed) {
                return Err(StoreError::Cancelled);
            }
            progress.done.fetch_add(1, Ordering::Relaxed);
            let Some((write, bytes)) = record(&mut report, outcome, &known, &mut deletes) else {
                nothing.push(i);
                continue;
            };
            batch_bytes += bytes;
            batch.push(write);
            positions.push(i);
            if batch.len() >= BATCH_FILES || batch_bytes >= BATCH_BYTES {
                commit(&mut batch, &mut positions, &mut nothing, &[])?;
                batch_bytes = 0;
                // The batches, chunks and parse trees freed stay in glibc's arenas otherwise: on
                // a 36,000-file tree, 98 MB of free heap was resident 20 s into the run. A
                // ranking builder alongside frees the batches, and trims after them.
                if alongside.is_none() {
                    crate::base::memory::trim_after_work();
                }
            }
        }
        if !batch.is_empty() || !deletes.is_empty() {
            commit(&mut batch, &mut positions, &mut nothing, &deletes)?;
        } else if let Some(a) = &alongside {
            a.nothing(&nothing);
        }
        tracing::debug!(write_ms = writing.as_millis() as u64, files = todo.len(), "written");
        // Nothing else writes content while a run holds the project's index lock.
        let generation = store.content_generation();
        let t = Instant::now();
        let mut changed = None;
        match (alongside, target) {
            (Some(a), Some(Target::Base(dir))) => {
                if let Some(busy) = a.finish_base(generation, dir) {
                    report.stages.ranking_alongside_ms = busy.as_millis() as u64;
                    report.ranked_alongside = true;
                }
            }
            (Some(a), _) => {
                changed = a.finish_changed(generation).map(|(files, busy)| {
                    report.stages.ranking_alongside_ms = busy.as_millis() as u64;
                    files
                });
            }
            (None, _) => {}
        }
        report.stages.ranking_written_ms = t.elapsed().as_millis() as u64;
        // After the ranking base is written and its builder's memory given back: the two
        // together were the run's peak.
        if names_paused {
            let t = Instant::now();
            store.restore_names_index()?;
            writing += t.elapsed();
        }
        Ok(changed)
    });
    if names_paused && written.is_err() {
        // A run that failed (or was stopped) leaves the names index as it was; opening the
        // index makes it as well, should this fail too.
        let _ = store.restore_names_index();
    }
    let changed = written?;
    report.stages.write_ms = writing.as_millis() as u64;
    Ok((finished(report, deletes), changed))
}

/// The report with the files deleted counted among the changes, and its lists in path order.
fn finished(mut report: IndexReport, deletes: Vec<String>) -> IndexReport {
    report.deleted = deletes.len() as u64;
    report.changed.extend(deletes);
    report.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    report.set_aside.sort_by(|a, b| a.path.cmp(&b.path));
    report.set_aside_total = report.set_aside.len() as u64;
    for s in &report.set_aside {
        let kind = s.reason.split(" (").next().unwrap_or_default();
        *report.set_aside_kinds.entry(kind.to_owned()).or_default() += 1;
    }
    report.problems.sort_by(|a, b| a.path.cmp(&b.path));
    report
}

/// Counts one worker's outcome in the report; the file's write and its size when it has one.
/// A file skipped or set aside now but indexed before (the project's choice or its
/// attributes changed) leaves the index.
fn record(
    report: &mut IndexReport,
    outcome: Outcome,
    known: &HashMap<String, crate::store::FileState>,
    deletes: &mut Vec<String>,
) -> Option<(FileWrite, usize)> {
    if let Outcome::Skip(skip) | Outcome::SetAside(skip) = &outcome
        && known.contains_key(&skip.path)
    {
        deletes.push(skip.path.clone());
    }
    match outcome {
        Outcome::Skip(skip) => {
            report.skipped.push(skip);
            None
        }
        Outcome::SetAside(skip) => {
            report.set_aside.push(skip);
            None
        }
        Outcome::Write(write, bytes) => {
            match &write.chunks {
                None => report.touched += 1,
                Some(chunks) => {
                    report.parsed += 1;
                    report.changed.push(write.path.clone());
                    report.chunks_written += chunks.len() as u64;
                    report.bytes_parsed += bytes as u64;
                }
            }
            if let Some(p) = &write.problem {
                report.problems.push(Skipped { path: write.path.clone(), reason: p.clone() });
            }
            Some((*write, bytes))
        }
    }
}

impl Progress {
    /// How long the run has left at its pace so far; `None` until it has read some files.
    pub(crate) fn eta(&self) -> Option<std::time::Duration> {
        let (done, total) = (self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed));
        let started = (*self.started.lock().recover())?;
        (done > 0 && total >= done).then(|| started.elapsed().mul_f64((total - done) as f64 / done as f64))
    }

    /// Marks a run as going until the returned guard drops.
    pub(crate) fn start(&self, at: Instant) -> ResetOnDrop<'_> {
        self.total.store(0, Ordering::SeqCst);
        self.done.store(0, Ordering::SeqCst);
        self.rewriting_all.store(false, Ordering::SeqCst);
        self.running.store(true, Ordering::SeqCst);
        *self.started.lock().recover() = Some(at);
        ResetOnDrop(&self.running)
    }
}

pub(crate) struct ResetOnDrop<'a>(&'a AtomicBool);

impl Drop for ResetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file read past its limit is refused, whatever its size said; procfs files that report
    /// a size of 0 read as what they hold.
    #[test]
    fn reads_stop_one_byte_past_the_limit() {
        if let Ok(Some(status)) = crate::base::repo_file::read(Path::new("/proc/self/status"), 1 << 20) {
            assert!(!status.is_empty());
        }
    }

    /// A run that finds nothing to do answers at once, even while another connection holds
    /// the database's write lock (as the background work of the run before does for seconds:
    /// a ranking segment, trigram rows); a run with something to write waits for it.
    #[test]
    fn a_run_with_nothing_to_do_does_not_wait_for_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("a.py"), "def a():\n    return 1\n").unwrap();
        let store = Store::open(&dir.path().join("idx"), &root).unwrap();
        run(&root, &store, Options::default(), &Progress::default()).unwrap();
        let other = rusqlite::Connection::open(store.path()).unwrap();
        other.execute_batch("BEGIN IMMEDIATE; UPDATE meta SET value = value WHERE key = 'root_hash';").unwrap();
        let started = Instant::now();
        let report = run(&root, &store, Options::default(), &Progress::default()).unwrap();
        assert_eq!((report.parsed, report.unchanged), (0, 1));
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "waited {:?}", started.elapsed());
        other.execute_batch("COMMIT").unwrap();
    }

    /// An edit writes its trigram rows with its chunks; a run of few files but many bytes (a
    /// checkout of a small repository's large files) leaves them to the background pass.
    #[test]
    fn trigram_rows_wait_for_the_pass_when_a_run_holds_many_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir(&root).unwrap();
        let store = Store::open(&dir.path().join("idx"), &root).unwrap();
        std::fs::write(root.join("small.py"), "def a():\n    return 1\n").unwrap();
        run(&root, &store, Options::default(), &Progress::default()).unwrap();
        assert_eq!(store.grams_pending().unwrap(), 0, "an edit writes its rows");
        let body: String = (0..6_000).map(|i| format!("def f{i}():\n    return {i}\n\n")).collect();
        for name in ["b.py", "c.py"] {
            std::fs::write(root.join(name), &body).unwrap();
        }
        assert!(2 * body.len() as u64 > GRAMS_INLINE_BYTES);
        let report = run(&root, &store, Options::default(), &Progress::default()).unwrap();
        assert_eq!(report.parsed, 2);
        assert_eq!(store.grams_pending().unwrap(), 2, "two large files wait for the pass");
    }
}
