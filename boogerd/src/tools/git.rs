//! The git tools: `branch-diff`, `draft-commit`, `changelog`. The work is in [`crate::domain::git`];
//! here the arguments become a [`Request`] and the diff becomes an answer.

use booger_proto::answers;
use booger_proto::tools::args;
use serde_json::Value;

use super::call::{Call, Outcome, ToolError, answer, failed};
use crate::domain::git::repo::{Repo, short};
use crate::domain::git::{GitError, Include, Request, StructuralDiff, format, structural_diff};
use crate::engine::Daemon;
use crate::engine::registry::Project;

/// An argument as given, trimmed; none when empty.
fn text(v: &Option<String>) -> Option<String> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

fn request(daemon: &Daemon, a: &args::Diff) -> Request {
    Request {
        base: text(&a.base),
        head: None,
        include: text(&a.include).as_deref().and_then(Include::parse),
        path_prefix: text(&a.path_prefix),
        max_file_bytes: daemon.config.max_file_bytes,
    }
}

/// Runs the diff for `project`, reusing the chunks its index already has.
fn diff(daemon: &Daemon, project: &Project, repo: &Repo, req: &Request) -> Result<StructuralDiff, GitError> {
    let store = daemon.projects.get(&project.root).existing_store().ok().flatten();
    let indexed = |path: &str, hash: &str| store.as_ref().and_then(|s| s.chunks_if_current(path, hash).ok().flatten());
    structural_diff(repo, req, &indexed)
}

fn open(call: &Call, on: &args::On, tool: &str) -> Result<(Project, Repo), ToolError> {
    let project = call.project(on.project.as_deref())?;
    let repo = Repo::open(&project.root).map_err(|e| failed(tool, e))?;
    Ok((project, repo))
}

pub(super) fn branch_diff(call: &Call, a: args::BranchDiff) -> Outcome {
    let (project, repo) = open(call, &a.diff.on, "branch-diff")?;
    let d = diff(call.daemon, &project, &repo, &request(call.daemon, &a.diff)).map_err(|e| failed("branch-diff", e))?;
    let max_chars = a.max_tokens.unwrap_or(crate::domain::search::format::DEFAULT_MAX_TOKENS) * 4;
    // Read-only: focusing the changed files is the agent's `focus` call, with the paths.
    let data = diff_answer(&d, max_chars);
    let text = match a.output_mode {
        Some(args::OutputMode::Json) => serde_json::to_string(&data).unwrap_or_default(),
        Some(args::OutputMode::Files) => format::files_text(&d),
        _ => format::diff_text(&d, max_chars).0,
    };
    Ok(answer(text, &data))
}

/// The diff as an answer within `max_chars`: files past the budget are counted, not listed.
fn diff_answer(d: &StructuralDiff, max_chars: usize) -> answers::BranchDiff {
    let mut files = Vec::new();
    let mut used = 300;
    for f in &d.files {
        let v = serde_json::to_value(f).unwrap_or(Value::Null);
        let size = v.to_string().len();
        if used + size > max_chars && !files.is_empty() {
            break;
        }
        used += size;
        files.push(v);
    }
    let omitted = d.files.len() - files.len();
    answers::BranchDiff {
        base: Some(d.base.clone()),
        base_commit: Some(d.base_commit.clone()),
        compared_with: d.compared_with.clone(),
        head: Some(d.head.clone()),
        head_commit: d.head_commit.clone(),
        include: Some(d.include.name().to_owned()),
        totals: format::totals(d),
        files,
        warnings: d.warnings.clone(),
        omitted_files: (omitted > 0).then_some(omitted as u64),
        hint: (omitted > 0).then(|| "raise max_tokens, narrow with path_prefix, or use output_mode=files".to_owned()),
    }
}

pub(super) fn draft_commit(call: &Call, a: args::Diff) -> Outcome {
    let (project, repo) = open(call, &a.on, "draft-commit")?;
    let mut req = request(call.daemon, &a);
    if req.include.is_none() {
        req.include = Some(if req.base.is_some() {
            Include::Committed
        } else if repo.has_staged().map_err(|e| failed("draft-commit", e))? {
            Include::Staged
        } else {
            Include::Unstaged
        });
    }
    if req.base.is_none() && repo.head.commit().is_some() {
        req.base = Some("HEAD".to_owned());
    }
    let d = diff(call.daemon, &project, &repo, &req).map_err(|e| failed("draft-commit", e))?;
    if d.files.is_empty() {
        // Nothing staged means the working tree was looked at: on a clean tree there is just
        // nothing to commit (not "no unstaged changes", which reads as if staged ones were).
        let what = if d.include == Include::Unstaged {
            "the working tree is clean: nothing changed since the last commit".to_owned()
        } else {
            format!("no {} changes", d.include.name())
        };
        let text = format!("Nothing to describe: {what} in {} ({}).", project.name, format::title(&d));
        let data =
            answers::DraftCommit { files: Some(0), include: Some(d.include.name().to_owned()), ..Default::default() };
        return Ok(answer(text, &data));
    }
    let message = format::commit_message(&d);
    let subject = message.lines().next().unwrap_or_default().to_owned();
    let mut text = message.clone();
    for w in &d.warnings {
        text.push_str(&format!("\n(note: {w})"));
    }
    let data = answers::DraftCommit {
        message: Some(message),
        subject: Some(subject),
        include: Some(d.include.name().to_owned()),
        described: Some(format::title(&d)),
        totals: Some(format::totals(&d)),
        warnings: Some(d.warnings.clone()),
        files: None,
    };
    Ok(answer(text, &data))
}

pub(super) fn changelog(call: &Call, a: args::Changelog) -> Outcome {
    let (project, repo) = open(call, &a.on, "changelog")?;
    let to = text(&a.to);
    let from = match text(&a.from) {
        Some(f) => Some(f),
        None => previous_release(&repo, to.as_deref().unwrap_or("HEAD")).map_err(|e| failed("changelog", e))?,
    };
    let req = Request {
        base: from,
        head: to.clone(),
        include: Some(Include::Committed),
        path_prefix: text(&a.path_prefix),
        max_file_bytes: call.daemon.config.max_file_bytes,
    };
    let d = diff(call.daemon, &project, &repo, &req).map_err(|e| failed("changelog", e))?;
    let range = match (&d.compared_with, &d.head_commit) {
        (Some(a), Some(b)) => format!(" ({}..{})", short(a), short(b)),
        _ => String::new(),
    };
    let heading = format!("Changes from {} to {}{range}", d.base, to.as_deref().unwrap_or(&d.head));
    let markdown = format::changelog(&d, &heading);
    let data = answers::Changelog {
        markdown: markdown.clone(),
        from: Some(d.base.clone()),
        to: Some(d.head.clone()),
        totals: Some(format::totals(&d)),
        warnings: Some(d.warnings.clone()),
    };
    Ok(answer(markdown, &data))
}

/// The newest tag before `to`: the one `to` descends from, or when `to` is itself tagged (a
/// release just made), the one before it.
fn previous_release(repo: &Repo, to: &str) -> Result<Option<String>, GitError> {
    let Some(tag) = repo.latest_tag(to)? else { return Ok(None) };
    if repo.resolve(&tag)? != repo.resolve(to)? {
        return Ok(Some(tag));
    }
    match repo.resolve(&format!("{to}^"))? {
        Some(parent) => repo.latest_tag(&parent),
        None => Ok(None),
    }
}
