//! A segment built from the store on two threads: one reads the chunks in order (SQLite, the
//! compressed texts, each chunk's split identifiers), the other adds them to the builder.
//! A checkout's re-index brings the ranking index up to date with a segment of the files it
//! changed while the caller waits (axum, 242 files: 47 ms of a 233 ms call).

use std::sync::mpsc;

use super::Builder;
use crate::store::search::{Candidate, ScanSink};
use crate::store::{StoreError, words};

/// Chunks a message: the channel's cost stays small beside the work on either side.
const BATCH: usize = 256;
/// Batches in flight: the reader runs ahead by at most this many.
const IN_FLIGHT: usize = 4;

/// One chunk as the builder takes it.
struct Prepared {
    candidate: Candidate,
    content: String,
    /// Its split identifiers ([`words::words_for`]).
    split: String,
    hash: String,
}

enum Message {
    Sizes(usize, usize),
    Chunks(Vec<Prepared>),
}

/// The reader's side: what a scan of the store hands on, in batches of prepared chunks.
struct Sending {
    to: mpsc::SyncSender<Message>,
    batch: Vec<Prepared>,
}

impl Sending {
    fn flush(&mut self) {
        if !self.batch.is_empty() {
            // The builder's side reads until the reader is done: a send fails only if it
            // panicked, which the join reports.
            let _ = self.to.send(Message::Chunks(std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH))));
        }
    }
}

impl ScanSink for Sending {
    fn sizes(&mut self, chunks: usize, files: usize) {
        let _ = self.to.send(Message::Sizes(chunks, files));
    }

    fn chunk(&mut self, c: &Candidate, content: &str, hash: &str) {
        self.batch.push(Prepared {
            candidate: c.clone(),
            content: content.to_owned(),
            split: words::words_for(&c.name, content),
            hash: hash.to_owned(),
        });
        if self.batch.len() == BATCH {
            self.flush();
        }
    }
}

/// Runs `scan` on a thread of its own and adds what it hands on to `b`, in its order; what
/// `scan` returns. With one core `b` takes the chunks itself.
pub(crate) fn scan_into<T: Send>(
    b: &mut Builder,
    scan: impl FnOnce(&mut dyn ScanSink) -> Result<T, StoreError> + Send,
) -> Result<T, StoreError> {
    if crate::base::threads::cores() < 2 {
        return scan(b);
    }
    let (to, from) = mpsc::sync_channel(IN_FLIGHT);
    std::thread::scope(|s| {
        let reader = std::thread::Builder::new()
            .name("booger-scan".to_owned())
            .spawn_scoped(s, move || {
                let mut sending = Sending { to, batch: Vec::with_capacity(BATCH) };
                let found = scan(&mut sending);
                sending.flush();
                found
            })
            .expect("spawn the scan thread");
        for message in from {
            match message {
                Message::Sizes(chunks, files) => b.sizes(chunks, files),
                Message::Chunks(batch) => {
                    for p in batch {
                        b.add_text(&p.candidate, &p.content, &p.split, &p.hash);
                    }
                }
            }
        }
        reader.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
