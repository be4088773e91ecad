//! A project's index as one query sees it, taken once per call: the store at its current
//! generation, how fresh that is (what was still pending, a first index still running), and
//! what search reads of it, taken when first asked for ([`Snapshot::searcher`]: the ranking
//! index and the caller's notes). The answer's freshness comes from the snapshots the call
//! took.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::ProjectHandle;
use crate::domain::search::ranking_index::RankingIndex;
use crate::domain::search::{Context, Searcher};
use crate::engine::live::{Freshness, WatchState};
use crate::engine::registry::Project;
use crate::store::context::Scope;
use crate::store::{Store, StoreError};

/// How long a call waits for a project's first index to write its first batch.
const FIRST_BATCH_WAIT: Duration = Duration::from_secs(3);

/// How long a call waits for a project's first index to finish: a small repository's takes
/// well under this (a 100-file one about 0.3 s), and its first answer is then whole; a large
/// one answers from what is indexed by then, and says so.
const FIRST_INDEX_WAIT: Duration = Duration::from_secs(2);

/// One project's index at one generation, and how fresh it was when taken.
pub(crate) struct Snapshot {
    pub project: Project,
    pub handle: Arc<ProjectHandle>,
    pub store: Arc<Store>,
    /// The store's content generation when the snapshot was taken.
    pub generation: u64,
    pub freshness: Freshness,
    /// The session whose notes, focus and visited files rank the answer.
    session: String,
    ranking: OnceLock<Option<Arc<RankingIndex>>>,
    notes: OnceLock<Arc<Context>>,
}

/// Why a project has no snapshot to give.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unready {
    #[error("its first index is being built")]
    Indexing,
    #[error("it has no index")]
    NoIndex,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ProjectHandle {
    /// The project's index for a query: waits (briefly) for a first index that has just
    /// started, then for pending changes (read-your-writes), and records what the answer
    /// will be based on. Never creates an index. `session`'s notes rank what it finds.
    pub(crate) fn snapshot(self: &Arc<Self>, project: Project, session: &str) -> Result<Snapshot, Unready> {
        self.touch();
        let started = Instant::now();
        let mut opened = self.existing_store();
        // A first index just started (a project registered on first use): its first batch
        // lands within moments; answer from it rather than say there is no index yet.
        while matches!(opened, Ok(None))
            && self.live.mode() == WatchState::Starting
            && started.elapsed() < FIRST_BATCH_WAIT
        {
            std::thread::sleep(Duration::from_millis(20));
            opened = self.existing_store();
        }
        // Then, briefly, for the whole first index (or the catch-up after a restart): a small
        // repository's first answer is whole. Once a first batch is in, a run that will not be
        // done within the wait is not waited for: a large tree answers from what is indexed,
        // and says so.
        let hopeless = || {
            let left = FIRST_INDEX_WAIT.saturating_sub(started.elapsed());
            self.progress.done.load(Ordering::Relaxed) >= crate::engine::index::BATCH_FILES as u64
                && self.progress.eta().is_some_and(|eta| eta > left)
        };
        while self.live.mode() == WatchState::Starting
            && self.is_indexing()
            && started.elapsed() < FIRST_INDEX_WAIT
            && !hopeless()
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        let store = match opened? {
            Some(store) => store,
            None if self.is_indexing() => return Err(Unready::Indexing),
            None => return Err(Unready::NoIndex),
        };
        let mut freshness = self.live.wait_fresh(|| self.progress.eta().filter(|_| self.is_indexing()));
        if freshness.state == WatchState::Starting && self.is_indexing() {
            freshness.indexing =
                Some((self.progress.done.load(Ordering::Relaxed), self.progress.total.load(Ordering::Relaxed)));
        }
        Ok(Snapshot {
            project,
            handle: Arc::clone(self),
            generation: store.content_generation(),
            store,
            freshness,
            session: session.to_owned(),
            ranking: OnceLock::new(),
            notes: OnceLock::new(),
        })
    }
}

impl Snapshot {
    /// What ranked search reads: the store, the ranking index when it is current (else FTS5
    /// answers and a build starts), and the caller's notes.
    pub(crate) fn searcher(&self) -> Searcher<'_> {
        Searcher { store: &self.store, ranking: self.ranking(), context: self.notes() }
    }

    /// [`Snapshot::searcher`] without notes: a search over many projects, ranked alike.
    pub(crate) fn searcher_without_notes(&self) -> Searcher<'_> {
        static NONE: std::sync::LazyLock<Context> = std::sync::LazyLock::new(Context::default);
        Searcher { store: &self.store, ranking: self.ranking(), context: &NONE }
    }

    /// The ranking index, taken once (see [`ProjectHandle::ranking_index`]).
    pub(crate) fn ranking(&self) -> Option<&RankingIndex> {
        self.ranking.get_or_init(|| self.handle.ranking_index(&self.store)).as_deref()
    }

    /// The notes, focus and visited files the caller's session sees (cached per generation).
    fn notes(&self) -> &Context {
        self.notes.get_or_init(|| {
            let (store, scope) = (&self.store, Scope::Session(&self.session));
            let now = crate::base::time::now_rfc3339();
            store.cached_context(scope, &now, || {
                let (focus, visited) = store.workset(scope).unwrap_or_default();
                let notes = store.annotations(scope, None, &now).unwrap_or_default();
                let expires = notes.iter().filter_map(|a| a.expires_at.clone()).min();
                let notes = notes.into_iter().map(|a| (a.target, a.note)).collect();
                Context { focus, visited, notes, expires }
            })
        })
    }
}
