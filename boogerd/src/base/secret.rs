//! Secrets booger makes: the HTTP face's token, session ids, team server tokens; and the one
//! way a secret is compared or kept (its hash), so no secret is stored or matched as text.

/// 32 random bytes from the OS, hex.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What is kept of a secret: its BLAKE3 hash. A secret of 32 random bytes cannot be guessed,
/// so a fast hash is enough (a slow one would only slow every request).
#[cfg(feature = "team")]
pub(crate) fn fingerprint(secret: &str) -> [u8; 32] {
    *blake3::hash(secret.trim().as_bytes()).as_bytes()
}

/// Equal, in time that does not depend on where the two first differ.
pub(crate) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_compared_in_constant_time() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }

    #[cfg(feature = "team")]
    #[test]
    fn a_token_is_kept_as_its_hash() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(fingerprint(&a), fingerprint(&format!("{a}\n")), "a token read from a file keeps its newline");
        assert_ne!(fingerprint(&a), fingerprint(&b));
    }
}
