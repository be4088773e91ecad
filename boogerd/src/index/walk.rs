//! Finding the files to index, with the same rules everywhere.
//!
//! `ignore` applies .gitignore, .ignore, .git/info/exclude, the global git excludes and hidden
//! files. On top: `.booger/` and VCS folders are never entered; symlinks are never followed
//! (so nothing outside the project is read); binary files (a NUL byte in the first 8 KB) are
//! skipped. What is skipped, and why, is returned, never silently dropped.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use ignore::WalkBuilder;

/// Directories that are never indexed, wherever they are.
pub const NEVER: &[&str] = &[".booger", ".git", ".hg", ".svn", ".jj"];

#[derive(Debug, Clone)]
pub struct Walked {
    /// `/`-separated, relative to the project root.
    pub rel: String,
    pub abs: PathBuf,
    pub size: u64,
    pub mtime_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// Every candidate file under `root`, sorted by path, plus what could not be walked.
pub fn walk(root: &Path) -> (Vec<Walked>, Vec<Skipped>) {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let walker = WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| !(e.file_type().is_some_and(|t| t.is_dir()) && NEVER.iter().any(|n| e.file_name() == *n)))
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                skipped.push(Skipped { path: error_path(&e, root), reason: one_line_error(&e) });
                continue;
            }
        };
        let Some(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            continue;
        }
        let rel = relative(root, entry.path());
        if ft.is_symlink() {
            skipped.push(Skipped { path: rel, reason: "symlink (not followed)".to_owned() });
            continue;
        }
        if !ft.is_file() {
            continue; // sockets, fifos, devices
        }
        match entry.metadata() {
            Ok(meta) => files.push(Walked {
                rel,
                abs: entry.into_path(),
                size: meta.len(),
                mtime_ns: meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos() as i64),
            }),
            Err(e) => skipped.push(Skipped { path: rel, reason: e.to_string() }),
        }
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    (files, skipped)
}

/// True if the first 8 KB contain a NUL byte: the usual test for binary content.
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let s = rel.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' { s.into_owned() } else { s.replace(std::path::MAIN_SEPARATOR, "/") }
}

fn error_path(e: &ignore::Error, root: &Path) -> String {
    match e {
        ignore::Error::WithPath { path, .. } => relative(root, path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err, root),
        ignore::Error::Loop { child, .. } => relative(root, child),
        _ => String::new(),
    }
}

fn one_line_error(e: &ignore::Error) -> String {
    e.to_string().lines().next().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn respects_ignore_rules_and_never_enters_vcs_or_booger_dirs() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for (p, body) in [
            ("src/main.rs", "fn main() {}"),
            ("target/debug/x.rs", "junk"),
            (".gitignore", "target/\n*.log\n"),
            ("app.log", "log"),
            (".hidden/secret.rs", "x"),
            (".booger/index.db", "x"),
            (".git/config", "x"),
            ("docs/a.md", "# a"),
        ] {
            std::fs::create_dir_all(r.join(p).parent().unwrap()).unwrap();
            std::fs::write(r.join(p), body).unwrap();
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc", r.join("etc-link")).unwrap();
        let (files, skipped) = walk(r);
        let rels: Vec<&str> = files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, ["docs/a.md", "src/main.rs"]);
        #[cfg(unix)]
        assert!(skipped.iter().any(|s| s.path == "etc-link" && s.reason.contains("symlink")), "{skipped:?}");
    }
}
