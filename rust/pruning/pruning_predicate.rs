//! Three-valued evaluation of a bound filter on zone maps (ORC's `TruthValue`).
//!
//! For every container (row group or page) the pruning predicate computes two facts:
//! whether the filter **can be true** for some row, and whether it **can be false** for
//! some row. A row whose result is NULL counts as neither. A container is skipped only
//! where the filter cannot be true. The connectives combine the facts conservatively:
//!
//! * `NOT a`: swaps them (NOT of NULL is NULL, so nothing else changes);
//! * `a AND b`: can be true only if both can; can be false if either can;
//! * `a OR b`: can be true if either can; can be false only if both can.
//!
//! Leaves are decided from bounds only. Bounds are bounds whether or not they are exact
//! (Parquet's truncated string bounds still enclose every value), so every "cannot"
//! derived here holds for inexact bounds too: exactness would only tell that some row
//! *does* hold the bound, which skipping never needs. Unknown statistics (null in the zone
//! maps) decide nothing. Comparisons between bounds and literals use the filter
//! evaluator itself, so they have Spark's semantics (NaN greatest and equal to NaN,
//! -0.0 = 0.0, strings as UTF-8 bytes, decimals, dates, timestamps).
//!
//! **Monotonic functions.** A side that is a chain of order-preserving casts, negation and
//! arithmetic with a literal over one column (`x + 1`, `-x`, `x * 2`, `x / 2`,
//! `CAST(x AS BIGINT)`, `CAST(d AS TIMESTAMP)`) is monotone in that column: its values in a
//! container lie between the function of the column's min and of its max (swapped when
//! the function decreases). The function is evaluated on the bounds with Spark's ANSI
//! arithmetic; a bound that overflows is unknown. Functions that keep order in one argument
//! when the others are constants count too: `year(d)`, `date_trunc('DAY', ts)`,
//! `date_add(d, n)`, `datediff` (decreasing in its second argument), `round`,
//! `floor`/`ceil` of integers and decimals, `substring(s, 1, n)`; `startswith(s, 'p')`
//! prunes as `s LIKE 'p%'`. `x * x`, `abs(x)`, `lower(s)`, `x % 7` or `length(s)` are not
//! monotone and are not used. A wall clock of the column's instants in a zone whose
//! offset changes keeps no order, but stays within the zone's offsets of the instant: its
//! bounds are widened by them (`Widening`). `hour`, `minute` and `second` keep order
//! within a day, an hour, a minute of wall-clock time: a container whose wall clocks lie
//! within one uses its bounds (`hour` of 02:00-03:59 is 2 to 3), any other decides nothing.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Int32Array, UInt64Array, BooleanArray};
//! use arrow::datatypes::{DataType, Field, Schema};
//! use pqsift::filter::{bind, parse_filter, BindOptions};
//! use pqsift::pruning::pruning_predicate::{evaluate_on_zone_maps, ZoneSource};
//! use pqsift::pruning::zone_map::ZoneMaps;
//!
//! let schema = Schema::new(vec![Field::new("age", DataType::Int32, true)]);
//! let filter = bind(&parse_filter("age + 1 > 50").unwrap(), &schema, &BindOptions::default()).unwrap();
//! // Two row groups: ages in [18, 35] and in [45, 65].
//! let zones = ZoneMaps {
//!     mins: Arc::new(Int32Array::from(vec![18, 45])),
//!     maxes: Arc::new(Int32Array::from(vec![35, 65])),
//!     min_exact: BooleanArray::from(vec![true, true]),
//!     max_exact: BooleanArray::from(vec![true, true]),
//!     null_counts: UInt64Array::from(vec![0, 0]),
//!     row_counts: UInt64Array::from(vec![100, 100]),
//! };
//! let source = |_: &pqsift::filter::BoundColumn| -> pqsift::Result<Option<ZoneMaps>> { Ok(Some(zones.clone())) };
//! let possible = evaluate_on_zone_maps(&filter, 2, &source).unwrap();
//! assert_eq!(possible.can_true, [false, true]);
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch, StringArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Float64Type, Schema, TimeUnit};

use crate::Result;
use crate::filter::functions::TruncLevel;
use crate::filter::in_set::InSet;
use crate::filter::{ArithmeticOp, BoundColumn, BoundExpr, CompareOp, ScalarFunction, evaluate, evaluate_value};
use crate::pruning::zone_map::ZoneMaps;
use crate::selection::RowSelection;

/// A set of containers (or of rows) the evaluation combines with AND / OR.
pub trait ContainerSet: Clone {
    /// Intersection.
    fn intersect(&self, other: &Self) -> Result<Self>;
    /// Union.
    fn unite(&self, other: &Self) -> Result<Self>;
}

impl ContainerSet for Vec<bool> {
    fn intersect(&self, other: &Self) -> Result<Self> {
        Ok(self.iter().zip(other).map(|(a, b)| *a && *b).collect())
    }
    fn unite(&self, other: &Self) -> Result<Self> {
        Ok(self.iter().zip(other).map(|(a, b)| *a || *b).collect())
    }
}

impl ContainerSet for RowSelection {
    fn intersect(&self, other: &Self) -> Result<Self> {
        self.intersection(other)
    }
    fn unite(&self, other: &Self) -> Result<Self> {
        self.union(other)
    }
}

/// Where the filter can be true and where it can be false: per container (`Vec<bool>`) or
/// as the rows of a row group ([`RowSelection`], for pages that do not align).
///
/// ```
/// use pqsift::pruning::pruning_predicate::Possible;
/// let a = Possible { can_true: vec![true, false], can_false: vec![false, true] };
/// assert_eq!(a.negated().can_true, [false, true]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Possible<S> {
    /// Containers where some row may satisfy the filter.
    pub can_true: S,
    /// Containers where some row may fail it (NULL results are not failures).
    pub can_false: S,
}

impl<S: ContainerSet> Possible<S> {
    /// `NOT self`.
    pub fn negated(self) -> Self {
        Self { can_true: self.can_false, can_false: self.can_true }
    }

    /// `self AND other`.
    pub fn and(&self, other: &Self) -> Result<Self> {
        Ok(Self {
            can_true: self.can_true.intersect(&other.can_true)?,
            can_false: self.can_false.unite(&other.can_false)?,
        })
    }

    /// `self OR other`.
    pub fn or(&self, other: &Self) -> Result<Self> {
        Ok(Self {
            can_true: self.can_true.unite(&other.can_true)?,
            can_false: self.can_false.intersect(&other.can_false)?,
        })
    }
}

/// Supplies the zone maps of a column (`None`: unknown, e.g. no page index).
pub trait ZoneSource {
    /// The zone maps of `column`, one entry per container.
    fn zone_maps(&self, column: &BoundColumn) -> Result<Option<ZoneMaps>>;
}

impl<F: Fn(&BoundColumn) -> Result<Option<ZoneMaps>>> ZoneSource for F {
    fn zone_maps(&self, column: &BoundColumn) -> Result<Option<ZoneMaps>> {
        self(column)
    }
}

/// Evaluates `filter` on `containers` containers whose zone maps `source` supplies.
/// See the module documentation for an example.
pub fn evaluate_on_zone_maps(
    filter: &BoundExpr,
    containers: usize,
    source: &dyn ZoneSource,
) -> Result<Possible<Vec<bool>>> {
    evaluate_tree(filter, &mut |leaf: &BoundExpr| {
        let leaf = LeafPredicate::analyse(leaf);
        match leaf.column() {
            None => Ok(leaf.evaluate(None, containers)),
            Some(column) => {
                let zones = source.zone_maps(column)?;
                Ok(leaf.evaluate(zones.as_ref().filter(|z| z.len() == containers), containers))
            }
        }
    })
}

/// Walks AND / OR / NOT, asking `leaf` for everything else.
///
/// ```
/// use arrow::datatypes::{DataType, Field, Schema};
/// use pqsift::filter::{bind, parse_filter, BindOptions, BoundExpr};
/// use pqsift::pruning::pruning_predicate::{evaluate_tree, Possible};
/// let schema = Schema::new(vec![Field::new("a", DataType::Int32, true)]);
/// let filter = bind(&parse_filter("NOT (a = 1 OR a = 2)").unwrap(), &schema, &BindOptions::default()).unwrap();
/// // Leaves that are true everywhere and never false: the negated OR is false everywhere.
/// let result = evaluate_tree(&filter, &mut |_: &BoundExpr| Ok(Possible { can_true: vec![true], can_false: vec![false] })).unwrap();
/// assert_eq!(result, Possible { can_true: vec![false], can_false: vec![true] });
/// ```
#[recursive::recursive]
pub fn evaluate_tree<S: ContainerSet>(
    filter: &BoundExpr,
    leaf: &mut dyn FnMut(&BoundExpr) -> Result<Possible<S>>,
) -> Result<Possible<S>> {
    match filter {
        BoundExpr::And(left, right) => {
            let left = evaluate_tree(left, leaf)?;
            left.and(&evaluate_tree(right, leaf)?)
        }
        BoundExpr::Or(left, right) => {
            let left = evaluate_tree(left, leaf)?;
            left.or(&evaluate_tree(right, leaf)?)
        }
        BoundExpr::Not(inner) => Ok(evaluate_tree(inner, leaf)?.negated()),
        other => leaf(other),
    }
}

/// A function of one column that preserves or reverses order.
#[derive(Debug, Clone)]
pub struct MonotoneTerm {
    /// The column.
    pub column: BoundColumn,
    /// The function, with the column rebound to field 0 of a one-column batch.
    function: BoundExpr,
    /// `true` when it preserves order, `false` when it reverses it.
    increasing: bool,
    /// How far its bounds lie outside those `function` gives (none but for a wall clock
    /// in a zone whose offset changes).
    widening: Widening,
    /// For `hour`, `minute` or `second` of the column: the wall-clock period (µs) within
    /// which the term keeps order. Only a container whose wall clocks lie within one
    /// period can use its bounds: `hour` over 22:00-01:00 takes 22, 23, 0 and 1.
    period: Option<i64>,
}

/// A conversion between instants and wall clocks in a zone whose offset changes keeps no
/// order, but each wall clock is its instant plus one of the zone's offsets. Such a term's
/// `function` converts as in UTC, on the column's bounds moved by the zone's least and
/// greatest offset; a truncation's result goes back to an instant by one of them too.
///
/// ```text
/// CAST(ts AS DATE) in America/New_York (offsets -05:00 to -04:00, since 1883):
///   ts within [2026-01-20 10:00Z, 2026-01-21 02:00Z]
///   → CAST(ts AS DATE) in UTC within [CAST(10:00Z - 5 h), CAST(02:00Z - 4 h)] = [01-20, 01-20]
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Widening {
    /// Microseconds added to the column's lower and upper bound before the function.
    column: (i64, i64),
    /// Microseconds added to the function's lower and upper bound (a timestamp).
    result: (i64, i64),
}

impl MonotoneTerm {
    /// `true` when the term is the column itself (no function applied).
    pub fn is_plain_column(&self) -> bool {
        matches!(self.function, BoundExpr::Column(_))
    }
}

/// A leaf of the filter as pruning understands it.
#[derive(Debug, Clone)]
pub enum LeafPredicate {
    /// `term op literal` (the literal may be NULL).
    Compare { term: MonotoneTerm, op: CompareOp, literal: ArrayRef },
    /// `term [NOT] IN (literals)`, a short list.
    InList { term: MonotoneTerm, items: Vec<ArrayRef>, negated: bool },
    /// `term [NOT] IN (literals)`, a long list as a set.
    InSet { term: MonotoneTerm, set: Arc<InSet>, negated: bool },
    /// `term IS [NOT] NULL`.
    IsNull { term: MonotoneTerm, negated: bool },
    /// `column [NOT] LIKE pattern` with a literal prefix before the first wildcard.
    Like { term: MonotoneTerm, prefix: String, prefix_only: bool, exact: bool, negated: bool },
    /// A BOOLEAN column used as a predicate.
    BooleanColumn(BoundColumn),
    /// A constant (NULL: `None`).
    Constant(Option<bool>),
    /// Anything else: decides nothing.
    Unknown,
}

impl LeafPredicate {
    /// Recognises a leaf (anything but AND / OR / NOT).
    ///
    /// ```
    /// use arrow::datatypes::{DataType, Field, Schema};
    /// use pqsift::filter::{bind, parse_filter, BindOptions};
    /// use pqsift::pruning::pruning_predicate::LeafPredicate;
    /// let schema = Schema::new(vec![Field::new("x", DataType::Int32, true)]);
    /// let leaf = |text| LeafPredicate::analyse(&bind(&parse_filter(text).unwrap(), &schema, &BindOptions::default()).unwrap());
    /// assert!(matches!(leaf("-x > -1"), LeafPredicate::Compare { .. }));
    /// assert!(matches!(leaf("x * x > 1"), LeafPredicate::Unknown));
    /// ```
    pub fn analyse(expr: &BoundExpr) -> Self {
        match expr {
            BoundExpr::Compare { op, left, right } => {
                if let (Some(term), BoundExpr::Literal(literal)) = (monotone(left), right.as_ref()) {
                    return Self::Compare { term, op: *op, literal: literal.clone() };
                }
                if let (BoundExpr::Literal(literal), Some(term)) = (left.as_ref(), monotone(right)) {
                    return Self::Compare { term, op: op.swapped(), literal: literal.clone() };
                }
                Self::Unknown
            }
            BoundExpr::InList { expr, list, negated } => {
                let items: Option<Vec<ArrayRef>> = list
                    .iter()
                    .map(|item| if let BoundExpr::Literal(value) = item { Some(value.clone()) } else { None })
                    .collect();
                match (monotone(expr), items) {
                    (Some(term), Some(items)) if !items.is_empty() => Self::InList { term, items, negated: *negated },
                    _ => Self::Unknown,
                }
            }
            BoundExpr::InSet { expr, set, negated } => match monotone(expr) {
                Some(term) => Self::InSet { term, set: Arc::clone(set), negated: *negated },
                None => Self::Unknown,
            },
            BoundExpr::IsNull { expr, negated } => match monotone(expr) {
                Some(term) => Self::IsNull { term, negated: *negated },
                None => Self::Unknown,
            },
            BoundExpr::Like { expr, pattern, negated, .. } => match (monotone(expr), parse_like_prefix(pattern)) {
                (Some(term), Some((prefix, prefix_only, exact)))
                    if term.increasing && is_string(&term.function.data_type()) =>
                {
                    Self::Like { term, prefix, prefix_only, exact, negated: *negated }
                }
                _ => Self::Unknown,
            },
            // `startswith(s, 'abc')` is `s LIKE 'abc%'` with nothing to escape.
            BoundExpr::Function { function: ScalarFunction::StartsWith, args, .. } => {
                match (monotone(&args[0]), &args[1]) {
                    (Some(term), BoundExpr::Literal(prefix))
                        if term.increasing
                            && is_string(&term.function.data_type())
                            && prefix.is_valid(0)
                            && prefix.data_type() == &DataType::Utf8 =>
                    {
                        Self::Like {
                            term,
                            prefix: prefix.as_string::<i32>().value(0).to_string(),
                            prefix_only: true,
                            exact: false,
                            negated: false,
                        }
                    }
                    _ => Self::Unknown,
                }
            }
            BoundExpr::Column(column) if column.data_type == DataType::Boolean => Self::BooleanColumn(column.clone()),
            BoundExpr::Literal(value) if value.data_type() == &DataType::Boolean => {
                Self::Constant(value.as_boolean().iter().next().flatten())
            }
            BoundExpr::Literal(value) if value.data_type() == &DataType::Null => Self::Constant(None),
            _ => Self::Unknown,
        }
    }

    /// The column whose zone maps the leaf needs.
    pub fn column(&self) -> Option<&BoundColumn> {
        match self {
            Self::Compare { term, .. }
            | Self::InList { term, .. }
            | Self::InSet { term, .. }
            | Self::IsNull { term, .. }
            | Self::Like { term, .. } => Some(&term.column),
            Self::BooleanColumn(column) => Some(column),
            Self::Constant(_) | Self::Unknown => None,
        }
    }

    /// Evaluates the leaf on `containers` containers with zone maps `zones` (`None`: unknown).
    pub fn evaluate(&self, zones: Option<&ZoneMaps>, containers: usize) -> Possible<Vec<bool>> {
        if let Self::Constant(value) = self {
            return Possible {
                can_true: vec![*value == Some(true); containers],
                can_false: vec![*value == Some(false); containers],
            };
        }
        let Some(zones) = zones else { return unknown(containers) };
        let counts = Counts::new(zones);
        let possible = match self {
            Self::Unknown | Self::Constant(_) => unknown(containers),
            // IS NULL is never NULL: no masking by null rows below.
            Self::IsNull { negated, .. } => return mask_empty(is_null(&counts, *negated), &counts),
            Self::BooleanColumn(_) => boolean_column(zones, containers),
            Self::Compare { term, op, literal } => match compare(term, *op, literal, zones, &counts) {
                Decided::Final(result) => return result,
                Decided::MaskNulls(result) => result,
            },
            Self::InList { term, items, negated } => in_list(term, items, *negated, zones, containers),
            Self::InSet { term, set, negated } => {
                let result = in_set(term, set, zones, containers);
                if *negated { result.negated() } else { result }
            }
            Self::Like { term, prefix, prefix_only, exact, negated } => {
                like(term, prefix, *prefix_only, *exact, *negated, zones, containers)
            }
        };
        // NULL rows give NULL: neither true nor false; containers with no value decide nothing.
        Possible {
            can_true: possible.can_true.intersect(&counts.has_values).unwrap_or_default(),
            can_false: possible.can_false.intersect(&counts.has_values).unwrap_or_default(),
        }
    }
}

/// Every container may be true and may be false.
fn unknown(containers: usize) -> Possible<Vec<bool>> {
    Possible { can_true: vec![true; containers], can_false: vec![true; containers] }
}

/// A leaf's result: final, or still to be masked by the containers' null rows.
enum Decided {
    Final(Possible<Vec<bool>>),
    MaskNulls(Possible<Vec<bool>>),
}

/// `x IS [NOT] NULL` from the null and row counts.
fn is_null(counts: &Counts, negated: bool) -> Possible<Vec<bool>> {
    let is_null = Possible { can_true: counts.has_nulls.clone(), can_false: counts.has_values.clone() };
    if negated { is_null.negated() } else { is_null }
}

/// A boolean column used as a predicate: true somewhere unless its max is false, false
/// somewhere unless its min is true.
fn boolean_column(zones: &ZoneMaps, containers: usize) -> Possible<Vec<bool>> {
    let (Some(mins), Some(maxes)) = (zones.mins.as_boolean_opt(), zones.maxes.as_boolean_opt()) else {
        return unknown(containers);
    };
    Possible {
        can_true: (0..containers).map(|i| !maxes.is_valid(i) || maxes.value(i)).collect(),
        can_false: (0..containers).map(|i| !(mins.is_valid(i) && mins.value(i))).collect(),
    }
}

/// `term op literal`, `<=>` included (NULL rows are false there, not NULL).
fn compare(term: &MonotoneTerm, op: CompareOp, literal: &ArrayRef, zones: &ZoneMaps, counts: &Counts) -> Decided {
    let containers = zones.len();
    if is_null_literal(literal) {
        return Decided::Final(match op {
            // `x <=> NULL` is `x IS NULL`.
            CompareOp::NullSafeEq => mask_empty(is_null(counts, false), counts),
            _ => Possible { can_true: vec![false; containers], can_false: vec![false; containers] },
        });
    }
    let result = Bounds::new(term, zones).compare(op, literal);
    if op != CompareOp::NullSafeEq {
        return Decided::MaskNulls(result);
    }
    let result = Possible {
        can_true: result.can_true.iter().zip(&counts.has_values).map(|(a, b)| *a && *b).collect(),
        can_false: result.can_false.iter().zip(&counts.has_nulls).map(|(a, b)| *a || *b).collect(),
    };
    Decided::Final(mask_empty(result, counts))
}

/// `term [NOT] IN (items)`: true where some item can equal, false where every item can
/// differ (a NULL item makes the non-matching rows NULL rather than false).
fn in_list(
    term: &MonotoneTerm,
    items: &[ArrayRef],
    negated: bool,
    zones: &ZoneMaps,
    containers: usize,
) -> Possible<Vec<bool>> {
    let bounds = Bounds::new(term, zones);
    let mut can_true = vec![false; containers];
    let null_item = items.iter().any(is_null_literal);
    let mut can_false = vec![!null_item; containers];
    for item in items.iter().filter(|item| !is_null_literal(item)) {
        let equal = bounds.compare(CompareOp::Eq, item);
        can_true = can_true.unite(&equal.can_true).unwrap_or_default();
        can_false = can_false.intersect(&equal.can_false).unwrap_or_default();
    }
    let result = Possible { can_true, can_false };
    if negated { result.negated() } else { result }
}

/// `term IN (set)`: on a plain column, a container can be true iff some value lies within
/// its bounds (a binary search in the sorted values) and can be false unless all its values
/// equal one list value; on a function of a column, only the list's range is used.
fn in_set(term: &MonotoneTerm, set: &InSet, zones: &ZoneMaps, containers: usize) -> Possible<Vec<bool>> {
    if set.is_empty() {
        // Only NULLs: never true, never false.
        return Possible { can_true: vec![false; containers], can_false: vec![false; containers] };
    }
    if term.is_plain_column()
        && let Some(can_true) = set.any_between(&zones.mins, &zones.maxes)
    {
        let single = |i: usize| {
            zones.mins.is_valid(i)
                && zones.maxes.is_valid(i)
                && zones.mins.slice(i, 1).to_data() == zones.maxes.slice(i, 1).to_data()
        };
        let can_false = (0..containers).map(|i| !(set.has_null() || single(i) && can_true[i])).collect();
        return Possible { can_true, can_false };
    }
    let values = set.values();
    let (lowest, highest) = (values.slice(0, 1), values.slice(values.len() - 1, 1));
    let bounds = Bounds::new(term, zones);
    let in_range = bounds.compare(CompareOp::GtEq, &lowest).and(&bounds.compare(CompareOp::LtEq, &highest));
    Possible {
        can_true: in_range.map_or_else(|_| vec![true; containers], |r| r.can_true),
        can_false: vec![!set.has_null(); containers],
    }
}

/// `term [NOT] LIKE 'prefix%...'`: the range of strings with the prefix.
fn like(
    term: &MonotoneTerm,
    prefix: &str,
    prefix_only: bool,
    exact: bool,
    negated: bool,
    zones: &ZoneMaps,
    containers: usize,
) -> Possible<Vec<bool>> {
    let bounds = Bounds::new(term, zones);
    let literal = |text: &str| -> Option<ArrayRef> {
        cast(&(Arc::new(StringArray::from(vec![text])) as ArrayRef), &term.function.data_type()).ok()
    };
    let result = match (literal(prefix), next_prefix(prefix).and_then(|next| literal(&next))) {
        (Some(low), _) if exact => bounds.compare(CompareOp::Eq, &low),
        (Some(low), high) => {
            let at_least = bounds.compare(CompareOp::GtEq, &low);
            let mut result = match high {
                Some(high) => {
                    at_least.and(&bounds.compare(CompareOp::Lt, &high)).unwrap_or_else(|_| unknown(containers))
                }
                None => at_least,
            };
            if !prefix_only {
                // 'ab%c': a row with the prefix may still fail.
                result.can_false = vec![true; containers];
            }
            result
        }
        _ => unknown(containers),
    };
    if negated { result.negated() } else { result }
}

/// Drops containers without rows.
fn mask_empty(possible: Possible<Vec<bool>>, counts: &Counts) -> Possible<Vec<bool>> {
    Possible {
        can_true: possible.can_true.intersect(&counts.has_rows).unwrap_or_default(),
        can_false: possible.can_false.intersect(&counts.has_rows).unwrap_or_default(),
    }
}

/// What the null and row counts say per container.
struct Counts {
    has_rows: Vec<bool>,
    has_nulls: Vec<bool>,
    has_values: Vec<bool>,
}

impl Counts {
    fn new(zones: &ZoneMaps) -> Self {
        let n = zones.len();
        let rows = |i: usize| zones.row_counts.value(i);
        let nulls = |i: usize| zones.null_counts.is_valid(i).then(|| zones.null_counts.value(i));
        Self {
            has_rows: (0..n).map(|i| rows(i) > 0).collect(),
            has_nulls: (0..n).map(|i| rows(i) > 0 && nulls(i).is_none_or(|c| c > 0)).collect(),
            has_values: (0..n).map(|i| rows(i) > 0 && nulls(i).is_none_or(|c| c < rows(i))).collect(),
        }
    }
}

/// The bounds of a monotone term over each container.
struct Bounds<'a> {
    term: &'a MonotoneTerm,
    /// Lower and upper bounds of the column.
    mins: ArrayRef,
    maxes: ArrayRef,
    /// Containers whose bounds the term cannot use (a decreasing function of a float
    /// column that may hold NaN: NaN maps to NaN, the greatest value, not the least).
    unusable: Vec<bool>,
}

impl<'a> Bounds<'a> {
    fn new(term: &'a MonotoneTerm, zones: &ZoneMaps) -> Self {
        let unusable = if !term.increasing
            && matches!(zones.maxes.data_type(), DataType::Float32 | DataType::Float64 | DataType::Float16)
        {
            match cast(&zones.maxes, &DataType::Float64) {
                Ok(maxes) => maxes.as_primitive::<Float64Type>().iter().map(|v| v.is_none_or(f64::is_nan)).collect(),
                Err(_) => vec![true; zones.len()],
            }
        } else {
            vec![false; zones.len()]
        };
        let unusable = match term.period {
            Some(period) => {
                let within = within_one_period(zones, term.widening.column, period);
                unusable.iter().zip(within).map(|(unusable, within)| *unusable || !within).collect()
            }
            None => unusable,
        };
        Self { term, mins: zones.mins.clone(), maxes: zones.maxes.clone(), unusable }
    }

    /// Per container, whether `f(bound) op literal` holds, where `bound` is the term's lower
    /// (`upper == false`) or upper bound; `None` when unknown.
    fn holds(&self, upper: bool, op: CompareOp, literal: &ArrayRef) -> Vec<Option<bool>> {
        // The function's upper bound is f(max) when it increases, f(min) when it decreases.
        let widening = self.term.widening;
        let (column, column_shift) = match upper == self.term.increasing {
            true => (&self.maxes, widening.column.1),
            false => (&self.mins, widening.column.0),
        };
        let result_shift = if upper { widening.result.1 } else { widening.result.0 };
        let Some(column) = shift_timestamps(column, column_shift) else { return vec![None; self.mins.len()] };
        let compare = |left: BoundExpr| BoundExpr::Compare {
            op,
            left: Box::new(left),
            right: Box::new(BoundExpr::Literal(literal.clone())),
        };
        let test = compare(self.term.function.clone());
        let schema = Arc::new(Schema::new(vec![Field::new("bound", column.data_type().clone(), true)]));
        let run = |values: ArrayRef| -> Option<BooleanArray> {
            let batch = RecordBatch::try_new(schema.clone(), vec![values]).ok()?;
            if result_shift == 0 {
                return evaluate(&test, &batch).ok();
            }
            // The function's bounds, widened, then compared.
            let bounds = shift_timestamps(&evaluate_value(&self.term.function, &batch).ok()?, result_shift)?;
            let data_type = bounds.data_type().clone();
            let batch = RecordBatch::try_new(
                Arc::new(Schema::new(vec![Field::new("bound", data_type.clone(), true)])),
                vec![bounds],
            )
            .ok()?;
            let column = BoundColumn { path: self.term.column.path.clone(), indices: vec![0], data_type };
            evaluate(&compare(BoundExpr::Column(column)), &batch).ok()
        };
        let results: Vec<Option<bool>> = match run(column.clone()) {
            Some(result) => result.iter().collect(),
            // Overflow (or another error) on some bound: retry one container at a time, an
            // error there leaving that bound unknown.
            None => {
                (0..column.len()).map(|i| run(column.slice(i, 1)).and_then(|r| r.iter().next().flatten())).collect()
            }
        };
        results.into_iter().zip(&self.unusable).map(|(r, unusable)| if *unusable { None } else { r }).collect()
    }

    /// `term op literal` for a non-null literal, from the bounds.
    fn compare(&self, op: CompareOp, literal: &ArrayRef) -> Possible<Vec<bool>> {
        use CompareOp::*;
        let definitely = |v: &Option<bool>| *v == Some(true);
        let not_if = |values: Vec<Option<bool>>| -> Vec<bool> { values.iter().map(|v| !definitely(v)).collect() };
        let not_if_both = |a: Vec<Option<bool>>, b: Vec<Option<bool>>| -> Vec<bool> {
            a.iter().zip(&b).map(|(a, b)| !(definitely(a) && definitely(b))).collect()
        };
        let not_if_either = |a: Vec<Option<bool>>, b: Vec<Option<bool>>| -> Vec<bool> {
            a.iter().zip(&b).map(|(a, b)| !(definitely(a) || definitely(b))).collect()
        };
        let (low, high) = (false, true);
        match op {
            Gt => Possible {
                can_true: not_if(self.holds(high, LtEq, literal)),
                can_false: not_if(self.holds(low, Gt, literal)),
            },
            GtEq => Possible {
                can_true: not_if(self.holds(high, Lt, literal)),
                can_false: not_if(self.holds(low, GtEq, literal)),
            },
            Lt => Possible {
                can_true: not_if(self.holds(low, GtEq, literal)),
                can_false: not_if(self.holds(high, Lt, literal)),
            },
            LtEq => Possible {
                can_true: not_if(self.holds(low, Gt, literal)),
                can_false: not_if(self.holds(high, LtEq, literal)),
            },
            Eq | NullSafeEq | NotEq => {
                let equal = Possible {
                    can_true: not_if_either(self.holds(low, Gt, literal), self.holds(high, Lt, literal)),
                    can_false: not_if_both(self.holds(low, GtEq, literal), self.holds(high, LtEq, literal)),
                };
                if op == NotEq { equal.negated() } else { equal }
            }
        }
    }
}

/// Recognises a monotone function of one column, rebinding the column to field 0.
#[recursive::recursive]
fn monotone(expr: &BoundExpr) -> Option<MonotoneTerm> {
    match expr {
        BoundExpr::Column(column) => {
            let rebound =
                BoundColumn { path: column.path.clone(), indices: vec![0], data_type: column.data_type.clone() };
            Some(MonotoneTerm {
                column: column.clone(),
                function: BoundExpr::Column(rebound),
                increasing: true,
                widening: Widening::default(),
                period: None,
            })
        }
        // (Not through TRY_CAST: the values it turns into NULL leave the bounds' order.)
        BoundExpr::Cast { expr: inner, to, session_time_zone, null_on_error: false } => {
            let term = operand(inner)?;
            let from = inner.data_type();
            let (session_time_zone, widening) = match is_monotone_cast(&from, to, session_time_zone) {
                true => (session_time_zone.clone(), term.widening),
                false => (
                    Arc::from("UTC"),
                    Widening { column: wall_clock_shift(&from, to, session_time_zone, &term)?, result: (0, 0) },
                ),
            };
            Some(MonotoneTerm {
                function: BoundExpr::Cast {
                    expr: Box::new(term.function),
                    to: to.clone(),
                    session_time_zone,
                    null_on_error: false,
                },
                widening,
                ..term
            })
        }
        BoundExpr::Negate { expr: inner, text } => {
            let term = operand(inner)?;
            Some(MonotoneTerm {
                function: BoundExpr::Negate { expr: Box::new(term.function), text: text.clone() },
                increasing: !term.increasing,
                column: term.column,
                widening: term.widening,
                period: term.period,
            })
        }
        BoundExpr::Arithmetic { op, left, right, data_type, text } => {
            let rebuild = |left: BoundExpr, right: BoundExpr| BoundExpr::Arithmetic {
                op: *op,
                left: Box::new(left),
                right: Box::new(right),
                data_type: data_type.clone(),
                text: text.clone(),
            };
            match (left.as_ref(), right.as_ref()) {
                (_, BoundExpr::Literal(literal)) => {
                    let term = operand(left)?;
                    let sign = finite_sign(literal)?;
                    let increasing = match op {
                        ArithmeticOp::Add | ArithmeticOp::Subtract => term.increasing,
                        ArithmeticOp::Multiply | ArithmeticOp::Divide if sign != 0 => term.increasing == (sign > 0),
                        _ => return None,
                    };
                    Some(MonotoneTerm {
                        function: rebuild(term.function, BoundExpr::Literal(literal.clone())),
                        increasing,
                        column: term.column,
                        widening: term.widening,
                        period: term.period,
                    })
                }
                (BoundExpr::Literal(literal), _) => {
                    let term = operand(right)?;
                    let sign = finite_sign(literal)?;
                    let increasing = match op {
                        ArithmeticOp::Add => term.increasing,
                        ArithmeticOp::Subtract => !term.increasing,
                        ArithmeticOp::Multiply if sign != 0 => term.increasing == (sign > 0),
                        _ => return None,
                    };
                    Some(MonotoneTerm {
                        function: rebuild(BoundExpr::Literal(literal.clone()), term.function),
                        increasing,
                        column: term.column,
                        widening: term.widening,
                        period: term.period,
                    })
                }
                _ => None,
            }
        }
        BoundExpr::Function { function, args, data_type, session_time_zone, text } => {
            // One argument varies; the others are constants.
            let mut varying = args.iter().enumerate().filter(|(_, arg)| !matches!(arg, BoundExpr::Literal(_)));
            let (position, argument) = varying.next()?;
            if varying.next().is_some() {
                return None;
            }
            let constants: Vec<Option<i64>> = args.iter().map(constant_integer).collect();
            let float_input = matches!(argument.data_type(), DataType::Float16 | DataType::Float32 | DataType::Float64);
            if !function.monotone_with(&constants) {
                return None;
            }
            if let Some(period) = function.monotone_within() {
                return periodic(function, argument, data_type, session_time_zone, text, period);
            }
            let increasing = function.monotone_in(position, float_input)?;
            let term = operand(argument)?;
            let (session_time_zone, widening) = match wall_clock_is_monotone(function, argument, session_time_zone) {
                true => (session_time_zone.clone(), term.widening),
                // date_trunc of instants in a zone whose offset changes: their wall clocks
                // truncated, and each back to an instant by one of the zone's offsets.
                false => {
                    let wall_clock = DataType::Timestamp(TimeUnit::Microsecond, None);
                    let (low, high) = wall_clock_shift(&argument.data_type(), &wall_clock, session_time_zone, &term)?;
                    (Arc::from("UTC"), Widening { column: (low, high), result: (-high, -low) })
                }
            };
            let mut rebuilt = args.clone();
            rebuilt[position] = term.function;
            Some(MonotoneTerm {
                function: BoundExpr::Function {
                    function: function.clone(),
                    args: rebuilt,
                    data_type: data_type.clone(),
                    session_time_zone,
                    text: text.clone(),
                },
                increasing: term.increasing == increasing,
                column: term.column,
                widening,
                period: term.period,
            })
        }
        _ => None,
    }
}

/// Per container, whether the wall clocks of its timestamps (its bounds moved by `shift`;
/// nanoseconds a microsecond further either way, however they round) lie within one
/// `period`.
fn within_one_period(zones: &ZoneMaps, shift: (i64, i64), period: i64) -> Vec<bool> {
    use arrow::datatypes::{Int64Type, TimeUnit::*};
    let micros_per_unit = |data_type: &DataType| match data_type {
        DataType::Timestamp(Second, _) => Some((1_000_000, 1)),
        DataType::Timestamp(Millisecond, _) => Some((1_000, 1)),
        DataType::Timestamp(Microsecond, _) => Some((1, 1)),
        DataType::Timestamp(Nanosecond, _) => Some((1, 1_000)),
        _ => None,
    };
    let values = |bounds: &ArrayRef| cast(bounds, &DataType::Int64).ok();
    let (Some((times, per)), Some(mins), Some(maxes)) =
        (micros_per_unit(zones.mins.data_type()), values(&zones.mins), values(&zones.maxes))
    else {
        return vec![false; zones.len()];
    };
    let (mins, maxes) = (mins.as_primitive::<Int64Type>(), maxes.as_primitive::<Int64Type>());
    (0..zones.len())
        .map(|i| {
            let span = || -> Option<(i64, i64)> {
                let low = mins.is_valid(i).then(|| mins.value(i))?.checked_mul(times)?.div_euclid(per);
                let high = maxes.is_valid(i).then(|| maxes.value(i))?.checked_mul(times)?.div_euclid(per);
                let slack = i64::from(per > 1);
                Some((low.checked_add(shift.0 - slack)?, high.checked_add(shift.1 + slack)?))
            };
            span().is_some_and(|(low, high)| {
                high.checked_sub(low).is_some_and(|length| length < period)
                    && low.rem_euclid(period) <= high.rem_euclid(period)
            })
        })
        .collect()
}

/// `hour`, `minute` or `second` of the column's timestamps: ordered within each `period`
/// of their wall clocks, which are the instants themselves (TIMESTAMP_NTZ) or the instants
/// moved by the zone's offsets.
fn periodic(
    function: &ScalarFunction,
    argument: &BoundExpr,
    data_type: &DataType,
    session_time_zone: &str,
    text: &str,
    period: i64,
) -> Option<MonotoneTerm> {
    let term = monotone(argument)?;
    if !term.is_plain_column() {
        return None;
    }
    let column = match argument.data_type() {
        DataType::Timestamp(_, None) => (0, 0),
        from @ DataType::Timestamp(_, Some(_)) => {
            let wall_clock = DataType::Timestamp(TimeUnit::Microsecond, None);
            wall_clock_shift(&from, &wall_clock, session_time_zone, &term)?
        }
        _ => return None,
    };
    Some(MonotoneTerm {
        function: BoundExpr::Function {
            function: function.clone(),
            args: vec![term.function],
            data_type: data_type.clone(),
            session_time_zone: Arc::from("UTC"),
            text: text.to_string(),
        },
        increasing: true,
        column: term.column,
        widening: Widening { column, result: (0, 0) },
        period: Some(period),
    })
}

/// A monotone term another is built on: not one whose result is widened (a truncation
/// in a zone whose offset changes), which only a comparison may use.
fn operand(expr: &BoundExpr) -> Option<MonotoneTerm> {
    monotone(expr).filter(|term| term.widening.result == (0, 0))
}

/// The [`Widening`] of the column's bounds for a cast between instants and wall clocks
/// in a zone whose offset changes, of the column itself; `None` for any other cast or
/// operand, or an unknown zone.
fn wall_clock_shift(
    from: &DataType,
    to: &DataType,
    session_time_zone: &str,
    term: &MonotoneTerm,
) -> Option<(i64, i64)> {
    use DataType::{Date32, Date64, Timestamp};
    if !term.is_plain_column() {
        return None;
    }
    let (least, greatest) = crate::filter::offset_range_micros(session_time_zone)?;
    match (from, to) {
        // wall clock = instant + offset
        (Timestamp(_, Some(_)), Timestamp(_, None) | Date32 | Date64) => Some((least, greatest)),
        // instant = wall clock - offset
        (Timestamp(_, None), Timestamp(_, Some(_))) => Some((-greatest, -least)),
        _ => None,
    }
}

/// Timestamps of any unit moved by `micros` (whole seconds); a bound moved past the
/// type's range is unknown (NULL). `None` for other types.
fn shift_timestamps(values: &ArrayRef, micros: i64) -> Option<ArrayRef> {
    use arrow::datatypes::{
        ArrowPrimitiveType, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
        TimestampSecondType,
    };
    fn shifted<T: ArrowPrimitiveType<Native = i64>>(values: &ArrayRef, by: Option<i64>) -> ArrayRef {
        let moved = values.as_primitive::<T>().unary_opt::<_, T>(|v| v.checked_add(by?));
        Arc::new(moved.with_data_type(values.data_type().clone()))
    }
    if micros == 0 {
        return Some(values.clone());
    }
    let DataType::Timestamp(unit, _) = values.data_type() else { return None };
    Some(match unit {
        TimeUnit::Second => shifted::<TimestampSecondType>(values, Some(micros / 1_000_000)),
        TimeUnit::Millisecond => shifted::<TimestampMillisecondType>(values, Some(micros / 1_000)),
        TimeUnit::Microsecond => shifted::<TimestampMicrosecondType>(values, Some(micros)),
        TimeUnit::Nanosecond => shifted::<TimestampNanosecondType>(values, micros.checked_mul(1_000)),
    })
}

/// Whether a function of an instant's wall clock keeps order in the session time zone:
/// truncating an instant to a minute or longer goes through the wall clock, which a
/// daylight-saving change (or a zone's change at midnight) moves backwards (such a term
/// is bounded through the zone's offsets instead: [`Widening`]).
fn wall_clock_is_monotone(function: &ScalarFunction, argument: &BoundExpr, session_time_zone: &str) -> bool {
    match function {
        ScalarFunction::DateTrunc(TruncLevel::Microsecond | TruncLevel::Millisecond | TruncLevel::Second) => true,
        ScalarFunction::DateTrunc(_) => {
            !matches!(argument.data_type(), DataType::Timestamp(_, Some(_)))
                || crate::filter::fixed_offset_seconds(session_time_zone).is_some()
        }
        _ => true,
    }
}

/// The value of an integer constant argument (`None` for anything else).
fn constant_integer(arg: &BoundExpr) -> Option<i64> {
    let BoundExpr::Literal(literal) = arg else { return None };
    let value = cast(literal, &DataType::Int64).ok()?;
    let value = value.as_primitive_opt::<arrow::datatypes::Int64Type>()?;
    value.is_valid(0).then(|| value.value(0))
}

/// Why a leaf that compares columns cannot use bounds, naming the first function on its
/// path that does not keep order (`lower`, `%`, `CASE`, ...); `None` when none is to blame.
///
/// ```
/// use arrow::datatypes::{DataType, Field, Schema};
/// use pqsift::filter::{bind, parse_filter, BindOptions};
/// use pqsift::pruning::pruning_predicate::order_breaking_function;
/// let schema = Schema::new(vec![Field::new("city", DataType::Utf8, true)]);
/// let leaf = bind(&parse_filter("lower(city) = 'taipei'").unwrap(), &schema, &BindOptions::default()).unwrap();
/// assert_eq!(order_breaking_function(&leaf).as_deref(), Some("lower"));
/// ```
pub fn order_breaking_function(expr: &BoundExpr) -> Option<String> {
    let mut pending = vec![expr];
    while let Some(next) = pending.pop() {
        let breaks = match next {
            BoundExpr::Function { function, .. } if monotone(next).is_none() && !next.columns().is_empty() => {
                Some(function.name().to_string())
            }
            BoundExpr::Case { .. } if !next.columns().is_empty() => Some("CASE".to_string()),
            BoundExpr::Abs { .. } if !next.columns().is_empty() => Some("abs".to_string()),
            _ => None,
        };
        if breaks.is_some() {
            return breaks;
        }
        match next {
            BoundExpr::Function { args, .. } => pending.extend(args),
            BoundExpr::Compare { left, right, .. } | BoundExpr::Arithmetic { left, right, .. } => {
                pending.extend([left.as_ref(), right.as_ref()])
            }
            BoundExpr::Cast { expr, .. }
            | BoundExpr::Negate { expr, .. }
            | BoundExpr::IsNull { expr, .. }
            | BoundExpr::Like { expr, .. }
            | BoundExpr::InSet { expr, .. } => pending.push(expr),
            BoundExpr::InList { expr, list, .. } => {
                pending.push(expr);
                pending.extend(list);
            }
            _ => {}
        }
    }
    None
}

/// The sign of a finite numeric literal (`None` for NULL, NaN, infinities, non-numbers).
fn finite_sign(literal: &ArrayRef) -> Option<i8> {
    let value = cast(literal, &DataType::Float64).ok()?;
    let value = value.as_primitive_opt::<Float64Type>()?.iter().next().flatten()?;
    if !value.is_finite() {
        return None;
    }
    Some(if value > 0.0 {
        1
    } else if value < 0.0 {
        -1
    } else {
        0
    })
}

/// Casts that never reverse the order of two values (they may merge them: a timestamp
/// cast to a coarser unit truncates, a date64 cast to a date drops the milliseconds).
///
/// Conversions between an instant and a wall clock (TIMESTAMP ↔ TIMESTAMP_NTZ, TIMESTAMP →
/// DATE) go through the session time zone; they preserve order only when its offset is
/// fixed: across a daylight-saving gap the wall clocks 02:30 and 03:00 map to 03:30 and
/// 03:00 of the instant line (bounded through the zone's offsets instead: [`Widening`]).
fn is_monotone_cast(from: &DataType, to: &DataType, session_time_zone: &str) -> bool {
    use DataType::{Date32, Date64, Timestamp};
    let numeric = |t: &DataType| t.is_numeric() || matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..));
    let fixed_zone = || crate::filter::fixed_offset_seconds(session_time_zone).is_some();
    match (from, to) {
        _ if from == to => true,
        (a, b) if numeric(a) && numeric(b) => true,
        (Date32 | Date64, Date32 | Date64) => true,
        // Midnights of later days are later instants and wall clocks in any zone.
        (Date32 | Date64, Timestamp(..)) => true,
        // The same kind of timestamp in another unit.
        (Timestamp(_, a), Timestamp(_, b)) if a.is_some() == b.is_some() => true,
        (Timestamp(_, None), Date32 | Date64) => true,
        // Seconds since the epoch, floored (exact as a DOUBLE), and back, saturating (a
        // DOUBLE truncated toward zero): order kept either way. Not a decimal to an instant,
        // whose microseconds wrap past BIGINT's as Spark's do.
        (Timestamp(_, Some(_)), b) if numeric(b) => true,
        (a, Timestamp(_, Some(_)))
            if numeric(a) && !matches!(a, DataType::Decimal128(..) | DataType::Decimal256(..)) =>
        {
            true
        }
        (Timestamp(..), Timestamp(..) | Date32 | Date64) => fixed_zone(),
        (a, b) if is_string(a) && is_string(b) => true,
        // Bytes compared as bytes whatever the container.
        (a, b) if is_binary(a) && is_binary(b) => true,
        // Dictionary values cast as the values do.
        (DataType::Dictionary(_, values), b) => is_monotone_cast(values, b, session_time_zone),
        _ => false,
    }
}

fn is_string(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn is_binary(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_))
}

/// The literal prefix of a LIKE pattern (`\` escapes): `(prefix, prefix_only, exact)` where
/// `prefix_only` means the pattern is `prefix%` and `exact` that it has no wildcard.
///
/// ```
/// use pqsift::pruning::pruning_predicate::parse_like_prefix;
/// assert_eq!(parse_like_prefix("ab%"), Some(("ab".to_string(), true, false)));
/// assert_eq!(parse_like_prefix("a\\%b"), Some(("a%b".to_string(), false, true)));
/// assert_eq!(parse_like_prefix("a_c%"), Some(("a".to_string(), false, false)));
/// assert_eq!(parse_like_prefix("%a"), None);
/// ```
pub fn parse_like_prefix(pattern: &str) -> Option<(String, bool, bool)> {
    let mut prefix = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => prefix.push(chars.next()?),
            '%' | '_' => {
                let rest: String = std::iter::once(c).chain(chars).collect();
                if prefix.is_empty() {
                    return None;
                }
                return Some((prefix, rest == "%", false));
            }
            other => prefix.push(other),
        }
    }
    Some((prefix, false, true))
}

/// The least string greater than every string starting with `prefix` (its last character
/// incremented, dropping maximal characters); `None` when there is none.
pub(crate) fn next_prefix(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let mut code = u32::from(last) + 1;
        if (0xD800..0xE000).contains(&code) {
            code = 0xE000;
        }
        if let Some(next) = char::from_u32(code) {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// Whether a one-element literal is NULL (of any type, `NullArray` included).
pub(crate) fn is_null_literal(literal: &ArrayRef) -> bool {
    literal.data_type() == &DataType::Null || literal.is_empty() || literal.is_null(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::filter::{BindOptions, bind, parse_filter};
    use arrow::datatypes::TimeUnit;

    fn leaf(text: &str, field: Field, session_time_zone: &str) -> LeafPredicate {
        let schema = Schema::new(vec![field]);
        let options = BindOptions { session_time_zone: session_time_zone.to_string(), ..BindOptions::default() };
        LeafPredicate::analyse(&bind(&parse_filter(text).unwrap(), &schema, &options).unwrap())
    }

    #[test]
    fn casts_of_other_units_and_containers_are_monotone() {
        let nanos =
            |tz: Option<&str>| Field::new("t", DataType::Timestamp(TimeUnit::Nanosecond, tz.map(Into::into)), true);
        let instant = "t < TIMESTAMP '2024-01-01 01:00:00'";
        assert!(matches!(leaf(instant, nanos(Some("UTC")), "UTC"), LeafPredicate::Compare { .. }));
        assert!(matches!(leaf(instant, nanos(None), "+02:00"), LeafPredicate::Compare { .. }));
        // A wall clock read as an instant in a zone with daylight saving (and the reverse):
        // not monotone, bounded through the zone's offsets.
        assert!(matches!(leaf(instant, nanos(None), "America/Los_Angeles"), LeafPredicate::Compare { .. }));
        assert!(matches!(
            leaf("CAST(t AS DATE) = DATE '2024-01-01'", nanos(Some("UTC")), "Europe/Paris"),
            LeafPredicate::Compare { .. }
        ));
        // Not twice: the bounds moved are the column's.
        assert!(matches!(
            leaf(
                "CAST(CAST(t AS TIMESTAMP_NTZ) AS TIMESTAMP) = TIMESTAMP '2024-01-01 00:00:00'",
                nanos(Some("UTC")),
                "Europe/Paris"
            ),
            LeafPredicate::Unknown
        ));
        // Nor a truncation's widened result inside another function.
        assert!(matches!(
            leaf("CAST(date_trunc('HOUR', t) AS DATE) = DATE '2024-01-01'", nanos(Some("UTC")), "Europe/Paris"),
            LeafPredicate::Unknown
        ));
        assert!(matches!(
            leaf("d < DATE '2020-02-01'", Field::new("d", DataType::Date64, true), "UTC"),
            LeafPredicate::Compare { .. }
        ));
        assert!(matches!(
            leaf("b < X'0100'", Field::new("b", DataType::FixedSizeBinary(2), true), "UTC"),
            LeafPredicate::Compare { .. }
        ));
        let dictionary = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::LargeBinary));
        assert!(matches!(leaf("b = X'0100'", Field::new("b", dictionary, true), "UTC"), LeafPredicate::Compare { .. }));
    }

    /// Zone maps of four containers of a UTC timestamp column, ten rows each, none NULL,
    /// from their least and greatest instants (RFC 3339).
    fn utc_zones(mins: [&str; 4], maxes: [&str; 4]) -> ZoneMaps {
        let timestamps = |texts: [&str; 4]| -> ArrayRef {
            let micros = texts.map(|text| chrono::DateTime::parse_from_rfc3339(text).unwrap().timestamp_micros());
            Arc::new(arrow::array::TimestampMicrosecondArray::from(micros.to_vec()).with_timezone("UTC"))
        };
        ZoneMaps {
            mins: timestamps(mins),
            maxes: timestamps(maxes),
            min_exact: BooleanArray::from(vec![true; 4]),
            max_exact: BooleanArray::from(vec![true; 4]),
            null_counts: arrow::array::UInt64Array::from(vec![0; 4]),
            row_counts: arrow::array::UInt64Array::from(vec![10; 4]),
        }
    }

    /// Bounds through New York's offsets (-05:00 to -04:00 since 1883) are an hour wide:
    /// of four containers each holding one New York day, a date reads its own and the next,
    /// whose first hour could be that date had the clocks been an hour later.
    #[test]
    fn dates_in_a_zone_with_daylight_saving_prune_to_the_hour() {
        let zones = utc_zones(
            ["2024-03-09T05:00:00Z", "2024-03-10T05:00:00Z", "2024-03-11T04:00:00Z", "2024-03-12T04:00:00Z"],
            ["2024-03-10T04:59:59Z", "2024-03-11T03:59:59Z", "2024-03-12T03:59:59Z", "2024-03-13T03:59:59Z"],
        );
        let field = Field::new("t", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), true);
        let possible = |text: &str| leaf(text, field.clone(), "America/New_York").evaluate(Some(&zones), 4).can_true;
        // The second container is 2024-03-10 in New York, the day of the spring change.
        assert_eq!(possible("CAST(t AS DATE) = DATE '2024-03-11'"), [false, false, true, true]);
        assert_eq!(possible("to_date(t) >= DATE '2024-03-12'"), [false, false, false, true]);
        assert_eq!(possible("year(t) = 2023"), [false, false, false, false]);
        assert_eq!(possible("date_trunc('DAY', t) = TIMESTAMP '2024-03-11 00:00:00'"), [false, false, true, true]);
    }

    /// `hour` of a sorted time column: containers of two hours each within a day keep
    /// only the one holding 03:00; one that crosses midnight decides nothing.
    #[test]
    fn hours_prune_containers_within_a_day() {
        let zones = utc_zones(
            ["2024-03-12T00:00:00Z", "2024-03-12T02:00:00Z", "2024-03-12T04:00:00Z", "2024-03-12T23:00:00Z"],
            ["2024-03-12T01:59:59Z", "2024-03-12T03:59:59Z", "2024-03-12T05:59:59Z", "2024-03-13T00:59:59Z"],
        );
        let field = Field::new("t", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), true);
        let possible = |text: &str, zone: &str| leaf(text, field.clone(), zone).evaluate(Some(&zones), 4).can_true;
        assert_eq!(possible("hour(t) = 3", "UTC"), [false, true, false, true]);
        assert_eq!(possible("hour(t) > 8", "UTC"), [false, false, false, true]);
        // In New York, through its offsets (-05:00 to -04:00): the second container's wall
        // clocks lie within 21:00-23:59, the third's cross midnight, the last's 18:00-20:59.
        assert_eq!(possible("hour(t) = 22", "America/New_York"), [false, true, true, false]);
        assert_eq!(possible("minute(t) = 30", "UTC"), [true, true, true, true]);
        // Bounds a whole range apart (their distance past BIGINT) decide nothing.
        let mut far = zones.clone();
        far.mins = Arc::new(arrow::array::TimestampMicrosecondArray::from(vec![i64::MIN + 1; 4]).with_timezone("UTC"));
        far.maxes = Arc::new(arrow::array::TimestampMicrosecondArray::from(vec![i64::MAX - 1; 4]).with_timezone("UTC"));
        assert_eq!(leaf("hour(t) = 3", field.clone(), "UTC").evaluate(Some(&far), 4).can_true, [true; 4]);
    }

    #[test]
    fn next_prefix_increments_the_last_character() {
        assert_eq!(next_prefix("abc").as_deref(), Some("abd"));
        assert_eq!(next_prefix("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(next_prefix("\u{10FFFF}"), None);
        assert_eq!(next_prefix("a\u{D7FF}").as_deref(), Some("a\u{E000}"));
    }
}
