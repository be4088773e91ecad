//! Team search's quality beside local search's, on the same files: the standard library
//! published to the team index (a real PostgreSQL started here) and indexed locally; the
//! 120 queries of ../shared/eval/stdlib-queries.jsonl asked of both, scored at file level
//! (the first result whose path is a gold path: hit@1, hit@10, MRR).
//!
//! `cargo bench -p booger-tests --bench team_quality` (release; a minute or two).

use std::path::Path;
use std::time::Duration;

use booger_tests::{Env, commit_all, describe, git, python_stdlib};
use serde_json::Value;

const MINUTES: Duration = Duration::from_secs(600);

/// The files of a `--json` answer in order, each once, without a team label's
/// `repository@commit:`.
fn files(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in v["results"].as_array().into_iter().flatten() {
        let p = r["path"].as_str().unwrap_or_default();
        let p = if p.contains('@') { p.split_once(':').map_or(p, |(_, rest)| rest) } else { p };
        if !out.iter().any(|o| o == p) {
            out.push(p.to_owned());
        }
    }
    out.truncate(10);
    out
}

fn score(label: &str, ranks: &[Option<usize>]) {
    let n = ranks.len() as f64;
    let hit = |k: usize| 100.0 * ranks.iter().filter(|r| r.is_some_and(|r| r < k)).count() as f64 / n;
    let mrr = ranks.iter().map(|r| r.map_or(0.0, |r| 1.0 / (r as f64 + 1.0))).sum::<f64>() / n;
    println!("| {label} | {:.1}% | {:.1}% | {mrr:.3} |", hit(1), hit(10));
}

fn main() {
    let queries = booger_tests::stdlib_queries();
    let env = Env::new();
    let pg = booger_tests::postgres::start(env.dir.path());
    let stdlib = env.dir.path().join("stdlib");
    booger_tests::copy_tree(&python_stdlib(), &stdlib, &["py"], &["site-packages", "__pycache__"]);
    git(&stdlib, &["init", "-q"]);
    commit_all(&stdlib, "stdlib");
    let _a = env.start_daemon_with(&["--team-url", &pg.url]);
    let run = |e: &Env, cwd: &Path, args: &[&str]| -> Value {
        let out = e.run_within(Some(cwd), args, MINUTES);
        assert!(out.status.success(), "{args:?}: {}", describe(&out));
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    };
    run(&env, &stdlib, &["projects", "add", stdlib.to_str().unwrap()]);
    run(&env, &stdlib, &["index", "--json"]);
    run(&env, &stdlib, &["publish", "--json"]);
    // Another machine: the standard library only in the team index.
    let other = Env::new();
    let _b = other.start_daemon_with(&["--team-url", &pg.url]);
    let away = other.project("away");
    booger_tests::write(&away, "notes.txt", "nothing here\n");
    run(&other, &away, &["projects", "add", away.to_str().unwrap()]);
    let rank = |got: Vec<String>, q: &Value| {
        let gold: Vec<&str> = q["gold"].as_array().unwrap().iter().map(|g| g["path"].as_str().unwrap()).collect();
        got.iter().position(|p| gold.contains(&p.as_str()))
    };
    let (mut local, mut team) = (Vec::new(), Vec::new());
    for q in &queries {
        let text = q["query"].as_str().unwrap();
        local.push(rank(files(&run(&env, &stdlib, &["search", "--json", "--head-limit", "10", text])), q));
        team.push(rank(
            files(&run(&other, &away, &["workspace-search", "--team", "--json", "--head-limit", "10", text])),
            q,
        ));
    }
    println!("{} queries, the Python standard library\n", queries.len());
    println!("| search | hit@1 | hit@10 | MRR |\n|---|---|---|---|");
    score("local `search`", &local);
    score("`workspace-search --team` (team index only)", &team);
}
