//! Late-materialized evaluation of one row group: predicate columns first, then the
//! projection for the survivors only.
//!
//! Start from the access plan's selection; for each predicate (in the [`RowFilter`]'s
//! order) decode only its columns, only for the rows still selected, evaluate it, and
//! refine the selection with [`RowSelection::and_then`]; then decode the projected columns
//! for the surviving rows only. Columns decoded for a predicate and also projected come
//! from the [`CachedArrayReader`], never decoded twice.
//!
//! The parquet crate supplies page reading and decoding for a projection and a row
//! selection (with its `Selectors` policy, which skips pages without selected rows); the
//! loop, the selection, the runs-vs-mask choice ([`ReadPlan`], page-aware) and the cache
//! are ours. Handing the crate a `RowFilter` instead would bypass all three.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow::compute::{concat_batches, filter_record_batch};
use arrow::datatypes::{DataType, Schema, SchemaRef, TimeUnit};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatchReader;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ParquetRecordBatchReaderBuilder, RowSelection as CrateSelection, RowSelectionPolicy,
    RowSelector as CrateSelector,
};
use parquet::basic::Type as PhysicalType;

use crate::error::{PqsiftError, Result};
use crate::filter::{BindOptions, BoundExpr, bind, evaluate};
use crate::format::metadata;
use crate::format::metadata_cache::MetadataCache;
use crate::format::page_headers::{check_column_chunk, check_pages, chunk_range};
use crate::reading::cached_reader::{CacheTier, CachedArrayReader, SharedArrayCache};
use crate::reading::decode_failure::{MAX_OFFSET_BYTES, halves, offset_bytes};
use crate::reading::row_filter::RowFilter;
use crate::selection::{ReadPlan, RowSelection, RowSelector, SelectionPolicy};
use crate::storage::source::MemoryFile;
use crate::storage::{FileSource, Location};

/// Per root, the Parquet leaf columns to decode instead of all of its leaves.
pub type LeafSubsets = BTreeMap<usize, Vec<usize>>;

/// Root columns to decode, in the order wanted, and of the roots read only through paths
/// (structs pruned to the fields asked for) the Parquet leaves to decode: a read's
/// projection, built once per file and passed along.
///
/// ```
/// use pqsift::reading::row_group_reader::{LeafSubsets, RootColumns};
///
/// // Root 2 then root 0; of root 2, a struct, only its leaf 4 is decoded.
/// let subsets = LeafSubsets::from([(2, vec![4])]);
/// let columns = RootColumns { roots: &[2, 0], leaf_subsets: &subsets };
/// assert_eq!(columns.roots, [2, 0]);
/// assert_eq!(columns.leaf_subsets.get(&2), Some(&vec![4]));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RootColumns<'a> {
    /// Root column indices, in output order.
    pub roots: &'a [usize],
    /// Per root read through paths, its leaves to decode (a root not listed: all of them).
    pub leaf_subsets: &'a LeafSubsets,
}

impl<'a> RootColumns<'a> {
    /// `roots`, each decoded whole (no leaf subset applies).
    fn whole(roots: &'a [usize]) -> Self {
        static NONE: LeafSubsets = BTreeMap::new();
        Self { roots, leaf_subsets: &NONE }
    }

    /// The same leaf subsets for other roots.
    fn with_roots(self, roots: &'a [usize]) -> Self {
        Self { roots, ..self }
    }
}

/// One decode of a row group's columns: which row group, the read's options, and the types
/// the caller takes — the same through every call the decode makes.
#[derive(Debug, Clone, Copy)]
struct DecodeStage<'a> {
    row_group: usize,
    options: &'a ReadOptions,
    decode: Decode,
}

/// How rows are read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Late materialization on; off decodes every needed column for the planned rows, then
    /// filters (the baseline).
    pub pushdown_filters: bool,
    /// Runs or mask, per stretch of surviving pages.
    pub selection_policy: SelectionPolicy,
    /// Rows per output batch.
    pub batch_size: usize,
    /// Threads one row group may decode its columns on (the stream sets it when it has
    /// fewer row groups than threads: a single surviving row group should not leave the
    /// other cores idle).
    pub column_threads: usize,
    /// From an object store, neighbouring byte ranges closer than this are fetched as one
    /// request.
    pub coalesce_gap: u64,
    /// Pages claiming more uncompressed bytes are refused before they are decompressed
    /// (see [`page_headers`](crate::format::page_headers)).
    pub max_page_bytes: u64,
    /// Row groups estimated to decode to more than this are read in windows of rows of
    /// about this size (see [`row_windows`](crate::reading::row_windows)).
    pub decode_bytes: u64,
    /// Output top-level strings and binaries as Arrow views (see
    /// [`string_views`](crate::reading::string_views)).
    pub string_view: bool,
    /// Decode projected strings as views and leave them so (the stream sets it when
    /// `string_view` is on and nothing between decoding and output needs the file's
    /// types).
    pub keep_views: bool,
    /// No row group (or window) outputs more rows than this: a `LIMIT` read in file order
    /// keeps the first rows of each, so the projection is decoded for those only (the
    /// stream sets it when it has a limit and does not sort).
    pub row_limit: Option<usize>,
}

/// The default most rows of an output batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            pushdown_filters: true,
            selection_policy: SelectionPolicy::default(),
            batch_size: DEFAULT_BATCH_SIZE,
            column_threads: 1,
            coalesce_gap: crate::storage::remote_file::DEFAULT_REMOTE_COALESCE_GAP,
            max_page_bytes: crate::format::page_headers::DEFAULT_MAX_PAGE_BYTES,
            decode_bytes: crate::reading::row_windows::DEFAULT_DECODE_BYTES,
            string_view: false,
            keep_views: false,
            row_limit: None,
        }
    }
}

/// What reading one row group did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadMetrics {
    /// Values decoded, summed over columns (a column decoded for `n` rows counts `n`).
    pub rows_decoded: u64,
    /// The same, per root column name.
    pub rows_decoded_by_column: BTreeMap<String, u64>,
    /// Columns served from the cache instead of decoded.
    pub cache_hits: u64,
    /// Columns looked up in the cache and decoded.
    pub cache_misses: u64,
    /// Time decoding and evaluating predicates.
    pub predicate_time: Duration,
    /// Time decoding the projection.
    pub projection_time: Duration,
    /// Rows that passed.
    pub rows_out: u64,
    /// Windows of rows read, for row groups too large to decode at once (see
    /// [`row_windows`](crate::reading::row_windows)); 0 when every row group was read whole.
    pub windows: u64,
    /// Parts the rows passing a row group's filter were decoded in, for filters passing
    /// more rows than decode at once (see [`parts`](crate::reading::row_windows::parts)).
    pub projection_parts: u64,
    /// Row groups `ORDER BY ... LIMIT k` did not read because their statistics rule out the
    /// k-th row's key (see [`topk_threshold`](crate::reading::topk_threshold)).
    pub row_groups_skipped_by_threshold: u64,
    /// Those row groups, as (file, row group index), and the condition on the key their
    /// statistics ruled out: the k-th row's key as the first pass learnt it.
    pub threshold_skips: Option<ThresholdSkips>,
    /// Pages of the first sort key's column, in row groups whose keys the first pass read
    /// in part, that it did not read: the page index rules out the running threshold there
    /// (see [`topk_threshold`](crate::reading::topk_threshold)).
    pub pages_skipped_by_threshold: u64,
    /// Row groups `ORDER BY ... LIMIT k`'s first pass read the keys of and found none of
    /// the top k rows in: the read proper does not read them again.
    pub row_groups_without_top_rows: u64,
    /// Row groups read from a store whose projection was fetched in the round trip of their
    /// predicate columns (see [`round_trips`](crate::reading::round_trips)).
    pub projections_fetched_with_predicates: u64,
}

/// What [`FileReader::read_row_group`] read of a row group.
#[derive(Debug)]
pub struct RowGroupRead {
    /// The root columns of the projection, for the rows of `rows`.
    pub batch: RecordBatch,
    /// What reading it did.
    pub metrics: ReadMetrics,
    /// The rows `batch` holds, of the row group's (`None`: not known, where the filter ran
    /// on the decoded rows).
    pub rows: Option<RowSelection>,
    /// The selections of the parts the rows passing the filter are decoded in next, when
    /// they are too many to decode at once (`batch` is then empty).
    pub parts: Vec<RowSelection>,
}

/// What `ORDER BY ... LIMIT k`'s threshold kept out of a read (see
/// [`topk_threshold`](crate::reading::topk_threshold)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThresholdSkips {
    /// The condition every row of the top k meets, as Spark SQL (`ts >= TIMESTAMP '...'`).
    pub key_condition: String,
    /// The row groups not read: (file path or URL, row group index).
    pub row_groups: Vec<(String, usize)>,
    /// The row groups whose keys the first pass read, holding none of the top k rows: not
    /// read again (file path or URL, row group index).
    pub without_top_rows: Vec<(String, usize)>,
}

impl ReadMetrics {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &ReadMetrics) {
        self.rows_decoded += other.rows_decoded;
        for (name, rows) in &other.rows_decoded_by_column {
            *self.rows_decoded_by_column.entry(name.clone()).or_default() += rows;
        }
        self.cache_hits += other.cache_hits;
        self.cache_misses += other.cache_misses;
        self.predicate_time += other.predicate_time;
        self.projection_time += other.projection_time;
        self.rows_out += other.rows_out;
        self.windows += other.windows;
        self.projection_parts += other.projection_parts;
        self.row_groups_skipped_by_threshold += other.row_groups_skipped_by_threshold;
        self.row_groups_without_top_rows += other.row_groups_without_top_rows;
        self.pages_skipped_by_threshold += other.pages_skipped_by_threshold;
        if let Some(skips) = &other.threshold_skips {
            let mine = self.threshold_skips.get_or_insert_with(ThresholdSkips::default);
            mine.key_condition.clone_from(&skips.key_condition);
            mine.row_groups.extend(skips.row_groups.iter().cloned());
            mine.without_top_rows.extend(skips.without_top_rows.iter().cloned());
        }
        self.projections_fetched_with_predicates += other.projections_fetched_with_predicates;
    }
}

/// One file opened for reading: its metadata, and the row filter's predicates bound to
/// its schema.
#[derive(Debug)]
pub struct FileReader {
    /// The file: from a store, the object (no descriptor held); a local file is opened when
    /// first read and closed by [`FileReader::release`], so that a scan of thousands of
    /// files holds only those being read open.
    file: Handle,
    metadata: ArrowReaderMetadata,
    key: Arc<str>,
    /// The file's indices of the metadata's row groups when it holds only some (see
    /// [`OpenedFile::row_group_numbers`](crate::format::opener::OpenedFile::row_group_numbers)).
    row_group_numbers: Option<Arc<[usize]>>,
    /// Per predicate (text order): the predicate bound to the schema of its roots.
    bound: Vec<BoundExpr>,
    /// The file's schema as the predicates were bound to it
    /// ([`filter_schema`](crate::format::opener::filter_schema): INT96 roots labelled UTC).
    filter_schema: SchemaRef,
    /// A second handle for page header checks of local files, so that they stay out of
    /// `bytes_read` (column data read).
    probe: Handle,
    /// Column chunks (row group, leaf) whose page headers have been checked.
    checked: std::sync::Mutex<std::collections::HashSet<(usize, usize)>>,
    /// Per column chunk (row group, leaf) with repetition levels, the data pages whose
    /// levels have been checked (see [`repetition_levels`](crate::reading::repetition_levels)).
    levels_checked: std::sync::Mutex<std::collections::HashMap<(usize, usize), std::collections::HashSet<usize>>>,
    /// From a store: per row group being read, the pages of its predicate columns, fetched
    /// at once by its first stage.
    prefetched: std::sync::Mutex<std::collections::HashMap<usize, FileSource>>,
    /// The metadata decoding strings as dictionaries or views (see
    /// [`FileReader::decode_metadata`]), per way the string chunks decode and choice of
    /// views.
    decode_metadata: std::sync::Mutex<DecodeMetadataCache>,
    /// The metadata decoding the file's INT96 leaves in seconds, to check those the crate
    /// decodes in nanoseconds (see [`int96_range`](crate::reading::int96_range)); `None`
    /// when the file has no INT96 leaf or the crate refused the hint.
    int96_in_seconds: std::sync::OnceLock<Option<ArrowReaderMetadata>>,
}

/// See [`FileReader::decode_metadata`]: `None` where the crate refused the hint.
type DecodeMetadataCache =
    std::collections::HashMap<(Vec<crate::reading::string_views::ChunkStrings>, bool), Option<ArrowReaderMetadata>>;

/// A file a [`FileReader`] reads: an object in a store, or a local file opened on first
/// use and closed on [`Handle::release`] (bytes read through released descriptors kept).
#[derive(Debug)]
enum Handle {
    Remote(FileSource),
    /// A small file read whole with its footer.
    Memory(FileSource),
    Local {
        path: std::path::PathBuf,
        open: std::sync::Mutex<Option<FileSource>>,
        released_bytes: AtomicU64,
    },
}

impl Handle {
    fn local(path: &std::path::Path) -> Self {
        Self::Local { path: path.to_path_buf(), open: std::sync::Mutex::new(None), released_bytes: AtomicU64::new(0) }
    }

    /// The file, opened if it is not.
    fn source(&self) -> Result<FileSource> {
        match self {
            Self::Remote(source) | Self::Memory(source) => Ok(source.clone()),
            Self::Local { path, open, .. } => {
                let mut open = open.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(source) = open.as_ref() {
                    return Ok(source.clone());
                }
                let source = FileSource::Local(crate::storage::local_file::CountingFile::open(path)?);
                *open = Some(source.clone());
                Ok(source)
            }
        }
    }

    /// Drops this handle's descriptor (reads in flight keep theirs).
    fn release(&self) {
        if let Self::Local { open, released_bytes, .. } = self
            && let Some(source) = open.lock().unwrap_or_else(|p| p.into_inner()).take()
        {
            released_bytes.fetch_add(source.bytes_read(), Ordering::Relaxed);
        }
    }

    fn bytes_read(&self) -> u64 {
        match self {
            Self::Remote(source) | Self::Memory(source) => source.bytes_read(),
            Self::Local { open, released_bytes, .. } => {
                let open = open.lock().unwrap_or_else(|p| p.into_inner());
                released_bytes.load(Ordering::Relaxed) + open.as_ref().map_or(0, FileSource::bytes_read)
            }
        }
    }
}

impl FileReader {
    /// A reader of the file at `location` with `filter`'s predicates bound to
    /// `filter_schema` (its schema as filters bind to it,
    /// [`filter_schema`](crate::format::opener::filter_schema)): an object in a store is
    /// opened now (its size known), a local file when first read.
    pub fn new(
        location: &Location,
        metadata: ArrowReaderMetadata,
        filter_schema: SchemaRef,
        filter: &RowFilter,
        options: &BindOptions,
    ) -> Result<Self> {
        let key: Arc<str> = Arc::from(location.to_string());
        let mut bound = Vec::with_capacity(filter.predicates().len());
        for predicate in filter.predicates() {
            let schema = project_schema(&filter_schema, &predicate.roots);
            bound.push(bind(&predicate.expr, &schema, options)?);
        }
        let small = MetadataCache::global().small_file(location, metadata.metadata());
        let (file, probe) = match (location, small) {
            // Read whole with its footer: no descriptor, no further read (two sources, so
            // that the probe's reads stay out of `bytes_read` as below).
            (_, Some(bytes)) => {
                let name = location.to_string();
                let memory = || Handle::Memory(FileSource::Memory(MemoryFile::new(&name, bytes.clone())));
                (memory(), memory())
            }
            (Location::Local(path), None) => (Handle::local(path), Handle::local(path)),
            (remote, None) => {
                let source = FileSource::open(remote)?;
                (Handle::Remote(source.clone()), Handle::Remote(source))
            }
        };
        Ok(Self {
            file,
            metadata,
            key,
            row_group_numbers: None,
            bound,
            filter_schema,
            probe,
            checked: Default::default(),
            levels_checked: Default::default(),
            prefetched: Default::default(),
            decode_metadata: Default::default(),
            int96_in_seconds: Default::default(),
        })
    }

    /// The reader, its metadata holding the row groups of the file `numbers` names (see
    /// [`OpenedFile::row_group_numbers`](crate::format::opener::OpenedFile::row_group_numbers)).
    pub fn numbering_row_groups(mut self, numbers: Option<Arc<[usize]>>) -> Self {
        self.row_group_numbers = numbers;
        self
    }

    /// The index in the file of the metadata's row group `index`, as messages name it.
    pub fn row_group_number(&self, index: usize) -> usize {
        crate::format::opener::row_group_number(self.row_group_numbers.as_deref(), index)
    }

    /// A message about `column` of the metadata's row group `row_group`, naming the row
    /// group by its number in the file.
    fn at_column(&self, row_group: usize, column: &str, reason: impl std::fmt::Display) -> String {
        format!("row group {}, column {column}: {reason}", self.row_group_number(row_group))
    }

    /// The file's Parquet metadata.
    pub fn metadata(&self) -> &parquet::file::metadata::ParquetMetaData {
        self.metadata.metadata()
    }

    /// The file's Arrow schema.
    pub fn schema(&self) -> &SchemaRef {
        self.metadata.schema()
    }

    /// Whether the file is in an object store.
    pub fn is_remote(&self) -> bool {
        matches!(self.file, Handle::Remote(_))
    }

    /// Closes a local file's descriptors until it is read again (a no-op from a store).
    pub fn release(&self) {
        self.file.release();
        self.probe.release();
    }

    /// The file's path or URL.
    pub fn name(&self) -> &str {
        &self.key
    }

    /// Bytes read from the file so far.
    pub fn bytes_read(&self) -> u64 {
        self.file.bytes_read()
    }

    /// Reads row group `row_group` for `selection` (the access plan's; `None` = every
    /// row), returning the root columns of `projection` (in its order) of the rows that pass
    /// `filter`. A root with a leaf subset is decoded with only those Parquet leaves (a
    /// struct pruned to the fields a projection path needs) unless a predicate decoded it
    /// whole.
    ///
    /// When the rows passing the filter are estimated to decode to more than
    /// `options.decode_bytes`, the batch is empty and the selections of their parts (see
    /// [`parts`](crate::reading::row_windows::parts)) are returned for
    /// [`FileReader::read_rows`].
    pub fn read_row_group(
        &self,
        row_group: usize,
        selection: Option<&RowSelection>,
        projection: RootColumns<'_>,
        filter: &RowFilter,
        options: &ReadOptions,
        cache: &SharedArrayCache,
    ) -> Result<RowGroupRead> {
        let rows = self.metadata.metadata().row_group(row_group).num_rows().max(0) as usize;
        let selection = match selection {
            Some(s) if s.row_count() == rows => s.clone(),
            Some(s) => {
                return Err(PqsiftError::selection(format!(
                    "row group {number} has {rows} rows but the selection covers {}",
                    s.row_count(),
                    number = self.row_group_number(row_group)
                )));
            }
            None => RowSelection::select_all(rows),
        };
        match options.pushdown_filters {
            true => self.read_late_materialized(row_group, selection, projection, filter, options, cache),
            false => {
                let (batch, metrics) =
                    self.read_then_filter(row_group, &selection, projection.roots, filter, options)?;
                Ok(RowGroupRead { batch, metrics, rows: None, parts: Vec::new() })
            }
        }
    }

    /// The root columns of `projection` of `row_group` for the rows of `selection` (a part
    /// [`FileReader::read_row_group`] left, whose rows passed the filter): decoded, or
    /// from the shared cache where a predicate left them.
    pub fn read_rows(
        &self,
        row_group: usize,
        selection: &RowSelection,
        projection: RootColumns<'_>,
        options: &ReadOptions,
        cache: &SharedArrayCache,
    ) -> Result<(RecordBatch, ReadMetrics)> {
        let mut metrics = ReadMetrics::default();
        let mut cache = CachedArrayReader::new(cache, self.key.clone(), row_group);
        let started = Instant::now();
        let stage = DecodeStage { row_group, options, decode: Decode::Output };
        let out = self.columns(stage, projection, selection, &mut cache, &mut metrics)?;
        metrics.projection_time += started.elapsed();
        metrics.rows_out = out.num_rows() as u64;
        Ok((out, metrics))
    }

    /// Late materialization: each predicate's columns decoded for the rows still selected,
    /// the selection refined by each (`and_then`), the projection decoded for the
    /// survivors only; columns a predicate decoded are reused from the cache.
    fn read_late_materialized(
        &self,
        row_group: usize,
        mut selection: RowSelection,
        projection: RootColumns<'_>,
        filter: &RowFilter,
        options: &ReadOptions,
        cache: &SharedArrayCache,
    ) -> Result<RowGroupRead> {
        let mut metrics = ReadMetrics::default();
        let mut cache = CachedArrayReader::new(cache, self.key.clone(), row_group);
        // From a store, one round trip for every predicate's pages instead of one per stage
        // (and the projection's, when the pages holding survivors are expected to be most).
        let _prefetched = match self.is_remote() {
            true => {
                let projection_leaves = self.leaves_of(projection);
                self.prefetch_predicates(row_group, filter, &selection, &projection_leaves, options, &mut metrics)?
            }
            false => None,
        };
        let rows_before_filter = selection.selected_count() as u64;
        for index in filter.order() {
            if !selection.selects_any() {
                break;
            }
            let started = Instant::now();
            let predicate = &filter.predicates()[index];
            let rows_in = selection.selected_count() as u64;
            selection = match predicate.roots.is_empty() {
                true if self.constant_passes(index)? => selection,
                true => RowSelection::from_ranges(&[], selection.row_count())?,
                false
                    if let Some(passing) = self.evaluated_while_decoding(
                        DecodeStage { row_group, options, decode: Decode::FileTypes },
                        index,
                        &selection,
                        projection,
                        filter,
                        &mut cache,
                        &mut metrics,
                    )? =>
                {
                    passing
                }
                false => {
                    // A predicate on one string column may see it as a dictionary: it is
                    // evaluated on the dictionary's values, once each, and spread over the
                    // rows by key.
                    let decode = match predicate.roots.len() {
                        1 => Decode::Dictionaries,
                        _ => Decode::FileTypes,
                    };
                    let stage = DecodeStage { row_group, options, decode };
                    let columns = RootColumns::whole(&predicate.roots);
                    let batch = self.columns(stage, columns, &selection, &mut cache, &mut metrics)?;
                    let batch = self.in_filter_types(batch, &predicate.roots)?;
                    let file_types: Vec<&DataType> =
                        predicate.roots.iter().map(|&r| self.filter_schema.field(r).data_type()).collect();
                    let passed = crate::reading::dictionary_predicate::evaluate_by_dictionary(
                        &self.bound[index],
                        &batch,
                        &file_types,
                    )?;
                    selection.and_then(&RowSelection::from_filters(&[passed]))?
                }
            };
            let elapsed = started.elapsed();
            filter.record(index, rows_in, selection.selected_count() as u64, elapsed);
            metrics.predicate_time += elapsed;
        }
        filter.pass_rate().record(rows_before_filter, selection.selected_count() as u64);
        if let Some(limit) = options.row_limit {
            selection = selection.limit(limit);
        }
        let started = Instant::now();
        // Nothing reads the cache after the projection: what it decodes is not kept.
        let output = match filter.predicates().is_empty() {
            true => Decode::OutputAll,
            false => Decode::Output,
        };
        let selection_rows = selection.row_count();
        let mut parts = match filter.predicates().is_empty() {
            // Without a filter the row group's windows already bound the decode.
            true => vec![selection],
            false => {
                let leaves = self.leaves_of(projection);
                // Half the budget a part: the stream holds a few at once (see scan_stream).
                crate::reading::row_windows::parts(
                    self.metadata.metadata(),
                    row_group,
                    &leaves,
                    &selection,
                    options.decode_bytes / 2,
                )?
            }
        }
        .into_iter();
        // Several parts: all are left to the stream, which decodes them a few at a time (a
        // first part decoded here would be held with the task, ahead of the consumer).
        let first = match parts.len() {
            1 => parts.next().expect("one part"),
            _ => RowSelection::from_ranges(&[], selection_rows)?,
        };
        let stage = DecodeStage { row_group, options, decode: output };
        let out = self.columns(stage, projection, &first, &mut cache, &mut metrics)?;
        metrics.projection_time += started.elapsed();
        metrics.rows_out = out.num_rows() as u64;
        Ok(RowGroupRead { batch: out, metrics, rows: Some(first), parts: parts.collect() })
    }

    /// The rows of `selection` that pass predicate `index`, evaluated while its column is
    /// decoded ([`FileReader::evaluate_while_decoding`]), where it reads one root that no
    /// earlier stage left in the cache. Where the projection or another predicate reads
    /// that root too, the values of the rows that pass are kept and cached for them (for
    /// those rows only: every later stage reads a subset of them); else nothing of the
    /// column is kept. `None`: not such a predicate or column.
    #[allow(clippy::too_many_arguments)]
    fn evaluated_while_decoding(
        &self,
        stage: DecodeStage<'_>,
        index: usize,
        selection: &RowSelection,
        projection: RootColumns<'_>,
        filter: &RowFilter,
        cache: &mut CachedArrayReader<'_>,
        metrics: &mut ReadMetrics,
    ) -> Result<Option<RowSelection>> {
        let [root] = filter.predicates()[index].roots[..] else {
            return Ok(None);
        };
        if cache.holds(root, selection)? {
            return Ok(None);
        }
        let read_later = projection.roots.contains(&root)
            || filter.predicates().iter().enumerate().any(|(other, p)| other != index && p.roots.contains(&root));
        let Some((answers, passed)) =
            self.evaluate_while_decoding(stage, index, root, selection, read_later, metrics)?
        else {
            return Ok(None);
        };
        let passing = selection.and_then(&RowSelection::from_filters(&[answers]))?;
        if let Some(values) = passed {
            cache.insert(root, values, passing.clone());
        }
        Ok(Some(passing))
    }

    /// The Parquet leaves decoding `columns` reads: all of each root's, or those its leaf
    /// subset lists.
    fn leaves_of(&self, columns: RootColumns<'_>) -> Vec<usize> {
        let parquet_schema = self.metadata.parquet_schema();
        (0..parquet_schema.num_columns())
            .filter(|&leaf| {
                let root = parquet_schema.get_column_root_idx(leaf);
                columns.roots.contains(&root)
                    && columns.leaf_subsets.get(&root).is_none_or(|subset| subset.contains(&leaf))
            })
            .collect()
    }

    /// The baseline (`pushdown_filters=False`): decode every column needed for the planned
    /// rows, then filter.
    fn read_then_filter(
        &self,
        row_group: usize,
        selection: &RowSelection,
        projection: &[usize],
        filter: &RowFilter,
        options: &ReadOptions,
    ) -> Result<(RecordBatch, ReadMetrics)> {
        let mut metrics = ReadMetrics::default();
        let started = Instant::now();
        let mut needed: Vec<usize> = projection.to_vec();
        for predicate in filter.predicates() {
            needed.extend(&predicate.roots);
        }
        needed.sort_unstable();
        needed.dedup();
        let stage = DecodeStage { row_group, options, decode: Decode::FileTypes };
        let all = self.decode(stage, RootColumns::whole(&needed), selection, &mut metrics)?;
        let all = self.to_file_types(all, &needed, false)?;
        let mut keep: Option<BooleanArray> = None;
        let mut none_pass = false;
        for (index, predicate) in filter.predicates().iter().enumerate() {
            if predicate.roots.is_empty() {
                match self.constant_passes(index)? {
                    true => continue,
                    false => {
                        none_pass = true;
                        break;
                    }
                }
            }
            let columns = self.in_filter_types(pick(&all, &needed, &predicate.roots)?, &predicate.roots)?;
            // Unknown (null) is not selected.
            let passed = match &keep {
                // A conjunct that can raise sees only the rows the ones before it kept.
                Some(kept) if predicate.can_raise => {
                    let reached = filter_record_batch(&columns, kept)?;
                    let passed = evaluate(&self.bound[index], &reached)?;
                    let kept = RowSelection::from_filters(std::slice::from_ref(kept));
                    kept.and_then(&RowSelection::from_filters(&[passed]))?.to_mask()
                }
                _ => RowSelection::from_filters(&[evaluate(&self.bound[index], &columns)?]).to_mask(),
            };
            let passed = BooleanArray::new(passed, None);
            keep = Some(match keep {
                Some(k) => arrow::compute::and(&k, &passed)?,
                None => passed,
            });
        }
        let filtered = match keep {
            _ if none_pass => all.slice(0, 0),
            Some(mask) => filter_record_batch(&all, &mask)?,
            None => all,
        };
        let out = pick(&filtered, &needed, projection)?;
        metrics.projection_time += started.elapsed();
        metrics.rows_out = out.num_rows() as u64;
        Ok((out, metrics))
    }

    /// Whether the predicate `index`, which reads no column (`1 = 1`, or a constant of the
    /// session), passes: its one answer for every row, evaluated on one row rather than
    /// over the row group's — as many as its footer claims, which may be more than memory
    /// holds a bit each. NULL does not pass.
    fn constant_passes(&self, index: usize) -> Result<bool> {
        let options = RecordBatchOptions::new().with_row_count(Some(1));
        let one_row = RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &options)?;
        Ok(evaluate(&self.bound[index], &one_row)?.iter().next() == Some(Some(true)))
    }

    /// The root columns of `columns` (in that order) for the rows of `selection`: from the
    /// cache where it holds them, decoded otherwise (and cached for a predicate: a later
    /// predicate or the projection may need them). The stage says which types the caller
    /// takes.
    fn columns(
        &self,
        stage: DecodeStage<'_>,
        columns: RootColumns<'_>,
        selection: &RowSelection,
        cache: &mut CachedArrayReader<'_>,
        metrics: &mut ReadMetrics,
    ) -> Result<RecordBatch> {
        let (roots, leaf_subsets) = (columns.roots, columns.leaf_subsets);
        let keep = !stage.decode.is_output();
        let mut found: BTreeMap<usize, ArrayRef> = BTreeMap::new();
        let mut missing: Vec<usize> = Vec::new();
        for &root in roots {
            match cache.get(root, selection)? {
                Some((values, CacheTier::Local | CacheTier::Shared)) => {
                    metrics.cache_hits += 1;
                    found.insert(root, values);
                }
                None => {
                    metrics.cache_misses += 1;
                    missing.push(root);
                }
            }
        }
        missing.sort_unstable();
        missing.dedup();
        for (root, values) in self.decode_in_parallel(stage, columns.with_roots(&missing), selection, metrics)? {
            if keep && !leaf_subsets.contains_key(&root) {
                cache.insert(root, values.clone(), selection.clone());
            }
            found.insert(root, values);
        }
        let columns: Vec<ArrayRef> = roots.iter().map(|r| found[r].clone()).collect();
        // A root decoded through a leaf subset is a pruned struct: its type is the array's.
        let fields: Vec<_> = roots
            .iter()
            .zip(&columns)
            .map(|(&r, c)| self.metadata.schema().field(r).clone().with_data_type(c.data_type().clone()))
            .collect();
        let batch_options = RecordBatchOptions::new().with_row_count(Some(selection.selected_count()));
        let batch = RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &batch_options)?;
        // Dictionaries and views (decoded so, or cached so by a predicate) back to the
        // file's types, unless the caller takes them.
        match stage.decode {
            Decode::Dictionaries => self.to_file_types(batch, roots, true),
            decode if decode.is_output() && stage.options.keep_views => Ok(batch),
            _ => self.to_file_types(batch, roots, false),
        }
    }

    /// Decodes the root columns of `columns` (ascending) for the rows of `selection`, split
    /// over up to the options' `column_threads` threads: the roots are dealt, largest
    /// compressed chunk first, to the least loaded thread. See [`FileReader::decode`].
    fn decode_in_parallel(
        &self,
        stage: DecodeStage<'_>,
        columns: RootColumns<'_>,
        selection: &RowSelection,
        metrics: &mut ReadMetrics,
    ) -> Result<Vec<(usize, ArrayRef)>> {
        let (row_group, roots) = (stage.row_group, columns.roots);
        let threads = stage.options.column_threads.clamp(1, roots.len().max(1));
        if threads == 1 {
            if roots.is_empty() {
                return Ok(Vec::new());
            }
            let decoded = self.decode(stage, columns, selection, metrics)?;
            return Ok(roots.iter().copied().zip(decoded.columns().iter().cloned()).collect());
        }
        let mut groups: Vec<(u64, Vec<usize>)> = vec![(0, Vec::new()); threads];
        let mut by_size: Vec<(u64, usize)> = roots.iter().map(|&r| (self.compressed_bytes(row_group, r), r)).collect();
        by_size.sort_unstable_by(|a, b| b.cmp(a));
        for (size, root) in by_size {
            let lightest = groups.iter_mut().min_by_key(|(load, _)| *load).expect("threads >= 1");
            lightest.0 += size;
            lightest.1.push(root);
        }
        let results: Vec<Result<(Vec<usize>, RecordBatch, ReadMetrics)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = groups
                .into_iter()
                .filter(|(_, group)| !group.is_empty())
                .map(|(_, mut group)| {
                    group.sort_unstable();
                    scope.spawn(move || {
                        let mut local = ReadMetrics::default();
                        let decoded = self.decode(stage, columns.with_roots(&group), selection, &mut local)?;
                        Ok((group, decoded, local))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle.join().unwrap_or_else(|panic| {
                        Err(PqsiftError::corrupt(
                            self.name(),
                            format!(
                                "row group {number}: {}",
                                crate::error::panic_message(&panic),
                                number = self.row_group_number(row_group)
                            ),
                        ))
                    })
                })
                .collect()
        });
        let mut out = Vec::with_capacity(roots.len());
        for result in results {
            let (group, decoded, local) = result?;
            metrics.add(&local);
            out.extend(group.into_iter().zip(decoded.columns().iter().cloned()));
        }
        Ok(out)
    }

    /// Compressed bytes of root `root`'s column chunks in `row_group`.
    fn compressed_bytes(&self, row_group: usize, root: usize) -> u64 {
        let schema = self.metadata.parquet_schema();
        let row_group = self.metadata.metadata().row_group(row_group);
        (0..schema.num_columns())
            .filter(|&leaf| schema.get_column_root_idx(leaf) == root)
            .map(|leaf| row_group.column(leaf).compressed_size().max(0) as u64)
            .sum()
    }

    /// Decodes the root columns of `columns` (ascending) for the rows of `selection`: every
    /// leaf of each root, or the leaves its leaf subset lists.
    ///
    /// Top-level strings and binaries are decoded as dictionaries where their chunk is all
    /// dictionary-encoded, and the others as views where a filter follows the decode (a
    /// mask over pages' rows: the filter moves 16-byte views), views are output, or every
    /// decoded row is output (the stage's [`Decode::OutputAll`]: no filter). The caller
    /// copies the surviving rows' bytes into the file's types once
    /// ([`FileReader::to_file_types`], see [`string_gather`](crate::reading::string_gather))
    /// unless it takes dictionaries or views. A decode through runs for rows a filter
    /// selected copies plain strings directly: views would keep whole pages alive for a few
    /// values (slower on a selective read of a text column).
    fn decode(
        &self,
        stage: DecodeStage<'_>,
        columns: RootColumns<'_>,
        selection: &RowSelection,
        metrics: &mut ReadMetrics,
    ) -> Result<RecordBatch> {
        let (row_group, roots, options) = (stage.row_group, columns.roots, stage.options);
        let parquet_schema = self.metadata.parquet_schema();
        let leaves = self.leaves_of(columns);
        if !selection.selects_any() {
            let mask = ProjectionMask::leaves(parquet_schema, leaves.iter().copied());
            let corrupt = |e: parquet::errors::ParquetError| PqsiftError::corrupt(self.name(), e);
            // No row: the crate's reader, built over no row, still says the (pruned) types.
            let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(self.file.source()?, self.metadata.clone())
                .with_row_groups(vec![row_group])
                .with_projection(mask)
                .with_row_selection(CrateSelection::from(vec![CrateSelector::skip(selection.row_count())]))
                .build()
                .map_err(corrupt)?;
            return Ok(RecordBatch::new_empty(reader.schema()));
        }
        let (plan, decoder, source) = self.planned_source(row_group, &leaves, selection, options)?;
        // Flat fixed-width columns, and flat dictionary-encoded strings, are decoded for the
        // selected rows only (see flat_decode); the others, and any whose pages need the
        // crate, by the crate through the plan.
        let mut direct: BTreeMap<usize, ArrayRef> = BTreeMap::new();
        for &root in roots {
            if let Some(values) = self.decode_directly(&source, stage, root, columns.leaf_subsets, selection)? {
                direct.insert(root, values);
            }
        }
        let rest: Vec<usize> = roots.iter().copied().filter(|root| !direct.contains_key(root)).collect();
        let decoded = match rest.is_empty() {
            true => None,
            false => {
                Some(self.decode_with_crate(&source, stage, columns.with_roots(&rest), &plan, &decoder, selection)?)
            }
        };
        let by_crate = decoded.map(|batch| (rest, batch, plan.decoded_rows() as u64));
        self.assemble(roots, direct, by_crate, selection, metrics)
    }

    /// The roots `roots`, in that order, from those decoded directly (`direct`) and by the
    /// crate (`by_crate`: its roots, their batch and the rows it decoded), counted in
    /// `metrics`.
    fn assemble(
        &self,
        roots: &[usize],
        mut direct: BTreeMap<usize, ArrayRef>,
        by_crate: Option<(Vec<usize>, RecordBatch, u64)>,
        selection: &RowSelection,
        metrics: &mut ReadMetrics,
    ) -> Result<RecordBatch> {
        let mut fields = Vec::with_capacity(roots.len());
        let mut columns = Vec::with_capacity(roots.len());
        for &root in roots {
            let field = self.metadata.schema().field(root);
            let (field, column, rows) = match direct.remove(&root) {
                // A dictionary-encoded string column comes as a dictionary, as from the crate.
                Some(values) => (
                    field.clone().with_data_type(values.data_type().clone()),
                    values,
                    selection.selected_count() as u64,
                ),
                None => {
                    let (rest, batch, rows) = by_crate.as_ref().expect("the other roots decoded by the crate");
                    let at = rest.iter().position(|&r| r == root).expect("a root the crate decoded");
                    (batch.schema().field(at).clone(), batch.column(at).clone(), *rows)
                }
            };
            metrics.rows_decoded += rows;
            *metrics.rows_decoded_by_column.entry(field.name().clone()).or_default() += rows;
            fields.push(field);
            columns.push(column);
        }
        let batch_options = RecordBatchOptions::new().with_row_count(Some(selection.selected_count()));
        Ok(RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &batch_options)?)
    }

    /// Root `root` for the rows of `selection`, decoded by
    /// [`flat_decode`](crate::reading::flat_decode) from `source`; `None` when it is not a
    /// flat column decoded there, or a page of it needs the crate. Strings output as views
    /// (`keep_views`) are decoded as views, pointing into the pages, unless their chunk is
    /// all dictionary-encoded (a dictionary, as for other decodes).
    fn decode_directly(
        &self,
        source: &FileSource,
        stage: DecodeStage<'_>,
        root: usize,
        leaf_subsets: &LeafSubsets,
        selection: &RowSelection,
    ) -> Result<Option<ArrayRef>> {
        use crate::reading::flat_decode::{
            decodable, decode_dictionary_selected, decode_selected, dictionary_decodable,
        };
        let (row_group, options) = (stage.row_group, stage.options);
        let parquet_schema = self.metadata.parquet_schema();
        let arrow_type = self.metadata.schema().field(root).data_type();
        // A root read through a leaf subset is a pruned struct, never flat.
        if leaf_subsets.contains_key(&root) {
            return Ok(None);
        }
        let [leaf] = self.leaves_of(RootColumns::whole(&[root]))[..] else {
            return Ok(None);
        };
        let column = parquet_schema.column(leaf);
        let chunk = self.metadata.metadata().row_group(row_group).column(leaf);
        // A chunk with DELTA_BYTE_ARRAY or DELTA_LENGTH_BYTE_ARRAY pages is decoded as plain
        // strings even where views are kept (the views sink leaves those pages to the
        // crate); the output's cast then points views into them.
        use crate::reading::string_views::{ChunkStrings, chunk_strings};
        let view_type = match options.keep_views && stage.decode.is_output() {
            true if chunk_strings(chunk) != ChunkStrings::Plain => crate::reading::string_views::view_type(arrow_type),
            _ => None,
        };
        let dictionary = dictionary_decodable(&column, arrow_type, chunk);
        let arrow_type = match &view_type {
            Some(view_type) if !dictionary => view_type,
            _ => arrow_type,
        };
        if !dictionary && !decodable(&column, arrow_type) {
            return Ok(None);
        }
        self.with_flat_pages(source, row_group, root, leaf, options, |pages, stored| match dictionary {
            true => decode_dictionary_selected(pages, &column, arrow_type, selection, stored),
            false => decode_selected(pages, &column, arrow_type, selection, stored),
        })
    }

    /// Predicate `index`, on one root `root`, evaluated while the root is decoded, a few
    /// pages at a time (see [`evaluate_selected`](crate::reading::flat_decode::evaluate_selected)):
    /// the values are evaluated while in cache, and never all held; with `keep`, the
    /// values of the rows that pass are returned too. For a flat string or binary column
    /// whose chunk is not all dictionary-encoded (one that is, is evaluated on its
    /// dictionary), or a flat fixed-width one of its stored values (see
    /// [`evaluable`](crate::reading::flat_decode::evaluable)). `None`: not such a column,
    /// or a page needs the crate.
    fn evaluate_while_decoding(
        &self,
        stage: DecodeStage<'_>,
        index: usize,
        root: usize,
        selection: &RowSelection,
        keep: bool,
        metrics: &mut ReadMetrics,
    ) -> Result<Option<(BooleanArray, Option<ArrayRef>)>> {
        use crate::reading::flat_decode::{DecodeError, dictionary_decodable, evaluable, evaluate_selected};
        let (row_group, options) = (stage.row_group, stage.options);
        let field = self.metadata.schema().field(root);
        let file_type = field.data_type();
        let [leaf] = self.leaves_of(RootColumns::whole(&[root]))[..] else {
            return Ok(None);
        };
        let column = self.metadata.parquet_schema().column(leaf);
        let chunk = self.metadata.metadata().row_group(row_group).column(leaf);
        // (The predicate is bound to the filter's type of the column: the file's here.)
        let filter_type = self.filter_schema.field(root).data_type();
        if filter_type != file_type || !evaluable(&column, file_type) || dictionary_decodable(&column, file_type, chunk)
        {
            return Ok(None);
        }
        let (_, _, source) = self.planned_source(row_group, &[leaf], selection, options)?;
        let schema = Arc::new(Schema::new(vec![field.clone()]));
        let evaluate = |values: &ArrayRef| {
            let answers = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::clone(values)])
                .map_err(PqsiftError::from)
                .and_then(|batch| {
                    crate::reading::dictionary_predicate::evaluate_by_dictionary(
                        &self.bound[index],
                        &batch,
                        &[file_type],
                    )
                })
                .map_err(DecodeError::Predicate)?;
            Ok(answers.values().clone())
        };
        let answers = self.with_flat_pages(&source, row_group, root, leaf, options, |pages, stored| {
            evaluate_selected(pages, &column, file_type, selection, stored, keep, evaluate)
        })?;
        if answers.is_some() {
            let rows = selection.selected_count() as u64;
            metrics.rows_decoded += rows;
            *metrics.rows_decoded_by_column.entry(field.name().clone()).or_default() += rows;
        }
        Ok(answers.map(|(answers, passed)| (BooleanArray::new(answers, None), passed)))
    }

    /// `read` over the pages of leaf `leaf` (root `root`'s only one) in `row_group`: the
    /// crate's page reader, handing pages over still compressed where they are
    /// decompressed here, into a reused buffer (snappy pages, and zstd pages with an
    /// offset index, which says where each page's header is, for its size: those only as
    /// far as needed). Its errors name the file, the row group and the column.
    fn with_flat_pages<T>(
        &self,
        source: &FileSource,
        row_group: usize,
        root: usize,
        leaf: usize,
        options: &ReadOptions,
        read: impl FnOnce(
            &mut dyn parquet::column::page::PageReader,
            Option<&mut crate::reading::flat_decode::StoredPages<'_>>,
        ) -> std::result::Result<T, crate::reading::flat_decode::DecodeError>,
    ) -> Result<T> {
        use crate::reading::flat_decode::{DecodeError, StoredPages};
        let metadata = self.metadata.metadata();
        let chunk = metadata.row_group(row_group).column(leaf);
        let rows = metadata.row_group(row_group).num_rows().max(0) as usize;
        let locations = metadata.page_index_for_row_group(row_group).page_locations(leaf).cloned();
        let header_error = std::cell::RefCell::new(None);
        let max_page_bytes = usize::try_from(options.max_page_bytes).unwrap_or(usize::MAX);
        let mut stored = match chunk.compression() {
            parquet::basic::Compression::SNAPPY => Some(StoredPages::snappy(max_page_bytes)),
            parquet::basic::Compression::ZSTD(_) => locations.as_deref().map(|locations| {
                zstd_pages(source, chunk_range(chunk).0, locations, options.max_page_bytes, &header_error)
            }),
            _ => None,
        };
        let mut pages = self.page_reader(source, chunk, rows, locations.clone(), stored.is_some())?;
        let read = read(&mut pages, stored.as_mut());
        drop(stored);
        read.map_err(|e| match e {
            DecodeError::Parquet(e) => source.take_error().unwrap_or_else(|| PqsiftError::corrupt(self.name(), e)),
            DecodeError::Corrupt(reason) => header_error.take().unwrap_or_else(|| {
                let column = self.metadata.schema().field(root).name();
                PqsiftError::corrupt(self.name(), self.at_column(row_group, column, reason))
                    .about_column(crate::filter::ColumnPath::new([column]).name())
            }),
            DecodeError::OutOfRange(reason) => {
                let column = self.metadata.schema().field(root).name();
                PqsiftError::unsupported(self.name(), self.at_column(row_group, column, reason))
                    .about_column(crate::filter::ColumnPath::new([column]).name())
            }
            DecodeError::Predicate(e) => e,
        })
    }

    /// The crate's page reader over `chunk` of `rows` rows (its pages at `locations`, if
    /// known); `compressed`: one that hands pages over as they are stored (it reads a copy
    /// of the chunk's metadata without its codec).
    fn page_reader(
        &self,
        source: &FileSource,
        chunk: &parquet::file::metadata::ColumnChunkMetaData,
        rows: usize,
        locations: Option<Vec<parquet::file::page_index::offset_index::PageLocation>>,
        compressed: bool,
    ) -> Result<parquet::file::serialized_reader::SerializedPageReader<FileSource>> {
        let decoding = |e| PqsiftError::corrupt(self.name(), e);
        let as_stored;
        let chunk = match compressed {
            true => {
                as_stored = chunk
                    .clone()
                    .into_builder()
                    .set_compression(parquet::basic::Compression::UNCOMPRESSED)
                    .build()
                    .map_err(decoding)?;
                &as_stored
            }
            false => chunk,
        };
        parquet::file::serialized_reader::SerializedPageReader::new(Arc::new(source.clone()), chunk, rows, locations)
            .map_err(decoding)
    }

    /// The crate's decode of the roots of `columns` (ascending) from `source`, through
    /// `plan` (`decoder`: its decoder selection) and its post-filter, to the rows of
    /// `selection`. See [`FileReader::decode`].
    fn decode_with_crate(
        &self,
        source: &FileSource,
        stage: DecodeStage<'_>,
        columns: RootColumns<'_>,
        plan: &ReadPlan,
        decoder: &RowSelection,
        selection: &RowSelection,
    ) -> Result<RecordBatch> {
        let row_group = stage.row_group;
        let mask = ProjectionMask::leaves(self.metadata.parquet_schema(), self.leaves_of(columns));
        let views = plan.post_filter().is_some() || stage.options.keep_views || stage.decode == Decode::OutputAll;
        let decoder: Vec<CrateSelector> = decoder
            .iter_runs()
            .map(|r| if r.skip { CrateSelector::skip(r.row_count) } else { CrateSelector::select(r.row_count) })
            .collect();
        let recast = self.decode_metadata(row_group, views);
        let decoded = self
            .decode_runs(
                source,
                recast.as_ref().unwrap_or(&self.metadata),
                row_group,
                mask,
                &decoder,
                plan.decoded_rows(),
            )
            .map_err(|e| source.take_error().unwrap_or(e))?;
        // The crate stops early on pages holding fewer rows than the metadata says.
        if decoded.num_rows() != plan.decoded_rows() {
            return Err(PqsiftError::corrupt(
                self.name(),
                format!(
                    "row group {number}: its pages hold {} of the {} rows to decode",
                    decoded.num_rows(),
                    plan.decoded_rows(),
                    number = self.row_group_number(row_group)
                ),
            ));
        }
        let (rows, post_filter) = (decoded.num_rows(), plan.post_filter());
        let decoded = match &post_filter {
            Some(mask) => filter_record_batch(&decoded, &BooleanArray::new(mask.clone(), None))?,
            None => decoded,
        };
        self.check_int96_nanoseconds(source, row_group, columns, (&decoder, rows, post_filter), &decoded)?;
        self.check_map_keys(row_group, columns, &decoded)?;
        if decoded.num_rows() != selection.selected_count() {
            return Err(PqsiftError::corrupt(
                self.name(),
                format!(
                    "row group {number} decoded {} rows where {} were selected",
                    decoded.num_rows(),
                    selection.selected_count(),
                    number = self.row_group_number(row_group)
                ),
            ));
        }
        Ok(decoded)
    }
}

impl FileReader {
    /// Fails where a page of a leaf of `mask` with repetition levels, one the crate may skip
    /// rows inside while decoding the runs `decoder` (when they skip any), holds fewer
    /// repetition levels than values (see
    /// [`repetition_levels`](crate::reading::repetition_levels)): the pages holding a row
    /// `decoder` selects (the crate skips the pages between them whole, by the offset
    /// index), or every page of a chunk without an offset index. Each page is checked once.
    fn check_repetition_levels(
        &self,
        source: &FileSource,
        row_group: usize,
        mask: &ProjectionMask,
        decoder: &[CrateSelector],
    ) -> Result<()> {
        let schema = self.metadata.parquet_schema();
        let repeated: Vec<usize> = (0..schema.num_columns())
            .filter(|&leaf| mask.leaf_included(leaf) && schema.column(leaf).max_rep_level() > 0)
            .collect();
        if repeated.is_empty() || !decoder.iter().any(|run| run.skip) {
            return Ok(());
        }
        let runs = decoder
            .iter()
            .map(|r| if r.skip { RowSelector::skip(r.row_count) } else { RowSelector::select(r.row_count) });
        let decoder = RowSelection::from_runs(runs)?;
        let metadata = self.metadata.metadata();
        let chunks = metadata.row_group(row_group);
        let rows = usize::try_from(chunks.num_rows()).unwrap_or(0);
        for leaf in repeated {
            let max_rep_level = schema.column(leaf).max_rep_level();
            let wanted = match metadata::page_locations(metadata, row_group, leaf) {
                Some(pages) if !pages.is_empty() => Some(decoder.selected_pages(&pages)?),
                _ => None,
            };
            let done = {
                let checked = self.levels_checked.lock().unwrap_or_else(|p| p.into_inner());
                checked.get(&(row_group, leaf)).cloned().unwrap_or_default()
            };
            let unchecked = |page: usize| {
                !done.contains(&page) && wanted.as_ref().is_none_or(|wanted| wanted.get(page).copied().unwrap_or(false))
            };
            let locations = metadata.page_index_for_row_group(row_group).page_locations(leaf).cloned();
            let mut pages = self.page_reader(source, chunks.column(leaf), rows, locations, false)?;
            let checked = crate::reading::repetition_levels::check_pages(&mut pages, max_rep_level, unchecked)
                .map_err(|reason| {
                    let column = schema.column(leaf).path().string();
                    PqsiftError::corrupt(self.name(), self.at_column(row_group, &column, reason))
                })?;
            let mut all = self.levels_checked.lock().unwrap_or_else(|p| p.into_inner());
            all.entry((row_group, leaf)).or_default().extend(checked);
        }
        Ok(())
    }

    /// Fails where a map of `decoded` (the roots of `columns`) holds a null key or entry
    /// (see [`map_keys`](crate::reading::map_keys)): the file is corrupt there.
    fn check_map_keys(&self, row_group: usize, columns: RootColumns<'_>, decoded: &RecordBatch) -> Result<()> {
        for (at, &root) in columns.roots.iter().enumerate() {
            if let Some(reason) = crate::reading::map_keys::null_in_maps(decoded.column(at).as_ref()) {
                let column = self.metadata.schema().field(root).name();
                return Err(PqsiftError::corrupt(self.name(), self.at_column(row_group, column, reason))
                    .about_column(crate::filter::ColumnPath::new([column]).name()));
            }
        }
        Ok(())
    }

    /// Fails where a crate-decoded INT96 value of `decoded` (the roots of `columns`, the
    /// `rows` of the runs `decoder` kept by the post-filter `mask`) wrapped in nanoseconds:
    /// the INT96 leaves of the roots holding nanosecond timestamps are decoded again in
    /// seconds, the same rows kept, and compared (see
    /// [`int96_range`](crate::reading::int96_range)) — only those leaves, so that the check
    /// of a wide struct costs its timestamps, unless a map holds them (a map decodes only
    /// with its keys: the whole root then). A row the decode passed over but does not output
    /// is not checked.
    fn check_int96_nanoseconds(
        &self,
        source: &FileSource,
        row_group: usize,
        columns: RootColumns<'_>,
        (decoder, rows, mask): (&[CrateSelector], usize, Option<arrow::buffer::BooleanBuffer>),
        decoded: &RecordBatch,
    ) -> Result<()> {
        use crate::reading::int96_range::{first_wrapped, holds_map, holds_nanoseconds, wrap_reason};
        let parquet_schema = self.metadata.parquet_schema();
        let is_int96 = |leaf: &usize| parquet_schema.column(*leaf).physical_type() == PhysicalType::INT96;
        let mut at_risk: Vec<(usize, usize)> = Vec::new();
        let mut leaves: Vec<usize> = Vec::new();
        for (at, &root) in columns.roots.iter().enumerate() {
            let data_type = decoded.column(at).data_type();
            let root_leaves = self.leaves_of(columns.with_roots(&[root]));
            if !holds_nanoseconds(data_type) || !root_leaves.iter().any(is_int96) {
                continue;
            }
            at_risk.push((at, root));
            match holds_map(data_type) {
                true => leaves.extend(root_leaves),
                false => leaves.extend(root_leaves.into_iter().filter(is_int96)),
            }
        }
        if at_risk.is_empty() {
            return Ok(());
        }
        let seconds = self.int96_in_seconds.get_or_init(|| {
            let file_metadata = self.metadata.metadata().file_metadata();
            let schema = crate::format::opener::int96_in_unit(self.metadata.schema(), file_metadata, TimeUnit::Second)?;
            let options = parquet::arrow::arrow_reader::ArrowReaderOptions::new().with_schema(Arc::new(schema));
            ArrowReaderMetadata::try_new(self.metadata.metadata().clone(), options).ok()
        });
        let Some(seconds) = seconds else { return Ok(()) };
        let leaves = ProjectionMask::leaves(parquet_schema, leaves);
        let check = self.decode_runs(source, seconds, row_group, leaves, decoder, rows)?;
        let check = match mask {
            Some(mask) => filter_record_batch(&check, &BooleanArray::new(mask, None))?,
            None => check,
        };
        for (checked, &(at, root)) in at_risk.iter().enumerate() {
            if let Some(instant) = first_wrapped(decoded.column(at), check.column(checked)) {
                let column = self.metadata.schema().field(root).name();
                return Err(PqsiftError::unsupported(
                    self.name(),
                    self.at_column(row_group, column, wrap_reason(instant)),
                )
                .about_column(crate::filter::ColumnPath::new([column]).name()));
            }
        }
        Ok(())
    }

    /// The file's metadata with its top-level strings and binaries decoded, in
    /// `row_group`, as dictionaries where their chunk is all dictionary-encoded and as
    /// views otherwise when `views` (see
    /// [`decode_schema`](crate::reading::string_views::decode_schema)); `None` when nothing
    /// changes or the crate refuses the hint.
    fn decode_metadata(&self, row_group: usize, views: bool) -> Option<ArrowReaderMetadata> {
        use crate::reading::string_views::{decode_schema, string_columns};
        let schema = self.metadata.schema();
        let strings =
            string_columns(schema, self.metadata.parquet_schema(), self.metadata.metadata().row_group(row_group));
        let mut cached = self.decode_metadata.lock().unwrap_or_else(|p| p.into_inner());
        cached
            .entry((strings, views))
            .or_insert_with_key(|(strings, views)| {
                let hinted = decode_schema(schema, strings, *views)?;
                let options = parquet::arrow::arrow_reader::ArrowReaderOptions::new().with_schema(hinted);
                ArrowReaderMetadata::try_new(self.metadata.metadata().clone(), options).ok()
            })
            .clone()
    }

    /// `batch` (the roots `roots`, decoded through [`FileReader::decode_metadata`] or from
    /// the cache) with its view columns, and its dictionary columns unless
    /// `keep_dictionaries`, turned back into the file's types (see
    /// [`string_gather`](crate::reading::string_gather)).
    /// `batch`, the roots `roots` decoded, in the types the predicates were bound to: an
    /// INT96 timestamp, decoded without a time zone, labelled UTC (its values are instants
    /// already). The batch itself for a file without INT96 columns.
    fn in_filter_types(&self, batch: RecordBatch, roots: &[usize]) -> Result<RecordBatch> {
        if Arc::ptr_eq(&self.filter_schema, self.metadata.schema()) {
            return Ok(batch);
        }
        let mut fields = Vec::with_capacity(roots.len());
        let mut columns = Vec::with_capacity(roots.len());
        for (&root, (field, column)) in roots.iter().zip(batch.schema().fields().iter().zip(batch.columns())) {
            let labelled =
                crate::format::opener::instants_like(column.data_type(), self.filter_schema.field(root).data_type());
            let column = match &labelled == column.data_type() {
                true => Arc::clone(column),
                false => arrow::array::make_array(relabelled(column.to_data(), &labelled)?),
            };
            fields.push(Arc::new(field.as_ref().clone().with_data_type(column.data_type().clone())));
            columns.push(column);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)?)
    }

    fn to_file_types(&self, batch: RecordBatch, roots: &[usize], keep_dictionaries: bool) -> Result<RecordBatch> {
        let schema = self.metadata.schema();
        let mut fields = Vec::with_capacity(roots.len());
        let mut columns = Vec::with_capacity(roots.len());
        for (&root, column) in roots.iter().zip(batch.columns()) {
            let field = schema.field(root);
            let column = match column.data_type() {
                DataType::Dictionary(..) if keep_dictionaries => column.clone(),
                DataType::Utf8View | DataType::BinaryView | DataType::Dictionary(..)
                    if column.data_type() != field.data_type() =>
                {
                    crate::reading::string_gather::to_plain(column, field.data_type()).map_err(|e| match e {
                        // More than 2 GiB of strings in one decode unit.
                        ArrowError::OffsetOverflowError(_) => PqsiftError::unsupported(self.name(), e),
                        _ => PqsiftError::corrupt(self.name(), e),
                    })?
                }
                _ => column.clone(),
            };
            fields.push(Arc::new(field.clone().with_data_type(column.data_type().clone())));
            columns.push(column);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)?)
    }

    /// The crate's decoder over `row_group`'s leaves `mask` with `metadata` (the file's,
    /// or its [`FileReader::decode_metadata`]), through the runs `decoder` (`rows` selected), as one
    /// batch. Every decode by the crate comes here, so the repetition levels its skips rely
    /// on are checked here ([`FileReader::check_repetition_levels`]).
    fn decode_runs(
        &self,
        source: &FileSource,
        metadata: &ArrowReaderMetadata,
        row_group: usize,
        mask: ProjectionMask,
        decoder: &[CrateSelector],
        rows: usize,
    ) -> Result<RecordBatch> {
        self.check_repetition_levels(source, row_group, &mask, decoder)?;
        let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(source.clone(), metadata.clone())
            .with_row_groups(vec![row_group])
            .with_projection(mask.clone())
            .with_row_selection(CrateSelection::from(decoder.to_vec()))
            .with_row_selection_policy(RowSelectionPolicy::Selectors)
            // One batch for the whole selection: the row group is assembled whole anyway, and
            // decoding in batch_size pieces would cost a concatenation (a copy of every value).
            // Capped: the crate reserves the batch size up front, and a hostile footer can
            // claim billions of rows.
            .with_batch_size(rows.clamp(1, MAX_DECODE_BATCH_ROWS))
            .build()
            .map_err(|e| PqsiftError::corrupt(self.name(), e))?;
        let schema = reader.schema();
        match reader.collect::<std::result::Result<Vec<_>, _>>() {
            Ok(batches) => concat_batches(&schema, &batches).map_err(|e| match e {
                ArrowError::OffsetOverflowError(_) => PqsiftError::unsupported(self.name(), too_large(e)),
                other => PqsiftError::corrupt(self.name(), other),
            }),
            Err(e @ ArrowError::OffsetOverflowError(_)) => Err(PqsiftError::unsupported(self.name(), too_large(e))),
            Err(error) => Err(self.decode_failure(source, metadata, row_group, mask, decoder, error)),
        }
    }

    /// Why the crate failed to decode the rows `decoder` selects in one batch (see
    /// [`decode_failure`](crate::reading::decode_failure)): the fault of the smallest part
    /// that fails alone, or more string bytes than one batch holds.
    fn decode_failure(
        &self,
        source: &FileSource,
        metadata: &ArrowReaderMetadata,
        row_group: usize,
        mask: ProjectionMask,
        decoder: &[CrateSelector],
        error: ArrowError,
    ) -> PqsiftError {
        let Some((first, second)) = halves(decoder) else {
            return PqsiftError::corrupt(self.name(), error);
        };
        let mut bytes = 0;
        for part in [first, second] {
            let rows = part.iter().filter(|r| !r.skip).map(|r| r.row_count).sum();
            match self.decode_runs(source, metadata, row_group, mask.clone(), &part, rows) {
                Ok(batch) => bytes += offset_bytes(&batch),
                Err(fault) => return fault,
            }
        }
        match bytes > MAX_OFFSET_BYTES {
            true => PqsiftError::unsupported(
                self.name(),
                too_large(format!(
                    "{bytes} bytes of strings in row group {number}",
                    number = self.row_group_number(row_group)
                )),
            ),
            false => PqsiftError::corrupt(self.name(), error),
        }
    }

    /// How `leaves` of `row_group` are read for `selection`: the plan (the selection policy
    /// of their kind, over their page boundaries), the rows the decoder walks, and the file
    /// to read their pages from ([`FileReader::source_for`]).
    fn planned_source(
        &self,
        row_group: usize,
        leaves: &[usize],
        selection: &RowSelection,
        options: &ReadOptions,
    ) -> Result<(ReadPlan, RowSelection, FileSource)> {
        let parquet_schema = self.metadata.parquet_schema();
        let boundaries = page_boundaries(self.metadata.metadata(), row_group, leaves);
        let variable_width =
            leaves.iter().any(|&leaf| parquet_schema.column(leaf).physical_type() == PhysicalType::BYTE_ARRAY);
        let policy = options.selection_policy.for_columns(variable_width);
        let plan = ReadPlan::new(selection, policy, boundaries.as_deref())?;
        let decoder = plan.decoder_selection();
        let source = self.source_for(row_group, leaves, &decoder, options)?;
        Ok((plan, decoder, source))
    }

    /// The file to decode `leaves` of `row_group` for `selection` from, their page headers
    /// checked (see [`page_headers`](crate::format::page_headers)) before the crate
    /// allocates what they claim. A local file is read on demand and its chunks checked
    /// once. From a store, the pages holding a selected row and their dictionary pages (a
    /// chunk without offset index: all of it) are fetched first, in few concurrent
    /// requests, and the headers of those pages checked in memory.
    fn source_for(
        &self,
        row_group: usize,
        leaves: &[usize],
        selection: &RowSelection,
        options: &ReadOptions,
    ) -> Result<FileSource> {
        let chunks = self.metadata.metadata().row_group(row_group);
        if !self.is_remote() {
            let unchecked: Vec<usize> = {
                let checked = self.checked.lock().unwrap_or_else(|p| p.into_inner());
                leaves.iter().copied().filter(|&leaf| !checked.contains(&(row_group, leaf))).collect()
            };
            for leaf in unchecked {
                check_column_chunk(&self.probe.source()?, chunks.column(leaf), row_group, options.max_page_bytes)?;
                self.checked.lock().unwrap_or_else(|p| p.into_inner()).insert((row_group, leaf));
            }
            return self.file.source();
        }
        let pages = self.pages_read(row_group, leaves, selection)?;
        let ranges = ranges_of(&pages, chunks);
        let earlier = self.prefetched.lock().unwrap_or_else(|p| p.into_inner()).get(&row_group).cloned();
        let fetched = match earlier {
            Some(FileSource::Fetched(fetched)) if fetched.covers(&ranges) => FileSource::Fetched(fetched),
            _ => self.file.source()?.prefetch(&ranges, options.coalesce_gap)?,
        };
        for (leaf, read) in &pages {
            match read {
                Some(read) => check_pages(&fetched, chunks.column(*leaf), row_group, read, options.max_page_bytes)?,
                None => check_column_chunk(&fetched, chunks.column(*leaf), row_group, options.max_page_bytes)?,
            }
        }
        Ok(fetched)
    }
}

/// A leaf column and the byte ranges read of its chunk (`None`: the whole chunk).
type LeafReads = (usize, Option<Vec<Range<u64>>>);

impl FileReader {
    /// Per leaf of `leaves` in `row_group`, the byte ranges decoding `selection` reads: the
    /// pages holding a selected row and the dictionary page (`None`: the whole chunk, when
    /// the leaf has no offset index).
    fn pages_read(&self, row_group: usize, leaves: &[usize], selection: &RowSelection) -> Result<Vec<LeafReads>> {
        let chunks = self.metadata.metadata().row_group(row_group);
        let mut pages = Vec::with_capacity(leaves.len());
        for &leaf in leaves {
            let (start, _) = chunk_range(chunks.column(leaf));
            let read = match metadata::page_locations(self.metadata.metadata(), row_group, leaf) {
                Some(locations) if !locations.is_empty() => {
                    let dictionary = (start < locations[0].offset).then(|| start..locations[0].offset);
                    Some(selection.scan_ranges_with(&locations, dictionary, None)?)
                }
                _ => None,
            };
            pages.push((leaf, read));
        }
        Ok(pages)
    }

    /// From a store: fetches the pages of every predicate column for `selection` at once,
    /// for the stages of `row_group` to find (the guard drops them when the row group is
    /// done), with the pages of the projection's other leaves `projection_leaves` when
    /// [`round_trips`](crate::reading::round_trips) expects most of them to hold a row that
    /// passes. A later predicate then costs no round trip, nor does a projection fetched
    /// with them; a predicate's pages are fetched even when an earlier one leaves no row, a
    /// few pages against tens of milliseconds.
    fn prefetch_predicates(
        &self,
        row_group: usize,
        filter: &RowFilter,
        selection: &RowSelection,
        projection_leaves: &[usize],
        options: &ReadOptions,
        metrics: &mut ReadMetrics,
    ) -> Result<Option<PrefetchGuard<'_>>> {
        if !self.is_remote() || filter.predicates().is_empty() || !selection.selects_any() {
            return Ok(None);
        }
        let schema = self.metadata.parquet_schema();
        let mut roots: Vec<usize> = filter.predicates().iter().flat_map(|p| p.roots.iter().copied()).collect();
        roots.sort_unstable();
        roots.dedup();
        let mut leaves: Vec<usize> =
            (0..schema.num_columns()).filter(|&leaf| roots.contains(&schema.get_column_root_idx(leaf))).collect();
        let others: Vec<usize> = projection_leaves.iter().copied().filter(|leaf| !leaves.contains(leaf)).collect();
        let with_projection = self.fetch_projection_at_once(row_group, &others, selection, filter, options)?;
        if !with_projection && filter.predicates().len() < 2 {
            return Ok(None);
        }
        if with_projection {
            leaves.extend(others);
            metrics.projections_fetched_with_predicates += 1;
        }
        let pages = self.pages_read(row_group, &leaves, selection)?;
        let ranges = ranges_of(&pages, self.metadata.metadata().row_group(row_group));
        let fetched = self.file.source()?.prefetch(&ranges, options.coalesce_gap)?;
        self.prefetched.lock().unwrap_or_else(|p| p.into_inner()).insert(row_group, fetched);
        Ok(Some(PrefetchGuard { reader: self, row_group }))
    }

    /// Whether the pages of `leaves` (projected, read by no predicate) are fetched with the
    /// predicate columns of `row_group` (see [`round_trips`](crate::reading::round_trips)):
    /// not for a limit (it wants the first rows that pass, not all), nor when the rows
    /// expected to pass decode in several parts (each part fetches its own pages).
    fn fetch_projection_at_once(
        &self,
        row_group: usize,
        leaves: &[usize],
        selection: &RowSelection,
        filter: &RowFilter,
        options: &ReadOptions,
    ) -> Result<bool> {
        use crate::reading::round_trips::{UNOBSERVED_PASS_RATE, fetch_with_predicates, page_loads};
        if leaves.is_empty() || options.row_limit.is_some() {
            return Ok(false);
        }
        let metadata = self.metadata.metadata();
        let pass_rate = filter.pass_rate().observed().unwrap_or(UNOBSERVED_PASS_RATE);
        let chunks = metadata.row_group(row_group);
        let rows = chunks.num_rows().max(1) as f64;
        let decoded: f64 =
            leaves.iter().map(|&leaf| chunks.column(leaf).uncompressed_size().max(0) as f64).sum::<f64>()
                * (selection.selected_count() as f64 * pass_rate / rows);
        if decoded > (options.decode_bytes / 2) as f64 {
            return Ok(false);
        }
        let mut loads = Vec::new();
        for &leaf in leaves {
            loads.extend(page_loads(metadata, row_group, leaf, selection)?);
        }
        Ok(fetch_with_predicates(&loads, pass_rate, options.coalesce_gap))
    }
}

/// Drops a row group's prefetched pages when its read ends (errors included).
struct PrefetchGuard<'a> {
    reader: &'a FileReader,
    row_group: usize,
}

impl Drop for PrefetchGuard<'_> {
    fn drop(&mut self) {
        self.reader.prefetched.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.row_group);
    }
}

/// The byte ranges of `pages` (see `FileReader::pages_read`) in the row group `chunks`.
fn ranges_of(
    pages: &[(usize, Option<Vec<Range<u64>>>)],
    chunks: &parquet::file::metadata::RowGroupMetaData,
) -> Vec<Range<u64>> {
    pages
        .iter()
        .flat_map(|(leaf, read)| match read {
            Some(read) => read.clone(),
            None => {
                let (start, length) = chunk_range(chunks.column(*leaf));
                vec![start..start + length]
            }
        })
        .collect()
}

/// What a decode is for, which says the types strings may come back in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decode {
    /// For evaluation, in the file's types (after [`FileReader::to_file_types`]).
    FileTypes,
    /// For a predicate on one column: strings of all-dictionary-encoded chunks as Arrow
    /// dictionaries (see [`dictionary_predicate`](crate::reading::dictionary_predicate)).
    Dictionaries,
    /// For output, after a row filter.
    Output,
    /// For output, every decoded row of it: a read without row filter.
    OutputAll,
}

impl Decode {
    fn is_output(self) -> bool {
        matches!(self, Self::Output | Self::OutputAll)
    }
}

/// The most rows decoded in one batch (see `FileReader::decode`).
const MAX_DECODE_BATCH_ROWS: usize = 1 << 20;

/// The reason for a batch whose strings Arrow's 32-bit offsets cannot address (`what`).
fn too_large(what: impl std::fmt::Display) -> String {
    format!("a batch of a string or binary column holds more than 2 GiB, beyond Arrow's 32-bit offsets ({what})")
}

/// `data` as `to`, a type that differs only in time zone labels (the values unchanged),
/// its children relabelled likewise.
fn relabelled(data: arrow::array::ArrayData, to: &DataType) -> Result<arrow::array::ArrayData> {
    if data.data_type() == to {
        return Ok(data);
    }
    let child_types: Vec<&DataType> = match to {
        DataType::Struct(fields) => fields.iter().map(|f| f.data_type()).collect(),
        DataType::List(item)
        | DataType::LargeList(item)
        | DataType::FixedSizeList(item, _)
        | DataType::ListView(item)
        | DataType::LargeListView(item)
        | DataType::Map(item, _) => vec![item.data_type()],
        _ => Vec::new(),
    };
    let children = match child_types.len() == data.child_data().len() {
        true => {
            data.child_data().iter().zip(child_types).map(|(c, t)| relabelled(c.clone(), t)).collect::<Result<_>>()?
        }
        false => data.child_data().to_vec(),
    };
    Ok(data.into_builder().data_type(to.clone()).child_data(children).build()?)
}

/// The schema of the root columns `roots`, in that order (ascending when the crate
/// decodes them).
pub(crate) fn project_schema(schema: &SchemaRef, roots: &[usize]) -> SchemaRef {
    Arc::new(Schema::new(roots.iter().map(|&r| schema.field(r).clone()).collect::<Vec<_>>()))
}

/// The columns `wanted` (root indices) of a batch holding the roots `have`, in order.
fn pick(batch: &RecordBatch, have: &[usize], wanted: &[usize]) -> Result<RecordBatch> {
    let positions: Vec<usize> =
        wanted.iter().map(|w| have.iter().position(|h| h == w).expect("decoded with every needed column")).collect();
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    let schema = batch.schema();
    let projected = Arc::new(Schema::new(positions.iter().map(|&p| schema.field(p).clone()).collect::<Vec<_>>()));
    Ok(RecordBatch::try_new_with_options(
        projected,
        positions.iter().map(|&p| batch.column(p).clone()).collect(),
        &options,
    )?)
}

/// The first rows of the pages of `leaves`, merged: a stretch between two consecutive
/// boundaries lies inside one page of every leaf. `None` when a leaf has no offset index
/// (its pages are then read in sequence, none skipped).
fn page_boundaries(
    metadata: &parquet::file::metadata::ParquetMetaData,
    row_group: usize,
    leaves: &[usize],
) -> Option<Vec<usize>> {
    let mut boundaries = Vec::new();
    for &leaf in leaves {
        for page in metadata::page_locations(metadata, row_group, leaf)? {
            boundaries.push(usize::try_from(page.first_row_index).ok()?);
        }
    }
    boundaries.sort_unstable();
    boundaries.dedup();
    (boundaries.first() == Some(&0)).then_some(boundaries)
}

/// zstd pages read still compressed (see
/// [`StoredPages`](crate::reading::flat_decode::StoredPages)), with the sizes of those
/// whose frames do not declare them, from their headers in `source`:
/// the dictionary page's at `chunk_start`, before the first data page, and the data pages'
/// where the offset index `locations` puts them. A size above `limit` is refused (as the
/// crate's own reads are, see [`page_headers`](crate::format::page_headers)); an I/O
/// failure is kept in `failure` for the caller to report as it is.
fn zstd_pages<'a>(
    source: &'a FileSource,
    chunk_start: u64,
    locations: &'a [parquet::file::page_index::offset_index::PageLocation],
    limit: u64,
    failure: &'a std::cell::RefCell<Option<PqsiftError>>,
) -> crate::reading::flat_decode::StoredPages<'a> {
    use crate::reading::flat_decode::{DecodeError, PageAt, StoredPages};
    StoredPages::zstd(usize::try_from(limit).unwrap_or(usize::MAX), move |at| {
        let offset =
            |n: usize| locations.get(n).map(|l| (l.offset.max(0) as u64, l.compressed_page_size.max(0) as u64));
        let (start, end) = match at {
            PageAt::Dictionary => (chunk_start, offset(0).map_or(chunk_start, |(start, _)| start)),
            PageAt::Data(n) => {
                let (start, length) = offset(n)
                    .ok_or_else(|| DecodeError::Corrupt(format!("data page {n} is not in the offset index")))?;
                (start, start + length)
            }
        };
        match crate::format::page_headers::uncompressed_page_size(source, start, end, limit) {
            Ok(Some(size)) => Ok(size),
            Ok(None) => Err(DecodeError::Corrupt(format!(
                "no page header with a size of at most {limit} bytes at offset {start}"
            ))),
            Err(e) => {
                let reason = e.to_string();
                *failure.borrow_mut() = Some(e);
                Err(DecodeError::Corrupt(reason))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_add_up() {
        let mut a = ReadMetrics { rows_decoded: 3, cache_hits: 1, ..Default::default() };
        a.rows_decoded_by_column.insert("x".into(), 3);
        let mut b = a.clone();
        b.rows_out = 2;
        a.add(&b);
        assert_eq!((a.rows_decoded, a.cache_hits, a.rows_out, a.rows_decoded_by_column["x"]), (6, 2, 2, 6));
    }
}
