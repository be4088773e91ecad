//! What differs between Unix and Windows for the client, in one place: the connection to the
//! daemon (a Unix socket or a named pipe), ending a connection's input, starting the daemon
//! detached, and files private to the user. The rest of the client does not know which
//! platform it runs on.

use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::path::Path;
use std::process::Command;

/// A connection to the daemon: std's Unix socket (for `shutdown`), or interprocess's named
/// pipe client.
#[cfg(unix)]
pub type Stream = std::os::unix::net::UnixStream;
#[cfg(windows)]
pub type Stream = interprocess::local_socket::Stream;

/// Connects to the daemon's socket (or named pipe, `\\.\pipe\…`).
pub fn connect(socket: &Path) -> io::Result<Stream> {
    use interprocess::local_socket::{GenericFilePath, prelude::*};
    let name = socket.to_fs_name::<GenericFilePath>()?;
    let stream = interprocess::local_socket::Stream::connect(name)?;
    #[cfg(unix)]
    {
        let interprocess::local_socket::Stream::UdSocket(s) = stream;
        s.inner().try_clone()
    }
    #[cfg(windows)]
    Ok(stream)
}

/// A second handle on the same connection, for reading while another thread writes.
pub fn try_clone(stream: &Stream) -> io::Result<Stream> {
    #[cfg(unix)]
    {
        stream.try_clone()
    }
    #[cfg(windows)]
    {
        interprocess::TryClone::try_clone(stream)
    }
}

/// Tells the daemon this connection sends nothing more: it answers what is in flight, then
/// closes. A Unix socket shuts its write half; a named pipe has none, so the end travels as
/// a protocol line.
pub fn end_input(stream: &Stream) -> io::Result<()> {
    #[cfg(unix)]
    {
        stream.shutdown(std::net::Shutdown::Write)
    }
    #[cfg(windows)]
    {
        use std::io::Write;
        let mut line = booger_proto::wire::END_OF_INPUT_LINE.to_owned();
        line.push('\n');
        (&*stream).write_all(line.as_bytes())
    }
}

/// Whether a failed connect means no daemon is there (as opposed to one that refused us).
pub fn is_absent(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused)
}

/// Starts `cmd` detached from this process: its own session without a terminal on Unix, a
/// detached process in its own group on Windows, so that Ctrl-C in the shell that started
/// booger does not stop the daemon.
pub fn detach(cmd: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe and touches only the child's session.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
    }
}

/// Options that create a file only its user can read (0600 on Unix; on Windows the user's
/// profile folders are private already).
pub fn private_file_options() -> OpenOptions {
    #[cfg_attr(windows, expect(unused_mut, reason = "Windows folders' ACLs keep them private"))]
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// A builder for folders only their user can enter (0700 on Unix).
pub fn private_dir_builder() -> DirBuilder {
    #[cfg_attr(windows, expect(unused_mut, reason = "Windows folders' ACLs keep them private"))]
    let mut builder = DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}

/// Makes `path` readable and writable by its user only (0600); nothing to do on Windows.
pub fn make_private(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
    }
    #[cfg(windows)]
    {
        let _ = path;
        Ok(())
    }
}
