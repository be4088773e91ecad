//! File events on Linux, read straight from inotify.
//!
//! notify's inotify backend subscribes every watch to `IN_OPEN`, so every read of a file is
//! an event: one `rg` over a large tree, a build, an IDE indexing, booger's own indexer all
//! fill the kernel's queue (16,384 events by default) until it overflows, and a lost event
//! costs a re-survey. booger asks only for what changes a directory's content: entries
//! created, deleted or moved, files written, attributes (mtime, mode) changed.
//!
//! Whoever holds the reader lock reads the queue and hands the events on: the reader thread
//! when the kernel says events are waiting, and a query that must see every change made
//! before it ([`Source::drain`]), so read-your-writes does not depend on thread scheduling.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};

use super::{Counters, Refused, Signal};

use crate::base::sync::Recover;

type Handler = Box<dyn Fn(Signal<'_>) + Send + Sync>;

/// What changes content, and never a read: no `OPEN`, `ACCESS` or `CLOSE_NOWRITE`. `MODIFY`
/// stays, though `CLOSE_WRITE` follows most writes: a `truncate` by path, a file kept open
/// while written, and an mtime set alone (`touch -m`) say nothing else. The kernel merges
/// repeats of the same event, so a long write is not thousands of them.
fn mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MODIFY
        | WatchMask::CLOSE_WRITE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::ATTRIB
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR
        | WatchMask::EXCL_UNLINK
}

#[derive(Default)]
struct Table {
    by_wd: HashMap<WatchDescriptor, PathBuf>,
    by_path: HashMap<PathBuf, WatchDescriptor>,
}

struct Reader {
    inotify: Inotify,
    buffer: Vec<u8>,
    /// When the queue was last read empty: events lost to an overflow happened after this.
    emptied_at: SystemTime,
}

pub(super) struct Source {
    reader: Mutex<Reader>,
    watches: Mutex<(Watches, Table)>,
    fd: RawFd,
    handler: Handler,
    counters: Arc<Counters>,
}

impl Source {
    pub(super) fn new(handler: Handler, counters: Arc<Counters>) -> std::io::Result<Arc<Self>> {
        let inotify = Inotify::init()?;
        let fd = inotify.as_raw_fd();
        let watches = inotify.watches();
        let me = Arc::new(Self {
            reader: Mutex::new(Reader { inotify, buffer: vec![0; 64 * 1024], emptied_at: SystemTime::now() }),
            watches: Mutex::new((watches, Table::default())),
            fd,
            handler,
            counters,
        });
        let reader = Arc::clone(&me);
        std::thread::Builder::new().name("booger-events".to_owned()).spawn(move || reader.run())?;
        Ok(me)
    }

    /// The reader thread: sleeps in `poll` until the kernel has events, then reads them.
    fn run(&self) {
        loop {
            let mut p = libc::pollfd { fd: self.fd, events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd; the descriptor lives as long as `self`.
            let n = unsafe { libc::poll(&mut p, 1, -1) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                tracing::error!(error = %e, "cannot wait for file events; watching stopped");
                return;
            }
            self.drain();
        }
    }

    /// Reads and hands on every event the kernel holds now. After it returns, every change
    /// made before it was called has reached the handler.
    pub(super) fn drain(&self) {
        let mut r = self.reader.lock().recover();
        let Reader { inotify, buffer, emptied_at } = &mut *r;
        loop {
            let events = match inotify.read_events(buffer) {
                Ok(events) => events,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    *emptied_at = SystemTime::now();
                    return;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "reading file events failed");
                    return;
                }
            };
            for event in events {
                self.counters.events.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    self.counters.overflows.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    (self.handler)(Signal::Overflow { since: *emptied_at });
                } else {
                    self.dispatch(&event.wd, event.mask, event.name);
                }
            }
        }
    }

    fn dispatch(&self, wd: &WatchDescriptor, mask: EventMask, name: Option<&OsStr>) {
        let path = {
            let mut guard = self.watches.lock().recover();
            let table = &mut guard.1;
            if mask.contains(EventMask::IGNORED) {
                // The watch is gone (its directory was deleted, or it was removed).
                if let Some(p) = table.by_wd.remove(wd) {
                    table.by_path.remove(&p);
                }
                return;
            }
            let Some(dir) = table.by_wd.get(wd) else { return };
            match name {
                Some(n) if !n.is_empty() => dir.join(n),
                _ => dir.clone(),
            }
        };
        (self.handler)(Signal::Changed(&path));
    }

    pub(super) fn watch(&self, dir: &Path) -> Result<(), Refused> {
        let mut guard = self.watches.lock().recover();
        let (watches, table) = &mut *guard;
        match watches.add(dir, mask()) {
            Ok(wd) => {
                // The same inode watched under another path (a renamed directory): the kernel
                // hands back its descriptor, which now names this path.
                if let Some(old) = table.by_wd.insert(wd.clone(), dir.to_owned()) {
                    table.by_path.remove(&old);
                }
                table.by_path.insert(dir.to_owned(), wd);
                Ok(())
            }
            Err(e) => Err(match e.raw_os_error() {
                Some(libc::ENOENT | libc::ENOTDIR) => Refused::Gone,
                Some(libc::ENOSPC) => Refused::Limit,
                _ => Refused::Other(e.to_string()),
            }),
        }
    }

    pub(super) fn unwatch(&self, dir: &Path) {
        let mut guard = self.watches.lock().recover();
        let (watches, table) = &mut *guard;
        if let Some(wd) = table.by_path.remove(dir) {
            table.by_wd.remove(&wd);
            // Fails when the directory is gone and the kernel dropped the watch already.
            let _ = watches.remove(wd);
        }
    }
}
