//! From a regex to the shape trigrams every match holds (see [`crate::store::grams::shape`]):
//! how `grep` narrows a pattern without a literal of three characters, such as `\d{4}` or
//! `[A-Z]{3,}_[A-Z]+ =`.
//!
//! Each part of the regex is summarised by what its matches look like at their edges: which
//! matches are at most one character long, and the first and last two shapes of the longer
//! ones. Joining two parts, every pair of an edge of the left and an edge of the right is a
//! string the text holds, whose trigrams are needed (one of the pairs', so an OR); the needs
//! of the parts are ANDed. Repetitions are widened to something simpler that matches at
//! least as much (`x{4,9}` as `xxx` then `x*`), which keeps every need true.

use std::collections::BTreeSet;

use regex_syntax::hir::{Class, Hir, HirKind};

use super::Need;
use crate::store::grams::{self, SHAPES, SPACE, Shape};

/// Edge sets larger than this are given up as unknown.
const MAX_EDGES: usize = 64;
/// Joins with more edge pairs than this ask nothing.
const MAX_PAIRS: usize = 128;

/// A set of shapes, one bit each.
type Shapes = u64;

/// Pairs of shapes: the first or last two of longer matches (`None`: too many to list).
type Edges = Option<BTreeSet<(Shape, Shape)>>;

const EVERY_SHAPE: Shapes = (1 << SHAPES) - 1;

/// What the matches of a part of the regex look like, as shapes.
#[derive(Debug, Clone)]
struct Info {
    /// It can match the empty string.
    empty: bool,
    /// The shapes of its one-character matches.
    one: Shapes,
    /// The first two shapes of each longer match.
    first: Edges,
    /// The last two shapes of each longer match.
    last: Edges,
    /// What every match holds.
    need: Need,
}

impl Info {
    fn empty() -> Info {
        Info { empty: true, one: 0, first: Some(BTreeSet::new()), last: Some(BTreeSet::new()), need: Need::Anything }
    }

    fn one_of(shapes: Shapes) -> Info {
        Info { empty: false, one: shapes, ..Info::empty() }
    }

    /// Anything at all.
    fn unknown() -> Info {
        Info { empty: true, one: EVERY_SHAPE, first: None, last: None, need: Need::Anything }
    }
}

/// The shape trigrams every line matching `pattern` holds (as a [`Need`] to simplify), or
/// `None` if the pattern does not parse.
pub(super) fn need(pattern: &str, case_insensitive: bool) -> Option<Need> {
    let hir = regex_syntax::ParserBuilder::new().case_insensitive(case_insensitive).build().parse(pattern).ok()?;
    let anchors = super::anchors_mark_lines(&hir);
    Some(Shaper { anchors }.of(&hir).need)
}

struct Shaper {
    /// `^` and `$` stand for the newline before and after the line (see
    /// [`super::anchors_mark_lines`]).
    anchors: bool,
}

impl Shaper {
    fn of(&self, hir: &Hir) -> Info {
        match hir.kind() {
            HirKind::Empty => Info::empty(),
            HirKind::Literal(lit) => literal(&lit.0),
            HirKind::Class(Class::Unicode(c)) => {
                let mut shapes = 0;
                for r in c.ranges() {
                    if !r.end().is_ascii() {
                        shapes |= 1 << grams::WIDE;
                    }
                    let (start, end) = (r.start() as u32, (r.end() as u32).min(0x7F));
                    for c in (start..=end).filter_map(char::from_u32) {
                        shapes |= 1 << grams::shape(c);
                    }
                }
                Info::one_of(shapes)
            }
            HirKind::Class(Class::Bytes(c)) => {
                if c.ranges().iter().any(|r| !r.end().is_ascii()) {
                    return Info::unknown();
                }
                let shapes = c
                    .ranges()
                    .iter()
                    .flat_map(|r| r.start()..=r.end())
                    .fold(0, |s, b| s | 1 << grams::shape(b as char));
                Info::one_of(shapes)
            }
            HirKind::Look(look) if self.anchors && super::is_line_edge(*look) => Info::one_of(1 << SPACE),
            HirKind::Look(_) => Info::empty(),
            HirKind::Capture(c) => self.of(&c.sub),
            HirKind::Concat(parts) => parts.iter().fold(Info::empty(), |info, p| join(info, self.of(p))),
            HirKind::Alternation(arms) => {
                let arms: Vec<Info> = arms.iter().map(|a| self.of(a)).collect();
                either(arms)
            }
            HirKind::Repetition(r) => {
                let x = self.of(&r.sub);
                match (r.min, r.max) {
                    (_, Some(0)) => Info::empty(),
                    (0, Some(1)) => either(vec![Info::empty(), x]),
                    (min, max) => {
                        let k = min.min(3);
                        let base = (0..k).fold(Info::empty(), |info, _| join(info, x.clone()));
                        if max == Some(min) && min <= 3 { base } else { join(base, star(x)) }
                    }
                }
            }
        }
    }
}

/// A literal's shapes: its trigrams, and its edges.
fn literal(bytes: &[u8]) -> Info {
    let Ok(text) = std::str::from_utf8(bytes) else { return Info::unknown() };
    let s: Vec<Shape> = text.chars().map(grams::shape).collect();
    match s.len() {
        0 => Info::empty(),
        1 => Info::one_of(1 << s[0]),
        n => Info {
            empty: false,
            one: 0,
            first: Some(BTreeSet::from([(s[0], s[1])])),
            last: Some(BTreeSet::from([(s[n - 2], s[n - 1])])),
            need: Need::All(s.windows(3).map(|w| gram(w[0], w[1], w[2])).collect()),
        },
    }
}

/// A shape trigram's need: nothing for one the index does not keep.
fn gram(a: Shape, b: Shape, c: Shape) -> Need {
    let g = grams::shape_gram(a, b, c);
    if grams::shape_gram_kept(g) { Need::Shape(g) } else { Need::Anything }
}

fn shapes_of(set: Shapes) -> impl Iterator<Item = Shape> {
    (0..SHAPES as Shape).filter(move |s| set & (1 << s) != 0)
}

/// `a` then `b`.
fn join(a: Info, b: Info) -> Info {
    let first = match (&a.first, &b.first) {
        (Some(af), Some(bf)) => {
            let mut first = af.clone();
            let seconds = b.one | bf.iter().fold(0, |s, &(x, _)| s | 1 << x);
            first.extend(shapes_of(a.one).flat_map(|x| shapes_of(seconds).map(move |y| (x, y))));
            if a.empty {
                first.extend(bf.iter().copied());
            }
            capped(first)
        }
        _ => None,
    };
    let last = match (&a.last, &b.last) {
        (Some(al), Some(bl)) => {
            let mut last = bl.clone();
            let befores = a.one | al.iter().fold(0, |s, &(_, y)| s | 1 << y);
            last.extend(shapes_of(befores).flat_map(|x| shapes_of(b.one).map(move |y| (x, y))));
            if b.empty {
                last.extend(al.iter().copied());
            }
            capped(last)
        }
        _ => None,
    };
    let boundary = boundary(&a, &b);
    Info {
        empty: a.empty && b.empty,
        one: (if a.empty { b.one } else { 0 }) | (if b.empty { a.one } else { 0 }),
        first,
        last,
        need: Need::All(vec![a.need, b.need, boundary]),
    }
}

/// What the text holds where a match of `a` meets a match of `b`: one of the strings made of
/// an end of `a` and a start of `b`, each with its trigrams.
fn boundary(a: &Info, b: &Info) -> Need {
    let (Some(al), Some(bf)) = (&a.last, &b.first) else { return Need::Anything };
    if a.empty || b.empty {
        return Need::Anything; // one side adds nothing to the other
    }
    let ends: Vec<Vec<Shape>> = al.iter().map(|&(x, y)| vec![x, y]).chain(shapes_of(a.one).map(|x| vec![x])).collect();
    let starts: Vec<Vec<Shape>> =
        bf.iter().map(|&(x, y)| vec![x, y]).chain(shapes_of(b.one).map(|x| vec![x])).collect();
    if ends.len() * starts.len() > MAX_PAIRS {
        return Need::Anything;
    }
    let mut arms = Vec::new();
    for e in &ends {
        for s in &starts {
            let joined: Vec<Shape> = e.iter().chain(s).copied().collect();
            let needs: Vec<Need> =
                joined.windows(3).map(|w| gram(w[0], w[1], w[2])).filter(|n| *n != Need::Anything).collect();
            if needs.is_empty() {
                return Need::Anything;
            }
            arms.push(Need::All(needs));
        }
    }
    Need::OneOf(arms)
}

/// Any of `arms`.
fn either(arms: Vec<Info>) -> Info {
    let union = |pick: fn(&Info) -> &Edges| {
        arms.iter().try_fold(BTreeSet::new(), |mut all, a| {
            all.extend(pick(a).as_ref()?.iter().copied());
            Some(all)
        })
    };
    Info {
        empty: arms.iter().any(|a| a.empty),
        one: arms.iter().fold(0, |s, a| s | a.one),
        first: union(|a| &a.first).and_then(capped),
        last: union(|a| &a.last).and_then(capped),
        need: Need::OneOf(arms.iter().map(|a| a.need.clone()).collect()),
    }
}

/// `x*`: empty, or matches of `x` one after another.
fn star(x: Info) -> Info {
    let first = x.first.as_ref().map(|f| {
        let seconds = x.one | f.iter().fold(0, |s, &(a, _)| s | 1 << a);
        let mut first = f.clone();
        first.extend(shapes_of(x.one).flat_map(|a| shapes_of(seconds).map(move |b| (a, b))));
        first
    });
    let last = x.last.as_ref().map(|l| {
        let befores = x.one | l.iter().fold(0, |s, &(_, b)| s | 1 << b);
        let mut last = l.clone();
        last.extend(shapes_of(befores).flat_map(|a| shapes_of(x.one).map(move |b| (a, b))));
        last
    });
    Info { empty: true, one: x.one, first: first.and_then(capped), last: last.and_then(capped), need: Need::Anything }
}

fn capped(set: BTreeSet<(Shape, Shape)>) -> Edges {
    (set.len() <= MAX_EDGES).then_some(set)
}
