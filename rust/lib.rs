//! pqsift — a selective Parquet reader.
//!
//! The reader works in four levels, each reading only what the previous one left
//! (see `README.md`): files and byte-range splits, row groups pruned by zone maps and
//! bloom filters, pages pruned by the page index, and rows filtered by late
//! materialization. This crate is the Rust core; the Python package `pqsift` wraps it
//! through the `python` feature (PyO3), built by maturin.
//!
//! Modules are named after the pipeline stage they implement:
//!
//! * [`table`] — what sources mean before any footer is read: directories listed as Spark
//!   lists them, Hive-style partition directories discovered and typed as Spark does,
//!   files pruned on their partition values (level 1), Delta log replay.
//! * [`selection`] — [`RowSelection`](selection::RowSelection): which rows of a row group
//!   to decode, as runs or a bitmask, with the adaptive, page-aware policy that picks between
//!   them and the page byte ranges a selection needs (`scan_ranges`).
//! * [`metadata`] — footers and page indexes (ParquetOpener step 1 of seed 000).
//! * [`inspect`] — a summary of a file's metadata for people (`pqsift inspect`).
//! * [`zone_map`] — per row group and per page min/max/null counts of a column, with the
//!   Parquet rules on exactness, deprecated fields and NaN applied (seed 002).
//! * [`filter`] — filter expressions in Spark SQL: the model ([`filter::Expr`]), parsing
//!   ([`filter::parse_filter`]), binding to an Arrow schema with Spark's type coercion
//!   ([`filter::bind()`]) and evaluation on a record batch ([`filter::evaluate()`]).
//! * [`pruning_predicate`] — three-valued evaluation of a filter on zone maps (can be true /
//!   can be false per container), through monotonic functions.
//! * [`normalise`] — conjuncts on one column merged into ranges and value sets.
//! * [`opener`], [`row_group_filter`], [`bloom_filter`], [`page_filter`], [`access_plan`],
//!   [`metrics`], [`scan`] — planning a scan from metadata: file range, statistics, bloom
//!   filters, page index; per row group Skip / Scan / Selection, explained and counted.
//! * [`row_filter`] — the filter's conjuncts as predicates, ordered cheapest first and
//!   re-ranked by observed cost per row removed (seed 000 step 2).
//! * [`row_group_reader`] — LM-pipelined evaluation of a row group: predicate columns
//!   first, projected columns for survivors only (seed 001 §2).
//! * [`reader`] — opening a scan for reading: projection, row filters, the stream.
//! * [`metadata_cache`] — the process-wide metadata cache (path, size, mtime; bounded).
//! * [`scan_stream`] — the output: row groups read by a bounded pool, batches in order,
//!   memory bounded, early stop for a limit; an Arrow `RecordBatchReader`.
//! * [`cached_reader`] — the two-tier cache of decoded columns (seed 001 §3.3).
//! * [`io`] — positioned reads that count bytes.
//! * [`error`] — the error type every fallible function returns; the Python layer maps it to
//!   Python exception classes.

pub mod access_plan;
pub mod bloom_filter;
pub mod cached_reader;
pub mod error;
pub mod filter;
pub mod inspect;
pub mod io;
pub mod lru;
pub mod metadata;
pub mod metadata_cache;
pub mod metrics;
pub mod normalise;
pub mod opener;
pub mod page_filter;
pub mod page_headers;
pub mod projection;
pub mod pruning_predicate;
pub mod reader;
pub mod row_filter;
pub mod row_group_filter;
pub mod row_group_reader;
pub mod scan;
pub mod scan_stream;
pub mod selection;
pub mod spark_output;
pub mod table;
mod thrift_walk;
pub mod zone_map;

#[cfg(feature = "python")]
mod python;

pub use error::{PqsiftError, Result};
