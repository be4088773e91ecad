//! The static tier: a token-embedding table compiled into boogerd. A text's vector is the
//! mean of its tokens' rows, normalised: no model to run, tens of thousands of chunks a
//! second. The table is made by `scripts/embed/distill.py` from all-MiniLM-L6-v2.
//!
//! File format (`BOOGEMB2`): magic, u32 rows, u32 dims (little-endian), then each row as a
//! vector is stored (`vectors::encode`: an f32 scale, then 4-bit values two a byte), then the
//! vocabulary, one token per line (line = row). 192 dimensions in 4 bits: each chunk's vector
//! 100 bytes on disk instead of 132, and the questions' hybrid NDCG@10 within the set's noise
//! (BENCHMARKS.md, "The install").
//!
//! The daemon carries the table compressed (zstd, level 19): its 4-bit values are far from
//! uniform (about 2.2 bits of entropy each), so it takes 1.8 MB of the installed daemon
//! rather than 3.3. The rows are unpacked into the heap when a text is first embedded and
//! given back when no project holds an index in memory ([`release_rows`]), as the projects'
//! own structures are.

use std::sync::{Arc, Mutex};

use super::vectors::{add_scaled, encoded_len};
use super::wordpiece::WordPiece;
use super::{EmbedError, Embedder};
use crate::base::sync::Recover;

const MAGIC: &[u8; 8] = b"BOOGEMB2";
/// Bytes before the first row: the magic and the two counts.
const HEAD: usize = 16;

/// The weight of the table's cosine in a question's re-ranking ([`Embedder::question_weight`]).
/// Chosen on ../shared/eval/questions (NDCG@10, mean over its five repositories) and held out
/// by repository: fitted on four, scored on the fifth. The cosine alone: 0.2 0.530, 1.0 0.533
/// (0.8 lowered it before the length and file terms); with both: 0.8 0.565, 1.0 0.575, 1.2
/// 0.576. Once a question's best hits lent to the functions they call (lexical 0.561 ->
/// 0.573), on the shipped `hybrid-search`: 1.0 0.599, 1.2 0.602, 1.4 0.604, 1.6 0.599, 2.0
/// 0.588; held out by repository, 1.4 was chosen in four folds of five (0.601 held out; 0.605
/// once a thin wrapper's callee was looked for in its file too, lexical 0.575). Any weight
/// above 1.0 moves one of the standard library's 120 queries' file from tenth to eleventh.
pub(crate) const QUESTION_WEIGHT: f64 = 1.4;

/// The table shipped with boogerd, compressed.
static PACKED: &[u8] = include_bytes!("../../../assets/static-embed.bin.zst");

/// The shipped table unpacked, while something embeds with it.
static UNPACKED: Mutex<Option<Arc<[u8]>>> = Mutex::new(None);

/// The shipped table, unpacked (kept until [`release_rows`]).
fn builtin_table() -> Result<Arc<[u8]>, EmbedError> {
    let mut slot = UNPACKED.lock().recover();
    if let Some(t) = slot.as_ref() {
        return Ok(Arc::clone(t));
    }
    let table: Arc<[u8]> = unpack()?.into();
    *slot = Some(Arc::clone(&table));
    Ok(table)
}

fn unpack() -> Result<Vec<u8>, EmbedError> {
    zstd::stream::decode_all(PACKED).map_err(|e| EmbedError::BadTable(format!("unpacking: {e}")))
}

/// Gives the shipped table's unpacked rows back (no project holds an index in memory); the
/// next text embedded unpacks them again, in a few milliseconds.
pub(crate) fn release_rows() {
    UNPACKED.lock().recover().take();
}

pub struct StaticEmbedder {
    dims: usize,
    /// Bytes a row.
    record: usize,
    tokenizer: WordPiece,
    id: String,
}

impl StaticEmbedder {
    /// The table compiled into boogerd. Its rows are unpacked again when first used: a
    /// daemon that embeds nothing does not hold them.
    pub fn builtin() -> Result<Self, EmbedError> {
        Self::parse(&unpack()?)
    }

    /// The embedder of the table `bytes` (its rows are the shipped table's).
    fn parse(bytes: &[u8]) -> Result<Self, EmbedError> {
        let bad = |why: &str| EmbedError::BadTable(why.to_owned());
        if bytes.len() < HEAD || &bytes[..8] != MAGIC {
            return Err(bad("not a BOOGEMB2 table"));
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes")) as usize;
        let (n, dims) = (u32_at(8), u32_at(12));
        let record = encoded_len(dims);
        if bytes.len() < HEAD + n * record {
            return Err(bad("truncated rows"));
        }
        let vocab = std::str::from_utf8(&bytes[HEAD + n * record..]).map_err(|_| bad("vocabulary is not UTF-8"))?;
        let tokens: Vec<&str> = vocab.split('\n').collect();
        if tokens.len() != n {
            return Err(bad("vocabulary and rows differ in length"));
        }
        // The id names the exact table (unpacked): vectors from another table are stale.
        let id = format!("static-{}", &blake3::hash(bytes).to_hex()[..12]);
        let tokenizer = WordPiece::new(tokens);
        Ok(Self { dims, record, tokenizer, id })
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
        let table = builtin_table()?;
        let rows = &table[HEAD..];
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; self.dims];
                // Each distinct token's row once, weighed by its count: code repeats its
                // tokens (brackets, `self`, a name), and the rows are most of the work.
                let mut ids = self.tokenizer.encode(t);
                ids.sort_unstable();
                for run in ids.chunk_by(|a, b| a == b) {
                    let record = &rows[run[0] as usize * self.record..][..self.record];
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
        assert!(StaticEmbedder::parse(b"nope").is_err());
        let mut t = builtin_table().unwrap()[..100].to_vec();
        t.extend_from_slice(b"x");
        assert!(matches!(StaticEmbedder::parse(&t), Err(EmbedError::BadTable(_))));
    }

    #[test]
    fn the_shipped_rows_are_given_back_and_unpacked_again_alike() {
        let e = StaticEmbedder::builtin().unwrap();
        let text = ["fn retry_upload(blob: &Blob, attempts: u32) -> Result<(), UploadError>"];
        let before = e.embed(&text).unwrap();
        release_rows();
        assert_eq!(e.embed(&text).unwrap(), before);
        // The id of the table as it was shipped unpacked: vectors stored before are current.
        assert_eq!(e.id(), "static-548c6b9c4541");
    }
}
