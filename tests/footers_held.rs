//! Planning holds the footers of the files it will read first, not of every file it looked
//! at: a file none of whose row groups survive the filter (or TopN) lets its footer go once
//! planned — the first file's stays, for the output schema — and so does every file read
//! after the first group (`footer_bytes_read_together`), which the read opens again group
//! by group.
//! Reading still returns every row the filter keeps, in order. A footer of a wide table
//! takes about a megabyte parsed, so a scan of thousands of such files would otherwise hold
//! gigabytes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use pqsift::filter::sort_key::{SortKey, TopN};
use pqsift::planning::scan::{Scan, ScanOptions};
use pqsift::reading::planned_read::{count_rows, read_plan};
use pqsift::reading::reader::ReaderConfig;
use pqsift::reading::row_group_reader::ReadOptions;

const FILES: i64 = 4;
const ROWS: i64 = 100;

/// `files` files, file `i` holding `x` = `i * ROWS .. (i + 1) * ROWS` in one row group.
fn write_files(dir: &Path, files: i64) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    (0..files).map(|i| write_file(&dir.join(format!("part-{i:03}.parquet")), i * ROWS..(i + 1) * ROWS)).collect()
}

/// Writes `x` = `values` to `path`, in row groups of `ROWS`.
fn write_file(path: &Path, values: std::ops::Range<i64>) -> PathBuf {
    let x: ArrayRef = Arc::new(Int64Array::from_iter_values(values));
    let batch = RecordBatch::try_from_iter([("x", x)]).unwrap();
    let properties = WriterProperties::builder().set_max_row_group_row_count(Some(ROWS as usize)).build();
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    path.to_path_buf()
}

/// The `x` values a read of `scan`'s plan returns, in the order read.
fn read_in_order(scan: &Arc<Scan>, config: ReaderConfig) -> pqsift::Result<Vec<i64>> {
    let whole = config.limit.is_none();
    let plan = scan.plan()?;
    let (_, mut stream) = read_plan(scan, &plan, config, None)?;
    let mut values = Vec::new();
    while let Some(batch) = stream.next_batch_checked() {
        let batch = batch?;
        let x = batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        values.extend(x.iter().flatten());
    }
    let metrics = stream.metrics();
    assert_eq!(metrics.rows_out, values.len() as u64);
    let (scanned, total) = stream.progress();
    assert!(scanned == total || !whole, "{scanned} of {total} rows scanned");
    Ok(values)
}

/// The `x` values a read of `scan`'s plan returns, sorted.
fn read_x(scan: &Arc<Scan>) -> Vec<i64> {
    let mut values = read_in_order(scan, ReaderConfig::default()).unwrap();
    values.sort_unstable();
    values
}

fn held(scan: &Scan) -> Vec<bool> {
    (0..scan.files().len()).map(|position| scan.opened(position).is_some()).collect()
}

#[test]
fn files_the_filter_prunes_let_their_footers_go() {
    let dir = std::env::temp_dir().join(format!("pqsift_footers_held_filter_{}", std::process::id()));
    let files = write_files(&dir, FILES);
    let scan = Arc::new(Scan::new(files, None, Some("x >= 200 AND x < 250"), ScanOptions::default()).unwrap());
    let plan = scan.plan().unwrap();
    assert_eq!(plan.files.iter().filter(|f| !f.is_pruned()).count(), 1);
    // The first file (the output schema) and the one read are held; the other two are not.
    assert_eq!(held(&scan), [true, false, true, false]);
    assert_eq!(read_x(&scan), (200..250).collect::<Vec<_>>());
    // Planned again (as explain then read do), the pruned files are read again and let go.
    assert_eq!(read_x(&scan), (200..250).collect::<Vec<_>>());
    assert_eq!(held(&scan), [true, false, true, false]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn files_topn_prunes_let_their_footers_go() {
    let dir = std::env::temp_dir().join(format!("pqsift_footers_held_topn_{}", std::process::id()));
    let files = write_files(&dir, FILES);
    // The 10 largest x are all in the last file.
    let top_n = TopN { keys: vec![SortKey::new("x", true)], limit: 10 };
    let options = ScanOptions { top_n: Some(top_n), ..ScanOptions::default() };
    let scan = Arc::new(Scan::new(files, None, None, options).unwrap());
    let plan = scan.plan().unwrap();
    assert_eq!(plan.metrics.row_groups_pruned_topn, 3);
    assert_eq!(held(&scan), [true, false, false, true]);
    let x = read_x(&scan);
    assert_eq!(x.len(), ROWS as usize);
    assert_eq!(x[x.len() - 10..], (390..400).collect::<Vec<_>>()[..]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Files read together in the tests below.
const FILES_READ_TOGETHER: usize = 64;

/// Files enough for three groups of `FILES_READ_TOGETHER`.
const MANY: i64 = 2 * FILES_READ_TOGETHER as i64 + 20;

/// Options whose groups of files read together are `FILES_READ_TOGETHER` of `files` (all
/// of one layout: their footers take the same memory, give or take their statistics).
fn grouped(files: &[PathBuf]) -> ScanOptions {
    let one = Scan::new(vec![files[0].clone()], None, None, ScanOptions::default()).unwrap();
    let footer = one.plan().unwrap().files[0].footer_bytes;
    assert!(footer > 0);
    ScanOptions { footer_bytes_read_together: FILES_READ_TOGETHER * footer + footer / 2, ..ScanOptions::default() }
}

#[test]
fn a_read_of_many_files_holds_one_group_of_footers_and_reads_every_row_in_order() {
    let dir = std::env::temp_dir().join(format!("pqsift_footers_held_groups_{}", std::process::id()));
    let files = write_files(&dir, MANY);
    // Every file has rows to read but files 0 and 1; file 0 gives the schema, and is the
    // first of the first group read.
    let filter = format!("x >= {}", 2 * ROWS);
    let options = grouped(&files);
    let scan = Arc::new(Scan::new(files, None, Some(&filter), options).unwrap());
    let plan = scan.plan().unwrap();
    assert_eq!(plan.files.iter().filter(|f| !f.is_pruned()).count(), MANY as usize - 2);
    assert!(plan.files[70].row_groups[0].read_bytes > 0, "read estimates are made for files let go too");
    let expected_held: Vec<bool> =
        (0..MANY as usize).map(|p| p == 0 || (2..1 + FILES_READ_TOGETHER).contains(&p)).collect();
    assert_eq!(held(&scan), expected_held);
    let expected: Vec<i64> = (2 * ROWS..MANY * ROWS).collect();
    assert_eq!(read_in_order(&scan, ReaderConfig::default()).unwrap(), expected);
    // The later groups' footers were let go again once read.
    assert_eq!(held(&scan), expected_held);
    // Two threads, a small batch: the same rows in the same order.
    let read = ReadOptions { batch_size: 7, ..ReadOptions::default() };
    let config = ReaderConfig { threads: 2, read, ..ReaderConfig::default() };
    assert_eq!(read_in_order(&scan, config).unwrap(), expected);
    // Counting reads the groups too.
    assert_eq!(count_rows(&scan, &scan.plan().unwrap(), ReaderConfig::default()).unwrap(), expected.len() as u64);
    // A limit ending in the second group stops there; one ending on a group's last row
    // opens no further group.
    for limit in [FILES_READ_TOGETHER * ROWS as usize + 5, FILES_READ_TOGETHER * ROWS as usize, 3] {
        let config = ReaderConfig { limit: Some(limit), ..ReaderConfig::default() };
        assert_eq!(read_in_order(&scan, config).unwrap(), expected[..limit]);
    }
    // Sorted, every file is read at once: the rows still all come, in the order asked.
    let config = ReaderConfig { order_by: vec![SortKey::new("x", true)], ..ReaderConfig::default() };
    let sorted = read_in_order(&scan, config).unwrap();
    assert_eq!(sorted, expected.iter().rev().copied().collect::<Vec<_>>());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_rewritten_after_planning_is_refused_when_its_group_is_opened() {
    let dir = std::env::temp_dir().join(format!("pqsift_footers_held_rewritten_{}", std::process::id()));
    let files = write_files(&dir, MANY);
    let scan = Arc::new(Scan::new(files.clone(), None, None, grouped(&files)).unwrap());
    let plan = scan.plan().unwrap();
    let (_, mut stream) = read_plan(&scan, &plan, ReaderConfig::default(), None).unwrap();
    // A file of the last group, its footer let go, gets another row group.
    let rewritten = &files[MANY as usize - 1];
    write_file(rewritten, 0..2 * ROWS);
    let mut rows = 0;
    let error = loop {
        match stream.next_batch_checked() {
            Some(Ok(batch)) => rows += batch.num_rows(),
            Some(Err(error)) => break error,
            None => panic!("the rewritten file was read as planned"),
        }
    };
    assert_eq!(rows, 2 * FILES_READ_TOGETHER * ROWS as usize, "the groups before it are read");
    let message = error.to_string();
    assert!(message.contains("changed after the scan was planned"), "{message}");
    assert!(message.contains(&rewritten.display().to_string()), "{message}");
    assert!(stream.next_batch_checked().is_none(), "a failed read goes on with no later group");
    // Planned again, the scan reads the file as it is now.
    let values = read_in_order(&scan, ReaderConfig::default()).unwrap();
    assert_eq!(values.len(), (MANY as usize - 1) * ROWS as usize + 2 * ROWS as usize);
    assert_eq!(values[values.len() - 2 * ROWS as usize..], (0..2 * ROWS).collect::<Vec<_>>()[..]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Planning with local footers read on several threads makes the same plan, holds the
/// same footers, and fails on the same file — the first broken one in file order — as
/// planning on one.
#[test]
fn footers_read_on_threads_plan_as_one_thread_does() {
    let dir = std::env::temp_dir().join(format!("pqsift_footers_held_threads_{}", std::process::id()));
    let files = write_files(&dir, MANY);
    let filter = Some("x >= 7000 AND x < 7050 OR x = 120");
    let one = Scan::new(files.clone(), None, filter, ScanOptions::default()).unwrap().plan().unwrap();
    for threads in [2, 3, 16] {
        let scan = Arc::new(Scan::new(files.clone(), None, filter, ScanOptions::default()).unwrap());
        let plan = scan.plan_with_threads(threads).unwrap();
        assert_eq!(plan.explain(), one.explain(), "{threads} threads");
        assert_eq!(plan.metrics, one.metrics, "{threads} threads");
        let read: Vec<usize> = (0..files.len()).filter(|&p| !plan.files[p].is_pruned()).collect();
        assert_eq!(read, [1, 70]);
        // The first file (the output schema) and the two read are held, no other.
        assert_eq!(held(&scan).iter().filter(|&&h| h).count(), 3);
        assert!(held(&scan)[0] && held(&scan)[1] && held(&scan)[70]);
        assert_eq!(read_x(&scan), [120].into_iter().chain(7000..7050).collect::<Vec<_>>());
    }
    // Two files broken after the scan was made: each plan names the first.
    for broken in [&files[90], &files[30]] {
        std::fs::write(broken, b"not parquet at all, and long enough to have a footer").unwrap();
    }
    for threads in [1, 2, 16] {
        let scan = Scan::new(files.clone(), None, filter, ScanOptions::default()).unwrap();
        let error = scan.plan_with_threads(threads).unwrap_err().to_string();
        assert!(error.contains("part-030.parquet") && !error.contains("part-090"), "{threads} threads: {error}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
