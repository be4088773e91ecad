//! What a large build sets down on disk before it writes the segment, so that its memory stays
//! bounded whatever the tree's size: the per-chunk columns (written in document order, read
//! once, in order, when the segment is written) and the postings' sorted runs.
//!
//! Both go to unnamed files in the index's own directory (`O_TMPFILE` where the OS has it):
//! nothing is left behind by a crash, and nothing lands in a `/tmp` that may itself be memory.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::path::Path;

/// Bytes a column holds in memory before it moves to a file: a small project's build never
/// touches the disk.
const IN_MEMORY: usize = if cfg!(test) { 64 << 10 } else { 1 << 20 };
const BUFFER: usize = 64 << 10;

/// An unnamed file in `dir`, gone when closed.
pub(super) fn scratch_file(dir: &Path) -> io::Result<File> {
    tempfile::tempfile_in(dir)
}

/// Bytes appended in order and read back once: in memory up to [`IN_MEMORY`], then (given
/// a directory) in a scratch file.
#[derive(Default)]
pub(super) struct Column {
    memory: Vec<u8>,
    file: Option<BufWriter<File>>,
}

impl Column {
    pub(super) fn put(&mut self, bytes: &[u8], dir: Option<&Path>) -> io::Result<()> {
        if let Some(file) = &mut self.file {
            return file.write_all(bytes);
        }
        self.memory.extend_from_slice(bytes);
        if let Some(dir) = dir
            && self.memory.len() >= IN_MEMORY
        {
            let mut file = BufWriter::with_capacity(BUFFER, scratch_file(dir)?);
            file.write_all(&self.memory)?;
            self.memory = Vec::new();
            self.file = Some(file);
        }
        Ok(())
    }

    pub(super) fn reserve(&mut self, bytes: usize) {
        if self.file.is_none() {
            self.memory.reserve_exact(bytes.min(IN_MEMORY));
        }
    }

    /// Every byte put, in order, lent to `put` a piece at a time.
    pub(super) fn read_back(&mut self, mut put: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let Some(file) = self.file.take() else { return put(&self.memory) };
        let mut file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.rewind()?;
        let mut buf = vec![0u8; BUFFER];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            put(&buf[..n])?;
        }
    }
}

/// One spilled run of postings, read in the order it was written: per term present, its id,
/// its bytes' length and the bytes (terms in the segment's order, so that the runs are
/// merged by reading each once, front to back).
pub(super) struct Run {
    reader: BufReader<File>,
    next: Option<(u32, u32)>,
}

impl Run {
    /// Writes `terms` (in the segment's order), each with its bytes as `pieces` gives them.
    pub(super) fn write<'a, P>(dir: &Path, terms: &[u32], pieces: impl Fn(u32) -> (u32, P)) -> io::Result<File>
    where
        P: Iterator<Item = &'a [u8]>,
    {
        let mut w = BufWriter::with_capacity(BUFFER, scratch_file(dir)?);
        for &t in terms {
            let (len, bytes) = pieces(t);
            w.write_all(&t.to_le_bytes())?;
            w.write_all(&len.to_le_bytes())?;
            for piece in bytes {
                w.write_all(piece)?;
            }
        }
        w.into_inner().map_err(io::IntoInnerError::into_error)
    }

    pub(super) fn open(mut file: File) -> io::Result<Run> {
        file.rewind()?;
        let mut run = Run { reader: BufReader::with_capacity(BUFFER, file), next: None };
        run.advance()?;
        Ok(run)
    }

    fn advance(&mut self) -> io::Result<()> {
        let mut head = [0u8; 8];
        self.next = match self.reader.read_exact(&mut head) {
            Ok(()) => Some((
                u32::from_le_bytes(head[..4].try_into().expect("4 bytes")),
                u32::from_le_bytes(head[4..].try_into().expect("4 bytes")),
            )),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => None,
            Err(e) => return Err(e),
        };
        Ok(())
    }

    /// When `term` is the run's next, lends its bytes to `put` and moves past them.
    pub(super) fn take(&mut self, term: u32, mut put: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let Some((next, len)) = self.next else { return Ok(()) };
        if next != term {
            return Ok(());
        }
        let mut left = len as usize;
        let mut buf = [0u8; 4096];
        while left > 0 {
            let n = left.min(buf.len());
            self.reader.read_exact(&mut buf[..n])?;
            put(&buf[..n])?;
            left -= n;
        }
        self.advance()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_reads_back_what_was_put_from_memory_or_from_its_file() {
        let dir = tempfile::tempdir().unwrap();
        for spill in [None, Some(dir.path())] {
            let mut c = Column::default();
            let mut expected = Vec::new();
            for i in 0..400_000u32 {
                c.put(&i.to_le_bytes(), spill).unwrap();
                expected.extend_from_slice(&i.to_le_bytes());
            }
            assert_eq!(c.file.is_some(), spill.is_some());
            let mut back = Vec::new();
            c.read_back(|b| {
                back.extend_from_slice(b);
                Ok(())
            })
            .unwrap();
            assert_eq!(back, expected);
        }
        // Scratch files are unnamed: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_run_gives_each_terms_bytes_only_when_asked_for_that_term() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = |t: u32| vec![t as u8; 5000 + t as usize];
        let file = Run::write(dir.path(), &[3, 1, 7], |t| {
            let b: &'static [u8] = Box::leak(bytes(t).into_boxed_slice());
            (b.len() as u32, std::iter::once(b))
        })
        .unwrap();
        let mut run = Run::open(file).unwrap();
        let mut got = Vec::new();
        for t in [0, 3, 2, 1, 7, 9] {
            let mut b = Vec::new();
            run.take(t, |p| {
                b.extend_from_slice(p);
                Ok(())
            })
            .unwrap();
            got.push(b);
        }
        assert_eq!(got, [vec![], bytes(3), vec![], bytes(1), bytes(7), vec![]]);
    }
}
