//! From a regex to the trigrams a matching line must contain, as an FTS5 query on the
//! `chunk_grams` table (see [`crate::store::grams`]): what lets `grep` read a few chunks
//! instead of all.
//!
//! The query is a necessary condition, never a sufficient one: every chunk holding a match
//! satisfies it, and the regex engine confirms each candidate. Literals give trigrams (ANDed
//! within a concatenation, ORed across an alternation); `^` and `$` are the newlines the index
//! puts around each line; anything else (classes, optional or repeated-zero parts, other
//! looks) asks nothing. The index folds case as a case-insensitive regex does for ASCII
//! letters, so a case-insensitive search uses only the literals' ASCII runs; a case-sensitive
//! one uses every byte. A pattern without a literal of three characters is narrowed by the
//! shapes of its characters instead ([`shapes`]).

mod shapes;

use regex_syntax::hir::{Hir, HirKind};

use regex_syntax::hir::Look;

use crate::store::grams::{self, Gram, ShapeGram};
#[cfg(feature = "team")]
use crate::store::team::TeamGrams;

/// A literal contributes at most this many trigrams (spread along it): enough to narrow, and a
/// 4,000-character literal does not become a 4,000-term query.
const MAX_GRAMS_PER_LITERAL: usize = 12;

/// What a line must contain for the pattern to match in it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Need {
    /// Nothing can be required.
    Anything,
    Gram(Gram),
    Shape(ShapeGram),
    All(Vec<Need>),
    OneOf(Vec<Need>),
}

/// Expressions with more terms than this are not worth their lookups (and too long for FTS5's
/// parser to be quick): such a pattern is scanned.
const MAX_TERMS: usize = 200;

/// The FTS5 expression that every chunk with a match of `pattern` satisfies, or `None` when
/// neither its literals nor its shapes narrow anything (the caller scans). The pattern is
/// parsed as written; `case_insensitive` is the flag the search applies on top.
pub(crate) fn required(pattern: &str, case_insensitive: bool) -> Option<String> {
    need(pattern, case_insensitive, true).map(|n| expression(&n))
}

/// [`required`]'s condition as the team index asks it, of the numbers it keeps a blob's
/// trigrams as.
#[cfg(feature = "team")]
pub(crate) fn required_in_team(pattern: &str, case_insensitive: bool) -> Option<TeamGrams> {
    need(pattern, case_insensitive, false).map(|n| in_team(&n))
}

/// What every line matching `pattern` holds, when that narrows anything and is not too long.
/// `local`: as the local index asks it, which leaves the [common](grams::is_common) byte
/// trigrams out (the team index keeps them).
fn need(pattern: &str, case_insensitive: bool, local: bool) -> Option<Need> {
    let hir = regex_syntax::ParserBuilder::new().build().parse(pattern).ok()?;
    let needs = Needs { ascii_only: case_insensitive, anchors: anchors_mark_lines(&hir), local };
    let need = match simplify(needs.of(&hir)) {
        Need::Anything => simplify(shapes::need(pattern, case_insensitive)?),
        n => n,
    };
    (need != Need::Anything && terms(&need) <= MAX_TERMS).then_some(need)
}

/// Whether `^` and `$` can stand for the newline before and after the line: the index frames
/// every line so. Not if one is repeated (`(^)+`, `^^`), where two would stand for one.
fn anchors_mark_lines(hir: &Hir) -> bool {
    fn count(hir: &Hir, repeated: bool, starts: &mut usize, ends: &mut usize) -> bool {
        match hir.kind() {
            HirKind::Look(l) if is_line_edge(*l) => {
                let n = if matches!(l, Look::Start | Look::StartLF) { starts } else { ends };
                *n += 1;
                !repeated
            }
            HirKind::Repetition(r) => count(&r.sub, repeated || r.max != Some(1), starts, ends),
            HirKind::Capture(c) => count(&c.sub, repeated, starts, ends),
            HirKind::Concat(parts) | HirKind::Alternation(parts) => {
                parts.iter().all(|p| count(p, repeated, starts, ends))
            }
            _ => true,
        }
    }
    let (mut starts, mut ends) = (0, 0);
    count(hir, false, &mut starts, &mut ends) && starts <= 1 && ends <= 1
}

/// A line's start or end (`^`, `$`, with or without `(?m)`: a line has no newline inside).
fn is_line_edge(look: Look) -> bool {
    matches!(look, Look::Start | Look::End | Look::StartLF | Look::EndLF)
}

fn terms(n: &Need) -> usize {
    match n {
        Need::Anything => 0,
        Need::Gram(_) | Need::Shape(_) => 1,
        Need::All(parts) | Need::OneOf(parts) => parts.iter().map(terms).sum(),
    }
}

struct Needs {
    ascii_only: bool,
    /// `^` and `$` are newlines ([`anchors_mark_lines`]).
    anchors: bool,
    /// The common byte trigrams are not in the index, so not asked for.
    local: bool,
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
                HirKind::Look(l) if self.anchors && is_line_edge(*l) => run.push(b'\n'),
                _ => {
                    needs.push(self.literal(&std::mem::take(&mut run)));
                    needs.push(self.of(part));
                }
            }
        }
        needs.push(self.literal(&run));
        needs
    }

    /// The trigrams of each run of three or more usable bytes in `bytes` (but the common
    /// ones, [`Needs::local`]).
    fn literal(&self, bytes: &[u8]) -> Need {
        let mut needs = Vec::new();
        for run in bytes.split(|b| self.ascii_only && !b.is_ascii()) {
            let mut all: Vec<Gram> = Vec::new();
            grams::each_gram(run, |g| all.push(g));
            all.retain(|&g| !(self.local && grams::is_common(g)));
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

/// A simplified need (nothing in it is [`Need::Anything`]) in the team index's numbers.
#[cfg(feature = "team")]
fn in_team(n: &Need) -> TeamGrams {
    match n {
        Need::Anything => TeamGrams::All(Vec::new()),
        Need::Gram(g) => TeamGrams::Gram(grams::team_gram(*g)),
        Need::Shape(g) => TeamGrams::Gram(grams::team_shape(*g)),
        Need::All(parts) => TeamGrams::All(parts.iter().map(in_team).collect()),
        Need::OneOf(arms) => TeamGrams::OneOf(arms.iter().map(in_team).collect()),
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
        Need::Shape(g) => {
            let mut t = String::new();
            grams::shape_token(*g, &mut t);
            t
        }
        Need::All(parts) => format!("({})", parts.iter().map(expression).collect::<Vec<_>>().join(" AND ")),
        Need::OneOf(arms) => format!("({})", arms.iter().map(expression).collect::<Vec<_>>().join(" OR ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The team index asks the same trigrams with the same grouping, in its numbers (what
    /// team grep finds is checked against `rg` end to end).
    #[cfg(feature = "team")]
    #[test]
    fn the_team_index_asks_the_same_condition_in_numbers() {
        let number = |text: &str| {
            let mut g = 0;
            grams::each_gram(text.as_bytes(), |x| g = x);
            TeamGrams::Gram(grams::team_gram(g))
        };
        let team = required_in_team("parse_(header|footer)", false).unwrap();
        let TeamGrams::All(parts) = &team else { panic!("{team:?}") };
        for literal in ["par", "ars", "rse", "se_"] {
            assert!(parts.contains(&number(literal)), "{literal}: {team:?}");
        }
        let arms = parts.iter().find_map(|p| if let TeamGrams::OneOf(a) = p { Some(a) } else { None }).unwrap();
        assert_eq!(arms.len(), 2, "{team:?}");
        let TeamGrams::All(header) = &arms[0] else { panic!("{team:?}") };
        assert!(header.contains(&number("ead")) && !header.contains(&number("oot")), "{team:?}");
        // Shapes are numbered apart from every byte trigram.
        fn numbers(g: &TeamGrams, out: &mut Vec<i32>) {
            match g {
                TeamGrams::Gram(n) => out.push(*n),
                TeamGrams::All(parts) | TeamGrams::OneOf(parts) => parts.iter().for_each(|p| numbers(p, out)),
            }
        }
        let mut shapes = Vec::new();
        numbers(&required_in_team(r"\d{4}-\d{2}", false).unwrap(), &mut shapes);
        assert!(!shapes.is_empty() && shapes.iter().all(|n| *n >= 1 << 24), "{shapes:?}");
    }
    use crate::store::grams::{DIGIT, SPACE, Shape, UPPER};

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
        assert!(
            required("é_a", true)
                .is_some_and(|e| e.split(['(', ')', ' ']).all(|t| t.is_empty() || t == "OR" || t.starts_with('x'))),
            "case-insensitively only ASCII runs count: here none, and its shapes narrow"
        );
        assert_eq!(required("xé_abc", true), Some(format!("({} AND {})", t("_ab"), t("abc"))), "the ASCII run after é");
    }

    /// The common trigrams, which the index leaves out, are not asked for: a literal of
    /// nothing else asks nothing. The team index keeps them, and is asked them.
    #[test]
    fn common_trigrams_are_not_asked_for() {
        assert_eq!(required("return", false), None);
        let define = required("define FOO_BAR", false).unwrap();
        assert!(!define.contains(&t("def")) && define.contains(&t("o_b")), "{define}");
        #[cfg(feature = "team")]
        assert!(required_in_team("return", false).is_some());
    }

    #[test]
    fn anchors_are_the_newlines_around_a_line() {
        let r = |p: &str| required(p, false);
        assert_eq!(r("^cl"), Some(t("\ncl")));
        assert_eq!(r("rn$"), Some(t("rn\n")));
        assert_eq!(r("(?m)^ab$"), Some(format!("({} AND {})", t("\nab"), t("ab\n"))));
        assert_eq!(r("^^ab"), None, "two anchors stand for one newline: none is used");
        assert_eq!(r("(^)+ab"), None);
        assert_eq!(r("\\Aab"), Some(t("\nab")), "a line's start too");
    }

    /// The shape trigram of three shapes, as the index writes it.
    fn shape(s: &[Shape]) -> String {
        let mut out = String::new();
        grams::shape_token(grams::shape_gram(s[0], s[1], s[2]), &mut out);
        out
    }

    #[test]
    fn patterns_without_a_literal_are_narrowed_by_shapes() {
        let r = |p: &str| required(p, false);
        let digits = r("\\d{4}").expect("digits narrow");
        assert!(digits.contains(&shape(&[DIGIT, DIGIT, DIGIT])), "{digits}");
        let constant = r("[A-Z]{3,}_[A-Z]+ =").expect("a constant's shape narrows");
        for s in [[UPPER, UPPER, UPPER], [UPPER, UPPER, grams::shape('_')], [UPPER, SPACE, grams::shape('=')]] {
            assert!(constant.contains(&shape(&s)), "{constant}");
        }
        let comment = r("^\\s+#").expect("an indented comment's shape narrows");
        assert!(comment.contains(&shape(&[SPACE, SPACE, grams::shape('#')])), "{comment}");
        assert_eq!(r("[a-z]+ [a-z]+"), None, "lower case and spaces are in every chunk");
        assert_eq!(r("\\w+"), None);
        assert_eq!(r("\\d|x"), None, "a one-character match holds no trigram");
        assert_eq!(required("[A-Z]{3}", true), None, "either case: lower-case runs are not kept");
        assert!(required("[A-Z]{2}_", true).is_some_and(|e| e.contains(" OR ")), "either case");
    }

    /// The chunks of `texts` (as files) in a real index, each with the lines `grep` finds in
    /// it for `pattern` (its own text, line by line); and the chunks the trigram query for the
    /// pattern leaves. The second must hold every chunk of the first with a line.
    fn candidates_hold_every_match(store: &crate::store::Store, patterns: &[String]) -> usize {
        use crate::domain::search::lines::LineMatcher;
        use crate::store::{scan::Keep, search::Filters};
        let mut all: Vec<(i64, String, String, usize)> = Vec::new();
        store
            .scan(
                &Filters::default(),
                None,
                |_| Keep::Yes,
                |c, text| {
                    let own = grams::own_start(c.kind, text, c.bytes);
                    all.push((c.id, c.path.clone(), text.to_owned(), own));
                    true
                },
            )
            .unwrap();
        let mut narrowed = 0;
        for p in patterns {
            for ci in [false, true] {
                let Ok(m) = LineMatcher::new(p, ci) else { continue };
                let Some(e) = required(p, ci) else { continue };
                let found: Vec<i64> = crate::store::testing::scanned(store, &e).iter().map(|c| c.id).collect();
                for (id, path, text, own) in &all {
                    let mut hit = None;
                    m.each_line(&text[*own..], |_, line| {
                        hit = Some(line.to_owned());
                        false
                    });
                    if let Some(line) = hit {
                        assert!(
                            found.contains(id),
                            "{p:?} (case-insensitive {ci}) matches {line:?} in {path} but {e:?} misses its chunk"
                        );
                    }
                }
                narrowed += usize::from(found.len() < all.len() / 2);
            }
        }
        narrowed
    }

    /// A real index of `files` (name, text), written as the indexer writes it.
    fn index_of(files: &[(&str, String)]) -> (tempfile::TempDir, crate::store::Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("index"), dir.path()).unwrap();
        let writes: Vec<_> =
            files.iter().map(|(path, text)| crate::store::testing::file_write(path, text, true)).collect();
        store.write_batch(&writes, &[], "t").unwrap();
        (dir, store)
    }

    fn corpus() -> Vec<(&'static str, String)> {
        // A Markdown section long enough to be cut into pieces, some starting mid-line.
        let long: String = (0..120).map(|i| format!("Zeta {i} is here. ")).collect();
        vec![
            ("0.txt", "def __init__(self): raise ValueError(\"bad\")".to_owned()),
            ("1.txt", "CLASS Foo:\n    x = 'Straße'\n".to_owned()),
            ("2.txt", "the \u{212A}elvin sign and a cla\u{17F}s with long s".to_owned()),
            ("3.txt", "TODO: fix me\nfixme later".to_owned()),
            ("4.txt", "caf\u{e9} CAF\u{c9} na\u{ef}ve a\"\"b".to_owned()),
            ("5.txt", String::new()),
            (
                "6.py",
                "MAX_SIZE = 1990\n\nclass A:\n    # note\n    def f(self):\n        return\n\n\t# tab\n}\n".to_owned(),
            ),
            ("7.c", "#define FOO_H 1\r\nint x = 20241;  \r\n}\r\n  \r\n".to_owned()),
            ("8.md", format!("# Title\n\n{long}\n\nlast line\n")),
            ("9.txt", "\u{661}\u{662}\u{663}\u{664} \u{3000}# wide\n\u{85}x $ ^ \\d".to_owned()),
        ]
    }

    /// Against real files in a real index (written and read as the indexer and grep do):
    /// every chunk where the regex matches a line is among the candidates, for either case
    /// flag, whatever the pattern.
    #[test]
    fn every_chunk_with_a_match_is_a_candidate() {
        let (_dir, store) = index_of(&corpus());
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
            "^class",
            "^\\s+#",
            "^\\s*#",
            "return$",
            "^}",
            "\\s+$",
            "^$",
            "\\d{4}",
            "\\d{4,}",
            "[A-Z]{3,}_[A-Z]+ =",
            "#define \\w+_H\\b",
            "^Zeta",
            "here\\.$",
            "^\\d+ is",
            "\\s#",
            "[^a-z ]{3}",
            ".{3}",
            "(?m)^int",
            "\\d\\d\\d\\d",
            "\\s\\s#",
            "^ *#",
        ];
        let patterns: Vec<String> = patterns.iter().map(|p| (*p).to_owned()).collect();
        assert!(candidates_hold_every_match(&store, &patterns) > 40);
    }

    /// The same for random patterns made of the parts that shapes and anchors narrow by.
    #[test]
    fn random_patterns_never_miss_a_match() {
        let (_dir, store) = index_of(&corpus());
        let atoms = [
            "\\d", "[A-Z]", "[a-z]", "\\s", "\\w", "\\W", ".", "_", "=", "#", " ", "x", "e", "S", "1", "\\.", "^", "$",
            "(a|\\d)", "[^ ]", "é", "\\b", "}", "[_=]",
        ];
        let quantifiers = ["", "", "", "+", "*", "?", "{2}", "{3,}", "{1,4}"];
        let mut rng = crate::base::rng::Rng::new(20);
        let patterns: Vec<String> = (0..400)
            .map(|_| (0..1 + rng.below(6)).map(|_| format!("{}{}", rng.pick(&atoms), rng.pick(&quantifiers))).collect())
            .collect();
        assert!(candidates_hold_every_match(&store, &patterns) > 50);
    }
}
