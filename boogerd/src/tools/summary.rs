//! `directory-summary`: what is in a directory, in one answer.

use std::collections::BTreeMap;

use booger_proto::answers::{self, EntryPoint};
use booger_proto::tools::args;

use super::call::{Call, Outcome, answer, failed};
use crate::store::search::{Candidate, Filters};

const ENTRY_NAMES: &[&str] = &["main", "run", "new", "serve", "start", "__main__", "init", "setup", "execute"];
const ENTRY_PREFIXES: &[&str] = &["handle_", "cmd_", "run_"];
const LIST_MAX: usize = 30;

pub(super) fn run(call: &Call, a: args::DirectorySummary) -> Outcome {
    let snap = call.snapshot(a.on.project.as_deref())?;
    let (project, store) = (&snap.project, &snap.store);
    let dir = a
        .path
        .as_deref()
        .map(|p| p.trim_start_matches("./").trim_end_matches('/').to_owned())
        .filter(|p| !p.is_empty() && p != ".");
    let f = Filters { path: dir.clone(), ..Default::default() };
    let files = store.files_under(&f).map_err(|e| failed("directory-summary", e))?;
    if files.is_empty() {
        let why = call.explain_empty(project, store, &f, "The directory has no indexed files.");
        return Ok(answer(
            why.clone(),
            &answers::DirectorySummary { path: dir, reason: Some(why), ..Default::default() },
        ));
    }
    let chunks = store.chunks_where(&f, None, 500_000).unwrap_or_default();
    let s = Summary::of(dir.as_deref(), &files, &chunks);
    let text = s.text(dir.as_deref().unwrap_or(&project.name));
    let counts = |m: &BTreeMap<&str, usize>| Some(m.iter().map(|(k, n)| ((*k).to_owned(), *n as u64)).collect());
    let entry = |c: &&Candidate| EntryPoint {
        path: c.path.clone(),
        line: u64::from(c.start_line),
        name: c.name.clone(),
        signature: c.signature.clone(),
    };
    let data = answers::DirectorySummary {
        path: dir,
        files: s.files as u64,
        chunks: s.chunks as u64,
        languages: counts(&s.languages),
        kinds: counts(&s.kinds),
        entry_points: Some(s.entries.iter().map(entry).collect()),
        subdirectories: counts(&s.subdirs),
        files_here: Some(s.here.iter().map(|h| (*h).to_owned()).collect()),
        ..Default::default()
    };
    Ok(answer(text, &data))
}

/// What a directory holds: counts by language and kind, likely entry points, its
/// subdirectories and the files directly in it.
struct Summary<'a> {
    files: usize,
    chunks: usize,
    languages: BTreeMap<&'a str, usize>,
    kinds: BTreeMap<&'a str, usize>,
    entries: Vec<&'a Candidate>,
    subdirs: BTreeMap<&'a str, usize>,
    here: Vec<&'a str>,
}

impl<'a> Summary<'a> {
    fn of(dir: Option<&str>, files: &'a [(String, String, String)], chunks: &'a [Candidate]) -> Self {
        let mut languages: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, lang, _) in files {
            *languages.entry(lang.as_str()).or_default() += 1;
        }
        let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
        for c in chunks {
            *kinds.entry(c.kind.as_str()).or_default() += 1;
        }
        let entries: Vec<&Candidate> = chunks
            .iter()
            .filter(|c| matches!(c.kind.as_str(), "function" | "method"))
            .filter(|c| ENTRY_NAMES.contains(&c.name.as_str()) || ENTRY_PREFIXES.iter().any(|p| c.name.starts_with(p)))
            // A test's `setup` or `main` is where the tests start, not the code.
            .filter(|c| !crate::domain::search::is_test(c))
            .collect();
        // Immediate subdirectories and the files directly here.
        let base = dir.map_or(0, |d| d.len() + 1);
        let mut subdirs: BTreeMap<&str, usize> = BTreeMap::new();
        let mut here = Vec::new();
        for (path, _, _) in files {
            let rest = &path[base.min(path.len())..];
            match rest.split_once('/') {
                Some((sub, _)) => *subdirs.entry(sub).or_default() += 1,
                None => here.push(rest),
            }
        }
        Self { files: files.len(), chunks: chunks.len(), languages, kinds, entries, subdirs, here }
    }

    /// The answer's text, titled `title`.
    fn text(&self, title: &str) -> String {
        let counts = |m: &BTreeMap<&str, usize>| {
            let mut v: Vec<_> = m.iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            v.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
        };
        let mut t = format!(
            "{title}: {} file(s), {} chunk(s)\nlanguages: {}\nkinds: {}\n",
            self.files,
            self.chunks,
            counts(&self.languages),
            counts(&self.kinds)
        );
        if !self.entries.is_empty() {
            t.push_str(&format!("entry points ({}):\n", self.entries.len()));
            for c in self.entries.iter().take(LIST_MAX) {
                let shown = if c.signature.is_empty() { &c.name } else { &c.signature };
                t.push_str(&format!("  {}:{} {shown}\n", c.path, c.start_line));
            }
        }
        if !self.subdirs.is_empty() {
            t.push_str(&format!("subdirectories ({}):\n", self.subdirs.len()));
            for (d, n) in self.subdirs.iter().take(LIST_MAX) {
                t.push_str(&format!("  {d}/ ({n} files)\n"));
            }
        }
        if !self.here.is_empty() {
            let listed = self.here.iter().take(LIST_MAX).copied().collect::<Vec<_>>().join(", ");
            t.push_str(&format!("files here ({}): {listed}\n", self.here.len()));
        }
        t.trim_end().to_owned()
    }
}
