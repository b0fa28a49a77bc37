//! The partition values of a table's files: one typed column per partition column, one
//! row per file, as Arrow arrays — the zone maps of whole files for pruning, the constants
//! appended to each file's batches, the literals a file's filter is specialised with.
//!
//! Values cross process boundaries (the Spark driver to its tasks) as canonical text per
//! value — decimal digits, Rust's round-trip float text, days / microseconds since the
//! epoch for dates / timestamps — and the schema as Spark type names.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Date32Array, StringArray};
//! use arrow::datatypes::{DataType, Field, Schema};
//! use pqsift::table::partition_values::PartitionValues;
//! let schema = Arc::new(Schema::new(vec![Field::new("day", DataType::Date32, true), Field::new("kind", DataType::Utf8, true)]));
//! let values = PartitionValues::new(schema, vec![
//!     Arc::new(Date32Array::from(vec![Some(18262), None])),
//!     Arc::new(StringArray::from(vec!["a", "b"])),
//! ]).unwrap();
//! let text = values.row_text(1);
//! assert_eq!(text, [None, Some("b".to_string())]);
//! let back = PartitionValues::from_text(&values.type_names(), &[values.row_text(0), text]).unwrap();
//! assert_eq!(back.values, values.values);
//! assert_eq!(values.literal(0, 0).unwrap().to_string(), "DATE '2020-01-01'");
//! ```

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, RecordBatch, RecordBatchOptions, StringArray, UInt32Array, UInt64Array,
    new_null_array,
};
use arrow::compute::{cast, take};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Field, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    Schema, SchemaRef, TimeUnit, TimestampMicrosecondType,
};
use chrono::DateTime;

use crate::error::{PqsiftError, Result};
use crate::filter::{Expr, Literal, LiteralZone, SqlType, TimestampLiteral};
use crate::pruning::zone_map::ZoneMaps;

/// Partition values: `values` has one column per field of `schema`, one row per file.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionValues {
    /// The partition columns (every field nullable).
    pub schema: SchemaRef,
    /// One row per file, in the table's file order.
    pub values: RecordBatch,
}

impl PartitionValues {
    /// Values from columns of equal length, one per field of `schema`.
    pub fn new(schema: SchemaRef, columns: Vec<ArrayRef>) -> Result<Self> {
        let rows = columns.first().map_or(0, |c| c.len());
        Self::with_rows(schema, columns, rows)
    }

    /// Values of `rows` files (needed when there are no partition columns).
    pub fn with_rows(schema: SchemaRef, columns: Vec<ArrayRef>, rows: usize) -> Result<Self> {
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        let values = RecordBatch::try_new_with_options(Arc::clone(&schema), columns, &options)?;
        Ok(Self { schema, values })
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.values.num_rows()
    }

    /// `true` without files.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values of the files at `rows`, in that order.
    pub fn select(&self, rows: &[usize]) -> Result<Self> {
        let indices = UInt32Array::from(rows.iter().map(|&r| r as u32).collect::<Vec<_>>());
        let columns = self
            .values
            .columns()
            .iter()
            .map(|c| take(c, &indices, None))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Self::with_rows(Arc::clone(&self.schema), columns, rows.len())
    }

    /// Partition column `column`'s value for file `row`, repeated `rows` times.
    pub fn repeated(&self, column: usize, row: usize, rows: usize) -> Result<ArrayRef> {
        let indices = UInt32Array::from(vec![row as u32; rows]);
        Ok(take(self.values.column(column), &indices, None)?)
    }

    /// Zone maps of partition column `column` with files as containers: the value is both
    /// bounds, exact; a null value makes the file all-null.
    pub fn zone_maps(&self, column: usize) -> ZoneMaps {
        let values = Arc::clone(self.values.column(column));
        let rows = values.len();
        let nulls = (0..rows).map(|i| u64::from(values.is_null(i))).collect::<Vec<_>>();
        let exact = BooleanArray::from((0..rows).map(|i| values.is_valid(i)).collect::<Vec<_>>());
        // A `void` column has no bounds to compare: nulls of a comparable type would do, but
        // every row of it is null, which the null counts already say.
        ZoneMaps {
            mins: Arc::clone(&values),
            maxes: values,
            min_exact: exact.clone(),
            max_exact: exact,
            null_counts: UInt64Array::from(nulls),
            row_counts: UInt64Array::from(vec![1u64; rows]),
        }
    }

    /// `name=value` for every partition column of file `row`, as explain shows it.
    pub fn describe(&self, row: usize) -> String {
        self.schema
            .fields()
            .iter()
            .zip(self.values.columns())
            .map(|(field, column)| {
                let value = if column.is_null(row) {
                    "null".to_string()
                } else {
                    arrow::util::display::array_value_to_string(column, row).unwrap_or_else(|_| "?".into())
                };
                format!("{}={value}", field.name())
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether values of `data_type` become literals of exactly their type (see
    /// [`PartitionValues::literal`], whose cases these are).
    pub fn has_literals(data_type: &DataType) -> bool {
        matches!(
            data_type,
            DataType::Boolean
                | DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::Float32
                | DataType::Float64
                | DataType::Decimal128(_, _)
                | DataType::Date32
                | DataType::Timestamp(TimeUnit::Microsecond, _)
                | DataType::Utf8
                | DataType::Binary
                | DataType::FixedSizeBinary(_)
        )
    }

    /// Partition column `column`'s value for file `row` as a filter expression of exactly
    /// the column's type, so that a filter with it in place of the column means what the
    /// filter means on that file's rows. `None` for a type no Spark literal holds exactly
    /// (a time of day, a timestamp finer than microseconds, ...): the caller must not
    /// guess.
    pub fn literal(&self, column: usize, row: usize) -> Option<Expr> {
        let array = self.values.column(column);
        let data_type = array.data_type();
        if !Self::has_literals(data_type) {
            return None;
        }
        let to = SqlType::of_arrow(data_type)?;
        let typed = |literal: Literal| match literal.sql_type() == to {
            true => Expr::Literal(literal),
            false => Expr::Cast { expr: Box::new(Expr::Literal(literal)), to },
        };
        if array.is_null(row) {
            return Some(typed(Literal::Null));
        }
        let literal = match data_type {
            DataType::Boolean => Literal::Boolean(array.as_boolean().value(row)),
            DataType::Int8 => Literal::Byte(array.as_primitive::<Int8Type>().value(row)),
            DataType::Int16 => Literal::Short(array.as_primitive::<Int16Type>().value(row)),
            DataType::Int32 => Literal::Int(array.as_primitive::<Int32Type>().value(row)),
            DataType::Int64 => Literal::Long(array.as_primitive::<Int64Type>().value(row)),
            DataType::Float32 => Literal::Float(array.as_primitive::<Float32Type>().value(row)),
            DataType::Float64 => Literal::Double(array.as_primitive::<Float64Type>().value(row)),
            DataType::Decimal128(_, scale) => {
                Literal::Decimal { unscaled: array.as_primitive::<Decimal128Type>().value(row), scale: *scale }
            }
            DataType::Date32 => Literal::Date(array.as_primitive::<Date32Type>().value(row)),
            DataType::Timestamp(TimeUnit::Microsecond, zone) => {
                let micros = array.as_primitive::<TimestampMicrosecondType>().value(row);
                let utc = DateTime::from_timestamp_micros(micros)?;
                match zone {
                    Some(_) => Literal::Timestamp(TimestampLiteral {
                        local: utc.naive_utc(),
                        zone: Some(LiteralZone::Offset(0)),
                    }),
                    // A wall clock: TIMESTAMP_NTZ from its text.
                    None => Literal::String(utc.naive_utc().format("%Y-%m-%d %H:%M:%S%.6f").to_string()),
                }
            }
            DataType::Utf8 => Literal::String(array.as_string::<i32>().value(row).to_string()),
            DataType::Binary => Literal::Binary(array.as_binary::<i32>().value(row).to_vec()),
            DataType::FixedSizeBinary(_) => Literal::Binary(array.as_fixed_size_binary().value(row).to_vec()),
            _ => return None,
        };
        Some(typed(literal))
    }

    /// File `row`'s values as canonical text (see the module documentation).
    pub fn row_text(&self, row: usize) -> Vec<Option<String>> {
        self.values
            .columns()
            .iter()
            .map(|column| {
                if column.is_null(row) {
                    return None;
                }
                Some(match column.data_type() {
                    DataType::Float32 => column.as_primitive::<Float32Type>().value(row).to_string(),
                    DataType::Float64 => column.as_primitive::<Float64Type>().value(row).to_string(),
                    DataType::Date32 => column.as_primitive::<Date32Type>().value(row).to_string(),
                    DataType::Timestamp(TimeUnit::Microsecond, _) => {
                        column.as_primitive::<TimestampMicrosecondType>().value(row).to_string()
                    }
                    DataType::Binary => {
                        column.as_binary::<i32>().value(row).iter().map(|b| format!("{b:02x}")).collect()
                    }
                    _ => arrow::util::display::array_value_to_string(column, row).unwrap_or_default(),
                })
            })
            .collect()
    }

    /// The schema as `(name, Spark type name)` pairs.
    pub fn type_names(&self) -> Vec<(String, String)> {
        self.schema.fields().iter().map(|f| (f.name().clone(), spark_type_name(f.data_type()))).collect()
    }

    /// Values from canonical text: `rows` are files, each with one entry per column of
    /// `schema` (`(name, Spark type name)` pairs).
    pub fn from_text(schema: &[(String, String)], rows: &[Vec<Option<String>>]) -> Result<Self> {
        let mut fields = Vec::with_capacity(schema.len());
        let mut columns = Vec::with_capacity(schema.len());
        for (position, (name, type_name)) in schema.iter().enumerate() {
            let data_type = parse_spark_type_name(type_name)
                .ok_or_else(|| PqsiftError::filter(format!("partition column `{name}`: unknown type `{type_name}`")))?;
            let mut text = Vec::with_capacity(rows.len());
            for row in rows {
                let value = row.get(position).ok_or_else(|| {
                    PqsiftError::filter(format!("partition values: {} given, {} columns", row.len(), schema.len()))
                })?;
                text.push(value.clone());
            }
            columns.push(
                column_from_text(&data_type, &text)
                    .map_err(|e| PqsiftError::filter(format!("partition column `{name}`: {e}")))?,
            );
            fields.push(Field::new(name, data_type, true));
        }
        Self::with_rows(Arc::new(Schema::new(fields)), columns, rows.len())
    }
}

fn column_from_text(data_type: &DataType, text: &[Option<String>]) -> Result<ArrayRef> {
    let bad = |value: &str| PqsiftError::filter(format!("`{value}` is not a {data_type} value"));
    Ok(match data_type {
        DataType::Null => new_null_array(data_type, text.len()),
        DataType::Float32 | DataType::Float64 => {
            let parsed = text
                .iter()
                .map(|v| v.as_deref().map(|s| s.parse::<f64>().map_err(|_| bad(s))).transpose())
                .collect::<Result<Vec<_>>>()?;
            cast(&arrow::array::Float64Array::from(parsed), data_type)?
        }
        DataType::Date32 | DataType::Timestamp(_, _) => {
            let parsed = text
                .iter()
                .map(|v| v.as_deref().map(|s| s.parse::<i64>().map_err(|_| bad(s))).transpose())
                .collect::<Result<Vec<_>>>()?;
            let numbers = arrow::array::Int64Array::from(parsed);
            match data_type {
                DataType::Date32 => cast(&cast(&numbers, &DataType::Int32)?, data_type)?,
                _ => Arc::new(
                    arrow::array::TimestampMicrosecondArray::from(numbers.iter().collect::<Vec<_>>())
                        .with_data_type(data_type.clone()),
                ),
            }
        }
        DataType::Binary => {
            let parsed = text
                .iter()
                .map(|v| v.as_deref().map(|s| decode_hex(s).ok_or_else(|| bad(s))).transpose())
                .collect::<Result<Vec<_>>>()?;
            Arc::new(arrow::array::BinaryArray::from_iter(parsed))
        }
        _ => {
            let strings: ArrayRef = Arc::new(StringArray::from(text.to_vec()));
            let options = arrow::compute::CastOptions { safe: false, ..Default::default() };
            arrow::compute::cast_with_options(&strings, data_type, &options)?
        }
    })
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

/// The Spark SQL name of an Arrow type as a partition column has it (`int`, `bigint`,
/// `decimal(20,0)`, `timestamp`, `void`, ...).
///
/// ```
/// use arrow::datatypes::DataType;
/// use pqsift::table::partition_values::{parse_spark_type_name, spark_type_name};
/// assert_eq!(spark_type_name(&DataType::Decimal128(20, 0)), "decimal(20,0)");
/// assert_eq!(parse_spark_type_name("decimal(20,0)"), Some(DataType::Decimal128(20, 0)));
/// ```
pub fn spark_type_name(data_type: &DataType) -> String {
    match data_type {
        DataType::Null => "void".into(),
        DataType::Boolean => "boolean".into(),
        DataType::Int8 => "tinyint".into(),
        DataType::Int16 => "smallint".into(),
        DataType::Int32 => "int".into(),
        DataType::Int64 => "bigint".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Decimal128(p, s) => format!("decimal({p},{s})"),
        DataType::Date32 => "date".into(),
        DataType::Timestamp(_, Some(_)) => "timestamp".into(),
        DataType::Timestamp(_, None) => "timestamp_ntz".into(),
        DataType::Binary => "binary".into(),
        _ => "string".into(),
    }
}

/// The Arrow type of a Spark SQL type name of [`spark_type_name`].
pub fn parse_spark_type_name(name: &str) -> Option<DataType> {
    Some(match name {
        "void" => DataType::Null,
        "boolean" => DataType::Boolean,
        "tinyint" => DataType::Int8,
        "smallint" => DataType::Int16,
        "int" => DataType::Int32,
        "bigint" => DataType::Int64,
        "float" => DataType::Float32,
        "double" => DataType::Float64,
        "date" => DataType::Date32,
        "timestamp" => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        "timestamp_ntz" => DataType::Timestamp(TimeUnit::Microsecond, None),
        "binary" => DataType::Binary,
        "string" => DataType::Utf8,
        other => {
            let inner = other.strip_prefix("decimal(")?.strip_suffix(')')?;
            let (p, s) = inner.split_once(',')?;
            DataType::Decimal128(p.trim().parse().ok()?, s.trim().parse().ok()?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{FixedSizeBinaryArray, Time64MicrosecondArray};

    #[test]
    fn a_value_without_an_exact_literal_has_none() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("fixed", DataType::FixedSizeBinary(2), true),
            Field::new("time", DataType::Time64(TimeUnit::Microsecond), true),
        ]));
        let fixed = FixedSizeBinaryArray::try_from_iter([[0x68u8, 0x69]].into_iter()).unwrap();
        let values =
            PartitionValues::new(schema, vec![Arc::new(fixed), Arc::new(Time64MicrosecondArray::from(vec![5]))])
                .unwrap();
        // A fixed value is a BINARY literal: `fixed = 'hi'` holds on the file, as in Spark.
        assert_eq!(values.literal(0, 0), Some(Expr::Literal(Literal::Binary(b"hi".to_vec()))));
        // No Spark literal holds a time of day: the column is left, not replaced by NULL.
        assert_eq!(values.literal(1, 0), None);
    }
}
