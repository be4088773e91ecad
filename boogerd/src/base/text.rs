//! Cutting text that goes into an answer or a record to a length, making a name safe to
//! print, and finding the runs of a kind of character (words, identifiers) in text.

/// `s` cut to at most `max` bytes (at a character boundary), marked with `…` when cut.
pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.len() <= max { s.to_owned() } else { format!("{}…", &s[..s.floor_char_boundary(max)]) }
}

/// `s` with its control characters escaped (`\n`, `\u{1b}`): a name from a repository, as an
/// answer line may show it. A newline in a file name could otherwise forge a result line, and
/// an escape sequence would reach a terminal.
pub(crate) fn printable(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_owned();
    }
    s.chars().map(|c| if c.is_control() { c.escape_debug().to_string() } else { c.to_string() }).collect()
}

/// Calls `f` with each longest run of `text`'s characters that `member` takes, and whether
/// the run is ASCII. Byte by byte where the text is ASCII: every chunk of every file passes
/// here, for its tokens and its identifiers.
pub(crate) fn each_run<'t>(text: &'t str, member: impl Fn(char) -> bool, mut f: impl FnMut(&'t str, bool)) {
    let bytes = text.as_bytes();
    let (mut start, mut ascii, mut i) = (None, true, 0);
    while i < bytes.len() {
        let (taken, width) = match bytes[i] {
            b if b.is_ascii() => (member(char::from(b)), 1),
            _ => text[i..].chars().next().map_or((false, 1), |c| (member(c), c.len_utf8())),
        };
        if taken {
            if start.is_none() {
                (start, ascii) = (Some(i), true);
            }
            ascii &= width == 1;
        } else if let Some(s) = start.take() {
            f(&text[s..i], ascii);
        }
        i += width;
    }
    if let Some(s) = start {
        f(&text[s..], ascii);
    }
}

/// Byte offset of the first occurrence of `name` in `line` as a whole word (not inside a
/// longer identifier). A plain scan: cheaper than compiling a regex per call.
pub(crate) fn find_word(line: &str, name: &str) -> Option<usize> {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut from = 0;
    while let Some(i) = line[from..].find(name) {
        let at = from + i;
        let before_ok = line[..at].chars().next_back().is_none_or(|c| !ident(c));
        let after_ok = line[at + name.len()..].chars().next().is_none_or(|c| !ident(c));
        if before_ok && after_ok {
            return Some(at);
        }
        from = at + name.len().max(1);
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn cuts_at_a_character_boundary() {
        assert_eq!(super::clip("abc", 3), "abc");
        assert_eq!(super::clip(&"é".repeat(200), 120).chars().count(), 61);
    }

    #[test]
    fn names_print_without_control_characters() {
        assert_eq!(super::printable("src/a.rs"), "src/a.rs");
        assert_eq!(super::printable("x\nauth.rs:42: pw"), "x\\nauth.rs:42: pw");
        assert_eq!(super::printable("t\u{1b}]52;c;aGk=\u{7}"), "t\\u{1b}]52;c;aGk=\\u{7}");
    }

    /// Runs found byte by byte are the ones a walk over the characters finds, with whether
    /// each is ASCII, on random text of any script (marks, symbols, a final sigma).
    #[test]
    fn runs_are_found_as_a_walk_over_characters_finds_them() {
        let pieces = ["a", "Z", "9", "_", " ", ":", "\n", "é", "Σ", "ς", "٣", "\u{301}", "😀", "ǅ", "ß", "xY"];
        let mut rng = crate::base::rng::Rng::new(45);
        for _ in 0..2_000 {
            let text: String = (0..rng.below(24)).map(|_| *rng.pick(&pieces)).collect();
            for member in [char::is_alphanumeric, |c: char| c.is_alphanumeric() || c == '_'] {
                let mut found = Vec::new();
                super::each_run(&text, member, |run, ascii| found.push((run, ascii)));
                let walked: Vec<(&str, bool)> =
                    text.split(|c| !member(c)).filter(|t| !t.is_empty()).map(|t| (t, t.is_ascii())).collect();
                assert_eq!(found, walked, "{text:?}");
            }
        }
    }
}
