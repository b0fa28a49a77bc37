//! Binding function calls and `CASE`: each argument brought to the type the function takes
//! with Spark's ANSI implicit casts, the result type as Spark's, constants folded.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Date32Array, RecordBatch, RecordBatchOptions, new_null_array};
use arrow::datatypes::{DataType, Schema};

use super::{Binder, BoundExpr, Typed, null_boolean};
use crate::filter::cast::can_cast;
use crate::filter::coerce::{comparison_type, wider_numeric};
use crate::filter::functions::{ScalarFunction, TruncLevel};
use crate::filter::java_regex::JavaRegex;
use crate::filter::{Expr, SqlType};
use crate::{PqsiftError, Result};

/// Whether Spark (ANSI mode) casts a `from` argument implicitly where a function takes
/// `to` (`AnsiTypeCoercion.implicitCast`: numbers among themselves, any value to a
/// string, a string to any value, dates and timestamps among themselves).
fn implicit_cast(from: SqlType, to: SqlType) -> bool {
    use SqlType::*;
    let datetime = |t: SqlType| matches!(t, Date | Timestamp | TimestampNtz);
    from == to
        || from == Null
        || (from.is_numeric() && to.is_numeric())
        || to == String
        || from == String
        || (datetime(from) && datetime(to))
}

impl Binder<'_> {
    /// Binds `name(args)` (`whole` is the call, for messages).
    pub(super) fn bind_function(&self, whole: &Expr, name: &str, args: &[Expr]) -> Result<Typed> {
        use SqlType::*;
        if name == "current_date" {
            return self.current_date();
        }
        // Spark's optimizer drops a case conversion directly under another
        // (`SimplifyCaseConversionExpressions`): `lower(upper(s))` runs as `lower(s)`, which
        // differs where upper case is longer ('ß' becomes "SS", and stays so in lower case).
        if let ("lower" | "upper", [Expr::Function { name: inner, args: inner_args }]) = (name, args)
            && matches!(inner.as_str(), "lower" | "upper")
        {
            return self.bind_function(whole, name, inner_args);
        }
        let bound = args.iter().map(|arg| self.bind(arg)).collect::<Result<Vec<_>>>()?;
        let binary_length = name == "length" && matches!(bound.as_slice(), [typed] if typed.sql_type == Some(Binary));
        let mut bound = bound.into_iter().zip(args);
        // The next argument, brought to a type (a macro: the arms also take arguments whole).
        macro_rules! next {
            ($to:expr) => {{
                let (typed, source) = bound.next().expect("arity checked by the parser");
                self.argument(typed, $to, source, name)
            }};
        }
        let (function, arguments, result) = match name {
            // Spark's length of a BINARY counts its bytes (the kernel reads either).
            "length" if binary_length => {
                let (typed, _) = bound.next().expect("one argument");
                (ScalarFunction::Length, vec![typed.expr], Int)
            }
            "lower" | "upper" | "length" => {
                let function = match name {
                    "lower" => ScalarFunction::Lower,
                    "upper" => ScalarFunction::Upper,
                    _ => ScalarFunction::Length,
                };
                (function, vec![next!(String)?], if name == "length" { Int } else { String })
            }
            "trim" | "ltrim" | "rtrim" => {
                let function = ScalarFunction::Trim { leading: name != "rtrim", trailing: name != "ltrim" };
                let arguments = (0..args.len()).map(|_| next!(String)).collect::<Result<Vec<_>>>()?;
                (function, arguments, String)
            }
            "substring" => {
                let mut arguments = vec![next!(String)?, next!(Int)?];
                if args.len() == 3 {
                    arguments.push(next!(Int)?);
                }
                (ScalarFunction::Substring, arguments, String)
            }
            "concat" => {
                (ScalarFunction::Concat, (0..args.len()).map(|_| next!(String)).collect::<Result<_>>()?, String)
            }
            "startswith" | "endswith" | "contains" => {
                let function = match name {
                    "startswith" => ScalarFunction::StartsWith,
                    "endswith" => ScalarFunction::EndsWith,
                    _ => ScalarFunction::Contains,
                };
                (function, vec![next!(String)?, next!(String)?], Boolean)
            }
            "rlike" => {
                let (text, pattern) = (next!(String)?, next!(String)?);
                let compiled = match &pattern {
                    BoundExpr::Literal(literal) if literal.is_valid(0) => {
                        // A pattern the reader cannot run is about the column it tests.
                        let compiled = JavaRegex::new(literal.as_string::<i32>().value(0)).map_err(|error| {
                            match (error, &args[0]) {
                                (PqsiftError::Filter { reason, column: None, .. }, Expr::Column(path)) => {
                                    PqsiftError::filter_on(&path.name(), reason)
                                }
                                (error, _) => error,
                            }
                        })?;
                        Some(compiled)
                    }
                    _ => None,
                };
                (ScalarFunction::RLike(compiled), vec![text, pattern], Boolean)
            }
            "year" | "quarter" | "month" | "day" => {
                let function = match name {
                    "year" => ScalarFunction::Year,
                    "quarter" => ScalarFunction::Quarter,
                    "month" => ScalarFunction::Month,
                    _ => ScalarFunction::Day,
                };
                (function, vec![next!(Date)?], Int)
            }
            "hour" | "minute" | "second" => {
                let function = match name {
                    "hour" => ScalarFunction::Hour,
                    "minute" => ScalarFunction::Minute,
                    _ => ScalarFunction::Second,
                };
                // Both kinds of timestamp are read as they are (a wall clock stays one).
                let (typed, source) = bound.next().expect("arity checked by the parser");
                let target = if typed.sql_type == Some(TimestampNtz) { TimestampNtz } else { Timestamp };
                (function, vec![self.argument(typed, target, source, name)?], Int)
            }
            "date_trunc" => {
                let (level, source) = bound.next().expect("arity checked by the parser");
                let level = match &level.expr {
                    BoundExpr::Literal(text) if level.sql_type == Some(String) || level.sql_type == Some(Null) => {
                        let text = crate::filter::cast::cast_array(text, &DataType::Utf8, "UTC")?;
                        let text = text.as_string::<i32>();
                        text.is_valid(0).then(|| TruncLevel::parse(text.value(0))).flatten()
                    }
                    _ => {
                        return Err(PqsiftError::filter(format!(
                            "date_trunc needs a constant unit such as 'DAY', not {source}"
                        )));
                    }
                };
                let timestamp = next!(Timestamp)?;
                match level {
                    // Spark gives NULL for a unit it does not know.
                    None => {
                        return Ok(Typed {
                            expr: BoundExpr::Literal(new_null_array(&Timestamp.to_arrow(), 1)),
                            sql_type: Some(Timestamp),
                        });
                    }
                    Some(level) => (ScalarFunction::DateTrunc(level), vec![timestamp], Timestamp),
                }
            }
            "date_add" | "date_sub" => {
                let function = if name == "date_add" { ScalarFunction::DateAdd } else { ScalarFunction::DateSub };
                let start = next!(Date)?;
                let (days, source) = bound.next().expect("arity checked by the parser");
                if !matches!(days.sql_type, Some(Byte | Short | Int | Null | String)) {
                    return Err(PqsiftError::filter(format!(
                        "{name} needs an INT number of days, but {source} is {}",
                        days.type_name()
                    )));
                }
                (function, vec![start, self.argument(days, Int, source, name)?], Date)
            }
            "datediff" => (ScalarFunction::DateDiff, vec![next!(Date)?, next!(Date)?], Int),
            "coalesce" => {
                let bound: Vec<(Typed, &Expr)> = bound.collect();
                let common = self.common_type(bound.iter().map(|(typed, source)| (typed, *source)), name)?;
                let arguments = bound
                    .into_iter()
                    .map(|(typed, source)| self.coerce(typed, common, source))
                    .collect::<Result<Vec<_>>>()?;
                (ScalarFunction::Coalesce, arguments, common)
            }
            "round" => {
                let (value, source) = bound.next().expect("arity checked by the parser");
                let value_type = self.numeric_argument(&value, source, name)?;
                let scale = match bound.next() {
                    None => 0,
                    Some((scale, scale_source)) => constant_int(&scale).ok_or_else(|| {
                        PqsiftError::filter(format!("round needs a constant INT scale, not {scale_source}"))
                    })?,
                };
                let result = match value_type {
                    Decimal { precision, scale: s } => {
                        let (p, s) = (i32::from(precision), i32::from(s));
                        let integral = p - s + 1;
                        if scale < 0 {
                            Decimal { precision: integral.max(1 - scale).min(38) as u8, scale: 0 }
                        } else {
                            let new_scale = s.min(scale);
                            Decimal { precision: (integral + new_scale).min(38) as u8, scale: new_scale as i8 }
                        }
                    }
                    Null => Int,
                    other => other,
                };
                if result.is_integral() && scale < 0 {
                    return Err(PqsiftError::filter(format!(
                        "round of an integer to a negative scale ({whole}) is not supported; write it as a DECIMAL: round(CAST(... AS DECIMAL(20,0)), {scale})"
                    )));
                }
                let operand = self.coerce(value, if value_type == Null { Int } else { value_type }, source)?;
                (ScalarFunction::Round { scale }, vec![operand], result)
            }
            "floor" | "ceil" => {
                let function = if name == "floor" { ScalarFunction::Floor } else { ScalarFunction::Ceil };
                let (value, source) = bound.next().expect("arity checked by the parser");
                let value_type = self.numeric_argument(&value, source, name)?;
                let (operand_type, result) = match value_type {
                    Decimal { precision, scale: 0 } => (value_type, Decimal { precision, scale: 0 }),
                    Decimal { precision, scale } => (
                        value_type,
                        Decimal { precision: (i32::from(precision) - i32::from(scale) + 1).min(38) as u8, scale: 0 },
                    ),
                    Float | Double => (Double, Long),
                    _ => (Long, Long),
                };
                (function, vec![self.coerce(value, operand_type, source)?], result)
            }
            "mod" | "pmod" => {
                let function = if name == "mod" { ScalarFunction::Mod } else { ScalarFunction::Pmod };
                let (left, left_source) = bound.next().expect("arity checked by the parser");
                let (right, right_source) = bound.next().expect("arity checked by the parser");
                let left_type = self.numeric_argument(&left, left_source, name)?;
                let right_type = self.numeric_argument(&right, right_source, name)?;
                let (operand, result) = remainder_types(left_type, right_type);
                let arguments =
                    vec![self.coerce(left, operand, left_source)?, self.coerce(right, operand, right_source)?];
                (function, arguments, result)
            }
            "isnan" => (ScalarFunction::IsNan, vec![next!(Double)?], Boolean),
            crate::filter::functions::UUID_TEXT => {
                let (typed, _) = bound.next().expect("one argument");
                match typed.expr.data_type() {
                    // A file that holds the uuid as text already.
                    DataType::Utf8 => return Ok(typed),
                    DataType::FixedSizeBinary(_) | DataType::Binary => {
                        (ScalarFunction::UuidText, vec![typed.expr], String)
                    }
                    other => {
                        return Err(PqsiftError::filter(format!("{whole}: a uuid column of type {other}")));
                    }
                }
            }
            other => {
                return Err(PqsiftError::filter(format!("unsupported function \"{other}\" in filter")));
            }
        };
        let call = BoundExpr::Function {
            function,
            args: arguments,
            data_type: result.to_arrow(),
            session_time_zone: self.time_zone.clone(),
            text: whole.to_string(),
        };
        Ok(Typed { expr: fold_constant(call), sql_type: Some(result) })
    }

    /// Binds `CASE WHEN ... END`: conditions BOOLEAN, values brought to their common type.
    pub(super) fn bind_case(&self, branches: &[(Expr, Expr)], otherwise: Option<&Expr>) -> Result<Typed> {
        let conditions = branches
            .iter()
            .map(|(condition, _)| self.bind_boolean(condition, "CASE WHEN"))
            .collect::<Result<Vec<_>>>()?;
        let null = Expr::Literal(crate::filter::Literal::Null);
        let value_sources: Vec<&Expr> =
            branches.iter().map(|(_, value)| value).chain([otherwise.unwrap_or(&null)]).collect();
        let values = value_sources.iter().map(|value| self.bind(value)).collect::<Result<Vec<_>>>()?;
        let common = self.common_type(values.iter().zip(value_sources.iter().copied()), "CASE")?;
        let mut values = values
            .into_iter()
            .zip(&value_sources)
            .map(|(value, source)| self.coerce(value, common, source))
            .collect::<Result<Vec<_>>>()?;
        let otherwise = values.pop().expect("the ELSE value is always there");
        let expr =
            BoundExpr::Case { branches: conditions.into_iter().zip(values).collect(), otherwise: Box::new(otherwise) };
        let sql_type = if common == SqlType::Null { SqlType::Boolean } else { common };
        Ok(Typed {
            expr: if common == SqlType::Null { null_boolean() } else { fold_constant(expr) },
            sql_type: Some(sql_type),
        })
    }

    /// The type all of `values` meet at (Spark's wider common type), or an error naming the
    /// two that do not.
    fn common_type<'e>(&self, values: impl Iterator<Item = (&'e Typed, &'e Expr)>, context: &str) -> Result<SqlType>
    where
        Self: 'e,
    {
        let mut common: Option<(SqlType, &Expr)> = None;
        for (typed, source) in values {
            let value_type = self.comparable_type(typed, source)?;
            common = Some(match common {
                None => (value_type, source),
                Some((so_far, first)) => {
                    let wider = comparison_type(so_far, value_type).ok_or_else(|| {
                        PqsiftError::filter(format!(
                            "{context} cannot mix {first} ({so_far}) with {source} ({value_type})"
                        ))
                    })?;
                    (wider, first)
                }
            });
        }
        Ok(common.map_or(SqlType::Null, |(t, _)| t))
    }

    /// An argument brought to `to`, as Spark's implicit casts would, or an error naming it.
    fn argument(&self, typed: Typed, to: SqlType, source: &Expr, function: &str) -> Result<BoundExpr> {
        let from = typed.sql_type.ok_or_else(|| {
            PqsiftError::filter(format!("{function} cannot take {source}, of type {}", typed.type_name()))
        })?;
        if !implicit_cast(from, to) || !can_cast(from, to) {
            return Err(PqsiftError::filter(format!("{function} needs a {to} argument, but {source} is {from}")));
        }
        // String functions read every string encoding as plain UTF-8.
        self.coerce(typed, to, source)
    }

    /// The numeric type of an argument (NULL allowed), or an error naming it.
    fn numeric_argument(&self, typed: &Typed, source: &Expr, function: &str) -> Result<SqlType> {
        match typed.sql_type {
            Some(t) if t.is_numeric() || t == SqlType::Null => Ok(t),
            _ => Err(PqsiftError::filter(format!(
                "{function} needs a numeric argument, but {source} is {}",
                typed.type_name()
            ))),
        }
    }

    /// `current_date()`: today in the session time zone, fixed when the filter is bound.
    fn current_date(&self) -> Result<Typed> {
        let tz = crate::filter::parse_time_zone(&self.options.session_time_zone)?;
        let today = chrono::Utc::now().with_timezone(&tz).date_naive();
        let days = crate::filter::spark_cast::epoch_days(today);
        Ok(Typed { expr: BoundExpr::Literal(Arc::new(Date32Array::from(vec![days]))), sql_type: Some(SqlType::Date) })
    }
}

/// The operand and result types of `%` and `pmod` (Spark's `Remainder`): the wider number;
/// of two decimals, the scale of the finer and the integer digits of the narrower.
fn remainder_types(left: SqlType, right: SqlType) -> (SqlType, SqlType) {
    use SqlType::*;
    let (left, right) = match (left, right) {
        (Null, Null) => (Int, Int),
        (Null, other) | (other, Null) => (other, other),
        pair => pair,
    };
    let common = wider_numeric(left, right);
    let Decimal { .. } = common else { return (common, common) };
    match (left.integral_as_decimal(), right.integral_as_decimal()) {
        (Some(Decimal { precision: p1, scale: s1 }), Some(Decimal { precision: p2, scale: s2 })) => {
            let (p1, s1, p2, s2) = (i32::from(p1), i32::from(s1), i32::from(p2), i32::from(s2));
            let scale = s1.max(s2);
            let result = Decimal { precision: ((p1 - s1).min(p2 - s2) + scale).min(38) as u8, scale: scale as i8 };
            (common, result)
        }
        _ => (common, common),
    }
}

/// A constant INT argument's value.
fn constant_int(typed: &Typed) -> Option<i32> {
    let BoundExpr::Literal(literal) = &typed.expr else { return None };
    let value = arrow::compute::cast(literal, &DataType::Int32).ok()?;
    let value = value.as_primitive_opt::<arrow::datatypes::Int32Type>()?;
    value.is_valid(0).then(|| value.value(0))
}

/// A call of constants only, evaluated now (so that pruning sees a literal); left as it is
/// when it fails: an ANSI error is raised only if a row reaches it, as in Spark.
pub(super) fn fold_constant(expr: BoundExpr) -> BoundExpr {
    if !expr.columns().is_empty() {
        return expr;
    }
    let one_row = RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    );
    let folded: Option<ArrayRef> =
        one_row.ok().and_then(|batch| crate::filter::evaluate::evaluate_value(&expr, &batch).ok());
    match folded {
        Some(value) if value.len() == 1 => BoundExpr::Literal(value),
        _ => expr,
    }
}
