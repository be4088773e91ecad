//! Embeddings for semantic search: one [`Embedder`] trait, several tiers behind it.
//!
//! - [`static_table`]: a token table compiled into boogerd (model2vec-style: tokenize, look
//!   up, average, normalise); embeds a repository in seconds, offline, out of the box.
//! - [`transformer`]: all-MiniLM-L6-v2 run in process (the `transformer` feature).
//! - [`remote`]: Ollama and OpenAI-compatible embedding services.
//! - [`provider`]: which of them a daemon runs (`--embedder`).
//! - [`wordpiece`]: the tokenizer the table and the transformer share.
//! - [`text`]: what text stands for a chunk.
//! - [`vectors`]: a project's vectors in memory, exact top-k.
//! - [`worker`]: embedding new and changed chunks in the background.

pub mod provider;
pub(crate) mod remote;
pub mod static_table;
pub(crate) mod text;
#[cfg(feature = "transformer")]
pub(crate) mod transformer;
pub(crate) mod vectors;
pub(crate) mod wordpiece;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("the embedding table is unusable: {0}")]
    BadTable(String),
    #[error("the transformer model is unusable: {0}")]
    BadModel(String),
    #[error("embedding failed: {0}")]
    Failed(String),
    /// A service that is down or refused the request; the message says what to do.
    #[error("{0}")]
    Unavailable(String),
}

/// Turns texts into unit vectors of one model.
pub trait Embedder: Send + Sync {
    /// Names the model exactly: vectors stored under another id are stale.
    fn id(&self) -> &str;
    fn dims(&self) -> usize;
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// A search query's vector (some models mark queries and documents differently).
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.embed(&[query])?.pop().unwrap_or_default())
    }
    /// How much a question's cosine with a chunk counts when hybrid search re-ranks lexical
    /// search's candidates, against the best candidate's lexical score of 1: the better a
    /// model's cosine tells the answer from the chunks beside it, the more it may weigh.
    /// Each tier's is measured on ../shared/eval/questions (BENCHMARKS.md); one not measured
    /// (a service's model) counts as the static table.
    fn question_weight(&self) -> f64 {
        static_table::QUESTION_WEIGHT
    }
}

/// Scales `v` to length 1 (a zero vector stays zero).
pub(crate) fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Cosine similarity of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
