//! The terms both lexical indexes keep, the full-text table and the ranking index, and every
//! query asks them for: a text's runs of letters and digits, lowercased, each stemmed
//! (Snowball English). One definition, so a chunk found by one index is found by the other.

use std::cell::RefCell;

use rust_stemmers::{Algorithm, Stemmer};

use super::interner::Interner;

/// Tokens a thread remembers the stems of before it starts over (about 2 MB): a worker meets
/// the same few thousand words in every file, and a stem made again costs a microsecond.
const REMEMBERED: usize = 1 << 16;

thread_local! {
    static STEMS: RefCell<Stems> = RefCell::new(Stems {
        stemmer: Stemmer::create(Algorithm::English),
        tokens: Interner::default(),
        stem_of: Vec::new(),
        stems: Interner::default(),
        counts: Vec::new(),
        seen: Vec::new(),
    });
}

/// The stems a thread remembers: of each token, the number of its stem.
struct Stems {
    stemmer: Stemmer,
    tokens: Interner,
    stem_of: Vec<u32>,
    stems: Interner,
    /// [`distinct_terms`]' counts by stem number (zero between calls) and the stems counted.
    counts: Vec<u32>,
    seen: Vec<u32>,
}

impl Stems {
    /// The number of `token`'s stem.
    fn stem_id(&mut self, token: &str) -> u32 {
        if let Some(id) = self.tokens.find(token) {
            return self.stem_of[id as usize];
        }
        let stem = self.stemmer.stem(token);
        let id = self.stems.intern(&stem).0;
        self.tokens.intern(token);
        self.stem_of.push(id);
        id
    }

    /// Starts over once past [`REMEMBERED`] tokens (never while a caller holds numbers).
    fn trim(&mut self) {
        if self.tokens.len() >= REMEMBERED {
            self.tokens.clear();
            self.stem_of.clear();
            self.stems.clear();
            self.counts.clear();
        }
    }
}

/// Splits text into lowercase alphanumeric tokens (before stemming).
pub(crate) fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase)
}

/// The same tokens as [`tokens`], each lent to `f` from one reused buffer: building a
/// segment sees a hundred million of them, and a string each made the heap grow in holes.
pub(crate) fn each_token(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    super::text::each_run(text, char::is_alphanumeric, |token, ascii| {
        if ascii {
            buf.clear();
            buf.push_str(token);
            buf.make_ascii_lowercase();
            f(buf);
        } else {
            // Full Unicode lowercasing depends on context (a final sigma): as `tokens` does.
            f(&token.to_lowercase());
        }
    });
}

/// Lends `f` the stem of `token` (a lowercase token of [`each_token`]); `f` must not stem.
pub(crate) fn with_stem<T>(token: &str, f: impl FnOnce(&str) -> T) -> T {
    STEMS.with_borrow_mut(|s| {
        s.trim();
        let id = s.stem_id(token);
        f(s.stems.strings.get(id))
    })
}

/// The stem of `token` (a lowercase token of [`each_token`]), owned: for a query's few words.
pub(crate) fn stem(token: &str) -> String {
    with_stem(token, str::to_owned)
}

/// Calls `f` with each distinct term of `text` and how often it occurs, in the order first
/// seen: a token is looked up once per occurrence, counted by its stem's number, and each
/// term's text read once.
pub(crate) fn distinct_terms(text: &str, mut f: impl FnMut(&str, u32)) {
    STEMS.with_borrow_mut(|s| {
        s.trim();
        let mut buf = String::new();
        each_token(text, &mut buf, |token| {
            let id = s.stem_id(token) as usize;
            if s.counts.len() <= id {
                s.counts.resize(id + 1, 0);
            }
            if s.counts[id] == 0 {
                s.seen.push(id as u32);
            }
            s.counts[id] += 1;
        });
        for &id in &s.seen {
            f(s.stems.strings.get(id), std::mem::take(&mut s.counts[id as usize]));
        }
        s.seen.clear();
    })
}

/// Calls `f` with each term of `text`, in order, repeats included; `f` must not stem.
pub(crate) fn each_term(text: &str, mut f: impl FnMut(&str)) {
    let mut buf = String::new();
    each_token(text, &mut buf, |token| with_stem(token, &mut f));
}

/// The terms of `text`, each followed by a space (a full-text row's column as written).
pub(crate) fn terms_text(text: &str) -> String {
    let mut out = String::new();
    each_term(text, |t| {
        out.push_str(t);
        out.push(' ');
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_lowercase_stemmed_runs_of_letters_and_digits() {
        let mut got = Vec::new();
        each_term("parseConfig(Retries, retrying) naïve_café ΣΑΣ x2", |t| got.push(t.to_owned()));
        assert_eq!(got, ["parseconfig", "retri", "retri", "naïv", "café", "σας", "x2"]);
        assert_eq!(terms_text("Running runs"), "run run ");
        let mut counted = Vec::new();
        distinct_terms("Retry retries; connect retrying", |t, n| counted.push((t.to_owned(), n)));
        assert_eq!(counted, [("retri".to_owned(), 3), ("connect".to_owned(), 1)]);
        // Remembered or not, the same stem.
        for _ in 0..2 {
            assert_eq!(with_stem("connections", str::to_owned), "connect");
        }
    }
}
