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
//! Where a row group's page statistics (its page index, or a local file's page headers)
//! show the key sorted within it, the same runs on its pages: each page of the key is a
//! part of the read of its own, visited in order of its bound, and ruled out by its page
//! statistics. With a sorted key the first pass reads a page or two per thread instead of
//! every row group.
//!
//! The visiting order is a heuristic (any order is sound): parts whose bound is unknown go
//! first.

use std::cmp::Ordering;
use std::collections::{HashMap, VecDeque};
use std::ops::Range;

use arrow::array::{Array, ArrayRef, make_comparator, new_null_array};
use arrow::compute::kernels::sort::sort_to_indices;
use arrow::compute::{SortOptions, concat};

use crate::filter::sort_key::SortKey;
use crate::filter::{BindOptions, BoundColumn, Expr, bind, resolve_column, spark_float_order};
use crate::format::opener::{OpenedFile, in_type};
use crate::planning::page_filter::{PageBounds, page_row_ranges};
use crate::pruning::pruning_predicate::{ZoneSource, evaluate_on_zone_maps};
use crate::pruning::zone_map::ZoneMaps;
use crate::reading::scan_stream::ScanTask;
use crate::selection::RowSelection;
use crate::table::partition_values::PartitionValues;
use crate::table::schema_adapter::find_field;

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
    /// Per file, the key's row group zone maps (`None`: unknown), made once for the visiting
    /// order and the byte floor.
    key_zones: Vec<Option<ZoneMaps>>,
    /// The key's page statistics in the row groups split into pages, by (file, row group).
    key_pages: HashMap<(usize, usize), ZoneMaps>,
    /// The most rows a part of the next wave reads (see [`next_wave`](Self::next_wave)).
    part_rows: usize,
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
        let partition_key = partitions
            .is_some_and(|partitions| find_field(partitions.schema.fields(), root, bind.case_sensitive).is_some());
        let columns = files
            .iter()
            .map(|file| match declared || partition_key {
                true => None,
                false => resolve_column(&file.schema, &key.column, bind).ok(),
            })
            .collect::<Vec<Option<BoundColumn>>>();
        let key_zones = files
            .iter()
            .zip(&columns)
            .map(|(file, column)| file.row_group_zone_maps(column.as_ref()?).ok().flatten())
            .collect();
        Self { files, key, bind, columns, key_zones, key_pages: HashMap::new(), part_rows: HEAD_ROWS }
    }

    /// The key's compressed bytes the first pass reads whatever threshold it learns: those
    /// of the rows of `tasks` in row groups whose bound on the key is unknown (no
    /// statistics, as parquet-java writes none for INT96) while a row holds a key, which no
    /// threshold rules out — in proportion to the rows a task reads of its row group. A
    /// floor of the first pass's reading (its filter's columns and the other row groups
    /// come on top): a read bounded below it need not start.
    pub(crate) fn unskippable_key_bytes(&self, tasks: &[ScanTask]) -> u64 {
        let mut bytes = 0.0;
        for (index, (file, column)) in self.files.iter().zip(&self.columns).enumerate() {
            let (Some(column), Some(zones)) = (column, &self.key_zones[index]) else { continue };
            let Some((leaf, _)) = file.leaf(column) else { continue };
            let bounds = if self.key.descending { &zones.maxes } else { &zones.mins };
            for task in tasks.iter().filter(|task| task.file == index && task.row_group < zones.len()) {
                let at = task.row_group;
                let rows = zones.row_counts.value(at);
                let all_null = zones.null_counts.is_valid(at) && zones.null_counts.value(at) >= rows;
                if bounds.is_valid(at) || all_null || rows == 0 {
                    continue;
                }
                let read = match task.rows(rows as usize) {
                    Ok(Some(selection)) => selection.selected_count() as u64,
                    Ok(None) => rows,
                    Err(_) => 0,
                };
                let chunk = file.metadata.row_group(at).column(leaf).compressed_size().max(0) as f64;
                bytes += chunk * read as f64 / rows as f64;
            }
        }
        bytes as u64
    }

    /// The parts of `tasks` the first pass reads, each task whole, best bound first (its
    /// row group's); unordered when the bounds do not share a type. A part is split into
    /// its pages when a wave draws it (see [`next_wave`](Self::next_wave)).
    pub(crate) fn parts(&self, tasks: Vec<ScanTask>) -> VecDeque<KeyPart> {
        let row_group_bounds: Vec<Option<&ArrayRef>> = self
            .key_zones
            .iter()
            .map(|zones| zones.as_ref().map(|zones| if self.key.descending { &zones.maxes } else { &zones.mins }))
            .collect();
        let bounds: Vec<Option<ArrayRef>> = tasks
            .iter()
            .map(|task| match &row_group_bounds[task.file] {
                Some(bound) if task.row_group < bound.len() => Some(bound.slice(task.row_group, 1)),
                _ => None,
            })
            .collect();
        let parts: Vec<KeyPart> = tasks.into_iter().map(|task| KeyPart { task, extent: Extent::Whole }).collect();
        let order = self.best_first(&bounds).unwrap_or_else(|| (0..parts.len()).collect());
        let mut slots: Vec<Option<KeyPart>> = parts.into_iter().map(Some).collect();
        order.into_iter().filter_map(|i| slots[i].take()).collect()
    }

    /// The order of `bounds` (one value each; `None`: unknown, first), best first; `None`
    /// when they do not share a type.
    fn best_first(&self, bounds: &[Option<ArrayRef>]) -> Option<Vec<usize>> {
        let data_type = bounds.iter().flatten().next().map(|b| b.data_type().clone())?;
        if bounds.iter().flatten().any(|b| b.data_type() != &data_type) {
            return None;
        }
        let unknown = new_null_array(&data_type, 1);
        let per_part: Vec<&dyn Array> = bounds.iter().map(|b| b.as_ref().unwrap_or(&unknown).as_ref()).collect();
        let all = concat(&per_part).ok()?;
        let options = SortOptions { descending: self.key.descending, nulls_first: true };
        let order = sort_to_indices(&spark_float_order(&all), Some(options), None).ok()?;
        Some(order.values().iter().map(|&i| i as usize).collect())
    }

    /// The next `size` parts to read, from the front of `remaining`. A row group drawn
    /// whole whose key is sorted within it (see [`sorted_pages`](Self::sorted_pages)) is
    /// split into a part per page of the key, best bound first, put back in front: its best
    /// page shares the row group's bound, the best left, so that a sorted key's best rows
    /// are read before the rest of their row group. Split only when drawn, so that row
    /// groups the threshold rules out first cost no page statistics.
    ///
    /// A row group (or a range of its rows) larger than twice the wave's part size is cut:
    /// its head read now, the rest put back in front. The part size starts at
    /// [`HEAD_ROWS`] and doubles with each wave, so that the rows read double too: the first
    /// wave, with no threshold to read with, reads a little of each of its row groups, and
    /// each later wave reads with the threshold of twice as many rows before it — so the
    /// rows that pass it, scattered over the pages of the filter's other columns, stay few.
    pub(crate) fn next_wave(&mut self, remaining: &mut VecDeque<KeyPart>, size: usize) -> Vec<KeyPart> {
        let part_rows = self.part_rows;
        self.part_rows = part_rows.saturating_mul(2);
        let mut wave = Vec::with_capacity(size);
        let mut rests = Vec::new();
        while wave.len() < size {
            let Some(part) = remaining.pop_front() else { break };
            if matches!(part.extent, Extent::Whole)
                && let Some(pages) = self.split(&part.task)
            {
                for page in pages.into_iter().rev() {
                    remaining.push_front(page);
                }
                continue;
            }
            match self.head_and_rest(&part, part_rows) {
                Some((head, rest)) => {
                    wave.push(head);
                    rests.push(rest);
                }
                None => wave.push(part),
            }
        }
        for rest in rests.into_iter().rev() {
            remaining.push_front(rest);
        }
        wave
    }

    /// The first `rows` rows of `part` (its row group whole, or a range of it) as a part,
    /// and the others as another, where they are at least as many.
    fn head_and_rest(&self, part: &KeyPart, rows: usize) -> Option<(KeyPart, KeyPart)> {
        let task = &part.task;
        if task.selection.is_some() || task.window.is_some() {
            return None;
        }
        let range = match &part.extent {
            Extent::Whole => {
                0..usize::try_from(self.files[task.file].metadata.row_group(task.row_group).num_rows()).ok()?
            }
            Extent::Rows(range) => range.clone(),
            Extent::Page(..) => return None,
        };
        if range.len() < rows.saturating_mul(2) {
            return None;
        }
        let cut = range.start + rows;
        let piece = |rows: Range<usize>| KeyPart { task: task.clone(), extent: Extent::Rows(rows) };
        Some((piece(range.start..cut), piece(cut..range.end)))
    }

    /// `task` as a part per page of the key (those its selection reads), best bound first,
    /// where the key is sorted within its row group; its page statistics kept for
    /// [`parts_may_satisfy`](Self::parts_may_satisfy).
    fn split(&mut self, task: &ScanTask) -> Option<Vec<KeyPart>> {
        let (zones, ranges) = self.sorted_pages(task)?;
        let bounds = if self.key.descending { &zones.maxes } else { &zones.mins };
        let bounds: Vec<Option<ArrayRef>> = (0..bounds.len()).map(|page| Some(bounds.slice(page, 1))).collect();
        let order = self.best_first(&bounds)?;
        let parts = order
            .into_iter()
            .filter(|&page| match &task.selection {
                Some(selection) => {
                    let rows = &ranges[page];
                    selection.slice(rows.start, rows.len()).is_ok_and(|s| s.selects_any())
                }
                None => true,
            })
            .map(|page| KeyPart { task: task.clone(), extent: Extent::Page(page, ranges[page].clone()) })
            .collect::<Vec<_>>();
        // A selection no page holds (never planned) is read as it is.
        if parts.is_empty() {
            return None;
        }
        self.key_pages.insert((task.file, task.row_group), zones);
        Some(parts)
    }

    /// The key's page statistics in `task`'s row group, and each page's rows, where they
    /// show the key sorted there: every page bounded (minimum ascending, maximum
    /// descending), the bounds in order one way or the other, the first and last apart. An
    /// unsorted key's pages all span about the same values: split, they would prune
    /// nothing and cost a read each.
    fn sorted_pages(&self, task: &ScanTask) -> Option<(ZoneMaps, Vec<Range<usize>>)> {
        if task.window.is_some() {
            return None;
        }
        let file = &self.files[task.file];
        let zones = self.key_page_zones(task)?;
        let bounds = spark_float_order(if self.key.descending { &zones.maxes } else { &zones.mins });
        if bounds.len() < 2 || bounds.null_count() > 0 {
            return None;
        }
        let compare = make_comparator(bounds.as_ref(), bounds.as_ref(), SortOptions::default()).ok()?;
        let steps: Vec<Ordering> = (1..bounds.len()).map(|i| compare(i - 1, i)).collect();
        // In order one way or the other, and not all alike (pages that all span the same
        // values have nothing to tell apart).
        let sorted = (steps.iter().all(|&o| o != Ordering::Greater) || steps.iter().all(|&o| o != Ordering::Less))
            && compare(0, bounds.len() - 1) != Ordering::Equal;
        let rows = usize::try_from(file.metadata.row_group(task.row_group).num_rows()).ok()?;
        let ranges = page_row_ranges(&zones, rows).ok()?;
        sorted.then_some((zones, ranges))
    }

    /// The key's page statistics in `task`'s row group, from the pages' bounds as the
    /// planning's page stage finds them: the file's page index, or for a local file written
    /// without one (pyarrow's default), its page headers.
    fn key_page_zones(&self, task: &ScanTask) -> Option<ZoneMaps> {
        let column = self.columns[task.file].as_ref()?;
        let file = &self.files[task.file];
        let (leaf, field) = file.leaf(column)?;
        let bounds = PageBounds::of(file, || vec![(task.row_group, leaf)]).ok()??;
        let zones = ZoneMaps::for_pages_in(&file.metadata, bounds.index(), task.row_group, leaf, &field).ok()??;
        in_type(zones, &column.data_type)
    }

    /// The skipper that never cuts a row group into ranges of rows (see
    /// [`next_wave`](Self::next_wave)): without a filter, a threshold has no other column's
    /// decoding to spare, and smaller waves would only cost.
    pub(crate) fn without_cuts(mut self) -> Self {
        self.part_rows = usize::MAX;
        self
    }

    /// Per part, whether it may hold a row satisfying `predicate` (a condition on the key):
    /// `false` only where the statistics of its row group, or of its page, prove it cannot.
    pub(crate) fn parts_may_satisfy(&self, parts: &[KeyPart], predicate: &Expr) -> Vec<bool> {
        let mut row_groups: Vec<Option<Option<Vec<bool>>>> = vec![None; self.files.len()];
        let mut pages: HashMap<(usize, usize), Option<Vec<bool>>> = HashMap::new();
        parts
            .iter()
            .map(|part| {
                let (file, row_group) = part.row_group();
                let Some(key) = &self.columns[file] else { return true };
                let opened = &self.files[file];
                let in_row_group = row_groups[file].get_or_insert_with(|| {
                    let zones = |column: &BoundColumn| opened.row_group_zone_maps(column);
                    self.satisfying(opened, opened.metadata.num_row_groups(), &zones, predicate)
                });
                let may = |possible: &Option<Vec<bool>>, at: usize| {
                    possible.as_ref().and_then(|possible| possible.get(at).copied()).unwrap_or(true)
                };
                if !may(in_row_group, row_group) {
                    return false;
                }
                let Extent::Page(page, _) = &part.extent else { return true };
                let in_pages = pages.entry((file, row_group)).or_insert_with(|| {
                    let key_pages = self.key_pages.get(&(file, row_group))?;
                    let zones = |column: &BoundColumn| Ok((column.indices == key.indices).then(|| key_pages.clone()));
                    self.satisfying(opened, key_pages.len(), &zones, predicate)
                });
                may(in_pages, *page)
            })
            .collect()
    }

    /// Per container of `file` (its row groups, or one row group's pages; `containers` of
    /// them, whose zone maps `zones` gives), whether `predicate` can be true there; `None`
    /// where it cannot tell.
    fn satisfying(
        &self,
        file: &OpenedFile,
        containers: usize,
        zones: &dyn ZoneSource,
        predicate: &Expr,
    ) -> Option<Vec<bool>> {
        let schema = crate::format::opener::filter_schema(&file.schema, file.metadata.file_metadata());
        let bound = bind(predicate, &schema, self.bind).ok()?;
        Some(evaluate_on_zone_maps(&bound, containers, zones).ok()?.can_true)
    }
}

/// A part of the first pass's read (see [`ThresholdSkipper::parts`] and
/// [`next_wave`](ThresholdSkipper::next_wave)): a task whole, or the rows of one page of
/// the key's column in the task's row group.
#[derive(Debug, Clone)]
pub(crate) struct KeyPart {
    task: ScanTask,
    extent: Extent,
}

/// What of its task a [`KeyPart`] reads.
#[derive(Debug, Clone)]
enum Extent {
    /// All its rows.
    Whole,
    /// The rows of one page of the key: its index among the key's pages, and its rows.
    Page(usize, Range<usize>),
    /// A range of rows without statistics of its own: a row group cut by
    /// [`next_wave`](ThresholdSkipper::next_wave).
    Rows(Range<usize>),
}

/// The rows a part of the first wave reads at most (about a decoded batch); see
/// [`ThresholdSkipper::next_wave`].
const HEAD_ROWS: usize = 65_536;

impl KeyPart {
    /// Whether the part is one page of a row group read in parts.
    pub(crate) fn is_page(&self) -> bool {
        matches!(self.extent, Extent::Page(..))
    }

    /// Its (file, row group).
    pub(crate) fn row_group(&self) -> (usize, usize) {
        (self.task.file, self.task.row_group)
    }
}

/// The tasks that read `parts`: a whole part's task as it is, and one task per row group
/// for its pages, selecting their rows (within the task's own selection).
pub(crate) fn tasks_reading(parts: Vec<KeyPart>, files: &[OpenedFile]) -> crate::error::Result<Vec<ScanTask>> {
    let mut tasks: Vec<ScanTask> = Vec::with_capacity(parts.len());
    let mut pages: Vec<Vec<Range<usize>>> = Vec::with_capacity(parts.len());
    let mut task_of: HashMap<(usize, usize), usize> = HashMap::new();
    for part in parts {
        let (Extent::Page(_, rows) | Extent::Rows(rows)) = part.extent else {
            tasks.push(part.task);
            pages.push(Vec::new());
            continue;
        };
        let at = *task_of.entry((part.task.file, part.task.row_group)).or_insert_with(|| {
            tasks.push(part.task);
            pages.push(Vec::new());
            tasks.len() - 1
        });
        pages[at].push(rows);
    }
    for (task, mut ranges) in tasks.iter_mut().zip(pages) {
        if ranges.is_empty() {
            continue;
        }
        ranges.sort_unstable_by_key(|rows| rows.start);
        let row_count = usize::try_from(files[task.file].metadata.row_group(task.row_group).num_rows()).unwrap_or(0);
        let in_pages = RowSelection::from_ranges(&ranges, row_count)?;
        task.selection = Some(match &task.selection {
            Some(selection) => selection.intersection(&in_pages)?,
            None => in_pages,
        });
    }
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Float64Array, Int64Array, RecordBatch};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use proptest::prelude::*;

    use super::*;
    use crate::filter::parse_filter;
    use crate::storage::Location;

    static CASE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// A file of `values` in row groups of `per_group` rows, opened.
    fn opened(name: &str, values: Vec<Option<f64>>, per_group: usize) -> OpenedFile {
        opened_in_pages(name, values, per_group, usize::MAX)
    }

    /// The same, in pages of at most `per_page` rows, with a page index.
    fn opened_in_pages(name: &str, values: Vec<Option<f64>>, per_group: usize, per_page: usize) -> OpenedFile {
        let dir = std::env::temp_dir().join(format!("pqsift_topk_threshold_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let ids = Int64Array::from((0..values.len() as i64).collect::<Vec<_>>());
        let batch =
            RecordBatch::try_from_iter([("x", Arc::new(Float64Array::from(values)) as _), ("id", Arc::new(ids) as _)])
                .unwrap();
        let properties = WriterProperties::builder()
            .set_max_row_group_row_count(Some(per_group))
            .set_data_page_row_count_limit(per_page)
            .set_write_batch_size(per_page.min(1024))
            .set_statistics_enabled(EnabledStatistics::Page)
            .build();
        let mut writer =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(properties)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        OpenedFile::open(&Location::Local(path)).unwrap()
    }

    fn page_of(part: &KeyPart) -> usize {
        match part.extent {
            Extent::Page(page, _) => page,
            _ => panic!("not a page: {part:?}"),
        }
    }

    fn tasks(file: &OpenedFile) -> Vec<ScanTask> {
        (0..file.metadata.num_row_groups()).map(|rg| ScanTask::new(0, rg, None)).collect()
    }

    /// Each row group of `file` whole, in order.
    fn whole(file: &OpenedFile) -> Vec<KeyPart> {
        tasks(file).into_iter().map(|task| KeyPart { task, extent: Extent::Whole }).collect()
    }

    /// Keys: NULLs, NaN, -0.0 and whole numbers in -50..50.
    fn keys() -> impl Strategy<Value = Vec<Option<f64>>> {
        proptest::collection::vec(
            prop_oneof![
                Just(None),
                Just(Some(f64::NAN)),
                Just(Some(-0.0)),
                (-50i32..50).prop_map(|v| Some(f64::from(v)))
            ],
            1..200,
        )
    }

    /// Whether one of `values` meets `x >= t` (descending) or `x <= t`, in Spark's order:
    /// NaN above every number, so NaN >= t and never <= t.
    fn holds(values: &[Option<f64>], descending: bool, t: f64) -> bool {
        values.iter().flatten().any(|&v| if descending { v.is_nan() || v >= t } else { !v.is_nan() && v <= t })
    }

    #[test]
    fn visits_the_best_bound_first_and_rules_out_by_statistics() {
        // 1,000 values written descending, 10 row groups: row group 9 holds 0..99.
        let files = [opened("desc.parquet", (0..1000).rev().map(|v| Some(v as f64)).collect(), 100)];
        let key = SortKey::parse("x", false, false).unwrap();
        let bind = BindOptions::default();
        let mut skipper = ThresholdSkipper::new(&files, &key, &bind, None, false);
        let mut remaining = skipper.parts(tasks(&files[0]));
        let parts = skipper.next_wave(&mut remaining, 10);
        assert!(parts.iter().all(|part| !part.is_page()), "one page per row group: nothing to split");
        let order: Vec<usize> = parts.iter().map(|part| part.row_group().1).collect();
        assert_eq!(order, (0..10).rev().collect::<Vec<_>>());
        let may = skipper.parts_may_satisfy(&whole(&files[0]), &parse_filter("x <= 150").unwrap());
        assert_eq!(may, [false, false, false, false, false, false, false, false, true, true]);
    }

    #[test]
    fn a_sorted_key_is_visited_page_by_page() {
        // 0..1000 ascending in row groups of 500, pages of 100: page 4 of row group 1 holds
        // 900..999.
        let files = [opened_in_pages("sorted-pages.parquet", (0..1000).map(|v| Some(v as f64)).collect(), 500, 100)];
        let key = SortKey::parse("x", true, false).unwrap();
        let bind = BindOptions::default();
        let mut skipper = ThresholdSkipper::new(&files, &key, &bind, None, false);
        let mut remaining = skipper.parts(tasks(&files[0]));
        assert!(remaining.iter().all(|part| !part.is_page()), "split only when drawn");
        // Descending, the largest maximum first: row group 1, split into its pages.
        let wave = skipper.next_wave(&mut remaining, 3);
        let pages: Vec<(usize, usize)> = wave.iter().map(|part| (part.row_group().1, page_of(part))).collect();
        assert_eq!(pages, [(1, 4), (1, 3), (1, 2)]);
        // Pages read in one wave are one task, selecting their rows.
        let read = tasks_reading(wave, &files).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].selection.as_ref().unwrap().selected_ranges(), [200..500]);
        // Left: pages 1 and 0 of row group 1, then row group 0 whole. `x >= 650` can hold
        // only on page 1 (600..699).
        let left: Vec<KeyPart> = remaining.iter().cloned().collect();
        assert_eq!(left.len(), 3);
        let may = skipper.parts_may_satisfy(&left, &parse_filter("x >= 650").unwrap());
        assert_eq!(may, [true, false, false]);
    }

    #[test]
    fn the_first_wave_reads_the_head_of_a_large_row_group() {
        // One row group of 150,000 unsorted values: no page order, and no threshold yet.
        let rows = 150_000usize;
        let values = (0..rows).map(|v| Some((v * 7919 % 1000) as f64)).collect();
        let files = [opened("head.parquet", values, rows)];
        let key = SortKey::parse("x", true, false).unwrap();
        let bind = BindOptions::default();
        let mut skipper = ThresholdSkipper::new(&files, &key, &bind, None, false);
        let mut remaining = skipper.parts(tasks(&files[0]));
        let first = skipper.next_wave(&mut remaining, 2);
        assert_eq!(first.len(), 1, "the rest waits for the threshold");
        let read = tasks_reading(first, &files).unwrap();
        assert_eq!(read[0].selection.as_ref().unwrap().selected_ranges(), [0..HEAD_ROWS]);
        // The next wave reads the rest, whole, as any later wave would.
        let second = skipper.next_wave(&mut remaining, 2);
        let read = tasks_reading(second, &files).unwrap();
        assert_eq!(read[0].selection.as_ref().unwrap().selected_ranges(), [HEAD_ROWS..rows]);
        assert!(remaining.is_empty());
    }

    #[test]
    fn an_unsorted_key_is_read_whole() {
        // Each page spans 0..100: no page order to follow.
        let files =
            [opened_in_pages("unsorted-pages.parquet", (0..1000).map(|v| Some((v % 100) as f64)).collect(), 1000, 100)];
        let key = SortKey::parse("x", false, false).unwrap();
        let bind = BindOptions::default();
        let mut skipper = ThresholdSkipper::new(&files, &key, &bind, None, false);
        let mut remaining = skipper.parts(tasks(&files[0]));
        let parts = skipper.next_wave(&mut remaining, 5);
        assert_eq!(parts.len(), 1);
        assert!(!parts[0].is_page());
    }

    #[test]
    fn a_partition_key_or_a_declared_schema_is_never_ruled_out() {
        let files = [opened("any.parquet", (0..100).map(|v| Some(v as f64)).collect(), 10)];
        let key = SortKey::parse("x", false, false).unwrap();
        let bind = BindOptions::default();
        let skipper = ThresholdSkipper::new(&files, &key, &bind, None, true);
        assert!(skipper.parts_may_satisfy(&whole(&files[0]), &parse_filter("x <= 5").unwrap()).iter().all(|&m| m));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Whatever the values (NULLs, NaN, -0.0) and the threshold, a row group said not to
        /// hold a row satisfying `x <= t` holds none.
        #[test]
        fn never_rules_out_a_row_group_holding_a_satisfying_row(
            values in keys(),
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
            let may = skipper.parts_may_satisfy(&whole(&files[0]), &parse_filter(&format!("x {op} {threshold}")).unwrap());
            let t = f64::from(threshold);
            for (group, chunk) in values.chunks(per_group).enumerate() {
                prop_assert!(may[group] || !holds(chunk, descending, t), "row group {group} ruled out though it holds a row {op} {t}");
            }
        }

        /// The same for the parts of a read whose key may be sorted, either way, within its
        /// row groups: a part ruled out holds no satisfying row, and the parts cover every row.
        #[test]
        fn never_rules_out_a_part_holding_a_satisfying_row(
            values in keys(),
            sorted in 0u8..3,
            per_group in 1usize..60,
            per_page in 1usize..12,
            threshold in -60i32..60,
            descending in any::<bool>(),
        ) {
            let mut values = values;
            let total = |v: &Option<f64>| v.map(|v| if v.is_nan() { f64::INFINITY } else { v });
            if sorted > 0 {
                values.sort_by(|a, b| total(a).partial_cmp(&total(b)).unwrap_or(std::cmp::Ordering::Equal));
            }
            if sorted == 2 {
                values.reverse();
            }
            let name = format!("prop-pages-{}.parquet", CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            let files = [opened_in_pages(&name, values.clone(), per_group, per_page)];
            let key = SortKey::parse("x", descending, false).unwrap();
            let bind = BindOptions::default();
            let mut skipper = ThresholdSkipper::new(&files, &key, &bind, None, false);
            let mut remaining = skipper.parts(tasks(&files[0]));
            let mut parts = Vec::new();
            while !remaining.is_empty() {
                parts.extend(skipper.next_wave(&mut remaining, 3));
            }
            let op = if descending { ">=" } else { "<=" };
            let may = skipper.parts_may_satisfy(&parts, &parse_filter(&format!("x {op} {threshold}")).unwrap());
            let t = f64::from(threshold);
            let mut covered = vec![0usize; values.len()];
            for (part, may) in parts.iter().zip(may) {
                let (_, row_group) = part.row_group();
                let rows = match &part.extent {
                    Extent::Page(_, rows) | Extent::Rows(rows) => rows.clone(),
                    Extent::Whole => 0..values[row_group * per_group..].len().min(per_group),
                };
                let chunk = &values[row_group * per_group..][rows.clone()];
                for row in rows {
                    covered[row_group * per_group + row] += 1;
                }
                prop_assert!(may || !holds(chunk, descending, t), "a part of row group {row_group} ruled out though it holds a row {op} {t}");
            }
            prop_assert!(covered.iter().all(|&c| c == 1), "the parts cover each row once: {covered:?}");
        }
    }
}
