//! The reading layer (level 4 of the pipeline): late materialization over the row groups
//! a plan kept — predicate columns first, the selection refined by each, the projection
//! decoded for the survivors only — and the stream of output batches.
//!
//! * [`row_filter`] — the filter's conjuncts as predicates, ordered cheapest first and
//!   re-ranked by observed cost per row removed (as DataFusion orders its row filters).
//! * [`cached_reader`] — the two-tier cache of decoded columns: a column decoded for the
//!   filter is not decoded again for the output.
//! * [`flat_decode`] — flat fixed-width and dictionary-encoded string columns decoded for
//!   the selected rows only, straight into Arrow buffers.
//! * [`int96_range`] — INT96 timestamps the crate decodes in nanoseconds, checked for the
//!   wrap past 2262 (decoded again in seconds).
//! * [`repetition_levels`] — the repetition levels of a list or map column's pages checked
//!   before the crate skips rows inside them (it loops forever where they end early).
//! * [`map_keys`] — a map decoded with a null key (its footer declaring the key optional)
//!   refused, as an Arrow map cannot hold one.
//! * [`dictionary_predicate`] — a predicate on one dictionary-encoded string column evaluated
//!   once per dictionary entry, each row taking its key's answer.
//! * [`select_rows`] — an array's rows under a mask (Arrow's filter, fixed-width values
//!   and dictionary keys moved by AVX-512 compress).
//! * [`round_trips`] — from a store, whether a row group's projection is fetched with its
//!   predicate columns or after the filter, from the pages it needs and the filter's pass rate.
//! * [`row_group_reader`] — one row group: predicate columns first, projected columns for
//!   survivors only (late materialization).
//! * [`decode_failure`] — why the parquet crate failed on rows: a damaged part, or more
//!   string bytes than one Arrow batch addresses, told by decoding them again in halves.
//! * [`planned_read`] — a scan's plan read: its row groups and page selections as the
//!   stream's tasks over the footers planning read.
//! * [`reader`] — opening a scan for reading: each file's layout (partition columns, a
//!   declared schema), its row filter, the stream.
//! * [`row_windows`] — the decode unit by bytes: large row groups read as windows of rows.
//! * [`scan_stream`] — the output: row groups read by a bounded pool, batches in order,
//!   memory bounded, early stop for a limit; an Arrow `RecordBatchReader`.
//! * [`string_views`] — strings as Arrow views: filtered output columns, the `string_view` option.
//! * [`string_gather`] — strings decoded as dictionaries or views, copied out once into plain strings.
//! * [`spark_output`] — batches in the Arrow types Spark accepts.
//! * [`table_reads`] — the Parquet reads table code asks for (a Delta checkpoint), made
//!   with the scan.

pub mod cached_reader;
pub mod decode_failure;
pub mod dictionary_predicate;
pub mod flat_decode;
pub mod int96_range;
pub mod map_keys;
pub mod planned_read;
pub mod reader;
pub mod repetition_levels;
pub mod round_trips;
pub mod row_filter;
pub mod row_group_reader;
pub mod row_windows;
pub mod scan_stream;
pub mod select_rows;
pub mod spark_output;
pub mod string_gather;
pub mod string_views;
pub mod table_reads;
pub mod top_rows;
pub mod topk_threshold;
