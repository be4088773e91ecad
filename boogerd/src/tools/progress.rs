//! Progress of a call still running, for a client that asks on another connection
//! ([`booger_proto::wire::PROGRESS`]): the CLI draws it for any long call without knowing the tool.
//!
//! A call made with a progress token is registered while it runs (its [`Followed`], held
//! by the call); its handler says how to measure it ([`Followed::report`], through
//! `Call::report_progress`), and [`of`] measures it when asked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use booger_proto::wire::Progress;

use crate::base::sync::Recover;
use crate::engine::project::ProjectHandle;

type Measure = Arc<dyn Fn() -> Option<Progress> + Send + Sync>;

/// At most this many calls are followed at once (tokens come from clients).
const FOLLOWED: usize = 256;
/// The longest token kept.
const TOKEN_CHARS: usize = 64;

fn running() -> &'static Mutex<HashMap<String, Option<Measure>>> {
    static RUNNING: std::sync::OnceLock<Mutex<HashMap<String, Option<Measure>>>> = std::sync::OnceLock::new();
    RUNNING.get_or_init(Default::default)
}

/// A call followed under its token until this is dropped.
pub(super) struct Followed(Option<String>);

impl Followed {
    /// How the call's progress is measured (a no-op for a call nobody follows).
    pub(super) fn report(&self, measure: impl Fn() -> Option<Progress> + Send + Sync + 'static) {
        if let Some(t) = &self.0 {
            running().lock().recover().insert(t.clone(), Some(Arc::new(measure)));
        }
    }
}

impl Drop for Followed {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            running().lock().recover().remove(&token);
        }
    }
}

/// Follows a call under `token` (none: nothing is followed).
pub(super) fn follow(token: Option<String>) -> Followed {
    let token = token.filter(|t| !t.is_empty() && t.chars().count() <= TOKEN_CHARS);
    let Some(token) = token else { return Followed(None) };
    let mut map = running().lock().recover();
    if map.len() >= FOLLOWED || map.contains_key(&token) {
        return Followed(None);
    }
    map.insert(token.clone(), None);
    Followed(Some(token))
}

/// The progress of the call followed under `token`, if it runs and reports any.
pub(crate) fn of(token: &str) -> Option<Progress> {
    let measure = running().lock().recover().get(token).cloned().flatten()?;
    measure()
}

/// A project's running index, in files (`None` when it is not indexing).
pub(super) fn of_index(handle: &ProjectHandle) -> Option<Progress> {
    use std::sync::atomic::Ordering::Relaxed;
    if !handle.is_indexing() {
        return None;
    }
    let p = &handle.progress;
    let (done, total) = (p.done.load(Relaxed), p.total.load(Relaxed));
    let elapsed = p.started.lock().recover().map_or(0.0, |s| s.elapsed().as_secs_f64());
    let per_s = (elapsed > 0.0).then(|| done as f64 / elapsed);
    let eta_s = per_s.filter(|r| *r > 0.0).map(|r| (total.saturating_sub(done) as f64 / r).ceil() as u64);
    Some(Progress { done, total, unit: "files".to_owned(), per_s, eta_s })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_followed_call_reports_until_it_ends_and_an_unfollowed_one_not_at_all() {
        let step = Arc::new(std::sync::atomic::AtomicU64::new(0));
        {
            let followed = follow(Some("t-1".to_owned()));
            assert_eq!(of("t-1"), None, "nothing reported yet");
            let s = Arc::clone(&step);
            followed.report(move || {
                let done = s.load(std::sync::atomic::Ordering::Relaxed);
                Some(Progress { done, total: 10, unit: "files".to_owned(), per_s: None, eta_s: None })
            });
            step.store(4, std::sync::atomic::Ordering::Relaxed);
            assert_eq!(of("t-1").map(|p| p.done), Some(4));
        }
        assert_eq!(of("t-1"), None, "gone once the call ends");
        let unfollowed = follow(None);
        unfollowed.report(|| unreachable!("nobody asks"));
        assert_eq!(of(""), None);
    }
}
