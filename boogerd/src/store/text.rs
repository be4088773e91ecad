//! A chunk's text as stored: as it is up to [`PLAIN_MAX`] bytes, compressed (zstd, level 1)
//! past that. Long chunks hold most of the text's bytes and few of its rows: in the cargo
//! registry's index 51,000 of 918,000 chunks held 207 of its 307 MB of text, 46 MB
//! compressed (generated parse tables and amalgamations kept as fixed-size blocks most of
//! all); on /usr/include 33 MB of 114, 10 compressed. A short chunk stays text, so SQL can
//! still read its start (a signature stored by length, `signature.rs`).
//!
//! Every read of `chunks.content` goes through [`read`]: text is taken as it is, a blob is
//! decompressed, at most [`MAX_TEXT`] bytes (an index received from the team is untrusted).

use std::borrow::Cow;
use std::cell::RefCell;

use rusqlite::types::{ToSqlOutput, Type, Value, ValueRef};

/// The longest text stored as it is.
pub(super) const PLAIN_MAX: usize = 1000;
/// Fast, and most of what higher levels give on code (a chunk is compressed on the writer).
const LEVEL: i32 = 1;
/// The most a stored text may claim to hold (a chunk is at most a file's fixed-size block
/// or one definition).
const MAX_TEXT: u64 = 64 << 20;

thread_local! {
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// The value stored for a chunk's `text`.
pub(super) fn stored(text: &str) -> ToSqlOutput<'_> {
    if text.len() <= PLAIN_MAX {
        return ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes()));
    }
    let packed = COMPRESSOR.with_borrow_mut(|z| {
        if z.is_none() {
            *z = zstd::bulk::Compressor::new(LEVEL).ok();
        }
        z.as_mut().and_then(|z| z.compress(text.as_bytes()).ok())
    });
    match packed {
        Some(b) => ToSqlOutput::Owned(Value::Blob(b)),
        // Never expected; the text as it is reads back the same.
        None => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
    }
}

/// The text stored in column `idx` of `row`.
pub(super) fn read<'r>(row: &'r rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<Cow<'r, str>> {
    let bad =
        |e: Box<dyn std::error::Error + Send + Sync>| rusqlite::Error::FromSqlConversionFailure(idx, Type::Blob, e);
    match row.get_ref(idx)? {
        ValueRef::Text(t) => std::str::from_utf8(t).map(Cow::Borrowed).map_err(|e| rusqlite::Error::Utf8Error(idx, e)),
        ValueRef::Blob(b) => unpack(b).map(Cow::Owned).map_err(bad),
        ValueRef::Null => Ok(Cow::Borrowed("")),
        other => Err(rusqlite::Error::InvalidColumnType(idx, "content".to_owned(), other.data_type())),
    }
}

fn unpack(b: &[u8]) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let size = match zstd::zstd_safe::get_frame_content_size(b) {
        Ok(Some(n)) if n <= MAX_TEXT => n as usize,
        _ => return Err("not a compressed text of a known size within bounds".into()),
    };
    let bytes = DECOMPRESSOR.with_borrow_mut(|z| {
        if z.is_none() {
            *z = Some(zstd::bulk::Decompressor::new()?);
        }
        z.as_mut().expect("made above").decompress(b, size)
    })?;
    Ok(String::from_utf8(bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> (String, &'static str) {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (content TEXT NOT NULL)").unwrap();
        c.execute("INSERT INTO t VALUES (?1)", [stored(text)]).unwrap();
        let kind = c.query_row("SELECT typeof(content) FROM t", [], |r| r.get::<_, String>(0)).unwrap();
        let back = c.query_row("SELECT content FROM t", [], |r| read(r, 0).map(Cow::into_owned)).unwrap();
        (back, if kind == "blob" { "blob" } else { "text" })
    }

    /// Short texts stay text; long ones are stored compressed; both read back the same.
    #[test]
    fn texts_read_back_as_written() {
        let short = "fn a() {}";
        let long = "fn ünïcode() { let x = 1; }\n".repeat(200);
        assert_eq!(round_trip(short), (short.to_owned(), "text"));
        assert_eq!(round_trip(&long), (long.clone(), "blob"));
    }

    /// A blob that is not a compressed text of a bounded size is an error, not a panic or a
    /// huge allocation.
    #[test]
    fn a_damaged_or_oversized_blob_is_refused() {
        assert!(unpack(b"not zstd at all").is_err());
        let bomb = zstd::bulk::compress(&vec![b'a'; (MAX_TEXT + 1) as usize], 1).unwrap();
        assert!(unpack(&bomb).is_err());
        let mut cut = zstd::bulk::compress("some text ".repeat(500).as_bytes(), 1).unwrap();
        cut.truncate(cut.len() / 2);
        assert!(unpack(&cut).is_err());
    }
}
