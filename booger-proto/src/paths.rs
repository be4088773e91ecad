//! Where the daemon listens, keeps its data and writes its log.
//!
//! Resolution order, the same for client and daemon:
//! - socket: `BOOGER_SOCKET`, else `$XDG_RUNTIME_DIR/booger/boogerd.sock`, else a per-user
//!   directory `booger-<uid>` in the temp dir (created 0700 by the daemon). On Windows a named
//!   pipe `\\.\pipe\booger-<user>`.
//!   Without `BOOGER_SOCKET`, clients first try the socket recorded by the daemon serving the
//!   data directory (see [`recorded_socket`]).
//! - data: `BOOGER_HOME`, else `$XDG_DATA_HOME/booger`, else `~/.local/share/booger`
//!   (`~/Library/Application Support/booger` on macOS, `%LOCALAPPDATA%\booger` on Windows).
//!   Project indexes live under it.

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
    platform_data_dir().unwrap_or_else(|| env::temp_dir().join("booger-data"))
}

#[cfg(unix)]
fn platform_data_dir() -> Option<PathBuf> {
    if let Some(x) = non_empty_env("XDG_DATA_HOME") {
        return Some(PathBuf::from(x).join("booger"));
    }
    let home = home_dir()?;
    if cfg!(target_os = "macos") {
        return Some(home.join("Library").join("Application Support").join("booger"));
    }
    Some(home.join(".local").join("share").join("booger"))
}

/// `%LOCALAPPDATA%\booger`: indexes are large and belong to this machine, not to a roaming
/// profile.
#[cfg(windows)]
fn platform_data_dir() -> Option<PathBuf> {
    let local =
        non_empty_env("LOCALAPPDATA").map(PathBuf::from).or_else(|| Some(home_dir()?.join("AppData").join("Local")))?;
    Some(local.join("booger"))
}

/// `path` made absolute with every link resolved, as `std::fs::canonicalize` does, but on
/// Windows without the verbatim prefix it adds (`\\?\C:\src` → `C:\src`, `\\?\UNC\host\share`
/// → `\\host\share`): roots are shown to people and compared with paths they type. (std adds
/// the prefix back by itself for paths too long without it.)
pub fn canonical(path: impl AsRef<std::path::Path>) -> std::io::Result<PathBuf> {
    let real = std::fs::canonicalize(path.as_ref())?;
    if !cfg!(windows) {
        return Ok(real);
    }
    let Some(text) = real.to_str() else { return Ok(real) };
    if let Some(rest) = text.strip_prefix(r"\\?\UNC\") {
        return Ok(PathBuf::from(format!(r"\\{rest}")));
    }
    match text.strip_prefix(r"\\?\") {
        Some(rest) if rest.as_bytes().get(1) == Some(&b':') => Ok(PathBuf::from(rest)),
        _ => Ok(real),
    }
}

/// The user's home directory: `HOME` on Unix, `USERPROFILE` on Windows.
pub fn home_dir() -> Option<PathBuf> {
    non_empty_env(if cfg!(windows) { "USERPROFILE" } else { "HOME" }).map(PathBuf::from)
}

/// Where programs keep this user's settings: `%APPDATA%` on Windows, `~/Library/Application
/// Support` on macOS, else `$XDG_CONFIG_HOME` (default `~/.config`).
pub fn config_dir() -> Option<PathBuf> {
    if cfg!(windows) {
        return non_empty_env("APPDATA")
            .map(PathBuf::from)
            .or_else(|| Some(home_dir()?.join("AppData").join("Roaming")));
    }
    let home = home_dir()?;
    if cfg!(target_os = "macos") {
        return Some(home.join("Library").join("Application Support"));
    }
    Some(non_empty_env("XDG_CONFIG_HOME").map_or_else(|| home.join(".config"), PathBuf::from))
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
