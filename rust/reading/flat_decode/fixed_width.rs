//! The sink of fixed-width values (integers, floats, dictionary keys): PLAIN values
//! copied out of the page, dictionary indices unpacked or read where a selected row's
//! lies, and looked up; BYTE_STREAM_SPLIT and DELTA_BINARY_PACKED pages decoded into
//! PLAIN's layout first.

use super::*;

/// How a fixed-width value is stored: `WIDTH` bytes a value (little-endian, but for
/// [`BigEndian`] decimals), each [`read`](Native::read) as an `Out` (the Arrow buffer's
/// element).
pub(crate) trait Native {
    type Out: Copy + Default + arrow::datatypes::ArrowNativeType;
    const WIDTH: usize;
    /// The value is its stored bytes, little-endian (so they can be moved without reading
    /// them): `Out` is `WIDTH` bytes.
    const SAME_BITS: bool = true;
    /// BYTE_STREAM_SPLIT is an encoding of this type (every one but INT96).
    const SPLIT: bool = true;
    /// An `Out` is the stored bytes themselves (`SAME_BITS`, `WIDTH` bytes, a little-endian
    /// machine): stored values can be moved into `Out`s as bytes.
    const STORED_BYTES: bool =
        Self::SAME_BITS && size_of::<Self::Out>() == Self::WIDTH && cfg!(target_endian = "little");
    /// The value stored in `bytes` (`WIDTH` of them).
    fn read(bytes: &[u8]) -> Self::Out;
    /// Appends the first `n` values of DELTA_BINARY_PACKED `data` to `out`; `None`: not
    /// an encoding of this type (only of INT32 and INT64).
    fn decode_delta(_data: &[u8], _n: usize, _out: &mut Vec<Self::Out>) -> Option<Result<(), String>> {
        None
    }
}

impl Native for u32 {
    type Out = u32;
    const WIDTH: usize = 4;
    fn read(bytes: &[u8]) -> u32 {
        u32::from_le_bytes(bytes.try_into().expect("4 bytes"))
    }
    fn decode_delta(data: &[u8], n: usize, out: &mut Vec<u32>) -> Option<Result<(), String>> {
        Some(crate::format::delta_binary_packed::decode(data, n, out))
    }
}

impl Native for u64 {
    type Out = u64;
    const WIDTH: usize = 8;
    fn read(bytes: &[u8]) -> u64 {
        u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
    }
    fn decode_delta(data: &[u8], n: usize, out: &mut Vec<u64>) -> Option<Result<(), String>> {
        Some(crate::format::delta_binary_packed::decode(data, n, out))
    }
}

/// An INT96 timestamp (Spark's default timestamp: 8 bytes of nanoseconds in the day, then
/// 4 of the Julian day), read as its day (the high 64 bits) and nanoseconds (the low 64),
/// each as the crate reads it; [`converted`](super::converted) makes them a timestamp.
pub(super) struct Int96;

impl Native for Int96 {
    type Out = i128;
    const WIDTH: usize = 12;
    const SAME_BITS: bool = false;
    const SPLIT: bool = false;
    fn read(bytes: &[u8]) -> i128 {
        let nanos = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        let day = i32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        (i128::from(day) << 64) | i128::from(nanos)
    }
}

/// A decimal stored as a FIXED_LEN_BYTE_ARRAY of `N` bytes (1 to 16): a big-endian two's
/// complement integer, sign-extended to an `i128` as the crate's `sign_extend_be` does.
pub(super) struct BigEndian<const N: usize>;

impl<const N: usize> Native for BigEndian<N> {
    type Out = i128;
    const WIDTH: usize = N;
    const SAME_BITS: bool = false;
    fn read(bytes: &[u8]) -> i128 {
        let bytes: &[u8; N] = bytes.try_into().expect("N bytes");
        let mut extended = if bytes[0] & 0x80 != 0 { [0xff; 16] } else { [0; 16] };
        extended[16 - N..].copy_from_slice(bytes);
        i128::from_be_bytes(extended)
    }
}

/// Fixed-width values (their bits) and, for an optional column, their validity.
pub(super) struct Output<T: Native> {
    values: Vec<T::Out>,
    validity: Option<BooleanBufferBuilder>,
    /// The chunk's dictionary: its page itself where the page's bytes are the values
    /// (see [`Sink::dictionary`]), else the values read out of it.
    dictionary: Option<ScalarBuffer<T::Out>>,
    /// A page's dictionary indices, reused from page to page.
    indices: Vec<u32>,
    /// A page's stored values before they are spread over its null rows, reused.
    scratch: Vec<T::Out>,
    /// The selected rows' dictionary indices of a page, reused.
    selected_indices: Vec<u32>,
    /// The dictionary is the indices `0..n` (the values are keys: `T` is `u32`), so an
    /// index is its value, not looked up.
    keys: bool,
    /// The column is INT32 or INT64 (FLOAT and DOUBLE share the sinks of their widths), so
    /// DELTA_BINARY_PACKED pages are decoded.
    integers: bool,
    /// A BYTE_STREAM_SPLIT page's values in PLAIN's layout, reused from page to page: such
    /// a page (as far as its last selected value) is rejoined into it, then read as PLAIN.
    plain: Vec<u8>,
    /// A DELTA_BINARY_PACKED page's values (as far as its last selected one), reused: their
    /// bytes are read as a PLAIN page's.
    deltas: Vec<T::Out>,
}

impl<T: Native> Output<T> {
    pub(super) fn new(selected: usize, nullable: bool) -> Self {
        let reserve = selected.min(MAX_RESERVED_VALUES);
        Self {
            values: Vec::with_capacity(reserve + compress::SLACK),
            validity: nullable.then(|| BooleanBufferBuilder::new(reserve)),
            dictionary: None,
            indices: Vec::new(),
            scratch: Vec::new(),
            selected_indices: Vec::new(),
            keys: false,
            integers: false,
            plain: Vec::new(),
            deltas: Vec::new(),
        }
    }

    /// The sink of an INT32 or INT64 column: DELTA_BINARY_PACKED pages are decoded too.
    pub(super) fn of_integers(mut self) -> Self {
        self.integers = true;
        self
    }

    /// Appends `rows` valid rows to the validity, if the column has one.
    fn append_valid(&mut self, rows: usize) {
        if let Some(validity) = &mut self.validity {
            validity.append_n(rows, true);
        }
    }

    pub(super) fn finish(mut self, arrow_type: &DataType) -> Result<ArrayRef, DecodeError> {
        self.drain(arrow_type)
    }

    /// The values held (those appended since the last [`clear_values`](Self::clear_values))
    /// and the validity of every row appended (theirs last), if the column has one.
    pub(super) fn values_and_validity(&self) -> (&[T::Out], Option<&BooleanBufferBuilder>) {
        (&self.values, self.validity.as_ref())
    }

    /// Drops the values held, keeping their buffer for the next page's.
    pub(super) fn clear_values(&mut self) {
        self.values.clear();
    }

    /// The rows appended since the last drain, as an array of `arrow_type`; the output
    /// starts again empty (the dictionary and the reused buffers kept).
    pub(super) fn drain(&mut self, arrow_type: &DataType) -> Result<ArrayRef, DecodeError> {
        let values = std::mem::take(&mut self.values);
        let nulls = self.validity.as_mut().map(|v| NullBuffer::new(v.finish())).filter(|n| n.null_count() > 0);
        let data = ArrayData::builder(arrow_type.clone())
            .len(values.len())
            .add_buffer(Buffer::from_vec(values))
            .nulls(nulls)
            .build()
            .map_err(|e| DecodeError::Corrupt(e.to_string()))?;
        Ok(make_array(data))
    }

    /// Takes back the values' buffer of `array` (from [`drain`](Self::drain)), once
    /// evaluated and held by nothing else, for the rows that follow.
    pub(super) fn recycle(&mut self, array: ArrayRef) {
        let data = array.to_data();
        drop(array);
        let Some(buffer) = data.buffers().first().cloned() else { return };
        drop(data);
        if let (Ok(mut values), 0) = (buffer.into_vec::<T::Out>(), self.values.capacity()) {
            values.clear();
            self.values = values;
        }
    }

    /// The values and, where a row is null, their validity.
    pub(super) fn into_parts(mut self) -> (Vec<T::Out>, Option<NullBuffer>) {
        let nulls = self.validity.as_mut().map(|v| NullBuffer::new(v.finish())).filter(|n| n.null_count() > 0);
        (self.values, nulls)
    }

    /// Appends the `selected` rows of `page`, the `i`-th stored (non-null) value being
    /// `value(i)`, asked for in ascending order; `Err(i)` when `value(i)` is `None` (the
    /// page is corrupt: the caller says how). An `Option`, not a `Result`: a `Result`
    /// with the error's text is returned through memory, once per row. `count`: the
    /// selected rows.
    fn pick(
        &mut self,
        valid: Option<&BooleanBuffer>,
        selected: &BooleanBuffer,
        count: usize,
        mut value: impl FnMut(usize) -> Option<T::Out>,
    ) -> Result<(), usize> {
        let Some(valid) = valid else {
            self.append_valid(count);
            // Written straight into the reserved output, without a capacity check a row.
            let start = self.values.len();
            self.values.reserve(count);
            let mut written = 0;
            let mut missing = None;
            for (slot, row) in self.values.spare_capacity_mut()[..count].iter_mut().zip(selected.set_indices()) {
                match value(row) {
                    Some(v) => {
                        slot.write(v);
                        written += 1;
                    }
                    None => {
                        missing = Some(row);
                        break;
                    }
                }
            }
            // SAFETY: the first `written` slots past `start` were written above.
            unsafe { self.values.set_len(start + written) };
            return missing.map_or(Ok(()), Err);
        };
        let validity = self.validity.as_mut().expect("levels only for an optional column");
        for stored in selected_stored(valid, selected, validity) {
            self.values.push(match stored {
                Some(i) => value(i).ok_or(i)?,
                None => T::Out::default(),
            });
        }
        Ok(())
    }
}

impl<T: Native> Sink for Output<T> {
    fn dictionary(&mut self, mut page: PageValues<'_>, count: usize) -> Result<bool, DecodeError> {
        let values = page.prefix(usize::MAX)?;
        if values.len() / T::WIDTH < count {
            return Err(DecodeError::Corrupt(format!(
                "a dictionary page of {} bytes claims {count} values",
                values.len()
            )));
        }
        // Values that are their stored bits, on an aligned page: the page becomes the
        // dictionary, not copied (a large dictionary's copy stores into memory not in the
        // caches, and showed in profiles). Aligned is asked of the owned page: one in the
        // reused buffer is copied out when owned.
        if T::STORED_BYTES {
            let page = page.into_owned()?;
            self.dictionary = Some(match page.as_ptr().align_offset(align_of::<T::Out>()) {
                0 => ScalarBuffer::new(Buffer::from(page), 0, count),
                _ => page.chunks_exact(T::WIDTH).take(count).map(T::read).collect(),
            });
            return Ok(true);
        }
        self.dictionary = Some(values.chunks_exact(T::WIDTH).take(count).map(T::read).collect());
        Ok(true)
    }

    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError> {
        let stored = page.non_null();
        let count = crate::selection::count_set_bits(selected);
        self.values.reserve(count);
        if let Some(validity) = &mut self.validity {
            validity.reserve(count);
        }
        let whole = count == page.rows;
        let encoding = page.encoding;
        let dictionary = match encoding {
            Encoding::PLAIN => None,
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => {
                Some(self.dictionary.take().ok_or_else(|| {
                    DecodeError::Corrupt("a dictionary-encoded page without a dictionary page".into())
                })?)
            }
            Encoding::BYTE_STREAM_SPLIT if T::SPLIT => None,
            Encoding::DELTA_BINARY_PACKED if self.integers && cfg!(target_endian = "little") => None,
            _ => return Ok(false),
        };
        // Values are needed up to the last selected one; indices, whole.
        let needed = match &dictionary {
            None if !whole => crate::selection::mask::last_set(selected).map_or(0, |last| page.stored_before(last + 1)),
            None => stored,
            Some(_) => usize::MAX / T::WIDTH,
        };
        // Every row of a DELTA_BINARY_PACKED page without nulls: decoded into the output.
        if encoding == Encoding::DELTA_BINARY_PACKED && whole && page.valid.is_none() {
            T::decode_delta(page.values.prefix(usize::MAX)?, stored, &mut self.values)
                .unwrap_or_else(not_integers)
                .map_err(DecodeError::Corrupt)?;
            self.append_valid(page.rows);
            return Ok(true);
        }
        // Every row of a BYTE_STREAM_SPLIT page without nulls: joined into the output.
        if encoding == Encoding::BYTE_STREAM_SPLIT && T::STORED_BYTES && whole && page.valid.is_none() {
            let data = page.values.prefix(usize::MAX)?;
            check_streams::<T>(data, stored, stored)?;
            self.values.reserve(stored);
            let spare = &mut self.values.spare_capacity_mut()[..stored];
            // SAFETY: `T::Out` is `T::WIDTH` bytes holding the stored ones, little-endian
            // (`STORED_BYTES`), any bytes a valid value (an integer or a float), so the
            // spare values are as many spare bytes.
            let bytes = unsafe {
                std::slice::from_raw_parts_mut(
                    spare.as_mut_ptr().cast::<std::mem::MaybeUninit<u8>>(),
                    stored * T::WIDTH,
                )
            };
            super::byte_stream_split::join(data, T::WIDTH, stored, bytes);
            // SAFETY: `join` wrote every byte of the `stored` values after the length.
            unsafe { self.values.set_len(self.values.len() + stored) };
            self.append_valid(page.rows);
            return Ok(true);
        }
        // Reused buffers, taken while the page's values borrow them.
        let mut plain = std::mem::take(&mut self.plain);
        let mut deltas = std::mem::take(&mut self.deltas);
        let values = match encoding {
            Encoding::BYTE_STREAM_SPLIT => {
                join_streams::<T>(page.values.prefix(usize::MAX)?, stored, needed, &mut plain)?;
                &plain[..]
            }
            Encoding::DELTA_BINARY_PACKED => {
                deltas.clear();
                T::decode_delta(page.values.prefix(usize::MAX)?, needed, &mut deltas)
                    .unwrap_or_else(not_integers)
                    .map_err(DecodeError::Corrupt)?;
                // Little-endian (checked above): the values' bytes are their PLAIN layout.
                arrow::datatypes::ToByteSlice::to_byte_slice(deltas.as_slice())
            }
            _ => page.values.prefix(needed * T::WIDTH)?,
        };
        if dictionary.is_none() && values.len() / T::WIDTH < needed {
            return Err(DecodeError::Corrupt(format!("a page of {} value bytes holds {stored} values", values.len())));
        }
        let valid = page.valid.as_ref();
        let result = match whole {
            // Every row of the page: its stored values decoded in one pass, then spread over
            // the null rows (if any).
            true => self.whole_page(values, valid, page.rows, stored, dictionary.as_deref()),
            // Some rows: each selected row's value read where it lies (indices: unpacked
            // in one pass first when the selection is dense).
            false => self.selected_rows(values, valid, stored, selected, count, dictionary.as_deref()),
        };
        self.dictionary = dictionary;
        self.plain = plain;
        self.deltas = deltas;
        result.map(|()| true)
    }
}

impl<T: Native> Output<T> {
    /// Appends every row of a page of `rows` rows whose validity is `valid` and whose
    /// `stored` values are `values` (PLAIN, or indices into `dictionary`).
    fn whole_page(
        &mut self,
        values: &[u8],
        valid: Option<&BooleanBuffer>,
        rows: usize,
        stored: usize,
        dictionary: Option<&[T::Out]>,
    ) -> Result<(), DecodeError> {
        // Without nulls the values go straight to the output.
        let Some(valid) = valid else {
            let mut out = std::mem::take(&mut self.values);
            let decoded = self.dense_values(values, stored, dictionary, &mut out);
            self.values = out;
            decoded?;
            self.append_valid(rows);
            return Ok(());
        };
        if valid.len() != rows {
            return Err(DecodeError::Corrupt(format!("{} levels for a page of {rows} rows", valid.len())));
        }
        match dictionary {
            // The indices looked up as they are spread over the rows: one pass, where the
            // values first gathered densely would be written and read once more.
            Some(dictionary) if !self.keys && !dictionary.is_empty() => {
                let mut indices = std::mem::take(&mut self.indices);
                let decoded = decode_indices(values, stored, dictionary.len(), &mut indices);
                if decoded.is_ok() {
                    // The slot past the last valid row's: any entry.
                    indices.push(0);
                    // SAFETY: `decode_indices` checked every index below the dictionary's
                    // length, and the one pushed is 0, below a dictionary that is not empty.
                    self.spread(valid, |next| unsafe { *dictionary.get_unchecked(indices[next] as usize) });
                }
                self.indices = indices;
                decoded?;
            }
            _ => {
                let mut dense = std::mem::take(&mut self.scratch);
                dense.clear();
                let decoded = self.dense_values(values, stored, dictionary, &mut dense);
                if decoded.is_ok() {
                    // The slot past the last valid row's: a default.
                    dense.push(T::Out::default());
                    self.spread(valid, |next| dense[next]);
                }
                self.scratch = dense;
                decoded?;
            }
        }
        self.validity.as_mut().expect("levels only for an optional column").append_buffer(valid);
        Ok(())
    }

    /// Appends a row for each bit of `valid`: the `i`-th valid row takes `value(i)`, a null
    /// row that of the next valid one (any value is allowed under a null), without a branch:
    /// each row takes the next value and moves on by its validity bit. `value` answers for
    /// every index up to the valid rows' count (the slot past the last).
    fn spread(&mut self, valid: &BooleanBuffer, value: impl Fn(usize) -> T::Out) {
        let (start, rows) = (self.values.len(), valid.len());
        self.values.reserve(rows);
        // Written in place, not zeroed first by a `resize`.
        let out = &mut self.values.spare_capacity_mut()[..rows];
        let chunks = valid.bit_chunks();
        let words = chunks.iter().chain(std::iter::once(chunks.remainder_bits()));
        let mut next = 0;
        for (rows, word) in out.chunks_mut(64).zip(words) {
            for (bit, slot) in rows.iter_mut().enumerate() {
                slot.write(value(next));
                next += (word >> bit & 1) as usize;
            }
        }
        // SAFETY: the words cover every one of the `rows` slots (`chunks_mut(64)` and the
        // bit chunks with their remainder both split `rows` the same way): each was written.
        unsafe { self.values.set_len(start + rows) };
    }

    /// Appends the `stored` values `values` (PLAIN, or indices into `dictionary`) to `out`.
    fn dense_values(
        &mut self,
        values: &[u8],
        stored: usize,
        dictionary: Option<&[T::Out]>,
        out: &mut Vec<T::Out>,
    ) -> Result<(), DecodeError> {
        let Some(dictionary) = dictionary else {
            out.extend(values[..stored * T::WIDTH].chunks_exact(T::WIDTH).map(T::read));
            return Ok(());
        };
        let mut indices = std::mem::take(&mut self.indices);
        let decoded = decode_indices(values, stored, dictionary.len(), &mut indices);
        match decoded.is_ok() {
            true if self.keys => out.extend(indices.iter().map(|&k| T::read(&k.to_le_bytes()))),
            // SAFETY: `decode_indices` checked every index below the dictionary's length.
            true => out.extend(indices.iter().map(|&k| unsafe { *dictionary.get_unchecked(k as usize) })),
            false => {}
        }
        self.indices = indices;
        decoded
    }

    /// Appends the `selected` rows (`count` of them) of a page (validity `valid`, `stored`
    /// values `values`: PLAIN, or indices into `dictionary`), each value read where it lies
    /// — or, for a [dense](dense_selection) selection, the indices unpacked in one pass first.
    fn selected_rows(
        &mut self,
        values: &[u8],
        valid: Option<&BooleanBuffer>,
        stored: usize,
        selected: &BooleanBuffer,
        count: usize,
        dictionary: Option<&[T::Out]>,
    ) -> Result<(), DecodeError> {
        let past_the_end = |i: usize| DecodeError::Corrupt(format!("a page of {stored} values asked for value {i}"));
        let Some(dictionary) = dictionary else {
            // Without nulls a row's value is its stored one: compressed out by the mask.
            if valid.is_none() {
                self.append_valid(count);
                return match compress::append_selected::<T>(values, selected, count, &mut self.values) {
                    true => Ok(()),
                    false => Err(past_the_end(stored)),
                };
            }
            let value = |i: usize| values.get(i * T::WIDTH..(i + 1) * T::WIDTH).map(T::read);
            return self.pick(valid, selected, count, value).map_err(past_the_end);
        };
        if stored == 0 {
            return self
                .pick(valid, selected, count, |_| None)
                .map_err(|_| DecodeError::Corrupt("a null page asked for a value".into()));
        }
        if dense_selection(count, stored) {
            let mut indices = std::mem::take(&mut self.indices);
            // Every index checked against the dictionary's length once decoded.
            let result = decode_indices(values, stored, dictionary.len(), &mut indices).and_then(|()| match valid {
                // Without nulls the selected rows' indices compressed out, then looked up.
                // SAFETY: `decode_indices` checked every index below the dictionary's length.
                None => unsafe { self.look_up_selected(&indices, selected, count, dictionary) }.map_err(past_the_end),
                Some(_) => self
                    .pick(valid, selected, count, |i| indices.get(i).map(|&k| dictionary[k as usize]))
                    .map_err(past_the_end),
            });
            self.indices = indices;
            return result;
        }
        let mut cursor = indices_cursor(values)?;
        let mut failure = None;
        let picked = self.pick(valid, selected, count, |i| match cursor.get(i) {
            Ok(k) => dictionary.get(k as usize).copied().or_else(|| {
                failure = Some(outside(k, dictionary.len()));
                None
            }),
            Err(e) => {
                failure = Some(indices_error(e));
                None
            }
        });
        picked.map_err(|i| failure.unwrap_or_else(|| past_the_end(i)))
    }
}

impl<T: Native> Output<T> {
    /// Appends the values in `dictionary` of the rows `selected` (`count` of them) sets
    /// in a page without nulls whose rows' indices are `indices`, each checked below the
    /// dictionary's length (by `decode_indices`); `Err(i)`: row `i` is past the indices.
    ///
    /// # Safety
    /// Every index in `indices` is below `dictionary.len()`.
    unsafe fn look_up_selected(
        &mut self,
        indices: &[u32],
        selected: &BooleanBuffer,
        count: usize,
        dictionary: &[T::Out],
    ) -> Result<(), usize> {
        // SAFETY: a `u32` slice's bytes (little-endian on the targets built for).
        let bytes =
            unsafe { std::slice::from_raw_parts(indices.as_ptr().cast::<u8>(), std::mem::size_of_val(indices)) };
        if self.keys {
            // The indices are the values: compressed straight into the output.
            if !compress::append_selected::<T>(bytes, selected, count, &mut self.values) {
                return Err(indices.len());
            }
        } else {
            let mut keys = std::mem::take(&mut self.selected_indices);
            keys.clear();
            let complete = compress::append_selected::<u32>(bytes, selected, count, &mut keys);
            if complete {
                // SAFETY: the caller's guarantee.
                self.values.extend(keys.iter().map(|&k| unsafe { *dictionary.get_unchecked(k as usize) }));
            }
            self.selected_indices = keys;
            if !complete {
                return Err(indices.len());
            }
        }
        self.append_valid(count);
        Ok(())
    }
}

/// Dictionary keys of the selected rows, and the chunk's dictionary.
pub(super) struct KeysOutput {
    /// The keys, looked up in the identity dictionary `0..n` (which checks them).
    keys: Output<u32>,
    values: Option<ArrayRef>,
    value_type: DataType,
}

impl KeysOutput {
    pub(super) fn new(selected: usize, nullable: bool, value_type: &DataType) -> Self {
        Self { keys: Output::new(selected, nullable), values: None, value_type: value_type.clone() }
    }

    pub(super) fn finish(self) -> Result<ArrayRef, DecodeError> {
        let keys = self.keys.finish(&DataType::Int32)?;
        let keys = keys.as_any().downcast_ref::<Int32Array>().expect("Int32 keys").clone();
        let values = self.values.unwrap_or_else(|| new_empty_array(&self.value_type));
        // Every valid row's key was checked below the dictionary's length as it was decoded.
        debug_assert!(DictionaryArray::<Int32Type>::try_new(keys.clone(), values.clone()).is_ok());
        // SAFETY: the keys of valid rows are below `values.len()` (the identity dictionary
        // `0..values.len()` they were looked up or checked in); null rows' keys are 0.
        Ok(Arc::new(unsafe { DictionaryArray::<Int32Type>::new_unchecked(keys, values) }))
    }
}

impl Sink for KeysOutput {
    fn dictionary(&mut self, mut page: PageValues<'_>, count: usize) -> Result<bool, DecodeError> {
        let values = page.prefix(usize::MAX)?;
        let values = match self.value_type {
            DataType::Utf8 => byte_arrays::<i32>(values, count, true),
            DataType::LargeUtf8 => byte_arrays::<i64>(values, count, true),
            DataType::Binary => byte_arrays::<i32>(values, count, false),
            _ => byte_arrays::<i64>(values, count, false),
        };
        let Some(values) = values? else { return Ok(false) };
        let count =
            u32::try_from(values.len()).map_err(|_| DecodeError::Corrupt("a dictionary of over 2^32 values".into()))?;
        self.values = Some(values);
        self.keys.dictionary = Some(ScalarBuffer::from_iter(0..count));
        self.keys.keys = true;
        Ok(true)
    }

    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError> {
        match page.encoding {
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => self.keys.page(page, selected),
            _ => Ok(false),
        }
    }
}

/// What [`Native::decode_delta`] answers for a sink of other values (never asked: only
/// INT32 and INT64 sinks take DELTA_BINARY_PACKED pages).
fn not_integers() -> Result<(), String> {
    Err("DELTA_BINARY_PACKED values of a type other than INT32 or INT64".into())
}

/// An error unless BYTE_STREAM_SPLIT `data` is `stored` values' streams, of which `n` are
/// wanted.
fn check_streams<T: Native>(data: &[u8], stored: usize, n: usize) -> Result<(), DecodeError> {
    if data.len() != stored.saturating_mul(T::WIDTH) || n > stored {
        return Err(DecodeError::Corrupt(format!(
            "a BYTE_STREAM_SPLIT page of {} bytes for {stored} values of {} bytes",
            data.len(),
            T::WIDTH
        )));
    }
    Ok(())
}

/// Sets `out` to the first `n` of the `stored` values of BYTE_STREAM_SPLIT `data` in
/// PLAIN's layout: byte `k` of value `i` is byte `i` of the `k`-th of `T::WIDTH`
/// streams of `stored` bytes each. (Values 0x0102 and 0x0304 of 2 bytes: streams
/// `02 04` and `01 03`.)
fn join_streams<T: Native>(data: &[u8], stored: usize, n: usize, out: &mut Vec<u8>) -> Result<(), DecodeError> {
    check_streams::<T>(data, stored, n)?;
    out.clear();
    out.reserve(n * T::WIDTH);
    super::byte_stream_split::join(data, T::WIDTH, stored, &mut out.spare_capacity_mut()[..n * T::WIDTH]);
    // SAFETY: `join` wrote every byte of the first `n * T::WIDTH`.
    unsafe { out.set_len(n * T::WIDTH) };
    Ok(())
}
