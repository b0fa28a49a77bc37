//! The byte ranges a selection needs: the data pages holding at least one selected row.
//!
//! A page is the unit of I/O and decompression, so a page with no selected
//! row is neither fetched nor decompressed. The offset index gives each page's
//! `(offset, compressed_size, first_row_index)`; page `i` holds the rows
//! `first_row_index[i] .. first_row_index[i + 1]` (the last one up to the end of the row
//! group).
//!
//! Unlike arrow-rs, [`RowSelection::scan_ranges_with`] can add the dictionary page (needed
//! as soon as any data page is read) and coalesce near ranges: two ranges closer than the gap
//! limit become one read, trading the gap's bytes for one request fewer.
//! [`DEFAULT_COALESCE_GAP`] is 64 KiB: on local disks and the page cache, one read of 64 KiB
//! costs about as much as the system call and seek of another request, so reading a smaller
//! gap is cheaper than skipping it. For object stores, where a request costs tens of
//! milliseconds, pass a larger gap (object_store uses 1 MiB).

use std::ops::Range;

use super::{Inner, RowSelection};
use crate::error::{PqsiftError, Result};

/// Gap limit below which [`coalesce_ranges`] merges neighbouring ranges (see the module
/// documentation for why 64 KiB).
pub const DEFAULT_COALESCE_GAP: u64 = 64 * 1024;

/// Where one data page of a column chunk lives, from the offset index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageLocation {
    /// Byte offset of the page (header included) in the file.
    pub offset: u64,
    /// Size of the page in bytes, header included, compressed.
    pub compressed_size: u64,
    /// Index, within the row group, of the first row of the page.
    pub first_row_index: u64,
}

impl PageLocation {
    /// The page's byte range, or an error when `offset + compressed_size` overflows.
    fn byte_range(&self) -> Result<Range<u64>> {
        let end = self.offset.checked_add(self.compressed_size).ok_or_else(|| {
            PqsiftError::selection(format!(
                "page at offset {} with size {} passes the largest file offset",
                self.offset, self.compressed_size
            ))
        })?;
        Ok(self.offset..end)
    }
}

/// For each page (given by its first row), whether it holds a selected row.
///
/// Fails unless the first rows start at 0 and never decrease.
pub(crate) fn pages_with_selected_rows(selection: &RowSelection, first_rows: &[usize]) -> Result<Vec<bool>> {
    Ok(selected_rows_by_page(selection, first_rows)?.into_iter().map(|rows| rows > 0).collect())
}

/// For each page (given by its first row), how many of its rows are selected.
///
/// Fails unless the first rows start at 0 and never decrease.
pub(crate) fn selected_rows_by_page(selection: &RowSelection, first_rows: &[usize]) -> Result<Vec<usize>> {
    validate_first_rows(first_rows)?;
    let rows = selection.row_count();
    let page_end = |i: usize| first_rows.get(i + 1).copied().unwrap_or(usize::MAX).min(rows);
    match &selection.inner {
        Inner::Mask(mask) => Ok((0..first_rows.len())
            .map(|i| {
                let (start, end) = (first_rows[i].min(rows), page_end(i));
                if end > start { super::count_set_bits(&mask.slice(start, end - start)) } else { 0 }
            })
            .collect()),
        Inner::Runs(_) => {
            // Two pointers over selected ranges and pages, both in row order.
            let ranges = selection.selected_ranges();
            let mut counts = vec![0; first_rows.len()];
            let mut r = 0;
            for (i, count) in counts.iter_mut().enumerate() {
                let (start, end) = (first_rows[i], page_end(i));
                while r < ranges.len() && ranges[r].end <= start {
                    r += 1;
                }
                // The ranges overlapping the page: all but the last end inside it.
                let mut next = r;
                while next < ranges.len() && ranges[next].start < end {
                    *count += ranges[next].end.min(end).saturating_sub(ranges[next].start.max(start));
                    if ranges[next].end > end {
                        break;
                    }
                    next += 1;
                }
            }
            Ok(counts)
        }
    }
}

fn validate_first_rows(first_rows: &[usize]) -> Result<()> {
    if let Some(&first) = first_rows.first()
        && first != 0
    {
        return Err(PqsiftError::selection(format!("the first page must start at row 0, not {first}")));
    }
    if let Some(i) = first_rows.windows(2).position(|w| w[1] < w[0]) {
        return Err(PqsiftError::selection(format!(
            "page first row indexes must not decrease: page {} starts at row {} after row {}",
            i + 1,
            first_rows[i + 1],
            first_rows[i]
        )));
    }
    Ok(())
}

fn first_rows_of(pages: &[PageLocation]) -> Result<Vec<usize>> {
    pages
        .iter()
        .map(|p| {
            usize::try_from(p.first_row_index)
                .map_err(|_| PqsiftError::selection(format!("page first row index {} is too large", p.first_row_index)))
        })
        .collect()
}

impl RowSelection {
    /// For each page, whether it holds at least one selected row.
    ///
    /// ```
    /// use pqsift::selection::{PageLocation, RowSelection};
    /// let pages = [
    ///     PageLocation { offset: 4, compressed_size: 10, first_row_index: 0 },
    ///     PageLocation { offset: 14, compressed_size: 10, first_row_index: 100 },
    /// ];
    /// let s = RowSelection::from_ranges(&[150..160], 200).unwrap();
    /// assert_eq!(s.selected_pages(&pages).unwrap(), [false, true]);
    /// ```
    pub fn selected_pages(&self, pages: &[PageLocation]) -> Result<Vec<bool>> {
        pages_with_selected_rows(self, &first_rows_of(pages)?)
    }

    /// For each page, how many of its rows are selected.
    ///
    /// ```
    /// use pqsift::selection::{PageLocation, RowSelection};
    /// let pages = [
    ///     PageLocation { offset: 4, compressed_size: 10, first_row_index: 0 },
    ///     PageLocation { offset: 14, compressed_size: 10, first_row_index: 100 },
    /// ];
    /// let s = RowSelection::from_ranges(&[90..120, 150..160], 200).unwrap();
    /// assert_eq!(s.selected_rows_by_page(&pages).unwrap(), [10, 30]);
    /// ```
    pub fn selected_rows_by_page(&self, pages: &[PageLocation]) -> Result<Vec<usize>> {
        selected_rows_by_page(self, &first_rows_of(pages)?)
    }

    /// The byte ranges of the data pages holding at least one selected row, in page order,
    /// one per page, not coalesced (the arrow-rs contract).
    ///
    /// ```
    /// use pqsift::selection::{PageLocation, RowSelection};
    /// let pages = [
    ///     PageLocation { offset: 0, compressed_size: 10, first_row_index: 0 },
    ///     PageLocation { offset: 10, compressed_size: 10, first_row_index: 100 },
    /// ];
    /// // Rows 150..160 live on the second page only.
    /// let s = RowSelection::from_ranges(&[150..160], 200).unwrap();
    /// assert_eq!(s.scan_ranges(&pages).unwrap(), vec![10..20]);
    /// ```
    pub fn scan_ranges(&self, pages: &[PageLocation]) -> Result<Vec<Range<u64>>> {
        let kept = self.selected_pages(pages)?;
        let mut ranges = Vec::new();
        for (page, keep) in pages.iter().zip(kept) {
            let range = page.byte_range()?;
            if keep {
                ranges.push(range);
            }
        }
        Ok(ranges)
    }

    /// [`scan_ranges`](Self::scan_ranges), plus the dictionary page when any data page is
    /// read, then sorted and coalesced with [`coalesce_ranges`] when `coalesce_gap` is given.
    ///
    /// ```
    /// use pqsift::selection::{PageLocation, RowSelection};
    /// let pages = [
    ///     PageLocation { offset: 100, compressed_size: 50, first_row_index: 0 },
    ///     PageLocation { offset: 150, compressed_size: 50, first_row_index: 10 },
    ///     PageLocation { offset: 200, compressed_size: 50, first_row_index: 20 },
    /// ];
    /// let s = RowSelection::from_ranges(&[0..1, 25..26], 30).unwrap();
    /// // The dictionary page sits at 4..100; pages 0 and 2 are read, 50 bytes apart.
    /// assert_eq!(s.scan_ranges_with(&pages, Some(4..100), None).unwrap(), vec![4..100, 100..150, 200..250]);
    /// assert_eq!(s.scan_ranges_with(&pages, Some(4..100), Some(64)).unwrap(), vec![4..250]);
    /// assert_eq!(s.scan_ranges_with(&pages, Some(4..100), Some(0)).unwrap(), vec![4..150, 200..250]);
    /// ```
    pub fn scan_ranges_with(
        &self,
        pages: &[PageLocation],
        dictionary_page: Option<Range<u64>>,
        coalesce_gap: Option<u64>,
    ) -> Result<Vec<Range<u64>>> {
        let mut ranges = self.scan_ranges(pages)?;
        if let Some(dictionary) = dictionary_page
            && !ranges.is_empty()
            && !dictionary.is_empty()
        {
            ranges.insert(0, dictionary);
        }
        Ok(match coalesce_gap {
            Some(gap) => coalesce_ranges(&ranges, gap),
            None => ranges,
        })
    }
}

/// Sorts byte ranges and merges those that overlap, touch, or are at most `gap` bytes apart.
///
/// ```
/// use pqsift::selection::coalesce_ranges;
/// assert_eq!(coalesce_ranges(&[30..40, 0..10, 12..20], 2), vec![0..20, 30..40]);
/// assert_eq!(coalesce_ranges(&[0..10, 12..20], 1), vec![0..10, 12..20]);
/// ```
pub fn coalesce_ranges(ranges: &[Range<u64>], gap: u64) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.iter().filter(|r| !r.is_empty()).cloned().collect();
    sorted.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for range in sorted {
        match out.last_mut() {
            Some(last) if range.start <= last.end.saturating_add(gap) => last.end = last.end.max(range.end),
            _ => out.push(range),
        }
    }
    out
}
