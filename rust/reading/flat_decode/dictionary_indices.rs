//! A data page's dictionary indices (a bit width, then RLE / bit-packed runs): unpacked in
//! one pass, or read where a selected row's lies, and checked against the dictionary.

use super::*;

/// Decodes a page's `stored` dictionary indices (`values`: the bit width, then the RLE
/// runs) into `indices`, each checked to be below `dictionary_len`.
pub(super) fn decode_indices(
    values: &[u8],
    stored: usize,
    dictionary_len: usize,
    indices: &mut Vec<u32>,
) -> Result<(), DecodeError> {
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
/// read each selected one where it lies (a cursor: a few nanoseconds each): from one row
/// in eight, the cursor costs more than unpacking everything.
pub(super) fn dense_selection(selected: usize, stored: usize) -> bool {
    selected.saturating_mul(8) >= stored
}

/// A cursor over a page's dictionary indices (`values`: the bit width, then the RLE runs).
pub(super) fn indices_cursor(values: &[u8]) -> Result<rle_hybrid::Cursor<'_>, DecodeError> {
    let (&width, data) = values.split_first().unwrap_or((&0, &[]));
    rle_hybrid::Cursor::new(data, width).map_err(indices_error)
}

/// The dictionary indices of a page's wanted values: all `stored` unpacked into a buffer in
/// one pass (`whole`: every row, or enough of them, is wanted), or each read where it lies.
pub(super) enum PageKeys<'a> {
    Unpacked(&'a [u32]),
    Cursor(rle_hybrid::Cursor<'a>),
}

impl<'a> PageKeys<'a> {
    /// The keys of a page whose `stored` indices are `values` (the bit width, then the
    /// runs), into a dictionary of `dictionary_len`; `indices`: the buffer unpacked into.
    pub(super) fn new(
        values: &'a [u8],
        stored: usize,
        dictionary_len: usize,
        whole: bool,
        indices: &'a mut Vec<u32>,
    ) -> Result<Self, DecodeError> {
        if !whole && stored > 0 {
            return Ok(Self::Cursor(indices_cursor(values)?));
        }
        match whole {
            true => decode_indices(values, stored, dictionary_len, indices)?,
            // No value stored: no row asks for one.
            false => indices.clear(),
        }
        Ok(Self::Unpacked(indices))
    }

    /// The index of stored value `i`, checked below the dictionary's length `len`.
    pub(super) fn get(&mut self, i: usize, len: usize) -> Result<u32, DecodeError> {
        let key = match self {
            Self::Unpacked(indices) => {
                indices.get(i).copied().ok_or_else(|| DecodeError::Corrupt("a null page asked for a value".into()))?
            }
            Self::Cursor(cursor) => cursor.get(i).map_err(indices_error)?,
        };
        match (key as usize) < len {
            true => Ok(key),
            false => Err(outside(key, len)),
        }
    }
}

/// A dictionary index past the end of a dictionary of `len` values.
pub(super) fn outside(index: u32, len: usize) -> DecodeError {
    DecodeError::Corrupt(format!("dictionary index {index} in a dictionary of {len}"))
}

/// A failure decoding a page's dictionary indices.
pub(super) fn indices_error(reason: String) -> DecodeError {
    DecodeError::Corrupt(format!("dictionary indices: {reason}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key at or past the dictionary's end is refused by name, read where it lies or
    /// unpacked; a page with no value stored answers no row.
    #[test]
    fn keys_outside_the_dictionary_are_refused() {
        // Bit width 2, then one RLE run of four 3s (header 4 << 1, the value in a byte).
        let values = [2u8, 4 << 1, 3];
        let mut indices = Vec::new();
        let mut keys = PageKeys::new(&values, 4, 4, false, &mut indices).unwrap();
        assert_eq!(keys.get(2, 4).unwrap(), 3);
        assert!(keys.get(0, 3).unwrap_err().to_string().contains("dictionary index 3 in a dictionary of 3"));
        assert!(PageKeys::new(&values, 4, 3, true, &mut indices).is_err());
        let mut unpacked = PageKeys::new(&values, 4, 4, true, &mut indices).unwrap();
        assert_eq!(unpacked.get(3, 4).unwrap(), 3);
        assert!(unpacked.get(0, 3).is_err());
        let mut none = PageKeys::new(&[], 0, 4, false, &mut indices).unwrap();
        assert!(none.get(0, 4).unwrap_err().to_string().contains("a null page"));
    }
}
