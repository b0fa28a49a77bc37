//! Spark's type coercion rules (ANSI mode, Spark 4): which type two operands are brought to
//! before they are compared or combined.
//!
//! * Numbers widen along TINYINT < SMALLINT < INT < BIGINT < FLOAT < DOUBLE; a DECIMAL meets
//!   an integral type as DECIMAL(3|5|10|20, 0) and another decimal as the decimal holding
//!   both (`max(scale)`, `max(integer digits)`, at most 38 digits); DECIMAL and FLOAT or
//!   DOUBLE meet as DOUBLE.
//! * A STRING compared with a number becomes BIGINT (integral) or DOUBLE (others), compared
//!   with DATE, TIMESTAMP, BOOLEAN or BINARY it becomes that type (ANSI "string promotion";
//!   an unparsable string is an error, as Spark's `CAST_INVALID_INPUT`).
//! * DATE meets TIMESTAMP as TIMESTAMP and TIMESTAMP_NTZ as TIMESTAMP_NTZ; TIMESTAMP_NTZ
//!   meets TIMESTAMP as TIMESTAMP.
//! * Anything else (a number and a date, a boolean and a number, ...) is an error, as
//!   Spark's `DATATYPE_MISMATCH`.

use super::{ArithmeticOp, SqlType};

/// The type both sides of a comparison (or all values of an IN list) are cast to, or
/// `None` when Spark rejects the comparison.
pub(crate) fn comparison_type(left: SqlType, right: SqlType) -> Option<SqlType> {
    use SqlType::*;
    if left == right {
        return Some(left);
    }
    match (left, right) {
        (Null, other) | (other, Null) => Some(other),
        (a, b) if a.is_numeric() && b.is_numeric() => Some(wider_numeric(a, b)),
        (String, other) | (other, String) => match other {
            t if t.is_integral() => Some(Long),
            t if t.is_numeric() => Some(Double),
            Date | Timestamp | TimestampNtz | Boolean | Binary => Some(other),
            _ => None,
        },
        (Date, Timestamp) | (Timestamp, Date) => Some(Timestamp),
        (Date, TimestampNtz) | (TimestampNtz, Date) => Some(TimestampNtz),
        (Timestamp, TimestampNtz) | (TimestampNtz, Timestamp) => Some(Timestamp),
        _ => None,
    }
}

/// The smallest numeric type holding both (Spark's `findTightestCommonType` plus
/// decimal widening).
pub(crate) fn wider_numeric(left: SqlType, right: SqlType) -> SqlType {
    use SqlType::*;
    let rank = |t: SqlType| match t {
        Byte => 1,
        Short => 2,
        Int => 3,
        Long => 4,
        Float => 5,
        Double => 6,
        _ => 0,
    };
    match (left, right) {
        (Decimal { .. }, Float | Double) | (Float | Double, Decimal { .. }) => Double,
        (Decimal { .. }, _) | (_, Decimal { .. }) => match (left.integral_as_decimal(), right.integral_as_decimal()) {
            (Some(a), Some(b)) => wider_decimal(a, b),
            _ => Double,
        },
        _ if rank(left) >= rank(right) => left,
        _ => right,
    }
}

/// The decimal holding every value of both (Spark's `DecimalPrecision.widerDecimalType`,
/// bounded to 38 digits).
fn wider_decimal(left: SqlType, right: SqlType) -> SqlType {
    let (SqlType::Decimal { precision: p1, scale: s1 }, SqlType::Decimal { precision: p2, scale: s2 }) = (left, right)
    else {
        return SqlType::Double;
    };
    let (p1, s1, p2, s2) = (i32::from(p1), i32::from(s1), i32::from(p2), i32::from(s2));
    let scale = s1.max(s2);
    let range = (p1 - s1).max(p2 - s2);
    decimal(range + scale, scale, false)
}

/// DECIMAL(precision, scale), either bounded to 38 digits (`adjust` = false, Spark's
/// `DecimalType.bounded`) or fitted to 38 digits by giving up fractional digits but
/// keeping at least 6 (`adjust` = true, Spark's `adjustPrecisionScale` for arithmetic).
fn decimal(precision: i32, scale: i32, adjust: bool) -> SqlType {
    let (precision, scale) = if precision <= 38 {
        (precision, scale)
    } else if adjust {
        let integer_digits = precision - scale;
        (38, (38 - integer_digits).max(scale.min(6)))
    } else {
        (38, scale.min(38))
    };
    SqlType::Decimal { precision: precision as u8, scale: scale as i8 }
}

/// The operand and result types of an arithmetic operation: `(left operand, right
/// operand, result)`, or `None` when Spark rejects it. Strings are not accepted (Spark
/// would read them as numbers; write a CAST).
pub(crate) fn arithmetic_types(op: ArithmeticOp, left: SqlType, right: SqlType) -> Option<(SqlType, SqlType, SqlType)> {
    use SqlType::*;
    let (left, right) = match (left, right) {
        (Null, Null) => (Int, Int),
        (Null, other) | (other, Null) => (other, other),
        pair => pair,
    };
    // Spark (ANSI) reads a string operand as a BIGINT beside an integral one and as a DOUBLE
    // beside a fractional one (`'12' + 1` is 13, `'1.5' + 1` fails to cast); two strings,
    // or a string and NULL, do not add.
    let read_as = |other: SqlType| if other.is_integral() { Long } else { Double };
    let (left, right) = match (left, right) {
        (String, other) if other.is_numeric() => (read_as(other), other),
        (other, String) if other.is_numeric() => (other, read_as(other)),
        pair => pair,
    };
    if !left.is_numeric() || !right.is_numeric() {
        return None;
    }
    let has_decimal = matches!(left, Decimal { .. }) || matches!(right, Decimal { .. });
    let has_floating = left.is_floating() || right.is_floating();
    if op == ArithmeticOp::Divide && !has_decimal {
        return Some((Double, Double, Double));
    }
    if !has_decimal || has_floating {
        let common = wider_numeric(left, right);
        return Some((common, common, common));
    }
    let (left, right) = (left.integral_as_decimal()?, right.integral_as_decimal()?);
    let (Decimal { precision: p1, scale: s1 }, Decimal { precision: p2, scale: s2 }) = (left, right) else {
        return None;
    };
    let (p1, s1, p2, s2) = (i32::from(p1), i32::from(s1), i32::from(p2), i32::from(s2));
    let result = match op {
        ArithmeticOp::Add | ArithmeticOp::Subtract => {
            let scale = s1.max(s2);
            decimal((p1 - s1).max(p2 - s2) + scale + 1, scale, true)
        }
        ArithmeticOp::Multiply => decimal(p1 + p2 + 1, s1 + s2, true),
        ArithmeticOp::Divide => {
            let scale = 6.max(s1 + p2 + 1);
            decimal(p1 - s1 + s2 + scale, scale, true)
        }
    };
    Some((left, right, result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use SqlType::*;

    fn dec(precision: u8, scale: i8) -> SqlType {
        Decimal { precision, scale }
    }

    #[test]
    fn numbers_widen() {
        assert_eq!(comparison_type(Byte, Int), Some(Int));
        assert_eq!(comparison_type(Long, Float), Some(Float));
        assert_eq!(comparison_type(Int, dec(5, 2)), Some(dec(12, 2)));
        assert_eq!(comparison_type(dec(5, 2), dec(10, 0)), Some(dec(12, 2)));
        assert_eq!(comparison_type(dec(38, 0), dec(38, 10)), Some(dec(38, 10)));
        assert_eq!(comparison_type(dec(5, 2), Double), Some(Double));
    }

    #[test]
    fn strings_promote() {
        assert_eq!(comparison_type(String, Byte), Some(Long));
        assert_eq!(comparison_type(dec(5, 2), String), Some(Double));
        assert_eq!(comparison_type(String, Date), Some(Date));
        assert_eq!(comparison_type(Timestamp, String), Some(Timestamp));
    }

    #[test]
    fn incomparable_types() {
        assert_eq!(comparison_type(Int, Date), None);
        assert_eq!(comparison_type(Boolean, Int), None);
        assert_eq!(comparison_type(Binary, Long), None);
    }

    #[test]
    fn arithmetic_result_types() {
        assert_eq!(arithmetic_types(ArithmeticOp::Add, Byte, Byte), Some((Byte, Byte, Byte)));
        assert_eq!(arithmetic_types(ArithmeticOp::Divide, Int, Int), Some((Double, Double, Double)));
        assert_eq!(arithmetic_types(ArithmeticOp::Add, dec(5, 2), Int), Some((dec(5, 2), dec(10, 0), dec(13, 2))));
        assert_eq!(
            arithmetic_types(ArithmeticOp::Multiply, dec(38, 10), dec(38, 10)),
            Some((dec(38, 10), dec(38, 10), dec(38, 6)))
        );
        assert_eq!(
            arithmetic_types(ArithmeticOp::Divide, dec(10, 2), dec(5, 1)),
            Some((dec(10, 2), dec(5, 1), dec(17, 8)))
        );
        // A string beside an integral operand is a BIGINT, beside a fractional one a DOUBLE.
        assert_eq!(arithmetic_types(ArithmeticOp::Add, String, Int), Some((Long, Long, Long)));
        assert_eq!(arithmetic_types(ArithmeticOp::Divide, Short, String), Some((Double, Double, Double)));
        assert_eq!(arithmetic_types(ArithmeticOp::Multiply, dec(5, 2), String), Some((Double, Double, Double)));
        assert_eq!(arithmetic_types(ArithmeticOp::Add, String, String), None);
        assert_eq!(arithmetic_types(ArithmeticOp::Add, String, Null), None);
    }
}
