//! The output stream of a scan: row groups read in parallel by a bounded pool, batches
//! handed out in file / row-group order, memory bounded, stopping early for a limit.
//!
//! Workers take the next row group task only while it is fewer than `window` tasks ahead of
//! the one the consumer waits for, so at most `window` decoded row groups are held at once
//! whatever the consumer's pace. A task whose filter passes more rows than decode at once
//! hands them over as parts, which idle workers (and the consumer) decode next, in order,
//! a few ahead of the consumer. Dropping the stream cancels the workers.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use arrow::array::RecordBatch;
use arrow::compute::SortOptions;
use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatchReader;

use crate::error::{PqsiftError, Result};
use crate::reading::cached_reader::SharedArrayCache;
use crate::reading::row_filter::RowFilter;
use crate::reading::row_group_reader::{FileReader, ReadMetrics, ReadOptions, RootColumns};
use crate::reading::top_rows::TopRows;
use crate::selection::RowSelection;

/// One file of a scan, ready to read.
#[derive(Debug)]
pub struct ScanFile {
    /// The opened file, predicates bound to its schema.
    pub reader: FileReader,
    /// The filter's predicates for this file.
    pub filter: RowFilter,
    /// Root column indices to output, in output order.
    pub projection: Vec<usize>,
    /// Per output column, the struct field names below its root (empty: the whole root).
    pub paths: Vec<Vec<String>>,
    /// Roots read only through paths: the Parquet leaves to decode for them.
    pub leaf_subsets: crate::reading::row_group_reader::LeafSubsets,
    /// The schema of the file's own columns (before partition columns are added).
    pub output: SchemaRef,
    /// How the file's batches become output batches (partition columns put in place, a
    /// declared schema's types), when the table needs it.
    pub assembly: Option<OutputAssembly>,
}

/// Where an output column comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputColumn {
    /// Column `i` of the file's projected batch.
    File(usize),
    /// Partition column `k`: the file's value, the same on every row.
    Partition(usize),
    /// Nulls: a struct field the file does not hold (a declared table's schema evolved).
    Null,
}

/// How one file's decoded columns become output batches: partition columns (and other
/// per-file constants) put in place and, for a declared (Delta) schema, decoded columns
/// turned into the declared types.
#[derive(Debug, Clone)]
pub struct OutputAssembly {
    /// Per output column, where it comes from.
    pub columns: Vec<OutputColumn>,
    /// The file's partition values (one row).
    pub values: crate::table::partition_values::PartitionValues,
    /// The output schema.
    pub output: SchemaRef,
    /// For a declared schema, how the file's struct fields are matched (and whether the
    /// file holds field ids): decoded columns whose type differs from the output's are
    /// converted (see [`crate::table::schema_adapter::to_logical`]).
    pub declared: Option<(crate::table::column_matching::ColumnMatcher, bool)>,
}

impl OutputAssembly {
    /// `batch` (the file's columns) as an output batch: partition columns and other
    /// constants put in place, decoded columns in the declared types.
    pub fn assemble(&self, batch: RecordBatch) -> Result<RecordBatch> {
        let rows = batch.num_rows();
        let columns = self
            .columns
            .iter()
            .zip(self.output.fields())
            .map(|(source, field)| match source {
                OutputColumn::File(i) => match self.declared {
                    Some((matcher, file_has_ids)) => crate::table::schema_adapter::to_logical(
                        batch.column(*i),
                        field.data_type(),
                        &matcher,
                        file_has_ids,
                    ),
                    None => Ok(Arc::clone(batch.column(*i))),
                },
                OutputColumn::Partition(k) => self.values.repeated(*k, 0, rows),
                OutputColumn::Null => Ok(arrow::array::new_null_array(field.data_type(), rows)),
            })
            .collect::<Result<Vec<_>>>()?;
        let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(Arc::clone(&self.output), columns, &options)?)
    }
}

/// One row group to read.
#[derive(Debug, Clone)]
pub struct ScanTask {
    /// Index into the scan's files.
    pub file: usize,
    /// Row group index in that file.
    pub row_group: usize,
    /// The access plan's selection (`None`: every row).
    pub selection: Option<RowSelection>,
    /// Only these rows of the row group (a window of a large one, see
    /// [`row_windows`](crate::reading::row_windows)); `None`: all of them.
    pub window: Option<std::ops::Range<usize>>,
}

impl ScanTask {
    /// The task reading row group `row_group` of file `file`, the rows of `selection`.
    pub fn new(file: usize, row_group: usize, selection: Option<RowSelection>) -> Self {
        Self { file, row_group, selection, window: None }
    }

    /// The rows this task reads of `file`: its selection's, before the filter.
    fn rows_read(&self, file: &ScanFile) -> usize {
        let row_count = usize::try_from(file.reader.metadata().row_group(self.row_group).num_rows()).unwrap_or(0);
        match (&self.selection, &self.window) {
            (None, None) => row_count,
            (Some(selection), None) => selection.selected_count(),
            (None, Some(window)) => window.len(),
            (Some(_), Some(window)) => {
                self.rows(row_count).ok().flatten().map_or(window.len(), |selection| selection.selected_count())
            }
        }
    }

    /// The selection to read: the plan's, limited to the window.
    pub(crate) fn rows(&self, row_count: usize) -> Result<Option<RowSelection>> {
        let Some(window) = &self.window else { return Ok(self.selection.clone()) };
        let in_window = RowSelection::from_ranges(std::slice::from_ref(window), row_count)?;
        Ok(Some(match &self.selection {
            Some(selection) => selection.intersection(&in_window)?,
            None => in_window,
        }))
    }
}

/// `tasks` with each row group too large to decode at once (see
/// [`row_windows`](crate::reading::row_windows)) replaced by one task per window, in row
/// order. With a `limit` (`first_rows`), or for a consumer that may stop after its first
/// batches (`soon`) a filter on local files, the first windows are 1/64 of
/// `decode_bytes`, each run of them twice the last, up to `decode_bytes`: a read that
/// stops after a few rows decodes little more than it needed, and a consumer bounding a
/// filter's output learns from the first batches whether it will pass. Other reads start
/// whole: a page straddling small windows is decompressed for each of them, and from an
/// object store a window is a round trip of its own.
fn split_into_windows(
    files: &[ScanFile],
    tasks: Vec<ScanTask>,
    decode_bytes: u64,
    pushdown: bool,
    first_rows: bool,
    soon: bool,
) -> Vec<ScanTask> {
    const SMALLEST: usize = 64;
    let leaves: Vec<Vec<usize>> = files.iter().map(|f| f.leaves_windowed(pushdown)).collect();
    let mut out = Vec::with_capacity(tasks.len());
    // Smallest windows per output window while growing (SMALLEST: grown).
    let mut run = 1;
    for task in tasks {
        let file = &files[task.file];
        let metadata = file.reader.metadata();
        let remote = file.reader.is_remote();
        let starts_small = first_rows || (soon && !remote && !file.filter.predicates().is_empty());
        if !starts_small {
            run = SMALLEST;
        }
        // A read without row filter outputs every decoded row: its plain strings come as views.
        let views = file.filter.predicates().is_empty();
        let small = run < SMALLEST;
        let budget = if small { (decode_bytes / SMALLEST as u64).max(1) } else { decode_bytes };
        let planned = crate::reading::row_windows::plan(
            metadata,
            task.row_group,
            &leaves[task.file],
            task.selection.as_ref(),
            remote,
            budget,
            views,
        );
        let Some(windows) = planned else {
            run = (run * 2).min(SMALLEST);
            out.push(task);
            continue;
        };
        let mut next = 0;
        while next < windows.len() {
            // Small windows are merged in runs of `run` (up to SMALLEST: about decode_bytes).
            let take = if small { run } else { 1 };
            let end = (next + take).min(windows.len());
            out.push(ScanTask { window: Some(windows[next].start..windows[end - 1].end), ..task.clone() });
            next = end;
            run = (run * 2).min(SMALLEST);
        }
    }
    out
}

impl ScanFile {
    /// The root columns read for output, with their leaf subsets.
    fn projection(&self) -> RootColumns<'_> {
        RootColumns { roots: &self.projection, leaf_subsets: &self.leaf_subsets }
    }

    /// The Parquet leaves a row group's windows are planned on: every leaf of the
    /// predicates' roots and, unless the filter runs first (`pushdown`, with predicates),
    /// of the projection's (only the listed ones of a root read through paths). A filtered
    /// read decodes the projection only for the rows that pass, in parts of its own (see
    /// [`parts`](crate::reading::row_windows::parts)).
    fn leaves_windowed(&self, pushdown: bool) -> Vec<usize> {
        let schema = self.reader.metadata().file_metadata().schema_descr();
        let predicate_roots: Vec<usize> =
            self.filter.predicates().iter().flat_map(|p| p.roots.iter().copied()).collect();
        let projection_too = !pushdown || predicate_roots.is_empty();
        (0..schema.num_columns())
            .filter(|&leaf| {
                let root = schema.get_column_root_idx(leaf);
                predicate_roots.contains(&root)
                    || (projection_too
                        && self.projection.contains(&root)
                        && self.leaf_subsets.get(&root).is_none_or(|subset| subset.contains(&leaf)))
            })
            .collect()
    }
}

/// Row groups read at once from an object store, whatever `threads` is.
pub const REMOTE_ROW_GROUPS_IN_FLIGHT: usize = 8;

/// Where a batch's rows lie: see [`ScanStream::last_batch_source`].
#[derive(Debug, Clone)]
pub struct BatchSource {
    /// Index into the stream's files.
    pub file: usize,
    /// The row group's index in its file.
    pub row_group: usize,
    /// The rows of the row group the batch is a slice of (in order, one output row each;
    /// the same `Arc` for every slice of one), and the offset of the batch's first row in
    /// them; `None` where not known (a filter run on decoded rows, with `pushdown_filters`
    /// off).
    pub rows: Option<(Arc<RowSelection>, usize)>,
}

/// Settings of the stream.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// How rows are read.
    pub read: ReadOptions,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Stop once this many rows are out.
    pub limit: Option<usize>,
    /// Cast every batch to this schema (Spark-compatible output; see
    /// [`crate::reading::spark_output::conform`]).
    pub conform_to: Option<SchemaRef>,
    /// Output the rows sorted (`ORDER BY`), after reading them all.
    pub sort: Option<SortSpec>,
    /// The consumer may stop after its first batches (a read on Spark's driver stops once
    /// the output is on course to pass its bound): a filtered read of local files starts
    /// with small windows, so the first batches come soon (see [`ScanStream::progress`]).
    pub first_batches_soon: bool,
    /// Once more bytes than this have been read (the files' bytes, as
    /// [`ScanStream::bytes_read`] counts them), the next batch is
    /// [`PqsiftError::ReadBudget`](crate::PqsiftError::ReadBudget) and the read stops.
    /// Checked as batches come out: the workers may have read up to a window of row groups
    /// further (a sorted read, every row group, before its first batch).
    pub max_bytes_read: Option<u64>,
}

/// `ORDER BY keys [LIMIT limit]` on the stream's batches.
#[derive(Debug, Clone)]
pub struct SortSpec {
    /// Key columns (indices into the batches) and their order.
    pub keys: Vec<(usize, SortOptions)>,
    /// Rows wanted (`None`: all).
    pub limit: Option<usize>,
    /// Leading columns output: the key columns read only to sort by come after them.
    pub keep_columns: usize,
}

#[derive(Debug, Default)]
struct Progress {
    /// Next task a worker may take.
    next_task: usize,
    /// Next task the consumer waits for.
    next_emit: usize,
    /// Finished tasks not yet consumed.
    done: BTreeMap<usize, Result<TaskOutput>>,
    /// Parts of the rows of the task the consumer took last, still to decode: (task, part
    /// number, its selection), in order. Workers take them before new tasks, at most
    /// `threads` parts (of half `decode_bytes` each) ahead of the consumer.
    part_jobs: VecDeque<(usize, usize, RowSelection)>,
    /// Decoded parts not yet consumed, by part number.
    parts_done: BTreeMap<usize, Result<RecordBatch>>,
    /// Parts of that task consumed so far.
    parts_consumed: usize,
}

/// What a worker does next.
enum Job {
    Task(usize),
    Part(usize, usize, RowSelection),
}

/// What a task hands the consumer: its batch or, when the rows passing its filter were
/// too many to decode at once, the selections of their parts (decoded next,
/// in order, by idle workers and the consumer: at most `threads` parts ahead of it, so
/// memory stays bounded by `decode_bytes`).
#[derive(Debug)]
struct TaskOutput {
    batch: RecordBatch,
    /// The rows `batch` holds, of the row group's (`None`: not known).
    rows: Option<RowSelection>,
    parts: Vec<RowSelection>,
}

#[derive(Debug)]
struct Shared {
    files: Vec<ScanFile>,
    tasks: Vec<ScanTask>,
    options: StreamOptions,
    cache: Arc<SharedArrayCache>,
    window: usize,
    progress: Mutex<Progress>,
    changed: Condvar,
    cancelled: AtomicBool,
    metrics: Mutex<ReadMetrics>,
    /// Rows handed to the consumer: row groups read ahead of a limit are not output.
    rows_emitted: AtomicU64,
    /// The output schema (batches are cast to it when `string_view` is on).
    schema: SchemaRef,
    /// Per file, its tasks not yet run: a file whose last task has run is closed (a part
    /// read later opens it again).
    tasks_left: Vec<AtomicUsize>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a change for at most one interrupt-check slice, so that the caller can
    /// interrupt a long row group; the check (which may wait for Python's lock) is made
    /// with the progress lock released. Returns the lock again, and whether to stop.
    fn wait_slice<'a>(
        &'a self,
        progress: std::sync::MutexGuard<'a, Progress>,
    ) -> (std::sync::MutexGuard<'a, Progress>, bool) {
        let (progress, waited) =
            self.changed.wait_timeout(progress, crate::interrupt::CHECK_EVERY).unwrap_or_else(|p| p.into_inner());
        if !waited.timed_out() {
            return (progress, false);
        }
        drop(progress);
        let interrupted = crate::interrupt::interrupted();
        (self.lock(), interrupted)
    }

    fn worker(self: Arc<Self>) {
        loop {
            let job = {
                let mut progress = self.lock();
                loop {
                    if self.cancelled.load(Ordering::Relaxed) {
                        return;
                    }
                    // Parts decoded ahead of the consumer, beside the one it holds: one per
                    // thread keeps every worker busy while memory stays within a few parts
                    // (the A/B measurement is in the reading design page).
                    let ahead = self.options.threads.max(1);
                    if progress
                        .part_jobs
                        .front()
                        .is_some_and(|&(_, number, _)| number < progress.parts_consumed + ahead)
                    {
                        let (task, number, part) = progress.part_jobs.pop_front().expect("a part job");
                        break Job::Part(task, number, part);
                    }
                    let tasks_left = progress.next_task < self.tasks.len();
                    if tasks_left && progress.next_task < progress.next_emit + self.window {
                        progress.next_task += 1;
                        break Job::Task(progress.next_task - 1);
                    }
                    // Every task taken and consumed, no part left: done. (Until then the
                    // consumer may still hand out parts.)
                    if !tasks_left && progress.next_emit >= self.tasks.len() && progress.part_jobs.is_empty() {
                        return;
                    }
                    progress = self.changed.wait(progress).unwrap_or_else(|p| p.into_inner());
                }
            };
            match job {
                Job::Task(index) => {
                    let result = self.run(index);
                    self.lock().done.insert(index, result);
                }
                Job::Part(index, number, part) => {
                    let result = self.run_part(index, &part);
                    self.lock().parts_done.insert(number, result);
                }
            }
            self.changed.notify_all();
        }
    }

    fn run(&self, index: usize) -> Result<TaskOutput> {
        let task = &self.tasks[index];
        let file = &self.files[task.file];
        let row_count = file.reader.metadata().row_group(task.row_group).num_rows().max(0) as usize;
        let selection = task.rows(row_count)?;
        let read = self.guarded(index, || {
            file.reader.read_row_group(
                task.row_group,
                selection.as_ref(),
                file.projection(),
                &file.filter,
                &self.options.read,
                &self.cache,
            )
        })?;
        let mut metrics = read.metrics;
        metrics.windows = u64::from(task.window.is_some());
        self.metrics.lock().unwrap_or_else(|p| p.into_inner()).add(&metrics);
        if self.tasks_left[task.file].fetch_sub(1, Ordering::AcqRel) == 1 {
            file.reader.release();
        }
        Ok(TaskOutput { batch: self.output_batch(index, read.batch)?, rows: read.rows, parts: read.parts })
    }

    /// The rows of `part` (a part task `index` left) of its row group, as an output batch.
    fn run_part(&self, index: usize, part: &RowSelection) -> Result<RecordBatch> {
        let task = &self.tasks[index];
        let file = &self.files[task.file];
        let (batch, mut metrics) = self.guarded(index, || {
            file.reader.read_rows(task.row_group, part, file.projection(), &self.options.read, &self.cache)
        })?;
        metrics.projection_parts = 1;
        self.metrics.lock().unwrap_or_else(|p| p.into_inner()).add(&metrics);
        self.output_batch(index, batch)
    }

    /// `read()` for task `index`, its errors naming the file and row group. A panic in the
    /// parquet crate on a malformed file must not take the process down: it is an error too.
    fn guarded<T>(&self, index: usize, read: impl FnOnce() -> Result<T>) -> Result<T> {
        let task = &self.tasks[index];
        let file = &self.files[task.file];
        let name = file.reader.name();
        let number = file.reader.row_group_number(task.row_group);
        crate::error::panics_as_corrupt(name, format_args!("row group {number}: the decoder"), read)
            .map_err(|e| e.in_file(name, format_args!("row group {number}")))
    }

    /// Task `index`'s decoded `batch` as the scan outputs it: struct fields extracted,
    /// partition columns put in place, cast as the options say.
    fn output_batch(&self, index: usize, batch: RecordBatch) -> Result<RecordBatch> {
        let file = &self.files[self.tasks[index].file];
        let mut batch = crate::filter::projection::extract_fields(batch, &file.paths, &file.output)?;
        if let Some(assembly) = &file.assembly {
            batch = assembly.assemble(batch)?;
        }
        let batch = match &self.options.conform_to {
            Some(target) => crate::reading::spark_output::conform(batch, target)?,
            None => batch,
        };
        match self.options.read.string_view {
            true => crate::reading::string_views::cast_to(batch, &self.schema),
            false => Ok(batch),
        }
    }
}

/// Reads a stream's metrics, whoever consumes the stream.
#[derive(Debug, Clone)]
pub struct MetricsHandle {
    reads: Arc<Mutex<GroupsRead>>,
}

/// What a stream has read: its current group of files, and the groups it finished.
#[derive(Debug)]
struct GroupsRead {
    /// `None` between groups.
    current: Option<Arc<Shared>>,
    /// The finished groups' metrics (their rows output included) and bytes read.
    earlier: ReadMetrics,
    earlier_bytes: u64,
}

impl GroupsRead {
    fn lock(reads: &Mutex<Self>) -> std::sync::MutexGuard<'_, Self> {
        reads.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Shared {
    /// This group's metrics, its rows handed out counted.
    fn metrics_now(&self) -> ReadMetrics {
        let mut metrics = self.metrics.lock().unwrap_or_else(|p| p.into_inner()).clone();
        metrics.rows_out = self.rows_emitted.load(Ordering::Relaxed);
        metrics
    }

    fn bytes_read(&self) -> u64 {
        self.files.iter().map(|f| f.reader.bytes_read()).sum()
    }
}

impl MetricsHandle {
    /// What reading has done so far, summed over row groups; `rows_out` counts the rows
    /// handed to the consumer.
    pub fn metrics(&self) -> ReadMetrics {
        let reads = GroupsRead::lock(&self.reads);
        let mut metrics = reads.earlier.clone();
        if let Some(current) = &reads.current {
            metrics.add(&current.metrics_now());
        }
        metrics
    }

    /// Bytes read from the files so far.
    pub fn bytes_read(&self) -> u64 {
        let reads = GroupsRead::lock(&self.reads);
        reads.earlier_bytes + reads.current.as_ref().map_or(0, |current| current.bytes_read())
    }
}

/// The files a stream reads after its own, in groups opened one after the other: the
/// footers of one group are held at a time (see [`ScanStream::followed_by`]).
pub struct LaterGroups {
    /// Opens group `i` (0: the first after the stream's own) to output at most `limit`
    /// rows (`None`: all).
    open: Box<dyn FnMut(usize, Option<usize>) -> Result<ScanStream> + Send + Sync>,
    /// Per group, the rows it scans (before the filter): the read's progress counts them
    /// before they are opened.
    rows: Vec<u64>,
    next: usize,
}

impl LaterGroups {
    /// `rows.len()` groups: `open(i, limit)` opens group `i` (0: the first after the
    /// stream's own) to output at most `limit` rows (`None`: all), and `rows[i]` is the
    /// rows it scans.
    pub fn new(
        rows: Vec<u64>,
        open: impl FnMut(usize, Option<usize>) -> Result<ScanStream> + Send + Sync + 'static,
    ) -> Self {
        Self { open: Box::new(open), rows, next: 0 }
    }

    fn rows_left(&self) -> u64 {
        self.rows[self.next..].iter().sum()
    }
}

impl std::fmt::Debug for LaterGroups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaterGroups").field("groups", &self.rows.len()).field("next", &self.next).finish()
    }
}

/// A lazy stream of record batches of at most `batch_size` rows.
///
/// It is an Arrow [`RecordBatchReader`], so it exports to Python as an Arrow C stream.
/// It reads one group of files at a time: its own, then those of [`LaterGroups`].
#[derive(Debug)]
pub struct ScanStream {
    schema: SchemaRef,
    /// The group being read; `None` once it is done (its footers let go before the next
    /// group's are read).
    group: Option<GroupStream>,
    later: Option<LaterGroups>,
    reads: Arc<Mutex<GroupsRead>>,
    /// The finished groups' progress: rows scanned, rows to scan, and rows output.
    scanned_before: u64,
    to_scan_before: u64,
    rows_out_before: usize,
    /// The read's limit (each group's is what is left of it).
    limit: Option<usize>,
    /// The read stops with an error once it has read more bytes than this.
    max_bytes_read: Option<u64>,
}

/// The read of one group of files.
#[derive(Debug)]
struct GroupStream {
    shared: Arc<Shared>,
    /// Slices of the last batch read, each with its first row's offset in that batch.
    pending: VecDeque<(RecordBatch, usize)>,
    rows_out: usize,
    finished: bool,
    /// With a sort: whether every row has been read and sorted.
    sorted: bool,
    /// The task whose rows the batches handed out now come from (index into the tasks),
    /// the rows of its row group the batch being handed out in slices holds (where known),
    /// and the offset in it of the last slice handed out.
    emitting: Option<usize>,
    emitting_rows: Option<Arc<RowSelection>>,
    emitted_offset: usize,
    /// The rows of each part of the last task's rows.
    part_rows: Vec<RowSelection>,
    /// Parts of the last task's rows still to consume, and the number of the next.
    parts_left: usize,
    next_part: usize,
    /// Per task, the rows it reads (its selection's, before the filter), and their sum.
    task_rows: Vec<u64>,
    rows_to_scan: u64,
    /// Rows of the tasks whose output has been handed over, and of the task whose parts
    /// are being handed over (counted with its last part).
    rows_scanned: u64,
    rows_scanning: u64,
}

impl ScanStream {
    /// Starts reading `tasks` of `files` with `options.threads` workers; `schema` is the
    /// output schema every batch has.
    pub fn start(
        schema: SchemaRef,
        files: Vec<ScanFile>,
        tasks: Vec<ScanTask>,
        options: StreamOptions,
        cache: Arc<SharedArrayCache>,
    ) -> Self {
        // From an object store a row group spends most of its time waiting on requests:
        // more row groups in flight hide the latency (the next ones are fetched while these
        // decode). Decoding stays bounded by the window of row groups held.
        let remote = files.iter().any(|f| f.reader.is_remote());
        let wanted = if remote { options.threads.max(REMOTE_ROW_GROUPS_IN_FLIGHT) } else { options.threads };
        // A limit read in file order needs the first rows only: its first row groups are read
        // in windows that grow, and no window outputs more than the limit.
        let first_rows = options.limit.filter(|_| options.sort.is_none());
        let tasks = split_into_windows(
            &files,
            tasks,
            options.read.decode_bytes,
            options.read.pushdown_filters,
            first_rows.is_some(),
            options.first_batches_soon,
        );
        let mut options = options;
        options.read.row_limit = first_rows;
        let schema = match options.read.string_view {
            true => crate::reading::string_views::view_schema(&schema).unwrap_or(schema),
            false => schema,
        };
        // Key columns read only to sort by are not output.
        let schema = match &options.sort {
            Some(sort) if sort.keep_columns < schema.fields().len() => Arc::new(
                schema.project(&(0..sort.keep_columns).collect::<Vec<_>>()).unwrap_or_else(|_| schema.as_ref().clone()),
            ),
            _ => schema,
        };
        // Decoded views go out as they are unless the file's batches are reshaped first.
        options.read.keep_views = options.read.string_view
            && options.conform_to.is_none()
            && files.iter().all(|f| f.assembly.is_none() && f.paths.iter().all(Vec::is_empty));
        let threads = wanted.max(1).min(tasks.len().max(1));
        // Fewer row groups than threads: the spare threads decode columns instead.
        options.read.column_threads = (options.threads.max(1) / threads).max(1);
        let window = threads + options.threads.max(1);
        let mut tasks_left: Vec<AtomicUsize> = files.iter().map(|_| AtomicUsize::new(0)).collect();
        for task in &tasks {
            *tasks_left[task.file].get_mut() += 1;
        }
        let task_rows: Vec<u64> = tasks.iter().map(|task| task.rows_read(&files[task.file]) as u64).collect();
        let rows_to_scan = task_rows.iter().sum();
        let shared = Arc::new(Shared {
            files,
            tasks,
            tasks_left,
            window,
            options,
            cache,
            progress: Mutex::new(Progress::default()),
            changed: Condvar::new(),
            cancelled: AtomicBool::new(false),
            metrics: Mutex::new(ReadMetrics::default()),
            rows_emitted: AtomicU64::new(0),
            schema: schema.clone(),
        });
        for _ in 0..threads {
            let worker = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("pqsift-reader".into())
                .spawn(move || worker.worker())
                .expect("spawning a reader thread");
        }
        let limit = shared.options.limit;
        let max_bytes_read = shared.options.max_bytes_read;
        let reads = Arc::new(Mutex::new(GroupsRead {
            current: Some(Arc::clone(&shared)),
            earlier: ReadMetrics::default(),
            earlier_bytes: 0,
        }));
        let group = GroupStream {
            shared,
            pending: VecDeque::new(),
            rows_out: 0,
            finished: false,
            sorted: false,
            emitting: None,
            emitting_rows: None,
            emitted_offset: 0,
            part_rows: Vec::new(),
            parts_left: 0,
            next_part: 0,
            task_rows,
            rows_to_scan,
            rows_scanned: 0,
            rows_scanning: 0,
        };
        Self {
            schema,
            group: Some(group),
            later: None,
            reads,
            scanned_before: 0,
            to_scan_before: 0,
            rows_out_before: 0,
            limit,
            max_bytes_read,
        }
    }

    /// This stream, then `later`'s groups of files, each opened once the one before has
    /// output its last row (and not at all once the limit is reached): a read of many
    /// files holds the footers of one group at a time. Every group must output this
    /// stream's schema, and have no sort.
    pub fn followed_by(mut self, later: LaterGroups) -> Self {
        self.later = Some(later);
        self
    }

    /// How far the read is, in rows before the filter: `(scanned, total)`, where `scanned`
    /// counts the rows of the row groups (and windows) whose output the consumer has been
    /// given (a task's with its first batch, or with the last part of rows passing its
    /// filter in parts) and `total` those of every one to read. The output so far, scaled
    /// by `total / scanned`, estimates the whole output: a consumer that stops past a bound
    /// sees it early.
    ///
    /// ```
    /// # use pqsift::reading::scan_stream::ScanStream;
    /// fn on_course_to_pass(stream: &ScanStream, output_bytes: u64, bound: u64) -> bool {
    ///     let (scanned, total) = stream.progress();
    ///     output_bytes as u128 * total as u128 > bound as u128 * scanned as u128
    /// }
    /// ```
    pub fn progress(&self) -> (u64, u64) {
        let later = self.later.as_ref().map_or(0, LaterGroups::rows_left);
        let (scanned, to_scan) = self.group.as_ref().map_or((0, 0), |group| (group.rows_scanned, group.rows_to_scan));
        (self.scanned_before + scanned, self.to_scan_before + to_scan + later)
    }

    /// What reading has done so far, summed over row groups.
    pub fn metrics(&self) -> ReadMetrics {
        self.metrics_handle().metrics()
    }

    /// Counts work done for this stream elsewhere (a first pass over the same files), and
    /// the bytes it read.
    pub fn add_metrics(&self, metrics: &ReadMetrics, bytes_read: u64) {
        let mut reads = GroupsRead::lock(&self.reads);
        reads.earlier_bytes += bytes_read;
        match &reads.current {
            Some(current) => current.metrics.lock().unwrap_or_else(|p| p.into_inner()).add(metrics),
            None => reads.earlier.add(metrics),
        }
    }

    /// Bytes read from the files so far.
    pub fn bytes_read(&self) -> u64 {
        self.metrics_handle().bytes_read()
    }

    /// A handle that reads the metrics even after the stream was handed to a consumer.
    pub fn metrics_handle(&self) -> MetricsHandle {
        MetricsHandle { reads: Arc::clone(&self.reads) }
    }

    /// Where the last batch's rows lie, for a stream without a sort (a sorted one mixes
    /// row groups); `None` before the first batch, with a sort, or once the read moved to
    /// a later group of files.
    pub fn last_batch_source(&self) -> Option<BatchSource> {
        let group = self.group.as_ref().filter(|group| group.shared.options.sort.is_none())?;
        let task = &group.shared.tasks[group.emitting?];
        let rows = group.emitting_rows.as_ref().map(|rows| (Arc::clone(rows), group.emitted_offset));
        Some(BatchSource { file: task.file, row_group: task.row_group, rows })
    }

    /// The next batch, with errors as [`PqsiftError`] (the `Iterator` impl wraps them in
    /// `ArrowError` for Arrow consumers).
    pub fn next_batch_checked(&mut self) -> Option<Result<RecordBatch>> {
        if let Some(budget) = self.max_bytes_read {
            let bytes_read = self.bytes_read();
            if bytes_read > budget {
                // Dropping the groups stops their workers; nothing more comes.
                (self.group, self.later, self.max_bytes_read) = (None, None, None);
                return Some(Err(PqsiftError::read_budget(bytes_read, budget)));
            }
        }
        loop {
            if let Some(next) = self.group.as_mut().and_then(GroupStream::next_batch) {
                if next.is_err() {
                    // A read that failed stops there, as a single group's does.
                    self.later = None;
                }
                return Some(next);
            }
            if let Some(finished) = self.group.take() {
                self.retire(finished);
            }
            let limit_left = self.limit.map(|limit| limit.saturating_sub(self.rows_out_before));
            let later = self.later.as_mut().filter(|later| later.next < later.rows.len() && limit_left != Some(0))?;
            let index = later.next;
            later.next += 1;
            let opened = (later.open)(index, limit_left).and_then(|next| match next.schema == self.schema {
                true => Ok(next),
                // The scan checks each file against the first as it opens it.
                false => Err(PqsiftError::Internal(format!(
                    "a later group of files outputs the schema {}, not the read's {}",
                    next.schema, self.schema
                ))),
            });
            match opened {
                Ok(ScanStream { group, .. }) => {
                    GroupsRead::lock(&self.reads).current = group.as_ref().map(|group| Arc::clone(&group.shared));
                    self.group = group;
                }
                Err(error) => {
                    self.later = None;
                    return Some(Err(error));
                }
            }
        }
    }

    /// Keeps what the `finished` group did, and lets go of it (its footers, its readers).
    fn retire(&mut self, finished: GroupStream) {
        self.scanned_before += finished.rows_scanned;
        self.to_scan_before += finished.rows_to_scan;
        self.rows_out_before += finished.rows_out;
        let mut reads = GroupsRead::lock(&self.reads);
        reads.earlier.add(&finished.shared.metrics_now());
        reads.earlier_bytes += finished.shared.bytes_read();
        reads.current = None;
    }
}

impl GroupStream {
    /// The group's next batch; `None` once its last is out.
    fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        if let Some(sort) = self.shared.options.sort.clone()
            && !self.sorted
        {
            self.sorted = true;
            if let Err(error) = self.sort_all(sort) {
                self.finish();
                return Some(Err(error));
            }
        }
        loop {
            if let Err(error) = crate::interrupt::check() {
                self.finish();
                return Some(Err(error));
            }
            if let Some((batch, offset)) = self.pending.pop_front() {
                self.emitted_offset = offset;
                self.shared.rows_emitted.fetch_add(batch.num_rows() as u64, Ordering::Relaxed);
                return Some(Ok(batch));
            }
            if self.finished {
                return None;
            }
            let limit = self.shared.options.limit;
            if limit.is_some_and(|l| self.rows_out >= l) {
                self.finish();
                return None;
            }
            let mut batch = match self.next_task_batch() {
                None => {
                    self.finish();
                    return None;
                }
                Some(Ok(batch)) => batch,
                Some(Err(error)) => {
                    self.finish();
                    return Some(Err(error));
                }
            };
            if let Some(limit) = limit {
                let room = limit - self.rows_out;
                if batch.num_rows() > room {
                    batch = batch.slice(0, room);
                }
            }
            self.queue(batch);
        }
    }

    /// Reads every task and queues the rows in order, `sort.limit` of them at most.
    fn sort_all(&mut self, sort: SortSpec) -> Result<()> {
        let mut top = TopRows::new(sort.keys, sort.limit);
        while let Some(batch) = self.next_task_batch() {
            top.push(batch?)?;
        }
        self.finish();
        if let Some(batch) = top.finish()? {
            let kept: Vec<usize> = (0..sort.keep_columns.min(batch.num_columns())).collect();
            self.queue(batch.project(&kept)?);
        }
        Ok(())
    }

    /// The next batch in task order — a task's, or the next part of the last task's rows;
    /// `None` once every task is out.
    fn next_task_batch(&mut self) -> Option<Result<RecordBatch>> {
        if self.parts_left > 0 {
            return Some(self.next_part());
        }
        let mut progress = self.shared.lock();
        let index = progress.next_emit;
        if index >= self.shared.tasks.len() {
            return None;
        }
        loop {
            if let Some(result) = progress.done.remove(&index) {
                progress.next_emit += 1;
                self.emitting = Some(index);
                let rows = self.task_rows[index];
                let result = result.map(|output| {
                    self.emitting_rows = output.rows.map(Arc::new);
                    self.part_rows.clone_from(&output.parts);
                    match output.parts.is_empty() {
                        true => self.rows_scanned += rows,
                        false => self.rows_scanning = rows,
                    }
                    self.parts_left = output.parts.len();
                    self.next_part = 0;
                    progress.parts_consumed = 0;
                    progress.parts_done.clear();
                    progress.part_jobs =
                        output.parts.into_iter().enumerate().map(|(number, part)| (index, number, part)).collect();
                    output.batch
                });
                self.shared.changed.notify_all();
                return Some(result);
            }
            let (guard, interrupted) = self.shared.wait_slice(progress);
            if interrupted {
                return Some(Err(PqsiftError::Interrupted));
            }
            progress = guard;
        }
    }

    /// The next part of the last task's rows: decoded by a worker, or here when none has
    /// taken it yet.
    fn next_part(&mut self) -> Result<RecordBatch> {
        let number = self.next_part;
        let mut progress = self.shared.lock();
        let result = loop {
            if let Some(result) = progress.parts_done.remove(&number) {
                break result;
            }
            if progress.part_jobs.front().is_some_and(|&(_, n, _)| n == number) {
                let (index, _, part) = progress.part_jobs.pop_front().expect("a part job");
                drop(progress);
                let result = self.shared.run_part(index, &part);
                progress = self.shared.lock();
                break result;
            }
            let (guard, interrupted) = self.shared.wait_slice(progress);
            progress = guard;
            if interrupted {
                break Err(PqsiftError::Interrupted);
            }
        };
        progress.parts_consumed += 1;
        self.emitting_rows = self.part_rows.get(number).cloned().map(Arc::new);
        self.next_part += 1;
        self.parts_left -= 1;
        if self.parts_left == 0 {
            self.rows_scanned += std::mem::take(&mut self.rows_scanning);
        }
        self.shared.changed.notify_all();
        result
    }

    /// Hands `batch` out in slices of at most `batch_size` rows.
    fn queue(&mut self, batch: RecordBatch) {
        self.rows_out += batch.num_rows();
        let size = self.shared.options.read.batch_size.max(1);
        let mut offset = 0;
        while offset < batch.num_rows() {
            let len = size.min(batch.num_rows() - offset);
            self.pending.push_back((batch.slice(offset, len), offset));
            offset += len;
        }
    }

    fn finish(&mut self) {
        self.finished = true;
        self.shared.cancelled.store(true, Ordering::Relaxed);
        self.shared.changed.notify_all();
    }
}

impl Drop for GroupStream {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Iterator for ScanStream {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch_checked().map(|r| r.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for ScanStream {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
