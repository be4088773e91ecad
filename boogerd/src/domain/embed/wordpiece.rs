//! BERT's uncased WordPiece tokenizer (the vocabulary of all-MiniLM-L6-v2), so the static
//! table can be used without a tokenizer library: clean and lowercase, strip accents, split
//! on whitespace and punctuation, then greedy longest-match-first subwords with `##`.
//!
//! Before that, identifiers are split into their words (`parse_config`, `parseConfig` →
//! `parse config`): WordPiece alone cuts `parse_config` into `par ##se _ con ##fi ##g`, which
//! means little; the words are in the vocabulary.

/// Words longer than this are one unknown token (as in BERT).
const MAX_WORD_CHARS: usize = 100;
pub(crate) const UNK: u32 = 100;

pub(crate) struct WordPiece {
    vocab: hashbrown::HashMap<Box<str>, u32>,
    /// The longest token's length in characters: no longer piece can match, so the
    /// longest-match search starts there, not at the word's end.
    longest: usize,
}

impl WordPiece {
    /// From the vocabulary, one token per line, the line number being the id.
    pub(crate) fn new<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Self {
        let vocab: hashbrown::HashMap<Box<str>, u32> =
            tokens.into_iter().enumerate().map(|(i, t)| (Box::from(t), i as u32)).collect();
        let longest = vocab.keys().map(|t| t.chars().count()).max().unwrap_or(0);
        Self { vocab, longest }
    }

    /// Token ids of `text` (no `[CLS]`/`[SEP]`). The static tier encodes every chunk of a
    /// project: words are lent from one buffer and pieces looked up as slices, without a
    /// string per word or per candidate piece.
    pub(crate) fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut continuation = String::from("##");
        let mut bounds = Vec::new();
        each_word(text, |word| self.encode_word(word, &mut ids, &mut continuation, &mut bounds));
        ids
    }

    /// Greedy longest-match-first pieces of one word; a word with a part no piece matches is
    /// one unknown token.
    fn encode_word(&self, word: &str, ids: &mut Vec<u32>, continuation: &mut String, bounds: &mut Vec<usize>) {
        bounds.clear();
        bounds.extend(word.char_indices().map(|(i, _)| i));
        bounds.push(word.len());
        let chars = bounds.len() - 1;
        if chars > MAX_WORD_CHARS {
            ids.push(UNK);
            return;
        }
        let start_len = ids.len();
        let mut start = 0;
        while start < chars {
            let mut end = chars.min(start + self.longest);
            let mut found = None;
            while end > start {
                let slice = &word[bounds[start]..bounds[end]];
                let piece = if start == 0 {
                    slice
                } else {
                    continuation.truncate(2);
                    continuation.push_str(slice);
                    continuation.as_str()
                };
                if let Some(&id) = self.vocab.get(piece) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            let Some(id) = found else {
                ids.truncate(start_len);
                ids.push(UNK);
                return;
            };
            ids.push(id);
            start = end;
        }
    }
}

/// The words BERT's basic tokenizer would see, after splitting identifiers, each lent to `f`:
/// lowercase, accents stripped (Latin-1 and Latin Extended-A letters), punctuation as single
/// words.
fn each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    let mut prev: Option<char> = None;
    let mut one = [0u8; 4];
    let mut chars = text.chars().peekable();
    let flush = |word: &mut String, f: &mut dyn FnMut(&str)| {
        if !word.is_empty() {
            f(word);
            word.clear();
        }
    };
    while let Some(c) = chars.next() {
        if c.is_whitespace() || c.is_control() || c == '_' {
            flush(&mut word, &mut f);
        } else if is_punctuation(c) {
            flush(&mut word, &mut f);
            f(c.encode_utf8(&mut one));
        } else {
            // A word boundary inside an identifier: `parseConfig`, `HTTPServer`, `utf8Decode`.
            let boundary = match prev {
                Some(p) if c.is_uppercase() => {
                    p.is_lowercase()
                        || p.is_ascii_digit()
                        || (p.is_uppercase() && chars.peek().is_some_and(|n| n.is_lowercase()))
                }
                _ => false,
            };
            if boundary {
                flush(&mut word, &mut f);
            }
            if c.is_ascii() {
                word.push(c.to_ascii_lowercase());
            } else {
                for l in c.to_lowercase() {
                    word.push(strip_accent(l));
                }
            }
        }
        prev = Some(c);
    }
    flush(&mut word, &mut f);
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

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        each_word(text, |w| out.push(w.to_owned()));
        out
    }

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
