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

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StructArray, make_array};
use arrow::buffer::NullBuffer;
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema};

use super::schema::stored_type;
use super::values::as_declared;
use crate::filter::{ColumnPath, CompareOp, Expr};
use crate::table::column_matching::field_id;
use crate::table::partition_values::PartitionValues;

/// The predicate that keeps the rows of a data file not deleted by the rows `deleted` of
/// an equality delete file on the columns `equality_ids` (columns of the table schema
/// `table`, top-level or fields of structs). An error names what cannot be applied (a
/// column the table or the delete file lacks, a type not compared here).
pub fn deleted_rows_predicate(table: &Schema, equality_ids: &[i32], deleted: &RecordBatch) -> Result<Expr, String> {
    if equality_ids.is_empty() {
        return Err("an equality delete file without equality ids".to_string());
    }
    let mut fields = Vec::with_capacity(equality_ids.len());
    let mut paths = Vec::with_capacity(equality_ids.len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(equality_ids.len());
    for &id in equality_ids {
        let (path, field) =
            index_path(table.fields(), &Sought::Id(id)).and_then(|at| field_at(table.fields(), &at)).ok_or_else(
                || format!("equality column id {id} is not a column of the table, nor a field of its structs"),
            )?;
        let name = path.join(".");
        if !PartitionValues::has_literals(field.data_type()) {
            return Err(format!("equality deletes on column {name} of type {} are not applied yet", field.data_type()));
        }
        let schema = deleted.schema();
        // By field id, or by names in a delete file without ids.
        let at = index_path(schema.fields(), &Sought::Id(id))
            .or_else(|| index_path(schema.fields(), &Sought::Names(&path)))
            .ok_or_else(|| format!("the delete file has no column with field id {id} ({name})"))?;
        let column = column_at(deleted.columns(), &at)?;
        // Read as Iceberg stores the column (a uuid's 16 bytes), then as it is declared.
        let stored = cast(&column, &stored_type(field))
            .map_err(|e| format!("the delete file's column {name} does not read as {}: {e}", field.data_type()))?;
        let values = as_declared(stored, field);
        fields.push(Field::new(name, field.data_type().clone(), true));
        paths.push(ColumnPath::new(path));
        columns.push(values);
    }
    let values = PartitionValues::with_rows(Arc::new(Schema::new(fields)), columns, deleted.num_rows())
        .map_err(|e| e.to_string())?;
    let column = |k: usize| Expr::Column(paths[k].clone());
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

/// A field looked for among a schema's fields and the fields of their structs.
enum Sought<'a> {
    /// By its field id (equality ids never name a field inside a list or a map).
    Id(i32),
    /// By the names on its path, from the top (a file without field ids).
    Names(&'a [String]),
}

/// The positions from the top of the field `sought` among `fields` or within their
/// structs: `[2, 0]` is the first field of the struct that is the third top-level field.
fn index_path(fields: &Fields, sought: &Sought) -> Option<Vec<usize>> {
    let (position, rest) = match sought {
        Sought::Id(id) => fields.iter().enumerate().find_map(|(k, field)| {
            if field_id(field) == Some(*id) {
                return Some((k, None));
            }
            let DataType::Struct(children) = field.data_type() else { return None };
            Some((k, Some(index_path(children, sought)?)))
        })?,
        Sought::Names(names) => {
            let (name, below) = names.split_first()?;
            let k = fields.iter().position(|f| f.name() == name)?;
            match (below.is_empty(), fields[k].data_type()) {
                (true, _) => (k, None),
                (false, DataType::Struct(children)) => (k, Some(index_path(children, &Sought::Names(below))?)),
                (false, _) => return None,
            }
        }
    };
    let mut path = vec![position];
    path.extend(rest.unwrap_or_default());
    Some(path)
}

/// The field at `indices` (an [`index_path`] of `fields`), with the names on its path.
fn field_at<'a>(fields: &'a Fields, indices: &[usize]) -> Option<(Vec<String>, &'a FieldRef)> {
    let (&first, below) = indices.split_first()?;
    let mut field = fields.get(first)?;
    let mut names = vec![field.name().clone()];
    for &k in below {
        let DataType::Struct(children) = field.data_type() else { return None };
        field = children.get(k)?;
        names.push(field.name().clone());
    }
    Some((names, field))
}

/// The values at `indices` (an [`index_path`] of the columns' fields), NULL wherever a
/// struct holding them is NULL.
fn column_at(columns: &[ArrayRef], indices: &[usize]) -> Result<ArrayRef, String> {
    let not_there = || format!("no column at {indices:?}");
    let (&first, below) = indices.split_first().ok_or_else(not_there)?;
    let column = columns.get(first).ok_or_else(not_there)?;
    if below.is_empty() {
        return Ok(Arc::clone(column));
    }
    let parent = column.as_struct_opt().ok_or_else(not_there)?;
    with_parent_nulls(column_at(parent.columns(), below)?, parent)
}

/// `child` NULL also where its struct `parent` is (a struct's children keep their own
/// validity; a field of a NULL struct reads as NULL).
fn with_parent_nulls(child: ArrayRef, parent: &StructArray) -> Result<ArrayRef, String> {
    match parent.nulls() {
        Some(nulls) if nulls.null_count() > 0 => {
            let combined = NullBuffer::union(child.nulls(), Some(nulls));
            let data = child.to_data().into_builder().nulls(combined).build().map_err(|e| e.to_string())?;
            Ok(make_array(data))
        }
        _ => Ok(child),
    }
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
    fn fields_of_structs_compare_by_their_paths() {
        let x = field("x", DataType::Int32, 4);
        let point = |fields: Vec<Field>| field("p", DataType::Struct(fields.into()), 3);
        let table = Schema::new(vec![
            field("id", DataType::Int64, 1),
            point(vec![field("label", DataType::Utf8, 5), x.clone()]),
        ]);
        // The delete file's struct holds `x` alone; its second row's struct is NULL, so its `x` is.
        let xs: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(2), None]));
        let nulls = NullBuffer::from(vec![true, false, true]);
        let structs = StructArray::new(vec![x].into(), vec![xs], Some(nulls));
        let deleted = RecordBatch::try_new(
            Arc::new(Schema::new(vec![point(vec![field("x", DataType::Int32, 4)])])),
            vec![Arc::new(structs)],
        )
        .unwrap();
        let predicate = deleted_rows_predicate(&table, &[4], &deleted).unwrap();
        assert_eq!(predicate.to_string(), "`p`.`x` IS NOT NULL AND `p`.`x` NOT IN (1)");
        let err = deleted_rows_predicate(&table, &[5], &deleted).unwrap_err();
        assert!(err.contains("no column with field id 5 (p.label)"), "{err}");
    }

    #[test]
    fn balanced_trees_stay_shallow() {
        let items: Vec<Expr> = (0..1000).map(|i| Expr::Literal(crate::filter::Literal::Int(i))).collect();
        assert!(crate::filter::depth(&balanced(items, Expr::Or)) <= 12);
    }
}
