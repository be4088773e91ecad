//! Each tool's arguments as a type: what a handler receives once a call has been validated
//! against the catalogue.
//!
//! The catalogue stays the one declaration of a tool's arguments (their schema, CLI flags and
//! descriptions); these types are how the daemon reads them. A test builds a call holding
//! every argument the catalogue declares and checks that each type takes exactly those, so
//! the two cannot drift apart.

use serde::{Deserialize, Serialize};

pub use super::{ChunkKind, Language};

/// How an answer is laid out. Each tool takes the modes its catalogue entry lists (checked
/// before an argument is read); its handler treats the others as its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    Content,
    Signatures,
    FilesWithMatches,
    Count,
    /// branch-diff: the answer's data as JSON text.
    Json,
    /// branch-diff: a line per symbol.
    List,
    /// branch-diff: a line per file.
    Files,
}

/// `project`: a registered name or path; the session's project when absent.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct On {
    pub project: Option<String>,
}

/// The filters of the search-side tools.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Filters {
    pub kind: Option<ChunkKind>,
    pub language: Option<Language>,
    pub path_prefix: Option<String>,
}

/// Paging of a result list, and the answer's budget.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Paging {
    pub head_limit: Option<usize>,
    pub offset: Option<usize>,
    pub max_tokens: Option<usize>,
    pub cursor: Option<String>,
}

/// Whose notes a call reads or writes: a session id, `"shared"`, or the connection's own.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Notes {
    pub session: Option<String>,
    #[serde(flatten)]
    pub on: On,
}

/// A ranked search's query and how its answer is shaped: `workspace-search`, which searches
/// every project.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Query {
    pub query: String,
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    /// content: each result's first `max_lines` lines (whole chunks when set).
    #[serde(default)]
    pub max_lines: Option<usize>,
    #[serde(flatten)]
    pub filters: Filters,
    #[serde(flatten)]
    pub paging: Paging,
}

/// `workspace-search`: a query over every project, and the team index's repositories too
/// when `team` is set.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Workspace {
    #[serde(flatten)]
    pub query: Query,
    #[serde(default)]
    pub team: bool,
}

/// `search` and `semantic-search`: a query in one project.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Search {
    #[serde(flatten)]
    pub query: Query,
    #[serde(flatten)]
    pub on: On,
}

/// `hybrid-search`: a search and how its two rankings are fused.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Hybrid {
    #[serde(flatten)]
    pub search: Search,
    #[serde(default)]
    pub fusion: Option<String>,
    #[serde(default)]
    pub k: Option<usize>,
    #[serde(default)]
    pub semantic_weight: Option<f64>,
    #[serde(default)]
    pub alpha: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Symbols {
    pub path: Option<String>,
    pub output_mode: Option<OutputMode>,
    pub kind: Option<ChunkKind>,
    pub language: Option<Language>,
    #[serde(flatten)]
    pub paging: Paging,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct References {
    pub symbol: String,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    #[serde(default)]
    pub language: Option<Language>,
    #[serde(default)]
    pub path_prefix: Option<String>,
    #[serde(flatten)]
    pub paging: Paging,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Grep {
    pub pattern: String,
    #[serde(default)]
    pub literal: bool,
    #[serde(default)]
    pub case_insensitive: bool,
    #[serde(default)]
    pub context: usize,
    /// Also every repository published to the team index.
    #[serde(default)]
    pub team: bool,
    #[serde(flatten)]
    pub filters: Filters,
    #[serde(flatten)]
    pub paging: Paging,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct DirectorySummary {
    pub path: Option<String>,
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct TestsFor {
    pub symbol: String,
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    #[serde(flatten)]
    pub paging: Paging,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ChangedSince {
    pub since: String,
    #[serde(default)]
    pub path_prefix: Option<String>,
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    #[serde(flatten)]
    pub paging: Paging,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct SearchExpand {
    pub query: String,
    #[serde(default)]
    pub top_files: Option<usize>,
    #[serde(default)]
    pub head_limit: Option<usize>,
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub filters: Filters,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Batch {
    pub calls: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Annotate {
    pub target: String,
    pub note: String,
    #[serde(default)]
    pub ttl: Option<u64>,
    #[serde(flatten)]
    pub notes: Notes,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Annotations {
    pub target: Option<String>,
    pub offset: Option<usize>,
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub notes: Notes,
}

/// `focus` and `visit`.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Paths {
    pub paths: Vec<String>,
    #[serde(flatten)]
    pub notes: Notes,
}

/// `forget`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Forget {
    #[serde(flatten)]
    pub notes: Notes,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Status {
    pub all: bool,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Index {
    pub path: Option<String>,
    pub full: bool,
    pub with_generated: Option<bool>,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Projects {
    pub action: Option<String>,
    pub path: Option<String>,
    pub in_repo: bool,
    pub force: bool,
}

/// `branch-diff` and `draft-commit` (which has no `output_mode` or `max_tokens`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Diff {
    pub base: Option<String>,
    pub include: Option<String>,
    pub path_prefix: Option<String>,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct BranchDiff {
    #[serde(flatten)]
    pub diff: Diff,
    pub output_mode: Option<OutputMode>,
    pub max_tokens: Option<usize>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Changelog {
    pub from: Option<String>,
    pub to: Option<String>,
    pub path_prefix: Option<String>,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Embed {
    pub action: Option<String>,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Eval {
    pub commits: Option<usize>,
    pub queries: Option<usize>,
    pub details: bool,
    #[serde(flatten)]
    pub on: On,
}

/// `publish`: a commit of a project, to the team index.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Publish {
    pub path: Option<String>,
    pub rev: Option<String>,
    pub repository: Option<String>,
    pub force: bool,
    #[serde(flatten)]
    pub on: On,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct TeamStatus {}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Map, Value, json};

    use super::*;
    use crate::tools::{Kind, find};

    /// A call of `tool` holding every argument the catalogue declares, each with a value of
    /// its kind.
    fn full_call(tool: &str) -> Value {
        let spec = find(tool).unwrap_or_else(|| panic!("no tool {tool}"));
        let mut args = Map::new();
        for p in spec.params {
            let v = match p.kind {
                Kind::String | Kind::Text => json!("x"),
                Kind::Integer { min, .. } => json!(min.max(1)),
                Kind::Number { min, .. } => json!(min),
                Kind::Boolean => json!(true),
                Kind::Enum(values) => json!(values[0]),
                Kind::Strings => json!(["a"]),
                Kind::Calls => json!([]),
            };
            args.insert(p.name.to_owned(), v);
        }
        Value::Object(args)
    }

    /// `T` takes every argument `tool` declares, and nothing else.
    fn takes_exactly<T: DeserializeOwned + Serialize>(tool: &str) {
        let call = full_call(tool);
        let typed: T = serde_json::from_value(call.clone())
            .unwrap_or_else(|e| panic!("{tool}: the catalogue's arguments do not fit its type: {e}"));
        let back = serde_json::to_value(&typed).unwrap();
        let mut declared: Vec<&String> = call.as_object().unwrap().keys().collect();
        let mut typed_keys: Vec<&String> = back.as_object().unwrap().keys().collect();
        declared.sort();
        typed_keys.sort();
        assert_eq!(typed_keys, declared, "{tool}: its type's fields and the catalogue's arguments differ");
    }

    #[test]
    fn each_tools_type_takes_exactly_the_arguments_the_catalogue_declares() {
        type Check = fn(&str);
        let checks: &[(&str, Check)] = &[
            ("search", takes_exactly::<Search>),
            ("semantic-search", takes_exactly::<Search>),
            ("hybrid-search", takes_exactly::<Hybrid>),
            ("workspace-search", takes_exactly::<Workspace>),
            ("symbols", takes_exactly::<Symbols>),
            ("references", takes_exactly::<References>),
            ("grep", takes_exactly::<Grep>),
            ("directory-summary", takes_exactly::<DirectorySummary>),
            ("tests-for", takes_exactly::<TestsFor>),
            ("changed-since", takes_exactly::<ChangedSince>),
            ("search-expand", takes_exactly::<SearchExpand>),
            ("batch", takes_exactly::<Batch>),
            ("annotate", takes_exactly::<Annotate>),
            ("annotations", takes_exactly::<Annotations>),
            ("focus", takes_exactly::<Paths>),
            ("visit", takes_exactly::<Paths>),
            ("forget", takes_exactly::<Forget>),
            ("status", takes_exactly::<Status>),
            ("index", takes_exactly::<Index>),
            ("projects", takes_exactly::<Projects>),
            ("branch-diff", takes_exactly::<BranchDiff>),
            ("draft-commit", takes_exactly::<Diff>),
            ("changelog", takes_exactly::<Changelog>),
            ("embed", takes_exactly::<Embed>),
            ("eval", takes_exactly::<Eval>),
            ("publish", takes_exactly::<Publish>),
            ("team-status", takes_exactly::<TeamStatus>),
        ];
        for t in crate::tools::TOOLS {
            assert!(checks.iter().any(|(n, _)| *n == t.name), "{}: no arguments type checked here", t.name);
        }
        for (tool, check) in checks {
            check(tool);
        }
    }
}
