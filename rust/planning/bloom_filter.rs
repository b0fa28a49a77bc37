//! Bloom filter pruning: literal guarantees derived from the filter, probed in each
//! surviving row group's split-block bloom filters (DataFusion's `LiteralGuarantee` and
//! `prune_by_bloom_filters`).
//!
//! A **literal guarantee** says "every row the filter accepts has `column` ∈ {values}". It
//! comes from `column = literal`, `column <=> literal`, `column IN (...)` found on AND
//! paths, and from an OR whose both sides guarantee something on the same column (the
//! union). This is also where conjuncts on one column are **normalised**: `a IN (1,2,3)
//! AND a IN (2,3,4)` intersects to `a ∈ {2, 3}`, and `a = 1 AND a = 2` to the empty set,
//! which matches nothing (the statistics stage skips every row group for it).
//!
//! A row group is skipped when, for some guaranteed column with a bloom filter, no value
//! of the set may be in the filter. Values are hashed as the PLAIN encoding of the column's
//! *physical* type: INT8/INT16/UINT8/UINT16/DATE/small decimals as INT32, timestamps in
//! the file's unit and INT64 decimals as INT64, FIXED_LEN_BYTE_ARRAY decimals as the
//! big-endian two's complement of the column's width, strings and binaries as their bytes,
//! floats as their bits — except 0.0 and NaN, never probed since Spark's `=` makes -0.0
//! equal 0.0 and NaN equal every NaN while their bits differ.
//!
//! ```
//! use arrow::datatypes::{DataType, Field, Schema};
//! use pqsift::planning::bloom_filter::literal_guarantees;
//! use pqsift::filter::{bind, parse_filter, BindOptions};
//!
//! let schema = Schema::new(vec![Field::new("a", DataType::Int64, true), Field::new("b", DataType::Utf8, true)]);
//! let filter = bind(
//!     &parse_filter("a IN (1, 2, 3) AND a IN (2, 3, 4) AND (b = 'x' OR b = 'y') AND a > 0").unwrap(),
//!     &schema,
//!     &BindOptions::default(),
//! ).unwrap();
//! let guarantees = literal_guarantees(&filter);
//! assert_eq!(guarantees.len(), 2);
//! assert_eq!(guarantees[0].values.len(), 2); // a ∈ {2, 3}
//! assert_eq!(guarantees[1].values.len(), 2); // b ∈ {'x', 'y'}
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::compute::kernels::cast::{CastOptions, cast_with_options};
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
use crate::filter::in_set::InSet;
use crate::filter::{BoundColumn, BoundExpr, CompareOp, is_order_preserving_widening};
use crate::format::opener::OpenedFile;
use crate::planning::access_plan::FileAccessPlan;
use crate::planning::metrics::PruningMetrics;
use crate::planning::normalise::column_ranges;
use crate::planning::pruning_predicate::is_null_literal;
use crate::planning::zone_map::ZoneMaps;
use crate::storage::FileSource;
use crate::storage::remote_file::DEFAULT_REMOTE_COALESCE_GAP;

/// Every row the filter accepts has `column` equal to one of `values`.
#[derive(Debug, Clone)]
pub struct LiteralGuarantee {
    /// The column.
    pub column: BoundColumn,
    /// The candidate values, one-element arrays of the column's type, distinct (shared:
    /// a long IN list's are its set's, not copied per file and stage).
    pub values: Arc<[ArrayRef]>,
}

/// The literal guarantees of a bound filter, one per column, in column order.
pub fn literal_guarantees(filter: &BoundExpr) -> Vec<LiteralGuarantee> {
    derive(filter).into_values().collect()
}

type Guarantees = BTreeMap<String, LiteralGuarantee>;

fn derive(expr: &BoundExpr) -> Guarantees {
    let mut out = Guarantees::new();
    match expr {
        BoundExpr::Compare { op: CompareOp::Eq | CompareOp::NullSafeEq, left, right } => {
            let preimage = match (left.as_ref(), right.as_ref()) {
                (BoundExpr::Literal(l), value) | (value, BoundExpr::Literal(l)) if !is_null_literal(l) => {
                    preimage(value, l)
                }
                _ => Preimage::Unknown,
            };
            if let Preimage::Value(column, literal) = preimage
                && usable(&literal)
            {
                out.insert(key(column), LiteralGuarantee { column: column.clone(), values: vec![literal].into() });
            }
        }
        BoundExpr::InList { expr, list, negated: false } => {
            let literals: Option<Vec<&ArrayRef>> =
                list.iter().map(|item| if let BoundExpr::Literal(v) = item { Some(v) } else { None }).collect();
            if let Some(literals) = literals {
                insert_list_guarantee(&mut out, expr, literals);
            }
        }
        BoundExpr::InSet { expr, set, negated: false } => {
            let Some(column) = peel_injective_casts(expr) else { return out };
            let value_type = match &column.data_type {
                DataType::Dictionary(_, values) => values.as_ref(),
                other => other,
            };
            let floats = matches!(value_type, DataType::Float16 | DataType::Float32 | DataType::Float64);
            if set.values().data_type() == value_type && !floats {
                // Already the column's values, distinct, none NULL: nothing to convert.
                out.insert(key(column), LiteralGuarantee { column: column.clone(), values: set.shared_value_items() });
            } else {
                insert_list_guarantee(&mut out, expr, set.value_items().iter().collect());
            }
        }
        BoundExpr::And(left, right) => {
            out = derive(left);
            for (name, guarantee) in derive(right) {
                match out.get_mut(&name) {
                    Some(existing) => {
                        existing.values = intersection(existing.values.to_vec(), &guarantee.values).into()
                    }
                    None => {
                        out.insert(name, guarantee);
                    }
                }
            }
        }
        BoundExpr::Or(left, right) => {
            let (left, right) = (derive(left), derive(right));
            for (name, mut guarantee) in left {
                if let Some(other) = right.get(&name) {
                    let values = guarantee.values.iter().chain(other.values.iter()).cloned().collect();
                    guarantee.values = distinct(values).into();
                    out.insert(name, guarantee);
                }
            }
        }
        _ => {}
    }
    out
}

/// The guarantee of `value IN (literals)`: the literals brought to the stored column's
/// values (none when some cannot be, or the value is not a stored column).
fn insert_list_guarantee(out: &mut Guarantees, value: &BoundExpr, literals: Vec<&ArrayRef>) {
    let Some(column) = peel_injective_casts(value) else { return };
    let mut values: Vec<ArrayRef> = Vec::with_capacity(literals.len());
    for literal in literals {
        if is_null_literal(literal) {
            continue; // `x IN (1, NULL)` is true only where x = 1.
        }
        let literal = match preimage(value, literal) {
            Preimage::Value(_, literal) => literal,
            // A candidate the column's values cannot take matches no row.
            Preimage::Impossible => continue,
            Preimage::Unknown => return,
        };
        if !usable(&literal) {
            return;
        }
        values.push(literal);
    }
    out.insert(key(column), LiteralGuarantee { column: column.clone(), values: distinct(values).into() });
}

/// What `value = literal` says about a stored column.
enum Preimage<'a> {
    /// Rows matching it have `column` equal to this value of the column's value type.
    Value(&'a BoundColumn, ArrayRef),
    /// No value of the column maps to the literal: no row matches.
    Impossible,
    /// Not an equality on a stored column pruning can use.
    Unknown,
}

/// `value = literal` as an equality on a stored column: the column under casts that map
/// distinct values to distinct values (dictionary to its values, widening integers,
/// string and binary containers, fixed-size to variable binary), with the literal brought
/// back to the column's value type.
fn preimage<'a>(value: &'a BoundExpr, literal: &ArrayRef) -> Preimage<'a> {
    let Some(column) = peel_injective_casts(value) else { return Preimage::Unknown };
    let value_type = match &column.data_type {
        DataType::Dictionary(_, values) => values.as_ref(),
        other => other,
    };
    if literal.data_type() == value_type {
        return Preimage::Value(column, literal.clone());
    }
    // Lenient casts: a value out of the narrower type's range becomes null.
    let lenient = CastOptions::default();
    let (Ok(narrowed), true) = (cast_with_options(literal, value_type, &lenient), literal.null_count() == 0) else {
        return Preimage::Unknown;
    };
    match cast_with_options(&narrowed, literal.data_type(), &lenient) {
        Ok(back) if narrowed.null_count() == 0 && back.to_data() == literal.to_data() => {
            Preimage::Value(column, narrowed)
        }
        Ok(_) => Preimage::Impossible,
        Err(_) => Preimage::Unknown,
    }
}

/// The column under a chain of injective casts, `None` for anything else.
fn peel_injective_casts(value: &BoundExpr) -> Option<&BoundColumn> {
    match value {
        BoundExpr::Column(column) => Some(column),
        BoundExpr::Cast { expr, to, .. } => {
            let from = expr.data_type();
            let from = match &from {
                DataType::Dictionary(_, values) => values.as_ref(),
                other => other,
            };
            let injective = is_order_preserving_widening(from, to)
                || matches!((from, to), (DataType::FixedSizeBinary(_), DataType::Binary | DataType::LargeBinary));
            if injective { peel_injective_casts(expr) } else { None }
        }
        _ => None,
    }
}

fn key(column: &BoundColumn) -> String {
    column.path.to_string()
}

/// Literals whose equality is their bit pattern (not floats 0.0 / NaN).
fn usable(literal: &ArrayRef) -> bool {
    match literal.data_type() {
        DataType::Float32 => {
            let v = literal.as_primitive::<Float32Type>().value(0);
            !(v.is_nan() || v == 0.0)
        }
        DataType::Float64 => {
            let v = literal.as_primitive::<Float64Type>().value(0);
            !(v.is_nan() || v == 0.0)
        }
        DataType::Float16 => false,
        _ => true,
    }
}

fn same(a: &ArrayRef, b: &ArrayRef) -> bool {
    a.to_data() == b.to_data()
}

/// Lists longer than this are handled as sets (sorting), shorter ones pairwise.
const SHORT_LIST: usize = 8;

/// `values` without repeats (one-element arrays of one type).
fn distinct(values: Vec<ArrayRef>) -> Vec<ArrayRef> {
    if values.len() <= SHORT_LIST {
        let mut kept: Vec<ArrayRef> = Vec::with_capacity(values.len());
        for value in values {
            if !kept.iter().any(|v| same(v, &value)) {
                kept.push(value);
            }
        }
        return kept;
    }
    // Shared: planning derives the guarantees of one bound filter once per file and stage.
    match InSet::shared(&values) {
        Ok(set) => set.value_items().to_vec(),
        Err(_) => values,
    }
}

/// The values of `left` that are in `right`.
fn intersection(left: Vec<ArrayRef>, right: &[ArrayRef]) -> Vec<ArrayRef> {
    if left.len() <= SHORT_LIST && right.len() <= SHORT_LIST {
        return left.into_iter().filter(|v| right.iter().any(|w| same(v, w))).collect();
    }
    let Ok(set) = InSet::new(right) else { return left };
    let refs: Vec<&dyn Array> = left.iter().map(|v| v.as_ref()).collect();
    let Ok(all) = arrow::compute::concat(&refs) else { return left };
    let Ok(found) = set.contains(&all) else { return left };
    left.into_iter().zip(found.iter()).filter(|(_, found)| *found == Some(true)).map(|(v, _)| v).collect()
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{BindOptions, bind, parse_filter};
    use arrow::datatypes::{Field, Schema};

    fn guarantees(text: &str, data_type: DataType) -> Vec<LiteralGuarantee> {
        let schema = Schema::new(vec![Field::new("c", data_type, true)]);
        literal_guarantees(&bind(&parse_filter(text).unwrap(), &schema, &BindOptions::default()).unwrap())
    }

    #[test]
    fn guarantees_see_through_casts_that_keep_values_distinct() {
        let dictionary = |values: DataType| DataType::Dictionary(Box::new(DataType::Int32), Box::new(values));
        // Dictionary columns are compared through a cast to their values.
        let found = guarantees("c = 'x'", dictionary(DataType::LargeUtf8));
        assert_eq!(found[0].values[0].data_type(), &DataType::LargeUtf8);
        let found = guarantees("c IN (1, 3000000000)", dictionary(DataType::UInt32));
        assert_eq!(found[0].values.len(), 2);
        assert_eq!(found[0].values[1].data_type(), &DataType::UInt32);
        // A value out of the column's range or width equals no row: dropped from the set.
        let found = guarantees("c IN (1, 3000000000)", dictionary(DataType::Int32));
        assert_eq!(found[0].values.len(), 1);
        let found = guarantees("c IN (X'0102', X'01')", DataType::FixedSizeBinary(2));
        assert_eq!(found[0].values.len(), 1);
        assert_eq!(found[0].values[0].data_type(), &DataType::FixedSizeBinary(2));
        // Truncating casts give no guarantee: many nanosecond values share a microsecond.
        let nanos = DataType::Timestamp(arrow::datatypes::TimeUnit::Nanosecond, Some("UTC".into()));
        assert!(guarantees("c = TIMESTAMP '2024-01-01 00:00:00'", nanos).is_empty());
    }
}
