//! Binding an [`Expr`] to an Arrow schema: resolving columns as Spark does with
//! `spark.sql.caseSensitive=false` and type-checking with Spark's coercion rules
//! ([`coerce`](super::coerce)), giving a [`BoundExpr`] whose every node has one Arrow type.
//!
//! Literals are converted at bind time (a literal that does not convert is an error now,
//! as Spark's constant folding raises it before reading data). A comparison of a column
//! with a literal is kept in the column's own Arrow type whenever the literal converts to
//! it exactly and the column's widening is order-preserving (Spark's
//! `UnwrapCastInBinaryComparison`), so `tiny_col = 5` compares Int8 values with `5i8`
//! (what pruning on statistics needs), while `tiny_col > 1000` keeps the widening cast
//! and is simply false.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
    Int8Array, Int16Array, Int32Array, Int64Array, NullArray, StringArray, TimestampMicrosecondArray,
    TimestampNanosecondArray, new_null_array,
};
use arrow::compute::kernels::cast::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, Field, Fields, Float64Type, Schema, TimeUnit, TimestampMicrosecondType};

use super::arithmetic_compare::{Step, integer_preimage};
use super::cast::{can_cast, cast_array, cast_or_try, describe, is_order_preserving_widening};
use super::coerce::{arithmetic_types, comparison_type};
use super::functions::ScalarFunction;
use super::in_set::InSet;
use super::preimage::Preimage;
use super::recent::Recent;
use super::rounded_compare::rounded_preimage;
use super::sql_type::UTC;
use super::zone_offsets::fixed_offset_seconds;
use super::{ArithmeticOp, ColumnPath, CompareOp, Expr, ExprList, Literal, SqlType};
use crate::{PqsiftError, Result};

#[path = "bind_function_calls.rs"]
mod function_calls;

/// Session settings that change how a filter binds.
///
/// ```
/// let options = pqsift::filter::BindOptions::default();
/// assert_eq!(options.session_time_zone, "UTC");
/// assert!(!options.case_sensitive);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindOptions {
    /// Spark's `spark.sql.session.timeZone`: the zone a `TIMESTAMP '...'` literal without
    /// an explicit zone is read in, and that DATE ↔ TIMESTAMP conversions use. A tz
    /// database name (`Europe/Paris`) or an offset (`+02:00`).
    pub session_time_zone: String,
    /// Spark's `spark.sql.caseSensitive`: whether `A` and `a` name different columns.
    pub case_sensitive: bool,
}

impl Default for BindOptions {
    fn default() -> Self {
        Self { session_time_zone: "UTC".to_string(), case_sensitive: false }
    }
}

/// A column resolved in the schema.
///
/// ```
/// use arrow::datatypes::{DataType, Field, Schema};
/// use pqsift::filter::{bind, parse_filter, BindOptions, BoundExpr};
///
/// let schema = Schema::new(vec![Field::new("Price", DataType::Int32, true)]);
/// let bound = bind(&parse_filter("price IS NULL").unwrap(), &schema, &BindOptions::default()).unwrap();
/// let BoundExpr::IsNull { expr, .. } = bound else { panic!() };
/// let BoundExpr::Column(column) = *expr else { panic!() };
/// assert_eq!(column.path.parts(), ["Price"]);
/// assert_eq!(column.indices, [0]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BoundColumn {
    /// The field names as the schema spells them, outermost first.
    pub path: ColumnPath,
    /// The field index at each level: in the schema, then in each nested struct.
    pub indices: Vec<usize>,
    /// The column's Arrow type as the schema has it.
    pub data_type: DataType,
}

/// A filter expression bound to a schema: columns resolved, every node of a single Arrow
/// type, implicit conversions explicit as [`BoundExpr::Cast`]. Evaluate it with
/// [`evaluate`](super::evaluate()).
///
/// ```
/// use arrow::datatypes::{DataType, Field, Schema};
/// use pqsift::filter::{bind, parse_filter, BindOptions, BoundExpr};
///
/// let schema = Schema::new(vec![Field::new("tiny", DataType::Int8, true)]);
/// let options = BindOptions::default();
/// // 5 fits TINYINT: compared as Int8, the literal converted.
/// let bound = bind(&parse_filter("tiny = 5").unwrap(), &schema, &options).unwrap();
/// let BoundExpr::Compare { right, .. } = &bound else { panic!() };
/// assert_eq!(right.data_type(), DataType::Int8);
/// // 1000 does not: the column widens to INT (and the comparison is always false).
/// let bound = bind(&parse_filter("tiny > 1000").unwrap(), &schema, &options).unwrap();
/// let BoundExpr::Compare { left, .. } = &bound else { panic!() };
/// assert!(matches!(**left, BoundExpr::Cast { .. }));
/// ```
#[derive(Debug, Clone)]
pub enum BoundExpr {
    /// A column's values (a struct field's values are null where the struct is).
    Column(BoundColumn),
    /// A constant, as a one-element array.
    Literal(ArrayRef),
    /// Spark's ANSI cast of `expr` to the Arrow type `to`.
    Cast {
        /// The converted value.
        expr: Box<BoundExpr>,
        /// The target type.
        to: DataType,
        /// The session time zone, for conversions between dates and timestamps.
        session_time_zone: Arc<str>,
        /// `TRY_CAST`: NULL for a value the cast raises for.
        null_on_error: bool,
    },
    /// `left op right`; both sides have the same Arrow type (up to string encoding).
    Compare {
        /// The operator.
        op: CompareOp,
        /// Left operand.
        left: Box<BoundExpr>,
        /// Right operand.
        right: Box<BoundExpr>,
    },
    /// `expr [NOT] IN (list)`; all of one type.
    InList {
        /// The tested value.
        expr: Box<BoundExpr>,
        /// The candidates.
        list: Vec<BoundExpr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `expr [NOT] IN (constants)` for a list of more than [`SET_MIN_ITEMS`] constants:
    /// the list as a set (Spark's `InSet`), made once when the filter is bound. Evaluation
    /// is a hash look-up per row, pruning a binary search per container, and the bound
    /// filter stays small to clone and compare however long the list.
    InSet {
        /// The tested value, of the set's type.
        expr: Box<BoundExpr>,
        /// The constants.
        set: Arc<InSet>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        /// The tested value.
        expr: Box<BoundExpr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `expr [NOT] LIKE pattern`, the pattern rewritten to use `\` as its escape.
    Like {
        /// The tested string.
        expr: Box<BoundExpr>,
        /// The pattern with `\` escapes.
        pattern: String,
        /// `NOT LIKE`.
        negated: bool,
        /// The pattern's regular expression, compiled once, where Arrow's kernel would
        /// compile one on every call (see `like_regex`).
        regex: Option<regex::Regex>,
    },
    /// Three-valued AND; the right side is only evaluated where the left is not false.
    And(Box<BoundExpr>, Box<BoundExpr>),
    /// Three-valued OR; the right side is only evaluated where the left is not true.
    Or(Box<BoundExpr>, Box<BoundExpr>),
    /// Three-valued NOT.
    Not(Box<BoundExpr>),
    /// `left op right` (operands already of the operand types Spark picks).
    Arithmetic {
        /// The operator.
        op: ArithmeticOp,
        /// Left operand.
        left: Box<BoundExpr>,
        /// Right operand.
        right: Box<BoundExpr>,
        /// The result type.
        data_type: DataType,
        /// The expression's text, for error messages.
        text: String,
    },
    /// `-expr`.
    Negate {
        /// The operand.
        expr: Box<BoundExpr>,
        /// The expression's text, for error messages.
        text: String,
    },
    /// `abs(expr)`.
    Abs {
        /// The operand.
        expr: Box<BoundExpr>,
        /// The expression's text, for error messages.
        text: String,
    },
    /// A Spark SQL function; its arguments already of the types it takes.
    Function {
        /// The function.
        function: ScalarFunction,
        /// The arguments.
        args: Vec<BoundExpr>,
        /// The result type.
        data_type: DataType,
        /// The session time zone, for functions of an instant's wall clock.
        session_time_zone: Arc<str>,
        /// The call's text, for error messages.
        text: String,
    },
    /// `CASE WHEN condition THEN value ... ELSE otherwise END`, values of one type; a
    /// branch's value is only evaluated for the rows that take it.
    Case {
        /// `(condition, value)` pairs, conditions BOOLEAN.
        branches: Vec<(BoundExpr, BoundExpr)>,
        /// The value where no condition is TRUE (a NULL literal when not written).
        otherwise: Box<BoundExpr>,
    },
}

impl BoundExpr {
    /// The Arrow type of the expression's values.
    ///
    /// ```
    /// use arrow::datatypes::{DataType, Field, Schema};
    /// use pqsift::filter::{bind, parse_filter, BindOptions};
    ///
    /// let schema = Schema::new(vec![Field::new("x", DataType::Int32, true)]);
    /// let bound = bind(&parse_filter("x / 2 > 1").unwrap(), &schema, &BindOptions::default()).unwrap();
    /// assert_eq!(bound.data_type(), DataType::Boolean);
    /// ```
    pub fn data_type(&self) -> DataType {
        match self {
            Self::Column(column) => column.data_type.clone(),
            Self::Literal(value) => value.data_type().clone(),
            Self::Cast { to, .. } => to.clone(),
            Self::Arithmetic { data_type, .. } | Self::Function { data_type, .. } => data_type.clone(),
            Self::Case { otherwise, .. } => otherwise.data_type(),
            Self::Negate { expr, .. } | Self::Abs { expr, .. } => expr.data_type(),
            Self::Compare { .. }
            | Self::InList { .. }
            | Self::InSet { .. }
            | Self::IsNull { .. }
            | Self::Like { .. }
            | Self::And(..)
            | Self::Or(..)
            | Self::Not(_) => DataType::Boolean,
        }
    }

    /// Whether evaluating the expression can raise an error for some value (ANSI
    /// arithmetic, a cast that can fail, `%` by zero, `floor` of a NaN, a regular
    /// expression given per row, ...). Conservative: `true` unless every node is known safe.
    ///
    /// ```
    /// use arrow::datatypes::{DataType, Field, Schema};
    /// use pqsift::filter::{bind, parse_filter, BindOptions};
    /// let schema = Schema::new(vec![Field::new("x", DataType::Int32, true), Field::new("s", DataType::Utf8, true)]);
    /// let raises = |text| bind(&parse_filter(text).unwrap(), &schema, &BindOptions::default()).unwrap().can_raise();
    /// assert!(!raises("x > 1 AND lower(s) = 'a'"));
    /// assert!(raises("x % 3 = 1") && raises("x + 1 > 2") && raises("s = 5"));
    /// ```
    pub fn can_raise(&self) -> bool {
        let mut pending = vec![self];
        while let Some(expr) = pending.pop() {
            let raises = match expr {
                Self::Arithmetic { .. } | Self::Negate { .. } | Self::Abs { .. } => true,
                Self::Cast { null_on_error: true, .. } => false,
                Self::Cast { expr, to, .. } => {
                    let from = expr.data_type();
                    let strings = |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
                    let safe = is_order_preserving_widening(&from, to)
                        || (strings(to) && (strings(&from) || matches!(from, DataType::Dictionary(..))))
                        || matches!(
                            (&from, to),
                            (DataType::Date32, DataType::Timestamp(..)) | (DataType::Timestamp(..), DataType::Date32)
                        );
                    !safe
                }
                Self::Function { function, .. } => matches!(
                    function,
                    ScalarFunction::Mod
                        | ScalarFunction::Pmod
                        | ScalarFunction::Floor
                        | ScalarFunction::Ceil
                        | ScalarFunction::Round { .. }
                        | ScalarFunction::DateAdd
                        | ScalarFunction::DateSub
                        | ScalarFunction::DateDiff
                        | ScalarFunction::RLike(None)
                ),
                _ => false,
            };
            if raises {
                return true;
            }
            match expr {
                Self::Column(_) | Self::Literal(_) => {}
                Self::Cast { expr, .. } | Self::Negate { expr, .. } | Self::Abs { expr, .. } | Self::Not(expr) => {
                    pending.push(expr)
                }
                Self::IsNull { expr, .. } | Self::Like { expr, .. } | Self::InSet { expr, .. } => pending.push(expr),
                Self::Compare { left, right, .. }
                | Self::Arithmetic { left, right, .. }
                | Self::And(left, right)
                | Self::Or(left, right) => {
                    pending.push(left);
                    pending.push(right);
                }
                Self::InList { expr, list, .. } => {
                    pending.push(expr);
                    pending.extend(list);
                }
                Self::Function { args, .. } => pending.extend(args),
                Self::Case { branches, otherwise } => {
                    pending.push(otherwise);
                    pending.extend(branches.iter().flat_map(|(c, v)| [c, v]));
                }
            }
        }
        false
    }

    /// The columns the expression reads, each once, in the order first met.
    ///
    /// ```
    /// use arrow::datatypes::{DataType, Field, Schema};
    /// use pqsift::filter::{bind, parse_filter, BindOptions};
    /// let schema = Schema::new(vec![Field::new("x", DataType::Int32, true), Field::new("y", DataType::Int32, true)]);
    /// let bound = bind(&parse_filter("x * y > 1 OR x IS NULL").unwrap(), &schema, &BindOptions::default()).unwrap();
    /// let names: Vec<String> = bound.columns().iter().map(|c| c.path.parts().join(".")).collect();
    /// assert_eq!(names, ["x", "y"]);
    /// ```
    pub fn columns(&self) -> Vec<&BoundColumn> {
        let mut found: Vec<&BoundColumn> = Vec::new();
        let mut pending = vec![self];
        while let Some(expr) = pending.pop() {
            match expr {
                Self::Column(column) => {
                    if !found.iter().any(|c| c.path == column.path) {
                        found.push(column);
                    }
                }
                Self::Literal(_) => {}
                Self::Cast { expr, .. } | Self::Negate { expr, .. } | Self::Abs { expr, .. } | Self::Not(expr) => {
                    pending.push(expr)
                }
                Self::IsNull { expr, .. } | Self::Like { expr, .. } | Self::InSet { expr, .. } => pending.push(expr),
                Self::Compare { left, right, .. } | Self::Arithmetic { left, right, .. } => {
                    pending.push(right);
                    pending.push(left);
                }
                Self::And(left, right) | Self::Or(left, right) => {
                    pending.push(right);
                    pending.push(left);
                }
                Self::InList { expr, list, .. } => {
                    pending.extend(list.iter().rev());
                    pending.push(expr);
                }
                Self::Function { args, .. } => pending.extend(args.iter().rev()),
                Self::Case { branches, otherwise } => {
                    pending.push(otherwise);
                    for (condition, value) in branches.iter().rev() {
                        pending.push(value);
                        pending.push(condition);
                    }
                }
            }
        }
        found
    }
}

/// Binds `expr` to `schema` (the Arrow schema of the data it will filter). The result is a
/// BOOLEAN expression; errors name the column or expression at fault: unknown or ambiguous
/// columns, types Spark cannot compare, literals that do not convert, non-boolean filters.
///
/// ```
/// use arrow::datatypes::{DataType, Field, Schema};
/// use pqsift::filter::{bind, parse_filter, BindOptions};
///
/// let schema = Schema::new(vec![
///     Field::new("id", DataType::Int64, false),
///     Field::new("day", DataType::Date32, true),
/// ]);
/// let options = BindOptions::default();
/// assert!(bind(&parse_filter("ID > 5 AND day >= '2024-01-01'").unwrap(), &schema, &options).is_ok());
///
/// let error = bind(&parse_filter("idd > 5").unwrap(), &schema, &options).unwrap_err();
/// assert!(error.to_string().contains("`idd`"), "{error}");
/// let error = bind(&parse_filter("day > 5").unwrap(), &schema, &options).unwrap_err();
/// assert!(error.to_string().contains("cannot compare `day` (DATE) with 5 (INT)"), "{error}");
/// ```
pub fn bind(expr: &Expr, schema: &Schema, options: &BindOptions) -> Result<BoundExpr> {
    // Binding and evaluation recurse on the tree (and sharing compares and clones it): refuse
    // trees deeper than any parsed one before anything else.
    let nesting = super::depth(expr);
    if nesting > MAX_DEPTH {
        return Err(PqsiftError::filter(format!("filter nested too deeply ({nesting} levels, at most {MAX_DEPTH})")));
    }
    if list_items(expr) < SHARED_BIND_ITEMS {
        return bind_now(expr, schema, options);
    }
    shared_bind(expr, schema, options)
}

/// Filters with IN lists of at least this many items in all are bound once per schema
/// and options, and shared (see [`shared_bind`]).
const SHARED_BIND_ITEMS: usize = 256;

/// How many recent bindings [`shared_bind`] and [`shared_literal_set`] keep.
const SHARED_BINDS: usize = 8;

/// The items of the filter's IN lists, summed (without recursion: the tree is not yet known
/// to be within the depth limit).
fn list_items(expr: &Expr) -> usize {
    let mut items = 0;
    let mut pending = vec![expr];
    while let Some(next) = pending.pop() {
        if let Expr::InList { list, .. } = next {
            items += list.len();
        }
        pending.extend(next.walked_children());
    }
    items
}

/// [`bind`] of a filter with long IN lists, shared with the previous calls on an equal
/// filter, schema and options: planning binds the filter once per file and reading again
/// per file, and every file of a table usually has one schema. Binding a long list (and
/// sorting it into a set) costs far more than comparing the parsed filters, and a
/// bound filter is cheap to clone (its long lists are sets behind an `Arc`).
fn shared_bind(expr: &Expr, schema: &Schema, options: &BindOptions) -> Result<BoundExpr> {
    static RECENT: Recent<(Expr, Schema, BindOptions), BoundExpr> = Recent::new(SHARED_BINDS);
    RECENT.get_or_make(
        |(e, s, o), _| o == options && s == schema && e == expr,
        || (expr.clone(), schema.clone(), options.clone()),
        || bind_now(expr, schema, options),
    )
}

fn bind_now(expr: &Expr, schema: &Schema, options: &BindOptions) -> Result<BoundExpr> {
    super::literal::parse_time_zone(&options.session_time_zone)?;
    let binder = Binder { schema, options, time_zone: options.session_time_zone.as_str().into() };
    let bound = binder.bind(expr)?;
    match bound.sql_type {
        Some(SqlType::Boolean) => Ok(bound.expr),
        Some(SqlType::Null) => Ok(null_boolean()),
        _ => Err(PqsiftError::filter(format!(
            "a filter must be a BOOLEAN expression, but {expr} is {}",
            bound.type_name()
        ))),
    }
}

/// Lists longer than this, of constants only, are bound as a set ([`BoundExpr::InSet`]);
/// shorter ones compare value by value.
pub const SET_MIN_ITEMS: usize = 8;

/// `expr IN (list)`, the list bound: a set when it is long and constant.
fn in_list_or_set(expr: BoundExpr, list: Vec<BoundExpr>, negated: bool) -> Result<BoundExpr> {
    let literals: Option<Vec<ArrayRef>> =
        list.iter().map(|item| if let BoundExpr::Literal(v) = item { Some(Arc::clone(v)) } else { None }).collect();
    // A list of NULLs only has no type to make a set of; it answers NULL or false anyway.
    let all_null =
        |literals: &[ArrayRef]| literals.iter().all(|l| l.null_count() == l.len() || l.data_type() == &DataType::Null);
    match literals {
        Some(literals) if literals.len() > SET_MIN_ITEMS && !all_null(&literals) => {
            Ok(BoundExpr::InSet { expr: Box::new(expr), set: Arc::new(InSet::new(&literals)?), negated })
        }
        _ => Ok(BoundExpr::InList { expr: Box::new(expr), list, negated }),
    }
}

/// Resolves a column path in `schema` exactly as [`bind`] does (Spark's name matching,
/// nested struct fields, errors naming the column): the one resolver every stage uses.
///
/// ```
/// use arrow::datatypes::{DataType, Field, Schema};
/// use pqsift::filter::{BindOptions, ColumnPath, resolve_column};
/// let schema = Schema::new(vec![Field::new("Price", DataType::Int32, true)]);
/// let column = resolve_column(&schema, &ColumnPath::new(["price"]), &BindOptions::default()).unwrap();
/// assert_eq!(column.indices, [0]);
/// ```
pub fn resolve_column(schema: &Schema, path: &ColumnPath, options: &BindOptions) -> Result<BoundColumn> {
    let binder = Binder { schema, options, time_zone: options.session_time_zone.as_str().into() };
    binder.resolve(path)
}

/// The deepest expression [`bind`] accepts: more than any text within the parser's
/// operator limit can produce.
const MAX_DEPTH: usize = super::parse::MAX_OPERATORS + 100;

/// A bound expression and its Spark type (`None` for a column of a type filters cannot
/// use, such as a struct, which only `IS [NOT] NULL` accepts).
struct Typed {
    expr: BoundExpr,
    sql_type: Option<SqlType>,
}

impl Typed {
    fn type_name(&self) -> String {
        self.sql_type.map_or_else(|| describe(&self.expr.data_type()), |t| t.to_string())
    }
}

fn null_boolean() -> BoundExpr {
    BoundExpr::Literal(new_null_array(&DataType::Boolean, 1))
}

struct Binder<'a> {
    schema: &'a Schema,
    options: &'a BindOptions,
    time_zone: Arc<str>,
}

impl Binder<'_> {
    #[recursive::recursive]
    fn bind(&self, expr: &Expr) -> Result<Typed> {
        Ok(match expr {
            Expr::Column(path) => {
                let column = self.resolve(path)?;
                let sql_type = SqlType::of_arrow(&column.data_type);
                Typed { expr: BoundExpr::Column(column), sql_type }
            }
            Expr::Literal(literal) => {
                Typed { expr: BoundExpr::Literal(self.literal_array(literal)?), sql_type: Some(literal.sql_type()) }
            }
            Expr::Compare { op, left, right } => boolean(self.bind_compare(*op, left, right)?),
            Expr::InList { expr: tested, list, negated } => boolean(self.bind_in_list(tested, list, *negated)?),
            Expr::IsNull { expr: tested, negated } => {
                boolean(BoundExpr::IsNull { expr: Box::new(self.bind(tested)?.expr), negated: *negated })
            }
            Expr::Between { expr: tested, low, high, negated } => {
                // Spark rewrites BETWEEN so: each bound coerces with the value on its own.
                let compare =
                    |op, bound: &Expr| Expr::Compare { op, left: tested.clone(), right: Box::new(bound.clone()) };
                let both = Expr::And(Box::new(compare(CompareOp::GtEq, low)), Box::new(compare(CompareOp::LtEq, high)));
                let bound = self.bind(&both)?.expr;
                boolean(if *negated { BoundExpr::Not(Box::new(bound)) } else { bound })
            }
            Expr::Like { expr: tested, pattern, escape, negated } => {
                boolean(self.bind_like(tested, pattern, *escape, *negated)?)
            }
            Expr::And(left, right) => boolean(BoundExpr::And(
                Box::new(self.bind_boolean(left, "AND")?),
                Box::new(self.bind_boolean(right, "AND")?),
            )),
            Expr::Or(left, right) => boolean(BoundExpr::Or(
                Box::new(self.bind_boolean(left, "OR")?),
                Box::new(self.bind_boolean(right, "OR")?),
            )),
            Expr::Not(inner) => boolean(BoundExpr::Not(Box::new(self.bind_boolean(inner, "NOT")?))),
            Expr::Cast { expr: inner, to } => self.bind_cast(inner, *to, false)?,
            Expr::TryCast { expr: inner, to } => self.bind_cast(inner, *to, true)?,
            Expr::Arithmetic { op, left, right } => self.bind_arithmetic(expr, *op, left, right)?,
            Expr::Function { name, args } => self.bind_function(expr, name, args)?,
            Expr::Case { branches, otherwise } => self.bind_case(branches, otherwise.as_deref())?,
            Expr::Negate(inner) | Expr::Abs(inner) => {
                let operand = self.bind(inner)?;
                // Spark reads a string operand as a DOUBLE here (`-'12'` is -12.0).
                let numeric = |t: SqlType| if t == SqlType::String { SqlType::Double } else { t };
                match operand.sql_type.map(numeric) {
                    Some(SqlType::Null) => operand,
                    Some(t) if t.is_numeric() => {
                        // Normalise e.g. a UInt8 column to its Spark type (SMALLINT) first, a
                        // string to a DOUBLE.
                        let operand = Box::new(self.coerce(operand, t, inner)?);
                        let text = expr.to_string();
                        let bound = if matches!(expr, Expr::Negate(_)) {
                            BoundExpr::Negate { expr: operand, text }
                        } else {
                            BoundExpr::Abs { expr: operand, text }
                        };
                        Typed { expr: bound, sql_type: Some(t) }
                    }
                    _ => {
                        return Err(PqsiftError::filter(format!(
                            "{expr} needs a numeric operand, but {inner} is {}",
                            operand.type_name()
                        )));
                    }
                }
            }
        })
    }

    /// Binds an operand of AND / OR / NOT, which must be BOOLEAN (or NULL).
    fn bind_boolean(&self, expr: &Expr, operator: &str) -> Result<BoundExpr> {
        let bound = self.bind(expr)?;
        match bound.sql_type {
            Some(SqlType::Boolean) => Ok(bound.expr),
            Some(SqlType::Null) => Ok(null_boolean()),
            _ => Err(PqsiftError::filter(format!(
                "{operator} needs BOOLEAN operands, but {expr} is {}",
                bound.type_name()
            ))),
        }
    }

    /// The Spark type of a bound operand, or an error naming it.
    fn comparable_type(&self, typed: &Typed, source: &Expr) -> Result<SqlType> {
        typed.sql_type.ok_or_else(|| {
            PqsiftError::filter(format!("{source} has type {}, which filters cannot compare", typed.type_name()))
        })
    }

    fn bind_compare(&self, op: CompareOp, left: &Expr, right: &Expr) -> Result<BoundExpr> {
        let (left_bound, right_bound) = (self.bind(left)?, self.bind(right)?);
        let (left_type, right_type) =
            (self.comparable_type(&left_bound, left)?, self.comparable_type(&right_bound, right)?);
        let common = comparison_type(left_type, right_type).ok_or_else(|| {
            let message = format!("cannot compare {left} ({left_type}) with {} ({right_type})", operand_text(right));
            match [left, right].into_iter().find_map(|side| match side {
                Expr::Column(path) => Some(path.name()),
                _ => None,
            }) {
                Some(column) => PqsiftError::filter_on(&column, message),
                None => PqsiftError::filter(message),
            }
        })?;
        let common = if common == SqlType::Null { SqlType::Boolean } else { common };
        let describe_pair = || format!("{left} {op} {right}");
        let left_coerced = self.coerce_literal(&left_bound, common, &describe_pair)?;
        let right_coerced = self.coerce_literal(&right_bound, common, &describe_pair)?;
        // A rounded DOUBLE, or an integer's DOUBLE arithmetic, against a literal: the value
        // (the integer) against the literal's preimage.
        let through_preimage = |op, value: &BoundExpr, literal: &ArrayRef| {
            rounded_double_compare(op, value, literal).or_else(|| integer_arithmetic_compare(op, value, literal))
        };
        if let (Some(literal), false) = (&right_coerced, is_literal(&left_bound.expr))
            && let Some(bound) = through_preimage(op, &left_bound.expr, literal)
        {
            return Ok(bound);
        }
        if let (Some(literal), false) = (&left_coerced, is_literal(&right_bound.expr))
            && let Some(bound) = through_preimage(op.swapped(), &right_bound.expr, literal)
        {
            return Ok(bound);
        }
        // A column (or any value) against a literal: compare in the value's own type when
        // the literal converts to it exactly.
        if let (Some(literal), false) = (&right_coerced, is_literal(&left_bound.expr))
            && let Some(unwrapped) = self.unwrap_literal(&left_bound.expr, literal, &common.to_arrow())
        {
            return Ok(compare(op, left_bound.expr, BoundExpr::Literal(unwrapped)));
        }
        if let (Some(literal), false) = (&left_coerced, is_literal(&right_bound.expr))
            && let Some(unwrapped) = self.unwrap_literal(&right_bound.expr, literal, &common.to_arrow())
        {
            return Ok(compare(op, BoundExpr::Literal(unwrapped), right_bound.expr));
        }
        if let (Some(literal), false) = (&right_coerced, is_literal(&left_bound.expr))
            && let Some(bound) = floored_nanos_compare(op, &left_bound.expr, literal, &common.to_arrow())
        {
            return Ok(bound);
        }
        if let (Some(literal), false) = (&left_coerced, is_literal(&right_bound.expr))
            && let Some(bound) = floored_nanos_compare(op.swapped(), &right_bound.expr, literal, &common.to_arrow())
        {
            return Ok(bound);
        }
        let left_final = match left_coerced {
            Some(literal) => BoundExpr::Literal(literal),
            None => self.coerce(left_bound, common, left)?,
        };
        let right_final = match right_coerced {
            Some(literal) => BoundExpr::Literal(literal),
            None => self.coerce(right_bound, common, right)?,
        };
        Ok(compare(op, left_final, right_final))
    }

    fn bind_in_list(&self, tested: &Expr, list: &ExprList, negated: bool) -> Result<BoundExpr> {
        let value = self.bind(tested)?;
        if let Some(set) = shared_literal_set(&value, list) {
            return Ok(BoundExpr::InSet { expr: Box::new(value.expr), set: set?, negated });
        }
        let value_type = self.comparable_type(&value, tested)?;
        let items = list.iter().map(|item| self.bind(item)).collect::<Result<Vec<_>>>()?;
        let mut common = value_type;
        for (item, source) in items.iter().zip(list.iter()) {
            let item_type = self.comparable_type(item, source)?;
            common = comparison_type(common, item_type).ok_or_else(|| {
                PqsiftError::filter(format!(
                    "cannot compare {tested} ({value_type}) with {} ({item_type}) in IN list",
                    operand_text(source)
                ))
            })?;
        }
        let common = if common == SqlType::Null { SqlType::Boolean } else { common };
        let describe_in = || format!("{tested} IN (...)");
        let coerced_items =
            items.iter().map(|item| self.coerce_literal(item, common, &describe_in)).collect::<Result<Vec<_>>>()?;
        // All candidates constant and exact in the value's own type: stay in that type.
        if !is_literal(&value.expr) {
            let unwrapped: Option<Vec<ArrayRef>> = coerced_items
                .iter()
                .map(|item| self.unwrap_literal(&value.expr, item.as_ref()?, &common.to_arrow()))
                .collect();
            if let Some(unwrapped) = unwrapped {
                return in_list_or_set(value.expr, unwrapped.into_iter().map(BoundExpr::Literal).collect(), negated);
            }
        }
        let bound_items = items
            .into_iter()
            .zip(coerced_items)
            .zip(list.iter())
            .map(|((item, coerced), source)| match coerced {
                Some(literal) => Ok(BoundExpr::Literal(literal)),
                None => self.coerce(item, common, source),
            })
            .collect::<Result<Vec<_>>>()?;
        in_list_or_set(self.coerce(value, common, tested)?, bound_items, negated)
    }

    fn bind_like(&self, tested: &Expr, pattern: &str, escape: Option<char>, negated: bool) -> Result<BoundExpr> {
        let value = self.bind(tested)?;
        let input = match value.sql_type {
            Some(SqlType::Null) => return Ok(null_boolean()),
            Some(SqlType::String) => match value.expr.data_type() {
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => value.expr,
                _ => self.coerce(value, SqlType::String, tested)?,
            },
            _ => {
                return Err(PqsiftError::filter(format!(
                    "LIKE needs a STRING operand, but {tested} is {}; write CAST({tested} AS STRING)",
                    value.type_name()
                )));
            }
        };
        let pattern = like_pattern_with_backslash(pattern, escape.unwrap_or('\\'))?;
        let regex = super::like_regex::compile(&pattern);
        Ok(BoundExpr::Like { expr: Box::new(input), pattern, negated, regex })
    }

    /// `CAST(inner AS to)`, or with `null_on_error` `TRY_CAST`.
    fn bind_cast(&self, inner: &Expr, to: SqlType, null_on_error: bool) -> Result<Typed> {
        let value = self.bind(inner)?;
        let from = self.comparable_type(&value, inner)?;
        if !can_cast(from, to) {
            // Spark casts these, but its text of a double or a timestamp is Java's, which
            // pqsift does not reproduce: refused rather than answered differently.
            let why = match (from, to) {
                (SqlType::Float | SqlType::Double | SqlType::Timestamp | SqlType::TimestampNtz, SqlType::String) => {
                    " (pqsift does not write doubles and timestamps as Spark's text)"
                }
                _ => "",
            };
            return Err(PqsiftError::filter(format!("cannot cast {inner} ({from}) to {to}{why}")));
        }
        let expr = match &value.expr {
            BoundExpr::Literal(literal) => {
                let cast = cast_or_try(literal, &to.to_arrow(), &self.options.session_time_zone, null_on_error);
                BoundExpr::Literal(cast.map_err(|e| PqsiftError::filter(format!("in CAST({inner} AS {to}): {e}")))?)
            }
            _ => BoundExpr::Cast {
                expr: Box::new(value.expr),
                to: to.to_arrow(),
                session_time_zone: self.time_zone.clone(),
                null_on_error,
            },
        };
        Ok(Typed { expr, sql_type: Some(to) })
    }

    fn bind_arithmetic(&self, whole: &Expr, op: ArithmeticOp, left: &Expr, right: &Expr) -> Result<Typed> {
        let (left_bound, right_bound) = (self.bind(left)?, self.bind(right)?);
        let (left_type, right_type) =
            (self.comparable_type(&left_bound, left)?, self.comparable_type(&right_bound, right)?);
        let (left_operand, right_operand, result) = arithmetic_types(op, left_type, right_type).ok_or_else(|| {
            PqsiftError::filter(format!(
                "cannot apply {op} to {left} ({left_type}) and {} ({right_type})",
                operand_text(right)
            ))
        })?;
        if left_type == SqlType::Null || right_type == SqlType::Null {
            return Ok(Typed {
                expr: BoundExpr::Literal(new_null_array(&result.to_arrow(), 1)),
                sql_type: Some(result),
            });
        }
        Ok(Typed {
            expr: BoundExpr::Arithmetic {
                op,
                left: Box::new(self.coerce(left_bound, left_operand, left)?),
                right: Box::new(self.coerce(right_bound, right_operand, right)?),
                data_type: result.to_arrow(),
                text: whole.to_string(),
            },
            sql_type: Some(result),
        })
    }

    /// A literal operand converted to `target` now, `None` for a non-literal operand.
    fn coerce_literal(
        &self,
        operand: &Typed,
        target: SqlType,
        context: &dyn Fn() -> String,
    ) -> Result<Option<ArrayRef>> {
        let BoundExpr::Literal(literal) = &operand.expr else {
            return Ok(None);
        };
        cast_array(literal, &target.to_arrow(), &self.options.session_time_zone)
            .map(Some)
            .map_err(|e| PqsiftError::filter(format!("in {}: {e}", context())))
    }

    /// `typed` as a value of `target`'s Arrow type: unchanged, a literal converted now, or
    /// a cast node.
    fn coerce(&self, typed: Typed, target: SqlType, source: &Expr) -> Result<BoundExpr> {
        let to = target.to_arrow();
        if typed.expr.data_type() == to {
            return Ok(typed.expr);
        }
        match &typed.expr {
            BoundExpr::Literal(literal) => cast_array(literal, &to, &self.options.session_time_zone)
                .map(BoundExpr::Literal)
                .map_err(|e| PqsiftError::filter(format!("in {source}: {e}"))),
            _ => Ok(self.cast_node(typed.expr, to)),
        }
    }

    /// As [`unwrap_literal`], and for a TIMESTAMP_NTZ value against a TIMESTAMP literal
    /// when the session time zone has a fixed offset: the NTZ → TIMESTAMP cast is then a
    /// constant shift, so the literal's wall clock compares with the value directly.
    fn unwrap_literal(&self, value: &BoundExpr, literal: &ArrayRef, common: &DataType) -> Option<ArrayRef> {
        let own_type = value.data_type();
        if !matches!((&own_type, common), (DataType::Timestamp(_, None), DataType::Timestamp(_, Some(_)))) {
            return unwrap_literal(value, literal, common);
        }
        let offset_micros = i64::from(fixed_offset_seconds(&self.options.session_time_zone)?) * 1_000_000;
        let instant = literal.as_primitive_opt::<TimestampMicrosecondType>()?;
        let wall = match instant.is_null(0) {
            true => TimestampMicrosecondArray::from(vec![None::<i64>]),
            false => TimestampMicrosecondArray::from(vec![instant.value(0).checked_add(offset_micros)?]),
        };
        unwrap_literal(value, &(Arc::new(wall) as ArrayRef), &SqlType::TimestampNtz.to_arrow())
    }

    fn cast_node(&self, expr: BoundExpr, to: DataType) -> BoundExpr {
        BoundExpr::Cast { expr: Box::new(expr), to, session_time_zone: self.time_zone.clone(), null_on_error: false }
    }

    /// A one-element array of the literal in its own type.
    fn literal_array(&self, literal: &Literal) -> Result<ArrayRef> {
        Ok(match literal {
            Literal::Null => Arc::new(NullArray::new(1)),
            Literal::Boolean(v) => Arc::new(BooleanArray::from(vec![*v])),
            Literal::Byte(v) => Arc::new(Int8Array::from(vec![*v])),
            Literal::Short(v) => Arc::new(Int16Array::from(vec![*v])),
            Literal::Int(v) => Arc::new(Int32Array::from(vec![*v])),
            Literal::Long(v) => Arc::new(Int64Array::from(vec![*v])),
            Literal::Float(v) => Arc::new(Float32Array::from(vec![*v])),
            Literal::Double(v) => Arc::new(Float64Array::from(vec![*v])),
            Literal::Decimal { unscaled, .. } => {
                let SqlType::Decimal { precision, scale } = literal.sql_type() else {
                    unreachable!("a decimal literal has a decimal type")
                };
                Arc::new(
                    Decimal128Array::from(vec![*unscaled])
                        .with_precision_and_scale(precision, scale)
                        .map_err(|e| PqsiftError::filter(format!("invalid literal {literal}: {e}")))?,
                )
            }
            Literal::String(v) => Arc::new(StringArray::from(vec![v.as_str()])),
            Literal::Binary(v) => Arc::new(BinaryArray::from_vec(vec![v.as_slice()])),
            Literal::Date(v) => Arc::new(Date32Array::from(vec![*v])),
            Literal::Timestamp(v) => Arc::new(
                TimestampMicrosecondArray::from(vec![v.instant_micros(&self.options.session_time_zone)?])
                    .with_timezone(UTC),
            ),
        })
    }

    /// Finds a column by its path, matching names as Spark does.
    fn resolve(&self, path: &ColumnPath) -> Result<BoundColumn> {
        let parts = path.parts();
        let mut fields: &Fields = self.schema.fields();
        let mut indices = Vec::with_capacity(parts.len());
        let mut names = Vec::with_capacity(parts.len());
        let mut data_type = DataType::Null;
        for (depth, part) in parts.iter().enumerate() {
            let (index, field) = self.find_field(fields, part, path, depth)?;
            indices.push(index);
            names.push(field.name().clone());
            data_type = field.data_type().clone();
            if depth + 1 < parts.len() {
                fields = match field.data_type() {
                    DataType::Struct(children) => children,
                    other => {
                        return Err(PqsiftError::filter(format!(
                            "cannot read field `{}` of column {}: it is {}, not a struct",
                            parts[depth + 1],
                            ColumnPath::new(names.clone()),
                            describe(other)
                        )));
                    }
                };
            }
        }
        Ok(BoundColumn { path: ColumnPath::new(names), indices, data_type })
    }

    fn find_field<'f>(
        &self,
        fields: &'f Fields,
        name: &str,
        path: &ColumnPath,
        depth: usize,
    ) -> Result<(usize, &'f Field)> {
        let matches: Vec<(usize, &Field)> = fields
            .iter()
            .enumerate()
            .filter(|(_, field)| self.names_match(field.name(), name))
            .map(|(i, f)| (i, f.as_ref()))
            .collect();
        match matches.as_slice() {
            [single] => Ok(*single),
            [] => Err(self.unknown_column(fields, name, path, depth)),
            several => Err(PqsiftError::filter_on(
                &path.name(),
                format!(
                    "column {path} is ambiguous: it matches {}",
                    several.iter().map(|(_, f)| format!("`{}`", f.name())).collect::<Vec<_>>().join(", ")
                ),
            )),
        }
    }

    fn names_match(&self, actual: &str, wanted: &str) -> bool {
        match self.options.case_sensitive {
            true => actual == wanted,
            // ASCII names (most) compared in place: a lookup among a footer's thousands of
            // columns allocates nothing.
            false if actual.is_ascii() && wanted.is_ascii() => actual.eq_ignore_ascii_case(wanted),
            false => actual.to_lowercase() == wanted.to_lowercase(),
        }
    }

    fn unknown_column(&self, fields: &Fields, name: &str, path: &ColumnPath, depth: usize) -> PqsiftError {
        let wanted = name.to_lowercase();
        let dotted = path.parts()[depth..].join(".");
        let mut hints: Vec<String> = Vec::new();
        for field in fields {
            let actual = field.name();
            if depth + 1 < path.parts().len() && self.names_match(actual, &dotted) {
                // Spark reads `a.b` as field b of a; a column named "a.b" needs back-quotes.
                hints.push(format!("`{}` (a name with dots needs back-quotes)", actual.replace('`', "``")));
            } else if edit_distance(&actual.to_lowercase(), &wanted) <= 2 {
                hints.push(ColumnPath::new([actual.clone()]).to_string());
            }
        }
        let place = if depth == 0 {
            String::new()
        } else {
            format!(" in struct {}", ColumnPath::new(path.parts()[..depth].to_vec()))
        };
        let mut message = format!("unknown column {path}: no field `{name}`{place}");
        if !hints.is_empty() {
            message.push_str(&format!("; did you mean {}?", hints.join(" or ")));
        }
        PqsiftError::filter_on(&path.name(), message)
    }
}

fn boolean(expr: BoundExpr) -> Typed {
    Typed { expr, sql_type: Some(SqlType::Boolean) }
}

fn compare(op: CompareOp, left: BoundExpr, right: BoundExpr) -> BoundExpr {
    BoundExpr::Compare { op, left: Box::new(left), right: Box::new(right) }
}

/// The set of a list of literals that are all of the tested value's own type: integer
/// literals (of any integer kind) that fit its signed integer type, or strings tested on
/// a STRING of Arrow type `Utf8`. That is what binding each item gives (its literal
/// widened to the common type, then unwrapped to the value's type, exact), made as one
/// array at once rather than item by item through one-element arrays and casts — a
/// semi-join pushed into a scan lists a hundred thousand ids. `None` where that does not
/// hold (another item or type, a value out of range), left to the general path.
fn literal_set(value: &Typed, list: &[Expr]) -> Option<Result<InSet>> {
    let integer = |item: &Expr| match item {
        Expr::Literal(Literal::Byte(v)) => Some(i64::from(*v)),
        Expr::Literal(Literal::Short(v)) => Some(i64::from(*v)),
        Expr::Literal(Literal::Int(v)) => Some(i64::from(*v)),
        Expr::Literal(Literal::Long(v)) => Some(*v),
        _ => None,
    };
    fn fitting<T: TryFrom<i64>>(values: &[i64]) -> Option<Vec<T>> {
        values.iter().map(|&v| T::try_from(v).ok()).collect()
    }
    let integers = || list.iter().map(integer).collect::<Option<Vec<i64>>>();
    let array: ArrayRef = match value.expr.data_type() {
        DataType::Int8 => Arc::new(Int8Array::from(fitting::<i8>(&integers()?)?)),
        DataType::Int16 => Arc::new(Int16Array::from(fitting::<i16>(&integers()?)?)),
        DataType::Int32 => Arc::new(Int32Array::from(fitting::<i32>(&integers()?)?)),
        DataType::Int64 => Arc::new(Int64Array::from(integers()?)),
        DataType::Utf8 if value.sql_type == Some(SqlType::String) => {
            let strings = list.iter().map(|item| match item {
                Expr::Literal(Literal::String(text)) => Some(text.as_str()),
                _ => None,
            });
            Arc::new(StringArray::from(strings.collect::<Option<Vec<&str>>>()?))
        }
        _ => return None,
    };
    Some(InSet::new(&[array]))
}

/// [`literal_set`] for a long list tested on a value that is not a literal, shared with the
/// previous binds of the same list (a clone of it) to a value of the same type: planning
/// binds the filter to the table's schema and reading to each file's, and a list of 100,000
/// values takes longer to make into a set than to read.
fn shared_literal_set(value: &Typed, list: &ExprList) -> Option<Result<Arc<InSet>>> {
    static RECENT: Recent<(ExprList, DataType, Option<SqlType>), Option<Arc<InSet>>> = Recent::new(SHARED_BINDS);
    if is_literal(&value.expr) || list.len() <= SET_MIN_ITEMS {
        return None;
    }
    let key = (value.expr.data_type(), value.sql_type);
    RECENT
        .get_or_make(
            |(kept, data_type, sql_type), _| kept.is_shared_with(list) && (data_type, sql_type) == (&key.0, &key.1),
            || (list.clone(), key.0.clone(), key.1),
            || literal_set(value, list).transpose().map(|set| set.map(Arc::new)),
        )
        .transpose()
}

fn is_literal(expr: &BoundExpr) -> bool {
    matches!(expr, BoundExpr::Literal(_))
}

/// How an operand is shown in a message: columns back-quoted, literals as written.
fn operand_text(expr: &Expr) -> String {
    match expr {
        Expr::Literal(_) => expr.to_string(),
        _ => format!("{expr}"),
    }
}

/// `literal` (of type `common`) converted exactly to `value`'s own type, when `value`
/// widens to `common` preserving order, so comparing in `value`'s type gives the same
/// answers.
fn unwrap_literal(value: &BoundExpr, literal: &ArrayRef, common: &DataType) -> Option<ArrayRef> {
    let own_type = value.data_type();
    if own_type == *common {
        return Some(literal.clone());
    }
    if !is_order_preserving_widening(&own_type, common) {
        return None;
    }
    let lenient = CastOptions::default();
    let narrowed = cast_with_options(literal, &own_type, &lenient).ok()?;
    let back = cast_with_options(&narrowed, common, &lenient).ok()?;
    (narrowed.null_count() == literal.null_count() && back.to_data() == literal.to_data()).then_some(narrowed)
}

/// `value op literal` for a nanosecond timestamp `value` and a microsecond `literal` of
/// the same kind (`common`: both instants or both wall clocks), in nanoseconds.
///
/// Spark compares the value floored to its microsecond, `floor(v / 1000) op l`, which is
/// `v` against the first nanosecond of `l`'s microsecond or of the next one: `>= l` is
/// `v >= 1000·l`, `> l` is `v >= 1000·(l+1)`, `= l` is both bounds. Each row is then
/// compared as it was decoded, never converted (an INT96 timestamp is read in
/// nanoseconds), and statistics in nanoseconds prune it directly. `None` — the cast
/// decides — for a null literal, a bound past nanoseconds' range, or `<=>`; `=` and `!=`
/// only on a column (they read the value twice).
///
/// ```text
/// ts >= TIMESTAMP '2026-01-08 09:00:00'   (ts: timestamp[ns, UTC])
///   → ts >= 1767862800000000000
/// ts = TIMESTAMP '2026-01-08 09:00:00.000001'
///   → ts >= 1767862800000001000 AND ts < 1767862800000002000
/// ```
fn floored_nanos_compare(op: CompareOp, value: &BoundExpr, literal: &ArrayRef, common: &DataType) -> Option<BoundExpr> {
    let (DataType::Timestamp(TimeUnit::Nanosecond, own_zone), DataType::Timestamp(TimeUnit::Microsecond, zone)) =
        (&value.data_type(), common)
    else {
        return None;
    };
    let micros = literal.as_primitive_opt::<TimestampMicrosecondType>()?;
    if own_zone.is_some() != zone.is_some() || micros.len() != 1 || micros.is_null(0) {
        return None;
    }
    let first = micros.value(0).checked_mul(1_000)?;
    let next = first.checked_add(1_000)?;
    let at = |nanos: i64| {
        let literal = TimestampNanosecondArray::from(vec![nanos]).with_timezone_opt(own_zone.clone());
        BoundExpr::Literal(Arc::new(literal))
    };
    let against = |op, nanos| compare(op, value.clone(), at(nanos));
    let is_column = matches!(value, BoundExpr::Column(_));
    Some(match op {
        CompareOp::GtEq => against(CompareOp::GtEq, first),
        CompareOp::Gt => against(CompareOp::GtEq, next),
        CompareOp::Lt => against(CompareOp::Lt, first),
        CompareOp::LtEq => against(CompareOp::Lt, next),
        CompareOp::Eq if is_column => {
            BoundExpr::And(Box::new(against(CompareOp::GtEq, first)), Box::new(against(CompareOp::Lt, next)))
        }
        CompareOp::NotEq if is_column => {
            BoundExpr::Or(Box::new(against(CompareOp::Lt, first)), Box::new(against(CompareOp::GtEq, next)))
        }
        CompareOp::Eq | CompareOp::NotEq | CompareOp::NullSafeEq => return None,
    })
}

/// `round(x, s) op literal` for a DOUBLE `x` and literal, bound as comparisons of `x` with
/// the literal's preimage (see [`rounded_preimage`]): each row compared, not rounded, and
/// statistics prune on the bounds. `None` (the rounding stays) for anything else, a NULL
/// literal, `<=>`, or `=`/`!=` of a rounded expression other than a column (they would
/// read it twice).
///
/// ```text
/// round(amount, 0) = 45     → amount >= 44.5 AND amount < 45.5
/// round(amount, 1) > 2.67   → amount >= 2.65     (the first value that rounds to 2.7)
/// ```
fn rounded_double_compare(op: CompareOp, value: &BoundExpr, literal: &ArrayRef) -> Option<BoundExpr> {
    let BoundExpr::Function { function: ScalarFunction::Round { scale }, args, data_type: DataType::Float64, .. } =
        value
    else {
        return None;
    };
    let [inner] = args.as_slice() else { return None };
    if inner.data_type() != DataType::Float64 {
        return None;
    }
    let preimage = rounded_preimage(op, *scale, double_constant(literal)?)?;
    preimage_compare(inner, preimage, |bound| Some(Arc::new(Float64Array::from(vec![bound]))))
}

/// `CAST(i AS DOUBLE) step c op literal` for an integer `i` and DOUBLE constants (Spark's
/// `i / 1000 > 30`), bound as comparisons of `i` with the literal's preimage (see
/// [`integer_preimage`]): each row an integer compare, no cast or arithmetic. `None` (the
/// arithmetic stays) for anything else, a NULL literal or constant, `<=>`, a step that
/// is not monotone (`c / i`, a factor of zero, a constant that is not finite), or `=`/`!=`
/// of an integer expression other than a column.
///
/// ```text
/// duration_ms / 1000 > 30      → duration_ms >= 30001
/// ```
fn integer_arithmetic_compare(op: CompareOp, value: &BoundExpr, literal: &ArrayRef) -> Option<BoundExpr> {
    let BoundExpr::Arithmetic { op: arithmetic, left, right, data_type: DataType::Float64, .. } = value else {
        return None;
    };
    // An integer cast to DOUBLE, and its type's range.
    fn integer(side: &BoundExpr) -> Option<(&BoundExpr, (i64, i64))> {
        let BoundExpr::Cast { expr, to: DataType::Float64, null_on_error: false, .. } = side else { return None };
        let range = match expr.data_type() {
            DataType::Int8 => (i64::from(i8::MIN), i64::from(i8::MAX)),
            DataType::Int16 => (i64::from(i16::MIN), i64::from(i16::MAX)),
            DataType::Int32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
            DataType::Int64 => (i64::MIN, i64::MAX),
            _ => return None,
        };
        Some((expr.as_ref(), range))
    }
    let constant = |side: &BoundExpr| match side {
        BoundExpr::Literal(value) => double_constant(value),
        _ => None,
    };
    let (inner, (min, max), step) = match (integer(left), constant(right), constant(left), integer(right)) {
        (Some((inner, range)), Some(c), _, _) => (
            inner,
            range,
            match arithmetic {
                ArithmeticOp::Add => Step::Add(c),
                ArithmeticOp::Subtract => Step::Subtract(c),
                ArithmeticOp::Multiply => Step::Multiply(c),
                ArithmeticOp::Divide => Step::Divide(c),
            },
        ),
        (_, _, Some(c), Some((inner, range))) => (
            inner,
            range,
            match arithmetic {
                ArithmeticOp::Add => Step::Add(c),
                ArithmeticOp::Subtract => Step::SubtractFrom(c),
                ArithmeticOp::Multiply => Step::Multiply(c),
                ArithmeticOp::Divide => return None,
            },
        ),
        _ => return None,
    };
    let own_type = inner.data_type();
    let preimage = integer_preimage(op, step, min, max, double_constant(literal)?)?;
    // The bounds lie in the integer type's range: the cast is exact.
    preimage_compare(inner, preimage, |bound| arrow::compute::cast(&Int64Array::from(vec![bound]), &own_type).ok())
}

/// The comparisons of `value` that `preimage` says, each bound made a literal by
/// `literal`; `None` where one is not, or for two comparisons of a value other than a
/// column (it would be evaluated twice).
fn preimage_compare<T: Copy>(
    value: &BoundExpr,
    preimage: Preimage<T>,
    literal: impl Fn(T) -> Option<ArrayRef>,
) -> Option<BoundExpr> {
    let against = |(op, bound): (CompareOp, T)| Some(compare(op, value.clone(), BoundExpr::Literal(literal(bound)?)));
    let is_column = matches!(value, BoundExpr::Column(_));
    Some(match preimage {
        Preimage::One(comparison) => against(comparison)?,
        Preimage::Both([low, high]) if is_column => BoundExpr::And(Box::new(against(low)?), Box::new(against(high)?)),
        Preimage::Either([low, high]) if is_column => BoundExpr::Or(Box::new(against(low)?), Box::new(against(high)?)),
        Preimage::Both(_) | Preimage::Either(_) => return None,
    })
}

/// The value of a one-value, non-NULL DOUBLE constant.
fn double_constant(constant: &ArrayRef) -> Option<f64> {
    let constant = constant.as_primitive_opt::<Float64Type>()?;
    (constant.len() == 1 && constant.is_valid(0)).then(|| constant.value(0))
}

/// Checks a LIKE pattern with Spark's escape rules (the escape character may only precede
/// `_`, `%` or itself) and rewrites it with `\` as the escape, as Arrow's kernel reads it.
fn like_pattern_with_backslash(pattern: &str, escape: char) -> Result<String> {
    let mut rewritten = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == escape {
            match chars.next() {
                Some(next) if next == '_' || next == '%' || next == escape => {
                    // Arrow's LIKE escapes with a backslash: wildcards and a backslash need one.
                    if matches!(next, '_' | '%' | '\\') {
                        rewritten.push('\\');
                    }
                    rewritten.push(next);
                }
                Some(next) => {
                    return Err(PqsiftError::filter(format!(
                        "invalid LIKE pattern '{pattern}': the escape character '{escape}' may only precede '_', '%' or itself, not '{next}'"
                    )));
                }
                None => {
                    return Err(PqsiftError::filter(format!(
                        "invalid LIKE pattern '{pattern}': it ends with the escape character '{escape}'"
                    )));
                }
            }
        } else if c == '\\' {
            // A literal backslash (the escape is another character).
            rewritten.push_str("\\\\");
        } else {
            rewritten.push(c);
        }
    }
    Ok(rewritten)
}

/// Levenshtein distance, for "did you mean" hints on short names.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_translate_to_backslash_escapes() {
        assert_eq!(like_pattern_with_backslash("a\\%b", '\\').unwrap(), "a\\%b");
        assert_eq!(like_pattern_with_backslash("a\\\\b", '\\').unwrap(), "a\\\\b");
        assert_eq!(like_pattern_with_backslash("a!%b\\", '!').unwrap(), "a\\%b\\\\");
        assert_eq!(like_pattern_with_backslash("a!!", '!').unwrap(), "a!");
        let error = like_pattern_with_backslash("a\\x", '\\').unwrap_err();
        assert!(error.to_string().contains("not 'x'"), "{error}");
        assert!(like_pattern_with_backslash("a\\", '\\').is_err());
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("price", "prise"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
