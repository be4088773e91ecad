//! The team server's connections to the team index: a fixed few, shared by every remote
//! call (the daemon on a developer's machine needs one, [`super::team::TeamLink`]; a server
//! answering fifty agents needs several). A connection the server dropped (it restarted) is
//! found broken when next taken and replaced; while the server is down, taking one fails
//! after a short wait, and the call says to retry.

use std::time::Duration;

use r2d2::{ManageConnection, Pool, PooledConnection};

/// A connection taken from the pool, given back when dropped.
pub(crate) type Pooled = PooledConnection<Manager>;

use crate::store::team::{TeamError, TeamStore, server_of};

/// A remote call's statements are cancelled after this long.
const STATEMENT_TIMEOUT_MS: u32 = 10_000;
/// How long a call waits for a connection (all busy, or the server down).
const CHECKOUT_WAIT: Duration = Duration::from_secs(3);

#[derive(Debug, thiserror::Error)]
#[error("the team index at {server} cannot be read now ({why}); try again shortly")]
pub(crate) struct Unavailable {
    pub server: String,
    pub why: String,
}

pub(crate) struct Manager {
    url: String,
}

impl ManageConnection for Manager {
    type Connection = TeamStore;
    type Error = TeamError;

    fn connect(&self) -> Result<TeamStore, TeamError> {
        let mut store = TeamStore::connect_to_read(&self.url)?;
        store.limit_statements(STATEMENT_TIMEOUT_MS)?;
        Ok(store)
    }

    fn is_valid(&self, conn: &mut TeamStore) -> Result<(), TeamError> {
        conn.ping()
    }

    fn has_broken(&self, conn: &mut TeamStore) -> bool {
        conn.is_closed()
    }
}

pub(crate) struct TeamPool {
    /// Always here but while dropped (see `Drop`).
    pool: Option<Pool<Manager>>,
    server: String,
}

impl TeamPool {
    /// A pool of at most `size` connections to `url`, none made yet (the first call makes
    /// one; a server down at start does not keep the team server from starting).
    pub(crate) fn new(url: &str, size: u32) -> Self {
        let server = server_of(url);
        let pool = Pool::builder()
            .max_size(size.max(1))
            .min_idle(Some(0))
            .connection_timeout(CHECKOUT_WAIT)
            .idle_timeout(Some(Duration::from_secs(600)))
            // The one housekeeping thread every pool shares, not r2d2's three.
            .thread_pool(crate::store::pool_thread())
            .build_unchecked(Manager { url: url.to_owned() });
        Self { pool: Some(pool), server }
    }

    fn pool(&self) -> &Pool<Manager> {
        self.pool.as_ref().expect("a pool until dropped")
    }

    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// A connection, or why none can be had now.
    pub(crate) fn get(&self) -> Result<Pooled, Unavailable> {
        self.pool().get().map_err(|e| Unavailable { server: self.server.clone(), why: e.to_string() })
    }

    /// A connection if one is free now, without waiting.
    pub(crate) fn try_get(&self) -> Option<Pooled> {
        self.pool().try_get()
    }

    /// Connections open, and of those idle.
    pub(crate) fn state(&self) -> (u32, u32) {
        let s = self.pool().state();
        (s.connections, s.idle_connections)
    }
}

/// The pool's connections are closed apart from the server's runtime
/// ([`crate::base::threads::drop_apart`]), where the pool is dropped as the server stops (that
/// panicked in every clean stop).
impl Drop for TeamPool {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            crate::base::threads::drop_apart(pool);
        }
    }
}
