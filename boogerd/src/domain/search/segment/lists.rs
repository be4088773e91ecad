//! A term's list as a segment stores it, and its reading.
//!
//! A list is the chunks holding the term, in order, each with its four counts (name, content,
//! split identifiers, path). A chunk's path words are its file's, so every chunk of a file
//! holds them: a third of a large tree's postings held a term in the path alone, one after
//! another (the chunks of `include/linux/*.h` for `include`). Such chunks are kept as *runs*:
//! the first chunk, how many follow it and the path's count. And half of the rest hold the
//! term once in their text and nowhere else, which their entry says without a byte of counts.
//! A large tree's postings (549 MB of source): 126 MB one entry per chunk, 77 MB so.
//!
//! An entry starts with a varint (seven bits a byte, low first) of the gap from the list's
//! last chunk (from 0 for the first) times four plus its kind:
//! - 0: a chunk, then a byte of four 2-bit counts, or [`TF_ESCAPE`] and the four in full;
//! - 1: a chunk holding the term once in its text and nowhere else;
//! - 2: a run: a varint of the chunks after the first, then the path's count (one byte);
//! - 3: a run whose path holds the term once: the varint alone.

/// One byte of four 2-bit counts, or this escape and the four counts in full.
const TF_ESCAPE: u8 = 0xFF;

/// The counts of a chunk holding the term once in its text and nowhere else.
const ONCE_IN_TEXT: [u8; 4] = [0, 1, 0, 0];

const CHUNK: u64 = 0;
const ONCE: u64 = 1;
const RUN: u64 = 2;
const RUN_ONCE_IN_PATH: u64 = 3;

/// The longest entry: a varint of a 34-bit word (5 bytes), then four counts and their escape,
/// or a run's varint of 32 bits and its count.
pub(super) const MAX_ENTRY: usize = 11;

/// Writes `v` as a varint into `out` at `n`; the new `n`.
pub(super) fn put_varint(mut v: u64, out: &mut [u8; MAX_ENTRY], mut n: usize) -> usize {
    while v >= 0x80 {
        out[n] = (v as u8 & 0x7F) | 0x80;
        n += 1;
        v >>= 7;
    }
    out[n] = v as u8;
    n + 1
}

/// Reads a varint off the front of `bytes`; `None` when they end inside it.
#[inline(always)]
pub(super) fn take_varint(bytes: &mut &[u8]) -> Option<u64> {
    let (&first, rest) = bytes.split_first()?;
    *bytes = rest;
    if first < 0x80 {
        return Some(u64::from(first));
    }
    let mut v = u64::from(first & 0x7F);
    let mut shift = 7u32;
    loop {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        v |= u64::from(b & 0x7F).checked_shl(shift).unwrap_or(0);
        shift += 7;
        if b < 0x80 {
            return Some(v);
        }
    }
}

/// A chunk's entry: its gap from the term's last chunk and its counts. The bytes and how many.
pub(super) fn encode_chunk(gap: u32, tf: [u8; 4]) -> ([u8; MAX_ENTRY], usize) {
    let mut out = [0u8; MAX_ENTRY];
    if tf == ONCE_IN_TEXT {
        let n = put_varint((u64::from(gap) << 2) | ONCE, &mut out, 0);
        return (out, n);
    }
    let mut n = put_varint((u64::from(gap) << 2) | CHUNK, &mut out, 0);
    match tf.iter().enumerate().try_fold(0u8, |acc, (i, &c)| (c <= 3).then_some(acc | (c << (2 * i)))) {
        Some(code) if code != TF_ESCAPE => {
            out[n] = code;
            n += 1;
        }
        _ => {
            out[n] = TF_ESCAPE;
            out[n + 1..n + 5].copy_from_slice(&tf);
            n += 5;
        }
    }
    (out, n)
}

/// A run's entry: the gap from the term's last chunk to its first, the chunks that follow the
/// first, and the count of the term in their path.
pub(super) fn encode_run(gap: u32, after: u32, path: u8) -> ([u8; MAX_ENTRY], usize) {
    let mut out = [0u8; MAX_ENTRY];
    let kind = if path == 1 { RUN_ONCE_IN_PATH } else { RUN };
    let mut n = put_varint((u64::from(gap) << 2) | kind, &mut out, 0);
    n = put_varint(u64::from(after), &mut out, n);
    if kind == RUN {
        out[n] = path;
        n += 1;
    }
    (out, n)
}

/// A posting in one word, as the reading passes it along: the chunk in the low half, its
/// four counts above. Built in a register: an `Option` of the pair, put together on the
/// stack from two halves and read back whole, stalled the reload on every posting.
type Packed = u64;

/// No posting left (no chunk is numbered `u32::MAX`: a chunk's number is below the count).
const END: Packed = Packed::MAX;

#[inline(always)]
fn pack(d: u32, tf: [u8; 4]) -> Packed {
    Packed::from(d) | (Packed::from(u32::from_le_bytes(tf)) << 32)
}

#[inline(always)]
fn unpack(p: Packed) -> (u32, [u8; 4]) {
    (p as u32, ((p >> 32) as u32).to_le_bytes())
}

/// Decodes a term's list: (chunk, counts per column), in chunk order. A damaged list ends
/// early, and never names a chunk past the segment's, instead of reading past its bytes.
#[derive(Clone)]
pub(crate) struct PostingIter<'a> {
    bytes: &'a [u8],
    /// The last chunk given.
    doc: u32,
    /// Chunks of the current run not given yet, and its path's count.
    run_left: u32,
    path: u8,
    /// The segment's chunks.
    docs: u32,
    left: usize,
}

impl<'a> PostingIter<'a> {
    pub(super) const EMPTY: PostingIter<'static> =
        PostingIter { bytes: &[], doc: 0, run_left: 0, path: 0, docs: 0, left: 0 };

    /// The list `bytes` of `len` postings in a segment of `docs` chunks.
    pub(super) fn new(bytes: &'a [u8], len: u32, docs: u32) -> Self {
        PostingIter { bytes, docs, left: len as usize, ..PostingIter::EMPTY }
    }

    /// The next posting, or [`END`].
    #[inline(always)]
    fn step(&mut self) -> Packed {
        let tf = if self.run_left > 0 {
            self.run_left -= 1;
            self.doc = self.doc.wrapping_add(1);
            [0, 0, 0, self.path]
        } else {
            match self.entry() {
                Some(tf) => tf,
                None => return END,
            }
        };
        if self.doc < self.docs { pack(self.doc, tf) } else { END }
    }

    /// Reads the next entry, moving to its (first) chunk: its counts, or `[0, 0, 0, path]`
    /// for a run, whose other chunks [`step`](Self::step) gives after it.
    #[inline(always)]
    fn entry(&mut self) -> Option<[u8; 4]> {
        let word = take_varint(&mut self.bytes)?;
        self.doc = self.doc.wrapping_add((word >> 2) as u32);
        match word & 3 {
            CHUNK => {
                let (&code, rest) = self.bytes.split_first()?;
                self.bytes = rest;
                if code == TF_ESCAPE {
                    let (tf, rest) = self.bytes.split_first_chunk::<4>()?;
                    self.bytes = rest;
                    Some(*tf)
                } else {
                    Some([code & 3, (code >> 2) & 3, (code >> 4) & 3, code >> 6])
                }
            }
            ONCE => Some(ONCE_IN_TEXT),
            kind => {
                self.run_left = take_varint(&mut self.bytes)?.min(u64::from(u32::MAX)) as u32;
                self.path = if kind == RUN {
                    let (&count, rest) = self.bytes.split_first()?;
                    self.bytes = rest;
                    count
                } else {
                    1
                };
                // A damaged count of zero would read as a chunk with no counts at all.
                self.path = self.path.max(1);
                Some([0, 0, 0, self.path])
            }
        }
    }
}

impl Iterator for PostingIter<'_> {
    type Item = (u32, [u8; 4]);

    #[inline]
    fn next(&mut self) -> Option<(u32, [u8; 4])> {
        if self.left == 0 {
            return None;
        }
        match self.step() {
            END => {
                self.left = 0;
                None
            }
            p => {
                self.left -= 1;
                Some(unpack(p))
            }
        }
    }

    /// The whole list at once (`for_each`, `count` and the like), one call of `f` a posting.
    #[inline]
    fn fold<B, F: FnMut(B, (u32, [u8; 4])) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = init;
        while self.left > 0 {
            let p = self.step();
            if p == END {
                break;
            }
            self.left -= 1;
            acc = f(acc, unpack(p));
        }
        acc
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for PostingIter<'_> {}
