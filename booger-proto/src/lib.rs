//! Wire types and tool schemas shared by `boogerd` and the `booger` client.
//!
//! Both sides compile this crate, so it is the single source of truth for:
//! - where the daemon listens and keeps its data ([`paths`]),
//! - the framing and the booger-specific methods on the socket ([`wire`]),
//! - every tool's name, description and arguments ([`tools`]), from which the daemon derives
//!   `tools/list` and argument validation, and the client derives its command line,
//! - the shape of every tool's answer ([`outputs`]), published as its MCP `outputSchema`.
//!
//! This crate has no I/O beyond reading environment variables, and depends only on serde_json
//! (and libc, for the user id), so the thin client stays thin.

pub mod outputs;
pub mod paths;
pub mod tools;
pub mod wire;
