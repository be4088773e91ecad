//! Giving freed memory back to the OS.
//!
//! glibc keeps what a thread frees in that thread's arena for reuse, so after a burst of
//! work (an index run, an embedding pass, a run of queries on the tokio and blocking
//! threads) the daemon's RSS is what it once held, not what it holds. `trim` hands the free
//! pages back; the daemon calls it after embedding passes and once a minute.

use std::time::Duration;

/// How often the daemon trims while it runs.
pub const TRIM_EVERY: Duration = Duration::from_secs(60);

/// Returns free heap pages to the OS (a few milliseconds; a no-op off glibc).
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The daemon's resident memory and thread count, from `/proc/self/status` (`None` where
/// there is no procfs).
pub fn process() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
    };
    Some((field("VmRSS:")? * 1024, field("Threads:")?))
}
