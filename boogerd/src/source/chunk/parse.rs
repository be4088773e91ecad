//! Running tree-sitter on a file, which is untrusted input: one parser per thread, a time
//! budget that follows the file's size, and the bytes a grammar is given where its scanner
//! misreads the file's own.

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{ParseOptions, Parser, Tree};

use super::grammars::{self, Grammar};
use crate::source::lang::Lang;

/// How long a file's parse may take before it is abandoned (the file becomes raw chunks):
/// a second, plus a second per 256 KiB. Real files parse at 5 MB/s and more (the slowest
/// seen, an 832 KB header of 5,484 error regions, in 0.15 s); a grammar's error recovery
/// can spin on a few crafted bytes (a 1 KB Kotlin file held its parser for the whole budget,
/// found by fuzzing), and a repository is untrusted input: the budget follows the size.
fn parse_budget(len: usize) -> Duration {
    let per_256k = Duration::from_secs(1).mul_f64(len as f64 / (256.0 * 1024.0));
    (Duration::from_secs(1) + per_256k).min(Duration::from_secs(10))
}

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// The tree of `input` (what [`parser_input`] gives for the file), or why there is none
/// (the budget ran out).
pub(super) fn parse(lang: Lang, grammar: &Grammar, input: &[u8]) -> Result<Tree, String> {
    PARSER.with(|p| {
        let mut parser = p.borrow_mut();
        parser.set_language(&(grammar.language)()).map_err(|e| format!("grammar {}: {e}", lang.name()))?;
        let budget = parse_budget(input.len());
        let deadline = Instant::now() + budget;
        let mut give_up = |_: &tree_sitter::ParseState| {
            if Instant::now() > deadline { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        };
        let options = ParseOptions::new().progress_callback(&mut give_up);
        let len = input.len();
        let tree = parser.parse_with_options(
            &mut |i, _| if i < len { &input[i..] } else { &[] as &[u8] },
            None,
            Some(options),
        );
        parser.reset();
        tree.ok_or_else(|| format!("tree-sitter gave up after {:.1}s", budget.as_secs_f64()))
    })
}

/// What the parser reads: the file's bytes, except for Swift. Its scanner (tree-sitter-swift
/// 0.7.4) reads past the end of a directive's name (`#if`, `#endif`) when a NUL byte or the
/// end of the input follows it (found by fuzzing); a file is untrusted input, so Swift is
/// parsed from a copy with NULs as spaces and a newline after the end: the same offsets.
pub(super) fn parser_input(lang: Lang, src: &[u8]) -> Cow<'_, [u8]> {
    if lang != Lang::Swift || (src.last() == Some(&b'\n') && !src.contains(&0)) {
        return Cow::Borrowed(src);
    }
    let mut copy: Vec<u8> = src.iter().map(|&b| if b == 0 { b' ' } else { b }).collect();
    copy.push(b'\n');
    Cow::Owned(copy)
}

/// Parses without chunking: the floor the indexing benchmark compares against.
pub fn parse_only(lang: Lang, src: &[u8]) -> bool {
    grammars::of(lang).is_some_and(|grammar| parse(lang, grammar, &parser_input(lang, src)).is_ok())
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use super::parse_budget;
    use crate::source::chunk::chunk_file;

    /// A kilobyte of Kotlin that holds tree-sitter's error recovery for as long as it is let
    /// (found by fuzzing): the parse stops at the file's budget, about a second, and the file
    /// is indexed as raw chunks with the reason.
    #[test]
    fn a_parse_that_spins_stops_at_its_budget() {
        let src = include_bytes!("fixtures/spin.kt");
        assert!(parse_budget(src.len()) < Duration::from_millis(1100));
        let started = Instant::now();
        let chunked = chunk_file(Path::new("spin.kt"), src, false);
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        assert!(chunked.problem.as_deref().is_some_and(|p| p.starts_with("tree-sitter gave up")), "{chunked:?}");
        assert!(!chunked.chunks.is_empty());
        assert_eq!(parse_budget(10 << 20), Duration::from_secs(10), "capped");
    }

    /// Swift is parsed from a copy (NULs as spaces, a newline after the end): the chunks are
    /// still the file's own bytes, inside the file, whether or not it ends with a newline.
    #[test]
    fn swift_directives_at_the_end_or_before_a_nul_chunk_inside_the_file() {
        for src in [&b"struct A {\n    let x = 1\n}\n#if DEBUG\nlet y = 2\n#endif"[..], b"let a = 1\n#if\0\0 x\n"] {
            let chunked = chunk_file(Path::new("a.swift"), src, false);
            assert!(!chunked.chunks.is_empty());
            for c in &chunked.chunks {
                assert!(c.end_byte <= src.len(), "{c:?}");
            }
            assert_eq!(crate::source::chunk::verify::check(src, &chunked.chunks), Ok(()));
        }
    }

    /// A Swift file whose last item reaches into the newline added after its end (found by
    /// fuzzing: the walk read one byte past the file). The walk reads what the parser read.
    #[test]
    fn a_swift_item_reaching_past_the_end_is_chunked_within_the_file() {
        let src = include_bytes!("fixtures/past-end.swift");
        let chunked = chunk_file(Path::new("a.swift"), src, false);
        assert!(chunked.chunks.iter().all(|c| c.end_byte <= src.len()));
        assert_eq!(crate::source::chunk::verify::check(src, &chunked.chunks), Ok(()));
    }
}
