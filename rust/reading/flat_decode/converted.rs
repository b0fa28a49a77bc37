//! Arrow types whose values are converted from the stored INT32, INT64 or INT96, not the
//! same bits: narrower integers (`INTEGER(8|16, _)`), `Date64` from INT32 days, timestamps
//! from INT32, decimals (Spark writes `DECIMAL(p ≤ 9)` as INT32, `p ≤ 18` as INT64, wider
//! ones as FIXED_LEN_BYTE_ARRAY: [`decimals`]), and INT96 timestamps (Spark's default:
//! [`Int96Timestamps`]).
//! The selected rows are decoded here as the stored integers, then converted value by value
//! exactly as the crate's primitive array reader converts them (`coerce_i32` /
//! `coerce_i64`: truncating casts, days × 86,400,000, precision and scale set, not
//! checked against the values), so the rows equal the crate's: an INT64 12345 read as
//! `Decimal128(18, 2)` is 123.45.

use super::*;
use arrow::array::{AsArray, PrimitiveArray};
use arrow::datatypes::{
    ArrowPrimitiveType, Date64Type, Decimal32Type, Decimal64Type, Decimal128Type, Decimal256Type, DecimalType,
    Int8Type, Int16Type, Int64Type, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, i256,
};

/// Whether a column stored as `physical` is read as `arrow_type` through a conversion here.
pub(super) fn is_converted(physical: PhysicalType, arrow_type: &DataType) -> bool {
    match physical {
        PhysicalType::INT32 => matches!(
            arrow_type,
            DataType::Int8
                | DataType::UInt8
                | DataType::Int16
                | DataType::UInt16
                | DataType::Date64
                | DataType::Timestamp(..)
                | DataType::Decimal32(..)
                | DataType::Decimal64(..)
                | DataType::Decimal128(..)
                | DataType::Decimal256(..)
        ),
        PhysicalType::INT64 => {
            matches!(arrow_type, DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..))
        }
        _ => false,
    }
}

/// The stored integers `stored` (an `Int32Array` or an `Int64Array`) as `to`, one of the
/// types [`is_converted`] names for them.
pub(super) fn convert(stored: &ArrayRef, to: &DataType) -> Result<ArrayRef, DecodeError> {
    let unsupported = || DecodeError::Corrupt(format!("{} as {to} is not decoded here", stored.data_type()));
    if let Some(ints) = stored.as_primitive_opt::<Int32Type>() {
        let as_i64 = |x: i32| x as i64;
        return Ok(match to {
            DataType::Int8 => Arc::new(ints.unary::<_, Int8Type>(|x| x as i8)),
            DataType::UInt8 => Arc::new(ints.unary::<_, UInt8Type>(|x| x as u8)),
            DataType::Int16 => Arc::new(ints.unary::<_, Int16Type>(|x| x as i16)),
            DataType::UInt16 => Arc::new(ints.unary::<_, UInt16Type>(|x| x as u16)),
            DataType::Date64 => Arc::new(ints.unary::<_, Date64Type>(|days| days as i64 * 86_400_000)),
            DataType::Timestamp(unit, zone) => match unit {
                TimeUnit::Second => {
                    Arc::new(ints.unary::<_, TimestampSecondType>(as_i64).with_timezone_opt(zone.clone()))
                }
                TimeUnit::Millisecond => {
                    Arc::new(ints.unary::<_, TimestampMillisecondType>(as_i64).with_timezone_opt(zone.clone()))
                }
                TimeUnit::Microsecond => {
                    Arc::new(ints.unary::<_, TimestampMicrosecondType>(as_i64).with_timezone_opt(zone.clone()))
                }
                TimeUnit::Nanosecond => {
                    Arc::new(ints.unary::<_, TimestampNanosecondType>(as_i64).with_timezone_opt(zone.clone()))
                }
            },
            DataType::Decimal32(p, s) => decimal(ints.reinterpret_cast::<Decimal32Type>(), *p, *s)?,
            DataType::Decimal64(p, s) => decimal(ints.unary::<_, Decimal64Type>(as_i64), *p, *s)?,
            DataType::Decimal128(p, s) => decimal(ints.unary::<_, Decimal128Type>(|x| x as i128), *p, *s)?,
            DataType::Decimal256(p, s) => {
                decimal(ints.unary::<_, Decimal256Type>(|x| i256::from_i128(x as i128)), *p, *s)?
            }
            _ => return Err(unsupported()),
        });
    }
    let longs = stored.as_primitive_opt::<Int64Type>().ok_or_else(unsupported)?;
    Ok(match to {
        DataType::Decimal64(p, s) => decimal(longs.reinterpret_cast::<Decimal64Type>(), *p, *s)?,
        DataType::Decimal128(p, s) => decimal(longs.unary::<_, Decimal128Type>(|x| x as i128), *p, *s)?,
        DataType::Decimal256(p, s) => {
            decimal(longs.unary::<_, Decimal256Type>(|x| i256::from_i128(x as i128)), *p, *s)?
        }
        _ => return Err(unsupported()),
    })
}

/// Decimals stored as FIXED_LEN_BYTE_ARRAY (`values`: each sign-extended from its
/// big-endian bytes) as `Decimal128(precision, scale)`.
pub(super) fn decimals(
    values: Vec<i128>,
    nulls: Option<NullBuffer>,
    precision: u8,
    scale: i8,
) -> Result<ArrayRef, DecodeError> {
    decimal(PrimitiveArray::<Decimal128Type>::new(ScalarBuffer::from(values), nulls), precision, scale)
}

/// `values` with the decimal type's precision and scale (refused when they are not a
/// decimal's: the file's schema is wrong).
fn decimal<T: DecimalType + ArrowPrimitiveType>(
    values: PrimitiveArray<T>,
    precision: u8,
    scale: i8,
) -> Result<ArrayRef, DecodeError> {
    let values = values.with_precision_and_scale(precision, scale).map_err(|e| DecodeError::Corrupt(e.to_string()))?;
    Ok(Arc::new(values))
}

/// The sink of INT96 timestamps as `unit`s since the epoch: each page's selected rows read
/// as [`Int96`] pairs (day, nanoseconds), then converted while they are in cache into the
/// output's 8 bytes a row (the whole column's pairs, 16 bytes a row, written and read back
/// again, cost more than the conversion).
///
/// First Spark's microseconds, computed as Spark's `fromJulianDay` computes them, wrapping
/// in 64 bits: Spark's writer wraps the same way for instants past year ~290,000 (its
/// Julian day offset overflows), so the pair gives back the instant written — where the
/// crate, computing in the unit directly, gives another. Then the unit: milliseconds and
/// seconds rounded down (as the crate rounds), nanoseconds with the microseconds'
/// nanoseconds added back — an instant the nanoseconds' 64 bits cannot hold (after year
/// 2262) is an error ([`DecodeError::OutOfRange`]), never a wrapped one.
pub(super) struct Int96Timestamps {
    /// The current page's pairs, and the validity of every row.
    stored: Output<Int96>,
    timestamps: Vec<i64>,
    unit: TimeUnit,
    /// The first valid row's value that nanoseconds cannot hold, in Spark's microseconds.
    out_of_range: Option<i64>,
}

impl Int96Timestamps {
    pub(super) fn new(selected: usize, nullable: bool, unit: TimeUnit) -> Self {
        Self {
            stored: Output::new(0, nullable),
            timestamps: Vec::with_capacity(selected.min(MAX_RESERVED_VALUES)),
            unit,
            out_of_range: None,
        }
    }

    /// The column of the rows decoded, in `zone`.
    pub(super) fn finish(self, zone: Option<Arc<str>>) -> Result<ArrayRef, DecodeError> {
        if let Some(micros) = self.out_of_range {
            return Err(DecodeError::OutOfRange(format!(
                "an INT96 timestamp of {micros} µs from 1970-01-01 (as Spark reads it) is outside the range of \
                 timestamp[ns], which would wrap it into another instant; read it in microseconds (option \
                 coerce_int96_timestamp_unit)"
            )));
        }
        let (_, nulls) = self.stored.into_parts();
        let values = ScalarBuffer::from(self.timestamps);
        Ok(match self.unit {
            TimeUnit::Second => {
                Arc::new(PrimitiveArray::<TimestampSecondType>::new(values, nulls).with_timezone_opt(zone))
            }
            TimeUnit::Millisecond => {
                Arc::new(PrimitiveArray::<TimestampMillisecondType>::new(values, nulls).with_timezone_opt(zone))
            }
            TimeUnit::Microsecond => {
                Arc::new(PrimitiveArray::<TimestampMicrosecondType>::new(values, nulls).with_timezone_opt(zone))
            }
            TimeUnit::Nanosecond => {
                Arc::new(PrimitiveArray::<TimestampNanosecondType>::new(values, nulls).with_timezone_opt(zone))
            }
        })
    }

    /// Converts the pairs of the page just read into the unit.
    fn convert_page(&mut self) {
        let first_row = self.timestamps.len();
        let (pairs, validity) = self.stored.values_and_validity();
        // The unit's constants are the function's, not variables: a division by a variable
        // was most of the conversion.
        match self.unit {
            TimeUnit::Second => self.timestamps.extend(pairs.iter().map(|&v| int96_micros(v).div_euclid(1_000_000))),
            TimeUnit::Millisecond => self.timestamps.extend(pairs.iter().map(|&v| int96_micros(v).div_euclid(1_000))),
            TimeUnit::Microsecond => self.timestamps.extend(pairs.iter().map(|&v| int96_micros(v))),
            TimeUnit::Nanosecond => {
                // Whether each fits folded into one flag; only a page where one does not is
                // searched for it, nulls skipped (a null's slot holds a placeholder, which
                // need not fit).
                let mut all_fit = true;
                self.timestamps.extend(pairs.iter().map(|&v| {
                    let (nanos, fits) = int96_nanos(v);
                    all_fit &= fits;
                    nanos
                }));
                let valid = |i: usize| validity.is_none_or(|v| v.get_bit(first_row + i));
                if !all_fit
                    && self.out_of_range.is_none()
                    && let Some(i) = pairs.iter().enumerate().position(|(i, &v)| valid(i) && !int96_nanos(v).1)
                {
                    self.out_of_range = Some(int96_micros(pairs[i]));
                }
            }
        }
        self.stored.clear_values();
    }
}

impl Sink for Int96Timestamps {
    fn dictionary(&mut self, page: PageValues<'_>, count: usize) -> Result<bool, DecodeError> {
        self.stored.dictionary(page, count)
    }

    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError> {
        let decoded = self.stored.page(page, selected)?;
        if decoded {
            self.convert_page();
        }
        Ok(decoded)
    }
}

const JULIAN_DAY_OF_EPOCH: i64 = 2_440_588;
const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Spark's `DateTimeUtils.fromJulianDay`: the microseconds since the epoch of an INT96
/// (day, nanoseconds), in wrapping 64-bit arithmetic as Spark's.
fn int96_micros(value: i128) -> i64 {
    let (day, nanos) = ((value >> 64) as i64, value as u64 as i64);
    day.wrapping_mul(MICROS_PER_DAY)
        .wrapping_add(nanos / 1_000)
        .wrapping_sub(JULIAN_DAY_OF_EPOCH.wrapping_mul(MICROS_PER_DAY))
}

/// Days from the epoch within which any nanoseconds of the day (below a day's) give an
/// instant that nanoseconds hold (±106,751.99 days).
const DAYS_NANOSECONDS_HOLD: i64 = 106_750;
const NANOS_PER_DAY: u64 = 86_400_000_000_000;

/// The nanoseconds since the epoch of an INT96 — Spark's microseconds, and the nanoseconds
/// below them — and whether they fit 64 bits (the microseconds' nanoseconds and the sum
/// both).
///
/// An instant from 1677 to 2262 with its nanoseconds within the day (any writer's) is its
/// days' nanoseconds plus its own, exactly what the microseconds give, without their
/// division; others are computed in wrapping arithmetic, their overflows found by
/// comparisons.
fn int96_nanos(value: i128) -> (i64, bool) {
    let (day, nanos) = ((value >> 64) as i64, value as u64);
    let days = day.wrapping_sub(JULIAN_DAY_OF_EPOCH);
    if (-DAYS_NANOSECONDS_HOLD..=DAYS_NANOSECONDS_HOLD).contains(&days) && nanos < NANOS_PER_DAY {
        return (days * NANOS_PER_DAY as i64 + nanos as i64, true);
    }
    let micros = int96_micros(value);
    let below = (value as u64 as i64) % 1_000;
    let scaled = micros.wrapping_mul(1_000);
    let nanos = scaled.wrapping_add(below);
    let scaled_fits = (i64::MIN / 1_000..=i64::MAX / 1_000).contains(&micros);
    // A sum overflows when its sign differs from both addends'.
    let sum_fits = ((scaled ^ nanos) & (below ^ nanos)) >= 0;
    (nanos, scaled_fits & sum_fits)
}
