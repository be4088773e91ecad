//! Writing a segment: chunks in, the flat layout out (see the parent module).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use hashbrown::HashMap;

use crate::base::interner::{Interner, Strings};

use super::padded::{Padded, align};
use super::postings::Postings;
use super::spill::Column;
use super::{HEADER, LISTED, MAGIC, SECTIONS, Sec, each_token};
use super::{dictionary, lists};
use crate::store::search::{Candidate, ScanSink};
use crate::store::words::{self, ChunkWords};

/// Postings the arena holds before a build with a scratch directory spills them to a run.
/// A large tree's build from the store comes at the end of its index, the daemon's peak: on
/// the 36,000-file tree (126 MB of postings then, one entry a chunk) 32 MB made 4 runs and a
/// peak of 234-237 MB, 16 MB 9 runs and 217-218 MB, 8 MB 19 runs and 210 MB, the index as
/// fast within the machine's noise (BENCHMARKS.md, "Building a large tree"). With the
/// chunks' names interned beside the terms (about 25 MB there), 8 MB.
const POSTINGS_BUDGET: usize = 8 << 20;

/// Accumulates chunks (grouped by file, files in path order) and writes a segment.
pub(crate) struct Builder {
    /// Raw tokens, so a token is stemmed once per build; `raw_terms` maps their ids to terms.
    raw: Interner,
    raw_terms: Vec<u32>,
    /// Stems: a stem's id is its term id (distinct raw tokens can share a stem), which
    /// is its postings' term in `postings`.
    stems: Interner,
    doc_tf: HashMap<u32, [u8; 4]>,
    postings: Postings,
    /// Per term whose last chunks hold it in their path alone: the run of them not yet
    /// written (path words only: a few terms).
    open_runs: HashMap<u32, OpenRun>,
    /// Where postings runs and the per-chunk columns go once they outgrow memory (none: all
    /// in memory, for the small segments of changed files).
    scratch: Option<PathBuf>,
    /// Postings the arena holds before they are spilled.
    budget: usize,
    /// The first error setting something down there, returned by `write`.
    failed: Option<io::Error>,
    docs: u32,
    total_len: u64,
    /// The per-chunk sections, each in document order: ids (i64 until written: only those of
    /// files whose chunks' ids are not consecutive are kept, see `file_ids`), lengths, kinds
    /// (u8), files, lines (two u32s), sizes (u32); names and parents (u32s: their `labels`).
    ids: Column,
    lens: Column,
    kinds: Column,
    files: Column,
    lines: Column,
    bytes: Column,
    names: Column,
    parents: Column,
    /// The distinct names and parents, "" first.
    labels: Interner,
    paths: Vec<String>,
    file_langs: Vec<u8>,
    file_first: Vec<u32>,
    langs: Vec<String>,
    hashes: Vec<String>,
    file_min_id: Vec<i64>,
    /// Per file, whether its chunks came with consecutive ids, the first the lowest: then a
    /// chunk's id is its file's first plus its place in the file, and is not stored.
    file_consecutive: Vec<bool>,
    last_id: i64,
    /// The token being looked up, reused (see [`each_token`]).
    token: String,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            raw: Interner::default(),
            raw_terms: Vec::new(),
            stems: Interner::default(),
            doc_tf: HashMap::new(),
            postings: Postings::default(),
            open_runs: HashMap::new(),
            scratch: None,
            budget: POSTINGS_BUDGET,
            failed: None,
            docs: 0,
            total_len: 0,
            ids: Column::default(),
            lens: Column::default(),
            kinds: Column::default(),
            files: Column::default(),
            lines: Column::default(),
            bytes: Column::default(),
            names: Column::default(),
            parents: Column::default(),
            labels: {
                let mut labels = Interner::default();
                labels.intern("");
                labels
            },
            paths: Vec::new(),
            file_langs: Vec::new(),
            file_first: Vec::new(),
            langs: Vec::new(),
            hashes: Vec::new(),
            file_min_id: Vec::new(),
            file_consecutive: Vec::new(),
            last_id: 0,
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
    /// A builder that sets postings runs and per-chunk columns down in unnamed files in `dir`
    /// once they outgrow memory: a large tree's build holds a bounded part of its postings.
    pub(crate) fn spilling_into(dir: &Path) -> Self {
        Self { scratch: Some(dir.to_owned()), ..Self::default() }
    }

    /// The same, spilling postings past `budget` bytes (a test's way to spill often).
    #[cfg(test)]
    pub(super) fn spilling_past(dir: &Path, budget: usize) -> Self {
        Self { budget, ..Self::spilling_into(dir) }
    }

    /// Adds one chunk; `hash` is its file's content hash ("" in a delta, which is never
    /// compared with the store). Chunks of a file come together.
    pub(crate) fn add(&mut self, c: &Candidate, content: &str, hash: &str) {
        self.add_text(c, content, &words::words_for(&c.name, content), hash);
    }

    /// [`add`](Self::add) with the chunk's split identifiers already made
    /// ([`words::words_for`]): every token of its name, text, split identifiers and path is
    /// looked up in this build's own table of tokens, each stemmed once per build. A build
    /// from the store takes its chunks so: one thread reads and decompresses them, and a
    /// table of every token (a million in a large tree) finds most of them at once.
    pub(crate) fn add_text(&mut self, c: &Candidate, content: &str, split: &str, hash: &str) {
        self.start_chunk(c, hash);
        let mut len = 0u32;
        let mut buf = std::mem::take(&mut self.token);
        for (col, text) in [c.name.as_str(), content, split, c.path.as_str()].into_iter().enumerate() {
            each_token(text, &mut buf, |tok| {
                let tid = self.token_term(tok);
                len = len.saturating_add(self.count(col, tid, 1));
            });
        }
        self.token = buf;
        self.end_chunk(c, len);
    }

    /// [`add`](Self::add) with the chunk's terms already made ([`ChunkWords::of`] its name
    /// and content, as the indexing workers make them): its text's distinct terms, each with
    /// its count.
    pub(crate) fn add_words(&mut self, c: &Candidate, words: &ChunkWords, hash: &str) {
        self.start_chunk(c, hash);
        let mut len = 0u32;
        // The columns: name, content, split identifiers (terms already), path.
        for term in words.name.split_terminator(' ') {
            let t = self.term_id(term);
            len = len.saturating_add(self.count(0, t, 1));
        }
        for (term, n) in words.bag.each() {
            let t = self.term_id(term);
            len = len.saturating_add(self.count(1, t, n));
        }
        for term in words.split.split_terminator(' ') {
            let t = self.term_id(term);
            len = len.saturating_add(self.count(2, t, 1));
        }
        let mut buf = std::mem::take(&mut self.token);
        each_token(&c.path, &mut buf, |tok| {
            let tid = self.token_term(tok);
            len = len.saturating_add(self.count(3, tid, 1));
        });
        self.token = buf;
        self.end_chunk(c, len);
    }

    /// A new chunk of `c`'s file (a new file's first).
    fn start_chunk(&mut self, c: &Candidate, hash: &str) {
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
            self.file_first.push(self.docs);
            self.hashes.push(hash.to_owned());
            self.file_min_id.push(c.id);
            self.file_consecutive.push(true);
        } else if self.last_id.checked_add(1) != Some(c.id) {
            *self.file_consecutive.last_mut().expect("a file") = false;
        }
        self.last_id = c.id;
        let f = self.paths.len() - 1;
        self.file_min_id[f] = self.file_min_id[f].min(c.id);
        self.doc_tf.clear();
    }

    /// The chunk counted: its postings, its columns, `len` tokens.
    fn end_chunk(&mut self, c: &Candidate, len: u32) {
        let doc = self.docs;
        let Self { doc_tf, postings, open_runs, .. } = self;
        for (&tid, &tf) in doc_tf.iter() {
            if let [0, 0, 0, path] = tf {
                match open_runs.get_mut(&tid) {
                    Some(run) if run.last + 1 == doc && run.path == path => run.last = doc,
                    _ => {
                        if let Some(run) = open_runs.insert(tid, OpenRun { first: doc, last: doc, path }) {
                            run.write(tid, postings);
                        }
                    }
                }
            } else {
                if let Some(run) = open_runs.remove(&tid) {
                    run.write(tid, postings);
                }
                postings.push(tid, doc, doc, |gap| lists::encode_chunk(gap, tf));
            }
        }
        self.docs += 1;
        self.total_len += u64::from(len);
        let put = self.put_columns(c, len);
        let spilled = match &self.scratch {
            Some(dir) if self.postings.arena_bytes() >= self.budget => self.spill_postings(&dir.clone()),
            _ => Ok(()),
        };
        if let Err(e) = put.and(spilled) {
            self.failed.get_or_insert(e);
        }
    }

    /// Counts term `tid` `n` times more in column `col` of the chunk being added; returns `n`.
    fn count(&mut self, col: usize, tid: u32, n: u32) -> u32 {
        let tf = self.doc_tf.entry(tid).or_insert([0; 4]);
        tf[col] = tf[col].saturating_add(n.min(255) as u8);
        n
    }

    /// The id of `term` (a stem), new terms given their postings.
    fn term_id(&mut self, term: &str) -> u32 {
        let (t, new) = self.stems.intern(term);
        if new {
            self.postings.add_term();
        }
        t
    }

    /// The term id of a raw token, stemmed once per build.
    fn token_term(&mut self, tok: &str) -> u32 {
        if let Some(r) = self.raw.find(tok) {
            return self.raw_terms[r as usize];
        }
        let t = crate::base::terms::with_stem(tok, |stem| self.term_id(stem));
        self.raw.intern(tok);
        self.raw_terms.push(t);
        t
    }

    fn put_columns(&mut self, c: &Candidate, len: u32) -> io::Result<()> {
        let dir = self.scratch.as_deref();
        let file = self.paths.len() as u32 - 1;
        self.ids.put(&c.id.to_le_bytes(), dir)?;
        self.lens.put(&len.to_le_bytes(), dir)?;
        self.kinds.put(&[c.kind as u8], dir)?;
        self.files.put(&file.to_le_bytes(), dir)?;
        let mut lines = [0u8; 8];
        lines[..4].copy_from_slice(&c.start_line.to_le_bytes());
        lines[4..].copy_from_slice(&c.end_line.to_le_bytes());
        self.lines.put(&lines, dir)?;
        self.bytes.put(&(c.bytes.min(u32::MAX as usize) as u32).to_le_bytes(), dir)?;
        let (name, _) = self.labels.intern(&c.name);
        self.names.put(&name.to_le_bytes(), dir)?;
        let (parent, _) = self.labels.intern(c.parent.as_deref().unwrap_or_default());
        self.parents.put(&parent.to_le_bytes(), dir)
    }

    /// Sets the arena's postings down as a run, its terms in the segment's order (their
    /// text's), so that `write` merges the runs reading each once.
    fn spill_postings(&mut self, dir: &Path) -> io::Result<()> {
        let terms = 0..self.postings.terms() as u32;
        let mut order: Vec<u32> = terms.filter(|&t| self.postings.in_arena(t)).collect();
        order.sort_unstable_by(|&a, &b| self.stems.strings.get(a).cmp(self.stems.strings.get(b)));
        self.postings.spill(&order, dir)
    }

    /// Makes room for `chunks` chunks of `files` files at once: grown by doubling, the
    /// per-chunk columns of a two-million-chunk build held up to twice their size (and three
    /// times while a doubling copied).
    fn reserve(&mut self, chunks: usize, files: usize) {
        for (column, width) in [(&mut self.ids, 8), (&mut self.lens, 4), (&mut self.kinds, 1), (&mut self.files, 4)] {
            column.reserve(chunks * width);
        }
        for (column, width) in [(&mut self.lines, 8), (&mut self.bytes, 4)] {
            column.reserve(chunks * width);
        }
        self.names.reserve(chunks * 4);
        self.parents.reserve(chunks * 4);
        self.paths.reserve_exact(files);
        self.file_langs.reserve_exact(files);
        self.file_first.reserve_exact(files);
        self.hashes.reserve_exact(files);
        self.file_min_id.reserve_exact(files);
        self.file_consecutive.reserve_exact(files);
    }

    /// What the builder holds, for the log: distinct raw tokens, terms (stems), postings
    /// bytes, the arena's capacity and the runs spilled, chunks.
    pub(crate) fn held(&self) -> [usize; 6] {
        let (bytes, capacity, runs) = self.postings.held();
        [self.raw.len(), self.stems.len(), bytes, capacity, runs, self.docs as usize]
    }

    /// Writes the segment for `generation` to `out`.
    pub(crate) fn write(mut self, generation: u64, out: &mut impl Write) -> io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        // Each file's key, as `Store::chunk_keys` gives it (empty without a content hash).
        for f in 0..self.hashes.len() {
            if !self.hashes[f].is_empty() {
                self.hashes[f] = format!("{}:{}:{}", self.hashes[f], self.file_min_id[f], self.file_docs(f).len());
            }
        }
        // The raw tokens and the tables that found strings are done with: freed before the
        // sort below, the build's peak.
        drop(std::mem::take(&mut self.raw));
        drop(std::mem::take(&mut self.raw_terms));
        let labels = std::mem::take(&mut self.labels).strings;
        let stems = std::mem::take(&mut self.stems).strings;
        // Term ids in the order of their text (ids sorted in place: four bytes a term where
        // pairs of a slice and an id took 24).
        let mut order: Vec<u32> = (0..stems.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| stems.get(a).cmp(stems.get(b)));
        let n_terms = order.len();
        for (t, run) in std::mem::take(&mut self.open_runs) {
            run.write(t, &mut self.postings);
        }
        // The term table, its bytes counted before they are written.
        let postings = &self.postings;
        let each_term = || order.iter().map(|&t| (stems.get(t).as_bytes(), postings.count(t), postings.len(t)));
        let (mut blocks, mut terms_bytes) = (Vec::new(), 0);
        dictionary::encode(
            each_term(),
            |b| blocks.extend_from_slice(b),
            |b| {
                terms_bytes += b.len();
                Ok(())
            },
        )?;
        let terms = 0..self.postings.terms() as u32;
        let n_postings: u64 = terms.clone().map(|t| u64::from(self.postings.count(t))).sum();
        let postings_bytes = terms.map(|t| self.postings.len(t)).sum::<usize>();
        let (n, nf) = (self.docs as usize, self.paths.len());
        let (file_ids, listed) = self.file_ids(self.id_base())?;
        let lens = self.section_lens([blocks.len(), terms_bytes], &labels, postings_bytes, listed);
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
        w.put(&self.total_len.to_le_bytes())?;
        w.put(&n_postings.to_le_bytes())?;
        w.put(&self.id_base().to_le_bytes())?;
        for (off, len) in &table {
            w.put(&off.to_le_bytes())?;
            w.put(&len.to_le_bytes())?;
        }
        w.section(table[Sec::TermBlocks as usize].0, |w| w.put(&blocks))?;
        w.section(table[Sec::Terms as usize].0, |w| dictionary::encode(each_term(), |_| {}, |b| w.put(b)))?;
        // The terms' and labels' text are done with before the postings are merged.
        drop(stems);
        w.section(table[Sec::LabelOff as usize].0, |w| {
            w.offsets((0..labels.len() as u32).map(|l| labels.get(l).len()))
        })?;
        w.section(table[Sec::LabelBytes as usize].0, |w| w.put(labels.text.as_bytes()))?;
        drop(labels);
        // Each term's postings: its bytes in every run, oldest first, then in the arena.
        let mut runs = self.postings.take_runs()?;
        w.section(table[Sec::Postings as usize].0, |w| {
            order.iter().try_for_each(|&t| {
                runs.iter_mut().try_for_each(|run| run.take(t, |piece| w.put(piece)))?;
                self.postings.arena_pieces(t).try_for_each(|piece| w.put(piece))
            })
        })?;
        drop(runs);
        self.write_chunks(&mut w, &table, &file_ids)?;
        self.write_files(&mut w, &table, &file_ids)?;
        w.pad_to(at)
    }

    /// Each section's length in bytes, in file order.
    fn section_lens(
        &self,
        [blocks, terms]: [usize; 2],
        labels: &Strings,
        postings: usize,
        listed: usize,
    ) -> [usize; SECTIONS] {
        let (n, nf) = (self.docs as usize, self.paths.len());
        let strings = |v: &[String]| v.iter().map(String::len).sum::<usize>();
        [
            blocks,
            terms,
            4 * (labels.len() + 1),
            labels.text.len(),
            postings,
            4 * listed,
            4 * n,
            n,
            4 * n,
            8 * n,
            4 * n,
            4 * n,
            4 * n,
            4 * (nf + 1),
            strings(&self.paths),
            nf,
            4 * (nf + 1),
            4 * nf,
            4 * (nf + 1),
            strings(&self.hashes),
            4 * (self.langs.len() + 1),
            strings(&self.langs),
        ]
    }

    /// Per file, how its chunks' ids are read back (`Segment::doc_id`): its first id over
    /// `base` when they are consecutive, else [`LISTED`] and where they start among the ids
    /// listed; and how many are listed. (On a large tree, 2 of 33,587 files were listed: a
    /// re-index that kept some of a file's rows leaves its ids out of order.)
    fn file_ids(&self, base: i64) -> io::Result<(Vec<u32>, usize)> {
        let mut listed = 0usize;
        let mut values = Vec::with_capacity(self.paths.len());
        for f in 0..self.paths.len() {
            let count = self.file_docs(f).len() as u64;
            let first = u32::try_from(self.file_min_id[f].wrapping_sub(base)).ok();
            match first {
                Some(v) if self.file_consecutive[f] && v & LISTED == 0 && u64::from(v) + count <= 1 << 32 => {
                    values.push(v)
                }
                _ => {
                    let at = u32::try_from(listed).ok().filter(|at| at & LISTED == 0);
                    values.push(LISTED | at.ok_or_else(|| io::Error::other("too many chunks for a ranking segment"))?);
                    listed += count as usize;
                }
            }
        }
        Ok((values, listed))
    }

    /// File `f`'s chunks: a range of docs.
    fn file_docs(&self, f: usize) -> std::ops::Range<u32> {
        self.file_first[f]..self.file_first.get(f + 1).copied().unwrap_or(self.docs)
    }

    /// The per-chunk sections: the ids of files whose ids are listed (`file_ids`), lengths,
    /// kinds, files, lines, sizes, names and parents, each read back from its column.
    fn write_chunks<W: Write>(
        &mut self,
        w: &mut Padded<'_, W>,
        table: &[(u64, u64)],
        file_ids: &[u32],
    ) -> io::Result<()> {
        let base = self.id_base();
        // The chunks whose ids are listed: their files' ranges, in document order.
        let listed: Vec<std::ops::Range<u32>> =
            (0..self.paths.len()).filter(|&f| file_ids[f] & LISTED != 0).map(|f| self.file_docs(f)).collect();
        let mut listed = listed.into_iter().peekable();
        let Self { ids, lens, kinds, files, lines, bytes, names, parents, .. } = self;
        w.section(table[Sec::ListedIds as usize].0, |w| {
            // Each id over the lowest, in four bytes; the column's pieces may split an id.
            let mut held = [0u8; 8];
            let (mut filled, mut doc) = (0, 0u32);
            ids.read_back(|mut piece| {
                while !piece.is_empty() {
                    let n = (8 - filled).min(piece.len());
                    held[filled..filled + n].copy_from_slice(&piece[..n]);
                    (filled, piece) = (filled + n, &piece[n..]);
                    if filled == 8 {
                        while listed.peek().is_some_and(|r| r.end <= doc) {
                            listed.next();
                        }
                        if listed.peek().is_some_and(|r| r.contains(&doc)) {
                            let id = i64::from_le_bytes(held);
                            let over = u32::try_from(id.wrapping_sub(base)).map_err(|_| {
                                io::Error::other("chunk ids more than 4 billion apart in one ranking segment")
                            })?;
                            w.put(&over.to_le_bytes())?;
                        }
                        (filled, doc) = (0, doc + 1);
                    }
                }
                Ok(())
            })
        })?;
        for (sec, column) in [
            (Sec::DocLen, lens),
            (Sec::DocKind, kinds),
            (Sec::DocFile, files),
            (Sec::DocLines, lines),
            (Sec::DocBytes, bytes),
            (Sec::DocName, names),
            (Sec::DocParent, parents),
        ] {
            w.section(table[sec as usize].0, |w| column.read_back(|b| w.put(b)))?;
        }
        Ok(())
    }

    /// The lowest chunk id added (0 for none): what the stored ids are counted from.
    fn id_base(&self) -> i64 {
        self.file_min_id.iter().copied().min().unwrap_or(0)
    }

    /// The per-file sections: paths, languages, first chunks and content keys, and the
    /// languages' names.
    fn write_files<W: Write>(&self, w: &mut Padded<'_, W>, table: &[(u64, u64)], file_ids: &[u32]) -> io::Result<()> {
        let n = self.docs as usize;
        w.section(table[Sec::PathOff as usize].0, |w| w.offsets(self.paths.iter().map(String::len)))?;
        w.section(table[Sec::PathBytes as usize].0, |w| self.paths.iter().try_for_each(|s| w.put(s.as_bytes())))?;
        w.section(table[Sec::FileLang as usize].0, |w| w.put(&self.file_langs))?;
        w.section(table[Sec::FileFirstDoc as usize].0, |w| {
            self.file_first.iter().chain(std::iter::once(&(n as u32))).try_for_each(|v| w.put(&v.to_le_bytes()))
        })?;
        w.section(table[Sec::FileIds as usize].0, |w| file_ids.iter().try_for_each(|v| w.put(&v.to_le_bytes())))?;
        w.section(table[Sec::HashOff as usize].0, |w| w.offsets(self.hashes.iter().map(String::len)))?;
        w.section(table[Sec::HashBytes as usize].0, |w| self.hashes.iter().try_for_each(|s| w.put(s.as_bytes())))?;
        w.section(table[Sec::LangOff as usize].0, |w| w.offsets(self.langs.iter().map(String::len)))?;
        w.section(table[Sec::LangBytes as usize].0, |w| self.langs.iter().try_for_each(|s| w.put(s.as_bytes())))?;
        Ok(())
    }
}

/// Chunks one after another that hold a term in their path alone, each as often.
struct OpenRun {
    first: u32,
    last: u32,
    path: u8,
}

impl OpenRun {
    fn write(self, term: u32, postings: &mut Postings) {
        postings.push(term, self.first, self.last, |gap| lists::encode_run(gap, self.last - self.first, self.path));
    }
}
