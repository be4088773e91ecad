//! Where the daemon listens, keeps its data and writes its log.
//!
//! Resolution order, the same for client and daemon:
//! - socket: `BOOGER_SOCKET`, else `$XDG_RUNTIME_DIR/booger/boogerd.sock`, else a per-user
//!   directory `booger-<uid>` in the temp dir (created 0700 by the daemon). On Windows a named
//!   pipe `\\.\pipe\booger-<user>`.
//!   Without `BOOGER_SOCKET`, clients first try the socket recorded by the daemon serving the
//!   data directory (see [`recorded_socket`]).
//! - data: `BOOGER_HOME`, else `$XDG_DATA_HOME/booger`, else `~/.local/share/booger`
//!   (`~/Library/Application Support/booger` on macOS). Project indexes live under it.

use std::env;
use std::path::PathBuf;

pub const SOCKET_ENV: &str = "BOOGER_SOCKET";
pub const HOME_ENV: &str = "BOOGER_HOME";
pub const LOG_ENV: &str = "BOOGER_LOG";
pub const SOCKET_FILE: &str = "boogerd.sock";
pub const LOG_FILE: &str = "boogerd.log";
pub const DAEMON_LOCK_FILE: &str = "boogerd.lock";
pub const REGISTRY_FILE: &str = "projects.json";
/// The team index's URL a daemon was last given, kept (0600) in the data directory for its
/// later starts: the client's autostart from an agent's bare environment, the service.
pub const TEAM_URL_FILE: &str = "team-url";
pub const TEAM_URL_ENV: &str = "BOOGER_TEAM_URL";
/// The transformer tier's model folder, under the data directory (`booger model install`).
pub const MINILM_DIR: &str = "models/all-minilm-l6-v2";

fn non_empty_env(key: &str) -> Option<String> {
    env::var(key).ok().filter(|v| !v.is_empty())
}

/// The daemon's endpoint for this user.
pub fn default_socket() -> PathBuf {
    if let Some(s) = non_empty_env(SOCKET_ENV) {
        return PathBuf::from(s);
    }
    platform_default_socket()
}

#[cfg(unix)]
fn platform_default_socket() -> PathBuf {
    if let Some(rt) = non_empty_env("XDG_RUNTIME_DIR") {
        return PathBuf::from(rt).join("booger").join(SOCKET_FILE);
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    env::temp_dir().join(format!("booger-{uid}")).join(SOCKET_FILE)
}

#[cfg(windows)]
fn platform_default_socket() -> PathBuf {
    let user = non_empty_env("USERNAME").unwrap_or_else(|| "user".to_owned());
    PathBuf::from(format!(r"\\.\pipe\booger-{user}"))
}

/// The daemon's data directory (project registry, indexes, log).
pub fn data_dir() -> PathBuf {
    if let Some(h) = non_empty_env(HOME_ENV) {
        return PathBuf::from(h);
    }
    if let Some(x) = non_empty_env("XDG_DATA_HOME") {
        return PathBuf::from(x).join("booger");
    }
    if let Some(h) = non_empty_env("HOME").or_else(|| non_empty_env("USERPROFILE")) {
        if cfg!(target_os = "macos") {
            return PathBuf::from(h).join("Library").join("Application Support").join("booger");
        }
        return PathBuf::from(h).join(".local").join("share").join("booger");
    }
    env::temp_dir().join("booger-data")
}

pub fn log_file(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join(LOG_FILE)
}

/// The lock a running daemon holds on its data directory: its pid, then its socket.
pub fn daemon_lock(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join(DAEMON_LOCK_FILE)
}

/// The socket of the daemon that last served `data_dir`, as it recorded it. Clients try it
/// before their own default: the daemon may have been started with another environment
/// (no `XDG_RUNTIME_DIR`, or a different one), which would give another default path.
pub fn recorded_socket(data_dir: &std::path::Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(daemon_lock(data_dir)).ok()?;
    text.lines().nth(1).map(str::trim).filter(|s| !s.is_empty()).map(PathBuf::from)
}
