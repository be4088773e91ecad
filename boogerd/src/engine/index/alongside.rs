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

/// What the writer hands over: files that add nothing (skipped, set aside, unchanged) at
/// their positions in the run (path order), or a committed batch: its files at their
/// positions, whose chunks were inserted as `ids`, in order. The batch goes over as the
/// writer had it: taking it apart (and freeing the chunks' texts, made by the workers) is the
/// builder's work, off the writer's thread, which is the run's one serial stage.
enum Message {
    Nothing(Vec<usize>),
    Committed { positions: Vec<usize>, writes: Vec<FileWrite>, ids: Vec<i64> },
}

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
            let _ = self.tx.send(Message::Nothing(positions.to_vec()));
        }
    }

    /// A committed batch: `writes` at `positions`, their chunks inserted as `ids` (in order).
    pub(super) fn committed(&self, positions: Vec<usize>, writes: Vec<FileWrite>, ids: Vec<i64>) {
        let _ = self.tx.send(Message::Committed { positions, writes, ids });
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
                add(&mut b, file);
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
/// account for its chunks (some were kept from before): no base is better than a wrong one.
fn arrived(message: Message) -> Option<Vec<(usize, Option<Written>)>> {
    let (positions, writes, ids) = match message {
        Message::Nothing(positions) => return Some(positions.into_iter().map(|i| (i, None)).collect()),
        Message::Committed { positions, writes, ids } => (positions, writes, ids),
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

    /// A batch of one file, committed with its chunks' ids from `first_id` on (`extra_ids`
    /// more than it has: a batch that does not add up).
    fn committed(position: usize, path: &str, first_id: i64, text: &str, extra_ids: usize) -> super::Message {
        let w = crate::store::testing::file_write(path, text, false);
        let n = w.chunks.as_ref().map_or(0, Vec::len) + extra_ids;
        let ids = (first_id..first_id + n as i64).collect();
        super::Message::Committed { positions: vec![position], writes: vec![w], ids }
    }

    /// Files that arrive ahead of an earlier one wait for it; a batch whose ids do not match
    /// its chunks makes the builder give up.
    #[test]
    fn files_are_added_in_path_order_whatever_order_they_come_in() {
        let dir = tempfile::tempdir().unwrap();
        let texts = ["fn alpha() {}\n", "fn beta() {}\n", "fn gamma() {}\n"];
        let file = |i: usize| committed(i, &format!("f{i}.rs"), 10 * i as i64 + 1, texts[i], 0);
        let (tx, rx) = std::sync::mpsc::sync_channel(8);
        tx.send(file(2)).unwrap();
        tx.send(super::Message::Nothing(vec![3])).unwrap();
        tx.send(file(0)).unwrap();
        tx.send(file(1)).unwrap();
        drop(tx);
        let (b, _) = super::build(rx, dir.path(), 4).expect("every file in");
        assert_eq!(b.held()[5], 3, "three chunks");

        let (tx, rx) = std::sync::mpsc::sync_channel(8);
        tx.send(file(0)).unwrap();
        drop(tx);
        assert!(super::build(rx, dir.path(), 4).is_none(), "files missing");

        let (tx, rx) = std::sync::mpsc::sync_channel(8);
        tx.send(committed(0, "f0.rs", 1, texts[0], 1)).unwrap();
        drop(tx);
        assert!(super::build(rx, dir.path(), 1).is_none(), "a batch that did not add up");
    }
}
