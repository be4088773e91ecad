//! Every language booger reads structurally, on real code with real history, in one run.
//!
//! `cargo bench -p booger-tests --bench languages` (needs git). Two tables:
//! - **Repositories** (`../shared/eval/langs`: jsoup, FluentValidation, CLI11, httparty, Slim,
//!   SwiftyJSON, timber; unpacked once into `target/eval-langs/`): each registered with a fresh
//!   daemon and indexed; `booger symbols` on the set's file for it (its main type and one
//!   method, with their kinds); `booger eval`: the queries mined from the history and search
//!   against the grep ranking of the same run (files R@10 and MRR@10), with issue 62's goals
//!   (≥ 30 queries, R@10 +0.05, MRR +0.10), and `hybrid-search` beside `search` on the same
//!   queries (issue 61: never below it).
//! - **Chunking cost per language**: every file of each language found in those repositories,
//!   the Python standard library, `/usr/include` and `~/.cargo/registry/src` (up to 24 MB a
//!   language), parsed and chunked on one thread: MB of source per CPU-second, beside the first
//!   seven languages' (Rust, Python, JavaScript, TypeScript, Go, C) taken together.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use booger_tests::Env;
use booger_tests::eval_repos::{ready, unpack_set};
use boogerd::source::chunk::chunk_file;
use boogerd::source::chunk::parse::parse_only;
use boogerd::source::lang::Lang;

/// (repository, the file to list, its main type and kind, one of its methods).
const REPOS: &[(&str, &str, &str, &str, &str)] = &[
    ("jsoup", "src/main/java/org/jsoup/Jsoup.java", "Jsoup", "class", "parse"),
    ("fluentvalidation", "src/FluentValidation/AbstractValidator.cs", "AbstractValidator", "class", "Validate"),
    ("cli11", "include/CLI/App.hpp", "App", "class", "parse"),
    ("httparty", "lib/httparty.rb", "HTTParty", "mod", "get"),
    ("slim", "Slim/App.php", "App", "class", "run"),
    ("swiftyjson", "Source/SwiftyJSON/SwiftyJSON.swift", "JSON", "struct", "rawData"),
    ("timber", "timber/src/main/java/timber/log/Timber.kt", "Timber", "class", "plant"),
];

/// Bytes of each language chunked for its throughput.
const PER_LANGUAGE: u64 = 24 << 20;

fn main() {
    let set = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval/langs");
    let names: Vec<&str> = REPOS.iter().map(|r| r.0).collect();
    let work = unpack_set(&set, &names, "eval-langs");
    repositories(&work);
    throughput(&work);
}

fn repositories(work: &Path) {
    let env = Env::new();
    let _daemon = env.start_daemon();
    println!("## Repositories in more languages ({})\n", work.display());
    println!(
        "| repository | symbols: main type, method | queries | grep R@10 | search R@10 | grep MRR | search MRR | hybrid R@10 | hybrid MRR | goals |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, file, main, kind, method) in REPOS {
        let root = work.join(name);
        let root_s = root.to_str().unwrap();
        for args in [&["projects", "add", root_s][..], &["index", "--project", root_s]] {
            let out = env.run_within(None, args, Duration::from_secs(600));
            assert!(out.status.success(), "{args:?}: {}", booger_tests::describe(&out));
        }
        ready(&env, &root);
        let path = root.join(file).to_string_lossy().into_owned();
        let symbols =
            env.json(&["symbols", "--project", root_s, &path, "--head-limit", "500", "--max-tokens", "20000"]);
        let results = symbols["results"].as_array().cloned().unwrap_or_default();
        let has = |n: &str, k: Option<&str>| results.iter().any(|r| r["name"] == n && k.is_none_or(|k| r["kind"] == k));
        let listed = format!(
            "{} `{main}` {}, `{method}` {}",
            results.len(),
            if has(main, Some(kind)) { format!("{kind} ✓") } else { "✗".to_owned() },
            if has(method, None) { "✓" } else { "✗" }
        );
        let eval = env.json(&["eval", "--project", root_s]);
        let m = |method: &str, key: &str| eval["methods"][method]["all"][key].as_f64().unwrap_or(0.0);
        let queries = eval["queries"].as_u64().unwrap_or(0);
        let (gr, sr, gm, sm) =
            (m("grep-rank", "R@10"), m("search", "R@10"), m("grep-rank", "MRR@10"), m("search", "MRR@10"));
        let (hr, hm) = (m("hybrid-search", "R@10"), m("hybrid-search", "MRR@10"));
        let mut goals = Vec::new();
        if queries < 30 {
            goals.push(format!("{queries} queries < 30"));
        }
        if sr - gr < 0.05 {
            goals.push(format!("R@10 +{:.3} < 0.05", sr - gr));
        }
        if sm - gm < 0.10 {
            goals.push(format!("MRR +{:.3} < 0.10", sm - gm));
        }
        if hr < sr || hm < sm {
            goals.push(format!("hybrid below search: R@10 {:+.3}, MRR {:+.3}", hr - sr, hm - sm));
        }
        let goals = if goals.is_empty() { "met".to_owned() } else { goals.join("; ") };
        println!(
            "| {name} | {listed} | {queries} | {gr:.3} | {sr:.3} | {gm:.3} | {sm:.3} | {hr:.3} | {hm:.3} | {goals} |"
        );
    }
    println!();
}

fn throughput(work: &Path) {
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_default());
    let cargo = std::env::var("CARGO_HOME").map(PathBuf::from).unwrap_or(home.join(".cargo")).join("registry/src");
    let roots = [work.to_path_buf(), booger_tests::python_stdlib(), PathBuf::from("/usr/include"), cargo];
    // Per language: bytes, seconds chunking, files, seconds parsing alone.
    let mut per: BTreeMap<&'static str, (u64, f64, u64, f64)> = BTreeMap::new();
    for root in roots.iter().filter(|r| r.is_dir()) {
        for path in files(root) {
            let Ok(bytes) = std::fs::read(&path) else { continue };
            let lang = Lang::detect(&path, &bytes);
            if matches!(lang, Lang::Markdown | Lang::Text) || bytes.len() > 1 << 20 {
                continue;
            }
            let slot = per.entry(lang.name()).or_default();
            if slot.0 >= PER_LANGUAGE {
                continue;
            }
            let t = Instant::now();
            std::hint::black_box(parse_only(lang, &bytes));
            let parsed = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let chunked = chunk_file(&path, &bytes, false);
            std::hint::black_box(&chunked);
            *slot = (slot.0 + bytes.len() as u64, slot.1 + t.elapsed().as_secs_f64(), slot.2 + 1, slot.3 + parsed);
        }
    }
    let first = ["rust", "python", "javascript", "typescript", "tsx", "go", "c"];
    let (b, s) = per.iter().filter(|(l, _)| first.contains(l)).fold((0, 0.0), |(b, s), (_, v)| (b + v.0, s + v.1));
    let base = b as f64 / 1e6 / s.max(1e-9);
    println!("## Chunking cost per language (parse + chunk, one thread)\n");
    println!(
        "| language | files | MB | MB per CPU-second | the first seven's over it ({base:.2} MB/s) | parse alone MB/s | chunking's share |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (lang, (bytes, secs, files, parsed)) in &per {
        let mb = *bytes as f64 / 1e6;
        let rate = mb / secs.max(1e-9);
        let share = 1.0 - parsed / secs.max(1e-9);
        println!(
            "| {lang} | {files} | {mb:.1} | {rate:.2} | {:.2}x | {:.2} | {:.0}% |",
            base / rate,
            mb / parsed.max(1e-9),
            share.max(0.0) * 100.0
        );
    }
}

/// Every file under `root`, in name order, without `.git` folders or links.
fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() && e.file_name() != ".git" {
                folders.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out
}
