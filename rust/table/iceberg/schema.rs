//! An Iceberg schema (JSON) as the Arrow schema a scan declares: every field carries its
//! Iceberg field id as its Parquet field id, so that files are matched by id (renames,
//! columns dropped and re-added), and a physical name — the name a file without field ids
//! gives the column, from the table's `schema.name-mapping.default`, else the field's own
//! name. Types are read as Spark reads them (`timestamptz` as a UTC timestamp, `uuid` as its
//! text); a column added later with an `initial-default` (format 3) carries the default
//! as text for files written before it existed.
//!
//! ```
//! use pqsift::table::iceberg::schema::arrow_schema;
//! let schema: serde_json::Value = serde_json::from_str(r#"{"type":"struct","fields":[
//!     {"id":1,"name":"id","required":true,"type":"long"},
//!     {"id":2,"name":"price","required":false,"type":"decimal(9, 2)"}]}"#).unwrap();
//! let arrow = arrow_schema(&schema, None).unwrap();
//! assert_eq!(arrow.field(1).data_type(), &arrow::datatypes::DataType::Decimal128(9, 2));
//! assert_eq!(arrow.field(1).metadata()["PARQUET:field_id"], "2");
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, FixedSizeBinaryArray};
use arrow::datatypes::{DataType, Field, Fields, Schema, TimeUnit};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;
use serde_json::Value;

use crate::table::delta::schema::PHYSICAL_NAME_KEY;
use crate::table::delta::table::typed_column;

/// Field metadata holding a column's initial default as text (see [`arrow_schema`]).
pub const INITIAL_DEFAULT_KEY: &str = "pqsift.initial_default";

/// Field metadata marking an Iceberg `uuid` column: stored as 16 bytes, read as its
/// canonical text as Spark reads it (see [`crate::filter::uuid_text`]); a file's filter
/// reads the column's bytes through [`crate::filter::functions::UUID_TEXT`].
pub const UUID_KEY: &str = "pqsift.iceberg_uuid";

/// Whether `field` is an Iceberg `uuid` column (see [`UUID_KEY`]).
pub fn is_uuid(field: &Field) -> bool {
    field.metadata().contains_key(UUID_KEY)
}

/// The type a value of `field` has where Iceberg stores it (manifest bounds, partition
/// values, delete files): the declared type, but 16 bytes for a `uuid`.
pub fn stored_type(field: &Field) -> DataType {
    match is_uuid(field) {
        true => DataType::FixedSizeBinary(16),
        false => field.data_type().clone(),
    }
}

/// The table's name mapping: per field id, the names files without ids give it.
pub type NameMapping = HashMap<i64, String>;

/// Parses `schema.name-mapping.default` (a JSON list of `{field-id, names, fields}`).
pub fn name_mapping(text: &str) -> Option<NameMapping> {
    fn walk(entries: &[Value], out: &mut NameMapping) {
        for entry in entries {
            if let (Some(id), Some(name)) = (
                entry.get("field-id").and_then(Value::as_i64),
                entry.get("names").and_then(Value::as_array).and_then(|n| n.first()).and_then(Value::as_str),
            ) {
                out.insert(id, name.to_string());
            }
            if let Some(children) = entry.get("fields").and_then(Value::as_array) {
                walk(children, out);
            }
        }
    }
    let entries: Vec<Value> = serde_json::from_str(text).ok()?;
    let mut out = NameMapping::new();
    walk(&entries, &mut out);
    Some(out)
}

/// The Arrow schema of an Iceberg schema's JSON (see the module documentation).
pub fn arrow_schema(schema: &Value, mapping: Option<&NameMapping>) -> Result<Schema, String> {
    Ok(Schema::new(struct_fields(schema, mapping)?))
}

fn struct_fields(schema: &Value, mapping: Option<&NameMapping>) -> Result<Fields, String> {
    let fields = schema.get("fields").and_then(Value::as_array).ok_or("a struct without fields")?;
    fields
        .iter()
        .map(|field| {
            let id = field.get("id").and_then(Value::as_i64).ok_or("a field without an id")?;
            let name = field.get("name").and_then(Value::as_str).ok_or("a field without a name")?;
            let data_type = data_type(field.get("type").ok_or("a field without a type")?, mapping)?;
            let physical = mapping.and_then(|m| m.get(&id)).map_or(name, String::as_str);
            let mut metadata = HashMap::from([
                (PARQUET_FIELD_ID_META_KEY.to_string(), id.to_string()),
                (PHYSICAL_NAME_KEY.to_string(), physical.to_string()),
            ]);
            if let Some(default) = field.get("initial-default").and_then(|d| default_text(d, &data_type)) {
                metadata.insert(INITIAL_DEFAULT_KEY.to_string(), default);
            }
            if field.get("type").and_then(Value::as_str) == Some("uuid") {
                metadata.insert(UUID_KEY.to_string(), "true".to_string());
            }
            // Every field nullable: a file written before a column was added holds nulls.
            Ok(Arc::new(Field::new(name, data_type, true).with_metadata(metadata)))
        })
        .collect()
}

fn with_id(name: &str, data_type: DataType, id: Option<i64>) -> Field {
    let field = Field::new(name, data_type, true);
    match id {
        Some(id) => field.with_metadata(HashMap::from([(PARQUET_FIELD_ID_META_KEY.to_string(), id.to_string())])),
        None => field,
    }
}

/// The Arrow type of an Iceberg type.
pub fn data_type(value: &Value, mapping: Option<&NameMapping>) -> Result<DataType, String> {
    if let Some(name) = value.as_str() {
        return primitive(name);
    }
    match value.get("type").and_then(Value::as_str) {
        Some("struct") => Ok(DataType::Struct(struct_fields(value, mapping)?)),
        Some("list") => {
            let element = data_type(value.get("element").ok_or("a list without an element")?, mapping)?;
            let id = value.get("element-id").and_then(Value::as_i64);
            Ok(DataType::List(Arc::new(with_id("element", element, id))))
        }
        Some("map") => {
            let key = data_type(value.get("key").ok_or("a map without a key")?, mapping)?;
            let item = data_type(value.get("value").ok_or("a map without a value")?, mapping)?;
            let key = with_id("key", key, value.get("key-id").and_then(Value::as_i64)).with_nullable(false);
            let item = with_id("value", item, value.get("value-id").and_then(Value::as_i64));
            let entries = Field::new("key_value", DataType::Struct(Fields::from(vec![key, item])), false);
            Ok(DataType::Map(Arc::new(entries), false))
        }
        _ => Err(format!("an unknown type {value}")),
    }
}

fn primitive(name: &str) -> Result<DataType, String> {
    let utc = || Some(Arc::from("UTC"));
    Ok(match name {
        "boolean" => DataType::Boolean,
        "int" => DataType::Int32,
        "long" => DataType::Int64,
        "float" => DataType::Float32,
        "double" => DataType::Float64,
        "date" => DataType::Date32,
        "time" => DataType::Time64(TimeUnit::Microsecond),
        "timestamp" => DataType::Timestamp(TimeUnit::Microsecond, None),
        "timestamptz" => DataType::Timestamp(TimeUnit::Microsecond, utc()),
        "timestamp_ns" => DataType::Timestamp(TimeUnit::Nanosecond, None),
        "timestamptz_ns" => DataType::Timestamp(TimeUnit::Nanosecond, utc()),
        "string" => DataType::Utf8,
        "uuid" => DataType::Utf8,
        "binary" => DataType::Binary,
        "unknown" => DataType::Null,
        other => {
            if let Some(size) = other.strip_prefix("fixed[").and_then(|r| r.strip_suffix(']')) {
                DataType::FixedSizeBinary(size.trim().parse().map_err(|_| format!("an invalid type {other:?}"))?)
            } else if let Some(args) = other.strip_prefix("decimal(").and_then(|r| r.strip_suffix(')')) {
                let (precision, scale) = args.split_once(',').ok_or_else(|| format!("an invalid type {other:?}"))?;
                let precision: u8 = precision.trim().parse().map_err(|_| format!("an invalid type {other:?}"))?;
                let scale: i8 = scale.trim().parse().map_err(|_| format!("an invalid type {other:?}"))?;
                DataType::Decimal128(precision, scale)
            } else {
                return Err(format!("the type {other:?} is not supported"));
            }
        }
    })
}

/// An initial default (Iceberg's JSON single-value form) as the text
/// [`typed_column`](crate::table::delta::table::typed_column) parses for `data_type`;
/// `None` for a type whose default is not read (nested, binary kinds).
fn default_text(value: &Value, data_type: &DataType) -> Option<String> {
    match (value, data_type) {
        (Value::Null, _) => None,
        (Value::Bool(b), DataType::Boolean) => Some(b.to_string()),
        (Value::Number(n), _) => Some(n.to_string()),
        (Value::String(s), DataType::Timestamp(_, _)) => Some(s.replacen('T', " ", 1)),
        (Value::String(s), DataType::Utf8 | DataType::Decimal128(_, _) | DataType::Date32 | DataType::Time64(_)) => {
            Some(s.clone())
        }
        // Binary kinds as hex (Iceberg's JSON form), decoded when filled.
        (Value::String(s), DataType::Binary | DataType::FixedSizeBinary(_)) => Some(s.clone()),
        _ => None,
    }
}

/// One row of `field`'s initial default, from the text [`arrow_schema`] keeps: binary kinds
/// from Iceberg's hex, other types as
/// [`typed_column`](crate::table::delta::table::typed_column) parses them.
pub fn initial_default(field: &Field, text: &str) -> Result<ArrayRef, String> {
    let hex = || -> Result<Vec<u8>, String> {
        let invalid = || format!("{text:?} is not hex");
        if !text.is_ascii() || !text.len().is_multiple_of(2) {
            return Err(invalid());
        }
        (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|_| invalid())).collect()
    };
    match field.data_type() {
        DataType::Binary => Ok(Arc::new(BinaryArray::from_iter_values([hex()?]))),
        DataType::FixedSizeBinary(size) => {
            let bytes = hex()?;
            Ok(Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size([Some(bytes)].into_iter(), *size)
                    .map_err(|e| e.to_string())?,
            ))
        }
        data_type => typed_column(data_type, &[Some(text)], "UTC"),
    }
}
