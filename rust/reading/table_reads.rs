//! [`ParquetReads`] with pqsift's own scan: the reads table code asks for (a Delta
//! checkpoint's `add` column with `add.path IS NOT NULL`) planned and read like any scan
//! ([`read_plan`]).

use crate::error::Result;
use crate::planning::scan::{Scan, ScanOptions};
use crate::reading::planned_read::read_plan;
use crate::reading::reader::ReaderConfig;
use crate::storage::Location;
use crate::table::parquet_reads::{ColumnsRead, ParquetReads, ReadCounts};

/// Table code's Parquet reads, planned and read by pqsift's scan on one thread.
///
/// ```no_run
/// use pqsift::reading::table_reads::ScanReads;
/// use pqsift::table::delta::snapshot::{SnapshotSpec, load_snapshot};
/// let root = std::path::Path::new("/data/events").into();
/// let snapshot = load_snapshot(&root, SnapshotSpec::Latest, &Default::default(), &ScanReads).unwrap();
/// println!("{} files", snapshot.files.len());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ScanReads;

impl ParquetReads for ScanReads {
    fn read_columns(&self, path: &Location, columns: &[String], filter: &str) -> Result<ColumnsRead> {
        read(path, Some(columns.to_vec()), Some(filter))
    }

    fn read_file(&self, path: &Location) -> Result<ColumnsRead> {
        read(path, None, None)
    }
}

/// The `columns` (`None`: all) of the file at `path` where `filter` holds, planned and read
/// on one thread.
fn read(path: &Location, columns: Option<Vec<String>>, filter: Option<&str>) -> Result<ColumnsRead> {
    let scan = std::sync::Arc::new(Scan::new(vec![path.clone()], columns, filter, ScanOptions::default())?);
    let plan = scan.plan()?;
    let (_, mut stream) = read_plan(&scan, &plan, ReaderConfig { threads: 1, ..ReaderConfig::default() }, None)?;
    let mut batches = Vec::new();
    while let Some(batch) = stream.next_batch_checked() {
        batches.push(batch?);
    }
    let pruned = &plan.metrics;
    let counts = ReadCounts {
        row_groups_total: pruned.row_groups_total,
        row_groups_pruned: pruned.row_groups_total - pruned.row_groups_selected,
        pages_total: pruned.pages_total,
        pages_pruned: pruned.pages_pruned,
        rows_total: pruned.rows_total,
        rows_selected: pruned.rows_selected,
        values_decoded: stream.metrics().rows_decoded,
        bytes_read: stream.bytes_read(),
    };
    Ok(ColumnsRead { batches, counts })
}
