//! Pruning whole files before their footers are read (partition pruning, the first step of
//! DataFusion's `ParquetOpener`), and the filter each surviving file is read with.
//!
//! **Pruning.** The filter, bound to the table schema, is evaluated with the same
//! three-valued logic as zone maps ([`crate::pruning::pruning_predicate`]), with files as the
//! containers: a partition column's value is both bounds of its file, every other column
//! is unknown. So `day = X AND amount > 9` skips the other days' files, while a conjunct
//! mixing both sides (`day = X OR amount > 9`) decides nothing here; it is used again,
//! specialised to each file, on the file's statistics.
//!
//! **Specialisation.** For reading and for row-group pruning, each file's filter has its
//! partition columns replaced by that file's values (typed literals), and top-level
//! conjuncts left without columns are folded: true ones dropped, a false or NULL one makes
//! the whole filter `FALSE`.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::Int32Array;
//! use arrow::datatypes::{DataType, Field, Schema};
//! use pqsift::filter::{parse_filter, BindOptions};
//! use pqsift::table::file_pruning::{prune_files, specialise};
//! use pqsift::table::partition_values::PartitionValues;
//! use pqsift::table::source::merge_schemas;
//! let partitions = PartitionValues::new(
//!     Arc::new(Schema::new(vec![Field::new("p", DataType::Int32, true)])),
//!     vec![Arc::new(Int32Array::from(vec![1, 2]))],
//! ).unwrap();
//! let data = Schema::new(vec![Field::new("x", DataType::Int64, true)]);
//! let (table, from_partition) = merge_schemas(&data, &partitions.schema, false);
//! let filter = parse_filter("p = 2 AND x > 5").unwrap();
//! let options = BindOptions::default();
//! assert_eq!(prune_files(&filter, &table, &from_partition, &partitions, &options).unwrap(), [false, true]);
//! let on_second = specialise(&filter, &table, &from_partition, &partitions, 1, &options).unwrap();
//! assert_eq!(on_second.unwrap().to_string(), "`x` > 5");
//! ```

use std::sync::Arc;

use arrow::array::{Array, RecordBatch, RecordBatchOptions};
use arrow::datatypes::Schema;

use super::partition_values::PartitionValues;
use crate::error::Result;
use crate::filter::{
    BindOptions, BoundColumn, Expr, Literal, bind, columns, evaluate, resolve_column, split_conjunction,
};
use crate::pruning::pruning_predicate::evaluate_on_zone_maps;

/// Per file, whether `filter` can be true on it judging by its partition values alone.
pub fn prune_files(
    filter: &Expr,
    table_schema: &Schema,
    from_partition: &[Option<usize>],
    partitions: &PartitionValues,
    options: &BindOptions,
) -> Result<Vec<bool>> {
    let bound = bind(filter, table_schema, options)?;
    let source = |column: &BoundColumn| -> Result<Option<crate::pruning::zone_map::ZoneMaps>> {
        Ok(match (column.indices.as_slice(), column.data_type.is_null()) {
            ([index], false) => from_partition.get(*index).copied().flatten().map(|k| partitions.zone_maps(k)),
            _ => None,
        })
    };
    Ok(evaluate_on_zone_maps(&bound, partitions.len(), &source)?.can_true)
}

/// `filter` for the rows of file `row`: partition columns replaced by the file's values,
/// constant top-level conjuncts folded. `None`: no filter is left (every row matches);
/// `Some(FALSE)`: no row can.
pub fn specialise(
    filter: &Expr,
    table_schema: &Schema,
    from_partition: &[Option<usize>],
    partitions: &PartitionValues,
    row: usize,
    options: &BindOptions,
) -> Result<Option<Expr>> {
    let replaced = replace_columns(filter, &mut |expr| {
        let Expr::Column(path) = expr else { return Ok(None) };
        let column = resolve_column(table_schema, path, options)?;
        Ok(match column.indices.as_slice() {
            // A value no literal holds leaves the column: binding it to the file fails then,
            // rather than the filter seeing a wrong constant.
            [index] => from_partition.get(*index).copied().flatten().and_then(|k| partitions.literal(k, row)),
            _ => None,
        })
    })?;
    let mut kept: Vec<Expr> = Vec::new();
    for conjunct in split_conjunction(&replaced) {
        if !columns(conjunct).is_empty() {
            kept.push(conjunct.clone());
            continue;
        }
        if !is_true(conjunct, options)? {
            return Ok(Some(Expr::Literal(Literal::Boolean(false))));
        }
    }
    Ok(kept.into_iter().reduce(|left, right| Expr::And(Box::new(left), Box::new(right))))
}

/// Whether a filter without columns is TRUE (not FALSE, not NULL).
fn is_true(constant: &Expr, options: &BindOptions) -> Result<bool> {
    let empty = Arc::new(Schema::empty());
    let bound = bind(constant, &empty, options)?;
    let one_row = RecordBatch::try_new_with_options(empty, vec![], &RecordBatchOptions::new().with_row_count(Some(1)))?;
    let result = evaluate(&bound, &one_row)?;
    Ok(result.len() == 1 && result.is_valid(0) && result.value(0))
}

/// `expr` with every node `f` returns a replacement for replaced (children are not visited
/// then); other nodes rebuilt from their replaced children.
#[recursive::recursive]
pub fn replace_columns(expr: &Expr, f: &mut dyn FnMut(&Expr) -> Result<Option<Expr>>) -> Result<Expr> {
    if let Some(replacement) = f(expr)? {
        return Ok(replacement);
    }
    let mut go = |e: &Expr| -> Result<Box<Expr>> { Ok(Box::new(replace_columns(e, f)?)) };
    Ok(match expr {
        Expr::Column(_) | Expr::Literal(_) => expr.clone(),
        Expr::Compare { op, left, right } => Expr::Compare { op: *op, left: go(left)?, right: go(right)? },
        Expr::InList { expr, list, negated } => {
            let mut kept = true;
            for item in list.iter().filter(|item| matches!(item, Expr::Literal(_))) {
                kept &= f(item)?.is_none();
            }
            let expr = Box::new(replace_columns(expr, f)?);
            // A list of literals left as they are is shared, not copied (it may be long).
            let list = match kept && list.iter().all(|item| matches!(item, Expr::Literal(_))) {
                true => list.clone(),
                false => list.iter().map(|e| replace_columns(e, f)).collect::<Result<_>>()?,
            };
            Expr::InList { expr, list, negated: *negated }
        }
        Expr::IsNull { expr, negated } => Expr::IsNull { expr: go(expr)?, negated: *negated },
        Expr::Between { expr, low, high, negated } => {
            Expr::Between { expr: go(expr)?, low: go(low)?, high: go(high)?, negated: *negated }
        }
        Expr::Like { expr, pattern, escape, negated } => {
            Expr::Like { expr: go(expr)?, pattern: pattern.clone(), escape: *escape, negated: *negated }
        }
        Expr::And(left, right) => Expr::And(go(left)?, go(right)?),
        Expr::Or(left, right) => Expr::Or(go(left)?, go(right)?),
        Expr::Not(inner) => Expr::Not(go(inner)?),
        Expr::Cast { expr, to } => Expr::Cast { expr: go(expr)?, to: *to },
        Expr::TryCast { expr, to } => Expr::TryCast { expr: go(expr)?, to: *to },
        Expr::Arithmetic { op, left, right } => Expr::Arithmetic { op: *op, left: go(left)?, right: go(right)? },
        Expr::Negate(inner) => Expr::Negate(go(inner)?),
        Expr::Abs(inner) => Expr::Abs(go(inner)?),
        Expr::Function { name, args } => {
            Expr::Function { name: name.clone(), args: args.iter().map(|e| go(e).map(|b| *b)).collect::<Result<_>>()? }
        }
        Expr::Case { branches, otherwise } => Expr::Case {
            branches: branches.iter().map(|(c, v)| Ok((*go(c)?, *go(v)?))).collect::<Result<_>>()?,
            otherwise: otherwise.as_deref().map(&mut go).transpose()?,
        },
    })
}
