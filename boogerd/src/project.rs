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
    store: Mutex<Option<Arc<Store>>>,
    /// One indexing run at a time per project.
    index_lock: Mutex<()>,
    pub progress: Progress,
    pub last_report: Mutex<Option<IndexReport>>,
    /// The in-memory ranking index, and whether a rebuild is under way.
    warm: Mutex<Option<Arc<Postings>>>,
    building: std::sync::atomic::AtomicBool,
    /// A search asked for the ranking index while a run was going: build it after the run.
    wanted: std::sync::atomic::AtomicBool,
    /// Changes noticed by the watcher and not yet indexed; the watch's state.
    pub live: crate::watch::Live,
    /// Vectors for semantic search, and the embedder that keeps them current (none when
    /// embedding is off).
    pub vectors: crate::embed::ProjectVectors,
    embedding: Option<Arc<crate::embed::Embedding>>,
}

impl ProjectHandle {
    fn new(root: PathBuf, embedding: Option<Arc<crate::embed::Embedding>>) -> Self {
        Self {
            root,
            store: Mutex::new(None),
            index_lock: Mutex::new(()),
            progress: Progress::default(),
            last_report: Mutex::new(None),
            warm: Mutex::new(None),
            building: std::sync::atomic::AtomicBool::new(false),
            wanted: std::sync::atomic::AtomicBool::new(false),
            live: crate::watch::Live::default(),
            vectors: crate::embed::ProjectVectors::default(),
            embedding,
        }
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

    /// The ranking index if it matches the store's content; otherwise `None` (search falls
    /// back to FTS5) and a rebuild starts in the background.
    pub fn warm(self: &Arc<Self>, store: &Arc<Store>) -> Option<Arc<Postings>> {
        let current = self.warm.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(p) = current.filter(|p| p.content_generation == store.content_generation()) {
            return Some(p);
        }
        // A run in progress updates the ranking index when it ends; until then FTS5 answers.
        if self.is_indexing() {
            self.wanted.store(true, std::sync::atomic::Ordering::SeqCst);
        } else {
            self.rebuild_warm(store);
        }
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

    fn rebuild_warm(self: &Arc<Self>, store: &Arc<Store>) {
        use std::sync::atomic::Ordering;
        if self.building.swap(true, Ordering::SeqCst) {
            // A rebuild or a partial run's update holds the flag: ask again when it is done.
            self.wanted.store(true, Ordering::SeqCst);
            return;
        }
        self.wanted.store(false, Ordering::SeqCst);
        let (me, store) = (Arc::clone(self), Arc::clone(store));
        let spawned = std::thread::Builder::new().name("booger-rank".to_owned()).spawn(move || {
            let started = std::time::Instant::now();
            match Postings::build(&store) {
                Ok(p) => {
                    tracing::debug!(root = %me.root.display(), ms = started.elapsed().as_millis() as u64, "ranking index built");
                    *me.warm.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(p));
                }
                Err(e) => tracing::warn!(root = %me.root.display(), error = %e, "ranking index build failed"),
            }
            me.building.store(false, Ordering::SeqCst);
        });
        if spawned.is_err() {
            self.building.store(false, Ordering::SeqCst);
        }
    }

    /// The index, if one exists on disk; never creates it.
    pub fn existing_store(&self) -> Result<Option<Arc<Store>>, StoreError> {
        let mut slot = self.store.lock().unwrap_or_else(|p| p.into_inner());
        forget_if_deleted(&mut slot);
        if slot.is_none() {
            *slot = Store::open_existing(&self.root)?.map(Arc::new);
        }
        Ok(slot.clone())
    }

    fn store(&self) -> Result<Arc<Store>, StoreError> {
        let mut slot = self.store.lock().unwrap_or_else(|p| p.into_inner());
        forget_if_deleted(&mut slot);
        if slot.is_none() {
            *slot = Some(Arc::new(Store::open(&self.root)?));
        }
        Ok(slot.clone().expect("just opened"))
    }

    /// Brings the index up to date (waits for a run already going, then does its own).
    pub fn index(self: &Arc<Self>, opts: index::Options) -> Result<IndexReport, IndexError> {
        let _one_at_a_time = self.index_lock.lock().unwrap_or_else(|p| p.into_inner());
        // A vanished directory must not look like "every file was deleted".
        if !self.root.is_dir() {
            return Err(IndexError::Missing(self.root.clone()));
        }
        let store = self.store()?;
        let before = store.content_generation();
        let report = index::run(&self.root, &store, opts, &self.progress)?;
        tracing::info!(
            root = %self.root.display(),
            files = report.files,
            parsed = report.parsed,
            deleted = report.deleted,
            ms = report.elapsed_ms,
            "indexed"
        );
        *self.last_report.lock().unwrap_or_else(|p| p.into_inner()) = Some(report.clone());
        self.refresh_warm(&store, before, &report.changed, opts.full);
        // Also when nothing changed: a first start with embedding on finds nothing embedded.
        self.embed_missing();
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
            let _ = self.warm(store);
        }
    }

    /// The delta half of [`refresh_warm`](Self::refresh_warm): false if only a rebuild will do.
    fn update_warm(&self, store: &Store, before: u64, changed: &[String], full: bool) -> bool {
        let current = self.warm.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(current) = current else { return !self.wanted.swap(false, std::sync::atomic::Ordering::SeqCst) };
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
                *self.warm.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(p));
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
            self.handle.embed_missing();
        }
        if !self.claimed {
            return; // a rebuild was already under way; it catches up by itself
        }
        let updated = self.handle.update_warm(&self.store, self.before, &self.changed, false);
        self.claimed = false;
        self.handle.building.store(false, std::sync::atomic::Ordering::SeqCst);
        if !updated {
            let _ = self.handle.warm(&self.store);
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

/// A database deleted under us (the project was removed and recreated, `.booger/` wiped)
/// must not keep absorbing writes: drop it so the next use opens the file on disk.
fn forget_if_deleted(slot: &mut Option<Arc<Store>>) {
    if slot.as_ref().is_some_and(|s| !s.path().is_file()) {
        tracing::warn!(db = %slot.as_ref().unwrap().path().display(), "index database was deleted; reopening");
        *slot = None;
    }
}

/// Handles of every project the daemon has touched, by root.
pub struct Projects {
    handles: Mutex<HashMap<PathBuf, Arc<ProjectHandle>>>,
    /// Options for runs nobody asked for explicitly (the watcher's).
    defaults: index::Options,
    embedding: Option<Arc<crate::embed::Embedding>>,
}

impl Projects {
    pub fn new(defaults: index::Options, embedding: Option<Arc<crate::embed::Embedding>>) -> Self {
        Self { handles: Mutex::default(), defaults, embedding }
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
            .or_insert_with(|| Arc::new(ProjectHandle::new(root.to_owned(), self.embedding.clone())))
            .clone()
    }

    /// Forgets a removed project (its index stays on disk).
    pub fn drop_handle(&self, root: &Path) {
        self.handles.lock().unwrap_or_else(|p| p.into_inner()).remove(root);
    }
}
