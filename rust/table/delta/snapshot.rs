//! A snapshot of a Delta table: the public entry of the module. [`load_snapshot`] lists the
//! log, picks the segment of the requested version (latest, a version, or the newest commit
//! at or before a timestamp), replays it, checks the protocol, and parses the schema.
//!
//! ```no_run
//! use pqsift::reading::table_reads::ScanReads;
//! use pqsift::table::delta::{load_snapshot, SnapshotSpec};
//! let root = std::path::Path::new("/data/events").into();
//! let snapshot = load_snapshot(&root, SnapshotSpec::Latest, &Default::default(), &ScanReads).unwrap();
//! println!("version {}: {} files, schema {}", snapshot.version, snapshot.files.len(), snapshot.schema);
//! for file in &snapshot.files {
//!     let rows = file.stats.parse().and_then(|s| s.num_records);
//!     println!("{} ({rows:?} rows, {:?})", file.path, file.partition_values);
//! }
//! ```

use std::collections::BTreeMap;

use arrow::datatypes::SchemaRef;
use serde_json::Value;

use super::actions::{Action, Add, Metadata, Protocol};
use super::deletion_vector::DeletionVectorDescriptor;
use super::log_replay::{LogReplayMetrics, replay};
use super::log_segment::{LogListing, VersionSpec};
use super::protocol::{ReaderFeatures, check_protocol};
use super::schema::{ColumnMappingMode, parse_schema};
use crate::error::{PqsiftError, Result};
use crate::storage::Location;
use crate::storage::source::{Entry, read_many, stat};
use crate::table::allowed_locations::AllowedLocations;
use crate::table::parquet_reads::ParquetReads;

/// Which snapshot to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotSpec {
    /// The newest version.
    Latest,
    /// Exactly this version.
    Version(u64),
    /// The newest version whose commit time is at or before this instant (ms since the
    /// epoch). A commit's time is its `commitInfo.inCommitTimestamp` when it has one, else
    /// its file's modification time (made increasing, as Delta does).
    Timestamp(i64),
}

/// A file's statistics from the log (`stats` JSON or `stats_parsed`). String bounds may be
/// prefixes and timestamp bounds are truncated to milliseconds: treat bounds as inexact.
///
/// ```
/// use pqsift::table::delta::snapshot::FileStats;
/// let stats = FileStats::from_json(r#"{"numRecords":3,"minValues":{"a":1},"maxValues":{"a":9},"nullCount":{"a":0}}"#).unwrap();
/// assert_eq!(stats.num_records, Some(3));
/// assert_eq!(stats.max_values["a"], 9);
/// assert!(FileStats::from_json("not json").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileStats {
    /// Rows in the file (before deletion vectors).
    pub num_records: Option<i64>,
    /// Per column (physical names, nested as objects), the minimum.
    pub min_values: Value,
    /// Per column, the maximum.
    pub max_values: Value,
    /// Per column, the null count.
    pub null_count: Value,
    /// `tightBounds`: `false` when a deletion vector made the bounds loose.
    pub tight_bounds: Option<bool>,
}

impl FileStats {
    /// Parses a `stats` string (`None` when it is not a JSON object).
    pub fn from_json(text: &str) -> Option<Self> {
        Self::from_value(&serde_json::from_str(text).ok()?)
    }

    /// Reads a stats object (`None` when it is not an object).
    pub fn from_value(value: &Value) -> Option<Self> {
        let object = value.as_object()?;
        let field = |name: &str| object.get(name).cloned().unwrap_or(Value::Null);
        Some(Self {
            num_records: object.get("numRecords").and_then(Value::as_i64),
            min_values: field("minValues"),
            max_values: field("maxValues"),
            null_count: field("nullCount"),
            tight_bounds: object.get("tightBounds").and_then(Value::as_bool),
        })
    }
}

/// A file's statistics as the log holds them (`stats` JSON text, or a checkpoint's
/// `stats_parsed`), parsed only when pruning asks: most scans of a large table never
/// need the statistics of every file, and parsing them all made up a quarter of a replay.
///
/// ```
/// use pqsift::table::delta::snapshot::LogStats;
/// let stats = LogStats::from_json(r#"{"numRecords":3}"#);
/// assert_eq!(stats.parse().unwrap().num_records, Some(3));
/// assert!(LogStats::default().parse().is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogStats {
    json: Option<String>,
    parsed: Option<Value>,
}

impl LogStats {
    /// Statistics written as JSON text (an `add`'s `stats`).
    pub fn from_json(text: &str) -> Self {
        Self { json: Some(text.to_string()), parsed: None }
    }

    fn of_add(add: &mut Add) -> Self {
        Self { json: add.stats.take(), parsed: add.stats_parsed.take() }
    }

    /// The statistics (`None` when the log has none, or they do not parse).
    pub fn parse(&self) -> Option<FileStats> {
        self.json
            .as_deref()
            .and_then(FileStats::from_json)
            .or_else(|| self.parsed.as_ref().and_then(FileStats::from_value))
    }
}

/// An active data file of a snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct DeltaFile {
    /// Absolute, percent-decoded location.
    pub path: Location,
    /// Size in bytes.
    pub size: i64,
    /// Partition values as in the log (physical names under column mapping; `None` = null).
    pub partition_values: BTreeMap<String, Option<String>>,
    /// Statistics from the log, parsed on demand.
    pub stats: LogStats,
    /// The rows deleted from it, if any.
    pub deletion_vector: Option<DeletionVectorDescriptor>,
    /// Write time (ms since the epoch).
    pub modification_time: i64,
}

/// A Delta table at one version.
#[derive(Debug, Clone)]
pub struct DeltaSnapshot {
    /// The table's root directory.
    pub table_root: Location,
    /// The version.
    pub version: u64,
    /// The protocol in force.
    pub protocol: Protocol,
    /// What the protocol asks of the reader.
    pub reader_features: ReaderFeatures,
    /// The metadata in force.
    pub metadata: Metadata,
    /// The logical schema, in `schemaString` order (column mapping in the field metadata).
    pub schema: SchemaRef,
    /// The partition columns (logical names), in order.
    pub partition_columns: Vec<String>,
    /// How file columns map to the schema's.
    pub column_mapping_mode: ColumnMappingMode,
    /// The active files.
    pub files: Vec<DeltaFile>,
    /// What replay read.
    pub metrics: LogReplayMetrics,
}

impl DeltaSnapshot {
    /// Rows deleted by deletion vectors, summed over the files (from the descriptors).
    pub fn deleted_rows(&self) -> u64 {
        self.files.iter().filter_map(|f| f.deletion_vector.as_ref()).map(|dv| dv.cardinality.max(0) as u64).sum()
    }
}

/// `true` when `root` has a `_delta_log` directory.
///
/// ```
/// assert!(!pqsift::table::delta::is_delta_table(&std::path::Path::new("/nonexistent").into()));
/// ```
pub fn is_delta_table(root: &Location) -> bool {
    matches!(stat(&root.join("_delta_log")), Ok(Some(Entry::Directory)))
}

/// Loads the snapshot `spec` of the table at `root`; every data file and deletion vector
/// it names must be where `allowed` lets the table read. A Parquet checkpoint is read
/// through `reads`.
///
/// Errors: [`PqsiftError::Table`] when `root` has no `_delta_log`, the version does not exist
/// or cannot be rebuilt (commits missing), or the log has no protocol or no metadata;
/// a data file or deletion vector outside the table's root that `allowed` does not allow;
/// [`PqsiftError::Unsupported`] for a reader version or feature this reader does not
/// implement; [`PqsiftError::Corrupt`] / [`PqsiftError::Io`] for unreadable log files.
pub fn load_snapshot(
    root: &Location,
    spec: SnapshotSpec,
    allowed: &AllowedLocations,
    reads: &dyn ParquetReads,
) -> Result<DeltaSnapshot> {
    let listing = LogListing::list(root)?;
    let version = match spec {
        SnapshotSpec::Latest => VersionSpec::Latest,
        SnapshotSpec::Version(v) => VersionSpec::Version(v),
        SnapshotSpec::Timestamp(ms) => VersionSpec::Version(version_at(&listing, ms)?),
    };
    let segment = listing.segment(version)?;
    let replayed = replay(&segment, reads)?;
    let protocol = replayed.protocol.ok_or_else(|| {
        PqsiftError::table(root, format!("no protocol action in the log up to version {}", segment.version))
    })?;
    let metadata = replayed.metadata.ok_or_else(|| {
        PqsiftError::table(root, format!("no metaData action in the log up to version {}", segment.version))
    })?;
    let name = root.to_string();
    let reader_features = check_protocol(&name, &protocol)?;
    let schema = parse_schema(&name, &metadata.schema_string)?;
    let column_mapping_mode = ColumnMappingMode::from_configuration(&name, &metadata.configuration)?;
    for column in &metadata.partition_columns {
        if !schema.fields().iter().any(|f| f.name().eq_ignore_ascii_case(column)) {
            return Err(PqsiftError::table(root, format!("partition column {column:?} is not in the schema")));
        }
    }
    let allowed = allowed.for_table(root);
    for file in &replayed.files {
        allowed.check(&file.path, "data file")?;
        if let Some(dv) = &file.add.deletion_vector
            && let Some(path) = dv.absolute_path(root)?
        {
            allowed.check(&path, "deletion vector")?;
        }
    }
    let files = replayed
        .files
        .into_iter()
        .map(|file| {
            let mut add = file.add;
            let stats = LogStats::of_add(&mut add);
            DeltaFile {
                path: file.path,
                size: add.size,
                partition_values: add.partition_values,
                stats,
                deletion_vector: add.deletion_vector,
                modification_time: add.modification_time,
            }
        })
        .collect();
    Ok(DeltaSnapshot {
        table_root: root.clone(),
        version: segment.version,
        protocol,
        reader_features,
        partition_columns: metadata.partition_columns.clone(),
        metadata,
        schema,
        column_mapping_mode,
        files,
        metrics: replayed.metrics,
    })
}

/// The newest version whose commit time is at or before `ms`.
fn version_at(listing: &LogListing, ms: i64) -> Result<u64> {
    let root = &listing.table_root;
    let mut best = None;
    let mut previous: Option<i64> = None;
    // From a store, the commits are fetched at once.
    let paths: Vec<Location> = listing.commits.values().map(|c| c.path.clone()).collect();
    let texts = read_many(&paths)?;
    for ((&version, commit), text) in listing.commits.iter().zip(texts) {
        let time = match commit_timestamp(&text) {
            Some(ict) => ict,
            // File times are made increasing, as Delta does for clocks that went back.
            None => previous.map_or(commit.modified_ms, |p| commit.modified_ms.max(p + 1)),
        };
        previous = Some(time);
        if time <= ms {
            best = Some(version);
        } else {
            break;
        }
    }
    let first = listing.commits.first_key_value();
    best.ok_or_else(|| match first {
        Some((v, _)) => {
            PqsiftError::table(root, format!("timestamp {ms} is before the earliest available commit (version {v})"))
        }
        None => PqsiftError::table(root, "the log holds no commit to travel to"),
    })
}

/// `commitInfo.inCommitTimestamp` of a commit (its first action, when in-commit timestamps
/// are enabled), looked for in the first lines only.
fn commit_timestamp(text: &[u8]) -> Option<i64> {
    for line in text.split(|&b| b == b'\n').take(4) {
        if let Ok(line) = std::str::from_utf8(line)
            && let Ok(action) = Action::parse_line(line)
            && let Some(info) = action.commit_info
        {
            return info.in_commit_timestamp();
        }
    }
    None
}
