//! The ways in: the local socket's line-framed JSON-RPC ([`rpc`], bound by [`endpoint`]),
//! the MCP methods on it ([`mcp`]), and HTTP ([`http`]). Each turns a request into a tool
//! call or a status read, and nothing more.

pub(crate) mod connection;
pub(crate) mod endpoint;
pub(crate) mod hook;
pub(crate) mod http;
pub(crate) mod mcp;
pub mod rpc;
#[cfg(feature = "team")]
pub mod team;

pub use endpoint::Endpoint;
