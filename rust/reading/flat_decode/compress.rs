//! The selected rows' values of a page, appended to the output a 64-row word of the
//! selection at a time: a word's values compressed with AVX-512 (`vpcompressd` /
//! `vpcompressq`, 16 or 8 values a step) where the CPU has it, else with AVX2 (a
//! permutation looked up per 8 or 4 values), else its set bits walked.
//!
//! With a quarter of the rows selected, reading each selected row's value where it lies
//! (find the next set bit, bounds-check, load, store) was, profiled, the largest part of a PLAIN column's
//! decode after decompression; a compress moves 8 or 16 values in a few cycles whatever
//! the mask. (Polars filters its plain pages the same way.) The compress is done in a
//! register and stored whole (a compressing store to memory is microcoded on some AMD
//! cores), so the output keeps a vector's room past its last value.

use arrow::buffer::BooleanBuffer;

pub(crate) use super::fixed_width::Native;

/// The values' room an output keeps past its last value for [`append_selected`] (a vector
/// of the narrowest values): reserved with the output, so the last page's values do not
/// regrow (and copy) it.
pub(super) const SLACK: usize = 16;

/// Appends to `out` the values (`T::WIDTH` bytes each, little-endian, the `i`-th at `i *
/// T::WIDTH` in `values`) of the rows `selected` sets (`count` of them), in order.
/// `false`, with nothing appended, when `values` does not hold a selected row's value.
/// (Rows 0, 3, 6 of a page of the values 0, 10, 20, ...: 0, 30, 60 appended.)
pub(crate) fn append_selected<T: Native>(
    values: &[u8],
    selected: &BooleanBuffer,
    count: usize,
    out: &mut Vec<T::Out>,
) -> bool {
    debug_assert_eq!(count, selected.count_set_bits());
    // Values for every row of the selection (a whole page) need no search for the last.
    if values.len() / T::WIDTH < selected.len() {
        let Some(last) = crate::selection::mask::last_set(selected) else { return true };
        if values.len() / T::WIDTH <= last {
            return false;
        }
    }
    // A vector's room past the last value: every step stores a whole vector.
    out.reserve(count + SLACK);
    #[cfg(target_arch = "x86_64")]
    if T::SAME_BITS && std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F; `values` holds every selected row's value and `out`
        // has room for the selected values plus a vector.
        unsafe { append_selected_avx512::<T>(values, selected, out) };
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    if T::SAME_BITS && std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has AVX2 and POPCNT; `values` holds every selected row's value
        // and `out` has room for the selected values plus a vector.
        unsafe { append_selected_avx2::<T>(values, selected, out) };
        return true;
    }
    // SAFETY: `values` holds every selected row's value; `out` has room for them.
    unsafe { append_selected_scalar::<T>(values, selected, out) };
    true
}

/// [`append_selected`] a set bit at a time: each word's lowest set bit taken and cleared,
/// its value written at the output's end (no capacity check or bounds check a value: the
/// caller checked both once; an iterator of set bits with `extend` did both a value).
///
/// # Safety
/// `values` holds the value of every row `selected` sets; `out` has room for them.
unsafe fn append_selected_scalar<T: Native>(values: &[u8], selected: &BooleanBuffer, out: &mut Vec<T::Out>) {
    let mut len = out.len();
    let base = out.as_mut_ptr();
    // Bits past the selection's end are padded as zeros: only selected rows are read.
    for (index, word) in selected.bit_chunks().iter_padded().enumerate() {
        // SAFETY: the word's set rows are selected, so their values lie in `values`; `out`
        // has room for every selected value.
        unsafe { write_set_bits::<T>(values, index * 64, word, base, &mut len) };
    }
    // SAFETY: every value below `len` was written above.
    unsafe { out.set_len(len) };
}

/// Writes the values of the rows `first + i` for the bits `i` that `word` sets, in order,
/// at `base + len` on, advancing `len`: each lowest set bit taken and cleared.
///
/// # Safety
/// Each such row's value lies in `values`; there is room for them at `base + len`.
#[inline(always)]
unsafe fn write_set_bits<T: Native>(values: &[u8], first: usize, mut word: u64, base: *mut T::Out, len: &mut usize) {
    while word != 0 {
        let row = first + word.trailing_zeros() as usize;
        // SAFETY: the caller's guarantee.
        unsafe { base.add(*len).write(T::read(values.get_unchecked(row * T::WIDTH..(row + 1) * T::WIDTH))) };
        *len += 1;
        word &= word - 1;
    }
}

/// [`append_selected`] with AVX-512: a word whose 64 rows' values all lie in `values` is
/// compressed a vector at a time; a word reaching past them (the page's last), a set bit at
/// a time.
///
/// # Safety
/// The CPU has AVX-512F; `T` is 4 or 8 bytes, its stored bits ([`Native::SAME_BITS`]);
/// `values` holds the value of every row `selected` sets; `out` has room for the selected
/// values plus [`SLACK`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn append_selected_avx512<T: Native>(values: &[u8], selected: &BooleanBuffer, out: &mut Vec<T::Out>) {
    use std::arch::x86_64::*;
    let stored = values.len() / T::WIDTH;
    let mut len = out.len();
    let base = out.as_mut_ptr();
    for (index, word) in selected.bit_chunks().iter_padded().enumerate() {
        if word == 0 {
            continue;
        }
        let first = index * 64;
        if first + 64 > stored {
            // The last word: its rows past the page's values are not selected, but a
            // vector load would read them.
            // SAFETY: the word's set rows are selected, so their values lie in `values`;
            // `out` has room for every selected value.
            unsafe { write_set_bits::<T>(values, first, word, base, &mut len) };
            continue;
        }
        // SAFETY (both arms): the word's 64 values lie in `values` (loads unaligned); each
        // store writes one vector at `len`, below the room reserved (the selected values
        // so far plus SLACK), and `len` advances by the values it kept.
        unsafe {
            let source = values.as_ptr().add(first * T::WIDTH);
            let destination = base.add(len).cast::<u8>();
            match T::WIDTH {
                8 => {
                    for step in 0..8 {
                        let mask = (word >> (step * 8)) as u8;
                        let kept = _mm512_maskz_compress_epi64(mask, _mm512_loadu_si512(source.add(step * 64).cast()));
                        _mm512_storeu_si512(destination.add(len_bytes_before(word, step * 8, 8)).cast(), kept);
                    }
                }
                _ => {
                    for step in 0..4 {
                        let mask = (word >> (step * 16)) as u16;
                        let kept = _mm512_maskz_compress_epi32(mask, _mm512_loadu_si512(source.add(step * 64).cast()));
                        _mm512_storeu_si512(destination.add(len_bytes_before(word, step * 16, 4)).cast(), kept);
                    }
                }
            }
        }
        len += word.count_ones() as usize;
    }
    // SAFETY: every value below `len` was written above.
    unsafe { out.set_len(len) };
}

/// Per 8-bit mask, the lanes its set bits name, in order, a byte each (the rest 0): the
/// permutation that moves a vector's selected 32-bit values to its front.
const KEPT_LANES_OF_8: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut lane, mut kept) = (0, 0);
        while lane < 8 {
            if mask >> lane & 1 == 1 {
                table[mask] |= (lane as u64) << (8 * kept);
                kept += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
};

/// Per 4-bit mask, the 32-bit lanes of the 64-bit values its set bits name, in order (two
/// a value), a byte each: the permutation that moves a vector's selected 64-bit values to
/// its front.
const KEPT_LANES_OF_4: [u64; 16] = {
    let mut table = [0u64; 16];
    let mut mask = 0;
    while mask < 16 {
        let (mut value, mut kept) = (0, 0);
        while value < 4 {
            if mask >> value & 1 == 1 {
                table[mask] |= ((2 * value) as u64) << (16 * kept) | ((2 * value + 1) as u64) << (16 * kept + 8);
                kept += 1;
            }
            value += 1;
        }
        mask += 1;
    }
    table
};

/// [`append_selected`] with AVX2, which has no compress: each vector's selected values are
/// moved to its front by a permutation looked up from its mask (eight 4-byte or four
/// 8-byte values a step), the whole vector stored, and the output advanced by the values
/// kept. A word reaching past the page's values (its last), a set bit at a time.
///
/// # Safety
/// The CPU has AVX2 and POPCNT; `T` is 4 or 8 bytes, its stored bits
/// ([`Native::SAME_BITS`]); `values` holds the value of every row `selected` sets; `out`
/// has room for the selected values plus [`SLACK`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn append_selected_avx2<T: Native>(values: &[u8], selected: &BooleanBuffer, out: &mut Vec<T::Out>) {
    use std::arch::x86_64::*;
    let stored = values.len() / T::WIDTH;
    let mut len = out.len();
    let base = out.as_mut_ptr();
    for (index, word) in selected.bit_chunks().iter_padded().enumerate() {
        if word == 0 {
            continue;
        }
        let first = index * 64;
        if first + 64 > stored {
            // SAFETY: the word's set rows are selected, so their values lie in `values`;
            // `out` has room for every selected value.
            unsafe { write_set_bits::<T>(values, first, word, base, &mut len) };
            continue;
        }
        // SAFETY (the block): the word's 64 values lie in `values` (loads unaligned); each
        // store writes one vector (8 or 4 values) at `len`, below the room reserved (the
        // selected values so far plus SLACK), and `len` advances by the values it kept.
        unsafe {
            let source = values.as_ptr().add(first * T::WIDTH);
            let (step_values, steps, table): (usize, usize, &[u64]) = match T::WIDTH {
                8 => (4, 16, &KEPT_LANES_OF_4),
                _ => (8, 8, &KEPT_LANES_OF_8),
            };
            for step in 0..steps {
                let mask = (word >> (step * step_values)) as usize & ((1 << step_values) - 1);
                let lanes = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(*table.get_unchecked(mask) as i64));
                let loaded = _mm256_loadu_si256(source.add(step * 32).cast());
                _mm256_storeu_si256(base.add(len).cast(), _mm256_permutevar8x32_epi32(loaded, lanes));
                len += mask.count_ones() as usize;
            }
        }
    }
    // SAFETY: every value below `len` was written above.
    unsafe { out.set_len(len) };
}

/// The bytes taken by the values of the set bits of `word` below bit `bit`, `width` bytes
/// each: where the step starting at `bit` stores within the word's output.
#[inline(always)]
fn len_bytes_before(word: u64, bit: usize, width: usize) -> usize {
    let below = if bit == 0 { 0 } else { word << (64 - bit) };
    below.count_ones() as usize * width
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bytes<T: Native<Out = T> + arrow::datatypes::ArrowNativeType>(values: &[T]) -> Vec<u8> {
        use arrow::datatypes::ToByteSlice;
        values.to_byte_slice().to_vec()
    }

    fn check<T: Native<Out = T> + arrow::datatypes::ArrowNativeType + std::fmt::Debug + PartialEq>(
        values: Vec<T>,
        mask: Vec<bool>,
        offset: usize,
    ) -> Result<(), TestCaseError> {
        let page = bytes(&values);
        let selected =
            BooleanBuffer::from(mask).slice(offset.min(values.len()), values.len() - offset.min(values.len()));
        let shifted = &page[offset.min(values.len()) * T::WIDTH..];
        let expected: Vec<T> = selected.set_indices().map(|row| values[offset + row]).collect();
        let mut out = vec![T::default(); 3];
        prop_assert!(append_selected::<T>(shifted, &selected, expected.len(), &mut out));
        prop_assert_eq!(&out[3..], &expected[..]);
        let mut scalar: Vec<T> = Vec::with_capacity(expected.len());
        // SAFETY: the selection's rows lie in the page; room for each selected value.
        unsafe { append_selected_scalar::<T>(shifted, &selected, &mut scalar) };
        prop_assert_eq!(scalar, expected);
        Ok(())
    }

    proptest! {
        /// Whatever the mask, its offset and the page's length: the selected values, in
        /// order, after what the output held — the same by vectors (AVX-512, else AVX2) and a
        /// bit at a time.
        #[test]
        fn the_selected_values_in_order(
            values in proptest::collection::vec(any::<u64>(), 0..400),
            density in 0u8..4,
            seed in any::<u64>(),
            offset in 0usize..70,
        ) {
            let mut state = seed | 1;
            let mask: Vec<bool> = values.iter().map(|_| {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17;
                match density { 0 => state % 17 == 0, 1 => state % 4 == 0, 2 => state % 2 == 0, _ => state % 8 != 0 }
            }).collect();
            check(values.clone(), mask.clone(), offset)?;
            let narrow: Vec<u32> = values.iter().map(|&v| v as u32 ^ (v >> 32) as u32).collect();
            check(narrow, mask, offset)?;
        }
    }

    #[test]
    fn a_selected_row_past_the_values_is_refused() {
        let page = bytes(&[1u64, 2, 3]);
        let mut out: Vec<u64> = Vec::new();
        assert!(!append_selected::<u64>(&page, &BooleanBuffer::from(vec![false, false, false, true]), 1, &mut out));
        assert!(out.is_empty());
        assert!(append_selected::<u64>(&page, &BooleanBuffer::from(vec![false, false, false, false]), 0, &mut out));
    }
}
