//! The method table: booger's own methods and the MCP methods, registered with jsonrpsee.
//!
//! Handlers here are thin adapters; the work happens in [`crate::fronts::mcp`], [`crate::tools`] and
//! [`crate::engine::Daemon`]. Per-connection state ([`Connection`]) arrives through jsonrpsee's
//! extensions, inserted by the connection loop.

use std::path::PathBuf;
use std::sync::Arc;

use booger_proto::wire::{self, PROTOCOL_VERSION, code};
use jsonrpsee::types::{ErrorObjectOwned, Params};
use jsonrpsee::{Extensions, Methods, RpcModule};
use serde_json::{Value, json};

use crate::base::sync::Recover;
use crate::fronts::connection::Connection;
use crate::{engine::Daemon, fronts::mcp, tools};

type RpcResult = Result<Value, ErrorObjectOwned>;

pub fn methods(daemon: Arc<Daemon>) -> Methods {
    let mut m = RpcModule::new(daemon);
    booger_methods(&mut m);
    mcp_methods(&mut m);
    m.into()
}

fn register<T>(r: Result<T, jsonrpsee::core::RegisterMethodError>) {
    r.map(drop).expect("method names are unique");
}

/// booger's own methods: hello, calls, progress, hooks, the daemon's facts and its stop.
fn booger_methods(m: &mut RpcModule<Arc<Daemon>>) {
    register(m.register_method(wire::HELLO, |p, _, ext| hello(&params(&p), connection(ext))).map(drop));
    register(m.register_method(wire::DAEMON_STATUS, |_, d, _| Ok::<_, ErrorObjectOwned>(d.facts())).map(drop));
    register(
        m.register_method(wire::PROGRESS, |p, _, _| {
            let token = params(&p).get("token").and_then(Value::as_str).map(str::to_owned).unwrap_or_default();
            Ok::<_, ErrorObjectOwned>(serde_json::to_value(tools::progress_of(&token)).unwrap_or(Value::Null))
        })
        .map(drop),
    );
    register(
        m.register_method(wire::SHUTDOWN, |_, d, _| {
            tracing::info!("shutdown requested by a client");
            d.request_shutdown();
            Ok::<_, ErrorObjectOwned>(json!({}))
        })
        .map(drop),
    );
    register(
        m.register_async_method(wire::CALL, |p, d, ext| async move {
            let p = params(&p);
            let name = p.get("tool").and_then(Value::as_str).unwrap_or_default().to_owned();
            let args = p.get("arguments").cloned().unwrap_or(Value::Null);
            let token = p.get("progress").and_then(Value::as_str).map(str::to_owned);
            let session = connection(&ext).session();
            let reply = tools::call(Arc::clone(&d), session, &name, args, token)
                .await
                .map_err(|e| mcp::invalid_params(e.to_string()))?;
            RpcResult::Ok(reply.to_json())
        })
        .map(drop),
    );

    register(
        m.register_async_method(wire::HOOK, |p, d, _| async move {
            let p = params(&p);
            let client = p.get("client").and_then(Value::as_str).unwrap_or_default().to_owned();
            let output = crate::fronts::hook::answer(Arc::clone(&d), &client, &p["event"]).await;
            RpcResult::Ok(json!({ "output": output }))
        })
        .map(drop),
    );
}

/// MCP's methods, over the same connection.
fn mcp_methods(m: &mut RpcModule<Arc<Daemon>>) {
    register(m.register_method("initialize", |p, _, ext| mcp::initialize(&params(&p), connection(ext))).map(drop));
    for note in ["notifications/initialized", "notifications/cancelled", "notifications/roots/list_changed"] {
        register(m.register_method(note, |_, _, _| Ok::<_, ErrorObjectOwned>(Value::Null)).map(drop));
    }
    register(m.register_method("ping", |_, _, _| Ok::<_, ErrorObjectOwned>(json!({}))).map(drop));
    register(
        m.register_method("tools/list", |_, _, ext| {
            let profile = *connection(ext).tools.lock().recover();
            Ok::<_, ErrorObjectOwned>(mcp::tools_list(profile))
        })
        .map(drop),
    );
    register(
        m.register_async_method("tools/call", |p, d, ext| async move {
            mcp::tools_call(params(&p), Arc::clone(&d), connection(&ext)).await
        })
        .map(drop),
    );
    register(m.register_method("resources/list", |_, _, _| Ok::<_, ErrorObjectOwned>(mcp::resources_list())).map(drop));
    register(
        m.register_method("resources/templates/list", |_, _, _| {
            Ok::<_, ErrorObjectOwned>(json!({ "resourceTemplates": [] }))
        })
        .map(drop),
    );
    register(m.register_method("resources/read", |p, d, _| mcp::resources_read(&params(&p), d)).map(drop));
    // No prompts: booger's guidance lives in the tool descriptions and `instructions`. Clients
    // that list prompts on connect get an empty list, not "Method not found".
    register(
        m.register_method("prompts/list", |_, _, _| Ok::<_, ErrorObjectOwned>(json!({ "prompts": [] }))).map(drop),
    );
}

/// The params as one JSON value (`null` when absent).
fn params(p: &Params) -> Value {
    p.parse::<Value>().unwrap_or(Value::Null)
}

fn connection(ext: &Extensions) -> &Connection {
    ext.get::<Arc<Connection>>().expect("the connection loop inserts its Connection")
}

/// `booger/hello`: checks the protocol version and sets the connection's session.
fn hello(p: &Value, conn: &Connection) -> RpcResult {
    let theirs = p.get("protocol").and_then(Value::as_u64);
    if theirs != Some(u64::from(PROTOCOL_VERSION)) {
        let theirs = theirs.map_or_else(|| "none".to_owned(), |v| v.to_string());
        return Err(ErrorObjectOwned::owned(
            code::PROTOCOL_MISMATCH as i32,
            format!(
                "protocol mismatch: this client speaks booger protocol {theirs}, the running boogerd {} speaks {PROTOCOL_VERSION}. \
                 Restart the daemon from the same installation: `booger daemon stop`, then run booger again",
                env!("CARGO_PKG_VERSION")
            ),
            Some(json!({ "daemon_protocol": PROTOCOL_VERSION, "daemon_version": env!("CARGO_PKG_VERSION") })),
        ));
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
