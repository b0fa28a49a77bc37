//! Row group pruning from the footer: the file byte range, then column chunk statistics
//! (DataFusion's `RowGroupAccessPlanFilter::prune_by_range` / `prune_by_statistics`).
//!
//! ```
//! # let dir = std::env::temp_dir().join("pqsift_rgf_doc");
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("t.parquet");
//! # let batch = arrow::array::RecordBatch::try_from_iter([("age", std::sync::Arc::new(arrow::array::Int32Array::from((0..100).collect::<Vec<i32>>())) as _)]).unwrap();
//! # let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(50)).build();
//! # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
//! # w.write(&batch).unwrap(); w.close().unwrap();
//! use pqsift::planning::access_plan::FileAccessPlan;
//! use pqsift::filter::{bind, parse_filter, BindOptions};
//! use pqsift::planning::metrics::PruningMetrics;
//! use pqsift::format::opener::OpenedFile;
//! use pqsift::planning::row_group_filter::prune_by_statistics;
//!
//! let file = OpenedFile::open(&path.into()).unwrap(); // ages 0..50 | 50..100
//! let filter = bind(&parse_filter("age >= 60").unwrap(), &file.schema, &BindOptions::default()).unwrap();
//! let mut plan = FileAccessPlan::scan_all(file.name(), &file.row_group_rows());
//! let mut metrics = PruningMetrics::default();
//! prune_by_statistics(&file, &filter, &mut plan, &mut metrics).unwrap();
//! assert_eq!(plan.surviving().collect::<Vec<_>>(), [1]);
//! assert_eq!(metrics.row_groups_pruned_statistics, 1);
//! assert_eq!(plan.row_groups[0].reason, "max(age)=49 < 60");
//! ```

use std::cell::OnceCell;
use std::collections::BTreeMap;

use arrow::array::Array;
use arrow::util::display::{ArrayFormatter, FormatOptions};

use crate::error::{PqsiftError, Result};
use crate::filter::CompareOp;
use crate::filter::{BoundColumn, BoundExpr};
use crate::format::opener::{OpenedFile, describe_zone};
use crate::planning::access_plan::FileAccessPlan;
use crate::planning::metrics::PruningMetrics;
use crate::planning::why_not::StatisticsNotes;
use crate::pruning::normalise::contradiction;
use crate::pruning::pruning_predicate::{LeafPredicate, evaluate_tree};
use crate::pruning::zone_map::ZoneMaps;

/// Skips the row groups whose midpoint (first column chunk's start plus half the
/// compressed size) is outside `[offset, offset + length)`, so that byte-range splits of
/// one file read each row group exactly once.
pub fn prune_by_range(file: &OpenedFile, range: (u64, u64), plan: &mut FileAccessPlan, metrics: &mut PruningMetrics) {
    let (offset, length) = range;
    let end = offset.saturating_add(length);
    for (index, row_group) in file.metadata.row_groups().iter().enumerate() {
        let start = row_group.columns().iter().map(|c| c.byte_range().0).min().unwrap_or(0);
        let size: u64 = row_group.columns().iter().map(|c| c.byte_range().1).sum();
        let midpoint = start.saturating_add(size / 2);
        if !(offset..end).contains(&midpoint) && plan.row_groups[index].decision() != "skip" {
            plan.skip(index, "file range", format!("midpoint byte {midpoint} is outside [{offset}, {end})"));
            metrics.row_groups_pruned_range += 1;
        }
    }
}

/// Skips the row groups not in `keep` (a task planned elsewhere). They count with the file
/// range's: both say which part of a file a task reads.
pub fn prune_by_row_group_list(
    file: &OpenedFile,
    keep: &[usize],
    plan: &mut FileAccessPlan,
    metrics: &mut PruningMetrics,
) -> Result<()> {
    let total = file.metadata.num_row_groups();
    if let Some(bad) = keep.iter().find(|&&index| index >= total) {
        return Err(PqsiftError::selection(format!(
            "{}: row group {bad} requested, the file has {total} (did it change since planning?)",
            file.name()
        )));
    }
    let mut kept = vec![false; total];
    for &index in keep {
        kept[index] = true;
    }
    for (index, kept) in kept.into_iter().enumerate() {
        if !kept && plan.row_groups[index].decision() != "skip" {
            plan.skip(index, "file range", "not one of this task's row groups".to_string());
            metrics.row_groups_pruned_range += 1;
        }
    }
    Ok(())
}

/// Skips the surviving row groups where the filter cannot be true according to their
/// column chunk statistics, or where conjuncts on one column contradict each other.
pub fn prune_by_statistics(
    file: &OpenedFile,
    filter: &BoundExpr,
    plan: &mut FileAccessPlan,
    metrics: &mut PruningMetrics,
) -> Result<()> {
    let containers = file.metadata.num_row_groups();
    // Conjuncts merged per column (ranges, value sets): an empty one matches nothing.
    if let Some(reason) = contradiction(filter) {
        for index in plan.surviving().collect::<Vec<_>>() {
            plan.skip(index, "statistics", reason.clone());
            metrics.row_groups_pruned_statistics += 1;
        }
        return Ok(());
    }
    // Zone maps are read once per column, keyed by its field indices: names joined with dots
    // would make a top-level `a.b` and the field `b` of a struct `a` one column.
    let mut zone_maps: BTreeMap<Vec<usize>, Option<ZoneMaps>> = BTreeMap::new();
    let mut columns: Vec<BoundColumn> = Vec::new();
    let possible = evaluate_tree(filter, &mut |leaf: &BoundExpr| {
        let leaf = LeafPredicate::analyse(leaf);
        let Some(column) = leaf.column() else {
            return Ok(leaf.evaluate(None, containers));
        };
        if !zone_maps.contains_key(&column.indices) {
            zone_maps.insert(column.indices.clone(), file.row_group_zone_maps(column)?);
            columns.push(column.clone());
        }
        Ok(leaf.evaluate(zone_maps[&column.indices].as_ref(), containers))
    })?;
    let surviving: Vec<usize> = plan.surviving().collect();
    let mut notes = StatisticsNotes::new(file, filter, &zone_maps);
    let reasons = SkipReasons::new(filter, &zone_maps);
    for index in surviving {
        if possible.can_true[index] {
            plan.note(index, notes.row_group(index));
            continue;
        }
        let reason = reasons.reason(index).unwrap_or_else(|| {
            let evidence: Vec<String> = columns
                .iter()
                .filter_map(|column| {
                    zone_maps[&column.indices]
                        .as_ref()
                        .map(|zones| describe_zone(&column.path.parts().join("."), zones, index))
                })
                .collect();
            if evidence.is_empty() {
                "the filter cannot be true".to_string()
            } else {
                format!("the filter cannot be true ({})", evidence.join("; "))
            }
        });
        plan.skip(index, "statistics", reason);
        metrics.row_groups_pruned_statistics += 1;
    }
    Ok(())
}

/// Values of an IN list an explanation shows.
const SHOWN_VALUES: usize = 5;

/// Why the statistics stage skipped a row group, in the terms of one comparison — e.g.
/// `max(age)=35 <= 50` — when a top-level conjunct that is a plain comparison, IN list or
/// null test rules the row group out on its own. Each conjunct is evaluated over every
/// row group's zone map once per file, when a reason is first asked for: evaluating it
/// again for each skipped row group made the stage quadratic in row groups.
struct SkipReasons<'a> {
    /// The conjuncts on a column with a zone map.
    conjuncts: Vec<Conjunct<'a>>,
}

/// A conjunct on a column with a zone map: which row groups it may be true in, and what
/// naming one it rules out takes — each made when first asked for.
struct Conjunct<'a> {
    leaf: LeafPredicate,
    zones: &'a ZoneMaps,
    can_true: OnceCell<Vec<bool>>,
    words: OnceCell<Words<'a>>,
}

/// What naming the row groups a conjunct rules out takes, made once per conjunct: the
/// column's name, formatters of the zone map's bounds, and the condition's values as
/// text (a formatter made for each value of each row group showed in profiles of files
/// of thousands of row groups).
struct Words<'a> {
    name: String,
    mins: Option<ArrayFormatter<'a>>,
    maxes: Option<ArrayFormatter<'a>>,
    /// A comparison's literal, or the values an IN list shows; empty for other conditions.
    values: String,
}

/// Value `i` of `array` as explain output shows it (`NULL`, `?` if it has no text form).
fn text(array: &dyn Array, i: usize) -> String {
    ArrayFormatter::try_new(array, &bound_format()).map(|f| f.value(i).to_string()).unwrap_or_else(|_| "?".to_string())
}

fn bound_format() -> FormatOptions<'static> {
    FormatOptions::default().with_null("NULL")
}

impl<'a> Words<'a> {
    fn new(leaf: &LeafPredicate, zones: &'a ZoneMaps, column: &BoundColumn) -> Self {
        let listed = |values: Vec<String>, len: usize| {
            let mut shown = values;
            if len > SHOWN_VALUES {
                shown.push(format!("... {len} values in all"));
            }
            shown.join(", ")
        };
        let values = match leaf {
            LeafPredicate::Compare { term, literal, .. } if term.is_plain_column() => text(literal.as_ref(), 0),
            LeafPredicate::InList { term, items, negated: false } if term.is_plain_column() => {
                listed(items.iter().take(SHOWN_VALUES).map(|item| text(item.as_ref(), 0)).collect(), items.len())
            }
            LeafPredicate::InSet { term, set, negated: false } if term.is_plain_column() => {
                let values = set.values();
                listed((0..values.len().min(SHOWN_VALUES)).map(|i| text(values.as_ref(), i)).collect(), values.len())
            }
            _ => String::new(),
        };
        Self {
            name: column.path.parts().join("."),
            mins: ArrayFormatter::try_new(zones.mins.as_ref(), &bound_format()).ok(),
            maxes: ArrayFormatter::try_new(zones.maxes.as_ref(), &bound_format()).ok(),
            values,
        }
    }
}

impl<'a> SkipReasons<'a> {
    fn new(filter: &BoundExpr, zone_maps: &'a BTreeMap<Vec<usize>, Option<ZoneMaps>>) -> Self {
        let mut pending = vec![filter];
        let mut conjuncts = Vec::new();
        while let Some(next) = pending.pop() {
            match next {
                BoundExpr::And(left, right) => {
                    pending.push(right);
                    pending.push(left);
                }
                other => {
                    let leaf = LeafPredicate::analyse(other);
                    let zones = leaf.column().and_then(|column| zone_maps.get(&column.indices)?.as_ref());
                    if let Some(zones) = zones {
                        conjuncts.push(Conjunct { leaf, zones, can_true: OnceCell::new(), words: OnceCell::new() });
                    }
                }
            }
        }
        Self { conjuncts }
    }

    fn reason(&self, index: usize) -> Option<String> {
        for Conjunct { leaf, zones, can_true, words } in &self.conjuncts {
            let can_true = can_true.get_or_init(|| leaf.evaluate(Some(*zones), zones.len()).can_true);
            if index >= zones.len() || can_true[index] {
                continue;
            }
            let Some(column) = leaf.column() else { continue };
            let Words { name, mins, maxes, values } = words.get_or_init(|| Words::new(leaf, zones, column));
            let all_null =
                zones.null_counts.is_valid(index) && zones.null_counts.value(index) == zones.row_counts.value(index);
            if all_null {
                return Some(format!("all {} values of {name} are NULL", zones.row_counts.value(index)));
            }
            let bound = |formatter: &Option<ArrayFormatter<'_>>| {
                formatter.as_ref().map_or_else(|| "?".to_string(), |f| f.value(index).to_string())
            };
            let (min, max) = (bound(mins), bound(maxes));
            return Some(match leaf {
                LeafPredicate::Compare { term, op, .. } if term.is_plain_column() => {
                    let literal = values;
                    match op {
                        CompareOp::Gt => format!("max({name})={max} <= {literal}"),
                        CompareOp::GtEq => format!("max({name})={max} < {literal}"),
                        CompareOp::Lt => format!("min({name})={min} >= {literal}"),
                        CompareOp::LtEq => format!("min({name})={min} > {literal}"),
                        CompareOp::NotEq => format!("every {name} equals {literal} (min={min}, max={max})"),
                        _ => format!("{literal} is outside [min({name})={min}, max({name})={max}]"),
                    }
                }
                LeafPredicate::InList { term, negated: false, .. }
                | LeafPredicate::InSet { term, negated: false, .. }
                    if term.is_plain_column() =>
                {
                    // A long list is named by its first values and its length.
                    format!("none of ({values}) is inside [min({name})={min}, max({name})={max}]")
                }
                LeafPredicate::IsNull { negated: false, .. } => format!("null_count({name})=0"),
                _ => format!("a condition on {name} cannot hold for min({name})={min}, max({name})={max}"),
            });
        }
        None
    }
}
