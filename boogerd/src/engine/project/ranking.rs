//! A project's ranking index at run time: mapped from disk, built by the run that finds none,
//! kept current by each run's changed files, and rewritten on the background thread once
//! they add up.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex};

use super::ProjectHandle;
use crate::base::sync::Recover;
use crate::domain::search::ranking_index::{ChangedFiles, RankingIndex};
use crate::store::Store;

/// How long a query waits for the ranking index an update or build is bringing current,
/// before FTS5 answers instead (a checkout's thousand files take tens of milliseconds).
const UPDATE_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// A project's ranking index (a mapped base segment and a delta) and the work on it.
#[derive(Default)]
pub(super) struct Ranking {
    pub(super) index: Mutex<Option<Arc<RankingIndex>>>,
    /// An update or a rebuild is under way.
    pub(super) building: AtomicBool,
    /// Signalled when the update or rebuild under way ends (`building` let go).
    pub(super) moved: Condvar,
    /// A search asked for the ranking index while a run was going: build it after the run.
    pub(super) wanted: AtomicBool,
}

impl ProjectHandle {
    /// The ranking index if it matches the store's content, caught up from the base on disk
    /// when it does not (a released project, a daemon just started, a rebuild that raced
    /// with edits), or the one held while a run goes on (it is brought current at the run's
    /// end); otherwise `None` (search falls back to FTS5) and a build starts in the
    /// background.
    pub(crate) fn ranking_index(self: &Arc<Self>, store: &Arc<Store>) -> Option<Arc<RankingIndex>> {
        self.touch();
        self.current_ranking(store)
    }

    /// [`ranking_index`](Self::ranking_index) without counting as use (after an index run).
    fn current_ranking(self: &Arc<Self>, store: &Arc<Store>) -> Option<Arc<RankingIndex>> {
        let current = self.ranking.index.lock().recover().clone();
        if let Some(p) = current.as_ref().filter(|p| p.content_generation == store.content_generation()) {
            return Some(Arc::clone(p));
        }
        // A run in progress updates the ranking index when it ends. Until then the index held
        // answers as it stood before the run (a checkout's first queries rank as every later
        // one, at the warm index's speed; the run's files already rewritten are left out, and
        // the answer lists the files not yet indexed); with none held, or a run that rewrites
        // every file, FTS5 answers.
        if self.is_indexing() {
            if current.is_some() && !self.progress.rewriting_all.load(std::sync::atomic::Ordering::SeqCst) {
                return current;
            }
            self.ranking.wanted.store(true, std::sync::atomic::Ordering::SeqCst);
            return None;
        }
        // An update or a build is under way and brings it current in a moment. A held index
        // taking a batch's files (a checkout's thousand: tens of milliseconds) is waited
        // for, so the query ranks as it will from now on; a first build is not (FTS5
        // answers meanwhile). Neither is caught up by the query itself.
        if self.ranking.building.load(std::sync::atomic::Ordering::SeqCst) {
            return current.and_then(|_| self.wait_current(store, UPDATE_WAIT));
        }
        let started = std::time::Instant::now();
        let caught_up = match &current {
            Some(p) => p.catch_up(store).map(Some),
            None => RankingIndex::open(store, &self.index_dir),
        };
        match caught_up {
            Ok(Some(p)) => {
                tracing::debug!(root = %self.root.display(), ms = started.elapsed().as_millis() as u64, "ranking index mapped");
                let p = Arc::new(p);
                *self.ranking.index.lock().recover() = Some(Arc::clone(&p));
                if p.wants_merge() {
                    self.rebuild_ranking(store);
                }
                return Some(p);
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(root = %self.root.display(), error = %e, "ranking index unusable; rebuilding"),
        }
        self.rebuild_ranking(store);
        None
    }

    /// The ranking index once it matches the store's content, waiting for an update or build
    /// under way at most `limit`; `None` if it does not come in time.
    fn wait_current(&self, store: &Store, limit: std::time::Duration) -> Option<Arc<RankingIndex>> {
        let deadline = std::time::Instant::now() + limit;
        let mut held = self.ranking.index.lock().recover();
        loop {
            if let Some(p) = held.as_ref().filter(|p| p.content_generation == store.content_generation()) {
                return Some(Arc::clone(p));
            }
            let left = deadline.checked_duration_since(std::time::Instant::now())?;
            if !self.ranking.building.load(std::sync::atomic::Ordering::SeqCst) {
                return None;
            }
            held = self.ranking.moved.wait_timeout(held, left).recover().0;
        }
    }

    /// Lets go of the `building` flag and wakes the queries waiting for the ranking index.
    pub(super) fn done_building(&self) {
        let _warm = self.ranking.index.lock().recover();
        self.ranking.building.store(false, std::sync::atomic::Ordering::SeqCst);
        self.ranking.moved.notify_all();
    }

    /// `ready`, `building`, `stale` (content changed; rebuilt on the next search) or `none`.
    pub(crate) fn ranking_state(&self, store: &Store) -> &'static str {
        let current = self.ranking.index.lock().recover().as_ref().map(|p| p.content_generation);
        match (current, self.ranking.building.load(std::sync::atomic::Ordering::SeqCst)) {
            (_, true) => "building",
            (Some(g), false) if g == store.content_generation() => "ready",
            (Some(_), false) => "stale",
            (None, false) => "none",
        }
    }

    /// Writes a new base of the ranking index in the background (the old index, if any,
    /// keeps answering meanwhile).
    fn rebuild_ranking(self: &Arc<Self>, store: &Arc<Store>) {
        use std::sync::atomic::Ordering;
        if self.ranking.building.swap(true, Ordering::SeqCst) {
            // A rebuild or a partial run's update holds the flag: ask again when it is done.
            self.ranking.wanted.store(true, Ordering::SeqCst);
            return;
        }
        self.ranking.wanted.store(false, Ordering::SeqCst);
        super::background::queue(super::background::Job::Ranking(Arc::clone(self), Arc::clone(store)));
    }

    /// Runs on the background thread: writes the new base and installs it.
    pub(super) fn build_ranking(&self, store: &Store) {
        let started = std::time::Instant::now();
        match RankingIndex::build(store, &self.index_dir) {
            Ok(p) => {
                tracing::debug!(root = %self.root.display(), ms = started.elapsed().as_millis() as u64, "ranking index built");
                *self.ranking.index.lock().recover() = Some(Arc::new(p));
            }
            Err(e) => tracing::warn!(root = %self.root.display(), error = %e, "ranking index build failed"),
        }
        self.done_building();
        crate::base::memory::trim();
    }

    /// Brings the ranking index current with a whole run's changes before the run returns,
    /// so the first query after `booger index` (or a checkout, or a clone's first run) ranks
    /// as every later one, not from FTS5: a held index takes the changes as a delta (a pass
    /// over the changed files only, however many), one on disk is mapped and caught up, and a
    /// project with none has it built here. A delta grown past its share of the base is
    /// folded into a new base in the background, the current index answering meanwhile.
    /// `built`: the changed files as the run built them alongside its writes, if it did.
    pub(super) fn refresh_ranking(
        self: &Arc<Self>,
        store: &Arc<Store>,
        before: u64,
        changed: &[String],
        full: bool,
        built: Option<ChangedFiles>,
    ) {
        use std::sync::atomic::Ordering;
        if self.ranking.building.swap(true, Ordering::SeqCst) {
            // A rebuild is under way: it is asked to catch up once done.
            self.ranking.wanted.store(true, Ordering::SeqCst);
            return;
        }
        let current = self.update_ranking(store, before, changed, full, built) || self.make_current(store);
        self.done_building();
        if !current || self.ranking.wanted.swap(false, Ordering::SeqCst) {
            self.rebuild_ranking(store);
        }
    }

    /// Maps the base on disk (or catches the held index up) to the store's content, or else
    /// builds a new base on this thread. False if neither worked (a build is then asked for in
    /// the background). The caller holds the `building` flag.
    fn make_current(&self, store: &Store) -> bool {
        let started = std::time::Instant::now();
        let current = self.ranking.index.lock().recover().clone();
        let caught_up = match &current {
            Some(p) => p.catch_up(store).map(Some),
            None => RankingIndex::open(store, &self.index_dir),
        };
        let made = match caught_up {
            Ok(Some(p)) => Ok(p),
            Ok(None) => RankingIndex::build(store, &self.index_dir),
            Err(e) => {
                tracing::warn!(root = %self.root.display(), error = %e, "ranking index unusable; rebuilding");
                RankingIndex::build(store, &self.index_dir)
            }
        };
        match made {
            Ok(p) => {
                tracing::debug!(root = %self.root.display(), ms = started.elapsed().as_millis() as u64, "ranking index current");
                // Current now: a new base is wanted only for a delta grown past its share
                // (not because a query asked while the run went on).
                self.ranking.wanted.store(p.wants_merge(), std::sync::atomic::Ordering::SeqCst);
                *self.ranking.index.lock().recover() = Some(Arc::new(p));
                true
            }
            Err(e) => {
                tracing::warn!(root = %self.root.display(), error = %e, "ranking index build failed");
                false
            }
        }
    }

    pub(super) fn has_ranking(&self) -> bool {
        self.ranking.index.lock().recover().is_some()
    }

    /// The delta half of [`refresh_ranking`](Self::refresh_ranking): false if only a rebuild will do.
    fn update_ranking(
        &self,
        store: &Store,
        before: u64,
        changed: &[String],
        full: bool,
        built: Option<ChangedFiles>,
    ) -> bool {
        let current = self.ranking.index.lock().recover().clone();
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
        match current.updated(store, changed, built) {
            Ok(p) => {
                tracing::debug!(
                    ms = started.elapsed().as_millis() as u64,
                    files = changed.len(),
                    "ranking index updated"
                );
                let merge = p.wants_merge();
                *self.ranking.index.lock().recover() = Some(Arc::new(p));
                // Current now; a new base is written once the delta has grown (by the
                // caller, once it has let go of the `building` flag).
                self.ranking.wanted.store(merge, std::sync::atomic::Ordering::SeqCst);
                true
            }
            Err(e) => {
                tracing::warn!(root = %self.root.display(), error = %e, "ranking index update failed");
                false
            }
        }
    }
}

/// What follows a partial run (a batch of changed files): their embeddings, and the ranking
/// index brought up to date; see [`ProjectHandle::index_part`].
#[must_use = "run() embeds the batch's files and brings the ranking index up to date"]
pub(crate) struct AfterBatch {
    pub(super) handle: Arc<ProjectHandle>,
    pub(super) store: Arc<Store>,
    pub(super) before: u64,
    pub(super) changed: Vec<String>,
    /// The changed files as the run built them alongside its writes, if it did.
    pub(super) built: Option<ChangedFiles>,
    /// Whether this run holds the ranking index's `building` flag.
    pub(super) claimed: bool,
}

impl AfterBatch {
    pub(crate) fn run(mut self) {
        if !self.changed.is_empty() {
            self.handle.embed_changed(&self.changed);
        }
        if !self.claimed {
            return; // a rebuild was already under way; it catches up by itself
        }
        // A released project (or one never searched) is caught up by its next query instead.
        // A held one takes even a checkout's thousands of files as a delta first, so queries
        // rank from it at once; a new base is then written in the background.
        let held = self.handle.has_ranking();
        let updated =
            held && self.handle.update_ranking(&self.store, self.before, &self.changed, false, self.built.take());
        self.claimed = false;
        self.handle.done_building();
        if !held {
            return;
        }
        if !updated {
            let _ = self.handle.current_ranking(&self.store);
        } else if self.handle.ranking.wanted.swap(false, std::sync::atomic::Ordering::SeqCst) {
            self.handle.rebuild_ranking(&self.store);
        }
    }
}

impl Drop for AfterBatch {
    fn drop(&mut self) {
        if self.claimed {
            self.handle.done_building();
        }
    }
}
