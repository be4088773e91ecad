//! The team server (`boogerd --serve-team ADDR`): the team index served over MCP Streamable
//! HTTP to agents on other machines, each through a token of its own.
//!
//! Invariants:
//! - Only read-only tools, on published repositories (`tools::remote`); nothing reads this
//!   machine's disk or writes anything but the audit.
//! - Every request but `/health` needs a live token (`Authorization: Bearer`); what it may read
//!   is checked by every query in SQL, so a revoked token reads nothing from its next
//!   statement on, and a cached check lives [`access::FRESH`] at most.
//! - A session (`Mcp-Session-Id`) belongs to the token that opened it; another token's
//!   request with its id is told there is no such session.
//! - Calls a minute per token, a 429 with `Retry-After` past them; at most as many calls at
//!   once as there are connections to the team index, and half of them for one token; token
//!   checks on a connection kept for them; bodies as large as the socket takes; connections
//!   bounded and timed as on the local face, and per client address.
//! - `/metrics` only with its own secret; a refusal to a caller without a live token names
//!   nothing of the server behind.
//! - A browser page (an `Origin` header) is refused unless its origin is allowed
//!   (`--team-origin`): tokens are for agents, not for pages a user happens to visit.

mod access;
mod mcp;
mod metrics;
mod tls;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::base::sync::Recover;
use crate::engine::team_pool::TeamPool;
use crate::fronts::http::listener::{Bounded, Limits};
use crate::store::team::Audited;

/// Connections to the team index, and so calls answered at once.
pub const DEFAULT_CONNECTIONS: u32 = 8;
/// Connections served at once: fifty agents with a few each, and room for idle ones.
const MAX_CLIENT_CONNECTIONS: usize = 2048;
/// Connections served at once from one client address: an eighth, so that a flood from one
/// address (before any token is checked) leaves most of them to others. (Behind a reverse
/// proxy every client shares the proxy's address: size the proxy's own limits.)
const PER_ADDRESS_CONNECTIONS: usize = MAX_CLIENT_CONNECTIONS / 8;
/// How often the audit is written (in one statement for all calls since the last write).
const AUDIT_EVERY: Duration = Duration::from_secs(1);
/// Calls kept for the audit while the team index cannot take them; older ones are dropped.
const AUDIT_BACKLOG: usize = 100_000;

/// What `--serve-team` was told.
#[derive(Debug, Clone)]
pub struct Options {
    pub addr: SocketAddr,
    pub url: String,
    /// Origins whose pages may call (`https://app.example`); none by default.
    pub origins: Vec<String>,
    pub connections: u32,
    /// A PEM certificate chain and its private key: TLS on this listener (else plain HTTP,
    /// for a reverse proxy or a private network).
    pub tls: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// The bearer secret `/metrics` asks for (`BOOGER_TEAM_METRICS_TOKEN`); none: no
    /// `/metrics`. Not the peer's address: behind a reverse proxy on the same host, every
    /// peer is loopback.
    pub metrics_token: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("TLS: {0}")]
    Tls(#[from] tls::TlsError),
}

/// Shared by the handlers.
pub(crate) struct Shared {
    pool: Arc<TeamPool>,
    /// A connection kept for checking tokens when calls hold every pooled one: they do not
    /// keep another token's check waiting (a free pooled one is taken first, so the server
    /// runs no more processes than calls need).
    token_pool: Arc<TeamPool>,
    /// Calls each token has running: at most [`Shared::per_token`] at once.
    in_flight: access::InFlight,
    per_token: usize,
    metrics_token: Option<String>,
    tokens: access::Tokens,
    limits: access::Limits,
    sessions: mcp::Sessions,
    metrics: metrics::Calls,
    audit: Mutex<Vec<Audited>>,
    /// Calls running at once: one per connection to the team index.
    running: tokio::sync::Semaphore,
    origins: Vec<String>,
}

/// Binds `options.addr` and serves until `stopped`; the address bound is returned as soon as
/// the server listens (the rest runs on its own task).
pub async fn serve(
    options: Options,
    stopped: impl Future<Output = ()> + Send + 'static,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), ServeError> {
    let addr = options.addr;
    // A bad certificate or key is said before anything listens.
    let acceptor = options.tls.as_ref().map(|(cert, key)| tls::acceptor(cert, key)).transpose()?;
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })?;
    let bound = listener.local_addr().map_err(|source| ServeError::Bind { addr, source })?;
    let pool = Arc::new(TeamPool::new(&options.url, options.connections));
    let connections = options.connections.max(1) as usize;
    let shared = Arc::new(Shared {
        pool: pool.clone(),
        token_pool: Arc::new(TeamPool::new(&options.url, 1)),
        in_flight: access::InFlight::default(),
        // Half the connections: one token's slow calls leave the other half to the rest.
        per_token: connections.div_ceil(2),
        metrics_token: options.metrics_token,
        tokens: access::Tokens::default(),
        limits: access::Limits::default(),
        sessions: mcp::Sessions::new(mcp::LIMITS),
        metrics: metrics::Calls::default(),
        audit: Mutex::default(),
        running: tokio::sync::Semaphore::new(connections),
        origins: options.origins,
    });
    let app = Router::new()
        .route("/mcp", get(mcp::get).post(mcp::post).delete(mcp::delete))
        .layer(axum::middleware::from_fn_with_state(shared.clone(), access::check))
        .route("/health", get(health))
        .route("/metrics", get(prometheus))
        .layer(DefaultBodyLimit::max(crate::fronts::rpc::MAX_LINE))
        .with_state(shared.clone());
    let limits =
        Limits { connections: MAX_CLIENT_CONNECTIONS, per_address: PER_ADDRESS_CONNECTIONS, ..Limits::default() };
    tokio::spawn(write_audit(shared.clone()));
    let bounded = Bounded::new(listener, limits);
    let scheme = if acceptor.is_some() { "https" } else { "http" };
    let task = tokio::spawn(async move {
        let made = app.into_make_service();
        let served = match acceptor {
            Some(acceptor) => match tls::TlsListener::new(bounded, acceptor) {
                Ok(l) => axum::serve(l, made).with_graceful_shutdown(stopped).await,
                Err(e) => Err(e),
            },
            None => axum::serve(bounded, made).with_graceful_shutdown(stopped).await,
        };
        if let Err(e) = served {
            tracing::warn!(error = %e, "team server stopped");
        }
        flush_audit(&shared).await;
    });
    tracing::info!(url = %format!("{scheme}://{bound}/mcp"), team_index = %pool.server(), "serving the team index");
    Ok((bound, task))
}

/// `/health`: up, with its connections to the team index (no query of its own, and nothing
/// that names the database: anyone may ask this, as often as they like).
async fn health(State(s): State<Arc<Shared>>) -> Response {
    let (open, idle) = s.pool.state();
    axum::Json(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "team_index": { "connections": open, "idle": idle },
    }))
    .into_response()
}

/// `/metrics`: calls and latencies per token and tool, refusals; to whoever holds the
/// metrics secret (it names the tokens), and to nobody when none is set.
async fn prometheus(State(s): State<Arc<Shared>>, headers: axum::http::HeaderMap) -> Response {
    let Some(wanted) = s.metrics_token.as_deref() else {
        let why = "/metrics is off: start the team server with BOOGER_TEAM_METRICS_TOKEN set, and send it as a bearer token\n";
        return (StatusCode::NOT_FOUND, why).into_response();
    };
    let given = crate::fronts::http::guard::bearer(&headers).unwrap_or_default();
    if !crate::base::secret::same(&given, wanted) {
        return (StatusCode::UNAUTHORIZED, "/metrics needs the metrics token as `Authorization: Bearer`\n")
            .into_response();
    }
    let (open, idle) = s.pool.state();
    let text = s.metrics.render(open, idle, s.sessions.len());
    ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

/// Writes the calls made since the last write, every [`AUDIT_EVERY`].
async fn write_audit(s: Arc<Shared>) {
    loop {
        tokio::time::sleep(AUDIT_EVERY).await;
        flush_audit(&s).await;
        if Arc::strong_count(&s) == 1 {
            return; // the server is gone
        }
    }
}

async fn flush_audit(s: &Arc<Shared>) {
    let calls = std::mem::take(&mut *s.audit.lock().recover());
    if calls.is_empty() {
        return;
    }
    let pool = s.pool.clone();
    let written = tokio::task::spawn_blocking(move || {
        let result = pool.get().map_err(|e| e.to_string()).and_then(|mut t| t.audit(&calls).map_err(|e| e.to_string()));
        result.map_err(|e| (e, calls))
    })
    .await;
    if let Ok(Err((why, calls))) = written {
        tracing::warn!(error = %why, calls = calls.len(), "audit not written yet");
        let mut kept = s.audit.lock().recover();
        let mut calls = calls;
        calls.append(&mut kept);
        let over = calls.len().saturating_sub(AUDIT_BACKLOG);
        calls.drain(..over);
        *kept = calls;
    }
}
