//! Per-project calibration from the mined history, validated out of sample: the older half
//! of the queries chooses hybrid search's semantic weight and the "no good match"
//! threshold; the newer half reports how they do. Queries of English words the project does
//! not speak of (from a fixed list, a fixed seed) stand for the questions it cannot answer:
//! they check the threshold; the subjects place it (the foreign words' scores depend on the
//! words chosen more than on the project).

/// The semantic weights tried (lexical counts 1; 0 is lexical search's own order).
pub(super) const WEIGHTS: &[f64] = &[0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5];
/// Subjects the threshold may flag on the calibration half.
const FLAG_SHARE: f64 = 0.04;
/// Where a calibrated threshold may lie.
const RANGE: (f64, f64) = (0.12, 0.4);
/// The threshold sits this much below the calibration subjects' low scores: newer subjects
/// drift (measured: the held-out half flags up to twice the calibration half's share).
const SLACK: f64 = 0.85;
/// How many standard errors a semantic weight's paired gain over lexical ranking must be to
/// be chosen (about 99% one-sided).
const CONFIDENT: f64 = 2.5;
/// Fewer calibration queries than this and the defaults stay.
pub(super) const TOO_FEW: usize = 20;

/// Everyday English words, for queries a code search should find nothing good for.
const ENGLISH: &str = include_str!("english.txt");

/// `n` queries of 3 to 5 words from the English list, skipping words `known` says the project
/// speaks of. The same `seed` gives the same queries.
pub(super) fn foreign_queries(n: usize, seed: u64, known: impl Fn(&str) -> bool) -> Vec<String> {
    let words: Vec<&str> = ENGLISH.split_whitespace().filter(|w| !known(w)).collect();
    crate::domain::search::confidence::word_queries(&words, n, seed)
}

/// The weight whose hybrid ranking scored best on the calibration queries: `scores[w][q]` is
/// (R@10, MRR@10) of query `q` at `WEIGHTS[w]`. A semantic voice must earn its place: a
/// weight wins over 0 (lexical search's own order) only when its gain per query, paired
/// query by query, is [`CONFIDENT`] standard errors above nothing, since a gain on some
/// hundred queries is as often noise as skill. Of those, the largest gain wins.
pub(super) fn choose_weight(scores: &[Vec<(f64, f64)>]) -> f64 {
    let mut best = (0.0, 0.0);
    for (w, per_query) in WEIGHTS.iter().zip(scores).skip(1) {
        let (gain, t) = paired_gain(&scores[0], per_query);
        if t >= CONFIDENT && gain > best.0 {
            best = (gain, *w);
        }
    }
    best.1
}

/// The mean per-query gain (R@10 + MRR@10) of `other` over `base`, and how many standard
/// errors that mean is from zero.
pub(super) fn paired_gain(base: &[(f64, f64)], other: &[(f64, f64)]) -> (f64, f64) {
    let d: Vec<f64> = base.iter().zip(other).map(|(b, o)| (o.0 + o.1) - (b.0 + b.1)).collect();
    let n = d.len() as f64;
    if n < 2.0 {
        return (0.0, 0.0);
    }
    let mean = d.iter().sum::<f64>() / n;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let se = (var / n).sqrt();
    let t = if se > 0.0 {
        mean / se
    } else if mean > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    (mean, t)
}

/// Mean R@10 + MRR@10 of one weight's (R@10, MRR@10) per query: what the weight is chosen by.
pub(super) fn value(per_query: &[(f64, f64)]) -> f64 {
    per_query.iter().map(|(r, m)| r + m).sum::<f64>() / per_query.len().max(1) as f64
}

/// The threshold: a little ([`SLACK`]) below the score under which [`FLAG_SHARE`] of the
/// calibration queries' subjects fall, kept within [`RANGE`] (a history of a few odd subjects must not switch the judgement
/// off, nor one of terse ones flag everything).
pub(super) fn choose_threshold(positives: &[f64]) -> f64 {
    let mut pos = positives.to_vec();
    pos.sort_by(f64::total_cmp);
    let Some(last) = pos.len().checked_sub(1) else { return crate::domain::search::confidence::DEFAULT_THRESHOLD };
    let at = ((pos.len() as f64 * FLAG_SHARE).floor() as usize).min(last);
    (pos[at] * SLACK).clamp(RANGE.0, RANGE.1)
}

pub(super) use booger_proto::answers::Validation;

/// Share of `scores` below `threshold`.
pub(super) fn flagged(scores: &[f64], threshold: f64) -> f64 {
    if scores.is_empty() {
        return 0.0;
    }
    scores.iter().filter(|s| **s < threshold).count() as f64 / scores.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_queries_are_fixed_and_skip_known_words() {
        let a = foreign_queries(50, 7, |w| w == "elephant");
        assert_eq!(a, foreign_queries(50, 7, |w| w == "elephant"));
        assert_ne!(a, foreign_queries(50, 8, |w| w == "elephant"));
        assert!(a.iter().all(|q| (3..=5).contains(&q.split(' ').count()) && !q.contains("elephant")));
        assert!(foreign_queries(5, 1, |_| true).is_empty());
    }

    #[test]
    fn the_weight_that_ranks_best_wins_and_ties_stay_light() {
        let mut scores = vec![vec![(0.5, 0.5); 40]; WEIGHTS.len()];
        assert_eq!(choose_weight(&scores), 0.0);
        // A gain on a few queries, losses on others: noise.
        scores[2] = (0..40)
            .map(|i| {
                if i % 4 == 0 {
                    (1.0, 1.0)
                } else if i % 4 == 1 {
                    (0.0, 0.0)
                } else {
                    (0.5, 0.5)
                }
            })
            .collect();
        assert_eq!(choose_weight(&scores), 0.0);
        // A steady gain wins; of two, the larger.
        scores[3] = (0..40).map(|i| if i % 2 == 0 { (0.7, 0.6) } else { (0.6, 0.5) }).collect();
        scores[4] = (0..40).map(|i| if i % 2 == 0 { (0.6, 0.5) } else { (0.55, 0.5) }).collect();
        assert_eq!(choose_weight(&scores), WEIGHTS[3]);
    }

    #[test]
    fn the_threshold_flags_a_few_subjects_and_stays_in_range() {
        let positives: Vec<f64> = (0..100).map(|i| 0.15 + f64::from(i) * 0.006).collect();
        let t = choose_threshold(&positives);
        assert!((t - positives[4] * SLACK).abs() < 1e-12);
        assert!(flagged(&positives, t) <= 0.04);
        assert_eq!(choose_threshold(&[0.0; 30]), RANGE.0);
        assert_eq!(choose_threshold(&[0.9; 30]), RANGE.1);
        assert_eq!(choose_threshold(&[]), crate::domain::search::confidence::DEFAULT_THRESHOLD);
    }
}
