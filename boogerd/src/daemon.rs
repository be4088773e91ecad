//! The daemon's shared state and its accept loop.

use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::project::Projects;
use crate::registry::Registry;
use crate::{Config, Endpoint, rpc};

/// How long connections get to finish their in-flight requests after a stop is requested.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// Everything the daemon holds in memory, shared by all connections.
pub struct Daemon {
    pub config: Config,
    pub started: Instant,
    pub started_at: String,
    pub registry: RwLock<Registry>,
    pub projects: Arc<Projects>,
    pub watcher: Arc<crate::watch::Watcher>,
    /// Where HTTP is served, once it is (or why not).
    pub http: std::sync::OnceLock<Result<crate::http::Facts, String>>,
    stop: watch::Sender<bool>,
    /// Itself, for work a handler hands to a thread of its own (`eval`).
    me: std::sync::Weak<Daemon>,
}

impl Daemon {
    pub fn new(config: Config) -> Arc<Self> {
        let registry = Registry::load(&config.registry_file());
        let defaults = crate::index::Options { full: false, max_file_bytes: config.max_file_bytes };
        let embedding = if config.embed {
            match crate::embed::provider::open(&config.embedder, &config.data_dir) {
                Ok(tiers) => Some(crate::embed::Embedding::start(tiers)),
                Err(e) => {
                    tracing::error!(error = %e, "embeddings are off");
                    None
                }
            }
        } else {
            None
        };
        let projects = Arc::new(Projects::new(config.data_dir.clone(), defaults, embedding));
        for p in registry.projects().iter().filter(|p| p.in_repo) {
            projects.set_in_repo(&p.root, true);
        }
        let watcher = crate::watch::Watcher::new(defaults, config.max_watches, config.watch_timing, config.watch);
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            config,
            started: Instant::now(),
            started_at: crate::time::now_rfc3339(),
            registry: RwLock::new(registry),
            projects,
            watcher,
            http: std::sync::OnceLock::new(),
            stop: watch::channel(false).0,
        })
    }

    /// Keeps `root`'s index in step with its files from now on (first reconciling it with
    /// the disk); for a project already followed, asks for a re-walk.
    pub fn follow(&self, root: &std::path::Path) {
        self.watcher.follow(self.projects.get(root), false);
    }

    /// [`follow`](Self::follow) for a project an `index` call has just brought up to date.
    pub fn follow_indexed(&self, root: &std::path::Path) {
        self.watcher.follow(self.projects.get(root), true);
    }

    /// Gives back the memory of projects nobody asks about (and of the coldest ones while
    /// over the budget), then returns freed heap to the OS.
    pub fn release_idle(&self) {
        let r = self.projects.release_idle(self.config.idle_release, self.config.memory_budget);
        if r.projects > 0 {
            tracing::info!(projects = r.projects, mb = r.bytes >> 20, held_mb = r.held >> 20, "released idle projects");
        }
        if r.held == 0 {
            // No project holds a ranking index: neither do the score buffers queries share.
            crate::search::postings::release_scratch();
        }
        crate::memory::trim();
    }

    /// What the daemon holds: RSS, threads, the projects' warm structures and the budget.
    pub fn memory(&self) -> Value {
        let (rss, threads) = crate::memory::process().unwrap_or((0, 0));
        let (warm, warm_projects) = self.projects.resident();
        let (heap_used, heap_free, sqlite) = crate::memory::heap().unwrap_or((0, 0, 0));
        json!({
            "rss_bytes": rss,
            "heap_used_bytes": heap_used,
            "heap_free_bytes": heap_free,
            "sqlite_bytes": sqlite,
            "threads": threads,
            "warm_bytes": warm,
            "warm_projects": warm_projects,
            "budget_bytes": self.config.memory_budget,
            "idle_release_s": self.config.idle_release.as_secs(),
        })
    }

    /// A handle on the daemon that outlives the call holding `&self`.
    pub fn arc(&self) -> Arc<Daemon> {
        self.me.upgrade().expect("the daemon is alive while it is used")
    }

    /// Asks the accept loop and every connection to finish.
    pub fn request_shutdown(&self) {
        self.stop.send_replace(true);
    }

    /// Whether a shutdown has been requested.
    pub fn is_stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Resolves once a shutdown has been requested.
    pub fn stopped(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.stop.subscribe();
        async move {
            let _ = rx.wait_for(|stopped| *stopped).await;
        }
    }

    /// Facts about the daemon itself, for `daemon/status`, `status` and `booger://status`.
    pub fn facts(&self) -> Value {
        let projects = self.registry.read().expect("registry lock").projects().to_vec();
        json!({
            "pid": std::process::id(),
            "version": env!("CARGO_PKG_VERSION"),
            "protocol": booger_proto::wire::PROTOCOL_VERSION,
            "started_at": self.started_at,
            "uptime_s": self.started.elapsed().as_secs(),
            "socket": self.config.socket,
            "data_dir": self.config.data_dir,
            "log_file": booger_proto::paths::log_file(&self.config.data_dir),
            "projects": projects,
            "memory": self.memory(),
            "http_url": self.http.get().and_then(|h| h.as_ref().ok()).map(|h| &h.url),
            "http_token_file": self.http.get().and_then(|h| h.as_ref().ok()).map(|h| &h.token_file),
            "http_problem": self.http.get().and_then(|h| h.as_ref().err()),
            "embeddings": self.projects.embedding().map(|e| json!({
                "tiers": e.model_ids(),
                "problem": e.problem,
            })),
        })
    }
}

/// Serves connections on `endpoint` until `shutdown` resolves or a `shutdown` request arrives,
/// then lets in-flight requests finish (bounded) and removes the socket.
pub async fn run(config: Config, endpoint: Endpoint, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
    let daemon = Daemon::new(config);
    // Catch up with changes made while the daemon was down, then follow every project.
    let roots: Vec<_> =
        daemon.registry.read().expect("registry lock").projects().iter().map(|p| p.root.clone()).collect();
    for root in roots {
        daemon.follow(&root);
    }
    if let Some(addr) = daemon.config.http {
        let started = crate::http::start(daemon.clone(), addr, daemon.config.http_allow_remote, endpoint.socket())
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
    let every = crate::memory::TRIM_EVERY.min(daemon.config.idle_release / 2).max(Duration::from_secs(1));
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
