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
use super::delta::table::{DeltaTable, open_delta_table};
use super::hive::{HiveOptions, discover_partitions};
use super::listing::list_data_files;
use super::partition_values::PartitionValues;
use super::schema_adapter::DeclaredSchema;
use crate::error::{PqsiftError, Result};
use crate::storage::Location;
use crate::storage::source::{Entry, stat_table};

/// How sources become a table.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Where a table's metadata may make the scan read (a Delta log's paths).
    pub allowed_locations: AllowedLocations,
}

impl Default for TableOptions {
    fn default() -> Self {
        Self {
            partitioning: true,
            infer_partition_types: true,
            base_path: None,
            snapshot: None,
            allowed_locations: AllowedLocations::default(),
        }
    }
}

/// What kind of table the sources are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// Files (or flat directories of files), no partition columns.
    Files,
    /// Hive-style partition directories.
    Hive,
    /// A Delta table: files, partition values and schema from its log.
    Delta,
}

/// A table: its files in scan order and their partition values.
#[derive(Debug, Clone)]
pub struct Table {
    /// The sources, for messages.
    pub name: String,
    /// What the sources are.
    pub format: TableFormat,
    /// Data files, in scan order.
    pub files: Vec<Location>,
    /// One row per file; `None` without partition columns.
    pub partitions: Option<PartitionValues>,
    /// The schema the table declares (a Delta table's), which its files' columns are
    /// mapped onto; `None`: the table's schema is its files' (partition columns merged in).
    pub declared: Option<Arc<DeclaredSchema>>,
    /// What the Delta log says of each file (deletion vectors, statistics).
    pub delta: Option<Arc<DeltaTable>>,
}

impl Table {
    /// A table of plain files.
    pub fn of_files(files: Vec<Location>) -> Self {
        let name = files.first().map(|f| f.to_string()).unwrap_or_default();
        Self { name, format: TableFormat::Files, files, partitions: None, declared: None, delta: None }
    }

    /// Files whose partition values are given (a task planned elsewhere, e.g. by the Spark
    /// driver): one row of `partitions` per file.
    pub fn with_partitions(files: Vec<Location>, partitions: PartitionValues) -> Result<Self> {
        if partitions.len() != files.len() {
            return Err(PqsiftError::filter(format!(
                "{} files but partition values for {}",
                files.len(),
                partitions.len()
            )));
        }
        let mut table = Self::of_files(files);
        if !partitions.schema.fields().is_empty() {
            table.format = TableFormat::Hive;
            table.partitions = Some(partitions);
        }
        Ok(table)
    }

    /// Resolves `sources` (files and directories): directories are listed recursively (see
    /// [`super::listing`]) and, with `options.partitioning`, their `key=value`
    /// directories become partition columns (see [`super::hive`]). The base of a directory
    /// is itself, of a file its directory, unless `options.base_path` is given.
    pub fn resolve(sources: &[Location], options: &TableOptions, hive: &HiveOptions) -> Result<Self> {
        let mut files = Vec::new();
        let mut bases: Vec<Location> = Vec::new();
        for source in sources {
            let (entry, has_delta_log) = stat_table(source, Some("_delta_log"))?;
            let (is_dir, known) = match entry {
                Some(Entry::Directory) => (true, None),
                Some(Entry::File(version)) => (false, Some(version)),
                None => return Err(PqsiftError::not_found_at(source, "no such object or prefix")),
            };
            if has_delta_log {
                if sources.len() != 1 {
                    return Err(PqsiftError::table(source, "a Delta table is read alone, not in a list of sources"));
                }
                return open_delta_table(
                    source,
                    options.snapshot.unwrap_or(SnapshotSpec::Latest),
                    &hive.session_time_zone,
                    &options.allowed_locations,
                );
            }
            if options.snapshot.is_some() {
                return Err(PqsiftError::table(
                    source,
                    "a version or timestamp was given, but this is not a Delta table (no _delta_log directory)",
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
                files.extend(list_data_files(source)?);
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

    /// The partition columns' schema (empty without partitions).
    pub fn partition_schema(&self) -> SchemaRef {
        self.partitions.as_ref().map_or_else(|| Arc::new(Schema::empty()), |p| Arc::clone(&p.schema))
    }

    /// The table of the files at `positions` only.
    pub fn select(&self, positions: &[usize]) -> Result<Self> {
        Ok(Self {
            name: self.name.clone(),
            format: self.format,
            files: positions.iter().map(|&p| self.files[p].clone()).collect(),
            partitions: self.partitions.as_ref().map(|p| p.select(positions)).transpose()?,
            declared: self.declared.clone(),
            delta: self.delta.as_ref().map(|d| Arc::new(d.select(positions))),
        })
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
