//! The structural diff: which files changed between two snapshots, and which symbols in them.
//!
//! ```text
//! git diff --raw -z -M <merge base> <head>    changed files with both blob ids, renames paired
//! git cat-file --batch                         every blob's bytes, one process for all of them
//! chunk_file(path, bytes)                      each side, the indexer's own chunker
//! symbols::compare                             added / modified / removed per file
//! ```
//!
//! The head snapshot is HEAD's commit (committed), the staging area (staged), or the files on
//! disk (unstaged, which includes staged edits and untracked files). A head version that the
//! index already holds (same content hash) is not parsed again.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use super::GitError;
use super::parsed::Version;
use super::repo::{Head, Repo, is_object_id, split_z};
use super::symbols::{self, Changes};
use crate::source::chunk::Chunk;

/// Chunks of (path, content hash) from the index, when it has exactly that version.
pub(crate) type Indexed<'a> = dyn Fn(&str, &str) -> Option<Vec<Chunk>> + Sync + 'a;

/// How much of the uncommitted work the head side includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Include {
    /// HEAD's commit only.
    Committed,
    /// Plus what is staged (the head side is the staging area).
    Staged,
    /// Plus unstaged edits and untracked files (the head side is the files on disk).
    Unstaged,
}

impl Include {
    pub(crate) fn parse(s: &str) -> Option<Include> {
        match s {
            "committed" => Some(Include::Committed),
            "staged" => Some(Include::Staged),
            "unstaged" => Some(Include::Unstaged),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Include::Committed => "committed",
            Include::Staged => "staged",
            Include::Unstaged => "unstaged",
        }
    }
}

/// What to compare.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The base ref; `None`: detected (main, master, the upstream).
    pub base: Option<String>,
    /// A ref for the head side instead of HEAD (then `include` is ignored).
    pub head: Option<String>,
    pub include: Option<Include>,
    /// Only files under this path (relative to the project root).
    pub path_prefix: Option<String>,
    /// Files larger than this are compared as text, not parsed.
    pub max_file_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct StructuralDiff {
    /// The base as named (`main`, `origin/main`, a tag, a commit).
    pub base: String,
    pub base_commit: String,
    /// The commit the head side is compared with: the merge base of base and head (what the
    /// branch changed), or the base itself when there is none (see `warnings`).
    pub compared_with: Option<String>,
    pub head: String,
    pub head_commit: Option<String>,
    pub include: Include,
    /// Why the answer may be incomplete or not what was asked (shallow clone, merge in
    /// progress, no merge base). Empty when the answer is exactly what was asked.
    pub warnings: Vec<String>,
    pub files: Vec<FileDiff>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileDiff {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// added, modified, deleted, renamed, type-changed, conflicted.
    pub status: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
    /// Why the file's symbols were not compared (binary, submodule, conflicted, too large…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub changes: Changes,
}

/// Bytes read before deciding a file is binary, as git does.
const BINARY_SNIFF: usize = 8000;

/// Computes the structural diff of `repo` for the files under its directory. `indexed`
/// gives a file's chunks from the index when the index holds that path with that content
/// hash (saves parsing it again).
pub fn structural_diff(repo: &Repo, req: &Request, indexed: &Indexed<'_>) -> Result<StructuralDiff, GitError> {
    let mut sides = sides(repo, req)?;
    let include = sides.include;
    if let Some(op) = repo.operation() {
        sides.warnings.push(match include {
            Include::Committed => {
                format!("a {op} is in progress; only committed changes are compared (HEAD is the commit before it)")
            }
            _ => format!(
                "a {op} is in progress: files with unresolved conflicts are listed as conflicted, their symbols not \
                 compared"
            ),
        });
    }
    let conflicted: Vec<String> =
        if repo.operation().is_some() && include != Include::Committed { repo.unmerged()? } else { Vec::new() };
    let entries = changed_entries(repo, req, &sides)?;
    let jobs = jobs(repo, req, include, entries, &conflicted)?;
    let files = compare_all(jobs, req.max_file_bytes, indexed);
    let Sides { head_name, head_commit, base_name, base_commit, compared_with, warnings, .. } = sides;
    Ok(StructuralDiff {
        base: base_name,
        base_commit: base_commit.unwrap_or_default(),
        compared_with,
        head: match (&req.head, include) {
            (Some(_), _) | (None, Include::Committed) => head_name,
            (None, Include::Staged) => format!("{head_name} + staged changes"),
            (None, Include::Unstaged) => format!("{head_name} + uncommitted changes"),
        },
        head_commit,
        include,
        warnings,
        files,
    })
}

/// What is compared with what: the head (a commit, or the work on top of HEAD), the base, and
/// the commit the head is compared with (their merge base, when there is one).
struct Sides {
    head_name: String,
    head_commit: Option<String>,
    include: Include,
    base_name: String,
    base_commit: Option<String>,
    compared_with: Option<String>,
    warnings: Vec<String>,
}

fn sides(repo: &Repo, req: &Request) -> Result<Sides, GitError> {
    let (head_name, head_commit, include) = match &req.head {
        Some(rev) => (rev.clone(), Some(repo.commit_of(rev)?), Include::Committed),
        None => {
            (repo.head.describe(), repo.head.commit().map(str::to_owned), req.include.unwrap_or(Include::Committed))
        }
    };
    if head_commit.is_none() && include == Include::Committed {
        return Err(GitError::NoCommits(repo.head.describe()));
    }
    let (base_name, base_commit) = match (&req.base, &repo.head) {
        (Some(b), _) => (b.clone(), Some(repo.commit_of(b)?)),
        (None, Head::Unborn { .. }) => ("(empty repository)".to_owned(), None),
        (None, _) => match repo.default_base()? {
            Some((name, id)) => (name, Some(id)),
            None => {
                return Err(GitError::NoBase { detached: matches!(repo.head, Head::Detached { .. }) });
            }
        },
    };
    let mut warnings = Vec::new();
    let compared_with = match (&base_commit, &head_commit) {
        (Some(b), Some(h)) => match repo.merge_base(b, h)? {
            Some(mb) => Some(mb),
            None => {
                warnings.push(if repo.shallow {
                    format!(
                        "shallow clone: the history does not reach the merge base of {base_name} and {head_name}, so \
                         the head is compared with {base_name} itself and changes made on {base_name} since the \
                         branch split show up too (reversed). Deepen it with `git fetch --deepen=100` or \
                         `git fetch --unshallow`."
                    )
                } else {
                    format!(
                        "{base_name} and {head_name} have no common history, so the head is compared with \
                         {base_name} itself"
                    )
                });
                Some(b.clone())
            }
        },
        (Some(b), None) => Some(b.clone()),
        (None, _) => None,
    };
    Ok(Sides { head_name, head_commit, include, base_name, base_commit, compared_with, warnings })
}

/// The changed files, with both blob ids (and, for uncommitted work, the untracked files),
/// under the request's path prefix.
fn changed_entries(repo: &Repo, req: &Request, sides: &Sides) -> Result<Vec<Entry>, GitError> {
    let mut args: Vec<String> =
        ["diff", "--raw", "-z", "--no-abbrev", "-M", "--relative", "--no-ext-diff", "--ignore-submodules=none"]
            .map(str::to_owned)
            .to_vec();
    match sides.include {
        Include::Committed => {
            // Both exist: a committed comparison needs a head commit, and so a base.
            args.extend(sides.compared_with.clone());
            args.extend(sides.head_commit.clone());
        }
        Include::Staged => {
            args.push("--cached".to_owned());
            args.extend(sides.compared_with.clone());
        }
        Include::Unstaged => match &sides.compared_with {
            Some(c) => args.push(c.clone()),
            // No commit at all: everything in the staging area is new; its bytes come from disk.
            None => args.push("--cached".to_owned()),
        },
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let raw = repo.git.run(&args)?;
    let mut entries = parse_raw(&raw);
    if sides.include == Include::Unstaged {
        let out = repo.git.run(&["ls-files", "--others", "--exclude-standard", "-z"])?;
        entries.extend(split_z(&out).map(|p| Entry {
            status: 'A',
            old_mode: String::new(),
            new_mode: "100644".to_owned(),
            old_id: String::new(),
            new_id: String::new(),
            path: p,
            old_path: None,
        }));
    }
    if let Some(prefix) =
        req.path_prefix.as_deref().map(|p| p.trim_start_matches("./").trim_end_matches('/')).filter(|p| !p.is_empty())
    {
        let under = |p: &str| p == prefix || p.starts_with(&format!("{prefix}/"));
        entries.retain(|e| under(&e.path) || e.old_path.as_deref().is_some_and(under));
    }
    Ok(entries)
}

/// Each changed file's two sides, with every blob not parsed before read in one process.
fn jobs(
    repo: &Repo,
    req: &Request,
    include: Include,
    entries: Vec<Entry>,
    conflicted: &[String],
) -> Result<Vec<Job>, GitError> {
    // A side is a blob (read below, unless parsed before), the file on disk, or nothing.
    let max = req.max_file_bytes;
    let side = |path: &str, id: &str| -> Side {
        match super::parsed::cached(Path::new(path), max, &Version::Blob(id.to_owned())) {
            Some((chunks, size)) => Side::Parsed(chunks, size),
            None => Side::Blob(id.to_owned()),
        }
    };
    let mut jobs: Vec<Job> = entries
        .into_iter()
        .map(|e| {
            let head = if e.status == 'D' {
                Side::Absent
            } else if include == Include::Unstaged {
                read_worktree(repo.git.dir(), &e.path)
                    .map_or(Side::Unreadable, |bytes| Side::Bytes { bytes, blob: None })
            } else {
                side(&e.path, &e.new_id)
            };
            let base =
                if e.status == 'A' { Side::Absent } else { side(e.old_path.as_deref().unwrap_or(&e.path), &e.old_id) };
            let conflicted = e.status == 'U' || conflicted.contains(&e.path);
            Job { entry: e, base, head, conflicted }
        })
        .collect();
    let wanted: Vec<String> = jobs
        .iter()
        .flat_map(|j| [&j.base, &j.head])
        .filter_map(|s| match s {
            Side::Blob(id) if is_object_id(id) && !is_zero(id) => Some(id.clone()),
            _ => None,
        })
        .collect();
    let blobs = read_blobs(repo, &wanted)?;
    for j in &mut jobs {
        for s in [&mut j.base, &mut j.head] {
            if let Side::Blob(id) = s {
                *s = match blobs.get(id.as_str()).cloned() {
                    Some(bytes) => Side::Bytes { bytes, blob: Some(id.clone()) },
                    None => Side::Unreadable,
                };
            }
        }
    }
    Ok(jobs)
}

/// One line of `git diff --raw -z`.
#[derive(Debug, Clone)]
pub struct Entry {
    pub status: char,
    pub old_mode: String,
    pub new_mode: String,
    pub old_id: String,
    pub new_id: String,
    pub path: String,
    pub old_path: Option<String>,
}

/// `:old_mode new_mode old_id new_id status\0path\0[new_path\0]`, repeated.
pub fn parse_raw(out: &[u8]) -> Vec<Entry> {
    let mut fields = out.split(|&b| b == 0).map(|f| String::from_utf8_lossy(f).into_owned());
    let mut entries = Vec::new();
    while let Some(meta) = fields.next() {
        let Some(meta) = meta.strip_prefix(':') else { continue };
        let parts: Vec<&str> = meta.split(' ').collect();
        if parts.len() < 5 {
            continue;
        }
        let status = parts[4].chars().next().unwrap_or('M');
        let Some(first) = fields.next() else { break };
        let (path, old_path) = if matches!(status, 'R' | 'C') {
            let Some(second) = fields.next() else { break };
            (second, Some(first))
        } else {
            (first, None)
        };
        entries.push(Entry {
            status,
            old_mode: parts[0].to_owned(),
            new_mode: parts[1].to_owned(),
            old_id: parts[2].to_owned(),
            new_id: parts[3].to_owned(),
            path,
            old_path,
        });
    }
    entries
}

fn is_zero(id: &str) -> bool {
    id.bytes().all(|b| b == b'0')
}

/// `git cat-file --batch`: `<id> <type> <size>\n<bytes>\n` per requested id.
pub(crate) fn read_blobs(repo: &Repo, ids: &[String]) -> Result<HashMap<String, Vec<u8>>, GitError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let mut input = Vec::with_capacity(ids.len() * 41);
    for id in ids {
        input.extend_from_slice(id.as_bytes());
        input.push(b'\n');
    }
    let out = repo.git.run_with_input(&["cat-file", "--batch"], input)?;
    Ok(parse_batch(&out))
}

/// The blobs in `git cat-file --batch` output, by id; a missing object is skipped, and a
/// cut-off answer ends the parse. An object whose bytes do not hash to its id (an edited
/// object file: git does not check what it reads) is skipped too, and said in the log: what
/// booger hands on as a blob is that blob.
pub fn parse_batch(out: &[u8]) -> HashMap<String, Vec<u8>> {
    let mut blobs = HashMap::new();
    let mut rest = out;
    while !rest.is_empty() {
        let Some(nl) = rest.iter().position(|&b| b == b'\n') else { break };
        let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
        rest = &rest[nl + 1..];
        let parts: Vec<&str> = header.split(' ').collect();
        if parts.len() != 3 {
            continue; // "<id> missing"
        }
        let size: usize = parts[2].parse().unwrap_or(0);
        if size > rest.len() {
            break;
        }
        if is_blob_named(parts[0], &rest[..size]) {
            blobs.insert(parts[0].to_owned(), rest[..size].to_vec());
        } else {
            tracing::warn!(id = parts[0], "git object skipped: its bytes do not hash to its id");
        }
        rest = rest.get(size + 1..).unwrap_or_default();
    }
    blobs
}

/// Whether `bytes` are the blob git names `id`: the SHA-1 of `blob <size>\0` and the bytes.
/// (A repository of SHA-256 ids is taken as git gives it.)
pub(crate) fn is_blob_named(id: &str, bytes: &[u8]) -> bool {
    use sha1::Digest;
    if id.len() != 40 {
        return id.len() == 64;
    }
    let mut hasher = sha1::Sha1::new();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    let digest = hasher.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex.eq_ignore_ascii_case(id)
}

/// A file as it is on disk; a symbolic link as its target, as git stores it. `None` when it
/// is gone or not a file.
fn read_worktree(dir: &Path, rel: &str) -> Option<Vec<u8>> {
    let path = dir.join(rel);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if meta.file_type().is_symlink() {
        return std::fs::read_link(&path).ok().map(|t| t.to_string_lossy().into_owned().into_bytes());
    }
    if !meta.is_file() {
        return None;
    }
    crate::base::repo_file::read(&path, crate::source::HUGE_FILE_BYTES).ok().flatten()
}

/// One version of a file, as far as it has been fetched.
enum Side {
    /// The file does not exist on this side (added, deleted).
    Absent,
    /// Parsed before: its chunks and size.
    Parsed(std::sync::Arc<Vec<Chunk>>, usize),
    /// A blob still to read.
    Blob(String),
    /// Its bytes, and the blob id they came from (none for files on disk).
    Bytes { bytes: Vec<u8>, blob: Option<String> },
    /// Gone from disk, or missing from the object store.
    Unreadable,
}

impl Side {
    fn bytes(&self) -> Option<&[u8]> {
        match self {
            Side::Bytes { bytes, .. } => Some(bytes),
            _ => None,
        }
    }
}

struct Job {
    entry: Entry,
    base: Side,
    head: Side,
    conflicted: bool,
}

/// Compares every file, spread over the cores (parsing dominates).
fn compare_all(jobs: Vec<Job>, max_file_bytes: u64, indexed: &Indexed<'_>) -> Vec<FileDiff> {
    let workers = crate::base::threads::cores().min(jobs.len()).max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut files: Vec<FileDiff> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    while let Some(job) = jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                        done.push(compare_file(job, max_file_bytes, indexed));
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

fn compare_file(job: &Job, max_file_bytes: u64, indexed: &Indexed<'_>) -> FileDiff {
    let e = &job.entry;
    let status = match e.status {
        'A' => "added",
        'D' => "deleted",
        'R' => "renamed",
        'C' => "copied",
        'T' => "type-changed",
        'U' => "conflicted",
        _ if job.conflicted => "conflicted",
        _ => "modified",
    };
    let head_path = e.path.as_str();
    let base_path = e.old_path.as_deref().unwrap_or(head_path);
    // Shown, not opened: a name a commit brings is printed safely.
    let mut file = FileDiff {
        path: crate::base::text::printable(&e.path),
        old_path: e.old_path.as_deref().map(crate::base::text::printable),
        status,
        binary: false,
        note: None,
        changes: Changes::default(),
    };
    let special = |mode: &str| match mode {
        "160000" => Some("submodule"),
        "120000" => Some("symbolic link"),
        _ => None,
    };
    if let Some(what) = special(&e.new_mode).or(special(&e.old_mode)) {
        file.note = Some(format!("{what}: not compared by symbol"));
        return file;
    }
    if job.conflicted {
        file.status = "conflicted";
        file.note = Some("unresolved conflict: symbols not compared".to_owned());
        return file;
    }
    let is_binary = |s: &Side| s.bytes().is_some_and(|b| b[..b.len().min(BINARY_SNIFF)].contains(&0));
    if is_binary(&job.base) || is_binary(&job.head) {
        file.binary = true;
        return file;
    }
    if matches!(job.head, Side::Unreadable) || matches!(job.base, Side::Unreadable) {
        file.note = Some("a version could not be read (gone from disk, or not in the object store)".to_owned());
        return file;
    }
    let too_large = |s: &Side| match s {
        Side::Bytes { bytes, .. } => bytes.len() as u64 > max_file_bytes,
        Side::Parsed(_, size) => *size as u64 > max_file_bytes,
        _ => false,
    };
    if too_large(&job.base) || too_large(&job.head) {
        file.note = Some(format!("larger than {max_file_bytes} bytes: compared as text"));
    }
    let chunks = |path: &str, side: &Side| -> Option<std::sync::Arc<Vec<Chunk>>> {
        let (bytes, blob) = match side {
            Side::Absent | Side::Unreadable | Side::Blob(_) => return None,
            Side::Parsed(chunks, _) => return Some(chunks.clone()),
            Side::Bytes { bytes, blob } => (bytes, blob),
        };
        let hash = blake3::hash(bytes);
        let version = match blob {
            Some(id) => Version::Blob(id.clone()),
            None => Version::Content(*hash.as_bytes()),
        };
        if let Some(c) = indexed(path, &hash.to_hex()) {
            let c = std::sync::Arc::new(c);
            super::parsed::remember(Path::new(path), max_file_bytes, version, c.clone(), bytes.len());
            return Some(c);
        }
        Some(super::parsed::chunks(Path::new(path), bytes, max_file_bytes, version))
    };
    file.changes = match (chunks(base_path, &job.base), chunks(head_path, &job.head)) {
        (None, Some(h)) => Changes::all_added(&h),
        (Some(b), None) => Changes::all_removed(&b),
        (Some(b), Some(h)) => symbols::compare(&b, &h),
        (None, None) => Changes::default(),
    };
    file
}

#[cfg(test)]
mod tests {
    /// git's id of a blob is the SHA-1 of its header and bytes (`git hash-object`): the
    /// empty blob and one line; other bytes under the same id are not it.
    #[test]
    fn a_blob_is_checked_against_its_id() {
        assert!(super::is_blob_named("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", b""));
        assert!(super::is_blob_named("ce013625030ba8dba906f756967f9e9ca394464a", b"hello\n"));
        assert!(!super::is_blob_named("ce013625030ba8dba906f756967f9e9ca394464a", b"hellO\n"));
        let batch = b"ce013625030ba8dba906f756967f9e9ca394464a blob 6\nhellO\n\n\
                      e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 blob 0\n\n";
        let read = super::parse_batch(batch);
        assert_eq!(read.keys().collect::<Vec<_>>(), ["e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"]);
    }
}
