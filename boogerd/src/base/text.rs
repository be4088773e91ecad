//! Cutting text that goes into an answer or a record to a length, and making a name safe
//! to print.

/// `s` cut to at most `max` bytes (at a character boundary), marked with `…` when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max { s.to_owned() } else { format!("{}…", &s[..s.floor_char_boundary(max)]) }
}

/// `s` with its control characters escaped (`\n`, `\u{1b}`): a name from a repository, as an
/// answer line may show it. A newline in a file name could otherwise forge a result line, and
/// an escape sequence would reach a terminal.
pub fn printable(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_owned();
    }
    s.chars().map(|c| if c.is_control() { c.escape_debug().to_string() } else { c.to_string() }).collect()
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
}
