//! The pruning math, shared by every stage that skips data on metadata: a table's files on
//! partition values and log statistics, a file's row groups and pages. It reads no file:
//! stages above give it zone maps (from footers, page indexes, Delta logs) and a bound
//! filter, and it answers which containers may hold a matching row.
//!
//! * [`zone_map`] — per container (row group, page, file) min/max/null counts of a column,
//!   with the Parquet rules on exactness, deprecated fields and NaN applied.
//! * [`pruning_predicate`] — three-valued evaluation of a filter on zone maps (can be true /
//!   can be false per container), through monotonic functions.
//! * [`guarantees`] — literal guarantees: the values a column must take for the filter to
//!   hold (what bloom filters are probed with).
//! * [`normalise`] — conjuncts on one column merged into ranges and value sets.

pub mod guarantees;
pub mod normalise;
pub mod pruning_predicate;
pub mod zone_map;
