//! The team server's tools: what a remote agent may ask of the team index (read-only, any
//! published repository and commit its token may read), their arguments as types and their
//! answers, declared like the local catalogue so `tools/list`, validation and the answers'
//! `outputSchema` come from one place.
//!
//! A repository is named as it was published (`booger team status` lists them); a commit is
//! a commit id, a prefix of one, or a branch it was published from; without one, the
//! repository's head (its latest published commit on its default branch).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tools::params::{KIND, LANGUAGE, param, required};
use crate::tools::{ChunkKind, Effect, Kind, Language, Param, ToolSpec};

const REPOSITORY: Param = param("repository", Kind::String, "Repository as published (see status). Default: all.");
const REPOSITORY_REQUIRED: Param = required("repository", Kind::String, "Repository as published (see status).");
const COMMIT: Param = param("commit", Kind::String, "Commit id, prefix or branch. Default: the repository's head.");
const PATH_PREFIX: Param = param("path_prefix", Kind::String, "Only paths under this prefix.");
const HEAD_LIMIT: Param = param("head_limit", Kind::Integer { min: 1, max: 200 }, "Results. Default: 10.");

const fn read_only(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    params: &'static [Param],
) -> ToolSpec {
    ToolSpec {
        name,
        title,
        summary: description,
        description,
        details: description,
        params,
        effect: Effect::ReadOnly,
        mcp_json: false,
    }
}

/// Every tool the team server serves.
pub const TOOLS: &[ToolSpec] = &[
    read_only(
        "search",
        "Search code",
        "Ranked code search in the team index: definitions named by the query first, then chunks holding all its \
         words. Queries may be issue text or tracebacks. Results name repository@commit:path and lines.",
        &[required("query", Kind::Text, "What to find."), REPOSITORY, COMMIT, PATH_PREFIX, LANGUAGE, KIND, HEAD_LIMIT],
    ),
    read_only(
        "hybrid-search",
        "Hybrid search",
        "The search by words and meaning; the team index holds no embeddings yet, so it answers by words (as \
         search), and says so.",
        &[required("query", Kind::Text, "What to find."), REPOSITORY, COMMIT, PATH_PREFIX, LANGUAGE, KIND, HEAD_LIMIT],
    ),
    read_only(
        "workspace-search",
        "Search every repository",
        "The search across every repository this token may read, each at its head.",
        &[required("query", Kind::Text, "What to find."), PATH_PREFIX, LANGUAGE, KIND, HEAD_LIMIT],
    ),
    read_only(
        "grep",
        "Grep",
        "Lines matching a regular expression (or literal text) in published files, as repository@commit:path:line.",
        &[
            required("pattern", Kind::Text, "Regular expression (Rust syntax)."),
            REPOSITORY,
            COMMIT,
            PATH_PREFIX,
            LANGUAGE,
            param("literal", Kind::Boolean, "Match the pattern as plain text."),
            param("case_insensitive", Kind::Boolean, "Ignore case."),
            param("head_limit", Kind::Integer { min: 1, max: 500 }, "Lines. Default: 50."),
        ],
    ),
    read_only(
        "symbols",
        "Definitions",
        "Definitions (functions, types, ...) of a repository at a commit, under a path or by name.",
        &[
            REPOSITORY_REQUIRED,
            COMMIT,
            param("path", Kind::String, "File or directory (as the local `symbols` takes it)."),
            param("name", Kind::String, "Only definitions whose name holds this (any case)."),
            PATH_PREFIX,
            KIND,
            param("head_limit", Kind::Integer { min: 1, max: 500 }, "Results. Default: 100."),
        ],
    ),
    read_only(
        "references",
        "References",
        "Lines that use an identifier (whole word), its definitions marked, across the readable repositories.",
        &[
            required("symbol", Kind::String, "Identifier, e.g. parse_config (as the local `references` takes it)."),
            REPOSITORY,
            COMMIT,
            PATH_PREFIX,
            LANGUAGE,
            param("head_limit", Kind::Integer { min: 1, max: 500 }, "Lines. Default: 50."),
        ],
    ),
    read_only(
        "tests-for",
        "Tests for",
        "Test code that exercises a definition: named after it, or calling or mentioning it.",
        &[
            required("symbol", Kind::String, "Definition name, e.g. parse_config or Config.load."),
            REPOSITORY,
            COMMIT,
            param("head_limit", Kind::Integer { min: 1, max: 200 }, "Results. Default: 20."),
        ],
    ),
    read_only(
        "directory-summary",
        "Directory summary",
        "A directory of a published commit: its subdirectories with file counts, its files with language and \
         top-level definitions.",
        &[REPOSITORY_REQUIRED, COMMIT, param("path", Kind::String, "Directory. Default: the root.")],
    ),
    read_only(
        "branch-diff",
        "Diff two commits",
        "Files added, removed and modified between two published commits of a repository, with the definitions \
         that changed.",
        &[
            REPOSITORY_REQUIRED,
            required("base", Kind::String, "The earlier commit: id, prefix or branch."),
            param("head", Kind::String, "The later one. Default: the repository's head."),
            param("head_limit", Kind::Integer { min: 1, max: 1000 }, "Files. Default: 200."),
        ],
    ),
    read_only(
        "status",
        "Status",
        "The repositories this token may read, each with its head, files, commits and last publish.",
        &[],
    ),
];

pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The arguments of a remote call, every tool's in one type (each tool reads its own; the
/// catalogue's validation has refused any other before this is read).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Args {
    pub query: Option<String>,
    pub pattern: Option<String>,
    pub name: Option<String>,
    pub symbol: Option<String>,
    pub repository: Option<String>,
    pub commit: Option<String>,
    pub path_prefix: Option<String>,
    pub path: Option<String>,
    pub language: Option<Language>,
    pub kind: Option<ChunkKind>,
    pub literal: bool,
    pub case_insensitive: bool,
    pub head_limit: Option<usize>,
    pub base: Option<String>,
    pub head: Option<String>,
}

/// Where a result is: repository, commit and path.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct At {
    pub repository: String,
    pub commit: String,
    pub path: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Hit {
    #[serde(flatten)]
    pub at: At,
    pub start_line: u64,
    pub end_line: u64,
    pub kind: String,
    pub name: String,
    pub signature: String,
    pub score: f64,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Search {
    pub results: Vec<Hit>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Line {
    #[serde(flatten)]
    pub at: At,
    pub line: u64,
    pub text: String,
    /// references: the line defines the name.
    pub definition: bool,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Lines {
    pub results: Vec<Line>,
    /// False if reading stopped early (the limit or the deadline).
    pub complete: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Symbol {
    #[serde(flatten)]
    pub at: At,
    pub start_line: u64,
    pub end_line: u64,
    pub kind: String,
    pub name: String,
    pub signature: String,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Symbols {
    pub results: Vec<Symbol>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Directory {
    pub path: String,
    pub files: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct File {
    pub path: String,
    pub language: Option<String>,
    pub bytes: u64,
    pub definitions: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Summary {
    pub repository: String,
    pub commit: String,
    pub path: String,
    pub files: u64,
    pub directories: Vec<Directory>,
    pub own_files: Vec<File>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Changed {
    pub path: String,
    /// added, removed or modified.
    pub change: String,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Diff {
    pub repository: String,
    pub base: String,
    pub head: String,
    pub files: Vec<Changed>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Repository {
    pub name: String,
    pub head: String,
    pub files: u64,
    pub commits: u64,
    pub last_publish: String,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Status {
    pub repositories: Vec<Repository>,
}

/// The `outputSchema` of each remote tool.
pub fn output_schema(name: &str) -> Option<Value> {
    use crate::answers::of;
    Some(match name {
        "search" | "hybrid-search" | "workspace-search" => of::<Search>(),
        "grep" | "references" => of::<Lines>(),
        "symbols" | "tests-for" => of::<Symbols>(),
        "directory-summary" => of::<Summary>(),
        "branch-diff" => of::<Diff>(),
        "status" => of::<Status>(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_remote_tool_reads_only_and_has_an_answer_type_and_known_arguments() {
        let every = serde_json::to_value(Args::default()).unwrap();
        for t in TOOLS {
            assert_eq!(t.effect, Effect::ReadOnly, "{}", t.name);
            assert!(output_schema(t.name).is_some(), "{}: no answer type", t.name);
            for p in t.params {
                assert!(every.get(p.name).is_some(), "{}: {} is not a field of Args", t.name, p.name);
            }
        }
    }
}
