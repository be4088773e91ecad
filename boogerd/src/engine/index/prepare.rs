//! One file made ready on a worker: read, hashed, and if new chunked, with what the single
//! writer would otherwise make itself (the full-text rows' split words, grep's trigram rows,
//! the chunk texts compressed as the store keeps them).

use std::path::Path;

use super::{origin, walk};
use crate::source::{HUGE_FILE_BYTES, hash};
use crate::store::FileWrite;
use walk::Skipped;

/// What became of one file.
pub(super) enum Outcome {
    /// Its new state (boxed: the largest by far) and its bytes.
    Write(Box<FileWrite>, usize),
    /// Could not be indexed (binary, unreadable, gone): skipped, and dropped from the index.
    Skip(Skipped),
    /// Its header says it was generated: set aside, and dropped from the index.
    SetAside(Skipped),
}

/// Reads, hashes and (if new) chunks one file, with its trigrams if `grams`. Never fails:
/// trouble becomes a skip.
pub(super) fn process(
    w: &walk::Walked,
    previous_hash: Option<&str>,
    max_file_bytes: u64,
    grams: bool,
    packer: &crate::store::Packer,
) -> Outcome {
    let skip = |reason: String| Outcome::Skip(Skipped { path: w.rel.clone(), reason });
    if w.size > HUGE_FILE_BYTES {
        return skip(format!("larger than {} MB: not indexed", HUGE_FILE_BYTES / (1024 * 1024)));
    }
    // Read at most one byte past the limit, whatever the size `stat` gave: files that grow
    // while read, or that report 0 and never end (procfs), stop there.
    let bytes = match crate::base::repo_file::read(&w.abs, HUGE_FILE_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return skip(format!("larger than {} MB: not indexed", HUGE_FILE_BYTES / (1024 * 1024))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return skip("deleted while indexing".to_owned()),
        Err(e) => return skip(format!("cannot read: {e}")),
    };
    if walk::looks_binary(&bytes) {
        return skip("binary".to_owned());
    }
    if w.header_decides && origin::has_generated_header(&bytes) {
        let reason = format!("{} (its header says so)", origin::Origin::Generated.label());
        return Outcome::SetAside(Skipped { path: w.rel.clone(), reason });
    }
    let hash = hash::file_hash(&bytes);
    let size = bytes.len() as u64;
    if previous_hash == Some(hash.as_str()) {
        let write = FileWrite {
            path: w.rel.clone(),
            size,
            mtime_ns: w.mtime_ns,
            hash,
            language: String::new(),
            problem: None,
            chunks: None,
            grams: None,
            words: None,
            packed: None,
            ways: None,
        };
        return Outcome::Write(Box::new(write), 0);
    }
    let too_large = size > max_file_bytes;
    let chunked = crate::source::chunk::chunk_file(Path::new(&w.rel), &bytes, too_large);
    let mut problem = chunked.problem;
    if too_large {
        problem =
            Some(format!("larger than {}: indexed as fixed-size blocks, not parsed", human_bytes(max_file_bytes)));
    } else if std::str::from_utf8(&bytes).is_err() {
        let note = "not valid UTF-8: stored with replacement characters".to_owned();
        problem = Some(problem.map_or(note.clone(), |p| format!("{p}; {note}")));
    }
    let write = FileWrite {
        path: w.rel.clone(),
        size,
        mtime_ns: w.mtime_ns,
        hash,
        language: chunked.lang.name().to_owned(),
        problem,
        grams: grams.then(|| crate::store::grams::file_blocks(&chunked.chunks)),
        // Made here, on a worker: the writer is the one thread every file goes through.
        words: Some(chunked.chunks.iter().map(|c| crate::store::words::ChunkWords::of(&c.name, &c.content)).collect()),
        packed: Some(packer.pack_file(chunked.chunks.iter().map(|c| c.content.as_str()))),
        ways: Some(chunked.chunks.iter().map(crate::store::in_text::Ways::of).collect()),
        chunks: Some(chunked.chunks),
    };
    Outcome::Write(Box::new(write), bytes.len())
}

fn human_bytes(n: u64) -> String {
    match n {
        0..1024 => format!("{n} bytes"),
        1024..1_048_576 => format!("{} KB", n / 1024),
        _ => format!("{} MB", n / 1_048_576),
    }
}
