//! The daemon's HTTP face (axum): `/health` for anyone on the machine, and behind a token
//! `/metrics` (Prometheus text), `/api/status` and the status page `/`.
//!
//! Invariants:
//! - Loopback only, unless told otherwise (`--http-allow-remote`): loopback is shared by
//!   every user of the machine, so everything but `/health` needs the token, which only the
//!   daemon's user can read (`http.token`, 0600, beside the socket in its 0700 directory; a
//!   new one at every start). It is accepted as `Authorization: Bearer`, or as a cookie that
//!   `/?token=…` sets (the URL `booger dashboard` prints).
//! - A request whose `Host` is not this loopback address, or whose `Origin` is another site,
//!   is refused: a web page the user visits must not reach the daemon through DNS rebinding.
//! - HTTP is a front like `rpc/` and `mcp/`: it reads the same daemon state and never runs a
//!   tool a second way.

mod events;
pub(crate) mod guard;
pub(crate) mod listener;
mod mcp;
mod overview;
mod pages;
mod prometheus;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

use crate::engine::Daemon;
use crate::engine::daemon::HttpFacts;

/// The token file, in the socket's directory.
pub(crate) const TOKEN_FILE: &str = "http.token";

#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    #[error(
        "refusing to serve HTTP on {0}: it is not a loopback address, and every page but /health shows \
         your code; pass --http-allow-remote if you mean it"
    )]
    NotLoopback(SocketAddr),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("cannot write the HTTP token {path}: {source}")]
    Token { path: PathBuf, source: std::io::Error },
}

/// Shared by the handlers.
pub(crate) struct State {
    pub daemon: Arc<Daemon>,
    pub token: String,
    /// The `host:port` a browser sends as `Host` (loopback spellings of it are accepted).
    pub port: u16,
    /// The method table the socket serves: `/mcp` answers with it.
    pub methods: crate::fronts::rpc::Methods,
    pub mcp: mcp::Sessions,
}

/// Binds `addr`, writes a fresh token into the private folder `dir` and serves until the
/// daemon stops.
pub(crate) async fn start(
    daemon: Arc<Daemon>,
    addr: SocketAddr,
    allow_remote: bool,
    dir: &Path,
) -> Result<HttpFacts, HttpError> {
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(HttpError::NotLoopback(addr));
    }
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|source| HttpError::Bind { addr, source })?;
    let bound = listener.local_addr().map_err(|source| HttpError::Bind { addr, source })?;
    let token_file = dir.join(TOKEN_FILE);
    let token = guard::new_token();
    guard::write_private(&token_file, &token)
        .map_err(|source| HttpError::Token { path: token_file.clone(), source })?;
    let state = Arc::new(State {
        daemon: daemon.clone(),
        token,
        port: bound.port(),
        methods: crate::fronts::rpc::methods(daemon.clone()),
        mcp: mcp::Sessions::new(mcp::LIMITS),
    });
    let app = Router::new()
        .route("/health", get(pages::health))
        .route("/metrics", get(prometheus::metrics))
        .route("/api/status", get(pages::status_json))
        .route("/api/events", get(events::events))
        .route("/api/projects/{name}/index", post(pages::reindex))
        .route("/mcp", post(mcp::post).get(mcp::get).delete(mcp::delete))
        .route("/", get(pages::index))
        // A message as long as one the socket takes.
        .layer(DefaultBodyLimit::max(crate::fronts::rpc::MAX_LINE))
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard::check))
        .with_state(state);
    let stopped = daemon.stopped();
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener::Bounded::new(listener, listener::Limits::default()), app)
            .with_graceful_shutdown(stopped)
            .await
        {
            tracing::warn!(error = %e, "HTTP server stopped");
        }
    });
    let url = format!("http://{bound}");
    tracing::info!(%url, "serving HTTP");
    Ok(HttpFacts { url, token_file })
}
