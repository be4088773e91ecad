//! `tests-for`: test functions that exercise a symbol.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, explain_empty, filters, project_store};
use crate::domain::search::format::{self, Mode};
use crate::domain::search::{Query, is_test};
use crate::engine::Daemon;
use crate::store::search::Candidate;

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let symbol = args.get("symbol").and_then(Value::as_str).unwrap_or_default().trim();
    let name = symbol.rsplit(['.', ':']).next().unwrap_or(symbol).to_owned();
    if name.is_empty() {
        return ToolReply::error("tests-for: give `symbol`, e.g. parse_config");
    }
    let (project, store) = match project_store(daemon, session, args) {
        Ok(ps) => ps,
        Err(reply) => return reply,
    };
    let f = filters(args);
    let lower = name.to_lowercase();
    let by_name = |c: &Candidate| {
        let n = c.name.to_lowercase();
        n == format!("test_{lower}")
            || n == format!("{lower}_test")
            || n == format!("test{lower}")
            || n.starts_with(&format!("test_{lower}_"))
            || c.name == format!("Test{}", upper_first(&name))
    };
    let testy = |c: &Candidate| {
        c.kind == "test"
            || matches!(c.kind.as_str(), "function" | "method" | "class")
                && (is_test(c) || c.parent.as_deref().is_some_and(|p| p == "tests" || p.starts_with("Test")))
    };
    let mut found: Vec<(Candidate, &'static str)> = Vec::new();
    // Only tests' text is read: of a common name's thousands of mentions, few are in tests.
    let matches = match store.fts_matches(&Query::parse(&name).and(), &f, 5_000, |c| by_name(c) || testy(c)) {
        Ok(m) => m,
        Err(e) => return ToolReply::error(format!("tests-for: {e}")),
    };
    for (c, content) in matches {
        let testy = testy(&c);
        if by_name(&c) {
            found.push((c, "named after it"));
        } else if testy && content.lines().any(|l| super::references::find_word(l, &name).is_some()) && c.name != name {
            found.push((c, "calls or mentions it"));
        }
    }
    // Tests named after the symbol may not mention it by name (test_parse for parse_config is not): look them up too.
    for pattern in [format!("test_{name}"), format!("{name}_test"), format!("Test{}", upper_first(&name))] {
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
    if found.is_empty() {
        let why = explain_empty(
            &project,
            &store,
            &f,
            &format!("No tests found for '{symbol}' (by name, or test functions that mention it)."),
        );
        return ToolReply::ok(why.clone(), json!({ "results": [], "reason": why }));
    }
    let mode = Mode::parse(args.get("output_mode").and_then(Value::as_str), Mode::Signatures);
    if mode == Mode::Count {
        return ToolReply::ok(format!("{} test(s) for {symbol}", found.len()), json!({ "total": found.len() }));
    }
    let mut chunks: Vec<Candidate> = found.iter().map(|(c, _)| c.clone()).collect();
    chunks.sort_by(|a, b| a.path.cmp(&b.path).then(a.start_line.cmp(&b.start_line)));
    let page = match super::page(args, 50, 0) {
        Ok(p) => p,
        Err(reply) => return reply,
    };
    let r = format::outline(&chunks, mode, page);
    let why: Vec<Value> =
        found.iter().map(|(c, w)| json!({ "path": c.path, "name": c.name, "line": c.start_line, "why": w })).collect();
    ToolReply::ok(format!("tests for {symbol}: {}", r.text), json!({ "results": r.results, "why": why }))
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}
