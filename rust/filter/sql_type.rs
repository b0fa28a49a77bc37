//! Spark SQL data types: the types filter values have after binding, and the targets of
//! `CAST`.
//!
//! Arrow columns map onto these the way Spark reads the Parquet file they came from (an
//! unsigned 8-bit column is SMALLINT, a timestamp without time zone is TIMESTAMP_NTZ, ...);
//! see [`SqlType::of_arrow`].

use std::fmt;

use arrow::datatypes::{DataType, TimeUnit};

/// The time zone every bound TIMESTAMP (instant) value carries in its Arrow type. Values
/// are UTC instants whatever the zone label, so one fixed label is enough.
pub(crate) const UTC: &str = "UTC";

/// A Spark SQL data type.
///
/// ```
/// use pqsift::filter::SqlType;
/// use arrow::datatypes::DataType;
///
/// assert_eq!(SqlType::Decimal { precision: 10, scale: 2 }.to_string(), "DECIMAL(10,2)");
/// assert_eq!(SqlType::of_arrow(&DataType::UInt8), Some(SqlType::Short));
/// assert_eq!(SqlType::Long.to_arrow(), DataType::Int64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlType {
    /// The type of an untyped `NULL`; coerces to any other type.
    Null,
    /// BOOLEAN
    Boolean,
    /// TINYINT (8-bit)
    Byte,
    /// SMALLINT (16-bit)
    Short,
    /// INT (32-bit)
    Int,
    /// BIGINT (64-bit)
    Long,
    /// FLOAT (32-bit IEEE)
    Float,
    /// DOUBLE (64-bit IEEE)
    Double,
    /// DECIMAL(precision, scale), precision 1..=38, scale 0..=precision.
    Decimal {
        /// Total number of digits.
        precision: u8,
        /// Digits after the decimal point.
        scale: i8,
    },
    /// STRING (UTF-8, compared byte-wise)
    String,
    /// BINARY (compared byte-wise, unsigned)
    Binary,
    /// DATE (days since 1970-01-01)
    Date,
    /// TIMESTAMP: an instant, microseconds since the epoch in UTC (Spark's local-time-zone
    /// timestamp).
    Timestamp,
    /// TIMESTAMP_NTZ: a wall-clock date-time without time zone, microsecond precision.
    TimestampNtz,
}

impl SqlType {
    /// The Spark type of an Arrow column as Spark reads the Parquet column, or `None` when
    /// filters cannot use it (lists, maps, structs themselves, intervals, ...).
    ///
    /// ```
    /// use pqsift::filter::SqlType;
    /// use arrow::datatypes::{DataType, TimeUnit};
    ///
    /// let ts = DataType::Timestamp(TimeUnit::Nanosecond, Some("+00:00".into()));
    /// assert_eq!(SqlType::of_arrow(&ts), Some(SqlType::Timestamp));
    /// assert_eq!(SqlType::of_arrow(&DataType::Utf8View), Some(SqlType::String));
    /// ```
    pub fn of_arrow(data_type: &DataType) -> Option<Self> {
        Some(match data_type {
            DataType::Null => Self::Null,
            DataType::Boolean => Self::Boolean,
            DataType::Int8 => Self::Byte,
            DataType::Int16 | DataType::UInt8 => Self::Short,
            DataType::Int32 | DataType::UInt16 => Self::Int,
            DataType::Int64 | DataType::UInt32 => Self::Long,
            DataType::UInt64 => Self::Decimal { precision: 20, scale: 0 },
            DataType::Float16 | DataType::Float32 => Self::Float,
            DataType::Float64 => Self::Double,
            DataType::Decimal32(precision, scale)
            | DataType::Decimal64(precision, scale)
            | DataType::Decimal128(precision, scale)
            | DataType::Decimal256(precision, scale)
                if *precision <= 38 && *scale >= 0 && (*scale as u8) <= *precision =>
            {
                Self::Decimal { precision: *precision, scale: *scale }
            }
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Self::String,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => {
                Self::Binary
            }
            DataType::Date32 | DataType::Date64 => Self::Date,
            DataType::Timestamp(_, Some(_)) => Self::Timestamp,
            DataType::Timestamp(_, None) => Self::TimestampNtz,
            DataType::Dictionary(_, value_type) => return Self::of_arrow(value_type),
            _ => return None,
        })
    }

    /// The Arrow type values of this type have after binding (the type evaluation works in).
    ///
    /// ```
    /// use pqsift::filter::SqlType;
    /// use arrow::datatypes::{DataType, TimeUnit};
    /// assert_eq!(SqlType::TimestampNtz.to_arrow(), DataType::Timestamp(TimeUnit::Microsecond, None));
    /// ```
    pub fn to_arrow(self) -> DataType {
        match self {
            Self::Null => DataType::Null,
            Self::Boolean => DataType::Boolean,
            Self::Byte => DataType::Int8,
            Self::Short => DataType::Int16,
            Self::Int => DataType::Int32,
            Self::Long => DataType::Int64,
            Self::Float => DataType::Float32,
            Self::Double => DataType::Float64,
            Self::Decimal { precision, scale } => DataType::Decimal128(precision, scale),
            Self::String => DataType::Utf8,
            Self::Binary => DataType::Binary,
            Self::Date => DataType::Date32,
            Self::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
            Self::TimestampNtz => DataType::Timestamp(TimeUnit::Microsecond, None),
        }
    }

    /// TINYINT, SMALLINT, INT or BIGINT.
    pub(crate) fn is_integral(self) -> bool {
        matches!(self, Self::Byte | Self::Short | Self::Int | Self::Long)
    }

    /// FLOAT or DOUBLE.
    pub(crate) fn is_floating(self) -> bool {
        matches!(self, Self::Float | Self::Double)
    }

    /// Integral, floating or decimal.
    pub(crate) fn is_numeric(self) -> bool {
        self.is_integral() || self.is_floating() || matches!(self, Self::Decimal { .. })
    }

    /// The decimal type that holds every value of an integral type exactly (Spark's
    /// `DecimalType.forType`): TINYINT is DECIMAL(3,0), ..., BIGINT is DECIMAL(20,0).
    pub(crate) fn integral_as_decimal(self) -> Option<Self> {
        let precision = match self {
            Self::Byte => 3,
            Self::Short => 5,
            Self::Int => 10,
            Self::Long => 20,
            Self::Decimal { .. } => return Some(self),
            _ => return None,
        };
        Some(Self::Decimal { precision, scale: 0 })
    }
}

impl fmt::Display for SqlType {
    /// The Spark SQL type name, as `CAST(x AS <name>)` accepts it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("VOID"),
            Self::Boolean => f.write_str("BOOLEAN"),
            Self::Byte => f.write_str("TINYINT"),
            Self::Short => f.write_str("SMALLINT"),
            Self::Int => f.write_str("INT"),
            Self::Long => f.write_str("BIGINT"),
            Self::Float => f.write_str("FLOAT"),
            Self::Double => f.write_str("DOUBLE"),
            Self::Decimal { precision, scale } => write!(f, "DECIMAL({precision},{scale})"),
            Self::String => f.write_str("STRING"),
            Self::Binary => f.write_str("BINARY"),
            Self::Date => f.write_str("DATE"),
            Self::Timestamp => f.write_str("TIMESTAMP"),
            Self::TimestampNtz => f.write_str("TIMESTAMP_NTZ"),
        }
    }
}
