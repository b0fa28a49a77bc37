//! Flat columns decoded straight into Arrow buffers, for the selected rows only.
//!
//! A top-level column of INT32, INT64, FLOAT, DOUBLE or BOOLEAN values, not repeated, whose
//! Arrow type holds the same bits, or of strings or binaries ([`decodable`]), is decoded
//! here instead of by the parquet crate's array reader; a string column whose chunk is all
//! dictionary-encoded ([`dictionary_decodable`]) as an Arrow dictionary: the selected
//! rows' keys and the chunk's dictionary. The pages holding a selected row are read with
//! the crate's page reader (the others are skipped unread), their definition levels
//! decoded into a validity bitmap, and their values written to the output for the
//! selected rows only: fixed-width PLAIN values copied out of the page, PLAIN strings found
//! by walking the page's lengths up to the last selected one, dictionary indices decoded (a
//! whole page) or read where a selected row's lies, and looked up. The output is allocated
//! once, at the selected count, and never zero-filled.
//!
//! The crate's reader decompresses each page whole. Given [`ZstdPages`] (a zstd chunk with
//! an offset index: the caller reads each page's size from its header), it hands pages
//! over still compressed, and a PLAIN page whose last row is not selected is decompressed
//! only up to its last selected value (see [`zstd_prefix`](crate::format::zstd_prefix)).
//!
//! Why: the crate decodes every row of a page a selection touches into a zero-filled
//! buffer (every key, for a dictionary), and a fragmented selection (the mask policy) is
//! then filtered by pqsift: at ~25% selectivity three quarters of that work is thrown
//! away. Its booleans go through a `Vec<bool>` packed bit by bit; here a PLAIN boolean page
//! is appended to the output bitmap a selected run at a time.
//!
//! A page in another encoding (DELTA_BINARY_PACKED, BYTE_STREAM_SPLIT, RLE booleans,
//! BIT_PACKED levels) makes [`decode_selected`] answer `None`, and the caller decodes the
//! column with the crate.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Array, Int64Array, RecordBatch};
//! use parquet::arrow::ArrowWriter;
//! use parquet::file::reader::{FileReader, SerializedFileReader};
//! use parquet::file::serialized_reader::SerializedPageReader;
//! use pqsift::reading::flat_decode::{decodable, decode_selected};
//! use pqsift::selection::RowSelection;
//!
//! let values = Int64Array::from_iter((0..100).map(|i| (i % 3 != 0).then_some(i * 10)));
//! let batch = RecordBatch::try_from_iter([("v", Arc::new(values) as _)]).unwrap();
//! let mut file = Vec::new();
//! let mut writer = ArrowWriter::try_new(&mut file, batch.schema(), None).unwrap();
//! writer.write(&batch).unwrap();
//! writer.close().unwrap();
//!
//! let file = bytes::Bytes::from(file);
//! let reader = SerializedFileReader::new(file.clone()).unwrap();
//! let chunk = reader.metadata().row_group(0).column(0);
//! let mut pages = SerializedPageReader::new(Arc::new(file), chunk, 100, None).unwrap();
//! let descriptor = reader.metadata().file_metadata().schema_descr().column(0);
//! assert!(decodable(&descriptor, batch.schema().field(0).data_type()));
//!
//! let selection = RowSelection::from_ranges(&[2..5, 98..100], 100).unwrap();
//! let out = decode_selected(&mut pages, &descriptor, &arrow::datatypes::DataType::Int64, &selection, None).unwrap().unwrap();
//! let out = out.as_any().downcast_ref::<Int64Array>().unwrap();
//! assert_eq!(out.iter().collect::<Vec<_>>(), [Some(20), None, Some(40), Some(980), None]);
//! ```

use std::sync::Arc;

use arrow::array::{
    ArrayData, ArrayRef, BooleanArray, BooleanBufferBuilder, DictionaryArray, GenericBinaryArray, GenericStringArray, Int32Array,
    OffsetSizeTrait, make_array, new_empty_array,
};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Int32Type};
use parquet::basic::{Encoding, Type as PhysicalType};
use parquet::column::page::{Page, PageReader};
use parquet::errors::ParquetError;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::schema::types::ColumnDescriptor;

use crate::format::rle_hybrid;
use crate::format::zstd_prefix::ZstdPrefix;
use crate::selection::RowSelection;

/// Why a column could not be decoded here.
#[derive(Debug)]
pub enum DecodeError {
    /// The crate's page reader failed (I/O, decompression, a bad page header).
    Parquet(ParquetError),
    /// The pages' contents are inconsistent.
    Corrupt(String),
}

impl From<ParquetError> for DecodeError {
    fn from(error: ParquetError) -> Self {
        Self::Parquet(error)
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Parquet(e) => e.fmt(f),
            Self::Corrupt(reason) => f.write_str(reason),
        }
    }
}

/// Whether [`decode_selected`] decodes `column` (a leaf of the file's schema) into
/// `arrow_type`: a top-level, non-repeated column whose Arrow type is its physical values'
/// bits reinterpreted, as the crate's array reader does it (INT32 as Int32, UInt32, Date32,
/// Time32; INT64 as Int64, UInt64, Date64, Time64, Duration, Timestamp; FLOAT as Float32;
/// DOUBLE as Float64; BOOLEAN as Boolean), or a BYTE_ARRAY column as strings or binaries
/// (copied out of PLAIN pages, or looked up in the dictionary for dictionary-encoded ones).
/// Types the crate converts value by value (Int8, decimals, Date64 from INT32, ...) are
/// left to it.
pub fn decodable(column: &ColumnDescriptor, arrow_type: &DataType) -> bool {
    if !is_flat(column) {
        return false;
    }
    match column.physical_type() {
        PhysicalType::INT32 => matches!(arrow_type, DataType::Int32 | DataType::UInt32 | DataType::Date32 | DataType::Time32(_)),
        PhysicalType::INT64 => matches!(
            arrow_type,
            DataType::Int64 | DataType::UInt64 | DataType::Date64 | DataType::Time64(_) | DataType::Duration(_) | DataType::Timestamp(..)
        ),
        PhysicalType::FLOAT => *arrow_type == DataType::Float32,
        PhysicalType::DOUBLE => *arrow_type == DataType::Float64,
        PhysicalType::BOOLEAN => *arrow_type == DataType::Boolean,
        PhysicalType::BYTE_ARRAY => matches!(arrow_type, DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary),
        _ => false,
    }
}

/// A top-level column, not repeated, with at most one level of nullability.
fn is_flat(column: &ColumnDescriptor) -> bool {
    column.max_rep_level() == 0 && column.max_def_level() <= 1 && column.path().parts().len() == 1
}

/// Whether [`decode_dictionary_selected`] decodes `chunk` of `column` into an Arrow
/// dictionary of `arrow_type`: a flat string or binary column whose data pages are all
/// dictionary-encoded (the chunk's page encoding statistics say so), the type the crate
/// is asked to decode such chunks in (see
/// [`decode_schema`](crate::reading::string_views::decode_schema)).
pub fn dictionary_decodable(column: &ColumnDescriptor, arrow_type: &DataType, chunk: &ColumnChunkMetaData) -> bool {
    is_flat(column)
        && column.physical_type() == PhysicalType::BYTE_ARRAY
        && matches!(arrow_type, DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary)
        && crate::reading::string_views::all_dictionary_encoded(chunk)
}

/// Decodes the rows of `selection` of a chunk [`dictionary_decodable`] from `pages` as a
/// `Dictionary(Int32, arrow_type)`: the selected rows' keys (a key is read only where a
/// row is selected) over the chunk's whole dictionary. `Ok(None)`: a page is not
/// dictionary-encoded after all.
pub fn decode_dictionary_selected<R: PageReader + ?Sized>(
    pages: &mut R,
    column: &ColumnDescriptor,
    arrow_type: &DataType,
    selection: &RowSelection,
    zstd: Option<&mut ZstdPages<'_>>,
) -> Result<Option<ArrayRef>, DecodeError> {
    let nullable = column.max_def_level() == 1;
    let sink = KeysOutput { keys: Output::new(selection.selected_count(), nullable), values: None, value_type: arrow_type.clone() };
    decode_pages(pages, nullable, selection, sink, zstd)?.map(KeysOutput::finish).transpose()
}

/// Decodes the rows of `selection` (over the whole column chunk) from `pages`, a page
/// reader over one chunk of `column` ([`decodable`] into `arrow_type`), as one array of
/// `arrow_type`. Pages without a selected row are skipped when the reader knows their row
/// counts (an offset index, or v1 headers: one level a row). `Ok(None)`: a page is in an
/// encoding decoded only by the crate (nothing is returned of what was read).
///
/// `zstd`: the reader hands pages over still zstd-compressed (a reader over the chunk's
/// metadata with its codec set to none), each decompressed here only as far as its
/// selected rows need (see [`zstd_prefix`](crate::format::zstd_prefix)).
pub fn decode_selected<R: PageReader + ?Sized>(
    pages: &mut R,
    column: &ColumnDescriptor,
    arrow_type: &DataType,
    selection: &RowSelection,
    zstd: Option<&mut ZstdPages<'_>>,
) -> Result<Option<ArrayRef>, DecodeError> {
    let nullable = column.max_def_level() == 1;
    let selected = selection.selected_count();
    match (column.physical_type(), arrow_type) {
        (PhysicalType::INT32 | PhysicalType::FLOAT, _) => {
            let out = decode_pages(pages, nullable, selection, Output::<u32>::new(selected, nullable), zstd)?;
            Ok(out.map(|out| out.finish(arrow_type)).transpose()?)
        }
        (PhysicalType::INT64 | PhysicalType::DOUBLE, _) => {
            let out = decode_pages(pages, nullable, selection, Output::<u64>::new(selected, nullable), zstd)?;
            Ok(out.map(|out| out.finish(arrow_type)).transpose()?)
        }
        (PhysicalType::BOOLEAN, _) => {
            let out = decode_pages(pages, nullable, selection, BitOutput::new(selected, nullable), zstd)?;
            Ok(out.map(BitOutput::finish))
        }
        (PhysicalType::BYTE_ARRAY, DataType::Utf8 | DataType::Binary) => {
            let out = decode_pages(pages, nullable, selection, BytesOutput::<i32>::new(selected, nullable, arrow_type), zstd)?;
            Ok(out.map(BytesOutput::finish).transpose()?)
        }
        (PhysicalType::BYTE_ARRAY, DataType::LargeUtf8 | DataType::LargeBinary) => {
            let out = decode_pages(pages, nullable, selection, BytesOutput::<i64>::new(selected, nullable, arrow_type), zstd)?;
            Ok(out.map(BytesOutput::finish).transpose()?)
        }
        (other, _) => Err(DecodeError::Corrupt(format!("{other} as {arrow_type} is not decoded here"))),
    }
}

/// Where a page is in its column chunk: the chunk's dictionary page, or its `n`-th data
/// page (counting those skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAt {
    Dictionary,
    Data(usize),
}

/// Pages handed over still zstd-compressed: a decompression context, reused from page to
/// page, and each page's uncompressed size — as its frames declare it (one-shot writers:
/// Arrow C++, DuckDB), else from its header (streaming writers: parquet-mr, arrow-rs),
/// which the crate's reader does not pass on.
pub struct ZstdPages<'s> {
    /// Taken from, and given back to, the thread's [`CONTEXT`].
    context: Option<zstd_safe::DCtx<'static>>,
    /// The most a page may take uncompressed (`max_page_bytes`).
    max_size: usize,
    sizes: Box<dyn FnMut(PageAt) -> Result<usize, DecodeError> + 's>,
    /// Whether sizes the frames declare are used (off in tests of the header path: the
    /// crate's writer, like Arrow C++, declares them).
    declared: bool,
}

thread_local! {
    /// A decompression context per thread, kept from chunk to chunk: making one (and its
    /// buffers) costs more than a small page's decompression.
    static CONTEXT: std::cell::RefCell<Option<zstd_safe::DCtx<'static>>> = const { std::cell::RefCell::new(None) };
}

impl<'s> ZstdPages<'s> {
    /// Pages of at most `max_size` bytes uncompressed; `sizes` gives the size of a page
    /// whose frames do not declare it (a frame declaring more is refused).
    pub fn new(max_size: usize, sizes: impl FnMut(PageAt) -> Result<usize, DecodeError> + 's) -> Self {
        let context = CONTEXT.with(|kept| kept.borrow_mut().take()).unwrap_or_else(zstd_safe::DCtx::create);
        Self { context: Some(context), max_size, sizes: Box::new(sizes), declared: true }
    }

    #[cfg(test)]
    fn from_headers_only(mut self) -> Self {
        self.declared = false;
        self
    }

    /// The page at `at`, still compressed as `compressed`, to be decompressed on demand.
    fn page(&mut self, at: PageAt, compressed: bytes::Bytes) -> Result<ZstdPrefix<'_>, DecodeError> {
        self.page_after(at, compressed, 0)
    }

    /// The same for a page whose first `skipped` uncompressed bytes (a v2 page's levels)
    /// are not in `compressed`.
    fn page_after(&mut self, at: PageAt, compressed: bytes::Bytes, skipped: usize) -> Result<ZstdPrefix<'_>, DecodeError> {
        // The frames' declared sizes summed (their block headers walked, no byte decoded):
        // no read of the page's header.
        let declared = match self.declared {
            true => zstd_safe::find_decompressed_size(&compressed),
            false => Ok(None),
        };
        let size = match declared {
            Ok(Some(size)) => usize::try_from(size)
                .ok()
                .filter(|&size| size <= self.max_size)
                .ok_or_else(|| DecodeError::Corrupt(format!("a zstd page declares {size} bytes, more than {}", self.max_size)))?,
            _ => (self.sizes)(at)?
                .checked_sub(skipped)
                .ok_or_else(|| DecodeError::Corrupt(format!("a page's levels ({skipped} bytes) exceed its uncompressed size")))?,
        };
        Ok(ZstdPrefix::new(self.context.as_mut().expect("given back on drop only"), compressed, size))
    }
}

impl Drop for ZstdPages<'_> {
    fn drop(&mut self) {
        if let Some(context) = self.context.take() {
            CONTEXT.with(|kept| *kept.borrow_mut() = Some(context));
        }
    }
}

/// The most values reserved before the pages are seen: a footer may claim any row count.
const MAX_RESERVED_VALUES: usize = 1 << 22;

/// One data page, its levels decoded.
struct DataPage<'z> {
    /// Rows (= levels: the column is flat).
    rows: usize,
    /// Which rows hold a value; `None`: all of them.
    valid: Option<BooleanBuffer>,
    encoding: Encoding,
    /// The values' bytes (after the levels).
    values: PageValues<'z>,
}

impl DataPage<'_> {
    fn non_null(&self) -> usize {
        self.valid.as_ref().map_or(self.rows, BooleanBuffer::count_set_bits)
    }

    /// The number of values stored before row `row` (the rows before it that are valid).
    fn stored_before(&self, row: usize) -> usize {
        self.valid.as_ref().map_or(row, |valid| valid.slice(0, row).count_set_bits())
    }
}

/// A data page's value bytes: decompressed, or a zstd frame decompressed as far as asked.
enum PageValues<'z> {
    Ready(bytes::Bytes),
    /// The frame's output from byte `start` on (a v1 page's levels come first).
    Zstd { frame: ZstdPrefix<'z>, start: usize },
}

impl PageValues<'_> {
    /// At least the first `n` value bytes (all of them, if the page holds fewer; all that
    /// is decompressed so far, if more): `usize::MAX` asks for the whole page.
    fn prefix(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        match self {
            Self::Ready(bytes) => Ok(bytes),
            Self::Zstd { frame, start } => {
                let start = *start;
                let bytes = frame.prefix(start.saturating_add(n)).map_err(DecodeError::Corrupt)?;
                Ok(&bytes[start.min(bytes.len())..])
            }
        }
    }

    /// The value bytes the page holds (decompressed or not).
    fn len(&self) -> usize {
        match self {
            Self::Ready(bytes) => bytes.len(),
            Self::Zstd { frame, start } => frame.size().saturating_sub(*start),
        }
    }

    /// Drops the first `n` bytes (the page's levels, once decoded).
    fn advance(&mut self, n: usize) {
        match self {
            Self::Ready(bytes) => *bytes = bytes.slice(n.min(bytes.len())..),
            Self::Zstd { start, .. } => *start += n,
        }
    }
}

/// Where decoded values go: fixed-width values or bits.
trait Sink {
    /// Takes the dictionary page's PLAIN values; `false`: not decoded here.
    fn dictionary(&mut self, values: &[u8], count: usize) -> Result<bool, DecodeError>;
    /// Appends `page`'s rows that `selected` (page-relative) selects; `false`: the page's
    /// encoding is not decoded here.
    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError>;
}

/// Reads `pages` for the rows of `selection` into `sink`.
fn decode_pages<R: PageReader + ?Sized, S: Sink>(
    pages: &mut R,
    nullable: bool,
    selection: &RowSelection,
    mut sink: S,
    mut zstd: Option<&mut ZstdPages<'_>>,
) -> Result<Option<S>, DecodeError> {
    let Some((_, end)) = selection.selected_bounds() else {
        return Ok(Some(sink));
    };
    let total = selection.row_count();
    // Each page's rows, in order: skipped pages' windows are taken too.
    let mut windows = selection.windows();
    let mut row = 0;
    // A dictionary page is skipped and read only when a dictionary-encoded page is decoded
    // (where the reader can hand it back): the selected pages of a chunk whose writer fell
    // back to PLAIN never need it.
    let mut deferred = false;
    // The next data page's position in the chunk (for its header, when read compressed).
    let mut data_pages = 0;
    while row < end {
        let Some(next) = pages.peek_next_page()? else {
            return Err(DecodeError::Corrupt(format!("the column chunk's pages hold {row} of its {total} rows")));
        };
        if next.is_dict {
            if pages.supports_deferred_dictionary() {
                pages.skip_next_page()?;
                deferred = true;
            } else if !load_dictionary(pages.get_next_page()?, &mut sink, zstd.as_deref_mut())? {
                return Ok(None);
            }
            continue;
        }
        let at = PageAt::Data(data_pages);
        data_pages += 1;
        // A flat column has one level a row: a v1 header's level count is its rows.
        let rows = next.num_rows.or(next.num_levels);
        let mut selected = None;
        if let Some(rows) = rows {
            if rows > total - row {
                return Err(DecodeError::Corrupt(format!("the column chunk's pages hold more than its {total} rows")));
            }
            // Levels and masks are built a page at a time: a page claiming more rows than a
            // decode batch is left to the crate, which decodes it in bounded batches.
            if rows > MAX_PAGE_ROWS {
                return Ok(None);
            }
            let window = windows.next(rows);
            if window.count_set_bits() == 0 {
                pages.skip_next_page()?;
                row += rows;
                continue;
            }
            selected = Some(window);
        }
        let Some(page) = pages.get_next_page()? else {
            return Err(DecodeError::Corrupt(format!("the column chunk's pages hold {row} of its {total} rows")));
        };
        if !plausible_rows(&page, total - row, rows)? {
            return Ok(None);
        }
        if deferred && page_encoding(&page).is_some_and(is_dictionary_encoding) {
            deferred = false;
            if !load_dictionary(pages.take_deferred_dictionary()?, &mut sink, zstd.as_deref_mut())? {
                return Ok(None);
            }
        }
        // Decompressed as far as needed only where that can stop short: a PLAIN page whose
        // last row is not selected. (Indices are decoded whole.)
        let lazy = page_encoding(&page) == Some(Encoding::PLAIN)
            && selected.as_ref().is_some_and(|window| !window.is_empty() && !window.value(window.len() - 1));
        let Some(mut page) = data_page(page, nullable, zstd.as_deref_mut().map(|zstd| (zstd, at, lazy)))? else {
            return Ok(None);
        };
        let selected = selected.unwrap_or_else(|| windows.next(page.rows));
        if !sink.page(&mut page, &selected)? {
            return Ok(None);
        }
        row += page.rows;
    }
    Ok(Some(sink))
}

/// Whether data page `page` holds no more rows than the `left` of its chunk and, where the
/// offset index said (`expected`), as many as it said; `false`: it claims more than a
/// decode batch (left to the crate).
fn plausible_rows(page: &Page, left: usize, expected: Option<usize>) -> Result<bool, DecodeError> {
    let rows = match page {
        Page::DataPage { num_values, .. } => *num_values as usize,
        Page::DataPageV2 { num_rows, .. } => *num_rows as usize,
        Page::DictionaryPage { .. } => return Err(DecodeError::Corrupt("a second dictionary page".into())),
    };
    if rows > left {
        return Err(DecodeError::Corrupt(format!("the column chunk's pages hold {rows} rows where {left} are left")));
    }
    if let Some(expected) = expected
        && expected != rows
    {
        return Err(DecodeError::Corrupt(format!("a page holds {rows} rows where the offset index says {expected}")));
    }
    Ok(rows <= MAX_PAGE_ROWS)
}

/// A data page's value encoding.
fn page_encoding(page: &Page) -> Option<Encoding> {
    match page {
        Page::DataPage { encoding, .. } | Page::DataPageV2 { encoding, .. } => Some(*encoding),
        Page::DictionaryPage { .. } => None,
    }
}

fn is_dictionary_encoding(encoding: Encoding) -> bool {
    matches!(encoding, Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY)
}

/// Hands the dictionary page `page` (still compressed when `zstd` is given) to `sink`;
/// `false`: not decoded here.
fn load_dictionary<S: Sink>(page: Option<Page>, sink: &mut S, zstd: Option<&mut ZstdPages<'_>>) -> Result<bool, DecodeError> {
    match page {
        Some(Page::DictionaryPage { buf, num_values, encoding: Encoding::PLAIN | Encoding::PLAIN_DICTIONARY, .. }) => {
            let buf = match zstd {
                Some(zstd) => zstd.page(PageAt::Dictionary, buf)?.into_page().map_err(DecodeError::Corrupt)?,
                None => buf,
            };
            sink.dictionary(&buf, num_values as usize)
        }
        Some(Page::DictionaryPage { .. }) => Ok(false),
        _ => Err(DecodeError::Corrupt("a dictionary page was announced but not found".into())),
    }
}

/// The most rows of a page decoded here (the reader's decode batch: see
/// `MAX_DECODE_BATCH_ROWS` in `row_group_reader`).
const MAX_PAGE_ROWS: usize = 1 << 20;

/// `page` split into its levels and values (`zstd`: still compressed, the `at`-th page of
/// its chunk, decompressed as far as asked if `lazy`, else at once); `None`: levels in an
/// encoding not decoded here. The column has no repetition levels and at most one
/// definition level.
fn data_page<'z>(page: Page, nullable: bool, zstd: Option<(&'z mut ZstdPages<'_>, PageAt, bool)>) -> Result<Option<DataPage<'z>>, DecodeError> {
    let corrupt = |what: &str| DecodeError::Corrupt(format!("a data page's {what} run past its end"));
    match page {
        Page::DataPage { buf, num_values, encoding, def_level_encoding, .. } => {
            let rows = num_values as usize;
            let mut values = match zstd {
                Some((zstd, at, true)) => PageValues::Zstd { frame: zstd.page(at, buf)?, start: 0 },
                Some((zstd, at, false)) => PageValues::Ready(zstd.page(at, buf)?.into_page().map_err(DecodeError::Corrupt)?),
                None => PageValues::Ready(buf),
            };
            if !nullable {
                return Ok(Some(DataPage { rows, valid: None, encoding, values }));
            }
            if def_level_encoding != Encoding::RLE {
                return Ok(None);
            }
            // The levels: their length (4 bytes), then the RLE runs.
            let length = values.prefix(4)?.get(..4).ok_or_else(|| corrupt("definition levels"))?;
            let length = u32::from_le_bytes(length.try_into().expect("4 bytes")) as usize;
            let end = length.checked_add(4).ok_or_else(|| corrupt("definition levels"))?;
            let levels = values.prefix(end)?.get(4..end).ok_or_else(|| corrupt("definition levels"))?;
            let valid = validity(levels, rows)?;
            values.advance(end);
            Ok(Some(DataPage { rows, valid, encoding, values }))
        }
        Page::DataPageV2 {
            buf, num_values, encoding, num_nulls, num_rows, def_levels_byte_len, rep_levels_byte_len, is_compressed, ..
        } => {
            if num_values != num_rows {
                return Err(DecodeError::Corrupt(format!("a page of a flat column holds {num_values} values in {num_rows} rows")));
            }
            let rows = num_rows as usize;
            // Levels come first, never compressed.
            let start = rep_levels_byte_len as usize;
            let end = start + def_levels_byte_len as usize;
            if end > buf.len() {
                return Err(corrupt("levels"));
            }
            let valid = match nullable && num_nulls > 0 {
                true => validity(&buf[start..end], rows)?,
                false => None,
            };
            let rest = buf.slice(end..);
            let values = match zstd {
                Some((zstd, at, true)) if is_compressed => PageValues::Zstd { frame: zstd.page_after(at, rest, end)?, start: 0 },
                Some((zstd, at, false)) if is_compressed => {
                    PageValues::Ready(zstd.page_after(at, rest, end)?.into_page().map_err(DecodeError::Corrupt)?)
                }
                _ => PageValues::Ready(rest),
            };
            Ok(Some(DataPage { rows, valid, encoding, values }))
        }
        Page::DictionaryPage { .. } => Err(DecodeError::Corrupt("a second dictionary page".into())),
    }
}

/// The validity of a page's `rows` from its RLE definition levels (`None`: every row valid).
fn validity(levels: &[u8], rows: usize) -> Result<Option<BooleanBuffer>, DecodeError> {
    let mut bits = BooleanBufferBuilder::new(rows);
    rle_hybrid::decode_bits(levels, rows, &mut bits).map_err(|e| DecodeError::Corrupt(format!("definition levels: {e}")))?;
    let bits = bits.finish();
    Ok((bits.count_set_bits() < rows).then_some(bits))
}

/// A fixed-width value, read from its little-endian bytes.
trait Native: Copy + Default + arrow::datatypes::ArrowNativeType {
    const WIDTH: usize;
    fn from_le(bytes: &[u8]) -> Self;
}

impl Native for u32 {
    const WIDTH: usize = 4;
    fn from_le(bytes: &[u8]) -> Self {
        u32::from_le_bytes(bytes.try_into().expect("4 bytes"))
    }
}

impl Native for u64 {
    const WIDTH: usize = 8;
    fn from_le(bytes: &[u8]) -> Self {
        u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
    }
}

/// Fixed-width values (their bits) and, for an optional column, their validity.
struct Output<T> {
    values: Vec<T>,
    validity: Option<BooleanBufferBuilder>,
    dictionary: Option<Vec<T>>,
    /// A page's dictionary indices, reused from page to page.
    indices: Vec<u32>,
    /// A page's stored values before they are spread over its null rows, reused.
    scratch: Vec<T>,
}

impl<T: Native> Output<T> {
    fn new(selected: usize, nullable: bool) -> Self {
        let reserve = selected.min(MAX_RESERVED_VALUES);
        Self {
            values: Vec::with_capacity(reserve),
            validity: nullable.then(|| BooleanBufferBuilder::new(reserve)),
            dictionary: None,
            indices: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn finish(mut self, arrow_type: &DataType) -> Result<ArrayRef, DecodeError> {
        let len = self.values.len();
        let nulls = self.validity.as_mut().map(|v| NullBuffer::new(v.finish())).filter(|n| n.null_count() > 0);
        let data = ArrayData::builder(arrow_type.clone())
            .len(len)
            .add_buffer(Buffer::from_vec(self.values))
            .nulls(nulls)
            .build()
            .map_err(|e| DecodeError::Corrupt(e.to_string()))?;
        Ok(make_array(data))
    }

    /// Appends the `selected` rows of `page`, the `i`-th stored (non-null) value being
    /// `value(i)`, asked for in ascending order; `Err(i)` when `value(i)` is `None` (the
    /// page is corrupt: the caller says how). An `Option`, not a `Result`: a `Result`
    /// with the error's text is returned through memory, once per row.
    fn pick(&mut self, valid: Option<&BooleanBuffer>, selected: &BooleanBuffer, mut value: impl FnMut(usize) -> Option<T>) -> Result<(), usize> {
        let Some(valid) = valid else {
            let count = selected.count_set_bits();
            if let Some(validity) = &mut self.validity {
                validity.append_n(count, true);
            }
            // Written straight into the reserved output, without a capacity check a row.
            let start = self.values.len();
            self.values.reserve(count);
            let mut written = 0;
            let mut missing = None;
            for (slot, row) in self.values.spare_capacity_mut()[..count].iter_mut().zip(selected.set_indices()) {
                match value(row) {
                    Some(v) => {
                        slot.write(v);
                        written += 1;
                    }
                    None => {
                        missing = Some(row);
                        break;
                    }
                }
            }
            // SAFETY: the first `written` slots past `start` were written above.
            unsafe { self.values.set_len(start + written) };
            return missing.map_or(Ok(()), Err);
        };
        let validity = self.validity.as_mut().expect("levels only for an optional column");
        let rank = Rank::new(valid);
        for row in selected.set_indices() {
            let stored = rank.stored_index(row);
            validity.append(stored.is_some());
            self.values.push(match stored {
                Some(i) => value(i).ok_or(i)?,
                None => T::default(),
            });
        }
        Ok(())
    }
}

/// Where a page's rows' values are stored: the values skip null rows, so a valid row's
/// value is the number of valid rows before it — counted in O(1) from the validity's
/// 64-row words and their prefix sums, so that a partly selected page visits its selected
/// rows only.
struct Rank {
    words: Vec<u64>,
    /// Valid rows before each word.
    before: Vec<u32>,
}

impl Rank {
    fn new(valid: &BooleanBuffer) -> Self {
        let chunks = valid.bit_chunks();
        let words: Vec<u64> = chunks.iter().chain(std::iter::once(chunks.remainder_bits())).collect();
        let mut sum = 0;
        let before = words
            .iter()
            .map(|word| {
                let here = sum;
                sum += word.count_ones();
                here
            })
            .collect();
        Self { words, before }
    }

    /// The stored index of row `row`'s value; `None` where the row is null.
    #[inline]
    fn stored_index(&self, row: usize) -> Option<usize> {
        let (word, bit) = (self.words[row / 64], row % 64);
        (word >> bit & 1 == 1).then(|| self.before[row / 64] as usize + (word & ((1u64 << bit) - 1)).count_ones() as usize)
    }
}

impl<T: Native> Sink for Output<T> {
    fn dictionary(&mut self, values: &[u8], count: usize) -> Result<bool, DecodeError> {
        if values.len() / T::WIDTH < count {
            return Err(DecodeError::Corrupt(format!("a dictionary page of {} bytes claims {count} values", values.len())));
        }
        self.dictionary = Some(values.chunks_exact(T::WIDTH).take(count).map(T::from_le).collect());
        Ok(true)
    }

    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError> {
        let stored = page.non_null();
        let count = selected.count_set_bits();
        self.values.reserve(count);
        if let Some(validity) = &mut self.validity {
            validity.reserve(count);
        }
        let whole = count == page.rows;
        let dictionary = match page.encoding {
            Encoding::PLAIN => None,
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => Some(
                self.dictionary
                    .take()
                    .ok_or_else(|| DecodeError::Corrupt("a dictionary-encoded page without a dictionary page".into()))?,
            ),
            _ => return Ok(false),
        };
        // A PLAIN page is needed up to its last selected value; indices, whole.
        let needed = match &dictionary {
            // (Searched from the end: a bit at a time, but the last row is usually near.)
            None if !whole => selected.iter().rposition(|bit| bit).map_or(0, |last| page.stored_before(last + 1)),
            None => stored,
            Some(_) => usize::MAX / T::WIDTH,
        };
        let values = page.values.prefix(needed * T::WIDTH)?;
        if dictionary.is_none() && values.len() / T::WIDTH < needed {
            return Err(DecodeError::Corrupt(format!("a page of {} value bytes holds {stored} values", values.len())));
        }
        let valid = page.valid.as_ref();
        let result = match whole {
            // Every row of the page: its stored values decoded in one pass, then spread over
            // the null rows (if any).
            true => self.whole_page(values, valid, page.rows, stored, dictionary.as_deref()),
            // Some rows: each selected row's value read where it lies (indices: unpacked
            // in one pass first when the selection is dense).
            false => self.selected_rows(values, valid, stored, selected, dense_selection(count, stored), dictionary.as_deref()),
        };
        self.dictionary = dictionary;
        result.map(|()| true)
    }
}

impl<T: Native> Output<T> {
    /// Appends every row of a page of `rows` rows whose validity is `valid` and whose
    /// `stored` values are `values` (PLAIN, or indices into `dictionary`).
    fn whole_page(
        &mut self,
        values: &[u8],
        valid: Option<&BooleanBuffer>,
        rows: usize,
        stored: usize,
        dictionary: Option<&[T]>,
    ) -> Result<(), DecodeError> {
        // Without nulls the values go straight to the output; with them, to a scratch
        // buffer first.
        let mut dense = match valid {
            None => std::mem::take(&mut self.values),
            Some(_) => {
                let mut scratch = std::mem::take(&mut self.scratch);
                scratch.clear();
                scratch
            }
        };
        let decoded = self.dense_values(values, stored, dictionary, &mut dense);
        let Some(valid) = valid else {
            self.values = dense;
            decoded?;
            if let Some(validity) = &mut self.validity {
                validity.append_n(rows, true);
            }
            return Ok(());
        };
        decoded?;
        // Each row takes the next stored value and moves on by its validity bit, without a
        // branch: a null row's slot holds a neighbour's value (any value is allowed under
        // a null), and the one past the last is a default.
        dense.push(T::default());
        let start = self.values.len();
        self.values.resize(start + rows, T::default());
        let out = &mut self.values[start..];
        let chunks = valid.bit_chunks();
        let words = chunks.iter().chain(std::iter::once(chunks.remainder_bits()));
        let mut next = 0;
        for (rows, word) in out.chunks_mut(64).zip(words) {
            for (bit, slot) in rows.iter_mut().enumerate() {
                *slot = dense[next];
                next += (word >> bit & 1) as usize;
            }
        }
        self.validity.as_mut().expect("levels only for an optional column").append_buffer(valid);
        self.scratch = dense;
        Ok(())
    }

    /// Appends the `stored` values `values` (PLAIN, or indices into `dictionary`) to `out`.
    fn dense_values(&mut self, values: &[u8], stored: usize, dictionary: Option<&[T]>, out: &mut Vec<T>) -> Result<(), DecodeError> {
        let Some(dictionary) = dictionary else {
            out.extend(values[..stored * T::WIDTH].chunks_exact(T::WIDTH).map(T::from_le));
            return Ok(());
        };
        let mut indices = std::mem::take(&mut self.indices);
        let decoded = decode_indices(values, stored, dictionary.len(), &mut indices);
        if decoded.is_ok() {
            out.extend(indices.iter().map(|&k| dictionary[k as usize]));
        }
        self.indices = indices;
        decoded
    }

    /// Appends the `selected` rows of a page (validity `valid`, `stored` values `values`:
    /// PLAIN, or indices into `dictionary`), each value read where it lies — or, with
    /// `dense`, the indices unpacked in one pass first.
    fn selected_rows(
        &mut self,
        values: &[u8],
        valid: Option<&BooleanBuffer>,
        stored: usize,
        selected: &BooleanBuffer,
        dense: bool,
        dictionary: Option<&[T]>,
    ) -> Result<(), DecodeError> {
        let past_the_end = |i: usize| DecodeError::Corrupt(format!("a page of {stored} values asked for value {i}"));
        let Some(dictionary) = dictionary else {
            let value = |i: usize| values.get(i * T::WIDTH..(i + 1) * T::WIDTH).map(T::from_le);
            return self.pick(valid, selected, value).map_err(past_the_end);
        };
        if stored == 0 {
            return self.pick(valid, selected, |_| None).map_err(|_| DecodeError::Corrupt("a null page asked for a value".into()));
        }
        if dense {
            let mut indices = std::mem::take(&mut self.indices);
            // Every index checked against the dictionary's length once decoded.
            let result = decode_indices(values, stored, dictionary.len(), &mut indices)
                .and_then(|()| self.pick(valid, selected, |i| indices.get(i).map(|&k| dictionary[k as usize])).map_err(past_the_end));
            self.indices = indices;
            return result;
        }
        let mut cursor = indices_cursor(values)?;
        let mut failure = None;
        let picked = self.pick(valid, selected, |i| match cursor.get(i) {
            Ok(k) => dictionary.get(k as usize).copied().or_else(|| {
                failure = Some(outside(k, dictionary.len()));
                None
            }),
            Err(e) => {
                failure = Some(indices_error(e));
                None
            }
        });
        picked.map_err(|i| failure.unwrap_or_else(|| past_the_end(i)))
    }
}

/// Decodes a page's `stored` dictionary indices (`values`: the bit width, then the RLE
/// runs) into `indices`, each checked to be below `dictionary_len`.
fn decode_indices(values: &[u8], stored: usize, dictionary_len: usize, indices: &mut Vec<u32>) -> Result<(), DecodeError> {
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
/// read each selected one where it lies (a cursor: a few nanoseconds each). At ~25% of the
/// rows selected the cursor took ~10% of a read's CPU.
fn dense_selection(selected: usize, stored: usize) -> bool {
    selected.saturating_mul(8) >= stored
}

/// A cursor over a page's dictionary indices (`values`: the bit width, then the RLE runs).
fn indices_cursor(values: &[u8]) -> Result<rle_hybrid::Cursor<'_>, DecodeError> {
    let (&width, data) = values.split_first().unwrap_or((&0, &[]));
    rle_hybrid::Cursor::new(data, width).map_err(indices_error)
}

/// A dictionary index past the end of a dictionary of `len` values.
fn outside(index: u32, len: usize) -> DecodeError {
    DecodeError::Corrupt(format!("dictionary index {index} in a dictionary of {len}"))
}

/// Dictionary keys of the selected rows, and the chunk's dictionary.
struct KeysOutput {
    /// The keys, looked up in the identity dictionary `0..n` (which checks them).
    keys: Output<u32>,
    values: Option<ArrayRef>,
    value_type: DataType,
}

impl KeysOutput {
    fn finish(self) -> Result<ArrayRef, DecodeError> {
        let keys = self.keys.finish(&DataType::Int32)?;
        let keys = keys.as_any().downcast_ref::<Int32Array>().expect("Int32 keys").clone();
        let values = self.values.unwrap_or_else(|| new_empty_array(&self.value_type));
        let dictionary = DictionaryArray::<Int32Type>::try_new(keys, values).map_err(|e| DecodeError::Corrupt(e.to_string()))?;
        Ok(Arc::new(dictionary))
    }
}

impl Sink for KeysOutput {
    fn dictionary(&mut self, values: &[u8], count: usize) -> Result<bool, DecodeError> {
        let values = match self.value_type {
            DataType::Utf8 => byte_arrays::<i32>(values, count, true),
            DataType::LargeUtf8 => byte_arrays::<i64>(values, count, true),
            DataType::Binary => byte_arrays::<i32>(values, count, false),
            _ => byte_arrays::<i64>(values, count, false),
        };
        let Some(values) = values? else { return Ok(false) };
        let count = u32::try_from(values.len()).map_err(|_| DecodeError::Corrupt("a dictionary of over 2^32 values".into()))?;
        self.values = Some(values);
        self.keys.dictionary = Some((0..count).collect());
        Ok(true)
    }

    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError> {
        match page.encoding {
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => self.keys.page(page, selected),
            _ => Ok(false),
        }
    }
}

/// The `count` PLAIN byte arrays (each a 4-byte little-endian length, then the bytes) of a
/// dictionary page, as a string array (UTF-8 checked) or a binary one. `None`: more bytes
/// than `O` offsets reach (the crate decides what to do with them).
fn byte_arrays<O: OffsetSizeTrait>(page: &[u8], count: usize, utf8: bool) -> Result<Option<ArrayRef>, DecodeError> {
    let ends = || DecodeError::Corrupt(format!("a dictionary page of {} bytes ends before its {count} values", page.len()));
    if page.len() / 4 < count {
        return Err(ends());
    }
    let mut offsets: Vec<O> = Vec::with_capacity(count + 1);
    offsets.push(O::zero());
    let mut values = Vec::with_capacity(page.len() - 4 * count);
    let mut at = 0;
    for _ in 0..count {
        let length = page.get(at..at + 4).ok_or_else(ends)?;
        let length = u32::from_le_bytes(length.try_into().expect("4 bytes")) as usize;
        let value = page.get(at + 4..at + 4 + length).ok_or_else(ends)?;
        values.extend_from_slice(value);
        let Some(end) = O::from_usize(values.len()) else { return Ok(None) };
        offsets.push(end);
        at += 4 + length;
    }
    // Offsets only grow: checked above, one value at a time.
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    let values = Buffer::from_vec(values);
    let array: ArrayRef = match utf8 {
        true => Arc::new(
            GenericStringArray::<O>::try_new(offsets, values, None)
                .map_err(|e| DecodeError::Corrupt(format!("a dictionary value is not UTF-8: {e}")))?,
        ),
        false => Arc::new(GenericBinaryArray::<O>::try_new(offsets, values, None).map_err(|e| DecodeError::Corrupt(e.to_string()))?),
    };
    Ok(Some(array))
}

/// A failure decoding a page's dictionary indices.
fn indices_error(reason: String) -> DecodeError {
    DecodeError::Corrupt(format!("dictionary indices: {reason}"))
}

/// Strings or binaries: the selected rows' values copied into one buffer, from PLAIN
/// pages (a value's bytes follow its 4-byte length: the page is walked up to the last
/// selected value, and no further) or looked up in the chunk's dictionary.
struct BytesOutput<O> {
    offsets: Vec<O>,
    values: Vec<u8>,
    validity: Option<BooleanBufferBuilder>,
    /// The dictionary page's values (UTF-8 is checked on the output).
    dictionary: Option<arrow::array::LargeBinaryArray>,
    /// A page's dictionary indices, reused from page to page.
    indices: Vec<u32>,
    /// A page's selected rows: the stored index of each one's value, or [`NULL_ROW`].
    wanted: Vec<u32>,
    /// Selected rows not yet appended.
    rows_left: usize,
    arrow_type: DataType,
}

/// A selected row without a value.
const NULL_ROW: u32 = u32::MAX;

/// The most string bytes reserved beyond the page at hand, for the rows still to come.
const RESERVE_AHEAD: usize = 64 << 20;

impl<O: OffsetSizeTrait> BytesOutput<O> {
    fn new(selected: usize, nullable: bool, arrow_type: &DataType) -> Self {
        let reserve = selected.min(MAX_RESERVED_VALUES);
        let mut offsets = Vec::with_capacity(reserve + 1);
        offsets.push(O::zero());
        Self {
            offsets,
            values: Vec::new(),
            validity: nullable.then(|| BooleanBufferBuilder::new(reserve)),
            dictionary: None,
            indices: Vec::new(),
            wanted: Vec::new(),
            rows_left: selected,
            arrow_type: arrow_type.clone(),
        }
    }

    fn finish(mut self) -> Result<ArrayRef, DecodeError> {
        let nulls = self.validity.as_mut().map(|v| NullBuffer::new(v.finish())).filter(|n| n.null_count() > 0);
        self.values.shrink_to_fit();
        // Offsets only grow: each is the values' length after a row.
        let offsets = OffsetBuffer::new(ScalarBuffer::from(self.offsets));
        let values = Buffer::from_vec(self.values);
        Ok(match self.arrow_type {
            DataType::Utf8 | DataType::LargeUtf8 => Arc::new(
                GenericStringArray::<O>::try_new(offsets, values, nulls)
                    .map_err(|e| DecodeError::Corrupt(format!("a value is not UTF-8: {e}")))?,
            ),
            _ => Arc::new(GenericBinaryArray::<O>::try_new(offsets, values, nulls).map_err(|e| DecodeError::Corrupt(e.to_string()))?),
        })
    }

    /// Ends the row just appended; `false`: the values outgrew `O` (left to the crate).
    #[inline]
    fn end_row(&mut self) -> bool {
        match O::from_usize(self.values.len()) {
            Some(end) => {
                self.offsets.push(end);
                true
            }
            None => false,
        }
    }

    /// The wanted rows from a PLAIN page's `stored` values.
    fn plain(&mut self, values: &mut PageValues<'_>, stored: usize) -> Result<bool, DecodeError> {
        let short = || DecodeError::Corrupt(format!("a page's {stored} values run past its end"));
        let wanted = std::mem::take(&mut self.wanted);
        let mut data = values.prefix(0)?;
        // The value at `at` (its length first) is the `index`-th stored.
        let (mut at, mut index) = (0usize, 0u32);
        let mut fits = true;
        for &want in &wanted {
            if want != NULL_ROW {
                if want as usize >= stored {
                    return Err(short());
                }
                loop {
                    if data.len() < at + 4 {
                        data = values.prefix(at + 4)?;
                    }
                    let length = data.get(at..at + 4).ok_or_else(short)?;
                    let end = at + 4 + u32::from_le_bytes(length.try_into().expect("4 bytes")) as usize;
                    if index == want {
                        if data.len() < end {
                            data = values.prefix(end)?;
                        }
                        self.values.extend_from_slice(data.get(at + 4..end).ok_or_else(short)?);
                        (at, index) = (end, index + 1);
                        break;
                    }
                    (at, index) = (end, index + 1);
                }
            }
            if !self.end_row() {
                fits = false;
                break;
            }
        }
        self.wanted = wanted;
        Ok(fits)
    }

    /// The wanted rows from a dictionary-encoded page's `stored` indices (`whole`: every
    /// row, or enough of them, is wanted: the indices are decoded in one pass).
    fn looked_up(&mut self, values: &[u8], stored: usize, whole: bool) -> Result<bool, DecodeError> {
        let dictionary = self.dictionary.take().ok_or_else(|| DecodeError::Corrupt("a dictionary-encoded page without a dictionary page".into()))?;
        let result = self.look_up(values, stored, whole, &dictionary);
        self.dictionary = Some(dictionary);
        result
    }

    fn look_up(&mut self, values: &[u8], stored: usize, whole: bool, dictionary: &arrow::array::LargeBinaryArray) -> Result<bool, DecodeError> {
        use arrow::array::Array;
        let len = dictionary.len();
        let wanted = std::mem::take(&mut self.wanted);
        let mut indices = std::mem::take(&mut self.indices);
        let mut cursor = match whole {
            true => {
                decode_indices(values, stored, len, &mut indices)?;
                None
            }
            false if stored > 0 => Some(indices_cursor(values)?),
            false => None,
        };
        let mut result = Ok(true);
        for &want in &wanted {
            if want != NULL_ROW {
                let key = match &mut cursor {
                    Some(cursor) => cursor.get(want as usize).map_err(indices_error),
                    None => indices.get(want as usize).copied().ok_or_else(|| DecodeError::Corrupt("a null page asked for a value".into())),
                };
                let value = key.and_then(|k| match k as usize {
                    k if k < len => Ok(dictionary.value(k)),
                    _ => Err(outside(k, len)),
                });
                match value {
                    Ok(value) => self.values.extend_from_slice(value),
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            if !self.end_row() {
                result = Ok(false);
                break;
            }
        }
        self.wanted = wanted;
        self.indices = indices;
        result
    }
}

impl<O: OffsetSizeTrait> Sink for BytesOutput<O> {
    fn dictionary(&mut self, page: &[u8], count: usize) -> Result<bool, DecodeError> {
        // 64-bit offsets always reach: never `None`.
        let Some(values) = byte_arrays::<i64>(page, count, false)? else { return Ok(false) };
        self.dictionary = Some(values.as_any().downcast_ref::<arrow::array::LargeBinaryArray>().expect("large binary").clone());
        Ok(true)
    }

    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError> {
        let dictionary_encoded = match page.encoding {
            Encoding::PLAIN => false,
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => true,
            _ => return Ok(false),
        };
        let count = selected.count_set_bits();
        self.offsets.reserve(count);
        self.wanted.clear();
        // Selected rows with a value.
        let with_values = match &page.valid {
            None => {
                if let Some(validity) = &mut self.validity {
                    validity.append_n(count, true);
                }
                self.wanted.extend(selected.set_indices().map(|row| row as u32));
                count
            }
            Some(valid) => {
                let validity = self.validity.as_mut().expect("levels only for an optional column");
                let rank = Rank::new(valid);
                let mut with_values = 0;
                for row in selected.set_indices() {
                    let stored = rank.stored_index(row);
                    validity.append(stored.is_some());
                    with_values += usize::from(stored.is_some());
                    self.wanted.push(stored.map_or(NULL_ROW, |i| i as u32));
                }
                with_values
            }
        };
        let stored = page.non_null();
        // Sized from this page's average value for the rows still to come (one buffer for
        // the whole selection, as a copy at the exact size would be), not doubled as it
        // fills: doubling leaves up to half of it unused. At most RESERVE_AHEAD beyond this
        // page's values: one long value must not reserve its length for every row.
        let per_value = match (dictionary_encoded, &self.dictionary) {
            (false, _) => page.values.len().saturating_sub(4 * stored) / stored.max(1),
            (true, Some(dictionary)) => dictionary.values().len() / arrow::array::Array::len(dictionary).max(1),
            (true, None) => 0,
        };
        // (A PLAIN page's values are within the page; looked-up ones may repeat a long
        // dictionary value: reserved up to RESERVE_AHEAD, grown if they are real.)
        let this_page = match dictionary_encoded {
            false => per_value.saturating_mul(with_values),
            true => per_value.saturating_mul(with_values).min(RESERVE_AHEAD),
        };
        if self.values.capacity() - self.values.len() < this_page {
            let ahead = per_value.saturating_mul(self.rows_left.max(count)).saturating_mul(17) / 16;
            self.values.reserve_exact(ahead.clamp(this_page, this_page.saturating_add(RESERVE_AHEAD)));
        }
        self.rows_left = self.rows_left.saturating_sub(count);
        match dictionary_encoded {
            false => self.plain(&mut page.values, stored),
            true => self.looked_up(page.values.prefix(usize::MAX)?, stored, count == page.rows || dense_selection(with_values, stored)),
        }
    }
}

/// Booleans: values and, for an optional column, validity, as bitmaps.
struct BitOutput {
    values: BooleanBufferBuilder,
    validity: Option<BooleanBufferBuilder>,
}

impl BitOutput {
    fn new(selected: usize, nullable: bool) -> Self {
        let reserve = selected.min(MAX_RESERVED_VALUES);
        Self { values: BooleanBufferBuilder::new(reserve), validity: nullable.then(|| BooleanBufferBuilder::new(reserve)) }
    }

    fn finish(mut self) -> ArrayRef {
        let nulls = self.validity.as_mut().map(|v| NullBuffer::new(v.finish())).filter(|n| n.null_count() > 0);
        Arc::new(BooleanArray::new(self.values.finish(), nulls))
    }
}

impl Sink for BitOutput {
    fn dictionary(&mut self, _values: &[u8], _count: usize) -> Result<bool, DecodeError> {
        Ok(false)
    }

    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError> {
        if page.encoding != Encoding::PLAIN {
            return Ok(false);
        }
        let stored = page.non_null();
        let bits = page.values.prefix(stored.div_ceil(8))?;
        if bits.len().saturating_mul(8) < stored {
            return Err(DecodeError::Corrupt(format!("a page of {} value bytes holds {stored} booleans", bits.len())));
        }
        let Some(valid) = &page.valid else {
            if let Some(validity) = &mut self.validity {
                validity.append_n(selected.count_set_bits(), true);
            }
            for (start, end) in selected.set_slices() {
                self.values.append_packed_range(start..end, bits);
            }
            return Ok(true);
        };
        let validity = self.validity.as_mut().expect("levels only for an optional column");
        let rank = Rank::new(valid);
        for row in selected.set_indices() {
            let stored = rank.stored_index(row);
            validity.append(stored.is_some());
            self.values.append(stored.is_some_and(|i| bits[i / 8] >> (i % 8) & 1 == 1));
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, BooleanArray, Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch, TimestampMicrosecondArray};
    use arrow::compute::filter;
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::file::serialized_reader::SerializedPageReader;
    use proptest::prelude::*;

    /// One column of `kind` from `seeds` (`None`: null), values drawn from `distinct` (a
    /// small number makes dictionaries).
    fn column(kind: usize, seeds: &[Option<u32>], distinct: u32) -> ArrayRef {
        let v = |s: &Option<u32>| s.map(|s| s % distinct);
        match kind {
            0 => Arc::new(Int32Array::from_iter(seeds.iter().map(|s| v(s).map(|x| x as i32 - 7)))),
            1 => Arc::new(Int64Array::from_iter(seeds.iter().map(|s| v(s).map(|x| i64::from(x) * 1_000_003 - 5)))),
            2 => Arc::new(Float32Array::from_iter(seeds.iter().map(|s| v(s).map(|x| x as f32 / 3.0)))),
            3 => Arc::new(Float64Array::from_iter(seeds.iter().map(|s| v(s).map(|x| f64::from(x) * -0.5)))),
            4 => Arc::new(BooleanArray::from_iter(seeds.iter().map(|s| v(s).map(|x| x % 3 == 1)))),
            _ => Arc::new(TimestampMicrosecondArray::from_iter(seeds.iter().map(|s| v(s).map(i64::from))).with_timezone("UTC")),
        }
    }

    /// `batch` written with `properties` plus `v2` or v1 pages of at most `page_rows` rows
    /// and a page index.
    fn written(batch: &RecordBatch, properties: parquet::file::properties::WriterPropertiesBuilder, v2: bool, page_rows: usize) -> bytes::Bytes {
        let properties = properties
            .set_writer_version(if v2 { WriterVersion::PARQUET_2_0 } else { WriterVersion::PARQUET_1_0 })
            .set_data_page_row_count_limit(page_rows)
            .set_write_batch_size(page_rows.min(1024))
            .set_statistics_enabled(EnabledStatistics::Page)
            .build();
        let mut file = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut file, batch.schema(), Some(properties)).unwrap();
        writer.write(&batch.clone()).unwrap();
        writer.close().unwrap();
        bytes::Bytes::from(file)
    }

    /// A file's one column: what decoding it here needs, and the crate's decode of its
    /// rows picked by `mask` (the oracle).
    struct CrateRead {
        descriptor: parquet::schema::types::ColumnDescPtr,
        arrow_type: DataType,
        locations: Option<Vec<parquet::file::page_index::offset_index::PageLocation>>,
        expected: ArrayRef,
    }

    fn crate_read(file: &bytes::Bytes, mask: &[bool], use_index: bool) -> CrateRead {
        let reader = SerializedFileReader::new(file.clone()).unwrap();
        let descriptor = reader.metadata().file_metadata().schema_descr().column(0);
        let options = parquet::arrow::arrow_reader::ArrowReaderOptions::new()
            .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Optional);
        let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(file.clone(), options).unwrap();
        let arrow_type = builder.schema().field(0).data_type().clone();
        let locations = use_index.then(|| builder.metadata().page_index_for_row_group(0).page_locations(0).cloned()).flatten();
        let whole = builder.with_batch_size(mask.len()).build().unwrap().next().unwrap().unwrap();
        let expected = filter(whole.column(0), &BooleanArray::from(mask.to_vec())).unwrap();
        CrateRead { descriptor, arrow_type, locations, expected }
    }

    /// The pages of the file's one column chunk.
    fn pages(file: &bytes::Bytes, rows: usize, locations: Option<Vec<parquet::file::page_index::offset_index::PageLocation>>) -> SerializedPageReader<bytes::Bytes> {
        let reader = SerializedFileReader::new(file.clone()).unwrap();
        SerializedPageReader::new(Arc::new(file.clone()), reader.metadata().row_group(0).column(0), rows, locations).unwrap()
    }

    /// The same pages handed over still compressed (`None` unless the chunk is zstd), and
    /// their uncompressed sizes (the dictionary page's first, if any), taken from a read
    /// that decompresses them.
    fn raw_pages(
        file: &bytes::Bytes,
        rows: usize,
        locations: Option<Vec<parquet::file::page_index::offset_index::PageLocation>>,
    ) -> Option<(SerializedPageReader<bytes::Bytes>, Vec<usize>)> {
        use parquet::column::page::PageReader as _;
        let reader = SerializedFileReader::new(file.clone()).unwrap();
        let chunk = reader.metadata().row_group(0).column(0);
        if !matches!(chunk.compression(), parquet::basic::Compression::ZSTD(_)) {
            return None;
        }
        let mut sizes = Vec::new();
        let mut decompressing = pages(file, rows, None);
        while let Some(page) = decompressing.get_next_page().unwrap() {
            sizes.push(page.buffer().len());
        }
        let raw = chunk.clone().into_builder().set_compression(parquet::basic::Compression::UNCOMPRESSED).build().unwrap();
        Some((SerializedPageReader::new(Arc::new(file.clone()), &raw, rows, locations).unwrap(), sizes))
    }

    /// Decodes the rows of `selection` from `file`'s one column with `decode`, from pages
    /// decompressed by the crate, and (zstd chunks) from pages read still compressed, sized
    /// by their frames and by their headers: all must give the same answer, which is
    /// returned.
    fn decoded_both_ways(
        file: &bytes::Bytes,
        read: &CrateRead,
        selection: &RowSelection,
        decode: fn(&mut (dyn PageReader + 'static), &ColumnDescriptor, &DataType, &RowSelection, Option<&mut ZstdPages<'_>>) -> Result<Option<ArrayRef>, DecodeError>,
    ) -> Option<ArrayRef> {
        let rows = selection.row_count();
        let got = decode(&mut pages(file, rows, read.locations.clone()), &read.descriptor, &read.arrow_type, selection, None).unwrap();
        let has_dictionary = SerializedFileReader::new(file.clone()).unwrap().metadata().row_group(0).column(0).dictionary_page_offset().is_some();
        for headers_only in [false, true] {
            let Some((mut raw, sizes)) = raw_pages(file, rows, read.locations.clone()) else { break };
            let zstd = ZstdPages::new(usize::MAX, |at| {
                Ok(match at {
                    PageAt::Dictionary => sizes[0],
                    PageAt::Data(n) => sizes[n + usize::from(has_dictionary)],
                })
            });
            let mut zstd = if headers_only { zstd.from_headers_only() } else { zstd };
            let compressed = decode(&mut raw, &read.descriptor, &read.arrow_type, selection, Some(&mut zstd)).unwrap();
            assert_eq!(compressed.as_ref().map(|a| a.to_data()), got.as_ref().map(|a| a.to_data()), "read still compressed");
        }
        got
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The rows a selection picks equal the crate's decode of every row, filtered: every
        /// type, nullable or not, PLAIN or dictionary (with a fallback to PLAIN mid-chunk),
        /// v1 and v2 pages, with and without the offset index.
        #[test]
        fn equals_the_crate_filtered(
            kind in 0usize..6,
            seeds in prop::collection::vec(prop::option::weighted(0.85, any::<u32>()), 1..3000),
            distinct in prop::sample::select(vec![1u32, 3, 50, 100_000]),
            nullable in any::<bool>(),
            dictionary in any::<bool>(),
            v2 in any::<bool>(),
            page_rows in prop::sample::select(vec![7usize, 64, 500, 10_000]),
            small_dictionary in any::<bool>(),
            use_index in any::<bool>(),
            picks in prop::collection::vec(any::<bool>(), 3000),
            density in 0u8..4,
            zstd in any::<bool>(),
        ) {
            let seeds: Vec<Option<u32>> = seeds.into_iter().map(|s| if nullable { s } else { s.or(Some(1)) }).collect();
            let values = column(kind, &seeds, distinct);
            let field = arrow::datatypes::Field::new("v", values.data_type().clone(), nullable);
            let batch = RecordBatch::try_new(Arc::new(arrow::datatypes::Schema::new(vec![field])), vec![values]).unwrap();
            let properties = WriterProperties::builder()
                .set_dictionary_enabled(dictionary)
                .set_dictionary_page_size_limit(if small_dictionary { 64 } else { 1 << 20 })
                .set_compression(codec(zstd));
            let file = written(&batch, properties, v2, page_rows);

            let rows = seeds.len();
            // Dense, fragmented, sparse or nothing.
            let mask: Vec<bool> = (0..rows).map(|i| match density {
                0 => picks[i],
                1 => picks[i] && picks[(i * 7 + 3) % picks.len()],
                2 => i % 97 == 3 || (i > rows / 2 && picks[i]),
                _ => false,
            }).collect();
            let selection = RowSelection::from_bools(&mask);
            // Run-backed selections are walked, mask-backed ones sliced.
            let selection = if picks[0] { selection.into_representation(crate::selection::Representation::Selectors) } else { selection };

            let read = crate_read(&file, &mask, use_index);
            prop_assert!(decodable(&read.descriptor, &read.arrow_type));
            let got = decoded_both_ways(&file, &read, &selection, decode_selected::<dyn PageReader>);
            // The writer's v2 pages encode booleans as RLE and integers outside a dictionary
            // as DELTA_BINARY_PACKED: left to the crate.
            let crate_only = v2 && (kind == 4 || (matches!(kind, 0 | 1 | 5) && (!dictionary || small_dictionary)));
            prop_assert!(got.is_some() || crate_only);
            if let Some(got) = got {
                prop_assert_eq!(got.to_data(), read.expected.to_data());
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]
        /// Strings and binaries of an all-dictionary-encoded chunk: the selected rows, as a
        /// dictionary, equal the crate's decode filtered.
        #[test]
        fn dictionary_strings_equal_the_crate_filtered(
            seeds in prop::collection::vec(prop::option::weighted(0.8, 0u32..40), 1..3000),
            binary in any::<bool>(),
            v2 in any::<bool>(),
            page_rows in prop::sample::select(vec![7usize, 500, 10_000]),
            use_index in any::<bool>(),
            picks in prop::collection::vec(any::<bool>(), 3000),
            zstd in any::<bool>(),
        ) {
            let text = |s: &u32| format!("value {s} ünïcode {}", "x".repeat(*s as usize));
            let values: ArrayRef = match binary {
                true => Arc::new(arrow::array::BinaryArray::from_iter(seeds.iter().map(|s| s.map(|s| text(&s).into_bytes())))),
                false => Arc::new(arrow::array::StringArray::from_iter(seeds.iter().map(|s| s.map(|s| text(&s))))),
            };
            let batch = RecordBatch::try_from_iter([("v", values)]).unwrap();
            let file = written(&batch, WriterProperties::builder().set_compression(codec(zstd)), v2, page_rows);
            let rows = seeds.len();
            let mask = &picks[..rows];
            let read = crate_read(&file, mask, use_index);
            let chunk_metadata = SerializedFileReader::new(file.clone()).unwrap().metadata().row_group(0).column(0).clone();
            prop_assert!(dictionary_decodable(&read.descriptor, &read.arrow_type, &chunk_metadata));
            let selection = RowSelection::from_bools(mask);
            let selection = if picks[1] { selection.into_representation(crate::selection::Representation::Selectors) } else { selection };
            let got = decoded_both_ways(&file, &read, &selection, decode_dictionary_selected::<dyn PageReader>).unwrap();
            prop_assert_eq!(got.data_type(), &DataType::Dictionary(Box::new(DataType::Int32), Box::new(read.arrow_type.clone())));
            let got = arrow::compute::cast(&got, &read.arrow_type).unwrap();
            prop_assert_eq!(got.to_data(), read.expected.to_data());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]
        /// Strings and binaries of any chunk — PLAIN, dictionary-encoded, or falling back
        /// from one to the other — copied out for the selected rows: the crate's decode,
        /// filtered, whether the pages come decompressed or still zstd-compressed.
        #[test]
        fn strings_equal_the_crate_filtered(
            seeds in prop::collection::vec(prop::option::weighted(0.8, 0u32..400), 1..3000),
            binary in any::<bool>(),
            nullable in any::<bool>(),
            dictionary in any::<bool>(),
            v2 in any::<bool>(),
            page_rows in prop::sample::select(vec![7usize, 500, 10_000]),
            use_index in any::<bool>(),
            picks in prop::collection::vec(any::<bool>(), 3000),
            density in 0u8..4,
            zstd in any::<bool>(),
            large in any::<bool>(),
        ) {
            let seeds: Vec<Option<u32>> = seeds.into_iter().map(|s| if nullable { s } else { s.or(Some(1)) }).collect();
            let text = |s: u32| format!("v{s} ü{}", "x".repeat((s % 37) as usize));
            let values: ArrayRef = match (binary, large) {
                (true, false) => Arc::new(arrow::array::BinaryArray::from_iter(seeds.iter().map(|s| s.map(|s| text(s).into_bytes())))),
                (true, true) => Arc::new(arrow::array::LargeBinaryArray::from_iter(seeds.iter().map(|s| s.map(|s| text(s).into_bytes())))),
                (false, false) => Arc::new(arrow::array::StringArray::from_iter(seeds.iter().map(|s| s.map(text)))),
                (false, true) => Arc::new(arrow::array::LargeStringArray::from_iter(seeds.iter().map(|s| s.map(text)))),
            };
            let field = arrow::datatypes::Field::new("v", values.data_type().clone(), nullable);
            let batch = RecordBatch::try_new(Arc::new(arrow::datatypes::Schema::new(vec![field])), vec![values]).unwrap();
            // A 600-byte dictionary limit: a chunk falls back to PLAIN part way.
            let properties = WriterProperties::builder()
                .set_dictionary_enabled(dictionary)
                .set_dictionary_page_size_limit(600)
                .set_compression(codec(zstd));
            let file = written(&batch, properties, v2, page_rows);
            let rows = seeds.len();
            let mask: Vec<bool> = (0..rows).map(|i| match density {
                0 => picks[i],
                1 => picks[i] && picks[(i * 7 + 3) % picks.len()],
                2 => i % 97 == 3,
                _ => i + 1 == rows,
            }).collect();
            let read = crate_read(&file, &mask, use_index);
            prop_assert!(decodable(&read.descriptor, &read.arrow_type));
            let selection = RowSelection::from_bools(&mask);
            let selection = if picks[1] { selection.into_representation(crate::selection::Representation::Selectors) } else { selection };
            // The writer's v2 pages outside a dictionary are DELTA_BYTE_ARRAY: the crate's.
            let got = decoded_both_ways(&file, &read, &selection, decode_selected::<dyn PageReader>);
            prop_assert!(got.is_some() || v2);
            if let Some(got) = got {
                prop_assert_eq!(got.to_data(), read.expected.to_data());
            }
        }
    }

    fn codec(zstd: bool) -> parquet::basic::Compression {
        match zstd {
            true => parquet::basic::Compression::ZSTD(parquet::basic::ZstdLevel::try_new(1).unwrap()),
            false => parquet::basic::Compression::UNCOMPRESSED,
        }
    }

    proptest! {
        /// A row's stored index is the count of valid rows before it, at any offset.
        #[test]
        fn rank_counts_the_valid_rows_before(bits in prop::collection::vec(any::<bool>(), 0..300), offset in 0usize..70) {
            let offset = offset.min(bits.len());
            let valid = BooleanBuffer::from(bits.clone()).slice(offset, bits.len() - offset);
            let rank = Rank::new(&valid);
            let mut before = 0;
            for (row, &is_valid) in bits[offset..].iter().enumerate() {
                prop_assert_eq!(rank.stored_index(row), is_valid.then_some(before));
                before += usize::from(is_valid);
            }
        }
    }

    #[test]
    fn types_the_crate_converts_are_left_to_it() {
        let schema = parquet::schema::parser::parse_message_type(
            "message m { optional int32 a (INTEGER(8, true)); optional int32 b (DATE); required int64 c; optional group s { optional int32 x; } }",
        )
        .unwrap();
        let descriptor = parquet::schema::types::SchemaDescriptor::new(Arc::new(schema));
        assert!(!decodable(&descriptor.column(0), &DataType::Int8));
        assert!(decodable(&descriptor.column(1), &DataType::Date32));
        assert!(!decodable(&descriptor.column(1), &DataType::Date64));
        assert!(decodable(&descriptor.column(2), &DataType::Int64));
        assert!(!decodable(&descriptor.column(3), &DataType::Int32));
    }
}
