//! Strings copied out of dictionaries and views into plain Arrow strings, once.
//!
//! The reader decodes top-level strings and binaries as Arrow dictionaries (a chunk whose
//! pages are all dictionary-encoded: 4-byte keys per row, the strings once) or as views
//! (16 bytes per row pointing into the decompressed pages, no string copied); see
//! [`string_views`](crate::reading::string_views). When the output wants plain strings,
//! each row's value is copied out here, once, into a buffer of the exact size.
//!
//! Why not the crate's own decode to strings, or Arrow's `cast`: the crate appends each
//! value to a buffer that grows by doubling, so its reallocations copy and page-fault the
//! column again (for a 200-byte text column, a third of the read was the kernel zeroing
//! fresh pages); both it and `cast` copy each value with a `memcpy` call sized at run time,
//! which on an 8M-row column of 4–10-byte strings was half the read. Here the lengths are
//! summed first, the output allocated once, and a value of at most 16 bytes is copied as
//! one fixed 16-byte move (the buffers are padded for it).
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Array, ArrayRef, DictionaryArray, Int32Array, StringArray, StringViewArray};
//! use arrow::datatypes::{DataType, Int32Type};
//! use pqsift::reading::string_gather::to_plain;
//! let values = StringArray::from(vec!["eu", "a value longer than sixteen bytes"]);
//! let keys = Int32Array::from(vec![Some(1), None, Some(0)]);
//! let dictionary: ArrayRef = Arc::new(DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values)).unwrap());
//! let strings = to_plain(&dictionary, &DataType::Utf8).unwrap();
//! let expected = StringArray::from(vec![Some("a value longer than sixteen bytes"), None, Some("eu")]);
//! assert_eq!(strings.as_any().downcast_ref::<StringArray>().unwrap(), &expected);
//!
//! let views: ArrayRef = Arc::new(StringViewArray::from(vec![Some("a value longer than sixteen bytes"), None, Some("eu")]));
//! let strings = to_plain(&views, &DataType::Utf8).unwrap();
//! assert_eq!(strings.as_any().downcast_ref::<StringArray>().unwrap(), &expected);
//! ```

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, ByteView, DictionaryArray, GenericByteArray, GenericByteViewArray, MAX_INLINE_VIEW_LEN,
};
use arrow::buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{
    ArrowNativeType, BinaryType, BinaryViewType, ByteArrayType, ByteViewType, DataType, Int32Type, LargeBinaryType,
    LargeUtf8Type, StringViewType, Utf8Type,
};
use arrow::error::ArrowError;

/// Values up to this many bytes are copied as one fixed-size move.
const SHORT: usize = size_of::<u128>();

/// `array` (a dictionary with 32-bit keys, or a view array) as the plain type `to`
/// (strings or binaries with 32- or 64-bit offsets) it stands for. Errors on a key or a
/// view outside its data, or when the output would not fit its offsets. Anything else
/// (other types, a dictionary with null values) is cast by Arrow.
pub fn to_plain(array: &ArrayRef, to: &DataType) -> Result<ArrayRef, ArrowError> {
    if let Some(dictionary) = array.as_dictionary_opt::<Int32Type>() {
        let values = dictionary.values();
        // A Parquet dictionary page never holds a null value.
        if values.data_type() == to && values.null_count() == 0 {
            return match to {
                DataType::Utf8 => from_dictionary::<Utf8Type>(dictionary, values.as_string::<i32>()),
                DataType::LargeUtf8 => from_dictionary::<LargeUtf8Type>(dictionary, values.as_string::<i64>()),
                DataType::Binary => from_dictionary::<BinaryType>(dictionary, values.as_binary::<i32>()),
                DataType::LargeBinary => from_dictionary::<LargeBinaryType>(dictionary, values.as_binary::<i64>()),
                _ => arrow::compute::cast(array, to),
            };
        }
    }
    match (array.data_type(), to) {
        (DataType::Utf8View, DataType::Utf8) => from_views::<StringViewType, Utf8Type>(array.as_string_view()),
        (DataType::Utf8View, DataType::LargeUtf8) => {
            from_views::<StringViewType, LargeUtf8Type>(array.as_string_view())
        }
        (DataType::BinaryView, DataType::Binary) => from_views::<BinaryViewType, BinaryType>(array.as_binary_view()),
        (DataType::BinaryView, DataType::LargeBinary) => {
            from_views::<BinaryViewType, LargeBinaryType>(array.as_binary_view())
        }
        _ => arrow::compute::cast(array, to),
    }
}

fn from_dictionary<T: ByteArrayType>(
    dictionary: &DictionaryArray<Int32Type>,
    values: &GenericByteArray<T>,
) -> Result<ArrayRef, ArrowError> {
    let keys = dictionary.keys();
    let entries = values.len();
    let value_offsets = values.value_offsets();
    let first = value_offsets[0].as_usize();
    // Per entry: where it starts in `source` (below) and its length.
    let starts: Vec<usize> = value_offsets[..entries].iter().map(|o| o.as_usize() - first).collect();
    let lengths: Vec<usize> = value_offsets.windows(2).map(|w| w[1].as_usize() - w[0].as_usize()).collect();
    if let Some(strings) = from_short_dictionary::<T>(dictionary, values, &starts, &lengths) {
        return Ok(strings);
    }
    let length = |key: i32| lengths.get(key as u32 as usize).copied();
    let outside = |row: usize, key: i32| {
        ArrowError::InvalidArgumentError(format!("dictionary key {key} at row {row} is outside its {entries} values"))
    };
    let total = checked_total::<T, _>(keys.values(), keys.nulls(), length, outside)?;
    let source = padded_bytes(values);
    let source = source.as_ptr();
    // Slices, not the vectors: the loop's stores could alias a vector's fields, which
    // would then be loaded again every row.
    let (starts, lengths) = (&starts[..], &lengths[..]);
    // SAFETY: `checked_total` checked the key of every valid row, and summed `total` from
    // the same lengths; the source has 16 bytes past any value's start.
    Ok(unsafe {
        write::<T, i32>(keys.values(), keys.nulls(), total, move |&key, destination| {
            let entry = key as u32 as usize;
            let length = *lengths.get_unchecked(entry);
            copy_value(source.add(*starts.get_unchecked(entry)), destination, length, true);
            length
        })
    })
}

/// [`from_dictionary`] in one pass, for a dictionary whose values are all at most 16 bytes
/// and keys without nulls: the output sized for the longest value a row (at most 16 bytes
/// a row) instead of summed first, each value one 16-byte move. `None` where that does not
/// apply. (Two passes over the keys were most of the copy of short strings, profiled.) A key outside the dictionary reads an empty value and, once the loop is
/// done, sends the keys to the checked path (which names it).
fn from_short_dictionary<T: ByteArrayType>(
    dictionary: &DictionaryArray<Int32Type>,
    values: &GenericByteArray<T>,
    starts: &[usize],
    lengths: &[usize],
) -> Option<ArrayRef> {
    let keys = dictionary.keys();
    let longest = lengths.iter().copied().max().unwrap_or(0);
    if keys.null_count() > 0 || longest > SHORT {
        return None;
    }
    let capacity = keys.len().checked_mul(longest)?;
    T::Offset::from_usize(capacity)?;
    let source = padded_bytes(values);
    u32::try_from(source.len()).ok()?;
    // One more entry, empty, for a key outside.
    let outside = lengths.len();
    let table: Vec<(u32, u32)> =
        starts.iter().zip(lengths).map(|(&start, &length)| (start as u32, length as u32)).chain([(0, 0)]).collect();
    let mut out: Vec<u8> = Vec::with_capacity(capacity + SHORT);
    let mut offsets: Vec<T::Offset> = Vec::with_capacity(keys.len() + 1);
    offsets.push(T::Offset::usize_as(0));
    let (source, destination) = (source.as_ptr(), out.as_mut_ptr());
    let mut at = 0usize;
    let mut any_outside = false;
    for (&key, slot) in keys.values().iter().zip(offsets.spare_capacity_mut()) {
        any_outside |= key as u32 as usize >= outside;
        let (start, length) = table[(key as u32 as usize).min(outside)];
        // SAFETY: a start is inside the padded source (16 bytes readable from it); `at`
        // grows by at most `longest` a row, so `at + 16` stays inside `capacity + 16`.
        unsafe {
            destination
                .add(at)
                .cast::<u128>()
                .write_unaligned(source.add(start as usize).cast::<u128>().read_unaligned())
        };
        at += length as usize;
        slot.write(T::Offset::usize_as(at));
    }
    if any_outside {
        return None;
    }
    // SAFETY: a slot per key, and every byte below `at`, were written above.
    unsafe {
        offsets.set_len(keys.len() + 1);
        out.set_len(at);
    }
    // Sized for the longest value, at most 16 bytes a row (what a string view takes) and
    // not shrunk: a shrink moved the freed buffer into a smaller size class, so the next
    // read's reservation found no kept block of its own and grew one with fresh pages, and
    // the `mremap` that shrank it cost the other reading threads a TLB flush (measured by
    // an A/B of CPU time, see the commit that made it).
    // SAFETY: the offsets start at 0, never decrease and end at the buffer's length; each
    // value is a whole value of the dictionary.
    Some(unsafe { plain_array::<T>(offsets, out, None) })
}

/// The bytes of `values`' values, padded so that a 16-byte move from any value's start
/// stays inside.
fn padded_bytes<T: ByteArrayType>(values: &GenericByteArray<T>) -> Vec<u8> {
    let value_offsets = values.value_offsets();
    let (first, end) = (value_offsets[0].as_usize(), value_offsets[values.len()].as_usize());
    let mut bytes = Vec::with_capacity(end - first + SHORT);
    bytes.extend_from_slice(&values.value_data()[first..end]);
    bytes.resize(bytes.len() + SHORT, 0);
    bytes
}

fn from_views<V: ByteViewType, T: ByteArrayType>(views: &GenericByteViewArray<V>) -> Result<ArrayRef, ArrowError> {
    let buffers = views.data_buffers();
    let length = |view: u128| {
        let length = view as u32 as usize;
        if length > MAX_INLINE_VIEW_LEN as usize {
            let view = ByteView::from(view);
            let fits =
                buffers.get(view.buffer_index as usize).is_some_and(|b| view.offset as usize + length <= b.len());
            if !fits {
                return None;
            }
        }
        Some(length)
    };
    let outside = |row: usize, _: u128| {
        ArrowError::InvalidArgumentError(format!("the view at row {row} points outside its buffers"))
    };
    let total = checked_total::<T, _>(views.views(), views.nulls(), length, outside)?;
    // SAFETY: `checked_total` checked every valid row's view, and summed `total` from the
    // same lengths.
    Ok(unsafe {
        write::<T, u128>(views.views(), views.nulls(), total, |&view, destination| {
            let length = view as u32 as usize;
            if length <= MAX_INLINE_VIEW_LEN as usize {
                // The value is the view's last 12 bytes: one 16-byte store of them (and zeros).
                destination.cast::<u128>().write_unaligned(view >> 32);
            } else {
                let view = ByteView::from(view);
                let buffer = buffers.get_unchecked(view.buffer_index as usize);
                let offset = view.offset as usize;
                copy_value(buffer.as_ptr().add(offset), destination, length, offset + SHORT <= buffer.len());
            }
            length
        })
    })
}

/// The output's size: the sum of `length(item)` over the valid rows (a null row, whatever
/// its item, is empty); `invalid(row, item)` for the first valid row whose item `length`
/// refuses (`None`), or an error if the size exceeds `T`'s offsets.
fn checked_total<T: ByteArrayType, I: Copy>(
    items: &[I],
    nulls: Option<&NullBuffer>,
    length: impl Fn(I) -> Option<usize>,
    invalid: impl Fn(usize, I) -> ArrowError,
) -> Result<usize, ArrowError> {
    let mut total = 0usize;
    match nulls.filter(|n| n.null_count() > 0) {
        None => {
            // Without the row in the loop (it is found again on failure): kept in a
            // register, it spilled to memory every row.
            let mut refused = false;
            for &item in items {
                match length(item) {
                    Some(length) => total += length,
                    None => {
                        refused = true;
                        break;
                    }
                }
            }
            if refused {
                let row = items.iter().position(|&item| length(item).is_none()).expect("a refused item");
                return Err(invalid(row, items[row]));
            }
        }
        Some(nulls) => {
            for row in nulls.valid_indices() {
                total += length(items[row]).ok_or_else(|| invalid(row, items[row]))?;
            }
        }
    }
    match T::Offset::from_usize(total) {
        Some(_) => Ok(total),
        None => Err(ArrowError::OffsetOverflowError(total)),
    }
}

/// The plain array of `items` (`total` bytes, [`checked_total`]'s): per valid row,
/// `copy(item, destination)` writes the value at `destination` and returns its length.
///
/// # Safety
/// `copy` is only called for valid rows, with a destination that has room for the value
/// plus 16 bytes; it must write at most its value plus 16 bytes and return the value's
/// length, and those lengths must sum to `total`.
unsafe fn write<T: ByteArrayType, I>(
    items: &[I],
    nulls: Option<&NullBuffer>,
    total: usize,
    copy: impl Fn(&I, *mut u8) -> usize,
) -> ArrayRef {
    let mut out: Vec<u8> = Vec::with_capacity(total + SHORT);
    let destination = out.as_mut_ptr();
    let mut offsets: Vec<T::Offset> = Vec::with_capacity(items.len() + 1);
    offsets.push(T::Offset::usize_as(0));
    // Plain loops with the running offset in a local: through a closure's `&mut` it went
    // to memory and back every row (a store-to-load wait a row, a third of the loop).
    // Rows are written in order: a 16-byte move's spill past its value is overwritten by
    // the next value, and nothing past `total` is exposed.
    let slots = &mut offsets.spare_capacity_mut()[..items.len()];
    let mut at = 0usize;
    match nulls.filter(|n| n.null_count() > 0) {
        None => {
            for (item, slot) in items.iter().zip(slots.iter_mut()) {
                at += copy(item, unsafe { destination.add(at) });
                slot.write(T::Offset::usize_as(at));
            }
        }
        Some(nulls) => {
            for ((item, slot), valid) in items.iter().zip(slots.iter_mut()).zip(nulls.iter()) {
                if valid {
                    at += copy(item, unsafe { destination.add(at) });
                }
                slot.write(T::Offset::usize_as(at));
            }
        }
    }
    // SAFETY: a slot per item was written above.
    unsafe { offsets.set_len(items.len() + 1) };
    assert_eq!(at, total, "the values written differ from the sizes summed");
    // SAFETY: every byte below `total` was written (the values tile it).
    unsafe { out.set_len(total) };
    // SAFETY: the offsets start at 0, never decrease and end at `total`, the buffer's
    // length; each value is a whole value of the source array.
    unsafe { plain_array::<T>(offsets, out, nulls.cloned()) }
}

/// The plain array of `offsets` into `bytes`, with `nulls`, not validated again.
///
/// # Safety
/// The offsets start at 0, never decrease and end at `bytes.len()`; each value they bound
/// is a whole value of an array already validated as `T` (UTF-8 for strings), so
/// re-validating every byte would only cost time.
unsafe fn plain_array<T: ByteArrayType>(
    offsets: Vec<T::Offset>,
    bytes: Vec<u8>,
    nulls: Option<NullBuffer>,
) -> ArrayRef {
    // SAFETY: the caller's guarantee.
    let array = unsafe {
        let offsets = OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets));
        GenericByteArray::<T>::new_unchecked(offsets, Buffer::from_vec(bytes), nulls)
    };
    Arc::new(array)
}

/// Copies `length` bytes from `source` to `destination`; as one 16-byte move when the
/// value is short and `source` has 16 bytes readable (`padded`).
///
/// # Safety
/// `source` holds `length` bytes (16 when `padded` and the value is short), and
/// `destination` has room for `length` bytes plus 16.
#[inline(always)]
unsafe fn copy_value(source: *const u8, destination: *mut u8, length: usize, padded: bool) {
    unsafe {
        if length <= SHORT && padded {
            // One unaligned 16-byte load and store: as a `copy_nonoverlapping` of 16 the
            // compiler merges both branches into one `memcpy` of variable size.
            destination.cast::<u128>().write_unaligned(source.cast::<u128>().read_unaligned());
        } else {
            std::ptr::copy_nonoverlapping(source, destination, length);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{BinaryArray, BinaryViewArray, Int32Array, LargeStringArray, StringArray, StringViewArray};
    use proptest::prelude::*;

    fn dictionary(values: ArrayRef, keys: Vec<Option<i32>>) -> ArrayRef {
        Arc::new(DictionaryArray::<Int32Type>::try_new(Int32Array::from(keys), values).unwrap())
    }

    /// `to_plain` and Arrow's cast give the same array.
    fn assert_like_cast(array: &ArrayRef, to: &DataType) {
        let ours = to_plain(array, to).unwrap();
        let arrow = arrow::compute::cast(array, to).unwrap();
        assert_eq!(ours.to_data(), arrow.to_data(), "{:?} to {to:?}", array.data_type());
    }

    const LONG: &str = "a value of more than sixteen bytes, ünïcode";

    #[test]
    fn dictionaries_equal_arrow_cast_for_each_value_type() {
        let keys = vec![Some(2), Some(0), None, Some(1), Some(2), Some(3)];
        let arrays: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec!["a", "", LONG, "bc"])),
            Arc::new(LargeStringArray::from(vec!["a", "", LONG, "bc"])),
            Arc::new(BinaryArray::from(vec![&b"\0\xff"[..], b"", LONG.as_bytes(), b"x"])),
        ];
        for values in arrays {
            let to = values.data_type().clone();
            assert_like_cast(&dictionary(values, keys.clone()), &to);
        }
    }

    #[test]
    fn views_equal_arrow_cast_for_each_target() {
        let strings: ArrayRef = Arc::new(StringViewArray::from(vec![
            Some("twelve bytes"),
            None,
            Some(LONG),
            Some(""),
            Some("thirteen byte"),
        ]));
        assert_like_cast(&strings, &DataType::Utf8);
        assert_like_cast(&strings, &DataType::LargeUtf8);
        let binaries: ArrayRef =
            Arc::new(BinaryViewArray::from(vec![Some(&b"\0\xff"[..]), None, Some(LONG.as_bytes())]));
        assert_like_cast(&binaries, &DataType::Binary);
        assert_like_cast(&binaries, &DataType::LargeBinary);
    }

    #[test]
    fn short_values_keep_the_buffer_reserved_for_them() {
        // Reserved at the longest value a row and not shrunk: freed, the buffer is found
        // again by the next read of the same size, which a shrink would have moved it below.
        let rows = 100_000;
        let keys = (0..rows).map(|row| Some((row % 3) as i32)).collect();
        let values: ArrayRef = Arc::new(StringArray::from(vec!["a", "bc", "sixteen bytes!!!"]));
        let strings = to_plain(&dictionary(values, keys), &DataType::Utf8).unwrap();
        let strings = strings.as_string::<i32>();
        assert_eq!(strings.value(2), "sixteen bytes!!!");
        assert_eq!(strings.values().len(), (rows / 3) * 19 + 1);
        assert_eq!(strings.values().capacity(), rows * 16 + SHORT);
    }

    #[test]
    fn a_key_outside_the_dictionary_is_an_error() {
        let values: ArrayRef = Arc::new(StringArray::from(vec!["a"]));
        let keys = Int32Array::from(vec![0, -1]);
        // Built without the bounds check, as a decoder could.
        let dictionary: ArrayRef = Arc::new(unsafe { DictionaryArray::<Int32Type>::new_unchecked(keys, values) });
        let error = to_plain(&dictionary, &DataType::Utf8).unwrap_err().to_string();
        assert!(error.contains("dictionary key -1 at row 1"), "{error}");
    }

    #[test]
    fn a_view_outside_its_buffers_is_an_error() {
        let valid = StringViewArray::from(vec![LONG]);
        let mut view = ByteView::from(valid.views()[0]);
        view.offset += 1;
        let views = vec![valid.views()[0], view.as_u128()];
        // SAFETY (of the test): the view is read only through `to_plain`, which checks it.
        let broken =
            unsafe { StringViewArray::new_unchecked(views.into(), valid.data_buffers().to_vec().into(), None) };
        let error = to_plain(&(Arc::new(broken) as ArrayRef), &DataType::Utf8).unwrap_err().to_string();
        assert!(error.contains("the view at row 1 points outside its buffers"), "{error}");
    }

    #[test]
    fn null_values_are_left_to_arrow() {
        let values: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None]));
        let ours = to_plain(&dictionary(values, vec![Some(1), Some(0)]), &DataType::Utf8).unwrap();
        assert_eq!(ours.as_string::<i32>(), &StringArray::from(vec![None, Some("a")]));
    }

    #[test]
    fn a_sliced_dictionary_keeps_its_values() {
        let values = StringArray::from(vec!["skipped", "kept value longer than sixteen", "k"]);
        let values: ArrayRef = Arc::new(values.slice(1, 2));
        let ours = to_plain(&dictionary(values, vec![Some(1), Some(0)]), &DataType::Utf8).unwrap();
        assert_eq!(ours.as_string::<i32>(), &StringArray::from(vec!["k", "kept value longer than sixteen"]));
    }

    #[test]
    fn sliced_views_and_keys_keep_their_rows() {
        let views: ArrayRef = Arc::new(StringViewArray::from(vec![Some("skipped"), None, Some(LONG), Some("k")]));
        assert_like_cast(&views.slice(1, 3), &DataType::Utf8);
        let dictionary =
            dictionary(Arc::new(StringArray::from(vec!["a", LONG])), vec![Some(0), None, Some(1), Some(0)]);
        assert_like_cast(&dictionary.slice(1, 3), &DataType::Utf8);
    }

    proptest! {
        #[test]
        fn equals_arrow_cast(
            entries in proptest::collection::vec(proptest::option::of("\\PC{0,40}"), 1..20),
            picks in proptest::collection::vec(proptest::option::of(0usize..64), 0..200),
        ) {
            let values: ArrayRef = Arc::new(StringArray::from(entries.clone().into_iter().map(|e| e.unwrap_or_default()).collect::<Vec<_>>()));
            let keys: Vec<Option<i32>> = picks.iter().map(|p| p.map(|p| (p % entries.len()) as i32)).collect();
            assert_like_cast(&dictionary(values, keys), &DataType::Utf8);
            let rows: Vec<Option<String>> = picks.iter().map(|p| p.and_then(|p| entries[p % entries.len()].clone())).collect();
            let views: ArrayRef = Arc::new(StringViewArray::from(rows));
            assert_like_cast(&views, &DataType::Utf8);
        }

        /// Dictionaries of short values (at most 16 bytes) and keys without nulls: copied
        /// in one pass, to the same array.
        #[test]
        fn short_values_equal_arrow_cast(
            entries in proptest::collection::vec("\\PC{0,4}", 1..20),
            picks in proptest::collection::vec(0usize..64, 0..300),
        ) {
            let keys: Vec<Option<i32>> = picks.iter().map(|p| Some((p % entries.len()) as i32)).collect();
            let values: ArrayRef = Arc::new(StringArray::from(entries.clone()));
            assert_like_cast(&dictionary(values, keys.clone()), &DataType::Utf8);
            let values: ArrayRef = Arc::new(LargeStringArray::from(entries));
            assert_like_cast(&dictionary(values, keys), &DataType::LargeUtf8);
        }
    }
}
