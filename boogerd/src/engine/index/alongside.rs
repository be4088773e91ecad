//! A first index's ranking index, built on its own thread while the files are written.
//!
//! Built after the run, from the store, the ranking index was the last serial stage of a
//! first index (a fifth of the Python standard library's, on one thread while every other
//! core waited; issue 63). During the run the written files are at hand: the writer hands
//! each committed batch (its chunks and the ids SQLite gave them) to this thread, which adds
//! them to a segment builder in path order, the order a build from the store adds them in,
//! so the base written at the end is the one that build would write.
//!
//! Files reach the writer in the order workers finish them, nearly the walk's path order;
//! those that arrive ahead of an earlier one wait here. If more than [`WAITING_BYTES`] of
//! text waits (one very slow file early in the tree), the builder gives up and the ranking
//! index is built from the store after the run, as before. A run that is cancelled or fails
//! leaves no base behind.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use crate::domain::search::ranking_index::RankingIndex;
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
pub(super) const MAX_BYTES: u64 = 256 << 20;
/// Text that may wait for an earlier file before the builder gives up.
const WAITING_BYTES: usize = 32 * 1024 * 1024;
/// Committed batches that may wait for the builder: the writer blocks past this, so a
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

/// Files by their position in the run (path order), each with what it adds (`None`: nothing,
/// as for a file skipped or set aside).
type Message = Vec<(usize, Option<Written>)>;

/// The writer's end: hands over what it committed.
pub(super) struct Alongside<'scope> {
    tx: SyncSender<Message>,
    builder: ScopedJoinHandle<'scope, Option<(Builder, Duration)>>,
}

impl<'scope> Alongside<'scope> {
    /// Starts the builder for a run of `files` files (positions `0..files` in path order),
    /// spilling into `dir`.
    pub(super) fn start(s: &'scope Scope<'scope, '_>, dir: &Path, files: usize) -> Self {
        let (tx, rx) = sync_channel::<Message>(QUEUE_BATCHES);
        let dir = dir.to_owned();
        let builder = s.spawn(move || build(rx, &dir, files));
        Self { tx, builder }
    }

    /// Files at these positions add nothing (skipped, set aside, or unchanged).
    pub(super) fn nothing(&self, positions: &[usize]) {
        if !positions.is_empty() {
            let _ = self.tx.send(positions.iter().map(|&i| (i, None)).collect());
        }
    }

    /// A committed batch: `writes` at `positions`, their chunks inserted as `ids` (in order).
    /// A batch whose ids do not account for its chunks (some were kept from before) makes
    /// the builder give up.
    pub(super) fn committed(&self, positions: &[usize], writes: Vec<FileWrite>, ids: &[i64]) {
        let expected: usize = writes.iter().filter_map(|w| w.chunks.as_ref()).map(Vec::len).sum();
        if expected != ids.len() {
            // No base is better than a wrong one: a position past the run's makes it give up.
            let _ = self.tx.send(vec![(usize::MAX, None)]);
            return;
        }
        let mut ids = ids.iter().copied();
        let files = positions
            .iter()
            .zip(writes)
            .map(|(&i, w)| {
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
        let _ = self.tx.send(files);
    }

    /// Waits for the builder and writes its base for the store's content `generation` into
    /// `dir`; how long the builder was busy, or `None` if it gave up (the ranking index is
    /// then built after the run).
    pub(super) fn finish(self, generation: u64, dir: &Path) -> Option<Duration> {
        drop(self.tx);
        let (b, busy) = self.builder.join().ok()??;
        match RankingIndex::write_base(b, generation, dir) {
            Ok(_) => Some(busy),
            Err(e) => {
                tracing::warn!(error = %e, "ranking index built alongside not written; building after the run");
                None
            }
        }
    }
}

/// The builder's thread: adds files in position order until every one of `files` is in.
fn build(rx: Receiver<Message>, dir: &Path, files: usize) -> Option<(Builder, Duration)> {
    let mut b = Builder::spilling_into(dir);
    let mut busy = Duration::ZERO;
    let mut waiting: BTreeMap<usize, Option<Written>> = BTreeMap::new();
    let mut waiting_bytes = 0usize;
    let mut next = 0usize;
    for message in rx.iter() {
        let started = Instant::now();
        for (i, file) in message {
            if i >= files {
                return None;
            }
            waiting_bytes += file.as_ref().map_or(0, text_bytes);
            waiting.insert(i, file);
        }
        while let Some(file) = waiting.remove(&next) {
            if let Some(file) = file {
                waiting_bytes -= text_bytes(&file);
                add(&mut b, file);
            }
            next += 1;
        }
        busy += started.elapsed();
        if waiting_bytes > WAITING_BYTES {
            tracing::debug!(waiting_bytes, "ranking index alongside: too far behind, left to after the run");
            return None;
        }
    }
    (next == files).then_some((b, busy))
}

fn text_bytes(f: &Written) -> usize {
    f.chunks.iter().map(|(_, _, words)| words.bytes()).sum()
}

/// One file's chunks, in the order a build from the store reads them (start, then id).
fn add(b: &mut Builder, mut f: Written) {
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
        b.add_words(&candidate, &words, &f.hash);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Options, Progress, run_ranked};
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
    /// writes afterwards; a later run, with an index to update, builds none alongside.
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

        let report = run_ranked(&root, &store, Options::default(), &Progress::default(), Some(&along)).unwrap();
        assert!(report.ranked_alongside);
        assert!(report.parsed > 1_000);
        RankingIndex::build(&store, &after).unwrap();
        let (built_alongside, built_after) = (base_in(&along), base_in(&after));
        assert_eq!(built_alongside.0, built_after.0, "the same content generation");
        assert!(built_alongside.1 == built_after.1, "the same bytes");

        std::fs::write(root.join("pkg0/new.py"), "def added():\n    return 1\n").unwrap();
        let report = run_ranked(&root, &store, Options::default(), &Progress::default(), Some(&along)).unwrap();
        assert_eq!(report.parsed, 1);
        assert!(!report.ranked_alongside);
    }

    fn written(path: &str, first_id: i64, text: &str) -> super::Written {
        let w = crate::store::testing::file_write(path, text, false);
        let chunks = w
            .chunks
            .unwrap()
            .into_iter()
            .enumerate()
            .map(|(k, c)| {
                let words = crate::store::words::ChunkWords::of(&c.name, &c.content);
                (first_id + k as i64, c, words)
            })
            .collect();
        super::Written { path: w.path, language: w.language, hash: w.hash, chunks }
    }

    /// Files that arrive ahead of an earlier one wait for it; a position past the run's (what
    /// a batch whose ids do not match its chunks sends) makes the builder give up.
    #[test]
    fn files_are_added_in_path_order_whatever_order_they_come_in() {
        let dir = tempfile::tempdir().unwrap();
        let texts = ["fn alpha() {}\n", "fn beta() {}\n", "fn gamma() {}\n"];
        let file = |i: usize| Some(written(&format!("f{i}.rs"), 10 * i as i64 + 1, texts[i]));
        let (tx, rx) = std::sync::mpsc::sync_channel(8);
        tx.send(vec![(2, file(2)), (3, None)]).unwrap();
        tx.send(vec![(0, file(0))]).unwrap();
        tx.send(vec![(1, file(1))]).unwrap();
        drop(tx);
        let (b, _) = super::build(rx, dir.path(), 4).expect("every file in");
        assert_eq!(b.held()[5], 3, "three chunks");

        let (tx, rx) = std::sync::mpsc::sync_channel(8);
        tx.send(vec![(0, file(0))]).unwrap();
        drop(tx);
        assert!(super::build(rx, dir.path(), 4).is_none(), "files missing");

        let (tx, rx) = std::sync::mpsc::sync_channel(8);
        tx.send(vec![(0, file(0)), (usize::MAX, None)]).unwrap();
        drop(tx);
        assert!(super::build(rx, dir.path(), 1).is_none(), "a batch that did not add up");
    }
}
