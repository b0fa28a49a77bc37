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
            TimeUnit::Microsecond => {
                if !append_within_the_day(pairs, &mut self.timestamps, Within::Micros) {
                    self.timestamps.extend(pairs.iter().map(|&v| int96_micros(v)));
                }
            }
            TimeUnit::Nanosecond if append_within_the_day(pairs, &mut self.timestamps, Within::Nanos) => {}
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

/// Which conversion [`append_within_the_day`] makes.
#[derive(Clone, Copy, PartialEq)]
enum Within {
    /// [`int96_micros`].
    Micros,
    /// [`int96_nanos`], for instants it holds.
    Nanos,
}

/// Appends `pairs` converted to `unit` to `out` when every pair's nanoseconds lie within
/// its day (any writer's) — and, for nanoseconds, its instant within what 64 bits of them
/// hold —, and returns whether they did (else `out` is as it was, and the caller converts
/// them value by value). Written without a branch a value, so that a page's pairs convert
/// a vector at a time: with AVX-512 the multiplications and conversions of eight pairs at
/// once. (A filter on the INT96 timestamps Spark writes, which have no statistics, converts
/// every row's.)
fn append_within_the_day(pairs: &[i128], out: &mut Vec<i64>, unit: Within) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512dq") {
        // SAFETY: the CPU has AVX-512F and AVX-512DQ.
        return unsafe { append_within_the_day_avx512(pairs, out, unit) };
    }
    append_within_the_day_any(pairs, out, unit)
}

/// [`append_within_the_day`] compiled for AVX-512 (64-bit multiplications and conversions
/// to and from doubles in vectors).
///
/// # Safety
/// The CPU has AVX-512F and AVX-512DQ.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn append_within_the_day_avx512(pairs: &[i128], out: &mut Vec<i64>, unit: Within) -> bool {
    append_within_the_day_any(pairs, out, unit)
}

/// [`append_within_the_day`] for any CPU, and inlined into the build for AVX-512.
#[inline(always)]
fn append_within_the_day_any(pairs: &[i128], out: &mut Vec<i64>, unit: Within) -> bool {
    out.reserve(pairs.len());
    let slots = &mut out.spare_capacity_mut()[..pairs.len()];
    let mut all_within = true;
    match unit {
        Within::Micros => {
            for (slot, &value) in slots.iter_mut().zip(pairs) {
                let (day, nanos) = ((value >> 64) as i64, value as u64);
                all_within &= nanos < NANOS_PER_DAY;
                // Nanoseconds below a day's are below 2^47: exact as a double, and so is
                // their quotient by 1,000 rounded down (a remainder of 999 thousandths
                // is far more than the double's rounding step at that size).
                let micros = (nanos as f64 / 1_000.0) as i64;
                slot.write(
                    day.wrapping_mul(MICROS_PER_DAY)
                        .wrapping_add(micros)
                        .wrapping_sub(JULIAN_DAY_OF_EPOCH.wrapping_mul(MICROS_PER_DAY)),
                );
            }
        }
        Within::Nanos => {
            for (slot, &value) in slots.iter_mut().zip(pairs) {
                let (day, nanos) = ((value >> 64) as i64, value as u64);
                let days = day.wrapping_sub(JULIAN_DAY_OF_EPOCH);
                let held = (days.wrapping_add(DAYS_NANOSECONDS_HOLD) as u64) <= 2 * DAYS_NANOSECONDS_HOLD as u64;
                all_within &= held & (nanos < NANOS_PER_DAY);
                slot.write(days.wrapping_mul(NANOS_PER_DAY as i64).wrapping_add(nanos as i64));
            }
        }
    }
    if all_within {
        // SAFETY: the first `pairs.len()` slots past the end were written above.
        unsafe { out.set_len(out.len() + pairs.len()) };
    }
    all_within
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An INT96 pair as [`Int96`](super::super::fixed_width::Int96) reads it: a day near
    /// the epoch (or any 32-bit day), its nanoseconds within the day (or any 64 bits).
    fn pair() -> impl Strategy<Value = i128> {
        let day = prop_oneof![
            3 => JULIAN_DAY_OF_EPOCH - 110_000..JULIAN_DAY_OF_EPOCH + 110_000,
            1 => any::<i32>().prop_map(i64::from),
        ];
        let nanos = prop_oneof![4 => 0..NANOS_PER_DAY, 1 => NANOS_PER_DAY - 3..NANOS_PER_DAY + 3, 1 => any::<u64>()];
        (day, nanos).prop_map(|(day, nanos)| (i128::from(day) << 64) | i128::from(nanos))
    }

    proptest! {
        /// A page's pairs converted a vector at a time are those the value-by-value
        /// conversion gives, or refused (the output untouched) where a pair is outside
        /// the day — and, in nanoseconds, outside what 64 bits of them hold; both the
        /// build for any CPU and this CPU's.
        #[test]
        fn pairs_within_the_day_convert_as_one_by_one(
            pairs in prop::collection::vec(pair(), 0..40),
            nanos in any::<bool>(),
        ) {
            let unit = if nanos { Within::Nanos } else { Within::Micros };
            let one_by_one: Vec<i64> =
                pairs.iter().map(|&v| if nanos { int96_nanos(v).0 } else { int96_micros(v) }).collect();
            let within = pairs.iter().all(|&v| {
                (v as u64) < NANOS_PER_DAY
                    && (!nanos || ((v >> 64) as i64 - JULIAN_DAY_OF_EPOCH).abs() <= DAYS_NANOSECONDS_HOLD)
            });
            for this_cpu in [false, true] {
                let mut out = vec![7i64];
                let appended = match this_cpu {
                    true => append_within_the_day(&pairs, &mut out, unit),
                    false => append_within_the_day_any(&pairs, &mut out, unit),
                };
                prop_assert_eq!(appended, within);
                let expected: Vec<i64> = match appended {
                    true => [7].into_iter().chain(one_by_one.iter().copied()).collect(),
                    false => vec![7],
                };
                prop_assert_eq!(&out, &expected);
            }
        }
    }
}
