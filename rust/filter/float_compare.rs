//! A float column compared with a literal, in Spark's order, in one pass.
//!
//! Spark orders NaN above every number and equal to itself, and -0.0 equal to 0.0. The
//! general path gets there by normalising the column (every NaN made one positive NaN,
//! -0.0 made 0.0: a copy of the column as soon as it holds a zero) and then comparing in
//! Arrow's total order, which does not vectorise: on a float predicate over millions of
//! doubles the two showed in profiles. Against a
//! literal the same answers follow from IEEE comparisons plus a NaN test: `x > c` is
//! `x > c || x is NaN` for a literal `c` that is a number; against a NaN literal only the
//! NaN test is left. With AVX-512 one compare answers eight doubles (or sixteen floats)
//! straight into a mask, NaN's answer chosen by the predicate; elsewhere a portable loop
//! packs each test's bit into a word (several times the AVX-512 compare's cost).
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Array, ArrayRef, BooleanArray, Float64Array};
//! use pqsift::filter::{CompareOp, float_compare::compare_with_literal};
//! let column: ArrayRef = Arc::new(Float64Array::from(vec![Some(1.0), Some(f64::NAN), None, Some(-0.0)]));
//! let zero: ArrayRef = Arc::new(Float64Array::from(vec![0.0]));
//! // NaN is above every number; -0.0 equals 0.0; a null row stays null.
//! let greater = compare_with_literal(CompareOp::Gt, &column, &zero, false).unwrap();
//! assert_eq!(greater, BooleanArray::from(vec![Some(true), Some(true), None, Some(false)]));
//! let equal = compare_with_literal(CompareOp::Eq, &column, &zero, false).unwrap();
//! assert_eq!(equal, BooleanArray::from(vec![Some(false), Some(false), None, Some(true)]));
//! // The literal on the left: 0.0 < column.
//! let less = compare_with_literal(CompareOp::Lt, &column, &zero, true).unwrap();
//! assert_eq!(less, greater);
//! ```

use std::cmp::Ordering;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::buffer::{BooleanBuffer, Buffer};
use arrow::datatypes::{ArrowPrimitiveType, DataType, Float32Type, Float64Type};

use super::CompareOp;

/// `column op literal` (or `literal op column` when `literal_on_left`) in Spark's order,
/// for a Float32 or Float64 `column` and a one-row, non-null `literal` of the same type;
/// `None` for anything else (the caller takes the general path). A null row is null,
/// except for `<=>`, where it is false.
pub fn compare_with_literal(
    op: CompareOp,
    column: &ArrayRef,
    literal: &ArrayRef,
    literal_on_left: bool,
) -> Option<BooleanArray> {
    if literal.len() != 1 || literal.null_count() != 0 || literal.data_type() != column.data_type() {
        return None;
    }
    let op = if literal_on_left { mirrored(op) } else { op };
    match column.data_type() {
        DataType::Float64 => Some(compare::<Float64Type>(op, column, literal)),
        DataType::Float32 => Some(compare::<Float32Type>(op, column, literal)),
        _ => None,
    }
}

/// The operator that gives the same answer with its operands swapped.
fn mirrored(op: CompareOp) -> CompareOp {
    match op {
        CompareOp::Lt => CompareOp::Gt,
        CompareOp::LtEq => CompareOp::GtEq,
        CompareOp::Gt => CompareOp::Lt,
        CompareOp::GtEq => CompareOp::LtEq,
        symmetric => symmetric,
    }
}

fn compare<T>(op: CompareOp, column: &ArrayRef, literal: &ArrayRef) -> BooleanArray
where
    T: ArrowPrimitiveType,
    T::Native: Float,
{
    let values = column.as_primitive::<T>().values();
    let c = literal.as_primitive::<T>().value(0);
    // `v != v` is the NaN test for any float type.
    #[allow(clippy::eq_op)]
    let bits = if c != c {
        match op {
            CompareOp::Eq | CompareOp::NullSafeEq | CompareOp::GtEq => pack(values, |v| v != v),
            CompareOp::NotEq | CompareOp::Lt => pack(values, |v| v == v),
            CompareOp::LtEq => BooleanBuffer::new_set(values.len()),
            CompareOp::Gt => BooleanBuffer::new_unset(values.len()),
        }
    } else {
        // The whole words a vector compare gave (none where the CPU has none), then the
        // rest a value at a time.
        let words = T::Native::compare_vectors(op, values, c).unwrap_or_default();
        let rest = &values[words.len() * 64..];
        match op {
            CompareOp::Eq | CompareOp::NullSafeEq => pack_after(words, rest, |v| v == c),
            CompareOp::NotEq => pack_after(words, rest, |v| v != c),
            CompareOp::Lt => pack_after(words, rest, |v| v < c),
            CompareOp::LtEq => pack_after(words, rest, |v| v <= c),
            CompareOp::Gt => pack_after(words, rest, |v| v > c || v != v),
            CompareOp::GtEq => pack_after(words, rest, |v| v >= c || v != v),
        }
    };
    match (op, column.logical_nulls()) {
        (CompareOp::NullSafeEq, Some(nulls)) => BooleanArray::new(&bits & nulls.inner(), None),
        (CompareOp::NullSafeEq, None) => BooleanArray::new(bits, None),
        (_, nulls) => BooleanArray::new(bits, nulls.filter(|n| n.null_count() > 0)),
    }
}

/// `test` of every value, packed 64 to a word without a branch per value.
fn pack<V: Copy>(values: &[V], test: impl Fn(V) -> bool) -> BooleanBuffer {
    pack_after(Vec::new(), values, test)
}

/// [`pack`] of `values` after the bits already in `words` (whole words).
fn pack_after<V: Copy>(mut words: Vec<u64>, values: &[V], test: impl Fn(V) -> bool) -> BooleanBuffer {
    let len = words.len() * 64 + values.len();
    words.reserve(values.len().div_ceil(64));
    let word = |chunk: &[V]| chunk.iter().enumerate().fold(0u64, |word, (bit, &v)| word | (u64::from(test(v)) << bit));
    let chunks = values.chunks_exact(64);
    let tail = chunks.remainder();
    words.extend(chunks.map(word));
    if !tail.is_empty() {
        words.push(word(tail));
    }
    BooleanBuffer::new(Buffer::from_vec(words), 0, len)
}

/// A float type compared a vector at a time where the CPU can.
trait Float: Copy + PartialOrd {
    /// The words of `value op c` for the values of `values`' whole 64-value words (the
    /// rest left to the caller), for a number `c` (not NaN), with the answers of
    /// [`compare`]'s scalar tests; `None` where the CPU has no vector compare.
    fn compare_vectors(op: CompareOp, values: &[Self], c: Self) -> Option<Vec<u64>>;
}

/// Implements [`Float`] for `$float` with AVX-512, else AVX: `$compare` compares `$lanes`
/// values a step (`$set1`, `$load` and `$cmp` the type's intrinsics), `$compare_avx`
/// `$lanes_avx` (`$set1_avx`, `$load_avx`, `$cmp_avx` and `$movemask`). Their predicates are IEEE's
/// with NaN's answer chosen: `_UQ` ones answer true for a NaN value, `_OQ` ones false, so
/// `Gt` (`x > c || x is NaN`) is "not less or equal", unordered true.
macro_rules! float_vectors {
    ($float:ty, $compare:ident, $lanes:literal, $set1:ident, $load:ident, $cmp:ident,
     $compare_avx:ident, $lanes_avx:literal, $set1_avx:ident, $load_avx:ident, $cmp_avx:ident, $movemask:ident) => {
        impl Float for $float {
            #[allow(unreachable_code)]
            fn compare_vectors(op: CompareOp, values: &[Self], c: Self) -> Option<Vec<u64>> {
                #[cfg(target_arch = "x86_64")]
                {
                    use std::arch::x86_64::*;
                    macro_rules! by_predicate {
                        ($function:ident) => {
                            match op {
                                CompareOp::Eq | CompareOp::NullSafeEq => $function::<_CMP_EQ_OQ>(values, c),
                                CompareOp::NotEq => $function::<_CMP_NEQ_UQ>(values, c),
                                CompareOp::Lt => $function::<_CMP_LT_OQ>(values, c),
                                CompareOp::LtEq => $function::<_CMP_LE_OQ>(values, c),
                                CompareOp::Gt => $function::<_CMP_NLE_UQ>(values, c),
                                CompareOp::GtEq => $function::<_CMP_NLT_UQ>(values, c),
                            }
                        };
                    }
                    if std::is_x86_feature_detected!("avx512f") {
                        // SAFETY: the CPU has AVX-512F.
                        return Some(unsafe { by_predicate!($compare) });
                    }
                    if std::is_x86_feature_detected!("avx") {
                        // SAFETY: the CPU has AVX.
                        return Some(unsafe { by_predicate!($compare_avx) });
                    }
                }
                None
            }
        }

        /// The words of `values[i] PREDICATE c` with AVX's 256-bit compares, as with AVX-512.
        ///
        /// # Safety
        /// The CPU has AVX.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx")]
        unsafe fn $compare_avx<const PREDICATE: i32>(values: &[$float], c: $float) -> Vec<u64> {
            use std::arch::x86_64::*;
            let c = $set1_avx(c);
            let mut words = Vec::with_capacity(values.len().div_ceil(64));
            words.extend(values.chunks_exact(64).map(|chunk| {
                let mut word = 0u64;
                for step in 0..64 / $lanes_avx {
                    // SAFETY: the chunk holds 64 values; the load is unaligned.
                    let lanes = unsafe { $load_avx(chunk.as_ptr().add(step * $lanes_avx)) };
                    // The mask's low `$lanes_avx` bits, a lane each.
                    word |= ($movemask($cmp_avx::<PREDICATE>(lanes, c)) as u32 as u64) << (step * $lanes_avx);
                }
                word
            }));
            words
        }

        /// The words of `values[i] PREDICATE c` for the whole 64-value words of `values`
        /// (the tail left to the caller).
        ///
        /// # Safety
        /// The CPU has AVX-512F.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $compare<const PREDICATE: i32>(values: &[$float], c: $float) -> Vec<u64> {
            use std::arch::x86_64::*;
            let c = $set1(c);
            let mut words = Vec::with_capacity(values.len().div_ceil(64));
            words.extend(values.chunks_exact(64).map(|chunk| {
                let mut word = 0u64;
                for step in 0..64 / $lanes {
                    // SAFETY: the chunk holds 64 values; the load is unaligned.
                    let lanes = unsafe { $load(chunk.as_ptr().add(step * $lanes)) };
                    word |= u64::from($cmp::<PREDICATE>(lanes, c)) << (step * $lanes);
                }
                word
            }));
            words
        }
    };
}
float_vectors!(
    f64,
    compare_f64_avx512,
    8,
    _mm512_set1_pd,
    _mm512_loadu_pd,
    _mm512_cmp_pd_mask,
    compare_f64_avx,
    4,
    _mm256_set1_pd,
    _mm256_loadu_pd,
    _mm256_cmp_pd,
    _mm256_movemask_pd
);
float_vectors!(
    f32,
    compare_f32_avx512,
    16,
    _mm512_set1_ps,
    _mm512_loadu_ps,
    _mm512_cmp_ps_mask,
    compare_f32_avx,
    8,
    _mm256_set1_ps,
    _mm256_loadu_ps,
    _mm256_cmp_ps,
    _mm256_movemask_ps
);

/// Floats with every NaN replaced by one positive NaN and -0.0 by 0.0, so that Arrow's
/// total order (comparison kernels, sorting, the row format's bytes) gives Spark's answers:
/// NaN equal to NaN and above every number (x86 makes `0.0 / 0.0` a negative NaN), -0.0
/// equal to 0.0. Other types, and an array holding neither NaN nor a zero, are returned as
/// they are: checking is one vectorised pass, and most data has neither.
pub(crate) fn spark_float_order(array: &ArrayRef) -> ArrayRef {
    macro_rules! normalised {
        ($array:expr, $arrow:ty, $native:ty) => {{
            let values = $array.as_primitive::<$arrow>();
            // Null slots hold arbitrary values: a NaN there costs a copy, never a wrong answer.
            // Checked a block at a time without a branch per value (which a short-circuiting
            // `any` over single values compiles to), stopping at the first block that has one.
            let unusual = values
                .values()
                .chunks(1024)
                .any(|block| block.iter().fold(false, |seen, v| seen | v.is_nan() | (*v == 0.0)));
            match unusual {
                false => Arc::clone(array),
                true => Arc::new(values.unary::<_, $arrow>(|v: $native| {
                    if v.is_nan() {
                        <$native>::NAN
                    } else if v == 0.0 {
                        0.0
                    } else {
                        v
                    }
                })) as ArrayRef,
            }
        }};
    }
    match array.data_type() {
        DataType::Float64 => normalised!(array, Float64Type, f64),
        DataType::Float32 => normalised!(array, Float32Type, f32),
        _ => Arc::clone(array),
    }
}

/// Spark's order of doubles, written out: NaN (of any sign) equal to NaN and above
/// everything, -0.0 equal to 0.0.
pub(crate) fn spark_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Float32Array, Float64Array};
    use proptest::prelude::*;

    use super::*;

    fn model(op: CompareOp, row: Option<f64>, literal: f64, literal_on_left: bool) -> Option<bool> {
        let Some(row) = row else { return (op == CompareOp::NullSafeEq).then_some(false) };
        let order = match literal_on_left {
            false => spark_order(row, literal),
            true => spark_order(literal, row),
        };
        Some(op.holds(order))
    }

    /// Values where the orders differ: NaNs of both signs, both zeros, infinities.
    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(f64::NAN),
            Just(-f64::NAN),
            Just(0.0),
            Just(-0.0),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            (-4i32..4).prop_map(f64::from),
            any::<f64>(),
        ]
    }

    proptest! {
        /// Every operator, either side, against the written-out order, for doubles and
        /// floats, at lengths that leave a partial last word.
        #[test]
        fn agrees_with_sparks_order(rows in proptest::collection::vec(proptest::option::weighted(0.9, value()), 0..200), literal in value()) {
            let doubles: ArrayRef = Arc::new(Float64Array::from(rows.clone()));
            let floats: ArrayRef = Arc::new(Float32Array::from(rows.iter().map(|r| r.map(|v| v as f32)).collect::<Vec<_>>()));
            for op in CompareOp::ALL {
                for literal_on_left in [false, true] {
                    let expected: Vec<Option<bool>> = rows.iter().map(|&r| model(op, r, literal, literal_on_left)).collect();
                    let got = compare_with_literal(op, &doubles, &(Arc::new(Float64Array::from(vec![literal])) as ArrayRef), literal_on_left).unwrap();
                    prop_assert_eq!(got.iter().collect::<Vec<_>>(), expected.clone(), "{:?} left={}", op, literal_on_left);
                    let expected: Vec<Option<bool>> =
                        rows.iter().map(|&r| model(op, r.map(|v| f64::from(v as f32)), f64::from(literal as f32), literal_on_left)).collect();
                    let got = compare_with_literal(op, &floats, &(Arc::new(Float32Array::from(vec![literal as f32])) as ArrayRef), literal_on_left).unwrap();
                    prop_assert_eq!(got.iter().collect::<Vec<_>>(), expected, "f32 {:?} left={}", op, literal_on_left);
                }
            }
        }
    }

    #[test]
    fn other_types_and_null_literals_take_the_general_path() {
        let column: ArrayRef = Arc::new(Float64Array::from(vec![1.0]));
        let null: ArrayRef = Arc::new(Float64Array::from(vec![None::<f64>]));
        assert!(compare_with_literal(CompareOp::Eq, &column, &null, false).is_none());
        let float: ArrayRef = Arc::new(Float32Array::from(vec![1.0f32]));
        assert!(compare_with_literal(CompareOp::Eq, &column, &float, false).is_none());
        let ints: ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![1]));
        assert!(compare_with_literal(CompareOp::Eq, &ints, &ints, false).is_none());
    }
}
