//! The registry of projects: which directories this daemon indexes and watches.
//!
//! Persisted as `projects.json` in the data dir, rewritten atomically (temp file + rename) on
//! every change, so a crash never leaves half a registry. A file that cannot be read is set
//! aside as `projects.json.corrupt-<time>`, never overwritten.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A registered project, as the registry keeps it and answers name it.
pub(crate) use booger_proto::answers::Project;

#[derive(Debug, Serialize, Deserialize)]
struct OnDisk {
    version: u32,
    projects: Vec<Project>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum RegistryError {
    #[error("{0} does not exist")]
    Missing(PathBuf),
    #[error("{0} is not a directory; give the project's root directory")]
    NotADirectory(PathBuf),
    #[error("cannot read {path}: {source}")]
    Unreadable { path: PathBuf, source: std::io::Error },
    #[error(
        "{root} is {why}: booger does not index it unless told to (`booger projects add {root} --force`); \
         register the repositories inside it instead (`booger projects add-all {root}`)"
    )]
    Refused { root: PathBuf, why: &'static str },
    #[error("cannot save the registry to {path}: {source}")]
    Save { path: PathBuf, source: std::io::Error },
}

#[derive(Debug)]
pub(crate) struct Registry {
    file: PathBuf,
    projects: Vec<Project>,
}

/// Outcome of [`Registry::add`].
#[derive(Debug)]
pub(crate) enum Added {
    New(Project),
    Existing(Project),
    /// Registered already; where its index lives changed.
    Moved(Project),
}

impl Registry {
    /// Loads the registry, or starts empty if there is none yet.
    pub(crate) fn load(file: &Path) -> Self {
        let projects = match std::fs::read(file) {
            Ok(bytes) => match serde_json::from_slice::<OnDisk>(&bytes) {
                Ok(d) => d.projects,
                Err(e) => {
                    let aside = file.with_extension(format!("json.corrupt-{}", crate::base::time::unix_now()));
                    tracing::error!(file = %file.display(), error = %e, aside = %aside.display(),
                        "project registry is unreadable; setting it aside and starting empty");
                    let _ = std::fs::rename(file, &aside);
                    Vec::new()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                tracing::error!(file = %file.display(), error = %e, "cannot read project registry");
                Vec::new()
            }
        };
        Self { file: file.to_owned(), projects }
    }

    pub(crate) fn projects(&self) -> &[Project] {
        &self.projects
    }

    /// Registers `path` (made absolute and canonical), its index in the data directory or,
    /// with `in_repo`, in the project. Adding a registered root is not an error (and moves
    /// its index if `in_repo` differs).
    /// Registers the directory `path` (its index in `<root>/.booger/` with `in_repo`). A root
    /// that is no project ([`refusal`]) is refused unless `force`.
    pub(crate) fn add(&mut self, path: &Path, in_repo: bool, force: bool) -> Result<Added, RegistryError> {
        let root = canonical_dir(path)?;
        if let Some(why) = refusal(&root).filter(|_| !force) {
            return Err(RegistryError::Refused { root, why });
        }
        if let Some(i) = self.projects.iter().position(|p| p.root == root) {
            if self.projects[i].in_repo == in_repo {
                return Ok(Added::Existing(self.projects[i].clone()));
            }
            self.projects[i].in_repo = in_repo;
            if let Err(e) = self.save() {
                self.projects[i].in_repo = !in_repo;
                return Err(e);
            }
            return Ok(Added::Moved(self.projects[i].clone()));
        }
        let project =
            Project { name: self.unique_name(&root), root, added_at: crate::base::time::now_rfc3339(), in_repo };
        self.projects.push(project.clone());
        if let Err(e) = self.save() {
            self.projects.pop();
            return Err(e);
        }
        Ok(Added::New(project))
    }

    /// Unregisters the project named `key`: its name or its root, exactly (a path inside a
    /// project does not remove the whole project).
    pub(crate) fn remove(&mut self, key: &str) -> Result<Option<Project>, RegistryError> {
        let root = booger_proto::paths::canonical(key).unwrap_or_else(|_| PathBuf::from(key));
        let Some(i) = self.projects.iter().position(|p| p.name == key || p.root == root) else {
            return Ok(None);
        };
        let removed = self.projects.remove(i);
        if let Err(e) = self.save() {
            self.projects.insert(i, removed);
            return Err(e);
        }
        Ok(Some(removed))
    }

    /// The project named `key`: its name, its root, or any path inside it (innermost wins).
    pub(crate) fn find(&self, key: &str) -> Option<&Project> {
        self.position(key).map(|i| &self.projects[i])
    }

    /// The registered project whose root contains `path` (the innermost one).
    pub(crate) fn containing(&self, path: &Path) -> Option<&Project> {
        self.projects.iter().filter(|p| path.starts_with(&p.root)).max_by_key(|p| p.root.as_os_str().len())
    }

    fn position(&self, key: &str) -> Option<usize> {
        if let Some(i) = self.projects.iter().position(|p| p.name == key) {
            return Some(i);
        }
        let path = booger_proto::paths::canonical(key).unwrap_or_else(|_| PathBuf::from(key));
        let found = self.containing(&path)?;
        self.projects.iter().position(|p| p.root == found.root)
    }

    fn unique_name(&self, root: &Path) -> String {
        let base = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "root".into());
        let taken = |n: &str| self.projects.iter().any(|p| p.name == n);
        if !taken(&base) {
            return base;
        }
        (2..).map(|i| format!("{base}-{i}")).find(|n| !taken(n)).expect("unbounded range")
    }

    fn save(&self) -> Result<(), RegistryError> {
        let err = |source| RegistryError::Save { path: self.file.clone(), source };
        if let Some(dir) = self.file.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let body = serde_json::to_vec_pretty(&OnDisk { version: 1, projects: self.projects.clone() })
            .expect("registry serializes");
        let tmp = self.file.with_extension("json.tmp");
        crate::base::storage::create_private(&tmp)
            .and_then(|mut f| {
                std::io::Write::write_all(&mut f, &body)?;
                f.sync_all()
            })
            .map_err(err)?;
        std::fs::rename(&tmp, &self.file).map_err(err)
    }
}

/// `path` made absolute and canonical, if it is an existing directory.
/// Why `root` (canonical) is no project to index: the file system's root, the home directory
/// itself, a system tree, or a pseudo file system (whose files never end, or are the
/// machine's state rather than code). None for anything else, `/usr/include` included.
pub(crate) fn refusal(root: &Path) -> Option<&'static str> {
    const PSEUDO: &[&str] = &["/proc", "/sys", "/dev", "/run"];
    const SYSTEM: &[&str] = &[
        "/usr",
        "/etc",
        "/var",
        "/boot",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/opt",
        "/srv",
        "/tmp",
        "/mnt",
        "/media",
        "/snap",
        "/nix",
        "/root",
        "/home",
        "/Users",
        "/System",
        "/Library",
        "/Applications",
        "/private",
        "/Volumes",
    ];
    if root.parent().is_none() {
        return Some("the file system's root");
    }
    if PSEUDO.iter().any(|p| root.starts_with(p)) {
        return Some("inside a pseudo file system");
    }
    if SYSTEM.iter().any(|p| root == Path::new(p)) {
        return Some("a system directory");
    }
    let home = booger_proto::paths::home_dir().and_then(|h| booger_proto::paths::canonical(h).ok());
    if home.as_deref() == Some(root) {
        return Some("your home directory");
    }
    None
}

pub(crate) fn canonical_dir(path: &Path) -> Result<PathBuf, RegistryError> {
    let root = booger_proto::paths::canonical(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => RegistryError::Missing(path.to_owned()),
        _ => RegistryError::Unreadable { path: path.to_owned(), source: e },
    })?;
    if !root.is_dir() {
        return Err(RegistryError::NotADirectory(root));
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_find_remove_and_reload() {
        let home = tempfile::tempdir().unwrap();
        let a = tempfile::tempdir().unwrap();
        let file = home.path().join("projects.json");
        let mut reg = Registry::load(&file);
        let Added::New(p) = reg.add(a.path(), false, false).unwrap() else { panic!("expected new") };
        assert!(matches!(reg.add(a.path(), false, false).unwrap(), Added::Existing(_)));
        assert_eq!(reg.find(&p.name).unwrap().root, p.root);
        assert_eq!(reg.find(p.root.join("sub/file.rs").to_str().unwrap()).unwrap().name, p.name);

        let reg2 = Registry::load(&file);
        assert_eq!(reg2.projects(), reg.projects());

        assert_eq!(reg.remove(&p.name).unwrap().unwrap().root, p.root);
        assert!(Registry::load(&file).projects().is_empty());
    }

    #[test]
    fn corrupt_file_is_set_aside_not_lost() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("projects.json");
        std::fs::write(&file, b"{not json").unwrap();
        let reg = Registry::load(&file);
        assert!(reg.projects().is_empty());
        let aside: Vec<_> = std::fs::read_dir(home.path()).unwrap().filter_map(Result::ok).collect();
        assert!(aside.iter().any(|e| e.file_name().to_string_lossy().starts_with("projects.json.corrupt-")));
    }

    #[test]
    fn rejects_files_and_missing_paths() {
        let home = tempfile::tempdir().unwrap();
        let f = home.path().join("f.txt");
        std::fs::write(&f, b"x").unwrap();
        let mut reg = Registry::load(&home.path().join("projects.json"));
        assert!(matches!(reg.add(&f, false, false), Err(RegistryError::NotADirectory(_))));
        for refused in ["/", "/proc", "/proc/self", "/usr", "/etc"] {
            let err = reg.add(Path::new(refused), false, false).unwrap_err();
            assert!(matches!(err, RegistryError::Refused { .. }), "{refused}: {err}");
            assert!(err.to_string().contains("--force"), "{err}");
        }
        assert_eq!(refusal(Path::new("/usr/include")), None);
        assert!(matches!(reg.add(&home.path().join("nope"), false, false), Err(RegistryError::Missing(_))));
    }
}
