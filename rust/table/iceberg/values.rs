//! Values in manifests as Arrow arrays: partition tuples (Avro values) and column bounds
//! (Iceberg's binary single-value serialization: little-endian numbers, UTF-8 strings,
//! big-endian two's-complement decimals and UUIDs).
//!
//! A bound written for a narrower type than the column's now (a column promoted from
//! `int` to `long`, `float` to `double`) is read by its length.
//!
//! ```
//! use arrow::array::AsArray;
//! use arrow::datatypes::{DataType, Int64Type};
//! use pqsift::table::iceberg::values::bound_array;
//! let four = 7i32.to_le_bytes();
//! let eight = (-2i64).to_le_bytes();
//! let bounds = bound_array(&[Some(&four[..]), Some(&eight[..]), None], &DataType::Int64);
//! assert_eq!(bounds.as_primitive::<Int64Type>().values(), &[7, -2, 0]);
//! assert!(bounds.is_null(2));
//! ```

use std::sync::Arc;

use apache_avro::types::Value;
use arrow::array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray, Float32Array,
    Float64Array, Int32Array, Int64Array, StringArray, Time64MicrosecondArray, TimestampMicrosecondArray,
    TimestampNanosecondArray, new_null_array,
};
use arrow::datatypes::{DataType, Field, TimeUnit};

use super::schema::{is_uuid, stored_type};
use crate::filter::uuid_text::uuid_text;

/// One scalar of a manifest, before it is typed.
enum Scalar<'a> {
    Bool(bool),
    Int(i64),
    Float(f64),
    Decimal(i128),
    Bytes(&'a [u8]),
}

/// Bounds of the column `field`, one per container, in its declared type (see
/// [`as_declared`]); a bound that does not decode is null.
pub fn field_bound_array(bounds: &[Option<&[u8]>], field: &Field) -> ArrayRef {
    as_declared(bound_array(bounds, &stored_type(field)), field)
}

/// Values of `field` decoded as the type Iceberg stores them in
/// ([`stored_type`]), as the field's declared type: a uuid's 16 bytes as its text.
pub fn as_declared(values: ArrayRef, field: &Field) -> ArrayRef {
    match is_uuid(field) {
        true => uuid_text(&values),
        false => values,
    }
}

/// Bounds (or summary bounds) of a column of type `data_type`, one per container; a bound
/// that does not decode is null (unknown).
pub fn bound_array(bounds: &[Option<&[u8]>], data_type: &DataType) -> ArrayRef {
    let scalars: Vec<Option<Scalar>> = bounds.iter().map(|b| b.and_then(|b| decode_bound(b, data_type))).collect();
    typed(&scalars, data_type)
}

fn decode_bound<'a>(bytes: &'a [u8], data_type: &DataType) -> Option<Scalar<'a>> {
    let int = |bytes: &[u8]| match bytes.len() {
        4 => Some(i64::from(i32::from_le_bytes(bytes.try_into().ok()?))),
        8 => Some(i64::from_le_bytes(bytes.try_into().ok()?)),
        _ => None,
    };
    match data_type {
        DataType::Boolean => bytes.first().map(|b| Scalar::Bool(*b != 0)),
        DataType::Int32 | DataType::Int64 | DataType::Date32 | DataType::Time64(_) | DataType::Timestamp(_, _) => {
            int(bytes).map(Scalar::Int)
        }
        DataType::Float32 | DataType::Float64 => match bytes.len() {
            4 => Some(Scalar::Float(f64::from(f32::from_le_bytes(bytes.try_into().ok()?)))),
            8 => Some(Scalar::Float(f64::from_le_bytes(bytes.try_into().ok()?))),
            _ => None,
        },
        DataType::Decimal128(_, _) => big_endian(bytes).map(Scalar::Decimal),
        DataType::Utf8 | DataType::Binary | DataType::FixedSizeBinary(_) => Some(Scalar::Bytes(bytes)),
        _ => None,
    }
}

/// A big-endian two's-complement integer of at most 16 bytes.
fn big_endian(bytes: &[u8]) -> Option<i128> {
    if bytes.is_empty() || bytes.len() > 16 {
        return None;
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut full = [fill; 16];
    full[16 - bytes.len()..].copy_from_slice(bytes);
    Some(i128::from_be_bytes(full))
}

/// A partition field's values (Avro values of the manifests) as an array of `data_type`.
pub fn partition_array(values: &[Option<&Value>], data_type: &DataType) -> ArrayRef {
    let scalars: Vec<Option<Scalar>> = values.iter().map(|v| v.and_then(avro_scalar)).collect();
    typed(&scalars, data_type)
}

fn avro_scalar(value: &Value) -> Option<Scalar<'_>> {
    Some(match super::avro::unwrapped(value) {
        Value::Boolean(b) => Scalar::Bool(*b),
        Value::Int(v) | Value::Date(v) | Value::TimeMillis(v) => Scalar::Int(i64::from(*v)),
        Value::Long(v)
        | Value::TimeMicros(v)
        | Value::TimestampMillis(v)
        | Value::TimestampMicros(v)
        | Value::TimestampNanos(v)
        | Value::LocalTimestampMillis(v)
        | Value::LocalTimestampMicros(v)
        | Value::LocalTimestampNanos(v) => Scalar::Int(*v),
        Value::Float(v) => Scalar::Float(f64::from(*v)),
        Value::Double(v) => Scalar::Float(*v),
        Value::String(s) => Scalar::Bytes(s.as_bytes()),
        Value::Bytes(b) | Value::Fixed(_, b) => Scalar::Bytes(b),
        Value::Decimal(d) => Scalar::Decimal(big_endian(&Vec::<u8>::try_from(d).ok()?)?),
        Value::Uuid(u) => Scalar::Bytes(u.as_bytes()),
        _ => return None,
    })
}

fn typed(scalars: &[Option<Scalar>], data_type: &DataType) -> ArrayRef {
    let ints = || {
        scalars.iter().map(|s| match s {
            Some(Scalar::Int(v)) => Some(*v),
            _ => None,
        })
    };
    let bytes = || {
        scalars.iter().map(|s| match s {
            Some(Scalar::Bytes(b)) => Some(*b),
            _ => None,
        })
    };
    match data_type {
        DataType::Boolean => Arc::new(
            scalars
                .iter()
                .map(|s| match s {
                    Some(Scalar::Bool(b)) => Some(*b),
                    _ => None,
                })
                .collect::<BooleanArray>(),
        ),
        DataType::Int32 => Arc::new(ints().map(|v| v.and_then(|v| i32::try_from(v).ok())).collect::<Int32Array>()),
        DataType::Int64 => Arc::new(ints().collect::<Int64Array>()),
        DataType::Date32 => Arc::new(ints().map(|v| v.and_then(|v| i32::try_from(v).ok())).collect::<Date32Array>()),
        DataType::Time64(TimeUnit::Microsecond) => Arc::new(ints().collect::<Time64MicrosecondArray>()),
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            Arc::new(ints().collect::<TimestampMicrosecondArray>().with_data_type(data_type.clone()))
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            Arc::new(ints().collect::<TimestampNanosecondArray>().with_data_type(data_type.clone()))
        }
        DataType::Float32 | DataType::Float64 => {
            let floats = scalars.iter().map(|s| match s {
                Some(Scalar::Float(v)) => Some(*v),
                _ => None,
            });
            match data_type {
                DataType::Float32 => Arc::new(floats.map(|v| v.map(|v| v as f32)).collect::<Float32Array>()),
                _ => Arc::new(floats.collect::<Float64Array>()),
            }
        }
        DataType::Decimal128(precision, scale) => {
            let decimals: Decimal128Array = scalars
                .iter()
                .map(|s| match s {
                    Some(Scalar::Decimal(v)) => Some(*v),
                    // A decimal partition value read as its bytes.
                    Some(Scalar::Bytes(b)) => big_endian(b),
                    _ => None,
                })
                .collect();
            match decimals.with_precision_and_scale(*precision, *scale) {
                Ok(decimals) => Arc::new(decimals),
                Err(_) => new_null_array(data_type, scalars.len()),
            }
        }
        // A string that is not UTF-8 (a damaged bound) is unknown.
        DataType::Utf8 => {
            Arc::new(bytes().map(|b| b.and_then(|b| std::str::from_utf8(b).ok())).collect::<StringArray>())
        }
        DataType::Binary => Arc::new(bytes().collect::<BinaryArray>()),
        DataType::FixedSizeBinary(size) => {
            let sized: Vec<Option<&[u8]>> = bytes().map(|b| b.filter(|b| b.len() == *size as usize)).collect();
            match FixedSizeBinaryArray::try_from_sparse_iter_with_size(sized.into_iter(), *size) {
                Ok(array) => Arc::new(array),
                Err(_) => new_null_array(data_type, scalars.len()),
            }
        }
        _ => new_null_array(data_type, scalars.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Decimal128Type, Float64Type};

    #[test]
    fn bounds_decode_by_type_and_length() {
        let d = bound_array(&[Some(&[0xff, 0x85][..]), Some(&[0x01, 0x00][..])], &DataType::Decimal128(9, 2));
        assert_eq!(d.as_primitive::<Decimal128Type>().values(), &[-123, 256]);
        let f = bound_array(&[Some(&1.5f32.to_le_bytes()[..]), Some(&[1, 2, 3][..])], &DataType::Float64);
        assert_eq!(f.as_primitive::<Float64Type>().value(0), 1.5);
        assert!(f.is_null(1));
        let s = bound_array(&[Some(&b"abc"[..]), Some(&[0xff][..])], &DataType::Utf8);
        assert_eq!(s.as_string::<i32>().value(0), "abc");
        assert!(s.is_null(1));
    }

    #[test]
    fn partition_values_come_from_avro_values() {
        let values = [Value::Union(1, Box::new(Value::Int(42))), Value::Null];
        let refs: Vec<Option<&Value>> = values.iter().map(Some).collect();
        let ints = partition_array(&refs, &DataType::Int64);
        assert_eq!(ints.as_primitive::<arrow::datatypes::Int64Type>().value(0), 42);
        assert!(ints.is_null(1));
    }
}
