//! `symbols`: the outline of a file or directory.

use booger_proto::answers;
use booger_proto::tools::args;

use super::call::{Call, Outcome, answer, failed, page};
use crate::domain::search::format::{self, OutputMode};
use crate::store::search::Filters;

/// Outlines stop at this many chunks (a whole large project); paging goes through them.
const OUTLINE_MAX: usize = 200_000;

pub(super) fn run(call: &Call, a: args::Symbols) -> Outcome {
    let snap = call.snapshot(a.on.project.as_deref())?;
    let path = a.path.as_deref().map(|p| p.trim_start_matches("./").to_owned()).filter(|p| !p.is_empty());
    let f = Filters { language: a.language, kind: a.kind, path };
    let chunks = snap.store.chunks_where(&f, None, OUTLINE_MAX).map_err(|e| failed("symbols", e))?;
    if chunks.is_empty() {
        let why = call.explain_empty(&snap.project, &snap.store, &f, "No symbols match.");
        return Ok(answer(
            why.clone(),
            &answers::Symbols { results: Some(Vec::new()), reason: Some(why), ..Default::default() },
        ));
    }
    let mode = OutputMode::of(a.output_mode, OutputMode::Signatures);
    let r = format::outline(&chunks, mode, page(&a.paging, None, 200, 0)?);
    let data = answers::Symbols {
        project: Some(snap.project.name.clone()),
        results: Some(r.results),
        cursor: r.cursor,
        ..Default::default()
    };
    Ok(answer(r.text, &data))
}
