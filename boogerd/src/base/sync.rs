//! One policy for a lock whose holder panicked: carry on with what it guards. Every critical
//! section in booger leaves its data whole between statements (a map entry in or out, a
//! counter bumped), so the data are usable; refusing them instead would turn one panicked
//! call into every later call panicking (the registry's lock held by a panicking call left
//! `/health`, `/metrics` and `projects` failing until a restart).

use std::sync::{LockResult, PoisonError};

/// `lock()`, `read()` and `write()` results, recovered from poisoning.
pub(crate) trait Recover<G> {
    fn recover(self) -> G;
}

impl<G> Recover<G> for LockResult<G> {
    fn recover(self) -> G {
        self.unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_lock_a_panicking_thread_held_still_gives_its_data() {
        let m = Arc::new(Mutex::new(vec![1]));
        let held = Arc::clone(&m);
        let _ = std::thread::spawn(move || {
            let mut v = held.lock().recover();
            v.push(2);
            panic!("while holding the lock");
        })
        .join();
        assert!(m.is_poisoned());
        assert_eq!(*m.lock().recover(), [1, 2]);
    }
}
