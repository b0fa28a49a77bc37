//! The sink of strings and binaries as Arrow views (`Utf8View`, `BinaryView`): the
//! selected rows' values pointed at where they lie, not copied.
//!
//! A view is 16 bytes: a value of up to 12 bytes inline, a longer one as its length, its
//! first 4 bytes and where it lies in one of the array's buffers. A PLAIN page most of
//! whose values are wanted becomes one of those buffers (decompressed into a buffer of its
//! own, not the reused one) and its values are pointed at; a page few of whose values are
//! wanted has those copied into a buffer sized for them, so that a selective read does not
//! keep whole pages alive for a few rows. A dictionary page becomes a buffer too, its
//! entries' views made once, and a dictionary-encoded page's rows take them by key.
//!
//! Strings are checked as UTF-8 as the crate's view decoder checks them: a PLAIN length
//! below 128 is four ASCII bytes, so a run of values with such lengths is checked in one
//! call, lengths and all (a value ending inside a character, or starting inside one, meets
//! ASCII), and the run is cut before a longer length.

use arrow::array::builder::make_view;
use arrow::array::{BinaryViewArray, StringViewArray};

use super::strings::{NULL_ROW, dictionary_encoded, wanted_rows};
use super::*;

/// A view of a value of `length` bytes at `start` in a page's `data`: for a value longer
/// than 12 bytes, in the array's buffer `buffer` at `offset`.
#[inline]
fn view_of(data: &[u8], start: usize, length: usize, buffer: u32, offset: usize) -> u128 {
    make_view(&data[start..start + length], buffer, offset as u32)
}

/// The UTF-8 check of a PLAIN page's values, in runs (see the module's doc).
struct Utf8Runs {
    /// Where the run not yet checked begins.
    begin: usize,
    on: bool,
}

impl Utf8Runs {
    fn new(on: bool) -> Self {
        Self { begin: 0, on }
    }

    /// Before the value whose 4-byte length `length` is at `at` of `data`: a length of 128
    /// or more may not be UTF-8, so the run before it is checked, and the next begins after.
    #[inline]
    fn length(&mut self, data: &[u8], at: usize, length: usize) -> Result<(), DecodeError> {
        if self.on && length >= 128 {
            check_utf8(&data[self.begin..at], self.begin)?;
            self.begin = at + 4;
        }
        Ok(())
    }

    /// Checks the run left, up to `end` (the end of the last value walked).
    fn finish(&mut self, data: &[u8], end: usize) -> Result<(), DecodeError> {
        if self.on && end > self.begin {
            check_utf8(&data[self.begin..end], self.begin)?;
        }
        Ok(())
    }
}

/// `bytes` (from byte `at` of a page's values) as UTF-8.
fn check_utf8(bytes: &[u8], at: usize) -> Result<(), DecodeError> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(_) => Ok(()),
        Err(_) => {
            let valid = std::str::from_utf8(bytes).err().map_or(0, |e| e.valid_up_to());
            Err(DecodeError::Corrupt(format!("a value is not UTF-8 (byte {} of a page's values)", at + valid)))
        }
    }
}

/// The value whose length is at `at` of a PLAIN page's `data`: where its bytes start and
/// how many; `None` where they run past the page.
#[inline]
fn value_at(data: &[u8], at: usize) -> Option<(usize, usize)> {
    let length = u32::from_le_bytes(data.get(at..at + 4)?.try_into().expect("4 bytes")) as usize;
    (data.len() - (at + 4) >= length).then_some((at + 4, length))
}

/// Views of the selected rows (`views`), over the buffers they point into.
pub(super) struct ViewsOutput {
    views: Vec<u128>,
    buffers: Vec<Buffer>,
    validity: Option<BooleanBufferBuilder>,
    /// The views of the dictionary page's entries (the page is one of `buffers`).
    dictionary: Option<Vec<u128>>,
    /// A page's dictionary indices, reused from page to page.
    indices: Vec<u32>,
    /// A page's selected rows: the stored index of each one's value, or [`NULL_ROW`].
    wanted: Vec<u32>,
    /// Each long value of a page copied out: its view's place, and where it lies.
    copied: Vec<(usize, usize, usize)>,
    /// Strings (UTF-8 checked), not binaries.
    utf8: bool,
}

impl ViewsOutput {
    pub(super) fn new(selected: usize, nullable: bool, arrow_type: &DataType) -> Self {
        let reserve = selected.min(MAX_RESERVED_VALUES);
        Self {
            views: Vec::with_capacity(reserve),
            buffers: Vec::new(),
            validity: nullable.then(|| BooleanBufferBuilder::new(reserve)),
            dictionary: None,
            indices: Vec::new(),
            wanted: Vec::new(),
            copied: Vec::new(),
            utf8: *arrow_type == DataType::Utf8View,
        }
    }

    pub(super) fn finish(mut self) -> ArrayRef {
        let nulls = self.validity.as_mut().map(|v| NullBuffer::new(v.finish())).filter(|n| n.null_count() > 0);
        let views = ScalarBuffer::from(self.views);
        let buffers: Arc<[Buffer]> = self.buffers.into();
        // SAFETY: every view is inline or points inside its buffer (made by `make_view` from
        // the bytes it points at, at their place); strings were checked as UTF-8 where they
        // lie (`Utf8Runs`) before a view of them was kept.
        match self.utf8 {
            true => Arc::new(unsafe { StringViewArray::new_unchecked(views, buffers, nulls) }),
            false => Arc::new(unsafe { BinaryViewArray::new_unchecked(views, buffers, nulls) }),
        }
    }

    /// The next buffer's index; `None`: past what a view can name.
    fn next_buffer(&self) -> Option<u32> {
        u32::try_from(self.buffers.len()).ok().filter(|&b| b < u32::MAX)
    }

    /// The wanted rows of a PLAIN page `data` (its `stored` values), most of them wanted:
    /// pointed at in `data`, which becomes one of the buffers. `false`: the page is longer
    /// than a view's offset reaches.
    fn point_into(&mut self, data: bytes::Bytes, stored: usize) -> Result<bool, DecodeError> {
        let (Some(buffer), true) = (self.next_buffer(), u32::try_from(data.len()).is_ok()) else { return Ok(false) };
        let mut pointed = false;
        let mut page = PageValues::Ready(data.clone());
        walk(&self.wanted, &mut self.views, &mut page, stored, self.utf8, |_, start, length, data| {
            pointed |= length > 12;
            view_of(data, start, length, buffer, start)
        })?;
        if pointed {
            self.buffers.push(Buffer::from(data));
        }
        Ok(true)
    }

    /// The wanted rows of a PLAIN page few of whose `stored` values are wanted: the page is
    /// walked (decompressed) up to the last wanted value, and the long values copied into a
    /// buffer holding just them.
    fn copy_out(&mut self, values: &mut PageValues<'_>, stored: usize) -> Result<bool, DecodeError> {
        let Some(buffer) = self.next_buffer() else { return Ok(false) };
        let mut bytes = 0usize;
        let copied = &mut self.copied;
        copied.clear();
        let at = walk(&self.wanted, &mut self.views, values, stored, self.utf8, |slot, start, length, data| {
            if length > 12 {
                copied.push((slot, start, length));
                bytes += length;
            }
            // (Pointed at the copy below.)
            view_of(data, start, length, 0, 0)
        })?;
        if bytes > 0 {
            // (The walk above ended at the last wanted value: nothing is decompressed here.)
            let data = values.prefix(at)?;
            let Ok(_) = u32::try_from(bytes) else { return Ok(false) };
            let mut out = Vec::with_capacity(bytes);
            for &(view, start, length) in &self.copied {
                self.views[view] = view_of(data, start, length, buffer, out.len());
                out.extend_from_slice(&data[start..start + length]);
            }
            self.buffers.push(Buffer::from_vec(out));
        }
        Ok(true)
    }

    /// The wanted rows from a dictionary-encoded page's `stored` indices (`whole`: every
    /// row, or enough of them, is wanted: the indices are decoded in one pass).
    fn looked_up(&mut self, values: &[u8], stored: usize, whole: bool) -> Result<(), DecodeError> {
        let dictionary = self
            .dictionary
            .as_deref()
            .ok_or_else(|| DecodeError::Corrupt("a dictionary-encoded page without a dictionary page".into()))?;
        let len = dictionary.len();
        let mut keys = PageKeys::new(values, stored, len, whole, &mut self.indices)?;
        for &want in &self.wanted {
            let view = match want {
                NULL_ROW => 0,
                _ => dictionary[keys.get(want as usize, len)? as usize],
            };
            self.views.push(view);
        }
        Ok(())
    }
}

/// Walks a PLAIN page's `stored` values (`values`, decompressed as far as the walk goes) to
/// each `wanted` row's, checked as UTF-8 on the way when `utf8` ([`Utf8Runs`]): a null row's
/// view is empty, a value's is `view(its slot in views, start, length, the page so far)`.
/// Answers where the walk ended (after the last wanted value).
fn walk(
    wanted: &[u32],
    views: &mut Vec<u128>,
    values: &mut PageValues<'_>,
    stored: usize,
    utf8: bool,
    mut view: impl FnMut(usize, usize, usize, &[u8]) -> u128,
) -> Result<usize, DecodeError> {
    let short = || DecodeError::Corrupt(format!("a page's {stored} values run past its end"));
    let mut utf8 = Utf8Runs::new(utf8);
    let mut data = values.prefix(0)?;
    // The value at `at` (its length first) is the `index`-th stored.
    let (mut at, mut index) = (0usize, 0u32);
    for &want in wanted {
        if want == NULL_ROW {
            views.push(0);
            continue;
        }
        if want as usize >= stored {
            return Err(short());
        }
        let (start, length) = loop {
            if data.len() < at + 4 {
                data = values.prefix(at + 4)?;
            }
            let length = data.get(at..at + 4).ok_or_else(short)?;
            let length = u32::from_le_bytes(length.try_into().expect("4 bytes")) as usize;
            let end = (at + 4).checked_add(length).ok_or_else(short)?;
            if data.len() < end {
                data = values.prefix(end)?;
            }
            if data.len() < end {
                return Err(short());
            }
            utf8.length(data, at, length)?;
            (at, index) = (end, index + 1);
            if index - 1 == want {
                break (end - length, length);
            }
        };
        views.push(view(views.len(), start, length, data));
    }
    utf8.finish(data, at)?;
    Ok(at)
}

impl Sink for ViewsOutput {
    /// The dictionary page kept as one of the buffers, its entries' views made once.
    fn dictionary(&mut self, page: PageValues<'_>, count: usize) -> Result<bool, DecodeError> {
        let data = page.into_owned()?;
        let (Some(buffer), true) = (self.next_buffer(), u32::try_from(data.len()).is_ok()) else { return Ok(false) };
        let ends = || {
            DecodeError::Corrupt(format!("a dictionary page of {} bytes ends before its {count} values", data.len()))
        };
        if data.len() / 4 < count {
            return Err(ends());
        }
        let mut utf8 = Utf8Runs::new(self.utf8);
        let mut views = Vec::with_capacity(count);
        let (mut at, mut pointed) = (0, false);
        for _ in 0..count {
            let (start, length) = value_at(&data, at).ok_or_else(ends)?;
            utf8.length(&data, at, length)?;
            views.push(view_of(&data, start, length, buffer, start));
            pointed |= length > 12;
            at = start + length;
        }
        utf8.finish(&data, at)?;
        if pointed {
            self.buffers.push(Buffer::from(data));
        }
        self.dictionary = Some(views);
        Ok(true)
    }

    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError> {
        let Some(dictionary_encoded) = dictionary_encoded(page.encoding) else { return Ok(false) };
        let count = crate::selection::count_set_bits(selected);
        self.views.reserve(count);
        let with_values = wanted_rows(page, selected, count, &mut self.validity, &mut self.wanted);
        let stored = page.non_null();
        let wanted_len = self.views.len() + self.wanted.len();
        let appended = match dictionary_encoded {
            true => {
                let whole = count == page.rows || dense_selection(with_values, stored);
                self.looked_up(page.values.prefix(usize::MAX)?, stored, whole)?;
                true
            }
            // Half the values or more: the page is kept (a copy would cost as much).
            false if with_values.saturating_mul(2) >= stored => {
                let data = std::mem::replace(&mut page.values, PageValues::Ready(bytes::Bytes::new())).into_owned()?;
                self.point_into(data, stored)?
            }
            false => self.copy_out(&mut page.values, stored)?,
        };
        debug_assert!(!appended || self.views.len() == wanted_len);
        Ok(appended)
    }
}
