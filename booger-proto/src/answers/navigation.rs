//! What the tools that read code answer: symbols, references, grep, summaries, tests, expansions.

use schemars::JsonSchema;
use serde::Serialize;

use super::{Counts, Facts, Ranked, RankedRow, Symbol, SymbolRow};

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
