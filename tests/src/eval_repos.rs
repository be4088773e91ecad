//! The five real repositories of `../shared/eval/repos` (the retrieval and eval benches):
//! unpacked once into `target/eval-repos/`, and scored with the set's own `score.py`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{Env, describe};

pub const REPOS: &[&str] = &["axum", "requests", "cobra", "hiredis", "zustand"];

/// Each repository as a working tree at its pin, with its history, once: (the set, the
/// folder they are in).
pub fn unpack() -> (PathBuf, PathBuf) {
    let set = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval/repos");
    let work = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/eval-repos");
    std::fs::create_dir_all(&work).unwrap();
    for name in REPOS {
        let tree = work.join(name);
        if !tree.join(".git").exists() {
            let mut tar = Command::new("tar");
            tar.arg("xzf").arg(set.join(format!("{name}.git.tar.gz"))).arg("-C").arg(&work);
            run(tar);
            let mut clone = Command::new("git");
            clone.args(["clone", "-q"]).arg(work.join(format!("{name}.git"))).arg(&tree);
            run(clone);
        }
        std::fs::copy(set.join(format!("{name}.queries.jsonl")), work.join(format!("{name}.queries.jsonl"))).unwrap();
    }
    (set, work)
}

fn run(mut cmd: Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?}: {}", describe(&out));
}

/// A daemon with every repository registered, indexed, ranked and embedded.
pub fn serve(env: &Env, work: &Path) -> crate::DaemonProc {
    let daemon = env.start_daemon();
    for name in REPOS {
        let root = work.join(name);
        let root = root.to_str().unwrap();
        for args in [&["projects", "add", root][..], &["index", "--project", root]] {
            let out = env.run_within(None, args, Duration::from_secs(600));
            assert!(out.status.success(), "{args:?}: {}", describe(&out));
        }
    }
    for name in REPOS {
        ready(env, &work.join(name));
    }
    daemon
}

/// Waits until the project's ranking index is built, grep's trigram rows are written and
/// every chunk has its vector: the daemon is idle when the timed queries start.
fn ready(env: &Env, root: &Path) {
    let root = root.to_str().unwrap();
    let deadline = Instant::now() + Duration::from_secs(900);
    loop {
        let status = env.json(&["status", root]);
        let index = &status["project"]["index"];
        let e = &index["embeddings"];
        if index["ranking_index"] == "ready"
            && index["grep_index"]["ready"] == true
            && e["embedded"] == e["embeddable"]
            && e["running"] == false
        {
            return;
        }
        assert!(Instant::now() < deadline, "{root} never became ready: {index}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The scorer's summary of `cmd` over one repository.
pub fn score(env: &Env, set: &Path, work: &Path, name: &str, label: &str, cmd: &str) -> Value {
    scored(env, set, work, name, label, cmd).0
}

/// The scorer's summary of `cmd` over one repository, and its per-query rows (`query`,
/// `nl_only`, `top_files`, `gold_files`, the measures in `m`), in query order.
pub fn scored(env: &Env, set: &Path, work: &Path, name: &str, label: &str, cmd: &str) -> (Value, Vec<Value>) {
    let out: PathBuf = env.dir.path().join(format!("{name}-{label}.json"));
    let details: PathBuf = env.dir.path().join(format!("{name}-{label}.jsonl"));
    let _ = std::fs::remove_file(&details);
    let mut py = env.command("python3");
    py.arg(set.join("score.py"))
        .args(["--corpus", name, "--label", label, "--cmd", cmd, "--out"])
        .arg(&out)
        .arg("--details")
        .arg(&details)
        .env("CORPORA_DIR", work);
    let done = crate::output_within(py, Duration::from_secs(1800));
    assert!(done.status.success(), "{}", describe(&done));
    let rows = std::fs::read_to_string(&details).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap(), rows)
}
