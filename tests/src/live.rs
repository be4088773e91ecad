//! Driving a live daemon from benchmarks: one connection per project, tool calls, the
//! watch's state, and the process figures (CPU, context switches) a benchmark reports.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Env, Raw};

/// A connection that says hello for `root`.
pub fn session(env: &Env, root: &std::path::Path) -> Raw {
    let mut c = env.connect();
    let hello = c.request(
        1,
        "booger/hello",
        json!({ "protocol": booger_proto::wire::PROTOCOL_VERSION, "client": "bench", "project": root, "session": "bench" }),
    );
    assert!(hello.get("result").is_some(), "{hello}");
    c
}

pub fn call(c: &mut Raw, tool: &str, arguments: Value) -> Value {
    let r = c.request(2, "booger/call", json!({ "tool": tool, "arguments": arguments }));
    r["result"]["data"].clone()
}

pub fn search(c: &mut Raw, q: &str) -> Value {
    call(c, "search", json!({ "query": q, "output_mode": "files_with_matches" }))
}

pub fn status(c: &mut Raw) -> Value {
    call(c, "status", json!({}))
}

pub fn watch(c: &mut Raw) -> Value {
    status(c)["project"]["index"]["watch"].clone()
}

/// Polls until the project's watch has been idle (nothing queued or applying) for 60 ms;
/// returns when that idle period began.
pub fn wait_settled(c: &mut Raw) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut idle_since: Option<Instant> = None;
    loop {
        let w = watch(c);
        let idle = w["queue"] == 0 && w["applying"] == false && w["state"] == "watching";
        let now = Instant::now();
        match (idle, idle_since) {
            (true, None) => idle_since = Some(now),
            (true, Some(t)) if now - t >= Duration::from_millis(60) => return t,
            (false, _) => idle_since = None,
            _ => {}
        }
        assert!(now < deadline, "the watch never settled: {w}");
        // `status` is not free (it counts the index): poll gently, or the poll itself
        // takes a core from the daemon on a two-core machine.
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn wait_until(mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while !f() {
        assert!(Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// utime + stime of the whole process, in clock ticks (the benches import it from here).
pub use crate::cpu_ticks;

/// Context switches of each of the daemon's threads: a polling loop would show here.
pub fn context_switches(pid: u32) -> std::collections::HashMap<String, u64> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|t| {
            let s = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            let n = s
                .lines()
                .filter(|l| l.contains("ctxt_switches:"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum::<u64>();
            (t.file_name().to_string_lossy().into_owned(), n)
        })
        .collect()
}

pub fn pct(sorted: &[Duration], p: usize) -> Duration {
    sorted[((sorted.len() * p).div_ceil(100)).saturating_sub(1).min(sorted.len() - 1)]
}

pub fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

/// Appends a function named `token` to the Python file `file`, then searches for it on
/// `conn` until it is found. Returns the time from the write to the answer that had it, and
/// whether the first answer already did (read-your-writes).
pub fn edit_until_found(conn: &mut Raw, file: &std::path::Path, token: &str) -> (Duration, bool) {
    use std::io::Write as _;
    let started = Instant::now();
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    write!(f, "\n\ndef {token}():\n    return 1\n").unwrap();
    drop(f);
    let mut asked = 0;
    loop {
        asked += 1;
        let r = search(conn, token);
        if r["results"].as_array().is_some_and(|a| a.iter().any(|x| x["name"] == token)) {
            return (started.elapsed(), asked == 1);
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{token} (in {}) never became searchable: {r}\nwatch: {}",
            file.display(),
            watch(conn)
        );
    }
}
