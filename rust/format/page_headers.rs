//! Page headers checked before the parquet crate decodes a column chunk.
//!
//! The crate trusts a page header's `uncompressed_page_size`: for Snappy and LZ4 pages it
//! zero-fills a buffer of that size before decompressing, so one flipped varint makes a
//! 20-byte page cost 2 GiB of memory. Each header of a chunk is read here first (one small
//! read per page) and its sizes checked: the compressed page must lie inside the chunk, and
//! the uncompressed size must be one the codec can produce from that many bytes.
//!
//! The same walk bounds memory for every codec: a page is decompressed whole, so a page
//! whose header claims more than the read option `max_page_bytes` uncompressed is refused
//! (`UnsupportedError`) before a byte of it is decompressed — a 4 KiB Brotli chunk can hold
//! 2 GiB of strings. Chunks whose footer total is within the bound are not walked for it.
//!
//! ```
//! use parquet::basic::Compression;
//! use pqsift::format::page_headers::max_uncompressed_size;
//! assert_eq!(max_uncompressed_size(Compression::SNAPPY, 1000), Some(32_000 + 1024));
//! assert_eq!(max_uncompressed_size(Compression::UNCOMPRESSED, 1000), None); // never decompressed
//! ```

use std::ops::Range;

use parquet::basic::Compression;
use parquet::file::metadata::ColumnChunkMetaData;

use crate::error::{PqsiftError, Result};
use crate::format::thrift_walk::ThriftWalker;
use crate::storage::FileSource;

/// Bytes read per header: headers hold sizes, counts and (optionally) statistics; a page
/// header with statistics of long strings may need more, and is then read again whole.
const HEADER_PROBE: u64 = 256;
/// A page header larger than this is corrupt (parquet-cpp's limit is 16 MiB too).
const MAX_HEADER: u64 = 16 << 20;

/// The largest uncompressed size `codec` can produce from `compressed` bytes, for the
/// codecs the crate pre-fills a buffer for; `None` for those that grow it as they decode.
///
/// Snappy emits at most 64 bytes per 3-byte copy (< 22×); an LZ4 sequence at most 255
/// bytes per length byte (< 256×). Both get a margin.
pub fn max_uncompressed_size(codec: Compression, compressed: u64) -> Option<u64> {
    let ratio = match codec {
        Compression::SNAPPY => 32,
        Compression::LZ4 | Compression::LZ4_RAW => 260,
        _ => return None,
    };
    Some(compressed.saturating_mul(ratio).saturating_add(1024))
}

/// Pages whose header claims more uncompressed bytes than this are not decompressed
/// (the default of the read option `max_page_bytes`). Writers cut pages at about 1 MiB;
/// a page this large holds a value that large, and decoding it costs twice its size.
pub const DEFAULT_MAX_PAGE_BYTES: u64 = 256 << 20;

/// Whether the pages of `chunk` need their headers checked before the crate decodes them:
/// its codec pre-fills buffers, or its pages may exceed `max_page_bytes`.
fn needs_check(chunk: &ColumnChunkMetaData, max_page_bytes: u64) -> bool {
    max_uncompressed_size(chunk.compression(), 0).is_some() || chunk.uncompressed_size().max(0) as u64 > max_page_bytes
}

/// Checks every page header of column chunk `chunk` (when its codec is one the crate
/// pre-fills for, or its uncompressed total exceeds `max_page_bytes`), whose byte range
/// the footer check has already placed inside the file. Errors name the row group, column
/// and page.
pub fn check_column_chunk(
    file: &FileSource,
    chunk: &ColumnChunkMetaData,
    row_group: usize,
    max_page_bytes: u64,
) -> Result<()> {
    let (start, length) = chunk_range(chunk);
    let end = start + length;
    if !needs_check(chunk, max_page_bytes) {
        // The crate checks the rest itself, but for a dictionary page's count of values.
        return check_first_page(file, chunk, row_group, start, end, max_page_bytes);
    }
    let mut position = start;
    let mut page = 0usize;
    // The pages end with the chunk's last value, as the crate reads them: bytes after it
    // (an old parquet-mr file's chunk padded by `metadata`) are not pages.
    let (mut values, wanted) = (0i64, chunk.num_values());
    while position < end && (wanted <= 0 || values < wanted) {
        let (page_end, page_values) = check_page(file, chunk, row_group, page, position, end, max_page_bytes)?;
        (position, values) = (page_end, values.saturating_add(page_values.unwrap_or(0)));
        page += 1;
    }
    Ok(())
}

/// Checks the headers of the pages of `chunk` at `pages` only (the byte ranges the offset
/// index gives, the dictionary page's included): the pages a selective read fetches from
/// a store, without walking the others.
pub fn check_pages(
    file: &FileSource,
    chunk: &ColumnChunkMetaData,
    row_group: usize,
    pages: &[Range<u64>],
    max_page_bytes: u64,
) -> Result<()> {
    if !needs_check(chunk, max_page_bytes) {
        let start = chunk_range(chunk).0;
        return match pages.iter().find(|range| range.start == start) {
            Some(first) => check_first_page(file, chunk, row_group, first.start, first.end, max_page_bytes),
            None => Ok(()),
        };
    }
    for (page, range) in pages.iter().enumerate() {
        check_page(file, chunk, row_group, page, range.start, range.end, max_page_bytes)?;
    }
    Ok(())
}

/// Checks the header of the chunk's first page (at `start`, the chunk ending by `end`):
/// its dictionary page, where it has one.
fn check_first_page(
    file: &FileSource,
    chunk: &ColumnChunkMetaData,
    row_group: usize,
    start: u64,
    end: u64,
    max_page_bytes: u64,
) -> Result<()> {
    check_page(file, chunk, row_group, 0, start, end, max_page_bytes).map(|_| ())
}

/// Checks the header of the page at `position`, which must end by `end`; returns where
/// the page ends and, for a data page, its values.
fn check_page(
    file: &FileSource,
    chunk: &ColumnChunkMetaData,
    row_group: usize,
    page: usize,
    position: u64,
    end: u64,
    max_page_bytes: u64,
) -> Result<(u64, Option<i64>)> {
    let column = chunk.column_path().string();
    let name = file.name();
    let corrupt = |reason: String| {
        PqsiftError::corrupt(&name, format!("row group {row_group}, column {column}, page {page}: {reason}"))
    };
    let Some((header, header_len)) = read_header(file, position, end)? else {
        return Err(corrupt(format!("no valid page header at offset {position}")));
    };
    let (Ok(compressed), Ok(uncompressed)) = (u64::try_from(header.compressed), u64::try_from(header.uncompressed))
    else {
        return Err(corrupt(format!(
            "negative page size ({} compressed, {} uncompressed)",
            header.compressed, header.uncompressed
        )));
    };
    let page_end = position + header_len as u64 + compressed;
    if page_end > end {
        return Err(corrupt(format!(
            "{compressed} compressed bytes at offset {position} run past the column chunk's end ({end})"
        )));
    }
    if let Some(max) = max_uncompressed_size(chunk.compression(), compressed)
        && uncompressed > max
    {
        return Err(corrupt(format!(
            "claims {uncompressed} uncompressed bytes from {compressed} {:?} bytes (at most {max} possible)",
            chunk.compression()
        )));
    }
    if let Some(entries) = header.dictionary_values {
        // The crate reserves room for every entry a dictionary page claims before reading
        // one; each takes at least a fixed number of the page's bytes.
        let least = u64::try_from(entries).ok().map(|n| n.saturating_mul(least_value_bytes(chunk)));
        if least.is_none_or(|least| least > uncompressed) {
            return Err(corrupt(format!(
                "a dictionary page of {entries} values in {uncompressed} bytes ({} bytes a value at least)",
                least_value_bytes(chunk)
            )));
        }
    }
    if uncompressed > max_page_bytes {
        return Err(PqsiftError::unsupported(
            &name,
            format!(
                "row group {row_group}, column {column}, page {page}: {uncompressed} bytes uncompressed, more than \
                 max_page_bytes ({max_page_bytes}); raise the option to read it"
            ),
        ));
    }
    Ok((page_end, header.values))
}

/// The fewest bytes a PLAIN value of `chunk`'s type takes (a dictionary page's values are
/// PLAIN): a string's length prefix, a fixed width; 0 for booleans (bits).
fn least_value_bytes(chunk: &ColumnChunkMetaData) -> u64 {
    use parquet::basic::Type;
    match chunk.column_type() {
        Type::BOOLEAN => 0,
        Type::INT32 | Type::FLOAT | Type::BYTE_ARRAY => 4,
        Type::INT64 | Type::DOUBLE => 8,
        Type::INT96 => 12,
        Type::FIXED_LEN_BYTE_ARRAY => chunk.column_descr().type_length().max(0) as u64,
    }
}

/// The sizes of the page header at `position` (the page ending by `end`) and the header's
/// length; `None` when no valid header is there.
fn read_header(file: &FileSource, position: u64, end: u64) -> Result<Option<(PageSizes, usize)>> {
    read_header_with(file, position, end, PageSizes::read)
}

/// What `parse` makes of the page header at `position` (the page ending by `end`), and the
/// header's length; `None` when no valid header is there. `parse` gives `None` when the
/// bytes do not hold a whole header: they are read again, more of them, up to
/// [`MAX_HEADER`].
pub(crate) fn read_header_with<T>(
    file: &FileSource,
    position: u64,
    end: u64,
    parse: impl Fn(&[u8]) -> Option<(T, usize)>,
) -> Result<Option<(T, usize)>> {
    if end <= position {
        return Ok(None); // (an offset index may put a page before its chunk)
    }
    let mut probe = HEADER_PROBE.min(end - position);
    loop {
        let bytes = file.read(position..position + probe)?;
        match parse(&bytes) {
            Some(found) => return Ok(Some(found)),
            None if probe < (end - position).min(MAX_HEADER) => {
                probe = (probe * 16).min(end - position).min(MAX_HEADER)
            }
            None => return Ok(None),
        }
    }
}

/// The uncompressed size of the page at `position` (ending by `end`, at most `limit`
/// bytes uncompressed) as its header says: the size of the buffer a page read still
/// compressed is decompressed into (see [`zstd_prefix`](crate::format::zstd_prefix)).
/// `None`: no valid header, or a size that is negative or above `limit`.
pub(crate) fn uncompressed_page_size(file: &FileSource, position: u64, end: u64, limit: u64) -> Result<Option<usize>> {
    let Some((header, _)) = read_header(file, position, end)? else { return Ok(None) };
    Ok(u64::try_from(header.uncompressed).ok().filter(|&size| size <= limit).map(|size| size as usize))
}

/// The chunk's byte range as the crate reads it (start checked non-negative by the footer
/// check, dictionary offsets inside the magic normalised away).
pub(crate) fn chunk_range(chunk: &ColumnChunkMetaData) -> (u64, u64) {
    let start = chunk.dictionary_page_offset().unwrap_or(chunk.data_page_offset());
    (start.max(0) as u64, chunk.compressed_size().max(0) as u64)
}

/// The sizes of a page header (PageHeader fields 2 and 3), a data page's value count
/// (field 1 of its `DataPageHeader`, field 5, or `DataPageHeaderV2`, field 8), and a
/// dictionary page's (field 1 of its `DictionaryPageHeader`, field 7).
struct PageSizes {
    uncompressed: i64,
    compressed: i64,
    values: Option<i64>,
    dictionary_values: Option<i64>,
}

impl PageSizes {
    /// The sizes and the header's length, `None` when `bytes` do not hold a whole header.
    fn read(bytes: &[u8]) -> Option<(Self, usize)> {
        let mut walker = ThriftWalker::new(bytes);
        const STRUCT: u8 = 12;
        let (mut uncompressed, mut compressed, mut values, mut dictionary_values) = (None, None, None, None);
        let mut last_id = 0i16;
        loop {
            let before = walker.position();
            // Out of bytes before the stop byte: the header is longer than the probe.
            let next = *bytes.get(before)?;
            let Some((field_type, id)) = walker.field_header(last_id) else {
                if next == 0 {
                    break; // the stop byte
                }
                return None;
            };
            match id {
                2 => uncompressed = Some(walker.integer(field_type)?),
                3 => compressed = Some(walker.integer(field_type)?),
                5 | 7 | 8 if field_type == STRUCT => {
                    let count = match id {
                        7 => &mut dictionary_values,
                        _ => &mut values,
                    };
                    let mut inner_id = 0i16;
                    while let Some((inner_type, id)) = walker.field_header(inner_id) {
                        match id {
                            1 => *count = Some(walker.integer(inner_type)?),
                            _ => walker.skip(inner_type, 1)?,
                        }
                        inner_id = id;
                    }
                }
                _ => walker.skip(field_type, 0)?,
            }
            last_id = id;
        }
        Some((
            Self { uncompressed: uncompressed?, compressed: compressed?, values, dictionary_values },
            walker.position(),
        ))
    }
}
