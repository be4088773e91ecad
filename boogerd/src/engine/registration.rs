//! Registering a project: the size check that asks for `--force`, which directory a session's
//! first call means (registration on first use), and starting a new project's watch and first
//! index. The `projects` and `index` tools and the first call of a session all register
//! through here.

use std::path::{Path, PathBuf};

use super::Daemon;
use super::registry::{Added, Project};

use crate::base::sync::Recover;

/// Files that make a directory a project (with `.git`): what `add-all` and registration on
/// first use look for.
pub(crate) const MANIFESTS: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "go.mod",
    "pyproject.toml",
    "setup.py",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "CMakeLists.txt",
    "composer.json",
    "Gemfile",
    "mix.exs",
    "deno.json",
];

/// Why registering `dir` needs `--force` because of its size: more files to index than the
/// daemon's `--confirm-above-files`, counted with the indexing walker (no file is read). `None`
/// for a directory already registered, or within the limit.
pub(crate) fn too_many_files(daemon: &Daemon, dir: &Path) -> Option<String> {
    let limit = daemon.config.confirm_above_files;
    let root = super::registry::canonical_dir(dir).ok()?;
    if limit == 0 || daemon.registry.read().recover().find(&root.to_string_lossy()).is_some() {
        return None;
    }
    // A root the registry refuses anyway (`/`, `/usr`, the home) is refused at once, not
    // after a walk of everything below it.
    if super::registry::refusal(&root).is_some() {
        return None;
    }
    let started = std::time::Instant::now();
    let n = super::index::walk::count_files(&root, limit);
    tracing::debug!(root = %root.display(), files = n, ms = started.elapsed().as_millis() as u64, "counted files");
    (n > limit).then(|| {
        format!(
            "{} holds more than {limit} files to index; indexing that many takes a long while and a large index. \
             If that is what you want: `booger projects add {} --force`. Or register the repositories inside it: \
             `booger projects add-all {}`",
            root.display(),
            root.display(),
            root.display()
        )
    })
}

/// The project a session started in `dir` is about, for registering it on first use: the
/// enclosing git repository, else `dir` if it has a project manifest. Never the file system's
/// root or the home directory itself (a dotfiles repository makes the home a git work tree).
pub(crate) fn first_use_root(dir: &Path) -> Option<PathBuf> {
    let dir = super::registry::canonical_dir(dir).ok()?;
    let root = dir
        .ancestors()
        .find(|a| a.join(".git").exists())
        .map(Path::to_owned)
        .or_else(|| MANIFESTS.iter().any(|m| dir.join(m).is_file()).then(|| dir.clone()))?;
    super::registry::refusal(&root).is_none().then_some(root)
}

/// Registers the project at `root` and starts indexing it (a session's first call in an
/// unregistered repository).
pub(crate) fn register_on_first_use(daemon: &Daemon, root: &Path) -> Result<Project, String> {
    if let Some(why) = too_many_files(daemon, root) {
        return Err(why);
    }
    let added = daemon.registry.write().recover().add(root, false, false).map_err(|e| e.to_string())?;
    let p = match added {
        Added::New(p) => {
            start(daemon, &p, "project registered on first use");
            p
        }
        Added::Existing(p) | Added::Moved(p) => p,
    };
    Ok(p)
}

/// A newly registered project: its index placement, then its watch and first index.
pub(crate) fn start(daemon: &Daemon, p: &Project, why: &str) {
    tracing::info!(project = %p.name, root = %p.root.display(), "{why}");
    daemon.projects.set_in_repo(&p.root, p.in_repo);
    daemon.follow(&p.root);
}
