//! Reading a planned scan: the plan's surviving row groups, with their page selections,
//! become the stream's tasks over the footers planning read. Nothing is planned or bound
//! twice — the plan is built once and passed along as data — and a footer is read twice
//! only when the plan let it go to bound memory (a read of many files).
//!
//! ```no_run
//! use pqsift::planning::scan::{Scan, ScanOptions};
//! use pqsift::reading::planned_read::read_plan;
//! use pqsift::reading::reader::ReaderConfig;
//! let scan = std::sync::Arc::new(Scan::new(vec![std::path::Path::new("events.parquet")], None, Some("id = 7"), ScanOptions::default()).unwrap());
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
use crate::planning::access_plan::{ReadGroups, RowGroupAccess};
use crate::planning::scan::{Scan, ScanPlan};
use crate::planning::task_plan::{FileReads, TaskPlan};
use crate::reading::reader::{ReaderConfig, declared_output_schema, open_stream, output_schema};
use crate::reading::scan_stream::{LaterGroups, ScanStream, ScanTask};
use crate::storage::Storage;

/// Starts reading `plan`, a plan of `scan`, with the read options of `config`; the columns,
/// filter, name matching, partition values and declared schema are the scan's (`config`'s
/// own are replaced). Object store requests are counted into `counted_in` when given (the
/// read's metrics apart from planning's), else into the scan's. Returns the output schema
/// with the stream: a scan whose every row group was pruned still has one (the declared
/// schema's, or the first file's).
///
/// Files are read in groups (see [`ScanOptions::footer_bytes_read_together`]), each
/// group's footers opened when the read reaches it (the plan let them go), so that a read
/// of thousands of files holds the footers of one group at a time — unless the read sorts,
/// which needs every file at once.
///
/// [`ScanOptions::footer_bytes_read_together`]: crate::planning::scan::ScanOptions::footer_bytes_read_together
pub fn read_plan(
    scan: &Arc<Scan>,
    plan: &ScanPlan,
    config: ReaderConfig,
    counted_in: Option<&Storage>,
) -> Result<(SchemaRef, ScanStream)> {
    read_in_groups(scan, plan, config, counted_in, |_| {})
}

/// [`read_plan`], each group's task plan passed through `adjust` first.
fn read_in_groups(
    scan: &Arc<Scan>,
    plan: &ScanPlan,
    config: ReaderConfig,
    counted_in: Option<&Storage>,
    adjust: fn(&mut TaskPlan),
) -> Result<(SchemaRef, ScanStream)> {
    let selected = TaskPlan::row_groups_of(plan, &surviving(scan, plan))?;
    let mut groups: Vec<Vec<FileReads>> = Vec::new();
    let mut read_groups = ReadGroups::new(scan.options().footer_bytes_read_together);
    for file in selected {
        // A sorted read needs every file at once.
        let group = match config.order_by.is_empty() {
            true => read_groups.add(plan.files[file.position].footer_bytes),
            false => 0,
        };
        match groups.get_mut(group) {
            Some(files) => files.push(file),
            None => groups.push(vec![file]),
        }
    }
    let mut groups = groups.into_iter();
    let mut first = TaskPlan::of_row_groups(scan, groups.next().unwrap_or_default())?;
    adjust(&mut first);
    let (schema, stream) = read_task(&first, config.clone(), counted_in)?;
    let later: Vec<_> = groups.collect();
    if later.is_empty() {
        return Ok((schema, stream));
    }
    let rows = later.iter().map(|group| rows_read(plan, group)).collect();
    let scan = Arc::clone(scan);
    let counted_in = counted_in.cloned();
    let mut groups: Vec<_> = later.into_iter().map(Some).collect();
    let open = move |index: usize, limit: Option<usize>| {
        let group = groups.get_mut(index).and_then(Option::take).ok_or_else(|| {
            crate::error::PqsiftError::Internal(format!("group {index} of a read's files opened twice"))
        })?;
        let positions: Vec<usize> = group.iter().map(|file| file.position).collect();
        let mut task = TaskPlan::of_row_groups(&scan, group)?;
        for position in positions {
            scan.release(position);
        }
        adjust(&mut task);
        let config = ReaderConfig { limit, first_batches_soon: false, ..config.clone() };
        Ok(read_task(&task, config, counted_in.as_ref())?.1)
    };
    Ok((schema, stream.followed_by(LaterGroups::new(rows, open))))
}

/// The rows `group`'s row groups scan (their selections', before the filter).
fn rows_read(plan: &ScanPlan, group: &[FileReads]) -> u64 {
    group
        .iter()
        .flat_map(|file| {
            file.row_groups.iter().map(|(index, _)| plan.files[file.position].row_groups[*index].selected_rows())
        })
        .map(|rows| rows as u64)
        .sum()
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
/// let scan = std::sync::Arc::new(Scan::new(vec![std::path::Path::new("events.parquet")], None, Some("amount > 900"), ScanOptions::default()).unwrap());
/// let rows = count_rows(&scan, &scan.plan().unwrap(), ReaderConfig::default()).unwrap();
/// ```
pub fn count_rows(scan: &Arc<Scan>, plan: &ScanPlan, config: ReaderConfig) -> Result<u64> {
    if scan.filter().is_none() && !scan.declared().is_some_and(|d| d.has_deletes()) {
        let rows = plan.files.iter().flat_map(|file| &file.row_groups).map(|rg| rg.selected_rows() as u64);
        return Ok(rows.sum());
    }
    let config = ReaderConfig { limit: None, order_by: Vec::new(), spark_output: false, ..config };
    // The filter's columns only.
    let (_, mut stream) = read_in_groups(scan, plan, config, None, |task| task.columns = Some(Vec::new()))?;
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
