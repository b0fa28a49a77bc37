//! The sink of booleans: PLAIN bit-packed values appended a selected run at a time; RLE
//! ones (v2 pages: a 4-byte length, then 1-bit hybrid runs) unpacked into bits first.

use super::*;

/// Booleans: values and, for an optional column, validity, as bitmaps.
pub(super) struct BitOutput {
    values: BooleanBufferBuilder,
    validity: Option<BooleanBufferBuilder>,
}

impl BitOutput {
    pub(super) fn new(selected: usize, nullable: bool) -> Self {
        let reserve = selected.min(MAX_RESERVED_VALUES);
        Self {
            values: BooleanBufferBuilder::new(reserve),
            validity: nullable.then(|| BooleanBufferBuilder::new(reserve)),
        }
    }

    pub(super) fn finish(mut self) -> ArrayRef {
        let nulls = self.validity.as_mut().map(|v| NullBuffer::new(v.finish())).filter(|n| n.null_count() > 0);
        Arc::new(BooleanArray::new(self.values.finish(), nulls))
    }
}

impl Sink for BitOutput {
    fn dictionary(&mut self, _page: PageValues<'_>, _count: usize) -> Result<bool, DecodeError> {
        Ok(false)
    }

    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError> {
        let stored = page.non_null();
        let unpacked;
        let bits = match page.encoding {
            Encoding::PLAIN => page.values.prefix(stored.div_ceil(8))?,
            Encoding::RLE => {
                unpacked = rle_booleans(page.values.prefix(usize::MAX)?, stored)?;
                unpacked.values()
            }
            _ => return Ok(false),
        };
        if bits.len().saturating_mul(8) < stored {
            return Err(DecodeError::Corrupt(format!("a page of {} value bytes holds {stored} booleans", bits.len())));
        }
        let Some(valid) = &page.valid else {
            if let Some(validity) = &mut self.validity {
                validity.append_n(crate::selection::count_set_bits(selected), true);
            }
            for (start, end) in selected.set_slices() {
                self.values.append_packed_range(start..end, bits);
            }
            return Ok(true);
        };
        let validity = self.validity.as_mut().expect("levels only for an optional column");
        for stored in selected_stored(valid, selected, validity) {
            self.values.append(stored.is_some_and(|i| bits[i / 8] >> (i % 8) & 1 == 1));
        }
        Ok(true)
    }
}

/// A page's `stored` RLE-encoded booleans (`values`: their length in 4 bytes, then the
/// 1-bit hybrid runs), as bits.
fn rle_booleans(values: &[u8], stored: usize) -> Result<BooleanBuffer, DecodeError> {
    let corrupt = |reason: String| DecodeError::Corrupt(format!("RLE booleans: {reason}"));
    let length = values.get(..4).ok_or_else(|| corrupt("no length".into()))?;
    let length = u32::from_le_bytes(length.try_into().expect("4 bytes")) as usize;
    let runs = values
        .get(4..4usize.saturating_add(length))
        .ok_or_else(|| corrupt(format!("{length} bytes past the page's end")))?;
    rle_hybrid::decode_bits(runs, stored).map_err(corrupt)
}
