//! Volatile context tools: `annotate`, `annotations`, `focus`, `visit`, `forget`.
//!
//! These write to the project's index database (creating it if needed: they are writes),
//! scoped to the caller's session unless it asks for the shared context.

use std::sync::Arc;

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, resolve_project, scope};
use crate::engine::Daemon;
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
    let now = crate::base::time::unix_now();
    let expires = args.get("ttl").and_then(Value::as_i64).map(|t| crate::base::time::rfc3339(now + t));
    let sc = scope(session, args);
    match store.annotate(target, note, sc, &crate::base::time::rfc3339(now), expires.as_deref()) {
        Ok(None) => ToolReply::error(format!(
            "annotate: {} already holds {} notes in {name}; drop old ones with `forget` (or give notes a ttl)",
            scope_name(sc),
            crate::store::context::MAX_NOTES
        )),
        Ok(Some(id)) => ToolReply::ok(
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
    match store.annotations(scope(session, args), target, &crate::base::time::now_rfc3339()) {
        Ok(list) if list.is_empty() => ToolReply::ok(format!("No notes in {name}."), json!({ "annotations": [] })),
        Ok(list) => {
            // One budget for the text and the structured answer: the notes listed are the
            // notes carried.
            let offset = super::int(args, "offset", 0).min(list.len());
            let budget = super::int(args, "max_tokens", crate::domain::search::format::DEFAULT_MAX_TOKENS)
                * crate::domain::search::format::CHARS_PER_TOKEN;
            let mut text = format!("{} note(s):\n", list.len());
            let mut shown = 0;
            for a in &list[offset..] {
                let line = format!(
                    "  {}: {}{}\n",
                    crate::base::text::clip(&a.target, 200),
                    a.note,
                    if a.session.is_none() { " (shared)" } else { "" }
                );
                if shown > 0 && text.len() + line.len() > budget {
                    break;
                }
                text.push_str(&line);
                shown += 1;
            }
            let next = offset + shown;
            if next < list.len() {
                text.push_str(&format!("[{} more: {}]\n", list.len() - next, crate::base::hints::arg("offset", next)));
            }
            let listed = &list[offset..next];
            ToolReply::ok(text.trim_end(), json!({ "annotations": listed, "total": list.len() }))
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
    match store.add_workset(
        if kind == "focus" { "focus" } else { "visited" },
        &paths,
        sc,
        &crate::base::time::now_rfc3339(),
    ) {
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
