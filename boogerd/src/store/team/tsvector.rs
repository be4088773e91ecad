//! A chunk's words as PostgreSQL's `tsvector`, sent in its binary form: the server takes it
//! as it is, where the text form has it parse, unquote and sort every word of a million
//! chunks (a first publish's server spent more time there than on storing the chunks).
//!
//! The binary form: the number of words (u32), then each word's bytes and a NUL, its number
//! of positions (u16) and each position (u16: the weight in the top two bits, A = 3 down to
//! D = 0). Words must come in byte order, each once, and each word's positions rising.

use bytes::{BufMut, BytesMut};
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};

/// A word's weight: the field it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Weight {
    A = 3,
    B = 2,
    D = 0,
}

/// PostgreSQL's largest position in a `tsvector`.
pub(crate) const MAX_POSITION: u16 = 16_383;

/// A `tsvector` being written, a word at a time, in byte order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TsVector {
    words: u32,
    bytes: Vec<u8>,
}

impl TsVector {
    pub(crate) const fn new() -> Self {
        Self { words: 0, bytes: Vec::new() }
    }

    /// One with room for `bytes` of words and positions (see [`TsVector::room`]).
    pub(crate) fn with_capacity(bytes: usize) -> Self {
        Self { words: 0, bytes: Vec::with_capacity(bytes) }
    }

    /// The bytes a word of `len` bytes at `positions` positions takes at most.
    pub(crate) const fn room(len: usize, positions: usize) -> usize {
        len + 3 + 2 * positions
    }

    /// Adds `word` (after every word added before it in byte order, holding no NUL) at
    /// `positions` (rising; a repeat is dropped; none for a word without positions).
    pub(crate) fn push(&mut self, word: &str, positions: impl IntoIterator<Item = (u16, Weight)>) {
        debug_assert!(!word.contains('\0'));
        self.words += 1;
        self.bytes.extend_from_slice(word.as_bytes());
        self.bytes.push(0);
        let count_at = self.bytes.len();
        self.bytes.extend_from_slice(&[0, 0]);
        let (mut count, mut last) = (0u16, None);
        for (position, weight) in positions {
            let position = position.min(MAX_POSITION);
            if last.is_some_and(|l| position <= l) {
                continue;
            }
            last = Some(position);
            count += 1;
            self.bytes.extend_from_slice(&(((weight as u16) << 14) | position).to_be_bytes());
        }
        self.bytes[count_at..count_at + 2].copy_from_slice(&count.to_be_bytes());
    }

    /// The text form (`'word':1A,2D 'other'`), unquoted: what tests read.
    #[cfg(test)]
    pub(crate) fn literal(&self) -> String {
        let mut out = String::new();
        let mut rest = self.bytes.as_slice();
        for _ in 0..self.words {
            let end = rest.iter().position(|&b| b == 0).expect("a NUL after each word");
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&format!("'{}'", String::from_utf8_lossy(&rest[..end])));
            let count = u16::from_be_bytes([rest[end + 1], rest[end + 2]]) as usize;
            rest = &rest[end + 3..];
            for k in 0..count {
                let p = u16::from_be_bytes([rest[2 * k], rest[2 * k + 1]]);
                out.push(if k == 0 { ':' } else { ',' });
                out.push_str(&format!("{}{}", p & MAX_POSITION, ['D', 'C', 'B', 'A'][(p >> 14) as usize]));
            }
            rest = &rest[2 * count..];
        }
        out
    }
}

impl ToSql for TsVector {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.put_u32(self.words);
        out.put_slice(&self.bytes);
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "tsvector"
    }

    to_sql_checked!();
}
