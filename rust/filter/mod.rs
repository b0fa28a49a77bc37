//! Filter expressions in Spark SQL: the model every later stage (binding, evaluation,
//! pruning) works on, and the other ways a scan names columns — the projection
//! ([`projection`]: output columns and struct fields by path) and `ORDER BY` keys
//! ([`sort_key`]).
//!
//! The pipeline is text → [`Expr`] ([`parse_filter`]) → [`BoundExpr`] ([`bind()`], which
//! resolves columns against an Arrow schema and applies Spark's type coercion) →
//! [`BooleanArray`](arrow::array::BooleanArray) per record batch ([`evaluate()`]). Semantics
//! are Spark SQL's with `spark.sql.ansi.enabled=true` (the Spark 4 default) and
//! `spark.sql.caseSensitive=false`.
//!
//! ```
//! use pqsift::filter::{parse_filter, ColumnPath};
//!
//! let expr = parse_filter("a.b > 1 AND `c.d` IS NULL").unwrap();
//! let conjuncts = pqsift::filter::split_conjunction(&expr);
//! assert_eq!(conjuncts.len(), 2);
//! assert_eq!(
//!     pqsift::filter::columns(&expr),
//!     vec![ColumnPath::new(["a", "b"]), ColumnPath::new(["c.d"])]
//! );
//! // Display renders Spark SQL that parses back to the same expression.
//! assert_eq!(expr.to_string(), "`a`.`b` > 1 AND `c.d` IS NULL");
//! assert_eq!(parse_filter(&expr.to_string()).unwrap(), expr);
//! ```

mod affix;
mod arithmetic_compare;
mod bind;
mod cast;
mod coerce;
mod decimal_arith;
mod display;
mod evaluate;
pub mod float_compare;
mod function_kernels;
pub mod functions;
pub mod in_set;
mod java_regex;
mod like_prefilter;
mod like_regex;
mod literal;
mod parse;
mod preimage;
pub mod projection;
mod recent;
mod rounded_compare;
mod select_rows;
pub mod sort_key;
mod spark_cast;
mod sql_type;
pub mod uuid_text;
mod zone_offset_ranges;
mod zone_offsets;

#[cfg(test)]
mod function_tests;
#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod tests;

use std::sync::Arc;

pub use bind::{BindOptions, BoundColumn, BoundExpr, bind, resolve_column};
// "Did you mean" for option names (the Python layer's).
#[cfg(feature = "python")]
pub(crate) use bind::edit_distance;
pub(crate) use cast::{describe as describe_type, is_order_preserving_widening};
pub use evaluate::evaluate;
pub(crate) use evaluate::evaluate_value;
pub(crate) use float_compare::spark_float_order;
pub use functions::ScalarFunction;
pub use literal::{Literal, LiteralZone, TimestampLiteral};
pub(crate) use literal::{local_to_utc, parse_time_zone};
pub use parse::parse_filter;
pub use sql_type::SqlType;
pub(crate) use zone_offsets::fixed_offset_seconds;
pub(crate) use zone_offsets::offset_range_micros;

/// A reference to a column: the path of field names from the top-level column down
/// through nested structs.
///
/// `a.b` in filter text is the path `["a", "b"]` (field `b` of struct column `a`), while
/// `` `a.b` `` is the one-element path `["a.b"]` (a column whose name contains a dot), as in
/// Spark SQL.
///
/// ```
/// use pqsift::filter::ColumnPath;
///
/// let path = ColumnPath::new(["a", "b"]);
/// assert_eq!(path.to_string(), "`a`.`b`");
/// assert_eq!(path.parts(), ["a", "b"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ColumnPath(Vec<String>);

impl ColumnPath {
    /// A path from its parts, outermost first.
    ///
    /// ```
    /// let path = pqsift::filter::ColumnPath::new(["price"]);
    /// assert_eq!(path.parts(), ["price"]);
    /// ```
    pub fn new<S: Into<String>>(parts: impl IntoIterator<Item = S>) -> Self {
        Self(parts.into_iter().map(Into::into).collect())
    }

    /// The field names, outermost first.
    ///
    /// ```
    /// let path = pqsift::filter::ColumnPath::new(["a", "b"]);
    /// assert_eq!(path.parts().last().map(String::as_str), Some("b"));
    /// ```
    pub fn parts(&self) -> &[String] {
        &self.0
    }

    /// The path as Spark's `select` names it: parts joined by dots, a part back-quoted only
    /// when it needs it (Spark's `quoteIfNeeded`: anything but letters, digits and `_`, or
    /// digits alone).
    ///
    /// ```
    /// use pqsift::filter::ColumnPath;
    /// assert_eq!(ColumnPath::new(["a", "b"]).name(), "a.b");
    /// assert_eq!(ColumnPath::new(["a.b", "c"]).name(), "`a.b`.c");
    /// assert_eq!(ColumnPath::new(["x`y", "1"]).name(), "`x``y`.`1`");
    /// ```
    pub fn name(&self) -> String {
        let plain = |part: &str| {
            !part.is_empty()
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !part.chars().all(|c| c.is_ascii_digit())
        };
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|part| match plain(part) {
                true => part.clone(),
                false => format!("`{}`", part.replace('`', "``")),
            })
            .collect();
        parts.join(".")
    }
}

/// A comparison operator.
///
/// ```
/// use pqsift::filter::CompareOp;
/// assert_eq!(CompareOp::NullSafeEq.to_string(), "<=>");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `=` (also written `==`).
    Eq,
    /// `!=` (also written `<>`).
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `<=>`: equality where NULL equals NULL and the result is never NULL.
    NullSafeEq,
}

impl CompareOp {
    /// Every operator.
    pub const ALL: [CompareOp; 7] = [
        CompareOp::Eq,
        CompareOp::NotEq,
        CompareOp::Lt,
        CompareOp::LtEq,
        CompareOp::Gt,
        CompareOp::GtEq,
        CompareOp::NullSafeEq,
    ];

    /// Whether `a op b` holds for operands neither of which is NULL, `order` being `a`'s
    /// order against `b` (`<=>` is `=` then).
    ///
    /// ```
    /// use std::cmp::Ordering;
    /// use pqsift::filter::CompareOp;
    /// assert!(CompareOp::LtEq.holds(Ordering::Equal));
    /// assert!(!CompareOp::NotEq.holds(Ordering::Equal));
    /// ```
    pub fn holds(self, order: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            Self::Eq | Self::NullSafeEq => order == Equal,
            Self::NotEq => order != Equal,
            Self::Lt => order == Less,
            Self::LtEq => order != Greater,
            Self::Gt => order == Greater,
            Self::GtEq => order != Less,
        }
    }

    /// The operator with its operands swapped: `a < b` is `b > a`.
    ///
    /// ```
    /// use pqsift::filter::CompareOp;
    /// assert_eq!(CompareOp::Lt.swapped(), CompareOp::Gt);
    /// assert_eq!(CompareOp::Eq.swapped(), CompareOp::Eq);
    /// ```
    pub fn swapped(self) -> Self {
        match self {
            Self::Lt => Self::Gt,
            Self::LtEq => Self::GtEq,
            Self::Gt => Self::Lt,
            Self::GtEq => Self::LtEq,
            other => other,
        }
    }
}

/// An arithmetic operator.
///
/// ```
/// use pqsift::filter::ArithmeticOp;
/// assert_eq!(ArithmeticOp::Divide.to_string(), "/");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArithmeticOp {
    /// `+`
    Add,
    /// `-`
    Subtract,
    /// `*`
    Multiply,
    /// `/`: always fractional in Spark (integers divide as DOUBLE).
    Divide,
}

/// The items of an `IN` list, shared: a semi-join pushed into a scan brings lists of
/// 100,000 literals, and planning and reading handle the filter once per file (folding
/// partition values into it, binding it) — each clone of a `Vec` of them would copy every
/// literal, each comparison compare them all. Clones share the items, and equal pointers compare equal at once.
///
/// ```
/// use pqsift::filter::{Expr, ExprList, parse_filter};
/// let Expr::InList { list, .. } = parse_filter("a IN (1, 2, 3)").unwrap() else { panic!() };
/// let copy = list.clone();
/// assert_eq!(copy, list);
/// assert_eq!(copy.len(), 3);
/// assert_eq!(ExprList::from(copy.to_vec()), list);
/// ```
#[derive(Debug, Clone)]
pub struct ExprList(Arc<[Expr]>);

impl std::ops::Deref for ExprList {
    type Target = [Expr];
    fn deref(&self) -> &[Expr] {
        &self.0
    }
}

impl From<Vec<Expr>> for ExprList {
    fn from(items: Vec<Expr>) -> Self {
        Self(items.into())
    }
}

impl FromIterator<Expr> for ExprList {
    fn from_iter<I: IntoIterator<Item = Expr>>(items: I) -> Self {
        Self(items.into_iter().collect())
    }
}

impl PartialEq for ExprList {
    fn eq(&self, other: &Self) -> bool {
        self.is_shared_with(other) || self.0 == other.0
    }
}

impl ExprList {
    /// Whether `other` is a clone of this list (shares its items), without comparing them.
    pub fn is_shared_with(&self, other: &ExprList) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A filter expression, as parsed from Spark SQL text and before it is bound to a schema.
///
/// Boolean connectives are binary, as parsed (`a AND b AND c` is `And(And(a, b), c)`);
/// use [`split_conjunction`] to flatten. Build one with [`parse_filter`] or directly:
///
/// ```
/// use pqsift::filter::{ColumnPath, CompareOp, Expr, Literal};
///
/// let expr = Expr::Compare {
///     op: CompareOp::Gt,
///     left: Box::new(Expr::Column(ColumnPath::new(["x"]))),
///     right: Box::new(Expr::Literal(Literal::Int(100))),
/// };
/// assert_eq!(expr.to_string(), "`x` > 100");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A column reference.
    Column(ColumnPath),
    /// A typed constant.
    Literal(Literal),
    /// `left op right`.
    Compare {
        /// The operator.
        op: CompareOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// `expr [NOT] IN (list...)`.
    InList {
        /// The tested value.
        expr: Box<Expr>,
        /// The candidates (never empty).
        list: ExprList,
        /// `NOT IN`.
        negated: bool,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        /// The tested value.
        expr: Box<Expr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `expr [NOT] BETWEEN low AND high` (inclusive on both ends).
    Between {
        /// The tested value.
        expr: Box<Expr>,
        /// Lower bound.
        low: Box<Expr>,
        /// Upper bound.
        high: Box<Expr>,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `expr [NOT] LIKE 'pattern' [ESCAPE 'c']`: `%` matches any run of characters, `_`
    /// one character, and the escape character (default `\`) makes the next `%`, `_` or
    /// escape character literal.
    Like {
        /// The tested string.
        expr: Box<Expr>,
        /// The pattern (a string literal in the text).
        pattern: String,
        /// An `ESCAPE` character other than the default `\`.
        escape: Option<char>,
        /// `NOT LIKE`.
        negated: bool,
    },
    /// `left AND right`, three-valued.
    And(Box<Expr>, Box<Expr>),
    /// `left OR right`, three-valued.
    Or(Box<Expr>, Box<Expr>),
    /// `NOT expr`, three-valued.
    Not(Box<Expr>),
    /// `CAST(expr AS to)` with Spark's ANSI cast rules.
    Cast {
        /// The converted value.
        expr: Box<Expr>,
        /// The target type.
        to: SqlType,
    },
    /// `TRY_CAST(expr AS to)`: the cast, NULL for a value it would raise for.
    TryCast {
        /// The converted value.
        expr: Box<Expr>,
        /// The target type.
        to: SqlType,
    },
    /// `left op right`.
    Arithmetic {
        /// The operator.
        op: ArithmeticOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// `-expr`.
    Negate(Box<Expr>),
    /// `abs(expr)`.
    Abs(Box<Expr>),
    /// A Spark SQL function call, `name(args...)`, by its canonical lower-case name (aliases
    /// such as `lcase`, `substr`, `nvl` or `ceiling` are read as `lower`, `substring`,
    /// `coalesce` and `ceil`). The functions pqsift evaluates are listed in
    /// [`functions`](self::functions); any other name is a [`PqsiftError::Filter`](crate::PqsiftError)
    /// when the filter is parsed.
    Function {
        /// The canonical name.
        name: String,
        /// The arguments, in order.
        args: Vec<Expr>,
    },
    /// `CASE WHEN condition THEN value ... [ELSE otherwise] END`: the value of the first
    /// branch whose condition is TRUE, else `otherwise` (NULL when absent). `CASE x WHEN v
    /// THEN ...` is read as `CASE WHEN x = v THEN ...`, `if(c, a, b)` as `CASE WHEN c THEN a
    /// ELSE b END`, as Spark rewrites them.
    Case {
        /// `(condition, value)` pairs, in order (never empty).
        branches: Vec<(Expr, Expr)>,
        /// The `ELSE` value.
        otherwise: Option<Box<Expr>>,
    },
}

impl Expr {
    /// A column reference from its path parts.
    ///
    /// ```
    /// use pqsift::filter::Expr;
    /// assert_eq!(Expr::column(["a", "b"]).to_string(), "`a`.`b`");
    /// ```
    pub fn column<S: Into<String>>(parts: impl IntoIterator<Item = S>) -> Self {
        Self::Column(ColumnPath::new(parts))
    }

    /// The children a walk of the tree visits: all but an IN list's literal items, leaves
    /// without columns that a long list holds by the hundred thousand (a walk per file
    /// planned went through each, building a list of them).
    pub(crate) fn walked_children(&self) -> Vec<&Expr> {
        match self {
            Self::InList { expr, list, .. } => std::iter::once(expr.as_ref())
                .chain(list.iter().filter(|item| !matches!(item, Self::Literal(_))))
                .collect(),
            _ => self.children(),
        }
    }

    /// The direct sub-expressions, left to right.
    ///
    /// ```
    /// let expr = pqsift::filter::parse_filter("a + 1 > b").unwrap();
    /// assert_eq!(expr.children().len(), 2);
    /// ```
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Self::Column(_) | Self::Literal(_) => vec![],
            Self::Compare { left, right, .. }
            | Self::Arithmetic { left, right, .. }
            | Self::And(left, right)
            | Self::Or(left, right) => vec![left, right],
            Self::InList { expr, list, .. } => std::iter::once(expr.as_ref()).chain(list.iter()).collect(),
            Self::Between { expr, low, high, .. } => vec![expr, low, high],
            Self::IsNull { expr, .. }
            | Self::Like { expr, .. }
            | Self::Not(expr)
            | Self::Cast { expr, .. }
            | Self::TryCast { expr, .. }
            | Self::Negate(expr)
            | Self::Abs(expr) => vec![expr],
            Self::Function { args, .. } => args.iter().collect(),
            Self::Case { branches, otherwise } => {
                branches.iter().flat_map(|(condition, value)| [condition, value]).chain(otherwise.as_deref()).collect()
            }
        }
    }
}

/// The conjuncts of a predicate: `a AND (b AND c)` gives `[a, b, c]`; anything that is not
/// an `AND` gives itself. Each conjunct can be pruned or evaluated on its own.
///
/// ```
/// use pqsift::filter::{parse_filter, split_conjunction};
///
/// let expr = parse_filter("a > 1 AND (b < 2 AND c = 3) AND (d = 1 OR e = 2)").unwrap();
/// let parts: Vec<String> = split_conjunction(&expr).iter().map(|e| e.to_string()).collect();
/// assert_eq!(parts, ["`a` > 1", "`b` < 2", "`c` = 3", "`d` = 1 OR `e` = 2"]);
/// ```
pub fn split_conjunction(expr: &Expr) -> Vec<&Expr> {
    let mut conjuncts = Vec::new();
    let mut pending = vec![expr];
    // A stack (right pushed first) keeps the conjuncts in text order without recursion.
    while let Some(next) = pending.pop() {
        match next {
            Expr::And(left, right) => {
                pending.push(right);
                pending.push(left);
            }
            other => conjuncts.push(other),
        }
    }
    conjuncts
}

/// The nesting depth of an expression (a column or literal has depth 1), computed
/// without recursion so that any tree can be measured.
///
/// ```
/// let expr = pqsift::filter::parse_filter("a > 1 AND NOT b").unwrap();
/// assert_eq!(pqsift::filter::depth(&expr), 3);
/// ```
pub fn depth(expr: &Expr) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(expr, 1)];
    while let Some((next, level)) = pending.pop() {
        let literal_items =
            matches!(next, Expr::InList { list, .. } if list.iter().any(|item| matches!(item, Expr::Literal(_))));
        deepest = deepest.max(if literal_items { level + 1 } else { level });
        pending.extend(next.walked_children().into_iter().map(|child| (child, level + 1)));
    }
    deepest
}

/// The distinct column paths an expression references, in order of first appearance.
///
/// ```
/// use pqsift::filter::{columns, parse_filter, ColumnPath};
///
/// let expr = parse_filter("a > b AND s.x IN (1, a)").unwrap();
/// assert_eq!(
///     columns(&expr),
///     vec![ColumnPath::new(["a"]), ColumnPath::new(["b"]), ColumnPath::new(["s", "x"])]
/// );
/// ```
pub fn columns(expr: &Expr) -> Vec<ColumnPath> {
    let mut found: Vec<ColumnPath> = Vec::new();
    let mut pending = vec![expr];
    while let Some(next) = pending.pop() {
        if let Expr::Column(path) = next
            && !found.contains(path)
        {
            found.push(path.clone());
        }
        pending.extend(next.walked_children().into_iter().rev());
    }
    found
}
