//! Whether a search found something: the confidence every ranked answer carries.
//!
//! A ranking always has a first result, even for a query about something the project does
//! not contain; an agent then reads ten confident-looking misses at full price. What tells
//! the two apart is how much of the query the best results hold: a commit subject's words
//! meet in the code it changed, while words from elsewhere match a chunk here and there, one
//! at a time, or not at all. The score is the largest share of the query's words one of the
//! first results holds, each word weighed by its inverse document frequency (a word no chunk
//! has weighs most; a word every chunk has, nearly nothing), and halved when that result
//! holds only one of several words. Below the project's threshold the answer says "no good
//! match" first.
//!
//! The threshold, and the weight hybrid search gives semantic ranking, are calibrated per
//! project from its own history by `eval` and kept in the index's `meta`; without that the
//! defaults below hold (measured on five real repositories, BENCHMARKS.md).

use serde::{Deserialize, Serialize};

use super::ranking_index::RankingIndex;
use crate::store::Store;

/// The threshold without calibration: on five real repositories it flags 0-5% of their
/// commit subjects and 92-100% of queries made of everyday English words (BENCHMARKS.md).
pub const DEFAULT_THRESHOLD: f64 = 0.17;
/// What a result holding just one word of a longer query keeps of its share.
const LONE_WORD: f64 = 0.5;
/// Hybrid search's semantic weight (against lexical's 1) for a question or a description
/// ("where do we retry failed uploads"): 0, lexical search's own order, the semantic hits
/// filling the list after it. At 0.3 it added 0.08 nl R@10 on the standard library's
/// descriptions, but ranked below lexical search on commit subjects phrased the same way
/// ("Use via extractor's rejection", "Apply FD_CLOEXEC on sockets": axum 0.826 against
/// 0.862) and on a peer's published questions (NDCG@10 0.711 against 0.720) (BENCHMARKS.md).
/// Hybrid search is never worse than lexical search by default; `semantic_weight` sets it.
/// (A question's chunks are re-ranked by their cosines instead, `semantic::rerank`; its
/// files, in files mode, are fused at this weight.)
pub(crate) const QUESTION_SEMANTIC_WEIGHT: f64 = 0.0;
/// Hybrid search's semantic weight for a change request in a commit subject's words ("fix
/// completion for persistent flags") without calibration: 0, lexical search's own order
/// (semantic hits only fill the list after it). On five real repositories' subjects every
/// weight tried, 0.1 included, ranked below lexical search on four of them (BENCHMARKS.md);
/// as in calibration, a semantic voice must earn its place on the project's own history.
/// History measures only queries of this kind, so calibration sets only this weight.
pub(crate) const DEFAULT_SEMANTIC_WEIGHT: f64 = 0.0;
/// The key of the calibration in the index's `meta`.
pub(crate) const META_KEY: &str = "calibration";
/// How many of the first results are looked at.
const LOOKED_AT: usize = 10;

/// What `eval` learnt about a project, as search uses it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Calibration {
    /// A best result holding less of the query than this is no good match.
    pub threshold: f64,
    /// Hybrid search's RRF weight for the semantic list (lexical counts 1), for change
    /// requests (see [`Calibration::semantic_weight_for`]).
    pub semantic_weight: f64,
    /// When it was made (RFC 3339), and from how many queries; empty and 0 for the defaults.
    #[serde(default)]
    pub at: String,
    #[serde(default)]
    pub queries: usize,
}

impl Default for Calibration {
    fn default() -> Self {
        Self { threshold: DEFAULT_THRESHOLD, semantic_weight: DEFAULT_SEMANTIC_WEIGHT, at: String::new(), queries: 0 }
    }
}

impl Calibration {
    /// The project's calibration, or the defaults.
    pub(crate) fn of(store: &Store) -> Calibration {
        store.cached_meta(META_KEY).ok().flatten().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default()
    }

    pub(crate) fn is_calibrated(&self) -> bool {
        self.queries > 0
    }

    /// Hybrid search's semantic weight for `query`: a change request gets this project's
    /// (calibrated on its commit subjects, which are change requests), a question the one
    /// measured on questions.
    /// A pasted passage gets 0: no weight was measured on passages, and lexical search
    /// already reads them for their files and names.
    pub(crate) fn semantic_weight_for(&self, query: &super::Query) -> f64 {
        if query.passage.is_some() {
            0.0
        } else if query.change {
            self.semantic_weight
        } else {
            QUESTION_SEMANTIC_WEIGHT
        }
    }
}

/// How sure an answer is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Confidence {
    /// The largest idf-weighted share of the query's words one of the first results holds.
    pub score: f64,
    pub threshold: f64,
    pub calibrated: bool,
    /// Words of the query that no chunk of the project holds.
    pub unknown: Vec<String>,
    /// Words of the query the best result holds, and how many words the query has.
    pub held: usize,
    pub words: usize,
}

impl Confidence {
    /// Nothing matched at all.
    pub(crate) fn nothing(calibration: &Calibration) -> Confidence {
        Confidence {
            score: 0.0,
            threshold: calibration.threshold,
            calibrated: calibration.is_calibrated(),
            unknown: Vec::new(),
            held: 0,
            words: 0,
        }
    }

    pub(crate) fn high(&self) -> bool {
        self.score >= self.threshold
    }

    /// Puts the fields every ranked answer carries into `answer`.
    pub(crate) fn fill(&self, answer: &mut booger_proto::answers::Search) {
        use booger_proto::answers::Confidence as Level;
        answer.confidence = Some(if self.high() { Level::High } else { Level::Low });
        answer.confidence_score = Some(round(self.score));
        answer.confidence_threshold = Some(round(self.threshold));
        answer.calibrated = Some(self.calibrated);
    }
}

/// How many of a passage's words confidence is judged on.
const PASSAGE_WORDS: usize = 12;

/// The words an answer's confidence is judged on: a query's tokens; a passage's heaviest
/// words that the project holds. A pasted report names people, paths and versions no file
/// holds, and no chunk holds more than a few of its sixty words: judged on them all, a
/// report about this very project read as "no good match".
pub(crate) fn words_of(query: &super::Query, ranking: &RankingIndex) -> Vec<String> {
    match query.passage {
        Some(_) => ranking.heaviest(&query.weighted_tokens(), PASSAGE_WORDS).into_iter().map(|(w, _)| w).collect(),
        None => query.tokens(),
    }
}

/// How much of `words` (the query's tokens) the first results (chunk `ids`, best first)
/// hold, judged against `calibration`. No results: score 0.
pub(crate) fn assess(ranking: &RankingIndex, words: &[String], ids: &[i64], calibration: &Calibration) -> Confidence {
    let ids = &ids[..ids.len().min(LOOKED_AT)];
    let words_found = ranking.coverage(words, ids);
    let total: f64 = words_found.iter().map(|w| w.idf).sum();
    let (mut score, mut held) = (0.0, 0);
    for i in 0..ids.len() {
        let (mut mine, mut n) = (0.0, 0);
        for w in words_found.iter().filter(|w| w.held & (1 << i) != 0) {
            mine += w.idf;
            n += 1;
        }
        let mut share = if total > 0.0 { mine / total } else { 0.0 };
        if n < words.len().min(2) {
            // One word of several met alone: any long enough text has one of them.
            share *= LONE_WORD;
        }
        if share > score {
            (score, held) = (share, n);
        }
    }
    let unknown = words.iter().zip(&words_found).filter(|(_, f)| f.chunks == 0).map(|(w, _)| w.clone()).collect();
    Confidence {
        score,
        threshold: calibration.threshold,
        calibrated: calibration.is_calibrated(),
        unknown,
        held,
        words: words.len(),
    }
}

/// As [`assess`], for a passage: how much of its heaviest `words` the first files (`paths`)
/// hold, each file as a whole. A report's words are spread over the file it is about (the
/// traceback's names in one function, its nouns in another), so no chunk holds a share that
/// tells a good answer from a poor one; a file does.
pub(crate) fn assess_files(
    ranking: &RankingIndex,
    words: &[String],
    paths: &[&str],
    calibration: &Calibration,
) -> Confidence {
    let found = ranking.coverage(words, &[]);
    let total: f64 = found.iter().map(|w| w.idf).sum();
    let held = ranking.words_in_files(words, paths);
    let (mut score, mut count) = (0.0, 0);
    for mask in held {
        let mine: f64 = found.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, w)| w.idf).sum();
        let share = if total > 0.0 { mine / total } else { 0.0 };
        if share > score {
            (score, count) = (share, mask.count_ones() as usize);
        }
    }
    Confidence {
        score,
        threshold: calibration.threshold,
        calibrated: calibration.is_calibrated(),
        unknown: Vec::new(),
        held: count,
        words: words.len(),
    }
}

/// `n` queries of 3 to 5 distinct `words` each, drawn with a fixed generator: the same `seed`
/// gives the same queries everywhere. Made of words a project does not speak of, they are the
/// questions a threshold must flag (`eval` checks its calibration with them, the tests and
/// the bench theirs). Empty when there are fewer than five words.
pub fn word_queries(words: &[&str], n: usize, seed: u64) -> Vec<String> {
    if words.len() < 5 {
        return Vec::new();
    }
    let mut rng = crate::base::rng::Rng::new(seed);
    (0..n)
        .map(|_| {
            let len = 3 + rng.below(3);
            let mut q: Vec<&str> = Vec::new();
            while q.len() < len {
                let w = *rng.pick(words);
                if !q.contains(&w) {
                    q.push(w);
                }
            }
            q.join(" ")
        })
        .collect()
}

/// `x` to three decimals, as answers and eval reports show scores.
pub(crate) fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::search::Query;

    #[test]
    fn a_change_request_takes_the_calibrated_weight_and_a_question_its_own() {
        let c = Calibration { semantic_weight: 0.75, ..Calibration::default() };
        assert_eq!(c.semantic_weight_for(&Query::parse("fix completion for persistent flags")), 0.75);
        assert_eq!(c.semantic_weight_for(&Query::parse("where do we retry failed uploads")), QUESTION_SEMANTIC_WEIGHT);
        let pasted = "Uploads are not retried\n\nWhen an upload fails with a timeout, the client gives up at once instead of \
            retrying it three times as the documentation of the retry option says it should do.";
        assert_eq!(c.semantic_weight_for(&Query::parse(pasted)), 0.0, "no weight was measured on passages");
        assert_eq!(
            Calibration::default().semantic_weight_for(&Query::parse("add retries to uploads")),
            DEFAULT_SEMANTIC_WEIGHT
        );
    }

    #[test]
    fn word_queries_are_fixed_per_seed() {
        let words = ["apple", "violin", "harbor", "tulip", "garden", "pillow"];
        let a = word_queries(&words, 20, 7);
        assert_eq!(a, word_queries(&words, 20, 7));
        assert_ne!(a, word_queries(&words, 20, 8));
        for q in &a {
            let w: Vec<&str> = q.split(' ').collect();
            assert!((3..=5).contains(&w.len()) && w.iter().all(|x| words.contains(x)), "{q}");
            assert!(w.iter().enumerate().all(|(i, x)| !w[..i].contains(x)), "distinct words: {q}");
        }
        assert!(word_queries(&words[..4], 5, 1).is_empty());
    }
}
