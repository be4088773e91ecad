//! Volatile context tools: `annotate`, `annotations`, `focus`, `visit`, `forget`.
//!
//! These write to the project's index database (creating it if needed: they are writes),
//! scoped to the caller's session unless it asks for the shared context.

use std::sync::Arc;

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, resolve_project, scope};
use crate::Daemon;
use crate::store::Store;
use crate::store::context::Scope;

pub(super) fn writable_store(
    daemon: &Daemon,
    session: &Session,
    args: &Value,
) -> Result<(String, Arc<Store>), ToolReply> {
    let project = resolve_project(daemon, session, args).map_err(ToolReply::error)?;
    let handle = daemon.projects.get(&project.root);
    match handle.store() {
        Ok(s) => Ok((project.name, s)),
        Err(e) => Err(ToolReply::error(format!("cannot open the index of {}: {e}", project.name))),
    }
}

fn scope_name(s: Scope) -> String {
    match s {
        Scope::Session(id) => format!("session {id}"),
        Scope::Shared => "the shared context".to_owned(),
    }
}

pub fn annotate(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let (name, store) = match writable_store(daemon, session, args) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let target = args["target"].as_str().unwrap_or_default().trim();
    let note = args["note"].as_str().unwrap_or_default().trim();
    if target.is_empty() || note.is_empty() {
        return ToolReply::error("annotate: `target` and `note` must not be empty");
    }
    let now = crate::time::unix_now();
    let expires = args.get("ttl").and_then(Value::as_i64).map(|t| crate::time::rfc3339(now + t));
    let sc = scope(session, args);
    match store.annotate(target, note, sc, &crate::time::rfc3339(now), expires.as_deref()) {
        Ok(id) => ToolReply::ok(
            format!(
                "Noted on {target} in {name} ({}{}).",
                scope_name(sc),
                expires.as_deref().map(|e| format!(", until {e}")).unwrap_or_default()
            ),
            json!({ "id": id, "target": target, "expires_at": expires }),
        ),
        Err(e) => ToolReply::error(format!("annotate: {e}")),
    }
}

pub fn annotations(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let (name, store) = match writable_store(daemon, session, args) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let target = args.get("target").and_then(Value::as_str);
    match store.annotations(scope(session, args), target, &crate::time::now_rfc3339()) {
        Ok(list) if list.is_empty() => ToolReply::ok(format!("No notes in {name}."), json!({ "annotations": [] })),
        Ok(list) => {
            let mut text = format!("{} note(s):\n", list.len());
            for a in &list {
                text.push_str(&format!(
                    "  {}: {}{}\n",
                    a.target,
                    a.note,
                    if a.session.is_none() { " (shared)" } else { "" }
                ));
            }
            ToolReply::ok(text.trim_end(), json!({ "annotations": list }))
        }
        Err(e) => ToolReply::error(format!("annotations: {e}")),
    }
}

fn workset(daemon: &Daemon, session: &Session, args: &Value, kind: &str) -> ToolReply {
    let (name, store) = match writable_store(daemon, session, args) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let paths: Vec<String> = args["paths"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(|p| p.trim_start_matches("./").trim_end_matches('/').to_owned())
                .collect()
        })
        .unwrap_or_default();
    if paths.is_empty() {
        return ToolReply::error(format!("{kind}: give `paths`, e.g. [\"src/search\"]"));
    }
    let sc = scope(session, args);
    match store.add_workset(if kind == "focus" { "focus" } else { "visited" }, &paths, sc, &crate::time::now_rfc3339())
    {
        Ok(added) => ToolReply::ok(
            format!(
                "{} {} path(s) in {name} ({}).",
                if kind == "focus" { "Focused" } else { "Visited" },
                paths.len(),
                scope_name(sc)
            ),
            json!({ "paths": paths, "added": added }),
        ),
        Err(e) => ToolReply::error(format!("{kind}: {e}")),
    }
}

pub fn focus(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    workset(daemon, session, args, "focus")
}

pub fn visit(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    workset(daemon, session, args, "visit")
}

pub fn forget(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let (name, store) = match writable_store(daemon, session, args) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let which = match args.get("session").and_then(Value::as_str) {
        Some("all") => None,
        _ => Some(scope(session, args)),
    };
    match store.forget(which) {
        Ok((notes, paths)) => ToolReply::ok(
            format!(
                "Forgot {notes} note(s) and {paths} focus/visited path(s) in {name} ({}).",
                which.map_or("all sessions and the shared context".to_owned(), scope_name)
            ),
            json!({ "annotations": notes, "workset": paths }),
        ),
        Err(e) => ToolReply::error(format!("forget: {e}")),
    }
}
