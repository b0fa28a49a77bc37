//! Parquet's DELTA_BINARY_PACKED encoding of INT32 and INT64 values, decoded from one
//! page's bytes (what writers with Parquet v2 settings use for integers and timestamps).
//!
//! A header — block size, miniblocks per block, value count (ULEB128 each) and the first
//! value (zigzag ULEB128) — then blocks: each a minimum delta (zigzag ULEB128), one bit
//! width per miniblock, and the miniblocks, each `block size / miniblocks` deltas less the
//! minimum, bit-packed LSB first. A value is the previous one plus the minimum plus its
//! packed delta, wrapping in the type's width. Miniblocks past the last value are omitted
//! (their widths are still there, any value).
//!
//! ```
//! use pqsift::format::delta_binary_packed::decode;
//! // Block of 128 in 4 miniblocks, 5 values, first value 7 (zigzag 14); a block whose
//! // minimum delta is 1 (zigzag 2), widths 1, 0, 0, 0, then 32 one-bit deltas (4 bytes):
//! // 0, 1, 0, 1 over the minimum of 1.
//! let page = [128, 1, 4, 5, 14, 2, 1, 0, 0, 0, 0b1010, 0, 0, 0];
//! let mut out = Vec::<u64>::new();
//! decode(&page, 5, &mut out).unwrap();
//! assert_eq!(out, [7, 8, 10, 11, 13]);
//! ```
//!
//! Why not the crate's: its `DeltaBitPackDecoder` is public only behind the `experimental`
//! feature (see [`rle_hybrid`](super::rle_hybrid)), and it decodes into a slice the caller
//! has zeroed; here the values are written once, into the caller's buffer, so that a page
//! can be decoded only as far as its last selected row.

/// Why DELTA_BINARY_PACKED data could not be decoded (the data is corrupt).
pub type DeltaError = String;

/// A decoded value's type: the wrapping sum is kept in 64 bits and truncated to `Self`
/// (INT32 values wrap in 32 bits, and the low 32 bits of a 64-bit wrapping sum are the
/// 32-bit wrapping sum).
pub trait DeltaValue: Copy {
    fn truncate(value: u64) -> Self;
}

impl DeltaValue for u32 {
    #[inline(always)]
    fn truncate(value: u64) -> u32 {
        value as u32
    }
}

impl DeltaValue for u64 {
    #[inline(always)]
    fn truncate(value: u64) -> u64 {
        value
    }
}

/// The most values a miniblock may hold here: a larger one is refused as corrupt rather
/// than sized from the page's claim.
const MAX_MINIBLOCK: usize = 1 << 16;

/// A stream's header: its block layout, value count and first value.
struct Header {
    miniblocks: usize,
    per_miniblock: usize,
    total: u64,
    first: u64,
}

impl Header {
    /// Reads the header at the start of `reader`'s data; the layout is checked only when
    /// there are deltas to unpack (a stream of one value or none has no blocks).
    fn read(reader: &mut Reader<'_>) -> Result<Self, DeltaError> {
        let block_size = reader.uleb128()?;
        let miniblocks = reader.uleb128()?;
        let total = reader.uleb128()?;
        let first = zigzag(reader.uleb128()?);
        if total > 1 {
            if miniblocks == 0
                || block_size == 0
                || !block_size.is_multiple_of(128)
                || !block_size.is_multiple_of(miniblocks)
            {
                return Err(format!("a block of {block_size} values in {miniblocks} miniblocks"));
            }
            let per_miniblock = block_size / miniblocks;
            if !per_miniblock.is_multiple_of(32) || per_miniblock > MAX_MINIBLOCK as u64 {
                return Err(format!("miniblocks of {per_miniblock} values"));
            }
        }
        let per_miniblock = if total > 1 { (block_size / miniblocks) as usize } else { 0 };
        Ok(Self { miniblocks: miniblocks as usize, per_miniblock, total, first })
    }
}

/// Appends the first `n` values of DELTA_BINARY_PACKED `data` to `out`; an error when the
/// data holds fewer, or is malformed.
pub fn decode<T: DeltaValue>(data: &[u8], n: usize, out: &mut Vec<T>) -> Result<(), DeltaError> {
    let mut reader = Reader { data, pos: 0 };
    let Header { miniblocks, per_miniblock, total, first } = Header::read(&mut reader)?;
    if n == 0 {
        return Ok(());
    }
    if (total as u128) < n as u128 {
        return Err(format!("a page of {total} values asked for {n}"));
    }
    out.reserve(n);
    out.push(T::truncate(first));
    let mut last = first;
    let mut left = n - 1;
    while left > 0 {
        let min_delta = zigzag(reader.uleb128()?);
        let widths = reader.take(miniblocks)?;
        for &width in widths {
            if left == 0 {
                break;
            }
            let width = usize::from(width);
            if width > 64 {
                return Err(format!("a miniblock of {width}-bit deltas"));
            }
            // The last miniblock is padded to its full length; only its values are unpacked.
            let start = reader.pos;
            reader.take(per_miniblock * width / 8)?;
            let take = left.min(per_miniblock);
            // Unpacked from the rest of the data, not the miniblock alone: a group's load
            // may read on into the next miniblock's bytes, so only the data's last groups
            // need a padded copy (a miniblock of 32 values is just four groups).
            append_miniblock(&data[start..], width, take, min_delta, &mut last, out);
            left -= take;
        }
    }
    Ok(())
}

/// How many values DELTA_BINARY_PACKED `data` holds, and how many bytes they take (where
/// what follows them begins: the byte array encodings put their bytes after such a stream
/// of lengths), read from the headers without unpacking a value.
///
/// ```
/// use pqsift::format::delta_binary_packed::extent;
/// // The stream of the module's example, then two bytes of something else.
/// let data = [128, 1, 4, 5, 14, 2, 1, 0, 0, 0, 0b1010, 0, 0, 0, b'h', b'i'];
/// assert_eq!(extent(&data).unwrap(), (5, 14));
/// ```
pub fn extent(data: &[u8]) -> Result<(u64, usize), DeltaError> {
    let mut reader = Reader { data, pos: 0 };
    let Header { miniblocks, per_miniblock, total, .. } = Header::read(&mut reader)?;
    // Each block takes at least a byte: the walk ends with the data, whatever `total` says.
    let mut left = total.saturating_sub(1);
    while left > 0 {
        reader.uleb128()?;
        for &width in reader.take(miniblocks)? {
            if left == 0 {
                break;
            }
            if width > 64 {
                return Err(format!("a miniblock of {width}-bit deltas"));
            }
            reader.take(per_miniblock * usize::from(width) / 8)?;
            left = left.saturating_sub(per_miniblock as u64);
        }
    }
    Ok((total, reader.pos))
}

/// The zigzag-encoded integer `v` (0, -1, 1, -2, ... as 0, 1, 2, 3, ...), as its bits.
fn zigzag(v: u64) -> u64 {
    (v >> 1) ^ (v & 1).wrapping_neg()
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn uleb128(&mut self) -> Result<u64, DeltaError> {
        super::uleb128::read(self.data, &mut self.pos, 10).map_err(|e| match e {
            super::uleb128::Uleb128Error::Ended => "DELTA_BINARY_PACKED data ends in a header".into(),
            super::uleb128::Uleb128Error::TooLong => "a ULEB128 integer of more than 64 bits".into(),
        })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DeltaError> {
        let end = self.pos.checked_add(n).filter(|&end| end <= self.data.len());
        let end = end.ok_or("DELTA_BINARY_PACKED data ends in a miniblock")?;
        let taken = &self.data[self.pos..end];
        self.pos = end;
        Ok(taken)
    }
}

/// Appends a miniblock's first `take` values to `out`: its `width`-bit deltas unpacked from
/// the start of `packed` (which holds them, and may hold more bytes after them), each value
/// the one before (`last`, updated) plus `min_delta` plus its delta.
fn append_miniblock<T: DeltaValue>(
    packed: &[u8],
    width: usize,
    take: usize,
    min_delta: u64,
    last: &mut u64,
    out: &mut Vec<T>,
) {
    macro_rules! by_width {
        ($($w:literal)*) => {
            match width {
                $($w => append_groups::<T, $w>(packed, take, min_delta, last, out),)*
                _ => unreachable!("bit width checked to be at most 64"),
            }
        };
    }
    by_width!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
        33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64);
}

/// [`append_miniblock`] with the width known at compile time, a group of 8 deltas (`W`
/// bytes) at a time, unpacked into registers and summed straight into `out`. The unpacking
/// loads reach up to 15 bytes past a group, so the groups near the end of `packed` are
/// unpacked from a copy padded with zeros.
#[inline(always)]
fn append_groups<T: DeltaValue, const W: usize>(
    packed: &[u8],
    take: usize,
    min_delta: u64,
    last: &mut u64,
    out: &mut Vec<T>,
) {
    const PAD: usize = 16;
    let groups = take.div_ceil(8);
    // (No group of a zero width is unpacked.)
    let fast = packed.len().saturating_sub(PAD).checked_div(W).map_or(0, |fit| groups.min(fit));
    out.reserve(take);
    let spare = &mut out.spare_capacity_mut()[..take];
    let mut running = *last;
    let mut padded = [0u8; 64 + PAD];
    let (full, tail) = spare.as_chunks_mut::<8>();
    for (g, slots) in full.iter_mut().enumerate() {
        let deltas = if W == 0 {
            [0; 8]
        } else if g < fast {
            unpack_group::<W>(&packed[g * W..g * W + W + PAD])
        } else {
            padded[..W].copy_from_slice(&packed[g * W..g * W + W]);
            unpack_group::<W>(&padded)
        };
        // Eight values, in registers: the only chain is one add a value.
        for (slot, delta) in slots.iter_mut().zip(deltas) {
            running = running.wrapping_add(min_delta).wrapping_add(delta);
            slot.write(T::truncate(running));
        }
    }
    if !tail.is_empty() {
        let g = full.len();
        padded[..W].copy_from_slice(&packed[g * W..g * W + W]);
        for (slot, delta) in tail.iter_mut().zip(unpack_group::<W>(&padded)) {
            running = running.wrapping_add(min_delta).wrapping_add(delta);
            slot.write(T::truncate(running));
        }
    }
    *last = running;
    // SAFETY: the loop above wrote each of the `take` spare values.
    unsafe { out.set_len(out.len() + take) };
}

/// The 8 `W`-bit values packed in `group` (which holds 16 bytes past them).
#[inline(always)]
fn unpack_group<const W: usize>(group: &[u8]) -> [u64; 8] {
    let mask = if W == 64 { u64::MAX } else { (1u64 << W) - 1 };
    std::array::from_fn(|i| {
        let bit = i * W;
        let at = bit / 8;
        if W == 0 {
            0
        } else if W == 64 {
            u64::from_le_bytes(group[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
        } else if W <= 56 {
            u64::from_le_bytes(group[at..at + 8].try_into().expect("8 bytes")) >> (bit % 8) & mask
        } else {
            (u128::from_le_bytes(group[at..at + 16].try_into().expect("16 bytes")) >> (bit % 8)) as u64 & mask
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::basic::Encoding;
    use parquet::file::properties::{WriterProperties, WriterVersion};
    use proptest::prelude::*;

    /// `values` written by the crate as one DELTA_BINARY_PACKED page of an INT64 (or INT32)
    /// column, and the page's value bytes.
    fn page_of(values: &[i64], int32: bool) -> Vec<u8> {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let array: arrow::array::ArrayRef = match int32 {
            true => std::sync::Arc::new(arrow::array::Int32Array::from_iter_values(values.iter().map(|&v| v as i32))),
            false => std::sync::Arc::new(arrow::array::Int64Array::from_iter_values(values.iter().copied())),
        };
        let batch = arrow::array::RecordBatch::try_from_iter([("v", array)]).unwrap();
        let properties = WriterProperties::builder()
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_dictionary_enabled(false)
            .set_encoding(Encoding::DELTA_BINARY_PACKED)
            .set_compression(parquet::basic::Compression::UNCOMPRESSED)
            .set_data_page_row_count_limit(usize::MAX)
            .build();
        let mut file = Vec::new();
        let mut writer = parquet::arrow::ArrowWriter::try_new(&mut file, batch.schema(), Some(properties)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let reader = SerializedFileReader::new(bytes::Bytes::from(file)).unwrap();
        let mut pages = reader.get_row_group(0).unwrap().get_column_page_reader(0).unwrap();
        match pages.get_next_page().unwrap().unwrap() {
            parquet::column::page::Page::DataPageV2 { buf, encoding, def_levels_byte_len, .. } => {
                assert_eq!(encoding, Encoding::DELTA_BINARY_PACKED);
                buf[def_levels_byte_len as usize..].to_vec()
            }
            other => panic!("a v2 data page, not {:?}", other.page_type()),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// The crate's pages decode to their values, any prefix of them: extremes that
        /// overflow a delta, runs of one value, sorted and random values.
        #[test]
        fn decodes_the_crates_pages(
            values in prop::collection::vec(prop_oneof![
                any::<i64>(), Just(i64::MIN), Just(i64::MAX), Just(0i64), -1000i64..1000,
            ], 1..1200),
            sorted in any::<bool>(),
            int32 in any::<bool>(),
            cut in 0usize..1200,
        ) {
            let mut values = values;
            if sorted {
                values.sort_unstable();
            }
            let page = page_of(&values, int32);
            let n = cut.min(values.len());
            if int32 {
                let mut out = Vec::<u32>::new();
                decode(&page, n, &mut out).unwrap();
                let want: Vec<u32> = values[..n].iter().map(|&v| v as i32 as u32).collect();
                prop_assert_eq!(out, want);
            } else {
                let mut out = Vec::<u64>::new();
                decode(&page, n, &mut out).unwrap();
                let want: Vec<u64> = values[..n].iter().map(|&v| v as u64).collect();
                prop_assert_eq!(out, want);
            }
            // One value more than the page holds is an error.
            prop_assert!(decode(&page, values.len() + 1, &mut Vec::<u64>::new()).is_err());
            // The stream ends where the page does, whatever follows it; cut short, it errs.
            let mut followed = page.clone();
            followed.extend_from_slice(b"after");
            prop_assert_eq!(extent(&followed).unwrap(), (values.len() as u64, page.len()));
            if values.len() > 1 {
                prop_assert!(extent(&page[..page.len() - 1]).is_err());
            }
        }

        /// Any bytes decode or fail cleanly, without a panic or a huge allocation.
        #[test]
        fn any_bytes_fail_cleanly(data in prop::collection::vec(any::<u8>(), 0..200), n in 0usize..2000) {
            let _ = decode(&data, n, &mut Vec::<u64>::new());
            if let Ok((_, end)) = extent(&data) {
                prop_assert!(end <= data.len());
            }
        }
    }

    #[test]
    fn every_width_round_trips() {
        // Values alternating 0 and 2^(width - 1): deltas packed in widths from 0 to 64 bits.
        for width in 0..=64u32 {
            let step: i64 = if width == 0 { 0 } else { (1u64 << (width - 1)) as i64 };
            let values: Vec<i64> = (0..300i64).map(|i| if i % 2 == 0 { 0 } else { step }).collect();
            let page = page_of(&values, false);
            let mut out = Vec::<u64>::new();
            decode(&page, values.len(), &mut out).unwrap();
            assert_eq!(out, values.iter().map(|&v| v as u64).collect::<Vec<_>>(), "width {width}");
            // INT32: the same deltas, summed and written in 32 bits.
            if width <= 32 {
                let page = page_of(&values, true);
                let mut out = Vec::<u32>::new();
                decode(&page, values.len(), &mut out).unwrap();
                let want: Vec<u32> = values.iter().map(|&v| v as i32 as u32).collect();
                assert_eq!(out, want, "INT32, width {width}");
            }
        }
    }
}
