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
const NEVER: &[&str] = &[".booger", ".git", ".hg", ".svn", ".jj"];

#[derive(Debug, Clone)]
pub struct Walked {
    /// `/`-separated, relative to the project root.
    pub rel: String,
    pub abs: PathBuf,
    pub size: u64,
    pub mtime_ns: i64,
    /// A header saying "generated" sets it aside (not when the project wants generated
    /// files, nor when its attributes say this one is not generated).
    pub header_decides: bool,
}

pub(crate) use booger_proto::answers::Skipped;

/// What a walk found: files to index, what it skipped and why, and the directories it
/// entered (relative, `""` for the root), which are the directories the daemon watches.
#[derive(Debug, Default)]
pub struct Tree {
    pub files: Vec<Walked>,
    pub skipped: Vec<Skipped>,
    /// Generated, vendored and fuzz-corpus files ([`super::origin`]), filled by the indexer.
    pub set_aside: Vec<Skipped>,
    pub dirs: Vec<String>,
}

/// Every candidate file under `root`, sorted by path, plus what could not be walked.
pub fn walk(root: &Path) -> Tree {
    let mut tree = Tree::default();
    walk_into(root, "", None, &mut tree);
    tree.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    tree.dirs.sort();
    tree
}

/// How many files a walk of `root` would index, counting no further than `limit + 1` (a
/// stat-free pass: no file is opened).
pub(crate) fn count_files(root: &Path, limit: usize) -> usize {
    walker(root, None)
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .take(limit + 1)
        .count()
}

/// Walks only parts of `root`: the direct entries of each of `shallow` and everything under
/// each of `deep` (relative directories). Each walk applies the ignore files of the
/// directories above it, so a part is judged exactly as a whole walk would judge it, provided
/// the directory itself was kept by a whole walk. A directory that no longer exists yields
/// nothing (its files are gone).
pub(crate) fn survey(root: &Path, shallow: &[String], deep: &[String]) -> Tree {
    let mut tree = Tree::default();
    for d in shallow {
        walk_into(root, d, Some(1), &mut tree);
    }
    for d in deep {
        walk_into(root, d, None, &mut tree);
    }
    tree.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    tree.files.dedup_by(|a, b| a.rel == b.rel);
    tree.dirs.sort();
    tree.dirs.dedup();
    tree
}

/// The walker every caller uses, so a watched change and a full walk never disagree.
fn walker(start: &Path, max_depth: Option<usize>) -> ignore::Walk {
    WalkBuilder::new(start)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        // Another mount inside a project (a network share, procfs under a chroot) is not
        // part of it.
        .same_file_system(true)
        .max_depth(max_depth)
        .filter_entry(|e| !(e.file_type().is_some_and(|t| t.is_dir()) && is_never(e.file_name())))
        .build()
}

/// Never indexed nor watched, wherever it is: `.booger/` and VCS folders.
pub(crate) fn is_never(name: &std::ffi::OsStr) -> bool {
    NEVER.iter().any(|n| name == *n)
}

fn walk_into(root: &Path, dir: &str, max_depth: Option<usize>, tree: &mut Tree) {
    let start = if dir.is_empty() { root.to_owned() } else { root.join(dir) };
    if !start.is_dir() {
        return;
    }
    for entry in walker(&start, max_depth) {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                tree.skipped.push(Skipped { path: error_path(&e, root), reason: one_line_error(&e) });
                continue;
            }
        };
        let Some(ft) = entry.file_type() else { continue };
        let rel = relative(root, entry.path());
        if ft.is_dir() {
            tree.dirs.push(rel);
            continue;
        }
        if ft.is_symlink() {
            tree.skipped
                .push(Skipped { path: escaped(root, entry.path()), reason: "symlink (not followed)".to_owned() });
            continue;
        }
        if !is_safe_name(root, entry.path()) {
            // An answer prints paths as lines an agent reads: a newline in a name could forge
            // a result line, an escape sequence would reach a terminal, and a name that is not
            // UTF-8 could not be opened again by the name printed.
            let reason = "its name holds control characters or is not UTF-8: not indexed".to_owned();
            tree.skipped.push(Skipped { path: escaped(root, entry.path()), reason });
            continue;
        }
        if !ft.is_file() {
            continue; // sockets, fifos, devices
        }
        match entry.metadata() {
            Ok(meta) => tree.files.push(Walked {
                rel,
                abs: entry.into_path(),
                size: meta.len(),
                mtime_ns: mtime_ns(&meta),
                header_decides: false,
            }),
            Err(e) => tree.skipped.push(Skipped { path: rel, reason: e.to_string() }),
        }
    }
}

/// True if `path`, below `root`, is UTF-8 without control characters.
fn is_safe_name(root: &Path, path: &Path) -> bool {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.to_str().is_some_and(|s| crate::source::indexable_name(s.as_bytes()).is_some())
}

/// `path` below `root` as it can be printed: escapes for control characters and for bytes
/// that are not UTF-8 (`\n`, `\u{1b}`, `\xFF`), so the name shown is the name on disk.
pub(crate) fn escaped(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    if is_safe_name(root, path) {
        return relative(root, path);
    }
    let quoted = format!("{:?}", rel.as_os_str());
    quoted[1..quoted.len() - 1].to_owned()
}

/// A file's modification time as the index records it (0 when the OS has none).
pub(crate) fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos() as i64)
}

/// True if the first 8 KB contain a NUL byte: the usual test for binary content.
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

pub(crate) fn relative(root: &Path, path: &Path) -> String {
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
            ("docs/.gitignore", "*.tmp\n"),
            ("docs/x.tmp", "x"),
            ("docs/deep/b.md", "# b"),
        ] {
            std::fs::create_dir_all(r.join(p).parent().unwrap()).unwrap();
            std::fs::write(r.join(p), body).unwrap();
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc", r.join("etc-link")).unwrap();
        let tree = walk(r);
        let rels: Vec<&str> = tree.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, ["docs/a.md", "docs/deep/b.md", "src/main.rs"]);
        assert_eq!(tree.dirs, ["", "docs", "docs/deep", "src"]);
        // A part of the tree is judged as the whole walk judges it: the ignore files above
        // it apply, and `shallow` stops at its direct entries.
        let part = survey(r, &["docs".to_owned()], &["src".to_owned()]);
        let rels: Vec<&str> = part.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, ["docs/a.md", "src/main.rs"]);
        assert_eq!(part.dirs, ["docs", "docs/deep", "src"]);
        assert!(survey(r, &["gone".to_owned()], &["gone/too".to_owned()]).files.is_empty());
        let skipped = tree.skipped;
        #[cfg(unix)]
        assert!(skipped.iter().any(|s| s.path == "etc-link" && s.reason.contains("symlink")), "{skipped:?}");
    }

    /// Names that would print as something else are not indexed, and are reported escaped.
    #[cfg(unix)]
    #[test]
    fn names_with_control_characters_or_not_utf8_are_skipped_and_shown_escaped() {
        use std::os::unix::ffi::OsStrExt;
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        std::fs::write(r.join("ok.rs"), "fn ok() {}").unwrap();
        std::fs::write(r.join("x\nauth.rs:42:    let admin_password = 1;"), "fn a() {}").unwrap();
        std::fs::write(r.join("title\u{1b}]52;c;aGk=\u{7}.rs"), "fn b() {}").unwrap();
        std::fs::write(r.join(std::ffi::OsStr::from_bytes(b"bad\xff.rs")), "fn c() {}").unwrap();
        let tree = walk(r);
        let files: Vec<&str> = tree.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(files, ["ok.rs"]);
        let mut shown: Vec<&str> = tree.skipped.iter().map(|s| s.path.as_str()).collect();
        shown.sort();
        assert_eq!(
            shown,
            ["bad\\xFF.rs", "title\\u{1b}]52;c;aGk=\\u{7}.rs", "x\\nauth.rs:42:    let admin_password = 1;"]
        );
        assert!(tree.skipped.iter().all(|s| !s.path.contains('\n') && !s.path.contains('\u{1b}')));
    }
}
