//! Files as documents: bm25 over a file's chunks taken together, for passages.
//!
//! A pasted issue's words are spread over the file its fix edits: a traceback's names in
//! one function, the report's nouns in another, its title in a third. No chunk holds enough
//! of them to stand out among hundreds of chunks that each hold a few; the file does. This
//! ranks files as a plain bm25 over whole files would, from the same postings (a file's
//! term frequency is its chunks' sum; its path counted once), with the query's weights.

use crate::base::terms::stem;

use super::{B, K1, RankingIndex, file_filter};
use crate::store::search::{BM25_WEIGHTS, Filters, PATH_WEIGHT};

/// How many of a passage's words are ranked: the heaviest by weight × idf. Past a few dozen,
/// the next words are common ones that every file holds, and each costs a walk of its list.
pub(crate) const PASSAGE_TERMS: usize = 48;

impl RankingIndex {
    /// The `max` heaviest of `words` by their weight × idf (a word in every chunk weighs
    /// nothing, a word in no chunk is dropped), heaviest first.
    pub(crate) fn heaviest(&self, words: &[(String, f64)], max: usize) -> Vec<(String, f64)> {
        let live = self.chunks() as f64;
        let mut scored: Vec<(f64, &(String, f64))> = words
            .iter()
            .filter_map(|w| {
                let stem = stem(&w.0);
                let df: usize = self.parts().iter().map(|(seg, _)| seg.postings(&stem).len()).sum();
                if df == 0 {
                    return None;
                }
                let idf = ((live - df as f64 + 0.5) / (df as f64 + 0.5)).ln().max(0.0);
                Some((w.1 * idf, w))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().take(max).map(|(_, w)| w.clone()).collect()
    }

    /// Every file holding one of `words` (the heaviest [`PASSAGE_TERMS`] of them), with its
    /// bm25 as a whole file, best first.
    pub(crate) fn rank_files(&self, words: &[(String, f64)], filters: &Filters) -> Vec<(String, f64)> {
        let words = self.heaviest(words, PASSAGE_TERMS);
        let parts = self.parts();
        let file_ok = parts.map(|(seg, _)| file_filter(seg, filters));
        // Files are numbered base first, then delta, then recent, as chunks are.
        let first = [0, parts[0].0.files, parts[0].0.files + parts[1].0.files].map(|f| f as usize);
        let files = first[2] + parts[2].0.files as usize;
        let avg_len = ((self.live_len + self.recent.total_len) as f64 / self.live_files().max(1) as f64).max(1.0);
        let n = self.live_files() as f64;
        let mut len: Vec<u32> = vec![u32::MAX; files];
        let mut score = vec![0.0f64; files];
        let mut freq = vec![0.0f64; files];
        let mut path = vec![0u8; files];
        let mut touched: Vec<usize> = Vec::new();
        for (word, weight) in &words {
            let stem = stem(word);
            self.for_each_live(&stem, |part, seg, d, tf| {
                let f = seg.doc_file(d) as usize;
                if file_ok[part].as_ref().is_some_and(|ok| !ok[f]) {
                    return;
                }
                let slot = first[part] + f;
                if freq[slot] == 0.0 && path[slot] == 0 {
                    touched.push(slot);
                }
                freq[slot] += tf[..3].iter().zip(BM25_WEIGHTS).map(|(t, w)| f64::from(*t) * w).sum::<f64>();
                path[slot] = path[slot].max(tf[3]);
            });
            let df = touched.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5)).ln().max(1e-6);
            for &slot in &touched {
                let tf = freq[slot] + PATH_WEIGHT * f64::from(path[slot]);
                if len[slot] == u32::MAX {
                    len[slot] = self.file_len(&first, slot);
                }
                let norm = K1 * (1.0 - B + B * f64::from(len[slot]) / avg_len);
                score[slot] += weight * idf * tf * (K1 + 1.0) / (tf + norm);
                freq[slot] = 0.0;
                path[slot] = 0;
            }
            touched.clear();
        }
        let mut out: Vec<(String, f64)> = (0..files)
            .filter(|&slot| score[slot] > 0.0)
            .map(|slot| {
                let (part, f) = locate_file(&first, slot);
                (parts[part].0.path(f).to_owned(), score[slot])
            })
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// Files with live chunks (a file changed since the base counts in the part that holds
    /// it now; its deleted older copy, slightly, in the base too).
    fn live_files(&self) -> u32 {
        let parts = self.parts();
        parts[0].0.files + parts[1].0.files + parts[2].0.files
    }

    /// The length of the file in `slot` (see `rank_files`): its live chunks' lengths.
    fn file_len(&self, first: &[usize; 3], slot: usize) -> u32 {
        let (part, f) = locate_file(first, slot);
        let (seg, offset) = self.parts()[part];
        seg.file_docs(f).filter(|&d| !self.is_deleted(offset + d)).map(|d| seg.doc_len(d)).sum()
    }
}

/// The part and file number of a file slot.
fn locate_file(first: &[usize; 3], slot: usize) -> (usize, usize) {
    let part = if slot >= first[2] {
        2
    } else if slot >= first[1] {
        1
    } else {
        0
    };
    (part, slot - first[part])
}
