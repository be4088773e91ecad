//! Everything booger does with git, in one place: symbol-level answers to "what changed".
//!
//! - [`command`]: running git (a child process, explicit arguments, a deadline).
//! - [`repo`]: HEAD, the base branch, merge bases, operations in progress.
//! - [`identity`]: which repository a tree is to the team index (remote name, root commits).
//! - [`diff`]: the structural diff between two snapshots (commits, staging area, disk).
//! - [`parsed`]: file versions already chunked, by content.
//! - [`symbols`]: matching two versions' chunks by (kind, parent, name, occurrence).
//! - [`format`]: the answers: a readable diff, a commit message, a changelog.

pub(crate) mod command;
pub mod diff;
pub(crate) mod format;
#[cfg(feature = "team")]
pub(crate) mod identity;
pub mod parsed;
pub mod repo;
pub mod symbols;

pub(crate) use diff::{Include, StructuralDiff};
pub use diff::{Request, structural_diff};

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("git is not installed (or not on the daemon's PATH); install git to use the git tools")]
    NotInstalled,
    #[error("{} is not inside a git repository; the git tools need one (`git init` makes one)", .0.display())]
    NotARepository(PathBuf),
    #[error("unknown ref `{rev}`: no branch, tag or commit has that name{}", hint(.branches))]
    UnknownRef { rev: String, branches: Vec<String> },
    #[error("`{0}` is not a valid ref name; give a branch, tag or commit such as main or v1.2.0")]
    BadRef(String),
    #[error(
        "{0} has no commits yet, so there is nothing committed to compare; use include=staged or \
             include=unstaged to see the work in progress"
    )]
    NoCommits(String),
    #[error("{}no main or master branch and no upstream to compare with; pass `base` (a branch, tag or commit)",
            if *.detached { "HEAD is detached, and there is " } else { "there is " })]
    NoBase { detached: bool },
    #[error("`git {args}` failed: {message}")]
    Failed { args: String, message: String },
    #[error("`git {args}` took longer than {secs} s and was stopped")]
    Timeout { args: String, secs: u64 },
    #[error("running git: {0}")]
    Io(#[from] std::io::Error),
}

fn hint(branches: &[String]) -> String {
    if branches.is_empty() { String::new() } else { format!(". Branches: {}", branches.join(", ")) }
}
