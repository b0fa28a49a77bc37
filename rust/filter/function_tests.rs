//! Tests of Spark SQL functions in filters: parsing and display, binding errors, evaluation
//! with Spark's semantics (checked against Spark 4.3 by `tests/test_functions_spark.py`),
//! and which functions pruning can see through.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, Date32Array, Decimal128Array, Float64Array, Int32Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};

use super::*;
use crate::pruning::pruning_predicate::{LeafPredicate, order_breaking_function};

fn batch() -> RecordBatch {
    let micros = |text: &str| {
        chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").unwrap().and_utc().timestamp_micros()
    };
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("s", Arc::new(StringArray::from(vec![Some("  Hello "), Some("ΣΊΣΥΦΟΣ"), None, Some("abc-123"), Some("")]))),
        ("i", Arc::new(Int32Array::from(vec![Some(7), Some(-7), None, Some(0), Some(i32::MIN)]))),
        ("d", Arc::new(Float64Array::from(vec![Some(2.675), Some(f64::NAN), None, Some(-2.5), Some(-0.0)]))),
        (
            "dec",
            Arc::new(
                Decimal128Array::from(vec![Some(12345), Some(-12355), None, Some(5), Some(0)])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
        ),
        ("day", Arc::new(Date32Array::from(vec![Some(0), Some(11016), None, Some(-1), Some(19783)]))),
        (
            "ts",
            Arc::new(
                TimestampMicrosecondArray::from(vec![
                    Some(micros("2024-11-03 06:30:00")),
                    Some(micros("2024-03-10 07:30:00")),
                    None,
                    Some(micros("2024-01-01 04:59:59")),
                    Some(micros("1969-12-31 23:59:59")),
                ])
                .with_timezone("UTC"),
            ),
        ),
        (
            "bin",
            Arc::new(BinaryArray::from(vec![
                Some(&b""[..]),
                Some(&b"\xce\xa3"[..]),
                None,
                Some(b"abc"),
                Some(b"\xff"),
            ])),
        ),
    ];
    RecordBatch::try_from_iter(columns).unwrap()
}

fn options(zone: &str) -> BindOptions {
    BindOptions { session_time_zone: zone.to_string(), case_sensitive: false }
}

/// The rows `filter` selects (NULL counts as not selected), in New York time.
fn rows(filter: &str) -> Vec<usize> {
    rows_in(filter, "America/New_York")
}

fn rows_in(filter: &str, zone: &str) -> Vec<usize> {
    let batch = batch();
    let bound = bind(&parse_filter(filter).unwrap(), &batch.schema(), &options(zone))
        .unwrap_or_else(|e| panic!("{filter}: {e}"));
    let result = evaluate(&bound, &batch).unwrap_or_else(|e| panic!("{filter}: {e}"));
    (0..result.len()).filter(|&i| result.is_valid(i) && result.value(i)).collect()
}

fn bind_error(filter: &str) -> String {
    let batch = batch();
    match bind(&parse_filter(filter).unwrap(), &batch.schema(), &options("UTC")) {
        Ok(bound) => match evaluate(&bound, &batch) {
            Ok(_) => panic!("{filter} was accepted"),
            Err(e) => e.to_string(),
        },
        Err(e) => e.to_string(),
    }
}

#[test]
fn function_calls_display_and_parse_back() {
    for text in [
        "lower(s) = 'x'",
        "LCASE(s) = 'x'",
        "substr(s, 2) = 'x'",
        "SUBSTRING(s FROM 2 FOR 3) = 'x'",
        "TRIM(s) = 'x'",
        "TRIM(LEADING 'ab' FROM s) = 'x'",
        "s ILIKE 'A%'",
        "s NOT RLIKE '^a'",
        "s REGEXP 'a'",
        "i % 3 = 1",
        "CASE i WHEN 1 THEN 'a' WHEN 2 THEN 'b' ELSE 'c' END = 'a'",
        "CASE WHEN i > 1 THEN s END IS NULL",
        "if(i > 1, 1, 2) = 1",
        "nvl(i, 0) = 0 AND nullif(i, 0) IS NULL AND nvl2(i, 1, 2) = 1",
        "date_trunc('HOUR', ts) = TIMESTAMP '2024-01-01 00:00:00'",
        "to_date(ts) = DATE '2024-01-01' AND isnull(s) AND isnotnull(i)",
        "current_date() > day AND current_date > day",
        "CEIL(d) = 1 AND FLOOR(d) = 1",
    ] {
        let parsed = parse_filter(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let shown = parsed.to_string();
        assert_eq!(parse_filter(&shown).unwrap_or_else(|e| panic!("{shown}: {e}")), parsed, "{text} -> {shown}");
    }
    assert_eq!(parse_filter("substr(s, 2, 1) = 'x'").unwrap().to_string(), "substring(`s`, 2, 1) = 'x'");
    assert_eq!(parse_filter("s ILIKE 'ÀB%'").unwrap().to_string(), "lower(`s`) LIKE 'àb%'");
    assert_eq!(parse_filter("i % 2 = 0").unwrap().to_string(), "mod(`i`, 2) = 0");
}

#[test]
fn unknown_functions_and_wrong_arities_are_named() {
    let error = parse_filter("soundex(s) = 'x'").unwrap_err().to_string();
    assert!(error.contains("unsupported function \"soundex\"") && error.contains("lower"), "{error}");
    let error = parse_filter("substring(s) = 'x'").unwrap_err().to_string();
    assert!(error.contains("substring takes 2 to 3 argument(s), got 1"), "{error}");
    assert!(parse_filter("lower(s, s) = 'x'").unwrap_err().to_string().contains("lower takes 1"));
    assert!(bind_error("year(i) = 1").contains("year needs a DATE argument, but `i` is INT"));
    assert!(bind_error("floor(s) = 1").contains("floor needs a numeric argument"));
    assert!(bind_error("date_trunc(s, ts) IS NULL").contains("date_trunc needs a constant unit"));
    assert!(bind_error("s RLIKE '(a)\\\\1'").contains("back-reference"), "{}", bind_error("s RLIKE '(a)\\\\1'"));
    assert!(bind_error("coalesce(i, day) IS NULL").contains("coalesce cannot mix `i` (INT) with `day` (DATE)"));
}

#[test]
fn string_functions_follow_spark() {
    assert_eq!(rows("lower(s) = '  hello '"), [0]);
    assert_eq!(rows("lower(s) = 'σίσυφος'"), [1]); // the final sigma
    assert_eq!(rows("upper(s) = '  HELLO '"), [0]);
    assert_eq!(rows("trim(s) = 'Hello'"), [0]);
    assert_eq!(rows("ltrim(s) = 'Hello '"), [0]);
    assert_eq!(rows("TRIM(BOTH ' Hoe' FROM s) = 'll'"), [0]);
    assert_eq!(rows("length(s) = 7"), [1, 3]);
    assert_eq!(rows("length(s) = 0"), [4]);
    // TRY_CAST: NULL where CAST raises, a string that does not parse or an overflow.
    assert_eq!(rows("try_cast(s AS INT) IS NULL"), [0, 1, 2, 3, 4]);
    assert_eq!(rows("try_cast(substring(s, 5) AS INT) = 123"), [3]);
    assert_eq!(rows("try_cast(i * 1000000000L AS INT) IS NULL AND i IS NOT NULL"), [0, 1, 4]);
    assert_eq!(rows("try_cast(dec AS DECIMAL(3, 1)) IS NULL AND dec IS NOT NULL"), [0, 1]);
    assert!(bind_error("CAST(s AS INT) = 1").contains("cannot be cast to INT"));
}

#[test]
fn timestamps_cast_to_and_from_seconds_since_the_epoch() {
    // Floored to the second, before 1970 too; exact as a DOUBLE.
    assert_eq!(rows("CAST(ts AS BIGINT) = 1730615400"), [0]);
    assert_eq!(rows("CAST(ts AS BIGINT) = -1 AND CAST(ts AS DOUBLE) < 0"), [4]);
    assert_eq!(rows("CAST(CAST(i AS TIMESTAMP) AS BIGINT) = i"), [0, 1, 3, 4]);
    assert_eq!(rows("CAST(CAST(dec AS TIMESTAMP) AS DOUBLE) = 123.45"), [0]);
    assert_eq!(rows("try_cast(d AS TIMESTAMP) IS NULL"), [1, 2]);
    assert!(bind_error("CAST(d AS TIMESTAMP) IS NULL").contains("cannot be cast to TIMESTAMP"));
    assert!(bind_error("CAST(ts AS SMALLINT) = 1").contains("CAST_OVERFLOW"));
    // A BINARY's bytes, a UTF-8 encoding or not.
    assert_eq!(rows("length(bin) = 2"), [1]);
    assert_eq!(rows("char_length(bin) = 1 OR length(bin) = 0"), [0, 4]);
    assert_eq!(rows("length(X'00FF') = 2 AND i = 7"), [0]);
    assert_eq!(rows("substring(s, -3) = '123'"), [3]);
    assert_eq!(rows("substring(s, 0, 3) = 'abc'"), [3]);
    assert_eq!(rows("concat(s, '!', i) = 'abc-123!0'"), [3]);
    assert_eq!(rows("startswith(s, 'ab') OR endswith(s, 'ΟΣ')"), [1, 3]);
    assert_eq!(rows("contains(s, '')"), [0, 1, 3, 4]);
    assert_eq!(rows("s ILIKE '%ell%'"), [0]);
    assert_eq!(rows("s RLIKE '\\\\d{3}$'"), [3]);
    assert_eq!(rows("lower(s) IN ('abc-123', 'x')"), [3]);
}

/// As Spark's optimizer has it, a case conversion directly under another is dropped:
/// `lower(upper('Straße'))` is `lower('Straße')`, not `lower('STRASSE')`.
#[test]
fn a_case_conversion_under_another_is_dropped() {
    let batch = RecordBatch::try_from_iter([(
        "s",
        Arc::new(StringArray::from(vec![Some("Straße"), Some("STRASSE"), None])) as ArrayRef,
    )])
    .unwrap();
    let selected = |filter: &str| -> Vec<usize> {
        let bound = bind(&parse_filter(filter).unwrap(), &batch.schema(), &options("UTC")).unwrap();
        let result = evaluate(&bound, &batch).unwrap();
        (0..result.len()).filter(|&i| result.is_valid(i) && result.value(i)).collect()
    };
    assert_eq!(selected("upper(s) = 'STRASSE'"), [0, 1]);
    assert_eq!(selected("lower(upper(s)) = 'straße'"), [0]);
    assert_eq!(selected("lower(upper(lower(s))) = 'straße'"), [0]);
    assert_eq!(selected("upper(lower(s)) = 'STRASSE'"), [0, 1]);
    assert_eq!(selected("lower(upper(s)) = 'strasse'"), [1]);
    assert_eq!(selected("s ILIKE 'STRAßE'"), [0]);
    assert_eq!(selected("upper(s) ILIKE 'straße'"), [0]);
}

#[test]
fn date_functions_follow_spark() {
    // 11016 is 2000-02-29; -1 is 1969-12-31; 19783 is 2024-03-01.
    assert_eq!(rows("year(day) = 2000 AND month(day) = 2 AND day(day) = 29"), [1]);
    assert_eq!(rows("quarter(day) = 4"), [3]);
    assert_eq!(rows("date_add(day, 1) = DATE '1970-01-01'"), [3]);
    assert_eq!(rows("date_sub(day, 1) = DATE '2024-02-29'"), [4]);
    assert_eq!(rows("datediff(day, DATE '1970-01-01') = 11016"), [1]);
    // In New York: 2024-11-03 01:30 EST, 2024-03-10 03:30 EDT, 2023-12-31 23:59:59.
    assert_eq!(rows("hour(ts) = 1"), [0]);
    assert_eq!(rows("hour(ts) = 3 AND minute(ts) = 30"), [1]);
    assert_eq!(rows("year(ts) = 2023"), [3]);
    assert_eq!(rows_in("year(ts) = 2024", "UTC"), [0, 1, 3]);
    assert_eq!(rows("date(ts) = DATE '2023-12-31'"), [3]);
    // The second 01:30 of the day keeps its offset: its hour starts 30 minutes before.
    assert_eq!(rows("date_trunc('HOUR', ts) = TIMESTAMP '2024-11-03 06:00:00+00:00'"), [0]);
    assert_eq!(rows("date_trunc('DAY', ts) = TIMESTAMP '2024-11-03 00:00:00'"), [0]);
    assert_eq!(rows("date_trunc('MONTH', ts) = TIMESTAMP '2023-12-01 00:00:00'"), [3]);
    assert_eq!(rows("date_trunc('WEEK', day) = DATE '2000-02-28'"), [1]);
    assert_eq!(rows("date_trunc('fortnight', ts) IS NULL"), [0, 1, 2, 3, 4]);
    assert_eq!(rows("current_date() > DATE '2026-01-01'"), [0, 1, 2, 3, 4]);
}

#[test]
fn conditional_and_math_functions_follow_spark() {
    assert_eq!(rows("coalesce(i, 99) = 99"), [2]);
    assert_eq!(rows("nullif(i, 0) IS NULL"), [2, 3]);
    assert_eq!(rows("if(i > 0, 'pos', 'other') = 'pos'"), [0]);
    assert_eq!(rows("CASE WHEN i > 0 THEN 1 WHEN i < 0 THEN -1 END = -1"), [1, 4]);
    assert_eq!(rows("CASE i WHEN 7 THEN true ELSE false END"), [0]);
    assert_eq!(rows("round(d, 2) = 2.68"), [0]);
    assert_eq!(rows("round(d) = -3"), [3]);
    assert_eq!(rows("round(dec, 1) = -123.6"), [1]);
    assert_eq!(rows("isnan(d) OR floor(d) = -3 OR ceil(d) = 3"), [0, 1, 3]);
    assert_eq!(rows("NOT isnan(d) AND floor(d) = 0"), [4]);
    // NaN has no BIGINT floor: an overflow error, as in Spark.
    assert!(bind_error("floor(d) = 0").contains("arithmetic overflow in floor(`d`)"));
    assert_eq!(rows("floor(dec) = 123 AND ceil(dec) = 124"), [0]);
    assert_eq!(rows("i % 4 = -3"), [1]);
    assert_eq!(rows("pmod(i, 4) = 1"), [1]);
    assert_eq!(rows("i % -1 = 0"), [0, 1, 3, 4]); // INT_MIN % -1 is 0
    assert_eq!(rows("isnan(d)"), [1]);
    assert_eq!(rows("NOT isnan(d)"), [0, 2, 3, 4]); // isnan(NULL) is false
}

#[test]
fn errors_count_only_where_rows_reach_them() {
    let error = bind_error("i % 0 = 1");
    assert!(error.contains("division by zero in mod(`i`, 0)"), "{error}");
    // A CASE branch, a coalesce argument and the right side of AND run only for their rows.
    assert_eq!(rows("CASE WHEN i = 0 THEN false ELSE 10 % i = 0 END"), Vec::<usize>::new());
    assert_eq!(rows("i <> 0 AND 14 % i = 0"), [0, 1]);
    assert_eq!(rows("coalesce(7, 1 % 0) = 7"), [0, 1, 2, 3, 4]);
    assert!(bind_error("coalesce(i, 1 % 0) = 7").contains("division by zero"), "row 2 is NULL: it reaches 1 % 0");
}

#[test]
fn constant_calls_are_folded() {
    let schema = batch().schema();
    let bound = bind(&parse_filter("day > date_add(DATE '2024-01-01', 3)").unwrap(), &schema, &options("UTC")).unwrap();
    let BoundExpr::Compare { right, .. } = bound else { panic!() };
    assert!(matches!(*right, BoundExpr::Literal(_)));
}

fn leaf(filter: &str, zone: &str) -> LeafPredicate {
    let schema = Schema::new(vec![
        Field::new("s", DataType::Utf8, true),
        Field::new("d", DataType::Float64, true),
        Field::new("n", DataType::Int64, true),
        Field::new("day", DataType::Date32, true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), true),
    ]);
    LeafPredicate::analyse(&bind(&parse_filter(filter).unwrap(), &schema, &options(zone)).unwrap())
}

#[test]
fn pruning_sees_through_order_preserving_functions() {
    for filter in [
        "year(day) = 2024",
        "date(ts) = DATE '2024-01-01'",
        "year(ts) >= 2024",
        "date_trunc('DAY', ts) = TIMESTAMP '2024-01-01 00:00:00'",
        "date_add(day, 3) > DATE '2024-01-01'",
        "datediff(DATE '2024-01-01', day) < 3",
        "round(d, 1) > 2.5",
        "floor(n) = 3",
        "substring(s, 1, 3) = 'abc'",
    ] {
        assert!(matches!(leaf(filter, "UTC"), LeafPredicate::Compare { .. }), "{filter}");
    }
    // Wall clocks of a daylight-saving zone are not ordered like instants, but are bounded
    // through the zone's offsets.
    let truncated = "date_trunc('DAY', ts) = TIMESTAMP '2024-01-01 00:00:00'";
    assert!(matches!(leaf(truncated, "America/New_York"), LeafPredicate::Compare { .. }));
    // `hour` keeps order within a day: containers within one use their bounds.
    assert!(matches!(leaf("hour(ts) = 3", "UTC"), LeafPredicate::Compare { .. }));
    assert!(matches!(leaf("startswith(s, 'ab%')", "UTC"), LeafPredicate::Like { ref prefix, .. } if prefix == "ab%"));
    for filter in [
        "lower(s) = 'a'",
        "length(s) = 3",
        "n % 7 = 1",
        "substring(s, 2, 3) = 'abc'",
        "floor(d) = 3",
        "CASE WHEN n > 1 THEN 1 ELSE 2 END = 1",
    ] {
        assert!(matches!(leaf(filter, "UTC"), LeafPredicate::Unknown), "{filter}");
    }
}

#[test]
fn explain_names_the_function_that_breaks_order() {
    let schema = Schema::new(vec![Field::new("n", DataType::Int64, true), Field::new("s", DataType::Utf8, true)]);
    let culprit = |filter: &str| {
        let bound = bind(&parse_filter(filter).unwrap(), &schema, &options("UTC")).unwrap();
        order_breaking_function(&bound)
    };
    assert_eq!(culprit("n % 7 = 1").as_deref(), Some("mod"));
    assert_eq!(culprit("length(trim(s)) = 1").as_deref(), Some("length"));
    assert_eq!(culprit("CASE WHEN n > 0 THEN n END = 1").as_deref(), Some("CASE"));
    assert_eq!(culprit("n > 1").as_deref(), None);
}
