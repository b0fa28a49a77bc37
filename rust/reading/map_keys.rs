//! A map decoded with a null key is refused: the Parquet MAP type requires its keys, and
//! an Arrow map holds no null key or entry — Arrow C++ (pyarrow) checks as much when it
//! imports one, and aborts the process if not. A footer can still declare a map's key
//! optional (the crate then decodes the key's levels as written, a null where they say
//! so), so the decoded maps are looked at before they leave the reader.
//!
//! Arrow's own constructors refuse such a map, so only the crate's decode makes one: the
//! check is tested through it (`tests/test_hostile.py`); here, maps without a null pass.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Int32Array, MapArray, StringArray, StructArray};
//! use arrow::buffer::OffsetBuffer;
//! use arrow::datatypes::{DataType, Field, Fields};
//! use pqsift::reading::map_keys::null_in_maps;
//!
//! // One map row of two entries.
//! let keys = Arc::new(StringArray::from(vec!["a", "b"])) as _;
//! let values = Arc::new(Int32Array::from(vec![Some(1), None])) as _;
//! let fields = Fields::from(vec![Field::new("key", DataType::Utf8, false), Field::new("value", DataType::Int32, true)]);
//! let entries = StructArray::new(fields.clone(), vec![keys, values], None);
//! let field = Arc::new(Field::new("entries", DataType::Struct(fields), false));
//! let map = MapArray::new(field, OffsetBuffer::new(vec![0, 2].into()), entries, None, false);
//! assert_eq!(null_in_maps(&map), None);
//! ```

use arrow::array::{Array, AsArray};
use arrow::datatypes::DataType;

/// What is null that an Arrow map cannot hold — a key, or an entry — in `array` or in an
/// array nested in it (struct fields, list items, map keys and values); `None` where
/// nothing is. Only the types holding a map are walked.
pub fn null_in_maps(array: &dyn Array) -> Option<&'static str> {
    if !crate::reading::int96_range::holds_map(array.data_type()) {
        return None;
    }
    match array.data_type() {
        DataType::Map(..) => {
            let map = array.as_map();
            if map.entries().null_count() > 0 {
                return Some("a map entry is null");
            }
            if map.keys().null_count() > 0 {
                return Some("a map key is null (a Parquet map's keys are required)");
            }
            null_in_maps(map.keys().as_ref()).or_else(|| null_in_maps(map.values().as_ref()))
        }
        DataType::Struct(_) => array.as_struct().columns().iter().find_map(|column| null_in_maps(column.as_ref())),
        DataType::List(_) => null_in_maps(array.as_list::<i32>().values().as_ref()),
        DataType::LargeList(_) => null_in_maps(array.as_list::<i64>().values().as_ref()),
        DataType::ListView(_) => null_in_maps(array.as_list_view::<i32>().values().as_ref()),
        DataType::LargeListView(_) => null_in_maps(array.as_list_view::<i64>().values().as_ref()),
        DataType::FixedSizeList(..) => null_in_maps(array.as_fixed_size_list().values().as_ref()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int32Array, ListArray, MapArray, StringArray, StructArray};
    use arrow::buffer::OffsetBuffer;
    use arrow::datatypes::{Field, Fields};

    use super::*;

    #[test]
    fn maps_without_nulls_pass_at_any_depth() {
        let keys = Arc::new(StringArray::from(vec!["a"])) as ArrayRef;
        let values = Arc::new(Int32Array::from(vec![None])) as ArrayRef;
        let fields =
            Fields::from(vec![Field::new("key", DataType::Utf8, false), Field::new("value", DataType::Int32, true)]);
        let entries = StructArray::new(fields.clone(), vec![keys, values], None);
        let field = Arc::new(Field::new("entries", DataType::Struct(fields), false));
        let map =
            Arc::new(MapArray::new(field, OffsetBuffer::new(vec![0, 1].into()), entries, None, false)) as ArrayRef;
        // The map as the item of a list, inside a struct; a column without a map.
        let item = Arc::new(Field::new("item", map.data_type().clone(), true));
        let list = Arc::new(ListArray::new(item, OffsetBuffer::new(vec![0, 1].into()), map, None)) as ArrayRef;
        let row =
            StructArray::new(Fields::from(vec![Field::new("l", list.data_type().clone(), true)]), vec![list], None);
        assert_eq!(null_in_maps(&row), None);
        assert_eq!(null_in_maps(&Int32Array::from(vec![Some(1), None])), None);
    }
}
