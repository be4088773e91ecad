//! `booger daemon start|stop|status|install`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use booger_proto::wire;
use serde_json::{Value, json};

use crate::connect::{Daemon, Failure, Hello, daemon_binary};
use crate::output::{Exit, complain, print_json, say};

const SYSTEMD_UNIT: &str = include_str!("../../systemd/boogerd.service");
const LAUNCHD_PLIST: &str = include_str!("../../launchd/dev.booger.boogerd.plist");
/// The binary path the service files in the repository carry; `install` puts the real one in.
const SYSTEMD_BINARY: &str = "%h/.cargo/bin/boogerd";
const LAUNCHD_BINARY: &str = "/usr/local/bin/boogerd";

pub const USAGE: &str = "usage: booger daemon start|stop|status|install [--print] [--json]

  start     start boogerd in the background (no-op if it is running)
  stop      stop the running boogerd gracefully
  status    pid, version, uptime, socket, data dir and projects of the running boogerd
  install   install a user service (systemd on Linux, launchd on macOS) that keeps boogerd
            running; --print shows what would be written, and where, without writing";

pub fn run(socket: &Path, args: &[String], json: bool) -> Result<Exit, Failure> {
    match args.first().map(String::as_str) {
        Some("start") => start(socket, json),
        Some("stop") => stop(socket, json),
        Some("status") => status(socket, json),
        Some("install") => install(args.iter().any(|a| a == "--print")),
        _ => {
            complain!("{USAGE}");
            Ok(Exit::Usage)
        }
    }
}

pub fn hello() -> Hello<'static> {
    Hello { client: "booger-cli", project: None, session: "cli", register: false }
}

fn start(socket: &Path, json: bool) -> Result<Exit, Failure> {
    let mut d = Daemon::connect_or_start(socket)?;
    let facts = d.hello_and_call(&hello(), wire::DAEMON_STATUS, Value::Null)?;
    if json {
        print_json(&facts);
    } else {
        say!(
            "boogerd {} running (pid {}) on {}",
            facts["version"].as_str().unwrap_or("?"),
            facts["pid"],
            socket.display()
        );
    }
    Ok(Exit::Ok)
}

fn stop(socket: &Path, json: bool) -> Result<Exit, Failure> {
    match shutdown(socket)? {
        None if json => print_json(&json!({ "stopped": false, "running": false })),
        None => say!("boogerd is not running"),
        Some(facts) if json => print_json(&json!({ "stopped": true, "pid": facts["pid"] })),
        Some(facts) => say!("stopped boogerd (pid {})", facts["pid"]),
    }
    Ok(Exit::Ok)
}

/// Stops the running boogerd and waits until its socket no longer answers; its facts, or
/// `None` if none was running.
pub fn shutdown(socket: &Path) -> Result<Option<Value>, Failure> {
    let mut d = match Daemon::connect(socket) {
        Ok(d) => d,
        Err(Failure::NotRunning(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let facts = d.hello_and_call(&hello(), wire::DAEMON_STATUS, Value::Null)?;
    d.call(wire::SHUTDOWN, Value::Null)?;
    drop(d);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Daemon::connect(socket).is_ok() {
        if Instant::now() > deadline {
            return Err(Failure::StartFailed(format!("boogerd (pid {}) did not stop within 5s", facts["pid"])));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(Some(facts))
}

/// The running boogerd's facts (`daemon status`), if one is running.
pub fn facts(socket: &Path) -> Result<Option<Value>, Failure> {
    match Daemon::connect(socket) {
        Ok(mut d) => Ok(Some(d.hello_and_call(&hello(), wire::DAEMON_STATUS, Value::Null)?)),
        Err(Failure::NotRunning(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

fn status(socket: &Path, json: bool) -> Result<Exit, Failure> {
    let facts = match facts(socket)? {
        Some(f) => f,
        None => {
            if json {
                print_json(&json!({ "running": false, "socket": socket }));
            } else {
                say!("boogerd is not running (socket {}); `booger daemon start` starts it", socket.display());
            }
            return Ok(Exit::NotRunning);
        }
    };
    if json {
        print_json(&facts);
        return Ok(Exit::Ok);
    }
    let s = |k: &str| facts[k].as_str().unwrap_or("?").to_owned();
    say!("boogerd {} running", s("version"));
    say!("  pid       {}", facts["pid"]);
    say!("  uptime    {}s (since {})", facts["uptime_s"], s("started_at"));
    say!("  protocol  {}", facts["protocol"]);
    say!("  socket    {}", s("socket"));
    say!("  data dir  {}", s("data_dir"));
    say!("  log       {}", s("log_file"));
    let projects = facts["projects"].as_array().cloned().unwrap_or_default();
    say!("  projects  {}", projects.len());
    for p in projects {
        say!("    {:<20} {}", p["name"].as_str().unwrap_or(""), p["root"].as_str().unwrap_or(""));
    }
    match facts["embeddings"]["tiers"].as_array() {
        Some(tiers) => {
            let ids: Vec<&str> = tiers.iter().filter_map(Value::as_str).collect();
            say!("  embedders {}", ids.join(", "));
        }
        None => say!("  embedders off"),
    }
    if let Some(p) = facts["embeddings"]["problem"].as_str() {
        say!("  problem   {p}");
    }
    Ok(Exit::Ok)
}

/// The service definition for this OS: (file to write, contents, commands that enable it).
pub fn service_definition() -> (PathBuf, String, &'static str) {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let bin = daemon_binary();
    let bin = std::fs::canonicalize(&bin).unwrap_or(bin);
    let bin = bin.display().to_string();
    if cfg!(target_os = "macos") {
        (
            home.join("Library/LaunchAgents/dev.booger.boogerd.plist"),
            LAUNCHD_PLIST.replace(LAUNCHD_BINARY, &bin).replace("~/", &format!("{}/", home.display())),
            "launchctl load -w ~/Library/LaunchAgents/dev.booger.boogerd.plist",
        )
    } else {
        (
            home.join(".config/systemd/user/boogerd.service"),
            SYSTEMD_UNIT.replace(SYSTEMD_BINARY, &bin),
            "systemctl --user daemon-reload && systemctl --user enable --now boogerd.service",
        )
    }
}

fn install(print_only: bool) -> Result<Exit, Failure> {
    let (path, contents, enable) = service_definition();
    if print_only {
        say!("# would write {}\n{contents}\n# then run: {enable}", path.display());
        return Ok(Exit::Ok);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, contents)?;
    say!("wrote {}\nenable it with: {enable}", path.display());
    Ok(Exit::Ok)
}
