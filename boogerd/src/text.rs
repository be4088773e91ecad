//! Cutting text that goes into an answer or a record to a length.

/// `s` cut to at most `max` bytes (at a character boundary), marked with `…` when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max { s.to_owned() } else { format!("{}…", &s[..s.floor_char_boundary(max)]) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cuts_at_a_character_boundary() {
        assert_eq!(super::clip("abc", 3), "abc");
        assert_eq!(super::clip(&"é".repeat(200), 120).chars().count(), 61);
    }
}
