//! Reading what an agent pastes: an issue report, a traceback, a log, a question of several
//! lines, as a developer reads it.
//!
//! A few words are a query: each counts once. A passage is evidence to weigh:
//! - a word said ten times is more of the topic than a word said once, but not ten times
//!   more (`1 + ln(count)`), and the title (the first line) says what the rest is about;
//! - version dumps and environment listings (`numpy: 1.18.1`, `pytest==5.3.2`) say where
//!   the problem was seen, not where it is, and are left out;
//! - files named by a traceback frame (`File ".../_pytest/main.py", line 191, in
//!   wrap_session`), by a path (`src/flask/cli.py:29`) or by a dotted module
//!   (`requests.adapters.HTTPAdapter`) are where to look ([`Mention`]);
//! - identifiers written as code (`builtin_str(method)`, `HTTPAdapter`, `` `x` ``, a frame's
//!   function) name definitions a fix is likely to touch ([`Passage::names`]).
//!
//! Which words carry weight also depends on the project (a word in every file says
//! nothing): the ranking index keeps the heaviest by weight × idf.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

/// A text of at least this many words is read as a passage: a paragraph, not a sentence.
/// Commit subjects and questions are a dozen words or fewer, a subject with the start of its
/// body 24 to 31; the shortest issue report of the visible set has 42.
pub(crate) const PASSAGE_WORDS: usize = 32;

/// How many identifiers a passage names at most (the most repeated first).
const MAX_NAMES: usize = 32;

/// What a title word adds to its weight.
const TITLE_WEIGHT: f64 = 2.0;

#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    /// Distinct tokens (split as the ranking index splits text), each with its weight,
    /// heaviest first.
    pub tokens: Vec<(String, f64)>,
    /// Files the text names.
    pub mentions: Vec<Mention>,
    /// Identifiers written as code, the most repeated first.
    pub names: Vec<String>,
    /// The title's tokens: whether the passage is about tests is decided there (the rest of
    /// a report about anything speaks of tests, test files and test runs).
    pub title: Vec<String>,
}

/// A file the text names, as the end of a path: its folders (nearest last, lowercase) and
/// its file name, or for a dotted module its stem (any extension).
#[derive(Debug, Clone, PartialEq)]
pub struct Mention {
    pub folders: Vec<String>,
    pub file: String,
    /// `file` is a stem (`adapters` of `requests.adapters`), not a file name.
    pub stem_only: bool,
    /// How often the text names it.
    pub count: u32,
}

static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"File "([^"\n]+)", line \d+(?:, in ([A-Za-z_][A-Za-z0-9_]*))?"#).expect("valid"));
/// A path ending in a file name with an extension: `src/a/b.py`, `b.py:12`, `C:\x\y.c`.
static PATH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9_./\\-]*[A-Za-z0-9_]\.[A-Za-z][A-Za-z0-9]{0,3}\b").expect("valid"));
/// A dotted name of identifiers: `requests.adapters.HTTPAdapter`, `os.path.join`.
static DOTTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\b").expect("valid"));
static IDENT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").expect("valid"));
/// A `key: value` line of a listing: `python-bits: 64`, `LOCALE: en_US.UTF-8`, `commit: None`.
static KEY_VALUE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*[A-Za-z][\w.\- ]{0,30}(?::|==|=)\s*\S*\s*$").expect("valid"));
/// A version number: `3.8.1`, `1.18`.
static VERSION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d+\.\d+").expect("valid"));

impl Passage {
    /// The passage `text` is, or `None` when it is a few words (a query to take as written).
    pub(crate) fn read(text: &str) -> Option<Passage> {
        if super::segment::tokens(text).take(PASSAGE_WORDS).count() < PASSAGE_WORDS {
            return None;
        }
        let mut counts: HashMap<String, u32> = HashMap::new();
        let mut order: Vec<String> = Vec::new();
        let mut names: HashMap<String, (u32, usize)> = HashMap::new();
        let mut mentions: Vec<Mention> = Vec::new();
        let mut title: Option<Vec<String>> = None;
        let lines: Vec<&str> = text.lines().collect();
        let listed = listings(&lines);
        for (i, line) in lines.iter().enumerate() {
            let line = *line;
            let frames: Vec<_> = FRAME.captures_iter(line).collect();
            if frames.is_empty() && listed[i] {
                continue;
            }
            let words: Vec<String> = super::segment::tokens(line).collect();
            if title.is_none() && !words.is_empty() {
                title = Some(words.clone());
            }
            for w in words {
                if super::words::is_stopword(&w) || w.len() < 2 {
                    continue;
                }
                let n = counts.entry(w.clone()).or_insert(0);
                if *n == 0 {
                    order.push(w);
                }
                *n += 1;
            }
            for f in &frames {
                add_mention(&mut mentions, &f[1], false);
                if let Some(func) = f.get(2) {
                    add_name(&mut names, func.as_str());
                }
            }
            // Paths outside frames (a frame's path was just counted).
            code_outside_frames(&FRAME.replace_all(line, ""), &mut mentions, &mut names);
        }
        let title = title.unwrap_or_default();
        let mut tokens: Vec<(String, f64)> = order
            .into_iter()
            .map(|w| {
                let mut weight = 1.0 + f64::from(counts[&w]).ln();
                if title.contains(&w) {
                    weight += TITLE_WEIGHT;
                }
                (w, weight)
            })
            .collect();
        // Heaviest first; equal weights keep the text's order.
        tokens.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut names: Vec<(String, (u32, usize))> = names.into_iter().collect();
        names.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
        let names = names.into_iter().take(MAX_NAMES).map(|(n, _)| n).collect();
        Some(Passage { tokens, mentions, names, title })
    }

    /// The passage is about tests: its title opens with them (`tests: …`, `Test coverage for
    /// …`, `Add a test for …`, `Extend test case …`). A title that mentions a test further on
    /// ("xfail marker in test no longer ignores failure") is about the code under it.
    pub(crate) fn about_tests(&self) -> bool {
        self.title.iter().take(3).any(|w| w.starts_with("test") || w == "spec")
    }
}

/// How many `key: value` lines in a row make an environment listing (`commit: None`,
/// `python-bits: 64`, `OS: Linux`), whatever their values.
const LISTING_RUN: usize = 3;

/// Per line, whether it belongs to a version dump or environment listing: a line of a few
/// words with a version in it (`numpy: 1.18.1`, `pytest==5.3.2`, `attrs 19.3.0`), or a run
/// of short `key: value` lines.
fn listings(lines: &[&str]) -> Vec<bool> {
    let short = |l: &str| (1..=6).contains(&l.split_whitespace().count());
    let mut out: Vec<bool> = lines.iter().map(|l| short(l) && VERSION.is_match(l)).collect();
    let keyed: Vec<bool> = lines.iter().map(|l| short(l) && KEY_VALUE.is_match(l)).collect();
    let mut i = 0;
    while i < lines.len() {
        let run = keyed[i..].iter().take_while(|k| **k).count();
        if run >= LISTING_RUN {
            out[i..i + run].iter_mut().for_each(|o| *o = true);
        }
        i += run.max(1);
    }
    out
}

/// Written as code, not as prose: a compound identifier (`snake_case`, `camelCase`,
/// `PascalCase`, as a query reads them) or one with leading or trailing underscores
/// (`_private`, `__repr__`).
fn is_code_name(w: &str) -> bool {
    let core = w.trim_matches('_');
    super::words::is_compound(w) || (core.len() < w.len() && !core.is_empty())
}

fn add_name(names: &mut HashMap<String, (u32, usize)>, w: &str) {
    let next = names.len();
    names.entry(w.to_owned()).or_insert((0, next)).0 += 1;
}

/// Counts a path as a mention: the text's slashes or backslashes, a leading `./` or drive
/// dropped. A path whose file name has no letter before its extension is no file.
fn add_mention(mentions: &mut Vec<Mention>, path: &str, stem_only: bool) {
    let mut segs: Vec<String> =
        path.split(['/', '\\']).filter(|s| !s.is_empty() && *s != "." && *s != "..").map(str::to_lowercase).collect();
    let Some(file) = segs.pop() else { return };
    if !file.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') {
        return;
    }
    if stem_only && segs.is_empty() {
        return;
    }
    match mentions.iter_mut().find(|m| m.file == file && m.folders == segs && m.stem_only == stem_only) {
        Some(m) => m.count += 1,
        None => mentions.push(Mention { folders: segs, file, stem_only, count: 1 }),
    }
}

impl Mention {
    /// How many trailing segments of `path` this names: its file name (or stem) and the
    /// folders above it that agree. 0 when the file does not match; a dotted module must
    /// agree on a folder too (`os.path` is no mention of every `path.py`).
    pub(crate) fn matches(&self, path: &str) -> usize {
        let mut segs = path.rsplit('/');
        let Some(file) = segs.next() else { return 0 };
        let same = if self.stem_only {
            file.rsplit_once('.').is_some_and(|(stem, _)| stem.eq_ignore_ascii_case(&self.file))
        } else {
            file.eq_ignore_ascii_case(&self.file)
        };
        if !same {
            return 0;
        }
        let folders = segs.zip(self.folders.iter().rev()).take_while(|(a, b)| a.eq_ignore_ascii_case(b)).count();
        if self.stem_only && folders == 0 { 0 } else { 1 + folders }
    }
}

/// The paths, dotted module paths and code names one line writes outside stack frames.
fn code_outside_frames(rest: &str, mentions: &mut Vec<Mention>, names: &mut HashMap<String, (u32, usize)>) {
    for m in PATH.find_iter(rest) {
        add_mention(mentions, m.as_str(), false);
    }
    for m in DOTTED.find_iter(rest) {
        let s = m.as_str();
        if PATH.find(s).is_some_and(|p| p.as_str() == s) {
            continue;
        }
        // `requests.adapters.HTTPAdapter` is a class in `requests/adapters.py` or a
        // module `requests/adapters/httpadapter.py`: each dotted prefix of two parts
        // or more names a module.
        let parts: Vec<&str> = s.split('.').collect();
        for end in 2..=parts.len() {
            add_mention(mentions, &parts[..end].join("/"), true);
        }
    }
    for m in IDENT.find_iter(rest) {
        let w = m.as_str();
        let called = rest[m.end()..].starts_with('(');
        let quoted = rest[..m.start()].ends_with('`') || rest[m.end()..].starts_with('`');
        if w.len() >= 3 && (is_code_name(w) || called || quoted) {
            add_name(names, w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "INTERNALERROR when exception in __repr__\n\
        Minimal code to reproduce the issue, with `SomeClass` and saferepr:\n\
        ```python\nclass SomeClass:\n    def __repr__(self):\n        raise\n```\n\
        platform darwin -- Python 3.8.1, pytest-5.4.1\n\
        INTERNALERROR>   File \"/usr/lib/python3.8/site-packages/_pytest/_io/saferepr.py\", line 47, in repr_instance\n\
        INTERNALERROR>     s = repr(x)\n\
        See also requests.adapters.HTTPAdapter and src/_pytest/main.py:191 for the session setup code.";

    #[test]
    fn a_short_query_is_no_passage() {
        assert!(Passage::read("parse the config").is_none());
        assert!(Passage::read("Fix completion for persistent flags on subcommands").is_none());
    }

    #[test]
    fn a_report_is_read_for_its_files_names_and_weighted_words() {
        let p = Passage::read(REPORT).expect("a passage");
        let named = |f: &str| p.mentions.iter().any(|m| m.file == f);
        assert!(named("saferepr.py") && named("main.py") && named("adapters"), "{:?}", p.mentions);
        let frame = p.mentions.iter().find(|m| m.file == "saferepr.py").unwrap();
        assert_eq!(frame.matches("src/_pytest/_io/saferepr.py"), 3);
        assert_eq!(frame.matches("src/_pytest/_io/other.py"), 0);
        let module = p.mentions.iter().find(|m| m.file == "adapters").unwrap();
        assert!(module.stem_only);
        assert_eq!(module.matches("requests/adapters.py"), 2);
        assert_eq!(module.matches("adapters.py"), 0, "a dotted module must agree on a folder");
        assert!(p.names.contains(&"repr_instance".to_owned()) && p.names.contains(&"SomeClass".to_owned()));
        assert!(p.names.contains(&"__repr__".to_owned()), "{:?}", p.names);
        // The version line is left out; title words weigh more than the same count elsewhere.
        assert!(!p.tokens.iter().any(|(w, _)| w == "darwin"), "{:?}", p.tokens);
        let weight = |w: &str| p.tokens.iter().find(|(t, _)| t == w).map(|(_, x)| *x).unwrap();
        assert!(weight("repr") > weight("minimal"), "{:?}", p.tokens);
        assert!(!p.about_tests());
    }
}
