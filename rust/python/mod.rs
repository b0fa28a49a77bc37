//! The PyO3 layer: the native module `pqsift._core`.
//!
//! It translates between Python and the core and holds no logic of its own: arguments are
//! converted (with `TypeError` / `ValueError` naming the argument), core errors are mapped to
//! the exception classes of `pqsift.errors`, Arrow data crosses through the Arrow PyCapsule
//! interface.

mod allocator;
mod arrow_ffi;
mod errors;
mod filter;
mod metadata;
mod options;
mod scan;
mod selection;
mod stream;

use pyo3::prelude::*;

/// The native module `pqsift._core`.
#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_class::<selection::PyRowSelection>()?;
    module.add_class::<scan::PyScan>()?;
    module.add_class::<scan::PyArrowSchema>()?;
    module.add_function(wrap_pyfunction!(allocator::allocator_settings, module)?)?;
    module.add_function(wrap_pyfunction!(metadata::column_pages, module)?)?;
    module.add_function(wrap_pyfunction!(metadata::inspect_py, module)?)?;
    module.add_function(wrap_pyfunction!(metadata::metadata_cache_stats, module)?)?;
    module.add_function(wrap_pyfunction!(metadata::clear_metadata_cache, module)?)?;
    module.add_function(wrap_pyfunction!(metadata::metadata_cache_usage, module)?)?;
    module.add_function(wrap_pyfunction!(metadata::set_metadata_cache_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(filter::parse_filter_py, module)?)?;
    module.add_function(wrap_pyfunction!(stream::read, module)?)?;
    module.add_function(wrap_pyfunction!(scan::read_task, module)?)?;
    module.add_function(wrap_pyfunction!(options::read_option_defaults, module)?)?;
    module.add_function(wrap_pyfunction!(options::scan_option_defaults, module)?)?;
    module.add_function(wrap_pyfunction!(options::check_read_options, module)?)?;
    module.add_class::<stream::PyScanStream>()?;
    Ok(())
}
