//! A time limit for the work of the calling thread: a heavy tool call runs within one, and
//! every SQLite statement the store runs on that thread is interrupted once it has passed
//! (see `Store::read`), so a call that would read too much of a huge index ends with an
//! answer saying how to narrow it instead of holding a heavy slot for minutes.

use std::cell::Cell;
use std::time::{Duration, Instant};

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `work` with a deadline `limit` from now; also says whether it passed meanwhile.
pub(crate) fn within<T>(limit: Duration, work: impl FnOnce() -> T) -> (T, bool) {
    let deadline = Instant::now() + limit;
    let outer = DEADLINE.replace(Some(deadline));
    let out = work();
    DEADLINE.set(outer);
    (out, Instant::now() > deadline)
}

/// The calling thread's deadline, if its work has one.
pub(crate) fn current() -> Option<Instant> {
    DEADLINE.get()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_holds_for_its_work_only() {
        assert_eq!(current(), None);
        let ((), passed) = within(Duration::from_secs(60), || assert!(current().is_some()));
        assert!(!passed);
        assert_eq!(current(), None);
        let ((), passed) = within(Duration::ZERO, || std::thread::sleep(Duration::from_millis(2)));
        assert!(passed);
    }
}
