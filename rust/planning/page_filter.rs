//! Page index pruning: the filter evaluated per data page of each surviving row group
//! (ColumnIndex bounds, OffsetIndex row ranges), giving a [`RowSelection`] per row group
//! (DataFusion's `PagePruningAccessPlanFilter`).
//!
//! Pages of different columns need not align, so the three-valued evaluation runs on rows
//! rather than pages: each leaf gives the rows of the pages where it can be true and the
//! rows where it can be false, as row selections; AND intersects / unites them, OR the
//! reverse, NOT swaps (see [`pruning_predicate`](crate::pruning::pruning_predicate)). A column
//! without a page index, or a leaf pruning cannot read, selects every row.
//!
//! ```
//! # let dir = std::env::temp_dir().join("pqsift_page_doc");
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("t.parquet");
//! # let batch = arrow::array::RecordBatch::try_from_iter([("x", std::sync::Arc::new(arrow::array::Int32Array::from((0..100).collect::<Vec<i32>>())) as _)]).unwrap();
//! # let props = parquet::file::properties::WriterProperties::builder()
//! #     .set_data_page_row_count_limit(10).set_write_batch_size(10).build();
//! # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
//! # w.write(&batch).unwrap(); w.close().unwrap();
//! use pqsift::planning::access_plan::{FileAccessPlan, RowGroupAccess};
//! use pqsift::filter::{bind, parse_filter, BindOptions};
//! use pqsift::planning::metrics::PruningMetrics;
//! use pqsift::format::opener::OpenedFile;
//! use pqsift::planning::page_filter::prune_by_page_index;
//!
//! let file = OpenedFile::open(&path.into()).unwrap(); // x = 0..100 in pages of 10 rows
//! let filter = bind(&parse_filter("x >= 85").unwrap(), &file.schema, &BindOptions::default()).unwrap();
//! let mut plan = FileAccessPlan::scan_all(file.name(), &file.row_group_rows());
//! let mut metrics = PruningMetrics::default();
//! prune_by_page_index(&file, &filter, &mut plan, &mut metrics).unwrap();
//! let RowGroupAccess::Selection(selection) = &plan.row_groups[0].access else { panic!() };
//! assert_eq!(selection.selected_count(), 20); // pages [80, 90) and [90, 100)
//! assert_eq!((metrics.pages_total, metrics.pages_pruned), (10, 8));
//! ```

use std::ops::Range;

use parquet::file::metadata::page_index::PageIndexProvider;

use crate::error::{PqsiftError, Result};
use crate::filter::BoundExpr;
use crate::format::header_page_index::{HeaderPageIndex, page_index_from_headers};
use crate::format::opener::{OpenedFile, in_type};
use crate::planning::access_plan::{FileAccessPlan, RowGroupAccess};
use crate::planning::metrics::PruningMetrics;
use crate::pruning::pruning_predicate::{LeafPredicate, Possible, evaluate_tree};
use crate::pruning::zone_map::ZoneMaps;
use crate::selection::RowSelection;
use crate::storage::{FileSource, Location};

/// Narrows every surviving row group to the rows of pages where the filter can be true.
pub fn prune_by_page_index(
    file: &OpenedFile,
    filter: &BoundExpr,
    plan: &mut FileAccessPlan,
    metrics: &mut PruningMetrics,
) -> Result<()> {
    // The stage is the page index's either way; its reasons say where the bounds came from.
    let Some(bounds) = PageBounds::of(file, || filter_chunks(file, filter, plan))? else {
        for index in plan.surviving().collect::<Vec<_>>() {
            plan.note(index, vec!["page index: the file has none".to_string()]);
        }
        return Ok(());
    };
    let (page_index, from_file) = (bounds.index(), matches!(bounds, PageBounds::File(_)));
    let source = if from_file { "page index" } else { "page headers" };
    for index in plan.surviving().collect::<Vec<_>>() {
        let rows = plan.row_groups[index].rows;
        let mut page_ranges: Vec<(usize, Vec<Range<usize>>)> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        // Rows of pages where a filter column may hold nulls (the filter may be NULL there,
        // neither true nor false), and whether a column's nulls are not known at all.
        let mut nullable = RowSelection::skip_all(rows);
        let mut nulls_unknown = false;
        let possible = evaluate_tree::<RowSelection>(filter, &mut |leaf: &BoundExpr| {
            let leaf = LeafPredicate::analyse(leaf);
            let whole = |flag: bool| {
                if flag { RowSelection::select_all(rows) } else { RowSelection::skip_all(rows) }
            };
            let zones = match leaf.column().and_then(|column| file.leaf(column).map(|found| (column, found))) {
                Some((column, (leaf_index, field))) => {
                    match ZoneMaps::for_pages_in(&file.metadata, page_index, index, leaf_index, &field) {
                        Ok(Some(zones)) => in_type(zones, &column.data_type).map(|zones| (leaf_index, zones)),
                        Ok(None) => None,
                        Err(e) => return Err(PqsiftError::corrupt(&file.location, e)),
                    }
                }
                None => None,
            };
            let Some((leaf_index, zones)) = zones else {
                nulls_unknown |= leaf.column().is_some();
                if let Some(column) = leaf.column() {
                    let name = column.path.parts().join(".");
                    let note = match from_file {
                        true => format!("page index: none for {name}"),
                        false => format!("page index: the file has none, nor statistics in the page headers of {name}"),
                    };
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                }
                let single = leaf.evaluate(None, 1);
                return Ok(Possible { can_true: whole(single.can_true[0]), can_false: whole(single.can_false[0]) });
            };
            let ranges = page_row_ranges(&zones, rows)?;
            let with_nulls: Vec<Range<usize>> = ranges
                .iter()
                .zip(zones.null_counts.iter())
                .filter(|(_, nulls)| nulls.is_none_or(|n| n > 0))
                .map(|(range, _)| range.clone())
                .collect();
            if !with_nulls.is_empty() {
                nullable = nullable.union(&RowSelection::from_ranges(&with_nulls, rows)?)?;
            }
            let per_page = leaf.evaluate(Some(&zones), zones.len());
            let pick = |flags: &[bool]| -> Result<RowSelection> {
                let chosen: Vec<Range<usize>> =
                    ranges.iter().zip(flags).filter(|(_, f)| **f).map(|(r, _)| r.clone()).collect();
                RowSelection::from_ranges(&chosen, rows)
            };
            let result = Possible { can_true: pick(&per_page.can_true)?, can_false: pick(&per_page.can_false)? };
            if !page_ranges.iter().any(|(l, _)| *l == leaf_index) {
                page_ranges.push((leaf_index, ranges));
            }
            Ok(result)
        })
        .map_err(|e| match e {
            PqsiftError::InvalidSelection(reason) => {
                PqsiftError::corrupt(&file.location, format!("inconsistent offset index: {reason}"))
            }
            other => other,
        })?;
        plan.note(index, notes);
        if page_ranges.is_empty() {
            continue;
        }
        let certain = match nulls_unknown {
            true => 0,
            false => certainly_true(&possible, &nullable).map_err(|e| PqsiftError::corrupt(&file.location, e))?,
        };
        plan.row_groups[index].certain_rows = certain;
        let selection = possible.can_true;
        let (mut pages, mut kept) = (0usize, 0usize);
        for (_, ranges) in &page_ranges {
            for range in ranges {
                pages += 1;
                if selection.slice(range.start, range.end - range.start)?.selects_any() {
                    kept += 1;
                }
            }
        }
        metrics.pages_total += pages as u64;
        metrics.pages_pruned += (pages - kept) as u64;
        let selected = selection.selected_count();
        metrics.page_index_rows_pruned += (rows - selected) as u64;
        let reason = format!("{kept} of {pages} pages kept ({source}), {selected} of {rows} rows");
        if selected == 0 {
            plan.skip(index, "page index", format!("no page can match: {reason}"));
            metrics.row_groups_pruned_page_index += 1;
        } else if selected == rows {
            plan.set(index, RowGroupAccess::Scan, "page index", reason);
        } else {
            plan.set(index, RowGroupAccess::Selection(selection), "page index", reason);
        }
    }
    Ok(())
}

/// The rows where the filter is certainly true: it can be true there, cannot be false, and
/// no column it reads may be null (`nullable`).
fn certainly_true(possible: &Possible<RowSelection>, nullable: &RowSelection) -> Result<usize> {
    let not_certain = possible.can_false.union(nullable)?;
    Ok(possible.can_true.selected_count() - possible.can_true.intersection(&not_certain)?.selected_count())
}

/// Where page bounds come from: the file's own page index, or for a local file written
/// without one, an index built from the statistics in its page headers (see
/// [`header_page_index`](crate::format::header_page_index)). From a store each header would
/// be a request of its own: none is built there.
pub(crate) enum PageBounds<'a> {
    File(&'a dyn PageIndexProvider),
    Headers(HeaderPageIndex),
}

impl<'a> PageBounds<'a> {
    /// The file's page index, or one from the page headers of the `(row group, leaf
    /// column)` chunks `chunks` gives; `None` when neither has bounds.
    pub(crate) fn of(file: &'a OpenedFile, chunks: impl FnOnce() -> Vec<(usize, usize)>) -> Result<Option<Self>> {
        if let Some(page_index) = file.metadata.page_index() {
            return Ok(Some(Self::File(page_index.as_ref())));
        }
        let chunks = chunks();
        if !matches!(file.location, Location::Local(_)) || chunks.is_empty() {
            return Ok(None);
        }
        let source = FileSource::open(&file.location)?;
        Ok(page_index_from_headers(&source, &file.metadata, &chunks)?.map(Self::Headers))
    }

    pub(crate) fn index(&self) -> &dyn PageIndexProvider {
        match self {
            Self::File(page_index) => *page_index,
            Self::Headers(built) => built,
        }
    }
}

/// The chunks of the filter's columns in the surviving row groups.
fn filter_chunks(file: &OpenedFile, filter: &BoundExpr, plan: &FileAccessPlan) -> Vec<(usize, usize)> {
    let leaves: Vec<usize> =
        filter.columns().into_iter().filter_map(|column| file.leaf(column)).map(|(leaf, _)| leaf).collect();
    plan.surviving().flat_map(|row_group| leaves.iter().map(move |&leaf| (row_group, leaf))).collect()
}

/// The rows of each page, from the page row counts (offset index), checked to cover the
/// row group.
pub(crate) fn page_row_ranges(zones: &ZoneMaps, rows: usize) -> Result<Vec<Range<usize>>> {
    let mut start = 0usize;
    let mut ranges = Vec::with_capacity(zones.len());
    for count in zones.row_counts.values() {
        let end = start.saturating_add(usize::try_from(*count).unwrap_or(usize::MAX));
        ranges.push(start..end);
        start = end;
    }
    if start != rows {
        return Err(PqsiftError::Statistics(format!("the offset index covers {start} rows, the row group has {rows}")));
    }
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Int32Array, RecordBatch};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;

    use super::*;
    use crate::filter::{BindOptions, bind, parse_filter};

    /// The rows the page index shows pass `filter` over `x` = 0..100 in pages of 10 rows,
    /// row 55 null.
    fn certain_rows(filter: &str) -> usize {
        let dir = std::env::temp_dir().join(format!("pqsift_certain_rows_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.parquet");
        let values: Int32Array = (0..100).map(|x| (x != 55).then_some(x)).collect();
        let batch = RecordBatch::try_from_iter([("x", Arc::new(values) as _)]).unwrap();
        let properties = WriterProperties::builder().set_data_page_row_count_limit(10).set_write_batch_size(10).build();
        let mut writer =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(properties)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let file = OpenedFile::open(&path.into()).unwrap();
        let filter = bind(&parse_filter(filter).unwrap(), &file.schema, &BindOptions::default()).unwrap();
        let mut plan = FileAccessPlan::scan_all(file.name(), &file.row_group_rows());
        prune_by_page_index(&file, &filter, &mut plan, &mut PruningMetrics::default()).unwrap();
        plan.row_groups[0].certain_rows
    }

    #[test]
    fn certain_rows_are_those_of_pages_the_filter_cannot_fail_nor_be_null_in() {
        // Pages [30, 40) to [60, 70) lie inside; [50, 60) holds a null.
        assert_eq!(certain_rows("x >= 25 AND x < 75"), 30);
        assert_eq!(certain_rows("x >= 0"), 90);
        // OR: a page inside either side.
        assert_eq!(certain_rows("x < 20 OR x >= 90"), 30);
        // NOT swaps what can be true and false; the null still counts against its page.
        assert_eq!(certain_rows("NOT (x < 50)"), 40);
        // A leaf no statistics can decide: nothing is certain where it decides.
        assert_eq!(certain_rows("x % 2 = 0"), 0);
        assert_eq!(certain_rows("x % 2 = 0 AND x >= 0"), 0);
        assert_eq!(certain_rows("x % 2 = 0 OR x >= 0"), 90);
    }
}
