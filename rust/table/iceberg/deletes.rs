//! Equality deletes (format 2): a delete file lists values of some columns (its
//! `equality_ids`), and every row of an older data file of its partition whose columns
//! equal one of its rows is deleted — NULL equal to NULL.
//!
//! They are applied as a predicate on each data file's rows, kept apart from the user's
//! filter: `NOT` any deleted tuple, which the scan treats as a row filter of the file.
//! Like a filter it prunes — row groups and pages whose statistics show only deleted
//! values are skipped — and, under late materialization, the equality columns are decoded
//! first (read even when not projected) and the projection only for the rows left.
//!
//! A delete applies to a data file when its data sequence number is greater than the data
//! file's, and, when its partition spec is partitioned, when the file was written with the
//! same spec and partition tuple.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Int64Array, RecordBatch};
//! use arrow::datatypes::{DataType, Field, Schema};
//! use pqsift::table::iceberg::deletes::deleted_rows_predicate;
//! let with_id = |name: &str, id: &str| Field::new(name, DataType::Int64, true)
//!     .with_metadata(std::collections::HashMap::from([("PARQUET:field_id".to_string(), id.to_string())]));
//! let table = Schema::new(vec![with_id("id", "1"), with_id("x", "2")]);
//! let deleted = RecordBatch::try_new(
//!     Arc::new(Schema::new(vec![with_id("id", "1")])),
//!     vec![Arc::new(Int64Array::from(vec![Some(3), None]))],
//! ).unwrap();
//! let predicate = deleted_rows_predicate(&table, &[1], &deleted).unwrap();
//! assert_eq!(predicate.to_string(), "`id` IS NOT NULL AND `id` NOT IN (3L)");
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{Field, Schema};

use super::schema::stored_type;
use super::values::as_declared;
use crate::filter::{ColumnPath, CompareOp, Expr};
use crate::table::column_matching::field_id;
use crate::table::partition_values::PartitionValues;

/// The predicate that keeps the rows of a data file not deleted by the rows `deleted` of
/// an equality delete file on the columns `equality_ids` (top-level columns of the table
/// schema `table`). An error names what cannot be applied (a column the table or the
/// delete file lacks, a type not compared here).
pub fn deleted_rows_predicate(table: &Schema, equality_ids: &[i32], deleted: &RecordBatch) -> Result<Expr, String> {
    if equality_ids.is_empty() {
        return Err("an equality delete file without equality ids".to_string());
    }
    let mut fields = Vec::with_capacity(equality_ids.len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(equality_ids.len());
    for &id in equality_ids {
        let field = table
            .fields()
            .iter()
            .find(|f| field_id(f) == Some(id))
            .ok_or_else(|| format!("equality column id {id} is not a top-level column of the table"))?;
        if !PartitionValues::has_literals(field.data_type()) {
            return Err(format!(
                "equality deletes on column {} of type {} are not applied yet",
                field.name(),
                field.data_type()
            ));
        }
        let column = deleted
            .schema()
            .fields()
            .iter()
            .position(|f| field_id(f) == Some(id))
            .or_else(|| deleted.schema().fields().iter().position(|f| f.name() == field.name()))
            .ok_or_else(|| format!("the delete file has no column with field id {id} ({})", field.name()))?;
        // Read as Iceberg stores the column (a uuid's 16 bytes), then as it is declared.
        let stored = cast(deleted.column(column), &stored_type(field)).map_err(|e| {
            format!("the delete file's column {} does not read as {}: {e}", field.name(), field.data_type())
        })?;
        let values = as_declared(stored, field);
        fields.push(Field::new(field.name(), field.data_type().clone(), true));
        columns.push(values);
    }
    let values = PartitionValues::with_rows(Arc::new(Schema::new(fields)), columns, deleted.num_rows())
        .map_err(|e| e.to_string())?;
    let column = |k: usize| Expr::Column(ColumnPath::new([values.schema.field(k).name().clone()]));
    let literal = |k: usize, row: usize| {
        let field = values.schema.field(k);
        values
            .literal(k, row)
            .ok_or_else(|| format!("a value of column {} ({}) has no literal", field.name(), field.data_type()))
    };
    if deleted.num_rows() == 0 {
        return Ok(Expr::Literal(crate::filter::Literal::Boolean(true)));
    }
    if equality_ids.len() == 1 {
        let array = values.values.column(0);
        let has_null = array.null_count() > 0;
        let mut list: Vec<Expr> =
            (0..array.len()).filter(|&row| array.is_valid(row)).map(|row| literal(0, row)).collect::<Result<_, _>>()?;
        list.sort_by_key(|e| e.to_string());
        list.dedup_by_key(|e| e.to_string());
        let not_null = Expr::IsNull { expr: Box::new(column(0)), negated: true };
        let is_null = Expr::IsNull { expr: Box::new(column(0)), negated: false };
        return Ok(match (has_null, list.is_empty()) {
            (true, true) => not_null,
            (true, false) => and(not_null, not_in(column(0), list)),
            (false, _) => Expr::Or(Box::new(is_null), Box::new(not_in(column(0), list))),
        });
    }
    // Several columns: NOT (any deleted tuple), each comparison NULL-safe.
    let tuples: Vec<Expr> = (0..deleted.num_rows())
        .map(|row| {
            let comparisons = (0..equality_ids.len())
                .map(|k| {
                    Ok(Expr::Compare {
                        op: CompareOp::NullSafeEq,
                        left: Box::new(column(k)),
                        right: Box::new(literal(k, row)?),
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(balanced(comparisons, Expr::And))
        })
        .collect::<Result<_, String>>()?;
    Ok(Expr::Not(Box::new(balanced(tuples, Expr::Or))))
}

fn not_in(column: Expr, list: Vec<Expr>) -> Expr {
    Expr::InList { expr: Box::new(column), list: list.into(), negated: true }
}

fn and(left: Expr, right: Expr) -> Expr {
    Expr::And(Box::new(left), Box::new(right))
}

/// `items` joined by `join` as a balanced tree (its depth grows as the logarithm of their
/// number, not with it). `items` is not empty.
pub fn balanced(mut items: Vec<Expr>, join: fn(Box<Expr>, Box<Expr>) -> Expr) -> Expr {
    while items.len() > 1 {
        let mut next = Vec::with_capacity(items.len().div_ceil(2));
        let mut pairs = items.into_iter();
        while let Some(left) = pairs.next() {
            next.push(match pairs.next() {
                Some(right) => join(Box::new(left), Box::new(right)),
                None => left,
            });
        }
        items = next;
    }
    items.pop().expect("at least one item")
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, StringArray};
    use arrow::datatypes::DataType;

    fn field(name: &str, data_type: DataType, id: i32) -> Field {
        Field::new(name, data_type, true)
            .with_metadata(std::collections::HashMap::from([("PARQUET:field_id".to_string(), id.to_string())]))
    }

    #[test]
    fn several_columns_compare_null_safely() {
        let table = Schema::new(vec![field("id", DataType::Int32, 1), field("name", DataType::Utf8, 2)]);
        let deleted = RecordBatch::try_new(
            Arc::new(Schema::new(vec![field("n", DataType::Utf8, 2), field("i", DataType::Int32, 1)])),
            vec![Arc::new(StringArray::from(vec![Some("c"), None])), Arc::new(Int32Array::from(vec![3, 4]))],
        )
        .unwrap();
        let predicate = deleted_rows_predicate(&table, &[1, 2], &deleted).unwrap();
        assert_eq!(
            predicate.to_string(),
            "NOT (`id` <=> 3 AND `name` <=> 'c' OR `id` <=> 4 AND `name` <=> CAST(NULL AS STRING))"
        );
        assert!(deleted_rows_predicate(&table, &[9], &deleted).is_err());
    }

    #[test]
    fn balanced_trees_stay_shallow() {
        let items: Vec<Expr> = (0..1000).map(|i| Expr::Literal(crate::filter::Literal::Int(i))).collect();
        assert!(crate::filter::depth(&balanced(items, Expr::Or)) <= 12);
    }
}
