//! From what an agent types to FTS5 `MATCH` expressions.
//!
//! FTS5 gives meaning to `-`, `.`, `:`, `/`, `*`, `"`, `AND`/`OR`/`NOT` and parentheses, so
//! no user text reaches it unquoted. Words joined by those characters (`tree-sitter`,
//! `os.path.join`, `std::io`, `a/b`) become one quoted phrase; other words are quoted terms.
//! English filler words are dropped from natural-language queries (not from a query that is
//! only filler).

use super::passage::Passage;
use super::words::{is_compound, is_stopword};

/// A parsed query.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// FTS5 terms, one per word or words written together (`store::fulltext::every_word`).
    pub terms: Vec<String>,
    /// The phrases the query quotes (`"exact phrase"`), lowercase: the full-text rows keep no
    /// positions, so a chunk's text is checked for them ([`holds_phrase`]).
    pub phrases: Vec<String>,
    /// The plain lowercase words, for name matching in the ranking.
    pub words: Vec<String>,
    /// The query asks for a change ("fix …", "add …", "feat(x): …"), in the words of a task
    /// or a commit subject, rather than how something works.
    pub change: bool,
    /// The first of `words` that may name a chunk: 1 when `words` opens with a change request's
    /// verb ("remove the Arc" is not about functions called `remove`), else 0.
    pub naming_from: usize,
    /// The words written as compound identifiers (`IntoFuture`, `set_state`, `setState`),
    /// lowercase without their inner `_`: they name a chunk in any case style
    /// (`IntoFuture` names `into_future`, the method its trait asks for).
    pub idents: Vec<String>,
    /// A commit subject's scope (`read: …`, `fix(json-lines): …`, `feat(middleware/persist): …`):
    /// the part of the project the change is in, as bare words (`read`, `jsonlines`, `persist`).
    pub scope: Vec<String>,
    /// File names the query writes out (`test_requests.py`, `adapters/libevent.h`),
    /// lowercase.
    pub files: Vec<String>,
    /// The query asks a question: it opens with an interrogative (`how does …`, `where is
    /// …`) or ends with `?`.
    pub question: bool,
    /// A pasted issue, traceback or log, read for its weighted words, the files and the
    /// identifiers it names; `None` for a few words.
    pub passage: Option<Passage>,
    /// Names the query writes with their owner (`Value::Null`, `Command.SetOutput`,
    /// `utils.super_len`), lowercase, as (owner, member): the last two parts.
    pub qualified: Vec<(String, String)>,
}

/// How many of a passage's heaviest words stand for it where a query's words are listed
/// (word coverage, confidence, name matching); the ranking index picks its own by weight
/// and idf.
const PASSAGE_WORDS_KEPT: usize = 64;

/// How many of those a query for FTS5 (before the ranking index is built) holds.
const PASSAGE_TERMS: usize = 32;

/// Verbs (and commit types) that open a change request.
const CHANGE_VERBS: &[&str] = &[
    "fix",
    "fixes",
    "fixed",
    "add",
    "adds",
    "added",
    "remove",
    "removes",
    "removed",
    "allow",
    "allows",
    "support",
    "supports",
    "handle",
    "handles",
    "make",
    "makes",
    "feat",
    "refactor",
    "improve",
    "change",
    "changes",
    "update",
    "updates",
    "implement",
    "avoid",
    "stop",
    "replace",
    "rename",
    "move",
    "deprecate",
    "drop",
    "bump",
    "revert",
    "ensure",
    "prevent",
    "dont",
    "don",
    "chore",
    "perf",
    "enable",
    "disable",
    "introduce",
    "simplify",
    "correct",
    "expose",
    "reject",
    "respect",
    "ignore",
    "skip",
    "restore",
    "reduce",
    "tweak",
    "adjust",
    "clarify",
];

/// The change verbs that say only that something is to be done, never what the code does
/// ("fix", unlike "add up floats" or "replace a leading ~"): as a query's first word they match
/// every chunk that mentions fixing anything, so they are not searched for.
const TASK_ONLY_VERBS: &[&str] = &[
    "fix",
    "fixes",
    "fixed",
    "feat",
    "refactor",
    "improve",
    "chore",
    "perf",
    "bump",
    "revert",
    "dont",
    "don",
    "tweak",
    "clarify",
    "update",
    "updates",
    "implement",
    "support",
    "supports",
    "allow",
    "allows",
];

/// Words that open a question (not `do`: "Do not initialize OpenSSL twice" is a commit subject).
const INTERROGATIVES: &[&str] =
    &["how", "what", "where", "which", "why", "when", "who", "does", "is", "are", "can", "should"];

/// What separates a query's words besides spaces (FTS5's other punctuation joins a word's
/// parts into a phrase instead).
const SEPARATORS: &[char] = &[
    ',', ';', '(', ')', '[', ']', '{', '}', '?', '!', '\'', '`', '<', '>', '=', '+', '|', '&', '^', '~', '$', '%', '@',
    '#', '\\',
];

/// The query's terms as written, each with whether it is a phrase: quoted text, or a word
/// whose parts FTS5 punctuation joins (`std::fs`).
fn raw_terms(text: &str) -> Vec<(String, bool)> {
    let mut raw: Vec<(String, bool)> = Vec::new();
    // Quoted phrases first.
    let mut rest = String::new();
    let mut in_quote = false;
    let mut cur = String::new();
    for ch in text.chars() {
        if ch == '"' {
            if in_quote && !cur.trim().is_empty() {
                raw.push((cur.trim().to_owned(), true));
            }
            cur.clear();
            in_quote = !in_quote;
        } else if in_quote {
            cur.push(ch);
        } else {
            rest.push(ch);
        }
    }
    rest.push(' ');
    rest.push_str(&cur);
    for token in rest.split(|c: char| c.is_whitespace() || SEPARATORS.contains(&c)) {
        // Joined by FTS punctuation: a phrase of its parts.
        let parts: Vec<&str> =
            token.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|p| !p.is_empty()).collect();
        match parts.len() {
            0 => {}
            1 => raw.push((parts[0].to_owned(), false)),
            _ => raw.push((parts.join(" "), true)),
        }
    }
    raw
}

impl Query {
    pub fn parse(text: &str) -> Query {
        if let Some(passage) = Passage::read(text) {
            return Self::of_passage(passage);
        }
        // Control characters mean nothing in a query, and a NUL would end FTS5's string early.
        let cleaned: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        let text = cleaned.as_str();
        let raw = raw_terms(text);
        let change =
            raw.first().is_some_and(|(t, phrase)| !phrase && CHANGE_VERBS.contains(&t.to_lowercase().as_str()))
                && raw.len() > 1;
        let drop_verb = change && TASK_ONLY_VERBS.contains(&raw[0].0.to_lowercase().as_str());
        let meaningful: Vec<&(String, bool)> = raw
            .iter()
            .enumerate()
            .filter(|(i, (t, phrase))| *phrase || !(is_stopword(&t.to_lowercase()) || (*i == 0 && drop_verb)))
            .map(|(_, r)| r)
            .collect();
        let kept: Vec<&(String, bool)> = if meaningful.is_empty() { raw.iter().collect() } else { meaningful };
        let mut terms = Vec::new();
        let mut words = Vec::new();
        for (t, _) in kept {
            let term = crate::store::fulltext::every_word(t);
            if !term.is_empty() && !terms.contains(&term) {
                terms.push(term);
            }
            for w in t.split_whitespace() {
                let w = w.to_lowercase();
                if !words.contains(&w) {
                    words.push(w);
                }
            }
        }
        let naming_from = usize::from(change && words.first().is_some_and(|w| CHANGE_VERBS.contains(&w.as_str())));
        let mut idents = Vec::new();
        for (t, _) in &raw {
            for w in t.split_whitespace().filter(|w| is_compound(w)) {
                let bare: String = bare_identifier_chars(w).collect();
                if !idents.contains(&bare) {
                    idents.push(bare);
                }
            }
        }
        let files = written(text).map(str::to_lowercase).filter(|t| is_file_name(t)).collect();
        let question = text.trim_end().ends_with('?')
            || raw.first().is_some_and(|(t, phrase)| !phrase && INTERROGATIVES.contains(&t.to_lowercase().as_str()));
        let phrases = quoted_phrases(text);
        let qualified = super::owners::qualified_names(written(text), is_file_name);
        Query {
            terms,
            phrases,
            words,
            change,
            naming_from,
            idents,
            scope: scope(text),
            files,
            question,
            passage: None,
            qualified,
        }
    }

    /// A passage as a query: its heaviest words, none of which names a chunk alone (the
    /// identifiers it writes as code do), read as a request for a change.
    fn of_passage(passage: Passage) -> Query {
        let words: Vec<String> = passage.tokens.iter().take(PASSAGE_WORDS_KEPT).map(|(w, _)| w.clone()).collect();
        let terms = words
            .iter()
            .take(PASSAGE_TERMS)
            .map(|w| crate::store::fulltext::every_word(w))
            .filter(|t| !t.is_empty())
            .collect();
        let mut idents: Vec<String> = Vec::new();
        for n in &passage.names {
            let bare: String = bare_identifier_chars(n).collect();
            if !idents.contains(&bare) {
                idents.push(bare);
            }
        }
        Query {
            terms,
            phrases: Vec::new(),
            naming_from: words.len(),
            words,
            change: true,
            idents,
            scope: Vec::new(),
            files: Vec::new(),
            question: false,
            passage: Some(passage),
            qualified: Vec::new(),
        }
    }

    /// The query's words with their weights, for the ranking index: a passage's all (the
    /// index keeps the heaviest by weight and idf), a query's each at 1.
    pub(crate) fn weighted_tokens(&self) -> Vec<(String, f64)> {
        match &self.passage {
            Some(p) => p.tokens.clone(),
            None => self.tokens().into_iter().map(|t| (t, 1.0)).collect(),
        }
    }

    /// The query is about tests: it names them (a passage, in its title).
    pub(crate) fn wants_tests(&self) -> bool {
        match &self.passage {
            Some(p) => p.about_tests(),
            None => self.words.iter().any(|w| w.starts_with("test") || w == "spec"),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The words as the ranking index splits them (`parse_config` is `parse` and `config`),
    /// each once.
    pub(crate) fn tokens(&self) -> Vec<String> {
        let mut tokens: Vec<String> = Vec::new();
        for w in &self.words {
            for t in super::ranking_index::tokens(w) {
                if !tokens.contains(&t) {
                    tokens.push(t);
                }
            }
        }
        tokens
    }

    pub fn and(&self) -> String {
        self.terms.join(" AND ")
    }

    pub fn or(&self) -> String {
        self.terms.join(" OR ")
    }
}

/// The phrases of two words or more that `text` quotes, as the ranking index splits and
/// lowercases words, joined by a space.
fn quoted_phrases(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // The odd parts are inside quotes (an unclosed quote's rest too).
    for part in text.split('"').skip(1).step_by(2) {
        let words: Vec<String> = super::ranking_index::tokens(part).collect();
        if words.len() > 1 && !out.contains(&words.join(" ")) {
            out.push(words.join(" "));
        }
    }
    out
}

/// Whether `text` holds `phrase` (as [`quoted_phrases`] writes it): its words in order, with
/// nothing but punctuation and space between them, in any case.
pub(crate) fn holds_phrase(text: &str, phrase: &str) -> bool {
    let want: Vec<&str> = phrase.split(' ').collect();
    let words: Vec<String> = super::ranking_index::tokens(text).collect();
    words.windows(want.len()).any(|w| w.iter().zip(&want).all(|(a, b)| a == b))
}

/// The scope of a subject written `scope: …` or `type(scope): …` (a bare `type:` such as `fix:`
/// says nothing of where).
fn scope(text: &str) -> Vec<String> {
    let Some((head, _)) = text.trim_start().split_once(": ") else { return Vec::new() };
    let head = head.trim_end_matches('!');
    let inner = match head.split_once('(') {
        Some((_, rest)) => rest.trim_end_matches(')'),
        None if CHANGE_VERBS.contains(&head.to_lowercase().as_str()) => return Vec::new(),
        None => head,
    };
    if inner.is_empty() || inner.contains(char::is_whitespace) || inner.len() > 40 {
        return Vec::new();
    }
    inner
        .split(',')
        .filter_map(|item| item.rsplit('/').next())
        .map(|w| bare_chars(w).collect::<String>())
        .filter(|w| w.len() >= 2)
        .collect()
}

/// `name.ext` (or a path ending so), the extension 1-4 letters or digits with a letter: how a
/// query writes a file, not a version (`1.2`) or a dotted name (`os.path.join`).
/// What the query writes as names: its words cut at white space, quotes and brackets, with
/// a sentence's closing `:` or `.` taken off (`config.toml`, `Value::Null`, `utils.super_len`).
fn written(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || "`'\",;()[]<>?!".contains(c)).map(|t| t.trim_end_matches([':', '.']))
}

fn is_file_name(t: &str) -> bool {
    let Some((stem, ext)) = t.rsplit_once('.') else { return false };
    let stem = stem.rsplit('/').next().unwrap_or(stem);
    !stem.is_empty()
        && !stem.contains('.')
        && stem.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-'))
        && (1..=4).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic())
}

/// A path segment or scope word in no style: lowercase letters and digits only.
pub(crate) fn bare_chars(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase())
}

/// An identifier in no case style: lowercase, without the `_` between its words (leading and
/// trailing ones stay: `__init__` is not `init`).
pub(crate) fn bare_identifier_chars(w: &str) -> impl Iterator<Item = char> + '_ {
    let core = w.trim_matches('_');
    let lead = &w[..w.len() - w.trim_start_matches('_').len()];
    let trail = if core.is_empty() { "" } else { &w[lead.len() + core.len()..] };
    lead.chars().chain(core.chars().filter(|c| *c != '_').map(|c| c.to_ascii_lowercase())).chain(trail.chars())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punctuation_never_reaches_fts_unquoted() {
        let q = Query::parse("tree-sitter os.path.join std::io NEAR \"exact phrase\" a/b (x)");
        assert_eq!(
            q.terms,
            [
                "(\"exact\" AND \"phrase\")",
                "(\"tree\" AND \"sitter\")",
                "(\"os\" AND \"path\" AND \"join\")",
                "(\"std\" AND \"io\")",
                "\"NEAR\"",
                "(\"a\" AND \"b\")",
                "\"x\""
            ]
        );
        assert_eq!(q.or(), q.terms.join(" OR "));
        assert_eq!(q.phrases, ["exact phrase"]);
    }

    #[test]
    fn a_quoted_phrase_is_held_by_its_words_in_order() {
        assert_eq!(Query::parse("find \"Parse  Config\" and \"x\"").phrases, ["parse config"]);
        assert!(holds_phrase("fn parse_config(x)", "parse config"));
        assert!(holds_phrase("PARSE, config", "parse config"));
        assert!(!holds_phrase("config parse", "parse config"));
        assert!(!holds_phrase("parse the config", "parse config"));
        assert!(!holds_phrase("parser config", "parse config"));
    }

    #[test]
    fn a_change_request_drops_its_task_verb_but_keeps_a_descriptive_one() {
        let q = Query::parse("Fix completion for persistent flags");
        assert!(q.change);
        assert_eq!(q.words, ["completion", "persistent", "flags"]);
        let q = Query::parse("fix(types): infer selector return");
        assert!(q.change && !q.words.contains(&"fix".to_owned()), "{q:?}");
        let q = Query::parse("replace a leading ~ with the home directory");
        assert!(q.change && q.words.contains(&"replace".to_owned()), "{q:?}");
        assert!(!Query::parse("parse the config").change);
        assert_eq!(Query::parse("fix").words, ["fix"], "a lone verb stays");
        // A kept opening verb is searched for but names no chunk; a dropped one shifts nothing.
        assert_eq!(Query::parse("remove the Arc around Sender").naming_from, 1);
        assert_eq!(Query::parse("Fix completion for flags").naming_from, 0);
    }

    /// An FTS5 table of one row, to hand expressions to, laid out as `chunks_fts` (no
    /// positions: a phrase of two words is an error there).
    fn fts5() -> rusqlite::Connection {
        let db = rusqlite::Connection::open_in_memory().unwrap();
        db.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(name, body, detail = 'column', tokenize = 'porter unicode61');
             INSERT INTO t VALUES ('a b', 'c \"d\" e');",
        )
        .unwrap();
        db
    }

    /// `text`'s query, after checking that FTS5 parses both of its expressions.
    fn parses(db: &rusqlite::Connection, text: &str) -> Query {
        let q = Query::parse(text);
        if !q.is_empty() {
            for expr in [q.and(), q.or()] {
                let r = db.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [&expr], |r| r.get::<_, i64>(0));
                assert!(r.is_ok(), "{text:?} became {expr:?}: {r:?}");
            }
        }
        q
    }

    /// Property: whatever an agent types, the expressions handed to FTS5 parse (FTS5 raises a
    /// syntax error on a stray quote, parenthesis, `*`, `^`, `:` or bare operator).
    #[test]
    fn no_input_makes_fts5_raise_a_syntax_error() {
        let db = fts5();
        const PIECES: &[&str] = &[
            "\"", "'", "(", ")", "*", "^", ":", "-", "+", "/", ".", ",", "{", "}", "[", "]", "\\", "AND", "OR", "NOT",
            "NEAR", "NEAR(", " ", "\t", "\n", "\0", "é", "日本", "🦀", "a", "b_c", "x1", "::", "->", "#", "@", "=",
            "<", ">", "%", "$", "&", "|", "~", "`", "?", "!",
        ];
        let mut rng = crate::base::rng::Rng::new(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let len = rng.below(12);
            let text: String = (0..len).map(|_| *rng.pick(PIECES)).collect();
            parses(&db, &text);
        }
    }

    /// The same for pasted passages (32 words or more, read by `Passage`): its terms, too,
    /// always parse.
    #[test]
    fn no_passage_makes_fts5_raise_a_syntax_error() {
        let db = fts5();
        const PIECES: &[&str] = &[
            "word ",
            "\"",
            "File \"/a/b.py\", line 3, in f\n",
            "x.y.z ",
            "`name` ",
            "call(",
            ")",
            "*",
            "^",
            ":",
            "\n",
            "numpy: 1.2.3\n",
            "é ",
            "日本 ",
            "NEAR ",
            "AND ",
            "a_b ",
            "CamelCase ",
            "src/x.rs:12 ",
            "-",
            "'",
            "\0",
        ];
        let mut rng = crate::base::rng::Rng::new(0x5EED_0F9A_55A6_E5A1);
        let mut passages = 0;
        for _ in 0..500 {
            let text: String = (0..40 + rng.below(80)).map(|_| *rng.pick(PIECES)).collect();
            passages += usize::from(parses(&db, &text).passage.is_some());
        }
        assert!(passages > 250, "only {passages} of 500 texts were read as passages");
    }

    #[test]
    fn compound_identifiers_are_kept_bare_for_naming_in_any_case_style() {
        let q = Query::parse("Stop implementing IntoFuture for Serve via with_graceful_shutdown");
        assert_eq!(q.idents, ["intofuture", "withgracefulshutdown"]);
        assert!(Query::parse("Redirect the request to a new url").idents.is_empty());
        let bare = |w: &str| bare_identifier_chars(w).collect::<String>();
        assert_eq!(bare("__deep_copy__"), "__deepcopy__");
        assert_eq!(bare("___"), "___");
        assert_eq!(bare("setState"), "setstate");
    }

    #[test]
    fn a_commit_subject_names_its_scope() {
        assert_eq!(Query::parse("read: Add additional RESP3 bool validation").scope, ["read"]);
        assert_eq!(Query::parse("fix(json-lines): Respect default body limit").scope, ["jsonlines"]);
        assert_eq!(Query::parse("feat(middleware/persist): add skip hydration").scope, ["persist"]);
        assert_eq!(Query::parse("fix(types)(middleware/devtools): fix action type").scope, ["devtools"]);
        assert!(Query::parse("fix: Remove '<4' from python_requires").scope.is_empty());
        assert!(Query::parse("how does it work: a question").scope.is_empty());
        let q = Query::parse(
            "Fix several ResourceWarnings in test_requests.py. See os.path.join in v1.2 and `adapters/libevent.h`",
        );
        assert_eq!(q.files, ["test_requests.py", "adapters/libevent.h"]);
    }

    #[test]
    fn filler_words_go_unless_that_is_all_there_is() {
        assert_eq!(Query::parse("where is the config parsed").words, ["config", "parsed"]);
        assert_eq!(Query::parse("the").words, ["the"]);
        assert!(Query::parse("  -- :: ").is_empty());
    }
}
