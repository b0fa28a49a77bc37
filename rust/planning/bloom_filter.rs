//! Bloom filter pruning: the filter's literal guarantees (see
//! [`guarantees`](crate::pruning::guarantees)) probed in each surviving row group's
//! split-block bloom filters (DataFusion's `prune_by_bloom_filters`).
//!
//! A row group is skipped when, for some guaranteed column with a bloom filter, no value
//! of the set may be in the filter. Values are hashed as the PLAIN encoding of the column's
//! *physical* type: INT8/INT16/UINT8/UINT16/DATE/small decimals as INT32, timestamps in
//! the file's unit and INT64 decimals as INT64, FIXED_LEN_BYTE_ARRAY decimals as the
//! big-endian two's complement of the column's width, strings and binaries as their bytes,
//! floats as their bits — except 0.0 and NaN, never probed since Spark's `=` makes -0.0
//! equal 0.0 and NaN equal every NaN while their bits differ.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    TimeUnit, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
    UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use parquet::basic::{LogicalType, Type as PhysicalType};
use parquet::bloom_filter::Sbbf;
use parquet::file::reader::Length;
use parquet::schema::types::ColumnDescriptor;

use crate::error::{PqsiftError, Result};
use crate::filter::BoundExpr;
use crate::filter::in_set::InSet;
use crate::format::opener::OpenedFile;
use crate::planning::access_plan::FileAccessPlan;
use crate::planning::metrics::PruningMetrics;
use crate::pruning::guarantees::{SHORT_LIST, literal_guarantees, usable};
use crate::pruning::normalise::column_ranges;
use crate::pruning::pruning_predicate::is_null_literal;
use crate::pruning::zone_map::ZoneMaps;
use crate::storage::FileSource;
use crate::storage::remote_file::DEFAULT_REMOTE_COALESCE_GAP;

/// The PLAIN encoding of `value` as column `descriptor` stores it, `None` when it cannot be
/// computed (the value is then assumed present).
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{ArrayRef, Int16Array};
/// use parquet::schema::parser::parse_message_type;
/// use parquet::schema::types::SchemaDescriptor;
/// use pqsift::planning::bloom_filter::plain_bytes;
/// let schema = SchemaDescriptor::new(Arc::new(parse_message_type("message m { optional int32 s (INTEGER(16, true)); }").unwrap()));
/// let value: ArrayRef = Arc::new(Int16Array::from(vec![-2i16]));
/// assert_eq!(plain_bytes(&value, schema.column(0).as_ref()), Some((-2i32).to_le_bytes().to_vec()));
/// ```
pub fn plain_bytes(value: &ArrayRef, descriptor: &ColumnDescriptor) -> Option<Vec<u8>> {
    if is_null_literal(value) {
        return None;
    }
    let int = integer_value(value);
    match descriptor.physical_type() {
        PhysicalType::INT32 => {
            let v = match value.data_type() {
                DataType::UInt32 => Some(value.as_primitive::<UInt32Type>().value(0) as i32),
                _ => int.and_then(|v| i32::try_from(v).ok()),
            }?;
            Some(v.to_le_bytes().to_vec())
        }
        PhysicalType::INT64 => {
            let v = match value.data_type() {
                DataType::UInt64 => Some(value.as_primitive::<UInt64Type>().value(0) as i64),
                DataType::Timestamp(unit, _) => timestamp_in_file_unit(int?, unit, descriptor),
                _ => int.and_then(|v| i64::try_from(v).ok()),
            }?;
            Some(v.to_le_bytes().to_vec())
        }
        PhysicalType::FIXED_LEN_BYTE_ARRAY => {
            let width = usize::try_from(descriptor.type_length()).ok()?;
            let bytes = match value.data_type() {
                DataType::FixedSizeBinary(_) => Some(value.as_fixed_size_binary().value(0)),
                DataType::Binary => Some(value.as_binary::<i32>().value(0)),
                DataType::LargeBinary => Some(value.as_binary::<i64>().value(0)),
                _ => None,
            };
            if let Some(bytes) = bytes {
                // A value of another width is stored nowhere; it cannot be probed either.
                return (bytes.len() == width).then(|| bytes.to_vec());
            }
            let DataType::Decimal128(..) = value.data_type() else {
                return None;
            };
            let width = usize::try_from(descriptor.type_length()).ok()?;
            let bytes = value.as_primitive::<Decimal128Type>().value(0).to_be_bytes();
            if width == 0 || width > 16 {
                return None;
            }
            let (dropped, kept) = bytes.split_at(16 - width);
            // The dropped bytes must be pure sign extension, or the value does not fit.
            let sign = if kept[0] & 0x80 != 0 { 0xFF } else { 0x00 };
            dropped.iter().all(|b| *b == sign).then(|| kept.to_vec())
        }
        PhysicalType::BYTE_ARRAY => match value.data_type() {
            DataType::Utf8 => Some(value.as_string::<i32>().value(0).as_bytes().to_vec()),
            DataType::LargeUtf8 => Some(value.as_string::<i64>().value(0).as_bytes().to_vec()),
            DataType::Utf8View => Some(value.as_string_view().value(0).as_bytes().to_vec()),
            DataType::Binary => Some(value.as_binary::<i32>().value(0).to_vec()),
            DataType::LargeBinary => Some(value.as_binary::<i64>().value(0).to_vec()),
            DataType::BinaryView => Some(value.as_binary_view().value(0).to_vec()),
            _ => None,
        },
        PhysicalType::FLOAT => match value.data_type() {
            DataType::Float32 if usable(value) => {
                Some(value.as_primitive::<Float32Type>().value(0).to_le_bytes().to_vec())
            }
            _ => None,
        },
        PhysicalType::DOUBLE => match value.data_type() {
            DataType::Float64 if usable(value) => {
                Some(value.as_primitive::<Float64Type>().value(0).to_le_bytes().to_vec())
            }
            _ => None,
        },
        PhysicalType::BOOLEAN | PhysicalType::INT96 => None,
    }
}

/// Integer-like literals (integers, dates, decimals' unscaled values, timestamps) as i128.
fn integer_value(value: &ArrayRef) -> Option<i128> {
    Some(match value.data_type() {
        DataType::Int8 => value.as_primitive::<Int8Type>().value(0).into(),
        DataType::Int16 => value.as_primitive::<Int16Type>().value(0).into(),
        DataType::Int32 => value.as_primitive::<Int32Type>().value(0).into(),
        DataType::Int64 => value.as_primitive::<Int64Type>().value(0).into(),
        DataType::UInt8 => value.as_primitive::<UInt8Type>().value(0).into(),
        DataType::UInt16 => value.as_primitive::<UInt16Type>().value(0).into(),
        DataType::Date32 => value.as_primitive::<Date32Type>().value(0).into(),
        DataType::Decimal128(..) => value.as_primitive::<Decimal128Type>().value(0),
        DataType::Timestamp(TimeUnit::Second, _) => value.as_primitive::<TimestampSecondType>().value(0).into(),
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            value.as_primitive::<TimestampMillisecondType>().value(0).into()
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            value.as_primitive::<TimestampMicrosecondType>().value(0).into()
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => value.as_primitive::<TimestampNanosecondType>().value(0).into(),
        _ => return None,
    })
}

/// A timestamp literal in the unit the file stores, when it converts exactly.
fn timestamp_in_file_unit(value: i128, unit: &TimeUnit, descriptor: &ColumnDescriptor) -> Option<i64> {
    let per_second = |unit: &TimeUnit| -> i128 {
        match unit {
            TimeUnit::Second => 1,
            TimeUnit::Millisecond => 1_000,
            TimeUnit::Microsecond => 1_000_000,
            TimeUnit::Nanosecond => 1_000_000_000,
        }
    };
    let file_per_second: i128 = match descriptor.logical_type_ref() {
        Some(LogicalType::Timestamp(timestamp)) => match timestamp.unit {
            parquet::basic::TimeUnit::MILLIS => 1_000,
            parquet::basic::TimeUnit::MICROS => 1_000_000,
            parquet::basic::TimeUnit::NANOS => 1_000_000_000,
        },
        _ => match descriptor.converted_type() {
            parquet::basic::ConvertedType::TIMESTAMP_MILLIS => 1_000,
            parquet::basic::ConvertedType::TIMESTAMP_MICROS => 1_000_000,
            _ => return None,
        },
    };
    let literal_per_second = per_second(unit);
    let converted = if file_per_second >= literal_per_second {
        value.checked_mul(file_per_second / literal_per_second)?
    } else {
        let divisor = literal_per_second / file_per_second;
        if value % divisor != 0 {
            return None;
        }
        value / divisor
    };
    i64::try_from(converted).ok()
}

/// The values of one literal guarantee to probe in one leaf's bloom filters.
struct Probe {
    leaf: usize,
    name: String,
    /// The values, PLAIN-encoded as they are probed (see [`Probe::may_hold_any`]).
    values: Arc<[ArrayRef]>,
    descriptor: parquet::schema::types::ColumnDescPtr,
    /// Per row group of the file, the positions in `values` of those within the row
    /// group's bounds; None: probe them all.
    in_bounds: Option<Vec<std::ops::Range<usize>>>,
}

impl Probe {
    /// Whether `bloom` may hold one of `values`. Each is encoded only when it is probed: a
    /// long list usually hits a value present long before its end, and encoding 100,000
    /// values per file up front cost more than the probes. A value that cannot be encoded
    /// is assumed present.
    fn may_hold_any(&self, bloom: &Sbbf, values: &[ArrayRef]) -> bool {
        values
            .iter()
            .any(|value| plain_bytes(value, &self.descriptor).is_none_or(|bytes| bloom.check(bytes.as_slice())))
    }
}

/// `values` (a literal guarantee's) to probe in the leaf `leaf` with Arrow field `field`,
/// and, for a long list with statistics, per row group the positions of the values inside
/// the row group's bounds (the values then sorted: a binary search per bound).
fn values_in_bounds(
    file: &OpenedFile,
    leaf: usize,
    field: &arrow::datatypes::Field,
    values: &Arc<[ArrayRef]>,
) -> (Arc<[ArrayRef]>, Option<Vec<std::ops::Range<usize>>>) {
    if values.len() <= SHORT_LIST {
        return (Arc::clone(values), None);
    }
    let Ok(set) = InSet::shared(values) else { return (Arc::clone(values), None) };
    let ranges = ZoneMaps::for_row_groups(&file.metadata, leaf, field)
        .ok()
        .and_then(|zones| set.ranges_between(&zones.mins, &zones.maxes));
    (set.shared_value_items(), ranges)
}

/// Skips the surviving row groups whose bloom filters rule out every value some literal
/// guarantee allows within the row group's bounds.
pub fn prune_by_bloom_filters(
    file: &OpenedFile,
    filter: &BoundExpr,
    plan: &mut FileAccessPlan,
    metrics: &mut PruningMetrics,
) -> Result<()> {
    let ranges = column_ranges(filter);
    let mut guarantees = literal_guarantees(filter);
    let surviving: Vec<usize> = plan.surviving().collect();
    // Per guarantee: the leaf column and the encoded values; the ones that cannot be
    // probed are noted for explain.
    let schema = file.metadata.file_metadata().schema_descr();
    let mut unprobed: Vec<String> = Vec::new();
    let mut probes: Vec<Probe> = Vec::new();
    for g in guarantees.iter_mut().filter(|g| !g.values.is_empty()) {
        let name = g.column.path.parts().join(".");
        let probe = file.leaf(&g.column).filter(|(_, field)| field.data_type() == &g.column.data_type).and_then(
            |(leaf, field)| {
                // Values are encoded only for a column with bloom filters to probe: a long
                // list costs as many encodings per file.
                let descriptor = schema.column(leaf);
                if !surviving
                    .iter()
                    .any(|&index| file.metadata.row_group(index).column(leaf).bloom_filter_offset().is_some())
                {
                    return Some(Probe { leaf, name: name.clone(), values: Arc::new([]), descriptor, in_bounds: None });
                }
                // Values outside the column's AND-ed bounds cannot match: no need to probe them.
                if let Some(range) = ranges.iter().find(|r| r.column.path == g.column.path) {
                    let inside = range.contains_each(&g.values);
                    if inside.contains(&Some(false)) {
                        g.values = g
                            .values
                            .iter()
                            .zip(inside)
                            .filter(|(_, inside)| *inside != Some(false))
                            .map(|(v, _)| Arc::clone(v))
                            .collect();
                    }
                }
                if g.values.is_empty() {
                    return Some(Probe { leaf, name: name.clone(), values: Arc::new([]), descriptor, in_bounds: None });
                }
                // Values of a type the column does not store cannot be probed (the first tells).
                plain_bytes(&g.values[0], &descriptor)?;
                let (values, in_bounds) = values_in_bounds(file, leaf, &field, &g.values);
                Some(Probe { leaf, name: name.clone(), values, descriptor, in_bounds })
            },
        );
        match probe {
            Some(probe) => probes.push(probe),
            None => unprobed.push(format!("bloom filter: values of {name} ({}) cannot be probed", g.column.data_type)),
        }
    }
    for &index in &surviving {
        let mut notes = unprobed.clone();
        let row_group = file.metadata.row_group(index);
        for Probe { leaf, name, .. } in &probes {
            if row_group.column(*leaf).bloom_filter_offset().is_none() {
                notes.push(format!("bloom filter: none for {name}"));
            }
        }
        plan.note(index, notes);
    }
    probes.retain(|probe| !probe.values.is_empty());
    if probes.is_empty() {
        return Ok(());
    }
    // Reads are checked against the file size (a `File` would allocate whatever length a
    // bloom filter header claims before finding the file shorter). From a store, the
    // filters of every surviving row group are fetched at once, where the footer says
    // their lengths.
    let reader = FileSource::open(&file.location)?;
    let wanted: Vec<std::ops::Range<u64>> = surviving
        .iter()
        .flat_map(|&index| probes.iter().map(move |probe| file.metadata.row_group(index).column(probe.leaf)))
        .filter_map(|chunk| {
            let start = u64::try_from(chunk.bloom_filter_offset()?).ok()?;
            let end = start.checked_add(u64::try_from(chunk.bloom_filter_length()?).ok()?)?;
            (end <= reader.len()).then_some(start..end)
        })
        .collect();
    let reader = reader.prefetch(&wanted, DEFAULT_REMOTE_COALESCE_GAP)?;
    let corrupt = |e: parquet::errors::ParquetError| {
        reader.take_error().unwrap_or_else(|| PqsiftError::corrupt(&file.location, e))
    };
    for index in surviving {
        let row_group = file.metadata.row_group(index);
        for probe @ Probe { leaf, name, values, in_bounds, .. } in &probes {
            let chunk = row_group.column(*leaf);
            if chunk.bloom_filter_offset().is_none() {
                continue;
            }
            let Some(bloom) = Sbbf::read_from_column_chunk(chunk, &reader).map_err(corrupt)? else {
                continue;
            };
            // The crate indexes block 0 of an empty bitset: a filter needs at least one block.
            if bloom.num_blocks() == 0 {
                return Err(PqsiftError::corrupt(
                    &file.location,
                    format!("row group {index}, column {name}: bloom filter of less than one 32-byte block"),
                ));
            }
            metrics.bloom_filters_checked += 1;
            // Values outside the row group's bounds are not there whatever the filter says:
            // probing them only lets false positives keep the row group.
            let candidates = match in_bounds {
                Some(ranges) => &values[ranges[index].clone()],
                None => &values[..],
            };
            if !probe.may_hold_any(&bloom, candidates) {
                let reason = format!(
                    "none of the {} value(s) the filter accepts for {name} within the row group's bounds is in the column's bloom filter",
                    candidates.len()
                );
                plan.skip(index, "bloom filter", reason);
                metrics.row_groups_pruned_bloom_filter += 1;
                break;
            }
        }
    }
    Ok(())
}
