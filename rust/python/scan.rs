//! `pqsift._core.Scan` and its plan: the Python face of [`Scan`](crate::planning::scan::Scan).
//! Translation only; `python/pqsift/scan.py` wraps it with argument checking.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arrow::datatypes::Schema;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::errors::{detached, py_err};
use super::selection::PyRowSelection;

use super::options::{AllowedLocationsArg, ReadOptionsArg, ScanOptionsArg};
use super::stream::{PyScanStream, stream_for};
use crate::filter::sort_key::{SortKey, TopN};
use crate::planning::access_plan::{FileAccessPlan, RowGroupAccess};
use crate::planning::manifest_piece::{ManifestPiece, is_manifest_piece};
use crate::planning::scan::{Scan, ScanOptions, ScanPlan};
use crate::planning::table_piece;
use crate::planning::task_plan::TaskPlan;
use crate::reading::planned_read::{count_rows, output_schema_of, read_plan, read_task as read_task_plan};
use crate::reading::reader::ReaderConfig;
use crate::reading::table_reads::ScanReads;
use crate::storage::{Location, Storage, StorageOptions};
use crate::table::allowed_locations::AllowedLocations;
use crate::table::delta::SnapshotSpec;
use crate::table::delta::open::planned_delta_table;
use crate::table::hive::HiveOptions;
use crate::table::iceberg::table::ManifestSelection;
use crate::table::partition_values::PartitionValues;
use crate::table::schema_adapter::DeclaredSchema;
use crate::table::source::{Table, TableFormat, TableOptions};

/// A scan; see `python/pqsift/_core.pyi`.
#[pyclass(name = "Scan", module = "pqsift._core", frozen)]
pub(crate) struct PyScan {
    inner: Arc<Scan>,
    /// The storage options and the store metrics of the scan's planning.
    storage: Storage,
    /// The last plan, for `explain` and `metrics`.
    last_plan: Mutex<Option<ScanPlan>>,
}

#[pymethods]
impl PyScan {
    #[new]
    #[pyo3(signature = (sources, columns=None, filter=None, options=None, *, order_by=None, top_n_limit=None,
                        footer_threads=None, partition_values=None, declared_schema=None, deletion_vector=None, table_pieces=None,
                        defer_manifests_above=None))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn new(
        py: Python<'_>,
        sources: Vec<PathBuf>,
        columns: Option<Vec<String>>,
        filter: Option<FilterArg>,
        options: Option<ScanOptionsArg>,
        order_by: Option<Vec<(String, bool, bool)>>,
        top_n_limit: Option<usize>,
        footer_threads: Option<usize>,
        partition_values: Option<(Vec<(String, String)>, Vec<Vec<Option<String>>>)>,
        declared_schema: Option<String>,
        deletion_vector: Option<(PathBuf, String)>,
        table_pieces: Option<Vec<Vec<u8>>>,
        defer_manifests_above: Option<usize>,
    ) -> PyResult<Self> {
        let given = options.unwrap_or_default();
        let top_n = match (order_by, top_n_limit) {
            (Some(keys), Some(limit)) => Some(TopN {
                keys: keys
                    .iter()
                    .map(|(column, descending, nulls_first)| SortKey::parse(column, *descending, *nulls_first))
                    .collect::<crate::Result<Vec<_>>>()
                    .map_err(py_err(py))?,
                limit,
            }),
            _ => None,
        };
        let storage = Storage::new(StorageOptions::from_pairs(given.storage_options.clone().unwrap_or_default()));
        let options = ScanOptions {
            statistics: given.statistics,
            bloom_filter: given.bloom_filter,
            page_index: given.page_index,
            bind: given.bind(),
            file_range: given.file_range,
            row_groups: given.row_groups.clone(),
            metadata_size_hint: given.metadata_size_hint,
            top_n,
            merge_schema: given.merge_schema,
            schema: given
                .schema
                .as_deref()
                .map(|text| DeclaredSchema::from_text("the given schema", text).map(|d| d.schema))
                .transpose()
                .map_err(py_err(py))?,
            field_ids: given.field_ids(),
            footer_bytes_read_together: given.footer_bytes_read_together,
            // The read's `threads` (the same default when not given).
            footer_threads: footer_threads.unwrap_or_else(|| ReaderConfig::default().threads).max(1),
        };
        let ScanOptionsArg {
            partitioning,
            partition_type_inference,
            base_path,
            version,
            snapshot_id,
            timestamp,
            allowed_locations,
            ..
        } = given;
        let inner = detached(py, || {
            let sources =
                sources.iter().map(|s| Location::from_user(s, &storage)).collect::<crate::Result<Vec<_>>>()?;
            let base_path = base_path.map(|b| Location::from_user(&b, &storage)).transpose()?;
            let allowed_locations = match allowed_locations {
                None => AllowedLocations::default(),
                Some(AllowedLocationsArg::Word(word)) if word == "any" => AllowedLocations::Any,
                Some(AllowedLocationsArg::Word(word)) => {
                    return Err(crate::PqsiftError::filter(format!(
                        "option allowed_locations: a list of path or URL prefixes, or \"any\"; not {:?}",
                        crate::error::quoted(&word)
                    )));
                }
                Some(AllowedLocationsArg::Prefixes(prefixes)) => AllowedLocations::Below(
                    prefixes.iter().map(|p| Location::from_user(p, &storage)).collect::<crate::Result<Vec<_>>>()?,
                ),
            };
            let deletion_vector = deletion_vector
                .map(|(root, descriptor)| {
                    Ok::<_, crate::PqsiftError>((Location::from_user(&root, &storage)?, vec![Some(descriptor)]))
                })
                .transpose()?;
            // A stripe of an Iceberg snapshot's manifests comes alone in the table pieces' place.
            let (table_pieces, manifest_piece) = match table_pieces {
                Some(pieces) if pieces.iter().any(|bytes| is_manifest_piece(bytes)) => match pieces.as_slice() {
                    [bytes] => (None, Some(ManifestPiece::from_bytes(bytes, &storage)?)),
                    _ => {
                        return Err(crate::PqsiftError::TaskPlan(
                            "a manifest piece is read alone, not with other pieces".into(),
                        ));
                    }
                },
                other => (other, None),
            };
            if let Some(piece) = &manifest_piece
                && (sources.len() != 1 || sources[0].to_string() != piece.metadata_file.to_string())
            {
                return Err(crate::PqsiftError::TaskPlan(format!(
                    "a manifest piece of {} read as {} source(s)",
                    piece.metadata_file,
                    sources.len()
                )));
            }
            let table = match (partition_values, declared_schema) {
                // Files of a table planned elsewhere, as the driver's metadata left them.
                _ if table_pieces.is_some() => {
                    let table = table_piece::from_bytes(table_pieces.as_deref().unwrap_or_default(), &storage)?;
                    let named = |files: &[Location]| files.iter().map(ToString::to_string).collect::<Vec<_>>();
                    if named(&sources) != named(&table.files) {
                        return Err(crate::PqsiftError::TaskPlan(format!(
                            "table pieces of {} file(s), from {}, read as {} source(s)",
                            table.files.len(),
                            table.files[0],
                            sources.len()
                        )));
                    }
                    table
                }
                // Files planned elsewhere (a Spark task), with their partition values and,
                // for a Delta table, its declared schema and their deletion vector.
                (partition_values @ Some(_), declared) | (partition_values, declared @ Some(_)) => {
                    let partitions = match partition_values {
                        Some((schema, rows)) => PartitionValues::from_text(&schema, &rows)?,
                        None => PartitionValues::with_rows(Arc::new(Schema::empty()), Vec::new(), sources.len())?,
                    };
                    let table = Table::with_partitions(sources, partitions)?;
                    match declared {
                        Some(text) => planned_delta_table(table, &text, deletion_vector)?,
                        None => table,
                    }
                }
                (None, None) => {
                    let snapshot = snapshot_spec(version, timestamp.as_deref(), &options.bind.session_time_zone)?;
                    let table_options = TableOptions {
                        partitioning,
                        infer_partition_types: partition_type_inference,
                        base_path,
                        snapshot,
                        snapshot_id: manifest_piece.as_ref().map_or(snapshot_id, |piece| piece.snapshot_id),
                        allowed_locations,
                        // The statistics stage off: no pruning on the table's metadata either.
                        filter: match &filter {
                            Some(FilterArg::Text(text)) if options.statistics => crate::filter::parse_filter(text).ok(),
                            _ => None,
                        },
                        iceberg_manifests: match (manifest_piece, defer_manifests_above) {
                            (Some(piece), _) => piece.selection,
                            (None, Some(most)) => ManifestSelection::DeferAbove(most),
                            (None, None) => ManifestSelection::All,
                        },
                    };
                    Table::resolve(
                        &sources,
                        &table_options,
                        &HiveOptions::from_bind(&options.bind, partition_type_inference),
                        &ScanReads,
                    )?
                }
            };
            match filter {
                None => Scan::of_table(table, columns, None, options),
                Some(FilterArg::Text(text)) => Scan::of_table(table, columns, Some(&text), options),
                Some(FilterArg::ForSchema(filter_for)) => Scan::of_table_filtered_by(
                    table,
                    columns,
                    &mut |schema| call_filter_for(&filter_for, schema),
                    options,
                ),
            }
        })
        .map_err(py_err(py))?;
        Ok(Self { inner: Arc::new(inner), storage, last_plan: Mutex::new(None) })
    }

    /// The files of the scan, as strings.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.inner.files().iter().map(|p| p.to_string()).collect()
    }

    /// `"files"`, `"hive"` or `"delta"`.
    #[getter]
    fn table_format(&self) -> &'static str {
        match self.inner.table().format {
            TableFormat::Files => "files",
            TableFormat::Hive => "hive",
            TableFormat::Delta => "delta",
            TableFormat::Iceberg => "iceberg",
        }
    }

    /// The table's name (its sources), for messages.
    #[getter]
    fn table_name(&self) -> String {
        self.inner.table().name.clone()
    }

    /// The Delta table's snapshot version, or None.
    #[getter]
    fn table_version(&self) -> Option<u64> {
        self.inner.table().delta.as_ref().map(|d| d.version)
    }

    /// The Iceberg snapshot's id, or None.
    #[getter]
    fn snapshot_id(&self) -> Option<i64> {
        self.inner.table().iceberg.as_ref().and_then(|i| i.snapshot_id)
    }

    /// A Delta table's root directory, or None.
    #[getter]
    fn table_root(&self) -> Option<String> {
        self.inner.table().delta.as_ref().map(|d| d.table_root.to_string())
    }

    /// Per file, its Delta deletion vector descriptor as JSON (None: none, or not Delta).
    #[getter]
    fn deletion_vectors(&self) -> Vec<Option<String>> {
        match &self.inner.table().delta {
            Some(delta) => delta
                .files
                .iter()
                .map(|f| f.deletion_vector.as_ref().and_then(|dv| serde_json::to_string(dv).ok()))
                .collect(),
            None => vec![None; self.inner.files().len()],
        }
    }

    /// The declared schema as text for `_core.read` (see `DeclaredSchema::to_text`), or None.
    #[getter]
    fn declared_schema(&self) -> Option<String> {
        self.inner.declared().map(|d| d.to_text())
    }

    /// The schema every file is read into, as `declared_schema` text: the declared one,
    /// else the first file's (what tasks planning their own files are given, so that each
    /// reads its files into the same schema). None without files.
    fn scan_schema(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let schema = detached(py, || self.inner.scan_schema()).map_err(py_err(py))?;
        Ok(schema.map(|s| s.to_text()))
    }

    /// The partition columns as `(name, Spark type name)` pairs (empty without).
    #[getter]
    fn partition_schema(&self) -> Vec<(String, String)> {
        self.inner.table().partitions.as_ref().map(PartitionValues::type_names).unwrap_or_default()
    }

    /// Per file, its partition values as canonical text (see `PartitionValues::row_text`).
    #[getter]
    fn partition_values(&self) -> Vec<Vec<Option<String>>> {
        match &self.inner.table().partitions {
            Some(partitions) => (0..partitions.len()).map(|row| partitions.row_text(row)).collect(),
            None => vec![Vec::new(); self.inner.files().len()],
        }
    }

    /// The filter in canonical Spark SQL, or None.
    #[getter]
    fn filter(&self) -> Option<String> {
        self.inner.filter().map(|f| f.to_string())
    }

    /// The projected columns, or None.
    #[getter]
    fn columns(&self) -> Option<Vec<String>> {
        self.inner.columns().map(<[String]>::to_vec)
    }

    /// The session time zone the filter's literals are read in.
    #[getter]
    fn session_time_zone(&self) -> String {
        self.inner.options().bind.session_time_zone.clone()
    }

    /// Bytes read from the end of each file in the first I/O for its metadata.
    #[getter]
    fn metadata_size_hint(&self) -> usize {
        self.inner.options().metadata_size_hint
    }

    /// Whether column names are case sensitive.
    #[getter]
    fn case_sensitive(&self) -> bool {
        self.inner.options().bind.case_sensitive
    }

    /// Reads the scan: plans it (the plan kept, as `plan` keeps it) and starts reading the
    /// plan's row groups and page selections with the read `options` (a dict, see
    /// `ReadOptionsArg`) over the footers planning read — nothing planned or opened twice.
    /// Returns the stream and the seconds planning took. `first_batches_soon`: the caller
    /// may stop after the first batches (see `StreamOptions::first_batches_soon`).
    #[pyo3(signature = (options=None, first_batches_soon=false))]
    fn read(
        &self,
        py: Python<'_>,
        options: Option<ReadOptionsArg>,
        first_batches_soon: bool,
    ) -> PyResult<(PyScanStream, f64)> {
        let options = options.unwrap_or_default();
        let config = ReaderConfig { first_batches_soon, ..options.config(py)? };
        let started = std::time::Instant::now();
        let plan = detached(py, || self.inner.plan_with_threads(config.threads)).map_err(py_err(py))?;
        let planning = started.elapsed().as_secs_f64();
        // The read's requests are counted apart from planning's, as `metrics` reports them.
        let storage = Storage::new(self.storage.options().clone());
        let (schema, stream) =
            detached(py, || read_plan(&self.inner, &plan, config, Some(&storage))).map_err(py_err(py))?;
        if let Ok(mut last) = self.last_plan.lock() {
            *last = Some(plan);
        }
        Ok((stream_for(schema, stream, storage, options.string_view()), planning))
    }

    /// The output schema with the read `options` (see `ReadOptionsArg`): an object with
    /// `__arrow_c_schema__`, from the first file's footer — nothing planned, no row read.
    #[pyo3(signature = (options=None))]
    fn output_schema(&self, py: Python<'_>, options: Option<ReadOptionsArg>) -> PyResult<PyArrowSchema> {
        let options = options.unwrap_or_default();
        let config = options.config(py)?;
        let schema = detached(py, || output_schema_of(&self.inner, config)).map_err(py_err(py))?;
        Ok(PyArrowSchema { schema: super::stream::output_schema_with_views(schema, options.string_view()) })
    }

    /// The rows the scan outputs with the read `options`, its limit aside: from the plan
    /// when there is no filter, else decoding the filter's columns only. Plans (the plan
    /// kept, as `plan` keeps it).
    #[pyo3(signature = (options=None))]
    fn count_rows(&self, py: Python<'_>, options: Option<ReadOptionsArg>) -> PyResult<u64> {
        let config = options.unwrap_or_default().config(py)?;
        let plan = detached(py, || self.inner.plan_with_threads(config.threads)).map_err(py_err(py))?;
        let rows = detached(py, || count_rows(&self.inner, &plan, config)).map_err(py_err(py))?;
        if let Ok(mut last) = self.last_plan.lock() {
            *last = Some(plan);
        }
        Ok(rows)
    }

    /// The pieces of the last plan (planning first when there is none) as task plans, one
    /// per piece: `pieces` are `(file position, row group indices)`, each row group one the
    /// plan reads. The bytes carry the file's footer and the row groups' selections (see
    /// `TaskPlan::to_bytes`), never a storage option.
    fn task_plans<'py>(
        &self,
        py: Python<'py>,
        pieces: Vec<(usize, Vec<usize>)>,
    ) -> PyResult<Vec<Bound<'py, pyo3::types::PyBytes>>> {
        self.ensure_plan(py)?;
        let encoded = detached(py, || {
            let last = self.last_plan.lock().unwrap_or_else(|p| p.into_inner());
            let plan = last.as_ref().ok_or_else(|| crate::PqsiftError::Internal("no plan".into()))?;
            pieces
                .iter()
                .map(|piece| {
                    self.inner.holding_as_before(piece.0, || {
                        TaskPlan::of_scan(&self.inner, plan, std::slice::from_ref(piece))?.to_bytes()
                    })
                })
                .collect::<crate::Result<Vec<_>>>()
        })
        .map_err(py_err(py))?;
        Ok(encoded.iter().map(|bytes| pyo3::types::PyBytes::new(py, bytes)).collect())
    }

    /// Plans the scan: a list of per-file dicts. Of the read `options`, `threads` reads
    /// local footers at once.
    #[pyo3(signature = (options=None))]
    fn plan<'py>(&self, py: Python<'py>, options: Option<ReadOptionsArg>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let threads = options.unwrap_or_default().config(py)?.threads;
        let plan = detached(py, || self.inner.plan_with_threads(threads)).map_err(py_err(py))?;
        let files = plan.files.iter().map(|file| file_dict(py, file)).collect::<PyResult<Vec<_>>>()?;
        if let Ok(mut last) = self.last_plan.lock() {
            *last = Some(plan);
        }
        Ok(files)
    }

    /// The files at `positions` as table pieces, one each, for tasks that plan them (see
    /// `table_piece::to_bytes`): no footer read but, for a table of plain files whose
    /// schema is the first file's, the first.
    fn table_pieces<'py>(
        &self,
        py: Python<'py>,
        positions: Vec<usize>,
    ) -> PyResult<Vec<Bound<'py, pyo3::types::PyBytes>>> {
        let encoded = detached(py, || table_piece::to_bytes(&self.inner, &positions)).map_err(py_err(py))?;
        Ok(encoded.iter().map(|bytes| pyo3::types::PyBytes::new(py, bytes)).collect())
    }

    /// The data manifests of an Iceberg snapshot left for tasks to read
    /// (`defer_manifests_above`): `([(recorded path, live files or None)], mean data file
    /// bytes or None)`.
    #[getter]
    #[allow(clippy::type_complexity)]
    fn deferred_manifests(&self) -> (Vec<(String, Option<u64>)>, Option<u64>) {
        match self.inner.table().iceberg.as_deref() {
            Some(table) => (
                table.deferred.manifests.iter().map(|m| (m.path.clone(), m.live_files)).collect(),
                table.deferred.mean_file_bytes,
            ),
            None => (Vec::new(), None),
        }
    }

    /// Per `(positions in deferred_manifests, stripe index, stripe count)`, a manifest
    /// piece (see `manifest_piece`) for a task to read as `table_pieces=[piece]`, its source the
    /// metadata file (`manifest_piece_source`).
    fn manifest_pieces<'py>(
        &self,
        py: Python<'py>,
        stripes: Vec<(Vec<usize>, u32, u32)>,
    ) -> PyResult<Vec<Bound<'py, pyo3::types::PyBytes>>> {
        let iceberg = self.inner.table().iceberg.as_deref();
        let encoded = iceberg
            .ok_or_else(|| crate::PqsiftError::TaskPlan("manifest pieces of a table that is not Iceberg".into()))
            .and_then(|table| ManifestPiece::stripes(table, &stripes))
            .map_err(py_err(py))?;
        Ok(encoded.iter().map(|bytes| pyo3::types::PyBytes::new(py, bytes)).collect())
    }

    /// The location a manifest piece's task scans: the Iceberg metadata file read.
    #[getter]
    fn manifest_piece_source(&self) -> Option<String> {
        self.inner.table().iceberg.as_deref().map(|t| t.metadata_file.to_string())
    }

    /// The files left by partition values and a Delta log's statistics, without reading
    /// footers: `([(position, size in bytes)], metrics)`.
    #[allow(clippy::type_complexity)]
    fn files_to_read<'py>(&self, py: Python<'py>) -> PyResult<(Vec<(usize, u64)>, Bound<'py, PyDict>)> {
        let (files, metrics) = detached(py, || self.inner.files_to_read()).map_err(py_err(py))?;
        let dict = PyDict::new(py);
        for (name, value) in metrics.as_pairs() {
            dict.set_item(name, value)?;
        }
        Ok((files, dict))
    }

    /// The last plan in words (planning first when there is none).
    fn explain(&self, py: Python<'_>) -> PyResult<String> {
        self.ensure_plan(py)?;
        Ok(self.last_plan.lock().ok().and_then(|p| p.as_ref().map(ScanPlan::explain)).unwrap_or_default())
    }

    /// The last plan's metrics (planning first when there is none).
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.ensure_plan(py)?;
        let dict = PyDict::new(py);
        if let Ok(last) = self.last_plan.lock()
            && let Some(plan) = last.as_ref()
        {
            for (name, value) in plan.metrics.as_pairs() {
                dict.set_item(name, value)?;
            }
            for (name, value) in self.inner.table().metadata_metrics() {
                dict.set_item(name, value)?;
            }
        }
        super::stream::store_metrics(&dict, &self.storage)?;
        Ok(dict)
    }
}

impl PyScan {
    fn ensure_plan(&self, py: Python<'_>) -> PyResult<()> {
        let missing = self.last_plan.lock().map(|p| p.is_none()).unwrap_or(true);
        if missing {
            self.plan(py, None)?;
        }
        Ok(())
    }
}

fn file_dict<'py>(py: Python<'py>, file: &FileAccessPlan) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("path", &file.path)?;
    dict.set_item("note", file.note.clone())?;
    dict.set_item("skipped", file.skipped.clone())?;
    // Each row group a tuple in the order of `pqsift.scan.RowGroupPlan`'s fields, which
    // the package builds positionally: a dict per row group (and its keyword construction)
    // cost more than the planning for files of thousands of row groups.
    let mut row_groups = Vec::with_capacity(file.row_groups.len());
    for rg in &file.row_groups {
        // One of three names: interned, not a new string per row group.
        let decision = pyo3::types::PyString::intern(py, rg.decision());
        let selection = match &rg.access {
            RowGroupAccess::Selection(selection) => Some(PyRowSelection::from(selection.clone())),
            _ => None,
        };
        let row_group = (
            rg.index,
            rg.rows,
            decision,
            rg.selected_rows(),
            selection,
            rg.compressed_bytes,
            rg.read_bytes,
            rg.stage.as_deref(),
            &rg.reason,
            &rg.notes,
            rg.certain_rows,
            rg.certain_output_bytes,
        );
        row_groups.push(row_group.into_pyobject(py)?);
    }
    dict.set_item("row_groups", row_groups)?;
    Ok(dict)
}

/// A scan's filter from Python: Spark SQL text, or a callable given the table schema (a
/// `_Schema`) that returns the text — how a pyarrow expression is turned into Spark SQL
/// with the columns' types at hand (`pqsift/arrow_filter.py`).
#[derive(FromPyObject)]
pub(crate) enum FilterArg {
    Text(String),
    ForSchema(Py<PyAny>),
}

/// Calls a Python `filter_for(schema)`; what it raises becomes a filter error carrying its
/// message (the scan is planned without the GIL, so the exception cannot pass through).
fn call_filter_for(filter_for: &Py<PyAny>, schema: &arrow::datatypes::SchemaRef) -> crate::Result<Option<String>> {
    Python::attach(|py| {
        let schema = PyArrowSchema { schema: Arc::clone(schema) };
        filter_for.call1(py, (schema,)).and_then(|text| text.extract::<Option<String>>(py)).map_err(|raised| {
            let kind = raised.get_type(py).name().map(|n| n.to_string()).unwrap_or_default();
            crate::PqsiftError::filter(format!("{kind}: {}", raised.value(py)))
        })
    })
}

/// An Arrow schema, exported through `__arrow_c_schema__`.
#[pyclass(name = "_Schema", module = "pqsift._core", frozen)]
pub(crate) struct PyArrowSchema {
    schema: arrow::datatypes::SchemaRef,
}

#[pymethods]
impl PyArrowSchema {
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyCapsule>> {
        super::arrow_ffi::export_schema(py, &self.schema)
    }
}

/// Reads a task plan made by `Scan.task_plans` (in another process: a Spark task), with
/// the read `options` (a dict, see `ReadOptionsArg`) and `storage_options` for its files'
/// stores. Returns the stream and the seconds loading the plan took.
#[pyfunction]
#[pyo3(signature = (plan, options=None, storage_options=None))]
pub(crate) fn read_task(
    py: Python<'_>,
    plan: &[u8],
    options: Option<ReadOptionsArg>,
    storage_options: Option<BTreeMap<String, String>>,
) -> PyResult<(PyScanStream, f64)> {
    let options = options.unwrap_or_default();
    let config = options.config(py)?;
    let storage = Storage::new(StorageOptions::from_pairs(storage_options.unwrap_or_default()));
    let started = std::time::Instant::now();
    let task = detached(py, || TaskPlan::from_bytes(plan, &storage)).map_err(py_err(py))?;
    let loading = started.elapsed().as_secs_f64();
    let (schema, stream) = detached(py, || read_task_plan(&task, config, None)).map_err(py_err(py))?;
    Ok((stream_for(schema, stream, storage, options.string_view()), loading))
}

/// The snapshot `version` or `timestamp` (Spark timestamp text, read in
/// `session_time_zone` when it has no zone) name, if any.
fn snapshot_spec(
    version: Option<u64>,
    timestamp: Option<&str>,
    session_time_zone: &str,
) -> crate::Result<Option<SnapshotSpec>> {
    match (version, timestamp) {
        (Some(_), Some(_)) => Err(crate::PqsiftError::filter("give a version or a timestamp, not both")),
        (Some(version), None) => Ok(Some(SnapshotSpec::Version(version))),
        (None, Some(text)) => {
            let literal = crate::filter::TimestampLiteral::parse(text)
                .ok_or_else(|| crate::PqsiftError::filter(format!("timestamp {text:?} is not a timestamp")))?;
            Ok(Some(SnapshotSpec::Timestamp(literal.instant_micros(session_time_zone)?.div_euclid(1000))))
        }
        (None, None) => Ok(None),
    }
}
