//! The constant values of an `IN` list as a set: membership in O(1) per row and the
//! values in order for pruning, in place of one comparison per value (Spark's `InSet`).
//!
//! Values are held in Arrow's row format, floats first normalised so that byte equality
//! is Spark's equality (NaN equals NaN, -0.0 equals 0.0) and byte order Spark's order
//! (NaN above every number). A NULL in the list makes the rows that match no value NULL
//! rather than false.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Array, ArrayRef, Int64Array};
//! use pqsift::filter::in_set::InSet;
//!
//! let items: Vec<ArrayRef> = [Some(3), None, Some(1), Some(3)]
//!     .into_iter()
//!     .map(|v| Arc::new(Int64Array::from(vec![v])) as ArrayRef)
//!     .collect();
//! let set = InSet::new(&items).unwrap();
//! assert_eq!(set.len(), 2);
//! let values: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), Some(2), None]));
//! let found = set.contains(&values).unwrap();
//! // 1 is in the list; 2 is not, but the list holds NULL: unknown; NULL: unknown.
//! assert_eq!(found.iter().collect::<Vec<_>>(), [Some(true), None, None]);
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::compute::concat;
use arrow::datatypes::DataType;
use arrow::row::{RowConverter, Rows, SortField};

use super::float_compare::spark_float_order;
use super::recent::Recent;
use crate::error::{PqsiftError, Result};

/// Sets [`InSet::shared`] keeps.
const RECENT_SETS: usize = 8;

/// The sets [`InSet::shared`] keeps, with the items each was made of (`None`: its own).
static RECENT: Recent<Option<Vec<ArrayRef>>, Arc<InSet>> = Recent::new(RECENT_SETS);

/// The non-null values of an IN list, distinct and in order, and whether it holds NULL.
pub struct InSet {
    converter: RowConverter,
    /// Distinct values in ascending order, as rows.
    sorted: Rows,
    /// The same values, for membership.
    members: Members,
    /// Distinct values in ascending order, as an array of the list's type.
    values: ArrayRef,
    /// The same values as one-element arrays, made on first use (see [`InSet::value_items`]).
    items: std::sync::OnceLock<Arc<[ArrayRef]>>,
    has_null: bool,
}

/// Two sets are equal when they hold the same values (and both or neither NULL).
impl PartialEq for InSet {
    fn eq(&self, other: &Self) -> bool {
        self.has_null == other.has_null && self.values.to_data() == other.values.to_data()
    }
}

impl std::fmt::Debug for InSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InSet").field("values", &self.values.len()).field("has_null", &self.has_null).finish()
    }
}

fn internal(error: arrow::error::ArrowError) -> PqsiftError {
    PqsiftError::Compute(format!("IN list: {error}"))
}

impl InSet {
    /// The set of `items`, arrays of one type: one element each, as a bound list gives them
    /// (NULL items may be `NullArray`), or longer ones without nulls.
    pub fn new(items: &[ArrayRef]) -> Result<Self> {
        let typed: Vec<&dyn Array> = items
            .iter()
            .filter(|item| item.data_type() != &DataType::Null && item.null_count() < item.len())
            .map(|i| i.as_ref())
            .collect();
        let has_null = items.iter().any(|item| item.data_type() == &DataType::Null || item.null_count() > 0);
        let data_type = typed.first().map_or(DataType::Null, |item| item.data_type().clone());
        let all = match typed.is_empty() {
            true => arrow::array::new_empty_array(&data_type),
            false => spark_float_order(&concat(&typed).map_err(internal)?),
        };
        let converter = RowConverter::new(vec![SortField::new(all.data_type().clone())]).map_err(internal)?;
        let rows = converter.convert_columns(&[Arc::clone(&all)]).map_err(internal)?;
        // Arrow's sort orders the values as their rows compare (floats are in Spark's
        // order already), with a sort made for the type rather than a comparison of byte
        // strings a pair; rows where it cannot sort the type.
        let mut order: Vec<usize> = match arrow::compute::sort_to_indices(&all, None, None) {
            Ok(indices) => indices.values().iter().map(|&i| i as usize).collect(),
            Err(_) => {
                let mut order: Vec<usize> = (0..rows.num_rows()).collect();
                order.sort_unstable_by(|&a, &b| rows.row(a).cmp(&rows.row(b)));
                order
            }
        };
        order.dedup_by(|a, b| rows.row(*a) == rows.row(*b));
        let indices = arrow::array::UInt32Array::from_iter_values(order.iter().map(|&i| i as u32));
        let values = arrow::compute::take(all.as_ref(), &indices, None).map_err(internal)?;
        let sorted = converter.convert_columns(&[Arc::clone(&values)]).map_err(internal)?;
        let members = Members::of(&values, &sorted);
        Ok(Self { converter, sorted, members, values, items: Default::default(), has_null })
    }

    /// [`InSet::new`], shared with the previous calls on the same items: the bloom-filter
    /// stage asks for the set of a literal guarantee's values once per file, and they are
    /// the same arrays each time. Where they are the very items of a bound set
    /// ([`InSet::shared_value_items`], which a literal guarantee holds), that set is the
    /// answer, made once when the filter was bound. The last few sets are kept, with the
    /// items they were made of (so that their addresses cannot be reused meanwhile).
    pub fn shared(items: &[ArrayRef]) -> Result<Arc<Self>> {
        let same_items = |kept: &Option<Vec<ArrayRef>>, set: &Arc<InSet>| match kept {
            Some(kept) => kept.len() == items.len() && kept.iter().zip(items).all(|(a, b)| Arc::ptr_eq(a, b)),
            // A set's own items, NULL-free: the set made of them is that set.
            None => set.items.get().is_some_and(|own| std::ptr::eq(own.as_ref(), items)),
        };
        RECENT.get_or_make(same_items, || Some(items.to_vec()), || Self::new(items).map(Arc::new))
    }

    /// Distinct non-null values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// `true` when the list holds only NULLs (or nothing).
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Whether the list holds NULL.
    pub fn has_null(&self) -> bool {
        self.has_null
    }

    /// The distinct non-null values in Spark's order.
    pub fn values(&self) -> &ArrayRef {
        &self.values
    }

    /// [`InSet::values`] as one-element arrays (a bound `IN` list's form), made once: each
    /// file's planning asks for them, and handing out the same arrays lets
    /// [`InSet::shared`] find this set again for them.
    pub fn value_items(&self) -> &[ArrayRef] {
        self.shared_items()
    }

    /// [`InSet::value_items`], shared: a literal guarantee holds them without copying, and
    /// [`InSet::shared`] of them finds this set again rather than making it anew.
    pub fn shared_value_items(self: &Arc<Self>) -> Arc<[ArrayRef]> {
        let items = Arc::clone(self.shared_items());
        if !self.has_null {
            let kept = RECENT.get_or_make(|_, set| Arc::ptr_eq(set, self), || None, || Ok(Arc::clone(self)));
            debug_assert!(kept.is_ok(), "keeping a set cannot fail");
        }
        items
    }

    fn shared_items(&self) -> &Arc<[ArrayRef]> {
        self.items.get_or_init(|| (0..self.values.len()).map(|i| self.values.slice(i, 1)).collect())
    }

    /// `values IN (list)` per row, three-valued.
    pub fn contains(&self, values: &ArrayRef) -> Result<BooleanArray> {
        if self.values.is_empty() {
            // Only NULLs (or nothing) listed: no value is found, and there is no type to
            // bring the values to.
            return Ok(three_valued(values.len(), |_| false, values.logical_nulls(), self.has_null));
        }
        if let Members::Bytes(set) = &self.members {
            // Strings (or binary values) of any layout as they are; others cast to the
            // list's type first.
            let list_type = self.values.data_type();
            let (found, nulls) = match test_bytes(values, list_type, set) {
                Some(found) => (found, values.logical_nulls()),
                None => {
                    let cast = arrow::compute::cast(values, list_type).map_err(internal)?;
                    let found = test_bytes(&cast, list_type, set).ok_or_else(|| {
                        PqsiftError::Compute(format!("IN list: {} values as bytes", values.data_type()))
                    })?;
                    (found, cast.logical_nulls())
                }
            };
            return Ok(with_nulls(found, nulls, self.has_null));
        }
        let values = match values.data_type() == self.values.data_type() {
            true => spark_float_order(values),
            false => spark_float_order(&arrow::compute::cast(values, self.values.data_type()).map_err(internal)?),
        };
        let nulls = values.logical_nulls();
        let data = aligned(&values);
        let has_null = self.has_null;
        Ok(match (&self.members, values.data_type().primitive_width()) {
            (Members::Dense(_) | Members::Few(_) | Members::Bits64(_), Some(1)) => {
                self.members.test(fixed::<i8>(&data), |v| v as u64, nulls, has_null)
            }
            (Members::Dense(_) | Members::Few(_) | Members::Bits64(_), Some(2)) => {
                self.members.test(fixed::<i16>(&data), |v| v as u64, nulls, has_null)
            }
            (Members::Dense(_) | Members::Few(_) | Members::Bits64(_), Some(4)) => {
                self.members.test(fixed::<i32>(&data), |v| v as u64, nulls, has_null)
            }
            (Members::Dense(_) | Members::Few(_) | Members::Bits64(_), Some(8)) => {
                self.members.test(fixed::<u64>(&data), |v| v, nulls, has_null)
            }
            (Members::Bits128(set), Some(16)) => {
                let v = fixed::<u128>(&data);
                three_valued(v.len(), |i| set.contains(&v[i]), nulls, has_null)
            }
            (Members::Rows(set), _) => {
                let rows = self.converter.convert_columns(&[Arc::clone(&values)]).map_err(internal)?;
                three_valued(values.len(), |i| set.contains(rows.row(i).as_ref()), nulls, has_null)
            }
            _ => {
                return Err(PqsiftError::Compute(format!(
                    "IN list: {} values tested against a set of another width",
                    values.data_type()
                )));
            }
        })
    }

    /// Per pair of bounds (`lows[i]`, `highs[i]`, of the list's type; null: unbounded on that
    /// side), whether some value of the list lies between them, inclusive — a binary search
    /// each. `None` where the bounds do not convert.
    pub fn any_between(&self, lows: &ArrayRef, highs: &ArrayRef) -> Option<Vec<bool>> {
        Some(self.ranges_between(lows, highs)?.into_iter().map(|range| !range.is_empty()).collect())
    }

    /// Per pair of bounds (as in [`InSet::any_between`]), the positions in [`InSet::values`]
    /// of the values between them, inclusive: two binary searches each.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use arrow::array::{ArrayRef, Int64Array};
    /// # use pqsift::filter::in_set::InSet;
    /// let items: Vec<ArrayRef> = [9, 1, 5, 7].into_iter().map(|v| Arc::new(Int64Array::from(vec![v])) as ArrayRef).collect();
    /// let set = InSet::new(&items).unwrap(); // 1 5 7 9
    /// let lows: ArrayRef = Arc::new(Int64Array::from(vec![Some(2), None, Some(10)]));
    /// let highs: ArrayRef = Arc::new(Int64Array::from(vec![Some(7), Some(4), None]));
    /// assert_eq!(set.ranges_between(&lows, &highs).unwrap(), [1..3, 0..1, 4..4]);
    /// ```
    pub fn ranges_between(&self, lows: &ArrayRef, highs: &ArrayRef) -> Option<Vec<std::ops::Range<usize>>> {
        let convert = |bounds: &ArrayRef| -> Option<ArrayRef> {
            let bounds = match bounds.data_type() == self.values.data_type() {
                true => Arc::clone(bounds),
                false => arrow::compute::cast(bounds, self.values.data_type()).ok()?,
            };
            Some(spark_float_order(&bounds))
        };
        let (lows, highs) = (convert(lows)?, convert(highs)?);
        let low_rows = self.converter.convert_columns(&[Arc::clone(&lows)]).ok()?;
        let high_rows = self.converter.convert_columns(&[Arc::clone(&highs)]).ok()?;
        let n = self.sorted.num_rows();
        Some(
            (0..lows.len())
                .map(|i| {
                    // First value not below the low bound; first value above the high one.
                    let start = match lows.is_null(i) {
                        true => 0,
                        false => partition_point(n, |k| self.sorted.row(k) < low_rows.row(i)),
                    };
                    let end = match highs.is_null(i) {
                        true => n,
                        false => partition_point(n, |k| self.sorted.row(k) <= high_rows.row(i)),
                    };
                    start..end.max(start)
                })
                .collect(),
        )
    }
}

/// How a set tests membership. Fixed-width values (integers, dates, timestamps, floats,
/// decimals) are hashed by their bits with FxHash: floats are normalised first (NaN one
/// pattern, -0.0 as 0.0), so equal bits are Spark's equality, and values of one type compare
/// bit for bit. That is ~10x cheaper per row than the row format, which the others
/// (strings, binaries, booleans, wide decimals) use.
enum Members {
    /// Values of 1 to 8 bytes whose bits, sign-extended to 64, lie close together (see
    /// [`DenseBits`]).
    Dense(DenseBits),
    /// At most [`FEW_VALUES`] values of 1 to 8 bytes, their bits sign-extended to 64, not
    /// close together (see [`FewBits`]).
    Few(FewBits),
    /// Values of 1 to 8 bytes, as their bits sign-extended to 64 (so that small negative
    /// and positive integers lie close together for [`DenseBits`]), hashed.
    Bits64(HashedBits),
    /// 16-byte values (DECIMAL(p > 18), intervals).
    Bits128(rustc_hash::FxHashSet<u128>),
    /// Strings or binary values, their bytes (equal bytes, equal values).
    Bytes(rustc_hash::FxHashSet<Box<[u8]>>),
    /// Values in Arrow's row format.
    Rows(rustc_hash::FxHashSet<Box<[u8]>>),
}

impl Members {
    /// Per value of `values` (their bits sign-extended by `widen`), the three-valued
    /// answer (see [`three_valued`]); for [`Members::Dense`], [`Members::Few`] and
    /// [`Members::Bits64`] only.
    fn test<T: Copy>(
        &self,
        values: &[T],
        widen: impl Fn(T) -> u64,
        nulls: Option<NullBuffer>,
        has_null: bool,
    ) -> BooleanArray {
        match self {
            Self::Dense(bitmap) => three_valued(values.len(), |i| bitmap.contains(widen(values[i])), nulls, has_null),
            Self::Few(few) => with_nulls(few.test(values, widen), nulls, has_null),
            Self::Bits64(hashed) => with_nulls(hashed.test(values, widen), nulls, has_null),
            Self::Bits128(_) | Self::Bytes(_) | Self::Rows(_) => unreachable!("tested by their own arms"),
        }
    }

    /// The members of `values` (distinct, normalised), `sorted` being them as rows.
    fn of(values: &ArrayRef, sorted: &Rows) -> Self {
        let data = aligned(values);
        let bits64 = |bits: Vec<u64>| match DenseBits::of(&bits) {
            Some(dense) => Self::Dense(dense),
            None if bits.len() <= FEW_VALUES => Self::Few(FewBits { members: bits }),
            None => Self::Bits64(HashedBits::of(bits)),
        };
        match values.data_type().primitive_width() {
            Some(1) => bits64(fixed::<i8>(&data).iter().map(|&v| v as u64).collect()),
            Some(2) => bits64(fixed::<i16>(&data).iter().map(|&v| v as u64).collect()),
            Some(4) => bits64(fixed::<i32>(&data).iter().map(|&v| v as u64).collect()),
            Some(8) => bits64(fixed::<u64>(&data).to_vec()),
            Some(16) => Self::Bits128(fixed::<u128>(&data).iter().copied().collect()),
            _ => match byte_values(values) {
                Some(bytes) => Self::Bytes(bytes.into_iter().map(Box::from).collect()),
                None => Self::Rows(sorted.iter().map(|row| Box::<[u8]>::from(row.as_ref())).collect()),
            },
        }
    }
}

/// A set of values of up to 8 bytes as a bitmap over the span of their bits: one bit test
/// per row instead of a hash probe, and rows in order (a sorted column) read the bitmap in
/// order. Used where the span costs at most [`DENSE_BITS_PER_VALUE`] bits per value — no
/// more than twice a hash set's memory — or is tiny.
struct DenseBits {
    /// The lowest value's bits.
    first: u64,
    /// Bit `v - first` set for each value `v`.
    bits: BooleanBuffer,
}

/// The widest span, in bits per value of the set, held as a bitmap.
const DENSE_BITS_PER_VALUE: u64 = 256;

/// A span of at most this many bits is always held as a bitmap (8 KiB).
const DENSE_SMALL_SPAN: u64 = 1 << 16;

impl DenseBits {
    /// The bitmap of `values` (distinct), if their span is narrow enough.
    fn of(values: &[u64]) -> Option<Self> {
        // The values on a circle of 2^64: the span starts after the widest gap between
        // neighbours, so that -3..5 (sign-extended: near 2^64, then near 0) is 9 wide.
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let (mut first, mut last) = (*sorted.first()?, *sorted.last()?);
        let mut widest = first.wrapping_sub(last); // the gap around the circle
        for pair in sorted.windows(2) {
            if pair[1] - pair[0] > widest {
                (widest, first, last) = (pair[1] - pair[0], pair[1], pair[0]);
            }
        }
        let span = last.wrapping_sub(first).checked_add(1)?;
        if span > DENSE_SMALL_SPAN && span > DENSE_BITS_PER_VALUE.saturating_mul(values.len() as u64) {
            return None;
        }
        let mut bits = arrow::array::BooleanBufferBuilder::new(usize::try_from(span).ok()?);
        bits.append_n(span as usize, false);
        for &v in values {
            bits.set_bit(v.wrapping_sub(first) as usize, true);
        }
        Some(Self { first, bits: bits.finish() })
    }

    fn contains(&self, value: u64) -> bool {
        let offset = value.wrapping_sub(self.first);
        offset < self.bits.len() as u64 && self.bits.value(offset as usize)
    }
}

/// A few values of up to 8 bytes, each compared with every row, 64 rows at a time: the
/// comparisons vectorise, where a hash probe per row does not. Used for lists of at most
/// [`FEW_VALUES`] values that [`DenseBits`] does not hold.
struct FewBits {
    /// The values' bits, sign-extended to 64.
    members: Vec<u64>,
}

/// The longest list [`FewBits`] holds; a longer one is hashed.
const FEW_VALUES: usize = 12;

impl FewBits {
    /// Per value of `values` (its bits sign-extended by `widen`), whether it is a member.
    fn test<T: Copy>(&self, values: &[T], widen: impl Fn(T) -> u64) -> BooleanBuffer {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            return unsafe { self.test_avx512(values, widen) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            return unsafe { self.test_avx2(values, widen) };
        }
        self.test_portable(values, widen)
    }

    /// [`FewBits::test`] compiled for AVX2, whose 64-bit lane comparisons the baseline
    /// target lacks.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn test_avx2<T: Copy>(&self, values: &[T], widen: impl Fn(T) -> u64) -> BooleanBuffer {
        self.test_portable(values, widen)
    }

    /// [`FewBits::test`] with AVX-512: eight values compared with a member at once, the
    /// comparison's mask being their eight answers — no packing of answers into words.
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn test_avx512<T: Copy>(&self, values: &[T], widen: impl Fn(T) -> u64) -> BooleanBuffer {
        use std::arch::x86_64::{_mm512_cmpeq_epi64_mask, _mm512_loadu_si512, _mm512_set1_epi64};
        let members: Vec<_> = self.members.iter().map(|&member| _mm512_set1_epi64(member as i64)).collect();
        let mut words = Vec::with_capacity(values.len().div_ceil(64));
        let mut wide = [0u64; 64];
        for chunk in values.chunks(64) {
            for (w, &v) in wide.iter_mut().zip(chunk) {
                *w = widen(v);
            }
            let mut word = 0u64;
            for (eight, lanes) in wide.chunks_exact(8).enumerate() {
                // SAFETY: `lanes` is eight u64s; an unaligned load reads exactly them.
                let lanes = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) };
                let hits = members.iter().fold(0u8, |hits, &member| hits | _mm512_cmpeq_epi64_mask(lanes, member));
                word |= u64::from(hits) << (eight * 8);
            }
            // The lanes past a short last chunk hold the chunk before's values: not kept.
            if chunk.len() < 64 {
                word &= (1u64 << chunk.len()) - 1;
            }
            words.push(word);
        }
        BooleanBuffer::new(arrow::buffer::Buffer::from_vec(words), 0, values.len())
    }

    #[inline(always)]
    fn test_portable<T: Copy>(&self, values: &[T], widen: impl Fn(T) -> u64) -> BooleanBuffer {
        let mut words = Vec::with_capacity(values.len().div_ceil(64));
        let mut wide = [0u64; 64];
        for chunk in values.chunks(64) {
            for (w, &v) in wide.iter_mut().zip(chunk) {
                *w = widen(v);
            }
            let mut hits = [0u64; 64];
            for &member in &self.members {
                for (hit, &w) in hits.iter_mut().zip(&wide) {
                    *hit |= u64::from(w == member);
                }
            }
            // The lanes past a short last chunk hold the chunk before's values: not packed.
            words.push(hits[..chunk.len()].iter().enumerate().fold(0u64, |word, (bit, &hit)| word | (hit << bit)));
        }
        BooleanBuffer::new(arrow::buffer::Buffer::from_vec(words), 0, values.len())
    }
}

/// Values of up to 8 bytes in a hash set, behind a filter that answers most rows of a
/// selective list without a probe: a bitmap with one bit per hash of a value (a Bloom
/// filter of one hash function), ~64 bits a value up to [`PREFILTER_MAX_BITS`]. A value
/// whose bit is clear is not in the set — one multiplication and one load from a bitmap the
/// first- or second-level cache holds, where a hash probe costs several loads and
/// branches; only the values whose bit is set are looked up (with 64 bits a value, ~1.5% of
/// the values not in the set).
struct HashedBits {
    /// Bit `hash(v)` set for each member `v`.
    prefilter: Vec<u64>,
    /// `64 - log2(bits in the prefilter)`: a hash is the product's top bits.
    shift: u32,
    members: rustc_hash::FxHashSet<u64>,
}

/// The prefilter's least bits (512 bytes).
const PREFILTER_MIN_BITS: u64 = 1 << 12;

/// The prefilter's most bits (128 KiB: within a second-level cache).
const PREFILTER_MAX_BITS: u64 = 1 << 20;

impl HashedBits {
    fn of(values: Vec<u64>) -> Self {
        let bits =
            (values.len() as u64).saturating_mul(64).next_power_of_two().clamp(PREFILTER_MIN_BITS, PREFILTER_MAX_BITS);
        let shift = 64 - bits.trailing_zeros();
        let mut prefilter = vec![0u64; (bits / 64) as usize];
        for &value in &values {
            let at = Self::hash(value, shift);
            prefilter[at / 64] |= 1 << (at % 64);
        }
        Self { prefilter, shift, members: values.into_iter().collect() }
    }

    /// The prefilter's bit of `value`: the top bits of its product with 2^64 / φ
    /// (Fibonacci hashing), which spreads consecutive and strided values alike.
    #[inline(always)]
    fn hash(value: u64, shift: u32) -> usize {
        (value.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
    }

    /// Per value of `values` (its bits sign-extended by `widen`), whether it is a member:
    /// 64 values' prefilter bits gathered into a word without a branch, then each value
    /// whose bit is set looked up.
    fn test<T: Copy>(&self, values: &[T], widen: impl Fn(T) -> u64) -> BooleanBuffer {
        let mut words = Vec::with_capacity(values.len().div_ceil(64));
        for chunk in values.chunks(64) {
            let mut maybe = 0u64;
            for (bit, &value) in chunk.iter().enumerate() {
                let at = Self::hash(widen(value), self.shift);
                maybe |= (self.prefilter[at / 64] >> (at % 64) & 1) << bit;
            }
            let (mut found, mut rest) = (maybe, maybe);
            while rest != 0 {
                let bit = rest.trailing_zeros();
                if !self.members.contains(&widen(chunk[bit as usize])) {
                    found &= !(1 << bit);
                }
                rest &= rest - 1;
            }
            words.push(found);
        }
        BooleanBuffer::new(arrow::buffer::Buffer::from_vec(words), 0, values.len())
    }
}

/// The bytes of each value of a string or binary array (any offset width, or views);
/// `None` for other types.
fn byte_values(values: &ArrayRef) -> Option<Vec<&[u8]>> {
    use arrow::array::AsArray;
    let len = values.len();
    Some(match values.data_type() {
        DataType::Utf8 => (0..len).map(|i| values.as_string::<i32>().value(i).as_bytes()).collect(),
        DataType::LargeUtf8 => (0..len).map(|i| values.as_string::<i64>().value(i).as_bytes()).collect(),
        DataType::Utf8View => (0..len).map(|i| values.as_string_view().value(i).as_bytes()).collect(),
        DataType::Binary => (0..len).map(|i| values.as_binary::<i32>().value(i)).collect(),
        DataType::LargeBinary => (0..len).map(|i| values.as_binary::<i64>().value(i)).collect(),
        DataType::BinaryView => (0..len).map(|i| values.as_binary_view().value(i)).collect(),
        _ => return None,
    })
}

/// Per row of `values`, whether its bytes are in `set`, the set of a list of type
/// `list_type`: a string list tests strings of any offset width or views, a binary list
/// binary ones, each value's own bytes hashed (no copy, no cast). `None` for values of
/// another kind (the caller casts them to the list's type first).
fn test_bytes(
    values: &ArrayRef,
    list_type: &DataType,
    set: &rustc_hash::FxHashSet<Box<[u8]>>,
) -> Option<BooleanBuffer> {
    use arrow::array::AsArray;
    let strings = matches!(list_type, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    let test = |value: &[u8]| set.contains(value);
    Some(match (values.data_type(), strings) {
        (DataType::Utf8, true) => {
            let array = values.as_string::<i32>();
            BooleanBuffer::collect_bool(array.len(), |i| test(array.value(i).as_bytes()))
        }
        (DataType::LargeUtf8, true) => {
            let array = values.as_string::<i64>();
            BooleanBuffer::collect_bool(array.len(), |i| test(array.value(i).as_bytes()))
        }
        (DataType::Utf8View, true) => {
            let array = values.as_string_view();
            BooleanBuffer::collect_bool(array.len(), |i| test(array.value(i).as_bytes()))
        }
        (DataType::Binary, false) => {
            let array = values.as_binary::<i32>();
            BooleanBuffer::collect_bool(array.len(), |i| test(array.value(i)))
        }
        (DataType::LargeBinary, false) => {
            let array = values.as_binary::<i64>();
            BooleanBuffer::collect_bool(array.len(), |i| test(array.value(i)))
        }
        (DataType::BinaryView, false) => {
            let array = values.as_binary_view();
            BooleanBuffer::collect_bool(array.len(), |i| test(array.value(i)))
        }
        _ => return None,
    })
}

/// The array's data with its buffers aligned to their types (copied only if they are not),
/// so that fixed-width values can be read as a typed slice.
fn aligned(values: &ArrayRef) -> arrow::array::ArrayData {
    let mut data = values.to_data();
    data.align_buffers();
    data
}

/// The array's fixed-width values as `T`: its first buffer from its offset, `len` of them
/// (the buffer may run on past the array, a slice of a larger one).
fn fixed<T: arrow::datatypes::ArrowNativeType>(data: &arrow::array::ArrayData) -> &[T] {
    &data.buffer::<T>(0)[..data.len()]
}

/// Per row of `len`, the three-valued answer: true for a member (`is_member(row)`); for
/// the others false, or NULL when the list holds NULL (`has_null`); NULL where the value is
/// (`nulls`). The answers are collected 64 to a word, not row by row through a builder.
fn three_valued(
    len: usize,
    is_member: impl Fn(usize) -> bool,
    nulls: Option<NullBuffer>,
    has_null: bool,
) -> BooleanArray {
    with_nulls(BooleanBuffer::collect_bool(len, is_member), nulls, has_null)
}

/// [`three_valued`], the members `found` already.
fn with_nulls(found: BooleanBuffer, nulls: Option<NullBuffer>, has_null: bool) -> BooleanArray {
    let nulls = match has_null {
        true => NullBuffer::union(nulls.as_ref(), Some(&NullBuffer::new(found.clone()))),
        false => nulls,
    };
    BooleanArray::new(found, nulls)
}

/// The first index in `0..n` where `before` turns false (`before` true then false).
fn partition_point(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, n);
    while low < high {
        let middle = low + (high - low) / 2;
        if before(middle) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    low
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use arrow::array::{Float64Array, StringArray};

    #[test]
    fn sliced_arrays_are_tested_over_their_own_rows_only() {
        let items: Vec<ArrayRef> =
            [3i64, 7].into_iter().map(|v| Arc::new(arrow::array::Int64Array::from(vec![v])) as ArrayRef).collect();
        let set = InSet::new(&items).unwrap();
        let whole: ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![1, 3, 5, 7, 9, 3]));
        let found = set.contains(&whole.slice(1, 3)).unwrap();
        assert_eq!(found.iter().collect::<Vec<_>>(), [Some(true), Some(false), Some(true)]);
        let set = InSet::new(&[whole.slice(2, 1), whole.slice(3, 1)]).unwrap(); // {5, 7}, from slices
        assert_eq!(set.contains(&whole).unwrap().iter().filter(|v| *v == Some(true)).count(), 2);
        // Strings, tested by their bytes, and nulls, sliced alike.
        let words: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), Some("b"), None, Some("c"), Some("b")]));
        let set = InSet::new(&[words.slice(1, 1), words.slice(3, 1)]).unwrap(); // {"b", "c"}
        let found = set.contains(&words.slice(1, 3)).unwrap();
        assert_eq!(found.iter().collect::<Vec<_>>(), [Some(true), None, Some(true)]);
    }

    /// The set of a set's own items is that set (a NULL-free one): a literal guarantee's
    /// values are probed per file without making the set again. Equal items held
    /// elsewhere, or a set with NULL, make a set of their own.
    #[test]
    fn a_sets_own_items_share_it() {
        let int = |v: i64| Arc::new(arrow::array::Int64Array::from(vec![v])) as ArrayRef;
        let set = Arc::new(InSet::new(&[int(9), int(1), int(5)]).unwrap());
        let items = set.shared_value_items();
        assert!(Arc::ptr_eq(&InSet::shared(&items).unwrap(), &set));
        let copied: Vec<ArrayRef> = items
            .iter()
            .map(|item| int(item.as_any().downcast_ref::<arrow::array::Int64Array>().unwrap().value(0)))
            .collect();
        let made = InSet::shared(&copied).unwrap();
        assert!(!Arc::ptr_eq(&made, &set) && *made == *set);
        let with_null = Arc::new(InSet::new(&[int(1), int(2), Arc::new(arrow::array::NullArray::new(1))]).unwrap());
        let made = InSet::shared(&with_null.shared_value_items()).unwrap();
        assert!(!made.has_null() && made.len() == 2 && with_null.has_null());
    }

    /// The AVX2 build of the few-values test answers as the portable one does, over whole
    /// chunks of 64 rows and a short last one.
    #[test]
    fn few_values_answer_alike_on_every_path() {
        let few = FewBits { members: vec![7, u64::MAX, 1 << 40, 3] };
        let values: Vec<i64> = (0..300).map(|i| [7, -1, 1 << 40, 3, 8, 0][i % 6] + i as i64 / 150).collect();
        let portable = few.test_portable(&values, |v| v as u64);
        let expected: Vec<bool> = values.iter().map(|&v| [7, -1, 1 << 40, 3].contains(&v)).collect();
        assert_eq!(portable.iter().collect::<Vec<_>>(), expected);
        assert_eq!(few.test(&values, |v| v as u64), portable);
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            assert_eq!(unsafe { few.test_avx2(&values, |v| v as u64) }, portable);
        }
    }

    #[test]
    fn floats_compare_as_spark_does() {
        let items: Vec<ArrayRef> =
            [f64::NAN, 0.0, 2.5].into_iter().map(|v| Arc::new(Float64Array::from(vec![v])) as ArrayRef).collect();
        let set = InSet::new(&items).unwrap();
        let values: ArrayRef = Arc::new(Float64Array::from(vec![-f64::NAN, -0.0, 2.5, 1.0]));
        assert_eq!(
            set.contains(&values).unwrap().iter().collect::<Vec<_>>(),
            [Some(true), Some(true), Some(true), Some(false)]
        );
        // NaN is the greatest value: a container whose max is NaN may hold it.
        let lows: ArrayRef = Arc::new(Float64Array::from(vec![Some(3.0), Some(0.5), None]));
        let highs: ArrayRef = Arc::new(Float64Array::from(vec![Some(f64::NAN), Some(2.0), Some(-1.0)]));
        assert_eq!(set.any_between(&lows, &highs).unwrap(), [true, false, false]);
    }

    proptest::proptest! {
        /// A list of strings tests strings of every layout (offsets of 32 or 64 bits, views)
        /// by their bytes, as a plain set does, three-valued; a list of binary values binary
        /// ones; and values of another type are cast to the list's first.
        #[test]
        fn strings_and_binary_equal_a_plain_sets(
            list in proptest::collection::vec(proptest::option::weighted(0.95, "[a-cé]{0,3}"), 1..30),
            probes in proptest::collection::vec(proptest::option::weighted(0.9, "[a-cé]{0,3}"), 0..150),
        ) {
            use arrow::array::{BinaryArray, BinaryViewArray, LargeStringArray, StringViewArray};
            let plain: HashSet<&str> = list.iter().flatten().map(String::as_str).collect();
            let has_null = list.iter().any(Option::is_none);
            let expected: Vec<Option<bool>> = probes
                .iter()
                .map(|probe| match probe {
                    None => None,
                    Some(v) if plain.contains(v.as_str()) => Some(true),
                    Some(_) if has_null => None,
                    Some(_) => Some(false),
                })
                .collect();
            let strings: Vec<ArrayRef> = list.iter().map(|v| Arc::new(StringArray::from(vec![v.clone()])) as ArrayRef).collect();
            let set = InSet::new(&strings).unwrap();
            let probe_strings = StringArray::from(probes.clone());
            let layouts: [ArrayRef; 3] = [
                Arc::new(probe_strings.clone()),
                Arc::new(LargeStringArray::from(probes.clone())),
                Arc::new(StringViewArray::from(probes.clone())),
            ];
            for values in layouts {
                proptest::prop_assert_eq!(set.contains(&values).unwrap().iter().collect::<Vec<_>>(), expected.clone());
            }
            let as_bytes = |v: &Option<String>| v.as_ref().map(|v| v.as_bytes().to_vec());
            let binary: Vec<ArrayRef> = list.iter().map(|v| Arc::new(BinaryArray::from_iter([as_bytes(v)])) as ArrayRef).collect();
            let binary_set = InSet::new(&binary).unwrap();
            let binary_probes: [ArrayRef; 2] = [
                Arc::new(BinaryArray::from_iter(probes.iter().map(as_bytes))),
                Arc::new(BinaryViewArray::from_iter(probes.iter().map(as_bytes))),
            ];
            for values in binary_probes {
                proptest::prop_assert_eq!(binary_set.contains(&values).unwrap().iter().collect::<Vec<_>>(), expected.clone());
            }
            // Another type: cast to the list's (a dictionary of the strings).
            let dictionary: ArrayRef = Arc::new(arrow::compute::cast(&probe_strings, &DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))).unwrap());
            proptest::prop_assert_eq!(set.contains(&dictionary).unwrap().iter().collect::<Vec<_>>(), expected);
        }
    }

    #[test]
    fn values_the_prefilter_lets_through_are_looked_up() {
        let members: Vec<u64> = (0..500u64).map(|v| v * 7_919).collect();
        let hashed = HashedBits::of(members.clone());
        let bit_set = |v: u64| {
            let at = HashedBits::hash(v, hashed.shift);
            hashed.prefilter[at / 64] >> (at % 64) & 1 == 1
        };
        assert!(members.iter().all(|&v| bit_set(v)));
        // Values not in the set whose bit a member set: only the lookup turns them down.
        let passing: Vec<u64> = (0..).map(|v: u64| v * 7_919 + 1).filter(|&v| bit_set(v)).take(100).collect();
        let probes: Vec<u64> = members.iter().zip(passing.iter().cycle()).flat_map(|(&m, &p)| [m, p, p + 2]).collect();
        let found = hashed.test(&probes, |v| v);
        let expected: Vec<bool> = probes.iter().map(|v| members.contains(v)).collect();
        assert_eq!(found.iter().collect::<Vec<_>>(), expected);
        assert_eq!(found.count_set_bits(), members.len());
    }

    proptest::proptest! {
        /// Membership equals a plain set's, three-valued, whether the set is held as a
        /// bitmap (values close together) or hashed (spread out), for narrow and wide
        /// integers, negatives included.
        #[test]
        fn membership_equals_a_plain_sets(
            list in proptest::collection::vec(proptest::option::weighted(0.95, -300i64..300), 1..40),
            spread in proptest::sample::select(vec![1i64, 1_000, 1 << 40]),
            probes in proptest::collection::vec(proptest::option::weighted(0.9, -400i64..400), 0..200),
        ) {
            let scale = |v: Option<i64>| v.map(|v| v * spread);
            let items: Vec<ArrayRef> = list.iter().map(|&v| Arc::new(arrow::array::Int64Array::from(vec![scale(v)])) as ArrayRef).collect();
            let set = InSet::new(&items).unwrap();
            let plain: HashSet<i64> = list.iter().flatten().map(|&v| v * spread).collect();
            let has_null = list.iter().any(Option::is_none);
            let values: ArrayRef = Arc::new(arrow::array::Int64Array::from(probes.iter().map(|&v| scale(v)).collect::<Vec<_>>()));
            let expected: Vec<Option<bool>> = probes
                .iter()
                .map(|&v| match scale(v) {
                    None => None,
                    Some(v) if plain.contains(&v) => Some(true),
                    Some(_) if has_null => None,
                    Some(_) => Some(false),
                })
                .collect();
            proptest::prop_assert_eq!(set.contains(&values).unwrap().iter().collect::<Vec<_>>(), expected.clone());
            let narrow: ArrayRef = arrow::compute::cast(&values, &DataType::Int32).unwrap();
            let narrow_items: Vec<ArrayRef> = items.iter().map(|item| arrow::compute::cast(item, &DataType::Int32).unwrap()).collect();
            if spread < 1 << 20 {
                let narrow_set = InSet::new(&narrow_items).unwrap();
                proptest::prop_assert_eq!(narrow_set.contains(&narrow).unwrap().iter().collect::<Vec<_>>(), expected);
            }
        }
    }

    #[test]
    fn strings_between_bounds() {
        let items: Vec<ArrayRef> =
            ["b", "d", "f"].into_iter().map(|v| Arc::new(StringArray::from(vec![v])) as ArrayRef).collect();
        let set = InSet::new(&items).unwrap();
        let lows: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), Some("c"), Some("g"), Some("d"), None]));
        let highs: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), Some("c9"), Some("z"), Some("d"), None]));
        assert_eq!(set.any_between(&lows, &highs).unwrap(), [false, false, false, true, true]);
    }
}
