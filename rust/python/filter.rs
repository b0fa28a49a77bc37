//! Filter text for Python: parsing (and checking against a file's schema) without reading
//! data. The scan API will take the same text.

use std::path::PathBuf;

use crate::format::opener::readable_arrow_schema;
use pyo3::prelude::*;

use super::errors::{detached, py_err};
use crate::error::PqsiftError;
use crate::filter::{BindOptions, bind, parse_filter};
use crate::format::metadata;
use crate::storage::Location;

/// Parses Spark SQL filter text and returns it in canonical form; with `path`, also binds
/// it to that Parquet file's schema (unknown columns, incomparable types).
#[pyfunction]
#[pyo3(name = "parse_filter", signature = (text, path=None, *, session_time_zone="UTC", case_sensitive=false))]
pub(crate) fn parse_filter_py(
    py: Python<'_>,
    text: &str,
    path: Option<PathBuf>,
    session_time_zone: &str,
    case_sensitive: bool,
) -> PyResult<String> {
    let expr = parse_filter(text).map_err(py_err(py))?;
    if let Some(path) = path {
        let meta = detached(py, || metadata::load(&Location::Local(path.clone()))).map_err(py_err(py))?;
        let file = meta.file_metadata();
        let schema = readable_arrow_schema(file).map_err(|e| PqsiftError::corrupt(&path, e)).map_err(py_err(py))?;
        let options = BindOptions { session_time_zone: session_time_zone.to_string(), case_sensitive };
        bind(&expr, &schema, &options).map_err(py_err(py))?;
    }
    Ok(expr.to_string())
}
