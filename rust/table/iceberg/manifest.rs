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

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};

use super::avro::{AnyRecord, AvroBytes, FieldName, Long, Nullable, SchemaCache, read_container_as};
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
    /// Its length in bytes, as the manifest list says (`None`: not said, format 1).
    pub length: Option<i64>,
    /// The partition spec its files were written with.
    pub spec_id: i32,
    /// Data or deletes (format 1: data).
    pub content: FileContent,
    /// The sequence number its added files inherit.
    pub sequence_number: i64,
    /// Per partition field, a summary of its values.
    pub partitions: Vec<FieldSummary>,
    /// Its live files (added and existing), as the manifest list says (`None`: not said).
    pub live_files: Option<u64>,
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
    let (records, _) = read_container_as::<AnyRecord<ManifestRecord>>(table, file, bytes, &SchemaCache::default())?;
    records
        .into_iter()
        .map(|AnyRecord(record)| {
            let content =
                FileContent::from_code(record.content.0).filter(|c| *c != FileContent::EqualityDeletes).ok_or_else(
                    || PqsiftError::table(table, format!("{file}: a manifest of content {}", record.content.0)),
                )?;
            let partitions = record.partitions.0.unwrap_or_default();
            Ok(ManifestFile {
                path: record.manifest_path,
                length: record.manifest_length.0.map(|l| l.0).filter(|l| *l > 0),
                spec_id: i32::try_from(record.partition_spec_id.0).unwrap_or(-1),
                content,
                sequence_number: record.sequence_number.0,
                partitions: partitions
                    .into_iter()
                    .map(|AnyRecord(s)| FieldSummary {
                        contains_null: s.contains_null.0.unwrap_or(true),
                        contains_nan: s.contains_nan.0,
                        lower_bound: s.lower_bound.0.map(|b| b.0),
                        upper_bound: s.upper_bound.0.map(|b| b.0),
                    })
                    .collect(),
                live_files: match (record.added_files_count.0, record.existing_files_count.0) {
                    (None, None) => None,
                    (added, existing) => Some(
                        u64::try_from(added.map_or(0, |c| c.0)).unwrap_or(0)
                            + u64::try_from(existing.map_or(0, |c| c.0)).unwrap_or(0),
                    ),
                },
            })
        })
        .collect()
}

/// A manifest list's entry as written (fields by the spec's names; any others skipped).
#[derive(Deserialize)]
struct ManifestRecord {
    manifest_path: String,
    #[serde(default)]
    manifest_length: Nullable<Long>,
    #[serde(default)]
    partition_spec_id: Long,
    #[serde(default)]
    content: Long,
    #[serde(default)]
    sequence_number: Long,
    #[serde(default)]
    partitions: Nullable<Vec<AnyRecord<SummaryRecord>>>,
    // Format 1 names the counts `added_data_files_count` and `existing_data_files_count`.
    #[serde(default, alias = "added_data_files_count")]
    added_files_count: Nullable<Long>,
    #[serde(default, alias = "existing_data_files_count")]
    existing_files_count: Nullable<Long>,
}

/// A partition field's summary as written.
#[derive(Deserialize)]
struct SummaryRecord {
    #[serde(default)]
    contains_null: Nullable<bool>,
    #[serde(default)]
    contains_nan: Nullable<bool>,
    #[serde(default)]
    lower_bound: Nullable<AvroBytes>,
    #[serde(default)]
    upper_bound: Nullable<AvroBytes>,
}

/// The live files (entries not deleted) of a manifest read from `file`, written with the
/// spec `spec_id` (the manifest list's word; format 1 manifests without a list name it in
/// their metadata) and inheriting `sequence_number`. The entries decode straight into
/// their fields (see [`read_container_as`]); the maps planning does not use (value counts,
/// column sizes) are skipped.
pub fn read_manifest(
    table: &Location,
    file: &Location,
    bytes: &[u8],
    spec_id: Option<i32>,
    sequence_number: i64,
    schemas: &SchemaCache,
) -> Result<Vec<DataFile>> {
    let (entries, metadata) = read_container_as::<AnyRecord<EntryRecord>>(table, file, bytes, schemas)?;
    let spec_id = spec_id.unwrap_or_else(|| {
        metadata
            .iter()
            .find(|(k, _)| k == "partition-spec-id")
            .and_then(|(_, v)| std::str::from_utf8(v).ok()?.parse().ok())
            .unwrap_or(0)
    });
    let mut files = Vec::with_capacity(entries.len());
    for AnyRecord(entry) in entries {
        if entry.status.0 == 2 {
            continue; // deleted in this snapshot
        }
        let AnyRecord(data) = entry.data_file;
        let content = FileContent::from_code(data.content.0)
            .ok_or_else(|| PqsiftError::table(table, format!("{file}: a file of content {}", data.content.0)))?;
        files.push(DataFile {
            content,
            path: data.file_path,
            format: data.file_format.to_ascii_uppercase(),
            spec_id,
            partition: data.partition.0,
            record_count: data.record_count.0,
            file_size: data.file_size_in_bytes.0.unwrap_or(0),
            // An entry added in this manifest's snapshot inherits its sequence number.
            sequence_number: entry.sequence_number.0.unwrap_or(sequence_number),
            null_counts: data.null_value_counts.0,
            nan_counts: data.nan_value_counts.0,
            lower_bounds: data.lower_bounds.0,
            upper_bounds: data.upper_bounds.0,
            equality_ids: data
                .equality_ids
                .0
                .unwrap_or_default()
                .iter()
                .filter_map(|id| i32::try_from(id.0).ok())
                .collect(),
            referenced_data_file: data.referenced_data_file.0,
            content_offset: data.content_offset.0,
            content_size: data.content_size_in_bytes.0,
        });
    }
    Ok(files)
}

/// A manifest entry as written (fields by the spec's names; any others skipped).
#[derive(Deserialize)]
struct EntryRecord {
    status: Long,
    #[serde(default)]
    sequence_number: Nullable<i64>,
    data_file: AnyRecord<DataFileRecord>,
}

/// An entry's `data_file` as written.
#[derive(Deserialize)]
struct DataFileRecord {
    #[serde(default)]
    content: Long,
    file_path: String,
    #[serde(default = "parquet")]
    file_format: String,
    #[serde(default)]
    partition: PartitionTuple,
    record_count: Long,
    #[serde(default)]
    file_size_in_bytes: Nullable<i64>,
    #[serde(default)]
    null_value_counts: IntMap<Long>,
    #[serde(default)]
    nan_value_counts: IntMap<Long>,
    #[serde(default)]
    lower_bounds: IntMap<AvroBytes>,
    #[serde(default)]
    upper_bounds: IntMap<AvroBytes>,
    #[serde(default)]
    equality_ids: Nullable<Vec<Long>>,
    #[serde(default)]
    referenced_data_file: Nullable<String>,
    #[serde(default)]
    content_offset: Nullable<i64>,
    #[serde(default)]
    content_size_in_bytes: Nullable<i64>,
}

fn parquet() -> String {
    "PARQUET".into()
}

/// A partition tuple: its fields' values in order, whatever their names and types.
#[derive(Default)]
struct PartitionTuple(Vec<Value>);

impl<'de> Deserialize<'de> for PartitionTuple {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = PartitionTuple;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a partition record")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<PartitionTuple, A::Error> {
                let mut values = Vec::new();
                while map.next_key::<FieldName>()?.is_some() {
                    values.push(map.next_value::<Scalar>()?.0);
                }
                Ok(PartitionTuple(values))
            }
            fn visit_unit<E>(self) -> std::result::Result<PartitionTuple, E> {
                Ok(PartitionTuple::default())
            }
        }
        deserializer.deserialize_any(Fields)
    }
}

/// One partition value as the Avro value it was written as (null, boolean, number,
/// string or bytes; dates and times as their numbers, decimals as their bytes).
struct Scalar(Value);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Any;
        impl Visitor<'_> for Any {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a partition value")
            }
            fn visit_unit<E>(self) -> std::result::Result<Scalar, E> {
                Ok(Scalar(Value::Null))
            }
            fn visit_none<E>(self) -> std::result::Result<Scalar, E> {
                Ok(Scalar(Value::Null))
            }
            fn visit_bool<E>(self, v: bool) -> std::result::Result<Scalar, E> {
                Ok(Scalar(Value::Boolean(v)))
            }
            fn visit_i32<E>(self, v: i32) -> std::result::Result<Scalar, E> {
                Ok(Scalar(Value::Int(v)))
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<Scalar, E> {
                Ok(Scalar(Value::Long(v)))
            }
            fn visit_f32<E>(self, v: f32) -> std::result::Result<Scalar, E> {
                Ok(Scalar(Value::Float(v)))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<Scalar, E> {
                Ok(Scalar(Value::Double(v)))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Scalar, E> {
                Ok(Scalar(Value::String(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<Scalar, E> {
                Ok(Scalar(Value::String(v)))
            }
            fn visit_bytes<E>(self, v: &[u8]) -> std::result::Result<Scalar, E> {
                Ok(Scalar(Value::Bytes(v.to_vec())))
            }
            fn visit_byte_buf<E>(self, v: Vec<u8>) -> std::result::Result<Scalar, E> {
                Ok(Scalar(Value::Bytes(v)))
            }
        }
        deserializer.deserialize_any(Any)
    }
}

/// An Iceberg map of int keys: an array of `{key, value}` records, or an Avro map whose
/// keys are the ints' text; null or absent is empty.
struct IntMap<V>(HashMap<i32, V::Out>)
where
    V: MapValue;

impl<V: MapValue> Default for IntMap<V> {
    fn default() -> Self {
        Self(HashMap::new())
    }
}

/// What a map's value is decoded as, and kept as.
trait MapValue: Sized {
    type Out;
    fn out(self) -> Self::Out;
}

impl MapValue for Long {
    type Out = i64;
    fn out(self) -> i64 {
        self.0
    }
}

impl MapValue for AvroBytes {
    type Out = Vec<u8>;
    fn out(self) -> Vec<u8> {
        self.0
    }
}

#[derive(Deserialize)]
struct KeyValue<V> {
    key: Long,
    value: V,
}

impl<'de, V: MapValue + Deserialize<'de>> Deserialize<'de> for IntMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Entries<V>(std::marker::PhantomData<V>);
        impl<'de, V: MapValue + Deserialize<'de>> Visitor<'de> for Entries<V> {
            type Value = IntMap<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of int keys")
            }
            fn visit_unit<E>(self) -> std::result::Result<IntMap<V>, E> {
                Ok(IntMap::default())
            }
            fn visit_none<E>(self) -> std::result::Result<IntMap<V>, E> {
                Ok(IntMap::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<IntMap<V>, A::Error> {
                let mut map = HashMap::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(AnyRecord(KeyValue { key, value })) = seq.next_element::<AnyRecord<KeyValue<V>>>()? {
                    if let Ok(key) = i32::try_from(key.0) {
                        map.insert(key, value.out());
                    }
                }
                Ok(IntMap(map))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> std::result::Result<IntMap<V>, A::Error> {
                let mut map = HashMap::new();
                while let Some((key, value)) = entries.next_entry::<String, V>()? {
                    if let Ok(key) = key.parse() {
                        map.insert(key, value.out());
                    }
                }
                Ok(IntMap(map))
            }
        }
        deserializer.deserialize_any(Entries(std::marker::PhantomData))
    }
}
