//! Embedding in the background: after a project's index changes, its chunks without a
//! vector are embedded on one daemon-wide thread, tier by tier (the static tier first, so
//! semantic search works within seconds, then the better tier if one is configured), in
//! batches written in short transactions: queries never wait on it. A slow tier yields to
//! other projects between batches. Vectors of models no tier uses are dropped once the
//! tiers cover the index. A project started from a prebuilt index first takes the vectors
//! that came with it from the team index, and embeds only what they leave.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::ProjectHandle;
use crate::base::sync::Recover;
use crate::domain::embed::Embedder;
use crate::domain::embed::vectors::{VectorIndex, encode};
use crate::store::Store;

/// Chunks per batch: one transaction each.
const BATCH: usize = 512;
/// The static tier's batches: its vectors take milliseconds, and a pass shares the index's
/// writer with the trigram pass in turns, a batch each: larger batches finish the pass
/// beside the trigram rows instead of after them.
const STATIC_BATCH: usize = 4096;
/// Vectors added in memory since the last load, as a share of those loaded, past which
/// they are loaded anew.
const RELOAD_SHARE: f64 = 0.125;
/// A tier that has run this long on one project lets other queued projects go first.
const TURN: Duration = Duration::from_secs(5);

/// The daemon's embedders and its queue of projects to embed.
pub(crate) struct Embedding {
    /// Cheapest first; the first is always the static tier.
    pub tiers: Vec<Arc<dyn Embedder>>,
    /// Why a configured tier is not running (shown by `status` and semantic answers).
    pub problem: Option<String>,
    queue: Mutex<VecDeque<Arc<ProjectHandle>>>,
    wake: Condvar,
}

/// What the next pass over a project looks at.
#[derive(Debug, Clone)]
enum Scope {
    /// Every chunk (start-up, a whole run, `embed`).
    All,
    /// The chunks of these files (what the watcher's batches changed).
    Files(BTreeSet<String>),
}

impl Scope {
    fn merge(self, other: Scope) -> Scope {
        match (self, other) {
            (Scope::Files(mut a), Scope::Files(b)) => {
                a.extend(b);
                Scope::Files(a)
            }
            _ => Scope::All,
        }
    }
}

/// One project's semantic state.
#[derive(Default)]
pub(crate) struct ProjectVectors {
    /// The answering tier's vectors in memory (one tier's at a time).
    index: Mutex<Option<Arc<VectorIndex>>>,
    /// Queued or being embedded.
    pub busy: AtomicBool,
    /// Asked to embed at least once since the daemon started (coverage known).
    checked: AtomicBool,
    /// Models that have covered this project; the best of them answers.
    ready: Mutex<Vec<String>>,
    /// Chunks embedded since the daemon started.
    pub embedded: AtomicU64,
    /// Vectors of models no tier uses were looked for since the daemon started (models only
    /// change with a restart, and the look scans every vector).
    pruned: AtomicBool,
    pub last_error: Mutex<Option<String>>,
    /// What the queued pass will look at.
    scope: Mutex<Option<Scope>>,
    /// The team index (URL) and commit whose prebuilt index's vectors this project takes
    /// before its first pass.
    #[cfg(feature = "team")]
    from_team: Mutex<Option<(String, String)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().recover()
}

impl ProjectVectors {
    /// The in-memory vectors of `model`, loaded from the store the first time.
    pub(crate) fn index(&self, store: &Store, model: &str) -> Result<Arc<VectorIndex>, crate::store::StoreError> {
        let mut slot = lock(&self.index);
        if let Some(i) = slot.as_ref().filter(|i| i.model == model) {
            return Ok(i.clone());
        }
        *slot = None; // another tier's vectors: free them before loading
        let loaded = Arc::new(VectorIndex::load(store, model)?);
        *slot = Some(loaded.clone());
        Ok(loaded)
    }

    /// Drops the in-memory vectors (an idle project); they load again on the next query.
    pub(crate) fn release(&self) {
        *lock(&self.index) = None;
    }

    /// Heap held by the in-memory vectors.
    pub(crate) fn resident_bytes(&self) -> usize {
        lock(&self.index).as_ref().map_or(0, |i| i.heap_bytes())
    }

    /// Drops the in-memory vectors and what is known of coverage (after `embed force`).
    pub(crate) fn forget(&self) {
        *lock(&self.index) = None;
        lock(&self.ready).clear();
    }

    /// The vectors of the prebuilt index of `sha` in the team index at `url` are to be
    /// taken before the next pass embeds anything.
    #[cfg(feature = "team")]
    pub(crate) fn take_from_team(&self, url: &str, sha: &str) {
        *lock(&self.from_team) = Some((url.to_owned(), sha.to_owned()));
    }

    /// Embedding was asked for at least once since the daemon started.
    pub(crate) fn is_checked(&self) -> bool {
        self.checked.load(Ordering::SeqCst)
    }

    pub(crate) fn is_ready(&self, model: &str) -> bool {
        lock(&self.ready).iter().any(|m| m == model)
    }

    fn reload(&self, store: &Store, model: &str) {
        match VectorIndex::load(store, model) {
            Ok(i) => *lock(&self.index) = Some(Arc::new(i)),
            Err(e) => tracing::warn!(error = %e, "loading vectors failed"),
        }
    }

    /// Brings the in-memory vectors of `model` up to date after a pass that saved `rows`:
    /// added to what is held when the pass covered a few files, loaded anew after a pass
    /// over everything or once the additions have grown. Nothing held, nothing to do: the
    /// next query loads them.
    fn update(&self, store: &Store, model: &str, rows: Option<&[(i64, Vec<u8>)]>) {
        let held = lock(&self.index).clone().filter(|i| i.model == model);
        let Some(held) = held else { return };
        match rows {
            Some(rows) if held.added_share() < RELOAD_SHARE => {
                *lock(&self.index) = Some(Arc::new(held.with(rows)));
            }
            _ => {
                // Released first, so the old and new copies are not both held.
                *lock(&self.index) = None;
                self.reload(store, model);
                crate::base::memory::trim();
            }
        }
    }
}

/// How one tier's pass over a project ended.
enum Pass {
    Done {
        embedded: usize,
        /// What was saved, when few enough to add to the memory.
        rows: Option<Vec<(i64, Vec<u8>)>>,
    },
    /// Out of turn with other projects waiting: the project goes to the back of the queue.
    Yielded,
    Failed,
}

impl Embedding {
    /// Starts the embedding thread.
    pub(crate) fn start(tiers: crate::domain::embed::provider::Tiers) -> Arc<Self> {
        let me = Arc::new(Self {
            tiers: tiers.tiers,
            problem: tiers.problem,
            queue: Mutex::default(),
            wake: Condvar::new(),
        });
        let worker = Arc::clone(&me);
        std::thread::Builder::new()
            .name("booger-embed".to_owned())
            .spawn(move || {
                crate::base::threads::lower_priority();
                worker.run()
            })
            .expect("spawn the embedding thread");
        me
    }

    /// The tier that answers `project`'s queries: the best one that covers it, else the
    /// static tier. The first call per project starts a pass, which learns the coverage.
    pub(crate) fn answering(&self, project: &Arc<ProjectHandle>) -> &Arc<dyn Embedder> {
        if !project.vectors.checked.load(Ordering::SeqCst) {
            self.request(project);
        }
        self.tiers.iter().rev().find(|t| project.vectors.is_ready(t.id())).unwrap_or(&self.tiers[0])
    }

    /// The best tier, if it is not the static one.
    pub(crate) fn best(&self) -> Option<&Arc<dyn Embedder>> {
        self.tiers.get(1..).and_then(<[_]>::last)
    }

    pub(crate) fn model_ids(&self) -> Vec<&str> {
        self.tiers.iter().map(|t| t.id()).collect()
    }

    /// Asks for `project`'s missing vectors. A project already queued is queued once; one
    /// being embedded is queued again, so chunks that arrived meanwhile get their turn.
    pub(crate) fn request(&self, project: &Arc<ProjectHandle>) {
        self.enqueue(project, Scope::All);
    }

    /// Asks for the vectors of the chunks of `files` (changed by a batch of the watcher).
    pub(crate) fn request_files(&self, project: &Arc<ProjectHandle>, files: &[String]) {
        self.enqueue(project, Scope::Files(files.iter().cloned().collect()));
    }

    fn enqueue(&self, project: &Arc<ProjectHandle>, scope: Scope) {
        let mut q = lock(&self.queue);
        let mut pending = lock(&project.vectors.scope);
        *pending = Some(match pending.take() {
            Some(s) => s.merge(scope),
            None => scope,
        });
        drop(pending);
        project.vectors.checked.store(true, Ordering::SeqCst);
        project.vectors.busy.store(true, Ordering::SeqCst);
        if !q.iter().any(|p| Arc::ptr_eq(p, project)) {
            q.push_back(Arc::clone(project));
            self.wake.notify_one();
        }
    }

    fn run(&self) {
        loop {
            let project = {
                let mut q = lock(&self.queue);
                loop {
                    if let Some(p) = q.pop_front() {
                        break p;
                    }
                    q = self.wake.wait(q).recover();
                }
            };
            let scope = lock(&project.vectors.scope).take().unwrap_or(Scope::All);
            let yielded = self.embed_project(&project, &scope);
            // Under the queue's lock, so a request made meanwhile keeps `busy` set.
            let mut q = lock(&self.queue);
            if yielded {
                let mut pending = lock(&project.vectors.scope);
                *pending = Some(pending.take().map_or(scope.clone(), |s| s.merge(scope)));
                drop(pending);
                if !q.iter().any(|p| Arc::ptr_eq(p, &project)) {
                    q.push_back(project);
                }
            } else if !q.iter().any(|p| Arc::ptr_eq(p, &project)) {
                project.vectors.busy.store(false, Ordering::SeqCst);
            }
        }
    }

    /// Runs each tier over `project`; true if a tier yielded its turn.
    fn embed_project(&self, project: &ProjectHandle, scope: &Scope) -> bool {
        if project.is_closed() {
            return false;
        }
        let store = match project.existing_store() {
            Ok(Some(s)) => s,
            Ok(None) => return false,
            Err(e) => {
                *lock(&project.vectors.last_error) = Some(e.to_string());
                return false;
            }
        };
        #[cfg(feature = "team")]
        if let Some((url, sha)) = lock(&project.vectors.from_team).take() {
            self.receive_from_team(project, &store, &url, &sha);
        }
        let mut failed = false;
        let mut saved = 0;
        for tier in &self.tiers {
            let pass = self.embed_tier(project, &store, tier.as_ref(), scope);
            // Removed, or the daemon is stopping: the pass stopped early; nothing of it goes
            // into memory.
            if project.is_closed() {
                return false;
            }
            match pass {
                Pass::Yielded => return true,
                Pass::Failed => failed = true,
                Pass::Done { embedded, rows } => {
                    saved += embedded;
                    // Only a pass over everything learns that a tier covers the project.
                    let newly_ready = matches!(scope, Scope::All) && !project.vectors.is_ready(tier.id());
                    if newly_ready {
                        lock(&project.vectors.ready).push(tier.id().to_owned());
                    }
                    // Keep the answering tier's vectors in memory current.
                    let answering = self.tiers.iter().rev().find(|t| project.vectors.is_ready(t.id()));
                    if answering.is_some_and(|a| a.id() == tier.id()) && (embedded > 0 || newly_ready) {
                        let rows = rows.as_deref().filter(|_| !newly_ready);
                        project.vectors.update(&store, tier.id(), rows);
                    }
                }
            }
        }
        // A whole pass (not an edit's few chunks) is folded back from the WAL.
        if matches!(scope, Scope::All) && saved > 0 {
            super::background::fold_wal(&project.root, &store);
        }
        if !failed {
            *lock(&project.vectors.last_error) = None;
            if matches!(scope, Scope::Files(_)) || project.vectors.pruned.swap(true, Ordering::SeqCst) {
                return false;
            }
            match store.drop_other_vectors(&self.model_ids()) {
                Ok(0) => {}
                Ok(n) => tracing::info!(root = %project.root.display(), vectors = n, "dropped stale vectors"),
                Err(e) => tracing::warn!(error = %e, "dropping stale vectors failed"),
            }
        }
        false
    }

    /// Takes the vectors of the prebuilt index of `sha` for this booger's tiers; whatever
    /// they leave (or all, if the team index fails) the tiers embed as usual.
    #[cfg(feature = "team")]
    fn receive_from_team(&self, project: &ProjectHandle, store: &Store, url: &str, sha: &str) {
        let started = Instant::now();
        let models = self
            .tiers
            .iter()
            .map(|t| (t.id().to_owned(), crate::domain::embed::vectors::encoded_len(t.dims())))
            .collect();
        match crate::engine::prebuilt::vectors::receive_vectors(url, sha, store, &models) {
            Ok(saved) => {
                // A quarter of the index arrived through the WAL: folded back now, not at the
                // next run.
                if let Err(e) = store.checkpoint() {
                    tracing::debug!(error = %e, "checkpoint after the team's vectors failed");
                }
                tracing::info!(root = %project.root.display(), vectors = saved,
                    ms = started.elapsed().as_millis() as u64, "vectors taken from the team index");
            }
            Err(e) => {
                // Vectors saved before the stream proved damaged (or was cut short) are not
                // trusted: the index had none before, so none of these models' stay.
                for tier in &self.tiers {
                    if let Err(e) = store.drop_vectors(tier.id()) {
                        tracing::warn!(error = %e, "dropping the team's vectors failed");
                    }
                }
                tracing::warn!(root = %project.root.display(), error = %e,
                    "vectors not taken from the team index; embedding them here");
            }
        }
    }

    fn embed_tier(&self, project: &ProjectHandle, store: &Store, tier: &dyn Embedder, scope: &Scope) -> Pass {
        match scope {
            Scope::All => self.embed_all(project, store, tier),
            Scope::Files(files) => self.embed_files(project, store, tier, files),
        }
    }

    /// Embeds the chunks of a few changed files, and returns their vectors for the memory.
    fn embed_files(
        &self,
        project: &ProjectHandle,
        store: &Store,
        tier: &dyn Embedder,
        files: &BTreeSet<String>,
    ) -> Pass {
        let model = tier.id();
        let files: Vec<String> = files.iter().cloned().collect();
        let chunks = match store.chunks_without_vectors_in(model, &files) {
            Ok(c) => c,
            Err(e) => return self.failed(project, model, e.to_string()),
        };
        let mut saved = Vec::new();
        for batch in chunks.chunks(BATCH) {
            if project.is_closed() {
                break;
            }
            let texts: Vec<String> = batch.iter().map(crate::domain::embed::text::for_chunk).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = match tier.embed(&refs) {
                Ok(v) => v,
                Err(e) => return self.failed(project, model, e.to_string()),
            };
            let rows: Vec<(i64, Vec<u8>)> = batch.iter().zip(&vectors).map(|(c, v)| (c.id, encode(v))).collect();
            if let Err(e) = store.save_vectors(model, &rows) {
                return self.failed(project, model, e.to_string());
            }
            project.vectors.embedded.fetch_add(batch.len() as u64, Ordering::Relaxed);
            saved.extend(rows);
        }
        Pass::Done { embedded: saved.len(), rows: Some(saved) }
    }

    fn failed(&self, project: &ProjectHandle, model: &str, e: String) -> Pass {
        if project.is_closed() {
            // Its store refuses writes once closed: nothing failed.
            return Pass::Failed;
        }
        tracing::warn!(root = %project.root.display(), model, error = %e, "embedding failed");
        *lock(&project.vectors.last_error) = Some(format!("{model}: {e}"));
        Pass::Failed
    }

    /// Embeds every chunk without a vector, in batches, yielding to other projects.
    fn embed_all(&self, project: &ProjectHandle, store: &Store, tier: &dyn Embedder) -> Pass {
        let model = tier.id();
        let fail = |e: String| self.failed(project, model, e);
        let started = Instant::now();
        let mut total = 0;
        let mut after = 0;
        let size = if model == self.tiers[0].id() { STATIC_BATCH } else { BATCH };
        while !project.is_closed() {
            let batch = match store.chunks_without_vectors(model, after, size) {
                Ok(b) => b,
                Err(e) => return fail(e.to_string()),
            };
            let Some(last) = batch.last() else { break };
            after = last.id;
            let texts: Vec<String> = batch.iter().map(crate::domain::embed::text::for_chunk).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = match tier.embed(&refs) {
                Ok(v) => v,
                Err(e) => return fail(e.to_string()),
            };
            let rows: Vec<(i64, Vec<u8>)> = batch.iter().zip(&vectors).map(|(c, v)| (c.id, encode(v))).collect();
            match store.save_vectors(model, &rows) {
                Ok(n) => total += n,
                Err(e) => return fail(e.to_string()),
            }
            project.vectors.embedded.fetch_add(batch.len() as u64, Ordering::Relaxed);
            if batch.len() < size {
                break;
            }
            if started.elapsed() > TURN && lock(&self.queue).iter().any(|p| !std::ptr::eq(p.as_ref(), project)) {
                tracing::debug!(root = %project.root.display(), chunks = total, model, "embedding yields to other projects");
                return Pass::Yielded;
            }
        }
        if total > 0 {
            tracing::info!(
                root = %project.root.display(),
                chunks = total,
                ms = started.elapsed().as_millis() as u64,
                model,
                "embedded"
            );
        }
        Pass::Done { embedded: total, rows: None }
    }
}
