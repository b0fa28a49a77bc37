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

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{
    DataType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type,
    UInt64Type,
};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use serde_json::{Map, Number, Value};

use super::actions::{Add, PartitionValueMap};
use super::deletion_vector::DeletionVectorDescriptor;
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
        DataType::Decimal32(_, _)
        | DataType::Decimal64(_, _)
        | DataType::Decimal128(_, _)
        | DataType::Decimal256(_, _) => display(array)?
            .into_iter()
            .map(|text| match text {
                Some(text) => text.parse::<Number>().map(Value::Number).unwrap_or(Value::String(text)),
                None => Value::Null,
            })
            .collect(),
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

/// The `add` actions of a checkpoint's `add` column read straight from its typed
/// children, without the JSON detour (which was most of a large log's replay): `path`,
/// `partitionValues`, `size`, `modificationTime`, `dataChange`, `stats`, `deletionVector`,
/// and `stats_parsed` (converted only when the checkpoint has it). Rows where `add` or its
/// path is null are not actions. `None` when a child has a type this reading does not
/// expect: the caller then takes the JSON route, which reads any layout.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{ArrayRef, Int64Array, StringArray, StructArray};
/// use arrow::datatypes::{DataType, Field};
/// use pqsift::table::delta::action_rows::adds_from_array;
/// let add = StructArray::from(vec![
///     (Arc::new(Field::new("path", DataType::Utf8, true)), Arc::new(StringArray::from(vec![Some("a"), None])) as ArrayRef),
///     (Arc::new(Field::new("size", DataType::Int64, true)), Arc::new(Int64Array::from(vec![Some(5), None])) as ArrayRef),
/// ]);
/// let adds = adds_from_array(&add).unwrap().unwrap();
/// assert_eq!((adds.len(), adds[0].path.as_str(), adds[0].size), (1, "a", 5));
/// ```
pub fn adds_from_array(array: &dyn Array) -> Option<Result<Vec<Add>>> {
    let add = array.as_struct_opt()?;
    let child = |name: &str| add.column_by_name(name);
    let paths = child_as(add, "path", &DataType::Utf8)??;
    let paths = paths.as_string::<i32>();
    let sizes = child_as(add, "size", &DataType::Int64)?;
    let times = child_as(add, "modificationTime", &DataType::Int64)?;
    let changes = child_as(add, "dataChange", &DataType::Boolean)?;
    let stats = child_as(add, "stats", &DataType::Utf8)?;
    let partitions = match child("partitionValues") {
        None => None,
        Some(column) => Some(string_map(column.as_ref())?),
    };
    let vectors = match child("deletionVector") {
        None => None,
        Some(column) => Some(DeletionVectors::of(column.as_ref())?),
    };
    let stats_parsed = match child("stats_parsed") {
        None => None,
        Some(column) => match convert(column.as_ref(), 1) {
            Ok(values) => Some(values),
            Err(e) => return Some(Err(e)),
        },
    };
    let long = |column: &Option<ArrayRef>, row: usize| {
        column
            .as_ref()
            .and_then(|c| c.as_primitive::<Int64Type>().is_valid(row).then(|| c.as_primitive::<Int64Type>().value(row)))
    };
    let mut adds = Vec::new();
    for row in 0..add.len() {
        if add.is_null(row) || paths.is_null(row) {
            continue;
        }
        let deletion_vector = match vectors.as_ref().map(|v| v.at(row)).transpose() {
            Ok(dv) => dv.flatten(),
            Err(e) => return Some(Err(e)),
        };
        adds.push(Add {
            path: paths.value(row).to_string(),
            partition_values: partitions.as_ref().map(|p| p[row].clone()).unwrap_or_default(),
            size: long(&sizes, row).unwrap_or(0),
            modification_time: long(&times, row).unwrap_or(0),
            data_change: changes.as_ref().is_some_and(|c| c.as_boolean().is_valid(row) && c.as_boolean().value(row)),
            stats: stats
                .as_ref()
                .and_then(|c| c.as_string::<i32>().is_valid(row).then(|| c.as_string::<i32>().value(row).to_string())),
            stats_parsed: stats_parsed.as_ref().map(|v| v[row].clone()).filter(|v| !v.is_null()),
            tags: None,
            deletion_vector,
            base_row_id: None,
            default_row_commit_version: None,
            clustering_provider: None,
        });
    }
    Some(Ok(adds))
}

/// The child `name` of `parent` cast to `to`: `Some(None)` when there is no such child,
/// `None` when it does not cast (a layout the typed reading does not know).
fn child_as(parent: &arrow::array::StructArray, name: &str, to: &DataType) -> Option<Option<ArrayRef>> {
    match parent.column_by_name(name) {
        None => Some(None),
        Some(column) => arrow::compute::cast(column, to).ok().map(Some),
    }
}

/// A map column of strings, one map per row (a null map: empty; a null value: `None`).
fn string_map(array: &dyn Array) -> Option<Vec<PartitionValueMap>> {
    let map = array.as_map_opt()?;
    let keys = arrow::compute::cast(map.keys(), &DataType::Utf8).ok()?;
    let values = arrow::compute::cast(map.values(), &DataType::Utf8).ok()?;
    let (keys, values) = (keys.as_string::<i32>(), values.as_string::<i32>());
    let offsets = map.value_offsets();
    Some(
        (0..map.len())
            .map(|row| {
                (offsets[row] as usize..offsets[row + 1] as usize)
                    .filter(|&i| keys.is_valid(i))
                    .map(|i| (keys.value(i).to_string(), values.is_valid(i).then(|| values.value(i).to_string())))
                    .collect()
            })
            .collect(),
    )
}

/// The children of a `deletionVector` struct column, typed.
struct DeletionVectors {
    present: arrow::array::StructArray,
    storage_type: ArrayRef,
    path_or_inline: ArrayRef,
    offset: Option<ArrayRef>,
    size: Option<ArrayRef>,
    cardinality: Option<ArrayRef>,
}

impl DeletionVectors {
    fn of(array: &dyn Array) -> Option<Self> {
        let present = array.as_struct_opt()?.clone();
        Some(Self {
            storage_type: child_as(&present, "storageType", &DataType::Utf8)??,
            path_or_inline: child_as(&present, "pathOrInlineDv", &DataType::Utf8)??,
            offset: child_as(&present, "offset", &DataType::Int32)?,
            size: child_as(&present, "sizeInBytes", &DataType::Int32)?,
            cardinality: child_as(&present, "cardinality", &DataType::Int64)?,
            present,
        })
    }

    /// The descriptor of `row`; an error when the struct is there without its storage type
    /// or path (the JSON route rejects it too: a deletion vector must never be dropped).
    fn at(&self, row: usize) -> Result<Option<DeletionVectorDescriptor>> {
        if self.present.is_null(row) {
            return Ok(None);
        }
        if self.storage_type.is_null(row) || self.path_or_inline.is_null(row) {
            return Err(crate::error::PqsiftError::Compute(format!(
                "add row {row}: a deletionVector without storageType or pathOrInlineDv"
            )));
        }
        let int = |c: &Option<ArrayRef>| {
            c.as_ref().and_then(|c| c.is_valid(row).then(|| c.as_primitive::<Int32Type>().value(row)))
        };
        Ok(Some(DeletionVectorDescriptor {
            storage_type: self.storage_type.as_string::<i32>().value(row).to_string(),
            path_or_inline_dv: self.path_or_inline.as_string::<i32>().value(row).to_string(),
            offset: int(&self.offset),
            size_in_bytes: int(&self.size).unwrap_or(0),
            cardinality: self
                .cardinality
                .as_ref()
                .and_then(|c| c.is_valid(row).then(|| c.as_primitive::<Int64Type>().value(row)))
                .unwrap_or(0),
        }))
    }
}
