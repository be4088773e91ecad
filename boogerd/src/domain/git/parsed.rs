//! The chunks of file versions the git tools have parsed, kept by version: a git blob id or
//! a content hash names one content forever, so nothing here goes stale, and repeated diffs
//! (`branch-diff`, then `draft-commit`, then `branch-diff` after one more edit) neither read
//! nor parse again what they have seen. Bounded by the size of the versions it holds.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::base::sync::Recover;
use crate::source::chunk::{Chunk, chunk_file};
use crate::source::lang::Lang;

/// Bytes of parsed versions kept (their chunks take about as much again).
const BUDGET: usize = 64 << 20;

/// Which content a version is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Version {
    /// A git blob id.
    Blob(String),
    /// The BLAKE3 hash of a file read from disk.
    Content([u8; 32]),
}

/// The chunker's output depends on the path only through its extension's language (files
/// without one are told apart by their bytes, which the version fixes), and on the size
/// limit.
type Key = (Lang, u64, Version);

fn key(path: &Path, max_file_bytes: u64, version: Version) -> Key {
    (Lang::detect(path, b""), max_file_bytes, version)
}

#[derive(Default)]
struct Cache {
    map: HashMap<Key, (Arc<Vec<Chunk>>, usize)>,
    /// Insertion order with each version's size, oldest first.
    order: VecDeque<(Key, usize)>,
    bytes: usize,
}

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

fn with<T>(f: impl FnOnce(&mut Cache) -> T) -> T {
    f(CACHE.lock().recover().get_or_insert_default())
}

/// The chunks of a version parsed before, and its size in bytes, if any.
pub(crate) fn cached(path: &Path, max_file_bytes: u64, version: &Version) -> Option<(Arc<Vec<Chunk>>, usize)> {
    let k = key(path, max_file_bytes, version.clone());
    with(|c| c.map.get(&k).map(|(chunks, size)| (chunks.clone(), *size)))
}

/// The chunks of `bytes` as the file `path`, from the cache or the chunker.
pub(crate) fn chunks(path: &Path, bytes: &[u8], max_file_bytes: u64, version: Version) -> Arc<Vec<Chunk>> {
    let k = key(path, max_file_bytes, version);
    if let Some((hit, _)) = with(|c| c.map.get(&k).cloned()) {
        return hit;
    }
    let parsed = Arc::new(chunk_file(path, bytes, bytes.len() as u64 > max_file_bytes).chunks);
    insert(k, parsed.clone(), bytes.len());
    parsed
}

/// Keeps chunks obtained elsewhere (the index had this version) under `version`.
pub(crate) fn remember(path: &Path, max_file_bytes: u64, version: Version, chunks: Arc<Vec<Chunk>>, size: usize) {
    insert(key(path, max_file_bytes, version), chunks, size);
}

fn insert(k: Key, chunks: Arc<Vec<Chunk>>, size: usize) {
    with(|c| {
        if c.map.insert(k.clone(), (chunks, size)).is_none() {
            c.order.push_back((k, size));
            c.bytes += size;
            while c.bytes > BUDGET {
                let Some((old, size)) = c.order.pop_front() else { break };
                c.map.remove(&old);
                c.bytes -= size;
            }
        }
    });
}

/// Forgets every parsed version (benchmarks measure a cold diff with it).
pub fn clear() {
    *CACHE.lock().recover() = None;
}
