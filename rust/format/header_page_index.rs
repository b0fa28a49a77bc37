//! A page index built from the statistics in data page headers, for files written
//! without one.
//!
//! parquet-cpp (pyarrow, pandas) writes no page index unless asked, but puts each data
//! page's statistics in the page's header: `min_value`, `max_value` and `null_count`, the
//! bounds a column index holds. Walking a column chunk's headers — a small read per page,
//! no page decompressed — gives both halves of a page index for that chunk: a column
//! index (each page's bounds) and an offset index (where each page lies, its first row).
//! Page pruning then narrows the row group as it would with the file's own page index,
//! and the reader skips the pages no selected row is on without decompressing them.
//!
//! An index is built only where the headers say what a column index would:
//!
//! * a column without repetition (a v1 page header counts values, which are rows only
//!   then);
//! * a column the footer says is ordered by its type (`column_orders`): the order
//!   `min_value` and `max_value` follow; the deprecated `min` and `max` are never read;
//! * every data page has a null count, and bounds unless all its values are null;
//! * the pages' rows add up to the row group's.
//!
//! Otherwise no index is built and every page is kept. Float bounds carry no NaN count
//! here, so a float page may hold NaN (Spark orders NaN above every number); byte array
//! bounds are treated as inexact, as a column index's are.
//!
//! ```
//! # let dir = std::env::temp_dir().join("pqsift_header_index_doc");
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("t.parquet");
//! # let batch = arrow::array::RecordBatch::try_from_iter([("x", std::sync::Arc::new(arrow::array::Int32Array::from((0..100).collect::<Vec<i32>>())) as _)]).unwrap();
//! # let props = parquet::file::properties::WriterProperties::builder()
//! #     .set_statistics_enabled(parquet::file::properties::EnabledStatistics::Page)
//! #     .set_write_page_header_statistics(true)
//! #     .set_data_page_row_count_limit(10).set_write_batch_size(10).build();
//! # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
//! # w.write(&batch).unwrap(); w.close().unwrap();
//! use parquet::file::metadata::page_index::PageIndexProvider;
//! use pqsift::format::header_page_index::page_index_from_headers;
//! use pqsift::format::metadata::load;
//! use pqsift::storage::FileSource;
//!
//! // x = 0..100 in pages of 10 rows, statistics in each page header.
//! let metadata = load(&path.clone().into()).unwrap();
//! let source = FileSource::open(&path.into()).unwrap();
//! let index = page_index_from_headers(&source, &metadata, &[(0, 0)]).unwrap().unwrap();
//! let pages = index.offset_index(0, 0).unwrap().page_locations();
//! assert_eq!(pages.len(), 10);
//! assert_eq!(pages[3].first_row_index, 30);
//! assert!(index.column_index(0, 0).is_some());
//! ```

use parquet::basic::{ColumnOrder, SortOrder};
use parquet::file::metadata::page_index::PageIndexProvider;
use parquet::file::metadata::{ColumnIndexBuilder, OffsetIndexBuilder, ParquetMetaData};
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::page_index::offset_index::OffsetIndexMetaData;

use crate::error::Result;
use crate::format::page_headers::{chunk_range, read_header_with};
use crate::format::thrift_walk::ThriftWalker;
use crate::storage::FileSource;

/// Chunks with more pages than this are left without an index: the walk reads every
/// header, and pages this small would cost more to walk than to decode.
pub const MAX_WALKED_PAGES: usize = 20_000;

/// Column indexes and offset indexes of some column chunks, built from their page headers:
/// a [`PageIndexProvider`] holding only those chunks (the crate's `PageIndex` sets a slot
/// aside for every chunk of the file, which for a wide file costs more than the walk).
#[derive(Debug)]
pub struct HeaderPageIndex {
    /// In ascending `(row group, leaf column)` order.
    chunks: Vec<IndexedChunk>,
}

/// One column chunk's indexes.
#[derive(Debug)]
struct IndexedChunk {
    /// `(row group, leaf column)`.
    at: (usize, usize),
    column_index: ColumnIndexMetaData,
    offset_index: OffsetIndexMetaData,
}

impl HeaderPageIndex {
    fn find(&self, row_group: usize, leaf: usize) -> Option<&IndexedChunk> {
        let found = self.chunks.binary_search_by_key(&(row_group, leaf), |chunk| chunk.at).ok()?;
        self.chunks.get(found)
    }
}

/// A page index holding, for each `(row group, leaf column)` of `chunks` whose page
/// headers carry the bounds (see the module), the column index and offset index built
/// from them; `None` when no chunk has them. Reads of `file` fail as errors; headers that
/// do not decode leave their chunk out (the read of its pages reports them).
pub fn page_index_from_headers(
    file: &FileSource,
    metadata: &ParquetMetaData,
    chunks: &[(usize, usize)],
) -> Result<Option<HeaderPageIndex>> {
    let mut built = Vec::new();
    for &(row_group, leaf) in chunks {
        if let Some((column_index, offset_index)) = chunk_index(file, metadata, row_group, leaf)? {
            built.push(IndexedChunk { at: (row_group, leaf), column_index, offset_index });
        }
    }
    built.sort_by_key(|chunk| chunk.at);
    built.dedup_by_key(|chunk| chunk.at);
    Ok((!built.is_empty()).then_some(HeaderPageIndex { chunks: built }))
}

impl PageIndexProvider for HeaderPageIndex {
    fn has_offset_indexes(&self) -> bool {
        true
    }

    fn has_column_indexes(&self) -> bool {
        true
    }

    fn column_index(&self, row_group: usize, leaf: usize) -> Option<&ColumnIndexMetaData> {
        self.find(row_group, leaf).map(|chunk| &chunk.column_index)
    }

    fn offset_index(&self, row_group: usize, leaf: usize) -> Option<&OffsetIndexMetaData> {
        self.find(row_group, leaf).map(|chunk| &chunk.offset_index)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The column index and offset index of one chunk, from its page headers.
fn chunk_index(
    file: &FileSource,
    metadata: &ParquetMetaData,
    row_group: usize,
    leaf: usize,
) -> Result<Option<(ColumnIndexMetaData, OffsetIndexMetaData)>> {
    let Some(group) = metadata.row_groups().get(row_group) else { return Ok(None) };
    let Some(chunk) = group.columns().get(leaf) else { return Ok(None) };
    let descriptor = chunk.column_descr();
    let ordered = matches!(
        metadata.file_metadata().column_order(leaf),
        ColumnOrder::TYPE_DEFINED_ORDER(order) if order != SortOrder::UNDEFINED
    );
    if descriptor.max_rep_level() > 0 || !ordered {
        return Ok(None);
    }
    let rows = group.num_rows();
    let (start, length) = chunk_range(chunk);
    let end = start.saturating_add(length).min(parquet::file::reader::Length::len(file));
    let mut column_index = ColumnIndexBuilder::new(descriptor.physical_type());
    let mut offset_index = OffsetIndexBuilder::new();
    let (mut position, mut rows_seen, mut pages) = (start, 0i64, 0usize);
    while rows_seen < rows {
        if position >= end || pages == MAX_WALKED_PAGES {
            return Ok(None);
        }
        let Some((header, header_length)) = read_header_with(file, position, end, PageSummary::read)? else {
            return Ok(None);
        };
        let Ok(compressed) = u64::try_from(header.compressed) else { return Ok(None) };
        let page_end = position.saturating_add(header_length as u64).saturating_add(compressed);
        match header.data {
            None => {} // a dictionary or index page
            Some(data) => {
                let (Some(page_rows), Some(null_count)) = (data.rows, data.null_count) else { return Ok(None) };
                let all_null = null_count == data.values;
                let bounds = match (data.min, data.max) {
                    (Some(min), Some(max)) => (min, max),
                    _ if all_null => (Vec::new(), Vec::new()),
                    _ => return Ok(None),
                };
                let (Ok(offset), Ok(size)) = (i64::try_from(position), i32::try_from(page_end - position)) else {
                    return Ok(None);
                };
                if page_rows <= 0 || null_count < 0 || null_count > data.values {
                    return Ok(None);
                }
                column_index.append(all_null, bounds.0, bounds.1, null_count, None);
                offset_index.append_row_count(page_rows);
                offset_index.append_offset_and_size(offset, size);
                rows_seen = rows_seen.saturating_add(page_rows);
                pages += 1;
            }
        }
        position = page_end;
    }
    if rows_seen != rows {
        return Ok(None);
    }
    // Bounds of the wrong width for the column's type (a corrupt header) do not build.
    Ok(column_index.build().ok().map(|column_index| (column_index, offset_index.build())))
}

/// What a page header says that an index needs.
struct PageSummary {
    compressed: i64,
    /// For a data page (v1 or v2): its counts and bounds.
    data: Option<DataPageSummary>,
}

struct DataPageSummary {
    /// Values, nulls included (levels of a column without repetition: its rows).
    values: i64,
    /// Rows: a v2 header's count, a v1 header's values (the column is not repeated).
    rows: Option<i64>,
    null_count: Option<i64>,
    min: Option<Vec<u8>>,
    max: Option<Vec<u8>>,
}

impl PageSummary {
    /// Reads the `PageHeader` at the start of `bytes`: `None` when they do not hold a
    /// whole one (or it does not decode).
    fn read(bytes: &[u8]) -> Option<(Self, usize)> {
        const STRUCT: u8 = 12;
        const DATA_PAGE: i64 = 0;
        const DATA_PAGE_V2: i64 = 3;
        let mut walker = ThriftWalker::new(bytes);
        let (mut kind, mut compressed, mut data) = (None, None, None);
        let mut last_id = 0i16;
        loop {
            // Out of bytes before the stop byte: the header is longer than the probe.
            let next = *bytes.get(walker.position())?;
            let Some((field_type, id)) = walker.field_header(last_id) else {
                if next == 0 {
                    break;
                }
                return None;
            };
            match id {
                1 => kind = Some(walker.integer(field_type)?),
                3 => compressed = Some(walker.integer(field_type)?),
                5 if field_type == STRUCT => data = Some(DataPageSummary::read(&mut walker, false)?),
                8 if field_type == STRUCT => data = Some(DataPageSummary::read(&mut walker, true)?),
                _ => walker.skip(field_type, 0)?,
            }
            last_id = id;
        }
        let data = match kind? {
            DATA_PAGE | DATA_PAGE_V2 => Some(data?),
            _ => None,
        };
        Some((Self { compressed: compressed?, data }, walker.position()))
    }
}

impl DataPageSummary {
    /// Reads a `DataPageHeader` (`v2`: a `DataPageHeaderV2`) at the walker.
    fn read(walker: &mut ThriftWalker<'_>, v2: bool) -> Option<Self> {
        const STRUCT: u8 = 12;
        let statistics_field = if v2 { 8 } else { 5 };
        let mut summary = Self { values: 0, rows: None, null_count: None, min: None, max: None };
        let (mut values, mut nulls, mut last_id) = (None, None, 0i16);
        while let Some((field_type, id)) = walker.field_header(last_id) {
            match id {
                1 => values = Some(walker.integer(field_type)?),
                2 if v2 => nulls = Some(walker.integer(field_type)?),
                3 if v2 => summary.rows = Some(walker.integer(field_type)?),
                id if id == statistics_field && field_type == STRUCT => summary.read_statistics(walker)?,
                _ => walker.skip(field_type, 1)?,
            }
            last_id = id;
        }
        summary.values = values?;
        // A v2 header counts its nulls itself.
        summary.null_count = summary.null_count.or(nulls);
        if !v2 {
            summary.rows = Some(summary.values);
        }
        Some(summary)
    }

    /// Reads a `Statistics` struct at the walker: `null_count` (3), `max_value` (5) and
    /// `min_value` (6).
    fn read_statistics(&mut self, walker: &mut ThriftWalker<'_>) -> Option<()> {
        const BINARY: u8 = 8;
        let mut last_id = 0i16;
        while let Some((field_type, id)) = walker.field_header(last_id) {
            match id {
                3 => self.null_count = Some(walker.integer(field_type)?),
                5 if field_type == BINARY => self.max = Some(walker.binary()?.to_vec()),
                6 if field_type == BINARY => self.min = Some(walker.binary()?.to_vec()),
                _ => walker.skip(field_type, 2)?,
            }
            last_id = id;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The bytes of a file of `x` = 0..100 in pages of 10 rows, statistics in the headers.
    fn file_bytes() -> Vec<u8> {
        let values = arrow::array::Int32Array::from((0..100).collect::<Vec<i32>>());
        let batch = arrow::array::RecordBatch::try_from_iter([("x", std::sync::Arc::new(values) as _)]).unwrap();
        let properties = parquet::file::properties::WriterProperties::builder()
            .set_write_page_header_statistics(true)
            .set_dictionary_enabled(false)
            .set_data_page_row_count_limit(10)
            .set_write_batch_size(10)
            .build();
        let mut bytes = Vec::new();
        let mut writer = parquet::arrow::ArrowWriter::try_new(&mut bytes, batch.schema(), Some(properties)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        bytes
    }

    #[test]
    fn a_data_page_header_gives_its_rows_and_bounds_and_a_cut_one_asks_for_more() {
        let bytes = file_bytes();
        let (summary, length) = PageSummary::read(&bytes[4..]).expect("the first page's header");
        let data = summary.data.expect("a data page");
        assert_eq!((data.values, data.rows, data.null_count), (10, Some(10), Some(0)));
        assert_eq!((data.min.unwrap(), data.max.unwrap()), (0i32.to_le_bytes().to_vec(), 9i32.to_le_bytes().to_vec()));
        for cut in 0..length {
            assert!(PageSummary::read(&bytes[4..4 + cut]).is_none(), "a header cut at {cut} of {length} bytes");
        }
    }

    #[test]
    fn every_page_of_a_chunk_is_indexed_from_its_header() {
        let source =
            FileSource::Memory(crate::storage::source::MemoryFile::new("t.parquet", bytes::Bytes::from(file_bytes())));
        let metadata = parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::from(file_bytes()))
            .unwrap();
        let (column_index, offset_index) =
            chunk_index(&source, &metadata, 0, 0).unwrap().expect("bounds in every header");
        let ColumnIndexMetaData::INT32(index) = column_index else { panic!("an INT32 index") };
        assert_eq!(index.min_values(), (0..10).map(|page| page * 10).collect::<Vec<i32>>());
        assert_eq!(index.max_values(), (0..10).map(|page| page * 10 + 9).collect::<Vec<i32>>());
        let firsts: Vec<i64> = offset_index.page_locations().iter().map(|page| page.first_row_index).collect();
        assert_eq!(firsts, (0..10).map(|page| page * 10).collect::<Vec<i64>>());
        // Pages follow one another: each starts where the one before ends.
        let pages = offset_index.page_locations();
        assert!(pages.windows(2).all(|w| w[0].offset + i64::from(w[0].compressed_page_size) == w[1].offset));
    }

    proptest! {
        #[test]
        fn hostile_header_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            let _ = PageSummary::read(&bytes);
        }
    }
}
