//! Volatile context tools: `annotate`, `annotations`, `focus`, `visit`, `forget`.
//!
//! These write to the project's index database (creating it if needed: they are writes),
//! scoped to the caller's session unless it asks for the shared context.

use std::sync::Arc;

use booger_proto::answers::{self, Annotation};
use booger_proto::tools::args;
use booger_proto::wire::ToolReply;

use super::call::{Call, Outcome, ToolError, answer, failed};
use crate::store::Store;
use crate::store::context::Scope;

/// The project's index for notes, created if need be (notes are writes).
pub(super) fn writable_store(call: &Call, on: &args::On) -> Result<(String, Arc<Store>), ToolError> {
    let project = call.project(on.project.as_deref())?;
    let handle = call.daemon.projects.get(&project.root);
    match handle.store() {
        Ok(s) => Ok((project.name, s)),
        Err(e) => Err(ToolError::Refused(format!("cannot open the index of {}: {e}", project.name))),
    }
}

fn scope_name(s: Scope) -> String {
    match s {
        Scope::Session(id) => format!("session {id}"),
        Scope::Shared => "the shared context".to_owned(),
    }
}

pub(super) fn annotate(call: &Call, a: args::Annotate) -> Outcome {
    let (name, store) = writable_store(call, &a.notes.on)?;
    let (target, note) = (a.target.trim(), a.note.trim());
    if target.is_empty() || note.is_empty() {
        return Err(ToolError::Refused("annotate: `target` and `note` must not be empty".to_owned()));
    }
    let now = crate::base::time::unix_now();
    let expires = a.ttl.map(|t| crate::base::time::rfc3339(now + t as i64));
    let sc = call.scope(a.notes.session.as_deref());
    let added = store.annotate(target, note, sc, &crate::base::time::rfc3339(now), expires.as_deref());
    Ok(match added.map_err(|e| failed("annotate", e))? {
        None => ToolReply::error(format!(
            "annotate: {} already holds {} notes in {name}; drop old ones with `forget` (or give notes a ttl)",
            scope_name(sc),
            crate::store::context::MAX_NOTES
        )),
        Some(id) => answer(
            format!(
                "Noted on {target} in {name} ({}{}).",
                scope_name(sc),
                expires.as_deref().map(|e| format!(", until {e}")).unwrap_or_default()
            ),
            &answers::Annotated { id, target: target.to_owned(), expires_at: expires },
        ),
    })
}

pub(super) fn annotations(call: &Call, a: args::Annotations) -> Outcome {
    let (name, store) = writable_store(call, &a.notes.on)?;
    let sc = call.scope(a.notes.session.as_deref());
    let found = store.annotations(sc, a.target.as_deref(), &crate::base::time::now_rfc3339());
    Ok(match found.map_err(|e| failed("annotations", e))? {
        list if list.is_empty() => answer(format!("No notes in {name}."), &answers::Annotations::default()),
        list => {
            // One budget for the text and the structured answer: the notes listed are the
            // notes carried.
            let offset = a.offset.unwrap_or(0).min(list.len());
            let budget = a.max_tokens.unwrap_or(crate::domain::search::format::DEFAULT_MAX_TOKENS)
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
            let listed = listed.iter().cloned().map(|a| Annotation {
                id: a.id,
                target: a.target,
                note: a.note,
                session: a.session,
                created_at: a.created_at,
                expires_at: a.expires_at,
            });
            let data = answers::Annotations { annotations: listed.collect(), total: Some(list.len() as u64) };
            answer(text.trim_end(), &data)
        }
    })
}

fn workset(call: &Call, a: &args::Paths, kind: &str) -> Outcome {
    let (name, store) = writable_store(call, &a.notes.on)?;
    let paths: Vec<String> =
        a.paths.iter().map(|p| p.trim_start_matches("./").trim_end_matches('/').to_owned()).collect();
    if paths.is_empty() {
        return Err(ToolError::Refused(format!("{kind}: give `paths`, e.g. [\"src/search\"]")));
    }
    let sc = call.scope(a.notes.session.as_deref());
    let list = if kind == "focus" { "focus" } else { "visited" };
    let added = store.add_workset(list, &paths, sc, &crate::base::time::now_rfc3339()).map_err(|e| failed(kind, e))?;
    Ok(answer(
        format!(
            "{} {} path(s) in {name} ({}).",
            if kind == "focus" { "Focused" } else { "Visited" },
            paths.len(),
            scope_name(sc)
        ),
        &answers::PathsAdded { added: added as u64, paths },
    ))
}

pub(super) fn focus(call: &Call, a: args::Paths) -> Outcome {
    workset(call, &a, "focus")
}

pub(super) fn visit(call: &Call, a: args::Paths) -> Outcome {
    workset(call, &a, "visit")
}

pub(super) fn forget(call: &Call, a: args::Forget) -> Outcome {
    let (name, store) = writable_store(call, &a.notes.on)?;
    let which = match a.notes.session.as_deref() {
        Some("all") => None,
        s => Some(call.scope(s)),
    };
    let (notes, paths) = store.forget(which).map_err(|e| failed("forget", e))?;
    Ok(answer(
        format!(
            "Forgot {notes} note(s) and {paths} focus/visited path(s) in {name} ({}).",
            which.map_or("all sessions and the shared context".to_owned(), scope_name)
        ),
        &answers::Forgotten { annotations: Some(notes as u64), workset: Some(paths as u64) },
    ))
}
