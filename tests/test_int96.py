"""INT96 timestamps (Spark's, Hive's and Impala's default) in filters: Spark reads them as
TIMESTAMP, instants, so a literal is an instant in the session time zone, whatever type
pqsift's output gives the column (pyarrow's zone-less ``timestamp[ns]``, or
``timestamp[us, UTC]`` for Spark). The oracle: the instants, compared in Python with the
literal resolved by ``zoneinfo`` (for a time skipped by a daylight-saving change, the
offset before it, which is Spark's shift forward; for a repeated one, the earlier).
Spark-written files are checked against Spark itself in test_spark.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift

START = datetime(2026, 3, 7, tzinfo=UTC)
#: Every 10 minutes over two daylight-saving changes in New York and Los Angeles.
INSTANTS = [START + timedelta(minutes=10 * i) for i in range(6 * 72)] + [
    datetime(2026, 10, 31, tzinfo=UTC) + timedelta(minutes=10 * i) for i in range(6 * 72)
]


@pytest.fixture(scope="module")
def int96_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("int96") / "t.parquet"
    ts = pa.array([*INSTANTS, None], type=pa.timestamp("us", tz="UTC"))
    table = pa.table({"id": pa.array(range(len(ts)), type=pa.int64()), "ts": ts})
    pq.write_table(
        table, path, use_deprecated_int96_timestamps=True, store_schema=False, row_group_size=100, data_page_size=512
    )
    # As Spark writes it: INT96 and no Arrow schema to name a time zone.
    assert pq.ParquetFile(path).schema.column(1).physical_type == "INT96"
    assert b"ARROW:schema" not in (pq.read_metadata(path).metadata or {})
    return path


def _instant(literal: str, zone: str) -> datetime:
    return datetime.fromisoformat(literal).replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)


CASES = [
    # (filter with {a} and {b} for literals, literals, predicate on the instant and the resolved literals)
    (
        "ts >= TIMESTAMP '{a}' AND ts < TIMESTAMP '{b}'",
        ("2026-03-08 01:30:00", "2026-03-08 03:30:00"),
        lambda t, a, b: a <= t < b,
    ),
    ("ts = TIMESTAMP '{a}'", ("2026-11-01 01:40:00",), lambda t, a: t == a),
    ("ts > TIMESTAMP '{a}'", ("2026-11-01 23:00:00",), lambda t, a: t > a),
    (
        "ts IN (TIMESTAMP '{a}', TIMESTAMP '{b}')",
        ("2026-03-08 12:00:00", "2026-03-08 02:20:00"),
        lambda t, a, b: t in (a, b),
    ),
    ("ts < DATE '{a}'", ("2026-03-08",), lambda t, a: t < a),
]


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "America/Los_Angeles", "Asia/Kolkata"])
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("pushdown", [True, False])
def test_int96_compared_as_instants_in_the_session_time_zone(
    int96_file: Path, zone: str, case: int, pushdown: bool
) -> None:
    template, literals, predicate = CASES[case]
    text = template.format(**dict(zip("ab", literals, strict=False)))
    resolved = [_instant(literal if " " in literal else literal + " 00:00:00", zone) for literal in literals]
    expected = [i for i, t in enumerate(INSTANTS) if predicate(t, *resolved)]
    assert 0 < len(expected) < len(INSTANTS), text  # a case that selects something, not everything
    for spark_output in (False, True):
        got = pqsift.scan(
            int96_file, ["id", "ts"], text, session_time_zone=zone, pushdown_filters=pushdown, spark_output=spark_output
        ).to_table()
        assert got.column("id").to_pylist() == expected, (text, zone, spark_output)
    # The output types are pyarrow's (no time zone) and Spark's; the filter changed neither.
    assert got.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    plain = pqsift.scan(int96_file, ["ts"], text, session_time_zone=zone).to_table()
    assert plain.schema.field("ts").type == pq.read_schema(int96_file).field("ts").type == pa.timestamp("ns")


def test_int96_nanoseconds_compare_as_the_microsecond_holding_them(tmp_path: Path) -> None:
    """Spark reads an INT96 in microseconds, flooring its nanoseconds (its day's
    nanoseconds are never negative): 1 ns before 1970 is 1969-12-31 23:59:59.999999, not
    1970-01-01 00:00:00 as truncating toward zero would make it."""
    path = tmp_path / "ns.parquet"
    nanos = [-1500, -1, 0, 999, 1000]
    table = pa.table({"id": list(range(len(nanos))), "ts": pa.array(nanos, type=pa.timestamp("ns"))})
    pq.write_table(table, path, use_deprecated_int96_timestamps=True, store_schema=False)
    cases = {
        "ts < TIMESTAMP '1970-01-01 00:00:00'": [0, 1],
        "ts = TIMESTAMP '1970-01-01 00:00:00'": [2, 3],
        "ts = TIMESTAMP '1969-12-31 23:59:59.999999'": [1],
        "ts >= TIMESTAMP '1970-01-01 00:00:00.000001'": [4],
    }
    for text, expected in cases.items():
        for pushdown in (True, False):
            got = pqsift.scan(path, ["id"], text, pushdown_filters=pushdown).to_table().column("id").to_pylist()
            assert got == expected, (text, pushdown)


def test_int96_in_a_struct_compared_as_an_instant(tmp_path: Path) -> None:
    path = tmp_path / "nested.parquet"
    ts = pa.array(INSTANTS, type=pa.timestamp("us", tz="UTC"))
    table = pa.table({"id": pa.array(range(len(ts)), type=pa.int64()), "s": pa.StructArray.from_arrays([ts], ["ts"])})
    pq.write_table(table, path, use_deprecated_int96_timestamps=True, store_schema=False)
    assert pq.ParquetFile(path).schema.column(1).physical_type == "INT96"
    low, high = (
        _instant("2026-03-08 01:30:00", "America/Los_Angeles"),
        _instant("2026-03-08 03:30:00", "America/Los_Angeles"),
    )
    expected = [i for i, t in enumerate(INSTANTS) if low <= t < high]
    text = "s.ts >= TIMESTAMP '2026-03-08 01:30:00' AND s.ts < TIMESTAMP '2026-03-08 03:30:00'"
    for pushdown in (True, False):
        got = pqsift.scan(
            path, ["id"], text, session_time_zone="America/Los_Angeles", pushdown_filters=pushdown
        ).to_table()
        assert got.column("id").to_pylist() == expected, pushdown
    # Output: pyarrow's zone-less nanoseconds; for Spark its `timestamp`, the same instants.
    plain = pqsift.scan(path, ["s"]).to_table()
    assert (
        plain.schema.field("s").type == pq.read_schema(path).field("s").type == pa.struct([("ts", pa.timestamp("ns"))])
    )
    spark = pqsift.scan(path, ["s"], spark_output=True).to_table()
    assert spark.schema.field("s").type == pa.struct([("ts", pa.timestamp("us", tz="UTC"))])
    assert [row["ts"] for row in spark.column("s").to_pylist()] == INSTANTS


def test_nested_int96_past_nanoseconds_range_read_in_microseconds(tmp_path: Path) -> None:
    """An INT96 inside a struct or a list after 2262 (or before 1677) does not fit
    nanoseconds: read in microseconds (Spark's unit, or the option's), it reads as written,
    as a top-level one does, where nanoseconds would wrap it into another instant."""
    path = tmp_path / "far.parquet"
    far = [datetime(3000, 1, 2, 3, 4, 5, 6, tzinfo=UTC), datetime(1500, 6, 7, tzinfo=UTC), INSTANTS[0]]
    ts = pa.array(far, type=pa.timestamp("us", tz="UTC"))
    table = pa.table(
        {
            "id": pa.array(range(len(far)), type=pa.int64()),
            "ts": ts,
            "s": pa.StructArray.from_arrays([ts], ["ts"]),
            "l": pa.array([[t] for t in far], type=pa.list_(pa.timestamp("us", tz="UTC"))),
        }
    )
    pq.write_table(table, path, use_deprecated_int96_timestamps=True, store_schema=False)
    oracle = pq.read_table(path, coerce_int96_timestamp_unit="us")
    assert oracle.column("s").to_pylist() == [{"ts": t.replace(tzinfo=None)} for t in far]
    for options in ({"spark_output": True}, {"coerce_int96_timestamp_unit": "us"}):
        got = pqsift.scan(path, ["ts", "s", "l"], **options).to_table()  # type: ignore[arg-type]
        utc = lambda t: t if t.tzinfo else t.replace(tzinfo=UTC)  # noqa: E731
        assert [utc(t) for t in got.column("ts").to_pylist()] == far, options
        assert [utc(row["ts"]) for row in got.column("s").to_pylist()] == far, options
        assert [utc(row[0]) for row in got.column("l").to_pylist()] == far, options
        text = "s.ts >= TIMESTAMP '2999-01-01 00:00:00' OR s.ts < TIMESTAMP '1600-01-01 00:00:00'"
        rows = pqsift.scan(path, ["id"], text, **options).to_table()  # type: ignore[arg-type]
        assert rows.column("id").to_pylist() == [0, 1], options


def test_nested_int96_past_nanoseconds_range_is_refused_not_wrapped(tmp_path: Path) -> None:
    """Read in nanoseconds (the default), an INT96 after 2262 inside a struct, a list or a
    map does not fit: pyarrow (the crate too) wraps 9999-12-31, a common "no end" sentinel,
    into 1816-03-29. pqsift raises instead, as it does for a top-level column, naming the
    column and the option that reads it; values in range, and the other columns, read."""
    path = tmp_path / "sentinel.parquet"
    sentinel = datetime(9999, 12, 31, tzinfo=UTC)
    instants = [INSTANTS[0], sentinel, None]
    ts = pa.array(instants, type=pa.timestamp("us", tz="UTC"))
    # A wide struct whose INT96 field is not its first (the check decodes that field only).
    wide = pa.StructArray.from_arrays([pa.array([1, 2, 3]), ts, pa.array(["a", "b", None])], ["x", "ts", "y"])
    table = pa.table(
        {
            "id": pa.array(range(3), type=pa.int64()),
            "s": pa.StructArray.from_arrays([ts], ["ts"]),
            "l": pa.array([[t] for t in instants], type=pa.list_(pa.timestamp("us", tz="UTC"))),
            "m": pa.array([[("k", t)] for t in instants], type=pa.map_(pa.string(), pa.timestamp("us", tz="UTC"))),
            "w": wide,
            "lw": pa.array([[row] for row in wide.to_pylist()], type=pa.list_(wide.type)),
            "mw": pa.array([[("k", row)] for row in wide.to_pylist()], type=pa.map_(pa.string(), wide.type)),
        }
    )
    pq.write_table(table, path, use_deprecated_int96_timestamps=True, store_schema=False)
    assert pq.ParquetFile(path).schema.column(1).physical_type == "INT96"
    wrapped = pq.read_table(path).column("s").to_pylist()[1]["ts"]
    assert wrapped.year == 1816, "pyarrow no longer wraps: the oracle of this test changed"
    for column in ("s", "l", "m", "w", "lw", "mw"):
        for text in (None, "id >= 0"):
            with pytest.raises(pqsift.UnsupportedError) as caught:
                pqsift.scan(path, ["id", column], filter=text).to_table()
            assert caught.value.column == column
            assert caught.value.path == str(path)
            assert "9999-12-31 00:00:00 UTC" in str(caught.value)
            assert "coerce_int96_timestamp_unit" in str(caught.value)
        # The rows before the sentinel read; filtered on, the column is decoded (and refused).
        first = pqsift.scan(path, ["id", column], filter="id = 0").to_table()
        assert first.column("id").to_pylist() == [0]
    with pytest.raises(pqsift.UnsupportedError, match="column s"):
        pqsift.scan(path, ["id"], filter="s.ts > TIMESTAMP '3000-01-01 00:00:00'").to_table()
    # In microseconds they read as written (pyarrow's microseconds, the oracle).
    oracle = pq.read_table(path, coerce_int96_timestamp_unit="us")
    got = pqsift.scan(path, coerce_int96_timestamp_unit="us").to_table()
    assert got.column("s").to_pylist() == oracle.column("s").to_pylist()
    for column in ("m", "w", "lw", "mw"):
        assert got.column(column).to_pylist() == oracle.column(column).to_pylist(), column
    assert got.column("s").to_pylist()[1]["ts"] == sentinel.replace(tzinfo=None)
    # In nanoseconds, rows in range read as pyarrow reads them, the wide struct's other
    # fields too.
    in_range = pqsift.scan(path, ["w", "lw", "mw"], filter="id <> 1").to_table()
    oracle_rows = pq.read_table(path, columns=["w", "lw", "mw"]).filter(pa.array([True, False, True]))
    for column in ("w", "lw", "mw"):
        assert in_range.column(column).to_pylist() == oracle_rows.column(column).to_pylist(), column
