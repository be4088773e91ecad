//! Finding what changed after the OS dropped events, without a walk.
//!
//! Lost events all happened after the queue was last read empty. Since then, a directory
//! that gained, lost or renamed an entry has a newer mtime, and a file written in place has
//! a size or mtime the index does not have. So a stat of every watched directory and every
//! indexed file finds every directory that needs its survey: no file is read, no ignore rule
//! is matched, and a project where nothing changed costs a few stats per file.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::engine::index::walk;
use crate::store::{Store, StoreError};

/// Clocks and file systems disagree a little (coarse timestamps, a clock stepped back):
/// directories changed this long before the loss count as changed too.
const SLACK: Duration = Duration::from_secs(2);

/// What a re-survey found.
pub(super) struct Found {
    /// Directories to survey again (relative).
    pub dirs: Vec<String>,
    /// Directories and files statted.
    pub statted: u64,
}

/// The directories of `root` (among `kept`, the watched ones) that may have changed since
/// `since`, judged against `store`.
pub(super) fn changed_since(
    root: &Path,
    kept: &BTreeSet<String>,
    store: &Store,
    since: SystemTime,
) -> Result<Found, StoreError> {
    let after = since.checked_sub(SLACK).unwrap_or(SystemTime::UNIX_EPOCH);
    let mut dirs = BTreeSet::new();
    let mut statted = 0;
    for d in kept {
        statted += 1;
        let changed = std::fs::metadata(root.join(d)).and_then(|m| m.modified()).map_or(true, |t| t >= after);
        if changed {
            dirs.insert(d.clone());
        }
    }
    for (path, known) in store.file_states()? {
        let dir = crate::source::parent_dir(&path);
        if dirs.contains(dir) || !kept.contains(dir) {
            continue;
        }
        statted += 1;
        let same = std::fs::metadata(root.join(&path))
            .is_ok_and(|m| m.is_file() && m.len() == known.size && walk::mtime_ns(&m) == known.mtime_ns);
        if !same {
            dirs.insert(dir.to_owned());
        }
    }
    Ok(Found { dirs: dirs.into_iter().collect(), statted })
}
