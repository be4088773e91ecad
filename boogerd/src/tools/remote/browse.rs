//! `directory-summary`, `branch-diff` and `status` on the team index.

use std::collections::BTreeMap;
use std::fmt::Write;

use booger_proto::remote::{Args, Changed, Diff, Directory, File, Repository, Status, Summary};

use super::{Ask, Outcome, reply, short};
use crate::store::team::TeamFilters;

/// Files a summary reads at most (a directory of a huge tree is summarised from these).
const SUMMARY_FILES: i64 = 50_000;

pub(super) fn summary(ask: &mut Ask, a: &Args) -> Outcome {
    let dir = a.path.as_deref().unwrap_or_default().trim_start_matches("./").trim_matches('/');
    let dir = if dir.is_empty() { String::new() } else { format!("{dir}/") };
    let f = TeamFilters { path_prefix: (!dir.is_empty()).then_some(dir.as_str()), ..ask.scope(a, true)? };
    let Some((repository, commit)) = ask.store.resolve(&f)? else { return Err(ask.not_found(a)) };
    let files = ask.store.files(&f, &dir, SUMMARY_FILES)?;
    let mut directories: BTreeMap<String, u64> = BTreeMap::new();
    let mut own = Vec::new();
    for file in &files {
        let rest = &file.path[dir.len().min(file.path.len())..];
        match rest.split_once('/') {
            Some((sub, _)) => *directories.entry(format!("{dir}{sub}")).or_default() += 1,
            None => own.push(File {
                path: file.path.clone(),
                language: file.language.clone(),
                bytes: file.bytes,
                definitions: file.names.clone(),
            }),
        }
    }
    let mut out = format!(
        "{repository}@{}:{} — {} file(s)\n",
        short(&commit),
        if dir.is_empty() { "." } else { &dir },
        files.len()
    );
    for (d, n) in &directories {
        let _ = writeln!(out, "{d}/ ({n} files)");
    }
    for file in &own {
        let _ = writeln!(
            out,
            "{} [{}] {}",
            file.path,
            file.language.as_deref().unwrap_or("-"),
            file.definitions.join(", ")
        );
    }
    let n = files.len();
    let data = Summary {
        repository,
        commit,
        path: dir,
        files: n as u64,
        directories: directories.into_iter().map(|(path, files)| Directory { path, files }).collect(),
        own_files: own,
    };
    reply(out, &data, n)
}

pub(super) fn diff(ask: &mut Ask, a: &Args) -> Outcome {
    let later = TeamFilters { commit: a.head.as_deref().filter(|h| !h.is_empty()), ..ask.scope(a, true)? };
    let earlier = TeamFilters { commit: a.base.as_deref(), ..later.clone() };
    let (Some((repository, head)), Some((_, base))) = (ask.store.resolve(&later)?, ask.store.resolve(&earlier)?) else {
        return Err(ask.not_found(a));
    };
    let limit = a.head_limit.unwrap_or(200) as i64;
    let files = ask.store.changed_files(&later, &base, limit)?;
    let mut out = format!("{repository}: {}..{} — {} file(s) differ\n", short(&base), short(&head), files.len());
    let mut listed = Vec::new();
    for file in &files {
        let change =
            serde_json::to_value(file.change).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        let _ = write!(out, "{change} {}", file.path);
        if !file.changed.is_empty() {
            let _ = write!(out, " ~ {}", file.changed.join(", "));
        }
        if !file.removed.is_empty() {
            let _ = write!(out, " - {}", file.removed.join(", "));
        }
        out.push('\n');
        listed.push(Changed {
            path: file.path.clone(),
            change,
            changed: file.changed.clone(),
            removed: file.removed.clone(),
        });
    }
    let n = listed.len();
    reply(out, &Diff { repository, base, head, files: listed }, n)
}

pub(super) fn status(ask: &mut Ask) -> Outcome {
    let repos = ask.store.repositories(ask.reader)?;
    let mut out = format!("{} repository(ies) this token may read\n", repos.len());
    for r in &repos {
        let _ = writeln!(
            out,
            "{}@{} {} files, {} commit(s), last published {}",
            r.name,
            short(&r.head),
            r.files,
            r.commits,
            r.last_publish
        );
    }
    let repositories: Vec<Repository> = repos
        .into_iter()
        .map(|r| Repository {
            name: r.name,
            head: r.head,
            files: r.files,
            commits: r.commits,
            last_publish: r.last_publish,
        })
        .collect();
    let n = repositories.len();
    reply(out, &Status { repositories }, n)
}
