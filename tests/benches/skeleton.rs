//! The request path's cost, measured against its floor in the same run.
//!
//! `cargo bench -p booger-tests --bench skeleton` builds release binaries, starts a real
//! daemon on a temp socket and prints a Markdown table:
//! - a whole `booger status --json` process against the warm daemon, next to `/bin/true`
//!   (the cost of spawning any process here), runs interleaved so noise hits both alike;
//! - MCP `ping` round trips inside one `booger mcp` session, next to the same ping sent
//!   straight to the socket (the pump's own cost is the difference);
//! - release binary sizes.
//!
//! `BENCH_RUNS` (default 300) and `BENCH_PINGS` (default 3000) set the sample sizes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use booger_tests::{Env, bin};

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let pings: usize = std::env::var("BENCH_PINGS").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let env = Env::new();
    let _daemon = env.start_daemon();

    // Whole processes: /bin/true and `booger status --json`, interleaved.
    let mut t_true = Vec::with_capacity(runs);
    let mut t_status = Vec::with_capacity(runs);
    let mut status_cmd = env.booger(None);
    status_cmd.args(["status", "--json"]).stdout(Stdio::null()).stderr(Stdio::null());
    let mut version_cmd = env.booger(None);
    version_cmd.arg("--version").stdout(Stdio::null());
    let mut t_version = Vec::with_capacity(runs);
    let mut true_cmd = Command::new("/bin/true");
    for i in 0..runs + 20 {
        let a = time(&mut true_cmd);
        let b = time(&mut status_cmd);
        let c = time(&mut version_cmd);
        if i >= 20 {
            t_true.push(a);
            t_status.push(b);
            t_version.push(c);
        }
    }

    // MCP ping through `booger mcp`.
    let mut mcp = env.booger(None);
    mcp.arg("mcp").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = mcp.spawn().expect("booger mcp");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"bench","version":"0"}}}}}}"#).unwrap();
    stdout.read_line(&mut line).unwrap();
    let t_mcp = ping_loop(pings, &mut stdin, &mut stdout);
    drop(stdin);
    let _ = child.wait();

    // The same ping straight to the socket, no pump.
    let raw = env.connect();
    let mut w = raw.stream.try_clone().unwrap();
    let mut r = raw.reader;
    let t_raw = ping_loop(pings, &mut w, &mut r);

    let (p_true, p_status) = (median(&t_true), median(&t_status));
    println!("| measure | p50 | p90 | runs |");
    println!("|---|---|---|---|");
    row("`/bin/true` (process spawn floor)", &t_true);
    row("`booger --version` (client start, no daemon call)", &t_version);
    row("`booger status --json`, warm daemon", &t_status);
    println!("| status minus `/bin/true` | {} | | |", fmt(p_status.saturating_sub(p_true)));
    row("MCP `ping` round trip via `booger mcp`", &t_mcp);
    row("`ping` round trip straight to the socket", &t_raw);
    println!();
    println!("| binary (release) | as built | stripped |");
    println!("|---|---|---|");
    for name in ["booger", "boogerd"] {
        let path = bin(name);
        let built = std::fs::metadata(&path).unwrap().len();
        let stripped_path = env.dir.path().join(format!("{name}.stripped"));
        let stripped = Command::new("strip")
            .arg("-o")
            .arg(&stripped_path)
            .arg(&path)
            .status()
            .ok()
            .filter(|s| s.success())
            .and_then(|_| std::fs::metadata(&stripped_path).ok())
            .map(|m| mib(m.len()))
            .unwrap_or_else(|| "n/a".to_owned());
        println!("| `{name}` | {} | {stripped} |", mib(built));
    }
}

fn time(cmd: &mut Command) -> Duration {
    let t = Instant::now();
    let status = cmd.status().expect("spawn");
    let d = t.elapsed();
    assert!(status.success(), "{cmd:?} failed");
    d
}

fn ping_loop(n: usize, w: &mut impl Write, r: &mut impl BufRead) -> Vec<Duration> {
    let mut line = String::new();
    let mut out = Vec::with_capacity(n);
    for i in 0..n + 100 {
        let t = Instant::now();
        writeln!(w, r#"{{"jsonrpc":"2.0","id":{},"method":"ping"}}"#, i + 1).unwrap();
        w.flush().unwrap();
        line.clear();
        r.read_line(&mut line).unwrap();
        if i >= 100 {
            out.push(t.elapsed());
        }
        assert!(line.contains("\"result\""), "{line}");
    }
    out
}

fn median(v: &[Duration]) -> Duration {
    percentile(v, 50)
}

fn percentile(v: &[Duration], p: usize) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    s[(s.len() - 1) * p / 100]
}

fn row(label: &str, v: &[Duration]) {
    println!("| {label} | {} | {} | {} |", fmt(median(v)), fmt(percentile(v, 90)), v.len());
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 1000.0 { format!("{:.2} ms", us / 1000.0) } else { format!("{us:.1} µs") }
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1024.0 * 1024.0))
}
