//! The projection: which columns a scan outputs. A name is a top-level column or, as in
//! Spark's `select("a.b")`, a path into nested structs (dots separate fields, back-quotes
//! quote a name holding dots): the output column is that field, named by its last part,
//! null where it or any struct above it is null — what Spark and pyarrow give.
//!
//! Reading decodes only the Parquet leaf columns under the requested fields (unless a
//! predicate already decoded the whole top-level column, which is then reused); the field
//! is taken out of its struct without copying values.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::datatypes::{DataType, Field, Fields, Schema};
//! use pqsift::filter::BindOptions;
//! use pqsift::filter::projection::resolve_projection;
//!
//! let point = Fields::from(vec![Field::new("x", DataType::Int32, true), Field::new("y", DataType::Int32, true)]);
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("id", DataType::Int64, false),
//!     Field::new("p", DataType::Struct(point), true),
//! ]));
//! let columns = ["p.y".to_string(), "id".to_string()];
//! let projection = resolve_projection(&schema, Some(&columns), &BindOptions::default()).unwrap();
//! assert_eq!(projection.roots, [1, 0]);
//! assert_eq!(projection.paths, [vec!["y".to_string()], vec![]]);
//! assert_eq!(projection.schema.field(0), &Field::new("y", DataType::Int32, true));
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, StructArray, make_array};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Schema, SchemaRef};
use parquet::schema::types::SchemaDescriptor;

use crate::error::{PqsiftError, Result};
use crate::filter::{BindOptions, ColumnPath, resolve_column};

/// The columns a scan outputs: per output column its root column and the path of struct
/// field names below it (empty: the whole root), and the output schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    /// Root column indices to decode, one per output column, in output order.
    pub roots: Vec<usize>,
    /// Per output column, the struct field names from its root down, as the schema spells
    /// them (empty: the whole root).
    pub paths: Vec<Vec<String>>,
    /// The output schema.
    pub schema: SchemaRef,
}

/// Resolves `columns` (all when `None`) in `schema` with the filter's name matching. A name
/// that is a top-level column is that column; otherwise it is read as a path (`a.b`,
/// `` `a.b`.c ``) into nested structs, and the output column is that field.
pub fn resolve_projection(schema: &SchemaRef, columns: Option<&[String]>, options: &BindOptions) -> Result<Projection> {
    let Some(columns) = columns else {
        let roots: Vec<usize> = (0..schema.fields().len()).collect();
        return Ok(Projection { paths: vec![Vec::new(); roots.len()], roots, schema: Arc::clone(schema) });
    };
    let mut roots = Vec::with_capacity(columns.len());
    let mut paths = Vec::with_capacity(columns.len());
    let mut fields = Vec::with_capacity(columns.len());
    for name in columns {
        let indices = match resolve_column(schema, &ColumnPath::new([name.as_str()]), options) {
            Ok(column) => column.indices,
            Err(whole_name_error) => {
                let parts = split_column_name(name).map_err(PqsiftError::filter)?;
                if parts.len() == 1 && parts[0] == *name {
                    return Err(whole_name_error);
                }
                resolve_column(schema, &ColumnPath::new(parts.iter().map(String::as_str)), options)?.indices
            }
        };
        let mut field = schema.field(indices[0]).clone();
        let mut nullable = field.is_nullable();
        let mut names = Vec::with_capacity(indices.len() - 1);
        for &index in &indices[1..] {
            let DataType::Struct(children) = field.data_type() else {
                unreachable!("resolve_column only walks into structs")
            };
            field = children[index].as_ref().clone();
            nullable |= field.is_nullable();
            names.push(field.name().clone());
        }
        fields.push(field.with_nullable(nullable));
        roots.push(indices[0]);
        paths.push(names);
    }
    Ok(Projection { roots, paths, schema: Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())) })
}

/// Per root read only through paths, the Parquet leaf columns under those paths: the
/// decoder reads these instead of every leaf of the root. Roots also output whole are not
/// listed.
///
/// A leaf is under a path when its column path starts with the root's and the path's
/// names (Arrow's struct fields are the Parquet groups of the same names).
pub fn leaf_subsets(projection: &Projection, parquet: &SchemaDescriptor) -> BTreeMap<usize, Vec<usize>> {
    let mut subsets: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let whole: Vec<usize> =
        projection.roots.iter().zip(&projection.paths).filter(|(_, p)| p.is_empty()).map(|(r, _)| *r).collect();
    for (&root, path) in projection.roots.iter().zip(&projection.paths) {
        if path.is_empty() || whole.contains(&root) {
            continue;
        }
        let leaves = subsets.entry(root).or_default();
        for leaf in 0..parquet.num_columns() {
            if parquet.get_column_root_idx(leaf) != root {
                continue;
            }
            let parts = parquet.column(leaf).path().parts().to_vec();
            if parts.len() > path.len() && parts[1..=path.len()] == path[..] && !leaves.contains(&leaf) {
                leaves.push(leaf);
            }
        }
        leaves.sort_unstable();
    }
    subsets
}

/// `batch` (one root column per output column, whole or pruned to the path's leaves) with each column replaced by the
/// field at its path, nulls of the structs above it included.
pub fn extract_fields(batch: RecordBatch, paths: &[Vec<String>], schema: &SchemaRef) -> Result<RecordBatch> {
    if paths.iter().all(Vec::is_empty) {
        return Ok(batch);
    }
    let columns = batch
        .columns()
        .iter()
        .zip(paths)
        .map(|(column, path)| extract_field(column, path))
        .collect::<Result<Vec<_>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(Arc::clone(schema), columns, &options)?)
}

/// The field at `path` (by name: the struct may be whole or pruned to the path's leaves).
fn extract_field(column: &ArrayRef, path: &[String]) -> Result<ArrayRef> {
    let mut current = Arc::clone(column);
    let mut nulls: Option<NullBuffer> = None;
    for name in path {
        let child = current
            .as_any()
            .downcast_ref::<StructArray>()
            .and_then(|structs| Some((structs.column_by_name(name)?, structs.nulls())))
            .ok_or_else(|| PqsiftError::Compute(format!("no field `{name}` in {}", current.data_type())))?;
        nulls = NullBuffer::union(nulls.as_ref(), child.1);
        current = Arc::clone(child.0);
    }
    let combined = NullBuffer::union(nulls.as_ref(), current.nulls());
    if combined.as_ref().map(NullBuffer::null_count) == current.nulls().map(NullBuffer::null_count)
        || combined.is_none()
    {
        return Ok(current);
    }
    let data = current.to_data().into_builder().nulls(combined).build()?;
    Ok(make_array(data))
}

/// Spark's `parseAttributeName`: split on dots outside back-quotes; inside them a doubled
/// back-quote is one back-quote.
pub(crate) fn split_column_name(name: &str) -> std::result::Result<Vec<String>, String> {
    let invalid = |why: &str| format!("invalid column name `{name}`: {why}");
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quoted_part = false;
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' => {
                if !current.is_empty() || quoted_part {
                    return Err(invalid("back-quote inside a name"));
                }
                loop {
                    match chars.next() {
                        Some('`') if chars.peek() == Some(&'`') => {
                            chars.next();
                            current.push('`');
                        }
                        Some('`') => break,
                        Some(other) => current.push(other),
                        None => return Err(invalid("unclosed back-quote")),
                    }
                }
                quoted_part = true;
                if chars.peek().is_some_and(|&next| next != '.') {
                    return Err(invalid("text after a closing back-quote"));
                }
            }
            '.' => {
                if current.is_empty() && !quoted_part {
                    return Err(invalid("empty part"));
                }
                parts.push(std::mem::take(&mut current));
                quoted_part = false;
            }
            other => current.push(other),
        }
    }
    if current.is_empty() && !quoted_part {
        return Err(invalid("empty part"));
    }
    parts.push(current);
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, StringArray};
    use arrow::datatypes::{Field, Fields};

    fn inner_fields() -> Fields {
        Fields::from(vec![Field::new("u", DataType::Int32, false), Field::new("v", DataType::Utf8, true)])
    }

    fn nested() -> SchemaRef {
        let outer = Fields::from(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Struct(inner_fields()), true),
        ]);
        Arc::new(Schema::new(vec![
            Field::new("s", DataType::Struct(outer), true),
            Field::new("dotted.name", DataType::Int32, true),
        ]))
    }

    #[test]
    fn paths_name_fields_and_quotes_keep_dots() {
        let schema = nested();
        let options = BindOptions::default();
        let columns = ["s.b.u".to_string(), "`dotted.name`".to_string(), "S.A".to_string(), "s".to_string()];
        let projection = resolve_projection(&schema, Some(&columns), &options).unwrap();
        assert_eq!(projection.roots, [0, 1, 0, 0]);
        let path = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(projection.paths, [path(&["b", "u"]), vec![], path(&["a"]), vec![]]);
        let names: Vec<&str> = projection.schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["u", "dotted.name", "a", "s"]);
        // `u` is required in its struct, but its struct may be null.
        assert!(projection.schema.field(0).is_nullable());
        // A top-level name with a dot is still that column.
        let whole = resolve_projection(&schema, Some(&["dotted.name".to_string()]), &options).unwrap();
        assert_eq!((whole.roots, whole.paths), (vec![1], vec![vec![]]));
    }

    #[test]
    fn bad_paths_name_the_column() {
        let schema = nested();
        for bad in ["s.nope", "s.a.deeper", "s..a", "`s", "nope"] {
            let error = resolve_projection(&schema, Some(&[bad.to_string()]), &BindOptions::default()).unwrap_err();
            assert!(matches!(error, PqsiftError::Filter { .. }), "{bad}: {error}");
        }
    }

    #[test]
    fn extracted_fields_are_null_where_a_parent_is() {
        let schema = nested();
        let inner = StructArray::try_new(
            inner_fields(),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec![Some("x"), None, Some("z")])),
            ],
            Some(NullBuffer::from(vec![true, true, false])),
        )
        .unwrap();
        let DataType::Struct(outer) = schema.field(0).data_type().clone() else { panic!() };
        let s = StructArray::try_new(
            outer,
            vec![Arc::new(Int32Array::from(vec![7, 8, 9])), Arc::new(inner)],
            Some(NullBuffer::from(vec![false, true, true])),
        )
        .unwrap();
        let columns = ["s.b.u".to_string(), "s.b.v".to_string()];
        let projection = resolve_projection(&schema, Some(&columns), &BindOptions::default()).unwrap();
        let decoded = RecordBatch::try_new(
            Arc::new(Schema::new(vec![schema.field(0).clone(), schema.field(0).clone()])),
            vec![Arc::new(s.clone()), Arc::new(s)],
        )
        .unwrap();
        let out = extract_fields(decoded, &projection.paths, &projection.schema).unwrap();
        let u = out.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
        assert_eq!(u.iter().collect::<Vec<_>>(), [None, Some(2), None]);
        let v = out.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(v.iter().collect::<Vec<_>>(), [None, None, None]);
    }
}
