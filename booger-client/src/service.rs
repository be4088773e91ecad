//! The user service that keeps boogerd running: a systemd user unit on Linux, a launchd agent
//! on macOS, a script in the Startup folder on Windows (run at logon; unlike a service or a
//! logon task, it needs no administrator). The files checked in under `systemd/` and `launchd/` are templates that work as
//! they are for a default setup; `booger daemon install` fills them with this user's binary,
//! socket, data directory and log, so the service's daemon is the one the shell's `booger`
//! reaches.

use std::path::{Path, PathBuf};

use booger_proto::paths;

const SYSTEMD_UNIT: &str = include_str!("../../systemd/boogerd.service");
const LAUNCHD_PLIST: &str = include_str!("../../launchd/dev.booger.boogerd.plist");
const SYSTEMD_FILE: &str = "boogerd.service";
const LAUNCHD_FILE: &str = "dev.booger.boogerd.plist";
const STARTUP_FILE: &str = "boogerd.cmd";
/// The binary path the launchd template carries.
const LAUNCHD_BINARY: &str = "/usr/local/bin/boogerd";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Manager {
    Systemd,
    Launchd,
    /// Windows: the user's Startup folder.
    Startup,
}

/// What the service's daemon runs with: the same places the shell's `booger` uses.
pub struct Setting {
    pub binary: PathBuf,
    /// This `booger`, which the Startup script runs to start the daemon detached.
    pub client: PathBuf,
    pub socket: PathBuf,
    pub data_dir: PathBuf,
}

impl Setting {
    /// This user's: the installed `boogerd` beside `booger` (or `BOOGER_DAEMON`), and the
    /// socket and data directory this environment resolves to.
    pub fn current(binary: PathBuf) -> Self {
        let binary = booger_proto::paths::canonical(&binary).unwrap_or(binary);
        let client = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("booger"));
        Self { binary, client, socket: paths::default_socket(), data_dir: paths::data_dir() }
    }

    pub fn log(&self) -> PathBuf {
        paths::log_file(&self.data_dir)
    }
}

impl Manager {
    /// The service manager of this OS.
    pub fn native() -> Self {
        if cfg!(target_os = "macos") {
            Self::Launchd
        } else if cfg!(windows) {
            Self::Startup
        } else {
            Self::Systemd
        }
    }

    pub fn from_flag(flag: &str) -> Option<Self> {
        match flag {
            "--systemd" => Some(Self::Systemd),
            "--launchd" => Some(Self::Launchd),
            "--startup" => Some(Self::Startup),
            _ => None,
        }
    }

    /// Where the manager reads a user's service definitions.
    pub fn file(self) -> PathBuf {
        let home = paths::home_dir().unwrap_or_default();
        match self {
            Self::Systemd => std::env::var_os("XDG_CONFIG_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".config"))
                .join("systemd/user")
                .join(SYSTEMD_FILE),
            Self::Launchd => home.join("Library/LaunchAgents").join(LAUNCHD_FILE),
            Self::Startup => paths::config_dir()
                .unwrap_or(home)
                .join(r"Microsoft\Windows\Start Menu\Programs\Startup")
                .join(STARTUP_FILE),
        }
    }

    /// The link `systemctl --user enable` makes; removed with the unit.
    pub fn enable_link(self) -> Option<PathBuf> {
        match self {
            Self::Systemd => Some(self.file().parent()?.join("default.target.wants").join(SYSTEMD_FILE)),
            Self::Launchd | Self::Startup => None,
        }
    }

    pub fn render(self, s: &Setting) -> String {
        match self {
            Self::Systemd => systemd_unit(s),
            Self::Launchd => launchd_plist(s),
            Self::Startup => startup_script(s),
        }
    }

    /// The commands that start the installed service (a running daemon is stopped first:
    /// the service's would otherwise find it serving and exit).
    pub fn enable_hint(self, file: &Path) -> String {
        match self {
            Self::Systemd => "booger daemon stop && systemctl --user daemon-reload && \
                              systemctl --user enable --now boogerd.service"
                .to_owned(),
            Self::Launchd => format!("booger daemon stop && launchctl load -w '{}'", file.display()),
            Self::Startup => format!("booger daemon stop & \"{}\" (or log on again)", file.display()),
        }
    }

    /// What makes the manager stop and forget a service whose file was removed.
    pub fn forget_hint(self) -> &'static str {
        match self {
            Self::Systemd => "systemctl --user stop boogerd.service; systemctl --user daemon-reload",
            Self::Launchd => "launchctl remove dev.booger.boogerd",
            Self::Startup => "nothing: a running daemon goes on until `booger daemon stop`",
        }
    }
}

/// The systemd template with this user's values. systemd expands `%` specifiers and splits
/// on quotes, so values are escaped for both.
fn systemd_unit(s: &Setting) -> String {
    let log = s.log();
    let quoted = |key: &str, value: &Path| {
        let v = value.display().to_string().replace('%', "%%").replace('\\', "\\\\").replace('"', "\\\"");
        format!("\"{key}={v}\"")
    };
    let plain = |value: &Path| value.display().to_string().replace('%', "%%");
    SYSTEMD_UNIT
        .lines()
        .map(|line| match line.split_once('=') {
            Some(("ExecStart", _)) => format!("ExecStart={}", quoted_exec(&plain(&s.binary))),
            Some(("Environment", v)) if v.starts_with("BOOGER_SOCKET=") => {
                format!("Environment={}", quoted(paths::SOCKET_ENV, &s.socket))
            }
            Some(("Environment", v)) if v.starts_with("BOOGER_HOME=") => {
                format!("Environment={}", quoted(paths::HOME_ENV, &s.data_dir))
            }
            Some((key @ ("StandardOutput" | "StandardError"), _)) => format!("{key}=append:{}", plain(&log)),
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// An ExecStart= program path: quoted when it holds a space.
fn quoted_exec(path: &str) -> String {
    if path.contains(char::is_whitespace) { format!("\"{}\"", path.replace('"', "\\\"")) } else { path.to_owned() }
}

/// The launchd template with this user's values as absolute paths (launchd expands neither
/// `~` nor variables), plus the log launchd writes the daemon's output to.
fn launchd_plist(s: &Setting) -> String {
    let xml = |p: &Path| p.display().to_string().replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let env = format!(
        "        <key>{}</key>\n        <string>{}</string>\n        <key>{}</key>\n        <string>{}</string>\n",
        paths::SOCKET_ENV,
        xml(&s.socket),
        paths::HOME_ENV,
        xml(&s.data_dir)
    );
    let log = xml(&s.log());
    let logs = format!(
        "    <key>StandardOutPath</key>\n    <string>{log}</string>\n    <key>StandardErrorPath</key>\n    <string>{log}</string>\n"
    );
    let mut out = String::with_capacity(LAUNCHD_PLIST.len() + env.len() + logs.len());
    let mut in_env = false;
    for line in LAUNCHD_PLIST.lines() {
        let trimmed = line.trim();
        if trimmed == "</plist>" {
            // The top-level dict closes on the line before.
            let end = out.trim_end().len() - "</dict>".len();
            out.truncate(end);
            out.push_str(&logs);
            out.push_str("</dict>\n");
        }
        if in_env && trimmed == "</dict>" {
            out.push_str(&env);
            in_env = false;
        }
        if trimmed == "<key>EnvironmentVariables</key>" {
            in_env = true;
        }
        if trimmed == format!("<string>{LAUNCHD_BINARY}</string>") {
            out.push_str(&line.replace(LAUNCHD_BINARY, &xml(&s.binary)));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// A batch script for the Startup folder: this user's socket and data directory, then
/// `booger daemon start`, which starts the daemon detached (no console window stays) and
/// returns. Batch files expand `%`, so it is doubled; Windows paths cannot hold `"`.
fn startup_script(s: &Setting) -> String {
    let value = |p: &Path| p.display().to_string().replace('%', "%%");
    format!(
        "@echo off\r\n\
         rem Starts the booger daemon at logon. Written by `booger daemon install`; `booger daemon uninstall` removes it.\r\n\
         set \"{}={}\"\r\n\
         set \"{}={}\"\r\n\
         set \"BOOGER_DAEMON={}\"\r\n\
         \"{}\" daemon start >nul\r\n",
        paths::SOCKET_ENV,
        value(&s.socket),
        paths::HOME_ENV,
        value(&s.data_dir),
        value(&s.binary),
        value(&s.client),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting() -> Setting {
        Setting {
            binary: PathBuf::from("/opt/my tools/boogerd"),
            client: PathBuf::from("/opt/my tools/booger"),
            socket: PathBuf::from("/run/user/1000/booger/boogerd.sock"),
            data_dir: PathBuf::from("/home/ann/100% <data>"),
        }
    }

    #[test]
    fn systemd_unit_carries_this_users_paths_escaped() {
        let unit = Manager::Systemd.render(&setting());
        assert!(unit.contains("ExecStart=\"/opt/my tools/boogerd\"\n"), "{unit}");
        assert!(unit.contains("Environment=\"BOOGER_SOCKET=/run/user/1000/booger/boogerd.sock\"\n"), "{unit}");
        assert!(unit.contains("Environment=\"BOOGER_HOME=/home/ann/100%% <data>\"\n"), "{unit}");
        assert!(unit.contains("StandardError=append:/home/ann/100%% <data>/boogerd.log\n"), "{unit}");
        assert!(!unit.contains("%h"), "every template path is replaced: {unit}");
    }

    #[test]
    fn launchd_plist_carries_this_users_paths_escaped() {
        let plist = Manager::Launchd.render(&setting());
        assert!(plist.contains("<string>/opt/my tools/boogerd</string>"), "{plist}");
        assert!(
            plist.contains("<key>BOOGER_HOME</key>\n        <string>/home/ann/100% &lt;data&gt;</string>"),
            "{plist}"
        );
        assert!(plist.contains("<key>StandardErrorPath</key>\n    <string>/home/ann/100% &lt;data&gt;/boogerd.log</string>\n</dict>\n</plist>\n"), "{plist}");
        assert_eq!(plist.matches("<dict>").count(), plist.matches("</dict>").count());
    }

    #[test]
    fn startup_script_starts_this_users_daemon_with_percent_escaped() {
        let script = Manager::Startup.render(&setting());
        assert!(script.starts_with("@echo off\r\n"), "{script}");
        assert!(script.contains("set \"BOOGER_HOME=/home/ann/100%% <data>\"\r\n"), "{script}");
        assert!(script.contains("set \"BOOGER_DAEMON=/opt/my tools/boogerd\"\r\n"), "{script}");
        assert!(script.ends_with("\"/opt/my tools/booger\" daemon start >nul\r\n"), "{script}");
    }
}
