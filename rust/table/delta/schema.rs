//! The table schema: `metaData.schemaString` (Delta's JSON serialization of a Spark
//! `StructType`) as an Arrow [`Schema`] — the logical schema, in its order — and the column
//! mapping mode of `metaData.configuration`.
//!
//! Types: `byte/short/integer/long` → Int8..Int64, `float/double`, `boolean`, `binary`,
//! `string` → Utf8, `date` → Date32, `timestamp` → Timestamp(µs, "UTC"), `timestamp_ntz` →
//! Timestamp(µs, none), `decimal(p,s)` → Decimal128, `void` → Null; `struct`, `array`
//! (item `element`) and `map` (entries `key_value` of `key`/`value`, as the Parquet files
//! hold them). Field metadata is kept, strings as they are and other JSON values as JSON
//! text; under column mapping `delta.columnMapping.physicalName` and `delta.columnMapping.id`
//! are there, and the id is also put as `PARQUET:field_id` (the parquet crate's key).
//!
//! ```
//! use arrow::datatypes::{DataType, TimeUnit};
//! use pqsift::table::delta::schema::parse_schema;
//! let schema = parse_schema("/t", r#"{"type":"struct","fields":[
//!     {"name":"ts","type":"timestamp","nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-1"}},
//!     {"name":"d","type":"decimal(10,2)","nullable":false,"metadata":{}}]}"#).unwrap();
//! assert_eq!(schema.field(0).data_type(), &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())));
//! assert_eq!(schema.field(0).metadata()["delta.columnMapping.physicalName"], "col-1");
//! assert_eq!(schema.field(0).metadata()["delta.columnMapping.id"], "3");
//! assert_eq!(schema.field(1).data_type(), &DataType::Decimal128(10, 2));
//! assert!(!schema.field(1).is_nullable());
//! ```

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use serde_json::Value;

use crate::error::{PqsiftError, Result};

/// Field metadata key of a column's physical name under column mapping.
pub const PHYSICAL_NAME_KEY: &str = "delta.columnMapping.physicalName";
/// Field metadata key of a column's id under column mapping.
pub const COLUMN_ID_KEY: &str = "delta.columnMapping.id";
/// The configuration key of the column mapping mode.
pub const COLUMN_MAPPING_MODE_KEY: &str = "delta.columnMapping.mode";

/// How data file columns are matched to the schema's.
///
/// ```
/// use std::collections::BTreeMap;
/// use pqsift::table::delta::schema::ColumnMappingMode;
/// let config = BTreeMap::from([("delta.columnMapping.mode".to_string(), "name".to_string())]);
/// assert_eq!(ColumnMappingMode::from_configuration("/t", &config).unwrap(), ColumnMappingMode::Name);
/// assert_eq!(ColumnMappingMode::from_configuration("/t", &BTreeMap::new()).unwrap(), ColumnMappingMode::None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColumnMappingMode {
    /// By the logical name.
    #[default]
    None,
    /// By `delta.columnMapping.physicalName`.
    Name,
    /// By Parquet field id (`delta.columnMapping.id`).
    Id,
}

impl ColumnMappingMode {
    /// The mode set in a table's configuration (`none` when absent).
    pub fn from_configuration(table: &str, configuration: &BTreeMap<String, String>) -> Result<Self> {
        match configuration.get(COLUMN_MAPPING_MODE_KEY).map(|m| m.to_ascii_lowercase()).as_deref() {
            None | Some("none") => Ok(Self::None),
            Some("name") => Ok(Self::Name),
            Some("id") => Ok(Self::Id),
            Some(other) => Err(PqsiftError::unsupported(table, format!("column mapping mode {other:?}"))),
        }
    }
}

/// `schema_string` (of the table at `table`, named in errors) as an Arrow schema.
///
/// An empty `schema_string` (a `metaData` without one, as in some of Delta's log-only test
/// tables) is a schema of no columns.
pub fn parse_schema(table: &str, schema_string: &str) -> Result<SchemaRef> {
    if schema_string.trim().is_empty() {
        return Ok(Arc::new(Schema::empty()));
    }
    let value: Value = serde_json::from_str(schema_string)
        .map_err(|e| PqsiftError::table(table, format!("metaData.schemaString is not JSON: {e}")))?;
    match parse_type(table, &value, 0)? {
        DataType::Struct(fields) => Ok(Arc::new(Schema::new(fields))),
        other => Err(PqsiftError::table(table, format!("metaData.schemaString is a {other}, not a struct"))),
    }
}

/// The physical name of `field` under `mode` (its logical name when unmapped).
///
/// ```
/// use arrow::datatypes::{DataType, Field};
/// use pqsift::table::delta::schema::{ColumnMappingMode, physical_name};
/// let field = Field::new("a", DataType::Int32, true).with_metadata(std::collections::HashMap::from(
///     [("delta.columnMapping.physicalName".to_string(), "col-x".to_string())]));
/// assert_eq!(physical_name(&field, ColumnMappingMode::Name), "col-x");
/// assert_eq!(physical_name(&field, ColumnMappingMode::None), "a");
/// ```
pub fn physical_name(field: &Field, mode: ColumnMappingMode) -> &str {
    match mode {
        ColumnMappingMode::None => field.name(),
        ColumnMappingMode::Name | ColumnMappingMode::Id => {
            field.metadata().get(PHYSICAL_NAME_KEY).map(String::as_str).unwrap_or(field.name())
        }
    }
}

/// Deepest nesting accepted (a bound on recursion over untrusted input).
const MAX_DEPTH: usize = 64;

fn parse_type(table: &str, value: &Value, depth: usize) -> Result<DataType> {
    if depth > MAX_DEPTH {
        return Err(PqsiftError::table(table, "metaData.schemaString nests too deeply"));
    }
    let bad = |what: &str| PqsiftError::table(table, format!("metaData.schemaString: {what}"));
    match value {
        Value::String(name) => primitive(table, name),
        Value::Object(object) => match object.get("type").and_then(Value::as_str) {
            Some("struct") => {
                let fields =
                    object.get("fields").and_then(Value::as_array).ok_or_else(|| bad("a struct without fields"))?;
                let fields = fields.iter().map(|f| parse_field(table, f, depth + 1)).collect::<Result<Vec<_>>>()?;
                Ok(DataType::Struct(Fields::from(fields)))
            }
            Some("array") => {
                let element = parse_type(
                    table,
                    object.get("elementType").ok_or_else(|| bad("an array without elementType"))?,
                    depth + 1,
                )?;
                let nullable = object.get("containsNull").and_then(Value::as_bool).unwrap_or(true);
                Ok(DataType::List(Arc::new(Field::new("element", element, nullable))))
            }
            Some("map") => {
                let key =
                    parse_type(table, object.get("keyType").ok_or_else(|| bad("a map without keyType"))?, depth + 1)?;
                let value = parse_type(
                    table,
                    object.get("valueType").ok_or_else(|| bad("a map without valueType"))?,
                    depth + 1,
                )?;
                let nullable = object.get("valueContainsNull").and_then(Value::as_bool).unwrap_or(true);
                let entries = Field::new(
                    "key_value",
                    DataType::Struct(Fields::from(vec![
                        Field::new("key", key, false),
                        Field::new("value", value, nullable),
                    ])),
                    false,
                );
                Ok(DataType::Map(Arc::new(entries), false))
            }
            Some(other) => Err(PqsiftError::unsupported(table, format!("Delta type {other:?}"))),
            None => Err(bad("a type object without \"type\"")),
        },
        other => Err(bad(&format!("unexpected type {other}"))),
    }
}

fn parse_field(table: &str, value: &Value, depth: usize) -> Result<Field> {
    let bad = |what: &str| PqsiftError::table(table, format!("metaData.schemaString: {what}"));
    let name = value.get("name").and_then(Value::as_str).ok_or_else(|| bad("a field without a name"))?;
    let data_type =
        parse_type(table, value.get("type").ok_or_else(|| bad(&format!("field {name:?} has no type")))?, depth)?;
    let nullable = value.get("nullable").and_then(Value::as_bool).unwrap_or(true);
    let mut metadata = HashMap::new();
    if let Some(Value::Object(entries)) = value.get("metadata") {
        for (key, value) in entries {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            metadata.insert(key.clone(), text);
        }
    }
    if let Some(id) = metadata.get(COLUMN_ID_KEY).cloned() {
        metadata.entry(parquet::arrow::PARQUET_FIELD_ID_META_KEY.to_string()).or_insert(id);
    }
    Ok(Field::new(name, data_type, nullable).with_metadata(metadata))
}

fn primitive(table: &str, name: &str) -> Result<DataType> {
    Ok(match name {
        "string" => DataType::Utf8,
        "long" => DataType::Int64,
        "integer" => DataType::Int32,
        "short" => DataType::Int16,
        "byte" => DataType::Int8,
        "float" => DataType::Float32,
        "double" => DataType::Float64,
        "boolean" => DataType::Boolean,
        "binary" => DataType::Binary,
        "date" => DataType::Date32,
        "timestamp" => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        "timestamp_ntz" => DataType::Timestamp(TimeUnit::Microsecond, None),
        "void" => DataType::Null,
        decimal if decimal.starts_with("decimal") => parse_decimal(decimal)
            .ok_or_else(|| PqsiftError::table(table, format!("metaData.schemaString: bad decimal type {decimal:?}")))?,
        other => return Err(PqsiftError::unsupported(table, format!("Delta type {other:?}"))),
    })
}

/// `decimal(p,s)` (spaces allowed); a bare `decimal` is Spark's default `decimal(10,0)`.
fn parse_decimal(text: &str) -> Option<DataType> {
    let rest = text.strip_prefix("decimal")?.trim();
    if rest.is_empty() {
        return Some(DataType::Decimal128(10, 0));
    }
    let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
    let (p, s) = inner.split_once(',')?;
    let (p, s): (u8, i8) = (p.trim().parse().ok()?, s.trim().parse().ok()?);
    (1..=38).contains(&p).then_some(())?;
    (0..=p as i8).contains(&s).then_some(DataType::Decimal128(p, s))
}
