//! What booger needs to know about a repository before diffing: where it is, what HEAD is,
//! which branch a change is measured against, and whether git is in the middle of something.

#[cfg(feature = "team")]
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::GitError;
use super::command::Git;

/// Branches tried, in order, when no base is given: the usual trunk names, locally and on
/// `origin`. The current branch's upstream comes after them.
const TRUNKS: &[&str] =
    &["refs/heads/main", "refs/heads/master", "refs/remotes/origin/main", "refs/remotes/origin/master"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// On a branch with at least one commit.
    Branch { name: String, commit: String },
    /// A commit checked out directly.
    Detached { commit: String },
    /// A branch with no commits yet (a fresh repository).
    Unborn { name: String },
}

impl Head {
    pub(crate) fn commit(&self) -> Option<&str> {
        match self {
            Head::Branch { commit, .. } | Head::Detached { commit } => Some(commit),
            Head::Unborn { .. } => None,
        }
    }

    /// How answers name HEAD: its branch, or `HEAD (detached at abc1234)`.
    pub(crate) fn describe(&self) -> String {
        match self {
            Head::Branch { name, .. } => name.clone(),
            Head::Detached { commit } => format!("HEAD (detached at {})", short(commit)),
            Head::Unborn { name } => format!("{name} (no commits yet)"),
        }
    }
}

/// A repository, opened from a directory inside its work tree.
#[derive(Debug)]
pub struct Repo {
    pub git: Git,
    pub toplevel: PathBuf,
    git_dir: PathBuf,
    /// History is cut off (`git clone --depth`): a merge base may be missing.
    pub shallow: bool,
    pub head: Head,
}

impl Repo {
    /// One `git rev-parse` answers everything here (it still prints the rest when HEAD has
    /// no commit yet).
    pub fn open(dir: &Path) -> Result<Repo, GitError> {
        let git = Git::new(dir);
        let out = git
            .output(&["rev-parse", "--show-toplevel", "--absolute-git-dir", "--is-shallow-repository", "HEAD"], None)?;
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() < 3 {
            if out.stderr.contains("not a git repository") {
                return Err(GitError::NotARepository(dir.to_owned()));
            }
            return Err(GitError::Failed { args: "rev-parse".to_owned(), message: out.stderr });
        }
        let git_dir = PathBuf::from(lines[1]);
        let commit = lines.get(3).filter(|l| is_object_id(l)).map(|l| (*l).to_owned());
        let head_file = crate::base::repo_file::read_text(&git_dir.join("HEAD"), 4096).unwrap_or_default();
        let branch =
            head_file.trim().strip_prefix("ref: ").map(|r| r.strip_prefix("refs/heads/").unwrap_or(r).to_owned());
        let head = match (branch, commit) {
            (Some(name), Some(commit)) => Head::Branch { name, commit },
            (None, Some(commit)) => Head::Detached { commit },
            (Some(name), None) => Head::Unborn { name },
            (None, None) => {
                return Err(GitError::Failed { args: "rev-parse HEAD".to_owned(), message: out.stderr });
            }
        };
        Ok(Repo { git, toplevel: PathBuf::from(lines[0]), git_dir, shallow: lines[2] == "true", head })
    }

    /// The operation git is in the middle of, if any (its conflicted files hold markers).
    pub(crate) fn operation(&self) -> Option<&'static str> {
        let has = |name: &str| self.git_dir.join(name).exists();
        if has("MERGE_HEAD") {
            Some("merge")
        } else if has("rebase-merge") || has("rebase-apply") {
            Some("rebase")
        } else if has("CHERRY_PICK_HEAD") {
            Some("cherry-pick")
        } else if has("REVERT_HEAD") {
            Some("revert")
        } else {
            None
        }
    }

    /// The commit `rev` names, or `None` when it names none.
    pub(crate) fn resolve(&self, rev: &str) -> Result<Option<String>, GitError> {
        check_rev(rev)?;
        let spec = format!("{rev}^{{commit}}");
        let out = self.git.output(&["rev-parse", "-q", "--verify", &spec], None)?;
        let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok(if out.success && is_object_id(&id) { Some(id) } else { None })
    }

    /// Like [`resolve`](Self::resolve), but an unknown ref is an error that lists the branches.
    pub(crate) fn commit_of(&self, rev: &str) -> Result<String, GitError> {
        match self.resolve(rev)? {
            Some(id) => Ok(id),
            None => Err(GitError::UnknownRef { rev: rev.to_owned(), branches: self.branches().unwrap_or_default() }),
        }
    }

    /// The branch changes are measured against when none is given: main, then master (or
    /// their `origin/` copies), then the current branch's upstream. Never the current branch
    /// itself while another candidate exists. Returns (name, commit).
    pub(crate) fn default_base(&self) -> Result<Option<(String, String)>, GitError> {
        let current = match &self.head {
            Head::Branch { name, .. } | Head::Unborn { name } => Some(format!("refs/heads/{name}")),
            Head::Detached { .. } => None,
        };
        let mut args = vec!["for-each-ref", "--format=%(refname)%00%(objectname)%00%(upstream)"];
        args.extend(TRUNKS);
        if let Some(c) = &current {
            args.push(c);
        }
        let out = self.git.run(&args)?;
        let text = String::from_utf8_lossy(&out);
        let mut found: Vec<(&str, &str, &str)> = Vec::new();
        for line in text.lines() {
            let mut parts = line.split('\0');
            if let (Some(r), Some(id), Some(up)) = (parts.next(), parts.next(), parts.next()) {
                found.push((r, id, up));
            }
        }
        for trunk in TRUNKS {
            if Some(*trunk) == current.as_deref() {
                continue;
            }
            if let Some((r, id, _)) = found.iter().find(|(r, ..)| r == trunk) {
                return Ok(Some((display_ref(r), (*id).to_owned())));
            }
        }
        let upstream = found.iter().find(|(r, ..)| Some(*r) == current.as_deref()).map(|(_, _, up)| *up);
        if let Some(up) = upstream.filter(|u| !u.is_empty())
            && let Some(id) = self.resolve(up)?
        {
            return Ok(Some((display_ref(up), id)));
        }
        // On the trunk itself with no upstream: compare with it (nothing committed beyond it).
        if let Some(c) = &current
            && let Some((r, id, _)) = found.iter().find(|(r, ..)| r == c)
        {
            return Ok(Some((display_ref(r), (*id).to_owned())));
        }
        Ok(None)
    }

    /// The best common ancestor of two commits, or `None` (unrelated histories, or a shallow
    /// clone that does not reach it).
    pub(crate) fn merge_base(&self, a: &str, b: &str) -> Result<Option<String>, GitError> {
        let out = self.git.output(&["merge-base", a, b], None)?;
        let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        match (out.success, is_object_id(&id)) {
            (true, true) => Ok(Some(id)),
            // Exit 1 with no output: there is none.
            (false, _) if out.stderr.is_empty() => Ok(None),
            (false, _) => Err(GitError::Failed { args: format!("merge-base {a} {b}"), message: out.stderr }),
            (true, false) => Ok(None),
        }
    }

    /// Paths with unresolved conflicts, relative to `git`'s directory.
    pub(crate) fn unmerged(&self) -> Result<Vec<String>, GitError> {
        let out = self.git.run(&["diff", "--no-ext-diff", "--name-only", "-z", "--relative", "--diff-filter=U"])?;
        let mut paths: Vec<String> = split_z(&out).collect();
        paths.dedup();
        Ok(paths)
    }

    /// Something is staged (the staging area differs from HEAD).
    pub(crate) fn has_staged(&self) -> Result<bool, GitError> {
        let out = self.git.output(
            &["diff", "--no-ext-diff", "--cached", "--quiet", "--relative", "--ignore-submodules=none"],
            None,
        )?;
        Ok(!out.success)
    }

    /// The newest tag reachable from `rev`, if any.
    pub(crate) fn latest_tag(&self, rev: &str) -> Result<Option<String>, GitError> {
        check_rev(rev)?;
        let out = self.git.output(&["describe", "--tags", "--abbrev=0", rev], None)?;
        let tag = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok((out.success && !tag.is_empty()).then_some(tag))
    }

    /// Local branch names (for error messages).
    pub(crate) fn branches(&self) -> Result<Vec<String>, GitError> {
        let out = self.git.run(&["for-each-ref", "--count=20", "--format=%(refname:short)", "refs/heads"])?;
        Ok(String::from_utf8_lossy(&out).lines().map(str::to_owned).collect())
    }

    /// The files of `commit` as (path, blob id): regular files only.
    #[cfg(feature = "team")]
    pub(crate) fn files_at(&self, commit: &str) -> Result<Vec<(String, String)>, GitError> {
        let out = self.git.run(&["ls-tree", "-r", "-z", "--full-tree", commit])?;
        Ok(regular_files(&out, false))
    }

    /// The blob staged for each path (stage 0: not in a merge conflict): regular files only.
    #[cfg(feature = "team")]
    pub(crate) fn staged_files(&self) -> Result<HashMap<String, String>, GitError> {
        let out = self.git.run(&["ls-files", "-s", "-z"])?;
        Ok(regular_files(&out, true).into_iter().collect())
    }

    /// Paths whose working-tree file differs from what is staged.
    #[cfg(feature = "team")]
    pub(crate) fn unstaged_changes(&self) -> Result<HashSet<String>, GitError> {
        let out = self.git.run(&["diff", "--no-ext-diff", "--name-only", "-z", "--no-renames"])?;
        Ok(split_z(&out).collect())
    }

    /// How many files differ between commits `a` and `b`.
    #[cfg(feature = "team")]
    pub(crate) fn files_changed_between(&self, a: &str, b: &str) -> Result<usize, GitError> {
        let out = self.git.run(&["diff", "--no-ext-diff", "--name-only", "-z", "--no-renames", a, b])?;
        Ok(split_z(&out).count())
    }
}

/// A revision given by a caller: never something git would read as an option.
fn check_rev(rev: &str) -> Result<(), GitError> {
    if rev.is_empty() || rev.starts_with('-') || rev.contains('\0') || rev.contains('\n') {
        return Err(GitError::BadRef(rev.to_owned()));
    }
    Ok(())
}

fn display_ref(r: &str) -> String {
    r.strip_prefix("refs/heads/").or_else(|| r.strip_prefix("refs/remotes/")).unwrap_or(r).to_owned()
}

pub(crate) fn is_object_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The first 7 characters of a commit id, as git prints them.
pub(crate) fn short(id: &str) -> &str {
    &id[..id.len().min(7)]
}

/// The NUL-separated fields of `-z` output.
pub(crate) fn split_z(out: &[u8]) -> impl Iterator<Item = String> + '_ {
    out.split(|&b| b == 0).filter(|s| !s.is_empty()).map(|s| String::from_utf8_lossy(s).into_owned())
}

/// The regular files (no links, no submodules) of `ls-tree -r -z` (`<mode> <type> <id>\t<path>`)
/// or, `staged`, of `ls-files -s -z` (`<mode> <id> <stage>\t<path>`, stage 0 only: not in a
/// merge conflict), as (path, blob id).
/// Names booger does not index ([`crate::source::indexable_name`]) are left out, as the
/// walk leaves them out.
#[cfg(feature = "team")]
fn regular_files(out: &[u8], staged: bool) -> Vec<(String, String)> {
    out.split(|&b| b == 0)
        .filter_map(|entry| {
            let tab = entry.iter().position(|&b| b == b'\t')?;
            let meta = std::str::from_utf8(&entry[..tab]).ok()?;
            let path = crate::source::indexable_name(&entry[tab + 1..])?;
            let parts: Vec<&str> = meta.split(' ').collect();
            let (mode, id, fits) = match (staged, parts.as_slice()) {
                (false, [mode, kind, id]) => (*mode, *id, *kind == "blob"),
                (true, [mode, id, stage]) => (*mode, *id, *stage == "0"),
                _ => return None,
            };
            (fits && (mode == "100644" || mode == "100755")).then(|| (path.to_owned(), id.to_owned()))
        })
        .collect()
}
