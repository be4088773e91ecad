//! A chunk's text as its distinct words, each with how often it occurs: what its full-text
//! row and its ranking postings are made from, prepared once, on the worker that chunked it.
//!
//! Neither index keeps where a word is (`fulltext`, the ranking segment), so a word said forty
//! times in a function is one entry in each: handing them the text whole made the one writer
//! and the one ranking builder split, stem and hash every occurrence. In the standard
//! library's 40-line pieces 39% of the words are distinct.
//!
//! A piece is a run of ASCII letters and digits and of non-ASCII characters, with its ASCII
//! letters in lower case: the text split only where every tokenizer reading it splits (FTS5's
//! `unicode61`, [`crate::domain::search::segment::each_token`]), each of which splits a piece
//! further where it would have split the text. So a piece's tokens are the text's, and FTS5
//! given the pieces once each finds the same rows; only its count of a row's tokens (its
//! length in bm25) becomes the count of distinct ones.

use std::hash::BuildHasher;

use hashbrown::HashTable;

/// The distinct pieces of a text and their counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Bag {
    /// Each distinct piece once, in the order first seen, each followed by a space.
    text: String,
    /// How often each piece occurs, in the same order.
    counts: Vec<u32>,
}

impl Bag {
    /// The bag of `text`'s pieces.
    pub(crate) fn of(text: &str) -> Bag {
        let hasher = hashbrown::DefaultHashBuilder::default();
        // (start in `out`, length, index in `counts`) of each distinct piece.
        let mut seen: HashTable<(u32, u32, u32)> = HashTable::new();
        let mut out = String::with_capacity(text.len() / 2);
        let mut counts: Vec<u32> = Vec::new();
        each_piece(text, |piece| {
            let start = out.len();
            out.push_str(piece);
            out[start..].make_ascii_lowercase();
            let key = &out[start..];
            let hash = hasher.hash_one(key);
            let at = |&(s, l, _): &(u32, u32, u32)| &out[s as usize..(s + l) as usize];
            if let Some(&(_, _, i)) = seen.find(hash, |e| at(e) == key) {
                counts[i as usize] += 1;
                out.truncate(start);
                return;
            }
            let entry = (start as u32, key.len() as u32, counts.len() as u32);
            seen.insert_unique(hash, entry, |e| hasher.hash_one(at(e)));
            counts.push(1);
            out.push(' ');
        });
        Bag { text: out, counts }
    }

    /// The distinct pieces, separated by spaces: the full-text row's `content`.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Each distinct piece with its count, in the order first seen.
    pub(crate) fn each(&self) -> impl Iterator<Item = (&str, u32)> {
        self.text.split_terminator(' ').zip(self.counts.iter().copied())
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.text.len() + 4 * self.counts.len()
    }
}

/// Calls `f` with each piece of `text`: each run of ASCII letters and digits and non-ASCII
/// characters (splitting at ASCII bytes alone keeps every character whole).
fn each_piece<'t>(text: &'t str, mut f: impl FnMut(&'t str)) {
    let mut start = None;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        let inside = !b.is_ascii() || b.is_ascii_alphanumeric();
        match (inside, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                f(&text[s..i]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        f(&text[s..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_piece_once_with_its_count_ascii_case_aside() {
        let bag = Bag::of("def retry(self):\n    Retry = self.retry_count + RETRY\n");
        let each: Vec<(&str, u32)> = bag.each().collect();
        assert_eq!(each, [("def", 1), ("retry", 4), ("self", 2), ("count", 1)]);
        assert_eq!(bag.text(), "def retry self count ");
        // Non-ASCII characters stay inside their piece, whatever the tokenizer makes of them;
        // their case is the tokenizer's to fold.
        let bag = Bag::of("größe=Größe größe; naïve_x Ärger ärger");
        let each: Vec<(&str, u32)> = bag.each().collect();
        assert_eq!(each, [("größe", 3), ("naïve", 1), ("x", 1), ("Ärger", 1), ("ärger", 1)]);
        assert_eq!(bag.text(), "größe naïve x Ärger ärger ");
    }

    #[test]
    fn the_full_text_row_of_a_bag_finds_what_the_text_finds() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(content, content = '', detail = 'column', tokenize = 'porter unicode61')",
        )
        .unwrap();
        let texts = [
            "fn parse_config(path: &Path) -> Result<Config> { read(path)?.parse() }",
            "cafe\u{301}s = {'naïve': Größe}  # ΣΑΣ",
            "x",
        ];
        for (i, t) in texts.iter().enumerate() {
            c.execute("INSERT INTO t(rowid, content) VALUES (?1, ?2)", rusqlite::params![i as i64, t]).unwrap();
            c.execute(
                "INSERT INTO t(rowid, content) VALUES (?1, ?2)",
                rusqlite::params![100 + i as i64, Bag::of(t).text()],
            )
            .unwrap();
        }
        for q in ["parse", "parsing", "config", "path", "cafés", "naive", "größe", "σας", "x", "result"] {
            let rows: Vec<i64> = c
                .prepare("SELECT rowid FROM t WHERE t MATCH ?1 ORDER BY rowid")
                .unwrap()
                .query_map([format!("\"{q}\"")], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let (raw, bagged): (Vec<i64>, Vec<i64>) = rows.iter().partition(|&&r| r < 100);
            assert_eq!(raw.iter().map(|r| r + 100).collect::<Vec<_>>(), bagged, "{q}");
        }
    }
}
