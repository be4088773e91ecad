//! Semantic search and its fusion with lexical search.
//!
//! Semantic hits are the chunks nearest the query's vector (exact cosine over the project's
//! vectors); hybrid search fuses the lexical and semantic rankings, by Reciprocal Rank Fusion
//! (each list contributes `weight / (k + rank)`) or by the seeds' alpha blend of scores
//! normalised to [0, 1] (`alpha` × lexical + (1 − `alpha`) × semantic). A question's
//! hybrid answer is lexical search's candidates re-ranked by their cosines (`rerank`).
//!
//! The semantic list's RRF weight defaults to 0.3 against lexical's 1: alone, the static
//! tier's ranking is weaker than the lexical one (BENCHMARKS.md), so it should reorder and
//! add, not outvote; with equal weights hybrid lost R@10 and SymHit@10 to lexical search.

use std::collections::HashMap;

use super::Hit;
use crate::domain::embed::vectors::VectorIndex;
use crate::store::search::Filters;
use crate::store::{Store, StoreError};

/// Nearest chunks fetched when filters apply (they drop some); without filters, just those
/// needed.
const NEAREST_FILTERED: usize = 400;

/// The chunks nearest the query's vector `v`, best first, scored by cosine. A zero vector
/// (no word of the query known to the model) matches nothing.
pub(crate) fn search(
    store: &Store,
    index: &VectorIndex,
    v: &[f32],
    filters: &Filters,
    need: usize,
) -> Result<Vec<Hit>, StoreError> {
    if v.iter().all(|x| *x == 0.0) {
        return Ok(Vec::new());
    }
    let filtered = filters.language.is_some() || filters.kind.is_some() || filters.path.is_some();
    // Twice what is needed, so an answer can say there is more.
    let depth = if filtered { NEAREST_FILTERED.max(need * 2) } else { need * 2 };
    let nearest: Vec<(i64, f64)> = index.top(store, v, depth)?.into_iter().map(|(id, s)| (id, s as f64)).collect();
    let found = store.candidates_in(&nearest, filters)?;
    Ok(found.into_iter().map(|c| Hit { score: c.bm25, chunk: c, notes: Vec::new() }).collect())
}

/// How two rankings become one.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Fusion {
    /// Reciprocal Rank Fusion with constant `k`; the semantic list counts `semantic_weight`
    /// times the lexical one.
    Rrf { k: f64, semantic_weight: f64 },
    /// `alpha` × lexical + (1 − `alpha`) × semantic, each score scaled to [0, 1].
    Alpha { alpha: f64 },
}

/// A question's hybrid answer: lexical search's candidates (its first [`RERANK_DEPTH`]),
/// each scored by its lexical score over the best one's, plus:
/// - `cosine_weight` (the answering tier's) × its cosine with the question: lexical search
///   finds the places that hold a question's words, the vectors say which of them are about
///   what it asks (a list of the vectors' own nearest chunks, fused by rank, added as much
///   noise as answers on questions: BENCHMARKS.md);
/// - [`QUESTION_FILE`] / (1 + its file's rank), files ranked by their best candidate: a
///   question's answers cluster in the files that hold most of its words (of the places a
///   question's first ten missed, four in five were in a file among those ten);
/// - [`QUESTION_LENGTH`] × ln(1 + its lines): bm25 favours short texts, and a short method
///   that repeats a question's words (a `layer`, an `accept`) passed the function doing the
///   work. Alone this moved nothing; with the cosine it is most of the gain.
///
/// Prose gains no cosine unless the question asks for documentation: vectors put prose that
/// explains a thing in a question's own words nearest of all (as in [`super::demote_prose`]).
pub(crate) fn rerank(
    lexical: Vec<Hit>,
    cosines: &HashMap<i64, f32>,
    cosine_weight: f64,
    query: &super::Query,
) -> Vec<Hit> {
    let docs = query.asks_for_docs();
    let best = lexical.iter().map(|h| h.score).fold(f64::MIN, f64::max);
    if best <= 0.0 {
        return lexical;
    }
    let mut hits = lexical;
    let tail = hits.split_off(hits.len().min(RERANK_DEPTH));
    let file_ranks = file_ranks(&hits);
    for (h, rank) in hits.iter_mut().zip(file_ranks) {
        let cosine =
            if docs || !super::is_prose(&h.chunk) { cosines.get(&h.chunk.id).copied().unwrap_or(0.0) } else { 0.0 };
        let lines = f64::from(h.chunk.end_line.saturating_sub(h.chunk.start_line) + 1);
        h.score = h.score / best
            + cosine_weight * f64::from(cosine)
            + QUESTION_FILE / (1 + rank) as f64
            + QUESTION_LENGTH * (1.0 + lines).ln();
    }
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.id.cmp(&b.chunk.id)));
    // Past the re-ranked ones, lexical search's order, below them.
    let floor = hits.last().map_or(0.0, |h| h.score);
    hits.extend(tail.into_iter().enumerate().map(|(i, mut h)| {
        h.score = floor - 1.0 - i as f64;
        h
    }));
    hits
}

/// The rank (0 first) of each hit's file among `hits`' files, by the best lexical score of
/// its hits.
fn file_ranks(hits: &[Hit]) -> Vec<usize> {
    let mut best: HashMap<&str, f64> = HashMap::new();
    for h in hits {
        let b = best.entry(h.chunk.path.as_str()).or_insert(f64::MIN);
        *b = b.max(h.score);
    }
    let mut files: Vec<(&str, f64)> = best.into_iter().collect();
    files.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let rank: HashMap<&str, usize> = files.into_iter().enumerate().map(|(rank, (path, _))| (path, rank)).collect();
    hits.iter().map(|h| rank[h.chunk.path.as_str()]).collect()
}

/// Lexical candidates a question's vectors re-rank.
pub(crate) const RERANK_DEPTH: usize = 100;

/// The weights of a question's re-ranking ([`rerank`]) beside the cosine's (which is the
/// answering tier's: [`crate::domain::embed::Embedder::question_weight`]), against a
/// candidate's lexical score scaled to the best one's 1. Chosen with the static table's cosine
/// on ../shared/eval/questions (NDCG@10, mean over its five repositories).
///
/// The first file's bonus (the second's is half, and so on): 0 0.567, 0.2 0.575, 0.3 0.576.
pub(crate) const QUESTION_FILE: f64 = 0.2;
/// Per unit of ln(1 + lines): 0 0.541, 0.1 0.570, 0.15 0.575, 0.2 0.561.
pub(crate) const QUESTION_LENGTH: f64 = 0.15;

/// Fuses the rankings; a chunk in both lists is one hit (with the lexical hit's notes).
pub(crate) fn fuse(lexical: Vec<Hit>, semantic: Vec<Hit>, fusion: Fusion) -> Vec<Hit> {
    let mut fused: HashMap<i64, (Hit, f64)> = HashMap::new();
    let mut add = |hits: Vec<Hit>, score: &dyn Fn(usize, &Hit) -> f64| {
        for (rank, hit) in hits.into_iter().enumerate() {
            let s = score(rank, &hit);
            fused.entry(hit.chunk.id).and_modify(|(_, total)| *total += s).or_insert((hit, s));
        }
    };
    match fusion {
        Fusion::Rrf { k, semantic_weight } => {
            add(lexical, &|rank, _| 1.0 / (k + rank as f64 + 1.0));
            add(semantic, &|rank, _| semantic_weight / (k + rank as f64 + 1.0));
        }
        Fusion::Alpha { alpha } => {
            let scaled = |hits: &[Hit]| {
                let (lo, hi) = hits.iter().fold((f64::MAX, f64::MIN), |(lo, hi), h| (lo.min(h.score), hi.max(h.score)));
                move |h: &Hit| if hi > lo { (h.score - lo) / (hi - lo) } else { 1.0 }
            };
            let lex = scaled(&lexical);
            let sem = scaled(&semantic);
            add(lexical, &|_, h| alpha * lex(h));
            add(semantic, &|_, h| (1.0 - alpha) * sem(h));
        }
    }
    let mut hits: Vec<Hit> = fused
        .into_values()
        .map(|(mut h, s)| {
            h.score = s;
            h
        })
        .collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.id.cmp(&b.chunk.id)));
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::search::Candidate;

    fn hit(id: i64, score: f64) -> Hit {
        let chunk = Candidate {
            id,
            path: format!("f{id}.py"),
            language: "python".into(),
            kind: booger_proto::tools::ChunkKind::Function,
            name: format!("f{id}"),
            signature: String::new(),
            parent: None,
            start_line: 1,
            end_line: 2,
            bytes: 10,
            bm25: 0.0,
        };
        Hit { chunk, score, notes: Vec::new() }
    }

    fn ids(h: &[Hit]) -> Vec<i64> {
        h.iter().map(|h| h.chunk.id).collect()
    }

    #[test]
    fn rrf_rewards_agreement_and_keeps_everything() {
        let lexical = vec![hit(1, 30.0), hit(2, 20.0), hit(3, 10.0)];
        let semantic = vec![hit(3, 0.9), hit(4, 0.8), hit(1, 0.7)];
        let fused = fuse(lexical, semantic, Fusion::Rrf { k: 60.0, semantic_weight: 1.0 });
        assert_eq!(ids(&fused), [1, 3, 2, 4]);
        assert!((fused[0].score - (1.0 / 61.0 + 1.0 / 63.0)).abs() < 1e-12);
        // A lighter semantic list adds without outvoting: its first hit no longer passes the
        // lexical second.
        let (lexical, semantic) = (vec![hit(1, 3.0), hit(2, 2.0)], vec![hit(3, 0.9), hit(1, 0.8)]);
        let even = fuse(lexical.clone(), semantic.clone(), Fusion::Rrf { k: 60.0, semantic_weight: 1.0 });
        assert_eq!(ids(&even), [1, 3, 2]);
        let light = fuse(lexical, semantic, Fusion::Rrf { k: 60.0, semantic_weight: 0.3 });
        assert_eq!(ids(&light), [1, 2, 3]);
    }

    /// A question's vectors reorder lexical search's candidates by what they are about:
    /// a close second whose meaning is nearer passes the first, a far one does not, prose
    /// gains nothing unless documentation is asked for, and the tail keeps lexical order.
    #[test]
    fn a_questions_vectors_rerank_lexical_candidates() {
        let question = crate::domain::search::Query::parse("where is the upload retried?");
        let mut prose = hit(3, 9.0);
        prose.chunk.path = "docs/retries.md".into();
        let mut lexical = vec![hit(1, 10.0), hit(2, 9.5), prose, hit(4, 2.0)];
        lexical.extend((5..=RERANK_DEPTH as i64 + 2).map(|id| hit(id, 1.0)));
        let cosines: HashMap<i64, f32> = [(1, 0.1), (2, 0.6), (3, 0.9), (4, 0.5)].into();
        let ranked = rerank(lexical.clone(), &cosines, 1.4, &question);
        // 0.95 + 1.4 × 0.6 + 0.1 (second file) passes 1.0 + 1.4 × 0.1 + 0.2 (first file);
        // prose (0.9 + 0.07, no cosine) and a far one (0.2 + 1.4 × 0.5 + 0.05) do not.
        assert_eq!(ids(&ranked)[..4], [2, 1, 3, 4]);
        let tail: Vec<i64> = ids(&ranked)[RERANK_DEPTH..].to_vec();
        assert_eq!(tail, [RERANK_DEPTH as i64 + 1, RERANK_DEPTH as i64 + 2]);
        assert!(ranked.windows(2).all(|w| w[0].score >= w[1].score));
        let docs = crate::domain::search::Query::parse("where do the docs explain upload retries?");
        assert_eq!(ids(&rerank(lexical.clone(), &cosines, 1.4, &docs))[0], 3, "asked for, prose gains as code does");
        // A tier whose cosine weighs more lets it carry further: at 3, the far one (0.2 + 3 ×
        // 0.5 + 0.05) passes the first (1.0 + 3 × 0.1 + 0.2).
        assert_eq!(ids(&rerank(lexical, &cosines, 3.0, &question))[..4], [2, 4, 1, 3]);
    }

    /// Among equal lexical scores and cosines, the longer chunk (the function doing the work
    /// rather than a short one repeating the question's words) comes first, and so does a
    /// chunk of the file whose best candidate ranks first.
    #[test]
    fn a_questions_rerank_weighs_length_and_the_files_evidence() {
        let question = crate::domain::search::Query::parse("how is the upload retried?");
        let (mut short, mut long) = (hit(1, 5.0), hit(2, 5.0));
        long.chunk.end_line = 60;
        let cosines: HashMap<i64, f32> = [(1, 0.5), (2, 0.5)].into();
        short.chunk.path = "same.py".into();
        long.chunk.path = "same.py".into();
        assert_eq!(ids(&rerank(vec![short, long], &cosines, 1.4, &question)), [2, 1]);

        let (best_file, mut in_best, other) = (hit(1, 10.0), hit(2, 5.0), hit(3, 5.0));
        in_best.chunk.path = best_file.chunk.path.clone();
        let cosines: HashMap<i64, f32> = [(1, 0.2), (2, 0.5), (3, 0.5)].into();
        assert_eq!(ids(&rerank(vec![best_file, other, in_best], &cosines, 1.4, &question)), [1, 2, 3]);
    }

    #[test]
    fn alpha_blends_normalised_scores() {
        let lexical = vec![hit(1, 30.0), hit(2, 10.0)];
        let semantic = vec![hit(2, 0.9), hit(3, 0.5)];
        // alpha 1: lexical order; alpha 0: semantic order.
        assert_eq!(ids(&fuse(lexical.clone(), semantic.clone(), Fusion::Alpha { alpha: 1.0 }))[0], 1);
        assert_eq!(ids(&fuse(lexical.clone(), semantic.clone(), Fusion::Alpha { alpha: 0.0 }))[0], 2);
        let f = fuse(lexical, semantic, Fusion::Alpha { alpha: 0.7 });
        assert_eq!(ids(&f), [1, 2, 3]);
        assert!((f[0].score - 0.7).abs() < 1e-12 && (f[1].score - 0.3).abs() < 1e-12);
    }
}
