//! A project's first index filled from the team index: from a prebuilt index of its commit
//! when the team index holds one, else chunk by chunk from the published blobs (`seed`);
//! searches meanwhile are answered from the team index at that commit.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use super::{DB_FILE, ProjectHandle, index};
use crate::base::sync::Recover;
use crate::store::Store;

/// Where a project's first index may come from in the team index, and how far that got.
pub(super) struct TeamFill {
    /// The team index its first index is filled from (`engine::seed`), if any.
    team: Option<String>,
    /// True until a first index that the team index could fill has been filled (or found not
    /// to be): searches meanwhile wait a moment for the fill to start.
    fillable: AtomicBool,
    /// The commit the empty index is being filled with from the team index, while it is:
    /// searches meanwhile are answered from the team index at that commit.
    filling_from: Mutex<Option<String>>,
}

impl TeamFill {
    pub(super) fn new(team: Option<String>, index_dir: &Path) -> Self {
        // A team index can fill only an index not built yet (not one caught up after a restart).
        let fillable = team.is_some() && !index_dir.join(DB_FILE).exists();
        Self { team, fillable: AtomicBool::new(fillable), filling_from: Mutex::default() }
    }
}

impl ProjectHandle {
    /// The commit this project's empty index is being filled with from the team index, if it
    /// is. Asked while the first index is starting, waits up to `wait` for the fill to begin.
    pub(crate) fn filling_from(&self, wait: std::time::Duration) -> Option<String> {
        let started = std::time::Instant::now();
        loop {
            if let Some(c) = self.fill.filling_from.lock().recover().clone() {
                return Some(c);
            }
            // A first index still to come or running (a call right after `projects add` can
            // come before the run starts) that the team index may fill.
            let fillable = self.fill.fillable.load(std::sync::atomic::Ordering::SeqCst)
                && self.live.mode() == crate::engine::live::WatchState::Starting;
            if !fillable || started.elapsed() > wait {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Brings the index up to date (waits for a run already going, then does its own).
    /// Fills an empty index from the team index, when there is one and it holds this
    /// project's HEAD; the run that follows reads only what differs. A team index out of
    /// reach, or a seed cut short, leaves the rest to the run.
    pub(super) fn seed(&self, store: &Store) {
        let Some(url) = &self.fill.team else { return };
        if !store.is_empty().unwrap_or(false) {
            return;
        }
        let started = std::time::Instant::now();
        // A first index is being built: answers meanwhile say so.
        let _running = self.progress.start(started);
        // Searches meanwhile try the team index at this commit (nothing found there, if it
        // is not published: they fall back to the local index). Not a repository: no seed.
        let head = crate::engine::seed::head(&self.root);
        *self.fill.filling_from.lock().recover() = head.clone();
        let seeded = match &head {
            Some(head) => crate::engine::seed::seed(&self.root, head, store, url),
            None => Ok(0),
        };
        *self.fill.filling_from.lock().recover() = None;
        self.fill.fillable.store(false, std::sync::atomic::Ordering::SeqCst);
        match seeded {
            Ok(0) => {}
            Ok(files) => tracing::info!(
                root = %self.root.display(),
                files,
                ms = started.elapsed().as_millis() as u64,
                "filled from the team index"
            ),
            Err(e) => tracing::warn!(root = %self.root.display(), error = %e, "team index not used; indexing locally"),
        }
    }

    /// A project with no index yet, whose HEAD (or merge base with the default branch) has
    /// a prebuilt index in the team index, starts from that: written in place before the
    /// store is first opened (queries meanwhile find no index, or answer from the team
    /// index). Anything amiss leaves the file unused: the seed and the run then do it all.
    pub(super) fn start_from_team(&self) {
        let Some(url) = &self.fill.team else { return };
        let db = self.index_dir.join(DB_FILE);
        if !self.fill.fillable.load(std::sync::atomic::Ordering::SeqCst) || db.exists() {
            return;
        }
        let Some(head) = crate::engine::seed::head(&self.root) else { return };
        let started = std::time::Instant::now();
        let _running = self.progress.start(started);
        *self.fill.filling_from.lock().recover() = Some(head.clone());
        let part = self.index_dir.join(format!("{DB_FILE}.from-team"));
        let restored = crate::base::storage::prepare(&self.index_dir, &self.root)
            .map_err(crate::engine::prebuilt::PrebuiltError::from)
            .and_then(|()| crate::engine::prebuilt::restore(&self.root, url, &head, &part, &[index::WITH_GENERATED]));
        match restored {
            Ok(Some(restored)) => {
                // Only into a place nobody has opened meanwhile.
                let slot = self.store.lock().recover();
                if slot.is_none() && !db.exists() && std::fs::rename(&part, &db).is_ok() {
                    self.fill.fillable.store(false, std::sync::atomic::Ordering::SeqCst);
                    if restored.vectors_apart {
                        self.vectors.take_from_team(url, &restored.sha);
                    }
                    tracing::info!(root = %self.root.display(), commit = %restored.sha,
                        ms = started.elapsed().as_millis() as u64, "started from the team's prebuilt index");
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(root = %self.root.display(), error = %e, "prebuilt index not used"),
        }
        let _ = std::fs::remove_file(&part);
        *self.fill.filling_from.lock().recover() = None;
    }
}
