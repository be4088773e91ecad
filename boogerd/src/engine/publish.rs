//! Publishing one commit of a project to the team index: its files by git blob id (`git
//! ls-tree`, no file read), then the blobs the server lacks, read in batches through one `git
//! cat-file --batch` each and chunked here, each blob once whatever its paths, then the
//! commit itself, whole or not at all.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::base::sync::Recover;
use crate::domain::git::GitError;
use crate::domain::git::repo::{Head, Repo};
use crate::domain::search::lexemes::Stems;
use crate::source::chunk::{Chunk, chunk_file, verify};
use crate::source::lang::Lang;
use crate::store::Store;
use crate::store::team::{Blob, Lineage, Refs, TeamError, TeamStore, TsVector};

use super::prebuilt::{self, Commit, Offered};

/// Blobs read and sent per batch: one `cat-file` and one transaction each.
const BATCH: usize = 200;
/// Blobs sent from which a publish also refreshes the team index's statistics.
const SETTLE_AFTER: usize = 1_000;

#[derive(Debug, thiserror::Error)]
pub(crate) enum PublishError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Team(#[from] TeamError),
    #[error(
        "git gave no blob that hashes to {id} ({path}): the repository is damaged or its objects were edited \
         (`git fsck` says which); nothing of this commit was published"
    )]
    Unverified { id: String, path: String },
}

/// What one publication did.
#[derive(Debug, Clone)]
pub(crate) struct Published {
    pub commit: String,
    pub files: usize,
    pub blobs_sent: usize,
    pub new_commit: bool,
    pub elapsed_ms: u64,
    /// The project's index offered with the commit (none without a local index), and how
    /// long that took (within `elapsed_ms`).
    pub prebuilt: Option<(Offered, u64)>,
}

/// Publishes `rev` of the repository at `root` as `name` to the team index at `url`.
/// Files over `max_file_bytes` are cut into blocks, as the local index cuts them. A blob the
/// project's local index (`local`) holds at its path, same content, is taken from there
/// instead of being chunked again.
pub(crate) fn publish(
    root: &Path,
    name: &str,
    rev: &str,
    url: &str,
    max_file_bytes: u64,
    local: Option<&Store>,
    force: bool,
) -> Result<Published, PublishError> {
    let started = Instant::now();
    let repo = Repo::open(root)?;
    let commit = repo.commit_of(rev)?;
    let lineage = Lineage { roots: repo.roots(&commit)?, force };
    let mut team = TeamStore::connect(url)?;
    // Another repository's name is refused before anything is sent (and again as the commit
    // is recorded, against a racing publish).
    team.check_lineage(name, &lineage)?;
    let files = repo.files_at(&commit)?;
    let refs = refs(&repo, rev)?;
    let offered = || Commit { repo: &repo, name, sha: &commit, branch: refs.branch.as_deref(), files: &files };
    // The project's own index, offered with the commit (whenever it is not stored yet: a
    // publish that skipped it, or made before, is made good by the next); `ahead` is its copy
    // made while the rows were sent, if one was.
    let offer = |team: &mut TeamStore, ahead| {
        let local = local?;
        let began = Instant::now();
        Some((prebuilt::offer(team, &offered(), local, ahead), began.elapsed().as_millis() as u64))
    };
    let done = |blobs_sent, new_commit, prebuilt| Published {
        commit: commit.clone(),
        files: files.len(),
        blobs_sent,
        new_commit,
        elapsed_ms: started.elapsed().as_millis() as u64,
        prebuilt,
    };
    if team.is_published(name, &commit)? {
        let prebuilt = offer(&mut team, None);
        return Ok(done(0, false, prebuilt));
    }
    let (path_of, missing) = missing_blobs(&mut team, &files)?;
    // One thread prepares the batches (read, chunk, words) while they are sent; a large
    // publish sends on two connections at once: PostgreSQL's share (parsing the words,
    // growing the GIN indexes) is the larger, and one connection is one server process.
    let prepare = Prepare { repo: &repo, path_of: &path_of, max_file_bytes, local };
    let mut second = if missing.len() > 2 * BATCH { Some(bulk_connections(&mut team, url)?) } else { None };
    // The project's index is copied for its offer while the rows are sent: during the rows
    // the publisher waits on the server, which a team runs on another machine (a 1.7 GB
    // index took 9-33 s to copy after the rows). On two cores shared with the server the
    // machine is busy throughout and the copy mostly moves instead (measured: about even).
    let copy_ahead = local.filter(|l| prebuilt::worth_copying_ahead(&mut team, &offered(), l));
    let stop_copying = Arc::new(AtomicBool::new(false));
    std::thread::scope(|s| {
        let stop = &stop_copying;
        let ahead = copy_ahead.map(|local| s.spawn(move || prebuilt::copy(local, stop)));
        let sent = send_rows(&mut team, second.as_mut(), prepare, &missing)
            .and_then(|()| Ok(team.publish_commit(name, &commit, &refs, &lineage, &files)?));
        // A publish that failed says so at once, not once the copy is made.
        stop_copying.store(sent.is_err(), Ordering::Relaxed);
        let new_commit = sent?;
        // (Joined as the scope ends: the publish answers once the server has settled.)
        let _settling = new_commit.then(|| settle(s, &mut team, second.as_mut(), missing.len())).flatten();
        let ahead = ahead.map(|copying| copying.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        let prebuilt = offer(&mut team, ahead);
        Ok(done(missing.len(), new_commit, prebuilt))
    })
}

/// Settles what this publish added to the word and trigram indexes, which waits in their
/// pending lists that every search reads through: merged now (cheap for a few blobs; fifty
/// small publishes left unmerged made each team search 20 ms slower). The planner learns of
/// the new commit (cheap); a publish that added much (a first one) also brings every table's
/// statistics up to date, which costs seconds on a large index and is otherwise left to the
/// server's autovacuum. A large publish settles on its second connection, on a thread of the
/// scope, while the first offers the local index (booger's copying and the server's merging,
/// a core each; left to after the publish answered, the server's autovacuum took its place).
fn settle<'s, 'e>(
    s: &'s std::thread::Scope<'s, 'e>,
    team: &mut TeamStore,
    second: Option<&'e mut TeamStore>,
    sent: usize,
) -> Option<std::thread::ScopedJoinHandle<'s, ()>> {
    let analyze = sent >= SETTLE_AFTER;
    match second {
        Some(other) => Some(s.spawn(move || other.settle(sent, analyze))),
        None => {
            team.settle(sent, analyze);
            None
        }
    }
}

/// Each blob of `files` once, under the first path that holds it (its language comes from
/// there), and those the team index lacks, in path order: a batch's blobs are the tree's
/// neighbours, which share most of their trigrams (the team index indexes them by group of
/// neighbours).
fn missing_blobs<'f>(
    team: &mut TeamStore,
    files: &'f [(String, String)],
) -> Result<(HashMap<&'f str, &'f str>, Vec<String>), PublishError> {
    let mut path_of: HashMap<&str, &str> = HashMap::new();
    for (path, id) in files {
        path_of.entry(id.as_str()).or_insert(path.as_str());
    }
    let ids: Vec<String> = path_of.keys().map(|id| (*id).to_owned()).collect();
    let mut missing: Vec<String> = team.missing_blobs(&ids)?.into_iter().collect();
    missing.sort_by(|a, b| path_of[a.as_str()].cmp(path_of[b.as_str()]));
    Ok((path_of, missing))
}

/// `team` set for bulk writes, and a second connection so set, for a large publish.
fn bulk_connections(team: &mut TeamStore, url: &str) -> Result<TeamStore, PublishError> {
    team.for_bulk_writes()?;
    let mut other = TeamStore::connect(url)?;
    other.for_bulk_writes()?;
    Ok(other)
}

/// Sends the blobs `missing`, prepared on a thread of their own, on `team` (and `second`
/// alongside, for a large publish).
fn send_rows(
    team: &mut TeamStore,
    second: Option<&mut TeamStore>,
    prepare: Prepare<'_>,
    missing: &[String],
) -> Result<(), PublishError> {
    let (ready, batches) = std::sync::mpsc::sync_channel::<Result<Batch, PublishError>>(2);
    let batches = std::sync::Mutex::new(Some(batches));
    std::thread::scope(|s| -> Result<(), PublishError> {
        s.spawn(move || {
            let mut stems = Stems::default();
            for batch in missing.chunks(BATCH) {
                if ready.send(prepare.batch(batch, &mut stems)).is_err() {
                    return; // the senders failed and stopped listening
                }
            }
        });
        let batches = &batches;
        let helper = second.map(|team| s.spawn(move || send(team, batches)));
        let mine = send(team, batches);
        let theirs = helper.map_or(Ok(()), |h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        mine.and(theirs)
    })
}

/// Sends prepared batches on `team` until there are none; on a failure, stops every sender
/// and the preparing thread (the receiver is dropped) and returns it.
fn send(
    team: &mut TeamStore,
    batches: &std::sync::Mutex<Option<std::sync::mpsc::Receiver<Result<Batch, PublishError>>>>,
) -> Result<(), PublishError> {
    let result = (|| loop {
        let next = match batches.lock().recover().as_ref() {
            Some(rx) => rx.recv(),
            None => return Ok(()), // another sender failed
        };
        let Ok(batch) = next else { return Ok(()) };
        let batch = batch?;
        let blobs: Vec<Blob<'_>> = batch.ready.iter().map(Prepared::blob).collect();
        team.put_blobs(&blobs)?;
        team.refuse(&batch.refused)?;
    })();
    if result.is_err() {
        batches.lock().recover().take();
    }
    result
}

/// What preparing a batch of blobs reads.
#[derive(Clone, Copy)]
struct Prepare<'a> {
    repo: &'a Repo,
    path_of: &'a HashMap<&'a str, &'a str>,
    max_file_bytes: u64,
    local: Option<&'a Store>,
}

/// A batch of blobs: those ready to send, and those the team index does not take (binary,
/// huge, holding a NUL), recorded so that no later publish reads them again.
struct Batch {
    ready: Vec<Prepared>,
    refused: Vec<String>,
}

/// One blob ready to send.
struct Prepared {
    id: String,
    hash: String,
    size: usize,
    language: &'static str,
    problem: Option<String>,
    generated_header: bool,
    chunks: Vec<Chunk>,
    words: Vec<TsVector>,
    names: Vec<TsVector>,
}

impl Prepared {
    fn blob(&self) -> Blob<'_> {
        Blob {
            id: &self.id,
            content_hash: &self.hash,
            language: self.language,
            size: self.size,
            problem: self.problem.as_deref(),
            generated_header: self.generated_header,
            chunks: &self.chunks,
            words: &self.words,
            names: &self.names,
        }
    }
}

impl Prepare<'_> {
    /// Reads the blobs of `batch` through one `git cat-file`, and chunks each (or takes its
    /// chunks from the local index) with its words.
    fn batch(&self, batch: &[String], stems: &mut Stems) -> Result<Batch, PublishError> {
        let contents = crate::domain::git::diff::read_blobs(self.repo, batch)?;
        // What is published under an id is that blob (git read without replace objects, each
        // object's bytes hashed): one git does not give as such stops the publish.
        if let Some(id) = batch.iter().find(|id| !contents.contains_key(*id)) {
            let path = self.path_of.get(id.as_str()).copied().unwrap_or_default();
            return Err(PublishError::Unverified { id: id.clone(), path: crate::base::text::printable(path) });
        }
        let mut refused = Vec::new();
        let ready = batch
            .iter()
            .filter_map(|id| {
                let bytes = contents.get(id)?;
                // What a local run would not index (binary, huge) is not published either.
                if bytes.len() as u64 > crate::source::HUGE_FILE_BYTES || super::index::walk::looks_binary(bytes) {
                    refused.push(id.clone());
                    return None;
                }
                let path = self.path_of.get(id.as_str())?;
                let hash = crate::source::hash::file_hash(bytes);
                let language = Lang::detect(Path::new(path), bytes);
                // (A file the index set aside, generated or vendored, has no chunks there.) The
                // index is a file anyone with the user's rights could edit: its chunks are
                // taken only if they are these bytes'.
                let indexed = self
                    .local
                    .and_then(|store| store.indexed_version(path, &hash).ok().flatten())
                    .filter(|(chunks, _)| !chunks.is_empty())
                    .filter(|(chunks, _)| match verify::check(bytes, chunks) {
                        Ok(()) => true,
                        Err(why) => {
                            tracing::warn!(path = %crate::base::text::printable(path), %why, "local chunks not published: chunked again");
                            false
                        }
                    });
                let (chunks, problem) = match indexed {
                    Some(version) => version,
                    None => {
                        let c = chunk_file(Path::new(path), bytes, bytes.len() as u64 > self.max_file_bytes);
                        (c.chunks, c.problem)
                    }
                };
                // PostgreSQL's text holds no NUL: such a file stays with local indexing.
                if chunks.iter().any(has_nul) {
                    refused.push(id.clone());
                    return None;
                }
                let words = chunks.iter().map(|c| stems.chunk_vector(&c.name, &c.content)).collect();
                let names = chunks.iter().map(|c| stems.name_vector(&c.name)).collect();
                Some(Prepared {
                    id: id.clone(),
                    hash,
                    size: bytes.len(),
                    language: language.name(),
                    problem,
                    generated_header: super::index::origin::has_generated_header(bytes),
                    chunks,
                    words,
                    names,
                })
            })
            .collect();
        Ok(Batch { ready, refused })
    }
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
