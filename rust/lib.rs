//! pqsift — a selective Parquet reader.
//!
//! The reader works in four levels, each reading only what the previous one left
//! (see `README.md`): files and byte-range splits, row groups pruned by zone maps and
//! bloom filters, pages pruned by the page index, and rows filtered by late
//! materialization. This crate is the Rust core; the Python package `pqsift` wraps it
//! through the `python` feature (PyO3), built by maturin.
//!
//! The modules are grouped by layer, and named after the pipeline stage they implement:
//!
//! * [`table`] — level 1, what sources mean before any footer is read: directories listed
//!   as Spark lists them, Hive-style partition directories discovered and typed as Spark
//!   does, Delta log replay, files pruned on partition values and log statistics.
//! * [`format`] — the file format and I/O: footers, page indexes, page headers, the
//!   metadata cache, counted positioned reads.
//! * [`planning`] — levels 2 and 3, planning a scan from metadata: zone maps, three-valued
//!   pruning, statistics, bloom filters, the page index; per row group Skip / Scan /
//!   Selection, explained and counted.
//! * [`reading`] — level 4, late materialization: row filters, the row group reader, the
//!   decoded-column cache, the ordered parallel stream, Spark-typed output.
//! * [`selection`] — [`RowSelection`](selection::RowSelection): which rows of a row group
//!   to decode, as runs or a bitmask, with the adaptive, page-aware policy that picks between
//!   them and the page byte ranges a selection needs (`scan_ranges`); shared by planning
//!   and reading.
//! * [`filter`] — filter expressions in Spark SQL: the model ([`filter::Expr`]), parsing
//!   ([`filter::parse_filter`]), binding to an Arrow schema with Spark's type coercion
//!   ([`filter::bind()`]) and evaluation on a record batch ([`filter::evaluate()`]).
//! * [`interrupt`] — letting a long call be interrupted between units of work (Ctrl-C).
//! * [`lru`] — the bounded LRU behind both caches.
//! * [`allocator`] — the extension's global allocator: large blocks mapped in size
//!   classes, offered transparent huge pages, grown by `mremap` and kept a moment for reuse
//!   when freed.
//! * [`error`] — the error type every fallible function returns; the Python layer maps it to
//!   Python exception classes.

pub mod allocator;
pub mod error;
pub mod filter;
pub mod format;
pub mod interrupt;
pub mod lru;
pub mod planning;
pub mod reading;
pub mod selection;
pub mod storage;
pub mod table;

#[cfg(feature = "python")]
mod python;

/// The Python extension's allocator (see [`allocator`]).
#[cfg(feature = "python")]
#[global_allocator]
static GLOBAL: allocator::BufferAllocator = allocator::BufferAllocator;

pub use error::{PqsiftError, Result};
