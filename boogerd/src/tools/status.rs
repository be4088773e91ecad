//! `status`: the daemon, the project's index (counts, Merkle root, progress, problems), and
//! every registered project.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use booger_proto::answers::{
    DaemonFacts, Embed, EmbedTier, Facts, GrepIndex, IndexContents, IndexStatus, Progress, ProjectLine, ProjectStatus,
    Skipped, Status, Watches,
};
use booger_proto::tools::args;
use serde_json::Value;

use super::call::{Call, Outcome};
use super::index::Listing;
use crate::base::sync::Recover;
use crate::base::time::human_duration;
use crate::engine::Daemon;
use crate::engine::index::IndexReport;
use crate::engine::project::Embedding;
use crate::engine::project::ProjectHandle;
use crate::engine::registry::Project;
use crate::store::{Store, StoreError};

pub(super) fn run(call: &Call, a: args::Status) -> Outcome {
    let daemon = call.daemon;
    let facts = daemon.facts();
    let mut text = daemon_text(daemon, &facts);
    let project = match call.project(a.on.project.as_deref()) {
        Ok(p) => {
            text.push_str(&format!("project: {} ({})\n", p.name, p.root.display()));
            let handle = daemon.projects.get(&p.root);
            let (index_text, index) = index_status(&p, &handle, a.all);
            text.push_str(&index_text);
            ProjectStatus { registered: true, name: Some(p.name), root: Some(p.root), index: Some(index), hint: None }
        }
        Err(why) => {
            text.push_str(&format!("project: none. {why}\n"));
            ProjectStatus { registered: false, name: None, root: None, index: None, hint: Some(why.to_string()) }
        }
    };
    let facts = facts.map_projects(|registered| projects(daemon, registered, &mut text));
    let counters = &daemon.watcher.counters;
    let watches = Watches {
        directories: daemon.watcher.watched_total() as u64,
        budget: daemon.watcher.budget() as u64,
        events: counters.events.load(Ordering::Relaxed),
        overflows: counters.overflows.load(Ordering::Relaxed),
    };
    #[cfg(not(feature = "team"))]
    let team = None;
    #[cfg(feature = "team")]
    let team = daemon.team.as_ref().map(|link| {
        let h = link.health();
        let state = match (h.reachable, &h.last_error) {
            (Some(true), _) => "connected".to_owned(),
            (Some(false), Some(e)) => format!("unreachable: {e}"),
            _ => "not used yet".to_owned(),
        };
        text.push_str(&format!("team:   {} ({state})\n", h.server));
        booger_proto::answers::TeamLink { server: h.server, reachable: h.reachable, error: h.last_error }
    });
    let status = Status { daemon: facts, watches, team, session: call.session.id.clone(), project };
    Ok(super::call::answer(text.trim_end(), &status))
}

/// The daemon's own lines: version, socket, data directory, memory.
fn daemon_text<P>(daemon: &Daemon, facts: &DaemonFacts<P>) -> String {
    let facts = &facts.daemon;
    let mut text = format!(
        "boogerd {} (pid {}, up {}, protocol {})\nsocket: {}\ndata:   {}\n",
        facts.version,
        facts.pid,
        human_duration(facts.uptime_s),
        facts.protocol,
        daemon.config.socket.display(),
        daemon.config.data_dir.display(),
    );
    let m = &facts.memory;
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    text.push_str(&format!(
        "memory: {:.0} MB resident, {} threads; warm indexes {:.1} MB in {} project(s) (budget {:.0} MB; released after {} idle)\n",
        mib(m.rss_bytes),
        m.threads,
        mib(m.warm_bytes),
        m.warm_projects,
        mib(m.budget_bytes),
        human_duration(m.idle_release_s),
    ));
    text
}

/// Every registered project, a line each (added to `text`), with its watch, size on disk
/// and warm memory.
fn projects(daemon: &Daemon, registered: Vec<Project>, text: &mut String) -> Vec<ProjectLine> {
    text.push_str(&format!("projects: {}\n", registered.len()));
    let mut out = Vec::new();
    for p in registered {
        let handle = daemon.projects.get(&p.root);
        let watch = handle.live.status();
        let disk = crate::base::storage::size_on_disk(&handle.index_dir);
        let warm = handle.resident_bytes() as u64;
        text.push_str(&format!(
            "  {:<20} {:<10} queue {:<4} index {:>7.1} MB  warm {:>6.1} MB  {}\n",
            p.name,
            watch["state"].as_str().unwrap_or("off"),
            watch["queue"],
            mb(disk),
            warm as f64 / f64::from(1 << 20),
            p.root.display(),
        ));
        out.push(ProjectLine {
            project: p,
            watch: Facts(watch),
            index_dir: handle.index_dir.clone(),
            size_on_disk: disk,
            warm_bytes: warm,
            idle_s: handle.idle_for().as_secs(),
        });
    }
    out
}

/// How many skipped files and problems a status answer lists without `all`: what a model
/// reads of an answer it may be handed whole (booger's own repository skips 2,255 files).
const LISTED: usize = 20;

fn index_status(p: &Project, handle: &Arc<ProjectHandle>, all: bool) -> (String, IndexStatus) {
    let mut t = String::new();
    let progress = progress(handle);
    if let Some(pr) = &progress {
        t.push_str(&format!(
            "indexing: {}/{} files ({:.0}%), {:.0} files/s, ETA {}\n",
            pr.done,
            pr.total,
            pr.percent,
            pr.files_per_s,
            human_duration(pr.eta_s),
        ));
    }
    if !crate::engine::project::root_present(&p.root) {
        t.push_str("index: the project directory is missing; booger resumes when it is back\n");
    }
    let watch = handle.live.status();
    t.push_str(&watch_line(&watch));
    handle.recover_if_damaged();
    let recovered = handle.recovered();
    if let Some(r) = &recovered {
        t.push_str(&format!(
            "index: found damaged at {} ({}); set aside as {} and rebuilt from the files\n",
            r.at,
            crate::base::text::clip(&r.error, 200),
            r.set_aside.display()
        ));
    }
    let mut status = IndexStatus {
        exists: false,
        error: None,
        dir: Some(handle.index_dir.clone()),
        progress,
        watch: Facts(watch),
        contents: None,
    };
    let store = match handle.existing_store() {
        Ok(Some(s)) => s,
        Ok(None) => {
            if status.progress.is_none() {
                t.push_str(&format!("index: none yet. Build it with `booger index {}`\n", p.root.display()));
            }
            return (t, status);
        }
        Err(e) => {
            t.push_str(&format!("index: cannot open: {e}\n"));
            status.error = Some(e.to_string());
            return (t, status);
        }
    };
    status.exists = true;
    let summary = match handle.is_indexing().then(|| store.last_summary()).flatten().map_or_else(|| store.summary(), Ok)
    {
        Ok(s) => s,
        Err(e) => {
            t.push_str(&format!("index: cannot read: {e}\n"));
            if e.is_corrupt() {
                handle.recover_if_damaged();
                t.push_str(
                    "index: set aside as damaged; it is being rebuilt from the files (ask `booger status` again)\n",
                );
            }
            status.error = Some(e.to_string());
            return (t, status);
        }
    };
    let (text, mut contents) = open_index_status(handle, &store, &summary, all);
    t.push_str(&text);
    contents.recovered = recovered.as_ref().map(Facts::of);
    status.contents = Some(contents);
    (t, status)
}

/// The status of an index that opened: its counts, tiers and the last run's lists.
fn open_index_status(
    handle: &Arc<ProjectHandle>,
    store: &Store,
    summary: &crate::store::Summary,
    all: bool,
) -> (String, IndexContents) {
    // Of the index now, not of the last full run: the watcher changes the index between runs.
    let (stats, root_hash) = (&summary.stats, &summary.root_hash);
    let last = store.meta("last_indexed_at").ok().flatten().unwrap_or_default();
    let disk = store.size_on_disk();
    let mut t = format!(
        "index: {} files, {} chunks, {:.1} MB source, {:.1} MB on disk in {}\n",
        stats.files,
        stats.chunks,
        mb(stats.source_bytes),
        mb(disk),
        handle.index_dir.display()
    );
    t.push_str(&format!("  languages: {}\n", counts(&stats.languages)));
    t.push_str(&format!("  kinds: {}\n", counts(&stats.kinds)));
    t.push_str(&format!("  root hash: {}\n  last indexed: {last}\n", &root_hash[..root_hash.len().min(16)]));
    let tiers = tiers(handle, store, &mut t);
    let lists = lists(handle, store, &stats.problems, stats.problems_total, all, &mut t);
    let contents = IndexContents {
        path: store.path().to_owned(),
        warm_bytes: handle.resident_bytes() as u64,
        files: stats.files,
        chunks: stats.chunks,
        source_bytes: stats.source_bytes,
        size_on_disk: disk,
        languages: stats.languages.clone(),
        kinds: stats.kinds.clone(),
        root_hash: root_hash.clone(),
        last_indexed_at: last,
        problems_total: stats.problems_total,
        ranking_index: tiers.ranking_index,
        grep_index: tiers.grep_index,
        embeddings: tiers.embeddings,
        eval: tiers.eval,
        calibration: tiers.calibration,
        last_report: lists.last_report,
        with_generated: lists.with_generated,
        problems: lists.problems,
        recovered: None,
    };
    (t, contents)
}

/// The tiers built after a run.
struct Tiers {
    ranking_index: String,
    grep_index: GrepIndex,
    embeddings: Option<Embed>,
    eval: Option<Facts>,
    calibration: Facts,
}

/// The tiers built after a run: ranking index, grep's trigram rows, embeddings, and the
/// last eval and calibration (their lines added to `t`).
fn tiers(handle: &Arc<ProjectHandle>, store: &Store, t: &mut String) -> Tiers {
    let ranking = handle.ranking_state(store);
    // Files a large run left for the background pass: grep reads them whole meanwhile.
    let grams_pending = store.grams_pending().unwrap_or(0);
    let grep_index = if grams_pending == 0 { "ready".to_owned() } else { format!("{grams_pending} files to go") };
    t.push_str(&format!("  ranking index: {ranking}\n  grep index: {grep_index}\n"));
    let embeddings = handle.embedding().and_then(|e| embedding_report(e, handle, store).ok());
    match &embeddings {
        Some(e) => t.push_str(&format!("  embeddings: {}\n", embedding_text(e))),
        None => t.push_str("  embeddings: off\n"),
    }
    let eval = super::eval::last(store);
    if let Some(e) = &eval {
        let search = &e["methods"]["search"]["all"];
        t.push_str(&format!(
            "  last eval: {} ({} queries): search R@10 {}, MRR@10 {}; `booger eval` for the rest\n",
            e["at"].as_str().unwrap_or("?"),
            e["queries"],
            search["R@10"],
            search["MRR@10"],
        ));
    }
    let calibration = crate::domain::search::confidence::Calibration::of(store);
    if calibration.is_calibrated() {
        t.push_str(&format!(
            "  calibrated {}: no good match below {}, hybrid semantic weight {} for change requests\n",
            calibration.at, calibration.threshold, calibration.semantic_weight
        ));
    }
    Tiers {
        ranking_index: ranking.to_owned(),
        grep_index: GrepIndex { ready: grams_pending == 0, pending_files: grams_pending },
        embeddings,
        eval: eval.map(Facts),
        calibration: Facts::of(&calibration),
    }
}

/// The last run's lists.
struct Lists {
    last_report: Option<Facts>,
    with_generated: bool,
    problems: Vec<Skipped>,
}

/// The last run's skipped files and the index's problems: the first [`LISTED`] of each
/// (all with `all`), with their counts (their lines added to `t`).
fn lists(
    handle: &Arc<ProjectHandle>,
    store: &Store,
    first_problems: &[(String, String)],
    problems_total: u64,
    all: bool,
    t: &mut String,
) -> Lists {
    // Only what the answer lists is copied: a whole report holds every skipped and set-aside
    // file (thousands in a repository with a fuzz corpus), and copying it was most of the
    // cost of a status call.
    let keep = if all { usize::MAX } else { LISTED };
    let trim = |r: &IndexReport| (r.trimmed(keep), r.skipped.len(), r.problems.len());
    let report = handle.last_report.lock().recover().as_ref().map(trim);
    let report = report.or_else(|| {
        let r = store.meta("last_report").ok().flatten().and_then(|s| serde_json::from_str::<IndexReport>(&s).ok())?;
        Some(trim(&r))
    });
    let (max, rest) = if all { (usize::MAX, "") } else { (LISTED, "`status --all` lists them") };
    let with_generated = crate::engine::index::with_generated(store).unwrap_or(false);
    if let Some((r, skipped_total, _)) = &report {
        t.push_str(&super::index::set_aside_line("  ", r, with_generated));
        let items = &r.skipped;
        super::index::list(t, "  ", "skipped", Listing { items, total: *skipped_total, max, rest });
    }
    // The stats keep the first problems by path; `all` reads every one.
    let every = if all { store.all_problems().ok() } else { None };
    let problems: Vec<Skipped> = every
        .as_deref()
        .unwrap_or(first_problems)
        .iter()
        .map(|(path, reason)| Skipped { path: path.clone(), reason: reason.clone() })
        .collect();
    let total = problems_total as usize;
    super::index::list(t, "  ", "indexed with problems", Listing { items: &problems, total, max, rest });
    // The last run's lists, cut as the text cuts them, with their counts.
    let last_report = report.map(|(r, skipped_total, problems_total)| {
        let mut v = Facts::of(&r);
        if let Some(o) = v.0.as_object_mut() {
            o.insert("skipped_total".into(), skipped_total.into());
            o.insert("problems_total".into(), problems_total.into());
        }
        v
    });
    let listed = if all { problems.len() } else { problems.len().min(LISTED) };
    let problems = problems.into_iter().take(listed).collect();
    Lists { last_report, with_generated, problems }
}

/// Each tier's coverage of the project, which tier answers, stale vectors, the last error.
/// The top-level `model`/`embedded`/`embeddable` are the best tier's: what embedding
/// converges to.
pub(super) fn embedding_report(e: &Embedding, handle: &Arc<ProjectHandle>, store: &Store) -> Result<Embed, StoreError> {
    let mut tiers = Vec::new();
    for t in &e.tiers {
        let c = store.coverage(t.id())?;
        tiers.push(EmbedTier {
            model: t.id().to_owned(),
            embedded: c.embedded,
            embeddable: c.embeddable,
            ready: handle.vectors.is_ready(t.id()),
        });
    }
    let best = tiers.last();
    Ok(Embed {
        model: best.map(|b| b.model.clone()),
        embedded: best.map(|b| b.embedded),
        embeddable: best.map(|b| b.embeddable),
        answering: e.answering(handle).id().to_owned(),
        stale: store.stale_vectors(&e.model_ids())?,
        running: handle.vectors.busy.load(Ordering::SeqCst),
        error: handle.vectors.last_error.lock().recover().clone(),
        problem: e.problem.clone(),
        tiers,
    })
}

/// `120 of 6400 chunks embedded with minilm-l6-… (2%), embedding now; static-… answers`.
pub(super) fn embedding_text(r: &Embed) -> String {
    let mut parts = Vec::new();
    for t in &r.tiers {
        let (done, all) = (t.embedded, t.embeddable);
        let pct = if all == 0 { 100.0 } else { 100.0 * done as f64 / all as f64 };
        parts.push(format!("{done} of {all} chunks embedded with {} ({pct:.0}%)", t.model));
    }
    let mut text = parts.join(", ");
    if r.running {
        text.push_str(", embedding now");
    }
    text.push_str(&format!("; {} answers", r.answering));
    if r.stale > 0 {
        text.push_str(&format!("; {} stale vectors of older models until these are complete", r.stale));
    }
    for (key, m) in [("problem", &r.problem), ("error", &r.error)] {
        if let Some(m) = m {
            text.push_str(&format!("\n  {key}: {m}"));
        }
    }
    text
}

/// `watch: watching 12 directories, queue 0, last change applied … (2 files in 8 ms)`.
fn watch_line(w: &Value) -> String {
    let mut t = format!(
        "watch: {}, {} directories, queue {}",
        w["state"].as_str().unwrap_or("off"),
        w["watched_dirs"],
        w["queue"]
    );
    if let Some(b) = w["last_change_applied"].as_object() {
        t.push_str(&format!(
            ", last change applied {} ({} files in {} ms)",
            b["at"].as_str().unwrap_or(""),
            b["changed"],
            b["ms"]
        ));
    }
    if w["overflows"].as_u64().unwrap_or(0) > 0 {
        t.push_str(&format!(", {} event overflows", w["overflows"]));
    }
    if let Some(r) = w["last_resurvey"].as_object() {
        t.push_str(&format!(
            "; {} re-surveys after lost events (last: {} stats, {} directories changed, {} ms)",
            w["resurveys"], r["statted"], r["changed_dirs"], r["ms"]
        ));
    }
    if let Some(b) = w["last_whole_walk"].as_object() {
        t.push_str(&format!("; {} whole walks (last: {} files in {} ms)", w["whole_walks"], b["surveyed"], b["ms"]));
    }
    if let Some(r) = w["reason"].as_str() {
        t.push_str(&format!("\nwatch note: {r}"));
    }
    t.push('\n');
    t
}

/// Live progress of a running index, or `None`.
fn progress(handle: &ProjectHandle) -> Option<Progress> {
    let p = super::progress::of_index(handle)?;
    let percent = if p.total > 0 { p.done as f64 * 100.0 / p.total as f64 } else { 0.0 };
    Some(Progress {
        done: p.done,
        total: p.total,
        percent,
        files_per_s: p.per_s.unwrap_or(0.0),
        eta_s: p.eta_s.unwrap_or(0),
    })
}

fn counts(map: &std::collections::BTreeMap<String, u64>) -> String {
    let mut v: Vec<(&String, &u64)> = map.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1_000_000.0
}
