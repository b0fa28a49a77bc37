//! A Delta snapshot as a scan's [`Table`]: the active files, their partition values typed
//! from the schema, the declared schema the reader shows (column mapping, evolution and
//! widening hidden by [`DeclaredSchema`]), and per file what the log knows of it (deletion
//! vector, statistics) for planning.
//!
//! ```no_run
//! use pqsift::reading::table_reads::ScanReads;
//! use pqsift::table::delta::{SnapshotSpec, open::open_delta_table};
//! let allowed = pqsift::table::allowed_locations::AllowedLocations::default();
//! let root = std::path::Path::new("/data/events").into();
//! let table = open_delta_table(&root, SnapshotSpec::Latest, "UTC", &allowed, &ScanReads).unwrap();
//! let delta = table.delta.as_ref().unwrap();
//! println!("version {}: {} files, {} rows deleted", delta.version, table.files.len(), delta.deleted_rows());
//! ```

use std::sync::Arc;

use arrow::datatypes::{Field, Schema};

use super::log_replay::LogReplayMetrics;
use super::schema::physical_name;
use super::snapshot::{DeltaFile, DeltaSnapshot, SnapshotSpec, load_snapshot};
use super::table::{DeltaTable, typed_column};
use crate::error::{PqsiftError, Result};
use crate::storage::Location;
use crate::table::allowed_locations::AllowedLocations;
use crate::table::parquet_reads::ParquetReads;
use crate::table::partition_values::PartitionValues;
use crate::table::resolved::{Table, TableFormat};
use crate::table::schema_adapter::{DeclaredSchema, find_field};

/// Files of a Delta table planned elsewhere (a Spark task): `table` (its files and
/// partition values) read with the declared schema of
/// [`DeclaredSchema::to_text`] and, when any has one, the files' deletion vectors (the
/// table's root, then per file the log's descriptor as JSON).
pub fn planned_delta_table(
    mut table: Table,
    declared_schema: &str,
    deletion_vectors: Option<(Location, Vec<Option<String>>)>,
) -> Result<Table> {
    let declared = DeclaredSchema::from_text(&table.name, declared_schema)?;
    if !declared.schema_string.is_empty() {
        table.format = TableFormat::Delta; // not the scan schema of plain files
    }
    table.declared = Some(Arc::new(declared));
    if let Some((table_root, descriptors)) = deletion_vectors {
        if descriptors.len() != table.files.len() {
            return Err(PqsiftError::filter(format!(
                "deletion vectors are given for {} file(s), the scan has {}",
                descriptors.len(),
                table.files.len()
            )));
        }
        let files = table
            .files
            .iter()
            .zip(descriptors)
            .map(|(path, descriptor)| {
                let deletion_vector = descriptor.map(|text| serde_json::from_str(&text)).transpose().map_err(|e| {
                    PqsiftError::table(&table_root, format!("a deletion vector descriptor that does not parse: {e}"))
                })?;
                Ok(DeltaFile {
                    path: path.clone(),
                    size: 0,
                    partition_values: Default::default(),
                    stats: Default::default(),
                    deletion_vector,
                    modification_time: 0,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        table.delta = Some(Arc::new(DeltaTable {
            table_root,
            version: 0,
            files,
            replay: LogReplayMetrics::default(),
            string_prefix_length: 32,
        }));
    }
    Ok(table)
}

/// Opens the snapshot `spec` of the Delta table at `root` as a [`Table`], reading only
/// where `allowed` lets it (see [`AllowedLocations`]). Timestamp
/// partition values written without a zone are wall clocks in `session_time_zone`, as
/// Spark reads them. A Parquet checkpoint is read through `reads`.
pub fn open_delta_table(
    root: &Location,
    spec: SnapshotSpec,
    session_time_zone: &str,
    allowed: &AllowedLocations,
    reads: &dyn ParquetReads,
) -> Result<Table> {
    let snapshot = load_snapshot(root, spec, allowed, reads)?;
    if snapshot.metadata.schema_string.trim().is_empty() {
        return Err(PqsiftError::table(
            root,
            format!(
                "the metaData of version {} has no schemaString: the table's columns are unknown",
                snapshot.version
            ),
        ));
    }
    let partitions = partition_values(&snapshot, session_time_zone)?;
    let declared =
        DeclaredSchema::from_delta(&root.to_string(), &snapshot.metadata.schema_string, snapshot.column_mapping_mode)?;
    let string_prefix_length = snapshot
        .metadata
        .configuration
        .get("delta.dataSkippingStringPrefixLength")
        .and_then(|v| v.parse().ok())
        .unwrap_or(32);
    Ok(Table {
        name: root.to_string(),
        format: TableFormat::Delta,
        files: snapshot.files.iter().map(|f| f.path.clone()).collect(),
        partitions,
        declared: Some(Arc::new(declared)),
        delta: Some(Arc::new(DeltaTable {
            table_root: root.clone(),
            version: snapshot.version,
            files: snapshot.files,
            replay: snapshot.metrics,
            string_prefix_length,
        })),
        iceberg: None,
    })
}

/// The partition columns, typed from the schema, one row per active file (`None` for an
/// unpartitioned table). The log writes values as strings keyed by physical name; an empty
/// string, like a missing or JSON-null value, is null.
fn partition_values(snapshot: &DeltaSnapshot, session_time_zone: &str) -> Result<Option<PartitionValues>> {
    if snapshot.partition_columns.is_empty() {
        return Ok(None);
    }
    let root = &snapshot.table_root;
    let mut fields = Vec::with_capacity(snapshot.partition_columns.len());
    let mut columns = Vec::with_capacity(fields.capacity());
    for name in &snapshot.partition_columns {
        let position = find_field(snapshot.schema.fields(), name, false)
            .ok_or_else(|| PqsiftError::table(root, format!("partition column {name:?} is not in the schema")))?;
        let field = snapshot.schema.field(position);
        let physical = physical_name(field, snapshot.column_mapping_mode);
        let text: Vec<Option<&str>> = snapshot
            .files
            .iter()
            .map(|file| {
                file.partition_values
                    .get(physical)
                    .or_else(|| file.partition_values.get(field.name()))
                    .and_then(|v| v.as_deref())
                    .filter(|v| !v.is_empty())
            })
            .collect();
        let column = typed_column(field.data_type(), &text, session_time_zone)
            .map_err(|e| PqsiftError::table(root, format!("partition column {name:?}: {e}")))?;
        fields.push(Field::new(field.name(), field.data_type().clone(), true));
        columns.push(column);
    }
    Ok(Some(PartitionValues::with_rows(Arc::new(Schema::new(fields)), columns, snapshot.files.len())?))
}
