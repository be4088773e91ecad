//! A registered project at run time: its open index, its indexing lock and live progress.
//!
//! The registry says which projects exist; a [`ProjectHandle`] is what the daemon keeps in
//! memory for each one. The store opens lazily, so a read-only call on a project that was
//! never indexed creates nothing on disk.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

mod background;
pub(crate) mod embedding;
#[cfg(feature = "team")]
mod fill;
mod projects;
mod ranking;
mod snapshot;

pub(crate) use embedding::{Embedding, ProjectVectors};
pub(crate) use projects::Projects;
pub(crate) use ranking::AfterBatch;
pub(crate) use snapshot::{Snapshot, Unready};

use crate::base::sync::Recover;
use crate::engine::index::{self, IndexReport, Progress};
use crate::store::recover::{self, Recovery};
use crate::store::{DB_FILE, Stats, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub(crate) enum IndexError {
    #[error(
        "the project directory {0} is missing (moved, deleted, unmounted or replaced by a link, which booger does not \
         follow); its index is kept as it was"
    )]
    Missing(PathBuf),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// True if `root` is a directory itself, not a link to one: a project replaced by a link
/// must not be indexed from wherever the link leads.
pub(crate) fn root_present(root: &Path) -> bool {
    std::fs::symlink_metadata(root).is_ok_and(|m| m.is_dir())
}

/// One registered project as the daemon holds it, by concern: where it is and where its
/// index lives; the index itself (the store, opened when used and released when idle) and
/// one indexing run at a time with its progress and last report; the ranking index and its
/// background rebuilds; the watch's pending changes; vectors and the embedder; a first index
/// filled from the team index (and answered from it while that runs); and what the status
/// page shows of it while its index is not loaded.
pub(crate) struct ProjectHandle {
    pub root: PathBuf,
    /// The folder its index lives in (see [`crate::base::storage`]).
    pub index_dir: PathBuf,
    /// Where an index might be that belongs in `index_dir` (the other placement): adopted
    /// the first time the index is opened.
    adopt_from: PathBuf,
    /// The mark an in-repo index folder this daemon made for this root carries
    /// ([`crate::base::storage::owner_mark`]); empty when it could not be made (nothing is trusted).
    owner_mark: String,
    store: Mutex<Option<Arc<Store>>>,
    /// One indexing run at a time per project.
    index_lock: Mutex<()>,
    pub progress: Progress,
    pub last_report: Mutex<Option<IndexReport>>,
    /// The ranking index and the work on it.
    ranking: ranking::Ranking,
    /// Trigram rows a large run left are being written in the background.
    filling: std::sync::atomic::AtomicBool,
    /// Changes noticed by the watcher and not yet indexed; the watch's state.
    pub live: crate::engine::live::Live,
    /// Vectors for semantic search, and the embedder that keeps them current (none when
    /// embedding is off).
    pub vectors: crate::engine::project::ProjectVectors,
    embedding: Option<Arc<crate::engine::project::Embedding>>,
    /// A first index filled from the team index, when there is one.
    #[cfg(feature = "team")]
    fill: fill::TeamFill,
    /// When a query last used this project (ms on the daemon's clock): the idle ones give
    /// their memory back.
    last_used: std::sync::atomic::AtomicU64,
    /// Times its warm structures were released.
    pub releases: std::sync::atomic::AtomicU64,
    /// The counts last seen while the store was open: what the status page shows of a project
    /// whose index is not loaded (memory follows use, not the page).
    seen: Mutex<Option<Stats>>,
    /// What the status page last showed of the project's eval while the store was open (it
    /// lives in the index's meta): shown, like `seen`, while the index is not loaded.
    pub eval_seen: Mutex<Option<serde_json::Value>>,
    /// The last damaged index (or notes file) set aside, for `status`.
    /// (what was done, whether an answer has said so yet).
    recovered: Mutex<Option<(Recovery, bool)>>,
}

impl ProjectHandle {
    fn new(
        root: PathBuf,
        data_dir: &Path,
        in_repo: bool,
        embedding: Option<Arc<crate::engine::project::Embedding>>,
        team: Option<String>,
    ) -> Self {
        let index_dir = crate::base::storage::index_dir(data_dir, &root, in_repo);
        #[cfg(not(feature = "team"))]
        let _ = team;
        Self {
            #[cfg(feature = "team")]
            fill: fill::TeamFill::new(team, &index_dir),
            index_dir,
            adopt_from: crate::base::storage::index_dir(data_dir, &root, !in_repo),
            owner_mark: crate::base::storage::owner_mark(data_dir, &root).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "cannot make the owner mark; in-repo indexes are not trusted");
                String::new()
            }),
            root,
            store: Mutex::new(None),
            index_lock: Mutex::new(()),
            progress: Progress::default(),
            last_report: Mutex::new(None),
            ranking: ranking::Ranking::default(),
            filling: std::sync::atomic::AtomicBool::new(false),
            live: crate::engine::live::Live::default(),
            vectors: crate::engine::project::ProjectVectors::default(),
            embedding,
            last_used: std::sync::atomic::AtomicU64::new(clock_ms()),
            releases: std::sync::atomic::AtomicU64::new(0),
            seen: Mutex::new(None),
            eval_seen: Mutex::new(None),
            recovered: Mutex::new(None),
        }
    }

    /// A query is about this project: keep its warm structures.
    pub(crate) fn touch(&self) {
        self.last_used.store(clock_ms(), std::sync::atomic::Ordering::Relaxed);
    }

    /// How long since a query last used this project.
    pub(crate) fn idle_for(&self) -> std::time::Duration {
        let last = self.last_used.load(std::sync::atomic::Ordering::Relaxed);
        std::time::Duration::from_millis(clock_ms().saturating_sub(last))
    }

    /// Heap held by the warm structures (ranking index, vectors); SQLite's page caches are
    /// bounded per connection and go with the store.
    pub(crate) fn resident_bytes(&self) -> usize {
        let ranking = self.ranking.index.lock().recover().as_ref().map_or(0, |p| p.heap_bytes());
        ranking + self.vectors.resident_bytes()
    }

    /// The store if it is open now; never opens one (what a scrape of `/metrics` reads).
    pub(crate) fn store_if_open(&self) -> Option<Arc<Store>> {
        self.store.lock().recover().clone()
    }

    /// The index's counts: current when the store is open (`true`), else as last seen open
    /// (`false`). Never opens the store.
    pub(crate) fn stats(&self) -> Option<(Stats, bool)> {
        if let Some(store) = self.store_if_open()
            && let Ok(stats) = store.stats()
        {
            *self.seen.lock().recover() = Some(stats.clone());
            return Some((stats, true));
        }
        self.seen.lock().recover().clone().map(|s| (s, false))
    }

    /// Whether the store is open (its connections and page caches held).
    pub(crate) fn is_open(&self) -> bool {
        self.store.lock().recover().is_some()
    }

    /// Gives back what a query would rebuild: the ranking index, the vectors in memory, the
    /// store's connections and caches. Not while the project is being indexed or embedded
    /// (they hold them anyway). Returns the bytes of warm structures released.
    pub(crate) fn release(&self) -> Option<usize> {
        use std::sync::atomic::Ordering;
        if self.is_indexing()
            || self.ranking.building.load(Ordering::SeqCst)
            || self.filling.load(Ordering::SeqCst)
            || self.vectors.busy.load(Ordering::SeqCst)
        {
            return None;
        }
        let bytes = self.resident_bytes();
        let open = self.is_open();
        if bytes == 0 && !open {
            return Some(0);
        }
        *self.ranking.index.lock().recover() = None;
        self.vectors.release();
        let store = self.store.lock().recover().take();
        if let Some(stats) = store.and_then(|s| s.counted_stats()) {
            *self.seen.lock().recover() = Some(stats);
        }
        self.releases.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(root = %self.root.display(), bytes, "released an idle project's memory");
        Some(bytes)
    }

    /// The project was unregistered: a running index stops, and everything held goes.
    pub(crate) fn close(&self) {
        self.progress.cancelled.store(true, std::sync::atomic::Ordering::SeqCst);
        self.live.stop();
        *self.ranking.index.lock().recover() = None;
        self.vectors.release();
        let store = self.store.lock().recover().take();
        // The WAL folded back now, and no write after it: background work still holding the
        // store would otherwise leave the newest pages only in the WAL past the daemon's exit.
        if let Some(store) = store
            && let Err(e) = store.close()
        {
            tracing::warn!(root = %self.root.display(), error = %e, "checkpoint at close failed");
        }
    }

    /// Closed: the project was removed or the daemon is stopping; background work stops.
    pub(crate) fn is_closed(&self) -> bool {
        self.progress.cancelled.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The daemon's embedder, if embedding is on.
    pub(crate) fn embedding(&self) -> Option<&Arc<crate::engine::project::Embedding>> {
        self.embedding.as_ref()
    }

    /// Asks for vectors of the chunks that have none (after a run changed the index).
    pub(crate) fn embed_missing(self: &Arc<Self>) {
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

    /// The index, if one exists on disk; never creates it.
    pub(crate) fn existing_store(&self) -> Result<Option<Arc<Store>>, StoreError> {
        let mut slot = self.store.lock().recover();
        forget_if_deleted(&mut slot);
        if slot.is_none() {
            self.adopt();
            self.distrust_shipped()?;
            *slot = match Store::open_existing(&self.index_dir) {
                Err(e) if e.is_corrupt() => Some(Arc::new(self.replace_corrupt(DB_FILE, &e.to_string())?)),
                opened => opened?.map(Arc::new),
            };
        }
        Ok(slot.clone())
    }

    /// The index, created if there is none yet.
    pub(crate) fn store(&self) -> Result<Arc<Store>, StoreError> {
        let mut slot = self.store.lock().recover();
        forget_if_deleted(&mut slot);
        if slot.is_none() {
            self.adopt();
            self.distrust_shipped()?;
            *slot = Some(Arc::new(match Store::open(&self.index_dir, &self.root) {
                Err(e) if e.is_corrupt() => self.replace_corrupt(DB_FILE, &e.to_string())?,
                opened => opened?,
            }));
            if self.in_repo() && !self.owner_mark.is_empty() {
                crate::base::storage::mark_owned(&self.index_dir, &self.owner_mark)
                    .map_err(|source| StoreError::Create { path: self.index_dir.clone(), source })?;
            }
        }
        Ok(slot.clone().expect("just opened"))
    }

    fn in_repo(&self) -> bool {
        self.index_dir.file_name().is_some_and(|n| n == crate::base::storage::IN_REPO_DIR)
    }

    /// An in-repo index or notes this daemon did not make (a repository can ship a `.booger/`)
    /// are set aside before anything opens them; a `.booger` that is a symlink is refused.
    fn distrust_shipped(&self) -> Result<(), StoreError> {
        if !self.in_repo() {
            return Ok(());
        }
        crate::base::storage::distrust_unowned(&self.index_dir, &self.owner_mark)
            .map(|_| ())
            .map_err(|source| StoreError::Create { path: self.index_dir.clone(), source })
    }

    /// Sets the damaged `file` (the index or the notes) aside for a fresh one; a fresh index
    /// is rebuilt by the followers (or by the run that found the damage).
    fn replace_corrupt(&self, file: &str, why: &str) -> Result<Store, StoreError> {
        let (store, recovery) = recover::replace(&self.index_dir, &self.root, file, why)?;
        if file == DB_FILE {
            *self.ranking.index.lock().recover() = None;
            self.vectors.release();
            self.live.request_whole();
        }
        *self.recovered.lock().recover() = Some((recovery, false));
        Ok(store)
    }

    /// After a call: if a query found the open index or its notes damaged, sets the damaged
    /// file aside (never deleted), replaces it, and has a fresh index rebuilt in the
    /// background. A run under way finds the damage itself.
    pub(crate) fn recover_if_damaged(&self) {
        let Ok(_no_run) = self.index_lock.try_lock() else { return };
        let mut slot = self.store.lock().recover();
        let Some(why) = slot.as_ref().and_then(|s| s.take_damage()) else { return };
        let file = match slot.as_ref().expect("checked").check() {
            recover::Damaged::Index => DB_FILE,
            recover::Damaged::Notes => crate::base::storage::NOTES_FILE,
            recover::Damaged::Neither => return,
        };
        *slot = None;
        match self.replace_corrupt(file, &why) {
            Ok(fresh) => *slot = Some(Arc::new(fresh)),
            Err(e) => tracing::error!(root = %self.root.display(), error = %e, "cannot replace a damaged index"),
        }
    }

    /// The last time a damaged index (or notes file) was set aside and replaced.
    pub(crate) fn recovered(&self) -> Option<Recovery> {
        self.recovered.lock().recover().as_ref().map(|(r, _)| r.clone())
    }

    /// A recovery no answer has reported yet (once): the first answer after it says so.
    pub(crate) fn recovery_news(&self) -> Option<Recovery> {
        let mut recovered = self.recovered.lock().recover();
        let (r, reported) = recovered.as_mut()?;
        (!std::mem::replace(reported, true)).then(|| r.clone())
    }

    /// Moves an index found in the other placement (an in-repo `.booger/` from before
    /// indexes moved to the data directory) to where this project keeps it.
    fn adopt(&self) {
        if let Err(e) = crate::base::storage::adopt(&self.adopt_from, &self.index_dir, &self.root, &self.owner_mark) {
            tracing::warn!(from = %self.adopt_from.display(), to = %self.index_dir.display(), error = %e,
                "cannot move the existing index; building a new one");
        }
    }

    pub(crate) fn index(self: &Arc<Self>, opts: index::Options) -> Result<IndexReport, IndexError> {
        let _one_at_a_time = self.index_lock.lock().recover();
        // A vanished directory must not look like "every file was deleted".
        if !root_present(&self.root) {
            return Err(IndexError::Missing(self.root.clone()));
        }
        #[cfg(feature = "team")]
        if !opts.full {
            self.start_from_team();
        }
        let mut store = self.store()?;
        #[cfg(feature = "team")]
        if !opts.full {
            self.seed(&store);
        }
        let mut before = store.content_generation();
        let mut full = opts.full;
        // A held ranking index takes the run's changed files as they are built alongside.
        let ranking = index::Ranking { base_dir: Some(self.index_dir.as_path()), changed: self.has_ranking() };
        let (report, built) = match index::run_ranked(&self.root, &store, opts, &self.progress, ranking) {
            // Damage found while reading or writing: set the index aside and build it again.
            Err(e) if e.is_corrupt() => {
                let mut slot = self.store.lock().recover();
                *slot = Some(Arc::new(self.replace_corrupt(DB_FILE, &e.to_string())?));
                store = slot.clone().expect("just replaced");
                drop(slot);
                before = store.content_generation();
                full = true;
                index::run_ranked(&self.root, &store, index::Options { full, ..opts }, &self.progress, ranking)?
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
        let ranking = std::time::Instant::now();
        if report.ranked_alongside {
            // The run wrote a base for the store's content: mapped next, in place of the old.
            *self.ranking.index.lock().recover() = None;
        }
        self.refresh_ranking(&store, before, &report.changed, full, built);
        let mut report = report;
        report.stages.ranking_ms = ranking.elapsed().as_millis() as u64;
        *self.last_report.lock().recover() = Some(report.clone());
        self.grams_later(&store);
        // Also when nothing changed, the first time: a first start with embedding on finds
        // nothing embedded. After that an unchanged run has nothing to embed (and a pass
        // would scan every chunk of a large project for nothing).
        if !report.changed.is_empty() || full || !self.vectors.is_checked() {
            self.embed_missing();
        }
        Ok(report)
    }

    /// Indexes part of the project from a survey of it (the watcher's batches). The changes
    /// are searchable when this returns (through FTS5); the returned [`AfterBatch`] then
    /// brings the ranking index up to date, so a waiting query need not wait for that too.
    pub(crate) fn index_part(
        self: &Arc<Self>,
        tree: index::walk::Tree,
        scope: &crate::source::Survey,
        opts: index::Options,
    ) -> Result<(IndexReport, AfterBatch), IndexError> {
        let _one_at_a_time = self.index_lock.lock().recover();
        if !root_present(&self.root) {
            return Err(IndexError::Missing(self.root.clone()));
        }
        let store = self.store()?;
        let before = store.content_generation();
        // Hold off a full rebuild of the ranking index: the refresh updates it.
        let claimed = !self.ranking.building.swap(true, std::sync::atomic::Ordering::SeqCst);
        let mut refresh = AfterBatch {
            handle: Arc::clone(self),
            store: Arc::clone(&store),
            before,
            changed: Vec::new(),
            built: None,
            claimed,
        };
        // A held ranking index takes the batch's files as they are built alongside.
        let build = claimed && self.has_ranking();
        let (report, built) = match index::run_part(&self.root, &store, tree, scope, opts, &self.progress, build) {
            // Damage found while surveying or writing: a fresh index replaces it, and the
            // followers walk the whole project into it.
            Err(e) if e.is_corrupt() => {
                drop(refresh);
                let fresh = self.replace_corrupt(DB_FILE, &e.to_string())?;
                *self.store.lock().recover() = Some(Arc::new(fresh));
                return Err(e.into());
            }
            run => run?,
        };
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
        refresh.built = built;
        self.grams_later(&store);
        Ok((report, refresh))
    }

    /// Whether the next runs index generated, vendored and fuzz-corpus files (kept in the
    /// index, so it lasts as long as the index and needs no registry change).
    pub(crate) fn set_with_generated(&self, with: bool) -> Result<(), IndexError> {
        let store = self.store()?;
        if index::with_generated(&store)? != with {
            store.set_meta(&[(index::WITH_GENERATED, if with { "true" } else { "false" })])?;
            store.recheck_all()?;
        }
        Ok(())
    }

    /// Indexing runs now, or a ranking index update is pending: either way the ranking index
    /// is about to change, so a search uses FTS5 meanwhile rather than start a rebuild.
    pub(crate) fn is_indexing(&self) -> bool {
        self.progress.running.load(std::sync::atomic::Ordering::SeqCst)
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

/// Milliseconds on a clock that starts with the daemon (monotonic).
fn clock_ms() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_millis() as u64
}
