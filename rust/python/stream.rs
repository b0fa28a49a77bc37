//! Reading for Python: start a scan's stream over planned row groups, hand batches out one
//! at a time (errors as pqsift exceptions) or as a whole Arrow C stream.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{RecordBatch, StructArray};
use arrow::ffi_stream::FFI_ArrowArrayStream;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};

use super::arrow_ffi;
use super::errors::{detached, py_err};
use super::options::ReadOptionsArg;
use super::selection::PyRowSelection;
use crate::filter::{BindOptions, parse_filter};
use crate::format::opener::OpenedFile;
use crate::reading::reader::{ReaderConfig, declared_output_schema, open_stream, output_schema};
use crate::reading::scan_stream::{MetricsHandle, ScanStream, ScanTask};
use crate::storage::{Location, Storage, StorageOptions};
use crate::table::partition_values::PartitionValues;
use crate::table::schema_adapter::DeclaredSchema;

/// A stream of record batches; see `python/pqsift/_core.pyi`.
#[pyclass(name = "ScanStream", module = "pqsift._core")]
pub(crate) struct PyScanStream {
    stream: Option<ScanStream>,
    schema: arrow::datatypes::SchemaRef,
    /// Reads the metrics even after the stream is handed off as an Arrow C stream.
    metrics: MetricsHandle,
    /// The store metrics of the reads.
    storage: Storage,
    exported: bool,
}

/// The store metrics of `storage` into `dict`: `requests`, `retries`, `bytes_requested`,
/// `bytes_received`, `max_requests_in_flight`, `time_store_wait_s`.
pub(crate) fn store_metrics(dict: &Bound<'_, PyDict>, storage: &Storage) -> PyResult<()> {
    for (name, value) in storage.metrics().as_pairs() {
        dict.set_item(name, value)?;
    }
    dict.set_item("time_store_wait_s", storage.metrics().wait_time().as_secs_f64())
}

/// One record batch, exported through `__arrow_c_array__` (as a struct array).
#[pyclass(name = "_Batch", module = "pqsift._core", frozen)]
pub(crate) struct PyBatch {
    batch: RecordBatch,
}

#[pymethods]
impl PyBatch {
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let array = StructArray::from(self.batch.clone());
        arrow_ffi::export_array(py, &array)
    }
}

#[pymethods]
impl PyScanStream {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<PyBatch>> {
        let Some(stream) = self.stream.as_mut() else {
            if self.exported {
                return Err(PyRuntimeError::new_err("this stream was handed off through __arrow_c_stream__"));
            }
            return Ok(None);
        };
        // Reading happens on worker threads; waiting for them needs no GIL.
        let next = detached(py, || stream.next_batch_checked().transpose()).transpose();
        match next {
            Some(Ok(batch)) => Ok(Some(PyBatch { batch })),
            Some(Err(error)) => Err(py_err(py)(error)),
            None => Ok(None),
        }
    }

    /// The output schema, as an Arrow C schema capsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        arrow_ffi::export_schema(py, &self.schema)
    }

    /// Hands the whole stream to an Arrow consumer (pyarrow, Polars, DuckDB).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let stream =
            self.stream.take().ok_or_else(|| PyRuntimeError::new_err("the stream was already consumed or exported"))?;
        self.exported = true;
        let ffi = FFI_ArrowArrayStream::new(Box::new(CatchPanics(stream)));
        PyCapsule::new_with_value(py, ffi, c"arrow_array_stream")
    }

    /// How far the read is: (rows scanned, rows to scan), before the filter (see
    /// `ScanStream::progress`); `None` once the stream was handed off.
    fn progress(&self) -> Option<(u64, u64)> {
        self.stream.as_ref().map(ScanStream::progress)
    }

    /// What reading has done so far (see `Scan.metrics`).
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        let metrics = self.metrics.metrics();
        out.set_item("rows_out", metrics.rows_out)?;
        out.set_item("rows_decoded", metrics.rows_decoded)?;
        out.set_item("rows_decoded_by_column", metrics.rows_decoded_by_column.clone())?;
        out.set_item("bytes_read", self.metrics.bytes_read())?;
        out.set_item("cache_hits", metrics.cache_hits)?;
        out.set_item("row_group_windows", metrics.windows)?;
        out.set_item("projection_parts", metrics.projection_parts)?;
        out.set_item("row_groups_skipped_by_threshold", metrics.row_groups_skipped_by_threshold)?;
        out.set_item("row_groups_without_top_rows", metrics.row_groups_without_top_rows)?;
        out.set_item("pages_skipped_by_threshold", metrics.pages_skipped_by_threshold)?;
        if let Some(skips) = &metrics.threshold_skips {
            out.set_item("threshold_key_condition", &skips.key_condition)?;
            out.set_item("row_groups_skipped_by_threshold_list", skips.row_groups.clone())?;
            out.set_item("row_groups_without_top_rows_list", skips.without_top_rows.clone())?;
        }
        out.set_item("projections_fetched_with_predicates", metrics.projections_fetched_with_predicates)?;
        out.set_item("cache_misses", metrics.cache_misses)?;
        out.set_item("time_predicates_s", metrics.predicate_time.as_secs_f64())?;
        out.set_item("time_projection_s", metrics.projection_time.as_secs_f64())?;
        store_metrics(&out, &self.storage)?;
        Ok(out)
    }
}

/// `schema` as the stream outputs it: `string_view` turns strings into views.
pub(crate) fn output_schema_with_views(
    schema: arrow::datatypes::SchemaRef,
    string_view: bool,
) -> arrow::datatypes::SchemaRef {
    match string_view {
        true => crate::reading::string_views::view_schema(&schema).unwrap_or(schema),
        false => schema,
    }
}

/// The stream of a scan started by the core, as Python holds it.
pub(crate) fn stream_for(
    schema: arrow::datatypes::SchemaRef,
    stream: ScanStream,
    storage: Storage,
    string_view: bool,
) -> PyScanStream {
    let schema = output_schema_with_views(schema, string_view);
    let metrics = stream.metrics_handle();
    PyScanStream { stream: Some(stream), schema, metrics, storage, exported: false }
}

/// Starts reading `tasks` — `(file index, row group, RowSelection or None)` in output
/// order — of `files` (files planned elsewhere: a Spark task's), with the read `options`.
#[pyfunction]
#[pyo3(signature = (
    files, tasks, *, columns=None, filter=None, session_time_zone="UTC", case_sensitive=false,
    metadata_size_hint=crate::format::metadata::DEFAULT_METADATA_SIZE_HINT, partition_schema=None, partition_values=None,
    declared_schema=None, table_name=None, storage_options=None, options=None,
))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn read(
    py: Python<'_>,
    files: Vec<PathBuf>,
    tasks: Vec<(usize, usize, Option<PyRef<'_, PyRowSelection>>)>,
    columns: Option<Vec<String>>,
    filter: Option<&str>,
    session_time_zone: &str,
    case_sensitive: bool,
    metadata_size_hint: usize,
    partition_schema: Option<Vec<(String, String)>>,
    partition_values: Option<Vec<Vec<Option<String>>>>,
    declared_schema: Option<&str>,
    table_name: Option<&str>,
    storage_options: Option<BTreeMap<String, String>>,
    options: Option<ReadOptionsArg>,
) -> PyResult<PyScanStream> {
    let options = options.unwrap_or_default();
    let filter = filter.map(parse_filter).transpose().map_err(py_err(py))?;
    let tasks: Vec<ScanTask> = tasks
        .into_iter()
        .map(|(file, row_group, selection)| {
            if file >= files.len() {
                return Err(PyValueError::new_err(format!("task refers to file {file} of {}", files.len())));
            }
            Ok(ScanTask::new(file, row_group, selection.map(|s| s.inner.clone())))
        })
        .collect::<PyResult<_>>()?;
    let partitions = match (partition_schema, partition_values) {
        (Some(schema), Some(rows)) if !schema.is_empty() => {
            Some(PartitionValues::from_text(&schema, &rows).map_err(py_err(py))?)
        }
        _ => None,
    };
    let declared = declared_schema
        .map(|text| DeclaredSchema::from_text(table_name.unwrap_or("the table"), text).map(Arc::new))
        .transpose()
        .map_err(py_err(py))?;
    let config = ReaderConfig {
        columns,
        filter,
        bind: BindOptions { session_time_zone: session_time_zone.to_string(), case_sensitive },
        partitions,
        declared,
        ..options.config(py)?
    };
    let storage = Storage::new(StorageOptions::from_pairs(storage_options.unwrap_or_default()));
    let opened = detached(py, || -> crate::Result<(arrow::datatypes::SchemaRef, ScanStream)> {
        let locations = files.iter().map(|f| Location::from_user(f, &storage)).collect::<crate::Result<Vec<_>>>()?;
        let open_files: Vec<OpenedFile> = locations
            .into_iter()
            .map(|location| OpenedFile::open_with_hint(&location, metadata_size_hint))
            .collect::<crate::Result<_>>()?;
        for task in &tasks {
            let groups = open_files[task.file].metadata.num_row_groups();
            if task.row_group >= groups {
                return Err(crate::PqsiftError::selection(format!(
                    "{}: row group {} of {groups}",
                    open_files[task.file].location, task.row_group
                )));
            }
        }
        let schema = match (declared_output_schema(&config), open_files.first()) {
            (Some(declared), _) => declared?,
            (None, Some(first)) => output_schema(first, &config)?,
            (None, None) => Arc::new(arrow::datatypes::Schema::empty()),
        };
        Ok((schema, open_stream(&open_files, tasks, &config)?))
    });
    let (schema, stream) = opened.map_err(py_err(py))?;
    Ok(stream_for(schema, stream, storage, options.string_view()))
}

/// A reader whose panics become errors: a consumer pulls its batches through the C stream
/// interface, where a panic unwinding out of `get_next` would abort the process.
struct CatchPanics<R>(R);

impl<R: Iterator<Item = Result<RecordBatch, arrow::error::ArrowError>>> Iterator for CatchPanics<R> {
    type Item = Result<RecordBatch, arrow::error::ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.0.next())).unwrap_or_else(|panic| {
            Some(Err(arrow::error::ArrowError::ExternalError(Box::new(crate::PqsiftError::from_panic(panic.as_ref())))))
        })
    }
}

impl<R: arrow::record_batch::RecordBatchReader> arrow::record_batch::RecordBatchReader for CatchPanics<R> {
    fn schema(&self) -> arrow::datatypes::SchemaRef {
        self.0.schema()
    }
}
