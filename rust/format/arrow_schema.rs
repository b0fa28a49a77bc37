//! The Arrow schema a file is read as, from its Parquet schema and embedded Arrow schema.

use std::sync::Arc;

use arrow::datatypes::{DataType, FieldRef, Schema};
use parquet::arrow::parquet_to_arrow_schema;
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::FileMetaData;

/// The Arrow schema a file is read as: the parquet crate's reading of its Parquet schema
/// and embedded Arrow schema, without the dictionary hints the crate cannot decode.
///
/// An Arrow writer records that a column was a dictionary; the crate then decodes it as
/// one, but its fixed-length byte array reader builds dictionaries of byte values only
/// (pyarrow's `dictionary<values=decimal128>` column is stored as FIXED_LEN_BYTE_ARRAY and
/// fails with "unsupported data type for byte array dictionary reader"). Such a column is
/// read as its values.
///
/// ```
/// # use std::sync::Arc;
/// # use arrow::array::{Decimal128Array, DictionaryArray, Int32Array, RecordBatch};
/// # use arrow::datatypes::{DataType, Int32Type};
/// # use parquet::arrow::ArrowWriter;
/// # use parquet::file::metadata::ParquetMetaDataReader;
/// # use parquet::file::properties::WriterProperties;
/// use pqsift::format::arrow_schema::readable_arrow_schema;
/// # let values = Decimal128Array::from(vec![125, 250]).with_precision_and_scale(20, 2).unwrap();
/// # let column = DictionaryArray::<Int32Type>::try_new(Int32Array::from(vec![0, 1, 0]), Arc::new(values)).unwrap();
/// # let batch = RecordBatch::try_from_iter([("price", Arc::new(column) as _)]).unwrap();
/// # let mut bytes = Vec::new();
/// # let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
/// # writer.write(&batch).unwrap();
/// # writer.close().unwrap();
/// # let metadata = ParquetMetaDataReader::new().parse_and_finish(&bytes::Bytes::from(bytes)).unwrap();
/// // A dictionary of DECIMAL(20,2), stored as FIXED_LEN_BYTE_ARRAY: read as the decimals.
/// let schema = readable_arrow_schema(metadata.file_metadata()).unwrap();
/// assert_eq!(schema.field(0).data_type(), &DataType::Decimal128(20, 2));
/// ```
pub fn readable_arrow_schema(file_metadata: &FileMetaData) -> parquet::errors::Result<Schema> {
    let schema = parquet_to_arrow_schema(file_metadata.schema_descr(), file_metadata.key_value_metadata())?;
    Ok(without_undecodable_dictionaries(file_metadata, &schema).unwrap_or(schema))
}

fn without_undecodable_dictionaries(file_metadata: &FileMetaData, schema: &Schema) -> Option<Schema> {
    let roots = file_metadata.schema_descr().root_schema().get_fields();
    let undecodable = |root: usize, data_type: &DataType| -> bool {
        let DataType::Dictionary(_, values) = data_type else { return false };
        let byte_values = matches!(
            values.as_ref(),
            DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
                | DataType::FixedSizeBinary(_)
                | DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
        );
        let fixed_len = roots
            .get(root)
            .is_some_and(|t| t.is_primitive() && t.get_physical_type() == PhysicalType::FIXED_LEN_BYTE_ARRAY);
        fixed_len && !byte_values
    };
    if !schema.fields().iter().enumerate().any(|(i, f)| undecodable(i, f.data_type())) {
        return None;
    }
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, field)| match field.data_type() {
            DataType::Dictionary(_, values) if undecodable(i, field.data_type()) => {
                Arc::new(field.as_ref().clone().with_data_type(values.as_ref().clone()))
            }
            _ => field.clone(),
        })
        .collect();
    Some(Schema::new_with_metadata(fields, schema.metadata().clone()))
}
