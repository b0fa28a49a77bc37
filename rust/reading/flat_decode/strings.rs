//! The sink of strings and binaries: PLAIN pages walked by length up to the last
//! selected value, dictionary pages looked up, the byte array encodings of Parquet v2
//! writers (DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY) decoded as far as the last selected
//! value, one output buffer for the selection.

use super::*;
use crate::format::delta_binary_packed;

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
    /// A delta-encoded page's lengths (of its values, or of their suffixes), reused.
    lengths: Vec<u32>,
    /// A DELTA_BYTE_ARRAY page's prefix lengths, reused.
    prefixes: Vec<u32>,
    /// The DELTA_BYTE_ARRAY value last rebuilt, where the wanted ones are not all of them.
    rebuilt: Vec<u8>,
    /// Selected rows not yet appended.
    rows_left: usize,
    /// Strings (UTF-8 checked), not binaries.
    utf8: bool,
}

/// The string (`utf8`) or binary array of `offsets` into `values`, nulls where `validity`
/// says.
fn byte_array<O: OffsetSizeTrait>(
    offsets: Vec<O>,
    values: Vec<u8>,
    validity: Option<BooleanBuffer>,
    utf8: bool,
) -> Result<ArrayRef, DecodeError> {
    let nulls = validity.map(NullBuffer::new).filter(|n| n.null_count() > 0);
    // Offsets only grow: each is the values' length after a row.
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    let values = Buffer::from_vec(values);
    Ok(match utf8 {
        // SAFETY: every page's values were checked as they were appended
        // (`check_utf8`): valid UTF-8, each offset on a character's first byte.
        true => Arc::new(unsafe { GenericStringArray::<O>::new_unchecked(offsets, values, nulls) }),
        false => Arc::new(
            GenericBinaryArray::<O>::try_new(offsets, values, nulls)
                .map_err(|e| DecodeError::Corrupt(e.to_string()))?,
        ),
    })
}

/// A selected row without a value.
pub(super) const NULL_ROW: u32 = u32::MAX;

/// Whether a string page in `encoding` is dictionary-encoded (`false`: PLAIN); `None`: an
/// encoding the views sink leaves to the crate.
pub(super) fn dictionary_encoded(encoding: Encoding) -> Option<bool> {
    match Stored::of(encoding)? {
        Stored::Plain => Some(false),
        Stored::Dictionary => Some(true),
        Stored::DeltaLength | Stored::DeltaPrefix => None,
    }
}

/// How a string page's values are stored, for [`BytesOutput`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// Each value's 4-byte length, then its bytes.
    Plain,
    /// Indices into the dictionary page.
    Dictionary,
    /// DELTA_LENGTH_BYTE_ARRAY: every length (DELTA_BINARY_PACKED), then every value's bytes.
    DeltaLength,
    /// DELTA_BYTE_ARRAY: every value's length of the value before's bytes it starts with,
    /// then the rest of each as DELTA_LENGTH_BYTE_ARRAY.
    DeltaPrefix,
}

impl Stored {
    /// `None`: an encoding decoded only by the crate.
    fn of(encoding: Encoding) -> Option<Self> {
        match encoding {
            Encoding::PLAIN => Some(Self::Plain),
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => Some(Self::Dictionary),
            Encoding::DELTA_LENGTH_BYTE_ARRAY => Some(Self::DeltaLength),
            Encoding::DELTA_BYTE_ARRAY => Some(Self::DeltaPrefix),
            _ => None,
        }
    }
}

/// A DELTA_BYTE_ARRAY page's layout: where its suffix lengths start and where their bytes
/// do, its `stored` values and the `last` one wanted.
#[derive(Debug, Clone, Copy)]
struct PrefixedPage {
    suffix_lengths: usize,
    suffixes: usize,
    stored: usize,
    last: usize,
}

/// The most bytes one DELTA_BYTE_ARRAY page's wanted values may rebuild to: each value may
/// repeat the one before, so a page of a few bytes could claim terabytes.
const MAX_REBUILT_PAGE: usize = 1 << 30;

/// Where the DELTA_BINARY_PACKED stream starting at byte `from` of `values` ends, and how
/// many values it holds: the page decompressed as far as the stream's headers need.
fn delta_stream(values: &mut PageValues<'_>, from: usize, what: &str) -> Result<(u64, usize), DecodeError> {
    let size = values.len();
    let mut want = from.saturating_add(4096);
    loop {
        let bytes = values.prefix(want)?;
        let complete = bytes.len() >= size;
        match bytes.get(from..).map(delta_binary_packed::extent) {
            Some(Ok((total, length))) => return Ok((total, from + length)),
            // Cut short where the page is not decompressed that far yet: ask for more.
            _ if !complete => want = want.saturating_mul(4),
            Some(Err(e)) => return Err(DecodeError::Corrupt(format!("a page's {what}: {e}"))),
            None => return Err(DecodeError::Corrupt(format!("a page's {what} start past its end"))),
        }
    }
}

/// The first `n` values of the DELTA_BINARY_PACKED stream at the start of `data` (which holds
/// at least `stored`), as lengths, into `out`, and their sum.
fn delta_lengths(data: &[u8], stored: usize, n: usize, out: &mut Vec<u32>, what: &str) -> Result<usize, DecodeError> {
    out.clear();
    delta_binary_packed::decode::<u32>(data, n, out)
        .map_err(|e| DecodeError::Corrupt(format!("a page's {what}: {e}")))?;
    let mut sum = 0usize;
    for &length in out.iter() {
        // Lengths are INT32: a negative one is corrupt.
        if length > i32::MAX as u32 {
            return Err(DecodeError::Corrupt(format!("a page of {stored} values has a {what} of {}", length as i32)));
        }
        sum += length as usize;
    }
    Ok(sum)
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
            lengths: Vec::new(),
            prefixes: Vec::new(),
            rebuilt: Vec::new(),
            rows_left: selected,
            utf8: matches!(arrow_type, DataType::Utf8 | DataType::LargeUtf8),
        }
    }

    pub(super) fn finish(mut self) -> Result<ArrayRef, DecodeError> {
        // Reserved ahead at 17/16 of the estimate: shrunk only where more than an eighth is
        // unused. A buffer freed in the size class it was reserved in is found again by the
        // next read's reservation; shrunk into the class below, the next read takes a smaller
        // freed block and grows it onto fresh pages.
        if self.values.capacity() - self.values.len() > self.values.len() / 8 {
            self.values.shrink_to_fit();
        }
        let validity = self.validity.as_mut().map(BooleanBufferBuilder::finish);
        byte_array(self.offsets, self.values, validity, self.utf8)
    }

    /// The rows appended since the last drain, and their values' bytes.
    pub(super) fn pending(&self) -> (usize, usize) {
        (self.offsets.len() - 1, self.values.len())
    }

    /// The rows appended since the last drain, as an array; the output starts again empty
    /// (the dictionary and the reused buffers kept), reserving for one page at a time.
    pub(super) fn drain(&mut self) -> Result<ArrayRef, DecodeError> {
        let offsets = std::mem::replace(&mut self.offsets, vec![O::zero()]);
        let values = std::mem::take(&mut self.values);
        let validity = self.validity.as_mut().map(BooleanBufferBuilder::finish);
        self.rows_left = 0;
        byte_array(offsets, values, validity, self.utf8)
    }

    /// Takes back the buffers of `array` (from [`drain`](Self::drain)), once evaluated and
    /// held by nothing else, for the rows that follow: each run of pages is decoded into
    /// the memory the run before left, still in cache, not into a fresh allocation.
    pub(super) fn recycle(&mut self, array: ArrayRef) {
        let parts = match self.utf8 {
            true => array.as_any().downcast_ref::<GenericStringArray<O>>().cloned().map(|a| a.into_parts()),
            false => array.as_any().downcast_ref::<GenericBinaryArray<O>>().cloned().map(|a| a.into_parts()),
        };
        drop(array);
        let Some((offsets, values, _)) = parts else { return };
        if let (Ok(mut values), true) = (values.into_vec::<u8>(), self.values.is_empty()) {
            values.clear();
            self.values = values;
        }
        if let (Ok(mut offsets), 1) = (offsets.into_inner().into_inner().into_vec::<O>(), self.offsets.len()) {
            offsets.clear();
            offsets.push(O::zero());
            self.offsets = offsets;
        }
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

    /// Makes room for `this_page` more value bytes: where the buffer must grow, it is sized
    /// for the `rows_ahead` rows still to come at `per_value` bytes each (one buffer for the
    /// whole selection, as a copy at the exact size would be), not doubled as it fills:
    /// doubling leaves up to half of it unused, and copies what it holds. At most
    /// RESERVE_AHEAD beyond this page's values: one long value must not reserve its length
    /// for every row.
    fn reserve(&mut self, per_value: usize, this_page: usize, rows_ahead: usize) {
        if self.values.capacity() - self.values.len() < this_page {
            let ahead = per_value.saturating_mul(rows_ahead).saturating_mul(17) / 16;
            self.values.reserve_exact(ahead.clamp(this_page, this_page.saturating_add(RESERVE_AHEAD)));
        }
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

    /// The last wanted row's stored index; `None`: every wanted row is null.
    fn last_wanted(&self) -> Option<usize> {
        self.wanted.iter().rev().find(|&&want| want != NULL_ROW).map(|&want| want as usize)
    }

    /// The wanted rows of a DELTA_LENGTH_BYTE_ARRAY page of `stored` values: its lengths
    /// decoded as far as the last wanted value, then each wanted value's bytes copied from
    /// where the lengths put them (every value wanted: all of them at once).
    fn delta_length(&mut self, values: &mut PageValues<'_>, stored: usize) -> Result<bool, DecodeError> {
        let Some(last) = self.last_wanted() else { return Ok(self.null_rows()) };
        let (total, start) = delta_stream(values, 0, "lengths")?;
        if total < stored as u64 || last >= stored {
            return Err(DecodeError::Corrupt(format!("a page of {stored} values holds {total} lengths")));
        }
        let mut lengths = std::mem::take(&mut self.lengths);
        let result = self.copy_delta_values(values, start, stored, last, &mut lengths);
        self.lengths = lengths;
        result
    }

    /// The wanted values of a page whose first `last + 1` values' lengths are the start of
    /// the DELTA_BINARY_PACKED stream at the start of `values`, their bytes one after
    /// another from byte `start`.
    fn copy_delta_values(
        &mut self,
        values: &mut PageValues<'_>,
        start: usize,
        stored: usize,
        last: usize,
        lengths: &mut Vec<u32>,
    ) -> Result<bool, DecodeError> {
        let bytes = delta_lengths(values.prefix(start)?, stored, last + 1, lengths, "lengths")?;
        let end = start + bytes;
        let data = values.prefix(end)?;
        let data = data.get(start..end).ok_or_else(|| {
            DecodeError::Corrupt(format!("a page's {stored} values run past its end ({} bytes)", data.len()))
        })?;
        if O::from_usize(self.values.len() + bytes).is_none() {
            return Ok(false);
        }
        let wanted = std::mem::take(&mut self.wanted);
        let every = last + 1 == stored && wanted.iter().filter(|&&w| w != NULL_ROW).count() == stored;
        if every {
            // Every value: their bytes as they lie, and an offset a row.
            let mut end = self.values.len();
            self.values.extend_from_slice(data);
            let mut next = lengths.iter();
            self.offsets.extend(wanted.iter().map(|&want| {
                if want != NULL_ROW {
                    end += *next.next().expect("a length a stored value") as usize;
                }
                O::usize_as(end)
            }));
        } else {
            // `at`: where the `index`-th value's bytes start.
            let (mut at, mut index) = (0usize, 0usize);
            for &want in &wanted {
                if want != NULL_ROW {
                    let want = want as usize;
                    at += lengths[index..want].iter().map(|&l| l as usize).sum::<usize>();
                    let length = lengths[want] as usize;
                    self.values.extend_from_slice(&data[at..at + length]);
                    (at, index) = (at + length, want + 1);
                }
                self.offsets.push(O::usize_as(self.values.len()));
            }
        }
        self.wanted = wanted;
        Ok(true)
    }

    /// The wanted rows of a DELTA_BYTE_ARRAY page of `stored` values: each value is the
    /// first bytes of the one before (its prefix length) and its suffix, so the values are
    /// rebuilt in order up to the last wanted one — in the output where every value is
    /// wanted, else in a scratch value, copied out where wanted.
    fn delta_prefix(
        &mut self,
        values: &mut PageValues<'_>,
        stored: usize,
        rows_ahead: usize,
    ) -> Result<bool, DecodeError> {
        let Some(last) = self.last_wanted() else { return Ok(self.null_rows()) };
        let (total, suffixes_at) = delta_stream(values, 0, "prefix lengths")?;
        let (suffixes, start) = delta_stream(values, suffixes_at, "suffix lengths")?;
        if total < stored as u64 || suffixes < stored as u64 || last >= stored {
            return Err(DecodeError::Corrupt(format!(
                "a page of {stored} values holds {total} prefix lengths and {suffixes} suffix lengths"
            )));
        }
        let (mut prefixes, mut lengths) = (std::mem::take(&mut self.prefixes), std::mem::take(&mut self.lengths));
        let page = PrefixedPage { suffix_lengths: suffixes_at, suffixes: start, stored, last };
        let result = self.rebuild(values, page, rows_ahead, &mut prefixes, &mut lengths);
        (self.prefixes, self.lengths) = (prefixes, lengths);
        result
    }

    /// [`Self::delta_prefix`] once the page's streams are found: its first `last + 1`
    /// values rebuilt from their prefix and suffix lengths (decoded into `prefixes` and
    /// `lengths`), the wanted ones appended; room is made for them first, and for the
    /// `rows_ahead` rows still to come at their size.
    fn rebuild(
        &mut self,
        values: &mut PageValues<'_>,
        page: PrefixedPage,
        rows_ahead: usize,
        prefixes: &mut Vec<u32>,
        lengths: &mut Vec<u32>,
    ) -> Result<bool, DecodeError> {
        let PrefixedPage { suffix_lengths: suffixes_at, suffixes: start, stored, last } = page;
        delta_lengths(values.prefix(suffixes_at)?, stored, last + 1, prefixes, "prefix length")?;
        let bytes = {
            let head = values.prefix(start)?;
            let suffix_lengths = head.get(suffixes_at..).unwrap_or_default();
            delta_lengths(suffix_lengths, stored, last + 1, lengths, "suffix length")?
        };
        let end = start + bytes;
        let data = values.prefix(end)?;
        let suffixes = data.get(start..end).ok_or_else(|| {
            DecodeError::Corrupt(format!("a page's {stored} suffixes run past its end ({} bytes)", data.len()))
        })?;
        // Each value starts with at most the whole value before it (the first, with none):
        // checked first, so that a value's length is its prefix's and its suffix's, and the
        // values up to the last wanted are no longer than the page's suffixes.
        let mut previous = 0usize;
        for (value, (&prefix, &suffix)) in prefixes.iter().zip(lengths.iter()).enumerate() {
            if prefix as usize > previous {
                return Err(DecodeError::Corrupt(format!(
                    "value {value} of a page starts with {prefix} bytes of the value before, which has {previous}"
                )));
            }
            previous = prefix as usize + suffix as usize;
        }
        let (mut wanted_bytes, mut with_values) = (0usize, 0usize);
        for &want in self.wanted.iter().filter(|&&want| want != NULL_ROW) {
            wanted_bytes += prefixes[want as usize] as usize + lengths[want as usize] as usize;
            with_values += 1;
        }
        if wanted_bytes > MAX_REBUILT_PAGE {
            return Err(DecodeError::Corrupt(format!(
                "a DELTA_BYTE_ARRAY page's values rebuild to {wanted_bytes} bytes, more than {MAX_REBUILT_PAGE}"
            )));
        }
        if O::from_usize(self.values.len() + wanted_bytes).is_none() {
            return Ok(false);
        }
        self.reserve(wanted_bytes / with_values.max(1), wanted_bytes, rows_ahead);
        let wanted = std::mem::take(&mut self.wanted);
        // `at`: where the `index`-th value's suffix starts.
        let (mut at, mut index) = (0usize, 0usize);
        if last + 1 == stored && with_values == stored {
            // Every value: each rebuilt in the output, from the one before it there.
            let mut before = self.values.len();
            for &want in &wanted {
                if want != NULL_ROW {
                    let (prefix, length) = (prefixes[index] as usize, lengths[index] as usize);
                    let start = self.values.len();
                    self.values.extend_from_within(before..before + prefix);
                    self.values.extend_from_slice(&suffixes[at..at + length]);
                    (before, at, index) = (start, at + length, index + 1);
                }
                self.offsets.push(O::usize_as(self.values.len()));
            }
        } else {
            // Some: each value up to the last wanted rebuilt in a scratch value, the wanted
            // ones copied out.
            let mut rebuilt = std::mem::take(&mut self.rebuilt);
            rebuilt.clear();
            for &want in &wanted {
                if want != NULL_ROW {
                    while index <= want as usize {
                        let (prefix, length) = (prefixes[index] as usize, lengths[index] as usize);
                        rebuilt.truncate(prefix);
                        rebuilt.extend_from_slice(&suffixes[at..at + length]);
                        (at, index) = (at + length, index + 1);
                    }
                    self.values.extend_from_slice(&rebuilt);
                }
                self.offsets.push(O::usize_as(self.values.len()));
            }
            self.rebuilt = rebuilt;
        }
        self.wanted = wanted;
        Ok(true)
    }

    /// Appends the wanted rows when none has a value.
    fn null_rows(&mut self) -> bool {
        let end = O::usize_as(self.values.len());
        self.offsets.extend(std::iter::repeat_n(end, self.wanted.len()));
        true
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
        let Some(encoding) = Stored::of(page.encoding) else { return Ok(false) };
        let count = crate::selection::count_set_bits(selected);
        self.offsets.reserve(count);
        let with_values = wanted_rows(page, selected, count, &mut self.validity, &mut self.wanted);
        let stored = page.non_null();
        // Sized from this page's average value (see `reserve`). A DELTA_LENGTH_BYTE_ARRAY
        // page's lengths are counted as values' bytes (a few bytes a value); a
        // DELTA_BYTE_ARRAY page's values are sized once its lengths are decoded (they may be
        // many times the page).
        let per_value = match (encoding, &self.dictionary) {
            (Stored::Plain, _) => page.values.len().saturating_sub(4 * stored) / stored.max(1),
            (Stored::Dictionary, Some(dictionary)) => {
                dictionary.values().len() / arrow::array::Array::len(dictionary).max(1)
            }
            (Stored::Dictionary, None) | (Stored::DeltaPrefix, _) => 0,
            (Stored::DeltaLength, _) => page.values.len() / stored.max(1),
        };
        // (A PLAIN or DELTA_LENGTH_BYTE_ARRAY page's values are within the page; looked-up
        // ones may repeat a long dictionary value: reserved up to RESERVE_AHEAD, grown if
        // they are real.)
        let this_page = match encoding {
            Stored::Plain | Stored::DeltaLength => per_value.saturating_mul(with_values),
            Stored::Dictionary | Stored::DeltaPrefix => per_value.saturating_mul(with_values).min(RESERVE_AHEAD),
        };
        let rows_ahead = self.rows_left.max(count);
        self.reserve(per_value, this_page, rows_ahead);
        self.rows_left = self.rows_left.saturating_sub(count);
        let (start, first_row) = (self.values.len(), self.offsets.len() - 1);
        let appended = match encoding {
            Stored::Plain => self.plain(&mut page.values, stored, with_values)?,
            Stored::Dictionary => self.looked_up(
                page.values.prefix(usize::MAX)?,
                stored,
                count == page.rows || dense_selection(with_values, stored),
            )?,
            Stored::DeltaLength => self.delta_length(&mut page.values, stored)?,
            Stored::DeltaPrefix => self.delta_prefix(&mut page.values, stored, rows_ahead)?,
        };
        if appended && self.utf8 {
            self.check_utf8(start, first_row)?;
        }
        Ok(appended)
    }
}
