//! The daemon's one thread for derived data that a run leaves behind: ranking-index builds
//! and the trigram rows `grep` narrows by. A daemon starting with many projects does their
//! work one after another, not all in memory at once, and without a thread per project.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use super::ProjectHandle;
use crate::base::sync::Recover;
use crate::store::Store;

/// Files per transaction of a trigram pass: short enough that the watcher's writes and the
/// embedding pass's batches (the writer is taken in turn) interleave with it, long enough
/// that FTS5 does not make each trigram's entry again for a few files. The rows are made
/// before the writer is taken: on /usr/include 128 files hold it 119 ms (median; p90 309
/// ms), and the pass holds it 9.5 s in all against 13.6 s at 32 files a batch.
const GRAMS_BATCH: usize = 128;

pub(super) enum Job {
    /// Write a new base of the project's ranking index.
    Ranking(Arc<ProjectHandle>, Arc<Store>),
    /// Write the trigram rows a large run left pending.
    Grams(Arc<ProjectHandle>, Arc<Store>),
}

struct Queue {
    jobs: Mutex<VecDeque<Job>>,
    wake: Condvar,
}

pub(super) fn queue(job: Job) {
    let q = queue_thread();
    q.jobs.lock().recover().push_back(job);
    q.wake.notify_one();
}

fn queue_thread() -> &'static Queue {
    static QUEUE: OnceLock<&'static Queue> = OnceLock::new();
    QUEUE.get_or_init(|| {
        let q: &'static Queue = Box::leak(Box::new(Queue { jobs: Mutex::default(), wake: Condvar::new() }));
        std::thread::Builder::new()
            .name("booger-rank".to_owned())
            .spawn(move || {
                // Background work: a fresh clone's trigram pass took a core from the
                // answers its own daemon gave meanwhile.
                crate::base::threads::lower_priority();
                loop {
                    let job = {
                        let mut jobs = q.jobs.lock().recover();
                        loop {
                            if let Some(job) = jobs.pop_front() {
                                break job;
                            }
                            jobs = q.wake.wait(jobs).recover();
                        }
                    };
                    match job {
                        Job::Ranking(handle, store) => handle.build_ranking(&store),
                        Job::Grams(handle, store) => handle.fill_grams(&store),
                    }
                }
            })
            .expect("spawn the background thread");
        q
    })
}

impl ProjectHandle {
    /// After a run: if it left trigram rows to write, has the background thread write them.
    pub(super) fn grams_later(self: &Arc<Self>, store: &Arc<Store>) {
        if store.grams_pending().unwrap_or(0) == 0 || self.filling.swap(true, Ordering::SeqCst) {
            return;
        }
        queue(Job::Grams(Arc::clone(self), Arc::clone(store)));
    }

    /// Runs on the background thread, a batch at a time, until none are pending or the
    /// project closes.
    fn fill_grams(&self, store: &Store) {
        let started = std::time::Instant::now();
        let mut files = 0;
        while !self.is_closed() {
            match store.fill_grams(GRAMS_BATCH) {
                Ok(0) => break,
                Ok(n) => files += n,
                Err(_) if self.is_closed() => break,
                Err(e) => {
                    tracing::warn!(root = %self.root.display(), error = %e, "writing grep's trigram rows failed");
                    break;
                }
            }
        }
        tracing::debug!(root = %self.root.display(), files, ms = started.elapsed().as_millis() as u64, "trigram rows written");
        if files > 0 && !self.is_closed() {
            fold_wal(&self.root, store);
        }
        self.filling.store(false, Ordering::SeqCst);
    }
}

/// After a background pass: what it wrote is folded from the WAL back into the database now,
/// while nobody waits. Left there (2.1 MB after axum's passes), it waited for the next run,
/// whose commit SQLite makes fold it back once the WAL passes its limit, and kept the journal
/// on disk while the project sat idle.
pub(super) fn fold_wal(root: &std::path::Path, store: &Store) {
    if let Err(e) = store.checkpoint() {
        tracing::debug!(root = %root.display(), error = %e, "checkpoint after a background pass failed");
    }
}
