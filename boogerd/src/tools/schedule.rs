//! Who runs when: light calls are never queued behind heavy ones.
//!
//! Read-only calls are short and CPU-bound: at most one per core runs, first come first
//! served, rather than time-slicing twenty at once. Heavy calls (reading much of an index:
//! grep, tests-for, workspace-search, search-expand, git history) have slots of their own
//! and run on a pool of their own, one thread per core at a lower CPU priority: a burst of
//! them neither queues light calls nor takes the CPU from them. One session runs one heavy
//! call at a time, so a client that sends twenty does not take every heavy slot from the
//! others. Writers (index, projects, notes) take no slot.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::base::sync::Recover;

/// Tools that may read much of an index, or run git over history. A grep the trigram index
/// narrows takes 5-20 ms on the standard library, but one without a literal reads every
/// chunk (50-120 ms), and under a load of many clients even the quick ones add up: with the
/// narrowed ones light, `search`'s p95 rose from 6 to 178 ms (`cargo bench --bench grep`).
const HEAVY: &[&str] = &[
    "grep",
    "tests-for",
    "workspace-search",
    "search-expand",
    "branch-diff",
    "draft-commit",
    "changelog",
    "directory-summary",
    "changed-since",
    // Waits a few seconds for its background run before answering with progress.
    "eval",
];

/// What a running call holds; dropped when it ends.
pub(super) struct Slot {
    _permits: Vec<OwnedSemaphorePermit>,
    heavy: bool,
}

impl Slot {
    pub(super) fn is_heavy(&self) -> bool {
        self.heavy
    }

    /// Runs the call's work: a heavy call on the heavy pool, any other on tokio's blocking
    /// threads. `Err` says how the work panicked.
    pub(super) async fn run<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
        if !self.heavy {
            return tokio::task::spawn_blocking(work).await.map_err(|e| e.to_string());
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)));
        });
        heavy_pool().send(job).map_err(|e| e.to_string())?;
        match rx.await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(panic)) => Err(panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panicked".to_owned())),
            Err(e) => Err(e.to_string()),
        }
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The heavy pool: one thread per heavy slot, at a lower priority for good (see
/// [`crate::base::threads`]). Idle, its threads block on the queue and cost nothing.
fn heavy_pool() -> &'static std::sync::mpsc::Sender<Job> {
    static POOL: OnceLock<std::sync::mpsc::Sender<Job>> = OnceLock::new();
    POOL.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..heavy_slots() {
            let rx = Arc::clone(&rx);
            std::thread::Builder::new()
                .name(format!("booger-heavy-{i}"))
                .spawn(move || {
                    crate::base::threads::lower_priority();
                    loop {
                        let job = rx.lock().recover().recv();
                        match job {
                            Ok(job) => job(),
                            Err(_) => return,
                        }
                    }
                })
                .expect("spawn a heavy-call thread");
        }
        tx
    })
}

/// Waits for the call's turn: a light slot, or the session's heavy turn then a heavy slot.
pub(super) async fn turn(tool: &str, read_only: bool, session: &str) -> Slot {
    if !read_only {
        return Slot { _permits: Vec::new(), heavy: false };
    }
    if !HEAVY.contains(&tool) {
        let light = slots(&LIGHT, crate::base::threads::cores()).acquire_owned().await.expect("never closed");
        return Slot { _permits: vec![light], heavy: false };
    }
    let mine = session_turn(session).acquire_owned().await.expect("never closed");
    let heavy = slots(&HEAVY_SLOTS, heavy_slots()).acquire_owned().await.expect("never closed");
    Slot { _permits: vec![heavy, mine], heavy: true }
}

static LIGHT: OnceLock<Arc<Semaphore>> = OnceLock::new();
static HEAVY_SLOTS: OnceLock<Arc<Semaphore>> = OnceLock::new();

fn slots(cell: &'static OnceLock<Arc<Semaphore>>, n: usize) -> Arc<Semaphore> {
    cell.get_or_init(|| Arc::new(Semaphore::new(n))).clone()
}

/// Heavy calls at once: as many as cores, since their threads yield the CPU to light calls.
fn heavy_slots() -> usize {
    crate::base::threads::cores()
}

/// One heavy call at a time per session. Entries no call holds are dropped as others come.
fn session_turn(session: &str) -> Arc<Semaphore> {
    static TURNS: OnceLock<Mutex<HashMap<String, Arc<Semaphore>>>> = OnceLock::new();
    let mut turns = TURNS.get_or_init(Mutex::default).lock().recover();
    turns.retain(|_, s| Arc::strong_count(s) > 1);
    turns.entry(session.to_owned()).or_insert_with(|| Arc::new(Semaphore::new(1))).clone()
}
