//! Turning ranked hits into an answer an agent can afford.
//!
//! Modes (the seeds'): `content` (code with line numbers, `max_lines` per result),
//! `signatures` (one line each), `files_with_matches` (`path:start-end [kind] name`: a line range as `rg` and editors read it, not line:column), `count`.
//! Every answer fits `max_tokens` (about 4 characters a token); when it is cut, it says so and
//! gives a cursor that resumes exactly there: the result, and the line inside it.

use std::collections::HashMap;

use booger_proto::answers::{Ranked, RankedFile, RankedRow, Span, Symbol, SymbolRow};
use booger_proto::tools::{ChunkKind, args};

use super::Hit;
use crate::base::hints;
use crate::store::search::Candidate;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputMode {
    Content,
    Signatures,
    FilesWithMatches,
    Count,
}

impl OutputMode {
    /// The layout a call asked for, or `default` (also for a mode search has not: branch-diff's).
    pub(crate) fn of(asked: Option<args::OutputMode>, default: OutputMode) -> OutputMode {
        match asked {
            Some(args::OutputMode::Content) => OutputMode::Content,
            Some(args::OutputMode::Signatures) => OutputMode::Signatures,
            Some(args::OutputMode::FilesWithMatches) => OutputMode::FilesWithMatches,
            Some(args::OutputMode::Count) => OutputMode::Count,
            _ => default,
        }
    }
}

/// Which slice of the ranked list to show, and how much of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Page {
    pub offset: usize,
    pub head_limit: usize,
    pub max_lines: usize,
    pub max_tokens: usize,
    /// Where a cut answer resumes; overrides `offset` and `head_limit`.
    pub cursor: Option<Cursor>,
    /// Content mode shows each chunk's declaration and the lines that match (see
    /// [`super::snippet`]) instead of its first `max_lines`: what a caller gets unless it asks
    /// for lines with `max_lines` or resumes inside a chunk.
    pub snippets: bool,
}

impl Page {
    /// The slice of a ranked list of `total` this page shows: (first, lines of it already
    /// shown, end).
    pub(crate) fn span(&self, total: usize) -> (usize, usize, usize) {
        match self.cursor {
            Some(c) => (c.index.min(total), c.line, c.end.min(total)),
            None => (self.offset.min(total), 0, (self.offset + self.head_limit).min(total)),
        }
    }

    /// How many results from the top the page reaches (they need full metadata).
    pub(crate) fn reach(&self) -> usize {
        self.span(usize::MAX).2
    }
}

pub(crate) const DEFAULT_MAX_TOKENS: usize = 6_000;
pub(crate) const CHARS_PER_TOKEN: usize = 4;

/// Where a cut answer resumes: result index, lines already shown of it, end of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub index: usize,
    pub line: usize,
    pub end: usize,
}

impl Cursor {
    pub(crate) fn parse(s: &str) -> Option<Cursor> {
        let mut it = s.split(':').map(str::parse::<usize>);
        let c = Cursor { index: it.next()?.ok()?, line: it.next()?.ok()?, end: it.next()?.ok()? };
        (it.next().is_none() && c.index <= c.end).then_some(c)
    }

    pub(crate) fn encode(&self) -> String {
        format!("{}:{}:{}", self.index, self.line, self.end)
    }
}

/// An answer's text and its rows: [`RankedRow`]s from a search, [`SymbolRow`]s from an
/// outline.
pub(crate) struct Rendered<R> {
    pub text: String,
    pub results: Vec<R>,
    pub cursor: Option<String>,
}

/// Renders `hits[page]` (or from `cursor`); `contents` holds the chunk text of those hits,
/// `words` the query's words (for snippets).
pub(crate) fn render(
    hits: &[Hit],
    contents: &HashMap<i64, String>,
    words: &[String],
    mode: OutputMode,
    page: Page,
    header: &str,
) -> Rendered<RankedRow> {
    let total = hits.len();
    if mode == OutputMode::Count {
        let text = format!("{total} result(s)");
        return Rendered { text, results: Vec::new(), cursor: None };
    }
    let (start, skip_lines, end) = page.span(total);
    let budget = page.max_tokens.max(50) * CHARS_PER_TOKEN;
    let mut text = format!("{header}{total} result(s); showing {}-{}\n", (start + 1).min(end), end);
    let mut results = Vec::new();
    let mut next = None;
    'hits: for (i, hit) in hits.iter().enumerate().take(end).skip(start) {
        let c = &hit.chunk;
        let head = head_line(c, mode, page.snippets);
        let first_line = if i == start { skip_lines } else { 0 };
        if first_line == 0 {
            if text.len() + head.len() > budget {
                next = Some(Cursor { index: i, line: 0, end });
                break;
            }
            text.push_str(&head);
        }
        // Notes are the agents' own text, of any length: each is cut, and none passes the budget.
        for note in &hit.notes {
            let line = format!("[note] {}\n", crate::base::text::clip(note, NOTE_CHARS));
            if text.len() + line.len() <= budget {
                text.push_str(&line);
            }
        }
        let mut item = item_of(hit);
        if mode == OutputMode::Content {
            let body = contents.get(&c.id).map(String::as_str).unwrap_or_default();
            let lines: Vec<&str> = body.lines().collect();
            if page.snippets && first_line == 0 {
                let (piece, content) = snippet(c, &lines, words);
                // A snippet is shown whole or not at all: the next call starts with it.
                if text.len() + piece.len() > budget {
                    next = Some(Cursor { index: i, line: 0, end });
                    results.push(RankedRow::Chunk(item));
                    break 'hits;
                }
                text.push_str(&piece);
                item.content = Some(content.join("\n"));
                results.push(RankedRow::Chunk(item));
                continue;
            }
            let shown_end = lines.len().min(first_line + page.max_lines.max(1));
            for (k, line) in lines.iter().enumerate().take(shown_end).skip(first_line) {
                let numbered = format!("{}:{}\n", c.start_line as usize + k, line);
                if text.len() + numbered.len() > budget {
                    next = Some(Cursor { index: i, line: k, end });
                    results.push(RankedRow::Chunk(item));
                    break 'hits;
                }
                text.push_str(&numbered);
            }
            if shown_end < lines.len() {
                text.push_str(&format!(
                    "… {} more line(s); raise max_lines or read {}:{}-{}\n",
                    lines.len() - shown_end,
                    c.path,
                    c.start_line as usize + shown_end,
                    c.end_line
                ));
            }
            item.content = Some(lines[first_line.min(lines.len())..shown_end].join("\n"));
        }
        results.push(RankedRow::Chunk(item));
    }
    finish(text, results, next, "result", page.max_tokens, end, total)
}

/// A result's first line: where it is, and its kind and name or its signature.
fn head_line(c: &Candidate, mode: OutputMode, snippets: bool) -> String {
    let label = if c.name.is_empty() { String::new() } else { format!(" {}", qualified(c.parent.as_deref(), &c.name)) };
    match mode {
        OutputMode::Signatures => {
            let sig = if c.signature.is_empty() { label.trim().to_owned() } else { c.signature.clone() };
            format!("{}:{}-{} [{}] {sig}\n", c.path, c.start_line, c.end_line, c.kind)
        }
        // A snippet starts with the chunk's declaration: the header needs only where it is.
        OutputMode::Content if snippets => format!("{}:{}-{}\n", c.path, c.start_line, c.end_line),
        _ => format!("{}:{}-{} [{}]{label}\n", c.path, c.start_line, c.end_line, c.kind),
    }
}

/// A result's structured item, without its content.
fn item_of(hit: &Hit) -> Ranked {
    let notes: Vec<String> = hit.notes.iter().map(|n| crate::base::text::clip(n, NOTE_CHARS)).collect();
    Ranked {
        symbol: symbol_of(&hit.chunk),
        score: Some((hit.score * 100.0).round() / 100.0),
        content: None,
        notes: (!notes.is_empty()).then_some(notes),
    }
}

/// A chunk as an answer names it.
fn symbol_of(c: &Candidate) -> Symbol {
    Symbol {
        path: c.path.clone(),
        start_line: u64::from(c.start_line),
        end_line: u64::from(c.end_line),
        kind: c.kind.to_string(),
        name: c.name.clone(),
        signature: Some(c.signature.clone()),
        parent: c.parent.clone(),
    }
}

/// A chunk's snippet (its declaration and the lines the query's words are on, gaps marked)
/// as text and as its lines.
fn snippet(c: &Candidate, lines: &[&str], words: &[String]) -> (String, Vec<String>) {
    let shown = super::snippet::pick(lines, words, &c.signature, super::snippet::SNIPPET_LINES);
    let mut piece = String::new();
    let mut content = Vec::new();
    let mut last = None;
    for &k in &shown {
        if last.is_some_and(|l: usize| k > l + 1) || (last.is_none() && k > 0) {
            piece.push_str("⋮\n");
            content.push("⋮".to_owned());
        }
        let line = super::snippet::clip(lines[k]);
        piece.push_str(&format!("{}:{}\n", c.start_line as usize + k, line));
        content.push(line);
        last = Some(k);
    }
    if shown.len() < lines.len() {
        // The header names the chunk's whole range; this says how to get it here.
        piece.push_str(&format!(
            "⋮ {} more line(s): max_lines={} shows them\n",
            lines.len() - shown.len(),
            lines.len()
        ));
    }
    (piece, content)
}

/// How much of a note an answer shows beside a result.
const NOTE_CHARS: usize = 240;

/// How many of a file's best chunks its line names in `files_with_matches`.
const CHUNKS_PER_FILE: usize = 3;

/// `files_with_matches`: one line per file, best first, as `rg -l` lists files, each followed
/// by its best chunks' lines and names. `head_limit`, `offset` and the cursor count files.
pub(crate) fn render_files(files: &[super::files::FileHit], page: Page, header: &str) -> Rendered<RankedRow> {
    let total = files.len();
    let (start, _, end) = page.span(total);
    let budget = page.max_tokens.max(50) * CHARS_PER_TOKEN;
    let mut text = format!("{header}{total} file(s); showing {}-{}\n", (start + 1).min(end), end);
    let mut results = Vec::new();
    let mut next = None;
    for (i, f) in files.iter().enumerate().take(end).skip(start) {
        let best: Vec<String> = f
            .chunks
            .iter()
            .take(CHUNKS_PER_FILE)
            .map(|h| {
                let c = &h.chunk;
                let name = if c.name.is_empty() { c.kind.to_string() } else { qualified(c.parent.as_deref(), &c.name) };
                format!("{}-{} {name}", c.start_line, c.end_line)
            })
            .collect();
        // `path:12-40 name, 80-95 other`: the path as `rg -l` prints it, with its best
        // chunk's lines in the form every tool reads as a range.
        let line = format!("{}:{}\n", f.path, best.join(", "));
        if text.len() + line.len() > budget {
            next = Some(Cursor { index: i, line: 0, end });
            break;
        }
        text.push_str(&line);
        let top = &f.chunks[0].chunk;
        let span = |c: &Candidate| Span {
            start_line: u64::from(c.start_line),
            end_line: u64::from(c.end_line),
            kind: c.kind.to_string(),
            name: c.name.clone(),
        };
        let Span { start_line, end_line, kind, name } = span(top);
        results.push(RankedRow::File(RankedFile {
            path: f.path.to_owned(),
            start_line,
            end_line,
            kind,
            name,
            score: (f.score * 100.0).round() / 100.0,
            matches: f.chunks.len() as u64,
            chunks: f.chunks.iter().take(CHUNKS_PER_FILE).map(|h| span(&h.chunk)).collect(),
        }));
    }
    finish(text, results, next, "file", page.max_tokens, end, total)
}

/// Ends an answer: says how to get what the budget (`next`) or the page (`end` of `total`)
/// left out, counted in `noun`s.
fn finish<R>(
    mut text: String,
    results: Vec<R>,
    next: Option<Cursor>,
    noun: &str,
    max_tokens: usize,
    end: usize,
    total: usize,
) -> Rendered<R> {
    if let Some(cur) = next {
        text.push_str(&format!(
            "[cut at {}: {} {noun}(s) not shown; {}]\n",
            hints::arg("max_tokens", max_tokens),
            end - cur.index,
            hints::continue_with(&cur.encode())
        ));
    } else if end < total {
        text.push_str(&format!("[{} more {noun}(s): {}]\n", total - end, hints::arg("offset", end)));
    }
    Rendered { text: text.trim_end().to_owned(), results, cursor: next.map(|c| c.encode()) }
}

fn qualified(parent: Option<&str>, name: &str) -> String {
    match parent {
        Some(p) if !p.is_empty() => format!("{p}.{name}"),
        _ => name.to_owned(),
    }
}

/// The share (in percent) of an answer's character budget its structured results may take:
/// at the default budget, 15,600 of the 16 KB a default answer may carry, with room for the
/// answer's other fields.
const STRUCTURED_SHARE: usize = 65;

/// Kinds left out of outlines: text between items, not items.
fn is_symbol(kind: ChunkKind) -> bool {
    !matches!(kind, ChunkKind::Block | ChunkKind::Raw | ChunkKind::Gap)
}

/// An outline: symbols grouped under their file, one signature a line. `chunks` are in file
/// order. Modes: signatures, files_with_matches (one file a line), count.
pub(crate) fn outline(chunks: &[Candidate], mode: OutputMode, page: Page) -> Rendered<SymbolRow> {
    let items: Vec<&Candidate> = chunks.iter().filter(|c| is_symbol(c.kind)).collect();
    let total = items.len();
    if mode == OutputMode::Count {
        let files: std::collections::BTreeSet<&str> = items.iter().map(|c| c.path.as_str()).collect();
        return Rendered {
            text: format!("{total} symbol(s) in {} file(s)", files.len()),
            results: Vec::new(),
            cursor: None,
        };
    }
    if mode == OutputMode::FilesWithMatches {
        let mut files: Vec<(&str, usize)> = Vec::new();
        for c in &items {
            match files.last_mut() {
                Some((p, n)) if *p == c.path => *n += 1,
                _ => files.push((&c.path, 1)),
            }
        }
        let text = files.iter().map(|(p, n)| format!("{p} ({n} symbol(s))")).collect::<Vec<_>>().join("\n");
        let results =
            files.iter().map(|(p, n)| SymbolRow::File { path: (*p).to_owned(), symbols: *n as u64 }).collect();
        return Rendered { text, results, cursor: None };
    }
    let (start, _, end) = page.span(total);
    let budget = page.max_tokens.max(50) * CHARS_PER_TOKEN;
    let mut text = format!("{total} symbol(s); showing {}-{}\n", (start + 1).min(end), end);
    let mut results = Vec::new();
    let mut next = None;
    let mut last_file = "";
    // The structured answer is held to its share of the budget too: MCP hands it to the
    // model, and a symbol's JSON is twice its line (200 of them came to 39 KB).
    let mut structured = 0;
    let structured_budget = budget * STRUCTURED_SHARE / 100;
    for (i, c) in items.iter().enumerate().take(end).skip(start) {
        let mut piece = String::new();
        if c.path != last_file {
            piece.push_str(&format!("{}\n", c.path));
        }
        let sig = if c.signature.is_empty() { c.name.as_str() } else { c.signature.as_str() };
        piece.push_str(&format!("  {}-{} [{}] {sig}\n", c.start_line, c.end_line, c.kind));
        let item = SymbolRow::Symbol(symbol_of(c));
        let size = serde_json::to_string(&item).map_or(0, |s| s.len());
        // The first symbol of a page is always carried: a cursor must move on.
        if text.len() + piece.len() > budget || (structured + size > structured_budget && !results.is_empty()) {
            next = Some(Cursor { index: i, line: 0, end });
            break;
        }
        text.push_str(&piece);
        structured += size;
        last_file = &c.path;
        results.push(item);
    }
    finish(text, results, next, "symbol", page.max_tokens, end, total)
}
