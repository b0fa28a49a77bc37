//! Partition transforms, read backwards for pruning (Iceberg's *inclusive projection*): a
//! file's partition value — or a manifest's summary of them — says which source values
//! its rows can hold.
//!
//! * Order-preserving transforms (identity, `truncate[W]`, `year`, `month`, `day`,
//!   `hour`) give each partition value a range of source values; a range of partition
//!   values gives the range from the first one's start to the last one's end. They become
//!   bounds of the source column, pruned on as any zone map is.
//! * `bucket[N]` keeps no order: a filter that pins the column to a few values (`=`, `IN`)
//!   keeps only the files whose bucket is one of those values' buckets.
//!
//! Ranges are widened where writers have disagreed: temporal partitions at or before
//! 1970 take in the unit before them too (early writers truncated towards zero rather
//! than flooring).
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{ArrayRef, AsArray, Int64Array};
//! use arrow::datatypes::{DataType, Date32Type};
//! use pqsift::table::iceberg::transforms::{Transform, source_bounds};
//! // Month 649 is 2024-02: days 19754 (Feb 1st) to 19782 (Feb 29th).
//! let month: ArrayRef = Arc::new(Int64Array::from(vec![649]));
//! let (from, to) = source_bounds(Transform::Month, &month, &month, &DataType::Date32).unwrap();
//! assert_eq!(from.as_primitive::<Date32Type>().value(0), 19754);
//! assert_eq!(to.as_primitive::<Date32Type>().value(0), 19782);
//! assert_eq!(Transform::parse("bucket[16]"), Transform::Bucket(16));
//! ```

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, Date32Array, Decimal128Array, Int32Array, Int64Array, StringArray,
    TimestampMicrosecondArray, TimestampNanosecondArray,
};
use arrow::datatypes::{DataType, Decimal128Type, Int64Type, TimeUnit};
use chrono::NaiveDate;

use crate::pruning::pruning_predicate::next_prefix;

/// A partition field's transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transform {
    /// The source value.
    Identity,
    /// `bucket[N]`: a 32-bit Murmur3 hash of the value, modulo N.
    Bucket(u32),
    /// `truncate[W]`: numbers floored to a multiple of W, strings cut to W characters.
    Truncate(u32),
    /// Years since 1970.
    Year,
    /// Months since 1970-01.
    Month,
    /// Days since 1970-01-01.
    Day,
    /// Hours since 1970-01-01 00:00.
    Hour,
    /// Always null (a dropped partition field), or a transform pqsift does not know.
    Opaque,
}

impl Transform {
    /// The transform a spec names (`identity`, `bucket[16]`, `truncate[4]`, `day`, ...).
    pub fn parse(text: &str) -> Self {
        let argument = |name: &str| {
            text.strip_prefix(name)?.strip_prefix('[')?.strip_suffix(']')?.trim().parse::<u32>().ok().filter(|n| *n > 0)
        };
        match text {
            "identity" => Self::Identity,
            "year" => Self::Year,
            "month" => Self::Month,
            "day" => Self::Day,
            "hour" => Self::Hour,
            _ => match (argument("bucket"), argument("truncate")) {
                (Some(n), _) => Self::Bucket(n),
                (_, Some(w)) => Self::Truncate(w),
                _ => Self::Opaque,
            },
        }
    }

    /// Whether partition values keep the order of source values (and so bound them).
    pub fn preserves_order(self) -> bool {
        !matches!(self, Self::Bucket(_) | Self::Opaque)
    }

    /// The type a partition value of a `source` column is read as for pruning: the source
    /// type for identity and truncate, a (wide) integer for the others.
    pub fn result_type(self, source: &DataType) -> DataType {
        match self {
            Self::Identity | Self::Truncate(_) => source.clone(),
            _ => DataType::Int64,
        }
    }
}

/// Per container, the least and the greatest source value (of type `source`) a partition
/// value from `lower[i]` to `upper[i]` (read as [`Transform::result_type`]) can come from:
/// inclusive, and as wide as writers' differences need. Null where unknown (a null
/// partition value, an overflow); `None` for a transform or type without ranges.
pub fn source_bounds(
    transform: Transform,
    lower: &ArrayRef,
    upper: &ArrayRef,
    source: &DataType,
) -> Option<(ArrayRef, ArrayRef)> {
    match transform {
        Transform::Identity => Some((Arc::clone(lower), Arc::clone(upper))),
        Transform::Truncate(width) => truncated_bounds(width, lower, upper, source),
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour => {
            let ticks = |partition: &ArrayRef, end: bool| -> Vec<Option<i64>> {
                let partition = partition.as_primitive_opt::<Int64Type>().map(|p| p.iter().collect::<Vec<_>>());
                partition.unwrap_or_default().into_iter().map(|p| temporal_bound(transform, p?, end, source)).collect()
            };
            let (from, to) = (ticks(lower, false), ticks(upper, true));
            if from.len() != lower.len() || to.len() != upper.len() {
                return None;
            }
            Some((ticks_array(from, source)?, ticks_array(to, source)?))
        }
        Transform::Bucket(_) | Transform::Opaque => None,
    }
}

/// The first (or with `end`, the last) tick of type `source` in temporal partition `p`.
fn temporal_bound(transform: Transform, p: i64, end: bool, source: &DataType) -> Option<i64> {
    const DAY_US: i64 = 86_400_000_000;
    const HOUR_US: i64 = 3_600_000_000;
    // Where a partition starts, in the source's ticks.
    let start = |p: i64| -> Option<i64> {
        let days = match transform {
            Transform::Year => days_since_epoch(1970i64.checked_add(p)?, 1)?,
            Transform::Month => days_since_epoch(1970i64.checked_add(p.div_euclid(12))?, p.rem_euclid(12) as u32 + 1)?,
            Transform::Day => p,
            // Hours exist only in timestamps.
            _ => {
                let micros = p.checked_mul(HOUR_US)?;
                return match source {
                    DataType::Timestamp(TimeUnit::Microsecond, _) => Some(micros),
                    DataType::Timestamp(TimeUnit::Nanosecond, _) => micros.checked_mul(1000),
                    _ => None,
                };
            }
        };
        match source {
            DataType::Date32 => Some(days),
            DataType::Timestamp(TimeUnit::Microsecond, _) => days.checked_mul(DAY_US),
            DataType::Timestamp(TimeUnit::Nanosecond, _) => days.checked_mul(DAY_US)?.checked_mul(1000),
            _ => None,
        }
    };
    if end {
        start(p.checked_add(1)?)?.checked_sub(1)
    } else if p <= 0 {
        // Writers that truncated towards zero put (p - 1, p] here.
        start(p.checked_sub(1)?)
    } else {
        start(p)
    }
}

/// Days from 1970-01-01 to the first of `month` of `year`.
fn days_since_epoch(year: i64, month: u32) -> Option<i64> {
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, 1)?;
    Some(date.signed_duration_since(NaiveDate::from_ymd_opt(1970, 1, 1)?).num_days())
}

fn ticks_array(ticks: Vec<Option<i64>>, source: &DataType) -> Option<ArrayRef> {
    Some(match source {
        DataType::Date32 => {
            Arc::new(ticks.into_iter().map(|t| t.and_then(|t| i32::try_from(t).ok())).collect::<Date32Array>())
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            Arc::new(TimestampMicrosecondArray::from(ticks).with_data_type(source.clone()))
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            Arc::new(TimestampNanosecondArray::from(ticks).with_data_type(source.clone()))
        }
        _ => return None,
    })
}

/// `truncate[W]` ranges: a number `p` stands for `p ..= p + W - 1`; a string or binary
/// prefix for every value starting with it (up to the prefix with its last character
/// incremented, an inexact greatest value).
fn truncated_bounds(width: u32, lower: &ArrayRef, upper: &ArrayRef, source: &DataType) -> Option<(ArrayRef, ArrayRef)> {
    let width = i64::from(width);
    let upper: ArrayRef = match source {
        DataType::Int32 => {
            let ends = upper
                .as_primitive_opt::<arrow::datatypes::Int32Type>()?
                .iter()
                .map(|p| p.map(|p| i32::try_from(i64::from(p).saturating_add(width - 1)).unwrap_or(i32::MAX)));
            Arc::new(ends.collect::<Int32Array>())
        }
        DataType::Int64 => Arc::new(
            upper
                .as_primitive_opt::<Int64Type>()?
                .iter()
                .map(|p| p.map(|p| p.saturating_add(width - 1)))
                .collect::<Int64Array>(),
        ),
        DataType::Decimal128(precision, scale) => {
            let ends = upper
                .as_primitive_opt::<Decimal128Type>()?
                .iter()
                .map(|p| p.map(|p| p.saturating_add(i128::from(width) - 1)));
            Arc::new(ends.collect::<Decimal128Array>().with_precision_and_scale(*precision, *scale).ok()?)
        }
        DataType::Utf8 => {
            Arc::new(upper.as_string_opt::<i32>()?.iter().map(|p| p.and_then(next_prefix)).collect::<StringArray>())
        }
        DataType::Binary => Arc::new(
            upper.as_binary_opt::<i32>()?.iter().map(|p| p.and_then(next_byte_prefix)).collect::<BinaryArray>(),
        ),
        _ => return None,
    };
    Some((Arc::clone(lower), upper))
}

/// The least byte string greater than every one starting with `prefix`.
fn next_byte_prefix(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut bytes = prefix.to_vec();
    while let Some(last) = bytes.pop() {
        if last < u8::MAX {
            bytes.push(last + 1);
            return Some(bytes);
        }
    }
    None
}

/// The bucket (of `count`) of the value at `index` of `values`, as Iceberg computes it:
/// Murmur3 (x86, 32 bits, seed 0) of the value's bytes — integers, dates, times and
/// timestamps as 8 little-endian bytes of their long value, strings as UTF-8, decimals as
/// the unscaled value's shortest big-endian two's complement — its sign bit cleared,
/// modulo `count`. `None` for a null or a type Iceberg does not bucket this way.
pub fn bucket_of(values: &dyn Array, index: usize, count: u32) -> Option<i64> {
    if values.is_null(index) || count == 0 {
        return None;
    }
    let long = |v: i64| murmur(&v.to_le_bytes());
    let hash = match values.data_type() {
        DataType::Int32 => long(i64::from(values.as_primitive_opt::<arrow::datatypes::Int32Type>()?.value(index))),
        DataType::Int64 => long(values.as_primitive_opt::<Int64Type>()?.value(index)),
        DataType::Date32 => long(i64::from(values.as_primitive_opt::<arrow::datatypes::Date32Type>()?.value(index))),
        DataType::Time64(TimeUnit::Microsecond) => {
            long(values.as_primitive_opt::<arrow::datatypes::Time64MicrosecondType>()?.value(index))
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            long(values.as_primitive_opt::<arrow::datatypes::TimestampMicrosecondType>()?.value(index))
        }
        DataType::Utf8 => murmur(values.as_string_opt::<i32>()?.value(index).as_bytes()),
        DataType::LargeUtf8 => murmur(values.as_string_opt::<i64>()?.value(index).as_bytes()),
        DataType::Binary => murmur(values.as_binary_opt::<i32>()?.value(index)),
        DataType::LargeBinary => murmur(values.as_binary_opt::<i64>()?.value(index)),
        DataType::FixedSizeBinary(_) => murmur(values.as_fixed_size_binary_opt()?.value(index)),
        DataType::Decimal128(_, _) => {
            murmur(&shortest_big_endian(values.as_primitive_opt::<Decimal128Type>()?.value(index)))
        }
        _ => return None,
    }?;
    Some(i64::from(hash & i32::MAX as u32) % i64::from(count))
}

fn murmur(bytes: &[u8]) -> Option<u32> {
    murmur3::murmur3_32(&mut std::io::Cursor::new(bytes), 0).ok()
}

/// The shortest big-endian two's complement bytes of `value` (Java's
/// `BigInteger.toByteArray`).
fn shortest_big_endian(value: i128) -> Vec<u8> {
    let bytes = value.to_be_bytes();
    let mut start = 0;
    // A leading byte is redundant when it only repeats the next byte's sign bit.
    while start < 15 {
        let (lead, next) = (bytes[start], bytes[start + 1]);
        if (lead == 0 && next & 0x80 == 0) || (lead == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    bytes[start..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{FixedSizeBinaryArray, StringArray};
    use arrow::datatypes::{Int32Type, TimestampMicrosecondType};

    /// The spec's own test vectors (its appendix on 32-bit hash requirements).
    #[test]
    fn bucket_hashes_match_the_spec() {
        let hash = |values: &dyn Array| bucket_of(values, 0, i32::MAX as u32).unwrap();
        // The spec lists signed hashes; the bucket clears the sign bit.
        let spec = |h: i32| i64::from(h as u32 & i32::MAX as u32) % i64::from(i32::MAX);
        assert_eq!(hash(&Int32Array::from(vec![34])), spec(2017239379));
        assert_eq!(hash(&Int64Array::from(vec![34])), spec(2017239379));
        let decimal = Decimal128Array::from(vec![1420]).with_precision_and_scale(9, 2).unwrap(); // 14.20
        assert_eq!(hash(&decimal), spec(-500754589));
        assert_eq!(hash(&Date32Array::from(vec![17486])), spec(-653330422)); // 2017-11-16
        let time = arrow::array::Time64MicrosecondArray::from(vec![81068000000]); // 22:31:08
        assert_eq!(hash(&time), spec(-662762989));
        let ts = TimestampMicrosecondArray::from(vec![1510871468000000]); // 2017-11-16T22:31:08
        assert_eq!(hash(&ts), spec(-2047944441));
        assert_eq!(hash(&StringArray::from(vec!["iceberg"])), spec(1210000089));
        let uuid: [u8; 16] =
            [0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7];
        let uuid = FixedSizeBinaryArray::try_from_iter(std::iter::once(uuid)).unwrap();
        assert_eq!(hash(&uuid), spec(1488055340));
        assert_eq!(hash(&BinaryArray::from(vec![&[0u8, 1, 2, 3][..]])), spec(-188683207));
        assert_eq!(bucket_of(&Int32Array::from(vec![34]), 0, 16), Some(2017239379 % 16));
        assert_eq!(bucket_of(&Int32Array::from(vec![None]), 0, 16), None);
    }

    #[test]
    fn shortest_big_endian_is_javas() {
        assert_eq!(shortest_big_endian(1420), vec![0x05, 0x8c]);
        assert_eq!(shortest_big_endian(0), vec![0]);
        assert_eq!(shortest_big_endian(-1), vec![0xff]);
        assert_eq!(shortest_big_endian(128), vec![0x00, 0x80]);
        assert_eq!(shortest_big_endian(-129), vec![0xff, 0x7f]);
    }

    #[test]
    fn temporal_partitions_bound_their_source_values() {
        let p = |v: i64| -> ArrayRef { Arc::new(Int64Array::from(vec![v])) };
        let us = DataType::Timestamp(TimeUnit::Microsecond, None);
        let bounds = |t: Transform, v: i64, source: &DataType| {
            let (from, to) = source_bounds(t, &p(v), &p(v), source).unwrap();
            let value = |a: &ArrayRef| match source {
                DataType::Date32 => i64::from(a.as_primitive::<arrow::datatypes::Date32Type>().value(0)),
                _ => a.as_primitive::<TimestampMicrosecondType>().value(0),
            };
            (value(&from), value(&to))
        };
        assert_eq!(bounds(Transform::Day, 19000, &DataType::Date32), (19000, 19000));
        assert_eq!(bounds(Transform::Year, 54, &DataType::Date32), (19723, 20088)); // 2024
        assert_eq!(bounds(Transform::Hour, 10, &us), (36_000_000_000, 39_600_000_000 - 1));
        // At or before 1970, the unit before is taken in.
        assert_eq!(bounds(Transform::Day, 0, &DataType::Date32), (-1, 0));
        assert_eq!(bounds(Transform::Month, -1, &DataType::Date32), (-61, -1)); // 1969-11-01 ..= 1969-12-31
        assert!(source_bounds(Transform::Hour, &p(1), &p(1), &DataType::Date32).unwrap().0.is_null(0));
        assert!(source_bounds(Transform::Year, &p(i64::MAX), &p(i64::MAX), &us).unwrap().1.is_null(0));
    }

    #[test]
    fn truncated_partitions_bound_their_source_values() {
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(-10), Some(i32::MAX - 3), None]));
        let (from, to) = source_bounds(Transform::Truncate(10), &ints, &ints, &DataType::Int32).unwrap();
        assert_eq!(from.as_primitive::<Int32Type>().value(0), -10);
        assert_eq!(to.as_primitive::<Int32Type>().values(), &[-1, i32::MAX, 0]);
        assert!(to.is_null(2));
        let strings: ArrayRef = Arc::new(StringArray::from(vec!["ab", "\u{10FFFF}"]));
        let (_, to) = source_bounds(Transform::Truncate(2), &strings, &strings, &DataType::Utf8).unwrap();
        assert_eq!(to.as_string::<i32>().value(0), "ac");
        assert!(to.is_null(1), "no string is greater than every one starting with U+10FFFF");
        assert_eq!(next_byte_prefix(&[1, 0xff]), Some(vec![2]));
        assert_eq!(Transform::parse("truncate[0]"), Transform::Opaque);
        assert_eq!(Transform::parse("void"), Transform::Opaque);
    }
}
