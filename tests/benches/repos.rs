//! Retrieval on real repositories, beside the grep ranking, in one run.
//!
//! `cargo bench -p booger-tests --bench repos` (needs python3 and git; `rg` for the baseline:
//! `apt-get install ripgrep`). The set is ../shared/eval/repos: five repositories at pinned
//! commits with their history, queries mined from commit subjects, gold = the files and
//! functions each commit changed. The repositories are unpacked once into
//! `target/eval-repos/`, registered with a fresh daemon and indexed; then the set's scorer runs
//! each method once per query (a whole `booger` process each time):
//! - `rg_rank.sh`, the baseline: files ranked by how many query words they contain;
//! - `search` in files_with_matches mode (R@10, MRR@10 over files);
//! - `search` in content mode: Fn@10 (a result overlaps a changed function; scored on the
//!   JSON answer) and the characters of the text answer an agent reads;
//! - `hybrid-search` against lexical `search` on the queries that name no identifier
//!   (files_with_matches, R@10), once every chunk has its vector; `semantic-search` alone on
//!   them, and the ceiling of any fusion of the two: the share of gold files in lexical or
//!   semantic search's first ten (what a fusion could find at best, had it twenty places).
//!
//! The p50 of the search is its whole process as score.py runs it (through `bash -c`);
//! beside it, the same scorer running `true` (the shell alone), in the same run: the machine
//! is shared, and its process start-up cost moves by half between hours.
//!
//! It prints one table and, per repository, which of issue 18's goals hold.

use std::process::Command;

use booger_tests::eval_repos::{REPOS, scored, serve, unpack};
use booger_tests::{Env, bin};
use serde_json::Value;

fn main() {
    let (set, work) = unpack();
    let env = Env::new();
    let _daemon = serve(&env, &work);
    let rg = Command::new("rg").arg("--version").output().is_ok_and(|o| o.status.success());
    let booger = bin("booger");
    let booger = booger.display();
    let search = |extra: &str| format!("{booger} search {{query}} --project {{root}} --head-limit {{k}} {extra}");

    println!("## Retrieval on real repositories ({} via score.py)\n", set.display());
    println!(
        "| repo | rg_rank R@10 | files R@10 | rg_rank MRR | files MRR | content Fn@10 | content chars | lexical nl R@10 | semantic nl R@10 | hybrid nl R@10 | fusion ceiling nl | search p50 (shell alone) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut verdicts = Vec::new();
    for name in REPOS {
        let scored = |label: &str, cmd: &str| scored(&env, &set, &work, name, label, cmd);
        let score = |label: &str, cmd: &str| scored(label, cmd).0;
        let base =
            rg.then(|| score("rg_rank", &format!("{} {{query}} {{root}} {{k}}", set.join("rg_rank.sh").display())));
        let shell = score("shell", "true");
        let (files, files_rows) = scored("files", &search("--output-mode files_with_matches --json"));
        let content = score("content", &search("--json"));
        let text = score("content-text", &search(""));
        let (semantic, semantic_rows) = scored(
            "semantic",
            &format!(
                "{booger} semantic-search {{query}} --project {{root}} --head-limit {{k}} --output-mode files_with_matches --json"
            ),
        );
        let hybrid = score(
            "hybrid",
            &format!(
                "{booger} hybrid-search {{query}} --project {{root}} --head-limit {{k}} --output-mode files_with_matches --json"
            ),
        );
        let f = |v: &Value, path: &str| v.pointer(path).and_then(Value::as_f64).unwrap_or(f64::NAN);
        let (rg_r, rg_mrr) = base.as_ref().map_or((f64::NAN, f64::NAN), |b| (f(b, "/all/R@10"), f(b, "/all/MRR@10")));
        let row = Row {
            files_r: f(&files, "/all/R@10"),
            files_mrr: f(&files, "/all/MRR@10"),
            fn10: f(&content, "/all/Fn@10"),
            chars: f(&text, "/all/chars_mean"),
            lexical_nl: f(&files, "/nl_only/R@10"),
            semantic_nl: f(&semantic, "/nl_only/R@10"),
            hybrid_nl: f(&hybrid, "/nl_only/R@10"),
            ceiling_nl: ceiling(&files_rows, &semantic_rows),
            p50: f(&files, "/all/latency_ms/p50"),
        };
        let shell_p50 = f(&shell, "/all/latency_ms/p50");
        println!(
            "| {name} | {rg_r:.3} | {:.3} | {rg_mrr:.3} | {:.3} | {:.3} | {:.0} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} ms ({shell_p50:.1} ms) |",
            row.files_r,
            row.files_mrr,
            row.fn10,
            row.chars,
            row.lexical_nl,
            row.semantic_nl,
            row.hybrid_nl,
            row.ceiling_nl,
            row.p50
        );
        verdicts.push((name, row.goals(rg_r, rg_mrr)));
    }
    println!("\nGoals (issue 18):\n");
    for (name, goals) in verdicts {
        println!("- {name}: {}", goals.join("; "));
    }
}

/// Over the queries that name no identifier: the mean share of a query's gold files that are
/// in the first ten files of either ranking (rows of the same queries, in the same order).
fn ceiling(lexical: &[Value], semantic: &[Value]) -> f64 {
    let files = |r: &Value| -> Vec<String> {
        r["top_files"].as_array().into_iter().flatten().take(10).filter_map(|f| f.as_str().map(str::to_owned)).collect()
    };
    let shares: Vec<f64> = lexical
        .iter()
        .zip(semantic)
        .filter(|(l, _)| l["nl_only"] == true)
        .map(|(l, s)| {
            assert_eq!(l["query"], s["query"], "both runs score the queries in one order");
            let either: std::collections::HashSet<String> = files(l).into_iter().chain(files(s)).collect();
            let gold: Vec<&str> = l["gold_files"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            gold.iter().filter(|g| either.contains(**g)).count() as f64 / gold.len().max(1) as f64
        })
        .collect();
    shares.iter().sum::<f64>() / shares.len().max(1) as f64
}

struct Row {
    files_r: f64,
    files_mrr: f64,
    fn10: f64,
    chars: f64,
    lexical_nl: f64,
    semantic_nl: f64,
    hybrid_nl: f64,
    ceiling_nl: f64,
    p50: f64,
}

impl Row {
    fn goals(&self, rg_r: f64, rg_mrr: f64) -> Vec<String> {
        let mark = |ok: bool| if ok { "met" } else { "NOT met" };
        vec![
            format!("files R@10 ≥ rg_rank + 0.05 ({:+.3}): {}", self.files_r - rg_r, mark(self.files_r >= rg_r + 0.05)),
            format!(
                "files MRR ≥ rg_rank + 0.15 ({:+.3}): {}",
                self.files_mrr - rg_mrr,
                mark(self.files_mrr >= rg_mrr + 0.15)
            ),
            format!("Fn@10 ≥ 0.70 ({:.3}): {}", self.fn10, mark(self.fn10 >= 0.70)),
            format!("content ≤ 4,000 chars ({:.0}): {}", self.chars, mark(self.chars <= 4_000.0)),
            format!(
                "hybrid nl R@10 ≥ lexical + 0.05 ({:+.3}): {}",
                self.hybrid_nl - self.lexical_nl,
                mark(self.hybrid_nl >= self.lexical_nl + 0.05)
            ),
            format!("search p50 ≤ 5 ms ({:.1} ms): {}", self.p50, mark(self.p50 <= 5.0)),
        ]
    }
}
