"""Hive-style partitioned tables: pqsift discovers partition columns as
``spark.read.parquet`` does, prunes files on them before reading a footer, and returns
Spark's rows and schema — through ``pqsift.scan``, ``pqsift.spark.read`` and the data
source. The oracle is Spark itself, on tables Spark writes with ``partitionBy`` and on
directories named by hand for the inference edge cases.
"""

from __future__ import annotations

import datetime
import math
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift

pyspark = pytest.importorskip("pyspark")
import pqsift.spark  # noqa: E402

KINDS = ["a/b", "c=d", "with space", "ünïcode", "50%", "x:y", None]


@pytest.fixture(scope="module")
def hive_table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Written by Spark: two partition levels (a date and strings Spark must escape,
    with a null), an int partition column in another table below."""
    root = tmp_path_factory.mktemp("hive") / "events"
    rows = [
        (i, float(i) * 1.5 if i % 7 else None, datetime.date(2026, 1, 1 + i % 3), KINDS[i % len(KINDS)], f"note {i}")
        for i in range(300)
    ]
    frame = spark.createDataFrame(rows, "id long, amount double, day date, kind string, note string")
    frame.repartition(2).write.partitionBy("day", "kind").parquet(str(root))
    return root


def _native(spark: Any, path: Path, where: str | None = None, **options: str) -> Any:
    reader = spark.read
    for key, value in options.items():
        reader = reader.option(key, value)
    frame = reader.parquet(str(path))
    return frame.filter(where) if where else frame


def _sorted(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows in a fixed order whatever their types (None first)."""
    return sorted(rows, key=lambda row: [(0, "") if v is None else (1, repr(v)) for v in row])


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return _sorted([tuple(row) for row in frame.collect()])


def _table_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """Rows as Spark's collect() gives them: timestamps as naive wall clocks in the Python
    process's local time zone (``TimestampType.fromInternal``)."""

    def spark_value(value: Any) -> Any:
        if isinstance(value, datetime.datetime) and value.tzinfo is not None:
            return datetime.datetime.fromtimestamp(value.timestamp()).replace(microsecond=value.microsecond)
        return value

    return _sorted([tuple(spark_value(v) for v in row.values()) for row in table.to_pylist()])


FILTERS = [
    None,
    "day = DATE '2026-01-02'",
    "kind = 'a/b' OR kind IS NULL",
    "kind IN ('c=d', 'with space', 'ünïcode') AND amount > 100",
    "day > DATE '2026-01-01' AND (kind = 'x:y' OR id < 20)",
    "NOT (kind <=> NULL) AND day <> DATE '2026-01-03'",
    "kind LIKE '50%' OR note = 'note 7'",
    "CAST(day AS TIMESTAMP) >= TIMESTAMP '2026-01-03 00:00:00'",
]


@pytest.mark.parametrize("where", FILTERS)
def test_scan_returns_sparks_rows_and_prunes_partitions(spark: Any, hive_table: Path, where: str | None) -> None:
    scan = pqsift.scan(hive_table, filter=where, session_time_zone="America/New_York")
    table = scan.to_table()
    native = _native(spark, hive_table, where)
    assert table.column_names == native.columns
    assert _table_rows(table) == _rows(native)
    metrics = scan.metrics
    if where is not None and "note" not in where and "id <" not in where:
        assert metrics["files_pruned_partition"] > 0, metrics
    assert metrics["files_pruned"] >= metrics["files_pruned_partition"]


def test_schema_and_types_are_sparks(spark: Any, hive_table: Path) -> None:
    native = _native(spark, hive_table)
    assert pqsift.spark.schema(hive_table) == native.schema
    table = pqsift.scan(hive_table).to_table()
    assert table.schema.field("day").type == pa.date32()
    assert table.schema.field("kind").type == pa.string()


@pytest.mark.parametrize("where", [w for w in FILTERS if w][:5])
def test_spark_read_and_data_source_equal_spark(spark: Any, hive_table: Path, where: str) -> None:
    native = _native(spark, hive_table, where)
    metrics = pqsift.spark.ScanMetrics(spark)
    frame = pqsift.spark.read(spark, str(hive_table), filter=where, metrics=metrics)
    assert frame.schema == native.schema
    assert _rows(frame) == _rows(native)
    assert metrics.value["files_pruned_partition"] > 0
    source = spark.read.format("pqsift").load(str(hive_table)).filter(where)
    assert source.schema == native.schema
    assert _rows(source) == _rows(native)


def test_explain_names_the_partition_value_that_decided(hive_table: Path) -> None:
    scan = pqsift.scan(hive_table, filter="kind = 'a/b'")
    plan = scan.plan()
    skipped = [f for f in plan.files if f.skipped]
    assert skipped and all(not f.row_groups for f in skipped)
    assert "skipped by partition values (day=2026-01-01, kind=c=d)" in scan.explain()


def test_pruned_partitions_are_never_opened(hive_table: Path, tmp_path: Path) -> None:
    """A file that is not Parquet at all, in a partition the filter rules out: the scan
    never reads it, so it cannot fail on it; without the filter it fails naming it."""
    root = tmp_path / "t"
    shutil.copytree(hive_table, root)
    bad = root / "day=2026-01-09" / "kind=zzz" / "part-bad.parquet"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not parquet at all")
    table = pqsift.scan(root, filter="day < DATE '2026-01-05'").to_table()
    assert table.num_rows == 300
    with pytest.raises(pqsift.CorruptFileError, match=r"part-bad\.parquet"):
        pqsift.scan(root).to_table()


def test_only_partition_columns_read_no_column_chunk(spark: Any, hive_table: Path) -> None:
    scan = pqsift.scan(hive_table, columns=["kind", "day"], filter="kind IS NOT NULL")
    table = scan.to_table()
    native = _native(spark, hive_table, "kind IS NOT NULL").select("kind", "day")
    assert _table_rows(table) == _rows(native)
    assert scan.metrics["rows_decoded"] == 0


def _write(root: Path, relative: str, table: pa.Table) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


INFERENCE_CASES = [
    ["1", "02"],
    ["1", "3000000000"],
    ["1", "99999999999999999999"],
    ["1", "1.5"],
    ["3000000000", "1.5"],
    ["1e5", "2"],
    ["NaN", "-0.0", "Infinity"],
    ["2026-01-01", "2026-01-01 10%3A00%3A00"],
    ["2026-03-08 02%3A30%3A00", "2026-11-01 01%3A30%3A00.5"],
    ["2020-02-30", "2020-1-1"],
    ["__HIVE_DEFAULT_PARTITION__", "7"],
    ["__HIVE_DEFAULT_PARTITION__"],
    ["true", "a%2Fb", "c%3Dd"],
]


@pytest.mark.parametrize("values", INFERENCE_CASES, ids=lambda v: ",".join(v))
@pytest.mark.parametrize("inference", [True, False])
def test_partition_type_inference_matches_spark(spark: Any, tmp_path: Path, values: list[str], inference: bool) -> None:
    root = tmp_path / "t"
    for i, value in enumerate(values):
        _write(root, f"p={value}/part-{i}.parquet", pa.table({"x": pa.array([i], pa.int64())}))
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", str(inference).lower())
    try:
        native = _native(spark, root)
        native_rows = _rows(native)
        native_schema = native.schema
    finally:
        spark.conf.unset("spark.sql.sources.partitionColumnTypeInference.enabled")
    options = {"session_time_zone": "America/New_York", "partition_type_inference": inference}
    assert pqsift.spark.schema(root, **options) == native_schema
    table = pqsift.scan(root, **options).to_table()

    def same(a: Any, b: Any) -> bool:
        if isinstance(a, float) and isinstance(b, float):
            return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
        return bool(a == b)

    ours = _table_rows(table)
    assert len(ours) == len(native_rows)
    for mine, theirs in zip(ours, native_rows, strict=True):
        assert all(same(a, b) for a, b in zip(mine, theirs, strict=True)), (mine, theirs)


def test_base_path_and_a_partition_column_inside_the_files(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "t"
    # The files also hold `p` (with other values): the directory's value wins, at the
    # file schema's position, with the partition's type.
    for p in (1, 2):
        _write(root, f"p={p}/q=x/f.parquet", pa.table({"p": pa.array(["inside", None]), "x": [p, p * 10]}))
    native = _native(spark, root)
    table = pqsift.scan(root).to_table()
    assert table.column_names == native.columns == ["p", "x", "q"]
    assert _table_rows(table) == _rows(native)
    assert pqsift.spark.schema(root) == native.schema
    # Reading one partition directory: without base_path its column is gone, as in Spark.
    one = root / "p=2"
    assert pqsift.scan(one).to_table().column_names == _native(spark, one).columns
    with_base = pqsift.scan(one, base_path=root).to_table()
    native_base = _native(spark, one, basePath=str(root))
    assert with_base.column_names == native_base.columns
    assert _table_rows(with_base) == _rows(native_base)
    filtered = pqsift.scan(root, filter="p = 2 AND x > 5")
    assert _table_rows(filtered.to_table()) == _rows(_native(spark, root, "p = 2 AND x > 5"))
    assert filtered.metrics["files_pruned_partition"] == 1


def test_ignored_names_and_conflicting_directories(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _write(root, "p=1/f.parquet", pa.table({"x": [1]}))
    _write(root, "_col=2/f.parquet", pa.table({"x": [2]}))  # holds '=': a partition directory
    (root / "_SUCCESS").write_text("")
    (root / "p=1" / ".f.parquet.crc").write_text("junk")
    (root / "p=1" / "f.parquet._COPYING_").write_text("junk")
    (root / "_temporary").mkdir()
    (root / "_temporary" / "g.parquet").write_text("junk")
    with pytest.raises(pqsift.TableError, match="conflicting partition directories"):
        pqsift.scan(root)
    shutil.rmtree(root / "_col=2")
    assert pqsift.scan(root).to_table().to_pylist() == [{"x": 1, "p": 1}]
    assert pqsift.scan(root, partitioning=False).to_table().column_names == ["x"]
