//! `/api/events`: the status page's live feed (server-sent events). Each event is the whole
//! [`overview`](super::overview::overview); one is sent when the page connects, then when
//! the fingerprint changes (looked at once a second), and at least every `REFRESH` for what
//! drifts slowly (memory, disk). An open page that nothing happens to costs one fingerprint a
//! second: a few atomics per project.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::response::sse::{Event, Sse};
use futures_util::Stream;

use super::State as Shared;
use super::overview::{fingerprint, overview};
use crate::engine::Daemon;

/// How often the fingerprint is looked at.
const TICK: Duration = Duration::from_secs(1);
/// The longest an open page goes without a fresh overview.
const REFRESH: Duration = Duration::from_secs(15);

struct Feed {
    daemon: Arc<Daemon>,
    last: Option<u64>,
    sent: Instant,
}

pub(super) async fn events(State(s): State<Arc<Shared>>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let feed = Feed { daemon: s.daemon.clone(), last: None, sent: Instant::now() };
    Sse::new(futures_util::stream::unfold(feed, next))
}

/// Waits for the next overview worth sending; `None` ends the stream (the daemon stops).
async fn next(mut feed: Feed) -> Option<(Result<Event, Infallible>, Feed)> {
    let stopped = feed.daemon.stopped();
    tokio::pin!(stopped);
    loop {
        if feed.daemon.is_stopping() {
            return None;
        }
        let now = fingerprint(&feed.daemon);
        if feed.last != Some(now) || feed.sent.elapsed() >= REFRESH {
            let daemon = feed.daemon.clone();
            let facts = tokio::task::spawn_blocking(move || overview(&daemon)).await.ok()?;
            let event = Event::default().event("status").json_data(facts).ok()?;
            feed.last = Some(now);
            feed.sent = Instant::now();
            return Some((Ok(event), feed));
        }
        tokio::select! {
            () = tokio::time::sleep(TICK) => {}
            () = &mut stopped => return None,
        }
    }
}
