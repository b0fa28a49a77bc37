//! Top-k that learns while it reads: the dynamic filter of DuckDB's Top-N and DataFusion's
//! dynamic filter pushdown. `ORDER BY key LIMIT k` is read in two passes (see
//! [`open_stream`](crate::reading::reader::open_stream)): the first decodes only the keys to
//! find the top rows, where they lie and `T`, the first key of the k-th row, the second
//! the other columns of those rows alone. The first pass visits row groups best bound first (smallest minimum for
//! `ASC`, largest maximum for `DESC`), in waves, and after each wave turns the running k-th
//! key into the predicate `key at least as good as T`; a row group whose statistics prove
//! that predicate false is not read, in that pass or the next. The predicate is evaluated
//! on the zone maps exactly as the planning's statistics stage evaluates a filter —
//! three-valued, with NULLs, NaN and truncated bounds — so skipping never drops a top row.
//! With a sorted key the first pass reads about one row group instead of all of them.
//!
//! The visiting order is a heuristic (any order is sound): row groups whose bound is
//! unknown go first.

use arrow::array::{Array, ArrayRef, new_null_array};
use arrow::compute::kernels::sort::sort_to_indices;
use arrow::compute::{SortOptions, concat};

use crate::filter::sort_key::SortKey;
use crate::filter::{BindOptions, BoundColumn, Expr, bind, resolve_column, spark_float_order};
use crate::format::opener::OpenedFile;
use crate::pruning::pruning_predicate::evaluate_on_zone_maps;
use crate::reading::scan_stream::ScanTask;
use crate::table::partition_values::PartitionValues;

/// Decides, from row group statistics, which row groups may hold a row at least as good
/// as a threshold of the first sort key.
pub(crate) struct ThresholdSkipper<'a> {
    files: &'a [OpenedFile],
    key: &'a SortKey,
    bind: &'a BindOptions,
    /// Per file, the key among the file's own columns. `None` — a partition column, a
    /// declared schema's column (mapped by name or id), or absent — means its row groups
    /// are always read.
    columns: Vec<Option<BoundColumn>>,
}

impl<'a> ThresholdSkipper<'a> {
    /// The skipper for `key` over `files`, whose columns `bind` resolves; a key among the
    /// `partitions` columns, or files mapped onto a `declared` schema, are always read.
    pub(crate) fn new(
        files: &'a [OpenedFile],
        key: &'a SortKey,
        bind: &'a BindOptions,
        partitions: Option<&PartitionValues>,
        declared: bool,
    ) -> Self {
        let root = key.column.parts()[0].as_str();
        let partition_key = partitions.is_some_and(|partitions| {
            partitions.schema.fields().iter().any(|f| match bind.case_sensitive {
                true => f.name() == root,
                false => f.name().eq_ignore_ascii_case(root),
            })
        });
        let columns = files
            .iter()
            .map(|file| match declared || partition_key {
                true => None,
                false => resolve_column(&file.schema, &key.column, bind).ok(),
            })
            .collect();
        Self { files, key, bind, columns }
    }

    /// `tasks` ordered best bound first; unchanged when the files' bounds do not share a type.
    pub(crate) fn best_first(&self, tasks: Vec<ScanTask>) -> Vec<ScanTask> {
        let bounds: Vec<Option<ArrayRef>> = self
            .files
            .iter()
            .zip(&self.columns)
            .map(|(file, column)| {
                let zones = file.row_group_zone_maps(column.as_ref()?).ok()??;
                Some(if self.key.descending { zones.maxes } else { zones.mins })
            })
            .collect();
        let Some(data_type) = bounds.iter().flatten().next().map(|b| b.data_type().clone()) else { return tasks };
        if bounds.iter().flatten().any(|b| b.data_type() != &data_type) {
            return tasks;
        }
        let unknown = new_null_array(&data_type, 1);
        let per_task: Vec<ArrayRef> = tasks
            .iter()
            .map(|task| match &bounds[task.file] {
                Some(bound) if task.row_group < bound.len() => bound.slice(task.row_group, 1),
                _ => unknown.clone(),
            })
            .collect();
        let refs: Vec<&dyn Array> = per_task.iter().map(|a| a.as_ref()).collect();
        let Ok(all) = concat(&refs) else { return tasks };
        let options = SortOptions { descending: self.key.descending, nulls_first: true };
        let Ok(order) = sort_to_indices(&spark_float_order(&all), Some(options), None) else { return tasks };
        let mut slots: Vec<Option<ScanTask>> = tasks.into_iter().map(Some).collect();
        order.values().iter().filter_map(|&i| slots[i as usize].take()).collect()
    }

    /// Per task, whether its row group may hold a row satisfying `predicate` (a condition on
    /// the key): `false` only where the statistics prove it cannot.
    pub(crate) fn may_satisfy(&self, tasks: &[ScanTask], predicate: &Expr) -> Vec<bool> {
        let mut per_file: Vec<Option<Vec<bool>>> = vec![None; self.files.len()];
        tasks
            .iter()
            .map(|task| {
                if self.columns[task.file].is_none() {
                    return true;
                }
                let file = &self.files[task.file];
                let possible = per_file[task.file].get_or_insert_with(|| self.row_groups_satisfying(file, predicate));
                possible.get(task.row_group).copied().unwrap_or(true)
            })
            .collect()
    }

    fn row_groups_satisfying(&self, file: &OpenedFile, predicate: &Expr) -> Vec<bool> {
        let row_groups = file.metadata.num_row_groups();
        let schema = crate::format::opener::filter_schema(&file.schema, file.metadata.file_metadata());
        let Ok(bound) = bind(predicate, &schema, self.bind) else { return vec![true; row_groups] };
        let zones = |column: &BoundColumn| file.row_group_zone_maps(column);
        match evaluate_on_zone_maps(&bound, row_groups, &zones) {
            Ok(possible) => possible.can_true,
            Err(_) => vec![true; row_groups],
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Float64Array, Int64Array, RecordBatch};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    use proptest::prelude::*;

    use super::*;
    use crate::filter::parse_filter;
    use crate::storage::Location;

    static CASE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// A file of `values` in row groups of `per_group` rows, opened.
    fn opened(name: &str, values: Vec<Option<f64>>, per_group: usize) -> OpenedFile {
        let dir = std::env::temp_dir().join(format!("pqsift_topk_threshold_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let ids = Int64Array::from((0..values.len() as i64).collect::<Vec<_>>());
        let batch =
            RecordBatch::try_from_iter([("x", Arc::new(Float64Array::from(values)) as _), ("id", Arc::new(ids) as _)])
                .unwrap();
        let properties = WriterProperties::builder().set_max_row_group_row_count(Some(per_group)).build();
        let mut writer =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(properties)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        OpenedFile::open(&Location::Local(path)).unwrap()
    }

    fn tasks(file: &OpenedFile) -> Vec<ScanTask> {
        (0..file.metadata.num_row_groups()).map(|rg| ScanTask::new(0, rg, None)).collect()
    }

    #[test]
    fn visits_the_best_bound_first_and_rules_out_by_statistics() {
        // 1,000 values written descending, 10 row groups: row group 9 holds 0..99.
        let files = [opened("desc.parquet", (0..1000).rev().map(|v| Some(v as f64)).collect(), 100)];
        let key = SortKey::parse("x", false, false).unwrap();
        let bind = BindOptions::default();
        let skipper = ThresholdSkipper::new(&files, &key, &bind, None, false);
        let order: Vec<usize> = skipper.best_first(tasks(&files[0])).iter().map(|t| t.row_group).collect();
        assert_eq!(order, (0..10).rev().collect::<Vec<_>>());
        let may = skipper.may_satisfy(&tasks(&files[0]), &parse_filter("x <= 150").unwrap());
        assert_eq!(may, [false, false, false, false, false, false, false, false, true, true]);
    }

    #[test]
    fn a_partition_key_or_a_declared_schema_is_never_ruled_out() {
        let files = [opened("any.parquet", (0..100).map(|v| Some(v as f64)).collect(), 10)];
        let key = SortKey::parse("x", false, false).unwrap();
        let bind = BindOptions::default();
        let skipper = ThresholdSkipper::new(&files, &key, &bind, None, true);
        assert!(skipper.may_satisfy(&tasks(&files[0]), &parse_filter("x <= 5").unwrap()).iter().all(|&m| m));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Whatever the values (NULLs, NaN, -0.0) and the threshold, a row group said not to
        /// hold a row satisfying `x <= t` holds none.
        #[test]
        fn never_rules_out_a_row_group_holding_a_satisfying_row(
            values in proptest::collection::vec(
                prop_oneof![Just(None), Just(Some(f64::NAN)), Just(Some(-0.0)), (-50i32..50).prop_map(|v| Some(f64::from(v)))],
                1..200,
            ),
            per_group in 1usize..40,
            threshold in -60i32..60,
            descending in any::<bool>(),
        ) {
            // A new name each case: the metadata cache must not see a rewritten file.
            let name = format!("prop-{}.parquet", CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            let files = [opened(&name, values.clone(), per_group)];
            let key = SortKey::parse("x", descending, false).unwrap();
            let bind = BindOptions::default();
            let skipper = ThresholdSkipper::new(&files, &key, &bind, None, false);
            let op = if descending { ">=" } else { "<=" };
            let may = skipper.may_satisfy(&tasks(&files[0]), &parse_filter(&format!("x {op} {threshold}")).unwrap());
            let t = f64::from(threshold);
            for (group, chunk) in values.chunks(per_group).enumerate() {
                // Spark's order: NaN above every number, so NaN >= t and never <= t.
                let holds = chunk.iter().flatten().any(|&v| if descending { v.is_nan() || v >= t } else { !v.is_nan() && v <= t });
                prop_assert!(may[group] || !holds, "row group {group} ruled out though it holds a row {op} {t}");
            }
        }
    }
}
