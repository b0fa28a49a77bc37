//! TopN pruning (Databend's TopN pruner): for `ORDER BY key ... LIMIT k`, the row
//! groups and pages whose best value of the first sort key cannot make the top k are
//! skipped, across every file of the scan.
//!
//! A container (row group) whose every row the filter is proven to accept *guarantees*
//! its rows: each is at least as good as the container's worst bound (the min for a
//! descending key, the max for an ascending one). Taking guaranteed containers by worst
//! bound, best first, until they hold k rows gives a threshold `T`: k rows are at least as
//! good as `T`. A container whose best bound is strictly worse than `T` holds none of the
//! top k, and nor does a page (with the page index) whose best bound is. Ties are kept, so
//! the rows read always contain a valid answer whatever the later sort keys.
//!
//! Order is Spark's: NULLs first for ascending keys and last for descending ones unless
//! said otherwise, NaN greater than every number, -0.0 equal to 0.0. A float container
//! whose statistics do not rule NaN out has NaN as its max (see
//! [`zone_map`](crate::pruning::zone_map)); a container with unknown bounds or null counts
//! guarantees nothing and is never skipped.
//!
//! ```
//! # let dir = std::env::temp_dir().join("pqsift_topn_doc");
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("t.parquet");
//! # let batch = arrow::array::RecordBatch::try_from_iter([("ts", std::sync::Arc::new(arrow::array::Int64Array::from((0..100).collect::<Vec<i64>>())) as _)]).unwrap();
//! # let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(25)).build();
//! # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
//! # w.write(&batch).unwrap(); w.close().unwrap();
//! use pqsift::planning::scan::{Scan, ScanOptions};
//! use pqsift::filter::sort_key::{SortKey, TopN};
//!
//! // ts = 0..100 in four row groups of 25: the 10 latest are all in the last one.
//! let top_n = TopN { keys: vec![SortKey::new("ts", true)], limit: 10 };
//! let options = ScanOptions { top_n: Some(top_n), ..ScanOptions::default() };
//! let plan = Scan::new(vec![path], None, None, options).unwrap().plan().unwrap();
//! assert_eq!(plan.metrics.row_groups_pruned_topn, 3);
//! assert_eq!(plan.files[0].row_groups[0].reason, "best ts 24 is worse than 75, the worst of 10 rows guaranteed by 1 row group(s)");
//! ```

use std::cmp::Ordering;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, make_comparator, new_null_array};
use arrow::util::display::{ArrayFormatter, FormatOptions};

use crate::error::Result;
use crate::filter::sort_key::{SortKey, TopN};
use crate::filter::{BindOptions, BoundExpr, resolve_column, spark_float_order};
use crate::format::opener::{OpenedFile, in_type};
use crate::planning::access_plan::{FileAccessPlan, RowGroupAccess};
use crate::planning::metrics::PruningMetrics;
use crate::planning::page_filter::{PageBounds, page_row_ranges};
use crate::pruning::pruning_predicate::evaluate_on_zone_maps;
use crate::pruning::zone_map::ZoneMaps;
use crate::selection::RowSelection;

/// What one surviving row group says about the first sort key.
struct Container {
    file: usize,
    row_group: usize,
    /// Its best key value as a one-element array (null: a NULL key), `None` when unknown.
    best: Option<ArrayRef>,
    /// Rows it guarantees, each at least as good as `worst`.
    guaranteed: usize,
    worst: Option<ArrayRef>,
    /// The filter accepts every row of its row group.
    accepts_all: bool,
}

/// The files of a scan as TopN pruning sees them.
pub struct TopNInput<'a> {
    /// Opened files (`None`: skipped before its footer was read), in plan order.
    pub files: Vec<Option<Arc<OpenedFile>>>,
    /// Each file's filter, bound to it.
    pub filters: Vec<Option<BoundExpr>>,
    /// How columns resolve.
    pub bind: &'a BindOptions,
    /// Whether to narrow row groups to pages too.
    pub page_index: bool,
}

/// Skips the row groups, then the pages, of `plans` that cannot hold any of the top rows.
pub fn prune_top_n(
    top_n: &TopN,
    input: &TopNInput<'_>,
    plans: &mut [FileAccessPlan],
    metrics: &mut PruningMetrics,
) -> Result<()> {
    let Some(key) = top_n.keys.first() else { return Ok(()) };
    if top_n.limit == 0 {
        return Ok(());
    }
    let mut containers = Vec::new();
    let mut key_types = Vec::new();
    for (position, plan) in plans.iter().enumerate() {
        let (Some(file), Some(filter)) = (&input.files[position], input.filters.get(position)) else { continue };
        containers.extend(describe_file(position, file, filter.as_ref(), key, input.bind, plan)?);
        if let Ok(column) = resolve_column(&file.schema, &key.column, input.bind) {
            key_types.push(column.data_type);
        }
    }
    // Bounds of files of different key types cannot be compared: no pruning.
    if key_types.windows(2).any(|pair| pair[0] != pair[1]) {
        return Ok(());
    }
    let Some((threshold, from)) = threshold(&containers, top_n.limit, key) else { return Ok(()) };
    let shown = display(&threshold);
    let name = key.column.parts().join(".");
    for container in &containers {
        let Some(best) = &container.best else { continue };
        if worse(best, &threshold, key) {
            let reason = format!(
                "best {name} {} is worse than {shown}, the worst of {} rows guaranteed by {from} row group(s)",
                display(best),
                top_n.limit
            );
            plans[container.file].skip(container.row_group, "topn", reason);
            metrics.row_groups_pruned_topn += 1;
        }
    }
    if input.page_index {
        prune_pages(&containers, top_n.limit, key, input, plans, metrics)?;
    }
    Ok(())
}

/// The page stage: the row groups left, as their pages where the page index has them,
/// give a finer threshold; pages (and row groups without a page index) strictly worse
/// are left out.
fn prune_pages(
    row_groups: &[Container],
    limit: usize,
    key: &SortKey,
    input: &TopNInput<'_>,
    plans: &mut [FileAccessPlan],
    metrics: &mut PruningMetrics,
) -> Result<()> {
    // Per surviving row group: its pages (bounds and row ranges), or itself.
    let mut units: Vec<(&Container, Vec<PageBound>)> = Vec::new();
    for container in row_groups {
        let plan = &plans[container.file];
        if plan.row_groups[container.row_group].access == RowGroupAccess::Skip {
            continue;
        }
        let file = input.files[container.file].as_ref().expect("a planned file is open");
        units.push((
            container,
            page_containers(file, container, key, input.bind, &plan.row_groups[container.row_group].access)?,
        ));
    }
    let candidates = units.iter().flat_map(|(row_group, pages)| match pages.is_empty() {
        true => vec![*row_group],
        false => pages.iter().map(|(page, _)| page).collect(),
    });
    let Some((threshold, from)) = threshold(candidates, limit, key) else { return Ok(()) };
    let name = key.column.parts().join(".");
    for (row_group, pages) in &units {
        let plan = &mut plans[row_group.file];
        if pages.is_empty() {
            if row_group.best.as_ref().is_some_and(|best| worse(best, &threshold, key)) {
                let reason = format!(
                    "best {name} is worse than {}, the worst of {limit} rows guaranteed by {from} page(s)",
                    display(&threshold)
                );
                plan.skip(row_group.row_group, "topn", reason);
                metrics.row_groups_pruned_topn += 1;
            }
            continue;
        }
        let rows = plan.row_groups[row_group.row_group].rows;
        let kept: Vec<std::ops::Range<usize>> = pages
            .iter()
            .filter(|(page, _)| !page.best.as_ref().is_some_and(|best| worse(best, &threshold, key)))
            .map(|(_, range)| range.clone())
            .collect();
        if kept.len() == pages.len() {
            continue;
        }
        let selection = RowSelection::from_ranges(&kept, rows)?;
        let (selection, before) = match &plan.row_groups[row_group.row_group].access {
            RowGroupAccess::Skip => continue,
            RowGroupAccess::Scan => (selection, rows),
            RowGroupAccess::Selection(current) => (current.intersection(&selection)?, current.selected_count()),
        };
        let after = selection.selected_count();
        metrics.topn_rows_pruned += (before - after) as u64;
        let reason = format!(
            "{} of {} pages can hold a top row: the others' best {name} is worse than {}, the worst of {limit} rows guaranteed by {from} page(s)",
            kept.len(),
            pages.len(),
            display(&threshold)
        );
        if after == 0 {
            plan.skip(row_group.row_group, "topn", reason);
            metrics.row_groups_pruned_topn += 1;
        } else if after < before {
            plan.set(row_group.row_group, RowGroupAccess::Selection(selection), "topn", reason);
        }
    }
    Ok(())
}

/// A page of a row group as a zone-map container, with the rows it holds.
type PageBound = (Container, std::ops::Range<usize>);

/// The pages of a row group as containers with their row ranges (empty: no page index,
/// nor bounds in the key's page headers). Pages guarantee rows only when the row group is
/// read whole and the filter accepts all.
fn page_containers(
    file: &OpenedFile,
    row_group: &Container,
    key: &SortKey,
    bind: &BindOptions,
    access: &RowGroupAccess,
) -> Result<Vec<PageBound>> {
    let Ok(column) = resolve_column(&file.schema, &key.column, bind) else { return Ok(Vec::new()) };
    let Some((leaf, field)) = file.leaf(&column) else { return Ok(Vec::new()) };
    let index = row_group.row_group;
    // A file without a page index: the bounds in the key's page headers, where it has them.
    let Some(pages) = PageBounds::of(file, || vec![(index, leaf)])? else { return Ok(Vec::new()) };
    let Some(zones) = ZoneMaps::for_pages_in(&file.metadata, pages.index(), index, leaf, &field)
        .ok()
        .flatten()
        .and_then(|zones| in_type(zones, &column.data_type))
    else {
        return Ok(Vec::new());
    };
    let zones = in_spark_order(zones);
    let rows = file.metadata.row_group(index).num_rows().max(0) as usize;
    let Ok(ranges) = page_row_ranges(&zones, rows) else { return Ok(Vec::new()) };
    let whole = row_group.accepts_all && *access == RowGroupAccess::Scan;
    Ok(ranges
        .into_iter()
        .enumerate()
        .map(|(page, range)| {
            let (best, worst) = bounds(&zones, page, key);
            let guaranteed = if whole && worst.is_some() { range.len() } else { 0 };
            let container = Container {
                file: row_group.file,
                row_group: index,
                best,
                guaranteed,
                worst,
                accepts_all: row_group.accepts_all,
            };
            (container, range)
        })
        .collect())
}

/// The surviving row groups of one file, with their bounds on `key`.
fn describe_file(
    position: usize,
    file: &OpenedFile,
    filter: Option<&BoundExpr>,
    key: &SortKey,
    bind: &BindOptions,
    plan: &FileAccessPlan,
) -> Result<Vec<Container>> {
    let surviving: Vec<usize> = plan.surviving().collect();
    let unknown =
        |row_group| Container { file: position, row_group, best: None, guaranteed: 0, worst: None, accepts_all: false };
    let Ok(column) = resolve_column(&file.schema, &key.column, bind) else {
        return Ok(surviving.into_iter().map(unknown).collect());
    };
    let Some(zones) = file.row_group_zone_maps(&column)? else {
        return Ok(surviving.into_iter().map(unknown).collect());
    };
    let zones = in_spark_order(zones);
    // Row groups whose every row the filter accepts: it cannot be false and none of its
    // columns is NULL there (a NULL input could make it NULL).
    let accepts_all: Vec<bool> = match filter {
        None => vec![true; zones.len()],
        Some(filter) => {
            let columns = filter.columns();
            let mut sources = Vec::new();
            for column in &columns {
                sources.push((column.path.clone(), file.row_group_zone_maps(column)?));
            }
            let source = |c: &crate::filter::BoundColumn| -> Result<Option<ZoneMaps>> {
                Ok(sources.iter().find(|(path, _)| *path == c.path).and_then(|(_, zones)| zones.clone()))
            };
            let possible = evaluate_on_zone_maps(filter, zones.len(), &source)?;
            (0..zones.len())
                .map(|i| {
                    !possible.can_false[i]
                        && sources.iter().all(|(_, z)| {
                            z.as_ref().is_some_and(|z| z.null_counts.is_valid(i) && z.null_counts.value(i) == 0)
                        })
                })
                .collect()
        }
    };
    Ok(surviving
        .into_iter()
        .map(|row_group| {
            let (best, worst) = bounds(&zones, row_group, key);
            let rows = plan.row_groups[row_group].selected_rows();
            let guaranteed = if accepts_all[row_group] && worst.is_some() { rows } else { 0 };
            Container { file: position, row_group, best, guaranteed, worst, accepts_all: accepts_all[row_group] }
        })
        .collect())
}

/// The best and worst key values of container `i` (`None`: unknown), NULLs placed as the
/// key says.
fn bounds(zones: &ZoneMaps, i: usize, key: &SortKey) -> (Option<ArrayRef>, Option<ArrayRef>) {
    let null = || new_null_array(zones.mins.data_type(), 1);
    let rows = zones.row_counts.value(i);
    let nulls = zones.null_counts.is_valid(i).then(|| zones.null_counts.value(i));
    if nulls == Some(rows) {
        return (Some(null()), Some(null()));
    }
    let (best, worst) = if key.descending { (&zones.maxes, &zones.mins) } else { (&zones.mins, &zones.maxes) };
    let value = |bounds: &ArrayRef| bounds.is_valid(i).then(|| bounds.slice(i, 1));
    match nulls {
        Some(0) => (value(best), value(worst)),
        // NULLs first: the best is NULL; the values are the worst.
        Some(_) if key.nulls_first => (Some(null()), value(worst)),
        Some(_) => (value(best), Some(null())),
        None if key.nulls_first => (Some(null()), None),
        None => (value(best), None),
    }
}

/// The worst value of the best `limit` guaranteed rows, and how many row groups gave it.
fn threshold<'a>(
    containers: impl IntoIterator<Item = &'a Container>,
    limit: usize,
    key: &SortKey,
) -> Option<(ArrayRef, usize)> {
    let mut guaranteed: Vec<(&ArrayRef, usize)> = containers
        .into_iter()
        .filter(|c| c.guaranteed > 0)
        .filter_map(|c| Some((c.worst.as_ref()?, c.guaranteed)))
        .collect();
    guaranteed.sort_by(|a, b| compare(a.0, b.0, key));
    let mut rows = 0;
    for (used, (worst, count)) in guaranteed.iter().enumerate() {
        rows += count;
        if rows >= limit {
            return Some((Arc::clone(worst), used + 1));
        }
    }
    None
}

/// Output order of two one-element key values (`Less`: `a` comes first).
fn compare(a: &ArrayRef, b: &ArrayRef, key: &SortKey) -> Ordering {
    match make_comparator(a.as_ref(), b.as_ref(), key.options()) {
        Ok(comparator) => comparator(0, 0),
        Err(_) => Ordering::Equal,
    }
}

/// `a` comes strictly after `b`.
fn worse(a: &ArrayRef, b: &ArrayRef, key: &SortKey) -> bool {
    compare(a, b, key) == Ordering::Greater
}

/// Bounds in Spark's order under Arrow's total order (-0.0 as 0.0, one NaN).
fn in_spark_order(zones: ZoneMaps) -> ZoneMaps {
    ZoneMaps { mins: spark_float_order(&zones.mins), maxes: spark_float_order(&zones.maxes), ..zones }
}

fn display(value: &ArrayRef) -> String {
    let options = FormatOptions::default().with_null("NULL");
    ArrayFormatter::try_new(value.as_ref(), &options).map_or_else(|_| "?".to_string(), |f| f.value(0).to_string())
}
