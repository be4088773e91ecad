//! The ranking index's part for a run's files, built on its own thread while they are written.
//!
//! Built after the run, from the store, the ranking index was the last serial stage of a
//! first index (a fifth of the Python standard library's, on one thread while every other
//! core waited; issue 63), and a checkout's delta was read back after its writes (27-47 ms
//! of a re-index of axum). During the run the written files are at hand: the writer hands
//! each batch (its chunks and their ids, new or kept) to this thread once its rows are in,
//! and commits it meanwhile; the builder adds them to a segment in path order, the order a
//! build from the store adds them in, so what it makes is what that build would: a first
//! index's base, written at the end, or a later run's changed files, the segment the index
//! held in memory takes as its delta.
//!
//! Files reach the writer in the order workers finish them, nearly the walk's path order;
//! those that arrive ahead of an earlier one wait here. If more than [`WAITING_BYTES`] of
//! text waits (one very slow file early in the tree), the builder gives up and the ranking
//! index is built (or brought up to date) from the store after the run, as before. A run
//! that is cancelled or fails leaves nothing behind.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use crate::domain::search::ranking_index::{ChangedFiles, RankingIndex};
use crate::domain::search::segment::Builder;
use crate::source::chunk::Chunk;
use crate::store::FileWrite;
use crate::store::search::Candidate;
use crate::store::words::ChunkWords;

/// The largest first index (bytes of files to read) built alongside. The builder's term
/// tables grow with the tree (1.2 million distinct words in a 36,000-file tree of C headers,
/// Rust and Python, 549 MB: about 100 MB), and beside a run's own memory they took that
/// tree's peak from 202 MB to 279 MB (the daemon's budget is 250 MB); a larger run builds its
/// ranking index after the writes, once their memory is freed, as before.
const MAX_BASE_BYTES: u64 = 256 << 20;
/// The largest later run built alongside: its part is built in memory (a base spills), as
/// the read after the run builds it, but beside the run's own memory.
const MAX_CHANGED_BYTES: u64 = 64 << 20;
/// Text that may wait for an earlier file before the builder gives up.
const WAITING_BYTES: usize = 32 * 1024 * 1024;
/// Written batches that may wait for the builder: the writer blocks past this, so a
/// builder slower than the writer bounds what is held rather than falling behind without end.
const QUEUE_BATCHES: usize = 4;

/// One file of the run as the builder needs it: its chunks with their ids.
struct Written {
    path: String,
    language: String,
    hash: String,
    /// Each chunk with its id and its words (made by the worker that chunked it); the
    /// chunk's text is not kept: the builder reads its words.
    chunks: Vec<(i64, Chunk, ChunkWords)>,
}

/// What the writer hands over: files that add nothing (skipped, set aside, unchanged) at
/// their positions in the run (path order), or a written batch: its files at their
/// positions, whose chunks were inserted as `ids`, in order. The batch goes over as the
/// writer had it: taking it apart (and freeing the chunks' texts, made by the workers) is the
/// builder's work, off the writer's thread, which is the run's one serial stage.
enum Message {
    Nothing(Vec<usize>),
    Written { positions: Vec<usize>, writes: Vec<FileWrite>, ids: Vec<i64> },
}

/// What a run builds alongside its writes.
#[derive(Clone, Copy)]
pub(crate) enum Target<'a> {
    /// A first index's base, written into this directory (its build spills there).
    Base(&'a Path),
    /// A later run's changed files, in memory: the ranking index held in memory takes them
    /// as its delta (see [`RankingIndex::updated`]).
    Changed,
}

/// The writer's end: hands over what it wrote.
pub(super) struct Alongside<'scope> {
    tx: SyncSender<Message>,
    builder: ScopedJoinHandle<'scope, Option<(Builder, Duration)>>,
}

impl Target<'_> {
    /// Whether a run reading `bytes` of files builds this alongside.
    pub(super) fn fits(&self, bytes: u64) -> bool {
        bytes <= if matches!(self, Target::Base(_)) { MAX_BASE_BYTES } else { MAX_CHANGED_BYTES }
    }
}

impl<'scope> Alongside<'scope> {
    /// Starts the builder for a run of `files` files (positions `0..files` in path order).
    pub(super) fn start(s: &'scope Scope<'scope, '_>, target: Target<'_>, files: usize) -> Self {
        let (tx, rx) = sync_channel::<Message>(QUEUE_BATCHES);
        // A base keeps each file's content hash (what a later start checks it against); a
        // part held in memory is made as a read from the store makes it, without.
        let (b, hashed) = match target {
            Target::Base(dir) => (Builder::spilling_into(dir), true),
            Target::Changed => (Builder::default(), false),
        };
        let builder = s.spawn(move || build(rx, b, hashed, files));
        Self { tx, builder }
    }

    /// Files at these positions add nothing (skipped, set aside, or unchanged).
    pub(super) fn nothing(&self, positions: &[usize]) {
        if !positions.is_empty() {
            let _ = self.tx.send(Message::Nothing(positions.to_vec()));
        }
    }

    /// A written batch (being committed): `writes` at `positions`, their chunks' ids `ids`
    /// (in order).
    pub(super) fn written(&self, positions: Vec<usize>, writes: Vec<FileWrite>, ids: Vec<i64>) {
        let _ = self.tx.send(Message::Written { positions, writes, ids });
    }

    /// Waits for the builder and writes its base for the store's content `generation` into
    /// `dir`; how long the builder was busy, or `None` if it gave up (the ranking index is
    /// then built after the run).
    pub(super) fn finish_base(self, generation: u64, dir: &Path) -> Option<Duration> {
        let (b, busy) = self.finished()?;
        match RankingIndex::write_base(b, generation, dir) {
            Ok(_) => Some(busy),
            Err(e) => {
                tracing::warn!(error = %e, "ranking index built alongside not written; building after the run");
                None
            }
        }
    }

    /// Waits for the builder: the changed files for the store's content `generation`, and
    /// how long the builder was busy; `None` if it gave up (they are read from the store).
    pub(super) fn finish_changed(self, generation: u64) -> Option<(ChangedFiles, Duration)> {
        let (b, busy) = self.finished()?;
        ChangedFiles::built(b, generation).ok().map(|c| (c, busy))
    }

    fn finished(self) -> Option<(Builder, Duration)> {
        drop(self.tx);
        self.builder.join().ok()?
    }
}

/// The builder's thread: adds files in position order until every one of `files` is in;
/// `hashed`: with each file's content hash.
fn build(rx: Receiver<Message>, mut b: Builder, hashed: bool, files: usize) -> Option<(Builder, Duration)> {
    let mut busy = Duration::ZERO;
    let mut waiting: BTreeMap<usize, Option<Written>> = BTreeMap::new();
    let mut waiting_bytes = 0usize;
    let mut next = 0usize;
    for message in rx.iter() {
        let started = Instant::now();
        for (i, file) in arrived(message)? {
            if i >= files {
                return None;
            }
            waiting_bytes += file.as_ref().map_or(0, text_bytes);
            waiting.insert(i, file);
        }
        while let Some(file) = waiting.remove(&next) {
            if let Some(file) = file {
                waiting_bytes -= text_bytes(&file);
                add(&mut b, file, hashed);
            }
            next += 1;
        }
        // The batch's chunks, made by the workers, are freed here: see `trim_after_work`.
        crate::base::memory::trim_after_work();
        busy += started.elapsed();
        if waiting_bytes > WAITING_BYTES {
            tracing::debug!(waiting_bytes, "ranking index alongside: too far behind, left to after the run");
            return None;
        }
    }
    (next == files).then_some((b, busy))
}

/// The files a message brings, at their positions; `None` for a batch whose ids do not
/// account for its chunks: nothing is better than a wrong part.
fn arrived(message: Message) -> Option<Vec<(usize, Option<Written>)>> {
    let (positions, writes, ids) = match message {
        Message::Nothing(positions) => return Some(positions.into_iter().map(|i| (i, None)).collect()),
        Message::Written { positions, writes, ids } => (positions, writes, ids),
    };
    let expected: usize = writes.iter().filter_map(|w| w.chunks.as_ref()).map(Vec::len).sum();
    if expected != ids.len() {
        return None;
    }
    let mut ids = ids.into_iter();
    let files = positions
        .into_iter()
        .zip(writes)
        .map(|(i, w)| {
            let mut words = w.words.unwrap_or_default().into_iter();
            let file = w.chunks.map(|chunks| Written {
                // The chunks first: zip stops at the end of the first without taking from the second.
                chunks: chunks
                    .into_iter()
                    .zip(ids.by_ref())
                    .map(|(mut c, id)| {
                        let words = words.next().unwrap_or_else(|| ChunkWords::of(&c.name, &c.content));
                        c.content = String::new();
                        (id, c, words)
                    })
                    .collect(),
                path: w.path,
                language: w.language,
                hash: w.hash,
            });
            (i, file)
        })
        .collect();
    Some(files)
}

fn text_bytes(f: &Written) -> usize {
    f.chunks.iter().map(|(_, _, words)| words.bytes()).sum()
}

/// One file's chunks, in the order a build from the store reads them (start, then id).
fn add(b: &mut Builder, mut f: Written, hashed: bool) {
    let hash = if hashed { f.hash.as_str() } else { "" };
    f.chunks.sort_by_key(|(id, c, _)| (c.start_byte, *id));
    for (id, c, words) in f.chunks {
        let candidate = Candidate {
            id,
            path: f.path.clone(),
            language: f.language.clone(),
            kind: c.kind,
            name: c.name,
            signature: String::new(),
            parent: c.parent,
            start_line: c.start_line,
            end_line: c.end_line,
            bytes: c.end_byte - c.start_byte,
            bm25: 0.0,
        };
        b.add_words(&candidate, &words, hash);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Options, Progress, Ranking, run_ranked};
    use super::Builder;
    use crate::domain::search::ranking_index::RankingIndex;
    use crate::store::Store;

    /// The one base file in `dir`: its name and bytes.
    fn base_in(dir: &std::path::Path) -> (String, Vec<u8>) {
        let mut bases: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".seg"))
            .collect();
        assert_eq!(bases.len(), 1, "one base in {}", dir.display());
        let e = bases.pop().unwrap();
        (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
    }

    /// A first index's base, built while its files were written (over several batches, with
    /// files that add nothing among them), is byte for byte the base a build from the store
    /// writes afterwards; a later run builds no base, nor its changed files unless asked.
    #[test]
    fn the_base_built_alongside_is_the_one_built_from_the_store() {
        let mut texts: Vec<(String, String)> = (0..1_100)
            .map(|i| {
                let text = format!(
                    "def handler_{i}(request):\n    \"\"\"Answer request {i}.\"\"\"\n    return route_{}(request)\n\n\nclass Store{i}:\n    def get(self, key):\n        return self.items[key] + {i}\n",
                    i % 7
                );
                (format!("pkg{}/mod_{i:04}.py", i % 13), text)
            })
            .collect();
        texts.push(("empty.py".into(), String::new()));
        texts.push(("data.bin".into(), "\0\0\0binary".into()));
        let files: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let (dir, root, index) = crate::store::testing::project(&files);
        let store = Store::open(&index, &root).unwrap();
        let (along, after) = (dir.path().join("along"), dir.path().join("after"));
        std::fs::create_dir_all(&along).unwrap();
        std::fs::create_dir_all(&after).unwrap();

        let base = Ranking { base_dir: Some(&along), changed: false };
        let (report, _) = run_ranked(&root, &store, Options::default(), &Progress::default(), base).unwrap();
        assert!(report.ranked_alongside);
        assert!(report.parsed > 1_000);
        RankingIndex::build(&store, &after).unwrap();
        let (built_alongside, built_after) = (base_in(&along), base_in(&after));
        assert_eq!(built_alongside.0, built_after.0, "the same content generation");
        assert!(built_alongside.1 == built_after.1, "the same bytes");

        std::fs::write(root.join("pkg0/new.py"), "def added():\n    return 1\n").unwrap();
        let (report, changed) = run_ranked(&root, &store, Options::default(), &Progress::default(), base).unwrap();
        assert_eq!(report.parsed, 1);
        assert!(!report.ranked_alongside);
        assert!(changed.is_none(), "not asked for");
    }

    /// What a ranking index ranks for a few queries: chunk ids and scores (in that order:
    /// chunks that tie are taken in the order of the parts that hold them).
    fn ranked(p: &RankingIndex) -> Vec<Vec<(i64, i64)>> {
        let filters = crate::store::search::Filters::default();
        ["handler request", "route", "store items key", "renamed value", "added"]
            .iter()
            .map(|q| {
                let words: Vec<(String, f64)> = q.split(' ').map(|w| (w.to_owned(), 1.0)).collect();
                let hits = p.rank(&words, &filters, 1_000);
                let mut hits: Vec<(i64, i64)> =
                    hits.iter().map(|(c, _)| (c.id, (c.bm25 * 1e6).round() as i64)).collect();
                hits.sort_by_key(|&(id, score)| (score, id));
                hits
            })
            .collect()
    }

    /// A later run's changed files, built while they were written (a checkout's rewrites,
    /// whose unchanged chunks keep their old ids, deletions and new files), are what the held
    /// index would read back from the store: updated from either, it ranks the same chunks
    /// the same, as a rebuilt index does; and again for a small run after it.
    #[test]
    fn changed_files_built_alongside_are_what_the_store_holds() {
        let text = |i: usize, word: &str| {
            format!(
                "def handler_{i}(request):\n    return route_{}(request)\n\n\nclass Store{i}:\n    def get(self, key):\n        return self.items[key] + {i}  # {word} value\n",
                i % 7
            )
        };
        let texts: Vec<(String, String)> = (0..120).map(|i| (format!("m/f{i:03}.py"), text(i, "first"))).collect();
        let files: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let (dir, root, index) = crate::store::testing::project(&files);
        let store = Store::open(&index, &root).unwrap();
        let progress = Progress::default();
        run_ranked(&root, &store, Options::default(), &progress, Ranking::default()).unwrap();
        let held = RankingIndex::build(&store, dir.path()).unwrap();

        // A checkout: 80 files rewritten (their handlers kept, moved down two lines), two
        // deleted, three added.
        for i in 0..80 {
            std::fs::write(root.join(format!("m/f{i:03}.py")), format!("\n\n{}", text(i, "renamed"))).unwrap();
        }
        for i in [100, 101] {
            std::fs::remove_file(root.join(format!("m/f{i:03}.py"))).unwrap();
        }
        for i in 200..203 {
            std::fs::write(root.join(format!("m/f{i:03}.py")), format!("def added_{i}():\n    return {i}\n")).unwrap();
        }
        let changed_only = Ranking { base_dir: None, changed: true };
        let (report, built) = run_ranked(&root, &store, Options::default(), &progress, changed_only).unwrap();
        assert_eq!((report.parsed, report.deleted), (83, 2));
        let built = built.expect("built alongside");
        let from_built = held.updated(&store, &report.changed, Some(built)).unwrap();
        let from_store = held.updated(&store, &report.changed, None).unwrap();
        let rebuilt = RankingIndex::build(&store, dir.path()).unwrap();
        assert_eq!(ranked(&from_built), ranked(&from_store));
        assert_eq!(ranked(&from_built), ranked(&rebuilt));
        assert!(ranked(&rebuilt).iter().all(|hits| !hits.is_empty()));

        // One file more, into the recent part, over the delta just taken.
        std::fs::write(root.join("m/f110.py"), text(110, "renamed")).unwrap();
        let (report, built) = run_ranked(&root, &store, Options::default(), &progress, changed_only).unwrap();
        assert_eq!(report.parsed, 1);
        let next = from_built.updated(&store, &report.changed, built).unwrap();
        let rebuilt = RankingIndex::build(&store, dir.path()).unwrap();
        assert_eq!(ranked(&next), ranked(&rebuilt));

        // Files built by a run that another run wrote over before they were taken (a
        // watcher's batch is taken after its run): read from the store instead.
        std::fs::write(root.join("m/f111.py"), text(111, "renamed")).unwrap();
        let (first, stale) = run_ranked(&root, &store, Options::default(), &progress, changed_only).unwrap();
        std::fs::write(root.join("m/f111.py"), format!("def added_again():\n    return {}\n", 111)).unwrap();
        let (second, _) = run_ranked(&root, &store, Options::default(), &progress, Ranking::default()).unwrap();
        // Taken by the index before the one-file run, whose recent part is empty.
        let changed: Vec<String> =
            report.changed.iter().chain(&first.changed).chain(&second.changed).cloned().collect();
        let last = from_built.updated(&store, &changed, stale).unwrap();
        let rebuilt = RankingIndex::build(&store, dir.path()).unwrap();
        assert_eq!(ranked(&last), ranked(&rebuilt));
    }

    /// A batch of one file, written with its chunks' ids from `first_id` on (`extra_ids`
    /// more than it has: a batch that does not add up).
    fn written(position: usize, path: &str, first_id: i64, text: &str, extra_ids: usize) -> super::Message {
        let w = crate::store::testing::file_write(path, text, false);
        let n = w.chunks.as_ref().map_or(0, Vec::len) + extra_ids;
        let ids = (first_id..first_id + n as i64).collect();
        super::Message::Written { positions: vec![position], writes: vec![w], ids }
    }

    /// Files that arrive ahead of an earlier one wait for it; a batch whose ids do not match
    /// its chunks makes the builder give up.
    #[test]
    fn files_are_added_in_path_order_whatever_order_they_come_in() {
        let dir = tempfile::tempdir().unwrap();
        let texts = ["fn alpha() {}\n", "fn beta() {}\n", "fn gamma() {}\n"];
        let file = |i: usize| written(i, &format!("f{i}.rs"), 10 * i as i64 + 1, texts[i], 0);
        let (tx, rx) = std::sync::mpsc::sync_channel(8);
        tx.send(file(2)).unwrap();
        tx.send(super::Message::Nothing(vec![3])).unwrap();
        tx.send(file(0)).unwrap();
        tx.send(file(1)).unwrap();
        drop(tx);
        let (b, _) = super::build(rx, Builder::spilling_into(dir.path()), true, 4).expect("every file in");
        assert_eq!(b.held()[5], 3, "three chunks");

        let (tx, rx) = std::sync::mpsc::sync_channel(8);
        tx.send(file(0)).unwrap();
        drop(tx);
        assert!(super::build(rx, Builder::spilling_into(dir.path()), true, 4).is_none(), "files missing");

        let (tx, rx) = std::sync::mpsc::sync_channel(8);
        tx.send(written(0, "f0.rs", 1, texts[0], 1)).unwrap();
        drop(tx);
        assert!(super::build(rx, Builder::spilling_into(dir.path()), true, 1).is_none(), "a batch that did not add up");
    }
}
