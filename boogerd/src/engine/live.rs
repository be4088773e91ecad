//! One project's live state: changes noticed and not yet indexed, the mode of its watch, and
//! the wait that gives read-your-writes.
//!
//! The watcher's event handler records changes here (cheap: a lock and a set insert); the
//! followers take them in batches; queries wait here, briefly, for the batch that holds their
//! project's pending changes. It sits below both `watch` (which fills it) and `project`
//! (which owns one per project), so neither imports the other's internals.

use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use crate::base::sync::Recover;
use crate::engine::index::walk;

/// How the followers pace themselves; the defaults suit editors and branch switches alike.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// A batch is applied once its directory has been quiet this long...
    pub quiet: Duration,
    /// ...or once its first change has waited this long (continuous writes).
    pub max_delay: Duration,
    /// How often a missing project directory is looked for.
    pub missing_poll: Duration,
    /// How often a project whose events cannot be trusted is re-walked.
    pub rescan: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            quiet: Duration::from_millis(25),
            max_delay: Duration::from_millis(500),
            missing_poll: Duration::from_secs(2),
            rescan: Duration::from_secs(60),
        }
    }
}

/// Pending paths listed in answers and `status`; beyond this only the count is given.
const LISTED: usize = 20;
/// How long a query waits for its project's pending changes to reach the index
/// (read-your-writes): an agent that just saved a few files finds its edits, also on a large
/// project whose batch takes a while...
const FRESH_WAIT: Duration = Duration::from_millis(500);
/// ...but while more files than can be listed are pending (a build writing sources),
/// answers go on sooner and list what they do not include, unless the run applying them
/// will be done within [`FRESH_WAIT`] of the query's start (a branch switch: axum 200
/// commits apart, 212 files, is applied in about 160 ms and ranked 40 ms later), whose
/// answers are then those of the new branch rather than of the old one.
const STORM_WAIT: Duration = Duration::from_millis(100);
/// How often a query waiting on a storm looks at its run's estimate again.
const RUN_SLICE: Duration = Duration::from_millis(20);
/// Pending paths remembered for listing; beyond this only directories are kept.
const REMEMBERED: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub(crate) enum WatchState {
    /// Not followed (not registered, or the daemon is not watching yet).
    #[default]
    Off,
    /// Reconciling with the disk before the project counts as fresh.
    Starting,
    /// Every kept directory is watched; changes are applied as they come.
    Watching,
    /// Events cannot be trusted (watch limit, no watcher): the project is re-walked on a
    /// timer, and on every event that does arrive.
    Rescanning,
    /// The project directory is gone; its index is kept and the watch resumes when it returns.
    Missing,
    /// Watching is off (`--no-watch`): reconciled at start and by `booger index` only.
    Manual,
}

/// What the follower should do next.
pub(crate) enum Work {
    /// Re-walk the whole project.
    Whole,
    /// Re-survey these directories (relative).
    Dirs(Vec<String>),
    /// Events were lost after this time: find what changed since by its metadata.
    Resurvey(SystemTime),
    /// See whether a missing project is back.
    CheckMissing,
}

/// The last batch applied, for `status`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Batch {
    pub at: String,
    /// Files whose chunks changed (written or removed).
    pub changed: u64,
    pub surveyed: u64,
    pub ms: u64,
}

/// The last re-survey after lost events, for `status`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Resurvey {
    pub at: String,
    /// Directories and files statted.
    pub statted: u64,
    /// Directories found changed (then surveyed as a batch).
    pub changed_dirs: u64,
    pub ms: u64,
}

/// The part of a project's state an answer reports: what it could not wait for.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Freshness {
    pub state: WatchState,
    /// Paths changed on disk and not yet in the index (first few).
    pub pending: Vec<String>,
    pub pending_count: usize,
    /// Why the project is not simply watching, if it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The OS dropped file events and the re-survey that finds their changes has not
    /// finished: files other than `pending` may have changed too.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub events_lost: bool,
    /// An index run is going while the project starts (its first index, or catching up):
    /// files read so far and files to read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexing: Option<(u64, u64)>,
}

#[derive(Default)]
struct State {
    mode: WatchState,
    reason: Option<String>,
    // Noticed, not yet taken.
    whole: bool,
    dirs: BTreeSet<String>,
    paths: BTreeSet<String>,
    /// More paths changed than `paths` holds.
    paths_overflowed: usize,
    last_event: Option<Instant>,
    first_event: Option<Instant>,
    /// Events were lost after this time (the earliest, if several overflows).
    lost_since: Option<SystemTime>,
    /// Taken by the batch being applied.
    applying: Option<Vec<String>>,
    /// When the oldest change of the batch being applied was noticed.
    applying_since: Option<Instant>,
    /// The batch being applied is a re-survey after lost events.
    resurveying: bool,
    /// A query is waiting: apply now rather than wait for quiet.
    urgent: bool,
    stop: bool,
    /// Timers of the modes that poll: the next re-walk of a rescanning project, the next
    /// look for a missing one.
    rescan_due: Option<Instant>,
    missing_check_due: Option<Instant>,
    // Figures for `status`.
    watched_dirs: usize,
    batches: u64,
    files_changed: u64,
    last_batch: Option<Batch>,
    overflows: u64,
    whole_walks: u64,
    last_whole: Option<Batch>,
    resurveys: u64,
    last_resurvey: Option<Resurvey>,
}

/// What [`Live::poll`] found.
pub(crate) enum Poll {
    /// Do this now.
    Work(Work),
    /// Nothing yet; ask again at this time (or when woken).
    At(Instant),
    /// Nothing until something is noticed.
    Idle,
    /// The project is no longer followed.
    Stop,
}

/// The watcher, as a project's live state sees it.
pub(crate) trait Link: Send + Sync {
    /// The project has something new for the followers.
    fn wake(&self);
    /// Hands over every event the OS holds now, so that what is pending is known exactly.
    fn drain(&self) {}
}

#[derive(Default)]
pub(crate) struct Live {
    state: Mutex<State>,
    /// Signalled on every change of state: a finished batch for waiting queries.
    changed: Condvar,
    /// The watcher (set once the project is followed).
    link: std::sync::OnceLock<std::sync::Arc<dyn Link>>,
}

impl Live {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().recover()
    }

    /// Connects this project to the watcher that applies its changes.
    pub(crate) fn set_link(&self, link: std::sync::Arc<dyn Link>) {
        let _ = self.link.set(link);
    }

    /// Tells waiting queries and the followers that the state changed. Called with the
    /// state unlocked: the followers lock their own state, then this one.
    fn signal(&self) {
        self.changed.notify_all();
        if let Some(l) = self.link.get() {
            l.wake();
        }
    }

    pub(crate) fn mode(&self) -> WatchState {
        self.lock().mode
    }

    pub(crate) fn set_mode(&self, mode: WatchState, reason: Option<String>) {
        let mut st = self.lock();
        if st.mode != mode || st.reason != reason {
            tracing::debug!(?mode, reason = reason.as_deref().unwrap_or(""), "watch mode");
        }
        st.mode = mode;
        st.reason = reason;
        drop(st);
        self.signal();
    }

    pub(crate) fn set_watched_dirs(&self, n: usize) {
        self.lock().watched_dirs = n;
    }

    /// Records a change of `rel` (relative to the project root; `""` is the root itself).
    pub(crate) fn noticed(&self, rel: &str) {
        if rel.split('/').any(|c| walk::is_never(std::ffi::OsStr::new(c))) {
            return; // the index's own files, VCS internals
        }
        let mut st = self.lock();
        let name = rel.rsplit('/').next().unwrap_or(rel);
        if rel.is_empty() || matches!(name, ".gitignore" | ".ignore" | ".gitattributes") {
            // The root itself moved or vanished, or ignore rules or attributes changed: only a whole walk
            // knows what that means.
            st.whole = true;
        } else {
            st.dirs.insert(crate::source::parent_dir(rel).to_owned());
        }
        if !rel.is_empty() {
            if st.paths.len() < REMEMBERED {
                st.paths.insert(rel.to_owned());
            } else if !st.paths.contains(rel) {
                st.paths_overflowed += 1;
            }
        }
        let now = Instant::now();
        st.last_event = Some(now);
        st.first_event.get_or_insert(now);
        drop(st);
        self.signal();
    }

    /// Asks for a whole re-walk (start-up, lost events, an explicit `index`).
    pub(crate) fn request_whole(&self) {
        let mut st = self.lock();
        st.whole = true;
        st.first_event.get_or_insert_with(Instant::now);
        st.last_event.get_or_insert_with(Instant::now);
        drop(st);
        self.signal();
    }

    /// The OS dropped events, all of them after `since`: re-survey what changed since then,
    /// and count it for `status`.
    pub(crate) fn overflowed(&self, since: SystemTime) {
        let mut st = self.lock();
        st.overflows += 1;
        st.lost_since = Some(st.lost_since.map_or(since, |s| s.min(since)));
        let now = Instant::now();
        st.last_event = Some(now);
        st.first_event.get_or_insert(now);
        drop(st);
        self.signal();
    }

    /// Queues directories for a follow-up survey (new directories, once their watch is on).
    pub(crate) fn requeue(&self, dirs: impl IntoIterator<Item = String>) {
        let mut st = self.lock();
        st.dirs.extend(dirs);
        let now = Instant::now();
        st.last_event = Some(now);
        st.first_event.get_or_insert(now);
        drop(st);
        self.signal();
    }

    pub(crate) fn stop(&self) {
        self.lock().stop = true;
        self.signal();
    }

    /// What the followers should do for this project now. Changes are taken once they have
    /// been quiet for `quiet`, or have waited `max_delay`, or a query is waiting for them; a
    /// missing project is looked for every `missing_poll`, a rescanning one re-walked every
    /// `rescan`. A project with nothing to do asks for no timer: idle costs nothing.
    pub(crate) fn poll(&self, now: Instant, t: &Timing) -> Poll {
        let mut st = self.lock();
        if st.stop {
            return Poll::Stop;
        }
        if st.whole || !st.dirs.is_empty() || st.lost_since.is_some() {
            let quiet_for = st.last_event.map_or(t.quiet, |e| now.saturating_duration_since(e));
            let waited = st.first_event.map_or(t.max_delay, |e| now.saturating_duration_since(e));
            if st.urgent || quiet_for >= t.quiet || waited >= t.max_delay {
                return Poll::Work(self.take(&mut st));
            }
            let wait = (t.quiet - quiet_for).min(t.max_delay.saturating_sub(waited)).max(Duration::from_millis(1));
            return Poll::At(now + wait);
        }
        match st.mode {
            WatchState::Missing => {
                let due = *st.missing_check_due.get_or_insert(now + t.missing_poll);
                if now < due {
                    return Poll::At(due);
                }
                st.missing_check_due = None;
                Poll::Work(Work::CheckMissing)
            }
            WatchState::Rescanning => {
                let due = *st.rescan_due.get_or_insert(now + t.rescan);
                if now < due {
                    return Poll::At(due);
                }
                st.whole = true;
                Poll::Work(self.take(&mut st))
            }
            _ => Poll::Idle,
        }
    }

    fn take(&self, st: &mut State) -> Work {
        let paths: Vec<String> = std::mem::take(&mut st.paths).into_iter().collect();
        st.applying = Some(paths);
        st.applying_since = st.first_event.or(Some(Instant::now()));
        st.paths_overflowed = 0;
        st.first_event = None;
        st.last_event = None;
        st.urgent = false;
        st.rescan_due = None;
        if std::mem::take(&mut st.whole) {
            // A whole walk covers lost events too.
            st.dirs.clear();
            st.lost_since = None;
            return Work::Whole;
        }
        if let Some(since) = st.lost_since.take() {
            st.resurveying = true;
            // The re-survey finds these directories again if they changed; the ones that
            // did not are left for the next batch.
            return Work::Resurvey(since);
        }
        Work::Dirs(std::mem::take(&mut st.dirs).into_iter().collect())
    }

    /// The batch taken by the last [`next_work`](Self::next_work) is in the index.
    pub(crate) fn applied(&self, batch: Option<Batch>) {
        let mut st = self.lock();
        st.applying = None;
        st.applying_since = None;
        st.resurveying = false;
        if let Some(b) = batch {
            st.batches += 1;
            st.files_changed += b.changed;
            st.last_batch = Some(b);
        }
        drop(st);
        self.signal();
    }

    /// A whole walk ended (start-up, a changed ignore file, a rescanning timer): counted for
    /// `status` with its cost.
    pub(crate) fn walked_whole(&self, walk: Batch) {
        let mut st = self.lock();
        st.whole_walks += 1;
        st.last_whole = Some(walk);
    }

    /// A re-survey after lost events ended: `surveyed` files statted, `changed` directories
    /// found to need a survey.
    pub(crate) fn resurveyed(&self, survey: Resurvey) {
        let mut st = self.lock();
        st.resurveys += 1;
        st.last_resurvey = Some(survey);
    }

    /// Read-your-writes: if changes to this project are queued or being applied, waits (see
    /// [`FRESH_WAIT`]) for them to reach the index, then says what is still pending.
    /// `run_left` estimates what the index run under way still needs (`None`: no run, or no
    /// estimate yet).
    pub(crate) fn wait_fresh(&self, run_left: impl Fn() -> Option<Duration>) -> Freshness {
        let started = Instant::now();
        // Events the OS holds but nobody has read yet are changes made before this query.
        if let Some(l) = self.link.get() {
            l.drain();
        }
        let mut st = self.lock();
        let many = freshness(&st).pending_count > LISTED;
        let deadline = started + if many { STORM_WAIT } else { FRESH_WAIT };
        let busy = |st: &State| st.applying.is_some() || !st.dirs.is_empty() || st.whole || st.lost_since.is_some();
        if busy(&st) && st.mode != WatchState::Missing {
            st.urgent = true;
            drop(st);
            self.signal();
            st = self.lock();
            while busy(&st) {
                let now = Instant::now();
                // A storm's run that will end soon is waited for: asked again every slice, as
                // its estimate firms up.
                let soon =
                    many && st.applying.is_some() && run_left().is_some_and(|left| now + left <= started + FRESH_WAIT);
                let until = if soon { started + FRESH_WAIT } else { deadline };
                if now >= until {
                    break;
                }
                let slice = if many { (until - now).min(RUN_SLICE) } else { until - now };
                st = self.changed.wait_timeout(st, slice).recover().0;
            }
        }
        freshness(&st)
    }

    /// Changes are queued (not yet taken by the follower).
    pub(crate) fn has_work(&self) -> bool {
        let st = self.lock();
        st.whole || !st.dirs.is_empty() || st.lost_since.is_some()
    }

    /// How long the oldest change not yet in the index has waited (zero when none waits): the
    /// index's freshness lag.
    pub(crate) fn lag(&self) -> Duration {
        let st = self.lock();
        let oldest = match (st.applying_since, st.first_event) {
            (Some(a), Some(f)) => Some(a.min(f)),
            (a, f) => a.or(f),
        };
        oldest.map_or(Duration::ZERO, |t| t.elapsed())
    }

    /// What is pending now, without waiting.
    pub(crate) fn freshness(&self) -> Freshness {
        freshness(&self.lock())
    }

    /// Everything `status` shows about the watch.
    pub(crate) fn status(&self) -> serde_json::Value {
        let st = self.lock();
        let f = freshness(&st);
        serde_json::json!({
            "state": st.mode,
            "reason": st.reason,
            "watched_dirs": st.watched_dirs,
            "queue": f.pending_count,
            "pending": f.pending,
            "applying": st.applying.is_some(),
            "batches_applied": st.batches,
            "files_changed": st.files_changed,
            "last_change_applied": st.last_batch,
            "overflows": st.overflows,
            "resurveys": st.resurveys,
            "last_resurvey": st.last_resurvey,
            "whole_walks": st.whole_walks,
            "last_whole_walk": st.last_whole,
        })
    }
}

fn freshness(st: &State) -> Freshness {
    let mut all: BTreeSet<&str> = st.paths.iter().map(String::as_str).collect();
    if let Some(a) = &st.applying {
        all.extend(a.iter().map(String::as_str));
    }
    let count = all.len() + st.paths_overflowed;
    Freshness {
        state: st.mode,
        pending: all.into_iter().take(LISTED).map(str::to_owned).collect(),
        pending_count: count,
        reason: st.reason.clone(),
        events_lost: st.lost_since.is_some() || st.resurveying,
        indexing: None,
    }
}
