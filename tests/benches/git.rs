//! Structural git: `branch-diff` and `draft-commit` on a branch touching 50 files and 200
//! symbols, against `git diff` in the same run.
//!
//! `cargo bench -p booger-tests --bench git` (needs python3 and git). The corpus is 500 files
//! of the Python standard library committed on `main`; the branch `feature` edits 50 of them,
//! each getting one function added, two modified and one removed (200 symbol changes). A real
//! daemon has the project indexed and watched, as it would in use. Measured:
//! - through the CLI (p50/p90 of 20 runs; the very first call too): `booger branch-diff` (the
//!   readable list), `--output-mode json` (what MCP answers), `booger draft-commit main`, and
//!   `git diff main...HEAD` as the baseline;
//! - in process: the same structural diff cold (no version parsed before, no help from the
//!   index) and warm (every version parsed before, as in a daemon that answered once), and
//!   the chunker alone on both sides of the 50 files (the floor of a cold diff);
//! - the size of each answer in characters and estimated tokens (4 characters each) against
//!   `git diff`'s.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use booger_tests::{Env, copy_tree, describe, git};

const CORPUS_FILES: usize = 500;
const CHANGED_FILES: usize = 50;
const RUNS: usize = 20;

fn main() {
    let env = Env::new();
    let stdlib = env.dir.path().join("stdlib");
    copy_tree(&booger_tests::python_stdlib(), &stdlib, &["py"], &["site-packages", "__pycache__", "test", "tests"]);
    let repo = env.project("repo");
    let mut all = python_files(&stdlib);
    all.sort();
    let step = (all.len() / CORPUS_FILES).max(1);
    let picked: Vec<&PathBuf> = all.iter().step_by(step).take(CORPUS_FILES).collect();
    for src in &picked {
        let rel = src.strip_prefix(&stdlib).unwrap();
        let dst = repo.join(rel);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(src, &dst).unwrap();
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "corpus"]);
    git(&repo, &["checkout", "-q", "-b", "feature"]);
    let (edited, bytes) = edit_branch(&repo);
    git(&repo, &["commit", "-q", "-am", "feature"]);

    let _daemon = env.start_daemon();
    let out = env.run(&["index", repo.to_str().unwrap()]);
    assert!(out.status.success(), "{}", describe(&out));

    println!("# booger git benchmark\n");
    println!(
        "Corpus: {} standard-library files on `main`; `feature` edits {} of them ({} KiB): per file one \
         function added, two modified, one removed.\n",
        picked.len(),
        edited.len(),
        bytes / 1024
    );

    // The first call, then repeated ones.
    let first = timed(|| cli(&env, &repo, &["branch-diff"])).0;
    let data = env.json(&["branch-diff", "--project", repo.to_str().unwrap()]);
    println!("Structural diff found: {} (goal: 50 files, +50 ~100 -50)\n", data["totals"]);
    // The edits are made by line, so a comment above a removed function can end up in the
    // next one's chunk: BOOGER_BENCH_DEBUG=1 shows the files that differ from 1 + 2 + 1.
    if std::env::var_os("BOOGER_BENCH_DEBUG").is_some() {
        for f in data["files"].as_array().unwrap() {
            let n = |k: &str| f[k].as_array().map_or(0, Vec::len);
            if (n("added"), n("modified"), n("removed")) != (1, 2, 1) {
                eprintln!("{f}");
            }
        }
    }

    let list = runs(|| cli(&env, &repo, &["branch-diff"]));
    let json = runs(|| cli(&env, &repo, &["branch-diff", "--output-mode", "json"]));
    let files = runs(|| cli(&env, &repo, &["branch-diff", "--output-mode", "files"]));
    let draft = runs(|| cli(&env, &repo, &["draft-commit", "main"]));
    let gitdiff = runs(|| git(&repo, &["diff", "main...HEAD"]));

    // In-process floors.
    let repo_handle = boogerd::domain::git::repo::Repo::open(&repo).unwrap();
    let req =
        boogerd::domain::git::Request { max_file_bytes: boogerd::source::DEFAULT_MAX_FILE_BYTES, ..Default::default() };
    let no_index = |_: &str, _: &str| None;
    let diff = || boogerd::domain::git::structural_diff(&repo_handle, &req, &no_index).unwrap();
    let cold: Vec<Duration> = (0..RUNS)
        .map(|_| {
            boogerd::domain::git::parsed::clear();
            timed(diff).0
        })
        .collect();
    let warm: Vec<Duration> = (0..RUNS).map(|_| timed(diff).0).collect();
    let sides: Vec<(PathBuf, Vec<u8>, Vec<u8>)> = edited
        .iter()
        .map(|rel| {
            let base = git(&repo, &["show", &format!("main:{}", rel.display())]).into_bytes();
            (rel.clone(), base, std::fs::read(repo.join(rel)).unwrap())
        })
        .collect();
    let chunk_only: Vec<Duration> = (0..RUNS)
        .map(|_| {
            timed(|| {
                for (rel, base, head) in &sides {
                    boogerd::source::chunk::chunk_file(rel, base, false);
                    boogerd::source::chunk::chunk_file(rel, head, false);
                }
            })
            .0
        })
        .collect();

    println!("| measure | p50 | p90 | runs |");
    println!("|---|---|---|---|");
    println!("| `booger branch-diff`, first call | {} | | 1 |", ms(first));
    row("`booger branch-diff` (list)", &list.0);
    row("`booger branch-diff --output-mode json` (the MCP answer)", &json.0);
    row("`booger branch-diff --output-mode files`", &files.0);
    row("`booger draft-commit main`", &draft.0);
    row("`git diff main...HEAD` (baseline)", &gitdiff.0);
    row("structural diff in-process, nothing parsed before, no index (cold)", &cold);
    row("structural diff in-process, versions parsed before (warm)", &warm);
    row("chunker alone, both sides of the 50 files, one thread (floor)", &chunk_only);
    println!();

    let git_chars = gitdiff.1.chars().count();
    println!("| answer | characters | ≈ tokens | vs `git diff` |");
    println!("|---|---|---|---|");
    for (label, text) in [
        ("`git diff main...HEAD`", &gitdiff.1),
        ("`branch-diff` list", &list.1),
        ("`branch-diff` JSON (MCP)", &json.1),
        ("`branch-diff` files", &files.1),
        ("`draft-commit`", &draft.1),
    ] {
        let n = text.chars().count();
        println!("| {label} | {n} | {} | {:.1}% |", n / 4, 100.0 * n as f64 / git_chars as f64);
    }
}

/// `booger args…` in `repo`: its output.
fn cli(env: &Env, repo: &Path, args: &[&str]) -> String {
    let out = env.run_in(Some(repo), args);
    assert!(out.status.success(), "booger {args:?}: {}", describe(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let v = f();
    (t.elapsed(), v)
}

/// `RUNS` timings of `f`, and its last output.
fn runs(mut f: impl FnMut() -> String) -> (Vec<Duration>, String) {
    let mut times = Vec::new();
    let mut last = String::new();
    for _ in 0..RUNS {
        let (d, out) = timed(&mut f);
        times.push(d);
        last = out;
    }
    (times, last)
}

fn percentile(v: &[Duration], p: usize) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    s[(s.len() - 1) * p / 100]
}

fn row(label: &str, v: &[Duration]) {
    println!("| {label} | {} | {} | {} |", ms(percentile(v, 50)), ms(percentile(v, 90)), v.len());
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Edits `CHANGED_FILES` files with at least four plain functions: removes one, appends a line
/// to the bodies of two, adds one. Returns the edited paths and their total size.
fn edit_branch(repo: &Path) -> (Vec<PathBuf>, usize) {
    let mut files = python_files(repo);
    files.sort();
    let mut edited = Vec::new();
    let mut bytes = 0;
    for (n, path) in files.iter().enumerate() {
        if edited.len() == CHANGED_FILES {
            break;
        }
        if n % 3 != 0 {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let funcs = plain_functions(&lines);
        if funcs.len() < 4 {
            continue;
        }
        // Bottom-up, so earlier line numbers stay valid: modify, remove, modify.
        let pick = [funcs[funcs.len() - 1], funcs[funcs.len() / 2], funcs[0]];
        let (start, end, indent) = pick[0];
        lines.insert(last_body_line(&lines, start, end) + 1, format!("{}    _booger_edit = 1", " ".repeat(indent)));
        let (start, end, _) = pick[1];
        lines.drain(start..end);
        let (start, end, indent) = pick[2];
        lines.insert(last_body_line(&lines, start, end) + 1, format!("{}    _booger_edit = 2", " ".repeat(indent)));
        lines.push(String::new());
        lines.push(format!("def booger_added_{n}(x):\n    return x + {n}"));
        let body = lines.join("\n") + "\n";
        bytes += body.len();
        std::fs::write(path, body).unwrap();
        edited.push(path.strip_prefix(repo).unwrap().to_owned());
    }
    (edited, bytes)
}

/// (first line, end line exclusive, indent) of every top-level function and method with a
/// name unique in its file, no decorator, and a body ending where the indentation returns.
fn plain_functions(lines: &[String]) -> Vec<(usize, usize, usize)> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out = Vec::new();
    let mut names = std::collections::HashMap::new();
    for (i, l) in lines.iter().enumerate() {
        let ind = indent(l);
        let Some(rest) = l.trim_start().strip_prefix("def ") else { continue };
        if ind != 0 && ind != 4 {
            continue;
        }
        let name = rest.split('(').next().unwrap_or_default().to_owned();
        *names.entry(name.clone()).or_insert(0) += 1;
        let decorated = i > 0 && lines[i - 1].trim_start().starts_with('@');
        let mut end = i + 1;
        while end < lines.len() && (lines[end].trim().is_empty() || indent(&lines[end]) > ind) {
            end += 1;
        }
        let body_ok = lines[i + 1..end].iter().all(|b| !b.contains("\"\"\"") && !b.contains("'''"));
        if !decorated && body_ok && end > i + 1 {
            out.push((i, end, ind, name));
        }
    }
    out.into_iter().filter(|(.., n)| names[n] == 1).map(|(a, b, c, _)| (a, b, c)).collect()
}

fn last_body_line(lines: &[String], start: usize, end: usize) -> usize {
    (start..end).rev().find(|&i| !lines[i].trim().is_empty()).unwrap_or(start)
}

fn python_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "py") {
                out.push(p);
            }
        }
    }
    out
}
