//! Filling a new project's empty index from the team index: every file the walk would index
//! whose blob (`git ls-files -s`) the team holds, and that is not changed in the working
//! tree, gets the team's chunks and hash, with its size and time from the walk, once the
//! chunks are checked against the file's bytes (a read and a hash, no parse).
//! The first run then finds those files unchanged and reads only what differs (local edits,
//! untracked files, unpublished commits). Nothing is parsed or embedded twice; the Merkle root
//! is the one a from-scratch index would have.

use std::collections::HashMap;
use std::path::Path;

use super::index::{sort_out, walk, with_generated};
use crate::domain::git::GitError;
use crate::domain::git::repo::Repo;
use crate::source::chunk::verify;
use crate::source::lang::Lang;
use crate::store::team::{TeamError, TeamStore};
use crate::store::{FileWrite, Store, StoreError};

/// Files written per transaction.
const BATCH: usize = 500;

#[derive(Debug, thiserror::Error)]
pub(crate) enum SeedError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Team(#[from] TeamError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Seeds the empty `store` of the repository at `root`, whose HEAD is `head` ([`head`]),
/// from the team index at `url`; the number of files filled (0 when HEAD is not published).
pub(crate) fn seed(root: &Path, head: &str, store: &Store, url: &str) -> Result<usize, SeedError> {
    let repo = Repo::open(root)?;
    let mut team = TeamStore::connect_to_read(url)?;
    if !team.has_commit(head)? {
        return Ok(0);
    }
    let staged = repo.staged_files()?;
    let changed = repo.unstaged_changes()?;
    let mut tree = walk::walk(root);
    sort_out(root, &mut tree, &[], with_generated(store)?);
    let wanted: Vec<(&walk::Walked, &String)> = tree
        .files
        .iter()
        .filter(|w| !changed.contains(&w.rel))
        .filter_map(|w| staged.get(&w.rel).map(|id| (w, id)))
        .collect();
    let now = crate::base::time::now_rfc3339();
    let mut filled = 0;
    for batch in wanted.chunks(BATCH) {
        let ids: Vec<String> = batch.iter().map(|(_, id)| (*id).clone()).collect();
        let blobs: HashMap<String, crate::store::team::StoredBlob> =
            team.blobs(&ids)?.into_iter().map(|b| (b.id.clone(), b)).collect();
        let writes: Vec<FileWrite> = batch
            .iter()
            .filter_map(|(w, id)| {
                let b = blobs.get(*id).filter(|b| same_language(&w.rel, b))?;
                // A header that marks it generated: the run sets it aside.
                if w.header_decides && b.generated_header {
                    return None;
                }
                // Taken only if it is this file's: the run chunks any other itself.
                if let Err(why) = file_holds(&root.join(&w.rel), &b.content_hash, &b.chunks) {
                    tracing::warn!(path = %w.rel, %why, "team chunks not taken: they are not the file's");
                    return None;
                }
                Some(FileWrite {
                    path: w.rel.clone(),
                    size: w.size,
                    mtime_ns: w.mtime_ns,
                    hash: b.content_hash.clone(),
                    language: b.language.clone(),
                    problem: b.problem.clone(),
                    chunks: Some(b.chunks.clone()),
                    grams: None,
                    words: None,
                    packed: None,
                    ways: None,
                })
            })
            .collect();
        filled += writes.len();
        store.write_files(writes, &[], &now, |_, _| {})?;
    }
    Ok(filled)
}

/// Whether the file at `path` on disk hashes to `hash` and holds `chunks` ([`verify`]): chunks
/// made elsewhere (the team's, a teammate's prebuilt index) are not believed, and what
/// reaches this index is in the file. Read as a repository's files are read (no FIFO, no
/// final link).
pub(super) fn file_holds(path: &Path, hash: &str, chunks: &[crate::source::chunk::Chunk]) -> Result<(), String> {
    let bytes = crate::base::repo_file::read(path, crate::source::HUGE_FILE_BYTES)
        .map_err(|e| e.to_string())?
        .ok_or("it is larger than any file booger indexes")?;
    verify::check_file(&bytes, hash, chunks).map_err(|e| e.to_string())
}

/// Whether `path` reads as the language its blob was chunked as: the team chunked each blob
/// once, under one of its paths, and a copy under a name of another language (a header kept
/// as `.txt`) is chunked here instead.
fn same_language(path: &str, blob: &crate::store::team::StoredBlob) -> bool {
    // The start of the file, for a shebang: the chunk that starts at its first byte.
    let head = blob.chunks.iter().find(|c| c.start_byte == 0).map_or("", |c| c.content.as_str());
    Lang::detect(Path::new(path), head.as_bytes()).name() == blob.language
}

/// The commit checked out at `root`, if it is a repository with one.
pub(crate) fn head(root: &Path) -> Option<String> {
    Repo::open(root).ok()?.commit_of("HEAD").ok()
}
