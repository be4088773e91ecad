//! Test harness: real `boogerd` and `booger` processes on a temporary socket and data dir.
//!
//! Nothing here stands in for a booger component. [`Env`] gives each test its own socket,
//! data directory and project directories, scrubs the caller's `BOOGER_*` variables, and stops
//! whatever daemon the test started (or the client autostarted) when it is dropped.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod corpora;
pub mod eval_repos;
pub mod live;
pub mod postgres;
mod procfs;
mod python;
pub mod team_server;
pub mod tls_proxy;
pub mod wine;

pub use corpora::*;
pub use procfs::*;
pub use python::*;

/// How long anything in a test may take before the test fails instead of hanging.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// A TCP connection to `target` from the loopback address `source` (`127.0.0.2`: another
/// client address on the same machine, for the team server's per-address limits).
pub fn connect_from(source: [u8; 4], target: std::net::SocketAddr) -> std::net::TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("socket");
    socket.bind(&std::net::SocketAddr::from((source, 0)).into()).expect("bind the source address");
    socket.connect(&target.into()).expect("connect");
    socket.into()
}

/// Path of a workspace binary, built once per test run so tests never run stale binaries.
/// `BOOGER_BIN_DIR` names a folder of already built binaries to use instead (a benchmark's
/// A/B run against another build).
pub fn bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        if let Some(dir) = std::env::var_os("BOOGER_BIN_DIR").filter(|d| !d.is_empty()) {
            return PathBuf::from(dir);
        }
        // The test binary lives in target/<profile>/deps/.
        let exe = std::env::current_exe().expect("current_exe");
        let dir = exe.parent().and_then(Path::parent).expect("target/<profile>").to_owned();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--quiet", "-p", "boogerd", "-p", "booger-client", "--bins"]);
        if cfg!(feature = "transformer") {
            cmd.args(["--features", "boogerd/transformer"]);
        }
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build");
        assert!(status.success(), "building boogerd and booger failed; run `cargo build --workspace --bins`");
        dir
    });
    let path = dir.join(name);
    assert!(path.is_file(), "{} is missing; run `cargo build --workspace --bins` first", path.display());
    path
}

/// One isolated booger world: socket, data dir and scratch space in a temp dir.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub home: PathBuf,
}

impl Default for Env {
    fn default() -> Self {
        Self::new()
    }
}

impl Env {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new().prefix("bt").tempdir_in("/tmp").expect("tempdir");
        let socket = dir.path().join("run").join("boogerd.sock");
        let home = dir.path().join("home");
        Self { dir, socket, home }
    }

    /// Where the daemon of this env keeps `root`'s index (the data directory's placement).
    pub fn index_dir(&self, root: &Path) -> PathBuf {
        boogerd::base::storage::index_dir(&self.home, root, false)
    }

    /// The index of `root` as the daemon left it; panics if there is none.
    pub fn store(&self, root: &Path) -> boogerd::store::Store {
        boogerd::store::Store::open_existing(&self.index_dir(root)).unwrap().expect("index exists")
    }

    /// A fresh directory under the env, for use as a project.
    pub fn project(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join("projects").join(name);
        std::fs::create_dir_all(&p).expect("mkdir project");
        std::fs::canonicalize(p).expect("canonical project")
    }

    /// A fresh git repository under the env (`git init`, nothing committed), for use as a
    /// project.
    pub fn git_project(&self, name: &str) -> PathBuf {
        let p = self.project(name);
        git(&p, &["init", "-q"]);
        p
    }

    fn scrub(&self, cmd: &mut Command) {
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("BOOGER_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("BOOGER_SOCKET", &self.socket)
            .env("BOOGER_HOME", &self.home)
            .env("BOOGER_DAEMON", bin("boogerd"))
            .env("BOOGER_LOG", "debug")
            .env("HOME", self.dir.path())
            // Each test's daemon on a free loopback port of its own.
            .env("BOOGER_HTTP", "127.0.0.1:0")
            // Config files (services, agents' settings) go under the temp HOME.
            .env_remove("XDG_CONFIG_HOME");
    }

    /// Any program with this env's variables (for a client that starts `booger` itself, such
    /// as the MCP Python SDK), run in the env's root.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        self.scrub(&mut cmd);
        cmd.current_dir(self.dir.path());
        cmd
    }

    /// `booger` with this env, run in `cwd` (the env's root if `None`).
    pub fn booger(&self, cwd: Option<&Path>) -> Command {
        let mut cmd = Command::new(bin("booger"));
        self.scrub(&mut cmd);
        cmd.current_dir(cwd.unwrap_or(self.dir.path()));
        cmd
    }

    /// Runs `booger args...` to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        self.run_in(None, args)
    }

    pub fn run_in(&self, cwd: Option<&Path>, args: &[&str]) -> Output {
        self.run_within(cwd, args, TIMEOUT)
    }

    /// Like [`Env::run_in`] with a time limit of the caller's choice (benchmarks).
    pub fn run_within(&self, cwd: Option<&Path>, args: &[&str], limit: Duration) -> Output {
        let mut cmd = self.booger(cwd);
        cmd.args(args).stdin(Stdio::null());
        output_within(cmd, limit)
    }

    /// `booger args... --json` that must succeed; its stdout parsed.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.run(&all);
        assert!(out.status.success(), "booger {args:?} failed: {}", describe(&out));
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("booger {args:?}: not JSON ({e}): {}", describe(&out)))
    }

    /// `boogerd` with this env's socket and data dir, not started.
    pub fn boogerd(&self) -> Command {
        let mut cmd = Command::new(bin("boogerd"));
        self.scrub(&mut cmd);
        cmd.arg("--socket").arg(&self.socket).arg("--home").arg(&self.home);
        cmd
    }

    /// Starts `boogerd` in the foreground of the test and waits until it answers.
    pub fn start_daemon(&self) -> DaemonProc {
        self.start_daemon_with(&[])
    }

    /// [`Env::start_daemon`] with extra `boogerd` flags.
    pub fn start_daemon_with(&self, flags: &[&str]) -> DaemonProc {
        let mut cmd = self.boogerd();
        cmd.args(flags);
        self.launch(cmd)
    }

    /// [`Env::start_daemon`] on the CPUs `cpus` only (`taskset -c 0-1`): as a machine with
    /// that many cores, since the daemon sizes its workers by the CPUs it may use.
    pub fn start_daemon_on_cpus(&self, cpus: &str) -> DaemonProc {
        let mut cmd = Command::new("taskset");
        cmd.args(["-c", cpus]).arg(bin("boogerd"));
        self.scrub(&mut cmd);
        cmd.arg("--socket").arg(&self.socket).arg("--home").arg(&self.home);
        self.launch(cmd)
    }

    /// Starts a `boogerd` command made by [`Env::boogerd`] (with variables or flags of the
    /// test's own) and waits until it answers.
    pub fn launch(&self, mut cmd: Command) -> DaemonProc {
        let log = self.dir.path().join(format!(
            "boogerd-{}.log",
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ));
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(std::fs::File::create(&log).expect("log file"));
        let child = cmd.spawn().expect("spawn boogerd");
        let mut d = DaemonProc { child, log };
        let deadline = Instant::now() + TIMEOUT;
        while UnixStream::connect(&self.socket).is_err() {
            if let Some(status) = d.child.try_wait().expect("try_wait") {
                panic!("boogerd exited during start ({status}): {}", d.log_text());
            }
            assert!(Instant::now() < deadline, "boogerd did not listen within {TIMEOUT:?}: {}", d.log_text());
            std::thread::sleep(Duration::from_millis(5));
        }
        d
    }

    /// A raw line connection to the daemon's socket.
    pub fn connect(&self) -> Raw {
        let stream = UnixStream::connect(&self.socket).expect("connect to boogerd");
        stream.set_read_timeout(Some(TIMEOUT)).expect("timeout");
        Raw { reader: BufReader::new(stream.try_clone().expect("clone")), stream }
    }

    /// Waits until every embeddable chunk of `project` has a vector; the `embed` tool's
    /// answer then.
    pub fn embedded(&self, project: &Path) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let (text, d, is_error) = self.call(project, "wait-embedded", "embed", serde_json::json!({}));
            assert!(!is_error, "embed: {text}");
            if d["embedded"] == d["embeddable"] && d["running"] == false && d["embeddable"].as_u64() > Some(0) {
                return d;
            }
            assert!(Instant::now() < deadline, "never fully embedded: {d}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Calls a tool through the daemon as a session whose default project is `project`:
    /// returns (text, data, is_error).
    pub fn call(&self, project: &Path, session: &str, tool: &str, arguments: Value) -> (String, Value, bool) {
        let mut c = self.connect();
        let hello = c.request(
            1,
            "booger/hello",
            json!({ "protocol": booger_proto::wire::PROTOCOL_VERSION, "client": "booger-tests", "project": project, "session": session }),
        );
        assert!(hello.get("result").is_some(), "hello failed: {hello}");
        let r = c.request(2, "booger/call", json!({ "tool": tool, "arguments": arguments }));
        let res = r.get("result").unwrap_or_else(|| panic!("{tool} failed at the protocol level: {r}"));
        (
            res["text"].as_str().unwrap_or_default().to_owned(),
            res["data"].clone(),
            res["isError"].as_bool().unwrap_or(false),
        )
    }

    /// Starts `booger mcp [dir]` with piped stdio.
    pub fn mcp(&self, dir: Option<&Path>) -> Mcp {
        self.mcp_with(dir, &[])
    }

    /// `booger mcp` with more arguments (`--tools all`).
    pub fn mcp_with(&self, dir: Option<&Path>, args: &[&str]) -> Mcp {
        let mut cmd = self.booger(dir);
        cmd.arg("mcp").args(args);
        Mcp::spawn(cmd)
    }
}

impl Mcp {
    /// Starts `cmd` (a `booger mcp` however it is run) with piped stdio.
    pub fn spawn(mut cmd: Command) -> Mcp {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn booger mcp");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Mcp { child, stdin, lines: rx, next_id: 1 }
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // Stop a daemon the client may have started on its own.
        if let Ok(mut s) = UnixStream::connect(&self.socket) {
            let _ = s.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}\n");
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = String::new();
            let _ = BufReader::new(s).read_line(&mut buf);
        }
    }
}

/// A `boogerd` started by the test; killed on drop if still running.
pub struct DaemonProc {
    pub child: Child,
    pub log: PathBuf,
}

impl DaemonProc {
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// Stops the daemon (SIGSTOP) and waits until the kernel says every thread of it is
    /// stopped: `kill` returns before the signal has taken effect, and under load a thread
    /// can still be reading events for a while.
    pub fn stop(&self) {
        self.signal(libc::SIGSTOP);
        let tasks = format!("/proc/{}/task", self.child.id());
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let stopped = std::fs::read_dir(&tasks).is_ok_and(|dir| {
                dir.flatten().all(|t| {
                    std::fs::read_to_string(t.path().join("stat"))
                        .ok()
                        .and_then(|stat| stat.rsplit(')').next().map(|rest| rest.trim_start().starts_with(['T', 't'])))
                        .unwrap_or(true)
                })
            });
            if stopped || Instant::now() > deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits for the daemon to exit; panics if it takes longer than [`TIMEOUT`].
    pub fn wait(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return s;
            }
            assert!(Instant::now() < deadline, "boogerd did not exit within {TIMEOUT:?}: {}", self.log_text());
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for DaemonProc {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A line-framed connection straight to the daemon's socket.
pub struct Raw {
    pub stream: UnixStream,
    pub reader: BufReader<UnixStream>,
}

impl Raw {
    pub fn send_line(&mut self, line: &str) {
        self.stream.write_all(line.as_bytes()).expect("write");
        self.stream.write_all(b"\n").expect("write");
    }

    /// The next line, parsed; panics on timeout or end of stream.
    pub fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = self.reader.read_line(&mut line).expect("read reply (timed out?)");
        assert!(n > 0, "daemon closed the connection");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("reply is not JSON ({e}): {line}"))
    }

    /// Sends a request and returns its reply.
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let mut req = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if !params.is_null() {
            req["params"] = params;
        }
        self.send_line(&req.to_string());
        self.recv()
    }
}

/// A running `booger mcp` with its stdio.
pub struct Mcp {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Mcp {
    pub fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{msg}").expect("write to booger mcp");
        stdin.flush().expect("flush");
    }

    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to booger mcp");
    }

    /// The next message from the server, or `None` if none arrives within `wait`.
    pub fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        match self.lines.recv_timeout(wait) {
            Ok(line) => Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    pub fn recv(&mut self) -> Value {
        self.recv_within(TIMEOUT).expect("no message from booger mcp")
    }

    /// Sends a request and waits for the reply with the same id.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let msg = self.recv();
            if msg["id"] == json!(id) {
                return msg;
            }
        }
    }

    /// `initialize` + `notifications/initialized`; returns the initialize result.
    pub fn handshake(&mut self, version: &str) -> Value {
        let reply = self.request(
            "initialize",
            json!({ "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "booger-tests", "version": "0" } }),
        );
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        reply["result"].clone()
    }

    /// Closes stdin and waits for `booger mcp` to exit.
    pub fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return s;
            }
            assert!(Instant::now() < deadline, "booger mcp did not exit after stdin closed");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `cmd` and collects its output, killing it after `limit`.
pub fn output_within(mut cmd: Command, limit: Duration) -> Output {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn");
    let pid = child.id() as i32;
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("command did not finish within {limit:?}: {cmd:?}");
        }
    }
}

/// Writes `body` to `rel` under `root`, making its folders.
pub fn write(root: &Path, rel: &str, body: impl AsRef<[u8]>) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("a file under the root")).expect("make its folders");
    std::fs::write(p, body).expect("write the file");
}

/// Commits everything in the repository at `root`.
pub fn commit_all(root: &Path, message: &str) {
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", message]);
}

/// Runs `git args…` in `dir` with a fixed identity, independent of the user's config; panics
/// on failure. Returns standard output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=booger-tests", "-c", "user.email=tests@example.com", "-c", "commit.gpgsign=false"])
        .args(["-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", describe(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Chromium for the browser checks: BOOGER_CHROMIUM, else `chromium` or `chromium-browser`
/// on the PATH.
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("BOOGER_CHROMIUM") {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).flat_map(|d| [d.join("chromium"), d.join("chromium-browser")]).find(|p| p.is_file())
}

/// A check needs a program from one of Debian's packages that is not installed: fails when
/// `require` (an environment variable CI sets after installing it) is set, and otherwise says
/// on the terminal that the check was skipped and how to install the package.
pub fn missing_optional(check: &str, package: &str, require: &str) {
    assert!(std::env::var(require).is_err(), "{check}: Debian's package `{package}` is missing and {require} is set");
    skipped(
        check,
        &format!("install Debian's package `{package}` (README: the optional step beside the test command)"),
    );
}

/// Says on the terminal that a check was skipped and why. Written to stderr directly: the test
/// harness captures `eprintln!` of a passing test, and a skip must not pass unseen.
pub fn skipped(check: &str, why: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIPPED {check}: {why}");
}

/// stdout and stderr of a finished command, for assertion messages.
pub fn describe(out: &Output) -> String {
    format!(
        "{}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
