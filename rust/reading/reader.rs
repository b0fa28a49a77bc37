//! Opening a scan for reading (the later steps of DataFusion's `ParquetOpener`): resolve
//! the projection, build each file's row filter, and start the [`ScanStream`] over the row
//! groups the access plan kept.

use std::sync::Arc;

use std::collections::{HashMap, HashSet};

use arrow::array::{Array, AsArray, BooleanArray, RecordBatch, RecordBatchOptions, UInt32Array, UInt64Array};
use arrow::compute::SortOptions;
use arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef, TimeUnit, UInt32Type, UInt64Type};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::file::metadata::PageIndexPolicy;

use crate::error::{PqsiftError, Result};
use crate::filter::projection::{Projection, leaf_subsets, resolve_projection, split_column_name};
use crate::filter::sort_key::SortKey;
use crate::filter::{BindOptions, ColumnPath, CompareOp, Expr, Literal};
use crate::format::opener::OpenedFile;
use crate::reading::cached_reader::SharedArrayCache;
use crate::reading::row_filter::RowFilter;
use crate::reading::row_group_reader::{FileReader, ReadMetrics, ReadOptions};
use crate::reading::scan_stream::{
    BatchSource, OutputAssembly, OutputColumn, ScanFile, ScanStream, ScanTask, SortSpec, StreamOptions,
};
use crate::reading::spark_output::spark_schema;
use crate::reading::top_rows::{KeyBound, TopRows};
use crate::reading::topk_threshold::{ThresholdSkipper, tasks_reading};
use crate::selection::RowSelection;
use crate::table::column_matching::has_field_ids;
use crate::table::file_pruning::specialise;
use crate::table::partition_values::PartitionValues;
use crate::table::schema_adapter::{DeclaredSchema, find_field};
use crate::table::source::merge_schemas;

/// What to read and how.
#[derive(Debug, Clone)]
pub struct ReaderConfig {
    /// Top-level columns to output, in order (`None`: all).
    pub columns: Option<Vec<String>>,
    /// The filter (`None`: every row).
    pub filter: Option<Expr>,
    /// Column resolution and the session time zone.
    pub bind: BindOptions,
    /// Late materialization, selection policy, batch size.
    pub read: ReadOptions,
    /// Order predicates by cost.
    pub reorder_filters: bool,
    /// Worker threads.
    pub threads: usize,
    /// Stop after this many rows.
    pub limit: Option<usize>,
    /// Capacity of the decoded-column cache shared by the scan's readers.
    pub cache_bytes: usize,
    /// Output the Arrow types Spark accepts (see [`crate::reading::spark_output`]).
    pub spark_output: bool,
    /// The partition values of the files read, one row per file of [`open_stream`]'s
    /// `files` (`None`: no partition columns).
    pub partitions: Option<PartitionValues>,
    /// The table's declared schema (a Delta table's): output columns are its columns,
    /// mapped onto each file's (see [`crate::table::schema_adapter`]).
    pub declared: Option<Arc<DeclaredSchema>>,
    /// `ORDER BY` (empty: file order); with `limit`, the first `limit` rows in this order.
    pub order_by: Vec<SortKey>,
    /// The unit top-level INT96 timestamps are read in (pyarrow's
    /// `coerce_int96_timestamp_unit`); `None`: microseconds, as Spark reads them, for
    /// Spark's output and a Delta table's schema, else nanoseconds as the file's Arrow
    /// schema says. A value the unit cannot hold is an error, never a wrapped instant.
    pub int96_unit: Option<TimeUnit>,
    /// The reader may stop after the first batches (see
    /// [`StreamOptions::first_batches_soon`](crate::reading::scan_stream::StreamOptions)).
    pub first_batches_soon: bool,
    /// Stop with [`PqsiftError::ReadBudget`] once the read has read more than this many
    /// bytes (see [`StreamOptions::max_bytes_read`](crate::reading::scan_stream::StreamOptions));
    /// a top-k's first pass counts.
    pub max_bytes_read: Option<u64>,
}

impl ReaderConfig {
    /// The unit INT96 roots are decoded in, when not the file schema's nanoseconds.
    fn int96_read_unit(&self) -> Option<TimeUnit> {
        // A Delta schema's `timestamp` is microseconds; a merged or given schema keeps the files'.
        let delta = self.declared.as_ref().is_some_and(|d| !d.schema_string.is_empty());
        self.int96_unit.or((self.spark_output || delta).then_some(TimeUnit::Microsecond))
    }
}

/// The default bound of the decoded-column cache, in bytes.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

impl Default for ReaderConfig {
    fn default() -> Self {
        Self {
            columns: None,
            filter: None,
            bind: BindOptions::default(),
            read: ReadOptions::default(),
            reorder_filters: true,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            limit: None,
            cache_bytes: DEFAULT_CACHE_BYTES,
            spark_output: false,
            partitions: None,
            declared: None,
            order_by: Vec::new(),
            int96_unit: None,
            first_batches_soon: false,
            max_bytes_read: None,
        }
    }
}

/// The output schema of a scan of `file` with `columns` (partition columns of `config`
/// included), in Spark's types when `config.spark_output`.
pub fn output_schema(file: &OpenedFile, config: &ReaderConfig) -> Result<SchemaRef> {
    Ok(FileLayout::of(file, 0, config)?.output_schema)
}

/// The output schema of a scan of a table with a declared schema, from the schema alone
/// (`None` without one): what a scan of no files outputs too.
pub fn declared_output_schema(config: &ReaderConfig) -> Option<Result<SchemaRef>> {
    let declared = config.declared.as_ref()?;
    Some((|| {
        let projection = resolve_projection(&declared.schema, config.columns.as_deref(), &config.bind)?;
        match config.spark_output {
            true => spark_schema(&projection.schema, "the table"),
            false => Ok(projection.schema),
        }
    })())
}

/// How one file's batches become output batches: the file's own projection, and where the
/// partition columns go.
struct FileLayout {
    /// The file's reader metadata (schema, footer, page index).
    metadata: ArrowReaderMetadata,
    /// The projection of the file's own columns.
    file_projection: Projection,
    /// Per output column, where it comes from (`None`: all from the file, in order).
    columns: Option<Vec<OutputColumn>>,
    /// The file's partition values (one row), when the table has partition columns.
    partition_row: Option<PartitionValues>,
    /// The output schema (Spark's types when asked for).
    output_schema: SchemaRef,
    /// The schema of the file's columns and partition columns put together, before any
    /// conversion to Spark's types.
    assembled_schema: SchemaRef,
    /// The filter for this file's rows (partition columns replaced by its values).
    filter: Option<Expr>,
}

impl FileLayout {
    /// The layout of the file at `position` of the scan's files, its output names checked
    /// (see [`check_exportable_names`]).
    fn of(file: &OpenedFile, position: usize, config: &ReaderConfig) -> Result<Self> {
        let layout = Self::unchecked(file, position, config)?;
        check_exportable_names(&layout.output_schema, &file.location.to_string())?;
        Ok(layout)
    }

    fn unchecked(file: &OpenedFile, position: usize, config: &ReaderConfig) -> Result<Self> {
        let metadata = arrow_metadata(file, config.int96_read_unit())?;
        if let Some(declared) = &config.declared {
            return Self::of_declared(file, metadata, position, config, declared);
        }
        let Some(partitions) = &config.partitions else {
            let file_projection = resolve_projection(metadata.schema(), config.columns.as_deref(), &config.bind)?;
            let output_schema = match config.spark_output {
                true => spark_schema_of(file, &file_projection.schema, &file_projection.roots)?,
                false => Arc::clone(&file_projection.schema),
            };
            let assembled_schema = Arc::clone(&file_projection.schema);
            let filter = config.filter.clone();
            return Ok(Self {
                metadata,
                file_projection,
                columns: None,
                partition_row: None,
                output_schema,
                assembled_schema,
                filter,
            });
        };
        let (table_schema, from_partition) =
            merge_schemas(metadata.schema(), &partitions.schema, config.bind.case_sensitive);
        let projection = resolve_projection(&table_schema, config.columns.as_deref(), &config.bind)?;
        // The table schema keeps every file field at its index, so a file column's table
        // root is its file root.
        let mut columns = Vec::with_capacity(projection.roots.len());
        let (mut roots, mut paths, mut fields) = (Vec::new(), Vec::new(), Vec::new());
        for (i, &root) in projection.roots.iter().enumerate() {
            match from_partition[root] {
                Some(k) => columns.push(OutputColumn::Partition(k)),
                None => {
                    columns.push(OutputColumn::File(roots.len()));
                    roots.push(root);
                    paths.push(projection.paths[i].clone());
                    fields.push(projection.schema.field(i).clone());
                }
            }
        }
        let file_schema = Arc::new(Schema::new_with_metadata(fields, projection.schema.metadata().clone()));
        let file_projection = Projection { roots, paths, schema: file_schema };
        let output_schema = match config.spark_output {
            false => Arc::clone(&projection.schema),
            true => {
                let file_part = spark_schema_of(file, &file_projection.schema, &file_projection.roots)?;
                let partition_part = spark_schema(&partitions.schema, &file.location.to_string())?;
                let fields: Vec<_> = projection
                    .schema
                    .fields()
                    .iter()
                    .zip(&columns)
                    .map(|(field, source)| {
                        let typed = match source {
                            OutputColumn::File(j) => file_part.field(*j).data_type().clone(),
                            OutputColumn::Partition(k) => partition_part.field(*k).data_type().clone(),
                            // Only declared schemas have null columns.
                            OutputColumn::Null => field.data_type().clone(),
                        };
                        field.as_ref().clone().with_data_type(typed).with_nullable(true)
                    })
                    .collect();
                Arc::new(Schema::new(fields))
            }
        };
        let filter = match &config.filter {
            Some(filter) => specialise(filter, &table_schema, &from_partition, partitions, position, &config.bind)
                .map_err(|e| PqsiftError::filter(format!("{}: {e}", file.location)))?,
            None => None,
        };
        let partition_row = Some(partitions.select(&[position])?);
        let assembled_schema = projection.schema;
        Ok(Self {
            metadata,
            file_projection,
            columns: Some(columns),
            partition_row,
            output_schema,
            assembled_schema,
            filter,
        })
    }

    /// The layout of a file of a table with a declared schema: every output column is a
    /// declared column (or a struct field of one), read from the file under its physical
    /// name, or a constant of the file (partition value, null where the file lacks it).
    fn of_declared(
        file: &OpenedFile,
        metadata: ArrowReaderMetadata,
        position: usize,
        config: &ReaderConfig,
        declared: &DeclaredSchema,
    ) -> Result<Self> {
        let file_schema = Arc::clone(metadata.schema());
        let named = |e: PqsiftError| match e {
            e @ (PqsiftError::SchemaMismatch { .. } | PqsiftError::Filter { .. }) => e.in_file_named(&file.location),
            e => PqsiftError::filter(e.to_string()).in_file_named(&file.location),
        };
        let projection =
            resolve_projection(&declared.schema, config.columns.as_deref(), &config.bind).map_err(named)?;
        let declared = &declared
            .requested_by(
                config.columns.as_ref().map(|_| projection.roots.as_slice()),
                config.filter.as_ref(),
                &config.bind,
            )
            .map_err(named)?;
        let view = declared.view(&file_schema, config.partitions.as_ref(), position, &config.bind).map_err(named)?;
        let mut columns = Vec::with_capacity(projection.roots.len());
        let (mut roots, mut paths, mut fields) = (Vec::new(), Vec::new(), Vec::new());
        for (i, &root) in projection.roots.iter().enumerate() {
            let Some(file_root) = view.file_roots[root] else {
                columns.push(OutputColumn::Partition(view.from_constant[root].expect("a constant column")));
                continue;
            };
            let physical = declared
                .file_field_path(root, file_root, &projection.paths[i], &view, config.bind.case_sensitive)
                .map_err(named)?;
            if physical.len() < projection.paths[i].len() {
                columns.push(OutputColumn::Null); // a struct field the file lacks
                continue;
            }
            match field_at(file_schema.field(file_root), &physical) {
                Some((names, field)) => {
                    columns.push(OutputColumn::File(roots.len()));
                    roots.push(file_root);
                    paths.push(names);
                    fields.push(field);
                }
                None => columns.push(OutputColumn::Null),
            }
        }
        let file_projection = Projection { roots, paths, schema: Arc::new(Schema::new(fields)) };
        let output_schema = match config.spark_output {
            true => spark_schema(&projection.schema, &file.location.to_string())?,
            false => Arc::clone(&projection.schema),
        };
        let filter = declared.row_filter(config.filter.as_ref(), &view, &config.bind).map_err(named)?;
        Ok(Self {
            metadata,
            file_projection,
            columns: Some(columns),
            partition_row: Some(view.constants),
            output_schema,
            assembled_schema: projection.schema,
            filter,
        })
    }

    /// `true` when the file's filter is the constant FALSE: no row of it can match.
    fn matches_nothing(&self) -> bool {
        matches!(&self.filter, Some(Expr::Literal(crate::filter::Literal::Boolean(false))))
    }
}

/// The field at `path` (struct field names, matched exactly, else case-insensitively)
/// below `root`: the names as the file spells them, and the field as the projection
/// outputs it (the whole root, or the field named by its last part, nullable).
fn field_at(root: &arrow::datatypes::Field, path: &[String]) -> Option<(Vec<String>, arrow::datatypes::Field)> {
    let mut field = root;
    let mut names = Vec::with_capacity(path.len());
    for name in path {
        let arrow::datatypes::DataType::Struct(children) = field.data_type() else { return None };
        let child = &children[find_field(children, name, false)?];
        names.push(child.name().clone());
        field = child.as_ref();
    }
    Some(match names.is_empty() {
        true => (names, root.clone()),
        false => (names, field.clone().with_nullable(true)),
    })
}

/// Fails where a name in `schema` (of a column or a field within one) holds a NUL byte:
/// every batch leaves for Python through Arrow's C data interface, which carries names as
/// C strings. Parquet allows the byte (a damaged footer has it); only the columns read are
/// asked.
fn check_exportable_names(schema: &Schema, path: &str) -> Result<()> {
    fn with_nul(field: &Field) -> Option<&Field> {
        if field.name().contains('\0') {
            return Some(field);
        }
        match field.data_type() {
            DataType::Struct(fields) => fields.iter().find_map(|f| with_nul(f)),
            DataType::List(item)
            | DataType::LargeList(item)
            | DataType::ListView(item)
            | DataType::LargeListView(item)
            | DataType::FixedSizeList(item, _)
            | DataType::Map(item, _) => with_nul(item),
            _ => None,
        }
    }
    for column in schema.fields() {
        if let Some(field) = with_nul(column) {
            let name = match std::ptr::eq(field, column.as_ref()) {
                true => format!("the column name {:?}", column.name()),
                false => format!("the name {:?} of a field in column {:?}", field.name(), column.name()),
            };
            let reason = format!(
                "{name} holds a NUL byte, which Arrow's C data interface cannot carry to Python: read the other columns"
            );
            let column = crate::filter::ColumnPath::new([column.name()]).name();
            return Err(PqsiftError::unsupported(path, reason).about_column(column));
        }
    }
    Ok(())
}

/// `schema` (the roots `roots` of `file`) in Spark's types.
fn spark_schema_of(file: &OpenedFile, schema: &Schema, roots: &[usize]) -> Result<SchemaRef> {
    // INT96 timestamps, top-level or inside structs, lists and maps, are Spark's
    // `timestamp`: labelled instants as filters see them (`spark_schema` maps a labelled
    // timestamp to Spark's).
    let instants = crate::format::opener::filter_schema(&file.schema, file.metadata.file_metadata());
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .zip(roots)
        .map(|(field, &root)| match instants.fields().get(root) {
            Some(full) => Arc::new(
                field
                    .as_ref()
                    .clone()
                    .with_data_type(crate::format::opener::instants_like(field.data_type(), full.data_type())),
            ),
            None => Arc::clone(field),
        })
        .collect();
    spark_schema(&Schema::new_with_metadata(fields, schema.metadata().clone()), &file.location.to_string())
}

/// Starts reading `tasks` (row groups, in output order) of `files`.
///
/// Every file's projection and filter are resolved before any data is read, so an unknown
/// column or a bad filter fails here.
pub fn open_stream(files: &[OpenedFile], tasks: Vec<ScanTask>, config: &ReaderConfig) -> Result<ScanStream> {
    let (narrowed, first_pass) = narrow_to_top_rows(files, &tasks, config)?;
    let (narrowed, tasks) = match narrowed {
        Some((narrowed, kept)) => (Some(narrowed), kept),
        None => (None, tasks),
    };
    let config = narrowed.as_ref().unwrap_or(config);
    let (sorting, sort) = sort_columns(files, config)?;
    let config = sorting.as_ref().unwrap_or(config);
    if let Some(partitions) = &config.partitions
        && partitions.len() != files.len()
    {
        return Err(PqsiftError::filter(format!(
            "{} files but partition values for {}",
            files.len(),
            partitions.len()
        )));
    }
    let mut scan_files = Vec::with_capacity(files.len());
    // One tally of the rows the filter keeps, for every file's row filter.
    let pass_rate = Arc::new(crate::reading::row_filter::PassRate::default());
    let mut schema: Option<SchemaRef> = None;
    let mut first_file_part: Option<SchemaRef> = None;
    let mut empty_files = Vec::new();
    for (position, file) in files.iter().enumerate() {
        let layout = FileLayout::of(file, position, config)?;
        let projection = &layout.file_projection;
        match &first_file_part {
            // A declared schema's files may differ: each is mapped onto the schema.
            _ if config.declared.is_some() => {}
            None => first_file_part = Some(Arc::clone(&projection.schema)),
            Some(first) if first.fields() != projection.schema.fields() => {
                return Err(PqsiftError::corrupt(
                    &file.location,
                    format!("its columns {} differ from the scan's first file {first}", projection.schema),
                ));
            }
            Some(_) => {}
        }
        if schema.is_none() {
            schema = Some(Arc::clone(&layout.output_schema));
        }
        if layout.matches_nothing() {
            empty_files.push(position);
        }
        let metadata = layout.metadata;
        let file_has_ids = has_field_ids(metadata.schema().fields());
        // Computed once: the row filter and the file's reader bind to the same labels.
        let filter_schema =
            crate::format::opener::filter_schema(metadata.schema(), metadata.metadata().file_metadata());
        let filter = RowFilter::build(
            layout.filter.as_ref(),
            &filter_schema,
            metadata.metadata(),
            &config.bind,
            config.reorder_filters,
        )?
        .sharing_pass_rate(Arc::clone(&pass_rate));
        let leaf_subsets = leaf_subsets(projection, metadata.parquet_schema());
        let reader = FileReader::new(&file.location, metadata, filter_schema, &filter, &config.bind)?
            .numbering_row_groups(file.row_group_numbers.clone());
        let assembly = match (layout.columns, layout.partition_row) {
            (Some(columns), Some(values)) => Some(OutputAssembly {
                columns,
                values,
                output: Arc::clone(&layout.assembled_schema),
                declared: config.declared.as_ref().map(|d| (d.matcher(config.bind.case_sensitive), file_has_ids)),
            }),
            _ => None,
        };
        scan_files.push(ScanFile {
            reader,
            filter,
            projection: layout.file_projection.roots,
            paths: layout.file_projection.paths,
            leaf_subsets,
            output: layout.file_projection.schema,
            assembly,
        });
    }
    let schema = schema.unwrap_or_else(|| Arc::new(Schema::empty()));
    let conform_to = config.spark_output.then(|| Arc::clone(&schema));
    let tasks: Vec<ScanTask> = tasks.into_iter().filter(|t| !empty_files.contains(&t.file)).collect();
    let tasks = prune_for_limit(files, tasks, config);
    let options = StreamOptions {
        read: config.read.clone(),
        threads: config.threads,
        limit: config.limit,
        conform_to,
        sort,
        first_batches_soon: config.first_batches_soon,
        max_bytes_read: config.max_bytes_read,
    };
    let stream =
        ScanStream::start(schema, scan_files, tasks, options, Arc::new(SharedArrayCache::new(config.cache_bytes)));
    if let Some((metrics, bytes_read)) = first_pass {
        stream.add_metrics(&metrics, bytes_read);
    }
    Ok(stream)
}

/// `ORDER BY key ... LIMIT k` with columns beyond the keys: a first pass reads only the
/// sort keys (late materialization makes them the cheap columns) to find the top k rows,
/// each tagged with its row group and position there, and `T`, the first key of the k-th;
/// the read proper then reads those rows alone (they passed the filter already). Where a
/// row's position is not known (the filter run after decoding), it reads the row groups
/// holding a top row, with the filter `key at least as good as T` added, so that the other
/// columns are decoded only for rows that can make the top k (ties included). The first
/// pass learns `T` as it reads, in waves of row groups (or, where the key is sorted within
/// one, of its pages) best bound first; it skips the row groups and pages whose statistics
/// rule the running threshold out (see [`topk_threshold`]), and adds the threshold to the
/// filter of each later wave. The read proper reads only the row groups holding a top row.
///
/// Returns that config with the row groups left to read, and what the first pass did and
/// the bytes it read; `None` where it cannot help.
///
/// [`topk_threshold`]: crate::reading::topk_threshold
#[allow(clippy::type_complexity)]
fn narrow_to_top_rows(
    files: &[OpenedFile],
    tasks: &[ScanTask],
    config: &ReaderConfig,
) -> Result<(Option<(ReaderConfig, Vec<ScanTask>)>, Option<(ReadMetrics, u64)>)> {
    let (Some(key), Some(limit)) = (config.order_by.first(), config.limit) else { return Ok((None, None)) };
    let only_keys = config.columns.as_ref().is_some_and(|columns| {
        columns.iter().all(|c| config.order_by.iter().any(|k| names_key(c, k, config.bind.case_sensitive)))
    });
    if limit == 0 || files.is_empty() || tasks.is_empty() || only_keys {
        return Ok((None, None));
    }
    // The keys, each read once, and the order on them: the first key first.
    let (key_columns, order) = with_sort_keys(Vec::new(), config);
    // Read unsorted and unlimited, so that each batch's row group is known: the rows are
    // ordered here, each tagged with its row group.
    // The read's byte bound is checked here over the waves (each wave's stream counts only
    // its own bytes), and by the read proper's stream, which counts the first pass's too.
    let first = ReaderConfig {
        columns: Some(key_columns),
        order_by: Vec::new(),
        limit: None,
        max_bytes_read: None,
        ..config.clone()
    };
    let mut skipper =
        ThresholdSkipper::new(files, key, &config.bind, config.partitions.as_ref(), config.declared.is_some());
    if config.filter.is_none() {
        skipper = skipper.without_cuts();
    }
    // A key without statistics is read whole whatever the threshold: past the byte bound,
    // the first pass need not start.
    if let Some(budget) = config.max_bytes_read {
        let floor = skipper.unskippable_key_bytes(tasks);
        if floor > budget {
            return Err(PqsiftError::ReadBudget(format!(
                "the read would read at least {floor} bytes of `{}` (row groups without its statistics, which no \
                 threshold rules out), more than its max_bytes_read of {budget}",
                key.column
            )));
        }
    }
    let mut remaining = skipper.parts(tasks.to_vec());
    let mut metrics = ReadMetrics::default();
    let mut bytes_read = 0;
    let mut sources = RowTags::default();
    // One running top k over the waves: each wave starts from the threshold of those before.
    let mut top = TopRows::new(order.clone(), Some(limit));
    let mut best: Option<RecordBatch> = None;
    let mut predicate = None;
    // The row groups the first pass read (some of), and the pages of the key it did not.
    let mut read = HashSet::new();
    let mut pages_not_read = Vec::new();
    // Waves double, so that a first pass that must read everything opens O(log n) streams.
    let mut wave = config.threads.max(1);
    while !remaining.is_empty() {
        let reading = tasks_reading(skipper.next_wave(&mut remaining, wave), files)?;
        wave = wave.saturating_mul(2);
        read.extend(reading.iter().map(|task| (task.file, task.row_group)));
        // The running threshold joins the filter, ordered by the row filter as any conjunct:
        // ahead of a wider column's, whose values are then decoded only for rows whose key
        // can still make the top k.
        let mut stream = open_stream(files, reading, &with_condition(&first, predicate.as_ref()))?;
        while let Some(batch) = stream.next_batch_checked() {
            let batch = batch?;
            let so_far = bytes_read + stream.bytes_read();
            if let Some(budget) = config.max_bytes_read
                && so_far > budget
            {
                return Err(PqsiftError::read_budget(so_far, budget));
            }
            let Some(source) = stream.last_batch_source() else {
                return Err(PqsiftError::Internal("a first-pass batch without its row group".into()));
            };
            // Only the rows that may still make the top k are tagged and held.
            let batch = match top.candidates(&batch)? {
                Some(keep) => {
                    sources.tag(&arrow::compute::filter_record_batch(&batch, &keep)?, &source, Some(&keep))?
                }
                None => sources.tag(&batch, &source, None)?,
            };
            top.push(batch)?;
        }
        metrics.add(&stream.metrics());
        bytes_read += stream.bytes_read();
        best = top.first_rows()?;
        let Some(rows) = best.as_ref().filter(|rows| rows.num_rows() >= limit) else { continue };
        let Some(better) = at_least_as_good(key, &rows.column(0).slice(limit - 1, 1)) else { continue };
        let may = skipper.parts_may_satisfy(remaining.make_contiguous(), &better);
        let mut kept_parts = std::collections::VecDeque::with_capacity(remaining.len());
        for (part, may) in remaining.into_iter().zip(may) {
            match (may, part.is_page()) {
                (true, _) => kept_parts.push_back(part),
                (false, true) => pages_not_read.push(part.row_group()),
                (false, false) => {}
            }
        }
        remaining = kept_parts;
        predicate = Some(better);
    }
    // Every top row lies in one of these row groups: the others are not read again. Those
    // the first pass did not read at all, the threshold ruled out.
    let holding = best.as_ref().map(|rows| sources.row_groups_of(rows)).transpose()?.unwrap_or_default();
    let mut kept = Vec::new();
    let mut ruled_out = Vec::new();
    let mut without_top_rows = Vec::new();
    for task in tasks {
        let row_group = (files[task.file].location.to_string(), task.row_group);
        let at = (task.file, task.row_group);
        match (read.contains(&at), holding.contains(&at)) {
            (_, true) => kept.push(task.clone()),
            (false, false) => ruled_out.push(row_group),
            (true, false) => without_top_rows.push(row_group),
        }
    }
    // A row group's windows are tasks of their own: each row group counted once.
    ruled_out.dedup();
    without_top_rows.dedup();
    metrics.row_groups_skipped_by_threshold = ruled_out.len() as u64;
    metrics.row_groups_without_top_rows = without_top_rows.len() as u64;
    // Pages of row groups the first pass read in part; a row group not read at all counts
    // as one.
    metrics.pages_skipped_by_threshold = pages_not_read.iter().filter(|at| read.contains(*at)).count() as u64;
    if !ruled_out.is_empty() || !without_top_rows.is_empty() || metrics.pages_skipped_by_threshold > 0 {
        metrics.threshold_skips = Some(crate::reading::row_group_reader::ThresholdSkips {
            key_condition: predicate.as_ref().map(Expr::to_string).unwrap_or_default(),
            row_groups: ruled_out,
            without_top_rows,
        });
    }
    // Where the first pass knows where each top row lies, the read proper reads those rows
    // alone: they passed the filter already, and their keys are decoded once more only
    // for them.
    if let Some(rows) = best.as_ref().map(|rows| sources.rows_of(rows)).transpose()?.flatten() {
        let mut exact = Vec::new();
        for task in &kept {
            let Some(positions) = rows.get(&(task.file, task.row_group)) else { continue };
            if exact.last().is_some_and(|last: &ScanTask| (last.file, last.row_group) == (task.file, task.row_group)) {
                continue; // a window of the row group before
            }
            let row_count = files[task.file].metadata.row_group(task.row_group).num_rows().max(0) as usize;
            let selection = RowSelection::from_ranges(&ranges_of(positions), row_count)?;
            exact.push(ScanTask::new(task.file, task.row_group, Some(selection)));
        }
        return Ok((Some((ReaderConfig { filter: None, ..config.clone() }, exact)), Some((metrics, bytes_read))));
    }
    Ok((Some((with_condition(config, predicate.as_ref()), kept)), Some((metrics, bytes_read))))
}

/// `config` with `condition` added to its filter (`None`: as it is).
fn with_condition(config: &ReaderConfig, condition: Option<&Expr>) -> ReaderConfig {
    let filter = match (&config.filter, condition) {
        (Some(filter), Some(condition)) => Some(Expr::And(Box::new(filter.clone()), Box::new(condition.clone()))),
        (filter, condition) => condition.cloned().or_else(|| filter.clone()),
    };
    ReaderConfig { filter, ..config.clone() }
}

/// Sorted row positions as ranges of consecutive rows.
fn ranges_of(positions: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
    for &position in positions {
        match ranges.last_mut() {
            Some(last) if last.end == position => last.end += 1,
            _ => ranges.push(position..position + 1),
        }
    }
    ranges
}

/// Row positions per (file index, row group index).
type RowsByRowGroup = HashMap<(usize, usize), Vec<usize>>;

/// Where a first pass's rows lie, as two columns appended to each batch: the position of
/// the row's (file, row group) in `row_groups`, and the row's position in its row group
/// (where the stream knows it).
#[derive(Default)]
struct RowTags {
    row_groups: Vec<(usize, usize)>,
    tags: HashMap<(usize, usize), u32>,
    schema: Option<SchemaRef>,
    /// Whether a batch came without its rows' positions.
    positions_missing: bool,
    /// The rows the last batch is a slice of, and their positions.
    positions: Option<(Arc<RowSelection>, Vec<u64>)>,
}

impl RowTags {
    /// `kept`, the rows `keep` keeps (`None`: all) of a batch whose rows lie where
    /// `source` says, with their tags appended.
    fn tag(&mut self, kept: &RecordBatch, source: &BatchSource, keep: Option<&BooleanArray>) -> Result<RecordBatch> {
        let row_group = (source.file, source.row_group);
        let tag = match self.tags.get(&row_group) {
            Some(&tag) => tag,
            None => {
                let tag = u32::try_from(self.row_groups.len())
                    .map_err(|_| PqsiftError::Internal("too many row groups to tag".into()))?;
                self.row_groups.push(row_group);
                self.tags.insert(row_group, tag);
                tag
            }
        };
        let rows = kept.num_rows();
        // Each kept row's position in the batch, then in its row group.
        let in_batch: Vec<usize> = match keep {
            Some(keep) => keep.values().set_indices().collect(),
            None => (0..rows).collect(),
        };
        let positions = match &source.rows {
            Some((selection, offset)) if in_batch.len() == rows => self.positions(selection, *offset, &in_batch),
            _ => None,
        };
        self.positions_missing |= positions.is_none();
        let schema = self.schema.get_or_insert_with(|| {
            let mut fields: Vec<FieldRef> = kept.schema().fields().iter().cloned().collect();
            fields.push(Arc::new(Field::new("row group", DataType::UInt32, false)));
            fields.push(Arc::new(Field::new("row", DataType::UInt64, false)));
            Arc::new(Schema::new(fields))
        });
        let mut columns = kept.columns().to_vec();
        columns.push(Arc::new(UInt32Array::from_value(tag, rows)));
        columns.push(Arc::new(positions.map_or_else(|| UInt64Array::from_value(0, rows), UInt64Array::from)));
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(Arc::clone(schema), columns, &options)?)
    }

    /// The positions in their row group of the rows `in_batch` (indices into a slice from
    /// `offset` on of the rows of `selection`); `None` past its rows.
    fn positions(&mut self, selection: &Arc<RowSelection>, offset: usize, in_batch: &[usize]) -> Option<Vec<u64>> {
        // Every row selected: a row's position is its index.
        if selection.selected_count() == selection.row_count() {
            return in_batch.iter().map(|&i| u64::try_from(offset.checked_add(i)?).ok()).collect();
        }
        // Otherwise the selected rows' positions, listed once for all the slices of a batch.
        if !self.positions.as_ref().is_some_and(|(of, _)| Arc::ptr_eq(of, selection)) {
            let all = selection.selected_ranges().into_iter().flatten().map(|row| row as u64).collect();
            self.positions = Some((Arc::clone(selection), all));
        }
        let (_, all) = self.positions.as_ref()?;
        in_batch.iter().map(|&i| all.get(offset.checked_add(i)?).copied()).collect()
    }

    /// The tags of `rows` (batches [`tag`](Self::tag)ged): each row's (file, row group)
    /// and position in it.
    fn tags_of<'a>(&self, rows: &'a RecordBatch) -> Result<(&'a [u32], &'a [u64])> {
        let untagged = || PqsiftError::Internal("first-pass rows without their row group".into());
        let columns = rows.columns();
        let (Some(row_groups), Some(positions)) = (columns.len().checked_sub(2).map(|at| &columns[at]), columns.last())
        else {
            return Err(untagged());
        };
        let row_groups = row_groups.as_primitive_opt::<UInt32Type>().ok_or_else(untagged)?;
        let positions = positions.as_primitive_opt::<UInt64Type>().ok_or_else(untagged)?;
        Ok((row_groups.values(), positions.values()))
    }

    /// The (file, row group) pairs the rows of `rows` come from.
    fn row_groups_of(&self, rows: &RecordBatch) -> Result<HashSet<(usize, usize)>> {
        let (tags, _) = self.tags_of(rows)?;
        tags.iter().map(|&tag| self.row_group(tag)).collect()
    }

    /// Per (file, row group), the sorted positions of the rows of `rows` in it; `None`
    /// where a batch came without them.
    fn rows_of(&self, rows: &RecordBatch) -> Result<Option<RowsByRowGroup>> {
        if self.positions_missing {
            return Ok(None);
        }
        let (tags, positions) = self.tags_of(rows)?;
        let mut out = RowsByRowGroup::new();
        for (&tag, &position) in tags.iter().zip(positions) {
            let position = usize::try_from(position).map_err(|_| PqsiftError::Internal("a row past memory".into()))?;
            out.entry(self.row_group(tag)?).or_default().push(position);
        }
        for positions in out.values_mut() {
            positions.sort_unstable();
            positions.dedup();
        }
        Ok(Some(out))
    }

    fn row_group(&self, tag: u32) -> Result<(usize, usize)> {
        self.row_groups
            .get(tag as usize)
            .copied()
            .ok_or_else(|| PqsiftError::Internal("first-pass rows without their row group".into()))
    }
}

/// `key` comes no later than `threshold` (a one-element array) in the key's order.
fn at_least_as_good(key: &SortKey, threshold: &arrow::array::ArrayRef) -> Option<Expr> {
    let column = Expr::Column(key.column.clone());
    let is_null = Expr::IsNull { expr: Box::new(column.clone()), negated: false };
    match KeyBound::new(threshold.is_null(0), key.options()) {
        KeyBound::Any => None,
        KeyBound::NullKeys => Some(is_null),
        KeyBound::Compare { descending, or_null } => {
            let literal = Literal::from_arrow(threshold)?;
            let op = if descending { CompareOp::GtEq } else { CompareOp::LtEq };
            let compare = Expr::Compare { op, left: Box::new(column), right: Box::new(Expr::Literal(literal)) };
            Some(match or_null {
                true => Expr::Or(Box::new(is_null), Box::new(compare)),
                false => compare,
            })
        }
    }
}

/// With `ORDER BY`: the config that reads the sort keys too (appended to the columns when
/// not among them) and no row limit, and how the stream sorts.
fn sort_columns(files: &[OpenedFile], config: &ReaderConfig) -> Result<(Option<ReaderConfig>, Option<SortSpec>)> {
    if config.order_by.is_empty() || files.is_empty() {
        return Ok((None, None));
    }
    let columns = match &config.columns {
        Some(columns) => columns.clone(),
        None => {
            let schema = match declared_output_schema(config) {
                Some(schema) => schema?,
                None => output_schema(&files[0], config)?,
            };
            schema.fields().iter().map(|f| ColumnPath::new([f.name()]).to_string()).collect()
        }
    };
    let keep_columns = columns.len();
    let (columns, keys) = with_sort_keys(columns, config);
    let sorting = ReaderConfig { columns: Some(columns), limit: None, ..config.clone() };
    Ok((Some(sorting), Some(SortSpec { keys, limit: config.limit, keep_columns })))
}

/// `columns` with each `order_by` key appended where none of them names it, and the sort
/// on them: each key's index among the columns, and its order.
fn with_sort_keys(mut columns: Vec<String>, config: &ReaderConfig) -> (Vec<String>, Vec<(usize, SortOptions)>) {
    let mut keys = Vec::with_capacity(config.order_by.len());
    for key in &config.order_by {
        let index = match columns.iter().position(|c| names_key(c, key, config.bind.case_sensitive)) {
            Some(index) => index,
            None => {
                columns.push(key.column.to_string());
                columns.len() - 1
            }
        };
        keys.push((index, key.options()));
    }
    (columns, keys)
}

/// Whether the column text `column` names `key`'s column (names compared as the bind
/// options say).
fn names_key(column: &str, key: &SortKey, case_sensitive: bool) -> bool {
    let wanted = key.column.parts();
    split_column_name(column).is_ok_and(|parts| {
        parts.len() == wanted.len()
            && parts.iter().zip(wanted).all(|(x, y)| if case_sensitive { x == y } else { x.eq_ignore_ascii_case(y) })
    })
}

/// The limit pruner (as Databend's): without a filter every planned row is output, so the row
/// groups past the first `limit` planned rows are never needed.
fn prune_for_limit(files: &[OpenedFile], tasks: Vec<ScanTask>, config: &ReaderConfig) -> Vec<ScanTask> {
    let (Some(limit), None) = (config.limit, &config.filter) else {
        return tasks;
    };
    if config.declared.as_ref().is_some_and(|d| d.has_deletes()) {
        return tasks; // rows a file's deletes leave out are not output
    }
    let mut rows = 0usize;
    let mut kept = Vec::new();
    for task in tasks {
        if rows >= limit {
            break;
        }
        rows += match &task.selection {
            Some(selection) => selection.selected_count(),
            None => files[task.file].metadata.row_group(task.row_group).num_rows().max(0) as usize,
        };
        kept.push(task);
    }
    kept
}

/// The file's reader metadata: its Arrow schema as [`readable_arrow_schema`] gives it,
/// with its INT96 timestamps (top-level or nested) in `int96_unit` when given.
///
/// The schema is handed to the crate rather than derived by it again: converted once when
/// the footer was read, it spares each read decoding the embedded Arrow schema, a walk of
/// every column of a wide footer.
///
/// [`readable_arrow_schema`]: crate::format::arrow_schema::readable_arrow_schema
fn arrow_metadata(file: &OpenedFile, int96_unit: Option<TimeUnit>) -> Result<ArrowReaderMetadata> {
    let corrupt = |e| PqsiftError::corrupt(&file.location, e);
    let in_unit = int96_unit
        .and_then(|unit| crate::format::opener::int96_in_unit(&file.schema, file.metadata.file_metadata(), unit));
    let schema = in_unit.map_or_else(|| Arc::clone(&file.schema), Arc::new);
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional).with_schema(schema);
    ArrowReaderMetadata::try_new(Arc::clone(&file.metadata), options).map_err(corrupt)
}
