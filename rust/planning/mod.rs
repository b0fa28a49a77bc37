//! The planning layer (levels 2 and 3 of the pipeline): what a scan reads, decided from
//! metadata alone — row groups by zone maps and bloom filters, pages by the page index —
//! as an access plan per file. The pruning math it applies is in [`crate::pruning`].
//!
//! * [`row_group_filter`], [`bloom_filter`], [`page_filter`] — the stages, in DataFusion's
//!   order: file range, statistics, bloom filters, page index.
//! * [`access_plan`] — per row group Skip / Scan / Selection, with the reason.
//! * [`metrics`] — what planning pruned, counted.
//! * [`read_estimate`] — the compressed bytes a planned row group's read can take.
//! * [`scan`] — a scan: its table, filter, projection and options, and its plan.
//! * [`task_plan`] — a plan (or a piece of one) as data: what a read, here or in a Spark
//!   task, consumes without planning again.
//! * [`table_piece`], [`manifest_piece`] — what a Spark task that plans for itself is
//!   given: one file of a table, or a stripe of an Iceberg snapshot's data manifests.

pub mod access_plan;
pub mod bloom_filter;
pub mod manifest_piece;
pub mod metrics;
pub mod page_filter;
pub mod read_estimate;
pub mod row_group_filter;
pub mod scan;
pub mod table_piece;
pub mod task_plan;
pub mod topn_pruner;
pub mod why_not;
