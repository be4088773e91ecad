//! `index`: bring a project's index up to date now, and say what changed.

use std::path::PathBuf;

use booger_proto::answers::{self, Facts};
use booger_proto::tools::args;

use super::call::{Call, Outcome, ToolError, answer, failed};
use crate::base::sync::Recover;
use crate::engine::index::{IndexReport, Options};
use crate::engine::registry::{Added, Project};

/// At most this many skipped or problem files are listed in the text answer.
const LIST_MAX: usize = 20;

pub(super) fn run(call: &Call, a: args::Index) -> Outcome {
    let (daemon, project) = (call.daemon, target(call, &a)?);
    let handle = daemon.projects.get(&project.root);
    if let Some(with) = a.with_generated {
        handle.set_with_generated(with).map_err(|e| failed(&format!("index {}", project.name), e))?;
    }
    let measured = std::sync::Arc::clone(&handle);
    call.report_progress(move || super::progress::of_index(&measured));
    let result = handle.index(Options { full: a.full, ..daemon.projects.defaults() });
    // Watch it from now on (a followed project re-walks, which syncs its watches: cheap,
    // nothing changed since this run).
    daemon.follow_indexed(&project.root);
    let mut report = result.map_err(|e| failed(&format!("index {}", project.name), e))?;
    let text = describe(&project.name, &report);
    // Counted by kind; a fuzz corpus would fill the answer with names nobody reads.
    report.set_aside.truncate(LIST_MAX);
    let data = answers::Index {
        project: project.name.clone(),
        root: Some(project.root.to_string_lossy().into_owned()),
        report: Some(Facts(serde_json::to_value(&report).unwrap_or_default())),
    };
    Ok(answer(text, &data))
}

/// The project to index: the one named, or the one holding `path` (or the session's
/// directory), registered now if it is not yet.
fn target(call: &Call, a: &args::Index) -> Result<Project, ToolError> {
    let daemon = call.daemon;
    if let Some(key) = a.on.project.as_deref() {
        return daemon
            .registry
            .read()
            .recover()
            .find(key)
            .cloned()
            .ok_or_else(|| ToolError::Refused(format!("index: no project named {key}; `booger projects` lists them")));
    }
    let dir = match (a.path.as_deref(), &call.session.project) {
        (Some(p), Some(base)) => base.join(p),
        (Some(p), None) => PathBuf::from(p),
        (None, Some(base)) => base.clone(),
        (None, None) => return Err(ToolError::Refused("index: give `path`, the directory to index".to_owned())),
    };
    registered(call, &dir, "index")
}

/// The project holding `dir`, registered now if none does (`index` and `publish` take a
/// directory booger has not seen, as `projects add` does).
pub(super) fn registered(call: &Call, dir: &std::path::Path, tool: &str) -> Result<Project, ToolError> {
    let daemon = call.daemon;
    let existing =
        booger_proto::paths::canonical(dir).ok().and_then(|d| daemon.registry.read().recover().containing(&d).cloned());
    if let Some(p) = existing {
        return Ok(p);
    }
    if let Some(why) = crate::engine::registration::too_many_files(daemon, dir) {
        return Err(ToolError::Refused(format!("{tool}: {why}")));
    }
    match daemon.registry.write().recover().add(dir, false, false) {
        Ok(Added::New(p) | Added::Existing(p) | Added::Moved(p)) => Ok(p),
        Err(e) => Err(failed(tool, e)),
    }
}

pub(super) fn describe(name: &str, r: &IndexReport) -> String {
    let mut t = format!(
        "Indexed {name}: {} files ({} parsed, {} unchanged, {} touched, {} deleted), {} chunks written in {:.2} s\n",
        r.files,
        r.parsed,
        r.unchanged,
        r.touched,
        r.deleted,
        r.chunks_written,
        r.elapsed_ms as f64 / 1000.0,
    );
    t.push_str(&set_aside_line("", r, false));
    for (what, items) in [("skipped", &r.skipped), ("indexed with problems", &r.problems)] {
        list(
            &mut t,
            "",
            what,
            Listing { items, total: items.len(), max: LIST_MAX, rest: "the JSON answer lists them" },
        );
    }
    t.trim_end().to_owned()
}

/// One line on the files set aside as generated, vendored or fuzz corpus (none: nothing;
/// `with_generated`: that they are indexed), and how to change it.
pub(super) fn set_aside_line(indent: &str, r: &IndexReport, with_generated: bool) -> String {
    if with_generated {
        return format!(
            "{indent}generated and vendored files: indexed (`booger index --with-generated=false` sets them aside)\n"
        );
    }
    if r.set_aside_total == 0 {
        return String::new();
    }
    let kinds: Vec<String> = r.set_aside_kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    format!(
        "{indent}set aside, not indexed: {} files ({}); `booger index --with-generated` indexes them\n",
        r.set_aside_total,
        kinds.join(", ")
    )
}

/// What [`list`] lists: `items`, the first of `total`, at most `max` of them; `rest` says
/// where the others are.
pub(super) struct Listing<'a> {
    pub items: &'a [crate::engine::index::walk::Skipped],
    pub total: usize,
    pub max: usize,
    pub rest: &'a str,
}

/// Lists the first of `l.items` under `what`, and how many more there are.
pub(super) fn list(t: &mut String, indent: &str, what: &str, l: Listing<'_>) {
    if l.total == 0 {
        return;
    }
    t.push_str(&format!("{indent}{what} ({}):\n", l.total));
    let shown = l.items.iter().take(l.max);
    let n = shown.len();
    for s in shown {
        t.push_str(&format!("{indent}  {}: {}\n", s.path, s.reason));
    }
    if l.total > n {
        t.push_str(&format!("{indent}  … and {} more ({})\n", l.total - n, l.rest));
    }
}
