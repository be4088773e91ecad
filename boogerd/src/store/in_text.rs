//! What a chunk's text already holds is stored as how to read it back from the text, not a
//! second time: its signature, most often where the text starts or on its first lines after a
//! doc comment, and its doc, a Python docstring word for word or a C or Rust item's comments
//! above it once their markers are stripped (the chunk starts at its first comment). On a
//! 36,000-file tree: 32 of the 37 MB of docs, and beside the signatures stored by length since
//! migration 13, 25 more MB of signatures. Every read goes through [`read_back`]: in SQL as
//! `booger_from_text(how, text)`, in [`doc_of_c!`] and [`signature_of_c!`], and in Rust as
//! [`stored_value`].
//!
//! How, stored as a blob (the columns have text affinity, which would turn a number into text
//! indistinguishable from a signature of digits; a blob is stored as it is):
//! - decimal digits: the text's first that many characters;
//! - `s<start>:<end>`: the text's bytes from `start` to `end`;
//! - `w<start>:<end>`: the words of those bytes, joined by single spaces (a signature over
//!   several lines, made one line by the chunker);
//! - `c`: the `//` and `/* … */` comments the text starts with, as the chunker reads comments
//!   ([`crate::source::chunk::strip_comment`] each, joined by lines, clipped); `h`: its `#`
//!   comments (apart, so that a C preprocessor line is not taken for one).
//!
//! A value is stored so only when reading it back gives that very value: what no way gives
//! (an attribute between two comments, a docstring or signature cut short, a long chunk's
//! signature) is stored whole.

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::{ToSqlOutput, ValueRef};

use crate::source::chunk::{Chunk, DOC_MAX, strip_comment};

/// How a chunk's signature and doc are read back from its text, where they can be (`None`:
/// stored whole). Made where the file was chunked: the writer is the one thread every chunk
/// goes through.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ways {
    pub signature: Option<Vec<u8>>,
    pub doc: Option<Vec<u8>>,
}

impl Ways {
    pub(crate) fn of(c: &Chunk) -> Ways {
        Ways { signature: signature_way(&c.signature, &c.content), doc: doc_way(c.doc.as_deref(), &c.content) }
    }
}

/// Only a short chunk's signature is read from its text (its row lies whole on its page,
/// its text decoded by `booger_text` at most with the project's dictionary): a long chunk's
/// text is compressed on its own, and a page of answers would decompress each.
const SHORT: usize = super::dictionaries::PLAIN_MAX;

/// How to read `signature` back from a chunk whose text is `content`, if it can be.
fn signature_way(signature: &str, content: &str) -> Option<Vec<u8>> {
    if signature.is_empty() || content.len() > SHORT {
        return None;
    }
    if content.starts_with(signature) {
        return Some(signature.chars().count().to_string().into_bytes());
    }
    span(signature, content).or_else(|| words(signature, content))
}

/// The value stored for a column whose value is `whole` (NULL for none), read back from the
/// text the `way` says when there is one.
pub(super) fn stored<'a>(way: Option<&'a [u8]>, whole: Option<&'a str>) -> ToSqlOutput<'a> {
    match (way, whole) {
        (Some(way), _) => ToSqlOutput::Borrowed(ValueRef::Blob(way)),
        (None, Some(whole)) => ToSqlOutput::Borrowed(ValueRef::Text(whole.as_bytes())),
        (None, None) => ToSqlOutput::Borrowed(ValueRef::Null),
    }
}

/// The way to read `part` back as the bytes of `content` that it is, if it is in it.
fn span(part: &str, content: &str) -> Option<Vec<u8>> {
    let start = content.find(part)?;
    Some(format!("s{start}:{}", start + part.len()).into_bytes())
}

/// The way to read `part` back as the words of some of `content`'s bytes (whitespace made
/// single spaces), if it is that.
fn words(part: &str, content: &str) -> Option<Vec<u8>> {
    let (want, have) = (part.as_bytes(), content.as_bytes());
    let first = part.split(' ').next().filter(|w| !w.is_empty())?;
    // The first few places its first word is (an earlier one may be in a comment above).
    for (start, _) in content.match_indices(first).take(8) {
        let (mut i, mut at) = (0, start);
        while i < want.len() && at < have.len() {
            if want[i] == b' ' && have[at].is_ascii_whitespace() {
                while at < have.len() && have[at].is_ascii_whitespace() {
                    at += 1;
                }
            } else if want[i] == have[at] {
                at += 1;
            } else {
                break;
            }
            i += 1;
        }
        let how = format!("w{start}:{at}").into_bytes();
        if i == want.len() && read_back(&how, content).as_deref() == Some(part) {
            return Some(how);
        }
    }
    None
}

/// How to read `doc` back from a chunk whose text is `content`, if it can be.
fn doc_way(doc: Option<&str>, content: &str) -> Option<Vec<u8>> {
    let doc = doc.filter(|d| !d.is_empty())?;
    span(doc, content).or_else(|| {
        [(b"c", Marks::Slashes), (b"h", Marks::Hash)]
            .into_iter()
            .find(|(_, marks)| leading_comments(content, *marks).as_deref() == Some(doc))
            .map(|(how, _)| how.to_vec())
    })
}

/// The value `how` says to read from `text`; `None` when it says nothing readable (a damaged
/// row).
fn read_back(how: &[u8], text: &str) -> Option<String> {
    match how {
        [b'0'..=b'9', ..] => {
            let chars: usize = std::str::from_utf8(how).ok()?.parse().ok()?;
            let end = text.char_indices().nth(chars).map_or(text.len(), |(at, _)| at);
            Some(text[..end].to_owned())
        }
        b"c" => leading_comments(text, Marks::Slashes),
        b"h" => leading_comments(text, Marks::Hash),
        [way @ (b's' | b'w'), span @ ..] => {
            let (start, end) = std::str::from_utf8(span).ok()?.split_once(':')?;
            let bytes = text.get(start.parse().ok()?..end.parse().ok()?)?;
            Some(if *way == b's' { bytes.to_owned() } else { bytes.split_whitespace().collect::<Vec<_>>().join(" ") })
        }
        _ => None,
    }
}

/// What starts a comment.
#[derive(Clone, Copy, PartialEq)]
enum Marks {
    /// `//` or `/* … */`.
    Slashes,
    /// `#` (not a Rust attribute's `#[`).
    Hash,
}

/// The comments `text` starts with (no blank line between them), stripped and joined as the
/// chunker joins a doc's comments; `None` for none.
fn leading_comments(text: &str, marks: Marks) -> Option<String> {
    let mut comments = Vec::new();
    let mut rest = text;
    loop {
        let line_start = rest.trim_start_matches([' ', '\t']);
        let line_comment = match marks {
            Marks::Slashes => line_start.starts_with("//"),
            Marks::Hash => line_start.starts_with('#') && !line_start.starts_with("#["),
        };
        let comment_len = if marks == Marks::Slashes && line_start.starts_with("/*") {
            line_start.find("*/").map(|end| end + 2)?
        } else if line_comment {
            line_start.find('\n').unwrap_or(line_start.len())
        } else {
            break;
        };
        comments.push(strip_comment(&line_start[..comment_len]));
        rest = &line_start[comment_len..];
        // The next comment starts on the next line (a comment after code on one line ends
        // the run above).
        let after = rest.trim_start_matches([' ', '\t', '\r']);
        match after.strip_prefix('\n') {
            Some(next) if !next.trim_start_matches([' ', '\t', '\r']).starts_with('\n') => rest = next,
            _ => break,
        }
    }
    let doc = comments.join("\n");
    let doc = doc.trim();
    (!doc.is_empty()).then(|| crate::base::text::clip(doc, DOC_MAX))
}

/// The doc of the row of `chunks` named `c`, as an SQL expression (text, or NULL).
macro_rules! doc_of_c {
    () => {
        "CASE WHEN typeof(c.doc) = 'blob' THEN booger_from_text(c.doc, booger_text(c.content)) ELSE c.doc END"
    };
}
pub(crate) use doc_of_c;

/// The signature of the row of `chunks` named `c`, as an SQL expression (text).
macro_rules! signature_of_c {
    () => {
        "CASE WHEN typeof(c.signature) = 'blob' THEN booger_from_text(c.signature, booger_text(c.content)) \
         ELSE c.signature END"
    };
}
pub(crate) use signature_of_c;

/// A signature or doc as its row stores it (`stored`), read with its chunk's `text`: the
/// value itself, or what its way reads back; `None` for null, or a way that reads nothing (a
/// damaged row).
pub(super) fn stored_value<'a>(stored: ValueRef<'a>, text: &str) -> Option<std::borrow::Cow<'a, str>> {
    match stored {
        ValueRef::Blob(how) => read_back(how, text).map(std::borrow::Cow::Owned),
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t)),
        _ => None,
    }
}

/// Adds `booger_from_text(how, text)` to `c`: a value stored as how to read it, read from its
/// chunk's text (NULL when it cannot be).
pub(super) fn register(c: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC | FunctionFlags::SQLITE_INNOCUOUS;
    c.create_scalar_function("booger_from_text", 2, flags, |ctx| {
        Ok(match (ctx.get_raw(0), ctx.get_raw(1)) {
            (ValueRef::Blob(how), ValueRef::Text(text)) => {
                std::str::from_utf8(text).ok().and_then(|text| read_back(how, text))
            }
            _ => None,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(doc: &str, content: &str) -> (bool, Option<String>) {
        match doc_way(Some(doc), content) {
            Some(how) => (true, read_back(&how, content)),
            None => (false, Some(doc.to_owned())),
        }
    }

    #[test]
    fn a_doc_in_the_text_is_read_back_from_it() {
        let py = "def f(x):\n    \"\"\"Add one.\n\n    Returns x + 1.\n    \"\"\"\n    return x + 1\n";
        let rust = "/// Adds one.\n///\n/// Never overflows.\npub fn f(x: u8) -> u8 {\n    x.saturating_add(1)\n}\n";
        let c = "/* Frees the reply.\n * Safe on NULL. */\nvoid freeReply(void *r);\n";
        let lines = "// One.\n// Two.\nint two(void);\n";
        let ruby = "# Greets.\n# Loudly.\ndef greet\nend\n";
        let macro_doc = "// Size of a page.\n#define PAGE 4096\n";
        for (doc, content) in [
            ("Add one.\n\n    Returns x + 1.", py),
            ("Adds one.\n\nNever overflows.", rust),
            ("Frees the reply.\nSafe on NULL.", c),
            ("One.\nTwo.", lines),
            ("Greets.\nLoudly.", ruby),
            ("Size of a page.", macro_doc),
        ] {
            assert_eq!(round_trip(doc, content), (true, Some(doc.to_owned())), "{content}");
        }
    }

    #[test]
    fn a_doc_the_text_does_not_give_is_stored_whole() {
        // An attribute between the comments: the chunker leaves it out of the doc.
        let content = "/// One.\n#[inline]\n/// Two.\nfn f() {}\n";
        assert_eq!(round_trip("One.\nTwo.", content), (false, Some("One.\nTwo.".to_owned())));
        // A blank line ends the comments the text starts with.
        assert!(!round_trip("One.\nTwo.", "// One.\n\n// Two.\nfn f() {}\n").0);
        assert_eq!(doc_way(None, "x"), None);
        assert_eq!(doc_way(Some(""), "x"), None);
        assert!(matches!(stored(None, None), ToSqlOutput::Borrowed(ValueRef::Null)));
        assert!(matches!(stored(None, Some("")), ToSqlOutput::Borrowed(ValueRef::Text(b""))));
    }

    /// A project of `files` indexed, and each named chunk with a `column`: its name and how
    /// the column is stored (`blob`: as how to read it back).
    fn indexed(
        files: &[(&str, &str)],
        column: &str,
    ) -> (tempfile::TempDir, crate::store::Store, Vec<(String, String)>) {
        use crate::engine::index::{Options, Progress, run};
        let (dir, root, index) = crate::store::testing::project(files);
        let store = crate::store::Store::open(&index, &root).unwrap();
        run(&root, &store, Options::default(), &Progress::default()).unwrap();
        let sql = format!("SELECT name, typeof({column}) FROM chunks WHERE {column} <> '' ORDER BY name");
        let stored = store.read(|c| c.prepare(&sql)?.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect()).unwrap();
        (dir, store, stored)
    }

    /// Docs read back from an index equal the chunker's, whether stored whole or by how to
    /// read them; the vectors' text reads them too.
    #[test]
    fn docs_read_back_as_the_chunker_made_them() {
        let files = [
            ("a.py", "def f(x):\n    \"\"\"Add one.\n\n    Returns x + 1.\n    \"\"\"\n    return x + 1\n"),
            ("b.rs", "/// One.\n#[inline]\n/// Two.\npub fn two() {}\n\n/// Adds.\npub fn add() {}\n"),
            (
                "c.c",
                "/* Frees it.\n * Safe on NULL. */\nvoid freeIt(void *r) {\n}\n\n// Page size.\n#define PAGE 4096\n",
            ),
        ];
        let (_dir, store, stored) = indexed(&files, "doc");
        let how = |name: &str| stored.iter().find(|(n, _)| n == name).map(|(_, t)| t.as_str());
        assert_eq!([how("f"), how("add"), how("freeIt"), how("PAGE")], [Some("blob"); 4], "{stored:?}");
        assert_eq!(how("two"), Some("text"), "an attribute between the comments: {stored:?}");
        for (path, text) in files {
            let fresh = crate::source::chunk::chunk_file(std::path::Path::new(path), text.as_bytes(), false).chunks;
            let docs = |v: &[crate::source::chunk::Chunk]| v.iter().map(|c| c.doc.clone()).collect::<Vec<_>>();
            assert_eq!(docs(&store.chunks_of(path).unwrap()), docs(&fresh), "{path}");
        }
        let embedded: Vec<String> = store
            .read(|c| {
                c.prepare(concat!("SELECT ", doc_of_c!(), " FROM chunks c WHERE c.name = 'f'"))?
                    .query_map([], |r| r.get(0))?
                    .collect()
            })
            .unwrap();
        assert_eq!(embedded, ["Add one.\n\n    Returns x + 1."]);
    }

    #[test]
    fn words_over_lines_are_read_back_as_one_line() {
        let content = "// int f(a, b) in a comment\nint  f(int a,\n      int b)\n{\n  return a;\n}\n";
        let how = words("int f(int a, int b)", content).unwrap();
        assert_eq!(read_back(&how, content).as_deref(), Some("int f(int a, int b)"));
        assert!(words("int f(int a, int c)", content).is_none());
        assert!(words("", content).is_none());
    }

    #[test]
    fn a_damaged_way_reads_nothing() {
        for how in [&b"s9:2"[..], b"s0:999", b"sx:1", b"s1:2:3", b"q", b"", b"99999999999999999999999"] {
            assert_eq!(read_back(how, "short"), None, "{how:?}");
        }
        assert_eq!(read_back(b"3", "Σίσυφος"), Some("Σίσ".to_owned()), "characters, not bytes");
        assert_eq!(read_back(b"30", "short"), Some("short".to_owned()));
        assert_eq!(read_back(b"w0:4", "a\n b"), Some("a b".to_owned()));
    }

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
        let (_dir, store, stored) =
            indexed(&files.iter().map(|(p, t)| (*p, t.as_str())).collect::<Vec<_>>(), "signature");
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
