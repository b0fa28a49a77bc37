//! Reading a file's footer and page index (step 1 of DataFusion's `ParquetOpener`).
//!
//! Only metadata is read here: the footer (schema, row groups, column chunk statistics)
//! and, when the file has one, the page index (column index and offset index). Errors name
//! the file and the reason.
//!
//! The footer is read with one I/O when it fits in the last `metadata_size_hint` bytes of
//! the file (the page index, written just before the footer, usually fits too). Every size
//! and offset the footer claims is checked against the file before anything is allocated
//! or read for it, so a hostile footer fails fast with [`PqsiftError::Corrupt`] instead of
//! asking for gigabytes.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use parquet::file::metadata::page_index::{PageIndex, PageIndexProvider};
use parquet::file::metadata::{
    ColumnChunkMetaData, FileMetaData, PageIndexPolicy, ParquetMetaData, ParquetMetaDataBuilder, ParquetMetaDataReader,
    RowGroupMetaData,
};
use parquet::file::reader::Length;

use crate::error::{PqsiftError, Result};
use crate::format::footer_parts::{decode_in_parts, parts_for};
use crate::format::page_headers::chunk_range;
use crate::format::thrift_walk::{ThriftWalker, push_list_header};
use crate::selection::PageLocation;
use crate::storage::{FileSource, Location};

/// Default of the `metadata_size_hint` read option: the last 512 KiB of a file are read in
/// one I/O, enough for the footer and page index of files with a few hundred columns × row
/// groups (a footer is ~100–300 bytes per column chunk, a page index ~20 bytes per page),
/// and a read that costs about the same as a small one on local disks and object stores.
pub const DEFAULT_METADATA_SIZE_HINT: usize = 512 << 10;

/// The 8-byte tail of a Parquet file: metadata length (u32 LE) and magic.
const FOOTER_TAIL: u64 = 8;

/// Reads the footer and, when present, the page index of the Parquet file at `location`
/// (with the default [`DEFAULT_METADATA_SIZE_HINT`]).
///
/// ```no_run
/// use pqsift::storage::Location;
/// let metadata = pqsift::format::metadata::load(&Location::from(std::path::Path::new("data/events.parquet"))).unwrap();
/// println!("{} row groups", metadata.num_row_groups());
/// ```
pub fn load(location: &Location) -> Result<Arc<ParquetMetaData>> {
    load_with_hint(location, DEFAULT_METADATA_SIZE_HINT)
}

/// [`load`], reading the last `size_hint` bytes of the file first.
pub fn load_with_hint(location: &Location, size_hint: usize) -> Result<Arc<ParquetMetaData>> {
    let file = FileSource::open(location)?;
    read_metadata(&file, size_hint).map(Arc::new)
}

/// Reads and checks the metadata of `file`: first its last `size_hint` bytes (at least the
/// 8-byte tail), then only what did not fit — the footer, then the page index.
///
/// Encrypted files raise [`PqsiftError::Unsupported`]; a footer whose sizes or offsets point
/// outside the file raises [`PqsiftError::Corrupt`] before any of it is read. A page index
/// that lies inside the file but cannot be decoded is ignored (pruning then uses row group
/// statistics only), as pyarrow, which never reads it, would.
///
/// ```
/// # let dir = std::env::temp_dir().join("pqsift_metadata_doc");
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let path = dir.join("t.parquet");
/// # let batch = arrow::array::RecordBatch::try_from_iter([("x", std::sync::Arc::new(arrow::array::Int32Array::from(vec![1, 2])) as _)]).unwrap();
/// # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), None).unwrap();
/// # w.write(&batch).unwrap(); w.close().unwrap();
/// use pqsift::storage::local_file::CountingFile;
/// use pqsift::format::metadata::{read_metadata, DEFAULT_METADATA_SIZE_HINT};
/// use pqsift::storage::FileSource;
/// let file = CountingFile::open(&path).unwrap();
/// let metadata = read_metadata(&FileSource::Local(file.clone()), DEFAULT_METADATA_SIZE_HINT).unwrap();
/// assert_eq!(metadata.file_metadata().num_rows(), 2);
/// assert_eq!(file.reads(), 1); // footer and page index in one read
/// ```
pub fn read_metadata(file: &FileSource, size_hint: usize) -> Result<ParquetMetaData> {
    read_metadata_and_file(file, size_hint, 1).map(|read| read.metadata)
}

/// What [`read_metadata_and_file`] read.
#[derive(Debug)]
pub struct FooterRead {
    /// The file's metadata, with its page index when it has one.
    pub metadata: ParquetMetaData,
    /// The whole file, when the reads took in all of it (a file no longer than the size hint).
    pub whole_file: Option<Bytes>,
    /// How many bytes at the end of the file hold its footer and page index, when that is
    /// less than the whole file: the size hint that reads them again in one request, and no
    /// more (a file read whole has none, so that it is read whole again).
    pub tail_bytes: Option<u64>,
}

/// [`read_metadata`], and the whole file's bytes when the reads took in all of it (a file
/// no longer than `size_hint`): a small file is then read once, not once for its footer and
/// again for its pages. A wide footer is decoded on up to `decode_threads` threads (see
/// [`crate::format::footer_parts`]).
pub fn read_metadata_and_file(file: &FileSource, size_hint: usize, decode_threads: usize) -> Result<FooterRead> {
    let name = file.name();
    let path = name.as_str();
    let corrupt = |reason: String| PqsiftError::corrupt(path, reason);
    let len = file.len();
    if len < 4 + FOOTER_TAIL {
        return Err(corrupt(format!("{len} bytes is too small for a Parquet file (at least 12)")));
    }
    let first = (size_hint as u64).clamp(FOOTER_TAIL, len);
    let mut tail = Tail::read(file, len - first..len)?;

    let footer_tail = tail.slice(len - FOOTER_TAIL..len);
    match &footer_tail[4..] {
        b"PAR1" => {}
        b"PARE" => {
            return Err(PqsiftError::unsupported(
                path,
                "the footer is encrypted (magic PARE); pqsift does not decrypt Parquet files",
            ));
        }
        _ => {
            return Err(corrupt(
                "the file does not end with the Parquet magic PAR1 (not Parquet, or truncated)".into(),
            ));
        }
    }
    let metadata_len = u64::from(u32::from_le_bytes(footer_tail[..4].try_into().expect("4 bytes")));
    if metadata_len + FOOTER_TAIL + 4 > len {
        return Err(corrupt(format!(
            "the footer claims {metadata_len} bytes of metadata but the file has only {len} bytes"
        )));
    }
    // Everything before the footer: where column chunks, bloom filters and page indexes live.
    let data_end = len - FOOTER_TAIL - metadata_len;
    if data_end < tail.range.start {
        tail = Tail::read(file, data_end..len)?;
    }
    let footer = tail.slice(data_end..len - FOOTER_TAIL);
    let refuse_encrypted = || {
        PqsiftError::unsupported(
            path,
            "its columns are encrypted (plaintext footer with an encryption algorithm); pqsift does not decrypt Parquet files",
        )
    };

    let footer_only = |tail: &Tail| -> Result<ParquetMetaData> {
        // A wide footer in parts, one per core (see `footer_parts`); otherwise whole.
        if let Some(metadata) = decode_in_parts(&footer, parts_for(footer.len(), decode_threads)) {
            return Ok(metadata);
        }
        let mut reader = ParquetMetaDataReader::new().with_page_index_policy(PageIndexPolicy::Skip);
        let parsed = reader.try_parse_sized(&tail.bytes, len).and_then(|()| reader.finish());
        parsed.or_else(|error| {
            // A field of another type than the format's (a pre-release writer): skipped, as
            // Thrift decoders skip it; otherwise the crate's error stands.
            let repaired = super::footer_repair::without_mistyped_fields(&footer);
            repaired
                .and_then(|footer| ParquetMetaDataReader::decode_metadata(&footer).ok())
                .ok_or_else(|| corrupt(error.to_string()))
        })
    };
    if let Some(reason) = overclaimed_children(&footer) {
        return Err(corrupt(reason));
    }
    let metadata = match footer_only(&tail) {
        Err(_) if footer_declares_encryption(&footer) => return Err(refuse_encrypted()),
        Err(error) => return Err(error),
        Ok(metadata) => metadata,
    };
    if !ends_with_column_orders(&footer, metadata.file_metadata().schema_descr().num_columns())
        && footer_declares_encryption(&footer)
    {
        return Err(refuse_encrypted());
    }
    let metadata = normalise(check(metadata, path, data_end)?, data_end);
    let read = |metadata: ParquetMetaData, tail: &Tail, needed_from: u64| {
        let whole = tail.range.start == 0;
        let whole_file = whole.then(|| tail.bytes.clone());
        FooterRead { metadata, whole_file, tail_bytes: (!whole).then_some(len - needed_from) }
    };

    let Some(index_range) = page_index_range(&metadata) else {
        return Ok(read(metadata, &tail, data_end));
    };
    if index_range.start < tail.range.start {
        tail = Tail::read(file, index_range.start..len)?;
    }
    let with_index = ParquetMetaDataReader::new_with_metadata(metadata)
        .with_page_index_policy(PageIndexPolicy::Optional)
        .read_page_index_sized_and_finish(&tail.bytes, len);
    let metadata = match with_index {
        Ok((metadata, index)) => {
            // A page index that decodes but does not fit its chunks is ignored as well.
            let index = index.filter(|index| offset_indexes_fit(&metadata, index));
            let index = index.map(|i| Arc::new(i) as Arc<dyn PageIndexProvider>);
            ParquetMetaDataBuilder::new_from_metadata(metadata).set_page_index(index).build()
        }
        // An undecodable page index (inside the file: checked above) is ignored. The
        // metadata went into the failed reader: parse the footer again, from memory.
        Err(_) => normalise(check(footer_only(&tail)?, path, data_end)?, data_end),
    };
    Ok(read(metadata, &tail, index_range.start.min(data_end)))
}

/// Whether every offset index describes pages its column chunk can hold: at least one,
/// the first starting at row 0, each starting after the one before and inside the row
/// group, each inside the chunk's bytes and after the page before, and as many as the
/// chunk's column index describes. Page pruning, row windows and the crate's page
/// statistics index and subtract by these values, trusting them.
fn offset_indexes_fit(metadata: &ParquetMetaData, index: &PageIndex) -> bool {
    metadata.row_groups().iter().enumerate().all(|(r, row_group)| {
        row_group.columns().iter().enumerate().all(|(c, chunk)| {
            let Some(offset_index) = index.offset_index(r, c) else { return true };
            let pages = offset_index.page_locations();
            let (start, length) = chunk_range(chunk);
            let chunk_end = start.saturating_add(length);
            let (mut next_row, mut next_byte) = (0, start);
            let fits = pages.iter().enumerate().all(|(i, page)| {
                let row_fits = if i == 0 { page.first_row_index == 0 } else { page.first_row_index >= next_row };
                let offset = u64::try_from(page.offset).ok();
                let size = u64::try_from(page.compressed_page_size).ok().filter(|&size| size > 0);
                let end = offset.zip(size).map(|(offset, size)| offset.saturating_add(size));
                let bytes_fit =
                    offset.is_some_and(|offset| offset >= next_byte) && end.is_some_and(|end| end <= chunk_end);
                (next_row, next_byte) = (page.first_row_index.saturating_add(1), end.unwrap_or(u64::MAX));
                row_fits && bytes_fit && page.first_row_index < row_group.num_rows().max(1)
            });
            let pages_counted =
                index.column_index(r, c).is_none_or(|column_index| column_index.num_pages() == pages.len() as u64);
            !pages.is_empty() && fits && pages_counted
        })
    })
}

/// Bytes `range` of a file, read in one I/O.
struct Tail {
    range: Range<u64>,
    bytes: Bytes,
}

impl Tail {
    fn read(file: &FileSource, range: Range<u64>) -> Result<Self> {
        let bytes = file.read(range.clone())?;
        Ok(Self { range, bytes })
    }

    /// File bytes `range`, which must lie inside this tail.
    fn slice(&self, range: Range<u64>) -> Bytes {
        self.bytes.slice((range.start - self.range.start) as usize..(range.end - self.range.start) as usize)
    }
}

/// Checks every size and offset the footer claims against the data part of the file
/// (`0..data_end`), so that no later read or allocation trusts an impossible value.
fn check(metadata: ParquetMetaData, path: &str, data_end: u64) -> Result<ParquetMetaData> {
    let corrupt = |reason: String| Err(PqsiftError::corrupt(path, reason));
    let inside = |offset: i64, length: i64| -> bool {
        u64::try_from(offset)
            .is_ok_and(|o| u64::try_from(length).is_ok_and(|l| o.checked_add(l).is_some_and(|end| end <= data_end)))
    };
    for (r, row_group) in metadata.row_groups().iter().enumerate() {
        if row_group.num_rows() < 0 {
            return corrupt(format!("row group {r} claims {} rows", row_group.num_rows()));
        }
        // Every row has a value or a level in each column, so a row group holds no more
        // rows than its fullest chunk has values: a read of no column (a count) trusts the
        // row count alone, and would make that many rows' batches.
        let most_values = row_group.columns().iter().map(|chunk| chunk.num_values()).max();
        if let Some(values) = most_values.filter(|&values| row_group.num_rows() > values) {
            return corrupt(format!(
                "row group {r} claims {} rows, but its column chunks hold at most {values} values",
                row_group.num_rows()
            ));
        }
        for chunk in row_group.columns() {
            // Named only when something is wrong: a footer has tens of thousands of chunks.
            let at = || format!("row group {r}, column {}", chunk.column_path().string());
            if let Some(other) = chunk.file_path().filter(|p| !p.is_empty()) {
                return Err(PqsiftError::unsupported(
                    path,
                    format!(
                        "{} is stored in another file ({other}); pqsift reads single-file column chunks only",
                        at()
                    ),
                ));
            }
            if chunk.num_values() < 0 {
                return corrupt(format!("{} claims {} values", at(), chunk.num_values()));
            }
            let start = chunk.dictionary_page_offset().filter(|&o| o >= 4).unwrap_or(chunk.data_page_offset());
            let size = chunk.compressed_size();
            if start < 4 || !inside(start, size) {
                return corrupt(format!(
                    "{}: column chunk at offset {start}, {size} bytes, is not inside the data part of the file (bytes 4..{data_end})",
                    at()
                ));
            }
            if let Some(offset) = chunk.bloom_filter_offset() {
                let length = chunk.bloom_filter_length().map_or(0, i64::from);
                if !inside(offset, length) || u64::try_from(offset).is_ok_and(|o| o >= data_end) {
                    return corrupt(format!(
                        "{}: bloom filter at offset {offset}, {length} bytes, is not inside the data part of the file (0..{data_end})",
                        at()
                    ));
                }
            }
            for (what, offset, length) in [
                ("column index", chunk.column_index_offset(), chunk.column_index_length()),
                ("offset index", chunk.offset_index_offset(), chunk.offset_index_length()),
            ] {
                if let (Some(offset), Some(length)) = (offset, length)
                    && !inside(offset, i64::from(length))
                {
                    return corrupt(format!(
                        "{}: {what} at offset {offset}, {length} bytes, is not inside the data part of the file (0..{data_end})",
                        at()
                    ));
                }
            }
        }
    }
    Ok(metadata)
}

/// Fixes three harmless inconsistencies old writers left, as pyarrow does: a file row count
/// that is not the sum of its row groups' (parquet-rs 0.3 wrote 0; the crate would cap its
/// batches at it and read nothing), a dictionary page offset inside the leading magic
/// (parquet-mr wrote 0 for "no dictionary page"), and chunk sizes that leave out the
/// dictionary page's header (parquet-mr before 1.2.9, PARQUET-816 / IMPALA-694: the last
/// page overruns the chunk), padded as Arrow C++ pads them — by up to 100 bytes, never
/// past `data_end`, the end of the data part the footer check holds every chunk to.
fn normalise(metadata: ParquetMetaData, data_end: u64) -> ParquetMetaData {
    let rows: i64 = metadata.row_groups().iter().map(RowGroupMetaData::num_rows).fold(0, i64::saturating_add);
    let bad_dictionary_offset =
        |rg: &RowGroupMetaData| rg.columns().iter().any(|c| c.dictionary_page_offset().is_some_and(|o| o < 4));
    let fix_rows = metadata.file_metadata().num_rows() != rows;
    let fix_dictionaries = metadata.row_groups().iter().any(bad_dictionary_offset);
    let pad_chunks = writes_short_chunk_sizes(metadata.file_metadata().created_by());
    if !fix_rows && !fix_dictionaries && !pad_chunks {
        return metadata;
    }
    let padded = |c: ColumnChunkMetaData| -> ColumnChunkMetaData {
        let start = c.dictionary_page_offset().filter(|&o| o >= 4).unwrap_or(c.data_page_offset());
        let end = start.saturating_add(c.compressed_size()).max(0) as u64;
        let padding = data_end.saturating_sub(end).min(MAX_DICTIONARY_HEADER_PADDING) as i64;
        c.clone().into_builder().set_total_compressed_size(c.compressed_size() + padding).build().unwrap_or(c)
    };
    let file = metadata.file_metadata();
    let file_metadata = FileMetaData::new(
        file.version(),
        rows,
        file.created_by().map(str::to_string),
        file.key_value_metadata().cloned(),
        file.schema_descr_ptr(),
        file.column_orders().cloned(),
    );
    let mut builder = ParquetMetaDataBuilder::new_from_metadata(metadata);
    let page_index = builder.take_page_index();
    let row_groups: Vec<RowGroupMetaData> = builder
        .take_row_groups()
        .into_iter()
        .map(|rg| {
            if !bad_dictionary_offset(&rg) && !pad_chunks {
                return rg;
            }
            let mut rg_builder = rg.clone().into_builder();
            let columns = rg_builder
                .take_columns()
                .into_iter()
                .map(|c| {
                    let c = if pad_chunks { padded(c) } else { c };
                    if c.dictionary_page_offset().is_none_or(|o| o >= 4) {
                        return c;
                    }
                    let fixed = c.clone().into_builder().set_dictionary_page_offset(None).build();
                    fixed.unwrap_or(c)
                })
                .collect();
            rg_builder.set_column_metadata(columns).build().unwrap_or(rg)
        })
        .collect();
    ParquetMetaDataBuilder::new(file_metadata).set_row_groups(row_groups).set_page_index(page_index).build()
}

/// The most a chunk of a file with [`writes_short_chunk_sizes`] is padded by: the largest
/// dictionary page header, as Arrow C++ takes it (`kMaxDictHeaderSize`).
const MAX_DICTIONARY_HEADER_PADDING: u64 = 100;

/// Whether the writer `created_by` left dictionary page headers out of chunk sizes:
/// parquet-mr before 1.2.9, or parquet-mr naming no version (as Arrow C++ reads it).
///
/// ```
/// # use pqsift::format::metadata::writes_short_chunk_sizes;
/// assert!(writes_short_chunk_sizes(Some("parquet-mr")));
/// assert!(writes_short_chunk_sizes(Some("parquet-mr version 1.2.8 (build 1)")));
/// assert!(!writes_short_chunk_sizes(Some("parquet-mr version 1.2.9 (build 1)")));
/// assert!(!writes_short_chunk_sizes(Some("parquet-mr version 1.13.1 (build db41831)")));
/// assert!(!writes_short_chunk_sizes(Some("parquet-cpp-arrow version 26.0.1")));
/// assert!(!writes_short_chunk_sizes(None));
/// ```
pub fn writes_short_chunk_sizes(created_by: Option<&str>) -> bool {
    let Some(rest) = created_by.and_then(|c| c.strip_prefix("parquet-mr")) else { return false };
    let Some(version) = rest.trim_start().strip_prefix("version ") else { return true };
    let numbers: Vec<u64> = version
        .split(|c: char| !c.is_ascii_digit() && c != '.')
        .next()
        .unwrap_or("")
        .split('.')
        .map(|part| part.parse().unwrap_or(0))
        .collect();
    let part = |i: usize| numbers.get(i).copied().unwrap_or(0);
    (part(0), part(1), part(2)) < (1, 2, 9)
}

/// The bytes holding every column and offset index of the file, `None` when it has none.
fn page_index_range(metadata: &ParquetMetaData) -> Option<Range<u64>> {
    let mut range: Option<Range<u64>> = None;
    for chunk in metadata.row_groups().iter().flat_map(RowGroupMetaData::columns) {
        for (offset, length) in [
            (chunk.column_index_offset(), chunk.column_index_length()),
            (chunk.offset_index_offset(), chunk.offset_index_length()),
        ] {
            let (Some(offset), Some(length)) = (offset, length) else { continue };
            // Checked non-negative and inside the file by `check`.
            let (start, end) = (offset as u64, offset as u64 + length as u64);
            range = Some(match range {
                Some(r) => r.start.min(start)..r.end.max(end),
                None => start..end,
            });
        }
    }
    range
}

/// Where a `SchemaElement` of a serialized `FileMetaData` claims more children than the
/// schema has elements after it (or fewer than none): the crate reserves room for that
/// many before it finds them missing, so a flipped `num_children` asks for gigabytes.
/// `None` where every claim fits, or the schema cannot be walked (the crate then reports
/// what is wrong).
fn overclaimed_children(footer: &[u8]) -> Option<String> {
    const LIST: u8 = 9;
    const STRUCT: u8 = 12;
    let mut walker = ThriftWalker::new(footer);
    let mut last_id = 0i16;
    let elements = loop {
        let (field_type, id) = walker.field_header(last_id)?;
        if id == 2 && field_type == LIST {
            let (element_type, elements) = walker.list_header()?;
            // An element takes a byte at least (its stop): a list longer than the bytes
            // left is the crate's to report, not to walk.
            if element_type != STRUCT || elements > walker.remaining() as u64 {
                return None;
            }
            break elements;
        }
        walker.skip(field_type, 0)?;
        last_id = id;
    };
    for element in 0..elements {
        let mut last_id = 0i16;
        while let Some((field_type, id)) = walker.field_header(last_id) {
            match id {
                5 => {
                    let children = walker.integer(field_type)?;
                    let after = elements - element - 1;
                    if u64::try_from(children).is_ok_and(|children| children > after) || children < 0 {
                        return Some(format!(
                            "schema element {element} claims {children} children, but the schema has {after} elements after it"
                        ));
                    }
                }
                _ => walker.skip(field_type, 1)?,
            }
            last_id = id;
        }
    }
    None
}

/// Whether a serialized `FileMetaData` (Thrift compact protocol) has field 8,
/// `encryption_algorithm`: the mark of an encrypted file with a plaintext footer. The crate,
/// built without its `encryption` feature (which would add the `ring` crate to decrypt
/// nothing), skips that field and then fails on the encrypted column metadata with
/// misleading errors. Only the top-level fields are walked; nested values are skipped
/// without allocating, within the buffer and a nesting limit.
fn footer_declares_encryption(footer: &[u8]) -> bool {
    let mut walker = ThriftWalker::new(footer);
    let mut last_id = 0i16;
    while let Some((field_type, id)) = walker.field_header(last_id) {
        if id == 8 && field_type == 12 {
            return true;
        }
        if walker.skip(field_type, 0).is_none() {
            return false;
        }
        last_id = id;
    }
    false
}

/// Whether a serialized `FileMetaData` ends with its field 7, `column_orders` — one
/// type-defined order per leaf column of `leaves`, each the three bytes `1C 00 00`, after
/// fields 4 to 6 — and its stop byte: then no `encryption_algorithm` (field 8) follows, and
/// [`footer_declares_encryption`] need not walk the row groups (millions of values in a wide
/// table's footer) to find none. What every writer of this decade writes; any other ending
/// (no column orders, other orders, fields out of order) is walked.
fn ends_with_column_orders(footer: &[u8], leaves: usize) -> bool {
    let mut list_header = Vec::with_capacity(11);
    push_list_header(&mut list_header, 12, leaves);
    let orders = 3 * leaves;
    let Some(field_at) = footer.len().checked_sub(1 + orders + list_header.len() + 1) else {
        return false;
    };
    let (field, rest) = (footer[field_at], &footer[field_at + 1..]);
    // Field 7 as a list, its id a short delta of 1 to 3 from field 6, 5 or 4.
    matches!(field, 0x19 | 0x29 | 0x39)
        && rest.starts_with(&list_header)
        && rest[list_header.len()..list_header.len() + orders].chunks_exact(3).all(|order| order == [0x1c, 0, 0])
        && rest[list_header.len() + orders..] == [0]
}

/// The data pages of one column chunk, from the offset index; `None` when the file has no
/// offset index for it.
pub fn page_locations(metadata: &ParquetMetaData, row_group: usize, column: usize) -> Option<Vec<PageLocation>> {
    let index = metadata.page_index_for_row_group(row_group);
    let locations = index.page_locations(column)?;
    Some(
        locations
            .iter()
            .map(|p| PageLocation {
                // The offset index is validated by the parquet crate; negative values would be
                // corrupt and are clamped to 0 rather than wrapped.
                offset: u64::try_from(p.offset).unwrap_or(0),
                compressed_size: u64::try_from(p.compressed_page_size).unwrap_or(0),
                first_row_index: u64::try_from(p.first_row_index).unwrap_or(0),
            })
            .collect(),
    )
}

/// A fingerprint of a file's row group layout — each row group's rows, offset and sizes,
/// and the column count. A plan made on one reading of a footer applies to another reading
/// only if the two fingerprints match: a file rewritten in between must not be read with
/// the row groups and page selections of its old version. (A walk of every column chunk:
/// taken once per footer read.)
pub fn layout_fingerprint(metadata: &ParquetMetaData) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    metadata.file_metadata().schema_descr().num_columns().hash(&mut hasher);
    for row_group in metadata.row_groups() {
        (row_group.num_rows(), row_group.file_offset(), row_group.compressed_size(), row_group.total_byte_size())
            .hash(&mut hasher);
    }
    hasher.finish()
}

/// The byte range of a column chunk's dictionary page (from the chunk's start to its first
/// data page), if it has one.
pub fn dictionary_page_range(metadata: &ParquetMetaData, row_group: usize, column: usize) -> Option<Range<u64>> {
    let chunk = metadata.row_group(row_group).column(column);
    let start = u64::try_from(chunk.dictionary_page_offset()?).ok()?;
    let first_data_page = u64::try_from(chunk.data_page_offset()).ok()?;
    (start < first_data_page).then_some(start..first_data_page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walker_finds_field_8_and_survives_garbage() {
        // struct { 1: i32 = 1, 8: struct { 1: struct {} } }
        let encrypted = [0x15, 0x02, 0x7c, 0x1c, 0x00, 0x00, 0x00];
        assert!(footer_declares_encryption(&encrypted));
        let plain = [0x15, 0x02, 0x00];
        assert!(!footer_declares_encryption(&plain));
        // A list claiming 2^60 elements, a truncated binary, deep nesting: no panic, no hang.
        assert!(!footer_declares_encryption(&[0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]));
        assert!(!footer_declares_encryption(&[0x18, 0xff, 0x01, 0x41]));
        assert!(!footer_declares_encryption(&[0x1c; 10_000]));
    }

    /// The serialized `FileMetaData` of a file of `columns` int32 columns, as arrow-rs writes it.
    fn footer_of(columns: usize) -> Vec<u8> {
        use arrow::array::{ArrayRef, Int32Array};
        let arrays: Vec<(String, ArrayRef)> =
            (0..columns).map(|i| (format!("c{i}"), Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef)).collect();
        let batch = arrow::record_batch::RecordBatch::try_from_iter(arrays).unwrap();
        let mut bytes = Vec::new();
        let mut writer = parquet::arrow::ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let length = u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap()) as usize;
        bytes[bytes.len() - 8 - length..bytes.len() - 8].to_vec()
    }

    #[test]
    fn a_footer_ending_with_its_column_orders_declares_no_encryption() {
        for columns in [1, 14, 15, 200] {
            let footer = footer_of(columns);
            assert!(ends_with_column_orders(&footer, columns), "{columns} columns");
            assert!(!ends_with_column_orders(&footer, columns + 1), "{columns} columns");
            assert!(!footer_declares_encryption(&footer));
            // Field 8 (an encryption algorithm: a union, here of an empty struct) after the
            // orders: the ending no longer matches, and the walk finds it.
            let mut encrypted = footer[..footer.len() - 1].to_vec();
            encrypted.extend([0x1c, 0x1c, 0x00, 0x00, 0x00]);
            assert!(!ends_with_column_orders(&encrypted, columns));
            assert!(footer_declares_encryption(&encrypted));
        }
        assert!(!ends_with_column_orders(&[], 0) && !ends_with_column_orders(&[0x00], 3));
    }
}
