//! The MCP-over-HTTP sessions both HTTP fronts keep (the daemon's `/mcp` and the team
//! server's): an id handed out by `initialize`, owned by whoever opened it (the team server's
//! token; the daemon has one owner), ended when unused for [`Limits::idle`], and bounded in
//! number: at a limit, the session unused longest gives way if it has rested
//! [`Limits::evictable`], else the new one is refused, so opening sessions cannot end the
//! ones in use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::base::sync::Recover;

/// How many sessions are kept and for how long.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Sessions kept at once.
    pub max: usize,
    /// Sessions one owner keeps at once.
    pub per_owner: usize,
    /// A session unused this long is ended when a new one opens.
    pub idle: Duration,
    /// How long a session must have gone unused before a new one may take its place.
    pub evictable: Duration,
}

/// What a session holds, told when the session ends (closed, idle or evicted).
pub(crate) trait Ends {
    fn end(&self) {}
}

impl Ends for () {}

struct Entry<O, V> {
    owner: O,
    value: Arc<V>,
    last_used: Instant,
}

pub(crate) struct Sessions<O, V> {
    limits: Limits,
    map: Mutex<HashMap<String, Entry<O, V>>>,
}

impl<O: Copy + PartialEq, V: Ends> Sessions<O, V> {
    pub(crate) fn new(limits: Limits) -> Self {
        Self { limits, map: Mutex::new(HashMap::new()) }
    }

    /// How many are open (the team server's `/metrics`; the daemon counts its own as it opens
    /// and ends them).
    #[cfg_attr(not(feature = "team"), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.map.lock().recover().len()
    }

    /// The session `id` if `owner` opened it, marked used. Whether it exists for another owner
    /// is not said.
    pub(crate) fn get(&self, id: &str, owner: O) -> Option<Arc<V>> {
        let mut map = self.map.lock().recover();
        let entry = map.get_mut(id).filter(|e| e.owner == owner)?;
        entry.last_used = Instant::now();
        Some(entry.value.clone())
    }

    /// Keeps `value` as session `id` of `owner`, first ending the idle sessions and, at a
    /// limit, the one unused longest (the owner's own at its limit); false, with nothing kept,
    /// when that one has not rested long enough.
    pub(crate) fn open(&self, id: String, owner: O, value: V) -> bool {
        let limits = self.limits;
        let mut map = self.map.lock().recover();
        map.retain(|_, e| {
            let keep = e.last_used.elapsed() < limits.idle;
            if !keep {
                e.value.end();
            }
            keep
        });
        let mine = map.values().filter(|e| e.owner == owner).count();
        if mine >= limits.per_owner || map.len() >= limits.max {
            let oldest = map
                .iter()
                .filter(|(_, e)| mine < limits.per_owner || e.owner == owner)
                .min_by_key(|(_, e)| e.last_used)
                .filter(|(_, e)| e.last_used.elapsed() >= limits.evictable)
                .map(|(k, _)| k.clone());
            let Some(oldest) = oldest else { return false };
            if let Some(e) = map.remove(&oldest) {
                e.value.end();
            }
        }
        map.insert(id, Entry { owner, value: Arc::new(value), last_used: Instant::now() });
        true
    }

    /// Ends session `id` if `owner` opened it.
    pub(crate) fn close(&self, id: &str, owner: O) -> bool {
        let mut map = self.map.lock().recover();
        if !map.get(id).is_some_and(|e| e.owner == owner) {
            return false;
        }
        map.remove(id).inspect(|e| e.value.end()).is_some()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    struct Counted(Arc<AtomicUsize>);

    impl Ends for Counted {
        fn end(&self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn limits(max: usize, per_owner: usize, evictable: Duration) -> Limits {
        Limits { max, per_owner, idle: Duration::from_secs(3600), evictable }
    }

    #[test]
    fn a_session_is_its_owners_alone_and_ends_once() {
        let ended = Arc::new(AtomicUsize::new(0));
        let s = Sessions::new(limits(4, 4, Duration::ZERO));
        assert!(s.open("a".into(), 1, Counted(ended.clone())));
        assert!(s.get("a", 1).is_some());
        assert!(s.get("a", 2).is_none(), "another owner's session is not found");
        assert!(!s.close("a", 2));
        assert!(s.close("a", 1));
        assert!(!s.close("a", 1));
        assert_eq!(ended.load(Ordering::Relaxed), 1);
        assert_eq!(s.len(), 0);
    }

    #[test]
    fn at_a_limit_the_longest_unused_gives_way_the_owners_own_first() {
        let s: Sessions<i64, ()> = Sessions::new(limits(3, 2, Duration::ZERO));
        assert!(s.open("a1".into(), 1, ()));
        assert!(s.open("b1".into(), 2, ()));
        assert!(s.open("a2".into(), 1, ()));
        // Owner 1 at its limit: its own oldest (a1) ends, not owner 2's b1.
        assert!(s.open("a3".into(), 1, ()));
        assert!(s.get("a1", 1).is_none() && s.get("b1", 2).is_some());
        // All at the limit: the one unused longest ends (a2; b1 was just used).
        assert!(s.open("c1".into(), 3, ()));
        assert!(s.get("a2", 1).is_none() && s.get("b1", 2).is_some() && s.get("a3", 1).is_some());
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn sessions_in_use_are_not_ended_to_open_another() {
        let s: Sessions<(), ()> = Sessions::new(limits(2, 2, Duration::from_secs(300)));
        assert!(s.open("a".into(), (), ()));
        assert!(s.open("b".into(), (), ()));
        assert!(!s.open("c".into(), (), ()), "refused: neither has rested");
        assert!(s.get("a", ()).is_some() && s.get("b", ()).is_some() && s.get("c", ()).is_none());
    }
}
