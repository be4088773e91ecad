//! The pure model of a repository's files: how a file is cut into chunks ([`chunk`]), which
//! language it is in ([`lang`]), content hashes and the Merkle root ([`hash`]), and which
//! part of a tree a partial run looks at ([`Survey`]). Nothing here does I/O, opens SQLite or
//! knows about the daemon: the store, search, git and the indexing run all build on it.

pub mod chunk;
pub(crate) mod hash;
pub mod lang;

/// Files larger than this are not parsed but cut into fixed-size blocks.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Files larger than this are not indexed at all (reported as skipped): a dump or a log of
/// this size is not code an agent reads, and holding it would cost memory twice its size.
pub(crate) const HUGE_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// `name` (a path below a project's root, as bytes) if booger indexes a file by it: UTF-8
/// without control characters. The one rule for every index, local and team: answers print
/// paths as lines an agent reads (a newline in a name could forge a result line, an escape
/// sequence would reach a terminal), and a name that is not UTF-8 could not be opened again
/// by the name printed.
pub(crate) fn indexable_name(name: &[u8]) -> Option<&str> {
    std::str::from_utf8(name).ok().filter(|s| !s.chars().any(char::is_control))
}

/// The part of a project a partial run surveys: the files directly in each `shallow`
/// directory and every file under each `deep` one (relative paths, `""` is the root).
#[derive(Debug, Clone, Default)]
pub struct Survey {
    pub shallow: Vec<String>,
    pub deep: Vec<String>,
}

impl Survey {
    pub(crate) fn contains(&self, rel: &str) -> bool {
        self.deep.iter().any(|d| is_under(rel, d)) || self.shallow.iter().any(|d| parent_dir(rel) == d)
    }
}

/// The directory a relative path is in (`""` for the root).
pub(crate) fn parent_dir(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..i])
}

/// True if `rel` is `dir` or below it (`""` contains everything).
pub(crate) fn is_under(rel: &str, dir: &str) -> bool {
    dir.is_empty() || rel == dir || rel.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}
