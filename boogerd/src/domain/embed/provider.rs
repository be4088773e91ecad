//! Which embedders a daemon runs, from `--embedder` (or `BOOGER_EMBEDDER`).
//!
//! The static tier always runs first: it covers a repository in seconds, so semantic search
//! works at once. A better tier, if configured (the transformer, Ollama, an OpenAI-compatible
//! server), embeds after it and answers once it covers the project; until then, or while
//! it is down, the static tier answers and the answer says so.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use super::Embedder;
use super::remote::{Api, RemoteEmbedder};
use super::static_table::StaticEmbedder;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The static tier, plus the transformer when it is built in and installed.
    Auto,
    Static,
    /// all-MiniLM-L6-v2 in process (`booger model install`; the `transformer` feature).
    MiniLm,
    Ollama,
    OpenAi,
}

impl FromStr for Choice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "auto" => Self::Auto,
            "static" => Self::Static,
            "minilm" | "transformer" => Self::MiniLm,
            "ollama" => Self::Ollama,
            "openai" => Self::OpenAi,
            other => return Err(format!("unknown embedder {other:?}: use auto, static, minilm, ollama or openai")),
        })
    }
}

impl Choice {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Static => "static",
            Self::MiniLm => "minilm",
            Self::Ollama => "ollama",
            Self::OpenAi => "openai",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub choice: Choice,
    /// The service's base URL (Ollama: `http://127.0.0.1:11434` by default).
    pub url: Option<String>,
    /// The service's model (Ollama: `nomic-embed-text`; OpenAI: `text-embedding-3-small`).
    pub model: Option<String>,
    pub api_key: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self { choice: Choice::Auto, url: None, model: None, api_key: None }
    }
}

/// The tiers, cheapest first, and what keeps a configured tier from running.
pub struct Tiers {
    pub tiers: Vec<Arc<dyn Embedder>>,
    pub problem: Option<String>,
}

pub(crate) fn open(settings: &Settings, data_dir: &Path) -> Result<Tiers, super::EmbedError> {
    let mut tiers: Vec<Arc<dyn Embedder>> = vec![Arc::new(StaticEmbedder::builtin()?)];
    let mut problem = None;
    let model_dir = data_dir.join(booger_proto::paths::MINILM_DIR);
    match settings.choice {
        Choice::Static => {}
        Choice::Auto if !model_dir.join("model.safetensors").exists() => {}
        Choice::Auto | Choice::MiniLm => match transformer(&model_dir) {
            Ok(t) => tiers.push(t),
            Err(e) => problem = Some(e),
        },
        Choice::Ollama => {
            let url = settings.url.as_deref().unwrap_or("http://127.0.0.1:11434");
            let model = settings.model.as_deref().unwrap_or("nomic-embed-text");
            tiers.push(Arc::new(RemoteEmbedder::new(Api::Ollama, url, model, settings.api_key.clone())));
        }
        Choice::OpenAi => match &settings.url {
            Some(url) => {
                let model = settings.model.as_deref().unwrap_or("text-embedding-3-small");
                tiers.push(Arc::new(RemoteEmbedder::new(Api::OpenAi, url, model, settings.api_key.clone())));
            }
            None => {
                problem = Some(
                    "--embedder openai needs the server's URL: --embed-url (or BOOGER_EMBED_URL), e.g. https://api.openai.com/v1"
                        .to_owned(),
                )
            }
        },
    }
    if let Some(p) = &problem {
        tracing::error!(problem = %p, "the configured embedder is not running; the static tier answers");
    }
    Ok(Tiers { tiers, problem })
}

#[cfg(feature = "transformer")]
fn transformer(dir: &Path) -> Result<Arc<dyn Embedder>, String> {
    if !dir.join("model.safetensors").exists() {
        return Err(format!("the transformer model is not installed in {}: run `booger model install`", dir.display()));
    }
    let started = std::time::Instant::now();
    let t = super::transformer::TransformerEmbedder::load(dir).map_err(|e| e.to_string())?;
    tracing::info!(model = t.id(), ms = started.elapsed().as_millis() as u64, "transformer tier loaded");
    Ok(Arc::new(t))
}

#[cfg(not(feature = "transformer"))]
fn transformer(_dir: &Path) -> Result<Arc<dyn Embedder>, String> {
    Err("this boogerd was built without the transformer tier: rebuild with `cargo install --path boogerd --features transformer`".to_owned())
}
