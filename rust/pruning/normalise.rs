//! Normalisation of a filter's conjuncts per column (StarRocks'
//! `ColumnValueRange`): the comparisons of a plain column with a literal found among the
//! top-level AND conjuncts merge into one range per column (`=` is the degenerate range
//! `[v, v]`), and equality / IN-list value sets (see
//! [`literal_guarantees`](crate::pruning::guarantees::literal_guarantees)) are cut to that range.
//!
//! An empty range (`a > 5 AND a < 3`) or an empty value set (`a IN (1, 2) AND a > 7`)
//! means the filter matches no row: the statistics stage then skips every row group.
//! Literals compare with the filter evaluator, so Spark's order holds (NaN greatest,
//! -0.0 = 0.0).
//!
//! ```
//! use arrow::datatypes::{DataType, Field, Schema};
//! use pqsift::filter::{bind, parse_filter, BindOptions};
//! use pqsift::pruning::normalise::{column_ranges, contradiction};
//! let schema = Schema::new(vec![Field::new("a", DataType::Int32, true)]);
//! let bound = |text| bind(&parse_filter(text).unwrap(), &schema, &BindOptions::default()).unwrap();
//! assert_eq!(column_ranges(&bound("a > 5 AND a <= 9 AND a >= 7")).len(), 1);
//! assert!(contradiction(&bound("a > 5 AND a < 3")).is_some());
//! assert!(contradiction(&bound("a = 5 AND a >= 5")).is_none());
//! assert!(contradiction(&bound("a IN (1, 2) AND a > 7")).is_some());
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::Schema;

use crate::filter::{BoundColumn, BoundExpr, CompareOp, evaluate};
use crate::pruning::guarantees::literal_guarantees;
use crate::pruning::pruning_predicate::{LeafPredicate, is_null_literal};

/// A bound: the literal and whether it is included.
pub type Bound = (ArrayRef, bool);

/// The values a column may take according to the AND-ed comparisons on it.
#[derive(Debug, Clone)]
pub struct ColumnRange {
    /// The column.
    pub column: BoundColumn,
    /// Greatest lower bound found, if any.
    pub lower: Option<Bound>,
    /// Least upper bound found, if any.
    pub upper: Option<Bound>,
}

impl ColumnRange {
    /// Whether `value` lies inside the range (`None`: cannot tell).
    pub fn contains(&self, value: &ArrayRef) -> Option<bool> {
        let above = match &self.lower {
            Some((low, inclusive)) => compare(if *inclusive { CompareOp::GtEq } else { CompareOp::Gt }, value, low)?,
            None => true,
        };
        let below = match &self.upper {
            Some((high, inclusive)) => compare(if *inclusive { CompareOp::LtEq } else { CompareOp::Lt }, value, high)?,
            None => true,
        };
        Some(above && below)
    }

    /// [`ColumnRange::contains`] for each of `values` (one-element arrays of one type), in
    /// one evaluation per bound rather than one per value.
    pub fn contains_each(&self, values: &[ArrayRef]) -> Vec<Option<bool>> {
        let refs: Vec<&dyn Array> = values.iter().map(|v| v.as_ref()).collect();
        let Ok(all) = arrow::compute::concat(&refs) else { return values.iter().map(|v| self.contains(v)).collect() };
        let side =
            |bound: &Option<Bound>, inclusive_op: CompareOp, exclusive_op: CompareOp| -> Option<Vec<Option<bool>>> {
                match bound {
                    Some((limit, inclusive)) => {
                        compare_each(if *inclusive { inclusive_op } else { exclusive_op }, &all, limit)
                    }
                    None => Some(vec![Some(true); all.len()]),
                }
            };
        match (side(&self.lower, CompareOp::GtEq, CompareOp::Gt), side(&self.upper, CompareOp::LtEq, CompareOp::Lt)) {
            (Some(above), Some(below)) => above
                .into_iter()
                .zip(below)
                .map(|(a, b)| match (a, b) {
                    (Some(a), Some(b)) => Some(a && b),
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    _ => None,
                })
                .collect(),
            _ => vec![None; values.len()],
        }
    }

    /// Whether no value fits (`None`: cannot tell).
    pub fn is_empty(&self) -> Option<bool> {
        let (Some((low, low_inclusive)), Some((high, high_inclusive))) = (&self.lower, &self.upper) else {
            return Some(false);
        };
        let op = if *low_inclusive && *high_inclusive { CompareOp::Gt } else { CompareOp::GtEq };
        compare(op, low, high)
    }
}

/// `left op right` on two one-element literals, Spark semantics; `None` when unknown.
fn compare(op: CompareOp, left: &ArrayRef, right: &ArrayRef) -> Option<bool> {
    let test = BoundExpr::Compare {
        op,
        left: Box::new(BoundExpr::Literal(left.clone())),
        right: Box::new(BoundExpr::Literal(right.clone())),
    };
    let batch = RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )
    .ok()?;
    let result = evaluate(&test, &batch).ok()?;
    result.iter().next().flatten()
}

/// `values op literal` per value, Spark semantics; `None` when the comparison fails.
fn compare_each(op: CompareOp, values: &ArrayRef, literal: &ArrayRef) -> Option<Vec<Option<bool>>> {
    let test = BoundExpr::Compare {
        op,
        left: Box::new(BoundExpr::Column(BoundColumn {
            path: crate::filter::ColumnPath::new(["value"]),
            indices: vec![0],
            data_type: values.data_type().clone(),
        })),
        right: Box::new(BoundExpr::Literal(literal.clone())),
    };
    let schema = Arc::new(Schema::new(vec![arrow::datatypes::Field::new("value", values.data_type().clone(), true)]));
    let batch = RecordBatch::try_new(schema, vec![Arc::clone(values)]).ok()?;
    Some(evaluate(&test, &batch).ok()?.iter().collect())
}

/// The per-column ranges of the filter's top-level conjuncts (plain column vs non-null
/// literal comparisons only).
pub fn column_ranges(filter: &BoundExpr) -> Vec<ColumnRange> {
    let mut ranges: BTreeMap<String, ColumnRange> = BTreeMap::new();
    let mut pending = vec![filter];
    while let Some(next) = pending.pop() {
        if let BoundExpr::And(left, right) = next {
            pending.push(right);
            pending.push(left);
            continue;
        }
        let LeafPredicate::Compare { term, op, literal } = LeafPredicate::analyse(next) else {
            continue;
        };
        if !term.is_plain_column() || is_null_literal(&literal) {
            continue;
        }
        let (lower, upper): (Option<Bound>, Option<Bound>) = match op {
            CompareOp::Gt => (Some((literal, false)), None),
            CompareOp::GtEq => (Some((literal, true)), None),
            CompareOp::Lt => (None, Some((literal, false))),
            CompareOp::LtEq => (None, Some((literal, true))),
            CompareOp::Eq | CompareOp::NullSafeEq => (Some((literal.clone(), true)), Some((literal, true))),
            CompareOp::NotEq => continue,
        };
        let range = ranges.entry(term.column.path.to_string()).or_insert_with(|| ColumnRange {
            column: term.column.clone(),
            lower: None,
            upper: None,
        });
        if let Some(new) = lower {
            range.lower = Some(match range.lower.take() {
                // Keep the greater bound; on a tie the exclusive one.
                Some(old) => match compare(CompareOp::Gt, &new.0, &old.0) {
                    Some(true) => new,
                    Some(false) if compare(CompareOp::Eq, &new.0, &old.0) == Some(true) => (old.0, old.1 && new.1),
                    _ => old,
                },
                None => new,
            });
        }
        if let Some(new) = upper {
            range.upper = Some(match range.upper.take() {
                Some(old) => match compare(CompareOp::Lt, &new.0, &old.0) {
                    Some(true) => new,
                    Some(false) if compare(CompareOp::Eq, &new.0, &old.0) == Some(true) => (old.0, old.1 && new.1),
                    _ => old,
                },
                None => new,
            });
        }
    }
    ranges.into_values().collect()
}

/// Why the filter can match no row, if normalisation shows it: an empty range or an empty
/// value set on some column.
pub fn contradiction(filter: &BoundExpr) -> Option<String> {
    let ranges = column_ranges(filter);
    for range in &ranges {
        if range.is_empty() == Some(true) {
            return Some(format!("the filter's bounds on {} leave no value", range.column.path.parts().join(".")));
        }
    }
    for guarantee in literal_guarantees(filter) {
        let name = guarantee.column.path.parts().join(".");
        let range = ranges.iter().find(|r| r.column.path == guarantee.column.path);
        let inside = match range {
            Some(range) => range.contains_each(&guarantee.values).into_iter().filter(|v| *v != Some(false)).count(),
            None => guarantee.values.len(),
        };
        if inside == 0 {
            return Some(format!("the filter's equalities, IN lists and bounds on {name} have no value in common"));
        }
    }
    None
}
