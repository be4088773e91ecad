//! The team server's tools (`booger_proto::remote`): read-only questions about published
//! repositories, asked by a remote agent through its token. A handler reads the team index
//! through one pooled connection, and every query it makes is scoped to what the token may
//! read by the store itself ([`crate::store::team::Reader`]); nothing here filters rows
//! afterwards. A handler answers text for the model and typed data for `structuredContent`,
//! and says which repository it read and how many results it gave, for the audit.

mod browse;
mod find;
mod lines;

use booger_proto::remote::{self, Args};
use serde::Serialize;
use serde_json::Value;

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

type Outcome = Result<RemoteReply, RemoteError>;

/// Runs `tool` with `args` for `reader`. Arguments are validated against the catalogue
/// first: a wrong one is refused with what to send instead.
pub(crate) fn call(store: &mut TeamStore, reader: Reader, tool: &str, args: Value) -> Outcome {
    let spec = remote::find(tool).ok_or_else(|| RemoteError::Unknown(tool.to_owned()))?;
    spec.validate(&args).map_err(RemoteError::Refused)?;
    let a: Args = serde_json::from_value(if args.is_null() { Value::Object(Default::default()) } else { args })
        .map_err(|e| RemoteError::Refused(format!("{tool}: {e}")))?;
    let mut ask = Ask { store, reader, tool };
    match tool {
        "search" => find::search(&mut ask, &a, true),
        // No embeddings in the team index yet: by words, saying so.
        "hybrid-search" => find::search(&mut ask, &a, true).map(|mut r| {
            r.text.insert_str(0, "(the team index holds no embeddings yet: answered by words, as search)\n");
            r
        }),
        "workspace-search" => find::search(&mut ask, &a, false),
        "symbols" => find::symbols(&mut ask, &a),
        "tests-for" => find::tests_for(&mut ask, &a),
        "grep" => lines::grep(&mut ask, &a),
        "references" => lines::references(&mut ask, &a),
        "directory-summary" => browse::summary(&mut ask, &a),
        "branch-diff" => browse::diff(&mut ask, &a),
        "status" => browse::status(&mut ask),
        _ => Err(RemoteError::Unknown(tool.to_owned())),
    }
}

/// One call in progress: the connection, whose it is, and which tool.
struct Ask<'a> {
    store: &'a mut TeamStore,
    reader: Reader,
    tool: &'a str,
}

impl Ask<'_> {
    /// The filters every query of this call reads through: its reader's scope, and the
    /// repository, commit, path, language and kind the arguments name.
    fn scope<'a>(&self, a: &'a Args, with_repository: bool) -> Result<TeamFilters<'a>, RemoteError> {
        let prefix = a.path_prefix.as_deref().or(a.path.as_deref()).filter(|p| !p.is_empty());
        if prefix.is_some_and(|p| p.contains(['*', '?', '['])) {
            return Err(self.refuse("path_prefix is a directory or file prefix, not a glob"));
        }
        Ok(TeamFilters {
            language: a.language,
            kind: a.kind,
            path_prefix: prefix.map(|p| p.trim_start_matches("./")),
            skip_repos: &[],
            commit: if with_repository { a.commit.as_deref().filter(|c| !c.is_empty()) } else { None },
            repo: if with_repository { a.repository.as_deref() } else { None },
            reader: self.reader,
        })
    }

    fn refuse(&self, why: &str) -> RemoteError {
        RemoteError::Refused(format!("{}: {why}", self.tool))
    }

    /// "No such repository or commit" without saying which of the two, or whether the
    /// repository exists: a token must not learn the names it may not read.
    fn not_found(&self, a: &Args) -> RemoteError {
        let what = a.repository.as_deref().unwrap_or("(none)");
        let at = [a.commit.as_deref(), a.base.as_deref(), a.head.as_deref()];
        let at: Vec<&str> = at.into_iter().flatten().collect();
        let at = if at.is_empty() { "its head".to_owned() } else { at.join(" or ") };
        self.refuse(&format!(
            "no published repository {what:?} at {at} that this token may read (a commit is an id, a prefix of \
             one, or a branch published from); `status` lists the repositories it may read"
        ))
    }
}

/// A reply of `text` and `data`, with `results` counted.
fn reply<T: Serialize>(text: String, data: &T, results: usize) -> Outcome {
    Ok(RemoteReply { text, data: serde_json::to_value(data).unwrap_or(Value::Null), is_error: false, results })
}

/// A commit as answers name it: its first 12 digits.
fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
