//! What `/proc` says of a process and of the machine: memory, CPU ticks.

use std::time::Duration;

/// A `/proc/<pid>/status` figure in kB (`"VmRSS:"`, `"VmHWM:"`), 0 if unreadable.
pub fn proc_status_kb(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// CPU ticks (1/100 s) process `pid` used over the next `secs` seconds.
pub fn cpu_ticks_over(pid: u32, secs: u64) -> u64 {
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(secs));
    cpu_ticks(pid) - before
}

/// CPU ticks (1/100 s) process `pid` has used so far.
pub fn cpu_ticks(pid: u32) -> u64 {
    let f = stat_fields(pid);
    f[11] + f[12]
}

/// [`cpu_ticks`] with those of the child processes `pid` has ended and waited for (git's,
/// for a daemon).
pub fn cpu_ticks_with_children(pid: u32) -> u64 {
    stat_fields(pid)[11..=14].iter().sum()
}

/// The numbers of `/proc/<pid>/stat` after the command's closing parenthesis (zeros for a
/// process gone): the parent's pid is 1, utime and stime 11 and 12, the waited-for
/// children's cutime and cstime 13 and 14.
pub fn stat_fields(pid: u32) -> Vec<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rfind(')').map_or("", |i| &stat[i + 2..]);
    let mut f: Vec<u64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0)).collect();
    f.resize(f.len().max(15), 0);
    f
}

/// The machine's CPU ticks so far, all cores: user (with nice), system (with interrupts),
/// waiting for I/O, idle.
pub fn machine_ticks() -> [u64; 4] {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> =
        stat.lines().next().unwrap_or("").split_whitespace().skip(1).map(|x| x.parse().unwrap_or(0)).collect();
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    [at(0) + at(1), at(2) + at(5) + at(6), at(4), at(3)]
}
