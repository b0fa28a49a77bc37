//! Strings as Arrow views (`Utf8View`, `BinaryView`).
//!
//! A view array holds 16 bytes per value — the length and the value itself when it fits in
//! 12 bytes, else its first 4 bytes and where it lies in a shared buffer — so a decoder can
//! point into the decompressed page (plain values) or the dictionary (dictionary values)
//! instead of copying every string, and a filter moves 16 bytes per row whatever the
//! string's length. The reader decodes top-level strings as views where a filter follows
//! the decode or every decoded row is output, and outputs them so with the read option
//! `string_view` (pyarrow, Polars and DuckDB read them; Spark's Arrow path accepts
//! `string_view` for `string`); otherwise they are copied out once into plain strings
//! ([`string_gather`](crate::reading::string_gather)).
//!
//! A column chunk whose data pages are all dictionary-encoded is decoded as an Arrow
//! dictionary instead ([`chunk_strings`], [`decode_schema`]): 4-byte keys per row,
//! filtered as keys, a predicate evaluated once per entry
//! ([`dictionary_predicate`](crate::reading::dictionary_predicate)), and the strings copied out of
//! the dictionary only for the rows that survive. (Not for chunks that fall back to plain
//! pages: the crate would hash every plain value back into a dictionary.) A chunk with
//! DELTA_BYTE_ARRAY or DELTA_LENGTH_BYTE_ARRAY pages is decoded as plain strings, by
//! [`flat_decode`](crate::reading::flat_decode) for a flat column: a DELTA_BYTE_ARRAY
//! value is rebuilt from the one before (written out whatever the type), and a
//! DELTA_LENGTH_BYTE_ARRAY page's values lie one after another, copied out in one move.
//!
//! ```
//! use arrow::datatypes::{DataType, Field, Schema};
//! use pqsift::reading::string_views::view_schema;
//! let schema = Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("s", DataType::LargeUtf8, true)]);
//! let views = view_schema(&schema).unwrap();
//! assert_eq!(views.field(1).data_type(), &DataType::Utf8View);
//! assert_eq!(views.field(0).data_type(), &DataType::Int64);
//! ```

use std::sync::Arc;

use arrow::array::{RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, Schema, SchemaRef};
use parquet::basic::{Encoding, PageType};
use parquet::file::metadata::{ColumnChunkMetaData, RowGroupMetaData};
use parquet::schema::types::SchemaDescriptor;

use crate::error::Result;

/// The view type standing for `data_type` at the top level, if it is a string or binary.
pub fn view_type(data_type: &DataType) -> Option<DataType> {
    match data_type {
        DataType::Utf8 | DataType::LargeUtf8 => Some(DataType::Utf8View),
        DataType::Binary | DataType::LargeBinary => Some(DataType::BinaryView),
        _ => None,
    }
}

/// `schema` with its top-level string and binary columns as views; `None` when it has
/// none.
pub fn view_schema(schema: &Schema) -> Option<SchemaRef> {
    let mut changed = false;
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|field| match view_type(field.data_type()) {
            Some(view) => {
                changed = true;
                Arc::new(field.as_ref().clone().with_data_type(view))
            }
            None => field.clone(),
        })
        .collect();
    changed.then(|| Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

/// Whether every data page of `chunk` is dictionary-encoded, as its page encoding
/// statistics say (`false` without them).
pub fn all_dictionary_encoded(chunk: &ColumnChunkMetaData) -> bool {
    let dictionary = |e: Encoding| matches!(e, Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY);
    if chunk.dictionary_page_offset().is_none() {
        return false;
    }
    if let Some(mask) = chunk.page_encoding_stats_mask() {
        return mask.is_only(Encoding::PLAIN_DICTIONARY) || mask.is_only(Encoding::RLE_DICTIONARY);
    }
    chunk.page_encoding_stats().is_some_and(|stats| {
        stats
            .iter()
            .filter(|s| matches!(s.page_type, PageType::DATA_PAGE | PageType::DATA_PAGE_V2) && s.count > 0)
            .all(|s| dictionary(s.encoding))
    })
}

/// How the crate decodes a top-level string or binary column's chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChunkStrings {
    /// Every data page dictionary-encoded: as an Arrow dictionary.
    Dictionary,
    /// As views where views are asked for (they point into the pages), else as stored.
    Views,
    /// As stored: DELTA_BYTE_ARRAY or DELTA_LENGTH_BYTE_ARRAY pages (see the module's doc).
    Plain,
}

/// How the crate decodes `chunk` (of a top-level string or binary column).
pub fn chunk_strings(chunk: &ColumnChunkMetaData) -> ChunkStrings {
    if all_dictionary_encoded(chunk) {
        ChunkStrings::Dictionary
    } else if chunk.encodings().any(|e| matches!(e, Encoding::DELTA_BYTE_ARRAY | Encoding::DELTA_LENGTH_BYTE_ARRAY)) {
        ChunkStrings::Plain
    } else {
        ChunkStrings::Views
    }
}

/// Per top-level string or binary column of `schema` (a file's Arrow schema), in order,
/// how its chunk in `row_group` is decoded ([`chunk_strings`]; a column of several leaves
/// is never a dictionary). One pass over the leaves: it runs for every decode.
pub fn string_columns(schema: &Schema, parquet: &SchemaDescriptor, row_group: &RowGroupMetaData) -> Vec<ChunkStrings> {
    // Per root: its only leaf, or `None` once a second one is seen.
    let mut only_leaf: Vec<Option<Option<usize>>> = vec![None; schema.fields().len()];
    for leaf in 0..parquet.num_columns() {
        if let Some(slot) = only_leaf.get_mut(parquet.get_column_root_idx(leaf)) {
            *slot = Some(match slot {
                None => Some(leaf),
                Some(_) => None,
            });
        }
    }
    schema
        .fields()
        .iter()
        .zip(only_leaf)
        .filter(|(field, _)| view_type(field.data_type()).is_some())
        .map(|(_, leaf)| match leaf.flatten() {
            Some(leaf) => chunk_strings(row_group.column(leaf)),
            None => ChunkStrings::Views,
        })
        .collect()
}

/// The types to decode the top-level columns of `schema` in: its strings and binaries as
/// `strings` (see [`string_columns`]) says, views only when `views` (else as they are);
/// `None` when that changes nothing.
pub fn decode_schema(schema: &Schema, strings: &[ChunkStrings], views: bool) -> Option<SchemaRef> {
    let changes = |s: &ChunkStrings| match s {
        ChunkStrings::Dictionary => true,
        ChunkStrings::Views => views,
        ChunkStrings::Plain => false,
    };
    if !strings.iter().any(changes) {
        return None;
    }
    let mut strings = strings.iter();
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|field| {
            let Some(view) = view_type(field.data_type()) else { return field.clone() };
            let decoded = match (strings.next(), views) {
                (Some(ChunkStrings::Dictionary), _) => {
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(field.data_type().clone()))
                }
                (Some(ChunkStrings::Views) | None, true) => view,
                _ => return field.clone(),
            };
            Arc::new(field.as_ref().clone().with_data_type(decoded))
        })
        .collect();
    Some(Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

/// `batch` in the types of `schema` (the same columns, some as views or not): the
/// columns whose type differs are cast. Strings to views share the string buffer (one
/// view per value, no byte copied); views to strings copy each value's bytes once.
pub fn cast_to(batch: RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    if batch.schema().fields() == schema.fields() {
        return Ok(batch);
    }
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(column, field)| match column.data_type() == field.data_type() {
            true => Ok(column.clone()),
            false => Ok(arrow::compute::cast(column, field.data_type())?),
        })
        .collect::<Result<Vec<_>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(schema.clone(), columns, &options)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, StringArray, StringViewArray};
    use arrow::datatypes::Field;

    #[test]
    fn strings_to_views_and_back_keep_values_and_nulls() {
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        let values = StringArray::from(vec![Some("short"), None, Some("a string longer than twelve bytes")]);
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(values.clone())]).unwrap();
        let views = cast_to(batch, &view_schema(&schema).unwrap()).unwrap();
        let column = views.column(0).as_any().downcast_ref::<StringViewArray>().unwrap();
        assert_eq!(column.value(2), "a string longer than twelve bytes");
        assert!(column.is_null(1));
        let back = cast_to(views, &schema).unwrap();
        assert_eq!(back.column(0).as_any().downcast_ref::<StringArray>().unwrap(), &values);
    }
}
