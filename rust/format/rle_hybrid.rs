//! Parquet's RLE / bit-packing hybrid encoding, decoded from one page's bytes: the
//! definition levels of a flat column and the indices of a dictionary-encoded page.
//!
//! The data is a sequence of runs, each opening with a ULEB128 header `h`: an odd `h`
//! is `h >> 1` groups of 8 values bit-packed LSB first (`bit_width` bytes a group), an even
//! `h` is `h >> 1` repeats of one value stored little-endian in `ceil(bit_width / 8)` bytes.
//! The last group of a page may hold padding past its values; it is never read.
//!
//! ```
//! use pqsift::format::rle_hybrid::decode_values;
//! // A run of 3 × 5 (header 3 << 1), then one bit-packed group (header 1 << 1 | 1) of
//! // 8 values of 3 bits: 0..8.
//! let data = [6, 5, 3, 0b10_001_000, 0b1_100_011_0, 0b111_110_10];
//! let mut out = Vec::new();
//! decode_values(&data, 3, 11, &mut out).unwrap();
//! assert_eq!(out, [5, 5, 5, 0, 1, 2, 3, 4, 5, 6, 7]);
//! ```
//!
//! Why not the crate's: its `RleDecoder` is public only behind the `experimental` feature,
//! which carries no semver promise and brings the Variant crates. This one also writes
//! 1-bit levels straight into an Arrow bitmap (a bit-packed run of levels *is* one).

use arrow::buffer::BooleanBuffer;

use crate::selection::mask::{BitWriter, low_bits};

/// Why hybrid-encoded data could not be decoded (the data is corrupt).
pub type HybridError = String;

/// Decodes the first `n` values of hybrid-encoded `data` of `bit_width` bits (at most 32),
/// appending them to `out`.
pub fn decode_values(data: &[u8], bit_width: u8, n: usize, out: &mut Vec<u32>) -> Result<(), HybridError> {
    if bit_width > 32 {
        return Err(format!("bit width {bit_width} is over 32"));
    }
    let width = usize::from(bit_width);
    out.reserve(n);
    let mut runs = Runs { data, pos: 0, width, decoded: 0, wanted: n };
    while runs.decoded < n {
        match runs.next()? {
            Run::Repeat { count, value } => {
                let take = count.min(n - runs.decoded);
                out.extend(std::iter::repeat_n(value, take));
                runs.decoded += take;
            }
            Run::Packed { bytes, count } => {
                let take = count.min(n - runs.decoded);
                unpack(bytes, width, take, out)?;
                runs.decoded += take;
            }
        }
    }
    Ok(())
}

/// Fails where hybrid-encoded `data` of `bit_width` bits (at most 32) ends before `n`
/// values: its run headers walked, no value decoded. Runs of no value are passed over,
/// as decoders pass over them.
///
/// ```
/// use pqsift::format::rle_hybrid::check_holds;
/// // A run of 3 × 5, then one bit-packed group of 8 values of 3 bits: 11 values.
/// let data = [6, 5, 3, 0b10_001_000, 0b1_100_011_0, 0b111_110_10];
/// assert!(check_holds(&data, 3, 11).is_ok());
/// assert!(check_holds(&data, 3, 12).is_err());
/// // A run of no value (header 0), then nothing.
/// assert!(check_holds(&[0, 0], 1, 1).is_err());
/// ```
pub fn check_holds(data: &[u8], bit_width: u8, n: usize) -> Result<(), HybridError> {
    if bit_width > 32 {
        return Err(format!("bit width {bit_width} is over 32"));
    }
    let width = usize::from(bit_width);
    let mut runs = Runs { data, pos: 0, width, decoded: 0, wanted: n };
    while runs.decoded < n {
        // Each run takes a header byte at least: the walk ends with the data.
        let values = match runs.next()? {
            Run::Repeat { count, .. } => count,
            Run::Packed { count, .. } if width == 0 => count,
            Run::Packed { bytes, count } => count.min(bytes.len() * 8 / width),
        };
        runs.decoded = runs.decoded.saturating_add(values);
    }
    Ok(())
}

/// Decodes the first `n` values of hybrid-encoded 1-bit `data` (the definition levels of a
/// flat optional column) as `n` bits: set where the value is 1. A value above 1 is an
/// error.
///
/// ```
/// use pqsift::format::rle_hybrid::decode_bits;
/// // 3 repeats of 1 (header 3 << 1, value 1), then one bit-packed group (header 1 << 1 |
/// // 1) of 8 levels: 0, 1, 0, 1, 1, 1, 1, 1.
/// let bits = decode_bits(&[6, 1, 3, 0b1111_1010], 11).unwrap();
/// assert_eq!(bits.iter().map(u8::from).collect::<Vec<_>>(), [1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1]);
/// ```
pub fn decode_bits(data: &[u8], n: usize) -> Result<BooleanBuffer, HybridError> {
    let mut runs = Runs { data, pos: 0, width: 1, decoded: 0, wanted: n };
    let mut out = BitWriter::new(n);
    while runs.decoded < n {
        if let Some(taken) = short_run(data, runs.pos, n - runs.decoded, &mut out) {
            let (take, length) = taken?;
            runs.pos += length;
            runs.decoded += take;
            continue;
        }
        match runs.next()? {
            Run::Repeat { count, value } => {
                if value > 1 {
                    return Err(format!("level {value} where at most 1 is allowed"));
                }
                let take = count.min(n - runs.decoded);
                out.push_repeat(value == 1, take);
                runs.decoded += take;
            }
            Run::Packed { bytes, count } => {
                let take = count.min(n - runs.decoded);
                if take.div_ceil(8) > bytes.len() {
                    return Err(format!(
                        "bit-packed levels end after {} of {n} values",
                        runs.decoded + bytes.len() * 8
                    ));
                }
                out.push_packed(bytes, take);
                runs.decoded += take;
            }
        }
    }
    Ok(out.finish())
}

/// The run of 1-bit levels at `data[pos..]` appended to `out` without a branch on its kind,
/// where its header is one byte, it adds at most 64 levels (of the `left` wanted) and 8
/// bytes follow the header; its levels and bytes taken. `None` for any other run (the
/// general path reads it). A repeated run and a bit-packed one alternate as a column's
/// nulls come: a branch on the kind was mispredicted about once a null.
#[inline]
fn short_run(data: &[u8], pos: usize, left: usize, out: &mut BitWriter) -> Option<Result<(usize, usize), HybridError>> {
    let window = data.get(pos..pos.checked_add(9)?)?;
    let header = window[0];
    if header >= 0x80 {
        return None;
    }
    let packed = usize::from(header & 1);
    // A bit-packed run: `header >> 1` groups of 8 levels in as many bytes; a repeated one:
    // `header >> 1` repeats of the value in the next byte.
    let count = usize::from(header >> 1) << (3 * packed);
    let take = count.min(left);
    if take > 64 {
        return None;
    }
    let payload = u64::from_le_bytes(window[1..9].try_into().expect("8 bytes"));
    if packed == 0 && payload & 0xff > 1 {
        return Some(Err(format!("level {} where at most 1 is allowed", payload & 0xff)));
    }
    // All ones where the run is bit-packed; the repeated value's bit spread over a word.
    let packed_mask = 0u64.wrapping_sub(packed as u64);
    let repeated = 0u64.wrapping_sub(payload & 1);
    out.push((payload & packed_mask | repeated & !packed_mask) & low_bits(take), take);
    // The header, then the groups' bytes (a page's last run may be cut short) or the value.
    let length = 1 + if packed == 1 { usize::from(header >> 1).min(data.len() - pos - 1) } else { 1 };
    Some(Ok((take, length)))
}

/// One run of hybrid data.
enum Run<'a> {
    /// `count` repeats of `value`.
    Repeat { count: usize, value: u32 },
    /// `count` values bit-packed in `bytes` (which may be cut short at the end of the data).
    Packed { bytes: &'a [u8], count: usize },
}

/// The runs of hybrid data, read one at a time.
struct Runs<'a> {
    data: &'a [u8],
    pos: usize,
    width: usize,
    /// Values decoded so far, and wanted in all (for the error messages).
    decoded: usize,
    wanted: usize,
}

impl<'a> Runs<'a> {
    fn next(&mut self) -> Result<Run<'a>, HybridError> {
        let header = self.uleb128()?;
        if header & 1 == 1 {
            let groups = (header >> 1) as usize;
            let count = groups * 8;
            let length = groups * self.width;
            let end = self.pos.saturating_add(length).min(self.data.len());
            let bytes = &self.data[self.pos..end];
            self.pos = end;
            Ok(Run::Packed { bytes, count })
        } else {
            let count = (header >> 1) as usize;
            let length = self.width.div_ceil(8);
            let bytes = self.data.get(self.pos..self.pos + length).ok_or_else(|| self.ended())?;
            self.pos += length;
            let mut value = [0u8; 4];
            value[..length].copy_from_slice(bytes);
            Ok(Run::Repeat { count, value: u32::from_le_bytes(value) })
        }
    }

    /// A run header: ULEB128, at most 5 bytes (a `u32`).
    fn uleb128(&mut self) -> Result<u64, HybridError> {
        super::uleb128::read(self.data, &mut self.pos, 5).map_err(|e| match e {
            super::uleb128::Uleb128Error::Ended => self.ended(),
            super::uleb128::Uleb128Error::TooLong => "a run header longer than 5 bytes".to_string(),
        })
    }

    fn ended(&self) -> HybridError {
        format!("hybrid-encoded data ends after {} of {} values", self.decoded, self.wanted)
    }
}

/// Appends the first `take` values of `width`-bit values packed in `bytes` to `out`.
fn unpack(bytes: &[u8], width: usize, take: usize, out: &mut Vec<u32>) -> Result<(), HybridError> {
    if width == 0 {
        out.extend(std::iter::repeat_n(0, take));
        return Ok(());
    }
    if (take * width).div_ceil(8) > bytes.len() {
        return Err(format!("bit-packed values end after {} of {take} values in a run", bytes.len() * 8 / width));
    }
    let start = out.len();
    macro_rules! by_width {
        ($($w:literal)*) => {
            match width {
                $($w => unpack_run::<$w>(bytes, take, out),)*
                _ => unreachable!("bit width checked to be at most 32"),
            }
        };
    }
    by_width!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32);
    debug_assert_eq!(out.len(), start + take);
    Ok(())
}

/// Appends the first `take` `W`-bit values packed in `bytes` (which holds them) to `out`,
/// each group of 8 with the width known at compile time (each value one unaligned 64-bit
/// load, shift and mask). A group reads 8 bytes past its start, so the last groups of a
/// run are unpacked from a copy padded with zeros (one value at a time, with a copy per
/// value near the end, they dominated the decoding of narrow dictionary indices).
#[inline(always)]
fn unpack_run<const W: usize>(bytes: &[u8], take: usize, out: &mut Vec<u32>) {
    #[cfg(target_arch = "x86_64")]
    if W <= vbmi::WIDEST && take >= 16 && vbmi::available() {
        // SAFETY: the CPU has the instructions; `bytes` holds the `take` values.
        let done = unsafe { vbmi::unpack_sixteens::<W>(bytes, take, out) };
        return unpack_run_scalar::<W>(&bytes[done * W / 8..], take - done, out);
    }
    #[cfg(target_arch = "x86_64")]
    if W <= avx2::WIDEST && take >= 8 && avx2::available() {
        // SAFETY: the CPU has the instructions; `bytes` holds the `take` values.
        let done = unsafe { avx2::unpack_eights::<W>(bytes, take, out) };
        return unpack_run_scalar::<W>(&bytes[done * W / 8..], take - done, out);
    }
    unpack_run_scalar::<W>(bytes, take, out)
}

/// [`unpack_run`] eight values at a time.
#[inline(always)]
fn unpack_run_scalar<const W: usize>(bytes: &[u8], take: usize, out: &mut Vec<u32>) {
    let start = out.len();
    let fast = (take / 8).min(bytes.len().saturating_sub(8) / W);
    unpack_groups::<W>(bytes, fast, out);
    let groups = take.div_ceil(8) - fast;
    if groups > 0 {
        // `fast` stops at most 8 + W bytes before the end, so the rest (whole groups of W
        // bytes, and 8 read past the last) fits in 2 W + 16 bytes.
        let mut padded = [0u8; 2 * 32 + 16];
        let rest = &bytes[fast * W..];
        let copied = rest.len().min(groups * W);
        padded[..copied].copy_from_slice(&rest[..copied]);
        unpack_groups::<W>(&padded, groups, out);
        out.truncate(start + take);
    }
}

/// Bit-packed values unpacked sixteen at a time with AVX-512 VBMI: one 64-byte load, a
/// byte permutation putting each value's (up to) four bytes in its 32-bit lane, a shift
/// per lane and a mask — a few instructions for 16 values where the scalar groups take
/// one load, shift and mask each (a predicate column's dictionary indices are unpacked
/// whole). Values up to [`WIDEST`](vbmi::WIDEST) bits: a wider one may
/// span five bytes.
#[cfg(target_arch = "x86_64")]
mod vbmi {
    use std::arch::x86_64::*;

    /// The widest values unpacked here: 7 bits of offset plus the value fit in 32 bits.
    pub(super) const WIDEST: usize = 25;

    /// Whether the CPU has the instructions.
    #[inline]
    pub(super) fn available() -> bool {
        std::is_x86_feature_detected!("avx512vbmi") && std::is_x86_feature_detected!("avx512f")
    }

    /// Per width: the source byte of each lane's four bytes, and each lane's shift.
    struct Table<const W: usize>;

    impl<const W: usize> Table<W> {
        const BYTES: [u8; 64] = {
            let mut bytes = [0u8; 64];
            let mut lane = 0;
            while lane < 16 {
                let mut byte = 0;
                while byte < 4 {
                    // At most (15 * 25) / 8 + 3 = 49: inside the 64 bytes loaded.
                    bytes[lane * 4 + byte] = ((lane * W) / 8 + byte) as u8;
                    byte += 1;
                }
                lane += 1;
            }
            bytes
        };
        const SHIFTS: [u32; 16] = {
            let mut shifts = [0u32; 16];
            let mut lane = 0;
            while lane < 16 {
                shifts[lane] = ((lane * W) % 8) as u32;
                lane += 1;
            }
            shifts
        };
    }

    /// Appends the first values of `take` `W`-bit values packed in `bytes` (which holds
    /// them), sixteen at a time as long as a 64-byte load stays inside `bytes`; returns how
    /// many (a multiple of 16: they end on a byte, `2 * W` bytes per 16).
    ///
    /// # Safety
    /// The CPU has AVX-512F and VBMI ([`available`]); `W` is at most [`WIDEST`].
    #[target_feature(enable = "avx512f,avx512vbmi")]
    pub(super) unsafe fn unpack_sixteens<const W: usize>(bytes: &[u8], take: usize, out: &mut Vec<u32>) -> usize {
        let loads = match bytes.len() {
            len if len >= 64 => (len - 64) / (2 * W) + 1,
            _ => 0,
        };
        let sixteens = (take / 16).min(loads);
        out.reserve(sixteens * 16);
        let start = out.len();
        // SAFETY (the block): each load reads 64 bytes from `16 * g * W / 8 = 2 * g * W`,
        // inside `bytes` for `g < loads`; each store writes 16 values inside the room
        // reserved.
        unsafe {
            let permutation = _mm512_loadu_si512(Table::<W>::BYTES.as_ptr().cast());
            let shifts = _mm512_loadu_si512(Table::<W>::SHIFTS.as_ptr().cast());
            let mask = _mm512_set1_epi32(((1u64 << W) - 1) as i32);
            let destination = out.as_mut_ptr().add(start);
            for g in 0..sixteens {
                let packed = _mm512_loadu_si512(bytes.as_ptr().add(2 * g * W).cast());
                let lanes = _mm512_permutexvar_epi8(permutation, packed);
                let values = _mm512_and_si512(_mm512_srlv_epi32(lanes, shifts), mask);
                _mm512_storeu_si512(destination.add(16 * g).cast(), values);
            }
            out.set_len(start + sixteens * 16);
        }
        sixteens * 16
    }
}

/// Bit-packed values unpacked eight at a time with AVX2, where the CPU has no AVX-512 VBMI:
/// the group's first four values from a 16-byte load at its start, the last four from one
/// at its middle byte (a byte shuffle works within 16-byte halves), each value's (up to)
/// four bytes shuffled into its 32-bit lane, a shift per lane and a mask. Values up to
/// [`WIDEST`](avx2::WIDEST) bits.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// The widest values unpacked here: 7 bits of offset plus the value fit in 32 bits.
    pub(super) const WIDEST: usize = 25;

    /// Whether the CPU has the instructions.
    #[inline]
    pub(super) fn available() -> bool {
        std::is_x86_feature_detected!("avx2")
    }

    /// Per width: where the second load starts (the byte of value 4's first bit), each
    /// lane's source bytes within its half, and each lane's shift.
    struct Table<const W: usize>;

    impl<const W: usize> Table<W> {
        const HIGH: usize = 4 * W / 8;
        const BYTES: [u8; 32] = {
            let mut bytes = [0u8; 32];
            let mut lane = 0;
            while lane < 8 {
                // Bits from the start of the lane's half: the second half starts at `HIGH`.
                let bit = lane * W - if lane < 4 { 0 } else { 8 * Self::HIGH };
                let mut byte = 0;
                while byte < 4 {
                    // At most (3 * 25 + 7) / 8 + 3 = 13: inside the half's 16 bytes.
                    bytes[lane * 4 + byte] = (bit / 8 + byte) as u8;
                    byte += 1;
                }
                lane += 1;
            }
            bytes
        };
        const SHIFTS: [u32; 8] = {
            let mut shifts = [0u32; 8];
            let mut lane = 0;
            while lane < 8 {
                let bit = lane * W - if lane < 4 { 0 } else { 8 * Self::HIGH };
                shifts[lane] = (bit % 8) as u32;
                lane += 1;
            }
            shifts
        };
    }

    /// Appends the first values of `take` `W`-bit values packed in `bytes` (which holds
    /// them), eight at a time as long as both loads stay inside `bytes`; returns how many (a
    /// multiple of 8: they end on a byte, `W` bytes per 8).
    ///
    /// # Safety
    /// The CPU has AVX2 ([`available`]); `W` is at most [`WIDEST`].
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn unpack_eights<const W: usize>(bytes: &[u8], take: usize, out: &mut Vec<u32>) -> usize {
        // Group `g`'s loads read bytes `g * W .. g * W + HIGH + 16`.
        let loads = match bytes.len() {
            len if len >= Table::<W>::HIGH + 16 => (len - Table::<W>::HIGH - 16) / W + 1,
            _ => 0,
        };
        let eights = (take / 8).min(loads);
        out.reserve(eights * 8);
        let start = out.len();
        // SAFETY (the block): group `g < loads` reads inside `bytes` (above); each store
        // writes 8 values inside the room reserved.
        unsafe {
            let shuffle = _mm256_loadu_si256(Table::<W>::BYTES.as_ptr().cast());
            let shifts = _mm256_loadu_si256(Table::<W>::SHIFTS.as_ptr().cast());
            let mask = _mm256_set1_epi32(((1u64 << W) - 1) as i32);
            let destination = out.as_mut_ptr().add(start);
            for g in 0..eights {
                let at = bytes.as_ptr().add(g * W);
                let packed = _mm256_loadu2_m128i(at.add(Table::<W>::HIGH).cast(), at.cast());
                let lanes = _mm256_shuffle_epi8(packed, shuffle);
                let values = _mm256_and_si256(_mm256_srlv_epi32(lanes, shifts), mask);
                _mm256_storeu_si256(destination.add(8 * g).cast(), values);
            }
            out.set_len(start + eights * 8);
        }
        eights * 8
    }
}

/// Appends the `groups` first groups of 8 `W`-bit values packed in `bytes`, which holds
/// at least 8 bytes past them.
#[inline(always)]
fn unpack_groups<const W: usize>(bytes: &[u8], groups: usize, out: &mut Vec<u32>) {
    let mask = if W == 32 { u32::MAX } else { (1u32 << W) - 1 };
    for g in 0..groups {
        let group = &bytes[g * W..g * W + W + 8];
        let mut values = [0u32; 8];
        for (i, value) in values.iter_mut().enumerate() {
            let bit = i * W;
            let window = u64::from_le_bytes(group[bit / 8..bit / 8 + 8].try_into().expect("8 bytes"));
            *value = (window >> (bit % 8)) as u32 & mask;
        }
        out.extend_from_slice(&values);
    }
}

/// The `i`-th `width`-bit value packed in `bytes` (which holds it).
#[inline]
fn value_at(bytes: &[u8], width: usize, mask: u32, i: usize) -> u32 {
    let bit = i * width;
    let at = bit / 8;
    let window = match bytes.get(at..at + 8) {
        Some(window) => u64::from_le_bytes(window.try_into().expect("8 bytes")),
        None => {
            let mut padded = [0u8; 8];
            let tail = &bytes[at.min(bytes.len())..];
            padded[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(padded)
        }
    };
    (window >> (bit % 8)) as u32 & mask
}

/// Values of hybrid-encoded data read at ascending positions, without decoding the ones in
/// between: a bit-packed run is read where a value lies, a repeated run not at all (a
/// selective read of a dictionary-encoded page looks up only its selected rows).
///
/// ```
/// use pqsift::format::rle_hybrid::Cursor;
/// let data = [6, 5, 3, 0b10_001_000, 0b1_100_011_0, 0b111_110_10];
/// let mut cursor = Cursor::new(&data, 3).unwrap();
/// assert_eq!((cursor.get(1).unwrap(), cursor.get(4).unwrap(), cursor.get(10).unwrap()), (5, 1, 7));
/// assert!(cursor.get(11).is_err());
/// ```
pub struct Cursor<'a> {
    runs: Runs<'a>,
    mask: u32,
    /// The current run's first value and one past its last.
    start: usize,
    end: usize,
    run: Option<Run<'a>>,
}

impl<'a> Cursor<'a> {
    /// A cursor over hybrid-encoded `data` of `bit_width` bits (at most 32).
    pub fn new(data: &'a [u8], bit_width: u8) -> Result<Self, HybridError> {
        if bit_width > 32 {
            return Err(format!("bit width {bit_width} is over 32"));
        }
        let width = usize::from(bit_width);
        let mask = if width == 32 { u32::MAX } else { (1u32 << width) - 1 };
        Ok(Self { runs: Runs { data, pos: 0, width, decoded: 0, wanted: 0 }, mask, start: 0, end: 0, run: None })
    }

    /// The value at position `i`, no smaller than the position asked for before.
    #[inline]
    pub fn get(&mut self, i: usize) -> Result<u32, HybridError> {
        // Inline: a value of the current run; out of line: reading the runs up to `i`.
        if i >= self.end {
            self.advance_to(i)?;
        }
        match &self.run {
            Some(Run::Repeat { value, .. }) => Ok(*value),
            Some(Run::Packed { bytes, .. }) => {
                let (at, width) = (i - self.start, self.runs.width);
                if (at + 1) * width > bytes.len() * 8 {
                    return Err(format!("bit-packed values end before value {i}"));
                }
                Ok(value_at(bytes, width, self.mask, at))
            }
            None => unreachable!("a run was read"),
        }
    }

    /// Reads runs until the current one holds position `i`.
    #[inline(never)]
    fn advance_to(&mut self, i: usize) -> Result<(), HybridError> {
        while i >= self.end {
            self.runs.decoded = self.end;
            self.runs.wanted = i + 1;
            let run = self.runs.next()?;
            let count = match &run {
                Run::Repeat { count, .. } | Run::Packed { count, .. } => *count,
            };
            (self.start, self.end) = (self.end, self.end + count);
            self.run = Some(run);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A reference encoder: runs of `(value, count, packed)`.
    fn encode(runs: &[(u32, usize, bool)], width: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let uleb = |out: &mut Vec<u8>, mut v: u64| loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        };
        for &(value, count, packed) in runs {
            if packed {
                let groups = count.div_ceil(8);
                uleb(&mut out, (groups as u64) << 1 | 1);
                let mut bits = vec![0u8; groups * width];
                for i in 0..count {
                    let v = u64::from(value.wrapping_add(i as u32)) & ((1u64 << width) - 1);
                    for b in 0..width {
                        if v >> b & 1 == 1 {
                            let at = i * width + b;
                            bits[at / 8] |= 1 << (at % 8);
                        }
                    }
                }
                out.extend(bits);
            } else {
                uleb(&mut out, (count as u64) << 1);
                let mask = ((1u64 << width) - 1) as u32;
                out.extend(&(value & mask).to_le_bytes()[..width.div_ceil(8)]);
            }
        }
        out
    }

    fn expected(runs: &[(u32, usize, bool)], width: usize) -> Vec<u32> {
        let mask = ((1u64 << width) - 1) as u32;
        runs.iter()
            .flat_map(|&(value, count, packed)| {
                (0..count).map(move |i| if packed { value.wrapping_add(i as u32) & mask } else { value & mask })
            })
            .collect()
    }

    proptest! {
        #[test]
        fn values_round_trip(width in 1usize..=32, runs in prop::collection::vec((any::<u32>(), 1usize..40, any::<bool>()), 1..12), cut in 0usize..8) {
            // Packed runs pad to whole groups: only the last run may end mid-group.
            let mut runs = runs;
            let last = runs.len() - 1;
            for run in &mut runs[..last] {
                if run.2 { run.1 = run.1.div_ceil(8) * 8; }
            }
            let data = encode(&runs, width);
            let all = expected(&runs, width);
            let n = all.len().saturating_sub(cut);
            let mut out = Vec::new();
            decode_values(&data, width as u8, n, &mut out).unwrap();
            prop_assert_eq!(&out[..], &all[..n]);
        }

        #[test]
        fn check_holds_agrees_with_decoding(width in 1usize..=32, runs in prop::collection::vec((any::<u32>(), 1usize..40, any::<bool>()), 1..12), cut in 0usize..64, extra in 0usize..12) {
            // Cut anywhere (a damaged page): the check passes exactly where decoding does.
            let data = encode(&runs, width);
            let data = &data[..data.len().saturating_sub(cut)];
            let n = expected(&runs, width).len() + extra;
            for wanted in [n / 2, n.saturating_sub(extra), n] {
                let decoded = decode_values(data, width as u8, wanted, &mut Vec::new());
                prop_assert_eq!(check_holds(data, width as u8, wanted).is_ok(), decoded.is_ok(), "{} values", wanted);
            }
        }

        #[test]
        fn cursor_agrees(width in 0usize..=32, runs in prop::collection::vec((any::<u32>(), 1usize..40, any::<bool>()), 1..12), picks in prop::collection::vec(any::<bool>(), 0..400)) {
            let mut runs = runs;
            let last = runs.len() - 1;
            for run in &mut runs[..last] {
                if run.2 { run.1 = run.1.div_ceil(8) * 8; }
            }
            let data = encode(&runs, width);
            let all = if width == 0 { vec![0; runs.iter().map(|r| r.1).sum()] } else { expected(&runs, width) };
            let mut cursor = Cursor::new(&data, width as u8).unwrap();
            for (i, _) in picks.iter().enumerate().filter(|(i, pick)| **pick && *i < all.len()) {
                prop_assert_eq!(cursor.get(i).unwrap(), all[i]);
            }
            prop_assert!(cursor.get(all.len() + 8).is_err());
        }

        #[test]
        fn bits_round_trip(runs in prop::collection::vec((0u32..2, 1usize..200, any::<bool>()), 1..12), cut in 0usize..100) {
            let mut runs = runs;
            let last = runs.len() - 1;
            for run in &mut runs[..last] {
                if run.2 { run.1 = run.1.div_ceil(8) * 8; }
            }
            let data = encode(&runs, 1);
            let all = expected(&runs, 1);
            let bits = decode_bits(&data, all.len()).unwrap();
            prop_assert_eq!(bits.len(), all.len());
            prop_assert_eq!(bits.iter().map(u32::from).collect::<Vec<_>>(), all.clone());
            // The first values only: a page's levels may stop mid-run.
            let n = all.len().saturating_sub(cut);
            let bits = decode_bits(&data, n).unwrap();
            prop_assert_eq!(bits.iter().map(u32::from).collect::<Vec<_>>(), &all[..n]);
        }

        #[test]
        fn any_bytes_fail_cleanly(data in prop::collection::vec(any::<u8>(), 0..64), width in 0u8..=40, n in 0usize..500) {
            let mut out = Vec::new();
            let _ = decode_values(&data, width, n, &mut out);
            prop_assert!(out.len() <= n);
            if let Ok(bits) = decode_bits(&data, n) {
                prop_assert_eq!(bits.len(), n);
            }
        }
    }

    #[test]
    fn short_data_is_an_error() {
        let mut out = Vec::new();
        assert!(decode_values(&[6], 3, 3, &mut out).unwrap_err().contains("ends after 0 of 3"));
        assert!(decode_values(&[3, 0xff], 8, 8, &mut out).unwrap_err().contains("bit-packed values end"));
        assert!(decode_bits(&[2, 2], 1).unwrap_err().contains("level 2"));
    }

    #[test]
    fn a_packed_run_cut_right_after_its_last_wanted_value_decodes() {
        // The last groups of a run are unpacked from a padded copy: every width, every
        // length, the data ending at the last wanted value's byte (no byte to spare).
        for width in 1..=32 {
            let data = encode(&[(7, 64, true)], width);
            let all = expected(&[(7, 64, true)], width);
            for n in 1..=64 {
                let cut = &data[..1 + (n * width).div_ceil(8)];
                let mut out = vec![99];
                decode_values(cut, width as u8, n, &mut out).unwrap();
                assert_eq!(&out[1..], &all[..n], "width {width}, {n} values");
            }
        }
    }

    proptest! {
        /// Whatever the width, count and bytes: values unpacked by vectors (AVX-512 VBMI,
        /// else AVX2, where the CPU has them) equal those unpacked a value at a time.
        #[test]
        fn unpacking_sixteen_at_a_time_agrees(width in 1usize..=32, take in 0usize..600, seed in any::<u64>(), spare in 0usize..80) {
            let mut state = seed | 1;
            let len = (take * width).div_ceil(8) + spare;
            let bytes: Vec<u8> = (0..len).map(|_| { state ^= state << 13; state ^= state >> 7; state ^= state << 17; state as u8 }).collect();
            let (mut fast, mut scalar) = (vec![7u32], vec![7u32]);
            unpack(&bytes, width, take, &mut fast).unwrap();
            macro_rules! by_width {
                ($($w:literal)*) => { match width { $($w => unpack_run_scalar::<$w>(&bytes, take, &mut scalar),)* _ => unreachable!() } };
            }
            by_width!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32);
            prop_assert_eq!(fast, scalar);
        }
    }

    #[test]
    fn width_zero_is_all_zeros() {
        let mut out = Vec::new();
        decode_values(&[3], 0, 5, &mut out).unwrap();
        assert_eq!(out, [0; 5]);
    }
}
