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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rusqlite::functions::FunctionFlags;
use rusqlite::types::{ToSqlOutput, Type, Value, ValueRef};
use rusqlite::{Connection, OptionalExtension};

use crate::base::sync::Recover;

/// The longest text compressed with a dictionary (longer, on its own).
pub(super) const PLAIN_MAX: usize = 1000;
/// Shorter texts stay as they are: a frame's header and the dictionary's number cost about
/// what a dictionary saves on them.
const PACKED_MIN: usize = 24;
/// Fast, and most of what higher levels give on long code.
const LEVEL: i32 = 1;
/// A short text with a dictionary: on /usr/include's short texts 0.53 of their size against
/// level 1's 0.57.
const DICTIONARY_LEVEL: i32 = 3;
/// The most a stored text may claim to hold (a chunk is at most a file's fixed-size block
/// or one definition).
const MAX_TEXT: u64 = 64 << 20;

thread_local! {
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
    static CCTX: RefCell<Option<zstd::zstd_safe::CCtx<'static>>> = const { RefCell::new(None) };
    static DCTX: RefCell<Option<zstd::zstd_safe::DCtx<'static>>> = const { RefCell::new(None) };
}

/// One trained dictionary, for reading.
struct Dictionary {
    id: u32,
    /// How many chunks the index held when it was trained.
    chunks: u64,
    decompress: zstd::zstd_safe::DDict<'static>,
}

impl Dictionary {
    /// A stored dictionary, refused unless it is one, numbered `id` in its own header.
    fn new(id: u32, chunks: u64, bytes: &[u8]) -> Option<Dictionary> {
        if zstd::zstd_safe::get_dict_id(bytes).map(u32::from) != Some(id) {
            return None;
        }
        Some(Dictionary { id, chunks, decompress: zstd::zstd_safe::DDict::try_create(bytes)? })
    }
}

/// The dictionary new texts are written with, prepared for compressing (its tables take most
/// of a megabyte: only the newest dictionary has them).
pub(super) struct Writing(zstd::zstd_safe::CDict<'static>);

impl Writing {
    fn new(bytes: &[u8]) -> Option<Writing> {
        zstd::zstd_safe::CDict::try_create(bytes, DICTIONARY_LEVEL).map(Writing)
    }
}

/// A store's dictionaries: all it was written with, the last the one new texts take.
#[derive(Default)]
pub(super) struct Dictionaries {
    known: RwLock<Vec<Arc<Dictionary>>>,
    writing: RwLock<Option<Arc<Writing>>>,
    /// A dictionary trained since the last write, not stored yet.
    trained: Mutex<Option<Trained>>,
    training: AtomicBool,
}

/// Dictionaries are numbered from here (zstd keeps the numbers below for registered ones).
const FIRST_ID: u32 = 1 << 15;
/// A store trains its first dictionary once it holds this many chunks, then again each time
/// the count doubles ([`MAX_DICTIONARIES`] at most): a first index meets its tree in walk
/// order, and a dictionary of its first folders fits the rest less well (/usr/include: 73% of
/// the size from its first 5,000 chunks, 49% from a sample of all of them).
const TRAIN_AT: u64 = if cfg!(test) { 256 } else { 16_384 };
const MAX_DICTIONARIES: usize = 6;
/// What a dictionary is trained from: this many short texts drawn at random, into this many
/// bytes (64 KB did as well as 110 on /usr/include and the cargo registry).
const SAMPLES: u64 = 8_000;
const DICTIONARY_BYTES: usize = 64 << 10;

impl Dictionaries {
    /// The dictionaries stored in `c`'s index, oldest first. One that is not a dictionary of
    /// its number (a damaged or hostile index) is left out: its texts fail to read.
    pub(super) fn load(c: &Connection) -> rusqlite::Result<Dictionaries> {
        // Bounded: a received index is untrusted, and ours are six of 64 KB.
        let mut stmt =
            c.prepare("SELECT id, chunks, dict FROM text_dicts WHERE length(dict) <= 4 * ?1 ORDER BY id LIMIT 4 * ?2")?;
        let rows = stmt.query_map([DICTIONARY_BYTES as i64, MAX_DICTIONARIES as i64], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, Vec<u8>>(2)?))
        })?;
        let (mut known, mut newest) = (Vec::new(), None);
        for row in rows {
            let (id, chunks, bytes) = row?;
            match u32::try_from(id).ok().and_then(|id| Dictionary::new(id, chunks.max(0) as u64, &bytes)) {
                Some(d) => {
                    known.push(Arc::new(d));
                    newest = Some(bytes);
                }
                None => tracing::warn!(id, "a stored text dictionary is not one; its texts will not read"),
            }
        }
        let writing = newest.as_deref().and_then(Writing::new).map(Arc::new);
        Ok(Dictionaries { known: RwLock::new(known), writing: RwLock::new(writing), ..Default::default() })
    }

    /// The dictionary new texts are compressed with.
    pub(super) fn current(&self) -> Option<Arc<Writing>> {
        self.writing.read().recover().clone()
    }

    fn find(&self, id: u32) -> Option<Arc<Dictionary>> {
        self.known.read().recover().iter().find(|d| d.id == id).cloned()
    }

    /// Starts training a dictionary, on a thread of its own, when the index has grown enough
    /// since the last ([`TRAIN_AT`]): from a random sample of its short texts, read through
    /// `readers`. The next write stores it ([`Self::take_trained`]). Sampling and training take
    /// a few tenths of a second; on the writer they added a tenth to /usr/include's.
    pub(super) fn train_if_due(self: &Arc<Self>, writer: &Connection, readers: &Readers) -> rusqlite::Result<()> {
        // One at a time: trained and not yet stored counts as training.
        if self.known.read().recover().len() >= MAX_DICTIONARIES
            || self.training.load(Ordering::SeqCst)
            || self.trained.lock().recover().is_some()
        {
            return Ok(());
        }
        // Chunk ids only grow: the largest is how many chunks the index has held (counting
        // them would read every row).
        let chunks =
            writer.query_row("SELECT coalesce(max(id), 0) FROM chunks", [], |r| r.get::<_, i64>(0))?.max(0) as u64;
        let (due, id) = {
            let known = self.known.read().recover();
            let last = known.last();
            let due = chunks >= last.map_or(TRAIN_AT, |d| 2 * d.chunks.max(TRAIN_AT));
            (due, last.map_or(FIRST_ID, |d| d.id + 1))
        };
        if !due || self.training.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let (me, readers) = (self.clone(), readers.clone());
        let started = std::thread::Builder::new().name("booger-dictionary".to_owned()).spawn(move || {
            match sample(&readers, chunks) {
                Ok(samples) => {
                    if let Some(bytes) = train(&samples, id) {
                        tracing::debug!(id, chunks, samples = samples.len(), "trained a text dictionary");
                        *me.trained.lock().recover() = Some(Trained { id, chunks, bytes });
                    }
                }
                Err(e) => tracing::warn!(error = %e, "no text dictionary: its samples could not be read"),
            }
            me.training.store(false, Ordering::SeqCst);
        });
        if started.is_err() {
            self.training.store(false, Ordering::SeqCst);
        }
        Ok(())
    }

    /// A dictionary trained since the last write, to store in the writer's transaction `tx`
    /// (then [`Self::install`] once it commits: no text is compressed with a dictionary the
    /// index does not hold).
    pub(super) fn take_trained(&self, tx: &Connection) -> rusqlite::Result<Option<Trained>> {
        let Some(t) = self.trained.lock().recover().take() else { return Ok(None) };
        if self.find(t.id).is_some() {
            return Ok(None); // trained twice over (it finished while a write took the first)
        }
        tx.execute(
            "INSERT INTO text_dicts(id, chunks, dict) VALUES (?1, ?2, ?3)",
            rusqlite::params![t.id, t.chunks as i64, t.bytes],
        )?;
        Ok(Some(t))
    }

    /// Makes a stored dictionary the one new texts take.
    pub(super) fn install(&self, t: Trained) {
        if let (Some(d), Some(w)) = (Dictionary::new(t.id, t.chunks, &t.bytes), Writing::new(&t.bytes)) {
            self.known.write().recover().push(Arc::new(d));
            *self.writing.write().recover() = Some(Arc::new(w));
        }
    }
}

/// A dictionary trained off the writer, waiting to be stored.
pub(super) struct Trained {
    id: u32,
    chunks: u64,
    bytes: Vec<u8>,
}

/// The store's readers.
pub(super) type Readers = r2d2::Pool<r2d2_sqlite::SqliteConnectionManager>;

/// About [`SAMPLES`] short texts of an index whose chunk ids run to `chunks`, drawn at random
/// by id: a lookup each, where a scan for them read the whole table every time.
fn sample(readers: &Readers, chunks: u64) -> Result<Vec<String>, Box<dyn std::error::Error + Send + Sync>> {
    let c = readers.get()?;
    let mut stmt = c.prepare("SELECT booger_text(content) FROM chunks WHERE id = ?1")?;
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
    let mut rng = crate::base::rng::Rng::new(seed);
    let mut ids: Vec<i64> = (0..SAMPLES.min(chunks)).map(|_| 1 + rng.below(chunks as usize) as i64).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(text) = stmt.query_row([id], |r| r.get::<_, String>(0)).optional()?
            && (PACKED_MIN..=PLAIN_MAX).contains(&text.len())
        {
            out.push(text);
        }
    }
    Ok(out)
}

/// A dictionary of `samples` numbered `id`, or none (too few samples to learn from).
fn train(samples: &[String], id: u32) -> Option<Vec<u8>> {
    if samples.len() < 64 {
        return None;
    }
    let mut bytes = zstd::dict::from_samples(samples, DICTIONARY_BYTES).ok()?;
    // A trained dictionary starts with its magic number, then its number (little-endian).
    if bytes.len() < 8 || bytes[..4] != 0xEC30_A437u32.to_le_bytes() {
        return None;
    }
    bytes[4..8].copy_from_slice(&id.to_le_bytes());
    Some(bytes)
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

impl Dictionaries {
    pub(super) fn packer(&self) -> Packer {
        Packer(self.current())
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

    fn lines(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("#define SOME_LIMIT_{i} (BASE_VALUE + {i}) /* the {i}th limit */")).collect()
    }

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

        let bytes = train(&lines(2000), FIRST_ID).unwrap();
        let known = RwLock::new(vec![Arc::new(Dictionary::new(FIRST_ID, 0, &bytes).unwrap())]);
        let d = Packer(Some(Arc::new(Writing::new(&bytes).unwrap())));
        let c = with_text(Arc::new(Dictionaries { known, ..Default::default() }));
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
        while store.texts.trained.lock().unwrap().is_none() {
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
            store.copy_into(&copy, &Arc::new(AtomicBool::new(false))).unwrap();
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

    /// A dictionary whose header does not carry its number, or that is not one, is refused.
    #[test]
    fn a_stored_dictionary_must_be_one_of_its_number() {
        let bytes = train(&lines(2000), FIRST_ID + 3).unwrap();
        assert!(Dictionary::new(FIRST_ID + 3, 0, &bytes).is_some());
        assert!(Dictionary::new(FIRST_ID + 4, 0, &bytes).is_none());
        assert!(Dictionary::new(FIRST_ID, 0, b"not a dictionary at all").is_none());
        assert!(train(&lines(10), FIRST_ID).is_none(), "too few samples");

        // Loaded from an index: a wrong or oversized one is left out, the rest kept.
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE text_dicts (id INTEGER PRIMARY KEY, chunks INTEGER NOT NULL, dict BLOB NOT NULL)",
        )
        .unwrap();
        let insert = "INSERT INTO text_dicts VALUES (?1, 0, ?2)";
        c.execute(insert, rusqlite::params![FIRST_ID + 3, bytes]).unwrap();
        c.execute(insert, rusqlite::params![FIRST_ID + 5, bytes]).unwrap();
        c.execute(insert, rusqlite::params![FIRST_ID + 6, vec![0u8; 8 * DICTIONARY_BYTES]]).unwrap();
        let loaded = Dictionaries::load(&c).unwrap();
        let ids: Vec<u32> = loaded.known.read().unwrap().iter().map(|d| d.id).collect();
        assert_eq!(ids, [FIRST_ID + 3]);
        assert!(loaded.current().is_some());
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
