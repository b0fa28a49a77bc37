//! The preimage of a comparison of an integer's DOUBLE arithmetic with a constant
//! (`duration_ms / 1000 > 30`): comparisons of the integer itself.
//!
//! Spark computes `i / 1000` as `CAST(i AS DOUBLE) / 1000.0`. With a finite constant (not
//! zero, for `*` and `/`) that never decreases as `i` grows, or never increases (a negative
//! factor, `c - i`), so the integers that pass a comparison of it with a constant are
//! those from one integer on, or those below one. That integer is found once, when the
//! filter is bound, by bisecting the integer type's range with the same arithmetic; each
//! row is then compared as an integer (no cast, no division), and statistics prune on it.
//!
//! ```text
//! duration_ms / 1000 > 30      → duration_ms >= 30001
//! 2 - i <= 0.5                 → i >= 2
//! ```

use std::cmp::Ordering;

use super::CompareOp;
use super::float_compare::spark_order;
use super::preimage::{Preimage, preimage};

/// `x` (an integer, as a DOUBLE) and a constant `c` through one operator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Step {
    /// `x + c` (or `c + x`).
    Add(f64),
    /// `x - c`.
    Subtract(f64),
    /// `c - x`.
    SubtractFrom(f64),
    /// `x * c` (or `c * x`).
    Multiply(f64),
    /// `x / c`.
    Divide(f64),
}

impl Step {
    /// The DOUBLE Spark computes for `x`.
    fn apply(self, x: i64) -> f64 {
        let x = x as f64;
        match self {
            Self::Add(c) => x + c,
            Self::Subtract(c) => x - c,
            Self::SubtractFrom(c) => c - x,
            Self::Multiply(c) => x * c,
            Self::Divide(c) => x / c,
        }
    }

    /// Whether the result grows with `x` (`Some(false)`: shrinks); `None` where the step is
    /// not monotone, or could make NaN (a constant that is not finite, a factor of zero).
    fn increasing(self) -> Option<bool> {
        match self {
            Self::Add(c) | Self::Subtract(c) if c.is_finite() => Some(true),
            Self::SubtractFrom(c) if c.is_finite() => Some(false),
            Self::Multiply(c) | Self::Divide(c) if c.is_finite() && c != 0.0 => Some(c > 0.0),
            _ => None,
        }
    }
}

/// The preimage of `step(x) op target` over the integers `min..=max` (see
/// [`preimage`](super::preimage::preimage), `max` the greatest value); `None` for `<=>`, or
/// a step that is not monotone.
pub(super) fn integer_preimage(op: CompareOp, step: Step, min: i64, max: i64, target: f64) -> Option<Preimage<i64>> {
    let increasing = step.increasing()?;
    let order = |x: i64| spark_order(step.apply(x), target);
    // Where `>=` and `>` start to hold (increasing), or stop holding (decreasing).
    let (first, second) = match increasing {
        true => (least(min, max, |x| order(x) != Ordering::Less), least(min, max, |x| order(x) == Ordering::Greater)),
        false => (least(min, max, |x| order(x) == Ordering::Less), least(min, max, |x| order(x) != Ordering::Greater)),
    };
    preimage(op, increasing, first, second, max)
}

/// The least integer of `min..=max` that passes `passes`, a test that, once passed, stays
/// passed as integers grow; `None` if none does.
fn least(min: i64, max: i64, passes: impl Fn(i64) -> bool) -> Option<i64> {
    if !passes(max) {
        return None;
    }
    let (mut low, mut high) = (i128::from(min) - 1, i128::from(max));
    // `low` fails (or is below the range) and `high` passes.
    while high - low > 1 {
        let middle = (low + high) / 2;
        if passes(middle as i64) {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(high as i64)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn passes(preimage: Preimage<i64>, x: i64) -> bool {
        let holds = |(op, bound): (CompareOp, i64)| op.holds(x.cmp(&bound));
        match preimage {
            Preimage::One(comparison) => holds(comparison),
            Preimage::Both([a, b]) => holds(a) && holds(b),
            Preimage::Either([a, b]) => holds(a) || holds(b),
        }
    }

    #[test]
    fn worked_examples() {
        let preimage = integer_preimage(CompareOp::Gt, Step::Divide(1000.0), i32::MIN.into(), i32::MAX.into(), 30.0);
        assert_eq!(preimage, Some(Preimage::One((CompareOp::GtEq, 30_001))));
        let preimage =
            integer_preimage(CompareOp::LtEq, Step::SubtractFrom(2.0), i32::MIN.into(), i32::MAX.into(), 0.5);
        assert_eq!(preimage, Some(Preimage::One((CompareOp::GtEq, 2))));
        // Nothing passes: `x > max`.
        let preimage = integer_preimage(CompareOp::Gt, Step::Add(0.0), -128, 127, 1000.0);
        assert_eq!(preimage, Some(Preimage::One((CompareOp::Gt, 127))));
        assert_eq!(integer_preimage(CompareOp::Eq, Step::Multiply(0.0), -128, 127, 0.0), None);
        assert_eq!(integer_preimage(CompareOp::NullSafeEq, Step::Add(1.0), -128, 127, 0.0), None);
    }

    fn constant() -> impl Strategy<Value = f64> {
        prop_oneof![
            (-2_000i64..2_000).prop_map(|n| n as f64 / 4.0),
            any::<f64>(),
            Just(0.0),
            Just(-0.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(1e-300),
        ]
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            constant().prop_map(Step::Add),
            constant().prop_map(Step::Subtract),
            constant().prop_map(Step::SubtractFrom),
            constant().prop_map(Step::Multiply),
            constant().prop_map(Step::Divide),
        ]
    }

    /// `filter` on an INT column `i` of `values`, bound and evaluated: each row's answer, and
    /// whether the bound filter still has arithmetic.
    fn bound_and_evaluated(values: &[Option<i32>], filter: &str) -> (Vec<Option<bool>>, bool) {
        use std::sync::Arc;

        use arrow::array::{ArrayRef, Int32Array, RecordBatch};

        use crate::filter::{BindOptions, bind, evaluate, parse_filter};
        let batch =
            RecordBatch::try_from_iter([("i", Arc::new(Int32Array::from(values.to_vec())) as ArrayRef)]).unwrap();
        let bound = bind(&parse_filter(filter).unwrap(), &batch.schema(), &BindOptions::default()).unwrap();
        let arithmetic = format!("{bound:?}").contains("Arithmetic");
        (evaluate(&bound, &batch).unwrap().iter().collect(), arithmetic)
    }

    #[test]
    fn a_division_of_a_column_is_bound_as_an_integer_compare() {
        let values = [Some(30_000), Some(30_001), None, Some(i32::MIN), Some(i32::MAX)];
        let (passed, arithmetic) = bound_and_evaluated(&values, "i / 1000 > 30");
        assert!(!arithmetic);
        assert_eq!(passed, [Some(false), Some(true), None, Some(false), Some(true)]);
        // `c / i` is not monotone: the arithmetic stays.
        assert!(bound_and_evaluated(&values, "1000 / i > 30").1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1_000))]

        /// Every operator on drawn INT rows (NULL and the extremes among them) answers as
        /// the DOUBLE arithmetic compared does, the arithmetic bound away.
        #[test]
        fn bound_comparisons_answer_as_the_arithmetic(
            values in proptest::collection::vec(
                proptest::option::weighted(0.9, prop_oneof![-5_000i32..5_000, Just(i32::MIN), Just(i32::MAX)]), 1..30),
            c in (-40i64..40).prop_filter("a factor", |c| *c != 0).prop_map(|c| c as f64 / 4.0),
            target in (-8_000i64..8_000).prop_map(|t| t as f64 / 8.0),
            form in 0usize..7,
        ) {
            let (text, step) = match form {
                0 => (format!("i + {c:e}"), Step::Add(c)),
                1 => (format!("{c:e} + i"), Step::Add(c)),
                2 => (format!("i - {c:e}"), Step::Subtract(c)),
                3 => (format!("{c:e} - i"), Step::SubtractFrom(c)),
                4 => (format!("i * {c:e}"), Step::Multiply(c)),
                5 => (format!("{c:e} * i"), Step::Multiply(c)),
                _ => (format!("i / {c:e}"), Step::Divide(c)),
            };
            for op in CompareOp::ALL {
                let filter = format!("{text} {op} {target:e}");
                let (passed, arithmetic) = bound_and_evaluated(&values, &filter);
                prop_assert_eq!(arithmetic, op == CompareOp::NullSafeEq, "{}", filter);
                for (value, passed) in values.iter().zip(passed) {
                    let expected = match value {
                        None => (op == CompareOp::NullSafeEq).then_some(false),
                        Some(x) => Some(op.holds(spark_order(step.apply(i64::from(*x)), target))),
                    };
                    prop_assert_eq!(passed, expected, "{} at {:?}", filter, value);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5_000))]

        /// Each integer passes the preimage exactly where its arithmetic passes the
        /// comparison: small ranges (every integer checked) and BIGINT's extremes.
        #[test]
        fn preimages_answer_as_the_arithmetic(
            step in step(),
            target in constant(),
            (min, max) in prop_oneof![Just((-128i64, 127i64)), Just((i64::MIN, i64::MAX))],
            probes in proptest::collection::vec(any::<i64>(), 20),
        ) {
            let xs: Vec<i64> = match min {
                -128 => (-128..=127).collect(),
                _ => probes.iter().copied().chain([i64::MIN, i64::MAX, 0, -1, 1]).collect(),
            };
            for op in CompareOp::ALL {
                let Some(preimage) = integer_preimage(op, step, min, max, target) else {
                    prop_assert!(op == CompareOp::NullSafeEq || step.increasing().is_none());
                    continue;
                };
                for &x in &xs {
                    let expected = op.holds(spark_order(step.apply(x), target));
                    prop_assert_eq!(passes(preimage, x), expected, "{:?} {} {} at {}", step, op, target, x);
                }
            }
        }
    }
}
