//! Algorithms on the bitmask representation.
//!
//! Masks are processed a 64-bit word at a time. The heart is [`and_then`]: each word of the
//! outer mask says where the next `popcount(word)` bits of the inner mask land, which is
//! exactly the x86 BMI2 `pdep` instruction (used when the CPU has it, with a portable
//! fallback); all-zero and all-one words take a shortcut.

use arrow::array::BooleanBufferBuilder;
use arrow::buffer::{BooleanBuffer, Buffer};

use super::RowSelector;

/// The number of set bits of `bits`, with the CPU's population count where it has AVX2 and
/// `popcnt`. The build targets baseline x86-64, where Arrow's own count (and `count_ones`)
/// is a dozen shifts and adds a word; a selection of a million rows is counted several
/// times a row group (its size, the rows a page keeps, the pages it covers).
///
/// ```
/// use arrow::buffer::BooleanBuffer;
/// use pqsift::selection::count_set_bits;
/// let bits = BooleanBuffer::from_iter((0..1000).map(|i| i % 3 == 0));
/// assert_eq!(count_set_bits(&bits), 334);
/// // Rows 1 to 998: not row 0, nor row 999.
/// assert_eq!(count_set_bits(&bits.slice(1, 998)), 332);
/// ```
pub fn count_set_bits(bits: &BooleanBuffer) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU supports both, checked just above.
        return unsafe { count_set_bits_avx2(bits) };
    }
    bits.count_set_bits()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn count_set_bits_avx2(bits: &BooleanBuffer) -> usize {
    // Arrow's count, written out so that it is compiled with these features: the words
    // between an unaligned head and tail, summed in vector registers.
    let chunk = arrow::util::bit_chunk_iterator::UnalignedBitChunk::new(bits.values(), bits.offset(), bits.len());
    let ends = chunk.prefix().into_iter().chain(chunk.suffix()).map(|word| word.count_ones() as usize).sum::<usize>();
    ends + chunk.chunks().iter().map(|word| word.count_ones() as usize).sum::<usize>()
}

/// The normalised runs of a mask.
pub(crate) fn to_runs(mask: &BooleanBuffer) -> Vec<RowSelector> {
    // Set slices are maximal, so skip and select runs alternate without merging.
    let mut runs = Vec::new();
    let mut position = 0;
    for (start, end) in mask.set_slices() {
        if start > position {
            runs.push(RowSelector::skip(start - position));
        }
        runs.push(RowSelector::select(end - start));
        position = end;
    }
    if position < mask.len() {
        runs.push(RowSelector::skip(mask.len() - position));
    }
    runs
}

/// Iterates over the normalised runs of a mask, from its set slices.
pub(crate) struct RunIter<'a> {
    slices: arrow::util::bit_iterator::BitSliceIterator<'a>,
    position: usize,
    len: usize,
    /// A select run waiting behind the skip run just returned.
    pending: Option<RowSelector>,
}

impl<'a> RunIter<'a> {
    pub(crate) fn new(mask: &'a BooleanBuffer) -> Self {
        Self { slices: mask.set_slices(), position: 0, len: mask.len(), pending: None }
    }
}

impl Iterator for RunIter<'_> {
    type Item = RowSelector;

    fn next(&mut self) -> Option<RowSelector> {
        if let Some(run) = self.pending.take() {
            return Some(run);
        }
        match self.slices.next() {
            Some((start, end)) => {
                let select = RowSelector::select(end - start);
                let gap = start - self.position;
                self.position = end;
                if gap > 0 {
                    self.pending = Some(select);
                    Some(RowSelector::skip(gap))
                } else {
                    Some(select)
                }
            }
            None if self.position < self.len => {
                let rest = self.len - self.position;
                self.position = self.len;
                Some(RowSelector::skip(rest))
            }
            None => None,
        }
    }
}

/// Number of normalised runs in a mask.
pub(crate) fn run_count(mask: &BooleanBuffer) -> usize {
    let (mut runs, mut position) = (0, 0);
    for (start, end) in mask.set_slices() {
        runs += usize::from(start > position) + 1;
        position = end;
    }
    runs + usize::from(position < mask.len())
}

/// Reads a bitmap as a stream of bits, handing out the next `k <= 64` at a time.
struct BitStream<I: Iterator<Item = u64>> {
    words: I,
    buffered: u128,
    available: u32,
}

impl<I: Iterator<Item = u64>> BitStream<I> {
    fn new(words: I) -> Self {
        Self { words, buffered: 0, available: 0 }
    }

    /// The next `k` bits (1..=64), in the low bits of the result.
    #[inline(always)]
    fn take(&mut self, k: u32) -> u64 {
        if self.available < k {
            let next = self.words.next().unwrap_or(0);
            self.buffered |= u128::from(next) << self.available;
            self.available += 64;
        }
        let bits = (self.buffered as u64) & low_bits(k as usize);
        self.buffered >>= k;
        self.available -= k;
        bits
    }
}

/// A word with the low `k` bits set (`k` in 0..=64).
#[inline(always)]
pub(crate) fn low_bits(k: usize) -> u64 {
    if k >= 64 { u64::MAX } else { (1u64 << k) - 1 }
}

/// Writes a bitmap a run of bits at a time, through a word being filled (what
/// [`BitStream`] reads). Runs are short (definition levels: a column with 5% nulls averages one
/// every ~10 rows; [`compress`]: a word's kept bits), so the per-run cost is what counts:
/// a run is a shift and an OR into the word, where Arrow's builder resizes its buffer and
/// walks bytes for each; the word is stored after every run, so that filling one up is not
/// a branch either.
pub(crate) struct BitWriter {
    /// Room for every bit, plus a word: the word being filled is stored at `index`.
    words: Vec<u64>,
    index: usize,
    /// The word being filled: its low `filled` bits are set, the rest zero.
    word: u64,
    filled: usize,
}

impl BitWriter {
    /// A writer of at most `bits` bits.
    pub(crate) fn new(bits: usize) -> Self {
        Self { words: vec![0; bits / 64 + 1], index: 0, word: 0, filled: 0 }
    }

    /// Appends the low `count` bits (at most 64) of `bits`, whose higher bits are zero.
    #[inline]
    pub(crate) fn push(&mut self, bits: u64, count: usize) {
        debug_assert!(count <= 64 && (count == 64 || bits >> count == 0));
        self.word |= bits << self.filled;
        self.words[self.index] = self.word;
        let filled = self.filled + count;
        let full = filled >= 64;
        // The bits that did not fit: `bits >> (64 - filled)`, none when the word was empty.
        let rest = (bits >> 1) >> (63 - self.filled);
        self.word = if full { rest } else { self.word };
        self.index += usize::from(full);
        self.filled = filled % 64;
    }

    /// Appends `count` copies of `bit`.
    pub(crate) fn push_repeat(&mut self, bit: bool, mut count: usize) {
        let pattern = if bit { u64::MAX } else { 0 };
        while count > 0 {
            let take = count.min(64);
            self.push(pattern & low_bits(take), take);
            count -= take;
        }
    }

    /// Appends the first `count` bits of `bytes` (LSB first), which holds at least them.
    pub(crate) fn push_packed(&mut self, bytes: &[u8], count: usize) {
        let mut chunks = bytes[..count.div_ceil(8)].chunks(8);
        let mut left = count;
        while left > 0 {
            let chunk = chunks.next().expect("the bytes hold every bit");
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            let take = left.min(64);
            self.push(u64::from_le_bytes(word) & low_bits(take), take);
            left -= take;
        }
    }

    pub(crate) fn finish(mut self) -> BooleanBuffer {
        // The bits past the last full word, not stored when that word filled up.
        self.words[self.index] = self.word;
        let len = self.index * 64 + self.filled;
        self.words.truncate(len.div_ceil(64));
        BooleanBuffer::new(Buffer::from_vec(self.words), 0, len)
    }
}

/// Portable parallel bit deposit: the low bits of `source` go, in order, to the set bits of
/// `mask`.
#[inline(always)]
fn deposit_portable(mut source: u64, mut mask: u64) -> u64 {
    let mut out = 0;
    while mask != 0 {
        let lowest = mask & mask.wrapping_neg();
        if source & 1 != 0 {
            out |= lowest;
        }
        source >>= 1;
        mask &= mask - 1;
    }
    out
}

#[inline(always)]
fn and_then_words(outer: &BooleanBuffer, inner: &BooleanBuffer, deposit: impl Fn(u64, u64) -> u64) -> BooleanBuffer {
    let len = outer.len();
    let mut words: Vec<u64> = Vec::with_capacity(len.div_ceil(64));
    let mut stream = BitStream::new(inner.bit_chunks().iter_padded());
    for word in outer.bit_chunks().iter_padded() {
        words.push(match word {
            0 => 0,
            u64::MAX => stream.take(64),
            _ => deposit(stream.take(word.count_ones()), word),
        });
    }
    BooleanBuffer::new(Buffer::from_vec(words), 0, len)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2,popcnt")]
fn and_then_bmi2(outer: &BooleanBuffer, inner: &BooleanBuffer) -> BooleanBuffer {
    and_then_words(outer, inner, |source, mask| std::arch::x86_64::_pdep_u64(source, mask))
}

/// `outer.and_then(inner)` on masks: `inner` has one bit per set bit of `outer`.
pub(crate) fn and_then(outer: &BooleanBuffer, inner: &BooleanBuffer) -> BooleanBuffer {
    debug_assert_eq!(outer.count_set_bits(), inner.len());
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU supports BMI2 and popcnt, checked just above.
        return unsafe { and_then_bmi2(outer, inner) };
    }
    and_then_words(outer, inner, deposit_portable)
}

/// The bits of `bits` where `mask` is set, in order (`mask.count_set_bits()` of them): the
/// inverse of [`and_then`], the x86 BMI2 `pext` instruction a word at a time where the CPU
/// has it (Arrow's own filter of a bitmap uses it only when the build enables BMI2).
/// (Bits 1, 0, 1, 1 under the mask 1, 1, 0, 1: 1, 0, 1.)
pub(crate) fn compress(bits: &BooleanBuffer, mask: &BooleanBuffer) -> BooleanBuffer {
    debug_assert_eq!(bits.len(), mask.len());
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU supports BMI2 and popcnt, checked just above.
        return unsafe { compress_bmi2(bits, mask) };
    }
    compress_words(bits, mask, arrow::util::bit_util::compress)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2,popcnt")]
fn compress_bmi2(bits: &BooleanBuffer, mask: &BooleanBuffer) -> BooleanBuffer {
    compress_words(bits, mask, |source, mask| std::arch::x86_64::_pext_u64(source, mask))
}

#[inline(always)]
fn compress_words(bits: &BooleanBuffer, mask: &BooleanBuffer, extract: impl Fn(u64, u64) -> u64) -> BooleanBuffer {
    let mut out = BitWriter::new(count_set_bits(mask));
    for (source, word) in bits.bit_chunks().iter_padded().zip(mask.bit_chunks().iter_padded()) {
        if word != 0 {
            out.push(extract(source, word), word.count_ones() as usize);
        }
    }
    out.finish()
}

/// `outer.and_then(inner)` for run-backed `outer`: skip runs become zeros, select runs copy
/// the next bits of `inner`.
pub(crate) fn and_then_runs_mask(outer: &[RowSelector], inner: &BooleanBuffer) -> BooleanBuffer {
    let total = outer.iter().map(|r| r.row_count).sum();
    let mut builder = BooleanBufferBuilder::new(total);
    let mut position = inner.offset();
    for run in outer {
        if run.skip {
            builder.append_n(run.row_count, false);
        } else {
            builder.append_packed_range(position..position + run.row_count, inner.values());
            position += run.row_count;
        }
    }
    builder.finish()
}

/// Intersection (`union == false`) or union of a mask with runs of the same length.
pub(crate) fn combine_with_runs(mask: &BooleanBuffer, runs: &[RowSelector], union: bool) -> BooleanBuffer {
    let mut builder = BooleanBufferBuilder::new(mask.len());
    let mut position = mask.offset();
    for run in runs {
        // Intersection keeps the mask under select runs; union keeps it under skip runs.
        if run.skip == union {
            builder.append_packed_range(position..position + run.row_count, mask.values());
        } else {
            builder.append_n(run.row_count, union);
        }
        position += run.row_count;
    }
    builder.finish()
}

/// Position just after the `n`-th set bit (`n >= 1`), or `None` when fewer are set.
fn after_nth_set(mask: &BooleanBuffer, n: usize) -> Option<usize> {
    let mut remaining = n;
    for (index, word) in mask.bit_chunks().iter_padded().enumerate() {
        let ones = word.count_ones() as usize;
        if ones < remaining {
            remaining -= ones;
            continue;
        }
        // The answer is inside this word: drop the lowest `remaining - 1` set bits.
        let mut w = word;
        for _ in 1..remaining {
            w &= w - 1;
        }
        return Some(index * 64 + w.trailing_zeros() as usize + 1);
    }
    None
}

/// Unselects the first `n` selected rows.
pub(crate) fn offset(mask: &BooleanBuffer, n: usize) -> BooleanBuffer {
    let cut = after_nth_set(mask, n).unwrap_or(mask.len());
    let mut builder = BooleanBufferBuilder::new(mask.len());
    builder.append_n(cut, false);
    builder.append_packed_range(mask.offset() + cut..mask.offset() + mask.len(), mask.values());
    builder.finish()
}

/// Keeps the first `n` selected rows.
pub(crate) fn limit(mask: &BooleanBuffer, n: usize) -> BooleanBuffer {
    if n == 0 {
        return BooleanBuffer::new_unset(mask.len());
    }
    let Some(cut) = after_nth_set(mask, n) else {
        return mask.clone();
    };
    let mut builder = BooleanBufferBuilder::new(mask.len());
    builder.append_packed_range(mask.offset()..mask.offset() + cut, mask.values());
    builder.append_n(mask.len() - cut, false);
    builder.finish()
}

/// Index of the first set bit.
pub(crate) fn first_set(mask: &BooleanBuffer) -> Option<usize> {
    mask.bit_chunks()
        .iter_padded()
        .enumerate()
        .find(|(_, word)| *word != 0)
        .map(|(index, word)| index * 64 + word.trailing_zeros() as usize)
}

/// `true` when the mask has at least `n` normalised runs (stops counting there).
///
/// A run starts at row 0 and wherever a row's bit differs from the row before it, so the
/// runs are counted 64 rows at a time as the set bits of `word ^ (word << 1 | carry)`:
/// the read planner asks this of every page's stretch of a filtered selection, where
/// walking the set slices showed in profiles.
pub(crate) fn has_at_least_runs(mask: &BooleanBuffer, n: usize) -> bool {
    if n == 0 {
        return true;
    }
    if mask.is_empty() {
        return false;
    }
    // The bit before row 0 is taken equal to row 0's: no run starts "before" it.
    let mut carry = u64::from(mask.value(0));
    let mut starts = |word: u64, bits: usize| {
        let changed = word ^ ((word << 1) | carry);
        carry = (word >> (bits - 1)) & 1;
        let valid = if bits == 64 { u64::MAX } else { (1 << bits) - 1 };
        (changed & valid).count_ones() as usize
    };
    let chunks = mask.bit_chunks();
    let mut runs = 1;
    for word in chunks.iter() {
        runs += starts(word, 64);
        if runs >= n {
            return true;
        }
    }
    if chunks.remainder_len() > 0 {
        runs += starts(chunks.remainder_bits(), chunks.remainder_len());
    }
    runs >= n
}

/// Index of the last set bit: the words from the last back (a page's selection, asked for
/// the last value it needs, mostly ends near its end).
pub(crate) fn last_set(mask: &BooleanBuffer) -> Option<usize> {
    let chunks = mask.bit_chunks();
    let full = chunks.chunk_len();
    let last_in = |index: usize, word: u64| index * 64 + 63 - word.leading_zeros() as usize;
    match chunks.remainder_bits() {
        0 => (0..full)
            .rev()
            .map(|index| (index, chunks.chunk(index)))
            .find(|&(_, word)| word != 0)
            .map(|(i, w)| last_in(i, w)),
        remainder => Some(last_in(full, remainder)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_deposit_matches_definition() {
        assert_eq!(deposit_portable(0b101, 0b1011_0000), 0b1001_0000);
        assert_eq!(deposit_portable(u64::MAX, 0xF0F0), 0xF0F0);
        assert_eq!(deposit_portable(0, u64::MAX), 0);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn portable_deposit_matches_pdep() {
        if !std::is_x86_feature_detected!("bmi2") {
            return;
        }
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..10_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let (source, mask) = (state, state.rotate_left(23) ^ 0x5555_AAAA_0F0F_F0F0);
            // SAFETY: BMI2 checked above.
            let hardware = unsafe { std::arch::x86_64::_pdep_u64(source, mask) };
            assert_eq!(deposit_portable(source, mask), hardware);
        }
    }

    #[test]
    fn and_then_with_offset_buffers() {
        // Sliced buffers start mid-byte: the word readers must honour the bit offset.
        let outer = BooleanBuffer::from(vec![true; 200]).slice(3, 150);
        let inner_full = BooleanBuffer::from((0..200).map(|i| i % 3 == 0).collect::<Vec<_>>());
        let inner = inner_full.slice(5, 150);
        let out = and_then(&outer, &inner);
        assert_eq!(out.iter().collect::<Vec<_>>(), inner.iter().collect::<Vec<_>>());
    }

    proptest::proptest! {
        /// `compress` keeps the bits the mask sets, in order, on buffers sliced mid-byte,
        /// with `pext` and with the portable extract.
        #[test]
        fn compress_keeps_the_masked_bits(
            pairs in proptest::collection::vec((proptest::bool::ANY, proptest::bool::weighted(0.6)), 0..400),
            offset in 0usize..9,
        ) {
            let bits = BooleanBuffer::from_iter((0..offset).map(|_| true).chain(pairs.iter().map(|p| p.0))).slice(offset, pairs.len());
            let mask = BooleanBuffer::from_iter(pairs.iter().map(|p| p.1));
            let expected: Vec<bool> = pairs.iter().filter(|p| p.1).map(|p| p.0).collect();
            proptest::prop_assert_eq!(compress(&bits, &mask).iter().collect::<Vec<_>>(), expected.clone());
            let portable = compress_words(&bits, &mask, arrow::util::bit_util::compress);
            proptest::prop_assert_eq!(portable.iter().collect::<Vec<_>>(), expected);
        }

        /// `first_set` and `last_set` against a walk of the bits, sparse or dense, on
        /// buffers sliced mid-byte, the last set bit within the last 64 or before them.
        #[test]
        fn first_and_last_set_bits(
            bits in proptest::collection::vec(proptest::bool::weighted(0.02), 0..400),
            offset in 0usize..9,
        ) {
            let mask = BooleanBuffer::from_iter((0..offset).map(|_| true).chain(bits.iter().copied())).slice(offset, bits.len());
            proptest::prop_assert_eq!(last_set(&mask), bits.iter().rposition(|&b| b));
            proptest::prop_assert_eq!(first_set(&mask), bits.iter().position(|&b| b));
        }
    }
}
