//! The HTTP face's cost, measured against floors in the same run.
//!
//! `cargo bench -p booger-tests --bench http` builds release binaries, starts a real daemon
//! with the Python standard library indexed, and prints Markdown tables:
//! - keep-alive GETs of `/health`, `/metrics` and `/api/status`, next to a loopback TCP round
//!   trip to a responder in this process (the floor any HTTP answer pays here) and the same
//!   facts asked over the socket (`daemon/status`);
//! - `search` as an MCP `tools/call` over Streamable HTTP next to the same call on the socket;
//! - boogerd's CPU time while idle, with no page open and with the status page open in
//!   headless Chromium (when installed), over `BENCH_IDLE_S` seconds each (default 30).
//!
//! `BENCH_GETS` (default 500) sets the number of requests per row.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use booger_tests::{Env, cpu_ticks_over, python_stdlib};
use serde_json::{Value, json};

fn main() {
    let gets: usize = std::env::var("BENCH_GETS").ok().and_then(|v| v.parse().ok()).unwrap_or(500);
    let idle_s: u64 = std::env::var("BENCH_IDLE_S").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let env = Env::new();
    let daemon = env.start_daemon();
    let stdlib = python_stdlib();
    let out = env.run_within(None, &["index", stdlib.to_str().unwrap()], Duration::from_secs(600));
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    // What a first index leaves behind (embedding, the ranking and grep indexes) runs in the
    // background: measure once the daemon has gone quiet.
    let pid = daemon.child.id();
    let settled = Instant::now();
    while cpu_ticks_over(pid, 2) > 2 {
        assert!(settled.elapsed() < Duration::from_secs(900), "boogerd never went quiet after indexing");
    }
    eprintln!("quiet {:.0} s after the index run", settled.elapsed().as_secs_f64());
    let facts = env.json(&["daemon", "status"]);
    let base = facts["http_url"].as_str().expect("http_url").to_owned();
    let token = std::fs::read_to_string(facts["http_token_file"].as_str().unwrap()).unwrap();
    let authority = base.strip_prefix("http://").unwrap().to_owned();
    let auth = format!("Bearer {token}");

    let floor = tcp_floor(gets);
    let mut http = Http::connect(&authority, &auth);
    let health = http.timed("GET", "/health", None, gets);
    let metrics = http.timed("GET", "/metrics", None, gets / 5);
    let status = http.timed("GET", "/api/status", None, gets / 5);
    let mut raw = env.connect();
    let socket_status = timed(gets, |i| {
        let r = raw.request(i as u64 + 1, "daemon/status", json!({}));
        assert!(r.get("result").is_some(), "{r}");
    });
    let sizes = [http.get_len("/health"), http.get_len("/metrics"), http.get_len("/api/status")];

    // `search` as an agent calls it: over Streamable HTTP and over the socket.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}});
    let path = format!("/mcp?project={}", stdlib.display());
    let (_, head) = http.send("POST", &path, Some(&init.to_string()));
    let sid = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("mcp-session-id: ").map(|v| v.trim().to_owned()))
        .expect("a session id");
    http.session = Some(sid);
    let queries = ["parse the url", "json decoder", "thread pool executor", "http cookie jar", "tar file extract"];
    let call = |i: usize| {
        json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
               "params": {"name": "search", "arguments": {"query": queries[i % queries.len()]}}})
        .to_string()
    };
    let mcp_http = timed(gets / 5, |i| {
        let (body, _) = http.send("POST", &path, Some(&call(i)));
        assert!(body.contains("\"isError\":false"), "{body}");
    });
    let mut mcp_socket = env.connect();
    let hello = mcp_socket.request(0, "booger/hello", json!({"protocol": 1, "project": stdlib}));
    assert!(hello.get("result").is_some(), "{hello}");
    let mcp_sock = timed(gets / 5, |i| {
        let mut msg: Value = serde_json::from_str(&call(i)).unwrap();
        msg["id"] = json!(i + 1);
        mcp_socket.send_line(&msg.to_string());
        let r = mcp_socket.recv();
        assert_eq!(r["result"]["isError"], false, "{r}");
    });

    println!("| request (keep-alive, release, 2 cores) | answer | p50 | p95 | n |");
    println!("|---|---|---|---|---|");
    row("loopback TCP round trip to an in-process responder (floor)", "64 B", &floor);
    row("`GET /health`", &bytes(sizes[0]), &health);
    row("`GET /metrics`", &bytes(sizes[1]), &metrics);
    row("`GET /api/status` (the status page's JSON)", &bytes(sizes[2]), &status);
    row("`daemon/status` on the socket (same facts, no HTTP)", "", &socket_status);
    row("MCP `tools/call search` over Streamable HTTP", "", &mcp_http);
    row("MCP `tools/call search` on the socket", "", &mcp_sock);
    drop(http);

    // Idle CPU: nothing open, then the status page open in a browser.
    std::thread::sleep(Duration::from_secs(3));
    let quiet = cpu_ticks_over(pid, idle_s);
    let with_page = booger_tests::chromium().map(|c| {
        let url = booger_tests::stdout(&env.run(&["dashboard"])).trim().to_owned();
        let profile = env.dir.path().join("chromium-profile");
        let mut browser = std::process::Command::new(c)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(&url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start chromium");
        // Let the page load and its event stream open.
        std::thread::sleep(Duration::from_secs(5));
        let ticks = cpu_ticks_over(pid, idle_s);
        let _ = browser.kill();
        let _ = browser.wait();
        ticks
    });
    let hz = 100.0; // USER_HZ on Linux
    println!();
    println!("| boogerd idle, {idle_s} s | CPU ticks (1/100 s) | share of one core |");
    println!("|---|---|---|");
    println!("| no page open | {quiet} | {:.3}% |", quiet as f64 / hz / idle_s as f64 * 100.0);
    match with_page {
        Some(t) => {
            println!("| status page open in headless Chromium | {t} | {:.3}% |", t as f64 / hz / idle_s as f64 * 100.0)
        }
        None => println!("| status page open | not measured: no chromium | |"),
    }
}

/// A keep-alive HTTP/1.1 connection with the token.
struct Http {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    authority: String,
    auth: String,
    session: Option<String>,
}

impl Http {
    fn connect(authority: &str, auth: &str) -> Self {
        let s = TcpStream::connect(authority).unwrap();
        s.set_nodelay(true).unwrap();
        Self {
            reader: BufReader::new(s.try_clone().unwrap()),
            writer: s,
            authority: authority.to_owned(),
            auth: auth.to_owned(),
            session: None,
        }
    }

    /// Sends one request; the body and the head of its answer.
    fn send(&mut self, method: &str, path: &str, body: Option<&str>) -> (String, String) {
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nAccept: application/json, text/event-stream\r\n",
            self.authority, self.auth
        );
        if let Some(s) = &self.session {
            req.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
        }
        let body = body.unwrap_or("");
        req.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len()));
        self.writer.write_all(req.as_bytes()).unwrap();
        let mut head = String::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            head.push_str(&line);
        }
        assert!(head.starts_with("HTTP/1.1 200"), "{method} {path}: {head}");
        let mut buf = vec![0; length];
        self.reader.read_exact(&mut buf).unwrap();
        (String::from_utf8(buf).unwrap(), head)
    }

    fn timed(&mut self, method: &str, path: &str, body: Option<&str>, n: usize) -> Vec<Duration> {
        timed(n, |_| {
            self.send(method, path, body);
        })
    }

    fn get_len(&mut self, path: &str) -> usize {
        self.send("GET", path, None).0.len()
    }
}

/// `n` timed runs of `f` after `n / 10` untimed ones.
fn timed(n: usize, mut f: impl FnMut(usize)) -> Vec<Duration> {
    let warm = n / 10;
    let mut out = Vec::with_capacity(n);
    for i in 0..warm + n {
        let t = Instant::now();
        f(i);
        if i >= warm {
            out.push(t.elapsed());
        }
    }
    out
}

/// Round trips of 64 bytes over a loopback TCP connection to a thread of this process.
fn tcp_floor(n: usize) -> Vec<Duration> {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_nodelay(true).unwrap();
        let mut buf = [0u8; 64];
        while s.read_exact(&mut buf).is_ok() {
            if s.write_all(&buf).is_err() {
                break;
            }
        }
    });
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let mut buf = [7u8; 64];
    timed(n, |_| {
        s.write_all(&buf).unwrap();
        s.read_exact(&mut buf).unwrap();
    })
}

/// CPU ticks (user + system) `pid` spends over the next `secs` seconds.
fn row(label: &str, size: &str, v: &[Duration]) {
    println!("| {label} | {size} | {} | {} | {} |", fmt(percentile(v, 50)), fmt(percentile(v, 95)), v.len());
}

fn percentile(v: &[Duration], p: usize) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    s[(s.len() - 1) * p / 100]
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 1000.0 { format!("{:.2} ms", us / 1000.0) } else { format!("{us:.1} µs") }
}

fn bytes(n: usize) -> String {
    if n >= 1024 { format!("{:.1} KB", n as f64 / 1024.0) } else { format!("{n} B") }
}
