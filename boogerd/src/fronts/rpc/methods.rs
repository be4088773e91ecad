//! The method table: booger's own methods and the MCP methods, by name.
//!
//! Handlers here are thin adapters; the work happens in [`crate::fronts::mcp`], [`crate::tools`] and
//! [`crate::engine::Daemon`]. Each gets the call's params (null when absent), the daemon and the
//! connection the call arrived on ([`Connection`]).

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use booger_proto::wire::{self, PROTOCOL_VERSION, RpcError, code};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use crate::base::sync::Recover;
use crate::fronts::connection::Connection;
use crate::{engine::Daemon, fronts::mcp, tools};

pub(super) type RpcResult = Result<Value, RpcError>;

type Handler = Box<dyn Fn(Value, Arc<Daemon>, Arc<Connection>) -> BoxFuture<'static, RpcResult> + Send + Sync>;

/// Every method by name, with the daemon they serve; cheap to clone.
#[derive(Clone)]
pub struct Methods {
    daemon: Arc<Daemon>,
    table: Arc<HashMap<&'static str, Handler>>,
}

impl Methods {
    /// Runs `method` with `params` for `connection`; `None` when there is no such method.
    pub(crate) async fn call(&self, method: &str, params: Value, connection: &Arc<Connection>) -> Option<RpcResult> {
        let handler = self.table.get(method)?;
        Some(handler(params, Arc::clone(&self.daemon), Arc::clone(connection)).await)
    }
}

pub fn methods(daemon: Arc<Daemon>) -> Methods {
    let mut table = Table::default();
    booger_methods(&mut table);
    mcp_methods(&mut table);
    Methods { daemon, table: Arc::new(table.0) }
}

#[derive(Default)]
struct Table(HashMap<&'static str, Handler>);

impl Table {
    /// A method that answers at once.
    fn now(
        &mut self,
        name: &'static str,
        f: impl Fn(&Value, &Daemon, &Connection) -> RpcResult + Send + Sync + 'static,
    ) {
        self.insert(name, Box::new(move |p, d, c| Box::pin(std::future::ready(f(&p, &d, &c)))));
    }

    /// A method that awaits its answer.
    fn later<F, Fut>(&mut self, name: &'static str, f: F)
    where
        F: Fn(Value, Arc<Daemon>, Arc<Connection>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = RpcResult> + Send + 'static,
    {
        self.insert(name, Box::new(move |p, d, c| Box::pin(f(p, d, c))));
    }

    fn insert(&mut self, name: &'static str, handler: Handler) {
        assert!(self.0.insert(name, handler).is_none(), "method names are unique: {name}");
    }
}

/// booger's own methods: hello, calls, progress, hooks, the daemon's facts and its stop.
fn booger_methods(m: &mut Table) {
    m.now(wire::HELLO, |p, _, conn| hello(p, conn));
    m.now(wire::DAEMON_STATUS, |_, d, _| Ok(serde_json::to_value(d.facts()).unwrap_or(Value::Null)));
    m.now(wire::PROGRESS, |p, _, _| {
        let token = p.get("token").and_then(Value::as_str).unwrap_or_default();
        Ok(serde_json::to_value(tools::progress_of(token)).unwrap_or(Value::Null))
    });
    m.now(wire::SHUTDOWN, |_, d, _| {
        tracing::info!("shutdown requested by a client");
        d.request_shutdown();
        Ok(json!({}))
    });
    m.later(wire::CALL, |p, d, conn| async move {
        let name = p.get("tool").and_then(Value::as_str).unwrap_or_default().to_owned();
        let args = p.get("arguments").cloned().unwrap_or(Value::Null);
        let token = p.get("progress").and_then(Value::as_str).map(str::to_owned);
        let reply =
            tools::call(d, conn.session(), &name, args, token).await.map_err(|e| mcp::invalid_params(e.to_string()))?;
        Ok(reply.to_json())
    });
    m.later(wire::HOOK, |p, d, _| async move {
        let client = p.get("client").and_then(Value::as_str).unwrap_or_default().to_owned();
        let output = crate::fronts::hook::answer(d, &client, &p["event"]).await;
        Ok(json!({ "output": output }))
    });
}

/// MCP's methods, over the same connection.
fn mcp_methods(m: &mut Table) {
    m.now("initialize", |p, _, conn| mcp::initialize(p, conn));
    for note in ["notifications/initialized", "notifications/cancelled", "notifications/roots/list_changed"] {
        m.now(note, |_, _, _| Ok(Value::Null));
    }
    m.now("ping", |_, _, _| Ok(json!({})));
    m.now("tools/list", |_, _, conn| Ok(mcp::tools_list(*conn.tools.lock().recover())));
    m.later("tools/call", |p, d, conn| async move { mcp::tools_call(p, d, &conn).await });
    m.now("resources/list", |_, _, _| Ok(mcp::resources_list()));
    m.now("resources/templates/list", |_, _, _| Ok(json!({ "resourceTemplates": [] })));
    m.now("resources/read", |p, d, _| mcp::resources_read(p, d));
    // No prompts: booger's guidance lives in the tool descriptions and `instructions`. Clients
    // that list prompts on connect get an empty list, not "Method not found".
    m.now("prompts/list", |_, _, _| Ok(json!({ "prompts": [] })));
}

/// `booger/hello`: checks the protocol version and sets the connection's session.
fn hello(p: &Value, conn: &Connection) -> RpcResult {
    let theirs = p.get("protocol").and_then(Value::as_u64);
    if theirs != Some(u64::from(PROTOCOL_VERSION)) {
        let theirs = theirs.map_or_else(|| "none".to_owned(), |v| v.to_string());
        return Err(RpcError::new(
            code::PROTOCOL_MISMATCH,
            format!(
                "protocol mismatch: this client speaks booger protocol {theirs}, the running boogerd {} speaks {PROTOCOL_VERSION}. \
                 Restart the daemon from the same installation: `booger daemon stop`, then run booger again",
                env!("CARGO_PKG_VERSION")
            ),
        )
        .with_data(json!({ "daemon_protocol": PROTOCOL_VERSION, "daemon_version": env!("CARGO_PKG_VERSION") })));
    }
    if let Some(spec) = p.get("tools").and_then(Value::as_str) {
        let profile = booger_proto::tools::Profile::parse(spec).map_err(mcp::invalid_params)?;
        *conn.tools.lock().recover() = profile;
    }
    {
        let mut session = conn.session.write().recover();
        if let Some(id) = p.get("session").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            session.id = id.to_owned();
        }
        if let Some(dir) = p.get("project").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            session.project = Some(PathBuf::from(dir));
        }
        session.register = p.get("register").and_then(Value::as_bool).unwrap_or(false);
        session.shell = p.get("client").and_then(Value::as_str) == Some(wire::SHELL_CLIENT);
        tracing::debug!(connection = conn.id, session = %session.id, client = ?p.get("client"), "hello");
    }
    Ok(json!({ "protocol": PROTOCOL_VERSION, "version": env!("CARGO_PKG_VERSION"), "pid": std::process::id() }))
}
