//! A constant prefix or suffix tested on every row: `startswith`, `endswith`, and the LIKE
//! patterns `'abc%'` and `'%abc'`.
//!
//! Arrow's kernels compare a row's bytes one at a time (backwards, for a suffix), which on
//! values that share their last bytes (`... Safari/537.36`) costs a compare and a branch
//! per shared byte. Here a row's candidate bytes are first tested against eight of the
//! affix's as one word, those farthest from the value's end (where values that share an
//! end begin to differ), and only a row that passes that is compared in full. Spark compares
//! the UTF-8 bytes, as this does: a valid affix ends (a prefix) or starts (a suffix) on a
//! character boundary wherever it matches valid text.
//!
//! ```text
//! endswith(user_agent, 'Chrome/100.0.6012 Safari/537.36')
//!   row "… Firefox/118.0.6012 Safari/537.36": its last 31 bytes start "irefox/1", not "Chrome/1": false
//! ```

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, ByteView, GenericByteArray, GenericByteViewArray};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::{
    ArrowNativeType, BinaryType, BinaryViewType, ByteArrayType, ByteViewType, DataType, LargeBinaryType, LargeUtf8Type,
    StringViewType, Utf8Type,
};

/// Which end of the value the affix is tested at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Affix {
    /// The value starts with it.
    Prefix,
    /// The value ends with it.
    Suffix,
}

/// Whether each row of `values` (strings or binaries, plain or views) has `affix` at its
/// `end`; NULL where the row is NULL. `None` for any other type.
pub(super) fn affix_matches(values: &ArrayRef, affix: &[u8], end: Affix) -> Option<BooleanArray> {
    let matches = match values.data_type() {
        DataType::Utf8 => plain::<Utf8Type>(values.as_bytes(), affix, end),
        DataType::LargeUtf8 => plain::<LargeUtf8Type>(values.as_bytes(), affix, end),
        DataType::Binary => plain::<BinaryType>(values.as_bytes(), affix, end),
        DataType::LargeBinary => plain::<LargeBinaryType>(values.as_bytes(), affix, end),
        DataType::Utf8View => views::<StringViewType>(values.as_byte_view(), affix, end),
        DataType::BinaryView => views::<BinaryViewType>(values.as_byte_view(), affix, end),
        _ => return None,
    };
    Some(BooleanArray::new(matches, values.logical_nulls()))
}

/// The LIKE pattern `pattern` (with `\` as its escape) as an affix: `abc%` a prefix, `%abc`
/// a suffix, the affix unescaped. `None` for any other pattern (no wildcard, a wildcard
/// inside, `_`, or both ends). A pattern ending in an escaped `%` (`'abc\%'`) leaves a
/// dangling escape once its last `%` is taken off, and is refused so.
pub(super) fn like_affix(pattern: &str) -> Option<(String, Affix)> {
    let (body, end) = if let Some(body) = pattern.strip_prefix('%') {
        (body, Affix::Suffix)
    } else {
        (pattern.strip_suffix('%')?, Affix::Prefix)
    };
    let mut affix = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => affix.push(chars.next()?),
            '%' | '_' => return None,
            c => affix.push(c),
        }
    }
    Some((affix, end))
}

/// The test of one row's candidate bytes (the affix's length of them, at its end).
#[derive(Clone, Copy)]
struct Test<'a> {
    affix: &'a [u8],
    /// Eight bytes of the affix as a word, and where they lie in it, when it has eight:
    /// its last eight for a prefix, its first eight for a suffix. Values that share the
    /// affix's first bytes (`https://`) or last ones (`Safari/537.36`) differ, if at all,
    /// at its other end.
    word: Option<(usize, u64)>,
}

impl<'a> Test<'a> {
    fn new(affix: &'a [u8], end: Affix) -> Self {
        let at = match end {
            Affix::Prefix => affix.len().saturating_sub(8),
            Affix::Suffix => 0,
        };
        let word = affix.get(at..).and_then(|tail| tail.first_chunk::<8>()).map(|word| (at, u64::from_le_bytes(*word)));
        Self { affix, word }
    }

    /// Whether the value `value` has the affix at `end`.
    #[inline]
    fn value(self, value: &[u8], end: Affix) -> bool {
        let Some(at) = value.len().checked_sub(self.affix.len()) else { return false };
        let candidate = match end {
            Affix::Prefix => &value[..self.affix.len()],
            Affix::Suffix => &value[at..],
        };
        if let Some((at, word)) = self.word
            && let Some(bytes) = candidate[at..].first_chunk::<8>()
            && u64::from_le_bytes(*bytes) != word
        {
            return false;
        }
        candidate == self.affix
    }
}

fn plain<T: ByteArrayType>(values: &GenericByteArray<T>, affix: &[u8], end: Affix) -> BooleanBuffer {
    let test = Test::new(affix, end);
    let (offsets, data) = (values.value_offsets(), values.value_data());
    BooleanBuffer::collect_bool(values.len(), |row| {
        let (start, stop) = (offsets[row].as_usize(), offsets[row + 1].as_usize());
        test.value(&data[start..stop], end)
    })
}

fn views<T: ByteViewType + ?Sized>(values: &GenericByteViewArray<T>, affix: &[u8], end: Affix) -> BooleanBuffer {
    let test = Test::new(affix, end);
    let buffers = values.data_buffers();
    BooleanBuffer::collect_bool(values.len(), |row| {
        let view = values.views()[row];
        let length = view as u32 as usize;
        if length < affix.len() {
            return false;
        }
        if length <= 12 {
            let inline = view.to_le_bytes();
            return test.value(&inline[4..4 + length], end);
        }
        let view = ByteView::from(view);
        let start = view.offset as usize;
        test.value(&buffers[view.buffer_index as usize][start..start + length], end)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{BinaryArray, LargeStringArray, StringArray, StringViewArray};
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn like_patterns_of_one_affix() {
        assert_eq!(like_affix("abc%"), Some(("abc".into(), Affix::Prefix)));
        assert_eq!(like_affix("%abc"), Some(("abc".into(), Affix::Suffix)));
        assert_eq!(like_affix("%a\\%c"), Some(("a%c".into(), Affix::Suffix)));
        assert_eq!(like_affix("a\\\\%"), Some(("a\\".into(), Affix::Prefix)));
        assert_eq!(like_affix("%"), Some(("".into(), Affix::Suffix)));
        for other in ["abc", "%abc%", "a%c", "a_c%", "%a_", "abc\\%", "%a\\"] {
            assert_eq!(like_affix(other), None, "{other}");
        }
    }

    fn text() -> impl Strategy<Value = String> {
        // Few letters, so that affixes match, and lengths either side of 8 and 12.
        proptest::string::string_regex("[ab€]{0,20}").unwrap()
    }

    proptest! {
        /// Every string and binary encoding answers as `str::starts_with`/`ends_with`.
        #[test]
        fn affixes_match_as_the_standard_library(
            rows in proptest::collection::vec(proptest::option::weighted(0.9, text()), 0..50),
            affix in text(),
        ) {
            let arrays: Vec<ArrayRef> = vec![
                Arc::new(StringArray::from(rows.clone())),
                Arc::new(LargeStringArray::from(rows.clone())),
                Arc::new(StringViewArray::from(rows.clone())),
                Arc::new(BinaryArray::from(rows.iter().map(|r| r.as_deref().map(str::as_bytes)).collect::<Vec<_>>())),
            ];
            for end in [Affix::Prefix, Affix::Suffix] {
                let expected: Vec<Option<bool>> = rows
                    .iter()
                    .map(|row| row.as_ref().map(|row| match end {
                        Affix::Prefix => row.starts_with(&affix),
                        Affix::Suffix => row.ends_with(&affix),
                    }))
                    .collect();
                for array in &arrays {
                    let got: Vec<Option<bool>> = affix_matches(array, affix.as_bytes(), end).unwrap().iter().collect();
                    prop_assert_eq!(&got, &expected, "{:?} {:?} {}", end, affix, array.data_type());
                }
            }
        }
    }
}
