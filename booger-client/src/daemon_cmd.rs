//! `booger daemon start|stop|status|install`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use booger_proto::{paths, wire};
use serde_json::{Value, json};

use crate::connect::{Daemon, Failure, Hello, daemon_binary};
use crate::output::{Exit, complain, print_json, say};
use crate::service::{Manager, Setting};

pub const USAGE: &str = "usage: booger daemon start|stop|status|logs|install|uninstall [--json]

The daemon (boogerd) holds the indexes, watches your projects and answers every booger
command and agent; it starts on first use.
  start       start the daemon in the background (no-op if it is running)
  stop        stop the running daemon gracefully
  status      pid, version, uptime, socket, data dir and projects of the running daemon
  logs [-n N] the last N (40) lines of the daemon's log
  install     install a user service that keeps the daemon running (systemd on Linux, launchd
              on macOS, a Startup-folder script on Windows), with the socket and data
              directory this shell's booger uses; --print shows what would be written, and
              where, without writing (--systemd, --launchd or --startup picks the manager)
  uninstall   remove what install wrote (--print: say what, without removing)";

pub fn run(socket: &Path, args: &[String], json: bool) -> Result<Exit, Failure> {
    match args.first().map(String::as_str) {
        Some("start") => start(socket, json),
        Some("stop") => stop(socket, json),
        Some("status") => status(socket, json),
        Some("logs") => logs(socket, &args[1..]),
        Some("install") => install(&args[1..]),
        Some("uninstall") => uninstall(&args[1..]),
        _ => {
            complain!("{USAGE}");
            Ok(Exit::Usage)
        }
    }
}

pub fn hello() -> Hello<'static> {
    Hello { client: wire::SHELL_CLIENT, project: None, session: "cli", register: false, tools: None }
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
    match (facts["http_url"].as_str(), facts["http_problem"].as_str()) {
        (Some(url), _) => say!("  http      {url} (`booger dashboard` opens the status page)"),
        (None, Some(why)) => say!("  http      off: {why}"),
        (None, None) => say!("  http      off"),
    }
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

/// `booger dashboard [--open]`: the status page's address with the token in its fragment
/// (which browsers never send; the page keeps it for its tab and sends it as a header).
pub fn dashboard(socket: &Path, args: &[String], json: bool) -> Result<Exit, Failure> {
    let mut d = Daemon::connect_or_start(socket)?;
    let facts = d.hello_and_call(&hello(), wire::DAEMON_STATUS, Value::Null)?;
    let (Some(url), Some(token_file)) = (facts["http_url"].as_str(), facts["http_token_file"].as_str()) else {
        let why = facts["http_problem"].as_str().unwrap_or("boogerd runs with --no-http");
        complain!("booger dashboard: the daemon serves no HTTP: {why}");
        return Ok(Exit::ToolError);
    };
    let token = std::fs::read_to_string(token_file)?;
    let page = format!("{url}/#token={}", token.trim());
    if json {
        print_json(&json!({ "url": page, "http_url": url }));
    } else {
        say!("{page}");
    }
    if args.iter().any(|a| a == "--open") {
        // The opener gets a file of the user's that leads to the page, not the address: a
        // command line is readable by every user in /proc.
        let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
        let leads = Path::new(token_file).with_file_name("dashboard.html");
        let html = format!("<!doctype html><meta http-equiv=\"refresh\" content=\"0;url={page}\">\n");
        let opened = write_fresh_private(&leads, &html)
            .and_then(|()| std::process::Command::new(opener).arg(&leads).spawn().map(drop));
        if let Err(e) = opened {
            complain!("booger dashboard: cannot run {opener} ({e}); open the address above in a browser");
        }
    }
    Ok(Exit::Ok)
}

/// Writes `text` to a new file at `path` only its user can read, replacing whatever was there
/// (never writing through a symlink).
fn write_fresh_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    crate::platform::private_file_options().write(true).create_new(true).open(path)?.write_all(text.as_bytes())
}

/// `install [--print] [--systemd|--launchd]`: writes the user service (this OS's manager by
/// default; the flag picks another, for `--print`).
fn install(args: &[String]) -> Result<Exit, Failure> {
    let manager = args.iter().find_map(|a| Manager::from_flag(a)).unwrap_or_else(Manager::native);
    let path = manager.file();
    let contents = manager.render(&Setting::current(daemon_binary()));
    let enable = manager.enable_hint(&path);
    if args.iter().any(|a| a == "--print") {
        say!("# would write {}\n{contents}\n# then run: {enable}", path.display());
        return Ok(Exit::Ok);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, contents)?;
    say!("wrote {}\nstart it with: {enable}\n(`booger daemon uninstall` removes it)", path.display());
    keep_team_url()?;
    Ok(Exit::Ok)
}

/// The team index this shell names (`BOOGER_TEAM_URL`), kept where the service's daemon reads
/// it (a file private to the user, not the service file: the URL may hold a password).
fn keep_team_url() -> std::io::Result<()> {
    let Some(url) = std::env::var(paths::TEAM_URL_ENV).ok().filter(|u| !u.trim().is_empty()) else { return Ok(()) };
    let dir = paths::data_dir();
    crate::platform::private_dir_builder().recursive(true).create(&dir)?;
    write_fresh_private(&dir.join(paths::TEAM_URL_FILE), &format!("{}\n", url.trim()))?;
    say!("the service's daemon will use the team index of BOOGER_TEAM_URL (kept in {})", dir.display());
    Ok(())
}

/// `uninstall [--print]`: removes what `install` wrote (and systemd's enable link to it).
fn uninstall(args: &[String]) -> Result<Exit, Failure> {
    let manager = args.iter().find_map(|a| Manager::from_flag(a)).unwrap_or_else(Manager::native);
    let path = manager.file();
    let link = manager.enable_link().filter(|l| std::fs::read_link(l).is_ok_and(|t| t == path));
    let targets: Vec<&Path> = [Some(path.as_path()), link.as_deref()]
        .into_iter()
        .flatten()
        .filter(|p| p.symlink_metadata().is_ok())
        .collect();
    if targets.is_empty() {
        say!("no booger service is installed ({} does not exist)", path.display());
        return Ok(Exit::Ok);
    }
    let print_only = args.iter().any(|a| a == "--print");
    for t in &targets {
        if print_only {
            say!("would remove {}", t.display());
        } else {
            std::fs::remove_file(t)?;
            say!("removed {}", t.display());
        }
    }
    if !print_only {
        say!("if its manager had loaded it, stop it and make the manager forget it: {}", manager.forget_hint());
    }
    Ok(Exit::Ok)
}

/// `logs [-n N]`: the last lines of the running daemon's log (or of the log of the daemon that
/// would serve this data directory).
fn logs(socket: &Path, args: &[String]) -> Result<Exit, Failure> {
    let lines = match args.iter().position(|a| a == "-n" || a == "--lines") {
        Some(i) => match args.get(i + 1).and_then(|n| n.parse::<usize>().ok()) {
            Some(n) => n,
            None => {
                complain!("booger daemon logs: -n takes a number of lines, e.g. -n 100");
                return Ok(Exit::Usage);
            }
        },
        None => 40,
    };
    let running = facts(socket).ok().flatten();
    let log = running
        .as_ref()
        .and_then(|f| f["log_file"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| paths::log_file(&paths::data_dir()));
    let text = match std::fs::read(&log) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            complain!(
                "booger daemon logs: no log at {} yet (boogerd has not run with this data directory)",
                log.display()
            );
            return Ok(Exit::ToolError);
        }
        Err(e) => return Err(Failure::Io(e)),
    };
    let all: Vec<&str> = text.lines().collect();
    for line in &all[all.len().saturating_sub(lines)..] {
        say!("{line}");
    }
    complain!("(last {} of {} lines of {})", all.len().min(lines), all.len(), log.display());
    Ok(Exit::Ok)
}
