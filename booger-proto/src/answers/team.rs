//! What the team index's tools answer: a publication, the team index's contents.

use schemars::JsonSchema;
use serde::Serialize;

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
