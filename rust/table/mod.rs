//! Tables: what a source path means before any footer is read (level 1 of the pipeline).
//!
//! A source is a file, a list of files, a directory of Parquet files laid out by Hive-style
//! partitioning (`day=2026-01-02/country=TW/part-0.parquet`, as Spark's `partitionBy`
//! writes), or a Delta table (`_delta_log/` beside the data). Each resolves to a
//! [`Table`](source::Table): its data files, each with its partition values, and the
//! partition columns' schema. Pruning on partition values (and, for Delta, on the log's
//! file statistics) runs on that list before a data file is opened.
//!
//! * [`allowed_locations`] — what a table's metadata may make a scan read: locations below
//!   its root, or below prefixes the user allowed.
//! * [`listing`] — the files of a directory, with the names Spark ignores left out.
//! * [`hive`] — Spark's partition discovery: `key=value` directories, type inference,
//!   escaping, `basePath`.
//! * [`delta`] — Delta log replay: the active files of a snapshot.
//! * [`iceberg`] — Iceberg metadata, manifest lists and manifests: the live files of a
//!   snapshot.
//! * [`source`] — the table a source resolves to, and the partition schema merged with the
//!   files' own schema as Spark merges them.
//! * [`column_matching`] — how a scan schema's fields find a file's columns: by name,
//!   by a Delta physical name, or by Parquet field id.
//! * [`schema_adapter`] — a declared (Delta) schema over files that name, lack or narrow
//!   its columns: column mapping, schema evolution, type widening.
//! * [`schema_evolution`] — files of one table with different schemas: Spark's scan
//!   schema (the first file's, or the merged one) and which type differences it reads.
//! * [`parquet_reads`] — how table code reads Parquet files of its own (a Delta checkpoint):
//!   through a trait the scan implements.
//! * [`deleted_rows`] — rows a table's metadata deletes from a file, as row selections.
//! * [`file_pruning`] — three-valued pruning of whole files on partition values and file
//!   statistics, with files as the containers of zone maps.

pub mod allowed_locations;
pub mod column_matching;
pub mod deleted_rows;
pub mod delta;
pub mod file_pruning;
pub mod hive;
pub mod iceberg;
pub mod listing;
pub mod parquet_reads;
pub mod partition_values;
pub mod resolved;
pub mod schema_adapter;
pub mod schema_evolution;
pub mod source;
