//! `directory-summary`, `branch-diff` and `status` on the team index: the local tools'
//! arguments, answered in types of their own (the team index holds files and their
//! definitions, not a working tree's counts or a git history).

use std::collections::BTreeMap;
use std::fmt::Write;

use booger_proto::remote::{Changed, Diff, Directory, File, Repository, Selected, Status, Summary};
use booger_proto::tools::args;
use booger_proto::wire::ToolReply;

use super::{Ask, Outcome, short};
use crate::domain::search::format::{CHARS_PER_TOKEN, DEFAULT_MAX_TOKENS};
use crate::store::search::Filters;
use crate::store::team::TeamFilters;
use crate::tools::call::answer;

/// Files a summary reads at most (a directory of a huge tree is summarised from these).
const SUMMARY_FILES: i64 = 50_000;

/// An answer's character budget: `max_tokens`, or the default.
fn budget(max_tokens: Option<usize>) -> usize {
    max_tokens.unwrap_or(DEFAULT_MAX_TOKENS) * CHARS_PER_TOKEN
}

pub(super) fn summary(ask: &mut Ask, sel: &Selected, a: &args::DirectorySummary) -> Outcome {
    let dir = a.path.as_deref().unwrap_or_default().trim_start_matches("./").trim_matches('/');
    let dir = if dir.is_empty() { String::new() } else { format!("{dir}/") };
    let all = Filters::default();
    let f = TeamFilters { path_prefix: (!dir.is_empty()).then_some(dir.as_str()), ..ask.scope(sel, &all) };
    let Some((repository, commit)) = ask.store.resolve(&f)? else { return Err(ask.not_found(sel, None)) };
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
    let place = if dir.is_empty() { "." } else { &dir };
    let mut out = format!("{repository}@{}:{place} — {} file(s)\n", short(&commit), files.len());
    let budget = budget(a.max_tokens);
    let (mut listed_dirs, mut listed_files) = (Vec::new(), Vec::new());
    let mut cut = 0;
    for (d, n) in directories {
        let line = format!("{d}/ ({n} files)\n");
        if out.len() + line.len() > budget {
            cut += 1;
            continue;
        }
        out.push_str(&line);
        listed_dirs.push(Directory { path: d, files: n });
    }
    for file in own {
        let language = file.language.as_deref().unwrap_or("-");
        let line = format!("{} [{language}] {}\n", file.path, file.definitions.join(", "));
        if out.len() + line.len() > budget {
            cut += 1;
            continue;
        }
        out.push_str(&line);
        listed_files.push(file);
    }
    if cut > 0 {
        let _ = writeln!(out, "[{cut} more entries: cut at max_tokens; raise it, or summarise a subdirectory]");
    }
    let data = Summary {
        repository,
        commit,
        path: dir,
        files: files.len() as u64,
        directories: listed_dirs,
        own_files: listed_files,
    };
    Ok(answer(out, &data))
}

/// Files a diff reads at most before its path filter and budget.
const DIFF_FILES: i64 = 10_000;

/// `branch-diff` between two published commits: `base` (by default the repository's `main`,
/// else `master`) and the selected commit (by default the head).
pub(super) fn diff(ask: &mut Ask, sel: &Selected, a: &args::BranchDiff) -> Outcome {
    if let Some(other) = a.diff.include.as_deref().filter(|i| *i != "committed") {
        return Err(ask.refuse(&format!(
            "include={other}: a published commit has no staged or unstaged changes; leave include out"
        )));
    }
    // Only the files under `path_prefix` (a prefix or a glob, as the local tool takes it).
    let local = Filters { path: a.diff.path_prefix.clone(), ..Filters::default() };
    let later = ask.scope(sel, &local);
    let Some((repository, head)) = ask.store.resolve(&later)? else { return Err(ask.not_found(sel, None)) };
    let named = a.diff.base.as_deref().map(str::trim).filter(|b| !b.is_empty());
    let mut base = None;
    for b in named.map_or(vec!["main", "master"], |b| vec![b]) {
        if let Some((_, sha)) = ask.store.resolve(&TeamFilters { commit: Some(b), ..later.clone() })? {
            base = Some(sha);
            break;
        }
    }
    let Some(base) = base else { return Err(ask.not_found(sel, Some(named.unwrap_or("main or master")))) };
    let files = ask.store.changed_files(&later, &base, DIFF_FILES)?;
    let changed: Vec<Changed> = files
        .into_iter()
        .map(|file| Changed {
            path: file.path,
            change: file.change.name().to_owned(),
            changed: file.changed,
            removed: file.removed,
        })
        .collect();
    Ok(diff_answer(Diff { repository, base, head, files: changed }, a))
}

/// A diff in the caller's output mode (`json`, the default: its data; `list`: a line per
/// definition; `files`: a line per file) within its budget: files past it are counted.
fn diff_answer(mut d: Diff, a: &args::BranchDiff) -> ToolReply {
    let budget = budget(a.max_tokens);
    let mut used = 300;
    let all = d.files.len();
    let fits = d
        .files
        .iter()
        .take_while(|f| {
            used += f.path.len() + 24 + f.changed.iter().chain(&f.removed).map(|n| n.len() + 4).sum::<usize>();
            used <= budget
        })
        .count();
    d.files.truncate(fits.max(1).min(all));
    let mut out = format!("{}: {}..{} — {all} file(s) differ\n", d.repository, short(&d.base), short(&d.head));
    for file in &d.files {
        let _ = write!(out, "{} {}", file.change, file.path);
        match a.output_mode {
            Some(args::OutputMode::Files) => {}
            Some(args::OutputMode::List) => {
                for n in &file.changed {
                    let _ = write!(out, "\n  ~ {n}");
                }
                for n in &file.removed {
                    let _ = write!(out, "\n  - {n}");
                }
            }
            _ => {
                if !file.changed.is_empty() {
                    let _ = write!(out, " ~ {}", file.changed.join(", "));
                }
                if !file.removed.is_empty() {
                    let _ = write!(out, " - {}", file.removed.join(", "));
                }
            }
        }
        out.push('\n');
    }
    if d.files.len() < all {
        let _ = writeln!(out, "[{} more file(s): raise max_tokens, or narrow with path_prefix]", all - d.files.len());
    }
    if matches!(a.output_mode, None | Some(args::OutputMode::Json)) {
        out = serde_json::to_string(&d).unwrap_or(out);
    }
    answer(out, &d)
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
    Ok(answer(out, &Status { repositories }))
}
