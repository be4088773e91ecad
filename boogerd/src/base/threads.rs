//! Threads that do background or heavy work run at a lower CPU priority, so that on a busy
//! machine the indexer's writer and the answers to short queries come first: parse workers
//! yield to the one SQLite writer (worth about a quarter of a full index's time on two cores),
//! the embedder and the ranking and trigram passes to everything, heavy calls (`grep` over
//! every chunk, git history) to `search`. And what must close apart from a runtime is dropped
//! on a thread of its own ([`drop_apart`]).

/// Lowers the calling thread's priority (nice 10; below normal on Windows) for good. On
/// Linux a thread's nice value is its own, and threads it starts (such as the transformer's
/// matrix-multiply pool) inherit it; raising it back would need privileges, so only threads
/// that stay background call this.
pub(crate) fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid has no preconditions; setpriority on our own thread id only changes
    // this thread's scheduling.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
    #[cfg(windows)]
    // SAFETY: the pseudo-handle of the calling thread, and a valid priority.
    unsafe {
        use windows_sys::Win32::System::Threading::{
            GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_BELOW_NORMAL,
        };
        SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL);
    }
}

/// The cores this process may use, read once: `available_parallelism` reads the cgroup's
/// quota files on every call, which cost a query more than its ranking's bookkeeping.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

/// Drops `value` on a thread of its own, and waits for it: for what closes itself on a runtime
/// of its own (the synchronous PostgreSQL client), which cannot start on a thread that drives
/// another (a daemon dropping its state as it stops panicked so).
#[cfg(feature = "team")]
pub(crate) fn drop_apart<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new().name("drop-apart".into()).spawn(move || drop(value)).map(|t| t.join());
}
