//! `embed`: a project's embedding coverage, and starting or redoing its embedding.

use booger_proto::tools::args;

use super::call::{Call, Outcome, ToolError, failed};

pub(super) fn run(call: &Call, a: args::Embed) -> Outcome {
    let project = call.project(a.on.project.as_deref())?;
    let handle = call.daemon.projects.get(&project.root);
    let Some(embedding) = handle.embedding().cloned() else {
        return Err(ToolError::Refused(
            "embed: embeddings are off in this daemon (started with --no-embed or BOOGER_NO_EMBED)".to_owned(),
        ));
    };
    let Some(store) = handle.existing_store().map_err(|e| failed("embed", e))? else {
        return Err(ToolError::Refused(format!(
            "embed: {} has no index yet. Run: booger index \"{}\"",
            project.name,
            project.root.display()
        )));
    };
    let action = a.action.as_deref().unwrap_or("status");
    if action == "force" {
        for model in embedding.model_ids() {
            store.drop_vectors(model).map_err(|e| failed("embed", e))?;
        }
        handle.vectors.forget();
    }
    if action != "status" {
        handle.embed_missing();
    }
    let report = super::status::embedding_report(&embedding, &handle, &store).map_err(|e| failed("embed", e))?;
    let mut text = format!("{}: ", project.name);
    text.push_str(&super::status::embedding_text(&report));
    Ok(super::call::answer(text, &report))
}
