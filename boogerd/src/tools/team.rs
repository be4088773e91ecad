//! What the team index adds to `workspace-search` and `grep` when asked (`team`): every
//! repository published to it, read at its head (its latest published commit on its default
//! branch). Projects this daemon indexes answer from their own, fresher, index; the team
//! index answers for the rest. A team index out of reach never costs the local answer: it is
//! said in the answer instead.

use super::call::{Call, ToolError};
use crate::domain::search::Query;
use crate::domain::search::lexemes;
use crate::engine::team::TeamLink;
use crate::store::search::Filters;
use crate::store::team::{TeamFilters, TeamHit};

/// The daemon's team index, or how to configure one.
pub fn link<'a>(call: &Call<'a>, tool: &str) -> Result<&'a TeamLink, ToolError> {
    call.daemon.team.as_ref().ok_or_else(|| {
        ToolError::Refused(format!(
            "{tool}: team=true needs a team index: start boogerd with --team-url or BOOGER_TEAM_URL (a PostgreSQL URL)"
        ))
    })
}

/// The local filters as the team index takes them: a path is a prefix there, not a glob.
pub fn filters<'a>(tool: &str, f: &'a Filters, skip_repos: &'a [String]) -> Result<TeamFilters<'a>, ToolError> {
    if f.path.as_deref().is_some_and(|p| p.contains(['*', '?', '['])) {
        return Err(ToolError::Refused(format!(
            "{tool}: with team=true, path_prefix is a directory or file prefix, not a glob"
        )));
    }
    Ok(TeamFilters {
        language: f.language.as_deref(),
        kind: f.kind.as_deref(),
        path_prefix: f.path.as_deref().map(|p| p.trim_start_matches("./")),
        skip_repos,
    })
}

/// How a team result names its file: repository, commit (12 digits) and path.
pub fn label(hit: &TeamHit) -> String {
    format!("{}@{}:{}", hit.repo, &hit.commit[..hit.commit.len().min(12)], hit.path)
}

/// The `limit` best team chunks for `query`: those holding all its words, then, if too few,
/// those holding any.
pub fn search(link: &TeamLink, query: &Query, f: &TeamFilters<'_>, limit: usize) -> Result<Vec<TeamHit>, String> {
    let stems = lexemes::of_query(query);
    if stems.is_empty() {
        return Ok(Vec::new());
    }
    let limit = limit as i64;
    let mut hits = link.with(|t| t.search(&lexemes::tsquery(&stems, "&"), f, limit)).map_err(|e| e.to_string())?;
    if (hits.len() as i64) < limit && stems.len() > 1 {
        let any = link.with(|t| t.search(&lexemes::tsquery(&stems, "|"), f, limit)).map_err(|e| e.to_string())?;
        let seen: std::collections::HashSet<(String, String, u32)> =
            hits.iter().map(|h| (h.repo.clone(), h.path.clone(), h.chunk.start_line)).collect();
        hits.extend(
            any.into_iter()
                .filter(|h| !seen.contains(&(h.repo.clone(), h.path.clone(), h.chunk.start_line)))
                .take(limit as usize - hits.len()),
        );
    }
    Ok(hits)
}

/// The line an answer gets when the team index could not be read.
pub fn unreachable_note(why: &str) -> String {
    format!("(team index not searched: {why})\n")
}
