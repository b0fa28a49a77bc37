//! Top-k that learns while it reads: the dynamic filter of DuckDB's Top-N and DataFusion's
//! dynamic filter pushdown. `ORDER BY key LIMIT k` is read in two passes (see
//! [`open_stream`](crate::reading::reader::open_stream)): the first decodes only the key to
//! find `T`, the key of the k-th row, the second the other columns of the rows at least as
//! good as `T`. The first pass visits row groups best bound first (smallest minimum for
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
        let Ok(bound) = bind(predicate, &file.schema, self.bind) else { return vec![true; row_groups] };
        let zones = |column: &BoundColumn| file.row_group_zone_maps(column);
        match evaluate_on_zone_maps(&bound, row_groups, &zones) {
            Ok(possible) => possible.can_true,
            Err(_) => vec![true; row_groups],
        }
    }
}
