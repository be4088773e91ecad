//! `projects`: list, add or remove the projects this daemon indexes and watches.

use std::path::{Path, PathBuf};

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::Session;
use crate::Daemon;
use crate::registry::{Added, Project};

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let action = args.get("action").and_then(Value::as_str).unwrap_or("list");
    let path = args.get("path").and_then(Value::as_str);
    match action {
        "add" => add(daemon, session, path),
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

fn add(daemon: &Daemon, session: &Session, path: Option<&str>) -> ToolReply {
    // Relative paths are relative to the caller's directory, not the daemon's.
    let dir = match (path, &session.project) {
        (Some(p), Some(base)) => base.join(p),
        (Some(p), None) => PathBuf::from(p),
        (None, Some(base)) => base.clone(),
        (None, None) => return ToolReply::error("projects add: give `path`, the project's root directory"),
    };
    let added = daemon.registry.write().expect("registry lock").add(&dir);
    match added {
        Ok(Added::New(p)) => {
            tracing::info!(project = %p.name, root = %p.root.display(), "project added");
            ToolReply::ok(format!("Added {} ({})", p.name, display(&p.root)), json!({ "added": true, "project": p }))
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
            ToolReply::ok(
                format!("Removed {} ({})", p.name, display(&p.root)),
                json!({ "removed": true, "project": p }),
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

fn line(p: &Project) -> String {
    format!("  {:<20} {}\n", p.name, display(&p.root))
}

fn display(p: &Path) -> String {
    p.display().to_string()
}
