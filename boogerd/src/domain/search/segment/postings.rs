//! Every term's postings while a segment is built, in one paged arena.
//!
//! A term's bytes are a chain of blocks that double in size, 8 bytes up to 1 KiB; the last
//! four bytes of a block hold where the next one starts. A term costs 24 bytes and the unused
//! end of its last block. As a vector of its own, each of a large tree's million terms cost a
//! 32-byte slot, a heap allocation of at least 32 bytes and a doubling vector's slack: about a
//! third of the build's memory.

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
    /// Bytes of the term in all, and in its current block.
    len: u32,
    used: u16,
    class: u8,
    /// Postings, and the last one's document (postings arrive in document order).
    count: u32,
    last: u32,
}

#[derive(Default)]
pub(super) struct Postings {
    pages: Vec<Box<[u8]>>,
    /// Bytes used of the last page.
    top: usize,
    terms: Vec<Term>,
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

    /// Appends `term`'s posting for `doc` (not before its last), which `encode` makes of the
    /// gap from the last (bytes and how many).
    pub(super) fn push<const N: usize>(&mut self, term: u32, doc: u32, encode: impl FnOnce(u32) -> ([u8; N], usize)) {
        let mut t = self.terms[term as usize];
        let gap = doc - t.last;
        t.last = doc;
        t.count += 1;
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

    /// A block of `class`, zeroed; its address in units of 8 bytes.
    fn allocate(&mut self, class: u8) -> u32 {
        let size = block_size(class);
        if self.pages.is_empty() || self.top + size > PAGE {
            self.pages.push(vec![0u8; PAGE].into_boxed_slice());
            self.top = 0;
        }
        let at = (self.pages.len() - 1) * PAGE + self.top;
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

    pub(super) fn len(&self, term: u32) -> usize {
        self.terms[term as usize].len as usize
    }

    /// `term`'s encoded bytes, block by block.
    pub(super) fn pieces(&self, term: u32) -> impl Iterator<Item = &[u8]> {
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

    /// Encoded bytes in all, and the arena's size.
    pub(super) fn held(&self) -> (usize, usize) {
        (self.terms.iter().map(|t| t.len as usize).sum(), self.pages.len() * PAGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_of(p: &Postings, t: u32) -> Vec<u8> {
        p.pieces(t).flatten().copied().collect()
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
                    p.push(t, doc, |gap| {
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
