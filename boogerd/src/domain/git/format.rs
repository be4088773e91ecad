//! The three answers built from a [`StructuralDiff`]: a readable per-file list
//! (`branch-diff`), a conventional commit message (`draft-commit`) and a Markdown changelog
//! (`changelog`).

use std::fmt::Write;

use booger_proto::answers::DiffTotals;
use booger_proto::tools::ChunkKind;

use super::StructuralDiff;
use super::diff::FileDiff;
use super::repo::short;
use super::symbols::{Modified, Symbol};

/// Totals over every file, as the answers carry them.
pub(crate) fn totals(d: &StructuralDiff) -> DiffTotals {
    let mut t = DiffTotals { files: d.files.len() as u64, ..Default::default() };
    for f in &d.files {
        t.added += f.changes.added.len() as u64;
        t.modified += f.changes.modified.len() as u64;
        t.removed += f.changes.removed.len() as u64;
    }
    t
}

/// `feature vs main (merge base abc1234)`.
pub(crate) fn title(d: &StructuralDiff) -> String {
    let against = match &d.compared_with {
        Some(c) if *c == d.base_commit => format!("{} ({})", d.base, short(c)),
        Some(c) => format!("{} (merge base {})", d.base, short(c)),
        None => d.base.clone(),
    };
    format!("{} vs {against}", d.head)
}

/// The `branch-diff` text: a header, warnings, then one block per file, within
/// `max_chars`. Returns the text and how many files it left out.
pub(crate) fn diff_text(d: &StructuralDiff, max_chars: usize) -> (String, usize) {
    let t = totals(d);
    let mut out = format!(
        "{}: {} file(s); symbols +{} added, ~{} modified, -{} removed\n",
        title(d),
        t.files,
        t.added,
        t.modified,
        t.removed
    );
    for w in &d.warnings {
        let _ = writeln!(out, "! {w}");
    }
    if d.files.is_empty() {
        out.push_str(match d.include {
            super::Include::Committed => {
                "No committed changes. (include=staged or include=unstaged adds work not committed yet.)\n"
            }
            _ => "No changes.\n",
        });
        return (out, 0);
    }
    for (i, f) in d.files.iter().enumerate() {
        let block = file_block(f);
        if out.len() + block.len() > max_chars && i > 0 {
            let left = d.files.len() - i;
            let _ = writeln!(
                out,
                "… {left} more file(s) not shown: raise max_tokens, or narrow with path_prefix, or use output_mode=files"
            );
            return (out, left);
        }
        out.push_str(&block);
    }
    (out, 0)
}

/// One line per file: `path (status) +a ~m -r`.
pub(crate) fn files_text(d: &StructuralDiff) -> String {
    let mut out = format!("{}: {} file(s)\n", title(d), d.files.len());
    for w in &d.warnings {
        let _ = writeln!(out, "! {w}");
    }
    for f in &d.files {
        let c = &f.changes;
        let _ = writeln!(
            out,
            "{} ({}) +{} ~{} -{}",
            file_label(f),
            file_status(f),
            c.added.len(),
            c.modified.len(),
            c.removed.len()
        );
    }
    out
}

fn file_label(f: &FileDiff) -> String {
    match &f.old_path {
        Some(old) => format!("{old} → {}", f.path),
        None => f.path.clone(),
    }
}

fn file_status(f: &FileDiff) -> String {
    let mut s = f.status.to_owned();
    if f.binary {
        s.push_str(", binary");
    }
    if let Some(n) = &f.note {
        let _ = write!(s, "; {n}");
    }
    s
}

fn file_block(f: &FileDiff) -> String {
    let mut out = format!("{} ({})\n", file_label(f), file_status(f));
    for s in &f.changes.added {
        let _ = writeln!(out, "  + {}", symbol_line(s, true));
    }
    for m in &f.changes.modified {
        let _ = writeln!(out, "  ~ {}", modified_line(m));
    }
    for s in &f.changes.removed {
        let _ = writeln!(out, "  - {}", symbol_line(s, false));
    }
    out
}

fn symbol_line(s: &Symbol, with_signature: bool) -> String {
    let mut line = format!("{} {} :{}", s.kind, s.qualified(), range(s.lines));
    if with_signature && !s.signature.is_empty() && s.kind != ChunkKind::Import {
        let _ = write!(line, "  {}", crate::base::text::clip(&s.signature, 100));
    }
    line
}

fn modified_line(m: &Modified) -> String {
    let s = &m.symbol;
    let mut line = format!("{} {} :{} (+{} -{}", s.kind, s.qualified(), range(s.lines), m.lines.0, m.lines.1);
    if m.whitespace_only {
        line.push_str(", whitespace only");
    }
    line.push(')');
    if let Some(old) = &m.old_signature {
        let _ = write!(
            line,
            "  signature: {} → {}",
            crate::base::text::clip(old, 80),
            crate::base::text::clip(&s.signature, 80)
        );
    }
    line
}

fn range([a, b]: [u32; 2]) -> String {
    if a == b { a.to_string() } else { format!("{a}-{b}") }
}

/// Symbols worth naming in a message: definitions, not imports or the code between them.
fn named(s: &Symbol) -> bool {
    crate::source::chunk::is_code(s.kind) || s.kind == ChunkKind::Section
}

/// What kind of file, for the commit type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    Code,
    Test,
    Docs,
    Build,
    Ci,
}

fn area(path: &str) -> Area {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let parts: Vec<&str> = lower.split('/').collect();
    if lower.starts_with(".github/")
        || lower.starts_with(".gitlab")
        || lower.starts_with(".ci/")
        || name == ".travis.yml"
    {
        Area::Ci
    } else if crate::source::lang::is_test_path(path) {
        Area::Test
    } else if name.ends_with(".md")
        || name.ends_with(".rst")
        || name.ends_with(".txt")
        || parts[0] == "docs"
        || parts[0] == "doc"
    {
        Area::Docs
    } else if matches!(
        name,
        "cargo.toml"
            | "cargo.lock"
            | "package.json"
            | "package-lock.json"
            | "go.mod"
            | "go.sum"
            | "pyproject.toml"
            | "setup.py"
            | "setup.cfg"
            | "makefile"
            | "cmakelists.txt"
            | "dockerfile"
            | "build.rs"
    ) {
        Area::Build
    } else {
        Area::Code
    }
}

/// The conventional commit type and the change list's verbs.
fn commit_type(d: &StructuralDiff) -> &'static str {
    let areas: Vec<Area> = d.files.iter().map(|f| area(&f.path)).collect();
    let only = |a: Area| !areas.is_empty() && areas.iter().all(|x| *x == a);
    for (a, t) in [(Area::Docs, "docs"), (Area::Test, "test"), (Area::Build, "build"), (Area::Ci, "ci")] {
        if only(a) {
            return t;
        }
    }
    let code: Vec<&FileDiff> = d.files.iter().filter(|f| area(&f.path) == Area::Code).collect();
    let added = code.iter().any(|f| f.status == "added" || f.changes.added.iter().any(named));
    if added {
        return "feat";
    }
    let modified: Vec<&Modified> = code.iter().flat_map(|f| &f.changes.modified).collect();
    let removed = code.iter().any(|f| f.status == "deleted" || !f.changes.removed.is_empty());
    if !modified.is_empty() && modified.iter().all(|m| m.whitespace_only) && !removed {
        return "style";
    }
    if removed || code.iter().any(|f| f.status == "renamed") || modified.iter().any(|m| m.old_signature.is_some()) {
        return "refactor";
    }
    if code.is_empty() { "chore" } else { "fix" }
}

/// The innermost directory every changed file shares, skipping generic names (`src`).
fn commit_scope(d: &StructuralDiff) -> Option<String> {
    let paths: Vec<&str> = d.files.iter().map(|f| f.path.as_str()).collect();
    if let [one] = paths[..] {
        let stem = one.rsplit('/').next()?.split('.').next()?;
        if !matches!(stem, "mod" | "lib" | "main" | "index" | "__init__" | "") {
            return Some(stem.to_owned());
        }
    }
    let first: Vec<&str> = paths.first()?.split('/').collect();
    let mut common = first.len().saturating_sub(1);
    for p in &paths[1..] {
        let parts: Vec<&str> = p.split('/').collect();
        common = common.min(parts.len() - 1).min(first.iter().zip(&parts).take_while(|(a, b)| a == b).count());
    }
    first[..common]
        .iter()
        .rev()
        .find(|c| !matches!(**c, "src" | "lib" | "pkg" | "internal" | "app" | "source" | "include" | "cmd"))
        .map(|c| (*c).to_owned())
}

/// `parse_config, Config::load and 3 more`, within `room` characters.
fn name_list(names: &[String], room: usize) -> String {
    let all = names.join(", ");
    if all.len() <= room {
        return all;
    }
    let mut out = String::new();
    for (i, n) in names.iter().enumerate() {
        let more = names.len() - i - 1;
        let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
        let sep = if i == 0 { "" } else { ", " };
        if i > 0 && out.len() + sep.len() + n.len() + tail.len() > room {
            let _ = write!(out, " and {} more", names.len() - i);
            return out;
        }
        out.push_str(sep);
        out.push_str(n);
    }
    out
}

/// Subject line limit (conventional commits, git tooling).
pub(crate) const SUBJECT_MAX: usize = 72;

/// A conventional commit message for the change: `type(scope): summary`, a blank line, then
/// the symbols by kind of change.
pub(crate) fn commit_message(d: &StructuralDiff) -> String {
    let kind = commit_type(d);
    let prefix = match commit_scope(d) {
        Some(s) => format!("{kind}({s}): "),
        None => format!("{kind}: "),
    };
    let named: Vec<(&FileDiff, Named)> = d.files.iter().map(|f| (f, Named::of(f))).collect();
    let all = |pick: fn(&Named) -> &Vec<String>| -> Vec<String> {
        let mut v: Vec<String> = named.iter().flat_map(|(_, n)| pick(n).iter().cloned()).collect();
        v.dedup();
        v
    };
    let (added, modified, removed) = (all(|n| &n.added), all(|n| &n.modified), all(|n| &n.removed));
    let room = SUBJECT_MAX - 1 - prefix.chars().count();
    let parts: Vec<(&str, &Vec<String>)> = [("add", &added), ("update", &modified), ("remove", &removed)]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let summary = if parts.is_empty() { file_summary(d) } else { subject_summary(&parts, room) };
    let subject = clip_chars(&format!("{prefix}{summary}"), SUBJECT_MAX - 1);

    // The body: one line per file and kind of change, at most MAX_BODY_LINES in all.
    const MAX_BODY_LINES: usize = 60;
    let mut body = String::new();
    let mut lines = 0;
    let mut section = |title: &str, items: Vec<String>| {
        if items.is_empty() {
            return;
        }
        let _ = writeln!(body, "\n{title}:");
        let total = items.len();
        for (i, item) in items.into_iter().enumerate() {
            if lines >= MAX_BODY_LINES {
                let _ = writeln!(body, "- … and {} more", total - i);
                break;
            }
            let _ = writeln!(body, "- {item}");
            lines += 1;
        }
    };
    let per_file = |pick: fn(&Named) -> &Vec<String>| -> Vec<String> {
        named
            .iter()
            .filter(|(_, n)| !pick(n).is_empty())
            .map(|(f, n)| format!("{}: {}", f.path, pick(n).join(", ")))
            .collect()
    };
    section("Added", per_file(|n| &n.added));
    section("Modified", per_file(|n| &n.modified_detail));
    section("Removed", per_file(|n| &n.removed));
    section(
        "Files",
        d.files
            .iter()
            .filter(|f| f.binary || f.note.is_some() || matches!(f.status, "added" | "deleted" | "renamed"))
            .map(|f| format!("{} ({})", file_label(f), file_status(f)))
            .collect(),
    );
    format!("{subject}\n{body}").trim_end().to_owned() + "\n"
}

/// The symbols of one file worth naming in a message, by kind of change.
struct Named {
    added: Vec<String>,
    modified: Vec<String>,
    /// `modified`, with `(signature)` after those whose interface changed.
    modified_detail: Vec<String>,
    removed: Vec<String>,
}

impl Named {
    fn of(f: &FileDiff) -> Named {
        let list = |v: &[Symbol]| v.iter().filter(|s| named(s)).map(Symbol::qualified).collect();
        let modified: Vec<&Modified> = f.changes.modified.iter().filter(|m| named(&m.symbol)).collect();
        Named {
            added: list(&f.changes.added),
            modified: modified.iter().map(|m| m.symbol.qualified()).collect(),
            modified_detail: modified
                .iter()
                .map(|m| match m.old_signature {
                    Some(_) => format!("{} (signature)", m.symbol.qualified()),
                    None => m.symbol.qualified(),
                })
                .collect(),
            removed: list(&f.changes.removed),
        }
    }
}

/// `add a, b; update c and 2 more`: each verb's list gets what it needs, the longest ones
/// share what is left of `room`; when even that is too long, the later verbs are dropped
/// (the body lists everything).
fn subject_summary(parts: &[(&str, &Vec<String>)], room: usize) -> String {
    for keep in (1..=parts.len()).rev() {
        let parts = &parts[..keep];
        // "verb " before each part, "; " between them.
        let overhead: usize = parts.iter().map(|(v, _)| v.len() + 1).sum::<usize>() + 2 * (parts.len() - 1);
        let mut left = room.saturating_sub(overhead);
        let needs: Vec<usize> = parts.iter().map(|(_, names)| names.join(", ").len()).collect();
        let mut order: Vec<usize> = (0..parts.len()).collect();
        order.sort_by_key(|&i| needs[i]);
        let mut lists = vec![String::new(); parts.len()];
        for (k, &i) in order.iter().enumerate() {
            lists[i] = name_list(parts[i].1, left / (parts.len() - k));
            left = left.saturating_sub(lists[i].len());
        }
        let text = parts.iter().zip(&lists).map(|((verb, _), l)| format!("{verb} {l}")).collect::<Vec<_>>().join("; ");
        if text.chars().count() <= room || keep == 1 {
            return text;
        }
    }
    unreachable!("parts is not empty")
}

fn file_summary(d: &StructuralDiff) -> String {
    match &d.files[..] {
        [] => "no changes".to_owned(),
        [f] => format!("{} {}", verb_for(f.status), f.path.rsplit('/').next().unwrap_or(&f.path)),
        fs => format!("update {} files", fs.len()),
    }
}

fn verb_for(status: &str) -> &'static str {
    match status {
        "added" => "add",
        "deleted" => "remove",
        "renamed" => "rename",
        _ => "update",
    }
}

fn clip_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let cut: String = s.chars().take(max - 1).collect();
    format!("{}…", cut.trim_end())
}

/// Markdown: `## title`, then `### Added / Modified / Removed`, one line per file.
pub(crate) fn changelog(d: &StructuralDiff, heading: &str) -> String {
    let mut out = format!("## {heading}\n");
    for w in &d.warnings {
        let _ = writeln!(out, "\n> {w}");
    }
    let code = |names: Vec<String>| names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    let mut sections: [(&str, Vec<String>); 3] = [("Added", vec![]), ("Modified", vec![]), ("Removed", vec![])];
    for f in &d.files {
        let label = match &f.old_path {
            Some(old) => format!("`{old}` → `{}`", f.path),
            None => format!("`{}`", f.path),
        };
        let Named { added, modified, removed, .. } = Named::of(f);
        match f.status {
            "added" => sections[0].1.push(if added.is_empty() { label } else { format!("{label}: {}", code(added)) }),
            "deleted" => {
                sections[2].1.push(if removed.is_empty() { label } else { format!("{label}: {}", code(removed)) })
            }
            _ => {
                if !added.is_empty() {
                    sections[0].1.push(format!("{label}: {}", code(added)));
                }
                if !removed.is_empty() {
                    sections[2].1.push(format!("{label}: {}", code(removed)));
                }
                let what = if !modified.is_empty() {
                    Some(format!("{label}: {}", code(modified)))
                } else if f.changes.is_empty() || f.status == "renamed" {
                    Some(format!("{label} ({})", file_status(f)))
                } else {
                    None
                };
                sections[1].1.extend(what);
            }
        }
    }
    if sections.iter().all(|(_, v)| v.is_empty()) {
        out.push_str("\nNo changes.\n");
    }
    for (title, items) in sections {
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {title}\n");
        for i in items {
            let _ = writeln!(out, "- {i}");
        }
    }
    out
}
