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
    });
}

/// The stems a thread remembers: of each token, the number of its stem.
struct Stems {
    stemmer: Stemmer,
    tokens: Interner,
    stem_of: Vec<u32>,
    stems: Interner,
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
        if let Some(id) = s.tokens.find(token) {
            return f(s.stems.strings.get(s.stem_of[id as usize]));
        }
        if s.tokens.len() >= REMEMBERED {
            s.tokens.clear();
            s.stem_of.clear();
            s.stems.clear();
        }
        let stem = s.stemmer.stem(token);
        s.tokens.intern(token);
        s.stem_of.push(s.stems.intern(&stem).0);
        f(&stem)
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
        // Remembered or not, the same stem.
        for _ in 0..2 {
            assert_eq!(with_stem("connections", str::to_owned), "connect");
        }
    }
}
