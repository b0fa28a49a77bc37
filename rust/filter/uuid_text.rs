//! UUIDs as Spark reads them: an Iceberg `uuid` column is stored as 16 bytes
//! (`FIXED_LEN_BYTE_ARRAY(16)`), and Spark (iceberg-spark) reads it as its canonical text —
//! 36 characters, lower-case hex with hyphens — so filters compare that text.
//!
//! Formatting keeps order: the text of 16 bytes sorts as the bytes do (unsigned), since
//! hex digits sort as their values and the hyphens stand at the same places. Bounds of the
//! bytes (a row group's statistics, a manifest's bounds) are bounds of the text.
//!
//! ```
//! use arrow::array::{AsArray, FixedSizeBinaryArray};
//! use pqsift::filter::uuid_text::{uuid_bytes, uuid_text};
//! let bytes = [0x15, 0x71, 0xef, 0xfb, 0xfa, 0xcd, 0x42, 0xa3, 0x90, 0xe9, 0x0a, 0xf5, 0x22, 0xe9, 0xb6, 0xc2];
//! let array = FixedSizeBinaryArray::try_from_sparse_iter_with_size([Some(bytes), None].into_iter(), 16).unwrap();
//! let text = uuid_text(&array);
//! assert_eq!(text.as_string::<i32>().value(0), "1571effb-facd-42a3-90e9-0af522e9b6c2");
//! assert!(text.is_null(1));
//! assert_eq!(uuid_bytes("1571effb-facd-42a3-90e9-0af522e9b6c2"), Some(bytes));
//! // Only the canonical text is a uuid's: Spark's column never holds another spelling.
//! assert_eq!(uuid_bytes("1571EFFB-FACD-42A3-90E9-0AF522E9B6C2"), None);
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use arrow::datatypes::DataType;
use uuid::Uuid;

/// The canonical text of each 16-byte value of `array` (`FixedSizeBinary` or `Binary`);
/// null for a null, a value of another length (a truncated bound says nothing exact) or
/// an array of another type.
pub fn uuid_text(array: &dyn Array) -> ArrayRef {
    let mut out = StringBuilder::with_capacity(array.len(), array.len() * 36);
    let mut buffer = [0u8; 36];
    let mut push = |value: Option<&[u8]>| match value.and_then(|v| <[u8; 16]>::try_from(v).ok()) {
        Some(bytes) => out.append_value(Uuid::from_bytes(bytes).hyphenated().encode_lower(&mut buffer)),
        None => out.append_null(),
    };
    match array.data_type() {
        DataType::FixedSizeBinary(_) => array.as_fixed_size_binary().iter().for_each(&mut push),
        DataType::Binary => array.as_binary::<i32>().iter().for_each(&mut push),
        DataType::LargeBinary => array.as_binary::<i64>().iter().for_each(&mut push),
        DataType::BinaryView => array.as_binary_view().iter().for_each(&mut push),
        _ => (0..array.len()).for_each(|_| push(None)),
    }
    Arc::new(out.finish())
}

/// The 16 bytes of a uuid's canonical text; `None` for any other text.
pub fn uuid_bytes(text: &str) -> Option<[u8; 16]> {
    let parsed = Uuid::try_parse(text).ok()?;
    let mut buffer = [0u8; 36];
    (parsed.hyphenated().encode_lower(&mut buffer) == text).then(|| parsed.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::FixedSizeBinaryArray;
    use proptest::prelude::*;

    proptest! {
        /// The text sorts as the bytes do, and reads back to them.
        #[test]
        fn text_keeps_the_order_of_the_bytes(a in any::<[u8; 16]>(), b in any::<[u8; 16]>()) {
            let array = FixedSizeBinaryArray::try_from_iter([a, b].into_iter()).unwrap();
            let text = uuid_text(&array);
            let text = text.as_string::<i32>();
            prop_assert_eq!(a.cmp(&b), text.value(0).cmp(text.value(1)));
            prop_assert_eq!(uuid_bytes(text.value(0)), Some(a));
        }
    }

    #[test]
    fn other_lengths_and_types_are_null() {
        let binary = arrow::array::BinaryArray::from_iter([Some(&[1u8; 15][..]), Some(&[2u8; 16][..])]);
        let text = uuid_text(&binary);
        assert!(text.is_null(0));
        assert_eq!(text.as_string::<i32>().value(1), "02020202-0202-0202-0202-020202020202");
        assert_eq!(uuid_text(&arrow::array::Int32Array::from(vec![1])).null_count(), 1);
        assert_eq!(uuid_bytes("not a uuid"), None);
    }
}
