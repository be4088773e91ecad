//! TLS on the team server's own listener, when given a certificate and key (`--team-cert`,
//! `--team-key`, PEM): rustls, TLS 1.2 and 1.3. Handshakes run on their own tasks, at most
//! [`HANDSHAKE`] each, so a client that connects and stalls holds only its own connection
//! (within the listener's bound), never the accept loop.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::fronts::http::listener::{Bounded, Guarded};

/// Time a client has to finish its handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("the certificate {path}: {why}")]
    Certificate { path: String, why: String },
    #[error("the key {path}: {why}")]
    Key { path: String, why: String },
    #[error("the certificate and key do not go together: {0}")]
    Config(String),
}

/// The acceptor for the certificate chain in `cert` and the private key in `key`.
pub(super) fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsError> {
    let show = |p: &Path| p.display().to_string();
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| TlsError::Certificate { path: show(cert), why: e.to_string() })?;
    if chain.is_empty() {
        return Err(TlsError::Certificate { path: show(cert), why: "no certificate in it (PEM)".into() });
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| TlsError::Key { path: show(key), why: e.to_string() })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// A listener whose connections are TLS sessions, handshaken before they are served.
pub(super) struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<Guarded>, SocketAddr)>,
    local: SocketAddr,
}

impl TlsListener {
    pub(super) fn new(mut inner: Bounded, acceptor: TlsAcceptor) -> io::Result<Self> {
        let local = axum::serve::Listener::local_addr(&inner)?;
        let (tx, ready) = mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let (io, peer) = axum::serve::Listener::accept(&mut inner).await;
                if tx.is_closed() {
                    return; // the server is gone
                }
                let (acceptor, ready) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE, acceptor.accept(io)).await {
                        Ok(Ok(tls)) => {
                            let _ = ready.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(Self { ready, local })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<Guarded>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(next) => next,
            // The accepting task ended only because this listener was dropped.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}
