//! From a regex to the trigrams a matching chunk must contain, as an FTS5 query on the
//! `chunks_tri` table (trigram tokenizer): what lets `grep` read a few chunks instead of all.
//!
//! The query is a necessary condition, never a sufficient one: every chunk holding a match
//! satisfies it, and the regex engine confirms each candidate. Literals give trigrams (ANDed
//! within a concatenation, ORed across an alternation); anything else (classes, optional or
//! repeated-zero parts, anchors) asks nothing. Only ASCII literals are used: the tokenizer
//! folds ASCII case exactly as a case-insensitive regex does, so one query serves both.

use regex_syntax::hir::{Hir, HirKind};

/// A literal contributes at most this many trigrams (spread along it): enough to narrow, and a
/// 4,000-character literal does not become a 4,000-term query.
const MAX_GRAMS_PER_LITERAL: usize = 12;

/// What a chunk must contain for the pattern to match in it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Need {
    /// Nothing can be required.
    Anything,
    Gram(String),
    All(Vec<Need>),
    OneOf(Vec<Need>),
}

/// The FTS5 expression that every chunk with a match of `pattern` satisfies, or `None` when
/// the pattern has no literal of three characters to narrow by (the caller scans).
pub fn required(pattern: &str) -> Option<String> {
    let hir = regex_syntax::ParserBuilder::new().build().parse(pattern).ok()?;
    match simplify(need(&hir)) {
        Need::Anything => None,
        n => Some(expression(&n)),
    }
}

fn need(hir: &Hir) -> Need {
    match hir.kind() {
        HirKind::Literal(lit) => literal(&lit.0),
        HirKind::Capture(c) => need(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => need(&r.sub),
        HirKind::Concat(parts) => Need::All(concat_needs(parts)),
        HirKind::Alternation(arms) => Need::OneOf(arms.iter().map(need).collect()),
        HirKind::Empty | HirKind::Class(_) | HirKind::Look(_) | HirKind::Repetition(_) => Need::Anything,
    }
}

/// Adjacent literal parts of a concatenation are joined first, so trigrams that span them
/// count (the parser keeps `a` and `bc` apart around a group, for instance).
fn concat_needs(parts: &[Hir]) -> Vec<Need> {
    let mut needs = Vec::new();
    let mut run: Vec<u8> = Vec::new();
    for part in parts {
        match part.kind() {
            HirKind::Literal(lit) => run.extend_from_slice(&lit.0),
            _ => {
                needs.push(literal(&std::mem::take(&mut run)));
                needs.push(need(part));
            }
        }
    }
    needs.push(literal(&run));
    needs
}

/// The trigrams of each ASCII run of three or more characters in `bytes`.
fn literal(bytes: &[u8]) -> Need {
    let mut grams = Vec::new();
    for run in bytes.split(|b| !b.is_ascii() || *b == 0) {
        if run.len() < 3 {
            continue;
        }
        let all: Vec<&[u8]> = run.windows(3).collect();
        let step = all.len().div_ceil(MAX_GRAMS_PER_LITERAL).max(1);
        for (i, g) in all.iter().enumerate() {
            if i % step == 0 || i == all.len() - 1 {
                grams.push(Need::Gram(String::from_utf8_lossy(g).to_ascii_lowercase()));
            }
        }
    }
    if grams.is_empty() { Need::Anything } else { Need::All(grams) }
}

/// Drops what asks nothing; an alternation with an arm that asks nothing asks nothing.
fn simplify(n: Need) -> Need {
    match n {
        Need::All(parts) => {
            let mut kept: Vec<Need> = Vec::new();
            for p in parts.into_iter().map(simplify) {
                match p {
                    Need::Anything => {}
                    Need::All(inner) => kept.extend(inner),
                    other => kept.push(other),
                }
            }
            kept.sort_by_key(expression);
            kept.dedup();
            match kept.len() {
                0 => Need::Anything,
                1 => kept.pop().expect("one"),
                _ => Need::All(kept),
            }
        }
        Need::OneOf(arms) => {
            let arms: Vec<Need> = arms.into_iter().map(simplify).collect();
            if arms.is_empty() || arms.contains(&Need::Anything) {
                return Need::Anything;
            }
            if arms.len() == 1 { arms.into_iter().next().expect("one") } else { Need::OneOf(arms) }
        }
        other => other,
    }
}

fn expression(n: &Need) -> String {
    match n {
        Need::Anything => String::new(),
        Need::Gram(g) => format!("\"{}\"", g.replace('"', "\"\"")),
        Need::All(parts) => format!("({})", parts.iter().map(expression).collect::<Vec<_>>().join(" AND ")),
        Need::OneOf(arms) => format!("({})", arms.iter().map(expression).collect::<Vec<_>>().join(" OR ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_give_trigrams_and_the_rest_asks_nothing() {
        assert_eq!(required("abc").as_deref(), Some("\"abc\""));
        assert_eq!(required("abcd").as_deref(), Some("(\"abc\" AND \"bcd\")"));
        assert_eq!(required("Foo.*bar").as_deref(), Some("(\"bar\" AND \"foo\")"));
        assert_eq!(
            required("TODO|FIXME").as_deref(),
            Some("((\"odo\" AND \"tod\") OR (\"fix\" AND \"ixm\" AND \"xme\"))")
        );
        assert_eq!(required("a.c"), None);
        assert_eq!(required("ab"), None);
        assert_eq!(required("\\w+"), None);
        assert_eq!(required("(foo)?bar").as_deref(), Some("\"bar\""));
        assert_eq!(required("foo|\\d+"), None, "an arm that asks nothing");
        assert_eq!(required("x(abc)+").as_deref(), Some("\"abc\""));
        assert_eq!(required("a\"bc").as_deref(), Some("(\"\"\"bc\" AND \"a\"\"b\")"));
        assert_eq!(required("(unclosed"), None, "not a regex: the caller reports it");
    }

    /// Whatever the pattern, the expression is one FTS5 parses.
    #[test]
    fn every_expression_parses() {
        let db = rusqlite::Connection::open_in_memory().unwrap();
        db.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(content, tokenize = 'trigram', detail = 'none');
             INSERT INTO t VALUES ('def __init__(self): raise ValueError(\"bad\")');",
        )
        .unwrap();
        for p in [
            "def __init__",
            "raise (Value|Type)Error",
            "\"bad\"",
            "a\"\"b",
            "xx{3}yz_",
            "[a-z]+_init",
            "é_abc_ü",
            "\\(self\\)",
        ] {
            let e = required(p).unwrap();
            let r = db.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [&e], |r| r.get::<_, i64>(0));
            assert!(r.is_ok(), "{p:?} became {e:?}: {r:?}");
        }
    }
}
