//! `booger eval` on real repositories: its figures beside the shared set's scorer, and the
//! calibration it makes, checked from outside.
//!
//! `cargo bench -p booger-tests --bench eval` (python3 and git; a few minutes). A fresh daemon
//! indexes and embeds the five repositories of ../shared/eval/repos, then for each:
//! - `score.py` runs `search` (files_with_matches) on the set's query file, uncalibrated;
//! - 50 queries of everyday English words the repository does not speak of (tests/data, a
//!   fixed seed; another list than the daemon's own) are asked through the CLI, uncalibrated;
//! - `booger eval` runs (wall time, queries found, its lexical R@10, the calibration);
//! - the same 50 foreign queries, and the subjects of the newer half of eval's queries (those
//!   it validated on, not calibrated on), are asked again: the share answered "no good match";
//! - `score.py` runs again, calibrated;
//! - hybrid at the calibrated weight against lexical and semantic on the newer half (eval's
//!   own held-out figures).
//!
//! It prints one table and, per repository, which of issue 23's goals hold.

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use booger_tests::eval_repos::{REPOS, score, serve, unpack};
use booger_tests::{Env, bin};
use serde_json::Value;

const EVERYDAY: &str = include_str!("../data/everyday_words.txt");
/// search's threshold without calibration (boogerd's `confidence::DEFAULT_THRESHOLD`).
const DEFAULT_THRESHOLD: f64 = boogerd::domain::search::confidence::DEFAULT_THRESHOLD;

fn main() {
    let (set, work) = unpack();
    let env = Env::new();
    let _daemon = serve(&env, &work);
    let booger = bin("booger");
    let files_cmd = format!(
        "{} search {{query}} --project {{root}} --head-limit {{k}} --output-mode files_with_matches --json",
        booger.display()
    );
    println!("## booger eval on real repositories\n");
    println!(
        "| repo | eval s | queries (commits read) | eval R@10 | score.py R@10 | foreign flagged, default → calibrated | newer subjects flagged, default → calibrated | threshold | weight | held-out R@10 lexical / semantic / hybrid |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut verdicts = Vec::new();
    for name in REPOS {
        let root = work.join(name);
        let project = root.to_str().unwrap();
        let foreign = foreign_queries(&root, 50, 0x00c0_ffee);
        // The share of `queries` search answers "no good match", and the share below the
        // default threshold (what an uncalibrated project would have said).
        let flagged_both = |queries: &[String]| {
            let (mut low, mut below_default) = (0, 0);
            for q in queries {
                let a = env.json(&["search", q.as_str(), "--project", project]);
                low += usize::from(a["confidence"] == "low");
                below_default += usize::from(a["confidence_score"].as_f64().unwrap_or(0.0) < DEFAULT_THRESHOLD);
            }
            let n = queries.len().max(1) as f64;
            (low as f64 / n, below_default as f64 / n)
        };
        let flagged = |queries: &[String]| flagged_both(queries).0;
        let before = score(&env, &set, &work, name, "files-default", &files_cmd);
        let foreign_before = flagged(&foreign);
        let t = Instant::now();
        let e = env.json(&["eval", "--project", project, "--details"]);
        let took = t.elapsed().as_secs_f64();
        let queries = e["queries"].as_u64().unwrap_or(0) as usize;
        let newer: Vec<String> = e["details"]
            .as_array()
            .unwrap()
            .iter()
            .take(queries / 2)
            .map(|q| q["subject"].as_str().unwrap().to_owned())
            .collect();
        let foreign_after = flagged(&foreign);
        let (subjects_after, subjects_default) = flagged_both(&newer);
        let after = score(&env, &set, &work, name, "files-calibrated", &files_cmd);
        let f = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_f64).unwrap_or(f64::NAN);
        let c = &e["calibration"];
        let h = &c["validation"]["heldout"];
        let (lex, sem, hyb) = (f(h, "/search/R@10"), f(h, "/semantic-search/R@10"), f(h, "/hybrid-search/R@10"));
        let (lex_mrr, sem_mrr, hyb_mrr) =
            (f(h, "/search/MRR@10"), f(h, "/semantic-search/MRR@10"), f(h, "/hybrid-search/MRR@10"));
        let eval_r = f(&e, "/methods/search/all/R@10");
        let (before_r, after_r) = (f(&before, "/all/R@10"), f(&after, "/all/R@10"));
        println!(
            "| {name} | {took:.1} | {queries} ({}) | {eval_r:.3} | {before_r:.3} → {after_r:.3} | {:.0}% → {:.0}% | {:.0}% → {:.0}% | {} | {} | {lex:.3} / {sem:.3} / {hyb:.3} |",
            e["history"]["scanned"],
            foreign_before * 100.0,
            foreign_after * 100.0,
            subjects_default * 100.0,
            subjects_after * 100.0,
            c["threshold"],
            c["semantic_weight"],
        );
        let mark = |ok: bool| if ok { "met" } else { "NOT met" };
        verdicts.push(format!(
            "- {name}: eval ≤ 60 s ({took:.1} s): {}; ≥ 100 queries ({queries}): {}; eval R@10 within 0.05 of score.py's \
             ({:+.3}): {}; foreign flagged ≥ 80% ({:.0}%): {}; newer subjects flagged ≤ 10% ({:.0}%): {}; hybrid ≥ the \
             better of lexical and semantic on the newer half (R@10 {hyb:.3} vs {:.3}, MRR {hyb_mrr:.3} vs {:.3}): {}",
            mark(took <= 60.0),
            mark(queries >= 100),
            eval_r - before_r,
            mark((eval_r - before_r).abs() <= 0.05),
            foreign_after * 100.0,
            mark(foreign_after >= 0.8),
            subjects_after * 100.0,
            mark(subjects_after <= 0.1),
            lex.max(sem),
            lex_mrr.max(sem_mrr),
            mark(hyb >= lex.max(sem) - 1e-9 && hyb_mrr >= lex_mrr.max(sem_mrr) - 0.005),
        ));
    }
    println!("\nGoals (issue 23):\n");
    for v in verdicts {
        println!("{v}");
    }
}

/// `n` queries of 3 to 5 everyday English words that are not a topic of the repository at
/// `root`: a word counts as its topic when more than 1% of its files (at least two) have it.
fn foreign_queries(root: &Path, n: usize, seed: u64) -> Vec<String> {
    let out = std::process::Command::new("git").arg("-C").arg(root).args(["ls-files", "-z"]).output().unwrap();
    let files: Vec<HashSet<String>> = out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .filter_map(|p| std::fs::read(root.join(String::from_utf8_lossy(p).as_ref())).ok())
        .map(|bytes| {
            String::from_utf8_lossy(&bytes)
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect()
        })
        .collect();
    let limit = (files.len() / 100).max(2);
    let words: Vec<&str> =
        EVERYDAY.split_whitespace().filter(|w| files.iter().filter(|f| f.contains(*w)).count() <= limit).collect();
    boogerd::domain::search::confidence::word_queries(&words, n, seed)
}
