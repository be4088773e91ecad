//! Who may ask: the loopback `Host` and `Origin` checks, and the token.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::State as Shared;

const COOKIE: &str = "booger_token";

/// 32 random bytes, hex.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `text` to a new file only its user can read.
pub fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options.open(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Refuses foreign `Host` and `Origin`, then everything but `/health` without the token.
/// `/?token=…` with the right token sets the cookie and sends the browser on without it.
pub async fn check(State(s): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    let metrics = crate::metrics::get();
    metrics.http_requests.fetch_add(1, Ordering::Relaxed);
    let refuse = |status: StatusCode, why: &str| {
        metrics.http_refused.fetch_add(1, Ordering::Relaxed);
        (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{why}\n")).into_response()
    };
    let headers = req.headers();
    if !host_is_loopback(headers, s.port) {
        return refuse(StatusCode::FORBIDDEN, "refused: the Host header is not this daemon's loopback address");
    }
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok())
        && !origin_is_loopback(origin, s.port)
    {
        return refuse(StatusCode::FORBIDDEN, "refused: requests from other sites are not served");
    }
    if req.uri().path() == "/health" {
        return next.run(req).await;
    }
    let offered = query_token(req.uri().query());
    if let Some(t) = &offered
        && same(t, &s.token)
    {
        // Into a cookie, and out of the address bar and the history.
        let cookie = format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", s.token);
        return Response::builder()
            .status(StatusCode::SEE_OTHER)
            .header(header::LOCATION, req.uri().path())
            .header(header::SET_COOKIE, cookie)
            .body(Body::empty())
            .expect("a valid response");
    }
    if bearer(headers).or_else(|| cookie(headers)).is_some_and(|t| same(&t, &s.token)) {
        return next.run(req).await;
    }
    refuse(
        StatusCode::UNAUTHORIZED,
        "a token is needed: `booger dashboard` prints this page's address with it; scripts send \
         `Authorization: Bearer $(cat <socket dir>/http.token)`",
    )
}

fn host_is_loopback(headers: &HeaderMap, port: u16) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else { return false };
    loopback_authority(host, port)
}

fn origin_is_loopback(origin: &str, port: u16) -> bool {
    origin.strip_prefix("http://").is_some_and(|a| loopback_authority(a, port))
}

/// `127.0.0.1:port`, `localhost:port` or `[::1]:port`.
fn loopback_authority(authority: &str, port: u16) -> bool {
    let Some((host, p)) = authority.rsplit_once(':') else { return false };
    p.parse::<u16>() == Ok(port) && matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

fn query_token(query: Option<&str>) -> Option<String> {
    query?.split('&').find_map(|kv| kv.strip_prefix("token=")).map(str::to_owned)
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    v.strip_prefix("Bearer ").map(|t| t.trim().to_owned())
}

fn cookie(headers: &HeaderMap) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).find_map(|v| {
        v.split(';').find_map(|kv| kv.trim().strip_prefix(COOKIE).and_then(|r| r.strip_prefix('=')).map(str::to_owned))
    })
}

/// Compares in time independent of where the strings differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_loopback_address_is_at_home() {
        assert!(loopback_authority("127.0.0.1:7767", 7767));
        assert!(loopback_authority("localhost:7767", 7767));
        assert!(loopback_authority("[::1]:7767", 7767));
        assert!(!loopback_authority("evil.example:7767", 7767));
        assert!(!loopback_authority("127.0.0.1:80", 7767));
        assert!(!loopback_authority("127.0.0.1", 7767));
        assert!(origin_is_loopback("http://localhost:7767", 7767));
        assert!(!origin_is_loopback("http://evil.example", 7767));
        assert!(!origin_is_loopback("https://localhost:7767.evil.example", 7767));
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
        assert_eq!(new_token().len(), 64);
    }
}
