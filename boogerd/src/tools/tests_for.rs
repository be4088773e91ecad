//! `tests-for`: test functions that exercise a symbol.

use booger_proto::answers::{self, SymbolRow, Why};
use booger_proto::tools::ChunkKind;
use booger_proto::tools::args;

use super::call::{Call, Outcome, ToolError, answer, failed, page};
use crate::domain::search::format::{self, OutputMode};
use crate::domain::search::is_test;
use crate::store::search::{Candidate, Filters};
use crate::store::{Store, StoreError};

pub(super) fn run(call: &Call, a: args::TestsFor) -> Outcome {
    let symbol = a.symbol.trim();
    let name = symbol.rsplit(['.', ':']).next().unwrap_or(symbol).to_owned();
    if name.is_empty() {
        return Err(ToolError::Refused("tests-for: give `symbol`, e.g. parse_config".to_owned()));
    }
    let snap = call.snapshot(a.on.project.as_deref())?;
    let (project, store) = (&snap.project, &snap.store);
    let f = Filters::default();
    let found = tests_of(store, &name).map_err(|e| failed("tests-for", e))?;
    if found.is_empty() {
        let why = call.explain_empty(
            project,
            store,
            &f,
            &format!("No tests found for '{symbol}' (by name, or test functions that mention it)."),
        );
        return Ok(answer(
            why.clone(),
            &answers::TestsFor { results: Some(Vec::new()), reason: Some(why), ..Default::default() },
        ));
    }
    answered(&found, symbol, &a)
}

/// The answer of the tests found for `symbol`, each with why, in the caller's output mode
/// and page (the team server's too).
pub(super) fn answered(found: &[(Candidate, &'static str)], symbol: &str, a: &args::TestsFor) -> Outcome {
    let mode = OutputMode::of(a.output_mode, OutputMode::Signatures);
    if mode == OutputMode::Count {
        let text = format!("{} test(s) for {symbol}", found.len());
        return Ok(answer(text, &answers::TestsFor { total: Some(found.len() as u64), ..Default::default() }));
    }
    let mut chunks: Vec<Candidate> = found.iter().map(|(c, _)| c.clone()).collect();
    chunks.sort_by(|a, b| a.path.cmp(&b.path).then(a.start_line.cmp(&b.start_line)));
    let r = format::outline(&chunks, mode, page(&a.paging, None, 50, 0)?);
    // Why, for the tests this page shows.
    let shown = |c: &Candidate| {
        r.results.iter().any(
            |row| matches!(row, SymbolRow::Symbol(s) if s.path == c.path && s.start_line == u64::from(c.start_line)),
        )
    };
    let why = found.iter().filter(|(c, _)| shown(c)).map(|(c, w)| Why {
        path: c.path.clone(),
        name: c.name.clone(),
        line: Some(u64::from(c.start_line)),
        why: (*w).to_owned(),
    });
    let why = why.collect();
    let data = answers::TestsFor { results: Some(r.results), why: Some(why), ..Default::default() };
    Ok(answer(format!("tests for {symbol}: {}", r.text), &data))
}

/// The tests of `name`: named after it first, then those that call or mention it, each in
/// path and line order, with why.
fn tests_of(store: &Store, name: &str) -> Result<Vec<(Candidate, &'static str)>, StoreError> {
    let f = Filters::default();
    let lower = name.to_lowercase();
    let by_name = |c: &Candidate| {
        let n = c.name.to_lowercase();
        n == format!("test_{lower}")
            || n == format!("{lower}_test")
            || n == format!("test{lower}")
            || n.starts_with(&format!("test_{lower}_"))
            || c.name == format!("Test{}", upper_first(name))
    };
    let testy = |c: &Candidate| {
        c.kind == ChunkKind::Test
            || matches!(c.kind.as_str(), "function" | "method" | "class")
                && (is_test(c) || c.parent.as_deref().is_some_and(|p| p == "tests" || p.starts_with("Test")))
    };
    let mut found: Vec<(Candidate, &'static str)> = Vec::new();
    // Only tests' text is read: of a common name's thousands of mentions, few are in tests.
    let mentions = |c: &Candidate, text: &str| c.name != name && super::references::find_word(text, name).is_some();
    let matches =
        store.fts_matches(name, &f, 5_000, |c| by_name(c) || testy(c), |c, text| by_name(c) || mentions(c, text))?;
    for (c, _) in matches {
        let why = if by_name(&c) { "named after it" } else { "calls or mentions it" };
        found.push((c, why));
    }
    // Tests named after the symbol may not mention it by name (test_parse for parse_config is not): look them up too.
    for pattern in [format!("test_{name}"), format!("{name}_test"), format!("Test{}", upper_first(name))] {
        for c in store.chunks_named(&pattern, &f, 100).unwrap_or_default() {
            if !found.iter().any(|(x, _)| x.id == c.id) {
                found.push((c, "named after it"));
            }
        }
    }
    found.sort_by(|a, b| {
        (a.1 != "named after it")
            .cmp(&(b.1 != "named after it"))
            .then(a.0.path.cmp(&b.0.path))
            .then(a.0.start_line.cmp(&b.0.start_line))
    });
    Ok(found)
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}
