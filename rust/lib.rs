//! pqsift — a selective Parquet reader.
//!
//! The reader works in four levels, each reading only what the previous one left
//! (see `README.md`): files and byte-range splits, row groups pruned by zone maps and
//! bloom filters, pages pruned by the page index, and rows filtered by late
//! materialization. This crate is the Rust core; the Python package `pqsift` wraps it
//! through the `python` feature (PyO3), built by maturin.
//!
//! The modules are layers, listed here from the bottom up; each uses only the layers before
//! it (`tools/check_layers.py`, run by `make lint`, checks this, and that no files of one
//! layer use each other in a circle). First the foundations every stage shares:
//!
//! * [`error`] — the error type every fallible function returns, with its fields; the Python
//!   layer maps it to exception classes with attributes.
//! * [`interrupt`] — letting a long call be interrupted between units of work (Ctrl-C).
//! * [`lru`] — the bounded LRU behind both caches.
//! * [`allocator`] — the extension's global allocator: stock jemalloc, configured for
//!   large buffers freed in waves (one arena, freed pages kept 10 s, huge pages).
//! * [`selection`] — [`RowSelection`](selection::RowSelection): which rows of a row group
//!   to decode, as runs or a bitmask, with the adaptive, page-aware policy that picks between
//!   them and the page byte ranges a selection needs (`scan_ranges`).
//! * [`filter`] — how a scan names columns and rows, in Spark SQL: filter expressions
//!   (parsing, binding to an Arrow schema with Spark's coercion, evaluation on a batch), the
//!   projection's column paths and `ORDER BY` keys.
//!
//! Then the pipeline, in the order a scan runs it:
//!
//! * [`storage`] — where bytes live: local files opened safely, object stores (S3, GCS,
//!   Azure) with coalesced ranged reads, retries and metrics.
//! * [`pruning`] — the pruning math, reading no file: zone maps, three-valued evaluation
//!   of a filter on them, literal guarantees, normalisation.
//! * [`format`] — the file format: footers, page indexes, page headers, the metadata
//!   cache, a file opened for planning.
//! * [`table`] — level 1, what sources mean before any footer is read: directories listed
//!   as Spark lists them, Hive-style partitions, Delta log replay (reading its checkpoints
//!   through a trait the layers above implement), files pruned on partition values and log
//!   statistics.
//! * [`planning`] — levels 2 and 3, a scan planned from metadata: statistics, bloom
//!   filters, the page index, TopN; per row group Skip / Scan / Selection, explained and
//!   counted.
//! * [`reading`] — level 4, late materialization: row filters, the row group reader, the
//!   decoded-column cache, the ordered parallel stream, Spark-typed output.
//!
//! The Python bindings (`python`, with the `python` feature) sit on top and translate only.

pub mod allocator;
pub mod error;
pub mod filter;
pub mod format;
pub mod interrupt;
pub mod lru;
pub mod planning;
pub mod pruning;
pub mod reading;
pub mod selection;
pub mod storage;
pub mod table;

#[cfg(feature = "python")]
mod python;

/// The Python extension's allocator (see [`allocator`]).
#[cfg(feature = "python")]
#[global_allocator]
static GLOBAL: allocator::Allocator = allocator::Allocator;

pub use error::{PqsiftError, Result};
