//! Turning one file's bytes into chunks: pure functions of `(path, bytes)`, no I/O.
//!
//! - [`code`]: tree-sitter languages: functions, methods, types, containers, imports, and
//!   `block` chunks for the top-level code between them, so every line is searchable; what
//!   each language's node kinds are is a table in `grammars`, with the answers that depend
//!   on the node in `refine` and [`js`] (what JavaScript and TypeScript declare without a
//!   keyword: test-runner calls).
//! - [`markdown`]: sections by header, then paragraphs, then sentences, with overlap.
//! - [`raw`]: line windows for other text, oversized files, and parse failures.
//!
//! Nothing here fails: a file that cannot be parsed comes back as raw chunks with a
//! `problem` saying why, for the index report.

pub(crate) mod code;
pub(crate) use code::{DOC_MAX, strip_comment};
mod grammars;
pub(crate) mod js;
pub(crate) mod markdown;
pub mod parse;
pub(crate) mod raw;
mod refine;
mod role;
pub mod verify;

use std::path::Path;

use booger_proto::tools::ChunkKind;

use super::lang::Lang;

/// Chunks larger than this (about 2,000 tokens) are split into blocks.
pub(crate) const MAX_CHUNK_BYTES: usize = 8_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// `function`, `method`, `struct`, `enum`, `union`, `type`, `interface`, `class`, `impl`,
    /// `trait`, `mod`, `namespace`, `const`, `macro`, `declaration`, `test` (a JavaScript or
    /// TypeScript test case or suite, named by its description), `import`, `block`,
    /// `section` (Markdown), `raw`, or `gap` (lines between items with no word in them, such
    /// as closing braces and comment rulers: kept so grep sees every line, but not an item).
    pub kind: ChunkKind,
    pub name: String,
    /// The declaration up to its body, whitespace collapsed (repeated on every block of a
    /// split chunk).
    pub signature: String,
    /// The enclosing container (impl type, class, trait, module; Markdown: the outer headings).
    pub parent: Option<String>,
    pub doc: Option<String>,
    pub content: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub start_byte: usize,
    pub end_byte: usize,
}

#[derive(Debug, Clone)]
pub struct Chunked {
    pub lang: Lang,
    pub chunks: Vec<Chunk>,
    /// Why the file was not chunked structurally, or was only partly understood.
    pub problem: Option<String>,
}

/// Chunks one file. `too_large` files are cut into fixed-size blocks without parsing.
pub fn chunk_file(path: &Path, bytes: &[u8], too_large: bool) -> Chunked {
    let lang = Lang::detect(path, bytes);
    if too_large {
        return Chunked { lang, chunks: raw::blocks(bytes, raw::LARGE_FILE_BLOCK), problem: None };
    }
    match lang {
        Lang::Markdown => Chunked { lang, chunks: markdown::chunk(bytes), problem: None },
        Lang::Text => Chunked { lang, chunks: raw::windows(bytes), problem: None },
        _ => match code::chunk(lang, bytes) {
            Ok((chunks, note)) => Chunked { lang, chunks, problem: note },
            Err(why) => Chunked { lang, chunks: raw::windows(bytes), problem: Some(why) },
        },
    }
}

/// Kinds that are code items (definitions), as opposed to imports, text between items and
/// prose. Search ranks them higher.
pub(crate) fn is_code(kind: ChunkKind) -> bool {
    use ChunkKind::*;
    !matches!(kind, Import | Block | Section | Raw | Gap)
}

/// The kind a stored name means; a name no booger made (an index from a newer booger) reads
/// as `raw`, plain text.
pub(crate) fn kind_named(name: &str) -> ChunkKind {
    ChunkKind::parse(name).unwrap_or(ChunkKind::Raw)
}

/// Byte offset → 1-based line number.
pub(crate) struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub(crate) fn new(bytes: &[u8]) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr_iter(b'\n', bytes).map(|i| i + 1));
        Self { starts }
    }

    pub(crate) fn line_of(&self, byte: usize) -> u32 {
        self.starts.partition_point(|&s| s <= byte) as u32
    }

    /// Byte offset where 1-based `line` starts.
    pub(crate) fn start_of(&self, line: u32) -> usize {
        self.starts[(line as usize - 1).min(self.starts.len() - 1)]
    }

    pub(crate) fn count(&self) -> u32 {
        self.starts.len() as u32
    }
}

fn memchr_iter(needle: u8, hay: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(needle, hay)
}

/// Text of a byte range, lossily decoded (content is stored as UTF-8).
pub(crate) fn text(bytes: &[u8], start: usize, end: usize) -> String {
    String::from_utf8_lossy(&bytes[start.min(bytes.len())..end.min(bytes.len())]).into_owned()
}

/// Whitespace runs collapsed to one space, trimmed, capped at `max` characters.
pub(crate) fn one_line(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max));
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() >= max {
            let cut = out.floor_char_boundary(max);
            out.truncate(cut);
            out.push('…');
            break;
        }
    }
    out
}

/// Splits chunks larger than [`MAX_CHUNK_BYTES`] into line-aligned blocks that repeat the
/// signature; the first block keeps the doc.
pub(crate) fn split_oversized(chunk: Chunk, bytes: &[u8], lines: &Lines) -> Vec<Chunk> {
    if chunk.end_byte - chunk.start_byte <= MAX_CHUNK_BYTES {
        return vec![chunk];
    }
    let mut out = Vec::new();
    let mut start = chunk.start_byte;
    while start < chunk.end_byte {
        let mut end = (start + MAX_CHUNK_BYTES).min(chunk.end_byte);
        if end < chunk.end_byte {
            // Cut after the last newline in the window, if there is one.
            if let Some(nl) = bytes[start..end].iter().rposition(|&b| b == b'\n') {
                end = start + nl + 1;
            }
        }
        out.push(Chunk {
            doc: if out.is_empty() { chunk.doc.clone() } else { None },
            content: text(bytes, start, end),
            start_line: lines.line_of(start),
            end_line: lines.line_of(end.saturating_sub(1).max(start)),
            start_byte: start,
            end_byte: end,
            ..chunk.clone()
        });
        start = end;
    }
    out
}

#[cfg(test)]
mod tests;
