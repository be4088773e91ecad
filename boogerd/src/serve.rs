//! The daemon's entry point: the engine's shared state ([`Daemon`]) served over the local
//! socket and HTTP until a stop is asked for.

use std::future::Future;
use std::time::Duration;

use tokio::task::JoinSet;

use crate::base::sync::Recover;
use crate::engine::{Config, Daemon};
use crate::fronts::{Endpoint, rpc};

/// How long connections get to finish their in-flight requests after a stop is requested.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// Serves connections on `endpoint` until `shutdown` resolves or a `shutdown` request arrives,
/// then lets in-flight requests finish (bounded) and removes the socket.
pub async fn run(config: Config, endpoint: Endpoint, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
    let daemon = Daemon::new(config);
    // Catch up with changes made while the daemon was down, then follow every project.
    let roots: Vec<_> = daemon.registry.read().recover().projects().iter().map(|p| p.root.clone()).collect();
    for root in roots {
        daemon.follow(&root);
    }
    if let Some(addr) = daemon.config.http {
        let started =
            crate::fronts::http::start(daemon.clone(), addr, daemon.config.http_allow_remote, endpoint.runtime_dir())
                .await
                .map_err(|e| {
                    // The socket is booger's main door; without HTTP it still serves every client.
                    tracing::warn!(error = %e, "serving no HTTP");
                    e.to_string()
                });
        let _ = daemon.http.set(started);
    }
    let methods = rpc::methods(daemon.clone());
    let mut connections = JoinSet::new();
    // Idle projects are released (and freed heap trimmed) on one timer: a minute, or half the
    // idle time when that is shorter.
    let every = crate::base::memory::TRIM_EVERY.min(daemon.config.idle_release / 2).max(Duration::from_secs(1));
    let mut trim = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    trim.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stopped = daemon.stopped();
    tokio::pin!(shutdown, stopped);
    tracing::info!(pid = std::process::id(), version = env!("CARGO_PKG_VERSION"), "boogerd ready");
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            () = &mut stopped => break,
            accepted = endpoint.accept() => match accepted {
                Ok(conn) => {
                    connections.spawn(rpc::serve_connection(conn, methods.clone(), daemon.clone()));
                }
                Err(e) => {
                    // E.g. EMFILE: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            _ = trim.tick() => {
                let daemon = daemon.clone();
                tokio::task::spawn_blocking(move || daemon.release_idle());
            }
        }
    }
    tracing::info!("stopping");
    // Queued and running work stops first: runs are cancelled, connections stop reading and
    // get a moment to answer what is in flight. The index files are let go before the socket
    // and its lock, so a daemon started next never finds them still held.
    daemon.request_shutdown();
    daemon.projects.close_all();
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, async { while connections.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::warn!(open = connections.len(), "connections did not finish in time; closing them");
        connections.abort_all();
    }
    // Again: a call that was still running may have opened a store since.
    daemon.projects.close_all();
    drop(endpoint);
    tracing::info!("stopped");
    Ok(())
}
