//! A project's vectors in memory, for top-k cosine search.
//!
//! Vectors are stored as 4-bit integers, two dimensions a byte, with one f32 scale each (an
//! eighth of f32's size; 100 bytes for the static table's 192 dimensions). Against int8 they
//! halved the vectors on disk (/usr/include: about 200 MB to 100) and moved the eval sets by
//! less than their noise (questions, hybrid NDCG@10 0.564 -> 0.562, semantic 0.310 -> 0.314;
//! issues, commit subjects and the standard library unchanged): a question is matched against
//! a chunk's whole vector, and the rounding of each dimension averages out over hundreds. The
//! query keeps 8 bits. In memory each vector is only its signs, one bit per dimension (24
//! bytes for 192 dimensions): a scan counts agreeing signs with the query's to pick a few
//! hundred candidates, whose stored vectors are then read back and scored exactly. The
//! memory of a large project's vectors is tens of megabytes, and the order of the answer is
//! the exact order of the stored vectors' cosines.

use crate::store::{Store, StoreError};

/// The size of a stored vector of `dims` dimensions ([`encode`]'s): its scale, then two
/// dimensions a byte.
pub(crate) fn encoded_len(dims: usize) -> usize {
    4 + dims.div_ceil(2)
}

/// The dimensions a stored vector of `len` bytes holds, an odd model's zero padding
/// included.
fn slots(len: usize) -> usize {
    2 * (len - 4)
}

/// A vector as stored: an f32 scale (little-endian), then each dimension as a 4-bit integer
/// from -7 to 7 times the scale, the first of each pair in the low half of its byte.
pub(crate) fn encode(v: &[f32]) -> Vec<u8> {
    let scale = step(v, 7.0);
    let nibble = |x: f32| ((x / scale).round().clamp(-7.0, 7.0) as i8 as u8) & 0x0f;
    let mut out = Vec::with_capacity(encoded_len(v.len()));
    out.extend_from_slice(&scale.to_le_bytes());
    out.extend(v.chunks(2).map(|pair| nibble(pair[0]) | pair.get(1).map_or(0, |&x| nibble(x)) << 4));
    out
}

/// The value of one step when `v`'s largest component is `levels` steps (1 for a zero
/// vector).
fn step(v: &[f32], levels: f32) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max > 0.0 { max / levels } else { 1.0 }
}

/// The values of a stored vector's dimensions (`blob` past its scale), in order.
fn values(packed: &[u8]) -> impl Iterator<Item = i8> + '_ {
    // Shifted to the top of a byte and back, so the sign bit of each half is extended.
    packed.iter().flat_map(|&b| [((b << 4) as i8) >> 4, (b as i8) >> 4])
}

/// Adds a stored vector's values (`packed`, past its scale) times `scale` to `out`, one pair
/// of dimensions a byte: the static tier's inner loop (a row per distinct token of a chunk),
/// written so that it vectorizes (through [`values`] it embedded a third slower).
pub(super) fn add_scaled(out: &mut [f32], packed: &[u8], scale: f32) {
    let odd = packed.get(out.len() / 2).copied().filter(|_| out.len() % 2 == 1);
    let mut pairs = out.chunks_exact_mut(2);
    for (pair, &b) in (&mut pairs).zip(packed) {
        pair[0] += f32::from(((b << 4) as i8) >> 4) * scale;
        pair[1] += f32::from((b as i8) >> 4) * scale;
    }
    if let ([last], Some(b)) = (pairs.into_remainder(), odd) {
        *last += f32::from(((b << 4) as i8) >> 4) * scale;
    }
}

/// A query as 8-bit integers, with its scale.
fn quantize(v: &[f32]) -> (f32, Vec<i8>) {
    let scale = step(v, 127.0);
    (scale, v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect())
}

/// Candidates scored exactly per result asked for (and at least `RESCORE_MIN`).
const RESCORE_PER_RESULT: usize = 8;
const RESCORE_MIN: usize = 256;

/// Chunk ids and their sign bits, `words` u64 per vector.
#[derive(Default, Clone)]
struct Signs {
    ids: Vec<i64>,
    signs: Vec<u64>,
}

impl Signs {
    fn push(&mut self, id: i64, vector: &[u8], words: usize) {
        self.ids.push(id);
        let at = self.signs.len();
        self.signs.resize(at + words, 0);
        set_signs(values(vector), &mut self.signs[at..]);
    }

    fn heap_bytes(&self) -> usize {
        self.ids.capacity() * 8 + self.signs.capacity() * 8
    }
}

/// A project's vectors of one model, as sign bits: those loaded from the store, and those
/// embedded since (an edit's few chunks are added without copying the rest). Vectors of
/// chunks deleted since stay until the next load; the exact rescoring reads vectors from
/// the store, which no longer has them, so they never reach an answer.
#[derive(Clone)]
pub(crate) struct VectorIndex {
    pub model: String,
    dims: usize,
    /// u64 words of sign bits per vector.
    words: usize,
    loaded: std::sync::Arc<Signs>,
    added: Signs,
}

impl VectorIndex {
    /// Every vector of `model` in `store`; the first one sets the size (a model's vectors
    /// all have one; any other is skipped).
    pub(crate) fn load(store: &Store, model: &str) -> Result<Self, StoreError> {
        let (mut dims, mut words) = (0, 0);
        let mut loaded = Signs::default();
        let expected = store.count_vectors(model)?;
        store.each_vector(model, |id, blob| {
            if dims == 0 && blob.len() > 4 {
                dims = slots(blob.len());
                words = dims.div_ceil(64);
                loaded.ids.reserve_exact(expected);
                loaded.signs.reserve_exact(expected * words);
            }
            if blob.len() == encoded_len(dims) {
                loaded.push(id, &blob[4..], words);
            }
        })?;
        loaded.ids.shrink_to_fit();
        loaded.signs.shrink_to_fit();
        Ok(Self { model: model.to_owned(), dims, words, loaded: std::sync::Arc::new(loaded), added: Signs::default() })
    }

    /// A copy with `rows` (chunk id, stored vector) added; costs the vectors added since the
    /// last load, not the project's.
    pub(crate) fn with(&self, rows: &[(i64, Vec<u8>)]) -> Self {
        let mut next = self.clone();
        for (id, blob) in rows {
            if next.dims == 0 && blob.len() > 4 {
                next.dims = slots(blob.len());
                next.words = next.dims.div_ceil(64);
            }
            if blob.len() == encoded_len(next.dims) {
                next.added.push(*id, &blob[4..], next.words);
            }
        }
        next
    }

    /// Vectors added since the last load, as a share of those loaded: past some point a
    /// fresh load is cheaper to keep than the copies (and drops deleted chunks' vectors).
    pub(crate) fn added_share(&self) -> f64 {
        self.added.ids.len() as f64 / self.loaded.ids.len().max(4096) as f64
    }

    pub(crate) fn len(&self) -> usize {
        self.loaded.ids.len() + self.added.ids.len()
    }

    /// Heap held: ids and sign bits.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.loaded.heap_bytes() + self.added.heap_bytes()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `k` chunks most similar to `query` (a unit vector), best first, with cosines:
    /// candidates by agreeing signs, then their stored vectors from `store` scored exactly.
    pub(crate) fn top(&self, store: &Store, query: &[f32], k: usize) -> Result<Vec<(i64, f32)>, StoreError> {
        if encoded_len(query.len()) != encoded_len(self.dims) || k == 0 || self.is_empty() {
            return Ok(Vec::new());
        }
        let (qscale, q) = quantize(query);
        let mut qsigns = vec![0u64; self.words];
        set_signs(q.iter().copied(), &mut qsigns);
        let mut agree: Vec<(u32, u32)> = self
            .loaded
            .signs
            .chunks_exact(self.words)
            .chain(self.added.signs.chunks_exact(self.words))
            .enumerate()
            .map(|(i, row)| (row.iter().zip(&qsigns).map(|(a, b)| (!(a ^ b)).count_ones()).sum::<u32>(), i as u32))
            .collect();
        let m = (k * RESCORE_PER_RESULT).max(RESCORE_MIN).min(agree.len());
        if m < agree.len() {
            agree.select_nth_unstable_by(m, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            agree.truncate(m);
        }
        let n = self.loaded.ids.len();
        let id = |i: usize| if i < n { self.loaded.ids[i] } else { self.added.ids[i - n] };
        let ids: Vec<i64> = agree.iter().map(|&(_, i)| id(i as usize)).collect();
        let mut scored: Vec<(i64, f32)> = store
            .vectors_of(&self.model, &ids)?
            .into_iter()
            .filter(|(_, blob)| blob.len() == encoded_len(self.dims))
            .map(|(id, blob)| (id, exact(&blob, &q, qscale)))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        Ok(scored)
    }

    /// The cosines of the chunks `ids` with `query` (a unit vector), from their stored
    /// vectors; a chunk without one is left out.
    pub(crate) fn cosines(&self, store: &Store, query: &[f32], ids: &[i64]) -> Result<Vec<(i64, f32)>, StoreError> {
        if encoded_len(query.len()) != encoded_len(self.dims) || ids.is_empty() {
            return Ok(Vec::new());
        }
        let (qscale, q) = quantize(query);
        Ok(store
            .vectors_of(&self.model, ids)?
            .into_iter()
            .filter(|(_, blob)| blob.len() == encoded_len(self.dims))
            .map(|(id, blob)| (id, exact(&blob, &q, qscale)))
            .collect())
    }
}

/// A stored vector's dot product with a quantised query.
fn exact(blob: &[u8], q: &[i8], qscale: f32) -> f32 {
    let scale = f32::from_le_bytes(blob[..4].try_into().expect("4 bytes"));
    // Read in place: no copy of the row for each candidate of each query.
    let dot: i32 = values(&blob[4..]).zip(q).map(|(x, &y)| i32::from(x) * i32::from(y)).sum();
    dot as f32 * scale * qscale
}

/// Bit `i` of `out` is set when component `i` is positive.
fn set_signs(values: impl Iterator<Item = i8>, out: &mut [u64]) {
    for (i, v) in values.enumerate() {
        if v > 0 {
            out[i / 64] |= 1 << (i % 64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Signs pick the candidates, stored vectors decide: the answer holds the exact nearest.
    #[test]
    fn top_finds_the_exact_nearest_through_signs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let body: String = (0..3000).map(|i| format!("def f{i}():\n    return {i}\n\n")).collect();
        std::fs::write(root.join("a.py"), body).unwrap();
        let store = Store::open(&root.join(".booger"), root).unwrap();
        crate::engine::index::run(
            root,
            &store,
            crate::engine::index::Options::default(),
            &crate::engine::index::Progress::default(),
        )
        .unwrap();
        let ids: Vec<i64> = store.chunks_without_vectors("m", 0, 10_000).unwrap().iter().map(|c| c.id).collect();
        // Deterministic pseudo-random unit vectors.
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        let vectors: Vec<Vec<f32>> = ids
            .iter()
            .map(|_| {
                let mut v: Vec<f32> = (0..128).map(|_| next()).collect();
                crate::domain::embed::normalize(&mut v);
                v
            })
            .collect();
        let rows: Vec<(i64, Vec<u8>)> = ids.iter().zip(&vectors).map(|(id, v)| (*id, encode(v))).collect();
        store.save_vectors("m", &rows).unwrap();
        let index = VectorIndex::load(&store, "m").unwrap();
        assert_eq!(index.len(), ids.len());
        assert!(index.heap_bytes() < ids.len() * (8 + 16 + 8), "{} bytes", index.heap_bytes());
        let mut found = 0;
        for probe in (0..ids.len()).step_by(97) {
            let mut q: Vec<f32> = vectors[probe].iter().map(|x| x + next() * 0.05).collect();
            crate::domain::embed::normalize(&mut q);
            // The nearest as stored: the signs must not lose what the stored vectors hold.
            let mut exact: Vec<(i64, f32)> =
                rows.iter().map(|(id, blob)| (*id, crate::domain::embed::cosine(&stored(blob), &q))).collect();
            exact.sort_by(|a, b| b.1.total_cmp(&a.1));
            let top = index.top(&store, &q, 10).unwrap();
            assert_eq!(top[0].0, ids[probe], "the vector itself comes first");
            found += exact[..10].iter().filter(|(id, _)| top.iter().any(|(t, _)| t == id)).count();
        }
        let asked = ids.len().div_ceil(97) * 10;
        assert!(found as f64 >= 0.9 * asked as f64, "recall@10 {found}/{asked}");
    }

    /// A stored vector's values times its scale.
    fn stored(blob: &[u8]) -> Vec<f32> {
        let scale = f32::from_le_bytes(blob[..4].try_into().unwrap());
        values(&blob[4..]).map(|x| f32::from(x) * scale).collect()
    }

    #[test]
    fn encoded_vectors_keep_their_cosines() {
        let mut a: Vec<f32> = (0..64).map(|i| (i as f32 * 0.37).sin()).collect();
        crate::domain::embed::normalize(&mut a);
        let blob = encode(&a);
        assert_eq!(blob.len(), 4 + 32);
        let scale = f32::from_le_bytes(blob[..4].try_into().unwrap());
        let back = stored(&blob);
        let cosine = crate::domain::embed::cosine(&a, &back);
        assert!(cosine > 0.99, "{cosine}");
        // Each dimension within half a step of its value; the extremes at ±7 steps.
        for (x, y) in a.iter().zip(&back) {
            assert!((x - y).abs() <= scale / 2.0 + 1e-6, "{x} {y}");
        }
        assert_eq!(values(&blob[4..]).map(|x| x.abs()).max(), Some(7));

        // An odd model's last byte holds one dimension and zero.
        let odd = encode(&[1.0, -0.6, 0.25]);
        assert_eq!(odd.len(), encoded_len(3));
        assert_eq!(values(&odd[4..]).collect::<Vec<_>>(), [7, -4, 2, 0]);

        // The static tier's sum reads the same values.
        let mut sum = vec![0f32; 64];
        add_scaled(&mut sum, &blob[4..], scale);
        assert_eq!(sum, back);
        let mut sum = vec![1f32; 3];
        add_scaled(&mut sum, &odd[4..], 2.0);
        assert_eq!(sum, [15.0, -7.0, 5.0]);
    }
}
