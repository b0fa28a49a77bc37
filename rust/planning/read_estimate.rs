//! How many compressed bytes reading a planned row group can take: the column chunks of
//! the leaf columns the scan decodes (its projection and its filter's columns) and, where
//! the page index locates their pages, only the pages holding a selected row (plus the
//! dictionary page). With a page index it is an upper bound of what late materialization
//! reads — the projection may be read for fewer rows still. Without one, a row group that
//! a selection narrows (pages pruned by their headers' statistics, a deletion vector)
//! counts each chunk in proportion to the rows selected: about what is decompressed, as
//! the reader skips the pages holding no selected row, not what is read (whole chunks).
//! It is what the Spark layer weighs when it decides whether a result is small enough to
//! read on the driver (`pqsift.spark.driver_read`): a point lookup in one of Spark's
//! 128 MiB row groups reads a few pages of two columns, not the row group.
//!
//! Also what decoding takes, in Arrow bytes ([`decoded_bytes`], [`output_bytes`]): the size
//! of the reader's row windows, and of the rows a plan shows certainly pass its filter
//! (`RowGroupPlan::certain_output_bytes`), which the Spark layer weighs against the
//! output it lets the driver hold.
//!
//! ```
//! use pqsift::planning::access_plan::{FileAccessPlan, RowGroupAccess};
//! use pqsift::planning::read_estimate::row_group_bytes;
//! use pqsift::selection::RowSelection;
//! # use std::sync::Arc;
//! # use arrow::array::{ArrayRef, Int64Array};
//! # use arrow::record_batch::RecordBatch;
//! # use parquet::arrow::ArrowWriter;
//! # use parquet::file::properties::WriterProperties;
//! # use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
//! # use parquet::file::metadata::PageIndexPolicy;
//! // Two columns of 10,000 rows in pages of 1,000 rows, with a page index.
//! # let column: ArrayRef = Arc::new(Int64Array::from_iter_values(0..10_000));
//! # let batch = RecordBatch::try_from_iter([("a", column.clone()), ("b", column)]).unwrap();
//! # let properties = WriterProperties::builder().set_data_page_row_count_limit(1_000).set_write_batch_size(1_000)
//! #     .set_dictionary_enabled(false).build();
//! # let mut bytes = Vec::new();
//! # let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(properties)).unwrap();
//! # writer.write(&batch).unwrap();
//! # writer.close().unwrap();
//! # let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
//! # let metadata = ArrowReaderMetadata::load(&bytes::Bytes::from(bytes), options).unwrap().metadata().clone();
//! let mut plan = FileAccessPlan::scan_all("f.parquet", &[10_000]);
//! let whole = row_group_bytes(&metadata, &plan.row_groups[0], &[0, 1]);
//! assert_eq!(whole, metadata.row_group(0).compressed_size() as u64);
//! // Rows 2,500..2,600 of column `a` only: one page of ten.
//! plan.row_groups[0].access = RowGroupAccess::Selection(RowSelection::from_ranges(&[2_500..2_600], 10_000).unwrap());
//! let one_page = row_group_bytes(&metadata, &plan.row_groups[0], &[0]);
//! assert!(one_page * 8 < whole / 2, "{one_page} of {whole}");
//! ```

use std::ops::Range;

use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};

use crate::format::metadata::{dictionary_page_range, page_locations};
use crate::planning::access_plan::{RowGroupAccess, RowGroupPlan};
use crate::selection::PageLocation;

/// The compressed bytes reading `row_group` (as planned) of the leaf columns `leaves` can
/// take (see the module documentation).
pub fn row_group_bytes(metadata: &ParquetMetaData, row_group: &RowGroupPlan, leaves: &[usize]) -> u64 {
    let chunk_size =
        |leaf: usize| u64::try_from(metadata.row_group(row_group.index).column(leaf).compressed_size()).unwrap_or(0);
    match &row_group.access {
        RowGroupAccess::Skip => 0,
        RowGroupAccess::Scan => leaves.iter().map(|&leaf| chunk_size(leaf)).sum(),
        RowGroupAccess::Selection(selection) => {
            let selected = selection.selected_ranges();
            leaves
                .iter()
                .map(|&leaf| match page_locations(metadata, row_group.index, leaf) {
                    Some(pages) => {
                        let dictionary =
                            dictionary_page_range(metadata, row_group.index, leaf).map_or(0, |r| r.end - r.start);
                        dictionary + pages_holding(&pages, row_group.rows as u64, &selected)
                    }
                    // No page index: the chunk in proportion to the rows selected.
                    None => chunk_size(leaf) * selection.selected_count() as u64 / row_group.rows.max(1) as u64,
                })
                .sum()
        }
    }
}

/// The compressed bytes of the pages (in row order, `rows` in all) that hold a row of
/// `selected` (ascending, disjoint ranges).
fn pages_holding(pages: &[PageLocation], rows: u64, selected: &[Range<usize>]) -> u64 {
    let mut ranges = selected.iter().peekable();
    let mut bytes = 0;
    for (i, page) in pages.iter().enumerate() {
        let end = pages.get(i + 1).map_or(rows, |next| next.first_row_index);
        // Ranges that end before this page hold none of its rows, nor of the pages after.
        while ranges.peek().is_some_and(|r| r.end as u64 <= page.first_row_index) {
            ranges.next();
        }
        if ranges.peek().is_some_and(|r| (r.start as u64) < end) {
            bytes += page.compressed_size;
        }
    }
    bytes
}

/// The Arrow bytes a column chunk is estimated to decode to, from the footer: the largest of
/// its uncompressed pages, its string bytes plus offsets (the size statistics, where the
/// writer gave them: a dictionary-encoded column decodes far larger than its pages) and its
/// values at their fixed Arrow width.
///
/// ```
/// # use std::sync::Arc;
/// # use arrow::array::{ArrayRef, Int64Array};
/// # use arrow::record_batch::RecordBatch;
/// # use parquet::arrow::ArrowWriter;
/// # use parquet::file::metadata::ParquetMetaDataReader;
/// use pqsift::planning::read_estimate::decoded_bytes;
/// // 1,000 int64 values: 8,000 bytes decoded.
/// # let column: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1_000));
/// # let batch = RecordBatch::try_from_iter([("a", column)]).unwrap();
/// # let mut bytes = Vec::new();
/// # let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
/// # writer.write(&batch).unwrap();
/// # writer.close().unwrap();
/// # let metadata = ParquetMetaDataReader::new().parse_and_finish(&bytes::Bytes::from(bytes)).unwrap();
/// assert!(decoded_bytes(metadata.row_group(0).column(0)) >= 8_000.0);
/// ```
pub fn decoded_bytes(chunk: &ColumnChunkMetaData) -> f64 {
    let values = chunk.num_values().max(0) as f64;
    let width = match chunk.column_type() {
        PhysicalType::BOOLEAN => 1.0,
        PhysicalType::INT32 | PhysicalType::FLOAT => 4.0,
        PhysicalType::INT64 | PhysicalType::DOUBLE => 8.0,
        PhysicalType::INT96 => 16.0,
        PhysicalType::BYTE_ARRAY => 4.0,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => chunk.column_descr().type_length().max(0) as f64,
    };
    let strings = chunk.unencoded_byte_array_data_bytes().map_or(0.0, |b| b.max(0) as f64 + 4.0 * values);
    (chunk.uncompressed_size().max(0) as f64).max(strings).max(width * values)
}

/// The Arrow bytes `rows` rows of the leaf columns `leaves` of `row_group` are estimated to
/// take: each chunk's [`decoded_bytes`] in proportion to the rows.
pub fn output_bytes(metadata: &ParquetMetaData, row_group: usize, leaves: &[usize], rows: usize) -> u64 {
    let chunks = metadata.row_group(row_group);
    let per_row: f64 =
        leaves.iter().map(|&leaf| decoded_bytes(chunks.column(leaf))).sum::<f64>() / chunks.num_rows().max(1) as f64;
    (per_row * rows as f64) as u64
}
