//! A scan: files, filter, projection and options, and its plan — which row groups to skip,
//! scan whole, or scan through a row selection — computed from metadata alone. Stages run
//! in DataFusion's order, each on the previous one's survivors: file byte range,
//! statistics, bloom filters, page index.
//!
//! The scan keeps what reading will need (parsed filter, options, file list, opened
//! footers) so that a reader can run from the same object.
//!
//! ```
//! # let dir = std::env::temp_dir().join("pqsift_scan_doc");
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("t.parquet");
//! # let batch = arrow::array::RecordBatch::try_from_iter([("age", std::sync::Arc::new(arrow::array::Int32Array::from((0..100).collect::<Vec<i32>>())) as _)]).unwrap();
//! # let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(25)).build();
//! # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
//! # w.write(&batch).unwrap(); w.close().unwrap();
//! use pqsift::planning::scan::{Scan, ScanOptions};
//!
//! let scan = Scan::new(vec![path.clone()], None, Some("age >= 60"), ScanOptions::default()).unwrap();
//! let plan = scan.plan().unwrap();
//! assert_eq!(plan.metrics.row_groups_total, 4);
//! assert_eq!(plan.metrics.row_groups_pruned_statistics, 2);
//! assert!(plan.explain().contains("row group 0: skipped by statistics"));
//! ```

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use crate::error::{PqsiftError, Result, panics_as_corrupt};
use crate::filter::projection::resolve_projection;
use crate::filter::sort_key::TopN;
use crate::filter::{BindOptions, BoundExpr, Expr, bind, parse_filter};
use crate::format::metadata_cache::{CacheEpoch, MetadataCache};
use crate::format::opener::{OpenedFile, filter_schema};
use crate::planning::access_plan::{FileAccessPlan, ReadGroups, RowGroupAccess};
use crate::planning::bloom_filter::prune_by_bloom_filters;
use crate::planning::metrics::PruningMetrics;
use crate::planning::page_filter::prune_by_page_index;
use crate::planning::read_estimate::{output_bytes, row_group_bytes};
use crate::planning::row_group_filter::{prune_by_range, prune_by_row_group_list, prune_by_statistics};
use crate::planning::topn_pruner::{TopNInput, prune_top_n};
use crate::storage::Location;
use crate::table::column_matching::{ColumnMatcher, FieldIds, find_field};
use crate::table::delta::log_statistics::prune_by_log_statistics;
use crate::table::delta::schema::ColumnMappingMode;
use crate::table::file_pruning::{prune_files, specialise};
use crate::table::iceberg::statistics::prune_by_manifest_statistics;
use crate::table::schema_adapter::DeclaredSchema;
use crate::table::schema_evolution::{check_readable, merge_file_schemas, same_columns};
use crate::table::source::{Table, merge_schemas};

/// Scan settings.
///
/// ```
/// let options = pqsift::planning::scan::ScanOptions::default();
/// assert!(options.statistics && options.bloom_filter && options.page_index);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOptions {
    /// Prune row groups by column chunk statistics.
    pub statistics: bool,
    /// Prune row groups by bloom filters.
    pub bloom_filter: bool,
    /// Prune pages by the page index.
    pub page_index: bool,
    /// How the filter binds (session time zone, case sensitivity).
    pub bind: BindOptions,
    /// Only the row groups whose midpoint lies in `(offset, length)` (single-file scans).
    pub file_range: Option<(u64, u64)>,
    /// Only these row groups (single-file scans): a task planned elsewhere, e.g. by the
    /// Spark driver. An index past the file's row groups is an error.
    pub row_groups: Option<Vec<usize>>,
    /// Bytes read from the end of a file in the first I/O for its metadata.
    pub metadata_size_hint: usize,
    /// `ORDER BY ... LIMIT k`: skip what cannot hold a top row (the reader sorts).
    pub top_n: Option<TopN>,
    /// Spark's `mergeSchema`: the scan schema is the union of every file's (see
    /// [`crate::table::schema_evolution`]), all footers read up front; otherwise the first
    /// file's, and other files are read into it.
    pub merge_schema: bool,
    /// A schema given by the caller (Spark's `.schema(...)`): every file is read into it by
    /// name, the table's partition columns appended where it lacks them; it wins over
    /// both of the above. Not for a Delta table, which declares its own.
    pub schema: Option<arrow::datatypes::SchemaRef>,
    /// Whether the fields of `schema` that carry a Parquet field id (`PARQUET:field_id`)
    /// find their file columns by it (Spark's `spark.sql.parquet.fieldId.read.*`; see
    /// [`crate::table::column_matching`]). A schema read from the files has no ids to
    /// match, as in Spark.
    pub field_ids: FieldIds,
    /// A read opens its files in groups whose parsed footers take at most this many bytes
    /// (see [`ReadGroups`]): the scan's plan holds the footers of the first group and lets
    /// the others go, and the read opens each later group when it reaches it. A footer of
    /// a wide table takes about a megabyte parsed: a read of thousands of such files
    /// holding them all would hold gigabytes.
    pub footer_bytes_read_together: usize,
    /// Threads a wide footer is decoded on (see [`crate::format::footer_parts`]): the
    /// read's `threads`, which the caller knows; 1 by default.
    pub footer_threads: usize,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            statistics: true,
            bloom_filter: true,
            page_index: true,
            bind: BindOptions::default(),
            file_range: None,
            row_groups: None,
            metadata_size_hint: crate::format::metadata::DEFAULT_METADATA_SIZE_HINT,
            top_n: None,
            merge_schema: false,
            schema: None,
            field_ids: FieldIds::Off,
            footer_bytes_read_together: FOOTER_BYTES_READ_TOGETHER,
            footer_threads: 1,
        }
    }
}

/// The plan of a scan: one access plan per file, and the counts.
#[derive(Debug, Clone)]
pub struct ScanPlan {
    /// Per file, in scan order.
    pub files: Vec<FileAccessPlan>,
    /// Counts over all files.
    pub metrics: PruningMetrics,
    /// What resolving the table did before planning (a Delta log's replay), in words.
    pub table_note: Option<String>,
}

impl ScanPlan {
    /// The plan in words: per file and row group, the decision and why.
    pub fn explain(&self) -> String {
        let m = &self.metrics;
        let mut text = format!(
            "scan of {} file(s): {} pruned ({} by partition values); {} row group(s): {} pruned by statistics, {} by bloom filters, {} by the page index, {} by the file range; {} of {} pages pruned; {} of {} rows selected\n",
            m.files_total,
            m.files_pruned,
            m.files_pruned_partition,
            m.row_groups_total,
            m.row_groups_pruned_statistics,
            m.row_groups_pruned_bloom_filter,
            m.row_groups_pruned_page_index,
            m.row_groups_pruned_range,
            m.pages_pruned,
            m.pages_total,
            m.rows_selected,
            m.rows_total
        );
        if m.files_pruned_manifest > 0 {
            // Appended to the header line: files the manifests ruled out.
            text.insert_str(
                text.len() - 1,
                &format!("; {} file(s) skipped on the manifests' statistics", m.files_pruned_manifest),
            );
        }
        if m.files_pruned_log_stats > 0 {
            // Appended to the header line: files the log's statistics ruled out.
            text.insert_str(
                text.len() - 1,
                &format!("; {} file(s) skipped on the Delta log's statistics", m.files_pruned_log_stats),
            );
        }
        if m.row_groups_pruned_topn > 0 || m.topn_rows_pruned > 0 {
            // Appended to the header line: what ORDER BY ... LIMIT let planning skip.
            let topn = format!(
                "; TopN: {} row group(s) and {} more rows skipped",
                m.row_groups_pruned_topn, m.topn_rows_pruned
            );
            text.insert_str(text.len() - 1, &topn);
        }
        if let Some(note) = &self.table_note {
            text.push_str(note);
        }
        for file in &self.files {
            text.push_str(&file.explain());
        }
        text
    }
}

/// Footers of files in an object store read at once while planning.
pub const FOOTERS_IN_FLIGHT: usize = 16;

/// Footers of files in an object store fetched ahead of planning, at most: the next
/// window is fetched when planning reaches it.
pub const FOOTERS_FETCHED_AHEAD: usize = 4 * FOOTERS_IN_FLIGHT;

/// The default bound of the memory the footers of the files a read opens at once take
/// (see [`ScanOptions::footer_bytes_read_together`]).
pub const FOOTER_BYTES_READ_TOGETHER: usize = 32 << 20;

/// A scan of a table (Parquet files, possibly with partition values) with an optional
/// filter and projection.
#[derive(Debug)]
pub struct Scan {
    table: Table,
    columns: Option<Vec<String>>,
    filter: Option<Expr>,
    options: ScanOptions,
    /// Footers read so far, by file position; a slot stays locked while its footer is
    /// read, so that threads wanting the same file wait for one read instead of each
    /// fetching it.
    opened: Vec<Mutex<Option<Arc<OpenedFile>>>>,
    /// For files (not a Delta table) whose schemas differ: the first file's, which the
    /// others are read into; set when a file is found to differ (see [`Scan::declared`]).
    evolved: std::sync::OnceLock<Arc<DeclaredSchema>>,
    /// The metadata cache's clock when planning last began: the scan's footer reads evict
    /// no cache entry used since (see [`MetadataCache::load_sparing`]), so that a read of
    /// more footers than the cache holds finds the first ones planning kept.
    cache_epoch: std::sync::atomic::AtomicU64,
    /// Per file, the bytes at its end its footer and page index took when last read (0:
    /// not read yet, or read whole): a footer let go and read again asks for just these,
    /// not `metadata_size_hint`.
    tail_bytes: Vec<std::sync::atomic::AtomicU64>,
}

/// Where a scan's filter comes from: Spark SQL text, or a function of the table schema.
enum FilterSource<'a> {
    Text(Option<&'a str>),
    ForSchema(&'a mut dyn FnMut(&arrow::datatypes::SchemaRef) -> Result<Option<String>>),
}

impl Scan {
    /// A scan of `files` (see [`Table::resolve`] for directories and tables) keeping `columns` (all when `None`) of the rows
    /// matching `filter` (Spark SQL). The filter is parsed now and bound to the first file's
    /// schema, so a bad filter fails before any data is read.
    pub fn new<L: Into<Location>>(
        files: Vec<L>,
        columns: Option<Vec<String>>,
        filter: Option<&str>,
        options: ScanOptions,
    ) -> Result<Self> {
        Self::of_table(Table::of_files(files.into_iter().map(Into::into).collect()), columns, filter, options)
    }

    /// A scan of `table`: as [`Scan::new`], with the table's partition columns part of the
    /// schema the filter and the projection resolve against (see [`crate::table`]).
    pub fn of_table(
        table: Table,
        columns: Option<Vec<String>>,
        filter: Option<&str>,
        options: ScanOptions,
    ) -> Result<Self> {
        Self::of_table_with(table, columns, FilterSource::Text(filter), options)
    }

    /// A scan of `table` whose filter is written once its schema is known: `filter_for`
    /// is given the table schema (the first file's columns with the partition columns, or
    /// the declared schema) and returns the filter's Spark SQL text. A filter made in
    /// another language's terms (a pyarrow expression) needs the columns' types to keep
    /// that language's meaning — NaN comparisons, for one. Not called when the table has
    /// no file and no declared schema (there are no rows to filter).
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join("pqsift_scan_filtered_by_doc");
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let path = dir.join("t.parquet");
    /// # let batch = arrow::array::RecordBatch::try_from_iter([("x", std::sync::Arc::new(arrow::array::Int32Array::from(vec![1, 2, 300])) as _)]).unwrap();
    /// # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), None).unwrap();
    /// # w.write(&batch).unwrap(); w.close().unwrap();
    /// use pqsift::planning::scan::{Scan, ScanOptions};
    /// use pqsift::table::source::Table;
    ///
    /// let mut seen = Vec::new();
    /// let scan = Scan::of_table_filtered_by(
    ///     Table::of_files(vec![path.clone().into()]),
    ///     None,
    ///     &mut |schema| {
    ///         seen.push(schema.field(0).name().clone());
    ///         Ok(Some(format!("`{}` > 100", schema.field(0).name())))
    ///     },
    ///     ScanOptions::default(),
    /// )
    /// .unwrap();
    /// assert_eq!(seen, ["x"]);
    /// assert_eq!(scan.filter().unwrap().to_string(), "`x` > 100");
    /// ```
    pub fn of_table_filtered_by(
        table: Table,
        columns: Option<Vec<String>>,
        filter_for: &mut dyn FnMut(&arrow::datatypes::SchemaRef) -> Result<Option<String>>,
        options: ScanOptions,
    ) -> Result<Self> {
        Self::of_table_with(table, columns, FilterSource::ForSchema(filter_for), options)
    }

    fn of_table_with(
        table: Table,
        columns: Option<Vec<String>>,
        filter: FilterSource<'_>,
        options: ScanOptions,
    ) -> Result<Self> {
        let (filter, mut filter_for) = match filter {
            FilterSource::Text(text) => (text.map(parse_filter).transpose()?, None),
            FilterSource::ForSchema(filter_for) => (None, Some(filter_for)),
        };
        for (name, given) in
            [("file_range", options.file_range.is_some()), ("row_groups", options.row_groups.is_some())]
        {
            if given && table.files.len() != 1 {
                return Err(PqsiftError::filter(format!(
                    "{name} needs a scan of exactly one file, not {}",
                    table.files.len()
                )));
            }
        }
        let opened = (0..table.files.len()).map(|_| Mutex::new(None)).collect();
        let cache_epoch = std::sync::atomic::AtomicU64::new(MetadataCache::global().epoch().into());
        let tail_bytes = (0..table.files.len()).map(|_| Default::default()).collect();
        let mut scan =
            Self { table, columns, filter, options, opened, evolved: Default::default(), cache_epoch, tail_bytes };
        if let Some(given) = &scan.options.schema {
            if scan.table.declared.is_some() {
                return Err(PqsiftError::table(
                    &scan.table.name,
                    "a schema cannot be given for a Delta table: it declares its own",
                ));
            }
            let schema = merge_schemas(given, &scan.table.partition_schema(), scan.options.bind.case_sensitive).0;
            scan.table.declared = Some(Arc::new(
                DeclaredSchema::new(schema, ColumnMappingMode::None).with_field_ids(scan.options.field_ids),
            ));
        } else if scan.options.merge_schema && scan.table.declared.is_none() && scan.table.files.len() > 1 {
            scan.table.declared = Some(Arc::new(scan.merged_schema()?));
        }
        if scan.table.files.is_empty() && scan.table.declared.is_none() {
            // As Spark (UNABLE_TO_INFER_SCHEMA): no file, no schema, not zero columns.
            let name = if scan.table.name.is_empty() { "the scan" } else { scan.table.name.as_str() };
            return Err(PqsiftError::table(
                name,
                "no Parquet file to infer the schema from; give the schema (option schema)",
            ));
        }
        if scan.filter.is_none() && filter_for.is_none() && scan.columns.is_none() {
            return Ok(scan);
        }
        // A declared schema (Delta) is the table's whatever its files hold; otherwise the
        // first file's columns are.
        let (schema, name) = match &scan.table.declared {
            Some(declared) => (Arc::clone(&declared.schema), scan.table.name.clone()),
            None if scan.table.files.is_empty() => return Ok(scan),
            None => {
                // Plain files in a store: planning will need every footer; fetch them with
                // the first one, in one wave.
                if scan.table.partitions.is_none() {
                    scan.open_concurrently(&(0..scan.table.files.len()).collect::<Vec<_>>(), 1);
                }
                let first = scan.open(0)?;
                (scan.table_schema(&first).0, first.name())
            }
        };
        if let Some(filter_for) = filter_for.as_mut() {
            scan.filter = filter_for(&schema)?.as_deref().map(parse_filter).transpose()?;
        }
        if let Some(filter) = &scan.filter {
            bind(filter, &schema, &scan.options.bind).map_err(|e| match &scan.table.declared {
                Some(_) => PqsiftError::filter(format!("{name}: {e}")),
                None => e,
            })?;
        }
        let projection = match &scan.columns {
            // Resolved as filters resolve names (Spark's matching, ambiguity errors),
            // paths into structs included.
            Some(columns) => Some(
                resolve_projection(&schema, Some(columns), &scan.options.bind)
                    .map_err(|e| PqsiftError::filter(format!("{name}: {e}")))?,
            ),
            None => None,
        };
        if let Some(declared) = &scan.table.declared {
            // Only the columns read must be found by id (see DeclaredSchema::requested).
            let roots = projection.as_ref().map(|p| p.roots.as_slice());
            if let Cow::Owned(requested) = declared.requested_by(roots, scan.filter.as_ref(), &scan.options.bind)? {
                scan.table.declared = Some(Arc::new(requested));
            }
        }
        Ok(scan)
    }

    /// The files, in scan order.
    pub fn files(&self) -> &[Location] {
        &self.table.files
    }

    /// The table: files and partition values.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The table schema as seen with `file`'s columns: the file's schema with the
    /// partition columns merged in, and per field the partition column it comes from.
    /// With a declared schema (Delta) that schema, whatever the file holds.
    pub fn table_schema(&self, file: &OpenedFile) -> (arrow::datatypes::SchemaRef, Vec<Option<usize>>) {
        match self.declared() {
            Some(_) => self.declared_schema().expect("a declared schema"),
            None => self.file_table_schema(file),
        }
    }

    /// The schema every file is read into when the files may differ from it: a Delta
    /// table's, the merged one (`merge_schema`), or the first file's once another file was
    /// found to differ. `None`: every file read so far has the first file's columns.
    pub fn declared(&self) -> Option<&Arc<DeclaredSchema>> {
        self.table.declared.as_ref().or_else(|| self.evolved.get())
    }

    /// The schema every file is read into: [`Scan::declared`], else the first file's
    /// (partition columns merged in). `None` without files.
    pub fn scan_schema(&self) -> Result<Option<Arc<DeclaredSchema>>> {
        if let Some(declared) = self.declared() {
            return Ok(Some(Arc::clone(declared)));
        }
        if self.table.files.is_empty() {
            return Ok(None);
        }
        let first = self.open(0)?;
        Ok(Some(Arc::new(DeclaredSchema::new(self.file_table_schema(&first).0, ColumnMappingMode::None))))
    }

    /// The union of every file's schema, partition columns merged in, in Spark's
    /// `mergeSchema` order (see [`merge_file_schemas`]).
    fn merged_schema(&self) -> Result<DeclaredSchema> {
        self.open_concurrently(&(0..self.table.files.len()).collect::<Vec<_>>(), 1);
        let opened = (0..self.table.files.len()).map(|position| self.open(position)).collect::<Result<Vec<_>>>()?;
        let names: Vec<String> = opened.iter().map(|file| file.name()).collect();
        let schemas: Vec<_> = opened.iter().map(|file| self.file_table_schema(file).0).collect();
        let files: Vec<(&str, &arrow::datatypes::Schema)> =
            names.iter().map(String::as_str).zip(schemas.iter().map(|s| s.as_ref())).collect();
        let merged = merge_file_schemas(&files, self.options.bind.case_sensitive)?;
        Ok(DeclaredSchema::new(Arc::new(merged), ColumnMappingMode::None))
    }

    /// A file's own columns with the table's partition columns merged in, and per field
    /// the partition column it comes from.
    fn file_table_schema(&self, file: &OpenedFile) -> (arrow::datatypes::SchemaRef, Vec<Option<usize>>) {
        merge_schemas(&file.schema, &self.table.partition_schema(), self.options.bind.case_sensitive)
    }

    /// For files of one table (no declared schema): when `file` (at `position`) differs
    /// from the first file, the first file's schema becomes the scan's declared schema, if
    /// `file`'s columns are readable into it (Spark's default, see
    /// [`crate::table::schema_evolution`]).
    fn check_against_first(&self, position: usize, file: &OpenedFile) -> Result<()> {
        if let (Some(_), Some(declared)) = (&self.options.schema, &self.table.declared) {
            // The caller's schema: every file, the first too, must be readable into it.
            let case_sensitive = self.options.bind.case_sensitive;
            return check_readable(&file.name(), &file.schema, "the given schema", &declared.schema, |root| {
                declared.matcher_for(root, case_sensitive)
            });
        }
        if position == 0 || self.table.declared.is_some() {
            return Ok(());
        }
        let first = self.open(0)?;
        if same_columns(&first.schema, &file.schema) {
            return Ok(());
        }
        let scan_schema = self.file_table_schema(&first).0;
        let by_name = ColumnMatcher { case_sensitive: self.options.bind.case_sensitive, ..Default::default() };
        check_readable(&file.name(), &file.schema, &first.name(), &scan_schema, |_| by_name)?;
        // Nullable: a column the first file declares NOT NULL may be null (or missing) in
        // another (Spark reads every column as nullable).
        let nullable: Vec<_> = scan_schema.fields().iter().map(|f| f.as_ref().clone().with_nullable(true)).collect();
        let scan_schema =
            Arc::new(arrow::datatypes::Schema::new_with_metadata(nullable, scan_schema.metadata().clone()));
        self.evolved.get_or_init(|| Arc::new(DeclaredSchema::new(scan_schema, ColumnMappingMode::None)));
        Ok(())
    }

    /// The declared schema and, per field, the partition column it is (Delta tables).
    fn declared_schema(&self) -> Option<(arrow::datatypes::SchemaRef, Vec<Option<usize>>)> {
        let declared = self.declared()?;
        let from_partition = declared.from_partition(&self.table.partition_schema(), self.options.bind.case_sensitive);
        Some((Arc::clone(&declared.schema), from_partition))
    }

    /// The projected column names (`None`: all).
    pub fn columns(&self) -> Option<&[String]> {
        self.columns.as_deref()
    }

    /// The parsed filter.
    pub fn filter(&self) -> Option<&Expr> {
        self.filter.as_ref()
    }

    /// The options.
    pub fn options(&self) -> &ScanOptions {
        &self.options
    }

    /// The footer of file `position` when the scan holds it.
    pub fn opened(&self, position: usize) -> Option<Arc<OpenedFile>> {
        self.opened.get(position)?.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The footer of file `position`, read once and held (until planning lets it go, see
    /// [`Scan::plan`]). Comparing a file with the first opens the first: its slot is
    /// another, so that cannot wait on itself.
    pub fn open(&self, position: usize) -> Result<Arc<OpenedFile>> {
        let (Some(slot), Some(path)) = (self.opened.get(position), self.table.files.get(position)) else {
            return Err(PqsiftError::filter(format!("no file at position {position}")));
        };
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = slot.as_ref() {
            return Ok(Arc::clone(file));
        }
        use std::sync::atomic::Ordering::Relaxed;
        let spared = CacheEpoch::from(self.cache_epoch.load(Relaxed));
        let hint = match self.tail_bytes[position].load(Relaxed) {
            0 => self.options.metadata_size_hint,
            tail => usize::try_from(tail).unwrap_or(usize::MAX),
        };
        let file = Arc::new(OpenedFile::open_sparing(path, hint, self.options.footer_threads, Some(spared))?);
        self.tail_bytes[position].store(file.tail_bytes.unwrap_or(0), Relaxed);
        self.check_against_first(position, &file)?;
        *slot = Some(Arc::clone(&file));
        Ok(file)
    }

    /// Lets go of the footer of file `position`, if held (never the first file's: it gives
    /// the output schema); a later [`Scan::open`] reads it again (a read checks it against
    /// its plan's `FileAccessPlan::footer_layout`). A read of a later group of files lets
    /// their footers go once it has them: the read holds them while it needs them, and the
    /// scan does not keep them after.
    pub fn release(&self, position: usize) {
        if position != 0
            && let Some(slot) = self.opened.get(position)
        {
            slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        }
    }

    /// Runs `f`, which may open the footer of file `position`, and lets that footer go again
    /// after unless the scan held it before: a look at a file the plan let go (`explain`,
    /// a Spark task's plan) does not keep its footer.
    pub fn holding_as_before<T>(&self, position: usize, f: impl FnOnce() -> T) -> T {
        let held = self.opened(position).is_some();
        let out = f();
        if !held {
            self.release(position);
        }
        out
    }

    /// Reads the footers of the files at `positions` in an object store, up to
    /// [`FOOTERS_IN_FLIGHT`] at once (a request costs tens of milliseconds: one after the
    /// other, a thousand footers would take most of a minute): what planning and a read
    /// of many files call before they open the next ones. Local files are read on up to
    /// `local_threads` threads (decoding a footer is most of opening a local file: with
    /// one thread, or one file, they are left to be read in order). Errors and panics are
    /// left to [`Scan::open`] to raise in file order, when the caller opens each file.
    pub fn open_concurrently(&self, positions: &[usize], local_threads: usize) {
        let (remote, local): (Vec<usize>, Vec<usize>) =
            positions.iter().partition(|&&position| self.table.files[position].is_remote());
        for (positions, threads) in [(remote, FOOTERS_IN_FLIGHT), (local, local_threads)] {
            if positions.len() < 2 || threads < 2 {
                continue;
            }
            let next = std::sync::atomic::AtomicUsize::new(0);
            std::thread::scope(|scope| {
                for _ in 0..threads.min(positions.len()) {
                    scope.spawn(|| {
                        while let Some(&position) =
                            positions.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                        {
                            // What fails here fails again, in file order, when the caller opens it.
                            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.open(position)));
                        }
                    });
                }
            });
        }
    }

    /// The filter for the rows of the file at `position`: partition columns replaced by the
    /// file's values (see [`specialise`]).
    pub fn file_filter(&self, position: usize, file: &OpenedFile) -> Result<Option<Expr>> {
        if let Some(declared) = self.declared()
            && (self.filter.is_some() || declared.has_deletes())
        {
            let view = declared.view(&file.schema, self.table.partitions.as_ref(), position, &self.options.bind)?;
            return declared
                .row_filter(self.filter.as_ref(), &view, &self.options.bind)
                .map_err(|e| PqsiftError::filter(format!("{}: {e}", file.name())));
        }
        let (Some(filter), Some(partitions)) = (&self.filter, &self.table.partitions) else {
            return Ok(self.filter.clone());
        };
        let (schema, from_partition) = self.table_schema(file);
        specialise(filter, &schema, &from_partition, partitions, position, &self.options.bind)
            .map_err(|e| PqsiftError::filter(format!("{}: {e}", file.name())))
    }

    /// The filter's columns the file at `position` lacks (read as NULL there), by their
    /// names in the scan schema; empty for a table without a declared or evolved schema.
    fn missing_filter_columns(&self, position: usize, file: &OpenedFile) -> Result<Vec<String>> {
        let (Some(filter), Some(declared)) = (&self.filter, self.declared()) else { return Ok(Vec::new()) };
        let view = declared.view(&file.schema, self.table.partitions.as_ref(), position, &self.options.bind)?;
        let partitions = self
            .table
            .partitions
            .as_ref()
            .map(|p| declared.from_partition(&p.schema, self.options.bind.case_sensitive));
        let referenced: Vec<String> =
            crate::filter::columns(filter).iter().map(|path| path.parts()[0].to_lowercase()).collect();
        Ok(declared
            .schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(i, field)| {
                view.file_roots[*i].is_none()
                    && partitions.as_ref().is_none_or(|p| p[*i].is_none())
                    && referenced.contains(&field.name().to_lowercase())
            })
            .map(|(_, field)| field.name().clone())
            .collect())
    }

    /// Says, in the reason of each row group the statistics stage skipped, which filter
    /// columns the file lacks: what made "the filter cannot be true" there.
    fn name_missing_columns(&self, position: usize, file: &OpenedFile, plan: &mut FileAccessPlan) -> Result<()> {
        if !plan.row_groups.iter().any(|rg| rg.stage.as_deref() == Some("statistics")) {
            return Ok(());
        }
        let missing = self.missing_filter_columns(position, file)?;
        if missing.is_empty() {
            return Ok(());
        }
        let names = missing.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ");
        let lacks = format!("the file has no column {names} (NULL in all its rows)");
        for row_group in plan.row_groups.iter_mut().filter(|rg| rg.stage.as_deref() == Some("statistics")) {
            row_group.reason = if row_group.reason == "the filter cannot be true" {
                format!("the filter cannot be true: {lacks}")
            } else {
                format!("{}; {lacks}", row_group.reason)
            };
        }
        Ok(())
    }

    /// The filter for the file at `position`, bound to its schema.
    pub fn bound_filter(&self, position: usize, file: &OpenedFile) -> Result<Option<BoundExpr>> {
        self.file_filter(position, file)?
            .map(|filter| {
                bind(&filter, &filter_schema(&file.schema, file.metadata.file_metadata()), &self.options.bind)
                    .map_err(|e| PqsiftError::filter(format!("{}: {e}", file.name())))
            })
            .transpose()
    }

    /// Per file, whether its partition values let the filter be true (all `true` without
    /// partitions or filter): decided before any footer but the first file's is read.
    fn files_by_partition(&self) -> Result<Vec<bool>> {
        let all = vec![true; self.table.files.len()];
        let (Some(filter), Some(partitions)) = (&self.filter, &self.table.partitions) else {
            return Ok(all);
        };
        if self.table.files.is_empty() {
            return Ok(all);
        }
        let (schema, from_partition) = match self.declared_schema() {
            Some(declared) => declared,
            None => self.table_schema(&*self.open(0)?),
        };
        prune_files(filter, &schema, &from_partition, partitions, &self.options.bind)
    }

    /// Per file, whether the table format's file statistics — a Delta log's (with its
    /// partition values), an Iceberg snapshot's manifests — let the filter be true; only
    /// asked of files `by_partition` keeps. All `true` for other tables, without a filter,
    /// or with the statistics stage off.
    fn files_by_log_statistics(&self, by_partition: &[bool]) -> Result<Vec<bool>> {
        let all = vec![true; self.table.files.len()];
        if !self.options.statistics || !by_partition.contains(&true) {
            return Ok(all);
        }
        if let (Some(filter), Some(declared), Some(iceberg)) = (&self.filter, &self.table.declared, &self.table.iceberg)
        {
            if !iceberg.has_entries() {
                return Ok(all);
            }
            return prune_by_manifest_statistics(filter, declared, &iceberg.files, &iceberg.specs, &self.options.bind)
                .map_err(|e| {
                    PqsiftError::table(&iceberg.table_root, format!("pruning on the manifests' statistics: {e}"))
                });
        }
        let (Some(filter), Some(declared), Some(delta)) = (&self.filter, &self.table.declared, &self.table.delta)
        else {
            return Ok(all);
        };
        let (_, from_partition) = self.declared_schema().expect("a declared schema");
        prune_by_log_statistics(
            filter,
            declared,
            &from_partition,
            self.table.partitions.as_ref(),
            delta,
            &self.options.bind,
        )
        .map_err(|e| PqsiftError::table(&delta.table_root, format!("pruning on the log's statistics: {e}")))
    }

    /// The files left once partition values and a Delta log's statistics have pruned, with
    /// their sizes — without reading their footers (a Hive table's first footer aside: its
    /// schema types the partition filter). Planning at scale leaves the footers to the
    /// readers (lazy partitions, as Databend plans them); the metrics count the files pruned
    /// so far.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join("pqsift_lazy_doc");
    /// # for day in [1, 2] {
    /// #     std::fs::create_dir_all(dir.join(format!("day={day}"))).unwrap();
    /// #     let batch = arrow::array::RecordBatch::try_from_iter([("x", std::sync::Arc::new(arrow::array::Int64Array::from(vec![1, 2])) as _)]).unwrap();
    /// #     let file = std::fs::File::create(dir.join(format!("day={day}/f.parquet"))).unwrap();
    /// #     let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    /// #     w.write(&batch).unwrap(); w.close().unwrap();
    /// # }
    /// use pqsift::planning::scan::{Scan, ScanOptions};
    /// use pqsift::reading::table_reads::ScanReads;
    /// use pqsift::table::hive::HiveOptions;
    /// use pqsift::table::source::{Table, TableOptions};
    /// let options = ScanOptions::default();
    /// let hive = HiveOptions::from_bind(&options.bind, true);
    /// let table = Table::resolve(&[dir.into()], &TableOptions::default(), &hive, &ScanReads).unwrap();
    /// let scan = Scan::of_table(table, None, Some("day = 2"), options).unwrap();
    /// let (files, metrics) = scan.files_to_read().unwrap();
    /// assert_eq!(files.len(), 1);
    /// assert!(files[0].1 > 0); // its size in bytes
    /// assert_eq!(metrics.files_pruned_partition, 1);
    /// ```
    pub fn files_to_read(&self) -> Result<(Vec<(usize, u64)>, PruningMetrics)> {
        let by_partition = self.files_by_partition()?;
        let by_log = self.files_by_log_statistics(&by_partition)?;
        let mut metrics = PruningMetrics { files_total: self.table.files.len() as u64, ..PruningMetrics::default() };
        let mut files = Vec::new();
        for position in 0..self.table.files.len() {
            match (by_partition[position], by_log[position]) {
                (false, _) => metrics.files_pruned_partition += 1,
                (true, false) if self.table.iceberg.is_some() => metrics.files_pruned_manifest += 1,
                (true, false) => metrics.files_pruned_log_stats += 1,
                (true, true) => {
                    let location = &self.table.files[position];
                    let size = match location.known_version() {
                        Some(version) => version.size,
                        None => parquet::file::reader::Length::len(&crate::storage::FileSource::open(location)?),
                    };
                    files.push((position, size));
                }
            }
        }
        metrics.files_pruned =
            metrics.files_pruned_partition + metrics.files_pruned_log_stats + metrics.files_pruned_manifest;
        Ok((files, metrics))
    }

    /// Plans the scan from metadata: footers, bloom filters and page indexes, no column data.
    ///
    /// The scan then holds the footers of the first file and of the first group of files
    /// with a row group to read (see [`ScanOptions::footer_bytes_read_together`]); it lets
    /// the others go, and [`Scan::open`] reads one again when the read reaches it (the
    /// read checks it against the plan's `footer_layout`).
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join("pqsift_plan_doc");
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let path = dir.join("t.parquet");
    /// # let batch = arrow::array::RecordBatch::try_from_iter([("x", std::sync::Arc::new(arrow::array::Int64Array::from((0..10).collect::<Vec<i64>>())) as _)]).unwrap();
    /// # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), None).unwrap();
    /// # w.write(&batch).unwrap(); w.close().unwrap();
    /// use pqsift::planning::scan::{Scan, ScanOptions};
    /// let scan = Scan::new(vec![path], None, Some("x > 100"), ScanOptions::default()).unwrap();
    /// let plan = scan.plan().unwrap();
    /// assert_eq!(plan.files[0].row_groups[0].decision(), "skip");
    /// assert_eq!(plan.files[0].row_groups[0].reason, "max(x)=9 <= 100");
    /// assert_eq!((plan.metrics.files_pruned, plan.metrics.rows_selected), (1, 0));
    /// ```
    pub fn plan(&self) -> Result<ScanPlan> {
        self.plan_with_threads(1)
    }

    /// [`Scan::plan`], reading the footers of local files on up to `threads` threads, a
    /// window of [`FOOTERS_FETCHED_AHEAD`] files at a time (as the footers of files in an
    /// object store are fetched): the same plan, sooner for a table of many files.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join("pqsift_plan_threads_doc");
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let files: Vec<_> = (0..4_i64).map(|i| {
    /// #     let path = dir.join(format!("part-{i}.parquet"));
    /// #     let batch = arrow::array::RecordBatch::try_from_iter([("x", std::sync::Arc::new(arrow::array::Int64Array::from(vec![i])) as _)]).unwrap();
    /// #     let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), None).unwrap();
    /// #     w.write(&batch).unwrap(); w.close().unwrap();
    /// #     path
    /// # }).collect();
    /// use pqsift::planning::scan::{Scan, ScanOptions};
    /// let scan = Scan::new(files, None, Some("x = 2"), ScanOptions::default()).unwrap();
    /// let plan = scan.plan_with_threads(2).unwrap();
    /// let read: Vec<bool> = plan.files.iter().map(|file| !file.is_pruned()).collect();
    /// assert_eq!(read, [false, false, true, false]);
    /// ```
    pub fn plan_with_threads(&self, threads: usize) -> Result<ScanPlan> {
        // A new epoch at each plan: what the cache has seen used since the scan was made
        // (another scan's files) may go.
        self.cache_epoch.store(MetadataCache::global().epoch().into(), std::sync::atomic::Ordering::Relaxed);
        let mut metrics = PruningMetrics::default();
        let mut files = Vec::with_capacity(self.table.files.len());
        let by_partition = self.files_by_partition()?;
        let by_log = self.files_by_log_statistics(&by_partition)?;
        let surviving: Vec<usize> = (0..self.table.files.len()).filter(|&p| by_partition[p] && by_log[p]).collect();
        // Footers are read ahead in windows (fetched from a store, or read on `threads`
        // threads), not all at once: a window's footers are held only until its files are
        // planned.
        let mut fetched_ahead = surviving.chunks(FOOTERS_FETCHED_AHEAD).peekable();
        let mut read_groups = ReadGroups::new(self.options.footer_bytes_read_together);
        for position in 0..self.table.files.len() {
            crate::interrupt::check()?;
            if fetched_ahead.peek().is_some_and(|window| window.first() == Some(&position)) {
                self.open_concurrently(fetched_ahead.next().expect("peeked"), threads);
            }
            if !by_partition[position] || !by_log[position] {
                let path = self.table.files[position].to_string();
                let reason = if !by_partition[position] {
                    metrics.files_pruned_partition += 1;
                    let partitions = self.table.partitions.as_ref().map(|p| p.describe(position)).unwrap_or_default();
                    format!("partition values ({partitions}): the filter cannot be true")
                } else if self.table.iceberg.is_some() {
                    metrics.files_pruned_manifest += 1;
                    "the manifest's statistics and partition values: the filter cannot be true".to_string()
                } else {
                    metrics.files_pruned_log_stats += 1;
                    "the Delta log's statistics: the filter cannot be true".to_string()
                };
                files.push(FileAccessPlan::skipped(path, reason));
                metrics.files_total += 1;
                metrics.files_pruned += 1;
                continue;
            }
            let file = self.open(position)?;
            let mut plan =
                panics_as_corrupt(&file.location, "planning", || self.plan_file(position, &file, &mut metrics))
                    .map_err(|e| e.in_file(&file.location, "planning"))?;
            self.apply_deletion_vector(position, &file, &mut plan, &mut metrics)?;
            metrics.files_total += 1;
            metrics.row_groups_total += plan.row_groups.len() as u64;
            metrics.rows_total += plan.row_groups.iter().map(|rg| rg.rows as u64).sum::<u64>();
            for row_group in &mut plan.row_groups {
                row_group.compressed_bytes = file.metadata.row_group(row_group.index).compressed_size().max(0) as u64;
            }
            if !plan.is_pruned() {
                let leaves = self.leaves_read(&file, true);
                for row_group in &mut plan.row_groups {
                    row_group.read_bytes = row_group_bytes(&file.metadata, row_group, &leaves);
                }
                // Priced only where the page index proved some rows: most plans have none.
                if plan.row_groups.iter().any(|rg| rg.certain_rows > 0) {
                    let output = self.leaves_read(&file, false);
                    for row_group in plan.row_groups.iter_mut().filter(|rg| rg.certain_rows > 0) {
                        row_group.certain_output_bytes =
                            output_bytes(&file.metadata, row_group.index, &output, row_group.certain_rows);
                    }
                }
            }
            // Held: the footers of the files the read opens first (the first file among
            // them, for its schema, unless the table declares one). The others are read
            // again when the read reaches them (TopN pruning compares every file: all held).
            let read = !plan.is_pruned() || (position == 0 && self.declared().is_none());
            if read {
                plan.footer_bytes = file.footer_bytes;
                plan.footer_layout = Some(file.layout);
            }
            let held_for_read = read && (self.options.top_n.is_some() || read_groups.add(plan.footer_bytes) == 0);
            files.push(plan);
            drop(file);
            if !held_for_read {
                self.release(position);
            }
        }
        if let Some(top_n) = &self.options.top_n {
            self.prune_top_n(top_n, &by_partition, &by_log, &mut files, &mut metrics)?;
            for (position, plan) in files.iter_mut().enumerate() {
                for row_group in plan.row_groups.iter_mut().filter(|rg| rg.access == RowGroupAccess::Skip) {
                    row_group.read_bytes = 0;
                    (row_group.certain_rows, row_group.certain_output_bytes) = (0, 0);
                }
                if plan.is_pruned() {
                    self.release(position);
                }
            }
        }
        for plan in files.iter().filter(|plan| plan.skipped.is_none()) {
            // A file without rows was not pruned: there was nothing to read.
            if plan.row_groups.iter().any(|rg| rg.rows > 0) && plan.is_pruned() {
                metrics.files_pruned += 1;
            }
            metrics.row_groups_selected += plan.surviving().count() as u64;
            metrics.rows_selected += plan.selected_rows() as u64;
        }
        Ok(ScanPlan { files, metrics, table_note: self.table.metadata_note() })
    }

    /// The leaf columns of `file` a read of this scan decodes: those under the projected
    /// columns and (`with_filter`) the filter's columns, matched by root name; every leaf
    /// without a projection, or when a name does not find its column this simply (a
    /// declared schema's mapped names). It may count too much; too little only where a declared
    /// schema's name is another file column's (a column renamed by field id), which the
    /// driver read's output bound still catches.
    fn leaves_read(&self, file: &OpenedFile, with_filter: bool) -> Vec<usize> {
        let schema = file.metadata.file_metadata().schema_descr();
        let all = || (0..schema.num_columns()).collect();
        let Some(columns) = &self.columns else { return all() };
        let case_sensitive = self.options.bind.case_sensitive;
        let partition_schema = self.table.partition_schema();
        let filtered = self
            .filter
            .iter()
            .filter(|_| with_filter)
            .flat_map(crate::filter::columns)
            .map(|path| path.parts()[0].clone());
        let mut roots = Vec::new();
        for name in columns.iter().cloned().chain(filtered) {
            if find_field(partition_schema.fields(), &name, case_sensitive).is_some() {
                continue;
            }
            // A projected `s.x` names its root `s` (unless a column is called `s.x`).
            let root = find_field(file.schema.fields(), &name, case_sensitive)
                .or_else(|| find_field(file.schema.fields(), name.split('.').next()?, case_sensitive));
            match root {
                Some(root) => roots.push(root),
                None => return all(),
            }
        }
        (0..schema.num_columns()).filter(|&leaf| roots.contains(&schema.get_column_root_idx(leaf))).collect()
    }

    /// TopN pruning over every file planned (see [`topn_pruner`](crate::planning::topn_pruner)).
    fn prune_top_n(
        &self,
        top_n: &TopN,
        by_partition: &[bool],
        by_log: &[bool],
        files: &mut [FileAccessPlan],
        metrics: &mut PruningMetrics,
    ) -> Result<()> {
        // Footer statistics describe the file's own columns. A partition column (which
        // replaces a file column of its name) and a Delta table's declared columns (mapped
        // names, widened types) are not what they describe: no pruning on those keys.
        let Some(key) = top_n.keys.first() else { return Ok(()) };
        let first = &key.column.parts()[0];
        let is_partition = self
            .table
            .partitions
            .as_ref()
            .is_some_and(|p| find_field(p.schema.fields(), first, self.options.bind.case_sensitive).is_some());
        if is_partition || self.declared().is_some() {
            return Ok(());
        }
        let mut opened = Vec::with_capacity(files.len());
        let mut filters = Vec::with_capacity(files.len());
        for position in 0..files.len() {
            crate::interrupt::check()?;
            // A file none of whose row groups is read offers no row: not opened again.
            if !by_partition[position] || !by_log[position] || files[position].is_pruned() {
                opened.push(None);
                filters.push(None);
                continue;
            }
            let file = self.open(position)?;
            filters.push(self.bound_filter(position, &file)?);
            opened.push(Some(file));
        }
        if self.declared().is_some() {
            return Ok(()); // a file differed from the first: statistics are per file schema
        }
        let input = TopNInput { files: opened, filters, bind: &self.options.bind, page_index: self.options.page_index };
        prune_top_n(top_n, &input, files, metrics)
    }

    /// Leaves the rows a Delta deletion vector deletes out of the plan: each surviving row
    /// group's selection is intersected with the rows the vector keeps, so deleted rows are
    /// never decoded; a row group left without rows is skipped.
    fn apply_deletion_vector(
        &self,
        position: usize,
        file: &OpenedFile,
        plan: &mut FileAccessPlan,
        metrics: &mut PruningMetrics,
    ) -> Result<()> {
        let Some(kept) = self.table.kept_rows(position, &file.row_group_rows())? else { return Ok(()) };
        for (index, kept) in kept.into_iter().enumerate() {
            let Some(row_group) = plan.row_groups.get(index) else { continue };
            let rows = row_group.rows;
            let (access, before) = match &row_group.access {
                RowGroupAccess::Skip => continue,
                RowGroupAccess::Scan => (kept, rows),
                RowGroupAccess::Selection(selection) => (selection.intersection(&kept)?, selection.selected_count()),
            };
            let deleted = before - access.selected_count();
            if deleted == 0 {
                continue;
            }
            metrics.rows_deleted += deleted as u64;
            let reason = format!("{deleted} of its rows deleted");
            match access.selects_any() {
                true => plan.set(index, RowGroupAccess::Selection(access), "deletion vector", reason),
                false => {
                    plan.skip(index, "deletion vector", reason);
                    metrics.row_groups_pruned_deletion_vector += 1;
                }
            }
        }
        Ok(())
    }

    fn plan_file(&self, position: usize, file: &OpenedFile, metrics: &mut PruningMetrics) -> Result<FileAccessPlan> {
        let mut plan = FileAccessPlan::scan_all(file.name(), &file.row_group_rows());
        if let Some(range) = self.options.file_range {
            prune_by_range(file, range, &mut plan, metrics);
        }
        if let Some(row_groups) = &self.options.row_groups {
            prune_by_row_group_list(file, row_groups, &mut plan, metrics)?;
        }
        let Some(filter) = self.bound_filter(position, file)? else {
            return Ok(plan);
        };
        if self.options.statistics {
            prune_by_statistics(file, &filter, &mut plan, metrics)?;
            self.name_missing_columns(position, file, &mut plan)?;
        }
        if self.options.bloom_filter && !plan.is_pruned() {
            prune_by_bloom_filters(file, &filter, &mut plan, metrics)?;
        }
        if self.options.page_index && !plan.is_pruned() {
            prune_by_page_index(file, &filter, &mut plan, metrics)?;
        }
        Ok(plan)
    }
}
