//! `changed-since`: the symbols of files re-indexed after a time.

use booger_proto::answers;
use booger_proto::tools::args;

use super::call::{Call, Outcome, ToolError, answer, failed, page};
use crate::domain::search::format::{self, OutputMode};
use crate::store::search::Filters;

pub(super) fn run(call: &Call, a: args::ChangedSince) -> Outcome {
    let since = a.since.as_str();
    let unix = crate::base::time::parse_rfc3339(since).ok_or_else(|| {
        ToolError::Refused(format!(
            "changed-since: {since:?} is not an RFC 3339 time; write it like 2026-11-22T09:30:00Z or \
             2026-11-22T10:30:00+01:00 (or a date, 2026-11-22)"
        ))
    })?;
    let snap = call.snapshot(a.on.project.as_deref())?;
    // Stored times are `YYYY-MM-DDTHH:MM:SSZ`, so they compare as strings.
    let after = crate::base::time::rfc3339(unix);
    let f = Filters { path: a.path_prefix.clone().filter(|p| !p.is_empty()), ..Default::default() };
    let chunks = snap.store.chunks_where(&f, Some(&after), 200_000).map_err(|e| failed("changed-since", e))?;
    if chunks.is_empty() {
        let last = snap.store.meta("last_indexed_at").ok().flatten().unwrap_or_default();
        let text = format!("Nothing re-indexed in {} after {after} (last index run: {last}).", snap.project.name);
        return Ok(answer(
            text,
            &answers::Symbols { results: Some(Vec::new()), since: Some(after), ..Default::default() },
        ));
    }
    let mode = OutputMode::of(a.output_mode, OutputMode::Signatures);
    let r = format::outline(&chunks, mode, page(&a.paging, None, 200, 0)?);
    let text = format!("changed since {after}: {}", r.text);
    Ok(answer(text, &answers::Symbols { results: Some(r.results), since: Some(after), ..Default::default() }))
}
