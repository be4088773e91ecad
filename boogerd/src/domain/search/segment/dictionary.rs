//! A segment's terms: sorted, in blocks of [`BLOCK`], each term written as what it shares
//! with the one before and the rest, followed by how many chunks hold it and its postings'
//! length. A table gives each block's start and its first postings' offset.
//!
//! A large tree has over a million terms, most of them sharing a prefix with their neighbour
//! (`retri`, `retry_after`, `retry_count`): as offsets into the text, then per term its
//! postings' offset and count, four u32s a term, they took 30 MB of its 214 MB segment.
//! Here a term takes its suffix and about four bytes; finding one is a binary search over
//! the blocks' first terms and a walk through at most one block.

use std::cmp::Ordering;
use std::io;

use super::lists::{MAX_ENTRY, put_varint, take_varint};

/// Terms a block: a lookup decodes at most this many.
pub(super) const BLOCK: usize = 16;

/// Bytes of a block's entry in the table: where it starts among the terms, and where its
/// first term's postings start.
pub(super) const BLOCK_ENTRY: usize = 8;

/// A term found: its postings' byte range and how many chunks hold it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Found {
    pub start: usize,
    pub end: usize,
    pub count: u32,
}

/// Encodes `terms` (sorted, distinct), each with its chunk count and postings' length in
/// bytes (the postings laid out one after another in the same order): the block table's
/// bytes to `blocks`, the terms' to `out`. Run once to count the terms' bytes and once to
/// write them, so that a large tree's 12 MB of them are never held.
pub(super) fn encode<'a>(
    terms: impl Iterator<Item = (&'a [u8], u32, usize)>,
    mut blocks: impl FnMut(&[u8]),
    mut out: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let mut last: &[u8] = &[];
    let (mut at, mut postings) = (0usize, 0u32);
    let mut put = |bytes: &[u8], at: &mut usize| {
        *at += bytes.len();
        out(bytes)
    };
    for (i, (term, count, len)) in terms.enumerate() {
        let shared = if i % BLOCK == 0 {
            let start = u32::try_from(at).map_err(|_| io::Error::other("a ranking segment's terms past 4 GiB"))?;
            blocks(&start.to_le_bytes());
            blocks(&postings.to_le_bytes());
            0
        } else {
            let shared = term.iter().zip(last).take_while(|(a, b)| a == b).count();
            put(varint(shared as u64).as_slice(), &mut at)?;
            shared
        };
        put(varint((term.len() - shared) as u64).as_slice(), &mut at)?;
        put(&term[shared..], &mut at)?;
        put(varint(u64::from(count)).as_slice(), &mut at)?;
        put(varint(len as u64).as_slice(), &mut at)?;
        postings = u32::try_from(len).ok().and_then(|len| postings.checked_add(len)).ok_or_else(|| {
            io::Error::other("a ranking segment's postings past 4 GiB (a tree of some 30 GB of text)")
        })?;
        last = term;
    }
    Ok(())
}

/// A varint's bytes.
struct Varint([u8; MAX_ENTRY], usize);

impl Varint {
    fn as_slice(&self) -> &[u8] {
        &self.0[..self.1]
    }
}

fn varint(v: u64) -> Varint {
    let mut bytes = [0u8; MAX_ENTRY];
    let n = put_varint(v, &mut bytes, 0);
    Varint(bytes, n)
}

/// The sections read back: every read is bounds-checked, and a damaged dictionary finds
/// nothing or a range the caller checks against the postings.
pub(super) struct Dictionary<'a> {
    pub blocks: &'a [u8],
    pub terms: &'a [u8],
    /// How many terms.
    pub len: usize,
}

impl Dictionary<'_> {
    /// Where `term`'s postings are, if the segment holds it.
    pub(super) fn find(&self, term: &[u8]) -> Option<Found> {
        let blocks = self.blocks.len() / BLOCK_ENTRY;
        // The last block whose first term is not past `term`.
        let (mut lo, mut hi) = (0usize, blocks);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.first_term(mid)?.cmp(term) {
                Ordering::Greater => hi = mid,
                _ => lo = mid + 1,
            }
        }
        let block = lo.checked_sub(1)?;
        let (at, mut postings) = self.block(block)?;
        let mut rest = self.terms.get(at..)?;
        let mut current: Vec<u8> = Vec::with_capacity(term.len() + 8);
        let in_block = BLOCK.min(self.len.saturating_sub(block * BLOCK));
        for i in 0..in_block {
            let shared = if i == 0 { 0 } else { take_varint(&mut rest)? as usize };
            let suffix = take_varint(&mut rest)? as usize;
            current.truncate(shared);
            current.extend_from_slice(rest.get(..suffix)?);
            rest = &rest[suffix..];
            let count = u32::try_from(take_varint(&mut rest)?).ok()?;
            let len = usize::try_from(take_varint(&mut rest)?).ok()?;
            let end = postings.checked_add(len)?;
            match current.as_slice().cmp(term) {
                Ordering::Equal => return Some(Found { start: postings, end, count }),
                Ordering::Greater => return None,
                Ordering::Less => postings = end,
            }
        }
        None
    }

    /// Block `b`'s start among the terms and its first postings' offset.
    fn block(&self, b: usize) -> Option<(usize, usize)> {
        let entry = self.blocks.get(b * BLOCK_ENTRY..(b + 1) * BLOCK_ENTRY)?;
        let word = |i: usize| u32::from_le_bytes(entry[i..i + 4].try_into().expect("4 bytes")) as usize;
        Some((word(0), word(4)))
    }

    fn first_term(&self, b: usize) -> Option<&[u8]> {
        let (at, _) = self.block(b)?;
        let mut rest = self.terms.get(at..)?;
        let len = take_varint(&mut rest)? as usize;
        rest.get(..len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block table and the terms, in memory.
    fn write<'a>(terms: impl Iterator<Item = (&'a [u8], u32, usize)>) -> (Vec<u8>, Vec<u8>) {
        let (mut blocks, mut bytes) = (Vec::new(), Vec::new());
        encode(
            terms,
            |b| blocks.extend_from_slice(b),
            |b| {
                bytes.extend_from_slice(b);
                Ok(())
            },
        )
        .unwrap();
        (blocks, bytes)
    }

    #[test]
    fn every_term_is_found_and_none_between_them() {
        let words: Vec<String> =
            (0..1000).map(|i| format!("retry{}{}", ["", "_after", "_count"][i % 3], i / 3)).collect();
        let mut sorted = words.clone();
        sorted.sort();
        sorted.dedup();
        let (blocks, terms) = write(sorted.iter().enumerate().map(|(i, t)| (t.as_bytes(), i as u32 + 1, i % 7 + 1)));
        let dict = Dictionary { blocks: &blocks, terms: &terms, len: sorted.len() };
        let mut at = 0;
        for (i, t) in sorted.iter().enumerate() {
            let len = i % 7 + 1;
            assert_eq!(dict.find(t.as_bytes()), Some(Found { start: at, end: at + len, count: i as u32 + 1 }), "{t}");
            at += len;
            for absent in [format!("{t}0"), format!("{t}\u{0}"), t[..t.len() - 1].to_owned() + "~"] {
                if sorted.binary_search(&absent).is_err() {
                    assert_eq!(dict.find(absent.as_bytes()), None, "{absent}");
                }
            }
        }
        for absent in ["", "a", "retry", "zzz"] {
            assert_eq!(dict.find(absent.as_bytes()), None, "{absent}");
        }
        // A long shared prefix costs its suffix alone: less than half of the text and the
        // three u32s a term took beside it.
        let before = sorted.iter().map(|t| t.len() + 12).sum::<usize>();
        assert!(terms.len() + blocks.len() < before / 2, "{} of {before}", terms.len());
    }

    #[test]
    fn an_empty_or_damaged_dictionary_finds_nothing_and_never_panics() {
        let empty = Dictionary { blocks: &[], terms: &[], len: 0 };
        assert_eq!(empty.find(b"retry"), None);
        let terms: Vec<String> = (0..100).map(|i| format!("t{i:03}")).collect();
        let written = write(terms.iter().map(|t| (t.as_bytes(), 1, 3)));
        let mut rng = crate::base::rng::Rng::new(7);
        for _ in 0..300 {
            let (mut blocks, mut bytes) = written.clone();
            for _ in 0..4 {
                let b = rng.below(bytes.len());
                bytes[b] = rng.below(256) as u8;
                let b = rng.below(blocks.len());
                blocks[b] = rng.below(256) as u8;
            }
            let dict = Dictionary { blocks: &blocks, terms: &bytes, len: 100 };
            for t in &terms {
                let _ = dict.find(t.as_bytes());
            }
        }
    }
}
