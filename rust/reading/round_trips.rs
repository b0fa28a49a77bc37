//! From an object store: whether a row group's projection is fetched in the round trip that
//! fetches its predicate columns, or in a second one, for the rows that pass.
//!
//! Late materialization decodes the projection for the rows that pass only. From a store
//! that costs a round trip: the predicate columns' pages are fetched, the filter runs, and
//! then the projection's pages holding a survivor are fetched. When nearly every page holds
//! one — a filter keeping a row in a few thousand, over pages of tens of thousands of rows —
//! the second round trip buys nothing: it fetches the same bytes one latency later.
//!
//! So, before fetching, the pages the projection would read under the row group's
//! selection are weighed. A page of `n` selected rows is needed unless all `n` fail the
//! filter: with each row passing with probability `p`, it is needed with probability
//! `1 - (1 - p)^n`. Fetching them all with the predicate columns wastes the bytes expected
//! not needed; the projection is fetched at once when that waste is at most the bytes
//! a request is worth (the scan's `coalesce_gap`) or at most the bytes expected needed
//! (at worst twice the bytes, for one latency fewer). `p` is the share of rows the scan's
//! filter has kept so far (see [`PassRate`](crate::reading::row_filter::PassRate)),
//! [`UNOBSERVED_PASS_RATE`] before any row group has been filtered.
//!
//! ```
//! use pqsift::reading::round_trips::{PageLoad, fetch_with_predicates};
//! // Ten text pages of 20,000 rows, 1 MiB each; the predicate columns left 20,000 rows each.
//! let pages = vec![PageLoad { bytes: 1 << 20, selected_rows: 20_000 }; 10];
//! // A filter keeping one row in 2,000 leaves a survivor in every page: one round trip.
//! assert!(fetch_with_predicates(&pages, 1.0 / 2_000.0, 1 << 20));
//! // One in ten million: nearly every page would be fetched for nothing — two.
//! assert!(!fetch_with_predicates(&pages, 1e-7, 1 << 20));
//! // Whatever the filter, a few small pages are worth less than a request: one.
//! let small = vec![PageLoad { bytes: 40_000, selected_rows: 1_000 }; 3];
//! assert!(fetch_with_predicates(&small, 1e-7, 1 << 20));
//! ```

use parquet::file::metadata::ParquetMetaData;

use crate::error::Result;
use crate::format::metadata::{dictionary_page_range, page_locations};
use crate::selection::RowSelection;

/// The share of rows a filter is taken to keep before the scan has filtered a row group:
/// one in a thousand, selective as filters pushed into a scan mostly are. A wrong guess
/// costs little either way — the first row groups' projection fetched whole (what a reader
/// without late materialization fetches), or a round trip more each — and lasts until the
/// first row group has been filtered: the rate it observed replaces the guess.
pub const UNOBSERVED_PASS_RATE: f64 = 1e-3;

/// A page (or, for a column without page index, its whole chunk) the projection may read:
/// its compressed bytes and how many of its rows the selection selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLoad {
    /// Compressed bytes, page header included.
    pub bytes: u64,
    /// Rows of the page the selection selects (more than 0).
    pub selected_rows: u64,
}

/// The compressed bytes of `pages` expected to hold a row that passes, each selected row
/// passing with probability `pass_rate`, independently of the others.
pub fn expected_needed(pages: &[PageLoad], pass_rate: f64) -> f64 {
    let kept = pass_rate.clamp(0.0, 1.0);
    pages
        .iter()
        .map(|page| {
            // 1 - (1 - p)^n, computed without cancellation for small p.
            let none_pass = (page.selected_rows as f64 * (-kept).ln_1p()).exp();
            page.bytes as f64 * (1.0 - none_pass)
        })
        .sum()
}

/// Whether `pages` are fetched with the predicate columns (one round trip) rather than after
/// the filter, those holding a survivor (two): when the bytes expected fetched for nothing
/// are at most `gap` or at most the bytes expected needed (see the module documentation).
pub fn fetch_with_predicates(pages: &[PageLoad], pass_rate: f64, gap: u64) -> bool {
    let total: u64 = pages.iter().map(|p| p.bytes).sum();
    if total <= gap {
        return true;
    }
    let needed = expected_needed(pages, pass_rate);
    let wasted = total as f64 - needed;
    wasted <= needed.max(gap as f64)
}

/// The pages of leaf column `leaf` of `row_group` that decoding `selection` reads, with the
/// rows selected in each (see [`PageLoad`]): with a page index, each page holding a selected
/// row, its dictionary page counted with all of them; without, the whole chunk.
pub fn page_loads(
    metadata: &ParquetMetaData,
    row_group: usize,
    leaf: usize,
    selection: &RowSelection,
) -> Result<Vec<PageLoad>> {
    let selected = selection.selected_count() as u64;
    if selected == 0 {
        return Ok(Vec::new());
    }
    let chunk = metadata.row_group(row_group).column(leaf);
    let Some(pages) = page_locations(metadata, row_group, leaf).filter(|pages| !pages.is_empty()) else {
        return Ok(vec![PageLoad {
            bytes: u64::try_from(chunk.compressed_size()).unwrap_or(0),
            selected_rows: selected,
        }]);
    };
    let mut loads = Vec::with_capacity(pages.len() + 1);
    if let Some(dictionary) = dictionary_page_range(metadata, row_group, leaf) {
        loads.push(PageLoad { bytes: dictionary.end - dictionary.start, selected_rows: selected });
    }
    let selected_rows = selection.selected_rows_by_page(&pages)?;
    loads.extend(
        pages
            .iter()
            .zip(selected_rows)
            .filter(|(_, rows)| *rows > 0)
            .map(|(page, rows)| PageLoad { bytes: page.compressed_size, selected_rows: rows as u64 }),
    );
    Ok(loads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn needed_bytes_follow_the_chance_a_page_holds_a_survivor() {
        let page = PageLoad { bytes: 1_000, selected_rows: 1 };
        assert_eq!(expected_needed(&[page], 0.0), 0.0);
        assert!((expected_needed(&[page], 1.0) - 1_000.0).abs() < 1e-9);
        assert!((expected_needed(&[page], 0.25) - 250.0).abs() < 1e-9);
        // Two rows at 50%: needed unless both fail, 75%.
        let two = PageLoad { bytes: 1_000, selected_rows: 2 };
        assert!((expected_needed(&[two], 0.5) - 750.0).abs() < 1e-9);
    }

    #[test]
    fn the_gap_decides_for_small_projections() {
        let pages = [PageLoad { bytes: 600, selected_rows: 10 }, PageLoad { bytes: 500, selected_rows: 10 }];
        assert!(fetch_with_predicates(&pages, 0.0, 1_100));
        assert!(!fetch_with_predicates(&pages, 0.0, 1_099));
    }

    proptest! {
        /// A filter that keeps more rows never makes a second round trip more attractive.
        #[test]
        fn more_survivors_never_favour_two_round_trips(
            pages in prop::collection::vec((1u64..10_000_000, 1u64..1_000_000), 0..20),
            low in 0.0f64..1.0,
            high in 0.0f64..1.0,
            gap in 0u64..4_000_000,
        ) {
            let pages: Vec<PageLoad> =
                pages.into_iter().map(|(bytes, selected_rows)| PageLoad { bytes, selected_rows }).collect();
            let (low, high) = if low <= high { (low, high) } else { (high, low) };
            let needed_low = expected_needed(&pages, low);
            let needed_high = expected_needed(&pages, high);
            let total: u64 = pages.iter().map(|p| p.bytes).sum();
            prop_assert!(needed_low <= needed_high + 1e-6 * total as f64);
            prop_assert!(needed_high <= total as f64 * (1.0 + 1e-12));
            if fetch_with_predicates(&pages, low, gap) {
                prop_assert!(fetch_with_predicates(&pages, high, gap));
            }
        }
    }

    /// Pages of one leaf: 4 pages of 250 rows, 100 bytes each, plus a dictionary.
    fn metadata_with_pages() -> ParquetMetaData {
        use arrow::array::{ArrayRef, Int64Array};
        use arrow::record_batch::RecordBatch;
        use parquet::arrow::ArrowWriter;
        use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
        use parquet::file::metadata::PageIndexPolicy;
        use parquet::file::properties::WriterProperties;
        use std::sync::Arc;
        let column: ArrayRef = Arc::new(Int64Array::from_iter_values((0..1_000).map(|i| i % 7)));
        let batch = RecordBatch::try_from_iter([("a", column)]).unwrap();
        let properties =
            WriterProperties::builder().set_data_page_row_count_limit(250).set_write_batch_size(250).build();
        let mut bytes = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(properties)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
        ArrowReaderMetadata::load(&bytes::Bytes::from(bytes), options).unwrap().metadata().as_ref().clone()
    }

    #[test]
    fn loads_count_the_selected_rows_of_each_page() {
        let metadata = metadata_with_pages();
        let pages = page_locations(&metadata, 0, 0).unwrap();
        assert_eq!(pages.len(), 4);
        // Rows 200..300 (50 in page 0, 50 in page 1) and 900..1000 (page 3).
        let selection = RowSelection::from_ranges(&[200..300, 900..1_000], 1_000).unwrap();
        let loads = page_loads(&metadata, 0, 0, &selection).unwrap();
        let dictionary = dictionary_page_range(&metadata, 0, 0).unwrap();
        assert_eq!(loads[0], PageLoad { bytes: dictionary.end - dictionary.start, selected_rows: 200 });
        let rows: Vec<u64> = loads[1..].iter().map(|l| l.selected_rows).collect();
        assert_eq!(rows, [50, 50, 100]);
        assert_eq!(loads[3].bytes, pages[3].compressed_size);
        assert!(page_loads(&metadata, 0, 0, &RowSelection::skip_all(1_000)).unwrap().is_empty());
    }
}
