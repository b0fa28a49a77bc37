//! Soundness of the three-valued zone-map evaluation against the filter evaluator itself:
//! for random data split into containers and random predicates, a container where some
//! row evaluates to true must be "can be true", and one where some row is false must be
//! "can be false".

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, UInt64Array};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use pqsift::filter::{BindOptions, BoundColumn, bind, evaluate, parse_filter};
use pqsift::pruning::pruning_predicate::evaluate_on_zone_maps;
use pqsift::pruning::zone_map::ZoneMaps;
use proptest::prelude::*;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("x", DataType::Int64, true),
        Field::new("f", DataType::Float64, true),
        Field::new("t", DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())), true),
    ]))
}

/// `t`: nanoseconds 1,500 × x after the epoch, so that Spark's microseconds truncate.
fn nanos_of(x: &ArrayRef) -> ArrayRef {
    let scaled = arrow::compute::kernels::numeric::mul(x, &Int64Array::new_scalar(1_500)).unwrap();
    cast(&scaled, &DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))).unwrap()
}

/// Zone maps of `t` from those of `x` (1,500 × x is increasing).
fn nanos_zones(zones_x: &ZoneMaps) -> ZoneMaps {
    ZoneMaps { mins: nanos_of(&zones_x.mins), maxes: nanos_of(&zones_x.maxes), ..zones_x.clone() }
}

/// Zone maps as a writer would record them, with pqsift's NaN rule (NaN max when present).
fn zones_of(column: &ArrayRef, sizes: &[usize]) -> ZoneMaps {
    let mut start = 0;
    let (mut mins, mut maxes): (Vec<Option<f64>>, Vec<Option<f64>>) = Default::default();
    let (mut nulls, mut rows): (Vec<u64>, Vec<u64>) = Default::default();
    let values: Vec<Option<f64>> = match column.data_type() {
        DataType::Int64 => {
            column.as_any().downcast_ref::<Int64Array>().unwrap().iter().map(|v| v.map(|v| v as f64)).collect()
        }
        _ => column.as_any().downcast_ref::<Float64Array>().unwrap().iter().collect(),
    };
    for &size in sizes {
        let slice = &values[start..start + size];
        let present: Vec<f64> = slice.iter().flatten().copied().collect();
        let numbers: Vec<f64> = present.iter().copied().filter(|v| !v.is_nan()).collect();
        let has_nan = present.iter().any(|v| v.is_nan());
        mins.push(numbers.iter().copied().reduce(f64::min));
        maxes.push(if has_nan { Some(f64::NAN) } else { numbers.iter().copied().reduce(f64::max) });
        nulls.push((size - present.len()) as u64);
        rows.push(size as u64);
        start += size;
    }
    let (mins, maxes): (ArrayRef, ArrayRef) = match column.data_type() {
        DataType::Int64 => (
            Arc::new(mins.iter().map(|v| v.map(|v| v as i64)).collect::<Int64Array>()),
            Arc::new(maxes.iter().map(|v| v.map(|v| v as i64)).collect::<Int64Array>()),
        ),
        _ => (Arc::new(Float64Array::from(mins)), Arc::new(Float64Array::from(maxes))),
    };
    let exact = BooleanArray::from(vec![false; sizes.len()]);
    ZoneMaps {
        mins,
        maxes,
        min_exact: exact.clone(),
        max_exact: exact,
        null_counts: UInt64Array::from(nulls),
        row_counts: UInt64Array::from(rows),
    }
}

fn leaf() -> impl Strategy<Value = String> {
    let int_term = prop::sample::select(vec![
        "x",
        "x + 1",
        "-x",
        "x * 2",
        "x * -3",
        "x / 2",
        "CAST(x AS DOUBLE)",
        "x - 5",
        "10 - x",
        "x * x",
        "abs(x)",
    ]);
    let float_term = prop::sample::select(vec!["f", "-f", "f * 2", "f + 1", "f * -1", "f / -2"]);
    // Microseconds -18..18 after the epoch, against nanoseconds 1,500 × x.
    let timestamp_literal = (-18i64..18).prop_map(|micros| {
        let instant = chrono::DateTime::from_timestamp_micros(micros).unwrap();
        format!("TIMESTAMP '{}Z'", instant.format("%Y-%m-%d %H:%M:%S%.6f"))
    });
    let op = prop::sample::select(vec!["=", "!=", "<", "<=", ">", ">=", "<=>"]);
    let float_literal = prop::sample::select(vec![
        "0.0",
        "-1.5",
        "2.5",
        "CAST('NaN' AS DOUBLE)",
        "CAST('-0.0' AS DOUBLE)",
        "CAST('Infinity' AS DOUBLE)",
        "NULL",
    ]);
    prop_oneof![
        (int_term.clone(), op.clone(), -12i64..12).prop_map(|(t, o, v)| format!("{t} {o} {v}")),
        (float_term.clone(), op.clone(), float_literal.clone()).prop_map(|(t, o, v)| format!("{t} {o} {v}")),
        (
            int_term.clone(),
            // Past 8 values a list is pruned through a sorted set.
            prop::collection::vec(-12i64..12, 1..20),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(t, items, neg, null)| {
                let mut items: Vec<String> = items.iter().map(ToString::to_string).collect();
                if null {
                    items.push("NULL".into());
                }
                format!("{t} {}IN ({})", if neg { "NOT " } else { "" }, items.join(", "))
            }),
        (float_term, prop::collection::vec(float_literal, 1..14), any::<bool>()).prop_map(|(t, items, neg)| format!(
            "{t} {}IN ({})",
            if neg { "NOT " } else { "" },
            items.join(", ")
        )),
        (prop::sample::select(vec!["t", "CAST(t AS DATE)"]), op.clone(), timestamp_literal.clone())
            .prop_map(|(t, o, v)| format!("{t} {o} {v}")),
        (int_term.clone(), any::<bool>()).prop_map(|(t, neg)| format!("{t} IS {}NULL", if neg { "NOT " } else { "" })),
        (int_term, -12i64..12, -12i64..12).prop_map(|(t, a, b)| format!("{t} BETWEEN {a} AND {b}")),
        Just("TRUE".to_string()),
        Just("NULL".to_string()),
    ]
}

fn predicate() -> impl Strategy<Value = String> {
    leaf().prop_recursive(3, 16, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) AND ({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) OR ({b})")),
            inner.prop_map(|a| format!("NOT ({a})")),
        ]
    })
}

fn data() -> impl Strategy<Value = (Vec<Option<i64>>, Vec<Option<f64>>, Vec<usize>)> {
    (1usize..60).prop_flat_map(|n| {
        let x = prop::collection::vec(prop::option::weighted(0.85, -15i64..15), n);
        let f = prop::collection::vec(
            prop::option::weighted(
                0.85,
                prop_oneof![
                    Just(f64::NAN),
                    Just(-0.0),
                    Just(0.0),
                    Just(f64::INFINITY),
                    Just(f64::NEG_INFINITY),
                    -5.0f64..5.0
                ],
            ),
            n,
        );
        let sizes = prop::collection::vec(1usize..12, 1..20).prop_map(move |sizes| covering(sizes, n));
        (x, f, sizes)
    })
}

/// Container sizes that cover exactly `n` rows: the drawn ones while they fit, the last cut
/// short, and one more for the rows left.
fn covering(sizes: Vec<usize>, n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut left = n;
    for size in sizes {
        if left == 0 {
            break;
        }
        let take = size.min(left);
        out.push(take);
        left -= take;
    }
    if left > 0 {
        out.push(left);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn zone_map_evaluation_is_sound((x, f, sizes) in data(), text in predicate()) {
        let schema = schema();
        let x: ArrayRef = Arc::new(Int64Array::from(x));
        let f: ArrayRef = Arc::new(Float64Array::from(f));
        let t = nanos_of(&x);
        let batch = RecordBatch::try_new(schema.clone(), vec![x.clone(), f.clone(), t]).unwrap();
        let Ok(filter) = bind(&parse_filter(&text).unwrap(), &schema, &BindOptions::default()) else { return Ok(()) };
        // Rows whose evaluation raises (overflow) are not in scope: evaluate per container.
        let zones_x = zones_of(&x, &sizes);
        let zones_f = zones_of(&f, &sizes);
        let zones_t = nanos_zones(&zones_x);
        let source = |column: &BoundColumn| -> pqsift::Result<Option<ZoneMaps>> {
            Ok(Some(match column.path.parts()[0].as_str() {
                "x" => zones_x.clone(),
                "t" => zones_t.clone(),
                _ => zones_f.clone(),
            }))
        };
        let possible = evaluate_on_zone_maps(&filter, sizes.len(), &source).unwrap();
        let mut start = 0;
        for (i, &size) in sizes.iter().enumerate() {
            let slice = batch.slice(start, size);
            if let Ok(result) = evaluate(&filter, &slice) {
                if result.iter().any(|v| v == Some(true)) {
                    prop_assert!(possible.can_true[i], "{text}: container {i} ({:?}) has a true row", slice);
                }
                if result.iter().any(|v| v == Some(false)) {
                    prop_assert!(possible.can_false[i], "{text}: container {i} ({:?}) has a false row", slice);
                }
            }
            start += size;
        }
    }
}

#[test]
fn nan_rows_survive_greater_than() {
    let schema = schema();
    let f: ArrayRef = Arc::new(Float64Array::from(vec![Some(1.0), Some(f64::NAN), Some(2.0), Some(3.0)]));
    let zones = zones_of(&f, &[2, 2]);
    let filter = bind(&parse_filter("f > 100").unwrap(), &schema, &BindOptions::default()).unwrap();
    let source = |_: &BoundColumn| -> pqsift::Result<Option<ZoneMaps>> { Ok(Some(zones.clone())) };
    let possible = evaluate_on_zone_maps(&filter, 2, &source).unwrap();
    assert_eq!(possible.can_true, [true, false]);
    // A decreasing function of a column that may hold NaN decides nothing there.
    let filter = bind(&parse_filter("-f < -100").unwrap(), &schema, &BindOptions::default()).unwrap();
    assert_eq!(evaluate_on_zone_maps(&filter, 2, &source).unwrap().can_true, [true, false]);
    let _ = f.len();
}

#[test]
fn generated_texts_bind() {
    let schema = schema();
    for text in [
        "x * -3 = 5",
        "f IN (0.0, NULL)",
        "f <=> NULL",
        "(x + 1 = 5) OR (NOT (f / -2 > CAST('NaN' AS DOUBLE)))",
        "10 - x BETWEEN -3 AND 4",
        "x NOT IN (1, 2, NULL)",
        "NULL",
        "TRUE",
        "f * -1 <= CAST('-0.0' AS DOUBLE)",
        "t >= TIMESTAMP '1970-01-01 00:00:00.000003Z'",
        "CAST(t AS DATE) < TIMESTAMP '1969-12-31 23:59:59.999982Z'",
    ] {
        bind(&parse_filter(text).unwrap(), &schema, &BindOptions::default()).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

/// Instants a few days either side of a change of offset: spring and autumn in New York,
/// Sao Paulo's changes at midnight (2018 forward, 2019 back across midnight), Lord Howe's
/// half hour, Apia's skipped day (2011) and London's autumn.
const CHANGES: [(&str, &str); 7] = [
    ("America/New_York", "2024-03-10T07:00:00Z"),
    ("America/New_York", "2024-11-03T06:00:00Z"),
    ("America/Sao_Paulo", "2018-11-04T03:00:00Z"),
    ("America/Sao_Paulo", "2019-02-17T02:00:00Z"),
    ("Australia/Lord_Howe", "2024-04-06T15:00:00Z"),
    ("Pacific/Apia", "2011-12-30T10:00:00Z"),
    ("Europe/London", "2024-10-27T01:00:00Z"),
];

fn wall_clock_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("t", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), true),
        Field::new("n", DataType::Timestamp(TimeUnit::Microsecond, None), true),
    ]))
}

/// Zone maps of timestamps: the least and greatest value of each container.
fn timestamp_zones(values: &[Option<i64>], sizes: &[usize], data_type: &DataType) -> ZoneMaps {
    let zones = zones_of(&(Arc::new(Int64Array::from(values.to_vec())) as ArrayRef), sizes);
    ZoneMaps { mins: cast(&zones.mins, data_type).unwrap(), maxes: cast(&zones.maxes, data_type).unwrap(), ..zones }
}

fn wall_clock_leaf(anchor: i64) -> impl Strategy<Value = String> {
    let term = prop::sample::select(vec![
        "CAST(t AS DATE)",
        "to_date(t)",
        "year(t)",
        "date_add(CAST(t AS DATE), 2)",
        "datediff(DATE '2020-01-01', CAST(t AS DATE))",
        "CAST(t AS TIMESTAMP_NTZ)",
        "date_trunc('MINUTE', t)",
        "date_trunc('HOUR', t)",
        "date_trunc('DAY', t)",
        "date_trunc('MONTH', t)",
        "CAST(n AS TIMESTAMP)",
        "CAST(CAST(n AS TIMESTAMP) AS DATE)",
        "date_trunc('HOUR', CAST(n AS TIMESTAMP))",
    ]);
    let op = prop::sample::select(vec!["=", "!=", "<", "<=", ">", ">=", "<=>"]);
    // Ordered only within a day, an hour, a minute.
    let clock_part = prop::sample::select(vec![
        "hour(t)",
        "hour(n)",
        "minute(t)",
        "minute(n)",
        "second(t)",
        "second(n)",
        "-hour(t)",
        "hour(t) + 1",
    ]);
    // Constants within three days of the change, on the quarter hour.
    let instant = (-288i64..288).prop_map(move |quarter| {
        let at = chrono::DateTime::from_timestamp(anchor + quarter * 900, 0).unwrap();
        at.format("%Y-%m-%d %H:%M:%S").to_string()
    });
    prop_oneof![
        (clock_part, op.clone(), -1i64..61).prop_map(|(t, o, v)| format!("{t} {o} {v}")),
        (term.clone(), op.clone(), instant.clone()).prop_map(|(t, o, v)| match t {
            "year(t)" => format!("{t} {o} {}", &v[..4]),
            "datediff(DATE '2020-01-01', CAST(t AS DATE))" => format!("{t} {o} {}", v.len() % 7),
            _ if t.contains("DATE") || t.starts_with("to_date") => format!("{t} {o} DATE '{}'", &v[..10]),
            _ if t.contains("NTZ") => format!("{t} {o} TIMESTAMP_NTZ '{v}'"),
            _ => format!("{t} {o} TIMESTAMP '{v}'"),
        }),
        (
            prop::sample::select(vec!["CAST(t AS DATE)", "date_trunc('DAY', t)", "CAST(n AS TIMESTAMP)"]),
            prop::collection::vec(instant, 1..12)
        )
            .prop_map(|(t, items)| {
                let items: Vec<String> = items.iter().map(|v| format!("DATE '{}'", &v[..10])).collect();
                format!("CAST({t} AS DATE) IN ({})", items.join(", "))
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// Dates, wall clocks and truncations of instants (and instants of wall clocks) in zones
    /// whose offset changes: pruned through the zone's range of offsets, never past a row
    /// that the evaluator finds true (or false).
    #[test]
    fn wall_clocks_in_changing_zones_are_pruned_soundly(
        (zone, text, values, sizes) in (0..CHANGES.len()).prop_flat_map(|i| {
            let (zone, at) = CHANGES[i];
            let anchor = chrono::DateTime::parse_from_rfc3339(at).unwrap().timestamp();
            let n = 1usize..50;
            (Just(zone), wall_clock_leaf(anchor), n.prop_flat_map(move |n| {
                // Over six days, four hours or four minutes.
                let spread = prop::sample::select(vec![3 * 86_400_000_000i64, 7_200_000_000, 120_000_000]);
                let micros = spread.prop_flat_map(move |spread| {
                    prop::collection::vec(prop::option::weighted(0.9, -spread..spread), n)
                });
                (micros, any::<bool>(), prop::collection::vec(1usize..9, 1..12)).prop_map(move |(mut micros, sorted, sizes)| {
                    // Sorted, as a time column usually is, or not.
                    if sorted {
                        micros.sort();
                    }
                    let values: Vec<Option<i64>> = micros.iter().map(|m| m.map(|m| anchor * 1_000_000 + m)).collect();
                    (values, covering(sizes, n))
                })
            }))
        }).prop_map(|(zone, text, (values, sizes))| (zone, text, values, sizes)),
    ) {
        let schema = wall_clock_schema();
        let t: ArrayRef = Arc::new(arrow::array::TimestampMicrosecondArray::from(values.clone()).with_timezone("UTC"));
        let n: ArrayRef = Arc::new(arrow::array::TimestampMicrosecondArray::from(values.clone()));
        let batch = RecordBatch::try_new(schema.clone(), vec![t, n]).unwrap();
        let options = BindOptions { session_time_zone: zone.to_string(), ..BindOptions::default() };
        let filter = bind(&parse_filter(&text).unwrap(), &schema, &options).unwrap_or_else(|e| panic!("{text}: {e}"));
        let zones_t = timestamp_zones(&values, &sizes, schema.field(0).data_type());
        let zones_n = timestamp_zones(&values, &sizes, schema.field(1).data_type());
        let source = |column: &BoundColumn| -> pqsift::Result<Option<ZoneMaps>> {
            Ok(Some(if column.path.parts()[0] == "t" { zones_t.clone() } else { zones_n.clone() }))
        };
        let possible = evaluate_on_zone_maps(&filter, sizes.len(), &source).unwrap();
        let mut start = 0;
        for (i, &size) in sizes.iter().enumerate() {
            let slice = batch.slice(start, size);
            let result = evaluate(&filter, &slice).unwrap();
            if result.iter().any(|v| v == Some(true)) {
                prop_assert!(possible.can_true[i], "{text} in {zone}: container {i} ({:?}) has a true row", slice);
            }
            if result.iter().any(|v| v == Some(false)) {
                prop_assert!(possible.can_false[i], "{text} in {zone}: container {i} ({:?}) has a false row", slice);
            }
            start += size;
        }
    }
}
