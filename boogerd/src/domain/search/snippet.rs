//! The lines of a chunk worth showing for a query, when the whole chunk would cost too much:
//! its declaration, the lines that hold the query's words, and a line of context around
//! them. What is left out is marked, with where to read it.

/// Lines of a chunk shown in a snippet at most (its declaration included).
pub(crate) const SNIPPET_LINES: usize = 6;
/// Longer lines are cut (minified code, data tables).
const LINE_CHARS: usize = 120;

/// Which lines of `lines` to show, in order: all of them when they (nearly) fit in `max`, else the
/// declaration (the line holding `signature`, or the first non-blank one), the lines that
/// contain query `words` (those with the most distinct words first), then a line of context
/// after and before each while room is left.
pub(crate) fn pick(lines: &[&str], words: &[String], signature: &str, max: usize) -> Vec<usize> {
    // Eliding fewer lines than the marks would take saves nothing.
    if lines.len() <= max + 2 {
        return (0..lines.len()).collect();
    }
    let sig = signature.lines().next().unwrap_or("").trim();
    let anchor = lines
        .iter()
        .position(|l| !sig.is_empty() && l.contains(sig.get(..sig.len().min(40)).unwrap_or(sig)))
        .or_else(|| lines.iter().position(|l| !l.trim().is_empty()))
        .unwrap_or(0);
    let words: Vec<String> =
        words.iter().filter(|w| w.len() >= 3 || words.len() == 1).map(|w| w.to_lowercase()).collect();
    let mut hits: Vec<(usize, usize)> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != anchor)
        .map(|(i, l)| {
            let lower = l.to_lowercase();
            (i, words.iter().filter(|w| lower.contains(w.as_str())).count())
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    // Most words first; among equals, earlier lines first.
    hits.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut chosen = vec![anchor];
    for (i, _) in &hits {
        if chosen.len() >= max {
            break;
        }
        chosen.push(*i);
    }
    // Context: the line after each match, then the one before, while room is left.
    for delta in [1isize, -1] {
        for (i, _) in &hits {
            if chosen.len() >= max {
                break;
            }
            let j = *i as isize + delta;
            if j >= 0 && (j as usize) < lines.len() && !chosen.contains(&(j as usize)) && chosen.contains(i) {
                chosen.push(j as usize);
            }
        }
    }
    // Nothing matched (a semantic hit): the start of the body.
    let mut next = anchor + 1;
    while chosen.len() < max.min(4) && next < lines.len() {
        if !chosen.contains(&next) {
            chosen.push(next);
        }
        next += 1;
    }
    chosen.sort_unstable();
    chosen
}

/// `line` cut to a readable length.
pub(crate) fn clip(line: &str) -> String {
    crate::base::text::clip(line, LINE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_declaration_and_the_matching_lines() {
        let body: Vec<String> = (0..40).map(|i| format!("    step_{i}();")).collect();
        let mut lines: Vec<&str> = vec!["/// Docs.", "pub fn retry_upload(blob: Blob) {"];
        lines.extend(body.iter().map(String::as_str));
        lines[20] = "    if attempts > MAX_RETRIES { return Err(Upload) }";
        lines.push("}");
        let picked = pick(&lines, &["retries".into(), "upload".into()], "pub fn retry_upload(blob: Blob)", 6);
        assert!(picked.contains(&1), "the declaration: {picked:?}");
        assert!(picked.contains(&20) && picked.contains(&21), "the match and its next line: {picked:?}");
        assert!(picked.len() <= 6 && picked.windows(2).all(|w| w[0] < w[1]), "{picked:?}");
        // A short chunk is shown whole.
        assert_eq!(pick(&lines[..8], &[], "", 6), (0..8).collect::<Vec<_>>());
    }
}
