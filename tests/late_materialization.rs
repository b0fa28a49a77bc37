//! The LM-pipelined row group reader on a real file: same rows as decode-everything-then-
//! filter for every option combination, and metrics that prove late materialization —
//! predicate columns decoded for candidate rows only, projected columns for survivors only,
//! a filtered-and-projected column decoded once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::compute::{concat_batches, filter_record_batch};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use pqsift::filter::{BindOptions, bind, evaluate, parse_filter};
use pqsift::format::metadata;
use pqsift::reading::cached_reader::SharedArrayCache;
use pqsift::reading::row_filter::RowFilter;
use pqsift::reading::row_group_reader::{FileReader, ReadMetrics, ReadOptions, RootColumns, RowGroupRead};
use pqsift::selection::{RowSelection, SelectionPolicy};
use pqsift::storage::Location;

const ROW_GROUP_ROWS: usize = 10_000;
const ROW_GROUPS: usize = 3;

/// id (sorted), kind (5 values), amount (nulls and NaN), text (long).
fn write_sample(dir: &Path) -> PathBuf {
    let rows = ROW_GROUP_ROWS * ROW_GROUPS;
    let id = Int64Array::from_iter_values(0..rows as i64);
    let kind = StringArray::from_iter_values((0..rows).map(|i| ["a", "b", "c", "d", "e"][(i * 7919) % 5]));
    let amount = Float64Array::from_iter((0..rows).map(|i| match i % 97 {
        0 => None,
        1 => Some(f64::NAN),
        _ => Some(((i * 37) % 1000) as f64),
    }));
    let text = StringArray::from_iter_values((0..rows).map(|i| format!("row {i} {}", "lorem ipsum ".repeat(i % 8))));
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(id) as ArrayRef),
        ("kind", Arc::new(kind) as ArrayRef),
        ("amount", Arc::new(amount) as ArrayRef),
        ("text", Arc::new(text) as ArrayRef),
    ])
    .unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_data_page_row_count_limit(500)
        .set_write_batch_size(500)
        .set_statistics_enabled(EnabledStatistics::Page)
        // Unique strings: a dictionary page would only be overhead every read must fetch.
        .set_column_dictionary_enabled(ColumnPath::from("text"), false)
        .build();
    let path = dir.join("sample.parquet");
    let mut writer = ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    path
}

struct Opened {
    reader: FileReader,
    filter: RowFilter,
    metadata: ArrowReaderMetadata,
}

fn open(path: &Path, filter_text: &str, reorder: bool) -> Opened {
    let meta = metadata::load(&Location::from(path)).unwrap();
    let metadata =
        ArrowReaderMetadata::try_new(meta, ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional))
            .unwrap();
    let expr = parse_filter(filter_text).unwrap();
    let options = BindOptions::default();
    let filter_schema = pqsift::format::opener::filter_schema(metadata.schema(), metadata.metadata().file_metadata());
    let filter = RowFilter::build(Some(&expr), &filter_schema, metadata.metadata(), &options, reorder).unwrap();
    let reader = FileReader::new(&Location::from(path), metadata.clone(), filter_schema, &filter, &options).unwrap();
    Opened { reader, filter, metadata }
}

/// Decode everything, evaluate the whole filter, keep the projection.
fn brute_force(path: &Path, filter_text: &str, projection: &[usize]) -> RecordBatch {
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    let all = concat_batches(&batches[0].schema(), &batches).unwrap();
    let bound = bind(&parse_filter(filter_text).unwrap(), &all.schema(), &BindOptions::default()).unwrap();
    let passed = evaluate(&bound, &all).unwrap();
    let passed = BooleanArray::new(RowSelection::from_filters(&[passed]).to_mask(), None);
    filter_record_batch(&all, &passed).unwrap().project(projection).unwrap()
}

fn read_all(
    opened: &Opened,
    projection: &[usize],
    options: &ReadOptions,
    cache: &SharedArrayCache,
) -> (RecordBatch, ReadMetrics) {
    let mut batches = Vec::new();
    let mut metrics = ReadMetrics::default();
    for rg in 0..opened.metadata.metadata().num_row_groups() {
        let RowGroupRead { batch, metrics: m, parts, .. } = opened
            .reader
            .read_row_group(
                rg,
                None,
                RootColumns { roots: projection, leaf_subsets: &Default::default() },
                &opened.filter,
                options,
                cache,
            )
            .unwrap();
        metrics.add(&m);
        batches.push(batch);
        // The rows left in parts (more than `decode_bytes` passed), read in order.
        for part in parts {
            let (batch, m) = opened
                .reader
                .read_rows(
                    rg,
                    &part,
                    RootColumns { roots: projection, leaf_subsets: &Default::default() },
                    options,
                    cache,
                )
                .unwrap();
            metrics.add(&m);
            batches.push(batch);
        }
    }
    (concat_batches(&batches[0].schema(), &batches).unwrap(), metrics)
}

const FILTER: &str = "kind = 'c' AND amount > 500";

#[test]
fn same_rows_as_brute_force_for_every_option() {
    let dir = tempdir();
    let path = write_sample(&dir);
    let projection = [0, 3, 2];
    let expected = brute_force(&path, FILTER, &projection);
    assert!(expected.num_rows() > 100, "the filter keeps some rows");
    for pushdown in [true, false] {
        for policy in [SelectionPolicy::default(), SelectionPolicy::Mask, SelectionPolicy::Selectors] {
            for batch_size in [1000, 777, 100_000] {
                for reorder in [true, false] {
                    let opened = open(&path, FILTER, reorder);
                    let options = ReadOptions {
                        pushdown_filters: pushdown,
                        selection_policy: policy,
                        batch_size,
                        column_threads: 1,
                        ..ReadOptions::default()
                    };
                    let cache = SharedArrayCache::new(64 << 20);
                    let (got, _) = read_all(&opened, &projection, &options, &cache);
                    assert_eq!(
                        got, expected,
                        "pushdown={pushdown} policy={policy:?} batch={batch_size} reorder={reorder}"
                    );
                }
            }
        }
    }
    // NaN amounts are greater than 500 in Spark: they are among the rows.
    let amounts = expected.column(2).as_any().downcast_ref::<Float64Array>().unwrap();
    assert!(amounts.iter().any(|a| a.is_some_and(f64::is_nan)));
}

#[test]
fn metrics_prove_late_materialization() {
    let dir = tempdir();
    let path = write_sample(&dir);
    let opened = open(&path, FILTER, false);
    let cache = SharedArrayCache::new(64 << 20);
    // Runs decode exactly the selected rows (a mask would decode whole stretches).
    let runs = ReadOptions { selection_policy: SelectionPolicy::Selectors, ..ReadOptions::default() };
    let (got, metrics) = read_all(&opened, &[0, 3, 2], &runs, &cache);

    let rows = (ROW_GROUP_ROWS * ROW_GROUPS) as u64;
    let kind_c = brute_force(&path, "kind = 'c'", &[0]).num_rows() as u64;
    let by_column = &metrics.rows_decoded_by_column;
    // The first predicate's column is decoded for every candidate row ...
    assert_eq!(by_column["kind"], rows);
    // ... the second's only for rows the first kept (and, also projected, only once) ...
    assert_eq!(by_column["amount"], kind_c);
    // ... projected columns only for the survivors.
    assert_eq!(by_column["id"], got.num_rows() as u64);
    assert_eq!(by_column["text"], got.num_rows() as u64);
    assert!(metrics.cache_hits >= ROW_GROUPS as u64, "amount comes from the cache in each row group");
    assert_eq!(metrics.rows_out, got.num_rows() as u64);

    // With the adaptive policy, fragmented selections decode through masks: more values
    // decoded per column, but never more than the rows, and the same result.
    let opened = open(&path, FILTER, false);
    let (same, auto) = read_all(&opened, &[0, 3, 2], &ReadOptions::default(), &SharedArrayCache::new(64 << 20));
    assert_eq!(same, got);
    assert!(auto.rows_decoded_by_column["amount"] >= kind_c && auto.rows_decoded_by_column["amount"] <= rows);

    // Without pushdown, every needed column is decoded for every row.
    let opened = open(&path, FILTER, false);
    let baseline = ReadOptions { pushdown_filters: false, ..ReadOptions::default() };
    let (same, metrics) = read_all(&opened, &[0, 3, 2], &baseline, &SharedArrayCache::new(0));
    assert_eq!(same, got);
    assert_eq!(metrics.rows_decoded_by_column["text"], rows);
}

#[test]
fn access_plan_selection_is_respected_and_fewer_bytes_are_read() {
    let dir = tempdir();
    let path = write_sample(&dir);
    let opened = open(&path, "amount > 990", true);
    let cache = SharedArrayCache::new(0);
    // As if the page index had kept rows 2000..2500 of row group 1 only.
    let selection = RowSelection::from_ranges(&[2000..2500], ROW_GROUP_ROWS).unwrap();
    let RowGroupRead { batch, metrics, rows, parts } = opened
        .reader
        .read_row_group(
            1,
            Some(&selection),
            RootColumns { roots: &[0, 3], leaf_subsets: &Default::default() },
            &opened.filter,
            &ReadOptions::default(),
            &cache,
        )
        .unwrap();
    assert!(parts.is_empty());
    let ids = batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    assert!(ids.values().iter().all(|&id| (12_000..12_500).contains(&id)));
    // The batch's rows, by their positions in the row group: each id is its row's.
    let positions: Vec<i64> = rows.unwrap().selected_ranges().into_iter().flatten().map(|row| row as i64).collect();
    let ids_of_rows: Vec<i64> = positions.iter().map(|row| ROW_GROUP_ROWS as i64 + row).collect();
    assert_eq!(ids.values().to_vec(), ids_of_rows);
    assert_eq!(metrics.rows_decoded_by_column["amount"], 500);
    let file_size = std::fs::metadata(&path).unwrap().len();
    assert!(opened.reader.bytes_read() < file_size / 10, "{} of {file_size} bytes read", opened.reader.bytes_read());

    // A selection of the wrong length is an error, not a panic.
    let wrong = RowSelection::select_all(5);
    assert!(
        opened
            .reader
            .read_row_group(
                1,
                Some(&wrong),
                RootColumns { roots: &[0], leaf_subsets: &Default::default() },
                &opened.filter,
                &ReadOptions::default(),
                &cache,
            )
            .is_err()
    );
}

#[test]
fn observed_costs_reorder_predicates() {
    let dir = tempdir();
    let path = write_sample(&dir);
    // `id >= 0` is cheap on bytes but removes nothing; `kind = 'c'` removes 80%.
    let opened = open(&path, "id >= 0 AND kind = 'c'", true);
    let cache = SharedArrayCache::new(0);
    read_all(&opened, &[0], &ReadOptions::default(), &cache);
    let stats = opened.filter.stats();
    assert!(stats.iter().all(|s| s.rows_in > 0));
    assert_eq!(opened.filter.order(), vec![1, 0], "cost per row removed puts kind first: {stats:?}");
}

fn tempdir() -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "pqsift-lm-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn scan_file(path: &Path, filter_text: &str, projection: &[usize]) -> pqsift::reading::scan_stream::ScanFile {
    let opened = open(path, filter_text, true);
    let schema = opened.reader.schema();
    let output = Arc::new(arrow::datatypes::Schema::new(
        projection.iter().map(|&r| schema.field(r).clone()).collect::<Vec<_>>(),
    ));
    pqsift::reading::scan_stream::ScanFile {
        reader: opened.reader,
        filter: opened.filter,
        projection: projection.to_vec(),
        paths: vec![Vec::new(); projection.len()],
        leaf_subsets: Default::default(),
        output,
        assembly: None,
    }
}

#[test]
fn stream_keeps_order_across_threads_and_stops_at_the_limit() {
    use pqsift::reading::scan_stream::{ScanStream, ScanTask, StreamOptions};
    let dir = tempdir();
    let path = write_sample(&dir);
    let projection = [0, 2];
    let expected = brute_force(&path, FILTER, &projection);
    let schema = expected.schema();
    for threads in [1, 3] {
        let files = vec![scan_file(&path, FILTER, &projection), scan_file(&path, FILTER, &projection)];
        let tasks: Vec<ScanTask> = (0..2)
            .flat_map(|file| (0..ROW_GROUPS).map(move |row_group| ScanTask::new(file, row_group, None)))
            .collect();
        let options = StreamOptions {
            read: ReadOptions { batch_size: 777, ..ReadOptions::default() },
            threads,
            limit: None,
            conform_to: None,
            sort: None,
            first_batches_soon: false,
            max_bytes_read: None,
        };
        let stream = ScanStream::start(schema.clone(), files, tasks, options, Arc::new(SharedArrayCache::new(1 << 20)));
        let batches: Vec<RecordBatch> = stream.map(Result::unwrap).collect();
        assert!(batches.iter().all(|b| b.num_rows() <= 777));
        let got = concat_batches(&schema, &batches).unwrap();
        assert_eq!(got, concat_batches(&schema, &[expected.clone(), expected.clone()]).unwrap(), "threads={threads}");
    }

    let files = vec![scan_file(&path, FILTER, &projection)];
    let tasks: Vec<ScanTask> = (0..ROW_GROUPS).map(|row_group| ScanTask::new(0, row_group, None)).collect();
    let options = StreamOptions {
        read: ReadOptions::default(),
        threads: 1,
        limit: Some(50),
        conform_to: None,
        sort: None,
        first_batches_soon: false,
        max_bytes_read: None,
    };
    let stream = ScanStream::start(schema.clone(), files, tasks, options, Arc::new(SharedArrayCache::new(0)));
    let got: Vec<RecordBatch> = stream.map(Result::unwrap).collect();
    let got = concat_batches(&schema, &got).unwrap();
    assert_eq!(got, expected.slice(0, 50));
}

#[test]
fn stream_progress_counts_the_rows_handed_out_and_the_first_windows_are_small() {
    use pqsift::reading::scan_stream::{ScanStream, ScanTask, StreamOptions};
    let dir = tempdir();
    let path = write_sample(&dir);
    let projection = [0, 2];
    let total = (ROW_GROUP_ROWS * ROW_GROUPS) as u64;
    // Row groups read whole (the default budget), and in windows (160 KiB of the predicate
    // and projected columns a row group, against 64 KiB).
    for (decode_bytes, windowed) in [(ReadOptions::default().decode_bytes, false), (64 << 10, true)] {
        let files = vec![scan_file(&path, FILTER, &projection)];
        let schema = files[0].output.clone();
        let tasks: Vec<ScanTask> = (0..ROW_GROUPS).map(|row_group| ScanTask::new(0, row_group, None)).collect();
        let read = ReadOptions { decode_bytes, ..ReadOptions::default() };
        let options = StreamOptions {
            read,
            threads: 2,
            limit: None,
            conform_to: None,
            sort: None,
            first_batches_soon: true,
            max_bytes_read: None,
        };
        let mut stream = ScanStream::start(schema, files, tasks, options, Arc::new(SharedArrayCache::new(0)));
        assert_eq!(stream.progress(), (0, total));
        let (mut last, mut rows_out, mut first) = (0, 0, None);
        while let Some(batch) = stream.next_batch_checked() {
            rows_out += batch.unwrap().num_rows() as u64;
            let (scanned, of) = stream.progress();
            assert_eq!(of, total);
            assert!(scanned >= last && rows_out <= scanned, "{scanned} after {last}, {rows_out} out");
            first.get_or_insert(scanned);
            last = scanned;
        }
        assert_eq!(stream.progress(), (total, total));
        // The first windows are 1/64 of the budget (a window of the whole budget is half a
        // row group): the first batch comes after a few rows.
        let first = first.unwrap();
        match windowed {
            true => assert!(first <= ROW_GROUP_ROWS as u64 / 16, "first batch after {first} rows"),
            false => assert_eq!(first, ROW_GROUP_ROWS as u64),
        }
    }
}
