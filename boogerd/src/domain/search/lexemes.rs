//! A chunk's words and a query's as the team index holds them: the ranking index's tokens and
//! English stems ([`super::segment::each_token`], the compound parts of mixed-case names),
//! written as a PostgreSQL `tsvector` literal weighted by field, so that a team search
//! matches the words a local search matches and weighs a name above a body, as it does.

use std::fmt::Write;

use rust_stemmers::{Algorithm, Stemmer};

use super::query::Query;
use super::segment::each_token;
use crate::store::team::{MAX_POSITION, Matched, TeamError, TeamFilters, TeamHit, TeamStore, TsVector, Weight};
use crate::store::words::words_for;

/// Positions kept per word: PostgreSQL keeps 256; more say nothing more to its ranking.
const MAX_POSITIONS: usize = 32;
/// Longer words are left out: PostgreSQL refuses a lexeme over 2,046 bytes, and a word that
/// long (an encoded blob) is no one's query.
const MAX_WORD_BYTES: usize = 255;
/// Query words a team search asks for: a pasted passage's heaviest, like the ranking index.
const MAX_QUERY_WORDS: usize = 12;

/// Stems words, each distinct word once: a publish stems a hundred million of them, and
/// looks each up without allocating.
pub(crate) struct Stems {
    stemmer: Stemmer,
    /// Word → its stem's number in `stems` (a hundred million lookups: a fast hash, seeded
    /// per process, as a repository's words are not ours to choose).
    known: foldhash::HashMap<String, u32>,
    /// Stem → its number: words with one stem share it.
    numbers: foldhash::HashMap<String, u32>,
    stems: Vec<String>,
    buf: String,
    /// One chunk's words, reused.
    seen: Vec<Seen>,
    /// One chunk's runs of one stem in `seen`: (stem, from, to), reused.
    runs: Vec<(u32, usize, usize)>,
}

/// A word of a chunk as one number that sorts by stem, then position, then weight, heaviest
/// first (a word past the last position shares it; the heaviest there is kept).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Seen(u64);

impl Seen {
    fn new(stem: u32, at: u16, weight: Weight) -> Self {
        Seen(u64::from(stem) << 32 | u64::from(at) << 16 | (3 - weight as u64))
    }

    fn stem(self) -> u32 {
        (self.0 >> 32) as u32
    }

    fn position(self) -> (u16, Weight) {
        let weight = match 3 - (self.0 & 3) {
            3 => Weight::A,
            2 => Weight::B,
            _ => Weight::D,
        };
        ((self.0 >> 16) as u16, weight)
    }
}

impl Default for Stems {
    fn default() -> Self {
        Stems {
            stemmer: Stemmer::create(Algorithm::English),
            known: foldhash::HashMap::default(),
            numbers: foldhash::HashMap::default(),
            stems: Vec::new(),
            buf: String::new(),
            seen: Vec::new(),
            runs: Vec::new(),
        }
    }
}

impl Stems {
    fn stem_id(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.known.get(word) {
            return id;
        }
        let stem = self.stemmer.stem(word).into_owned();
        let next = self.stems.len() as u32;
        let id = *self.numbers.entry(stem.clone()).or_insert(next);
        if id == next {
            self.stems.push(stem);
        }
        self.known.insert(word.to_owned(), id);
        id
    }

    fn stem(&mut self, word: &str) -> &str {
        let id = self.stem_id(word);
        &self.stems[id as usize]
    }

    /// The `tsvector` of a chunk: its name's words weighted A, the parts of its compound
    /// identifiers B, its text D.
    pub(crate) fn chunk_vector(&mut self, name: &str, content: &str) -> TsVector {
        // A cache for a while, not for ever: a large tree's vocabulary is large, and a small
        // table stays in the processor's cache (emptied past 16,000 words, this took a third
        // less time on a 27,000-file tree than past 500,000: fewer lookups missed the cache
        // than words were stemmed again).
        if self.known.len() > 16_000 {
            self.known.clear();
            self.numbers.clear();
            self.stems.clear();
        }
        let compounds = words_for(name, content);
        let mut at = 0usize;
        let mut buf = std::mem::take(&mut self.buf);
        let mut seen = std::mem::take(&mut self.seen);
        seen.clear();
        for (text, weight) in [(name, Weight::A), (compounds.as_str(), Weight::B), (content, Weight::D)] {
            each_token(text, &mut buf, |tok| {
                at = (at + 1).min(MAX_POSITION as usize);
                if tok.len() <= MAX_WORD_BYTES {
                    seen.push(Seen::new(self.stem_id(tok), at as u16, weight));
                }
            });
        }
        // By stem (positions in order within each), each stem's first MAX_POSITIONS: sorted
        // by number, then each stem's run put in the order of the stems' text (PostgreSQL's
        // order), comparing text once per stem, not per word.
        seen.sort_unstable();
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        for (i, word) in seen.iter().enumerate() {
            match runs.last_mut() {
                Some(run) if run.0 == word.stem() => run.2 = i + 1,
                _ => runs.push((word.stem(), i, i + 1)),
            }
        }
        runs.sort_unstable_by(|a, b| self.stems[a.0 as usize].cmp(&self.stems[b.0 as usize]));
        let room = runs
            .iter()
            .map(|&(id, from, to)| TsVector::room(self.stems[id as usize].len(), (to - from).min(MAX_POSITIONS)));
        let mut out = TsVector::with_capacity(room.sum());
        for &(id, from, to) in &runs {
            let positions = seen[from..to].iter().take(MAX_POSITIONS).map(|w| w.position());
            out.push(&self.stems[id as usize], positions);
        }
        self.runs = runs;
        self.buf = buf;
        self.seen = seen;
        out
    }

    /// The `tsvector` of a chunk's name alone: its stems, without positions.
    pub(crate) fn name_vector(&mut self, name: &str) -> TsVector {
        let mut buf = std::mem::take(&mut self.buf);
        let mut ids: Vec<u32> = Vec::new();
        each_token(name, &mut buf, |tok| {
            if tok.len() <= MAX_WORD_BYTES {
                ids.push(self.stem_id(tok));
            }
        });
        self.buf = buf;
        ids.sort_unstable();
        ids.dedup();
        ids.sort_unstable_by(|a, b| self.stems[*a as usize].cmp(&self.stems[*b as usize]));
        let mut out = TsVector::default();
        for id in ids {
            out.push(&self.stems[id as usize], []);
        }
        out
    }
}

/// The stems a team search asks for, heaviest first, each once.
pub(crate) fn of_query(query: &Query) -> Vec<String> {
    weighted_stems(query).into_iter().map(|(s, _)| s).collect()
}

/// The stems a team search asks for with the query's weight of each (a pasted issue's title
/// and repeated words weigh more), heaviest first, each once.
pub(crate) fn weighted_stems(query: &Query) -> Vec<(String, f64)> {
    let mut stems = Stems::default();
    let mut tokens = query.weighted_tokens();
    tokens.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut out: Vec<(String, f64)> = Vec::new();
    for (word, weight) in tokens {
        let stem = stems.stem(&word.to_lowercase()).to_owned();
        if !stem.is_empty() && !out.iter().any(|(s, _)| *s == stem) {
            out.push((stem, weight));
        }
        if out.len() == MAX_QUERY_WORDS {
            break;
        }
    }
    out
}

/// A `tsquery` literal joining `stems` by `op` (`&` or `|`).
pub(crate) fn tsquery(stems: &[String], op: &str) -> String {
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

/// Chunks counted per stem at most, to tell a rare stem from a common one.
const COUNTED: i64 = 1_000;
/// Chunks a query's rarer stems bring to be ranked, about: the rarest stems are taken while
/// their chunks together stay within it (scoring a chunk reads its words; 3,000 of them made
/// a search over fifty repositories 50 ms).
const CANDIDATES: i64 = 1_000;

/// The `limit` best team chunks for `query`: those whose name holds all its words (the
/// definitions it names) first; then the chunks holding its rarer stems, each stem weighed
/// by how rare it is (its inverse chunk frequency) and by the query's own weight of it, more
/// in a name than in a body, as local search weighs words; a query whose every stem is
/// common falls back to the chunks holding all of them.
pub(crate) fn team_search(
    store: &mut TeamStore,
    query: &Query,
    f: &TeamFilters<'_>,
    limit: usize,
) -> Result<Vec<TeamHit>, TeamError> {
    let weighted = weighted_stems(query);
    if weighted.is_empty() {
        return Ok(Vec::new());
    }
    let stems: Vec<String> = weighted.iter().map(|(s, _)| s.clone()).collect();
    let mut hits: Vec<TeamHit> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut take = |found: Vec<TeamHit>, hits: &mut Vec<TeamHit>| {
        for h in found {
            if hits.len() < limit && seen.insert((h.repo.clone(), h.path.clone(), h.chunk.start_line)) {
                hits.push(h);
            }
        }
    };
    let all = tsquery(&stems, "&");
    take(store.search(&all, Matched::Names, f, limit as i64)?, &mut hits);
    if hits.len() >= limit {
        return Ok(hits);
    }
    // Each stem as a `tsquery` of its own.
    let singles: Vec<String> = stems.iter().map(|s| tsquery(std::slice::from_ref(s), "&")).collect();
    let (counts, total) = store.stem_counts(&singles, COUNTED)?;
    let total = total.max(1) as f64;
    let mut rare: Vec<(usize, i64)> =
        counts.iter().enumerate().filter(|(_, n)| **n > 0 && **n < COUNTED).map(|(i, n)| (i, *n)).collect();
    rare.sort_by_key(|(_, n)| *n);
    let mut brought = 0;
    rare.retain(|(_, n)| {
        let keep = brought == 0 || brought + n <= CANDIDATES;
        if keep {
            brought += n;
        }
        keep
    });
    if rare.is_empty() {
        take(store.search(&all, Matched::Words, f, limit as i64)?, &mut hits);
        return Ok(hits);
    }
    let weights: Vec<f64> = weighted
        .iter()
        .zip(&counts)
        .map(|((_, w), n)| if *n == 0 { 0.0 } else { w * (1.0 + total / *n as f64).ln() })
        .collect();
    let rare_stems: Vec<String> = rare.iter().map(|(i, _)| stems[*i].clone()).collect();
    let candidates = tsquery(&rare_stems, "|");
    take(
        store.search_weighted(&singles, &weights, &candidates, f, limit as i64, brought.clamp(1, CANDIDATES))?,
        &mut hits,
    );
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_vector_weighs_its_name_above_its_text_and_stems_as_the_ranking_index() {
        let v = Stems::default().chunk_vector("parseConfig", "def parseConfig(paths):\n    return paths").literal();
        assert!(v.contains("'config':"), "{v}");
        assert!(v.contains("'parseconfig':1A"), "the name's word first, weighted A: {v}");
        assert!(v.contains("'path':"), "stemmed as the ranking index stems: {v}");
        assert!(v.contains('B') && v.contains('D'), "{v}");
        // Words in PostgreSQL's order (by bytes), each word's positions rising and at most
        // MAX_POSITIONS of them.
        let v = Stems::default().chunk_vector("b", &"zeta alpha beta ".repeat(40)).literal();
        let words: Vec<&str> = v.split(' ').map(|w| w.split(':').next().unwrap()).collect();
        assert_eq!(words, ["'alpha'", "'b'", "'beta'", "'zeta'"], "{v}");
        let alpha: Vec<u16> = v
            .split(' ')
            .next()
            .unwrap()
            .split(':')
            .nth(1)
            .unwrap()
            .split(',')
            .map(|p| p.trim_end_matches(['A', 'B', 'D']).parse().unwrap())
            .collect();
        assert_eq!(alpha.len(), MAX_POSITIONS, "{v}");
        assert!(alpha.windows(2).all(|w| w[0] < w[1]) && alpha[0] == 3, "{alpha:?}");
        let long = "x".repeat(3000);
        assert!(!Stems::default().chunk_vector("f", &long).literal().contains("xxx"), "a word PostgreSQL would refuse");
        // Past the last position every word shares it; the heaviest is kept there.
        let crowded = format!("{} alpha", "w ".repeat(MAX_POSITION as usize + 5));
        let v = Stems::default().chunk_vector(&crowded, "alpha").literal();
        assert!(v.starts_with(&format!("'alpha':{MAX_POSITION}A ")), "{}", &v[..40]);
        // A chunk's vector does not depend on the words stemmed before it (the stems' numbers
        // do), however often the cache was emptied.
        let mut used = Stems::default();
        for i in 0..40_000 {
            used.chunk_vector("", &format!("filler{i} word{i}"));
        }
        let text = "fn parse_config(paths: &[Path]) -> Config { parseConfig(paths) }";
        assert_eq!(used.chunk_vector("parseConfig", text), Stems::default().chunk_vector("parseConfig", text));
        // A name's words in byte order, each once, without positions.
        assert_eq!(Stems::default().name_vector("zeta_alpha_zeta").literal(), "'alpha' 'zeta'");
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
