//! One handler per tool of [`booger_proto::tools::TOOLS`], and the single dispatch path that
//! MCP `tools/call` and the CLI's `booger/call` share.
//!
//! A tool is declared once in booger-proto (name, description, arguments); here it gets its
//! handler. Arguments are validated against the declaration before a handler runs, so handlers
//! may rely on the types; a handler that panics answers `isError` instead of taking the
//! daemon down.

mod batch;
mod changed;
mod context;
mod embed;
mod eval;
pub use eval::last as last_eval;
pub use progress::of as progress_of;
mod expand;
mod git;
mod grep;
mod index;
mod paths;
mod progress;
mod projects;
mod references;
mod schedule;
mod search;
mod semantic;
mod status;
mod summary;
mod symbols;
mod tests_for;
mod workspace;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use booger_proto::tools::{self, Effect, ToolSpec};
use booger_proto::wire::ToolReply;
use serde_json::Value;

use crate::engine::registry::Project;
use crate::{base::hints, engine::Daemon};

/// Who is calling: set by the connection's `booger/hello`.
#[derive(Debug, Clone)]
pub struct Session {
    /// Volatile context (focus, annotations) is kept per session.
    pub id: String,
    /// The project a call means when it names none: the directory `booger mcp` or the CLI
    /// was started in.
    pub project: Option<PathBuf>,
    /// Register `project` on its first use when it is a repository (`booger mcp` asks for
    /// this unless told `--no-register`).
    pub register: bool,
    /// A person at a shell asks (`booger <tool>`): hints name flags, not arguments.
    pub shell: bool,
    /// `eval` asks, to measure the ranking: answers keep all their results whatever their
    /// confidence (the threshold is measured on its own).
    pub measuring: bool,
    /// An HTTP client of a daemon not started with `--http-allow-writes`: only tools that
    /// change nothing (registering, removing, indexing and notes are the user's to allow).
    pub read_only: bool,
}

impl Session {
    /// A connection that has not said hello yet (a raw MCP client on the socket).
    pub fn anonymous(connection: u64) -> Self {
        Self {
            id: format!("connection-{connection}"),
            project: None,
            register: false,
            shell: false,
            measuring: false,
            read_only: false,
        }
    }
}

type Handler = fn(&Daemon, &Session, &Value) -> ToolReply;

/// Every handler, keyed by its tool's name. A test checks this matches `TOOLS` exactly.
const HANDLERS: &[(&str, Handler)] = &[
    ("search", search::run),
    ("semantic-search", semantic::semantic_search),
    ("hybrid-search", semantic::hybrid_search),
    ("symbols", symbols::run),
    ("references", references::run),
    ("grep", grep::run),
    ("directory-summary", summary::run),
    ("tests-for", tests_for::run),
    ("changed-since", changed::run),
    ("search-expand", expand::run),
    ("workspace-search", workspace::run),
    ("batch", batch::run),
    ("status", status::run),
    ("index", index::run),
    ("projects", projects::run),
    ("annotate", context::annotate),
    ("annotations", context::annotations),
    ("focus", context::focus),
    ("visit", context::visit),
    ("forget", context::forget),
    ("branch-diff", git::branch_diff),
    ("draft-commit", git::draft_commit),
    ("changelog", git::changelog),
    ("embed", embed::run),
    ("eval", eval::run),
];

/// The call named a tool that does not exist (JSON-RPC -32602, not a tool error).
#[derive(Debug, thiserror::Error)]
#[error("unknown tool `{0}`; tools/list names the available tools: {list}", list = tools::names().join(", "))]
pub struct UnknownTool(pub String);

/// Validates and runs one tool call on a blocking thread (handlers may touch disk or SQLite).
/// With a `progress` token, [`progress_of`] says how far the call got while it runs.
pub async fn call(
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
            ANSWERED.take();
            let _followed = progress::follow(progress);
            let args = match paths::prepare(&daemon, &session, spec.name, args) {
                Ok(a) => a,
                Err(message) => return (ToolReply::error(message), false),
            };
            let (reply, timed_out) = hints::for_reader(session.shell, || {
                if heavy {
                    match crate::base::deadline::within(HEAVY_DEADLINE, || handler(&daemon, &session, &args)) {
                        (reply, true) if reply.is_error => (too_long(spec.name), true),
                        (reply, _) => (reply, false),
                    }
                } else {
                    (handler(&daemon, &session, &args), false)
                }
            });
            let answered = ANSWERED.take();
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
pub fn refused_read_only(session: &Session, spec: &booger_proto::tools::ToolSpec) -> Option<ToolReply> {
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

pub fn lookup(name: &str) -> Option<(&'static ToolSpec, Handler)> {
    let spec = tools::find(name)?;
    let handler = HANDLERS.iter().find(|(n, _)| *n == name)?.1;
    Some((spec, handler))
}

thread_local! {
    /// The projects the running handler answers from, with the index generation and what was
    /// still pending: recorded by [`answering_from`], attached to the reply by [`call`]. A
    /// handler runs wholly on one blocking thread, so this needs no plumbing through every
    /// handler's signature.
    static ANSWERED: std::cell::RefCell<Vec<Answered>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// One project an answer came from: (name, its handle, index generation, what was pending).
type Answered = (String, Arc<crate::engine::project::ProjectHandle>, u64, crate::engine::live::Freshness);

/// Waits (briefly) for `handle`'s queued changes, then records what the answer is based on.
pub fn answering_from(name: &str, handle: &Arc<crate::engine::project::ProjectHandle>, store: &crate::store::Store) {
    let mut fresh = handle.live.wait_fresh();
    if fresh.state == crate::engine::live::Mode::Starting && handle.is_indexing() {
        use std::sync::atomic::Ordering::Relaxed;
        fresh.indexing = Some((handle.progress.done.load(Relaxed), handle.progress.total.load(Relaxed)));
    }
    ANSWERED.with_borrow_mut(|a| a.push((name.to_owned(), Arc::clone(handle), store.content_generation(), fresh)));
}

/// A query that found an index damaged has it set aside and rebuilt; the answer (failed or
/// not) says so, with where the damaged file went.
fn with_recovery(mut reply: ToolReply, answered: &[Answered]) -> ToolReply {
    for (name, handle, ..) in answered {
        handle.recover_if_damaged();
        if let Some(r) = handle.recovery_news() {
            reply.text.push_str(&format!(
                "\n(index of {name}: found damaged ({}); the damaged file was set aside as {} and the index is being \
                 rebuilt from the files: ask again in a moment; `booger status` shows progress)",
                crate::base::text::clip(&r.error, 200),
                r.set_aside.display()
            ));
            if let Some(obj) = reply.data.as_object_mut() {
                obj.insert("recovered".to_owned(), serde_json::json!(r));
            }
        }
    }
    reply
}

/// Every answer says which index generation it comes from and what was not in it yet; the
/// text says so only when something was not.
fn with_freshness(mut reply: ToolReply, answered: Vec<Answered>) -> ToolReply {
    use crate::engine::live::Mode;
    if answered.is_empty() || reply.is_error {
        return reply;
    }
    let entries: Vec<Value> = answered
        .iter()
        .map(|(name, _, generation, f)| {
            serde_json::json!({
                "project": name,
                "generation": generation,
                "state": f.state,
                "pending": f.pending,
                "pending_count": f.pending_count,
                "events_lost": f.events_lost,
                "indexing": f.indexing.map(|(done, total)| serde_json::json!({ "done": done, "total": total })),
            })
        })
        .collect();
    if let Some(obj) = reply.data.as_object_mut() {
        let index = if entries.len() == 1 { entries[0].clone() } else { Value::Array(entries) };
        obj.insert("index".to_owned(), index);
    }
    for (name, _, _, f) in &answered {
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
                Mode::Missing => Some(
                    "the project directory is missing (moved, deleted or unmounted); booger resumes when it is back"
                        .to_owned(),
                ),
                Mode::Starting => Some(match f.indexing {
                    Some((_, 0)) => "indexing now (looking for files); results may be incomplete".to_owned(),
                    Some((done, total)) => {
                        format!("indexing now: {done} of {total} files read so far; results may be incomplete")
                    }
                    None => "catching up with changes made while booger was not running".to_owned(),
                }),
                Mode::Rescanning => f.reason.clone(),
                Mode::Watching | Mode::Off | Mode::Manual => None,
            }
        };
        if let Some(note) = note {
            reply.text.push_str(&format!("\n(index of {name}: {note})"));
        }
    }
    reply
}

/// How long a call waits for a project's first index to write its first batch.
const FIRST_BATCH_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// How long a call waits for a project's first index to finish: a small repository's takes
/// well under this (a 100-file one about 0.3 s), and its first answer is then whole; a large
/// one answers from what is indexed by then, and says so.
const FIRST_INDEX_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// A project and its index, for the search-side tools. `Err` is the finished answer: an
/// unknown project, or no index yet (with the command that builds it).
pub fn project_store(
    daemon: &Daemon,
    session: &Session,
    args: &Value,
) -> Result<(Project, Arc<crate::store::Store>), ToolReply> {
    let project = resolve_project(daemon, session, args).map_err(ToolReply::error)?;
    let handle = daemon.projects.get(&project.root);
    handle.touch();
    daemon.projects.keep_budget(&project.root, daemon.config.memory_budget);
    let started = std::time::Instant::now();
    let mut opened = handle.existing_store();
    // A first index just started (a project registered on first use): its first batch lands
    // within moments; answer from it rather than say there is no index yet.
    while matches!(opened, Ok(None))
        && handle.live.mode() == crate::engine::live::Mode::Starting
        && started.elapsed() < FIRST_BATCH_WAIT
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
        opened = handle.existing_store();
    }
    // Then, briefly, for the whole first index (or the catch-up after a restart): a small
    // repository's first answer is whole. Once a first batch is in, a run that will not be
    // done within the wait is not waited for: a large tree answers from what is indexed, and
    // says so.
    let hopeless = || {
        let left = FIRST_INDEX_WAIT.saturating_sub(started.elapsed());
        handle.progress.done.load(std::sync::atomic::Ordering::Relaxed) >= crate::engine::index::BATCH_FILES as u64
            && handle.progress.eta().is_some_and(|eta| eta > left)
    };
    while handle.live.mode() == crate::engine::live::Mode::Starting
        && handle.is_indexing()
        && started.elapsed() < FIRST_INDEX_WAIT
        && !hopeless()
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    match opened {
        Ok(Some(store)) => {
            answering_from(&project.name, &handle, &store);
            Ok((project, store))
        }
        Ok(None) if handle.is_indexing() => Err(ToolReply::ok(
            format!(
                "No index yet: {} is being indexed now; `booger status` shows progress. Try again shortly.",
                project.name
            ),
            serde_json::json!({ "results": [], "reason": "indexing" }),
        )),
        Ok(None) => Err(ToolReply::ok(
            format!("No index found for {}. Run: booger index \"{}\"", project.name, project.root.display()),
            serde_json::json!({ "results": [], "reason": "no_index" }),
        )),
        Err(e) => Err(ToolReply::error(format!("cannot open the index of {}: {e}", project.name))),
    }
}

/// The filters every search-side tool shares (`language`, `kind`, `path_prefix`).
pub fn filters(args: &Value) -> crate::store::search::Filters {
    let s = |k: &str| args.get(k).and_then(Value::as_str).filter(|v| !v.is_empty()).map(str::to_owned);
    crate::store::search::Filters { language: s("language"), kind: s("kind"), path: s("path_prefix") }
}

/// Why an answer is empty, and what to do about it.
pub fn explain_empty(
    project: &Project,
    store: &crate::store::Store,
    filters: &crate::store::search::Filters,
    what: &str,
) -> String {
    let all = store.count_files(&crate::store::search::Filters::default()).unwrap_or(0);
    let indexing = ANSWERED.with_borrow(|a| a.iter().any(|(_, handle, ..)| handle.is_indexing()));
    if all == 0 && indexing {
        return "No indexed files yet: the first index is being built; ask again in a moment".to_owned();
    }
    if all == 0 {
        return format!("No indexed files. Run: booger index \"{}\"", project.root.display());
    }
    if let Some(p) = &filters.path
        && store
            .count_files(&crate::store::search::Filters { path: Some(p.clone()), ..Default::default() })
            .unwrap_or(0)
            == 0
    {
        let on_disk = !p.contains(['*', '?', '[']) && project.root.join(p).exists();
        return if on_disk {
            format!(
                "{p:?} has no indexed files: what is under it is ignored (.gitignore), binary, too large or not indexed yet; \
                 `booger status` lists skipped files"
            )
        } else {
            format!(
                "No file or folder {p:?} in {} ({}). Paths are relative to your directory or the project's root; \
                 `booger symbols` lists what is indexed",
                project.name,
                project.root.display()
            )
        };
    }
    if store.count_files(filters).unwrap_or(0) == 0 {
        return format!(
            "No indexed files match the filters (language {:?}). {what}",
            filters.language.as_deref().unwrap_or("any")
        );
    }
    what.to_owned()
}

/// The volatile context `session` sees in `store`, for ranking (cached per generation).
pub fn volatile(
    store: &crate::store::Store,
    scope: crate::store::context::Scope,
) -> std::sync::Arc<crate::domain::search::Context> {
    let now = crate::base::time::now_rfc3339();
    store.cached_context(scope, &now, || {
        let (focus, visited) = store.workset(scope).unwrap_or_default();
        let notes = store.annotations(scope, None, &now).unwrap_or_default();
        let expires = notes.iter().filter_map(|a| a.expires_at.clone()).min();
        let notes = notes.into_iter().map(|a| (a.target, a.note)).collect();
        crate::domain::search::Context { focus, visited, notes, expires }
    })
}

/// The session a call acts for: its `session` argument, "shared", or the connection's.
pub fn scope<'a>(session: &'a Session, args: &'a Value) -> crate::store::context::Scope<'a> {
    match args.get("session").and_then(Value::as_str) {
        Some("shared") | Some("") => crate::store::context::Scope::Shared,
        Some(s) => crate::store::context::Scope::Session(s),
        None => crate::store::context::Scope::Session(&session.id),
    }
}

/// The paging arguments result-returning tools share: `offset`, `head_limit`, `max_lines`,
/// `max_tokens` and `cursor`. `Err` when the cursor is not one a tool returned.
pub fn page(
    args: &Value,
    head_limit: usize,
    max_lines: usize,
) -> Result<crate::domain::search::format::Page, ToolReply> {
    use crate::domain::search::format::{Cursor, DEFAULT_MAX_TOKENS, Page};
    let cursor = match args.get("cursor").and_then(Value::as_str) {
        Some(c) => Some(Cursor::parse(c).ok_or_else(|| {
            ToolReply::error(format!("cursor {c:?} is not one this tool returned; drop it to start over"))
        })?),
        None => None,
    };
    Ok(Page {
        offset: int(args, "offset", 0),
        head_limit: int(args, "head_limit", head_limit),
        max_lines: int(args, "max_lines", max_lines),
        max_tokens: int(args, "max_tokens", DEFAULT_MAX_TOKENS),
        // A cursor resumes inside a chunk by line: it reads whole chunks, as it did.
        snippets: args.get("max_lines").is_none() && cursor.is_none(),
        cursor,
    })
}

/// A caller's text (query, pattern, symbol) as an answer repeats it: quoted, and cut so that a
/// long one cannot blow the answer's budget.
pub fn quoted(text: &str) -> String {
    format!("{:?}", crate::base::text::clip(text, 120))
}

/// An integer argument (validated against the schema already), or `default`.
pub fn int(args: &Value, key: &str, default: usize) -> usize {
    args.get(key).and_then(Value::as_u64).map_or(default, |n| n as usize)
}

/// The project a call is about: the `project` argument (name or path) or else the session's
/// directory. `Err` says how to register it.
pub fn resolve_project(daemon: &Daemon, session: &Session, args: &Value) -> Result<Project, String> {
    let named = args.get("project").and_then(Value::as_str);
    let key = match (named, &session.project) {
        // A relative path means one from the caller's directory (a shell's `--project ../x`),
        // unless it is a project's name.
        (Some(p), Some(dir))
            if Path::new(p).is_relative()
                && !daemon.registry.read().expect("registry lock").projects().iter().any(|r| r.name == p) =>
        {
            dir.join(p).to_string_lossy().into_owned()
        }
        (Some(p), _) => p.to_owned(),
        (None, Some(dir)) => dir.to_string_lossy().into_owned(),
        (None, None) => {
            return Err("no project given and this session has no default directory; pass \
                        `project` (a registered name or path) or start `booger mcp` inside the project"
                .to_owned());
        }
    };
    if let Some(p) = daemon.registry.read().expect("registry lock").find(&key) {
        return Ok(p.clone());
    }
    // An agent's first call in a repository booger has not seen: register it and answer
    // from what is indexed so far.
    if named.is_none()
        && session.register
        && let Some(root) = session.project.as_deref().and_then(projects::first_use_root)
    {
        return projects::register_on_first_use(daemon, &root);
    }
    let registry = daemon.registry.read().expect("registry lock");
    let known: Vec<&str> = registry.projects().iter().map(|p| p.name.as_str()).collect();
    Err(format!(
        "{key} is not a registered project. Register it with `booger projects add {key}`{}",
        if known.is_empty() { String::new() } else { format!(", or use one of: {}", known.join(", ")) }
    ))
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
