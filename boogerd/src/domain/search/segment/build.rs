//! Writing a segment: chunks in, the flat layout out (see the parent module).

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::io::{self, Write};

use rust_stemmers::{Algorithm, Stemmer};

use super::postings::Postings;
use super::{HEADER, MAGIC, SECTIONS, Sec, TF_ESCAPE, each_token};
use crate::store::search::{Candidate, ScanSink};
use crate::store::words;

/// One posting as the segment stores it: the document's gap from the term's previous one
/// (a varint), then the term frequencies per column (one code byte, or an escape and four).
/// The bytes and how many there are (at most 10).
fn encode_posting(mut gap: u32, tf: [u8; 4]) -> ([u8; 10], usize) {
    let (mut out, mut n) = ([0u8; 10], 0);
    while gap >= 0x80 {
        out[n] = (gap as u8 & 0x7F) | 0x80;
        n += 1;
        gap >>= 7;
    }
    out[n] = gap as u8;
    n += 1;
    match tf_code(tf) {
        Some(code) => {
            out[n] = code;
            n += 1;
        }
        None => {
            out[n] = TF_ESCAPE;
            out[n + 1..n + 5].copy_from_slice(&tf);
            n += 5;
        }
    }
    (out, n)
}

/// Strings end to end, with where each ends.
#[derive(Default)]
struct Strings {
    text: String,
    ends: Vec<u32>,
}

impl Strings {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len().min(u32::MAX as usize) as u32);
    }

    fn get(&self, id: u32) -> &str {
        let end = self.ends[id as usize] as usize;
        let start = if id == 0 { 0 } else { self.ends[id as usize - 1] as usize };
        &self.text[start..end]
    }

    fn len(&self) -> usize {
        self.ends.len()
    }
}

/// Distinct strings numbered in the order they first come: their bytes end to end and a
/// table of ids found by hash. A large build meets a million distinct tokens; as map keys of
/// their own each cost a heap allocation and a 32-byte slot (about 90 bytes a token in all),
/// here their bytes and 9 bytes.
#[derive(Default)]
struct Interner {
    strings: Strings,
    table: hashbrown::HashTable<u32>,
    hasher: hashbrown::DefaultHashBuilder,
}

impl Interner {
    fn find(&self, s: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(s);
        self.table.find(hash, |&id| self.strings.get(id) == s).copied()
    }

    /// `s`'s id, and whether it was new.
    fn intern(&mut self, s: &str) -> (u32, bool) {
        let Self { strings, table, hasher } = self;
        let hash = hasher.hash_one(s);
        match table.entry(hash, |&id| strings.get(id) == s, |&id| hasher.hash_one(strings.get(id))) {
            hashbrown::hash_table::Entry::Occupied(e) => (*e.get(), false),
            hashbrown::hash_table::Entry::Vacant(e) => {
                let id = strings.len() as u32;
                strings.push(s);
                e.insert(id);
                (id, true)
            }
        }
    }

    fn len(&self) -> usize {
        self.strings.len()
    }
}

/// Accumulates chunks (grouped by file, files in path order) and writes a segment.
pub(crate) struct Builder {
    stemmer: Stemmer,
    /// Raw tokens, so a token is stemmed once per build; `raw_terms` maps their ids to terms.
    raw: Interner,
    raw_terms: Vec<u32>,
    /// Stems: a stem's id is its term id (distinct raw tokens can share a stem), which
    /// is its postings' term in `postings`.
    stems: Interner,
    doc_tf: HashMap<u32, [u8; 4]>,
    postings: Postings,
    ids: Vec<i64>,
    lens: Vec<u32>,
    kinds: Vec<u8>,
    files: Vec<u32>,
    lines: Vec<(u32, u32)>,
    bytes: Vec<u32>,
    /// Names and parents of every chunk, one string each with its ends (no per-chunk heap
    /// allocation: a large project has hundreds of thousands).
    names: Strings,
    parents: Strings,
    paths: Vec<String>,
    file_langs: Vec<u8>,
    file_first: Vec<u32>,
    langs: Vec<String>,
    hashes: Vec<String>,
    file_min_id: Vec<i64>,
    /// The token being looked up, reused (see [`each_token`]).
    token: String,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
            raw: Interner::default(),
            raw_terms: Vec::new(),
            stems: Interner::default(),
            doc_tf: HashMap::new(),
            postings: Postings::default(),
            ids: Vec::new(),
            lens: Vec::new(),
            kinds: Vec::new(),
            files: Vec::new(),
            lines: Vec::new(),
            bytes: Vec::new(),
            names: Strings::default(),
            parents: Strings::default(),
            paths: Vec::new(),
            file_langs: Vec::new(),
            file_first: Vec::new(),
            langs: Vec::new(),
            hashes: Vec::new(),
            file_min_id: Vec::new(),
            token: String::new(),
        }
    }
}

impl ScanSink for Builder {
    fn sizes(&mut self, chunks: usize, files: usize) {
        self.reserve(chunks, files);
    }

    fn chunk(&mut self, c: &Candidate, content: &str, hash: &str) {
        self.add(c, content, hash);
    }
}

impl Builder {
    /// Adds one chunk; `hash` is its file's content hash ("" in a delta, which is never
    /// compared with the store). Chunks of a file come together.
    pub(crate) fn add(&mut self, c: &Candidate, content: &str, hash: &str) {
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
        let mut buf = std::mem::take(&mut self.token);
        for (col, text) in [c.name.as_str(), content, word_col.as_str(), c.path.as_str()].into_iter().enumerate() {
            each_token(text, &mut buf, |tok| {
                let tid = match self.raw.find(tok) {
                    Some(r) => self.raw_terms[r as usize],
                    None => {
                        let (t, new) = self.stems.intern(&self.stemmer.stem(tok));
                        if new {
                            self.postings.add_term();
                        }
                        self.raw.intern(tok);
                        self.raw_terms.push(t);
                        t
                    }
                };
                let tf = self.doc_tf.entry(tid).or_insert([0; 4]);
                tf[col] = tf[col].saturating_add(1);
                len += 1;
            });
        }
        self.token = buf;
        for (&tid, &tf) in &self.doc_tf {
            self.postings.push(tid, doc, |gap| encode_posting(gap, tf));
        }
        self.ids.push(c.id);
        self.lens.push(len);
        self.kinds.push(c.kind as u8);
        self.files.push(self.paths.len() as u32 - 1);
        self.lines.push((c.start_line, c.end_line));
        self.bytes.push(c.bytes.min(u32::MAX as usize) as u32);
        self.names.push(&c.name);
        self.parents.push(c.parent.as_deref().unwrap_or_default());
    }

    /// Makes room for `chunks` chunks of `files` files at once: grown by doubling, the
    /// per-chunk columns of a two-million-chunk build held up to twice their size (and three
    /// times while a doubling copied).
    fn reserve(&mut self, chunks: usize, files: usize) {
        self.ids.reserve_exact(chunks);
        self.lens.reserve_exact(chunks);
        self.kinds.reserve_exact(chunks);
        self.files.reserve_exact(chunks);
        self.lines.reserve_exact(chunks);
        self.bytes.reserve_exact(chunks);
        self.names.ends.reserve_exact(chunks);
        self.parents.ends.reserve_exact(chunks);
        self.paths.reserve_exact(files);
        self.file_langs.reserve_exact(files);
        self.file_first.reserve_exact(files);
        self.hashes.reserve_exact(files);
        self.file_min_id.reserve_exact(files);
    }

    /// What the builder holds, for the log: distinct raw tokens, terms (stems), postings
    /// bytes and their capacity, chunks.
    pub(crate) fn held(&self) -> [usize; 5] {
        let (bytes, capacity) = self.postings.held();
        [self.raw.len(), self.stems.len(), bytes, capacity, self.ids.len()]
    }

    /// Writes the segment for `generation` to `out`.
    pub(crate) fn write(mut self, generation: u64, out: &mut impl Write) -> io::Result<()> {
        // Each file's key, as `Store::chunk_keys` gives it (empty without a content hash).
        let n_docs = self.ids.len() as u32;
        for (f, hash) in self.hashes.iter_mut().enumerate() {
            if !hash.is_empty() {
                let end = self.file_first.get(f + 1).copied().unwrap_or(n_docs);
                *hash = format!("{hash}:{}:{}", self.file_min_id[f], end - self.file_first[f]);
            }
        }
        // The raw tokens and the tables that found strings are done with: freed before the
        // sort below, the build's peak.
        drop(std::mem::take(&mut self.raw));
        drop(std::mem::take(&mut self.raw_terms));
        let stems = std::mem::take(&mut self.stems).strings;
        // Term ids in the order of their text, for binary search (ids sorted in place: four
        // bytes a term where pairs of a slice and an id took 24).
        let mut order: Vec<u32> = (0..stems.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| stems.get(a).cmp(stems.get(b)));
        let n_terms = order.len();
        let terms = 0..self.postings.terms() as u32;
        let n_postings: u64 = terms.clone().map(|t| u64::from(self.postings.count(t))).sum();
        let postings_bytes = terms.map(|t| self.postings.len(t)).sum::<usize>();
        let total_len: u64 = self.lens.iter().map(|&l| u64::from(l)).sum();
        let (n, nf) = (self.ids.len(), self.paths.len());
        let terms_bytes = stems.text.len();
        let lens = self.section_lens(n_terms, terms_bytes, postings_bytes);
        let mut table = Vec::with_capacity(SECTIONS);
        let mut at = align(HEADER + 16 * SECTIONS);
        for len in lens {
            table.push((at as u64, len as u64));
            at = align(at + len);
        }
        let mut w = Padded { out, at: 0 };
        w.put(MAGIC)?;
        w.put(&generation.to_le_bytes())?;
        for count in [n, nf, n_terms, self.langs.len()] {
            w.put(&(count as u32).to_le_bytes())?;
        }
        w.put(&total_len.to_le_bytes())?;
        w.put(&n_postings.to_le_bytes())?;
        for (off, len) in &table {
            w.put(&off.to_le_bytes())?;
            w.put(&len.to_le_bytes())?;
        }
        w.section(table[Sec::TermOff as usize].0, |w| w.offsets(order.iter().map(|&t| stems.get(t).len())))?;
        w.section(table[Sec::TermBytes as usize].0, |w| {
            order.iter().try_for_each(|&t| w.put(stems.get(t).as_bytes()))
        })?;
        w.section(table[Sec::ListOff as usize].0, |w| {
            let mut off = 0u64;
            w.put(&off.to_le_bytes())?;
            for &t in &order {
                off += self.postings.len(t) as u64;
                w.put(&off.to_le_bytes())?;
            }
            Ok(())
        })?;
        w.section(table[Sec::ListLen as usize].0, |w| {
            order.iter().try_for_each(|&t| w.put(&self.postings.count(t).to_le_bytes()))
        })?;
        w.section(table[Sec::Postings as usize].0, |w| {
            order.iter().try_for_each(|&t| self.postings.pieces(t).try_for_each(|piece| w.put(piece)))
        })?;
        self.write_chunks(&mut w, &table)?;
        self.write_files(&mut w, &table)?;
        w.pad_to(at)
    }

    /// Each section's length in bytes, in file order.
    fn section_lens(&self, n_terms: usize, terms_bytes: usize, postings_bytes: usize) -> [usize; SECTIONS] {
        let (n, nf) = (self.ids.len(), self.paths.len());
        let strings = |v: &[String]| v.iter().map(String::len).sum::<usize>();
        [
            4 * (n_terms + 1),
            terms_bytes,
            8 * (n_terms + 1),
            4 * n_terms,
            postings_bytes,
            8 * n,
            4 * n,
            n,
            4 * n,
            8 * n,
            4 * n,
            4 * (n + 1),
            self.names.text.len(),
            4 * (n + 1),
            self.parents.text.len(),
            4 * (nf + 1),
            strings(&self.paths),
            nf,
            4 * (nf + 1),
            4 * (nf + 1),
            strings(&self.hashes),
            4 * (self.langs.len() + 1),
            strings(&self.langs),
        ]
    }

    /// The per-chunk sections: ids, lengths, kinds, files, lines, sizes, names and parents.
    fn write_chunks<W: Write>(&self, w: &mut Padded<'_, W>, table: &[(u64, u64)]) -> io::Result<()> {
        w.section(table[Sec::DocId as usize].0, |w| self.ids.iter().try_for_each(|v| w.put(&v.to_le_bytes())))?;
        w.section(table[Sec::DocLen as usize].0, |w| self.lens.iter().try_for_each(|v| w.put(&v.to_le_bytes())))?;
        w.section(table[Sec::DocKind as usize].0, |w| w.put(&self.kinds))?;
        w.section(table[Sec::DocFile as usize].0, |w| self.files.iter().try_for_each(|v| w.put(&v.to_le_bytes())))?;
        w.section(table[Sec::DocLines as usize].0, |w| {
            self.lines.iter().try_for_each(|(a, b)| w.put(&a.to_le_bytes()).and_then(|()| w.put(&b.to_le_bytes())))
        })?;
        w.section(table[Sec::DocBytes as usize].0, |w| self.bytes.iter().try_for_each(|v| w.put(&v.to_le_bytes())))?;
        for (off_sec, bytes_sec, list) in
            [(Sec::NameOff, Sec::NameBytes, &self.names), (Sec::ParentOff, Sec::ParentBytes, &self.parents)]
        {
            w.section(table[off_sec as usize].0, |w| {
                std::iter::once(&0).chain(&list.ends).try_for_each(|v| w.put(&v.to_le_bytes()))
            })?;
            w.section(table[bytes_sec as usize].0, |w| w.put(list.text.as_bytes()))?;
        }
        Ok(())
    }

    /// The per-file sections: paths, languages, first chunks and content keys, and the
    /// languages' names.
    fn write_files<W: Write>(&self, w: &mut Padded<'_, W>, table: &[(u64, u64)]) -> io::Result<()> {
        let n = self.ids.len();
        w.section(table[Sec::PathOff as usize].0, |w| w.offsets(self.paths.iter().map(String::len)))?;
        w.section(table[Sec::PathBytes as usize].0, |w| self.paths.iter().try_for_each(|s| w.put(s.as_bytes())))?;
        w.section(table[Sec::FileLang as usize].0, |w| w.put(&self.file_langs))?;
        w.section(table[Sec::FileFirstDoc as usize].0, |w| {
            self.file_first.iter().chain(std::iter::once(&(n as u32))).try_for_each(|v| w.put(&v.to_le_bytes()))
        })?;
        w.section(table[Sec::HashOff as usize].0, |w| w.offsets(self.hashes.iter().map(String::len)))?;
        w.section(table[Sec::HashBytes as usize].0, |w| self.hashes.iter().try_for_each(|s| w.put(s.as_bytes())))?;
        w.section(table[Sec::LangOff as usize].0, |w| w.offsets(self.langs.iter().map(String::len)))?;
        w.section(table[Sec::LangBytes as usize].0, |w| self.langs.iter().try_for_each(|s| w.put(s.as_bytes())))?;
        Ok(())
    }
}

fn tf_code(tf: [u8; 4]) -> Option<u8> {
    let code = tf.iter().enumerate().try_fold(0u8, |acc, (i, &c)| (c <= 3).then_some(acc | (c << (2 * i))))?;
    (code != TF_ESCAPE).then_some(code)
}

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
