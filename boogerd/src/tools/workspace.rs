//! `workspace-search`: one query over every registered project, ranked together; with
//! `team`, over every repository of the team index too (see [`super::team`]).

use std::collections::HashMap;

use booger_proto::answers;
use booger_proto::tools::args;

use super::call::{Call, Outcome, ToolError, answer, failed, filters, page, quoted};
use crate::base::sync::Recover;
use crate::domain::search::files::{self, FileHit};
use crate::domain::search::format::{self, OutputMode};
use crate::domain::search::{Hit, Query};
use crate::engine::project::Snapshot;
use crate::store::StoreError;
#[cfg(feature = "team")]
use crate::store::team::TeamHit;
/// Without the team index, nothing comes from it.
#[cfg(not(feature = "team"))]
type TeamHit = std::convert::Infallible;

/// Projects searched at the same time.
const CONCURRENCY: usize = 10;

/// One project's answer: its name, the snapshot its search read, and its hits.
type Searched = (String, Snapshot, Vec<Hit>);

pub(super) fn run(call: &Call, a: args::Workspace) -> Outcome {
    let args::Workspace { query: a, team } = a;
    let (text, query) = (a.query.as_str(), Query::parse(&a.query));
    let f = filters(&a.filters);
    let projects = call.daemon.registry.read().recover().projects().to_vec();
    #[cfg(feature = "team")]
    let link = if team { Some(super::team::link(call, "workspace-search")?) } else { None };
    #[cfg(not(feature = "team"))]
    let link: Option<std::convert::Infallible> = match team {
        true => return Err(super::without_team::refused("workspace-search")),
        false => None,
    };
    if projects.is_empty() && link.is_none() {
        let text = "No projects registered. Add some with `booger projects add PATH`.";
        return Ok(answer(text, &answers::Search::default()));
    }
    // Every project registered here answers from its own index, indexed yet or not.
    #[cfg_attr(not(feature = "team"), allow(unused_variables))]
    let local_names: Vec<String> = projects.iter().map(|p| p.name.clone()).collect();
    let mut snapshots = Vec::new();
    let mut unindexed = Vec::new();
    for p in projects {
        let handle = call.daemon.projects.get(&p.root);
        let name = p.name.clone();
        match handle.snapshot(p, &call.session.id) {
            Ok(snap) => {
                call.record(&snap);
                snapshots.push((name, snap));
            }
            Err(_) => unindexed.push(name),
        }
    }
    let page = page(&a.paging, a.max_lines, 10, 40)?;
    // A project's hit in the merged top `need` is in its own top `need`.
    let need = page.reach();
    let indexed = snapshots.len();
    // Bounded concurrency: at most CONCURRENCY projects at once.
    let mut per_project: Vec<Searched> = Vec::new();
    let mut snapshots = snapshots.into_iter().peekable();
    while snapshots.peek().is_some() {
        let group: Vec<(String, Snapshot)> = snapshots.by_ref().take(CONCURRENCY).collect();
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = group
                .into_iter()
                .map(|(name, snap)| {
                    let (f, query) = (&f, &query);
                    s.spawn(move || {
                        let hits = snap.searcher_without_notes().search(query, text, f, need);
                        (name, snap, hits)
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        for (name, snap, hits) in results {
            match hits {
                Ok(h) => per_project.push((name, snap, h)),
                Err(e) => tracing::warn!(project = %name, error = %e, "workspace-search: project failed"),
            }
        }
    }
    #[cfg_attr(not(feature = "team"), allow(unused_mut))]
    let mut header =
        if unindexed.is_empty() { String::new() } else { format!("(not indexed yet: {})\n", unindexed.join(", ")) };
    #[cfg_attr(not(feature = "team"), allow(unused_mut))]
    let mut note = None;
    let team_hits = match link {
        #[cfg(feature = "team")]
        Some(link) => {
            let tf = super::team::filters(&f, &local_names);
            super::team::search(link, &query, &tf, need).unwrap_or_else(|why| {
                let said = super::team::unreachable_note(&why);
                header.push_str(&said);
                note = Some(said.trim().to_owned());
                Vec::new()
            })
        }
        None => Vec::new(),
    };
    // The team index was asked for and not read, and nothing local matched: that is no
    // answer, and a script or an agent must not read it as "no matches".
    if let Some(note) = note.as_deref().filter(|_| per_project.iter().all(|(_, _, hits)| hits.is_empty())) {
        return Err(ToolError::Refused(format!("workspace-search: {note}; nothing local matched either")));
    }
    merged(per_project, team_hits, &a, &query, page, &Preamble { header, note }, indexed)
}

/// What an answer says before its results: projects not indexed yet, a team index not
/// searched (that also as the structured answer's `note`, for a client that reads only that).
struct Preamble {
    header: String,
    note: Option<String>,
}

/// Where a merged hit came from: a project (its place in the list searched) or the team index.
const TEAM: usize = usize::MAX;

/// The projects' hits ranked together, in the caller's output mode.
fn merged(
    per_project: Vec<Searched>,
    team: Vec<TeamHit>,
    a: &args::Query,
    query: &Query,
    page: format::Page,
    preamble: &Preamble,
    indexed: usize,
) -> Outcome {
    let header = preamble.header.as_str();
    // One ranking; each hit tagged with its project, ids made unique across projects.
    let mut all: Vec<(usize, Hit)> = Vec::new();
    for (pi, (name, _, hits)) in per_project.iter().enumerate() {
        for h in hits {
            let mut h = h.clone();
            h.chunk.path = format!("{name}:{}", h.chunk.path);
            all.push((pi, h));
        }
    }
    all.sort_by(|a, b| b.1.score.total_cmp(&a.1.score));
    let mut team_text = fuse_team(&mut all, team);
    let mode = OutputMode::of(a.output_mode, OutputMode::Content);
    let (from, _, to) = page.span(all.len());
    let mut contents = HashMap::new();
    let mut hits = Vec::with_capacity(all.len());
    // The project of each hit, by its position (its id from here on).
    let mut owner = Vec::with_capacity(all.len());
    for (i, (pi, mut h)) in all.into_iter().enumerate() {
        owner.push(pi);
        let original = h.chunk.id;
        h.chunk.id = i as i64;
        if pi == TEAM {
            if let Some(text) = team_text.remove(&original) {
                contents.insert(i as i64, text);
            }
        } else if mode == OutputMode::Content && i >= from && i < to {
            let store = &per_project[pi].1.store;
            if let Some(text) = store.contents(&[original]).ok().and_then(|mut m| m.remove(&original)) {
                contents.insert(i as i64, text);
            }
        }
        hits.push(h);
    }
    if hits.is_empty() {
        let text = format!("{header}No matches for {} in {indexed} project(s).", quoted(&a.query));
        return Ok(answer(text, &answers::Search { note: preamble.note.clone(), ..Default::default() }));
    }
    let (r, total) = if mode == OutputMode::FilesWithMatches {
        // Paths carry their project (`name:path`), so files of different projects stay apart.
        let mut files = files::by_file(&hits, files::lexical_evidence);
        cover(&mut files, &owner, &per_project, query).map_err(|e| failed("workspace-search", e))?;
        (format::render_files(&files, page, header), files.len())
    } else {
        (format::render(&hits, &contents, &query.words, mode, page, header), hits.len())
    };
    let data = answers::Search {
        projects: Some(indexed as u64),
        total: Some(total as u64),
        results: r.results,
        cursor: r.cursor,
        note: preamble.note.clone(),
        ..Default::default()
    };
    Ok(answer(r.text, &data))
}

/// The team index's hits fused into `all` by rank: two scales that do not compare (bm25
/// here, PostgreSQL's ts_rank there), fused as hybrid search fuses its two rankings. Their
/// texts, by the key each got.
#[cfg(feature = "team")]
fn fuse_team(all: &mut Vec<(usize, Hit)>, team: Vec<TeamHit>) -> HashMap<i64, String> {
    let mut team_text = HashMap::new();
    if team.is_empty() {
        return team_text;
    }
    let local = std::mem::take(all);
    for (rank, (pi, mut h)) in local.into_iter().enumerate() {
        h.score = rrf(rank);
        all.push((pi, h));
    }
    for (rank, t) in team.into_iter().enumerate() {
        let key = all.len() as i64;
        let hit =
            Hit { chunk: super::team::candidate(&t, super::team::label(&t), key), score: rrf(rank), notes: Vec::new() };
        team_text.insert(key, t.chunk.content);
        all.push((TEAM, hit));
    }
    all.sort_by(|a, b| b.1.score.total_cmp(&a.1.score));
    team_text
}

#[cfg(not(feature = "team"))]
fn fuse_team(_: &mut [(usize, Hit)], _: Vec<TeamHit>) -> HashMap<i64, String> {
    HashMap::new()
}

/// Reciprocal-rank fusion's score of a place in one ranking.
#[cfg(feature = "team")]
fn rrf(rank: usize) -> f64 {
    1.0 / (60.0 + rank as f64 + 1.0)
}

/// Each project's first files gain for the share of the query's words they hold, as
/// `search` ranks files ([`crate::domain::search::rank_files`]), each looked up in its own project's index; then
/// the files are ranked again. `owner[id]` is the project (in `projects`) of the hit `id`.
fn cover(files: &mut [FileHit<'_>], owner: &[usize], projects: &[Searched], query: &Query) -> Result<(), StoreError> {
    for (pi, (name, snap, _)) in projects.iter().enumerate() {
        let mine: Vec<usize> = (0..files.len())
            .filter(|&i| owner[files[i].chunks[0].chunk.id as usize] == pi)
            .take(files::COVERED)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let paths: Vec<&str> = mine.iter().map(|&i| &files[i].path[name.len() + 1..]).collect();
        let shares = files::word_shares(&snap.store, snap.ranking(), query, &paths)?;
        for (i, s) in mine.into_iter().zip(shares) {
            files[i].score += files::COVERAGE * s;
        }
    }
    files::sort(files);
    Ok(())
}
