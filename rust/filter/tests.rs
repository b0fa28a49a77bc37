//! Tests of the filter layer: parsing, display round trips, binding and evaluation.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, AsArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int8Array, Int32Array,
    Int64Array, StringArray, StringViewArray, StructArray, TimestampMillisecondArray, TimestampNanosecondArray,
    UInt8Array,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use arrow::record_batch::RecordBatch;

use super::*;

fn parse(sql: &str) -> Expr {
    parse_filter(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn parse_err(sql: &str) -> String {
    match parse_filter(sql) {
        Ok(expr) => panic!("{sql} parsed as {expr:?}"),
        Err(e) => e.to_string(),
    }
}

fn lit(expr: &str) -> Literal {
    match parse(expr) {
        Expr::Literal(literal) => literal,
        other => panic!("{expr} is not a literal: {other:?}"),
    }
}

// ---------------------------------------------------------------- parsing

#[test]
fn parses_columns_and_paths() {
    assert_eq!(parse("a"), Expr::column(["a"]));
    assert_eq!(parse("a.b.c"), Expr::column(["a", "b", "c"]));
    assert_eq!(parse("`a.b`"), Expr::column(["a.b"]));
    assert_eq!(parse("`a.b`.c"), Expr::column(["a.b", "c"]));
    assert_eq!(parse("`we``ird`"), Expr::column(["we`ird"]));
    assert_eq!(parse("`select`"), Expr::column(["select"]));
}

#[test]
fn types_numeric_literals_like_spark() {
    assert_eq!(lit("1"), Literal::Int(1));
    assert_eq!(lit("-2147483648"), Literal::Int(i32::MIN));
    assert_eq!(lit("2147483648"), Literal::Long(2_147_483_648));
    assert_eq!(lit("1L"), Literal::Long(1));
    assert_eq!(lit("1l"), Literal::Long(1));
    assert_eq!(lit("-128Y"), Literal::Byte(-128));
    assert_eq!(lit("7S"), Literal::Short(7));
    assert_eq!(lit("-9223372036854775808L"), Literal::Long(i64::MIN));
    assert_eq!(lit("99999999999999999999"), Literal::Decimal { unscaled: 99_999_999_999_999_999_999, scale: 0 });
    assert_eq!(lit("1.50"), Literal::Decimal { unscaled: 150, scale: 2 });
    assert_eq!(lit("1.5BD"), Literal::Decimal { unscaled: 15, scale: 1 });
    assert_eq!(lit("1E3BD"), Literal::Decimal { unscaled: 1000, scale: 0 });
    assert_eq!(lit(".5"), Literal::Decimal { unscaled: 5, scale: 1 });
    assert_eq!(lit("1.5D"), Literal::Double(1.5));
    assert_eq!(lit("1e3"), Literal::Double(1000.0));
    assert_eq!(lit("1.5E-2"), Literal::Double(0.015));
    assert_eq!(lit("2.5F"), Literal::Float(2.5));
    assert_eq!(lit("-0.0D"), Literal::Double(-0.0));
    assert_eq!(lit("CAST('NaN' AS DOUBLE)"), Literal::Double(f64::NAN));
    assert_eq!(lit("CAST('-Infinity' AS FLOAT)"), Literal::Float(f32::NEG_INFINITY));
}

#[test]
fn rejects_out_of_range_numeric_literals() {
    assert!(parse_err("128Y").contains("out of range for TINYINT"));
    assert!(parse_err("9223372036854775808L").contains("out of range for BIGINT"));
    assert!(parse_err("1.5L").contains("invalid numeric literal"));
    assert!(parse_err("1e400").contains("out of range for DOUBLE"));
    assert!(parse_err("123456789012345678901234567890123456789").contains("38 digits"));
}

#[test]
fn parses_other_literals() {
    assert_eq!(lit("'it\\'s'"), Literal::String("it's".into()));
    assert_eq!(lit("'back\\\\slash'"), Literal::String("back\\slash".into()));
    assert_eq!(lit("\"double\""), Literal::String("double".into()));
    assert_eq!(lit("X'0aFF'"), Literal::Binary(vec![0x0a, 0xff]));
    assert_eq!(lit("TRUE"), Literal::Boolean(true));
    assert_eq!(lit("null"), Literal::Null);
    assert_eq!(lit("DATE '1970-01-02'"), Literal::Date(1));
    let Literal::Timestamp(ts) = lit("TIMESTAMP '2024-01-31 12:00:00.25'") else { panic!() };
    assert_eq!(ts.to_string(), "2024-01-31 12:00:00.25");
    assert!(parse_err("DATE '2024-02-30'").contains("invalid DATE literal '2024-02-30'"));
    assert!(parse_err("X'ABC'").contains("X'ABC'"));
}

#[test]
fn parses_operators() {
    let a = || Box::new(Expr::column(["a"]));
    let one = || Box::new(Expr::Literal(Literal::Int(1)));
    for (text, op) in [
        ("a = 1", CompareOp::Eq),
        ("a == 1", CompareOp::Eq),
        ("a != 1", CompareOp::NotEq),
        ("a <> 1", CompareOp::NotEq),
        ("a < 1", CompareOp::Lt),
        ("a <= 1", CompareOp::LtEq),
        ("a > 1", CompareOp::Gt),
        ("a >= 1", CompareOp::GtEq),
        ("a <=> 1", CompareOp::NullSafeEq),
    ] {
        assert_eq!(parse(text), Expr::Compare { op, left: a(), right: one() }, "{text}");
    }
    assert_eq!(parse("a IS NOT NULL"), Expr::IsNull { expr: a(), negated: true });
    assert_eq!(parse("a NOT IN (1)"), Expr::InList { expr: a(), list: vec![*one()].into(), negated: true });
    assert_eq!(parse("a NOT BETWEEN 1 AND 1"), Expr::Between { expr: a(), low: one(), high: one(), negated: true });
    assert_eq!(
        parse("a NOT LIKE 'x!%' ESCAPE '!'"),
        Expr::Like { expr: a(), pattern: "x!%".into(), escape: Some('!'), negated: true }
    );
    assert_eq!(parse("NOT a"), Expr::Not(a()));
    assert_eq!(parse("!a"), Expr::Not(a()));
    assert_eq!(parse("-a"), Expr::Negate(a()));
    assert_eq!(parse("ABS(a)"), Expr::Abs(a()));
    assert_eq!(parse("CAST(a AS BIGINT)"), Expr::Cast { expr: a(), to: SqlType::Long });
    assert_eq!(parse("TRY_CAST(a AS INT)"), Expr::TryCast { expr: a(), to: SqlType::Int });
    assert_eq!(parse("try_cast(a AS INT)").to_string(), "TRY_CAST(`a` AS INT)");
    assert_eq!(parse("a::decimal(5, 2)"), Expr::Cast { expr: a(), to: SqlType::Decimal { precision: 5, scale: 2 } });
    assert_eq!(
        parse("a IS DISTINCT FROM 1"),
        Expr::Not(Box::new(Expr::Compare { op: CompareOp::NullSafeEq, left: a(), right: one() }))
    );
    assert_eq!(
        parse("a + 1 * a"),
        Expr::Arithmetic {
            op: ArithmeticOp::Add,
            left: a(),
            right: Box::new(Expr::Arithmetic { op: ArithmeticOp::Multiply, left: one(), right: a() }),
        }
    );
}

#[test]
fn parses_cast_type_names() {
    for (name, expected) in [
        ("TINYINT", SqlType::Byte),
        ("BYTE", SqlType::Byte),
        ("SHORT", SqlType::Short),
        ("INTEGER", SqlType::Int),
        ("LONG", SqlType::Long),
        ("REAL", SqlType::Float),
        ("DOUBLE", SqlType::Double),
        ("DECIMAL", SqlType::Decimal { precision: 10, scale: 0 }),
        ("STRING", SqlType::String),
        ("BINARY", SqlType::Binary),
        ("DATE", SqlType::Date),
        ("TIMESTAMP", SqlType::Timestamp),
        ("TIMESTAMP_NTZ", SqlType::TimestampNtz),
        ("BOOLEAN", SqlType::Boolean),
    ] {
        assert_eq!(
            parse(&format!("CAST(a AS {name})")),
            Expr::Cast { expr: Box::new(Expr::column(["a"])), to: expected },
            "{name}"
        );
    }
    assert!(parse_err("CAST(a AS DECIMAL(40, 2))").contains("DECIMAL(40,2)"));
    assert!(parse_err("CAST(a AS ARRAY<INT>)").contains("unsupported type"));
}

#[test]
fn parse_errors_name_the_token() {
    assert!(parse_err("foo(a) > 1").contains("unsupported function \"foo\""));
    assert!(parse_err("a & 2 = 0").contains("unsupported operator \"&\""));
    assert!(parse_err("a LIKE ANY ('x')").contains("LIKE ANY"));
    assert!(parse_err("a > 1 b").contains("unexpected \"b\""));
    assert!(parse_err("a > 1)").contains("unexpected \")\""));
    assert!(parse_err("a >").contains("cannot parse filter"));
    assert!(parse_err("a LIKE b").contains("LIKE pattern must be a string literal"));
    assert!(parse_err("abs(a, b)").contains("abs takes 1 argument(s), got 2"));
    assert!(parse_err("a IN (SELECT 1)").contains("unsupported"));
    assert!(parse_err("CASE WHEN a THEN (SELECT 1) END").contains("unsupported"));
    assert!(parse_err("SAFE_CAST(a AS INT)").contains("unsupported"));
    assert!(parse_err("").contains("cannot parse filter"));
    let deep = format!("{}a{}", "(".repeat(500), ")".repeat(500));
    assert!(parse_err(&deep).contains("nested too deeply"));
}

#[test]
fn helpers_split_and_collect_columns() {
    let expr = parse("a = 1 AND (b = 2 AND NOT c) AND (d OR e)");
    let parts: Vec<String> = split_conjunction(&expr).iter().map(|e| e.to_string()).collect();
    assert_eq!(parts, ["`a` = 1", "`b` = 2", "NOT `c`", "`d` OR `e`"]);
    assert_eq!(split_conjunction(&parse("a OR b")).len(), 1);
    let expr = parse("x.y + abs(z) BETWEEN z AND CAST(w AS INT) OR w LIKE 'a'");
    assert_eq!(columns(&expr), [ColumnPath::new(["x", "y"]), ColumnPath::new(["z"]), ColumnPath::new(["w"])]);
}

/// A walk of the tree passes an IN list's literal items by (a long list holds thousands),
/// yet counts them in the depth and finds the columns of the items that are expressions.
#[test]
fn walks_count_literal_items_without_visiting_them() {
    let long = (0..100).map(|v| v.to_string()).collect::<Vec<_>>().join(", ");
    for (text, deepest, found) in [
        ("x IN (1, 2)".to_string(), 2, vec!["x"]),
        (format!("x IN ({long})"), 2, vec!["x"]),
        (format!("x IN ({long}, y + 1)"), 3, vec!["x", "y"]),
        (format!("x IN (y, {long}) AND z IN ({long})"), 3, vec!["x", "y", "z"]),
        ("x IN (abs(y - 1))".to_string(), 4, vec!["x", "y"]),
    ] {
        let expr = parse(&text);
        assert_eq!(depth(&expr), deepest, "{text}");
        assert_eq!(columns(&expr), found.iter().map(|c| ColumnPath::new([*c])).collect::<Vec<_>>(), "{text}");
    }
}

// ---------------------------------------------------------------- display

#[test]
fn display_renders_spark_sql() {
    for (input, rendered) in [
        ("a=1 and b<2 or c", "`a` = 1 AND `b` < 2 OR `c`"),
        ("a = 1 AND (b OR c)", "`a` = 1 AND (`b` OR `c`)"),
        ("(a AND b) AND c", "`a` AND `b` AND `c`"),
        ("a AND (b AND c)", "`a` AND (`b` AND `c`)"),
        ("NOT (a AND b)", "NOT (`a` AND `b`)"),
        ("NOT a = 1", "NOT `a` = 1"),
        ("(a = 1) = true", "(`a` = 1) = true"),
        ("a - (b - c)", "`a` - (`b` - `c`)"),
        ("(a + b) * c", "(`a` + `b`) * `c`"),
        ("a - -1", "`a` - -1"),
        ("-(a)", "-(`a`)"),
        ("a IN (1, 2L, 'x')", "`a` IN (1, 2L, 'x')"),
        ("a BETWEEN 1 AND 2 AND b", "`a` BETWEEN 1 AND 2 AND `b`"),
        ("a LIKE 'it''s\\\\%'", "`a` LIKE 'it\\'s\\\\%'"),
        ("a = 1.5D", "`a` = 1.5D"),
        ("a = 1e-45F", "`a` = 1e-45F"),
        ("a = CAST('NaN' AS DOUBLE)", "`a` = CAST('NaN' AS DOUBLE)"),
        ("a = 10BD", "`a` = 10BD"),
        ("a = -0.05", "`a` = -0.05"),
        ("a = X'00ff'", "`a` = X'00FF'"),
        ("a = TIMESTAMP '2024-01-01T00:00:00Z'", "`a` = TIMESTAMP '2024-01-01 00:00:00+00:00'"),
        ("cast(a as decimal(5,2)) is null", "CAST(`a` AS DECIMAL(5,2)) IS NULL"),
    ] {
        assert_eq!(parse(input).to_string(), rendered, "{input}");
        assert_eq!(parse(rendered), parse(input), "{rendered} re-parses");
    }
}

// ---------------------------------------------------------------- binding

fn test_schema() -> SchemaRef {
    let point = Fields::from(vec![Field::new("x", DataType::Int32, true), Field::new("Label", DataType::Utf8, true)]);
    Arc::new(Schema::new(vec![
        Field::new("tiny", DataType::Int8, true),
        Field::new("i", DataType::Int32, true),
        Field::new("big", DataType::Int64, true),
        Field::new("f", DataType::Float64, true),
        Field::new("f32", DataType::Float32, true),
        Field::new("dec", DataType::Decimal128(5, 2), true),
        Field::new("s", DataType::Utf8, true),
        Field::new("sv", DataType::Utf8View, true),
        Field::new("d", DataType::Date32, true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Nanosecond, Some("+00:00".into())), true),
        Field::new("ts_ms", DataType::Timestamp(TimeUnit::Millisecond, None), true),
        Field::new("flag", DataType::Boolean, true),
        Field::new("u8", DataType::UInt8, true),
        Field::new("point", DataType::Struct(point), true),
        Field::new("a.b", DataType::Int32, true),
        Field::new("Dup", DataType::Int32, true),
        Field::new("dup", DataType::Int32, true),
    ]))
}

fn bind_with(sql: &str, options: &BindOptions) -> Result<BoundExpr, crate::PqsiftError> {
    bind(&parse(sql), &test_schema(), options)
}

fn bind_ok(sql: &str) -> BoundExpr {
    bind_with(sql, &BindOptions::default()).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn bind_err(sql: &str) -> String {
    match bind_with(sql, &BindOptions::default()) {
        Ok(bound) => panic!("{sql} bound as {bound:?}"),
        Err(e) => e.to_string(),
    }
}

/// The two operands of a bound comparison.
fn operands(bound: BoundExpr) -> (BoundExpr, BoundExpr) {
    match bound {
        BoundExpr::Compare { left, right, .. } => (*left, *right),
        other => panic!("not a comparison: {other:?}"),
    }
}

#[test]
fn resolves_columns_case_insensitively() {
    let bound = bind_ok("POINT.label IS NULL");
    let BoundExpr::IsNull { expr, .. } = bound else { panic!() };
    let BoundExpr::Column(column) = *expr else { panic!() };
    assert_eq!(column.path, ColumnPath::new(["point", "Label"]));
    assert_eq!(column.indices, [13, 1]);
    assert!(bind_ok("`a.b` = 1").data_type() == DataType::Boolean);
    let options = BindOptions { case_sensitive: true, ..BindOptions::default() };
    assert!(bind_with("Dup = 1", &options).is_ok());
    assert!(bind_with("TINY = 1", &options).unwrap_err().to_string().contains("unknown column `TINY`"));
}

#[test]
fn column_errors_name_the_column() {
    let error = bind_err("tinny > 1");
    assert!(error.contains("unknown column `tinny`") && error.contains("did you mean `tiny`"), "{error}");
    let error = bind_err("a.b = 1");
    assert!(error.contains("unknown column `a`.`b`") && error.contains("back-quotes"), "{error}");
    let error = bind_err("point.z = 1");
    assert!(error.contains("no field `z` in struct `point`"), "{error}");
    let error = bind_err("i.x = 1");
    assert!(error.contains("not a struct"), "{error}");
    let error = bind_err("dup = 1");
    assert!(error.contains("ambiguous") && error.contains("`Dup`, `dup`"), "{error}");
}

#[test]
fn type_errors_name_the_operands() {
    assert!(bind_err("d > 5").contains("cannot compare `d` (DATE) with 5 (INT)"));
    assert!(bind_err("flag = 1").contains("cannot compare `flag` (BOOLEAN) with 1 (INT)"));
    assert!(bind_err("point = 1").contains("`point` has type Struct"));
    assert!(bind_err("i = 'abc'").contains("'abc'"));
    assert!(bind_err("i = '1.5'").contains("CAST_INVALID_INPUT"));
    assert!(bind_err("i").contains("must be a BOOLEAN expression, but `i` is INT"));
    assert!(bind_err("i AND flag").contains("AND needs BOOLEAN operands, but `i` is INT"));
    assert!(bind_err("i LIKE 'a%'").contains("LIKE needs a STRING operand"));
    assert!(bind_err("d + 1 > d").contains("cannot apply + to `d` (DATE)"));
    assert!(bind_err("s + s > 0").contains("cannot apply + to `s` (STRING)"));
    assert!(bind_err("s + NULL > 0").contains("cannot apply + to `s` (STRING)"));
    assert!(bind_err("-d = 1").contains("needs a numeric operand"));
    assert!(bind_err("CAST(d AS INT) = 1").contains("cannot cast `d` (DATE) to INT"));
    assert!(bind_err("s LIKE 'a\\\\b'").contains("invalid LIKE pattern"));
    let options = BindOptions { session_time_zone: "Mars/Base".into(), ..BindOptions::default() };
    assert!(bind_with("flag", &options).unwrap_err().to_string().contains("Mars/Base"));
}

#[test]
fn literals_convert_to_the_column_type_when_exact() {
    let (left, right) = operands(bind_ok("tiny = 5"));
    assert!(matches!(left, BoundExpr::Column(_)));
    assert_eq!(right.data_type(), DataType::Int8);
    // Does not fit TINYINT: the column widens instead.
    let (left, right) = operands(bind_ok("tiny > 1000"));
    assert!(matches!(left, BoundExpr::Cast { to: DataType::Int32, .. }));
    assert_eq!(right.data_type(), DataType::Int32);
    let (_, right) = operands(bind_ok("dec = 1.5"));
    assert_eq!(right.data_type(), DataType::Decimal128(5, 2));
    let (left, _) = operands(bind_ok("dec = 1.505"));
    assert!(matches!(left, BoundExpr::Cast { to: DataType::Decimal128(6, 3), .. }));
    let (_, right) = operands(bind_ok("big = '42'"));
    assert_eq!(right.data_type(), DataType::Int64);
    let (_, right) = operands(bind_ok("sv = 'x'"));
    assert_eq!(right.data_type(), DataType::Utf8View);
    let (_, right) = operands(bind_ok("u8 = 200"));
    assert_eq!(right.data_type(), DataType::UInt8);
    let (_, right) = operands(bind_ok("f32 = 0.5D"));
    assert_eq!(right.data_type(), DataType::Float32);
    let (left, _) = operands(bind_ok("f32 = 0.1D"));
    assert!(matches!(left, BoundExpr::Cast { to: DataType::Float64, .. }));
    let (_, right) = operands(bind_ok("d >= '2024-01-31'"));
    assert_eq!(right.data_type(), DataType::Date32);
    // Nanosecond columns compare in nanoseconds, against the first nanosecond of the
    // literal's microsecond (`>`: of the next one), as Spark floors them to microseconds.
    let (left, right) = operands(bind_ok("ts > TIMESTAMP '2024-01-31 00:00:00'"));
    assert!(matches!(left, BoundExpr::Column(_)));
    assert_eq!(right.data_type(), DataType::Timestamp(TimeUnit::Nanosecond, Some("+00:00".into())));
    let BoundExpr::Literal(bound) = right else { panic!() };
    assert_eq!(bound.as_primitive::<arrow::datatypes::TimestampNanosecondType>().value(0), 1_706_659_200_000_001_000);
    assert!(matches!(bind_ok("ts = TIMESTAMP '2024-01-31 00:00:00'"), BoundExpr::And(..)));
    let (_, right) = operands(bind_ok("ts_ms > TIMESTAMP '2024-01-31 00:00:00'"));
    assert_eq!(right.data_type(), DataType::Timestamp(TimeUnit::Millisecond, None));
    let BoundExpr::InList { expr, list, .. } = bind_ok("tiny IN (1, 2, 3)") else { panic!() };
    assert!(matches!(*expr, BoundExpr::Column(_)));
    assert!(list.iter().all(|item| item.data_type() == DataType::Int8));
}

/// A long list of integer literals (of any integer kind) that fit the column's own type
/// is bound as a set of that type at once; one that does not fit is widened as before.
/// Either way the rows found are the literal values'.
#[test]
fn long_integer_lists_bind_as_sets_of_the_columns_type() {
    let listed = "1Y, 2S, 3, 4L, -5, 100, 3, 7, 8L, 9, 10, 11, 12";
    for (column, own) in [("tiny", DataType::Int8), ("i", DataType::Int32), ("big", DataType::Int64)] {
        let BoundExpr::InSet { expr, set, negated: false } = bind_ok(&format!("{column} IN ({listed})")) else {
            panic!("{column}")
        };
        assert!(matches!(*expr, BoundExpr::Column(_)));
        assert_eq!((set.values().data_type(), set.len(), set.has_null()), (&own, 12, false), "{column}");
    }
    // 300 is no TINYINT: the column is compared in the list's common type (BIGINT: 4L).
    let BoundExpr::InSet { expr, set, .. } = bind_ok(&format!("tiny IN ({listed}, 300)")) else { panic!() };
    assert!(matches!(*expr, BoundExpr::Cast { .. }));
    assert_eq!(set.values().data_type(), &DataType::Int64);
    let values = [Some(3), None, Some(-5), Some(6), Some(100), Some(i64::from(i32::MAX) + 1)];
    let rows = batch(vec![
        ("tiny", Arc::new(Int8Array::from(values.map(|v| v.and_then(|v| i8::try_from(v).ok())).to_vec())) as ArrayRef),
        ("i", Arc::new(Int32Array::from(values.map(|v| v.and_then(|v| i32::try_from(v).ok())).to_vec()))),
        ("big", Arc::new(Int64Array::from(values.to_vec()))),
    ]);
    let big = i64::from(i32::MAX) + 1;
    assert_eq!(eval(&rows, &format!("tiny IN ({listed})")), [T, N, T, F, T, N]);
    assert_eq!(eval(&rows, &format!("tiny NOT IN ({listed}, 300)")), [F, N, F, T, F, N]);
    assert_eq!(eval(&rows, &format!("i IN ({listed})")), [T, N, T, F, T, N]);
    assert_eq!(eval(&rows, &format!("big IN ({listed}, {big})")), [T, N, T, F, T, T]);
}

/// Equal bindings: the same tree, and sets of the same values.
fn assert_same_binding(left: &BoundExpr, right: &BoundExpr, context: &str) {
    match (left, right) {
        (BoundExpr::InSet { expr: a, set: x, negated: m }, BoundExpr::InSet { expr: b, set: y, negated: n }) => {
            assert_eq!((format!("{a:?}"), m), (format!("{b:?}"), n), "{context}");
            assert!(**x == **y, "{context}: sets of other values");
        }
        _ => assert_eq!(format!("{left:?}"), format!("{right:?}"), "{context}"),
    }
}

/// A long list of strings tested on a STRING column is bound as a set at once, the set
/// the item-by-item path makes (a `CAST` item sends the list there); elsewhere (a
/// `Utf8View` column) the general path binds it.
#[test]
fn long_string_lists_bind_as_the_item_by_item_path_does() {
    let listed = (0..20).map(|i| format!("'v{}'", i % 15)).collect::<Vec<_>>().join(", ");
    for column in ["s", "sv"] {
        let (at_once, by_item) = (
            bind_ok(&format!("{column} IN ({listed}, '7', '-8', 'ü')")),
            bind_ok(&format!("{column} IN ({listed}, CAST('7' AS STRING), '-8', 'ü')")),
        );
        assert_same_binding(&at_once, &by_item, column);
    }
    let BoundExpr::InSet { expr, set, .. } = bind_ok(&format!("s IN ({listed})")) else { panic!() };
    assert!(matches!(*expr, BoundExpr::Column(_)));
    assert_eq!((set.values().data_type(), set.len()), (&DataType::Utf8, 15));
    let integers = (0..20).map(|i| (i * 7 - 50).to_string()).collect::<Vec<_>>().join(", ");
    for column in ["i", "big", "tiny", "f", "dec"] {
        let (at_once, by_item) = (
            bind_ok(&format!("{column} IN ({integers})")),
            bind_ok(&format!("{column} IN ({integers}, CAST(-50 AS INT))")),
        );
        assert_same_binding(&at_once, &by_item, column);
    }
    let rows = batch(vec![
        ("s", Arc::new(StringArray::from(vec![Some("v3"), None, Some("v15"), Some("ü")])) as ArrayRef),
        ("sv", Arc::new(arrow::array::StringViewArray::from(vec![Some("v3"), None, Some("v15"), Some("ü")]))),
    ]);
    assert_eq!(eval(&rows, &format!("s IN ({listed}, 'ü')")), [T, N, F, T]);
    assert_eq!(eval(&rows, &format!("sv IN ({listed}, 'ü')")), [T, N, F, T]);
    assert_eq!(eval(&rows, &format!("s NOT IN ({listed}, 'ü')")), [F, N, T, F]);
}

// ---------------------------------------------------------------- evaluation

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns).unwrap()
}

fn run_on(batch: &RecordBatch, sql: &str) -> Result<Vec<Option<bool>>, String> {
    run_on_with(batch, sql, &BindOptions::default())
}

fn run_on_with(batch: &RecordBatch, sql: &str, options: &BindOptions) -> Result<Vec<Option<bool>>, String> {
    let bound = bind(&parse(sql), &batch.schema(), options).map_err(|e| e.to_string())?;
    let result = evaluate(&bound, batch).map_err(|e| e.to_string())?;
    assert_eq!(result.len(), batch.num_rows());
    Ok(result.iter().collect())
}

fn eval(batch: &RecordBatch, sql: &str) -> Vec<Option<bool>> {
    run_on(batch, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// As Spark 4.3 has it: a string beside an integral operand is read as a BIGINT, beside a
/// fractional one as a DOUBLE, and a string that does not cast raises.
#[test]
fn arithmetic_reads_a_string_operand_as_a_number() {
    let rows = batch(vec![
        ("s", Arc::new(StringArray::from(vec![Some(" 12 "), Some("1.5"), None])) as ArrayRef),
        ("i", Arc::new(Int32Array::from(vec![Some(1), Some(1), Some(1)])) as ArrayRef),
        (
            "dec",
            Arc::new(Decimal128Array::from(vec![Some(150), Some(150), None]).with_precision_and_scale(5, 2).unwrap()),
        ),
    ]);
    let first = batch(vec![("s", Arc::new(StringArray::from(vec![Some(" 12 "), Some("12"), None])) as ArrayRef)]);
    assert_eq!(eval(&first, "s + 1 = 13"), [T, T, N]);
    assert_eq!(eval(&first, "s * 2 = 24 AND s / 8 = 1.5"), [T, T, N]);
    assert_eq!(eval(&rows, "s * 2.0 = 3"), [F, T, N]);
    assert!(run_on(&rows, "s + i = 13").unwrap_err().contains("'1.5'"));
    assert_eq!(eval(&rows, "s - dec > 0"), [T, F, N]);
    assert_eq!(eval(&rows, "-s = -1.5 OR abs(s) = 12"), [T, T, N]);
}

const T: Option<bool> = Some(true);
const F: Option<bool> = Some(false);
const N: Option<bool> = None;

fn floats() -> RecordBatch {
    let x = Float64Array::from(vec![
        Some(f64::NAN),
        Some(-f64::NAN),
        Some(-0.0),
        Some(0.0),
        Some(f64::INFINITY),
        Some(1.0),
        None,
    ]);
    let y = Float32Array::from(vec![
        Some(f32::NAN),
        Some(1.0),
        Some(-0.0),
        Some(0.0),
        Some(f32::NEG_INFINITY),
        Some(1.0),
        Some(2.0),
    ]);
    batch(vec![("x", Arc::new(x) as ArrayRef), ("y", Arc::new(y) as ArrayRef)])
}

#[test]
fn nan_is_largest_and_equal_to_itself() {
    let b = floats();
    assert_eq!(eval(&b, "x > 100"), [T, T, F, F, T, F, N]);
    assert_eq!(eval(&b, "x > CAST('Infinity' AS DOUBLE)"), [T, T, F, F, F, F, N]);
    assert_eq!(eval(&b, "x = CAST('NaN' AS DOUBLE)"), [T, T, F, F, F, F, N]);
    assert_eq!(eval(&b, "x = 'NaN'"), [T, T, F, F, F, F, N]);
    assert_eq!(eval(&b, "x = 'nan'"), [T, T, F, F, F, F, N]);
    assert_eq!(eval(&b, "x != x"), [F, F, F, F, F, F, N]);
    assert_eq!(eval(&b, "x < y"), [F, F, F, F, F, F, N]);
    assert_eq!(eval(&b, "x IN (CAST('NaN' AS DOUBLE), 1.0)"), [T, T, F, F, F, T, N]);
    assert_eq!(eval(&b, "y = x"), [T, F, T, T, F, T, N]);
}

#[test]
fn negative_zero_equals_zero() {
    let b = floats();
    assert_eq!(eval(&b, "x = 0.0"), [F, F, T, T, F, F, N]);
    assert_eq!(eval(&b, "x = -0.0D"), [F, F, T, T, F, F, N]);
    assert_eq!(eval(&b, "x < 0"), [F, F, F, F, F, F, N]);
    assert_eq!(eval(&b, "x <=> 0"), [F, F, T, T, F, F, F]);
    assert_eq!(eval(&b, "-0.0D = 0.0D"), [T; 7]);
    assert_eq!(eval(&b, "y = 0"), [F, F, T, T, F, F, F]);
}

fn ints() -> RecordBatch {
    let a = Int32Array::from(vec![Some(1), Some(2), None, Some(i32::MAX), Some(0)]);
    let t = Int8Array::from(vec![Some(1), Some(-128), Some(127), None, Some(0)]);
    let s = StringArray::from(vec![Some("abc"), Some("a%c"), None, Some("ABC"), Some("é")]);
    batch(vec![("a", Arc::new(a) as ArrayRef), ("t", Arc::new(t) as ArrayRef), ("s", Arc::new(s) as ArrayRef)])
}

#[test]
fn null_semantics() {
    let b = ints();
    assert_eq!(eval(&b, "a = 2"), [F, T, N, F, F]);
    assert_eq!(eval(&b, "a = NULL"), [N; 5]);
    assert_eq!(eval(&b, "a <=> NULL"), [F, F, T, F, F]);
    assert_eq!(eval(&b, "a <=> 2"), [F, T, F, F, F]);
    assert_eq!(eval(&b, "a IS NULL"), [F, F, T, F, F]);
    assert_eq!(eval(&b, "NOT a IS NOT NULL"), [F, F, T, F, F]);
    assert_eq!(eval(&b, "a IN (1, NULL)"), [T, N, N, N, N]);
    assert_eq!(eval(&b, "a NOT IN (1, NULL)"), [F, N, N, N, N]);
    assert_eq!(eval(&b, "a NOT IN (1, 2)"), [F, F, N, T, T]);
    // Longer than a set's threshold, and only NULLs (found by the reference property test).
    let nulls = ["NULL"; 9].join(", ");
    assert_eq!(eval(&b, &format!("a IN ({nulls})")), [N; 5]);
    assert_eq!(eval(&b, &format!("a NOT IN ({nulls})")), [N; 5]);
    assert_eq!(eval(&b, "NULL"), [N; 5]);
    assert_eq!(eval(&b, "NULL IS NULL"), [T; 5]);
}

#[test]
fn kleene_logic() {
    let b = ints();
    // a = 1: T F N F F ; t = 127: F F T N F
    assert_eq!(eval(&b, "a = 1 AND t = 127"), [F, F, N, F, F]);
    assert_eq!(eval(&b, "a = 1 OR t = 127"), [T, F, T, N, F]);
    assert_eq!(eval(&b, "NOT (a = 1 OR t = 127)"), [F, T, F, N, T]);
    assert_eq!(eval(&b, "a IS NULL OR a > 1"), [F, T, T, T, F]);
    assert_eq!(eval(&b, "a > 0 AND NULL"), [N, N, N, N, F]);
    assert_eq!(eval(&b, "a > 0 OR NULL"), [T, T, N, T, N]);
}

#[test]
fn integer_literal_wider_than_column_type() {
    let b = ints();
    assert_eq!(eval(&b, "t > 1000"), [F, F, F, N, F]);
    assert_eq!(eval(&b, "t < 1000"), [T, T, T, N, T]);
    assert_eq!(eval(&b, "t = -129"), [F, F, F, N, F]);
    assert_eq!(eval(&b, "t IN (127, 1000)"), [F, F, T, N, F]);
    assert_eq!(eval(&b, "t >= -128Y"), [T, T, T, N, T]);
    assert_eq!(eval(&b, "a > 2147483647"), [F, F, N, F, F]);
    assert_eq!(eval(&b, "a >= 2147483647L"), [F, F, N, T, F]);
    assert_eq!(eval(&b, "a > 1.5"), [F, T, N, T, F]);
    assert_eq!(eval(&b, "t BETWEEN -1000 AND 1"), [T, T, F, N, T]);
    assert_eq!(eval(&b, "t NOT BETWEEN 0 AND 1"), [F, T, T, N, F]);
}

#[test]
fn strings_compare_as_utf8_bytes() {
    let b = ints();
    assert_eq!(eval(&b, "s > 'abc'"), [F, F, N, F, T]);
    assert_eq!(eval(&b, "s < 'a'"), [F, F, N, T, F]);
    assert_eq!(eval(&b, "s = 'ABC'"), [F, F, N, T, F]);
    assert_eq!(eval(&b, "s >= 'z'"), [F, F, N, F, T]);
}

#[test]
fn like_follows_spark_escapes() {
    let b = ints();
    assert_eq!(eval(&b, "s LIKE 'a%'"), [T, T, N, F, F]);
    assert_eq!(eval(&b, "s LIKE 'a\\\\%c'"), [F, T, N, F, F]);
    assert_eq!(eval(&b, "s LIKE 'a!%c' ESCAPE '!'"), [F, T, N, F, F]);
    assert_eq!(eval(&b, "s LIKE '_'"), [F, F, N, F, T]);
    assert_eq!(eval(&b, "s NOT LIKE '%c'"), [F, F, N, T, T]);
    assert_eq!(eval(&b, "s LIKE '%'"), [T, T, N, T, T]);
    assert_eq!(eval(&b, "s LIKE 'a.c'"), [F, F, N, F, F]);
}

#[test]
fn string_numeric_comparisons_follow_ansi_promotion() {
    let b = ints();
    // STRING vs INT compares as BIGINT; a string column is cast row by row.
    assert_eq!(eval(&b, "a = '2'"), [F, T, N, F, F]);
    assert_eq!(eval(&b, "a = ' 2 '"), [F, T, N, F, F]);
    let numbers = batch(vec![("s", Arc::new(StringArray::from(vec![Some("1"), Some(" 2"), None])) as ArrayRef)]);
    assert_eq!(eval(&numbers, "s = 2"), [F, T, N]);
    assert_eq!(eval(&numbers, "s > 1.5D"), [F, T, N]);
    // ANSI: an unreadable string is an error, not NULL.
    let error = run_on(&b, "s = 1").unwrap_err();
    assert!(error.contains("'abc'") && error.contains("CAST_INVALID_INPUT"), "{error}");
    let dates = batch(vec![("s", Arc::new(StringArray::from(vec!["2024-01-31", "2024-02-01 10:00"])) as ArrayRef)]);
    assert_eq!(eval(&dates, "s = DATE '2024-02-01'"), [F, T]);
}

#[test]
fn arithmetic_follows_ansi_mode() {
    let b = ints();
    // Row 3 holds INT's maximum: `a + 1` overflows there unless a guard excludes it.
    let error = run_on(&b, "a + 1 = 3").unwrap_err();
    assert!(error.contains("arithmetic overflow in `a` + 1") && error.contains("INT"), "{error}");
    let small = batch(vec![
        ("a", Arc::new(Int32Array::from(vec![Some(1), Some(2), None, Some(-7), Some(0)])) as ArrayRef),
        ("t", b.column(1).clone()),
    ]);
    let b = small;
    assert_eq!(eval(&b, "a + 1 = 3"), [F, T, N, F, F]);
    assert_eq!(eval(&b, "a / 2 = 0.5"), [T, F, N, F, F]);
    assert_eq!(eval(&b, "a / 2 = -3.5"), [F, F, N, T, F]);
    assert_eq!(eval(&b, "-a = -2"), [F, T, N, F, F]);
    assert_eq!(eval(&b, "abs(a) = 7"), [F, F, N, T, F]);
    // abs(-128Y) does not fit TINYINT.
    assert!(run_on(&b, "abs(t) > 0").unwrap_err().contains("ARITHMETIC_OVERFLOW"));
    assert_eq!(eval(&b, "abs(CAST(t AS INT)) = 128"), [F, T, F, N, F]);
    assert_eq!(eval(&b, "a * 2 - 1 = 3"), [F, T, N, F, F]);
    assert_eq!(eval(&b, "a + 0.5 = 1.5"), [T, F, N, F, F]);
    let error = run_on(&b, "t + 1Y > 0").unwrap_err();
    assert!(error.contains("TINYINT"), "{error}");
    let error = run_on(&b, "-t > 0").unwrap_err();
    assert!(error.contains("ARITHMETIC_OVERFLOW"), "{error}");
    let error = run_on(&b, "10 / a > 1").unwrap_err();
    assert!(error.contains("DIVIDE_BY_ZERO"), "{error}");
    let error = run_on(&b, "a / 0.0 > 1").unwrap_err();
    assert!(error.contains("DIVIDE_BY_ZERO"), "{error}");
    assert!(run_on(&b, "a / -0.0 > 1").unwrap_err().contains("DIVIDE_BY_ZERO"));
    assert!(run_on(&b, "a / a > 0").unwrap_err().contains("DIVIDE_BY_ZERO"), "a row of a is 0");
    // A zero divisor reached only by NULL dividends: no error.
    assert_eq!(eval(&b, "a IS NULL AND a / 0.0 > 1"), [F, F, N, F, F]);
    assert_eq!(eval(&b, "CAST(NULL AS INT) / a IS NULL"), [T; 5]);
    // Rows a guard excludes never reach the division or the addition.
    assert_eq!(eval(&b, "a != 0 AND 10 / a > 1"), [T, T, N, F, F]);
    assert_eq!(eval(&b, "a = 0 OR 10 / a > 1"), [T, T, N, F, T]);
    assert_eq!(eval(&b, "a = 0 OR 10 / a < -1"), [F, F, N, T, T]);
    assert_eq!(eval(&b, "a * 2147483647L < 0"), [F, F, N, T, F]);
    assert!(run_on(&b, "a * 2147483647 < 0").unwrap_err().contains("ARITHMETIC_OVERFLOW"));
    let overflowing = batch(vec![("a", Arc::new(Int32Array::from(vec![Some(1), Some(i32::MAX), None])) as ArrayRef)]);
    assert_eq!(eval(&overflowing, "a < 100 AND a + 1 > 1"), [T, F, N]);
    assert_eq!(eval(&overflowing, "a >= 100 OR a + 1 > 1"), [T, T, N]);
    assert_eq!(eval(&b, "NULL / 0 IS NULL"), [T; 5]);
}

#[test]
fn decimal_columns_and_literals() {
    let dec =
        Decimal128Array::from(vec![Some(150), Some(-5), None, Some(99_999)]).with_precision_and_scale(5, 2).unwrap();
    let b = batch(vec![("p", Arc::new(dec) as ArrayRef)]);
    assert_eq!(eval(&b, "p = 1.5"), [T, F, N, F]);
    assert_eq!(eval(&b, "p = 1.50000"), [T, F, N, F]);
    assert_eq!(eval(&b, "p > 1.495"), [T, F, N, T]);
    assert_eq!(eval(&b, "p < 0"), [F, T, N, F]);
    assert_eq!(eval(&b, "p = 1.5D"), [T, F, N, F]);
    assert_eq!(eval(&b, "p * 2 = 3"), [T, F, N, F]);
    assert_eq!(eval(&b, "p / 3 > 0.4999"), [T, F, N, T]);
    assert_eq!(eval(&b, "p + 1000 > 1000"), [T, F, N, T]);
    assert_eq!(eval(&b, "abs(p) = 0.05"), [F, T, N, F]);
    assert_eq!(eval(&b, "CAST(p AS INT) = 1"), [T, F, N, F]);
    assert_eq!(eval(&b, "p = '1.5'"), [T, F, N, F]);
    let error = run_on(&b, "p / 0 > 1").unwrap_err();
    assert!(error.contains("DIVIDE_BY_ZERO"), "{error}");
}

#[test]
fn dates_and_timestamps() {
    let days = Date32Array::from(vec![Some(19_753), Some(0), None]); // 2024-01-31, 1970-01-01
    let ns = TimestampNanosecondArray::from(vec![Some(1_706_659_200_000_000_000), Some(1_500), None])
        .with_timezone("+00:00");
    let ms = TimestampMillisecondArray::from(vec![Some(1_706_659_200_001), Some(0), None]);
    let b = batch(vec![
        ("d", Arc::new(days) as ArrayRef),
        ("ts", Arc::new(ns) as ArrayRef),
        ("ntz", Arc::new(ms) as ArrayRef),
    ]);
    assert_eq!(eval(&b, "d = DATE '2024-01-31'"), [T, F, N]);
    assert_eq!(eval(&b, "d > '2000-01-01'"), [T, F, N]);
    assert_eq!(eval(&b, "d BETWEEN '1969-12-31' AND '1970-01-01'"), [F, T, N]);
    assert_eq!(eval(&b, "ts = TIMESTAMP '2024-01-31 00:00:00'"), [T, F, N]);
    assert_eq!(eval(&b, "ts = TIMESTAMP '2024-01-31 01:00:00+01:00'"), [T, F, N]);
    assert_eq!(eval(&b, "ts = TIMESTAMP '1970-01-01 00:00:00.000001'"), [F, T, N]);
    assert_eq!(eval(&b, "ts >= d"), [T, T, N]);
    assert_eq!(eval(&b, "ts = '2024-01-31'"), [T, F, N]);
    assert_eq!(eval(&b, "ntz > TIMESTAMP '2024-01-31 00:00:00'"), [T, F, N]);
    assert_eq!(eval(&b, "ntz > TIMESTAMP '2024-01-31 00:00:00.0005'"), [T, F, N]);
    assert_eq!(eval(&b, "ntz > TIMESTAMP '2024-01-31 00:00:00.001'"), [F, F, N]);
    assert_eq!(eval(&b, "CAST(ntz AS DATE) = d"), [T, T, N]);
    // The session time zone reads zone-less literals and converts dates.
    let paris = BindOptions { session_time_zone: "Europe/Paris".into(), ..BindOptions::default() };
    assert_eq!(run_on_with(&b, "ts = TIMESTAMP '2024-01-31 01:00:00'", &paris).unwrap(), [T, F, N]);
    assert_eq!(run_on_with(&b, "ts = TIMESTAMP '2024-01-31 00:00:00'", &paris).unwrap(), [F, F, N]);
    assert_eq!(run_on_with(&b, "CAST(ts AS DATE) = DATE '2024-01-31'", &paris).unwrap(), [T, F, N]);
    // An NTZ wall clock compares with a TIMESTAMP literal as the same wall clock.
    assert_eq!(run_on_with(&b, "ntz > TIMESTAMP '2024-01-31 00:00:00'", &paris).unwrap(), [T, F, N]);
    // Text read as an NTZ keeps its date-time and drops its zone, as Spark's cast does
    // (checked in Spark 4: '2024-03-10T03:00:00Z' is 03:00 in Lord Howe too).
    for text in ["2024-01-31T00:00:00Z", "2024-01-31 00:00:00+05:00", "2024-01-31 00:00:00 America/New_York"] {
        assert_eq!(run_on_with(&b, &format!("ntz > '{text}'"), &paris).unwrap(), [T, F, N], "{text}");
        let cast = format!("ntz < CAST('{text}' AS TIMESTAMP_NTZ)");
        assert_eq!(run_on_with(&b, &cast, &paris).unwrap(), [F, T, N], "{text}");
    }
}

proptest::proptest! {
    /// A nanosecond column against a microsecond literal, every operator, both timestamp
    /// kinds, either side: Spark's answer, the value floored to its microsecond (before
    /// 1970 too) and compared.
    #[test]
    fn nanoseconds_compare_as_their_floored_microsecond(
        base in -9_000_000_000_000_000_000i64..9_000_000_000_000_000_000,
        offsets in proptest::collection::vec(proptest::option::weighted(0.9, -3_000i64..3_000), 1..40),
        literal_offset in -4i64..4,
        op in proptest::sample::select(vec!["=", "!=", "<", "<=", ">", ">=", "<=>"]),
        instant in proptest::bool::ANY,
        swapped in proptest::bool::ANY,
    ) {
        let values: Vec<Option<i64>> = offsets.iter().map(|o| o.map(|o| base + o)).collect();
        let zone = instant.then(|| Arc::from("UTC"));
        let column = TimestampNanosecondArray::from(values.clone()).with_timezone_opt(zone);
        let b = batch(vec![("ts", Arc::new(column) as ArrayRef)]);
        let literal = base.div_euclid(1_000) + literal_offset;
        let text = chrono::DateTime::from_timestamp_micros(literal).unwrap().format("%Y-%m-%d %H:%M:%S%.6f");
        let kind = if instant { "TIMESTAMP" } else { "TIMESTAMP_NTZ" };
        let sql = match swapped {
            false => format!("ts {op} {kind} '{text}'"),
            true => format!("{kind} '{text}' {op} ts"),
        };
        let expected: Vec<Option<bool>> = values
            .iter()
            .map(|v| {
                let Some(v) = v else { return if op == "<=>" { F } else { N } };
                let (a, b) = match swapped {
                    false => (v.div_euclid(1_000), literal),
                    true => (literal, v.div_euclid(1_000)),
                };
                Some(match op {
                    "=" | "<=>" => a == b,
                    "!=" => a != b,
                    "<" => a < b,
                    "<=" => a <= b,
                    ">" => a > b,
                    _ => a >= b,
                })
            })
            .collect();
        proptest::prop_assert_eq!(eval(&b, &sql), expected, "{}", sql);
    }
}

#[test]
fn nested_struct_fields_are_null_where_the_struct_is() {
    let x = Int32Array::from(vec![Some(1), Some(2), None]);
    let fields = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
    let point =
        StructArray::new(fields, vec![Arc::new(x) as ArrayRef], Some(NullBuffer::from(vec![true, false, true])));
    let b = batch(vec![("point", Arc::new(point) as ArrayRef)]);
    assert_eq!(eval(&b, "point.x > 0"), [T, N, N]);
    assert_eq!(eval(&b, "point.X IS NULL"), [F, T, T]);
    assert_eq!(eval(&b, "point IS NULL"), [F, T, F]);
}

#[test]
fn other_encodings_compare_by_value() {
    let sv = StringViewArray::from(vec![Some("x"), Some("a long string that is not inlined"), None]);
    let u8s = UInt8Array::from(vec![Some(200), Some(1), None]);
    let flags = BooleanArray::from(vec![Some(true), Some(false), None]);
    let big = Int64Array::from(vec![Some(1), Some(2), None]);
    let b = batch(vec![
        ("sv", Arc::new(sv) as ArrayRef),
        ("u8", Arc::new(u8s) as ArrayRef),
        ("flag", Arc::new(flags) as ArrayRef),
        ("big", Arc::new(big) as ArrayRef),
    ]);
    assert_eq!(eval(&b, "sv = 'x'"), [T, F, N]);
    assert_eq!(eval(&b, "sv LIKE 'a long%'"), [F, T, N]);
    assert_eq!(eval(&b, "u8 > 100"), [T, F, N]);
    assert_eq!(eval(&b, "u8 + 100Y > 250"), [T, F, N]);
    assert_eq!(eval(&b, "flag"), [T, F, N]);
    assert_eq!(eval(&b, "flag = 'yes'"), [T, F, N]);
    assert_eq!(eval(&b, "NOT flag"), [F, T, N]);
    assert_eq!(eval(&b, "big IN (2, '1')"), [T, T, N]);
    assert_eq!(eval(&b, "CAST(big AS STRING) = '2'"), [F, T, N]);
}

#[test]
fn evaluation_checks_the_batch_schema() {
    let bound = bind(&parse("a = 1"), &ints().schema(), &BindOptions::default()).unwrap();
    let other = batch(vec![("a", Arc::new(Int64Array::from(vec![1])) as ArrayRef)]);
    let error = evaluate(&bound, &other).unwrap_err().to_string();
    assert!(error.contains("does not match") && error.contains("`a`"), "{error}");
}

/// Texts the Python builder (`python/pqsift/expr.py`) renders: they must parse, mean what
/// the builder meant, and render back to themselves where the builder's spelling is canonical.
#[test]
fn python_builder_texts_parse() {
    let texts = [
        r"`price` * 2 >= 10 AND `name` LIKE 'a\\_b\\%c\\\\%' AND NOT `deleted`",
        r"`a.b`.`c` IN (1, 1099511627776L, 9223372036854775808BD, NULL, 'x', 1.5D, CAST('NaN' AS DOUBLE), CAST('-Infinity' AS DOUBLE), -0.05, 1000BD)",
        r"`d` BETWEEN DATE '2024-01-01' AND TIMESTAMP '2024-01-31 01:02:03.4-05:30'",
        r"`s` = 'it\'s \\ é' OR `b` = X'00FF' OR `x` IS NULL",
        r"-(-(`a`)) - -1 > abs(`a` / 3)",
        r"`a` <=> NULL AND NOT `f` = false",
        r"CAST(`a` AS DECIMAL(10, 2)) > -0.0D",
        r"`t` > TIMESTAMP '2024-01-31 12:00:00'",
        r"5e-324D < 1e+300D",
    ];
    for text in texts {
        let expr = parse(text);
        assert_eq!(parse(&expr.to_string()), expr, "{text}");
    }
    for text in &texts[..6] {
        assert_eq!(parse(text).to_string(), *text);
    }
    let Expr::And(first, _) = parse(texts[0]) else { panic!() };
    let Expr::And(_, like) = *first else { panic!() };
    assert!(matches!(*like, Expr::Like { ref pattern, .. } if pattern == r"a\_b\%c\\%"));
    let b = batch(vec![("name", Arc::new(StringArray::from(vec![r"a_b%c\x", "a_b%cx", "aXb%c\\"])) as ArrayRef)]);
    assert_eq!(eval(&b, r"`name` LIKE 'a\\_b\\%c\\\\%'"), [T, F, F]);
    let Expr::Or(left, _) = parse(texts[3]) else { panic!() };
    let Expr::Or(string_compare, _) = *left else { panic!() };
    let Expr::Compare { right, .. } = *string_compare else { panic!() };
    assert_eq!(*right, Expr::Literal(Literal::String(r"it's \ é".into())));
}

#[test]
fn size_limits_are_errors_not_stack_overflows() {
    // In a thread of Rust's default stack (2 MiB), in any build: the recursive steps
    // move to a fresh stack segment when this one runs low.
    let thread = std::thread::Builder::new().stack_size(2 << 20);
    thread.spawn(filters_at_the_operator_limit).unwrap().join().unwrap();
}

/// Filters of exactly the most operators the parser takes, each a chain nesting one level per
/// operator: parsed, printed, bound and evaluated; one operator more is refused.
fn filters_at_the_operator_limit() {
    let b = ints();
    let chain = |term: &dyn Fn(usize) -> String, operator: &str| (0..500).map(term).collect::<Vec<_>>().join(operator);
    let ors = chain(&|v| format!("a = {v}"), " OR "); // 500 `=`, 499 `OR`
    let ands = chain(&|v| format!("a <> {v}"), " AND ");
    let cases = [
        (format!("NOT ({ors})"), [F, F, N, T, F]),
        (format!("NOT ({ands})"), [T, T, N, F, T]),
        (format!("t{} = 3", " + 1".repeat(999)), [F, F, F, N, F]), // 999 `+`
    ];
    for (text, expected) in cases {
        let expr = parse(&text);
        // Compared as text: the derived `==` recurses without growing the stack.
        assert_eq!(parse(&expr.to_string()).to_string(), expr.to_string());
        let bound = bind(&expr, &b.schema(), &BindOptions::default()).unwrap();
        assert_eq!(eval_bound(&bound, &b), expected, "{}", &text[..40]);
        let error = parse_err(&format!("a > 0 AND ({text})"));
        assert!(error.contains("too many operators") && error.contains("IN ("), "{error}");
    }
    // Long IN lists are flat, not deep.
    let list = (0..20_000).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    let bound = bind(&parse(&format!("a IN ({list})")), &b.schema(), &BindOptions::default()).unwrap();
    assert_eq!(eval_bound(&bound, &b), [T, T, N, F, T]);
    // Trees built in Rust are checked when bound.
    let mut deep = Expr::column(["a"]);
    for _ in 0..5_000 {
        deep = Expr::Negate(Box::new(deep));
    }
    let error = bind(&deep, &b.schema(), &BindOptions::default()).unwrap_err().to_string();
    assert!(error.contains("nested too deeply"), "{error}");
    // Dropping the deep tree must not overflow either: take it apart iteratively.
    let mut node = deep;
    while let Expr::Negate(inner) = node {
        node = *inner;
    }
}

fn eval_bound(bound: &BoundExpr, batch: &RecordBatch) -> Vec<Option<bool>> {
    evaluate(bound, batch).unwrap().iter().collect()
}

#[test]
fn second_unit_timestamps_and_dictionary_strings() {
    use arrow::array::{DictionaryArray, TimestampSecondArray};
    use arrow::datatypes::Int32Type;
    let seconds = TimestampSecondArray::from(vec![Some(10), Some(11), None]).with_timezone("UTC");
    let names: DictionaryArray<Int32Type> = vec![Some("x"), Some("y"), None].into_iter().collect();
    let b = batch(vec![("ts", Arc::new(seconds) as ArrayRef), ("name", Arc::new(names) as ArrayRef)]);
    assert_eq!(eval(&b, "ts > TIMESTAMP '1970-01-01 00:00:10'"), [F, T, N]);
    assert_eq!(eval(&b, "ts > TIMESTAMP '1970-01-01 00:00:10.5'"), [F, T, N]);
    assert_eq!(eval(&b, "ts = TIMESTAMP '1970-01-01 00:00:10.5'"), [F, F, N]);
    assert_eq!(eval(&b, "name = 'y'"), [F, T, N]);
    assert_eq!(eval(&b, "name IN ('x', 'z')"), [T, F, N]);
    assert_eq!(eval(&b, "name LIKE 'x%'"), [T, F, N]);
}
