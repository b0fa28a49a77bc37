//! The access plan of one file: per row group, skip it, scan it whole, or scan the rows of
//! a [`RowSelection`] (DataFusion's `ParquetAccessPlan`), with the reason for
//! each decision so that a plan can be explained.
//!
//! ```
//! use pqsift::planning::access_plan::{FileAccessPlan, RowGroupAccess};
//! let mut plan = FileAccessPlan::scan_all("data.parquet", &[100, 100]);
//! plan.skip(0, "statistics", "max(age)=35 < 50");
//! assert!(matches!(plan.row_groups[0].access, RowGroupAccess::Skip));
//! assert_eq!(plan.surviving().collect::<Vec<_>>(), [1]);
//! assert!(plan.explain().contains("row group 0: skipped by statistics: max(age)=35 < 50"));
//! ```

use std::fmt::Write;

use crate::selection::RowSelection;

/// How to read one row group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowGroupAccess {
    /// Nothing to read.
    Skip,
    /// Read every row.
    Scan,
    /// Read only the selected rows.
    Selection(RowSelection),
}

/// The decision for one row group and why it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowGroupPlan {
    /// The row group's index in the file.
    pub index: usize,
    /// Rows in the row group.
    pub rows: usize,
    /// The decision.
    pub access: RowGroupAccess,
    /// The stage that made it (`statistics`, `bloom filter`, `page index`, `file range`), if any.
    pub stage: Option<String>,
    /// Why, in words.
    pub reason: String,
    /// For a row group kept: what each stage could not use and why (`stage: words`), see
    /// [`why_not`](crate::planning::why_not).
    pub notes: Vec<String>,
    /// The row group's compressed bytes, as its footer says; set once the plan is made.
    pub compressed_bytes: u64,
    /// The compressed bytes reading it can take (see
    /// [`read_estimate`](crate::planning::read_estimate)); set once the plan is made.
    pub read_bytes: u64,
    /// Rows the page index shows pass the filter: in pages where it cannot be false and
    /// the filter's columns hold no nulls (0 where unknown). A lower bound of the rows a
    /// filtered read outputs, before deletion vectors and limits.
    pub certain_rows: usize,
    /// The Arrow bytes the projection of `certain_rows` rows is estimated to take, from the
    /// footer's sizes (see [`read_estimate`](crate::planning::read_estimate)); set once
    /// the plan is made.
    pub certain_output_bytes: u64,
}

impl RowGroupPlan {
    /// `"skip"`, `"scan"` or `"select"`.
    ///
    /// ```
    /// use pqsift::planning::access_plan::FileAccessPlan;
    /// let plan = FileAccessPlan::scan_all("f.parquet", &[10]);
    /// assert_eq!(plan.row_groups[0].decision(), "scan");
    /// assert_eq!(plan.row_groups[0].selected_rows(), 10);
    /// ```
    pub fn decision(&self) -> &'static str {
        match self.access {
            RowGroupAccess::Skip => "skip",
            RowGroupAccess::Scan => "scan",
            RowGroupAccess::Selection(_) => "select",
        }
    }

    /// Rows the plan reads from this row group.
    pub fn selected_rows(&self) -> usize {
        match &self.access {
            RowGroupAccess::Skip => 0,
            RowGroupAccess::Scan => self.rows,
            RowGroupAccess::Selection(selection) => selection.selected_count(),
        }
    }
}

/// The access plan of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAccessPlan {
    /// The file.
    pub path: String,
    /// One entry per row group of the file, in file order.
    pub row_groups: Vec<RowGroupPlan>,
    /// A note on the whole file (e.g. why nothing was pruned), if any.
    pub note: Option<String>,
    /// Why the whole file was skipped before its footer was read (partition values), if
    /// it was: it then has no row groups.
    pub skipped: Option<String>,
    /// The memory its parsed footer takes (the parquet crate's estimate; 0 for a file the
    /// read does not open): what a read holds while it reads the file (see [`ReadGroups`]).
    pub footer_bytes: usize,
    /// The layout of the footer the plan was made on (`OpenedFile::layout_fingerprint`),
    /// for a file the read opens: a read that opens the footer again checks it is the same.
    pub footer_layout: Option<u64>,
}

impl FileAccessPlan {
    /// A plan that scans every row group; `rows` holds each row group's row count.
    pub fn scan_all(path: impl Into<String>, rows: &[usize]) -> Self {
        let row_groups = rows
            .iter()
            .enumerate()
            .map(|(index, &rows)| RowGroupPlan {
                index,
                rows,
                access: RowGroupAccess::Scan,
                stage: None,
                reason: String::new(),
                notes: Vec::new(),
                compressed_bytes: 0,
                read_bytes: 0,
                certain_rows: 0,
                certain_output_bytes: 0,
            })
            .collect();
        Self { path: path.into(), row_groups, note: None, skipped: None, footer_bytes: 0, footer_layout: None }
    }

    /// A file skipped whole, before its footer was read, because of `reason`.
    ///
    /// ```
    /// let plan = pqsift::planning::access_plan::FileAccessPlan::skipped("day=1/f.parquet", "partition values day=1");
    /// assert!(plan.is_pruned());
    /// assert_eq!(plan.explain(), "file day=1/f.parquet: skipped by partition values day=1\n");
    /// ```
    pub fn skipped(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { skipped: Some(reason.into()), ..Self::scan_all(path, &[]) }
    }

    /// Marks row group `index` skipped by `stage` because of `reason`.
    pub fn skip(&mut self, index: usize, stage: &str, reason: impl Into<String>) {
        if let Some(row_group) = self.row_groups.get_mut(index) {
            row_group.access = RowGroupAccess::Skip;
            row_group.stage = Some(stage.to_string());
            row_group.reason = reason.into();
        }
    }

    /// Sets how row group `index` is read after `stage` looked at it.
    ///
    /// ```
    /// use pqsift::planning::access_plan::{FileAccessPlan, RowGroupAccess};
    /// use pqsift::selection::RowSelection;
    /// let mut plan = FileAccessPlan::scan_all("f.parquet", &[100]);
    /// let rows = RowSelection::from_ranges(&[80..100], 100).unwrap();
    /// plan.set(0, RowGroupAccess::Selection(rows), "page index", "2 of 10 pages kept");
    /// assert_eq!(plan.selected_rows(), 20);
    /// assert!(plan.explain().contains("row group 0: select 20 of 100 rows: 2 of 10 pages kept"));
    /// ```
    pub fn set(&mut self, index: usize, access: RowGroupAccess, stage: &str, reason: impl Into<String>) {
        if let Some(row_group) = self.row_groups.get_mut(index) {
            row_group.access = access;
            row_group.stage = Some(stage.to_string());
            row_group.reason = reason.into();
        }
    }

    /// Records why a stage could not prune row group `index` (kept by that stage).
    pub fn note(&mut self, index: usize, notes: Vec<String>) {
        if let Some(row_group) = self.row_groups.get_mut(index) {
            for note in notes {
                if !row_group.notes.contains(&note) {
                    row_group.notes.push(note);
                }
            }
        }
    }

    /// Indices of the row groups not skipped.
    pub fn surviving(&self) -> impl Iterator<Item = usize> + '_ {
        self.row_groups.iter().filter(|rg| rg.access != RowGroupAccess::Skip).map(|rg| rg.index)
    }

    /// `true` when every row group is skipped (or there are none).
    pub fn is_pruned(&self) -> bool {
        self.surviving().next().is_none()
    }

    /// Rows the plan reads.
    pub fn selected_rows(&self) -> usize {
        self.row_groups.iter().map(RowGroupPlan::selected_rows).sum()
    }

    /// The plan in words, one line per row group.
    pub fn explain(&self) -> String {
        let mut text = String::new();
        if let Some(reason) = &self.skipped {
            let _ = writeln!(text, "file {}: skipped by {reason}", self.path);
            return text;
        }
        let total: usize = self.row_groups.iter().map(|rg| rg.rows).sum();
        let kept = self.row_groups.iter().filter(|rg| rg.access != RowGroupAccess::Skip).count();
        let _ = writeln!(
            text,
            "file {}: {} of {} row groups kept, {} of {} rows selected",
            self.path,
            kept,
            self.row_groups.len(),
            self.selected_rows(),
            total
        );
        if let Some(note) = &self.note {
            let _ = writeln!(text, "  note: {note}");
        }
        for rg in &self.row_groups {
            let what = match (&rg.access, rg.stage.as_deref()) {
                (RowGroupAccess::Skip, Some(stage)) => format!("skipped by {stage}"),
                (RowGroupAccess::Skip, None) => "skipped".to_string(),
                (RowGroupAccess::Scan, _) => format!("scan all {} rows", rg.rows),
                (RowGroupAccess::Selection(s), _) => format!("select {} of {} rows", s.selected_count(), rg.rows),
            };
            if rg.reason.is_empty() {
                let _ = writeln!(text, "  row group {}: {what}", rg.index);
            } else {
                let _ = writeln!(text, "  row group {}: {what}: {}", rg.index, rg.reason);
            }
            if rg.access != RowGroupAccess::Skip && !rg.notes.is_empty() {
                let _ = writeln!(text, "    not pruned: {}", rg.notes.join("; "));
            }
        }
        text
    }
}

/// Files read together: consecutive files, in scan order, whose footers take at most
/// `budget` bytes together (a file whose footer alone takes more is a group of its own). A
/// read holds the footers of one group at a time; planning holds those of the first.
///
/// ```
/// use pqsift::planning::access_plan::ReadGroups;
/// let mut groups = ReadGroups::new(100);
/// let numbers: Vec<usize> = [60, 30, 20, 150, 10].into_iter().map(|bytes| groups.add(bytes)).collect();
/// assert_eq!(numbers, [0, 0, 1, 2, 3]);
/// ```
#[derive(Debug, Clone)]
pub struct ReadGroups {
    budget: usize,
    group: usize,
    files: usize,
    bytes: usize,
}

impl ReadGroups {
    /// Groups of footers taking at most `budget` bytes.
    pub fn new(budget: usize) -> Self {
        Self { budget, group: 0, files: 0, bytes: 0 }
    }

    /// The number of the group (from 0) of the next file, whose footer takes `bytes`.
    pub fn add(&mut self, bytes: usize) -> usize {
        if self.files > 0 && self.bytes.saturating_add(bytes) > self.budget {
            self.group += 1;
            self.files = 0;
            self.bytes = 0;
        }
        self.files += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        self.group
    }
}
