//! Which file setup may edit, and how it reads it. A client's configuration can be a symlink
//! (dotfiles kept in a repository of their own), but a cloned project's `.cursor/mcp.json`
//! can also be one, pointing anywhere: setup follows a link only to a regular file inside the
//! place the configuration belongs to (the home directory for a user's configuration, the
//! project for a project's), and never opens anything that could block (a FIFO).

use std::io::Read;
use std::path::{Path, PathBuf};

/// The file setup would edit for `path`: `path` itself, or where its link leads when that is a
/// regular file inside `within`. `Err` says why setup leaves it alone.
pub fn editable(path: &Path, within: &Path) -> Result<PathBuf, String> {
    let root = booger_proto::paths::canonical(within).unwrap_or_else(|_| within.to_owned());
    // A folder on the way that is a link (`.vscode -> /elsewhere`) leads out as surely as a
    // link to the file does.
    if let Some(dir) = path.parent().and_then(|d| booger_proto::paths::canonical(d).ok())
        && !dir.starts_with(&root)
    {
        return Err(format!("its folder is a link to {}, outside {}", dir.display(), root.display()));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path.to_owned()),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let real = if meta.file_type().is_symlink() {
        let real =
            booger_proto::paths::canonical(path).map_err(|e| format!("it is a link that leads nowhere ({e})"))?;
        if !real.starts_with(&root) {
            return Err(format!("it is a link to {}, outside {}", real.display(), root.display()));
        }
        real
    } else {
        path.to_owned()
    };
    match std::fs::metadata(&real) {
        Ok(m) if m.is_file() => Ok(real),
        Ok(_) => Err("it is not a regular file".to_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(real),
        Err(e) => Err(format!("cannot read it: {e}")),
    }
}

/// The file's bytes (`None` when it does not exist), read without following a final link and
/// without blocking; `Err` when it is not a regular file.
pub fn read(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let mut file = match options.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Holds setup's lock (one setup at a time per user: two at once lost ledger records) until
/// dropped.
pub struct Lock(#[allow(dead_code)] Option<std::fs::File>);

/// Waits for the lock on `<dir>/setup.lock`; without one (an unwritable data directory) setup
/// goes on unlocked, as before.
pub fn lock(dir: &Path) -> Lock {
    let _ = std::fs::create_dir_all(dir);
    let Ok(file) = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(dir.join("setup.lock"))
    else {
        return Lock(None);
    };
    // Released when the file closes. A file system without locks: setup goes on unlocked.
    let _ = file.lock();
    Lock(Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn links_are_followed_only_to_regular_files_inside() {
        let t = tempfile::tempdir().unwrap();
        let (home, outside) = (t.path().join("home"), t.path().join("outside"));
        std::fs::create_dir_all(home.join("dotfiles")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(home.join("dotfiles/mcp.json"), "{}").unwrap();
        std::fs::write(outside.join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(home.join("dotfiles/mcp.json"), home.join("in.json")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), home.join("out.json")).unwrap();
        std::os::unix::fs::symlink("/dev/null", home.join("dev.json")).unwrap();
        let real = std::fs::canonicalize(home.join("dotfiles/mcp.json")).unwrap();
        assert_eq!(editable(&home.join("in.json"), &home).unwrap(), real);
        assert!(editable(&home.join("out.json"), &home).unwrap_err().contains("outside"));
        assert!(editable(&home.join("dev.json"), &home).is_err());
        assert_eq!(editable(&home.join("new.json"), &home).unwrap(), home.join("new.json"));
        let fifo = home.join("fifo.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(editable(&fifo, &home).is_err());
        assert!(read(&fifo).is_err(), "a FIFO is not read, and the read does not block");
        assert_eq!(read(&home.join("none.json")).unwrap(), None);
    }
}
