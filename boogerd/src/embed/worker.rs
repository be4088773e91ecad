//! Embedding in the background: after a project's index changes, its chunks without a
//! vector of the current model are embedded in batches on one daemon-wide thread, written in
//! short transactions (queries never wait on it), and the project's in-memory vectors are
//! refreshed. Vectors of another model are dropped once the current one covers the index.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use super::Embedder;
use super::vectors::{VectorIndex, encode};
use crate::project::ProjectHandle;
use crate::store::Store;

/// Chunks per batch: one transaction each.
const BATCH: usize = 512;

/// The daemon's embedder and its queue of projects to embed.
pub struct Embedding {
    pub embedder: Arc<dyn Embedder>,
    queue: Mutex<VecDeque<Arc<ProjectHandle>>>,
    wake: Condvar,
}

/// One project's semantic state.
#[derive(Default)]
pub struct ProjectVectors {
    index: Mutex<Option<Arc<VectorIndex>>>,
    /// Queued or being embedded.
    pub busy: AtomicBool,
    /// Chunks embedded since the daemon started.
    pub embedded: AtomicU64,
    pub last_error: Mutex<Option<String>>,
}

impl ProjectVectors {
    /// The in-memory vectors of `model`, loaded from the store the first time.
    pub fn index(&self, store: &Store, model: &str, dims: usize) -> Result<Arc<VectorIndex>, crate::store::StoreError> {
        let mut slot = self.index.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = slot.as_ref().filter(|i| i.model == model) {
            return Ok(i.clone());
        }
        let loaded = Arc::new(VectorIndex::load(store, model, dims)?);
        *slot = Some(loaded.clone());
        Ok(loaded)
    }

    /// Drops the in-memory vectors (they are reloaded on next use).
    pub fn forget(&self) {
        *self.index.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn reload(&self, store: &Store, model: &str, dims: usize) {
        match VectorIndex::load(store, model, dims) {
            Ok(i) => *self.index.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(i)),
            Err(e) => tracing::warn!(error = %e, "loading vectors failed"),
        }
    }
}

impl Embedding {
    /// Starts the embedding thread.
    pub fn start(embedder: Arc<dyn Embedder>) -> Arc<Self> {
        let me = Arc::new(Self { embedder, queue: Mutex::default(), wake: Condvar::new() });
        let worker = Arc::clone(&me);
        std::thread::Builder::new()
            .name("booger-embed".to_owned())
            .spawn(move || worker.run())
            .expect("spawn the embedding thread");
        me
    }

    /// Asks for `project`'s missing vectors. A project already queued is queued once; one
    /// being embedded is queued again, so chunks that arrived meanwhile get their turn.
    pub fn request(&self, project: &Arc<ProjectHandle>) {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        project.vectors.busy.store(true, Ordering::SeqCst);
        if !q.iter().any(|p| Arc::ptr_eq(p, project)) {
            q.push_back(Arc::clone(project));
            self.wake.notify_one();
        }
    }

    fn run(&self) {
        loop {
            let project = {
                let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if let Some(p) = q.pop_front() {
                        break p;
                    }
                    q = self.wake.wait(q).unwrap_or_else(|p| p.into_inner());
                }
            };
            self.embed_project(&project);
            // Under the queue's lock, so a request made meanwhile keeps `busy` set.
            let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            if !q.iter().any(|p| Arc::ptr_eq(p, &project)) {
                project.vectors.busy.store(false, Ordering::SeqCst);
            }
        }
    }

    fn embed_project(&self, project: &ProjectHandle) {
        let store = match project.existing_store() {
            Ok(Some(s)) => s,
            Ok(None) => return,
            Err(e) => {
                *project.vectors.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                return;
            }
        };
        let (model, dims) = (self.embedder.id().to_owned(), self.embedder.dims());
        let started = std::time::Instant::now();
        let mut total = 0;
        loop {
            let batch = match store.chunks_without_vectors(&model, BATCH) {
                Ok(b) => b,
                Err(e) => {
                    *project.vectors.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                    return;
                }
            };
            if batch.is_empty() {
                break;
            }
            let texts: Vec<String> = batch.iter().map(super::text::for_chunk).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = match self.embedder.embed(&refs) {
                Ok(v) => v,
                Err(e) => {
                    tracing::warn!(root = %project.root.display(), error = %e, "embedding failed");
                    *project.vectors.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                    return;
                }
            };
            let rows: Vec<(i64, Vec<u8>)> = batch.iter().zip(&vectors).map(|(c, v)| (c.id, encode(v))).collect();
            match store.save_vectors(&model, &rows) {
                Ok(n) => total += n,
                Err(e) => {
                    *project.vectors.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                    return;
                }
            }
            project.vectors.embedded.fetch_add(batch.len() as u64, Ordering::Relaxed);
            if batch.len() < BATCH {
                break;
            }
        }
        *project.vectors.last_error.lock().unwrap_or_else(|p| p.into_inner()) = None;
        if total > 0 {
            if let Err(e) = store.drop_other_vectors(&model) {
                tracing::warn!(error = %e, "dropping old vectors failed");
            }
            project.vectors.reload(&store, &model, dims);
            release_freed_memory();
            tracing::info!(
                root = %project.root.display(),
                chunks = total,
                ms = started.elapsed().as_millis() as u64,
                model,
                "embedded"
            );
        }
    }
}

/// Hands memory freed by an embedding pass (its batches, the previous in-memory vectors)
/// back to the OS, so the daemon's RSS is what it holds, not what it once held.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}
