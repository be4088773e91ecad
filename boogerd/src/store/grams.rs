//! The trigram index `grep` narrows by: for each block of a few consecutive chunks of a file
//! (up to [`BLOCK_BYTES`] of text; a longer chunk is a block of its own), the distinct
//! trigrams of their texts, kept in `chunk_grams` (FTS5, contentless, no positions) as one
//! short token each, in a row whose id is the block's first chunk's ([`row_chunks`]).
//!
//! The trigrams are taken here, not by FTS5's own trigram tokenizer, so FTS5 sees each
//! distinct one once per block: 12.4 million tokens for the Python standard library instead
//! of 31.4 million when a row was a chunk. A file's rows are written whole, from all of its
//! chunks; a large run leaves them to a background pass (`grams_pending`).
//!
//! Two kinds of trigram are kept, both of the chunk's text framed by a newline at each end
//! (and before its own first line, for a Markdown piece that starts with the tail of the one
//! before): so a line's start and end are a `\n` to either side, and `^def` or `return$`
//! narrow like literals.
//!
//! - Byte trigrams, after [`fold`]: ASCII letters in lower case, and the two non-ASCII
//!   characters that a case-insensitive regex matches for an ASCII letter (KELVIN SIGN for
//!   `k`, LONG S for `s`) written as that letter. So an ASCII literal's trigrams are in the
//!   index whatever the case of its match, and any literal's folded trigrams are there for a
//!   case-sensitive match. The 512 most common in code ([`is_common`]: `def`, ` = `, `   `)
//!   are left out: a third of the tokens, and too widespread to narrow.
//! - Shape trigrams: of characters by [`shape`] (whitespace, digit, upper, lower, other
//!   non-ASCII, control; each ASCII punctuation mark itself), for patterns without a literal
//!   such as `\d{4}` or `[A-Z]+_[A-Z]+ =`. Those made only of lower-case letters and
//!   whitespace are in nearly every chunk and are not kept.

use std::borrow::Cow;

use booger_proto::tools::ChunkKind;

pub(crate) use super::common_grams::is_common;

/// A trigram: three folded bytes, big-endian in the low 24 bits.
pub(crate) type Gram = u32;

/// Calls `each` with every trigram of `text` after folding (windows overlap, repeats included).
pub(crate) fn each_gram(text: &[u8], each: impl FnMut(Gram)) {
    each_gram_in(&[text], each);
}

/// [`each_gram`] of the parts one after another.
fn each_gram_in(parts: &[&[u8]], mut each: impl FnMut(Gram)) {
    let mut window: u32 = 0;
    let mut filled = 0;
    for part in parts {
        fold(part, |b| {
            window = ((window << 8) | u32::from(b)) & 0x00ff_ffff;
            filled += 1;
            if filled >= 3 {
                each(window);
            }
        });
    }
}

/// Writes `text` folded, byte by byte: ASCII upper case to lower, KELVIN SIGN (U+212A) to `k`
/// and LONG S (U+017F) to `s`, everything else as it is.
pub(crate) fn fold(text: &[u8], mut out: impl FnMut(u8)) {
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b == 0xC5 && text.get(i + 1) == Some(&0xBF) {
            out(b's');
            i += 2;
        } else if b == 0xE2 && text.get(i + 1) == Some(&0x84) && text.get(i + 2) == Some(&0xAA) {
            out(b'k');
            i += 3;
        } else {
            out(b.to_ascii_lowercase());
            i += 1;
        }
    }
}

const DIGITS: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";

/// The FTS5 token of one trigram: five characters of `[0-9a-v]` (5 bits each), which every
/// FTS5 tokenizer keeps as one lower-case word.
pub(crate) fn token(gram: Gram, out: &mut String) {
    for shift in [20, 15, 10, 5, 0] {
        out.push(DIGITS[((gram >> shift) & 31) as usize] as char);
    }
}

/// A character's shape: what shape trigrams are made of. Six symbols for classes of
/// characters, then one for each of the 32 ASCII punctuation marks.
pub(crate) type Shape = u8;
pub(crate) const SPACE: Shape = 0;
pub(crate) const DIGIT: Shape = 1;
pub(crate) const UPPER: Shape = 2;
pub(crate) const LOWER: Shape = 3;
/// Any character outside ASCII.
pub(crate) const WIDE: Shape = 4;
pub(crate) const CONTROL: Shape = 5;
/// How many shapes there are.
pub(crate) const SHAPES: usize = 38;

/// The shape of `c`. Whitespace is what `\s` matches in ASCII (with `\n`).
pub(crate) const fn shape(c: char) -> Shape {
    match c {
        '\t' | '\n' | '\x0B' | '\x0C' | '\r' | ' ' => SPACE,
        '0'..='9' => DIGIT,
        'A'..='Z' => UPPER,
        'a'..='z' => LOWER,
        '\0'..='\x1F' | '\x7F' => CONTROL,
        '!'..='/' => 6 + (c as u8 - b'!'),
        ':'..='@' => 21 + (c as u8 - b':'),
        '['..='`' => 28 + (c as u8 - b'['),
        '{'..='~' => 34 + (c as u8 - b'{'),
        _ => WIDE,
    }
}

/// A shape trigram: three shapes, six bits each.
pub(crate) type ShapeGram = u32;

pub(crate) fn shape_gram(a: Shape, b: Shape, c: Shape) -> ShapeGram {
    (u32::from(a) << 12) | (u32::from(b) << 6) | u32::from(c)
}

/// Whether a shape trigram is kept: not one of lower-case letters and whitespace only.
pub(crate) fn shape_gram_kept(g: ShapeGram) -> bool {
    [g >> 12, (g >> 6) & 63, g & 63].iter().any(|&s| s != u32::from(SPACE) && s != u32::from(LOWER))
}

/// Calls `each` with every shape trigram of `chars` that the index keeps.
fn each_shape_gram(chars: impl Iterator<Item = char>, mut each: impl FnMut(ShapeGram)) {
    let mut window: u32 = 0;
    for (i, c) in chars.enumerate() {
        window = ((window << 6) | u32::from(shape(c))) & 0x3_ffff;
        if i >= 2 && shape_gram_kept(window) {
            each(window);
        }
    }
}

/// The FTS5 token of a shape trigram: `x` and four characters of `[0-9a-v]`, never a byte
/// trigram's token (whose first character is at most `v`).
pub(crate) fn shape_token(gram: ShapeGram, out: &mut String) {
    out.push('x');
    for shift in [15, 10, 5, 0] {
        out.push(DIGITS[((gram >> shift) & 31) as usize] as char);
    }
}

/// Where the chunk's own first line starts in its stored text: past the tail of the piece
/// before that a Markdown piece repeats (`chunk::markdown::OVERLAP`), which its line numbers
/// do not count; 0 for every other chunk. `bytes` is the length of the chunk's own span.
pub(crate) fn own_start(kind: ChunkKind, content: &str, bytes: usize) -> usize {
    let overlap = content.len().saturating_sub(bytes);
    if kind == ChunkKind::Section && content.is_char_boundary(overlap) { overlap } else { 0 }
}

/// A chunk as [`blocks_of`] takes it: its text and [`own_start`].
pub(crate) fn chunk_text(c: &crate::source::chunk::Chunk) -> (&str, usize) {
    (&c.content, own_start(c.kind, &c.content, c.end_byte - c.start_byte))
}

/// The distinct trigrams of texts, as the space-separated tokens of a `chunk_grams` row.
/// Reused across texts: a bit per possible byte trigram (2 MiB) and per shape trigram
/// (32 KiB), cleared by the lists of those set.
pub(crate) struct GramSet {
    seen: Vec<u64>,
    set: Vec<Gram>,
    seen_shapes: Vec<u64>,
    shapes: Vec<ShapeGram>,
}

impl Default for GramSet {
    fn default() -> Self {
        GramSet {
            seen: vec![0; (1 << 24) / 64],
            set: Vec::new(),
            seen_shapes: vec![0; (1 << 18) / 64],
            shapes: Vec::new(),
        }
    }
}

/// Marks `g` in `seen`, and lists it the first time.
fn first_time(seen: &mut [u64], list: &mut Vec<u32>, g: u32) {
    let (word, bit) = ((g / 64) as usize, 1u64 << (g % 64));
    if seen[word] & bit == 0 {
        seen[word] |= bit;
        list.push(g);
    }
}

impl GramSet {
    /// The byte trigrams of `text` as it is (a literal's, to look up).
    #[cfg(test)]
    pub(crate) fn add(&mut self, text: &str) {
        let (seen, set) = (&mut self.seen, &mut self.set);
        each_gram(text.as_bytes(), |g| first_time(seen, set, g));
    }

    /// A chunk's byte and shape trigrams: of `content` framed by newlines, and of a newline
    /// before its own first line at `own_start` (see the module's comment).
    pub(crate) fn add_chunk(&mut self, content: &str, own_start: usize) {
        let (seen, set) = (&mut self.seen, &mut self.set);
        let (seen_shapes, shapes) = (&mut self.seen_shapes, &mut self.shapes);
        let newline = std::iter::once('\n');
        each_gram_in(&[b"\n", content.as_bytes(), b"\n"], |g| first_time(seen, set, g));
        each_shape_gram(newline.clone().chain(content.chars()).chain(newline.clone()), |g| {
            first_time(seen_shapes, shapes, g)
        });
        if let Some(own) = content.get(own_start..).filter(|_| own_start > 0) {
            let head = &own[..own.char_indices().nth(2).map_or(own.len(), |(i, _)| i)];
            each_gram_in(&[b"\n", head.as_bytes()], |g| first_time(seen, set, g));
            each_shape_gram(newline.chain(head.chars()), |g| first_time(seen_shapes, shapes, g));
        }
    }

    /// Everything added since the last call as the team index keeps it ([`team_gram`],
    /// [`team_shape`]), in order; starts afresh.
    #[cfg(feature = "team")]
    pub(crate) fn take_ids(&mut self) -> Vec<i32> {
        self.set.sort_unstable();
        self.shapes.sort_unstable();
        let mut out = Vec::with_capacity(self.set.len() + self.shapes.len());
        out.extend(self.set.iter().map(|&g| team_gram(g)));
        out.extend(self.shapes.iter().map(|&g| team_shape(g)));
        self.clear();
        out
    }

    /// Forgets everything added since the last take.
    fn clear(&mut self) {
        for &g in &self.set {
            self.seen[(g / 64) as usize] = 0;
        }
        for &g in &self.shapes {
            self.seen_shapes[(g / 64) as usize] = 0;
        }
        self.set.clear();
        self.shapes.clear();
    }

    /// The tokens of everything added since the last call (byte trigrams but the
    /// [common](super::common_grams) ones, then shape trigrams, each in order); starts afresh.
    pub(crate) fn take_tokens(&mut self) -> String {
        self.set.sort_unstable();
        self.shapes.sort_unstable();
        let mut out = String::with_capacity((self.set.len() + self.shapes.len()) * 6);
        for &g in self.set.iter().filter(|&&g| !is_common(g)) {
            if !out.is_empty() {
                out.push(' ');
            }
            token(g, &mut out);
        }
        for &g in &self.shapes {
            if !out.is_empty() {
                out.push(' ');
            }
            shape_token(g, &mut out);
        }
        self.clear();
        out
    }
}

/// A byte trigram as the team index keeps it: a number (an array of them under a GIN index
/// costs PostgreSQL a fifth less to grow than the same trigrams as `tsvector` words, and
/// needs no parsing).
#[cfg(feature = "team")]
pub(crate) fn team_gram(g: Gram) -> i32 {
    (g & 0x00ff_ffff) as i32
}

/// A shape trigram as the team index keeps it: above every byte trigram's number.
#[cfg(feature = "team")]
pub(crate) fn team_shape(g: ShapeGram) -> i32 {
    ((1 << 24) | (g & 0x3_ffff)) as i32
}

/// The trigrams of all of a file's chunks together (each given as its text and
/// [`own_start`]), each once, as [`team_gram`] and [`team_shape`] number them: what the team
/// index narrows grep by, a blob at a time.
#[cfg(feature = "team")]
pub(crate) fn blob_grams<'a>(chunks: impl IntoIterator<Item = (&'a str, usize)>) -> Vec<i32> {
    thread_local! {
        static SET: std::cell::RefCell<GramSet> = std::cell::RefCell::new(GramSet::default());
    }
    SET.with_borrow_mut(|set| {
        for (text, own_start) in chunks {
            set.add_chunk(text, own_start);
        }
        set.take_ids()
    })
}

/// The most chunks one `chunk_grams` row covers.
pub(crate) const BLOCK_CHUNKS: usize = 64;
/// A row covers consecutive chunks of a file up to this much text together; a longer chunk
/// has a row of its own. Most chunks of a header-heavy tree are one line (a macro, a
/// declaration), and a row each cost more than their text. More text a row loses grep its
/// precision: a pattern's trigrams found in different chunks of a row make all of them
/// candidates (at 2 KB, `^class \w+Error` on the standard library took 20 ms against 9).
pub(crate) const BLOCK_BYTES: usize = 512;

/// One `chunk_grams` row as made from a file's chunks: how many consecutive chunks it
/// covers, and their trigrams together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    pub chunks: usize,
    pub tokens: String,
}

/// The chunk ids a row covers: a row's id is its first chunk's, and it runs to the next
/// row's (`next`), never past [`BLOCK_CHUNKS`]. (Chunks in between that are no row's are of
/// files whose rows are pending, which grep reads whole anyway.) The id is no more than
/// that: FTS5 stores the gaps between a token's row ids, and naming the count in the id as
/// well (the first id times 16, plus the count) took /usr/include's rows 64 MB rather than
/// 49.
pub(crate) fn row_chunks(row: i64, next: Option<i64>) -> std::ops::Range<i64> {
    let end = row + BLOCK_CHUNKS as i64;
    row..next.map_or(end, |n| n.min(end))
}

/// The rows whose trigrams satisfy the FTS5 query `?1`, each with the next row's id (see
/// [`row_chunks`]).
pub(crate) const MATCHED_ROWS: &str = "SELECT m.rowid,
        (SELECT d.id FROM chunk_grams_docsize d WHERE d.id > m.rowid ORDER BY d.id LIMIT 1)
     FROM chunk_grams m WHERE chunk_grams MATCH ?1";

/// The rows of a file's chunks (each given as its text and [`own_start`], in order), each
/// covering up to [`BLOCK_CHUNKS`] chunks and [`BLOCK_BYTES`] of text. With `ids` (the
/// chunks' ids, in the same order) a row never spans two ids that do not follow each other;
/// without, the chunks are taken to be numbered in order, as a file written afresh is. Made
/// by the parse workers, beside the chunks, so that the one writer only stores them; each
/// thread keeps its set.
pub(crate) fn blocks_of(chunks: &[(&str, usize)], ids: Option<&[i64]>) -> Vec<Block> {
    thread_local! {
        static SET: std::cell::RefCell<GramSet> = std::cell::RefCell::new(GramSet::default());
    }
    SET.with_borrow_mut(|set| {
        let mut out = Vec::new();
        let (mut count, mut bytes) = (0, 0);
        for (k, (text, own_start)) in chunks.iter().enumerate() {
            let follows = ids.is_none_or(|ids| k == 0 || ids[k] == ids[k - 1] + 1);
            if count > 0 && (!follows || count == BLOCK_CHUNKS || bytes + text.len() > BLOCK_BYTES) {
                out.push(Block { chunks: count, tokens: set.take_tokens() });
                (count, bytes) = (0, 0);
            }
            set.add_chunk(text, *own_start);
            count += 1;
            bytes += text.len();
        }
        if count > 0 {
            out.push(Block { chunks: count, tokens: set.take_tokens() });
        }
        out
    })
}

/// [`blocks_of`] a file written afresh, its chunks as the chunker made them.
pub(crate) fn file_blocks(chunks: &[crate::source::chunk::Chunk]) -> Vec<Block> {
    let texts: Vec<(&str, usize)> = chunks.iter().map(chunk_text).collect();
    blocks_of(&texts, None)
}

/// The rows of chunks numbered `ids` (in the order of `blocks`' chunks), as (row id,
/// tokens): `blocks`' own tokens when each covers consecutive ids, or rows made anew from
/// `chunks` when a rewrite kept some old chunks (their old ids) among new ones.
pub(crate) fn rows_of<'a>(
    blocks: &'a [Block],
    ids: &[i64],
    chunks: impl FnOnce() -> Vec<(String, usize)>,
) -> Vec<(i64, Cow<'a, str>)> {
    let mut at = 0;
    for b in blocks {
        if ids[at..at + b.chunks].windows(2).any(|w| w[1] != w[0] + 1) {
            let texts = chunks();
            let texts: Vec<(&str, usize)> = texts.iter().map(|(t, own)| (t.as_str(), *own)).collect();
            return row_ids(blocks_of(&texts, Some(ids)).into_iter().map(|b| (b.chunks, Cow::Owned(b.tokens))), ids);
        }
        at += b.chunks;
    }
    row_ids(blocks.iter().map(|b| (b.chunks, Cow::Borrowed(b.tokens.as_str()))), ids)
}

/// Each block (how many chunks, its tokens), covering consecutive ids of `ids` in order,
/// with its row id.
pub(super) fn row_ids<T>(blocks: impl Iterator<Item = (usize, T)>, ids: &[i64]) -> Vec<(i64, T)> {
    let mut at = 0;
    blocks
        .map(|(chunks, tokens)| {
            let row = (ids[at], tokens);
            at += chunks;
            row
        })
        .collect()
}

/// Asserts that the trigram rows cover every chunk of the index once, each row starting at
/// a chunk (no row left of a chunk gone).
#[cfg(test)]
pub(crate) fn assert_rows_cover_every_chunk(store: &super::Store) {
    let ids =
        |sql: &str| -> Vec<i64> { store.read(|c| c.prepare(sql)?.query_map([], |r| r.get(0))?.collect()).unwrap() };
    let rows = ids("SELECT id FROM chunk_grams_docsize ORDER BY id");
    let chunks = ids("SELECT id FROM chunks ORDER BY id");
    assert!(rows.iter().all(|r| chunks.binary_search(r).is_ok()), "a row of no chunk: {rows:?} {chunks:?}");
    let mut covered = Vec::new();
    for (k, &row) in rows.iter().enumerate() {
        covered.extend(row_chunks(row, rows.get(k + 1).copied()).filter(|id| chunks.binary_search(id).is_ok()));
    }
    assert_eq!(covered, chunks, "every chunk in one row");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Short chunks share a row up to the block's size and count; a long one has its own;
    /// ids that do not follow each other never share one; a row's id names its chunks.
    #[test]
    fn blocks_group_short_neighbours() {
        let short = "#define A 1";
        let long = "x".repeat(BLOCK_BYTES);
        let texts: Vec<(&str, usize)> = vec![(short, 0), (short, 0), (&long, 0), (short, 0)];
        let sizes = |b: &[Block]| b.iter().map(|b| b.chunks).collect::<Vec<_>>();
        assert_eq!(sizes(&blocks_of(&texts, None)), [2, 1, 1]);
        assert_eq!(sizes(&blocks_of(&texts[..2], Some(&[7, 9]))), [1, 1], "7 and 9 are not neighbours");
        let many = vec![("}", 0); BLOCK_CHUNKS + 1];
        assert_eq!(sizes(&blocks_of(&many, None)), [BLOCK_CHUNKS, 1]);
        let one = blocks_of(&texts[..2], None).swap_remove(0);
        let mut alone = GramSet::default();
        alone.add_chunk(short, 0);
        assert_eq!(one.tokens, alone.take_tokens(), "the same text twice: its trigrams once");
        assert_eq!(row_chunks(5, Some(9)), 5..9);
        assert_eq!(row_chunks(5, None), 5..5 + BLOCK_CHUNKS as i64);
        assert_eq!(row_chunks(5, Some(500)), 5..5 + BLOCK_CHUNKS as i64);
        let blocks = blocks_of(&texts, None);
        let rows = rows_of(&blocks, &[20, 21, 22, 23], Vec::new);
        assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), [20, 22, 23]);
        let texts_of = || texts.iter().map(|(t, own)| (t.to_string(), *own)).collect();
        let rows = rows_of(&blocks, &[10, 3, 11, 12], texts_of);
        assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), [10, 3, 11, 12], "3 follows no neighbour");
    }

    /// A file's rows go with it: deleted, it leaves none; rewritten, its rows cover each of
    /// its chunks once.
    #[test]
    fn a_files_rows_follow_its_chunks() {
        use crate::store::testing::{file_write, scanned_for};
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("index"), dir.path()).unwrap();
        let text = "def alpha_zq():\n    pass\n\n\ndef beta_zq():\n    pass\n";
        store.write_batch(&[file_write("a.py", text, true), file_write("b.py", text, true)], &[], "t").unwrap();
        assert_rows_cover_every_chunk(&store);
        let rewritten = "def gamma_zq():\n    pass\n\n\n".to_owned() + text;
        store.write_batch(&[file_write("a.py", &rewritten, true)], &["b.py".to_owned()], "t").unwrap();
        assert_rows_cover_every_chunk(&store);
        for name in ["alpha_zq", "beta_zq", "gamma_zq"] {
            assert!(scanned_for(&store, name).iter().all(|c| c.path == "a.py"), "{name}");
            assert!(!scanned_for(&store, name).is_empty(), "{name}");
        }
        store.write_batch(&[], &["a.py".to_owned()], "t").unwrap();
        let rows: i64 =
            store.read(|c| c.query_row("SELECT count(*) FROM chunk_grams_docsize", [], |r| r.get(0))).unwrap();
        assert_eq!(rows, 0, "the file's rows went with it");
    }

    fn grams(text: &str) -> Vec<Gram> {
        let mut v = Vec::new();
        each_gram(text.as_bytes(), |g| v.push(g));
        v
    }

    #[test]
    fn trigrams_are_folded_bytes() {
        assert_eq!(grams("aBc"), grams("abc"));
        assert_eq!(grams("abcd").len(), 2);
        assert_eq!(grams("ab"), Vec::<Gram>::new());
        assert_eq!(grams("\u{212A}ey"), grams("KEY"), "KELVIN SIGN folds to k");
        assert_eq!(grams("cla\u{17F}s"), grams("class"), "LONG S folds to s");
        assert_ne!(grams("é_a"), grams("e_a"), "other bytes stay");
    }

    /// The common trigrams are left out of the index's rows and kept in the team's numbers.
    #[test]
    fn common_trigrams_are_left_out_of_the_rows() {
        let mut set = GramSet::default();
        assert!(is_common(grams("def")[0]) && is_common(grams("ef ")[0]) && !is_common(grams("zq_")[0]));
        set.add("def ");
        assert_eq!(set.take_tokens(), "");
        set.add("def zq_");
        assert_eq!(set.take_tokens().split(' ').count(), 5 - 2, "f z, \" z\", zq_");
        #[cfg(feature = "team")]
        {
            set.add("def ");
            assert_eq!(set.take_ids().len(), 2);
        }
    }

    #[test]
    fn a_set_is_distinct_sorted_and_starts_afresh() {
        let mut set = GramSet::default();
        set.add("abab");
        set.add("aba");
        let first = set.take_tokens();
        assert_eq!(first.split(' ').count(), 2, "aba and bab: {first}");
        let mut t = String::new();
        token(0x616263, &mut t);
        set.add("abc");
        assert_eq!(set.take_tokens(), t);
        assert_eq!(set.take_tokens(), "");
        assert!(t.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()) && t.len() == 5);
    }
}
