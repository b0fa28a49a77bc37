//! Reading a planned scan: the plan's surviving row groups, with their page selections,
//! become the stream's tasks over the footers planning read. Nothing is planned, bound or
//! opened twice — the plan is built once and passed along as data.
//!
//! ```no_run
//! use pqsift::planning::scan::{Scan, ScanOptions};
//! use pqsift::reading::planned_read::read_plan;
//! use pqsift::reading::reader::ReaderConfig;
//! let scan = Scan::new(vec![std::path::Path::new("events.parquet")], None, Some("id = 7"), ScanOptions::default()).unwrap();
//! let plan = scan.plan().unwrap();
//! let (schema, mut stream) = read_plan(&scan, &plan, ReaderConfig::default(), None).unwrap();
//! while let Some(batch) = stream.next_batch_checked() {
//!     assert_eq!(batch.unwrap().schema(), schema);
//! }
//! ```

use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};

use crate::error::Result;
use crate::format::opener::OpenedFile;
use crate::planning::access_plan::RowGroupAccess;
use crate::planning::scan::{Scan, ScanPlan};
use crate::planning::task_plan::TaskPlan;
use crate::reading::reader::{ReaderConfig, declared_output_schema, open_stream, output_schema};
use crate::reading::scan_stream::{ScanStream, ScanTask};
use crate::storage::Storage;

/// Starts reading `plan`, a plan of `scan`, with the read options of `config`; the columns,
/// filter, name matching, partition values and declared schema are the scan's (`config`'s
/// own are replaced). Object store requests are counted into `counted_in` when given (the
/// read's metrics apart from planning's), else into the scan's. Returns the output schema
/// with the stream: a scan whose every row group was pruned still has one (the declared
/// schema's, or the first file's).
pub fn read_plan(
    scan: &Scan,
    plan: &ScanPlan,
    config: ReaderConfig,
    counted_in: Option<&Storage>,
) -> Result<(SchemaRef, ScanStream)> {
    // The files with a row group to read, and the first file: it gives the output schema
    // even when every row group is pruned.
    let pieces: Vec<(usize, Vec<usize>)> = plan
        .files
        .iter()
        .enumerate()
        .map(|(position, file)| {
            let kept = file.row_groups.iter().filter(|rg| rg.access != RowGroupAccess::Skip).map(|rg| rg.index);
            (position, kept.collect::<Vec<_>>())
        })
        .filter(|(position, kept)| *position == 0 || !kept.is_empty())
        .collect();
    read_task(&TaskPlan::of_scan(scan, plan, &pieces)?, config, counted_in)
}

/// Starts reading `task` — a plan made here by [`read_plan`], or received by a Spark task
/// — with the read options of `config` (its columns, filter, name matching, partition
/// values and declared schema are the plan's). Requests are counted into `counted_in`
/// when given. Returns the output schema with the stream.
pub fn read_task(
    task: &TaskPlan,
    mut config: ReaderConfig,
    counted_in: Option<&Storage>,
) -> Result<(SchemaRef, ScanStream)> {
    let files: Vec<OpenedFile> = task
        .files
        .iter()
        .map(|planned| match counted_in {
            Some(storage) => {
                OpenedFile { location: planned.file.location.counted_in(storage), ..(*planned.file).clone() }
            }
            None => (*planned.file).clone(),
        })
        .collect();
    let tasks = task
        .files
        .iter()
        .enumerate()
        .flat_map(|(file, planned)| {
            planned
                .row_groups
                .iter()
                .map(move |(row_group, selection)| ScanTask::new(file, *row_group, selection.clone()))
        })
        .collect();
    config.columns = task.columns.clone();
    config.filter = task.filter.clone();
    config.bind = task.bind.clone();
    config.partitions = task.partitions.clone();
    config.declared = task.declared.clone();
    let schema = match (declared_output_schema(&config), files.first()) {
        (Some(declared), _) => declared?,
        (None, Some(first)) => output_schema(first, &config)?,
        (None, None) => Arc::new(Schema::empty()),
    };
    Ok((schema, open_stream(&files, tasks, &config)?))
}
