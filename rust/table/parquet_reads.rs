//! How table code reads Parquet files of its own — a Delta checkpoint's actions — without
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
    /// Row groups in the file.
    pub row_groups_total: u64,
    /// Row groups skipped whole (statistics, bloom filters, page index).
    pub row_groups_pruned: u64,
    /// Pages the page index stage looked at.
    pub pages_total: u64,
    /// Of those, pages skipped.
    pub pages_pruned: u64,
    /// Rows in the file.
    pub rows_total: u64,
    /// Rows left to read after row group and page pruning.
    pub rows_selected: u64,
    /// Rows decoded, summed over the root columns read.
    pub rows_decoded: u64,
    /// Bytes read from the file.
    pub bytes_read: u64,
}

/// Reads columns of Parquet files for table code (see the module documentation).
pub trait ParquetReads: Send + Sync {
    /// The top-level `columns` of the file at `path`, for the rows where `filter` (Spark
    /// SQL) holds.
    fn read_columns(&self, path: &Location, columns: &[String], filter: &str) -> Result<ColumnsRead>;
}
