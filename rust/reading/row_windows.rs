//! Row windows: the decode unit chosen by bytes, not rows.
//!
//! A row group is decoded in one batch — no concatenation, one pass of the crate's reader —
//! as long as its selected rows of the columns read are estimated to decode to at most
//! `decode_bytes`. A larger one (Spark writes 128 MiB compressed row groups; wide text
//! makes them gigabytes decoded) is read as consecutive **windows** of rows, each a task of
//! the scan stream of its own: the stream's bound on tasks in flight then bounds memory by
//! `decode_bytes`, not by the row group.
//!
//! Window ends fall on page starts of the largest column where its offset index says where
//! pages start, so a page is decompressed for one window only (other columns' pages
//! straddling an end are decompressed twice: one page per column per window). A window
//! reads its pages alone: the crate skips the pages before it through the offset index
//! or, without one, by their headers — except in columns with repetition levels, whose
//! pages must be decompressed to be skipped, and from an object store, where a chunk
//! without offset index is fetched whole: those row groups are not split.
//!
//! ```
//! use pqsift::reading::row_windows::windows;
//! // 1,000 rows of 100 bytes each, pages every 100 rows, 25,000 bytes per window: ends
//! // at the last page start within 250 rows.
//! let pages: Vec<usize> = (0..10).map(|p| p * 100).collect();
//! assert_eq!(windows(1000, 100.0, Some(&pages), 25_000), vec![0..200, 200..400, 400..600, 600..800, 800..1000]);
//! // Small enough: one window.
//! assert_eq!(windows(1000, 100.0, Some(&pages), 1 << 20), vec![0..1000]);
//! ```

use std::ops::Range;

use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::ParquetMetaData;

use crate::error::Result;
use crate::format::metadata::page_locations;
use crate::planning::read_estimate::decoded_bytes;
use crate::reading::string_views::{ChunkStrings, chunk_strings};
use crate::selection::RowSelection;

/// Default of the read option `decode_bytes`: a row group estimated to decode to more than
/// this is read in windows of about this size.
pub const DEFAULT_DECODE_BYTES: u64 = 32 << 20;

/// The estimated Arrow size of one row of `leaves` in `row_group`: per leaf its
/// [`decoded_bytes`] over the rows. With `views` (a read without row filter), a top-level
/// string chunk not all dictionary-encoded counts twice plus 16 bytes a value: it is
/// decoded as views into its pages, which stay in memory until the strings are copied out
/// (see [`string_gather`](crate::reading::string_gather)).
pub fn decoded_bytes_per_row(metadata: &ParquetMetaData, row_group: usize, leaves: &[usize], views: bool) -> f64 {
    let chunks = metadata.row_group(row_group);
    let rows = chunks.num_rows().max(1) as f64;
    leaves
        .iter()
        .map(|&leaf| {
            let chunk = chunks.column(leaf);
            let values = chunk.num_values().max(0) as f64;
            let decoded = decoded_bytes(chunk);
            let top_level = chunk.column_descr().path().parts().len() == 1;
            let as_views = views
                && chunk.column_type() == PhysicalType::BYTE_ARRAY
                && top_level
                && chunk_strings(chunk) == ChunkStrings::Views;
            match as_views {
                true => (2.0 * decoded + 16.0 * values) / rows,
                false => decoded / rows,
            }
        })
        .sum()
}

/// The most windows a row group is read in, and parts its survivors are decoded in: as
/// many as a row group decoding to `MAX_WINDOWS × decode_bytes` (2 TiB at the default)
/// needs. Estimates are made of the footer's claims, and a corrupt one (values beyond any
/// file's) would otherwise cut a window or part a row.
pub const MAX_WINDOWS: usize = 1 << 16;

/// Consecutive row ranges covering `0..rows`, each of about `decode_bytes` at
/// `bytes_per_row` (but at most [`MAX_WINDOWS`] of them), ending on a start of
/// `page_starts` (ascending, from 0) where one falls inside the window; `[0..rows]` when
/// the whole fits.
pub fn windows(rows: usize, bytes_per_row: f64, page_starts: Option<&[usize]>, decode_bytes: u64) -> Vec<Range<usize>> {
    let target = rows_within(decode_bytes, bytes_per_row, rows);
    if target >= rows {
        return vec![0..rows];
    }
    let mut out = Vec::with_capacity(rows / target + 1);
    let mut start = 0;
    while start < rows {
        let limit = start.saturating_add(target).min(rows);
        let end = match page_starts {
            _ if limit == rows => rows,
            Some(starts) => {
                // The last page start inside (start, limit], else the window is cut mid-page.
                let upper = starts.partition_point(|&s| s <= limit);
                match upper.checked_sub(1).map(|i| starts[i]) {
                    Some(s) if s > start => s,
                    _ => limit,
                }
            }
            None => limit,
        };
        out.push(start..end);
        start = end;
    }
    out
}

/// The windows to read row group `row_group` of `metadata` in, for the leaves `leaves` and
/// the access plan's `selection`; windows without a selected row are left out. `None`:
/// read the row group whole (small enough, or not splittable; see the module doc).
/// `views`: plain strings are decoded as views (see [`decoded_bytes_per_row`]).
pub fn plan(
    metadata: &ParquetMetaData,
    row_group: usize,
    leaves: &[usize],
    selection: Option<&RowSelection>,
    remote: bool,
    decode_bytes: u64,
    views: bool,
) -> Option<Vec<Range<usize>>> {
    let rows = metadata.row_group(row_group).num_rows().max(0) as usize;
    let selected = selection.map_or(rows, |s| s.selected_count());
    let bytes_per_row = decoded_bytes_per_row(metadata, row_group, leaves, views);
    if selected as f64 * bytes_per_row <= decode_bytes as f64 || leaves.is_empty() {
        return None;
    }
    let schema = metadata.file_metadata().schema_descr();
    let mut largest: Option<(i64, Vec<usize>)> = None;
    for &leaf in leaves {
        let locations = page_locations(metadata, row_group, leaf).filter(|l| !l.is_empty());
        if locations.is_none() && (remote || schema.column(leaf).max_rep_level() > 0) {
            return None;
        }
        let size = metadata.row_group(row_group).column(leaf).uncompressed_size();
        if let Some(locations) = locations
            && largest.as_ref().is_none_or(|(biggest, _)| size > *biggest)
        {
            let starts = locations.iter().map(|p| usize::try_from(p.first_row_index).unwrap_or(usize::MAX)).collect();
            largest = Some((size, starts));
        }
    }
    let starts = largest.map(|(_, starts)| starts).filter(|s: &Vec<usize>| s.is_sorted());
    let all = windows(rows, bytes_per_row, starts.as_deref(), decode_bytes);
    let kept: Vec<Range<usize>> = match selection {
        None => all,
        Some(selection) => {
            all.into_iter().filter(|w| selection.slice(w.start, w.len()).is_ok_and(|s| s.selects_any())).collect()
        }
    };
    (kept.len() > 1).then_some(kept)
}

/// The rows of `selection` (the survivors of a row group's filter) split into consecutive
/// **parts** whose `leaves` are estimated to decode to about `decode_bytes` each (at least
/// one row a part, at most [`MAX_WINDOWS`] parts): one part, the whole selection, when
/// they fit. Each part is a selection over the whole row group.
///
/// A filtered read plans its windows on the predicates' columns alone (see
/// [`crate::reading::scan_stream`]): a selective filter over a wide text column then
/// decodes each row group whole instead of in windows sized for text it never decodes
/// (each window re-reads page starts and dictionaries). The projection of many survivors is bounded here instead.
///
/// ```
/// use pqsift::reading::row_windows::split_selected;
/// use pqsift::selection::RowSelection;
/// // Rows 0..10 and 20..30 of 40 selected, 4 selected rows a part at most.
/// let selection = RowSelection::from_ranges(&[0..10, 20..30], 40).unwrap();
/// let parts = split_selected(&selection, 4).unwrap();
/// let counts: Vec<usize> = parts.iter().map(|p| p.selected_count()).collect();
/// assert_eq!(counts, vec![4, 4, 4, 4, 4]);
/// assert!(parts.iter().all(|p| p.row_count() == 40));
/// ```
pub fn parts(
    metadata: &ParquetMetaData,
    row_group: usize,
    leaves: &[usize],
    selection: &RowSelection,
    decode_bytes: u64,
) -> Result<Vec<RowSelection>> {
    let bytes_per_row = decoded_bytes_per_row(metadata, row_group, leaves, false);
    split_selected(selection, rows_within(decode_bytes, bytes_per_row, selection.selected_count()))
}

/// How many rows of `bytes_per_row` fit `decode_bytes` (at least one), and enough that
/// `rows` make at most [`MAX_WINDOWS`] windows or parts.
fn rows_within(decode_bytes: u64, bytes_per_row: f64, rows: usize) -> usize {
    ((decode_bytes as f64 / bytes_per_row.max(1e-9)).floor() as usize).max(1).max(rows.div_ceil(MAX_WINDOWS))
}

/// `selection` split into consecutive selections (over the same rows) of at most
/// `per_part` selected rows each (the last may hold fewer); `[selection]` when it selects
/// no more than that.
pub fn split_selected(selection: &RowSelection, per_part: usize) -> Result<Vec<RowSelection>> {
    let per_part = per_part.max(1);
    if selection.selected_count() <= per_part {
        return Ok(vec![selection.clone()]);
    }
    let rows = selection.row_count();
    let mut cuts = vec![0];
    let (mut row, mut taken) = (0usize, 0usize);
    for run in selection.iter_runs() {
        if run.skip {
            row += run.row_count;
            continue;
        }
        let mut left = run.row_count;
        while taken + left >= per_part {
            let step = per_part - taken;
            row += step;
            left -= step;
            cuts.push(row);
            taken = 0;
        }
        row += left;
        taken += left;
    }
    if *cuts.last().expect("starts at 0") < rows {
        cuts.push(rows);
    }
    let mut parts = Vec::with_capacity(cuts.len());
    for range in cuts.windows(2) {
        let part = selection.intersection(&RowSelection::from_ranges(&[range[0]..range[1]], rows)?)?;
        if part.selects_any() {
            parts.push(part);
        }
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Windows tile `0..rows` in order, none empty, none over the target unless a
        /// single row is.
        #[test]
        fn windows_tile_the_rows(rows in 1usize..5000, bytes_per_row in 0.5f64..500.0, budget in 1u64..200_000, page in 1usize..700) {
            let starts: Vec<usize> = (0..rows).step_by(page).collect();
            for pages in [None, Some(starts.as_slice())] {
                let out = windows(rows, bytes_per_row, pages, budget);
                prop_assert_eq!(out.first().map(|w| w.start), Some(0));
                prop_assert_eq!(out.last().map(|w| w.end), Some(rows));
                for pair in out.windows(2) {
                    prop_assert_eq!(pair[0].end, pair[1].start);
                }
                let target = ((budget as f64 / bytes_per_row).floor() as usize).max(1);
                for w in &out {
                    prop_assert!(!w.is_empty());
                    prop_assert!(w.len() <= target.max(1) || out.len() == 1);
                }
            }
        }
    }

    proptest! {
        /// Parts partition the selection in order: each within its bound and not empty,
        /// together selecting exactly the selection's rows.
        #[test]
        fn parts_partition_the_selection(ranges in proptest::collection::vec((0usize..300, 1usize..40), 0..12), per_part in 1usize..60) {
            let rows = 400;
            let mut mask = vec![false; rows];
            for (start, len) in ranges {
                mask[start..(start + len).min(rows)].fill(true);
            }
            let selection = RowSelection::from_filters(&[arrow::array::BooleanArray::from(mask.clone())]);
            let parts = split_selected(&selection, per_part).unwrap();
            let mut union = vec![false; rows];
            let mut last_row = 0;
            for part in &parts {
                prop_assert_eq!(part.row_count(), rows);
                prop_assert!(part.selects_any() || parts.len() == 1);
                prop_assert!(part.selected_count() <= per_part || parts.len() == 1);
                let selected: Vec<bool> = part.to_mask().iter().collect();
                let first = selected.iter().position(|&s| s).unwrap_or(last_row);
                prop_assert!(first >= last_row, "parts out of order");
                for (row, &s) in selected.iter().enumerate() {
                    if s {
                        prop_assert!(!union[row], "row {} in two parts", row);
                        union[row] = true;
                        last_row = row;
                    }
                }
            }
            prop_assert_eq!(union, mask);
        }
    }

    #[test]
    fn a_corrupt_estimate_cuts_at_most_max_windows() {
        // A footer claiming 2^31 rows of ~17 GB each: a window a row, uncapped.
        let rows = (1usize << 31) - 1;
        let out = windows(rows, 1.7e10, None, DEFAULT_DECODE_BYTES);
        assert_eq!(out.len(), MAX_WINDOWS);
        assert_eq!((out[0].start, out[MAX_WINDOWS - 1].end), (0, rows));
        assert!(out.windows(2).all(|pair| pair[0].end == pair[1].start));
    }

    #[test]
    fn window_ends_fall_on_page_starts_when_a_page_fits() {
        let starts = [0, 30, 60, 90];
        assert_eq!(windows(120, 1.0, Some(&starts), 70), vec![0..60, 60..120]);
        // Pages larger than a window: cut inside them.
        assert_eq!(windows(120, 1.0, Some(&[0, 100]), 40), vec![0..40, 40..80, 80..120]);
    }
}
