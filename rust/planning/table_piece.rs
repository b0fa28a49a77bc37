//! One file of a table as it travels to a task that plans it itself (lazy planning,
//! Databend's lazy partitions): what the table's metadata says of the file that its
//! footer cannot — the schema the table declares (with the file's identity partition
//! fills and equality-delete predicate), its partition values, and the rows the table's
//! metadata deletes (a Delta deletion vector's descriptor, an Iceberg file's deleted
//! positions). The driver read the metadata and pruned files on it; the task reads the
//! footer and prunes row groups, pages and rows as any scan does. A task given several
//! pieces scans them as one table ([`from_bytes`]).
//!
//! The bytes are checked on load as a [`TaskPlan`](super::task_plan::TaskPlan)'s are (a
//! tag, the format version, a CRC-32); no storage option travels in them.
//!
//! ```
//! # let dir = std::env::temp_dir().join("pqsift_table_piece_doc");
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("t.parquet");
//! # let batch = arrow::array::RecordBatch::try_from_iter([("id", std::sync::Arc::new(arrow::array::Int32Array::from((0..100).collect::<Vec<i32>>())) as _)]).unwrap();
//! # let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(25)).build();
//! # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
//! # w.write(&batch).unwrap(); w.close().unwrap();
//! use pqsift::planning::scan::{Scan, ScanOptions};
//! use pqsift::planning::table_piece;
//! use pqsift::storage::Storage;
//!
//! let scan = Scan::new(vec![path], None, Some("id >= 60"), ScanOptions::default()).unwrap();
//! // The driver: the first file, no footer read for it.
//! let bytes = table_piece::to_bytes(&scan, &[0]).unwrap().remove(0);
//! // A task: the table of that one file, which it scans (and plans) itself.
//! let table = table_piece::from_bytes(&[bytes], &Storage::default()).unwrap();
//! let task = Scan::of_table(table, None, Some("id >= 60"), ScanOptions::default()).unwrap();
//! // Its own footer pruned: the row groups of ids 0–49 skipped.
//! assert_eq!(task.plan().unwrap().metrics.rows_selected, 50);
//! ```

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use roaring::RoaringTreemap;
use serde::{Deserialize, Serialize};

use super::scan::Scan;
use super::task_plan::{WireLocation, WireValues, seal, unseal, wire_values};
use crate::error::{PqsiftError, Result};
use crate::filter::parse_filter;
use crate::storage::Storage;
use crate::table::delta::open::planned_delta_table;
use crate::table::iceberg::table::IcebergTable;
use crate::table::partition_values::PartitionValues;
use crate::table::resolved::TableFormat;
use crate::table::schema_adapter::DeclaredSchema;
use crate::table::source::Table;

/// The tag of a table piece's bytes.
const TAG: &[u8; 8] = b"PQSFPIEC";

#[derive(Serialize, Deserialize)]
struct Wire {
    /// The table's name, for messages.
    name: String,
    location: WireLocation,
    /// One row of partition values.
    partitions: Option<WireValues>,
    /// The schema the file is read into (`DeclaredSchema::to_text`), its fields requested,
    /// its fills (one row) and its delete predicate (canonical Spark SQL).
    declared: Option<WireDeclared>,
    /// A Delta table's root and the file's deletion vector descriptor (JSON).
    delta_deletion_vector: Option<(WireLocation, String)>,
    /// An Iceberg table's root and the positions its deletes delete (a portable Roaring
    /// bitmap), if any.
    iceberg: Option<(WireLocation, Option<Vec<u8>>)>,
}

#[derive(Serialize, Deserialize)]
struct WireDeclared {
    text: String,
    requested: Vec<bool>,
    fills: Option<WireValues>,
    deletes: Option<String>,
}

/// The files at `positions` of `scan`'s table as pieces a task plans, one each (see the
/// module documentation). For a table whose files may differ from the first, the schema
/// every file is read into travels too ([`Scan::scan_schema`], which may read the first
/// footer), written once for all the pieces.
pub fn to_bytes(scan: &Scan, positions: &[usize]) -> Result<Vec<Vec<u8>>> {
    let table = scan.table();
    let scan_schema = scan.scan_schema()?;
    let schema_text = scan_schema.as_ref().map(|declared| declared.to_text());
    positions
        .iter()
        .map(|&position| {
            let location = table.files.get(position).ok_or_else(|| {
                PqsiftError::TaskPlan(format!("no file at position {position} of {}", table.files.len()))
            })?;
            let declared = match (&scan_schema, &schema_text) {
                (Some(declared), Some(text)) => {
                    let one = declared.select(&[position])?;
                    Some(WireDeclared {
                        text: text.clone(),
                        requested: one.requested,
                        fills: one.fills.as_ref().map(wire_values),
                        deletes: one.deletes.as_ref().and_then(|d| d[0].as_ref()).map(ToString::to_string),
                    })
                }
                _ => None,
            };
            let delta_deletion_vector = match &table.delta {
                Some(delta) => match delta.files.get(position).and_then(|f| f.deletion_vector.as_ref()) {
                    Some(dv) => Some((
                        WireLocation::of(&delta.table_root),
                        serde_json::to_string(dv).map_err(|e| PqsiftError::TaskPlan(e.to_string()))?,
                    )),
                    None => None,
                },
                None => None,
            };
            let iceberg = match &table.iceberg {
                Some(iceberg) => {
                    let deleted = match iceberg.deleted_positions.get(position).and_then(Option::as_ref) {
                        Some(positions) => {
                            let mut bytes = Vec::with_capacity(positions.serialized_size());
                            positions.serialize_into(&mut bytes).map_err(|e| PqsiftError::TaskPlan(e.to_string()))?;
                            Some(bytes)
                        }
                        None => None,
                    };
                    Some((WireLocation::of(&iceberg.table_root), deleted))
                }
                None => None,
            };
            let partitions = table.partitions.as_ref().map(|p| p.select(&[position])).transpose()?;
            let wire = Wire {
                name: table.name.clone(),
                location: WireLocation::of(location),
                partitions: partitions.as_ref().map(wire_values),
                declared,
                delta_deletion_vector,
                iceberg,
            };
            seal(TAG, &wire, &[])
        })
        .collect()
}

/// The table of the files of `pieces`, which [`to_bytes`] wrote for one scan, in their
/// order: a task's files scanned as one table, so that one plan and one stream serve them
/// all (a scan per file costs its own planning and stream start, and a `limit` or top-k
/// threshold would not carry from one file to the next). Store clients are built with
/// `storage`'s options.
///
/// Pieces of different tables (another name, declared schema, partition columns or table
/// root) are refused.
pub fn from_bytes<B: AsRef<[u8]>>(pieces: &[B], storage: &Storage) -> Result<Table> {
    let invalid = |reason: String| PqsiftError::TaskPlan(reason);
    let wires = pieces
        .iter()
        .map(|bytes| {
            let (wire, rest): (Wire, &[u8]) = unseal(TAG, "table piece", bytes.as_ref())?;
            match rest.is_empty() {
                true => Ok(wire),
                false => Err(invalid(format!("{} bytes after a table piece", rest.len()))),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let Some(first) = wires.first() else { return Err(invalid("no table piece".into())) };
    let same_table = |wire: &Wire| {
        wire.name == first.name
            && wire.partitions.as_ref().map(|p| &p.0) == first.partitions.as_ref().map(|p| &p.0)
            && wire.declared.as_ref().map(|d| (&d.text, &d.requested))
                == first.declared.as_ref().map(|d| (&d.text, &d.requested))
            && wire.declared.as_ref().and_then(|d| d.fills.as_ref().map(|f| &f.0))
                == first.declared.as_ref().and_then(|d| d.fills.as_ref().map(|f| &f.0))
            && wire.iceberg.as_ref().map(|i| &i.0) == first.iceberg.as_ref().map(|i| &i.0)
    };
    if let Some(other) = wires.iter().find(|wire| !same_table(wire)) {
        return Err(invalid(format!("table pieces of two tables ({} and {})", first.name, other.name)));
    }
    let delta_roots: Vec<&WireLocation> =
        wires.iter().filter_map(|w| w.delta_deletion_vector.as_ref().map(|(root, _)| root)).collect();
    if delta_roots.windows(2).any(|pair| pair[0] != pair[1]) {
        return Err(invalid("table pieces of deletion vectors of two tables".into()));
    }

    let name = first.name.clone();
    let partition_names = first.partitions.as_ref().map(|p| p.0.clone()).unwrap_or_default();
    let declared = first.declared.as_ref().map(|d| (d.text.clone(), d.requested.clone()));
    let fill_names = first.declared.as_ref().and_then(|d| d.fills.as_ref().map(|f| f.0.clone()));
    let iceberg_root = first.iceberg.as_ref().map(|i| i.0.clone().into_location(storage)).transpose()?;
    let delta_root = delta_roots.first().map(|root| (*root).clone().into_location(storage)).transpose()?;

    let files = wires.len();
    let mut locations = Vec::with_capacity(files);
    let mut partition_rows = Vec::with_capacity(files);
    let mut fill_rows = Vec::with_capacity(files);
    let mut deletes = Vec::with_capacity(files);
    let mut deletion_vectors = Vec::with_capacity(files);
    let mut deleted_positions = Vec::with_capacity(files);
    // The files of a partition share their equality deletes: each text is parsed once.
    let mut parsed_deletes: HashMap<String, crate::filter::Expr> = HashMap::new();
    for wire in wires {
        locations.push(wire.location.into_location(storage)?);
        partition_rows.extend(wire.partitions.map(|(_, rows)| rows).unwrap_or_else(|| vec![Vec::new()]));
        if let Some(declared) = wire.declared {
            fill_rows.extend(declared.fills.map(|(_, rows)| rows).unwrap_or_default());
            let parsed = match declared.deletes {
                Some(text) => Some(match parsed_deletes.entry(text) {
                    Entry::Occupied(known) => known.get().clone(),
                    Entry::Vacant(new) => {
                        let expr = parse_filter(new.key())?;
                        new.insert(expr).clone()
                    }
                }),
                None => None,
            };
            deletes.push(parsed);
        }
        deletion_vectors.push(wire.delta_deletion_vector.map(|(_, descriptor)| descriptor));
        let deleted = match wire.iceberg.and_then(|(_, deleted)| deleted) {
            Some(bytes) => Some(Arc::new(
                RoaringTreemap::deserialize_from(bytes.as_slice())
                    .map_err(|e| invalid(format!("deleted positions that do not decode: {e}")))?,
            )),
            None => None,
        };
        deleted_positions.push(deleted);
    }
    if partition_rows.len() != files {
        return Err(invalid(format!("partition values of {} files for {files}", partition_rows.len())));
    }
    let partitions = PartitionValues::from_text(&partition_names, &partition_rows)?;
    let mut table = Table::with_partitions(locations, partitions)?;
    table.name = name;
    let Some((text, requested)) = declared else { return Ok(table) };
    let deletion_vectors = delta_root.map(|root| (root, deletion_vectors));
    let mut table = planned_delta_table(table, &text, deletion_vectors)?;
    let mut schema = DeclaredSchema::clone(table.declared.as_deref().expect("a declared schema"));
    if !requested.is_empty() && requested.len() != schema.schema.fields().len() {
        return Err(invalid("requested fields that do not match its schema".into()));
    }
    schema.requested = requested;
    schema.fills = fill_names.map(|names| PartitionValues::from_text(&names, &fill_rows)).transpose()?;
    if schema.fills.as_ref().is_some_and(|f| f.len() != files) {
        return Err(invalid("fills of another number of files".into()));
    }
    schema.deletes = deletes.iter().any(Option::is_some).then_some(deletes);
    table.declared = Some(Arc::new(schema));
    if let Some(root) = iceberg_root {
        table.format = TableFormat::Iceberg;
        table.iceberg = Some(Arc::new(IcebergTable::planned_elsewhere(root, deleted_positions)));
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_or_foreign_bytes_are_refused() {
        let storage = Storage::default();
        assert!(from_bytes(&[b"PQSFTASK not a piece"], &storage).unwrap_err().to_string().contains("table piece"));
        let path = std::env::temp_dir().join("pqsift_table_piece_test.parquet");
        let batch = arrow::array::RecordBatch::try_from_iter([(
            "id",
            Arc::new(arrow::array::Int32Array::from(vec![1, 2])) as arrow::array::ArrayRef,
        )])
        .unwrap();
        let mut writer =
            parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let scan = Scan::new(vec![path], None, None, crate::planning::scan::ScanOptions::default()).unwrap();
        let mut bytes = to_bytes(&scan, &[0]).unwrap().remove(0);
        assert_eq!(from_bytes(&[&bytes], &storage).unwrap().files.len(), 1);
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert!(from_bytes(&[&bytes], &storage).unwrap_err().to_string().contains("checksum"));
    }
}
