//! A connection's state, shared by every front it arrives through: who is calling (the
//! [`Session`] a `booger/hello` sets), the MCP revision agreed in `initialize` and the tools
//! `tools/list` shows. The socket's framing ([`super::rpc`]), the MCP methods
//! ([`super::mcp`]) and MCP over HTTP all reach it; it reaches none of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::base::sync::Recover;
use crate::tools::Session;

/// Per-connection state, handed to every method the connection calls.
pub(crate) struct Connection {
    pub id: u64,
    pub session: std::sync::RwLock<Session>,
    /// The MCP revision agreed in `initialize`, if the peer is an MCP client.
    pub mcp_version: std::sync::Mutex<Option<String>>,
    /// The tools `tools/list` shows (`booger mcp --tools`).
    pub tools: std::sync::Mutex<booger_proto::tools::Profile>,
}

impl Connection {
    /// A new connection's state: its own id and session.
    pub(crate) fn new(session: impl FnOnce(u64) -> Session) -> Arc<Self> {
        let id = NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed);
        Arc::new(Connection {
            id,
            session: std::sync::RwLock::new(session(id)),
            mcp_version: std::sync::Mutex::new(None),
            tools: std::sync::Mutex::new(booger_proto::tools::Profile::default()),
        })
    }

    pub(crate) fn session(&self) -> Session {
        self.session.read().recover().clone()
    }
}

static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);
