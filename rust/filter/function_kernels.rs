//! Evaluating [`ScalarFunction`]s on arrays with Spark's semantics. Every argument arrives
//! as an array of the type the binder gave it (strings as UTF-8, dates as `Date32`,
//! timestamps in microseconds, ...): a column's values, one a row, or a constant's one value
//! standing for every row ([`Arg`]). NULL in gives NULL out unless the function says
//! otherwise. `coalesce`, which evaluates its arguments lazily, is the evaluator's.

use std::sync::Arc;

use arrow::array::timezone::Tz;
use arrow::array::{
    Array, ArrayAccessor, ArrayRef, AsArray, BooleanArray, Date32Array, Datum, Decimal128Array, Int32Array, Int64Array,
    PrimitiveArray, Scalar, StringArray, TimestampMicrosecondArray,
};
use arrow::compute::cast;
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    TimestampMicrosecondType,
};
use chrono::{DateTime, Datelike, Duration, FixedOffset, NaiveDate, NaiveDateTime, Offset, TimeZone, Timelike};

use super::affix::{Affix, affix_matches};
use super::functions::{ScalarFunction, TruncLevel};
use super::java_regex::JavaRegex;
use super::literal::WallClock;
use super::sql_type::UTC;
use crate::{PqsiftError, Result};

/// Java's `String.toLowerCase` (what Spark's `lower` runs): full Unicode case mapping,
/// the final sigma included, as Rust's.
pub(crate) fn spark_lower(text: &str) -> String {
    text.to_lowercase()
}

/// The bytes of a one-value string or binary constant; `None` when it is NULL or of
/// another type.
fn constant_bytes(constant: &ArrayRef) -> Option<&[u8]> {
    if constant.is_null(0) {
        return None;
    }
    match constant.data_type() {
        DataType::Utf8 => Some(constant.as_string::<i32>().value(0).as_bytes()),
        DataType::LargeUtf8 => Some(constant.as_string::<i64>().value(0).as_bytes()),
        DataType::Binary => Some(constant.as_binary::<i32>().value(0)),
        DataType::LargeBinary => Some(constant.as_binary::<i64>().value(0)),
        _ => None,
    }
}

/// A function's argument: a column's values, one a row, or a constant — one value standing
/// for every row, never spread to the batch's length (in `substr(url, 1, 12)`, 1 and 12 are
/// arrays of one value, not of the batch's length).
///
/// ```text
/// date_add(day, 1) over 3 rows:  day = Arg { values: [0, 10, NULL], constant: false }
///                                1   = Arg { values: [1], constant: true }
///                                row r reads day[r] and 1[0]: [1, 11, NULL]
/// ```
#[derive(Clone)]
pub(super) struct Arg {
    pub(super) values: ArrayRef,
    pub(super) constant: bool,
}

impl Arg {
    /// Arrow's form of the argument, whose kernels take a constant as a scalar.
    fn datum(&self) -> Box<dyn Datum + '_> {
        if self.constant { Box::new(Scalar::new(&self.values)) } else { Box::new(&self.values) }
    }

    fn strings(&self) -> &StringArray {
        self.values.as_string::<i32>()
    }

    /// The argument's strings, the type looked up once rather than once a row.
    fn text(&self) -> PerRow<&StringArray> {
        PerRow { values: self.strings(), constant: self.constant }
    }

    fn primitives<T: ArrowPrimitiveType>(&self) -> PerRow<&PrimitiveArray<T>> {
        PerRow { values: self.values.as_primitive::<T>(), constant: self.constant }
    }
}

/// An [`Arg`]'s values of a known type: the value standing for each row.
#[derive(Clone, Copy)]
struct PerRow<A> {
    values: A,
    constant: bool,
}

impl<A: ArrayAccessor> PerRow<A> {
    #[inline]
    fn get(&self, row: usize) -> Option<A::Item> {
        let index = if self.constant { 0 } else { row };
        self.values.is_valid(index).then(|| self.values.value(index))
    }
}

/// Evaluates `function` on `args` for `rows` rows (each argument a column of that length
/// or a constant); `data_type` is the result's type, `text` the call for error messages.
pub(super) fn call(
    function: &ScalarFunction,
    args: &[Arg],
    rows: usize,
    data_type: &DataType,
    session_time_zone: &str,
    text: &str,
) -> Result<ArrayRef> {
    use ScalarFunction as F;
    // One-argument functions: their argument is a column (or a constant, the result
    // then a constant too: `rows` is 1).
    let only = || &args[0].values;
    let strings = |i: usize| args[i].strings();
    Ok(match function {
        F::Lower => map_strings(strings(0), spark_lower),
        F::Upper => map_strings(strings(0), str::to_uppercase),
        F::Length if !matches!(only().data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) => {
            // A BINARY's bytes, as Spark counts them (a LargeBinary's as INT too).
            let lengths = arrow::compute::kernels::length::length(only())?;
            arrow::compute::cast(&lengths, &DataType::Int32)?
        }
        F::Length => {
            let values = strings(0);
            Arc::new(values.iter().map(|v| v.map(|s| s.chars().count() as i32)).collect::<Int32Array>())
        }
        F::Trim { leading, trailing } => trim(args, rows, *leading, *trailing),
        F::Substring => substring(args, rows),
        F::Concat => concat(args, rows),
        F::StartsWith | F::EndsWith | F::Contains => {
            let end = match function {
                F::StartsWith => Some(Affix::Prefix),
                F::EndsWith => Some(Affix::Suffix),
                _ => None,
            };
            let affix = if args[1].constant { constant_bytes(&args[1].values) } else { None };
            match (end, affix) {
                (Some(end), Some(affix)) if let Some(matches) = affix_matches(&args[0].values, affix, end) => {
                    Arc::new(matches)
                }
                // Arrow's kernels (a constant pattern searched for with one prepared
                // finder); Spark compares the UTF-8 bytes, as they do.
                _ => {
                    let test = match function {
                        F::StartsWith => arrow::compute::kernels::comparison::starts_with,
                        F::EndsWith => arrow::compute::kernels::comparison::ends_with,
                        _ => arrow::compute::kernels::comparison::contains,
                    };
                    Arc::new(test(args[0].datum().as_ref(), args[1].datum().as_ref())?)
                }
            }
        }
        F::RLike(compiled) => rlike(&args[0], &args[1], rows, compiled.as_ref())?,
        F::Year | F::Quarter | F::Month | F::Day => {
            let part: fn(NaiveDate) -> i32 = match function {
                F::Year => |d| d.year(),
                F::Quarter => |d| (d.month0() / 3 + 1) as i32,
                F::Month => |d| d.month() as i32,
                _ => |d| d.day() as i32,
            };
            let days = only().as_primitive::<Date32Type>();
            Arc::new(days.iter().map(|d| date_of(d?).map(part)).collect::<Int32Array>())
        }
        F::Hour | F::Minute | F::Second => {
            let part: fn(&NaiveDateTime) -> i32 = match function {
                F::Hour => |t| t.hour() as i32,
                F::Minute => |t| t.minute() as i32,
                _ => |t| t.second() as i32,
            };
            let micros = only().as_primitive::<TimestampMicrosecondType>();
            let is_instant = matches!(only().data_type(), DataType::Timestamp(_, Some(_)));
            let clock = WallClock::new(session_time_zone)?;
            Arc::new(
                micros
                    .iter()
                    .map(|m| {
                        let m = m?;
                        let wall = if is_instant { clock.local_micros(m)? } else { m };
                        Some(part(&DateTime::from_timestamp_micros(wall)?.naive_utc()))
                    })
                    .collect::<Int32Array>(),
            )
        }
        F::DateTrunc(level) => {
            let clock = WallClock::new(session_time_zone)?;
            let tz = crate::filter::parse_time_zone(session_time_zone)?;
            let micros = only().as_primitive::<TimestampMicrosecondType>();
            let truncated: TimestampMicrosecondArray =
                micros.iter().map(|m| truncate(m?, *level, &clock, &tz)).collect();
            Arc::new(truncated.with_timezone(UTC))
        }
        F::DateAdd | F::DateSub => {
            let (days, counts) = (args[0].primitives::<Date32Type>(), args[1].primitives::<Int32Type>());
            let add = matches!(function, F::DateAdd);
            let shifted: Date32Array = (0..rows)
                .map(|row| match (days.get(row), counts.get(row)) {
                    (Some(d), Some(n)) => {
                        (if add { d.checked_add(n) } else { d.checked_sub(n) }).map(Some).ok_or_else(|| overflow(text))
                    }
                    _ => Ok(None),
                })
                .collect::<Result<_>>()?;
            Arc::new(shifted)
        }
        F::DateDiff => {
            let (end, start) = (args[0].primitives::<Date32Type>(), args[1].primitives::<Date32Type>());
            let days: Int32Array = (0..rows)
                .map(|row| match (end.get(row), start.get(row)) {
                    (Some(e), Some(s)) => e.checked_sub(s).map(Some).ok_or_else(|| overflow(text)),
                    _ => Ok(None),
                })
                .collect::<Result<_>>()?;
            Arc::new(days)
        }
        F::Round { scale } => round(only(), *scale, data_type, text)?,
        F::Floor | F::Ceil => floor_or_ceil(only(), matches!(function, F::Ceil), data_type, text)?,
        F::Mod | F::Pmod => {
            let (dividend, divisor, positive) = (&args[0], &args[1], matches!(function, F::Pmod));
            match (divisor.constant && !dividend.constant)
                .then(|| remainder_by_constant(&dividend.values, &divisor.values, positive, data_type, text))
                .flatten()
            {
                Some(result) => result?,
                None => remainder(dividend, divisor, rows, positive, data_type, text)?,
            }
        }
        F::IsNan => {
            let values = only().as_primitive::<Float64Type>();
            // isnan(NULL) is FALSE, not NULL.
            Arc::new(BooleanArray::from_iter(values.iter().map(|v| Some(v.is_some_and(f64::is_nan)))))
        }
        F::UuidText => super::uuid_text::uuid_text(only()),
        F::Coalesce => unreachable!("coalesce is evaluated lazily by the evaluator"),
    })
}

fn map_strings(values: &StringArray, f: impl Fn(&str) -> String) -> ArrayRef {
    Arc::new(values.iter().map(|v| v.map(&f)).collect::<StringArray>())
}

fn trim(args: &[Arg], rows: usize, leading: bool, trailing: bool) -> ArrayRef {
    let strip = |s: &str, chars: &dyn Fn(char) -> bool| -> String {
        let s = if leading { s.trim_start_matches(chars) } else { s };
        let s = if trailing { s.trim_end_matches(chars) } else { s };
        s.to_string()
    };
    let values = args[0].text();
    match args.get(1).map(Arg::text) {
        // Spark's one-argument trims remove spaces only (not tabs or other white space).
        None => Arc::new(values.values.iter().map(|v| v.map(|s| strip(s, &|c| c == ' '))).collect::<StringArray>()),
        Some(chars) => Arc::new(
            (0..rows)
                .map(|row| {
                    let set = chars.get(row)?;
                    Some(strip(values.get(row)?, &|c| set.contains(c)))
                })
                .collect::<StringArray>(),
        ),
    }
}

/// Spark's `UTF8String.substringSQL`: 1-based `pos`, negative from the end, 0 as 1; the
/// length defaults to everything.
fn substring(args: &[Arg], rows: usize) -> ArrayRef {
    let (values, positions) = (args[0].text(), args[1].primitives::<Int32Type>());
    let lengths = args.get(2).map(Arg::primitives::<Int32Type>);
    let mut out = arrow::array::StringBuilder::with_capacity(rows, 0);
    for row in 0..rows {
        let length = match lengths {
            Some(lengths) => lengths.get(row),
            None => Some(i32::MAX),
        };
        match (values.get(row), positions.get(row), length) {
            (Some(text), Some(position), Some(length)) => out.append_value(substring_sql(text, position, length)),
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

fn concat(args: &[Arg], rows: usize) -> ArrayRef {
    let parts: Vec<PerRow<&StringArray>> = args.iter().map(Arg::text).collect();
    let mut out = arrow::array::StringBuilder::with_capacity(rows, 0);
    let mut joined = String::new();
    'rows: for row in 0..rows {
        joined.clear();
        for part in &parts {
            match part.get(row) {
                Some(part) => joined.push_str(part),
                None => {
                    out.append_null();
                    continue 'rows;
                }
            }
        }
        out.append_value(&joined);
    }
    Arc::new(out.finish())
}

fn rlike(values: &Arg, patterns: &Arg, rows: usize, compiled: Option<&JavaRegex>) -> Result<ArrayRef> {
    let (values, patterns) = (values.text(), patterns.text());
    if let Some(regex) = compiled {
        let matches = |row| values.get(row).map(|s| regex.is_match(s));
        return Ok(Arc::new((0..rows).map(matches).collect::<BooleanArray>()));
    }
    // A pattern per row: each distinct one compiled once.
    let mut cache: std::collections::HashMap<&str, JavaRegex> = std::collections::HashMap::new();
    let mut out = arrow::array::BooleanBuilder::with_capacity(rows);
    for row in 0..rows {
        let (Some(value), Some(pattern)) = (values.get(row), patterns.get(row)) else {
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
    // (An instant before chrono's first date-time is none.)
    Some(local.checked_sub_signed(Duration::seconds(offset.local_minus_utc().into()))?.and_utc().timestamp_micros())
}

/// The first day of `date`'s week (from Monday), month, quarter or year.
fn period_start(date: NaiveDate, level: TruncLevel) -> Option<NaiveDate> {
    match level {
        TruncLevel::Week => date.checked_sub_signed(Duration::days(date.weekday().num_days_from_monday().into())),
        TruncLevel::Month => date.with_day(1),
        TruncLevel::Quarter => NaiveDate::from_ymd_opt(date.year(), date.month0() / 3 * 3 + 1, 1),
        _ => NaiveDate::from_ymd_opt(date.year(), 1, 1),
    }
}

/// Spark's `DateTimeUtils.truncTimestamp`: units up to a second on the instant line, up to a
/// day on the wall clock keeping the offset, longer ones at the start of the truncated day.
/// The zone's offsets come from `clock`; `tz` resolves a wall clock near a change.
fn truncate(micros: i64, level: TruncLevel, clock: &WallClock, tz: &Tz) -> Option<i64> {
    const MICROS_PER_SECOND: i64 = 1_000_000;
    Some(match level {
        TruncLevel::Microsecond => micros,
        TruncLevel::Millisecond => micros - micros.rem_euclid(1_000),
        TruncLevel::Second => micros - micros.rem_euclid(MICROS_PER_SECOND),
        TruncLevel::Minute | TruncLevel::Hour | TruncLevel::Day => {
            let offset = clock.offset_micros(micros)?;
            let local = clock.local_micros(micros)?;
            let unit = match level {
                TruncLevel::Minute => 60 * MICROS_PER_SECOND,
                TruncLevel::Hour => 3_600 * MICROS_PER_SECOND,
                _ => 86_400 * MICROS_PER_SECOND,
            };
            let truncated = local - local.rem_euclid(unit);
            match clock.unique_instant(truncated) {
                Some(instant) => instant,
                None => {
                    let preferred = FixedOffset::east_opt(i32::try_from(offset / MICROS_PER_SECOND).ok()?)?;
                    resolve_local(DateTime::from_timestamp_micros(truncated)?.naive_utc(), tz, Some(preferred))?
                }
            }
        }
        TruncLevel::Week | TruncLevel::Month | TruncLevel::Quarter | TruncLevel::Year => {
            let date = DateTime::from_timestamp_micros(clock.local_micros(micros)?)?.date_naive();
            let midnight = period_start(date, level)?.and_hms_opt(0, 0, 0)?;
            match clock.unique_instant(midnight.and_utc().timestamp_micros()) {
                Some(instant) => instant,
                None => resolve_local(midnight, tz, None)?,
            }
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

#[inline]
pub(super) fn round_double(value: f64, scale: i32) -> f64 {
    round_double_by_arithmetic(value, scale).unwrap_or_else(|| round_double_by_text(value, scale))
}

/// [`round_double`] in floating point, where that gives its answer: the value scaled by
/// 10^scale is below 2^40, so its whole part is exact. Away from a half, the double and
/// its shortest decimal text round the same way. Near a half `h` (the whole part plus 0.5,
/// over 10^scale) the text decides, and it need not be written out: if `h` reads back as
/// the value, `h` is its shortest text (any shorter one is a multiple of 10^-scale, half a
/// unit away), and HALF_UP rounds it up; otherwise the text lies on the value's side of
/// `h`, as the value does. The nearest double to `h` is one correctly rounded operation,
/// as reading the text is. Dividing (or multiplying) the rounded whole number by the exact
/// power of ten is correctly rounded, as Scala's `BigDecimal.toDouble` is. `None`
/// otherwise (the value's text then decides).
#[inline]
fn round_double_by_arithmetic(value: f64, scale: i32) -> Option<f64> {
    const POWERS: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ];
    let power = *POWERS.get(scale.unsigned_abs() as usize)?;
    let scaled = if scale >= 0 { value * power } else { value / power };
    // NaN and the infinities fail this too.
    if scaled.abs().partial_cmp(&((1u64 << 40) as f64)) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    // Truncated by a conversion (no libm call); exact below 2^40.
    let truncated = scaled as i64;
    let fraction = (scaled - truncated as f64).abs();
    let up = if (fraction - 0.5).abs() > 1.0 / 1024.0 {
        fraction > 0.5
    } else {
        let half = truncated.unsigned_abs() as f64 + 0.5;
        let half = if scale >= 0 { half / power } else { half * power };
        value.abs() >= half
    };
    // Away from zero when rounding up, as HALF_UP; the sign kept on a zero, as `f64::round` keeps it.
    let away = i64::from(up) * if scaled < 0.0 { -1 } else { 1 };
    let whole = ((truncated + away) as f64).copysign(scaled);
    Some(if scale >= 0 { whole / power } else { whole * power })
}

/// [`round_double`] on the value's shortest decimal text, exactly as Spark reads it.
#[cold]
#[inline(never)]
fn round_double_by_text(value: f64, scale: i32) -> f64 {
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

/// `a % b` (`positive`: Spark's `pmod`) on operands of one type, for `rows` rows.
fn remainder(
    left: &Arg,
    right: &Arg,
    rows: usize,
    positive: bool,
    data_type: &DataType,
    text: &str,
) -> Result<ArrayRef> {
    /// Both operands as `to` (a constant stays one value).
    fn both_as(left: &Arg, right: &Arg, to: &DataType) -> Result<(Arg, Arg)> {
        let as_type = |arg: &Arg| -> Result<Arg> { Ok(Arg { values: cast(&arg.values, to)?, constant: arg.constant }) };
        Ok((as_type(left)?, as_type(right)?))
    }
    fn each<T: ArrowPrimitiveType>(
        (left, right): (Arg, Arg),
        rows: usize,
        is_zero: impl Fn(T::Native) -> bool,
        f: impl Fn(T::Native, T::Native) -> T::Native,
        text: &str,
    ) -> Result<PrimitiveArray<T>> {
        let (left, right) = (left.primitives::<T>(), right.primitives::<T>());
        (0..rows)
            .map(|row| match (left.get(row), right.get(row)) {
                (Some(_), Some(b)) if is_zero(b) => Err(division_by_zero(text)),
                (Some(a), Some(b)) => Ok(Some(f(a, b))),
                _ => Ok(None),
            })
            .collect()
    }
    Ok(match left.values.data_type() {
        DataType::Float64 | DataType::Float32 => {
            let result = each::<Float64Type>(
                both_as(left, right, &DataType::Float64)?,
                rows,
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
            let result = each::<Decimal128Type>(
                (left.clone(), right.clone()),
                rows,
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
            let result = each::<Int64Type>(
                both_as(left, right, &DataType::Int64)?,
                rows,
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
        let clock = WallClock::new("America/New_York").unwrap();
        let hour = truncate(second, TruncLevel::Hour, &clock, &tz).unwrap();
        assert_eq!(second - hour, 30 * 60 * 1_000_000);
        // Its day starts at 00:00 EDT, 04:00 UTC.
        let day = truncate(second, TruncLevel::Day, &clock, &tz).unwrap();
        assert_eq!(DateTime::from_timestamp_micros(day).unwrap().naive_utc().hour(), 4);
    }

    /// `truncate` as it was written before wall clocks came from a [`WallClock`]: chrono's
    /// lookups for every value (a wall clock past chrono's range none, where chrono's
    /// `naive_local` panicked).
    fn truncate_by_lookup(micros: i64, level: TruncLevel, tz: &Tz) -> Option<i64> {
        let local_of = |micros: i64| {
            let zoned = DateTime::from_timestamp_micros(micros)?.with_timezone(tz);
            zoned.naive_utc().checked_add_offset(zoned.offset().fix())
        };
        Some(match level {
            TruncLevel::Microsecond | TruncLevel::Millisecond | TruncLevel::Second => unreachable!(),
            TruncLevel::Minute | TruncLevel::Hour | TruncLevel::Day => {
                let zoned = DateTime::from_timestamp_micros(micros)?.with_timezone(tz);
                let local = local_of(micros)?;
                let truncated = match level {
                    TruncLevel::Minute => local.date().and_hms_opt(local.hour(), local.minute(), 0)?,
                    TruncLevel::Hour => local.date().and_hms_opt(local.hour(), 0, 0)?,
                    _ => local.date().and_hms_opt(0, 0, 0)?,
                };
                resolve_local(truncated, tz, Some(zoned.offset().fix()))?
            }
            _ => {
                let first = period_start(local_of(micros)?.date(), level)?;
                resolve_local(first.and_hms_opt(0, 0, 0)?, tz, None)?
            }
        })
    }

    proptest! {
        /// Truncations through a zone's clock (its offsets looked up once per span, a wall
        /// clock's instant found without a lookup away from changes) equal chrono's lookups
        /// for every value: near changes of offset, in gaps and overlaps, anywhere at all.
        #[test]
        fn truncations_through_the_clock_equal_lookups(
            micros in super::super::zone_offsets::drawn::micros(),
            level in prop::sample::select(vec![
                TruncLevel::Minute, TruncLevel::Hour, TruncLevel::Day, TruncLevel::Week,
                TruncLevel::Month, TruncLevel::Quarter, TruncLevel::Year,
            ]),
            zone in super::super::zone_offsets::drawn::zones(),
        ) {
            let tz: Tz = zone.parse().unwrap();
            let clock = WallClock::new(zone).unwrap();
            prop_assert_eq!(truncate(micros, level, &clock, &tz), truncate_by_lookup(micros, level, &tz), "{} {} {}", zone, level, micros);
        }
    }

    /// Arguments of `function` built from `columns` (each of `rows` values), those marked in
    /// `constant` kept as their first value only, and the same with that value spread to
    /// every row.
    fn constant_and_spread(columns: &[ArrayRef], constant: &[bool]) -> (Vec<Arg>, Vec<Arg>) {
        let rows = columns[0].len();
        columns
            .iter()
            .zip(constant)
            .map(|(column, &constant)| {
                if constant {
                    let first = column.slice(0, 1);
                    let spread =
                        arrow::compute::take(&first, &arrow::array::UInt32Array::from(vec![0u32; rows]), None).unwrap();
                    (Arg { values: first, constant: true }, Arg { values: spread, constant: false })
                } else {
                    (Arg { values: column.clone(), constant: false }, Arg { values: column.clone(), constant: false })
                }
            })
            .unzip()
    }

    proptest! {
        // The doubles that would tell a wrong shortcut (the text at a half, the double just
        // below it) are a few in a thousand of those drawn.
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// Rounding a double in floating point, where it answers, gives what rounding its
        /// shortest decimal text gives: random doubles, decimals of few digits, halves and
        /// values a few ulps from a half, every scale from -25 to 25.
        #[test]
        fn doubles_round_by_arithmetic_as_by_text(
            (value, scale) in prop_oneof![
                (any::<f64>(), -25i32..25),
                // Decimals of d digits rounded to about d digits (2.675 to 2).
                (-1_000_000_000i64..1_000_000_000, 0i32..8, -2i32..1)
                    .prop_map(|(n, d, less)| (n as f64 / 10f64.powi(d), d - 1 + less)),
                // Halves at the rounded digit, and doubles a few ulps either side.
                (-100_000i64..100_000, 0i32..6, -3i64..4).prop_map(|(n, d, ulps)| {
                    let half = (n as f64 + 0.5) / 10f64.powi(d);
                    (f64::from_bits((half.to_bits() as i64 + ulps) as u64), d)
                }),
                // Halves of a power of ten (1250 to hundreds), and a few ulps either side.
                (-100_000i64..100_000, 1i32..16, -3i64..4).prop_map(|(n, d, ulps)| {
                    let half = (n as f64 + 0.5) * 10f64.powi(d);
                    (f64::from_bits((half.to_bits() as i64 + ulps) as u64), -d)
                }),
            ],
        ) {
            let fast = round_double_by_arithmetic(value, scale);
            // Every value that scales below 2^40 is answered without its text.
            let small = (value * 10f64.powi(scale)).abs() < (1u64 << 39) as f64 && scale.abs() <= 22;
            prop_assert!(fast.is_some() || !small, "round({}, {}) went to its text", value, scale);
            if let Some(fast) = fast {
                let exact = round_double_by_text(value, scale);
                prop_assert_eq!(fast.to_bits(), exact.to_bits(), "round({}, {})", value, scale);
            }
        }
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

        /// A constant argument, read for every row, gives what the same constant spread to
        /// every row gives, in any position and NULL included: every function of more than one
        /// argument, errors (an overflow, a division by zero) included.
        #[test]
        fn constant_arguments_equal_spread_ones(
            rows in 1usize..24,
            texts in prop::collection::vec(prop::collection::vec(prop::option::weighted(0.85, "[aé ,b-]{0,5}"), 24), 3),
            numbers in prop::collection::vec(prop::collection::vec(
                prop::option::weighted(0.85, prop_oneof![-6i32..6, Just(i32::MIN), Just(i32::MAX)]), 24), 2),
            constant in any::<[bool; 3]>(),
            which in 0usize..13,
        ) {
            use ScalarFunction as F;
            let text = |i: usize| -> ArrayRef { Arc::new(StringArray::from(texts[i][..rows].to_vec())) };
            let int32 = |i: usize| -> ArrayRef { Arc::new(Int32Array::from(numbers[i][..rows].to_vec())) };
            let date = |i: usize| -> ArrayRef { Arc::new(Date32Array::from(numbers[i][..rows].to_vec())) };
            let int64 = |i: usize| -> ArrayRef {
                Arc::new(Int64Array::from(numbers[i][..rows].iter().map(|v| v.map(i64::from)).collect::<Vec<_>>()))
            };
            let (function, columns, data_type): (F, Vec<ArrayRef>, DataType) = match which {
                0 => (F::Trim { leading: true, trailing: false }, vec![text(0), text(1)], DataType::Utf8),
                1 => (F::Substring, vec![text(0), int32(0), int32(1)], DataType::Utf8),
                2 => (F::Substring, vec![text(0), int32(0)], DataType::Utf8),
                3 => (F::Concat, vec![text(0), text(1), text(2)], DataType::Utf8),
                4 => (F::StartsWith, vec![text(0), text(1)], DataType::Boolean),
                5 => (F::EndsWith, vec![text(0), text(1)], DataType::Boolean),
                6 => (F::Contains, vec![text(0), text(1)], DataType::Boolean),
                7 => (F::RLike(None), vec![text(0), text(1)], DataType::Boolean),
                8 => (F::DateAdd, vec![date(0), int32(1)], DataType::Date32),
                9 => (F::DateSub, vec![date(0), int32(1)], DataType::Date32),
                10 => (F::DateDiff, vec![date(0), date(1)], DataType::Int32),
                11 => (F::Mod, vec![int64(0), int64(1)], DataType::Int64),
                _ => (F::Pmod, vec![int64(0), int64(1)], DataType::Int64),
            };
            let mut constant = constant[..columns.len()].to_vec();
            if constant.iter().all(|&c| c) {
                constant[0] = false; // all constant is a one-row call, not this one
            }
            let (given, spread) = constant_and_spread(&columns, &constant);
            let got = call(&function, &given, rows, &data_type, "UTC", "f");
            let expected = call(&function, &spread, rows, &data_type, "UTC", "f");
            match (expected, got) {
                (Ok(expected), Ok(got)) => prop_assert_eq!(expected.to_data(), got.to_data()),
                (Err(_), Err(_)) => {}
                (expected, got) => prop_assert!(false, "{:?} against {:?}", expected.map(|a| a.len()), got.map(|a| a.len())),
            }
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
            let rows = left.len();
            let expected = remainder(
                &Arg { values: left.clone(), constant: false },
                &Arg { values: spread, constant: false },
                rows,
                positive,
                &width,
                "r",
            );
            let got = remainder_by_constant(&left, &constant, positive, &width, "r").unwrap();
            match (expected, got) {
                (Ok(expected), Ok(got)) => prop_assert_eq!(expected.to_data(), got.to_data()),
                (Err(_), Err(_)) => {}
                (expected, got) => prop_assert!(false, "{:?} against {:?}", expected.map(|a| a.len()), got.map(|a| a.len())),
            }
        }
    }
}
