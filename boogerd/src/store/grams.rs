//! The trigram index `grep` narrows by: for each chunk, the distinct trigrams of its text,
//! kept in `chunk_grams` (FTS5, contentless, no positions) as one short token each.
//!
//! The trigrams are taken here, not by FTS5's own trigram tokenizer, so FTS5 sees each
//! distinct one once per chunk: 12.4 million tokens for the Python standard library instead
//! of 31.4 million. A large run leaves them to a background pass ([`Store::fill_grams`]).
//!
//! Trigrams are of bytes after [`fold`]: ASCII letters in lower case, and the two non-ASCII
//! characters that a case-insensitive regex matches for an ASCII letter (KELVIN SIGN for `k`,
//! LONG S for `s`) written as that letter. So an ASCII literal's trigrams are in the index
//! whatever the case of its match, and any literal's folded trigrams are there for a
//! case-sensitive match.

/// A trigram: three folded bytes, big-endian in the low 24 bits.
pub type Gram = u32;

/// Calls `each` with every trigram of `text` after folding (windows overlap, repeats included).
pub fn each_gram(text: &[u8], mut each: impl FnMut(Gram)) {
    let mut window: u32 = 0;
    let mut filled = 0;
    fold(text, |b| {
        window = ((window << 8) | u32::from(b)) & 0x00ff_ffff;
        filled += 1;
        if filled >= 3 {
            each(window);
        }
    });
}

/// Writes `text` folded, byte by byte: ASCII upper case to lower, KELVIN SIGN (U+212A) to `k`
/// and LONG S (U+017F) to `s`, everything else as it is.
pub fn fold(text: &[u8], mut out: impl FnMut(u8)) {
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b == 0xC5 && text.get(i + 1) == Some(&0xBF) {
            out(b's');
            i += 2;
        } else if b == 0xE2 && text.get(i + 1) == Some(&0x84) && text.get(i + 2) == Some(&0xAA) {
            out(b'k');
            i += 3;
        } else {
            out(b.to_ascii_lowercase());
            i += 1;
        }
    }
}

/// The FTS5 token of one trigram: five characters of `[0-9a-v]` (5 bits each), which every
/// FTS5 tokenizer keeps as one lower-case word.
pub fn token(gram: Gram, out: &mut String) {
    const DIGITS: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    for shift in [20, 15, 10, 5, 0] {
        out.push(DIGITS[((gram >> shift) & 31) as usize] as char);
    }
}

/// The distinct trigrams of a text, as the space-separated tokens of its `chunk_grams` row.
/// Reused across texts: a bit per possible trigram (2 MiB), cleared by the list of those set.
pub struct GramSet {
    seen: Vec<u64>,
    set: Vec<Gram>,
}

impl Default for GramSet {
    fn default() -> Self {
        GramSet { seen: vec![0; (1 << 24) / 64], set: Vec::new() }
    }
}

impl GramSet {
    pub fn add(&mut self, text: &str) {
        let (seen, set) = (&mut self.seen, &mut self.set);
        each_gram(text.as_bytes(), |g| {
            let (word, bit) = ((g / 64) as usize, 1u64 << (g % 64));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                set.push(g);
            }
        });
    }

    /// The tokens of everything added since the last call, in trigram order; starts afresh.
    pub fn take_tokens(&mut self) -> String {
        self.set.sort_unstable();
        let mut out = String::with_capacity(self.set.len() * 6);
        for &g in &self.set {
            if !out.is_empty() {
                out.push(' ');
            }
            token(g, &mut out);
            self.seen[(g / 64) as usize] = 0;
        }
        self.set.clear();
        out
    }
}

/// The `chunk_grams` tokens of each chunk's text. Taken by the parse workers, beside the
/// chunks, so that the one writer only stores them; each worker thread keeps its set.
pub fn tokens_of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    thread_local! {
        static SET: std::cell::RefCell<GramSet> = std::cell::RefCell::new(GramSet::default());
    }
    SET.with_borrow_mut(|set| {
        texts
            .into_iter()
            .map(|t| {
                set.add(t);
                set.take_tokens()
            })
            .collect()
    })
}

impl super::Store {
    /// Writes the trigram rows of up to `max_files` files that a large run left pending, in
    /// one short transaction; returns how many it wrote (0: none are pending).
    pub fn fill_grams(&self, max_files: usize) -> super::Result<usize> {
        self.write(|c| {
            let tx = c.transaction()?;
            let ids: Vec<i64> = {
                let mut pending = tx.prepare_cached("SELECT file_id FROM grams_pending ORDER BY file_id LIMIT ?1")?;
                pending.query_map([max_files as i64], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
            };
            {
                let mut texts = tx.prepare_cached("SELECT id, content FROM chunks WHERE file_id = ?1 ORDER BY id")?;
                let mut insert = tx.prepare_cached("INSERT INTO chunk_grams(rowid, grams) VALUES (?1, ?2)")?;
                let mut done = tx.prepare_cached("DELETE FROM grams_pending WHERE file_id = ?1")?;
                let mut set = GramSet::default();
                for &id in &ids {
                    let mut rows = texts.query([id])?;
                    while let Some(r) = rows.next()? {
                        set.add(r.get_ref(1)?.as_str().unwrap_or_default());
                        insert.execute(rusqlite::params![r.get::<_, i64>(0)?, set.take_tokens()])?;
                    }
                    done.execute([id])?;
                }
            }
            tx.commit()?;
            Ok(ids.len())
        })
    }

    /// Files whose trigram row is still to be written.
    pub fn grams_pending(&self) -> super::Result<u64> {
        self.read(|c| c.query_row("SELECT count(*) FROM grams_pending", [], |r| r.get::<_, i64>(0))).map(|n| n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grams(text: &str) -> Vec<Gram> {
        let mut v = Vec::new();
        each_gram(text.as_bytes(), |g| v.push(g));
        v
    }

    #[test]
    fn trigrams_are_folded_bytes() {
        assert_eq!(grams("aBc"), grams("abc"));
        assert_eq!(grams("abcd").len(), 2);
        assert_eq!(grams("ab"), Vec::<Gram>::new());
        assert_eq!(grams("\u{212A}ey"), grams("KEY"), "KELVIN SIGN folds to k");
        assert_eq!(grams("cla\u{17F}s"), grams("class"), "LONG S folds to s");
        assert_ne!(grams("é_a"), grams("e_a"), "other bytes stay");
    }

    #[test]
    fn a_set_is_distinct_sorted_and_starts_afresh() {
        let mut set = GramSet::default();
        set.add("abab");
        set.add("aba");
        let first = set.take_tokens();
        assert_eq!(first.split(' ').count(), 2, "aba and bab: {first}");
        let mut t = String::new();
        token(0x616263, &mut t);
        set.add("abc");
        assert_eq!(set.take_tokens(), t);
        assert_eq!(set.take_tokens(), "");
        assert!(t.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()) && t.len() == 5);
    }
}
