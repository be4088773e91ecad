//! What the calls about a session's memory answer: batches, notes, focus, visits, forgetting.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::Facts;

/// One call of a batch, answered.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Answered {
    pub tool: String,
    #[serde(rename = "isError")]
    pub is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Batch {
    pub results: Vec<Answered>,
    pub failed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Facts>,
    /// Several projects answered (`workspace-search`, a batch over several): each one's facts,
    /// in the order they answered; `index` is then the first's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexes: Option<Vec<Facts>>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Annotated {
    pub id: i64,
    pub target: String,
    #[schemars(extend("x-nullable" = true))]
    pub expires_at: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Annotation {
    pub id: i64,
    pub target: String,
    pub note: String,
    /// None for a note in the shared context.
    #[schemars(extend("x-nullable" = true))]
    pub session: Option<String>,
    pub created_at: String,
    #[schemars(extend("x-nullable" = true))]
    pub expires_at: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Annotations {
    pub annotations: Vec<Annotation>,
    /// Notes in all (the page lists some).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

/// `focus`, `visit`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PathsAdded {
    pub added: u64,
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Forgotten {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workset: Option<u64>,
}
