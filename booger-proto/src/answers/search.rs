//! What the searches answer: ranked chunks or files, each a symbol with its place.

use schemars::JsonSchema;
use serde::Serialize;

use super::Facts;

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
