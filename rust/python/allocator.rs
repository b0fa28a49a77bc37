//! The extension's allocator settings, for Python (`pqsift._allocator`).

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The settings this extension's jemalloc started with — `narenas`, `dirty_decay_ms`,
/// `muzzy_decay_ms`, `background_thread` — starting it if nothing has allocated yet; `None`
/// where the system's allocator serves.
#[pyfunction]
pub(crate) fn allocator_settings(py: Python<'_>) -> PyResult<Option<Bound<'_, PyDict>>> {
    let Some(settings) = crate::allocator::settings() else { return Ok(None) };
    let out = PyDict::new(py);
    out.set_item("narenas", settings.narenas)?;
    out.set_item("dirty_decay_ms", settings.dirty_decay_ms)?;
    out.set_item("muzzy_decay_ms", settings.muzzy_decay_ms)?;
    out.set_item("background_thread", settings.background_thread)?;
    Ok(Some(out))
}
