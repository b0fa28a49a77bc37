//! Columns are told apart by their position, never by a joined name: files whose column
//! names hold dots, back-quotes, spaces, case pairs and non-ASCII letters — some inside
//! structs, and one top-level column named as another column's dotted struct path — give,
//! with every pruning stage on (statistics, page index), exactly the rows a direct
//! evaluation of the filter gives. Each column holds its own range of values, so a stage
//! that took one column's statistics for another's would drop rows.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StructArray};
use arrow::datatypes::{DataType, Field, Fields};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use pqsift::filter::BindOptions;
use pqsift::planning::scan::{Scan, ScanOptions};
use pqsift::reading::planned_read::read_plan;
use pqsift::reading::reader::ReaderConfig;
use proptest::prelude::*;

const ROWS: usize = 100;

fn name() -> impl Strategy<Value = String> {
    let alphabet = vec!['a', 'A', 'b', '.', '`', ' ', 'é', 'É', '_'];
    prop::collection::vec(prop::sample::select(alphabet), 1..4).prop_map(|chars| chars.into_iter().collect())
}

/// A column path as a filter writes it: every part back-quoted, back-quotes doubled.
fn quoted(path: &[String]) -> String {
    path.iter().map(|part| format!("`{}`", part.replace('`', "``"))).collect::<Vec<_>>().join(".")
}

/// A leaf column's path (outermost first) and its values.
type Leaf = (Vec<String>, Vec<i64>);

/// The columns: per name a top-level int64 column, or a struct holding one field of the same
/// name; then a top-level column named as the first struct path joined with a dot. Returns
/// the batch and each leaf's path and values.
fn columns(names: &[String], nested: &[bool]) -> (RecordBatch, Vec<Leaf>) {
    let mut fields: Vec<(Field, ArrayRef)> = Vec::new();
    let mut leaves = Vec::new();
    for (number, name) in names.iter().enumerate() {
        let values: Vec<i64> = (0..ROWS as i64).map(|i| (i * (number as i64 + 3)) % 37 + number as i64 * 40).collect();
        let array: ArrayRef = Arc::new(Int64Array::from(values.clone()));
        if nested[number] {
            let inner = Fields::from(vec![Field::new(name, DataType::Int64, true)]);
            let structs = StructArray::new(inner.clone(), vec![array], None);
            fields.push((Field::new(name, DataType::Struct(inner), true), Arc::new(structs)));
            leaves.push((vec![name.clone(), name.clone()], values));
        } else {
            fields.push((Field::new(name, DataType::Int64, true), array));
            leaves.push((vec![name.clone()], values));
        }
    }
    if let Some((path, _)) = leaves.iter().find(|(path, _)| path.len() == 2).cloned() {
        let joined = path.join(".");
        if !names.contains(&joined) {
            let values: Vec<i64> = (0..ROWS as i64).map(|i| ROWS as i64 - i).collect();
            fields.push((Field::new(&joined, DataType::Int64, true), Arc::new(Int64Array::from(values.clone()))));
            leaves.push((vec![joined], values));
        }
    }
    let schema = Arc::new(arrow::datatypes::Schema::new(fields.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>()));
    let batch = RecordBatch::try_new(schema, fields.into_iter().map(|(_, a)| a).collect()).unwrap();
    (batch, leaves)
}

fn written(batch: &RecordBatch) -> std::path::PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("pqsift-column-identity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.parquet", NEXT.fetch_add(1, Ordering::Relaxed)));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(20))
        .set_data_page_row_count_limit(5)
        .set_write_batch_size(5)
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let mut writer = ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    path
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn hostile_names_never_lose_rows(
        names in prop::collection::btree_set(name(), 2..4),
        nested in prop::collection::vec(any::<bool>(), 4),
        picks in prop::collection::vec((0usize..8, 0usize..3, -5i64..120), 1..4),
    ) {
        let names: Vec<String> = names.into_iter().collect();
        let (batch, leaves) = columns(&names, &nested);
        let path = written(&batch);
        let mut conditions = Vec::new();
        let mut keep = [true; ROWS];
        for (leaf, op, literal) in picks {
            let (leaf_path, values) = &leaves[leaf % leaves.len()];
            let (text, holds): (&str, fn(i64, i64) -> bool) = match op {
                0 => ("<", |v, c| v < c),
                1 => (">=", |v, c| v >= c),
                _ => ("=", |v, c| v == c),
            };
            conditions.push(format!("{} {text} {literal}", quoted(leaf_path)));
            for (row, kept) in keep.iter_mut().enumerate() {
                *kept &= holds(values[row], literal);
            }
        }
        let filter = conditions.join(" AND ");
        // Names equal but for case are ambiguous to Spark's default resolution.
        let lowered: BTreeSet<String> = batch.schema().fields().iter().map(|f| f.name().to_lowercase()).collect();
        let case_sensitive = lowered.len() < batch.num_columns();
        let options = ScanOptions {
            bind: BindOptions { case_sensitive, ..BindOptions::default() },
            ..ScanOptions::default()
        };
        let scan = std::sync::Arc::new(Scan::new(vec![path.as_path()], None, Some(&filter), options).unwrap());
        let plan = scan.plan().unwrap();
        let (_, mut stream) = read_plan(&scan, &plan, ReaderConfig { threads: 1, ..ReaderConfig::default() }, None).unwrap();
        let mut rows = 0;
        while let Some(batch) = stream.next_batch_checked() {
            rows += batch.unwrap().num_rows();
        }
        std::fs::remove_file(&path).ok();
        prop_assert_eq!(rows, keep.iter().filter(|k| **k).count(), "{}\n{}", filter, plan.explain());
    }
}
