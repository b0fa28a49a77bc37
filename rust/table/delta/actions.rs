//! The actions of a Delta log, as serde types: one JSON object per line of a commit (and of
//! a JSON checkpoint), one row per action in a Parquet checkpoint (turned into the same JSON
//! shape by [`super::checkpoint`]). Unknown fields and unknown actions are ignored, as the
//! protocol asks of readers.
//!
//! ```
//! use pqsift::table::delta::actions::Action;
//! let line = r#"{"add":{"path":"a=1/part-0.parquet","partitionValues":{"a":"1"},"size":10,"modificationTime":5,"dataChange":true,"new":1}}"#;
//! let action = Action::parse_line(line).unwrap();
//! let add = action.add.unwrap();
//! assert_eq!(add.path, "a=1/part-0.parquet");
//! assert_eq!(add.partition_values["a"].as_deref(), Some("1"));
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::deletion_vector::DeletionVectorDescriptor;

/// One line of a commit: at most one of the fields is set (an unknown action sets none).
///
/// ```
/// use pqsift::table::delta::actions::Action;
/// let action = Action::parse_line(r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#).unwrap();
/// assert_eq!(action.protocol.unwrap().min_reader_version, 1);
/// assert!(Action::parse_line(r#"{"someFutureAction":{}}"#).unwrap().is_empty());
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Action {
    /// A file added to the table.
    #[serde(default)]
    pub add: Option<Add>,
    /// A file removed from the table (a tombstone).
    #[serde(default)]
    pub remove: Option<Remove>,
    /// The table's metadata: schema, partition columns, configuration.
    #[serde(default)]
    pub meta_data: Option<Metadata>,
    /// The reader and writer versions and features.
    #[serde(default)]
    pub protocol: Option<Protocol>,
    /// An application's transaction version.
    #[serde(default)]
    pub txn: Option<Txn>,
    /// Provenance of a commit (kept as JSON: writers put anything there).
    #[serde(default)]
    pub commit_info: Option<CommitInfo>,
    /// The header of a v2 checkpoint.
    #[serde(default)]
    pub checkpoint_metadata: Option<CheckpointMetadata>,
    /// A file of a v2 checkpoint's actions.
    #[serde(default)]
    pub sidecar: Option<Sidecar>,
    /// A domain's configuration.
    #[serde(default)]
    pub domain_metadata: Option<DomainMetadata>,
}

impl Action {
    /// Parses one line of a commit or JSON checkpoint.
    pub fn parse_line(line: &str) -> serde_json::Result<Self> {
        serde_json::from_str(line)
    }

    /// `true` when the line held no action this reader knows.
    pub fn is_empty(&self) -> bool {
        self.add.is_none()
            && self.remove.is_none()
            && self.meta_data.is_none()
            && self.protocol.is_none()
            && self.txn.is_none()
            && self.commit_info.is_none()
            && self.checkpoint_metadata.is_none()
            && self.sidecar.is_none()
            && self.domain_metadata.is_none()
    }
}

/// Partition values: partition column (physical name under column mapping) → its value as
/// a string, `None` for null.
pub type PartitionValueMap = BTreeMap<String, Option<String>>;

/// An `add` action: a data file of the table.
///
/// ```
/// let add: pqsift::table::delta::actions::Add = serde_json::from_str(
///     r#"{"path":"f.parquet","partitionValues":{},"size":1,"modificationTime":2,"dataChange":false,
///         "stats":"{\"numRecords\":3}"}"#).unwrap();
/// assert_eq!(add.stats.as_deref(), Some(r#"{"numRecords":3}"#));
/// assert!(add.deletion_vector.is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Add {
    /// URI-encoded path, relative to the table root or absolute.
    pub path: String,
    /// Partition values (strings; `None` for null).
    #[serde(default, deserialize_with = "null_as_default")]
    pub partition_values: PartitionValueMap,
    /// Size of the file in bytes.
    #[serde(default)]
    pub size: i64,
    /// Milliseconds since the epoch at which the file was written.
    #[serde(default, deserialize_with = "null_as_default")]
    pub modification_time: i64,
    /// Whether the commit changed data (vs. rearranged it).
    #[serde(default, deserialize_with = "null_as_default")]
    pub data_change: bool,
    /// The file's statistics as a JSON string.
    #[serde(default)]
    pub stats: Option<String>,
    /// The file's statistics as a struct (checkpoints written with
    /// `delta.checkpoint.writeStatsAsStruct`), in JSON form.
    #[serde(default, rename = "stats_parsed")]
    pub stats_parsed: Option<Value>,
    /// Free-form tags.
    #[serde(default)]
    pub tags: Option<BTreeMap<String, Option<String>>>,
    /// The deletion vector of the file, if rows of it are deleted.
    #[serde(default)]
    pub deletion_vector: Option<DeletionVectorDescriptor>,
    /// Row tracking: the first row id of the file.
    #[serde(default)]
    pub base_row_id: Option<i64>,
    /// Row tracking: the commit version rows default to.
    #[serde(default)]
    pub default_row_commit_version: Option<i64>,
    /// The clustering implementation that wrote the file.
    #[serde(default)]
    pub clustering_provider: Option<String>,
}

/// A `remove` action: a file logically deleted (a tombstone).
///
/// ```
/// let remove: pqsift::table::delta::actions::Remove =
///     serde_json::from_str(r#"{"path":"f.parquet","deletionTimestamp":5,"dataChange":true}"#).unwrap();
/// assert_eq!(remove.deletion_timestamp, Some(5));
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remove {
    /// URI-encoded path, relative to the table root or absolute.
    pub path: String,
    /// When the file was removed (ms since the epoch).
    #[serde(default)]
    pub deletion_timestamp: Option<i64>,
    /// Whether the commit changed data.
    #[serde(default, deserialize_with = "null_as_default")]
    pub data_change: bool,
    /// The deletion vector of the file removed.
    #[serde(default)]
    pub deletion_vector: Option<DeletionVectorDescriptor>,
    /// Size of the file in bytes.
    #[serde(default)]
    pub size: Option<i64>,
    /// Partition values of the file removed.
    #[serde(default)]
    pub partition_values: Option<PartitionValueMap>,
}

/// The `format` of a `metaData` action.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Format {
    /// Always `parquet`.
    #[serde(default)]
    pub provider: String,
    /// Options of the format.
    #[serde(default, deserialize_with = "string_map")]
    pub options: BTreeMap<String, String>,
}

/// A `metaData` action.
///
/// ```
/// let m: pqsift::table::delta::actions::Metadata = serde_json::from_str(
///     r#"{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}",
///         "partitionColumns":["a"],"configuration":{"delta.columnMapping.mode":"name","k":null}}"#).unwrap();
/// assert_eq!(m.partition_columns, ["a"]);
/// assert_eq!(m.configuration["delta.columnMapping.mode"], "name");
/// assert!(!m.configuration.contains_key("k"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// The table's unique id.
    #[serde(default)]
    pub id: String,
    /// A name, if any.
    #[serde(default)]
    pub name: Option<String>,
    /// A description, if any.
    #[serde(default)]
    pub description: Option<String>,
    /// The data files' format.
    #[serde(default)]
    pub format: Format,
    /// The table schema as Delta's JSON schema serialization (empty when the action has
    /// none: some of Delta's own log-only test tables leave it out).
    #[serde(default, deserialize_with = "null_as_default")]
    pub schema_string: String,
    /// The partition columns (logical names), in order.
    #[serde(default, deserialize_with = "null_as_default")]
    pub partition_columns: Vec<String>,
    /// Table properties (`delta.*`); null values are dropped.
    #[serde(default, deserialize_with = "string_map")]
    pub configuration: BTreeMap<String, String>,
    /// When the table was created (ms since the epoch).
    #[serde(default)]
    pub created_time: Option<i64>,
}

/// A `protocol` action.
///
/// ```
/// let p: pqsift::table::delta::actions::Protocol = serde_json::from_str(
///     r#"{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"]}"#).unwrap();
/// assert_eq!(p.reader_features.as_deref(), Some(&["deletionVectors".to_string()][..]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Protocol {
    /// The lowest reader version that can read the table.
    pub min_reader_version: i32,
    /// The lowest writer version that can write it.
    #[serde(default)]
    pub min_writer_version: i32,
    /// Reader features (reader version 3).
    #[serde(default)]
    pub reader_features: Option<Vec<String>>,
    /// Writer features (writer version 7).
    #[serde(default)]
    pub writer_features: Option<Vec<String>>,
}

/// A `txn` action: the last version an application committed.
///
/// ```
/// let t: pqsift::table::delta::actions::Txn = serde_json::from_str(r#"{"appId":"app","version":3}"#).unwrap();
/// assert_eq!((t.app_id.as_str(), t.version, t.last_updated), ("app", 3, None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Txn {
    /// The application.
    pub app_id: String,
    /// Its version.
    pub version: i64,
    /// When (ms since the epoch).
    #[serde(default)]
    pub last_updated: Option<i64>,
}

/// A `commitInfo` action, kept as JSON (writers put anything there), with accessors for the
/// fields a reader uses.
///
/// ```
/// let c: pqsift::table::delta::actions::CommitInfo =
///     serde_json::from_str(r#"{"timestamp":10,"inCommitTimestamp":12,"operation":"WRITE"}"#).unwrap();
/// assert_eq!((c.timestamp(), c.in_commit_timestamp()), (Some(10), Some(12)));
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct CommitInfo(pub Value);

impl CommitInfo {
    /// `inCommitTimestamp` (ms since the epoch), when the table writes them.
    pub fn in_commit_timestamp(&self) -> Option<i64> {
        self.0.get("inCommitTimestamp").and_then(Value::as_i64)
    }

    /// `timestamp`: the writer's clock at commit (ms since the epoch).
    pub fn timestamp(&self) -> Option<i64> {
        self.0.get("timestamp").and_then(Value::as_i64)
    }

    /// The operation (`WRITE`, `DELETE`, ...).
    pub fn operation(&self) -> Option<&str> {
        self.0.get("operation").and_then(Value::as_str)
    }
}

/// The `checkpointMetadata` action of a v2 checkpoint.
///
/// ```
/// let c: pqsift::table::delta::actions::CheckpointMetadata = serde_json::from_str(r#"{"version":2}"#).unwrap();
/// assert_eq!(c.version, 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointMetadata {
    /// The checkpoint's version.
    pub version: i64,
    /// Free-form tags.
    #[serde(default)]
    pub tags: Option<BTreeMap<String, Option<String>>>,
}

/// A `sidecar` action of a v2 checkpoint: a Parquet file of `add`/`remove` actions.
///
/// ```
/// let s: pqsift::table::delta::actions::Sidecar =
///     serde_json::from_str(r#"{"path":"a.parquet","sizeInBytes":5,"modificationTime":1}"#).unwrap();
/// assert_eq!((s.path.as_str(), s.size_in_bytes), ("a.parquet", 5));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sidecar {
    /// URI-encoded path, relative to `_delta_log/_sidecars/` or absolute.
    pub path: String,
    /// The file's size.
    #[serde(default)]
    pub size_in_bytes: i64,
    /// When it was written.
    #[serde(default)]
    pub modification_time: i64,
    /// Free-form tags.
    #[serde(default)]
    pub tags: Option<BTreeMap<String, Option<String>>>,
}

/// A `domainMetadata` action.
///
/// ```
/// let d: pqsift::table::delta::actions::DomainMetadata =
///     serde_json::from_str(r#"{"domain":"delta.rowTracking","configuration":"{}","removed":false}"#).unwrap();
/// assert_eq!(d.domain, "delta.rowTracking");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DomainMetadata {
    /// The domain.
    pub domain: String,
    /// Its configuration (a string, JSON by convention).
    #[serde(default)]
    pub configuration: String,
    /// Whether the domain was removed.
    #[serde(default)]
    pub removed: bool,
}

/// A field that may be `null` in the log: `null` becomes the type's default.
fn null_as_default<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A string map whose values may be `null` (dropped).
fn string_map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let map = Option::<BTreeMap<String, Option<String>>>::deserialize(d)?.unwrap_or_default();
    Ok(map.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))).collect())
}
