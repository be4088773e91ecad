//! What `embed` answers: each embedding tier's coverage.

use schemars::JsonSchema;
use serde::Serialize;

/// `embed`, and a project's embeddings in `status`: each tier's coverage, which tier answers
/// (the top-level `model`, `embedded` and `embeddable` are the best tier's: what embedding
/// converges to), stale vectors, and the last error.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Embed {
    #[schemars(extend("x-nullable" = true))]
    pub model: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub embedded: Option<u64>,
    #[schemars(extend("x-nullable" = true))]
    pub embeddable: Option<u64>,
    pub answering: String,
    pub tiers: Vec<EmbedTier>,
    /// Vectors of models no tier uses any more, kept until the tiers are complete.
    pub stale: u64,
    pub running: bool,
    #[schemars(extend("x-nullable" = true))]
    pub error: Option<String>,
    #[schemars(extend("x-nullable" = true))]
    pub problem: Option<String>,
}

/// One embedding tier's coverage of a project.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EmbedTier {
    pub model: String,
    pub embedded: u64,
    pub embeddable: u64,
    pub ready: bool,
}
