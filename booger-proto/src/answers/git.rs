//! What the structural git tools answer: a branch's diff, a draft commit, a changelog.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

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
