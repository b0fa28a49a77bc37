//! `pqsift.RowSelection`: the Python face of [`RowSelection`]. Translation only.

use arrow::array::BooleanArray;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString, PyTuple};

use super::arrow_ffi;
use super::errors::py_err;
use crate::selection::{PageLocation, RowSelection, RowSelector, SelectionPolicy};

/// Which rows of a row group to decode; see `python/pqsift/_core.pyi` for the documentation.
#[pyclass(name = "RowSelection", module = "pqsift", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyRowSelection {
    pub(crate) inner: RowSelection,
}

impl From<RowSelection> for PyRowSelection {
    fn from(inner: RowSelection) -> Self {
        Self { inner }
    }
}

/// A non-negative count from a Python int: `ValueError` when negative or too large,
/// `TypeError` when not an int (bools are refused too: `True` is not a count).
fn count(value: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    if value.is_instance_of::<PyBool>() || !value.hasattr("__index__")? {
        return Err(PyTypeError::new_err(format!("{what} must be an int, not {}", value.get_type().name()?)));
    }
    let index = value.call_method0("__index__")?;
    if index.lt(0)? {
        return Err(PyValueError::new_err(format!("{what} must not be negative, got {index}")));
    }
    index
        .extract::<u64>()
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| PyValueError::new_err(format!("{what} is too large: {index}")))
}

fn parse_run(item: &Bound<'_, PyAny>, position: usize) -> PyResult<RowSelector> {
    let pair = item.cast::<PyTuple>().ok().filter(|t| t.len() == 2).ok_or_else(|| {
        PyTypeError::new_err(format!("run {position}: expected a (\"skip\"|\"select\", count) tuple, got {item}"))
    })?;
    let label = pair.get_item(0)?;
    let n = count(&pair.get_item(1)?, &format!("run {position} count"))?;
    match label.cast::<PyString>().ok().map(|s| s.to_string()).as_deref() {
        Some("select") => Ok(RowSelector::select(n)),
        Some("skip") => Ok(RowSelector::skip(n)),
        _ => Err(PyValueError::new_err(format!(
            "run {position}: the label must be \"skip\" or \"select\", got {}",
            label.repr()?
        ))),
    }
}

fn mask_from_iterable(values: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
    let mut out = Vec::new();
    for (i, item) in values.try_iter()?.enumerate() {
        let item = item?;
        if item.is_none() {
            out.push(false); // a null predicate result is not selected
            continue;
        }
        let value = item.extract::<bool>().map_err(|_| {
            PyTypeError::new_err(format!(
                "mask item {i}: expected a bool or None, got {} {}",
                item.get_type().name().map(|n| n.to_string()).unwrap_or_default(),
                item.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        out.push(value);
    }
    Ok(out)
}

fn parse_page(item: &Bound<'_, PyAny>, position: usize) -> PyResult<PageLocation> {
    let fields = item.cast::<PyTuple>().ok().filter(|t| t.len() == 3).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "page {position}: expected an (offset, compressed_size, first_row_index) tuple, got {item}"
        ))
    })?;
    let field = |i: usize, name: &str| -> PyResult<u64> {
        Ok(count(&fields.get_item(i)?, &format!("page {position} {name}"))? as u64)
    };
    Ok(PageLocation {
        offset: field(0, "offset")?,
        compressed_size: field(1, "compressed_size")?,
        first_row_index: field(2, "first_row_index")?,
    })
}

fn label(run: &RowSelector) -> &'static str {
    if run.skip { "skip" } else { "select" }
}

#[pymethods]
impl PyRowSelection {
    #[staticmethod]
    fn from_runs(py: Python<'_>, runs: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut parsed = Vec::new();
        for (i, item) in runs.try_iter()?.enumerate() {
            parsed.push(parse_run(&item?, i)?);
        }
        RowSelection::from_runs(parsed).map(Self::from).map_err(py_err(py))
    }

    #[staticmethod]
    fn from_mask(mask: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Some(chunks) = arrow_ffi::import_arrays(mask, "mask")? {
            let arrays: Vec<BooleanArray> = arrow_ffi::boolean_arrays(chunks, "mask")?;
            return Ok(RowSelection::from_filters(&arrays).into());
        }
        Ok(RowSelection::from_bools(&mask_from_iterable(mask)?).into())
    }

    #[staticmethod]
    fn from_ranges(py: Python<'_>, ranges: &Bound<'_, PyAny>, row_count: &Bound<'_, PyAny>) -> PyResult<Self> {
        let rows = count(row_count, "row_count")?;
        let mut parsed = Vec::new();
        for (i, item) in ranges.try_iter()?.enumerate() {
            let item = item?;
            let pair =
                item.cast::<PyTuple>().ok().filter(|t| t.len() == 2).ok_or_else(|| {
                    PyTypeError::new_err(format!("range {i}: expected a (start, end) tuple, got {item}"))
                })?;
            let start = count(&pair.get_item(0)?, &format!("range {i} start"))?;
            let end = count(&pair.get_item(1)?, &format!("range {i} end"))?;
            parsed.push(start..end);
        }
        RowSelection::from_ranges(&parsed, rows).map(Self::from).map_err(py_err(py))
    }

    #[staticmethod]
    fn select_all(row_count: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(RowSelection::select_all(count(row_count, "row_count")?).into())
    }

    #[staticmethod]
    fn skip_all(row_count: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(RowSelection::skip_all(count(row_count, "row_count")?).into())
    }

    fn runs(&self) -> Vec<(&'static str, usize)> {
        self.inner.iter_runs().map(|r| (label(&r), r.row_count)).collect()
    }

    fn to_mask(&self) -> Vec<bool> {
        self.inner.to_bools()
    }

    fn selected_ranges(&self) -> Vec<(usize, usize)> {
        self.inner.selected_ranges().into_iter().map(|r| (r.start, r.end)).collect()
    }

    #[getter]
    fn row_count(&self) -> usize {
        self.inner.row_count()
    }

    #[getter]
    fn selected_count(&self) -> usize {
        self.inner.selected_count()
    }

    #[getter]
    fn skipped_count(&self) -> usize {
        self.inner.skipped_count()
    }

    #[getter]
    fn representation(&self) -> &'static str {
        self.inner.representation().name()
    }

    fn selects_any(&self) -> bool {
        self.inner.selects_any()
    }

    fn and_then(&self, py: Python<'_>, other: &Self) -> PyResult<Self> {
        self.inner.and_then(&other.inner).map(Self::from).map_err(py_err(py))
    }

    fn intersection(&self, py: Python<'_>, other: &Self) -> PyResult<Self> {
        self.inner.intersection(&other.inner).map(Self::from).map_err(py_err(py))
    }

    fn union(&self, py: Python<'_>, other: &Self) -> PyResult<Self> {
        self.inner.union(&other.inner).map(Self::from).map_err(py_err(py))
    }

    fn split_off(&self, n: &Bound<'_, PyAny>) -> PyResult<(Self, Self)> {
        let (head, tail) = self.inner.split_off(count(n, "n")?);
        Ok((head.into(), tail.into()))
    }

    fn offset(&self, n: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(self.inner.offset(count(n, "n")?).into())
    }

    fn limit(&self, n: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(self.inner.limit(count(n, "n")?).into())
    }

    fn trim(&self) -> Self {
        self.inner.trim().into()
    }

    fn expand_to_batch_boundaries(&self, py: Python<'_>, batch_size: &Bound<'_, PyAny>) -> PyResult<Self> {
        let batch_size = count(batch_size, "batch_size")?;
        self.inner.expand_to_batch_boundaries(batch_size).map(Self::from).map_err(py_err(py))
    }

    #[pyo3(signature = (pages, *, dictionary_page=None, coalesce_gap=None))]
    fn scan_ranges(
        &self,
        py: Python<'_>,
        pages: &Bound<'_, PyAny>,
        dictionary_page: Option<&Bound<'_, PyAny>>,
        coalesce_gap: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<(u64, u64)>> {
        let mut locations = Vec::new();
        for (i, item) in pages.try_iter()?.enumerate() {
            locations.push(parse_page(&item?, i)?);
        }
        let dictionary = match dictionary_page {
            Some(pair) => {
                let (offset, length): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair
                    .extract()
                    .map_err(|_| PyTypeError::new_err("dictionary_page must be an (offset, length) tuple"))?;
                let offset = count(&offset, "dictionary_page offset")? as u64;
                let length = count(&length, "dictionary_page length")? as u64;
                let end = offset
                    .checked_add(length)
                    .ok_or_else(|| PyValueError::new_err("dictionary_page passes the largest file offset"))?;
                Some(offset..end)
            }
            None => None,
        };
        let gap = coalesce_gap.map(|g| count(g, "coalesce_gap")).transpose()?.map(|g| g as u64);
        let ranges = self.inner.scan_ranges_with(&locations, dictionary, gap).map_err(py_err(py))?;
        Ok(ranges.into_iter().map(|r| (r.start, r.end - r.start)).collect())
    }

    #[pyo3(signature = (threshold=SelectionPolicy::DEFAULT_THRESHOLD))]
    fn policy(&self, threshold: usize) -> &'static str {
        SelectionPolicy::Auto { threshold }.choose(&self.inner).name()
    }

    #[pyo3(signature = (policy="auto", threshold=SelectionPolicy::DEFAULT_THRESHOLD))]
    fn with_policy(&self, py: Python<'_>, policy: &str, threshold: usize) -> PyResult<Self> {
        let policy = SelectionPolicy::parse(policy, threshold).map_err(py_err(py))?;
        Ok(self.inner.clone().with_policy(policy).into())
    }

    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema; // a boolean array has one natural schema
        let array = BooleanArray::new(self.inner.to_mask(), None);
        arrow_ffi::export_array(py, &array)
    }

    fn __len__(&self) -> usize {
        self.inner.row_count()
    }

    fn __repr__(&self) -> String {
        const SHOWN: usize = 8;
        let runs: Vec<String> =
            self.inner.iter_runs().take(SHOWN + 1).map(|r| format!("(\"{}\", {})", label(&r), r.row_count)).collect();
        let more = if runs.len() > SHOWN { ", ..." } else { "" };
        format!(
            "RowSelection(rows={}, selected={}, representation=\"{}\", runs=[{}{}])",
            self.inner.row_count(),
            self.inner.selected_count(),
            self.inner.representation().name(),
            runs[..runs.len().min(SHOWN)].join(", "),
            more
        )
    }
}
