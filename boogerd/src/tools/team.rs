//! What the team index adds to `workspace-search` and `grep` when asked (`team`): every
//! repository published to it, read at its head (its latest published commit on its default
//! branch). Projects this daemon indexes answer from their own, fresher, index; the team
//! index answers for the rest. A team index out of reach never costs the local answer: it is
//! said in the answer instead.

use std::collections::HashMap;

use booger_proto::answers;
use booger_proto::tools::args;

use super::call::{Call, Outcome, ToolError, answer, page};
use crate::domain::search::format::{self, OutputMode};
use crate::domain::search::{Hit, Query, files, lexemes};
use crate::engine::team::TeamLink;
use crate::store::search::{Candidate, Filters};
use crate::store::team::{TeamFilters, TeamHit};

/// The daemon's team index, or how to configure one.
pub(super) fn link<'a>(call: &Call<'a>, tool: &str) -> Result<&'a TeamLink, ToolError> {
    call.daemon.team.as_ref().ok_or_else(|| {
        ToolError::Refused(format!(
            "{tool}: team=true needs a team index: start boogerd with --team-url or BOOGER_TEAM_URL (a PostgreSQL URL)"
        ))
    })
}

/// The daemon's own team index: a tool never names another (its password would go there).
pub(super) fn url_of(call: &Call, tool: &str) -> Result<String, ToolError> {
    call.daemon.config.team_url.clone().ok_or_else(|| {
        ToolError::Refused(format!(
            "{tool}: no team index: start the daemon with one (`booger daemon stop`, then \
             `BOOGER_TEAM_URL=postgresql://user@host/db booger daemon start`, or boogerd --team-url); \
             it is kept for its later starts"
        ))
    })
}

/// The local filters as the team index takes them.
pub(super) fn filters<'a>(f: &'a Filters, skip_repos: &'a [String]) -> TeamFilters<'a> {
    TeamFilters { language: f.language, kind: f.kind, skip_repos, ..TeamFilters::default() }.path(f.path.as_deref())
}

/// How a team result names its file: repository, commit (12 digits) and path.
pub(super) fn label(hit: &TeamHit) -> String {
    format!("{}@{}:{}", hit.repo, &hit.commit[..hit.commit.len().min(12)], hit.path)
}

/// The `limit` best team chunks for `query` (see [`lexemes::team_search`]).
pub(super) fn search(
    link: &TeamLink,
    query: &Query,
    f: &TeamFilters<'_>,
    limit: usize,
) -> Result<Vec<TeamHit>, String> {
    link.with(|t| lexemes::team_search(t, query, f, limit)).map_err(|e| e.to_string())
}

/// The line an answer gets when the team index could not be read.
pub(super) fn unreachable_note(why: &str) -> String {
    format!("(team index not searched: {why})\n")
}

/// How long a search in a project whose first index is starting waits for its fill from the
/// team index to begin (the run opens the store first).
const FILL_START_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// A team chunk as a ranked candidate named `path`.
pub(super) fn candidate(t: &TeamHit, path: String, id: i64) -> Candidate {
    Candidate {
        id,
        path,
        language: t.language.clone(),
        kind: t.chunk.kind,
        name: t.chunk.name.clone(),
        signature: t.chunk.signature.clone(),
        parent: t.chunk.parent.clone(),
        start_line: t.chunk.start_line,
        end_line: t.chunk.end_line,
        bytes: t.chunk.end_byte - t.chunk.start_byte,
        bm25: 0.0,
    }
}

/// A `search` in a project whose empty index is being filled from the team index, answered
/// from the team index at the commit being filled (the files as committed), saying so; `None`
/// when that is not the case, or the team index cannot answer (the local index then does).
pub(super) fn while_filling(call: &Call, a: &args::Search) -> Option<Outcome> {
    let link = call.daemon.team.as_ref()?;
    let project = call.project(a.on.project.as_deref()).ok()?;
    let commit = call.daemon.projects.get(&project.root).filling_from(FILL_START_WAIT)?;
    let q = &a.query;
    let query = Query::parse(&q.query);
    let local = super::call::filters(&q.filters);
    let tf = TeamFilters { commit: Some(&commit), ..filters(&local, &[]) };
    let page = page(&q.paging, q.max_lines, 10, 40).ok()?;
    let found = search(link, &query, &tf, page.reach()).ok().filter(|f| !f.is_empty())?;
    let (hits, contents) = ranked(found, |t| t.path.clone());
    let header = format!(
        "(answered from the team index at {}: {} is being filled from it; local edits are not in this answer yet)\n",
        &commit[..commit.len().min(12)],
        project.name
    );
    let mode = OutputMode::of(q.output_mode, OutputMode::Content);
    let (r, total) = render(&hits, &contents, &query, mode, page, &header);
    let data = answers::Search {
        project: Some(project.name),
        total: Some(total as u64),
        results: r.results,
        cursor: r.cursor,
        ..Default::default()
    };
    Some(Ok(answer(r.text, &data)))
}

/// Team hits as ranked hits, each file named by `name`, and their texts by id.
pub(super) fn ranked(found: Vec<TeamHit>, name: impl Fn(&TeamHit) -> String) -> (Vec<Hit>, HashMap<i64, String>) {
    let mut contents = HashMap::new();
    let hits = found
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let chunk = candidate(&t, name(&t), i as i64);
            contents.insert(i as i64, t.chunk.content);
            Hit { chunk, score: t.score, notes: Vec::new() }
        })
        .collect();
    (hits, contents)
}

/// Ranked team hits laid out as local search lays out its own (files ranked by their hits'
/// evidence in files mode), and how many results the whole list holds.
pub(super) fn render(
    hits: &[Hit],
    contents: &HashMap<i64, String>,
    query: &Query,
    mode: OutputMode,
    page: format::Page,
    header: &str,
) -> (format::Rendered<answers::RankedRow>, usize) {
    if mode == OutputMode::FilesWithMatches {
        let ranked = files::by_file(hits, files::lexical_evidence);
        (format::render_files(&ranked, page, header), ranked.len())
    } else {
        (format::render(hits, contents, &query.words, mode, page, header), hits.len())
    }
}
