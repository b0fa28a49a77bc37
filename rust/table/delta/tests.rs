//! Tests over the real Delta tables of `../shared/delta-testing` (Spark-written golden tables
//! of the Delta project, and delta-kernel-rs's test tables): every table either loads or
//! fails as its README says; row counts and column names against `expected/`; checkpoints
//! against a replay of the commits alone; deletion vectors against the data.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Int64Array, RecordBatch, StringArray, StructArray};
use arrow::datatypes::{DataType, Field, Int64Type};

use super::checkpoint::{parquet_row_count, read_add_actions};
use super::log_replay::replay;
use super::log_segment::{LogListing, LogSegment, VersionSpec};
use super::*;
use crate::error::PqsiftError;
use crate::format::opener::OpenedFile;
use crate::storage::Location;
use crate::table::allowed_locations::AllowedLocations;
// These tests read real tables end to end, so they use the scan above the table layer.
use crate::reading::table_reads::ScanReads;
use crate::table::parquet_reads::ParquetReads;

/// `path` as a location (the test tables are local).
fn local(path: &Path) -> Location {
    Location::from(path)
}

/// The local path of a location of the test tables.
fn path_of(location: &Location) -> &Path {
    location.as_local().expect("a local path")
}

fn testing_root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/delta-testing");
    if root.is_dir() {
        Some(root)
    } else {
        eprintln!("note: {} is absent: the Delta table tests are skipped", root.display());
        None
    }
}

/// How loading a table must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Loads,
    /// A `PqsiftError::Table` whose message holds this.
    Table(&'static str),
    /// A `PqsiftError::Unsupported` whose message holds this.
    Unsupported(&'static str),
}

fn expectation(name: &str) -> Expect {
    match name {
        "deltalog-invalid-protocol-version" => Expect::Unsupported("reader version 99"),
        "deltalog-state-reconstruction-from-checkpoint-missing-metadata" => Expect::Table("no metaData"),
        "deltalog-state-reconstruction-without-metadata" => Expect::Table("no metaData"),
        "deltalog-state-reconstruction-without-protocol" => Expect::Table("no protocol"),
        "no-delta-log-folder" => Expect::Table("not a Delta table"),
        // Not in the README's list, but its log has no metaData action at all (a log-only
        // test of path escaping): an invalid table, as `...-without-metadata`. Its paths are
        // checked through `replay` in `structural_golden_tables`.
        "data-reader-absolute-paths-escaped-chars" => Expect::Table("no metaData"),
        "versions-not-contiguous" => Expect::Table("not contiguous"),
        // delta-kernel-rs's table of geometry columns: a reader feature not implemented.
        "table-with-geo" => Expect::Unsupported("geospatial"),
        _ => Expect::Loads,
    }
}

/// `(name, table root, expected rows directory)` of every golden table (each table of
/// `hive/` on its own).
fn golden_tables(root: &Path) -> Vec<(String, PathBuf, Option<PathBuf>)> {
    let mut tables = Vec::new();
    for name in sorted_dirs(&root.join("golden")) {
        let dir = root.join("golden").join(&name);
        if name == "hive" {
            for sub in sorted_dirs(&dir.join("delta")) {
                tables.push((format!("hive/{sub}"), dir.join("delta").join(&sub), None));
            }
            continue;
        }
        let expected = dir.join("expected");
        tables.push((name, dir.join("delta"), expected.is_dir().then_some(expected)));
    }
    tables
}

/// `(name, table root)` of every kernel test table (`partition_cm/id` etc. included).
fn kernel_tables(root: &Path) -> Vec<(String, PathBuf)> {
    let mut tables = Vec::new();
    let base = root.join("tables");
    let mut stack = vec![base.clone()];
    while let Some(dir) = stack.pop() {
        if dir.join("_delta_log").is_dir() {
            let name = dir.strip_prefix(&base).unwrap().display().to_string();
            tables.push((name, dir));
            continue;
        }
        for sub in sorted_dirs(&dir) {
            if !sub.contains('=') && !sub.starts_with('_') {
                stack.push(dir.join(sub));
            }
        }
    }
    tables.sort();
    tables
}

fn sorted_dirs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".parquet") && !name.starts_with('.') && !name.starts_with('_')
        })
        .collect();
    files.sort();
    files
}

/// Rows of the snapshot: per file its footer's row count (its `numRecords` when the file is
/// absent), less its deletion vector's rows — each DV decoded and checked.
fn snapshot_rows(snapshot: &DeltaSnapshot) -> Result<u64, String> {
    let mut rows = 0u64;
    for file in &snapshot.files {
        let written = if path_of(&file.path).is_file() {
            parquet_row_count(&file.path).map_err(|e| e.to_string())?
        } else {
            let records = file.stats.parse().and_then(|s| s.num_records);
            records.ok_or_else(|| format!("{} is absent and has no numRecords", file.path))? as u64
        };
        let deleted = match &file.deletion_vector {
            Some(dv) => {
                let indexes = dv.load(&snapshot.table_root).map_err(|e| e.to_string())?;
                if indexes.last().is_some_and(|&last| last >= written) {
                    return Err(format!(
                        "{}: deleted row {} past its {written} rows",
                        file.path,
                        indexes.last().unwrap()
                    ));
                }
                indexes.len() as u64
            }
            None => 0,
        };
        rows += written - deleted;
    }
    Ok(rows)
}

/// Checks `result` against `expect`; `Err` says how it differs.
fn check_outcome(name: &str, result: &crate::Result<DeltaSnapshot>, expect: Expect) -> Result<(), String> {
    match (expect, result) {
        (Expect::Loads, Ok(_)) => Ok(()),
        (Expect::Loads, Err(e)) => Err(format!("{name}: failed: {e}")),
        (Expect::Table(text), Err(e @ PqsiftError::Table { .. }))
        | (Expect::Unsupported(text), Err(e @ PqsiftError::Unsupported { .. })) => {
            if e.to_string().contains(text) {
                Ok(())
            } else {
                Err(format!("{name}: error {e:?} does not say {text:?}"))
            }
        }
        (expect, Err(e)) => Err(format!("{name}: expected {expect:?}, got {e:?}")),
        (expect, Ok(s)) => {
            Err(format!("{name}: expected {expect:?}, loaded version {} with {} files", s.version, s.files.len()))
        }
    }
}

#[test]
fn every_golden_table_loads_or_fails_as_documented() {
    let Some(root) = testing_root() else { return };
    let tables = golden_tables(&root);
    assert!(tables.len() >= 80, "{} golden tables", tables.len());
    let mut failures = Vec::new();
    let (mut compared, mut order_differs) = (0, Vec::new());
    for (name, table, expected) in &tables {
        let leaf = name.rsplit('/').next().unwrap();
        let result = load_snapshot(&local(table), SnapshotSpec::Latest, &Default::default(), &ScanReads);
        if let Err(failure) = check_outcome(name, &result, expectation(leaf)) {
            failures.push(failure);
            continue;
        }
        let (Ok(snapshot), Some(expected)) = (result, expected) else { continue };
        let expected_files = parquet_files(expected);
        let expected_rows: u64 = expected_files.iter().map(|f| parquet_row_count(&local(f)).unwrap()).sum();
        match snapshot_rows(&snapshot) {
            Ok(rows) if rows == expected_rows => {}
            Ok(rows) => failures.push(format!("{name}: {rows} rows, {expected_rows} expected")),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
        let columns: Vec<String> = snapshot.schema.fields().iter().map(|f| f.name().clone()).collect();
        let expected_columns: Vec<String> = OpenedFile::open(&local(&expected_files[0]))
            .unwrap()
            .schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let set = |c: &[String]| c.iter().map(|s| s.to_lowercase()).collect::<BTreeSet<_>>();
        if set(&columns) != set(&expected_columns) {
            failures.push(format!("{name}: columns {columns:?}, expected {expected_columns:?}"));
        } else if columns != expected_columns {
            order_differs.push(name.clone());
        }
        compared += 1;
    }
    eprintln!(
        "{} golden tables, {compared} compared with expected/; column order differs in {order_differs:?}",
        tables.len()
    );
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(compared >= 55, "only {compared} tables compared");
}

#[test]
fn every_kernel_table_loads_and_its_deletion_vectors_decode() {
    let Some(root) = testing_root() else { return };
    let tables = kernel_tables(&root);
    assert!(tables.len() >= 35, "{} kernel tables", tables.len());
    let mut failures = Vec::new();
    for (name, table) in &tables {
        let result = load_snapshot(&local(table), SnapshotSpec::Latest, &Default::default(), &ScanReads);
        if let Err(failure) = check_outcome(name, &result, expectation(name)) {
            failures.push(failure);
            continue;
        }
        if let Ok(snapshot) = result {
            // Every active file exists, and every deletion vector decodes with its cardinality.
            if let Err(e) = snapshot_rows(&snapshot) {
                failures.push(format!("{name}: {e}"));
            }
            // Two of the kernel's tables are logs without their data files.
            let log_only = ["app-txn-with-last-updated", "with_checkpoint_no_last_checkpoint"].contains(&name.as_str());
            if !log_only && snapshot.files.iter().any(|f| !path_of(&f.path).is_file()) {
                failures.push(format!("{name}: an active file is missing"));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn structural_golden_tables() {
    let Some(root) = testing_root() else { return };
    let golden = root.join("golden");
    let checkpoint =
        load_snapshot(&local(&golden.join("checkpoint/delta")), SnapshotSpec::Latest, &Default::default(), &ScanReads)
            .unwrap();
    assert_eq!(checkpoint.version, 14);
    assert_eq!(checkpoint.metrics.checkpoint_version, Some(10));
    assert_eq!(checkpoint.metrics.commits_read, 4);
    assert!(checkpoint.metrics.last_checkpoint_hint_used);
    for name in ["normal-a", "normal-b", "special-a", "special-b"] {
        let root = local(&golden.join(format!("canonicalized-paths-{name}/delta")));
        let snapshot = load_snapshot(&root, SnapshotSpec::Latest, &Default::default(), &ScanReads).unwrap();
        assert_eq!((snapshot.version, snapshot.files.len()), (1, 0), "canonicalized-paths-{name}");
        // Version 0's one file is an absolute path outside the table: read only when allowed.
        let refused = load_snapshot(&root, SnapshotSpec::Version(0), &Default::default(), &ScanReads).unwrap_err();
        assert!(
            matches!(&refused, PqsiftError::Table { reason, .. } if reason.contains("outside its root")),
            "{refused}"
        );
        let before = load_snapshot(&root, SnapshotSpec::Version(0), &AllowedLocations::Any, &ScanReads).unwrap();
        assert_eq!(before.files.len(), 1, "canonicalized-paths-{name} at version 0");
    }
    // Escaped characters: `bar%2Dbar` in the log is `bar-bar` on disk.
    let listing = LogListing::list(&local(&golden.join("data-reader-absolute-paths-escaped-chars/delta"))).unwrap();
    let escaped = replay(&listing.segment(VersionSpec::Latest).unwrap(), &ScanReads).unwrap();
    assert!(escaped.metadata.is_none());
    assert!(escaped.files.iter().any(|f| path_of(&f.path).ends_with("bar-bar.snappy.parquet")), "{:?}", escaped.files);
    // The last-checkpoint hint is corrupt: the listing still finds the checkpoint.
    let corrupt = load_snapshot(
        &local(&golden.join("corrupted-last-checkpoint-kernel/delta")),
        SnapshotSpec::Latest,
        &Default::default(),
        &ScanReads,
    )
    .unwrap();
    assert_eq!((corrupt.version, corrupt.metrics.checkpoint_version), (11, Some(10)));
    // Protocol and metadata come from the newest commit that has them.
    let latest = load_snapshot(
        &local(&golden.join("log-replay-latest-metadata-protocol/delta")),
        SnapshotSpec::Latest,
        &Default::default(),
        &ScanReads,
    )
    .unwrap();
    assert_eq!(latest.protocol.min_reader_version, 3);
    let multi = load_snapshot(
        &local(&golden.join("multi-part-checkpoint/delta")),
        SnapshotSpec::Latest,
        &Default::default(),
        &ScanReads,
    )
    .unwrap();
    assert_eq!((multi.metrics.checkpoint_version, multi.metrics.checkpoint_parts), (Some(1), 2));
    let v2 = load_snapshot(
        &local(&golden.join("v2-checkpoint-json/delta")),
        SnapshotSpec::Latest,
        &Default::default(),
        &ScanReads,
    )
    .unwrap();
    assert_eq!(v2.metrics.checkpoint_version, Some(2));
    assert!(v2.reader_features.v2_checkpoint);
}

#[test]
fn deletion_vector_of_table_with_dv_small_deletes_the_rows_holding_0_and_9() {
    let Some(root) = testing_root() else { return };
    let table = root.join("tables/table-with-dv-small");
    let snapshot = load_snapshot(&local(&table), SnapshotSpec::Latest, &Default::default(), &ScanReads).unwrap();
    assert_eq!(snapshot.files.len(), 1);
    let file = &snapshot.files[0];
    let dv = file.deletion_vector.as_ref().expect("a deletion vector");
    assert_eq!((dv.storage_type.as_str(), dv.cardinality), ("u", 2));
    let deleted = dv.load(&local(&table)).unwrap();
    // The commit deleted `value IN (0, 9)`: the DV holds the positions of those rows.
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(path_of(&file.path)).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let mut values = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let column = arrow::compute::cast(batch.column_by_name("value").unwrap(), &DataType::Int64).unwrap();
        values.extend(column.as_primitive::<Int64Type>().iter().map(|v| v.unwrap()));
    }
    assert_eq!(values.len(), 10, "10 rows written");
    let positions: Vec<u64> =
        values.iter().enumerate().filter(|(_, v)| matches!(v, 0 | 9)).map(|(i, _)| i as u64).collect();
    assert_eq!(deleted, positions);
    assert_eq!(snapshot_rows(&snapshot).unwrap(), 8);
    // Version 0, before the delete: no deletion vector.
    let before = load_snapshot(&local(&table), SnapshotSpec::Version(0), &Default::default(), &ScanReads).unwrap();
    assert!(before.files[0].deletion_vector.is_none());
    // A corrupted descriptor is refused, not read.
    let mut wrong = dv.clone();
    wrong.cardinality = 3;
    assert!(matches!(wrong.load(&local(&table)), Err(PqsiftError::Corrupt { .. })));
    let mut oversized = dv.clone();
    oversized.size_in_bytes = i32::MAX;
    assert!(matches!(oversized.load(&local(&table)), Err(PqsiftError::Corrupt { .. })));
}

#[test]
fn inline_deletion_vectors_round_trip() {
    let rows = [0u64, 7, 1 << 33, (1 << 33) + 5];
    let dv = deletion_vector::DeletionVectorDescriptor {
        storage_type: "i".into(),
        path_or_inline_dv: deletion_vector::encode_inline(&rows),
        offset: None,
        size_in_bytes: 0,
        cardinality: 4,
    };
    assert_eq!(dv.load(&local(Path::new("/t"))).unwrap(), rows);
    let bad = deletion_vector::DeletionVectorDescriptor { path_or_inline_dv: "not z85 ~~~~".into(), ..dv };
    assert!(bad.load(&local(Path::new("/t"))).is_err());
}

/// The `(path, dv id)` set of a replay.
#[expect(clippy::mutable_key_type, reason = "a Location hashes by its text; its store client is not part of the key")]
fn file_keys(files: &[log_replay::ActiveFile]) -> BTreeSet<(Location, Option<String>)> {
    files.iter().map(|f| (f.path.clone(), f.add.deletion_vector.as_ref().map(|d| d.unique_id()))).collect()
}

#[test]
fn checkpoints_give_the_same_state_as_the_commits_alone() {
    let Some(root) = testing_root() else { return };
    let mut tables: Vec<(String, PathBuf)> =
        golden_tables(&root).into_iter().map(|(n, p, _)| (n, p)).chain(kernel_tables(&root)).collect();
    tables.sort();
    let mut checked = Vec::new();
    for (name, table) in tables {
        if expectation(name.rsplit('/').next().unwrap()) != Expect::Loads {
            continue;
        }
        let Ok(listing) = LogListing::list(&local(&table)) else { continue };
        let Ok(segment) = listing.segment(VersionSpec::Latest) else { continue };
        let Some(checkpoint) = &segment.checkpoint else { continue };
        // Only where every commit from 0 still exists.
        if !(0..=segment.version).all(|v| listing.commits.contains_key(&v)) {
            continue;
        }
        let Ok(with) = replay(&segment, &ScanReads) else { continue };
        let commits_only = LogSegment {
            checkpoint: None,
            commits: (0..=segment.version).map(|v| listing.commits[&v].clone()).collect(),
            hint_used: None,
            ..segment.clone()
        };
        let without = replay(&commits_only, &ScanReads).unwrap();
        assert_eq!(file_keys(&with.files), file_keys(&without.files), "{name}: checkpoint at {}", checkpoint.version);
        assert_eq!(with.protocol, without.protocol, "{name}");
        // The kernel's `parquet_row_group_skipping` checkpoint was edited by hand to add a
        // column its commits never had: the checkpoint is the table's state.
        if name != "parquet_row_group_skipping" {
            let schema = |r: &log_replay::Replayed| {
                r.metadata
                    .as_ref()
                    .map(|m| schema::parse_schema(&table.display().to_string(), &m.schema_string).unwrap())
            };
            assert_eq!(schema(&with), schema(&without), "{name}");
        }
        // The checkpoint's own add rows, as read, equal those of the same version replayed.
        let at_checkpoint = LogSegment {
            version: checkpoint.version,
            checkpoint: None,
            commits: (0..=checkpoint.version).map(|v| listing.commits[&v].clone()).collect(),
            hint_used: None,
            ..segment.clone()
        };
        let from_commits = replay(&at_checkpoint, &ScanReads).unwrap();
        let checkpoint_only = LogSegment { version: checkpoint.version, commits: Vec::new(), ..segment.clone() };
        let from_checkpoint = replay(&checkpoint_only, &ScanReads).unwrap();
        assert_eq!(
            file_keys(&from_checkpoint.files),
            file_keys(&from_commits.files),
            "{name}: checkpoint {}",
            checkpoint.version
        );
        checked.push(format!("{name}@{}", checkpoint.version));
    }
    eprintln!("checkpoints checked against their commits: {checked:?}");
    for kind in [
        "multi-part-checkpoint",
        "v2-checkpoint-json",
        "v2-checkpoints-json-with-sidecars",
        "v2-checkpoints-parquet-without-sidecars",
        "v2-parquet-sidecars-struct-stats-only",
        "with_checkpoint_no_last_checkpoint",
    ] {
        assert!(checked.iter().any(|c| c.starts_with(kind)), "{kind} not checked: {checked:?}");
    }
}

#[test]
fn v2_checkpoints_read_their_sidecars() {
    let Some(root) = testing_root() else { return };
    for name in [
        "v2-checkpoints-json-with-sidecars",
        "v2-checkpoints-parquet-with-last-checkpoint",
        "v2-json-sidecars-struct-stats-only",
        "v2-parquet-sidecars-struct-stats-only",
    ] {
        let snapshot = load_snapshot(
            &local(&root.join("tables").join(name)),
            SnapshotSpec::Latest,
            &Default::default(),
            &ScanReads,
        )
        .unwrap();
        assert!(snapshot.metrics.sidecars_read > 0, "{name}: {:?}", snapshot.metrics);
        assert!(!snapshot.files.is_empty(), "{name}");
    }
    // Without `_last_checkpoint` the listing finds the checkpoint all the same.
    let snapshot = load_snapshot(
        &local(&root.join("tables/with_checkpoint_no_last_checkpoint")),
        SnapshotSpec::Latest,
        &Default::default(),
        &ScanReads,
    )
    .unwrap();
    assert_eq!((snapshot.version, snapshot.metrics.checkpoint_version), (3, Some(2)));
    assert!(!snapshot.metrics.last_checkpoint_hint_used);
}

#[test]
fn stats_parsed_fill_file_stats() {
    let Some(root) = testing_root() else { return };
    let table = root.join("tables/v2-parquet-sidecars-struct-stats-only");
    let snapshot = load_snapshot(&local(&table), SnapshotSpec::Latest, &Default::default(), &ScanReads).unwrap();
    assert!(
        snapshot.files.iter().all(|f| f.stats.parse().is_some_and(|s| s.num_records.is_some())),
        "{:?}",
        snapshot.files
    );
}

#[test]
fn time_travel_by_version_matches_the_shorter_tables() {
    let Some(root) = testing_root() else { return };
    let golden = root.join("golden");
    let full = golden.join("snapshot-data3/delta");
    for version in 0..=3u64 {
        let snapshot =
            load_snapshot(&local(&full), SnapshotSpec::Version(version), &Default::default(), &ScanReads).unwrap();
        assert_eq!(snapshot.version, version);
        let expected: u64 = parquet_files(&golden.join(format!("snapshot-data{version}/expected")))
            .iter()
            .map(|f| parquet_row_count(&local(f)).unwrap())
            .sum();
        assert_eq!(snapshot_rows(&snapshot).unwrap(), expected, "snapshot-data3 at version {version}");
        let names =
            |s: &DeltaSnapshot| s.files.iter().map(|f| f.path.file_name().unwrap().to_owned()).collect::<HashSet<_>>();
        let shorter = load_snapshot(
            &local(&golden.join(format!("snapshot-data{version}/delta"))),
            SnapshotSpec::Latest,
            &Default::default(),
            &ScanReads,
        )
        .unwrap();
        assert_eq!(names(&snapshot), names(&shorter), "version {version}");
    }
    let travel = golden.join("time-travel-start-start20-start40/delta");
    for (version, name) in
        [(0, "time-travel-start"), (1, "time-travel-start-start20"), (2, "time-travel-start-start20-start40")]
    {
        let snapshot =
            load_snapshot(&local(&travel), SnapshotSpec::Version(version), &Default::default(), &ScanReads).unwrap();
        let expected: u64 = parquet_files(&golden.join(name).join("expected"))
            .iter()
            .map(|f| parquet_row_count(&local(f)).unwrap())
            .sum();
        assert_eq!(snapshot_rows(&snapshot).unwrap(), expected, "{name}");
    }
    let error = load_snapshot(&local(&full), SnapshotSpec::Version(4), &Default::default(), &ScanReads).unwrap_err();
    assert!(
        matches!(&error, PqsiftError::Table { reason, .. } if reason.contains("version 4 does not exist")),
        "{error:?}"
    );
    // Through a checkpoint: versions before it replay from the commits.
    let checkpointed = golden.join("checkpoint/delta");
    assert_eq!(
        load_snapshot(&local(&checkpointed), SnapshotSpec::Version(9), &Default::default(), &ScanReads)
            .unwrap()
            .metrics
            .checkpoint_version,
        None
    );
    assert_eq!(
        load_snapshot(&local(&checkpointed), SnapshotSpec::Version(12), &Default::default(), &ScanReads)
            .unwrap()
            .metrics
            .checkpoint_version,
        Some(10)
    );
    // Timestamps: far future is the latest; before the first commit is an error.
    assert_eq!(
        load_snapshot(&local(&full), SnapshotSpec::Timestamp(i64::MAX), &Default::default(), &ScanReads)
            .unwrap()
            .version,
        3
    );
    assert!(matches!(
        load_snapshot(&local(&full), SnapshotSpec::Timestamp(0), &Default::default(), &ScanReads),
        Err(PqsiftError::Table { .. })
    ));
}

#[test]
fn seed_004_the_checkpoint_read_decodes_add_only() {
    let Some(root) = testing_root() else { return };
    // Every Parquet checkpoint of the test data: the read decodes `add.path` for the selected
    // rows and the rest of `add` only for the add rows, so fewer values than a full read of
    // the `add` column (every leaf for every row).
    let mut checked = 0;
    let mut fewer = 0;
    let mut pruned = 0;
    for (name, table) in golden_tables(&root).into_iter().map(|(n, p, _)| (n, p)).chain(kernel_tables(&root)) {
        let Ok(listing) = LogListing::list(&local(&table)) else { continue };
        for checkpoint in listing.checkpoints.values() {
            for part in checkpoint.parts.iter().filter(|p| !p.is_json()) {
                let (adds, metrics) = read_add_actions(&part.path, &ScanReads).unwrap();
                let opened = OpenedFile::open(&part.path).unwrap();
                let descr = opened.metadata.file_metadata().schema_descr_ptr();
                let add_leaves =
                    (0..descr.num_columns()).filter(|&i| descr.column(i).path().parts()[0] == "add").count() as u64;
                assert_eq!(metrics.add_rows, adds.len() as u64);
                assert!(metrics.read.rows_selected <= metrics.read.rows_total, "{name}");
                eprintln!("{name} {}: {add_leaves} add leaves, {metrics:?}", part.path.file_name().unwrap());
                if metrics.read.row_groups_pruned > 0 || metrics.read.pages_pruned > 0 {
                    // Row groups holding no add were never decoded.
                    assert!(metrics.read.values_decoded < metrics.read.rows_total, "{name}: {metrics:?}");
                    pruned += 1;
                }
                assert!(metrics.read.values_decoded <= metrics.read.rows_total * add_leaves, "{name}: {metrics:?}");
                if add_leaves > 0 && metrics.add_rows < metrics.read.rows_total {
                    assert!(metrics.read.values_decoded < metrics.read.rows_total * add_leaves, "{name}: {metrics:?}");
                    fewer += 1;
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 15 && fewer >= 10, "{checked} checkpoints, {fewer} with non-add rows");
    // v2 checkpoints whose adds are all in sidecars, multi-part parts without adds: pruned
    // whole by `add.path IS NOT NULL` on the statistics.
    assert!(pruned >= 4, "{pruned} checkpoint files with row groups pruned");
}

/// A checkpoint as Spark lays out a large one: removes first, then adds (row groups of 100
/// rows, small pages), so that `add.path IS NOT NULL` prunes whole row groups.
#[test]
fn seed_004_row_groups_of_other_actions_are_pruned() {
    let dir = std::env::temp_dir().join(format!("pqsift_delta_prune_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("00000000000000000001.checkpoint.parquet");
    let (removes, adds) = (700usize, 300usize);
    let rows = removes + adds;
    let add_path: StringArray = (0..rows).map(|i| (i >= removes).then(|| format!("add-{i:05}.parquet"))).collect();
    let add_size: Int64Array = (0..rows).map(|i| (i >= removes).then_some(i as i64)).collect();
    let add_nulls = arrow::buffer::NullBuffer::from((0..rows).map(|i| i >= removes).collect::<Vec<bool>>());
    let add = StructArray::new(
        vec![Field::new("path", DataType::Utf8, true), Field::new("size", DataType::Int64, true)].into(),
        vec![Arc::new(add_path) as ArrayRef, Arc::new(add_size) as ArrayRef],
        Some(add_nulls),
    );
    let remove_path: StringArray = (0..rows).map(|i| (i < removes).then(|| format!("old-{i:05}.parquet"))).collect();
    let remove_nulls = arrow::buffer::NullBuffer::from((0..rows).map(|i| i < removes).collect::<Vec<bool>>());
    let remove = StructArray::new(
        vec![Field::new("path", DataType::Utf8, true)].into(),
        vec![Arc::new(remove_path) as ArrayRef],
        Some(remove_nulls),
    );
    let batch =
        RecordBatch::try_from_iter([("add", Arc::new(add) as ArrayRef), ("remove", Arc::new(remove) as ArrayRef)])
            .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(100))
        .set_data_page_row_count_limit(25)
        .set_write_batch_size(25)
        .build();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props))
            .unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();

    let (read, metrics) = read_add_actions(&local(&path), &ScanReads).unwrap();
    assert_eq!(read.len(), adds);
    assert_eq!(read[0].path, "add-00700.parquet");
    assert_eq!((metrics.read.row_groups_total, metrics.read.row_groups_pruned), (10, 7), "{metrics:?}");
    assert_eq!((metrics.read.rows_total, metrics.read.rows_selected), (1000, 300), "{metrics:?}");
    // `add` decoded for the 300 adds only: nothing for the removes' row groups.
    assert_eq!(metrics.read.values_decoded, 300, "{metrics:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn schema_of_column_mapped_tables_carries_physical_names() {
    let Some(root) = testing_root() else { return };
    for (name, mode) in [("id", schema::ColumnMappingMode::Id), ("name", schema::ColumnMappingMode::Name)] {
        let snapshot = load_snapshot(
            &local(&root.join("tables/partition_cm").join(name)),
            SnapshotSpec::Latest,
            &Default::default(),
            &ScanReads,
        )
        .unwrap();
        assert_eq!(snapshot.column_mapping_mode, mode);
        for field in snapshot.schema.fields() {
            assert!(field.metadata().contains_key(schema::PHYSICAL_NAME_KEY), "{name}: {field:?}");
            assert!(field.metadata().contains_key(schema::COLUMN_ID_KEY), "{name}: {field:?}");
        }
        // Partition values are keyed by physical names.
        let physical: HashSet<&str> = snapshot.schema.fields().iter().map(|f| schema::physical_name(f, mode)).collect();
        for file in &snapshot.files {
            assert!(
                file.partition_values.keys().all(|k| physical.contains(k.as_str())),
                "{name}: {:?}",
                file.partition_values
            );
        }
    }
    let ntz = load_snapshot(
        &local(&root.join("golden/data-reader-timestamp_ntz/delta")),
        SnapshotSpec::Latest,
        &Default::default(),
        &ScanReads,
    )
    .unwrap();
    assert!(ntz.schema.fields().iter().any(|f| matches!(f.data_type(), DataType::Timestamp(_, None))));
}

#[test]
fn partition_values_keep_nulls_and_decode_paths() {
    let Some(root) = testing_root() else { return };
    let snapshot = load_snapshot(
        &local(&root.join("tables/basic_partitioned")),
        SnapshotSpec::Latest,
        &Default::default(),
        &ScanReads,
    )
    .unwrap();
    assert_eq!(snapshot.partition_columns, ["letter"]);
    assert!(snapshot.files.iter().any(|f| f.partition_values.get("letter") == Some(&None)), "{:?}", snapshot.files);
    assert!(snapshot.files.iter().all(|f| path_of(&f.path).is_file()));
    let ntz = load_snapshot(
        &local(&root.join("tables/data-reader-timestamp_ntz")),
        SnapshotSpec::Latest,
        &Default::default(),
        &ScanReads,
    )
    .unwrap();
    assert!(
        ntz.files.iter().all(|f| path_of(&f.path).is_file()),
        "{:?}",
        ntz.files.iter().map(|f| &f.path).collect::<Vec<_>>()
    );
}

/// Every Parquet checkpoint (and sidecar) of the test tables: the typed reading of the
/// `add` column gives exactly the actions the JSON route gives.
#[test]
fn typed_add_rows_equal_the_json_route_on_every_checkpoint() {
    let Some(root) = testing_root() else { return };
    let mut checked = 0;
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let in_log = path.components().any(|c| c.as_os_str() == "_delta_log");
            if !in_log || !name.ends_with(".parquet") {
                continue;
            }
            let Ok(opened) = OpenedFile::open(&local(&path)) else { continue };
            if opened.schema.field_with_name("add").is_err() {
                continue;
            }
            let read = ScanReads.read_columns(&local(&path), &["add".into()], "add.path IS NOT NULL").unwrap();
            for batch in read.batches {
                let column = batch.column_by_name("add").unwrap();
                let typed = super::action_rows::adds_from_array(column.as_ref()).expect("a known layout").unwrap();
                let json: Vec<actions::Add> = super::action_rows::array_to_json(column.as_ref())
                    .unwrap()
                    .into_iter()
                    .filter(|v| !v.is_null())
                    .map(|v| serde_json::from_value(v).unwrap())
                    .map(|add: actions::Add| actions::Add {
                        tags: None,
                        base_row_id: None,
                        default_row_commit_version: None,
                        clustering_provider: None,
                        ..add
                    })
                    .collect();
                assert_eq!(typed, json, "{}", path.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} checkpoints found");
}
