//! `search` (and `hybrid-search`, `workspace-search`), `symbols` and `tests-for` on the team
//! index, laid out by the local tools' renderers.

use booger_proto::answers;
use booger_proto::remote::Selected;
use booger_proto::tools::{ChunkKind, args};

use super::{Ask, Outcome};
use crate::domain::search::format::{self, OutputMode};
use crate::domain::search::{Query, is_test, lexemes};
use crate::store::search::{Candidate, Filters};
use crate::store::team::{Matched, TeamHit};
use crate::tools::call::{answer, filters, page, quoted};
use crate::tools::references::find_word;
use crate::tools::team::{candidate, label, ranked, render};

/// `search` in the repository and commit selected (all readable repositories, each at its
/// head, when none is), with `note` first when not empty.
pub(super) fn search(ask: &mut Ask, sel: &Selected, a: &args::Search, note: &str) -> Outcome {
    let q = &a.query;
    let query = Query::parse(&q.query);
    let page = page(&q.paging, q.max_lines, 10, 40)?;
    let local = filters(&q.filters);
    let f = ask.scope(sel, &local);
    let found = lexemes::team_search(ask.store, &query, &f, page.reach())?;
    let header = if note.is_empty() { String::new() } else { format!("{note}\n") };
    if found.is_empty() {
        ask.check_selected(sel)?;
        let text = format!(
            "{header}No matches for {}. Try other words, fewer filters, or `status` for the repositories this \
             token reads.",
            quoted(&q.query)
        );
        return Ok(answer(text, &answers::Search { total: Some(0), ..Default::default() }));
    }
    let (hits, contents) = ranked(found, label);
    let mode = OutputMode::of(q.output_mode, OutputMode::Content);
    let (r, total) = render(&hits, &contents, &query, mode, page, &header);
    let data = answers::Search {
        total: Some(total as u64),
        results: r.results,
        cursor: r.cursor,
        note: (!note.is_empty()).then(|| note.to_owned()),
        ..Default::default()
    };
    Ok(answer(r.text, &data))
}

/// Definitions an outline reads at most (a whole large repository); paging goes through them.
const OUTLINE_MAX: i64 = 20_000;

/// `symbols`: the outline of a file or directory of a repository at a commit.
pub(super) fn symbols(ask: &mut Ask, sel: &Selected, a: &args::Symbols) -> Outcome {
    let path = a.path.as_deref().map(|p| p.trim_start_matches("./").to_owned()).filter(|p| !p.is_empty());
    let local = Filters { language: a.language, kind: a.kind, path };
    let f = ask.scope(sel, &local);
    let found = ask.store.symbols(&f, OUTLINE_MAX)?;
    if found.is_empty() {
        ask.check_selected(sel)?;
        let why = "No symbols match.".to_owned();
        let data = answers::Symbols { results: Some(Vec::new()), reason: Some(why.clone()), ..Default::default() };
        return Ok(answer(why, &data));
    }
    let chunks: Vec<Candidate> = found.iter().enumerate().map(|(i, h)| candidate(h, label(h), i as i64)).collect();
    let mode = OutputMode::of(a.output_mode, OutputMode::Signatures);
    let r = format::outline(&chunks, mode, page(&a.paging, None, 200, 0)?);
    let data = answers::Symbols { results: Some(r.results), cursor: r.cursor, ..Default::default() };
    Ok(answer(r.text, &data))
}

/// Chunks holding a name's words that `tests-for` reads for its tests.
const TESTS_READ: i64 = 3_000;

/// `tests-for`: the tests that exercise a definition: test code (test files, test functions,
/// test modules) whose words hold the name, named after it or calling it.
pub(super) fn tests_for(ask: &mut Ask, sel: &Selected, a: &args::TestsFor) -> Outcome {
    let symbol = a.symbol.trim();
    let name = symbol.rsplit(['.', ':']).next().unwrap_or(symbol);
    if name.is_empty() {
        return Err(ask.refuse("give `symbol`, e.g. parse_config"));
    }
    let stems = lexemes::of_query(&Query::parse(name));
    if stems.is_empty() {
        return Err(ask.refuse("symbol has no word to look up: give an identifier"));
    }
    // The chunks holding the name's words, best first, of which the tests are kept.
    let local = Filters::default();
    let f = ask.scope(sel, &local);
    let found = ask.store.search(&lexemes::tsquery(&stems, "&"), Matched::Words, &f, TESTS_READ)?;
    let lower = name.to_lowercase();
    let tests: Vec<(Candidate, &'static str)> = found
        .iter()
        .enumerate()
        .filter_map(|(i, h)| {
            // Whether it is a test is read from its own path; the answer names it with its
            // repository and commit.
            let c = candidate(h, h.path.clone(), i as i64);
            let named = c.name.to_lowercase().contains(&lower);
            let testy = (c.kind == ChunkKind::Test || is_test(&c)) && c.name != name;
            let why = if named { "named after it" } else { "calls or mentions it" };
            (testy && (named || mentions(h, name))).then(|| (Candidate { path: label(h), ..c }, why))
        })
        .collect();
    if tests.is_empty() {
        ask.check_selected(sel)?;
        let why = format!("No tests found for {} (test code that is named after it or mentions it).", quoted(symbol));
        let data = answers::TestsFor { results: Some(Vec::new()), reason: Some(why.clone()), ..Default::default() };
        return Ok(answer(why, &data));
    }
    Ok(crate::tools::tests_for::answered(&tests, symbol, a)?)
}

fn mentions(h: &TeamHit, name: &str) -> bool {
    h.chunk.content.lines().any(|l| find_word(l, name).is_some())
}
