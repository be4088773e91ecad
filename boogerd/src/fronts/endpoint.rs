//! The daemon's local socket, bound safely.
//!
//! Invariants:
//! - One daemon per socket. A lock file beside the socket (`boogerd.sock.lock`, holding the
//!   owner's pid) is the source of truth; the OS releases it when the process dies, even by
//!   `kill -9`, so a stale socket file left by a dead daemon is recognised and replaced, and a
//!   live daemon is never displaced.
//! - One daemon per data directory. A second lock, `boogerd.lock` in the data directory, holds
//!   the pid and the socket of the daemon serving it: two daemons would index the same
//!   projects into the same files. Clients whose environment differs (an MCP launcher that
//!   keeps only HOME and PATH computes another socket path) read the socket from it.
//! - Only its user can connect: the socket is created 0600 (before `bind`, so no umask race) in a
//!   0700 directory, and each connection's peer uid is checked against ours.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use interprocess::local_socket::ListenerOptions;
use interprocess::local_socket::tokio::{Listener, Stream, prelude::*};

#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error(
        "another boogerd is already running on {socket} (pid {pid}); stop it with `booger daemon stop` \
         or choose another socket with --socket / BOOGER_SOCKET"
    )]
    AlreadyRunning { socket: PathBuf, pid: String },
    #[error(
        "another boogerd (pid {pid}) already serves the data directory {dir} on {socket}; two daemons \
         would index the same projects into the same files. Use that one (BOOGER_SOCKET={socket}) or \
         stop it with `booger daemon stop`"
    )]
    DataDirInUse { dir: PathBuf, socket: String, pid: String },
    #[error("refusing to use {dir}: {reason}")]
    UnsafeDir { dir: PathBuf, reason: String },
    #[error("{context}: {source}")]
    Io { context: String, source: io::Error },
}

impl BindError {
    /// Another daemon is serving this socket or this data directory.
    pub fn is_already_served(&self) -> bool {
        matches!(self, Self::AlreadyRunning { .. } | Self::DataDirInUse { .. })
    }
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> BindError {
    let context = context.into();
    move |source| BindError::Io { context, source }
}

/// A bound listener plus the lock that makes it ours. Dropping it removes the socket file.
pub struct Endpoint {
    listener: Listener,
    /// The socket file, removed on drop (a named pipe leaves none).
    #[cfg(unix)]
    socket: PathBuf,
    runtime_dir: PathBuf,
    _lock: File,
    _data_lock: File,
}

impl Endpoint {
    /// Binds `socket` for the daemon that serves `data_dir`.
    pub fn bind(socket: &Path, data_dir: &Path) -> Result<Self, BindError> {
        let dir = socket.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        prepare_dir(dir)?;
        prepare_dir(data_dir)?;
        let lock = take_lock(socket)?;
        let data_lock = take_data_lock(data_dir, socket)?;
        remove_stale_socket(socket)?;
        let listener = listen(socket).map_err(io_err(format!("cannot listen on {}", socket.display())))?;
        tracing::info!(socket = %socket.display(), "listening");
        // A named pipe has no folder of its own: the data directory takes its place.
        let runtime_dir = if cfg!(windows) { data_dir.to_owned() } else { dir.to_owned() };
        Ok(Self {
            listener,
            #[cfg(unix)]
            socket: socket.to_owned(),
            runtime_dir,
            _lock: lock,
            _data_lock: data_lock,
        })
    }

    /// The private folder for this daemon's runtime files (the HTTP token): the socket's.
    pub(crate) fn runtime_dir(&self) -> &Path {
        &self.runtime_dir
    }

    /// Waits for the next connection from a process of our own user; others are dropped.
    pub(crate) async fn accept(&self) -> io::Result<Stream> {
        loop {
            let conn = self.listener.accept().await?;
            match peer_is_us(&conn) {
                Ok(true) => return Ok(conn),
                Ok(false) => tracing::warn!("rejected a connection from another user"),
                Err(e) => tracing::warn!(error = %e, "rejected a connection: cannot read peer credentials"),
            }
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        #[cfg(unix)]
        let _ = std::fs::remove_file(&self.socket);
    }
}

#[cfg(unix)]
fn peer_is_us(conn: &Stream) -> io::Result<bool> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    Ok(conn.peer_creds()?.euid() == Some(me))
}

#[cfg(windows)]
fn peer_is_us(_conn: &Stream) -> io::Result<bool> {
    // The pipe's ACL (see `listen`) lets only its owner open it.
    Ok(true)
}

#[cfg(unix)]
fn prepare_dir(dir: &Path) -> Result<(), BindError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io_err(format!("cannot create socket directory {}", dir.display())))?;
    }
    let meta = std::fs::metadata(dir).map_err(io_err(format!("cannot read {}", dir.display())))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        // A directory another user made in a shared place (e.g. /tmp/booger-<uid>) could be a trap.
        if is_booger_dir(dir) {
            return Err(BindError::UnsafeDir {
                dir: dir.to_owned(),
                reason: format!("it belongs to uid {}, not to us (uid {me})", meta.uid()),
            });
        }
    } else if is_booger_dir(dir) && meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io_err(format!("cannot chmod 0700 {}", dir.display())))?;
        return Ok(());
    }
    let mode = meta.permissions().mode();
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        // Others could remove the socket and the token file and put their own in their place.
        return Err(BindError::UnsafeDir {
            dir: dir.to_owned(),
            reason: format!(
                "other users can write to it (mode {:o}) and it has no sticky bit; choose a private directory",
                mode & 0o7777
            ),
        });
    }
    if mode & 0o022 != 0 {
        tracing::warn!(dir = %dir.display(), "the socket's directory is shared (sticky, like /tmp); a private one is better");
    }
    Ok(())
}

/// Directories booger names itself may be tightened; a directory the user chose is left alone
/// (the socket is 0600 and peers are checked anyway).
#[cfg(unix)]
fn is_booger_dir(dir: &Path) -> bool {
    dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| n == "booger" || n.starts_with("booger-"))
}

#[cfg(windows)]
fn prepare_dir(_dir: &Path) -> Result<(), BindError> {
    Ok(())
}

fn lock_path(socket: &Path) -> PathBuf {
    #[cfg(unix)]
    {
        let mut p = socket.as_os_str().to_owned();
        p.push(".lock");
        PathBuf::from(p)
    }
    #[cfg(windows)]
    {
        let name = socket.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        std::env::temp_dir().join(format!("{name}.lock"))
    }
}

fn take_lock(socket: &Path) -> Result<File, BindError> {
    match lock_file(&lock_path(socket), &std::process::id().to_string())? {
        Locked::Ours(file) => Ok(file),
        Locked::Held(held) => {
            let pid = held.lines().next().unwrap_or("").trim();
            Err(BindError::AlreadyRunning {
                socket: socket.to_owned(),
                pid: if pid.is_empty() { "unknown".to_owned() } else { pid.to_owned() },
            })
        }
    }
}

/// The data directory's lock: our pid, then our socket (which clients read).
fn take_data_lock(data_dir: &Path, socket: &Path) -> Result<File, BindError> {
    let path = booger_proto::paths::daemon_lock(data_dir);
    let ours = format!("{}\n{}\n", std::process::id(), socket.display());
    match lock_file(&path, &ours)? {
        Locked::Ours(file) => Ok(file),
        Locked::Held(held) => {
            let mut lines = held.lines();
            Err(BindError::DataDirInUse {
                dir: data_dir.to_owned(),
                pid: lines.next().unwrap_or("unknown").trim().to_owned(),
                socket: lines.next().unwrap_or("an unknown socket").trim().to_owned(),
            })
        }
    }
}

enum Locked {
    Ours(File),
    /// Another process holds the lock; what it wrote.
    Held(String),
}

/// Locks `path` (created 0600) and writes `contents` into it, unless another process holds it.
fn lock_file(path: &Path, contents: &str) -> Result<Locked, BindError> {
    let mut opts = OpenOptions::new();
    opts.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut file = opts.open(path).map_err(io_err(format!("cannot open lock file {}", path.display())))?;
    match try_lock(&file) {
        Ok(true) => {}
        Ok(false) => {
            let mut held = String::new();
            let _ = file.read_to_string(&mut held);
            return Ok(Locked::Held(held));
        }
        Err(e) => return Err(io_err(format!("cannot lock {}", path.display()))(e)),
    }
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(contents.as_bytes()))
        .map_err(io_err(format!("cannot write lock file {}", path.display())))?;
    Ok(Locked::Ours(file))
}

/// Takes `file`'s lock without waiting: whether it is ours now (false: another process holds
/// it). The OS releases it when the process ends.
#[cfg(unix)]
fn try_lock(file: &File) -> io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Windows' locks are mandatory: the bytes a lock covers cannot be read by anyone else, and
/// std locks the whole file. Clients read the pid and the pipe from the lock file, so the lock
/// covers one byte far past its contents instead.
#[cfg(windows)]
fn try_lock(file: &File) -> io::Result<bool> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Foundation::ERROR_LOCK_VIOLATION;
    use windows_sys::Win32::Storage::FileSystem::{LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, LockFileEx};
    use windows_sys::Win32::System::IO::OVERLAPPED;
    // SAFETY: OVERLAPPED is plain data; all zeroes is a valid value.
    let mut at: OVERLAPPED = unsafe { std::mem::zeroed() };
    at.Anonymous.Anonymous.Offset = u32::MAX - 1;
    at.Anonymous.Anonymous.OffsetHigh = i32::MAX as u32;
    let flags = LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY;
    // SAFETY: a valid open handle, one byte at an offset given through a live OVERLAPPED; the
    // call does not complete asynchronously (the file is not opened for overlapped I/O).
    if unsafe { LockFileEx(file.as_raw_handle(), flags, 0, 1, 0, &mut at) } != 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(ERROR_LOCK_VIOLATION as i32) { Ok(false) } else { Err(e) }
}

/// With the lock held, a socket file that still exists was left by a dead daemon. As a second
/// guard (a lock file deleted by hand), a socket that still answers is never removed.
fn remove_stale_socket(socket: &Path) -> Result<(), BindError> {
    #[cfg(unix)]
    if socket.exists() {
        if std::os::unix::net::UnixStream::connect(socket).is_ok() {
            return Err(BindError::AlreadyRunning { socket: socket.to_owned(), pid: "unknown".to_owned() });
        }
        tracing::info!(socket = %socket.display(), "removing stale socket left by a dead daemon");
        std::fs::remove_file(socket).map_err(io_err(format!("cannot remove stale socket {}", socket.display())))?;
    }
    #[cfg(windows)]
    let _ = socket;
    Ok(())
}

#[cfg(unix)]
fn listen(socket: &Path) -> io::Result<Listener> {
    use interprocess::local_socket::GenericFilePath;
    use interprocess::os::unix::local_socket::ListenerOptionsExt;
    ListenerOptions::new().name(socket.to_fs_name::<GenericFilePath>()?).mode(0o600).reclaim_name(false).create_tokio()
}

/// A named pipe only its owner may open: a protected DACL with one entry, full access for
/// the owner (`OW`), so neither the default's read access for everyone nor an inherited entry
/// applies. The pipe's counterpart of the socket's 0600.
#[cfg(windows)]
fn listen(socket: &Path) -> io::Result<Listener> {
    use interprocess::local_socket::GenericFilePath;
    use interprocess::os::windows::local_socket::ListenerOptionsExt;
    use interprocess::os::windows::security_descriptor::SecurityDescriptor;
    let owner_only = widestring::U16CString::from_str("D:P(A;;GA;;;OW)").map_err(io::Error::other)?;
    let sd = SecurityDescriptor::deserialize(&owner_only)?;
    ListenerOptions::new().name(socket.to_fs_name::<GenericFilePath>()?).security_descriptor(sd).create_tokio()
}
