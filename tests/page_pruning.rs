//! RowSelection end to end on real Parquet files: page locations from the offset index,
//! `scan_ranges`, and the bitmask hazard — a mask must never make the
//! decoder read a page that page pruning removed.
//!
//! The files are read through a `ChunkReader` that refuses to hand out any byte of a
//! pruned page, the way a sparse fetch (only the scan ranges) would behave.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayRef, BooleanArray, Int32Array, RecordBatch, StringArray};
use arrow::compute::{concat, filter};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection as CrateSelection,
    RowSelectionPolicy, RowSelector as CrateSelector,
};
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::{ChunkReader, Length};
use pqsift::selection::{PageLocation, ReadPlan, ReadSegment, RowSelection, SelectionPolicy};

/// In-memory file bytes that record every read and refuse reads touching `forbidden`.
#[derive(Clone)]
struct GuardedReader {
    bytes: Bytes,
    forbidden: Vec<Range<u64>>,
    reads: Arc<Mutex<Vec<Range<u64>>>>,
}

impl GuardedReader {
    fn check(&self, range: Range<u64>) -> parquet::errors::Result<()> {
        if let Some(bad) = self.forbidden.iter().find(|f| f.start < range.end && range.start < f.end) {
            return Err(parquet::errors::ParquetError::General(format!(
                "read of {range:?} touches the pruned page {bad:?}"
            )));
        }
        self.reads.lock().unwrap().push(range);
        Ok(())
    }
}

impl Length for GuardedReader {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
}

impl ChunkReader for GuardedReader {
    type T = <Bytes as ChunkReader>::T;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        self.check(start..start + 1)?;
        self.bytes.get_read(start)
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.check(start..start + length as u64)?;
        self.bytes.get_bytes(start, length)
    }
}

const ROWS: usize = 3_000;
const PAGE_ROWS: usize = 100;

/// One row group: `id` int32 = row number, `tag` a dictionary-encoded string; pages of 100
/// rows with an offset index.
fn sample_file() -> Bytes {
    let ids = Int32Array::from_iter_values(0..ROWS as i32);
    let tags = StringArray::from_iter_values((0..ROWS).map(|i| format!("tag-{}", i % 7)));
    let batch =
        RecordBatch::try_from_iter([("id", Arc::new(ids) as ArrayRef), ("tag", Arc::new(tags) as ArrayRef)]).unwrap();
    let props = WriterProperties::builder()
        .set_data_page_row_count_limit(PAGE_ROWS)
        .set_write_batch_size(PAGE_ROWS)
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    Bytes::from(out)
}

fn metadata(bytes: &Bytes) -> ArrowReaderMetadata {
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
    ArrowReaderMetadata::load(bytes, options).unwrap()
}

fn pages(meta: &ArrowReaderMetadata, column: usize) -> Vec<PageLocation> {
    pqsift::format::metadata::page_locations(meta.metadata(), 0, column).expect("the file has an offset index")
}

/// Every third row of pages 0..10 and 20..30; nothing on pages 10..20. Average run length
/// is about 2, so the Auto policy wants a mask.
fn fragmented_selection() -> RowSelection {
    let rows: Vec<bool> = (0..ROWS).map(|i| i % 3 == 0 && !(1000..2000).contains(&i)).collect();
    RowSelection::from_bools(&rows)
}

fn to_crate_selection(selection: &RowSelection) -> CrateSelection {
    selection
        .iter_runs()
        .map(|r| if r.skip { CrateSelector::skip(r.row_count) } else { CrateSelector::select(r.row_count) })
        .collect::<Vec<_>>()
        .into()
}

/// Reads `column` with `decoder` selection through the guarded reader, then applies the
/// optional post filter — how the pqsift reader materialises a mask.
fn read_column(
    reader: GuardedReader,
    meta: &ArrowReaderMetadata,
    column: usize,
    decoder: &RowSelection,
    post_filter: Option<BooleanArray>,
) -> parquet::errors::Result<ArrayRef> {
    let projection = ProjectionMask::leaves(meta.metadata().file_metadata().schema_descr(), [column]);
    let batches = ParquetRecordBatchReaderBuilder::new_with_metadata(reader, meta.clone())
        .with_projection(projection)
        .with_row_selection(to_crate_selection(decoder))
        .with_row_selection_policy(RowSelectionPolicy::Selectors)
        .with_batch_size(256)
        .build()?
        .collect::<Result<Vec<_>, _>>()?;
    let arrays: Vec<ArrayRef> = batches.iter().map(|b| b.column(0).clone()).collect();
    let refs: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
    let decoded = concat(&refs)?;
    Ok(match post_filter {
        Some(mask) => filter(&decoded, &mask)?,
        None => decoded,
    })
}

fn pruned_page_ranges(selection: &RowSelection, pages: &[PageLocation]) -> Vec<Range<u64>> {
    let kept = selection.selected_pages(pages).unwrap();
    pages.iter().zip(kept).filter(|(_, k)| !k).map(|(p, _)| p.offset..p.offset + p.compressed_size).collect()
}

#[test]
fn masked_read_plan_never_touches_pruned_pages() {
    let bytes = sample_file();
    let meta = metadata(&bytes);
    let selection = fragmented_selection();
    assert_eq!(SelectionPolicy::default().choose(&selection), pqsift::selection::Representation::Mask);

    for (column, name) in [(0, "id"), (1, "tag")] {
        let pages = pages(&meta, column);
        assert_eq!(pages.len(), ROWS / PAGE_ROWS, "{name}: one page per 100 rows");
        let first_rows: Vec<usize> = pages.iter().map(|p| p.first_row_index as usize).collect();
        let plan = ReadPlan::new(&selection, SelectionPolicy::default(), Some(&first_rows)).unwrap();
        assert_eq!(plan.page_counts(), (30, 10), "{name}: pages 10..20 hold no selected row");
        assert!(plan.uses_mask(), "{name}: the surviving stretches are fragmented enough for masks");
        assert!(plan.segments().contains(&ReadSegment::SkipPages(1000)));

        let forbidden = pruned_page_ranges(&selection, &pages);
        let reader = GuardedReader { bytes: bytes.clone(), forbidden, reads: Default::default() };
        let post_filter = plan.post_filter().map(|m| BooleanArray::new(m, None));
        let values = read_column(reader.clone(), &meta, column, &plan.decoder_selection(), post_filter).unwrap();

        // The values are exactly the selected rows.
        let expected: Vec<usize> = selection.selected_ranges().into_iter().flatten().collect();
        assert_eq!(values.len(), expected.len(), "{name}");
        if column == 0 {
            let ids = values.as_any().downcast_ref::<Int32Array>().unwrap();
            assert!(ids.values().iter().zip(&expected).all(|(v, e)| *v as usize == *e));
        } else {
            let tags = values.as_any().downcast_ref::<StringArray>().unwrap();
            assert!(tags.iter().zip(&expected).all(|(v, e)| v == Some(format!("tag-{}", e % 7).as_str())));
        }

        // The data pages read are exactly the scan ranges.
        let scan = selection.scan_ranges(&pages).unwrap();
        let reads = reader.reads.lock().unwrap().clone();
        let data_reads: Vec<Range<u64>> =
            reads.iter().filter(|r| pages.iter().any(|p| p.offset == r.start)).cloned().collect();
        assert_eq!(data_reads, scan, "{name}");
    }
}

/// The guard is real: decoding through one mask over the whole row group (what a
/// page-unaware policy does) asks for the pruned pages and fails.
#[test]
fn whole_row_group_mask_hits_the_pruned_pages() {
    let bytes = sample_file();
    let meta = metadata(&bytes);
    let selection = fragmented_selection();
    let pages = pages(&meta, 0);
    let forbidden = pruned_page_ranges(&selection, &pages);
    let reader = GuardedReader { bytes: bytes.clone(), forbidden, reads: Default::default() };
    let unaware = ReadPlan::new(&selection, SelectionPolicy::Mask, None).unwrap();
    let post_filter = unaware.post_filter().map(|m| BooleanArray::new(m, None));
    let error = read_column(reader, &meta, 0, &unaware.decoder_selection(), post_filter).unwrap_err();
    assert!(error.to_string().contains("pruned page"), "{error}");
}

/// The dictionary page is part of the scan ranges as soon as a data page is read, and
/// coalescing merges neighbouring pages.
#[test]
fn scan_ranges_with_dictionary_and_coalescing_on_a_real_column() {
    let bytes = sample_file();
    let meta = metadata(&bytes);
    let pages = pages(&meta, 1);
    let chunk = meta.metadata().row_group(0).column(1);
    let dictionary_start = chunk.dictionary_page_offset().expect("tag is dictionary encoded") as u64;
    let dictionary = dictionary_start..pages[0].offset;

    let selection = fragmented_selection();
    let ranges = selection.scan_ranges_with(&pages, Some(dictionary.clone()), None).unwrap();
    assert_eq!(ranges[0], dictionary);
    assert_eq!(ranges.len(), 1 + 20);
    // Pages are contiguous in the file: with any gap they coalesce to two reads, one each
    // side of the pruned stretch.
    let coalesced = selection.scan_ranges_with(&pages, Some(dictionary.clone()), Some(0)).unwrap();
    assert_eq!(coalesced.len(), 2);
    assert_eq!(coalesced[0].start, dictionary.start);
    assert_eq!(coalesced[1].end, pages[29].offset + pages[29].compressed_size);

    let nothing = RowSelection::skip_all(ROWS);
    assert!(nothing.scan_ranges_with(&pages, Some(dictionary), None).unwrap().is_empty());
}

/// The shared corpus file with tiny pages: page locations from a file written by another
/// implementation, and a read through the plan that matches a plain full read.
#[test]
fn corpus_tiny_pages_read_plan_matches_full_read() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/parquet-testing/data/alltypes_tiny_pages.parquet");
    let Ok(raw) = std::fs::read(&path) else {
        panic!("missing corpus file {}", path.display());
    };
    let bytes = Bytes::from(raw);
    let meta = metadata(&bytes);
    let schema = meta.metadata().file_metadata().schema_descr();
    let column = (0..schema.num_columns()).find(|&i| schema.column(i).name() == "int_col").unwrap();
    let rows = meta.metadata().row_group(0).num_rows() as usize;
    let pages = pages(&meta, column);
    assert!(pages.len() > 10);
    let first_rows: Vec<usize> = pages.iter().map(|p| p.first_row_index as usize).collect();

    // Every other row on pages 2..4 and 7.., nothing elsewhere.
    let selected = |i: usize| {
        let page = first_rows.partition_point(|&f| f <= i) - 1;
        i.is_multiple_of(2) && ((2..4).contains(&page) || page >= 7)
    };
    let selection = RowSelection::from_bools(&(0..rows).map(selected).collect::<Vec<_>>());
    let plan = ReadPlan::new(&selection, SelectionPolicy::default(), Some(&first_rows)).unwrap();
    let forbidden = pruned_page_ranges(&selection, &pages);
    assert!(!forbidden.is_empty());
    let reader = GuardedReader { bytes: bytes.clone(), forbidden, reads: Default::default() };
    let post_filter = plan.post_filter().map(|m| BooleanArray::new(m, None));
    let planned = read_column(reader, &meta, column, &plan.decoder_selection(), post_filter).unwrap();

    let everything = read_column(
        GuardedReader { bytes, forbidden: vec![], reads: Default::default() },
        &meta,
        column,
        &RowSelection::select_all(rows),
        None,
    )
    .unwrap();
    let mask = BooleanArray::new(selection.to_mask(), None);
    assert_eq!(planned.as_ref(), filter(&everything, &mask).unwrap().as_ref());
}
