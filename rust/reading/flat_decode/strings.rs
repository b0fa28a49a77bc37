//! The sink of strings and binaries: PLAIN pages walked by length up to the last
//! selected value, dictionary pages looked up, one output buffer for the selection.

use super::*;

/// The `count` PLAIN byte arrays (each a 4-byte little-endian length, then the bytes) of a
/// dictionary page, as a string array (UTF-8 checked) or a binary one. `None`: more bytes
/// than `O` offsets reach (the crate decides what to do with them).
pub(super) fn byte_arrays<O: OffsetSizeTrait>(
    page: &[u8],
    count: usize,
    utf8: bool,
) -> Result<Option<ArrayRef>, DecodeError> {
    let ends =
        || DecodeError::Corrupt(format!("a dictionary page of {} bytes ends before its {count} values", page.len()));
    if page.len() / 4 < count {
        return Err(ends());
    }
    let mut offsets: Vec<O> = Vec::with_capacity(count + 1);
    offsets.push(O::zero());
    let mut values = Vec::with_capacity(page.len() - 4 * count);
    let mut at = 0;
    for _ in 0..count {
        let length = page.get(at..at + 4).ok_or_else(ends)?;
        let length = u32::from_le_bytes(length.try_into().expect("4 bytes")) as usize;
        let value = page.get(at + 4..at + 4 + length).ok_or_else(ends)?;
        values.extend_from_slice(value);
        let Some(end) = O::from_usize(values.len()) else { return Ok(None) };
        offsets.push(end);
        at += 4 + length;
    }
    // Offsets only grow: checked above, one value at a time.
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    let values = Buffer::from_vec(values);
    let array: ArrayRef = match utf8 {
        true => Arc::new(
            GenericStringArray::<O>::try_new(offsets, values, None)
                .map_err(|e| DecodeError::Corrupt(format!("a dictionary value is not UTF-8: {e}")))?,
        ),
        false => Arc::new(
            GenericBinaryArray::<O>::try_new(offsets, values, None).map_err(|e| DecodeError::Corrupt(e.to_string()))?,
        ),
    };
    Ok(Some(array))
}

/// Strings or binaries: the selected rows' values copied into one buffer, from PLAIN
/// pages (a value's bytes follow its 4-byte length: the page is walked up to the last
/// selected value, and no further) or looked up in the chunk's dictionary. Strings are
/// checked as UTF-8 a page at a time, as they are appended (while the page's output is in
/// cache), and not again when the array is built.
pub(super) struct BytesOutput<O> {
    offsets: Vec<O>,
    values: Vec<u8>,
    validity: Option<BooleanBufferBuilder>,
    /// The dictionary page's values (UTF-8 is checked on the output).
    dictionary: Option<arrow::array::LargeBinaryArray>,
    /// A page's dictionary indices, reused from page to page.
    indices: Vec<u32>,
    /// A page's selected rows: the stored index of each one's value, or [`NULL_ROW`].
    wanted: Vec<u32>,
    /// Selected rows not yet appended.
    rows_left: usize,
    /// Strings (UTF-8 checked), not binaries.
    utf8: bool,
}

/// A selected row without a value.
pub(super) const NULL_ROW: u32 = u32::MAX;

/// Whether a string page in `encoding` is dictionary-encoded (`false`: PLAIN); `None`: an
/// encoding decoded only by the crate.
pub(super) fn dictionary_encoded(encoding: Encoding) -> Option<bool> {
    match encoding {
        Encoding::PLAIN => Some(false),
        Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => Some(true),
        _ => None,
    }
}

/// The stored index of each of `page`'s `count` rows that `selected` selects, in `wanted`
/// (replacing what it held; [`NULL_ROW`] for a null row), their validity appended to
/// `validity`; answers how many have a value.
pub(super) fn wanted_rows(
    page: &DataPage<'_>,
    selected: &BooleanBuffer,
    count: usize,
    validity: &mut Option<BooleanBufferBuilder>,
    wanted: &mut Vec<u32>,
) -> usize {
    wanted.clear();
    match &page.valid {
        None => {
            if let Some(validity) = validity {
                validity.append_n(count, true);
            }
            wanted.extend(selected.set_indices().map(|row| row as u32));
            count
        }
        Some(valid) => {
            let validity = validity.as_mut().expect("levels only for an optional column");
            let mut with_values = 0;
            for stored in selected_stored(valid, selected, validity) {
                with_values += usize::from(stored.is_some());
                wanted.push(stored.map_or(NULL_ROW, |i| i as u32));
            }
            with_values
        }
    }
}

/// The most string bytes reserved beyond the page at hand, for the rows still to come.
pub(super) const RESERVE_AHEAD: usize = 64 << 20;

/// A PLAIN page whose every value is wanted is copied in moves of this many bytes (a value's
/// last move may run past it: into the next value's place, or the spare bytes reserved).
const MOVE: usize = 32;

impl<O: OffsetSizeTrait> BytesOutput<O> {
    pub(super) fn new(selected: usize, nullable: bool, arrow_type: &DataType) -> Self {
        let reserve = selected.min(MAX_RESERVED_VALUES);
        let mut offsets = Vec::with_capacity(reserve + 1);
        offsets.push(O::zero());
        Self {
            offsets,
            values: Vec::new(),
            validity: nullable.then(|| BooleanBufferBuilder::new(reserve)),
            dictionary: None,
            indices: Vec::new(),
            wanted: Vec::new(),
            rows_left: selected,
            utf8: matches!(arrow_type, DataType::Utf8 | DataType::LargeUtf8),
        }
    }

    pub(super) fn finish(mut self) -> Result<ArrayRef, DecodeError> {
        let nulls = self.validity.as_mut().map(|v| NullBuffer::new(v.finish())).filter(|n| n.null_count() > 0);
        // Reserved ahead at 17/16 of the estimate: shrunk only where more than an eighth is
        // unused. A buffer freed in the size class it was reserved in is found again by the
        // next read's reservation; shrunk into the class below, the next read takes a smaller
        // freed block and grows it onto fresh pages.
        if self.values.capacity() - self.values.len() > self.values.len() / 8 {
            self.values.shrink_to_fit();
        }
        // Offsets only grow: each is the values' length after a row.
        let offsets = OffsetBuffer::new(ScalarBuffer::from(self.offsets));
        let values = Buffer::from_vec(self.values);
        Ok(match self.utf8 {
            // SAFETY: every page's values were checked as they were appended
            // (`check_utf8`): valid UTF-8, each offset on a character's first byte.
            true => Arc::new(unsafe { GenericStringArray::<O>::new_unchecked(offsets, values, nulls) }),
            false => Arc::new(
                GenericBinaryArray::<O>::try_new(offsets, values, nulls)
                    .map_err(|e| DecodeError::Corrupt(e.to_string()))?,
            ),
        })
    }

    /// Checks the values appended since byte `start` (the rows from offset `first_row` on):
    /// valid UTF-8, and each row's value starting on a character's first byte — what Arrow
    /// checks of a whole string array, a page at a time. Valid runs joined are valid.
    fn check_utf8(&self, start: usize, first_row: usize) -> Result<(), DecodeError> {
        let appended = &self.values[start..];
        if simdutf8::basic::from_utf8(appended).is_err() {
            let at = std::str::from_utf8(appended).err().map_or(0, |e| e.valid_up_to());
            return Err(DecodeError::Corrupt(format!(
                "a value is not UTF-8 (byte {} of the column's values)",
                start + at
            )));
        }
        // A UTF-8 continuation byte is 0b10xx_xxxx: never where a value starts.
        let inside = |offset: &O| self.values.get(offset.as_usize()).is_some_and(|&byte| (byte as i8) < -64);
        if let Some(row) = self.offsets[first_row..].iter().position(inside) {
            return Err(DecodeError::Corrupt(format!(
                "row {} of the column's values starts inside a UTF-8 character",
                first_row + row
            )));
        }
        Ok(())
    }

    /// Ends the row just appended; `false`: the values outgrew `O` (left to the crate).
    #[inline]
    fn end_row(&mut self) -> bool {
        match O::from_usize(self.values.len()) {
            Some(end) => {
                self.offsets.push(end);
                true
            }
            None => false,
        }
    }

    /// The wanted rows from a PLAIN page's `stored` values (`with_values` of them wanted).
    fn plain(&mut self, values: &mut PageValues<'_>, stored: usize, with_values: usize) -> Result<bool, DecodeError> {
        if with_values == stored {
            return self.every_plain_value(values.prefix(usize::MAX)?, stored);
        }
        let short = || DecodeError::Corrupt(format!("a page's {stored} values run past its end"));
        let wanted = std::mem::take(&mut self.wanted);
        let mut data = values.prefix(0)?;
        // The value at `at` (its length first) is the `index`-th stored.
        let (mut at, mut index) = (0usize, 0u32);
        let mut fits = true;
        for &want in &wanted {
            if want != NULL_ROW {
                if want as usize >= stored {
                    return Err(short());
                }
                loop {
                    if data.len() < at + 4 {
                        data = values.prefix(at + 4)?;
                    }
                    let length = data.get(at..at + 4).ok_or_else(short)?;
                    let end = at + 4 + u32::from_le_bytes(length.try_into().expect("4 bytes")) as usize;
                    if index == want {
                        if data.len() < end {
                            data = values.prefix(end)?;
                        }
                        self.values.extend_from_slice(data.get(at + 4..end).ok_or_else(short)?);
                        (at, index) = (end, index + 1);
                        break;
                    }
                    (at, index) = (end, index + 1);
                }
            }
            if !self.end_row() {
                fits = false;
                break;
            }
        }
        self.wanted = wanted;
        Ok(fits)
    }

    /// The wanted rows of a PLAIN page `data` whose `stored` values are all wanted (a whole
    /// page, or every row with a value): one pass, in order, no value searched for. Their
    /// bytes are the page's less 4 a value, so they are reserved at once, and copied in
    /// [`MOVE`]-byte moves where the page has that many bytes left (a call to `memcpy` a
    /// value cost more than the copy on 200-byte text). `false`: they outgrow `O`.
    fn every_plain_value(&mut self, data: &[u8], stored: usize) -> Result<bool, DecodeError> {
        let short = || DecodeError::Corrupt(format!("a page's {stored} values run past its end"));
        let bytes = stored.checked_mul(4).and_then(|lengths| data.len().checked_sub(lengths)).ok_or_else(short)?;
        let start = self.values.len();
        // Every offset below is at most `start + bytes`: one check for all.
        if O::from_usize(start + bytes).is_none() {
            return Ok(false);
        }
        if self.values.capacity() - start < bytes + MOVE {
            self.values.reserve_exact(bytes + MOVE);
        }
        let wanted = std::mem::take(&mut self.wanted);
        self.offsets.reserve(wanted.len());
        let slots = &mut self.offsets.spare_capacity_mut()[..wanted.len()];
        // SAFETY: `start` is the values' length, inside their allocation.
        let (source, destination) = (data.as_ptr(), unsafe { self.values.as_mut_ptr().add(start) });
        // `at`: the next value's length in `data`; `written`: its place in the output.
        let (mut at, mut written) = (0usize, 0usize);
        let mut result = Ok(true);
        for (&want, slot) in wanted.iter().zip(slots.iter_mut()) {
            if want != NULL_ROW {
                if data.len() - at < 4 {
                    result = Err(short());
                    break;
                }
                // SAFETY: 4 bytes at `at` are inside `data` (above).
                let length = u32::from_le(unsafe { source.add(at).cast::<u32>().read_unaligned() }) as usize;
                let value = at + 4;
                // Inside the page, and within the `bytes` all values hold: a long length
                // early on must not write past what was reserved.
                if data.len() - value < length || bytes - written < length {
                    result = Err(short());
                    break;
                }
                // SAFETY: the value is inside `data`, and fits the `bytes + MOVE` reserved
                // with `MOVE` to spare for a move past its end; a move is only made where
                // `data` has its bytes.
                unsafe {
                    let (from, to) = (source.add(value), destination.add(written));
                    if data.len() - value >= length.next_multiple_of(MOVE) {
                        let mut moved = 0;
                        while moved < length {
                            to.add(moved)
                                .cast::<[u8; MOVE]>()
                                .write_unaligned(from.add(moved).cast::<[u8; MOVE]>().read_unaligned());
                            moved += MOVE;
                        }
                    } else {
                        std::ptr::copy_nonoverlapping(from, to, length);
                    }
                }
                (at, written) = (value + length, written + length);
            }
            slot.write(O::usize_as(start + written));
        }
        if result.is_ok() {
            // SAFETY: the loop wrote a slot for every wanted row, and `written` value bytes.
            unsafe {
                self.offsets.set_len(self.offsets.len() + wanted.len());
                self.values.set_len(start + written);
            }
        }
        self.wanted = wanted;
        result
    }

    /// The wanted rows from a dictionary-encoded page's `stored` indices (`whole`: every
    /// row, or enough of them, is wanted: the indices are decoded in one pass).
    fn looked_up(&mut self, values: &[u8], stored: usize, whole: bool) -> Result<bool, DecodeError> {
        let dictionary = self
            .dictionary
            .take()
            .ok_or_else(|| DecodeError::Corrupt("a dictionary-encoded page without a dictionary page".into()))?;
        let result = self.look_up(values, stored, whole, &dictionary);
        self.dictionary = Some(dictionary);
        result
    }

    fn look_up(
        &mut self,
        values: &[u8],
        stored: usize,
        whole: bool,
        dictionary: &arrow::array::LargeBinaryArray,
    ) -> Result<bool, DecodeError> {
        use arrow::array::Array;
        let len = dictionary.len();
        let wanted = std::mem::take(&mut self.wanted);
        let mut indices = std::mem::take(&mut self.indices);
        let mut keys = PageKeys::new(values, stored, len, whole, &mut indices)?;
        let mut result = Ok(true);
        for &want in &wanted {
            if want != NULL_ROW {
                match keys.get(want as usize, len) {
                    Ok(key) => self.values.extend_from_slice(dictionary.value(key as usize)),
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            if !self.end_row() {
                result = Ok(false);
                break;
            }
        }
        self.wanted = wanted;
        self.indices = indices;
        result
    }
}

impl<O: OffsetSizeTrait> Sink for BytesOutput<O> {
    fn dictionary(&mut self, mut page: PageValues<'_>, count: usize) -> Result<bool, DecodeError> {
        // 64-bit offsets always reach: never `None`.
        let Some(values) = byte_arrays::<i64>(page.prefix(usize::MAX)?, count, false)? else { return Ok(false) };
        self.dictionary =
            Some(values.as_any().downcast_ref::<arrow::array::LargeBinaryArray>().expect("large binary").clone());
        Ok(true)
    }

    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError> {
        let Some(dictionary_encoded) = dictionary_encoded(page.encoding) else { return Ok(false) };
        let count = selected.count_set_bits();
        self.offsets.reserve(count);
        let with_values = wanted_rows(page, selected, count, &mut self.validity, &mut self.wanted);
        let stored = page.non_null();
        // Sized from this page's average value for the rows still to come (one buffer for
        // the whole selection, as a copy at the exact size would be), not doubled as it
        // fills: doubling leaves up to half of it unused. At most RESERVE_AHEAD beyond this
        // page's values: one long value must not reserve its length for every row.
        let per_value = match (dictionary_encoded, &self.dictionary) {
            (false, _) => page.values.len().saturating_sub(4 * stored) / stored.max(1),
            (true, Some(dictionary)) => dictionary.values().len() / arrow::array::Array::len(dictionary).max(1),
            (true, None) => 0,
        };
        // (A PLAIN page's values are within the page; looked-up ones may repeat a long
        // dictionary value: reserved up to RESERVE_AHEAD, grown if they are real.)
        let this_page = match dictionary_encoded {
            false => per_value.saturating_mul(with_values),
            true => per_value.saturating_mul(with_values).min(RESERVE_AHEAD),
        };
        if self.values.capacity() - self.values.len() < this_page {
            let ahead = per_value.saturating_mul(self.rows_left.max(count)).saturating_mul(17) / 16;
            self.values.reserve_exact(ahead.clamp(this_page, this_page.saturating_add(RESERVE_AHEAD)));
        }
        self.rows_left = self.rows_left.saturating_sub(count);
        let (start, first_row) = (self.values.len(), self.offsets.len() - 1);
        let appended = match dictionary_encoded {
            false => self.plain(&mut page.values, stored, with_values)?,
            true => self.looked_up(
                page.values.prefix(usize::MAX)?,
                stored,
                count == page.rows || dense_selection(with_values, stored),
            )?,
        };
        if appended && self.utf8 {
            self.check_utf8(start, first_row)?;
        }
        Ok(appended)
    }
}
