//! The table a scan's sources resolved to (see [`super::source`]): its data files in scan
//! order, their partition values, and what a table format declares about them.

use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};

use super::delta::table::DeltaTable;
use super::iceberg::table::IcebergTable;
use super::partition_values::PartitionValues;
use super::schema_adapter::DeclaredSchema;
use crate::error::{PqsiftError, Result};
use crate::selection::RowSelection;
use crate::storage::Location;

/// What kind of table the sources are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// Files (or flat directories of files), no partition columns.
    Files,
    /// Hive-style partition directories.
    Hive,
    /// A Delta table: files, partition values and schema from its log.
    Delta,
    /// An Iceberg table: files, partition values and schema from its metadata and manifests.
    Iceberg,
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
    /// What the Iceberg manifests say of each file.
    pub iceberg: Option<Arc<IcebergTable>>,
}

impl Table {
    /// A table of plain files.
    pub fn of_files(files: Vec<Location>) -> Self {
        let name = files.first().map(|f| f.to_string()).unwrap_or_default();
        Self { name, format: TableFormat::Files, files, partitions: None, declared: None, delta: None, iceberg: None }
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

    /// What reading a table format's metadata did (a Delta log's replay, an Iceberg
    /// snapshot's manifests), as `(name, value)` pairs for a scan's metrics.
    pub fn metadata_metrics(&self) -> Vec<(&'static str, u64)> {
        let delta = self.delta.iter().flat_map(|d| d.metrics());
        delta.chain(self.iceberg.iter().flat_map(|i| i.metrics())).collect()
    }

    /// The table format's metadata read, in words, for a scan's explain.
    pub fn metadata_note(&self) -> Option<String> {
        self.delta.as_ref().map(|d| d.explain()).or_else(|| self.iceberg.as_ref().map(|i| i.explain()))
    }

    /// The rows of file `position` the table's metadata deletes — a Delta deletion
    /// vector, Iceberg position deletes — kept, per row group of `row_group_rows` rows
    /// (`None`: none deleted).
    pub fn kept_rows(&self, position: usize, row_group_rows: &[usize]) -> Result<Option<Vec<RowSelection>>> {
        match (&self.delta, &self.iceberg) {
            (Some(delta), _) => delta.kept_rows(position, row_group_rows),
            (None, Some(iceberg)) => iceberg.kept_rows(position, row_group_rows),
            (None, None) => Ok(None),
        }
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
            declared: self.declared.as_ref().map(|d| d.select(positions).map(Arc::new)).transpose()?,
            delta: self.delta.as_ref().map(|d| Arc::new(d.select(positions))),
            iceberg: self.iceberg.as_ref().map(|i| Arc::new(i.select(positions))),
        })
    }
}
