//! Delta Lake tables: the active files of a snapshot, from the table's
//! `_delta_log/`, in pure Rust.
//!
//! The stages, one file each:
//!
//! * [`log_segment`] — list `_delta_log/`; pick the newest complete checkpoint at or before
//!   the version (classic, multi-part, v2) and the contiguous commits after it;
//!   `_last_checkpoint` is a hint only.
//! * [`actions`] — the log's actions as serde types (unknown fields and actions ignored).
//! * [`paths`] — `add.path` and friends: URI-encoded, relative or absolute, to local paths.
//! * [`checkpoint`] — a Parquet checkpoint read with pqsift's own scan, projected to `add`
//!   with `add.path IS NOT NULL` pushed down, plus a small read of protocol and
//!   metadata; JSON v2 checkpoints and sidecars. [`action_rows`] turns its Arrow rows into
//!   the same JSON shape as a commit's lines.
//! * [`log_replay`] — newest action per (path, deletion vector) wins; protocol and metadata
//!   from the newest.
//! * [`log_statistics`] — file skipping on the log's `stats` before any footer is read.
//! * [`protocol`] — which reader versions and features are supported.
//! * [`schema`] — `schemaString` to an Arrow schema; column mapping mode.
//! * [`deletion_vector`] — deletion vector descriptors and their RoaringTreemap bitmaps.
//! * [`snapshot`] — the entry point: [`load_snapshot`] and [`DeltaSnapshot`].
//! * [`table`] — what a scan keeps of a snapshot: per file its deletion vector (as row
//!   selections) and statistics; partition values typed as the log writes them.
//! * [`open`] — a snapshot as a scan's table, with the declared schema.
//!
//! ```no_run
//! use pqsift::reading::table_reads::ScanReads;
//! use pqsift::storage::Location;
//! use pqsift::table::delta::{is_delta_table, load_snapshot, SnapshotSpec};
//! let root = Location::from(std::path::Path::new("/data/events"));
//! if is_delta_table(&root) {
//!     let snapshot = load_snapshot(&root, SnapshotSpec::Version(3), &Default::default(), &ScanReads).unwrap();
//!     assert_eq!(snapshot.version, 3);
//! }
//! ```

pub mod action_rows;
pub mod actions;
pub mod checkpoint;
pub mod deletion_vector;
pub mod log_replay;
pub mod log_segment;
pub mod log_statistics;
pub mod open;
pub mod paths;
pub mod protocol;
pub mod schema;
pub mod snapshot;
pub mod table;

#[cfg(test)]
mod tests;

pub use snapshot::{DeltaFile, DeltaSnapshot, FileStats, LogStats, SnapshotSpec, is_delta_table, load_snapshot};
