//! One immutable segment of the ranking index: sorted terms, their postings, and per chunk
//! and per file what ranking and re-ranking read, laid out in one flat byte buffer.
//!
//! The same bytes are a file the daemon memory-maps (a project's base segment, written once
//! per rebuild) or a small heap buffer (the delta of files changed since). Mapped, an idle
//! project's index costs no heap and its pages are the OS's to evict; a released project
//! comes back by mapping the file again. Nothing is parsed at open: readers index into the
//! buffer, so every read is bounds-checked and a damaged file gives empty strings or is
//! refused at open, never undefined behaviour.
//!
//! Layout (little endian): a header (magic, content generation, counts, the lowest chunk id)
//! and a table of sections, each 8-byte aligned: the terms, sorted and front-coded in blocks
//! with each one's count of chunks and postings' length (`dictionary`), the postings (per
//! chunk holding the term, its counts in name, content, split identifiers and path, runs of
//! chunks with the term in their path alone as one entry: `lists`), per chunk its length,
//! kind, file, lines, size, and its name and parent as numbers of distinct strings stored
//! once, per file its path (sorted), language, content hash, first chunk and first chunk
//! id (a file's chunks are numbered one after another; the few files whose ids are not have
//! them listed). Postings' offsets and ids take four bytes: a segment's postings stay far
//! below 4 GiB (77 MB for a 549 MB tree), and its ids span what one index has numbered (13 of
//! a large tree's 276 MB were their upper halves).

mod build;
mod dictionary;
mod lists;
mod padded;
mod postings;
pub(crate) mod prepared;
mod spill;
#[cfg(test)]
mod tests;

use std::io;
use std::path::Path;

use booger_proto::tools::ChunkKind;

use crate::store::search::Candidate;

pub(crate) use build::Builder;
use lists::PostingIter;

pub(super) const MAGIC: &[u8; 8] = b"BGRANK05";
pub(super) const HEADER: usize = 8 + 8 + 4 * 4 + 8 + 8 + 8;
/// A file's entry in `FileIds` with this bit: its chunks' ids are listed, from the rest of
/// the entry on, in `ListedIds`; without it, the entry is its first chunk's id, and the
/// others follow it one by one.
pub(super) const LISTED: u32 = 1 << 31;

/// The sections, in file order.
#[derive(Clone, Copy)]
pub(super) enum Sec {
    TermBlocks,
    Terms,
    LabelOff,
    LabelBytes,
    Postings,
    ListedIds,
    DocLen,
    DocKind,
    DocFile,
    DocLines,
    DocBytes,
    DocName,
    DocParent,
    PathOff,
    PathBytes,
    FileLang,
    FileFirstDoc,
    FileIds,
    HashOff,
    HashBytes,
    LangOff,
    LangBytes,
}
pub(super) const SECTIONS: usize = 22;

pub(crate) use crate::base::terms::{each_token, tokens};

/// Where a segment's bytes are.
enum Bytes {
    Mapped(memmap2::Mmap),
    Heap(Vec<u8>),
}

/// A segment opened for reading.
pub(crate) struct Segment {
    bytes: Bytes,
    pub generation: u64,
    pub docs: u32,
    pub files: u32,
    terms: u32,
    langs: u32,
    /// The distinct names and parents the chunks' point at.
    labels: usize,
    pub total_len: u64,
    /// The lowest chunk id: a chunk's is this plus its four bytes.
    id_base: i64,
    sections: [(usize, usize); SECTIONS],
}

#[derive(Debug, thiserror::Error)]
#[error("ranking segment {0}")]
pub(crate) struct Damaged(String);

impl Segment {
    /// Maps the segment file at `path`.
    pub(crate) fn map(path: &Path) -> io::Result<Segment> {
        let file = std::fs::File::open(path)?;
        // SAFETY: the daemon writes segment files once, to a temporary name, and renames them
        // into place; nothing writes to a segment after that, so the mapping does not change
        // under us (a file replaced by rename keeps its old inode while mapped).
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Self::parse(Bytes::Mapped(map)).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// A segment held in memory (the delta).
    pub(crate) fn from_vec(bytes: Vec<u8>) -> Result<Segment, Damaged> {
        Self::parse(Bytes::Heap(bytes))
    }

    fn parse(bytes: Bytes) -> Result<Segment, Damaged> {
        let b: &[u8] = match &bytes {
            Bytes::Mapped(m) => m,
            Bytes::Heap(v) => v,
        };
        if b.len() >= 8 && b[..6] == MAGIC[..6] && b[..8] != MAGIC[..] {
            return Err(Damaged(format!(
                "is of another format ({}): it is built again",
                String::from_utf8_lossy(&b[..8])
            )));
        }
        if b.len() < HEADER + 16 * SECTIONS || &b[..8] != MAGIC {
            return Err(Damaged("has no valid header".into()));
        }
        let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let mut sections = [(0usize, 0usize); SECTIONS];
        for (i, s) in sections.iter_mut().enumerate() {
            let (off, len) = (u64_at(HEADER + 16 * i) as usize, u64_at(HEADER + 16 * i + 8) as usize);
            if off.checked_add(len).is_none_or(|end| end > b.len()) {
                return Err(Damaged(format!("section {i} is out of bounds")));
            }
            *s = (off, len);
        }
        let seg = Segment {
            generation: u64_at(8),
            docs: u32_at(16),
            files: u32_at(20),
            terms: u32_at(24),
            langs: u32_at(28),
            labels: (sections[Sec::LabelOff as usize].1 / 4).saturating_sub(1),
            total_len: u64_at(32),
            id_base: u64_at(48) as i64,
            sections,
            bytes: Bytes::Heap(Vec::new()),
        };
        let (n, nf, nt) = (seg.docs as usize, seg.files as usize, seg.terms as usize);
        let expect = [
            (Sec::TermBlocks, dictionary::BLOCK_ENTRY * nt.div_ceil(dictionary::BLOCK)),
            (Sec::DocLen, 4 * n),
            (Sec::DocKind, n),
            (Sec::DocFile, 4 * n),
            (Sec::DocLines, 8 * n),
            (Sec::DocBytes, 4 * n),
            (Sec::DocName, 4 * n),
            (Sec::DocParent, 4 * n),
            (Sec::LabelOff, 4 * (seg.labels + 1)),
            (Sec::PathOff, 4 * (nf + 1)),
            (Sec::FileLang, nf),
            (Sec::FileFirstDoc, 4 * (nf + 1)),
            (Sec::FileIds, 4 * nf),
            (Sec::HashOff, 4 * (nf + 1)),
            (Sec::LangOff, 4 * (seg.langs as usize + 1)),
        ];
        if let Some((s, _)) = expect.iter().find(|(s, len)| seg.sections[*s as usize].1 != *len) {
            return Err(Damaged(format!("section {} has the wrong size", *s as usize)));
        }
        Ok(Segment { bytes, ..seg })
    }

    fn raw(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Heap(v) => v,
        }
    }

    fn sec(&self, s: Sec) -> &[u8] {
        let (off, len) = self.sections[s as usize];
        &self.raw()[off..off + len]
    }

    fn u32_in(&self, s: Sec, i: usize) -> u32 {
        self.sec(s).get(4 * i..4 * i + 4).map_or(0, |b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    /// The `i`-th of the strings in `bytes` delimited by `offsets`.
    fn string(&self, offsets: Sec, bytes: Sec, i: usize) -> &str {
        let (a, b) = (self.u32_in(offsets, i) as usize, self.u32_in(offsets, i + 1) as usize);
        self.sec(bytes).get(a..b).and_then(|s| std::str::from_utf8(s).ok()).unwrap_or("")
    }

    /// Heap bytes held (a mapped segment's pages belong to the OS's page cache).
    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.bytes {
            Bytes::Mapped(_) => 0,
            Bytes::Heap(v) => v.capacity(),
        }
    }

    /// The postings of `term` (a stem): (doc, counts per column), in doc order.
    pub(crate) fn postings(&self, term: &str) -> PostingIter<'_> {
        let dict = dictionary::Dictionary {
            blocks: self.sec(Sec::TermBlocks),
            terms: self.sec(Sec::Terms),
            len: self.terms as usize,
        };
        let Some(found) = dict.find(term.as_bytes()) else { return PostingIter::EMPTY };
        let bytes = self.sec(Sec::Postings).get(found.start..found.end).unwrap_or(&[]);
        PostingIter::new(bytes, found.count, self.docs)
    }

    /// Chunk `d`'s id: its file's first plus its place in the file, or listed (`LISTED`).
    pub(crate) fn doc_id(&self, d: u32) -> i64 {
        let f = self.doc_file(d) as usize;
        let at = d.wrapping_sub(self.u32_in(Sec::FileFirstDoc, f));
        let ids = self.u32_in(Sec::FileIds, f);
        let over = if ids & LISTED == 0 {
            ids.wrapping_add(at)
        } else {
            self.u32_in(Sec::ListedIds, (ids & !LISTED).wrapping_add(at) as usize)
        };
        self.id_base.wrapping_add(i64::from(over))
    }

    pub(crate) fn doc_len(&self, d: u32) -> u32 {
        self.u32_in(Sec::DocLen, d as usize)
    }

    pub(crate) fn doc_kind(&self, d: u32) -> u8 {
        self.sec(Sec::DocKind).get(d as usize).copied().unwrap_or(u8::MAX)
    }

    pub(crate) fn doc_file(&self, d: u32) -> u32 {
        self.u32_in(Sec::DocFile, d as usize)
    }

    /// The chunk as re-ranking sees it (no signature: that is read with the page shown).
    pub(crate) fn candidate(&self, d: u32, score: f64) -> Candidate {
        let i = d as usize;
        let file = self.doc_file(d) as usize;
        let parent = self.label(self.u32_in(Sec::DocParent, i));
        Candidate {
            id: self.doc_id(d),
            path: self.path(file).to_owned(),
            language: self.language(file).to_owned(),
            kind: ChunkKind::ALL.get(self.doc_kind(d) as usize).copied().unwrap_or(ChunkKind::Raw),
            name: self.label(self.u32_in(Sec::DocName, i)).to_owned(),
            signature: String::new(),
            parent: (!parent.is_empty()).then(|| parent.to_owned()),
            start_line: self.u32_in(Sec::DocLines, 2 * i),
            end_line: self.u32_in(Sec::DocLines, 2 * i + 1),
            bytes: self.u32_in(Sec::DocBytes, i) as usize,
            bm25: -score,
        }
    }

    /// A chunk's name or parent: each distinct one is stored once (a quarter of a large
    /// tree's chunks share a name with another: `new`, `__init__`, an unnamed block's "").
    fn label(&self, l: u32) -> &str {
        self.string(Sec::LabelOff, Sec::LabelBytes, l as usize)
    }

    pub(crate) fn path(&self, f: usize) -> &str {
        self.string(Sec::PathOff, Sec::PathBytes, f)
    }

    pub(crate) fn language(&self, f: usize) -> &str {
        let lang = self.sec(Sec::FileLang).get(f).copied().unwrap_or(0) as usize;
        self.string(Sec::LangOff, Sec::LangBytes, lang)
    }

    /// The file's chunk key (see `Store::chunk_keys`).
    pub(crate) fn key(&self, f: usize) -> &str {
        self.string(Sec::HashOff, Sec::HashBytes, f)
    }

    /// The chunks of file `f`: a range of docs.
    pub(crate) fn file_docs(&self, f: usize) -> std::ops::Range<u32> {
        self.u32_in(Sec::FileFirstDoc, f)..self.u32_in(Sec::FileFirstDoc, f + 1)
    }

    /// The file with this path (paths are sorted).
    pub(crate) fn find_file(&self, path: &str) -> Option<usize> {
        let (mut lo, mut hi) = (0usize, self.files as usize);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.path(mid).cmp(path) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }
}
