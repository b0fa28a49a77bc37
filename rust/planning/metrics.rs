//! Pruning metrics: counts over a whole scan, filled by planning.
//!
//! ```
//! use pqsift::planning::metrics::PruningMetrics;
//! let mut metrics = PruningMetrics::default();
//! metrics.row_groups_total += 4;
//! metrics.row_groups_pruned_statistics += 1;
//! assert!(metrics.as_pairs().contains(&("row_groups_pruned_statistics", 1)));
//! ```

/// Counts over every file of a scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruningMetrics {
    /// Files in the scan.
    pub files_total: u64,
    /// Files none of whose row groups is read.
    pub files_pruned: u64,
    /// Of those, files skipped on their partition values, their footers never read.
    pub files_pruned_partition: u64,
    /// Row groups in all files.
    pub row_groups_total: u64,
    /// Row groups outside the requested file byte range.
    pub row_groups_pruned_range: u64,
    /// Row groups the statistics stage skipped.
    pub row_groups_pruned_statistics: u64,
    /// Row groups the bloom filter stage skipped.
    pub row_groups_pruned_bloom_filter: u64,
    /// Row groups the page index stage skipped whole (no page can match).
    pub row_groups_pruned_page_index: u64,
    /// Row groups read whole or in part.
    pub row_groups_selected: u64,
    /// Bloom filters probed (row group × column).
    pub bloom_filters_checked: u64,
    /// Data pages of the filter's columns in row groups the page index stage looked at.
    pub pages_total: u64,
    /// Of those, pages no selected row falls in.
    pub pages_pruned: u64,
    /// Rows of surviving row groups the page index selection leaves out.
    pub page_index_rows_pruned: u64,
    /// Rows in all files.
    pub rows_total: u64,
    /// Rows the plan reads.
    pub rows_selected: u64,
    /// Of the rows pruning kept, those left out because a Delta deletion vector deletes
    /// them.
    pub rows_deleted: u64,
    /// Row groups whose rows a deletion vector deletes all of.
    pub row_groups_pruned_deletion_vector: u64,
    /// Files skipped on the statistics of a Delta log, their footers never read.
    pub files_pruned_log_stats: u64,
    /// Files skipped on the column statistics and partition values of an Iceberg
    /// snapshot's manifests, their footers never read.
    pub files_pruned_manifest: u64,
    /// Row groups that cannot hold any of the top rows of `ORDER BY ... LIMIT k`.
    pub row_groups_pruned_topn: u64,
    /// Rows of surviving row groups left out because their pages cannot hold a top row.
    pub topn_rows_pruned: u64,
}

impl PruningMetrics {
    /// The metrics as `(name, value)` pairs, in a fixed order.
    pub fn as_pairs(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("files_total", self.files_total),
            ("files_pruned", self.files_pruned),
            ("files_pruned_partition", self.files_pruned_partition),
            ("row_groups_total", self.row_groups_total),
            ("row_groups_pruned_range", self.row_groups_pruned_range),
            ("row_groups_pruned_statistics", self.row_groups_pruned_statistics),
            ("row_groups_pruned_bloom_filter", self.row_groups_pruned_bloom_filter),
            ("row_groups_pruned_page_index", self.row_groups_pruned_page_index),
            ("row_groups_selected", self.row_groups_selected),
            ("bloom_filters_checked", self.bloom_filters_checked),
            ("pages_total", self.pages_total),
            ("pages_pruned", self.pages_pruned),
            ("page_index_rows_pruned", self.page_index_rows_pruned),
            ("rows_total", self.rows_total),
            ("rows_selected", self.rows_selected),
            ("rows_deleted", self.rows_deleted),
            ("row_groups_pruned_deletion_vector", self.row_groups_pruned_deletion_vector),
            ("files_pruned_log_stats", self.files_pruned_log_stats),
            ("files_pruned_manifest", self.files_pruned_manifest),
            ("row_groups_pruned_topn", self.row_groups_pruned_topn),
            ("topn_rows_pruned", self.topn_rows_pruned),
        ]
    }
}
