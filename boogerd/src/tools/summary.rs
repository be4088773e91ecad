//! `directory-summary`: what is in a directory, in one answer.

use std::collections::BTreeMap;

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, explain_empty, project_store};
use crate::engine::Daemon;
use crate::store::search::Filters;

const ENTRY_NAMES: &[&str] = &["main", "run", "new", "serve", "start", "__main__", "init", "setup", "execute"];
const ENTRY_PREFIXES: &[&str] = &["handle_", "cmd_", "run_"];
const LIST_MAX: usize = 30;

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let (project, store) = match project_store(daemon, session, args) {
        Ok(ps) => ps,
        Err(reply) => return reply,
    };
    let dir = args
        .get("path")
        .and_then(Value::as_str)
        .map(|p| p.trim_start_matches("./").trim_end_matches('/').to_owned())
        .filter(|p| !p.is_empty() && p != ".");
    let f = Filters { path: dir.clone(), ..Default::default() };
    let files = match store.files_under(&f) {
        Ok(x) => x,
        Err(e) => return ToolReply::error(format!("directory-summary: {e}")),
    };
    if files.is_empty() {
        let why = explain_empty(&project, &store, &f, "The directory has no indexed files.");
        return ToolReply::ok(why.clone(), json!({ "reason": why }));
    }
    let chunks = store.chunks_where(&f, None, 500_000).unwrap_or_default();
    let mut languages: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, lang, _) in &files {
        *languages.entry(lang.as_str()).or_default() += 1;
    }
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &chunks {
        *kinds.entry(c.kind.as_str()).or_default() += 1;
    }
    let entries: Vec<&crate::store::search::Candidate> = chunks
        .iter()
        .filter(|c| matches!(c.kind.as_str(), "function" | "method"))
        .filter(|c| ENTRY_NAMES.contains(&c.name.as_str()) || ENTRY_PREFIXES.iter().any(|p| c.name.starts_with(p)))
        .collect();
    // Immediate subdirectories and the files directly here.
    let base = dir.as_deref().map_or(0, |d| d.len() + 1);
    let mut subdirs: BTreeMap<&str, usize> = BTreeMap::new();
    let mut here = Vec::new();
    for (path, _, _) in &files {
        let rest = &path[base.min(path.len())..];
        match rest.split_once('/') {
            Some((sub, _)) => *subdirs.entry(sub).or_default() += 1,
            None => here.push(rest),
        }
    }
    let counts = |m: &BTreeMap<&str, usize>| {
        let mut v: Vec<_> = m.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        v.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
    };
    let mut t = format!(
        "{}: {} file(s), {} chunk(s)\nlanguages: {}\nkinds: {}\n",
        dir.as_deref().unwrap_or(&project.name),
        files.len(),
        chunks.len(),
        counts(&languages),
        counts(&kinds)
    );
    if !entries.is_empty() {
        t.push_str(&format!("entry points ({}):\n", entries.len()));
        for c in entries.iter().take(LIST_MAX) {
            t.push_str(&format!(
                "  {}:{} {}\n",
                c.path,
                c.start_line,
                if c.signature.is_empty() { &c.name } else { &c.signature }
            ));
        }
    }
    if !subdirs.is_empty() {
        t.push_str(&format!("subdirectories ({}):\n", subdirs.len()));
        for (d, n) in subdirs.iter().take(LIST_MAX) {
            t.push_str(&format!("  {d}/ ({n} files)\n"));
        }
    }
    if !here.is_empty() {
        t.push_str(&format!(
            "files here ({}): {}\n",
            here.len(),
            here.iter().take(LIST_MAX).copied().collect::<Vec<_>>().join(", ")
        ));
    }
    ToolReply::ok(
        t.trim_end(),
        json!({
            "path": dir, "files": files.len(), "chunks": chunks.len(), "languages": languages, "kinds": kinds,
            "entry_points": entries.iter().map(|c| json!({ "path": c.path, "line": c.start_line, "name": c.name, "signature": c.signature })).collect::<Vec<_>>(),
            "subdirectories": subdirs, "files_here": here,
        }),
    )
}
