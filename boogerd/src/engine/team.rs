//! The daemon's link to the team index: one connection, made when first needed and reused by
//! every team query. A connection that fails is dropped; the next is tried after a backoff
//! (1 s, doubling to a minute), and until then team calls fail at once, saying so, while
//! local projects answer as always. No thread of its own, nothing per repository.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::base::sync::Recover;
use crate::base::threads::drop_apart;
use crate::store::team::{TeamError, TeamStore, server_of};

/// The first wait after a failure, and the longest.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// A team query that takes longer than this is cancelled by the server.
const STATEMENT_TIMEOUT_MS: u32 = 10_000;

#[derive(Debug, thiserror::Error)]
pub(crate) enum LinkError {
    #[error("the team index at {server} is unreachable ({why}); booger tries again in {retry_in} s")]
    Down { server: String, why: String, retry_in: u64 },
    #[error(transparent)]
    Team(#[from] TeamError),
}

pub(crate) struct TeamLink {
    url: String,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    conn: Option<TeamStore>,
    retry_at: Option<Instant>,
    backoff: Duration,
    last_error: Option<String>,
}

/// What `status` says of the link.
#[derive(Debug, Clone)]
pub(crate) struct LinkHealth {
    pub server: String,
    /// None until first used.
    pub reachable: Option<bool>,
    pub last_error: Option<String>,
}

impl TeamLink {
    pub(crate) fn new(url: String) -> Self {
        Self { url, state: Mutex::default() }
    }

    pub(crate) fn server(&self) -> String {
        server_of(&self.url)
    }

    /// Runs `f` on the connection, connecting first if there is none and the backoff allows.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut TeamStore) -> Result<T, TeamError>) -> Result<T, LinkError> {
        let mut state = self.state.lock().recover();
        // A connection the server closed (a restart) is made again at once, not after a
        // backoff: the first call after a restart would otherwise fail for nothing.
        if state.conn.as_ref().is_some_and(TeamStore::is_closed) {
            state.conn = None;
        }
        if state.conn.is_none() {
            if let Some(at) = state.retry_at.filter(|at| *at > Instant::now()) {
                return Err(LinkError::Down {
                    server: self.server(),
                    why: state.last_error.clone().unwrap_or_default(),
                    retry_in: at.saturating_duration_since(Instant::now()).as_secs().max(1),
                });
            }
            match TeamStore::connect_to_read(&self.url)
                .and_then(|mut s| s.limit_statements(STATEMENT_TIMEOUT_MS).map(|()| s))
            {
                Ok(s) => {
                    tracing::info!(server = %self.server(), "team index connected");
                    *state = State { conn: Some(s), ..State::default() };
                }
                // An empty team index is not a server down: the next call asks again.
                Err(e @ TeamError::NotReady { .. }) => return Err(e.into()),
                Err(e) => {
                    state.failed(&e);
                    return Err(e.into());
                }
            }
        }
        let conn = state.conn.as_mut().expect("connected above");
        match f(conn) {
            Ok(v) => Ok(v),
            Err(e) => {
                // The connection is kept through an error in a statement (the server refused
                // it, or a value did not fit); one that is gone is dropped, and made again
                // after the backoff.
                if conn.is_closed() {
                    state.conn = None;
                    state.failed(&e);
                }
                Err(e.into())
            }
        }
    }

    pub(crate) fn health(&self) -> LinkHealth {
        let state = self.state.lock().recover();
        let reachable = if state.conn.is_some() {
            Some(true)
        } else if state.last_error.is_some() {
            Some(false)
        } else {
            None
        };
        LinkHealth { server: self.server(), reachable, last_error: state.last_error.clone() }
    }
}

/// The connection is closed apart from the daemon's runtime ([`drop_apart`]), where the
/// daemon is dropped as it stops (that panicked in every clean shutdown with a team index).
impl Drop for TeamLink {
    fn drop(&mut self) {
        if let Some(conn) = self.state.get_mut().recover().conn.take() {
            drop_apart(conn);
        }
    }
}

impl State {
    fn failed(&mut self, e: &TeamError) {
        self.backoff = if self.backoff.is_zero() { FIRST_BACKOFF } else { (self.backoff * 2).min(MAX_BACKOFF) };
        self.retry_at = Some(Instant::now() + self.backoff);
        self.last_error = Some(e.to_string());
        tracing::warn!(error = %e, retry_in_s = self.backoff.as_secs(), "team index unreachable");
    }
}
