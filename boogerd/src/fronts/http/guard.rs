//! Who may ask: the loopback `Host` and `Origin` checks, and the token.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::State as Shared;

pub(crate) use crate::base::secret::new_token;
use crate::base::secret::same;

/// Writes `text` to a new file only its user can read.
pub(crate) fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    // A new file, never one already there: a planted `http.tmp` symlink must not have the
    // token written (and the mode set) through it.
    let tmp = path.with_extension("tmp");
    match std::fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let mut f = options.open(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Refuses foreign `Host` and `Origin`, then everything but `/health` and the page itself
/// without the token, which only an `Authorization` header carries. No cookie: a browser
/// would send one to every server on the loopback address, whatever its port, and another
/// local server (another user's among them) would receive it. The page (a shell with no
/// data) takes the token from its address's fragment, which browsers never send, keeps it
/// for its tab and sends it as a header.
pub(crate) async fn check(State(s): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    let metrics = crate::base::metrics::get();
    metrics.http_requests.fetch_add(1, Ordering::Relaxed);
    let refuse = |status: StatusCode, why: &str| {
        metrics.http_refused.fetch_add(1, Ordering::Relaxed);
        (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{why}\n")).into_response()
    };
    let headers = req.headers();
    if !host_is_loopback(headers, s.port) {
        return refuse(StatusCode::FORBIDDEN, "refused: the Host header is not this daemon's loopback address");
    }
    // An Origin that is not plain ASCII is not this page's either.
    if let Some(origin) = headers.get(header::ORIGIN)
        && !origin.to_str().is_ok_and(|o| origin_is_loopback(o, s.port))
    {
        return refuse(StatusCode::FORBIDDEN, "refused: requests from other sites are not served");
    }
    if matches!(req.uri().path(), "/health" | "/") {
        return hardened(next.run(req).await);
    }
    if bearer(headers).is_some_and(|t| same(&t, &s.token)) {
        return hardened(next.run(req).await);
    }
    refuse(
        StatusCode::UNAUTHORIZED,
        "a token is needed: `booger dashboard` prints the page's address with it; scripts send \
         `Authorization: Bearer $(cat <socket dir>/http.token)`",
    )
}

/// What every answer says about itself: not to be sniffed into another type, not to be kept
/// in a cache (it holds the user's code and the daemon's state), no referrer sent onwards.
fn hardened(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(header::X_CONTENT_TYPE_OPTIONS, header::HeaderValue::from_static("nosniff"));
    h.entry(header::CACHE_CONTROL).or_insert(header::HeaderValue::from_static("no-store"));
    h.insert(header::REFERRER_POLICY, header::HeaderValue::from_static("no-referrer"));
    response
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

pub(crate) fn bearer(headers: &HeaderMap) -> Option<String> {
    // The scheme is case-insensitive (RFC 9110).
    let (scheme, token) = headers.get(header::AUTHORIZATION)?.to_str().ok()?.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned())
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
    }
}
