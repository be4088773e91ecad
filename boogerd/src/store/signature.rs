//! A chunk's signature is most often in its text: where it starts (`pub fn parse(&self) ->
//! Config`, a `#define`'s whole line), or on its first lines after a doc comment. A short
//! chunk's is stored as how to read it back from the text (`in_text`: its length in
//! characters, where it is, or the words it is made of) rather than twice: 28 of the 41 MB of signatures in
//! /usr/include's index by length (migration 13), 16 more MB of a 36,000-file tree's where
//! they are. Every read of the column goes through [`signature_of_c!`].

/// Short chunks keep their signature by where it is (SQL reads it back from the text,
/// decoded by `booger_text`); such a row lies whole on its page, so reading the signature back
/// reads no overflow page. A long chunk's text is compressed on its own, and a page of
/// answers would decompress each.
const SHORT: usize = super::text::PLAIN_MAX;

/// How to read `signature` back from a chunk whose text is `content`, if it can be.
pub(super) fn way(signature: &str, content: &str) -> Option<Vec<u8>> {
    if signature.is_empty() || content.len() > SHORT {
        return None;
    }
    if content.starts_with(signature) {
        return Some(signature.chars().count().to_string().into_bytes());
    }
    super::in_text::span(signature, content).or_else(|| super::in_text::words(signature, content))
}

/// The signature of the row of `chunks` named `c`, as an SQL expression (text).
macro_rules! signature_of_c {
    () => {
        "CASE WHEN typeof(c.signature) = 'blob' THEN booger_from_text(c.signature, booger_text(c.content)) \
         ELSE c.signature END"
    };
}
pub(crate) use signature_of_c;

#[cfg(test)]
mod tests {
    use crate::engine::index::{Options, Progress, run};
    use crate::store::Store;

    /// Signatures read back equal the chunker's, whether stored whole or as how to read them
    /// from the text (by length, where they are, their words over lines); a long chunk's is
    /// stored whole.
    #[test]
    fn signatures_read_back_as_the_chunker_made_them() {
        let long_body = "    x = 1\n".repeat(150);
        let files = [
            ("a.py", format!("def short(a, b):\n    return a\n\ndef long(x):\n{long_body}")),
            ("b.c", "#define ÜBER_LIMIT 0x10\nint  spaced (int a,\n   int b);\n".to_owned()),
            ("c.rs", "/// Documented.\n#[inline]\npub fn after_doc(a: u8) -> u8 {\n    a\n}\n".to_owned()),
        ];
        let (_dir, root, index) =
            crate::store::testing::project(&files.iter().map(|(p, t)| (*p, t.as_str())).collect::<Vec<_>>());
        let store = Store::open(&index, &root).unwrap();
        run(&root, &store, Options::default(), &Progress::default()).unwrap();
        let stored: Vec<(String, String)> = store
            .read(|c| {
                c.prepare("SELECT name, typeof(signature) FROM chunks WHERE signature <> '' ORDER BY name")?
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect()
            })
            .unwrap();
        let from_text = |name: &str| stored.iter().any(|(n, t)| n == name && t == "blob");
        assert!(from_text("short") && from_text("ÜBER_LIMIT") && from_text("after_doc"), "{stored:?}");
        assert!(from_text("spaced"), "a signature made one line: {stored:?}");
        assert!(!from_text("long"), "a long chunk: {stored:?}");
        for (path, text) in &files {
            let fresh = crate::source::chunk::chunk_file(std::path::Path::new(path), text.as_bytes(), false).chunks;
            let read = store.chunks_of(path).unwrap();
            let sigs = |v: &[crate::source::chunk::Chunk]| v.iter().map(|c| c.signature.clone()).collect::<Vec<_>>();
            assert_eq!(sigs(&read), sigs(&fresh), "{path}");
        }
        let id: i64 =
            store.read(|c| c.query_row("SELECT id FROM chunks WHERE name = 'short'", [], |r| r.get(0))).unwrap();
        assert_eq!(store.candidates_by_id(&[(id, 0.0)]).unwrap()[0].signature, "def short(a, b)");
    }
}
