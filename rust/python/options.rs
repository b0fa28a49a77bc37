//! The options of `pqsift.scan`, defined once: each option's name, type and default is a
//! field of [`ScanOptionsArg`] (planning: tables, pruning, storage) or [`ReadOptionsArg`]
//! (reading), its checks are in their `config` methods. Python takes the names and defaults
//! from `_core.scan_option_defaults()` / `_core.read_option_defaults()`, and the typed
//! keyword arguments of `pqsift.scan` are tested against them.
//!
//! Both are extracted from a dict: a key left out takes its default, a value of the wrong
//! type is a `TypeError` naming the option (a bool for a number too, though Python's bool
//! is an int), a negative number where none can be a `ValueError`, and a key that is no
//! option a `TypeError` naming the option it probably meant.

use std::any::TypeId;
use std::collections::BTreeMap;
use std::path::PathBuf;

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};

use super::errors::py_err;
use crate::filter::BindOptions;
use crate::filter::sort_key::SortKey;
use crate::format::metadata::DEFAULT_METADATA_SIZE_HINT;
use crate::planning::scan::ScanOptions;
use crate::reading::reader::{DEFAULT_CACHE_BYTES, ReaderConfig};
use crate::reading::row_group_reader::ReadOptions;
use crate::selection::SelectionPolicy;
use crate::table::column_matching::FieldIds;

/// Declares, once, each option's name and field (a struct field of the same name), for
/// extraction from a dict and for the dict of defaults. `$others`: the names that are
/// options elsewhere in the same call (`scan()` takes both kinds), for suggestions only.
macro_rules! options_arg {
    ($type:ident, others: $others:expr, [$($name:ident),* $(,)?]) => {
        impl $type {
            /// The options' names.
            pub(crate) const NAMES: &[&str] = &[$(stringify!($name)),*];

            /// Every option with its default, as a dict.
            pub(crate) fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
                let defaults = Self::default();
                let out = PyDict::new(py);
                $(out.set_item(stringify!($name), defaults.$name)?;)*
                Ok(out)
            }
        }

        impl<'a, 'py> FromPyObject<'a, 'py> for $type {
            type Error = PyErr;

            fn extract(object: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
                let dict = object.cast::<PyDict>()?;
                let mut options = Self::default();
                for (key, value) in dict.iter() {
                    let name: String = key.extract()?;
                    match name.as_str() {
                        $(stringify!($name) => options.$name = extract_option(&name, &value, &options.$name)?,)*
                        _ => {
                            let known: Vec<&str> = Self::NAMES.iter().chain($others).copied().collect();
                            return Err(PyTypeError::new_err(unknown_option(&name, &known)));
                        }
                    }
                }
                Ok(options)
            }
        }
    };
}

/// `value` as the option `name`, of the type of `_current` (the option's field).
fn extract_option<'py, T>(name: &str, value: &Bound<'py, PyAny>, _current: &T) -> PyResult<T>
where
    T: for<'a> FromPyObject<'a, 'py, Error = PyErr> + 'static,
{
    if value.is_instance_of::<PyBool>() && TypeId::of::<T>() != TypeId::of::<bool>() {
        return Err(PyTypeError::new_err(format!("option {name}: a bool where a value of another type is wanted")));
    }
    value.extract::<T>().map_err(|error| {
        let py = value.py();
        match error.is_instance_of::<PyOverflowError>(py) {
            true => PyValueError::new_err(format!("option {name} must not be negative (or too large), got {value}")),
            false => PyTypeError::new_err(format!("option {name}: {}", error.value(py))),
        }
    })
}

/// The message for an option named `name` that none of `known` is: the nearest known name
/// when one is close (a typo, another case, `-` for `_`).
pub(crate) fn unknown_option(name: &str, known: &[&str]) -> String {
    let wanted = name.to_lowercase().replace('-', "_");
    let nearest = known
        .iter()
        .map(|option| (crate::filter::edit_distance(&wanted, option), *option))
        .min()
        .filter(|(distance, _)| *distance <= 2.max(wanted.len() / 4));
    match nearest {
        Some((_, option)) => format!("unknown option '{name}'; did you mean '{option}'?"),
        None => format!("unknown option '{name}'"),
    }
}

/// `allowed_locations`: prefixes, or the word `"any"`.
#[derive(Debug, Clone, FromPyObject, IntoPyObject)]
pub(crate) enum AllowedLocationsArg {
    Prefixes(Vec<PathBuf>),
    Word(String),
}

/// The planning options of a scan (see `pqsift.scan`): pruning stages, name matching,
/// the table's options, the schema and the object store's options.
#[derive(Debug, Clone)]
pub(crate) struct ScanOptionsArg {
    pub statistics: bool,
    pub bloom_filter: bool,
    pub page_index: bool,
    pub session_time_zone: String,
    pub case_sensitive: bool,
    pub file_range: Option<(u64, u64)>,
    pub row_groups: Option<Vec<usize>>,
    pub metadata_size_hint: usize,
    pub footer_bytes_read_together: usize,
    pub partitioning: bool,
    pub partition_type_inference: bool,
    pub base_path: Option<PathBuf>,
    pub version: Option<u64>,
    pub snapshot_id: Option<i64>,
    pub timestamp: Option<String>,
    pub allowed_locations: Option<AllowedLocationsArg>,
    pub merge_schema: bool,
    /// The text of `DeclaredSchema::to_text` (Python turns a `pyarrow.Schema` into it).
    pub schema: Option<String>,
    pub match_field_ids: bool,
    pub ignore_missing_field_ids: bool,
    pub storage_options: Option<BTreeMap<String, String>>,
}

impl Default for ScanOptionsArg {
    fn default() -> Self {
        let scan = ScanOptions::default();
        Self {
            statistics: scan.statistics,
            bloom_filter: scan.bloom_filter,
            page_index: scan.page_index,
            session_time_zone: scan.bind.session_time_zone,
            case_sensitive: scan.bind.case_sensitive,
            file_range: None,
            row_groups: None,
            metadata_size_hint: DEFAULT_METADATA_SIZE_HINT,
            footer_bytes_read_together: scan.footer_bytes_read_together,
            partitioning: true,
            partition_type_inference: true,
            base_path: None,
            version: None,
            snapshot_id: None,
            timestamp: None,
            allowed_locations: None,
            merge_schema: scan.merge_schema,
            schema: None,
            match_field_ids: false,
            ignore_missing_field_ids: false,
            storage_options: None,
        }
    }
}

options_arg!(
    ScanOptionsArg,
    others: ReadOptionsArg::NAMES,
    [
        statistics,
        bloom_filter,
        page_index,
        session_time_zone,
        case_sensitive,
        file_range,
        row_groups,
        metadata_size_hint,
        footer_bytes_read_together,
        partitioning,
        partition_type_inference,
        base_path,
        version,
        snapshot_id,
        timestamp,
        allowed_locations,
        merge_schema,
        schema,
        match_field_ids,
        ignore_missing_field_ids,
        storage_options,
    ]
);

impl ScanOptionsArg {
    /// How the filter binds.
    pub(crate) fn bind(&self) -> BindOptions {
        BindOptions { session_time_zone: self.session_time_zone.clone(), case_sensitive: self.case_sensitive }
    }

    /// Field ids matched or not.
    pub(crate) fn field_ids(&self) -> FieldIds {
        FieldIds::from_flags(self.match_field_ids, self.ignore_missing_field_ids)
    }
}

/// The read options of a scan (see `pqsift.scan`): late materialization, threads, memory
/// bounds, the output's types, ORDER BY and LIMIT.
#[derive(Debug, Clone)]
pub(crate) struct ReadOptionsArg {
    pushdown_filters: bool,
    reorder_filters: bool,
    selection_policy: String,
    selection_threshold: usize,
    batch_size: usize,
    threads: Option<usize>,
    limit: Option<usize>,
    cache_bytes: usize,
    spark_output: bool,
    coalesce_gap: u64,
    max_page_bytes: u64,
    decode_bytes: u64,
    string_view: bool,
    order_by: Option<Vec<(String, bool, bool)>>,
    coerce_int96_timestamp_unit: Option<String>,
    max_bytes_read: Option<u64>,
}

impl Default for ReadOptionsArg {
    fn default() -> Self {
        let read = ReadOptions::default();
        Self {
            pushdown_filters: read.pushdown_filters,
            reorder_filters: true,
            selection_policy: "auto".to_string(),
            selection_threshold: SelectionPolicy::DEFAULT_THRESHOLD,
            batch_size: read.batch_size,
            threads: None,
            limit: None,
            cache_bytes: DEFAULT_CACHE_BYTES,
            spark_output: false,
            coalesce_gap: read.coalesce_gap,
            max_page_bytes: read.max_page_bytes,
            decode_bytes: read.decode_bytes,
            string_view: read.string_view,
            order_by: None,
            coerce_int96_timestamp_unit: None,
            max_bytes_read: None,
        }
    }
}

options_arg!(
    ReadOptionsArg,
    others: &[],
    [
        pushdown_filters,
        reorder_filters,
        selection_policy,
        selection_threshold,
        batch_size,
        threads,
        limit,
        cache_bytes,
        spark_output,
        coalesce_gap,
        max_page_bytes,
        decode_bytes,
        string_view,
        order_by,
        coerce_int96_timestamp_unit,
        max_bytes_read,
    ]
);

impl ReadOptionsArg {
    /// The reader configuration of these options, checked; the columns, filter, name
    /// matching, partitions and declared schema are the caller's to set.
    pub(crate) fn config(&self, py: Python<'_>) -> PyResult<ReaderConfig> {
        let int96_unit = match self.coerce_int96_timestamp_unit.as_deref() {
            None => None,
            Some("s") => Some(arrow::datatypes::TimeUnit::Second),
            Some("ms") => Some(arrow::datatypes::TimeUnit::Millisecond),
            Some("us") => Some(arrow::datatypes::TimeUnit::Microsecond),
            Some("ns") => Some(arrow::datatypes::TimeUnit::Nanosecond),
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "option coerce_int96_timestamp_unit must be 's', 'ms', 'us' or 'ns', not {other:?}"
                )));
            }
        };
        for (name, value) in [
            ("batch_size", self.batch_size as u64),
            ("threads", self.threads.unwrap_or(1) as u64),
            ("selection_threshold", self.selection_threshold as u64),
            ("max_page_bytes", self.max_page_bytes),
            ("decode_bytes", self.decode_bytes),
        ] {
            if value == 0 {
                return Err(PyValueError::new_err(format!("option {name} must be at least 1, got 0")));
            }
        }
        let policy = SelectionPolicy::parse(&self.selection_policy, self.selection_threshold)
            .map_err(|e| PyValueError::new_err(format!("option selection_policy: {}", e.fields().reason)))?;
        let order_by = self
            .order_by
            .iter()
            .flatten()
            .map(|(column, descending, nulls_first)| SortKey::parse(column, *descending, *nulls_first))
            .collect::<crate::Result<Vec<_>>>()
            .map_err(py_err(py))?;
        let defaults = ReaderConfig::default();
        Ok(ReaderConfig {
            // column_threads: the stream sets it from the threads it has left over.
            read: ReadOptions {
                pushdown_filters: self.pushdown_filters,
                selection_policy: policy,
                batch_size: self.batch_size,
                coalesce_gap: self.coalesce_gap,
                max_page_bytes: self.max_page_bytes,
                decode_bytes: self.decode_bytes,
                string_view: self.string_view,
                ..ReadOptions::default()
            },
            reorder_filters: self.reorder_filters,
            threads: self.threads.unwrap_or(defaults.threads),
            limit: self.limit,
            cache_bytes: self.cache_bytes,
            spark_output: self.spark_output,
            order_by,
            int96_unit,
            max_bytes_read: self.max_bytes_read,
            ..defaults
        })
    }

    /// Whether strings come out as Arrow views.
    pub(crate) fn string_view(&self) -> bool {
        self.string_view
    }
}

/// The planning options' defaults (see [`ScanOptionsArg`]): what `pqsift.scan` documents.
#[pyfunction]
pub(crate) fn scan_option_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    ScanOptionsArg::defaults(py)
}

/// The read options' defaults (see [`ReadOptionsArg`]): what `pqsift.scan` documents.
#[pyfunction]
pub(crate) fn read_option_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    ReadOptionsArg::defaults(py)
}

/// Checks read options as a read would (`TypeError` / `ValueError` naming the option), so
/// that `pqsift.scan` fails before anything is read.
#[pyfunction]
pub(crate) fn check_read_options(py: Python<'_>, options: ReadOptionsArg) -> PyResult<()> {
    options.config(py).map(|_| ())
}
