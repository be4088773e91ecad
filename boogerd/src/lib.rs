//! boogerd: the per-machine booger daemon.
//!
//! The modules are layers, each using only those below it (`tests/it/layers.rs` holds this,
//! allowing at most two exceptions named in ARCHITECTURE.md; there are none). The codemap is
//! in ARCHITECTURE.md:
//!
//! - [`serve`]: the daemon's entry point: binds the fronts over the engine and runs them.
//! - [`fronts`]: the ways in: the local socket ([`fronts::rpc`]), MCP, HTTP.
//! - [`tools`]: one handler per tool of the catalogue, and the one dispatch path.
//! - [`engine`]: what runs: projects, indexing runs, the watcher, embedding passes.
//! - [`domain`]: what booger knows how to do: search, git, embeddings.
//! - [`store`]: the per-project SQLite index; the only module with SQL.
//! - [`source`]: the pure model of a repository's files: chunks, languages, hashes.
//! - [`base`]: helpers every layer may use (time, text, threads, memory, data directory).

// Nothing in the daemon prints to stdout: logs go to stderr through tracing, and a stray
// print would corrupt a protocol stream (`booger mcp` pumps the socket to an agent's stdio).
#![warn(clippy::print_stdout)]
// Public is only what the daemon's binary, the tests, benchmarks and fuzz targets reach (the
// modules along those paths are `pub`); everything else is `pub(crate)`, and this lint
// refuses a `pub` item nothing outside can reach.
#![warn(unreachable_pub)]

pub mod base;
pub mod domain;
pub mod engine;
pub mod fronts;
pub mod serve;
pub mod source;
pub mod store;
pub(crate) mod tools;

pub use engine::{Config, Daemon};
pub use fronts::Endpoint;
pub use serve::run;
