//! One handler per tool of [`booger_proto::tools::TOOLS`], and the single dispatch path that
//! MCP `tools/call` and the CLI's `booger/call` share.
//!
//! A tool is declared once in booger-proto (name, description, arguments); here it gets its
//! handler, which takes the call ([`Call`]) and the tool's arguments as their type
//! ([`booger_proto::tools::args`]). Arguments are validated against the declaration before a
//! handler runs; a handler that panics answers `isError` instead of taking the daemon down.

mod batch;
mod call;
mod changed;
mod context;
mod embed;
mod eval;
mod expand;
mod git;
mod grep;
mod index;
mod paths;
mod progress;
mod projects;
#[cfg(feature = "team")]
mod publish;
mod references;
#[cfg(feature = "team")]
pub(crate) mod remote;
mod schedule;
mod search;
mod semantic;
mod status;
mod summary;
mod symbols;
#[cfg(feature = "team")]
mod team;
#[cfg(feature = "team")]
mod team_status;
mod tests_for;
#[cfg(not(feature = "team"))]
mod without_team;
mod workspace;
#[cfg(not(feature = "team"))]
use without_team::{publish, team_status};

pub(crate) use call::{Call, Outcome, Session, ToolError};
pub(crate) use eval::last as last_eval;
pub(crate) use progress::of as progress_of;

use std::sync::Arc;

use booger_proto::tools::{self, Effect, ToolSpec};
use booger_proto::wire::ToolReply;
use serde_json::Value;

use crate::base::hints;
use crate::engine::Daemon;
use call::{Answered, parse};

type Handler = fn(&Call, &Value) -> Outcome;

/// A handler of typed arguments, as the table holds it.
macro_rules! typed {
    ($handler:path) => {
        |call: &Call, arguments: &Value| -> Outcome { $handler(call, parse(arguments)?) }
    };
}

/// Every handler, keyed by its tool's name. A test checks this matches `TOOLS` exactly.
const HANDLERS: &[(&str, Handler)] = &[
    ("search", typed!(search::run)),
    ("semantic-search", typed!(semantic::semantic_search)),
    ("hybrid-search", typed!(semantic::hybrid_search)),
    ("symbols", typed!(symbols::run)),
    ("references", typed!(references::run)),
    ("grep", typed!(grep::run)),
    ("directory-summary", typed!(summary::run)),
    ("tests-for", typed!(tests_for::run)),
    ("changed-since", typed!(changed::run)),
    ("search-expand", typed!(expand::run)),
    ("workspace-search", typed!(workspace::run)),
    ("batch", typed!(batch::run)),
    ("status", typed!(status::run)),
    ("index", typed!(index::run)),
    ("projects", typed!(projects::run)),
    ("annotate", typed!(context::annotate)),
    ("annotations", typed!(context::annotations)),
    ("focus", typed!(context::focus)),
    ("visit", typed!(context::visit)),
    ("forget", typed!(context::forget)),
    ("branch-diff", typed!(git::branch_diff)),
    ("draft-commit", typed!(git::draft_commit)),
    ("changelog", typed!(git::changelog)),
    ("embed", typed!(embed::run)),
    ("eval", typed!(eval::run)),
    ("publish", typed!(publish::run)),
    ("team-status", typed!(team_status::run)),
];

/// The call named a tool that does not exist (JSON-RPC -32602, not a tool error).
#[derive(Debug, thiserror::Error)]
#[error("unknown tool `{0}`; tools/list names the available tools: {list}", list = tools::names().join(", "))]
pub(crate) struct UnknownTool(pub String);

/// Validates and runs one tool call on a blocking thread (handlers may touch disk or SQLite).
/// With a `progress` token, [`progress_of`] says how far the call got while it runs.
pub(crate) async fn call(
    daemon: Arc<Daemon>,
    session: Session,
    name: &str,
    args: Value,
    progress: Option<String>,
) -> Result<ToolReply, UnknownTool> {
    let (spec, handler) = lookup(name).ok_or_else(|| UnknownTool(name.to_owned()))?;
    if let Err(message) = spec.validate(&args) {
        return Ok(ToolReply::error(message));
    }
    if let Some(refusal) = refused_read_only(&session, spec) {
        return Ok(refusal);
    }
    let slot = schedule::turn(spec.name, spec.effect == Effect::ReadOnly, &session.id).await;
    let started = std::time::Instant::now();
    let heavy = slot.is_heavy();
    let joined = slot
        .run(move || {
            let args = match paths::prepare(&daemon, &session, spec.name, args) {
                Ok(a) => a,
                Err(message) => return (ToolReply::error(message), false),
            };
            let call = Call::followed(&daemon, &session, progress);
            let run = || handler(&call, &args).unwrap_or_else(ToolReply::from);
            let (reply, timed_out) = hints::for_reader(session.shell, || {
                if heavy {
                    match crate::base::deadline::within(HEAVY_DEADLINE, run) {
                        (reply, true) if reply.is_error => (too_long(spec.name), true),
                        (reply, _) => (reply, false),
                    }
                } else {
                    (run(), false)
                }
            });
            let answered = call.answered.take();
            let reply = with_recovery(reply, &answered);
            (with_freshness(reply, answered), timed_out)
        })
        .await;
    let (reply, timed_out) = joined.unwrap_or_else(|e| {
        tracing::error!(tool = spec.name, error = %e, "tool handler panicked");
        let why = format!("{}: internal error ({e}). This is a bug in booger; the daemon log has details.", spec.name);
        (ToolReply::error(why), false)
    });
    crate::base::metrics::get().tool_call(spec.name, started.elapsed(), reply.is_error, timed_out);
    tracing::debug!(
        tool = spec.name,
        elapsed_us = started.elapsed().as_micros() as u64,
        error = reply.is_error,
        "tool call"
    );
    Ok(reply)
}

/// The refusal of a tool that changes something, asked by a read-only session (HTTP).
pub(crate) fn refused_read_only(session: &Session, spec: &booger_proto::tools::ToolSpec) -> Option<ToolReply> {
    // A batch is judged call by call (see `batch`).
    (session.read_only && spec.effect != Effect::ReadOnly && spec.name != "batch").then(|| {
        ToolReply::error(format!(
            "{}: over HTTP booger only reads, unless boogerd is started with --http-allow-writes \
             (registering, removing, indexing and notes change the user's state); `booger mcp` over stdio \
             can do it",
            spec.name
        ))
    })
}

/// How long a heavy call may read the index; its SQLite statements are interrupted after.
const HEAVY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

fn too_long(tool: &str) -> ToolReply {
    ToolReply::error(format!(
        "{tool}: stopped after {} s, having read too much of the index; narrow it with {} or {}, or a more \
         specific argument",
        HEAVY_DEADLINE.as_secs(),
        hints::name("path_prefix"),
        hints::name("language")
    ))
}

pub(crate) fn lookup(name: &str) -> Option<(&'static ToolSpec, Handler)> {
    let spec = tools::find(name)?;
    let handler = HANDLERS.iter().find(|(n, _)| *n == name)?.1;
    Some((spec, handler))
}

/// A query that found an index damaged has it set aside and rebuilt; the answer (failed or
/// not) says so, with where the damaged file went.
fn with_recovery(mut reply: ToolReply, answered: &[Answered]) -> ToolReply {
    for Answered { name, handle, .. } in answered {
        handle.recover_if_damaged();
        if let Some(r) = handle.recovery_news() {
            reply.text.push_str(&format!(
                "\n(index of {name}: found damaged ({}); the damaged file was set aside as {} and the index is being \
                 rebuilt from the files: ask again in a moment; `booger status` shows progress)",
                crate::base::text::clip(&r.error, 200),
                r.set_aside.display()
            ));
            if let Some(obj) = reply.data.as_object_mut() {
                obj.insert("recovered".to_owned(), serde_json::to_value(&r).unwrap_or_default());
            }
        }
    }
    reply
}

/// Which index generation answered and what was not in it yet: an answer's `index`.
#[derive(serde::Serialize)]
struct IndexFreshness<'a> {
    project: &'a str,
    generation: u64,
    state: crate::engine::live::WatchState,
    pending: &'a [String],
    pending_count: usize,
    events_lost: bool,
    indexing: Option<Indexing>,
}

/// How far a run is: files done of all.
#[derive(serde::Serialize)]
struct Indexing {
    done: u64,
    total: u64,
}

/// Every answer says which index generation it comes from and what was not in it yet; the
/// text says so only when something was not.
fn with_freshness(mut reply: ToolReply, answered: Vec<Answered>) -> ToolReply {
    use crate::engine::live::WatchState;
    if answered.is_empty() || reply.is_error {
        return reply;
    }
    let entries: Vec<Value> = answered
        .iter()
        .map(|Answered { name, generation, freshness: f, .. }| {
            let entry = IndexFreshness {
                project: name,
                generation: *generation,
                state: f.state,
                pending: &f.pending,
                pending_count: f.pending_count,
                events_lost: f.events_lost,
                indexing: f.indexing.map(|(done, total)| Indexing { done, total }),
            };
            serde_json::to_value(entry).unwrap_or_default()
        })
        .collect();
    // `index` is one object whatever answered (its schema's shape); with several projects,
    // `indexes` holds each one's.
    if let Some(obj) = reply.data.as_object_mut() {
        obj.insert("index".to_owned(), entries[0].clone());
        if entries.len() > 1 {
            obj.insert("indexes".to_owned(), Value::Array(entries));
        }
    }
    for Answered { name, freshness: f, .. } in &answered {
        let note = if f.events_lost {
            Some("the OS dropped file events; booger is re-surveying the project, so recent changes may be missing: ask again in a moment".to_owned())
        } else if f.pending_count > 0 {
            let more = if f.pending_count > f.pending.len() { ", …" } else { "" };
            Some(format!(
                "{} changed file(s) not indexed yet ({}{more}); ask again in a moment",
                f.pending_count,
                f.pending.join(", ")
            ))
        } else {
            match f.state {
                WatchState::Missing => Some(
                    "the project directory is missing (moved, deleted or unmounted); booger resumes when it is back"
                        .to_owned(),
                ),
                WatchState::Starting => Some(match f.indexing {
                    Some((_, 0)) => "indexing now (looking for files); results may be incomplete".to_owned(),
                    Some((done, total)) => {
                        format!("indexing now: {done} of {total} files read so far; results may be incomplete")
                    }
                    None => "catching up with changes made while booger was not running".to_owned(),
                }),
                WatchState::Rescanning => f.reason.clone(),
                WatchState::Watching | WatchState::Off | WatchState::Manual => None,
            }
        };
        if let Some(note) = note {
            reply.text.push_str(&format!("\n(index of {name}: {note})"));
        }
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_exactly_one_handler() {
        for spec in tools::TOOLS {
            let n = HANDLERS.iter().filter(|(name, _)| *name == spec.name).count();
            assert_eq!(n, 1, "tool {} has {n} handlers", spec.name);
        }
        for (name, _) in HANDLERS {
            assert!(tools::find(name).is_some(), "handler {name} has no spec in booger-proto");
        }
    }
}
