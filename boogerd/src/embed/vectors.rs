//! A project's vectors in memory, for exact top-k cosine search.
//!
//! Vectors are stored and held as int8 with one f32 scale each (a quarter of f32's memory;
//! the rounding changes cosines by about 0.01). A query is quantised the same way, so the
//! scan is integer multiply-adds that the compiler vectorises.

use crate::store::{Store, StoreError};

/// `v` (unit length) as stored: an f32 scale, then one i8 per dimension.
pub fn encode(v: &[f32]) -> Vec<u8> {
    let (scale, q) = quantize(v);
    let mut out = Vec::with_capacity(4 + q.len());
    out.extend_from_slice(&scale.to_le_bytes());
    out.extend(q.iter().map(|&x| x as u8));
    out
}

fn quantize(v: &[f32]) -> (f32, Vec<i8>) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    (scale, v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect())
}

pub struct VectorIndex {
    pub model: String,
    dims: usize,
    ids: Vec<i64>,
    scales: Vec<f32>,
    data: Vec<i8>,
}

impl VectorIndex {
    /// Every vector of `model` in `store`; the first one sets the size (a model's vectors
    /// all have one; any other is skipped).
    pub fn load(store: &Store, model: &str) -> Result<Self, StoreError> {
        let mut index =
            Self { model: model.to_owned(), dims: 0, ids: Vec::new(), scales: Vec::new(), data: Vec::new() };
        store.each_vector(model, |id, blob| {
            if index.dims == 0 && blob.len() > 4 {
                index.dims = blob.len() - 4;
            }
            if blob.len() != 4 + index.dims {
                return;
            }
            index.ids.push(id);
            index.scales.push(f32::from_le_bytes(blob[..4].try_into().expect("4 bytes")));
            index.data.extend(blob[4..].iter().map(|&b| b as i8));
        })?;
        index.ids.shrink_to_fit();
        index.scales.shrink_to_fit();
        index.data.shrink_to_fit();
        Ok(index)
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Heap held: ids, scales and the int8 rows.
    pub fn heap_bytes(&self) -> usize {
        self.ids.capacity() * 8 + self.scales.capacity() * 4 + self.data.capacity()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The `k` chunks most similar to `query` (a unit vector), best first, with cosines.
    pub fn top(&self, query: &[f32], k: usize) -> Vec<(i64, f32)> {
        if query.len() != self.dims || k == 0 {
            return Vec::new();
        }
        let (qscale, q) = quantize(query);
        let mut scored: Vec<(f32, usize)> = self
            .data
            .chunks_exact(self.dims)
            .enumerate()
            .map(|(i, row)| (dot(row, &q) as f32 * self.scales[i] * qscale, i))
            .collect();
        let k = k.min(scored.len());
        if k < scored.len() {
            scored.select_nth_unstable_by(k, |a, b| b.0.total_cmp(&a.0));
            scored.truncate(k);
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().map(|(s, i)| (self.ids[i], s)).collect()
    }
}

fn dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(&x, &y)| x as i32 * y as i32).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_vectors_keep_their_cosines() {
        let mut a: Vec<f32> = (0..64).map(|i| (i as f32 * 0.37).sin()).collect();
        crate::embed::normalize(&mut a);
        let blob = encode(&a);
        assert_eq!(blob.len(), 4 + 64);
        let scale = f32::from_le_bytes(blob[..4].try_into().unwrap());
        let back: Vec<f32> = blob[4..].iter().map(|&b| b as i8 as f32 * scale).collect();
        assert!((crate::embed::cosine(&a, &back) - 1.0).abs() < 0.001);
    }
}
