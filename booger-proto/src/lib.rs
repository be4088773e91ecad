//! Wire types and tool schemas shared by `boogerd` and the `booger` client.
//!
//! Both sides compile this crate, so it is the single source of truth for:
//! - where the daemon listens and keeps its data ([`paths`]),
//! - the framing and the booger-specific methods on the socket ([`wire`]),
//! - every tool's name, description and arguments ([`tools`]), from which the daemon derives
//!   `tools/list` and argument validation, and the client derives its command line,
//! - every tool's arguments as types ([`tools::args`]) and its answer as a type ([`answers`]),
//!   from which its MCP `outputSchema` is derived.
//!
//! This crate has no I/O beyond reading environment variables, and depends only on serde,
//! serde_json and schemars (and libc, for the user id), so the thin client stays thin.

pub mod answers;
pub mod paths;
pub mod remote;
pub mod tools;
pub mod wire;
