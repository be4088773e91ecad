//! Accepting HTTP connections within bounds: at most [`MAX_CONNECTIONS`] at once (one more is
//! answered 503 and closed), and a connection that has not sent its first request's headers
//! within [`HEADER_DEADLINE`] is closed. Idle connections that never send a byte held a
//! descriptor each until their client left, and enough of them starved the socket clients.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Connections served at once: the page, its event stream and MCP clients need a handful.
pub const MAX_CONNECTIONS: usize = 128;
/// Time from accepting a connection to the end of its first request's headers.
pub const HEADER_DEADLINE: Duration = Duration::from_secs(10);

const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n\
Connection: close\r\n\r\nrefused: too many open HTTP connections\r\n";

pub struct Bounded {
    inner: TcpListener,
    permits: Arc<Semaphore>,
}

impl Bounded {
    pub fn new(inner: TcpListener) -> Self {
        Self { inner, permits: Arc::new(Semaphore::new(MAX_CONNECTIONS)) }
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
            match Arc::clone(&self.permits).try_acquire_owned() {
                Ok(permit) => return (Guarded::new(stream, permit), addr),
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

/// A served connection: its place among [`MAX_CONNECTIONS`], and the deadline for its first
/// request's headers until their end (`\r\n\r\n`) has been read.
pub struct Guarded {
    io: TcpStream,
    _permit: OwnedSemaphorePermit,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The last bytes read, to find a header end split across reads.
    tail: u32,
}

impl Guarded {
    fn new(io: TcpStream, permit: OwnedSemaphorePermit) -> Self {
        Self { io, _permit: permit, deadline: Some(Box::pin(tokio::time::sleep(HEADER_DEADLINE))), tail: 0 }
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
}

impl AsyncRead for Guarded {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(deadline) = this.deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "no request headers in time")));
        }
        let before = buf.filled().len();
        let read = Pin::new(&mut this.io).poll_read(cx, buf);
        if this.deadline.is_some() && matches!(read, Poll::Ready(Ok(()))) && this.headers_ended(&buf.filled()[before..])
        {
            this.deadline = None;
        }
        read
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}
