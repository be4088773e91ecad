//! Files ranked by the evidence of all their chunks, for `files_with_matches` (as `rg -l`
//! lists files, not lines).
//!
//! A file's score is its best chunk's, plus a diminishing share of its next best ones: a
//! file where several functions match the query is more likely the one a task changes than
//! a file with one matching line, but ten weak mentions must not outweigh one strong
//! definition. Then the file gains for the share of the query's words it holds anywhere
//! (`rank`): a task's words are often spread over the functions of the file it changes, none
//! of which holds them all (the evidence a grep ranking has, which chunks alone miss).

use std::collections::HashMap;

use super::ranking_index::RankingIndex;
use super::weights::WEIGHTS;
use super::{Hit, Query};
use crate::store::{Store, StoreError};

/// How many of a file's chunks count beside its best, and the share of each (halving).
const SUPPORT: usize = 3;
const SUPPORT_SHARE: f64 = 0.5;

/// One file of the answer: its score and its chunks among the hits, best first.
pub(crate) struct FileHit<'a> {
    pub path: &'a str,
    pub score: f64,
    pub chunks: Vec<&'a Hit>,
}

/// The files of `hits` (ranked best first), best first, each chunk counting for its file as
/// `evidence` says: [`lexical_evidence`] for lexical search's hits, the score itself for
/// semantic search's (cosines, on another scale).
pub(crate) fn by_file(hits: &[Hit], evidence: impl Fn(&Hit) -> f64) -> Vec<FileHit<'_>> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut files: Vec<FileHit> = Vec::new();
    for h in hits {
        let i = *index.entry(h.chunk.path.as_str()).or_insert_with(|| {
            files.push(FileHit { path: &h.chunk.path, score: 0.0, chunks: Vec::new() });
            files.len() - 1
        });
        files[i].chunks.push(h);
    }
    for f in &mut files {
        let mut scores: Vec<f64> = f.chunks.iter().map(|h| evidence(h)).collect();
        scores.sort_by(|a, b| b.total_cmp(a));
        let best = scores[0];
        let mut share = SUPPORT_SHARE;
        let mut support = 0.0;
        for s in scores.iter().skip(1).take(SUPPORT) {
            // Only what the chunk scored above zero supports the file: a penalised chunk (a
            // test, prose) says nothing for it.
            support += share * s.max(0.0);
            share /= 2.0;
        }
        f.score = best + support;
    }
    // Equal scores keep the order of their best chunks.
    sort(&mut files);
    files
}

/// What code between items (`block`: module-level constants, tables, registrations) adds
/// as evidence for its file. Among the answers it has no definition's bonus (+3): a
/// function is the better read. But the table a change edits (`HEADER_VALIDATORS = {…}`)
/// holds many of the names a task speaks of, in no function. Measured on the five
/// real-repository sets and the standard library's files mode: 3 lifted files MRR and R@10
/// on four of six; 6 lifted R@10 on all six (axum 0.903 → 0.923, requests 0.877 →
/// 0.880, cobra 0.981 → 0.988, zustand 0.824 → 0.869) and MRR on five (hiredis -0.009);
/// 9 lost MRR against 6 on five of six (cobra 0.848 → 0.808).
const BLOCK_EVIDENCE: f64 = 6.0;

/// What a lexical hit says for its file: its score, with an import's penalty given back (a
/// poor line to read, but fair evidence that its file uses a name), and code between items
/// counting [`BLOCK_EVIDENCE`] more.
pub(crate) fn lexical_evidence(h: &Hit) -> f64 {
    match h.chunk.kind.as_str() {
        "import" => h.score + WEIGHTS.import,
        "block" => h.score + BLOCK_EVIDENCE,
        _ => h.score,
    }
}

/// What a file gains for holding every word of the query (in proportion to the share it
/// holds). Measured on the real-repository set and the standard library set: 8 lifted files
/// R@10 on four of five repositories (axum +0.024, hiredis +0.017) and the standard library's
/// by 0.008, and MRR on all six; 12 and 16 lost requests' R@10 and cobra's MRR.
pub(crate) const COVERAGE: f64 = 8.0;

/// Files whose coverage is looked up, best first: further down, a file is more than a
/// page's worth of evidence behind.
pub(crate) const COVERED: usize = 100;

/// The files of lexical `hits` for a query of a few words, best first: [`by_file`], then
/// each of the first files gains for the share of the query's words it holds, found in the
/// ranking index when there is one, else by FTS5. A passage is ranked by
/// [`super::rank_files`].
pub(crate) fn rank<'a>(
    store: &Store,
    ranking: Option<&RankingIndex>,
    query: &Query,
    hits: &'a [Hit],
) -> Result<Vec<FileHit<'a>>, StoreError> {
    let mut files = by_file(hits, lexical_evidence);
    let n = files.len().min(COVERED);
    let paths: Vec<&str> = files[..n].iter().map(|f| f.path).collect();
    for (f, s) in files.iter_mut().zip(word_shares(store, ranking, query, &paths)?) {
        f.score += COVERAGE * s;
    }
    sort(&mut files);
    Ok(files)
}

/// For each of `paths`, the share of the query's words the file holds in any chunk: found in
/// the ranking index when there is one, else by FTS5. A word only in the path does not count.
pub(crate) fn word_shares(
    store: &Store,
    ranking: Option<&RankingIndex>,
    query: &Query,
    paths: &[&str],
) -> Result<Vec<f64>, StoreError> {
    Ok(match ranking {
        Some(w) => {
            let words = query.tokens();
            let held = w.words_in_files(&words, paths);
            let asked = words.len().min(64);
            held.iter().map(|h| share(h.count_ones() as usize, asked)).collect()
        }
        None => {
            let mut held = vec![0usize; paths.len()];
            for term in &query.terms {
                let found = store.files_matching(term)?;
                for (h, p) in held.iter_mut().zip(paths) {
                    *h += usize::from(found.contains(*p));
                }
            }
            held.iter().map(|&h| share(h, query.terms.len())).collect()
        }
    })
}

/// Best first; stable, so equal scores keep their order.
pub(crate) fn sort(files: &mut [FileHit<'_>]) {
    files.sort_by(|a, b| b.score.total_cmp(&a.score));
}

/// `held` of `asked` words, as a share; a query of one word says nothing about spread.
fn share(held: usize, asked: usize) -> f64 {
    if asked < 2 { 0.0 } else { held as f64 / asked as f64 }
}

/// Two file rankings as one, by Reciprocal Rank Fusion with constant `k`, the second
/// counting `weight` times the first: hybrid search's files. A file keeps its chunks from
/// the first ranking that has it. At weight 0 the order is the first ranking's.
pub(crate) fn fuse<'a>(first: Vec<FileHit<'a>>, second: Vec<FileHit<'a>>, k: f64, weight: f64) -> Vec<FileHit<'a>> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut out: Vec<FileHit<'a>> = Vec::new();
    for (list, w) in [(first, 1.0), (second, weight)] {
        for (rank, mut f) in list.into_iter().enumerate() {
            let add = w / (k + rank as f64 + 1.0);
            match index.get(f.path) {
                Some(&i) => out[i].score += add,
                None => {
                    index.insert(f.path, out.len());
                    f.score = add;
                    out.push(f);
                }
            }
        }
    }
    sort(&mut out);
    out
}
