//! Spark's ANSI `CAST` on Arrow arrays: the conversions binding inserts for coercion and
//! the ones `CAST(x AS type)` asks for.
//!
//! Numeric conversions use Arrow's cast kernel in its checked mode (an out-of-range value
//! is an error, as Spark's `CAST_OVERFLOW`; floats truncate toward zero; decimals round half
//! up). Strings are read with Spark's rules ([`spark_cast`](super::spark_cast)), an
//! unparsable one is an error (Spark's `CAST_INVALID_INPUT`). DATE and the two timestamp
//! kinds convert through the session time zone. Casting FLOAT, DOUBLE, TIMESTAMP or BINARY
//! to STRING is not supported: Spark's text for them differs from Arrow's.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
    Int8Array, Int16Array, Int32Array, Int64Array, TimestampMicrosecondArray,
};
use arrow::compute::kernels::cast::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, TimeUnit};

use super::SqlType;
use super::literal::WallClock;
use super::spark_cast::{
    parse_boolean, parse_date, parse_decimal_text, parse_double, parse_float, parse_long, parse_timestamp_text,
};
use super::sql_type::UTC;
use crate::{PqsiftError, Result};

const MICROS_PER_DAY: i64 = 86_400_000_000;
const MICROS_PER_SECOND: i64 = 1_000_000;

/// Whether Spark (ANSI mode) allows `CAST(from AS to)` and pqsift implements it.
pub(crate) fn can_cast(from: SqlType, to: SqlType) -> bool {
    use SqlType::*;
    match (from, to) {
        _ if from == to => true,
        (Null, _) => true,
        (a, b) if (a.is_numeric() || a == Boolean) && (b.is_numeric() || b == Boolean) => true,
        (String, _) => to != Null,
        (a, String) => a.is_integral() || matches!(a, Decimal { .. } | Boolean | Date),
        (Date, Timestamp | TimestampNtz) => true,
        // Seconds since the epoch (TIMESTAMP only, not TIMESTAMP_NTZ, as in Spark).
        (Timestamp, b) | (b, Timestamp) if b.is_numeric() => true,
        (Timestamp | TimestampNtz, Date | Timestamp | TimestampNtz) => true,
        _ => false,
    }
}

fn checked_options() -> CastOptions<'static> {
    CastOptions { safe: false, ..Default::default() }
}

fn arrow_cast(array: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    cast_with_options(array, to, &checked_options()).map_err(|e| {
        PqsiftError::filter(format!(
            "cannot cast {} to {}: {e} (Spark's ANSI mode raises CAST_OVERFLOW)",
            describe(array.data_type()),
            describe(to)
        ))
    })
}

/// The Spark name of an Arrow type, or the Arrow name when it has none.
pub(crate) fn describe(data_type: &DataType) -> String {
    SqlType::of_arrow(data_type).map_or_else(|| data_type.to_string(), |t| t.to_string())
}

/// [`cast_array`], or with `null_on_error` [`try_cast_array`]: a `CAST` or a `TRY_CAST`.
pub(crate) fn cast_or_try(
    array: &ArrayRef,
    to: &DataType,
    session_time_zone: &str,
    null_on_error: bool,
) -> Result<ArrayRef> {
    match null_on_error {
        true => try_cast_array(array, to, session_time_zone),
        false => cast_array(array, to, session_time_zone),
    }
}

/// `TRY_CAST`: [`cast_array`], with NULL for each value the cast raises for (Spark's
/// `try_cast`). Strings are parsed leniently in one pass; another cast that raises (an
/// overflow) is retried on halves of the array, down to the values that raise.
///
/// ```text
/// try_cast(['1', 'x', NULL] AS INT)   →  [1, NULL, NULL]
/// try_cast([1, 3000000000] AS INT)    →  [1, NULL]    (BIGINT to INT overflows)
/// ```
pub(crate) fn try_cast_array(array: &ArrayRef, to: &DataType, session_time_zone: &str) -> Result<ArrayRef> {
    if let DataType::Dictionary(_, value_type) = array.data_type() {
        let values = arrow_cast(array, value_type)?;
        return try_cast_array(&values, to, session_time_zone);
    }
    if let (Some(SqlType::String), Some(target)) = (SqlType::of_arrow(array.data_type()), SqlType::of_arrow(to))
        && !matches!(target, SqlType::String | SqlType::Binary | SqlType::Null)
    {
        let parsed = parse_strings(array, target, session_time_zone, true)?;
        return arrow_cast(&parsed, to);
    }
    match cast_array(array, to, session_time_zone) {
        Ok(cast) => Ok(cast),
        // (The binder checked the types cast: what raises now is a value.)
        Err(_) if array.len() == 1 => Ok(arrow::array::new_null_array(to, 1)),
        Err(error) if array.is_empty() => Err(error),
        Err(_) => {
            let half = array.len() / 2;
            let head = try_cast_array(&array.slice(0, half), to, session_time_zone)?;
            let tail = try_cast_array(&array.slice(half, array.len() - half), to, session_time_zone)?;
            Ok(arrow::compute::concat(&[head.as_ref(), tail.as_ref()])?)
        }
    }
}

/// Casts `array` to the Arrow type `to` with Spark's ANSI semantics. Timestamps are read in
/// and written for `session_time_zone` where the conversion depends on it.
pub(crate) fn cast_array(array: &ArrayRef, to: &DataType, session_time_zone: &str) -> Result<ArrayRef> {
    if array.data_type() == to {
        return Ok(array.clone());
    }
    // Dictionary-encoded columns are compared by value.
    if let DataType::Dictionary(_, value_type) = array.data_type() {
        let values = arrow_cast(array, value_type)?;
        return cast_array(&values, to, session_time_zone);
    }
    let unsupported = || {
        PqsiftError::filter(format!("CAST from {} to {} is not supported", describe(array.data_type()), describe(to)))
    };
    let from_type = SqlType::of_arrow(array.data_type()).ok_or_else(unsupported)?;
    let to_type = SqlType::of_arrow(to).ok_or_else(unsupported)?;
    if !can_cast(from_type, to_type) {
        return Err(unsupported());
    }
    use SqlType::*;
    match (from_type, to_type) {
        (Null, _) => Ok(arrow::array::new_null_array(to, array.len())),
        (String, String) => arrow_cast(array, to),
        (String, Binary) => {
            let utf8 = arrow_cast(array, &DataType::Utf8)?;
            let bytes = arrow_cast(&utf8, &DataType::Binary)?;
            arrow_cast(&bytes, to)
        }
        (String, _) => {
            let parsed = parse_strings(array, to_type, session_time_zone, false)?;
            arrow_cast(&parsed, to)
        }
        (Date, Timestamp) => {
            let clock = WallClock::new(session_time_zone)?;
            let days = arrow_cast(array, &DataType::Date32)?;
            let micros: TimestampMicrosecondArray = days
                .as_primitive::<arrow::datatypes::Date32Type>()
                .try_unary(|day| -> std::result::Result<i64, arrow::error::ArrowError> {
                    i64::from(day)
                        .checked_mul(86_400_000_000)
                        .and_then(|midnight| clock.instant_micros(midnight))
                        .ok_or_else(|| arrow::error::ArrowError::ComputeError(format!("date {day} out of range")))
                })
                .map_err(|e| PqsiftError::filter(format!("cannot cast DATE to TIMESTAMP: {e}")))?;
            arrow_cast(&(Arc::new(micros.with_timezone(UTC)) as ArrayRef), to)
        }
        (Timestamp, Date | TimestampNtz) | (TimestampNtz, Timestamp) => {
            let micros = arrow_cast(&in_micros(array)?, &SqlType::TimestampNtz.to_arrow())?;
            let micros = micros.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
            let out_of_range =
                |value: i64| arrow::error::ArrowError::ComputeError(format!("timestamp {value} out of range"));
            let clock = WallClock::new(session_time_zone)?;
            let shifted: TimestampMicrosecondArray = if from_type == TimestampNtz {
                // Wall clock in the session zone → instant.
                micros.try_unary(|value| clock.instant_micros(value).ok_or_else(|| out_of_range(value)))
            } else {
                micros.try_unary(|value| clock.local_micros(value).ok_or_else(|| out_of_range(value)))
            }
            .map_err(|e| PqsiftError::filter(format!("cannot convert timestamp: {e}")))?;
            let shifted: ArrayRef = Arc::new(shifted);
            match to_type {
                Date => ntz_to_date(&shifted),
                Timestamp => arrow_cast(
                    &(Arc::new(
                        shifted.as_primitive::<arrow::datatypes::TimestampMicrosecondType>().clone().with_timezone(UTC),
                    ) as ArrayRef),
                    to,
                ),
                _ => arrow_cast(&shifted, to),
            }
        }
        (TimestampNtz, Date) => {
            let micros = arrow_cast(&in_micros(array)?, &SqlType::TimestampNtz.to_arrow())?;
            ntz_to_date(&micros)
        }
        (Date, TimestampNtz) => {
            let days = arrow_cast(array, &DataType::Date32)?;
            let micros: TimestampMicrosecondArray =
                days.as_primitive::<arrow::datatypes::Date32Type>().unary(|day| i64::from(day) * MICROS_PER_DAY);
            arrow_cast(&(Arc::new(micros) as ArrayRef), to)
        }
        // Seconds since the epoch, as Spark counts them: floored to whole seconds for an
        // integer (a narrower one raises where they overflow it), exact for a DOUBLE, and a
        // DECIMAL through the DOUBLE.
        (Timestamp, number) if number.is_numeric() => {
            let micros = in_micros(array)?;
            let micros = micros.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
            if number.is_integral() {
                let seconds: Int64Array = micros.unary(|value| value.div_euclid(MICROS_PER_SECOND));
                arrow_cast(&(Arc::new(seconds) as ArrayRef), to)
            } else {
                let seconds: Float64Array = micros.unary(|value| value as f64 / MICROS_PER_SECOND as f64);
                cast_array(&(Arc::new(seconds) as ArrayRef), to, session_time_zone)
            }
        }
        // An instant that many seconds after the epoch: an integer's saturating at the
        // range's ends, a decimal's truncated to the microsecond (its low 64 bits, as Java's
        // `longValue`), a DOUBLE's truncated, raising beyond the range and for NaN (ANSI).
        (number, Timestamp) if number.is_numeric() => {
            let micros: Int64Array = match number {
                Decimal { scale, .. } => {
                    let decimals = arrow_cast(array, &DataType::Decimal128(38, scale))?;
                    let shift = 6 - i32::from(scale);
                    let factor = 10i128.pow(shift.unsigned_abs());
                    decimals.as_primitive::<arrow::datatypes::Decimal128Type>().unary(|unscaled| {
                        let value = if shift >= 0 { unscaled.wrapping_mul(factor) } else { unscaled / factor };
                        value as i64
                    })
                }
                Float | Double => {
                    let doubles = arrow_cast(array, &DataType::Float64)?;
                    doubles
                        .as_primitive::<arrow::datatypes::Float64Type>()
                        .try_unary(|seconds| {
                            // Beyond BIGINT's microseconds (or NaN) raises, as Spark's exact
                            // DOUBLE-to-BIGINT conversion does.
                            let micros = seconds * MICROS_PER_SECOND as f64;
                            match micros.floor() <= i64::MAX as f64 && micros.ceil() >= i64::MIN as f64 {
                                true => Ok(micros as i64),
                                false => Err(arrow::error::ArrowError::ComputeError(format!(
                                    "the value {seconds} cannot be cast to TIMESTAMP (Spark's ANSI mode raises CAST_OVERFLOW)"
                                ))),
                            }
                        })
                        .map_err(|e| PqsiftError::filter(e.to_string()))?
                }
                _ => {
                    let seconds = arrow_cast(array, &DataType::Int64)?;
                    seconds.as_primitive::<arrow::datatypes::Int64Type>().unary(|s| s.saturating_mul(MICROS_PER_SECOND))
                }
            };
            let instants = TimestampMicrosecondArray::new(micros.values().clone(), micros.nulls().cloned());
            arrow_cast(&(Arc::new(instants.with_timezone(UTC)) as ArrayRef), to)
        }
        (Timestamp | TimestampNtz, Timestamp | TimestampNtz) => {
            // Same kind, other unit or zone label: the instant or wall clock is kept.
            match to {
                DataType::Timestamp(TimeUnit::Microsecond, _) => arrow_cast(&in_micros(array)?, to),
                _ => arrow_cast(array, to),
            }
        }
        _ => arrow_cast(array, to),
    }
}

/// A timestamp array in microseconds, Spark's unit, its zone label kept. Nanoseconds are
/// floored to the microsecond holding them, as Spark's instants are (Arrow's cast
/// truncates toward zero, which rounds an instant before 1970 up, and divides by a
/// variable, most of a filter's time on a nanosecond column such as an INT96 one); coarser
/// units are multiplied by Arrow's checked cast.
fn in_micros(array: &ArrayRef) -> Result<ArrayRef> {
    match array.data_type() {
        DataType::Timestamp(TimeUnit::Nanosecond, zone) => {
            let nanos = array.as_primitive::<arrow::datatypes::TimestampNanosecondType>();
            let micros: TimestampMicrosecondArray = nanos.unary(|value| value.div_euclid(1_000));
            Ok(Arc::new(micros.with_timezone_opt(zone.clone())))
        }
        DataType::Timestamp(_, zone) => arrow_cast(array, &DataType::Timestamp(TimeUnit::Microsecond, zone.clone())),
        _ => Ok(array.clone()),
    }
}

/// The local date of TIMESTAMP_NTZ microseconds (floor division, so before 1970 too).
fn ntz_to_date(micros: &ArrayRef) -> Result<ArrayRef> {
    let micros = micros.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
    let days: Date32Array = micros
        .try_unary(|value| -> std::result::Result<i32, arrow::error::ArrowError> {
            i32::try_from(value.div_euclid(MICROS_PER_DAY))
                .map_err(|_| arrow::error::ArrowError::ComputeError("date out of range".into()))
        })
        .map_err(|e| PqsiftError::filter(format!("cannot cast to DATE: {e}")))?;
    Ok(Arc::new(days))
}

/// Reads every string of `array` as a `to` value with Spark's rules, into the canonical
/// Arrow type of `to`. A string that is not a value of the type is an error, or with
/// `lenient` (`TRY_CAST`) NULL.
fn parse_strings(array: &ArrayRef, to: SqlType, session_time_zone: &str, lenient: bool) -> Result<ArrayRef> {
    let utf8 = arrow_cast(array, &DataType::Utf8)?;
    let strings = utf8.as_string::<i32>();
    let invalid = |text: &str| {
        PqsiftError::filter(format!(
            "the value '{text}' of type STRING cannot be cast to {to} (Spark's ANSI mode raises CAST_INVALID_INPUT)"
        ))
    };
    // A value's parse, NULL in place of its error when lenient.
    fn or_null<T>(parsed: Result<Option<T>>, lenient: bool) -> Result<Option<T>> {
        match parsed {
            Err(_) if lenient => Ok(None),
            parsed => parsed,
        }
    }
    // Collects `Option<T>` per row, failing on a non-null string that does not parse.
    macro_rules! parse_each {
        ($array_type:ty, $parse:expr) => {{
            let values = strings
                .iter()
                .map(|text| match text {
                    None => Ok(None),
                    Some(text) => or_null($parse(text).map(Some).ok_or_else(|| invalid(text)), lenient),
                })
                .collect::<Result<Vec<_>>>()?;
            Arc::new(<$array_type>::from(values)) as ArrayRef
        }};
    }
    let in_range = |text: &str, min: i64, max: i64| parse_long(text).filter(|v| (min..=max).contains(v));
    Ok(match to {
        SqlType::Boolean => parse_each!(BooleanArray, parse_boolean),
        SqlType::Byte => parse_each!(Int8Array, |t| in_range(t, i8::MIN.into(), i8::MAX.into()).map(|v| v as i8)),
        SqlType::Short => parse_each!(Int16Array, |t| in_range(t, i16::MIN.into(), i16::MAX.into()).map(|v| v as i16)),
        SqlType::Int => parse_each!(Int32Array, |t| in_range(t, i32::MIN.into(), i32::MAX.into()).map(|v| v as i32)),
        SqlType::Long => parse_each!(Int64Array, parse_long),
        SqlType::Float => parse_each!(Float32Array, parse_float),
        SqlType::Double => parse_each!(Float64Array, parse_double),
        SqlType::Decimal { precision, scale } => {
            let values = strings
                .iter()
                .map(|text| match text {
                    None => Ok(None),
                    Some(text) => {
                        let parsed = parse_decimal_text(text).ok_or_else(|| invalid(text)).and_then(|decimal| {
                            decimal.to_unscaled(precision, scale).map(Some).map_err(|_| {
                                PqsiftError::filter(format!(
                                    "the value '{text}' does not fit {to} (Spark's ANSI mode raises NUMERIC_VALUE_OUT_OF_RANGE)"
                                ))
                            })
                        });
                        or_null(parsed, lenient)
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            let array = Decimal128Array::from(values)
                .with_precision_and_scale(precision, scale)
                .map_err(|e| PqsiftError::filter(e.to_string()))?;
            Arc::new(array) as ArrayRef
        }
        SqlType::Date => parse_each!(Date32Array, parse_date),
        SqlType::Timestamp | SqlType::TimestampNtz => {
            let values = strings
                .iter()
                .map(|text| match text {
                    None => Ok(None),
                    Some(text) => {
                        let parsed =
                            parse_timestamp_text(text).ok_or_else(|| invalid(text)).and_then(|literal| {
                                match to == SqlType::Timestamp {
                                    true => literal.instant_micros(session_time_zone).map(Some),
                                    false => Ok(Some(literal.wall_clock_micros())),
                                }
                            });
                        or_null(parsed, lenient)
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            let array = TimestampMicrosecondArray::from(values);
            if to == SqlType::Timestamp {
                Arc::new(array.with_timezone(UTC)) as ArrayRef
            } else {
                Arc::new(array) as ArrayRef
            }
        }
        SqlType::Binary => Arc::new(BinaryArray::from_iter(strings.iter().map(|s| s.map(str::as_bytes)))) as ArrayRef,
        SqlType::String => utf8.clone(),
        SqlType::Null => return Err(invalid("")),
    })
}

/// Whether casting the Arrow type `from` to `to` keeps every value distinct and in order,
/// so a comparison may run on `from` values against a constant converted exactly to `from`
/// instead (Spark's `UnwrapCastInBinaryComparison`).
pub(crate) fn is_order_preserving_widening(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    let integral_bits = |t: &DataType| match t {
        Int8 => Some((8, true)),
        Int16 => Some((16, true)),
        Int32 => Some((32, true)),
        Int64 => Some((64, true)),
        UInt8 => Some((8, false)),
        UInt16 => Some((16, false)),
        UInt32 => Some((32, false)),
        UInt64 => Some((64, false)),
        _ => None,
    };
    match (from, to) {
        _ if from == to => true,
        (a, b) if integral_bits(a).is_some() && integral_bits(b).is_some() => {
            let ((from_bits, from_signed), (to_bits, to_signed)) =
                (integral_bits(a).unwrap_or_default(), integral_bits(b).unwrap_or_default());
            to_signed && (to_bits > from_bits || (from_signed && to_bits == from_bits))
        }
        (a, Decimal128(p, s)) if integral_bits(a).is_some() => {
            let digits = match integral_bits(a) {
                Some((8, _)) => 3,
                Some((16, _)) => 5,
                Some((32, _)) => 10,
                _ => 20,
            };
            i32::from(*p) - i32::from(*s) >= digits
        }
        (Decimal128(p1, s1) | Decimal32(p1, s1) | Decimal64(p1, s1), Decimal128(p2, s2)) => {
            s2 >= s1 && i32::from(*p2) - i32::from(*s2) >= i32::from(*p1) - i32::from(*s1)
        }
        (Float32, Float64) => true,
        (Utf8 | LargeUtf8 | Utf8View, Utf8) => true,
        (Binary | LargeBinary | BinaryView, Binary) => true,
        (Date64, Date32) => false,
        (Timestamp(from_unit, from_tz), Timestamp(TimeUnit::Microsecond, to_tz)) => {
            from_tz.is_some() == to_tz.is_some()
                && matches!(from_unit, TimeUnit::Second | TimeUnit::Millisecond | TimeUnit::Microsecond)
        }
        _ => false,
    }
}
