//! A chunk's words and a query's as the team index holds them: the ranking index's tokens and
//! English stems ([`super::segment::each_token`], the compound parts of mixed-case names),
//! written as a PostgreSQL `tsvector` literal weighted by field, so that a team search
//! matches the words a local search matches and weighs a name above a body, as it does.

use std::collections::HashMap;
use std::fmt::Write;

use rust_stemmers::{Algorithm, Stemmer};

use super::query::Query;
use super::segment::each_token;
use crate::store::words::words_for;

/// PostgreSQL's largest position in a `tsvector`; later words keep this one.
const MAX_POSITION: usize = 16_383;
/// Positions kept per word: PostgreSQL keeps 256; more say nothing more to its ranking.
const MAX_POSITIONS: usize = 32;
/// Query words a team search asks for: a pasted passage's heaviest, like the ranking index.
const MAX_QUERY_WORDS: usize = 12;

/// Stems words, each distinct word once: a publish stems a hundred million of them.
pub struct Stems {
    stemmer: Stemmer,
    known: HashMap<String, String>,
    buf: String,
}

impl Default for Stems {
    fn default() -> Self {
        Stems { stemmer: Stemmer::create(Algorithm::English), known: HashMap::new(), buf: String::new() }
    }
}

impl Stems {
    fn stem(&mut self, word: &str) -> &str {
        if !self.known.contains_key(word) {
            // A cache for one publish batch, not for ever: a tree's vocabulary is large.
            if self.known.len() > 200_000 {
                self.known.clear();
            }
            let stem = self.stemmer.stem(word).into_owned();
            self.known.insert(word.to_owned(), stem);
        }
        &self.known[word]
    }

    /// The `tsvector` literal of a chunk: its name's words weighted A, the parts of its
    /// compound identifiers B, its text D.
    pub fn chunk_vector(&mut self, name: &str, content: &str) -> String {
        let mut positions: HashMap<String, Vec<(usize, char)>> = HashMap::new();
        let compounds = words_for(name, content);
        let mut at = 0usize;
        let mut buf = std::mem::take(&mut self.buf);
        for (text, weight) in [(name, 'A'), (compounds.as_str(), 'B'), (content, 'D')] {
            each_token(text, &mut buf, |tok| {
                at = (at + 1).min(MAX_POSITION);
                let stem = self.stem(tok).to_owned();
                let list = positions.entry(stem).or_default();
                if list.len() < MAX_POSITIONS {
                    list.push((at, weight));
                }
            });
        }
        self.buf = buf;
        let mut out = String::new();
        let mut words: Vec<_> = positions.into_iter().collect();
        words.sort_unstable();
        for (stem, list) in words {
            if !out.is_empty() {
                out.push(' ');
            }
            quote_into(&stem, &mut out);
            out.push(':');
            for (i, (pos, weight)) in list.iter().enumerate() {
                let sep = if i == 0 { "" } else { "," };
                let _ = write!(out, "{sep}{pos}{weight}");
            }
        }
        out
    }
}

/// The stems a team search asks for, heaviest first, each once.
pub fn of_query(query: &Query) -> Vec<String> {
    let mut stems = Stems::default();
    let mut tokens = query.weighted_tokens();
    tokens.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut out: Vec<String> = Vec::new();
    for (word, _) in tokens {
        let stem = stems.stem(&word.to_lowercase()).to_owned();
        if !stem.is_empty() && !out.contains(&stem) {
            out.push(stem);
        }
        if out.len() == MAX_QUERY_WORDS {
            break;
        }
    }
    out
}

/// A `tsquery` literal joining `stems` by `op` (`&` or `|`).
pub fn tsquery(stems: &[String], op: &str) -> String {
    let mut out = String::new();
    for s in stems {
        if !out.is_empty() {
            let _ = write!(out, " {op} ");
        }
        quote_into(s, &mut out);
    }
    out
}

/// `word` as a quoted lexeme: quotes doubled, backslashes escaped.
fn quote_into(word: &str, out: &mut String) {
    out.push('\'');
    for c in word.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_vector_weighs_its_name_above_its_text_and_stems_as_the_ranking_index() {
        let v = Stems::default().chunk_vector("parseConfig", "def parseConfig(paths):\n    return paths");
        assert!(v.contains("'config':"), "{v}");
        assert!(v.contains("'parseconfig':1A"), "the name's word first, weighted A: {v}");
        assert!(v.contains("'path':"), "stemmed as the ranking index stems: {v}");
        assert!(v.contains('B') && v.contains('D'), "{v}");
    }

    #[test]
    fn a_query_asks_for_its_stems_once() {
        let q = Query::parse("parsing parse configs");
        let stems = of_query(&q);
        assert_eq!(stems, vec!["pars".to_owned(), "config".to_owned()]);
        assert_eq!(tsquery(&stems, "|"), "'pars' | 'config'");
        assert_eq!(tsquery(&["it's".to_owned()], "&"), "'it''s'");
    }
}
