//! [`ParquetReads`] with pqsift's own scan: the reads table code asks for (a Delta
//! checkpoint's `add` column with `add.path IS NOT NULL`) planned and read like any scan,
//! the plan's surviving row groups (with their page selections) becoming the stream's tasks.

use crate::error::Result;
use crate::planning::access_plan::RowGroupAccess;
use crate::planning::scan::{Scan, ScanOptions};
use crate::reading::reader::{OpenFile, ReaderConfig, open_stream};
use crate::reading::scan_stream::ScanTask;
use crate::storage::Location;
use crate::table::parquet_reads::{ColumnsRead, ParquetReads};

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
        let columns = columns.to_vec();
        let scan = Scan::new(vec![path.clone()], Some(columns.clone()), Some(filter), ScanOptions::default())?;
        let plan = scan.plan()?;
        let mut tasks = Vec::new();
        for (position, file) in plan.files.iter().enumerate() {
            for row_group in &file.row_groups {
                let selection = match &row_group.access {
                    RowGroupAccess::Skip => continue,
                    RowGroupAccess::Scan => None,
                    RowGroupAccess::Selection(selection) => Some(selection.clone()),
                };
                tasks.push(ScanTask::new(position, row_group.index, selection));
            }
        }
        let opened = scan.open(0)?;
        let files = vec![OpenFile { location: opened.location.clone(), metadata: opened.metadata.clone() }];
        let config = ReaderConfig {
            columns: Some(columns),
            filter: scan.filter().cloned(),
            threads: 1,
            ..ReaderConfig::default()
        };
        let mut stream = open_stream(&files, tasks, &config)?;
        let mut batches = Vec::new();
        while let Some(batch) = stream.next_batch_checked() {
            batches.push(batch?);
        }
        let pruned = &plan.metrics;
        Ok(ColumnsRead {
            batches,
            row_groups_total: pruned.row_groups_total,
            row_groups_pruned: pruned.row_groups_total - pruned.row_groups_selected,
            pages_total: pruned.pages_total,
            pages_pruned: pruned.pages_pruned,
            rows_total: pruned.rows_total,
            rows_selected: pruned.rows_selected,
            rows_decoded: stream.metrics().rows_decoded,
            bytes_read: stream.bytes_read(),
        })
    }
}
