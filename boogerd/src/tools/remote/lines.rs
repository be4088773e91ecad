//! `grep` and `references` on the team index: the chunks the trigram index leaves, read
//! line by line with the same matcher local grep uses.

use std::fmt::Write;
use std::time::{Duration, Instant};

use booger_proto::remote::{Args, At, Line, Lines};

use super::find::clip;
use super::{Ask, Outcome, reply, short};
use crate::domain::search::grams;
use crate::domain::search::lines::LineMatcher;
use crate::store::team::{TeamGrams, TeamHit};

/// Reading stops after this long; the answer then says it is incomplete.
const DEADLINE: Duration = Duration::from_secs(5);

pub(super) fn grep(ask: &mut Ask, a: &Args) -> Outcome {
    let pattern = a.pattern.as_deref().unwrap_or_default();
    let source = if a.literal { regex::escape(pattern) } else { pattern.to_owned() };
    let matcher = LineMatcher::new(&source, a.case_insensitive).map_err(|e| {
        ask.refuse(&format!(
            "invalid regex {pattern:?}: {}. Escape special characters, or pass literal=true",
            e.to_string().lines().last().unwrap_or_default().trim()
        ))
    })?;
    let narrow = grams::required_in_team(&source, a.case_insensitive);
    scan(ask, a, &matcher, narrow.as_ref(), a.head_limit.unwrap_or(50), None)
}

pub(super) fn references(ask: &mut Ask, a: &Args) -> Outcome {
    let name = a.symbol.as_deref().unwrap_or_default().trim();
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        return Err(ask.refuse("symbol must be one identifier (letters, digits, _), such as parse_config"));
    }
    let source = format!(r"\b{}\b", regex::escape(name));
    let matcher = LineMatcher::new(&source, false).map_err(|e| ask.refuse(&e.to_string()))?;
    let narrow = grams::required_in_team(&source, false);
    scan(ask, a, &matcher, narrow.as_ref(), a.head_limit.unwrap_or(50), Some(name))
}

/// The matching lines of the chunks left by `narrow`, at most `limit`; with `defines`, a
/// line that starts a definition of that name is marked.
fn scan(
    ask: &mut Ask,
    a: &Args,
    matcher: &LineMatcher,
    narrow: Option<&TeamGrams>,
    limit: usize,
    defines: Option<&str>,
) -> Outcome {
    let f = ask.scope(a, true)?;
    let mut found: Vec<Line> = Vec::new();
    let mut out = String::new();
    // The last line taken, as (repository, path, line): a line two chunks share is taken once.
    let mut last: (String, String, u64) = Default::default();
    let mut full = false;
    let all = ask.store.grep_chunks(narrow, &f, Instant::now() + DEADLINE, |row: TeamHit| {
        if !matcher.may_match(&row.chunk.content) {
            return true;
        }
        let c = &row.chunk;
        let own = crate::store::grams::own_start(c.kind, &c.content, c.end_byte - c.start_byte);
        if last.0 != row.repo || last.1 != row.path {
            last = (row.repo.clone(), row.path.clone(), 0);
        }
        matcher.each_line(&c.content[own..], |k, text| {
            let n = c.start_line as u64 + k as u64;
            if n <= last.2 || found.len() >= limit {
                full |= found.len() >= limit;
                return !full;
            }
            last.2 = n;
            let text = text.strip_suffix('\r').unwrap_or(text);
            let definition = defines.is_some_and(|d| c.name == d && n == c.start_line as u64);
            let mark = if definition { " (definition)" } else { "" };
            let _ = writeln!(out, "{}@{}:{}:{n}:{}{mark}", row.repo, short(&row.commit), row.path, clip(text));
            found.push(Line {
                at: At { repository: row.repo.clone(), commit: row.commit.clone(), path: row.path.clone() },
                line: n,
                text: clip(text).to_owned(),
                definition,
            });
            true
        });
        !full
    })?;
    let complete = all && !full;
    if found.is_empty() && a.repository.is_some() && ask.store.resolve(&f)?.is_none() {
        return Err(ask.not_found(a));
    }
    if found.is_empty() {
        out.push_str("No lines match.");
    }
    if !complete {
        let why = if full {
            "head_limit reached: raise it, or narrow with repository or path_prefix"
        } else {
            "stopped after 5 s: narrow with repository, path_prefix or a longer literal"
        };
        let _ = writeln!(out, "[more may match: {why}]");
    }
    let n = found.len();
    reply(out, &Lines { results: found, complete }, n)
}
