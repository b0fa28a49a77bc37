//! Rendering expressions back to Spark SQL text.
//!
//! The text parses back (with [`parse_filter`](super::parse_filter)) to an equal [`Expr`],
//! and Spark reads it the same way: identifiers are always back-quoted, literals carry the
//! suffix or keyword that gives their type (`5L`, `1.5D`, `DATE '...'`), NaN and infinities
//! are `CAST('NaN' AS DOUBLE)`, and operands get parentheses exactly where precedence or
//! the left-to-right shape of the tree needs them.

use std::fmt::{self, Display, Formatter, Write};

use chrono::{Duration, NaiveDate};

use super::{ArithmeticOp, ColumnPath, CompareOp, Expr, Literal};

impl Display for ColumnPath {
    /// `` `a`.`b` ``, with a back-quote inside a name doubled.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, part) in self.parts().iter().enumerate() {
            if i > 0 {
                f.write_char('.')?;
            }
            write!(f, "`{}`", part.replace('`', "``"))?;
        }
        Ok(())
    }
}

impl Display for CompareOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Eq => "=",
            Self::NotEq => "!=",
            Self::Lt => "<",
            Self::LtEq => "<=",
            Self::Gt => ">",
            Self::GtEq => ">=",
            Self::NullSafeEq => "<=>",
        })
    }
}

impl Display for ArithmeticOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Add => "+",
            Self::Subtract => "-",
            Self::Multiply => "*",
            Self::Divide => "/",
        })
    }
}

/// Writes `'text'` with `\` and `'` escaped by a backslash, as Spark's lexer reads them.
pub(crate) fn write_string_literal(f: &mut impl Write, text: &str) -> fmt::Result {
    f.write_char('\'')?;
    for c in text.chars() {
        if c == '\\' || c == '\'' {
            f.write_char('\\')?;
        }
        f.write_char(c)?;
    }
    f.write_char('\'')
}

/// A finite float in the shortest form that reads back exactly, e.g. `1.5`, `1e-45`.
fn write_float(f: &mut Formatter<'_>, value: impl fmt::Debug, suffix: char) -> fmt::Result {
    write!(f, "{value:?}{suffix}")
}

/// The text of a non-finite float: Spark has no literal for it, only a cast from a string.
fn non_finite_text(value: f64) -> Option<&'static str> {
    if value.is_nan() {
        Some("NaN")
    } else if value == f64::INFINITY {
        Some("Infinity")
    } else if value == f64::NEG_INFINITY {
        Some("-Infinity")
    } else {
        None
    }
}

/// `unscaled × 10^-scale` in plain notation, e.g. `-0.05`.
pub(crate) fn decimal_text(unscaled: i128, scale: i8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = scale.max(0) as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (integer, fraction) = padded.split_at(padded.len() - scale);
    format!("{sign}{integer}.{fraction}")
}

/// The date `days` after 1970-01-01 as `yyyy-mm-dd`.
pub(crate) fn date_text(days: i32) -> String {
    NaiveDate::from_ymd_opt(1970, 1, 1)
        .and_then(|epoch| epoch.checked_add_signed(Duration::days(days.into())))
        .map_or_else(|| format!("<invalid date {days}>"), |d| d.format("%Y-%m-%d").to_string())
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("NULL"),
            Self::Boolean(value) => f.write_str(if *value { "true" } else { "false" }),
            Self::Byte(value) => write!(f, "{value}Y"),
            Self::Short(value) => write!(f, "{value}S"),
            Self::Int(value) => write!(f, "{value}"),
            Self::Long(value) => write!(f, "{value}L"),
            Self::Float(value) => match non_finite_text(f64::from(*value)) {
                Some(text) => write!(f, "CAST('{text}' AS FLOAT)"),
                None => write_float(f, value, 'F'),
            },
            Self::Double(value) => match non_finite_text(*value) {
                Some(text) => write!(f, "CAST('{text}' AS DOUBLE)"),
                None => write_float(f, value, 'D'),
            },
            Self::Decimal { unscaled, scale } => {
                // Without a point the text would be an integer literal.
                let suffix = if *scale <= 0 { "BD" } else { "" };
                write!(f, "{}{suffix}", decimal_text(*unscaled, *scale))
            }
            Self::String(text) => write_string_literal(f, text),
            Self::Binary(bytes) => {
                f.write_str("X'")?;
                for byte in bytes {
                    write!(f, "{byte:02X}")?;
                }
                f.write_char('\'')
            }
            Self::Date(days) => write!(f, "DATE '{}'", date_text(*days)),
            Self::Timestamp(timestamp) => write!(f, "TIMESTAMP '{timestamp}'"),
        }
    }
}

/// Binding strength of an expression's outermost operator; higher binds tighter.
fn precedence(expr: &Expr) -> u8 {
    match expr {
        Expr::Or(..) => 1,
        Expr::And(..) => 2,
        Expr::Not(_) => 3,
        Expr::Compare { .. } | Expr::InList { .. } | Expr::IsNull { .. } | Expr::Between { .. } | Expr::Like { .. } => {
            4
        }
        Expr::Arithmetic { op: ArithmeticOp::Add | ArithmeticOp::Subtract, .. } => 5,
        Expr::Arithmetic { .. } => 6,
        // A negative numeric literal starts with a minus sign: it binds like unary minus.
        Expr::Negate(_) => 7,
        Expr::Column(_)
        | Expr::Literal(_)
        | Expr::Cast { .. }
        | Expr::TryCast { .. }
        | Expr::Abs(_)
        | Expr::Function { .. }
        | Expr::Case { .. } => 8,
    }
}

/// Writes `expr`, parenthesised unless it binds tighter than `min_precedence - 1`.
fn write_operand(f: &mut Formatter<'_>, expr: &Expr, min_precedence: u8) -> fmt::Result {
    if precedence(expr) >= min_precedence { write!(f, "{expr}") } else { write!(f, "({expr})") }
}

impl Display for Expr {
    #[recursive::recursive]
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        // Binary operators are left-associative: the right operand needs one level more.
        // Predicates do not chain at all: their operands must bind tighter than them.
        const PREDICATE_OPERAND: u8 = 5;
        match self {
            Self::Column(path) => write!(f, "{path}"),
            Self::Literal(literal) => write!(f, "{literal}"),
            Self::Or(left, right) => {
                write_operand(f, left, 1)?;
                f.write_str(" OR ")?;
                write_operand(f, right, 2)
            }
            Self::And(left, right) => {
                write_operand(f, left, 2)?;
                f.write_str(" AND ")?;
                write_operand(f, right, 3)
            }
            Self::Not(inner) => {
                f.write_str("NOT ")?;
                write_operand(f, inner, 3)
            }
            Self::Compare { op, left, right } => {
                write_operand(f, left, PREDICATE_OPERAND)?;
                write!(f, " {op} ")?;
                write_operand(f, right, PREDICATE_OPERAND)
            }
            Self::InList { expr, list, negated } => {
                write_operand(f, expr, PREDICATE_OPERAND)?;
                f.write_str(if *negated { " NOT IN (" } else { " IN (" })?;
                for (i, item) in list.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_char(')')
            }
            Self::IsNull { expr, negated } => {
                write_operand(f, expr, PREDICATE_OPERAND)?;
                f.write_str(if *negated { " IS NOT NULL" } else { " IS NULL" })
            }
            Self::Between { expr, low, high, negated } => {
                write_operand(f, expr, PREDICATE_OPERAND)?;
                f.write_str(if *negated { " NOT BETWEEN " } else { " BETWEEN " })?;
                write_operand(f, low, PREDICATE_OPERAND)?;
                f.write_str(" AND ")?;
                write_operand(f, high, PREDICATE_OPERAND)
            }
            Self::Like { expr, pattern, escape, negated } => {
                write_operand(f, expr, PREDICATE_OPERAND)?;
                f.write_str(if *negated { " NOT LIKE " } else { " LIKE " })?;
                write_string_literal(f, pattern)?;
                if let Some(escape) = escape {
                    f.write_str(" ESCAPE ")?;
                    write_string_literal(f, &escape.to_string())?;
                }
                Ok(())
            }
            Self::Cast { expr, to } => write!(f, "CAST({expr} AS {to})"),
            Self::TryCast { expr, to } => write!(f, "TRY_CAST({expr} AS {to})"),
            Self::Arithmetic { op, left, right } => {
                let level = precedence(self);
                write_operand(f, left, level)?;
                write!(f, " {op} ")?;
                write_operand(f, right, level + 1)
            }
            // Always parenthesised: `-5` would read back as a negative literal, and `- -x`
            // must not become the comment marker `--`.
            Self::Negate(inner) => write!(f, "-({inner})"),
            Self::Abs(inner) => write!(f, "abs({inner})"),
            // The characters to remove are the second argument of `trim`; Spark's own
            // syntax for them is the one every dialect reads alike.
            Self::Function { name, args } if args.len() == 2 && ["trim", "ltrim", "rtrim"].contains(&name.as_str()) => {
                let side = match name.as_str() {
                    "trim" => "BOTH",
                    "ltrim" => "LEADING",
                    _ => "TRAILING",
                };
                write!(f, "TRIM({side} {} FROM {})", args[1], args[0])
            }
            Self::Function { name, args } => {
                // `rlike` is a keyword of the parser; `regexp_like` is the same function.
                f.write_str(if name == "rlike" { "regexp_like" } else { name })?;
                f.write_char('(')?;
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{arg}")?;
                }
                f.write_char(')')
            }
            Self::Case { branches, otherwise } => {
                f.write_str("CASE")?;
                for (condition, value) in branches {
                    write!(f, " WHEN {condition} THEN {value}")?;
                }
                if let Some(otherwise) = otherwise {
                    write!(f, " ELSE {otherwise}")?;
                }
                f.write_str(" END")
            }
        }
    }
}
