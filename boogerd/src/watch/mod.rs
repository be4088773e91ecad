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
pub mod live;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::index;
use crate::project::ProjectHandle;
pub use live::{Freshness, Live, Mode};

/// How the watcher paces itself; the defaults suit editors and branch switches alike.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// A batch is applied once its directory has been quiet this long...
    pub quiet: Duration,
    /// ...or once its first change has waited this long (continuous writes).
    pub max_delay: Duration,
    /// How often a missing project directory is looked for.
    pub missing_poll: Duration,
    /// How often a project whose events cannot be trusted is re-walked.
    pub rescan: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            quiet: Duration::from_millis(25),
            max_delay: Duration::from_millis(500),
            missing_poll: Duration::from_secs(2),
            rescan: Duration::from_secs(60),
        }
    }
}

type Routes = RwLock<Vec<(PathBuf, Arc<ProjectHandle>)>>;

pub struct Watcher {
    /// `None` when the OS refused a watcher (e.g. no inotify instances left): every project
    /// is then re-walked on a timer.
    notify: Mutex<Option<notify::RecommendedWatcher>>,
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
    /// One whole-project walk at a time across projects, so a daemon starting with many
    /// projects does not parse them all at once.
    whole_runs: Mutex<()>,
    /// The projects followed and the fixed pool of threads that apply their changes.
    followers: Arc<follow::Followers>,
}

impl Watcher {
    pub fn new(defaults: index::Options, budget: usize, timing: Timing, enabled: bool) -> Arc<Self> {
        let routes: Arc<Routes> = Arc::default();
        let handler_routes = Arc::clone(&routes);
        let made = if enabled {
            notify::recommended_watcher(move |event| on_event(&handler_routes, event)).map(Some)
        } else {
            Ok(None)
        };
        let (notify, unavailable) = match made {
            Ok(w) => (w, None),
            Err(e) => {
                tracing::error!(error = %e, "file watching is unavailable; projects will be re-walked periodically");
                (None, Some(format!("file watching is unavailable ({e}); re-walked periodically")))
            }
        };
        let me = Arc::new(Self {
            notify: Mutex::new(notify),
            unavailable,
            manual: !enabled,
            routes,
            watched: Mutex::default(),
            budget,
            timing,
            defaults,
            whole_runs: Mutex::new(()),
            followers: Arc::default(),
        });
        follow::Followers::start(&me);
        me
    }

    /// Starts following a project: a whole reconcile with the disk, then watching. Calling it
    /// again for a followed project asks for a whole re-walk instead. `just_indexed`: the
    /// caller ran a whole run a moment ago, so without watching there is nothing to do.
    pub fn follow(self: &Arc<Self>, handle: Arc<ProjectHandle>, just_indexed: bool) {
        let reconcile = !(just_indexed && self.manual);
        {
            let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
            if routes.iter().any(|(r, _)| *r == handle.root) {
                drop(routes);
                if reconcile {
                    handle.live.request_whole();
                }
                return;
            }
            routes.push((handle.root.clone(), Arc::clone(&handle)));
        }
        handle.live.set_waker(self.followers.clone());
        if reconcile {
            handle.live.set_mode(Mode::Starting, None);
            handle.live.request_whole();
        } else {
            handle.live.set_mode(Mode::Manual, None);
        }
        self.followers.add(handle);
    }

    /// Stops following a project (removed from the registry); its index stays on disk.
    pub fn unfollow(&self, root: &Path) {
        let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = routes.iter().position(|(r, _)| r == root) {
            let (_, handle) = routes.remove(i);
            handle.live.stop();
        }
    }

    /// Watches `dirs` (absolute). Returns those that could not be watched (the budget or the
    /// OS limit was reached, or no watcher), and the first unexpected error.
    fn watch(&self, dirs: &[PathBuf]) -> (Vec<PathBuf>, Option<String>) {
        let mut guard = self.notify.lock().unwrap_or_else(|p| p.into_inner());
        let Some(w) = guard.as_mut() else {
            return if self.manual { (Vec::new(), None) } else { (dirs.to_vec(), self.unavailable.clone()) };
        };
        let mut watched = self.watched.lock().unwrap_or_else(|p| p.into_inner());
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
            match w.watch(d, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    watched.insert(d.clone(), 1);
                }
                // Gone between the walk and now: its parent's survey notices.
                Err(e) if matches!(e.kind, notify::ErrorKind::PathNotFound) => {}
                Err(e) => {
                    if !matches!(e.kind, notify::ErrorKind::MaxFilesWatch) {
                        other.get_or_insert_with(|| format!("cannot watch {}: {e}", d.display()));
                    }
                    refused.push(d.clone());
                }
            }
        }
        (refused, other)
    }

    fn unwatch(&self, dirs: &[PathBuf]) {
        let mut guard = self.notify.lock().unwrap_or_else(|p| p.into_inner());
        let mut watched = self.watched.lock().unwrap_or_else(|p| p.into_inner());
        for d in dirs {
            match watched.get_mut(d) {
                Some(n) if *n > 1 => *n -= 1,
                Some(_) => {
                    watched.remove(d);
                    if let Some(w) = guard.as_mut() {
                        // Fails when the directory is gone and the OS dropped the watch already.
                        let _ = w.unwatch(d);
                    }
                }
                None => {}
            }
        }
    }

    /// Directories watched across all projects.
    pub fn watched_total(&self) -> usize {
        self.watched.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn budget(&self) -> usize {
        self.budget
    }
}

/// Runs on notify's thread for every event: route it to its project(s), nothing more.
fn on_event(routes: &Routes, event: notify::Result<notify::Event>) {
    let event = match event {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!(error = %e, paths = ?e.paths, "watch error");
            return;
        }
    };
    let routes = routes.read().unwrap_or_else(|p| p.into_inner());
    if event.need_rescan() {
        tracing::warn!("the OS dropped file events (queue overflow); re-walking every project");
        for (_, handle) in routes.iter() {
            handle.live.overflowed();
        }
        return;
    }
    match event.kind {
        // Reads (including the indexer's own) change nothing.
        EventKind::Access(notify::event::AccessKind::Close(notify::event::AccessMode::Write)) => {}
        EventKind::Access(_) => return,
        _ => {}
    }
    for path in &event.paths {
        for (root, handle) in routes.iter() {
            if let Ok(rel) = path.strip_prefix(root) {
                handle.live.noticed(&index::walk::relative(Path::new(""), rel));
            }
        }
    }
}

/// The default watch budget: half the user's inotify watches, leaving the rest to editors
/// and other tools.
pub fn default_budget() -> usize {
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(65_536, |n| n / 2)
}
