//! Literal guarantees: "every row the filter accepts has `column` ∈ {values}"
//! (DataFusion's `LiteralGuarantee`). They come from `column = literal`,
//! `column <=> literal`, `column IN (...)` found on AND paths, and from an OR whose both
//! sides guarantee something on the same column (the union). This is also where conjuncts
//! on one column are **normalised**: `a IN (1,2,3) AND a IN (2,3,4)` intersects to
//! `a ∈ {2, 3}`, and `a = 1 AND a = 2` to the empty set, which matches nothing (the
//! statistics stage skips every row group for it). Bloom filters are probed with them.
//!
//! ```
//! use arrow::datatypes::{DataType, Field, Schema};
//! use pqsift::pruning::guarantees::literal_guarantees;
//! use pqsift::filter::{bind, parse_filter, BindOptions};
//!
//! let schema = Schema::new(vec![Field::new("a", DataType::Int64, true), Field::new("b", DataType::Utf8, true)]);
//! let filter = bind(
//!     &parse_filter("a IN (1, 2, 3) AND a IN (2, 3, 4) AND (b = 'x' OR b = 'y') AND a > 0").unwrap(),
//!     &schema,
//!     &BindOptions::default(),
//! ).unwrap();
//! let guarantees = literal_guarantees(&filter);
//! assert_eq!(guarantees.len(), 2);
//! assert_eq!(guarantees[0].values.len(), 2); // a ∈ {2, 3}
//! assert_eq!(guarantees[1].values.len(), 2); // b ∈ {'x', 'y'}
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::compute::kernels::cast::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, Float32Type, Float64Type};

use crate::filter::in_set::InSet;
use crate::filter::{BoundColumn, BoundExpr, CompareOp, is_order_preserving_widening};
use crate::pruning::pruning_predicate::is_null_literal;

/// Every row the filter accepts has `column` equal to one of `values`.
#[derive(Debug, Clone)]
pub struct LiteralGuarantee {
    /// The column.
    pub column: BoundColumn,
    /// The candidate values, one-element arrays of the column's type, distinct (shared:
    /// a long IN list's are its set's, not copied per file and stage).
    pub values: Arc<[ArrayRef]>,
}

/// The literal guarantees of a bound filter, one per column, in column order.
pub fn literal_guarantees(filter: &BoundExpr) -> Vec<LiteralGuarantee> {
    derive(filter).into_values().collect()
}

type Guarantees = BTreeMap<String, LiteralGuarantee>;

#[recursive::recursive]
fn derive(expr: &BoundExpr) -> Guarantees {
    let mut out = Guarantees::new();
    match expr {
        BoundExpr::Compare { op: CompareOp::Eq | CompareOp::NullSafeEq, left, right } => {
            let preimage = match (left.as_ref(), right.as_ref()) {
                (BoundExpr::Literal(l), value) | (value, BoundExpr::Literal(l)) if !is_null_literal(l) => {
                    preimage(value, l)
                }
                _ => Preimage::Unknown,
            };
            if let Preimage::Value(column, literal) = preimage
                && usable(&literal)
            {
                out.insert(key(column), LiteralGuarantee { column: column.clone(), values: vec![literal].into() });
            }
        }
        BoundExpr::InList { expr, list, negated: false } => {
            let literals: Option<Vec<&ArrayRef>> =
                list.iter().map(|item| if let BoundExpr::Literal(v) = item { Some(v) } else { None }).collect();
            if let Some(literals) = literals {
                insert_list_guarantee(&mut out, expr, literals);
            }
        }
        BoundExpr::InSet { expr, set, negated: false } => {
            let Some(column) = peel_injective_casts(expr) else { return out };
            let value_type = match &column.data_type {
                DataType::Dictionary(_, values) => values.as_ref(),
                other => other,
            };
            let floats = matches!(value_type, DataType::Float16 | DataType::Float32 | DataType::Float64);
            if set.values().data_type() == value_type && !floats {
                // Already the column's values, distinct, none NULL: nothing to convert.
                out.insert(key(column), LiteralGuarantee { column: column.clone(), values: set.shared_value_items() });
            } else {
                insert_list_guarantee(&mut out, expr, set.value_items().iter().collect());
            }
        }
        BoundExpr::And(left, right) => {
            out = derive(left);
            for (name, guarantee) in derive(right) {
                match out.get_mut(&name) {
                    Some(existing) => {
                        existing.values = intersection(existing.values.to_vec(), &guarantee.values).into()
                    }
                    None => {
                        out.insert(name, guarantee);
                    }
                }
            }
        }
        BoundExpr::Or(left, right) => {
            let (left, right) = (derive(left), derive(right));
            for (name, mut guarantee) in left {
                if let Some(other) = right.get(&name) {
                    let values = guarantee.values.iter().chain(other.values.iter()).cloned().collect();
                    guarantee.values = distinct(values).into();
                    out.insert(name, guarantee);
                }
            }
        }
        _ => {}
    }
    out
}

/// The guarantee of `value IN (literals)`: the literals brought to the stored column's
/// values (none when some cannot be, or the value is not a stored column).
fn insert_list_guarantee(out: &mut Guarantees, value: &BoundExpr, literals: Vec<&ArrayRef>) {
    let Some(column) = peel_injective_casts(value) else { return };
    let mut values: Vec<ArrayRef> = Vec::with_capacity(literals.len());
    for literal in literals {
        if is_null_literal(literal) {
            continue; // `x IN (1, NULL)` is true only where x = 1.
        }
        let literal = match preimage(value, literal) {
            Preimage::Value(_, literal) => literal,
            // A candidate the column's values cannot take matches no row.
            Preimage::Impossible => continue,
            Preimage::Unknown => return,
        };
        if !usable(&literal) {
            return;
        }
        values.push(literal);
    }
    out.insert(key(column), LiteralGuarantee { column: column.clone(), values: distinct(values).into() });
}

/// What `value = literal` says about a stored column.
enum Preimage<'a> {
    /// Rows matching it have `column` equal to this value of the column's value type.
    Value(&'a BoundColumn, ArrayRef),
    /// No value of the column maps to the literal: no row matches.
    Impossible,
    /// Not an equality on a stored column pruning can use.
    Unknown,
}

/// `value = literal` as an equality on a stored column: the column under casts that map
/// distinct values to distinct values (dictionary to its values, widening integers,
/// string and binary containers, fixed-size to variable binary), with the literal brought
/// back to the column's value type.
fn preimage<'a>(value: &'a BoundExpr, literal: &ArrayRef) -> Preimage<'a> {
    let Some(column) = peel_injective_casts(value) else { return Preimage::Unknown };
    let value_type = match &column.data_type {
        DataType::Dictionary(_, values) => values.as_ref(),
        other => other,
    };
    if literal.data_type() == value_type {
        return Preimage::Value(column, literal.clone());
    }
    // Lenient casts: a value out of the narrower type's range becomes null.
    let lenient = CastOptions::default();
    let (Ok(narrowed), true) = (cast_with_options(literal, value_type, &lenient), literal.null_count() == 0) else {
        return Preimage::Unknown;
    };
    match cast_with_options(&narrowed, literal.data_type(), &lenient) {
        Ok(back) if narrowed.null_count() == 0 && back.to_data() == literal.to_data() => {
            Preimage::Value(column, narrowed)
        }
        Ok(_) => Preimage::Impossible,
        Err(_) => Preimage::Unknown,
    }
}

/// The column under a chain of injective casts, `None` for anything else.
#[recursive::recursive]
fn peel_injective_casts(value: &BoundExpr) -> Option<&BoundColumn> {
    match value {
        BoundExpr::Column(column) => Some(column),
        BoundExpr::Cast { expr, to, .. } => {
            let from = expr.data_type();
            let from = match &from {
                DataType::Dictionary(_, values) => values.as_ref(),
                other => other,
            };
            let injective = is_order_preserving_widening(from, to)
                || matches!((from, to), (DataType::FixedSizeBinary(_), DataType::Binary | DataType::LargeBinary));
            if injective { peel_injective_casts(expr) } else { None }
        }
        _ => None,
    }
}

fn key(column: &BoundColumn) -> String {
    column.path.to_string()
}

/// Literals whose equality is their bit pattern (not floats 0.0 / NaN).
pub(crate) fn usable(literal: &ArrayRef) -> bool {
    match literal.data_type() {
        DataType::Float32 => {
            let v = literal.as_primitive::<Float32Type>().value(0);
            !(v.is_nan() || v == 0.0)
        }
        DataType::Float64 => {
            let v = literal.as_primitive::<Float64Type>().value(0);
            !(v.is_nan() || v == 0.0)
        }
        DataType::Float16 => false,
        _ => true,
    }
}

fn same(a: &ArrayRef, b: &ArrayRef) -> bool {
    a.to_data() == b.to_data()
}

/// Lists longer than this are handled as sets (sorting), shorter ones pairwise.
pub(crate) const SHORT_LIST: usize = 8;

/// `values` without repeats (one-element arrays of one type).
fn distinct(values: Vec<ArrayRef>) -> Vec<ArrayRef> {
    if values.len() <= SHORT_LIST {
        let mut kept: Vec<ArrayRef> = Vec::with_capacity(values.len());
        for value in values {
            if !kept.iter().any(|v| same(v, &value)) {
                kept.push(value);
            }
        }
        return kept;
    }
    // Shared: planning derives the guarantees of one bound filter once per file and stage.
    match InSet::shared(&values) {
        Ok(set) => set.value_items().to_vec(),
        Err(_) => values,
    }
}

/// The values of `left` that are in `right`.
fn intersection(left: Vec<ArrayRef>, right: &[ArrayRef]) -> Vec<ArrayRef> {
    if left.len() <= SHORT_LIST && right.len() <= SHORT_LIST {
        return left.into_iter().filter(|v| right.iter().any(|w| same(v, w))).collect();
    }
    let Ok(set) = InSet::new(right) else { return left };
    let refs: Vec<&dyn Array> = left.iter().map(|v| v.as_ref()).collect();
    let Ok(all) = arrow::compute::concat(&refs) else { return left };
    let Ok(found) = set.contains(&all) else { return left };
    left.into_iter().zip(found.iter()).filter(|(_, found)| *found == Some(true)).map(|(v, _)| v).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{BindOptions, bind, parse_filter};
    use arrow::datatypes::{Field, Schema};

    fn guarantees(text: &str, data_type: DataType) -> Vec<LiteralGuarantee> {
        let schema = Schema::new(vec![Field::new("c", data_type, true)]);
        literal_guarantees(&bind(&parse_filter(text).unwrap(), &schema, &BindOptions::default()).unwrap())
    }

    #[test]
    fn guarantees_see_through_casts_that_keep_values_distinct() {
        let dictionary = |values: DataType| DataType::Dictionary(Box::new(DataType::Int32), Box::new(values));
        // Dictionary columns are compared through a cast to their values.
        let found = guarantees("c = 'x'", dictionary(DataType::LargeUtf8));
        assert_eq!(found[0].values[0].data_type(), &DataType::LargeUtf8);
        let found = guarantees("c IN (1, 3000000000)", dictionary(DataType::UInt32));
        assert_eq!(found[0].values.len(), 2);
        assert_eq!(found[0].values[1].data_type(), &DataType::UInt32);
        // A value out of the column's range or width equals no row: dropped from the set.
        let found = guarantees("c IN (1, 3000000000)", dictionary(DataType::Int32));
        assert_eq!(found[0].values.len(), 1);
        let found = guarantees("c IN (X'0102', X'01')", DataType::FixedSizeBinary(2));
        assert_eq!(found[0].values.len(), 1);
        assert_eq!(found[0].values[0].data_type(), &DataType::FixedSizeBinary(2));
        // Truncating casts give no guarantee: many nanosecond values share a microsecond.
        let nanos = DataType::Timestamp(arrow::datatypes::TimeUnit::Nanosecond, Some("UTC".into()));
        assert!(guarantees("c = TIMESTAMP '2024-01-01 00:00:00'", nanos).is_empty());
    }
}
