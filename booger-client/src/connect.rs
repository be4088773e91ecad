//! Reaching the daemon: connect, or start `boogerd` and wait for it, then say hello.
//!
//! The hello (protocol version, default project, session) is written together with the first
//! request, so a CLI call costs one round trip.

use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use booger_proto::paths;

use crate::platform::{self, Stream, is_absent};
use booger_proto::wire::{self, PROTOCOL_VERSION, RpcError};
use serde_json::{Value, json};

/// How long a freshly started daemon gets to open its socket.
const START_TIMEOUT: Duration = Duration::from_secs(2);

/// Why the client could not get an answer.
#[derive(Debug)]
pub enum Failure {
    /// No daemon is listening and none was started.
    NotRunning(PathBuf),
    /// The daemon could not be started or did not come up in time.
    StartFailed(String),
    /// The daemon answered with an error.
    Rpc(RpcError),
    Io(io::Error),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NotRunning(s) => write!(f, "boogerd is not running (socket {})", s.display()),
            Failure::StartFailed(why) => f.write_str(why),
            Failure::Rpc(e) => write!(f, "{}", e.message),
            Failure::Io(e) => write!(f, "lost the connection to boogerd: {e}"),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

/// The socket to use: `BOOGER_SOCKET`; else the one the daemon serving our data directory
/// recorded, if a daemon answers there (it may have been started with another environment:
/// an MCP launcher keeps only HOME and PATH, which changes the default path); else the
/// default. So however a client was started, it finds the one daemon of its data directory.
pub fn socket() -> PathBuf {
    let default = paths::default_socket();
    if std::env::var_os(paths::SOCKET_ENV).is_some_and(|s| !s.is_empty()) {
        return default;
    }
    match paths::recorded_socket(&paths::data_dir()) {
        Some(recorded) if recorded != default && connect_once(&recorded).is_ok() => recorded,
        _ => default,
    }
}

/// One connection to the daemon.
pub struct Daemon {
    pub stream: Stream,
    pub reader: BufReader<Stream>,
    next_id: u64,
}

/// What `booger/hello` tells the daemon about this connection.
pub struct Hello<'a> {
    pub client: &'a str,
    pub project: Option<&'a Path>,
    pub session: &'a str,
    /// Register `project` on first use when it is a repository (`booger mcp`).
    pub register: bool,
    /// The tools `tools/list` shows this connection (`booger mcp --tools`).
    pub tools: Option<&'a str>,
}

impl Daemon {
    /// Connects to a running daemon; `Failure::NotRunning` if there is none.
    pub fn connect(socket: &Path) -> Result<Self, Failure> {
        match connect_once(socket) {
            Ok(s) => Self::from_stream(s),
            Err(e) if is_absent(&e) => Err(Failure::NotRunning(socket.to_owned())),
            Err(e) => Err(Failure::Io(e)),
        }
    }

    /// Connects, starting `boogerd` first if no daemon answers.
    pub fn connect_or_start(socket: &Path) -> Result<Self, Failure> {
        match Self::connect(socket) {
            Err(Failure::NotRunning(_)) => {}
            other => return other,
        }
        let data_dir = paths::data_dir();
        let log = paths::log_file(&data_dir);
        let mut child = spawn_daemon(socket, &data_dir, &log)?;
        let deadline = Instant::now() + START_TIMEOUT;
        let mut pause = Duration::from_millis(2);
        loop {
            match connect_once(socket) {
                Ok(s) => {
                    // A daemon that goes on running after this command is worth a word:
                    // what it is, where its log is, how to stop it (stderr: stdout is the
                    // answer's, or the MCP protocol's).
                    crate::output::complain!(
                        "booger: started the daemon in the background (pid {}): it keeps your indexes warm and \
                         watches your projects. Log: {}. Stop it with `booger daemon stop`.",
                        child.id(),
                        log.display()
                    );
                    return Self::from_stream(s);
                }
                Err(e) if !is_absent(&e) => return Err(Failure::Io(e)),
                Err(_) => {}
            }
            // A daemon that exited at once (bad flags, unusable socket dir) will not come up;
            // one that lost a start race to another client's daemon is fine: keep connecting.
            let exited = child.try_wait().ok().flatten();
            if Instant::now() >= deadline {
                return Err(Failure::StartFailed(format!(
                    "boogerd did not answer on {} within {}s{}; see its log: {}",
                    socket.display(),
                    START_TIMEOUT.as_secs(),
                    exited.map(|s| format!(" (it exited: {s})")).unwrap_or_default(),
                    log.display()
                )));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    fn from_stream(stream: Stream) -> Result<Self, Failure> {
        let reader = BufReader::new(platform::try_clone(&stream)?);
        Ok(Self { stream, reader, next_id: 1 })
    }

    /// Sends `booger/hello` and, pipelined behind it, one request; returns the request's result.
    pub fn hello_and_call(&mut self, hello: &Hello, method: &str, params: Value) -> Result<Value, Failure> {
        let mut out = self.hello_line(hello);
        let id = self.take_id();
        out.push_str(&wire::request_line(id, method, params));
        self.stream.write_all(out.as_bytes())?;
        check_hello(self.read_result())?;
        self.read_result()
    }

    /// Sends `booger/hello` alone and waits for its answer.
    pub fn hello(&mut self, hello: &Hello) -> Result<Value, Failure> {
        let line = self.hello_line(hello);
        self.stream.write_all(line.as_bytes())?;
        check_hello(self.read_result())
    }

    /// One request, one answer.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, Failure> {
        let id = self.take_id();
        self.stream.write_all(wire::request_line(id, method, params).as_bytes())?;
        self.read_result()
    }

    fn hello_line(&mut self, hello: &Hello) -> String {
        let id = self.take_id();
        let mut params = json!({
            "protocol": PROTOCOL_VERSION,
            "client": hello.client,
            "project": hello.project,
            "session": hello.session,
            "register": hello.register,
        });
        if let Some(tools) = hello.tools {
            params["tools"] = json!(tools);
        }
        wire::request_line(id, wire::HELLO, params)
    }

    fn take_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }

    fn read_result(&mut self) -> Result<Value, Failure> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(Failure::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "boogerd closed the connection")));
        }
        let v: Value = serde_json::from_str(&line).map_err(|e| {
            Failure::Io(io::Error::new(io::ErrorKind::InvalidData, format!("bad reply from boogerd: {e}")))
        })?;
        wire::response_result(&v).cloned().map_err(Failure::Rpc)
    }
}

/// The daemon refuses a client of another protocol; the client checks the daemon's answer too,
/// so either side's upgrade is caught with a message that says what to do.
fn check_hello(reply: Result<Value, Failure>) -> Result<Value, Failure> {
    let reply = reply?;
    let theirs = reply.get("protocol").and_then(Value::as_u64);
    if theirs != Some(u64::from(PROTOCOL_VERSION)) {
        return Err(Failure::Rpc(RpcError::new(
            wire::code::PROTOCOL_MISMATCH,
            format!(
                "protocol mismatch: the running boogerd {} speaks booger protocol {}, this booger {} speaks {PROTOCOL_VERSION}. \
                 Restart the daemon from the same installation: `booger daemon stop`, then run booger again",
                reply.get("version").and_then(Value::as_str).unwrap_or("?"),
                theirs.map_or_else(|| "?".to_owned(), |v| v.to_string()),
                env!("CARGO_PKG_VERSION"),
            ),
        )));
    }
    Ok(reply)
}

fn connect_once(socket: &Path) -> io::Result<Stream> {
    platform::connect(socket)
}

/// Where `boogerd` is: `BOOGER_DAEMON`, else beside this binary, else on `PATH`.
pub fn daemon_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("BOOGER_DAEMON").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let name = format!("boogerd{}", std::env::consts::EXE_SUFFIX);
    if let Some(sibling) = std::env::current_exe().ok().and_then(|e| Some(e.parent()?.join(&name)))
        && sibling.is_file()
    {
        return sibling;
    }
    PathBuf::from(name)
}

/// Starts `boogerd` detached from this process, logging to `log`.
fn spawn_daemon(socket: &Path, data_dir: &Path, log: &Path) -> Result<std::process::Child, Failure> {
    let _ = platform::private_dir_builder().recursive(true).create(data_dir);
    let log_file = platform::private_file_options()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| Failure::StartFailed(format!("cannot open the daemon log {}: {e}", log.display())))?;
    let bin = daemon_binary();
    let mut cmd = Command::new(&bin);
    cmd.arg("--socket").arg(socket).arg("--home").arg(data_dir);
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(log_file);
    platform::detach(&mut cmd);
    cmd.spawn().map_err(|e| {
        Failure::StartFailed(format!(
            "cannot start the daemon {}: {e}. Install boogerd next to booger or on PATH, or set BOOGER_DAEMON",
            bin.display()
        ))
    })
}
