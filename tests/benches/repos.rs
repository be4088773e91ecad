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

use booger_tests::Env;
use booger_tests::eval_repos::{REPOS, measure, serve, unpack};

fn main() {
    let (set, work) = unpack();
    let env = Env::new();
    let _daemon = serve(&env, &work);
    let rg = Command::new("rg").arg("--version").output().is_ok_and(|o| o.status.success());

    println!("## Retrieval on real repositories ({} via score.py)\n", set.display());
    println!(
        "| repo | rg_rank R@10 | files R@10 | rg_rank MRR | files MRR | content Fn@10 | content chars | lexical nl R@10 | semantic nl R@10 | hybrid nl R@10 | fusion ceiling nl | search p50 (shell alone) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut verdicts = Vec::new();
    for name in REPOS {
        let m = measure(&env, &set, &work, name, rg);
        let (row, rg_r, rg_mrr, shell_p50) = (&m.row, m.rg_r, m.rg_mrr, m.shell_p50);
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
