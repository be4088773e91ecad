//! The team server's tools (`booger_proto::remote`): the local tools of the same names, with
//! the same arguments and answers, over the team index. A remote agent asks through its
//! token; a handler reads the team index through one pooled connection, and every query it
//! makes is scoped to what the token may read by the store itself
//! ([`crate::store::team::Reader`]); nothing here filters rows afterwards. The answers are
//! laid out by the local tools' own renderers, so an output mode, a page, a budget or a cursor
//! means the same on both.

mod browse;
mod find;
mod lines;

use booger_proto::remote::{self, Selected};
use booger_proto::tools::args;
use booger_proto::wire::ToolReply;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::call::ToolError;
use crate::store::search::Filters;
use crate::store::team::{Reader, TeamError, TeamFilters, TeamStore};

/// A remote tool's answer.
#[derive(Debug)]
pub(crate) struct RemoteReply {
    pub text: String,
    /// The typed answer (`structuredContent`); null for an error.
    pub data: Value,
    pub is_error: bool,
    /// How many results it gave (the audit's count).
    pub results: usize,
}

/// Why a call was not answered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RemoteError {
    /// Not a tool of the team server: a JSON-RPC error.
    #[error("unknown tool {0:?}: tools/list names the team server's tools")]
    Unknown(String),
    /// A bad argument, said so the caller can fix it (`isError`).
    #[error("{0}")]
    Refused(String),
    /// The team index could not answer (`isError`; worth retrying).
    #[error("the team index could not answer ({0}); try again shortly")]
    Team(#[from] TeamError),
}

impl From<ToolError> for RemoteError {
    fn from(e: ToolError) -> Self {
        let ToolError::Refused(why) = e;
        Self::Refused(why)
    }
}

type Outcome = Result<ToolReply, RemoteError>;

/// What hybrid search says on the team server.
const NO_EMBEDDINGS: &str = "(the team index holds no embeddings yet: answered by words, as search)";

/// Runs `tool` with `args` for `reader`. Arguments are validated against the catalogue
/// first: a wrong one is refused with what to send instead.
pub(crate) fn call(store: &mut TeamStore, reader: Reader, tool: &str, args: Value) -> Result<RemoteReply, RemoteError> {
    let spec = remote::find(tool).ok_or_else(|| RemoteError::Unknown(tool.to_owned()))?;
    spec.validate(&args).map_err(RemoteError::Refused)?;
    let args = if args.is_null() { Value::Object(Default::default()) } else { args };
    let sel: Selected = read(tool, &args)?;
    let mut ask = Ask { store, reader, tool };
    let reply = match tool {
        "search" => find::search(&mut ask, &sel, &read(tool, &args)?, ""),
        "hybrid-search" => find::search(&mut ask, &sel, &read::<args::Hybrid>(tool, &args)?.search, NO_EMBEDDINGS),
        "workspace-search" => {
            let a: args::Workspace = read(tool, &args)?;
            find::search(&mut ask, &sel, &args::Search { query: a.query, on: args::On::default() }, "")
        }
        "symbols" => find::symbols(&mut ask, &sel, &read(tool, &args)?),
        "tests-for" => find::tests_for(&mut ask, &sel, &read(tool, &args)?),
        "grep" => lines::grep(&mut ask, &sel, &read(tool, &args)?),
        "references" => lines::references(&mut ask, &sel, &read(tool, &args)?),
        "directory-summary" => browse::summary(&mut ask, &sel, &read(tool, &args)?),
        "branch-diff" => browse::diff(&mut ask, &sel, &read(tool, &args)?),
        "status" => browse::status(&mut ask),
        _ => Err(RemoteError::Unknown(tool.to_owned())),
    }?;
    let results = counted(&reply.data);
    Ok(RemoteReply { text: reply.text, data: reply.data, is_error: reply.is_error, results })
}

/// The call's arguments as the tool's type (validated already: a failure here is a value the
/// schema lets through and the type does not).
fn read<T: DeserializeOwned>(tool: &str, args: &Value) -> Result<T, RemoteError> {
    T::deserialize(args).map_err(|e| RemoteError::Refused(format!("{tool}: {e}")))
}

/// How many results an answer gave: its listed rows, files or repositories.
fn counted(data: &Value) -> usize {
    let of = |k: &str| match data.get(k)? {
        Value::Array(rows) => Some(rows.len()),
        n => n.as_u64().map(|n| n as usize),
    };
    ["results", "files", "repositories"].into_iter().find_map(of).unwrap_or(0)
}

/// One call in progress: the connection, whose it is, and which tool.
struct Ask<'a> {
    store: &'a mut TeamStore,
    reader: Reader,
    tool: &'a str,
}

impl Ask<'_> {
    /// The filters every query of this call reads through: its reader's scope, the repository
    /// and commit it selected, and the local tool's filters (`local`), as local `team=true`
    /// takes them ([`crate::tools::team::filters`]).
    fn scope<'s>(&self, sel: &'s Selected, local: &'s Filters) -> TeamFilters<'s> {
        TeamFilters {
            commit: sel.commit.as_deref().filter(|c| !c.is_empty()),
            repo: sel.repository.as_deref(),
            reader: self.reader,
            ..crate::tools::team::filters(local, &[])
        }
    }

    fn refuse(&self, why: &str) -> RemoteError {
        RemoteError::Refused(format!("{}: {why}", self.tool))
    }

    /// "No such repository or commit" without saying which of the two, or whether the
    /// repository exists: a token must not learn the names it may not read. `base`: the other
    /// commit a diff names.
    fn not_found(&self, sel: &Selected, base: Option<&str>) -> RemoteError {
        let what = sel.repository.as_deref().unwrap_or("(none)");
        let at: Vec<&str> = [base, sel.commit.as_deref()].into_iter().flatten().collect();
        let at = if at.is_empty() { "its head".to_owned() } else { at.join(" or ") };
        self.refuse(&format!(
            "no published repository {what:?} at {at} that this token may read (a commit is an id, a prefix of \
             one, or a branch published from); `status` lists the repositories it may read"
        ))
    }

    /// An empty answer's error when the repository and commit selected are not readable: the
    /// caller must not read it as "nothing matches".
    fn check_selected(&mut self, sel: &Selected) -> Result<(), RemoteError> {
        if sel.repository.is_none() && sel.commit.is_none() {
            return Ok(());
        }
        match self.store.resolve(&self.scope(sel, &Filters::default()))? {
            Some(_) => Ok(()),
            None => Err(self.not_found(sel, None)),
        }
    }
}

/// A commit as answers name it: its first 12 digits.
fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
