//! Keeping every registered project's index in step with its files.
//!
//! ```text
//! inotify ──▶ event handler ──▶ Live (per project): dirty directories, pending paths
//!                                   │  quiet for 25 ms, or waited 500 ms, or a query waits
//!                                   ▼
//!                      followers (two threads for all projects): survey dirty directories with the
//!                      walker, index what differs in one run, update the ranking index,
//!                      watch new directories, drop vanished ones
//! ```
//!
//! One notify watcher (one inotify instance) serves every project. Directories are watched
//! one by one, non-recursively: exactly the directories the walker keeps, so ignored trees
//! (`target/`, `node_modules/`, `.git/`) cost neither watches nor events.
//!
//! An event never says what to index; it marks its directory dirty. The follower re-surveys
//! dirty directories with the same walker and the same size+mtime+hash checks as a full run,
//! so merged, reordered or lost events inside a watched directory are harmless, a gitignored
//! file is judged by the same rules whenever it appears, and a burst of thousands of writes
//! (a branch switch) becomes a handful of batches. What events cannot cover (a queue
//! overflow, the watch limit, no watcher at all) falls back to whole re-walks, and says so in
//! `status`.
//!
//! The debouncer crate is not used: it stitches single-file events (renames) that this design
//! does not need, and it holds events back, which would hide pending changes from the
//! read-your-writes wait.

mod follow;
#[cfg(target_os = "linux")]
mod linux;
// notify's watcher, where there is no inotify source of booger's own (not built on Linux).
#[cfg(not(target_os = "linux"))]
mod portable;
mod resurvey;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

#[cfg(target_os = "linux")]
use linux::Source;
#[cfg(not(target_os = "linux"))]
use portable::Source;

use crate::base::sync::Recover;
use crate::engine::index;
pub(crate) use crate::engine::live::Timing;
use crate::engine::live::WatchState;
use crate::engine::project::ProjectHandle;

type Routes = RwLock<Vec<(PathBuf, Arc<ProjectHandle>)>>;

/// What an event source reports.
pub(crate) enum Signal<'a> {
    /// Something at this path (absolute) changed.
    Changed(&'a Path),
    /// The OS dropped events; those lost happened after `since`.
    Overflow { since: SystemTime },
}

/// Why a directory could not be watched.
pub(crate) enum Refused {
    /// Gone between the walk and now: its parent's survey notices.
    Gone,
    /// The OS limit on watches.
    Limit,
    Other(String),
}

/// Events received and queue overflows, for `status`.
#[derive(Default)]
pub(crate) struct Counters {
    pub events: AtomicU64,
    pub overflows: AtomicU64,
}

pub(crate) struct Watcher {
    /// `None` when the OS refused a watcher (e.g. no inotify instances left) or watching is
    /// off: every project is then re-walked on a timer (or by `booger index`).
    source: Option<Arc<Source>>,
    unavailable: Option<String>,
    /// Watching was turned off (`--no-watch`).
    manual: bool,
    /// Which project each event belongs to (nested projects both get it).
    routes: Arc<Routes>,
    /// Watched directories, counted per project that needs them.
    watched: Mutex<HashMap<PathBuf, u32>>,
    /// At most this many directories are watched in total.
    budget: usize,
    pub timing: Timing,
    defaults: index::Options,
    pub counters: Arc<Counters>,
    /// One whole-project walk at a time across projects, so a daemon starting with many
    /// projects does not parse them all at once.
    whole_runs: Mutex<()>,
    /// The projects followed and the fixed pool of threads that apply their changes.
    followers: Arc<follow::Followers>,
}

impl Watcher {
    pub(crate) fn new(defaults: index::Options, budget: usize, timing: Timing, enabled: bool) -> Arc<Self> {
        let routes: Arc<Routes> = Arc::default();
        let counters: Arc<Counters> = Arc::default();
        let handler_routes = Arc::clone(&routes);
        let made = if enabled {
            Source::new(Box::new(move |signal| on_signal(&handler_routes, signal)), Arc::clone(&counters)).map(Some)
        } else {
            Ok(None)
        };
        let (source, unavailable) = match made {
            Ok(s) => (s, None),
            Err(e) => {
                tracing::error!(error = %e, "file watching is unavailable; projects will be re-walked periodically");
                (None, Some(format!("file watching is unavailable ({e}); re-walked periodically")))
            }
        };
        let me = Arc::new(Self {
            source,
            unavailable,
            manual: !enabled,
            routes,
            watched: Mutex::default(),
            budget,
            timing,
            defaults,
            counters,
            whole_runs: Mutex::new(()),
            followers: Arc::default(),
        });
        follow::Followers::start(&me);
        me
    }

    /// Starts following a project: a whole reconcile with the disk, then watching. Calling it
    /// again for a followed project asks for a whole re-walk instead. `just_indexed`: the
    /// caller ran a whole run a moment ago, so without watching there is nothing to do.
    pub(crate) fn follow(self: &Arc<Self>, handle: Arc<ProjectHandle>, just_indexed: bool) {
        let reconcile = !(just_indexed && self.manual);
        {
            let mut routes = self.routes.write().recover();
            if routes.iter().any(|(r, _)| *r == handle.root) {
                drop(routes);
                if reconcile {
                    handle.live.request_whole();
                }
                return;
            }
            routes.push((handle.root.clone(), Arc::clone(&handle)));
        }
        handle.live.set_link(Arc::new(Link { followers: Arc::clone(&self.followers), source: self.source.clone() }));
        if reconcile {
            handle.live.set_mode(WatchState::Starting, None);
            handle.live.request_whole();
        } else {
            handle.live.set_mode(WatchState::Manual, None);
        }
        self.followers.add(handle);
    }

    /// Stops following a project (removed from the registry); its index stays on disk.
    pub(crate) fn unfollow(&self, root: &Path) {
        let mut routes = self.routes.write().recover();
        if let Some(i) = routes.iter().position(|(r, _)| r == root) {
            let (_, handle) = routes.remove(i);
            handle.live.stop();
        }
    }

    /// Watches `dirs` (absolute). Returns those that could not be watched (the budget or the
    /// OS limit was reached, or no watcher), and the first unexpected error.
    fn watch(&self, dirs: &[PathBuf]) -> (Vec<PathBuf>, Option<String>) {
        let Some(source) = &self.source else {
            return if self.manual { (Vec::new(), None) } else { (dirs.to_vec(), self.unavailable.clone()) };
        };
        let mut watched = self.watched.lock().recover();
        let mut refused = Vec::new();
        let mut other = None;
        for d in dirs {
            if let Some(n) = watched.get_mut(d) {
                *n += 1;
                continue;
            }
            if watched.len() >= self.budget {
                refused.push(d.clone());
                continue;
            }
            match source.watch(d) {
                Ok(()) => {
                    watched.insert(d.clone(), 1);
                }
                Err(Refused::Gone) => {}
                Err(Refused::Limit) => refused.push(d.clone()),
                Err(Refused::Other(e)) => {
                    other.get_or_insert_with(|| format!("cannot watch {}: {e}", d.display()));
                    refused.push(d.clone());
                }
            }
        }
        (refused, other)
    }

    fn unwatch(&self, dirs: &[PathBuf]) {
        let mut watched = self.watched.lock().recover();
        for d in dirs {
            match watched.get_mut(d) {
                Some(n) if *n > 1 => *n -= 1,
                Some(_) => {
                    watched.remove(d);
                    if let Some(s) = &self.source {
                        s.unwatch(d);
                    }
                }
                None => {}
            }
        }
    }

    /// Directories watched across all projects.
    pub(crate) fn watched_total(&self) -> usize {
        self.watched.lock().recover().len()
    }

    pub(crate) fn budget(&self) -> usize {
        self.budget
    }
}

/// What a project's live state needs from the watcher: to wake the followers, and to read
/// the events the OS holds before a query decides what is pending.
struct Link {
    followers: Arc<follow::Followers>,
    source: Option<Arc<Source>>,
}

impl crate::engine::live::Link for Link {
    fn wake(&self) {
        crate::engine::live::Link::wake(&*self.followers);
    }

    fn drain(&self) {
        if let Some(s) = &self.source {
            s.drain();
        }
    }
}

/// Runs for every event (on the reader's thread or a draining query's): route it to its
/// project(s), nothing more.
fn on_signal(routes: &Routes, signal: Signal<'_>) {
    let routes = routes.read().recover();
    match signal {
        Signal::Overflow { since } => {
            tracing::warn!("the OS dropped file events (queue overflow); re-surveying what changed since");
            for (_, handle) in routes.iter() {
                handle.live.overflowed(since);
            }
        }
        Signal::Changed(path) => {
            for (root, handle) in routes.iter() {
                if let Ok(rel) = path.strip_prefix(root) {
                    handle.live.noticed(&index::walk::relative(Path::new(""), rel));
                }
            }
        }
    }
}

/// The default watch budget: half the user's inotify watches, leaving the rest to editors
/// and other tools.
pub(crate) fn default_budget() -> usize {
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(65_536, |n| n / 2)
}
