//! A store's zstd dictionaries for its short texts ([`PACKED_MIN`] to [`PLAIN_MAX`] bytes):
//! trained off the writer from a random sample of the index's own chunks as it grows, stored
//! in `text_dicts` by the write after, and loaded (each checked to be the dictionary its
//! number says) when the store opens. `text.rs` compresses and reads texts with them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rusqlite::{Connection, OptionalExtension};

use crate::base::sync::Recover;

/// The longest text compressed with a dictionary (longer, on its own).
pub(super) const PLAIN_MAX: usize = 1000;
/// Shorter texts stay as they are: a frame's header and the dictionary's number cost about
/// what a dictionary saves on them.
pub(super) const PACKED_MIN: usize = 24;
/// A short text with a dictionary: on /usr/include's short texts 0.53 of their size against
/// level 1's 0.57.
const DICTIONARY_LEVEL: i32 = 3;

/// One trained dictionary, for reading.
pub(super) struct Dictionary {
    id: u32,
    /// How many chunks the index held when it was trained.
    chunks: u64,
    pub(super) decompress: zstd::zstd_safe::DDict<'static>,
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
pub(super) struct Writing(pub(super) zstd::zstd_safe::CDict<'static>);

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

    pub(super) fn find(&self, id: u32) -> Option<Arc<Dictionary>> {
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

#[cfg(test)]
impl Dictionaries {
    /// Dictionaries holding one trained from `samples`, and that one prepared for writing.
    pub(super) fn trained_from(samples: &[String]) -> (Dictionaries, Arc<Writing>) {
        let bytes = train(samples, FIRST_ID).expect("enough samples");
        let known = RwLock::new(vec![Arc::new(Dictionary::new(FIRST_ID, 0, &bytes).expect("a dictionary"))]);
        (Dictionaries { known, ..Default::default() }, Arc::new(Writing::new(&bytes).expect("a dictionary")))
    }

    /// A dictionary has been trained and waits for the next write to store it.
    pub(super) fn has_trained(&self) -> bool {
        self.trained.lock().recover().is_some()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Short texts alike, as a header's `#define`s are.
    pub(in crate::store) fn lines(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("#define SOME_LIMIT_{i} (BASE_VALUE + {i}) /* the {i}th limit */")).collect()
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
}
