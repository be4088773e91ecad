//! Line-at-a-time regex semantics (as `grep` and `rg` have them), searched a whole chunk at a
//! time: one pass of the regex engine and its literal prefilters over the chunk finds the
//! matching lines, instead of one call per line.
//!
//! The chunk-wide regex is the pattern with `\n` taken out of everything that could match it
//! (classes such as `\s` or `[^a]`; a literal newline never matches a line), and `^`/`$` at
//! line ends: so each of its matches lies within one line, and every line the pattern matches
//! holds one of its matches. Each line it finds is confirmed with the pattern itself.

use regex::{Regex, RegexBuilder};
use regex_syntax::hir::{self, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind};

/// Compiled program size limit, for the pattern and its chunk-wide form.
const SIZE_LIMIT: usize = 1 << 22;

/// The lines of `text` as `rg` sees them: split at `\n` only (a `\r` before it is part of
/// the line, so `\s$` matches a CRLF line and `return$` does not), no line after a final
/// `\n`.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.strip_suffix('\n').unwrap_or(text).split('\n').filter(move |_| !text.is_empty())
}

pub(crate) struct LineMatcher {
    /// The pattern, matched against one line (without its `\n`).
    line: Regex,
    /// Matches only within a line, on whole chunks; `None` when the pattern cannot be put so
    /// (`\A`, `\z`), and lines are then tried one by one.
    chunk: Option<Regex>,
}

impl LineMatcher {
    pub(crate) fn new(pattern: &str, case_insensitive: bool) -> Result<Self, regex::Error> {
        let line = RegexBuilder::new(pattern).case_insensitive(case_insensitive).size_limit(SIZE_LIMIT).build()?;
        let chunk = within_lines(pattern, case_insensitive)
            .and_then(|p| RegexBuilder::new(&p).size_limit(SIZE_LIMIT).build().ok());
        Ok(LineMatcher { line, chunk })
    }

    /// Whether any line of `text` may match (a quick test that never says no wrongly).
    pub(crate) fn may_match(&self, text: &str) -> bool {
        self.chunk.as_ref().is_none_or(|c| c.is_match(text))
    }

    /// Calls `each(index, line)` for each line of `text` the pattern matches, in order
    /// (`index` counts from 0, lines as [`lines`] splits them); `each` returns false to stop.
    pub(crate) fn each_line(&self, text: &str, mut each: impl FnMut(usize, &str) -> bool) {
        let Some(chunk) = &self.chunk else {
            for (i, line) in lines(text).enumerate() {
                if self.line.is_match(line) && !each(i, line) {
                    return;
                }
            }
            return;
        };
        let (mut at, mut index, mut counted_to) = (0, 0, 0);
        while at <= text.len() {
            // Where a match ends is enough to know its line (it holds no newline), and needs
            // no search backwards for where it starts.
            let Some(m) = chunk.shortest_match_at(text, at) else { return };
            let start = text[..m].rfind('\n').map_or(0, |i| i + 1);
            if start == text.len() {
                return; // after the last line ending: not a line
            }
            let end = text[m..].find('\n').map_or(text.len(), |i| m + i);
            index += text.as_bytes()[counted_to..start].iter().filter(|&&b| b == b'\n').count();
            counted_to = start;
            let line = &text[start..end];
            if self.line.is_match(line) && !each(index, line) {
                return;
            }
            if end == text.len() {
                return;
            }
            at = end + 1;
        }
    }
}

/// The pattern as one that matches only within a line of a multi-line text, printed back as
/// a regex; `None` for `\A` and `\z` (which mean the text's ends there, a line's here).
fn within_lines(pattern: &str, case_insensitive: bool) -> Option<String> {
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .build()
        .parse(pattern)
        .ok()?;
    Some(no_newline(&hir)?.to_string())
}

fn no_newline(hir: &Hir) -> Option<Hir> {
    Some(match hir.kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(lit) => {
            if lit.0.contains(&b'\n') {
                Hir::fail()
            } else {
                hir.clone()
            }
        }
        HirKind::Class(Class::Unicode(c)) => {
            let mut c = c.clone();
            c.difference(&ClassUnicode::new([ClassUnicodeRange::new('\n', '\n')]));
            Hir::class(Class::Unicode(c))
        }
        HirKind::Class(Class::Bytes(c)) => {
            let mut c = c.clone();
            c.difference(&ClassBytes::new([ClassBytesRange::new(b'\n', b'\n')]));
            Hir::class(Class::Bytes(c))
        }
        HirKind::Look(look) => match look {
            hir::Look::Start | hir::Look::End => return None,
            _ => hir.clone(),
        },
        HirKind::Repetition(r) => Hir::repetition(hir::Repetition { sub: Box::new(no_newline(&r.sub)?), ..r.clone() }),
        HirKind::Capture(c) => Hir::capture(hir::Capture { sub: Box::new(no_newline(&c.sub)?), ..c.clone() }),
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(no_newline).collect::<Option<_>>()?),
        HirKind::Alternation(arms) => Hir::alternation(arms.iter().map(no_newline).collect::<Option<_>>()?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a line-by-line search finds.
    fn by_lines(pattern: &str, ci: bool, text: &str) -> Vec<(usize, String)> {
        let re = RegexBuilder::new(pattern).case_insensitive(ci).build().unwrap();
        lines(text).enumerate().filter(|(_, l)| re.is_match(l)).map(|(i, l)| (i, l.to_owned())).collect()
    }

    fn by_chunk(pattern: &str, ci: bool, text: &str) -> Vec<(usize, String)> {
        let m = LineMatcher::new(pattern, ci).unwrap();
        let mut found = Vec::new();
        m.each_line(text, |i, l| {
            found.push((i, l.to_owned()));
            true
        });
        assert!(found.is_empty() || m.may_match(text), "{pattern:?} said no wrongly");
        found
    }

    #[test]
    fn a_chunk_at_a_time_finds_what_line_by_line_finds() {
        let texts = [
            "def f(x):\n    # note\n\n    return x  \n\treturn\n",
            "a\r\nb\r\n  # c\r\nreturn\r\n",
            "ends in a carriage return\r",
            "no newline at the end return",
            "\n\n\n",
            "",
            "x = 1990\ny = 20241\n  #\n#\n   \n# a # b\nTODO and FIXME\nstraße STRASSE",
            "é\nÉ\ne\u{301}\n\u{212A}ey key KEY\n",
        ];
        let patterns = [
            "^\\s+#",
            "return$",
            "\\d{4}",
            "^$",
            "^",
            "$",
            "\\s",
            "[^a]",
            "\\W+$",
            "x",
            "#\\s*\\w",
            "a\\nb",
            "(?s).",
            ".*",
            "^#|^\\s",
            "\\bkey\\b",
            "é",
            "(?m)^\\s*$",
            "\\s+$",
            "[\\s\\S]",
            "TODO|FIXME",
            "\\Areturn",
            "return\\z",
            "(?-m)^return",
            "\\r",
            "b$",
            "[[:space:]]+#",
        ];
        for t in texts {
            for p in patterns {
                for ci in [false, true] {
                    assert_eq!(by_chunk(p, ci, t), by_lines(p, ci, t), "{p:?} (case-insensitive {ci}) on {t:?}");
                }
            }
        }
    }

    #[test]
    fn stopping_stops() {
        let m = LineMatcher::new("a", false).unwrap();
        let mut n = 0;
        m.each_line("a\na\na\n", |_, _| {
            n += 1;
            n < 2
        });
        assert_eq!(n, 2);
    }
}
