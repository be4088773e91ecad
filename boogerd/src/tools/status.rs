//! `status`: the daemon, the project's index (counts, Merkle root, progress, problems), and
//! every registered project.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use booger_proto::tools::args;
use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

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

pub fn run(call: &Call, a: args::Status) -> Outcome {
    let daemon = call.daemon;
    let facts = daemon.facts();
    let mut text = daemon_text(daemon, &facts);
    let project_json = match call.project(a.on.project.as_deref()) {
        Ok(p) => {
            text.push_str(&format!("project: {} ({})\n", p.name, p.root.display()));
            let handle = daemon.projects.get(&p.root);
            let (index_text, index_json) = index_status(&p, &handle, a.all);
            text.push_str(&index_text);
            json!({ "name": p.name, "root": p.root, "registered": true, "index": index_json })
        }
        Err(why) => {
            text.push_str(&format!("project: none. {why}\n"));
            json!({ "registered": false, "hint": why.to_string() })
        }
    };
    let projects = projects(daemon, &facts, &mut text);
    let mut data = facts;
    data["projects"] = Value::Array(projects);
    let counters = &daemon.watcher.counters;
    data["watches"] = json!({
        "directories": daemon.watcher.watched_total(),
        "budget": daemon.watcher.budget(),
        "events": counters.events.load(Ordering::Relaxed),
        "overflows": counters.overflows.load(Ordering::Relaxed),
    });
    if let Some(link) = &daemon.team {
        let h = link.health();
        let state = match (h.reachable, &h.last_error) {
            (Some(true), _) => "connected".to_owned(),
            (Some(false), Some(e)) => format!("unreachable: {e}"),
            _ => "not used yet".to_owned(),
        };
        text.push_str(&format!("team:   {} ({state})\n", h.server));
        data["team"] = json!({ "server": h.server, "reachable": h.reachable, "error": h.last_error });
    }
    data["session"] = json!(call.session.id);
    data["project"] = project_json;
    Ok(ToolReply::ok(text.trim_end(), data))
}

/// The daemon's own lines: version, socket, data directory, memory.
fn daemon_text(daemon: &Daemon, facts: &Value) -> String {
    let mut text = format!(
        "boogerd {} (pid {}, up {}, protocol {})\nsocket: {}\ndata:   {}\n",
        facts["version"].as_str().unwrap_or("?"),
        facts["pid"],
        human_duration(facts["uptime_s"].as_u64().unwrap_or(0)),
        facts["protocol"],
        daemon.config.socket.display(),
        daemon.config.data_dir.display(),
    );
    let m = &facts["memory"];
    let mib = |k: &str| m[k].as_u64().unwrap_or(0) as f64 / f64::from(1 << 20);
    text.push_str(&format!(
        "memory: {:.0} MB resident, {} threads; warm indexes {:.1} MB in {} project(s) (budget {:.0} MB; released after {} idle)\n",
        mib("rss_bytes"),
        m["threads"],
        mib("warm_bytes"),
        m["warm_projects"],
        mib("budget_bytes"),
        human_duration(m["idle_release_s"].as_u64().unwrap_or(0)),
    ));
    text
}

/// Every registered project, a line each (added to `text`), with its watch, size on disk
/// and warm memory.
fn projects(daemon: &Daemon, facts: &Value, text: &mut String) -> Vec<Value> {
    let projects = facts["projects"].as_array().cloned().unwrap_or_default();
    text.push_str(&format!("projects: {}\n", projects.len()));
    let mut out = Vec::new();
    for p in &projects {
        let root = p["root"].as_str().unwrap_or("");
        let handle = daemon.projects.get(std::path::Path::new(root));
        let watch = handle.live.status();
        let disk = crate::base::storage::size_on_disk(&handle.index_dir);
        let warm = handle.resident_bytes();
        text.push_str(&format!(
            "  {:<20} {:<10} queue {:<4} index {:>7.1} MB  warm {:>6.1} MB  {root}\n",
            p["name"].as_str().unwrap_or(""),
            watch["state"].as_str().unwrap_or("off"),
            watch["queue"],
            mb(disk),
            warm as f64 / f64::from(1 << 20),
        ));
        let mut p = p.clone();
        p["watch"] = watch;
        p["index_dir"] = json!(handle.index_dir);
        p["size_on_disk"] = json!(disk);
        p["warm_bytes"] = json!(warm);
        p["idle_s"] = json!(handle.idle_for().as_secs());
        out.push(p);
    }
    out
}

/// How many skipped files and problems a status answer lists without `all`: what a model
/// reads of an answer it may be handed whole (booger's own repository skips 2,255 files).
const LISTED: usize = 20;

/// The first [`LISTED`] of `items` (all of them with `all`), as JSON.
fn listed<T: serde::Serialize>(items: &[T], all: bool) -> Value {
    json!(if all { items } else { &items[..items.len().min(LISTED)] })
}

fn index_status(p: &Project, handle: &std::sync::Arc<ProjectHandle>, all: bool) -> (String, Value) {
    let mut t = String::new();
    let progress = progress(handle);
    if let Some(pr) = &progress {
        t.push_str(&format!(
            "indexing: {}/{} files ({:.0}%), {:.0} files/s, ETA {}\n",
            pr["done"],
            pr["total"],
            pr["percent"].as_f64().unwrap_or(0.0),
            pr["files_per_s"].as_f64().unwrap_or(0.0),
            human_duration(pr["eta_s"].as_u64().unwrap_or(0)),
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
    let store = match handle.existing_store() {
        Ok(Some(s)) => s,
        Ok(None) => {
            if progress.is_none() {
                t.push_str(&format!("index: none yet. Build it with `booger index {}`\n", p.root.display()));
            }
            return (t, json!({ "exists": false, "dir": handle.index_dir, "progress": progress, "watch": watch }));
        }
        Err(e) => {
            t.push_str(&format!("index: cannot open: {e}\n"));
            return (t, json!({ "exists": false, "error": e.to_string(), "progress": progress, "watch": watch }));
        }
    };
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
            return (t, json!({ "exists": true, "error": e.to_string(), "progress": progress, "watch": watch }));
        }
    };
    let (text, json) = open_index_status(handle, &store, &summary, all);
    t.push_str(&text);
    let mut json = json;
    json["progress"] = json!(progress);
    json["watch"] = watch;
    json["recovered"] = json!(recovered);
    (t, json)
}

/// The status of an index that opened: its counts, tiers and the last run's lists.
fn open_index_status(
    handle: &std::sync::Arc<ProjectHandle>,
    store: &Store,
    summary: &crate::store::Summary,
    all: bool,
) -> (String, Value) {
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
    let (tiers_text, tiers) = tiers(handle, store);
    t.push_str(&tiers_text);
    let (lists_text, mut json) = lists(handle, store, &stats.problems, stats.problems_total, all);
    t.push_str(&lists_text);
    let more = json!({
        "exists": true,
        "path": store.path(),
        "dir": handle.index_dir,
        "warm_bytes": handle.resident_bytes(),
        "files": stats.files,
        "chunks": stats.chunks,
        "source_bytes": stats.source_bytes,
        "size_on_disk": disk,
        "languages": stats.languages,
        "kinds": stats.kinds,
        "root_hash": root_hash,
        "last_indexed_at": last,
        "problems_total": stats.problems_total,
    });
    for (k, v) in more.as_object().into_iter().flatten().chain(tiers.as_object().into_iter().flatten()) {
        json[k] = v.clone();
    }
    (t, json)
}

/// The tiers built after a run: ranking index, grep's trigram rows, embeddings, and the
/// last eval and calibration.
fn tiers(handle: &std::sync::Arc<ProjectHandle>, store: &Store) -> (String, Value) {
    let warm = handle.warm_state(store);
    // Files a large run left for the background pass: grep reads them whole meanwhile.
    let grams_pending = store.grams_pending().unwrap_or(0);
    let grep_index = if grams_pending == 0 { "ready".to_owned() } else { format!("{grams_pending} files to go") };
    let mut t = format!("  ranking index: {warm}\n  grep index: {grep_index}\n");
    let embeddings = match handle.embedding() {
        Some(e) => embedding_report(e, handle, store).unwrap_or(Value::Null),
        None => Value::Null,
    };
    if embeddings.is_null() {
        t.push_str("  embeddings: off\n");
    } else {
        t.push_str(&format!("  embeddings: {}\n", embedding_text(&embeddings)));
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
    let json = json!({
        "ranking_index": warm,
        "grep_index": { "ready": grams_pending == 0, "pending_files": grams_pending },
        "embeddings": embeddings,
        "eval": eval,
        "calibration": calibration,
    });
    (t, json)
}

/// The last run's skipped files and the index's problems: the first [`LISTED`] of each
/// (all with `all`), with their counts.
fn lists(
    handle: &std::sync::Arc<ProjectHandle>,
    store: &Store,
    first_problems: &[(String, String)],
    problems_total: u64,
    all: bool,
) -> (String, Value) {
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
    let mut t = String::new();
    let (max, rest) = if all { (usize::MAX, "") } else { (LISTED, "`status --all` lists them") };
    let with_generated = crate::engine::index::with_generated(store).unwrap_or(false);
    if let Some((r, skipped_total, _)) = &report {
        t.push_str(&super::index::set_aside_line("  ", r, with_generated));
        let items = &r.skipped;
        super::index::list(&mut t, "  ", "skipped", Listing { items, total: *skipped_total, max, rest });
    }
    // The stats keep the first problems by path; `all` reads every one.
    let every = if all { store.all_problems().ok() } else { None };
    let problems: Vec<crate::engine::index::walk::Skipped> = every
        .as_deref()
        .unwrap_or(first_problems)
        .iter()
        .map(|(path, reason)| crate::engine::index::walk::Skipped { path: path.clone(), reason: reason.clone() })
        .collect();
    let total = problems_total as usize;
    super::index::list(&mut t, "  ", "indexed with problems", Listing { items: &problems, total, max, rest });
    // The last run's lists, cut as the text cuts them, with their counts.
    let report = report.map(|(r, skipped_total, problems_total)| {
        let mut v = json!(r);
        v["skipped_total"] = json!(skipped_total);
        v["problems_total"] = json!(problems_total);
        v
    });
    (t, json!({ "last_report": report, "with_generated": with_generated, "problems": listed(&problems, all) }))
}

/// Each tier's coverage of the project, which tier answers, stale vectors, the last error.
/// The top-level `model`/`embedded`/`embeddable` are the best tier's: what embedding
/// converges to.
pub fn embedding_report(e: &Embedding, handle: &Arc<ProjectHandle>, store: &Store) -> Result<Value, StoreError> {
    let mut tiers = Vec::new();
    for t in &e.tiers {
        let c = store.coverage(t.id())?;
        tiers.push(json!({
            "model": t.id(),
            "embedded": c.embedded,
            "embeddable": c.embeddable,
            "ready": handle.vectors.is_ready(t.id()),
        }));
    }
    let best = tiers.last().cloned().unwrap_or(Value::Null);
    Ok(json!({
        "model": best["model"],
        "embedded": best["embedded"],
        "embeddable": best["embeddable"],
        "answering": e.answering(handle).id(),
        "tiers": tiers,
        "stale": store.stale_vectors(&e.model_ids())?,
        "running": handle.vectors.busy.load(Ordering::SeqCst),
        "error": handle.vectors.last_error.lock().recover().clone(),
        "problem": e.problem,
    }))
}

/// `120 of 6400 chunks embedded with minilm-l6-… (2%), embedding now; static-… answers`.
pub fn embedding_text(r: &Value) -> String {
    let mut parts = Vec::new();
    for t in r["tiers"].as_array().into_iter().flatten() {
        let (done, all) = (t["embedded"].as_u64().unwrap_or(0), t["embeddable"].as_u64().unwrap_or(0));
        let pct = if all == 0 { 100.0 } else { 100.0 * done as f64 / all as f64 };
        parts.push(format!("{done} of {all} chunks embedded with {} ({pct:.0}%)", t["model"].as_str().unwrap_or("?")));
    }
    let mut text = parts.join(", ");
    if r["running"] == true {
        text.push_str(", embedding now");
    }
    text.push_str(&format!("; {} answers", r["answering"].as_str().unwrap_or("?")));
    if r["stale"].as_u64().unwrap_or(0) > 0 {
        text.push_str(&format!("; {} stale vectors of older models until these are complete", r["stale"]));
    }
    for key in ["problem", "error"] {
        if let Some(m) = r[key].as_str() {
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
fn progress(handle: &ProjectHandle) -> Option<Value> {
    let p = super::progress::of_index(handle)?;
    let percent = if p.total > 0 { p.done as f64 * 100.0 / p.total as f64 } else { 0.0 };
    let (rate, eta) = (p.per_s.unwrap_or(0.0), p.eta_s.unwrap_or(0));
    Some(json!({ "done": p.done, "total": p.total, "percent": percent, "files_per_s": rate, "eta_s": eta }))
}

fn counts(map: &std::collections::BTreeMap<String, u64>) -> String {
    let mut v: Vec<(&String, &u64)> = map.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1_000_000.0
}
