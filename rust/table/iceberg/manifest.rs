//! Manifest lists and manifests: from a snapshot to its live data and delete files.
//!
//! A snapshot's manifest list names its manifests, each with the partition spec it was
//! written with, whether it lists data or delete files, its sequence number and a summary
//! of its partition values. A manifest lists files: each entry's status (existing, added,
//! deleted), its data sequence number (inherited from the manifest when the entry left it
//! out), and the file — path, partition tuple, record count, and per column id the value,
//! null and NaN counts and lower and upper bounds.
//!
//! ```
//! use pqsift::table::iceberg::manifest::FileContent;
//! assert_eq!(FileContent::from_code(2), Some(FileContent::EqualityDeletes));
//! ```

use std::collections::HashMap;

use apache_avro::types::Value;

use super::avro::{as_bool, as_bytes, as_long, as_str, field, int_map, read_container};
use crate::error::{PqsiftError, Result};
use crate::storage::Location;

/// What a manifest or file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileContent {
    /// Rows.
    Data,
    /// Positions of deleted rows (or, format 3, deletion vectors).
    PositionDeletes,
    /// Values of deleted rows' equality columns.
    EqualityDeletes,
}

impl FileContent {
    /// The spec's code (0, 1, 2).
    pub fn from_code(code: i64) -> Option<Self> {
        match code {
            0 => Some(Self::Data),
            1 => Some(Self::PositionDeletes),
            2 => Some(Self::EqualityDeletes),
            _ => None,
        }
    }
}

/// A partition field's summary over a manifest's files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSummary {
    /// Whether a file has a null value.
    pub contains_null: bool,
    /// Whether a file has a NaN value (`None`: unknown).
    pub contains_nan: Option<bool>,
    /// The least value (Iceberg's single-value serialization).
    pub lower_bound: Option<Vec<u8>>,
    /// The greatest value.
    pub upper_bound: Option<Vec<u8>>,
}

/// One manifest of a manifest list.
#[derive(Debug, Clone)]
pub struct ManifestFile {
    /// Its location as recorded.
    pub path: String,
    /// The partition spec its files were written with.
    pub spec_id: i32,
    /// Data or deletes (format 1: data).
    pub content: FileContent,
    /// The sequence number its added files inherit.
    pub sequence_number: i64,
    /// Per partition field, a summary of its values.
    pub partitions: Vec<FieldSummary>,
}

/// A live file of a manifest.
#[derive(Debug, Clone)]
pub struct DataFile {
    /// Data, position deletes or equality deletes.
    pub content: FileContent,
    /// Its location as recorded.
    pub path: String,
    /// `PARQUET`, `AVRO`, `ORC` or `PUFFIN`.
    pub format: String,
    /// The spec it was written with.
    pub spec_id: i32,
    /// Its partition tuple, in the spec's order.
    pub partition: Vec<Value>,
    /// Rows in it.
    pub record_count: i64,
    /// Its size in bytes.
    pub file_size: i64,
    /// Its data sequence number.
    pub sequence_number: i64,
    /// Per column id: values (nulls and NaNs included).
    pub value_counts: HashMap<i32, i64>,
    /// Per column id: nulls.
    pub null_counts: HashMap<i32, i64>,
    /// Per column id: NaNs.
    pub nan_counts: HashMap<i32, i64>,
    /// Per column id: a lower bound (single-value serialization).
    pub lower_bounds: HashMap<i32, Vec<u8>>,
    /// Per column id: an upper bound.
    pub upper_bounds: HashMap<i32, Vec<u8>>,
    /// Equality deletes: the columns compared.
    pub equality_ids: Vec<i32>,
    /// Position deletes: the one data file they apply to, when the writer said so.
    pub referenced_data_file: Option<String>,
    /// A deletion vector: where its blob starts in the Puffin file, and its length.
    pub content_offset: Option<i64>,
    /// The deletion vector blob's length.
    pub content_size: Option<i64>,
}

/// The manifests of a manifest list read from `file` (of the table `table`).
pub fn read_manifest_list(table: &Location, file: &Location, bytes: &[u8]) -> Result<Vec<ManifestFile>> {
    let (records, _) = read_container(table, file, bytes)?;
    records
        .iter()
        .map(|record| {
            let missing =
                |name: &str| PqsiftError::table(table, format!("{file}: a manifest list entry without {name}"));
            let path = field(record, "manifest_path").and_then(as_str).ok_or_else(|| missing("manifest_path"))?;
            let content = field(record, "content").and_then(as_long).unwrap_or(0);
            let content = FileContent::from_code(content)
                .filter(|c| *c != FileContent::EqualityDeletes)
                .ok_or_else(|| PqsiftError::table(table, format!("{file}: a manifest of content {content}")))?;
            let partitions = match field(record, "partitions") {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|s| FieldSummary {
                        contains_null: field(s, "contains_null").and_then(as_bool).unwrap_or(true),
                        contains_nan: field(s, "contains_nan").and_then(as_bool),
                        lower_bound: field(s, "lower_bound").and_then(as_bytes).map(<[u8]>::to_vec),
                        upper_bound: field(s, "upper_bound").and_then(as_bytes).map(<[u8]>::to_vec),
                    })
                    .collect(),
                _ => Vec::new(),
            };
            Ok(ManifestFile {
                path: path.to_string(),
                spec_id: field(record, "partition_spec_id").and_then(as_long).unwrap_or(0) as i32,
                content,
                sequence_number: field(record, "sequence_number").and_then(as_long).unwrap_or(0),
                partitions,
            })
        })
        .collect()
}

/// The live files (entries not deleted) of a manifest read from `file`, written with the
/// spec `spec_id` (the manifest list's word; format 1 manifests without a list name it in
/// their metadata) and inheriting `sequence_number`.
pub fn read_manifest(
    table: &Location,
    file: &Location,
    bytes: &[u8],
    spec_id: Option<i32>,
    sequence_number: i64,
) -> Result<Vec<DataFile>> {
    let (records, metadata) = read_container(table, file, bytes)?;
    let spec_id = spec_id.unwrap_or_else(|| {
        metadata
            .iter()
            .find(|(k, _)| k == "partition-spec-id")
            .and_then(|(_, v)| std::str::from_utf8(v).ok()?.parse().ok())
            .unwrap_or(0)
    });
    let mut files = Vec::with_capacity(records.len());
    for record in &records {
        let missing = |name: &str| PqsiftError::table(table, format!("{file}: a manifest entry without {name}"));
        let status = field(record, "status").and_then(as_long).ok_or_else(|| missing("status"))?;
        if status == 2 {
            continue; // deleted in this snapshot
        }
        let data_file = field(record, "data_file").ok_or_else(|| missing("data_file"))?;
        let content = field(data_file, "content").and_then(as_long).unwrap_or(0);
        let content = FileContent::from_code(content)
            .ok_or_else(|| PqsiftError::table(table, format!("{file}: a file of content {content}")))?;
        let path = field(data_file, "file_path").and_then(as_str).ok_or_else(|| missing("file_path"))?;
        let partition = match field(data_file, "partition") {
            Some(Value::Record(fields)) => fields.iter().map(|(_, v)| super::avro::unwrapped(v).clone()).collect(),
            _ => Vec::new(),
        };
        let counts = |name: &str| -> HashMap<i32, i64> {
            field(data_file, name)
                .map(int_map)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(k, v)| Some((k, as_long(v)?)))
                .collect()
        };
        let bounds = |name: &str| -> HashMap<i32, Vec<u8>> {
            field(data_file, name)
                .map(int_map)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(k, v)| Some((k, as_bytes(v)?.to_vec())))
                .collect()
        };
        let equality_ids = match field(data_file, "equality_ids") {
            Some(Value::Array(ids)) => ids.iter().filter_map(as_long).map(|id| id as i32).collect(),
            _ => Vec::new(),
        };
        files.push(DataFile {
            content,
            path: path.to_string(),
            format: field(data_file, "file_format").and_then(as_str).unwrap_or("PARQUET").to_ascii_uppercase(),
            spec_id,
            partition,
            record_count: field(data_file, "record_count").and_then(as_long).ok_or_else(|| missing("record_count"))?,
            file_size: field(data_file, "file_size_in_bytes").and_then(as_long).unwrap_or(0),
            // An entry added in this manifest's snapshot inherits its sequence number.
            sequence_number: field(record, "sequence_number").and_then(as_long).unwrap_or(sequence_number),
            value_counts: counts("value_counts"),
            null_counts: counts("null_value_counts"),
            nan_counts: counts("nan_value_counts"),
            lower_bounds: bounds("lower_bounds"),
            upper_bounds: bounds("upper_bounds"),
            equality_ids,
            referenced_data_file: field(data_file, "referenced_data_file").and_then(as_str).map(str::to_string),
            content_offset: field(data_file, "content_offset").and_then(as_long),
            content_size: field(data_file, "content_size_in_bytes").and_then(as_long),
        });
    }
    Ok(files)
}
