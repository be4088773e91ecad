//! Queries from a project's own history: each commit's subject, with the files it changed as
//! the gold, and the functions it changed found again at HEAD.
//!
//! A commit makes a query when it is not a merge, changes 1 to [`MAX_FILES`] source files,
//! has a subject that describes a change (four words or more; not a release, a version bump, a
//! merge, a revert, a typo or lint fix, nor one that names a version number), and at least one
//! of its source files was added or modified (not deleted) and still exists at HEAD, under its
//! own name or the one a later commit renamed it to.
//! Commits are read newest first until enough queries are found: recent commits describe the
//! code as it is, older ones code that has often moved since.

use std::collections::HashSet;
use std::path::Path;

use serde::Serialize;

use crate::domain::git::GitError;
use crate::domain::git::command::Git;
use crate::source::chunk::{self, Chunk};
use crate::source::lang::Lang;

/// More source files than this and a commit is a sweep (a rename, a reformat, a release), not
/// one change a search could be asked about.
pub(crate) const MAX_FILES: usize = 3;

/// A function a commit changed, where it is at HEAD.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct GoldFn {
    pub path: String,
    pub name: String,
    pub start_line: u32,
    pub end_line: u32,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Query {
    pub commit: String,
    pub subject: String,
    pub gold_files: Vec<String>,
    pub gold_functions: Vec<GoldFn>,
    /// The language of its first gold file.
    pub language: &'static str,
}

/// Why commits gave no query.
pub(crate) use booger_proto::answers::SkippedCommits as Skipped;

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Mined {
    /// Non-merge commits looked at.
    pub scanned: usize,
    /// The clone is shallow: only the history it holds was looked at.
    pub shallow: bool,
    pub skipped: Skipped,
    pub queries: Vec<Query>,
}

/// What the index holds at HEAD, as the miner needs it.
pub(crate) trait Head {
    /// The file is in the index.
    fn has(&self, path: &str) -> bool;
    /// Its chunks at HEAD.
    fn chunks(&self, path: &str) -> Vec<Chunk>;
}

/// Mines the non-merge commits of the repository `git` runs in, newest first, until `wanted`
/// queries are found or `commits` commits were read.
pub(crate) fn mine(git: &Git, head: &dyn Head, commits: usize, wanted: usize) -> Result<Mined, GitError> {
    let mut mined = Mined {
        shallow: git.run(&["rev-parse", "--is-shallow-repository"]).is_ok_and(|o| o.starts_with(b"true")),
        ..Mined::default()
    };
    let boundary: HashSet<String> = if mined.shallow {
        let file = git.run(&["rev-parse", "--git-path", "shallow"])?;
        let file = git.dir().join(String::from_utf8_lossy(&file).trim());
        crate::base::repo_file::read_text(&file, 64 << 20).unwrap_or_default().lines().map(str::to_owned).collect()
    } else {
        HashSet::new()
    };
    // No commit yet: nothing to mine (not an error).
    if git.output(&["rev-parse", "--verify", "--quiet", "HEAD"], None)?.success {
        let n = commits.to_string();
        let log = git.run(&["log", "--no-merges", "-M", "--format=%x1e%H%x1f%s", "--name-status", "-n", &n])?;
        let mut renamed = Renames::default();
        for record in String::from_utf8_lossy(&log).split('\x1e').filter(|r| !r.trim().is_empty()) {
            // Newest first: a rename is seen before the older commits that changed the file.
            renamed.learn(record);
            if mined.queries.len() >= wanted {
                break;
            }
            mined.scanned += 1;
            if record.split('\x1f').next().is_some_and(|c| boundary.contains(c.trim())) {
                mined.skipped.shallow_boundary += 1;
                continue;
            }
            if let Some(q) = query(git, head, record, &renamed, &mut mined.skipped)? {
                mined.queries.push(q);
            }
        }
    }
    Ok(mined)
}

/// Where files are now that later commits renamed: a path then → its path at HEAD.
#[derive(Default)]
struct Renames(std::collections::HashMap<String, String>);

impl Renames {
    /// Takes the renames of one commit's `--name-status` record (`R097\told\tnew`).
    fn learn(&mut self, record: &str) {
        for line in record.lines().skip(1) {
            let fields: Vec<&str> = line.split('\t').collect();
            if let [status, old, new] = fields.as_slice()
                && status.starts_with('R')
            {
                let now = self.now(new).to_owned();
                self.0.insert((*old).to_owned(), now);
            }
        }
    }

    fn now<'p>(&'p self, path: &'p str) -> &'p str {
        self.0.get(path).map_or(path, String::as_str)
    }
}

/// Characters of a commit subject kept as a query.
const MAX_SUBJECT: usize = 500;

/// The query one `git log` record makes, if it makes one.
fn query(
    git: &Git,
    head: &dyn Head,
    record: &str,
    renamed: &Renames,
    skipped: &mut Skipped,
) -> Result<Option<Query>, GitError> {
    let mut lines = record.lines();
    let (commit, subject) = lines.next().and_then(|l| l.split_once('\x1f')).unwrap_or_default();
    let Some(subject) = descriptive(subject) else {
        skipped.subject += 1;
        return Ok(None);
    };
    // A subject is a line a person wrote; a history can hold one of any size, and the
    // queries are carried in the answer.
    let subject = crate::base::text::clip(&subject, MAX_SUBJECT);
    let mut sources = 0;
    // Each gold file's path in the commit, and at HEAD.
    let mut gold: Vec<(String, String)> = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let fields: Vec<&str> = line.split('\t').collect();
        let (Some(status), Some(path)) = (fields.first(), fields.last()) else { continue };
        if !is_source(path) {
            continue;
        }
        sources += 1;
        let now = renamed.now(path);
        if matches!(status.chars().next(), Some('M' | 'A')) && head.has(now) && !gold.iter().any(|(_, g)| g == now) {
            gold.push(((*path).to_owned(), now.to_owned()));
        }
    }
    if sources == 0 {
        skipped.no_source += 1;
        return Ok(None);
    }
    if sources > MAX_FILES {
        skipped.too_many_files += 1;
        return Ok(None);
    }
    if gold.is_empty() {
        skipped.gone_or_renamed += 1;
        return Ok(None);
    }
    let gold_functions = changed_functions(git, head, commit, &gold)?;
    let language = Lang::detect(Path::new(&gold[0].1), b"").name();
    let gold_files = gold.into_iter().map(|(_, now)| now).collect();
    Ok(Some(Query { commit: commit.to_owned(), subject, gold_files, gold_functions, language }))
}

/// A file whose language booger parses into code items (not prose, not other text).
pub(crate) fn is_source(path: &str) -> bool {
    !matches!(Lang::detect(Path::new(path), b""), Lang::Markdown | Lang::Text)
}

/// The subject without a trailing pull-request number, if it describes a change: four words
/// or more ("Fix memory leak" could be anywhere), no version number, and no word of routine upkeep (a release, bump, merge, revert,
/// typo, lint or formatting fix): those say nothing a search could find.
pub(crate) fn descriptive(subject: &str) -> Option<String> {
    let mut s = subject.trim();
    if let Some(open) = s.rfind(" (#")
        && s.ends_with(')')
    {
        s = s[..open].trim_end();
    }
    let words: Vec<String> = s
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2)
        .map(str::to_lowercase)
        .collect();
    let opening = ["merge", "bump", "release", "released", "revert", "version", "wip", "prepare"];
    let anywhere = [
        "typo",
        "typos",
        "spelling",
        "misspelled",
        "codespell",
        "lint",
        "linter",
        "linters",
        "linting",
        "clippy",
        "fmt",
        "formatting",
        "whitespace",
        "changelog",
        "readme",
        "copyright",
        "release",
        "cleanup",
        "dependabot",
        "deps",
        "chore",
        "revert",
        "reverts",
        "reverted",
    ];
    let names_a_version = s.split(|c: char| c.is_whitespace() || c == ',').any(|w| {
        let w = w.trim_start_matches(['v', 'V']);
        let mut parts = w.split('.');
        parts.next().is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
            && parts.next().is_some_and(|p| p.chars().next().is_some_and(|c| c.is_ascii_digit() || c == 'x'))
    });
    if words.len() < 4
        || names_a_version
        || opening.contains(&words[0].as_str())
        || words.iter().any(|w| anywhere.contains(&w.as_str()))
    {
        return None;
    }
    Some(s.to_owned())
}

/// The named code items of `files` (each its path then and at HEAD) that `commit` changed,
/// where each is at HEAD (by name and container; an item gone since is left out).
fn changed_functions(
    git: &Git,
    head: &dyn Head,
    commit: &str,
    files: &[(String, String)],
) -> Result<Vec<GoldFn>, GitError> {
    let mut args =
        vec!["show", "--format=", "-U0", "--no-color", "--no-renames", "--no-ext-diff", "--no-textconv", commit, "--"];
    args.extend(files.iter().map(|(then, _)| then.as_str()));
    let diff = git.run(&args)?;
    let mut out: Vec<GoldFn> = Vec::new();
    for (path, ranges) in hunks(&String::from_utf8_lossy(&diff)) {
        let Ok(bytes) = git.run(&["show", "--no-textconv", &format!("{commit}:{path}")]) else { continue };
        let then = chunk::chunk_file(Path::new(&path), &bytes, false).chunks;
        let path = files.iter().find(|(then, _)| *then == path).map_or(path, |(_, now)| now.clone());
        let changed: HashSet<(String, Option<String>)> = then
            .iter()
            .filter(|c| chunk::is_code(c.kind) && !c.name.is_empty())
            .filter(|c| ranges.iter().any(|&(a, b)| a <= c.end_line && b >= c.start_line))
            .map(|c| (c.name.clone(), c.parent.clone()))
            .collect();
        for c in head.chunks(&path) {
            if changed.contains(&(c.name.clone(), c.parent.clone()))
                && !out.iter().any(|g| g.path == path && g.name == c.name && g.start_line == c.start_line)
            {
                out.push(GoldFn { path: path.clone(), name: c.name, start_line: c.start_line, end_line: c.end_line });
            }
        }
    }
    Ok(out)
}

/// Each file's changed line ranges on the new side of a `-U0` diff. A pure deletion marks
/// the line it happened at.
fn hunks(diff: &str) -> Vec<(String, Vec<(u32, u32)>)> {
    let mut out: Vec<(String, Vec<(u32, u32)>)> = Vec::new();
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ b/") {
            out.push((path.to_owned(), Vec::new()));
        } else if let Some(rest) = line.strip_prefix("@@ ")
            && let Some(new) = rest.split_whitespace().find_map(|f| f.strip_prefix('+'))
            && let Some((_, ranges)) = out.last_mut()
        {
            let (start, len) = match new.split_once(',') {
                Some((s, l)) => (s.parse().unwrap_or(0), l.parse().unwrap_or(1)),
                None => (new.parse().unwrap_or(0), 1),
            };
            let start: u32 = start;
            let len: u32 = len;
            ranges.push((start.max(1), (start + len.max(1) - 1).max(1)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_that_describe_a_change() {
        assert_eq!(
            descriptive("Fix completion for persistent flags (#2053)").as_deref(),
            Some("Fix completion for persistent flags")
        );
        assert_eq!(descriptive("fix: retry uploads on 503"), Some("fix: retry uploads on 503".to_owned()));
        for routine in [
            "Bump version to 1.2.3",
            "Release v0.4.0 today",
            "Merge branch 'main' into x",
            "wip",
            "Fix typo",
            "v1.2.3",
            "Fix a typo in the docs",
            "Add support for Python 3.14",
            "Allow idna 3.x on old systems",
            "Update README with examples",
            "Fix clippy warnings in router",
            "General cleanup before the next",
            "Fix memory leak",
            "Fix review comments",
        ] {
            assert_eq!(descriptive(routine), None, "{routine}");
        }
    }

    #[test]
    fn hunks_give_new_side_ranges() {
        let diff = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -3,0 +4,2 @@ def f\n+x\n+y\n@@ -10 +12 @@\n-a\n+b\n@@ -20,3 +21,0 @@\n";
        assert_eq!(hunks(diff), vec![("a.py".to_owned(), vec![(4, 5), (12, 12), (21, 21)])]);
    }
}
