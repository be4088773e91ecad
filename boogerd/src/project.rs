//! A registered project at run time: its open index, its indexing lock and live progress.
//!
//! The registry says which projects exist; a [`ProjectHandle`] is what the daemon keeps in
//! memory for each one. The store opens lazily, so a read-only call on a project that was
//! never indexed creates nothing on disk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::index::{self, IndexReport, Progress};
use crate::search::postings::Postings;
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("the project directory {0} is missing (moved, deleted or unmounted); its index is kept as it was")]
    Missing(PathBuf),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub struct ProjectHandle {
    pub root: PathBuf,
    /// The folder its index lives in (see [`crate::storage`]).
    pub index_dir: PathBuf,
    /// Where an index might be that belongs in `index_dir` (the other placement): adopted
    /// the first time the index is opened.
    adopt_from: PathBuf,
    store: Mutex<Option<Arc<Store>>>,
    /// One indexing run at a time per project.
    index_lock: Mutex<()>,
    pub progress: Progress,
    pub last_report: Mutex<Option<IndexReport>>,
    /// The ranking index (a mapped base segment and a delta), and whether an update or a
    /// rebuild is under way.
    warm: Mutex<Option<Arc<Postings>>>,
    building: std::sync::atomic::AtomicBool,
    /// A search asked for the ranking index while a run was going: build it after the run.
    wanted: std::sync::atomic::AtomicBool,
    /// Changes noticed by the watcher and not yet indexed; the watch's state.
    pub live: crate::live::Live,
    /// Vectors for semantic search, and the embedder that keeps them current (none when
    /// embedding is off).
    pub vectors: crate::embed::ProjectVectors,
    embedding: Option<Arc<crate::embed::Embedding>>,
    /// When a query last used this project (ms on the daemon's clock): the idle ones give
    /// their memory back.
    last_used: std::sync::atomic::AtomicU64,
    /// Times its warm structures were released.
    pub releases: std::sync::atomic::AtomicU64,
}

impl ProjectHandle {
    fn new(root: PathBuf, data_dir: &Path, in_repo: bool, embedding: Option<Arc<crate::embed::Embedding>>) -> Self {
        Self {
            index_dir: crate::storage::index_dir(data_dir, &root, in_repo),
            adopt_from: crate::storage::index_dir(data_dir, &root, !in_repo),
            root,
            store: Mutex::new(None),
            index_lock: Mutex::new(()),
            progress: Progress::default(),
            last_report: Mutex::new(None),
            warm: Mutex::new(None),
            building: std::sync::atomic::AtomicBool::new(false),
            wanted: std::sync::atomic::AtomicBool::new(false),
            live: crate::live::Live::default(),
            vectors: crate::embed::ProjectVectors::default(),
            embedding,
            last_used: std::sync::atomic::AtomicU64::new(clock_ms()),
            releases: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// A query is about this project: keep its warm structures.
    pub fn touch(&self) {
        self.last_used.store(clock_ms(), std::sync::atomic::Ordering::Relaxed);
    }

    /// How long since a query last used this project.
    pub fn idle_for(&self) -> std::time::Duration {
        let last = self.last_used.load(std::sync::atomic::Ordering::Relaxed);
        std::time::Duration::from_millis(clock_ms().saturating_sub(last))
    }

    /// Heap held by the warm structures (ranking index, vectors); SQLite's page caches are
    /// bounded per connection and go with the store.
    pub fn resident_bytes(&self) -> usize {
        let warm = self.warm.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map_or(0, |p| p.heap_bytes());
        warm + self.vectors.resident_bytes()
    }

    /// Whether the store is open (its connections and page caches held).
    pub fn is_open(&self) -> bool {
        self.store.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    /// Gives back what a query would rebuild: the ranking index, the vectors in memory, the
    /// store's connections and caches. Not while the project is being indexed or embedded
    /// (they hold them anyway). Returns the bytes of warm structures released.
    pub fn release(&self) -> Option<usize> {
        use std::sync::atomic::Ordering;
        if self.is_indexing() || self.building.load(Ordering::SeqCst) || self.vectors.busy.load(Ordering::SeqCst) {
            return None;
        }
        let bytes = self.resident_bytes();
        let open = self.is_open();
        if bytes == 0 && !open {
            return Some(0);
        }
        *self.warm.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.vectors.release();
        *self.store.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.releases.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(root = %self.root.display(), bytes, "released an idle project's memory");
        Some(bytes)
    }

    /// The project was unregistered: a running index stops, and everything held goes.
    pub fn close(&self) {
        self.progress.cancelled.store(true, std::sync::atomic::Ordering::SeqCst);
        self.live.stop();
        *self.warm.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.vectors.release();
        *self.store.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// The daemon's embedder, if embedding is on.
    pub fn embedding(&self) -> Option<&Arc<crate::embed::Embedding>> {
        self.embedding.as_ref()
    }

    /// Asks for vectors of the chunks that have none (after a run changed the index).
    pub fn embed_missing(self: &Arc<Self>) {
        if let Some(e) = &self.embedding {
            e.request(self);
        }
    }

    /// Asks for vectors of the chunks of `files` (a batch of the watcher changed them).
    fn embed_changed(self: &Arc<Self>, files: &[String]) {
        if let Some(e) = &self.embedding {
            e.request_files(self, files);
        }
    }

    /// The ranking index if it matches the store's content, caught up from the base on disk
    /// when it does not (a released project, a daemon just started, a rebuild that raced
    /// with edits); otherwise `None` (search falls back to FTS5) and a build starts in the
    /// background.
    pub fn warm(self: &Arc<Self>, store: &Arc<Store>) -> Option<Arc<Postings>> {
        self.touch();
        self.ranking(store)
    }

    /// [`warm`](Self::warm) without counting as use (after an index run).
    fn ranking(self: &Arc<Self>, store: &Arc<Store>) -> Option<Arc<Postings>> {
        let current = self.warm.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(p) = current.as_ref().filter(|p| p.content_generation == store.content_generation()) {
            return Some(Arc::clone(p));
        }
        // A run in progress updates the ranking index when it ends; until then FTS5 answers.
        if self.is_indexing() {
            self.wanted.store(true, std::sync::atomic::Ordering::SeqCst);
            return None;
        }
        // An update or a build is under way and brings it current in a moment: FTS5 answers
        // rather than this query catching up on its own.
        if self.building.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        let started = std::time::Instant::now();
        let caught_up = match &current {
            Some(p) => p.catch_up(store).map(Some),
            None => Postings::open(store, &self.index_dir),
        };
        match caught_up {
            Ok(Some(p)) => {
                tracing::debug!(root = %self.root.display(), ms = started.elapsed().as_millis() as u64, "ranking index mapped");
                let p = Arc::new(p);
                *self.warm.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&p));
                if p.wants_merge() {
                    self.rebuild_warm(store);
                }
                return Some(p);
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(root = %self.root.display(), error = %e, "ranking index unusable; rebuilding"),
        }
        self.rebuild_warm(store);
        None
    }

    /// `ready`, `building`, `stale` (content changed; rebuilt on the next search) or `none`.
    pub fn warm_state(&self, store: &Store) -> &'static str {
        let current = self.warm.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|p| p.content_generation);
        match (current, self.building.load(std::sync::atomic::Ordering::SeqCst)) {
            (_, true) => "building",
            (Some(g), false) if g == store.content_generation() => "ready",
            (Some(_), false) => "stale",
            (None, false) => "none",
        }
    }

    /// Writes a new base of the ranking index in the background (the old index, if any,
    /// keeps answering meanwhile).
    fn rebuild_warm(self: &Arc<Self>, store: &Arc<Store>) {
        use std::sync::atomic::Ordering;
        if self.building.swap(true, Ordering::SeqCst) {
            // A rebuild or a partial run's update holds the flag: ask again when it is done.
            self.wanted.store(true, Ordering::SeqCst);
            return;
        }
        self.wanted.store(false, Ordering::SeqCst);
        builds().push(Arc::clone(self), Arc::clone(store));
    }

    /// Runs on the build thread: writes the new base and installs it.
    fn build_warm(&self, store: &Store) {
        let started = std::time::Instant::now();
        match Postings::build(store, &self.index_dir) {
            Ok(p) => {
                tracing::debug!(root = %self.root.display(), ms = started.elapsed().as_millis() as u64, "ranking index built");
                *self.warm.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(p));
            }
            Err(e) => tracing::warn!(root = %self.root.display(), error = %e, "ranking index build failed"),
        }
        self.building.store(false, std::sync::atomic::Ordering::SeqCst);
        crate::memory::trim();
    }

    /// The index, if one exists on disk; never creates it.
    pub fn existing_store(&self) -> Result<Option<Arc<Store>>, StoreError> {
        let mut slot = self.store.lock().unwrap_or_else(|p| p.into_inner());
        forget_if_deleted(&mut slot);
        if slot.is_none() {
            self.adopt();
            *slot = match Store::open_existing(&self.index_dir) {
                Err(e) if e.is_corrupt() => Some(Arc::new(self.replace_corrupt(&e)?)),
                opened => opened?.map(Arc::new),
            };
        }
        Ok(slot.clone())
    }

    /// The index, created if there is none yet.
    pub fn store(&self) -> Result<Arc<Store>, StoreError> {
        let mut slot = self.store.lock().unwrap_or_else(|p| p.into_inner());
        forget_if_deleted(&mut slot);
        if slot.is_none() {
            self.adopt();
            *slot = Some(Arc::new(match Store::open(&self.index_dir, &self.root) {
                Err(e) if e.is_corrupt() => self.replace_corrupt(&e)?,
                opened => opened?,
            }));
        }
        Ok(slot.clone().expect("just opened"))
    }

    fn replace_corrupt(&self, why: &StoreError) -> Result<Store, StoreError> {
        crate::store::recover::replace(&self.index_dir, &self.root, why)
    }

    /// Moves an index found in the other placement (an in-repo `.booger/` from before
    /// indexes moved to the data directory) to where this project keeps it.
    fn adopt(&self) {
        if let Err(e) = crate::storage::adopt(&self.adopt_from, &self.index_dir, &self.root) {
            tracing::warn!(from = %self.adopt_from.display(), to = %self.index_dir.display(), error = %e,
                "cannot move the existing index; building a new one");
        }
    }

    /// Brings the index up to date (waits for a run already going, then does its own).
    pub fn index(self: &Arc<Self>, opts: index::Options) -> Result<IndexReport, IndexError> {
        let _one_at_a_time = self.index_lock.lock().unwrap_or_else(|p| p.into_inner());
        // A vanished directory must not look like "every file was deleted".
        if !self.root.is_dir() {
            return Err(IndexError::Missing(self.root.clone()));
        }
        let mut store = self.store()?;
        let mut before = store.content_generation();
        let mut full = opts.full;
        let report = match index::run(&self.root, &store, opts, &self.progress) {
            // Damage found while reading or writing: set the index aside and build it again.
            Err(e) if e.is_corrupt() => {
                let mut slot = self.store.lock().unwrap_or_else(|p| p.into_inner());
                *slot = Some(Arc::new(self.replace_corrupt(&e)?));
                store = slot.clone().expect("just replaced");
                drop(slot);
                before = store.content_generation();
                full = true;
                index::run(&self.root, &store, index::Options { full, ..opts }, &self.progress)?
            }
            run => run?,
        };
        tracing::info!(
            root = %self.root.display(),
            files = report.files,
            parsed = report.parsed,
            deleted = report.deleted,
            ms = report.elapsed_ms,
            "indexed"
        );
        *self.last_report.lock().unwrap_or_else(|p| p.into_inner()) = Some(report.clone());
        self.refresh_warm(&store, before, &report.changed, full);
        // Also when nothing changed, the first time: a first start with embedding on finds
        // nothing embedded. After that an unchanged run has nothing to embed (and a pass
        // would scan every chunk of a large project for nothing).
        if !report.changed.is_empty() || full || !self.vectors.is_checked() {
            self.embed_missing();
        }
        Ok(report)
    }

    /// Indexes part of the project from a survey of it (the watcher's batches). The changes
    /// are searchable when this returns (through FTS5); the returned [`WarmRefresh`] then
    /// brings the ranking index up to date, so a waiting query need not wait for that too.
    pub fn index_part(
        self: &Arc<Self>,
        tree: index::walk::Tree,
        scope: &index::Scope,
        opts: index::Options,
    ) -> Result<(IndexReport, WarmRefresh), IndexError> {
        let _one_at_a_time = self.index_lock.lock().unwrap_or_else(|p| p.into_inner());
        if !self.root.is_dir() {
            return Err(IndexError::Missing(self.root.clone()));
        }
        let store = self.store()?;
        let before = store.content_generation();
        // Hold off a full rebuild of the ranking index: the refresh updates it.
        let claimed = !self.building.swap(true, std::sync::atomic::Ordering::SeqCst);
        let mut refresh =
            WarmRefresh { handle: Arc::clone(self), store: Arc::clone(&store), before, changed: Vec::new(), claimed };
        let report = index::run_part(&store, tree, scope, opts, &self.progress)?;
        if !report.changed.is_empty() {
            tracing::debug!(
                root = %self.root.display(),
                surveyed = report.files,
                changed = report.changed.len(),
                ms = report.elapsed_ms,
                "changes applied"
            );
        }
        refresh.changed = report.changed.clone();
        Ok((report, refresh))
    }

    /// Brings a ranking index that was current before a run up to date with the run's
    /// changes (a pass over its postings, not a rebuild), or else rebuilds it in the
    /// background. One nobody uses costs nothing.
    fn refresh_warm(self: &Arc<Self>, store: &Arc<Store>, before: u64, changed: &[String], full: bool) {
        if !self.update_warm(store, before, changed, full) {
            let _ = self.ranking(store);
        } else if self.wanted.swap(false, std::sync::atomic::Ordering::SeqCst) {
            self.rebuild_warm(store);
        }
    }

    /// The delta half of [`refresh_warm`](Self::refresh_warm): false if only a rebuild will do.
    fn update_warm(&self, store: &Store, before: u64, changed: &[String], full: bool) -> bool {
        let current = self.warm.lock().unwrap_or_else(|p| p.into_inner()).clone();
        // None yet: the caller maps the base from disk, or builds one, so the first search
        // after indexing does not wait for it.
        let Some(current) = current else { return false };
        if store.content_generation() == current.content_generation {
            return true;
        }
        if current.content_generation != before || full {
            return false;
        }
        let started = std::time::Instant::now();
        match current.updated(store, changed) {
            Ok(p) => {
                tracing::debug!(
                    ms = started.elapsed().as_millis() as u64,
                    files = changed.len(),
                    "ranking index updated"
                );
                let merge = p.wants_merge();
                *self.warm.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(p));
                // Current now; a new base is written once the delta has grown (by the
                // caller, once it has let go of the `building` flag).
                self.wanted.store(merge, std::sync::atomic::Ordering::SeqCst);
                true
            }
            Err(e) => {
                tracing::warn!(root = %self.root.display(), error = %e, "ranking index update failed");
                false
            }
        }
    }

    /// Indexing runs now, or a ranking index update is pending: either way the ranking index
    /// is about to change, so a search uses FTS5 meanwhile rather than start a rebuild.
    pub fn is_indexing(&self) -> bool {
        self.progress.running.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The ranking index update that follows a partial run; see [`ProjectHandle::index_part`].
#[must_use = "run() brings the ranking index up to date"]
pub struct WarmRefresh {
    handle: Arc<ProjectHandle>,
    store: Arc<Store>,
    before: u64,
    changed: Vec<String>,
    /// Whether this run holds the ranking index's `building` flag.
    claimed: bool,
}

impl WarmRefresh {
    pub fn run(mut self) {
        if !self.changed.is_empty() {
            self.handle.embed_changed(&self.changed);
        }
        if !self.claimed {
            return; // a rebuild was already under way; it catches up by itself
        }
        // A released project (or one never searched) is caught up by its next query instead.
        let held = self.handle.warm.lock().unwrap_or_else(|p| p.into_inner()).is_some();
        let updated = held && self.handle.update_warm(&self.store, self.before, &self.changed, false);
        self.claimed = false;
        self.handle.building.store(false, std::sync::atomic::Ordering::SeqCst);
        if !held {
            return;
        }
        if !updated {
            let _ = self.handle.ranking(&self.store);
        } else if self.handle.wanted.swap(false, std::sync::atomic::Ordering::SeqCst) {
            self.handle.rebuild_warm(&self.store);
        }
    }
}

impl Drop for WarmRefresh {
    fn drop(&mut self) {
        if self.claimed {
            self.handle.building.store(false, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

/// A database deleted under us (the project was removed and recreated, its folder wiped)
/// must not keep absorbing writes: drop it so the next use opens the file on disk.
fn forget_if_deleted(slot: &mut Option<Arc<Store>>) {
    if slot.as_ref().is_some_and(|s| !s.path().is_file()) {
        tracing::warn!(db = %slot.as_ref().unwrap().path().display(), "index database was deleted; reopening");
        *slot = None;
    }
}

/// Ranking-index builds waiting for the one thread that runs them: a daemon starting with
/// many projects builds them one after another, not all in memory at once, and without a
/// thread per project.
struct Builds {
    queue: Mutex<std::collections::VecDeque<(Arc<ProjectHandle>, Arc<Store>)>>,
    wake: std::sync::Condvar,
}

fn builds() -> &'static Builds {
    static BUILDS: std::sync::OnceLock<&'static Builds> = std::sync::OnceLock::new();
    BUILDS.get_or_init(|| {
        let b: &'static Builds =
            Box::leak(Box::new(Builds { queue: Mutex::default(), wake: std::sync::Condvar::new() }));
        std::thread::Builder::new()
            .name("booger-rank".to_owned())
            .spawn(move || {
                loop {
                    let (handle, store) = {
                        let mut q = b.queue.lock().unwrap_or_else(|p| p.into_inner());
                        loop {
                            if let Some(job) = q.pop_front() {
                                break job;
                            }
                            q = b.wake.wait(q).unwrap_or_else(|p| p.into_inner());
                        }
                    };
                    handle.build_warm(&store);
                }
            })
            .expect("spawn the ranking-index thread");
        b
    })
}

impl Builds {
    fn push(&self, handle: Arc<ProjectHandle>, store: Arc<Store>) {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).push_back((handle, store));
        self.wake.notify_one();
    }
}

/// What one [`Projects::release_idle`] gave back.
#[derive(Debug, Default, Clone, Copy)]
pub struct Released {
    pub projects: usize,
    pub bytes: usize,
    /// Warm bytes still held afterwards.
    pub held: usize,
}

/// Milliseconds on a clock that starts with the daemon (monotonic).
fn clock_ms() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_millis() as u64
}

/// Handles of every project the daemon has touched, by root.
pub struct Projects {
    handles: Mutex<HashMap<PathBuf, Arc<ProjectHandle>>>,
    /// Where indexes live unless a project keeps its own.
    data_dir: PathBuf,
    /// Roots that keep their index in the repository.
    in_repo: Mutex<std::collections::HashSet<PathBuf>>,
    /// Options for runs nobody asked for explicitly (the watcher's).
    defaults: index::Options,
    embedding: Option<Arc<crate::embed::Embedding>>,
}

impl Projects {
    pub fn new(data_dir: PathBuf, defaults: index::Options, embedding: Option<Arc<crate::embed::Embedding>>) -> Self {
        Self { handles: Mutex::default(), data_dir, in_repo: Mutex::default(), defaults, embedding }
    }

    /// Says where `root` keeps its index; a handle made before is dropped so the next one
    /// opens (and moves the index to) the new place.
    pub fn set_in_repo(&self, root: &Path, in_repo: bool) {
        let mut set = self.in_repo.lock().unwrap_or_else(|p| p.into_inner());
        let changed = if in_repo { set.insert(root.to_owned()) } else { set.remove(root) };
        drop(set);
        if changed {
            self.drop_handle(root);
        }
    }

    /// The daemon's embedders, if embedding is on.
    pub fn embedding(&self) -> Option<&Arc<crate::embed::Embedding>> {
        self.embedding.as_ref()
    }

    pub fn defaults(&self) -> index::Options {
        self.defaults
    }

    pub fn get(&self, root: &Path) -> Arc<ProjectHandle> {
        let mut map = self.handles.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(root.to_owned())
            .or_insert_with(|| {
                let in_repo = self.in_repo.lock().unwrap_or_else(|p| p.into_inner()).contains(root);
                Arc::new(ProjectHandle::new(root.to_owned(), &self.data_dir, in_repo, self.embedding.clone()))
            })
            .clone()
    }

    /// Where `root`'s index lives (whether or not it exists).
    pub fn index_dir(&self, root: &Path) -> PathBuf {
        self.get(root).index_dir.clone()
    }

    /// Before a query on `root` loads what it needs: while the projects together hold more
    /// than `budget` bytes, the least recently used others are released.
    pub fn keep_budget(&self, root: &Path, budget: usize) {
        if self.resident().0 > budget {
            self.release_coldest(None, budget, Some(root));
        }
    }

    /// Releases the warm structures of projects no query has used for `idle_after`, then,
    /// while the rest hold more than `budget` bytes, those of the least recently used.
    pub fn release_idle(&self, idle_after: std::time::Duration, budget: usize) -> Released {
        self.release_coldest(Some(idle_after), budget, None)
    }

    /// Coldest first: releases each project idle for `idle_after` (if given), and any while
    /// all together hold more than `budget`; never `spare`, the project a query is about.
    fn release_coldest(
        &self,
        idle_after: Option<std::time::Duration>,
        budget: usize,
        spare: Option<&Path>,
    ) -> Released {
        let mut handles: Vec<Arc<ProjectHandle>> =
            self.handles.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect();
        handles.sort_by_key(|h| std::cmp::Reverse(h.idle_for()));
        let mut out = Released::default();
        let mut held: usize = handles.iter().map(|h| h.resident_bytes()).sum();
        for h in handles.iter().filter(|h| spare != Some(h.root.as_path())) {
            let idle = idle_after.is_some_and(|after| h.idle_for() >= after);
            if !(idle || held > budget) {
                continue;
            }
            if let Some(bytes) = h.release() {
                held -= bytes.min(held);
                if bytes > 0 {
                    out.projects += 1;
                    out.bytes += bytes;
                }
            }
        }
        out.held = held;
        out
    }

    /// Heap held by warm structures across projects, and how many projects hold some.
    pub fn resident(&self) -> (usize, usize) {
        let handles = self.handles.lock().unwrap_or_else(|p| p.into_inner());
        let sizes: Vec<usize> = handles.values().map(|h| h.resident_bytes()).collect();
        (sizes.iter().sum(), sizes.iter().filter(|&&b| b > 0).count())
    }

    /// Forgets a project's handle (its index stays on disk).
    pub fn drop_handle(&self, root: &Path) -> Option<Arc<ProjectHandle>> {
        self.handles.lock().unwrap_or_else(|p| p.into_inner()).remove(root)
    }
}
