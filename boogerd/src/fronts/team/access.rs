//! Who may call, and how often: the `Origin` check, the token, and each token's rate.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Shared;
use crate::base::sync::Recover;
use crate::engine::team_pool::TeamPool;
use crate::store::team::Token;

/// How long a token found live is taken as live without asking the team index again: a
/// revoked token is refused within this (and reads nothing meanwhile: every query checks it).
pub(super) const FRESH: Duration = Duration::from_millis(500);
/// Tokens remembered at most; past it, the stale ones are forgotten.
const REMEMBERED: usize = 10_000;

fn refuse(status: StatusCode, why: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{why}\n")).into_response()
}

/// Tokens recently found live, by their hash.
#[derive(Default)]
pub(super) struct Tokens(Mutex<HashMap<[u8; 32], (Token, Instant)>>);

impl Tokens {
    /// The live token `secret` is, asked of the team index unless checked within [`FRESH`];
    /// `Err` when the team index cannot be asked.
    /// A free connection of the calls' `pool` is taken when there is one; else the
    /// connection kept for checks (`kept`), so that calls holding every pooled connection do
    /// not keep a check waiting.
    async fn check(&self, pool: &Arc<TeamPool>, kept: &Arc<TeamPool>, secret: &str) -> Result<Option<Token>, String> {
        let key = crate::base::secret::fingerprint(secret);
        if let Some((t, at)) = self.0.lock().recover().get(&key)
            && at.elapsed() < FRESH
        {
            return Ok(Some(t.clone()));
        }
        let (pool, kept, secret) = (pool.clone(), kept.clone(), secret.to_owned());
        let found = tokio::task::spawn_blocking(move || {
            let mut conn = match pool.try_get() {
                Some(conn) => conn,
                None => kept.get().map_err(|e| e.to_string())?,
            };
            conn.token(&secret).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| e.to_string())??;
        let mut map = self.0.lock().recover();
        if map.len() >= REMEMBERED {
            map.retain(|_, (_, at)| at.elapsed() < FRESH);
        }
        match &found {
            Some(t) => map.insert(key, (t.clone(), Instant::now())),
            None => map.remove(&key),
        };
        Ok(found)
    }
}

/// Each token's bucket of calls: full at its calls a minute, refilled at that rate.
#[derive(Default)]
pub(super) struct Limits(Mutex<HashMap<i64, Bucket>>);

struct Bucket {
    left: f64,
    at: Instant,
}

impl Limits {
    /// Takes one call from `token`'s bucket, or says how long until there is one.
    fn take(&self, token: &Token) -> Result<(), Duration> {
        let rate = f64::from(token.per_minute.max(1)) / 60.0;
        let full = f64::from(token.per_minute.max(1));
        let mut map = self.0.lock().recover();
        let b = map.entry(token.id).or_insert(Bucket { left: full, at: Instant::now() });
        let now = Instant::now();
        b.left = (b.left + now.duration_since(b.at).as_secs_f64() * rate).min(full);
        b.at = now;
        if b.left >= 1.0 {
            b.left -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - b.left) / rate))
        }
    }
}

/// Calls each token has running, by token id.
#[derive(Default)]
pub(super) struct InFlight(Mutex<HashMap<i64, usize>>);

/// One running call of a token, counted until dropped.
pub(super) struct Running<'a> {
    calls: &'a InFlight,
    token: i64,
}

impl InFlight {
    /// Counts one more call of `token`, unless it has `most` running.
    fn start(&self, token: i64, most: usize) -> Option<Running<'_>> {
        let mut map = self.0.lock().recover();
        let n = map.entry(token).or_default();
        if *n >= most {
            return None;
        }
        *n += 1;
        Some(Running { calls: self, token })
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut map = self.calls.0.lock().recover();
        if let Some(n) = map.get_mut(&self.token) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.token);
            }
        }
    }
}

/// The origin of a browser page, when it is not one allowed.
fn foreign_origin<'a>(headers: &'a HeaderMap, allowed: &[String]) -> Option<&'a str> {
    let origin = headers.get(header::ORIGIN)?.to_str().unwrap_or("(not text)");
    (!allowed.iter().any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin))).then_some(origin)
}

/// Every `/mcp` request: an allowed origin (or none), a live token, a call left in its
/// bucket. The token goes on to the handler; a refusal is answered after the request's body
/// is read (see [`refused`]).
pub(super) async fn check(State(s): State<Arc<Shared>>, mut request: Request, next: Next) -> Response {
    match admit(&s, request.headers()).await {
        Ok(token) => {
            let Some(_running) = s.in_flight.start(token.id, s.per_token) else {
                let why = format!(
                    "this token has {} calls running already (the most one token runs at once); try again when one is answered",
                    s.per_token
                );
                let mut r = refuse(StatusCode::TOO_MANY_REQUESTS, &why);
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                return refused(request, r).await;
            };
            request.extensions_mut().insert(token);
            next.run(request).await
        }
        Err(refusal) => refused(request, refusal).await,
    }
}

/// A body read before a refusal at most: a client's next request may follow on the same
/// connection only once this one's body is off it.
const DRAINED: usize = 64 * 1024;

/// `response` to `request`, its body read first so the connection can carry the next
/// request; a larger body is left unread and the connection closed (said in the answer, so
/// a client does not send its next request into a closing connection).
async fn refused(request: Request, mut response: Response) -> Response {
    if axum::body::to_bytes(request.into_body(), DRAINED).await.is_err() {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

async fn admit(s: &Arc<Shared>, headers: &HeaderMap) -> Result<Token, Response> {
    if let Some(origin) = foreign_origin(headers, &s.origins) {
        let why = format!(
            "requests from web pages of {origin} are refused (start the server with --team-origin to allow it)"
        );
        return Err(refuse(StatusCode::FORBIDDEN, &why));
    }
    let Some(secret) = crate::fronts::http::guard::bearer(headers) else {
        s.metrics.unauthorized();
        return Err(unauthorized("send the token as `Authorization: Bearer TOKEN` (booger team token add makes one)"));
    };
    let token = match s.tokens.check(&s.pool, &s.token_pool, &secret).await {
        Ok(Some(t)) => t,
        Ok(None) => {
            s.metrics.unauthorized();
            return Err(unauthorized("the token is unknown or revoked"));
        }
        Err(why) => {
            // Said in the log: a caller not known yet learns nothing of the server behind.
            tracing::warn!(error = %why, "a token could not be checked");
            let mut r = refuse(StatusCode::SERVICE_UNAVAILABLE, "the token cannot be checked now; try again shortly");
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return Err(r);
        }
    };
    if let Err(wait) = s.limits.take(&token) {
        s.metrics.limited(&token.name);
        let secs = wait.as_secs().max(1);
        let mut r = refuse(
            StatusCode::TOO_MANY_REQUESTS,
            &format!("this token may make {} calls a minute; try again in {secs} s", token.per_minute),
        );
        r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        return Err(r);
    }
    Ok(token)
}

fn unauthorized(why: &str) -> Response {
    let mut r = refuse(StatusCode::UNAUTHORIZED, why);
    r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"booger team\""));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_holds_a_minute_of_calls_and_refills_at_the_rate() {
        let limits = Limits::default();
        let t = Token { id: 1, name: "ci".into(), per_minute: 3 };
        assert!((0..3).all(|_| limits.take(&t).is_ok()));
        let wait = limits.take(&t).unwrap_err();
        assert!(wait > Duration::from_secs(15) && wait <= Duration::from_secs(20), "{wait:?}");
        let other = Token { id: 2, name: "bot".into(), per_minute: 3 };
        assert!(limits.take(&other).is_ok(), "each token has its own bucket");
    }

    #[test]
    fn only_allowed_origins_pass() {
        let mut h = HeaderMap::new();
        assert_eq!(foreign_origin(&h, &[]), None, "no Origin: not a page");
        h.insert(header::ORIGIN, HeaderValue::from_static("https://evil.example"));
        assert_eq!(foreign_origin(&h, &[]), Some("https://evil.example"));
        assert_eq!(foreign_origin(&h, &["https://evil.example/".into()]), None);
    }
}
