//! Spark-compatible output: the Arrow types Spark accepts from `mapInArrow` and Python data
//! sources, which it does **not** cast (FACTS.md: an `int32` for `bigint`, a dictionary
//! array or `timestamp[ms]` fails the task at run time).
//!
//! The mapping follows what Spark's own Parquet reader infers for the same file, so a
//! pqsift DataFrame has the schema `spark.read.parquet` would give:
//!
//! | Parquet / Arrow                          | Spark               | Arrow sent to Spark     |
//! |------------------------------------------|---------------------|-------------------------|
//! | INT(8/16/32/64, signed)                  | byte/short/int/long | int8/16/32/64           |
//! | UINT8 / UINT16 / UINT32                  | short / int / long  | int16 / int32 / int64   |
//! | UINT64                                   | decimal(20,0)       | decimal128(20, 0)       |
//! | float16 / float / double                 | float / float / double | float32 / float32 / float64 |
//! | string (any Arrow layout, dictionary)    | string              | utf8                    |
//! | binary, fixed_len_byte_array             | binary              | binary                  |
//! | decimal(p ≤ 38, s)                       | decimal(p,s)        | decimal128(p, s)        |
//! | date                                     | date                | date32                  |
//! | timestamp, adjusted to UTC; INT96        | timestamp           | timestamp[us, UTC]      |
//! | timestamp, not adjusted to UTC           | timestamp_ntz       | timestamp[us]           |
//! | list / map / struct                      | array / map / struct | list / map / struct    |
//!
//! Every field is nullable, as in Spark's Parquet schema (map keys excepted). Nanosecond
//! timestamps are truncated to microseconds (Spark's native reader refuses them). Types
//! Spark has no equivalent for (time of day, intervals, decimals wider than 38 digits) are
//! rejected with [`PqsiftError::Unsupported`] naming the column.
//!
//! ```
//! use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
//! use pqsift::reading::spark_output::spark_schema;
//!
//! let file = Schema::new(vec![
//!     Field::new("id", DataType::UInt32, false),
//!     Field::new("ts", DataType::Timestamp(TimeUnit::Millisecond, Some("+00:00".into())), true),
//!     Field::new("kind", DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)), true),
//! ]);
//! let spark = spark_schema(&file, "t.parquet").unwrap();
//! assert_eq!(spark.field(0).data_type(), &DataType::Int64);
//! assert!(spark.field(0).is_nullable());
//! assert_eq!(spark.field(1).data_type(), &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())));
//! assert_eq!(spark.field(2).data_type(), &DataType::Utf8);
//! ```

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, SchemaRef, TimeUnit};

use crate::error::{PqsiftError, Result};

/// The Spark-compatible schema of `schema` (a file's Arrow schema, projected). A Parquet
/// INT96 timestamp (Spark's legacy UTC-adjusted one, which Arrow reads without a time
/// zone) must come labelled with its zone, as
/// [`filter_schema`](crate::format::opener::filter_schema) labels it: a timestamp without
/// one is Spark's `timestamp_ntz`. `path` names the file in errors.
pub fn spark_schema(schema: &Schema, path: &str) -> Result<SchemaRef> {
    let fields = schema
        .fields()
        .iter()
        .map(|field| {
            let data_type = spark_type(field.data_type()).map_err(|reason| {
                PqsiftError::Unsupported {
                    path: path.to_string(),
                    reason: format!("column `{}`: {reason}", field.name()),
                    column: None,
                }
                .about_column(crate::filter::ColumnPath::new([field.name().as_str()]).name())
            })?;
            Ok(Field::new(field.name(), data_type, true))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(Schema::new(fields)))
}

/// Casts `batch` to `target` (from [`spark_schema`] of the batch's schema), column by
/// column, with Arrow's cast kernels; columns already of the target type are not copied.
pub fn conform(batch: RecordBatch, target: &SchemaRef) -> Result<RecordBatch> {
    if batch.schema().fields() == target.fields() {
        return Ok(batch);
    }
    // Safe casts: a value that does not fit is an error, never a silent null.
    let options = CastOptions { safe: false, ..CastOptions::default() };
    let columns = batch
        .columns()
        .iter()
        .zip(target.fields())
        .map(|(column, field)| -> Result<ArrayRef> {
            if column.data_type() == field.data_type() {
                Ok(Arc::clone(column))
            } else if let (DataType::Timestamp(unit, None), DataType::Timestamp(target_unit, Some(zone))) =
                (column.data_type(), field.data_type())
                && unit == target_unit
            {
                // An INT96 root, already Spark's instants in Spark's unit: only the zone is named.
                Ok(arrow::array::make_array(
                    column
                        .to_data()
                        .into_builder()
                        .data_type(DataType::Timestamp(*unit, Some(Arc::clone(zone))))
                        .build()?,
                ))
            } else {
                cast_with_options(column, field.data_type(), &options).map_err(|e| {
                    PqsiftError::Compute(format!("column `{}` to Spark type {}: {e}", field.name(), field.data_type()))
                })
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(Arc::clone(target), columns, &options)?)
}

fn utc_micros() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// The Arrow type Spark accepts for values read as `data_type`, or why there is none.
fn spark_type(data_type: &DataType) -> Result<DataType, String> {
    use DataType::*;
    Ok(match data_type {
        Null | Boolean | Int8 | Int16 | Int32 | Int64 | Float32 | Float64 | Utf8 | Binary | Date32 => data_type.clone(),
        UInt8 => Int16,
        UInt16 => Int32,
        UInt32 => Int64,
        UInt64 => Decimal128(20, 0),
        Float16 => Float32,
        LargeUtf8 | Utf8View => Utf8,
        LargeBinary | BinaryView | FixedSizeBinary(_) => Binary,
        Decimal32(p, s) | Decimal64(p, s) | Decimal128(p, s) => Decimal128(*p, *s),
        Decimal256(p, s) if *p <= 38 => Decimal128(*p, *s),
        Date64 => Date32,
        Timestamp(_, Some(_)) => utc_micros(),
        Timestamp(_, None) => Timestamp(TimeUnit::Microsecond, None),
        Dictionary(_, values) => spark_type(values)?,
        List(item) | LargeList(item) | ListView(item) | LargeListView(item) | FixedSizeList(item, _) => {
            List(nullable_field(item)?)
        }
        Struct(fields) => Struct(fields.iter().map(nullable_field).collect::<Result<Fields, String>>()?),
        Map(entries, sorted) => Map(map_entries(entries)?, *sorted),
        other => return Err(format!("type {other} has no Spark equivalent")),
    })
}

fn nullable_field(field: &FieldRef) -> Result<FieldRef, String> {
    Ok(Arc::new(Field::new(field.name(), spark_type(field.data_type())?, true)))
}

/// Map entries keep a non-null key, as Spark's `MapType` requires.
fn map_entries(entries: &FieldRef) -> Result<FieldRef, String> {
    let DataType::Struct(fields) = entries.data_type() else {
        return Err(format!("map entries of type {}", entries.data_type()));
    };
    let [key, value] = fields.iter().collect::<Vec<_>>()[..] else {
        return Err("map entries without exactly a key and a value".to_string());
    };
    let key = Field::new(key.name(), spark_type(key.data_type())?, false);
    let value = Field::new(value.name(), spark_type(value.data_type())?, true);
    Ok(Arc::new(Field::new(entries.name(), DataType::Struct(Fields::from(vec![key, value])), false)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, DictionaryArray, Int32Array, StringArray, TimestampNanosecondArray, UInt64Array};
    use arrow::datatypes::Int32Type;

    #[test]
    fn conform_casts_each_column_to_the_spark_type() {
        let keys = Int32Array::from(vec![0, 1, 0]);
        let dict = DictionaryArray::<Int32Type>::try_new(keys, Arc::new(StringArray::from(vec!["a", "b"]))).unwrap();
        let batch = RecordBatch::try_from_iter([
            ("u", Arc::new(UInt64Array::from(vec![u64::MAX, 0, 7])) as ArrayRef),
            ("s", Arc::new(dict) as ArrayRef),
            (
                "t",
                Arc::new(TimestampNanosecondArray::from(vec![1_999, 2_000, -1_000]).with_timezone("+00:00"))
                    as ArrayRef,
            ),
        ])
        .unwrap();
        let target = spark_schema(&batch.schema(), "x").unwrap();
        let out = conform(batch, &target).unwrap();
        assert_eq!(out.schema(), target);
        assert_eq!(out.column(0).data_type(), &DataType::Decimal128(20, 0));
        let strings = out.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(strings.iter().collect::<Vec<_>>(), [Some("a"), Some("b"), Some("a")]);
        assert_eq!(out.column(2).len(), 3);
    }

    #[test]
    fn types_without_a_spark_equivalent_name_the_column() {
        let schema = Schema::new(vec![Field::new("t", DataType::Time64(TimeUnit::Microsecond), true)]);
        let error = spark_schema(&schema, "f.parquet").unwrap_err();
        assert!(matches!(error, PqsiftError::Unsupported { .. }));
        assert!(error.to_string().contains("f.parquet") && error.to_string().contains("`t`"), "{error}");
    }

    #[test]
    fn int96_roots_become_utc_timestamps() {
        // As filter_schema labels an INT96 root.
        let schema =
            Schema::new(vec![Field::new("t", DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())), true)]);
        let spark = spark_schema(&schema, "f").unwrap();
        assert_eq!(spark.field(0).data_type(), &utc_micros());
    }
}
