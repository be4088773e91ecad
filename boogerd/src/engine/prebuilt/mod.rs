//! Prebuilt local indexes through the team index. A publish offers the project's own index
//! of the commit it published, when that index holds nothing but the commit's files as
//! committed (a copy holding an uncommitted edit, or a file git does not track, would hand
//! teammates what was never published). A fresh clone whose HEAD (or its merge base with the
//! default branch) has one starts from it: written as a file, no row inserted; the files git
//! shows as they were committed, once their entries are checked against the files on disk,
//! get their size and time there, so the first run reads only what differs (and every file
//! whose entry is not the file's). Its vectors are stored apart and follow on the
//! embedding thread ([`vectors`]).

mod parts;
pub(crate) mod vectors;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::domain::git::GitError;
use crate::domain::git::repo::Repo;
use crate::store::prebuilt::{
    Refused, Verified, adopt_received, check_received, clear_for_clones, file_id_pieces, files_of, files_with_chunks,
    format,
};
use crate::store::team::{Piece, PrebuiltInfo, TeamError, TeamStore};
use crate::store::{Store, StoreError};

use parts::{Handoff, Sparse, Unpacked, send};

/// A stored prebuilt index serves a commit that changes at most one file in this many of
/// it: a clone of that commit indexes those files itself (a 1% branch of a 27,000-file tree:
/// under a second), and a publish of it sends no index of its own.
const NEAR_ENOUGH: usize = 50;

#[derive(Debug, thiserror::Error)]
pub(crate) enum PrebuiltError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Team(#[from] TeamError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("the prebuilt index was refused: {0}")]
    Refused(#[from] Refused),
    #[error("the prebuilt index is not as stored: {0}")]
    Mismatch(String),
    #[error("the prebuilt index ({bytes} bytes) would take more than half the free disk ({free} bytes)")]
    NoRoom { bytes: u64, free: u64 },
}

/// What offering the project's index with a published commit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Offered {
    /// Stored: its size, and compressed (its vectors' among them).
    Sent { bytes: u64, packed: u64 },
    /// The team index holds one for the commit already.
    Already,
    /// The team index holds one for a commit this one changes little (`changed` files): a
    /// clone of this commit starts from that one and indexes the difference.
    Near { sha: String, changed: usize },
    /// Not offered, and why.
    Skipped(String),
}

/// What an offer needs to know of the commit just published.
pub(crate) struct Commit<'a> {
    pub repo: &'a Repo,
    /// Its name in the team index.
    pub name: &'a str,
    pub sha: &'a str,
    pub branch: Option<&'a str>,
    /// Its files, as (path, blob id).
    pub files: &'a [(String, String)],
}

/// A copy of the project's index made for an offer, and how long copying took.
pub(crate) struct Copied {
    file: Scratch,
    took: std::time::Duration,
}

/// Copies the project's index for an offer (abandoned soon after `stop` is set). Made while
/// the commit's rows are sent when [`worth_copying_ahead`] says so (the publisher then
/// mostly waits on the server).
pub(crate) fn copy(local: &Store, stop: &Arc<AtomicBool>) -> Result<Copied, PrebuiltError> {
    let started = std::time::Instant::now();
    let file = Scratch(local.path().with_extension("db.offer"));
    file.clear();
    crate::base::storage::create_private_file(&file.0)?;
    local.copy_into(&file.0, stop)?;
    Ok(Copied { file, took: started.elapsed() })
}

/// Whether to copy the project's index before the commit's rows are sent: the team index
/// holds no prebuilt index of the commit or of one near it, and git says the working tree
/// holds the commit as committed wherever the local index holds a file. (Only a guess: the
/// offer checks the copy against the published rows. A working tree with edits is not
/// copied.)
pub(crate) fn worth_copying_ahead(team: &mut TeamStore, commit: &Commit<'_>, local: &Store) -> bool {
    let mut guess = || -> Result<bool, PrebuiltError> {
        if !matches!(stored_for(team, commit)?, Stored::None) || commit.repo.commit_of("HEAD")? != commit.sha {
            return Ok(false);
        }
        let indexed = local.hashes()?;
        if indexed.len() * 2 < commit.files.len() {
            return Ok(false);
        }
        let committed: std::collections::HashSet<&str> = as_committed(commit.repo, commit.files)?.collect();
        Ok(indexed.iter().all(|(path, _)| committed.contains(path.as_str())))
    };
    guess().unwrap_or_else(|e| {
        tracing::debug!(error = %e, "prebuilt index: not copied ahead");
        false
    })
}

/// What the team index holds for a commit about to be offered.
enum Stored {
    None,
    Already,
    Near { sha: String, changed: usize },
}

fn stored_for(team: &mut TeamStore, commit: &Commit<'_>) -> Result<Stored, PrebuiltError> {
    let stored = usable(team.prebuilts_near(&[], Some(commit.name))?);
    if stored.iter().any(|s| s.sha == commit.sha) {
        return Ok(Stored::Already);
    }
    if let Some((near, changed)) = nearest(commit.repo, &stored, commit.sha)
        && changed * NEAR_ENOUGH <= commit.files.len()
    {
        return Ok(Stored::Near { sha: near.sha.clone(), changed });
    }
    Ok(Stored::None)
}

/// Offers `local` (the project's index) as the prebuilt index of `commit`, if it holds only
/// the commit's files as committed; `ahead` is the copy made while the rows were sent, if
/// one was. A failure is reported as a skip: the commit is published either way.
pub(crate) fn offer(
    team: &mut TeamStore,
    commit: &Commit<'_>,
    local: &Store,
    ahead: Option<Result<Copied, PrebuiltError>>,
) -> Offered {
    match try_offer(team, commit, local, ahead) {
        Ok(offered) => offered,
        Err(e) => {
            tracing::warn!(error = %e, "prebuilt index not offered");
            Offered::Skipped(e.to_string())
        }
    }
}

fn try_offer(
    team: &mut TeamStore,
    commit: &Commit<'_>,
    local: &Store,
    ahead: Option<Result<Copied, PrebuiltError>>,
) -> Result<Offered, PrebuiltError> {
    match stored_for(team, commit)? {
        Stored::Already => return Ok(Offered::Already),
        Stored::Near { sha, changed } => return Ok(Offered::Near { sha, changed }),
        Stored::None => {}
    }
    let started = std::time::Instant::now();
    let copied_ahead = matches!(ahead, Some(Ok(_)));
    let copied = match ahead {
        Some(Ok(copied)) => copied,
        ahead => {
            if let Some(Err(e)) = ahead {
                tracing::debug!(error = %e, "prebuilt index: the copy made ahead failed; copying again");
            }
            // The live index first: a working tree with edits (a publish from a laptop) is
            // told so at once, without copying the index.
            if let Some(why) = differs(team, commit, &local.hashes()?)? {
                return Ok(Offered::Skipped(why));
            }
            copy(local, &Arc::default())?
        }
    };
    let copied_in = started.elapsed();
    let copy = &copied.file;
    // The copy is what is offered: checked against the commit (the index may have changed
    // since git was asked, or while it was copied).
    if let Some(why) = differs(team, commit, &files_of(&copy.0)?)? {
        return Ok(Offered::Skipped(why));
    }
    let checked = started.elapsed();
    let Some(upload) = team.begin_prebuilt(commit.name, commit.sha, commit.branch, format())? else {
        return Ok(Offered::Already);
    };
    // The vectors first, read from the copy; then the copy without them (and without what
    // else a clone makes again).
    let mut count = 0;
    let (upload, vectors) = send(upload, Piece::Vectors, |w| {
        count = vectors::write_vectors(&copy.0, w)?;
        Ok(())
    })?;
    let vectors_sent = started.elapsed();
    clear_for_clones(&copy.0)?;
    let cleared = started.elapsed();
    let (upload, index) = send(upload, Piece::Index, |w| {
        std::io::copy(&mut std::fs::File::open(&copy.0)?, w)?;
        Ok(())
    })?;
    upload.finish(&index.stored, &vectors.stored)?;
    let (bytes, packed) = (index.stored.bytes + vectors.stored.bytes, index.packed + vectors.packed);
    let ms = |d: std::time::Duration| d.as_millis() as u64;
    tracing::info!(
        bytes = index.stored.bytes,
        packed = index.packed,
        vectors = count,
        vector_bytes = vectors.stored.bytes,
        vectors_packed = vectors.packed,
        copied_ahead,
        copy_ms = ms(copied.took),
        copy_wait_ms = ms(copied_in),
        check_ms = ms(checked - copied_in),
        vectors_ms = ms(vectors_sent - checked),
        clear_ms = ms(cleared - vectors_sent),
        send_ms = ms(started.elapsed() - cleared),
        "prebuilt index offered"
    );
    Ok(Offered::Sent { bytes, packed })
}

/// Why the index copied at `indexed` (as (path, hash)) is not the commit's, if it is not:
/// a file the commit does not hold or holds otherwise; or too few of its files.
fn differs(
    team: &mut TeamStore,
    commit: &Commit<'_>,
    indexed: &[(String, String)],
) -> Result<Option<String>, PrebuiltError> {
    let blob_of: HashMap<&str, &str> = commit.files.iter().map(|(p, b)| (p.as_str(), b.as_str())).collect();
    if indexed.len() * 2 < commit.files.len() {
        return Ok(Some(format!(
            "the local index holds {} of the commit's {} files (index it first)",
            indexed.len(),
            commit.files.len()
        )));
    }
    if let Some((path, _)) = indexed.iter().find(|(p, _)| !blob_of.contains_key(p.as_str())) {
        return Ok(Some(format!("the local index holds {path}, which the commit does not")));
    }
    let ids: Vec<String> = indexed.iter().map(|(p, _)| blob_of[p.as_str()].to_owned()).collect();
    let mut hash_of = team.content_hashes(&ids)?;
    // Blobs the team index did not take (a NUL in a text file): hashed from git.
    let unknown: Vec<String> = ids.iter().filter(|id| !hash_of.contains_key(*id)).cloned().collect();
    for (id, bytes) in crate::domain::git::diff::read_blobs(commit.repo, &unknown)? {
        hash_of.insert(id, crate::source::hash::file_hash(&bytes));
    }
    let changed = indexed.iter().filter(|(p, h)| hash_of.get(blob_of[p.as_str()]) != Some(h)).count();
    Ok((changed > 0).then(|| {
        format!("{changed} files of the local index differ from the commit (uncommitted edits, or not indexed since)")
    }))
}

/// The stored prebuilt indexes this booger can take (made with its schema).
fn usable(stored: Vec<PrebuiltInfo>) -> Vec<PrebuiltInfo> {
    stored.into_iter().filter(|s| s.format == format()).collect()
}

/// Of `stored`, the one whose commit differs from `target` in the fewest files, and how
/// many (commits this clone does not have are passed over).
fn nearest<'a>(repo: &Repo, stored: &'a [PrebuiltInfo], target: &str) -> Option<(&'a PrebuiltInfo, usize)> {
    stored
        .iter()
        .filter_map(|s| Some((s, repo.files_changed_between(&s.sha, target).ok()?)))
        .min_by_key(|(_, changed)| *changed)
}

/// A prebuilt index written for a clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Restored {
    /// The commit it is of.
    pub sha: String,
    /// Its vectors are stored apart: [`vectors::receive_vectors`] reads them.
    pub vectors_apart: bool,
}

/// Writes the prebuilt index nearest the clone at `root` (HEAD `head`) to `into`, checked
/// and made this machine's; `None` when the team index holds none for this repository. The
/// repository is known by HEAD or its merge base with the default branch being published;
/// the nearest is HEAD's own, else the one fewest files away (the run then indexes those).
/// `into` is left half-written on a failure: the caller removes it.
pub(crate) fn restore(
    root: &Path,
    url: &str,
    head: &str,
    into: &Path,
    choices: &[&str],
) -> Result<Option<Restored>, PrebuiltError> {
    let repo = Repo::open(root)?;
    let mut known = vec![head.to_owned()];
    if let Ok(Some((_, base))) = repo.default_base()
        && let Ok(Some(merge_base)) = repo.merge_base(head, &base)
    {
        known.push(merge_base);
    }
    let mut team = TeamStore::connect_to_read(url)?;
    let stored = usable(team.prebuilts_near(&known, None)?);
    let chosen = stored.iter().find(|s| s.sha == head).or_else(|| nearest(&repo, &stored, head).map(|(s, _)| s));
    let Some(info) = chosen else { return Ok(None) };
    let started = std::time::Instant::now();
    let sha = &info.sha;
    let dir = into.parent().unwrap_or(Path::new("."));
    let free = crate::base::storage::free_bytes(dir).unwrap_or(u64::MAX);
    if info.index.bytes > free / 2 {
        return Err(PrebuiltError::NoRoom { bytes: info.index.bytes, free });
    }
    crate::base::storage::create_private_file(into)?;
    let file = std::fs::OpenOptions::new().write(true).truncate(true).open(into)?;
    // Which files of the clone are as committed (git's work, a stat each) is learnt while
    // the index arrives.
    let (hash, here) = std::thread::scope(|s| {
        let here = s.spawn(|| unchanged_here(&repo, root, sha));
        let received = receive(&mut team, info, file);
        (received, here.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    if hash? != info.index.hash {
        return Err(PrebuiltError::Mismatch("its hash differs".to_owned()));
    }
    let fetched = started.elapsed();
    check_received(into)?;
    let checked = started.elapsed();
    let (verified, refused) = verify_here(into, root, here?)?;
    adopt_received(into, choices, &verified)?;
    tracing::info!(
        bytes = info.index.bytes,
        fetch_ms = fetched.as_millis() as u64,
        check_ms = (checked - fetched).as_millis() as u64,
        verify_ms = (started.elapsed() - checked).as_millis() as u64,
        verified = verified.len(),
        refused,
        "prebuilt index received"
    );
    Ok(Some(Restored { sha: sha.clone(), vectors_apart: info.vectors.is_some() }))
}

/// Of the files `here` (as committed in this clone, as (path, size, time)), those whose
/// entries in the received index `file` are the files on disk: the bytes hash as the entry
/// says and every chunk is a slice of them ([`crate::source::chunk::verify`]); and how many were not. A
/// publisher's index is a file they could edit: what it says is taken only where the clone's
/// own files prove it, and the run chunks every other file afresh. Checked on a thread per
/// core, each reading its own pieces of the index (a read, a hash and a comparison a file;
/// no parse).
fn verify_here(
    file: &Path,
    root: &Path,
    here: Vec<(String, u64, i64)>,
) -> Result<(Vec<Verified>, usize), PrebuiltError> {
    let stamps: HashMap<String, (u64, i64)> = here.into_iter().map(|(p, size, t)| (p, (size, t))).collect();
    let pieces = file_id_pieces(file, 500)?;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let refused = std::sync::atomic::AtomicUsize::new(0);
    let verified = std::thread::scope(|s| {
        let workers: Vec<_> = (0..crate::base::threads::cores().clamp(1, 8))
            .map(|_| {
                s.spawn(|| -> Result<Vec<Verified>, PrebuiltError> {
                    let mut verified = Vec::new();
                    while let Some(ids) = pieces.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                        files_with_chunks(file, ids.clone(), |path, hash, chunks| {
                            let Some(&(size, mtime)) = stamps.get(&path) else { return true };
                            match super::seed::file_holds(&root.join(&path), &hash, &chunks) {
                                Ok(()) => verified.push((path, size, mtime, hash)),
                                Err(why) => {
                                    refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                    tracing::warn!(path = %path, %why, "prebuilt index: a file's entry is not the file; indexed afresh");
                                }
                            }
                            true
                        })?;
                    }
                    Ok(verified)
                })
            })
            .collect();
        let mut all = Vec::new();
        for w in workers {
            all.extend(w.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?);
        }
        Ok::<_, PrebuiltError>(all)
    })?;
    Ok((verified, refused.into_inner()))
}

/// Reads the prebuilt index `info` from the team index into `file`: the server reads the
/// next part while one thread unpacks and another writes (unpacking and writing 1.5 GB take
/// about as long each); the parts' hash.
fn receive(team: &mut TeamStore, info: &PrebuiltInfo, file: std::fs::File) -> Result<String, PrebuiltError> {
    let (parts, ready) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
    let (unpacked, to_write) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
    std::thread::scope(|s| {
        let writing = s.spawn(move || -> std::io::Result<()> {
            let mut sparse = Sparse::new(file);
            for piece in to_write {
                sparse.write_all(&piece)?;
            }
            sparse.finish()
        });
        let unpacking = s.spawn(move || -> Result<String, PrebuiltError> {
            let mut unpacker =
                Unpacked::new(Handoff::new(unpacked, "writing the prebuilt index stopped"), info.index.bytes)?;
            for part in ready {
                unpacker.take(&part)?;
            }
            Ok(unpacker.finish()?.1) // (the hand-off, dropped, tells the writer it has all)
        });
        let fetched = team.read_prebuilt(&info.sha, Piece::Index, |data| -> Result<(), PrebuiltError> {
            parts.send(data.to_vec()).map_err(|_| std::io::Error::other("unpacking the prebuilt index stopped").into())
        });
        drop(parts);
        let hash = unpacking.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        // A failure to write shows first (it is why unpacking stopped), then one to unpack
        // (why reading stopped).
        writing.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        let hash = hash?;
        fetched?;
        Ok(hash)
    })
}

/// The files of `sha` this clone holds as committed (staged as in `sha`, unchanged since),
/// as (path, size, time) on disk: a prebuilt index of `sha` holds them as they are here.
fn unchanged_here(repo: &Repo, root: &Path, sha: &str) -> Result<Vec<(String, u64, i64)>, GitError> {
    let files = repo.files_at(sha)?;
    Ok(as_committed(repo, &files)?
        .filter_map(|path| {
            let meta = std::fs::symlink_metadata(root.join(path)).ok().filter(std::fs::Metadata::is_file)?;
            let mtime_ns = super::index::walk::mtime_ns(&meta);
            Some((path.to_owned(), meta.len(), mtime_ns))
        })
        .collect())
}

/// The paths of `files` (a commit's, as (path, blob id)) that the working tree holds as
/// committed: staged as that blob, with no unstaged change.
fn as_committed<'f>(repo: &Repo, files: &'f [(String, String)]) -> Result<impl Iterator<Item = &'f str>, GitError> {
    let (staged, changed) = (repo.staged_files()?, repo.unstaged_changes()?);
    Ok(files
        .iter()
        .filter(move |(path, blob)| staged.get(path) == Some(blob) && !changed.contains(path))
        .map(|(path, _)| path.as_str()))
}

/// A scratch file removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn clear(&self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.clear();
    }
}
