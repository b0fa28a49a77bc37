"""Iceberg tables through Spark: ``pqsift.spark.read`` (the driver plans, tasks read their
files) and the ``"pqsift"`` data source, on the shared Spark-written tables — equality
deletes, identity partition values the files leave out, a name mapping, a uuid column — and on pyiceberg
tables with several snapshots (``snapshot-id``, ``as-of-timestamp``). Each must give the
rows ``pqsift.scan`` gives, which tests/test_iceberg.py checks against the expected rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

import pqsift
import pqsift.spark

SHARED = Path(__file__).resolve().parents[2] / "shared" / "iceberg-testing" / "data" / "persistent"

TABLES = [
    ("equality_deletes/warehouse/mydb/mytable", None),
    ("equality_deletes/warehouse/mydb/mytable_partitioned", "id >= 2"),
    ("hive_partitioned_table", "event_type = 'view'"),
    ("partition_integer", None),
    ("iceberg_v1_repro/repro/merch_v1", None),
    # A uuid read as its text, as Spark reads it, and filtered on it.
    ("uuid", "uuid = '1571effb-facd-42a3-90e9-0af522e9b6c2'"),
]


def rows(values: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((tuple(v) for v in values), key=repr)


def expected(root: str, condition: str | None, **options: Any) -> list[tuple[Any, ...]]:
    table = pqsift.scan(root, filter=condition, **options).to_table()
    return rows([tuple(r.values()) for r in table.to_pylist()])


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/iceberg-testing is not there")
@pytest.mark.parametrize(
    ("name", "condition"), TABLES, ids=[t[0].split("/")[0] + ("" if t[1] is None else "+filter") for t in TABLES]
)
def test_spark_read_and_the_data_source_read_iceberg(spark: Any, name: str, condition: str | None) -> None:
    root = str(SHARED / name)
    want = expected(root, condition)
    assert want, "a table with rows to compare"
    assert rows(pqsift.spark.read(spark, root, filter=condition).collect()) == want
    # Lazy planning (the default past 1,000 files): each task plans its files from what
    # the manifests say of them — identity partition fills, equality-delete predicates.
    assert rows(pqsift.spark.read(spark, root, filter=condition, lazy=True).collect()) == want
    frame = spark.read.format("pqsift").load(root)
    if condition is not None:
        frame = frame.filter(condition)
    assert rows(frame.collect()) == want


def test_the_data_source_travels_in_time(spark: Any, tmp_path: Path) -> None:
    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse")
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema=Schema(NestedField(1, "id", LongType()), NestedField(2, "s", StringType())))
    table.append(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}))
    first = table.current_snapshot()
    assert first is not None
    table.append(pa.table({"id": pa.array([3], pa.int64()), "s": ["c"]}))
    root = str(table.location()).removeprefix("file://")
    assert len(spark.read.format("pqsift").load(root).collect()) == 3
    by_id = spark.read.format("pqsift").option("snapshot-id", first.snapshot_id).load(root)
    assert rows(by_id.collect()) == [(1, "a"), (2, "b")]
    at_time = spark.read.format("pqsift").option("as-of-timestamp", first.timestamp_ms).load(root)
    assert rows(at_time.collect()) == [(1, "a"), (2, "b")]
    read = pqsift.spark.read(spark, root, snapshot_id=first.snapshot_id)
    assert rows(read.collect()) == [(1, "a"), (2, "b")]


def test_spark_tasks_leave_out_position_deletes(spark: Any, tmp_path: Path) -> None:
    from test_iceberg_pyiceberg import add_delete_snapshot, catalog

    table = catalog(tmp_path).create_table("db.t", schema=Schema(NestedField(1, "id", LongType())))
    table.append(pa.table({"id": pa.array(range(100), pa.int64())}))
    (path,) = [task.file.file_path for task in table.scan().plan_files()]
    add_delete_snapshot(table, {path: [0, 50, 99]}, vectors=False)
    root = str(table.location()).removeprefix("file://")
    want = [(i,) for i in range(100) if i not in (0, 50, 99)]
    assert rows(pqsift.spark.read(spark, root).collect()) == rows(want)
    assert rows(spark.read.format("pqsift").load(root).filter("id >= 40").collect()) == rows([r for r in want if r[0] >= 40])


@pytest.mark.parametrize("lazy", [False, True], ids=["planned-on-the-driver", "lazy"])
def test_position_deletes_apply_in_tasks(spark: Any, tmp_path: Path, lazy: bool) -> None:
    from test_iceberg_pyiceberg import add_delete_snapshot

    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse")
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema=Schema(NestedField(1, "id", LongType()), NestedField(2, "s", StringType())))
    arrow_schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    for start in (0, 100):
        table.append(pa.table({"id": range(start, start + 100), "s": ["x"] * 100}, schema=arrow_schema))
    files = sorted(task.file.file_path for task in table.scan().plan_files())
    deleted = {files[0]: [0, 5, 99], files[1]: list(range(0, 100, 2))}
    add_delete_snapshot(table, deleted, vectors=lazy)
    root = str(table.location()).removeprefix("file://")
    want = expected(root, "id % 3 = 0")
    # The oracle: the files' rows less the deleted positions.
    kept = [
        (v, "x")
        for f in files
        for i, v in enumerate(pq.read_table(f.removeprefix("file://")).column("id").to_pylist())
        if i not in deleted[f] and v % 3 == 0
    ]
    assert want == rows(kept) and len(kept) < 67
    got = pqsift.spark.read(spark, root, ["id", "s"], filter="id % 3 = 0", lazy=lazy).collect()
    assert rows(got) == want


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/iceberg-testing is not there")
@pytest.mark.parametrize(
    ("name", "condition"), TABLES, ids=[t[0].split("/")[0] + ("" if t[1] is None else "+filter") for t in TABLES]
)
def test_tasks_read_the_manifests_of_a_table_with_many(
    spark: Any, monkeypatch: pytest.MonkeyPatch, name: str, condition: str | None
) -> None:
    """Distributed planning: past MANIFESTS_READ_BY_TASKS data manifests the driver reads
    the manifest list (and one manifest, for the files' mean size) and each task a stripe
    of some manifests' files (here one file a task): deletes, fills and the filter apply
    in the tasks, and every row comes once."""
    from pqsift.spark import planning

    root = str(SHARED / name)
    want = expected(root, condition)
    monkeypatch.setattr(planning, "MANIFESTS_READ_BY_TASKS", 0)
    # A task byte target below a file's size: one file a task.
    plan = planning.plan_tasks(root, None, condition, target_task_bytes=1)
    assert "distributed planning" in plan.explain and "of at most 1 file(s)" in plan.explain
    # The driver read one manifest, for the data files' mean size.
    assert plan.metrics["iceberg_manifests_read"] == 1 and plan.metrics["iceberg_manifests_deferred"] > 0
    metrics = pqsift.spark.ScanMetrics(spark)
    got = pqsift.spark.read(spark, root, filter=condition, metrics=metrics, target_task_bytes=1, driver_read_bytes=0)
    assert rows(got.collect()) == want
    assert metrics.tasks == len(plan.tasks)
    frame = spark.read.format("pqsift").load(root)
    if condition is not None:
        frame = frame.filter(condition)
    assert rows(frame.collect()) == want
    # lazy=False: the driver reads every manifest, as before.
    assert "distributed planning" not in planning.plan_tasks(root, None, condition, lazy=False).explain
