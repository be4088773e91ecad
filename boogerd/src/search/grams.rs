//! From a regex to the trigrams a matching line must contain, as an FTS5 query on the
//! `chunk_grams` table (see [`crate::store::grams`]): what lets `grep` read a few chunks
//! instead of all.
//!
//! The query is a necessary condition, never a sufficient one: every chunk holding a match
//! satisfies it, and the regex engine confirms each candidate. Literals give trigrams (ANDed
//! within a concatenation, ORed across an alternation); anything else (classes, optional or
//! repeated-zero parts, anchors) asks nothing. The index folds case as a case-insensitive
//! regex does for ASCII letters, so a case-insensitive search uses only the literals' ASCII
//! runs; a case-sensitive one uses every byte.

use regex_syntax::hir::{Hir, HirKind};

use crate::store::grams::{self, Gram};

/// A literal contributes at most this many trigrams (spread along it): enough to narrow, and a
/// 4,000-character literal does not become a 4,000-term query.
const MAX_GRAMS_PER_LITERAL: usize = 12;

/// What a line must contain for the pattern to match in it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Need {
    /// Nothing can be required.
    Anything,
    Gram(Gram),
    All(Vec<Need>),
    OneOf(Vec<Need>),
}

/// The FTS5 expression that every chunk with a match of `pattern` satisfies, or `None` when
/// the pattern has no literal of three characters to narrow by (the caller scans). The
/// pattern is parsed as written; `case_insensitive` is the flag the search applies on top.
pub fn required(pattern: &str, case_insensitive: bool) -> Option<String> {
    let hir = regex_syntax::ParserBuilder::new().build().parse(pattern).ok()?;
    let needs = Needs { ascii_only: case_insensitive };
    match simplify(needs.of(&hir)) {
        Need::Anything => None,
        n => Some(expression(&n)),
    }
}

struct Needs {
    ascii_only: bool,
}

impl Needs {
    fn of(&self, hir: &Hir) -> Need {
        match hir.kind() {
            HirKind::Literal(lit) => self.literal(&lit.0),
            HirKind::Capture(c) => self.of(&c.sub),
            HirKind::Repetition(r) if r.min >= 1 => self.of(&r.sub),
            HirKind::Concat(parts) => Need::All(self.concat(parts)),
            HirKind::Alternation(arms) => Need::OneOf(arms.iter().map(|a| self.of(a)).collect()),
            HirKind::Empty | HirKind::Class(_) | HirKind::Look(_) | HirKind::Repetition(_) => Need::Anything,
        }
    }

    /// Adjacent literal parts of a concatenation are joined first, so trigrams that span them
    /// count (the parser keeps `a` and `bc` apart around a group, for instance).
    fn concat(&self, parts: &[Hir]) -> Vec<Need> {
        let mut needs = Vec::new();
        let mut run: Vec<u8> = Vec::new();
        for part in parts {
            match part.kind() {
                HirKind::Literal(lit) => run.extend_from_slice(&lit.0),
                _ => {
                    needs.push(self.literal(&std::mem::take(&mut run)));
                    needs.push(self.of(part));
                }
            }
        }
        needs.push(self.literal(&run));
        needs
    }

    /// The trigrams of each run of three or more usable bytes in `bytes`.
    fn literal(&self, bytes: &[u8]) -> Need {
        let mut needs = Vec::new();
        for run in bytes.split(|b| self.ascii_only && !b.is_ascii()) {
            let mut all: Vec<Gram> = Vec::new();
            grams::each_gram(run, |g| all.push(g));
            let step = all.len().div_ceil(MAX_GRAMS_PER_LITERAL).max(1);
            for (i, g) in all.iter().enumerate() {
                if i % step == 0 || i == all.len() - 1 {
                    needs.push(Need::Gram(*g));
                }
            }
        }
        if needs.is_empty() { Need::Anything } else { Need::All(needs) }
    }
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
        Need::Gram(g) => {
            let mut t = String::new();
            grams::token(*g, &mut t);
            t
        }
        Need::All(parts) => format!("({})", parts.iter().map(expression).collect::<Vec<_>>().join(" AND ")),
        Need::OneOf(arms) => format!("({})", arms.iter().map(expression).collect::<Vec<_>>().join(" OR ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The token of a three-byte gram, as the index writes it.
    fn t(gram: &str) -> String {
        let mut g = 0;
        grams::each_gram(gram.as_bytes(), |x| g = x);
        let mut out = String::new();
        grams::token(g, &mut out);
        out
    }

    #[test]
    fn literals_give_trigrams_and_the_rest_asks_nothing() {
        let r = |p: &str| required(p, false);
        assert_eq!(r("abc"), Some(t("abc")));
        assert_eq!(r("abcd"), Some(format!("({} AND {})", t("abc"), t("bcd"))));
        assert_eq!(r("Foo.*bar"), Some(format!("({} AND {})", t("bar"), t("foo"))));
        assert_eq!(
            r("TODO|FIXME"),
            Some(format!("(({} AND {}) OR ({} AND {} AND {}))", t("odo"), t("tod"), t("fix"), t("ixm"), t("xme")))
        );
        assert_eq!(r("a.c"), None);
        assert_eq!(r("ab"), None);
        assert_eq!(r("\\w+"), None);
        assert_eq!(r("(foo)?bar"), Some(t("bar")));
        assert_eq!(r("foo|\\d+"), None, "an arm that asks nothing");
        assert_eq!(r("x(abc)+"), Some(t("abc")));
        assert_eq!(r("(unclosed"), None, "not a regex: the caller reports it");
        assert!(r("é_a").is_some_and(|e| e.matches(" AND ").count() == 1), "bytes, as written: two trigrams");
        assert_eq!(required("é_a", true), None, "case-insensitively only ASCII runs count");
        assert_eq!(required("xé_abc", true), Some(format!("({} AND {})", t("_ab"), t("abc"))), "the ASCII run after é");
    }

    /// Against real files in a real index (written and read as the indexer and grep do):
    /// every file where the regex matches a line is among the candidates, for either case
    /// flag, whatever the pattern.
    #[test]
    fn every_file_with_a_match_is_a_candidate() {
        use crate::store::search::{Filters, Keep};
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("index"), dir.path()).unwrap();
        let files = [
            "def __init__(self): raise ValueError(\"bad\")",
            "CLASS Foo:\n    x = 'Straße'\n",
            "the \u{212A}elvin sign and a cla\u{17F}s with long s",
            "TODO: fix me\nfixme later",
            "caf\u{e9} CAF\u{c9} na\u{ef}ve a\"\"b",
            "",
        ];
        let writes: Vec<crate::store::FileWrite> = files
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let path = format!("{i}.txt");
                let chunks =
                    crate::index::chunk::chunk_file(std::path::Path::new(&path), text.as_bytes(), false).chunks;
                crate::store::FileWrite {
                    path,
                    size: text.len() as u64,
                    mtime_ns: 0,
                    hash: i.to_string(),
                    language: "text".to_owned(),
                    problem: None,
                    grams: Some(grams::tokens_of(chunks.iter().map(|c| c.content.as_str()))),
                    chunks: Some(chunks),
                }
            })
            .collect();
        store.write_batch(&writes, &[], "t").unwrap();
        let patterns = [
            "def __init__",
            "raise (Value|Type)Error",
            "\"bad\"",
            "a\"\"b",
            "xx{3}yz_",
            "[a-z]+_init",
            "class foo",
            "CLASS",
            "key",
            "kelvin",
            "class",
            "CLASS",
            "Straße",
            "STRASSE",
            "straße",
            "café",
            "CAFÉ",
            "todo|fixme",
            "FIXME",
            "fix me",
            "\\(self\\)",
            "naïve",
            "NAÏVE",
            "sign and",
            "long s$",
        ];
        let mut narrowed = 0;
        for p in patterns {
            for ci in [false, true] {
                let re = regex::RegexBuilder::new(p).case_insensitive(ci).build().unwrap();
                let matching: Vec<i64> =
                    (0..files.len()).filter(|&i| files[i].lines().any(|l| re.is_match(l))).map(|i| i as i64).collect();
                let Some(e) = required(p, ci) else { continue };
                let mut found: Vec<i64> = Vec::new();
                store
                    .scan(
                        &Filters::default(),
                        Some(&e),
                        |_| Keep::Yes,
                        |c, _| {
                            found.push(c.path.trim_end_matches(".txt").parse().unwrap());
                            true
                        },
                    )
                    .unwrap();
                for m in &matching {
                    assert!(found.contains(m), "{p:?} (case-insensitive {ci}) matches file {m} but {e:?} misses it");
                }
                found.dedup();
                narrowed += usize::from(found.len() < files.len() / 2);
            }
        }
        assert!(narrowed > 30, "the trigrams narrowed only {narrowed} searches");
    }
}
