//! Spark's rules for reading values from text: what `CAST(string AS type)` accepts.
//!
//! Spark trims white space and control characters first; the integral casts take an
//! optional sign and digits only (with ANSI mode on, `'1.5'` is not a BIGINT); the
//! floating casts take Java's syntax plus `NaN` / `Infinity` / `inf` in any case; dates
//! take `yyyy[-m[m][-d[d]]]` optionally followed by a space or `T` and anything; timestamps
//! take a date, a time and a zone (see [`parse_timestamp_text`]). `None` means the text is
//! not a value of the type: the caller raises Spark's `CAST_INVALID_INPUT`.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};

use super::literal::{LiteralZone, TimestampLiteral, parse_time_zone};

/// The text without the leading and trailing white space and control characters Spark
/// ignores (`UTF8String.trimAll`).
fn trim_spark(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c.is_control())
}

/// `CAST(text AS BIGINT)` under ANSI mode: optional sign, digits, nothing else.
pub(crate) fn parse_long(text: &str) -> Option<i64> {
    let text = trim_spark(text);
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.strip_prefix('+').unwrap_or(text).parse().ok()
}

/// `CAST(text AS DOUBLE)`: Java's `Double.parseDouble` syntax (an optional `d`/`f`
/// suffix) and Spark's special values `NaN`, `Infinity`, `inf` with optional sign, any case.
pub(crate) fn parse_double(text: &str) -> Option<f64> {
    let text = trim_spark(text);
    match text.to_ascii_lowercase().as_str() {
        "nan" => return Some(f64::NAN),
        "inf" | "+inf" | "infinity" | "+infinity" => return Some(f64::INFINITY),
        "-inf" | "-infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    let number = text.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(text);
    // Rust's parser also takes "inf"/"nan" spellings Java rejects: allow digits only.
    if !number.bytes().any(|b| b.is_ascii_digit())
        || !number.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
    {
        return None;
    }
    number.parse().ok()
}

/// `CAST(text AS FLOAT)`: as [`parse_double`], rounded once, straight to 32 bits.
pub(crate) fn parse_float(text: &str) -> Option<f32> {
    let value = parse_double(text)?;
    if value.is_nan() || value.is_infinite() {
        return Some(value as f32);
    }
    let text = trim_spark(text);
    text.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(text).parse().ok()
}

/// `CAST(text AS BOOLEAN)`: `t`, `true`, `y`, `yes`, `1` and their negations, any case.
pub(crate) fn parse_boolean(text: &str) -> Option<bool> {
    match trim_spark(text).to_ascii_lowercase().as_str() {
        "t" | "true" | "y" | "yes" | "1" => Some(true),
        "f" | "false" | "n" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// A decimal number read from text: `negative`, the significant `digits` and the power of
/// ten they are multiplied by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecimalText {
    pub negative: bool,
    /// ASCII digits without leading zeros ("" for zero).
    pub digits: String,
    pub exponent: i64,
}

/// Reads `[+-]digits[.digits][(e|E)[+-]digits]` (Java's `BigDecimal` syntax).
pub(crate) fn parse_decimal_text(text: &str) -> Option<DecimalText> {
    let text = trim_spark(text);
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], rest[at + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (integer, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if integer.is_empty() && fraction.is_empty()
        || !integer.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit())
        || exponent.unsigned_abs() > 10_000
    {
        return None;
    }
    let all_digits = format!("{integer}{fraction}");
    Some(DecimalText {
        negative,
        digits: all_digits.trim_start_matches('0').to_string(),
        exponent: exponent - fraction.len() as i64,
    })
}

/// Why a decimal value does not fit a DECIMAL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DecimalOverflow;

impl DecimalText {
    /// The unscaled value at `scale`, rounded half up (away from zero) as Spark's
    /// `Decimal.changePrecision` does; `Err` when more than `precision` digits remain.
    pub fn to_unscaled(&self, precision: u8, scale: i8) -> Result<i128, DecimalOverflow> {
        let shift = self.exponent + i64::from(scale);
        let (mut kept, round_up) = if shift >= 0 {
            let zeros = if self.digits.is_empty() { 0 } else { shift as usize };
            (format!("{}{}", self.digits, "0".repeat(zeros)), false)
        } else {
            let dropped = shift.unsigned_abs() as usize;
            if dropped > self.digits.len() {
                (String::new(), false)
            } else {
                let (kept, gone) = self.digits.split_at(self.digits.len() - dropped);
                (kept.to_string(), gone.as_bytes().first().is_some_and(|d| *d >= b'5'))
            }
        };
        if kept.is_empty() {
            kept.push('0');
        }
        if kept.trim_start_matches('0').len() > usize::from(precision) {
            return Err(DecimalOverflow);
        }
        let mut value: i128 = kept.parse().map_err(|_| DecimalOverflow)?;
        if round_up {
            value += 1;
            if super::literal::decimal_digits(value) > precision {
                return Err(DecimalOverflow);
            }
        }
        Ok(if self.negative { -value } else { value })
    }
}

/// Reads `yyyy[-m[m][-d[d]]]`: the year, month and day and the rest of the text.
fn parse_date_prefix(text: &str) -> Option<(NaiveDate, &str)> {
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut segments = [0u32; 3];
    let mut count = 0;
    while count < 3 {
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            at += 1;
        }
        let width = at - start;
        let valid_width = if count == 0 { (4..=6).contains(&width) } else { (1..=2).contains(&width) };
        if !valid_width {
            return None;
        }
        segments[count] = text[start..at].parse().ok()?;
        count += 1;
        if count < 3 && at < bytes.len() && bytes[at] == b'-' {
            at += 1;
        } else {
            break;
        }
    }
    let month = if count > 1 { segments[1] } else { 1 };
    let day = if count > 2 { segments[2] } else { 1 };
    let date = NaiveDate::from_ymd_opt(i32::try_from(segments[0]).ok()?, month, day)?;
    Some((date, &text[at..]))
}

/// Days since 1970-01-01.
pub(crate) fn epoch_days(date: NaiveDate) -> i32 {
    // Dates chrono can represent are within ±262143 years: the day count fits i32.
    (date - NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default()).num_days() as i32
}

/// `CAST(text AS DATE)`: `yyyy[-m[m][-d[d]]]`, then nothing or a space or `T` followed by
/// anything (Spark ignores a time part). Days since 1970-01-01.
pub(crate) fn parse_date(text: &str) -> Option<i32> {
    let (date, rest) = parse_date_prefix(trim_spark(text))?;
    if !(rest.is_empty() || rest.starts_with([' ', 'T'])) {
        return None;
    }
    Some(epoch_days(date))
}

impl TimestampLiteral {
    /// Parses timestamp text the way Spark's `CAST(string AS TIMESTAMP)` does:
    /// `yyyy[-mm[-dd]][( |T)hh[:mm[:ss[.ffffff]]]][zone]`, where zone is `Z`, `±hh[:mm]`,
    /// `UTC±hh:mm` / `GMT±hh:mm`, or a tz database name. Returns `None` for anything else.
    ///
    /// ```
    /// use pqsift::filter::TimestampLiteral;
    /// assert!(TimestampLiteral::parse("2024-01-31T23:59:59Z").is_some());
    /// assert!(TimestampLiteral::parse("2024-02-30 00:00:00").is_none());
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        parse_timestamp_text(text)
    }
}

/// `CAST(text AS TIMESTAMP)`'s syntax: `yyyy[-m[m][-d[d]]]`, then optionally a space or `T`
/// and `h[h][:m[m][:s[s][.fraction]]]` (fraction truncated to microseconds), then optionally
/// a zone: `Z`, `±h[h][:mm[:ss]]`, `±hhmm`, `UTC`/`GMT`/`UT` with an optional offset, or a
/// tz database name such as `America/New_York`.
pub(crate) fn parse_timestamp_text(text: &str) -> Option<TimestampLiteral> {
    let (date, mut rest) = parse_date_prefix(trim_spark(text))?;
    let mut time = NaiveTime::MIN;
    if let Some(after) = rest.strip_prefix([' ', 'T'])
        && after.starts_with(|c: char| c.is_ascii_digit())
    {
        let (parsed, remaining) = parse_time_prefix(after)?;
        time = parsed;
        rest = remaining;
    }
    let zone_text = rest.trim();
    let zone = if zone_text.is_empty() { None } else { Some(parse_zone(zone_text)?) };
    Some(TimestampLiteral { local: NaiveDateTime::new(date, time), zone })
}

/// `h[h][:m[m][:s[s][.fraction]]]` and the rest of the text.
fn parse_time_prefix(text: &str) -> Option<(NaiveTime, &str)> {
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut parts = [0u32; 3];
    let mut count = 0;
    while count < 3 {
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_digit() && at - start < 2 {
            at += 1;
        }
        if at == start {
            return None;
        }
        parts[count] = text[start..at].parse().ok()?;
        count += 1;
        if count < 3 && at < bytes.len() && bytes[at] == b':' {
            at += 1;
        } else {
            break;
        }
    }
    let mut micros = 0u32;
    if count == 3 && at < bytes.len() && bytes[at] == b'.' {
        at += 1;
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_digit() && at - start < 9 {
            at += 1;
        }
        let fraction = &text[start..at];
        let padded = format!("{:0<6}", &fraction[..fraction.len().min(6)]);
        micros = padded.parse().ok()?;
    }
    let time = NaiveTime::from_hms_micro_opt(parts[0], parts[1], parts[2], micros)?;
    Some((time, &text[at..]))
}

/// A zone written after a timestamp.
fn parse_zone(text: &str) -> Option<LiteralZone> {
    if text == "Z" {
        return Some(LiteralZone::Offset(0));
    }
    if text.starts_with(['+', '-']) {
        return parse_offset(text).map(LiteralZone::Offset);
    }
    for prefix in ["UTC", "GMT", "UT"] {
        if let Some(offset) = text.strip_prefix(prefix)
            && offset.starts_with(['+', '-'])
        {
            return parse_offset(offset).map(LiteralZone::Offset);
        }
    }
    parse_time_zone(text).ok()?;
    Some(LiteralZone::Named(text.to_string()))
}

/// `±h[h][:mm[:ss]]` or `±hhmm` as seconds east of UTC (at most 18 hours, like Java).
fn parse_offset(text: &str) -> Option<i32> {
    let sign = if text.starts_with('-') { -1 } else { 1 };
    let body = &text[1..];
    let fields: Vec<&str> = if body.contains(':') {
        body.split(':').collect()
    } else if body.len() == 4 {
        vec![&body[..2], &body[2..]]
    } else {
        vec![body]
    };
    if fields.is_empty()
        || fields.len() > 3
        || fields.iter().any(|f| f.is_empty() || f.len() > 2 || !f.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let value = |i: usize| fields.get(i).map_or(Some(0), |f| f.parse::<i32>().ok());
    let (hours, minutes, seconds) = (value(0)?, value(1)?, value(2)?);
    if hours > 18 || minutes > 59 || seconds > 59 {
        return None;
    }
    let total = hours * 3600 + minutes * 60 + seconds;
    (total <= 18 * 3600).then_some(sign * total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_text() {
        assert_eq!(parse_long(" 42 "), Some(42));
        assert_eq!(parse_long("+7"), Some(7));
        assert_eq!(parse_long("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_long("9223372036854775808"), None);
        assert_eq!(parse_long("1.5"), None);
        assert_eq!(parse_long("abc"), None);
        assert_eq!(parse_long("-"), None);
    }

    #[test]
    fn floating_text() {
        assert!(parse_double("NaN").unwrap().is_nan());
        assert!(parse_double("nan").unwrap().is_nan());
        assert_eq!(parse_double("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_double("inf"), Some(f64::INFINITY));
        assert_eq!(parse_double("1.5d"), Some(1.5));
        assert_eq!(parse_double(" 1e3 "), Some(1000.0));
        assert_eq!(parse_double("abc"), None);
        assert_eq!(parse_double("infinityd"), None);
        assert_eq!(parse_float("0.1"), Some(0.1f32));
    }

    #[test]
    fn boolean_text() {
        assert_eq!(parse_boolean("Yes"), Some(true));
        assert_eq!(parse_boolean("0"), Some(false));
        assert_eq!(parse_boolean("maybe"), None);
    }

    #[test]
    fn decimal_text_rounds_half_up() {
        let text = parse_decimal_text("1.005").unwrap();
        assert_eq!(text.to_unscaled(10, 2), Ok(101));
        assert_eq!(parse_decimal_text("-1.005").unwrap().to_unscaled(10, 2), Ok(-101));
        assert_eq!(parse_decimal_text("1.004").unwrap().to_unscaled(10, 2), Ok(100));
        assert_eq!(parse_decimal_text("1e3").unwrap().to_unscaled(4, 0), Ok(1000));
        assert_eq!(parse_decimal_text("1e3").unwrap().to_unscaled(3, 0), Err(DecimalOverflow));
        assert_eq!(parse_decimal_text("9.99").unwrap().to_unscaled(2, 1), Err(DecimalOverflow));
        assert_eq!(parse_decimal_text("0.0001").unwrap().to_unscaled(3, 2), Ok(0));
        assert_eq!(parse_decimal_text(".5").unwrap().to_unscaled(1, 0), Ok(1));
        assert!(parse_decimal_text("1.2.3").is_none());
        assert!(parse_decimal_text(".").is_none());
    }

    #[test]
    fn date_text() {
        assert_eq!(parse_date("1970-01-02"), Some(1));
        assert_eq!(parse_date("1970-1-2"), Some(1));
        assert_eq!(parse_date("1970"), Some(0));
        assert_eq!(parse_date("1970-02"), Some(31));
        assert_eq!(parse_date("1970-01-02 12:00:00"), Some(1));
        assert_eq!(parse_date("1970-01-02T12:00"), Some(1));
        assert_eq!(parse_date("1970-02-30"), None);
        assert_eq!(parse_date("1970-01-02x"), None);
        assert_eq!(parse_date("70-01-02"), None);
    }

    #[test]
    fn timestamp_text() {
        let ts = parse_timestamp_text("2024-01-31 12:34:56.1234567").unwrap();
        assert_eq!(ts.to_string(), "2024-01-31 12:34:56.123456");
        let ts = parse_timestamp_text("2024-01-31T12:34Z").unwrap();
        assert_eq!(ts.zone, Some(LiteralZone::Offset(0)));
        assert_eq!(ts.to_string(), "2024-01-31 12:34:00+00:00");
        let ts = parse_timestamp_text("2024-01-31 12:34:56 America/New_York").unwrap();
        assert_eq!(ts.zone, Some(LiteralZone::Named("America/New_York".into())));
        assert_eq!(parse_timestamp_text("2024-01-31 01:00:00-0530").unwrap().zone, Some(LiteralZone::Offset(-19800)));
        assert_eq!(parse_timestamp_text("2024-01-31 01:00:00 UTC+1").unwrap().zone, Some(LiteralZone::Offset(3600)));
        assert!(parse_timestamp_text("2024-01-31").is_some());
        assert!(parse_timestamp_text("2024-01-31 25:00:00").is_none());
        assert!(parse_timestamp_text("2024-01-31 12:00:00 Mars/Base").is_none());
    }
}
