//! Telling why the parquet crate could not decode rows in one batch, from what the rows
//! are rather than from the error's words: the crate reports both a damaged page and more
//! string bytes than Arrow's 32-bit offsets address (2 GiB in one batch, which a valid file
//! can hold) as a general error, its message the only difference.
//!
//! The rows are decoded again in two halves, and so on down into a half that fails alone.
//! A part that fails alone holds the fault: the file is corrupt there. When both halves of
//! a failing part decode, what failed is the part as one batch — and when their string
//! bytes add up to more than the offsets address, that is the reason (the file is fine;
//! pqsift cannot output it in one batch). Only the failure path pays the second decode.
//!
//! ```
//! use parquet::arrow::arrow_reader::RowSelector;
//! use pqsift::reading::decode_failure::halves;
//! let runs = [RowSelector::skip(10), RowSelector::select(6), RowSelector::skip(4), RowSelector::select(2)];
//! let (first, second) = halves(&runs).unwrap();
//! // Four selected rows each, over the same 22 rows.
//! assert_eq!(first, [RowSelector::skip(10), RowSelector::select(4), RowSelector::skip(8)]);
//! assert_eq!(second, [RowSelector::skip(14), RowSelector::select(2), RowSelector::skip(4), RowSelector::select(2)]);
//! assert!(halves(&[RowSelector::skip(3), RowSelector::select(1)]).is_none());
//! ```

use arrow::array::{Array, ArrayData, RecordBatch};
use arrow::datatypes::DataType;
use parquet::arrow::arrow_reader::RowSelector;

/// The most string bytes one Arrow array with 32-bit offsets addresses.
pub const MAX_OFFSET_BYTES: usize = i32::MAX as usize;

/// `runs` cut into two selections over the same rows, each with half the selected rows
/// (the first the smaller half); `None` when they select fewer than two rows.
pub fn halves(runs: &[RowSelector]) -> Option<(Vec<RowSelector>, Vec<RowSelector>)> {
    let selected: usize = runs.iter().filter(|r| !r.skip).map(|r| r.row_count).sum();
    if selected < 2 {
        return None;
    }
    let mut wanted = selected / 2;
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for run in runs {
        if run.skip {
            first.push(*run);
            second.push(*run);
            continue;
        }
        let taken = run.row_count.min(wanted);
        wanted -= taken;
        let left = run.row_count - taken;
        push(&mut first, RowSelector::select(taken));
        push(&mut first, RowSelector::skip(left));
        push(&mut second, RowSelector::skip(taken));
        push(&mut second, RowSelector::select(left));
    }
    Some((merged(first), merged(second)))
}

/// Adds `run` unless empty.
fn push(runs: &mut Vec<RowSelector>, run: RowSelector) {
    if run.row_count > 0 {
        runs.push(run);
    }
}

/// `runs` with neighbours of the same kind merged.
fn merged(runs: Vec<RowSelector>) -> Vec<RowSelector> {
    let mut out: Vec<RowSelector> = Vec::with_capacity(runs.len());
    for run in runs {
        match out.last_mut() {
            Some(last) if last.skip == run.skip => last.row_count += run.row_count,
            _ => out.push(run),
        }
    }
    out
}

/// The bytes of string and binary values (32-bit offsets) in `batch`, nested ones too.
pub fn offset_bytes(batch: &RecordBatch) -> usize {
    batch.columns().iter().map(|column| data_offset_bytes(&column.to_data())).sum()
}

fn data_offset_bytes(data: &ArrayData) -> usize {
    let own = match data.data_type() {
        DataType::Utf8 | DataType::Binary => data.buffers().get(1).map_or(0, |values| values.len()),
        _ => 0,
    };
    // A dictionary's values are its child.
    own + data.child_data().iter().map(data_offset_bytes).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_cover_the_same_rows_and_split_the_selected_ones() {
        let runs = [RowSelector::select(5), RowSelector::skip(3), RowSelector::select(4)];
        let (first, second) = halves(&runs).unwrap();
        let total = |runs: &[RowSelector]| runs.iter().map(|r| r.row_count).sum::<usize>();
        let selected = |runs: &[RowSelector]| runs.iter().filter(|r| !r.skip).map(|r| r.row_count).sum::<usize>();
        assert_eq!((total(&first), total(&second)), (12, 12));
        assert_eq!((selected(&first), selected(&second)), (4, 5));
    }

    #[test]
    fn string_bytes_are_counted_in_nested_and_dictionary_columns() {
        use std::sync::Arc;
        let strings = arrow::array::StringArray::from(vec!["ab", "cde"]);
        let structs = arrow::array::StructArray::from(vec![(
            Arc::new(arrow::datatypes::Field::new("t", DataType::Utf8, false)),
            Arc::new(arrow::array::StringArray::from(vec!["xyz", "w"])) as Arc<dyn Array>,
        )]);
        let dictionary: arrow::array::DictionaryArray<arrow::datatypes::Int32Type> =
            vec!["hello", "hello"].into_iter().collect();
        let batch = RecordBatch::try_from_iter([
            ("s", Arc::new(strings) as Arc<dyn Array>),
            ("n", Arc::new(structs) as Arc<dyn Array>),
            ("d", Arc::new(dictionary) as Arc<dyn Array>),
        ])
        .unwrap();
        assert_eq!(offset_bytes(&batch), 5 + 4 + 5);
    }
}
