//! `eval`: how well booger's searches find, on this project, what its own commits changed.
//!
//! The queries come from the project's history ([`mine`]); each is asked of `search`,
//! `semantic-search` and `hybrid-search` through their handlers, as an agent would ask, and
//! scored ([`measure`]) beside a grep ranking ([`baseline`]). One evaluation runs at a time,
//! on a thread of its own at low priority, so it never holds a slot other calls need; a call
//! while it runs answers with its progress after a short wait. The result is kept per index
//! generation, in memory and in the index's `meta` (for `status`, also after a restart).

mod baseline;
mod calibrate;
mod measure;
pub(crate) mod mine;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use booger_proto::answers::{Eval, EvalCalibration, Heldout, History, MethodFigures};
use booger_proto::tools::args;
use booger_proto::wire::ToolReply;
use serde_json::Value;

use super::call::{Call, Outcome, Session, ToolError, answer};
use crate::base::sync::Recover;
use crate::domain::git::command::Git;
use crate::domain::search::confidence::{self, Calibration, DEFAULT_SEMANTIC_WEIGHT, round};
use crate::engine::Daemon;
use crate::store::Store;
use measure::{Hit, Scored, Tally, files_of, score};

/// How long a call waits for a running evaluation before answering with its progress.
const WAIT: Duration = Duration::from_secs(8);
/// Fewer queries than this and the figures would say more about chance than about search.
const TOO_FEW: usize = 10;
/// The grep ranking reads at most this much of the project's text.
const BASELINE_BYTES: usize = 256 << 20;
/// The key of the last result in the index's `meta`.
pub(super) const META_KEY: &str = "eval";

enum State {
    Running { progress: Arc<(AtomicUsize, AtomicUsize)> },
    Done { generation: u64, limits: (usize, usize), summary: Arc<Eval>, details: Arc<Value> },
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

pub(super) fn run(call: &Call, a: args::Eval) -> Outcome {
    let snap = call.snapshot(a.on.project.as_deref())?;
    let (project, store) = (snap.project, snap.store);
    let limits = (a.commits.unwrap_or(2000), a.queries.unwrap_or(150));
    let generation = store.content_generation();
    let e = evaluations();
    let mut states = e.states.lock().recover();
    let current =
        |s: &State| matches!(s, State::Done { generation: g, limits: l, .. } if *g == generation && *l == limits);
    if !states.get(&project.root).is_some_and(|s| current(s) || matches!(s, State::Running { .. })) {
        if states.values().any(|s| matches!(s, State::Running { .. })) {
            return Err(ToolError::Refused(
                "eval: another project is being evaluated; call again in a minute".to_owned(),
            ));
        }
        let progress = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
        states.insert(project.root.clone(), State::Running { progress: progress.clone() });
        start(call.daemon.arc(), &project, store, (generation, limits), progress);
    }
    let deadline = Instant::now() + WAIT;
    loop {
        match states.get(&project.root) {
            Some(State::Done { summary, details: listed, .. }) => {
                let mut data = summary.as_ref().clone();
                if a.details {
                    data.details = Some(listed.as_ref().clone());
                }
                return Ok(answer(text(&data), &data));
            }
            Some(State::Failed(why)) => {
                let why = why.clone();
                states.remove(&project.root);
                return Err(ToolError::Refused(format!("eval {}: {why}", project.name)));
            }
            Some(State::Running { progress }) if Instant::now() >= deadline => {
                return Ok(still_running(&project.name, progress));
            }
            _ => {}
        }
        let left = deadline.saturating_duration_since(Instant::now());
        states = e.changed.wait_timeout(states, left).recover().0;
    }
}

/// Runs the evaluation of `project` on a thread of its own, at a lower priority; its
/// result (or failure) replaces its running state when done.
fn start(
    daemon: Arc<crate::engine::Daemon>,
    project: &crate::engine::registry::Project,
    store: Arc<Store>,
    (generation, limits): (u64, (usize, usize)),
    progress: Arc<(AtomicUsize, AtomicUsize)>,
) {
    let (root, name) = (project.root.clone(), project.name.clone());
    std::thread::Builder::new()
        .name("booger-eval".to_owned())
        .spawn(move || {
            crate::base::threads::lower_priority();
            let outcome = evaluate(&daemon, &root, &name, &store, limits, &progress);
            let e = evaluations();
            let state = match outcome {
                Ok((summary, details)) => {
                    let kept = serde_json::to_string(&summary).unwrap_or_default();
                    if let Err(err) = store.set_meta(&[(META_KEY, &kept)]) {
                        tracing::warn!(error = %err, "eval: could not keep the result in the index");
                    }
                    State::Done { generation, limits, summary: Arc::new(summary), details: Arc::new(details) }
                }
                Err(why) => State::Failed(why),
            };
            e.states.lock().recover().insert(root, state);
            e.changed.notify_all();
        })
        .expect("spawn the eval thread");
}

/// The answer while the evaluation runs: how far it got, and to call again.
fn still_running(name: &str, progress: &(AtomicUsize, AtomicUsize)) -> ToolReply {
    let (done, total) = (progress.0.load(Ordering::Relaxed), progress.1.load(Ordering::Relaxed));
    let data = Eval {
        project: name.to_owned(),
        running: true,
        done: Some(done as u64),
        queries: total as u64,
        ..Default::default()
    };
    let text = if total == 0 {
        format!("eval {name}: reading the history; call eval again for the result")
    } else {
        format!("eval {name}: {done} of {total} queries asked; call eval again for the result")
    };
    ToolReply::still_running(text, serde_json::to_value(&data).unwrap_or_default())
}

/// The last result kept in `store`, for `status` and the status page.
pub(crate) fn last(store: &Store) -> Option<Value> {
    store.cached_meta(META_KEY).ok().flatten().and_then(|s| serde_json::from_str(&s).ok())
}

/// Mines the history, asks every query of every method, calibrates and sums up:
/// (summary, details).
fn evaluate(
    daemon: &Daemon,
    root: &Path,
    name: &str,
    store: &Arc<Store>,
    limits: (usize, usize),
    progress: &(AtomicUsize, AtomicUsize),
) -> Result<(Eval, Value), String> {
    let started = Instant::now();
    let paths: Vec<String> = store.hashes().map_err(|e| e.to_string())?.into_iter().map(|(p, _)| p).collect();
    let head = AtHead { store, paths: paths.iter().cloned().collect() };
    let mined = mine::mine(&Git::new(root), &head, limits.0, limits.1).map_err(|e| e.to_string())?;
    let n = mined.queries.len();
    progress.1.store(n, Ordering::Relaxed);
    let mut summary = Eval {
        project: name.to_owned(),
        running: false,
        generation: Some(store.content_generation()),
        at: Some(crate::base::time::now_rfc3339()),
        commits: Some(limits.0 as u64),
        history: Some(History {
            scanned: mined.scanned as u64,
            shallow: mined.shallow,
            skipped: mined.skipped.clone(),
        }),
        queries: n as u64,
        ..Default::default()
    };
    let details = serde_json::to_value(&mined.queries).unwrap_or(Value::Null);
    if n < TOO_FEW {
        summary.message = Some(too_little_history(n, mined.scanned, mined.shallow));
    }
    if n == 0 {
        summary.took_s = Some(started.elapsed().as_secs_f64());
        return Ok((summary, details));
    }
    let corpus = baseline::Corpus::new(read_texts(root, &paths));
    let asker = Asker {
        daemon,
        session: Session {
            id: "eval".to_owned(),
            project: Some(root.to_owned()),
            register: false,
            shell: false,
            measuring: true,
            read_only: false,
        },
        semantic: daemon.projects.embedding().is_some(),
    };
    let mut asked: Vec<Asked> = Vec::with_capacity(n);
    let mut grep = Tally::default();
    for (i, q) in mined.queries.iter().enumerate() {
        asked.push(asker.ask(q));
        let t = Instant::now();
        let files: Vec<String> = corpus.rank(&q.subject, 10).into_iter().map(str::to_owned).collect();
        let mut s = score(q, &files, &[], t.elapsed());
        s.fn10 = None; // files only: no lines to overlap a function with
        grep.add(q.language, s);
        progress.0.store(i + 1, Ordering::Relaxed);
    }
    // Calibrate on the older half (the queries come newest first), validate on the newer.
    let split = n / 2;
    let (newer, older) = (&asked[..split], &asked[split..]);
    let calibration = (older.len() >= calibrate::TOO_FEW).then(|| {
        let ranking = daemon.projects.get(root).ranking_index(store);
        calibrate_on(&asker, older, newer, ranking.as_deref())
    });
    // Hybrid search as it answers from now on: at the calibrated weight.
    let weight = calibration.as_ref().map_or(DEFAULT_SEMANTIC_WEIGHT, |(c, _)| c.semantic_weight);
    summary.methods = Some(methods(&asker, &mined.queries, &asked, weight, grep));
    if !asker.semantic {
        let off = "embeddings are off (boogerd --no-embed)".to_owned();
        summary.unavailable =
            Some([("semantic-search".to_owned(), off.clone()), ("hybrid-search".to_owned(), off)].into());
    }
    summary.calibration = Some(kept(store, calibration));
    summary.took_s = Some((started.elapsed().as_secs_f64() * 10.0).round() / 10.0);
    Ok((summary, details))
}

/// Each method's figures over the mined queries, hybrid search at `weight`, beside the grep
/// ranking's.
fn methods(
    asker: &Asker<'_>,
    queries: &[mine::Query],
    asked: &[Asked],
    weight: f64,
    grep: Tally,
) -> BTreeMap<String, MethodFigures> {
    let mut tallies: Vec<(&str, Tally)> =
        ["search", "semantic-search", "hybrid-search"].into_iter().map(|m| (m, Tally::default())).collect();
    for (q, a) in queries.iter().zip(asked) {
        tallies[0].1.add(q.language, a.lexical);
        if let Some(s) = a.semantic {
            tallies[1].1.add(q.language, s);
            tallies[2].1.add(q.language, asker.hybrid(q, weight));
        }
    }
    tallies.push(("grep-rank", grep));
    tallies.iter().filter(|(_, t)| !t.is_empty()).map(|(m, t)| ((*m).to_owned(), t.summary())).collect()
}

/// Why a project with `n` queries (mined from `scanned` commits) is not measured.
fn too_little_history(n: usize, scanned: usize, shallow: bool) -> String {
    format!(
        "too little history to measure: {n} quer{} from {scanned} commit(s){}; a query needs a non-merge commit \
         that changes 1-{} source files and has a descriptive subject",
        if n == 1 { "y" } else { "ies" },
        if shallow { " (a shallow clone: `git fetch --unshallow` brings the rest)" } else { "" },
        mine::MAX_FILES,
    )
}

/// The calibration kept in the index for search to use, as the summary shows it (or the
/// defaults, and why they hold).
fn kept(store: &Store, calibration: Option<(Calibration, calibrate::Validation)>) -> EvalCalibration {
    match calibration {
        Some((c, v)) => {
            if let Err(err) = store.set_meta(&[(confidence::META_KEY, &serde_json::to_string(&c).unwrap_or_default())])
            {
                tracing::warn!(error = %err, "eval: could not keep the calibration in the index");
            }
            EvalCalibration {
                threshold: c.threshold,
                semantic_weight: c.semantic_weight,
                validation: Some(v),
                message: None,
            }
        }
        None => EvalCalibration {
            threshold: confidence::DEFAULT_THRESHOLD,
            semantic_weight: DEFAULT_SEMANTIC_WEIGHT,
            validation: None,
            message: Some(format!("the defaults hold: calibrating needs {} queries or more", 2 * calibrate::TOO_FEW)),
        },
    }
}

/// The calibration the `older` queries make, and how it does on the `newer` ones. `ranking`
/// (the ranking index) tells which English words the project speaks of.
fn calibrate_on(
    asker: &Asker,
    older: &[Asked],
    newer: &[Asked],
    ranking: Option<&crate::domain::search::ranking_index::RankingIndex>,
) -> (Calibration, calibrate::Validation) {
    // A word in more than one chunk in 500 is something the project speaks of.
    let known =
        |w: &str| ranking.is_some_and(|p| p.coverage(&[w.to_owned()], &[])[0].chunks > (p.chunks() / 500).max(2));
    let negatives = |seed| -> Vec<f64> {
        calibrate::foreign_queries(FOREIGN, seed, known).iter().map(|q| asker.confidence(q)).collect()
    };
    let per_weight: Vec<Vec<(f64, f64)>> = if asker.semantic {
        (0..calibrate::WEIGHTS.len()).map(|w| older.iter().map(|a| a.hybrid[w]).collect()).collect()
    } else {
        Vec::new()
    };
    let weight = if asker.semantic { calibrate::choose_weight(&per_weight) } else { DEFAULT_SEMANTIC_WEIGHT };
    let weights_tried = calibrate::WEIGHTS
        .iter()
        .zip(&per_weight)
        .map(|(w, s)| (*w, round(calibrate::value(s)), round(calibrate::paired_gain(&per_weight[0], s).1)))
        .collect();
    let positives: Vec<f64> = older.iter().map(|a| a.confidence).collect();
    let threshold = calibrate::choose_threshold(&positives);
    let at = |w: f64| calibrate::WEIGHTS.iter().position(|x| (*x - w).abs() < 1e-9);
    let mean = |f: &dyn Fn(&Asked) -> Option<(f64, f64)>| -> Option<Heldout> {
        let v: Vec<(f64, f64)> = newer.iter().filter_map(f).collect();
        let k = v.len() as f64;
        (!v.is_empty()).then(|| Heldout {
            r10: round(v.iter().map(|x| x.0).sum::<f64>() / k),
            mrr10: round(v.iter().map(|x| x.1).sum::<f64>() / k),
        })
    };
    let heldout = [
        ("search", mean(&|a| Some((a.lexical.r10, a.lexical.mrr)))),
        ("semantic-search", mean(&|a| a.semantic.map(|s| (s.r10, s.mrr)))),
        ("hybrid-search", mean(&|a| at(weight).and_then(|w| a.hybrid.get(w).copied()))),
        (
            "hybrid-search at the default weight",
            mean(&|a| at(DEFAULT_SEMANTIC_WEIGHT).and_then(|w| a.hybrid.get(w).copied())),
        ),
    ]
    .into_iter()
    .map(|(m, h)| (m.to_owned(), h))
    .collect();
    let validation = calibrate::Validation {
        calibrated_on: older.len() as u64,
        weights_tried,
        validated_on: newer.len() as u64,
        subjects_flagged: round(calibrate::flagged(&newer.iter().map(|a| a.confidence).collect::<Vec<_>>(), threshold)),
        foreign_flagged: round(calibrate::flagged(&negatives(FOREIGN_SEED), threshold)),
        heldout,
    };
    (
        Calibration {
            threshold: round(threshold),
            semantic_weight: weight,
            at: crate::base::time::now_rfc3339(),
            queries: older.len(),
        },
        validation,
    )
}

/// Foreign queries asked to check the threshold.
const FOREIGN: usize = 50;
const FOREIGN_SEED: u64 = 0x5eed_0001;

/// What one query got: lexical and semantic figures, hybrid's (R@10, MRR@10) at each of
/// [`calibrate::WEIGHTS`], and the lexical answer's confidence score.
struct Asked {
    lexical: Scored,
    semantic: Option<Scored>,
    hybrid: Vec<(f64, f64)>,
    confidence: f64,
}

/// Asks queries through the tools' own handlers, as an agent would.
struct Asker<'a> {
    daemon: &'a Daemon,
    session: Session,
    semantic: bool,
}

/// Which of the searches eval asks.
#[derive(Clone, Copy)]
enum Ranking {
    Lexical,
    Semantic,
    /// Hybrid search at this semantic weight.
    Hybrid(f64),
}

/// What an answer lists: chunks, or files (`files_with_matches`).
#[derive(Clone, Copy)]
enum Shape {
    Chunks,
    Files,
}

impl Asker<'_> {
    /// The first ten of `ranking`'s answer to `query`, through the tool's own handler.
    fn call(&self, ranking: Ranking, query: &str, shape: Shape) -> (Value, Duration) {
        let search = args::Search {
            query: args::Query {
                query: query.to_owned(),
                output_mode: matches!(shape, Shape::Files).then_some(args::OutputMode::FilesWithMatches),
                max_lines: None,
                filters: args::Filters::default(),
                paging: args::Paging { head_limit: Some(10), ..args::Paging::default() },
            },
            on: args::On::default(),
        };
        let call = Call::new(self.daemon, &self.session);
        let t = Instant::now();
        let reply = match ranking {
            Ranking::Lexical => super::search::run(&call, search),
            Ranking::Semantic => super::semantic::semantic_search(&call, search),
            Ranking::Hybrid(weight) => super::semantic::hybrid_search(
                &call,
                args::Hybrid { search, fusion: None, k: None, semantic_weight: Some(weight), alpha: None },
            ),
        };
        (reply.map(|r| r.data).unwrap_or_default(), t.elapsed())
    }

    fn ask(&self, q: &mine::Query) -> Asked {
        let (ranked, _) = self.call(Ranking::Lexical, &q.subject, Shape::Files);
        let (chunks, took) = self.call(Ranking::Lexical, &q.subject, Shape::Chunks);
        let lexical = score(q, &files_of(&hits(&ranked)), &hits(&chunks), took);
        let confidence = chunks["confidence_score"].as_f64().unwrap_or(0.0);
        let (mut semantic, mut hybrid) = (None, Vec::new());
        if self.semantic {
            let (ranked, _) = self.call(Ranking::Semantic, &q.subject, Shape::Files);
            let (chunks, took) = self.call(Ranking::Semantic, &q.subject, Shape::Chunks);
            semantic = Some(score(q, &files_of(&hits(&ranked)), &hits(&chunks), took));
            for &w in calibrate::WEIGHTS {
                let (ranked, _) = self.call(Ranking::Hybrid(w), &q.subject, Shape::Files);
                let s = score(q, &files_of(&hits(&ranked)), &[], Duration::ZERO);
                hybrid.push((s.r10, s.mrr));
            }
        }
        Asked { lexical, semantic, hybrid, confidence }
    }

    /// Hybrid search at `weight`: files for R and MRR, chunks for Fn@10 and latency.
    fn hybrid(&self, q: &mine::Query, weight: f64) -> measure::Scored {
        let (ranked, _) = self.call(Ranking::Hybrid(weight), &q.subject, Shape::Files);
        let (chunks, took) = self.call(Ranking::Hybrid(weight), &q.subject, Shape::Chunks);
        score(q, &files_of(&hits(&ranked)), &hits(&chunks), took)
    }

    /// The confidence score search gives `query`.
    fn confidence(&self, query: &str) -> f64 {
        self.call(Ranking::Lexical, query, Shape::Chunks).0["confidence_score"].as_f64().unwrap_or(0.0)
    }
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
        let bytes = match crate::base::repo_file::read(&root.join(p), budget as u64) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => break, // past the budget
            Err(_) => continue,
        };
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

    fn chunks(&self, path: &str) -> Vec<crate::source::chunk::Chunk> {
        self.store.chunks_of(path).unwrap_or_default()
    }
}

/// The summary as a table.
fn text(d: &Eval) -> String {
    let history = d.history.clone().unwrap_or_default();
    let mut out = format!(
        "eval of {}: {} queries from {} commits{}, {} s\n",
        d.project,
        d.queries,
        history.scanned,
        if history.shallow { " (a shallow clone)" } else { "" },
        d.took_s.unwrap_or(0.0),
    );
    if let Some(m) = &d.message {
        out.push_str(&format!("{m}\n"));
    }
    let Some(methods) = &d.methods else { return out };
    out.push_str(&format!(
        "{:<16} {:>6} {:>6} {:>7} {:>6} {:>8}\n",
        "method", "R@1", "R@10", "MRR@10", "Fn@10", "p50 ms"
    ));
    let f = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |x| format!("{x:.3}"));
    for (m, s) in methods {
        let a = &s.all;
        out.push_str(&format!(
            "{m:<16} {:>6} {:>6} {:>7} {:>6} {:>8}\n",
            f(Some(a.r1)),
            f(Some(a.r10)),
            f(Some(a.mrr10)),
            f(a.fn10),
            a.p50_ms.map_or_else(|| "-".to_owned(), |x| format!("{x:.1}"))
        ));
    }
    if let Some(langs) = methods.get("search").map(|s| &s.by_language)
        && langs.len() > 1
    {
        out.push_str("search by language:");
        for (l, a) in langs {
            out.push_str(&format!(" {l} ({}) R@10 {} MRR@10 {};", a.n, f(Some(a.r10)), f(Some(a.mrr10))));
        }
        out.pop();
        out.push('\n');
    }
    match &d.calibration {
        Some(EvalCalibration { message: Some(m), .. }) => out.push_str(&format!("calibration: {m}\n")),
        Some(c) => {
            if let Some(v) = &c.validation {
                out.push_str(&format!(
                    "calibrated on the {} older queries: no-good-match threshold {}, hybrid semantic weight {} for change requests\n",
                    v.calibrated_on, c.threshold, c.semantic_weight
                ));
                let pct = |x: f64| format!("{:.0}%", x * 100.0);
                out.push_str(&format!(
                    "validated on the {} newer ones: {} of their subjects flagged, {} of foreign-word queries flagged\n",
                    v.validated_on,
                    pct(v.subjects_flagged),
                    pct(v.foreign_flagged)
                ));
                let parts: Vec<String> = v
                    .heldout
                    .iter()
                    .filter_map(|(m, s)| s.map(|s| format!("{m} {}/{}", f(Some(s.r10)), f(Some(s.mrr10)))))
                    .collect();
                out.push_str(&format!("newer queries, R@10/MRR@10: {}\n", parts.join(", ")));
            }
        }
        None => {}
    }
    for (m, why) in d.unavailable.iter().flatten() {
        out.push_str(&format!("{m}: not measured, {why}\n"));
    }
    out
}
