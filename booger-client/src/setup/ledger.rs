//! What `booger setup` changed, so that `booger setup --remove` can undo it exactly.
//!
//! For every configuration file it changes, setup keeps (in the data directory, never beside
//! the user's files) a copy of the file as it was before booger was first added, and a
//! fingerprint of what it wrote last. `--remove` puts the copy back, byte for byte, when the
//! file still holds exactly what setup wrote; when the user (or the client) changed it since,
//! it takes only booger's entry out and keeps their changes.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

pub struct Ledger {
    file: PathBuf,
    backups: PathBuf,
    records: Vec<Record>,
}

#[derive(Debug, Clone)]
struct Record {
    /// The configuration file.
    path: PathBuf,
    /// The copy of it before booger was added; None when setup created the file.
    backup: Option<PathBuf>,
    /// Fingerprint of the bytes setup wrote last.
    written: String,
    /// Directories setup created for the file, innermost first (removed again when empty).
    created_dirs: Vec<PathBuf>,
    /// The file's permission bits before setup first changed it (a team token makes it
    /// private; putting the copy back puts these back too).
    mode: Option<u32>,
}

/// What `--remove` did with a file.
pub enum Undo {
    /// The file is back as it was before setup (or gone, if setup created it).
    Restored,
    /// The file changed since setup wrote it (or setup never did): edit booger out instead.
    EditOut,
}

impl Ledger {
    pub fn load(data_dir: &Path) -> Ledger {
        let dir = data_dir.join("setup");
        let file = dir.join("ledger.json");
        let records = std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|v| v.get("files").and_then(Value::as_array).cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|r| {
                let path = PathBuf::from(r.get("path")?.as_str()?);
                let backup = r.get("backup").and_then(Value::as_str).map(PathBuf::from);
                let written = r.get("written")?.as_str()?.to_owned();
                let created_dirs = r
                    .get("created_dirs")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(PathBuf::from).collect())
                    .unwrap_or_default();
                let mode = r.get("mode").and_then(Value::as_u64).and_then(|m| u32::try_from(m).ok());
                Some(Record { path, backup, written, created_dirs, mode })
            })
            .collect();
        Ledger { file, backups: dir.join("backups"), records }
    }

    /// Where the copy of `path` from before booger was added is kept, if setup changed it.
    pub fn backup_of(&self, path: &Path) -> Option<&Path> {
        self.records.iter().find(|r| r.path == path).and_then(|r| r.backup.as_deref())
    }

    /// Whether setup wrote `path`.
    pub fn knows(&self, path: &Path) -> bool {
        self.records.iter().any(|r| r.path == path)
    }

    /// Write `new` to `path` (the file `client` reads), keeping a copy of `old` first
    /// unless setup already holds the copy from before booger was added.
    pub fn write(&mut self, client: &str, path: &Path, old: Option<&[u8]>, new: &str) -> std::io::Result<()> {
        let known = self.records.iter().position(|r| r.path == path);
        let mut created_dirs = Vec::new();
        if known.is_none() {
            let mut dir = path.parent();
            while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
                created_dirs.push(d.to_owned());
                dir = d.parent();
            }
        }
        let mode = known.is_none().then(|| permission_bits(path)).flatten();
        let backup = match (known, old) {
            (None, Some(bytes)) => {
                create_private_dir(&self.backups)?;
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let copy = self
                    .backups
                    .join(format!("{client}-{:016x}-{name}", fingerprint(path.as_os_str().as_encoded_bytes())));
                std::fs::write(&copy, bytes)?;
                Some(copy)
            }
            _ => None,
        };
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        replace_file(path, new.as_bytes())?;
        let written = format!("{:016x}", fingerprint(new.as_bytes()));
        match known {
            Some(i) => self.records[i].written = written,
            None => self.records.push(Record { path: path.to_owned(), backup, written, created_dirs, mode }),
        }
        self.save()
    }

    /// Undo setup's change to `path` if the file still holds what setup wrote.
    pub fn undo(&mut self, path: &Path) -> std::io::Result<Undo> {
        let Some(i) = self.records.iter().position(|r| r.path == path) else {
            return Ok(Undo::EditOut);
        };
        let r = self.records[i].clone();
        let now = std::fs::read(path).ok();
        if now.as_deref().map(fingerprint).map(|f| format!("{f:016x}")) != Some(r.written.clone()) {
            return Ok(Undo::EditOut);
        }
        match &r.backup {
            Some(copy) => {
                replace_file(path, &std::fs::read(copy)?)?;
                #[cfg(unix)]
                if let Some(mode) = r.mode {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
                }
            }
            None => {
                std::fs::remove_file(path)?;
                for d in &r.created_dirs {
                    // Only if empty: the user may have put something there since.
                    let _ = std::fs::remove_dir(d);
                }
            }
        }
        self.forget(path)?;
        Ok(Undo::Restored)
    }

    /// Drop the record of `path` (after booger was edited out of it by hand or by `--remove`).
    pub fn forget(&mut self, path: &Path) -> std::io::Result<()> {
        if let Some(i) = self.records.iter().position(|r| r.path == path) {
            let r = self.records.remove(i);
            if let Some(copy) = r.backup {
                let _ = std::fs::remove_file(copy);
            }
            self.save()?;
        }
        Ok(())
    }

    fn save(&self) -> std::io::Result<()> {
        let files: Vec<Value> = self
            .records
            .iter()
            .map(|r| {
                json!({
                    "path": r.path,
                    "backup": r.backup,
                    "written": r.written,
                    "created_dirs": r.created_dirs,
                    "mode": r.mode,
                })
            })
            .collect();
        if let Some(d) = self.file.parent() {
            create_private_dir(d)?;
        }
        let text = serde_json::to_string_pretty(&json!({ "files": files })).expect("ledger serializes");
        replace_file(&self.file, text.as_bytes())
    }
}

/// `path`'s permission bits, if it exists (Unix).
fn permission_bits(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).ok().map(|m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// FNV-1a, 64 bits: enough to tell whether a file still holds what setup wrote.
fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

/// Replace `path`'s content all at once (a temporary file renamed over it), keeping its
/// permissions, and writing through a symbolic link to the file it points to (dotfiles
/// managed by symlinks stay links).
pub fn replace_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = booger_proto::paths::canonical(path).unwrap_or_else(|_| path.to_owned());
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.booger-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(&target) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Create `dir` and any missing parent readable only by the user (the data directory holds
/// copies of configuration files, which may carry tokens).
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    crate::platform::private_dir_builder().recursive(true).create(dir)
}
