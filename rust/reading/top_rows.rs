//! `ORDER BY ... [LIMIT k]` over the batches a scan decodes: the rows in Spark's order, at
//! most `k` of them, holding no more than about `2k` rows (plus one batch) at a time.
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

use arrow::array::RecordBatch;
use arrow::compute::kernels::sort::{SortColumn, lexsort_to_indices};
use arrow::compute::{SortOptions, concat_batches, take_record_batch};

use crate::error::{PqsiftError, Result};
use crate::filter::spark_float_order;

/// Rows accumulated for a sort, trimmed to the first `limit` as they come.
#[derive(Debug)]
pub struct TopRows {
    keys: Vec<(usize, SortOptions)>,
    limit: Option<usize>,
    batches: Vec<RecordBatch>,
    rows: usize,
}

impl TopRows {
    /// Rows ordered by the columns at `keys` (column index, order), the first `limit` kept
    /// (`None`: all).
    pub fn new(keys: Vec<(usize, SortOptions)>, limit: Option<usize>) -> Self {
        Self { keys, limit, batches: Vec::new(), rows: 0 }
    }

    /// Adds a batch; trims to the first `limit` rows once twice that many are held.
    pub fn push(&mut self, batch: RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 || self.limit == Some(0) {
            return Ok(());
        }
        self.rows += batch.num_rows();
        self.batches.push(batch);
        if let Some(limit) = self.limit
            && self.rows >= limit.saturating_mul(2).max(1 << 16)
        {
            let trimmed = self.sorted()?;
            self.rows = trimmed.as_ref().map_or(0, RecordBatch::num_rows);
            self.batches = trimmed.into_iter().collect();
        }
        Ok(())
    }

    /// The rows in order (`None`: no row).
    pub fn finish(mut self) -> Result<Option<RecordBatch>> {
        self.sorted()
    }

    fn sorted(&mut self) -> Result<Option<RecordBatch>> {
        let Some(first) = self.batches.first() else { return Ok(None) };
        let error = |e: arrow::error::ArrowError| PqsiftError::Compute(format!("sorting the rows: {e}"));
        let all = concat_batches(&first.schema(), &self.batches).map_err(error)?;
        let columns: Vec<SortColumn> = self
            .keys
            .iter()
            .map(|&(index, options)| SortColumn {
                values: spark_float_order(all.column(index)),
                options: Some(options),
            })
            .collect();
        let indices = lexsort_to_indices(&columns, self.limit).map_err(error)?;
        Ok(Some(take_record_batch(&all, &indices).map_err(error)?))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use arrow::array::{ArrayRef, AsArray, Int64Array};

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
