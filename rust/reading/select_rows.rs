//! An array's rows where a mask is set, as a new array: what `arrow::compute::filter` does,
//! with fixed-width values moved by AVX-512 compress (8 or 16 values a step, whatever the
//! mask) and their validity by `pext` where the CPU has them.
//!
//! Late materialization filters a predicate column that is also projected down to the rows
//! the other predicates kept ([`cached_reader`](super::cached_reader)). Arrow's filter
//! takes a row index at a time (its bitmap extract without `pext` unless the build enables
//! BMI2), which showed in profiles of moderately selective filters.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Array, ArrayRef, Float64Array};
//! use arrow::buffer::BooleanBuffer;
//! use pqsift::reading::select_rows::select_rows;
//! let values: ArrayRef = Arc::new(Float64Array::from(vec![Some(1.0), None, Some(3.0), Some(4.0)]));
//! let mask = BooleanBuffer::from(vec![false, true, true, false]);
//! let kept = select_rows(&values, &mask).unwrap();
//! assert_eq!(kept.as_ref(), &Float64Array::from(vec![None, Some(3.0)]) as &dyn Array);
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayData, ArrayRef, AsArray, BooleanArray, DictionaryArray, make_array};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow::datatypes::Int32Type;
use arrow::error::ArrowError;

use crate::reading::flat_decode::compress::{Native, append_selected};
use crate::selection::mask;

/// The rows of `values` whose bit of `mask` (as long as `values`) is set, in order.
pub fn select_rows(values: &ArrayRef, mask: &BooleanBuffer) -> Result<ArrayRef, ArrowError> {
    if mask.len() != values.len() {
        return Err(ArrowError::InvalidArgumentError(format!(
            "a mask of {} rows for an array of {}",
            mask.len(),
            values.len()
        )));
    }
    match fixed_width(values, mask).or_else(|| dictionary_keys(values, mask)) {
        Some(selected) => Ok(selected),
        None => arrow::compute::filter(values, &BooleanArray::new(mask.clone(), None)),
    }
}

/// [`select_rows`] for a primitive array of 4- or 8-byte values; `None` for any other.
fn fixed_width(values: &ArrayRef, mask: &BooleanBuffer) -> Option<ArrayRef> {
    let data = values.to_data();
    let width = data.data_type().primitive_width().filter(|width| matches!(width, 4 | 8))?;
    let [buffer] = data.buffers() else { return None };
    let bytes = buffer.as_slice().get(data.offset() * width..)?;
    let count = crate::selection::count_set_bits(mask);
    let kept = match width {
        8 => compressed::<u64>(bytes, mask, count)?,
        _ => compressed::<u32>(bytes, mask, count)?,
    };
    let nulls = data
        .nulls()
        .filter(|nulls| nulls.null_count() > 0)
        .map(|nulls| NullBuffer::new(mask::compress(nulls.inner(), mask)));
    let selected =
        ArrayData::builder(data.data_type().clone()).len(count).add_buffer(kept).nulls(nulls).build().ok()?;
    Some(make_array(selected))
}

/// [`select_rows`] for a dictionary with 32-bit keys (a predicate's column decoded as one):
/// the kept rows' keys, over the same values; `None` for any other array.
fn dictionary_keys(values: &ArrayRef, mask: &BooleanBuffer) -> Option<ArrayRef> {
    let dictionary = values.as_dictionary_opt::<Int32Type>()?;
    let keys: ArrayRef = Arc::new(dictionary.keys().clone());
    let keys = fixed_width(&keys, mask)?.as_primitive::<Int32Type>().clone();
    // SAFETY: each kept valid key is one of `dictionary`'s, below its values' length.
    Some(Arc::new(unsafe { DictionaryArray::<Int32Type>::new_unchecked(keys, dictionary.values().clone()) }))
}

/// The values (`T::WIDTH` bytes each) of the rows `mask` sets.
fn compressed<T: Native>(bytes: &[u8], mask: &BooleanBuffer, count: usize) -> Option<Buffer> {
    let mut out = Vec::new();
    append_selected::<T>(bytes, mask, count, &mut out).then(|| Buffer::from_vec(out))
}

#[cfg(test)]
mod tests {
    use arrow::array::{Date32Array, Float32Array, Int64Array, StringArray, TimestampMicrosecondArray};
    use proptest::prelude::*;

    use super::*;

    /// Arrow's filter of the same rows: the oracle.
    fn arrow_filter(values: &ArrayRef, mask: &BooleanBuffer) -> ArrayRef {
        arrow::compute::filter(values, &BooleanArray::new(mask.clone(), None)).unwrap()
    }

    proptest! {
        /// Every width and type kept, nulls or none, arrays sliced at any offset: the rows
        /// Arrow's filter keeps.
        #[test]
        fn agrees_with_arrows_filter(
            rows in prop::collection::vec((prop::option::weighted(0.8, any::<i64>()), prop::bool::weighted(0.3)), 0..300),
            offset in 0usize..5,
        ) {
            let mask = BooleanBuffer::from_iter(rows.iter().map(|r| r.1));
            let padded = || (0..offset).map(|_| Some(7i64)).chain(rows.iter().map(|r| r.0));
            let arrays: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from_iter(padded())),
                Arc::new(TimestampMicrosecondArray::from_iter(padded()).with_timezone("UTC")),
                Arc::new(Float32Array::from_iter(padded().map(|v| v.map(|v| v as f32)))),
                Arc::new(Date32Array::from_iter(padded().map(|v| v.map(|v| v as i32)))),
                Arc::new(StringArray::from_iter(padded().map(|v| v.map(|v| v.to_string())))),
                // Keys moved as 4-byte values, the dictionary kept.
                Arc::new(DictionaryArray::<Int32Type>::new(
                    arrow::array::Int32Array::from_iter(padded().map(|v| v.map(|v| (v.unsigned_abs() % 3) as i32))),
                    Arc::new(Float32Array::from(vec![0.5, f32::NAN, -0.0])),
                )),
            ];
            for array in arrays {
                let array = array.slice(offset, rows.len());
                let kept = select_rows(&array, &mask).unwrap();
                prop_assert_eq!(kept.data_type(), array.data_type());
                prop_assert_eq!(kept.to_data(), arrow_filter(&array, &mask).to_data());
            }
        }
    }

    #[test]
    fn a_mask_of_another_length_is_an_error() {
        let values: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        assert!(
            select_rows(&values, &BooleanBuffer::from(vec![true]))
                .unwrap_err()
                .to_string()
                .contains("a mask of 1 rows")
        );
    }
}
