//! The adaptive runs-vs-mask policy, made page-aware.
//!
//! Neither representation wins everywhere. Runs let the decoder skip long
//! stretches (and whole pages) cheaply; a mask avoids the per-run overhead when runs are
//! short. [`SelectionPolicy::Auto`] picks the mask when the average run length is below a
//! threshold (32 by default, the arrow-rs figure; `cargo bench --bench selection` measures
//! our own crossover — see the README).
//!
//! The hazard: decoding through a mask means decoding *every* row the mask
//! spans and filtering afterwards, so a mask that spans a page removed by page pruning asks
//! the decoder for rows of a page that was never fetched. arrow-rs falls back to runs
//! whenever the page index is present. We do better: [`ReadPlan`] cuts the selection at the
//! boundaries of the pages it prunes, skips those pages as runs, and applies the policy
//! separately to each stretch of surviving pages, so masks stay available where they pay
//! off and never reach a pruned page.

use arrow::array::BooleanBufferBuilder;
use arrow::buffer::BooleanBuffer;

use super::{RowSelection, RowSelector, runs::push_run};
use crate::error::{PqsiftError, Result};

/// How a selection is materialised while decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Representation {
    /// Runs of skip/select handed to the decoder.
    Selectors,
    /// Decode every row in the span, then filter with a bitmask.
    Mask,
}

impl Representation {
    /// `"selectors"` or `"mask"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Selectors => "selectors",
            Self::Mask => "mask",
        }
    }
}

/// Which representation to use for a selection.
///
/// ```
/// use pqsift::selection::{RowSelection, Representation, SelectionPolicy};
/// // Alternating single rows: average run length 1 < 32, so Auto picks the mask.
/// let fragmented = RowSelection::from_bools(&[true, false].repeat(64));
/// assert_eq!(SelectionPolicy::default().choose(&fragmented), Representation::Mask);
/// // One long run each: 2 runs over 1000 rows, average 500.
/// let clustered = RowSelection::from_ranges(&[0..500], 1000).unwrap();
/// assert_eq!(SelectionPolicy::default().choose(&clustered), Representation::Selectors);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SelectionPolicy {
    /// Always runs.
    Selectors,
    /// Always a mask (still cut at pruned pages by [`ReadPlan`]).
    Mask,
    /// A mask when the average run length is below `threshold`, i.e. when
    /// `row_count < run_count * threshold`; runs otherwise.
    Auto {
        /// Average run length below which the mask wins.
        threshold: usize,
    },
}

impl SelectionPolicy {
    /// The default Auto threshold (arrow-rs's).
    pub const DEFAULT_THRESHOLD: usize = 32;

    /// Parses `"auto"`, `"selectors"` or `"mask"`; `threshold` is used by `"auto"`.
    pub fn parse(name: &str, threshold: usize) -> Result<Self> {
        match name {
            "auto" => Ok(Self::Auto { threshold }),
            "selectors" => Ok(Self::Selectors),
            "mask" => Ok(Self::Mask),
            other => Err(PqsiftError::selection(format!(
                "unknown selection policy {other:?}: expected \"auto\", \"selectors\" or \"mask\""
            ))),
        }
    }

    /// How much sooner runs beat a mask when a variable-width column (strings, binary) is
    /// decoded (BYTE_ARRAY): skipping a value there is a length read, decoding it a copy of its
    /// bytes and an offset.
    /// Measured (benches/results/selection.md): the runs-vs-mask crossover is an average
    /// run length of ~40–55 for int32/float64 and ~4 for utf8, so 32 / 8.
    pub const VARIABLE_WIDTH_FACTOR: usize = 8;

    /// The policy for decoding a set of columns: `Auto` divides its threshold by
    /// [`Self::VARIABLE_WIDTH_FACTOR`] when one of them is variable-width; the fixed
    /// policies are kept.
    ///
    /// ```
    /// use pqsift::selection::SelectionPolicy;
    /// let auto = SelectionPolicy::default();
    /// assert_eq!(auto.for_columns(true), SelectionPolicy::Auto { threshold: 4 });
    /// assert_eq!(auto.for_columns(false), auto);
    /// assert_eq!(SelectionPolicy::Mask.for_columns(true), SelectionPolicy::Mask);
    /// ```
    pub fn for_columns(self, variable_width: bool) -> Self {
        match self {
            Self::Auto { threshold } if variable_width => {
                Self::Auto { threshold: (threshold / Self::VARIABLE_WIDTH_FACTOR).max(1) }
            }
            other => other,
        }
    }

    /// The representation this policy picks for `selection`.
    pub fn choose(&self, selection: &RowSelection) -> Representation {
        match *self {
            Self::Selectors => Representation::Selectors,
            Self::Mask => Representation::Mask,
            // rows < runs × threshold  ⟺  runs ≥ rows / threshold + 1 (integer division); the
            // count stops as soon as that many runs are seen.
            Self::Auto { threshold: 0 } => Representation::Selectors,
            Self::Auto { threshold } => {
                if selection.has_at_least_runs(selection.row_count() / threshold + 1) {
                    Representation::Mask
                } else {
                    Representation::Selectors
                }
            }
        }
    }
}

impl Default for SelectionPolicy {
    fn default() -> Self {
        Self::Auto { threshold: Self::DEFAULT_THRESHOLD }
    }
}

/// One stretch of a [`ReadPlan`], in row order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadSegment {
    /// Rows on pages without a selected row: the pages are not read at all.
    SkipPages(usize),
    /// Rows decoded through runs: skipped rows are skipped by the decoder.
    Runs(Vec<RowSelector>),
    /// Rows decoded whole, then filtered by the mask. Never spans a pruned page.
    Mask(BooleanBuffer),
}

impl ReadSegment {
    /// Number of rows this segment covers.
    pub fn row_count(&self) -> usize {
        match self {
            Self::SkipPages(n) => *n,
            Self::Runs(runs) => runs.iter().map(|r| r.row_count).sum(),
            Self::Mask(mask) => mask.len(),
        }
    }
}

/// How to decode one column chunk for a selection: the selection cut at pruned pages, each
/// surviving stretch materialised as the policy picks.
///
/// ```
/// use pqsift::selection::{ReadPlan, ReadSegment, RowSelection, SelectionPolicy};
/// // Three pages of 100 rows; even rows selected on pages 0 and 2, none on page 1.
/// let rows: Vec<bool> = (0..300).map(|i| i % 2 == 0 && !(100..200).contains(&i)).collect();
/// let selection = RowSelection::from_bools(&rows);
/// let plan = ReadPlan::new(&selection, SelectionPolicy::default(), Some(&[0, 100, 200])).unwrap();
/// // Fragmented, so Auto picks masks — but page 1 is skipped whole, never masked, and the
/// // trailing unselected row of each page is skipped as a run.
/// let kinds: Vec<&str> = plan.segments().iter().map(|s| match s {
///     ReadSegment::SkipPages(_) => "skip pages",
///     ReadSegment::Runs(_) => "runs",
///     ReadSegment::Mask(_) => "mask",
/// }).collect();
/// assert_eq!(kinds, ["mask", "runs", "skip pages", "mask", "runs"]);
/// assert_eq!(plan.segments()[2], ReadSegment::SkipPages(100));
/// assert_eq!(plan.decoded_rows(), 198);
/// assert_eq!(plan.page_counts(), (3, 1));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadPlan {
    segments: Vec<ReadSegment>,
    pages_total: usize,
    pages_pruned: usize,
}

impl ReadPlan {
    /// Plans `selection` for a column whose pages start at the rows `page_first_rows`
    /// (from the offset index; `None` when the file has no page index, in which case every
    /// page is read and the policy sees the whole selection).
    ///
    /// `page_first_rows` must start at 0 and never decrease; pages starting at or after the
    /// selection's end hold no selected row.
    pub fn new(selection: &RowSelection, policy: SelectionPolicy, page_first_rows: Option<&[usize]>) -> Result<Self> {
        let rows = selection.row_count();
        let mut plan = Self { segments: Vec::new(), pages_total: 0, pages_pruned: 0 };
        let Some(first_rows) = page_first_rows else {
            plan.push_region(selection, policy);
            return Ok(plan);
        };
        let kept = super::scan_ranges::pages_with_selected_rows(selection, first_rows)?;
        plan.pages_total = first_rows.len();
        plan.pages_pruned = kept.iter().filter(|k| !**k).count();
        // Walk maximal stretches of kept / pruned pages; rows past the selection's end are
        // outside the plan.
        let mut page = 0;
        while page < first_rows.len() {
            let start = first_rows[page].min(rows);
            let mut next = page;
            while next < first_rows.len() && kept[next] == kept[page] {
                next += 1;
            }
            let end = first_rows.get(next).copied().unwrap_or(rows).min(rows);
            if end > start {
                if kept[page] {
                    plan.push_region(&selection.slice(start, end - start)?, policy);
                } else {
                    plan.segments.push(ReadSegment::SkipPages(end - start));
                }
            }
            page = next;
        }
        Ok(plan)
    }

    /// Appends one stretch of surviving pages. Leading and trailing skips stay runs, so a
    /// mask spans only from the first to the last selected row.
    fn push_region(&mut self, region: &RowSelection, policy: SelectionPolicy) {
        let rows = region.row_count();
        let Some((first, end)) = region.selected_bounds() else {
            self.push_runs(&[RowSelector::skip(rows)]);
            return;
        };
        // Slicing is O(1) for masks; the runs are only built when runs are what we emit.
        let core = region.slice(first, end - first).expect("inside the region");
        if policy.choose(&core) == super::Representation::Mask {
            self.push_runs(&[RowSelector::skip(first)]);
            self.segments.push(ReadSegment::Mask(core.to_mask()));
            self.push_runs(&[RowSelector::skip(rows - end)]);
        } else {
            self.push_runs(&region.runs());
        }
    }

    /// Appends runs, merging into a preceding runs segment.
    fn push_runs(&mut self, runs: &[RowSelector]) {
        if runs.iter().all(|r| r.row_count == 0) {
            return;
        }
        if let Some(ReadSegment::Runs(last)) = self.segments.last_mut() {
            for run in runs {
                push_run(last, *run);
            }
            return;
        }
        let mut merged = Vec::with_capacity(runs.len());
        for run in runs {
            push_run(&mut merged, *run);
        }
        self.segments.push(ReadSegment::Runs(merged));
    }

    /// The segments, in row order.
    pub fn segments(&self) -> &[ReadSegment] {
        &self.segments
    }

    /// Pages of the column, and how many of them the plan never reads.
    pub fn page_counts(&self) -> (usize, usize) {
        (self.pages_total, self.pages_pruned)
    }

    /// `true` when some segment decodes through a mask.
    pub fn uses_mask(&self) -> bool {
        self.segments.iter().any(|s| matches!(s, ReadSegment::Mask(_)))
    }

    /// The rows the decoder produces: runs segments as they are, mask segments whole,
    /// pruned pages skipped.
    pub fn decoder_selection(&self) -> RowSelection {
        let mut runs = Vec::new();
        for segment in &self.segments {
            match segment {
                ReadSegment::SkipPages(n) => push_run(&mut runs, RowSelector::skip(*n)),
                ReadSegment::Runs(r) => r.iter().for_each(|run| push_run(&mut runs, *run)),
                ReadSegment::Mask(m) => push_run(&mut runs, RowSelector::select(m.len())),
            }
        }
        RowSelection::from_normalised_runs(runs)
    }

    /// Number of rows the decoder produces.
    pub fn decoded_rows(&self) -> usize {
        self.segments
            .iter()
            .map(|segment| match segment {
                ReadSegment::SkipPages(_) => 0,
                ReadSegment::Runs(r) => r.iter().filter(|run| run.selects()).map(|run| run.row_count).sum(),
                ReadSegment::Mask(m) => m.len(),
            })
            .sum()
    }

    /// The filter to apply to the decoded rows (one bit per decoded row), or `None` when
    /// no segment uses a mask and the decoded rows are exactly the selected rows.
    pub fn post_filter(&self) -> Option<BooleanBuffer> {
        if !self.uses_mask() {
            return None;
        }
        let mut builder = BooleanBufferBuilder::new(self.decoded_rows());
        for segment in &self.segments {
            match segment {
                ReadSegment::SkipPages(_) => {}
                ReadSegment::Runs(r) => {
                    let selected = r.iter().filter(|run| run.selects()).map(|run| run.row_count).sum();
                    builder.append_n(selected, true);
                }
                ReadSegment::Mask(m) => builder.append_buffer(m),
            }
        }
        Some(builder.finish())
    }
}
