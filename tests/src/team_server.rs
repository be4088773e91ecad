//! A real team server (`boogerd --serve-team`) for tests and benchmarks, and a small MCP
//! client for it over Streamable HTTP (one JSON-RPC message per POST, a token per client).

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Env, bin, describe};

/// A running team server on a loopback port; stopped when dropped.
pub struct TeamServer {
    pub base: String,
    pub log: PathBuf,
    child: Child,
}

impl Drop for TeamServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The secret the tests' team servers ask for on `/metrics`.
pub const METRICS_TOKEN: &str = "metrics-secret-for-tests";

impl TeamServer {
    /// Starts `boogerd --serve-team` on a free port over the team index at `url` (TLS when
    /// `extra` gives `--team-cert`), and waits until it listens.
    pub fn start(env: &Env, url: &str, extra: &[&str]) -> TeamServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log = env.dir.path().join(format!("team-server-{port}.log"));
        let child = env
            .command(bin("boogerd"))
            .args(["--serve-team", &format!("127.0.0.1:{port}"), "--team-url", url])
            .env("BOOGER_TEAM_METRICS_TOKEN", METRICS_TOKEN)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).map(Stdio::from).unwrap())
            .spawn()
            .expect("start boogerd --serve-team");
        let scheme = if extra.contains(&"--team-cert") { "https" } else { "http" };
        let server = TeamServer { base: format!("{scheme}://127.0.0.1:{port}"), log, child };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(20), "the team server did not start: {}", server.said());
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its log so far.
    pub fn said(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn mcp(&self) -> String {
        format!("{}/mcp", self.base)
    }
}

/// An HTTP client that returns every status as an answer (a 401 is what some tests ask for).
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// `/metrics` of the team server at `base`, asked with its secret: the text.
pub fn metrics(base: &str) -> String {
    agent()
        .get(format!("{base}/metrics"))
        .header("Authorization", format!("Bearer {METRICS_TOKEN}"))
        .call()
        .expect("GET /metrics")
        .body_mut()
        .read_to_string()
        .expect("its text")
}

/// `booger team token add NAME --repos …` on the team index at `url`: the secret it printed.
pub fn add_token(env: &Env, url: &str, name: &str, repos: &[&str], rate: Option<u32>) -> String {
    let mut cmd = env.booger(None);
    cmd.env("BOOGER_TEAM_URL", url).args(["team", "token", "add", name, "--repos"]).args(repos);
    if let Some(r) = rate {
        cmd.args(["--rate", &r.to_string()]);
    }
    let out = cmd.output().expect("booger team token add");
    assert!(out.status.success(), "{}", describe(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `booger team token revoke NAME`.
pub fn revoke_token(env: &Env, url: &str, name: &str) {
    let out = env.booger(None).env("BOOGER_TEAM_URL", url).args(["team", "token", "revoke", name]).output().unwrap();
    assert!(out.status.success(), "{}", describe(&out));
}

/// An HTTP answer: status, the session header if any, and the body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub session: Option<String>,
    pub retry_after: Option<String>,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

/// POSTs `message` to `url` with `token` and `session` when given.
pub fn post(agent: &ureq::Agent, url: &str, token: Option<&str>, session: Option<&str>, message: &Value) -> Answer {
    let mut req = agent
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(t) = token {
        req = req.header("authorization", &format!("Bearer {t}"));
    }
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    match req.send(message.to_string()) {
        Ok(mut r) => {
            let header = |h: &str| r.headers().get(h).and_then(|v| v.to_str().ok()).map(str::to_owned);
            let (session, retry_after) = (header("mcp-session-id"), header("retry-after"));
            let status = r.status().as_u16();
            let body = r.body_mut().read_to_string().unwrap_or_default();
            Answer { status, session, retry_after, body }
        }
        Err(e) => Answer { status: 0, session: None, retry_after: None, body: e.to_string() },
    }
}

/// One remote agent: a token and the session `initialize` gave it.
pub struct Remote {
    pub url: String,
    pub token: String,
    pub session: String,
    agent: ureq::Agent,
}

impl Remote {
    /// Initializes a session at `url` (the server's `/mcp`) with `token`.
    pub fn open(url: &str, token: &str) -> Remote {
        let agent = agent();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
        let a = post(&agent, url, Some(token), None, &init);
        assert_eq!(a.status, 200, "{a:?}");
        let session = a.session.clone().unwrap_or_else(|| panic!("no session id: {a:?}"));
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(post(&agent, url, Some(token), Some(&session), &done).status, 202);
        Remote { url: url.to_owned(), token: token.to_owned(), session, agent }
    }

    /// `tools/call`, as the HTTP answer.
    pub fn ask(&self, tool: &str, arguments: Value) -> Answer {
        let m = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
        post(&self.agent, &self.url, Some(&self.token), Some(&self.session), &m)
    }

    /// `tools/call`: the result (content, structuredContent, isError); panics on anything
    /// but a JSON-RPC result.
    pub fn call(&self, tool: &str, arguments: Value) -> Value {
        let a = self.ask(tool, arguments);
        assert_eq!(a.status, 200, "{tool}: {a:?}");
        let v = a.json();
        v.get("result").cloned().unwrap_or_else(|| panic!("{tool}: {v}"))
    }
}

/// The text of a tool result.
pub fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// `n` crates of the cargo registry, each copied into its own git repository under `dir`:
/// many small repositories to publish.
pub fn crates(dir: &std::path::Path, n: usize) -> Vec<PathBuf> {
    let cargo = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let mut found: Vec<PathBuf> = Vec::new();
    for registry in std::fs::read_dir(cargo.join("registry/src")).into_iter().flatten().flatten() {
        found.extend(std::fs::read_dir(registry.path()).into_iter().flatten().flatten().map(|e| e.path()));
    }
    found.sort();
    found.dedup_by_key(|p| p.file_name().map(|f| f.to_owned()));
    let mut out = Vec::new();
    for src in found.into_iter().step_by(3).take(n) {
        let dst = dir.join("crates").join(src.file_name().unwrap());
        crate::copy_tree(&src, &dst, &[], &["target"]);
        crate::git(&dst, &["init", "-q"]);
        crate::commit_all(&dst, "crate");
        out.push(dst);
    }
    out
}
