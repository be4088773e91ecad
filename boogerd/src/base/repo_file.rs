//! Reading a file a repository ships: it is untrusted, and it can change between a walk and
//! the read. A FIFO swapped in would block `open` forever (a thread and its project stalled),
//! a device would read without end, and a symlink swapped in would be read wherever it points.
//!
//! So the file is opened without following a final symlink and without blocking, and the
//! opened descriptor (not the path) must be a regular file; its reading stops one byte past
//! the limit whatever its size said.

use std::io::Read;
use std::path::Path;

/// The file's bytes, `None` when it holds more than `limit`; an error when it is not a
/// regular file (a FIFO, a device, a socket, a directory, a symlink) or cannot be read.
pub(crate) fn read(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let file = open(path)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// The file's text up to `limit` bytes (the rest left unread), lossily decoded; `None` when it
/// is absent or not a regular file.
pub(crate) fn read_text(path: &Path, limit: u64) -> Option<String> {
    let mut bytes = Vec::new();
    open(path).ok()?.take(limit).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read_and_never_block() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, vec![b'x'; 100]).unwrap();
        assert_eq!(read(&f, 100).unwrap().map(|b| b.len()), Some(100));
        assert_eq!(read(&f, 99).unwrap(), None);
        assert_eq!(read_text(&f, 10).as_deref(), Some("xxxxxxxxxx"));
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&f, &link).unwrap();
            assert!(read(&link, 1000).is_err(), "a symlink is not followed");
            let fifo = dir.path().join("fifo");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            // Would block forever in a plain open: nobody writes to it.
            assert!(read(&fifo, 1000).is_err());
            assert!(read(Path::new("/dev/zero"), 1000).is_err(), "a device is not read");
        }
        assert!(read(dir.path(), 1000).is_err());
    }
}
