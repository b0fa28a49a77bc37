//! Evaluating [`ScalarFunction`]s on arrays with Spark's semantics. Every argument arrives
//! as an array of the type the binder gave it (strings as UTF-8, dates as `Date32`,
//! timestamps in microseconds, ...), all of one length; NULL in gives NULL out unless the
//! function says otherwise. `coalesce`, which evaluates its arguments lazily, is the
//! evaluator's.

use std::sync::Arc;

use arrow::array::timezone::Tz;
use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Date32Array, Decimal128Array, Int32Array, Int64Array, PrimitiveArray,
    StringArray, TimestampMicrosecondArray,
};
use arrow::compute::cast;
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    TimestampMicrosecondType,
};
use chrono::{DateTime, Datelike, Duration, FixedOffset, NaiveDate, NaiveDateTime, Offset, TimeZone, Timelike};

use super::functions::{ScalarFunction, TruncLevel};
use super::java_regex::JavaRegex;
use super::sql_type::UTC;
use crate::{PqsiftError, Result};

/// Java's `String.toLowerCase` (what Spark's `lower` runs): full Unicode case mapping,
/// the final sigma included, as Rust's.
pub(crate) fn spark_lower(text: &str) -> String {
    text.to_lowercase()
}

/// Evaluates `function` on `args` (all of one length); `data_type` is the result's type,
/// `text` the call for error messages.
pub(super) fn call(
    function: &ScalarFunction,
    args: &[ArrayRef],
    data_type: &DataType,
    session_time_zone: &str,
    text: &str,
) -> Result<ArrayRef> {
    use ScalarFunction as F;
    let strings = |i: usize| args[i].as_string::<i32>();
    Ok(match function {
        F::Lower => map_strings(strings(0), spark_lower),
        F::Upper => map_strings(strings(0), str::to_uppercase),
        F::Length => {
            let values = strings(0);
            Arc::new(values.iter().map(|v| v.map(|s| s.chars().count() as i32)).collect::<Int32Array>())
        }
        F::Trim { leading, trailing } => trim(args, *leading, *trailing),
        F::Substring => substring(args),
        F::Concat => concat(args),
        F::StartsWith | F::EndsWith | F::Contains => {
            let test: fn(&str, &str) -> bool = match function {
                F::StartsWith => |s, p| s.starts_with(p),
                F::EndsWith => |s, p| s.ends_with(p),
                _ => |s, p| s.contains(p),
            };
            let (values, parts) = (strings(0), strings(1));
            Arc::new(values.iter().zip(parts.iter()).map(|(s, p)| Some(test(s?, p?))).collect::<BooleanArray>())
        }
        F::RLike(compiled) => rlike(strings(0), strings(1), compiled.as_ref())?,
        F::Year | F::Quarter | F::Month | F::Day => {
            let part: fn(NaiveDate) -> i32 = match function {
                F::Year => |d| d.year(),
                F::Quarter => |d| (d.month0() / 3 + 1) as i32,
                F::Month => |d| d.month() as i32,
                _ => |d| d.day() as i32,
            };
            let days = args[0].as_primitive::<Date32Type>();
            Arc::new(days.iter().map(|d| date_of(d?).map(part)).collect::<Int32Array>())
        }
        F::Hour | F::Minute | F::Second => {
            let part: fn(&NaiveDateTime) -> i32 = match function {
                F::Hour => |t| t.hour() as i32,
                F::Minute => |t| t.minute() as i32,
                _ => |t| t.second() as i32,
            };
            let micros = args[0].as_primitive::<TimestampMicrosecondType>();
            let is_instant = matches!(args[0].data_type(), DataType::Timestamp(_, Some(_)));
            let tz = crate::filter::parse_time_zone(session_time_zone)?;
            Arc::new(
                micros
                    .iter()
                    .map(|m| {
                        let m = m?;
                        let wall = if is_instant {
                            local_of(m, &tz)?
                        } else {
                            DateTime::from_timestamp_micros(m)?.naive_utc()
                        };
                        Some(part(&wall))
                    })
                    .collect::<Int32Array>(),
            )
        }
        F::DateTrunc(level) => {
            let tz = crate::filter::parse_time_zone(session_time_zone)?;
            let micros = args[0].as_primitive::<TimestampMicrosecondType>();
            let truncated: TimestampMicrosecondArray = micros.iter().map(|m| truncate(m?, *level, &tz)).collect();
            Arc::new(truncated.with_timezone(UTC))
        }
        F::DateAdd | F::DateSub => {
            let (days, counts) = (args[0].as_primitive::<Date32Type>(), args[1].as_primitive::<Int32Type>());
            let add = matches!(function, F::DateAdd);
            let shifted: Date32Array = days
                .iter()
                .zip(counts.iter())
                .map(|(d, n)| match (d, n) {
                    (Some(d), Some(n)) => {
                        (if add { d.checked_add(n) } else { d.checked_sub(n) }).map(Some).ok_or_else(|| overflow(text))
                    }
                    _ => Ok(None),
                })
                .collect::<Result<_>>()?;
            Arc::new(shifted)
        }
        F::DateDiff => {
            let (end, start) = (args[0].as_primitive::<Date32Type>(), args[1].as_primitive::<Date32Type>());
            let days: Int32Array = end
                .iter()
                .zip(start.iter())
                .map(|(e, s)| match (e, s) {
                    (Some(e), Some(s)) => e.checked_sub(s).map(Some).ok_or_else(|| overflow(text)),
                    _ => Ok(None),
                })
                .collect::<Result<_>>()?;
            Arc::new(days)
        }
        F::Round { scale } => round(&args[0], *scale, data_type, text)?,
        F::Floor | F::Ceil => floor_or_ceil(&args[0], matches!(function, F::Ceil), data_type, text)?,
        F::Mod | F::Pmod => remainder(&args[0], &args[1], matches!(function, F::Pmod), data_type, text)?,
        F::IsNan => {
            let values = args[0].as_primitive::<Float64Type>();
            // isnan(NULL) is FALSE, not NULL.
            Arc::new(BooleanArray::from_iter(values.iter().map(|v| Some(v.is_some_and(f64::is_nan)))))
        }
        F::UuidText => super::uuid_text::uuid_text(&args[0]),
        F::Coalesce => unreachable!("coalesce is evaluated lazily by the evaluator"),
    })
}

fn map_strings(values: &StringArray, f: impl Fn(&str) -> String) -> ArrayRef {
    Arc::new(values.iter().map(|v| v.map(&f)).collect::<StringArray>())
}

fn trim(args: &[ArrayRef], leading: bool, trailing: bool) -> ArrayRef {
    let values = args[0].as_string::<i32>();
    let strip = |s: &str, chars: &dyn Fn(char) -> bool| -> String {
        let s = if leading { s.trim_start_matches(chars) } else { s };
        let s = if trailing { s.trim_end_matches(chars) } else { s };
        s.to_string()
    };
    match args.get(1) {
        // Spark's one-argument trims remove spaces only (not tabs or other white space).
        None => Arc::new(values.iter().map(|v| v.map(|s| strip(s, &|c| c == ' '))).collect::<StringArray>()),
        Some(chars) => {
            let chars = chars.as_string::<i32>();
            Arc::new(
                values
                    .iter()
                    .zip(chars.iter())
                    .map(|(v, set)| {
                        let set = set?;
                        Some(strip(v?, &|c| set.contains(c)))
                    })
                    .collect::<StringArray>(),
            )
        }
    }
}

/// Spark's `UTF8String.substringSQL`: 1-based `pos`, negative from the end, 0 as 1; the
/// length defaults to everything.
fn substring(args: &[ArrayRef]) -> ArrayRef {
    let values = args[0].as_string::<i32>();
    let positions = args[1].as_primitive::<Int32Type>();
    let lengths = args.get(2).map(|l| l.as_primitive::<Int32Type>());
    let mut out = arrow::array::StringBuilder::with_capacity(values.len(), 0);
    for row in 0..values.len() {
        let length = match lengths {
            Some(lengths) if lengths.is_null(row) => None,
            Some(lengths) => Some(lengths.value(row)),
            None => Some(i32::MAX),
        };
        match (values.is_valid(row), positions.is_valid(row), length) {
            (true, true, Some(length)) => {
                out.append_value(substring_sql(values.value(row), positions.value(row), length))
            }
            _ => out.append_null(),
        }
    }
    Arc::new(out.finish())
}

fn substring_sql(text: &str, pos: i32, length: i32) -> &str {
    if pos >= 0 {
        // Counted from the start: only the characters up to the end are walked, not the
        // whole text counted (`substr(url, 1, 12)` reads 12 characters of each url).
        let start = (i64::from(pos) - 1).max(0);
        let end = start + i64::from(length);
        if start >= end {
            return "";
        }
        // The byte offset of each character, then the text's end.
        let mut offsets = text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len()));
        let Some(from) = offsets.nth(start as usize) else { return "" };
        let to = offsets.nth((end - start - 1) as usize).unwrap_or(text.len());
        return &text[from..to];
    }
    let chars = text.chars().count() as i64;
    let start = match pos {
        p if p > 0 => i64::from(p) - 1,
        p if p < 0 => chars + i64::from(p),
        _ => 0,
    };
    let end = (start + i64::from(length)).min(chars);
    let start = start.max(0);
    if start >= end {
        return "";
    }
    let byte_at = |index: i64| text.char_indices().nth(index as usize).map_or(text.len(), |(i, _)| i);
    &text[byte_at(start)..byte_at(end)]
}

fn concat(args: &[ArrayRef]) -> ArrayRef {
    let columns: Vec<&StringArray> = args.iter().map(|a| a.as_string::<i32>()).collect();
    let rows = columns.first().map_or(0, |c| c.len());
    let mut out = arrow::array::StringBuilder::with_capacity(rows, 0);
    let mut joined = String::new();
    for row in 0..rows {
        if columns.iter().any(|c| c.is_null(row)) {
            out.append_null();
            continue;
        }
        joined.clear();
        columns.iter().for_each(|c| joined.push_str(c.value(row)));
        out.append_value(&joined);
    }
    Arc::new(out.finish())
}

fn rlike(values: &StringArray, patterns: &StringArray, compiled: Option<&JavaRegex>) -> Result<ArrayRef> {
    if let Some(regex) = compiled {
        return Ok(Arc::new(values.iter().map(|v| v.map(|s| regex.is_match(s))).collect::<BooleanArray>()));
    }
    // A pattern per row: each distinct one compiled once.
    let mut cache: std::collections::HashMap<&str, JavaRegex> = std::collections::HashMap::new();
    let mut out = arrow::array::BooleanBuilder::with_capacity(values.len());
    for (value, pattern) in values.iter().zip(patterns.iter()) {
        let (Some(value), Some(pattern)) = (value, pattern) else {
            out.append_null();
            continue;
        };
        if !cache.contains_key(pattern) {
            cache.insert(pattern, JavaRegex::new(pattern)?);
        }
        out.append_value(cache[pattern].is_match(value));
    }
    Ok(Arc::new(out.finish()))
}

fn date_of(days: i32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(1970, 1, 1)?.checked_add_signed(Duration::days(days.into()))
}

/// The wall clock of an instant in `tz`.
fn local_of(micros: i64, tz: &Tz) -> Option<NaiveDateTime> {
    Some(DateTime::from_timestamp_micros(micros)?.with_timezone(tz).naive_local())
}

/// Java's `ZonedDateTime.ofLocal(local, zone, preferred)` as an instant: in an overlap the
/// preferred offset if it is one of the two, else the earlier; in a gap the wall clock
/// moved forward by the gap's length.
fn resolve_local(local: NaiveDateTime, tz: &Tz, preferred: Option<FixedOffset>) -> Option<i64> {
    use chrono::LocalResult;
    let offset = match tz.offset_from_local_datetime(&local) {
        LocalResult::Single(offset) => offset.fix(),
        LocalResult::Ambiguous(a, b) => {
            let (a, b) = (a.fix(), b.fix());
            match preferred {
                Some(p) if p == a || p == b => p,
                // The earlier instant has the larger offset.
                _ => {
                    if a.local_minus_utc() >= b.local_minus_utc() {
                        a
                    } else {
                        b
                    }
                }
            }
        }
        LocalResult::None => {
            let before = local.checked_sub_signed(Duration::days(1))?;
            tz.offset_from_utc_datetime(&before).fix()
        }
    };
    Some((local - Duration::seconds(offset.local_minus_utc().into())).and_utc().timestamp_micros())
}

/// Spark's `DateTimeUtils.truncTimestamp`: units up to a second on the instant line, up to a
/// day on the wall clock keeping the offset, longer ones at the start of the truncated day.
fn truncate(micros: i64, level: TruncLevel, tz: &Tz) -> Option<i64> {
    const MICROS_PER_SECOND: i64 = 1_000_000;
    Some(match level {
        TruncLevel::Microsecond => micros,
        TruncLevel::Millisecond => micros - micros.rem_euclid(1_000),
        TruncLevel::Second => micros - micros.rem_euclid(MICROS_PER_SECOND),
        TruncLevel::Minute | TruncLevel::Hour | TruncLevel::Day => {
            let zoned = DateTime::from_timestamp_micros(micros)?.with_timezone(tz);
            let local = zoned.naive_local();
            let truncated = match level {
                TruncLevel::Minute => local.date().and_hms_opt(local.hour(), local.minute(), 0)?,
                TruncLevel::Hour => local.date().and_hms_opt(local.hour(), 0, 0)?,
                _ => local.date().and_hms_opt(0, 0, 0)?,
            };
            resolve_local(truncated, tz, Some(zoned.offset().fix()))?
        }
        TruncLevel::Week | TruncLevel::Month | TruncLevel::Quarter | TruncLevel::Year => {
            let date = local_of(micros, tz)?.date();
            let first = match level {
                TruncLevel::Week => date - Duration::days(date.weekday().num_days_from_monday().into()),
                TruncLevel::Month => date.with_day(1)?,
                TruncLevel::Quarter => NaiveDate::from_ymd_opt(date.year(), date.month0() / 3 * 3 + 1, 1)?,
                _ => NaiveDate::from_ymd_opt(date.year(), 1, 1)?,
            };
            resolve_local(first.and_hms_opt(0, 0, 0)?, tz, None)?
        }
    })
}

fn overflow(text: &str) -> PqsiftError {
    PqsiftError::filter(format!("arithmetic overflow in {text} (Spark's ANSI mode raises it)"))
}

fn division_by_zero(text: &str) -> PqsiftError {
    PqsiftError::filter(format!("division by zero in {text} (Spark's ANSI mode raises it)"))
}

/// 10^n as an i128 (n ≤ 38).
fn power_of_ten(n: u32) -> i128 {
    10i128.pow(n)
}

/// `value / 10^digits` rounded: HALF_UP (away from zero at .5), FLOOR or CEILING.
fn shift_right(value: i128, digits: u32, mode: Rounding) -> i128 {
    if digits == 0 {
        return value;
    }
    if digits > 38 {
        return match mode {
            Rounding::Floor if value < 0 => -1,
            Rounding::Ceiling if value > 0 => 1,
            _ => 0,
        };
    }
    let divisor = power_of_ten(digits);
    let (quotient, remainder) = (value / divisor, value % divisor);
    match mode {
        Rounding::HalfUp if remainder.unsigned_abs() * 2 >= divisor.unsigned_abs() => quotient + value.signum(),
        Rounding::Floor if remainder < 0 => quotient - 1,
        Rounding::Ceiling if remainder > 0 => quotient + 1,
        _ => quotient,
    }
}

#[derive(Clone, Copy)]
enum Rounding {
    HalfUp,
    Floor,
    Ceiling,
}

/// A decimal's unscaled values rescaled from `from_scale` to `to_scale` with `mode`, then
/// checked against `precision` digits.
fn rescale(
    values: &Decimal128Array,
    from_scale: i8,
    to_scale: i32,
    precision: u8,
    mode: Rounding,
    text: &str,
) -> Result<Decimal128Array> {
    let limit = power_of_ten(u32::from(precision));
    let mut out = Vec::with_capacity(values.len());
    for value in values.iter() {
        out.push(match value {
            None => None,
            Some(v) => {
                let shift = i32::from(from_scale) - to_scale;
                let scaled = if shift >= 0 {
                    shift_right(v, shift as u32, mode)
                } else {
                    v.checked_mul(power_of_ten((-shift) as u32)).ok_or_else(|| overflow(text))?
                };
                if scaled.unsigned_abs() >= limit.unsigned_abs() {
                    return Err(overflow(text));
                }
                Some(scaled)
            }
        });
    }
    Ok(Decimal128Array::from(out))
}

/// Spark's `round(x, scale)` (HALF_UP). A double is rounded as Scala's `BigDecimal(x)` reads
/// it: its shortest decimal text, so `round(2.675, 2)` is 2.68 although the double is a
/// little below 2.675.
fn round(value: &ArrayRef, scale: i32, data_type: &DataType, text: &str) -> Result<ArrayRef> {
    Ok(match (value.data_type(), data_type) {
        (DataType::Float64, _) => {
            Arc::new(value.as_primitive::<Float64Type>().unary::<_, Float64Type>(|v| round_double(v, scale)))
        }
        (DataType::Float32, _) => Arc::new(
            value.as_primitive::<Float32Type>().unary::<_, Float32Type>(|v| round_double(f64::from(v), scale) as f32),
        ),
        (DataType::Decimal128(_, from_scale), DataType::Decimal128(precision, to_scale)) => {
            let values = value.as_primitive::<Decimal128Type>();
            // Round to `scale` digits, then express at the result's scale (0 when negative).
            let rounded = rescale(values, *from_scale, scale.min(i32::from(*from_scale)), 38, Rounding::HalfUp, text)?;
            let at_result = rescale(
                &rounded,
                scale.min(i32::from(*from_scale)) as i8,
                i32::from(*to_scale),
                *precision,
                Rounding::HalfUp,
                text,
            )?;
            Arc::new(
                at_result
                    .with_precision_and_scale(*precision, *to_scale)
                    .map_err(|e| PqsiftError::filter(format!("in {text}: {e}")))?,
            )
        }
        // Integers rounded to a non-negative scale are unchanged.
        _ => value.clone(),
    })
}

fn round_double(value: f64, scale: i32) -> f64 {
    if !value.is_finite() {
        return value;
    }
    // The shortest text that reads back as `value`: digits and a decimal exponent.
    let text = format!("{value:e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    // value = digits × 10^(exponent - (len - 1)); keep `scale` digits after the point.
    let fraction_digits = digits.len() as i32 - 1 - exponent;
    let drop = fraction_digits - scale;
    if drop <= 0 {
        return value;
    }
    let Ok(unscaled) = digits.parse::<i128>() else { return value };
    let rounded = shift_right(unscaled, drop as u32, Rounding::HalfUp);
    let sign = if negative { "-" } else { "" };
    format!("{sign}{rounded}e{}", -scale).parse().unwrap_or(value)
}

fn floor_or_ceil(value: &ArrayRef, ceiling: bool, data_type: &DataType, text: &str) -> Result<ArrayRef> {
    Ok(match value.data_type() {
        // Spark's `MathUtils.doubleToLong`: a value outside BIGINT (NaN and infinities too)
        // is an overflow error under ANSI.
        DataType::Float64 => {
            const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
            let values = value.as_primitive::<Float64Type>();
            let whole: Int64Array = values
                .iter()
                .map(|v| match v.map(|v| if ceiling { v.ceil() } else { v.floor() }) {
                    None => Ok(None),
                    Some(w) if (-TWO_TO_63..TWO_TO_63).contains(&w) => Ok(Some(w as i64)),
                    Some(_) => Err(overflow(text)),
                })
                .collect::<Result<_>>()?;
            Arc::new(whole)
        }
        DataType::Decimal128(_, from_scale) => {
            let DataType::Decimal128(precision, _) = data_type else { return Ok(value.clone()) };
            let mode = if ceiling { Rounding::Ceiling } else { Rounding::Floor };
            let values = rescale(value.as_primitive::<Decimal128Type>(), *from_scale, 0, *precision, mode, text)?;
            Arc::new(
                values
                    .with_precision_and_scale(*precision, 0)
                    .map_err(|e| PqsiftError::filter(format!("in {text}: {e}")))?,
            )
        }
        _ => value.clone(),
    })
}

/// `left % divisor` (`positive`: Spark's `pmod`) for integers and a constant `divisor` (an
/// array of one value, of `left`'s type): the remainder `remainder` gives, a
/// multiplication a row rather than a division (the divisor's reciprocal computed once),
/// and without the constant spread to every row. `None` for other types (`remainder`
/// then).
pub(super) fn remainder_by_constant(
    left: &ArrayRef,
    divisor: &ArrayRef,
    positive: bool,
    data_type: &DataType,
    text: &str,
) -> Option<Result<ArrayRef>> {
    if !left.data_type().is_integer() || divisor.data_type() != left.data_type() || divisor.len() != 1 {
        return None;
    }
    Some((|| {
        let (values, divisor) = (cast(left, &DataType::Int64)?, cast(divisor, &DataType::Int64)?);
        let values = values.as_primitive::<Int64Type>();
        let divisor = divisor.as_primitive::<Int64Type>();
        let result = match divisor.is_valid(0).then(|| divisor.value(0)) {
            None => Int64Array::new_null(values.len()),
            // Any row with a value reaches the division (the caller masked the others).
            Some(0) if values.null_count() < values.len() => return Err(division_by_zero(text)),
            Some(0) => Int64Array::new_null(values.len()),
            Some(divisor) => {
                let reduced = strength_reduce::StrengthReducedU64::new(divisor.unsigned_abs());
                // Java's remainder: the dividend's sign, the magnitude that of |a| mod |b|
                // (so MIN % -1 is 0, not an overflow).
                let rem = |a: i64| {
                    let magnitude = (a.unsigned_abs() % reduced) as i64;
                    if a < 0 { magnitude.wrapping_neg() } else { magnitude }
                };
                values.unary(|a| {
                    let r = rem(a);
                    if positive && r < 0 { rem(r.wrapping_add(divisor)) } else { r }
                })
            }
        };
        Ok(cast(&(Arc::new(result) as ArrayRef), data_type)?)
    })())
}

/// `a % b` (`positive`: Spark's `pmod`) on operands of one type.
fn remainder(left: &ArrayRef, right: &ArrayRef, positive: bool, data_type: &DataType, text: &str) -> Result<ArrayRef> {
    fn each<T: ArrowPrimitiveType>(
        left: &PrimitiveArray<T>,
        right: &PrimitiveArray<T>,
        is_zero: impl Fn(T::Native) -> bool,
        f: impl Fn(T::Native, T::Native) -> T::Native,
        text: &str,
    ) -> Result<PrimitiveArray<T>> {
        left.iter()
            .zip(right.iter())
            .map(|(a, b)| match (a, b) {
                (Some(_), Some(b)) if is_zero(b) => Err(division_by_zero(text)),
                (Some(a), Some(b)) => Ok(Some(f(a, b))),
                _ => Ok(None),
            })
            .collect()
    }
    Ok(match left.data_type() {
        DataType::Float64 | DataType::Float32 => {
            let (a, b) = (cast(left, &DataType::Float64)?, cast(right, &DataType::Float64)?);
            let (a, b) = (a.as_primitive::<Float64Type>(), b.as_primitive::<Float64Type>());
            let result = each(
                a,
                b,
                |b| b == 0.0,
                |a, b| {
                    let r = a % b;
                    if positive && r < 0.0 { (r + b) % b } else { r }
                },
                text,
            )?;
            cast(&(Arc::new(result) as ArrayRef), data_type)?
        }
        DataType::Decimal128(precision, scale) => {
            let (a, b) = (left.as_primitive::<Decimal128Type>(), right.as_primitive::<Decimal128Type>());
            let result = each(
                a,
                b,
                |b| b == 0,
                |a, b| {
                    let r = a % b;
                    if positive && r < 0 { (r + b) % b } else { r }
                },
                text,
            )?;
            let result = result
                .with_precision_and_scale(*precision, *scale)
                .map_err(|e| PqsiftError::filter(format!("in {text}: {e}")))?;
            crate::filter::cast::cast_array(&(Arc::new(result) as ArrayRef), data_type, "UTC")?
        }
        _ => {
            // Integers of any width, computed as 64-bit (a remainder always fits back).
            let (a, b) = (cast(left, &DataType::Int64)?, cast(right, &DataType::Int64)?);
            let (a, b) = (a.as_primitive::<Int64Type>(), b.as_primitive::<Int64Type>());
            let result: Int64Array = each(
                a,
                b,
                |b| b == 0,
                |a, b| {
                    // Java's MIN % -1 is 0, not an overflow.
                    let r = a.wrapping_rem(b);
                    if positive && r < 0 { r.wrapping_add(b).wrapping_rem(b) } else { r }
                },
                text,
            )?;
            cast(&(Arc::new(result) as ArrayRef), data_type)?
        }
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn substrings_follow_spark() {
        assert_eq!(substring_sql("hello", 2, 3), "ell");
        assert_eq!(substring_sql("hello", 0, 2), "he");
        assert_eq!(substring_sql("hello", -3, 2), "ll");
        assert_eq!(substring_sql("hello", -10, 3), "");
        assert_eq!(substring_sql("hello", -10, 7), "he");
        assert_eq!(substring_sql("héllo", 2, i32::MAX), "éllo");
        assert_eq!(substring_sql("hello", 9, 2), "");
        assert_eq!(substring_sql("hello", 1, -1), "");
    }

    #[test]
    fn doubles_round_half_up_on_their_shortest_text() {
        assert_eq!(round_double(2.675, 2), 2.68);
        assert_eq!(round_double(2.5, 0), 3.0);
        assert_eq!(round_double(-2.5, 0), -3.0);
        assert_eq!(round_double(1234.5, -2), 1200.0);
        assert_eq!(round_double(0.125, 5), 0.125);
        assert!(round_double(f64::NAN, 1).is_nan());
        assert_eq!(round_double(1e300, 2), 1e300);
    }

    #[test]
    fn truncation_keeps_the_offset_in_an_overlap() {
        let tz: Tz = "America/New_York".parse().unwrap();
        // 2024-11-03 01:30 EST (the second 01:30) is 06:30 UTC; its hour starts at 06:00 UTC.
        let second = chrono::NaiveDate::from_ymd_opt(2024, 11, 3)
            .unwrap()
            .and_hms_opt(6, 30, 0)
            .unwrap()
            .and_utc()
            .timestamp_micros();
        let hour = truncate(second, TruncLevel::Hour, &tz).unwrap();
        assert_eq!(second - hour, 30 * 60 * 1_000_000);
        // Its day starts at 00:00 EDT, 04:00 UTC.
        let day = truncate(second, TruncLevel::Day, &tz).unwrap();
        assert_eq!(DateTime::from_timestamp_micros(day).unwrap().naive_utc().hour(), 4);
    }

    proptest! {
        /// Substrings counted from the start equal those of the whole text's count of
        /// characters (Spark's `substring`), multi-byte characters and lengths past the end
        /// included.
        #[test]
        fn substrings_from_the_start_equal_the_counted_ones(
            text in "[a-zé中😀]{0,12}",
            pos in -14i32..14,
            length in prop_oneof![-2i32..15, Just(i32::MAX)],
        ) {
            let counted = |text: &str| -> String {
                let chars: Vec<char> = text.chars().collect();
                let n = chars.len() as i64;
                let start = match pos { p if p > 0 => i64::from(p) - 1, p if p < 0 => n + i64::from(p), _ => 0 };
                let end = (start + i64::from(length)).min(n);
                let start = start.max(0);
                if start >= end { String::new() } else { chars[start as usize..end as usize].iter().collect() }
            };
            prop_assert_eq!(substring_sql(&text, pos, length), counted(&text));
        }

        /// A remainder by a constant equals the remainder by that constant spread to every
        /// row, `%` and `pmod`, for every integer width: negative dividends and divisors,
        /// the type's extremes, a NULL divisor; by zero, an error where a row has a value.
        #[test]
        fn a_remainder_by_a_constant_equals_the_row_by_row_one(
            dividends in prop::collection::vec(prop::option::weighted(0.9, any::<i64>()), 0..70),
            divisor in prop_oneof![
                Just(Some(0i64)), Just(Some(-1)), Just(Some(i64::MIN)), Just(None),
                (-300i64..300).prop_map(Some), any::<i64>().prop_map(Some),
            ],
            positive in any::<bool>(),
            extremes in any::<bool>(),
            width in proptest::sample::select(vec![DataType::Int8, DataType::Int16, DataType::Int32, DataType::Int64]),
        ) {
            let mut dividends = dividends;
            if extremes {
                dividends.extend([Some(i64::MIN), Some(i64::MAX), Some(0), Some(-1)]);
            }
            // Values of the width: cast with wrapping, as a narrower column holds them.
            let narrow = |values: Vec<Option<i64>>| -> ArrayRef {
                let wide: ArrayRef = Arc::new(Int64Array::from(values));
                arrow::compute::cast_with_options(&wide, &width, &arrow::compute::CastOptions { safe: true, ..Default::default() }).unwrap()
            };
            let left = narrow(dividends.clone());
            let constant = narrow(vec![divisor]);
            if constant.null_count() != usize::from(divisor.is_none()) {
                return Ok(()); // the divisor does not fit the width
            }
            let spread = arrow::compute::take(&constant, &arrow::array::UInt32Array::from(vec![0u32; left.len()]), None).unwrap();
            let expected = remainder(&left, &spread, positive, &width, "r");
            let got = remainder_by_constant(&left, &constant, positive, &width, "r").unwrap();
            match (expected, got) {
                (Ok(expected), Ok(got)) => prop_assert_eq!(expected.to_data(), got.to_data()),
                (Err(_), Err(_)) => {}
                (expected, got) => prop_assert!(false, "{:?} against {:?}", expected.map(|a| a.len()), got.map(|a| a.len())),
            }
        }
    }
}
