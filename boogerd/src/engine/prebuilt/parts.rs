//! A prebuilt index's pieces as compressed parts: compressed while the server stores the
//! ones before (publish), unpacked while the server sends the next (clone), each piece's
//! size and hash checked; an index file unpacked with its pages of zeros left as holes.

use std::io::Write;

use super::PrebuiltError;
use crate::store::team::{Piece, Stored, Upload};

/// Bytes per piece handed between threads: a stored part is this much compressed (1 MB
/// stored and read faster than 8, and holds less), and the sparse writer gathers this much.
const PIECE_BYTES: usize = 1 << 20;
/// zstd's level: the fastest (1.5 GB of index in under 3 s on two cores, to 40%).
const LEVEL: i32 = 1;

/// One piece as sent: as stored, and its size compressed.
pub(super) struct Sent {
    pub stored: Stored,
    pub packed: u64,
}

/// Compresses what `write` writes into parts of `piece` that `upload` stores as they come, on
/// a thread of their own (the server stores one part while the next is compressed; that
/// thread also hashes and counts them).
pub(super) fn send<'u>(
    mut upload: Upload<'u>,
    piece: Piece,
    write: impl FnOnce(&mut dyn Write) -> Result<(), PrebuiltError>,
) -> Result<(Upload<'u>, Sent), PrebuiltError> {
    let (parts, ready) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
    std::thread::scope(|s| {
        let storing = s.spawn(move || -> Result<(Upload<'u>, String, u64), PrebuiltError> {
            let (mut hasher, mut packed) = (blake3::Hasher::new(), 0);
            for part in ready {
                hasher.update(&part);
                packed += part.len() as u64;
                upload.part(piece, &part)?;
            }
            Ok((upload, hasher.finalize().to_hex().to_string(), packed))
        });
        let mut raw = 0;
        let compressed = (|| -> Result<(), PrebuiltError> {
            let mut out = Handoff::new(parts, "storing the prebuilt index stopped");
            let mut encoder = zstd::stream::write::Encoder::new(&mut out, LEVEL)?;
            encoder.multithread(crate::base::threads::cores().min(4) as u32)?;
            let mut counted = Counted { inner: &mut encoder, bytes: 0 };
            write(&mut counted)?;
            raw = counted.bytes;
            encoder.finish()?;
            Ok(out.flush()?) // (and dropped: the storing thread ends once it has the last part)
        })();
        let (upload, hash, packed) = storing.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        compressed?; // (a failure to store shows first: it is why compressing stopped)
        Ok((upload, Sent { stored: Stored { bytes: raw, hash }, packed }))
    })
}

/// A writer that counts what passes through it.
struct Counted<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Compressed parts unpacked into `W` as they come, exactly as many bytes as stored, and
/// the parts' hash.
pub(super) struct Unpacked<W: Write> {
    decoder: zstd::stream::write::Decoder<'static, Capped<W>>,
    hasher: blake3::Hasher,
}

impl<W: Write> Unpacked<W> {
    pub(super) fn new(into: W, bytes: u64) -> std::io::Result<Self> {
        Ok(Self {
            decoder: zstd::stream::write::Decoder::new(Capped { inner: into, left: bytes })?,
            hasher: blake3::Hasher::new(),
        })
    }

    pub(super) fn take(&mut self, part: &[u8]) -> Result<(), PrebuiltError> {
        self.hasher.update(part);
        Ok(self.decoder.write_all(part)?)
    }

    /// The writer, and the parts' hash; an error if fewer bytes came than stored.
    pub(super) fn finish(mut self) -> Result<(W, String), PrebuiltError> {
        self.decoder.flush()?;
        let mut capped = self.decoder.into_inner();
        capped.inner.flush()?;
        if capped.left > 0 {
            return Err(PrebuiltError::Mismatch(format!("{} bytes short", capped.left)));
        }
        Ok((capped.inner, self.hasher.finalize().to_hex().to_string()))
    }
}

/// A writer that takes at most `left` bytes: what a stored size says, and not a byte more.
struct Capped<W> {
    inner: W,
    left: u64,
}

impl<W: Write> Write for Capped<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() as u64 > self.left {
            return Err(std::io::Error::other("the prebuilt index unpacks larger than its stored size"));
        }
        self.left -= buf.len() as u64;
        self.inner.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Bytes handed to another thread in pieces of [`PIECE_BYTES`] as they are written (a
/// part to store, unpacked bytes to write); a flush hands over the rest.
pub(super) struct Handoff {
    pending: Vec<u8>,
    to: std::sync::mpsc::SyncSender<Vec<u8>>,
    /// What a write says when the other thread has stopped taking.
    stopped: &'static str,
}

impl Handoff {
    pub(super) fn new(to: std::sync::mpsc::SyncSender<Vec<u8>>, stopped: &'static str) -> Self {
        Self { pending: Vec::with_capacity(PIECE_BYTES), to, stopped }
    }
}

impl Write for Handoff {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if self.pending.len() >= PIECE_BYTES {
            self.flush()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let piece = std::mem::replace(&mut self.pending, Vec::with_capacity(PIECE_BYTES));
        self.to.send(piece).map_err(|_| std::io::Error::other(self.stopped))
    }
}

/// Bytes per page looked at for zeros (SQLite's page size here).
const PAGE: usize = 4096;

/// A file written from its start in which pages of zeros are left as holes: they cost no
/// write (a prebuilt index's emptied vector pages are such pages).
pub(super) struct Sparse {
    file: std::fs::File,
    buf: Vec<u8>,
    /// Where `buf` starts in the file.
    at: u64,
}

impl Sparse {
    pub(super) fn new(file: std::fs::File) -> Self {
        Self { file, buf: Vec::with_capacity(PIECE_BYTES), at: 0 }
    }

    /// Writes the whole pages gathered (and, with `all`, the rest), skipping pages of zeros.
    fn spill(&mut self, all: bool) -> std::io::Result<()> {
        use crate::base::storage::write_all_at;
        let whole = if all { self.buf.len() } else { self.buf.len() / PAGE * PAGE };
        let mut run: Option<usize> = None; // where the non-zero pages being gathered start
        for start in (0..whole).step_by(PAGE) {
            let page = &self.buf[start..(start + PAGE).min(whole)];
            let zero = page.chunks(8).all(|w| w.iter().fold(0, |any, &b| any | b) == 0);
            match (zero, run) {
                (true, Some(from)) => {
                    write_all_at(&self.file, &self.buf[from..start], self.at + from as u64)?;
                    run = None;
                }
                (false, None) => run = Some(start),
                _ => {}
            }
        }
        if let Some(from) = run {
            write_all_at(&self.file, &self.buf[from..whole], self.at + from as u64)?;
        }
        self.at += whole as u64;
        self.buf.drain(..whole);
        Ok(())
    }

    /// Writes the rest and gives the file its full length (a hole at its end included).
    pub(super) fn finish(mut self) -> std::io::Result<()> {
        self.spill(true)?;
        self.file.set_len(self.at)
    }
}

impl Write for Sparse {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(buf);
        if self.buf.len() >= PIECE_BYTES {
            self.spill(false)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::{PAGE, PIECE_BYTES, Sparse};

    /// What a sparse write leaves reads back byte for byte, whatever the pieces it came in:
    /// pages of zeros at the start, between others, across a buffer's end and at the end.
    #[test]
    fn a_sparse_file_reads_back_as_written() {
        let mut want = vec![0u8; 3 * PAGE];
        want.extend((0..PAGE + 17).map(|i| (i % 251) as u8 + 1));
        want.extend(vec![0u8; PIECE_BYTES + 5 * PAGE]);
        want.extend([7u8; 100]);
        want.extend(vec![0u8; 2 * PAGE + 3]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut sparse = Sparse::new(std::fs::File::create(&path).unwrap());
        for piece in want.chunks(PAGE / 3 + 1) {
            sparse.write_all(piece).unwrap();
        }
        sparse.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), want);
    }
}
