//! The warm ranking index: term → postings, held in memory by the daemon.
//!
//! FTS5 computes bm25 for every row a query matches (about 0.5 µs each), so a common word
//! costs milliseconds. Here each posting costs a few nanoseconds: scores accumulate
//! term-at-a-time into one slot per chunk. The formula is FTS5's bm25 with the same column
//! weights (name, content, split identifiers) plus the file's path, so the re-ranking keeps
//! its scale; only this index ranks by path words.
//!
//! Built from the store in the background whenever its content changes; until then (and for
//! phrase queries and glob filters, which need positions or SQL) search uses FTS5. Tokens are
//! alphanumeric runs, lowercased and stemmed (Snowball English), like FTS5's
//! `porter unicode61`.

use std::cell::RefCell;
use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};

use crate::index::chunk::KINDS;
use crate::store::search::{BM25_WEIGHTS, Filters, PATH_WEIGHT};
use crate::store::{Store, StoreError, words};

const K1: f64 = 1.2;
const B: f64 = 0.75;

#[derive(Clone, Copy)]
struct Posting {
    doc: u32,
    /// Occurrences in name, content, words, path (saturating).
    tf: [u8; 4],
}

pub struct Postings {
    /// The store content generation this was built from.
    pub content_generation: u64,
    terms: HashMap<Box<str>, u32>,
    lists: Vec<Vec<Posting>>,
    /// Per chunk: its id, token count, kind, file, and what re-ranking reads (name, lines,
    /// size), so only the page that is shown is read from SQLite.
    ids: Vec<i64>,
    lens: Vec<u32>,
    kinds: Vec<u8>,
    files: Vec<u32>,
    names: Vec<Box<str>>,
    parents: Vec<Option<Box<str>>>,
    lines: Vec<(u32, u32)>,
    bytes: Vec<u32>,
    avgdl: f64,
    /// Per file: path and language.
    paths: Vec<String>,
    languages: Vec<String>,
    /// Heap held, estimated once built.
    heap: usize,
}

/// One ranked chunk: what re-ranking needs (signature and parent left empty until the page
/// is read), and whether it matched every term.
pub type Ranked = (crate::store::search::Candidate, bool);

thread_local! {
    static SCRATCH: RefCell<(Vec<f64>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

pub fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase)
}

/// What adding chunks needs besides the index: the stemmer and each raw token's term, so a
/// token is stemmed once per build.
struct Builder {
    stemmer: Stemmer,
    raw: HashMap<String, u32>,
    doc_tf: HashMap<u32, [u8; 4]>,
}

impl Builder {
    fn new() -> Self {
        Self { stemmer: Stemmer::create(Algorithm::English), raw: HashMap::new(), doc_tf: HashMap::new() }
    }
}

impl Postings {
    fn empty(content_generation: u64) -> Postings {
        Postings {
            content_generation,
            terms: HashMap::new(),
            lists: Vec::new(),
            ids: Vec::new(),
            lens: Vec::new(),
            kinds: Vec::new(),
            files: Vec::new(),
            names: Vec::new(),
            parents: Vec::new(),
            lines: Vec::new(),
            bytes: Vec::new(),
            avgdl: 1.0,
            paths: Vec::new(),
            languages: Vec::new(),
            heap: 0,
        }
    }

    /// Heap held by this index (an estimate: containers' capacities plus their strings).
    pub fn heap_bytes(&self) -> usize {
        self.heap
    }

    pub fn build(store: &Store) -> Result<Postings, StoreError> {
        let mut p = Postings::empty(store.content_generation());
        let mut b = Builder::new();
        store.scan(&Filters::default(), |c, content| {
            p.add(&mut b, c, content);
            true
        })?;
        p.finish();
        Ok(p)
    }

    /// A copy in which the chunks of the `changed` files are replaced by what the store holds
    /// for them now (none, for a deleted file). Costs a pass over the postings plus the
    /// changed chunks, instead of re-reading and re-tokenizing the whole project: this is how
    /// the index stays warm while the watcher applies edits.
    pub fn updated(&self, store: &Store, changed: &[String]) -> Result<Postings, StoreError> {
        let mut changed = changed.to_vec();
        changed.sort();
        changed.dedup();
        let gone: std::collections::HashSet<&str> = changed.iter().map(String::as_str).collect();
        let mut p = Postings::empty(store.content_generation());
        let mut file_map = vec![u32::MAX; self.paths.len()];
        for (i, path) in self.paths.iter().enumerate() {
            if !gone.contains(path.as_str()) {
                file_map[i] = p.paths.len() as u32;
                p.paths.push(path.clone());
                p.languages.push(self.languages[i].clone());
            }
        }
        let mut doc_map = vec![u32::MAX; self.ids.len()];
        for d in 0..self.ids.len() {
            let file = file_map[self.files[d] as usize];
            if file == u32::MAX {
                continue;
            }
            doc_map[d] = p.ids.len() as u32;
            p.ids.push(self.ids[d]);
            p.lens.push(self.lens[d]);
            p.kinds.push(self.kinds[d]);
            p.files.push(file);
            p.names.push(self.names[d].clone());
            p.parents.push(self.parents[d].clone());
            p.lines.push(self.lines[d]);
            p.bytes.push(self.bytes[d]);
        }
        p.terms = self.terms.clone();
        p.lists = self
            .lists
            .iter()
            .map(|list| {
                list.iter()
                    .filter_map(|x| {
                        let doc = doc_map[x.doc as usize];
                        (doc != u32::MAX).then_some(Posting { doc, tf: x.tf })
                    })
                    .collect()
            })
            .collect();
        let mut b = Builder::new();
        store.scan_files(&changed, |c, content| p.add(&mut b, c, content))?;
        p.finish();
        Ok(p)
    }

    /// Appends one chunk. Chunks of one file must come together.
    fn add(&mut self, b: &mut Builder, c: &crate::store::search::Candidate, content: &str) {
        if self.paths.last() != Some(&c.path) {
            self.paths.push(c.path.clone());
            self.languages.push(c.language.clone());
        }
        let doc = self.ids.len() as u32;
        b.doc_tf.clear();
        let mut len = 0u32;
        let word_col = words::words_for(&c.name, content);
        for (col, text) in [c.name.as_str(), content, word_col.as_str(), c.path.as_str()].into_iter().enumerate() {
            for tok in tokens(text) {
                let tid = match b.raw.get(&tok) {
                    Some(t) => *t,
                    None => {
                        let stem = b.stemmer.stem(&tok).into_owned();
                        let next = self.terms.len() as u32;
                        let t = *self.terms.entry(stem.into_boxed_str()).or_insert(next);
                        if t as usize == self.lists.len() {
                            self.lists.push(Vec::new());
                        }
                        b.raw.insert(tok, t);
                        t
                    }
                };
                let tf = b.doc_tf.entry(tid).or_insert([0; 4]);
                tf[col] = tf[col].saturating_add(1);
                len += 1;
            }
        }
        for (tid, tf) in b.doc_tf.drain() {
            self.lists[tid as usize].push(Posting { doc, tf });
        }
        self.ids.push(c.id);
        self.lens.push(len);
        self.kinds.push(KINDS.iter().position(|k| *k == c.kind).unwrap_or(KINDS.len() - 1) as u8);
        self.files.push(self.paths.len() as u32 - 1);
        self.names.push(c.name.clone().into_boxed_str());
        self.parents.push(c.parent.clone().map(String::into_boxed_str));
        self.lines.push((c.start_line, c.end_line));
        self.bytes.push(c.bytes as u32);
    }

    fn finish(&mut self) {
        let total: u64 = self.lens.iter().map(|&l| u64::from(l)).sum();
        self.avgdl = (total as f64 / self.ids.len().max(1) as f64).max(1.0);
        for list in &mut self.lists {
            list.shrink_to_fit();
        }
        let strings = |v: &[String]| v.iter().map(|s| s.capacity() + 24).sum::<usize>();
        self.heap = self.terms.keys().map(|k| k.len() + 16 + 8).sum::<usize>()
            + self.lists.iter().map(|l| l.capacity() * std::mem::size_of::<Posting>() + 24).sum::<usize>()
            + self.ids.len() * (8 + 4 + 1 + 4 + 8 + 4 + 16 + 24)
            + self.names.iter().map(|n| n.len() + 16).sum::<usize>()
            + self.parents.iter().map(|p| p.as_ref().map_or(0, |p| p.len()) + 16).sum::<usize>()
            + strings(&self.paths)
            + strings(&self.languages);
    }

    /// Can this index answer for these filters (globs need SQL)?
    pub fn supports(filters: &Filters) -> bool {
        !filters.path.as_deref().is_some_and(|p| p.contains(['*', '?', '[']))
    }

    /// Ranks the chunks matching all `words` (up to `limit`) and any of them (up to `limit`).
    /// `words` are single words (no phrases).
    pub fn rank(&self, words: &[String], filters: &Filters, limit: usize) -> Vec<Ranked> {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut lists: Vec<&Vec<Posting>> = Vec::new();
        for w in words {
            let stem = stemmer.stem(&w.to_lowercase()).into_owned();
            if let Some(t) = self.terms.get(stem.as_str()) {
                lists.push(&self.lists[*t as usize]);
            }
        }
        let n_terms = words.len();
        let n = self.ids.len();
        let file_ok = self.file_filter(filters);
        let kind = filters.kind.as_deref().map(|k| KINDS.iter().position(|x| *x == k).map_or(u8::MAX, |i| i as u8));
        SCRATCH.with(|s| {
            let (scores, counts) = &mut *s.borrow_mut();
            if scores.len() < n {
                scores.resize(n, 0.0);
                counts.resize(n, 0);
            }
            let mut touched: Vec<u32> = Vec::new();
            for list in &lists {
                let hits = list.len() as f64;
                let idf = ((n as f64 - hits + 0.5) / (hits + 0.5)).ln().max(1e-6);
                for p in list.iter() {
                    let d = p.doc as usize;
                    let weights = [BM25_WEIGHTS[0], BM25_WEIGHTS[1], BM25_WEIGHTS[2], PATH_WEIGHT];
                    let freq: f64 = p.tf.iter().zip(weights).map(|(t, w)| f64::from(*t) * w).sum();
                    let norm = K1 * (1.0 - B + B * f64::from(self.lens[d]) / self.avgdl);
                    if counts[d] == 0 {
                        touched.push(p.doc);
                    }
                    counts[d] = counts[d].saturating_add(1);
                    scores[d] += idf * (freq * (K1 + 1.0)) / (freq + norm);
                }
            }
            let mut all: Vec<(u32, f64, bool)> = touched
                .iter()
                .filter(|&&d| file_ok.as_ref().is_none_or(|ok| ok[self.files[d as usize] as usize]))
                .filter(|&&d| kind.is_none_or(|k| self.kinds[d as usize] == k))
                .map(|&d| (d, scores[d as usize], counts[d as usize] as usize >= n_terms))
                .collect();
            for &d in &touched {
                scores[d as usize] = 0.0;
                counts[d as usize] = 0;
            }
            let by_score = |a: &(u32, f64, bool), b: &(u32, f64, bool)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
            let mut and: Vec<(u32, f64, bool)> = all.iter().filter(|x| x.2).copied().collect();
            top(&mut and, limit, by_score);
            top(&mut all, limit, by_score);
            let mut out: Vec<Ranked> = and.iter().map(|&(d, s, _)| (self.candidate(d, s), true)).collect();
            for &(d, s, a) in &all {
                if !a {
                    out.push((self.candidate(d, s), false));
                }
            }
            out
        })
    }

    fn candidate(&self, d: u32, score: f64) -> crate::store::search::Candidate {
        let d = d as usize;
        let file = self.files[d] as usize;
        crate::store::search::Candidate {
            id: self.ids[d],
            path: self.paths[file].clone(),
            language: self.languages[file].clone(),
            kind: KINDS.get(self.kinds[d] as usize).copied().unwrap_or("raw").to_owned(),
            name: self.names[d].to_string(),
            signature: String::new(),
            parent: self.parents[d].as_deref().map(str::to_owned),
            start_line: self.lines[d].0,
            end_line: self.lines[d].1,
            bytes: self.bytes[d] as usize,
            bm25: -score,
        }
    }

    /// Per file: passes the language and path-prefix filters (`None`: no file filter).
    fn file_filter(&self, f: &Filters) -> Option<Vec<bool>> {
        if f.language.is_none() && f.path.is_none() {
            return None;
        }
        let prefix = f.path.as_deref().map(|p| p.trim_start_matches("./").trim_end_matches('/'));
        Some(
            self.paths
                .iter()
                .zip(&self.languages)
                .map(|(path, lang)| {
                    f.language.as_deref().is_none_or(|l| l == lang)
                        && prefix.is_none_or(|p| {
                            p.is_empty() || path == p || path.strip_prefix(p).is_some_and(|r| r.starts_with('/'))
                        })
                })
                .collect(),
        )
    }
}

/// Keeps the best `k` of `v`, sorted.
fn top<T>(v: &mut Vec<T>, k: usize, cmp: impl Fn(&T, &T) -> std::cmp::Ordering + Copy) {
    if v.len() > k {
        v.select_nth_unstable_by(k, cmp);
        v.truncate(k);
    }
    v.sort_by(cmp);
}
