//! Metadata look-ups for Python (used by the demo and tests; the scan API comes later).

use std::path::PathBuf;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;

use super::errors::py_err;
use crate::metadata;

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
    let meta = py.detach(|| metadata::load(&path)).map_err(py_err(py))?;
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
