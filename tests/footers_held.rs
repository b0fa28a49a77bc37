//! Planning holds the footers of the files it will read, not of every file it looked at: a
//! file none of whose row groups survive the filter (or TopN) lets its footer go once
//! planned — the first file's stays, for the output schema — and reading still returns
//! every row the filter keeps. A footer of a wide table takes about a megabyte parsed, so a
//! scan of thousands of such files pruned to a few would otherwise hold gigabytes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use pqsift::filter::sort_key::{SortKey, TopN};
use pqsift::planning::scan::{Scan, ScanOptions};
use pqsift::reading::planned_read::read_plan;
use pqsift::reading::reader::ReaderConfig;

const FILES: i64 = 4;
const ROWS: i64 = 100;

/// `FILES` files, file `i` holding `x` = `i * ROWS .. (i + 1) * ROWS` in one row group.
fn write_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    (0..FILES)
        .map(|i| {
            let path = dir.join(format!("part-{i}.parquet"));
            let x: ArrayRef = Arc::new(Int64Array::from_iter_values(i * ROWS..(i + 1) * ROWS));
            let batch = RecordBatch::try_from_iter([("x", x)]).unwrap();
            let properties = WriterProperties::builder().build();
            let mut writer =
                ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(properties)).unwrap();
            writer.write(&batch).unwrap();
            writer.close().unwrap();
            path
        })
        .collect()
}

/// The `x` values a read of `scan`'s plan returns, sorted.
fn read_x(scan: &Scan) -> Vec<i64> {
    let plan = scan.plan().unwrap();
    let (_, mut stream) = read_plan(scan, &plan, ReaderConfig::default(), None).unwrap();
    let mut values = Vec::new();
    while let Some(batch) = stream.next_batch_checked() {
        let batch = batch.unwrap();
        let x = batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        values.extend(x.iter().flatten());
    }
    values.sort_unstable();
    values
}

fn held(scan: &Scan) -> Vec<bool> {
    (0..FILES as usize).map(|position| scan.opened(position).is_some()).collect()
}

#[test]
fn files_the_filter_prunes_let_their_footers_go() {
    let dir = std::env::temp_dir().join(format!("pqsift_footers_held_filter_{}", std::process::id()));
    let files = write_files(&dir);
    let scan = Scan::new(files, None, Some("x >= 200 AND x < 250"), ScanOptions::default()).unwrap();
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
    let files = write_files(&dir);
    // The 10 largest x are all in the last file.
    let top_n = TopN { keys: vec![SortKey::new("x", true)], limit: 10 };
    let options = ScanOptions { top_n: Some(top_n), ..ScanOptions::default() };
    let scan = Scan::new(files, None, None, options).unwrap();
    let plan = scan.plan().unwrap();
    assert_eq!(plan.metrics.row_groups_pruned_topn, 3);
    assert_eq!(held(&scan), [true, false, false, true]);
    let x = read_x(&scan);
    assert_eq!(x.len(), ROWS as usize);
    assert_eq!(x[x.len() - 10..], (390..400).collect::<Vec<_>>()[..]);
    std::fs::remove_dir_all(&dir).unwrap();
}
