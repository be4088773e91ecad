//! The daemon's shared state: what every connection and background thread reaches.

use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use booger_proto::answers::{DaemonFacts, EmbeddingTiers, Memory};
use tokio::sync::watch;

use super::Config;
use crate::base::sync::Recover;
use crate::engine::project::Projects;
use crate::engine::registry::{Project, Registry};

/// What clients learn about the HTTP face (`daemon/status`), once it is served.
#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct HttpFacts {
    pub(crate) url: String,
    pub(crate) token_file: std::path::PathBuf,
}

/// Everything the daemon holds in memory, shared by all connections.
pub struct Daemon {
    pub(crate) config: Config,
    pub(crate) started: Instant,
    pub(crate) started_at: String,
    pub(crate) registry: RwLock<Registry>,
    pub(crate) projects: Arc<Projects>,
    pub(crate) watcher: Arc<crate::engine::watch::Watcher>,
    /// Where HTTP is served, once it is (or why not).
    pub(crate) http: std::sync::OnceLock<Result<HttpFacts, String>>,
    /// The team index, when one is configured.
    #[cfg(feature = "team")]
    pub(crate) team: Option<crate::engine::team::TeamLink>,
    stop: watch::Sender<bool>,
    /// Itself, for work a handler hands to a thread of its own (`eval`).
    me: std::sync::Weak<Daemon>,
}

impl Daemon {
    pub fn new(config: Config) -> Arc<Self> {
        let registry = Registry::load(&config.registry_file());
        let defaults = crate::engine::index::Options { full: false, max_file_bytes: config.max_file_bytes };
        let embedding = if config.embed {
            match crate::domain::embed::provider::open(&config.embedder, &config.data_dir) {
                Ok(tiers) => Some(crate::engine::project::Embedding::start(tiers)),
                Err(e) => {
                    tracing::error!(error = %e, "embeddings are off");
                    None
                }
            }
        } else {
            None
        };
        let projects = Arc::new(Projects::new(config.data_dir.clone(), defaults, embedding, config.team_url.clone()));
        for p in registry.projects().iter().filter(|p| p.in_repo) {
            projects.set_in_repo(&p.root, true);
        }
        let watcher =
            crate::engine::watch::Watcher::new(defaults, config.max_watches, config.watch_timing, config.watch);
        #[cfg(feature = "team")]
        let team = config.team_url.clone().map(crate::engine::team::TeamLink::new);
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            #[cfg(feature = "team")]
            team,
            config,
            started: Instant::now(),
            started_at: crate::base::time::now_rfc3339(),
            registry: RwLock::new(registry),
            projects,
            watcher,
            http: std::sync::OnceLock::new(),
            stop: watch::channel(false).0,
        })
    }

    /// Keeps `root`'s index in step with its files from now on (first reconciling it with
    /// the disk); for a project already followed, asks for a re-walk.
    pub(crate) fn follow(&self, root: &std::path::Path) {
        self.watcher.follow(self.projects.get(root), false);
    }

    /// [`follow`](Self::follow) for a project an `index` call has just brought up to date.
    pub(crate) fn follow_indexed(&self, root: &std::path::Path) {
        self.watcher.follow(self.projects.get(root), true);
    }

    /// Gives back the memory of projects nobody asks about (and of the coldest ones while
    /// over the budget), then returns freed heap to the OS.
    pub(crate) fn release_idle(&self) {
        let r = self.projects.release_idle(self.config.idle_release, self.config.memory_budget);
        if r.projects > 0 {
            tracing::info!(projects = r.projects, mb = r.bytes >> 20, held_mb = r.held >> 20, "released idle projects");
        }
        if r.held == 0 {
            // No project holds a ranking index: neither do the score buffers queries share,
            // nor the static embedding table's unpacked rows.
            crate::domain::search::ranking_index::release_scratch();
            crate::domain::embed::static_table::release_rows();
        }
        crate::base::memory::trim();
    }

    /// What the daemon holds: RSS, threads, the projects' warm structures and the budget.
    pub(crate) fn memory(&self) -> Memory {
        let (rss, threads) = crate::base::memory::process().unwrap_or((0, 0));
        let (warm, warm_projects) = self.projects.resident();
        let (heap_used, heap_free, sqlite) = crate::base::memory::heap().unwrap_or((0, 0, 0));
        Memory {
            rss_bytes: rss,
            heap_used_bytes: heap_used,
            heap_free_bytes: heap_free,
            sqlite_bytes: sqlite,
            threads,
            warm_bytes: warm as u64,
            warm_projects: warm_projects as u64,
            budget_bytes: self.config.memory_budget as u64,
            idle_release_s: self.config.idle_release.as_secs(),
        }
    }

    /// A handle on the daemon that outlives the call holding `&self`.
    pub(crate) fn arc(&self) -> Arc<Daemon> {
        self.me.upgrade().expect("the daemon is alive while it is used")
    }

    /// Asks the accept loop and every connection to finish.
    pub(crate) fn request_shutdown(&self) {
        self.stop.send_replace(true);
    }

    /// Whether a shutdown has been requested.
    pub fn is_stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Resolves once a shutdown has been requested.
    pub(crate) fn stopped(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.stop.subscribe();
        async move {
            let _ = rx.wait_for(|stopped| *stopped).await;
        }
    }

    /// Facts about the daemon itself, for `daemon/status`, `status` and `booger://status`.
    pub(crate) fn facts(&self) -> DaemonFacts<Project> {
        let projects = self.registry.read().recover().projects().to_vec();
        let http = self.http.get();
        let daemon = booger_proto::answers::Daemon {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            protocol: booger_proto::wire::PROTOCOL_VERSION,
            started_at: self.started_at.clone(),
            uptime_s: self.started.elapsed().as_secs(),
            socket: self.config.socket.clone(),
            data_dir: self.config.data_dir.clone(),
            log_file: booger_proto::paths::log_file(&self.config.data_dir),
            memory: self.memory(),
            http_url: http.and_then(|h| h.as_ref().ok()).map(|h| h.url.clone()),
            http_token_file: http.and_then(|h| h.as_ref().ok()).map(|h| h.token_file.clone()),
            http_problem: http.and_then(|h| h.as_ref().err()).cloned(),
            embeddings: self.projects.embedding().map(|e| EmbeddingTiers {
                tiers: e.model_ids().iter().map(|m| (*m).to_owned()).collect(),
                problem: e.problem.clone(),
            }),
        };
        DaemonFacts { daemon, projects }
    }
}
