//! INT96 timestamps the parquet crate decodes in nanoseconds, checked for the wrap.
//!
//! An INT96 value is a Julian day and the nanoseconds into it. Nanoseconds since 1970 in 64
//! bits reach only 1677-09-21 to 2262-04-11, and the crate wraps an instant outside that
//! range into another one without a word: `9999-12-31`, a common "no end" sentinel, reads
//! as `1816-03-29 05:56:08.066277376`. pqsift decodes top-level INT96 columns itself and
//! refuses such a value; INT96 leaves inside structs, lists and maps (and a top-level one
//! whose pages need the crate) are the crate's to decode. So where the crate decodes INT96
//! leaves in nanoseconds, they are decoded a second time in seconds — which never wrap: a
//! day count of 32 bits times 86,400 fits 64 bits with room to spare — and each value is
//! compared: a nanosecond value whose seconds are not the seconds decoded has wrapped.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{ArrayRef, TimestampNanosecondArray, TimestampSecondArray};
//! use pqsift::reading::int96_range::first_wrapped;
//! // 2020-01-01 in both units: no wrap.
//! let ns: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![1_577_836_800_000_000_123]));
//! let s: ArrayRef = Arc::new(TimestampSecondArray::from(vec![1_577_836_800]));
//! assert_eq!(first_wrapped(&ns, &s), None);
//! // 9999-12-31 in seconds, and what nanoseconds make of it: wrapped, into 1816.
//! let ns: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![-4_852_202_631_933_722_624]));
//! let s: ArrayRef = Arc::new(TimestampSecondArray::from(vec![253_402_214_400]));
//! assert_eq!(first_wrapped(&ns, &s), Some(253_402_214_400));
//! ```

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, TimeUnit, TimestampNanosecondType, TimestampSecondType};

/// Whether `data_type` holds a nanosecond timestamp at any depth (in a struct, list, or
/// map): a column whose INT96 leaves, if it has any, the crate decodes in nanoseconds.
pub fn holds_nanoseconds(data_type: &DataType) -> bool {
    holds(data_type, &|t| matches!(t, DataType::Timestamp(TimeUnit::Nanosecond, _)))
}

/// Whether `data_type` holds a map at any depth: a map is decoded only with its keys, so a
/// check of its INT96 values decodes the whole column.
pub fn holds_map(data_type: &DataType) -> bool {
    holds(data_type, &|t| matches!(t, DataType::Map(..)))
}

/// Whether `data_type`, or a type nested in it (struct fields, list items, map entries),
/// is `found`.
fn holds(data_type: &DataType, found: &dyn Fn(&DataType) -> bool) -> bool {
    found(data_type)
        || match data_type {
            DataType::Struct(fields) => fields.iter().any(|f| holds(f.data_type(), found)),
            DataType::List(field)
            | DataType::LargeList(field)
            | DataType::ListView(field)
            | DataType::LargeListView(field)
            | DataType::FixedSizeList(field, _)
            | DataType::Map(field, _) => holds(field.data_type(), found),
            _ => false,
        }
}

/// The first value of `nanoseconds` that wrapped, as its instant in seconds since 1970
/// (from `seconds`): the two are one column decoded twice, its INT96 leaves in nanoseconds
/// and in seconds, the same rows — the second decode perhaps of fewer struct fields (those
/// holding INT96 leaves), each found among the first's by name. `None`: no value wrapped.
///
/// The seconds decode rounds the nanoseconds within the day toward zero, where this divides
/// them rounding down: the two may differ by one second on a corrupt value whose nanoseconds
/// are negative. A wrap moves a value by 2⁶⁴ ns, more than 18 billion seconds.
pub fn first_wrapped(nanoseconds: &ArrayRef, seconds: &ArrayRef) -> Option<i64> {
    match (nanoseconds.data_type(), seconds.data_type()) {
        (DataType::Timestamp(TimeUnit::Nanosecond, _), DataType::Timestamp(TimeUnit::Second, _)) => {
            let (ns, s) =
                (nanoseconds.as_primitive::<TimestampNanosecondType>(), seconds.as_primitive::<TimestampSecondType>());
            (0..ns.len().min(s.len())).filter(|&i| ns.is_valid(i)).find_map(|i| {
                let (ns, s) = (ns.value(i), s.value(i));
                (ns.div_euclid(1_000_000_000).abs_diff(s) > 1).then_some(s)
            })
        }
        (DataType::Struct(ns_fields), DataType::Struct(s_fields)) => {
            // The check may decode fewer of the struct's fields (its INT96 leaves only):
            // each of its fields is found, in order, among the decoded ones.
            let (ns, s) = (nanoseconds.as_struct(), seconds.as_struct());
            let mut next = 0;
            s_fields.iter().zip(s.columns()).find_map(|(field, s)| {
                let kind = std::mem::discriminant(field.data_type());
                let at = (next..ns_fields.len()).find(|&i| {
                    ns_fields[i].name() == field.name() && std::mem::discriminant(ns_fields[i].data_type()) == kind
                })?;
                next = at + 1;
                first_wrapped(ns.column(at), s)
            })
        }
        (DataType::List(_), DataType::List(_)) => {
            first_wrapped(nanoseconds.as_list::<i32>().values(), seconds.as_list::<i32>().values())
        }
        (DataType::LargeList(_), DataType::LargeList(_)) => {
            first_wrapped(nanoseconds.as_list::<i64>().values(), seconds.as_list::<i64>().values())
        }
        (DataType::FixedSizeList(..), DataType::FixedSizeList(..)) => {
            first_wrapped(nanoseconds.as_fixed_size_list().values(), seconds.as_fixed_size_list().values())
        }
        (DataType::Map(..), DataType::Map(..)) => {
            let (ns, s) = (nanoseconds.as_map(), seconds.as_map());
            first_wrapped(ns.keys(), s.keys()).or_else(|| first_wrapped(ns.values(), s.values()))
        }
        _ => None,
    }
}

/// Why a column cannot be read in nanoseconds: its INT96 value at `seconds` since 1970.
pub fn wrap_reason(seconds: i64) -> String {
    let instant = chrono::DateTime::from_timestamp(seconds, 0)
        .map_or_else(|| format!("{seconds} s from 1970-01-01"), |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string());
    format!(
        "an INT96 timestamp, {instant}, is outside the range of timestamp[ns] (1677-09-21 to 2262-04-11), which \
         would wrap it into another instant; read it in microseconds (option coerce_int96_timestamp_unit)"
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        ArrayRef, Int32Array, ListArray, MapArray, StructArray, TimestampNanosecondArray, TimestampSecondArray,
    };
    use arrow::buffer::OffsetBuffer;
    use arrow::datatypes::{DataType, Field, Fields, TimeUnit};

    use super::*;

    const SENTINEL_S: i64 = 253_402_214_400; // 9999-12-31
    const WRAPPED_NS: i64 = (SENTINEL_S as i128 * 1_000_000_000) as i64;

    fn pair(ns: Vec<Option<i64>>, s: Vec<Option<i64>>) -> (ArrayRef, ArrayRef) {
        (Arc::new(TimestampNanosecondArray::from(ns)), Arc::new(TimestampSecondArray::from(s)))
    }

    #[test]
    fn the_sentinel_wraps_and_values_in_range_do_not() {
        assert_eq!(WRAPPED_NS.div_euclid(1_000_000_000), -4_852_202_632);
        let (ns, s) = pair(vec![Some(0), None, Some(WRAPPED_NS)], vec![Some(0), Some(SENTINEL_S), Some(SENTINEL_S)]);
        assert_eq!(first_wrapped(&ns, &s), Some(SENTINEL_S));
        // A null slot is not compared, whatever its value.
        let (ns, s) = pair(vec![None, Some(-1)], vec![Some(SENTINEL_S), Some(-1)]);
        assert_eq!(first_wrapped(&ns, &s), None);
        // The ends of nanoseconds' range, and a second's rounding apart.
        let (ns, s) = pair(
            vec![Some(i64::MAX), Some(i64::MIN), Some(-1)],
            vec![Some(i64::MAX / 1_000_000_000), Some(i64::MIN / 1_000_000_000), Some(0)],
        );
        assert_eq!(first_wrapped(&ns, &s), None);
    }

    #[test]
    fn nested_values_are_found_in_structs_lists_and_maps() {
        let (ns, s) = pair(vec![Some(1), Some(WRAPPED_NS)], vec![Some(0), Some(SENTINEL_S)]);
        let in_struct = |ts: ArrayRef| -> ArrayRef {
            let field = Field::new("ts", ts.data_type().clone(), true);
            Arc::new(StructArray::new(Fields::from(vec![field]), vec![ts], None))
        };
        assert_eq!(first_wrapped(&in_struct(ns.clone()), &in_struct(s.clone())), Some(SENTINEL_S));
        // The check decoded the timestamp field only, which the struct decoded holds
        // after another field.
        let wide = {
            let other: ArrayRef = Arc::new(Int32Array::from(vec![7, 8]));
            let fields = vec![Field::new("x", DataType::Int32, true), Field::new("ts", ns.data_type().clone(), true)];
            Arc::new(StructArray::new(Fields::from(fields), vec![other, ns.clone()], None)) as ArrayRef
        };
        assert_eq!(first_wrapped(&wide, &in_struct(s.clone())), Some(SENTINEL_S));
        let (fine, zeros) = pair(vec![Some(1), Some(2)], vec![Some(0), Some(0)]);
        assert_eq!(first_wrapped(&in_struct(fine), &in_struct(zeros)), None);
        let in_list = |ts: ArrayRef| -> ArrayRef {
            let field = Arc::new(Field::new("item", ts.data_type().clone(), true));
            Arc::new(ListArray::new(field, OffsetBuffer::from_lengths([2]), ts, None))
        };
        assert_eq!(first_wrapped(&in_list(ns.clone()), &in_list(s.clone())), Some(SENTINEL_S));
        let in_map = |ts: ArrayRef| -> ArrayRef {
            let keys: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
            let entries = StructArray::new(
                Fields::from(vec![
                    Field::new("key", DataType::Int32, false),
                    Field::new("value", ts.data_type().clone(), true),
                ]),
                vec![keys, ts],
                None,
            );
            let field = Arc::new(Field::new("entries", entries.data_type().clone(), false));
            Arc::new(MapArray::new(field, OffsetBuffer::from_lengths([2]), entries, None, false))
        };
        assert_eq!(first_wrapped(&in_map(ns.clone()), &in_map(s.clone())), Some(SENTINEL_S));
        // Only the types: a struct of a nanosecond timestamp holds nanoseconds.
        assert!(holds_nanoseconds(in_map(ns).data_type()));
        assert!(!holds_nanoseconds(in_map(s.clone()).data_type()));
        assert!(!holds_nanoseconds(&DataType::Timestamp(TimeUnit::Microsecond, None)));
        let list_of = |data_type: &DataType| DataType::List(Arc::new(Field::new("item", data_type.clone(), true)));
        assert!(holds_map(&list_of(in_map(s.clone()).data_type())));
        assert!(!holds_map(&list_of(in_struct(s).data_type())));
    }

    #[test]
    fn the_reason_names_the_instant_and_the_option() {
        let reason = wrap_reason(SENTINEL_S);
        assert!(reason.contains("9999-12-31 00:00:00 UTC"), "{reason}");
        assert!(reason.contains("coerce_int96_timestamp_unit"), "{reason}");
        assert!(wrap_reason(i64::MAX).contains("s from 1970-01-01"));
    }
}
