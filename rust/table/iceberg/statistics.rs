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
//!   partitions it by an order-preserving transform: then the partition value bounds the
//!   column in every row (see [`super::transforms`]); a `bucket[N]` partition rules a file
//!   out when none of the values a filter pins the column to falls in its bucket.
//!
//! ```
//! use std::collections::HashMap;
//! use arrow::array::{Array, AsArray};
//! use arrow::datatypes::{DataType, Field, Float64Type};
//! use pqsift::table::iceberg::statistics::{EntryStats, column_zone_maps};
//! let (nulls, nans) = (HashMap::from([(1, 0)]), HashMap::new());
//! let lower = HashMap::from([(1, 0.5f64.to_le_bytes().to_vec())]);
//! let upper = HashMap::from([(1, 2.5f64.to_le_bytes().to_vec())]);
//! let file = EntryStats { record_count: 3, null_counts: &nulls, nan_counts: &nans, lower_bounds: &lower, upper_bounds: &upper };
//! let zones = column_zone_maps(&[file], 1, &Field::new("x", DataType::Float64, true), None);
//! assert_eq!(zones.mins.as_primitive::<Float64Type>().value(0), 0.5);
//! assert!(zones.maxes.as_primitive::<Float64Type>().value(0).is_nan()); // NaN count unknown
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use apache_avro::types::Value;
use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, FixedSizeBinaryArray, Float32Array, Float64Array, UInt64Array,
};
use arrow::compute::kernels::zip::zip;
use arrow::datatypes::{DataType, Field, Float32Type, Float64Type, Int64Type, Schema};

use super::manifest::{DataFile, FieldSummary, ManifestFile};
use super::metadata::{PartitionField, PartitionSpec, spec_fields};
use super::schema::{is_uuid, stored_type};
use super::transforms::{Transform, bucket_of, source_bounds};
use super::values::{as_declared, bound_array, field_bound_array, partition_array};
use crate::error::Result;
use crate::filter::uuid_text::uuid_bytes;
use crate::filter::{BindOptions, BoundColumn, BoundExpr, Expr, bind};
use crate::pruning::guarantees::literal_guarantees;
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
/// manifest entry and its partition values (through the transforms of its spec, one of
/// `specs`).
pub fn prune_by_manifest_statistics(
    filter: &Expr,
    declared: &DeclaredSchema,
    files: &[DataFile],
    specs: &[PartitionSpec],
    options: &BindOptions,
) -> Result<Vec<bool>> {
    let schema = &declared.schema;
    let bound = bind(filter, schema, options)?;
    let stats: Vec<EntryStats> = files.iter().map(EntryStats::from).collect();
    let fields: Vec<&[PartitionField]> = files.iter().map(|f| spec_fields(specs, f.spec_id)).collect();
    let partition_values = |picks: &[Option<usize>], data_type: &DataType| -> ArrayRef {
        let values: Vec<Option<&Value>> =
            files.iter().zip(picks).map(|(file, k)| k.and_then(|k| file.partition.get(k))).collect();
        partition_array(&values, data_type)
    };
    let source = |column: &BoundColumn| -> Result<Option<ZoneMaps>> {
        let Some((field, id)) = column_field(schema, column) else { return Ok(None) };
        let partition = partition_source_bounds(&fields, id, &stored_type(field), |picks, data_type| {
            let values = partition_values(picks, data_type);
            (Arc::clone(&values), values)
        })
        .map(|(lower, upper)| (as_declared(lower, field), as_declared(upper, field)));
        let partition = partition.as_ref().map(|(lower, upper)| (lower, upper));
        Ok(Some(column_zone_maps(&stats, id, field, partition)))
    };
    let mut keep = evaluate_on_zone_maps(&bound, files.len(), &source)?.can_true;
    let buckets = bucket_keeps(&bound, schema, &fields, |picks| {
        let values = partition_values(picks, &DataType::Int64);
        let values = values.as_primitive::<Int64Type>();
        (0..values.len()).map(|i| values.is_valid(i).then(|| (values.value(i), values.value(i)))).collect()
    });
    keep.iter_mut().zip(buckets).for_each(|(keep, bucket)| *keep &= bucket);
    Ok(keep)
}

/// Per manifest of a manifest list, whether `filter` (bound to the table schema `schema`)
/// can be true of a file it lists, judging by its partition summaries read through the
/// transforms of the manifest's spec: the summary's range of partition values as a range
/// of source values (order-preserving transforms), or of buckets, and whether a file has a
/// null (and a NaN). A column without a partition field is unknown. A filter that does not
/// bind keeps every manifest (the scan reports it).
pub fn prune_manifests(
    filter: &Expr,
    schema: &Schema,
    specs: &[PartitionSpec],
    manifests: &[ManifestFile],
    options: &BindOptions,
) -> Vec<bool> {
    let Ok(bound) = bind(filter, schema, options) else { return vec![true; manifests.len()] };
    let fields: Vec<&[PartitionField]> = manifests.iter().map(|m| spec_fields(specs, m.spec_id)).collect();
    let summary = |i: usize, k: Option<usize>| k.and_then(|k| manifests[i].partitions.get(k));
    // Per manifest, the lower and upper summary bounds of the picked partition fields.
    let summary_bounds = |picks: &[Option<usize>], data_type: &DataType| -> (ArrayRef, ArrayRef) {
        let bound = |upper: bool| -> Vec<Option<&[u8]>> {
            picks
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    let s = summary(i, *k)?;
                    if upper { s.upper_bound.as_deref() } else { s.lower_bound.as_deref() }
                })
                .collect()
        };
        (bound_array(&bound(false), data_type), bound_array(&bound(true), data_type))
    };
    let source = |column: &BoundColumn| -> Result<Option<ZoneMaps>> {
        let Some((field, id)) = column_field(schema, column) else { return Ok(None) };
        let Some((mins, maxes)) = partition_source_bounds(&fields, id, &stored_type(field), summary_bounds) else {
            return Ok(None);
        };
        let (mins, maxes) = (as_declared(mins, field), as_declared(maxes, field));
        // The summary of the field the bounds came from says whether a file has a null.
        let picks = best_fields(&fields, id);
        let summaries: Vec<Option<&FieldSummary>> = picks.iter().enumerate().map(|(i, k)| summary(i, *k)).collect();
        let no_nan: Vec<bool> = summaries.iter().map(|s| s.is_some_and(|s| s.contains_nan == Some(false))).collect();
        // Without a null, no file has one; otherwise how many is unknown.
        let null_counts: UInt64Array = summaries.iter().map(|s| s.filter(|s| !s.contains_null).map(|_| 0)).collect();
        let row_counts: UInt64Array = summaries.iter().map(|_| Some(u64::MAX)).collect();
        Ok(Some(inexact_zone_maps(mins, maxes, &no_nan, null_counts, row_counts)))
    };
    let Ok(keep) = evaluate_on_zone_maps(&bound, manifests.len(), &source) else {
        return vec![true; manifests.len()];
    };
    let buckets = bucket_keeps(&bound, schema, &fields, |picks| {
        let (lower, upper) = summary_bounds(picks, &DataType::Int64);
        let (lower, upper) = (lower.as_primitive::<Int64Type>(), upper.as_primitive::<Int64Type>());
        (0..picks.len())
            .map(|i| (lower.is_valid(i) && upper.is_valid(i)).then(|| (lower.value(i), upper.value(i))))
            .collect()
    });
    keep.can_true.into_iter().zip(buckets).map(|(keep, bucket)| keep && bucket).collect()
}

/// The declared field a bound column reads and its field id, when the column is read as
/// declared (no cast in between).
fn column_field<'a>(schema: &'a Schema, column: &BoundColumn) -> Option<(&'a Field, i32)> {
    let field = leaf_field(schema, &column.indices)?;
    let id = field_id(field)?;
    (column.data_type == *field.data_type()).then_some((field, id))
}

/// The field along a path of field indices (struct fields only).
fn leaf_field<'a>(schema: &'a Schema, indices: &[usize]) -> Option<&'a Field> {
    let (first, rest) = indices.split_first()?;
    let mut field = schema.fields().get(*first)?.as_ref();
    for &index in rest {
        let DataType::Struct(children) = field.data_type() else { return None };
        field = children.get(index)?.as_ref();
    }
    Some(field)
}

/// Per container (whose spec's fields are `fields[i]`), the partition field on the source
/// column `id` that bounds it best: identity first, then the other order-preserving
/// transforms in the spec's order.
fn best_fields(fields: &[&[PartitionField]], id: i32) -> Vec<Option<usize>> {
    fields
        .iter()
        .map(|fields| {
            let on = |p: &&PartitionField| p.source_id == id;
            let rank = |p: &PartitionField| match p.transform {
                Transform::Identity => Some(0),
                t if t.preserves_order() => Some(1),
                _ => None,
            };
            let candidates = fields.iter().enumerate().filter(|(_, p)| on(p));
            candidates.filter_map(|(k, p)| Some((rank(p)?, k))).min().map(|(_, k)| k)
        })
        .collect()
}

/// Per container, the range of the source column `id` (of type `source`) its partition
/// values allow, through the best field of its spec (see [`best_fields`]); `values` reads
/// the picked fields' lower and upper partition values as the given type (null where a
/// container has no pick). `None` when no container's spec bounds the column.
fn partition_source_bounds(
    fields: &[&[PartitionField]],
    id: i32,
    source: &DataType,
    values: impl Fn(&[Option<usize>], &DataType) -> (ArrayRef, ArrayRef),
) -> Option<(ArrayRef, ArrayRef)> {
    let picks = best_fields(fields, id);
    let transform_of = |i: usize, k: usize| fields[i][k].transform;
    // Specs evolve: containers may hold the column through different transforms.
    let mut transforms: Vec<Transform> = Vec::new();
    for transform in picks.iter().enumerate().filter_map(|(i, k)| Some(transform_of(i, (*k)?))) {
        if !transforms.contains(&transform) {
            transforms.push(transform);
        }
    }
    let mut merged: Option<(ArrayRef, ArrayRef)> = None;
    for transform in transforms {
        let these: Vec<Option<usize>> =
            picks.iter().enumerate().map(|(i, k)| k.filter(|k| transform_of(i, *k) == transform)).collect();
        let (lower, upper) = values(&these, &transform.result_type(source));
        let Some((lower, upper)) = source_bounds(transform, &lower, &upper, source) else { continue };
        merged = Some(match merged {
            None => (lower, upper),
            Some((mins, maxes)) => {
                let take: BooleanArray = these.iter().map(|k| Some(k.is_some())).collect();
                (zip(&take, &lower, &mins).ok()?, zip(&take, &upper, &maxes).ok()?)
            }
        });
    }
    merged
}

/// Per container, whether the filter can be true judging by its `bucket[N]` partition
/// fields: where the filter pins a column to a few values (`=`, `IN`, on AND paths) and a
/// container's spec buckets that column, whether one of those values' buckets lies in the
/// container's range of buckets. `ranges` reads the picked fields' ranges (a file's own
/// bucket, a manifest's summary), `None` where unknown.
fn bucket_keeps(
    bound: &BoundExpr,
    schema: &Schema,
    fields: &[&[PartitionField]],
    ranges: impl Fn(&[Option<usize>]) -> Vec<Option<(i64, i64)>>,
) -> Vec<bool> {
    let mut keep = vec![true; fields.len()];
    for guarantee in literal_guarantees(bound) {
        let Some((field, id)) = column_field(schema, &guarantee.column) else { continue };
        let mut counts: Vec<u32> = fields
            .iter()
            .flat_map(|fields| fields.iter())
            .filter(|p| p.source_id == id)
            .filter_map(|p| match p.transform {
                Transform::Bucket(n) => Some(n),
                _ => None,
            })
            .collect();
        counts.sort_unstable();
        counts.dedup();
        for count in counts {
            // The values' buckets; a value without one (a type not bucketed so) keeps all.
            let bucket = |value: &ArrayRef| match is_uuid(field) {
                // A uuid is bucketed by its 16 bytes; text that is no uuid's has no bucket.
                true => {
                    let bytes = uuid_bytes(value.as_string_opt::<i32>()?.value(0))?;
                    bucket_of(&FixedSizeBinaryArray::try_from_iter([bytes].into_iter()).ok()?, 0, count)
                }
                false => bucket_of(value.as_ref(), 0, count),
            };
            let Some(buckets) = guarantee.values.iter().map(bucket).collect::<Option<Vec<i64>>>() else {
                continue;
            };
            let picks: Vec<Option<usize>> = fields
                .iter()
                .map(|fields| fields.iter().position(|p| p.source_id == id && p.transform == Transform::Bucket(count)))
                .collect();
            for (keep, range) in keep.iter_mut().zip(ranges(&picks)) {
                if let Some((lower, upper)) = range {
                    *keep &= buckets.iter().any(|b| (lower..=upper).contains(b));
                }
            }
        }
    }
    keep
}

/// Zone maps of the column `field` (with id `id`), one container per file of
/// `files`; `partition` (per file the least and greatest value its partition values allow,
/// null where unknown) is used where the entry has no bounds of its own.
pub fn column_zone_maps(
    files: &[EntryStats],
    id: i32,
    field: &Field,
    partition: Option<(&ArrayRef, &ArrayRef)>,
) -> ZoneMaps {
    let data_type = field.data_type();
    let lower: Vec<Option<&[u8]>> = files.iter().map(|f| f.lower_bounds.get(&id).map(Vec::as_slice)).collect();
    let upper: Vec<Option<&[u8]>> = files.iter().map(|f| f.upper_bounds.get(&id).map(Vec::as_slice)).collect();
    let mut mins = field_bound_array(&lower, field);
    let mut maxes = field_bound_array(&upper, field);
    let mut null_counts: UInt64Array =
        files.iter().map(|f| f.null_counts.get(&id).and_then(|n| u64::try_from(*n).ok())).collect();
    if let Some((from, to)) = partition.filter(|(from, to)| {
        from.data_type() == data_type
            && to.data_type() == data_type
            && from.len() == files.len()
            && to.len() == files.len()
    }) {
        // Where the entry has no bounds but a partition value: the value bounds every row,
        // and no row is null (a null maps to a null partition value).
        let use_partition: BooleanArray = (0..files.len())
            .map(|i| Some(mins.is_null(i) && maxes.is_null(i) && (from.is_valid(i) || to.is_valid(i))))
            .collect();
        if let (Ok(m), Ok(x)) = (zip(&use_partition, from, &mins), zip(&use_partition, to, &maxes)) {
            (mins, maxes) = (m, x);
            null_counts = (0..files.len())
                .map(|i| {
                    if use_partition.value(i) { Some(0) } else { null_counts.is_valid(i).then(|| null_counts.value(i)) }
                })
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
        let zones = column_zone_maps(&files, 1, &Field::new("x", DataType::Float64, true), None);
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
        let zones = column_zone_maps(
            &[empty, with_bounds, empty],
            1,
            &Field::new("x", DataType::Int64, true),
            Some((&fill, &fill)),
        );
        let mins = zones.mins.as_primitive::<arrow::datatypes::Int64Type>();
        assert_eq!((mins.value(0), zones.null_counts.value(0)), (7, 0));
        assert_eq!(mins.value(1), 5, "the entry's own bounds win");
        assert!(mins.is_null(2) && zones.null_counts.is_null(2), "no bound, no value: unknown");
    }
}
