//! Files of one table whose schemas differ: the scan schema, and whether a file's columns
//! can be read into it (Spark's rules, checked against Spark 4.3).
//!
//! * **Spark's default**: the schema of the first file (in scan order). Every other file is
//!   read into it by name (with the scan's case sensitivity): a column it lacks is null,
//!   a column it has beyond the schema is not read, and a column of another type is read
//!   only if Spark's Parquet reader widens it ([`reads_as`]); anything else fails.
//! * **`merge_schema`** (Spark's `mergeSchema`): the union of the files' schemas — the first
//!   file's columns in its order, then each column a later file adds, in the order met.
//!   Spark merges only equal types (structs field by field): `int` in one file and `bigint`
//!   in another fail, even though the default mode would widen them.
//!
//! Either way the result is a [`DeclaredSchema`](super::schema_adapter::DeclaredSchema)
//! and files are read through the schema adapter, as a Delta table's are.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::datatypes::{DataType, Field, Schema};
//! use pqsift::table::schema_evolution::{merge_file_schemas, reads_as};
//!
//! assert!(reads_as(&DataType::Int32, &DataType::Int64));
//! assert!(!reads_as(&DataType::Int64, &DataType::Int32));
//! let first = Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("x", DataType::Int64, true)]);
//! let later = Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("y", DataType::Utf8, true)]);
//! let merged = merge_file_schemas(&[("p1", &first), ("p2", &later)], false).unwrap();
//! let names: Vec<&String> = merged.fields().iter().map(|f| f.name()).collect();
//! assert_eq!(names, ["id", "x", "y"]);
//! ```

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, TimeUnit};

use super::column_matching::{ColumnMatcher, has_field_ids};
use super::schema_adapter::find_field;
use crate::error::{PqsiftError, Result};
use crate::filter::describe_type as describe;

/// Whether Spark's Parquet reader reads a file column of type `file` as `scan`: the same
/// type, or a widening it accepts (Spark 4.3, vectorized reader): a narrower integer to a
/// wider one or to DOUBLE, FLOAT to DOUBLE, a DECIMAL to one with no fewer integer and
/// fraction digits, an integer to a DECIMAL with room for it, DATE to TIMESTAMP_NTZ; and
/// structs field by field (by name), lists and maps by element.
pub fn reads_as(file: &DataType, scan: &DataType) -> bool {
    reads_as_matched(file, scan, &ColumnMatcher::default(), false)
}

/// [`reads_as`] with struct fields matched as `matcher` says in a file holding field ids
/// or not (`file_has_ids`); a matching error reads as `false`.
fn reads_as_matched(file: &DataType, scan: &DataType, matcher: &ColumnMatcher, file_has_ids: bool) -> bool {
    use DataType::*;
    let integer_digits = |t: &DataType| match t {
        Int8 => Some(3),
        Int16 => Some(5),
        Int32 => Some(10),
        Int64 => Some(20),
        _ => None,
    };
    let rank = |t: &DataType| match t {
        Int8 => Some(0),
        Int16 => Some(1),
        Int32 => Some(2),
        Int64 => Some(3),
        _ => None,
    };
    match (file, scan) {
        _ if file == scan => true,
        (Int8 | Int16 | Int32 | Int64, Int8 | Int16 | Int32 | Int64) => rank(file) < rank(scan),
        (Int8 | Int16 | Int32 | Float32, Float64) => true,
        (Decimal128(p1, s1), Decimal128(p2, s2)) => s2 >= s1 && (*p2 as i16 - *s2 as i16) >= (*p1 as i16 - *s1 as i16),
        (Int8 | Int16 | Int32 | Int64, Decimal128(p, s)) => {
            integer_digits(file).is_some_and(|digits| *p as i16 - *s as i16 >= digits)
        }
        (Date32, Timestamp(TimeUnit::Microsecond, None)) => true,
        // Instants (Spark's TIMESTAMP): the zone a writer recorded only names how to show them.
        (Timestamp(file_unit, Some(_)), Timestamp(scan_unit, Some(_))) => file_unit == scan_unit,
        (Struct(file_fields), Struct(scan_fields)) => {
            scan_fields.iter().all(|scan_field| match matcher.find(file_fields, scan_field, file_has_ids) {
                Ok(Some(i)) => {
                    reads_as_matched(file_fields[i].data_type(), scan_field.data_type(), matcher, file_has_ids)
                }
                Ok(None) => true, // a field the file lacks is null
                Err(_) => false,
            })
        }
        (List(a), List(b)) | (LargeList(a), LargeList(b)) => {
            reads_as_matched(a.data_type(), b.data_type(), matcher, file_has_ids)
        }
        (Map(a, _), Map(b, _)) => reads_as_matched(a.data_type(), b.data_type(), matcher, file_has_ids),
        _ => false,
    }
}

/// Whether two schemas have the same columns: names, types and nullability, in order
/// (field metadata aside).
pub fn same_columns(a: &Schema, b: &Schema) -> bool {
    a.fields().len() == b.fields().len()
        && a.fields()
            .iter()
            .zip(b.fields())
            .all(|(x, y)| x.name() == y.name() && x.data_type() == y.data_type() && x.is_nullable() == y.is_nullable())
}

/// Checks that every column of `file` (the schema of file `file_name`) the scan schema
/// `scan` (taken from `scan_source`) has, matched as `matcher_for` says for each
/// top-level field, is readable as the scan's type ([`reads_as`]).
pub fn check_readable(
    file_name: &str,
    file: &Schema,
    scan_source: &str,
    scan: &Schema,
    matcher_for: impl Fn(usize) -> ColumnMatcher,
) -> Result<()> {
    let file_has_ids = has_field_ids(file.fields());
    for (root, scan_field) in scan.fields().iter().enumerate() {
        let matcher = &matcher_for(root);
        let found = matcher.find(file.fields(), scan_field, file_has_ids).map_err(|e| e.in_file_named(file_name))?;
        let Some(i) = found else { continue };
        let file_type = file.field(i).data_type();
        if !reads_as_matched(file_type, scan_field.data_type(), matcher, file_has_ids) {
            let described = match file.field(i).name() == scan_field.name() {
                true => file_name.to_string(),
                false => format!("{file_name} (as {})", file.field(i).name()),
            };
            return Err(PqsiftError::schema_mismatch_in(
                file_name,
                scan_field.name(),
                format!(
                    "column {} is {} in {described} but {} in {scan_source}, whose schema the scan reads every file \
                     into: Spark's reader widens a column (int to bigint, float to double, a larger decimal, ...), never \
                     narrows or converts it",
                    scan_field.name(),
                    describe_apart(file_type, scan_field.data_type()),
                    describe_apart(scan_field.data_type(), file_type)
                ),
            ));
        }
    }
    Ok(())
}

/// The union of the files' schemas in Spark's `mergeSchema` order: the first file's
/// columns, then each column a later file adds, in the order met. Columns are matched by
/// name (case-insensitively unless `case_sensitive`; the first spelling met is kept);
/// their types must be equal, structs merging field by field. `files`: (name, schema).
pub fn merge_file_schemas(files: &[(&str, &Schema)], case_sensitive: bool) -> Result<Schema> {
    let mut merged: Vec<FieldRef> = Vec::new();
    let mut source: Vec<&str> = Vec::new();
    for (name, schema) in files {
        for field in schema.fields() {
            let fields = Fields::from(merged.clone());
            match find_field(&fields, field.name(), case_sensitive) {
                None => {
                    merged.push(Arc::new(field.as_ref().clone().with_nullable(true)));
                    source.push(name);
                }
                Some(i) => {
                    let data_type = merge_types(merged[i].data_type(), field.data_type()).ok_or_else(|| {
                        PqsiftError::schema_mismatch(
                            merged[i].name(),
                            format!(
                                "column {} is {} in {} but {} in {name}: merging schemas (merge_schema, Spark's \
                                 mergeSchema) needs the same type in every file",
                                merged[i].name(),
                                describe_apart(merged[i].data_type(), field.data_type()),
                                source[i],
                                describe_apart(field.data_type(), merged[i].data_type())
                            ),
                        )
                    })?;
                    merged[i] = Arc::new(merged[i].as_ref().clone().with_data_type(data_type));
                }
            }
        }
    }
    Ok(Schema::new(merged))
}

/// `data_type` in Spark's words, with Arrow's too when Spark's do not tell it from `other`
/// (`TIMESTAMP (Timestamp(Millisecond, Some("UTC")))` beside a microsecond one).
fn describe_apart(data_type: &DataType, other: &DataType) -> String {
    let text = describe(data_type);
    if data_type != other && text == describe(other) { format!("{text} ({data_type:?})") } else { text }
}

/// Spark's `StructType.merge` of two column types: equal types, or structs merged field by
/// field (a field only one has is added); `None`: they conflict.
fn merge_types(a: &DataType, b: &DataType) -> Option<DataType> {
    match (a, b) {
        _ if a == b => Some(a.clone()),
        // Both Spark's TIMESTAMP (instants): the first file's zone names them.
        (DataType::Timestamp(unit_a, Some(_)), DataType::Timestamp(unit_b, Some(_))) if unit_a == unit_b => {
            Some(a.clone())
        }
        (DataType::Struct(left), DataType::Struct(right)) => {
            let mut fields: Vec<Field> = left.iter().map(|f| f.as_ref().clone()).collect();
            for field in right.iter() {
                match fields.iter().position(|f| f.name() == field.name()) {
                    Some(i) => {
                        let merged = merge_types(fields[i].data_type(), field.data_type())?;
                        fields[i] = fields[i].clone().with_data_type(merged);
                    }
                    None => fields.push(field.as_ref().clone().with_nullable(true)),
                }
            }
            Some(DataType::Struct(Fields::from(fields)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_follows_spark() {
        use DataType::*;
        for (file, scan) in [
            (Int32, Int64),
            (Int8, Int32),
            (Float32, Float64),
            (Int32, Float64),
            (Decimal128(5, 1), Decimal128(10, 2)),
            (Int32, Decimal128(12, 2)),
            (Date32, Timestamp(TimeUnit::Microsecond, None)),
        ] {
            assert!(reads_as(&file, &scan), "{file} as {scan}");
        }
        let zoned = |unit, zone: &str| Timestamp(unit, Some(zone.into()));
        assert!(reads_as(&zoned(TimeUnit::Microsecond, "Europe/Berlin"), &zoned(TimeUnit::Microsecond, "UTC")));
        assert!(!reads_as(&zoned(TimeUnit::Millisecond, "UTC"), &zoned(TimeUnit::Microsecond, "UTC")));
        for (file, scan) in [
            (Int64, Int32),
            (Float64, Float32),
            (Int32, Utf8),
            (Decimal128(10, 2), Decimal128(5, 1)),
            (Decimal128(10, 2), Decimal128(10, 3)),
            (Int64, Float64),
            (Int32, Decimal128(10, 2)),
            (Date32, Timestamp(TimeUnit::Microsecond, Some("UTC".into()))),
        ] {
            assert!(!reads_as(&file, &scan), "{file} as {scan}");
        }
    }

    #[test]
    fn merging_needs_equal_types_and_keeps_first_spelling() {
        let a = Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("X", DataType::Int64, true)]);
        let b = Schema::new(vec![Field::new("x", DataType::Int64, true), Field::new("y", DataType::Utf8, true)]);
        let merged = merge_file_schemas(&[("a", &a), ("b", &b)], false).unwrap();
        assert_eq!(merged.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), ["id", "X", "y"]);
        assert!(merged.fields().iter().all(|f| f.is_nullable()));
        let case_sensitive = merge_file_schemas(&[("a", &a), ("b", &b)], true).unwrap();
        assert_eq!(case_sensitive.fields().len(), 4);
        let c = Schema::new(vec![Field::new("id", DataType::Int32, true)]);
        let error = merge_file_schemas(&[("a", &a), ("c", &c)], false).unwrap_err().to_string();
        assert!(error.contains("column id is BIGINT in a but INT in c"), "{error}");
        // Zones apart, one TIMESTAMP (the first file's zone); units apart, told apart.
        let zoned =
            |unit, zone: &str| Schema::new(vec![Field::new("t", DataType::Timestamp(unit, Some(zone.into())), true)]);
        let (utc, berlin) = (zoned(TimeUnit::Microsecond, "UTC"), zoned(TimeUnit::Microsecond, "Europe/Berlin"));
        assert_eq!(
            merge_file_schemas(&[("a", &utc), ("b", &berlin)], false).unwrap().field(0).data_type(),
            utc.field(0).data_type()
        );
        let millis = zoned(TimeUnit::Millisecond, "UTC");
        let error = merge_file_schemas(&[("a", &utc), ("m", &millis)], false).unwrap_err().to_string();
        assert!(
            error.contains(
                "TIMESTAMP (Timestamp(Microsecond, Some(\"UTC\"))) in a but TIMESTAMP (Timestamp(Millisecond"
            ),
            "{error}"
        );
    }
}
