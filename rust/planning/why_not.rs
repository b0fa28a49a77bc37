//! Why a row group was kept: per pruning stage, the parts of the filter the stage could not
//! use and why, in a few words — no statistics for a column, no min/max in this row group,
//! NaN may hide behind the bounds, a condition that is not an order-preserving function of
//! one column, no bloom filter, no page index — so that a user can change how files are
//! written. Values that simply overlap the filter's range are not a reason: the data may
//! match there.
//!
//! Each stage adds its notes where it already has what it needs (zone maps, bloom filter
//! offsets, page indexes): explaining costs no extra metadata read.
//!
//! ```
//! # let dir = std::env::temp_dir().join("pqsift_why_not_doc");
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("t.parquet");
//! # let batch = arrow::array::RecordBatch::try_from_iter([("f", std::sync::Arc::new(arrow::array::Float64Array::from(vec![0.1, 0.2])) as _)]).unwrap();
//! # let props = parquet::file::properties::WriterProperties::builder()
//! #     .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None).build();
//! # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
//! # w.write(&batch).unwrap(); w.close().unwrap();
//! use pqsift::filter::{bind, parse_filter, BindOptions};
//! use pqsift::format::opener::OpenedFile;
//! use pqsift::planning::access_plan::FileAccessPlan;
//! use pqsift::planning::metrics::PruningMetrics;
//! use pqsift::planning::row_group_filter::prune_by_statistics;
//!
//! // A file written without statistics.
//! let file = OpenedFile::open(&path.into()).unwrap();
//! let filter = bind(&parse_filter("f > 0.5").unwrap(), &file.schema, &BindOptions::default()).unwrap();
//! let mut plan = FileAccessPlan::scan_all(file.name(), &file.row_group_rows());
//! prune_by_statistics(&file, &filter, &mut plan, &mut PruningMetrics::default()).unwrap();
//! assert_eq!(plan.row_groups[0].notes, ["statistics: no min/max for f"]);
//! ```

use std::collections::BTreeMap;

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Float64Type};

use crate::filter::{BoundColumn, BoundExpr};
use crate::format::opener::{OpenedFile, in_type};
use crate::pruning::pruning_predicate::{LeafPredicate, order_breaking_function};
use crate::pruning::zone_map::ZoneMaps;

/// The leaves of a filter: everything below its ANDs, ORs and NOTs.
fn leaves(filter: &BoundExpr) -> Vec<&BoundExpr> {
    let mut found = Vec::new();
    let mut pending = vec![filter];
    while let Some(expr) = pending.pop() {
        match expr {
            BoundExpr::And(left, right) | BoundExpr::Or(left, right) => {
                pending.push(right);
                pending.push(left);
            }
            BoundExpr::Not(inner) => pending.push(inner),
            leaf => found.push(leaf),
        }
    }
    found
}

fn name(column: &BoundColumn) -> String {
    column.path.parts().join(".")
}

/// Why the statistics stage could not rule row groups out, from the zone maps it read
/// (`zone_maps`, keyed by column field indices; `None`: the column has none). Made once per file:
/// the leaves, where a float max is an inferred NaN and what the bounds alone would
/// decide are derived once and serve every row group.
pub(crate) struct StatisticsNotes<'a> {
    file: &'a OpenedFile,
    zone_maps: &'a BTreeMap<Vec<usize>, Option<ZoneMaps>>,
    leaves: Vec<(&'a BoundExpr, LeafPredicate)>,
    /// Per column: which containers' max is NaN only because NaN may hide.
    nan_inferred: BTreeMap<Vec<usize>, Vec<bool>>,
    /// Per leaf: which containers its bounds alone rule out, were NaN known absent
    /// (computed on first need).
    without_nan: Vec<Option<Vec<bool>>>,
}

impl<'a> StatisticsNotes<'a> {
    pub(crate) fn new(
        file: &'a OpenedFile,
        filter: &'a BoundExpr,
        zone_maps: &'a BTreeMap<Vec<usize>, Option<ZoneMaps>>,
    ) -> Self {
        let leaves: Vec<(&BoundExpr, LeafPredicate)> =
            leaves(filter).into_iter().map(|expr| (expr, LeafPredicate::analyse(expr))).collect();
        let nan_inferred = zone_maps
            .iter()
            .filter_map(|(indices, zones)| Some((indices.clone(), nan_inferred(zones.as_ref()?))))
            .collect();
        let without_nan = vec![None; leaves.len()];
        Self { file, zone_maps, leaves, nan_inferred, without_nan }
    }

    /// The notes for row group `index`.
    pub(crate) fn row_group(&mut self, index: usize) -> Vec<String> {
        let mut notes: Vec<String> = Vec::new();
        let mut add = |note: String| {
            if !notes.contains(&note) {
                notes.push(note);
            }
        };
        for position in 0..self.leaves.len() {
            let (expr, leaf) = &self.leaves[position];
            let Some(column) = leaf.column() else {
                if matches!(leaf, LeafPredicate::Unknown) {
                    let columns: Vec<String> = expr.columns().into_iter().map(name).collect();
                    if !columns.is_empty() {
                        let culprit = order_breaking_function(expr)
                            .map(|name| format!(" ({name} does not preserve order)"))
                            .unwrap_or_default();
                        add(format!(
                            "the condition on {} is not an order-preserving function of one column compared with constants{culprit}",
                            columns.join(", ")
                        ));
                    }
                }
                continue;
            };
            let column_name = name(column);
            match self.zone_maps.get(&column.indices) {
                None => {}
                Some(None) => add(match self.file.leaf(column) {
                    None => format!("no statistics for {column_name} (not a primitive column outside lists)"),
                    Some((_, field)) => format!("no statistics usable for {column_name} (type {})", field.data_type()),
                }),
                Some(Some(zones)) if index < zones.len() => {
                    let has_values = !(zones.null_counts.is_valid(index)
                        && zones.null_counts.value(index) == zones.row_counts.value(index));
                    // A float max made NaN because NaN may hide says nothing of the real max.
                    let inferred = self.nan_inferred.get(&column.indices).is_some_and(|flags| flags[index]);
                    let no_max = zones.maxes.is_null(index) || inferred;
                    if has_values && zones.mins.is_null(index) && no_max {
                        add(format!("no min/max for {column_name}"));
                    } else if inferred && self.ruled_out_without_nan(position, index) {
                        add(format!("NaN may hide in {column_name} (its statistics have no nan_count)"));
                    }
                }
                Some(Some(_)) => {}
            }
        }
        notes.into_iter().map(|note| format!("statistics: {note}")).collect()
    }

    /// Whether leaf `position` would rule row group `index` out if its column were known to
    /// hold no NaN.
    fn ruled_out_without_nan(&mut self, position: usize, index: usize) -> bool {
        if self.without_nan[position].is_none() {
            let (_, leaf) = &self.leaves[position];
            let ruled_out = leaf.column().and_then(|column| {
                let (leaf_index, field) = self.file.leaf(column)?;
                let zones = ZoneMaps::for_row_groups_assuming_no_nan(&self.file.metadata, leaf_index, &field).ok()?;
                let zones = in_type(zones, &column.data_type)?;
                Some(leaf.evaluate(Some(&zones), zones.len()).can_true.iter().map(|can| !can).collect())
            });
            self.without_nan[position] = Some(ruled_out.unwrap_or_default());
        }
        self.without_nan[position].as_ref().is_some_and(|flags| flags.get(index) == Some(&true))
    }
}

/// Per container: its max is NaN because the writer did not say whether it holds NaN.
fn nan_inferred(zones: &ZoneMaps) -> Vec<bool> {
    let none = vec![false; zones.len()];
    if !matches!(zones.maxes.data_type(), DataType::Float16 | DataType::Float32 | DataType::Float64) {
        return none;
    }
    let Ok(maxes) = arrow::compute::cast(&zones.maxes, &DataType::Float64) else { return none };
    let maxes = maxes.as_primitive::<Float64Type>();
    (0..zones.len()).map(|i| maxes.is_valid(i) && maxes.value(i).is_nan() && !zones.max_exact.value(i)).collect()
}
