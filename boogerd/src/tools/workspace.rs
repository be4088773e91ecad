//! `workspace-search`: one query over every registered project, ranked together.

use std::collections::HashMap;

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, filters};
use crate::domain::search::files::{self, FileHit};
use crate::domain::search::format::{self, Mode};
use crate::domain::search::postings::Postings;
use crate::domain::search::{Context, Hit};
use crate::engine::Daemon;
use crate::store::{Store, StoreError};

/// Projects searched at the same time.
const CONCURRENCY: usize = 10;

/// A project's ranking index, when it is built and current.
type Warm = Option<std::sync::Arc<Postings>>;

/// One project's answer: its name, index, ranking index and hits.
type Searched = (String, std::sync::Arc<Store>, Warm, Vec<Hit>);

pub fn run(daemon: &Daemon, _session: &Session, args: &Value) -> ToolReply {
    let query = args.get("query").and_then(Value::as_str).unwrap_or_default();
    let f = filters(args);
    let projects = daemon.registry.read().expect("registry lock").projects().to_vec();
    if projects.is_empty() {
        return ToolReply::ok(
            "No projects registered. Add some with `booger projects add PATH`.",
            json!({ "results": [] }),
        );
    }
    let mut stores = Vec::new();
    let mut unindexed = Vec::new();
    for p in &projects {
        let handle = daemon.projects.get(&p.root);
        match handle.existing_store() {
            Ok(Some(s)) => {
                super::answering_from(&p.name, &handle, &s);
                let warm = handle.warm(&s);
                stores.push((p.name.clone(), s, warm));
            }
            _ => unindexed.push(p.name.clone()),
        }
    }
    let page = match super::page(args, 10, 40) {
        Ok(p) => p,
        Err(reply) => return reply,
    };
    // A project's hit in the merged top `need` is in its own top `need`.
    let need = page.reach();
    // Bounded concurrency: at most CONCURRENCY projects at once.
    let mut per_project: Vec<Searched> = Vec::new();
    for group in stores.chunks(CONCURRENCY) {
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = group
                .iter()
                .map(|(name, store, warm)| {
                    let f = &f;
                    s.spawn(move || {
                        let hits =
                            crate::domain::search::search(store, warm.as_deref(), query, f, &Context::default(), need);
                        (name.clone(), store.clone(), warm.clone(), hits)
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        for (name, store, warm, hits) in results {
            match hits {
                Ok(h) => per_project.push((name, store, warm, h)),
                Err(e) => tracing::warn!(project = %name, error = %e, "workspace-search: project failed"),
            }
        }
    }
    // One ranking; each hit tagged with its project, ids made unique across projects.
    let mut all: Vec<(usize, Hit)> = Vec::new();
    for (pi, (name, _, _, hits)) in per_project.iter().enumerate() {
        for h in hits {
            let mut h = h.clone();
            h.chunk.path = format!("{name}:{}", h.chunk.path);
            all.push((pi, h));
        }
    }
    all.sort_by(|a, b| b.1.score.total_cmp(&a.1.score));
    let mode = Mode::parse(args.get("output_mode").and_then(Value::as_str), Mode::Content);
    let (from, _, to) = page.span(all.len());
    let mut contents = HashMap::new();
    let mut hits = Vec::with_capacity(all.len());
    // The project of each hit, by its position (its id from here on).
    let mut owner = Vec::with_capacity(all.len());
    for (i, (pi, mut h)) in all.into_iter().enumerate() {
        owner.push(pi);
        let original = h.chunk.id;
        h.chunk.id = i as i64;
        if mode == Mode::Content && i >= from && i < to {
            let store = &per_project[pi].1;
            if let Some(text) = store.contents(&[original]).ok().and_then(|mut m| m.remove(&original)) {
                contents.insert(i as i64, text);
            }
        }
        hits.push(h);
    }
    let header =
        if unindexed.is_empty() { String::new() } else { format!("(not indexed yet: {})\n", unindexed.join(", ")) };
    if hits.is_empty() {
        return ToolReply::ok(
            format!("{header}No matches for {shown} in {} project(s).", stores.len(), shown = super::quoted(query)),
            json!({ "results": [] }),
        );
    }
    let (r, total) = if mode == Mode::FilesWithMatches {
        // Paths carry their project (`name:path`), so files of different projects stay apart.
        let mut files = files::by_file(&hits, files::lexical_evidence);
        if let Err(e) = cover(&mut files, &owner, &per_project, query) {
            return ToolReply::error(format!("workspace-search: {e}"));
        }
        (format::render_files(&files, page, &header), files.len())
    } else {
        let words = crate::domain::search::Query::parse(query).words;
        (format::render(&hits, &contents, &words, mode, page, &header), hits.len())
    };
    ToolReply::ok(r.text, json!({ "projects": stores.len(), "total": total, "results": r.results, "cursor": r.cursor }))
}

/// Each project's first files gain for the share of the query's words they hold, as
/// `search` ranks files ([`crate::domain::search::rank_files`]), each looked up in its own project's index; then
/// the files are ranked again. `owner[id]` is the project (in `projects`) of the hit `id`.
fn cover(files: &mut [FileHit<'_>], owner: &[usize], projects: &[Searched], query: &str) -> Result<(), StoreError> {
    let query = crate::domain::search::Query::parse(query);
    for (pi, (name, store, warm, _)) in projects.iter().enumerate() {
        let mine: Vec<usize> = (0..files.len())
            .filter(|&i| owner[files[i].chunks[0].chunk.id as usize] == pi)
            .take(files::COVERED)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let paths: Vec<&str> = mine.iter().map(|&i| &files[i].path[name.len() + 1..]).collect();
        let shares = files::word_shares(store, warm.as_deref(), &query, &paths)?;
        for (i, s) in mine.into_iter().zip(shares) {
            files[i].score += files::COVERAGE * s;
        }
    }
    files::sort(files);
    Ok(())
}
