//! File skipping on an Iceberg snapshot's manifests before any data footer is read: each
//! live file's entry carries its record count and, per column id, null and NaN counts and
//! lower and upper bounds. They become [`ZoneMaps`] with files as the containers, and the
//! filter runs through the same three-valued evaluation as row-group statistics.
//!
//! Bounds are made safe before use:
//!
//! * every bound is **inexact** — a string or binary bound may be a truncated prefix (a
//!   lower bound cut short, an upper bound cut and incremented: still bounds);
//! * floats — bounds leave NaN out: a file whose NaN count for the column is not known to
//!   be zero gets NaN (Spark's greatest value) as its maximum; a zero bound is widened to
//!   take in both signed zeros;
//! * a column a file's entry says nothing of is unknown, unless the file's partition spec
//!   has an identity partition of it: then the manifest's partition value is the column's
//!   value in every row.
//!
//! ```
//! use std::collections::HashMap;
//! use arrow::array::{Array, AsArray};
//! use arrow::datatypes::{DataType, Float64Type};
//! use pqsift::table::iceberg::statistics::{EntryStats, column_zone_maps};
//! let (nulls, nans) = (HashMap::from([(1, 0)]), HashMap::new());
//! let lower = HashMap::from([(1, 0.5f64.to_le_bytes().to_vec())]);
//! let upper = HashMap::from([(1, 2.5f64.to_le_bytes().to_vec())]);
//! let file = EntryStats { record_count: 3, null_counts: &nulls, nan_counts: &nans, lower_bounds: &lower, upper_bounds: &upper };
//! let zones = column_zone_maps(&[file], 1, &DataType::Float64, None);
//! assert_eq!(zones.mins.as_primitive::<Float64Type>().value(0), 0.5);
//! assert!(zones.maxes.as_primitive::<Float64Type>().value(0).is_nan()); // NaN count unknown
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Float32Array, Float64Array, UInt64Array};
use arrow::compute::kernels::zip::zip;
use arrow::datatypes::{DataType, Float32Type, Float64Type};

use super::manifest::{DataFile, FieldSummary, ManifestFile};
use super::metadata::PartitionSpec;
use super::values::bound_array;
use crate::error::Result;
use crate::filter::{BindOptions, BoundColumn, Expr, bind};
use crate::pruning::pruning_predicate::evaluate_on_zone_maps;
use crate::pruning::zone_map::ZoneMaps;
use crate::table::column_matching::field_id;
use crate::table::schema_adapter::DeclaredSchema;

/// What a manifest entry says of its file's columns (see [`DataFile`]), borrowed from it.
#[derive(Debug, Clone, Copy)]
pub struct EntryStats<'a> {
    /// Rows in the file.
    pub record_count: i64,
    /// Per column id: nulls.
    pub null_counts: &'a HashMap<i32, i64>,
    /// Per column id: NaNs.
    pub nan_counts: &'a HashMap<i32, i64>,
    /// Per column id: a lower bound.
    pub lower_bounds: &'a HashMap<i32, Vec<u8>>,
    /// Per column id: an upper bound.
    pub upper_bounds: &'a HashMap<i32, Vec<u8>>,
}

impl<'a> From<&'a DataFile> for EntryStats<'a> {
    fn from(file: &'a DataFile) -> Self {
        Self {
            record_count: file.record_count,
            null_counts: &file.null_counts,
            nan_counts: &file.nan_counts,
            lower_bounds: &file.lower_bounds,
            upper_bounds: &file.upper_bounds,
        }
    }
}

/// Per file, whether `filter` (bound to the declared schema) can be true judging by its
/// manifest entry and identity partition values (the declared schema's fills).
pub fn prune_by_manifest_statistics(
    filter: &Expr,
    declared: &DeclaredSchema,
    files: &[DataFile],
    options: &BindOptions,
) -> Result<Vec<bool>> {
    let bound = bind(filter, &declared.schema, options)?;
    let stats: Vec<EntryStats> = files.iter().map(EntryStats::from).collect();
    let source = |column: &BoundColumn| -> Result<Option<ZoneMaps>> {
        let Some(field) = leaf_field(declared, &column.indices) else { return Ok(None) };
        let Some(id) = field_id(field) else { return Ok(None) };
        if column.data_type != *field.data_type() {
            return Ok(None);
        }
        let fill = match (column.indices.as_slice(), &declared.fills) {
            ([_], Some(fills)) => fills
                .schema
                .fields()
                .iter()
                .position(|f| f.name() == field.name())
                .map(|k| Arc::clone(fills.values.column(k))),
            _ => None,
        };
        Ok(Some(column_zone_maps(&stats, id, field.data_type(), fill.as_ref())))
    };
    Ok(evaluate_on_zone_maps(&bound, files.len(), &source)?.can_true)
}

/// Per manifest of a manifest list, whether `filter` (bound to the table schema `schema`)
/// can be true of a file it lists, judging by its partition summaries: for a column an
/// identity partition field of the manifest's spec holds, the summary's bounds, whether a
/// file has a null (and a NaN). A column without one is unknown. A filter that does not
/// bind keeps every manifest (the scan reports it).
pub fn prune_manifests(
    filter: &Expr,
    schema: &arrow::datatypes::Schema,
    specs: &[PartitionSpec],
    manifests: &[ManifestFile],
    options: &BindOptions,
) -> Vec<bool> {
    let Ok(bound) = bind(filter, schema, options) else { return vec![true; manifests.len()] };
    let source = |column: &BoundColumn| -> Result<Option<ZoneMaps>> {
        let [index] = column.indices.as_slice() else { return Ok(None) };
        let field = schema.field(*index);
        let Some(id) = field_id(field) else { return Ok(None) };
        if column.data_type != *field.data_type() {
            return Ok(None);
        }
        let summaries: Vec<Option<&FieldSummary>> = manifests
            .iter()
            .map(|manifest| {
                let spec = specs.iter().find(|s| s.spec_id == manifest.spec_id)?;
                let k = spec.fields.iter().position(|p| p.source_id == id && p.transform == "identity")?;
                manifest.partitions.get(k)
            })
            .collect();
        let lower: Vec<Option<&[u8]>> = summaries.iter().map(|s| s.and_then(|s| s.lower_bound.as_deref())).collect();
        let upper: Vec<Option<&[u8]>> = summaries.iter().map(|s| s.and_then(|s| s.upper_bound.as_deref())).collect();
        let no_nan: Vec<bool> = summaries.iter().map(|s| s.is_some_and(|s| s.contains_nan == Some(false))).collect();
        // Without a null, no file has one; otherwise how many is unknown.
        let null_counts: UInt64Array = summaries.iter().map(|s| s.filter(|s| !s.contains_null).map(|_| 0)).collect();
        let row_counts: UInt64Array = summaries.iter().map(|_| Some(u64::MAX)).collect();
        let (mins, maxes) = (bound_array(&lower, field.data_type()), bound_array(&upper, field.data_type()));
        Ok(Some(inexact_zone_maps(mins, maxes, &no_nan, null_counts, row_counts)))
    };
    evaluate_on_zone_maps(&bound, manifests.len(), &source).map_or_else(|_| vec![true; manifests.len()], |p| p.can_true)
}

/// The declared field along a path of field indices (struct fields only).
fn leaf_field<'a>(declared: &'a DeclaredSchema, indices: &[usize]) -> Option<&'a arrow::datatypes::Field> {
    let (first, rest) = indices.split_first()?;
    let mut field = declared.schema.fields().get(*first)?.as_ref();
    for &index in rest {
        let DataType::Struct(children) = field.data_type() else { return None };
        field = children.get(index)?.as_ref();
    }
    Some(field)
}

/// Zone maps of the column with id `id` and type `data_type`, one container per file of
/// `files`; `fill` (one value per file, null where unknown) is the column's identity
/// partition value, used where the entry has no bounds for it.
pub fn column_zone_maps(files: &[EntryStats], id: i32, data_type: &DataType, fill: Option<&ArrayRef>) -> ZoneMaps {
    let lower: Vec<Option<&[u8]>> = files.iter().map(|f| f.lower_bounds.get(&id).map(Vec::as_slice)).collect();
    let upper: Vec<Option<&[u8]>> = files.iter().map(|f| f.upper_bounds.get(&id).map(Vec::as_slice)).collect();
    let mut mins = bound_array(&lower, data_type);
    let mut maxes = bound_array(&upper, data_type);
    let mut null_counts: UInt64Array =
        files.iter().map(|f| f.null_counts.get(&id).and_then(|n| u64::try_from(*n).ok())).collect();
    if let Some(fill) = fill.filter(|f| f.data_type() == data_type && f.len() == files.len()) {
        // Where the entry has no bounds but a partition value: every row holds that value.
        let use_fill: BooleanArray =
            (0..files.len()).map(|i| Some(mins.is_null(i) && maxes.is_null(i) && fill.is_valid(i))).collect();
        if let (Ok(m), Ok(x)) = (zip(&use_fill, fill, &mins), zip(&use_fill, fill, &maxes)) {
            (mins, maxes) = (m, x);
            null_counts = (0..files.len())
                .map(
                    |i| if use_fill.value(i) { Some(0) } else { null_counts.is_valid(i).then(|| null_counts.value(i)) },
                )
                .collect();
        }
    }
    let no_nan: Vec<bool> = files.iter().map(|f| f.nan_counts.get(&id) == Some(&0)).collect();
    let row_counts: UInt64Array =
        files.iter().map(|f| Some(u64::try_from(f.record_count).unwrap_or(u64::MAX))).collect();
    inexact_zone_maps(mins, maxes, &no_nan, null_counts, row_counts)
}

/// Zone maps of manifest bounds: every bound inexact (a string or binary one may be a
/// truncated prefix), float bounds made safe (see [`safe_float_bounds`]) with `no_nan`
/// saying per container whether it is known to hold no NaN.
fn inexact_zone_maps(
    mins: ArrayRef,
    maxes: ArrayRef,
    no_nan: &[bool],
    null_counts: UInt64Array,
    row_counts: UInt64Array,
) -> ZoneMaps {
    let (mins, maxes) = match mins.data_type() {
        DataType::Float32 | DataType::Float64 => safe_float_bounds(&mins, &maxes, no_nan),
        _ => (mins, maxes),
    };
    let inexact = BooleanArray::from(vec![false; row_counts.len()]);
    ZoneMaps { mins, maxes, min_exact: inexact.clone(), max_exact: inexact, null_counts, row_counts }
}

/// Float bounds made safe: NaN as the maximum where NaN may be present, a zero minimum
/// taken as -0.0 and a zero maximum as +0.0, a NaN bound unknown.
fn safe_float_bounds(mins: &ArrayRef, maxes: &ArrayRef, no_nan: &[bool]) -> (ArrayRef, ArrayRef) {
    let as_f64 = |a: &ArrayRef| -> Vec<Option<f64>> {
        match a.data_type() {
            DataType::Float32 => a.as_primitive::<Float32Type>().iter().map(|v| v.map(f64::from)).collect(),
            _ => a.as_primitive::<Float64Type>().iter().collect(),
        }
    };
    let lows: Vec<Option<f64>> =
        as_f64(mins).into_iter().map(|v| v.filter(|v| !v.is_nan()).map(|v| if v == 0.0 { -0.0 } else { v })).collect();
    let highs: Vec<Option<f64>> = as_f64(maxes)
        .into_iter()
        .zip(no_nan)
        .map(|(v, no_nan)| match no_nan {
            false => Some(f64::NAN),
            true => v.filter(|v| !v.is_nan()).map(|v| if v == 0.0 { 0.0 } else { v }),
        })
        .collect();
    let back = |values: Vec<Option<f64>>| -> ArrayRef {
        match mins.data_type() {
            DataType::Float32 => Arc::new(values.into_iter().map(|v| v.map(|v| v as f32)).collect::<Float32Array>()),
            _ => Arc::new(values.into_iter().collect::<Float64Array>()),
        }
    };
    (back(lows), back(highs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Column 1's lower and upper bound maps.
    fn maps(lower: Vec<u8>, upper: Vec<u8>) -> [HashMap<i32, Vec<u8>>; 2] {
        [HashMap::from([(1, lower)]), HashMap::from([(1, upper)])]
    }

    /// A file of 2 rows with these counts and column 1's bounds (see [`maps`]).
    fn entry<'a>(
        null_counts: &'a HashMap<i32, i64>,
        nan_counts: &'a HashMap<i32, i64>,
        [lower_bounds, upper_bounds]: &'a [HashMap<i32, Vec<u8>>; 2],
    ) -> EntryStats<'a> {
        EntryStats { record_count: 2, null_counts, nan_counts, lower_bounds, upper_bounds }
    }

    #[test]
    fn float_bounds_take_in_nan_and_both_zeros() {
        let nulls = HashMap::from([(1, 0)]);
        let (no_nan, one_nan, unknown) = (HashMap::from([(1, 0)]), HashMap::from([(1, 1)]), HashMap::new());
        let zero = maps(0.0f64.to_le_bytes().to_vec(), 0.0f64.to_le_bytes().to_vec());
        let some = maps(1.0f64.to_le_bytes().to_vec(), 2.0f64.to_le_bytes().to_vec());
        let files = [entry(&nulls, &no_nan, &zero), entry(&nulls, &one_nan, &some), entry(&nulls, &unknown, &some)];
        let zones = column_zone_maps(&files, 1, &DataType::Float64, None);
        let mins = zones.mins.as_primitive::<Float64Type>();
        let maxes = zones.maxes.as_primitive::<Float64Type>();
        assert!(mins.value(0).is_sign_negative() && maxes.value(0).is_sign_positive());
        assert!(maxes.value(1).is_nan() && maxes.value(2).is_nan());
    }

    #[test]
    fn a_partition_value_stands_in_for_missing_bounds() {
        let none: HashMap<i32, i64> = HashMap::new();
        let no_bounds: HashMap<i32, Vec<u8>> = HashMap::new();
        let bounds = maps(5i64.to_le_bytes().to_vec(), 9i64.to_le_bytes().to_vec());
        let empty = EntryStats {
            record_count: 4,
            null_counts: &none,
            nan_counts: &none,
            lower_bounds: &no_bounds,
            upper_bounds: &no_bounds,
        };
        let with_bounds = EntryStats { lower_bounds: &bounds[0], upper_bounds: &bounds[1], ..empty };
        let fill: ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![Some(7), Some(100), None]));
        let zones = column_zone_maps(&[empty, with_bounds, empty], 1, &DataType::Int64, Some(&fill));
        let mins = zones.mins.as_primitive::<arrow::datatypes::Int64Type>();
        assert_eq!((mins.value(0), zones.null_counts.value(0)), (7, 0));
        assert_eq!(mins.value(1), 5, "the entry's own bounds win");
        assert!(mins.is_null(2) && zones.null_counts.is_null(2), "no bound, no value: unknown");
    }
}
