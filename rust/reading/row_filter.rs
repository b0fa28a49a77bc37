//! The row filter: the filter's conjuncts as separately evaluated predicates, ordered
//! cheapest first (as DataFusion orders its row filters), and re-ranked from what scanning
//! observes.
//!
//! `a AND b AND c` becomes three predicates. Late materialization evaluates them one after
//! another, each on the rows the previous ones kept, so order matters: a cheap, selective
//! predicate first shrinks the work of every later one. Before any data is read the order
//! follows DataFusion's: predicates whose columns have a page index first, then by the
//! compressed bytes of their columns. While scanning, each predicate's cost (time per input
//! row) and selectivity are measured, and from the next row group on predicates run in
//! order of **cost per row removed** — the price of each row a predicate saves the later
//! steps from. (With `reorder_filters=False` the text order is kept.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow::datatypes::Schema;
use parquet::file::metadata::ParquetMetaData;

use crate::error::Result;
use crate::filter::{BindOptions, Expr, bind, columns, resolve_column, split_conjunction};

/// One conjunct of the filter, with what its cost depends on.
#[derive(Debug, Clone)]
pub struct Predicate {
    /// The conjunct.
    pub expr: Expr,
    /// Root (top-level) column indices it reads, ascending.
    pub roots: Vec<usize>,
    /// Compressed bytes of those columns over the scan (a proxy for decoding cost).
    pub required_bytes: u64,
    /// Whether every one of its columns has a page index (its selection can skip pages).
    pub uses_page_index: bool,
    /// Whether it can raise an error (ANSI overflow, division by zero, a string that does
    /// not cast): it must then only see the rows the conjuncts before it in the text kept,
    /// as in Spark, so it is never moved ahead of them.
    pub can_raise: bool,
}

/// What one predicate has been seen to do so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PredicateStats {
    /// Rows it was evaluated on.
    pub rows_in: u64,
    /// Rows it kept.
    pub rows_out: u64,
    /// Time spent decoding its columns and evaluating it.
    pub time: Duration,
}

impl PredicateStats {
    /// Nanoseconds per row removed; `None` before it has run.
    pub fn cost_per_row_removed(&self) -> Option<f64> {
        if self.rows_in == 0 {
            return None;
        }
        let removed = self.rows_in.saturating_sub(self.rows_out);
        // A predicate that removed nothing costs its whole time "per row" (+1 avoids ∞ and
        // still orders two useless predicates by time).
        Some(self.time.as_nanos() as f64 / (removed as f64 + 1.0))
    }
}

/// The ordered predicates of one scan, shared by the readers of all its row groups.
///
/// ```
/// use pqsift::filter::parse_filter;
/// use pqsift::reading::row_filter::{Predicate, RowFilter};
/// let predicate = |text: &str, bytes: u64| Predicate {
///     expr: parse_filter(text).unwrap(), roots: vec![0], required_bytes: bytes, uses_page_index: false, can_raise: false,
/// };
/// let filter = RowFilter::new(vec![predicate("text LIKE '%x%'", 9_000_000), predicate("id = 7", 80_000)], true);
/// // Before scanning: fewest bytes first.
/// assert_eq!(filter.order(), vec![1, 0]);
/// ```
#[derive(Debug)]
pub struct RowFilter {
    predicates: Vec<Predicate>,
    reorder: bool,
    stats: Mutex<Vec<PredicateStats>>,
    pass_rate: Arc<PassRate>,
}

/// The share of rows the whole filter has kept so far, over the row groups of every file of
/// a scan (their row filters share one): what the next row group is expected to keep
/// before it is filtered (see [`round_trips`](crate::reading::round_trips)).
///
/// ```
/// use pqsift::reading::row_filter::PassRate;
/// let rate = PassRate::default();
/// assert_eq!(rate.observed(), None);
/// rate.record(1_000, 10);
/// rate.record(3_000, 30);
/// assert_eq!(rate.observed(), Some(0.01));
/// ```
#[derive(Debug, Default)]
pub struct PassRate {
    rows_in: AtomicU64,
    rows_out: AtomicU64,
}

impl PassRate {
    /// Records a row group's filter: `rows_in` selected before it, `rows_out` after.
    pub fn record(&self, rows_in: u64, rows_out: u64) {
        self.rows_out.fetch_add(rows_out, Ordering::Relaxed);
        self.rows_in.fetch_add(rows_in, Ordering::Relaxed);
    }

    /// Rows kept over rows filtered so far; `None` before any row was filtered.
    pub fn observed(&self) -> Option<f64> {
        let rows_in = self.rows_in.load(Ordering::Relaxed);
        let rows_out = self.rows_out.load(Ordering::Relaxed);
        (rows_in > 0).then(|| (rows_out as f64 / rows_in as f64).min(1.0))
    }
}

impl RowFilter {
    /// Splits `filter` into predicates for a file with Arrow schema `schema` and metadata
    /// `metadata`: each conjunct is bound once (so a bad column or type fails here, before
    /// any data is read), and gets its root columns, their compressed bytes and whether they
    /// have a page index.
    pub fn build(
        filter: Option<&Expr>,
        schema: &Schema,
        metadata: &ParquetMetaData,
        options: &BindOptions,
        reorder: bool,
    ) -> Result<Self> {
        let mut predicates = Vec::new();
        for conjunct in in_sparks_order(filter.map(split_conjunction).unwrap_or_default()) {
            let can_raise = bind(conjunct, schema, options)?.can_raise();
            let mut roots: Vec<usize> = columns(conjunct)
                .iter()
                .map(|path| Ok(resolve_column(schema, path, options)?.indices[0]))
                .collect::<Result<_>>()?;
            roots.sort_unstable();
            roots.dedup();
            let descriptor = metadata.file_metadata().schema_descr();
            let leaves: Vec<usize> = (0..descriptor.num_columns())
                .filter(|&leaf| roots.contains(&descriptor.get_column_root_idx(leaf)))
                .collect();
            let required_bytes = metadata
                .row_groups()
                .iter()
                .flat_map(|rg| leaves.iter().map(move |&leaf| rg.column(leaf).compressed_size().max(0) as u64))
                .sum();
            // Pages can be skipped where the offset index says where they start.
            let has_offsets = |leaf: usize| {
                metadata.page_index().is_some_and(|index| {
                    (0..metadata.num_row_groups()).any(|row_group| index.offset_index(row_group, leaf).is_some())
                })
            };
            let uses_page_index = !leaves.is_empty() && leaves.iter().all(|&leaf| has_offsets(leaf));
            predicates.push(Predicate { expr: conjunct.clone(), roots, required_bytes, uses_page_index, can_raise });
        }
        Ok(Self::new(predicates, reorder))
    }

    /// The filter made of `predicates` (in text order); `reorder` enables cost ordering.
    pub fn new(predicates: Vec<Predicate>, reorder: bool) -> Self {
        let stats = Mutex::new(vec![PredicateStats::default(); predicates.len()]);
        Self { predicates, reorder, stats, pass_rate: Arc::default() }
    }

    /// The filter, recording the rows it keeps into `pass_rate` (shared with the row
    /// filters of the scan's other files).
    pub fn sharing_pass_rate(self, pass_rate: Arc<PassRate>) -> Self {
        Self { pass_rate, ..self }
    }

    /// The share of rows the scan's filter has kept so far.
    pub fn pass_rate(&self) -> &PassRate {
        &self.pass_rate
    }

    /// The predicates, in text order.
    pub fn predicates(&self) -> &[Predicate] {
        &self.predicates
    }

    /// `true` when there is nothing to evaluate.
    pub fn is_empty(&self) -> bool {
        self.predicates.is_empty()
    }

    /// Indices of the predicates in the order to evaluate them now.
    pub fn order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.predicates.len()).collect();
        // A conjunct that can raise an error keeps its place after the ones before it.
        if !self.reorder || self.predicates.iter().any(|p| p.can_raise) {
            return order;
        }
        let stats = self.stats();
        let all_observed = stats.iter().all(|s| s.rows_in > 0);
        if all_observed {
            order.sort_by(|&a, &b| {
                let (ca, cb) = (stats[a].cost_per_row_removed(), stats[b].cost_per_row_removed());
                ca.partial_cmp(&cb).unwrap_or(std::cmp::Ordering::Equal)
            });
        } else {
            // Static order: page-index-capable first, then fewest bytes (stable: text order
            // breaks ties).
            order.sort_by_key(|&i| (!self.predicates[i].uses_page_index, self.predicates[i].required_bytes));
        }
        order
    }

    /// Records one evaluation of predicate `index`.
    pub fn record(&self, index: usize, rows_in: u64, rows_out: u64, time: Duration) {
        let mut stats = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        let entry = &mut stats[index];
        entry.rows_in += rows_in;
        entry.rows_out += rows_out;
        entry.time += time;
    }

    /// What each predicate (text order) has done so far.
    pub fn stats(&self) -> Vec<PredicateStats> {
        self.stats.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// `conjuncts` (text order) in the order Spark's filter (`FilterExec`) evaluates them: as
/// written, but `IS NOT NULL` of an expression of columns through null-intolerant
/// operators only, `(i - l) IS NOT NULL`, after all the others. The order is what a
/// conjunct that can raise keeps (see [`RowFilter::order`]): `i - l` overflows only for the
/// rows the other conjuncts kept.
///
/// ```text
/// a = 1 AND (i - l) IS NOT NULL AND b = 2   →   a = 1, b = 2, (i - l) IS NOT NULL
/// a = 1 AND (i - 1) IS NOT NULL AND b = 2   →   as written (a literal is not null-intolerant)
/// ```
fn in_sparks_order(conjuncts: Vec<&Expr>) -> Vec<&Expr> {
    let (last, first): (Vec<&Expr>, Vec<&Expr>) = conjuncts.into_iter().partition(|conjunct| {
        let tested = match conjunct {
            Expr::IsNull { expr, negated: true } => expr,
            Expr::Not(inner) => match inner.as_ref() {
                Expr::IsNull { expr, negated: false } => expr,
                _ => return false,
            },
            _ => return false,
        };
        !matches!(tested.as_ref(), Expr::Column(_)) && of_columns_through_null_intolerant(tested)
    });
    first.into_iter().chain(last).collect()
}

/// Whether `expr` is a column, or an operator Spark marks null-intolerant (NULL in, NULL
/// out) over such expressions only: arithmetic, negation, `abs`, casts, comparisons and
/// the functions of the kind that can raise (`floor`, `ceil`, `pmod`, `date_add`,
/// `date_sub`). A literal is not (Spark's `FilterExec.isNullIntolerant`).
fn of_columns_through_null_intolerant(expr: &Expr) -> bool {
    match expr {
        Expr::Column(_) => true,
        Expr::Arithmetic { left, right, .. } => {
            of_columns_through_null_intolerant(left) && of_columns_through_null_intolerant(right)
        }
        Expr::Compare { op, left, right } => {
            *op != crate::filter::CompareOp::NullSafeEq
                && of_columns_through_null_intolerant(left)
                && of_columns_through_null_intolerant(right)
        }
        Expr::Negate(inner) | Expr::Abs(inner) | Expr::Cast { expr: inner, .. } => {
            of_columns_through_null_intolerant(inner)
        }
        Expr::Function { name, args } => {
            matches!(name.as_str(), "floor" | "ceil" | "pmod" | "mod" | "date_add" | "date_sub")
                && args.iter().all(of_columns_through_null_intolerant)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::parse_filter;

    fn predicate(text: &str, bytes: u64, page_index: bool) -> Predicate {
        Predicate {
            expr: parse_filter(text).unwrap(),
            roots: vec![0],
            required_bytes: bytes,
            uses_page_index: page_index,
            can_raise: false,
        }
    }

    #[test]
    fn not_null_checks_of_null_intolerant_expressions_go_last() {
        let order = |text: &str| -> Vec<String> {
            let filter = parse_filter(text).unwrap();
            in_sparks_order(split_conjunction(&filter)).iter().map(|e| e.to_string()).collect()
        };
        assert_eq!(order("a = 1 AND (i - l) IS NOT NULL AND b = 2"), ["`a` = 1", "`b` = 2", "`i` - `l` IS NOT NULL"]);
        assert_eq!(
            order("isnotnull(-i) AND NOT (CAST(s AS INT) IS NULL) AND b"),
            ["`b`", "-(`i`) IS NOT NULL", "NOT CAST(`s` AS INT) IS NULL"]
        );
        // A literal, a column alone, a null-safe comparison, coalesce: as written.
        for text in [
            "(i - 1) IS NOT NULL AND b",
            "i IS NOT NULL AND b",
            "(i <=> l) IS NOT NULL AND b",
            "coalesce(i, l) IS NOT NULL AND b",
        ] {
            assert_eq!(order(text).last().map(String::as_str), Some("`b`"), "{text}");
        }
    }

    #[test]
    fn static_order_prefers_page_index_then_bytes() {
        let filter = RowFilter::new(
            vec![predicate("a = 1", 100, false), predicate("b = 1", 500, true), predicate("c = 1", 50, false)],
            true,
        );
        assert_eq!(filter.order(), vec![1, 2, 0]);
        assert_eq!(RowFilter::new(filter.predicates().to_vec(), false).order(), vec![0, 1, 2]);
    }

    #[test]
    fn observed_cost_per_row_removed_reranks() {
        let filter = RowFilter::new(vec![predicate("a = 1", 10, false), predicate("b = 1", 1000, false)], true);
        assert_eq!(filter.order(), vec![0, 1]);
        // `a` is cheap but removes almost nothing; `b` costs more and removes 90%.
        filter.record(0, 10_000, 9_990, Duration::from_micros(100));
        filter.record(1, 10_000, 1_000, Duration::from_micros(400));
        assert_eq!(filter.order(), vec![1, 0]);
    }
}
