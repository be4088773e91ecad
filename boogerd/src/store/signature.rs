//! A chunk's signature is most often where its content starts (`pub fn parse(&self) -> Config`,
//! a `#define`'s whole line). A short chunk's is stored as its length in characters and read
//! back from the content rather than stored twice: 28 of the 41 MB of signatures in
//! /usr/include's index (migration 13). Every read of the column goes through
//! [`signature_of_c!`].
//!
//! The length is stored as a blob of decimal digits: the column has text affinity, which
//! would turn an integer into text indistinguishable from a signature of digits; a blob is
//! stored as it is.

use rusqlite::types::{ToSqlOutput, Value, ValueRef};

/// Short chunks keep their signature by length (SQL reads it back from the text's start,
/// decoded by `booger_text`); such a row lies whole on its page, so reading the signature back
/// reads no overflow page.
const SHORT: usize = super::text::PLAIN_MAX;

/// The value stored for `signature` in a chunk with `content`.
pub(super) fn stored<'a>(signature: &'a str, content: &str) -> ToSqlOutput<'a> {
    if !signature.is_empty() && content.len() <= SHORT && content.starts_with(signature) {
        ToSqlOutput::Owned(Value::Blob(signature.chars().count().to_string().into_bytes()))
    } else {
        ToSqlOutput::Borrowed(ValueRef::Text(signature.as_bytes()))
    }
}

/// The signature of the row of `chunks` named `c`, as an SQL expression (text).
macro_rules! signature_of_c {
    () => {
        "CASE WHEN typeof(c.signature) = 'blob' THEN substr(booger_text(c.content), 1, CAST(c.signature AS INTEGER)) \
         ELSE c.signature END"
    };
}
pub(crate) use signature_of_c;

#[cfg(test)]
mod tests {
    use crate::engine::index::{Options, Progress, run};
    use crate::store::Store;

    /// Signatures read back equal the chunker's, whether stored whole or by length; a
    /// signature that is not where the content starts, or of a long chunk, is stored whole.
    #[test]
    fn signatures_read_back_as_the_chunker_made_them() {
        let long_body = "    x = 1\n".repeat(150);
        let files = [
            ("a.py", format!("def short(a, b):\n    return a\n\ndef long(x):\n{long_body}")),
            ("b.c", "#define ÜBER_LIMIT 0x10\nint  spaced (int a,\n   int b);\n".to_owned()),
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
        let by_length = |name: &str| stored.iter().any(|(n, t)| n == name && t == "blob");
        assert!(by_length("short") && by_length("ÜBER_LIMIT"), "{stored:?}");
        assert!(!by_length("long") && !by_length("spaced"), "a long chunk, a signature made one line: {stored:?}");
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
