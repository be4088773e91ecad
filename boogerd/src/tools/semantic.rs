//! `semantic-search` and `hybrid-search`: the project's vectors, alone or fused with lexical
//! search. Without usable vectors both answer lexically and say why, never with nothing.

use booger_proto::tools::args;

use super::call::{Call, Outcome, ToolError, failed};
use super::search::Request;
use crate::base::sync::Recover;
use crate::domain::search::confidence::Calibration;
use crate::domain::search::files;
use crate::domain::search::semantic::{self, Fusion};
use crate::domain::search::{self as lexical, Hit};
use crate::engine::project::Embedding;
use crate::engine::project::ProjectHandle;

/// Hits of each list taken into a fusion.
const FUSED_DEPTH: usize = 50;

pub(super) fn semantic_search(call: &Call, a: args::Search) -> Outcome {
    run(call, &a, None)
}

/// Hybrid search fuses by RRF, unless the call names its fusion, with the semantic weight for
/// the query's kind: a change request gets the project's calibrated weight, a description the
/// one measured on descriptions (see [`Calibration::semantic_weight_for`]). A question (unless
/// the call names a fusion or weight; not in files mode, whose files stay lexical search's)
/// has its vectors re-rank lexical search's candidates ([`semantic::rerank`]).
pub(super) fn hybrid_search(call: &Call, a: args::Hybrid) -> Outcome {
    run(call, &a.search, Some(&a))
}

fn fusion(a: &args::Hybrid, store: &crate::store::Store, query: &lexical::Query) -> Fusion {
    match a.fusion.as_deref() {
        Some("alpha") => Fusion::Alpha { alpha: a.alpha.unwrap_or(0.7) },
        _ => Fusion::Rrf {
            k: a.k.unwrap_or(60) as f64,
            semantic_weight: a.semantic_weight.unwrap_or_else(|| Calibration::of(store).semantic_weight_for(query)),
        },
    }
}

/// The answering tier's vectors, the query's vector and how much the tier's cosine weighs in
/// a question's re-ranking.
struct Vectors {
    index: std::sync::Arc<crate::domain::embed::vectors::VectorIndex>,
    query: Vec<f32>,
    question_weight: f64,
}

/// The answering tier's [`Vectors`], or why there are none; and what the answer says of them.
fn vectors(
    handle: &std::sync::Arc<ProjectHandle>,
    store: &crate::store::Store,
    query: &str,
) -> (Option<Vectors>, String) {
    match handle.embedding() {
        None => (None, "embeddings are off (boogerd --no-embed), so these are lexical results".to_owned()),
        Some(e) => {
            let tier = e.answering(handle).clone();
            match handle.vectors.index(store, tier.id()) {
                Err(err) => (None, format!("the vectors could not be read ({err}), so these are lexical results")),
                Ok(i) if i.is_empty() => {
                    (None, "no vectors yet (they are being computed), so these are lexical results".to_owned())
                }
                Ok(index) => match tier.embed_query(query) {
                    Ok(v) => {
                        let vectors = Vectors { index, query: v, question_weight: tier.question_weight() };
                        (Some(vectors), tier_note(e, handle, tier.id()))
                    }
                    Err(err) => (None, format!("{err}; so these are lexical results")),
                },
            }
        }
    }
}

fn run(call: &Call, a: &args::Search, hybrid: Option<&args::Hybrid>) -> Outcome {
    let tool = if hybrid.is_some() { "hybrid-search" } else { "semantic-search" };
    let request = Request::open(call, a)?;
    let Request { text, query, snapshot, page, filters, .. } = &request;
    let searcher = snapshot.searcher();
    let (store, handle) = (&snapshot.store, &snapshot.handle);
    let fusion = hybrid.map(|h| fusion(h, store, query));
    let judged = hybrid.is_some();
    let lexical_hits = |need: usize| -> Result<Vec<Hit>, ToolError> {
        searcher.search(query, text, filters, need).map_err(|e| failed(tool, e))
    };
    let (vectors, mut note) = vectors(handle, store, text);
    let Some(Vectors { index, query: query_vector, question_weight }) = vectors else {
        handle.embed_missing();
        // Lexical search's answer, whole: with its confidence.
        return request.respond(call, &lexical_hits(page.reach())?, None, &note, true);
    };
    let files_mode = request.mode == crate::domain::search::format::OutputMode::FilesWithMatches;
    if hybrid.is_some_and(|h| h.fusion.is_none() && h.semantic_weight.is_none()) && query.question && !files_mode {
        // A question: its vectors re-rank lexical search's candidates.
        let lexical = lexical_hits(semantic::RERANK_DEPTH.max(page.reach()))?;
        let ids: Vec<i64> = lexical.iter().take(semantic::RERANK_DEPTH).map(|h| h.chunk.id).collect();
        let cosines = index.cosines(store, &query_vector, &ids).map_err(|e| failed(tool, e))?;
        // The first hundred carry their full rows already (lexical search's `need`).
        let hits = semantic::rerank(lexical, &cosines.into_iter().collect(), question_weight, query);
        return request.respond(call, &hits, None, &note, judged);
    }
    let need = if fusion.is_some() { FUSED_DEPTH.max(page.reach()) } else { page.reach() };
    let mut semantic_hits =
        semantic::search(store, &index, &query_vector, filters, need).map_err(|e| failed(tool, e))?;
    lexical::demote_prose(&mut semantic_hits, text, fusion.is_some());
    if fusion.is_some() {
        // Both lists equally deep: a long semantic tail would add up past lexical hits.
        semantic_hits.truncate(need);
    }
    // Whether the hits are lexical search's: only its files rank by the query words they hold.
    let (hits, from_lexical) = match fusion {
        None if semantic_hits.is_empty() => {
            note = "no word of the query is known to the embedding model, so these are lexical results".to_owned();
            (lexical_hits(page.reach())?, true)
        }
        None => (semantic_hits, false),
        // Files are fused as files: each list ranks them as `search` does, so at weight 0
        // the answer is lexical search's own.
        Some(Fusion::Rrf { k, semantic_weight }) if files_mode => {
            // All of the lexical hits, as `search` ranks files from them.
            let lexical = lexical_hits(FUSED_DEPTH.max(page.reach()))?;
            let lexical_files = searcher.rank_files(query, &lexical).map_err(|e| failed(tool, e))?;
            let fused = files::fuse(lexical_files, files::by_file(&semantic_hits, |h| h.score), k, semantic_weight);
            return request.respond(call, &lexical, Some(fused), &note, judged);
        }
        Some(f) => {
            let lexical = lexical_hits(FUSED_DEPTH.max(page.reach()))?.into_iter().take(FUSED_DEPTH.max(page.reach()));
            let mut fused = semantic::fuse(lexical.collect(), semantic_hits, f);
            complete_metadata(store, &mut fused);
            (fused, false)
        }
    };
    // Files of vectors' hits (or of fused ones) rank by those hits alone.
    let files = (files_mode && !from_lexical).then(|| files::by_file(&hits, |h| h.score));
    request.respond(call, &hits, files, &note, judged)
}

/// Lexical hits past the first few carry only what ranking needed; fused ones may come from
/// anywhere in the list, so every hit gets its full row.
fn complete_metadata(store: &crate::store::Store, hits: &mut [Hit]) {
    let ids: Vec<(i64, f64)> = hits.iter().map(|h| (h.chunk.id, h.chunk.bm25)).collect();
    if let Ok(full) = store.candidates_by_id(&ids) {
        let mut by_id: std::collections::HashMap<i64, _> = full.into_iter().map(|c| (c.id, c)).collect();
        for h in hits.iter_mut() {
            if let Some(c) = by_id.remove(&h.chunk.id) {
                h.chunk = c;
            }
        }
    }
}

/// What an agent should know about the answering vectors: a better tier still embedding or
/// failing, or this tier's own embedding in progress. Empty when all is well. Built from
/// what is in memory: this runs on every query, so it counts nothing in the store
/// (`embed` and `status` give the figures).
fn tier_note(embedding: &Embedding, handle: &ProjectHandle, answering: &str) -> String {
    if let Some(problem) = &embedding.problem {
        return format!("{problem}; the static tier answers");
    }
    if let Some(best) = embedding.best().filter(|b| b.id() != answering) {
        let error = handle.vectors.last_error.lock().recover().clone();
        return match error.filter(|e| e.starts_with(best.id())) {
            Some(e) => format!("{e}; the static tier answers"),
            None => format!(
                "{} is still embedding this project (`embed` shows progress); the static tier answers until it is done",
                best.id()
            ),
        };
    }
    if handle.vectors.busy.load(std::sync::atomic::Ordering::SeqCst) {
        return format!(
            "embedding with {answering} in progress: chunks not embedded yet are missing from the semantic results"
        );
    }
    String::new()
}
