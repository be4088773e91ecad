//! What `/proc` and `/sys` say of a process and of the machine: memory, CPU ticks, cores.

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

/// The first `n` CPUs a process may be pinned to, one hardware thread of each physical core
/// before any core's second (from `/sys`'s `thread_siblings_list`; in number order where that
/// is unreadable), as a `taskset -c` list: on a machine whose CPUs 0 and 1 are two threads of
/// one core, "2 cores" pinned to `0-1` would be one.
pub fn cpu_list(n: usize) -> String {
    let all = std::thread::available_parallelism().map_or(1, |c| c.get());
    let siblings = |cpu: usize| {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"))
            .map_or_else(|_| cpu.to_string(), |s| s.trim().to_owned())
    };
    // Each CPU's rank among its core's threads: the core's first CPU ranks 0.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut ranked: Vec<(usize, usize)> = (0..all)
        .map(|cpu| {
            let rank = seen.entry(siblings(cpu)).or_insert(0);
            *rank += 1;
            (*rank - 1, cpu)
        })
        .collect();
    ranked.sort_unstable();
    ranked.iter().take(n.max(1)).map(|(_, cpu)| cpu.to_string()).collect::<Vec<_>>().join(",")
}
