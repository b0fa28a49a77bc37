"""Spark SQL functions in filters, against Spark 4.3 itself: the same rows through
``pqsift.scan``, ``pqsift.spark.read`` and the data source, and pruning through the
order-preserving functions (README "Filters", functions)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift

UTC = dt.UTC
STRINGS = ["  Hello ", "hello", "ΣΊΣΥΦΟΣ", "Straße", "İstanbul", "abc-123", "a%_b\\c", "", "\tTab\t", "日本語", "x1y22z333", "Ab"]


def _rows(n: int) -> pa.Table:
    ts0 = dt.datetime(2024, 3, 10, 4, 0, tzinfo=UTC)  # DST starts in New York at 07:00 UTC
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "s": pa.array([None if i % 17 == 0 else STRINGS[i % len(STRINGS)] for i in range(n)]),
            "i": pa.array([None if i % 13 == 0 else (i * 7919) % 201 - 100 for i in range(n)], pa.int32()),
            "d": pa.array([None if i % 11 == 0 else [2.675, float("nan"), -0.0, -2.5, 2.5, 1e300, float("inf"), 0.125][i % 8] * (1 + i % 3) for i in range(n)]),
            "m": pa.array([None if i % 9 == 0 else Decimal((i * 37) % 2000 - 1000) / 100 for i in range(n)], pa.decimal128(12, 2)),
            "day": pa.array([None if i % 19 == 0 else dt.date(2023, 12, 25) + dt.timedelta(days=i % 400) for i in range(n)], pa.date32()),
            "ts": pa.array([None if i % 23 == 0 else ts0 + dt.timedelta(minutes=37 * i) for i in range(n)], pa.timestamp("us", tz="UTC")),
        }
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("functions") / "t.parquet"
    pq.write_table(_rows(3000), path, row_group_size=500, write_page_index=True, data_page_size=2000)
    return path


FILTERS = [
    "lower(s) = 'hello'",
    "upper(s) = 'STRASSE'",
    "lower(s) = 'σίσυφος'",
    "lower(s) = lower('İSTANBUL')",
    "lower(upper(s)) = 'straße'",
    "upper(s) ILIKE 'straße'",
    "trim(s) = 'Hello'",
    "ltrim(s) = 'Hello '",
    "rtrim(s) = '  Hello'",
    "TRIM(BOTH '\\t' FROM s) = 'Tab'",
    "length(s) = 3",
    "char_length(s) > 7",
    "substring(s, 2, 3) = 'ell'",
    "substr(s, -3) = '333'",
    "substring(s, 0, 2) = 'ab'",
    "substring(s, -20, 22) = 'He'",
    "concat(s, '-', i) = 'hello-5'",
    "concat(s, s) = 'AbAb'",
    "startswith(s, 'a%')",
    "endswith(s, 'ße')",
    "contains(s, '_b')",
    "contains(s, '')",
    "s ILIKE 'HE%'",
    "s NOT ILIKE '%o'",
    "s RLIKE '\\\\d{3}'",
    "s RLIKE '^[a-z]+$'",
    "s REGEXP 'ß|İ'",
    "lower(s) IN ('hello', 'ab', '日本語')",
    "year(day) = 2024 AND month(day) = 2",
    "day(day) = 29",
    "quarter(day) = 4",
    "date_add(day, 10) = DATE '2024-03-01'",
    "date_sub(day, 1) < DATE '2024-01-01'",
    "datediff(day, DATE '2024-01-01') BETWEEN 0 AND 3",
    "date(ts) = DATE '2024-03-11'",
    "to_date(ts) >= DATE '2024-03-12'",
    "year(ts) = 2024 AND month(ts) = 3",
    "hour(ts) = 2",
    "minute(ts) = 7",
    "second(ts) = 0",
    "date_trunc('HOUR', ts) = TIMESTAMP '2024-03-10 03:00:00'",
    "date_trunc('DAY', ts) = TIMESTAMP '2024-03-11 00:00:00'",
    "date_trunc('MONTH', ts) > TIMESTAMP '2024-03-01 00:00:00'",
    "date_trunc('WEEK', ts) = TIMESTAMP '2024-03-11 00:00:00'",
    "date_trunc('QUARTER', day) = TIMESTAMP '2024-01-01 00:00:00'",
    "current_date() > day",
    "coalesce(i, -1000) = -1000",
    "nvl(s, 'none') = 'none'",
    "ifnull(i, 0) = 0",
    "nullif(i, 5) IS NULL",
    "nvl2(s, 1, 2) = 2",
    "if(i > 0, 'pos', 'neg') = 'pos'",
    "CASE WHEN i > 50 THEN 'big' WHEN i > 0 THEN 'small' ELSE 'neg' END = 'small'",
    "CASE i WHEN 1 THEN true WHEN 2 THEN true ELSE false END",
    "isnull(day) OR isnotnull(ts) AND i > 90",
    "round(d, 2) = 2.68",
    "round(d) = 3",
    "round(d, -1) = 10",
    "round(m, 1) > 5",
    "round(m, -1) = 100",
    "floor(d) = -3",
    "ceil(d) = 3",
    "abs(d) < 100 AND floor(d) = 0",
    "floor(m) = 9",
    "ceil(m) = -9",
    "i % 7 = 3",
    "i % -7 = -3",
    "mod(i, 5) = 0",
    "pmod(i, 7) = 6",
    "pmod(m, 3) > 1",
    "d % 2 = 0.5",
    "isnan(d)",
    "NOT isnan(d)",
    "abs(i) < 10 AND NOT (lower(s) LIKE 'h%')",
    "CASE WHEN i = 0 THEN false ELSE 100 % i = 0 END",
]


def _spark_ids(spark: Any, path: Path, text: str) -> list[int] | None:
    try:
        return sorted(r.id for r in spark.read.parquet(str(path)).where(text).select("id").collect())
    except Exception:  # noqa: BLE001 - Spark's failure is the expectation
        return None


@pytest.mark.parametrize("text", FILTERS)
def test_rows_equal_spark(spark: Any, data: Path, text: str) -> None:
    expected = _spark_ids(spark, data, text)
    if expected is None:
        with pytest.raises(pqsift.PqsiftError):
            pqsift.scan(data, filter=text, session_time_zone="America/New_York").to_table()
        return
    got = pqsift.scan(data, columns=["id"], filter=text, session_time_zone="America/New_York").to_table()
    assert sorted(got.column("id").to_pylist()) == expected, text


@pytest.mark.parametrize("text", ["floor(d) = 0", "i % 0 = 1", "pmod(i, 0) = 1", "d % 0 = 1", "lower(s, s) = 'a'", "year(i) = 1", "to_date(s) IS NULL"])
def test_errors_where_spark_fails(spark: Any, data: Path, text: str) -> None:
    """What Spark rejects (analysis or ANSI run-time errors) pqsift rejects too."""
    assert _spark_ids(spark, data, text) is None, f"Spark accepts {text}"
    with pytest.raises(pqsift.PqsiftError):
        pqsift.scan(data, filter=text, session_time_zone="America/New_York").to_table()


def test_an_unknown_function_is_named() -> None:
    with pytest.raises(pqsift.FilterError, match=r'unsupported function "soundex".*pqsift evaluates abs, ceil'):
        pqsift.parse_filter("soundex(s) = 'H400'")


# New York changes its clocks on 2024-03-10; its wall clocks are bounded through its
# offsets (-05:00 to -04:00), an hour wider than in UTC.
@pytest.mark.parametrize("zone", ["UTC", "America/New_York"])
@pytest.mark.parametrize(
    "text",
    [
        "date(ts) = DATE '2024-03-12'",
        "to_date(ts) = DATE '2024-03-10'",
        "year(ts) = 2024 AND date_trunc('DAY', ts) = TIMESTAMP '2024-03-13 00:00:00'",
        "date_trunc('HOUR', ts) = TIMESTAMP '2024-03-12 05:00:00'",
        "substring(k, 1, 4) = 'k012'",
        "startswith(k, 'k012')",
        "datediff(DATE '2024-03-20', to_date(ts)) = 8",
        # Seconds since the epoch, either way.
        "CAST(ts AS BIGINT) BETWEEN 1710201600 AND 1710205199",
        "CAST(id AS TIMESTAMP) < TIMESTAMP '1970-01-01 00:30:00Z'",
    ],
)
def test_order_preserving_functions_prune(spark: Any, tmp_path: Path, text: str, zone: str) -> None:
    n = 20_000
    start = dt.datetime(2024, 3, 10, tzinfo=UTC)
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "ts": pa.array([start + dt.timedelta(minutes=i) for i in range(n)], pa.timestamp("us", tz="UTC")),
            "k": pa.array([f"k{i:05d}" for i in range(n)]),
        }
    )
    path = tmp_path / "sorted.parquet"
    pq.write_table(table, path, row_group_size=2000, write_page_index=True, data_page_size=4000)
    scan = pqsift.scan(path, columns=["id"], filter=text, session_time_zone=zone)
    got = sorted(scan.to_table().column("id").to_pylist())
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        assert got == _spark_ids(spark, path, text)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    assert got, text
    assert scan.metrics["row_groups_pruned_statistics"] >= 7, (text, scan.metrics)
    # lower() cannot prune, and explain says why.
    explained = pqsift.scan(path, filter="lower(k) = 'k00012'").explain()
    assert "lower does not preserve order" in explained


SPARK_FILTERS = [
    "lower(s) = 'hello'",
    "substring(s, -3) = '333'",
    "s RLIKE '\\\\d{3}'",
    "year(day) = 2024 AND month(day) = 2",
    "date(ts) = DATE '2024-03-11'",
    "hour(ts) = 2",
    "date_trunc('DAY', ts) = TIMESTAMP '2024-03-11 00:00:00'",
    "coalesce(i, -1000) = -1000",
    "CASE WHEN i > 50 THEN 'big' WHEN i > 0 THEN 'small' ELSE 'neg' END = 'small'",
    "round(d, 2) = 2.68",
    "pmod(i, 7) = 6",
    "isnan(d)",
]


def test_spark_read_and_data_source_equal_spark(spark: Any, data: Path) -> None:
    import pqsift.spark

    for text in SPARK_FILTERS:
        expected = _spark_ids(spark, data, text)
        read = pqsift.spark.read(spark, data, columns=["id"], filter=text, driver_read_bytes=0)
        assert sorted(r.id for r in read.collect()) == expected, text
        # The data source is given no function by Spark: Spark evaluates it over pqsift's rows.
        source = spark.read.format("pqsift").load(str(data)).where(text).select("id")
        assert sorted(r.id for r in source.collect()) == expected, text


def test_a_cast_raises_only_for_a_value_a_row_reaches(spark: Any, tmp_path: Path) -> None:
    """`s` is dictionary-encoded and its dictionary holds 'xx', which cannot be cast to INT;
    only rows the first conjunct removed hold it, so Spark raises nothing (a predicate on a
    dictionary is evaluated once an entry, and an entry no row has must not raise)."""
    n = 1_000
    table = pa.table({"id": range(n), "k": ["a" if i % 2 else "b" for i in range(n)], "s": ["12" if i % 2 else "xx" for i in range(n)]})
    path = tmp_path / "dictionary.parquet"
    pq.write_table(table, path, row_group_size=n)
    for text in ["k = 'a' AND CAST(s AS INT) = 12", "k = 'a' AND CAST(s AS INT) > 0 AND k IS NOT NULL"]:
        expected = _spark_ids(spark, path, text)
        assert expected is not None and len(expected) == n // 2, text
        got = pqsift.scan(path, columns=["id"], filter=text).to_table()
        assert sorted(got.column("id").to_pylist()) == expected, text
    # A row that reaches the cast with 'xx' raises, in both.
    assert _spark_ids(spark, path, "k = 'b' AND CAST(s AS INT) = 12") is None
    with pytest.raises(pqsift.FilterError, match="'xx'"):
        pqsift.scan(path, filter="k = 'b' AND CAST(s AS INT) = 12").to_table()


def test_arithmetic_reads_a_string_as_a_number(spark: Any, tmp_path: Path) -> None:
    """A string beside an integral operand is a BIGINT, beside a fractional one a DOUBLE,
    as Spark reads it; a string that does not cast raises in both."""
    table = pa.table({"id": [0, 1, 2, 3], "s": [" 12 ", "12", "1.5", None], "n": pa.array([1, 2, 3, None], pa.int32()),
                      "m": pa.array([Decimal("1.50"), None, Decimal("1.50"), Decimal("0.00")], pa.decimal128(5, 2))})
    path = tmp_path / "numbers.parquet"
    pq.write_table(table, path)
    for text in ["id < 2 AND s + 1 = 13", "id < 2 AND s * n = 24", "id < 2 AND s / 8 = 1.5", "s * 2.0 = 3", "s - m > 0",
                 "s * 1.5D > 2", "id <> 2 AND -s < 0"]:
        expected = _spark_ids(spark, path, text)
        assert expected, text
        got = pqsift.scan(path, columns=["id"], filter=text).to_table()
        assert sorted(got.column("id").to_pylist()) == expected, text
    for text in ["s + 1 = 13", "s + s > 0"]:
        assert _spark_ids(spark, path, text) is None, text
        with pytest.raises(pqsift.FilterError):
            pqsift.scan(path, filter=text).to_table()


def test_a_not_null_check_of_arithmetic_runs_after_the_other_conjuncts(spark: Any, tmp_path: Path) -> None:
    """Spark's filter evaluates `(i - l) IS NOT NULL` after the other conjuncts (its
    `FilterExec` moves null checks of null-intolerant expressions last), so the subtraction
    overflows only for the rows they all kept."""
    table = pa.table({"id": [0, 1], "i": pa.array([5, 5], pa.int32()), "l": pa.array([-(2**63) + 1, 0], pa.int64()),
                      "s": ["hello", "hallo"]})
    path = tmp_path / "overflow.parquet"
    pq.write_table(table, path)
    for text, expected in [
        ("startswith(s, 'h') AND (i - l) IS NOT NULL AND endswith(s, 'h')", []),
        ("(i - l) IS NOT NULL AND s = 'hallo'", [1]),
        ("NOT ((i - l) IS NULL) AND s = 'hallo'", [1]),
        ("startswith(s, 'h') AND (i - l) IS NOT NULL AND endswith(s, 'o')", None),
    ]:
        assert _spark_ids(spark, path, text) == expected, text
        for options in [{}, {"pushdown_filters": False}]:
            if expected is None:
                with pytest.raises(pqsift.PqsiftError, match="overflow"):
                    pqsift.scan(path, filter=text, **options).to_table()
            else:
                got = pqsift.scan(path, columns=["id"], filter=text, **options).to_table()
                assert got.column("id").to_pylist() == expected, (text, options)


@pytest.mark.parametrize("options", [{}, {"reorder_filters": False}, {"pushdown_filters": False}, {"selection_policy": "selectors"}])
def test_a_conjunct_that_can_raise_sees_only_the_rows_before_it_kept(data: Path, options: dict[str, Any]) -> None:
    """Spark evaluates `a AND b` left to right: `floor` of a NaN or an infinity raises, but
    `abs(d) < 100` removed those rows first — whatever order the reader would prefer."""
    text = "abs(d) < 100 AND floor(d) = 2"
    got = pqsift.scan(data, columns=["id", "d"], filter=text, **options).to_table()
    assert got.num_rows > 0 and all(2 <= d < 3 for d in got.column("d").to_pylist())


RLIKE_TEXTS = ["abc", "ABC", "Straße", "é", "É", "\u212a", "k", "K", "\u017f", "s", "line\n", "a\r\nb", "a\rb", "x\u2028y",
               "İ", "ı", "i", "\u0662\u0660", "123\r\n", "a b", "a\u00a0b", "\x1b", ":", "l", None]


@pytest.mark.parametrize("pattern", [
    "(?i)é", "(?i)k", "(?i)[K-L]", "(?i)^[a-z]+$", "(?i)\\\\p{Lower}", "(?iu)é", "(?iu)k", "(?iu)^i$", "(?s)a.b", "(?d)a.b",
    "a.b", "line$", "^\\\\d+$", "b\\\\Z", "^(line|x)$", "\\\\p{Alpha}", "\\\\p{Lower}", "\\\\P{Alnum}", "\\\\p{IsAlphabetic}",
    "[[:alpha:]]", "\\\\h", "\\\\v", "\\\\e", "(?x) a \\\\  b", "[a-c&&[^b]]",
])
def test_rlike_reads_patterns_as_java_does(spark: Any, tmp_path: Path, pattern: str) -> None:
    """Where Java's regular expressions and the crate's read a pattern differently (case
    folding, line terminators, `$`, POSIX classes), the rows are Java's."""
    path = tmp_path / "texts.parquet"
    pq.write_table(pa.table({"id": range(len(RLIKE_TEXTS)), "s": RLIKE_TEXTS}), path)
    text = f"s RLIKE '{pattern}'"
    expected = _spark_ids(spark, path, text)
    assert expected is not None, text
    got = pqsift.scan(path, columns=["id"], filter=text).to_table()
    assert sorted(got.column("id").to_pylist()) == expected, text


@pytest.mark.parametrize("pattern", ["(?m)^b", "a$b", "(a)\\\\1", "a(?=b)", "\\\\R", "(?U)\\\\w", "\\\\p{InGreek}", "(?iu)[a-z]"])
def test_rlike_refuses_what_it_cannot_read_as_java_does(tmp_path: Path, pattern: str) -> None:
    path = tmp_path / "texts.parquet"
    pq.write_table(pa.table({"s": ["a\nb"]}), path)
    with pytest.raises(pqsift.FilterError, match="cannot evaluate") as raised:
        pqsift.scan(path, filter=f"s RLIKE '{pattern}'").to_table()
    assert raised.value.column == "s" and pattern.replace("\\\\", "\\") in raised.value.reason
