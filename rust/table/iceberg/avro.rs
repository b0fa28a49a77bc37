//! Avro object container files (manifest lists and manifests) read into values, and the
//! few accessors the manifest readers need over them. Fields are found by name, as the
//! Iceberg spec fixes the names of manifest fields; a union's branch is looked through.
//!
//! ```
//! use apache_avro::types::Value;
//! use pqsift::table::iceberg::avro::{field, as_long};
//! let record = Value::Record(vec![("n".into(), Value::Union(1, Box::new(Value::Long(7))))]);
//! assert_eq!(field(&record, "n").and_then(as_long), Some(7));
//! assert_eq!(field(&record, "missing").and_then(as_long), None);
//! ```

use apache_avro::types::Value;

use crate::error::{PqsiftError, Result};
use crate::storage::Location;

/// An Avro file's key-value metadata.
pub type FileMetadata = Vec<(String, Vec<u8>)>;

/// The records of an Avro object container file (`bytes`, read from `file` of the table
/// `table`), with the file's key-value metadata.
pub fn read_container(table: &Location, file: &Location, bytes: &[u8]) -> Result<(Vec<Value>, FileMetadata)> {
    let corrupt = |e: apache_avro::Error| PqsiftError::table(table, format!("{file}: not a readable Avro file: {e}"));
    let reader = apache_avro::Reader::new(bytes).map_err(corrupt)?;
    let metadata = reader.user_metadata().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut records = Vec::new();
    for record in reader {
        crate::interrupt::check()?;
        records.push(record.map_err(corrupt)?);
    }
    Ok((records, metadata))
}

/// The value a union holds, or the value itself.
pub fn unwrapped(value: &Value) -> &Value {
    match value {
        Value::Union(_, inner) => unwrapped(inner),
        other => other,
    }
}

/// The field `name` of a record (`None`: not a record, no such field, or null).
pub fn field<'a>(record: &'a Value, name: &str) -> Option<&'a Value> {
    let Value::Record(fields) = unwrapped(record) else { return None };
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| unwrapped(v)).filter(|v| !matches!(v, Value::Null))
}

/// An `int` or `long` as `i64`.
pub fn as_long(value: &Value) -> Option<i64> {
    match unwrapped(value) {
        Value::Int(v) => Some(i64::from(*v)),
        Value::Long(v) => Some(*v),
        _ => None,
    }
}

/// A string.
pub fn as_str(value: &Value) -> Option<&str> {
    match unwrapped(value) {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// A boolean.
pub fn as_bool(value: &Value) -> Option<bool> {
    match unwrapped(value) {
        Value::Boolean(b) => Some(*b),
        _ => None,
    }
}

/// Bytes (`bytes` or `fixed`).
pub fn as_bytes(value: &Value) -> Option<&[u8]> {
    match unwrapped(value) {
        Value::Bytes(b) | Value::Fixed(_, b) => Some(b),
        _ => None,
    }
}

/// An Iceberg map of int keys (an array of `{key, value}` records, or an Avro map whose
/// keys are the ints' text) as pairs.
pub fn int_map(value: &Value) -> Vec<(i32, &Value)> {
    match unwrapped(value) {
        Value::Array(items) => items
            .iter()
            .filter_map(|item| {
                let key = field(item, "key").and_then(as_long).and_then(|k| i32::try_from(k).ok())?;
                let Value::Record(fields) = unwrapped(item) else { return None };
                let value = fields.iter().find(|(n, _)| n == "value").map(|(_, v)| unwrapped(v))?;
                Some((key, value))
            })
            .collect(),
        Value::Map(map) => map.iter().filter_map(|(k, v)| Some((k.parse().ok()?, unwrapped(v)))).collect(),
        _ => Vec::new(),
    }
}
