//! A chunk's text as its distinct terms ([`crate::base::terms`]), each with how often it
//! occurs: what its full-text row and its ranking postings are made from, prepared once, on
//! the worker that chunked it.
//!
//! Neither index keeps where a term is (`fulltext`, the ranking segment), so a word said forty
//! times in a function is one entry in each: handing them the text whole made the one writer
//! and the one ranking builder split, stem and hash every occurrence (in the standard
//! library's 40-line pieces, 39% of the words are distinct). The full-text row is written from
//! [`Bag::text`], which FTS5 reads back as it is (`fulltext`'s tokenizer); only its count of a
//! row's tokens (its length in bm25) becomes the count of distinct terms.

/// The distinct terms of a text and their counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Bag {
    /// Each distinct term once, in the order first seen, each followed by a space.
    text: String,
    /// How often each term occurs, in the same order.
    counts: Vec<u32>,
}

impl Bag {
    /// The bag of `text`'s terms ([`crate::base::terms::distinct_terms`]).
    pub(crate) fn of(text: &str) -> Bag {
        let mut bag = Bag::default();
        crate::base::terms::distinct_terms(text, |term, n| {
            bag.text.push_str(term);
            bag.text.push(' ');
            bag.counts.push(n);
        });
        bag
    }

    /// The distinct terms, each followed by a space: the full-text row's `content`.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Each distinct term with its count, in the order first seen.
    pub(crate) fn each(&self) -> impl Iterator<Item = (&str, u32)> {
        self.text.split_terminator(' ').zip(self.counts.iter().copied())
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.text.len() + 4 * self.counts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_term_once_with_its_count() {
        let bag = Bag::of("def retry(self):\n    Retries = self.retry_count + RETRY\n");
        let each: Vec<(&str, u32)> = bag.each().collect();
        assert_eq!(each, [("def", 1), ("retri", 4), ("self", 2), ("count", 1)]);
        assert_eq!(bag.text(), "def retri self count ");
        assert_eq!(Bag::of("").text(), "");
    }
}
