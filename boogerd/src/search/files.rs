//! Files ranked by the evidence of all their chunks, for `files_with_matches` (as `rg -l`
//! lists files, not lines).
//!
//! A file's score is its best chunk's, plus a diminishing share of its next best ones: a
//! file where several functions match the query is more likely the one a task changes than
//! a file with one matching line, but ten weak mentions must not outweigh one strong
//! definition.

use std::collections::HashMap;

use super::Hit;

/// How many of a file's chunks count beside its best, and the share of each (halving).
const SUPPORT: usize = 3;
const SUPPORT_SHARE: f64 = 0.5;
/// Half the test penalty chunk ranking gives (see `search::finish`), given back to test files
/// when the query asks for a change.
const TEST_RELIEF: f64 = 2.0;

/// One file of the answer: its score and its chunks among the hits, best first.
pub struct FileHit<'a> {
    pub path: &'a str,
    pub score: f64,
    pub chunks: Vec<&'a Hit>,
}

/// The files of `hits` (ranked best first), best first. `lexical`: the scores are lexical
/// search's, whose test penalty a change request's test files get half back.
pub fn by_file<'a>(hits: &'a [Hit], query: &str, lexical: bool) -> Vec<FileHit<'a>> {
    let change = lexical && super::Query::parse(query).change;
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
        // A change request's tests change with its code: for one, a test file is half as
        // unlikely among files as among chunks (where an agent wants the code that does it).
        let softened = |h: &Hit| h.score + if change && super::is_test(&h.chunk) { TEST_RELIEF } else { 0.0 };
        let best = softened(f.chunks[0]);
        let mut share = SUPPORT_SHARE;
        let mut support = 0.0;
        for h in f.chunks.iter().skip(1).take(SUPPORT) {
            // Only what the chunk scored above zero supports the file: a penalised chunk (a
            // test, an oversized block) says nothing for it.
            support += share * softened(h).max(0.0);
            share /= 2.0;
        }
        f.score = best + support;
    }
    // Stable: equal scores keep the order of their best chunks.
    files.sort_by(|a, b| b.score.total_cmp(&a.score));
    files
}
