//! The ranking index's deleted-chunk bits, shared between versions of the index.
//!
//! Every edit makes a new version of the ranking index that marks a few more chunks deleted.
//! Copying one flat bit set per edit would cost the project's size (190 KB at 1.5 million
//! chunks); here the bits live in 4 KB blocks shared by reference, and a version copies only
//! the blocks it changes.

use std::sync::Arc;

/// Bits per block: 4 KB of words.
const BLOCK_WORDS: usize = 512;
const BLOCK_BITS: usize = BLOCK_WORDS * 64;

type Block = [u64; BLOCK_WORDS];

#[derive(Clone, Default)]
pub(super) struct Tombstones {
    blocks: Vec<Arc<Block>>,
    len: usize,
}

impl Tombstones {
    /// `len` slots, none deleted.
    pub(super) fn new(len: usize) -> Tombstones {
        let mut t = Tombstones::default();
        t.resize(len);
        t
    }

    pub(super) fn get(&self, slot: usize) -> bool {
        slot < self.len && self.blocks[slot / BLOCK_BITS][slot % BLOCK_BITS / 64] & (1 << (slot % 64)) != 0
    }

    /// Marks `slot` deleted; false if it already was (or is out of range).
    pub(super) fn set(&mut self, slot: usize) -> bool {
        if slot >= self.len || self.get(slot) {
            return false;
        }
        let block = Arc::make_mut(&mut self.blocks[slot / BLOCK_BITS]);
        block[slot % BLOCK_BITS / 64] |= 1 << (slot % 64);
        true
    }

    /// Keeps the first `len` slots (bits past a shrink are forgotten), new slots clear.
    pub(super) fn resize(&mut self, len: usize) {
        if len < self.len {
            for slot in len..self.len.min(len.next_multiple_of(BLOCK_BITS)) {
                if self.get(slot) {
                    let block = Arc::make_mut(&mut self.blocks[slot / BLOCK_BITS]);
                    block[slot % BLOCK_BITS / 64] &= !(1 << (slot % 64));
                }
            }
        }
        self.blocks.resize_with(len.div_ceil(BLOCK_BITS), || Arc::new([0; BLOCK_WORDS]));
        self.len = len;
    }

    /// Heap held by the blocks (shared blocks counted in full by each holder).
    pub(super) fn heap_bytes(&self) -> usize {
        self.blocks.len() * std::mem::size_of::<Block>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_share_what_they_do_not_change() {
        let mut a = Tombstones::new(100_000);
        assert!(a.set(5) && !a.set(5) && a.get(5) && !a.get(6));
        let mut b = a.clone();
        assert!(b.set(70_000));
        assert!(!a.get(70_000), "the older version does not see a later deletion");
        assert!(Arc::ptr_eq(&a.blocks[0], &b.blocks[0]), "an untouched block is shared");
        assert!(!Arc::ptr_eq(&a.blocks[2], &b.blocks[2]));

        // Shrinking forgets the bits past the end, even those in a kept block.
        b.set(40_000);
        b.resize(40_000);
        b.resize(80_000);
        assert!(!b.get(40_000) && !b.get(70_000) && b.get(5));
        assert!(!b.set(80_000), "out of range");
    }
}
