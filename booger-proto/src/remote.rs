//! The team server's tools: what a remote agent may ask of the team index (read-only, any
//! published repository and commit its token may read).
//!
//! Each is the local tool of the same name, with the same arguments and the same answer:
//! where a local tool names a `project`, a team tool names a `repository` (as it was
//! published; `status` lists them) and a `commit` (an id, a prefix of one, or a branch it was
//! published from; without one, the repository's head: its latest published commit on its
//! default branch). A local tool's `team` (also read the team index) has no place here. Only
//! `directory-summary`, `branch-diff` and `status` answer in types of their own: the team
//! index holds files and their definitions, not a working tree's counts or a git history.

use std::sync::LazyLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tools::params::{param, required};
use crate::tools::{Effect, Kind, Param, ToolSpec};

const REPOSITORY: Param = param("repository", Kind::String, "Repository as published (see status). Default: all.");
const REPOSITORY_REQUIRED: Param = required("repository", Kind::String, "Repository as published (see status).");
const COMMIT: Param = param("commit", Kind::String, "Commit id, prefix or branch. Default: the repository's head.");

/// What a team tool reads: one repository or all, or every repository at its head.
#[derive(Debug, Clone, Copy)]
enum Reads {
    /// A repository (all by default) at a commit.
    Any,
    /// A repository it must name, at a commit.
    Named,
    /// Every readable repository at its head: no repository or commit.
    Heads,
}

/// The local tools the team server serves: name, what it reads, its description.
const SERVED: &[(&str, Reads, &str)] = &[
    (
        "search",
        Reads::Any,
        "Ranked code search in the team index: definitions named by the query first, then chunks holding all its \
         words. Queries may be issue text or tracebacks. Results name repository@commit:path and lines.",
    ),
    (
        "hybrid-search",
        Reads::Any,
        "The search by words and meaning; the team index holds no embeddings yet, so it answers by words (as \
         search), and says so.",
    ),
    ("workspace-search", Reads::Heads, "The search across every repository this token may read, each at its head."),
    (
        "grep",
        Reads::Any,
        "Lines matching a regular expression (or literal text) in published files, as repository@commit:path:line.",
    ),
    ("symbols", Reads::Named, "Definitions (functions, types, ...) of a repository at a commit, under a path."),
    (
        "references",
        Reads::Any,
        "Where an identifier is defined and used, each mention classified, across the readable repositories.",
    ),
    ("tests-for", Reads::Any, "Test code that exercises a definition: named after it, or calling or mentioning it."),
    (
        "directory-summary",
        Reads::Named,
        "A directory of a published commit: its subdirectories with file counts, its files with language and \
         top-level definitions.",
    ),
    (
        "branch-diff",
        Reads::Named,
        "Files added, removed and modified between two published commits of a repository (base, and commit: \
         the later, by default the head), with the definitions that changed.",
    ),
    (
        "status",
        Reads::Heads,
        "The repositories this token may read, each with its head, files, commits and last publish.",
    ),
];

/// Every tool the team server serves, derived from the local catalogue (built once).
pub fn tools() -> &'static [ToolSpec] {
    static TOOLS: LazyLock<Vec<ToolSpec>> = LazyLock::new(|| SERVED.iter().map(|&(n, r, d)| served(n, r, d)).collect());
    &TOOLS
}

pub fn find(name: &str) -> Option<&'static ToolSpec> {
    tools().iter().find(|t| t.name == name)
}

/// The local tool `name` as the team server serves it: its arguments, with `repository` and
/// `commit` where it has `project` (first, where it has none), and without `team`.
fn served(name: &'static str, reads: Reads, description: &'static str) -> ToolSpec {
    let local = crate::tools::find(name).unwrap_or_else(|| panic!("the team server's {name} is not a local tool"));
    let selectors: &[Param] = match reads {
        Reads::Any => &[REPOSITORY, COMMIT],
        Reads::Named => &[REPOSITORY_REQUIRED, COMMIT],
        Reads::Heads => &[],
    };
    let own = local.params.iter().filter(|p| !matches!(p.name, "project" | "team"));
    let params: Vec<Param> = selectors.iter().chain(own).copied().collect();
    ToolSpec {
        name,
        title: local.title,
        summary: description,
        description,
        details: description,
        // Built once per process: the catalogue's declarations are static too.
        params: Box::leak(params.into_boxed_slice()),
        effect: Effect::ReadOnly,
        mcp_json: false,
    }
}

/// Which repository and commit a team call reads (the rest of its arguments are the local
/// tool's, read as its type).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Selected {
    pub repository: Option<String>,
    pub commit: Option<String>,
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

/// The `outputSchema` of each team tool: the local tool's, but for the three with answers of
/// their own.
pub fn output_schema(name: &str) -> Option<Value> {
    use crate::answers::of;
    Some(match name {
        "directory-summary" => of::<Summary>(),
        "branch-diff" => of::<Diff>(),
        "status" => of::<Status>(),
        _ => return crate::answers::schema(name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_team_tool_reads_only_and_takes_the_local_tools_arguments() {
        for t in tools() {
            assert_eq!(t.effect, Effect::ReadOnly, "{}", t.name);
            assert!(output_schema(t.name).is_some(), "{}: no answer type", t.name);
            let local = crate::tools::find(t.name).unwrap();
            let mut theirs: Vec<&str> = t.params.iter().map(|p| p.name).collect();
            theirs.retain(|n| !matches!(*n, "repository" | "commit"));
            let mut ours: Vec<&str> = local.params.iter().map(|p| p.name).collect();
            ours.retain(|n| !matches!(*n, "project" | "team"));
            assert_eq!(theirs, ours, "{}: the team's arguments are not the local ones", t.name);
            for p in t.params.iter().filter(|p| local.param(p.name).is_some()) {
                let l = local.param(p.name).unwrap();
                assert_eq!((p.kind, p.required), (l.kind, l.required), "{}: {}", t.name, p.name);
            }
        }
        assert_eq!(tools().len(), SERVED.len());
    }
}
