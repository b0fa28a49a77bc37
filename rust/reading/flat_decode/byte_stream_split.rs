//! BYTE_STREAM_SPLIT values rejoined into PLAIN's layout.
//!
//! A page of `stored` values of `width` bytes holds `width` streams of `stored` bytes:
//! byte `k` of value `i` is byte `i` of stream `k`. Rejoining is a transpose of a
//! `width` × `stored` byte matrix. Byte by byte, it costs a load and a store per byte;
//! for 4- and 8-byte values (FLOAT, DOUBLE, INT32, INT64) eight values are rejoined at
//! once instead: a word of eight bytes read from each stream, the words transposed as a
//! matrix of bytes in three rounds of masked swaps (blocks of 4, 2, then 1 byte), and
//! each word written out as a value (or, for 4-byte values, two).
//!
//! ```text
//! stream 0: a0 b0 c0 …     value a: a0 a1 a2 a3
//! stream 1: a1 b1 c1 …  →  value b: b0 b1 b2 b3
//! stream 2: a2 b2 c2 …     value c: c0 c1 c2 c3
//! stream 3: a3 b3 c3 …     …
//! ```

use std::mem::MaybeUninit;

/// Writes every byte of `values`: the first `values.len() / width` of the `stored` values
/// of `width` bytes in the BYTE_STREAM_SPLIT `data` (`width * stored` bytes, and no more
/// values wanted than stored: checked by the caller), in PLAIN's layout.
pub(super) fn join(data: &[u8], width: usize, stored: usize, values: &mut [MaybeUninit<u8>]) {
    let n = values.len() / width;
    debug_assert!(data.len() == width * stored && n <= stored && values.len() == n * width);
    let blocks = match width {
        8 => join_blocks_of_8(data, stored, n, values),
        4 => join_blocks_of_4(data, stored, n, values),
        _ => 0,
    };
    // What is left (every value of other widths): byte by byte.
    for (i, value) in values.chunks_exact_mut(width).enumerate().skip(blocks) {
        for (k, byte) in value.iter_mut().enumerate() {
            byte.write(data[k * stored + i]);
        }
    }
}

/// Writes `bytes` to `out` (of the same length).
#[inline(always)]
fn put(out: &mut [MaybeUninit<u8>], bytes: &[u8]) {
    for (slot, &byte) in out.iter_mut().zip(bytes) {
        slot.write(byte);
    }
}

/// The eight bytes from byte `at` of stream `k` (of `stored` bytes) of `data`.
#[inline(always)]
fn word(data: &[u8], stored: usize, k: usize, at: usize) -> u64 {
    let from = k * stored + at;
    u64::from_le_bytes(data[from..from + 8].try_into().expect("8 bytes"))
}

/// Swaps, between rows `a` and `b` of a matrix of bytes held as words (byte `j` of word
/// `r` is column `j` of row `r`), the `bytes`-wide blocks `mask` marks in `b` with those
/// `bytes` columns further in `a`: one round of a transpose.
#[inline(always)]
fn swap(rows: &mut [u64], a: usize, b: usize, bytes: u32, mask: u64) {
    let t = ((rows[a] >> (8 * bytes)) ^ rows[b]) & mask;
    rows[a] ^= t << (8 * bytes);
    rows[b] ^= t;
}

const LOW_4_OF_8: u64 = 0x0000_0000_FFFF_FFFF;
const LOW_2_OF_4: u64 = 0x0000_FFFF_0000_FFFF;
const LOW_1_OF_2: u64 = 0x00FF_00FF_00FF_00FF;

/// 8-byte values, eight at a time: an 8 × 8 transpose. Answers how many values it wrote
/// (whole blocks of eight).
fn join_blocks_of_8(data: &[u8], stored: usize, n: usize, values: &mut [MaybeUninit<u8>]) -> usize {
    let blocks = n / 8;
    for (block, out) in values.chunks_exact_mut(64).take(blocks).enumerate() {
        let at = block * 8;
        let mut rows: [u64; 8] = std::array::from_fn(|k| word(data, stored, k, at));
        for k in 0..4 {
            swap(&mut rows, k, k + 4, 4, LOW_4_OF_8);
        }
        for k in [0, 1, 4, 5] {
            swap(&mut rows, k, k + 2, 2, LOW_2_OF_4);
        }
        for k in [0, 2, 4, 6] {
            swap(&mut rows, k, k + 1, 1, LOW_1_OF_2);
        }
        for (value, row) in out.chunks_exact_mut(8).zip(rows) {
            put(value, &row.to_le_bytes());
        }
    }
    blocks * 8
}

/// 4-byte values, eight at a time: two 4 × 4 transposes side by side in four words, whose
/// low halves are then values 0–3 and high halves values 4–7.
fn join_blocks_of_4(data: &[u8], stored: usize, n: usize, values: &mut [MaybeUninit<u8>]) -> usize {
    let blocks = n / 8;
    for (block, out) in values.chunks_exact_mut(32).take(blocks).enumerate() {
        let at = block * 8;
        let mut rows: [u64; 4] = std::array::from_fn(|k| word(data, stored, k, at));
        for k in [0, 1] {
            swap(&mut rows, k, k + 2, 2, LOW_2_OF_4);
        }
        for k in [0, 2] {
            swap(&mut rows, k, k + 1, 1, LOW_1_OF_2);
        }
        let (low, high) = out.split_at_mut(16);
        for ((first, second), row) in low.chunks_exact_mut(4).zip(high.chunks_exact_mut(4)).zip(rows) {
            let bytes = row.to_le_bytes();
            put(first, &bytes[..4]);
            put(second, &bytes[4..]);
        }
    }
    blocks * 8
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `join` into a buffer of `n` values.
    fn join_into(data: &[u8], width: usize, stored: usize, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n * width);
        join(data, width, stored, &mut out.spare_capacity_mut()[..n * width]);
        // SAFETY: `join` wrote every byte of the first `n * width`.
        unsafe { out.set_len(n * width) };
        out
    }

    /// The definition, a byte at a time.
    fn joined(data: &[u8], width: usize, stored: usize, n: usize) -> Vec<u8> {
        (0..n).flat_map(|i| (0..width).map(move |k| data[k * stored + i])).collect()
    }

    #[test]
    fn two_values_of_two_bytes() {
        let out = join_into(&[0x02, 0x04, 0x01, 0x03], 2, 2, 2);
        assert_eq!(out, [0x02, 0x01, 0x04, 0x03]); // 0x0102 and 0x0304
    }

    #[test]
    fn doubles_round_trip_through_the_streams() {
        let values: Vec<f64> = (0..37).map(|i| i as f64 * -1.5e10 + 0.25).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let streams: Vec<u8> = (0..8).flat_map(|k| bytes.iter().skip(k).step_by(8).copied()).collect();
        assert_eq!(join_into(&streams, 8, values.len(), values.len()), bytes);
    }

    proptest! {
        #[test]
        fn equals_the_definition(
            width in prop::sample::select(vec![1usize, 2, 4, 8, 12, 16]),
            stored in 0usize..70,
            cut in 0usize..70,
            seed in any::<u64>(),
        ) {
            let n = cut.min(stored);
            let data: Vec<u8> = (0..width * stored).map(|i| (seed.rotate_left(i as u32 % 64) as u8) ^ i as u8).collect();
            prop_assert_eq!(join_into(&data, width, stored, n), joined(&data, width, stored, n));
        }
    }
}
