//! Accepting HTTP connections within bounds: at most [`MAX_CONNECTIONS`] at once, and a share
//! of them per client address (one more is answered 503 and closed); a connection that has not sent its first request's headers
//! within [`HEADER_DEADLINE`], or that moves no byte either way for [`IDLE`], is closed. Idle
//! connections that never send a byte held a descriptor each until their client left, and
//! enough of them starved the socket clients.

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

use crate::base::sync::Recover;

/// Connections served at once: the page, its event stream and MCP clients need a handful.
pub(crate) const MAX_CONNECTIONS: usize = 128;
/// Time from accepting a connection to the end of its first request's headers.
pub(crate) const HEADER_DEADLINE: Duration = Duration::from_secs(10);
/// Time a connection may move no byte (a kept-alive one between requests, a stream with
/// nothing to say): the status page's feed writes every 15 s, so it is never idle this long.
pub(crate) const IDLE: Duration = Duration::from_secs(300);

const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n\
Connection: close\r\n\r\nrefused: too many open HTTP connections\r\n";

/// The limits a listener applies to its connections.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub connections: usize,
    /// Connections from one client address at once: a flood from one address leaves the
    /// rest for others.
    pub per_address: usize,
    pub headers: Duration,
    pub idle: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self { connections: MAX_CONNECTIONS, per_address: MAX_CONNECTIONS, headers: HEADER_DEADLINE, idle: IDLE }
    }
}

pub(crate) struct Bounded {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    by_address: Arc<Mutex<HashMap<IpAddr, usize>>>,
    limits: Limits,
}

impl Bounded {
    pub(crate) fn new(inner: TcpListener, limits: Limits) -> Self {
        let permits = Arc::new(Semaphore::new(limits.connections));
        Self { inner, permits, by_address: Arc::default(), limits }
    }

    /// A place for one more connection from `ip`, unless it has its share already.
    fn slot_for(&self, ip: IpAddr) -> Option<AddressSlot> {
        let mut map = self.by_address.lock().recover();
        let n = map.entry(ip).or_default();
        if *n >= self.limits.per_address {
            return None;
        }
        *n += 1;
        Some(AddressSlot { ip, counts: Arc::clone(&self.by_address) })
    }
}

/// One connection's place among its address's, given back when it closes.
struct AddressSlot {
    ip: IpAddr,
    counts: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut map = self.counts.lock().recover();
        if let Some(n) = map.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.ip);
            }
        }
    }
}

impl axum::serve::Listener for Bounded {
    type Io = Guarded;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (stream, addr) = match self.inner.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors or a connection reset before it was taken: try
                    // again in a moment rather than spin.
                    tracing::debug!(error = %e, "HTTP accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Some(slot) = self.slot_for(addr.ip()) else {
                let _ = stream.try_write(REFUSAL);
                tracing::debug!(%addr, "HTTP connection refused: too many open from its address");
                continue;
            };
            match Arc::clone(&self.permits).try_acquire_owned() {
                Ok(permit) => return (Guarded::new(stream, (permit, slot), self.limits), addr),
                Err(_) => {
                    let _ = stream.try_write(REFUSAL);
                    tracing::debug!(%addr, "HTTP connection refused: too many open");
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A served connection: its place among the connections, the deadline for its first
/// request's headers until their end (`\r\n\r\n`) has been read, and its idle timer, pushed
/// back by every byte read or written.
pub(crate) struct Guarded {
    io: TcpStream,
    _permit: (OwnedSemaphorePermit, AddressSlot),
    headers: Option<Pin<Box<Sleep>>>,
    idle: Pin<Box<Sleep>>,
    idle_after: Duration,
    /// The last bytes read, to find a header end split across reads.
    tail: u32,
}

impl Guarded {
    fn new(io: TcpStream, permit: (OwnedSemaphorePermit, AddressSlot), limits: Limits) -> Self {
        Self {
            io,
            _permit: permit,
            headers: Some(Box::pin(tokio::time::sleep(limits.headers))),
            idle: Box::pin(tokio::time::sleep(limits.idle)),
            idle_after: limits.idle,
            tail: 0,
        }
    }

    /// True once `\r\n\r\n` has gone by, across reads.
    fn headers_ended(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            self.tail = (self.tail << 8) | u32::from(b);
            if self.tail == u32::from_be_bytes(*b"\r\n\r\n") {
                return true;
            }
        }
        false
    }

    fn active(&mut self) {
        let at = Instant::now() + self.idle_after;
        self.idle.as_mut().reset(at);
    }
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, what.to_owned())
}

impl AsyncRead for Guarded {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(deadline) = this.headers.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(timed_out("no request headers in time")));
        }
        if this.idle.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(timed_out("idle")));
        }
        let before = buf.filled().len();
        let read = Pin::new(&mut this.io).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.active();
            if this.headers.is_some() && this.headers_ended(&buf.filled()[before..]) {
                this.headers = None;
            }
        }
        read
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.io).poll_write(cx, buf);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            this.active();
        }
        written
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::serve::Listener;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn pair(limits: Limits) -> (Guarded, TcpStream) {
        let mut listener = Bounded::new(TcpListener::bind("127.0.0.1:0").await.unwrap(), limits);
        let client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        (listener.accept().await.0, client)
    }

    /// The header deadline holds until the headers end, then the idle timer takes over, pushed
    /// back by every byte.
    #[tokio::test]
    async fn a_connection_that_moves_nothing_is_closed() {
        let ms = Duration::from_millis;
        let limits = Limits { connections: 4, per_address: 4, headers: ms(300), idle: ms(600) };
        let (mut served, _client) = pair(limits).await;
        let mut buf = [0u8; 16];
        let e = served.read(&mut buf).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "no headers within the deadline");

        let (mut served, mut client) = pair(limits).await;
        client.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
        let mut buf = [0u8; 64];
        assert!(served.read(&mut buf).await.unwrap() > 0);
        // Talking keeps it open past both limits.
        for _ in 0..4 {
            tokio::time::sleep(ms(250)).await;
            served.write_all(b"x").await.unwrap();
        }
        let started = Instant::now();
        let e = served.read(&mut buf).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= ms(300), "closed before it was idle: {:?}", started.elapsed());
    }
}
