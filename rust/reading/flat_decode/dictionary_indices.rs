//! A data page's dictionary indices (a bit width, then RLE / bit-packed runs): unpacked in
//! one pass, or read where a selected row's lies, and checked against the dictionary.

use super::*;

/// Decodes a page's `stored` dictionary indices (`values`: the bit width, then the RLE
/// runs) into `indices`, each checked to be below `dictionary_len`.
pub(super) fn decode_indices(values: &[u8], stored: usize, dictionary_len: usize, indices: &mut Vec<u32>) -> Result<(), DecodeError> {
    indices.clear();
    let (&width, data) = values.split_first().unwrap_or((&0, &[]));
    rle_hybrid::decode_values(data, width, stored, indices).map_err(indices_error)?;
    // An or of comparisons (vectorized), not a max (a branch per index without SSE4.1).
    let len = u32::try_from(dictionary_len).unwrap_or(u32::MAX);
    match indices.iter().fold(false, |outside, &k| outside | (k >= len)) {
        true => Err(outside(indices.iter().copied().max().unwrap_or(0), dictionary_len)),
        false => Ok(()),
    }
}

/// Whether `selected` rows of a page of `stored` values are enough to unpack all its
/// dictionary indices in one pass (under a nanosecond each, eight at a time) rather than
/// read each selected one where it lies (a cursor: a few nanoseconds each). At ~25% of the
/// rows selected the cursor took ~10% of a read's CPU.
pub(super) fn dense_selection(selected: usize, stored: usize) -> bool {
    selected.saturating_mul(8) >= stored
}

/// A cursor over a page's dictionary indices (`values`: the bit width, then the RLE runs).
pub(super) fn indices_cursor(values: &[u8]) -> Result<rle_hybrid::Cursor<'_>, DecodeError> {
    let (&width, data) = values.split_first().unwrap_or((&0, &[]));
    rle_hybrid::Cursor::new(data, width).map_err(indices_error)
}

/// A dictionary index past the end of a dictionary of `len` values.
pub(super) fn outside(index: u32, len: usize) -> DecodeError {
    DecodeError::Corrupt(format!("dictionary index {index} in a dictionary of {len}"))
}

/// A failure decoding a page's dictionary indices.
pub(super) fn indices_error(reason: String) -> DecodeError {
    DecodeError::Corrupt(format!("dictionary indices: {reason}"))
}
