//! A wide footer decoded in parts, one per core: the row groups of a serialized
//! `FileMetaData` cut into contiguous runs, each run decoded by the crate as a footer of its
//! own on its own thread, and the runs joined back in order.
//!
//! The crate decodes a footer on one thread, and for a wide table that is most of a cold
//! query: a file of 2,000 columns in 20 row groups has 40,000 column chunks and a ~5 MB
//! footer. Its row groups do not depend on one another, nor on the fields after them (the
//! key-value metadata, `created_by`, the column orders), only on the schema before them. So
//! the footer's bytes are walked (without decoding: [`ThriftWalker`]) to the row groups'
//! boundaries, each part is given the fields before the row groups, its own run of row
//! groups and an end, and the schema decoded once is shared by every part
//! ([`ParquetMetaDataOptions::with_schema`]).
//!
//! ```text
//! footer:  [version, schema, num_rows] [row groups 0..n as list(n)] [kv, created_by, column orders] stop
//! part 0:  [version, schema, num_rows] [row groups 0..a as list(a)] stop
//! part 1:  [version, schema, num_rows] [row groups a..n as list(n - a)] [kv, created_by, column orders] stop
//! ```
//!
//! Any part the walker cannot cut, or the crate cannot decode, gives `None`, and the caller
//! decodes the footer whole, as before (with the crate's own error for a corrupt one).

use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataOptions, ParquetMetaDataReader, RowGroupMetaData};

use crate::format::thrift_walk::{ThriftWalker, push_list_header};

/// Footers shorter than this are decoded whole: a part must be worth a thread, its share of
/// the decoding more than the walk to its start, the thread and the join (timed on the
/// scaling benchmark's footers: see the benchmarks page).
pub const MIN_PART_BYTES: usize = 2 << 20;

/// At most this many parts, however many cores there are.
const MAX_PARTS: usize = 8;

/// How many parts a footer of `footer_bytes` is decoded in on up to `threads` threads (a
/// read's `threads`: 1 in a Spark task, whose core is its own): one per [`MIN_PART_BYTES`],
/// at most one per thread and [`MAX_PARTS`].
///
/// ```
/// use pqsift::format::footer_parts::{parts_for, MIN_PART_BYTES};
/// assert_eq!(parts_for(5 * MIN_PART_BYTES, 2), 2);
/// assert_eq!(parts_for(5 * MIN_PART_BYTES, 1), 1);
/// assert_eq!(parts_for(2 * MIN_PART_BYTES - 1, 4), 1);
/// assert_eq!(parts_for(64 * MIN_PART_BYTES, 64), 8);
/// ```
pub fn parts_for(footer_bytes: usize, threads: usize) -> usize {
    (footer_bytes / MIN_PART_BYTES).min(threads).clamp(1, MAX_PARTS)
}

/// `footer` (a serialized `FileMetaData`) decoded in `parts` parts on as many threads, the
/// calling thread decoding the last; the same metadata as the crate's decoding of the whole
/// footer. `None` when the footer has fewer row groups than parts, cannot be walked, or a
/// part does not decode: decode it whole then.
///
/// ```
/// # use std::sync::Arc;
/// # use arrow::array::{Int64Array, RecordBatch};
/// # use parquet::arrow::ArrowWriter;
/// # use parquet::file::properties::WriterProperties;
/// use parquet::file::metadata::ParquetMetaDataReader;
/// use pqsift::format::footer_parts::decode_in_parts;
/// # let batch = RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from_iter_values(0..100)) as _)]).unwrap();
/// # let properties = WriterProperties::builder().set_max_row_group_row_count(Some(10)).build();
/// # let mut file = Vec::new();
/// # let mut writer = ArrowWriter::try_new(&mut file, batch.schema(), Some(properties)).unwrap();
/// # writer.write(&batch).unwrap();
/// # writer.close().unwrap();
/// # let length = u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap()) as usize;
/// # let footer = &file[file.len() - 8 - length..file.len() - 8];
/// // `footer`: the serialized FileMetaData of a file of 10 row groups.
/// let whole = ParquetMetaDataReader::decode_metadata(footer).unwrap();
/// let parts = decode_in_parts(footer, 3).unwrap();
/// assert_eq!(parts.row_groups(), whole.row_groups());
/// assert_eq!(parts.file_metadata(), whole.file_metadata());
/// ```
pub fn decode_in_parts(footer: &[u8], parts: usize) -> Option<ParquetMetaData> {
    const LIST: u8 = 9;
    const STRUCT: u8 = 12;
    if parts < 2 {
        return None;
    }
    let mut walker = ThriftWalker::new(footer);
    let mut last_id = 0i16;
    // The fields before the row groups, up to and including field 4's header.
    let head_end = loop {
        let (field_type, id) = walker.field_header(last_id)?;
        if id == 4 {
            if field_type != LIST {
                return None;
            }
            break walker.position();
        }
        walker.skip(field_type, 0)?;
        last_id = id;
    };
    let (element_type, row_groups) = walker.list_header()?;
    let row_groups = usize::try_from(row_groups).ok()?;
    if element_type != STRUCT || row_groups < parts || row_groups > walker.remaining() {
        return None;
    }
    let schema = ParquetMetaDataReader::decode_schema(footer).ok()?;
    let options = ParquetMetaDataOptions::new().with_schema(schema);
    let decode = |bytes: Vec<u8>| ParquetMetaDataReader::decode_metadata_with_options(&bytes, Some(&options)).ok();
    let part_of = |start: usize, end: usize, count: usize, closed: bool| {
        let mut bytes = Vec::with_capacity(head_end + 11 + (end - start) + 1);
        bytes.extend_from_slice(&footer[..head_end]);
        push_list_header(&mut bytes, STRUCT, count);
        bytes.extend_from_slice(&footer[start..end]);
        if closed {
            bytes.push(0); // the struct's stop: no fields after the row groups
        }
        bytes
    };

    std::thread::scope(|scope| {
        // Cut where the bytes (not the row groups, whose sizes vary) are shared evenly,
        // each part's thread started as soon as its end is found.
        let first = walker.position();
        let span = footer.len() - first;
        let mut handles = Vec::with_capacity(parts - 1);
        // Whether each part's first row group writes its ordinal (see `joined`).
        let mut first_written = Vec::with_capacity(parts);
        let (mut start, mut walked) = (first, 0usize);
        for part in 1..parts {
            let target = first + span / parts * part;
            let mut count = 0;
            while walker.position() < target && walked < row_groups - (parts - part) {
                walker.skip(STRUCT, 1)?;
                walked += 1;
                count += 1;
            }
            if count == 0 {
                continue;
            }
            let bytes = part_of(start, walker.position(), count, true);
            handles.push(std::thread::Builder::new().spawn_scoped(scope, move || decode(bytes)).ok()?);
            first_written.push(writes_ordinal(&footer[start..])?);
            start = walker.position();
        }
        // The last part: the remaining row groups and every field after them, as written.
        first_written.push(writes_ordinal(&footer[start..])?);
        let last = decode(part_of(start, footer.len(), row_groups - walked, false));
        let mut runs = Vec::with_capacity(parts);
        for handle in handles {
            runs.push(handle.join().ok()??.into_builder().take_row_groups());
        }
        let mut builder = last?.into_builder();
        runs.push(builder.take_row_groups());
        let joined = joined(runs, &first_written)?;
        (joined.len() == row_groups).then(|| builder.set_row_groups(joined).build())
    })
}

/// The parts' row groups in order, numbered as the crate numbers a footer's row groups
/// decoded whole: by their position when no row group writes an ordinal, else as written
/// (`None` where one writes none). Decoded alone, a part whose row groups write none was
/// numbered from 0 by the crate: such a part's ordinals are its positions, 0.., and its
/// first row group writes no ordinal (`first_written`, one a part), where a part whose
/// first row group writes one keeps what its row groups write. So: every part numbered by
/// the crate, the row groups are numbered by their position in the whole footer; none,
/// they are kept; some (a footer whose row groups write ordinals in some parts only, which
/// the crate leaves `None` elsewhere), `None`: decode it whole.
fn joined(runs: Vec<Vec<RowGroupMetaData>>, first_written: &[bool]) -> Option<Vec<RowGroupMetaData>> {
    let numbered_by_the_crate: Vec<bool> = runs
        .iter()
        .zip(first_written)
        .map(|(run, &written)| {
            !written && run.iter().enumerate().all(|(i, row_group)| row_group.ordinal() == i32::try_from(i).ok())
        })
        .collect();
    let row_groups = runs.into_iter().flatten();
    if numbered_by_the_crate.iter().all(|&numbered| !numbered) {
        return Some(row_groups.collect());
    }
    if numbered_by_the_crate.iter().any(|&numbered| !numbered) {
        return None;
    }
    row_groups
        .enumerate()
        .map(|(position, row_group)| row_group.into_builder().set_ordinal(i32::try_from(position).ok()?).build().ok())
        .collect()
}

/// Whether the row group at the start of `bytes` (a serialized `RowGroup`) writes its
/// ordinal (field 7); `None` if its fields cannot be walked.
fn writes_ordinal(bytes: &[u8]) -> Option<bool> {
    const ORDINAL: i16 = 7;
    let mut walker = ThriftWalker::new(bytes);
    let mut last_id = 0;
    // The walker gives no header at the struct's stop (or at bytes it cannot read, which
    // the part's decoding then refuses).
    while let Some((field_type, id)) = walker.field_header(last_id) {
        if id == ORDINAL {
            return Some(true);
        }
        walker.skip(field_type, 1)?;
        last_id = id;
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::ParquetMetaDataWriter;
    use parquet::file::properties::WriterProperties;
    use proptest::prelude::*;

    use super::*;
    use crate::format::test_corpus;

    /// The footer of a file of `row_groups` row groups of 10 rows, three columns with
    /// statistics (one of them text of varying length, so row groups differ in bytes).
    fn written_footer(row_groups: usize) -> Vec<u8> {
        let rows = row_groups as i64 * 10;
        let columns: [(&str, ArrayRef); 3] = [
            ("id", Arc::new(Int64Array::from_iter_values(0..rows))),
            ("amount", Arc::new(Float64Array::from_iter_values((0..rows).map(|i| i as f64 / 3.0)))),
            ("text", Arc::new(StringArray::from_iter_values((0..rows).map(|i| "x".repeat((i % 37) as usize))))),
        ];
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let properties = WriterProperties::builder().set_max_row_group_row_count(Some(10)).build();
        let mut file = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut file, batch.schema(), Some(properties)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        test_corpus::footer(&file).unwrap().to_vec()
    }

    /// The metadata as text: statistics holding NaN are not equal to themselves.
    fn shown(metadata: &ParquetMetaData) -> String {
        format!("{:?} {:?}", metadata.file_metadata(), metadata.row_groups())
    }

    /// Whether `footer` decodes in `parts` parts; when it does, the crate decodes it whole
    /// too, to the same metadata.
    fn decodes_the_same(footer: &[u8], parts: usize) -> bool {
        let Some(cut) = decode_in_parts(footer, parts) else { return false };
        let whole = ParquetMetaDataReader::decode_metadata(footer).expect("decoded in parts but not whole");
        assert_eq!(shown(&cut), shown(&whole));
        true
    }

    #[test]
    fn every_cut_decodes_as_the_whole() {
        for row_groups in [2, 3, 7, 16, 40] {
            let footer = written_footer(row_groups);
            assert!(decode_in_parts(&footer, 1).is_none());
            for parts in 2..=row_groups.min(MAX_PARTS) {
                assert!(decodes_the_same(&footer, parts), "{row_groups} row groups in {parts} parts");
            }
            // More parts than row groups: decoded whole.
            assert!(decode_in_parts(&footer, row_groups + 1).is_none());
        }
    }

    /// A footer that writes no ordinals: the crate numbers row groups by position, and the
    /// parts' numbering is made the same.
    #[test]
    fn row_groups_without_ordinals_are_numbered_by_position() {
        let written = ParquetMetaDataReader::decode_metadata(&written_footer(9)).unwrap();
        let schema = written.file_metadata().schema_descr_ptr();
        let row_groups = written.row_groups().iter().map(|row_group| {
            RowGroupMetaData::builder(schema.clone())
                .set_num_rows(row_group.num_rows())
                .set_total_byte_size(row_group.total_byte_size())
                .set_column_metadata(row_group.columns().to_vec())
                .build()
                .unwrap()
        });
        let unnumbered = written.clone().into_builder().set_row_groups(row_groups.collect()).build();
        let mut file = Vec::new();
        ParquetMetaDataWriter::new(&mut file, &unnumbered).finish().unwrap();
        let footer = test_corpus::footer(&file).unwrap();
        for parts in 2..=4 {
            assert!(decodes_the_same(footer, parts));
            let cut = decode_in_parts(footer, parts).unwrap();
            let ordinals: Vec<_> = cut.row_groups().iter().map(RowGroupMetaData::ordinal).collect();
            assert_eq!(ordinals, (0..9).map(Some).collect::<Vec<_>>());
        }
    }

    /// A footer whose first row groups write their ordinals and the others none (a damaged
    /// footer can be so): the crate keeps those written and leaves the others `None`. A
    /// part of the others alone was numbered from 0 by the crate; in parts such a footer
    /// decodes to the same, or not at all (it is then decoded whole).
    #[test]
    fn row_groups_with_ordinals_in_some_parts_decode_as_the_whole() {
        let written = ParquetMetaDataReader::decode_metadata(&written_footer(6)).unwrap();
        let schema = written.file_metadata().schema_descr_ptr();
        let row_groups = written.row_groups().iter().enumerate().map(|(i, row_group)| {
            let builder = RowGroupMetaData::builder(schema.clone())
                .set_num_rows(row_group.num_rows())
                .set_total_byte_size(row_group.total_byte_size())
                .set_column_metadata(row_group.columns().to_vec());
            let builder = if i < 3 { builder.set_ordinal(i as i32) } else { builder };
            builder.build().unwrap()
        });
        let partly = written.clone().into_builder().set_row_groups(row_groups.collect()).build();
        let mut file = Vec::new();
        ParquetMetaDataWriter::new(&mut file, &partly).finish().unwrap();
        let footer = test_corpus::footer(&file).unwrap();
        let whole = ParquetMetaDataReader::decode_metadata(footer).unwrap();
        let ordinals: Vec<_> = whole.row_groups().iter().map(RowGroupMetaData::ordinal).collect();
        assert_eq!(ordinals, [Some(0), Some(1), Some(2), None, None, None]);
        for parts in 2..=4 {
            if let Some(cut) = decode_in_parts(footer, parts) {
                assert_eq!(shown(&cut), shown(&whole), "in {parts} parts");
            }
        }
        // Cut after the third, the two parts number differently: decoded whole.
        assert!(decode_in_parts(footer, 2).is_none());
    }

    /// Every footer of the corpus that has row groups enough decodes in parts as it does
    /// whole; the damaged ones (bad_data/) give `None` or the same metadata.
    #[test]
    fn corpus_footers_decode_as_the_whole() {
        let mut compared = 0;
        for path in test_corpus::files() {
            let bytes = std::fs::read(&path).unwrap();
            let Some(footer) = test_corpus::footer(&bytes) else { continue };
            let whole = ParquetMetaDataReader::decode_metadata(footer);
            for parts in [2, 3] {
                let cut = decode_in_parts(footer, parts);
                if whole.as_ref().is_ok_and(|whole| whole.num_row_groups() >= parts) {
                    assert!(cut.is_some(), "{} in {parts} parts", path.display());
                }
                if let Some(cut) = cut {
                    let whole = whole.as_ref().unwrap_or_else(|e| panic!("{}: only in parts ({e})", path.display()));
                    assert!(shown(&cut) == shown(whole), "{}", path.display());
                    compared += 1;
                }
            }
        }
        assert!(compared >= 10, "{compared} footers compared");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Damaged footers (bytes overwritten, or cut short) never panic, allocate what
        /// they claim or loop; what decodes in parts decodes whole, to the same metadata.
        #[test]
        fn damaged_footers_decode_the_same_or_not_at_all(
            row_groups in 2usize..12,
            parts in 2usize..5,
            damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
            cut in proptest::option::of(any::<prop::sample::Index>()),
        ) {
            let mut footer = written_footer(row_groups);
            for (at, byte) in damage {
                let at = at.index(footer.len());
                footer[at] = byte;
            }
            if let Some(cut) = cut {
                footer.truncate(cut.index(footer.len()));
            }
            if let Some(cut) = decode_in_parts(&footer, parts) {
                let whole = ParquetMetaDataReader::decode_metadata(&footer);
                prop_assert!(whole.is_ok(), "decoded in parts, not whole: {:?}", whole.err());
                prop_assert!(shown(&cut) == shown(&whole.unwrap()));
            }
        }
    }
}
