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
//! use pqsift::access_plan::FileAccessPlan;
//! use pqsift::filter::{bind, parse_filter, BindOptions};
//! use pqsift::metrics::PruningMetrics;
//! use pqsift::opener::OpenedFile;
//! use pqsift::row_group_filter::prune_by_statistics;
//!
//! let file = OpenedFile::open(&path).unwrap(); // ages 0..50 | 50..100
//! let filter = bind(&parse_filter("age >= 60").unwrap(), &file.schema, &BindOptions::default()).unwrap();
//! let mut plan = FileAccessPlan::scan_all(file.name(), &file.row_group_rows());
//! let mut metrics = PruningMetrics::default();
//! prune_by_statistics(&file, &filter, &mut plan, &mut metrics).unwrap();
//! assert_eq!(plan.surviving().collect::<Vec<_>>(), [1]);
//! assert_eq!(metrics.row_groups_pruned_statistics, 1);
//! assert!(plan.row_groups[0].reason.contains("age: min=0, max=49"));
//! ```

use std::collections::BTreeMap;

use crate::access_plan::FileAccessPlan;
use crate::bloom_filter::literal_guarantees;
use crate::error::Result;
use crate::filter::{BoundColumn, BoundExpr};
use crate::metrics::PruningMetrics;
use crate::opener::{OpenedFile, describe_zone};
use crate::pruning_predicate::{LeafPredicate, evaluate_tree};
use crate::zone_map::ZoneMaps;

/// Skips the row groups whose midpoint (first column chunk's start plus half the
/// compressed size) is outside `[offset, offset + length)`, so that byte-range splits of
/// one file read each row group exactly once.
pub fn prune_by_range(file: &OpenedFile, range: (u64, u64), plan: &mut FileAccessPlan, metrics: &mut PruningMetrics) {
    let (offset, length) = range;
    let end = offset.saturating_add(length);
    for (index, row_group) in file.metadata.row_groups().iter().enumerate() {
        let start = row_group
            .columns()
            .iter()
            .map(|c| c.byte_range().0)
            .min()
            .unwrap_or(0);
        let size: u64 = row_group.columns().iter().map(|c| c.byte_range().1).sum();
        let midpoint = start.saturating_add(size / 2);
        if !(offset..end).contains(&midpoint) && plan.row_groups[index].decision() != "skip" {
            plan.skip(index, "file range", format!("midpoint byte {midpoint} is outside [{offset}, {end})"));
            metrics.row_groups_pruned_range += 1;
        }
    }
}

/// Skips the surviving row groups where the filter cannot be true according to their
/// column chunk statistics, or where conjuncts on one column contradict each other.
pub fn prune_by_statistics(file: &OpenedFile, filter: &BoundExpr, plan: &mut FileAccessPlan, metrics: &mut PruningMetrics) -> Result<()> {
    let containers = file.metadata.num_row_groups();
    // Equalities / IN lists merged per column on AND paths: an empty set matches nothing.
    if let Some(empty) = literal_guarantees(filter).into_iter().find(|g| g.values.is_empty()) {
        let column = empty.column.path.parts().join(".");
        for index in plan.surviving().collect::<Vec<_>>() {
            plan.skip(index, "statistics", format!("the filter's equalities and IN lists on {column} have no value in common"));
            metrics.row_groups_pruned_statistics += 1;
        }
        return Ok(());
    }
    // Zone maps are read once per column.
    let mut zone_maps: BTreeMap<String, Option<ZoneMaps>> = BTreeMap::new();
    let mut columns: Vec<BoundColumn> = Vec::new();
    let possible = evaluate_tree(filter, &mut |leaf: &BoundExpr| {
        let leaf = LeafPredicate::analyse(leaf);
        let Some(column) = leaf.column() else { return Ok(leaf.evaluate(None, containers)) };
        let key = column.path.parts().join(".");
        if !zone_maps.contains_key(&key) {
            zone_maps.insert(key.clone(), file.row_group_zone_maps(column)?);
            columns.push(column.clone());
        }
        Ok(leaf.evaluate(zone_maps[&key].as_ref(), containers))
    })?;
    let surviving: Vec<usize> = plan.surviving().collect();
    for index in surviving {
        if possible.can_true[index] {
            continue;
        }
        let evidence: Vec<String> = columns
            .iter()
            .filter_map(|column| {
                let key = column.path.parts().join(".");
                zone_maps[&key].as_ref().map(|zones| describe_zone(&key, zones, index))
            })
            .collect();
        let reason = if evidence.is_empty() {
            "the filter cannot be true".to_string()
        } else {
            format!("the filter cannot be true ({})", evidence.join("; "))
        };
        plan.skip(index, "statistics", reason);
        metrics.row_groups_pruned_statistics += 1;
    }
    Ok(())
}
