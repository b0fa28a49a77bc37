//! A predicate evaluated as its column is decoded, a few pages at a time.
//!
//! Decoded whole, a text column of 100-byte values is 100 MB a million rows, written to
//! fresh memory and read back by the predicate long after it left the cache. Here the
//! values decoded since the last evaluation are handed to the predicate once they reach
//! [`FLUSH_BYTES`] (or [`FLUSH_ROWS`]) — after the page that crossed it, while its values
//! are still in cache — and its answers are kept, a bit per selected row, with (where a
//! later stage reads the column too) the values of the rows that pass. The next run is
//! decoded into the buffers the last one filled, taken back once it is evaluated: still
//! in cache, and never a fresh allocation to fault in. (Polars evaluates a string
//! predicate inside its page decoder for the same reason.)
//!
//! ```text
//! pages:    [ p0 ][ p1 ][ p2 ][ p3 ] ...
//! values:   [ p0 ]→ predicate → 0110…   [ p1 ]→ predicate → 1000…   ...
//! answers:  0110… 1000… …  (one bit per selected row, in order)
//! kept:     the values of p0's rows 1 and 2, of p1's row 0, …
//! ```

use super::*;

/// Values' bytes that, once decoded, are evaluated: about a page of PLAIN text (writers
/// cut pages at 1 MiB), well within a core's cache. (Small in the unit tests, whose
/// columns are small: every run of pages is handed over several times.)
#[cfg(not(test))]
pub(super) const FLUSH_BYTES: usize = 256 << 10;
#[cfg(test)]
pub(super) const FLUSH_BYTES: usize = 2 << 10;

/// Rows that, once decoded, are evaluated whatever their bytes.
#[cfg(not(test))]
pub(super) const FLUSH_ROWS: usize = 1 << 14;
#[cfg(test)]
pub(super) const FLUSH_ROWS: usize = 100;

/// A sink whose output so far can be taken, leaving it empty for what follows.
pub(super) trait Drain: Sink {
    /// The rows appended since the last drain, and their values' bytes.
    fn pending(&self) -> (usize, usize);
    /// Those rows as an array of `arrow_type`.
    fn drain(&mut self, arrow_type: &DataType) -> Result<ArrayRef, DecodeError>;
    /// Takes back the buffers of a drained array once it is evaluated.
    fn recycle(&mut self, array: ArrayRef);
}

impl<O: OffsetSizeTrait> Drain for BytesOutput<O> {
    fn pending(&self) -> (usize, usize) {
        BytesOutput::pending(self)
    }

    fn drain(&mut self, _: &DataType) -> Result<ArrayRef, DecodeError> {
        BytesOutput::drain(self)
    }

    fn recycle(&mut self, array: ArrayRef) {
        BytesOutput::recycle(self, array);
    }
}

impl<T: super::fixed_width::Native> Drain for Output<T> {
    fn pending(&self) -> (usize, usize) {
        let values = self.values_and_validity().0;
        (values.len(), std::mem::size_of_val(values))
    }

    fn drain(&mut self, arrow_type: &DataType) -> Result<ArrayRef, DecodeError> {
        Output::drain(self, arrow_type)
    }

    fn recycle(&mut self, array: ArrayRef) {
        Output::recycle(self, array);
    }
}

/// The sink `inner`, its output handed to `evaluate` every [`FLUSH_BYTES`] and kept as the
/// answers, and (where the values are read again later) the values of the rows that pass.
pub(super) struct Evaluating<S, F> {
    inner: S,
    /// The type of the arrays handed to `evaluate`.
    arrow_type: DataType,
    evaluate: F,
    answers: BooleanBufferBuilder,
    /// The values of the rows that passed, a piece per run; `None`: not kept.
    passed: Option<Vec<ArrayRef>>,
}

impl<S: Drain, F: FnMut(&ArrayRef) -> Result<BooleanBuffer, DecodeError>> Evaluating<S, F> {
    /// `inner` decoding into `arrow_type`; `selected`: the rows to be decoded (the answers'
    /// length); `keep`: whether the values of the rows that pass are kept.
    pub(super) fn new(inner: S, arrow_type: &DataType, evaluate: F, selected: usize, keep: bool) -> Self {
        let answers = BooleanBufferBuilder::new(selected.min(MAX_RESERVED_VALUES));
        Self { inner, arrow_type: arrow_type.clone(), evaluate, answers, passed: keep.then(Vec::new) }
    }

    fn flush(&mut self) -> Result<(), DecodeError> {
        let (rows, _) = self.inner.pending();
        if rows == 0 {
            return Ok(());
        }
        let values = self.inner.drain(&self.arrow_type)?;
        let answers = (self.evaluate)(&values)?;
        if answers.len() != rows {
            return Err(DecodeError::Corrupt(format!("a predicate answered {} of {rows} rows", answers.len())));
        }
        if let Some(passed) = &mut self.passed {
            let kept = crate::reading::select_rows::select_rows(&values, &answers);
            passed.push(kept.map_err(|e| DecodeError::Corrupt(e.to_string()))?);
        }
        self.inner.recycle(values);
        self.answers.append_buffer(&answers);
        Ok(())
    }

    /// The answers for every row decoded, in order, and the values of the rows that
    /// passed, if kept.
    pub(super) fn finish(mut self) -> Result<(BooleanBuffer, Option<ArrayRef>), DecodeError> {
        self.flush()?;
        let passed = match self.passed.take() {
            None => None,
            Some(pieces) if pieces.is_empty() => Some(arrow::array::new_empty_array(&self.arrow_type)),
            Some(pieces) => {
                let pieces: Vec<&dyn arrow::array::Array> = pieces.iter().map(|piece| piece.as_ref()).collect();
                Some(arrow::compute::concat(&pieces).map_err(|e| DecodeError::Corrupt(e.to_string()))?)
            }
        };
        Ok((self.answers.finish(), passed))
    }
}

impl<S: Drain, F: FnMut(&ArrayRef) -> Result<BooleanBuffer, DecodeError>> Sink for Evaluating<S, F> {
    fn dictionary(&mut self, page: PageValues<'_>, count: usize) -> Result<bool, DecodeError> {
        self.inner.dictionary(page, count)
    }

    fn page(&mut self, page: &mut DataPage<'_>, selected: &BooleanBuffer) -> Result<bool, DecodeError> {
        if !self.inner.page(page, selected)? {
            return Ok(false);
        }
        let (rows, bytes) = self.inner.pending();
        if bytes >= FLUSH_BYTES || rows >= FLUSH_ROWS {
            self.flush()?;
        }
        Ok(true)
    }
}
