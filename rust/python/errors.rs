//! Maps [`PqsiftError`] to the Python exception classes defined in `pqsift/errors.py`.
//!
//! The classes live in Python so that they can inherit from both `PqsiftError` and the
//! matching built-in (`ValueError`, ...); they are looked up once per interpreter.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use crate::error::{PqsiftError, bounded_message};

static SELECTION_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static IO_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static PATH_NOT_FOUND_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CORRUPT_FILE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UNSUPPORTED_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static TABLE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static SCHEMA_MISMATCH_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static FILTER_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static STORAGE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static NOT_FOUND_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static TASK_PLAN_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static READ_BUDGET_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static BASE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Converts a core error into the Python exception for it.
pub(crate) fn to_py_err(py: Python<'_>, error: PqsiftError) -> PyErr {
    if matches!(error, PqsiftError::Interrupted) {
        // The KeyboardInterrupt (or whatever a signal handler raised) the check caught.
        return PENDING_SIGNAL
            .with(|pending| pending.borrow_mut().take())
            .unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err(()));
    }
    let (cell, name) = match &error {
        PqsiftError::InvalidSelection(_) => (&SELECTION_ERROR, "SelectionError"),
        PqsiftError::Io { not_found: true, .. } => (&PATH_NOT_FOUND_ERROR, "PathNotFoundError"),
        PqsiftError::Io { .. } => (&IO_ERROR, "PqsiftIOError"),
        PqsiftError::Corrupt { .. } | PqsiftError::Statistics(_) => (&CORRUPT_FILE_ERROR, "CorruptFileError"),
        PqsiftError::Unsupported { .. } => (&UNSUPPORTED_ERROR, "UnsupportedError"),
        PqsiftError::Filter { .. } => (&FILTER_ERROR, "FilterError"),
        PqsiftError::Table { .. } => (&TABLE_ERROR, "TableError"),
        PqsiftError::SchemaMismatch { .. } => (&SCHEMA_MISMATCH_ERROR, "SchemaMismatchError"),
        PqsiftError::Storage { not_found: true, .. } => (&NOT_FOUND_ERROR, "ObjectNotFoundError"),
        PqsiftError::Storage { .. } => (&STORAGE_ERROR, "StorageError"),
        PqsiftError::TaskPlan(_) => (&TASK_PLAN_ERROR, "TaskPlanError"),
        PqsiftError::ReadBudget(_) => (&READ_BUDGET_ERROR, "ReadBudgetError"),
        PqsiftError::Compute(_) | PqsiftError::Internal(_) | PqsiftError::Interrupted => (&BASE_ERROR, "PqsiftError"),
    };
    let message = bounded_message(error.to_string());
    let raised = cell.import(py, "pqsift.errors", name).and_then(|class| {
        let fields = error.fields();
        let attributes = PyDict::new(py);
        attributes.set_item("path", fields.path)?;
        attributes.set_item("url", fields.url)?;
        attributes.set_item("table", fields.table)?;
        attributes.set_item("column", fields.column)?;
        attributes.set_item("reason", fields.reason)?;
        class.call((message.as_str(),), Some(&attributes))
    });
    match raised {
        Ok(exception) => PyErr::from_value(exception),
        // The Python package is broken or not importable: still raise something clear.
        Err(_) => pyo3::exceptions::PyValueError::new_err(message),
    }
}

/// `f` run without the GIL (`py.detach`), a panic in it caught as
/// [`PqsiftError::Internal`]: every call from Python into the core goes through here, so
/// that a bug surfaces as a `pqsift.PqsiftError` rather than a `PanicException`, which
/// `except Exception` does not catch.
///
/// While `f` runs, Python's signal handlers are run between its units of work (see
/// [`crate::interrupt`]): Ctrl-C stops a long plan or read with Python's
/// `KeyboardInterrupt`, as a pure-Python loop would stop.
pub(crate) fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> crate::Result<T> + Send) -> crate::Result<T> {
    py.detach(|| {
        let check = || {
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(raised) => {
                    PENDING_SIGNAL.with(|pending| *pending.borrow_mut() = Some(raised));
                    true
                }
            })
        };
        let run = || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
                .unwrap_or_else(|panic| Err(PqsiftError::from_panic(panic.as_ref())))
        };
        crate::interrupt::with_check(check, run)
    })
}

thread_local! {
    /// The exception a signal handler raised during [`detached`], raised by [`to_py_err`].
    static PENDING_SIGNAL: std::cell::RefCell<Option<PyErr>> = const { std::cell::RefCell::new(None) };
}

/// `Result::map_err` helper: `result.map_err(py_err(py))`.
pub(crate) fn py_err(py: Python<'_>) -> impl FnOnce(PqsiftError) -> PyErr + '_ {
    move |error| to_py_err(py, error)
}
