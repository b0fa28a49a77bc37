//! How table code reads Parquet files of its own — a Delta checkpoint's actions, an Iceberg
//! table's delete files — without
//! depending on the scan: the layers above implement [`ParquetReads`] with pqsift's own
//! planning and reading (pruned by statistics and the page index, late-materialized) and
//! hand it in, as delta-kernel-rs's table code reads through the engine it is given. So
//! `table/` never imports `planning/` or `reading/`.
//!
//! ```
//! use arrow::array::RecordBatch;
//! use pqsift::storage::Location;
//! use pqsift::table::parquet_reads::{ColumnsRead, ParquetReads};
//!
//! /// A stand-in that finds nothing (a test double; pqsift's is `reading::table_reads::ScanReads`).
//! struct Empty;
//! impl ParquetReads for Empty {
//!     fn read_columns(&self, _: &Location, _: &[String], _: &str) -> pqsift::Result<ColumnsRead> {
//!         Ok(ColumnsRead::default())
//!     }
//!     fn read_file(&self, _: &Location) -> pqsift::Result<ColumnsRead> {
//!         Ok(ColumnsRead::default())
//!     }
//! }
//! let read = Empty.read_columns(&Location::Local("x.parquet".into()), &["add".into()], "add.path IS NOT NULL");
//! assert!(read.unwrap().batches.is_empty());
//! ```

use arrow::array::RecordBatch;

use crate::error::Result;
use crate::storage::Location;

/// Some columns of one Parquet file, where a filter holds, and what the read pruned.
#[derive(Debug, Clone, Default)]
pub struct ColumnsRead {
    /// The rows read, the requested columns only.
    pub batches: Vec<RecordBatch>,
    /// What the read pruned and decoded.
    pub counts: ReadCounts,
}

/// What Parquet reads pruned and decoded, summed over the files read.
///
/// ```
/// use pqsift::table::parquet_reads::ReadCounts;
/// let mut total = ReadCounts { row_groups_total: 4, row_groups_pruned: 3, ..Default::default() };
/// total.add(&ReadCounts { row_groups_total: 2, ..Default::default() });
/// assert_eq!((total.row_groups_total, total.row_groups_pruned), (6, 3));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadCounts {
    /// Row groups in the files.
    pub row_groups_total: u64,
    /// Row groups skipped whole (statistics, bloom filters, page index).
    pub row_groups_pruned: u64,
    /// Pages the page index stage looked at.
    pub pages_total: u64,
    /// Of those, pages skipped.
    pub pages_pruned: u64,
    /// Rows in the files.
    pub rows_total: u64,
    /// Rows left to read after row group and page pruning.
    pub rows_selected: u64,
    /// Rows decoded, summed over the root columns read, as the reader's metrics count them
    /// (a struct column is one root: its rows decoded, predicate and projection together).
    pub values_decoded: u64,
    /// Bytes read from the files.
    pub bytes_read: u64,
}

impl ReadCounts {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &ReadCounts) {
        self.row_groups_total += other.row_groups_total;
        self.row_groups_pruned += other.row_groups_pruned;
        self.pages_total += other.pages_total;
        self.pages_pruned += other.pages_pruned;
        self.rows_total += other.rows_total;
        self.rows_selected += other.rows_selected;
        self.values_decoded += other.values_decoded;
        self.bytes_read += other.bytes_read;
    }
}

/// Reads columns of Parquet files for table code (see the module documentation).
pub trait ParquetReads: Send + Sync {
    /// The top-level `columns` of the file at `path`, for the rows where `filter` (Spark
    /// SQL) holds.
    fn read_columns(&self, path: &Location, columns: &[String], filter: &str) -> Result<ColumnsRead>;

    /// Every row and column of the file at `path` (an Iceberg delete file: small).
    fn read_file(&self, path: &Location) -> Result<ColumnsRead>;
}
