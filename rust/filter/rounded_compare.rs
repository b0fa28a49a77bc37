//! The preimage of a comparison of a rounded DOUBLE with a constant (see
//! [`preimage`](super::preimage)): the comparisons of the value itself that pass the same
//! rows.
//!
//! `round(x, s)` never decreases as `x` grows (in Spark's order: NaN greatest, -0.0 equal
//! to 0.0), so the values whose rounding is at least `c` are those from some least value
//! on. That least value is found once, when the filter is bound, by bisecting the doubles
//! with the evaluator's own rounding; each row is then compared, not rounded. The answer
//! is the same for every row, NULL included (both sides are NULL for a NULL `x`), and
//! statistics and the page index prune on the bounds directly.
//!
//! ```text
//! round(amount, 0) = 45       → amount >= 44.5 AND amount < 45.5
//! round(amount, 1) > 2.67     → amount >= 2.65     (the first value that rounds to 2.7)
//! round(amount, 0) < 45.3     → amount < 45.5      (below 45.3 means at most 45)
//! ```

use std::cmp::Ordering;

use super::CompareOp;
use super::float_compare::spark_order;
use super::function_kernels::round_double;
use super::preimage::{Preimage, preimage};

/// The preimage of `round(·, scale) op target` for a DOUBLE target (see
/// [`preimage`](super::preimage::preimage); `None` for `<=>`). Every comparison is one
/// Spark answers as pqsift's evaluator does: NaN is the greatest value.
pub(super) fn rounded_preimage(op: CompareOp, scale: i32, target: f64) -> Option<Preimage<f64>> {
    let at_least = least_rounding(scale, |rounded| spark_order(rounded, target) != Ordering::Less);
    let above = least_rounding(scale, |rounded| spark_order(rounded, target) == Ordering::Greater);
    preimage(op, true, at_least, above, f64::NAN)
}

/// The least double whose `round(·, scale)` passes `passes` (a test that, once passed,
/// stays passed as values grow), bisecting the doubles from -infinity to +infinity by
/// their bits (in the order of `f64::total_cmp`, where -0.0 is just below 0.0: both round
/// alike), then NaN; `None` if none does.
fn least_rounding(scale: i32, passes: impl Fn(f64) -> bool) -> Option<f64> {
    let passes_at = |key: i64| passes(round_double(from_key(key), scale));
    let (mut low, mut high) = (key(f64::NEG_INFINITY), key(f64::INFINITY));
    if passes_at(low) {
        return Some(f64::NEG_INFINITY);
    }
    if !passes_at(high) {
        return passes(round_double(f64::NAN, scale)).then_some(f64::NAN);
    }
    // `low` fails and `high` passes.
    while i128::from(high) - i128::from(low) > 1 {
        // The midpoint without overflow: the keys span all of i64.
        let middle = ((i128::from(low) + i128::from(high)) / 2) as i64;
        if passes_at(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(from_key(high))
}

/// A double's place among the doubles (not NaN), as `f64::total_cmp` orders them.
fn key(value: f64) -> i64 {
    let bits = value.to_bits() as i64;
    if bits < 0 { bits ^ i64::MAX } else { bits }
}

fn from_key(key: i64) -> f64 {
    f64::from_bits((if key < 0 { key ^ i64::MAX } else { key }) as u64)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Float64Array};
    use proptest::prelude::*;

    use super::*;

    fn least(scale: i32, target: f64) -> Option<f64> {
        least_rounding(scale, |rounded| spark_order(rounded, target) != Ordering::Less)
    }

    #[test]
    fn preimages_of_roundings() {
        // 44.5 is the first double that rounds to 45; 45.5 the first past it.
        assert_eq!(least(0, 45.0), Some(44.5));
        assert_eq!(least_rounding(0, |r| spark_order(r, 45.0) == Ordering::Greater), Some(45.5));
        // 2.675 is below 2.675 as a double, yet its text rounds up.
        assert_eq!(least(2, 2.68), Some(2.675));
        // Not a rounding: the first value that rounds above it.
        assert_eq!(least(0, 45.3), Some(45.5));
        assert_eq!(least(-2, 1300.0), Some(1250.0));
        assert_eq!(least(0, f64::NEG_INFINITY), Some(f64::NEG_INFINITY));
        assert_eq!(least(0, f64::INFINITY), Some(f64::INFINITY));
        match least(0, f64::NAN) {
            Some(nan) => assert!(nan.is_nan()),
            other => panic!("{other:?}"),
        }
        assert_eq!(least_rounding(0, |r| spark_order(r, f64::NAN) == Ordering::Greater), None);
    }

    fn double() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            // Decimals of a few digits and halves at them, a few ulps either side.
            (-1_000_000i64..1_000_000, 0i32..4, -2i64..3).prop_map(|(n, d, ulps)| {
                let value = n as f64 / 2.0 / 10f64.powi(d);
                f64::from_bits((value.to_bits() as i64 + ulps) as u64)
            }),
            Just(0.0),
            Just(-0.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
        ]
    }

    /// `round(x, scale) op target` on `values`, bound and evaluated: each row's answer, and
    /// whether the bound filter still rounds.
    fn bound_and_evaluated(
        values: &[Option<f64>],
        scale: i32,
        op: CompareOp,
        target: &str,
    ) -> (Vec<Option<bool>>, bool) {
        use crate::filter::{BindOptions, bind, evaluate, parse_filter};
        use arrow::array::RecordBatch;
        let batch =
            RecordBatch::try_from_iter([("x", Arc::new(Float64Array::from(values.to_vec())) as ArrayRef)]).unwrap();
        let filter = format!("round(x, {scale}) {op} {target}");
        let bound = bind(&parse_filter(&filter).unwrap(), &batch.schema(), &BindOptions::default()).unwrap();
        let rounds = format!("{bound:?}").contains("Round");
        (evaluate(&bound, &batch).unwrap().iter().collect(), rounds)
    }

    #[test]
    fn comparisons_of_a_rounded_column_are_bound_without_the_rounding() {
        let values = [Some(44.5), Some(45.49), Some(45.5), Some(-44.5), None, Some(f64::NAN)];
        let (passed, rounds) = bound_and_evaluated(&values, 0, CompareOp::Eq, "45");
        assert!(!rounds);
        assert_eq!(passed, [Some(true), Some(true), Some(false), Some(false), None, Some(false)]);
        let (passed, rounds) = bound_and_evaluated(&values, 0, CompareOp::NotEq, "45");
        assert!(!rounds);
        assert_eq!(passed, [Some(false), Some(false), Some(true), Some(true), None, Some(true)]);
        // `<=>` keeps the rounding (NULL rows are false there, not NULL).
        assert!(bound_and_evaluated(&values, 0, CompareOp::NullSafeEq, "45").1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// Every operator on drawn values (NULL, NaN, ±0.0, the infinities and values a few
        /// ulps from halves among them) answers as rounding each row and comparing does.
        #[test]
        fn rounded_comparisons_answer_as_spark(
            values in proptest::collection::vec(proptest::option::weighted(0.9, double()), 1..40),
            target in double().prop_filter("a finite literal", |t| t.is_finite()),
            scale in -3i32..4,
        ) {
            for op in CompareOp::ALL {
                let (passed, rounds) = bound_and_evaluated(&values, scale, op, &format!("{target:e}"));
                prop_assert_eq!(rounds, op == CompareOp::NullSafeEq);
                for (value, passed) in values.iter().zip(passed) {
                    let expected = match value {
                        None => (op == CompareOp::NullSafeEq).then_some(false),
                        Some(value) => Some(op.holds(spark_order(round_double(*value, scale), target))),
                    };
                    prop_assert_eq!(passed, expected, "round({:?}, {}) {} {:e}", value, scale, op, target);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5_000))]

        /// Comparing the value with the bounds answers as rounding it and comparing does.
        #[test]
        fn bounds_answer_as_rounding(
            values in proptest::collection::vec(double(), 1..40),
            target in double(),
            scale in -3i32..4,
        ) {
            let passes = |least: Option<f64>, value: f64| match least {
                Some(bound) => spark_order(value, bound) != Ordering::Less,
                None => false,
            };
            let at_least = least(scale, target);
            let above = least_rounding(scale, |r| spark_order(r, target) == Ordering::Greater);
            for value in values.iter().copied().chain([target]) {
                let rounded = spark_order(round_double(value, scale), target);
                prop_assert_eq!(passes(at_least, value), rounded != Ordering::Less, "round({}, {}) >= {}", value, scale, target);
                prop_assert_eq!(passes(above, value), rounded == Ordering::Greater, "round({}, {}) > {}", value, scale, target);
            }
        }
    }
}
