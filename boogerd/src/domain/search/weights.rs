//! The re-ranking weights in one table: what each factor adds to (or takes from) a chunk's
//! bm25 score. The search module's documentation and ARCHITECTURE.md name these fields
//! rather than restate their values; a change to one is measured on the eval sets
//! (`cargo bench -p booger-tests --bench issues`) before it lands.

/// The weights re-ranking uses; see [`WEIGHTS`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Weights {
    /// A multi-word query's candidate that holds every word (an AND hit).
    pub all_words: f64,
    /// Code rather than prose, data or an import.
    pub code: f64,
    /// A chunk the query names: the definition over its mentions (in any case style when the
    /// query writes a compound identifier: `IntoFuture` names `into_future`).
    pub named: f64,
    /// A member of a type the query names: where that type's work is done.
    pub member: f64,
    /// Each query word in the file's name (`persist` in `persist.ts`), for at most
    /// [`Weights::path_words_counted`] words.
    pub path_word: f64,
    pub path_words_counted: usize,
    /// A chunk in a commit subject's scope, or in a file the query names: `read: validate
    /// bools` is a change to `read.c`, whatever else mentions bools.
    pub scope: f64,
    /// A kind the query asks for (`class X`, `def x`).
    pub kind_hint: f64,
    /// A path in the session's focus set.
    pub focus: f64,
    /// A path the session has visited (taken off).
    pub visited: f64,
    /// A target the session's notes are on.
    pub annotated: f64,
    /// Test code, taken off, or added when the query is about tests: test names are
    /// sentences full of query words, but an agent asking how something works wants the code
    /// that does it. A change request's tests change with its code: they lose a quarter.
    pub test: f64,
    /// An import, taken off among the answers (and given back when it ranks its file): it
    /// names what its file uses and explains none of it.
    pub import: f64,
    /// Prose, taken off unless the query asks for documentation: it explains code in the
    /// words of a question, which is why it matches them so well.
    pub prose: f64,
    /// Release notes, taken off unless asked for: enough to come after the code rather than
    /// among it. An entry restates its commit's subject word for word, so its match alone
    /// outscores the code the commit changed by more than prose's weight (at 12, requests'
    /// HISTORY.md was among the first ten files for 39 of 142 commit subjects; at 30, 11).
    pub release_notes: f64,
    /// The share of a Rust impl header's score each of its methods gets: the header names the
    /// trait they implement.
    pub impl_share: f64,
    /// How much better than the best chunk of a file not yet shown a second chunk of a shown
    /// file must score to come first on a question's first page. Measured on the standard
    /// library's 16 questions (signatures mode): 1.5 lifts files R@10 0.908 → 0.917 and keeps
    /// SymHit@10 (0.792); 3 (a definition's weight) and spreading always each lost a gold
    /// symbol (0.783).
    pub spread_margin: f64,
    /// A question's weights (`question.rs`): asked of a code search, it is answered by the
    /// functions that do what it asks. Test code, taken off a question not about tests,
    /// four times what it loses elsewhere: test names are sentences full of a question's
    /// words, and fixtures hold the very names asked about (on ../shared/eval/questions 8 /
    /// 14 / 16 / 20: 0.547 / 0.552 / 0.553 / 0.554, zustand's tests most of all).
    pub question_test: f64,
    /// Prose, taken off a question that does not ask for documentation, three times what it
    /// loses elsewhere: a guide explains the code in the question's own words.
    pub question_prose: f64,
    /// A chunk of [`Weights::tiny_lines`] lines or fewer (`type Error = Infallible;`, a
    /// field), taken off a question: bm25 favours short texts, and it explains nothing.
    pub tiny: f64,
    pub tiny_lines: u32,
    /// A declaration (a prototype), taken off a question: its definition answers, and gains
    /// the declaration's score.
    pub declaration: f64,
    /// A type's definition, taken off a question: a struct of documented fields holds the
    /// words of many questions and does none of them.
    pub type_definition: f64,
}

/// The weights search ranks by.
pub(crate) const WEIGHTS: Weights = Weights {
    all_words: 3.0,
    code: 3.0,
    named: 6.0,
    member: 2.0,
    path_word: 0.5,
    path_words_counted: 2,
    scope: 4.0,
    kind_hint: 2.0,
    focus: 5.0,
    visited: 3.0,
    annotated: 2.0,
    test: 4.0,
    import: 2.0,
    prose: 6.0,
    release_notes: 30.0,
    impl_share: 0.3,
    spread_margin: 1.5,
    question_test: 16.0,
    question_prose: 18.0,
    tiny: 3.0,
    tiny_lines: 2,
    declaration: 3.0,
    type_definition: 2.0,
};
