//! `projects`: list, add or remove the projects this daemon indexes and watches.

use std::path::{Path, PathBuf};

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::Session;
use crate::engine::Daemon;
use crate::engine::registry::{Added, Project};

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let action = args.get("action").and_then(Value::as_str).unwrap_or("list");
    let path = args.get("path").and_then(Value::as_str);
    let in_repo = args.get("in_repo").and_then(Value::as_bool).unwrap_or(false);
    let force = args.get("force").and_then(Value::as_bool).unwrap_or(false);
    match action {
        "add" => add(daemon, session, path, in_repo, force),
        "add-all" => add_all(daemon, session, path),
        "remove" => remove(daemon, path),
        _ => list(daemon),
    }
}

fn list(daemon: &Daemon) -> ToolReply {
    let projects = daemon.registry.read().expect("registry lock").projects().to_vec();
    if projects.is_empty() {
        return ToolReply::ok(
            "No projects registered. Add one with `booger projects add PATH` (MCP: projects {\"action\":\"add\",\"path\":\"...\"}).",
            json!({ "projects": [] }),
        );
    }
    let mut text = format!("{} project(s):\n", projects.len());
    for p in &projects {
        text.push_str(&line(p));
    }
    ToolReply::ok(text.trim_end(), json!({ "projects": projects }))
}

fn add(daemon: &Daemon, session: &Session, path: Option<&str>, in_repo: bool, force: bool) -> ToolReply {
    // Relative paths are relative to the caller's directory, not the daemon's.
    let dir = match (path, &session.project) {
        (Some(p), Some(base)) => base.join(p),
        (Some(p), None) => PathBuf::from(p),
        (None, Some(base)) => base.clone(),
        (None, None) => return ToolReply::error("projects add: give `path`, the project's root directory"),
    };
    if !force && let Some(why) = too_many_files(daemon, &dir) {
        return ToolReply::error(format!("projects add: {why}"));
    }
    let added = daemon.registry.write().expect("registry lock").add(&dir, in_repo, force);
    match added {
        Ok(Added::New(p)) => {
            start(daemon, &p, "project added");
            let index_dir = daemon.projects.index_dir(&p.root);
            ToolReply::ok(
                format!(
                    "Added {} ({}); indexing in the background into {} (`booger status` shows progress)",
                    p.name,
                    display(&p.root),
                    index_dir.display()
                ),
                json!({ "added": true, "project": p, "index_dir": index_dir }),
            )
        }
        Ok(Added::Moved(p)) => {
            tracing::info!(project = %p.name, in_repo = p.in_repo, "project's index moves");
            daemon.watcher.unfollow(&p.root);
            daemon.projects.set_in_repo(&p.root, p.in_repo);
            daemon.follow(&p.root);
            let index_dir = daemon.projects.index_dir(&p.root);
            ToolReply::ok(
                format!("{} now keeps its index in {}", p.name, index_dir.display()),
                json!({ "added": false, "moved": true, "project": p, "index_dir": index_dir }),
            )
        }
        Ok(Added::Existing(p)) => ToolReply::ok(
            format!("Already registered: {} ({})", p.name, display(&p.root)),
            json!({ "added": false, "project": p }),
        ),
        Err(e) => ToolReply::error(format!("projects add: {e}")),
    }
}

fn remove(daemon: &Daemon, key: Option<&str>) -> ToolReply {
    let Some(key) = key else {
        return ToolReply::error("projects remove: give `path`, the project's name or root directory");
    };
    let removed = daemon.registry.write().expect("registry lock").remove(key);
    match removed {
        Ok(Some(p)) => {
            tracing::info!(project = %p.name, "project removed");
            daemon.watcher.unfollow(&p.root);
            let index_dir = daemon.projects.index_dir(&p.root);
            if let Some(handle) = daemon.projects.drop_handle(&p.root) {
                handle.close();
            }
            daemon.projects.set_in_repo(&p.root, false);
            // The index is derived from the files: it goes with the registration. (Open
            // connections elsewhere keep reading the unlinked file until they finish.)
            let deleted = match crate::base::storage::remove(&index_dir) {
                Ok(()) => format!("its index ({}) is deleted", index_dir.display()),
                Err(e) => format!("its index could not be deleted: {}: {e}", index_dir.display()),
            };
            ToolReply::ok(
                format!("Removed {} ({}); {deleted}", p.name, display(&p.root)),
                json!({ "removed": true, "project": p, "index_dir": index_dir }),
            )
        }
        Ok(None) => {
            let known = daemon.registry.read().expect("registry lock").projects().to_vec();
            let names: Vec<&str> = known.iter().map(|p| p.name.as_str()).collect();
            ToolReply::error(format!(
                "projects remove: no project named {key}. Registered: {}",
                if names.is_empty() { "none".to_owned() } else { names.join(", ") }
            ))
        }
        Err(e) => ToolReply::error(format!("projects remove: {e}")),
    }
}

/// Why registering `dir` needs `--force` because of its size: more files to index than the
/// daemon's `--confirm-above-files`, counted with the indexing walker (no file is read). `None`
/// for a directory already registered, or within the limit.
pub fn too_many_files(daemon: &Daemon, dir: &Path) -> Option<String> {
    let limit = daemon.config.confirm_above_files;
    let root = crate::engine::registry::canonical_dir(dir).ok()?;
    if limit == 0 || daemon.registry.read().expect("registry lock").find(&root.to_string_lossy()).is_some() {
        return None;
    }
    let started = std::time::Instant::now();
    let n = crate::engine::index::walk::count_files(&root, limit);
    tracing::debug!(root = %root.display(), files = n, ms = started.elapsed().as_millis() as u64, "counted files");
    (n > limit).then(|| {
        format!(
            "{} holds more than {limit} files to index; indexing that many takes a long while and a large index. \
             If that is what you want: `booger projects add {} --force`. Or register the repositories inside it: \
             `booger projects add-all {}`",
            root.display(),
            root.display(),
            root.display()
        )
    })
}

/// How deep `add-all` looks for projects under the directory it is given.
const ADD_ALL_DEPTH: usize = 5;
const MANIFESTS: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "go.mod",
    "pyproject.toml",
    "setup.py",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "CMakeLists.txt",
    "composer.json",
    "Gemfile",
    "mix.exs",
    "deno.json",
];
/// Folders that hold dependencies or build output, never projects of their own.
const NOT_PROJECTS: &[&str] = &["node_modules", "target", "vendor", "dist", "build", "__pycache__", "site-packages"];

fn add_all(daemon: &Daemon, session: &Session, path: Option<&str>) -> ToolReply {
    let dir = match (path, &session.project) {
        (Some(p), Some(base)) => base.join(p),
        (Some(p), None) => PathBuf::from(p),
        (None, Some(base)) => base.clone(),
        (None, None) => return ToolReply::error("projects add-all: give `path`, the directory to search"),
    };
    let dir = match crate::engine::registry::canonical_dir(&dir) {
        Ok(d) => d,
        Err(e) => return ToolReply::error(format!("projects add-all: {e}")),
    };
    let mut found = Vec::new();
    find_projects(&dir, 0, &mut found);
    let mut added = Vec::new();
    let mut existing = Vec::new();
    let mut errors = Vec::new();
    for root in found {
        match daemon.registry.write().expect("registry lock").add(&root, false, false) {
            Ok(Added::New(p)) => added.push(p),
            Ok(Added::Existing(p) | Added::Moved(p)) => existing.push(p),
            Err(e) => errors.push(format!("{}: {e}", root.display())),
        }
    }
    for p in &added {
        daemon.follow(&p.root);
    }
    let mut text = format!(
        "Found {} project(s) under {}: {} added, {} already registered",
        added.len() + existing.len(),
        dir.display(),
        added.len(),
        existing.len()
    );
    for p in &added {
        text.push_str(&format!("\n  + {:<20} {}", p.name, display(&p.root)));
    }
    for e in &errors {
        text.push_str(&format!("\n  ! {e}"));
    }
    if !added.is_empty() {
        text.push_str("\nIndexing them in the background (`booger status` shows progress).");
    }
    ToolReply::ok(text, json!({ "added": added, "existing": existing, "errors": errors }))
}

/// The project a session started in `dir` is about, for registering it on first use: the
/// enclosing git repository, else `dir` if it has a project manifest. Never the file system's
/// root or the home directory itself (a dotfiles repository makes the home a git work tree).
pub fn first_use_root(dir: &Path) -> Option<PathBuf> {
    let dir = crate::engine::registry::canonical_dir(dir).ok()?;
    let root = dir
        .ancestors()
        .find(|a| a.join(".git").exists())
        .map(Path::to_owned)
        .or_else(|| MANIFESTS.iter().any(|m| dir.join(m).is_file()).then(|| dir.clone()))?;
    crate::engine::registry::refusal(&root).is_none().then_some(root)
}

/// Registers the project at `root` and starts indexing it (a session's first call in an
/// unregistered repository).
pub fn register_on_first_use(daemon: &Daemon, root: &Path) -> Result<Project, String> {
    if let Some(why) = too_many_files(daemon, root) {
        return Err(why);
    }
    let added = daemon.registry.write().expect("registry lock").add(root, false, false).map_err(|e| e.to_string())?;
    let p = match added {
        Added::New(p) => {
            start(daemon, &p, "project registered on first use");
            p
        }
        Added::Existing(p) | Added::Moved(p) => p,
    };
    Ok(p)
}

/// A newly registered project: its index placement, then its watch and first index.
fn start(daemon: &Daemon, p: &Project, why: &str) {
    tracing::info!(project = %p.name, root = %p.root.display(), "{why}");
    daemon.projects.set_in_repo(&p.root, p.in_repo);
    daemon.follow(&p.root);
}

/// Git repositories and directories with a manifest; a project's subdirectories are not searched.
fn find_projects(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let is_project = dir.join(".git").exists() || MANIFESTS.iter().any(|m| dir.join(m).is_file());
    if is_project {
        out.push(dir.to_owned());
        return;
    }
    if depth >= ADD_ALL_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && !NOT_PROJECTS.contains(&name.as_ref())
        })
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    for sub in subdirs {
        find_projects(&sub, depth + 1, out);
    }
}

fn line(p: &Project) -> String {
    format!("  {:<20} {}\n", p.name, display(&p.root))
}

fn display(p: &Path) -> String {
    p.display().to_string()
}
