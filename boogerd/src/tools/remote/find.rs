//! `search`, `workspace-search` and `symbols` on the team index.

use std::fmt::Write;

use booger_proto::remote::{Args, At, Hit, Search, Symbol, Symbols};
use booger_proto::tools::ChunkKind;

use super::{Ask, Outcome, reply, short};
use crate::domain::search::{Query, is_test, lexemes};
use crate::store::team::{Matched, TeamHit};
use crate::tools::references::find_word;
use crate::tools::team::candidate;

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
        let _ = writeln!(out, "{}", heading(h));
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
            kind: h.chunk.kind.as_str().to_owned(),
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
    let results = found.iter().map(symbol_of).collect();
    reply(out, &Symbols { results }, found.len())
}

/// A result's first line: where it is, its kind and name.
fn heading(h: &TeamHit) -> String {
    let c = &h.chunk;
    format!("{}@{}:{}:{}-{} {} {}", h.repo, short(&h.commit), h.path, c.start_line, c.end_line, c.kind, c.name)
}

fn symbol_of(h: &TeamHit) -> Symbol {
    Symbol {
        at: at(h),
        start_line: h.chunk.start_line as u64,
        end_line: h.chunk.end_line as u64,
        kind: h.chunk.kind.as_str().to_owned(),
        name: h.chunk.name.clone(),
        signature: h.chunk.signature.clone(),
    }
}

/// Chunks holding a name's words that `tests-for` reads for its tests.
const TESTS_READ: i64 = 3_000;

/// Very long lines (minified code, data) are shown clipped.
pub(super) fn clip(line: &str) -> &str {
    if line.len() > 240 { &line[..line.floor_char_boundary(240)] } else { line }
}

/// `tests-for`: the tests that exercise a definition: test code (test files, test functions,
/// test modules) whose words hold the name, named after it or calling it.
pub(super) fn tests_for(ask: &mut Ask, a: &Args) -> Outcome {
    let symbol = a.symbol.as_deref().unwrap_or_default().trim();
    let name = symbol.rsplit(['.', ':']).next().unwrap_or(symbol);
    if name.is_empty() {
        return Err(ask.refuse("give `symbol`, e.g. parse_config"));
    }
    let f = ask.scope(a, true)?;
    let stems = lexemes::of_query(&Query::parse(name));
    if stems.is_empty() {
        return Err(ask.refuse("symbol has no word to look up: give an identifier"));
    }
    // The chunks holding the name's words, best first, of which the tests are kept.
    let found = ask.store.search(&lexemes::tsquery(&stems, "&"), Matched::Words, &f, TESTS_READ)?;
    if found.is_empty() && a.repository.is_some() && ask.store.resolve(&f)?.is_none() {
        return Err(ask.not_found(a));
    }
    let limit = a.head_limit.unwrap_or(20);
    let lower = name.to_lowercase();
    let tests: Vec<&TeamHit> = found
        .iter()
        .filter(|h| {
            let c = candidate(h, h.path.clone(), 0);
            let named = c.name.to_lowercase().contains(&lower);
            (c.kind == ChunkKind::Test || is_test(&c))
                && c.name != name
                && (named || h.chunk.content.lines().any(|l| find_word(l, name).is_some()))
        })
        .take(limit)
        .collect();
    let mut out = String::new();
    if tests.is_empty() {
        let _ = writeln!(out, "No tests found for {symbol:?} (test code that is named after it or mentions it).");
    }
    for h in &tests {
        let _ = writeln!(out, "{}", heading(h));
    }
    let results: Vec<Symbol> = tests.iter().map(|h| symbol_of(h)).collect();
    let n = results.len();
    reply(out, &Symbols { results }, n)
}
