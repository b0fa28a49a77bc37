//! `ORDER BY ... [LIMIT k]` over the batches a scan decodes: the rows in Spark's order, at
//! most `k` of them, holding no more than about `3k` rows at a time. Each trim leaves a
//! running threshold, the first key of the `k`-th row held; later batches are filtered by
//! it with one vectorised comparison before they are held (the heap-free form of DuckDB's
//! and DataFusion's top-k), so most rows of a long read are never sorted. A batch more of
//! whose rows pass than `k` (a key sorted against the order, read before any better one)
//! is cut to its own first `k` before it is held: the rows at least as good as its `k`-th
//! key (a selection on the key's values, for a primitive key without NULLs), else a partial
//! sort of its rows.
//!
//! Sorting is Arrow's `lexsort_to_indices`, on key columns normalised to Spark's order:
//! every NaN (whatever its sign bit: x86 makes `0.0 / 0.0` a negative NaN) is the
//! greatest value and equal to every other NaN, -0.0 equals 0.0. Output values are the
//! decoded ones, unchanged.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{AsArray, Float64Array, RecordBatch};
//! use arrow::compute::SortOptions;
//! use arrow::datatypes::Float64Type;
//! use pqsift::reading::top_rows::TopRows;
//!
//! let batch = |values: Vec<Option<f64>>| {
//!     RecordBatch::try_from_iter([("x", Arc::new(Float64Array::from(values)) as _)]).unwrap()
//! };
//! // ORDER BY x DESC NULLS LAST LIMIT 3: NaN first, NULL never reached.
//! let mut top = TopRows::new(vec![(0, SortOptions { descending: true, nulls_first: false })], Some(3));
//! top.push(batch(vec![Some(1.0), None, Some(f64::NAN)])).unwrap();
//! top.push(batch(vec![Some(5.0), Some(-2.0)])).unwrap();
//! let out = top.finish().unwrap().unwrap();
//! let x = out.column(0).as_primitive::<Float64Type>();
//! assert!(x.value(0).is_nan());
//! assert_eq!((x.value(1), x.value(2)), (5.0, 1.0));
//! ```

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ArrowNativeTypeOp, ArrowPrimitiveType, BooleanArray, BooleanBufferBuilder, Datum, PrimitiveArray,
    RecordBatch, Scalar, UInt32Array, downcast_primitive_array,
};
use arrow::compute::kernels::cmp;
use arrow::compute::kernels::sort::{SortColumn, lexsort_to_indices};
use arrow::compute::{
    SortOptions, and, concat_batches, filter_record_batch, is_null, or, prep_null_mask_filter, take_record_batch,
};
use arrow::error::ArrowError;

use crate::error::{PqsiftError, Result};
use crate::filter::spark_float_order;

/// Rows accumulated for a sort, trimmed to the first `limit` as they come.
#[derive(Debug)]
pub struct TopRows {
    keys: Vec<(usize, SortOptions)>,
    limit: Option<usize>,
    batches: Vec<RecordBatch>,
    rows: usize,
    /// The first key of the `limit`-th row held after the last trim, in Spark's order
    /// (see [`spark_float_order`]): a row whose key comes after it cannot make the first
    /// `limit`, so each batch is filtered by it before it is held.
    threshold: Option<ArrayRef>,
    /// Rows held before a trim, at least (beside twice the limit): each trim sorts them all.
    trim_at: usize,
}

impl TopRows {
    /// Rows ordered by the columns at `keys` (column index, order), the first `limit` kept
    /// (`None`: all).
    pub fn new(keys: Vec<(usize, SortOptions)>, limit: Option<usize>) -> Self {
        Self { keys, limit, batches: Vec::new(), rows: 0, threshold: None, trim_at: 0 }
    }

    /// Adds a batch — only its [`candidates`](Self::candidates) — and trims to the first
    /// `limit` rows once twice that many are held.
    pub fn push(&mut self, batch: RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 || self.limit == Some(0) {
            return Ok(());
        }
        let batch = match self.candidates(&batch)? {
            Some(keep) => filter_record_batch(&batch, &keep)
                .map_err(|e| PqsiftError::Compute(format!("filtering by the running top-k threshold: {e}")))?,
            None => batch,
        };
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.rows += batch.num_rows();
        self.batches.push(batch);
        if let Some(limit) = self.limit
            && self.rows >= limit.saturating_mul(2).max(self.trim_at)
        {
            self.trim(limit)?;
        }
        Ok(())
    }

    /// The first `limit` rows so far, in order (`None`: no row), which stay held: the
    /// running threshold is theirs from now on.
    pub fn first_rows(&mut self) -> Result<Option<RecordBatch>> {
        match self.limit {
            Some(limit) => {
                self.trim(limit)?;
                Ok(self.batches.first().cloned())
            }
            None => {
                let all = self.sorted()?;
                self.batches = all.iter().cloned().collect();
                Ok(all)
            }
        }
    }

    /// Keeps the first `limit` rows only, and their threshold.
    fn trim(&mut self, limit: usize) -> Result<()> {
        let trimmed = self.sorted()?;
        self.rows = trimmed.as_ref().map_or(0, RecordBatch::num_rows);
        self.threshold = trimmed.as_ref().filter(|rows| rows.num_rows() >= limit).and_then(|rows| {
            let (index, _) = self.keys.first()?;
            Some(spark_float_order(&rows.column(*index).slice(limit - 1, 1)))
        });
        self.batches = trimmed.into_iter().collect();
        Ok(())
    }

    /// The rows of `batch` that may still make the first `limit`, as a mask (`None`: all
    /// of them): of those whose first key is at least as good as the running threshold,
    /// the batch's own first `limit` (the batch's others come after `limit` of its rows).
    /// So a batch costs one comparison, and a partial sort only while its rows keep beating
    /// the threshold (a key sorted the other way round), and no more than `limit` of its
    /// rows are held. (A caller that extends the rows it pushes extends these alone.)
    pub fn candidates(&self, batch: &RecordBatch) -> Result<Option<BooleanArray>> {
        let passing = self.at_least_as_good(batch)?;
        let Some(limit) = self.limit else { return Ok(passing) };
        let passing = passing.map(|mask| match mask.null_count() {
            0 => mask,
            _ => prep_null_mask_filter(&mask),
        });
        let count = passing.as_ref().map_or(batch.num_rows(), BooleanArray::true_count);
        if count <= limit {
            return Ok(passing);
        }
        let error = |e: ArrowError| PqsiftError::Compute(format!("sorting a batch for the top rows: {e}"));
        // The rows at least as good as the batch's own `limit`-th key (ties kept), where they
        // are not many more than `limit`.
        let &(index, options) = self.keys.first().expect("a limit with a key");
        let keys = spark_float_order(batch.column(index));
        if let Some(kth) = self.kth_key(&keys, passing.as_ref(), limit)
            && let Ok(within) = no_worse_than(&keys, &Scalar::new(kth), options.descending)
        {
            let keep = match &passing {
                Some(passing) => and(passing, &within).map_err(error)?,
                None => within,
            };
            if keep.true_count() <= limit.saturating_mul(2) {
                return Ok(Some(keep));
            }
        }
        // Otherwise the passing rows' positions in the batch, and the first `limit` of them in
        // order.
        let (rows, passed): (Vec<usize>, RecordBatch) = match &passing {
            Some(mask) => (mask.values().set_indices().collect(), filter_record_batch(batch, mask).map_err(error)?),
            None => ((0..batch.num_rows()).collect(), batch.clone()),
        };
        let first = first_indices(&self.sort_columns(&passed), Some(limit)).map_err(error)?;
        let mut keep = BooleanBufferBuilder::new(batch.num_rows());
        keep.append_n(batch.num_rows(), false);
        for &i in first.values() {
            keep.set_bit(rows[i as usize], true);
        }
        Ok(Some(BooleanArray::new(keep.finish(), None)))
    }

    /// The first key's `limit`-th best value among the rows of `batch` that `passing` keeps
    /// (`None`: all), as a one-element array: a selection on the values alone, cheaper than
    /// a partial sort of row indices, or where they are sorted either way, the value at its
    /// place. `None` where the key is not of a primitive type, holds NULLs, or fewer rows
    /// pass.
    fn kth_key(&self, keys: &ArrayRef, passing: Option<&BooleanArray>, limit: usize) -> Option<ArrayRef> {
        let &(_, options) = self.keys.first()?;
        if keys.null_count() > 0 || limit == 0 {
            return None;
        }
        downcast_primitive_array!(
            keys => kth_value(keys, passing, limit, options.descending),
            _ => None
        )
    }

    /// The rows of `batch` whose first key is at least as good as the running threshold,
    /// as a mask (`None`: all of them; ties kept: a later key may still order them first).
    /// A NULL key is as good as a value only with nulls first; a NULL threshold with nulls
    /// last (fewer non-null keys held than the limit) lets every row through. A key type
    /// the comparison kernels do not order is not filtered.
    fn at_least_as_good(&self, batch: &RecordBatch) -> Result<Option<BooleanArray>> {
        let (Some(threshold), Some(&(index, options))) = (&self.threshold, self.keys.first()) else {
            return Ok(None);
        };
        let keys = spark_float_order(batch.column(index));
        let error = |e: ArrowError| PqsiftError::Compute(format!("filtering by the running top-k threshold: {e}"));
        let keep = match KeyBound::new(threshold.is_null(0), options) {
            KeyBound::Any => return Ok(None),
            KeyBound::NullKeys => is_null(&keys).map_err(error)?,
            KeyBound::Compare { descending, or_null } => {
                let Ok(compared) = no_worse_than(&keys, &Scalar::new(threshold), descending) else { return Ok(None) };
                // A NULL key compares as NULL: not kept, unless nulls come first.
                let values = match compared.null_count() {
                    0 => compared,
                    _ => prep_null_mask_filter(&compared),
                };
                match or_null && keys.null_count() > 0 {
                    true => or(&values, &is_null(&keys).map_err(error)?).map_err(error)?,
                    false => values,
                }
            }
        };
        Ok(Some(keep))
    }

    /// The rows in order (`None`: no row).
    pub fn finish(mut self) -> Result<Option<RecordBatch>> {
        self.sorted()
    }

    fn sorted(&mut self) -> Result<Option<RecordBatch>> {
        let Some(first) = self.batches.first() else { return Ok(None) };
        let error = |e: arrow::error::ArrowError| PqsiftError::Compute(format!("sorting the rows: {e}"));
        let all = concat_batches(&first.schema(), &self.batches).map_err(error)?;
        let indices = first_indices(&self.sort_columns(&all), self.limit).map_err(error)?;
        Ok(Some(take_record_batch(&all, &indices).map_err(error)?))
    }

    /// The key columns of `batch`, in Spark's order.
    fn sort_columns(&self, batch: &RecordBatch) -> Vec<SortColumn> {
        self.keys
            .iter()
            .map(|&(index, options)| SortColumn {
                values: spark_float_order(batch.column(index)),
                options: Some(options),
            })
            .collect()
    }
}

/// What "at least as good as the `k`-th row's first key" admits, for a key in a given
/// order (ties admitted: a later key may still order them first). One definition for its
/// two forms: the kernel [`TopRows`] filters decoded batches with, and the predicate a
/// top-k's first pass adds to the filter and evaluates on statistics.
///
/// ```
/// use arrow::compute::SortOptions;
/// use pqsift::reading::top_rows::KeyBound;
///
/// // DESC NULLS LAST: a NULL k-th key means fewer than k non-null keys, so any row may
/// // still make the first k; a value admits the keys at or above it.
/// let options = SortOptions { descending: true, nulls_first: false };
/// assert_eq!(KeyBound::new(true, options), KeyBound::Any);
/// assert_eq!(KeyBound::new(false, options), KeyBound::Compare { descending: true, or_null: false });
/// // NULLS FIRST: a NULL k-th key admits only NULL keys; a value admits them too.
/// let options = SortOptions { descending: false, nulls_first: true };
/// assert_eq!(KeyBound::new(true, options), KeyBound::NullKeys);
/// assert_eq!(KeyBound::new(false, options), KeyBound::Compare { descending: false, or_null: true });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyBound {
    /// Every row: the `k`-th key is NULL and NULLs come last.
    Any,
    /// The rows whose key is NULL: the `k`-th key is NULL and NULLs come first.
    NullKeys,
    /// The keys `>=` the `k`-th (`descending`) or `<=` it, and NULL keys too (`or_null`)
    /// where NULLs come first.
    Compare { descending: bool, or_null: bool },
}

impl KeyBound {
    /// The bound of a `k`-th key that is NULL or not, in the order `options`.
    pub fn new(threshold_is_null: bool, options: SortOptions) -> Self {
        match (threshold_is_null, options.nulls_first) {
            (true, false) => Self::Any,
            (true, true) => Self::NullKeys,
            (false, or_null) => Self::Compare { descending: options.descending, or_null },
        }
    }
}

/// `keys` at least as good as `bound` in the order (`descending` or not); NULL where a key is.
fn no_worse_than(
    keys: &dyn Datum,
    bound: &dyn Datum,
    descending: bool,
) -> std::result::Result<BooleanArray, ArrowError> {
    match descending {
        true => cmp::gt_eq(keys, bound),
        false => cmp::lt_eq(keys, bound),
    }
}

/// The `limit`-th value of `keys` in the order (`descending` or not; floats by their total
/// order, in which Spark's normalised NaN is the greatest) among the rows `passing` keeps.
fn kth_value<T: ArrowPrimitiveType>(
    keys: &PrimitiveArray<T>,
    passing: Option<&BooleanArray>,
    limit: usize,
    descending: bool,
) -> Option<ArrayRef> {
    let values = keys.values();
    let picked: Cow<'_, [T::Native]> = match passing {
        Some(mask) if mask.true_count() < values.len() => {
            Cow::Owned(mask.values().set_indices().map(|row| values[row]).collect())
        }
        _ => Cow::Borrowed(values),
    };
    if picked.len() < limit {
        return None;
    }
    let best_first = |a: &T::Native, b: &T::Native| match descending {
        true => b.compare(*a),
        false => a.compare(*b),
    };
    // A key read in its order, or against it (a sorted column read the other way), has its
    // k-th best value at a known place: checking costs a comparison a row where a
    // selection costs several, and an unsorted batch fails the check within a few rows.
    let kth = if picked.is_sorted_by(|a, b| best_first(a, b) != Ordering::Greater) {
        picked[limit - 1]
    } else if picked.is_sorted_by(|a, b| best_first(a, b) != Ordering::Less) {
        picked[picked.len() - limit]
    } else {
        let mut picked = picked.into_owned();
        *picked.select_nth_unstable_by(limit - 1, best_first).1
    };
    let kth = PrimitiveArray::<T>::from_iter_values([kth]).with_data_type(keys.data_type().clone());
    Some(Arc::new(kth))
}

/// The indices of the first `limit` rows in `columns`' order, as `lexsort_to_indices`
/// gives them. Arrow sorts one column with its limit only when nulls come first; with
/// nulls last it sorts every non-null value in full, whatever the limit. So a single key
/// with nulls last is sorted with nulls first, the limit widened by the nulls (which then
/// all come before the best values), and the nulls moved behind.
fn first_indices(columns: &[SortColumn], limit: Option<usize>) -> std::result::Result<UInt32Array, ArrowError> {
    let ([key], Some(limit)) = (columns, limit) else { return lexsort_to_indices(columns, limit) };
    let options = key.options.unwrap_or_default();
    if options.nulls_first {
        return lexsort_to_indices(columns, Some(limit));
    }
    let nulls = key.values.null_count();
    let nulls_first =
        SortColumn { values: Arc::clone(&key.values), options: Some(SortOptions { nulls_first: true, ..options }) };
    let sorted = lexsort_to_indices(&[nulls_first], Some(limit.saturating_add(nulls)))?;
    let (null_rows, value_rows) = sorted.values().split_at(nulls.min(sorted.len()));
    Ok(value_rows.iter().chain(null_rows).take(limit).copied().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{AsArray, Float64Array, Int64Array};
    use arrow::datatypes::{Float64Type, Int64Type};
    use proptest::prelude::*;

    /// A key in Spark's order as a comparable value: NULL apart, every NaN alike and the
    /// greatest, -0.0 equal to 0.0.
    fn spark_key(value: Option<f64>) -> Option<(bool, i64)> {
        value.map(|v| match v.is_nan() {
            true => (true, 0),
            false => (false, ((v + 0.0) * 4.0) as i64), // the drawn values are quarters
        })
    }

    proptest! {
        /// Against a full sort of all the rows: the same keys in the same order, each row's
        /// other column carried along, with NULLs, NaNs, signed zeros and ties, in both
        /// directions and null placements, over any split into batches. With the row number
        /// as a second key, ties on the first are ordered too, so the rows must be exactly
        /// the full sort's: the running threshold must keep a tie. The first rows taken
        /// midway (`first_rows`, as a first pass does after each wave) are those of the rows
        /// pushed so far, and leave the rest of the read unchanged.
        #[test]
        fn the_first_rows_are_a_full_sorts(
            keys in prop::collection::vec(
                prop_oneof![
                    2 => Just(None),
                    1 => Just(Some(f64::NAN)),
                    1 => Just(Some(-f64::NAN)),
                    1 => Just(Some(-0.0)),
                    8 => (-20i32..20).prop_map(|q| Some(f64::from(q) / 4.0)),
                ],
                0..300,
            ),
            cuts in prop::collection::vec(0usize..300, 0..12),
            limit in prop::option::of(0usize..40),
            descending in any::<bool>(),
            nulls_first in any::<bool>(),
            by_row_too in any::<bool>(),
            later_rows_first in any::<bool>(),
            trim_at in 1usize..64,
            midway in prop::option::of(0usize..12),
            filtered_first in any::<bool>(),
            without_nulls in any::<bool>(),
            sorted in 0u8..3,
        ) {
            // Keys without NULLs take the selection on values (see `kth_key`).
            let mut keys: Vec<Option<f64>> = match without_nulls {
                true => keys.iter().map(|k| k.or(Some(1.0))).collect(),
                false => keys,
            };
            // A sorted column, read in the order or against it: the k-th key found in place.
            if sorted > 0 {
                keys.sort_by_key(|k| spark_key(*k));
            }
            if sorted == 2 {
                keys.reverse();
            }
            let options = SortOptions { descending, nulls_first };
            let mut order = vec![(0, options)];
            if by_row_too {
                // Later rows first: a tie that comes later must displace one held.
                order.push((1, SortOptions { descending: later_rows_first, nulls_first: false }));
            }
            let mut top = TopRows::new(order, limit);
            top.trim_at = trim_at; // small, so that trims and the threshold they set happen
            let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (keys.len() + 1)).collect();
            bounds.extend([0, keys.len()]);
            bounds.sort_unstable();
            let mut taken_midway = None;
            for (batch, pair) in bounds.windows(2).enumerate() {
                let (start, end) = (pair[0], pair[1]);
                let key: ArrayRef = Arc::new(Float64Array::from(keys[start..end].to_vec()));
                let row: ArrayRef = Arc::new(Int64Array::from_iter_values(start as i64..end as i64));
                let mut rows = RecordBatch::try_from_iter_with_nullable([("key", key, true), ("row", row, false)]).unwrap();
                // As a caller tagging the rows it pushes: the candidates alone.
                if filtered_first && let Some(keep) = top.candidates(&rows).unwrap() {
                    rows = filter_record_batch(&rows, &keep).unwrap();
                }
                top.push(rows).unwrap();
                if midway == Some(batch) {
                    taken_midway = Some((end, top.first_rows().unwrap()));
                }
            }
            let spark_order = |a: &Option<(bool, i64)>, b: &Option<(bool, i64)>| match (a, b) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, Some(_)) => if nulls_first { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater },
                (Some(_), None) => if nulls_first { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Less },
                (Some(a), Some(b)) => if descending { b.cmp(a) } else { a.cmp(b) },
            };
            // The first rows of the first `rows` keys, by a full sort.
            let expected = |rows: usize| {
                let mut expected: Vec<(Option<(bool, i64)>, i64)> =
                    keys[..rows].iter().enumerate().map(|(row, &k)| (spark_key(k), row as i64)).collect();
                expected.sort_by(|a, b| {
                    let by_row = if later_rows_first { b.1.cmp(&a.1) } else { a.1.cmp(&b.1) };
                    spark_order(&a.0, &b.0).then(by_row)
                });
                expected.truncate(limit.unwrap_or(rows));
                expected
            };
            let rows_of = |out: Option<RecordBatch>| -> Vec<(Option<(bool, i64)>, i64)> {
                match out {
                    None => Vec::new(),
                    Some(out) => {
                        let key = out.column(0).as_primitive::<Float64Type>();
                        let row = out.column(1).as_primitive::<Int64Type>();
                        (0..out.num_rows()).map(|i| (spark_key(key.is_valid(i).then(|| key.value(i))), row.value(i))).collect()
                    }
                }
            };
            let keys_only = |rows: Vec<(Option<(bool, i64)>, i64)>| rows.into_iter().map(|(k, _)| k).collect::<Vec<_>>();
            let mut checks = vec![(keys.len(), rows_of(top.finish().unwrap()))];
            if let Some((rows, out)) = taken_midway {
                checks.push((rows, rows_of(out)));
            }
            for (rows, got) in checks {
                for (key, row) in &got {
                    prop_assert_eq!(*key, spark_key(keys[*row as usize]));
                }
                match by_row_too {
                    true => prop_assert_eq!(got, expected(rows)),
                    false => prop_assert_eq!(keys_only(got), keys_only(expected(rows))),
                }
            }
        }
    }

    #[test]
    fn holds_about_twice_the_limit() {
        let mut top = TopRows::new(vec![(0, SortOptions { descending: false, nulls_first: true })], Some(10));
        for start in (0..100i64).rev().map(|k| k * 10_000) {
            let values: Vec<i64> = (start..start + 10_000).collect();
            top.push(RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(values)) as ArrayRef)]).unwrap())
                .unwrap();
            assert!(top.rows < (1 << 16) + 10_000, "{} rows held", top.rows);
        }
        let out = top.finish().unwrap().unwrap();
        assert_eq!(
            out.column(0).as_primitive::<arrow::datatypes::Int64Type>().values(),
            &(0..10).collect::<Vec<i64>>()
        );
    }
}
