//! Flat columns decoded straight into Arrow buffers, for the selected rows only.
//!
//! A top-level column of INT32, INT64, INT96, FLOAT, DOUBLE, BOOLEAN or decimal
//! FIXED_LEN_BYTE_ARRAY values, not repeated, whose Arrow type holds the same bits or is
//! converted from them value by value (`converted`: narrower integers, decimals, INT96
//! timestamps), or of strings or binaries ([`decodable`]), is decoded here instead of by
//! the parquet crate's array reader; a string column whose chunk is all dictionary-encoded
//! ([`dictionary_decodable`]) as an Arrow dictionary: the selected rows' keys and the
//! chunk's dictionary. The pages holding a selected row are read with the crate's page
//! reader (the others are skipped unread), their definition levels decoded into a validity
//! bitmap, and their values written to the output for the selected rows only: fixed-width
//! PLAIN values copied out of the page, PLAIN strings found by walking the page's lengths
//! up to the last selected one, dictionary indices decoded (a whole page, or one with at
//! least an eighth of its values selected) or read where a selected row's lies, and looked
//! up. The output is allocated once, at the selected count, and never zero-filled.
//!
//! This module walks the pages ([`decode_selected`]: levels, encodings, the row
//! windows); each kind of output has its sink — `fixed_width` (integers, floats,
//! dictionary keys), `strings`, `booleans`, and `evaluating`, which hands the first two's
//! output to a predicate a few pages at a time and keeps its answers (and, where asked,
//! the values of the rows that pass) — with `dictionary_indices` shared by the first two,
//! `compress` taking a page's selected values out a 64-row word at a time
//! (AVX-512 where the CPU has it), `byte_stream_split` rejoining BYTE_STREAM_SPLIT values
//! eight at a time, and `stored_pages` handing pages over still compressed.
//!
//! The crate's reader decompresses each page whole, into a fresh zero-filled buffer. Given
//! [`StoredPages`] (a snappy chunk, or a zstd chunk with an offset index: the caller reads
//! each page's size from its header), it hands pages over still compressed, to be
//! decompressed into a buffer reused from page to page; a zstd PLAIN page whose last row
//! is not selected only up to its last selected value (see
//! [`zstd_prefix`](crate::format::zstd_prefix)).
//!
//! Why: the crate decodes every row of a page a selection touches into a zero-filled
//! buffer (every key, for a dictionary), and a fragmented selection (the mask policy) is
//! then filtered by pqsift: with a quarter of the rows selected, three quarters of that
//! work is thrown away. Its booleans go through a `Vec<bool>` packed bit by bit; here a PLAIN boolean page
//! is appended to the output bitmap a selected run at a time (an RLE one, as v2 pages hold
//! them, unpacked to bits first).
//!
//! Fixed-width values in the encodings of Parquet v2 writers are decoded here too, each
//! page as far as its last selected value into a reused buffer in PLAIN's layout, then
//! read as a PLAIN page: BYTE_STREAM_SPLIT rejoined, DELTA_BINARY_PACKED integers
//! unpacked (see [`delta_binary_packed`](crate::format::delta_binary_packed)). So are
//! strings in theirs, as plain strings: a DELTA_LENGTH_BYTE_ARRAY page's lengths decoded as
//! far as the last selected value and the selected values copied from where they lie, a
//! DELTA_BYTE_ARRAY page's values rebuilt in order up to the last selected one. A page in
//! another encoding (BIT_PACKED levels, or strings in these two asked for as views) makes
//! [`decode_selected`] answer `None`, and the caller decodes the column with the crate.
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
    ArrayData, ArrayRef, BooleanArray, BooleanBufferBuilder, DictionaryArray, GenericBinaryArray, GenericStringArray,
    Int32Array, OffsetSizeTrait, make_array, new_empty_array,
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
use crate::selection::{RowSelection, count_set_bits};

mod booleans;
mod byte_stream_split;
pub(crate) mod compress;
mod converted;
mod dictionary_indices;
mod evaluating;
mod fixed_width;
mod stored_pages;
mod strings;
#[cfg(test)]
mod tests;
mod views;

use booleans::BitOutput;
use dictionary_indices::{PageKeys, decode_indices, dense_selection, indices_cursor, indices_error, outside};
use fixed_width::{BigEndian, Int96, KeysOutput, Output};
pub use stored_pages::{PageAt, StoredPages};
use strings::{BytesOutput, byte_arrays};
use views::ViewsOutput;

/// Why a column could not be decoded here.
#[derive(Debug)]
pub enum DecodeError {
    /// The crate's page reader failed (I/O, decompression, a bad page header).
    Parquet(ParquetError),
    /// The pages' contents are inconsistent.
    Corrupt(String),
    /// A value the output type cannot hold (an INT96 instant beyond nanoseconds' range).
    OutOfRange(String),
    /// The predicate of [`evaluate_selected`] failed.
    Predicate(crate::error::PqsiftError),
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
            Self::Corrupt(reason) | Self::OutOfRange(reason) => f.write_str(reason),
            Self::Predicate(e) => e.fmt(f),
        }
    }
}

/// Whether [`decode_selected`] decodes `column` (a leaf of the file's schema) into
/// `arrow_type`: a top-level, non-repeated column whose Arrow type is its physical values'
/// bits reinterpreted, as the crate's array reader does it (INT32 as Int32, UInt32, Date32,
/// Time32; INT64 as Int64, UInt64, Date64, Time64, Duration, Timestamp; FLOAT as Float32;
/// DOUBLE as Float64; BOOLEAN as Boolean), converted from them as the crate converts them
/// (INT32 as Int8, UInt8, Int16, UInt16, Date64, Timestamp, decimals; INT64 as decimals;
/// INT96 as timestamps; FIXED_LEN_BYTE_ARRAY of up to 16 bytes as Decimal128), or a
/// BYTE_ARRAY column as strings or binaries (copied out of PLAIN pages, or looked up in the
/// dictionary for dictionary-encoded ones). Other types (Decimal256, float16, intervals,
/// ...) are left to the crate.
pub fn decodable(column: &ColumnDescriptor, arrow_type: &DataType) -> bool {
    if !is_flat(column) {
        return false;
    }
    match column.physical_type() {
        physical @ (PhysicalType::INT32 | PhysicalType::INT64) if converted::is_converted(physical, arrow_type) => true,
        PhysicalType::INT32 => {
            matches!(arrow_type, DataType::Int32 | DataType::UInt32 | DataType::Date32 | DataType::Time32(_))
        }
        PhysicalType::INT64 => matches!(
            arrow_type,
            DataType::Int64
                | DataType::UInt64
                | DataType::Date64
                | DataType::Time64(_)
                | DataType::Duration(_)
                | DataType::Timestamp(..)
        ),
        PhysicalType::INT96 => matches!(arrow_type, DataType::Timestamp(..)),
        PhysicalType::FIXED_LEN_BYTE_ARRAY => {
            matches!(arrow_type, DataType::Decimal128(..)) && (1..=16).contains(&column.type_length())
        }
        PhysicalType::FLOAT => *arrow_type == DataType::Float32,
        PhysicalType::DOUBLE => *arrow_type == DataType::Float64,
        PhysicalType::BOOLEAN => *arrow_type == DataType::Boolean,
        PhysicalType::BYTE_ARRAY => matches!(
            arrow_type,
            DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Binary
                | DataType::LargeBinary
                | DataType::Utf8View
                | DataType::BinaryView
        ),
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
    stored: Option<&mut StoredPages<'_>>,
) -> Result<Option<ArrayRef>, DecodeError> {
    let nullable = column.max_def_level() == 1;
    let sink = KeysOutput::new(selection.selected_count(), nullable, arrow_type);
    decode_pages(pages, nullable, selection, sink, stored)?.map(KeysOutput::finish).transpose()
}

/// Decodes the rows of `selection` (over the whole column chunk) from `pages`, a page
/// reader over one chunk of `column` ([`decodable`] into `arrow_type`), as one array of
/// `arrow_type`. Pages without a selected row are skipped when the reader knows their row
/// counts (an offset index, or v1 headers: one level a row). `Ok(None)`: a page is in an
/// encoding decoded only by the crate (nothing is returned of what was read).
///
/// `stored`: the reader hands pages over still compressed (a reader over the chunk's
/// metadata with its codec set to none), each decompressed here into a reused buffer
/// (zstd pages only as far as their selected rows need: see
/// [`zstd_prefix`](crate::format::zstd_prefix)).
pub fn decode_selected<R: PageReader + ?Sized>(
    pages: &mut R,
    column: &ColumnDescriptor,
    arrow_type: &DataType,
    selection: &RowSelection,
    stored: Option<&mut StoredPages<'_>>,
) -> Result<Option<ArrayRef>, DecodeError> {
    let nullable = column.max_def_level() == 1;
    let selected = selection.selected_count();
    match (column.physical_type(), arrow_type) {
        // Decoded as the stored integers, then converted.
        (physical @ (PhysicalType::INT32 | PhysicalType::INT64), to) if converted::is_converted(physical, to) => {
            let integers = match physical {
                PhysicalType::INT32 => decode_selected(pages, column, &DataType::Int32, selection, stored)?,
                _ => decode_selected(pages, column, &DataType::Int64, selection, stored)?,
            };
            integers.map(|integers| converted::convert(&integers, to)).transpose()
        }
        (physical @ (PhysicalType::INT32 | PhysicalType::FLOAT), _) => {
            let mut sink = Output::<u32>::new(selected, nullable);
            if physical == PhysicalType::INT32 {
                sink = sink.of_integers();
            }
            let out = decode_pages(pages, nullable, selection, sink, stored)?;
            Ok(out.map(|out| out.finish(arrow_type)).transpose()?)
        }
        (physical @ (PhysicalType::INT64 | PhysicalType::DOUBLE), _) => {
            let mut sink = Output::<u64>::new(selected, nullable);
            if physical == PhysicalType::INT64 {
                sink = sink.of_integers();
            }
            let out = decode_pages(pages, nullable, selection, sink, stored)?;
            Ok(out.map(|out| out.finish(arrow_type)).transpose()?)
        }
        // INT96 timestamps: days and nanoseconds, then the unit.
        (PhysicalType::INT96, DataType::Timestamp(unit, zone)) => {
            let sink = converted::Int96Timestamps::new(selected, nullable, *unit);
            decode_pages(pages, nullable, selection, sink, stored)?.map(|out| out.finish(zone.clone())).transpose()
        }
        // Decimals of 1 to 16 big-endian bytes (Spark's DECIMAL(p > 18), or any in its legacy
        // format): a sink per width, the width known at compile time.
        (PhysicalType::FIXED_LEN_BYTE_ARRAY, &DataType::Decimal128(precision, scale)) => {
            macro_rules! by_width {
                ($($n:literal)*) => {
                    match column.type_length() {
                        $($n => decode_decimals::<BigEndian<$n>, R>(pages, nullable, selection, precision, scale, stored),)*
                        other => Err(DecodeError::Corrupt(format!("a decimal of {other} bytes is not decoded here"))),
                    }
                };
            }
            by_width!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
        }
        (PhysicalType::BOOLEAN, _) => {
            let out = decode_pages(pages, nullable, selection, BitOutput::new(selected, nullable), stored)?;
            Ok(out.map(BitOutput::finish))
        }
        (PhysicalType::BYTE_ARRAY, DataType::Utf8 | DataType::Binary) => {
            let out = decode_pages(
                pages,
                nullable,
                selection,
                BytesOutput::<i32>::new(selected, nullable, arrow_type),
                stored,
            )?;
            Ok(out.map(BytesOutput::finish).transpose()?)
        }
        (PhysicalType::BYTE_ARRAY, DataType::LargeUtf8 | DataType::LargeBinary) => {
            let out = decode_pages(
                pages,
                nullable,
                selection,
                BytesOutput::<i64>::new(selected, nullable, arrow_type),
                stored,
            )?;
            Ok(out.map(BytesOutput::finish).transpose()?)
        }
        (PhysicalType::BYTE_ARRAY, DataType::Utf8View | DataType::BinaryView) => {
            let out =
                decode_pages(pages, nullable, selection, ViewsOutput::new(selected, nullable, arrow_type), stored)?;
            Ok(out.map(ViewsOutput::finish))
        }
        (other, _) => Err(DecodeError::Corrupt(format!("{other} as {arrow_type} is not decoded here"))),
    }
}

/// Whether [`evaluate_selected`] evaluates a predicate on `column` decoded as
/// `arrow_type`: a flat string or binary column (32- or 64-bit offsets), or a flat
/// fixed-width one whose values are its stored ones (INT32, INT64, FLOAT, DOUBLE not
/// converted on the way).
pub fn evaluable(column: &ColumnDescriptor, arrow_type: &DataType) -> bool {
    if !decodable(column, arrow_type) {
        return false;
    }
    match column.physical_type() {
        PhysicalType::BYTE_ARRAY => {
            matches!(arrow_type, DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary)
        }
        physical @ (PhysicalType::INT32 | PhysicalType::INT64) => !converted::is_converted(physical, arrow_type),
        PhysicalType::FLOAT | PhysicalType::DOUBLE => true,
        _ => false,
    }
}

/// Evaluates a predicate on the rows of `selection` of a chunk [`evaluable`] as
/// `arrow_type`, decoded as [`decode_selected`] would decode them, a few pages at a time,
/// while their values are in cache: `evaluate` takes each run of decoded values and
/// answers a bit per value, and the answers are returned, one per selected row, with
/// (`keep`) the values of the rows that pass, in order. Nothing more of the column's size
/// is kept. `Ok(None)`: not such a column, or a page is in an encoding decoded only by the
/// crate (the caller decodes the column instead).
pub fn evaluate_selected<R, F>(
    pages: &mut R,
    column: &ColumnDescriptor,
    arrow_type: &DataType,
    selection: &RowSelection,
    stored: Option<&mut StoredPages<'_>>,
    keep: bool,
    evaluate: F,
) -> Result<Option<(BooleanBuffer, Option<ArrayRef>)>, DecodeError>
where
    R: PageReader + ?Sized,
    F: FnMut(&ArrayRef) -> Result<BooleanBuffer, DecodeError>,
{
    use evaluating::{Drain, Evaluating};
    if !evaluable(column, arrow_type) {
        return Ok(None);
    }
    /// The pages decoded and evaluated by `sink`.
    fn run<R, S, F>(
        pages: &mut R,
        nullable: bool,
        selection: &RowSelection,
        stored: Option<&mut StoredPages<'_>>,
        sink: Evaluating<S, F>,
    ) -> Result<Option<(BooleanBuffer, Option<ArrayRef>)>, DecodeError>
    where
        R: PageReader + ?Sized,
        S: Drain,
        F: FnMut(&ArrayRef) -> Result<BooleanBuffer, DecodeError>,
    {
        decode_pages(pages, nullable, selection, sink, stored)?.map(Evaluating::finish).transpose()
    }
    let (nullable, selected) = (column.max_def_level() == 1, selection.selected_count());
    match column.physical_type() {
        physical @ (PhysicalType::INT32 | PhysicalType::FLOAT) => {
            let output = Output::<u32>::new(0, nullable);
            let output = if physical == PhysicalType::INT32 { output.of_integers() } else { output };
            let sink = Evaluating::new(output, arrow_type, evaluate, selected, keep);
            run(pages, nullable, selection, stored, sink)
        }
        physical @ (PhysicalType::INT64 | PhysicalType::DOUBLE) => {
            let output = Output::<u64>::new(0, nullable);
            let output = if physical == PhysicalType::INT64 { output.of_integers() } else { output };
            let sink = Evaluating::new(output, arrow_type, evaluate, selected, keep);
            run(pages, nullable, selection, stored, sink)
        }
        _ if matches!(arrow_type, DataType::Utf8 | DataType::Binary) => {
            let output = BytesOutput::<i32>::new(0, nullable, arrow_type);
            run(pages, nullable, selection, stored, Evaluating::new(output, arrow_type, evaluate, selected, keep))
        }
        _ => {
            let output = BytesOutput::<i64>::new(0, nullable, arrow_type);
            run(pages, nullable, selection, stored, Evaluating::new(output, arrow_type, evaluate, selected, keep))
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
        self.valid.as_ref().map_or(self.rows, count_set_bits)
    }

    /// The number of values stored before row `row` (the rows before it that are valid).
    fn stored_before(&self, row: usize) -> usize {
        self.valid.as_ref().map_or(row, |valid| count_set_bits(&valid.slice(0, row)))
    }
}

/// A data page's value bytes: as the crate handed them over, a zstd frame decompressed as
/// far as asked, or a page decompressed into the reused buffer.
enum PageValues<'z> {
    Ready(bytes::Bytes),
    /// The frame's output from byte `start` on (a v1 page's levels come first).
    Zstd {
        frame: ZstdPrefix<'z>,
        start: usize,
    },
    /// The page, decompressed into the first `len` bytes of a reused buffer, from byte
    /// `start` on.
    Reused {
        buffer: &'z mut Vec<u8>,
        len: usize,
        start: usize,
    },
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
            Self::Reused { buffer, len, start } => Ok(&buffer[(*start).min(*len)..*len]),
        }
    }

    /// The value bytes the page holds (decompressed or not).
    fn len(&self) -> usize {
        match self {
            Self::Ready(bytes) => bytes.len(),
            Self::Zstd { frame, start } => frame.size().saturating_sub(*start),
            Self::Reused { len, start, .. } => len.saturating_sub(*start),
        }
    }

    /// The value bytes, owned: a compressed page decompressed whole, its buffer handed over
    /// or (a small page in the reused buffer) copied out.
    fn into_owned(self) -> Result<bytes::Bytes, DecodeError> {
        match self {
            Self::Ready(bytes) => Ok(bytes),
            Self::Zstd { frame, start } => {
                let page = frame.into_page().map_err(DecodeError::Corrupt)?;
                Ok(page.slice(start.min(page.len())..))
            }
            // A page filling most of the buffer takes it (the next page allocates anew); a
            // smaller one (a dictionary) is copied out, leaving the buffer to the next
            // page rather than pinning all of it.
            Self::Reused { buffer, len, start } if len.saturating_mul(2) >= buffer.capacity() => {
                let mut page = std::mem::take(buffer);
                page.truncate(len);
                Ok(bytes::Bytes::from(page).slice(start.min(len)..))
            }
            Self::Reused { buffer, len, start } => Ok(bytes::Bytes::copy_from_slice(&buffer[start.min(len)..len])),
        }
    }

    /// Drops the first `n` bytes (the page's levels, once decoded).
    fn advance(&mut self, n: usize) {
        match self {
            Self::Ready(bytes) => *bytes = bytes.slice(n.min(bytes.len())..),
            Self::Zstd { start, .. } | Self::Reused { start, .. } => *start += n,
        }
    }
}

/// Where decoded values go: fixed-width values or bits.
trait Sink {
    /// Takes the dictionary page (its `count` PLAIN values; a sink that keeps the page
    /// takes it over); `false`: not decoded here.
    fn dictionary(&mut self, page: PageValues<'_>, count: usize) -> Result<bool, DecodeError>;
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
    mut stored: Option<&mut StoredPages<'_>>,
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
            } else if !load_dictionary(pages.get_next_page()?, &mut sink, stored.as_deref_mut())? {
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
            if count_set_bits(&window) == 0 {
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
            if !load_dictionary(pages.take_deferred_dictionary()?, &mut sink, stored.as_deref_mut())? {
                return Ok(None);
            }
        }
        // Decompressed as far as needed only where that can stop short: a page of byte
        // arrays or PLAIN values whose last row is not selected. (Indices are decoded whole.)
        let lazy = page_encoding(&page).is_some_and(|encoding| {
            matches!(encoding, Encoding::PLAIN | Encoding::DELTA_LENGTH_BYTE_ARRAY | Encoding::DELTA_BYTE_ARRAY)
        }) && selected.as_ref().is_some_and(|window| !window.is_empty() && !window.value(window.len() - 1));
        let Some(mut page) = data_page(page, nullable, stored.as_deref_mut().map(|stored| (stored, at, lazy)))? else {
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

/// The decimals of `selection`, stored as `W`'s big-endian bytes, as `Decimal128(precision,
/// scale)`.
fn decode_decimals<W: fixed_width::Native<Out = i128>, R: PageReader + ?Sized>(
    pages: &mut R,
    nullable: bool,
    selection: &RowSelection,
    precision: u8,
    scale: i8,
    stored: Option<&mut StoredPages<'_>>,
) -> Result<Option<ArrayRef>, DecodeError> {
    let out = decode_pages(pages, nullable, selection, Output::<W>::new(selection.selected_count(), nullable), stored)?;
    out.map(|out| {
        let (values, nulls) = out.into_parts();
        converted::decimals(values, nulls, precision, scale)
    })
    .transpose()
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

/// Hands the dictionary page `page` (still compressed when `stored` is given) to `sink`;
/// `false`: not decoded here.
fn load_dictionary<S: Sink>(
    page: Option<Page>,
    sink: &mut S,
    stored: Option<&mut StoredPages<'_>>,
) -> Result<bool, DecodeError> {
    match page {
        Some(Page::DictionaryPage {
            buf, num_values, encoding: Encoding::PLAIN | Encoding::PLAIN_DICTIONARY, ..
        }) => {
            let page = match stored {
                Some(stored) => stored.values(PageAt::Dictionary, buf, 0, false)?,
                None => PageValues::Ready(buf),
            };
            sink.dictionary(page, num_values as usize)
        }
        Some(Page::DictionaryPage { .. }) => Ok(false),
        _ => Err(DecodeError::Corrupt("a dictionary page was announced but not found".into())),
    }
}

/// The most rows of a page decoded here (the reader's decode batch: see
/// `MAX_DECODE_BATCH_ROWS` in `row_group_reader`).
const MAX_PAGE_ROWS: usize = 1 << 20;

/// `page` split into its levels and values (`stored`: still compressed, the `at`-th page of
/// its chunk, decompressed as far as asked if `lazy`, else at once); `None`: levels in an
/// encoding not decoded here. The column has no repetition levels and at most one
/// definition level.
fn data_page<'z>(
    page: Page,
    nullable: bool,
    stored: Option<(&'z mut StoredPages<'_>, PageAt, bool)>,
) -> Result<Option<DataPage<'z>>, DecodeError> {
    let corrupt = |what: &str| DecodeError::Corrupt(format!("a data page's {what} run past its end"));
    match page {
        Page::DataPage { buf, num_values, encoding, def_level_encoding, .. } => {
            let rows = num_values as usize;
            let mut values = match stored {
                Some((stored, at, lazy)) => stored.values(at, buf, 0, lazy)?,
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
            buf,
            num_values,
            encoding,
            num_nulls,
            num_rows,
            def_levels_byte_len,
            rep_levels_byte_len,
            is_compressed,
            ..
        } => {
            if num_values != num_rows {
                return Err(DecodeError::Corrupt(format!(
                    "a page of a flat column holds {num_values} values in {num_rows} rows"
                )));
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
            let values = match stored {
                Some((stored, at, lazy)) if is_compressed => stored.values(at, rest, end, lazy)?,
                _ => PageValues::Ready(rest),
            };
            Ok(Some(DataPage { rows, valid, encoding, values }))
        }
        Page::DictionaryPage { .. } => Err(DecodeError::Corrupt("a second dictionary page".into())),
    }
}

/// The validity of a page's `rows` from its RLE definition levels (`None`: every row valid).
fn validity(levels: &[u8], rows: usize) -> Result<Option<BooleanBuffer>, DecodeError> {
    let bits =
        rle_hybrid::decode_bits(levels, rows).map_err(|e| DecodeError::Corrupt(format!("definition levels: {e}")))?;
    Ok((count_set_bits(&bits) < rows).then_some(bits))
}

/// The stored index of each `selected` row's value in a page whose validity is `valid`
/// (`None`: a null row), the row's validity appended to `validity` as it is yielded.
fn selected_stored<'a>(
    valid: &BooleanBuffer,
    selected: &'a BooleanBuffer,
    validity: &'a mut BooleanBufferBuilder,
) -> impl Iterator<Item = Option<usize>> + 'a {
    let rank = Rank::new(valid);
    selected.set_indices().map(move |row| {
        let stored = rank.stored_index(row);
        validity.append(stored.is_some());
        stored
    })
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
        (word >> bit & 1 == 1)
            .then(|| self.before[row / 64] as usize + (word & ((1u64 << bit) - 1)).count_ones() as usize)
    }
}
