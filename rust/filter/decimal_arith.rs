//! DECIMAL arithmetic as Spark does it: the exact result rounded half up to the result
//! type's scale (see `coerce::arithmetic_types`), and an error when it does not fit the
//! result's precision (Spark's ANSI `NUMERIC_VALUE_OUT_OF_RANGE`) or the divisor is zero
//! (`DIVIDE_BY_ZERO`). Arrow's decimal kernels follow other rules (Hive's result types,
//! truncating division), so the arithmetic is done here on 256-bit intermediates.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Decimal128Array};
use arrow::compute::kernels::arity::try_binary;
use arrow::datatypes::i256;
use arrow::datatypes::{DataType, Decimal128Type};
use arrow::error::ArrowError;

use super::ArithmeticOp;
use crate::{PqsiftError, Result};

/// Why one value could not be computed.
enum Failure {
    Overflow,
    DivideByZero,
}

fn pow10(exponent: u32) -> Option<i256> {
    i256::from_i128(10).checked_pow(exponent)
}

/// `numerator / denominator` rounded half away from zero; `None` on overflow.
fn divide_half_up(numerator: i256, denominator: i256) -> Option<i256> {
    let (quotient, remainder) = numerator.checked_div_rem(denominator)?;
    let twice_remainder = remainder.checked_abs()?.checked_mul(i256::from_i128(2))?;
    if twice_remainder >= denominator.checked_abs()? {
        let away =
            if numerator.is_negative() != denominator.is_negative() { i256::from_i128(-1) } else { i256::from_i128(1) };
        quotient.checked_add(away)
    } else {
        Some(quotient)
    }
}

/// `value × 10^-from_scale` expressed at `to_scale`, rounding half up when digits go.
fn rescale(value: i256, from_scale: i32, to_scale: i32) -> Option<i256> {
    if to_scale >= from_scale {
        value.checked_mul(pow10((to_scale - from_scale) as u32)?)
    } else {
        divide_half_up(value, pow10((from_scale - to_scale) as u32)?)
    }
}

/// One value of `left op right` at the result scale, before the precision check.
fn apply(
    op: ArithmeticOp,
    left: i128,
    left_scale: i32,
    right: i128,
    right_scale: i32,
    result_scale: i32,
) -> std::result::Result<i256, Failure> {
    let (a, b) = (i256::from_i128(left), i256::from_i128(right));
    let value = match op {
        ArithmeticOp::Add | ArithmeticOp::Subtract => {
            let scale = left_scale.max(right_scale);
            let a = rescale(a, left_scale, scale).ok_or(Failure::Overflow)?;
            let b = rescale(b, right_scale, scale).ok_or(Failure::Overflow)?;
            let exact = if op == ArithmeticOp::Add { a.checked_add(b) } else { a.checked_sub(b) };
            exact.and_then(|v| rescale(v, scale, result_scale))
        }
        ArithmeticOp::Multiply => a.checked_mul(b).and_then(|v| rescale(v, left_scale + right_scale, result_scale)),
        ArithmeticOp::Divide => {
            if right == 0 {
                return Err(Failure::DivideByZero);
            }
            // a/10^s1 ÷ b/10^s2 at scale s = (a × 10^(s - s1 + s2)) / b.
            let shift = result_scale - left_scale + right_scale;
            if shift >= 0 {
                pow10(shift as u32).and_then(|p| a.checked_mul(p)).and_then(|n| divide_half_up(n, b))
            } else {
                pow10((-shift) as u32).and_then(|p| b.checked_mul(p)).and_then(|d| divide_half_up(a, d))
            }
        }
    };
    value.ok_or(Failure::Overflow)
}

/// `left op right` for DECIMAL arrays of equal length, giving `result` (a `Decimal128`
/// type). `context` is the expression's text, for error messages.
pub(crate) fn decimal_arithmetic(
    op: ArithmeticOp,
    left: &ArrayRef,
    right: &ArrayRef,
    result: &DataType,
    context: &str,
) -> Result<ArrayRef> {
    let scale_of = |t: &DataType| match t {
        DataType::Decimal128(_, s) => Some(i32::from(*s)),
        _ => None,
    };
    let (Some(left_scale), Some(right_scale), DataType::Decimal128(precision, result_scale)) =
        (scale_of(left.data_type()), scale_of(right.data_type()), result)
    else {
        return Err(PqsiftError::filter(format!(
            "internal error: decimal arithmetic on {} and {} in {context}",
            left.data_type(),
            right.data_type()
        )));
    };
    let limit = pow10(u32::from(*precision)).unwrap_or(i256::MAX);
    let result_scale_i32 = i32::from(*result_scale);
    let values: Decimal128Array = try_binary(
        left.as_primitive::<Decimal128Type>(),
        right.as_primitive::<Decimal128Type>(),
        |a, b| {
            let failure = |failure| {
                ArrowError::ComputeError(match failure {
                    Failure::Overflow => "overflow".to_string(),
                    Failure::DivideByZero => "divide by zero".to_string(),
                })
            };
            let value = apply(op, a, left_scale, b, right_scale, result_scale_i32).map_err(failure)?;
            if value.checked_abs().is_none_or(|m| m >= limit) {
                return Err(failure(Failure::Overflow));
            }
            value.to_i128().ok_or_else(|| failure(Failure::Overflow))
        },
    )
    .map_err(|e| match e {
        ArrowError::ComputeError(reason) if reason == "divide by zero" => PqsiftError::filter(format!(
            "division by zero in {context} (Spark's ANSI mode raises DIVIDE_BY_ZERO)"
        )),
        _ => PqsiftError::filter(format!(
            "decimal overflow in {context}: the result does not fit {} (Spark's ANSI mode raises NUMERIC_VALUE_OUT_OF_RANGE)",
            super::cast::describe(result)
        )),
    })?;
    let values =
        values.with_precision_and_scale(*precision, *result_scale).map_err(|e| PqsiftError::filter(e.to_string()))?;
    Ok(Arc::new(values))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimals(values: &[i128], precision: u8, scale: i8) -> ArrayRef {
        Arc::new(Decimal128Array::from(values.to_vec()).with_precision_and_scale(precision, scale).unwrap())
    }

    fn run(op: ArithmeticOp, l: (&[i128], u8, i8), r: (&[i128], u8, i8), result: (u8, i8)) -> Result<Vec<i128>> {
        let out = decimal_arithmetic(
            op,
            &decimals(l.0, l.1, l.2),
            &decimals(r.0, r.1, r.2),
            &DataType::Decimal128(result.0, result.1),
            "test",
        )?;
        Ok(out.as_primitive::<Decimal128Type>().values().to_vec())
    }

    #[test]
    fn add_aligns_scales() {
        // 1.5 + 0.25 = 1.75 as DECIMAL(4,2)
        assert_eq!(run(ArithmeticOp::Add, (&[15], 2, 1), (&[25], 3, 2), (4, 2)).unwrap(), [175]);
    }

    #[test]
    fn divide_rounds_half_up() {
        // 1 / 3 at scale 6 = 0.333333; 2 / 3 = 0.666667; -2 / 3 = -0.666667
        assert_eq!(
            run(ArithmeticOp::Divide, (&[1, 2, -2], 1, 0), (&[3, 3, 3], 1, 0), (8, 6)).unwrap(),
            [333_333, 666_667, -666_667]
        );
    }

    #[test]
    fn overflow_and_zero_are_errors() {
        let overflow = run(ArithmeticOp::Multiply, (&[99], 2, 0), (&[99], 2, 0), (3, 0)).unwrap_err();
        assert!(overflow.to_string().contains("NUMERIC_VALUE_OUT_OF_RANGE"), "{overflow}");
        let zero = run(ArithmeticOp::Divide, (&[1], 1, 0), (&[0], 1, 0), (8, 6)).unwrap_err();
        assert!(zero.to_string().contains("DIVIDE_BY_ZERO"), "{zero}");
    }
}
