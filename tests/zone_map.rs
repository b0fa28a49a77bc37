//! Zone maps on the shared corpus: the Parquet rules on exactness, NaN, null pages and
//! deprecated statistics, each on a file that exhibits it.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{Array, AsArray, Float64Array, Int32Array, RecordBatch, StringArray};
use arrow::datatypes::{Field, Float32Type, Float64Type, Int32Type, Schema};
use bytes::Bytes;
use parquet::arrow::{ArrowWriter, parquet_to_arrow_schema};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use pqsift::pruning::zone_map::ZoneMaps;

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/parquet-testing/data").join(name)
}

fn load(bytes: Bytes) -> ParquetMetaData {
    ParquetMetaDataReader::new().with_page_index_policy(PageIndexPolicy::Optional).parse_and_finish(&bytes).unwrap()
}

fn load_corpus(name: &str) -> ParquetMetaData {
    load(Bytes::from(std::fs::read(corpus(name)).unwrap()))
}

fn arrow_schema(metadata: &ParquetMetaData) -> Schema {
    let file = metadata.file_metadata();
    parquet_to_arrow_schema(file.schema_descr(), file.key_value_metadata()).unwrap()
}

/// Zone maps of the top-level primitive column `name` over the row groups.
fn row_group_zones(metadata: &ParquetMetaData, name: &str) -> ZoneMaps {
    let schema = arrow_schema(metadata);
    let leaf = (0..metadata.file_metadata().schema_descr().num_columns())
        .find(|&i| metadata.file_metadata().schema_descr().column(i).name() == name)
        .unwrap();
    let field: Field = schema.field_with_name(name).unwrap().clone();
    ZoneMaps::for_row_groups(metadata, leaf, &field).unwrap()
}

#[test]
fn nan_counts_turn_maxes_into_nan_where_nan_may_hide() {
    // Five row groups: no NaN, mixed NaN, all NaN, zero min, zero max (README of the corpus).
    let metadata = load_corpus("floating_orders_nan_count.parquet");
    let zones = row_group_zones(&metadata, "double_typedef");
    assert_eq!(zones.len(), 5);
    let maxes = zones.maxes.as_primitive::<Float64Type>();
    let raw = |rg: usize| metadata.row_group(rg).column(2).statistics().and_then(|s| s.nan_count_opt());
    for rg in 0..5 {
        let nan_count = raw(rg);
        let has_nan = nan_count.is_none_or(|n| n > 0);
        let all_null = zones.null_counts.is_valid(rg) && zones.null_counts.value(rg) == zones.row_counts.value(rg);
        if has_nan && !all_null {
            assert!(maxes.value(rg).is_nan(), "row group {rg}: nan_count {nan_count:?}, max must be NaN");
            assert_eq!(zones.max_exact.value(rg), nan_count.is_some_and(|n| n > 0));
        } else if maxes.is_valid(rg) {
            assert!(!maxes.value(rg).is_nan(), "row group {rg} has no NaN");
        }
    }
    // The first row group has no NaN and real bounds.
    assert_eq!(raw(0), Some(0));
    assert_eq!((zones.mins.as_primitive::<Float64Type>().value(0), maxes.value(0)), (-2.0, 5.0));

    // Same rules for FLOAT.
    let float_zones = row_group_zones(&metadata, "float_typedef");
    assert!(float_zones.maxes.as_primitive::<Float32Type>().value(1).is_nan());
}

#[test]
fn a_nan_bound_from_an_old_writer_is_unknown() {
    // parquet-cpp 1.3 wrote max = NaN for [1.0, NaN].
    let metadata = load_corpus("nan_in_stats.parquet");
    let zones = row_group_zones(&metadata, "x");
    assert!(zones.mins.is_null(0), "a NaN bound makes both bounds unknown");
    // ... and without a nan_count the max is NaN again: the container may hold NaN.
    assert!(zones.maxes.as_primitive::<Float64Type>().value(0).is_nan());
    assert!(!zones.max_exact.value(0));
}

#[test]
fn truncated_string_bounds_are_inexact() {
    let metadata = load_corpus("binary_truncated_min_max.parquet");
    for column in ["utf8_full_truncation", "utf8_partial_truncation", "utf8_no_truncation"] {
        let zones = row_group_zones(&metadata, column);
        let stats = metadata.row_group(0).columns().iter().find(|c| c.column_descr().name() == column).unwrap();
        let stats = stats.statistics().unwrap();
        assert_eq!(zones.min_exact.value(0), stats.min_is_exact(), "{column}");
        assert_eq!(zones.max_exact.value(0), stats.max_is_exact(), "{column}");
        assert!(zones.mins.is_valid(0) && zones.maxes.is_valid(0));
    }
    let full = row_group_zones(&metadata, "utf8_full_truncation");
    assert!(!full.max_exact.value(0), "a truncated max is only an upper bound");
    assert_eq!(full.maxes.as_string::<i32>().value(0), "Kf");
}

#[test]
fn null_pages_have_no_bounds() {
    let metadata = load_corpus("int32_with_null_pages.parquet");
    let schema = arrow_schema(&metadata);
    let zones = ZoneMaps::for_pages(&metadata, 0, 0, schema.field(0)).unwrap().expect("the file has a page index");
    let column_index = metadata.page_index().unwrap().column_index(0, 0).unwrap();
    let mut null_pages = 0;
    for page in 0..zones.len() {
        if column_index.is_null_page(page) {
            null_pages += 1;
            assert!(zones.mins.is_null(page) && zones.maxes.is_null(page), "page {page}");
            assert_eq!(zones.null_counts.value(page), zones.row_counts.value(page), "page {page}");
        } else {
            assert!(
                zones.mins.as_primitive::<Int32Type>().value(page)
                    <= zones.maxes.as_primitive::<Int32Type>().value(page)
            );
        }
    }
    assert!(null_pages > 0, "the file is made to contain a null page");
    assert_eq!(zones.row_counts.values().iter().sum::<u64>(), 1000);
}

#[test]
fn files_without_page_index_have_no_page_zones() {
    let metadata = load_corpus("alltypes_plain.parquet");
    let schema = arrow_schema(&metadata);
    assert!(ZoneMaps::for_pages(&metadata, 0, 0, schema.field(0)).unwrap().is_none());
}

#[test]
fn missing_null_counts_are_unknown_and_string_pages_inexact() {
    // Written here: chunk statistics without page statistics for `s`, page index on `x`.
    let x = Int32Array::from_iter((0..1000).map(|i| (i % 10 != 0).then_some(i)));
    let s = StringArray::from_iter_values((0..1000).map(|i| format!("value {i:04}")));
    let d = Float64Array::from_iter_values((0..1000).map(|i| i as f64));
    let batch = RecordBatch::try_from_iter([("x", Arc::new(x) as _), ("s", Arc::new(s) as _), ("d", Arc::new(d) as _)])
        .unwrap();
    let props = WriterProperties::builder()
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(100)
        .build();
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let metadata = load(Bytes::from(out));
    let schema = arrow_schema(&metadata);

    let x_pages = ZoneMaps::for_pages(&metadata, 0, 0, schema.field(0)).unwrap().unwrap();
    assert_eq!(x_pages.len(), 10);
    assert_eq!(x_pages.null_counts.value(3), 10);
    assert_eq!(x_pages.mins.as_primitive::<Int32Type>().value(3), 301);
    assert!(x_pages.min_exact.value(3) && x_pages.max_exact.value(3), "fixed-width page bounds are held values");

    let s_pages = ZoneMaps::for_pages(&metadata, 0, 1, schema.field(1)).unwrap().unwrap();
    assert!(!s_pages.min_exact.value(0) && !s_pages.max_exact.value(0), "page index strings may be truncated");

    // parquet-rs writes no nan_count: every float page may hold NaN.
    let d_pages = ZoneMaps::for_pages(&metadata, 0, 2, schema.field(2)).unwrap().unwrap();
    if metadata.page_index().unwrap().column_index(0, 2).is_some() {
        let maxes = d_pages.maxes.as_primitive::<Float64Type>();
        let nan_counts_written = metadata.row_group(0).column(2).statistics().and_then(|s| s.nan_count_opt()).is_some();
        assert_eq!(maxes.value(0).is_nan(), !nan_counts_written);
    }
}
