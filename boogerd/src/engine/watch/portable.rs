//! File events where booger has no kernel interface of its own (macOS, the BSDs, Windows),
//! through notify. Reads are dropped here, after the fact; on Linux `inotify.rs` does not
//! ask for them at all.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use notify::{EventKind, RecursiveMode, Watcher as _};

use super::{Counters, Refused, Signal};

use crate::base::sync::Recover;

type Handler = Box<dyn Fn(Signal<'_>) + Send + Sync>;

pub(super) struct Source {
    watcher: std::sync::Mutex<notify::RecommendedWatcher>,
}

impl Source {
    pub(super) fn new(handler: Handler, counters: Arc<Counters>) -> std::io::Result<Arc<Self>> {
        let on_event = move |event: notify::Result<notify::Event>| {
            let event = match event {
                Ok(e) => e,
                Err(e) => {
                    tracing::warn!(error = %e, paths = ?e.paths, "watch error");
                    return;
                }
            };
            counters.events.fetch_add(1, Ordering::Relaxed);
            if event.need_rescan() {
                counters.overflows.fetch_add(1, Ordering::Relaxed);
                // When the events were lost is unknown: everything is suspect.
                handler(Signal::Overflow { since: SystemTime::UNIX_EPOCH });
                return;
            }
            match event.kind {
                EventKind::Access(notify::event::AccessKind::Close(notify::event::AccessMode::Write)) => {}
                EventKind::Access(_) => return,
                _ => {}
            }
            for path in &event.paths {
                handler(Signal::Changed(path));
            }
        };
        let watcher = notify::recommended_watcher(on_event).map_err(std::io::Error::other)?;
        Ok(Arc::new(Self { watcher: std::sync::Mutex::new(watcher) }))
    }

    /// notify delivers on its own thread; there is no queue to read ahead of it.
    pub(super) fn drain(&self) {}

    pub(super) fn watch(&self, dir: &Path) -> Result<(), Refused> {
        let mut w = self.watcher.lock().recover();
        w.watch(dir, RecursiveMode::NonRecursive).map_err(|e| match e.kind {
            notify::ErrorKind::PathNotFound => Refused::Gone,
            notify::ErrorKind::MaxFilesWatch => Refused::Limit,
            _ => Refused::Other(e.to_string()),
        })
    }

    pub(super) fn unwatch(&self, dir: &Path) {
        let mut w = self.watcher.lock().recover();
        // Fails when the directory is gone and the OS dropped the watch already.
        let _ = w.unwatch(dir);
    }
}
