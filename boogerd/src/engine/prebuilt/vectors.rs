//! A prebuilt index's vectors, stored apart from it: a clone's index is complete without them
//! (as a from-scratch index is before its embedding), and they follow on the embedding thread
//! instead of being written before the clone's first run.
//!
//! They travel as a stream of records, little-endian: `M` (u16 length, model) and `F` (u16
//! length, path; u8 length, content hash) set the model and file of the `V` records after
//! them (chunk id, start byte, end byte: i64 each; u32 length, vector). A record read here
//! is checked before it is used: a vector is saved only onto the chunk it was made from (see
//! [`ChunkVector`]), only for a model this booger embeds with, only of that model's size.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use super::PrebuiltError;
use super::parts::Unpacked;
use crate::store::team::{Piece, TeamStore};
use crate::store::vectors::ChunkVector;
use crate::store::{Store, prebuilt::vectors_in};

/// What the stream starts with: a format another booger would not misread.
const MAGIC: &[u8] = b"booger-vectors 1\n";
/// Vectors saved per transaction (the writer is shared with the live index).
const BATCH: usize = 2_000;
/// The largest vector taken (a model's dimensions and its scale: far below).
const MOST_BYTES: usize = 1 << 16;

/// Writes the vectors of the index file `file` to `out` as records; how many.
pub(crate) fn write_vectors(file: &Path, out: &mut dyn Write) -> Result<usize, PrebuiltError> {
    // Records are a few bytes a field: gathered before the compressor sees them.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    out.write_all(MAGIC)?;
    let (mut model, mut path, mut count) = (String::new(), String::new(), 0);
    let mut failed = None;
    vectors_in(file, |v| {
        let mut write = || -> std::io::Result<()> {
            if v.model != model {
                out.write_all(b"M")?;
                short(&mut out, v.model.as_bytes())?;
                model = v.model.clone();
            }
            if v.path != path {
                out.write_all(b"F")?;
                short(&mut out, v.path.as_bytes())?;
                out.write_all(&[v.content_hash.len().min(255) as u8])?;
                out.write_all(&v.content_hash.as_bytes()[..v.content_hash.len().min(255)])?;
                path = v.path.clone();
            }
            out.write_all(b"V")?;
            for n in [v.chunk_id, v.start_byte, v.end_byte] {
                out.write_all(&n.to_le_bytes())?;
            }
            out.write_all(&(v.vector.len() as u32).to_le_bytes())?;
            out.write_all(&v.vector)
        };
        match write() {
            Ok(()) => {
                count += 1;
                true
            }
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    })?;
    match failed {
        Some(e) => Err(e.into()),
        None => {
            out.flush()?;
            Ok(count)
        }
    }
}

/// A string of at most 65,535 bytes (a longer path is cut: its vectors then match no chunk).
fn short(out: &mut dyn Write, s: &[u8]) -> std::io::Result<()> {
    let s = &s[..s.len().min(u16::MAX as usize)];
    out.write_all(&(s.len() as u16).to_le_bytes())?;
    out.write_all(s)
}

/// Reads the vectors of the prebuilt index of `sha` from the team index at `url` into
/// `store`, for the models `models` (id and vector size in bytes); how many were saved.
pub(crate) fn receive_vectors(
    url: &str,
    sha: &str,
    store: &Store,
    models: &HashMap<String, usize>,
) -> Result<usize, PrebuiltError> {
    let mut team = TeamStore::connect_to_read(url)?;
    let Some(stored) = team.snapshot(sha)?.and_then(|s| s.vectors) else { return Ok(0) };
    let records = Records {
        store,
        models,
        pending: Vec::new(),
        started: false,
        model: None,
        file: None,
        batch: Vec::new(),
        saved: 0,
    };
    let mut unpacked = Unpacked::new(records, stored.bytes)?;
    team.read_prebuilt(sha, Piece::Vectors, |part| unpacked.take(part))?;
    let (records, hash) = unpacked.finish()?;
    if hash != stored.hash {
        return Err(PrebuiltError::Mismatch(format!("its vectors' hash {hash}")));
    }
    records.saved()
}

/// Parses records as they are unpacked, saving the vectors in batches.
struct Records<'a> {
    store: &'a Store,
    models: &'a HashMap<String, usize>,
    /// Bytes of a record not yet complete.
    pending: Vec<u8>,
    started: bool,
    /// The current model (with its vector size) and file (path, content hash).
    model: Option<(String, usize)>,
    file: Option<(String, String)>,
    batch: Vec<ChunkVector>,
    saved: usize,
}

impl Records<'_> {
    /// Parses every complete record in `pending`; the bytes of an incomplete one stay.
    fn parse(&mut self) -> std::io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        let mut at = 0;
        if !self.started {
            if pending.len() < MAGIC.len() {
                self.pending = pending;
                return Ok(());
            }
            if &pending[..MAGIC.len()] != MAGIC {
                return Err(bad("not a vector stream this booger reads"));
            }
            self.started = true;
            at = MAGIC.len();
        }
        while let Some(used) = self.record(&pending[at..])? {
            at += used;
        }
        self.pending = pending[at..].to_vec();
        if self.batch.len() >= BATCH {
            self.save()?;
        }
        Ok(())
    }

    /// Parses the record at the start of `b`: the bytes it took, or `None` if it is not all
    /// there yet.
    fn record(&mut self, b: &[u8]) -> std::io::Result<Option<usize>> {
        let mut r = Reader { b, at: 1 };
        let Some(&kind) = b.first() else { return Ok(None) };
        match kind {
            b'M' => {
                let Some(model) = r.short()? else { return Ok(None) };
                self.model = self.models.get(&model).map(|&size| (model, size));
            }
            b'F' => {
                let Some(path) = r.short()? else { return Ok(None) };
                let Some(n) = r.take(1) else { return Ok(None) };
                let Some(hash) = r.take(n[0] as usize) else { return Ok(None) };
                self.file = Some((path, text(hash)?));
            }
            b'V' => {
                let Some(fixed) = r.take(28) else { return Ok(None) };
                let int = |i: usize| i64::from_le_bytes(fixed[i..i + 8].try_into().expect("8 bytes"));
                let len = u32::from_le_bytes(fixed[24..28].try_into().expect("4 bytes")) as usize;
                if len > MOST_BYTES {
                    return Err(bad("a vector larger than any model's"));
                }
                let Some(vector) = r.take(len) else { return Ok(None) };
                if let (Some((model, size)), Some((path, hash))) = (&self.model, &self.file)
                    && vector.len() == *size
                {
                    self.batch.push(ChunkVector {
                        chunk_id: int(0),
                        start_byte: int(8),
                        end_byte: int(16),
                        path: path.clone(),
                        content_hash: hash.clone(),
                        model: model.clone(),
                        vector: vector.to_vec(),
                    });
                }
            }
            _ => return Err(bad("an unknown record")),
        }
        Ok(Some(r.at))
    }

    fn save(&mut self) -> std::io::Result<()> {
        let batch = std::mem::take(&mut self.batch);
        self.saved += self.store.save_chunk_vectors(&batch).map_err(std::io::Error::other)?;
        Ok(())
    }

    fn saved(mut self) -> Result<usize, PrebuiltError> {
        if !self.pending.is_empty() || !self.started {
            return Err(PrebuiltError::Mismatch("its vectors end in the middle of a record".to_owned()));
        }
        self.save()?;
        Ok(self.saved)
    }
}

impl Write for Records<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        self.parse()?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reads fields from the start of a record.
struct Reader<'b> {
    b: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        let out = self.b.get(self.at..self.at + n)?;
        self.at += n;
        Some(out)
    }

    fn short(&mut self) -> std::io::Result<Option<String>> {
        let Some(n) = self.take(2) else { return Ok(None) };
        let Some(s) = self.take(u16::from_le_bytes([n[0], n[1]]) as usize) else { return Ok(None) };
        text(s).map(Some)
    }
}

fn text(b: &[u8]) -> std::io::Result<String> {
    String::from_utf8(b.to_vec()).map_err(|_| bad("a name that is not UTF-8"))
}

fn bad(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("the prebuilt index's vectors: {what}"))
}
