//! `search`, `workspace-search` and `symbols` on the team index.

use std::fmt::Write;

use booger_proto::remote::{Args, At, Hit, Search, Symbol, Symbols};

use super::{Ask, Outcome, reply, short};
use crate::domain::search::{Query, lexemes};
use crate::store::team::TeamHit;

/// Lines of a result's text an answer shows.
const SHOWN_LINES: usize = 8;

fn at(h: &TeamHit) -> At {
    At { repository: h.repo.clone(), commit: h.commit.clone(), path: h.path.clone() }
}

/// `search` (in one repository when it names one, `scoped`) and `workspace-search` (every
/// repository the token reads, each at its head).
pub(super) fn search(ask: &mut Ask, a: &Args, scoped: bool) -> Outcome {
    let text = a.query.as_deref().unwrap_or_default();
    let f = ask.scope(a, scoped)?;
    let limit = a.head_limit.unwrap_or(10);
    let hits = lexemes::team_search(ask.store, &Query::parse(text), &f, limit)?;
    if hits.is_empty() && scoped && a.repository.is_some() && ask.store.resolve(&f)?.is_none() {
        return Err(ask.not_found(a));
    }
    let mut out = String::new();
    if hits.is_empty() {
        out.push_str("No results. Try other words, fewer filters, or `status` for the repositories this token reads.");
    }
    for h in &hits {
        let c = &h.chunk;
        let _ = writeln!(
            out,
            "{}@{}:{}:{}-{} {} {}",
            h.repo,
            short(&h.commit),
            h.path,
            c.start_line,
            c.end_line,
            c.kind,
            c.name
        );
        for line in c.content.lines().take(SHOWN_LINES) {
            let _ = writeln!(out, "  {}", clip(line));
        }
    }
    let results = hits
        .iter()
        .map(|h| Hit {
            at: at(h),
            start_line: h.chunk.start_line as u64,
            end_line: h.chunk.end_line as u64,
            kind: h.chunk.kind.to_owned(),
            name: h.chunk.name.clone(),
            signature: h.chunk.signature.clone(),
            score: h.score,
        })
        .collect();
    reply(out, &Search { results }, hits.len())
}

/// `symbols`: a repository's definitions at a commit, under a path or by name.
pub(super) fn symbols(ask: &mut Ask, a: &Args) -> Outcome {
    let f = ask.scope(a, true)?;
    let limit = a.head_limit.unwrap_or(100) as i64;
    let name = a.name.as_deref().filter(|n| !n.trim().is_empty());
    let words = name.map(|n| lexemes::tsquery(&lexemes::of_query(&Query::parse(n)), "&"));
    let named = match (name, words.as_deref()) {
        (Some(n), Some(w)) if !w.is_empty() => Some((n, w)),
        (Some(_), _) => return Err(ask.refuse("name has no word to look up: give an identifier or part of one")),
        _ => None,
    };
    let found = ask.store.symbols(&f, named, limit)?;
    if found.is_empty() && ask.store.resolve(&f)?.is_none() {
        return Err(ask.not_found(a));
    }
    let mut out = String::new();
    if found.is_empty() {
        out.push_str("No definitions match.");
    }
    for h in &found {
        let c = &h.chunk;
        let _ = match c.signature.is_empty() {
            true => writeln!(out, "{}:{}-{} {} {}", h.path, c.start_line, c.end_line, c.kind, c.name),
            false => writeln!(out, "{}:{}-{} {}", h.path, c.start_line, c.end_line, clip(&c.signature)),
        };
    }
    let results = found
        .iter()
        .map(|h| Symbol {
            at: at(h),
            start_line: h.chunk.start_line as u64,
            end_line: h.chunk.end_line as u64,
            kind: h.chunk.kind.to_owned(),
            name: h.chunk.name.clone(),
            signature: h.chunk.signature.clone(),
        })
        .collect();
    reply(out, &Symbols { results }, found.len())
}

/// Very long lines (minified code, data) are shown clipped.
pub(super) fn clip(line: &str) -> &str {
    if line.len() > 240 { &line[..line.floor_char_boundary(240)] } else { line }
}
