//! Hive-style partition discovery, as `spark.read.parquet(dir)` does it (Spark 4.3's
//! `PartitioningUtils`), checked value by value against Spark itself.
//!
//! Directories named `key=value` between the base path and a file give the file's partition
//! values. The base path is the directory scanned (or `base_path`, Spark's `basePath`);
//! reading `root/day=1` alone therefore has no `day` column unless `base_path=root`.
//! Walking up from a file's directory, `key=value` names are collected until a name
//! without `=` follows them (Spark's rule: `root/x/day=1/f` has `day`, and so has
//! `root/day=1/x/f`).
//!
//! **Types** (with inference on, the default), per value, the first that parses:
//! `int` (Java `Integer.parseInt`: `02` is 2, `+5` is 5), `bigint`, `decimal(p,0)` (an
//! integral Java `BigDecimal`: `99999999999999999999`, `1e5` → 100000, at most 38 digits),
//! `double` (Java `Double.parseDouble`: `1.5`, `.5`, `NaN`, `Infinity`, ` 5`, `1.5f`),
//! `timestamp` (exactly `yyyy-MM-dd HH:mm:ss` with at most one fraction digit, after
//! unescaping, read in the session time zone), `date` (exactly `yyyy-MM-dd`, a real
//! date), else `string`. `__HIVE_DEFAULT_PARTITION__` is null (type `void` when every
//! value is null). The column's type is the widest of its values' types: int < bigint <
//! decimal, int < double, date < timestamp; bigint or decimal with double, and any other
//! mix, give `string`. Values are then read as that type (a `string` column keeps `02`;
//! a `timestamp` column reads a date as its midnight). With inference off every column is
//! a string. `%XX` escapes are undone in names and string values (`a%2Fb` → `a/b`).
//!
//! Known differences from Spark: Java also accepts non-ASCII decimal digits and
//! hexadecimal floating-point text (`0x1p3`) as numbers; these are strings here.
//!
//! ```
//! use arrow::array::AsArray;
//! use arrow::datatypes::{DataType, Int32Type};
//! use pqsift::storage::{Location, Storage};
//! use pqsift::table::hive::{discover_partitions, HiveOptions};
//! // The same for a local directory.
//! let root = Location::parse("s3://bucket/data/events", &Storage::default()).unwrap();
//! let files = [root.join("day=02/kind=a%2Fb/part-0.parquet"), root.join("day=3/kind=__HIVE_DEFAULT_PARTITION__/part-0.parquet")];
//! let partitions = discover_partitions("events", &[root], &files, &HiveOptions::default()).unwrap().unwrap();
//! assert_eq!(partitions.schema.field(0).data_type(), &DataType::Int32);
//! assert_eq!(partitions.values.column(0).as_primitive::<Int32Type>().values(), &[2, 3]);
//! assert_eq!(partitions.values.column(1).as_string::<i32>().iter().collect::<Vec<_>>(), [Some("a/b"), None]);
//! ```

use std::sync::Arc;

use arrow::array::{
    ArrayRef, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array, NullArray, StringArray,
    TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use chrono::{NaiveDate, NaiveDateTime, NaiveTime};

use super::partition_values::PartitionValues;
use crate::error::{PqsiftError, Result};
use crate::filter::{BindOptions, local_to_utc, parse_time_zone};
use crate::storage::Location;

/// The name Hive and Spark give the directory of a null partition value.
pub const DEFAULT_PARTITION_NAME: &str = "__HIVE_DEFAULT_PARTITION__";

/// How partitions are discovered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiveOptions {
    /// Infer partition column types (Spark's `spark.sql.sources.partitionColumnTypeInference.enabled`);
    /// `false`: every partition column is a string.
    pub infer_types: bool,
    /// Timestamps in partition values are wall clocks in this zone (the session's).
    pub session_time_zone: String,
    /// Name matching of partition columns across directories.
    pub case_sensitive: bool,
}

impl Default for HiveOptions {
    fn default() -> Self {
        Self { infer_types: true, session_time_zone: "UTC".into(), case_sensitive: false }
    }
}

impl HiveOptions {
    /// The discovery options matching a filter's binding options.
    pub fn from_bind(bind: &BindOptions, infer_types: bool) -> Self {
        Self { infer_types, session_time_zone: bind.session_time_zone.clone(), case_sensitive: bind.case_sensitive }
    }
}

/// A partition column's type, as inferred from one value or widened over many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartitionType {
    Null,
    Int,
    Long,
    Decimal(u8),
    Double,
    Date,
    Timestamp,
    String,
}

impl PartitionType {
    /// Spark's `findWiderTypeForPartitionColumn`.
    fn wider(self, other: Self) -> Self {
        use PartitionType::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Null, t) | (t, Null) => t,
            (Int, Long) | (Long, Int) => Long,
            (Int, Decimal(p)) | (Decimal(p), Int) => Decimal(p.max(10)),
            (Long, Decimal(p)) | (Decimal(p), Long) => Decimal(p.max(20)),
            (Decimal(a), Decimal(b)) => Decimal(a.max(b)),
            (Int, Double) | (Double, Int) => Double,
            (Date, Timestamp) | (Timestamp, Date) => Timestamp,
            _ => String,
        }
    }

    fn arrow(self) -> DataType {
        match self {
            Self::Null => DataType::Null,
            Self::Int => DataType::Int32,
            Self::Long => DataType::Int64,
            Self::Decimal(p) => DataType::Decimal128(p, 0),
            Self::Double => DataType::Float64,
            Self::Date => DataType::Date32,
            Self::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Self::String => DataType::Utf8,
        }
    }
}

/// Discovers the Hive partitioning of `files` (data files found under `bases`, each file
/// under one of them): `Ok(None)` when no file has a `key=value` directory. Errors when
/// files disagree on the partition columns (names or depth), naming two such files.
pub fn discover_partitions(
    table: &str,
    bases: &[Location],
    files: &[Location],
    options: &HiveOptions,
) -> Result<Option<PartitionValues>> {
    let mut specs: Vec<Vec<(String, String)>> = Vec::with_capacity(files.len());
    for file in files {
        // The deepest base above the file: its parts below it.
        let relative = bases.iter().filter_map(|base| file.components_below(base)).min_by_key(Vec::len);
        specs.push(match relative {
            Some(relative) => parse_partition_path(relative),
            None => Vec::new(),
        });
    }
    let Some(first) = specs.first() else {
        return Ok(None);
    };
    let same_name =
        |a: &str, b: &str| if options.case_sensitive { a == b } else { a.to_lowercase() == b.to_lowercase() };
    for (file, spec) in files.iter().zip(&specs) {
        let agrees = spec.len() == first.len() && spec.iter().zip(first).all(|((a, _), (b, _))| same_name(a, b));
        if !agrees {
            let names = |s: &[(String, String)]| s.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(", ");
            return Err(PqsiftError::table(
                table,
                format!(
                    "conflicting partition directories: {} has partition columns [{}] but {} has [{}]",
                    files[0],
                    names(first),
                    file,
                    names(spec)
                ),
            ));
        }
    }
    if first.is_empty() {
        return Ok(None);
    }
    let mut fields = Vec::with_capacity(first.len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(first.len());
    for (position, (name, _)) in first.iter().enumerate() {
        if specs.iter().any(|s| s[position].1.is_empty()) {
            return Err(PqsiftError::table(
                table,
                format!("an empty value for partition column `{name}` (a directory `{name}=`)"),
            ));
        }
        let raws: Vec<&str> = specs.iter().map(|s| s[position].1.as_str()).collect();
        let (data_type, values) = typed_column(&raws, options)
            .map_err(|e| PqsiftError::table(table, format!("partition column `{name}`: {e}")))?;
        fields.push(Field::new(name, data_type, true));
        columns.push(values);
    }
    PartitionValues::new(Arc::new(Schema::new(fields)), columns).map(Some)
}

/// The `(column, raw value)` pairs of the directories of `relative` (a file's path parts
/// below its base), outermost
/// first, with Spark's walk: up from the file's directory, stopping at a name without `=`
/// once some were found. Names are unescaped; values are kept raw.
fn parse_partition_path(relative: Vec<String>) -> Vec<(String, String)> {
    let mut directories = relative;
    directories.pop(); // the file's own name
    let mut found = Vec::new();
    for name in directories.iter().rev() {
        match name.split_once('=') {
            Some((column, value)) if !column.is_empty() => found.push((unescape_path_name(column), value.to_string())),
            _ if !found.is_empty() => break,
            _ => {}
        }
    }
    found.reverse();
    found
}

/// Undoes Spark's path escaping: `%XX` (two hex digits) is the character XX.
///
/// ```
/// assert_eq!(pqsift::table::hive::unescape_path_name("a%2Fb%3Dc%zz"), "a/b=c%zz");
/// ```
pub fn unescape_path_name(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(char::from(high * 16 + low));
            i += 3;
            continue;
        }
        let ch = name[i..].chars().next().unwrap_or('\u{FFFD}');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

fn hex(byte: u8) -> Option<u8> {
    (byte as char).to_digit(16).map(|d| d as u8)
}

/// One partition column: the widest type of its raw values, and the values in it.
fn typed_column(raws: &[&str], options: &HiveOptions) -> Result<(DataType, ArrayRef)> {
    let tz = parse_time_zone(&options.session_time_zone)?;
    let kind = raws
        .iter()
        .map(|raw| match (*raw == DEFAULT_PARTITION_NAME, options.infer_types) {
            (true, _) => PartitionType::Null,
            (false, true) => infer_type(raw, &tz),
            (false, false) => PartitionType::String,
        })
        .fold(PartitionType::Null, PartitionType::wider);
    let not_null = || raws.iter().map(|raw| (*raw != DEFAULT_PARTITION_NAME).then_some(*raw));
    let unreadable = |raw: &str| PqsiftError::filter(format!("value `{raw}` does not read as {}", kind.arrow()));
    let array: ArrayRef = match kind {
        PartitionType::Null => Arc::new(NullArray::new(raws.len())),
        PartitionType::String => Arc::new(not_null().map(|r| r.map(unescape_path_name)).collect::<StringArray>()),
        PartitionType::Int => Arc::new(
            not_null()
                .map(|r| {
                    r.map(|r| java_parse_long(r).and_then(|v| i32::try_from(v).ok()).ok_or_else(|| unreadable(r)))
                        .transpose()
                })
                .collect::<Result<Int32Array>>()?,
        ),
        PartitionType::Long => Arc::new(
            not_null()
                .map(|r| r.map(|r| java_parse_long(r).ok_or_else(|| unreadable(r))).transpose())
                .collect::<Result<Int64Array>>()?,
        ),
        PartitionType::Decimal(p) => Arc::new(
            not_null()
                .map(|r| r.map(|r| parse_integral_decimal(r).map(|(v, _)| v).ok_or_else(|| unreadable(r))).transpose())
                .collect::<Result<Decimal128Array>>()?
                .with_precision_and_scale(p, 0)?,
        ),
        PartitionType::Double => Arc::new(
            not_null()
                .map(|r| r.map(|r| java_parse_double(r).ok_or_else(|| unreadable(r))).transpose())
                .collect::<Result<Float64Array>>()?,
        ),
        PartitionType::Date => Arc::new(
            not_null()
                .map(|r| r.map(|r| parse_date(r).map(days_since_epoch).ok_or_else(|| unreadable(r))).transpose())
                .collect::<Result<Date32Array>>()?,
        ),
        PartitionType::Timestamp => Arc::new(
            not_null()
                .map(|r| {
                    r.map(|r| {
                        let unescaped = unescape_path_name(r);
                        let local =
                            parse_timestamp(&unescaped).or_else(|| parse_date(r).map(|d| d.and_time(NaiveTime::MIN)));
                        local.and_then(|l| micros_in_zone(&l, &tz)).ok_or_else(|| unreadable(r))
                    })
                    .transpose()
                })
                .collect::<Result<TimestampMicrosecondArray>>()?
                .with_timezone("UTC"),
        ),
    };
    Ok((kind.arrow(), array))
}

/// The type Spark infers for one raw value (`inferPartitionColumnValue`).
fn infer_type(raw: &str, tz: &arrow::array::timezone::Tz) -> PartitionType {
    if let Some(value) = java_parse_long(raw) {
        return if i32::try_from(value).is_ok() { PartitionType::Int } else { PartitionType::Long };
    }
    if let Some((_, precision)) = parse_integral_decimal(raw) {
        return PartitionType::Decimal(precision);
    }
    if java_parse_double(raw).is_some() {
        return PartitionType::Double;
    }
    if parse_timestamp(&unescape_path_name(raw)).is_some_and(|local| micros_in_zone(&local, tz).is_some()) {
        return PartitionType::Timestamp;
    }
    if parse_date(raw).is_some() {
        return PartitionType::Date;
    }
    PartitionType::String
}

/// Java's `Long.parseLong` on ASCII digits: an optional sign, then digits.
fn java_parse_long(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i64>().ok()
}

/// Java's `new BigDecimal(text)` when its scale is ≤ 0 (an integer) and it has at most 38
/// digits: the value and its precision.
fn parse_integral_decimal(text: &str) -> Option<(i128, u8)> {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let negative = text.starts_with('-');
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => {
            let exponent = &unsigned[at + 1..];
            let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (&unsigned[..at], exponent.parse::<i64>().ok()?)
        }
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty() || !whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Scale = fraction digits - exponent; an integer needs scale <= 0, so the value is the
    // digits followed by -scale zeros.
    let zeros = exponent.checked_sub(fraction.len() as i64)?;
    if zeros < 0 {
        return None;
    }
    let significant = format!("{whole}{fraction}");
    let significant = significant.trim_start_matches('0');
    if significant.is_empty() {
        return Some((0, 1));
    }
    let precision = significant.len() as i64 + zeros;
    if precision > 38 {
        return None;
    }
    let mut value: i128 = significant.parse().ok()?;
    for _ in 0..zeros {
        value = value.checked_mul(10)?;
    }
    Some((if negative { -value } else { value }, precision as u8))
}

/// Java's `Double.parseDouble` (decimal forms; not hexadecimal): surrounding whitespace
/// and control characters ignored, `NaN`, `Infinity`, an optional `f`/`d` suffix.
fn java_parse_double(text: &str) -> Option<f64> {
    let trimmed = text.trim_matches(|c: char| c <= ' ');
    let unsigned = trimmed.strip_prefix(['+', '-']).unwrap_or(trimmed);
    let negative = trimmed.starts_with('-');
    let magnitude = match unsigned {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        _ => {
            let number = unsigned.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(unsigned);
            let (mantissa, exponent) = match number.find(['e', 'E']) {
                Some(at) => (&number[..at], Some(&number[at + 1..])),
                None => (number, None),
            };
            let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
            let digits_ok = !(whole.is_empty() && fraction.is_empty())
                && whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit());
            let exponent_ok = exponent.is_none_or(|e| {
                let d = e.strip_prefix(['+', '-']).unwrap_or(e);
                !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
            });
            if !digits_ok || !exponent_ok {
                return None;
            }
            number.parse::<f64>().ok()?
        }
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// Exactly `yyyy-MM-dd`, a real date.
fn parse_date(text: &str) -> Option<NaiveDate> {
    let b = text.as_bytes();
    if b.len() != 10
        || b[4] != b'-'
        || b[7] != b'-'
        || !text.bytes().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
    {
        return None;
    }
    NaiveDate::from_ymd_opt(text[0..4].parse().ok()?, text[5..7].parse().ok()?, text[8..10].parse().ok()?)
}

/// Exactly `yyyy-MM-dd HH:mm:ss` with an optional `.S` (one digit), a real date and time.
fn parse_timestamp(text: &str) -> Option<NaiveDateTime> {
    let (date, time) = text.split_at_checked(10)?;
    let date = parse_date(date)?;
    let time = time.strip_prefix(' ')?;
    let (clock, tenths) = match time.split_once('.') {
        Some((clock, fraction)) if fraction.len() == 1 && fraction.as_bytes()[0].is_ascii_digit() => {
            (clock, u32::from(fraction.as_bytes()[0] - b'0'))
        }
        Some(_) => return None,
        None => (time, 0),
    };
    let b = clock.as_bytes();
    if b.len() != 8
        || b[2] != b':'
        || b[5] != b':'
        || !clock.bytes().enumerate().all(|(i, c)| i == 2 || i == 5 || c.is_ascii_digit())
    {
        return None;
    }
    let time = NaiveTime::from_hms_milli_opt(
        clock[0..2].parse().ok()?,
        clock[3..5].parse().ok()?,
        clock[6..8].parse().ok()?,
        tenths * 100,
    )?;
    Some(date.and_time(time))
}

fn days_since_epoch(date: NaiveDate) -> i32 {
    (date - NaiveDate::default()).num_days() as i32
}

fn micros_in_zone(local: &NaiveDateTime, tz: &arrow::array::timezone::Tz) -> Option<i64> {
    Some(local_to_utc(local, tz)?.and_utc().timestamp_micros())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::partition_values::spark_type_name;
    use arrow::array::{Array, AsArray};
    use arrow::util::display::array_value_to_string;

    /// `(values, Spark's type, Spark's values)`: what `spark.read.parquet` gave for a
    /// column `p` with these directory values, session time zone UTC (Spark 4.3.0).
    const SPARK: &[(&[&str], &str, &[&str])] = &[
        (&["1", "02"], "int", &["1", "2"]),
        (&["1", "3000000000"], "bigint", &["1", "3000000000"]),
        (&["1", "99999999999999999999"], "decimal(20,0)", &["1", "99999999999999999999"]),
        (&["1", "1.5"], "double", &["1.0", "1.5"]),
        (&["3000000000", "1.5"], "string", &["3000000000", "1.5"]),
        (&["99999999999999999999", "1.5"], "string", &["99999999999999999999", "1.5"]),
        (&["1e5"], "decimal(6,0)", &["100000"]),
        (&["1E5", "2"], "decimal(10,0)", &["100000", "2"]),
        (&["1.0"], "double", &["1.0"]),
        (&["NaN"], "double", &["NaN"]),
        (&["Infinity"], "double", &["inf"]),
        (&["-0"], "int", &["0"]),
        (&["+5"], "int", &["5"]),
        (&[" 5"], "double", &["5.0"]),
        (&["5 "], "double", &["5.0"]),
        (&["1.5f"], "double", &["1.5"]),
        (&["1.5d"], "double", &["1.5"]),
        (&["0x10"], "string", &["0x10"]),
        (&["2020-01-01"], "date", &["2020-01-01"]),
        (&["2020-1-1"], "string", &["2020-1-1"]),
        (&["2020-01-01", "2020-01-01 10%3A00%3A00"], "timestamp", &["2020-01-01T00:00:00Z", "2020-01-01T10:00:00Z"]),
        (&["2020-01-01 10%3A00%3A00.5"], "timestamp", &["2020-01-01T10:00:00.500Z"]),
        (&["2020-01-01 10%3A00%3A00.123456"], "string", &["2020-01-01 10:00:00.123456"]),
        (&["2020-01-01T10%3A00%3A00"], "string", &["2020-01-01T10:00:00"]),
        (&["2020-01-01 10%3A00"], "string", &["2020-01-01 10:00"]),
        (&["2020-02-30"], "string", &["2020-02-30"]),
        (&["1", "2020-01-01"], "string", &["1", "2020-01-01"]),
        (&["__HIVE_DEFAULT_PARTITION__"], "void", &[""]),
        (&["__HIVE_DEFAULT_PARTITION__", "3"], "int", &["", "3"]),
        (&["a%2Fb", "c%3Dd"], "string", &["a/b", "c=d"]),
        (&["true"], "string", &["true"]),
        (&["00012345678901234567890"], "decimal(20,0)", &["12345678901234567890"]),
        (&["-2147483649"], "bigint", &["-2147483649"]),
        (&["1.50"], "double", &["1.5"]),
        (&["12345678901234567890123456789012345678901"], "double", &["1.2345678901234568e40"]),
        (&["1_000"], "string", &["1_000"]),
        (&["2020-01-01 10%3A00%3A00.123"], "string", &["2020-01-01 10:00:00.123"]),
        (&["2020-01-01 1%3A00%3A00"], "string", &["2020-01-01 1:00:00"]),
        (&["0001-01-01"], "date", &["0001-01-01"]),
        (&["+2020-01-01"], "string", &["+2020-01-01"]),
        (&["10000-01-01"], "string", &["10000-01-01"]),
        (&["1."], "decimal(1,0)", &["1"]),
        (&[".5"], "double", &["0.5"]),
        (&["1e400"], "double", &["inf"]),
        (&["-1e-5"], "double", &["-1e-5"]),
        (&["1.5e3"], "decimal(4,0)", &["1500"]),
        (&["1E+2"], "decimal(3,0)", &["100"]),
        (&["9223372036854775808"], "decimal(19,0)", &["9223372036854775808"]),
        (&["-0.0"], "double", &["-0.0"]),
        (&["2020-13-01"], "string", &["2020-13-01"]),
        (&["2020-01-01 24%3A00%3A00"], "string", &["2020-01-01 24:00:00"]),
        (&["1", "__HIVE_DEFAULT_PARTITION__", "1.5"], "double", &["1.0", "", "1.5"]),
    ];

    fn infer(values: &[&str], options: &HiveOptions) -> Result<(DataType, Vec<String>)> {
        let (data_type, array) = typed_column(values, options)?;
        let rendered = (0..array.len())
            .map(|i| if array.is_null(i) { String::new() } else { array_value_to_string(&array, i).unwrap() })
            .collect();
        Ok((data_type, rendered))
    }

    #[test]
    fn inference_matches_spark() {
        for (values, spark_type, spark_values) in SPARK {
            let (data_type, rendered) = infer(values, &HiveOptions::default()).unwrap();
            assert_eq!(spark_type_name(&data_type), *spark_type, "type of {values:?}");
            let expected: Vec<String> = spark_values.iter().map(|v| v.to_string()).collect();
            // Floats: compare the numbers, not their text.
            if data_type == DataType::Float64 {
                for (got, want) in rendered.iter().zip(&expected) {
                    let parse = |s: &str| if s.is_empty() { None } else { Some(s.parse::<f64>().unwrap()) };
                    assert_eq!(parse(got).map(f64::to_bits), parse(want).map(f64::to_bits), "{values:?}");
                }
            } else {
                assert_eq!(rendered, expected, "values of {values:?}");
            }
        }
    }

    #[test]
    fn timestamps_read_in_the_session_time_zone() {
        let options = HiveOptions { session_time_zone: "America/Los_Angeles".into(), ..HiveOptions::default() };
        let (_, values) = infer(&["2020-01-01", "2021-01-01 00%3A00%3A00"], &options).unwrap();
        assert_eq!(values, ["2020-01-01T08:00:00Z", "2021-01-01T08:00:00Z"]);
    }

    #[test]
    fn inference_off_keeps_text() {
        let options = HiveOptions { infer_types: false, ..HiveOptions::default() };
        let (data_type, values) = infer(&["02", "a%2Fb", DEFAULT_PARTITION_NAME], &options).unwrap();
        assert_eq!(data_type, DataType::Utf8);
        assert_eq!(values, ["02", "a/b", ""]);
    }

    #[test]
    fn partition_paths_follow_sparks_walk() {
        let base = Location::from(std::path::Path::new("/t"));
        let spec =
            |f: &str| parse_partition_path(Location::from(std::path::Path::new(f)).components_below(&base).unwrap());
        assert_eq!(spec("/t/a=1/b=x%3Dy/f.parquet"), [("a".into(), "1".into()), ("b".into(), "x%3Dy".into())]);
        assert_eq!(spec("/t/x/a=1/f.parquet"), [("a".into(), "1".into())]);
        assert_eq!(spec("/t/a=1/x/f.parquet"), [("a".into(), "1".into())]);
        assert_eq!(spec("/t/a=1/x/b=2/f.parquet"), [("b".into(), "2".into())]);
        assert_eq!(spec("/t/f.parquet"), Vec::<(String, String)>::new());
        assert_eq!(spec("/t/a%3Db=1/f.parquet"), [("a=b".into(), "1".into())]);
    }

    #[test]
    fn conflicting_directories_are_an_error() {
        let base = Location::from(std::path::Path::new("/t"));
        let bases = [base.clone()];
        let files = [base.join("a=1/f.parquet"), base.join("b=1/f.parquet")];
        let error = discover_partitions("/t", &bases, &files, &HiveOptions::default()).unwrap_err();
        assert!(
            matches!(error, PqsiftError::Table { .. })
                && error.to_string().contains("conflicting partition directories"),
            "{error}"
        );
        let files = [base.join("a=1/f.parquet"), base.join("f.parquet")];
        assert!(discover_partitions("/t", &bases, &files, &HiveOptions::default()).is_err());
        let files = [base.join("a=/f.parquet")];
        let error = discover_partitions("/t", &bases, &files, &HiveOptions::default()).unwrap_err();
        assert!(error.to_string().contains("empty value"), "{error}");
    }

    #[test]
    fn names_match_case_insensitively_and_keep_the_first_spelling() {
        let base = Location::from(std::path::Path::new("/t"));
        let bases = [base.clone()];
        let files = [base.join("Day=1/f.parquet"), base.join("day=2/f.parquet")];
        let partitions = discover_partitions("/t", &bases, &files, &HiveOptions::default()).unwrap().unwrap();
        assert_eq!(partitions.schema.field(0).name(), "Day");
        assert_eq!(partitions.values.column(0).as_primitive::<arrow::datatypes::Int32Type>().values(), &[1, 2]);
        let strict = HiveOptions { case_sensitive: true, ..HiveOptions::default() };
        assert!(discover_partitions("/t", &bases, &files, &strict).is_err());
    }
}
