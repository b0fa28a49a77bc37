//! The table a scan's sources resolve to: its data files, each with its partition values,
//! and the table schema — the files' columns with the partition columns merged in as
//! Spark merges them (`PartitioningUtils.mergeDataAndPartitionSchema`): a partition column
//! the files also hold keeps the files' position but takes the partition's type and the
//! directory's value; the others come after the file columns.
//!
//! ```
//! use arrow::datatypes::{DataType, Field, Schema};
//! use pqsift::table::source::merge_schemas;
//! let data = Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("DAY", DataType::Utf8, true)]);
//! let partitions = Schema::new(vec![Field::new("day", DataType::Date32, true), Field::new("kind", DataType::Utf8, true)]);
//! let (merged, from_partition) = merge_schemas(&data, &partitions, false);
//! let names: Vec<_> = merged.fields().iter().map(|f| f.name().as_str()).collect();
//! assert_eq!(names, ["id", "DAY", "kind"]);
//! assert_eq!(merged.field(1).data_type(), &DataType::Date32);
//! assert_eq!(from_partition, [None, Some(0), Some(1)]);
//! ```

use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};

use super::allowed_locations::AllowedLocations;
use super::delta::SnapshotSpec;
use super::delta::open::open_delta_table;
use super::hive::{HiveOptions, discover_partitions};
use super::iceberg::metadata::{IcebergSnapshotSpec, is_iceberg_root, is_metadata_file};
use super::iceberg::open::{IcebergOpen, open_iceberg_table};
use super::iceberg::table::ManifestSelection;
use super::listing::{data_files_among, list_data_files};
pub use super::resolved::{Table, TableFormat};
use crate::error::{PqsiftError, Result};
use crate::filter::{BindOptions, Expr};
use crate::storage::Location;
use crate::storage::source::{Entry, stat_table};
use crate::table::parquet_reads::ParquetReads;

/// How sources become a table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableOptions {
    /// Discover Hive-style `key=value` partition directories.
    pub partitioning: bool,
    /// Infer partition column types (else all strings).
    pub infer_partition_types: bool,
    /// Spark's `basePath`: partition directories are those below it.
    pub base_path: Option<Location>,
    /// Which snapshot of a Delta table to read (`None`: the latest). Given for a source
    /// that is not a Delta table, an error.
    pub snapshot: Option<SnapshotSpec>,
    /// Which snapshot of an Iceberg table to read, by id (`None`: the current one, or the
    /// one `snapshot`'s timestamp names). Given for another table, an error.
    pub snapshot_id: Option<i64>,
    /// Where a table's metadata may make the scan read (a Delta log's paths).
    pub allowed_locations: AllowedLocations,
    /// The scan's filter, when known before the table is read: table metadata it rules out
    /// is not read (an Iceberg manifest by its partition summaries). `None`: all is read.
    pub filter: Option<Expr>,
    /// Which of an Iceberg snapshot's data manifests are read (all, by default).
    pub iceberg_manifests: ManifestSelection,
}

impl Default for TableOptions {
    fn default() -> Self {
        Self {
            partitioning: true,
            infer_partition_types: true,
            base_path: None,
            snapshot: None,
            snapshot_id: None,
            allowed_locations: AllowedLocations::default(),
            filter: None,
            iceberg_manifests: ManifestSelection::All,
        }
    }
}

impl Table {
    /// Resolves `sources` (files and directories): directories are listed recursively (see
    /// [`super::listing`]) and, with `options.partitioning`, their `key=value`
    /// directories become partition columns (see [`super::hive`]). The base of a directory
    /// is itself, of a file its directory, unless `options.base_path` is given. A Delta
    /// table's Parquet checkpoint is read through `reads`.
    pub fn resolve(
        sources: &[Location],
        options: &TableOptions,
        hive: &HiveOptions,
        reads: &dyn ParquetReads,
    ) -> Result<Self> {
        let mut files = Vec::new();
        let mut bases: Vec<Location> = Vec::new();
        for source in sources {
            let probe = stat_table(source, Some("_delta_log"))?;
            let (is_dir, known) = match probe.entry {
                Some(Entry::Directory) => (true, None),
                Some(Entry::File(version)) => (false, Some(version)),
                None => return Err(source.not_found("no such object or prefix")),
            };
            if probe.has_child {
                if sources.len() != 1 {
                    return Err(PqsiftError::table(source, "a Delta table is read alone, not in a list of sources"));
                }
                if options.snapshot_id.is_some() {
                    return Err(PqsiftError::table(
                        source,
                        "a snapshot id was given, but this is a Delta table: name its snapshot by version",
                    ));
                }
                return open_delta_table(
                    source,
                    options.snapshot.unwrap_or(SnapshotSpec::Latest),
                    &hive.session_time_zone,
                    &options.allowed_locations,
                    reads,
                );
            }
            let iceberg_metadata_file = !is_dir && source.file_name().is_some_and(|name| is_metadata_file(&name));
            if iceberg_metadata_file || (is_dir && is_iceberg_root(source, probe.listed.as_deref())) {
                if sources.len() != 1 {
                    return Err(PqsiftError::table(source, "an Iceberg table is read alone, not in a list of sources"));
                }
                let spec = match (options.snapshot, options.snapshot_id) {
                    (None | Some(SnapshotSpec::Latest), None) => IcebergSnapshotSpec::Current,
                    (None | Some(SnapshotSpec::Latest), Some(id)) => IcebergSnapshotSpec::Id(id),
                    (Some(SnapshotSpec::Timestamp(ms)), None) => IcebergSnapshotSpec::AsOf(ms),
                    (Some(SnapshotSpec::Timestamp(_)), Some(_)) => {
                        return Err(PqsiftError::table(source, "give a snapshot id or a timestamp, not both"));
                    }
                    (Some(SnapshotSpec::Version(_)), _) => {
                        return Err(PqsiftError::table(
                            source,
                            "a version was given, but this is an Iceberg table: name its snapshot by snapshot_id",
                        ));
                    }
                };
                let bind = BindOptions {
                    session_time_zone: hive.session_time_zone.clone(),
                    case_sensitive: hive.case_sensitive,
                };
                let filter = options.filter.as_ref().map(|f| (f, &bind));
                // A store's listing made while probing names the metadata files already.
                let listed = probe.listed.as_deref();
                let open = IcebergOpen {
                    listed,
                    filter,
                    ..IcebergOpen::snapshot(spec, &options.allowed_locations, &options.iceberg_manifests)
                };
                return open_iceberg_table(source, &open, reads);
            }
            if options.snapshot.is_some() || options.snapshot_id.is_some() {
                return Err(PqsiftError::table(
                    source,
                    "a version, snapshot id or timestamp was given, but this is not a Delta or Iceberg table",
                ));
            }
            let base = match &options.base_path {
                Some(base) => {
                    if !source.starts_with(base) {
                        return Err(PqsiftError::table(source, format!("base_path {base} is not a parent of it")));
                    }
                    base.clone()
                }
                None if is_dir => source.clone(),
                None => source.parent().unwrap_or_else(|| Location::Local(Default::default())),
            };
            if is_dir {
                files.extend(match probe.listed {
                    Some(listed) => data_files_among(source, listed),
                    None => list_data_files(source)?,
                });
            } else {
                // The size a store's `HEAD` just gave: opening the file needs no other.
                files.push(match known {
                    Some(version) if source.is_remote() => source.clone().with_version(version),
                    _ => source.clone(),
                });
            }
            if !bases.contains(&base) {
                bases.push(base);
            }
        }
        let name = sources.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ");
        let mut table = Self {
            name: name.clone(),
            format: TableFormat::Files,
            files,
            partitions: None,
            declared: None,
            delta: None,
            iceberg: None,
        };
        if options.partitioning {
            let hive = HiveOptions { infer_types: options.infer_partition_types, ..hive.clone() };
            if let Some(partitions) = discover_partitions(&name, &bases, &table.files, &hive)? {
                table.format = TableFormat::Hive;
                table.partitions = Some(partitions);
            }
        }
        Ok(table)
    }
}

/// The table schema of files with schema `data` and partition columns `partitions` (see
/// the module documentation), and per table field the partition column it comes from.
pub fn merge_schemas(data: &Schema, partitions: &Schema, case_sensitive: bool) -> (SchemaRef, Vec<Option<usize>>) {
    let key = |name: &str| if case_sensitive { name.to_string() } else { name.to_lowercase() };
    let partition_of = |name: &str| partitions.fields().iter().position(|p| key(p.name()) == key(name));
    let mut fields = Vec::with_capacity(data.fields().len() + partitions.fields().len());
    let mut from_partition = Vec::with_capacity(fields.capacity());
    for field in data.fields() {
        match partition_of(field.name()) {
            Some(k) => {
                fields.push(Arc::new(
                    field.as_ref().clone().with_data_type(partitions.field(k).data_type().clone()).with_nullable(true),
                ));
                from_partition.push(Some(k));
            }
            None => {
                fields.push(Arc::clone(field));
                from_partition.push(None);
            }
        }
    }
    for (k, field) in partitions.fields().iter().enumerate() {
        if !from_partition.contains(&Some(k)) {
            fields.push(Arc::clone(field));
            from_partition.push(Some(k));
        }
    }
    (Arc::new(Schema::new_with_metadata(fields, data.metadata().clone())), from_partition)
}
