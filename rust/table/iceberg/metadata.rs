//! An Iceberg table's metadata file: where it is, how it reads, which snapshot a scan
//! reads.
//!
//! A table root holds `metadata/` with one JSON file per commit: `vN.metadata.json`
//! (Hadoop tables) or `NNNNN-<uuid>.metadata.json` (catalog tables), either also gzipped
//! (`vN.gz.metadata.json`, `….metadata.json.gz`). `metadata/version-hint.text`, when
//! present, names the current one (a number `N` or a file stem); otherwise the highest
//! version is current. A scan may also be given a metadata file itself.
//!
//! ```
//! use pqsift::table::iceberg::metadata::metadata_version;
//! assert_eq!(metadata_version("v12.metadata.json"), Some(12));
//! assert_eq!(metadata_version("00003-5d9111ed-e56c.metadata.json"), Some(3));
//! assert_eq!(metadata_version("v2.gz.metadata.json"), Some(2));
//! assert_eq!(metadata_version("snap-1.avro"), None);
//! ```

use std::collections::BTreeMap;
use std::io::Read;

use serde::Deserialize;
use serde_json::Value;

use super::transforms::Transform;
use crate::error::{PqsiftError, Result};
use crate::storage::Location;
use crate::storage::source::{list_file_names, read_all, stat};

/// The longest metadata file read (decompressed): far above any real table's, so a larger
/// one is damage, refused before it is held.
const MAX_METADATA_BYTES: u64 = 1 << 30;

/// The parts of an Iceberg table metadata file a reader needs (unknown fields ignored).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct TableMetadata {
    /// 1, 2 or 3.
    pub format_version: u8,
    /// The table's location as its writer recorded it.
    #[serde(default)]
    pub location: String,
    /// The schemas by id (format 2 on; format 1 may list them too).
    #[serde(default)]
    pub schemas: Vec<Value>,
    /// Format 1: the only schema.
    #[serde(default)]
    pub schema: Option<Value>,
    /// The current schema's id.
    #[serde(default)]
    pub current_schema_id: Option<i32>,
    /// The partition specs by id.
    #[serde(default)]
    pub partition_specs: Vec<PartitionSpec>,
    /// Format 1: the only partition spec's fields.
    #[serde(default)]
    pub partition_spec: Option<Vec<PartitionField>>,
    /// The default spec's id.
    #[serde(default)]
    pub default_spec_id: Option<i32>,
    /// Table properties (`schema.name-mapping.default`, `write.data.path`, ...).
    #[serde(default)]
    pub properties: BTreeMap<String, String>,
    /// The current snapshot (`None` or -1: an empty table).
    #[serde(default, deserialize_with = "optional_snapshot_id")]
    pub current_snapshot_id: Option<i64>,
    /// Every snapshot kept.
    #[serde(default)]
    pub snapshots: Vec<Snapshot>,
    /// Which snapshot was current when, oldest first.
    #[serde(default)]
    pub snapshot_log: Vec<SnapshotLogEntry>,
}

/// One partition spec.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PartitionSpec {
    /// Its id.
    pub spec_id: i32,
    /// Its fields.
    #[serde(default)]
    pub fields: Vec<PartitionField>,
}

/// One partition field: a transform of a source column.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PartitionField {
    /// The partition field's name (the manifest's record field).
    pub name: String,
    /// `identity`, `bucket[N]`, `truncate[W]`, `year`, `month`, `day`, `hour`, `void`,
    /// parsed once here.
    #[serde(deserialize_with = "transform")]
    pub transform: Transform,
    /// The source column's field id.
    pub source_id: i32,
    /// The partition field's id (format 1 may omit it: 1000 on, in order).
    #[serde(default)]
    pub field_id: Option<i32>,
}

/// One snapshot.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Snapshot {
    /// Its id.
    #[serde(deserialize_with = "snapshot_id")]
    pub snapshot_id: i64,
    /// Its sequence number (format 1: 0).
    #[serde(default)]
    pub sequence_number: i64,
    /// When it was committed, ms since the epoch.
    #[serde(default)]
    pub timestamp_ms: i64,
    /// Its manifest list.
    #[serde(default)]
    pub manifest_list: Option<String>,
    /// Format 1 without a manifest list: the manifests themselves.
    #[serde(default)]
    pub manifests: Option<Vec<String>>,
    /// The schema it was written with.
    #[serde(default)]
    pub schema_id: Option<i32>,
}

/// An entry of the snapshot log.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SnapshotLogEntry {
    /// When the snapshot became current, ms since the epoch.
    pub timestamp_ms: i64,
    /// The snapshot.
    #[serde(deserialize_with = "snapshot_id")]
    pub snapshot_id: i64,
}

fn transform<'de, D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Transform, D::Error> {
    Ok(Transform::parse(&String::deserialize(deserializer)?))
}

/// The fields of the spec `spec_id` of `specs` (none when there is no such spec).
pub fn spec_fields(specs: &[PartitionSpec], spec_id: i32) -> &[PartitionField] {
    specs.iter().find(|s| s.spec_id == spec_id).map_or(&[][..], |s| s.fields.as_slice())
}

/// A snapshot id: a `long`, though some writers write one above `i64::MAX` in JSON; its
/// bits are the `long` the Avro files hold.
fn snapshot_id<'de, D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<i64, D::Error> {
    long_bits(serde_json::Number::deserialize(deserializer)?)
}

fn optional_snapshot_id<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Option<i64>, D::Error> {
    Option::<serde_json::Number>::deserialize(deserializer)?.map(long_bits).transpose()
}

/// A JSON number as the `long` with its bits (see [`snapshot_id`]).
fn long_bits<E: serde::de::Error>(number: serde_json::Number) -> std::result::Result<i64, E> {
    number
        .as_i64()
        .or_else(|| number.as_u64().map(|n| n as i64))
        .ok_or_else(|| E::custom(format!("snapshot id {number} is not a long")))
}

/// Which snapshot of an Iceberg table a scan reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IcebergSnapshotSpec {
    /// The metadata's current snapshot.
    #[default]
    Current,
    /// The snapshot with this id.
    Id(i64),
    /// The snapshot current at this time (ms since the epoch), by the snapshot log.
    AsOf(i64),
}

impl TableMetadata {
    /// Parses a metadata file's bytes (gzip or not) read from `file` of the table `table`.
    pub fn parse(table: &Location, file: &Location, bytes: &[u8]) -> Result<Self> {
        let text = if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut text = Vec::new();
            flate2::read::GzDecoder::new(bytes).take(MAX_METADATA_BYTES).read_to_end(&mut text).map_err(|e| {
                PqsiftError::table(table, format!("{file}: gzip metadata that does not decompress: {e}"))
            })?;
            text
        } else {
            bytes.to_vec()
        };
        let metadata: Self = serde_json::from_slice(&text)
            .map_err(|e| PqsiftError::table(table, format!("{file}: not Iceberg table metadata: {e}")))?;
        if !(1..=3).contains(&metadata.format_version) {
            return Err(PqsiftError::table(
                table,
                format!("{file}: Iceberg format version {} is not supported (1, 2 and 3 are)", metadata.format_version),
            ));
        }
        Ok(metadata)
    }

    /// The current schema's JSON.
    pub fn current_schema(&self, table: &Location) -> Result<&Value> {
        let id = |schema: &Value| schema.get("schema-id").and_then(Value::as_i64);
        let found = match self.current_schema_id {
            Some(current) => self.schemas.iter().find(|s| id(s) == Some(i64::from(current))),
            None => self.schemas.last(),
        };
        found.or(self.schema.as_ref()).ok_or_else(|| PqsiftError::table(table, "the metadata holds no current schema"))
    }

    /// The partition specs by id (format 1's single spec as id 0).
    pub fn specs(&self) -> Vec<PartitionSpec> {
        let mut specs = self.partition_specs.clone();
        if specs.is_empty()
            && let Some(fields) = &self.partition_spec
        {
            specs.push(PartitionSpec { spec_id: 0, fields: fields.clone() });
        }
        for spec in &mut specs {
            for (k, field) in spec.fields.iter_mut().enumerate() {
                field.field_id.get_or_insert(1000 + k as i32);
            }
        }
        specs
    }

    /// The snapshot `spec` names (`None`: the table has none, an empty table).
    pub fn snapshot(&self, table: &Location, spec: IcebergSnapshotSpec) -> Result<Option<&Snapshot>> {
        let by_id = |id: i64| {
            self.snapshots
                .iter()
                .find(|s| s.snapshot_id == id)
                .ok_or_else(|| PqsiftError::table(table, format!("the metadata has no snapshot {id}")))
        };
        match spec {
            IcebergSnapshotSpec::Current => match self.current_snapshot_id {
                None | Some(-1) => Ok(None),
                Some(id) => by_id(id).map(Some),
            },
            IcebergSnapshotSpec::Id(id) => by_id(id).map(Some),
            IcebergSnapshotSpec::AsOf(ms) => {
                let log_entry = self.snapshot_log.iter().rev().find(|e| e.timestamp_ms <= ms);
                let id = match log_entry {
                    Some(entry) => entry.snapshot_id,
                    // Without a log, the newest snapshot committed by then.
                    None => match self.snapshots.iter().filter(|s| s.timestamp_ms <= ms).max_by_key(|s| s.timestamp_ms)
                    {
                        Some(snapshot) => snapshot.snapshot_id,
                        None => {
                            return Err(PqsiftError::table(
                                table,
                                format!("no snapshot of the table is as old as {ms} ms since the epoch"),
                            ));
                        }
                    },
                };
                by_id(id).map(Some)
            }
        }
    }
}

/// The version a metadata file's name carries (`vN…` or `NNNNN-…`), `None` for another file.
pub fn metadata_version(name: &str) -> Option<u64> {
    let stem = name
        .strip_suffix(".gz.metadata.json")
        .or_else(|| name.strip_suffix(".metadata.json.gz"))
        .or_else(|| name.strip_suffix(".metadata.json"))?;
    match stem.strip_prefix('v') {
        Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => digits.parse().ok(),
        _ => {
            let digits = stem.split('-').next()?;
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok()).flatten()
        }
    }
}

/// Whether `name` is a metadata file's name (`….metadata.json`, gzipped or not).
pub fn is_metadata_file(name: &str) -> bool {
    name.ends_with(".metadata.json") || name.ends_with(".metadata.json.gz")
}

/// The names of the files directly in `dir` among `listed` (a recursive listing).
fn names_in<'a>(dir: &'a Location, listed: &'a [Location]) -> impl Iterator<Item = String> + 'a {
    listed.iter().filter(move |file| file.parent().as_ref() == Some(dir)).filter_map(Location::file_name)
}

/// The names of the files in the table's `metadata/` directory: from `listed` (a store's
/// recursive listing of `root`, made when the table was found) when given, else listed.
fn metadata_names(root: &Location, listed: Option<&[Location]>) -> Result<Vec<String>> {
    let dir = root.join("metadata");
    match listed {
        Some(listed) => Ok(names_in(&dir, listed).collect()),
        None => list_file_names(&dir).map_err(|e| PqsiftError::table(root, format!("listing metadata/: {e}"))),
    }
}

/// The current metadata file of the table at `root`: the one `version-hint.text` names,
/// else the highest version in `metadata/` (see [`metadata_names`] for `listed`).
pub fn current_metadata_file(root: &Location, listed: Option<&[Location]>) -> Result<Location> {
    let dir = root.join("metadata");
    let names = metadata_names(root, listed)?;
    if names.iter().any(|n| n == "version-hint.text") {
        let hint = read_all(&dir.join("version-hint.text"))?;
        let hint = String::from_utf8_lossy(&hint).trim().to_string();
        let candidates = [
            format!("v{hint}.metadata.json"),
            format!("v{hint}.gz.metadata.json"),
            format!("v{hint}.metadata.json.gz"),
            format!("{hint}.metadata.json"),
            format!("{hint}.gz.metadata.json"),
            format!("{hint}.metadata.json.gz"),
        ];
        if let Some(found) = candidates.iter().find(|c| names.contains(c)) {
            return Ok(dir.join(found));
        }
        // A hint naming no file is stale: the highest version is current.
    }
    names
        .iter()
        .filter_map(|n| Some((metadata_version(n)?, n)))
        .max()
        .map(|(_, name)| dir.join(name))
        .ok_or_else(|| PqsiftError::table(root, "metadata/ holds no metadata file (vN.metadata.json)"))
}

/// The metadata file of the table at `root` whose name is `name`, or whose version (or
/// stem) is `name`: `3`, `v3`, `00003-…` (as DuckDB's `version =>` names one).
pub fn named_metadata_file(root: &Location, name: &str, listed: Option<&[Location]>) -> Result<Location> {
    let dir = root.join("metadata");
    let names = metadata_names(root, listed)?;
    let names: Vec<String> = names.into_iter().filter(|n| is_metadata_file(n)).collect();
    let wanted = name.trim_start_matches('v');
    names
        .iter()
        .find(|n| {
            *n == name
                || n.strip_prefix('v').is_some_and(|rest| rest.split('.').next() == Some(wanted))
                || n.split('.').next() == Some(name)
        })
        .map(|n| dir.join(n))
        .ok_or_else(|| PqsiftError::table(root, format!("metadata/ has no metadata file for version {name:?}")))
}

/// Whether `location` is an Iceberg table's root (a directory with metadata files in
/// `metadata/`), judged from `listed` (a store's recursive listing of it) when given.
pub fn is_iceberg_root(location: &Location, listed: Option<&[Location]>) -> bool {
    let metadata = location.join("metadata");
    match listed {
        Some(listed) => names_in(&metadata, listed).any(|name| is_metadata_file(&name)),
        None => match location {
            Location::Local(_) => match stat(&metadata) {
                Ok(Some(crate::storage::source::Entry::Directory)) => list_file_names(&metadata)
                    .map(|names| names.iter().any(|n| is_metadata_file(n) || n == "version-hint.text"))
                    .unwrap_or(false),
                _ => false,
            },
            Location::Object(_) => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_come_from_both_naming_schemes() {
        assert_eq!(metadata_version("v1749025517.metadata.json"), Some(1_749_025_517));
        assert_eq!(metadata_version("00004-v3-upgraded-v1-null-counts.metadata.json"), Some(4));
        assert_eq!(metadata_version("vfinal.metadata.json"), None);
        assert_eq!(metadata_version("00001-x.metadata.json.gz"), Some(1));
        assert_eq!(metadata_version("version-hint.text"), None);
    }

    #[test]
    fn snapshots_by_id_and_by_time() {
        let text = r#"{"format-version":2,"location":"/t","current-snapshot-id":2,
            "snapshots":[{"snapshot-id":1,"timestamp-ms":100},{"snapshot-id":2,"timestamp-ms":200}],
            "snapshot-log":[{"timestamp-ms":100,"snapshot-id":1},{"timestamp-ms":200,"snapshot-id":2}]}"#;
        let root = Location::from(std::path::Path::new("/t"));
        let metadata = TableMetadata::parse(&root, &root, text.as_bytes()).unwrap();
        let id = |spec| metadata.snapshot(&root, spec).unwrap().map(|s| s.snapshot_id);
        assert_eq!(id(IcebergSnapshotSpec::Current), Some(2));
        assert_eq!(id(IcebergSnapshotSpec::Id(1)), Some(1));
        assert_eq!(id(IcebergSnapshotSpec::AsOf(150)), Some(1));
        assert_eq!(id(IcebergSnapshotSpec::AsOf(250)), Some(2));
        assert!(metadata.snapshot(&root, IcebergSnapshotSpec::AsOf(50)).is_err());
        assert!(metadata.snapshot(&root, IcebergSnapshotSpec::Id(9)).is_err());
        let bad = TableMetadata::parse(&root, &root, br#"{"format-version":9}"#).unwrap_err();
        assert!(bad.to_string().contains("format version 9"), "{bad}");
    }
}
