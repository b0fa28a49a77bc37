//! What a scan keeps of a Delta snapshot besides its files: per file what the log knows of
//! it (deletion vector, statistics) for planning and reading, and the typing of partition
//! values as the log writes them. [`super::open`] turns a snapshot into a scan's table.
//!
//! ```
//! use arrow::datatypes::DataType;
//! use pqsift::table::delta::table::typed_column;
//! let days = typed_column(&DataType::Date32, &[Some("2024-01-02"), None], "UTC").unwrap();
//! assert_eq!(days.null_count(), 1);
//! ```

use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, StringArray, TimestampMicrosecondArray, new_null_array};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, TimeUnit};

use super::log_replay::LogReplayMetrics;
use super::snapshot::DeltaFile;
use crate::error::{PqsiftError, Result};
use crate::filter::TimestampLiteral;
use crate::selection::RowSelection;
use crate::storage::Location;
use crate::table::deleted_rows::kept_by_row_group;

/// What a scan keeps of a Delta snapshot besides its files.
#[derive(Debug, Clone)]
pub struct DeltaTable {
    /// The table's root directory.
    pub table_root: Location,
    /// The snapshot's version.
    pub version: u64,
    /// Per file of the table (same order): its `add` entry.
    pub files: Vec<DeltaFile>,
    /// What log replay read.
    pub replay: LogReplayMetrics,
    /// The longest string prefix the writer keeps in statistics
    /// (`delta.dataSkippingStringPrefixLength`, 32).
    pub string_prefix_length: usize,
}

impl DeltaTable {
    /// Rows deleted by deletion vectors, over the table's files.
    pub fn deleted_rows(&self) -> u64 {
        self.files.iter().filter_map(|f| f.deletion_vector.as_ref()).map(|dv| dv.cardinality.max(0) as u64).sum()
    }

    /// The rows of file `position` its deletion vector keeps, per row group of `row_group_rows`
    /// rows (`None`: the file has no deletion vector).
    pub fn kept_rows(&self, position: usize, row_group_rows: &[usize]) -> Result<Option<Vec<RowSelection>>> {
        let Some(dv) = self.files.get(position).and_then(|f| f.deletion_vector.as_ref()) else {
            return Ok(None);
        };
        let total: u64 = row_group_rows.iter().map(|&r| r as u64).sum();
        let deleted = dv.load_treemap(&self.table_root, total)?;
        let path = &self.files[position].path;
        kept_by_row_group(&deleted, row_group_rows)
            .map(Some)
            .map_err(|e| PqsiftError::table(&self.table_root, format!("the deletion vector of {path}: {e}")))
    }

    /// What log replay did, as `(name, value)` pairs for a scan's metrics.
    pub fn metrics(&self) -> Vec<(&'static str, u64)> {
        let r = &self.replay;
        let c = &r.checkpoint_read.read;
        vec![
            ("delta_version", self.version),
            ("delta_active_files", r.active_files),
            ("delta_commits_read", r.commits_read),
            ("delta_checkpoint_parts", r.checkpoint_parts),
            ("delta_sidecars_read", r.sidecars_read),
            ("delta_checkpoint_row_groups_total", c.row_groups_total),
            ("delta_checkpoint_row_groups_pruned", c.row_groups_pruned),
            ("delta_checkpoint_pages_total", c.pages_total),
            ("delta_checkpoint_pages_pruned", c.pages_pruned),
            ("delta_checkpoint_rows_total", c.rows_total),
            ("delta_checkpoint_rows_selected", c.rows_selected),
            ("delta_checkpoint_values_decoded", c.values_decoded),
            ("delta_checkpoint_adds", r.checkpoint_adds),
            ("delta_checkpoint_bytes_read", c.bytes_read),
            ("delta_commit_adds", r.commit_adds),
            ("delta_commit_removes", r.commit_removes),
        ]
    }

    /// The log replay in words, for a scan's explain.
    pub fn explain(&self) -> String {
        let r = &self.replay;
        let c = &r.checkpoint_read.read;
        let mut text = format!(
            "delta table {} at version {}: {} active file(s), {} commit(s) replayed",
            self.table_root, self.version, r.active_files, r.commits_read
        );
        if let Some(version) = r.checkpoint_version {
            text.push_str(&format!(
                " after checkpoint {version} ({} part(s), {} sidecar(s)); checkpoint read for `add` only: {} of {} row group(s) and {} of {} page(s) skipped, {} of {} rows selected, {} values decoded, {} adds",
                r.checkpoint_parts,
                r.sidecars_read,
                c.row_groups_pruned,
                c.row_groups_total,
                c.pages_pruned,
                c.pages_total,
                c.rows_selected,
                c.rows_total,
                c.values_decoded,
                r.checkpoint_adds
            ));
        }
        let deleted = self.deleted_rows();
        if deleted > 0 {
            text.push_str(&format!("; deletion vectors delete {deleted} row(s)"));
        }
        text.push('\n');
        text
    }

    /// The entries of the files at `positions`.
    pub fn select(&self, positions: &[usize]) -> Self {
        Self { files: positions.iter().map(|&p| self.files[p].clone()).collect(), ..self.clone() }
    }
}

/// Partition values as the log serializes them (the Delta protocol's "Partition Value
/// Serialization"): numbers and booleans as text, dates `2020-01-01`, timestamps
/// `2020-01-01 10:00:00[.123456]` (a wall clock in `session_time_zone`, as Spark writes
/// and reads them) or ISO 8601 with a zone, binary as the string's characters taken as
/// bytes. Log statistics use the same parsing.
pub fn typed_column(
    data_type: &DataType,
    text: &[Option<&str>],
    session_time_zone: &str,
) -> std::result::Result<ArrayRef, String> {
    let strings = StringArray::from(text.to_vec());
    let strict = CastOptions { safe: false, ..Default::default() };
    match data_type {
        DataType::Null => Ok(new_null_array(data_type, text.len())),
        DataType::Utf8 => Ok(Arc::new(strings)),
        DataType::Binary => {
            let bytes: Vec<Option<Vec<u8>>> = text
                .iter()
                .map(|v| {
                    v.map(|s| {
                        s.chars()
                            .map(|c| u8::try_from(u32::from(c)).map_err(|_| format!("{s:?} is not a binary value")))
                            .collect()
                    })
                    .transpose()
                })
                .collect::<std::result::Result<_, _>>()?;
            Ok(Arc::new(BinaryArray::from_iter(bytes)))
        }
        DataType::Timestamp(TimeUnit::Microsecond, zone) => {
            let micros = text
                .iter()
                .map(|v| {
                    v.map(|s| {
                        let literal =
                            TimestampLiteral::parse(s.trim()).ok_or_else(|| format!("{s:?} is not a timestamp"))?;
                        match zone {
                            Some(_) => literal.instant_micros(session_time_zone),
                            None => Ok(literal.wall_clock_micros()),
                        }
                        .map_err(|e| e.to_string())
                    })
                    .transpose()
                })
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Ok(Arc::new(TimestampMicrosecondArray::from(micros).with_data_type(data_type.clone())))
        }
        _ => cast_with_options(&strings, data_type, &strict).map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Int32Type, TimestampMicrosecondType};

    #[test]
    fn partition_values_parse_as_the_protocol_writes_them() {
        let ints = typed_column(&DataType::Int32, &[Some("7"), None], "UTC").unwrap();
        assert_eq!(ints.as_primitive::<Int32Type>().value(0), 7);
        assert!(ints.is_null(1));
        let utc = DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, Some("UTC".into()));
        let times =
            typed_column(&utc, &[Some("1970-01-01 00:00:01.5"), Some("1970-01-01T00:00:02.000001Z")], "UTC").unwrap();
        assert_eq!(times.as_primitive::<TimestampMicrosecondType>().values(), &[1_500_000, 2_000_001]);
        let pacific =
            typed_column(&utc, &[Some("1970-01-01 00:00:00"), Some("1970-01-01T00:00:00Z")], "America/Los_Angeles")
                .unwrap();
        assert_eq!(pacific.as_primitive::<TimestampMicrosecondType>().values(), &[8 * 3_600_000_000, 0]);
        let binary = typed_column(&DataType::Binary, &[Some("\u{1}\u{2}")], "UTC").unwrap();
        assert_eq!(binary.as_binary::<i32>().value(0), &[1, 2]);
        assert!(typed_column(&DataType::Int32, &[Some("x")], "UTC").is_err());
    }

    #[test]
    fn kept_rows_split_a_deletion_vector_by_row_group() {
        let dv = super::super::deletion_vector::encode_inline(&[0, 4, 5, 9]);
        let descriptor: super::super::deletion_vector::DeletionVectorDescriptor = serde_json::from_str(&format!(
            r#"{{"storageType":"i","pathOrInlineDv":"{dv}","sizeInBytes":0,"cardinality":4}}"#
        ))
        .unwrap();
        let file = DeltaFile {
            path: Location::from(std::path::Path::new("/t/f.parquet")),
            size: 1,
            partition_values: Default::default(),
            stats: Default::default(),
            deletion_vector: Some(descriptor),
            modification_time: 0,
        };
        let table = DeltaTable {
            table_root: Location::from(std::path::Path::new("/t")),
            version: 0,
            files: vec![file],
            replay: Default::default(),
            string_prefix_length: 32,
        };
        let kept = table.kept_rows(0, &[5, 5]).unwrap().unwrap();
        assert_eq!(kept[0].to_bools(), [false, true, true, true, false]);
        assert_eq!(kept[1].to_bools(), [false, true, true, true, false]);
        assert!(table.kept_rows(0, &[5, 4]).is_err());
    }
}
