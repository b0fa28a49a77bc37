//! Typed constants of filter expressions, with the Spark SQL type their text gives them.

use std::fmt;

use arrow::array::timezone::Tz;
use chrono::{Duration, NaiveDateTime, Offset, TimeZone};

use super::SqlType;
pub(crate) use super::zone_offsets::parse_time_zone;
use super::zone_offsets::{CHRONO_MICROS, ZoneClock};

/// A constant in a filter expression. The variant is the Spark type the literal's text
/// gives it: `1` is INT, `1L` BIGINT, `1.5` DECIMAL(2,1), `1.5D` or `1.5E0` DOUBLE, ...
///
/// Equality compares floats bit for bit, so a literal NaN equals itself and `-0.0` differs
/// from `0.0` (they are different texts; SQL comparison semantics live in evaluation).
///
/// ```
/// use pqsift::filter::{Literal, SqlType};
///
/// assert_eq!(Literal::Int(5).sql_type(), SqlType::Int);
/// let price = Literal::Decimal { unscaled: 150, scale: 2 };
/// assert_eq!(price.sql_type(), SqlType::Decimal { precision: 3, scale: 2 });
/// assert_eq!(price.to_string(), "1.50");
/// assert_eq!(Literal::Double(f64::NAN), Literal::Double(f64::NAN));
/// ```
#[derive(Debug, Clone)]
pub enum Literal {
    /// `NULL`, of no type until bound.
    Null,
    /// `TRUE` / `FALSE`
    Boolean(bool),
    /// TINYINT, written `5Y`.
    Byte(i8),
    /// SMALLINT, written `5S`.
    Short(i16),
    /// INT: an integer literal that fits 32 bits.
    Int(i32),
    /// BIGINT: `5L`, or an integer literal too large for INT.
    Long(i64),
    /// FLOAT, written `1.5F`.
    Float(f32),
    /// DOUBLE, written `1.5D` or with an exponent (`1.5E0`).
    Double(f64),
    /// DECIMAL: `unscaled × 10^-scale`, written `1.50` or `150BD`; its precision is the
    /// number of digits the text has (at least the scale), as Spark gives it.
    Decimal {
        /// The value with the decimal point removed.
        unscaled: i128,
        /// Digits after the decimal point, 0..=38.
        scale: i8,
    },
    /// STRING, `'text'`.
    String(String),
    /// BINARY, `X'0AFF'`.
    Binary(Vec<u8>),
    /// DATE `'2024-01-31'`, as days since 1970-01-01.
    Date(i32),
    /// TIMESTAMP `'2024-01-31 12:00:00'`.
    Timestamp(TimestampLiteral),
}

impl Literal {
    /// The Spark type of the literal.
    ///
    /// ```
    /// use pqsift::filter::{Literal, SqlType};
    /// assert_eq!(Literal::Long(1).sql_type(), SqlType::Long);
    /// assert_eq!(Literal::Null.sql_type(), SqlType::Null);
    /// ```
    pub fn sql_type(&self) -> SqlType {
        match self {
            Self::Null => SqlType::Null,
            Self::Boolean(_) => SqlType::Boolean,
            Self::Byte(_) => SqlType::Byte,
            Self::Short(_) => SqlType::Short,
            Self::Int(_) => SqlType::Int,
            Self::Long(_) => SqlType::Long,
            Self::Float(_) => SqlType::Float,
            Self::Double(_) => SqlType::Double,
            Self::Decimal { unscaled, scale } => {
                SqlType::Decimal { precision: decimal_precision(*unscaled, *scale), scale: *scale }
            }
            Self::String(_) => SqlType::String,
            Self::Binary(_) => SqlType::Binary,
            Self::Date(_) => SqlType::Date,
            Self::Timestamp(_) => SqlType::Timestamp,
        }
    }
}

impl Literal {
    /// The value of a one-element Arrow array as a literal of its Spark type; `None` for a
    /// null, a type without literals here (TIMESTAMP_NTZ, nested types) or a value out of
    /// range. Timestamps are truncated to microseconds, as Spark reads them.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow::array::{ArrayRef, Decimal128Array, StringArray};
    /// use pqsift::filter::Literal;
    /// let price: ArrayRef = Arc::new(Decimal128Array::from(vec![150]).with_precision_and_scale(10, 2).unwrap());
    /// assert_eq!(Literal::from_arrow(&price).unwrap().to_string(), "1.50");
    /// let text: ArrayRef = Arc::new(StringArray::from(vec!["abc"]));
    /// assert_eq!(Literal::from_arrow(&text).unwrap().to_string(), "'abc'");
    /// ```
    pub fn from_arrow(value: &arrow::array::ArrayRef) -> Option<Self> {
        use arrow::array::{Array, AsArray};
        use arrow::datatypes::*;
        if value.is_empty() || value.is_null(0) {
            return None;
        }
        Some(match value.data_type() {
            DataType::Boolean => Self::Boolean(value.as_boolean().value(0)),
            DataType::Int8 => Self::Byte(value.as_primitive::<Int8Type>().value(0)),
            DataType::Int16 => Self::Short(value.as_primitive::<Int16Type>().value(0)),
            DataType::Int32 => Self::Int(value.as_primitive::<Int32Type>().value(0)),
            DataType::Int64 => Self::Long(value.as_primitive::<Int64Type>().value(0)),
            DataType::UInt8 => Self::Short(value.as_primitive::<UInt8Type>().value(0).into()),
            DataType::UInt16 => Self::Int(value.as_primitive::<UInt16Type>().value(0).into()),
            DataType::UInt32 => Self::Long(value.as_primitive::<UInt32Type>().value(0).into()),
            DataType::UInt64 => {
                Self::Decimal { unscaled: value.as_primitive::<UInt64Type>().value(0).into(), scale: 0 }
            }
            DataType::Float32 => Self::Float(value.as_primitive::<Float32Type>().value(0)),
            DataType::Float64 => Self::Double(value.as_primitive::<Float64Type>().value(0)),
            DataType::Decimal128(_, scale) if *scale >= 0 => {
                Self::Decimal { unscaled: value.as_primitive::<Decimal128Type>().value(0), scale: *scale }
            }
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                let text = arrow::compute::cast(value, &DataType::Utf8).ok()?;
                Self::String(text.as_string::<i32>().value(0).to_string())
            }
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => {
                let bytes = arrow::compute::cast(value, &DataType::Binary).ok()?;
                Self::Binary(bytes.as_binary::<i32>().value(0).to_vec())
            }
            DataType::Date32 => Self::Date(value.as_primitive::<Date32Type>().value(0)),
            DataType::Date64 => {
                Self::Date(value.as_primitive::<Date64Type>().value(0).div_euclid(86_400_000).try_into().ok()?)
            }
            DataType::Timestamp(_, Some(_)) => {
                let micros = arrow::compute::cast(value, &DataType::Timestamp(TimeUnit::Microsecond, None)).ok()?;
                let micros = micros.as_primitive::<TimestampMicrosecondType>().value(0);
                let local = chrono::DateTime::from_timestamp_micros(micros)?.naive_utc();
                Self::Timestamp(TimestampLiteral { local, zone: Some(LiteralZone::Offset(0)) })
            }
            DataType::Dictionary(_, values) => return Self::from_arrow(&arrow::compute::cast(value, values).ok()?),
            _ => return None,
        })
    }
}

/// The number of decimal digits of `|unscaled|` (1 for zero).
pub(crate) fn decimal_digits(unscaled: i128) -> u8 {
    let mut magnitude = unscaled.unsigned_abs();
    let mut digits = 1;
    while magnitude >= 10 {
        magnitude /= 10;
        digits += 1;
    }
    digits
}

/// Spark's precision for a decimal literal: its digit count, at least its scale.
fn decimal_precision(unscaled: i128, scale: i8) -> u8 {
    decimal_digits(unscaled).max(scale.max(0) as u8)
}

impl PartialEq for Literal {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            // Bitwise: literals are texts, and NaN must equal itself for round trips.
            (Self::Float(a), Self::Float(b)) => a.to_bits() == b.to_bits(),
            (Self::Double(a), Self::Double(b)) => a.to_bits() == b.to_bits(),
            (Self::Null, Self::Null) => true,
            (Self::Boolean(a), Self::Boolean(b)) => a == b,
            (Self::Byte(a), Self::Byte(b)) => a == b,
            (Self::Short(a), Self::Short(b)) => a == b,
            (Self::Int(a), Self::Int(b)) => a == b,
            (Self::Long(a), Self::Long(b)) => a == b,
            (Self::Decimal { unscaled: a, scale: sa }, Self::Decimal { unscaled: b, scale: sb }) => a == b && sa == sb,
            (Self::String(a), Self::String(b)) => a == b,
            (Self::Binary(a), Self::Binary(b)) => a == b,
            (Self::Date(a), Self::Date(b)) => a == b,
            (Self::Timestamp(a), Self::Timestamp(b)) => a == b,
            _ => false,
        }
    }
}

/// An explicit time zone written inside a TIMESTAMP literal.
///
/// ```
/// use pqsift::filter::LiteralZone;
/// assert_eq!(LiteralZone::Offset(5400).to_string(), "+01:30");
/// assert_eq!(LiteralZone::Named("Europe/Paris".into()).to_string(), "Europe/Paris");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiteralZone {
    /// A fixed offset east of UTC in seconds (`Z` is offset 0).
    Offset(i32),
    /// A region or alias the tz database knows, e.g. `America/New_York` or `UTC`.
    Named(String),
}

impl fmt::Display for LiteralZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Offset(seconds) => {
                let sign = if *seconds < 0 { '-' } else { '+' };
                let magnitude = seconds.unsigned_abs();
                let (hours, minutes, secs) = (magnitude / 3600, magnitude / 60 % 60, magnitude % 60);
                write!(f, "{sign}{hours:02}:{minutes:02}")?;
                if secs != 0 {
                    write!(f, ":{secs:02}")?;
                }
                Ok(())
            }
            Self::Named(name) => f.write_str(name),
        }
    }
}

/// The value of a `TIMESTAMP '...'` literal: a wall-clock date-time (microsecond
/// precision) and the zone written in the text, if any. Without a zone Spark reads the
/// wall clock in the session time zone, which is only known when binding.
///
/// ```
/// use pqsift::filter::TimestampLiteral;
///
/// let ts = TimestampLiteral::parse("2024-03-01 12:30:00.5+01:00").unwrap();
/// assert_eq!(ts.to_string(), "2024-03-01 12:30:00.5+01:00");
/// // 11:30:00.5 UTC, whatever the session time zone.
/// assert_eq!(ts.instant_micros("America/New_York").unwrap(), 1_709_292_600_500_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimestampLiteral {
    /// The date and time as written, truncated to microseconds.
    pub local: NaiveDateTime,
    /// The zone written after the time, if any.
    pub zone: Option<LiteralZone>,
}

impl TimestampLiteral {
    /// Microseconds since the epoch (UTC) of this timestamp, reading a zone-less literal in
    /// `session_time_zone` (a tz name or `±hh:mm`). A wall clock the zone skips (a DST gap)
    /// moves forward by the gap and an ambiguous one takes the earlier instant, as Java's
    /// `ZonedDateTime` does for Spark. Errors on an unknown zone or an out-of-range value.
    ///
    /// ```
    /// use pqsift::filter::TimestampLiteral;
    /// let ts = TimestampLiteral::parse("1970-01-01 01:00:00").unwrap();
    /// assert_eq!(ts.instant_micros("UTC").unwrap(), 3_600_000_000);
    /// assert_eq!(ts.instant_micros("+01:00").unwrap(), 0);
    /// ```
    pub fn instant_micros(&self, session_time_zone: &str) -> crate::Result<i64> {
        let zone_text = match &self.zone {
            Some(LiteralZone::Offset(seconds)) => {
                let utc = shift(&self.local, -i64::from(*seconds)).ok_or_else(|| out_of_range(self))?;
                return Ok(utc.and_utc().timestamp_micros());
            }
            Some(LiteralZone::Named(name)) => name.as_str(),
            None => session_time_zone,
        };
        let tz = parse_time_zone(zone_text)?;
        let utc = local_to_utc(&self.local, &tz).ok_or_else(|| out_of_range(self))?;
        Ok(utc.and_utc().timestamp_micros())
    }

    /// The date-time the text says, as microseconds since 1970-01-01 00:00:00 of a
    /// TIMESTAMP_NTZ. A zone in the text is ignored, as Spark's `CAST(string AS
    /// TIMESTAMP_NTZ)` ignores it (the zone must still be a valid one to parse).
    ///
    /// ```
    /// use pqsift::filter::TimestampLiteral;
    /// let ts = TimestampLiteral::parse("1970-01-01 01:00:00Z").unwrap();
    /// assert_eq!(ts.wall_clock_micros(), 3_600_000_000);
    /// ```
    pub fn wall_clock_micros(&self) -> i64 {
        self.local.and_utc().timestamp_micros()
    }
}

impl fmt::Display for TimestampLiteral {
    /// `yyyy-mm-dd hh:mm:ss[.ffffff][zone]`, fraction without trailing zeros.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.local.format("%Y-%m-%d %H:%M:%S"))?;
        let micros = self.local.and_utc().timestamp_subsec_micros();
        if micros != 0 {
            let fraction = format!("{micros:06}");
            write!(f, ".{}", fraction.trim_end_matches('0'))?;
        }
        match &self.zone {
            Some(zone @ LiteralZone::Offset(_)) => write!(f, "{zone}"),
            Some(zone @ LiteralZone::Named(_)) => write!(f, " {zone}"),
            None => Ok(()),
        }
    }
}

/// Instants seen as wall clocks of one session time zone, in microseconds. A zone that never
/// changes (UTC, `±hh:mm`) adds its offset to each instant; any other looks its offset up
/// once per span of a few days ([`ZoneClock`]).
///
/// ```text
/// "+08:00": instant 0 (1970-01-01 00:00 UTC) → 28_800_000_000 (08:00 on the wall)
/// ```
pub(crate) enum WallClock {
    /// The offset in microseconds.
    Fixed(i64),
    Zone(Box<ZoneClock>),
}

impl WallClock {
    pub(crate) fn new(session_time_zone: &str) -> crate::Result<Self> {
        let tz = parse_time_zone(session_time_zone)?;
        Ok(match super::fixed_offset_seconds(session_time_zone) {
            Some(seconds) => Self::Fixed(i64::from(seconds) * 1_000_000),
            None => Self::Zone(Box::new(ZoneClock::new(tz))),
        })
    }

    /// The wall clock of `instant`; `None` where the instant or its wall clock is outside
    /// chrono's range of date-times, for either kind of zone.
    #[inline]
    pub(crate) fn local_micros(&self, instant: i64) -> Option<i64> {
        let local = instant.checked_add(self.offset_micros(instant)?)?;
        CHRONO_MICROS.contains(&local).then_some(local)
    }

    /// The zone's offset at `instant` (µs); `None` outside chrono's range.
    #[inline]
    pub(crate) fn offset_micros(&self, instant: i64) -> Option<i64> {
        match self {
            Self::Fixed(offset) => CHRONO_MICROS.contains(&instant).then_some(*offset),
            Self::Zone(zone) => zone.offset_micros(instant),
        }
    }

    /// The one instant whose wall clock is `wall`, where no change of offset is near it;
    /// `None` near one (a gap or an overlap may be there: its rules decide) or where the
    /// wall clock or the instant is outside chrono's range.
    #[inline]
    pub(crate) fn unique_instant(&self, wall: i64) -> Option<i64> {
        let instant = match self {
            Self::Fixed(offset) => wall.checked_sub(*offset)?,
            Self::Zone(zone) => zone.unique_instant(wall)?,
        };
        (CHRONO_MICROS.contains(&wall) && CHRONO_MICROS.contains(&instant)).then_some(instant)
    }

    /// The instant of the wall clock `wall`, a gap or an overlap resolved as Java does
    /// ([`local_to_utc`]); `None` past chrono's range.
    #[inline]
    pub(crate) fn instant_micros(&self, wall: i64) -> Option<i64> {
        self.unique_instant(wall).or_else(|| match self {
            Self::Fixed(_) => None,
            Self::Zone(zone) => {
                let local = chrono::DateTime::from_timestamp_micros(wall)?.naive_utc();
                Some(local_to_utc(&local, zone.tz())?.and_utc().timestamp_micros())
            }
        })
    }
}

/// The UTC date-time of a wall clock in `tz`, resolving DST gaps and overlaps like Java;
/// `None` past chrono's range.
pub(crate) fn local_to_utc(local: &NaiveDateTime, tz: &Tz) -> Option<NaiveDateTime> {
    use chrono::LocalResult;
    let offset = match tz.offset_from_local_datetime(local) {
        LocalResult::Single(offset) => offset.fix().local_minus_utc(),
        // The earlier instant has the larger offset (the one before the transition).
        LocalResult::Ambiguous(a, b) => a.fix().local_minus_utc().max(b.fix().local_minus_utc()),
        // In a gap: use the offset before the transition, which moves the wall clock
        // forward by the gap's length. Transitions are far more than a day apart.
        LocalResult::None => {
            let before = shift(local, -86_400)?;
            tz.offset_from_utc_datetime(&before).fix().local_minus_utc()
        }
    };
    shift(local, -i64::from(offset))
}

/// `datetime + seconds`, `None` on overflow.
pub(crate) fn shift(datetime: &NaiveDateTime, seconds: i64) -> Option<NaiveDateTime> {
    datetime.checked_add_signed(Duration::try_seconds(seconds)?)
}

fn out_of_range(literal: &TimestampLiteral) -> crate::PqsiftError {
    crate::PqsiftError::filter(format!("TIMESTAMP '{literal}' is out of range"))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// An instant of a wall clock, found through the clock's spans, is the one Java's
        /// rules give (chrono's lookup of the local time), in every zone: near changes of
        /// offset, in gaps and overlaps, and at the ends of chrono's range.
        #[test]
        fn instants_of_wall_clocks_resolve_as_java_does(
            wall in super::super::zone_offsets::drawn::micros(),
            zone in super::super::zone_offsets::drawn::zones(),
        ) {
            let clock = WallClock::new(zone).unwrap();
            let tz = parse_time_zone(zone).unwrap();
            let expected = chrono::DateTime::from_timestamp_micros(wall)
                .and_then(|local| local_to_utc(&local.naive_utc(), &tz))
                .map(|instant| instant.and_utc().timestamp_micros());
            prop_assert_eq!(clock.instant_micros(wall), expected, "{} at {}", zone, wall);
        }

        /// A zone that never changes gives each instant the wall clock its offset looked up
        /// gives, the ends of chrono's range and instants past them (`None`) included.
        #[test]
        fn fixed_zones_equal_their_looked_up_offsets(
            instant in prop_oneof![
                any::<i64>(),
                -4_000_000_000_000_000i64..4_000_000_000_000_000,
                (-100_000i64..100_000).prop_map(|d| *CHRONO_MICROS.start() + d),
                (-100_000i64..100_000).prop_map(|d| *CHRONO_MICROS.end() + d),
            ],
            zone in proptest::sample::select(vec!["UTC", "Etc/UTC", "GMT", "UCT", "+08:00", "-03:30", "+14:00", "-12:00"]),
        ) {
            let fixed = WallClock::new(zone).unwrap();
            prop_assert!(matches!(fixed, WallClock::Fixed(_)));
            let looked_up = WallClock::Zone(Box::new(ZoneClock::new(parse_time_zone(zone).unwrap())));
            prop_assert_eq!(fixed.local_micros(instant), looked_up.local_micros(instant));
        }
    }
}
