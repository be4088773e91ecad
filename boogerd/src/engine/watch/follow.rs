//! The followers: a fixed pool of threads, shared by every project, that turn noticed
//! changes into index runs and keep the set of watched directories equal to the set the
//! walker keeps. Threads do not grow with projects; one project's long walk holds one
//! thread, and the other follows the rest.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use super::Watcher;
use crate::base::sync::Recover;
use crate::engine::index::walk;
use crate::engine::live::{Batch, Poll, Resurvey, WatchState, Work};
use crate::engine::project::{AfterBatch, IndexError, ProjectHandle};
use crate::source::Survey;

/// New directories are re-surveyed one by one after their watch is on, unless there are
/// more than this many and they are a quarter of the project or more (its first walk): then
/// the whole project is re-walked.
const RESURVEY_DIRS: usize = 64;
/// Follower threads: two, so an edit in one project is applied while another is walked.
pub(super) const THREADS: usize = 2;

/// One followed project.
struct Followed {
    handle: Arc<ProjectHandle>,
    /// The directories this project has watched, relative to its root (taken by the thread
    /// working on it).
    kept: BTreeSet<String>,
    /// A thread is working on it.
    busy: bool,
}

#[derive(Default)]
struct State {
    projects: Vec<Followed>,
    /// Bumped by every wake-up, so a thread about to sleep sees what it missed.
    epoch: u64,
}

/// The projects being followed and the threads that follow them.
#[derive(Default)]
pub(super) struct Followers {
    state: Mutex<State>,
    wake: Condvar,
}

impl crate::engine::live::Link for Followers {
    fn wake(&self) {
        let mut st = self.lock();
        st.epoch += 1;
        drop(st);
        self.wake.notify_all();
    }
}

impl Followers {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().recover()
    }

    pub(super) fn add(&self, handle: Arc<ProjectHandle>) {
        self.lock().projects.push(Followed { handle, kept: BTreeSet::new(), busy: false });
        crate::engine::live::Link::wake(self);
    }

    /// Starts the follower threads.
    pub(super) fn start(w: &Arc<Watcher>) {
        for i in 0..THREADS {
            let w = Arc::clone(w);
            std::thread::Builder::new()
                .name(format!("booger-follow-{i}"))
                .spawn(move || run(&w))
                .expect("spawn follower thread");
        }
    }

    /// Blocks until some project not held by another thread has work; claims it.
    fn next(&self, timing: &crate::engine::live::Timing) -> (Arc<ProjectHandle>, BTreeSet<String>, Poll) {
        let mut st = self.lock();
        loop {
            let now = Instant::now();
            let mut next_at: Option<Instant> = None;
            for f in st.projects.iter_mut().filter(|f| !f.busy) {
                match f.handle.live.poll(now, timing) {
                    p @ (Poll::Work(_) | Poll::Stop) => {
                        f.busy = true;
                        return (Arc::clone(&f.handle), std::mem::take(&mut f.kept), p);
                    }
                    Poll::At(t) => next_at = Some(next_at.map_or(t, |n| n.min(t))),
                    Poll::Idle => {}
                }
            }
            let epoch = st.epoch;
            // Nothing to do: sleep until woken, or until the earliest timer.
            while st.epoch == epoch {
                st = match next_at {
                    Some(t) if t <= Instant::now() => break,
                    Some(t) => self.wake.wait_timeout(st, t - Instant::now()).recover().0,
                    None => self.wake.wait(st).recover(),
                };
                if next_at.is_some_and(|t| t <= Instant::now()) {
                    break;
                }
            }
        }
    }

    /// Hands a project back after working on it (or forgets it, once stopped).
    fn done(&self, handle: &Arc<ProjectHandle>, kept: BTreeSet<String>, stopped: bool) {
        let mut st = self.lock();
        if stopped {
            st.projects.retain(|f| !Arc::ptr_eq(&f.handle, handle));
        } else if let Some(f) = st.projects.iter_mut().find(|f| Arc::ptr_eq(&f.handle, handle)) {
            f.kept = kept;
            f.busy = false;
        }
        st.epoch += 1;
        drop(st);
        // Another thread may have skipped this project while it was busy.
        self.wake.notify_all();
    }
}

/// One follower thread: forever, take a project with work, do it, hand it back.
fn run(w: &Arc<Watcher>) {
    let followers = Arc::clone(&w.followers);
    loop {
        let (handle, mut kept, poll) = followers.next(&w.timing);
        let work = match poll {
            Poll::Work(work) => work,
            _ => {
                w.unwatch(&absolute(&handle, kept.iter()));
                handle.live.set_mode(WatchState::Off, None);
                followers.done(&handle, BTreeSet::new(), true);
                continue;
            }
        };
        let live = &handle.live;
        let (batch, refresh) = match work {
            Work::CheckMissing => {
                if crate::engine::project::root_present(&handle.root) {
                    tracing::info!(root = %handle.root.display(), "project directory is back");
                    live.set_mode(WatchState::Starting, None);
                    live.request_whole();
                }
                (None, None)
            }
            Work::Whole => (whole(w, &handle, &mut kept), None),
            Work::Dirs(dirs) => part(w, &handle, &mut kept, dirs),
            Work::Resurvey(since) => match resurvey(&handle, &kept, since) {
                Some(dirs) => part(w, &handle, &mut kept, dirs),
                None => (whole(w, &handle, &mut kept), None),
            },
        };
        // Waiting queries go on now; the ranking index catches up right after.
        live.applied(batch);
        if let Some(r) = refresh {
            r.run();
        }
        crate::base::memory::trim_after_work();
        followers.done(&handle, kept, false);
    }
}

/// Re-walks the whole project and watches every directory it keeps.
fn whole(w: &Watcher, handle: &Arc<ProjectHandle>, kept: &mut BTreeSet<String>) -> Option<Batch> {
    let started = Instant::now();
    let result = {
        let _one_at_a_time = w.whole_runs.lock().recover();
        handle.index(w.defaults)
    };
    match result {
        Ok(report) => {
            let found: BTreeSet<String> = report.dirs.iter().cloned().collect();
            let synced = sync_watches(w, handle, kept, &found, &[String::new()]);
            settle(w, handle, synced, kept.len());
            let b = batch(report.changed.len(), report.files, started);
            handle.live.walked_whole(b.clone());
            Some(b)
        }
        Err(e) => failed(w, handle, kept, e),
    }
}

/// After lost events: the directories that may have changed, found by their metadata (see
/// [`super::resurvey`]); `None` if the index cannot say, and a whole walk must.
fn resurvey(handle: &ProjectHandle, kept: &BTreeSet<String>, since: std::time::SystemTime) -> Option<Vec<String>> {
    let started = Instant::now();
    let store = handle.store().ok()?;
    match super::resurvey::changed_since(&handle.root, kept, &store, since) {
        Ok(found) => {
            tracing::info!(
                root = %handle.root.display(),
                statted = found.statted,
                dirs = found.dirs.len(),
                ms = started.elapsed().as_millis() as u64,
                "re-surveyed after lost events"
            );
            handle.live.resurveyed(Resurvey {
                at: crate::base::time::now_rfc3339(),
                statted: found.statted,
                changed_dirs: found.dirs.len() as u64,
                ms: started.elapsed().as_millis() as u64,
            });
            Some(found.dirs)
        }
        Err(e) => {
            tracing::warn!(root = %handle.root.display(), error = %e, "re-survey failed; walking the whole project");
            None
        }
    }
}

/// Re-surveys the dirty directories: their files, their new subdirectories (walked whole)
/// and their vanished ones (whose files leave the index).
fn part(
    w: &Watcher,
    handle: &Arc<ProjectHandle>,
    kept: &mut BTreeSet<String>,
    dirs: Vec<String>,
) -> (Option<Batch>, Option<AfterBatch>) {
    let started = Instant::now();
    // An event from a directory no longer watched (a watch removed while its events were
    // in flight) has nothing to say.
    let shallow: Vec<String> = dirs.into_iter().filter(|d| kept.contains(d)).collect();
    if shallow.is_empty() {
        return (None, None);
    }
    let root = handle.root.clone();
    let mut tree = walk::survey(&root, &shallow, &[]);
    let found: BTreeSet<&str> = tree.dirs.iter().map(String::as_str).collect();
    let mut deep: Vec<String> = Vec::new();
    for d in &shallow {
        if !found.contains(d.as_str()) {
            deep.push(d.clone()); // the directory itself is gone
            continue;
        }
        deep.extend(children(kept, d).filter(|c| !found.contains(c.as_str())).cloned());
    }
    let new: Vec<String> = found.iter().filter(|d| !kept.contains(**d)).map(|d| (*d).to_owned()).collect();
    let more = walk::survey(&root, &[], &new);
    deep.extend(new);
    tree.files.extend(more.files);
    tree.skipped.extend(more.skipped);
    tree.dirs.extend(more.dirs);
    let scope = Survey { shallow, deep };
    tracing::debug!(ms = started.elapsed().as_millis() as u64, files = tree.files.len(), "surveyed");
    match handle.index_part(tree, &scope, w.defaults) {
        Ok((report, refresh)) => {
            let found: BTreeSet<String> = report.dirs.iter().cloned().collect();
            let synced = sync_watches(w, handle, kept, &found, &scope.deep);
            settle(w, handle, synced, kept.len());
            (Some(batch(report.changed.len(), report.files, started)), Some(refresh))
        }
        Err(e) => (failed(w, handle, kept, e), None),
    }
}

/// After a run: watch the directories found that are not watched yet, and stop watching
/// those under `covered` (the parts walked whole) that were not found. Returns the ones
/// newly watched, and why some could not be.
fn sync_watches(
    w: &Watcher,
    handle: &ProjectHandle,
    kept: &mut BTreeSet<String>,
    found: &BTreeSet<String>,
    covered: &[String],
) -> (Vec<String>, Option<String>) {
    let gone: Vec<String> = kept
        .iter()
        .filter(|k| covered.iter().any(|c| crate::source::is_under(k, c)) && !found.contains(*k))
        .cloned()
        .collect();
    // Unwatch first: a directory renamed within the project keeps its inode, and the OS
    // would hand the new path the old path's watch.
    w.unwatch(&absolute(handle, gone.iter()));
    for g in &gone {
        kept.remove(g);
    }
    let wanted: Vec<String> = found.iter().filter(|d| !kept.contains(*d)).cloned().collect();
    let (refused, error) = w.watch(&absolute(handle, wanted.iter()));
    let refused: BTreeSet<PathBuf> = refused.into_iter().collect();
    let added: Vec<String> =
        wanted.into_iter().filter(|d| !refused.contains(&absolute(handle, std::iter::once(d))[0])).collect();
    kept.extend(added.iter().cloned());
    handle.live.set_watched_dirs(kept.len());
    let why = (!refused.is_empty()).then(|| {
        error.unwrap_or_else(|| {
            format!(
                "watch limit reached: {} directories not watched (budget {} across projects; raise \
                 fs.inotify.max_user_watches or BOOGER_MAX_WATCHES); re-walked every {} s",
                refused.len(),
                w.budget(),
                w.timing.rescan.as_secs()
            )
        })
    });
    (added, why)
}

/// New directories were watched after they were walked: whatever was written in between is
/// caught by surveying them again. The project is fresh once a run adds no watch.
fn settle(w: &Watcher, handle: &ProjectHandle, (added, refused): (Vec<String>, Option<String>), watched: usize) {
    let live = &handle.live;
    if added.len() > RESURVEY_DIRS && added.len() * 4 >= watched {
        live.request_whole();
    } else if !added.is_empty() {
        live.requeue(added);
    }
    if w.manual {
        live.set_mode(WatchState::Manual, None);
        return;
    }
    let trouble = w.unavailable.clone().or(refused);
    match trouble {
        Some(why) => {
            if live.mode() != WatchState::Rescanning {
                tracing::warn!(root = %handle.root.display(), "{why}");
            }
            live.set_mode(WatchState::Rescanning, Some(why));
        }
        // Starting (or recovering) ends with a run that leaves nothing to do.
        None if !live.has_work() => live.set_mode(WatchState::Watching, None),
        None => {}
    }
}

fn failed(w: &Watcher, handle: &ProjectHandle, kept: &mut BTreeSet<String>, e: IndexError) -> Option<Batch> {
    match e {
        IndexError::Missing(_) => {
            tracing::warn!(root = %handle.root.display(), "project directory is missing; its index is kept");
            w.unwatch(&absolute(handle, kept.iter()));
            kept.clear();
            handle.live.set_watched_dirs(0);
            handle.live.set_mode(WatchState::Missing, Some("the project directory is missing".to_owned()));
        }
        IndexError::Store(crate::store::StoreError::Cancelled) => {
            tracing::info!(root = %handle.root.display(), "index run cancelled: the project was removed");
        }
        e => {
            tracing::error!(root = %handle.root.display(), error = %e, "applying changes failed");
            handle.live.set_mode(WatchState::Rescanning, Some(format!("applying changes failed: {e}")));
        }
    }
    None
}

fn children<'a>(kept: &'a BTreeSet<String>, dir: &'a str) -> impl Iterator<Item = &'a String> + 'a {
    kept.iter().filter(move |k| !k.is_empty() && k.as_str() != dir && crate::source::parent_dir(k) == dir)
}

fn absolute<'a>(handle: &ProjectHandle, rels: impl Iterator<Item = &'a String>) -> Vec<PathBuf> {
    rels.map(|r| if r.is_empty() { handle.root.clone() } else { handle.root.join(r) }).collect()
}

fn batch(changed: usize, surveyed: u64, started: Instant) -> Batch {
    Batch {
        at: crate::base::time::now_rfc3339(),
        changed: changed as u64,
        surveyed,
        ms: started.elapsed().as_millis() as u64,
    }
}
