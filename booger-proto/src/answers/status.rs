//! What `status`, `index` and `projects` answer: the daemon, its projects and their indexes.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Counts, Embed, Facts};

/// The daemon's facts: `daemon/status`, the `booger://status` resource, and the first fields
/// of `status` (where each registered project is a [`ProjectLine`]).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DaemonFacts<P> {
    #[serde(flatten)]
    pub daemon: Daemon,
    #[schemars(with = "Vec<Facts>")]
    pub projects: Vec<P>,
}

impl<P> DaemonFacts<P> {
    /// The same facts with the projects made into `Q`s by `f`.
    pub fn map_projects<Q>(self, f: impl FnOnce(Vec<P>) -> Vec<Q>) -> DaemonFacts<Q> {
        DaemonFacts { daemon: self.daemon, projects: f(self.projects) }
    }
}

/// The daemon itself: who it is, where it listens and keeps its data, its memory, its HTTP
/// face and embedding tiers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Daemon {
    pub pid: u32,
    pub version: String,
    pub protocol: u32,
    pub started_at: String,
    pub uptime_s: u64,
    pub socket: PathBuf,
    pub data_dir: PathBuf,
    pub log_file: PathBuf,
    #[schemars(with = "Facts")]
    pub memory: Memory,
    #[schemars(extend("x-nullable" = true))]
    pub http_url: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub http_token_file: Option<PathBuf>,
    /// Why the daemon serves no HTTP, when it does not.
    #[schemars(extend("x-nullable" = true))]
    pub http_problem: Option<String>,
    /// The embedding tiers, null with embeddings off.
    #[schemars(extend("x-nullable" = true), with = "Option<Facts>")]
    pub embeddings: Option<EmbeddingTiers>,
}

/// The daemon's memory: the process, its heap and SQLite's, the warm indexes and the budget.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Memory {
    pub rss_bytes: u64,
    pub heap_used_bytes: u64,
    pub heap_free_bytes: u64,
    pub sqlite_bytes: u64,
    pub threads: u64,
    pub warm_bytes: u64,
    pub warm_projects: u64,
    pub budget_bytes: u64,
    pub idle_release_s: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EmbeddingTiers {
    pub tiers: Vec<String>,
    #[schemars(extend("x-nullable" = true))]
    pub problem: Option<String>,
}

/// `status`: the daemon, the project asked about, every registered project, the watches.
/// Its published schema names the fields and leaves the objects in them as objects: every
/// session reads `tools/list`, and the whole typed schema was 4.6 KB of it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Status {
    #[serde(flatten)]
    pub daemon: DaemonFacts<ProjectLine>,
    #[schemars(with = "Facts")]
    pub watches: Watches,
    /// The team index this daemon reads, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Facts>")]
    pub team: Option<TeamLink>,
    pub session: String,
    #[schemars(with = "Facts")]
    pub project: ProjectStatus,
}

/// A registered project as `status` lists it: with its watch, index and memory.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProjectLine {
    #[serde(flatten)]
    pub project: Project,
    pub watch: Facts,
    pub index_dir: PathBuf,
    pub size_on_disk: u64,
    pub warm_bytes: u64,
    pub idle_s: u64,
}

/// Directories watched across every project, within the system's budget.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Watches {
    pub directories: u64,
    pub budget: u64,
    pub events: u64,
    pub overflows: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TeamLink {
    /// The server, without user or password.
    pub server: String,
    /// Null until the daemon has used it.
    #[schemars(extend("x-nullable" = true))]
    pub reachable: Option<bool>,
    #[schemars(extend("x-nullable" = true))]
    pub error: Option<String>,
}

/// The project a `status` call is about: its index, or why there is none (`hint`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProjectStatus {
    pub registered: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<IndexStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// A project's index in `status`. When it does not open (`exists` false, or `error`), only
/// the first fields are there.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct IndexStatus {
    pub exists: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// A run in progress.
    #[schemars(extend("x-nullable" = true))]
    pub progress: Option<Progress>,
    pub watch: Facts,
    #[serde(flatten)]
    pub contents: Option<IndexContents>,
}

/// What an index that opened holds, and its tiers and last run.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct IndexContents {
    pub path: PathBuf,
    pub warm_bytes: u64,
    pub files: u64,
    pub chunks: u64,
    pub source_bytes: u64,
    pub size_on_disk: u64,
    pub languages: Counts,
    pub kinds: Counts,
    pub root_hash: String,
    pub last_indexed_at: String,
    pub problems_total: u64,
    /// `ready`, `building`, `stale` or `none`.
    pub ranking_index: String,
    pub grep_index: GrepIndex,
    /// Null with embeddings off.
    #[schemars(extend("x-nullable" = true))]
    pub embeddings: Option<Embed>,
    /// The last `eval`'s summary.
    #[schemars(extend("x-nullable" = true))]
    pub eval: Option<Facts>,
    pub calibration: Facts,
    /// The last run's skipped and set-aside files, as many as the answer lists.
    #[schemars(extend("x-nullable" = true))]
    pub last_report: Option<Facts>,
    pub with_generated: bool,
    pub problems: Vec<Skipped>,
    /// The index found damaged and rebuilt, when it was.
    #[schemars(extend("x-nullable" = true))]
    pub recovered: Option<Facts>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GrepIndex {
    pub ready: bool,
    pub pending_files: u64,
}

/// A run's progress.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub percent: f64,
    pub files_per_s: f64,
    pub eta_s: u64,
}

/// A file and why it was skipped, set aside or indexed with a problem: what a run reports and
/// `status` lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Index {
    pub project: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Facts>,
}

/// A registered project: the registry's record of it, as the daemon keeps it on disk and
/// as answers name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Project {
    /// Short unique name, the directory's name unless taken.
    pub name: String,
    /// Canonical absolute path.
    pub root: std::path::PathBuf,
    pub added_at: String,
    /// The index is kept in `<root>/.booger/` instead of the data directory (`--in-repo`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_repo: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Added {
    /// add: whether the project was new.
    New(bool),
    /// add-all: the projects it added.
    Listed(Vec<Project>),
}

/// `projects`: the list, or what `add`, `add-all` or `remove` did. A project is the
/// registry's record, one [`Project`] each.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Projects {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projects: Option<Vec<Project>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<Project>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub added: Option<Added>,
    /// add: the project was registered already, and its index moved (`--in-repo`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing: Option<Vec<Project>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_dir: Option<String>,
}
