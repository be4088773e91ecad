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
//! Layout (little endian): a header (magic, content generation, counts) and a table of
//! sections, each 8-byte aligned: term offsets and bytes (sorted), per term the byte offset
//! and length of its postings, and the postings (per chunk that has the term: the gap from
//! the previous chunk as a varint, then its four saturating term counts, name, content,
//! words and path, in one byte of 2-bit counts, or 0xFF and four bytes), per chunk
//! id, length, kind, file, lines, size, name and parent, per file its path (sorted),
//! language, content hash and first chunk.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

use rust_stemmers::{Algorithm, Stemmer};

use crate::index::chunk::KINDS;
use crate::store::search::Candidate;
use crate::store::words;

const MAGIC: &[u8; 8] = b"BGRANK02";
const HEADER: usize = 8 + 8 + 4 * 4 + 8 + 8;

/// The sections, in file order.
#[derive(Clone, Copy)]
enum Sec {
    TermOff,
    TermBytes,
    ListOff,
    ListLen,
    Postings,
    DocId,
    DocLen,
    DocKind,
    DocFile,
    DocLines,
    DocBytes,
    NameOff,
    NameBytes,
    ParentOff,
    ParentBytes,
    PathOff,
    PathBytes,
    FileLang,
    FileFirstDoc,
    HashOff,
    HashBytes,
    LangOff,
    LangBytes,
}
const SECTIONS: usize = 23;

/// Splits text into lowercase alphanumeric tokens (before stemming).
pub fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase)
}

#[derive(Clone, Copy)]
struct Posting {
    doc: u32,
    tf: [u8; 4],
}

/// Accumulates chunks (grouped by file, files in path order) and writes a segment.
pub struct Builder {
    stemmer: Stemmer,
    /// Raw token → term id, so a token is stemmed once per build.
    raw: HashMap<String, u32>,
    /// Stem → term id (distinct raw tokens can share a stem).
    stems: HashMap<String, u32>,
    doc_tf: HashMap<u32, [u8; 4]>,
    terms: Vec<String>,
    lists: Vec<Vec<Posting>>,
    ids: Vec<i64>,
    lens: Vec<u32>,
    kinds: Vec<u8>,
    files: Vec<u32>,
    lines: Vec<(u32, u32)>,
    bytes: Vec<u32>,
    names: Vec<String>,
    parents: Vec<String>,
    paths: Vec<String>,
    file_langs: Vec<u8>,
    file_first: Vec<u32>,
    langs: Vec<String>,
    hashes: Vec<String>,
    file_min_id: Vec<i64>,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
            raw: HashMap::new(),
            stems: HashMap::new(),
            doc_tf: HashMap::new(),
            terms: Vec::new(),
            lists: Vec::new(),
            ids: Vec::new(),
            lens: Vec::new(),
            kinds: Vec::new(),
            files: Vec::new(),
            lines: Vec::new(),
            bytes: Vec::new(),
            names: Vec::new(),
            parents: Vec::new(),
            paths: Vec::new(),
            file_langs: Vec::new(),
            file_first: Vec::new(),
            langs: Vec::new(),
            hashes: Vec::new(),
            file_min_id: Vec::new(),
        }
    }
}

impl Builder {
    /// Adds one chunk; `hash` is its file's content hash ("" in a delta, which is never
    /// compared with the store). Chunks of a file come together.
    pub fn add(&mut self, c: &Candidate, content: &str, hash: &str) {
        if self.paths.last() != Some(&c.path) {
            let lang = match self.langs.iter().position(|l| *l == c.language) {
                Some(i) => i,
                None => {
                    self.langs.push(c.language.clone());
                    self.langs.len() - 1
                }
            };
            self.paths.push(c.path.clone());
            self.file_langs.push(lang.min(255) as u8);
            self.file_first.push(self.ids.len() as u32);
            self.hashes.push(hash.to_owned());
            self.file_min_id.push(c.id);
        }
        let f = self.paths.len() - 1;
        self.file_min_id[f] = self.file_min_id[f].min(c.id);
        let doc = self.ids.len() as u32;
        self.doc_tf.clear();
        let mut len = 0u32;
        let word_col = words::words_for(&c.name, content);
        for (col, text) in [c.name.as_str(), content, word_col.as_str(), c.path.as_str()].into_iter().enumerate() {
            for tok in tokens(text) {
                let tid = match self.raw.get(&tok) {
                    Some(t) => *t,
                    None => {
                        let stem = self.stemmer.stem(&tok).into_owned();
                        let t = match self.stems.get(&stem) {
                            Some(&t) => t,
                            None => {
                                let t = self.terms.len() as u32;
                                self.stems.insert(stem.clone(), t);
                                self.terms.push(stem);
                                self.lists.push(Vec::new());
                                t
                            }
                        };
                        self.raw.insert(tok, t);
                        t
                    }
                };
                let tf = self.doc_tf.entry(tid).or_insert([0; 4]);
                tf[col] = tf[col].saturating_add(1);
                len += 1;
            }
        }
        for (&tid, &tf) in &self.doc_tf {
            self.lists[tid as usize].push(Posting { doc, tf });
        }
        self.ids.push(c.id);
        self.lens.push(len);
        self.kinds.push(KINDS.iter().position(|k| *k == c.kind).unwrap_or(KINDS.len() - 1) as u8);
        self.files.push(self.paths.len() as u32 - 1);
        self.lines.push((c.start_line, c.end_line));
        self.bytes.push(c.bytes.min(u32::MAX as usize) as u32);
        self.names.push(c.name.clone());
        self.parents.push(c.parent.clone().unwrap_or_default());
    }

    /// Writes the segment for `generation` to `out`.
    pub fn write(mut self, generation: u64, out: &mut impl Write) -> io::Result<()> {
        // Each file's key, as `Store::chunk_keys` gives it (empty without a content hash).
        let n_docs = self.ids.len() as u32;
        for (f, hash) in self.hashes.iter_mut().enumerate() {
            if !hash.is_empty() {
                let end = self.file_first.get(f + 1).copied().unwrap_or(n_docs);
                *hash = format!("{hash}:{}:{}", self.file_min_id[f], end - self.file_first[f]);
            }
        }
        // Postings of a term in doc order (the per-doc map drained in hash order).
        for list in &mut self.lists {
            list.sort_unstable_by_key(|p| p.doc);
        }
        let mut order: Vec<u32> = (0..self.terms.len() as u32).collect();
        order.sort_unstable_by(|a, b| self.terms[*a as usize].cmp(&self.terms[*b as usize]));
        let n_postings: u64 = self.lists.iter().map(|l| l.len() as u64).sum();
        let list_bytes: Vec<u64> = self.lists.iter().map(|l| encoded_len(l) as u64).collect();
        let postings_bytes = list_bytes.iter().sum::<u64>() as usize;
        let total_len: u64 = self.lens.iter().map(|&l| u64::from(l)).sum();
        let (n, nf) = (self.ids.len(), self.paths.len());
        let strings = |v: &[String]| v.iter().map(String::len).sum::<usize>();
        let lens = [
            4 * (self.terms.len() + 1),
            strings(&self.terms),
            8 * (self.terms.len() + 1),
            4 * self.terms.len(),
            postings_bytes,
            8 * n,
            4 * n,
            n,
            4 * n,
            8 * n,
            4 * n,
            4 * (n + 1),
            strings(&self.names),
            4 * (n + 1),
            strings(&self.parents),
            4 * (nf + 1),
            strings(&self.paths),
            nf,
            4 * (nf + 1),
            4 * (nf + 1),
            strings(&self.hashes),
            4 * (self.langs.len() + 1),
            strings(&self.langs),
        ];
        let mut table = Vec::with_capacity(SECTIONS);
        let mut at = align(HEADER + 16 * SECTIONS);
        for len in lens {
            table.push((at as u64, len as u64));
            at = align(at + len);
        }
        let mut w = Padded { out, at: 0 };
        w.put(MAGIC)?;
        w.put(&generation.to_le_bytes())?;
        for count in [n, nf, self.terms.len(), self.langs.len()] {
            w.put(&(count as u32).to_le_bytes())?;
        }
        w.put(&total_len.to_le_bytes())?;
        w.put(&n_postings.to_le_bytes())?;
        for (off, len) in &table {
            w.put(&off.to_le_bytes())?;
            w.put(&len.to_le_bytes())?;
        }
        let sorted_terms: Vec<&String> = order.iter().map(|&t| &self.terms[t as usize]).collect();
        w.section(table[Sec::TermOff as usize].0, |w| w.offsets(sorted_terms.iter().map(|t| t.len())))?;
        w.section(table[Sec::TermBytes as usize].0, |w| sorted_terms.iter().try_for_each(|t| w.put(t.as_bytes())))?;
        w.section(table[Sec::ListOff as usize].0, |w| {
            let mut off = 0u64;
            w.put(&off.to_le_bytes())?;
            for &t in &order {
                off += list_bytes[t as usize];
                w.put(&off.to_le_bytes())?;
            }
            Ok(())
        })?;
        w.section(table[Sec::ListLen as usize].0, |w| {
            order.iter().try_for_each(|&t| w.put(&(self.lists[t as usize].len() as u32).to_le_bytes()))
        })?;
        w.section(table[Sec::Postings as usize].0, |w| {
            let mut buf = Vec::new();
            for &t in &order {
                buf.clear();
                encode(&self.lists[t as usize], &mut buf);
                w.put(&buf)?;
            }
            Ok(())
        })?;
        w.section(table[Sec::DocId as usize].0, |w| self.ids.iter().try_for_each(|v| w.put(&v.to_le_bytes())))?;
        w.section(table[Sec::DocLen as usize].0, |w| self.lens.iter().try_for_each(|v| w.put(&v.to_le_bytes())))?;
        w.section(table[Sec::DocKind as usize].0, |w| w.put(&self.kinds))?;
        w.section(table[Sec::DocFile as usize].0, |w| self.files.iter().try_for_each(|v| w.put(&v.to_le_bytes())))?;
        w.section(table[Sec::DocLines as usize].0, |w| {
            self.lines.iter().try_for_each(|(a, b)| w.put(&a.to_le_bytes()).and_then(|()| w.put(&b.to_le_bytes())))
        })?;
        w.section(table[Sec::DocBytes as usize].0, |w| self.bytes.iter().try_for_each(|v| w.put(&v.to_le_bytes())))?;
        for (off_sec, bytes_sec, list) in [
            (Sec::NameOff, Sec::NameBytes, &self.names),
            (Sec::ParentOff, Sec::ParentBytes, &self.parents),
            (Sec::PathOff, Sec::PathBytes, &self.paths),
        ] {
            w.section(table[off_sec as usize].0, |w| w.offsets(list.iter().map(String::len)))?;
            w.section(table[bytes_sec as usize].0, |w| list.iter().try_for_each(|s| w.put(s.as_bytes())))?;
        }
        w.section(table[Sec::FileLang as usize].0, |w| w.put(&self.file_langs))?;
        w.section(table[Sec::FileFirstDoc as usize].0, |w| {
            self.file_first.iter().chain(std::iter::once(&(n as u32))).try_for_each(|v| w.put(&v.to_le_bytes()))
        })?;
        w.section(table[Sec::HashOff as usize].0, |w| w.offsets(self.hashes.iter().map(String::len)))?;
        w.section(table[Sec::HashBytes as usize].0, |w| self.hashes.iter().try_for_each(|s| w.put(s.as_bytes())))?;
        w.section(table[Sec::LangOff as usize].0, |w| w.offsets(self.langs.iter().map(String::len)))?;
        w.section(table[Sec::LangBytes as usize].0, |w| self.langs.iter().try_for_each(|s| w.put(s.as_bytes())))?;
        w.pad_to(at)
    }
}

/// One byte of four 2-bit counts, or this escape and the four counts in full.
const TF_ESCAPE: u8 = 0xFF;

fn tf_code(tf: [u8; 4]) -> Option<u8> {
    let code = tf.iter().enumerate().try_fold(0u8, |acc, (i, &c)| (c <= 3).then_some(acc | (c << (2 * i))))?;
    (code != TF_ESCAPE).then_some(code)
}

fn varint_len(mut v: u32) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

fn encoded_len(list: &[Posting]) -> usize {
    let mut prev = 0;
    list.iter()
        .map(|p| {
            let gap = p.doc - prev;
            prev = p.doc;
            varint_len(gap) + if tf_code(p.tf).is_some() { 1 } else { 5 }
        })
        .sum()
}

fn encode(list: &[Posting], out: &mut Vec<u8>) {
    let mut prev = 0;
    for p in list {
        let mut gap = p.doc - prev;
        prev = p.doc;
        while gap >= 0x80 {
            out.push((gap as u8 & 0x7F) | 0x80);
            gap >>= 7;
        }
        out.push(gap as u8);
        match tf_code(p.tf) {
            Some(code) => out.push(code),
            None => {
                out.push(TF_ESCAPE);
                out.extend_from_slice(&p.tf);
            }
        }
    }
}

/// Decodes a term's postings; a damaged list ends early instead of reading past its bytes.
pub struct PostingIter<'a> {
    bytes: &'a [u8],
    doc: u32,
    left: usize,
}

impl Iterator for PostingIter<'_> {
    type Item = (u32, [u8; 4]);

    fn next(&mut self) -> Option<(u32, [u8; 4])> {
        if self.left == 0 {
            return None;
        }
        let mut gap = 0u32;
        let mut shift = 0;
        loop {
            let (&b, rest) = self.bytes.split_first().or_else(|| {
                self.left = 0;
                None
            })?;
            self.bytes = rest;
            gap |= u32::from(b & 0x7F).checked_shl(shift).unwrap_or(0);
            shift += 7;
            if b < 0x80 {
                break;
            }
        }
        let (&code, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        let tf = if code == TF_ESCAPE {
            let Some((tf, rest)) = self.bytes.split_first_chunk::<4>() else {
                self.left = 0;
                return None;
            };
            self.bytes = rest;
            *tf
        } else {
            [code & 3, (code >> 2) & 3, (code >> 4) & 3, code >> 6]
        };
        self.doc = self.doc.wrapping_add(gap);
        self.left -= 1;
        Some((self.doc, tf))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for PostingIter<'_> {}

fn align(at: usize) -> usize {
    at.div_ceil(8) * 8
}

/// A writer that knows its position, so sections start where the table says.
struct Padded<'a, W: Write> {
    out: &'a mut W,
    at: usize,
}

impl<W: Write> Padded<'_, W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.at += bytes.len();
        self.out.write_all(bytes)
    }

    fn pad_to(&mut self, at: usize) -> io::Result<()> {
        let zeros = [0u8; 8];
        while self.at < at {
            let n = (at - self.at).min(8);
            self.put(&zeros[..n])?;
        }
        Ok(())
    }

    fn section(&mut self, at: u64, body: impl FnOnce(&mut Self) -> io::Result<()>) -> io::Result<()> {
        self.pad_to(at as usize)?;
        body(self)
    }

    /// `0, l0, l0 + l1, …`: u32 offsets of consecutive strings.
    fn offsets(&mut self, lens: impl Iterator<Item = usize>) -> io::Result<()> {
        let mut off = 0u32;
        self.put(&off.to_le_bytes())?;
        for l in lens {
            off = off.saturating_add(l as u32);
            self.put(&off.to_le_bytes())?;
        }
        Ok(())
    }
}

/// Where a segment's bytes are.
enum Bytes {
    Mapped(memmap2::Mmap),
    Heap(Vec<u8>),
}

/// A segment opened for reading.
pub struct Segment {
    bytes: Bytes,
    pub generation: u64,
    pub docs: u32,
    pub files: u32,
    terms: u32,
    langs: u32,
    pub total_len: u64,
    sections: [(usize, usize); SECTIONS],
}

#[derive(Debug, thiserror::Error)]
#[error("ranking segment {0}")]
pub struct Damaged(String);

impl Segment {
    /// Maps the segment file at `path`.
    pub fn map(path: &Path) -> io::Result<Segment> {
        let file = std::fs::File::open(path)?;
        // SAFETY: the daemon writes segment files once, to a temporary name, and renames them
        // into place; nothing writes to a segment after that, so the mapping does not change
        // under us (a file replaced by rename keeps its old inode while mapped).
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Self::parse(Bytes::Mapped(map)).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// A segment held in memory (the delta).
    pub fn from_vec(bytes: Vec<u8>) -> Result<Segment, Damaged> {
        Self::parse(Bytes::Heap(bytes))
    }

    fn parse(bytes: Bytes) -> Result<Segment, Damaged> {
        let b: &[u8] = match &bytes {
            Bytes::Mapped(m) => m,
            Bytes::Heap(v) => v,
        };
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
            total_len: u64_at(32),
            sections,
            bytes: Bytes::Heap(Vec::new()),
        };
        let (n, nf, nt) = (seg.docs as usize, seg.files as usize, seg.terms as usize);
        let expect = [
            (Sec::TermOff, 4 * (nt + 1)),
            (Sec::ListOff, 8 * (nt + 1)),
            (Sec::ListLen, 4 * nt),
            (Sec::DocId, 8 * n),
            (Sec::DocLen, 4 * n),
            (Sec::DocKind, n),
            (Sec::DocFile, 4 * n),
            (Sec::DocLines, 8 * n),
            (Sec::DocBytes, 4 * n),
            (Sec::NameOff, 4 * (n + 1)),
            (Sec::ParentOff, 4 * (n + 1)),
            (Sec::PathOff, 4 * (nf + 1)),
            (Sec::FileLang, nf),
            (Sec::FileFirstDoc, 4 * (nf + 1)),
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

    fn u64_in(&self, s: Sec, i: usize) -> u64 {
        self.sec(s).get(8 * i..8 * i + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// The `i`-th of the strings in `bytes` delimited by `offsets`.
    fn string(&self, offsets: Sec, bytes: Sec, i: usize) -> &str {
        let (a, b) = (self.u32_in(offsets, i) as usize, self.u32_in(offsets, i + 1) as usize);
        self.sec(bytes).get(a..b).and_then(|s| std::str::from_utf8(s).ok()).unwrap_or("")
    }

    /// Heap bytes held (a mapped segment's pages belong to the OS's page cache).
    pub fn heap_bytes(&self) -> usize {
        match &self.bytes {
            Bytes::Mapped(_) => 0,
            Bytes::Heap(v) => v.capacity(),
        }
    }

    /// The postings of `term` (a stem): (doc, counts per column), in doc order.
    pub fn postings(&self, term: &str) -> PostingIter<'_> {
        let Some(t) = self.find_term(term) else { return PostingIter { bytes: &[], doc: 0, left: 0 } };
        let (a, b) = (self.u64_in(Sec::ListOff, t) as usize, self.u64_in(Sec::ListOff, t + 1) as usize);
        let bytes = self.sec(Sec::Postings).get(a..b).unwrap_or(&[]);
        PostingIter { bytes, doc: 0, left: self.u32_in(Sec::ListLen, t) as usize }
    }

    fn find_term(&self, term: &str) -> Option<usize> {
        let (mut lo, mut hi) = (0usize, self.terms as usize);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.string(Sec::TermOff, Sec::TermBytes, mid).cmp(term) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    pub fn doc_id(&self, d: u32) -> i64 {
        self.u64_in(Sec::DocId, d as usize) as i64
    }

    pub fn doc_len(&self, d: u32) -> u32 {
        self.u32_in(Sec::DocLen, d as usize)
    }

    pub fn doc_kind(&self, d: u32) -> u8 {
        self.sec(Sec::DocKind).get(d as usize).copied().unwrap_or(u8::MAX)
    }

    pub fn doc_file(&self, d: u32) -> u32 {
        self.u32_in(Sec::DocFile, d as usize)
    }

    /// The chunk as re-ranking sees it (no signature: that is read with the page shown).
    pub fn candidate(&self, d: u32, score: f64) -> Candidate {
        let i = d as usize;
        let file = self.doc_file(d) as usize;
        let parent = self.string(Sec::ParentOff, Sec::ParentBytes, i);
        Candidate {
            id: self.doc_id(d),
            path: self.path(file).to_owned(),
            language: self.language(file).to_owned(),
            kind: KINDS.get(self.doc_kind(d) as usize).copied().unwrap_or("raw").to_owned(),
            name: self.string(Sec::NameOff, Sec::NameBytes, i).to_owned(),
            signature: String::new(),
            parent: (!parent.is_empty()).then(|| parent.to_owned()),
            start_line: self.u32_in(Sec::DocLines, 2 * i),
            end_line: self.u32_in(Sec::DocLines, 2 * i + 1),
            bytes: self.u32_in(Sec::DocBytes, i) as usize,
            bm25: -score,
        }
    }

    pub fn path(&self, f: usize) -> &str {
        self.string(Sec::PathOff, Sec::PathBytes, f)
    }

    pub fn language(&self, f: usize) -> &str {
        let lang = self.sec(Sec::FileLang).get(f).copied().unwrap_or(0) as usize;
        self.string(Sec::LangOff, Sec::LangBytes, lang)
    }

    /// The file's chunk key (see `Store::chunk_keys`).
    pub fn key(&self, f: usize) -> &str {
        self.string(Sec::HashOff, Sec::HashBytes, f)
    }

    /// The chunks of file `f`: a range of docs.
    pub fn file_docs(&self, f: usize) -> std::ops::Range<u32> {
        self.u32_in(Sec::FileFirstDoc, f)..self.u32_in(Sec::FileFirstDoc, f + 1)
    }

    /// The file with this path (paths are sorted).
    pub fn find_file(&self, path: &str) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: i64, path: &str, name: &str, parent: Option<&str>) -> Candidate {
        Candidate {
            id,
            path: path.to_owned(),
            language: "python".to_owned(),
            kind: "function".to_owned(),
            name: name.to_owned(),
            signature: String::new(),
            parent: parent.map(str::to_owned),
            start_line: id as u32,
            end_line: id as u32 + 3,
            bytes: 40,
            bm25: 0.0,
        }
    }

    #[test]
    fn a_segment_reads_back_what_was_written() {
        let mut b = Builder::default();
        // A word four times: its count does not fit two bits.
        b.add(&chunk(7, "a.py", "retry", None), "retry retry retry retry upload", "h1");
        b.add(&chunk(9, "a.py", "upload", Some("Client")), "upload blob", "h1");
        for i in 0..300 {
            b.add(&chunk(100 + i, &format!("m/{i:03}.py"), "other", None), "upload", "h2");
        }
        let mut bytes = Vec::new();
        b.write(42, &mut bytes).unwrap();
        let seg = Segment::from_vec(bytes).unwrap();
        assert_eq!((seg.generation, seg.docs, seg.files), (42, 302, 301));
        let retry: Vec<_> = seg.postings("retri").collect();
        assert_eq!(retry, [(0, [1, 4, 0, 0])]);
        let upload: Vec<u32> = seg.postings("upload").map(|(d, _)| d).collect();
        assert_eq!(upload, (0..302).collect::<Vec<u32>>());
        assert_eq!(seg.postings("upload").len(), 302);
        assert_eq!(seg.postings("nothing").len(), 0);
        let c = seg.candidate(1, 2.0);
        assert_eq!(
            (c.id, c.name.as_str(), c.parent.as_deref(), c.path.as_str()),
            (9, "upload", Some("Client"), "a.py")
        );
        assert_eq!(seg.find_file("m/150.py"), Some(151));
        assert_eq!(seg.file_docs(151), 152..153);
        assert_eq!(seg.key(0), "h1:7:2");
        assert_eq!(seg.language(0), "python");
    }

    #[test]
    fn a_damaged_segment_is_refused_not_trusted() {
        let mut bytes = Vec::new();
        Builder::default().write(1, &mut bytes).unwrap();
        assert!(Segment::from_vec(bytes[..10].to_vec()).is_err());
        let mut bad = bytes.clone();
        bad[HEADER] = 0xFF; // the first section's offset points far past the end
        bad[HEADER + 7] = 0x7F;
        assert!(Segment::from_vec(bad).is_err());
    }
}
