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
//! * [`selection`] — [`RowSelection`](selection::RowSelection): which rows of a row group
//!   to decode, as runs or a bitmask, with the adaptive, page-aware policy that picks between
//!   them and the page byte ranges a selection needs (`scan_ranges`).
//! * [`metadata`] — footers and page indexes (ParquetOpener step 1 of seed 000).
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
//! * [`error`] — the error type every fallible function returns; the Python layer maps it to
//!   Python exception classes.

pub mod access_plan;
pub mod bloom_filter;
pub mod error;
pub mod filter;
pub mod metadata;
pub mod metrics;
pub mod normalise;
pub mod opener;
pub mod page_filter;
pub mod pruning_predicate;
pub mod row_group_filter;
pub mod scan;
pub mod selection;
pub mod zone_map;

#[cfg(feature = "python")]
mod python;

pub use error::{PqsiftError, Result};
