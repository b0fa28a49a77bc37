//! Putting a result together from pieces of others, row by row: how `CASE` (a piece per
//! branch taken) and `coalesce` (`mask ? taken : otherwise`) build their values. Arrow's
//! `zip` copies the arrays run by run (a scalar a value at a time), and a chain of `zip`s
//! copies the whole result once per branch; values of a primitive type are put together
//! here in one pass: the piece with the most rows written whole (a constant filled, an
//! array copied), the others written at their rows' set bits, the validity combined a
//! word at a time.
//!
//! ```text
//! piece 1 rows [1, 0, 0, 0]  values [a, b, c, d]
//! piece 2 rows [0, 1, 1, 0]  values the constant k
//! result       [a, k, k, NULL]   (no piece has row 3)
//! ```

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ArrowPrimitiveType, AsArray, BooleanArray, Datum, PrimitiveArray, Scalar, downcast_primitive,
    new_null_array,
};
use arrow::buffer::{BooleanBuffer, NullBuffer, ScalarBuffer};
use arrow::compute::kernels::zip::zip;
use arrow::datatypes::DataType;
use arrow::error::ArrowError;

/// The rows of a result that take their values from `values`: an array of the result's
/// length, or with `constant` one value standing for every row.
pub(super) struct Piece<'a> {
    pub rows: &'a BooleanBuffer,
    pub values: &'a ArrayRef,
    pub constant: bool,
}

/// A result of `rows` rows of `data_type`: each piece's values at its rows (the pieces' rows
/// do not overlap), NULL at rows no piece has.
///
/// ```text
/// assemble([rows 1100 of [1, 2, 3, 4], rows 0010 of 9], Int32, 4) = [1, 2, 9, NULL]
/// ```
pub(super) fn assemble(pieces: &[Piece<'_>], data_type: &DataType, rows: usize) -> Result<ArrayRef, ArrowError> {
    let fits = |piece: &Piece<'_>| {
        piece.values.data_type() == data_type
            && piece.rows.len() == rows
            && (piece.constant || piece.values.len() == rows)
            && (!piece.constant || !piece.values.is_empty())
    };
    if pieces.iter().all(fits) {
        macro_rules! assemble_as {
            ($t:ty) => {
                return Ok(Arc::new(assemble_primitive::<$t>(pieces, rows).with_data_type(data_type.clone())))
            };
        }
        downcast_primitive! {
            data_type => (assemble_as),
            _ => {}
        }
    }
    // Other types: each piece zipped over what the others made, starting from the array
    // piece with the most rows where the pieces cover every row (no row left NULL), else
    // from NULLs.
    let counts: Vec<usize> = pieces.iter().map(|piece| piece.rows.count_set_bits()).collect();
    let base = (counts.iter().sum::<usize>() == rows)
        .then(|| {
            (0..pieces.len())
                .filter(|&index| !pieces[index].constant && pieces[index].values.data_type() == data_type)
                .max_by_key(|&index| counts[index])
        })
        .flatten();
    let mut result = match base {
        Some(index) => pieces[index].values.clone(),
        None => new_null_array(data_type, rows),
    };
    for (_, piece) in pieces.iter().enumerate().filter(|&(index, _)| Some(index) != base) {
        let mask = BooleanArray::new(piece.rows.clone(), None);
        let values: Box<dyn Datum> = match piece.constant {
            true => Box::new(Scalar::new(piece.values.clone())),
            false => Box::new(piece.values.clone()),
        };
        result = zip(&mask, values.as_ref(), &result)?;
    }
    Ok(result)
}

/// For each row, `taken`'s value where `mask` is set, else `otherwise`'s. `taken` is an array
/// of `otherwise`'s length, or with `taken_constant` one value standing for every row; both
/// of one type. `mask` must have `otherwise`'s length.
pub(super) fn select_rows(
    mask: &BooleanBuffer,
    taken: &ArrayRef,
    taken_constant: bool,
    otherwise: &ArrayRef,
) -> Result<ArrayRef, ArrowError> {
    let otherwise_rows = !mask;
    let pieces = [
        Piece { rows: mask, values: taken, constant: taken_constant },
        Piece { rows: &otherwise_rows, values: otherwise, constant: false },
    ];
    assemble(&pieces, otherwise.data_type(), otherwise.len())
}

/// [`assemble`] for a primitive type `T`, every piece of that type (checked by the caller).
fn assemble_primitive<T: ArrowPrimitiveType>(pieces: &[Piece<'_>], rows: usize) -> PrimitiveArray<T> {
    let arrays: Vec<&PrimitiveArray<T>> = pieces.iter().map(|piece| piece.values.as_primitive::<T>()).collect();
    let constant = |index: usize| {
        let array = arrays[index];
        pieces[index].constant.then(|| if array.is_valid(0) { array.value(0) } else { T::Native::default() })
    };
    // The piece with the most rows is written whole, the others over it at their rows.
    let counts: Vec<usize> = pieces.iter().map(|piece| piece.rows.count_set_bits()).collect();
    let base = (0..pieces.len()).max_by_key(|&index| counts[index]);
    let mut values: Vec<T::Native> = match base.map(|index| (index, constant(index))) {
        None => vec![T::Native::default(); rows],
        Some((_, Some(value))) => vec![value; rows],
        Some((index, None)) => arrays[index].values().to_vec(),
    };
    for index in (0..pieces.len()).filter(|&index| Some(index) != base && counts[index] > 0) {
        write_at_set_bits(&mut values, pieces[index].rows, arrays[index].values(), constant(index));
    }
    // A row is valid where the piece it takes is.
    let mut valid = BooleanBuffer::new_unset(rows);
    for (piece, array) in pieces.iter().zip(&arrays) {
        let taken_valid = match (piece.constant, array.nulls()) {
            (true, _) if array.is_null(0) => continue,
            (true, _) | (false, None) => piece.rows.clone(),
            (false, Some(nulls)) => piece.rows & nulls.inner(),
        };
        valid = &valid | &taken_valid;
    }
    let nulls = NullBuffer::new(valid);
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    PrimitiveArray::<T>::new(ScalarBuffer::from(values), nulls)
}

/// `source`'s values (or `constant`) written into `out` at the set bits of `rows`: whole
/// words where every bit is set, else one write a set bit.
fn write_at_set_bits<N: Copy>(out: &mut [N], rows: &BooleanBuffer, source: &[N], constant: Option<N>) {
    let length = out.len();
    for (word_index, mut word) in rows.bit_chunks().iter_padded().enumerate() {
        let start = word_index * 64;
        let end = (start + 64).min(length);
        let out = &mut out[start..end];
        if word == u64::MAX && end - start == 64 {
            match constant {
                Some(value) => out.fill(value),
                None => out.copy_from_slice(&source[start..end]),
            }
            continue;
        }
        while word != 0 {
            let bit = word.trailing_zeros() as usize;
            out[bit] = match constant {
                Some(value) => value,
                None => source[start + bit],
            };
            word &= word - 1;
        }
    }
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

    /// `values` as a column of type `kind`: INT, DOUBLE, DECIMAL(20, 3) or STRING.
    fn column_of(kind: usize, values: Vec<Option<i32>>) -> ArrayRef {
        match kind {
            0 => Arc::new(Int32Array::from(values)),
            1 => Arc::new(Float64Array::from(values.iter().map(|v| v.map(f64::from)).collect::<Vec<_>>())),
            2 => Arc::new(
                Decimal128Array::from(values.iter().map(|v| v.map(i128::from)).collect::<Vec<_>>())
                    .with_precision_and_scale(20, 3)
                    .unwrap(),
            ),
            _ => Arc::new(StringArray::from(values.iter().map(|v| v.map(|v| v.to_string())).collect::<Vec<_>>())),
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
                let array = column_of(kind, values);
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

        /// Up to four pieces, each an array or a constant (NULL or not), rows no piece has,
        /// sliced arrays: each row the value of the piece that has it, built row by row.
        #[test]
        fn assemble_takes_each_rows_piece(
            rows in prop::collection::vec(
                (0usize..5, prop::collection::vec(prop::option::weighted(0.8, any::<i32>()), 4)),
                1..200,
            ),
            constants in prop::collection::vec(any::<bool>(), 4),
            pieces in 0usize..5,
            offset in 0usize..70,
            kind in 0usize..4,
        ) {
            let offset = offset.min(rows.len() - 1);
            let length = rows.len() - offset;
            let column = |values: Vec<Option<i32>>| column_of(kind, values);
            // Piece p's values: column p of the rows (its first row's alone for a constant).
            let values: Vec<ArrayRef> = (0..pieces)
                .map(|p| {
                    let array = column(rows.iter().map(|r| r.1[p]).collect()).slice(offset, length);
                    if constants[p] { array.slice(0, 1) } else { array }
                })
                .collect();
            let assigned = |p: usize| BooleanBuffer::from_iter(rows.iter().map(|r| r.0 == p)).slice(offset, length);
            let rows_of: Vec<BooleanBuffer> = (0..pieces).map(assigned).collect();
            let parts: Vec<Piece<'_>> =
                (0..pieces).map(|p| Piece { rows: &rows_of[p], values: &values[p], constant: constants[p] }).collect();
            let data_type = column(vec![None]).data_type().clone();
            let got = assemble(&parts, &data_type, length).unwrap();
            let expected = column(
                rows[offset..]
                    .iter()
                    .map(|(p, values)| match *p < pieces {
                        true if constants[*p] => rows[offset].1[*p],
                        true => values[*p],
                        false => None,
                    })
                    .collect(),
            );
            prop_assert_eq!(got.data_type(), expected.data_type());
            prop_assert_eq!(got.to_data(), expected.to_data());
        }
    }
}
