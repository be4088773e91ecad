//! Writing a segment's flat layout: a writer that knows its position, so each section
//! starts at the 8-byte aligned offset the segment's table gives it.

use std::io::{self, Write};

/// `at` rounded up to the next multiple of 8.
pub(super) fn align(at: usize) -> usize {
    at.div_ceil(8) * 8
}

/// A writer that knows its position, so sections start where the table says.
pub(super) struct Padded<'a, W: Write> {
    pub(super) out: &'a mut W,
    pub(super) at: usize,
}

impl<W: Write> Padded<'_, W> {
    pub(super) fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.at += bytes.len();
        self.out.write_all(bytes)
    }

    pub(super) fn pad_to(&mut self, at: usize) -> io::Result<()> {
        let zeros = [0u8; 8];
        while self.at < at {
            let n = (at - self.at).min(8);
            self.put(&zeros[..n])?;
        }
        Ok(())
    }

    pub(super) fn section(&mut self, at: u64, body: impl FnOnce(&mut Self) -> io::Result<()>) -> io::Result<()> {
        self.pad_to(at as usize)?;
        body(self)
    }

    /// `0, l0, l0 + l1, …`: u32 offsets of consecutive strings.
    pub(super) fn offsets(&mut self, lens: impl Iterator<Item = usize>) -> io::Result<()> {
        let mut off = 0u32;
        self.put(&off.to_le_bytes())?;
        for l in lens {
            off = off.saturating_add(l as u32);
            self.put(&off.to_le_bytes())?;
        }
        Ok(())
    }
}
