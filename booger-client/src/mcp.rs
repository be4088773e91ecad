//! `booger mcp`: a pump between an agent's stdio and the daemon that outlives the daemon.
//!
//! After the hello, frames (one JSON-RPC message per line) pass through unchanged in both
//! directions; the MCP protocol lives in the daemon. The pump reads just enough of each line
//! to survive a daemon restart (an upgrade, `booger daemon stop`, a crash): it keeps the
//! agent's `initialize` and the requests not answered yet. When the daemon goes away it
//! connects again (starting one when none runs), says hello with the same session, replays
//! `initialize`, and sends again each request caught in flight that is safe to repeat (all
//! but calls of tools that write); those get an error that says to call again. The agent's
//! session goes on.
//!
//! When stdin closes, the daemon is told the input ended (`platform::end_input`), so it finishes in-flight requests,
//! answers them, and closes; then the pump exits.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::connect::{Daemon, Failure, Hello};
use crate::output::complain;
use crate::platform::{Stream, end_input};

/// How long the pump keeps trying to reach a daemon again before it gives up.
const RECONNECT_FOR: Duration = Duration::from_secs(30);

/// What both directions share.
struct Link {
    socket: PathBuf,
    project: PathBuf,
    session: String,
    /// Register the project on first use (see `booger mcp --no-register`).
    register: bool,
    /// The tools `tools/list` shows (`booger mcp --tools`); `None`: the daemon's default.
    tools: Option<String>,
    /// Where agent lines go: the current connection, `None` while reconnecting.
    up: Mutex<Option<Stream>>,
    /// Signalled when `up` is connected again.
    reconnected: Condvar,
    /// The agent's `initialize` request, replayed on a new connection.
    initialize: Mutex<Option<String>>,
    /// Requests sent and not answered yet, by id (as JSON text): the line, and whether it
    /// is safe to send again.
    in_flight: Mutex<HashMap<String, (String, bool)>>,
    stdin_closed: AtomicBool,
}

pub fn run(socket: &Path, project: &Path, session: &str, register: bool, tools: Option<String>) -> Result<(), Failure> {
    let hello = Hello { client: "booger-mcp", project: Some(project), session, register, tools: tools.as_deref() };
    let (stream, reader, pending) = connect(socket, &hello)?;
    let link = Arc::new(Link {
        socket: socket.to_owned(),
        project: project.to_owned(),
        session: session.to_owned(),
        register,
        tools,
        up: Mutex::new(Some(stream)),
        reconnected: Condvar::new(),
        initialize: Mutex::new(None),
        in_flight: Mutex::default(),
        stdin_closed: AtomicBool::new(false),
    });
    let up = Arc::clone(&link);
    let pump_up = std::thread::spawn(move || pump_up(&up));

    let mut stdout = io::stdout().lock();
    // Bytes the hello's reader already pulled in belong to the agent.
    stdout.write_all(&pending)?;
    stdout.flush()?;
    let mut reader = reader;
    loop {
        pump_down(&link, &mut reader, &mut stdout);
        if link.stdin_closed.load(Ordering::SeqCst) {
            break;
        }
        // The daemon went away while the agent is still there: reach one again.
        match reconnect(&link) {
            Ok(r) => {
                reader = r;
                // Stdin may have closed while there was no connection to shut.
                if link.stdin_closed.load(Ordering::SeqCst)
                    && let Some(s) = lock(&link.up).as_ref()
                {
                    let _ = end_input(s);
                }
            }
            Err(e) => {
                complain!("booger mcp: boogerd closed the connection and could not be reached again: {e}");
                std::process::exit(1);
            }
        }
        let caught: Vec<(String, (String, bool))> = lock(&link.in_flight).drain().collect();
        let mut resent = std::collections::HashSet::new();
        for (id, (line, repeatable)) in caught {
            if repeatable {
                if resent.insert(line.clone()) {
                    lock(&link.in_flight).insert(id, (line.clone(), true));
                    send(&link, line.as_bytes());
                }
            } else if stdout.write_all(retry_error(&id).as_bytes()).and_then(|()| stdout.flush()).is_err() {
                return Ok(()); // the agent went away
            }
        }
    }
    let _ = pump_up.join();
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Connects (starting the daemon if needed) and says hello. Returns the write half, the
/// reader, and bytes the reader holds beyond the hello's answer.
fn connect(socket: &Path, hello: &Hello) -> Result<(Stream, BufReader<Stream>, Vec<u8>), Failure> {
    let mut daemon = Daemon::connect_or_start(socket)?;
    daemon.hello(hello)?;
    let Daemon { stream, reader, .. } = daemon;
    let pending = reader.buffer().to_vec();
    let reader = BufReader::new(reader.into_inner());
    Ok((stream, reader, pending))
}

/// Daemon → agent, line by line, until the connection ends.
fn pump_down(link: &Link, reader: &mut BufReader<Stream>, stdout: &mut impl Write) {
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if let Ok(v) = serde_json::from_str::<Value>(&line) {
            let mut in_flight = lock(&link.in_flight);
            for m in messages(&v) {
                if m.get("method").is_none()
                    && let Some(id) = m.get("id")
                {
                    in_flight.remove(&id.to_string());
                }
            }
        }
        // Frames are whole lines; flush each so no reply waits in a buffer.
        if stdout.write_all(line.as_bytes()).and_then(|()| stdout.flush()).is_err() {
            std::process::exit(0); // the agent went away
        }
    }
}

/// Agent → daemon, line by line; a line the daemon could not take waits for the next
/// connection.
fn pump_up(link: &Link) {
    let mut stdin = io::stdin().lock();
    let mut line = String::new();
    loop {
        line.clear();
        match stdin.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Ok(v) = serde_json::from_str::<Value>(&line) {
            for m in messages(&v) {
                if m.get("method").and_then(Value::as_str) == Some("initialize") {
                    *lock(&link.initialize) = Some(line.clone());
                }
                if m.get("method").is_some()
                    && let Some(id) = m.get("id")
                {
                    lock(&link.in_flight).insert(id.to_string(), (line.clone(), repeatable(m)));
                }
            }
        }
        send(link, line.as_bytes());
    }
    link.stdin_closed.store(true, Ordering::SeqCst);
    if let Some(s) = lock(&link.up).as_ref() {
        let _ = end_input(s);
    }
}

/// Writes one line to the daemon, waiting out a reconnection if the connection is gone.
fn send(link: &Link, bytes: &[u8]) {
    let deadline = Instant::now() + RECONNECT_FOR + Duration::from_secs(5);
    let mut up = lock(&link.up);
    loop {
        if let Some(s) = up.as_mut() {
            if s.write_all(bytes).is_ok() {
                return;
            }
            // The daemon is gone; the reader side notices and reconnects.
            *up = None;
        }
        let now = Instant::now();
        if now >= deadline {
            return; // the reader side gives up and exits
        }
        up = link.reconnected.wait_timeout(up, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
    }
}

/// A new connection with the same session; the agent's `initialize` is replayed and its
/// answer dropped (the agent has one). Returns the new reader once agent lines can flow.
fn reconnect(link: &Link) -> Result<BufReader<Stream>, Failure> {
    *lock(&link.up) = None;
    let deadline = Instant::now() + RECONNECT_FOR;
    let mut pause = Duration::from_millis(50);
    let (mut stream, mut reader, _) = loop {
        let hello = Hello {
            client: "booger-mcp",
            project: Some(&link.project),
            session: &link.session,
            register: link.register,
            tools: link.tools.as_deref(),
        };
        match connect(&link.socket, &hello) {
            Ok(c) => break c,
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(1));
            }
        }
    };
    if let Some(init) = lock(&link.initialize).clone() {
        stream.write_all(init.as_bytes())?;
        let id = serde_json::from_str::<Value>(&init).ok().and_then(|v| v.get("id").cloned());
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Err(Failure::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "boogerd closed the connection")));
            }
            let answer = serde_json::from_str::<Value>(&line).ok();
            if answer.as_ref().and_then(|a| a.get("id")) == id.as_ref() {
                break;
            }
        }
    }
    *lock(&link.up) = Some(stream);
    link.reconnected.notify_all();
    Ok(reader)
}

/// A request that may be sent twice: anything but a call of a tool that writes.
fn repeatable(m: &Value) -> bool {
    if m.get("method").and_then(Value::as_str) != Some("tools/call") {
        return true;
    }
    let name = m.pointer("/params/name").and_then(Value::as_str).unwrap_or("");
    booger_proto::tools::find(name).is_some_and(|t| t.effect == booger_proto::tools::Effect::ReadOnly)
}

/// The messages of a line: one, or each of a batch.
fn messages(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    }
}

/// The answer to a request the daemon took but never answered: it stopped meanwhile.
fn retry_error(id: &str) -> String {
    let id: Value = serde_json::from_str(id).unwrap_or(Value::Null);
    let error = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": booger_proto::wire::code::DAEMON_RESTARTED,
            "message": "boogerd restarted while this call was running; booger mcp has reconnected: call it again",
        },
    });
    format!("{error}\n")
}
