//! A chunk's text as stored: past [`PLAIN_MAX`] bytes compressed (zstd, level 1); shorter,
//! compressed with the project's dictionary once it has one ([`Dictionaries`]), else as it is.
//!
//! Long chunks hold most of the text's bytes and few of its rows: in the cargo registry's
//! index 51,000 of 918,000 chunks held 207 of its 307 MB of text, 46 MB compressed (generated
//! parse tables and amalgamations kept as fixed-size blocks most of all). Short chunks are the
//! rest of the rows: a hundred bytes each is too little for zstd to find repeats in, but the
//! project's own dictionary (its common lines and words, trained from a sample of its chunks)
//! holds them: /usr/include's 81 MB of short texts took 52-67% of their size with the
//! dictionaries a first index trained as it went (53% with one trained on a sample of the
//! whole tree), the index 454 -> 424 MB.
//!
//! Every read of `chunks.content` decodes it here: SQL's `booger_text(c.content)` ([`register`],
//! on every connection of a store), or [`decoded`] where a scan reads the column as stored.
//! Text is taken as it is, a blob is decompressed (with the dictionary its frame names, of
//! the same index), at most [`MAX_TEXT`] bytes (an index received from the team is untrusted).

use std::cell::RefCell;
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::{ToSqlOutput, Type, Value, ValueRef};

use super::dictionaries::{Dictionaries, PACKED_MIN, PLAIN_MAX, Writing};

/// Fast, and most of what higher levels give on long code.
const LEVEL: i32 = 1;
/// The most a stored text may claim to hold (a chunk is at most a file's fixed-size block
/// or one definition).
const MAX_TEXT: u64 = 64 << 20;

thread_local! {
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
    static CCTX: RefCell<Option<zstd::zstd_safe::CCtx<'static>>> = const { RefCell::new(None) };
    static DCTX: RefCell<Option<zstd::zstd_safe::DCtx<'static>>> = const { RefCell::new(None) };
}

/// Adds `booger_text(content)` to `c`: a stored text as text, with `dictionaries`.
pub(super) fn register(c: &Connection, dictionaries: Arc<Dictionaries>) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    c.create_scalar_function("booger_text", 1, flags, move |ctx| match ctx.get_raw(0) {
        ValueRef::Text(t) => Ok(Value::Text(String::from_utf8_lossy(t).into_owned())),
        ValueRef::Blob(b) => unpack(b, &dictionaries)
            .map(Value::Text)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, Type::Blob, e)),
        _ => Ok(Value::Text(String::new())),
    })
}

/// Registers `booger_text` with the dictionaries of the index `c` holds (an index file
/// received from the team, read on its own).
#[cfg(feature = "team")]
pub(super) fn register_own(c: &Connection) -> rusqlite::Result<()> {
    use rusqlite::OptionalExtension;
    let has_table = c
        .query_row("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'text_dicts'", [], |_| Ok(()))
        .optional()?
        .is_some();
    let dictionaries = if has_table { Dictionaries::load(c)? } else { Dictionaries::default() };
    register(c, Arc::new(dictionaries))
}

/// Compresses chunk texts as the store keeps them, wherever a file is chunked: the writer is
/// the one thread every chunk goes through (compressing there took /usr/include's writer from
/// 8.1 to 10.2 s).
#[derive(Clone, Default)]
pub(crate) struct Packer(Option<Arc<Writing>>);

impl Packer {
    /// Compresses with the newest of `dictionaries`.
    pub(super) fn of(dictionaries: &Dictionaries) -> Packer {
        Packer(dictionaries.current())
    }
}

impl Packer {
    /// `text` compressed as it is to be stored, or `None` to store it as it is: a long text
    /// on its own, a short one with the dictionary when there is one and it gains.
    pub(crate) fn pack(&self, text: &str) -> Option<Vec<u8>> {
        if text.len() > PLAIN_MAX {
            // Never expected to fail; the text as it is reads back the same.
            return COMPRESSOR
                .with_borrow_mut(|z| {
                    if z.is_none() {
                        *z = zstd::bulk::Compressor::new(LEVEL).ok();
                    }
                    z.as_mut().and_then(|z| z.compress(text.as_bytes()).ok())
                })
                .map(fitted);
        }
        let d = self.0.as_ref().filter(|_| text.len() >= PACKED_MIN)?;
        CCTX.with_borrow_mut(|z| {
            let z = z.get_or_insert_with(zstd::zstd_safe::CCtx::create);
            let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(text.len()));
            z.compress_using_cdict(&mut out, text.as_bytes(), &d.0).ok().map(|_| out)
        })
        .filter(|b| b.len() < text.len())
        .map(fitted)
    }
}

/// `b` without the room compressing it reserved (its bound, about the text's size).
fn fitted(mut b: Vec<u8>) -> Vec<u8> {
    b.shrink_to_fit();
    b
}

/// A file's chunk texts as stored, compressed where the file was chunked: one buffer, each
/// chunk's bytes a span of it. A file waits with them for the writer, up to a thousand files
/// at a time: a buffer each for a file's hundreds of chunks (a header's `#define`s) took
/// /usr/include's index from a peak of 137 MB to 160.
#[derive(Debug, Clone, Default)]
pub(crate) struct Packed {
    bytes: Vec<u8>,
    /// Per chunk, its span of `bytes`, or `None`: stored as it is.
    spans: Vec<Option<(u32, u32)>>,
}

impl Packed {
    /// The `k`th chunk's stored bytes: `Some(None)` when it is stored as it is, `None` when
    /// the file has no such chunk.
    fn get(&self, k: usize) -> Option<Option<&[u8]>> {
        self.spans.get(k).map(|s| s.map(|(a, b)| &self.bytes[a as usize..b as usize]))
    }
}

impl Packer {
    /// Each of a file's chunk `texts` as [`Self::pack`] stores it.
    pub(crate) fn pack_file<'t>(&self, texts: impl Iterator<Item = &'t str>) -> Packed {
        let mut packed = Packed::default();
        for text in texts {
            let span = self.pack(text).and_then(|b| {
                let start = u32::try_from(packed.bytes.len()).ok()?;
                packed.bytes.extend_from_slice(&b);
                Some((start, u32::try_from(packed.bytes.len()).ok()?))
            });
            packed.spans.push(span);
        }
        packed.bytes.shrink_to_fit();
        packed
    }
}

/// The value stored for the `k`th chunk's `text` of a file: as `packed` holds it if the file
/// was compressed where it was chunked, else as `packer` compresses it.
pub(super) fn stored<'t>(text: &'t str, k: usize, packed: Option<&'t Packed>, packer: &Packer) -> ToSqlOutput<'t> {
    match packed.and_then(|p| p.get(k)) {
        Some(Some(b)) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        Some(None) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
        None => match packer.pack(text) {
            Some(b) => ToSqlOutput::Owned(Value::Blob(b)),
            None => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
        },
    }
}

/// The text in column `idx` of `row`, selected as `booger_text(…)`.
pub(super) fn read<'r>(row: &'r rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<&'r str> {
    match row.get_ref(idx)? {
        ValueRef::Text(t) => std::str::from_utf8(t).map_err(|e| rusqlite::Error::Utf8Error(idx, e)),
        ValueRef::Null => Ok(""),
        other => Err(rusqlite::Error::InvalidColumnType(idx, "content".to_owned(), other.data_type())),
    }
}

/// The stored text in column `idx` of `row` (selected as it is stored), decoded with the
/// store's `dictionaries`: grep's scan reads thousands of chunks a call, and `booger_text`
/// copied each once more (a grep of every header guard 54 -> 68 ms).
pub(super) fn decoded<'r>(
    row: &'r rusqlite::Row<'_>,
    idx: usize,
    dictionaries: &Dictionaries,
) -> rusqlite::Result<std::borrow::Cow<'r, str>> {
    match row.get_ref(idx)? {
        ValueRef::Blob(b) => unpack(b, dictionaries)
            .map(std::borrow::Cow::Owned)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Blob, e)),
        _ => read(row, idx).map(std::borrow::Cow::Borrowed),
    }
}

fn unpack(b: &[u8], dictionaries: &Dictionaries) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let size = match zstd::zstd_safe::get_frame_content_size(b) {
        Ok(Some(n)) if n <= MAX_TEXT => n as usize,
        _ => return Err("not a compressed text of a known size within bounds".into()),
    };
    let bytes = match zstd::zstd_safe::get_dict_id_from_frame(b) {
        None => DECOMPRESSOR.with_borrow_mut(|z| {
            if z.is_none() {
                *z = Some(zstd::bulk::Decompressor::new()?);
            }
            z.as_mut().expect("made above").decompress(b, size)
        })?,
        Some(id) => {
            let d = dictionaries.find(id.get()).ok_or("compressed with a dictionary this index does not hold")?;
            DCTX.with_borrow_mut(|z| {
                let z = z.get_or_insert_with(zstd::zstd_safe::DCtx::create);
                let mut out = Vec::with_capacity(size);
                z.decompress_using_ddict(&mut out, b, &d.decompress).map(|_| out)
            })
            .map_err(|code| zstd::zstd_safe::get_error_name(code).to_owned())?
        }
    };
    Ok(String::from_utf8(bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_text(dictionaries: Arc<Dictionaries>) -> Connection {
        let c = Connection::open_in_memory().unwrap();
        register(&c, dictionaries).unwrap();
        c.execute_batch("CREATE TABLE t (content TEXT NOT NULL)").unwrap();
        c
    }

    fn round_trip(c: &Connection, text: &str, packer: &Packer) -> (String, &'static str) {
        c.execute("DELETE FROM t", []).unwrap();
        c.execute("INSERT INTO t VALUES (?1)", [stored(text, 0, None, packer)]).unwrap();
        let file = packer.pack_file([text].into_iter());
        let value = |o: ToSqlOutput<'_>| match o {
            ToSqlOutput::Borrowed(ValueRef::Text(t)) => Value::Text(String::from_utf8_lossy(t).into_owned()),
            ToSqlOutput::Borrowed(ValueRef::Blob(b)) => Value::Blob(b.to_vec()),
            ToSqlOutput::Owned(v) => v,
            _ => unreachable!("a text or a blob"),
        };
        assert_eq!(
            value(stored(text, 0, Some(&file), packer)),
            value(stored(text, 0, None, packer)),
            "a file's the same"
        );
        let kind = c.query_row("SELECT typeof(content) FROM t", [], |r| r.get::<_, String>(0)).unwrap();
        let back = c.query_row("SELECT booger_text(content) FROM t", [], |r| read(r, 0).map(str::to_owned)).unwrap();
        (back, if kind == "blob" { "blob" } else { "text" })
    }

    use crate::store::dictionaries::tests::lines;

    /// Short texts stay text until there is a dictionary, then are stored compressed with it;
    /// long ones are compressed on their own; all read back the same.
    #[test]
    fn texts_read_back_as_written() {
        let c = with_text(Arc::default());
        let short = "#define SOME_LIMIT_7 (BASE_VALUE + 7) /* the 7th limit */";
        let long = "fn ünïcode() { let x = 1; }\n".repeat(200);
        let none = Packer::default();
        assert_eq!(round_trip(&c, short, &none), (short.to_owned(), "text"));
        assert_eq!(round_trip(&c, &long, &none), (long.clone(), "blob"));

        let (dictionaries, writing) = Dictionaries::trained_from(&lines(2000));
        let d = Packer(Some(writing));
        let c = with_text(Arc::new(dictionaries));
        assert_eq!(round_trip(&c, short, &d), (short.to_owned(), "blob"));
        assert_eq!(round_trip(&c, "x = 1", &d), ("x = 1".to_owned(), "text"), "too short to gain");
        assert_eq!(round_trip(&c, &long, &d), (long, "blob"));
        let packed = d.pack(short).expect("compressed");
        assert!(packed.len() * 2 < short.len(), "{} bytes", packed.len());

        // Another index's connection, without that dictionary, refuses the text.
        let other = with_text(Arc::default());
        other.execute("INSERT INTO t VALUES (?1)", [packed]).unwrap();
        assert!(other.query_row("SELECT booger_text(content) FROM t", [], |r| r.get::<_, String>(0)).is_err());
    }

    /// Once an index holds enough chunks it trains a dictionary, and the chunks written after
    /// are stored compressed with it; every chunk reads back as the chunker made it, through
    /// the readers and the writer, and after the store is opened again.
    #[test]
    fn an_index_compresses_short_texts_with_its_own_dictionary() {
        use crate::engine::index::{Options, Progress, run};
        let header = |i: usize| -> String {
            (0..40).map(|j| format!("#define LIMIT_{i}_{j} (BASE_{i} + {j}) /* limit {j} of table {i} */\n")).collect()
        };
        let mut files: Vec<(String, String)> = (0..20).map(|i| (format!("t{i}.h"), header(i))).collect();
        let (first, second) = files.split_at(10);
        let list: Vec<(&str, &str)> = first.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let (_dir, root, index) = crate::store::testing::project(&list);
        let store = crate::store::Store::open(&index, &root).unwrap();
        run(&root, &store, Options::default(), &Progress::default()).unwrap();
        // 400 chunks are past the first dictionary's 256: it is trained off the writer,
        // stored by the next write and taken by the writes after it.
        let start = std::time::Instant::now();
        while !store.texts.has_trained() {
            assert!(start.elapsed().as_secs() < 20, "a dictionary is trained");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let (stored, taken) = second.split_at(2);
        for (path, text) in stored {
            std::fs::write(root.join(path), text).unwrap();
        }
        run(&root, &store, Options::default(), &Progress::default()).unwrap();
        assert!(store.texts.current().is_some());
        for (path, text) in taken {
            std::fs::write(root.join(path), text).unwrap();
        }
        run(&root, &store, Options::default(), &Progress::default()).unwrap();
        let packed: i64 = store
            .read(|c| c.query_row("SELECT count(*) FROM chunks WHERE typeof(content) = 'blob'", [], |r| r.get(0)))
            .unwrap();
        assert!(packed >= 320, "the third run's chunks are compressed: {packed}");
        let read_back = |store: &crate::store::Store, files: &[(String, String)]| {
            for (path, text) in files {
                let made: Vec<String> =
                    crate::source::chunk::chunk_file(std::path::Path::new(path), text.as_bytes(), false)
                        .chunks
                        .into_iter()
                        .map(|c| c.content)
                        .collect();
                let stored: Vec<String> = store
                    .read(|c| {
                        let mut s = c.prepare(
                            "SELECT booger_text(c.content) FROM chunks c JOIN files f ON f.id = c.file_id
                             WHERE f.path = ?1 ORDER BY c.start_byte",
                        )?;
                        let rows = s.query_map([path], |r| read(r, 0).map(str::to_owned))?;
                        rows.collect()
                    })
                    .unwrap();
                assert_eq!(stored, made, "{path}");
            }
        };
        read_back(&store, &files);
        drop(store);
        let store = crate::store::Store::open(&index, &root).unwrap();
        read_back(&store, &files);
        // The writer reads them too: a rewrite keeps its unchanged chunks by their text.
        files[15].1 = format!("#define ONE_MORE 1\n{}", header(15));
        std::fs::write(root.join("t15.h"), &files[15].1).unwrap();
        run(&root, &store, Options::default(), &Progress::default()).unwrap();
        read_back(&store, &files);

        // A copy offered to the team reads on its own, with the dictionaries it holds.
        #[cfg(feature = "team")]
        {
            let copy = root.parent().unwrap().join("offered.db");
            store.copy_into(&copy, &Arc::new(std::sync::atomic::AtomicBool::new(false))).unwrap();
            crate::store::prebuilt::check_received(&copy).unwrap();
            let mut seen = 0;
            crate::store::prebuilt::files_with_chunks(&copy, 0..i64::MAX, |path, _, chunks| {
                let text = &files.iter().find(|(p, _)| *p == path).unwrap().1;
                let made = crate::source::chunk::chunk_file(std::path::Path::new(&path), text.as_bytes(), false).chunks;
                // In the order the copy holds them: a rewrite's kept chunks keep their ids.
                let contents = |c: &[crate::source::chunk::Chunk]| {
                    let mut all: Vec<String> = c.iter().map(|c| c.content.clone()).collect();
                    all.sort();
                    all
                };
                assert_eq!(contents(&chunks), contents(&made), "{path}");
                seen += 1;
                true
            })
            .unwrap();
            assert_eq!(seen, files.len());
        }
    }

    /// A blob that is not a compressed text of a bounded size is an error, not a panic or a
    /// huge allocation.
    #[test]
    fn a_damaged_or_oversized_blob_is_refused() {
        let none = Dictionaries::default();
        assert!(unpack(b"not zstd at all", &none).is_err());
        let bomb = zstd::bulk::compress(&vec![b'a'; (MAX_TEXT + 1) as usize], 1).unwrap();
        assert!(unpack(&bomb, &none).is_err());
        let mut cut = zstd::bulk::compress("some text ".repeat(500).as_bytes(), 1).unwrap();
        cut.truncate(cut.len() / 2);
        assert!(unpack(&cut, &none).is_err());
    }
}
