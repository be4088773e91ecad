//! Publishing one commit of a project to the team index: its files by git blob id (`git
//! ls-tree`, no file read), then the blobs the server lacks, read in batches through one `git
//! cat-file --batch` each and chunked here, each blob once whatever its paths, then the
//! commit itself, whole or not at all.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use crate::domain::git::GitError;
use crate::domain::git::repo::{Head, Repo, split_z};
use crate::domain::search::lexemes::Stems;
use crate::source::chunk::chunk_file;
use crate::store::team::{Blob, Refs, TeamError, TeamStore};

/// Blobs read and sent per batch: one `cat-file` and one transaction each.
const BATCH: usize = 200;
/// Blob ids asked about per query.
const ASKED: usize = 5_000;

#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Team(#[from] TeamError),
}

/// What one publication did.
#[derive(Debug, Clone)]
pub struct Published {
    pub commit: String,
    pub files: usize,
    pub blobs_sent: usize,
    pub new_commit: bool,
    pub elapsed_ms: u64,
}

/// Publishes `rev` of the repository at `root` as `name` to the team index at `url`.
/// Files over `max_file_bytes` are cut into blocks, as the local index cuts them.
pub fn publish(root: &Path, name: &str, rev: &str, url: &str, max_file_bytes: u64) -> Result<Published, PublishError> {
    let started = Instant::now();
    let repo = Repo::open(root)?;
    let commit = repo.commit_of(rev)?;
    let mut team = TeamStore::connect(url)?;
    let files = tree(&repo, &commit)?;
    let done = |blobs_sent, new_commit| Published {
        commit: commit.clone(),
        files: files.len(),
        blobs_sent,
        new_commit,
        elapsed_ms: started.elapsed().as_millis() as u64,
    };
    if team.is_published(name, &commit)? {
        return Ok(done(0, false));
    }
    // Each blob once, under the first path that holds it (its language comes from there).
    let mut path_of: HashMap<&str, &str> = HashMap::new();
    for (path, id) in &files {
        path_of.entry(id.as_str()).or_insert(path.as_str());
    }
    let ids: Vec<String> = path_of.keys().map(|id| (*id).to_owned()).collect();
    let mut missing = Vec::new();
    for group in ids.chunks(ASKED) {
        missing.extend(team.missing_blobs(group)?);
    }
    missing.sort();
    let mut stems = Stems::default();
    for batch in missing.chunks(BATCH) {
        let contents = crate::domain::git::diff::read_blobs(&repo, batch)?;
        let chunked: Vec<_> = batch
            .iter()
            .filter_map(|id| {
                let bytes = contents.get(id)?;
                // What a local run would not index (binary, huge) is not published either.
                if bytes.len() as u64 > crate::source::HUGE_FILE_BYTES || super::index::walk::looks_binary(bytes) {
                    return None;
                }
                let path = path_of.get(id.as_str())?;
                let too_large = bytes.len() as u64 > max_file_bytes;
                let hash = crate::source::hash::file_hash(bytes);
                let chunked = chunk_file(Path::new(path), bytes, too_large);
                // PostgreSQL's text holds no NUL: such a file stays with local indexing.
                if chunked.chunks.iter().any(has_nul) {
                    return None;
                }
                let words: Vec<String> =
                    chunked.chunks.iter().map(|c| stems.chunk_vector(&c.name, &c.content)).collect();
                Some((id, hash, bytes.len(), chunked, words))
            })
            .collect();
        let blobs: Vec<Blob<'_>> = chunked
            .iter()
            .map(|(id, hash, size, c, words)| Blob {
                id,
                content_hash: hash,
                language: c.lang.name(),
                size: *size,
                problem: c.problem.as_deref(),
                chunks: &c.chunks,
                words,
            })
            .collect();
        team.put_blobs(&blobs)?;
    }
    let new_commit = team.publish_commit(name, &commit, &refs(&repo, rev)?, &files)?;
    Ok(done(missing.len(), new_commit))
}

/// The branch `rev` names (HEAD: the branch checked out), and the repository's default
/// branch as [`Repo::default_base`] finds it (without its remote's name).
fn refs(repo: &Repo, rev: &str) -> Result<Refs, GitError> {
    let branch = match (&repo.head, rev) {
        (Head::Branch { name, .. }, "HEAD") => Some(name.clone()),
        _ => repo.resolve(&format!("refs/heads/{rev}"))?.map(|_| rev.to_owned()),
    };
    let default_branch = repo.default_base()?.map(|(name, _)| match name.split_once('/') {
        Some(("origin", rest)) => rest.to_owned(),
        _ => name,
    });
    Ok(Refs { branch, default_branch })
}

/// True if a field of `c` holds a NUL character, which PostgreSQL's text cannot.
fn has_nul(c: &crate::source::chunk::Chunk) -> bool {
    let fields = [Some(c.content.as_str()), Some(&c.name), Some(&c.signature), c.parent.as_deref(), c.doc.as_deref()];
    fields.into_iter().flatten().any(|f| f.contains('\0'))
}

/// The files of `commit` as (path, blob id): regular files only (no links, no submodules).
fn tree(repo: &Repo, commit: &str) -> Result<Vec<(String, String)>, GitError> {
    let out = repo.git.run(&["ls-tree", "-r", "-z", "--full-tree", commit])?;
    let mut files = Vec::new();
    for entry in split_z(&out) {
        // `<mode> <type> <id>\t<path>`
        let Some((meta, path)) = entry.split_once('\t') else { continue };
        let mut parts = meta.split(' ');
        let (Some(mode), Some(kind), Some(id)) = (parts.next(), parts.next(), parts.next()) else { continue };
        if kind == "blob" && (mode == "100644" || mode == "100755") {
            files.push((path.to_owned(), id.to_owned()));
        }
    }
    Ok(files)
}
