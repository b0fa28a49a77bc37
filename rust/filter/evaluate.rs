//! Evaluating a [`BoundExpr`] on a record batch with Spark SQL's semantics, on Arrow's
//! compute kernels.
//!
//! * Comparisons with NULL are NULL; AND / OR / NOT are three-valued (Kleene); `<=>` is
//!   never NULL; `x IN (...)` is the OR of `x = item`, so a NULL item makes a non-match NULL.
//! * Floats compare as Spark does, not as IEEE: NaN equals NaN and is larger than every
//!   other value (+∞ included), and -0.0 equals 0.0. Arrow's kernels compare by IEEE total
//!   order, so float operands are normalised (every NaN to one NaN, -0.0 to 0.0) first.
//! * Strings compare as UTF-8 bytes, binaries as unsigned bytes.
//! * Arithmetic is Spark 4's with ANSI mode on: integer overflow, decimal overflow and
//!   division by zero (any numeric type: `/` on integers is DOUBLE division, and ANSI
//!   raises on a zero divisor rather than giving ±∞ or NULL) are errors, as are strings
//!   an implicit or explicit cast cannot read.
//! * Like Spark's generated code, the right side of AND is only evaluated where the left is
//!   not false (of OR, where it is not true), so `x != 0 AND 10 / x > 1` raises nothing for
//!   rows with `x = 0`: error-raising operations only see the rows that reach them.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Datum, Scalar, UInt32Array, make_array, new_null_array};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::compute::kernels::{boolean, cmp, numeric};
use arrow::compute::{like, nlike, nullif, take};
use arrow::datatypes::{DataType, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use super::affix::{affix_matches, like_affix};
use super::bind::{BoundColumn, BoundExpr};
use super::cast::{cast_array, cast_or_try, describe};
use super::decimal_arith::decimal_arithmetic;
use super::float_compare::{compare_with_literal, spark_float_order};
use super::function_kernels;
use super::functions::ScalarFunction;
use super::like_prefilter::like_prefiltered;
use super::like_regex;
use super::select_rows::{Piece, assemble, select_rows};
use super::{ArithmeticOp, CompareOp};
use crate::{PqsiftError, Result};

/// Evaluates a bound filter on `batch` (which must have the schema the filter was bound
/// to). Returns one boolean per row; NULL means unknown, which a filter treats as not
/// selected. Errors are Spark's ANSI runtime errors (overflow, division by zero, a string
/// that does not cast), raised only for rows that reach the failing operation.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Float64Array, RecordBatch};
/// use arrow::datatypes::{DataType, Field, Schema};
/// use pqsift::filter::{bind, evaluate, parse_filter, BindOptions};
///
/// let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, true)]));
/// let x = Float64Array::from(vec![Some(f64::NAN), Some(-0.0), Some(1.0), None]);
/// let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(x)]).unwrap();
/// let options = BindOptions::default();
///
/// let filter = bind(&parse_filter("x > 100").unwrap(), &schema, &options).unwrap();
/// let selected = evaluate(&filter, &batch).unwrap();
/// // NaN is larger than everything; NULL compares to NULL.
/// assert_eq!(selected.iter().collect::<Vec<_>>(), [Some(true), Some(false), Some(false), None]);
///
/// let filter = bind(&parse_filter("x = 0.0").unwrap(), &schema, &options).unwrap();
/// assert_eq!(evaluate(&filter, &batch).unwrap().value(1), true); // -0.0 = 0.0
/// ```
pub fn evaluate(expr: &BoundExpr, batch: &RecordBatch) -> Result<BooleanArray> {
    if expr.data_type() != DataType::Boolean {
        return Err(PqsiftError::filter(format!(
            "a filter must be BOOLEAN, but this one is {}",
            describe(&expr.data_type())
        )));
    }
    let evaluator = Evaluator { batch };
    let result = evaluator.eval(expr, None)?.into_array(batch.num_rows())?;
    Ok(result.as_boolean().clone())
}

/// Evaluates any bound expression on `batch`: one value per row (a constant expression on a
/// one-row batch gives its value).
pub(crate) fn evaluate_value(expr: &BoundExpr, batch: &RecordBatch) -> Result<ArrayRef> {
    Evaluator { batch }.eval(expr, None)?.into_array(batch.num_rows())
}

/// An evaluated sub-expression: one value per row, or one value for all rows.
enum Value {
    Array(ArrayRef),
    /// A one-element array standing for every row.
    Scalar(ArrayRef),
}

impl Value {
    fn is_scalar(&self) -> bool {
        matches!(self, Self::Scalar(_))
    }

    fn array(&self) -> &ArrayRef {
        match self {
            Self::Array(array) | Self::Scalar(array) => array,
        }
    }

    fn into_array(self, rows: usize) -> Result<ArrayRef> {
        match self {
            Self::Array(array) => Ok(array),
            Self::Scalar(value) => {
                let indices = UInt32Array::from(vec![0u32; rows]);
                take(&value, &indices, None).map_err(internal)
            }
        }
    }

    fn datum(&self) -> Box<dyn Datum> {
        match self {
            Self::Array(array) => Box::new(array.clone()),
            Self::Scalar(value) => Box::new(Scalar::new(value.clone())),
        }
    }

    /// The same shape (array or scalar) as `self` and `other` imply for a result.
    fn wrap_like(self_scalar: bool, other_scalar: bool, result: ArrayRef) -> Self {
        if self_scalar && other_scalar { Self::Scalar(result) } else { Self::Array(result) }
    }
}

fn internal(error: ArrowError) -> PqsiftError {
    PqsiftError::filter(format!("filter evaluation failed: {error}"))
}

struct Evaluator<'a> {
    batch: &'a RecordBatch,
}

impl Evaluator<'_> {
    fn rows(&self) -> usize {
        self.batch.num_rows()
    }

    #[recursive::recursive]
    fn eval(&self, expr: &BoundExpr, active: Option<&BooleanBuffer>) -> Result<Value> {
        match expr {
            BoundExpr::Column(column) => Ok(Value::Array(self.column(column)?)),
            BoundExpr::Literal(value) => Ok(Value::Scalar(value.clone())),
            BoundExpr::Cast { expr: inner, to, session_time_zone, null_on_error } => {
                let value = self.eval(inner, active)?;
                let scalar = value.is_scalar();
                let input = self.mask(value, active)?;
                let cast = cast_or_try(input.array(), to, session_time_zone, *null_on_error);
                let cast = self.unless_no_row_reaches(cast, scalar, to, active)?;
                Ok(Value::wrap_like(scalar, true, cast))
            }
            BoundExpr::Compare { op, left, right } => {
                let (left, right) = (self.eval(left, active)?, self.eval(right, active)?);
                let direct = match (&left, &right) {
                    (Value::Array(column), Value::Scalar(literal)) => compare_with_literal(*op, column, literal, false),
                    (Value::Scalar(literal), Value::Array(column)) => compare_with_literal(*op, column, literal, true),
                    _ => None,
                };
                if let Some(result) = direct {
                    return Ok(Value::Array(Arc::new(result)));
                }
                let (left, right) = (normalise_floats(left)?, normalise_floats(right)?);
                let result = compare(*op, &left, &right)?;
                Ok(Value::wrap_like(left.is_scalar(), right.is_scalar(), Arc::new(result)))
            }
            BoundExpr::InList { expr: tested, list, negated } => {
                let value = normalise_floats(self.eval(tested, active)?)?;
                let mut any_equal: Option<BooleanArray> = None;
                for item in list {
                    let item = normalise_floats(self.eval(item, active)?)?;
                    let equal = compare(CompareOp::Eq, &value, &item)?;
                    let equal = Value::wrap_like(value.is_scalar(), item.is_scalar(), Arc::new(equal))
                        .into_array(self.rows())?;
                    let equal = equal.as_boolean().clone();
                    any_equal = Some(match any_equal {
                        None => equal,
                        Some(so_far) => boolean::or_kleene(&so_far, &equal).map_err(internal)?,
                    });
                }
                let result = any_equal.unwrap_or_else(|| BooleanArray::from(vec![false; self.rows()]));
                let result = if *negated { boolean::not(&result).map_err(internal)? } else { result };
                Ok(Value::Array(Arc::new(result)))
            }
            // One set look-up per row (the set normalises floats itself).
            BoundExpr::InSet { expr: tested, set, negated } => {
                let value = self.eval(tested, active)?;
                let found = set.contains(&value.into_array(self.rows())?)?;
                let result = if *negated { boolean::not(&found).map_err(internal)? } else { found };
                Ok(Value::Array(Arc::new(result)))
            }
            BoundExpr::IsNull { expr: tested, negated } => {
                let value = self.eval(tested, active)?;
                let result = if *negated {
                    boolean::is_not_null(value.array().as_ref())
                } else {
                    boolean::is_null(value.array().as_ref())
                }
                .map_err(internal)?;
                Ok(Value::wrap_like(value.is_scalar(), true, Arc::new(result)))
            }
            BoundExpr::Like { expr: tested, pattern, negated, regex } => {
                let value = self.eval(tested, active)?;
                // A prefix or suffix pattern, or a column searched for the pattern's longest
                // literal run first; else the pattern's compiled expression, or Arrow's kernel.
                let fast = match like_affix(pattern) {
                    Some((affix, end)) => affix_matches(value.array(), affix.as_bytes(), end),
                    None if !value.is_scalar() => {
                        like_prefiltered(value.array(), pattern, regex.as_ref()).map_err(internal)?
                    }
                    None => None,
                };
                if let Some(matches) = fast {
                    let result = if *negated { boolean::not(&matches).map_err(internal)? } else { matches };
                    return Ok(Value::wrap_like(value.is_scalar(), true, Arc::new(result)));
                }
                if let (Some(regex), false) = (regex, value.is_scalar())
                    && let Some(result) = like_regex::matches(value.array(), regex, *negated)
                {
                    return Ok(Value::Array(Arc::new(result)));
                }
                let pattern: ArrayRef = Arc::new(arrow::array::StringArray::from(vec![pattern.as_str()]));
                let pattern = cast_array(&pattern, value.array().data_type(), "UTC")?;
                let pattern = Scalar::new(pattern);
                let datum = value.datum();
                let result = if *negated { nlike(datum.as_ref(), &pattern) } else { like(datum.as_ref(), &pattern) }
                    .map_err(internal)?;
                Ok(Value::wrap_like(value.is_scalar(), true, Arc::new(result)))
            }
            BoundExpr::And(left, right) | BoundExpr::Or(left, right) => {
                let is_and = matches!(expr, BoundExpr::And(..));
                let left = self.eval(left, active)?.into_array(self.rows())?;
                let left = left.as_boolean();
                // AND needs the right side where the left is true or NULL; OR where it is
                // false or NULL.
                let decided = match (is_and, left.nulls()) {
                    (true, None) => !left.values(),
                    (true, Some(valid)) => &!left.values() & valid.inner(),
                    (false, None) => left.values().clone(),
                    (false, Some(valid)) => left.values() & valid.inner(),
                };
                let mut needed = !&decided;
                if let Some(active) = active {
                    needed = &needed & active;
                }
                if needed.count_set_bits() == 0 {
                    return Ok(Value::Array(Arc::new(left.clone())));
                }
                let right = self.eval(right, Some(&needed))?.into_array(self.rows())?;
                let right = right.as_boolean();
                let result = if is_and { boolean::and_kleene(left, right) } else { boolean::or_kleene(left, right) }
                    .map_err(internal)?;
                Ok(Value::Array(Arc::new(result)))
            }
            BoundExpr::Not(inner) => {
                let value = self.eval(inner, active)?;
                let result = boolean::not(value.array().as_boolean()).map_err(internal)?;
                Ok(Value::wrap_like(value.is_scalar(), true, Arc::new(result)))
            }
            BoundExpr::Arithmetic { op, left, right, data_type, text } => {
                let left = self.eval(left, active)?;
                let right = self.eval(right, active)?;
                let scalar = left.is_scalar() && right.is_scalar();
                let (left, right) = (self.mask(left, active)?, self.mask(right, active)?);
                let result = arithmetic(*op, left, right, data_type, text, self.rows());
                let result = self.unless_no_row_reaches(result, scalar, data_type, active)?;
                Ok(Value::wrap_like(scalar, true, result))
            }
            BoundExpr::Function { function: ScalarFunction::Coalesce, args, .. } => self.coalesce(args, active),
            BoundExpr::Function { function, args, data_type, session_time_zone, text } => {
                let values = args.iter().map(|arg| self.eval(arg, active)).collect::<Result<Vec<_>>>()?;
                let scalar = values.iter().all(Value::is_scalar);
                // Constants stay one value: the kernels read them for every row.
                let inputs = values
                    .into_iter()
                    .map(|value| {
                        let constant = value.is_scalar();
                        Ok(function_kernels::Arg { values: self.mask(value, active)?.array().clone(), constant })
                    })
                    .collect::<Result<Vec<_>>>()?;
                let rows = if scalar { 1 } else { self.rows() };
                let result = function_kernels::call(function, &inputs, rows, data_type, session_time_zone, text);
                let result = self.unless_no_row_reaches(result, scalar, data_type, active)?;
                Ok(Value::wrap_like(scalar, true, result))
            }
            BoundExpr::Case { branches, otherwise } => self.case(branches, otherwise, active),
            BoundExpr::Negate { expr: inner, text } | BoundExpr::Abs { expr: inner, text } => {
                let value = self.eval(inner, active)?;
                let scalar = value.is_scalar();
                let input = self.mask(value, active)?;
                let result = if matches!(expr, BoundExpr::Negate { .. }) {
                    negate(input.array(), text)
                } else {
                    absolute(input.array(), text)
                };
                let result = self.unless_no_row_reaches(result, scalar, &expr.data_type(), active)?;
                Ok(Value::wrap_like(scalar, true, result))
            }
        }
    }

    /// `coalesce`: each argument evaluated only for the rows still NULL.
    fn coalesce(&self, args: &[BoundExpr], active: Option<&BooleanBuffer>) -> Result<Value> {
        let mut result = self.eval(&args[0], active)?;
        for arg in &args[1..] {
            let missing = match result.array().logical_nulls() {
                None => break,
                Some(valid) => !valid.inner(),
            };
            let missing = match (&result, active) {
                (Value::Scalar(_), _) => missing,
                (Value::Array(_), Some(active)) => &missing & active,
                (Value::Array(_), None) => missing,
            };
            if missing.count_set_bits() == 0 {
                break;
            }
            let next = self.eval(arg, if result.is_scalar() { active } else { Some(&missing) })?;
            result = if result.is_scalar() {
                // NULL constant so far: the next argument is the answer.
                next
            } else {
                Value::Array(select_rows(&missing, next.array(), next.is_scalar(), result.array()).map_err(internal)?)
            };
        }
        Ok(result)
    }

    /// `CASE`: each condition evaluated for the rows no earlier branch took, each value for
    /// the rows its branch takes (so a branch's errors only count where it is taken); the
    /// result put together once, from every branch taken.
    fn case(
        &self,
        branches: &[(BoundExpr, BoundExpr)],
        otherwise: &BoundExpr,
        active: Option<&BooleanBuffer>,
    ) -> Result<Value> {
        let rows = self.rows();
        let mut remaining = active.cloned().unwrap_or_else(|| BooleanBuffer::new_set(rows));
        let mut taken: Vec<(BooleanBuffer, Value)> = Vec::with_capacity(branches.len() + 1);
        for (condition, value) in branches {
            if remaining.count_set_bits() == 0 {
                break;
            }
            let holds = self.eval(condition, Some(&remaining))?.into_array(rows)?;
            let holds = holds.as_boolean();
            let true_rows = match holds.nulls() {
                None => holds.values().clone(),
                Some(valid) => holds.values() & valid.inner(),
            };
            let rows_taken = &true_rows & &remaining;
            remaining = &remaining & &!&rows_taken;
            if rows_taken.count_set_bits() > 0 {
                let value = self.eval(value, Some(&rows_taken))?;
                taken.push((rows_taken, value));
            }
        }
        if remaining.count_set_bits() > 0 {
            let value = self.eval(otherwise, Some(&remaining))?;
            taken.push((remaining, value));
        }
        let pieces: Vec<Piece<'_>> = taken
            .iter()
            .map(|(rows_taken, value)| Piece { rows: rows_taken, values: value.array(), constant: value.is_scalar() })
            .collect();
        Ok(Value::Array(assemble(&pieces, &otherwise.data_type(), rows).map_err(internal)?))
    }

    /// A constant's error only counts if some row reaches it (Spark evaluates per row): with
    /// no such row the constant is NULL instead.
    fn unless_no_row_reaches(
        &self,
        result: Result<ArrayRef>,
        scalar: bool,
        data_type: &DataType,
        active: Option<&BooleanBuffer>,
    ) -> Result<ArrayRef> {
        let reached = match active {
            None => self.rows() > 0,
            Some(active) => active.count_set_bits() > 0,
        };
        match result {
            Err(_) if scalar && !reached => Ok(new_null_array(data_type, 1)),
            other => other,
        }
    }

    /// `value` with the rows outside `active` set to NULL, so that operations that can fail
    /// only see the rows that reach them.
    fn mask(&self, value: Value, active: Option<&BooleanBuffer>) -> Result<Value> {
        let (Value::Array(array), Some(active)) = (&value, active) else {
            return Ok(value);
        };
        if active.count_set_bits() == active.len() {
            return Ok(value);
        }
        let inactive = BooleanArray::new(!active, None);
        Ok(Value::Array(nullif(array.as_ref(), &inactive).map_err(internal)?))
    }

    /// The column's values; a struct field is NULL where any enclosing struct is.
    fn column(&self, column: &BoundColumn) -> Result<ArrayRef> {
        let mismatch = |found: &DataType| {
            PqsiftError::filter(format!(
                "the batch does not match the schema the filter was bound to: column {} is {found}, expected {}",
                column.path, column.data_type
            ))
        };
        let (first, rest) =
            column.indices.split_first().ok_or_else(|| PqsiftError::filter("internal error: empty column path"))?;
        let mut array = self.batch.columns().get(*first).cloned().ok_or_else(|| mismatch(&DataType::Null))?;
        for index in rest {
            let parent = array.as_struct_opt().ok_or_else(|| mismatch(array.data_type()))?;
            let child = parent.columns().get(*index).cloned().ok_or_else(|| mismatch(array.data_type()))?;
            array = match parent.nulls() {
                None => child,
                Some(parent_nulls) => {
                    let nulls = NullBuffer::union(Some(parent_nulls), child.logical_nulls().as_ref());
                    let data = child.to_data().into_builder().nulls(nulls).build().map_err(internal)?;
                    make_array(data)
                }
            };
        }
        if array.data_type() != &column.data_type {
            return Err(mismatch(array.data_type()));
        }
        Ok(array)
    }
}

fn normalise_floats(value: Value) -> Result<Value> {
    Ok(match value {
        Value::Array(array) => Value::Array(spark_float_order(&array)),
        Value::Scalar(array) => Value::Scalar(spark_float_order(&array)),
    })
}

fn compare(op: CompareOp, left: &Value, right: &Value) -> Result<BooleanArray> {
    let (left, right) = (left.datum(), right.datum());
    let (left, right) = (left.as_ref(), right.as_ref());
    match op {
        CompareOp::Eq => cmp::eq(left, right),
        CompareOp::NotEq => cmp::neq(left, right),
        CompareOp::Lt => cmp::lt(left, right),
        CompareOp::LtEq => cmp::lt_eq(left, right),
        CompareOp::Gt => cmp::gt(left, right),
        CompareOp::GtEq => cmp::gt_eq(left, right),
        CompareOp::NullSafeEq => cmp::not_distinct(left, right),
    }
    .map_err(internal)
}

fn overflow(text: &str, data_type: &DataType) -> PqsiftError {
    PqsiftError::filter(format!(
        "arithmetic overflow in {text}: the result does not fit {} (Spark's ANSI mode raises ARITHMETIC_OVERFLOW)",
        describe(data_type)
    ))
}

fn arithmetic(
    op: ArithmeticOp,
    left: Value,
    right: Value,
    data_type: &DataType,
    text: &str,
    rows: usize,
) -> Result<ArrayRef> {
    if let DataType::Decimal128(..) = data_type {
        let scalar = left.is_scalar() && right.is_scalar();
        let rows = if scalar { 1 } else { rows };
        let as_array = |value: Value| -> Result<ArrayRef> {
            match value {
                Value::Scalar(array) if scalar => Ok(array),
                other => other.into_array(rows),
            }
        };
        return decimal_arithmetic(op, &as_array(left)?, &as_array(right)?, data_type, text);
    }
    if op == ArithmeticOp::Divide {
        check_nonzero_divisors(&left, &right, text)?;
    }
    // A constant stays a scalar: Arrow's kernels take it as it is, where spread to every
    // row it cost an array the batch's length to make and read.
    let (left, right) = (left.datum(), right.datum());
    let result = match op {
        ArithmeticOp::Add => numeric::add(left.as_ref(), right.as_ref()),
        ArithmeticOp::Subtract => numeric::sub(left.as_ref(), right.as_ref()),
        ArithmeticOp::Multiply => numeric::mul(left.as_ref(), right.as_ref()),
        ArithmeticOp::Divide => numeric::div(left.as_ref(), right.as_ref()),
    };
    result.map_err(|error| match error {
        ArrowError::ArithmeticOverflow(_) => overflow(text, data_type),
        other => internal(other),
    })
}

/// Spark's ANSI `DIVIDE_BY_ZERO`: a zero (or -0.0) divisor where the dividend is not NULL
/// (either may be a constant). Integer and decimal divisions are not checked here.
fn check_nonzero_divisors(dividend: &Value, divisor: &Value, text: &str) -> Result<()> {
    let values = divisor.array();
    let zeros = match values.data_type() {
        DataType::Float64 => {
            let values = values.as_primitive::<Float64Type>();
            BooleanBuffer::collect_bool(values.len(), |i| values.value(i) == 0.0)
        }
        DataType::Float32 => {
            let values = values.as_primitive::<Float32Type>();
            BooleanBuffer::collect_bool(values.len(), |i| values.value(i) == 0.0)
        }
        _ => return Ok(()),
    };
    let zeros = match values.logical_nulls() {
        Some(valid) => &zeros & valid.inner(),
        None => zeros,
    };
    if zeros.count_set_bits() == 0 {
        return Ok(());
    }
    let dividends = dividend.array();
    let found = match (divisor.is_scalar(), dividend.is_scalar(), dividends.logical_nulls()) {
        // A constant zero: any dividend with a value meets it; a constant dividend with a
        // value meets every zero.
        (true, _, _) | (false, true, _) => dividends.null_count() < dividends.len(),
        (false, false, None) => true,
        (false, false, Some(valid)) => (&zeros & valid.inner()).count_set_bits() > 0,
    };
    if found {
        return Err(PqsiftError::filter(format!(
            "division by zero in {text} (Spark's ANSI mode raises DIVIDE_BY_ZERO)"
        )));
    }
    Ok(())
}

fn negate(array: &ArrayRef, text: &str) -> Result<ArrayRef> {
    numeric::neg(array.as_ref()).map_err(|error| match error {
        ArrowError::ArithmeticOverflow(_) => overflow(text, array.data_type()),
        other => internal(other),
    })
}

fn absolute(array: &ArrayRef, text: &str) -> Result<ArrayRef> {
    let fail = |_| ArrowError::ArithmeticOverflow(String::new());
    macro_rules! checked_abs {
        ($type:ty) => {
            array
                .as_primitive::<$type>()
                .try_unary::<_, $type, _>(|v| v.checked_abs().ok_or(()).map_err(fail))
                .map(|a| Arc::new(a) as ArrayRef)
        };
    }
    let result = match array.data_type() {
        DataType::Int8 => checked_abs!(Int8Type),
        DataType::Int16 => checked_abs!(Int16Type),
        DataType::Int32 => checked_abs!(Int32Type),
        DataType::Int64 => checked_abs!(Int64Type),
        DataType::Decimal128(..) => checked_abs!(Decimal128Type).and_then(|a| {
            let DataType::Decimal128(p, s) = array.data_type() else { unreachable!() };
            Ok(Arc::new(a.as_primitive::<Decimal128Type>().clone().with_precision_and_scale(*p, *s)?) as ArrayRef)
        }),
        DataType::Float32 => {
            Ok(Arc::new(array.as_primitive::<Float32Type>().unary::<_, Float32Type>(f32::abs)) as ArrayRef)
        }
        DataType::Float64 => {
            Ok(Arc::new(array.as_primitive::<Float64Type>().unary::<_, Float64Type>(f64::abs)) as ArrayRef)
        }
        DataType::Null => Ok(new_null_array(&DataType::Null, array.len())),
        other => {
            return Err(PqsiftError::filter(format!("abs is not defined for {} in {text}", describe(other))));
        }
    };
    result.map_err(|error| match error {
        ArrowError::ArithmeticOverflow(_) => overflow(text, array.data_type()),
        other => internal(other),
    })
}
