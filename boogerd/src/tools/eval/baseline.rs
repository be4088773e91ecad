//! The grep ranking every figure stands beside: files ranked by how many distinct words of
//! the query they contain (case-insensitive, words under three letters and common English
//! words left out), ties broken by the lines that match, then by path. It is what an agent
//! gets from a few `rg -c` calls, computed here over the indexed files' text.

/// Words too common to tell files apart.
const STOPWORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do",
    "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he",
    "her", "here", "hers", "him", "his", "how", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more",
    "most", "my", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "out", "over",
    "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "via", "was", "we",
    "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
    "yours", "instead", "without", "within", "make", "makes", "made", "use", "used", "uses", "using", "get", "gets",
    "set", "sets", "must", "may", "might",
];

/// The query's words as the ranking counts them.
pub(super) fn terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in query.to_lowercase().split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if w.len() >= 3 && !STOPWORDS.contains(&w) && !out.iter().any(|o| o == w) {
            out.push(w.to_owned());
        }
    }
    out
}

/// Every indexed file's text, lowercased once.
pub(super) struct Corpus {
    files: Vec<(String, String)>,
}

impl Corpus {
    pub(super) fn new(files: Vec<(String, String)>) -> Self {
        let mut files: Vec<(String, String)> = files.into_iter().map(|(p, t)| (p, t.to_lowercase())).collect();
        files.sort();
        Self { files }
    }

    /// The `k` best files for `query`.
    pub(super) fn rank(&self, query: &str, k: usize) -> Vec<&str> {
        let terms = terms(query);
        if terms.is_empty() {
            return Vec::new();
        }
        let mut scored: Vec<(usize, usize, &str)> = self
            .files
            .iter()
            .filter_map(|(path, text)| {
                let mut distinct = 0;
                let mut lines = 0;
                for t in &terms {
                    if text.contains(t.as_str()) {
                        distinct += 1;
                        lines += text.lines().filter(|l| l.contains(t.as_str())).count();
                    }
                }
                (distinct > 0).then_some((distinct, lines, path.as_str()))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));
        scored.into_iter().take(k).map(|(_, _, p)| p).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_with_more_of_the_words_come_first() {
        assert_eq!(terms("Fix the Retry of uploads, retry_after"), ["fix", "retry", "uploads", "retry_after"]);
        let c = Corpus::new(vec![
            ("a.py".into(), "retry\nretry\n".into()),
            ("b.py".into(), "RETRY uploads\n".into()),
            ("c.py".into(), "nothing here\n".into()),
        ]);
        assert_eq!(c.rank("retry uploads", 10), ["b.py", "a.py"]);
        assert!(c.rank("a an the", 10).is_empty());
    }
}
