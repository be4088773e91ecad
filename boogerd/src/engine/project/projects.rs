//! Every project the daemon has touched, and the memory budget across them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::ProjectHandle;
use crate::base::sync::Recover;
use crate::engine::index;

/// What one [`Projects::release_idle`] gave back.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Released {
    pub projects: usize,
    pub bytes: usize,
    /// Warm bytes still held afterwards.
    pub held: usize,
}

/// Handles of every project the daemon has touched, by root.
pub(crate) struct Projects {
    handles: Mutex<HashMap<PathBuf, Arc<ProjectHandle>>>,
    /// Where indexes live unless a project keeps its own.
    data_dir: PathBuf,
    /// Roots that keep their index in the repository.
    in_repo: Mutex<std::collections::HashSet<PathBuf>>,
    /// Options for runs nobody asked for explicitly (the watcher's).
    defaults: index::Options,
    embedding: Option<Arc<crate::engine::project::Embedding>>,
    /// The team index a new project's first index is filled from, when it holds its HEAD.
    team_url: Option<String>,
}

impl Projects {
    pub(crate) fn new(
        data_dir: PathBuf,
        defaults: index::Options,
        embedding: Option<Arc<crate::engine::project::Embedding>>,
        team_url: Option<String>,
    ) -> Self {
        Self { handles: Mutex::default(), data_dir, in_repo: Mutex::default(), defaults, embedding, team_url }
    }

    /// Says where `root` keeps its index; a handle made before is dropped so the next one
    /// opens (and moves the index to) the new place.
    pub(crate) fn set_in_repo(&self, root: &Path, in_repo: bool) {
        let mut set = self.in_repo.lock().recover();
        let changed = if in_repo { set.insert(root.to_owned()) } else { set.remove(root) };
        drop(set);
        if changed {
            self.drop_handle(root);
        }
    }

    /// The daemon's embedders, if embedding is on.
    pub(crate) fn embedding(&self) -> Option<&Arc<crate::engine::project::Embedding>> {
        self.embedding.as_ref()
    }

    pub(crate) fn defaults(&self) -> index::Options {
        self.defaults
    }

    pub(crate) fn get(&self, root: &Path) -> Arc<ProjectHandle> {
        let mut map = self.handles.lock().recover();
        map.entry(root.to_owned())
            .or_insert_with(|| {
                let in_repo = self.in_repo.lock().recover().contains(root);
                let (embedding, team) = (self.embedding.clone(), self.team_url.clone());
                Arc::new(ProjectHandle::new(root.to_owned(), &self.data_dir, in_repo, embedding, team))
            })
            .clone()
    }

    /// Where `root`'s index lives (whether or not it exists).
    pub(crate) fn index_dir(&self, root: &Path) -> PathBuf {
        self.get(root).index_dir.clone()
    }

    /// Before a query on `root` loads what it needs: while the projects together hold more
    /// than `budget` bytes, the least recently used others are released.
    pub(crate) fn keep_budget(&self, root: &Path, budget: usize) {
        if self.resident().0 > budget {
            self.release_coldest(None, budget, Some(root));
        }
    }

    /// Releases the warm structures of projects no query has used for `idle_after`, then,
    /// while the rest hold more than `budget` bytes, those of the least recently used.
    pub(crate) fn release_idle(&self, idle_after: std::time::Duration, budget: usize) -> Released {
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
        let mut handles: Vec<Arc<ProjectHandle>> = self.handles.lock().recover().values().cloned().collect();
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
    pub(crate) fn resident(&self) -> (usize, usize) {
        let handles = self.handles.lock().recover();
        let sizes: Vec<usize> = handles.values().map(|h| h.resident_bytes()).collect();
        (sizes.iter().sum(), sizes.iter().filter(|&&b| b > 0).count())
    }

    /// The daemon is stopping: every running index stops and every project lets go of its
    /// index and memory.
    pub(crate) fn close_all(&self) {
        let handles: Vec<Arc<ProjectHandle>> = self.handles.lock().recover().values().cloned().collect();
        for h in handles {
            h.close();
        }
    }

    /// Forgets a project's handle (its index stays on disk).
    pub(crate) fn drop_handle(&self, root: &Path) -> Option<Arc<ProjectHandle>> {
        self.handles.lock().recover().remove(root)
    }
}
