//! Reading a checkpoint for log replay: the active files come from the `add`
//! column alone — a checkpoint's `remove` rows are tombstones that never hide one of its own
//! adds — so a Parquet checkpoint (a classic one, each part of a multi-part one, a v2
//! Parquet checkpoint and each Parquet sidecar) is read **with pqsift's own scan** (through
//! [`ParquetReads`], which the scan implements), projected
//! to `add` with `add.path IS NOT NULL` pushed down: row groups and pages holding only other
//! actions are pruned by statistics and the page index, and no other action's column
//! (`remove`, the largest, `metaData`, `txn`, ...) is decoded. The predicate decodes the
//! whole `add` column (predicates decode top-level columns), which the projection then
//! reuses from the cache: `add` is decoded once, for every row the plan kept, and only its
//! non-null rows are turned into actions.
//!
//! Protocol and metadata come from a second, small projected read of the same file (the
//! `protocol` and `metaData` columns, and `sidecar` for a v2 checkpoint, each with an
//! `IS NOT NULL` filter). JSON v2 checkpoints are parsed line by line, keeping the same
//! actions. What each Parquet read pruned and decoded is summed in [`CheckpointReadMetrics`].
//!
//! ```no_run
//! use pqsift::reading::table_reads::ScanReads;
//! use pqsift::table::delta::checkpoint::read_add_actions;
//! let path = std::path::Path::new("_delta_log/00000000000000000010.checkpoint.parquet").into();
//! let (adds, metrics) = read_add_actions(&path, &ScanReads).unwrap();
//! println!("{} adds; {} of {} rows selected", adds.len(), metrics.read.rows_selected, metrics.read.rows_total);
//! ```

use super::action_rows::{adds_from_array, array_to_json};
use super::actions::{Action, Add, Metadata, Protocol, Sidecar};
use super::log_segment::Checkpoint;
use super::paths::resolve_path;
use crate::error::{PqsiftError, Result, quoted};
use crate::format::opener::OpenedFile;
use crate::storage::Location;
use crate::storage::source::{Entry, read_all, stat};
use crate::table::allowed_locations::is_below;
use crate::table::parquet_reads::{ParquetReads, ReadCounts};

/// What the Parquet reads of a checkpoint pruned and decoded, summed over its files.
///
/// ```
/// let m = pqsift::table::delta::checkpoint::CheckpointReadMetrics::default();
/// assert_eq!(m.read.rows_total, 0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckpointReadMetrics {
    /// Parquet files read for `add` (checkpoint parts and sidecars).
    pub files: u64,
    /// `add` rows found.
    pub add_rows: u64,
    /// What the reads for `add` pruned and decoded (rows: actions of every kind).
    pub read: ReadCounts,
}

impl CheckpointReadMetrics {
    fn add(&mut self, other: &CheckpointReadMetrics) {
        self.files += other.files;
        self.add_rows += other.add_rows;
        self.read.add(&other.read);
    }
}

/// The part of a checkpoint log replay needs.
#[derive(Debug, Clone, Default)]
pub struct CheckpointActions {
    /// Every `add` of the checkpoint (its parts and sidecars).
    pub adds: Vec<Add>,
    /// Its `protocol`, if it holds one.
    pub protocol: Option<Protocol>,
    /// Its `metaData`, if it holds one.
    pub metadata: Option<Metadata>,
    /// Sidecar files read.
    pub sidecars: Vec<Location>,
    /// What the Parquet reads pruned and decoded.
    pub metrics: CheckpointReadMetrics,
}

/// Reads `checkpoint` of the table at `table_root`: its adds, protocol and metadata.
pub fn read_checkpoint(
    table_root: &Location,
    checkpoint: &Checkpoint,
    reads: &dyn ParquetReads,
) -> Result<CheckpointActions> {
    let mut out = CheckpointActions::default();
    let mut sidecars = Vec::new();
    for part in &checkpoint.parts {
        if part.is_json() {
            read_json_checkpoint(&part.path, &mut out, &mut sidecars)?;
        } else {
            let (adds, metrics) = read_add_actions(&part.path, reads)?;
            out.adds.extend(adds);
            out.metrics.add(&metrics);
            let others = read_other_actions(&part.path, reads)?;
            if out.protocol.is_none() {
                out.protocol = others.protocol;
            }
            if out.metadata.is_none() {
                out.metadata = others.meta_data;
            }
            sidecars.extend(others.sidecars);
        }
    }
    // A classic-named checkpoint may be a v2 one too (`checkpointMetadata` and sidecars in
    // `N.checkpoint.parquet`), so sidecars are followed whatever the name.
    let sidecar_dir = table_root.join("_delta_log").join("_sidecars");
    for sidecar in sidecars {
        let path = resolve_path(&sidecar_dir, &sidecar.path)?;
        // The protocol keeps sidecars in the table's own `_delta_log/_sidecars`.
        if !is_below(&path, &sidecar_dir) {
            return Err(PqsiftError::table(
                table_root,
                format!(
                    "the checkpoint at version {} names the sidecar {}, outside _delta_log/_sidecars",
                    checkpoint.version,
                    quoted(&path.to_string())
                ),
            ));
        }
        if !matches!(stat(&path)?, Some(Entry::File(_))) {
            return Err(PqsiftError::table(
                table_root,
                format!("sidecar {path} of the checkpoint at version {} is missing", checkpoint.version),
            ));
        }
        if path.file_name().is_some_and(|name| name.ends_with(".json")) {
            let mut nested = Vec::new();
            let mut actions = CheckpointActions::default();
            read_json_checkpoint(&path, &mut actions, &mut nested)?;
            out.adds.extend(actions.adds);
        } else {
            let (adds, metrics) = read_add_actions(&path, reads)?;
            out.adds.extend(adds);
            out.metrics.add(&metrics);
        }
        out.sidecars.push(path);
    }
    Ok(out)
}

/// The actions of a JSON checkpoint (or JSON sidecar) that replay needs.
fn read_json_checkpoint(path: &Location, out: &mut CheckpointActions, sidecars: &mut Vec<Sidecar>) -> Result<()> {
    let bytes = read_all(path)?;
    let text =
        std::str::from_utf8(&bytes).map_err(|e| PqsiftError::corrupt_delta(path, format!("not UTF-8 text: {e}")))?;
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let action = Action::parse_line(line)
            .map_err(|e| PqsiftError::corrupt_delta(path, format!("line {}: {e}", number + 1)))?;
        if let Some(add) = action.add {
            out.adds.push(add);
        }
        if out.protocol.is_none() {
            out.protocol = action.protocol;
        }
        if out.metadata.is_none() {
            out.metadata = action.meta_data;
        }
        if let Some(sidecar) = action.sidecar {
            sidecars.push(sidecar);
        }
    }
    Ok(())
}

/// The `add` rows of the Parquet checkpoint file `path`, read through `reads` (the `add`
/// column only, `add.path IS NOT NULL` pushed down), and what the read pruned.
pub fn read_add_actions(path: &Location, reads: &dyn ParquetReads) -> Result<(Vec<Add>, CheckpointReadMetrics)> {
    let opened = OpenedFile::open(path)?;
    let mut metrics = CheckpointReadMetrics { files: 1, ..Default::default() };
    if opened.schema.field_with_name("add").is_err() {
        // A checkpoint holding no add at all may leave the column out.
        metrics.read.rows_total = opened.metadata.file_metadata().num_rows().max(0) as u64;
        return Ok((Vec::new(), metrics));
    }
    let read = reads.read_columns(path, &["add".into()], "add.path IS NOT NULL")?;
    metrics.read = read.counts;
    let mut adds = Vec::new();
    for batch in &read.batches {
        let column =
            batch.column_by_name("add").ok_or_else(|| PqsiftError::corrupt_delta(path, "no add column in the read"))?;
        if let Some(typed) = adds_from_array(column.as_ref()) {
            adds.extend(typed.map_err(|e| e.in_file(path, "checkpoint add column"))?);
            continue;
        }
        for value in array_to_json(column.as_ref()).map_err(|e| e.in_file(path, "checkpoint add column"))? {
            if value.is_null() {
                continue;
            }
            let add: Add = serde_json::from_value(value)
                .map_err(|e| PqsiftError::corrupt_delta(path, format!("checkpoint add action: {e}")))?;
            adds.push(add);
        }
    }
    metrics.add_rows = adds.len() as u64;
    Ok((adds, metrics))
}

/// The protocol, metadata and sidecars of a Parquet checkpoint file.
#[derive(Debug, Default)]
struct OtherActions {
    protocol: Option<Protocol>,
    meta_data: Option<Metadata>,
    sidecars: Vec<Sidecar>,
}

/// Reads the `protocol`, `metaData` and `sidecar` columns of `path` (those it has), only
/// the rows where one of them is set.
fn read_other_actions(path: &Location, reads: &dyn ParquetReads) -> Result<OtherActions> {
    let opened = OpenedFile::open(path)?;
    let candidates =
        [("protocol", "protocol.minReaderVersion"), ("metaData", "metaData.id"), ("sidecar", "sidecar.path")];
    let present: Vec<(&str, &str)> =
        candidates.into_iter().filter(|(name, _)| opened.schema.field_with_name(name).is_ok()).collect();
    let mut out = OtherActions::default();
    if present.is_empty() {
        return Ok(out);
    }
    let columns: Vec<String> = present.iter().map(|(name, _)| name.to_string()).collect();
    let filter = present.iter().map(|(_, leaf)| format!("{leaf} IS NOT NULL")).collect::<Vec<_>>().join(" OR ");
    for batch in &reads.read_columns(path, &columns, &filter)?.batches {
        for (name, _) in &present {
            let Some(column) = batch.column_by_name(name) else { continue };
            for value in array_to_json(column.as_ref()).map_err(|e| e.in_file(path, "checkpoint"))? {
                if value.is_null() {
                    continue;
                }
                let bad =
                    |e: serde_json::Error| PqsiftError::corrupt_delta(path, format!("checkpoint {name} action: {e}"));
                match *name {
                    "protocol" if out.protocol.is_none() => {
                        out.protocol = Some(serde_json::from_value(value).map_err(bad)?)
                    }
                    "metaData" if out.meta_data.is_none() => {
                        out.meta_data = Some(serde_json::from_value(value).map_err(bad)?)
                    }
                    "sidecar" => out.sidecars.push(serde_json::from_value(value).map_err(bad)?),
                    _ => {}
                }
            }
        }
    }
    Ok(out)
}

/// The number of rows of a Parquet file, from its footer.
pub fn parquet_row_count(path: &Location) -> Result<u64> {
    let opened = OpenedFile::open(path)?;
    Ok(opened.metadata.file_metadata().num_rows().max(0) as u64)
}
