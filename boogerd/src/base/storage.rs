//! Where each project's index lives.
//!
//! By default in the daemon's data directory, `<data>/indexes/<name>-<hash of the root>/`,
//! so a read-only tree (vendored sources, system headers, a mounted checkout) indexes like
//! any other and nothing is written into the user's repositories. A project registered with
//! `--in-repo` keeps it in `<root>/.booger/` instead (with a `.gitignore` of `*`).
//!
//! Everything here is private to the user: directories 0700, files 0600, because an index
//! holds the text of every file it read, including files other users could not read.
//! An index found in the other place (an older booger's `.booger/`, or a project that changed
//! its mind) is moved, not rebuilt: it holds the agents' notes as well as derived data.

use std::io;
use std::path::{Path, PathBuf};

/// Under the data directory: one folder per project.
pub(crate) const INDEXES_DIR: &str = "indexes";
/// In the repository, for projects that ask for it.
pub(crate) const IN_REPO_DIR: &str = ".booger";
/// The database file inside a project's index folder.
pub(crate) const DB_FILE: &str = "index.db";
/// The agents' notes and work set, beside the index but in a database of their own: the
/// index is derived and may be set aside and rebuilt; these cannot be made again.
pub(crate) const NOTES_FILE: &str = "notes.db";
/// A file beside the database naming the project's root, for people and for finding orphans.
const ROOT_FILE: &str = "root";
/// In an in-repo index folder: the mark that this user's daemon made it for this root
/// ([`owner_mark`]). A repository can ship a `.booger/` folder; without the mark its index and
/// notes are never used.
const OWNER_FILE: &str = "owner";
/// In the data directory: the secret the marks are made with.
const OWNER_KEY_FILE: &str = "owner.key";

/// Where one project's index folder is.
pub fn index_dir(data_dir: &Path, root: &Path, in_repo: bool) -> PathBuf {
    if in_repo { root.join(IN_REPO_DIR) } else { data_dir.join(INDEXES_DIR).join(key(root)) }
}

/// `<last path component>-<16 hex digits of BLAKE3(root)>`: readable, and unique per root.
fn key(root: &Path) -> String {
    let name: String = root
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .map(|c| if c.is_alphanumeric() || "-_.".contains(c) { c } else { '_' })
                .collect()
        })
        .filter(|n: &String| !n.is_empty() && !n.starts_with('.'))
        .unwrap_or_else(|| "root".to_owned());
    let hash = blake3::hash(root.as_os_str().as_encoded_bytes());
    format!("{name}-{}", &hash.to_hex()[..16])
}

/// Creates `dir` and its missing parents, each missing one private to the user.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_private_dir(parent)?;
    }
    #[cfg_attr(windows, expect(unused_mut, reason = "the user's profile folder's ACL keeps it private"))]
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        other => other,
    }
}

/// Prepares a project's index folder for writing: private, with the `root` file, and in the
/// repository a `.gitignore` so git never sees it.
pub(crate) fn prepare(dir: &Path, root: &Path) -> io::Result<()> {
    create_private_dir(dir)?;
    let root_file = dir.join(ROOT_FILE);
    if !root_file.exists() {
        write_private(&root_file, root.as_os_str().as_encoded_bytes())?;
    }
    if dir.file_name().is_some_and(|n| n == IN_REPO_DIR) {
        let ignore = dir.join(".gitignore");
        if !ignore.exists() {
            write_private(&ignore, b"*\n")?;
        }
    }
    Ok(())
}

/// Creates (or truncates) a file private to the user (0600), for writing.
pub(crate) fn create_private(path: &Path) -> io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path)
}

/// Creates (or truncates) `path` with mode 0600 and writes `bytes`.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    create_private(path)?.write_all(bytes)
}

/// Creates an empty database file with mode 0600 if none exists, so SQLite (which gives its
/// WAL and shared-memory files the database's mode) never makes a readable one.
pub(crate) fn create_private_file(path: &Path) -> io::Result<()> {
    if path.exists() {
        return Ok(());
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    match opts.open(path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        other => other.map(drop),
    }
}

/// The bytes free to this user on the filesystem holding `dir`.
#[cfg(all(unix, feature = "team"))]
pub(crate) fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: a NUL-terminated path and a statvfs to fill; read only when the call succeeds.
    if unsafe { libc::statvfs(path.as_ptr(), stat.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: filled by the successful call above.
    let stat = unsafe { stat.assume_init() };
    // The fields' types differ between platforms (u32 on some): widened either way.
    #[allow(clippy::unnecessary_cast)]
    Some(stat.f_bavail as u64 * stat.f_frsize as u64)
}

/// The bytes free to this user on the volume holding `dir`.
#[cfg(all(windows, feature = "team"))]
pub(crate) fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::windows::ffi::OsStrExt;
    let wide: Vec<u16> = dir.as_os_str().encode_wide().chain(Some(0)).collect();
    let mut free_to_caller = 0u64;
    // SAFETY: a NUL-terminated wide path and one out-parameter; the others may be null.
    let ok = unsafe {
        windows_sys::Win32::Storage::FileSystem::GetDiskFreeSpaceExW(
            wide.as_ptr(),
            &mut free_to_caller,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    (ok != 0).then_some(free_to_caller)
}

/// Writes all of `buf` at byte `offset` of `file`, leaving the file's cursor alone.
#[cfg(all(unix, feature = "team"))]
pub(crate) fn write_all_at(file: &std::fs::File, buf: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

/// Writes all of `buf` at byte `offset` of `file`. The cursor moves on Windows: callers
/// write by offset only.
#[cfg(all(windows, feature = "team"))]
pub(crate) fn write_all_at(file: &std::fs::File, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_write(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = &buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// If `to` has no database and `from` has one, moves it (with its WAL) to `to`: renamed when
/// both are on one filesystem, else copied and then removed from `from` (left there when
/// `from` is read-only). Returns whether an index moved.
pub(crate) fn adopt(from: &Path, to: &Path, root: &Path, mark: &str) -> io::Result<bool> {
    let (old, new) = (from.join(DB_FILE), to.join(DB_FILE));
    if new.exists() || !std::fs::symlink_metadata(&old).is_ok_and(|m| m.is_file()) {
        return Ok(false);
    }
    // An in-repo folder is the repository's: only one this daemon marked is taken. (The data
    // directory is private to the user: an index there is always this daemon's.)
    if from.file_name().is_some_and(|n| n == IN_REPO_DIR) && !is_owned(from, mark) {
        tracing::warn!(from = %from.display(), "an index this daemon did not make is in the repository; not used");
        return Ok(false);
    }
    prepare(to, root)?;
    // The notes, then each database's WAL before it: the index appears last, complete with
    // its log and its notes.
    let moves = [(NOTES_FILE, "-wal"), (NOTES_FILE, ""), (DB_FILE, "-wal"), (DB_FILE, "")];
    for (file, suffix) in moves {
        let (a, b) = (sidecar(&from.join(file), suffix), sidecar(&to.join(file), suffix));
        if !a.is_file() || (file == NOTES_FILE && to.join(file).exists()) {
            continue;
        }
        // Copy to a temporary name first: a crash mid-copy must not leave a torn database
        // where the daemon would open it.
        let tmp = sidecar(&to.join(file), &format!("{suffix}.moving"));
        if std::fs::rename(&a, &tmp).is_err() {
            copy_private(&a, &tmp)?;
        }
        set_private(&tmp)?;
        std::fs::rename(&tmp, &b)?;
    }
    // What is left of the old folder is ours: the shared-memory index, the .gitignore, the
    // ranking index (derived: rebuilt where the index now is), the originals of what was
    // copied. A read-only tree keeps them.
    remove_own_files(from);
    let _ = std::fs::remove_dir(from);
    tracing::info!(from = %from.display(), to = %to.display(), "index moved");
    Ok(true)
}

/// The mark of an index this user's daemon made for `root`: a keyed hash of the root with a
/// secret kept in the (private) data directory, made on first use. A repository cannot forge
/// it, nor reuse one made for another tree.
pub(crate) fn owner_mark(data_dir: &Path, root: &Path) -> io::Result<String> {
    let key_file = data_dir.join(OWNER_KEY_FILE);
    let key = match std::fs::read(&key_file) {
        Ok(k) if k.len() == 32 => k,
        _ => {
            let mut k = [0u8; 32];
            getrandom::fill(&mut k).map_err(io::Error::other)?;
            create_private_dir(data_dir)?;
            write_private(&key_file, &k)?;
            k.to_vec()
        }
    };
    let key: [u8; 32] = key.try_into().expect("32 bytes");
    Ok(blake3::keyed_hash(&key, root.as_os_str().as_encoded_bytes()).to_hex().to_string())
}

/// Marks the in-repo index folder `dir` as made by this daemon (see [`owner_mark`]).
pub(crate) fn mark_owned(dir: &Path, mark: &str) -> io::Result<()> {
    let file = dir.join(OWNER_FILE);
    if crate::base::repo_file::read_text(&file, 256).as_deref() == Some(mark) {
        return Ok(());
    }
    write_private(&file, mark.as_bytes())
}

/// True if `dir` is a real folder (not a symlink) that this daemon made for the root `mark`
/// was made for.
pub(crate) fn is_owned(dir: &Path, mark: &str) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
        && crate::base::repo_file::read_text(&dir.join(OWNER_FILE), 256).as_deref() == Some(mark)
}

/// An in-repo index folder that holds an index or notes this daemon did not make (shipped
/// with the repository, or left by another user): its databases are renamed aside (never
/// opened, never deleted) so a fresh index is built. `Err` when `dir` is a symlink or not a
/// folder: booger does not follow it.
pub(crate) fn distrust_unowned(dir: &Path, mark: &str) -> io::Result<Option<PathBuf>> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a folder booger made (a symlink or a file); move it away to keep the index there",
                dir.display()
            ),
        ));
    }
    if is_owned(dir, mark) {
        return Ok(None);
    }
    let shipped = [DB_FILE, NOTES_FILE].iter().any(|f| std::fs::symlink_metadata(dir.join(f)).is_ok());
    if !shipped {
        return Ok(None);
    }
    let aside = dir.join(format!("untrusted-{}", crate::base::time::now_rfc3339().replace(':', "-")));
    std::fs::create_dir(&aside)?;
    for name in [DB_FILE, NOTES_FILE] {
        for suffix in ["", "-wal", "-shm"] {
            let f = sidecar(&dir.join(name), suffix);
            if std::fs::symlink_metadata(&f).is_ok() {
                std::fs::rename(&f, aside.join(f.file_name().expect("a file name")))?;
            }
        }
    }
    tracing::warn!(dir = %dir.display(), aside = %aside.display(), "an index this daemon did not make was set aside");
    Ok(Some(aside))
}

fn sidecar(db: &Path, suffix: &str) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn copy_private(from: &Path, to: &Path) -> io::Result<()> {
    let mut src = std::fs::File::open(from)?;
    let mut dst = create_private(to)?;
    io::copy(&mut src, &mut dst)?;
    dst.sync_all()
}

fn set_private(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Deletes a project's index folder (the project was unregistered). In a repository only
/// booger's own files go, never anything else someone put there.
pub(crate) fn remove(dir: &Path) -> io::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if dir.file_name().is_some_and(|n| n == IN_REPO_DIR) {
        remove_own_files(dir);
        return std::fs::remove_dir(dir).or_else(|e| if dir.exists() { Err(e) } else { Ok(()) });
    }
    std::fs::remove_dir_all(dir)
}

/// Removes the files booger writes in an index folder, and nothing else.
fn remove_own_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let ours = name.starts_with(DB_FILE)
            || name.starts_with(NOTES_FILE)
            || name.starts_with("rank-")
            || name == ".gitignore"
            || name == ROOT_FILE
            || name == OWNER_FILE;
        if ours {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Removes what is derived from an index (the ranking index's segments), after the index was
/// replaced: made for the old one, they must never be read beside the new one.
pub(crate) fn remove_derived(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.filter_map(Result::ok) {
        if e.file_name().to_string_lossy().starts_with("rank-") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Bytes of a project's index on disk: the database, its WAL and any other file beside it.
pub(crate) fn size_on_disk(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_private_folder_per_root() {
        let data = Path::new("/data");
        let a = index_dir(data, Path::new("/src/app"), false);
        let b = index_dir(data, Path::new("/other/app"), false);
        assert_ne!(a, b);
        assert!(a.starts_with("/data/indexes") && a.file_name().unwrap().to_string_lossy().starts_with("app-"));
        assert_eq!(index_dir(data, Path::new("/src/app"), true), Path::new("/src/app/.booger"));
        assert!(index_dir(data, Path::new("/"), false).file_name().unwrap().to_string_lossy().starts_with("root-"));
    }

    #[cfg(unix)]
    #[test]
    fn folders_and_files_are_private_and_an_old_index_moves() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let old = root.join(IN_REPO_DIR);
        std::fs::create_dir_all(&old).unwrap();
        std::fs::write(old.join(DB_FILE), b"db").unwrap();
        std::fs::write(old.join(".gitignore"), b"*\n").unwrap();
        let data = tmp.path().join("data");
        let new = index_dir(&data, &root, false);
        let mark = owner_mark(&data, &root).unwrap();
        assert_eq!(mark, owner_mark(&data, &root).unwrap(), "the key is kept");
        assert_ne!(mark, owner_mark(&data, &tmp.path().join("elsewhere")).unwrap());
        assert!(!adopt(&old, &new, &root, &mark).unwrap(), "an unmarked folder is not this daemon's");
        mark_owned(&old, &mark).unwrap();
        assert!(adopt(&old, &new, &root, &mark).unwrap());
        assert_eq!(std::fs::read(new.join(DB_FILE)).unwrap(), b"db");
        assert!(!old.exists(), "the old folder is gone");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&new), 0o700);
        assert_eq!(mode(&new.join(DB_FILE)), 0o600);
        assert_eq!(mode(&tmp.path().join("data").join(INDEXES_DIR)), 0o700);
        assert!(!adopt(&old, &new, &root, &mark).unwrap(), "nothing left to move");
        assert_eq!(mode(&data.join(OWNER_KEY_FILE)), 0o600);
        remove(&new).unwrap();
        assert!(!new.exists());
    }
}
