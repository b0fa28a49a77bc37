//! Algorithms on the run (RLE) representation.
//!
//! Every function here takes and returns *normalised* runs: no zero-length run, and
//! neighbours differ in kind. Outputs are normalised as they are built ([`push_run`]), so
//! no second pass is needed. All are linear in the number of runs.

use arrow::array::BooleanBufferBuilder;
use arrow::buffer::BooleanBuffer;

use super::RowSelector;

/// Appends `run`, merging it into the last run when of the same kind; drops empty runs.
#[inline]
pub(crate) fn push_run(runs: &mut Vec<RowSelector>, run: RowSelector) {
    if run.row_count == 0 {
        return;
    }
    match runs.last_mut() {
        Some(last) if last.skip == run.skip => last.row_count += run.row_count,
        _ => runs.push(run),
    }
}

/// `true` when `runs` has no empty run and no two neighbours of one kind.
pub(crate) fn is_normalised(runs: &[RowSelector]) -> bool {
    runs.iter().all(|r| r.row_count > 0) && runs.windows(2).all(|w| w[0].skip != w[1].skip)
}

/// The runs as a bitmask.
pub(crate) fn to_mask(runs: &[RowSelector]) -> BooleanBuffer {
    let total = runs.iter().map(|r| r.row_count).sum();
    let mut builder = BooleanBufferBuilder::new(total);
    for run in runs {
        builder.append_n(run.row_count, run.selects());
    }
    builder.finish()
}

/// A cursor over runs that hands out pieces of at most a requested length.
pub(crate) struct Cursor<'a> {
    runs: &'a [RowSelector],
    index: usize,
    /// Rows of `runs[index]` already consumed.
    used: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(runs: &'a [RowSelector]) -> Self {
        Self { runs, index: 0, used: 0 }
    }

    /// The current run's kind and remaining length, if any.
    #[inline]
    fn peek(&self) -> Option<(bool, usize)> {
        self.runs.get(self.index).map(|r| (r.skip, r.row_count - self.used))
    }

    /// Consumes `n` rows of the current run (`n` at most its remaining length).
    #[inline]
    fn advance(&mut self, n: usize) {
        self.used += n;
        if self.used == self.runs[self.index].row_count {
            self.index += 1;
            self.used = 0;
        }
    }

    /// The next `len` rows as a bitmap, set where selected (rows past the runs are not).
    pub(crate) fn take_mask(&mut self, len: usize) -> BooleanBuffer {
        let mut bits = BooleanBufferBuilder::new(len);
        let mut left = len;
        while let Some((skip, available)) = self.peek().filter(|_| left > 0) {
            let n = available.min(left);
            bits.append_n(n, !skip);
            self.advance(n);
            left -= n;
        }
        bits.append_n(left, false);
        bits.finish()
    }
}

/// `first.and_then(second)`: `second` covers the rows `first` selects. The caller has checked
/// the lengths.
pub(crate) fn and_then(first: &[RowSelector], second: &[RowSelector]) -> Vec<RowSelector> {
    let mut out = Vec::with_capacity(first.len() + second.len());
    let mut inner = Cursor::new(second);
    for run in first {
        if run.skip {
            push_run(&mut out, *run);
            continue;
        }
        let mut remaining = run.row_count;
        while remaining > 0 {
            let (skip, available) = inner.peek().expect("second covers the selected rows");
            let n = available.min(remaining);
            push_run(&mut out, RowSelector { row_count: n, skip });
            inner.advance(n);
            remaining -= n;
        }
    }
    out
}

/// Combines two run lists of the same length row by row with `selects(a, b)`.
///
/// One pass with plain indices and remaining counts: this loop runs once per output
/// piece, so it avoids the cursor abstraction of [`and_then`].
pub(crate) fn combine(a: &[RowSelector], b: &[RowSelector], selects: impl Fn(bool, bool) -> bool) -> Vec<RowSelector> {
    let mut out: Vec<RowSelector> = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    let (mut left, mut right) = (a.first().map_or(0, |r| r.row_count), b.first().map_or(0, |r| r.row_count));
    while i < a.len() && j < b.len() {
        let n = left.min(right);
        let skip = !selects(!a[i].skip, !b[j].skip);
        match out.last_mut() {
            Some(last) if last.skip == skip => last.row_count += n,
            _ => out.push(RowSelector { row_count: n, skip }),
        }
        left -= n;
        right -= n;
        if left == 0 {
            i += 1;
            left = a.get(i).map_or(0, |r| r.row_count);
        }
        if right == 0 {
            j += 1;
            right = b.get(j).map_or(0, |r| r.row_count);
        }
    }
    out
}

/// The first `at` rows and the rest (`at` past the end: everything, then nothing).
pub(crate) fn split_off(runs: &[RowSelector], at: usize) -> (Vec<RowSelector>, Vec<RowSelector>) {
    let mut head = Vec::new();
    let mut position = 0usize;
    for (i, run) in runs.iter().enumerate() {
        if position + run.row_count <= at {
            head.push(*run);
            position += run.row_count;
            continue;
        }
        let in_head = at - position;
        push_run(&mut head, RowSelector { row_count: in_head, skip: run.skip });
        let mut tail = Vec::with_capacity(runs.len() - i);
        push_run(&mut tail, RowSelector { row_count: run.row_count - in_head, skip: run.skip });
        tail.extend_from_slice(&runs[i + 1..]);
        return (head, tail);
    }
    (head, Vec::new())
}

/// Rows `start..start + len` (the caller has checked the bounds).
pub(crate) fn slice(runs: &[RowSelector], start: usize, len: usize) -> Vec<RowSelector> {
    let mut out = Vec::new();
    let end = start + len;
    let mut position = 0usize;
    for run in runs {
        let (run_start, run_end) = (position, position + run.row_count);
        position = run_end;
        if run_end <= start {
            continue;
        }
        if run_start >= end {
            break;
        }
        let n = run_end.min(end) - run_start.max(start);
        push_run(&mut out, RowSelector { row_count: n, skip: run.skip });
    }
    out
}

/// Turns the first `n` selected rows into skipped rows.
pub(crate) fn offset(runs: &[RowSelector], mut n: usize) -> Vec<RowSelector> {
    let mut out = Vec::with_capacity(runs.len());
    for run in runs {
        if run.skip || n == 0 {
            push_run(&mut out, *run);
            continue;
        }
        let dropped = n.min(run.row_count);
        n -= dropped;
        push_run(&mut out, RowSelector::skip(dropped));
        push_run(&mut out, RowSelector::select(run.row_count - dropped));
    }
    out
}

/// Keeps the first `n` selected rows; the others become skipped rows.
pub(crate) fn limit(runs: &[RowSelector], mut n: usize) -> Vec<RowSelector> {
    let mut out = Vec::with_capacity(runs.len());
    for run in runs {
        if run.skip {
            push_run(&mut out, *run);
            continue;
        }
        let kept = n.min(run.row_count);
        n -= kept;
        push_run(&mut out, RowSelector::select(kept));
        push_run(&mut out, RowSelector::skip(run.row_count - kept));
    }
    out
}
