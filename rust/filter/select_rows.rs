//! `mask ? taken : otherwise`, row by row: how `CASE` and `coalesce` put their branches'
//! values together. Arrow's `zip` copies the arrays run by run (a scalar a value at a
//! time), which on a mask that changes every few rows is a call per row; values of a
//! primitive type are picked here in one pass over the mask's 64-bit words instead, the
//! validity combined a word at a time.
//!
//! ```text
//! mask      [1, 0, 0, 1]
//! taken     [a, b, c, d]   or a constant k
//! otherwise [w, x, y, z]
//! result    [a, x, y, d]   or [k, x, y, k]
//! ```

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ArrowPrimitiveType, BooleanArray, Datum, PrimitiveArray, Scalar, downcast_primitive_array,
};
use arrow::buffer::{BooleanBuffer, NullBuffer, ScalarBuffer};
use arrow::compute::kernels::zip::zip;
use arrow::error::ArrowError;

/// For each row, `taken`'s value where `mask` is set, else `otherwise`'s. `taken` is an array
/// of `otherwise`'s length, or with `taken_constant` one value standing for every row; both
/// of one type. `mask` must have `otherwise`'s length.
pub(super) fn select_rows(
    mask: &BooleanBuffer,
    taken: &ArrayRef,
    taken_constant: bool,
    otherwise: &ArrayRef,
) -> Result<ArrayRef, ArrowError> {
    if taken.data_type() == otherwise.data_type() && (taken_constant || taken.len() == otherwise.len()) {
        let (taken, otherwise): (&dyn Array, &dyn Array) = (taken.as_ref(), otherwise.as_ref());
        downcast_primitive_array!(
            (taken, otherwise) => return Ok(Arc::new(select_primitive(mask, taken, taken_constant, otherwise))),
            _ => {}
        )
    }
    let mask = BooleanArray::new(mask.clone(), None);
    let taken: Box<dyn Datum> =
        if taken_constant { Box::new(Scalar::new(taken.clone())) } else { Box::new(taken.clone()) };
    zip(&mask, taken.as_ref(), otherwise)
}

fn select_primitive<T: ArrowPrimitiveType>(
    mask: &BooleanBuffer,
    taken: &PrimitiveArray<T>,
    taken_constant: bool,
    otherwise: &PrimitiveArray<T>,
) -> PrimitiveArray<T> {
    let rows = otherwise.len();
    // `otherwise`'s values copied whole, then `taken`'s written over them at the mask's set
    // bits: a copy of whole words where every bit is set, else one write a set bit.
    let mut values: Vec<T::Native> = otherwise.values().to_vec();
    let constant = taken_constant.then(|| if taken.is_valid(0) { taken.value(0) } else { T::Native::default() });
    for (word_index, mut word) in mask.bit_chunks().iter_padded().enumerate() {
        let start = word_index * 64;
        let end = (start + 64).min(rows);
        let out = &mut values[start..end];
        if word == u64::MAX && end - start == 64 {
            match constant {
                Some(value) => out.fill(value),
                None => out.copy_from_slice(&taken.values()[start..end]),
            }
            continue;
        }
        while word != 0 {
            let bit = word.trailing_zeros() as usize;
            out[bit] = match constant {
                Some(value) => value,
                None => taken.values()[start + bit],
            };
            word &= word - 1;
        }
    }
    // A row is valid where the side it takes is.
    let all = || BooleanBuffer::new_set(rows);
    let taken_valid = match (taken_constant, taken.nulls()) {
        (true, _) if taken.is_null(0) => BooleanBuffer::new_unset(rows),
        (true, _) | (false, None) => all(),
        (false, Some(nulls)) => nulls.inner().clone(),
    };
    let other_valid = otherwise.nulls().map_or_else(all, |nulls| nulls.inner().clone());
    let valid = &(mask & &taken_valid) | &(&!mask & &other_valid);
    let nulls = NullBuffer::new(valid);
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    PrimitiveArray::<T>::new(ScalarBuffer::from(values), nulls).with_data_type(otherwise.data_type().clone())
}

#[cfg(test)]
mod tests {
    use arrow::array::{Decimal128Array, Float64Array, Int32Array, StringArray};
    use proptest::prelude::*;

    use super::*;

    /// Arrow's `zip`, the reference.
    fn zipped(mask: &BooleanBuffer, taken: &ArrayRef, constant: bool, otherwise: &ArrayRef) -> ArrayRef {
        let mask = BooleanArray::new(mask.clone(), None);
        if constant {
            zip(&mask, &Scalar::new(taken.clone()), otherwise).unwrap()
        } else {
            zip(&mask, taken, otherwise).unwrap()
        }
    }

    proptest! {
        /// Every type, constant or array, NULLs on either side, sliced masks and arrays:
        /// what Arrow's `zip` gives.
        #[test]
        fn equals_arrows_zip(
            rows in prop::collection::vec(
                (any::<bool>(), prop::option::weighted(0.8, any::<i32>()), prop::option::weighted(0.8, any::<i32>())),
                1..200,
            ),
            offset in 0usize..70,
            constant in any::<bool>(),
            kind in 0usize..4,
        ) {
            let offset = offset.min(rows.len() - 1);
            let mask = BooleanBuffer::from_iter(rows.iter().map(|r| r.0)).slice(offset, rows.len() - offset);
            let column = |values: Vec<Option<i32>>| -> ArrayRef {
                let array: ArrayRef = match kind {
                    0 => Arc::new(Int32Array::from(values)),
                    1 => Arc::new(Float64Array::from(values.iter().map(|v| v.map(f64::from)).collect::<Vec<_>>())),
                    2 => Arc::new(
                        Decimal128Array::from(values.iter().map(|v| v.map(i128::from)).collect::<Vec<_>>())
                            .with_precision_and_scale(20, 3)
                            .unwrap(),
                    ),
                    _ => Arc::new(StringArray::from(values.iter().map(|v| v.map(|v| v.to_string())).collect::<Vec<_>>())),
                };
                array.slice(offset, array.len() - offset)
            };
            let taken = column(rows.iter().map(|r| r.1).collect());
            let taken = if constant { taken.slice(0, 1) } else { taken };
            let otherwise = column(rows.iter().map(|r| r.2).collect());
            let got = select_rows(&mask, &taken, constant, &otherwise).unwrap();
            let expected = zipped(&mask, &taken, constant, &otherwise);
            prop_assert_eq!(got.data_type(), expected.data_type());
            prop_assert_eq!(got.to_data(), expected.to_data());
        }
    }
}
