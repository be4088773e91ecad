//! Reaching the team index's server: the password when the URL holds none (`PGPASSWORD`, then
//! `~/.pgpass`, where PostgreSQL's own clients look), TLS when the URL asks for it
//! (`sslmode=require`: rustls, the server's certificate checked against the public roots and
//! the CA file the daemon was given with `--team-ca`), and a connect timeout.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use postgres::config::{Host, SslMode};
use postgres::{Client, Config, NoTls};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::{Result, TeamError};

/// How long a connection may take to open when the URL does not say.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The CA file trusted besides the public roots, set once when the daemon starts.
static EXTRA_CA: OnceLock<PathBuf> = OnceLock::new();

/// Trusts the certificates in the PEM file at `path` for the team index's server, besides the
/// public roots (a team's own CA). Once per process; later calls change nothing.
pub fn trust_ca(path: PathBuf) {
    let _ = EXTRA_CA.set(path);
}

/// `url` as an answer or a log may show it: host, port and database, no user or password.
pub fn server_of(url: &str) -> String {
    match url.parse::<Config>() {
        Ok(c) => {
            let (host, port) = endpoint(&c);
            format!("{host}:{port}/{}", c.get_dbname().unwrap_or(""))
        }
        Err(_) => "(an unreadable URL)".to_owned(),
    }
}

/// The first host (a name, an address or a socket directory) and port `config` names.
fn endpoint(config: &Config) -> (String, u16) {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => String::new(),
    };
    (host, config.get_ports().first().copied().unwrap_or(5432))
}

/// A connection to the server at `url`.
pub(super) fn open(url: &str) -> Result<Client> {
    let unreachable = |source| TeamError::Connect { server: server_of(url), source };
    let mut config: Config = url.parse().map_err(unreachable)?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_password().is_none()
        && let Some(p) = password(&config)
    {
        config.password(p);
    }
    if config.get_ssl_mode() == SslMode::Require {
        let tls = tokio_postgres_rustls::MakeRustlsConnect::new(client_config()?);
        config.connect(tls).map_err(unreachable)
    } else {
        config.connect(NoTls).map_err(unreachable)
    }
}

/// TLS settings: rustls with ring, the public roots and the extra CA.
fn client_config() -> Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    if let Some(path) = EXTRA_CA.get() {
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|i| i.collect::<std::result::Result<Vec<_>, _>>())
            .map_err(|e| TeamError::Tls(format!("cannot read the CA file {}: {e}", path.display())))?;
        for c in certs {
            roots.add(c).map_err(|e| TeamError::Tls(format!("the CA file {}: {e}", path.display())))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TeamError::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// The password for `config`'s user: `PGPASSWORD`, else the first matching line of the
/// password file (`PGPASSFILE`, else `~/.pgpass`, `%APPDATA%\postgresql\pgpass.conf` on
/// Windows), which PostgreSQL's clients read only when no one else can (mode 0600 or stricter).
fn password(config: &Config) -> Option<String> {
    if let Some(p) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
        return p.into_string().ok();
    }
    let file = std::env::var_os("PGPASSFILE").map(PathBuf::from).or_else(default_password_file)?;
    let text = private_text(&file)?;
    let (host, port) = endpoint(config);
    let port = port.to_string();
    let wanted = [host.as_str(), port.as_str(), config.get_dbname().unwrap_or(""), config.get_user().unwrap_or("")];
    text.lines().filter(|l| !l.starts_with('#')).find_map(|line| {
        let fields = split_pgpass(line);
        let matches = fields.len() == 5 && fields[..4].iter().zip(wanted).all(|(f, w)| f == "*" || f == w);
        matches.then(|| fields[4].clone())
    })
}

#[cfg(unix)]
fn default_password_file() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass"))
}

#[cfg(windows)]
fn default_password_file() -> Option<PathBuf> {
    std::env::var_os("APPDATA").map(|a| Path::new(&a).join("postgresql").join("pgpass.conf"))
}

/// The file's text, if only its owner can read or write it. On Windows the folder's ACL
/// (the user's profile) is what keeps it private, as for PostgreSQL's own tools.
fn private_text(file: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).ok()?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(file = %file.display(), "password file ignored: others can read it (chmod 600)");
            return None;
        }
    }
    std::fs::read_to_string(file).ok()
}

/// One `host:port:database:user:password` line, `\:` and `\\` unescaped.
fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().expect("one field").extend(chars.next()),
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::split_pgpass;

    #[test]
    fn a_password_file_line_splits_at_unescaped_colons() {
        assert_eq!(
            split_pgpass("db.example:5432:*:booger:se\\:cr\\\\et"),
            vec!["db.example", "5432", "*", "booger", "se:cr\\et"]
        );
    }
}
