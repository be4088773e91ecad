//! What each tool answers: one type per answer, from which its JSON Schema is derived and
//! published as the tool's MCP `outputSchema`, beside the data itself as `structuredContent`.
//!
//! A type names the fields a client can rely on. Fields that only some output modes carry
//! (`results` is empty in count mode, `by_class` appears only there) are optional, so one
//! schema holds for every mode. Every tool in the catalogue has one (a test checks that), and
//! the end-to-end MCP test validates real answers against them. The schema a client reads is
//! kept small: it states fields and types, not the descriptions written here for people.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An object whose fields no client relies on one by one (how fresh the index was, a
/// report): published as an object only, since every session reads `tools/list`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(transparent)]
pub struct Facts(pub Value);

impl Facts {
    /// `value` as facts (null if it does not serialize).
    pub fn of<T: Serialize>(value: &T) -> Facts {
        Facts(serde_json::to_value(value).unwrap_or_default())
    }
}

impl JsonSchema for Facts {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Facts".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "object" })
    }
}

/// Names counted: languages, kinds, classes of mention.
pub type Counts = BTreeMap<String, u64>;

/// One symbol: a chunk of code without its text.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Symbol {
    pub path: String,
    pub start_line: u64,
    pub end_line: u64,
    pub kind: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub parent: Option<String>,
}

/// One ranked result: a symbol with its score, its code (content mode) and the notes on it;
/// in files mode a file by its best chunk.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Ranked {
    #[serde(flatten)]
    pub symbol: Symbol,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<String>>,
}

/// A row of a ranked answer: a chunk, or (`files_with_matches`) a file by its best chunks.
/// The schema describes the chunk row; a file row carries its best chunk's fields too.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum RankedRow {
    Chunk(Ranked),
    File(RankedFile),
}

/// `files_with_matches`: a file, named with its best chunk, and how many of its chunks matched.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RankedFile {
    pub path: String,
    pub start_line: u64,
    pub end_line: u64,
    pub kind: String,
    pub name: String,
    pub score: f64,
    pub matches: u64,
    /// Its best chunks, best first.
    pub chunks: Vec<Span>,
}

/// Where a chunk is in its file, and what it is.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Span {
    pub start_line: u64,
    pub end_line: u64,
    pub kind: String,
    pub name: String,
}

/// A row of an outline: a symbol, or (`files_with_matches`) a file and how many it holds.
/// The schema describes the symbol row.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum SymbolRow {
    Symbol(Symbol),
    File { path: String, symbols: u64 },
}

/// `search`, `semantic-search`, `hybrid-search`, `workspace-search`.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Search {
    #[schemars(with = "Vec<Ranked>")]
    pub results: Vec<RankedRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// workspace-search: how many projects answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projects: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    #[schemars(extend("x-nullable" = true))]
    pub cursor: Option<String>,
    /// Why the answer is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Facts>,
    /// Several projects answered (`workspace-search`, a batch over several): each one's facts,
    /// in the order they answered; `index` is then the first's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexes: Option<Vec<Facts>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence_score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence_threshold: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_good_match: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestions: Option<Vec<String>>,
    /// Why the ranking is what it is (semantic and hybrid search without vectors).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    High,
    Low,
}

/// `symbols`, `changed-since`.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Symbols {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<Symbol>>")]
    pub results: Option<Vec<SymbolRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    #[schemars(extend("x-nullable" = true))]
    pub cursor: Option<String>,
    /// changed-since: the time asked about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Why the answer is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Facts>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Mention {
    pub path: String,
    pub line: u64,
    pub class: MentionClass,
    /// The function or container the mention is in ("" at the top level).
    pub within: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MentionClass {
    Definition,
    Call,
    Type,
    Import,
    Reference,
}

impl MentionClass {
    pub fn name(self) -> &'static str {
        match self {
            Self::Definition => "definition",
            Self::Call => "call",
            Self::Type => "type",
            Self::Import => "import",
            Self::Reference => "reference",
        }
    }
}

/// A file that mentions the symbol, and how often (files_with_matches).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MentionedIn {
    pub path: String,
    pub mentions: u64,
}

/// One result of `references`: a line, or in files_with_matches a file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Found {
    Line(Mention),
    File(MentionedIn),
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct References {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<Found>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_class: Option<Counts>,
    /// Why the answer is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Facts>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Line {
    pub path: String,
    pub line: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Grep {
    pub total: u64,
    /// True when this answer holds every matching line: false when the scan stopped at its
    /// deadline (`total` may then be short) or a `cursor` leads to more.
    pub complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<Line>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Facts>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct DirectorySummary {
    pub files: u64,
    pub chunks: u64,
    #[schemars(extend("x-nullable" = true))]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub languages: Option<Counts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Counts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_points: Option<Vec<EntryPoint>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_here: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subdirectories: Option<Counts>,
    /// Why the directory shows nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Facts>,
}

/// A function a directory is likely entered by (`main`, `run`, `handle_*`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EntryPoint {
    pub path: String,
    pub line: u64,
    pub name: String,
    pub signature: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Why {
    pub path: String,
    pub name: String,
    pub why: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct TestsFor {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<Symbol>>")]
    pub results: Option<Vec<SymbolRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<Vec<Why>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Why no test was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Facts>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Outline {
    pub path: String,
    #[schemars(with = "Vec<Symbol>")]
    pub symbols: Vec<SymbolRow>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct SearchExpand {
    #[schemars(with = "Vec<Ranked>")]
    pub results: Vec<RankedRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outlines: Option<Vec<Outline>>,
    /// Why the answer is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Facts>,
}

/// One call of a batch, answered.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Answered {
    pub tool: String,
    #[serde(rename = "isError")]
    pub is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Batch {
    pub results: Vec<Answered>,
    pub failed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Facts>,
    /// Several projects answered (`workspace-search`, a batch over several): each one's facts,
    /// in the order they answered; `index` is then the first's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexes: Option<Vec<Facts>>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Annotated {
    pub id: i64,
    pub target: String,
    #[schemars(extend("x-nullable" = true))]
    pub expires_at: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Annotation {
    pub id: i64,
    pub target: String,
    pub note: String,
    /// None for a note in the shared context.
    #[schemars(extend("x-nullable" = true))]
    pub session: Option<String>,
    pub created_at: String,
    #[schemars(extend("x-nullable" = true))]
    pub expires_at: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Annotations {
    pub annotations: Vec<Annotation>,
    /// Notes in all (the page lists some).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

/// `focus`, `visit`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PathsAdded {
    pub added: u64,
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Forgotten {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workset: Option<u64>,
}

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

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct DiffTotals {
    pub files: u64,
    pub added: u64,
    pub modified: u64,
    pub removed: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChangedFile {
    pub path: String,
    pub status: String,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct BranchDiff {
    /// One changed file each, with its symbols' changes.
    #[schemars(with = "Vec<ChangedFile>")]
    pub files: Vec<Value>,
    pub totals: DiffTotals,
    #[schemars(extend("x-nullable" = true))]
    pub base: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub base_commit: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub head: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub head_commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include: Option<String>,
    // Carried, and left out of the schema every session reads (the default tools/list has a
    // byte budget): the merge base, warnings, and what the budget left out.
    #[schemars(skip)]
    pub compared_with: Option<String>,
    #[schemars(skip)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[schemars(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted_files: Option<u64>,
    #[schemars(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct DraftCommit {
    #[schemars(extend("x-nullable" = true))]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What was described: `feature vs main (merge base abc1234)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub described: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub totals: Option<DiffTotals>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Changelog {
    pub markdown: String,
    #[schemars(extend("x-nullable" = true))]
    pub from: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub totals: Option<DiffTotals>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}

/// `embed`, and a project's embeddings in `status`: each tier's coverage, which tier answers
/// (the top-level `model`, `embedded` and `embeddable` are the best tier's: what embedding
/// converges to), stale vectors, and the last error.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Embed {
    #[schemars(extend("x-nullable" = true))]
    pub model: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub embedded: Option<u64>,
    #[schemars(extend("x-nullable" = true))]
    pub embeddable: Option<u64>,
    pub answering: String,
    pub tiers: Vec<EmbedTier>,
    /// Vectors of models no tier uses any more, kept until the tiers are complete.
    pub stale: u64,
    pub running: bool,
    #[schemars(extend("x-nullable" = true))]
    pub error: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub problem: Option<String>,
}

/// One embedding tier's coverage of a project.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EmbedTier {
    pub model: String,
    pub embedded: u64,
    pub embeddable: u64,
    pub ready: bool,
}

/// `eval`: how well each search method finds, on this project, what its own commits
/// changed (the commits' subjects as queries); while it runs, how far it got.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Eval {
    pub project: String,
    pub running: bool,
    /// While it runs: the queries asked so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done: Option<u64>,
    pub queries: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// The commits read, at most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<History>,
    /// Why there is nothing to measure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Each method's figures, and the grep ranking's (`grep-rank`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Facts>")]
    pub methods: Option<BTreeMap<String, MethodFigures>>,
    /// Methods not measured, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Facts>")]
    pub calibration: Option<EvalCalibration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub took_s: Option<f64>,
    /// With `details`: every query, its gold and what each method answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<Facts>>")]
    pub details: Option<Value>,
}

/// The history an evaluation read.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct History {
    pub scanned: u64,
    pub shallow: bool,
    pub skipped: SkippedCommits,
}

/// Why commits gave no query.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct SkippedCommits {
    /// Too short, or a release, bump, merge or revert.
    pub subject: usize,
    /// More source files than a query may have.
    pub too_many_files: usize,
    /// No source file (documentation, configuration).
    pub no_source: usize,
    /// Its source files were deleted then, or are gone since.
    pub gone_or_renamed: usize,
    /// The oldest commit of a shallow clone, whose diff is its whole tree.
    pub shallow_boundary: usize,
}

/// A method's figures over every query, and per language.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MethodFigures {
    pub all: Averages,
    pub by_language: BTreeMap<String, Averages>,
}

/// Mean recall and rank figures over `n` queries (`Fn@10` over the `n_fn` that name
/// functions), and the latency's median and 95th percentile.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Averages {
    pub n: u64,
    #[serde(rename = "R@1")]
    pub r1: f64,
    #[serde(rename = "R@10")]
    pub r10: f64,
    #[serde(rename = "MRR@10")]
    pub mrr10: f64,
    pub n_fn: u64,
    #[serde(rename = "Fn@10")]
    pub fn10: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
}

/// The calibration an evaluation kept for search (or the defaults, and why they hold).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EvalCalibration {
    pub threshold: f64,
    pub semantic_weight: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// How the calibration did on the newer queries.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Validation {
    /// Queries used to calibrate (older) and to validate (newer).
    pub calibrated_on: u64,
    /// Each semantic weight tried: its mean R@10 + MRR@10 on the older queries, and its
    /// paired gain over weight 0 in standard errors.
    pub weights_tried: Vec<(f64, f64, f64)>,
    pub validated_on: u64,
    /// The newer commits' subjects below the threshold.
    pub subjects_flagged: f64,
    /// Queries of everyday English words the project does not speak of, below it.
    pub foreign_flagged: f64,
    /// R@10 and MRR@10 on the newer queries: lexical, semantic, hybrid at the calibrated
    /// weight, and hybrid at the default weight (null where not measured).
    pub heldout: BTreeMap<String, Option<Heldout>>,
}

#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
pub struct Heldout {
    #[serde(rename = "R@10")]
    pub r10: f64,
    #[serde(rename = "MRR@10")]
    pub mrr10: f64,
}

/// `publish`: what one commit's publication sent.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Published {
    pub project: String,
    /// The name it is published under in the team index.
    pub repository: String,
    pub commit: String,
    /// Files of the commit (blobs at a path).
    pub files: u64,
    /// Distinct blobs the server lacked, chunked and sent.
    pub blobs_sent: u64,
    /// False when the commit was published already (nothing changed).
    pub new_commit: bool,
    /// The server, without user or password.
    pub server: String,
    pub elapsed_ms: u64,
    /// The project's own index offered with the commit, for fresh clones to start from
    /// (absent when the project has no index here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prebuilt_index: Option<PrebuiltIndex>,
}

/// A project's index offered with a published commit.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PrebuiltIndex {
    /// "sent", "stored already", "not needed" (one of a commit that changed little is
    /// stored: clones start from it) or "skipped".
    pub state: String,
    /// Its size, and sent compressed (when sent).
    pub bytes: u64,
    pub packed_bytes: u64,
    /// Why it was not sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    pub elapsed_ms: u64,
}

/// `team-status`: what the team index holds.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct TeamStatus {
    /// The server, without user or password.
    pub server: String,
    pub schema: u64,
    pub repositories: Vec<TeamRepository>,
    pub blobs: u64,
    pub chunks: u64,
    pub size_bytes: u64,
}

/// One repository of the team index, at its head.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct TeamRepository {
    pub name: String,
    /// Its latest published commit on its default branch (what team search reads).
    pub head: String,
    pub files: u64,
    pub commits: u64,
    /// When its latest commit was published (RFC 3339, UTC).
    pub last_publish: String,
    /// The commit of its latest prebuilt index (what a fresh clone starts from), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prebuilt_index: Option<String>,
}

/// The output schema of the tool `name`, or None for a name the catalogue does not know.
pub fn schema(name: &str) -> Option<Value> {
    Some(match name {
        "search" | "semantic-search" | "hybrid-search" | "workspace-search" => of::<Search>(),
        "symbols" | "changed-since" => of::<Symbols>(),
        "references" => of::<References>(),
        "grep" => of::<Grep>(),
        "directory-summary" => of::<DirectorySummary>(),
        "tests-for" => of::<TestsFor>(),
        "search-expand" => of::<SearchExpand>(),
        "batch" => of::<Batch>(),
        "annotate" => of::<Annotated>(),
        "annotations" => of::<Annotations>(),
        "focus" | "visit" => of::<PathsAdded>(),
        "forget" => of::<Forgotten>(),
        "status" => of::<Status>(),
        "index" => of::<Index>(),
        "projects" => of::<Projects>(),
        "branch-diff" => of::<BranchDiff>(),
        "draft-commit" => of::<DraftCommit>(),
        "changelog" => of::<Changelog>(),
        "embed" => of::<Embed>(),
        "eval" => of::<Eval>(),
        "publish" => of::<Published>(),
        "team-status" => of::<TeamStatus>(),
        _ => return None,
    })
}

/// `T`'s schema as `tools/list` publishes it: inline, and only what validates (no
/// descriptions, titles or number formats; every session pays for each byte).
pub(crate) fn of<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut v = generator.into_root_schema_for::<T>().to_value();
    compact(&mut v);
    // What an answer always carries is said once, at its top; a row is its fields and their
    // types (each `required` list of a row costs every session its bytes again).
    for nested in v.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
        drop_required(nested);
    }
    v
}

fn drop_required(v: &mut Value) {
    match v {
        Value::Object(o) => {
            // A list of names, not a field called `required` (whose schema is an object).
            if o.get("required").is_some_and(Value::is_array) {
                o.remove("required");
            }
            o.values_mut().for_each(drop_required);
        }
        Value::Array(a) => a.iter_mut().for_each(drop_required),
        _ => {}
    }
}

fn compact(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for key in ["description", "title", "format", "$schema"] {
                o.remove(key);
            }
            // Counts and line numbers: that they are integers is what a client checks.
            if o.get("minimum").and_then(Value::as_f64) == Some(0.0) {
                o.remove("minimum");
            }
            // Any item at all: the same as saying nothing.
            if o.get("items") == Some(&Value::Bool(true)) {
                o.remove("items");
            }
            // An optional field is left out when it has no value, never null, unless the
            // answer says null (`x-nullable`).
            let required: Vec<Value> = o.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
            if let Some(Value::Object(props)) = o.get_mut("properties") {
                for (name, p) in props.iter_mut() {
                    let nullable = p.as_object_mut().and_then(|p| p.remove("x-nullable")).is_some();
                    if !nullable && !required.contains(&Value::String(name.clone())) {
                        drop_null(p);
                    }
                }
            }
            o.values_mut().for_each(compact);
        }
        Value::Array(a) => a.iter_mut().for_each(compact),
        _ => {}
    }
}

/// `p` without `null` among its types or values.
fn drop_null(p: &mut Value) {
    let Some(o) = p.as_object_mut() else { return };
    if let Some(Value::Array(types)) = o.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            o.insert("type".to_owned(), only);
        }
    }
    if let Some(Value::Array(values)) = o.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    // `Option<Struct>` is `anyOf [struct, null]`.
    if let Some(Value::Array(any)) = o.get("anyOf").cloned() {
        let kept: Vec<Value> = any.into_iter().filter(|s| s.get("type") != Some(&Value::from("null"))).collect();
        if let [one] = kept.as_slice() {
            o.remove("anyOf");
            for (k, v) in one.as_object().into_iter().flatten() {
                o.insert(k.clone(), v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::TOOLS;

    #[test]
    fn every_tool_has_an_output_schema_of_an_object() {
        for t in TOOLS {
            let s = schema(t.name).unwrap_or_else(|| panic!("no output schema for {}", t.name));
            assert_eq!(s["type"], "object", "{}: MCP structured content is an object", t.name);
            for r in s["required"].as_array().into_iter().flatten() {
                assert!(s["properties"].get(r.as_str().unwrap()).is_some(), "{}: required {r} is described", t.name);
            }
        }
    }
}
