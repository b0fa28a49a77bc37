//! Arrow data across the FFI boundary through the Arrow PyCapsule interface
//! (`__arrow_c_array__` / `__arrow_c_stream__`), understood by pyarrow, Polars and DuckDB
//! without copies.

use arrow::array::{Array, ArrayRef, BooleanArray, make_array};
use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema, from_ffi, to_ffi};
use arrow::ffi_stream::{ArrayStreamReader, FFI_ArrowArrayStream};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

const ARRAY_NAME: &std::ffi::CStr = c"arrow_array";
const SCHEMA_NAME: &std::ffi::CStr = c"arrow_schema";
const STREAM_NAME: &std::ffi::CStr = c"arrow_array_stream";

/// Imports every array chunk of an object that implements `__arrow_c_array__` (one chunk)
/// or `__arrow_c_stream__` (a pyarrow `ChunkedArray`, say). `Ok(None)` when it implements
/// neither.
pub(crate) fn import_arrays(object: &Bound<'_, PyAny>, argument: &str) -> PyResult<Option<Vec<ArrayRef>>> {
    if object.hasattr("__arrow_c_array__")? {
        let pair = object.call_method0("__arrow_c_array__")?;
        let pair = pair.cast::<PyTuple>()?;
        let schema_capsule = pair.get_item(0)?.cast_into::<PyCapsule>()?;
        let array_capsule = pair.get_item(1)?.cast_into::<PyCapsule>()?;
        let schema_ptr = schema_capsule.pointer_checked(Some(SCHEMA_NAME))?.cast::<FFI_ArrowSchema>();
        let array_ptr = array_capsule.pointer_checked(Some(ARRAY_NAME))?.cast::<FFI_ArrowArray>();
        // SAFETY: the capsules follow the Arrow PyCapsule protocol (names checked above);
        // `from_raw` moves the array out and marks the capsule's copy released, so the
        // capsule destructor will not free it twice. The schema is only borrowed.
        let data = unsafe {
            let array = FFI_ArrowArray::from_raw(array_ptr.as_ptr());
            from_ffi(array, schema_ptr.as_ref())
        }
        .map_err(|e| PyValueError::new_err(format!("{argument}: cannot import Arrow array: {e}")))?;
        return Ok(Some(vec![make_array(data)]));
    }
    if object.hasattr("__arrow_c_stream__")? {
        let capsule = object.call_method0("__arrow_c_stream__")?.cast_into::<PyCapsule>()?;
        let stream_ptr = capsule.pointer_checked(Some(STREAM_NAME))?.cast::<FFI_ArrowArrayStream>();
        // SAFETY: as above; `from_raw` moves the stream out of the capsule.
        let stream = unsafe { FFI_ArrowArrayStream::from_raw(stream_ptr.as_ptr()) };
        // A stream of arrays (a pyarrow ChunkedArray, say): its arrays may be of any type.
        let reader = ArrayStreamReader::try_new(stream)
            .map_err(|e| PyValueError::new_err(format!("{argument}: cannot import Arrow stream: {e}")))?;
        let chunks =
            reader.collect::<Result<Vec<_>, _>>().map_err(|e| PyValueError::new_err(format!("{argument}: {e}")))?;
        return Ok(Some(chunks));
    }
    Ok(None)
}

/// Downcasts imported chunks to boolean arrays, or fails with a `TypeError` naming the type.
pub(crate) fn boolean_arrays(chunks: Vec<ArrayRef>, argument: &str) -> PyResult<Vec<BooleanArray>> {
    chunks
        .into_iter()
        .map(|chunk| {
            chunk.as_any().downcast_ref::<BooleanArray>().cloned().ok_or_else(|| {
                PyTypeError::new_err(format!("{argument}: expected a boolean array, got {}", chunk.data_type()))
            })
        })
        .collect()
}

/// Exports an array as the `(schema, array)` capsule pair of `__arrow_c_array__`.
pub(crate) fn export_array<'py>(py: Python<'py>, array: &dyn Array) -> PyResult<Bound<'py, PyTuple>> {
    let (ffi_array, ffi_schema) =
        to_ffi(&array.to_data()).map_err(|e| PyValueError::new_err(format!("cannot export Arrow array: {e}")))?;
    let schema = PyCapsule::new_with_value(py, ffi_schema, SCHEMA_NAME)?;
    let array = PyCapsule::new_with_value(py, ffi_array, ARRAY_NAME)?;
    PyTuple::new(py, [schema.into_any(), array.into_any()])
}

/// `schema` as an Arrow C schema capsule (`__arrow_c_schema__`).
pub(crate) fn export_schema<'py>(
    py: Python<'py>,
    schema: &arrow::datatypes::Schema,
) -> PyResult<Bound<'py, PyCapsule>> {
    let schema = FFI_ArrowSchema::try_from(schema)
        .map_err(|e| PyValueError::new_err(format!("cannot export the schema: {e}")))?;
    PyCapsule::new_with_value(py, schema, c"arrow_schema")
}
