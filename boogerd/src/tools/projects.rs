//! `projects`: list, add or remove the projects this daemon indexes and watches.

use std::path::{Path, PathBuf};

use booger_proto::answers::{self, Added as Registered};
use booger_proto::tools::args;
use booger_proto::wire::ToolReply;

use super::call::{Call, Outcome, Session, answer};
use crate::base::sync::Recover;
use crate::engine::Daemon;
use crate::engine::registration::{MANIFESTS, start, too_many_files};
use crate::engine::registry::{Added, Project};

pub(super) fn run(call: &Call, a: args::Projects) -> Outcome {
    let (daemon, session, path) = (call.daemon, call.session, a.path.as_deref());
    Ok(match a.action.as_deref().unwrap_or("list") {
        "add" => add(daemon, session, path, a.in_repo, a.force),
        "add-all" => add_all(daemon, session, path),
        "remove" => remove(daemon, path),
        _ => list(daemon),
    })
}

fn list(daemon: &Daemon) -> ToolReply {
    let projects = daemon.registry.read().recover().projects().to_vec();
    if projects.is_empty() {
        return answer(
            "No projects registered. Add one with `booger projects add PATH` (MCP: projects {\"action\":\"add\",\"path\":\"...\"}).",
            &answers::Projects { projects: Some(Vec::new()), ..Default::default() },
        );
    }
    let mut text = format!("{} project(s):\n", projects.len());
    for p in &projects {
        text.push_str(&line(p));
    }
    answer(text.trim_end(), &answers::Projects { projects: Some(projects.clone()), ..Default::default() })
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
    let added = daemon.registry.write().recover().add(&dir, in_repo, force);
    match added {
        Ok(Added::New(p)) => {
            start(daemon, &p, "project added");
            let index_dir = daemon.projects.index_dir(&p.root);
            answer(
                format!(
                    "Added {} ({}); indexing in the background into {} (`booger status` shows progress)",
                    p.name,
                    display(&p.root),
                    index_dir.display()
                ),
                &answers::Projects {
                    added: Some(Registered::New(true)),
                    project: Some(p.clone()),
                    index_dir: Some(index_dir.to_string_lossy().into_owned()),
                    ..Default::default()
                },
            )
        }
        Ok(Added::Moved(p)) => {
            tracing::info!(project = %p.name, in_repo = p.in_repo, "project's index moves");
            daemon.watcher.unfollow(&p.root);
            daemon.projects.set_in_repo(&p.root, p.in_repo);
            daemon.follow(&p.root);
            let index_dir = daemon.projects.index_dir(&p.root);
            answer(
                format!("{} now keeps its index in {}", p.name, index_dir.display()),
                &answers::Projects {
                    added: Some(Registered::New(false)),
                    moved: Some(true),
                    project: Some(p.clone()),
                    index_dir: Some(index_dir.to_string_lossy().into_owned()),
                    ..Default::default()
                },
            )
        }
        Ok(Added::Existing(p)) => answer(
            format!("Already registered: {} ({})", p.name, display(&p.root)),
            &answers::Projects { added: Some(Registered::New(false)), project: Some(p.clone()), ..Default::default() },
        ),
        Err(e) => ToolReply::error(format!("projects add: {e}")),
    }
}

fn remove(daemon: &Daemon, key: Option<&str>) -> ToolReply {
    let Some(key) = key else {
        return ToolReply::error("projects remove: give `path`, the project's name or root directory");
    };
    let removed = daemon.registry.write().recover().remove(key);
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
            answer(
                format!("Removed {} ({}); {deleted}", p.name, display(&p.root)),
                &answers::Projects {
                    removed: Some(true),
                    project: Some(p.clone()),
                    index_dir: Some(index_dir.to_string_lossy().into_owned()),
                    ..Default::default()
                },
            )
        }
        Ok(None) => {
            let known = daemon.registry.read().recover().projects().to_vec();
            let names: Vec<&str> = known.iter().map(|p| p.name.as_str()).collect();
            ToolReply::error(format!(
                "projects remove: no project named {key}. Registered: {}",
                if names.is_empty() { "none".to_owned() } else { names.join(", ") }
            ))
        }
        Err(e) => ToolReply::error(format!("projects remove: {e}")),
    }
}

/// How deep `add-all` looks for projects under the directory it is given.
const ADD_ALL_DEPTH: usize = 5;
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
        match daemon.registry.write().recover().add(&root, false, false) {
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
    let data = answers::Projects {
        added: Some(Registered::Listed(added)),
        existing: Some(existing),
        errors: Some(errors),
        ..Default::default()
    };
    answer(text, &data)
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
