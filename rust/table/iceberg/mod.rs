//! Apache Iceberg tables: the live files of a snapshot, from the table's `metadata/`, in
//! pure Rust — planned before any data footer is read, as a pruner pipeline plans
//! segments from a catalog.
//!
//! The stages, one file each:
//!
//! * [`metadata`] — find the current (or a named) metadata file, parse it (gzip too), pick
//!   the snapshot (current, by id, or as of a time).
//! * [`schema`] — an Iceberg schema as the Arrow schema the scan declares: field ids for
//!   matching files, the name mapping for files without ids, initial defaults.
//! * [`avro`] — manifest lists and manifests are Avro object container files.
//! * [`manifest`] — the manifest list's manifests and the manifests' live entries.
//! * [`manifest_cache`] — manifests decoded by earlier scans in the process.
//! * [`values`] — partition tuples and column bounds as Arrow arrays.
//! * [`transforms`] — partition transforms read backwards: the source values a
//!   partition value (or a manifest's summary of them) allows.
//! * [`deletes`] — equality deletes as a predicate on each data file's rows.
//! * [`statistics`] — file skipping on the manifests' column statistics and partition
//!   values, before any footer is read.
//! * [`table`] — what a scan keeps of a snapshot besides its files.
//! * [`open`] — a snapshot as a scan's table.
//!
//! The `iceberg` crate was weighed for this and not taken: it pins another arrow major
//! version than pqsift's (two arrows compiled, their types not interchangeable), and its
//! scan planning is its own where pqsift's pruning is Spark's three-valued semantics. The
//! Avro files are read with the Avro project's own crate, the JSON with serde.

pub mod avro;
pub mod deletes;
pub mod manifest;
pub mod manifest_cache;
pub mod metadata;
pub mod open;
pub mod schema;
pub mod statistics;
pub mod table;
pub mod transforms;
pub mod values;
