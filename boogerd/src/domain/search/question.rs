//! What a question's ranking weighs beyond the words it shares with a chunk.
//!
//! A question ("where is an error from a wrapped service turned into a response?") is
//! written in the words of what the code does, and answered by the function or type that
//! does it. Two kinds of chunk share its words without answering it:
//! - A chunk of a line or two (an associated type `type Error = Infallible;`, a field, a
//!   constant) matches its few words at full strength, since bm25 favours short texts, and
//!   explains nothing: it loses [`TINY`].
//! - Example programs show how a project is used, not how it works: they lose what tests
//!   lose ([`WEIGHTS`]`.test`).
//!
//! Measured on `../shared/eval/questions` (100 questions, five repositories, NDCG@10): 0.460
//! without either, 0.475 with both (each about half of it); tried and left out, since they
//! moved it by less than its noise or lowered it: chunks carrying a share of their file's
//! evidence (0.471), the first page in the files mode's order (0.368 to 0.435), and only
//! words written as code naming a chunk (0.471).

use super::weights::WEIGHTS;
use crate::store::search::Candidate;

/// What a chunk of [`TINY_LINES`] lines or fewer loses in a question's ranking.
pub const TINY: f64 = 3.0;
pub const TINY_LINES: u32 = 2;

/// What a question's ranking adds to (or takes from) a chunk's score for the chunk alone.
pub fn chunk_factor(c: &Candidate) -> f64 {
    let mut s = 0.0;
    if c.end_line.saturating_sub(c.start_line) < TINY_LINES {
        s -= TINY;
    }
    if is_example(&c.path) {
        s -= WEIGHTS.test;
    }
    s
}

/// Example programs: in an `examples` (or `example`, `demo`, `samples`) folder.
pub fn is_example(path: &str) -> bool {
    path.split('/')
        .rev()
        .skip(1)
        .any(|seg| matches!(seg, "example" | "examples" | "demo" | "demos" | "sample" | "samples"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_programs_are_told_by_their_folder() {
        assert!(is_example("examples/chat/src/main.rs"));
        assert!(is_example("docs/example/app.py"));
        assert!(!is_example("src/examples.rs"));
        assert!(!is_example("src/router.rs"));
    }
}
