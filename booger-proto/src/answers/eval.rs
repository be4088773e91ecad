//! What `eval` answers: how well each search method finds what a project's own commits changed.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::Facts;

/// `eval`: how well each search method finds, on this project, what its own commits
/// changed (the commits' subjects as queries); while it runs, how far it got.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Eval {
    pub project: String,
    pub running: bool,
    /// While it runs: the queries asked so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done: Option<u64>,
    pub queries: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// The commits read, at most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<History>,
    /// Why there is nothing to measure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Each method's figures, and the grep ranking's (`grep-rank`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Facts>")]
    pub methods: Option<BTreeMap<String, MethodFigures>>,
    /// Methods not measured, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Facts>")]
    pub calibration: Option<EvalCalibration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub took_s: Option<f64>,
    /// With `details`: every query, its gold and what each method answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<Facts>>")]
    pub details: Option<Value>,
}

/// The history an evaluation read.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct History {
    pub scanned: u64,
    pub shallow: bool,
    pub skipped: SkippedCommits,
}

/// Why commits gave no query.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct SkippedCommits {
    /// Too short, or a release, bump, merge or revert.
    pub subject: usize,
    /// More source files than a query may have.
    pub too_many_files: usize,
    /// No source file (documentation, configuration).
    pub no_source: usize,
    /// Its source files were deleted then, or are gone since.
    pub gone_or_renamed: usize,
    /// The oldest commit of a shallow clone, whose diff is its whole tree.
    pub shallow_boundary: usize,
}

/// A method's figures over every query, and per language.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MethodFigures {
    pub all: Averages,
    pub by_language: BTreeMap<String, Averages>,
}

/// Mean recall and rank figures over `n` queries (`Fn@10` over the `n_fn` that name
/// functions), and the latency's median and 95th percentile.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Averages {
    pub n: u64,
    #[serde(rename = "R@1")]
    pub r1: f64,
    #[serde(rename = "R@10")]
    pub r10: f64,
    #[serde(rename = "MRR@10")]
    pub mrr10: f64,
    pub n_fn: u64,
    #[serde(rename = "Fn@10")]
    pub fn10: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
}

/// The calibration an evaluation kept for search (or the defaults, and why they hold).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EvalCalibration {
    pub threshold: f64,
    pub semantic_weight: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// How the calibration did on the newer queries.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Validation {
    /// Queries used to calibrate (older) and to validate (newer).
    pub calibrated_on: u64,
    /// Each semantic weight tried: its mean R@10 + MRR@10 on the older queries, and its
    /// paired gain over weight 0 in standard errors.
    pub weights_tried: Vec<(f64, f64, f64)>,
    pub validated_on: u64,
    /// The newer commits' subjects below the threshold.
    pub subjects_flagged: f64,
    /// Queries of everyday English words the project does not speak of, below it.
    pub foreign_flagged: f64,
    /// R@10 and MRR@10 on the newer queries: lexical, semantic, hybrid at the calibrated
    /// weight, and hybrid at the default weight (null where not measured).
    pub heldout: BTreeMap<String, Option<Heldout>>,
}

#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
pub struct Heldout {
    #[serde(rename = "R@10")]
    pub r10: f64,
    #[serde(rename = "MRR@10")]
    pub mrr10: f64,
}
