//! The preimage of a comparison of a monotone function of a value with a constant: the
//! comparisons of the value itself that pass the same rows (the binder puts them in the
//! function's place). Where the test starts to hold is found by each function's module
//! ([`rounded_compare`](super::rounded_compare), [`arithmetic_compare`](super::arithmetic_compare));
//! this turns it into comparisons, for every operator.
//!
//! ```text
//! f increasing, f(x) >= t from x = a on, f(x) > t from x = b on:
//!   f(x) >= t  → x >= a        f(x) <  t  → x < a
//!   f(x) >  t  → x >= b        f(x) <= t  → x < b
//!   f(x) =  t  → x >= a AND x < b
//! ```

use super::CompareOp;

/// The values `x` for which `f(x) op target`, as comparisons of `x` itself.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Preimage<T> {
    /// `x op bound`.
    One((CompareOp, T)),
    /// Both comparisons (`=`).
    Both([(CompareOp, T); 2]),
    /// Either comparison (`!=`).
    Either([(CompareOp, T); 2]),
}

/// The preimage of `f(x) op target`; `None` for `<=>`, which is never NULL where the
/// comparisons of a NULL `x` are.
///
/// For an `increasing` `f`, `first` is the least `x` with `f(x) >= target` and `second`
/// the least with `f(x) > target`; for a decreasing one, the least with `f(x) < target`
/// and with `f(x) <= target` (where `>=` and `>` stop holding). `None`: no `x` does. The
/// comparisons are `x >= b` and `x < b`, and for no `x`, `x > top` (false) and `x <= top`
/// (true), `top` being the greatest value (NaN for a DOUBLE), both NULL for a NULL `x`.
pub(super) fn preimage<T: Copy>(
    op: CompareOp,
    increasing: bool,
    first: Option<T>,
    second: Option<T>,
    top: T,
) -> Option<Preimage<T>> {
    let from = |bound: Option<T>| bound.map_or((CompareOp::Gt, top), |b| (CompareOp::GtEq, b));
    let below = |bound: Option<T>| bound.map_or((CompareOp::LtEq, top), |b| (CompareOp::Lt, b));
    Some(match (op, increasing) {
        (CompareOp::GtEq, true) | (CompareOp::Lt, false) => Preimage::One(from(first)),
        (CompareOp::Gt, true) | (CompareOp::LtEq, false) => Preimage::One(from(second)),
        (CompareOp::Lt, true) | (CompareOp::GtEq, false) => Preimage::One(below(first)),
        (CompareOp::LtEq, true) | (CompareOp::Gt, false) => Preimage::One(below(second)),
        (CompareOp::Eq, true) => Preimage::Both([from(first), below(second)]),
        (CompareOp::Eq, false) => Preimage::Both([from(second), below(first)]),
        (CompareOp::NotEq, true) => Preimage::Either([below(first), from(second)]),
        (CompareOp::NotEq, false) => Preimage::Either([below(second), from(first)]),
        (CompareOp::NullSafeEq, _) => return None,
    })
}
