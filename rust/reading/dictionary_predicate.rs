//! A predicate on one string column evaluated once per dictionary entry, not once per row.
//!
//! Late materialization decodes a predicate's column before evaluating it. Where the
//! predicate reads one string or binary column and the column's chunk is all
//! dictionary-encoded, the column is decoded as an Arrow dictionary (each selected row's
//! key and the chunk's dictionary, see [`string_views`](crate::reading::string_views)).
//! The predicate is then evaluated on the dictionary's values plus a null, once each, and
//! each row takes its key's answer: the answers a per-row evaluation gives (the predicate
//! is a function of the one value), without a string per row. Spreading the answers is a
//! table lookup a row, packed 64 rows to a word.
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
        return crate::filter::evaluate(predicate, batch);
    };
    let values = dictionary.values();
    let with_null =
        arrow::compute::concat(&[values.as_ref(), arrow::array::new_null_array(values.data_type(), 1).as_ref()])?;
    let field = batch.schema().field(0).clone().with_data_type(values.data_type().clone()).with_nullable(true);
    let entries = RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![with_null])?;
    let answers = crate::filter::evaluate(predicate, &entries)?;
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

/// Each row's answer by its key, `passes[key]` (1: it passes), 64 rows to a word: one
/// load and shift a row, no branch. (Arrow's `collect_bool` packs the same way, but its
/// closure indexes the keys by row, a bounds check each: measured slower.) A key outside
/// `passes` (only a null row's can be: Arrow's dictionaries hold the others below the
/// values' length) is clamped into it, its answer replaced by the caller.
fn spread(keys: &[i32], passes: &[u8]) -> BooleanBuffer {
    let Some(last) = passes.len().checked_sub(1) else {
        return BooleanBuffer::new_unset(keys.len());
    };
    let words: Vec<u64> = keys
        .chunks(64)
        .map(|chunk| {
            chunk
                .iter()
                .enumerate()
                .fold(0u64, |word, (bit, &key)| word | u64::from(passes[(key as u32 as usize).min(last)]) << bit)
        })
        .collect();
    BooleanBuffer::new(Buffer::from_vec(words), 0, keys.len())
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
}
