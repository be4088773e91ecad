//! The daemon's configuration, resolved once at start.

use std::path::PathBuf;

use booger_proto::paths::TEAM_URL_FILE;

#[derive(Debug, Clone)]
pub struct Config {
    /// The local socket (a named pipe path on Windows).
    pub socket: PathBuf,
    /// Where the project registry and the log live.
    pub data_dir: PathBuf,
    /// Text files larger than this are cut into fixed-size blocks instead of being parsed.
    pub max_file_bytes: u64,
    /// Directories watched at most, across projects (beyond: periodic re-walks).
    pub max_watches: usize,
    /// Follow file changes (off: projects are reconciled at start and by `index` only).
    pub watch: bool,
    /// Embed chunks in the background for semantic search.
    pub embed: bool,
    /// Which embedders (`--embedder`, the service's URL, model and key).
    pub embedder: crate::domain::embed::provider::Settings,
    pub watch_timing: crate::engine::live::Timing,
    /// A project no query has used for this long gives back its warm structures.
    pub idle_release: std::time::Duration,
    /// Warm structures across projects are kept under this many bytes, least recently used
    /// released first.
    pub memory_budget: usize,
    /// Registering a directory with more files than this to index needs `--force` (0: never).
    pub confirm_above_files: usize,
    /// Where to serve HTTP (health, metrics, status page); `None`: not at all.
    pub http: Option<std::net::SocketAddr>,
    /// Serve HTTP on an address that is not loopback (`--http-allow-remote`).
    pub http_allow_remote: bool,
    /// Let HTTP clients call tools that change something (`--http-allow-writes`): register,
    /// remove, index, notes. Off: a token that leaks reads, it does not write.
    pub http_allow_writes: bool,
    /// The team index (a PostgreSQL URL): where `publish` writes, what `--team` reads and a
    /// new clone is filled from. Only ever the daemon's own (a flag, the environment, or the
    /// one kept from an earlier start: [`Config::settle_team_url`]), never a tool argument,
    /// so that the password this daemon holds goes to no other server.
    pub team_url: Option<String>,
}

/// Ten minutes: an agent's pauses between questions are shorter, a lunch break is longer.
/// Where `boogerd` serves HTTP by default.
pub const DEFAULT_HTTP_ADDR: &str = "127.0.0.1:7767";

pub const DEFAULT_IDLE_RELEASE_SECS: u64 = 600;
/// Room for the ranking index and vectors of a few large projects on a laptop.
pub const DEFAULT_MEMORY_BUDGET_MB: usize = 192;

/// Larger than nearly every repository (the Linux kernel has about 90,000 files); a home or a
/// system tree passes it at once.
pub const DEFAULT_CONFIRM_ABOVE_FILES: usize = 150_000;

impl Config {
    /// Defaults from the environment (`BOOGER_SOCKET`, `BOOGER_HOME`, XDG variables).
    pub fn from_env() -> Self {
        Self {
            socket: booger_proto::paths::default_socket(),
            data_dir: booger_proto::paths::data_dir(),
            max_file_bytes: crate::source::DEFAULT_MAX_FILE_BYTES,
            max_watches: crate::engine::watch::default_budget(),
            watch: true,
            embed: true,
            embedder: crate::domain::embed::provider::Settings::default(),
            watch_timing: crate::engine::live::Timing::default(),
            idle_release: std::time::Duration::from_secs(DEFAULT_IDLE_RELEASE_SECS),
            memory_budget: DEFAULT_MEMORY_BUDGET_MB << 20,
            confirm_above_files: DEFAULT_CONFIRM_ABOVE_FILES,
            http: DEFAULT_HTTP_ADDR.parse().ok(),
            http_allow_remote: false,
            http_allow_writes: false,
            team_url: None,
        }
    }

    /// Settles the team URL: one `given` (flag or environment) is kept in the data directory
    /// (private to the user) and used; an empty one forgets the kept one; none given, the kept
    /// one is used, so a daemon started again without it sees the same team. Without `keep`
    /// (a one-off command, the team server) the kept one is read, never written.
    pub fn settle_team_url(&mut self, given: Option<String>, keep: bool) -> std::io::Result<()> {
        let kept = self.data_dir.join(TEAM_URL_FILE);
        self.team_url = match given.map(|u| u.trim().to_owned()) {
            Some(url) if !keep => Some(url).filter(|u| !u.is_empty()),
            Some(url) if url.is_empty() => {
                match std::fs::remove_file(&kept) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
                None
            }
            Some(url) => {
                crate::base::storage::create_private_dir(&self.data_dir)?;
                crate::base::storage::write_private(&kept, format!("{url}\n").as_bytes())?;
                Some(url)
            }
            None => match std::fs::read_to_string(&kept) {
                Ok(text) => Some(text.trim().to_owned()).filter(|u| !u.is_empty()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            },
        };
        Ok(())
    }

    pub(crate) fn registry_file(&self) -> PathBuf {
        self.data_dir.join(booger_proto::paths::REGISTRY_FILE)
    }
}
