//! `eval`: how well booger's searches find, on this project, what its own commits changed.
//!
//! The queries come from the project's history ([`mine`]); each is asked of `search`,
//! `semantic-search` and `hybrid-search` through their handlers, as an agent would ask, and
//! scored ([`measure`]) beside a grep ranking ([`baseline`]). One evaluation runs at a time,
//! on a thread of its own at low priority, so it never holds a slot other calls need; a call
//! while it runs answers with its progress after a short wait. The result is kept per index
//! generation, in memory and in the index's `meta` (for `status`, also after a restart).

mod baseline;
mod measure;
pub mod mine;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, int, project_store};
use crate::Daemon;
use crate::git::command::Git;
use crate::store::Store;
use measure::{Hit, Tally, files_of, score};

/// How long a call waits for a running evaluation before answering with its progress.
const WAIT: Duration = Duration::from_secs(8);
/// Fewer queries than this and the figures would say more about chance than about search.
const TOO_FEW: usize = 10;
/// The grep ranking reads at most this much of the project's text.
const BASELINE_BYTES: usize = 256 << 20;
/// The key of the last result in the index's `meta`.
pub const META_KEY: &str = "eval";

enum State {
    Running { progress: Arc<(AtomicUsize, AtomicUsize)> },
    Done { generation: u64, commits: usize, summary: Arc<Value>, details: Arc<Value> },
    Failed(String),
}

struct Evaluations {
    states: Mutex<HashMap<PathBuf, State>>,
    changed: Condvar,
}

fn evaluations() -> &'static Evaluations {
    static E: std::sync::OnceLock<Evaluations> = std::sync::OnceLock::new();
    E.get_or_init(|| Evaluations { states: Mutex::default(), changed: Condvar::new() })
}

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let (project, store) = match project_store(daemon, session, args) {
        Ok(x) => x,
        Err(reply) => return reply,
    };
    let commits = int(args, "commits", 1000);
    let details = args.get("details").and_then(Value::as_bool).unwrap_or(false);
    let generation = store.content_generation();
    let e = evaluations();
    let mut states = e.states.lock().unwrap_or_else(|p| p.into_inner());
    let current =
        |s: &State| matches!(s, State::Done { generation: g, commits: c, .. } if *g == generation && *c == commits);
    if !states.get(&project.root).is_some_and(|s| current(s) || matches!(s, State::Running { .. })) {
        if states.values().any(|s| matches!(s, State::Running { .. })) {
            return ToolReply::error("eval: another project is being evaluated; call again in a minute");
        }
        let progress = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
        states.insert(project.root.clone(), State::Running { progress: progress.clone() });
        let (daemon, root, name) = (daemon.arc(), project.root.clone(), project.name.clone());
        std::thread::Builder::new()
            .name("booger-eval".to_owned())
            .spawn(move || {
                crate::threads::lower_priority();
                let outcome = evaluate(&daemon, &root, &name, &store, commits, &progress);
                let e = evaluations();
                let state = match outcome {
                    Ok((summary, details)) => {
                        if let Err(err) = store.set_meta(&[(META_KEY, &summary.to_string())]) {
                            tracing::warn!(error = %err, "eval: could not keep the result in the index");
                        }
                        State::Done { generation, commits, summary: Arc::new(summary), details: Arc::new(details) }
                    }
                    Err(why) => State::Failed(why),
                };
                e.states.lock().unwrap_or_else(|p| p.into_inner()).insert(root, state);
                e.changed.notify_all();
            })
            .expect("spawn the eval thread");
    }
    let deadline = Instant::now() + WAIT;
    loop {
        match states.get(&project.root) {
            Some(State::Done { summary, details: listed, .. }) => {
                let mut data = summary.as_ref().clone();
                if details {
                    data["details"] = listed.as_ref().clone();
                }
                return ToolReply::ok(text(&data), data);
            }
            Some(State::Failed(why)) => {
                let why = why.clone();
                states.remove(&project.root);
                return ToolReply::error(format!("eval {}: {why}", project.name));
            }
            Some(State::Running { progress }) if Instant::now() >= deadline => {
                let (done, total) = (progress.0.load(Ordering::Relaxed), progress.1.load(Ordering::Relaxed));
                let data = json!({ "project": project.name, "running": true, "done": done, "queries": total });
                let text = if total == 0 {
                    format!("eval {}: reading the history; call eval again for the result", project.name)
                } else {
                    format!("eval {}: {done} of {total} queries asked; call eval again for the result", project.name)
                };
                return ToolReply::ok(text, data);
            }
            _ => {}
        }
        let left = deadline.saturating_duration_since(Instant::now());
        states = e.changed.wait_timeout(states, left).unwrap_or_else(|p| p.into_inner()).0;
    }
}

/// The last result kept in `store`, for `status`.
pub fn last(store: &Store) -> Option<Value> {
    store.meta(META_KEY).ok().flatten().and_then(|s| serde_json::from_str(&s).ok())
}

/// Mines the history, asks every query of every method and sums up: (summary, details).
fn evaluate(
    daemon: &Daemon,
    root: &Path,
    name: &str,
    store: &Store,
    commits: usize,
    progress: &(AtomicUsize, AtomicUsize),
) -> Result<(Value, Value), String> {
    let started = Instant::now();
    let paths: Vec<String> = store.hashes().map_err(|e| e.to_string())?.into_iter().map(|(p, _)| p).collect();
    let head = AtHead { store, paths: paths.iter().cloned().collect() };
    let mined = mine::mine(&Git::new(root), &head, commits).map_err(|e| e.to_string())?;
    let n = mined.queries.len();
    progress.1.store(n, Ordering::Relaxed);
    let mut summary = json!({
        "project": name,
        "running": false,
        "generation": store.content_generation(),
        "at": crate::time::now_rfc3339(),
        "commits": commits,
        "history": { "scanned": mined.scanned, "shallow": mined.shallow, "skipped": mined.skipped },
        "queries": n,
    });
    let details = serde_json::to_value(&mined.queries).unwrap_or(Value::Null);
    if n < TOO_FEW {
        summary["message"] = json!(format!(
            "too little history to measure: {n} quer{} from {} commit(s){}; a query needs a non-merge commit \
             that changes 1-{} source files and has a descriptive subject",
            if n == 1 { "y" } else { "ies" },
            mined.scanned,
            if mined.shallow { " (a shallow clone: `git fetch --unshallow` brings the rest)" } else { "" },
            mine::MAX_FILES,
        ));
    }
    if n == 0 {
        summary["took_s"] = json!(started.elapsed().as_secs_f64());
        return Ok((summary, details));
    }
    let corpus = baseline::Corpus::new(read_texts(root, &paths));
    let session = Session { id: "eval".to_owned(), project: Some(root.to_owned()), register: false, shell: false };
    let semantic = daemon.projects.embedding().is_some();
    let mut tallies: Vec<(&str, Tally)> = ["search", "semantic-search", "hybrid-search", "grep-rank"]
        .into_iter()
        .map(|m| (m, Tally::default()))
        .collect();
    for (i, q) in mined.queries.iter().enumerate() {
        let ask = |tool: &str, mode: Option<&str>| -> (Vec<Hit>, Duration) {
            let mut args = json!({ "query": q.subject, "head_limit": 10 });
            if let Some(m) = mode {
                args["output_mode"] = json!(m);
            }
            let t = Instant::now();
            let reply = match tool {
                "search" => super::search::run(daemon, &session, &args),
                "semantic-search" => super::semantic::semantic_search(daemon, &session, &args),
                _ => super::semantic::hybrid_search(daemon, &session, &args),
            };
            (hits(&reply.data), t.elapsed())
        };
        let (ranked, _) = ask("search", Some("files_with_matches"));
        let (chunks, took) = ask("search", None);
        tallies[0].1.add(q.language, score(q, &files_of(&ranked), &chunks, took));
        if semantic {
            for (slot, tool) in [(1, "semantic-search"), (2, "hybrid-search")] {
                let (chunks, took) = ask(tool, None);
                tallies[slot].1.add(q.language, score(q, &files_of(&chunks), &chunks, took));
            }
        }
        let t = Instant::now();
        let files: Vec<String> = corpus.rank(&q.subject, 10).into_iter().map(str::to_owned).collect();
        let mut s = score(q, &files, &[], t.elapsed());
        s.fn10 = None; // files only: no lines to overlap a function with
        tallies[3].1.add(q.language, s);
        progress.0.store(i + 1, Ordering::Relaxed);
    }
    summary["methods"] =
        tallies.iter().filter(|(_, t)| !t.is_empty()).map(|(m, t)| ((*m).to_owned(), t.summary())).collect();
    if !semantic {
        summary["unavailable"] = json!({ "semantic-search": "embeddings are off (boogerd --no-embed)",
                                          "hybrid-search": "embeddings are off (boogerd --no-embed)" });
    }
    summary["took_s"] = json!((started.elapsed().as_secs_f64() * 10.0).round() / 10.0);
    Ok((summary, details))
}

/// The results of a search-side answer: path and lines of each.
fn hits(data: &Value) -> Vec<Hit> {
    data["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let path = r["path"].as_str()?.to_owned();
            let lines = r["start_line"].as_u64().zip(r["end_line"].as_u64()).map(|(s, e)| (s as u32, e as u32));
            Some((path, lines))
        })
        .collect()
}

/// The indexed files' text from disk, up to [`BASELINE_BYTES`] in all.
fn read_texts(root: &Path, paths: &[String]) -> Vec<(String, String)> {
    let mut budget = BASELINE_BYTES;
    let mut out = Vec::new();
    for p in paths {
        let Ok(bytes) = std::fs::read(root.join(p)) else { continue };
        if bytes.len() > budget {
            break;
        }
        budget -= bytes.len();
        out.push((p.clone(), String::from_utf8_lossy(&bytes).into_owned()));
    }
    out
}

/// The index at HEAD, as the miner asks it.
struct AtHead<'a> {
    store: &'a Store,
    paths: std::collections::HashSet<String>,
}

impl mine::Head for AtHead<'_> {
    fn has(&self, path: &str) -> bool {
        self.paths.contains(path)
    }

    fn chunks(&self, path: &str) -> Vec<crate::index::chunk::Chunk> {
        self.store.chunks_of(path).unwrap_or_default()
    }
}

/// The summary as a table.
fn text(d: &Value) -> String {
    let mut out = format!(
        "eval of {}: {} queries from {} commits{}, {} s\n",
        d["project"].as_str().unwrap_or("?"),
        d["queries"],
        d["history"]["scanned"],
        if d["history"]["shallow"] == true { " (a shallow clone)" } else { "" },
        d["took_s"],
    );
    if let Some(m) = d["message"].as_str() {
        out.push_str(&format!("{m}\n"));
    }
    let Some(methods) = d["methods"].as_object() else { return out };
    out.push_str(&format!(
        "{:<16} {:>6} {:>6} {:>7} {:>6} {:>8}\n",
        "method", "R@1", "R@10", "MRR@10", "Fn@10", "p50 ms"
    ));
    let f = |v: &Value| v.as_f64().map_or_else(|| "-".to_owned(), |x| format!("{x:.3}"));
    for (m, s) in methods {
        let a = &s["all"];
        out.push_str(&format!(
            "{m:<16} {:>6} {:>6} {:>7} {:>6} {:>8}\n",
            f(&a["R@1"]),
            f(&a["R@10"]),
            f(&a["MRR@10"]),
            f(&a["Fn@10"]),
            a["p50_ms"].as_f64().map_or_else(|| "-".to_owned(), |x| format!("{x:.1}"))
        ));
    }
    if let Some(langs) = methods.get("search").and_then(|s| s["by_language"].as_object())
        && langs.len() > 1
    {
        out.push_str("search by language:");
        for (l, a) in langs {
            out.push_str(&format!(" {l} ({}) R@10 {} MRR@10 {};", a["n"], f(&a["R@10"]), f(&a["MRR@10"])));
        }
        out.pop();
        out.push('\n');
    }
    if let Some(u) = d["unavailable"].as_object() {
        for (m, why) in u {
            out.push_str(&format!("{m}: not measured, {}\n", why.as_str().unwrap_or("?")));
        }
    }
    out
}
