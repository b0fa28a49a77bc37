//! [`RowSelection`]: which rows of one row group to decode.
//!
//! A selection covers the rows `0..row_count` of a row group and says, for each, whether
//! it is selected. It has two representations (as arrow-rs's `RowSelection`):
//!
//! * **runs** (RLE): `skip n` / `select n` — [`RowSelector`]s, cheap when runs are long
//!   (a time range on a sorted column, a page-index selection);
//! * **mask**: one bit per row, cheap when runs are short (a predicate that keeps every
//!   other row), where runs would fragment the decoder's work.
//!
//! Every operation gives the same logical result for both representations and for mixed
//! pairs; the property tests in `tests.rs` check each against a plain `Vec<bool>` model.
//! Which representation a *reader* should use is decided by a
//! [`SelectionPolicy`](policy::SelectionPolicy), per contiguous region of surviving pages so
//! that a mask never covers a page that page pruning removed ([`policy::ReadPlan`]).
//!
//! Files, one concept each: `runs.rs` (run algorithms), `mask.rs` (bitmask algorithms),
//! `policy.rs` (the adaptive, page-aware policy and the read plan it produces),
//! `scan_ranges.rs` (page byte ranges a selection needs).
//!
//! # Example
//!
//! ```
//! use pqsift::selection::{RowSelection, RowSelector};
//!
//! // A page index kept rows 100..150 of 200.
//! let pages = RowSelection::from_runs([
//!     RowSelector::skip(100),
//!     RowSelector::select(50),
//!     RowSelector::skip(50),
//! ]).unwrap();
//! // A predicate evaluated on those 50 rows keeps the first 10.
//! let predicate = RowSelection::from_runs([RowSelector::select(10), RowSelector::skip(40)]).unwrap();
//! let refined = pages.and_then(&predicate).unwrap();
//! assert_eq!(refined.runs(), vec![RowSelector::skip(100), RowSelector::select(10), RowSelector::skip(90)]);
//! assert_eq!((refined.row_count(), refined.selected_count()), (200, 10));
//! ```

pub(crate) mod mask;
pub mod policy;
mod runs;
pub mod scan_ranges;
#[cfg(test)]
mod tests;

use std::ops::Range;

use arrow::array::BooleanBufferBuilder;
use arrow::array::{Array, BooleanArray};
use arrow::buffer::BooleanBuffer;

use crate::error::{PqsiftError, Result};

pub use mask::count_set_bits;
pub use policy::{ReadPlan, ReadSegment, Representation, SelectionPolicy};
pub use scan_ranges::{PageLocation, coalesce_ranges};

/// One run of a [`RowSelection`]: `row_count` rows, all skipped or all selected.
///
/// ```
/// use pqsift::selection::RowSelector;
/// let run = RowSelector::select(5);
/// assert!(!run.skip);
/// assert_eq!(run.row_count, 5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RowSelector {
    /// Number of rows in the run.
    pub row_count: usize,
    /// `true` for a run of skipped rows, `false` for selected rows.
    pub skip: bool,
}

impl RowSelector {
    /// A run of `row_count` selected rows.
    pub const fn select(row_count: usize) -> Self {
        Self { row_count, skip: false }
    }

    /// A run of `row_count` skipped rows.
    pub const fn skip(row_count: usize) -> Self {
        Self { row_count, skip: true }
    }

    /// `true` when the run selects its rows.
    pub const fn selects(&self) -> bool {
        !self.skip
    }
}

/// The rows of a row group to decode; see the [module documentation](self).
///
/// Equality is logical: a run-backed and a mask-backed selection of the same rows are equal.
///
/// ```
/// use pqsift::selection::RowSelection;
/// let mask = RowSelection::from_bools(&[true, false, false, true]);
/// let runs = RowSelection::from_ranges(&[0..1, 3..4], 4).unwrap();
/// assert_eq!(mask, runs);
/// assert!(mask.is_mask() && !runs.is_mask());
/// ```
#[derive(Debug, Clone)]
pub struct RowSelection {
    inner: Inner,
}

#[derive(Debug, Clone)]
enum Inner {
    /// Normalised runs: no zero-length run, neighbours differ in `skip`.
    Runs(Vec<RowSelector>),
    /// One bit per row, set = selected.
    Mask(BooleanBuffer),
}

/// Consecutive windows of a selection's rows (see [`RowSelection::windows`]).
pub(crate) struct Windows<'a> {
    inner: WindowsOf<'a>,
    /// The first row of the next window.
    start: usize,
}

enum WindowsOf<'a> {
    Mask(&'a BooleanBuffer),
    Runs(runs::Cursor<'a>),
}

impl Windows<'_> {
    /// The next `len` rows (at most the rows left), set where selected.
    pub(crate) fn next(&mut self, len: usize) -> BooleanBuffer {
        let start = self.start;
        self.start += len;
        match &mut self.inner {
            WindowsOf::Mask(mask) => mask.slice(start, len),
            WindowsOf::Runs(cursor) => cursor.take_mask(len),
        }
    }
}

impl RowSelection {
    // ----- construction -------------------------------------------------------------------

    /// Builds a run-backed selection from runs in row order.
    ///
    /// The runs are normalised: zero-length runs are dropped and neighbours of the same kind
    /// merged. Fails if the total row count overflows `usize`.
    pub fn from_runs(runs: impl IntoIterator<Item = RowSelector>) -> Result<Self> {
        let mut out: Vec<RowSelector> = Vec::new();
        let mut total: usize = 0;
        for run in runs {
            total =
                total.checked_add(run.row_count).ok_or_else(|| PqsiftError::selection("total row count overflows"))?;
            runs::push_run(&mut out, run);
        }
        Ok(Self::from_normalised_runs(out))
    }

    /// Wraps runs that are already normalised (internal constructor).
    pub(crate) fn from_normalised_runs(runs: Vec<RowSelector>) -> Self {
        debug_assert!(runs::is_normalised(&runs), "runs not normalised: {runs:?}");
        Self { inner: Inner::Runs(runs) }
    }

    /// Builds a mask-backed selection, one bit per row (set = selected).
    pub fn from_mask(mask: BooleanBuffer) -> Self {
        Self { inner: Inner::Mask(mask) }
    }

    /// Builds a mask-backed selection from booleans.
    pub fn from_bools(bools: &[bool]) -> Self {
        Self::from_mask(BooleanBuffer::from(bools))
    }

    /// Builds a mask-backed selection from predicate results, concatenated in order.
    ///
    /// A null result is *not* selected (SQL: a row whose predicate is unknown is filtered
    /// out).
    ///
    /// ```
    /// use arrow::array::BooleanArray;
    /// use pqsift::selection::RowSelection;
    /// let a = BooleanArray::from(vec![Some(true), None, Some(false)]);
    /// let b = BooleanArray::from(vec![true, true]);
    /// let s = RowSelection::from_filters(&[a, b]);
    /// assert_eq!(s.to_bools(), vec![true, false, false, true, true]);
    /// ```
    pub fn from_filters(filters: &[BooleanArray]) -> Self {
        let total: usize = filters.iter().map(|f| f.len()).sum();
        if let [only] = filters {
            return Self::from_mask(filter_values(only));
        }
        let mut builder = BooleanBufferBuilder::new(total);
        for filter in filters {
            let values = filter_values(filter);
            builder.append_buffer(&values);
        }
        Self::from_mask(builder.finish())
    }

    /// Builds a run-backed selection of `row_count` rows selecting the given ranges.
    ///
    /// Ranges must be sorted, non-overlapping and inside `0..row_count`; touching ranges are
    /// merged and empty ranges ignored.
    ///
    /// ```
    /// use pqsift::selection::RowSelection;
    /// let s = RowSelection::from_ranges(&[2..4, 4..5, 8..9], 10).unwrap();
    /// assert_eq!(s.to_bools(), [false, false, true, true, true, false, false, false, true, false]);
    /// assert!(RowSelection::from_ranges(&[4..6, 2..3], 10).is_err());
    /// ```
    pub fn from_ranges(ranges: &[Range<usize>], row_count: usize) -> Result<Self> {
        let mut out = Vec::with_capacity(ranges.len() * 2 + 1);
        let mut position = 0usize;
        for range in ranges {
            if range.start > range.end {
                return Err(PqsiftError::selection(format!(
                    "range {}..{} has its start after its end",
                    range.start, range.end
                )));
            }
            if range.start < position {
                return Err(PqsiftError::selection(format!(
                    "ranges out of order or overlapping: {}..{} starts before row {}",
                    range.start, range.end, position
                )));
            }
            if range.end > row_count {
                return Err(PqsiftError::selection(format!(
                    "range {}..{} exceeds the row count {}",
                    range.start, range.end, row_count
                )));
            }
            if range.is_empty() {
                continue;
            }
            runs::push_run(&mut out, RowSelector::skip(range.start - position));
            runs::push_run(&mut out, RowSelector::select(range.end - range.start));
            position = range.end;
        }
        runs::push_run(&mut out, RowSelector::skip(row_count - position));
        Ok(Self::from_normalised_runs(out))
    }

    /// Selects all `row_count` rows.
    pub fn select_all(row_count: usize) -> Self {
        let mut runs = Vec::new();
        runs::push_run(&mut runs, RowSelector::select(row_count));
        Self::from_normalised_runs(runs)
    }

    /// Skips all `row_count` rows.
    pub fn skip_all(row_count: usize) -> Self {
        let mut runs = Vec::new();
        runs::push_run(&mut runs, RowSelector::skip(row_count));
        Self::from_normalised_runs(runs)
    }

    // ----- representation -----------------------------------------------------------------

    /// `true` when backed by a bitmask, `false` when backed by runs.
    pub fn is_mask(&self) -> bool {
        matches!(self.inner, Inner::Mask(_))
    }

    /// The representation backing this selection.
    pub fn representation(&self) -> Representation {
        match self.inner {
            Inner::Runs(_) => Representation::Selectors,
            Inner::Mask(_) => Representation::Mask,
        }
    }

    /// The same rows, backed by `representation`.
    pub fn into_representation(self, representation: Representation) -> Self {
        match (representation, self.inner) {
            (Representation::Mask, Inner::Runs(r)) => Self::from_mask(runs::to_mask(&r)),
            (Representation::Selectors, Inner::Mask(m)) => Self::from_normalised_runs(mask::to_runs(&m)),
            (_, inner) => Self { inner },
        }
    }

    /// The same rows, backed by what `policy` picks for them.
    pub fn with_policy(self, policy: SelectionPolicy) -> Self {
        let representation = policy.choose(&self);
        self.into_representation(representation)
    }

    // ----- queries ------------------------------------------------------------------------

    /// Number of rows covered (selected and skipped).
    pub fn row_count(&self) -> usize {
        match &self.inner {
            Inner::Runs(r) => r.iter().map(|s| s.row_count).sum(),
            Inner::Mask(m) => m.len(),
        }
    }

    /// Number of selected rows.
    pub fn selected_count(&self) -> usize {
        match &self.inner {
            Inner::Runs(r) => r.iter().filter(|s| s.selects()).map(|s| s.row_count).sum(),
            Inner::Mask(m) => mask::count_set_bits(m),
        }
    }

    /// Number of skipped rows.
    pub fn skipped_count(&self) -> usize {
        self.row_count() - self.selected_count()
    }

    /// `true` when at least one row is selected.
    pub fn selects_any(&self) -> bool {
        match &self.inner {
            Inner::Runs(r) => r.iter().any(|s| s.selects()),
            Inner::Mask(m) => m.set_slices().next().is_some(),
        }
    }

    /// Number of normalised runs (what the run representation would hold).
    pub fn run_count(&self) -> usize {
        match &self.inner {
            Inner::Runs(r) => r.len(),
            Inner::Mask(m) => mask::run_count(m),
        }
    }

    /// `true` when the selection has at least `n` normalised runs; stops counting at `n`.
    pub fn has_at_least_runs(&self, n: usize) -> bool {
        match &self.inner {
            Inner::Runs(r) => r.len() >= n,
            Inner::Mask(m) => mask::has_at_least_runs(m, n),
        }
    }

    /// The first selected row and one past the last, or `None` when nothing is selected.
    ///
    /// ```
    /// use pqsift::selection::RowSelection;
    /// assert_eq!(RowSelection::from_bools(&[false, true, false, true, false]).selected_bounds(), Some((1, 4)));
    /// assert_eq!(RowSelection::skip_all(3).selected_bounds(), None);
    /// ```
    pub fn selected_bounds(&self) -> Option<(usize, usize)> {
        match &self.inner {
            Inner::Runs(r) => {
                let mut position = 0;
                let mut bounds: Option<(usize, usize)> = None;
                for run in r {
                    if run.selects() {
                        let start = bounds.map_or(position, |(first, _)| first);
                        bounds = Some((start, position + run.row_count));
                    }
                    position += run.row_count;
                }
                bounds
            }
            Inner::Mask(m) => Some((mask::first_set(m)?, mask::last_set(m)? + 1)),
        }
    }

    /// The normalised runs, in row order.
    pub fn runs(&self) -> Vec<RowSelector> {
        match &self.inner {
            Inner::Runs(r) => r.clone(),
            Inner::Mask(m) => mask::to_runs(m),
        }
    }

    /// Iterates over the normalised runs without materialising them.
    pub fn iter_runs(&self) -> Box<dyn Iterator<Item = RowSelector> + '_> {
        match &self.inner {
            Inner::Runs(r) => Box::new(r.iter().copied()),
            Inner::Mask(m) => Box::new(mask::RunIter::new(m)),
        }
    }

    /// The selection as a bitmask, one bit per row.
    pub fn to_mask(&self) -> BooleanBuffer {
        match &self.inner {
            Inner::Runs(r) => runs::to_mask(r),
            Inner::Mask(m) => m.clone(),
        }
    }

    /// The selection's rows in consecutive windows from row 0, each a bitmap of its rows
    /// (a mask sliced, runs walked once): no bitmap of every row is made, which a footer
    /// claiming billions of rows would make huge.
    pub(crate) fn windows(&self) -> Windows<'_> {
        let inner = match &self.inner {
            Inner::Mask(m) => WindowsOf::Mask(m),
            Inner::Runs(r) => WindowsOf::Runs(runs::Cursor::new(r)),
        };
        Windows { inner, start: 0 }
    }

    /// The selection as one `bool` per row.
    pub fn to_bools(&self) -> Vec<bool> {
        self.to_mask().iter().collect()
    }

    /// The selected row ranges, in order.
    pub fn selected_ranges(&self) -> Vec<Range<usize>> {
        let mut position = 0;
        let mut out = Vec::new();
        for run in self.iter_runs() {
            if run.selects() {
                out.push(position..position + run.row_count);
            }
            position += run.row_count;
        }
        out
    }

    // ----- combination --------------------------------------------------------------------

    /// Applies `other` to the rows this selection selects.
    ///
    /// `other` is in the coordinates of `self`'s selected rows, so it must cover exactly
    /// [`selected_count`](Self::selected_count) rows. This is how late materialization
    /// refines a selection: the first predicate runs on the rows the page index kept, the
    /// second on the rows the first kept, and so on.
    ///
    /// ```
    /// use pqsift::selection::RowSelection;
    /// let pages = RowSelection::from_bools(&[false, true, true, false, true]);
    /// let predicate = RowSelection::from_bools(&[true, false, true]);
    /// assert_eq!(pages.and_then(&predicate).unwrap().to_bools(), [false, true, false, false, true]);
    /// assert!(pages.and_then(&RowSelection::select_all(2)).is_err());
    /// ```
    pub fn and_then(&self, other: &Self) -> Result<Self> {
        let (selected, other_rows) = (self.selected_count(), other.row_count());
        if selected != other_rows {
            return Err(PqsiftError::selection(format!(
                "and_then: the right side covers {other_rows} rows but the left side selects {selected}"
            )));
        }
        Ok(match (&self.inner, &other.inner) {
            (Inner::Runs(a), Inner::Runs(b)) => Self::from_normalised_runs(runs::and_then(a, b)),
            (Inner::Runs(a), Inner::Mask(b)) => Self::from_mask(mask::and_then_runs_mask(a, b)),
            (Inner::Mask(a), Inner::Mask(b)) => Self::from_mask(mask::and_then(a, b)),
            (Inner::Mask(a), Inner::Runs(b)) => Self::from_mask(mask::and_then(a, &runs::to_mask(b))),
        })
    }

    /// Rows selected by both. Both must cover the same number of rows.
    ///
    /// ```
    /// use pqsift::selection::RowSelection;
    /// let a = RowSelection::from_ranges(&[0..6], 8).unwrap();
    /// let b = RowSelection::from_ranges(&[4..8], 8).unwrap();
    /// assert_eq!(a.intersection(&b).unwrap().selected_ranges(), vec![4..6]);
    /// ```
    pub fn intersection(&self, other: &Self) -> Result<Self> {
        self.check_same_rows(other, "intersection")?;
        Ok(match (&self.inner, &other.inner) {
            (Inner::Runs(a), Inner::Runs(b)) => Self::from_normalised_runs(runs::combine(a, b, |x, y| x && y)),
            (Inner::Mask(a), Inner::Mask(b)) => Self::from_mask(a & b),
            (Inner::Runs(a), Inner::Mask(b)) | (Inner::Mask(b), Inner::Runs(a)) => {
                Self::from_mask(mask::combine_with_runs(b, a, false))
            }
        })
    }

    /// Rows selected by either. Both must cover the same number of rows.
    ///
    /// ```
    /// use pqsift::selection::RowSelection;
    /// let a = RowSelection::from_ranges(&[0..2], 8).unwrap();
    /// let b = RowSelection::from_ranges(&[2..3, 6..8], 8).unwrap();
    /// assert_eq!(a.union(&b).unwrap().selected_ranges(), vec![0..3, 6..8]);
    /// ```
    pub fn union(&self, other: &Self) -> Result<Self> {
        self.check_same_rows(other, "union")?;
        Ok(match (&self.inner, &other.inner) {
            (Inner::Runs(a), Inner::Runs(b)) => Self::from_normalised_runs(runs::combine(a, b, |x, y| x || y)),
            (Inner::Mask(a), Inner::Mask(b)) => Self::from_mask(a | b),
            (Inner::Runs(a), Inner::Mask(b)) | (Inner::Mask(b), Inner::Runs(a)) => {
                Self::from_mask(mask::combine_with_runs(b, a, true))
            }
        })
    }

    fn check_same_rows(&self, other: &Self, operation: &str) -> Result<()> {
        let (left, right) = (self.row_count(), other.row_count());
        if left != right {
            return Err(PqsiftError::selection(format!(
                "{operation}: the selections cover different row counts ({left} and {right})"
            )));
        }
        Ok(())
    }

    // ----- slicing ------------------------------------------------------------------------

    /// Splits at row `row_count`: returns the first `row_count` rows and the rest.
    ///
    /// A `row_count` past the end gives the whole selection and an empty rest, like slicing
    /// a list. Used to hand a decoder one batch of rows at a time.
    ///
    /// ```
    /// use pqsift::selection::RowSelection;
    /// let s = RowSelection::from_ranges(&[2..6], 8).unwrap();
    /// let (head, tail) = s.split_off(4);
    /// assert_eq!(head.selected_ranges(), vec![2..4]);
    /// assert_eq!(tail.selected_ranges(), vec![0..2]);
    /// assert_eq!(tail.row_count(), 4);
    /// ```
    pub fn split_off(&self, row_count: usize) -> (Self, Self) {
        match &self.inner {
            Inner::Runs(r) => {
                let (head, tail) = runs::split_off(r, row_count);
                (Self::from_normalised_runs(head), Self::from_normalised_runs(tail))
            }
            Inner::Mask(m) => {
                let at = row_count.min(m.len());
                (Self::from_mask(m.slice(0, at)), Self::from_mask(m.slice(at, m.len() - at)))
            }
        }
    }

    /// Rows `start..start + len` of this selection, as a selection of `len` rows.
    /// Fails when the slice passes the end.
    pub fn slice(&self, start: usize, len: usize) -> Result<Self> {
        let rows = self.row_count();
        if start.checked_add(len).is_none_or(|end| end > rows) {
            return Err(PqsiftError::selection(format!("slice {start}+{len} exceeds the row count {rows}")));
        }
        Ok(match &self.inner {
            Inner::Runs(r) => Self::from_normalised_runs(runs::slice(r, start, len)),
            Inner::Mask(m) => Self::from_mask(m.slice(start, len)),
        })
    }

    /// Unselects the first `n` selected rows; the row count is unchanged.
    ///
    /// ```
    /// use pqsift::selection::RowSelection;
    /// let s = RowSelection::from_bools(&[true, false, true, true]);
    /// assert_eq!(s.offset(2).to_bools(), [false, false, false, true]);
    /// ```
    pub fn offset(&self, n: usize) -> Self {
        if n == 0 {
            return self.clone();
        }
        match &self.inner {
            Inner::Runs(r) => Self::from_normalised_runs(runs::offset(r, n)),
            Inner::Mask(m) => Self::from_mask(mask::offset(m, n)),
        }
    }

    /// Keeps only the first `n` selected rows; the row count is unchanged (see
    /// [`trim`](Self::trim) to drop the trailing skip).
    ///
    /// ```
    /// use pqsift::selection::RowSelection;
    /// let s = RowSelection::from_bools(&[true, false, true, true]);
    /// assert_eq!(s.limit(2).to_bools(), [true, false, true, false]);
    /// ```
    pub fn limit(&self, n: usize) -> Self {
        match &self.inner {
            Inner::Runs(r) => Self::from_normalised_runs(runs::limit(r, n)),
            Inner::Mask(m) => Self::from_mask(mask::limit(m, n)),
        }
    }

    /// Drops trailing skipped rows, so the selection ends at its last selected row.
    ///
    /// ```
    /// use pqsift::selection::RowSelection;
    /// let s = RowSelection::from_bools(&[false, true, false, false]);
    /// assert_eq!(s.trim().row_count(), 2);
    /// ```
    pub fn trim(&self) -> Self {
        match &self.inner {
            Inner::Runs(r) => {
                let mut r = r.clone();
                if r.last().is_some_and(|s| s.skip) {
                    r.pop();
                }
                Self::from_normalised_runs(r)
            }
            Inner::Mask(m) => {
                let end = mask::last_set(m).map_or(0, |i| i + 1);
                Self::from_mask(m.slice(0, end))
            }
        }
    }

    /// Widens the selection to whole batches: every batch of `batch_size` rows (the last one
    /// may be shorter) that selects at least one row becomes fully selected.
    ///
    /// A cache of decoded batches keys on batch boundaries; this gives the
    /// rows such a cache must decode.
    ///
    /// ```
    /// use pqsift::selection::RowSelection;
    /// let s = RowSelection::from_ranges(&[5..6], 12).unwrap();
    /// assert_eq!(s.expand_to_batch_boundaries(4).unwrap().selected_ranges(), vec![4..8]);
    /// ```
    pub fn expand_to_batch_boundaries(&self, batch_size: usize) -> Result<Self> {
        if batch_size == 0 {
            return Err(PqsiftError::selection("batch size must be positive"));
        }
        let rows = self.row_count();
        let mut ranges: Vec<Range<usize>> = Vec::new();
        for range in self.selected_ranges() {
            let start = range.start / batch_size * batch_size;
            let end = range.end.div_ceil(batch_size).saturating_mul(batch_size).min(rows);
            match ranges.last_mut() {
                Some(last) if last.end >= start => last.end = last.end.max(end),
                _ => ranges.push(start..end),
            }
        }
        let expanded = Self::from_ranges(&ranges, rows)?;
        Ok(if self.is_mask() { expanded.into_representation(Representation::Mask) } else { expanded })
    }
}

impl PartialEq for RowSelection {
    fn eq(&self, other: &Self) -> bool {
        match (&self.inner, &other.inner) {
            (Inner::Runs(a), Inner::Runs(b)) => a == b,
            (Inner::Mask(a), Inner::Mask(b)) => a == b,
            _ => self.row_count() == other.row_count() && self.iter_runs().eq(other.iter_runs()),
        }
    }
}

impl Eq for RowSelection {}

/// The selected bits of a predicate result: value set and not null.
fn filter_values(filter: &BooleanArray) -> BooleanBuffer {
    match filter.nulls() {
        Some(nulls) if nulls.null_count() > 0 => filter.values() & nulls.inner(),
        _ => filter.values().clone(),
    }
}
