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
    read_task(&TaskPlan::of_scan(scan, plan, &surviving(scan, plan))?, config, counted_in)
}

/// The files of `plan` with a row group to read, with those row groups, and the first
/// file: it gives the output schema even when every row group is pruned — unless the
/// table declares its schema (then a file every stage pruned is never opened).
fn surviving(scan: &Scan, plan: &ScanPlan) -> Vec<(usize, Vec<usize>)> {
    let first_for_schema = scan.declared().is_none();
    plan.files
        .iter()
        .enumerate()
        .map(|(position, file)| {
            let kept = file.row_groups.iter().filter(|rg| rg.access != RowGroupAccess::Skip).map(|rg| rg.index);
            (position, kept.collect::<Vec<_>>())
        })
        .filter(|(position, kept)| (first_for_schema && *position == 0) || !kept.is_empty())
        .collect()
}

/// The schema reading `scan` with `config`'s options outputs, from its first file's
/// footer (or its declared schema): nothing planned, no row read.
pub fn output_schema_of(scan: &Scan, config: ReaderConfig) -> Result<SchemaRef> {
    let task = TaskPlan::schema_only(scan)?;
    let config = bound_to(&task, config);
    schema_of(task.files.first().map(|planned| planned.file.as_ref()), &config)
}

/// `config` with what `task` binds against: its columns, filter, name matching, partition
/// values and declared schema.
fn bound_to(task: &TaskPlan, config: ReaderConfig) -> ReaderConfig {
    ReaderConfig {
        columns: task.columns.clone(),
        filter: task.filter.clone(),
        bind: task.bind.clone(),
        partitions: task.partitions.clone(),
        declared: task.declared.clone(),
        ..config
    }
}

/// The schema a read with `config` outputs: the declared one, else `first` file's; none
/// without either.
fn schema_of(first: Option<&OpenedFile>, config: &ReaderConfig) -> Result<SchemaRef> {
    match (declared_output_schema(config), first) {
        (Some(declared), _) => declared,
        (None, Some(first)) => output_schema(first, config),
        (None, None) => Ok(Arc::new(Schema::empty())),
    }
}

/// The rows reading `plan` (a plan of `scan`) outputs, its limit aside. Without a filter
/// the plan answers — its row groups' rows, less those its selections skip (deletion
/// vectors) — and nothing is read; with one, only the filter's columns are decoded.
///
/// ```no_run
/// use pqsift::planning::scan::{Scan, ScanOptions};
/// use pqsift::reading::planned_read::count_rows;
/// use pqsift::reading::reader::ReaderConfig;
/// let scan = Scan::new(vec![std::path::Path::new("events.parquet")], None, Some("amount > 900"), ScanOptions::default()).unwrap();
/// let rows = count_rows(&scan, &scan.plan().unwrap(), ReaderConfig::default()).unwrap();
/// ```
pub fn count_rows(scan: &Scan, plan: &ScanPlan, config: ReaderConfig) -> Result<u64> {
    if scan.filter().is_none() && !scan.declared().is_some_and(|d| d.has_deletes()) {
        let rows = plan.files.iter().flat_map(|file| &file.row_groups).map(|rg| rg.selected_rows() as u64);
        return Ok(rows.sum());
    }
    let mut task = TaskPlan::of_scan(scan, plan, &surviving(scan, plan))?;
    task.columns = Some(Vec::new()); // the filter's columns only
    let config = ReaderConfig { limit: None, order_by: Vec::new(), spark_output: false, ..config };
    let (_, mut stream) = read_task(&task, config, None)?;
    let mut rows = 0u64;
    while let Some(batch) = stream.next_batch_checked() {
        rows += batch?.num_rows() as u64;
    }
    Ok(rows)
}

/// Starts reading `task` — a plan made here by [`read_plan`], or received by a Spark task
/// — with the read options of `config` (its columns, filter, name matching, partition
/// values and declared schema are the plan's). Requests are counted into `counted_in`
/// when given. Returns the output schema with the stream.
pub fn read_task(
    task: &TaskPlan,
    config: ReaderConfig,
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
    let config = bound_to(task, config);
    let schema = schema_of(files.first(), &config)?;
    Ok((schema, open_stream(&files, tasks, &config)?))
}
