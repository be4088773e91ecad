//! What a handler works with: the [`Call`] (who asks, the daemon, the snapshots the call
//! took), its [`ToolError`], and the helpers the search-side tools share (opening a project
//! for a query, filters, paging, why an answer is empty).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use booger_proto::tools::args;
use booger_proto::wire::ToolReply;
use serde::de::DeserializeOwned;

use crate::base::sync::Recover;
use crate::domain::search::format::{Cursor, DEFAULT_MAX_TOKENS, Page};
use crate::engine::Daemon;
use crate::engine::project::{Snapshot, Unready};
use crate::engine::registry::Project;
use crate::store::Store;
use crate::store::context::Scope;
use crate::store::search::Filters;

/// Who is calling: set by the connection's `booger/hello`.
#[derive(Debug, Clone)]
pub(crate) struct Session {
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
    pub(crate) fn anonymous(connection: u64) -> Self {
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

/// One tool call as its handler sees it.
pub(crate) struct Call<'a> {
    pub daemon: &'a Daemon,
    pub session: &'a Session,
    /// What the answer was read from, one entry per project snapshot taken: attached to
    /// the reply as its freshness.
    pub(super) answered: RefCell<Vec<Answered>>,
    /// The progress token the caller gave, if any ([`super::progress`]).
    progress: super::progress::Followed,
}

/// One project an answer came from: its name, handle, generation and freshness.
pub(super) struct Answered {
    pub name: String,
    pub handle: Arc<crate::engine::project::ProjectHandle>,
    pub generation: u64,
    pub freshness: crate::engine::live::Freshness,
}

/// Why a call has no answer of its own.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The call cannot be done as asked (or not yet); the message says how to fix it.
    #[error("{0}")]
    Refused(String),
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self::Refused(message)
    }
}

impl From<ToolError> for ToolReply {
    fn from(e: ToolError) -> Self {
        let ToolError::Refused(message) = e;
        ToolReply::error(message)
    }
}

/// What a handler returns.
pub(crate) type Outcome = Result<ToolReply, ToolError>;

/// An answer: `text` for the model, `data` (the tool's answer type) as its structured content.
pub(super) fn answer(text: impl Into<String>, data: &impl serde::Serialize) -> ToolReply {
    ToolReply::ok(text, serde_json::to_value(data).unwrap_or_default())
}

/// A failed step of `tool`, as its answer says it.
pub(super) fn failed(tool: &str, e: impl std::fmt::Display) -> ToolError {
    ToolError::Refused(format!("{tool}: {e}"))
}

/// A call's arguments as their tool's type (validated against the catalogue already).
pub(super) fn parse<A: DeserializeOwned>(arguments: &serde_json::Value) -> Result<A, ToolError> {
    A::deserialize(arguments).map_err(|e| ToolError::Refused(format!("arguments: {e}")))
}

impl<'a> Call<'a> {
    pub(crate) fn new(daemon: &'a Daemon, session: &'a Session) -> Self {
        Self::followed(daemon, session, None)
    }

    /// A call a client follows by `token` ([`crate::tools::progress_of`]).
    pub(crate) fn followed(daemon: &'a Daemon, session: &'a Session, token: Option<String>) -> Self {
        Self { daemon, session, answered: RefCell::new(Vec::new()), progress: super::progress::follow(token) }
    }

    /// How this call's progress is measured, for a client that follows it.
    pub(crate) fn report_progress(
        &self,
        measure: impl Fn() -> Option<booger_proto::wire::Progress> + Send + Sync + 'static,
    ) {
        self.progress.report(measure);
    }

    /// A project's index for a query (see [`crate::engine::project::ProjectHandle::snapshot`]),
    /// recorded as what the answer is based on. `Err` is the finished answer: an unknown
    /// project, or no index yet.
    pub(crate) fn snapshot(&self, named: Option<&str>) -> Result<Snapshot, ToolError> {
        let project = self.project(named)?;
        self.snapshot_of(project)
    }

    /// [`Call::snapshot`] of a project already resolved.
    pub(crate) fn snapshot_of(&self, project: Project) -> Result<Snapshot, ToolError> {
        let handle = self.daemon.projects.get(&project.root);
        self.daemon.projects.keep_budget(&project.root, self.daemon.config.memory_budget);
        let (name, root) = (project.name.clone(), project.root.clone());
        match handle.snapshot(project, &self.session.id) {
            Ok(s) => {
                self.record(&s);
                Ok(s)
            }
            // An error, not an empty answer: no tool's answer type describes "nothing yet",
            // and the agent should ask again rather than take the silence as an answer.
            Err(Unready::Indexing) => Err(ToolError::Refused(format!(
                "No index yet: {name} is being indexed now; `booger status` shows progress. Try again shortly."
            ))),
            Err(Unready::NoIndex) => {
                Err(ToolError::Refused(format!("No index found for {name}. Run: booger index \"{}\"", root.display())))
            }
            Err(Unready::Store(e)) => Err(ToolError::Refused(format!("cannot open the index of {name}: {e}"))),
        }
    }

    /// Records `s` as one of the snapshots the answer is based on.
    pub(crate) fn record(&self, s: &Snapshot) {
        self.answered.borrow_mut().push(Answered {
            name: s.project.name.clone(),
            handle: Arc::clone(&s.handle),
            generation: s.generation,
            freshness: s.freshness.clone(),
        });
    }

    /// The project a call is about: the `project` argument (name or path) or else the
    /// session's directory. `Err` says how to register it.
    pub(crate) fn project(&self, named: Option<&str>) -> Result<Project, ToolError> {
        resolve_project(self.daemon, self.session, named).map_err(ToolError::Refused)
    }

    /// The notes `session` (an argument: a session id or "shared") means for this call.
    pub(crate) fn scope<'s>(&'s self, session: Option<&'s str>) -> Scope<'s> {
        match session {
            Some("shared") | Some("") => Scope::Shared,
            Some(s) => Scope::Session(s),
            None => Scope::Session(&self.session.id),
        }
    }

    /// True while a project this call answers from is still being indexed.
    pub(crate) fn indexing(&self) -> bool {
        self.answered.borrow().iter().any(|a| a.handle.is_indexing())
    }

    /// Why an answer is empty, and what to do about it.
    pub(crate) fn explain_empty(&self, project: &Project, store: &Store, filters: &Filters, what: &str) -> String {
        let all = store.count_files(&Filters::default()).unwrap_or(0);
        if all == 0 && self.indexing() {
            return "No indexed files yet: the first index is being built; ask again in a moment".to_owned();
        }
        if all == 0 {
            return format!("No indexed files. Run: booger index \"{}\"", project.root.display());
        }
        if let Some(p) = &filters.path
            && store.count_files(&Filters { path: Some(p.clone()), ..Default::default() }).unwrap_or(0) == 0
        {
            let on_disk = !p.contains(['*', '?', '[']) && project.root.join(p).exists();
            return if on_disk {
                format!(
                    "{p:?} has no indexed files: what is under it is ignored (.gitignore), binary, too large or not \
                     indexed yet; `booger status` lists skipped files"
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
                filters.language.map_or("any", |l| l.as_str())
            );
        }
        what.to_owned()
    }
}

/// The filters every search-side tool shares (`language`, `kind`, `path_prefix`).
pub(super) fn filters(f: &args::Filters) -> Filters {
    let path = f.path_prefix.clone().filter(|v| !v.is_empty());
    Filters { language: f.language, kind: f.kind, path }
}

/// A result list's page: `offset`, `head_limit` (default `head_limit`), `max_lines` (default
/// `max_lines`), `max_tokens` and `cursor`. `Err` when the cursor is not one a tool returned.
pub(super) fn page(
    p: &args::Paging,
    max_lines: Option<usize>,
    head_limit: usize,
    lines: usize,
) -> Result<Page, ToolError> {
    let cursor = match p.cursor.as_deref() {
        Some(c) => Some(Cursor::parse(c).ok_or_else(|| {
            ToolError::Refused(format!("cursor {c:?} is not one this tool returned; drop it to start over"))
        })?),
        None => None,
    };
    Ok(Page {
        offset: p.offset.unwrap_or(0),
        head_limit: p.head_limit.unwrap_or(head_limit),
        max_lines: max_lines.unwrap_or(lines),
        max_tokens: p.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        // A cursor resumes inside a chunk by line: it reads whole chunks, as it did.
        snippets: max_lines.is_none() && cursor.is_none(),
        cursor,
    })
}

/// A caller's text (query, pattern, symbol) as an answer repeats it: quoted, and cut so that a
/// long one cannot blow the answer's budget.
pub(super) fn quoted(text: &str) -> String {
    format!("{:?}", crate::base::text::clip(text, 120))
}

/// The project `named` (a name or a path) or else the session's directory. `Err` says how to
/// register it.
pub(super) fn resolve_project(daemon: &Daemon, session: &Session, named: Option<&str>) -> Result<Project, String> {
    let key = match (named, &session.project) {
        // A relative path means one from the caller's directory (a shell's `--project ../x`),
        // unless it is a project's name.
        (Some(p), Some(dir))
            if Path::new(p).is_relative()
                && !daemon.registry.read().recover().projects().iter().any(|r| r.name == p) =>
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
    if let Some(p) = daemon.registry.read().recover().find(&key) {
        return Ok(p.clone());
    }
    // An agent's first call in a repository booger has not seen: register it and answer
    // from what is indexed so far.
    if named.is_none()
        && session.register
        && let Some(root) = session.project.as_deref().and_then(crate::engine::registration::first_use_root)
    {
        return crate::engine::registration::register_on_first_use(daemon, &root);
    }
    let registry = daemon.registry.read().recover();
    let known: Vec<&str> = registry.projects().iter().map(|p| p.name.as_str()).collect();
    Err(format!(
        "{key} is not a registered project. Register it with `booger projects add {key}`{}",
        if known.is_empty() { String::new() } else { format!(", or use one of: {}", known.join(", ")) }
    ))
}
