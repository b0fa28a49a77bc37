//! Metadata look-ups for Python: page locations (demo, tests, benchmarks) and the file
//! summary behind `pqsift inspect`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::errors::{detached, py_err};
use crate::format::inspect::{self, ColumnChunkSummary, FileSummary, StatisticsSummary};
use crate::format::metadata;
use crate::storage::{Location, Storage, StorageOptions};

/// Per row group: `(rows, pages, dictionary_page)` of the leaf column `column`, where
/// `pages` is the offset index as `(offset, compressed_size, first_row_index)` tuples (an
/// empty list when the file has no offset index) and `dictionary_page` is `(offset, length)`
/// or `None`.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub(crate) fn column_pages(
    py: Python<'_>,
    path: PathBuf,
    column: &str,
) -> PyResult<Vec<(i64, Vec<(u64, u64, u64)>, Option<(u64, u64)>)>> {
    let meta = detached(py, || metadata::load(&Location::Local(path.clone()))).map_err(py_err(py))?;
    let schema = meta.file_metadata().schema_descr();
    let index = (0..schema.num_columns())
        .find(|&i| schema.column(i).path().string() == column)
        .ok_or_else(|| PyKeyError::new_err(format!("{}: no leaf column {column:?}", path.display())))?;
    Ok((0..meta.num_row_groups())
        .map(|rg| {
            let pages = metadata::page_locations(&meta, rg, index)
                .unwrap_or_default()
                .into_iter()
                .map(|p| (p.offset, p.compressed_size, p.first_row_index))
                .collect();
            let dictionary = metadata::dictionary_page_range(&meta, rg, index).map(|r| (r.start, r.end - r.start));
            (meta.row_group(rg).num_rows(), pages, dictionary)
        })
        .collect())
}

/// The metadata summary of the Parquet file at `path` ([`inspect::inspect`]) as nested
/// dicts with the field names of the Rust structures.
#[pyfunction(name = "inspect")]
#[pyo3(signature = (path, *, storage_options=None))]
pub(crate) fn inspect_py<'py>(
    py: Python<'py>,
    path: PathBuf,
    storage_options: Option<BTreeMap<String, String>>,
) -> PyResult<Bound<'py, PyDict>> {
    let storage = Storage::new(StorageOptions::from_pairs(storage_options.unwrap_or_default()));
    let summary = detached(py, || inspect::inspect(&Location::from_user(&path, &storage)?)).map_err(py_err(py))?;
    file_dict(py, &summary)
}

fn file_dict<'py>(py: Python<'py>, s: &FileSummary) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("path", &s.path)?;
    dict.set_item("file_size", s.file_size)?;
    dict.set_item("num_rows", s.num_rows)?;
    dict.set_item("version", s.version)?;
    dict.set_item("created_by", s.created_by.clone())?;
    dict.set_item("key_value_metadata", s.key_value_metadata.clone())?;
    dict.set_item("has_page_index", s.has_page_index)?;
    let fields = s
        .arrow_schema
        .iter()
        .map(|f| {
            let d = PyDict::new(py);
            d.set_item("name", &f.name)?;
            d.set_item("type", &f.data_type)?;
            d.set_item("nullable", f.nullable)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    dict.set_item("arrow_schema", fields)?;
    let columns = s
        .columns
        .iter()
        .map(|c| {
            let d = PyDict::new(py);
            d.set_item("path", &c.path)?;
            d.set_item("physical_type", &c.physical_type)?;
            d.set_item("logical_type", c.logical_type.clone())?;
            d.set_item("converted_type", c.converted_type.clone())?;
            d.set_item("repetition", &c.repetition)?;
            d.set_item("max_def_level", c.max_def_level)?;
            d.set_item("max_rep_level", c.max_rep_level)?;
            d.set_item("arrow_type", c.arrow_type.clone())?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    dict.set_item("columns", columns)?;
    let row_groups = s
        .row_groups
        .iter()
        .map(|rg| {
            let d = PyDict::new(py);
            d.set_item("index", rg.index)?;
            d.set_item("num_rows", rg.num_rows)?;
            d.set_item("compressed_bytes", rg.compressed_bytes)?;
            d.set_item("uncompressed_bytes", rg.uncompressed_bytes)?;
            let chunks = rg.columns.iter().map(|c| chunk_dict(py, c)).collect::<PyResult<Vec<_>>>()?;
            d.set_item("columns", chunks)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    dict.set_item("row_groups", row_groups)?;
    Ok(dict)
}

fn chunk_dict<'py>(py: Python<'py>, c: &ColumnChunkSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("column", &c.column)?;
    d.set_item("compression", &c.compression)?;
    d.set_item("encodings", c.encodings.clone())?;
    d.set_item("num_values", c.num_values)?;
    d.set_item("compressed_bytes", c.compressed_bytes)?;
    d.set_item("uncompressed_bytes", c.uncompressed_bytes)?;
    d.set_item("dictionary_page", c.dictionary_page)?;
    match &c.statistics {
        Some(stats) => d.set_item("statistics", statistics_dict(py, stats)?)?,
        None => d.set_item("statistics", py.None())?,
    }
    d.set_item("column_index", c.column_index)?;
    d.set_item("offset_index", c.offset_index)?;
    d.set_item("pages", c.pages)?;
    d.set_item("bloom_filter", c.bloom_filter)?;
    d.set_item("bloom_filter_bytes", c.bloom_filter_bytes)?;
    Ok(d)
}

fn statistics_dict<'py>(py: Python<'py>, s: &StatisticsSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("min", s.min.clone())?;
    d.set_item("max", s.max.clone())?;
    d.set_item("min_exact", s.min_exact)?;
    d.set_item("max_exact", s.max_exact)?;
    d.set_item("null_count", s.null_count)?;
    d.set_item("distinct_count", s.distinct_count)?;
    d.set_item("deprecated_min_max", s.deprecated_min_max)?;
    Ok(d)
}

/// `(hits, misses)` of this process's metadata cache: a miss is a footer read and parsed.
#[pyfunction]
pub(crate) fn metadata_cache_stats() -> (u64, u64) {
    crate::format::metadata_cache::MetadataCache::global().stats()
}

/// `(bytes held, bound)` of this process's metadata cache.
#[pyfunction]
pub(crate) fn metadata_cache_usage() -> (usize, usize) {
    crate::format::metadata_cache::MetadataCache::global().usage()
}

/// Bounds this process's metadata cache to `capacity_bytes`, evicting down to it; answers
/// the bound before.
#[pyfunction]
pub(crate) fn set_metadata_cache_bytes(capacity_bytes: usize) -> usize {
    crate::format::metadata_cache::MetadataCache::global().set_capacity(capacity_bytes)
}

/// Empties this process's metadata cache: the next scan of each file reads its footer again
/// (and of each Iceberg table its manifests).
#[pyfunction]
pub(crate) fn clear_metadata_cache() {
    crate::format::metadata_cache::MetadataCache::global().clear();
    crate::table::iceberg::manifest_cache::ManifestCache::global().clear();
}
