//! Rows of a Parquet checkpoint (Arrow arrays) as the JSON values the same actions have in a
//! commit, so that one set of serde types ([`super::actions`]) reads both. Fields are taken by
//! name, so checkpoint schemas that differ between writers (`stats` or `stats_parsed`, a
//! `deletionVector` column or none, `partitionValues_parsed`) all read; a column the types do
//! not know is ignored by serde.
//!
//! Leaves: integers and floats → JSON numbers (non-finite floats → null), booleans, strings;
//! decimals → numbers; dates, timestamps and anything else → their Arrow display text (as
//! Delta writes dates and timestamps in JSON stats). Structs → objects, lists → arrays, maps →
//! objects keyed by the key's text.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{ArrayRef, Int64Array, StringArray, StructArray};
//! use arrow::datatypes::{DataType, Field};
//! use pqsift::table::delta::action_rows::array_to_json;
//! let add = StructArray::from(vec![
//!     (Arc::new(Field::new("path", DataType::Utf8, true)), Arc::new(StringArray::from(vec![Some("a"), None])) as ArrayRef),
//!     (Arc::new(Field::new("size", DataType::Int64, true)), Arc::new(Int64Array::from(vec![Some(5), None])) as ArrayRef),
//! ]);
//! let rows = array_to_json(&add).unwrap();
//! assert_eq!(rows[0], serde_json::json!({"path": "a", "size": 5}));
//! ```

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use serde_json::{Map, Number, Value};

use crate::error::Result;

/// Deepest nesting converted (deeper values become null).
const MAX_DEPTH: usize = 32;

/// One JSON value per row of `array` (`Value::Null` where the row is null).
pub fn array_to_json(array: &dyn Array) -> Result<Vec<Value>> {
    convert(array, 0)
}

fn convert(array: &dyn Array, depth: usize) -> Result<Vec<Value>> {
    let len = array.len();
    if depth > MAX_DEPTH {
        return Ok(vec![Value::Null; len]);
    }
    let mut values: Vec<Value> = match array.data_type() {
        DataType::Null => vec![Value::Null; len],
        DataType::Boolean => array.as_boolean().iter().map(|v| v.map_or(Value::Null, Value::Bool)).collect(),
        DataType::Int8 => ints(array.as_primitive::<Int8Type>().iter().map(|v| v.map(i64::from))),
        DataType::Int16 => ints(array.as_primitive::<Int16Type>().iter().map(|v| v.map(i64::from))),
        DataType::Int32 => ints(array.as_primitive::<Int32Type>().iter().map(|v| v.map(i64::from))),
        DataType::Int64 => ints(array.as_primitive::<Int64Type>().iter()),
        DataType::UInt8 => ints(array.as_primitive::<UInt8Type>().iter().map(|v| v.map(i64::from))),
        DataType::UInt16 => ints(array.as_primitive::<UInt16Type>().iter().map(|v| v.map(i64::from))),
        DataType::UInt32 => ints(array.as_primitive::<UInt32Type>().iter().map(|v| v.map(i64::from))),
        DataType::UInt64 => array
            .as_primitive::<UInt64Type>()
            .iter()
            .map(|v| v.map_or(Value::Null, |v| Value::Number(Number::from(v))))
            .collect(),
        DataType::Float32 => floats(array.as_primitive::<Float32Type>().iter().map(|v| v.map(f64::from))),
        DataType::Float64 => floats(array.as_primitive::<Float64Type>().iter()),
        DataType::Utf8 => strings(array.as_string::<i32>().iter()),
        DataType::LargeUtf8 => strings(array.as_string::<i64>().iter()),
        DataType::Utf8View => strings(array.as_string_view().iter()),
        DataType::Struct(fields) => {
            let structs = array.as_struct();
            let columns =
                structs.columns().iter().map(|c| convert(c.as_ref(), depth + 1)).collect::<Result<Vec<_>>>()?;
            (0..len)
                .map(|row| {
                    let mut object = Map::new();
                    for (field, column) in fields.iter().zip(&columns) {
                        let value = &column[row];
                        if !value.is_null() {
                            object.insert(field.name().clone(), value.clone());
                        }
                    }
                    Value::Object(object)
                })
                .collect()
        }
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let items = convert(list.values().as_ref(), depth + 1)?;
            let offsets = list.value_offsets();
            (0..len).map(|row| slice(&items, offsets[row] as usize, offsets[row + 1] as usize)).collect()
        }
        DataType::LargeList(_) => {
            let list = array.as_list::<i64>();
            let items = convert(list.values().as_ref(), depth + 1)?;
            let offsets = list.value_offsets();
            (0..len).map(|row| slice(&items, offsets[row] as usize, offsets[row + 1] as usize)).collect()
        }
        DataType::Map(_, _) => {
            let map = array.as_map();
            let keys = convert(map.keys().as_ref(), depth + 1)?;
            let values = convert(map.values().as_ref(), depth + 1)?;
            let offsets = map.value_offsets();
            (0..len)
                .map(|row| {
                    let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                    let mut object = Map::new();
                    for i in start..end.min(keys.len()).min(values.len()) {
                        let key = match &keys[i] {
                            Value::String(s) => s.clone(),
                            Value::Null => continue,
                            other => other.to_string(),
                        };
                        object.insert(key, values[i].clone());
                    }
                    Value::Object(object)
                })
                .collect()
        }
        DataType::Dictionary(_, value_type) => {
            let plain = arrow::compute::cast(array, value_type)?;
            return convert(plain.as_ref(), depth);
        }
        DataType::Decimal32(_, _) | DataType::Decimal64(_, _) | DataType::Decimal128(_, _) | DataType::Decimal256(_, _) => {
            display(array)?
                .into_iter()
                .map(|text| match text {
                    Some(text) => text.parse::<Number>().map(Value::Number).unwrap_or(Value::String(text)),
                    None => Value::Null,
                })
                .collect()
        }
        _ => display(array)?.into_iter().map(|t| t.map_or(Value::Null, Value::String)).collect(),
    };
    // Null rows of nested types were built as empty objects/arrays above.
    if array.null_count() > 0 {
        for (row, value) in values.iter_mut().enumerate() {
            if array.is_null(row) {
                *value = Value::Null;
            }
        }
    }
    Ok(values)
}

fn ints(values: impl Iterator<Item = Option<i64>>) -> Vec<Value> {
    values.map(|v| v.map_or(Value::Null, |v| Value::Number(Number::from(v)))).collect()
}

fn floats(values: impl Iterator<Item = Option<f64>>) -> Vec<Value> {
    values.map(|v| v.and_then(Number::from_f64).map_or(Value::Null, Value::Number)).collect()
}

fn strings<'a>(values: impl Iterator<Item = Option<&'a str>>) -> Vec<Value> {
    values.map(|v| v.map_or(Value::Null, |s| Value::String(s.to_string()))).collect()
}

fn slice(items: &[Value], start: usize, end: usize) -> Value {
    Value::Array(items.get(start..end).map(<[Value]>::to_vec).unwrap_or_default())
}

/// The display text of every row (`None` for null).
fn display(array: &dyn Array) -> Result<Vec<Option<String>>> {
    let options = FormatOptions::default();
    let formatter = ArrayFormatter::try_new(array, &options)?;
    Ok((0..array.len()).map(|row| array.is_valid(row).then(|| formatter.value(row).to_string())).collect())
}
