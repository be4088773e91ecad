//! boogerd: the per-machine booger daemon.
//!
//! Layout (one module per concern):
//! - [`config`]: what the daemon was told (socket, data dir).
//! - [`endpoint`]: binding the local socket safely (0700 dir, 0600 socket, single-instance
//!   lock, stale-socket cleanup, peer uid check).
//! - [`daemon`]: the shared state and [`run`], the accept loop that main and tests both call.
//! - [`deadline`]: the time limit of a heavy call, which interrupts its SQLite statements.
//! - [`rpc`]: line framing, JSON-RPC validation, notifications and batches, dispatch.
//! - [`mcp`]: the MCP methods (`initialize`, `tools/*`, `resources/*`, `ping`).
//! - [`tools`]: one handler per tool of [`booger_proto::tools::TOOLS`].
//! - [`registry`]: the persisted list of projects.
//! - [`index`]: walk, change detection, chunking (pure), and the indexing run.
//! - [`project`]: per-project run-time state: open index, indexing lock, progress.
//! - [`search`]: query parsing, ranking and output modes with a token budget.
//! - [`store`]: the per-project SQLite index; the only module with SQL.
//! - [`embed`]: embeddings for semantic search (the static table tier so far).
//! - [`git`]: structural diffs between git snapshots (branch-diff, draft-commit, changelog).
//! - [`watch`]: following every project's files (notify) and applying changes in batches.

pub mod config;
pub mod daemon;
pub mod deadline;
pub mod embed;
pub mod endpoint;
pub mod git;
pub mod hints;
pub mod http;
pub mod index;
pub mod live;
pub mod mcp;
pub mod memory;
pub mod metrics;
pub mod project;
pub mod registry;
pub mod repo_file;
mod rng;
pub mod rpc;
pub mod search;
pub mod storage;
pub mod store;
pub mod text;
pub mod threads;
pub mod time;
pub mod tools;
pub mod watch;

pub use config::Config;
pub use daemon::{Daemon, run};
pub use endpoint::Endpoint;
