"""pqsift.spark.driver_frame: a driver read's rows made a DataFrame with few calls into the
JVM, checked against PySpark's own ``createDataFrame`` of the same Arrow table."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from pqsift.spark import driver_frame as module

STRUCT = StructType(
    [
        StructField("id", LongType(), False),
        StructField("amount", DoubleType()),
        StructField("note", StringType()),
        StructField("blob", BinaryType()),
        StructField("flag", BooleanType()),
        StructField("day", DateType()),
        StructField("at", TimestampType()),
        StructField("local_at", TimestampNTZType()),
        StructField("price", DecimalType(12, 3)),
        StructField("tags", ArrayType(StringType())),
        StructField("point", StructType([StructField("x", LongType()), StructField("y", StringType())])),
    ]
)


def _rows(count: int) -> pa.Table:
    """``count`` rows of :data:`STRUCT` in Spark's Arrow types, with nulls, NaN, -0.0 and
    text outside ASCII."""
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(STRUCT, timezone="UTC")
    amounts = [float("nan"), -0.0, None, 1.5]
    notes = ["", "é日本", None, "x" * 300]
    values = {
        "id": list(range(count)),
        "amount": [amounts[i % 4] for i in range(count)],
        "note": [notes[i % 4] for i in range(count)],
        "blob": [None if i % 5 == 0 else bytes([i % 256]) * (i % 7) for i in range(count)],
        "flag": [None if i % 3 == 0 else i % 2 == 0 for i in range(count)],
        "day": [datetime.date(1970, 1, 1) + datetime.timedelta(days=i - 500) for i in range(count)],
        "at": [
            None
            if i % 11 == 0
            else datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(microseconds=7 * i)
            for i in range(count)
        ],
        "local_at": [datetime.datetime(1900, 3, 1) + datetime.timedelta(seconds=i) for i in range(count)],
        "price": [None if i % 4 == 1 else decimal.Decimal(i) / 1000 for i in range(count)],
        "tags": [None if i % 6 == 0 else [str(i)] * (i % 3) for i in range(count)],
        "point": [None if i % 9 == 0 else {"x": i, "y": None if i % 2 else "y"} for i in range(count)],
    }
    return pa.table(values, schema=schema)


def _same(frame: Any, other: Any) -> bool:
    """Whether two DataFrames hold the same rows in the same order (NaN equal to NaN, -0.0
    told from 0.0: compared by their text)."""
    return repr(frame.toArrow().to_pylist()) == repr(other.toArrow().to_pylist())


def _settings(spark: Any) -> dict[str, str | None]:
    names = (module.LOCAL_RELATION_THRESHOLD, module.ARROW_RECORDS_PER_BATCH, module.ARROW_LARGE_VAR_TYPES)
    return {name: spark.conf.get(name, None) for name in names}


@pytest.mark.parametrize("count", [0, 1, 3_000])
def test_the_frame_holds_the_rows_as_createDataFrame_makes_them(spark: Any, count: int) -> None:  # noqa: N802
    rows = _rows(count)
    before = _settings(spark)
    frame = module.arrow_frame(spark, rows, STRUCT)
    assert _settings(spark) == before
    assert frame.schema == STRUCT
    assert frame.rdd.getNumPartitions() == 1
    assert _same(frame, spark.createDataFrame(rows, STRUCT))
    assert frame.count() == count
    # Not a local relation: the batch parallelized as it is.
    assert "LocalTableScan" not in frame._jdf.queryExecution().executedPlan().toString()


def test_large_var_types_and_a_set_threshold(spark: Any) -> None:
    """With Spark's 64-bit-offset strings asked for, the batch is sent in that layout; a
    threshold the session set is put back."""
    rows = _rows(500)
    spark.conf.set(module.ARROW_LARGE_VAR_TYPES, "true")
    spark.conf.set(module.LOCAL_RELATION_THRESHOLD, "12345")
    try:
        frame = module.arrow_frame(spark, rows, STRUCT)
        assert spark.conf.get(module.LOCAL_RELATION_THRESHOLD) == "12345"
        assert [row.note for row in frame.select("note").collect()] == rows.column("note").to_pylist()
    finally:
        spark.conf.unset(module.ARROW_LARGE_VAR_TYPES)
        spark.conf.unset(module.LOCAL_RELATION_THRESHOLD)


def test_the_frame_is_made_with_few_calls_into_the_jvm(spark: Any, py4j_commands: list[str]) -> None:
    """PySpark's ``createDataFrame`` of the same table makes ~35 Py4J calls before its JVM
    work; the stream handed over as a file takes a handful."""
    rows = _rows(10)
    module.arrow_frame(spark, rows, STRUCT)  # the JVM class looked up once per JVM
    py4j_commands.clear()
    module.arrow_frame(spark, rows, STRUCT)
    ours = len(py4j_commands)
    py4j_commands.clear()
    spark.createDataFrame(rows, STRUCT)
    assert ours <= 6 < len(py4j_commands)


def test_a_jvm_without_the_functions_gets_createDataFrame(  # noqa: N802
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another Spark's JVM, whose functions take other arguments: PySpark's own path, with
    the same settings, and it is not tried again."""
    from py4j.protocol import Py4JError

    def read_stream(name: str) -> Any:
        raise Py4JError("Method readArrowStreamFromFile([class java.lang.String]) does not exist")

    key = id(spark.sparkContext._gateway)
    monkeypatch.setitem(module._UTILS, key, (read_stream, None))
    rows = _rows(100)
    before = _settings(spark)
    frame = module.arrow_frame(spark, rows, STRUCT)
    assert module._UTILS[key] is None
    assert _settings(spark) == before
    assert frame.rdd.getNumPartitions() == 1
    assert _same(frame, spark.createDataFrame(rows, STRUCT))
