//! Scoring one method's answers against the mined gold: per query, then averaged overall and
//! by language. The recipe is the one the shared evaluation's `score.py` uses: results become
//! distinct files in first-seen order; R@k is the share of gold files in the first k; MRR@10
//! is one over the rank of the first gold file; Fn@10 is whether one of the first ten results
//! lies in a gold file and overlaps a gold function's lines.

use std::collections::BTreeMap;
use std::time::Duration;

use booger_proto::answers::{Averages, MethodFigures};

use super::mine::Query;
use crate::domain::search::confidence::round;

/// One result: a path and, for a chunk, its lines.
pub(super) type Hit = (String, Option<(u32, u32)>);

/// One query's figures for one method.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Scored {
    pub r1: f64,
    pub r10: f64,
    pub mrr: f64,
    /// `None` when the query has no gold function.
    pub fn10: Option<f64>,
    pub took: Duration,
}

/// Scores the files (ranked) and the chunk results of one method for `q`.
pub(super) fn score(q: &Query, files: &[String], chunks: &[Hit], took: Duration) -> Scored {
    let gold = |p: &str| q.gold_files.iter().any(|g| g == p);
    let recall = |k: usize| files.iter().take(k).filter(|f| gold(f)).count() as f64 / q.gold_files.len() as f64;
    let mrr = files.iter().take(10).position(|f| gold(f)).map_or(0.0, |i| 1.0 / (i as f64 + 1.0));
    let fn10 = (!q.gold_functions.is_empty()).then(|| {
        let hit = chunks.iter().take(10).any(|(path, lines)| {
            lines.is_some_and(|(s, e)| {
                q.gold_functions.iter().any(|g| g.path == *path && s <= g.end_line && e >= g.start_line)
            })
        });
        f64::from(u8::from(hit))
    });
    Scored { r1: recall(1), r10: recall(10), mrr, fn10, took }
}

/// Distinct files of `hits` in first-seen order.
pub(super) fn files_of(hits: &[Hit]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (p, _) in hits {
        if !out.contains(p) {
            out.push(p.clone());
        }
    }
    out
}

/// Averages of one method's figures, overall and by language.
#[derive(Default)]
pub(super) struct Tally {
    all: Vec<(&'static str, Scored)>,
}

impl Tally {
    pub(super) fn add(&mut self, language: &'static str, s: Scored) {
        self.all.push((language, s));
    }

    pub(super) fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// Every query's figures and each language's.
    pub(super) fn summary(&self) -> MethodFigures {
        let mut by: BTreeMap<&str, Vec<Scored>> = BTreeMap::new();
        for (l, s) in &self.all {
            by.entry(l).or_default().push(*s);
        }
        let all: Vec<Scored> = self.all.iter().map(|(_, s)| *s).collect();
        MethodFigures {
            all: averages(&all),
            by_language: by.iter().map(|(l, v)| ((*l).to_owned(), averages(v))).collect(),
        }
    }
}

fn averages(v: &[Scored]) -> Averages {
    let mean = |f: &dyn Fn(&Scored) -> f64| round(v.iter().map(f).sum::<f64>() / v.len().max(1) as f64);
    let fns: Vec<f64> = v.iter().filter_map(|s| s.fn10).collect();
    let mut ms: Vec<f64> = v.iter().map(|s| s.took.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms.get(((ms.len().max(1) - 1) as f64 * p).round() as usize).copied().map(round);
    Averages {
        n: v.len() as u64,
        r1: mean(&|s| s.r1),
        r10: mean(&|s| s.r10),
        mrr10: mean(&|s| s.mrr),
        n_fn: fns.len() as u64,
        fn10: (!fns.is_empty()).then(|| round(fns.iter().sum::<f64>() / fns.len() as f64)),
        p50_ms: at(0.5),
        p95_ms: at(0.95),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::eval::mine::GoldFn;

    #[test]
    fn scored_as_the_shared_evaluation_scores() {
        let q = Query {
            commit: "c".into(),
            subject: "s".into(),
            gold_files: vec!["a.py".into(), "b.py".into()],
            gold_functions: vec![GoldFn { path: "a.py".into(), name: "f".into(), start_line: 10, end_line: 20 }],
            language: "python",
        };
        let hits: Vec<Hit> =
            vec![("x.py".into(), Some((1, 5))), ("a.py".into(), Some((18, 30))), ("x.py".into(), Some((9, 9)))];
        let s = score(&q, &files_of(&hits), &hits, Duration::ZERO);
        assert_eq!((s.r1, s.r10, s.mrr, s.fn10), (0.0, 0.5, 0.5, Some(1.0)));
        let miss: Vec<Hit> = vec![("a.py".into(), Some((21, 30))), ("b.py".into(), None)];
        let s = score(&q, &files_of(&miss), &miss, Duration::ZERO);
        assert_eq!((s.r1, s.r10, s.mrr, s.fn10), (0.5, 1.0, 1.0, Some(0.0)));
    }
}
