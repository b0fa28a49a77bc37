//! Filters as deep as the parser allows, through a whole scan: planning (zone maps, the page
//! index, literal guarantees, explain) and reading (the row filter on pqsift's reader
//! threads), on a thread with Rust's default stack (2 MiB), in any build.
//!
//! A chain `a OR b OR ...` nests one level per operator and every stage recurses on that
//! nesting; the operator limit bounds the depth, and the recursive steps move to a fresh
//! stack segment when the thread's runs low. Before, a chain of additions at the limit
//! overflowed the stack of the thread binding it.

use std::sync::Arc;

use arrow::array::{Array, Int64Array, RecordBatch};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use pqsift::planning::scan::{Scan, ScanOptions};
use pqsift::reading::planned_read::read_plan;
use pqsift::reading::reader::ReaderConfig;

/// `a` = 0..1000 and a null, in row groups of 300 rows and pages of 50.
fn written() -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("pqsift_deep_filters_{}.parquet", std::process::id()));
    let values: Int64Array = (0..1000).map(Some).chain([None]).collect();
    let batch = RecordBatch::try_from_iter([("a", Arc::new(values) as Arc<dyn Array>)]).unwrap();
    let properties = WriterProperties::builder()
        .set_max_row_group_row_count(Some(300))
        .set_data_page_row_count_limit(50)
        .set_write_batch_size(50)
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    path
}

/// The values of `a` the scan of `path` with `filter` keeps, in file order.
fn scanned(path: &std::path::Path, filter: &str) -> Vec<i64> {
    let scan = std::sync::Arc::new(Scan::new(vec![path], None, Some(filter), ScanOptions::default()).unwrap());
    let plan = scan.plan().unwrap();
    assert!(plan.explain().contains("row group 0"));
    let (_, mut stream) =
        read_plan(&scan, &plan, ReaderConfig { threads: 2, ..ReaderConfig::default() }, None).unwrap();
    let mut kept = Vec::new();
    while let Some(batch) = stream.next_batch_checked() {
        let batch = batch.unwrap();
        let column = batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        kept.extend(column.iter().flatten());
    }
    kept
}

#[test]
fn filters_at_the_operator_limit_scan_on_a_small_stack() {
    let path = written();
    let chain = |term: &dyn Fn(i64) -> String, operator: &str| (0..500).map(term).collect::<Vec<_>>().join(operator);
    let cases: [(String, Vec<i64>); 4] = [
        // 500 `=` and 499 `OR` under a NOT: 1,000 operators.
        (format!("NOT ({})", chain(&|v| format!("a = {v}"), " OR ")), (500..1000).collect()),
        (format!("NOT ({})", chain(&|v| format!("a <> {v}"), " AND ")), (0..500).collect()),
        // Equalities of three values: literal guarantees, zone maps and the page index prune.
        (chain(&|v| format!("a = {}", 700 + v % 3), " OR "), vec![700, 701, 702]),
        (format!("a{} = 1500", " + 1".repeat(999)), vec![501]),
    ];
    let thread = std::thread::Builder::new().stack_size(2 << 20);
    let scans = thread
        .spawn(move || {
            let kept: Vec<Vec<i64>> = cases.iter().map(|(filter, _)| scanned(&path, filter)).collect();
            std::fs::remove_file(&path).ok();
            cases.into_iter().map(|(_, expected)| expected).zip(kept).collect::<Vec<_>>()
        })
        .unwrap()
        .join()
        .unwrap();
    for (expected, kept) in scans {
        assert_eq!(kept, expected);
    }
}
