//! From what an agent types to FTS5 `MATCH` expressions.
//!
//! FTS5 gives meaning to `-`, `.`, `:`, `/`, `*`, `"`, `AND`/`OR`/`NOT` and parentheses, so
//! no user text reaches it unquoted. Words joined by those characters (`tree-sitter`,
//! `os.path.join`, `std::io`, `a/b`) become one quoted phrase; other words are quoted terms.
//! English filler words are dropped from natural-language queries (not from a query that is
//! only filler).

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// Quoted FTS5 phrases, one per term.
    pub terms: Vec<String>,
    /// The plain lowercase words, for name matching in the ranking.
    pub words: Vec<String>,
    /// The query asks for a change ("fix …", "add …", "feat(x): …"), in the words of a task
    /// or a commit subject, rather than how something works.
    pub change: bool,
    /// The first of `words` that may name a chunk: 1 when `words` opens with a change request's
    /// verb ("remove the Arc" is not about functions called `remove`), else 0.
    pub naming_from: usize,
}

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

const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "the",
    "of",
    "to",
    "in",
    "for",
    "on",
    "by",
    "with",
    "from",
    "into",
    "is",
    "are",
    "be",
    "it",
    "its",
    "this",
    "that",
    "or",
    "as",
    "at",
    "how",
    "where",
    "what",
    "which",
    "when",
    "does",
    "do",
    "find",
    "get",
    "use",
    "using",
    "one",
    "all",
    "any",
    "each",
    "there",
    "their",
    "them",
    "via",
    "after",
    "before",
    "over",
    "who",
    "whom",
    "was",
    "were",
    "has",
    "have",
    "had",
    "not",
    "no",
    "but",
    "if",
    "then",
    "than",
    "so",
    "can",
    "should",
    "would",
    "will",
    "my",
    "our",
    "your",
    "i",
    "we",
    "you",
    "code",
    "function",
    "method",
    "def",
    "class",
    "definition",
    "defined",
    "implementation",
];

impl Query {
    pub fn parse(text: &str) -> Query {
        // Control characters mean nothing in a query, and a NUL would end FTS5's string early.
        let cleaned: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        let text = cleaned.as_str();
        let mut raw: Vec<(String, bool)> = Vec::new(); // (term, is_phrase)
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
        for token in rest.split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    ',' | ';'
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '{'
                        | '}'
                        | '?'
                        | '!'
                        | '\''
                        | '`'
                        | '<'
                        | '>'
                        | '='
                        | '+'
                        | '|'
                        | '&'
                        | '^'
                        | '~'
                        | '$'
                        | '%'
                        | '@'
                        | '#'
                        | '\\'
                )
        }) {
            // Joined by FTS punctuation: a phrase of its parts.
            let parts: Vec<&str> =
                token.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|p| !p.is_empty()).collect();
            match parts.len() {
                0 => {}
                1 => raw.push((parts[0].to_owned(), false)),
                _ => raw.push((parts.join(" "), true)),
            }
        }
        let change =
            raw.first().is_some_and(|(t, phrase)| !phrase && CHANGE_VERBS.contains(&t.to_lowercase().as_str()))
                && raw.len() > 1;
        let drop_verb = change && TASK_ONLY_VERBS.contains(&raw[0].0.to_lowercase().as_str());
        let meaningful: Vec<&(String, bool)> = raw
            .iter()
            .enumerate()
            .filter(|(i, (t, phrase))| {
                *phrase || !(STOPWORDS.contains(&t.to_lowercase().as_str()) || (*i == 0 && drop_verb))
            })
            .map(|(_, r)| r)
            .collect();
        let kept: Vec<&(String, bool)> = if meaningful.is_empty() { raw.iter().collect() } else { meaningful };
        let mut terms = Vec::new();
        let mut words = Vec::new();
        for (t, _) in kept {
            let quoted = format!("\"{}\"", t.replace('"', ""));
            if !terms.contains(&quoted) {
                terms.push(quoted);
            }
            for w in t.split_whitespace() {
                let w = w.to_lowercase();
                if !words.contains(&w) {
                    words.push(w);
                }
            }
        }
        let naming_from = usize::from(change && words.first().is_some_and(|w| CHANGE_VERBS.contains(&w.as_str())));
        Query { terms, words, change, naming_from }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The words as the ranking index splits them (`parse_config` is `parse` and `config`),
    /// each once.
    pub fn tokens(&self) -> Vec<String> {
        let mut tokens: Vec<String> = Vec::new();
        for w in &self.words {
            for t in super::postings::tokens(w) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punctuation_never_reaches_fts_unquoted() {
        let q = Query::parse("tree-sitter os.path.join std::io NEAR \"exact phrase\" a/b (x)");
        assert_eq!(
            q.terms,
            ["\"exact phrase\"", "\"tree sitter\"", "\"os path join\"", "\"std io\"", "\"NEAR\"", "\"a b\"", "\"x\""]
        );
        assert_eq!(
            q.and(),
            "\"exact phrase\" AND \"tree sitter\" AND \"os path join\" AND \"std io\" AND \"NEAR\" AND \"a b\" AND \"x\""
        );
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

    /// Property: whatever an agent types, the expressions handed to FTS5 parse (FTS5 raises a
    /// syntax error on a stray quote, parenthesis, `*`, `^`, `:` or bare operator).
    #[test]
    fn no_input_makes_fts5_raise_a_syntax_error() {
        let db = rusqlite::Connection::open_in_memory().unwrap();
        db.execute_batch("CREATE VIRTUAL TABLE t USING fts5(name, body); INSERT INTO t VALUES ('a b', 'c \"d\" e');")
            .unwrap();
        const PIECES: &[&str] = &[
            "\"", "'", "(", ")", "*", "^", ":", "-", "+", "/", ".", ",", "{", "}", "[", "]", "\\", "AND", "OR", "NOT",
            "NEAR", "NEAR(", " ", "\t", "\n", "\0", "é", "日本", "🦀", "a", "b_c", "x1", "::", "->", "#", "@", "=",
            "<", ">", "%", "$", "&", "|", "~", "`", "?", "!",
        ];
        let mut rng = crate::rng::Rng::new(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let len = rng.below(12);
            let text: String = (0..len).map(|_| *rng.pick(PIECES)).collect();
            let q = Query::parse(&text);
            if q.is_empty() {
                continue;
            }
            for expr in [q.and(), q.or()] {
                let r = db.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [&expr], |r| r.get::<_, i64>(0));
                assert!(r.is_ok(), "{text:?} became {expr:?}: {r:?}");
            }
        }
    }

    #[test]
    fn filler_words_go_unless_that_is_all_there_is() {
        assert_eq!(Query::parse("where is the config parsed").words, ["config", "parsed"]);
        assert_eq!(Query::parse("the").words, ["the"]);
        assert!(Query::parse("  -- :: ").is_empty());
    }
}
