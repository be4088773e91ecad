//! BERT's uncased WordPiece tokenizer (the vocabulary of all-MiniLM-L6-v2), so the static
//! table can be used without a tokenizer library: clean and lowercase, strip accents, split
//! on whitespace and punctuation, then greedy longest-match-first subwords with `##`.
//!
//! Before that, identifiers are split into their words (`parse_config`, `parseConfig` →
//! `parse config`): WordPiece alone cuts `parse_config` into `par ##se _ con ##fi ##g`, which
//! means little; the words are in the vocabulary.

use std::collections::HashMap;

/// Words longer than this are one unknown token (as in BERT).
const MAX_WORD_CHARS: usize = 100;
pub(crate) const UNK: u32 = 100;

pub(crate) struct WordPiece {
    vocab: HashMap<String, u32>,
}

impl WordPiece {
    /// From the vocabulary, one token per line, the line number being the id.
    pub(crate) fn new<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Self {
        Self { vocab: tokens.into_iter().enumerate().map(|(i, t)| (t.to_owned(), i as u32)).collect() }
    }

    /// Token ids of `text` (no `[CLS]`/`[SEP]`).
    pub(crate) fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut piece = String::new();
        for word in words(text) {
            let chars: Vec<char> = word.chars().collect();
            if chars.len() > MAX_WORD_CHARS {
                ids.push(UNK);
                continue;
            }
            let start_len = ids.len();
            let mut start = 0;
            while start < chars.len() {
                let mut end = chars.len();
                let mut found = None;
                while end > start {
                    piece.clear();
                    if start > 0 {
                        piece.push_str("##");
                    }
                    piece.extend(&chars[start..end]);
                    if let Some(&id) = self.vocab.get(&piece) {
                        found = Some(id);
                        break;
                    }
                    end -= 1;
                }
                match found {
                    Some(id) => {
                        ids.push(id);
                        start = end;
                    }
                    None => {
                        ids.truncate(start_len);
                        ids.push(UNK);
                        break;
                    }
                }
            }
        }
        ids
    }
}

/// The words BERT's basic tokenizer would see, after splitting identifiers: lowercase,
/// accents stripped (Latin-1 and Latin Extended-A letters), punctuation as single words.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev: Option<char> = None;
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            out.push(std::mem::take(word));
        }
    };
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_whitespace() || c.is_control() || c == '_' {
            flush(&mut word, &mut out);
        } else if is_punctuation(c) {
            flush(&mut word, &mut out);
            out.push(c.to_string());
        } else {
            // A word boundary inside an identifier: `parseConfig`, `HTTPServer`, `utf8Decode`.
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                Some(p) if c.is_uppercase() => {
                    p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
                }
                _ => false,
            };
            if boundary {
                flush(&mut word, &mut out);
            }
            for l in c.to_lowercase() {
                word.push(strip_accent(l));
            }
        }
        prev = Some(c);
    }
    flush(&mut word, &mut out);
    out
}

/// BERT counts every non-alphanumeric ASCII symbol as punctuation, and Unicode punctuation.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || (!c.is_ascii() && !c.is_alphanumeric() && !c.is_whitespace())
}

/// The base letter of an accented Latin letter (what NFD + dropping marks gives).
fn strip_accent(c: char) -> char {
    const FROM: &str = "àáâãäåçèéêëìíîïñòóôõöùúûüýÿāăąćĉċčďēĕėęěĝğġģĥĩīĭįĵķĺļľńņňōŏőŕŗřśŝşšţťũūŭůűųŵŷźżž";
    const TO: &str = "aaaaaaceeeeiiiinooooouuuuyyaaacccccdeeeeegggghiiiijklllnnnooorrrssssttuuuuuuwyzzz";
    match FROM.chars().position(|f| f == c) {
        Some(i) => TO.chars().nth(i).unwrap_or(c),
        None => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_bert_after_identifier_words() {
        assert_eq!(words("def parse_config(path):"), ["def", "parse", "config", "(", "path", ")", ":"]);
        assert_eq!(words("HTTPServer.serve_forever()"), ["http", "server", ".", "serve", "forever", "(", ")"]);
        assert_eq!(words("parseConfig utf8Decode"), ["parse", "config", "utf8", "decode"]);
        assert_eq!(words("naïve café"), ["naive", "cafe"]);
        assert_eq!(words("a->b"), ["a", "-", ">", "b"]);
    }

    #[test]
    fn greedy_longest_match_with_continuations() {
        let wp = WordPiece::new(["[PAD]", "re", "##try", "retry", "up", "##load", "##s", "!"]);
        assert_eq!(wp.encode("retry uploads!"), [3, 4, 5, 6, 7]);
        assert_eq!(wp.encode("xyz"), [UNK]);
        assert_eq!(wp.encode(&"a".repeat(150)), [UNK]);
    }
}
