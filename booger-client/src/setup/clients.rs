//! The MCP clients `booger setup` knows: where each keeps its configuration on Linux and
//! macOS, under which key it lists MCP servers, and what an entry looks like there.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// How a client's configuration file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON, possibly with comments and trailing commas (edited in place, keeping both).
    Json,
    /// TOML (Codex).
    Toml,
}

/// The shape of one server entry in a client's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `{"command", "args", "env"}` (Claude Desktop, Cursor, Gemini, Windsurf, Codex).
    Plain,
    /// `{"type": "stdio", "command", "args", "env"}` (Claude Code, VS Code).
    Typed,
    /// `{"source": "custom", "command", "args", "env"}` (Zed's `context_servers`).
    Zed,
}

#[derive(Debug, Clone, Copy)]
pub struct Client {
    /// What the user types: `booger setup cursor`.
    pub id: &'static str,
    pub name: &'static str,
    /// The key (at the top of the file) that holds the servers.
    pub key: &'static str,
    pub format: Format,
    shape: Shape,
    /// The user's configuration, relative to the home directory (or the platform's config dir).
    user: Location,
    /// The project's configuration, relative to the project root, where the client has one.
    project: Option<&'static str>,
    /// A path (relative to home, like `user`) whose existence means the client is installed.
    marker: Location,
}

/// Where a file lives for this user.
#[derive(Debug, Clone, Copy)]
enum Location {
    /// Under the home directory on every platform.
    Home(&'static str),
    /// Under the platform's configuration directory: `$XDG_CONFIG_HOME` (default `~/.config`)
    /// on Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on Windows.
    Config(&'static str),
    /// Under `$CODEX_HOME` (default `~/.codex`).
    CodexHome(&'static str),
    /// Under Zed's folder: `~/.config/zed` on Linux and macOS, `%APPDATA%\Zed` on Windows.
    Zed(&'static str),
}

pub const CLIENTS: &[Client] = &[
    Client {
        id: "claude-code",
        name: "Claude Code",
        key: "mcpServers",
        format: Format::Json,
        shape: Shape::Typed,
        user: Location::Home(".claude.json"),
        project: Some(".mcp.json"),
        marker: Location::Home(".claude"),
    },
    Client {
        id: "claude-desktop",
        name: "Claude Desktop",
        key: "mcpServers",
        format: Format::Json,
        shape: Shape::Plain,
        user: Location::Config("Claude/claude_desktop_config.json"),
        project: None,
        marker: Location::Config("Claude"),
    },
    Client {
        id: "cursor",
        name: "Cursor",
        key: "mcpServers",
        format: Format::Json,
        shape: Shape::Plain,
        user: Location::Home(".cursor/mcp.json"),
        project: Some(".cursor/mcp.json"),
        marker: Location::Home(".cursor"),
    },
    Client {
        id: "vscode",
        name: "VS Code (Copilot agent)",
        key: "servers",
        format: Format::Json,
        shape: Shape::Typed,
        user: Location::Config("Code/User/mcp.json"),
        project: Some(".vscode/mcp.json"),
        marker: Location::Config("Code/User"),
    },
    Client {
        id: "codex",
        name: "Codex CLI",
        key: "mcp_servers",
        format: Format::Toml,
        shape: Shape::Plain,
        user: Location::CodexHome("config.toml"),
        project: None,
        marker: Location::CodexHome(""),
    },
    Client {
        id: "gemini",
        name: "Gemini CLI",
        key: "mcpServers",
        format: Format::Json,
        shape: Shape::Plain,
        user: Location::Home(".gemini/settings.json"),
        project: Some(".gemini/settings.json"),
        marker: Location::Home(".gemini"),
    },
    Client {
        id: "windsurf",
        name: "Windsurf",
        key: "mcpServers",
        format: Format::Json,
        shape: Shape::Plain,
        user: Location::Home(".codeium/windsurf/mcp_config.json"),
        project: None,
        marker: Location::Home(".codeium/windsurf"),
    },
    Client {
        id: "zed",
        name: "Zed",
        key: "context_servers",
        format: Format::Json,
        shape: Shape::Zed,
        user: Location::Zed("settings.json"),
        project: Some(".zed/settings.json"),
        marker: Location::Zed(""),
    },
];

pub fn find(id: &str) -> Option<&'static Client> {
    CLIENTS.iter().find(|c| c.id == id)
}

/// The user's directories, read once from the environment.
#[derive(Debug, Clone)]
pub struct Dirs {
    pub home: PathBuf,
    config: PathBuf,
    /// `$CODEX_HOME`, default `~/.codex`.
    pub codex: PathBuf,
}

impl Dirs {
    pub fn from_env() -> Option<Dirs> {
        let home = booger_proto::paths::home_dir()?;
        let config = booger_proto::paths::config_dir()?;
        let codex =
            std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()).map_or_else(|| home.join(".codex"), PathBuf::from);
        Some(Dirs { home, config, codex })
    }

    fn resolve(&self, at: Location) -> PathBuf {
        match at {
            Location::Home(p) => self.home.join(p),
            Location::Config(p) => self.config.join(p),
            Location::CodexHome("") => self.codex.clone(),
            Location::CodexHome(p) => self.codex.join(p),
            Location::Zed(p) => {
                let dir = if cfg!(windows) { self.config.join("Zed") } else { self.home.join(".config/zed") };
                if p.is_empty() { dir } else { dir.join(p) }
            }
        }
    }

    /// `path` with the home directory spelled `~`, for messages.
    pub fn show(&self, path: &Path) -> String {
        match path.strip_prefix(&self.home) {
            Ok(rest) => format!("~/{}", rest.display()),
            Err(_) => path.display().to_string(),
        }
    }
}

impl Client {
    /// The file to change: the project's when `project` is given, else the user's. None when
    /// the client has no project-level configuration.
    pub fn config_path(&self, dirs: &Dirs, project: Option<&Path>) -> Option<PathBuf> {
        match project {
            Some(root) => self.project.map(|p| root.join(p)),
            None => Some(dirs.resolve(self.user)),
        }
    }

    /// Whether the client seems installed for this user (its configuration or its folder exists).
    pub fn detected(&self, dirs: &Dirs) -> bool {
        dirs.resolve(self.user).exists() || dirs.resolve(self.marker).exists()
    }

    pub fn has_project_config(&self) -> bool {
        self.project.is_some()
    }

    /// The entry that reaches a team server at `url` with `token` in a header, in this
    /// client's shape; None for a client that takes no remote servers in its configuration.
    pub fn remote_entry(&self, url: &str, token: &str) -> Option<Value> {
        let headers = json!({ "Authorization": format!("Bearer {token}") });
        Some(match self.id {
            "claude-code" | "vscode" => json!({ "type": "http", "url": url, "headers": headers }),
            "cursor" => json!({ "url": url, "headers": headers }),
            "gemini" => json!({ "httpUrl": url, "headers": headers }),
            "windsurf" => json!({ "serverUrl": url, "headers": headers }),
            "codex" => json!({ "url": url, "http_headers": headers }),
            _ => return None,
        })
    }

    /// The entry that runs `booger mcp`, in this client's shape.
    pub fn entry(&self, booger: &Path, env: &[(String, String)]) -> Value {
        let mut e = Map::new();
        match self.shape {
            Shape::Plain => {}
            Shape::Typed => {
                e.insert("type".into(), json!("stdio"));
            }
            Shape::Zed => {
                e.insert("source".into(), json!("custom"));
            }
        }
        e.insert("command".into(), json!(booger.to_string_lossy()));
        e.insert("args".into(), json!(["mcp"]));
        // MCP launchers pass the server little of the user's environment: carry the variables
        // that decide which daemon and data directory booger uses.
        if !env.is_empty() {
            let vars: Map<String, Value> = env.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            e.insert("env".into(), Value::Object(vars));
        }
        Value::Object(e)
    }
}
