//! What Claude Code's Grep hook costs and saves: `booger hook claude-code` answering Grep
//! calls from the index, beside `rg` searching the same tree, in the same run.
//!
//! `cargo bench -p booger-tests --bench hooks` (release; a few minutes: most of it copying
//! and indexing the tree). The tree: `BOOGER_LARGE_TREE` when set, else the `large_build`
//! bench's (copies of /usr/include, the cargo registry's sources and the standard library).
//! A daemon indexes it and settles (watching, grep's trigram rows built); then for each
//! pattern and output mode the hook is run as Claude Code runs it (a new process, the event
//! on stdin) and `rg` as the Grep tool would, each five times; medians. Also printed: whether
//! the hook answered (or left the call to the client's Grep: too many lines to be whole),
//! and whether its lines are rg's. Goals (issue 65): the hook's whole call ≤ 20 ms, and the
//! agent's answer ≥ 10x faster than rg.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use booger_tests::live::{session, status};
use booger_tests::{Env, describe};
use serde_json::{Value, json};

const PATTERNS: &[&str] = &[
    "struct sockaddr_in6",
    "fn from_str_radix",
    "def urljoin",
    // Thousands of lines: more than an answer holds whole, so the client's Grep runs.
    "EINVAL",
    "impl Drop for",
    r"raise NotImplementedError\(\w*",
];

fn main() {
    let env = Env::new();
    let root = booger_tests::large_tree(env.dir.path());
    let _daemon = env.start_daemon();
    let out = env.run_within(None, &["index", root.to_str().unwrap(), "--json"], Duration::from_secs(3600));
    assert!(out.status.success(), "{}", describe(&out));
    let files = serde_json::from_slice::<Value>(&out.stdout).unwrap()["report"]["files"].as_u64().unwrap_or(0);
    let mut c = session(&env, &root);
    let deadline = Instant::now() + Duration::from_secs(1800);
    loop {
        let s = status(&mut c);
        let index = &s["project"]["index"];
        if index["grep_index"]["ready"] == true && index["watch"]["state"] == "watching" {
            break;
        }
        assert!(Instant::now() < deadline, "never settled: {s}");
        std::thread::sleep(Duration::from_millis(500));
    }

    println!("## Claude Code's Grep hook ({files} files, `cargo bench -p booger-tests --bench hooks`)\n");
    println!("| pattern | mode | answered | lines | same as rg | hook ms | rg ms | rg / hook |");
    println!("|---|---|---|---|---|---|---|---|");
    let (mut hook_all, mut ratios) = (Vec::new(), Vec::new());
    for pattern in PATTERNS {
        for mode in ["content", "files_with_matches"] {
            let event = json!({
                "hook_event_name": "PreToolUse",
                "tool_name": "Grep",
                "cwd": root,
                "tool_input": { "pattern": pattern, "output_mode": mode },
            });
            let (answer, hook_ms) = median_of(5, || hook(&env, &event));
            let rg_args: Vec<&str> = if mode == "content" { vec!["-n", pattern] } else { vec!["-l", pattern] };
            let (rg_out, rg_ms) = median_of(5, || rg(&root, &rg_args));
            let answered = answer.is_some();
            let mut ours: Vec<String> = answer.as_deref().map(|a| lines_of(a, &root, mode)).unwrap_or_default();
            let mut theirs: Vec<String> = rg_out.lines().map(str::to_owned).collect();
            ours.sort();
            theirs.sort();
            let same = if !answered {
                "-".to_owned()
            } else if ours == theirs {
                "yes".to_owned()
            } else {
                differ(&ours, &theirs)
            };
            if answered {
                hook_all.push(hook_ms);
                ratios.push(rg_ms / hook_ms);
            }
            println!(
                "| `{pattern}` | {mode} | {} | {} | {same} | {hook_ms:.1} | {rg_ms:.1} | {:.0}x |",
                if answered { "yes" } else { "no (left to Grep)" },
                theirs.len(),
                rg_ms / hook_ms
            );
        }
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let (hook_med, ratio_med) = (med(hook_all), med(ratios));
    println!("\nGoals (issue 65):\n");
    println!("- a hook call ≤ 20 ms (median {hook_med:.1} ms): {}", if hook_med <= 20.0 { "met" } else { "NOT met" });
    println!(
        "- answered ≥ 10x faster than rg (median {ratio_med:.0}x): {}",
        if ratio_med >= 10.0 { "met" } else { "NOT met" }
    );
}

/// The hook's answer (the reason the agent reads), or None when it left the call alone.
fn hook(env: &Env, event: &Value) -> Option<String> {
    let mut cmd = env.booger(None);
    cmd.args(["hook", "claude-code"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = cmd.spawn().expect("booger hook");
    child.stdin.take().unwrap().write_all(event.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the hook failed: {}", describe(&out));
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    v["hookSpecificOutput"]["permissionDecisionReason"].as_str().map(str::to_owned)
}

fn rg(root: &Path, args: &[&str]) -> String {
    let out = Command::new("rg").args(args).current_dir(root).output().expect("rg (ripgrep) on PATH");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The answer's lines as rg prints them from the tree's root (relative paths).
fn lines_of(answer: &str, root: &Path, mode: &str) -> Vec<String> {
    let prefix = format!("{}/", root.display());
    answer
        .lines()
        .skip(if mode == "content" { 1 } else { 2 })
        .filter(|l| !l.starts_with("No "))
        .map(|l| l.strip_prefix(&prefix).unwrap_or(l).to_owned())
        .collect()
}

/// How two sorted line lists differ, in a few words.
fn differ(ours: &[String], theirs: &[String]) -> String {
    let only_ours = ours.iter().filter(|l| theirs.binary_search(l).is_err()).count();
    let only_rg = theirs.iter().filter(|l| ours.binary_search(l).is_err()).count();
    let example =
        theirs.iter().find(|l| ours.binary_search(l).is_err()).map(|l| l.chars().take(60).collect::<String>());
    format!("no: {only_ours} only booger's, {only_rg} only rg's (e.g. `{}`)", example.unwrap_or_default())
}

/// Runs `f` `n` times; its last result and the median milliseconds.
fn median_of<T>(n: usize, mut f: impl FnMut() -> T) -> (T, f64) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..n {
        let t = Instant::now();
        last = Some(f());
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    (last.unwrap(), times[n / 2])
}
