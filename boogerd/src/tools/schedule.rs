//! Who runs when: light calls are never queued behind heavy ones.
//!
//! Read-only calls are short and CPU-bound: at most one per core runs, first come first
//! served, rather than time-slicing twenty at once. Heavy calls (reading much of an index:
//! grep, tests-for, workspace-search, search-expand, git history) run on
//! their own slots (half the cores, at least one) so that a burst of them cannot take the
//! cores from `search` and `symbols`; and one session runs one heavy call at a time, so a
//! client that sends twenty does not take every heavy slot from the others. Writers (index,
//! projects, notes) take no slot.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Tools that may read much of an index, or run git over history. A grep the trigram index
/// narrows is quick too, but a stream of them (a 20-client load had a third of its calls grep)
/// would take the cores from search: with grep light, search's p95 rose from 14 to 279 ms.
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
];

/// What a running call holds; dropped when it ends.
pub struct Slot {
    _permits: Vec<OwnedSemaphorePermit>,
}

/// Waits for the call's turn: a light slot, or the session's heavy turn then a heavy slot.
pub async fn turn(tool: &str, read_only: bool, session: &str) -> Slot {
    if !read_only {
        return Slot { _permits: Vec::new() };
    }
    if !HEAVY.contains(&tool) {
        let light = slots(&LIGHT, cores()).acquire_owned().await.expect("never closed");
        return Slot { _permits: vec![light] };
    }
    let mine = session_turn(session).acquire_owned().await.expect("never closed");
    let heavy = slots(&HEAVY_SLOTS, (cores() / 2).max(1)).acquire_owned().await.expect("never closed");
    Slot { _permits: vec![heavy, mine] }
}

static LIGHT: OnceLock<Arc<Semaphore>> = OnceLock::new();
static HEAVY_SLOTS: OnceLock<Arc<Semaphore>> = OnceLock::new();

fn slots(cell: &'static OnceLock<Arc<Semaphore>>, n: usize) -> Arc<Semaphore> {
    cell.get_or_init(|| Arc::new(Semaphore::new(n))).clone()
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// One heavy call at a time per session. Entries no call holds are dropped as others come.
fn session_turn(session: &str) -> Arc<Semaphore> {
    static TURNS: OnceLock<Mutex<HashMap<String, Arc<Semaphore>>>> = OnceLock::new();
    let mut turns = TURNS.get_or_init(Mutex::default).lock().unwrap_or_else(|p| p.into_inner());
    turns.retain(|_, s| Arc::strong_count(s) > 1);
    turns.entry(session.to_owned()).or_insert_with(|| Arc::new(Semaphore::new(1))).clone()
}
