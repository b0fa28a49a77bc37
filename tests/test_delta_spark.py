"""Delta tables in Spark: ``pqsift.spark.read`` and the ``pqsift`` data source read a Delta
table (log replayed and files skipped on the driver, deletion vectors and the declared
schema applied in the tasks). Spark 4.3 from PyPI cannot read Delta itself, so the oracle
is Spark reading the golden tables' Spark-written ``expected/`` Parquet: the same rows and
the same ``StructType``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import pqsift

pyspark = pytest.importorskip("pyspark")
import pqsift.spark  # noqa: E402

GOLDEN = (Path(__file__).resolve().parents[1] / ".." / "shared" / "delta-testing" / "golden").resolve()

# Tables with deletion vectors, column mapping (name and id), nested and map columns,
# decimals, checkpoints of every kind, partitions; each has Spark-written expected rows.
TABLES = [
    "dv-with-columnmapping",
    "log-replay-dv-key-cases",
    "table-with-columnmapping-mode-name",
    "data-reader-timestamp_ntz-id-mode",
    "data-skipping-basic-stats-all-types-columnmapping-id",
    "data-reader-map",
    "data-reader-nested-struct",
    "data-reader-array-primitives",
    "basic-decimal-table",
    "multi-part-checkpoint",
    "v2-checkpoint-json",
    "time-travel-partition-changes-b",
    "data-reader-escaped-chars",
]


def _sorted(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(rows, key=lambda row: repr(row))


def _rows(frame: Any, columns: list[str]) -> list[tuple[Any, ...]]:
    """Rows with the columns in ``columns``' order, maps as sorted item lists (Spark gives
    dicts, whose order is not defined)."""

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return sorted((repr(k), plain(v)) for k, v in value.items())
        if isinstance(value, (list, tuple)) and not hasattr(value, "asDict"):
            return [plain(v) for v in value]
        if hasattr(value, "asDict"):
            return tuple(plain(v) for v in value)
        return value

    return _sorted([tuple(plain(row[c]) for c in columns) for row in frame.select(*columns).collect()])


@pytest.mark.parametrize("name", TABLES)
def test_spark_reads_delta_as_spark_reads_the_expected_rows(spark: Any, name: str) -> None:
    delta, expected = GOLDEN / name / "delta", GOLDEN / name / "expected"
    oracle = spark.read.parquet(str(expected))
    frame = pqsift.spark.read(spark, str(delta))
    columns = oracle.columns
    assert sorted(frame.columns) == sorted(columns)
    # Spark infers the type of a partition directory of expected/ (`int` for a Delta
    # `long`); the Delta schema decides pqsift's, so only file columns compare by type.
    inferred = {p.name.split("=")[0] for p in expected.iterdir() if "=" in p.name}
    types = {f.name: f.dataType for f in frame.schema.fields if f.name not in inferred}
    assert types == {f.name: f.dataType for f in oracle.schema.fields if f.name not in inferred}
    assert _rows(frame, columns) == _rows(oracle, columns)
    # Lazy planning (the default past 1,000 files): tasks plan their files from what the
    # driver's log replay says of each (schema, partition values, deletion vector).
    assert _rows(pqsift.spark.read(spark, str(delta), lazy=True), columns) == _rows(oracle, columns)
    source = spark.read.format("pqsift").load(str(delta))
    assert _rows(source, columns) == _rows(oracle, columns)


def test_deletion_vectors_apply_in_tasks(spark: Any) -> None:
    """8 of the 10 rows survive the deletion vector (delta-testing README); the driver's
    plan carries it to the task that reads the file."""
    table = GOLDEN.parent / "tables" / "table-with-dv-small"
    metrics = pqsift.spark.ScanMetrics(spark)
    frame = pqsift.spark.read(spark, str(table), metrics=metrics)
    assert frame.count() == 8
    assert metrics.value["rows_deleted"] == 2
    assert pqsift.spark.read(spark, str(table), lazy=True).count() == 8
    assert spark.read.format("pqsift").load(str(table)).count() == 8
    assert pqsift.spark.read(spark, str(table), version=0).count() == 10
    assert spark.read.format("pqsift").option("versionAsOf", "0").load(str(table)).count() == 10


def test_filters_and_time_travel_in_spark(spark: Any) -> None:
    """Partition pruning on the driver, a filter on a data column in the tasks, an earlier
    version: the same rows as ``pqsift.scan`` (checked against its own oracles in
    test_delta.py) and as Spark's filter over the expected rows."""
    name = "time-travel-partition-changes-b"
    delta = GOLDEN / name / "delta"
    expected = spark.read.parquet(str(GOLDEN / name / "expected"))
    where = "id >= 3 AND part2 = 1"
    metrics = pqsift.spark.ScanMetrics(spark)
    frame = pqsift.spark.read(spark, str(delta), filter=where, metrics=metrics)
    assert _rows(frame, expected.columns) == _rows(expected.filter(where), expected.columns)
    assert metrics.value["files_pruned"] > 0
    pushed = spark.read.format("pqsift").load(str(delta)).filter(where)
    assert _rows(pushed, expected.columns) == _rows(expected.filter(where), expected.columns)
    first = pqsift.scan(delta, version=0).to_table()
    assert pqsift.spark.read(spark, str(delta), version=0).count() == first.num_rows


def test_an_empty_snapshot_has_the_declared_schema(spark: Any) -> None:
    """A Delta table with no active file (canonicalized-paths: the add is removed) still
    has its columns: an empty DataFrame, not a 'no Parquet files' error."""
    delta = GOLDEN / "canonicalized-paths-normal-a" / "delta"
    assert pqsift.scan(delta).files == []
    frame = pqsift.spark.read(spark, str(delta))
    assert frame.count() == 0
    assert frame.columns == [f.name for f in pqsift.spark.schema(delta).fields]
