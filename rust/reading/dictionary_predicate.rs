//! A predicate on one string column evaluated once per dictionary entry, not once per row.
//!
//! Late materialization decodes a predicate's column before evaluating it. Where the
//! predicate reads one string or binary column and the column's chunk is all
//! dictionary-encoded, the column is decoded as an Arrow dictionary (each selected row's
//! key and the chunk's dictionary, see [`string_views`](crate::reading::string_views)).
//! The predicate is then evaluated on the dictionary's values plus a null, once each, and
//! each row takes its key's answer: the answers a per-row evaluation gives (the predicate
//! is a function of the one value), without a string per row. Spreading the answers
//! compares each row's key with the one entry that passes (an equality) or the one that
//! fails, else looks each row's answer up; the answers are packed 64 rows to a word.
//!
//! An entry no selected row has is evaluated too; where that raises (a cast of a value only
//! removed rows hold), the rows are evaluated one by one instead, so that only a value a
//! row reaches can raise, as in Spark.
//!
//! (Fixed-width values decoded so were measured too: a lookup per row cost what the
//! AVX-512 compare of the dense values does, so they are decoded as values.)
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Array, DictionaryArray, Int32Array, RecordBatch, StringArray};
//! use arrow::datatypes::{DataType, Field, Int32Type, Schema};
//! use pqsift::filter::{BindOptions, bind, parse_filter};
//! use pqsift::reading::dictionary_predicate::evaluate_by_dictionary;
//!
//! let file = Schema::new(vec![Field::new("kind", DataType::Utf8, true)]);
//! let predicate = bind(&parse_filter("kind = 'refund' OR kind IS NULL").unwrap(), &file, &BindOptions::default()).unwrap();
//! // Rows: refund, NULL, view, refund.
//! let values = StringArray::from(vec!["refund", "view"]);
//! let keys = Int32Array::from(vec![Some(0), None, Some(1), Some(0)]);
//! let column = DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values)).unwrap();
//! let decoded = Schema::new(vec![Field::new("kind", column.data_type().clone(), true)]);
//! let batch = RecordBatch::try_new(Arc::new(decoded), vec![Arc::new(column)]).unwrap();
//! let passed = evaluate_by_dictionary(&predicate, &batch, &[&DataType::Utf8]).unwrap();
//! assert_eq!(passed.values().iter().collect::<Vec<_>>(), [true, true, false, true]);
//! ```

use std::sync::Arc;

use arrow::array::{Array, AsArray, BooleanArray, RecordBatch};
use arrow::buffer::{BooleanBuffer, Buffer};
use arrow::datatypes::{DataType, Int32Type, Schema};

use crate::error::Result;
use crate::filter::BoundExpr;

/// Evaluates `predicate`, bound to columns of the file's types `file_types`, on `batch`:
/// a batch of one column decoded as a dictionary where the file's type is not one is
/// evaluated on the dictionary's values plus a null, once each, and each row takes its
/// key's answer (a null row the null's); any other batch row by row. A row whose answer
/// is NULL is false here, as a filter takes it: the result has no nulls.
pub fn evaluate_by_dictionary(
    predicate: &BoundExpr,
    batch: &RecordBatch,
    file_types: &[&DataType],
) -> Result<BooleanArray> {
    let dictionary = match (batch.columns(), file_types) {
        ([column], [file_type]) if column.data_type() != *file_type => column.as_dictionary_opt::<Int32Type>(),
        _ => None,
    };
    let Some(dictionary) = dictionary else {
        return evaluate_rows(predicate, batch);
    };
    let values = dictionary.values();
    let with_null =
        arrow::compute::concat(&[values.as_ref(), arrow::array::new_null_array(values.data_type(), 1).as_ref()])?;
    let field = batch.schema().field(0).clone().with_data_type(values.data_type().clone()).with_nullable(true);
    let schema = Arc::new(Schema::new(vec![field]));
    let entries = RecordBatch::try_new(Arc::clone(&schema), vec![with_null])?;
    let answers = match crate::filter::evaluate(predicate, &entries) {
        Ok(answers) => answers,
        // An entry no row of the batch has may raise (`CAST(s AS INT)` of a value only the
        // rows an earlier conjunct removed hold): Spark raises only for a row that reaches
        // it, so the rows are evaluated one by one instead.
        Err(_) => {
            let rows = arrow::compute::cast(dictionary, values.data_type())?;
            return evaluate_rows(predicate, &RecordBatch::try_new(schema, vec![rows])?);
        }
    };
    let passes: Vec<u8> =
        (0..answers.len()).map(|entry| u8::from(answers.is_valid(entry) && answers.value(entry))).collect();
    let keys = dictionary.keys();
    let passed = spread(keys.values(), &passes[..values.len()]);
    // A null row takes the null's answer (the entry after the values).
    let passed = match keys.nulls().filter(|nulls| nulls.null_count() > 0) {
        None => passed,
        Some(nulls) if passes[values.len()] == 1 => &(&passed & nulls.inner()) | &!nulls.inner(),
        Some(nulls) => &passed & nulls.inner(),
    };
    Ok(BooleanArray::new(passed, None))
}

/// `predicate` evaluated on `batch` row by row, a NULL answer false.
fn evaluate_rows(predicate: &BoundExpr, batch: &RecordBatch) -> Result<BooleanArray> {
    let passed = crate::filter::evaluate(predicate, batch)?;
    Ok(match passed.null_count() {
        0 => passed,
        _ => arrow::compute::prep_null_mask_filter(&passed),
    })
}

/// Each row's answer by its key, `passes[key]` (1: it passes), 64 rows to a word. A key
/// outside `passes` (only a null row's can be: Arrow's dictionaries hold the others below
/// the values' length) is clamped into it, its answer replaced by the caller.
///
/// Where one entry passes (an equality, `kind = 'refund'`) or all but one do, each row's
/// key is compared with it, which vectorizes; otherwise each row looks its answer up.
fn spread(keys: &[i32], passes: &[u8]) -> BooleanBuffer {
    let Some(last) = passes.len().checked_sub(1) else {
        return BooleanBuffer::new_unset(keys.len());
    };
    let passing = passes.iter().filter(|&&pass| pass == 1).count();
    let only = |answer: u8| passes.iter().position(|&pass| pass == answer).filter(|&key| key < last);
    let words = match passing {
        0 => return BooleanBuffer::new_unset(keys.len()),
        n if n == passes.len() => return BooleanBuffer::new_set(keys.len()),
        1 if let Some(key) = only(1) => pack(keys, |k| k == key as i32),
        n if n == last
            && let Some(key) = only(0) =>
        {
            pack(keys, |k| k != key as i32)
        }
        _ => pack(keys, |k| passes[(k as u32 as usize).min(last)] == 1),
    };
    BooleanBuffer::new(Buffer::from_vec(words), 0, keys.len())
}

/// `answer` of each key, 64 to a word: a word's answers as bytes of 0 or 1 first (a loop
/// without a branch), then packed eight at a time by one multiplication, which moves the
/// low bit of each of a `u64`'s bytes into its top byte, in order. (Shifting each answer
/// into the word compiled to a shift and an OR a row; Arrow's `collect_bool` indexes the
/// keys by row, a bounds check each.)
#[inline(always)]
fn pack(keys: &[i32], answer: impl Fn(i32) -> bool) -> Vec<u64> {
    const GATHER_LOW_BITS: u64 = 0x0102_0408_1020_4080;
    keys.chunks(64)
        .map(|chunk| {
            let mut answers = [0u8; 64];
            for (slot, &key) in answers.iter_mut().zip(chunk) {
                *slot = u8::from(answer(key));
            }
            let mut word = 0u64;
            for (byte, eight) in answers.chunks_exact(8).enumerate() {
                let eight = u64::from_le_bytes(eight.try_into().expect("8 bytes"));
                word |= (eight.wrapping_mul(GATHER_LOW_BITS) >> 56) << (8 * byte);
            }
            word
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_takes_each_rows_answer_by_key() {
        // More than a word of rows, and a key past the answers clamped into them.
        let keys: Vec<i32> = (0..150).map(|row| row % 3).chain([7, -1]).collect();
        let passes = [1u8, 0, 1];
        let passed = spread(&keys, &passes);
        let expected: Vec<bool> = (0..150).map(|row| row % 3 != 1).chain([true, true]).collect();
        assert_eq!(passed.iter().collect::<Vec<_>>(), expected);
        assert_eq!(spread(&[], &passes).len(), 0);
        assert_eq!(spread(&[0, 0], &[]).count_set_bits(), 0);
    }

    /// An entry no row has is not evaluated for a row: a cast it fails raises only when a
    /// row holds it.
    #[test]
    fn only_the_rows_values_can_raise() {
        use arrow::array::{DictionaryArray, Int32Array, StringArray};
        use arrow::datatypes::Field;
        let file = Schema::new(vec![Field::new("s", DataType::Utf8, true)]);
        let filter = crate::filter::parse_filter("CAST(s AS INT) = 12").unwrap();
        let predicate = crate::filter::bind(&filter, &file, &crate::filter::BindOptions::default()).unwrap();
        let batch = |keys: Vec<Option<i32>>| {
            let values = StringArray::from(vec!["12", "xx"]);
            let column = DictionaryArray::<Int32Type>::try_new(Int32Array::from(keys), Arc::new(values)).unwrap();
            let schema = Schema::new(vec![Field::new("s", column.data_type().clone(), true)]);
            RecordBatch::try_new(Arc::new(schema), vec![Arc::new(column)]).unwrap()
        };
        let passed = evaluate_by_dictionary(&predicate, &batch(vec![Some(0), None, Some(0)]), &[&DataType::Utf8]);
        assert_eq!(passed.unwrap().values().iter().collect::<Vec<_>>(), [true, false, true]);
        let error = evaluate_by_dictionary(&predicate, &batch(vec![Some(0), Some(1)]), &[&DataType::Utf8]);
        assert!(error.unwrap_err().to_string().contains("'xx'"));
    }

    proptest::proptest! {
        /// Every way of spreading (none, all, one entry, all but one, a lookup) gives each
        /// row its key's answer, a key outside the answers clamped into them.
        #[test]
        fn spread_is_the_lookup(
            passes in proptest::collection::vec(0u8..2, 0..6),
            keys in proptest::collection::vec(-2i32..8, 0..300),
        ) {
            let passed = spread(&keys, &passes);
            proptest::prop_assert_eq!(passed.len(), keys.len());
            for (row, &key) in keys.iter().enumerate() {
                let expected = !passes.is_empty() && passes[(key as u32 as usize).min(passes.len() - 1)] == 1;
                proptest::prop_assert_eq!(passed.value(row), expected, "row {} key {}", row, key);
            }
        }
    }
}
