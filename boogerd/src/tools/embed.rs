//! `embed`: a project's embedding coverage, and starting or redoing its embedding.

use booger_proto::wire::ToolReply;
use serde_json::Value;

use super::{Session, resolve_project};
use crate::engine::Daemon;

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
    let action = args.get("action").and_then(Value::as_str).unwrap_or("status");
    if action == "force" {
        for model in embedding.model_ids() {
            if let Err(e) = store.drop_vectors(model) {
                return ToolReply::error(format!("embed: {e}"));
            }
        }
        handle.vectors.forget();
    }
    if action != "status" {
        handle.embed_missing();
    }
    let report = match super::status::embedding_report(&embedding, &handle, &store) {
        Ok(r) => r,
        Err(e) => return ToolReply::error(format!("embed: {e}")),
    };
    let mut text = format!("{}: ", project.name);
    text.push_str(&super::status::embedding_text(&report));
    ToolReply::ok(text, report)
}
