//! Issue reports as queries, beside a plain BM25 and the commit-subject sets, in one run.
//!
//! `cargo bench -p booger-tests --bench issues` (needs python3 and git; `rg` for the grep
//! ranking of the commit-subject sets; about 11 minutes on 2 cores).
//! - `../shared/eval/issues`: 46 real issue reports, each whole as the query (230 to 24,770
//!   characters), gold = the file its fix edits. The set's `score.py` unpacks the seven
//!   snapshots into `target/eval-issues/`, indexes them on a fresh daemon and scores, in the
//!   same pass as its plain BM25 over the `.py` files: `search` in files mode (Acc@1/5/10,
//!   MRR@10, p50 of the whole process) and `hybrid-search` in files mode, once every chunk
//!   has its vector.
//! - What it costs the agent: the characters read before the first gold file. booger: its
//!   default answer (content mode, ten results) up to the end of the first result in the
//!   gold file. BM25-and-read: BM25's files in order, each read whole, up to and with the
//!   gold file. A query whose gold file is in neither's first ten is charged all ten.
//! - `../shared/eval/repos`: the five repositories' commit subjects, measured as the repos
//!   bench measures them, so a gain on issue text is not a loss on short queries.
//! - `../shared/eval`: the standard library's hand-written queries, as the search bench's
//!   quality rows measure them, and hybrid search beside them.
//!
//! All three visible sets, one run. It prints the tables and issue 41's goals.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use booger_tests::eval_repos::{self, REPOS, measure, ready};
use booger_tests::{Env, bin, copy_tree, describe, output_within};
use serde_json::Value;

fn main() {
    let set = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval/issues");
    let scratch = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/eval-issues");
    let env = Env::new();
    let _daemon = env.start_daemon();
    let booger = bin("booger");
    let files_cmd = |tool: &str| {
        format!(
            "{} {tool} \"$(cat {{query_file}})\" --project {{root}} --output-mode files_with_matches --head-limit 10",
            booger.display()
        )
    };
    let run = |label: &str, cmd: &str, baseline: bool| score(&env, &set, &scratch, label, cmd, baseline);

    // First pass: indexes every snapshot, then scores lexical search beside BM25.
    let (search, rows) = run("search", &files_cmd("search"), true);
    let queries = read_queries(&set);
    let mut roots: Vec<PathBuf> = queries.iter().map(|q| root_of(&scratch, q)).collect();
    roots.dedup();
    for root in &roots {
        ready(&env, root);
    }
    let (hybrid, _) = run("hybrid", &files_cmd("hybrid-search"), false);

    // Accuracies in percent, as the set reports them.
    let f = |v: &Value, system: &str, m: &str| {
        let x = v.pointer(&format!("/summary/ALL/{system}/{m}")).and_then(Value::as_f64).unwrap_or(f64::NAN);
        if m.starts_with("Acc@") { 100.0 * x } else { x }
    };
    println!("## Issue reports as queries ({} via score.py, whole texts)\n", set.display());
    println!("| method | Acc@1 | Acc@5 | Acc@10 | MRR@10 | p50 ms | refused |");
    println!("|---|---|---|---|---|---|---|");
    for (label, v, system) in
        [("booger search", &search, "booger"), ("hybrid-search", &hybrid, "booger"), ("plain BM25", &search, "bm25")]
    {
        println!(
            "| {label} | {:.1} | {:.1} | {:.1} | {:.3} | {:.1} | {} |",
            f(v, system, "Acc@1"),
            f(v, system, "Acc@5"),
            f(v, system, "Acc@10"),
            f(v, system, "MRR@10"),
            f(v, system, "latency_ms_p50"),
            v.pointer(&format!("/summary/ALL/{system}/errors")).and_then(Value::as_u64).unwrap_or(0),
        );
    }

    // What an agent reads before the file to change.
    let (mut ours, mut theirs, mut ours_missed, mut theirs_missed) = (Vec::new(), Vec::new(), 0, 0);
    for (q, row) in queries.iter().zip(&rows) {
        assert_eq!(q["id"], row["id"], "score.py keeps the queries' order");
        let root = root_of(&scratch, q);
        let gold = q["gold_files"][0].as_str().unwrap();
        let out = env.run(&["search", q["query"].as_str().unwrap(), "--project", root.to_str().unwrap()]);
        assert!(out.status.success(), "{}", describe(&out));
        let (chars, found) = answer_read_to(&String::from_utf8_lossy(&out.stdout), gold);
        ours.push(chars as f64);
        ours_missed += usize::from(!found);
        let bm25_files: Vec<&str> = row["bm25"]["files"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        let (chars, found) = files_read_to(&root, &bm25_files, gold);
        theirs.push(chars as f64);
        theirs_missed += usize::from(!found);
    }
    let (ours_mean, theirs_mean) = (mean(&ours), mean(&theirs));
    println!("\n| characters read before the first gold file | mean | median | gold not in the first ten |");
    println!("|---|---|---|---|");
    println!(
        "| booger search (its answer, content mode) | {ours_mean:.0} | {:.0} | {ours_missed} |",
        median(&mut ours)
    );
    println!("| BM25, reading its files in order | {theirs_mean:.0} | {:.0} | {theirs_missed} |", median(&mut theirs));

    // The commit-subject sets, on their own daemon (the repos bench's).
    let (repos_set, work) = eval_repos::unpack();
    let repos_env = Env::new();
    let _repos_daemon = eval_repos::serve(&repos_env, &work);
    let rg = Command::new("rg").arg("--version").output().is_ok_and(|o| o.status.success());
    println!("\n## Commit subjects ({} via score.py)\n", repos_set.display());
    println!(
        "| repo | rg_rank R@10 | files R@10 | rg_rank MRR | files MRR | content Fn@10 | content chars | lexical nl R@10 | hybrid nl R@10 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut verdicts = Vec::new();
    for name in REPOS {
        let m = measure(&repos_env, &repos_set, &work, name, rg);
        let r = &m.row;
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.0} | {:.3} | {:.3} |",
            m.rg_r, r.files_r, m.rg_mrr, r.files_mrr, r.fn10, r.chars, r.lexical_nl, r.hybrid_nl
        );
        verdicts.push(format!("{name}: {}", r.goals(m.rg_r, m.rg_mrr)[..5].join("; ")));
    }

    // The standard library's hand-written queries, on their own daemon (the search bench's
    // quality rows, and hybrid search beside them).
    let stdlib_env = Env::new();
    let stdlib = stdlib_env.dir.path().join("stdlib");
    copy_tree(&booger_tests::python_stdlib(), &stdlib, &["py"], &["site-packages", "__pycache__"]);
    let _stdlib_daemon = stdlib_env.start_daemon();
    let out = stdlib_env.run_within(None, &["index", stdlib.to_str().unwrap()], Duration::from_secs(600));
    assert!(out.status.success(), "{}", describe(&out));
    ready(&stdlib_env, &stdlib);
    let eval = set.join("..");
    println!("\n## Standard library ({} via score.py)\n", eval.join("stdlib-queries.jsonl").display());
    println!("| method | all | nl |");
    println!("|---|---|---|");
    for (label, tool, mode) in [
        ("booger `search` (files_with_matches, 10)", "search", "files_with_matches"),
        ("booger `search` (signatures, 10)", "search", "signatures"),
        ("booger `hybrid-search` (files_with_matches, 10)", "hybrid-search", "files_with_matches"),
        ("booger `hybrid-search` (signatures, 10)", "hybrid-search", "signatures"),
    ] {
        let cmd =
            format!("{} {tool} {{query}} --project {{root}} --output-mode {mode} --head-limit {{k}}", booger.display());
        let [all, nl, _] = booger_tests::score_py(&stdlib_env, &eval, &stdlib, &cmd);
        println!("| {label} | {all} | {nl} |");
    }

    let mark = |ok: bool| if ok { "met" } else { "NOT met" };
    let (acc5, acc10, mrr) =
        (f(&search, "booger", "Acc@5"), f(&search, "booger", "Acc@10"), f(&search, "booger", "MRR@10"));
    let (b5, b10, bmrr) = (f(&search, "bm25", "Acc@5"), f(&search, "bm25", "Acc@10"), f(&search, "bm25", "MRR@10"));
    let p50 = f(&search, "booger", "latency_ms_p50");
    let refused = search.pointer("/summary/ALL/booger/errors").and_then(Value::as_u64).unwrap_or(0);
    println!("\nGoals (issue 41):\n");
    println!("- Acc@5 ≥ BM25 + 15 ({:+.1}): {}", acc5 - b5, mark(acc5 >= b5 + 15.0 - 1e-9));
    println!("- Acc@10 ≥ BM25 + 10 ({:+.1}): {}", acc10 - b10, mark(acc10 >= b10 + 10.0 - 1e-9));
    println!("- MRR@10 ≥ BM25 + 0.15 ({:+.3}): {}", mrr - bmrr, mark(mrr >= bmrr + 0.15 - 1e-9));
    println!("- no query refused ({refused}): {}", mark(refused == 0));
    println!("- p50 ≤ 30 ms ({p50:.1} ms): {}", mark(p50 <= 30.0));
    let hybrid_mrr = f(&hybrid, "booger", "MRR@10");
    let hybrid_acc10 = f(&hybrid, "booger", "Acc@10");
    println!(
        "- hybrid-search not below search on issues (MRR {:+.3}, Acc@10 {:+.1}): {}",
        hybrid_mrr - mrr,
        hybrid_acc10 - acc10,
        mark(hybrid_mrr >= mrr - 1e-9 && hybrid_acc10 >= acc10 - 1e-9)
    );
    let ratio = ours_mean / theirs_mean;
    println!("- characters to the first gold file ≤ 1/10 of BM25-and-read ({ratio:.3}): {}", mark(ratio <= 0.1));
    for v in verdicts {
        println!("- {v}");
    }
}

/// Runs the set's scorer with `cmd` (and its BM25 when `baseline`): the summary, and the
/// per-query rows in query order.
fn score(env: &Env, set: &Path, scratch: &Path, label: &str, cmd: &str, baseline: bool) -> (Value, Vec<Value>) {
    let out = env.dir.path().join(format!("issues-{label}.json"));
    let details = env.dir.path().join(format!("issues-{label}.jsonl"));
    let booger = bin("booger");
    let mut py = env.command("python3");
    py.arg(set.join("score.py"))
        .args(["--label", "booger", "--cmd", cmd, "--scratch"])
        .arg(scratch)
        .arg("--setup")
        .arg(format!("{} index {{root}}", booger.display()))
        .arg("--out")
        .arg(&out)
        .arg("--details")
        .arg(&details);
    if baseline {
        py.args(["--baseline", "bm25"]);
    }
    let done = output_within(py, Duration::from_secs(1800));
    assert!(done.status.success(), "{}", describe(&done));
    let rows = std::fs::read_to_string(&details).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap(), rows)
}

fn read_queries(set: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(set.join("queries.jsonl")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The snapshot root a query is asked in: its tarball's name without `.tar.gz`.
fn root_of(scratch: &Path, q: &Value) -> PathBuf {
    scratch.join(q["snapshot"].as_str().unwrap().trim_end_matches(".tar.gz"))
}

/// Characters of a text answer up to the end of the first result in `gold` (a result starts
/// with its `path:start-end` line), and whether there is one; else the whole answer.
fn answer_read_to(text: &str, gold: &str) -> (usize, bool) {
    let is_header = |line: &str| {
        line.split_once(':').is_some_and(|(path, rest)| {
            !path.is_empty()
                && !path.chars().all(|c| c.is_ascii_digit())
                && rest.split_once('-').is_some_and(|(a, _)| !a.is_empty() && a.chars().all(|c| c.is_ascii_digit()))
        })
    };
    let mut read = 0;
    let mut in_gold = false;
    for line in text.split_inclusive('\n') {
        if is_header(line) {
            if in_gold {
                return (read, true);
            }
            in_gold = line.starts_with(&format!("{gold}:"));
        }
        read += line.chars().count();
    }
    (read, in_gold)
}

/// Characters of `files` read whole, in order, up to and with `gold`, and whether it is there.
fn files_read_to(root: &Path, files: &[&str], gold: &str) -> (usize, bool) {
    let mut read = 0;
    for f in files {
        read += std::fs::read(root.join(f)).map(|b| String::from_utf8_lossy(&b).chars().count()).unwrap_or(0);
        if *f == gold {
            return (read, true);
        }
    }
    (read, false)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}
