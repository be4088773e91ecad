//! Every term's postings while a segment is built, in one paged arena.
//!
//! A term's bytes are a chain of blocks that double in size, 8 bytes up to 1 KiB; the last
//! four bytes of a block hold where the next one starts. A term costs 24 bytes and the unused
//! end of its last block. As a vector of its own, each of a large tree's million terms cost a
//! 32-byte slot, a heap allocation of at least 32 bytes and a doubling vector's slack: about a
//! third of the build's memory.
//!
//! A large build spills: the arena's postings are written out as a run (terms in the
//! segment's order, see `spill`) and its pages are used again, so the arena never outgrows
//! its budget; the segment is then written by reading every run once, in order.

use std::fs::File;
use std::io;
use std::path::Path;

use super::spill::Run;

/// Bytes of a page; blocks never straddle two.
const PAGE: usize = 64 * 1024;
/// Block sizes are `8 << class`, class 0 to `TOP`.
const TOP: u8 = 7;
/// Bytes at the end of a block that point to the next (in units of 8 bytes).
const LINK: usize = 4;

#[derive(Clone, Copy, Default)]
struct Term {
    /// First and current block, in units of 8 bytes from the arena's start.
    head: u32,
    tail: u32,
    /// Bytes of the term in the arena, and in its current block.
    len: u32,
    used: u16,
    class: u8,
    /// Postings, and the last one's document (postings arrive in document order).
    count: u32,
    last: u32,
    /// Bytes of the term in runs written out before.
    spilled: u32,
}

#[derive(Default)]
pub(super) struct Postings {
    /// Pages in use are the first `in_use`; the rest wait to be used again after a spill.
    pages: Vec<Box<[u8]>>,
    in_use: usize,
    /// Bytes used of the last page in use.
    top: usize,
    terms: Vec<Term>,
    /// Runs spilled so far, oldest first.
    runs: Vec<File>,
}

fn block_size(class: u8) -> usize {
    8 << class
}

impl Postings {
    /// A new term with no postings; its id.
    pub(super) fn add_term(&mut self) -> u32 {
        self.terms.push(Term::default());
        self.terms.len() as u32 - 1
    }

    pub(super) fn terms(&self) -> usize {
        self.terms.len()
    }

    /// Appends `term`'s entry for the documents `first` to `last` (a posting, or a run of
    /// them; after the term's last), which `encode` makes of the gap from the last (bytes
    /// and how many).
    pub(super) fn push<const N: usize>(
        &mut self,
        term: u32,
        first: u32,
        last: u32,
        encode: impl FnOnce(u32) -> ([u8; N], usize),
    ) {
        let mut t = self.terms[term as usize];
        let gap = first - t.last;
        t.last = last;
        t.count += last - first + 1;
        if t.len == 0 {
            t.head = self.allocate(0);
            t.tail = t.head;
        }
        let (bytes, n) = encode(gap);
        for &b in &bytes[..n] {
            self.put(&mut t, b);
        }
        self.terms[term as usize] = t;
    }

    fn put(&mut self, t: &mut Term, byte: u8) {
        if usize::from(t.used) == block_size(t.class) - LINK {
            let class = (t.class + 1).min(TOP);
            let next = self.allocate(class);
            let (page, at) = Self::place(t.tail);
            let end = at + block_size(t.class);
            self.pages[page][end - LINK..end].copy_from_slice(&next.to_le_bytes());
            t.tail = next;
            t.class = class;
            t.used = 0;
        }
        let (page, at) = Self::place(t.tail);
        self.pages[page][at + usize::from(t.used)] = byte;
        t.used += 1;
        t.len += 1;
    }

    /// A block of `class` (its bytes are written before they are read); its address in
    /// units of 8 bytes.
    fn allocate(&mut self, class: u8) -> u32 {
        let size = block_size(class);
        if self.in_use == 0 || self.top + size > PAGE {
            if self.in_use == self.pages.len() {
                self.pages.push(vec![0u8; PAGE].into_boxed_slice());
            }
            self.in_use += 1;
            self.top = 0;
        }
        let at = (self.in_use - 1) * PAGE + self.top;
        self.top += size;
        u32::try_from(at / 8).expect("postings arena under 32 GiB")
    }

    fn place(address: u32) -> (usize, usize) {
        let byte = address as usize * 8;
        (byte / PAGE, byte % PAGE)
    }

    /// `term`'s postings: their count and encoded length.
    pub(super) fn count(&self, term: u32) -> u32 {
        self.terms[term as usize].count
    }

    /// `term`'s encoded length, runs and arena together.
    pub(super) fn len(&self, term: u32) -> usize {
        let t = &self.terms[term as usize];
        t.spilled as usize + t.len as usize
    }

    /// Whether `term` has postings in the arena.
    pub(super) fn in_arena(&self, term: u32) -> bool {
        self.terms[term as usize].len > 0
    }

    /// Bytes of the arena's pages in use.
    pub(super) fn arena_bytes(&self) -> usize {
        self.in_use * PAGE
    }

    /// Writes the arena's postings to a run in `dir`: `order` holds every term with postings
    /// in the arena, in the segment's order. The arena is then empty and its pages free for
    /// the postings that follow (which go on from each term's last document).
    pub(super) fn spill(&mut self, order: &[u32], dir: &Path) -> io::Result<()> {
        let run = Run::write(dir, order, |t| (self.terms[t as usize].len, self.arena_pieces(t)))?;
        self.runs.push(run);
        for t in &mut self.terms {
            t.spilled += t.len;
            (t.head, t.tail, t.len, t.used, t.class) = (0, 0, 0, 0, 0);
        }
        (self.in_use, self.top) = (0, 0);
        Ok(())
    }

    /// The runs spilled, oldest first, ready to be read.
    pub(super) fn take_runs(&mut self) -> io::Result<Vec<Run>> {
        std::mem::take(&mut self.runs).into_iter().map(Run::open).collect()
    }

    /// `term`'s encoded bytes still in the arena (after those of every run), block by block.
    pub(super) fn arena_pieces(&self, term: u32) -> impl Iterator<Item = &[u8]> {
        let t = self.terms[term as usize];
        let (mut block, mut class, mut left) = (t.head, 0u8, t.len as usize);
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            let (page, at) = Self::place(block);
            let size = block_size(class);
            let take = left.min(size - LINK);
            let piece = &self.pages[page][at..at + take];
            left -= take;
            if left > 0 {
                let link = &self.pages[page][at + size - LINK..at + size];
                block = u32::from_le_bytes(link.try_into().expect("four bytes"));
                class = (class + 1).min(TOP);
            }
            Some(piece)
        })
    }

    /// Encoded bytes in all, the arena's size and the runs spilled.
    pub(super) fn held(&self) -> (usize, usize, usize) {
        let bytes = self.terms.iter().map(|t| t.spilled as usize + t.len as usize).sum();
        (bytes, self.pages.len() * PAGE, self.runs.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_of(p: &Postings, t: u32) -> Vec<u8> {
        p.arena_pieces(t).flatten().copied().collect()
    }

    #[test]
    fn interleaved_terms_read_back_as_written_across_blocks_and_pages() {
        let mut p = Postings::default();
        let terms: Vec<u32> = (0..50).map(|_| p.add_term()).collect();
        for doc in 0..20_000u32 {
            for (i, &t) in terms.iter().enumerate() {
                // Term i appears in every (i+1)-th document, with one to three bytes.
                if (doc as usize).is_multiple_of(i + 1) {
                    let n = 1 + (doc as usize + i) % 3;
                    p.push(t, doc, doc, |gap| {
                        let mut out = [0u8; 3];
                        for (k, b) in out.iter_mut().enumerate() {
                            *b = (gap as u8).wrapping_add(k as u8);
                        }
                        (out, n)
                    });
                }
            }
        }
        // The same bytes, each term's in a vector of its own.
        let mut expected = vec![Vec::new(); terms.len()];
        for (i, e) in expected.iter_mut().enumerate() {
            let mut last = 0;
            for doc in 0..20_000u32 {
                if (doc as usize).is_multiple_of(i + 1) {
                    let n = 1 + (doc as usize + i) % 3;
                    let gap = doc - last;
                    last = doc;
                    e.extend((0..n).map(|k| (gap as u8).wrapping_add(k as u8)));
                }
            }
        }
        assert!(p.pages.len() > 1, "the test crosses pages");
        for (i, &t) in terms.iter().enumerate() {
            assert_eq!(p.len(t), expected[i].len());
            assert_eq!(bytes_of(&p, t), expected[i], "term {i}");
            assert_eq!(p.count(t) as usize, (0..20_000usize).filter(|d| d.is_multiple_of(i + 1)).count());
        }
    }
}
