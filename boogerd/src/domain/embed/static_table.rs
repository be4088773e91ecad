//! The static tier: a token-embedding table compiled into boogerd. A text's vector is the
//! mean of its tokens' rows, normalised: no model to run, tens of thousands of chunks a
//! second. The table is made by `scripts/embed/distill.py` from all-MiniLM-L6-v2.
//!
//! File format (`BOOGEMB2`): magic, u32 rows, u32 dims (little-endian), then each row as a
//! vector is stored (`vectors::encode`: an f32 scale, then 4-bit values two a byte), then the
//! vocabulary, one token per line (line = row). 192 dimensions in 4 bits: 3.3 MB of the
//! daemon (8.2 MB in 256 int8 dimensions), each chunk's vector 100 bytes on disk instead of
//! 132, and the questions' hybrid NDCG@10 within the set's noise (BENCHMARKS.md, "The
//! install").

use std::borrow::Cow;

use super::vectors::{add_scaled, encoded_len};
use super::wordpiece::WordPiece;
use super::{EmbedError, Embedder};

const MAGIC: &[u8; 8] = b"BOOGEMB2";

/// The table shipped with boogerd.
pub(crate) static TABLE: &[u8] = include_bytes!("../../../assets/static-embed.bin");

pub struct StaticEmbedder {
    dims: usize,
    /// Bytes a row.
    record: usize,
    /// The rows as stored: per token an f32 scale, then `dims` 4-bit values. The built-in
    /// table is read in place from the binary (no copy: only rows of tokens in use are ever
    /// paged in).
    body: Cow<'static, [u8]>,
    tokenizer: WordPiece,
    id: String,
}

impl StaticEmbedder {
    /// The table compiled into boogerd.
    pub fn builtin() -> Result<Self, EmbedError> {
        Self::from_bytes(Cow::Borrowed(TABLE))
    }

    pub(crate) fn from_bytes(bytes: Cow<'static, [u8]>) -> Result<Self, EmbedError> {
        let bad = |why: &str| EmbedError::BadTable(why.to_owned());
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err(bad("not a BOOGEMB2 table"));
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes")) as usize;
        let (n, dims) = (u32_at(8), u32_at(12));
        let record = encoded_len(dims);
        if bytes.len() < 16 + n * record {
            return Err(bad("truncated rows"));
        }
        let vocab = std::str::from_utf8(&bytes[16 + n * record..]).map_err(|_| bad("vocabulary is not UTF-8"))?;
        let tokens: Vec<&str> = vocab.split('\n').collect();
        if tokens.len() != n {
            return Err(bad("vocabulary and rows differ in length"));
        }
        // The id names the exact table: vectors from another table are stale.
        let id = format!("static-{}", &blake3::hash(&bytes).to_hex()[..12]);
        let tokenizer = WordPiece::new(tokens);
        let body = match bytes {
            Cow::Borrowed(b) => Cow::Borrowed(&b[16..16 + n * record]),
            Cow::Owned(b) => Cow::Owned(b[16..16 + n * record].to_vec()),
        };
        Ok(Self { dims, record, body, tokenizer, id })
    }
}

impl Embedder for StaticEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; self.dims];
                // Each distinct token's row once, weighed by its count: code repeats its
                // tokens (brackets, `self`, a name), and the rows are most of the work.
                let mut ids = self.tokenizer.encode(t);
                ids.sort_unstable();
                for run in ids.chunk_by(|a, b| a == b) {
                    let record = &self.body[run[0] as usize * self.record..][..self.record];
                    let scale = f32::from_le_bytes(record[..4].try_into().expect("4 bytes")) * run.len() as f32;
                    add_scaled(&mut v, &record[4..], scale);
                }
                super::normalize(&mut v);
                v
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::embed::cosine;

    #[test]
    fn the_builtin_table_loads_and_ranks_by_meaning() {
        let e = StaticEmbedder::builtin().unwrap();
        assert_eq!(e.dims(), 192);
        let v = e
            .embed(&[
                "retry a failed upload",
                "def upload_with_retries(blob, attempts=3): try again when sending the file fails",
                "def parse_config(path): read the settings file",
            ])
            .unwrap();
        assert!((cosine(&v[0], &v[0]) - 1.0).abs() < 1e-5);
        assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]), "{} vs {}", cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
        // No known token: a zero vector, which matches nothing.
        assert!(e.embed(&[""]).unwrap()[0].iter().all(|x| *x == 0.0));
    }

    #[test]
    fn tokenizes_like_bert_on_plain_text() {
        // Ids from the reference tokenizer (tokenizers' BertWordPiece with this vocabulary).
        let e = StaticEmbedder::builtin().unwrap();
        assert_eq!(
            e.tokenizer.encode("Retry failed uploads with backoff!"),
            [2128, 11129, 3478, 2039, 11066, 2015, 2007, 2067, 7245, 999]
        );
        assert_eq!(e.tokenizer.encode("naïve café"), [15743, 7668]);
        assert_eq!(e.tokenizer.encode(&format!("{} ok", "x".repeat(120))), [100, 7929]);
    }

    #[test]
    fn a_bad_table_is_refused() {
        assert!(StaticEmbedder::from_bytes(Cow::Borrowed(b"nope")).is_err());
        let mut t = TABLE[..100].to_vec();
        t.extend_from_slice(b"x");
        assert!(matches!(StaticEmbedder::from_bytes(Cow::Owned(t)), Err(EmbedError::BadTable(_))));
    }
}
