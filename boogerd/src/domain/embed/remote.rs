//! Embedding services over HTTP: Ollama (`POST /api/embed`) and any OpenAI-compatible server
//! (`POST /v1/embeddings`: OpenAI, llama.cpp's server, vLLM, LM Studio…).
//!
//! A service that is down or refuses a request is an [`EmbedError::Unavailable`] whose
//! message says what to do; the worker keeps the error for `status`, and searches fall back
//! to the static tier, so a stopped service never costs more than its own vectors.

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};

use super::{EmbedError, Embedder};

/// Texts per request: big enough to amortise the round trip, small enough that a CPU-only
/// server answers well inside the timeout.
const REQUEST_BATCH: usize = 64;
const BATCH_TIMEOUT: Duration = Duration::from_secs(120);
/// A query waits at most this long for its vector before the static tier answers instead.
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    Ollama,
    OpenAi,
}

pub(crate) struct RemoteEmbedder {
    api: Api,
    endpoint: String,
    model: String,
    api_key: Option<String>,
    id: String,
    dims: OnceLock<usize>,
    batch_agent: ureq::Agent,
    query_agent: ureq::Agent,
}

impl RemoteEmbedder {
    /// `url` is the server's base (`http://127.0.0.1:11434`; for OpenAI-compatible servers
    /// with or without the trailing `/v1`).
    pub(crate) fn new(api: Api, url: &str, model: &str, api_key: Option<String>) -> Self {
        let base = url.trim_end_matches('/');
        let endpoint = match api {
            Api::Ollama => format!("{base}/api/embed"),
            Api::OpenAi if base.ends_with("/v1") => format!("{base}/embeddings"),
            Api::OpenAi => format!("{base}/v1/embeddings"),
        };
        let agent = |timeout| -> ureq::Agent {
            ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(false).build().into()
        };
        let prefix = match api {
            Api::Ollama => "ollama",
            Api::OpenAi => "openai",
        };
        Self {
            api,
            endpoint,
            model: model.to_owned(),
            api_key,
            id: format!("{prefix}/{model}"),
            dims: OnceLock::new(),
            batch_agent: agent(BATCH_TIMEOUT),
            query_agent: agent(QUERY_TIMEOUT),
        }
    }

    fn name(&self) -> String {
        format!("{} ({})", self.id, self.endpoint)
    }

    /// nomic-embed models are trained with a task prefix on each side.
    fn prefixed(&self, kind: &str, text: &str) -> String {
        if self.model.starts_with("nomic-embed") { format!("{kind}: {text}") } else { text.to_owned() }
    }

    fn request(&self, agent: &ureq::Agent, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let down = |why: String| EmbedError::Unavailable(format!("{} {why}", self.name()));
        let mut req = agent.post(&self.endpoint);
        if let Some(key) = &self.api_key {
            req = req.header("Authorization", &format!("Bearer {key}"));
        }
        let mut resp = req.send_json(json!({ "model": self.model, "input": texts })).map_err(|e| {
            down(match self.api {
                Api::Ollama => format!("is not answering ({e}): start it with `ollama serve`, or choose another embedder (boogerd --embedder static)"),
                Api::OpenAi => format!("is not answering ({e}): start the server, or choose another embedder (boogerd --embedder static)"),
            })
        })?;
        let status = resp.status().as_u16();
        let body: Value = resp.body_mut().read_json().unwrap_or(Value::Null);
        if status != 200 {
            let message = body["error"]["message"].as_str().or(body["error"].as_str()).unwrap_or("no message");
            let hint = match (self.api, status) {
                (_, 401 | 403) => "; set the key in BOOGER_EMBED_API_KEY".to_owned(),
                (Api::Ollama, 404) => format!("; fetch the model with `ollama pull {}`", self.model),
                _ => String::new(),
            };
            return Err(down(format!("refused the request (HTTP {status}: {message}){hint}")));
        }
        let vectors: Vec<Vec<f32>> = match self.api {
            Api::Ollama => body["embeddings"].as_array().map(|a| a.iter().map(floats).collect()),
            Api::OpenAi => body["data"].as_array().map(|a| {
                // Entries carry their index; servers need not answer in order.
                let mut rows: Vec<(u64, Vec<f32>)> =
                    a.iter().map(|d| (d["index"].as_u64().unwrap_or(0), floats(&d["embedding"]))).collect();
                rows.sort_by_key(|r| r.0);
                rows.into_iter().map(|r| r.1).collect()
            }),
        }
        .ok_or_else(|| down("answered without embeddings".to_owned()))?;
        let dims = vectors.first().map_or(0, Vec::len);
        if vectors.len() != texts.len() || dims == 0 || vectors.iter().any(|v| v.len() != dims) {
            return Err(down(format!("answered {} vectors for {} texts", vectors.len(), texts.len())));
        }
        if *self.dims.get_or_init(|| dims) != dims {
            return Err(down(format!("changed its vector size to {dims}")));
        }
        Ok(vectors
            .into_iter()
            .map(|mut v| {
                super::normalize(&mut v);
                v
            })
            .collect())
    }
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_f64).map(|x| x as f32).collect()).unwrap_or_default()
}

impl Embedder for RemoteEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    /// Known after the first answer (0 before).
    fn dims(&self) -> usize {
        self.dims.get().copied().unwrap_or(0)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for group in texts.chunks(REQUEST_BATCH) {
            let group: Vec<String> = group.iter().map(|t| self.prefixed("search_document", t)).collect();
            out.extend(self.request(&self.batch_agent, &group)?);
        }
        Ok(out)
    }

    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = self.request(&self.query_agent, &[self.prefixed("search_query", query)])?;
        Ok(v.pop().unwrap_or_default())
    }
}
