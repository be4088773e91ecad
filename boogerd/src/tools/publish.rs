//! `publish`: one commit of a project to the team index (see [`crate::engine::publish`]).

use booger_proto::answers;
use booger_proto::tools::args;

use super::call::{Call, Outcome, ToolError, answer, failed};
use crate::engine::prebuilt::Offered;
use crate::store::team::server_of;

pub(super) fn run(call: &Call, a: args::Publish) -> Outcome {
    // A directory not registered yet is registered, as `index` does.
    let project = match (a.on.project.as_deref(), a.path.as_deref()) {
        (None, Some(path)) if call.project(Some(path)).is_err() => {
            let dir = call.session.project.as_deref().map_or_else(|| path.into(), |base| base.join(path));
            super::index::registered(call, &dir, "publish")?
        }
        (named, path) => call.project(named.or(path))?,
    };
    let url = super::team::url_of(call, "publish")?;
    let rev = a.rev.as_deref().filter(|r| !r.is_empty()).unwrap_or("HEAD");
    if rev.starts_with('-') {
        return Err(ToolError::Refused(format!("publish: {rev:?} is not a revision")));
    }
    let name = repository_name(&project.root, a.repository.as_deref(), &project.name)?;
    let max = call.daemon.config.max_file_bytes;
    // The project's own index, to take each file's chunks from where it holds that version.
    let local = call.daemon.projects.get(&project.root).store().ok();
    let p = crate::engine::publish::publish(&project.root, &name, rev, &url, max, local.as_deref(), a.force)
        .map_err(|e| failed("publish", e))?;
    let server = server_of(&url);
    let text = if p.new_commit {
        format!(
            "Published {name} at {} to {server}: {} files, {} new blobs sent, in {:.1} s",
            &p.commit[..p.commit.len().min(12)],
            p.files,
            p.blobs_sent,
            p.elapsed_ms as f64 / 1000.0
        )
    } else {
        format!("{name} at {} is published already on {server}", &p.commit[..p.commit.len().min(12)])
    };
    let prebuilt_index = p.prebuilt.map(|(offered, ms)| {
        let mut out = answers::PrebuiltIndex { elapsed_ms: ms, ..Default::default() };
        match offered {
            Offered::Sent { bytes, packed } => {
                (out.state, out.bytes, out.packed_bytes) = ("sent".into(), bytes, packed)
            }
            Offered::Already => out.state = "stored already".into(),
            Offered::Near { sha, changed } => {
                out.state = "not needed".into();
                out.why = Some(format!(
                    "the team index holds one of {} ({changed} files changed since): clones start from it",
                    &sha[..sha.len().min(12)]
                ));
            }
            Offered::Skipped(why) => (out.state, out.why) = ("skipped".into(), Some(why)),
        }
        out
    });
    let text = match &prebuilt_index {
        Some(p) if p.state == "sent" => format!(
            "{text}\nIts index sent for fresh clones to start from: {:.0} MB ({:.0} MB compressed) in {:.1} s",
            p.bytes as f64 / 1e6,
            p.packed_bytes as f64 / 1e6,
            p.elapsed_ms as f64 / 1000.0
        ),
        Some(p) if p.state == "skipped" => {
            format!("{text}\nIts index not sent for fresh clones: {}", p.why.as_deref().unwrap_or_default())
        }
        _ => text,
    };
    let data = answers::Published {
        project: project.name,
        repository: name,
        commit: p.commit,
        files: p.files as u64,
        blobs_sent: p.blobs_sent as u64,
        new_commit: p.new_commit,
        server,
        elapsed_ms: p.elapsed_ms,
        prebuilt_index,
    };
    Ok(answer(text, &data))
}

/// The name the project is published under: the one asked for, else `owner/name` of its
/// `origin` remote, else its folder's name (so that `acme/*` in a token means a remote's
/// owner). A name asked for that the team index cannot take is refused, saying what it takes.
fn repository_name(root: &std::path::Path, asked: Option<&str>, folder: &str) -> Result<String, ToolError> {
    use crate::domain::git::identity::is_valid_name;
    if let Some(asked) = asked.filter(|a| !a.is_empty()) {
        if !is_valid_name(asked) {
            return Err(ToolError::Refused(format!(
                "publish: {:?} is not a repository name: parts of letters, digits, `.`, `_` and `-` joined by `/` \
                 (acme/api)",
                crate::base::text::printable(asked)
            )));
        }
        return Ok(asked.to_owned());
    }
    let remote = crate::domain::git::repo::Repo::open(root).ok().and_then(|r| r.remote_name());
    Ok(remote.unwrap_or_else(|| folder.to_owned()))
}
