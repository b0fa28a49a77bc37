//! Opening a scan for reading (seed 000's ParquetOpener, steps 2 and 4): resolve the
//! projection, build each file's row filter, and start the [`ScanStream`] over the row
//! groups the access plan kept.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};

use crate::cached_reader::SharedArrayCache;
use crate::error::{PqsiftError, Result};
use crate::filter::{BindOptions, Expr};
use crate::io::CountingFile;
use crate::row_filter::RowFilter;
use crate::projection::{leaf_subsets, resolve_projection};
use crate::row_group_reader::{FileReader, ReadOptions};
use crate::scan_stream::{ScanFile, ScanStream, ScanTask, StreamOptions};
use crate::spark_output::spark_schema;

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
    /// Output the Arrow types Spark accepts (see [`crate::spark_output`]).
    pub spark_output: bool,
}

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
            cache_bytes: 64 << 20,
            spark_output: false,
        }
    }
}

/// A file to read: its path and parsed metadata (from the metadata cache).
#[derive(Debug, Clone)]
pub struct OpenFile {
    /// The file.
    pub path: PathBuf,
    /// Its footer and page index.
    pub metadata: Arc<ParquetMetaData>,
}

/// The output schema of a scan of `file` with `columns`, in Spark's types when
/// `spark_output`.
pub fn output_schema(
    file: &OpenFile,
    columns: Option<&[String]>,
    options: &BindOptions,
    spark_output: bool,
) -> Result<SchemaRef> {
    let metadata = arrow_metadata(file)?;
    let projection = resolve_projection(metadata.schema(), columns, options)?;
    if spark_output { spark_schema_of(file, &projection.schema, &projection.roots) } else { Ok(projection.schema) }
}

/// `schema` (the roots `roots` of `file`) in Spark's types.
fn spark_schema_of(file: &OpenFile, schema: &Schema, roots: &[usize]) -> Result<SchemaRef> {
    let parquet_roots = file.metadata.file_metadata().schema_descr().root_schema().get_fields();
    let int96: Vec<bool> = roots
        .iter()
        .map(|&r| {
            parquet_roots.get(r).is_some_and(|t| t.is_primitive() && t.get_physical_type() == parquet::basic::Type::INT96)
        })
        .collect();
    spark_schema(schema, &int96, &file.path.display().to_string())
}

/// Starts reading `tasks` (row groups, in output order) of `files`.
///
/// Every file's projection and filter are resolved before any data is read, so an unknown
/// column or a bad filter fails here.
pub fn open_stream(files: &[OpenFile], tasks: Vec<ScanTask>, config: &ReaderConfig) -> Result<ScanStream> {
    let mut scan_files = Vec::with_capacity(files.len());
    let mut schema: Option<SchemaRef> = None;
    for file in files {
        let metadata = arrow_metadata(file)?;
        let projection = resolve_projection(metadata.schema(), config.columns.as_deref(), &config.bind)?;
        let file_schema = Arc::clone(&projection.schema);
        match &schema {
            None => schema = Some(file_schema),
            Some(first) if first.fields() != file_schema.fields() => {
                return Err(PqsiftError::corrupt(
                    &file.path,
                    format!("its columns {file_schema} differ from the scan's first file {first}"),
                ));
            }
            Some(_) => {}
        }
        let filter =
            RowFilter::build(config.filter.as_ref(), metadata.schema(), metadata.metadata(), &config.bind, config.reorder_filters)?;
        let leaf_subsets = leaf_subsets(&projection, metadata.parquet_schema());
        let reader = FileReader::new(CountingFile::open(&file.path)?, metadata, &filter, &config.bind)?;
        scan_files.push(ScanFile {
            reader,
            filter,
            projection: projection.roots,
            paths: projection.paths,
            leaf_subsets,
            output: projection.schema,
        });
    }
    let mut schema = schema.unwrap_or_else(|| Arc::new(Schema::empty()));
    let mut conform_to = None;
    if config.spark_output && let (Some(first), Some(scan_file)) = (files.first(), scan_files.first()) {
        schema = spark_schema_of(first, &schema, &scan_file.projection)?;
        conform_to = Some(Arc::clone(&schema));
    }
    let tasks = prune_for_limit(files, tasks, config);
    let options = StreamOptions { read: config.read.clone(), threads: config.threads, limit: config.limit, conform_to };
    Ok(ScanStream::start(schema, scan_files, tasks, options, Arc::new(SharedArrayCache::new(config.cache_bytes))))
}

/// Seed 003's limit pruner: without a filter every planned row is output, so the row
/// groups past the first `limit` planned rows are never needed.
fn prune_for_limit(files: &[OpenFile], tasks: Vec<ScanTask>, config: &ReaderConfig) -> Vec<ScanTask> {
    let (Some(limit), None) = (config.limit, &config.filter) else {
        return tasks;
    };
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

fn arrow_metadata(file: &OpenFile) -> Result<ArrowReaderMetadata> {
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
    ArrowReaderMetadata::try_new(Arc::clone(&file.metadata), options).map_err(|e| PqsiftError::corrupt(&file.path, e))
}

