//! Path arguments as people and agents give them, turned into the paths the index holds.
//!
//! The index names files relative to the project's root with `/`. A shell user gives a path
//! relative to the directory they are in, or absolute, and sometimes pastes one as booger
//! printed it (`src/lib.rs:12`, `src/lib.rs:12-40`, `src/lib.rs:12:5` from grep). Every
//! tool that takes a file or folder of a project (`path` of symbols and directory-summary,
//! `path_prefix`, `paths`, an annotation's `target`) gets the argument rebased here, once,
//! before its handler runs; `index` and `projects` take directories on disk and keep theirs.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::Session;
use crate::engine::Daemon;

/// Tools whose `path` is a directory on disk, not a path inside a project.
const DISK_PATHS: &[&str] = &["index", "projects"];

/// The call's arguments with its project paths rebased; `Err` is the error to answer. A call
/// whose project cannot be resolved is left as it is: its handler says why.
pub(super) fn prepare(daemon: &Daemon, session: &Session, tool: &str, args: Value) -> Result<Value, String> {
    let takes_paths = args.as_object().is_some_and(|o| {
        ["path_prefix", "paths", "target"].iter().any(|k| o.contains_key(*k))
            || (o.contains_key("path") && !DISK_PATHS.contains(&tool))
    });
    if !takes_paths {
        return Ok(args);
    }
    let named = args.get("project").and_then(Value::as_str);
    match super::call::resolve_project(daemon, session, named) {
        Ok(project) => rebase(tool, &project.root, session, args),
        Err(_) => Ok(args),
    }
}

/// `args` with every project path argument of `tool` relative to `root`. `Err` names an
/// argument that points outside the project.
pub(super) fn rebase(tool: &str, root: &Path, session: &Session, mut args: Value) -> Result<Value, String> {
    let Some(obj) = args.as_object_mut() else { return Ok(args) };
    // The caller's directory counts only inside this project (a CLI call made elsewhere with
    // --project means paths from that project's root).
    let cwd = session.project.as_deref().filter(|d| d.starts_with(root)).unwrap_or(root);
    let base = Base { root, cwd };
    for key in ["path", "path_prefix"] {
        if key == "path" && DISK_PATHS.contains(&tool) {
            continue;
        }
        if let Some(Value::String(p)) = obj.get_mut(key) {
            *p = base.file(p, key == "path_prefix").map_err(|e| format!("{tool}: `{key}` {e}"))?;
        }
    }
    if let Some(Value::Array(items)) = obj.get_mut("paths") {
        for item in items.iter_mut() {
            if let Value::String(p) = item {
                *p = base.file(p, false).map_err(|e| format!("{tool}: `paths` {e}"))?;
            }
        }
    }
    if let Some(Value::String(t)) = obj.get_mut("target") {
        *t = base.target(t);
    }
    Ok(args)
}

struct Base<'a> {
    root: &'a Path,
    cwd: &'a Path,
}

impl Base<'_> {
    /// A file or folder (or a glob, with `glob`) as the index names it.
    fn file(&self, given: &str, glob: bool) -> Result<String, String> {
        let trimmed = given.trim();
        if trimmed.is_empty() {
            return Ok(String::new());
        }
        let (path, _) = split_line(trimmed, |p| !glob && self.exists(p));
        let rel = self.relative(path)?;
        Ok(rel)
    }

    /// An annotation's target: a path (with a line) when it names one on disk, else a
    /// symbol name, kept as given.
    fn target(&self, given: &str) -> String {
        let (path, line) = split_line(given.trim(), |p| self.exists(p));
        if !self.exists(path) {
            return given.to_owned();
        }
        match self.relative(path) {
            Ok(rel) => format!("{rel}{line}"),
            Err(_) => given.to_owned(),
        }
    }

    fn exists(&self, path: &str) -> bool {
        self.candidates(path).iter().any(|p| p.exists())
    }

    /// Where `path` may mean: absolute as given; else from the caller's directory, then from
    /// the root (an agent or a habit may give root-relative paths from a subdirectory).
    fn candidates(&self, path: &str) -> Vec<PathBuf> {
        let p = Path::new(path);
        if p.is_absolute() {
            return vec![p.to_owned()];
        }
        vec![normalize(&self.cwd.join(p)), normalize(&self.root.join(p))]
    }

    fn relative(&self, path: &str) -> Result<String, String> {
        let candidates = self.candidates(path);
        // The first that exists; when none does (a prefix, a glob, a deleted file), the first.
        let chosen = candidates.iter().find(|p| p.exists()).unwrap_or(&candidates[0]);
        // A symlinked spelling of the root (/tmp vs /private/tmp) still counts as inside it.
        let canonical;
        let chosen = if chosen.starts_with(self.root) {
            chosen
        } else {
            canonical = booger_proto::paths::canonical(chosen).unwrap_or_else(|_| chosen.clone());
            &canonical
        };
        let rel = chosen.strip_prefix(self.root).map_err(|_| {
            format!("{path:?} is outside the project at {}: give a path inside it", self.root.display())
        })?;
        Ok(rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"))
    }
}

/// `path` without a trailing `:line`, `:line-line` or `:line:column` (as booger and grep print
/// them), and the suffix; the suffix stays part of the path when `is_path(whole)` says a file
/// is named so.
fn split_line(given: &str, is_path: impl Fn(&str) -> bool) -> (&str, &str) {
    let mut end = given.len();
    // At most two numeric parts: line and column, or a line range.
    for _ in 0..2 {
        let Some(colon) = given[..end].rfind(':') else { break };
        let part = &given[colon + 1..end];
        let numeric = !part.is_empty()
            && part.split('-').count() <= 2
            && part.split('-').all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !numeric || colon == 0 {
            break;
        }
        end = colon;
    }
    if end == given.len() || is_path(given) {
        return (given, "");
    }
    (&given[..end], &given[end..])
}

/// `.` and `..` resolved without touching the disk (the path may not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(cwd: &Path) -> Session {
        Session {
            id: "t".into(),
            project: Some(cwd.to_owned()),
            register: false,
            shell: true,
            measuring: false,
            read_only: false,
        }
    }

    #[test]
    fn paths_from_the_callers_directory_absolute_and_with_lines() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src/net")).unwrap();
        std::fs::write(root.join("src/net/tcp.rs"), "").unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        std::fs::write(root.join("odd:12"), "").unwrap();
        let in_src = session(&root.join("src"));
        let rebased = |tool: &str, args: Value, s: &Session| rebase(tool, &root, s, args).map(|v| v.to_string());

        let a = serde_json::json!({ "path": "net/tcp.rs:12-40", "path_prefix": "../src/net", "paths": ["lib.rs"] });
        let out = rebase("symbols", &root, &in_src, a).unwrap();
        assert_eq!(out["path"], "src/net/tcp.rs");
        assert_eq!(out["path_prefix"], "src/net");
        assert_eq!(out["paths"][0], "src/lib.rs");
        // Root-relative from a subdirectory still finds the file.
        let out = rebase("symbols", &root, &in_src, serde_json::json!({ "path": "src/lib.rs:3:9" })).unwrap();
        assert_eq!(out["path"], "src/lib.rs");
        // Absolute, and a glob from the caller's directory.
        let abs = root.join("src/net").display().to_string();
        let out = rebase("grep", &root, &in_src, serde_json::json!({ "path_prefix": abs })).unwrap();
        assert_eq!(out["path_prefix"], "src/net");
        let out = rebase("grep", &root, &in_src, serde_json::json!({ "path_prefix": "**/*.rs" })).unwrap();
        assert_eq!(out["path_prefix"], "src/**/*.rs");
        // A file whose name ends like a line number is that file.
        let out = rebase("symbols", &root, &session(&root), serde_json::json!({ "path": "odd:12" })).unwrap();
        assert_eq!(out["path"], "odd:12");
        // Outside the project: an error that says so.
        let e = rebased("symbols", serde_json::json!({ "path": "/etc/passwd" }), &in_src).unwrap_err();
        assert!(e.contains("outside the project"), "{e}");
        let e = rebased("focus", serde_json::json!({ "paths": ["../../x"] }), &in_src).unwrap_err();
        assert!(e.contains("`paths`"), "{e}");
        // Targets: a path keeps its line; a symbol stays a symbol.
        let out = rebase("annotate", &root, &in_src, serde_json::json!({ "target": "lib.rs:7" })).unwrap();
        assert_eq!(out["target"], "src/lib.rs:7");
        let out = rebase("annotate", &root, &in_src, serde_json::json!({ "target": "Server.start" })).unwrap();
        assert_eq!(out["target"], "Server.start");
        // index and projects take directories on disk.
        let out = rebase("index", &root, &in_src, serde_json::json!({ "path": "." })).unwrap();
        assert_eq!(out["path"], ".");
    }
}
