//! `embed`: a project's embedding coverage, and starting or redoing its embedding.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, resolve_project};
use crate::Daemon;

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let project = match resolve_project(daemon, session, args) {
        Ok(p) => p,
        Err(e) => return ToolReply::error(e),
    };
    let handle = daemon.projects.get(&project.root);
    let Some(embedding) = handle.embedding().cloned() else {
        return ToolReply::error(
            "embed: embeddings are off in this daemon (started with --no-embed or BOOGER_NO_EMBED)",
        );
    };
    let store = match handle.existing_store() {
        Ok(Some(s)) => s,
        Ok(None) => {
            return ToolReply::error(format!(
                "embed: {} has no index yet. Run: booger index \"{}\"",
                project.name,
                project.root.display()
            ));
        }
        Err(e) => return ToolReply::error(format!("embed: {e}")),
    };
    let model = embedding.embedder.id().to_owned();
    let action = args.get("action").and_then(Value::as_str).unwrap_or("status");
    if action == "force" {
        if let Err(e) = store.drop_vectors(&model) {
            return ToolReply::error(format!("embed: {e}"));
        }
        handle.vectors.forget();
    }
    if action != "status" {
        handle.embed_missing();
    }
    let coverage = match store.coverage(&model) {
        Ok(c) => c,
        Err(e) => return ToolReply::error(format!("embed: {e}")),
    };
    let busy = handle.vectors.busy.load(std::sync::atomic::Ordering::SeqCst);
    let error = handle.vectors.last_error.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let pct =
        if coverage.embeddable == 0 { 100.0 } else { 100.0 * coverage.embedded as f64 / coverage.embeddable as f64 };
    let mut text = format!(
        "{}: {} of {} chunks embedded ({pct:.0}%) with {model}{}",
        project.name,
        coverage.embedded,
        coverage.embeddable,
        if busy { "; embedding now" } else { "" }
    );
    if coverage.other_models > 0 {
        text.push_str(&format!(
            "; {} vectors of an older model remain until this one is complete",
            coverage.other_models
        ));
    }
    if let Some(e) = &error {
        text.push_str(&format!("\nlast error: {e}"));
    }
    ToolReply::ok(
        text,
        json!({
            "project": project.name,
            "model": model,
            "dims": embedding.embedder.dims(),
            "embedded": coverage.embedded,
            "embeddable": coverage.embeddable,
            "other_models": coverage.other_models,
            "running": busy,
            "error": error,
        }),
    )
}
