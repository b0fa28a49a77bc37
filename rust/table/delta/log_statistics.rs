//! File skipping on a Delta log's statistics (segment pruning, as Databend's, before any
//! footer): each `add` carries `numRecords`, and per column `minValues`, `maxValues` and
//! `nullCount` (keyed by physical name, nested as the schema nests). They become
//! [`ZoneMaps`] with files as the containers, and the filter runs through the same
//! three-valued evaluation as row-group statistics.
//!
//! The log's bounds are looser than a footer's, so they are taken as **inexact** and made
//! safe before use:
//!
//! * strings — the writer keeps a prefix (`delta.dataSkippingStringPrefixLength`, 32
//!   characters): a prefix is still a lower bound, but a maximum that long may have been
//!   cut below the true maximum, so it is dropped;
//! * timestamps — written to the millisecond: a maximum is widened by 999 µs;
//! * floats — NaN (Spark's greatest value) never appears in JSON bounds: every maximum is
//!   NaN, as for a footer without a NaN count;
//! * decimals — JSON numbers: used only when they hold at most 15 significant digits (what
//!   an `f64` keeps exactly);
//! * deletion vectors — the statistics describe every row written (`tightBounds: false`):
//!   still bounds of the rows left.
//!
//! Anything missing or unparsable is unknown (null), which keeps the file.
//!
//! ```
//! use arrow::array::AsArray;
//! use arrow::datatypes::{DataType, Int64Type};
//! use pqsift::table::delta::log_statistics::column_zone_maps;
//! use pqsift::table::delta::snapshot::FileStats;
//! let stats = vec![
//!     FileStats::from_json(r#"{"numRecords":3,"minValues":{"x":1},"maxValues":{"x":9},"nullCount":{"x":0}}"#),
//!     None,
//! ];
//! let zones = column_zone_maps(&stats, &["x".to_string()], &DataType::Int64, 32);
//! assert_eq!(zones.maxes.as_primitive::<Int64Type>().value(0), 9);
//! assert!(zones.maxes.is_null(1));
//! assert_eq!(zones.row_counts.value(1), u64::MAX); // unknown
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, Float64Array, UInt64Array, new_null_array};
use arrow::compute::cast;
use arrow::datatypes::{DataType, TimeUnit};
use serde_json::Value;

use super::snapshot::FileStats;
use super::table::{DeltaTable, typed_column};
use crate::error::Result;
use crate::filter::{BindOptions, BoundColumn, Expr, bind};
use crate::pruning::pruning_predicate::evaluate_on_zone_maps;
use crate::pruning::zone_map::ZoneMaps;
use crate::table::partition_values::PartitionValues;
use crate::table::schema_adapter::DeclaredSchema;

/// Per file, whether `filter` (bound to the declared schema) can be true judging by its
/// partition values and the log's statistics.
pub fn prune_by_log_statistics(
    filter: &Expr,
    declared: &DeclaredSchema,
    from_partition: &[Option<usize>],
    partitions: Option<&PartitionValues>,
    delta: &DeltaTable,
    options: &BindOptions,
) -> Result<Vec<bool>> {
    let bound = bind(filter, &declared.schema, options)?;
    let stats: Vec<Option<FileStats>> = delta.files.iter().map(|f| f.stats.parse()).collect();
    let source = |column: &BoundColumn| -> Result<Option<ZoneMaps>> {
        if column.data_type.is_null() {
            return Ok(None);
        }
        if let ([index], Some(partitions)) = (column.indices.as_slice(), partitions)
            && let Some(k) = from_partition.get(*index).copied().flatten()
        {
            return Ok(Some(partitions.zone_maps(k)));
        }
        let path = physical_path(declared, &column.indices);
        Ok(Some(column_zone_maps(&stats, &path, &column.data_type, delta.string_prefix_length)))
    };
    Ok(evaluate_on_zone_maps(&bound, delta.files.len(), &source)?.can_true)
}

/// The physical names along a path of field indices of the declared schema.
fn physical_path(declared: &DeclaredSchema, indices: &[usize]) -> Vec<String> {
    let mut names = Vec::with_capacity(indices.len());
    let mut fields = declared.schema.fields().clone();
    for &index in indices {
        let field = Arc::clone(&fields[index]);
        names.push(declared.physical_name(&field).to_string());
        match field.data_type() {
            DataType::Struct(children) => fields = children.clone(),
            _ => break,
        }
    }
    names
}

/// Zone maps of the column at `path` (physical names) of type `data_type`, one container
/// per file of `stats` (see the module documentation for how bounds are made safe).
pub fn column_zone_maps(
    stats: &[Option<FileStats>],
    path: &[String],
    data_type: &DataType,
    string_prefix_length: usize,
) -> ZoneMaps {
    fn at<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
        path.iter().try_fold(value, |v, name| v.get(name))
    }
    let mins: Vec<Option<&Value>> = stats.iter().map(|s| s.as_ref().and_then(|s| at(&s.min_values, path))).collect();
    let maxes: Vec<Option<&Value>> = stats.iter().map(|s| s.as_ref().and_then(|s| at(&s.max_values, path))).collect();
    let mins = bounds(&mins, data_type, Bound::Min, string_prefix_length);
    let maxes = bounds(&maxes, data_type, Bound::Max, string_prefix_length);
    let null_counts: UInt64Array =
        stats.iter().map(|s| s.as_ref().and_then(|s| at(&s.null_count, path)).and_then(Value::as_u64)).collect();
    let row_counts: UInt64Array = stats
        .iter()
        .map(|s| Some(s.as_ref().and_then(|s| s.num_records).and_then(|n| u64::try_from(n).ok()).unwrap_or(u64::MAX)))
        .collect();
    let inexact = BooleanArray::from(vec![false; stats.len()]);
    ZoneMaps { mins, maxes, min_exact: inexact.clone(), max_exact: inexact, null_counts, row_counts }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bound {
    Min,
    Max,
}

/// One bound per file as an array of `data_type` (null where unknown or unsafe). Timestamp
/// statistics carry their zone (`Z`); TIMESTAMP_NTZ ones are wall clocks.
fn bounds(values: &[Option<&Value>], data_type: &DataType, bound: Bound, string_prefix_length: usize) -> ArrayRef {
    let unknown = || new_null_array(data_type, values.len());
    let text: Vec<Option<String>> = values
        .iter()
        .map(|value| {
            let value = (*value)?;
            match (data_type, value) {
                (DataType::Utf8, Value::String(s)) => {
                    (bound == Bound::Min || s.chars().count() < string_prefix_length).then(|| s.clone())
                }
                (DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64, Value::Number(n)) => {
                    n.as_i64().map(|n| n.to_string())
                }
                (DataType::Float32 | DataType::Float64, Value::Number(n)) if bound == Bound::Min => {
                    n.as_f64().map(|n| n.to_string())
                }
                (DataType::Decimal128(_, _), Value::Number(n)) => {
                    n.as_f64().filter(|f| exact_in_f64(*f)).map(|f| f.to_string())
                }
                (DataType::Date32 | DataType::Timestamp(_, _), Value::String(s)) => Some(s.clone()),
                (DataType::Boolean, Value::Bool(b)) => Some(b.to_string()),
                _ => None,
            }
        })
        .collect();
    if matches!(data_type, DataType::Float32 | DataType::Float64) && bound == Bound::Max {
        let nan: ArrayRef = Arc::new(Float64Array::from(vec![f64::NAN; values.len()]));
        return cast(&nan, data_type).unwrap_or_else(|_| unknown());
    }
    let refs: Vec<Option<&str>> = text.iter().map(|t| t.as_deref()).collect();
    // A value that does not parse makes its file unknown, not the whole column.
    let parsed: Vec<ArrayRef> = refs
        .iter()
        .map(|t| typed_column(data_type, &[*t], "UTC").unwrap_or_else(|_| new_null_array(data_type, 1)))
        .collect();
    let parts: Vec<&dyn Array> = parsed.iter().map(|a| a.as_ref()).collect();
    let Ok(array) = arrow::compute::concat(&parts) else { return unknown() };
    match (data_type, bound) {
        (DataType::Timestamp(TimeUnit::Microsecond, _), Bound::Max) => {
            widen_by_a_millisecond(&array).unwrap_or_else(unknown)
        }
        _ => array,
    }
}

/// Whether the shortest text of `f` names the decimal the JSON held (at most 15
/// significant digits, no exponent).
fn exact_in_f64(f: f64) -> bool {
    let text = f.to_string();
    !text.contains(['e', 'E']) && text.chars().filter(char::is_ascii_digit).skip_while(|c| *c == '0').count() <= 15
}

/// Timestamp maxima written to the millisecond: the true maximum is up to 999 µs later.
fn widen_by_a_millisecond(maxes: &ArrayRef) -> Option<ArrayRef> {
    let micros = cast(maxes, &DataType::Int64).ok()?;
    let micros = micros.as_any().downcast_ref::<arrow::array::Int64Array>()?;
    let widened: arrow::array::Int64Array = micros.iter().map(|v| v.and_then(|v| v.checked_add(999))).collect();
    cast(&widened, maxes.data_type()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::AsArray;
    use arrow::datatypes::{Float64Type, TimestampMicrosecondType};

    fn stats(json: &str) -> Option<FileStats> {
        FileStats::from_json(json)
    }

    #[test]
    fn unsafe_bounds_are_dropped_or_widened() {
        let files = vec![stats(
            r#"{"numRecords":2,"minValues":{"s":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","t":"2021-01-01T00:00:00.000Z","f":1.5,"n":{"x":"b"}},
                "maxValues":{"s":"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz","t":"2021-01-01T00:00:00.001Z","f":2.5,"n":{"x":"c"}},
                "nullCount":{"s":0,"n":{"x":1}}}"#,
        )];
        let s = column_zone_maps(&files, &["s".to_string()], &DataType::Utf8, 32);
        assert_eq!(s.mins.as_string::<i32>().value(0).len(), 36);
        assert!(s.maxes.is_null(0), "a maximum as long as the prefix length may be cut");
        let utc = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let t = column_zone_maps(&files, &["t".to_string()], &utc, 32);
        assert_eq!(t.maxes.as_primitive::<TimestampMicrosecondType>().value(0), 1_609_459_200_001_999);
        let f = column_zone_maps(&files, &["f".to_string()], &DataType::Float64, 32);
        assert_eq!(f.mins.as_primitive::<Float64Type>().value(0), 1.5);
        assert!(f.maxes.as_primitive::<Float64Type>().value(0).is_nan());
        let nested = column_zone_maps(&files, &["n".to_string(), "x".to_string()], &DataType::Utf8, 32);
        assert_eq!(nested.maxes.as_string::<i32>().value(0), "c");
        assert_eq!(nested.null_counts.value(0), 1);
    }

    #[test]
    fn decimals_beyond_f64_are_unknown() {
        assert!(exact_in_f64(123.45));
        assert!(!exact_in_f64(12345678901234567890.0));
        let files = vec![stats(r#"{"minValues":{"d":1.25},"maxValues":{"d":12345678901234567.5}}"#)];
        let d = column_zone_maps(&files, &["d".to_string()], &DataType::Decimal128(20, 2), 32);
        assert_eq!(d.mins.as_primitive::<arrow::datatypes::Decimal128Type>().value(0), 125);
        assert!(d.maxes.is_null(0));
    }
}
