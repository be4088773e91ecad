//! `semantic-search` and `hybrid-search`: the project's vectors, alone or fused with lexical
//! search. Without usable vectors both answer lexically and say why, never with nothing.

use booger_proto::wire::ToolReply;
use serde_json::Value;

use super::search::Request;
use super::{Session, scope, volatile};
use crate::domain::search::confidence::Calibration;
use crate::domain::search::files;
use crate::domain::search::semantic::{self, Fusion};
use crate::domain::search::{self as lexical, Hit};
use crate::engine::Daemon;
use crate::engine::project::Embedding;
use crate::engine::project::ProjectHandle;

/// Hits of each list taken into a fusion.
const FUSED_DEPTH: usize = 50;

pub fn semantic_search(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    run(daemon, session, args, false)
}

/// Hybrid search fuses by RRF, unless the call names its fusion, with the semantic weight for
/// the query's kind: a change request gets the project's calibrated weight, a question the
/// one measured on questions (see [`Calibration::semantic_weight_for`]).
pub fn hybrid_search(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    run(daemon, session, args, true)
}

fn fusion(args: &Value, store: &crate::store::Store, query: &str) -> Fusion {
    match args.get("fusion").and_then(Value::as_str) {
        Some("alpha") => Fusion::Alpha { alpha: args.get("alpha").and_then(Value::as_f64).unwrap_or(0.7) },
        _ => Fusion::Rrf {
            k: super::int(args, "k", 60) as f64,
            semantic_weight: args
                .get("semantic_weight")
                .and_then(Value::as_f64)
                .unwrap_or_else(|| Calibration::of(store).semantic_weight_for(&lexical::Query::parse(query))),
        },
    }
}

fn run(daemon: &Daemon, session: &Session, args: &Value, hybrid: bool) -> ToolReply {
    let tool = if hybrid { "hybrid-search" } else { "semantic-search" };
    let request = match Request::open(daemon, session, args) {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    let Request { query, project, store, page, filters, .. } = &request;
    let fusion = hybrid.then(|| fusion(args, store, query));
    let handle = daemon.projects.get(&project.root);
    // The lexical side's confidence: hybrid answers carry it, semantic ones do not (a
    // concept can match without its words).
    let warm = handle.warm(store);
    let judge = if hybrid { warm.as_deref() } else { None };
    let lexical_hits = |need: usize| -> Result<Vec<Hit>, ToolReply> {
        let ctx = volatile(store, scope(session, args));
        lexical::search(store, warm.as_deref(), query, filters, &ctx, need)
            .map_err(|e| ToolReply::error(format!("{tool}: {e}")))
    };

    // The answering tier's vectors and the query's vector, or why there are none.
    let (vectors, mut note) = match handle.embedding() {
        None => (None, "embeddings are off (boogerd --no-embed), so these are lexical results".to_owned()),
        Some(e) => {
            let tier = e.answering(&handle).clone();
            match handle.vectors.index(store, tier.id()) {
                Err(err) => (None, format!("the vectors could not be read ({err}), so these are lexical results")),
                Ok(i) if i.is_empty() => {
                    (None, "no vectors yet (they are being computed), so these are lexical results".to_owned())
                }
                Ok(i) => match tier.embed_query(query) {
                    Ok(v) => (Some((i, v)), tier_note(e, &handle, tier.id())),
                    Err(err) => (None, format!("{err}; so these are lexical results")),
                },
            }
        }
    };
    let Some((index, query_vector)) = vectors else {
        handle.embed_missing();
        return match lexical_hits(page.reach()) {
            Ok(hits) => request.respond(args, &hits, None, &note, warm.as_deref()),
            Err(r) => r,
        };
    };
    let need = if fusion.is_some() { FUSED_DEPTH.max(page.reach()) } else { page.reach() };
    let mut semantic_hits = match semantic::search(store, &index, &query_vector, filters, need) {
        Ok(h) => h,
        Err(e) => return ToolReply::error(format!("{tool}: {e}")),
    };
    lexical::demote_prose(&mut semantic_hits, query, fusion.is_some());
    if fusion.is_some() {
        // Both lists equally deep: a long semantic tail would add up past lexical hits.
        semantic_hits.truncate(need);
    }
    let files_mode = args.get("output_mode").and_then(Value::as_str) == Some("files_with_matches");
    // Whether the hits are lexical search's: only its files rank by the query words they hold.
    let (hits, from_lexical) = match fusion {
        None if semantic_hits.is_empty() => {
            note = "no word of the query is known to the embedding model, so these are lexical results".to_owned();
            match lexical_hits(page.reach()) {
                Ok(h) => (h, true),
                Err(r) => return r,
            }
        }
        None => (semantic_hits, false),
        // Files are fused as files: each list ranks them as `search` does, so at weight 0
        // the answer is lexical search's own.
        Some(Fusion::Rrf { k, semantic_weight }) if files_mode => {
            // All of the lexical hits, as `search` ranks files from them.
            let lexical = match lexical_hits(FUSED_DEPTH.max(page.reach())) {
                Ok(h) => h,
                Err(r) => return r,
            };
            let lexical_files = match crate::domain::search::rank_files(
                store,
                warm.as_deref(),
                &lexical::Query::parse(query),
                &lexical,
            ) {
                Ok(f) => f,
                Err(e) => return ToolReply::error(format!("{tool}: {e}")),
            };
            let fused = files::fuse(lexical_files, files::by_file(&semantic_hits, |h| h.score), k, semantic_weight);
            return request.respond(args, &lexical, Some(fused), &note, judge);
        }
        Some(f) => {
            let lexical = match lexical_hits(FUSED_DEPTH.max(page.reach())) {
                Ok(h) => h.into_iter().take(FUSED_DEPTH.max(page.reach())).collect(),
                Err(r) => return r,
            };
            let mut fused = semantic::fuse(lexical, semantic_hits, f);
            complete_metadata(store, &mut fused);
            (fused, false)
        }
    };
    // Files of vectors' hits (or of fused ones) rank by those hits alone.
    let files = (files_mode && !from_lexical).then(|| files::by_file(&hits, |h| h.score));
    request.respond(args, &hits, files, &note, judge)
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
        let error = handle.vectors.last_error.lock().unwrap_or_else(|p| p.into_inner()).clone();
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
