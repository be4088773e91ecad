//! What a question's ranking weighs beyond the words it shares with a chunk.
//!
//! A question ("where is an error from a wrapped service turned into a response?") is
//! written in the words of what the code does, and answered by the function that does it.
//! Chunks that share its words without answering it lose (the amounts are in [`WEIGHTS`]):
//! - a chunk of a line or two (an associated type `type Error = Infallible;`, a field, a
//!   constant): bm25 favours short texts (`tiny`);
//! - example programs, which show how a project is used, not how it works (`test`);
//! - a type's definition, a struct of documented fields (`type_definition`);
//! - test code and prose, more than in other queries (`question_test`, `question_prose`);
//! - a declaration (a C prototype with its doc comment), whose function's body is elsewhere:
//!   the definition gains the declaration's score (`lend_declarations`, `declaration`);
//! - a thin wrapper (`redisContextConnectTcp`, handing its arguments on): the function it
//!   calls ranks just above it; and one of the best answers lends a share of its score to
//!   the few functions of its file it calls, where the work it names is done
//!   (`lend_to_callees`).
//!
//! Any other query keeps a function above its declarations (`definitions_before_declarations`,
//! the same lookup as `lend_declarations`).
//!
//! Measured on `../shared/eval/questions` (100 questions, five repositories, NDCG@10): 0.460
//! without the first two (short chunks, examples), 0.475 with both (each about half of it); lending declarations
//! lifts hiredis (C) 0.378 → 0.433-0.437 (a share of 0.3 / 0.6 / 1 / 1.5 of the
//! declaration's score: 0.368 / 0.405 / 0.437 / 0.445), the mean to 0.487 (no other
//! repository has declarations); tests at 8 rather than 4: 0.500; prose at 9 / 12 / 18 / 30
//! rather than 6: 0.506 / 0.512 / 0.518 / 0.518; types losing 2 / 4: 0.528 / 0.530 (4 lowers
//! requests and the other category); tests at 16: 0.547 -> 0.553; thin wrappers lending
//! (under 8 lines): 0.553 -> 0.562 (under 15 lines the same mean, under 8 lines of code
//! without comments and docstrings 0.559); the best five lending 0.7 of their score to the
//! functions they call: 0.561 -> 0.566, only for callers of five or fewer of the hits 0.570
//! (4 / 6: the same; shares 0.65 / 0.75: 0.570 / 0.569), only in the caller's file 0.573, a
//! thin wrapper's callee too 0.575.
//! Tried and left out, since they moved it by less
//! than its noise or lowered it: chunks carrying a share of their file's evidence (0.471),
//! the first page in the files mode's order (0.368 to 0.435), only words written as code
//! naming a chunk (0.471), a named chunk's bonus divided by the root of how many candidates
//! bear its name (0.548 against 0.547), and identifiers of one case split into dictionary
//! words (`keepidle`: keep idle; 0.520 against 0.528).

use std::collections::{HashMap, HashSet};

use booger_proto::tools::ChunkKind;

use super::Hit;
use super::weights::WEIGHTS;
use crate::store::search::Candidate;

/// A type's definition: a struct, class, interface, type alias, enum, trait or impl header.
fn is_type(kind: ChunkKind) -> bool {
    use ChunkKind::*;
    matches!(kind, Struct | Class | Interface | Type | Enum | Typedef | Trait | Impl)
}

/// What a question's ranking adds to (or takes from) a chunk's score for the chunk alone.
pub(crate) fn chunk_factor(c: &Candidate) -> f64 {
    let mut s = 0.0;
    let w = &WEIGHTS;
    if c.end_line.saturating_sub(c.start_line) < w.tiny_lines {
        s -= w.tiny;
    }
    if is_example(&c.path) {
        s -= w.test;
    }
    if c.kind == ChunkKind::Declaration {
        s -= w.declaration;
    }
    if is_type(c.kind) {
        s -= w.type_definition;
    }
    s
}

/// A declaration's match counts for its definition (a C prototype's doc comment says what
/// the function does; the body is in the `.c` file): each function of the same name among
/// the hits gains the declaration's score (which itself loses `WEIGHTS.declaration`).
pub(crate) fn lend_declarations(hits: &mut [Hit]) {
    with_declarations(hits, |h, score| h.score += score.max(0.0));
}

/// A function ranks at least as high as its declarations (a C prototype, a header's line
/// naming it) for any query: asked for `sdscatlen`, the body that does the work comes before
/// the line that announces it. Questions do more ([`lend_declarations`]).
pub(crate) fn definitions_before_declarations(hits: &mut [Hit]) {
    // Just past it: the order of everything else stays.
    with_declarations(hits, |h, score| h.score = h.score.max(score + 1e-6));
}

/// Calls `f` with each function among the hits that a declaration among them names, and the
/// best such declaration's score.
fn with_declarations(hits: &mut [Hit], mut f: impl FnMut(&mut Hit, f64)) {
    // Owned names: the hits are changed below.
    let mut declared: HashMap<String, f64> = HashMap::new();
    for h in hits.iter().filter(|h| h.chunk.kind == ChunkKind::Declaration && !h.chunk.name.is_empty()) {
        let best = declared.entry(h.chunk.name.clone()).or_insert(f64::MIN);
        *best = best.max(h.score);
    }
    if declared.is_empty() {
        return;
    }
    for h in hits.iter_mut().filter(|h| h.chunk.kind == ChunkKind::Function) {
        if let Some(&score) = declared.get(&h.chunk.name) {
            f(h, score);
        }
    }
}

/// The most lines a function may have to be read as a thin wrapper ([`lend_to_callees`]).
pub(crate) const WRAPPER_LINES: u32 = 8;
/// How many of a question's best hits are looked at for thin wrappers.
pub(crate) const WRAPPERS_READ: usize = 30;
/// How many of a question's best hits lend a share of their score to the functions they call.
pub(crate) const CALLERS: usize = 5;
/// That share ([`lend_to_callees`]).
pub(crate) const CALLER_SHARE: f64 = 0.7;
/// The most functions among the hits a caller may call and still lend to them: one that calls
/// many (cobra's `Command::execute` calls 30) points at none.
pub(crate) const CALLEES_MOST: usize = 5;

/// The hits whose text [`lend_to_callees`] reads: the best [`CALLERS`], and among the best
/// [`WRAPPERS_READ`] the short functions ([`WRAPPER_LINES`]).
pub(crate) fn callers(hits: &[Hit]) -> Vec<i64> {
    best(hits)
        .iter()
        .take(WRAPPERS_READ)
        .enumerate()
        .filter(|(i, h)| *i < CALLERS || is_thin_wrapper(h))
        .map(|(_, h)| h.chunk.id)
        .collect()
}

/// The hits best first, in the answer's order.
fn best(hits: &[Hit]) -> Vec<&Hit> {
    let mut best: Vec<&Hit> = hits.iter().collect();
    best.sort_by(|a, b| super::answer_order(a, b));
    best
}

fn is_thin_wrapper(h: &Hit) -> bool {
    is_function(h.chunk.kind) && h.chunk.end_line.saturating_sub(h.chunk.start_line) < WRAPPER_LINES
}

/// A caller's match counts for the functions it calls, which do the work it is named for
/// (`texts` holds the callers' texts: [`callers`]):
/// - a thin wrapper (`redisContextConnectTcp`, four lines handing its arguments to
///   `_redisContextConnectTcp`) holds the question's words in its name and signature: each
///   longer function of its file among the hits that it calls by name ranks just above it;
/// - each function of its file among the hits that one of the best [`CALLERS`] calls scores
///   at least [`CALLER_SHARE`] of its caller's score, unless the caller calls more than
///   [`CALLEES_MOST`] of the hits or the callee is one of the best itself: asked how a blocking
///   command writes and waits for its reply, hiredis's `redisGetReply` brings the
///   `redisBufferWrite` and `redisBufferRead` it calls (NDCG@10 0.59 -> 0.85).
pub(crate) fn lend_to_callees(hits: &mut [Hit], texts: &HashMap<i64, String>) {
    let best = best(hits);
    let first = &best[..CALLERS.min(best.len())];
    let functions: HashSet<&str> =
        best.iter().filter(|h| is_function(h.chunk.kind)).map(|h| h.chunk.name.as_str()).collect();
    // Owned, by file and then by name: a callee is looked for in its caller's file
    // (`re.sub(…)` in a glob translator is not a call of the `re` module's `sub` a question
    // is after), and the hits are changed below.
    let mut wrapped: HashMap<String, HashMap<String, (f64, u32)>> = HashMap::new();
    let mut called: HashMap<String, HashMap<String, f64>> = HashMap::new();
    for (rank, h) in best.iter().enumerate() {
        let Some(text) = texts.get(&h.chunk.id) else { continue };
        let names = called_names(text);
        if is_thin_wrapper(h) {
            let lines = h.chunk.end_line.saturating_sub(h.chunk.start_line);
            let in_file = wrapped.entry(h.chunk.path.clone()).or_default();
            for &callee in names.iter().filter(|&&n| n != h.chunk.name) {
                let lent = in_file.entry(callee.to_owned()).or_insert((f64::MIN, lines));
                if h.score > lent.0 {
                    *lent = (h.score, lines);
                }
            }
        }
        if h.score > 0.0 && rank < first.len() {
            let mut callees: Vec<&str> = names
                .into_iter()
                .filter(|&n| functions.contains(n) && !first.iter().any(|f| f.chunk.name == n))
                .collect();
            callees.sort_unstable();
            callees.dedup();
            if callees.len() <= CALLEES_MOST {
                let in_file = called.entry(h.chunk.path.clone()).or_default();
                for callee in callees {
                    let lent = in_file.entry(callee.to_owned()).or_insert(f64::MIN);
                    *lent = lent.max(h.score * CALLER_SHARE);
                }
            }
        }
    }
    for h in hits.iter_mut().filter(|h| is_function(h.chunk.kind)) {
        let lines = h.chunk.end_line.saturating_sub(h.chunk.start_line);
        if let Some(&(score, wrapper_lines)) = wrapped.get(&h.chunk.path).and_then(|in_file| in_file.get(&h.chunk.name))
            && lines > wrapper_lines
        {
            h.score = h.score.max(score + 1e-3);
        }
        if let Some(&score) = called.get(&h.chunk.path).and_then(|in_file| in_file.get(&h.chunk.name)) {
            h.score = h.score.max(score);
        }
    }
}

fn is_function(kind: ChunkKind) -> bool {
    matches!(kind, ChunkKind::Function | ChunkKind::Method)
}

/// The names `text` calls: identifiers right before a `(`.
fn called_names(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    crate::base::text::each_run(
        text,
        |c| c.is_alphanumeric() || c == '_',
        |name, _| {
            // `name` is a slice of `text`: where it ends.
            let end = name.as_ptr() as usize - text.as_ptr() as usize + name.len();
            if text[end..].starts_with('(') && !name.starts_with(|c: char| c.is_ascii_digit()) {
                out.push(name);
            }
        },
    );
    out
}

/// Example programs: in an `examples` (or `example`, `demo`, `samples`; `Example` as Xcode
/// and .NET projects name it) folder.
pub(crate) fn is_example(path: &str) -> bool {
    path.split('/').rev().skip(1).any(|seg| {
        ["example", "examples", "demo", "demos", "sample", "samples"].iter().any(|e| seg.eq_ignore_ascii_case(e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(id: i64, kind: &str, name: &str, score: f64) -> Hit {
        let chunk = Candidate {
            id,
            path: format!("f{id}.c"),
            language: "c".into(),
            kind: ChunkKind::parse(kind).unwrap(),
            name: name.into(),
            signature: String::new(),
            parent: None,
            start_line: 1,
            end_line: 9,
            bytes: 10,
            bm25: 0.0,
        };
        Hit { chunk, score, notes: Vec::new() }
    }

    /// A prototype's match (its doc comment) counts for the function it declares.
    #[test]
    fn a_declaration_lends_its_score_to_its_definition() {
        let mut hits = vec![
            hit(1, "declaration", "redisCommand", 12.0),
            hit(2, "function", "redisCommand", 5.0),
            hit(3, "function", "other", 8.0),
        ];
        lend_declarations(&mut hits);
        let scores: Vec<f64> = hits.iter().map(|h| h.score).collect();
        assert_eq!(scores, [12.0, 17.0, 8.0]);
        assert_eq!(chunk_factor(&hits[0].chunk), -WEIGHTS.declaration);
    }

    /// Asked for a name, the function comes before its prototype, and nothing else moves.
    #[test]
    fn a_definition_comes_before_its_declaration() {
        let mut hits = vec![
            hit(1, "declaration", "sdscatlen", 19.7),
            hit(2, "function", "sdscatlen", 18.4),
            hit(3, "function", "sdscat", 19.0),
            hit(4, "function", "sdsnew", 25.0),
        ];
        definitions_before_declarations(&mut hits);
        let scores: Vec<f64> = hits.iter().map(|h| h.score).collect();
        assert_eq!(scores, [19.7, 19.7 + 1e-6, 19.0, 25.0]);
    }

    /// A short function calling a longer one of its file among the hits lifts it just above
    /// itself.
    #[test]
    fn a_thin_wrapper_lends_its_score_to_the_function_it_calls() {
        let mut hits = vec![
            hit(1, "function", "redisContextConnectTcp", 30.0),
            hit(2, "function", "_redisContextConnectTcp", 20.0),
            hit(3, "function", "other", 25.0),
        ];
        hits[0].chunk.end_line = 4;
        hits[1].chunk.end_line = 180;
        hits[1].chunk.path = hits[0].chunk.path.clone();
        let mut elsewhere = hit(4, "function", "_redisContextConnectTcp", 20.0);
        elsewhere.chunk.end_line = 180;
        hits.push(elsewhere);
        assert_eq!(callers(&hits), [1, 3, 2, 4]);
        let texts = HashMap::from([
            (
                1,
                "int redisContextConnectTcp(redisContext *c) {\n    return _redisContextConnectTcp(c, NULL);\n}"
                    .to_owned(),
            ),
            (2, String::new()),
            (3, String::new()),
            (4, String::new()),
        ]);
        lend_to_callees(&mut hits, &texts);
        let scores: Vec<f64> = hits.iter().map(|h| h.score).collect();
        assert_eq!(scores, [30.0, 30.001, 25.0, 20.0], "not the namesake of another file");
    }

    /// One of the best hits lifts the few functions of its file it calls to a share of its
    /// score; one that calls many of the hits lifts none.
    #[test]
    fn the_best_hits_lend_a_share_to_the_few_functions_they_call() {
        let mut hits: Vec<Hit> = (1..=5).map(|i| hit(i, "function", &format!("top{i}"), 40.0 - i as f64)).collect();
        hits.extend((6..=12).map(|i| hit(i, "function", &format!("f{i}"), 10.0)));
        let mut elsewhere = hit(13, "function", "f6", 10.0);
        for h in &mut hits {
            h.chunk.path = "hiredis.c".into();
        }
        elsewhere.chunk.path = "sds.c".into();
        hits.push(elsewhere);
        let texts = HashMap::from([
            (1, "void top1(void) { f6(); top2(); f6(); }".to_owned()),
            (2, "void top2(void) { f6(); f7(); f8(); f9(); f10(); f11(); }".to_owned()),
        ]);
        lend_to_callees(&mut hits, &texts);
        let scores: Vec<f64> = hits.iter().skip(5).map(|h| h.score).collect();
        assert_eq!(
            scores,
            [39.0 * CALLER_SHARE, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0],
            "not the f6 of another file"
        );
        assert_eq!(hits[1].score, 38.0, "a callee among the best keeps its own score");
    }

    #[test]
    fn example_programs_are_told_by_their_folder() {
        assert!(is_example("examples/chat/src/main.rs"));
        assert!(is_example("docs/example/app.py"));
        assert!(!is_example("src/examples.rs"));
        assert!(!is_example("src/router.rs"));
    }
}
