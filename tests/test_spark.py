"""pqsift inside PySpark: the mapInArrow path (pqsift.spark.read / reader) and the Python
data source ("pqsift") return the rows Spark's native reader returns, with its schema.

The oracle is ``spark.read.parquet`` with ``spark.sql.parquet.filterPushdown=false``:
with pushdown on, Spark's native reader drops NaN rows by statistics (FACTS.md), which is
wrong; without it, Spark filters every row itself.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import os
import random
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

pyspark = pytest.importorskip("pyspark")

import pqsift  # noqa: E402
import pqsift.spark  # noqa: E402
from pqsift.spark.datasource import filter_to_sql  # noqa: E402

ROWS = 3000


def _table(seed: int, rows: int = ROWS) -> pa.Table:
    rng = random.Random(seed)

    def maybe(value: Any, p: float = 0.1) -> Any:
        return None if rng.random() < p else value

    floats = [math.nan, -0.0, 0.0, 1.5, -2.25, 1e300, float("inf")]
    kinds = ["purchase", "refund", "view", "Ärger", "it's", ""]
    base = datetime.datetime(2026, 3, 8, tzinfo=datetime.UTC)
    return pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "small": pa.array([maybe(rng.randint(-100, 100)) for _ in range(rows)], pa.int32()),
            "tiny": pa.array([maybe(rng.randint(-5, 5)) for _ in range(rows)], pa.int8()),
            "x": pa.array(
                [maybe(rng.choice(floats) if rng.random() < 0.3 else rng.uniform(-1e3, 1e3)) for _ in range(rows)],
                pa.float64(),
            ),
            "kind": pa.array([maybe(rng.choice(kinds)) for _ in range(rows)], pa.string()),
            "day": pa.array(
                [maybe(datetime.date(2026, 1, 1) + datetime.timedelta(days=i // 100)) for i in range(rows)], pa.date32()
            ),
            "ts": pa.array(
                [maybe(base + datetime.timedelta(minutes=7 * i)) for i in range(rows)], pa.timestamp("us", tz="UTC")
            ),
            "local": pa.array(
                [maybe(datetime.datetime(2026, 11, 1) + datetime.timedelta(minutes=13 * i)) for i in range(rows)],
                pa.timestamp("ms"),
            ),
            "amount": pa.array(
                [maybe(decimal.Decimal(rng.randint(-99999, 99999)) / 100) for _ in range(rows)], pa.decimal128(9, 2)
            ),
            "note": pa.array([maybe("note " + "x" * rng.randint(0, 40)) for _ in range(rows)], pa.string()),
            "attrs": pa.array(
                [maybe({"a": rng.randint(0, 9), "b": maybe(rng.choice(kinds))}) for _ in range(rows)],
                pa.struct([("a", pa.int64()), ("b", pa.string())]),
            ),
            "tags": pa.array(
                [maybe([rng.randint(0, 3) for _ in range(rng.randint(0, 3))]) for _ in range(rows)],
                pa.list_(pa.int32()),
            ),
        }
    )


@pytest.fixture(scope="session")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three files, several row groups each, page index on, small pages, some dictionary
    encoded: what the pruning stages and the reader need to do real work."""
    root = tmp_path_factory.mktemp("spark_dataset")
    for part in range(3):
        pq.write_table(
            _table(part),
            root / f"part-{part}.parquet",
            row_group_size=700,
            max_rows_per_page=200,
            write_page_index=True,
            use_dictionary=["kind", "note"],
        )
    (root / "_SUCCESS").write_text("")
    return root


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows sorted by id, NaN made comparable, timestamps as UTC instants."""

    def norm(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        if isinstance(value, datetime.datetime) and value.tzinfo is not None:
            return value.astimezone(datetime.UTC)
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value

    rows = [{k: norm(v) for k, v in row.items()} for row in table.to_pylist()]
    return sorted(rows, key=lambda r: (r.get("id") is None, r.get("id")))


def _native(spark: Any, path: Path, filter_text: str | None, columns: list[str] | None) -> pa.Table:
    df = spark.read.parquet(str(path))
    if filter_text:
        df = df.filter(filter_text)
    if columns:
        df = df.select(*columns)
    return df.toArrow()


FILTERS = [
    None,
    "id BETWEEN 1000 AND 1100",
    "x > 100",  # NaN is greater than every number: NaN rows match
    "x = CAST('NaN' AS DOUBLE) OR x = -0.0",
    "kind = 'refund' AND small > 50",
    "kind IN ('view', 'it''s') OR kind IS NULL",
    "NOT (kind LIKE 'p%') AND tiny <= 0",
    "day >= DATE '2026-01-10' AND day < DATE '2026-01-12'",
    "ts >= TIMESTAMP '2026-03-08 12:00:00' AND ts < TIMESTAMP '2026-03-09 03:00:00'",
    "local > TIMESTAMP_NTZ '2026-11-10 00:00:00'",
    "amount > 900.5 OR amount < -990",
    "attrs.a = 3 AND attrs.b <=> 'view'",
    "small + 1 > 99 OR note IS NULL",
]


#: ``driver_read_bytes`` that makes :func:`pqsift.spark.read` read on the driver / in tasks.
READ_BY = {"driver": 1 << 40, "tasks": 0}


@pytest.mark.parametrize("read_by", list(READ_BY))
@pytest.mark.parametrize("filter_text", FILTERS)
def test_read_returns_what_spark_native_returns(
    spark: Any, dataset: Path, filter_text: str | None, read_by: str
) -> None:
    columns = ["id", "x", "kind", "ts", "local", "amount", "attrs", "tags"]
    metrics = pqsift.spark.ScanMetrics(spark)
    df = pqsift.spark.read(spark, dataset, columns, filter_text, driver_read_bytes=READ_BY[read_by], metrics=metrics)
    assert metrics.read_on_driver == (read_by == "driver")
    expected = _native(spark, dataset, filter_text, columns)
    got = df.toArrow()
    assert df.schema == spark.read.parquet(str(dataset)).select(*columns).schema
    assert _rows(got) == _rows(expected)


@pytest.fixture(scope="module")
def spark_written_int96(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Timestamps as Spark writes them by default: INT96, no Arrow schema; every 10 minutes
    over New York's spring daylight-saving change, some null."""
    import pyarrow.parquet as pq

    path = tmp_path_factory.mktemp("spark_int96") / "t"
    start = 1_772_841_600  # 2026-03-07 00:00 UTC
    rows = spark.range(0, 432).selectExpr("id", f"IF(id % 37 = 5, NULL, timestamp_seconds({start} + id * 600)) AS ts")
    rows.selectExpr("id", "ts", "named_struct('at', ts) AS s").coalesce(1).write.parquet(str(path))
    (file,) = path.glob("*.parquet")
    assert [pq.ParquetFile(file).schema.column(i).physical_type for i in (1, 2)] == ["INT96", "INT96"]
    return path


INT96_FILTERS = [
    "ts >= TIMESTAMP '2026-03-08 01:30:00' AND ts < TIMESTAMP '2026-03-08 03:30:00'",  # 02:00-03:00 never happened
    "ts IN (TIMESTAMP '2026-03-08 12:00:00', TIMESTAMP '2026-03-07 23:50:00')",
    "ts < DATE '2026-03-08' OR ts IS NULL",
    "CAST(ts AS DATE) = DATE '2026-03-08'",
    "s.at >= TIMESTAMP '2026-03-08 01:30:00' AND s.at < TIMESTAMP '2026-03-08 03:30:00'",
]


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata"])
@pytest.mark.parametrize("read_by", list(READ_BY))
def test_spark_written_int96_filtered_as_spark_filters_it(
    spark: Any, spark_written_int96: Path, zone: str, read_by: str
) -> None:
    """Spark reads INT96 as TIMESTAMP (instants): a literal is the session zone's instant."""
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        for where in INT96_FILTERS:
            expected = _native(spark, spark_written_int96, where, ["id", "ts", "s"])
            assert 0 < expected.num_rows < 432, where
            df = pqsift.spark.read(
                spark, spark_written_int96, ["id", "ts", "s"], where, driver_read_bytes=READ_BY[read_by]
            )
            assert df.schema == spark.read.parquet(str(spark_written_int96)).schema  # s.at a timestamp, as ts
            assert _rows(df.toArrow()) == _rows(expected), (where, zone)
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


def test_schema_is_spark_native_schema(spark: Any, dataset: Path) -> None:
    assert pqsift.spark.schema(dataset) == spark.read.parquet(str(dataset)).schema


@pytest.mark.parametrize(
    "where",
    [
        "id >= 2990",
        "x > 100",
        "x != 1.5 AND kind <=> 'view'",
        "kind IN ('refund', 'Ärger') AND NOT (small < 0)",
        "kind LIKE 'pur%' AND note LIKE '%xx%'",
        "kind LIKE '%it''s'",
        "kind IS NULL OR small IS NULL",
        "ts > TIMESTAMP '2026-03-10 00:00:00' AND day <= DATE '2026-01-20'",
        "local <= TIMESTAMP_NTZ '2026-11-02 00:00:00'",
        "amount = 12.34 OR amount >= 999",
        "attrs.a > 7",
        "x = double('NaN')",
        "size(tags) > 2",  # not pushed: Spark keeps it
    ],
)
def test_data_source_returns_what_spark_native_returns(spark: Any, dataset: Path, where: str) -> None:
    columns = ["id", "x", "kind", "small", "note", "ts", "day", "local", "amount", "attrs", "tags"]
    df = spark.read.format("pqsift").option("columns", ",".join(columns)).load(str(dataset)).filter(where)
    expected = spark.read.parquet(str(dataset)).select(*columns).filter(where).toArrow()
    assert _rows(df.toArrow()) == _rows(expected)


def test_data_source_user_schema_and_options(spark: Any, dataset: Path) -> None:
    df = (
        spark.read.format("pqsift")
        .schema("id bigint, kind string, small bigint")  # small is int in the files: cast
        .option("filter", "small > 90")
        .option("pushdownFilters", "false")
        .load(str(dataset))
    )
    expected = (
        spark.read.parquet(str(dataset)).filter("small > 90").selectExpr("id", "kind", "CAST(small AS BIGINT) AS small")
    )
    assert _rows(df.toArrow()) == _rows(expected.toArrow())
    with pytest.raises(Exception, match="unknown option"):
        spark.read.format("pqsift").option("no_such_option", "1").load(str(dataset)).collect()


def test_data_source_reads_its_footers_for_the_schema_once(monkeypatch: pytest.MonkeyPatch, dataset: Path) -> None:
    """Spark asks a source for its schema in one worker, pickles the source and hands it to
    the workers that plan the read: the schema found there travels with it, so ``reader``
    tells a schema given by ``.schema(...)`` from the source's own without reading the
    footers again; a source whose schema was never asked for (the user gave one) still
    compares against the files'."""
    import cloudpickle
    from pyspark.sql.types import StructType

    import pqsift.spark
    from pqsift.spark.datasource import data_source_class

    source = data_source_class()(options={"path": str(dataset)})
    own = source.schema()
    travelled = cloudpickle.loads(cloudpickle.dumps(source))
    asked: list[str] = []
    read_schema = pqsift.spark.schema
    monkeypatch.setattr(pqsift.spark, "schema", lambda *a, **k: asked.append("schema") or read_schema(*a, **k))
    assert travelled.reader(own).cast_to is None  # the source's own schema: no user schema
    given = StructType(own.fields[:1])
    assert travelled.reader(given).cast_to is not None  # a schema of the user's
    assert asked == []
    fresh = data_source_class()(options={"path": str(dataset)})
    assert fresh.reader(given).cast_to is not None
    assert asked == ["schema"]


def test_data_source_reads_nothing_when_every_row_group_is_pruned(spark: Any, dataset: Path) -> None:
    # Spark hands `read` a partition of None when `partitions` planned none.
    assert pqsift.spark.plan_tasks(dataset, ["id"], "id < 0").tasks == []
    source = spark.read.format("pqsift").option("columns", "id,kind")
    by_option = source.option("filter", "id < 0").load(str(dataset))
    by_spark = source.load(str(dataset)).filter("id < 0")
    for frame in (by_option, by_spark):
        assert frame.toArrow().num_rows == 0
        assert frame.columns == ["id", "kind"]


def test_data_source_spreads_a_scan_over_the_cluster_cores(spark: Any, tmp_path: Path) -> None:
    # More than two smallest tasks of bytes to read, in one file: local[2]'s two cores
    # (taken at registration) get a task each, as `pqsift.spark.read` spreads it.
    draw = random.Random(3)
    values = pa.array([draw.getrandbits(63) for _ in range(1_400_000)], pa.int64())
    pq.write_table(pa.table({"id": values}), tmp_path / "wide.parquet", row_group_size=100_000, compression="none")
    assert (tmp_path / "wide.parquet").stat().st_size > 2 * pqsift.spark.planning.MIN_TASK_BYTES
    source = spark.read.format("pqsift").option("columns", "id")
    frame = source.load(str(tmp_path))
    assert frame.rdd.getNumPartitions() == 2
    counts = frame.rdd.glom().map(len).collect()
    assert all(n > 0 for n in counts) and sum(counts) == 1_400_000
    assert source.option("parallelism", 1).load(str(tmp_path)).rdd.getNumPartitions() == 1
    with pytest.raises(Exception, match="option 'parallelism' must be a positive integer, got '0'"):
        source.option("parallelism", 0).load(str(tmp_path)).collect()


def test_pushed_filters_translate_exactly_or_stay_with_spark() -> None:
    from pyspark.sql.datasource import EqualTo, GreaterThan, In, IsNull, Not, StringContains, StringEndsWith

    utc = datetime.UTC
    assert filter_to_sql(EqualTo(("a", "b"), 5)) == "`a`.`b` = 5"
    assert (
        filter_to_sql(GreaterThan(("ts",), datetime.datetime(2026, 1, 1, tzinfo=utc)))
        == "`ts` > TIMESTAMP '2026-01-01 00:00:00+00:00'"
    )
    assert (
        filter_to_sql(GreaterThan(("ntz",), datetime.datetime(2026, 1, 1)))
        == "`ntz` > CAST('2026-01-01 00:00:00' AS TIMESTAMP_NTZ)"
    )
    assert filter_to_sql(Not(EqualTo(("x",), math.nan))) == "NOT (`x` = CAST('NaN' AS DOUBLE))"
    assert filter_to_sql(In(("k",), ["a'b", None])) == "`k` IN ('a\\'b', NULL)"
    assert filter_to_sql(IsNull(("weird`name",))) == "`weird``name` IS NULL"
    # String tests are pqsift's functions: exact whatever the text holds (no LIKE wildcards).
    assert filter_to_sql(StringEndsWith(("k",), "_x")) == "endswith(`k`, '_x')"
    assert filter_to_sql(StringContains(("k",), "ab")) == "contains(`k`, 'ab')"
    assert filter_to_sql(Not(StringEndsWith(("k",), "%"))) == "NOT (endswith(`k`, '%'))"
    # Every translation parses.
    for text in ("`a`.`b` = 5", "`ntz` > CAST('2026-01-01 00:00:00' AS TIMESTAMP_NTZ)", "NOT (endswith(`k`, '%'))"):
        pqsift.parse_filter(text)


def test_tasks_are_balanced_and_one_per_partition(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One large file (many row groups) and several small ones.
    pq.write_table(_table(7, 20000), tmp_path / "big.parquet", row_group_size=1000)
    for i in range(5):
        pq.write_table(_table(10 + i, 300), tmp_path / f"small-{i}.parquet", row_group_size=300)
    plan = pqsift.spark.plan_tasks(tmp_path, target_task_bytes=4 << 20)
    sizes = {(f.path, rg.index): rg.compressed_bytes for f in pqsift.scan(tmp_path).plan().files for rg in f.row_groups}
    target = min(4 << 20, max(pqsift.spark.planning.MIN_TASK_BYTES, -(-sum(sizes.values()) // 1)))
    covered = [(piece.path, rg) for task in plan.tasks for piece in task.pieces for rg in piece.row_groups]
    assert sorted(covered) == sorted(sizes)  # every row group exactly once
    small_plan = pqsift.spark.plan_tasks(tmp_path, target_task_bytes=150_000)
    assert len(small_plan.tasks) > 3
    total, largest = sum(sizes.values()), max(sizes.values())
    assert len(small_plan.tasks) == -(-total // 150_000)  # as many as the target asks, no remainder task
    for task in small_plan.tasks:
        # Equal shares, give or take the row groups at each end (in by their middle byte);
        # every column read, so each row group's bytes to read are all its bytes.
        assert task.read_bytes == task.compressed_bytes
        assert abs(task.compressed_bytes - total / len(small_plan.tasks)) <= largest
    assert any(len(task.pieces) > 1 for task in small_plan.tasks)  # small files share a task
    assert any(len(p.row_groups) < 20 for t in small_plan.tasks for p in t.pieces if p.path.endswith("big.parquet"))
    assert target > 0
    # Spread over two cores: two tasks of about half each (tasks this small allowed).
    monkeypatch.setattr(pqsift.spark.planning, "MIN_TASK_BYTES", 1)
    halves = pqsift.spark.plan_tasks(tmp_path, target_task_bytes=1 << 30, parallelism=2)
    assert len(halves.tasks) == 2 and all(abs(t.compressed_bytes - total / 2) <= largest for t in halves.tasks)
    # One narrow column: tasks cut by the bytes it reads, not by the row groups' whole size.
    narrow = pqsift.spark.plan_tasks(tmp_path, ["id"], target_task_bytes=150_000)
    read = {
        (f.path, rg.index): rg.read_bytes for f in pqsift.scan(tmp_path, ["id"]).plan().files for rg in f.row_groups
    }
    assert sum(read.values()) < total / 3
    assert len(narrow.tasks) == -(-sum(read.values()) // 150_000) < len(small_plan.tasks)
    assert sorted((p.path, rg) for t in narrow.tasks for p in t.pieces for rg in p.row_groups) == sorted(sizes)
    for task in narrow.tasks:
        assert task.read_bytes == sum(read[(p.path, rg)] for p in task.pieces for rg in p.row_groups)
        assert abs(task.read_bytes - sum(read.values()) / len(narrow.tasks)) <= max(read.values())
    df = pqsift.spark.read(spark, tmp_path, ["id"], target_task_bytes=150_000, driver_read_bytes=0)
    per_partition = df.rdd.glom().map(len).collect()
    # Less to read than one target: spread over local[2]'s two cores.
    assert (
        len(per_partition)
        == len(pqsift.spark.plan_tasks(tmp_path, ["id"], target_task_bytes=150_000, parallelism=2).tasks)
        == 2
    )
    assert all(n > 0 for n in per_partition)
    assert sum(per_partition) == 20000 + 5 * 300


def assert_tasks_read_ids_100_to_199(value: dict[str, Any], rows: int) -> None:
    """The counts of a read of ``id BETWEEN 100 AND 199`` of ``dataset`` in one task a file
    (``target_task_bytes=1``), ``rows`` the rows the action saw."""
    assert rows == 3 * 100
    assert value["rows_out"] == rows
    assert value["files_total"] == 3
    assert value["row_groups_pruned_statistics"] == 3 * 4  # 5 row groups a file, one kept
    assert value["pages_pruned"] > 0
    assert value["tasks"] == 3
    assert value["bytes_read"] > 0


def test_metrics_are_summed_over_tasks(spark: Any, dataset: Path) -> None:
    metrics = pqsift.spark.ScanMetrics(spark)
    df = pqsift.spark.read(
        spark,
        dataset,
        ["id", "note"],
        "id BETWEEN 100 AND 199",
        metrics=metrics,
        target_task_bytes=1,
        driver_read_bytes=0,
    )
    rows = df.count()  # first: the reading counts come with the job
    assert_tasks_read_ids_100_to_199(metrics.value, rows)
    assert not metrics.read_on_driver


def test_data_source_metrics_travel_in_band(spark: Any, dataset: Path) -> None:
    where = "id BETWEEN 100 AND 199"
    source = (
        spark.read.format("pqsift").option("columns", "id,note").option("targetTaskBytes", 1).option("metrics", True)
    )
    metrics = pqsift.spark.ScanMetrics(spark)
    df = metrics.observe(source.option("filter", where).load(str(dataset)))
    assert df.columns == ["id", "note"]  # the counts column does not show
    assert metrics.value["rows_out"] == 0 and metrics.value["tasks"] == 0  # no action yet: nothing, no wait
    rows = df.count()
    value = metrics.value
    assert_tasks_read_ids_100_to_199(value, rows)  # planning counts too: they come with the first task
    assert value["row_groups_read"] == 3 and value["files_skipped"] == []
    assert metrics.explain  # the driver's explain, from the planning worker
    # The counts pqsift.spark.read gives for the same scan.
    read = pqsift.spark.ScanMetrics(spark)
    assert (
        pqsift.spark.read(
            spark, dataset, ["id", "note"], where, metrics=read, target_task_bytes=1, driver_read_bytes=0
        ).count()
        == rows
    )

    def comparable(counts: dict[str, Any]) -> dict[str, Any]:
        # Cache counts depend on what a worker read before; times differ run to run.
        return {name: count for name, count in counts.items() if not name.startswith(("cache_", "time_"))}

    assert comparable(value) == comparable(read.value)
    # A filter Spark pushes and pqsift takes whole leaves the count rows alone.
    pushed = pqsift.spark.ScanMetrics(spark)
    assert pushed.observe(source.load(str(dataset)).filter(where)).count() == rows
    assert comparable(pushed.value) == comparable(value)
    # Every file pruned: no row read, the planning counts still come (with an empty task).
    pruned = pqsift.spark.ScanMetrics(spark)
    assert pruned.observe(source.option("filter", "id < 0").load(str(dataset))).count() == 0
    assert pruned.value["files_total"] == 3 and pruned.value["tasks"] == 0 and pruned.value["rows_out"] == 0
    with pytest.raises(ValueError, match="option\\('metrics', True\\)"):
        metrics.observe(spark.read.format("pqsift").load(str(dataset)))
    with pytest.raises(Exception, match="does not go with a schema"):
        spark.read.format("pqsift").schema("id bigint").option("metrics", True).load(str(dataset)).collect()


def _physical_plan(df: Any) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def test_frames_are_made_without_asking_the_jvm_their_schema(
    spark: Any, dataset: Path, py4j_commands: list[str]
) -> None:
    """The tasks' input (``spark.range``), which ``mapInArrow`` asks for its columns, and a
    result read on the driver are told their schemas: no Py4J call asks the JVM for one."""
    columns, where = ["id", "note"], "id < 5"
    by_tasks = pqsift.spark.read(spark, dataset, columns, where, driver_read_bytes=0)
    on_driver = pqsift.spark.read(spark, dataset, columns, where)
    assert on_driver.schema.names == columns
    methods = [command.split("\n")[2] for command in py4j_commands if command.count("\n") >= 2]  # "c", object, method
    assert "schema" not in methods
    assert "MapInArrow" in _physical_plan(by_tasks) and "MapInArrow" not in _physical_plan(on_driver)
    assert by_tasks.schema == on_driver.schema
    assert _rows(by_tasks.toArrow()) == _rows(on_driver.toArrow()) == _rows(_native(spark, dataset, where, columns))


def test_small_result_is_read_on_the_driver(spark: Any, dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan leaving little to read: no Python task, the rows handed over as Arrow
    batches, the counts taken on the driver; a result larger than the driver takes goes
    back to the tasks; the session's local-relation setting is left as it was."""
    from pqsift.spark import driver_read

    where, columns = "id BETWEEN 100 AND 199", ["id", "note"]
    threshold = "spark.sql.execution.arrow.localRelationThreshold"
    before = spark.conf.get(threshold, None)
    plan = pqsift.spark.plan_tasks(dataset, columns, where)
    assert plan.selected_bytes is not None and 0 < plan.selected_bytes <= driver_read.DRIVER_READ_BYTES
    metrics = pqsift.spark.ScanMetrics(spark)
    records = "spark.sql.execution.arrow.maxRecordsPerBatch"
    spark.conf.set(records, "100")  # a partition of each 100 rows, but for this read
    try:
        df = pqsift.spark.read(spark, dataset, columns, where, metrics=metrics)
        assert spark.conf.get(records) == "100"
    finally:
        spark.conf.unset(records)
    assert spark.conf.get(threshold, None) == before
    assert df.rdd.getNumPartitions() == 1  # 300 rows: one task, not one per Arrow batch
    assert "MapInArrow" not in _physical_plan(df)
    assert _rows(df.toArrow()) == _rows(_native(spark, dataset, where, columns))
    value = metrics.value
    assert metrics.read_on_driver and value["tasks"] == 0
    assert value["rows_out"] == 300 and value["row_groups_read"] == 3 and value["bytes_read"] > 0
    # Above the plan's bound: tasks.
    small = pqsift.spark.read(spark, dataset, columns, where, driver_read_bytes=plan.selected_bytes - 1)
    assert "MapInArrow" in _physical_plan(small)
    # A result larger than the driver takes: the read is abandoned, the tasks read.
    monkeypatch.setattr(driver_read, "DRIVER_RESULT_BYTES", 1000)
    metrics = pqsift.spark.ScanMetrics(spark)
    df = pqsift.spark.read(spark, dataset, columns, where, metrics=metrics)
    assert "MapInArrow" in _physical_plan(df)
    assert df.count() == 300
    assert not metrics.read_on_driver and metrics.value["tasks"] > 0
    assert metrics.value["rows_out"] == 300 + metrics._driver_reading["rows_out"]  # the abandoned read counts too


def test_a_driver_read_of_a_large_row_group_is_abandoned_after_its_first_rows(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spark writes row groups of 128 MiB: a read on the driver on course to pass its bound
    stops after the first small windows of the first row group, not after the row group."""
    from pqsift.spark import driver_read

    rows = 1 << 20
    table = pa.table({"id": pa.array(range(rows), pa.int64()), "amount": pa.array(range(rows), pa.float64())})
    pq.write_table(table, tmp_path / "one_row_group.parquet", row_group_size=rows)
    monkeypatch.setattr(driver_read, "DRIVER_RESULT_BYTES", table.nbytes // 4)
    metrics = pqsift.spark.ScanMetrics(spark)
    # A filter no page statistics can prove true (`id >= 0` they can: see below).
    df = pqsift.spark.read(spark, tmp_path, ["id", "amount"], "id % 7 >= 0", metrics=metrics)
    assert "MapInArrow" in _physical_plan(df) and not metrics.read_on_driver
    assert df.count() == rows
    assert 0 < metrics._driver_reading["rows_out"] <= rows // 16, metrics._driver_reading


def test_a_filtered_read_the_page_statistics_show_too_large_is_not_begun_on_the_driver(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows in pages whose statistics prove the filter true (a range on a sorted column)
    are output: when they alone are estimated past the driver's bound, the tasks read from
    the start, with nothing read on the driver and thrown away."""
    from pqsift.spark import driver_read

    rows = 1 << 18
    table = pa.table({"id": pa.array(range(rows), pa.int64()), "note": [f"row {i:08d} " * 4 for i in range(rows)]})
    pq.write_table(
        table, tmp_path / "sorted.parquet", row_group_size=rows // 4, write_page_index=True, data_page_size=1 << 16
    )
    where = f"id >= {rows // 8} AND id < {rows // 2}"
    plan = pqsift.spark.plan_tasks(tmp_path, ["id", "note"], where)
    wanted = table.filter(pc.and_(pc.greater_equal(table["id"], rows // 8), pc.less(table["id"], rows // 2)))
    # A lower bound of the output's rows, and an estimate of its bytes near the real ones.
    certain = sum(rg.certain_rows for file in plan.scan.plan().files for rg in file.row_groups)
    assert wanted.num_rows * 0.9 < certain <= wanted.num_rows
    assert plan.certain_output_bytes is not None
    assert 0.5 * wanted.nbytes * certain / wanted.num_rows < plan.certain_output_bytes < 2 * wanted.nbytes
    monkeypatch.setattr(driver_read, "DRIVER_RESULT_BYTES", plan.certain_output_bytes - 1)
    metrics = pqsift.spark.ScanMetrics(spark)
    df = pqsift.spark.read(spark, tmp_path, ["id", "note"], where, metrics=metrics)
    assert "MapInArrow" in _physical_plan(df) and not metrics.read_on_driver
    assert _rows(df.toArrow()) == _rows(wanted)
    assert metrics._driver_reading.get("rows_out", 0) == 0
    # Room for them: read on the driver.
    monkeypatch.setattr(driver_read, "DRIVER_RESULT_BYTES", 2 * wanted.nbytes)
    metrics = pqsift.spark.ScanMetrics(spark)
    df = pqsift.spark.read(spark, tmp_path, ["id", "note"], where, metrics=metrics)
    assert "MapInArrow" not in _physical_plan(df) and metrics.read_on_driver


def test_output_floor_counts_values_and_offsets() -> None:
    from pqsift.spark import driver_read

    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("flag", pa.bool_()),
            ("price", pa.decimal128(10, 2)),
            ("note", pa.string()),
            ("blob", pa.large_binary()),
            ("tags", pa.list_(pa.string())),
            ("day", pa.date32()),
        ]
    )
    # 8 + 1/8 + 16 + 4 + 8 + 0 (nested) + 4 bytes a row.
    assert driver_read.output_floor(8_000, schema) == 8_000 * 40 + 1_000
    assert driver_read.output_floor(0, schema) == 0


def test_the_driver_streams_its_planned_scan_and_falls_back_to_pieces(
    spark: Any, dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read on the driver is the driver's planned scan as one stream (no scan per
    piece); with ``ignore_corrupt_files``, a file that cannot be read sends it back to the
    pieces, which skip that file."""
    from pqsift.spark import driver_read

    piece_reads: list[int] = []
    read_pieces = driver_read.read_pieces
    monkeypatch.setattr(
        driver_read, "read_pieces", lambda *args, **kwargs: piece_reads.append(1) or read_pieces(*args, **kwargs)
    )
    columns, where = ["id", "note", "kind"], "kind = 'refund'"
    metrics = pqsift.spark.ScanMetrics(spark)
    df = pqsift.spark.read(spark, dataset, columns, where, driver_read_bytes=READ_BY["driver"], metrics=metrics)
    assert _rows(df.toArrow()) == _rows(_native(spark, dataset, where, columns))
    assert metrics.read_on_driver and piece_reads == []
    assert metrics.value["rows_out"] == df.count() and metrics.value["row_groups_read"] > 1
    for part in dataset.glob("*.parquet"):
        (tmp_path / part.name).write_bytes(part.read_bytes())
    broken = bytearray((tmp_path / "part-1.parquet").read_bytes())
    for offset in range(4, min(len(broken) - 4096, 60_000), 7):
        broken[offset] ^= 0x5A
    (tmp_path / "part-1.parquet").write_bytes(bytes(broken))
    metrics = pqsift.spark.ScanMetrics(spark)
    df = pqsift.spark.read(
        spark, tmp_path, columns, ignore_corrupt_files=True, driver_read_bytes=READ_BY["driver"], metrics=metrics
    )
    assert metrics.read_on_driver and piece_reads == [1]
    assert {row.id for row in df.select("id").collect()} == set(range(ROWS))
    assert [Path(p).name for p in metrics.value["files_skipped"]] == ["part-1.parquet"]


def test_local_master_reads_on_the_driver_whatever_the_bytes(
    spark: Any, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a local master the tasks would run on the driver's cores: the plan's bound on the
    bytes to read is lifted by default (one given still holds); the bound on the output
    stays, a read on course to pass it stops after its first row groups, and a read without
    a filter whose plan already passes it is not begun."""
    from pqsift.spark import driver_read

    assert pqsift.spark.runs_in_the_driver(spark)
    monkeypatch.setattr(pqsift.spark, "DRIVER_READ_BYTES", 1)  # what a cluster would allow
    columns, where = ["id", "note"], "kind = 'view'"
    plan = pqsift.spark.plan_tasks(dataset, columns, where)
    assert plan.selected_bytes is not None and plan.selected_bytes > 1
    metrics = pqsift.spark.ScanMetrics(spark)
    df = pqsift.spark.read(spark, dataset, columns, where, metrics=metrics)
    assert "MapInArrow" not in _physical_plan(df) and metrics.read_on_driver
    assert _rows(df.toArrow()) == _rows(_native(spark, dataset, where, columns))
    assert "MapInArrow" in _physical_plan(pqsift.spark.read(spark, dataset, columns, where, driver_read_bytes=1))
    # Every row, with room for a quarter of them: the tasks read, and the driver stopped
    # once its first row groups said the output would not fit.
    whole = pqsift.scan(dataset, columns).to_table()
    monkeypatch.setattr(driver_read, "DRIVER_RESULT_BYTES", whole.nbytes // 4)
    metrics = pqsift.spark.ScanMetrics(spark)
    df = pqsift.spark.read(spark, dataset, columns, "id % 7 >= 0", metrics=metrics)
    assert "MapInArrow" in _physical_plan(df) and not metrics.read_on_driver
    assert df.count() == whole.num_rows
    assert 0 < metrics._driver_reading["rows_out"] < whole.num_rows / 4
    # Without a filter the plan says as much (every selected row is output, at least its
    # fixed-width values and string offsets): no read on the driver is begun.
    assert driver_read.output_floor(whole.num_rows, whole.schema) > driver_read.DRIVER_RESULT_BYTES
    metrics = pqsift.spark.ScanMetrics(spark)
    df = pqsift.spark.read(spark, dataset, columns, metrics=metrics)
    assert "MapInArrow" in _physical_plan(df) and not metrics.read_on_driver
    assert df.count() == whole.num_rows and metrics._driver_reading.get("rows_out", 0) == 0
    monkeypatch.setattr(driver_read, "DRIVER_RESULT_BYTES", whole.nbytes * 2)
    assert "MapInArrow" not in _physical_plan(pqsift.spark.read(spark, dataset, columns))


@pytest.mark.parametrize("read_by", list(READ_BY))
def test_corrupt_file_fails_the_job_with_its_path(spark: Any, dataset: Path, tmp_path: Path, read_by: str) -> None:
    for part in dataset.glob("*.parquet"):
        (tmp_path / part.name).write_bytes(part.read_bytes())
    good = (tmp_path / "part-1.parquet").read_bytes()
    # A valid footer over garbage data pages: planning succeeds, reading fails.
    broken = bytearray(good)
    for offset in range(4, min(len(broken) - 4096, 60_000), 7):
        broken[offset] ^= 0x5A
    (tmp_path / "part-1.parquet").write_bytes(bytes(broken))
    driver_read_bytes = READ_BY[read_by]
    with pytest.raises(Exception, match=r"part-1\.parquet"):
        pqsift.spark.read(spark, tmp_path, ["id", "note", "kind"], driver_read_bytes=driver_read_bytes).collect()
    metrics = pqsift.spark.ScanMetrics(spark)
    df = pqsift.spark.read(
        spark,
        tmp_path,
        ["id", "note", "kind"],
        ignore_corrupt_files=True,
        metrics=metrics,
        driver_read_bytes=driver_read_bytes,
    )
    assert metrics.read_on_driver == (read_by == "driver")
    ids = {row.id for row in df.select("id").collect()}
    assert ids == set(range(ROWS))  # the two good files (same ids 0..ROWS)
    assert [Path(p).name for p in metrics.value["files_skipped"]] == ["part-1.parquet"]


@pytest.mark.parametrize(
    "name",
    [
        "alltypes_tiny_pages.parquet",
        "alltypes_plain.parquet",
        "nested_maps.snappy.parquet",
        "nested_lists.snappy.parquet",
        "nullable.impala.parquet",
    ],
)
def test_corpus_files_read_as_spark_reads_them(spark: Any, corpus: Path, name: str) -> None:
    path = corpus / "data" / name
    native = spark.read.parquet(str(path))
    df = pqsift.spark.read(spark, path)
    assert df.schema == native.schema
    assert sorted(map(repr, df.collect())) == sorted(map(repr, native.collect()))


def test_reader_function_on_a_user_task_dataframe(spark: Any, dataset: Path) -> None:
    paths = sorted(str(p) for p in dataset.glob("*.parquet"))
    columns = ["id", "kind", "amount"]
    where = "kind = 'refund' AND amount > 0"
    files = spark.createDataFrame([(p,) for p in paths], "path string")
    df = files.mapInArrow(
        pqsift.spark.reader(columns, where, session_time_zone="America/New_York"), pqsift.spark.schema(paths, columns)
    )
    expected = _native(spark, dataset, where, columns)
    assert _rows(df.toArrow()) == _rows(expected)
    # Byte-range splits: every row group lands in exactly one of two halves of each file.
    size = {p: os.path.getsize(p) for p in paths}
    halves = [(p, 0, size[p] // 2) for p in paths] + [(p, size[p] // 2, size[p]) for p in paths]
    ranges = spark.createDataFrame(halves, "path string, range_start bigint, range_length bigint")
    df = ranges.mapInArrow(pqsift.spark.reader(columns, where), pqsift.spark.schema(paths, columns))
    assert _rows(df.toArrow()) == _rows(expected)
    with pytest.raises(TypeError, match="row_groups"):
        pqsift.spark.reader(columns, row_groups=[0])


def test_struct_fields_by_path_as_spark_selects_them(spark: Any, dataset: Path) -> None:
    columns = ["id", "attrs.b", "attrs.a"]
    df = pqsift.spark.read(spark, dataset, columns, "attrs.a >= 5")
    expected = spark.read.parquet(str(dataset)).filter("attrs.a >= 5").select(*columns)
    assert df.schema == expected.schema
    assert _rows(df.toArrow()) == _rows(expected.toArrow())


def test_lazy_planning_reads_no_footer_on_the_driver(spark: Any, tmp_path: Path) -> None:
    """Lazy planning (the mode chosen above LAZY_PLANNING_FILES files): the driver prunes on
    partition values without opening a file but the first (for the partition filter's
    types), tasks plan their own files; rows equal the eager plan's and Spark's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pqsift import _core

    for day in range(1, 4):
        for part in range(10):
            directory = tmp_path / f"day={day}"
            directory.mkdir(exist_ok=True)
            ids = pa.array(range(part * 1000, part * 1000 + 1000), pa.int64())
            pq.write_table(
                pa.table({"id": ids, "note": pa.array([f"n{i}" for i in range(1000)])}),
                directory / f"p{part}.parquet",
                row_group_size=250,
            )
    filter_text = "day >= 2 AND id < 2500"
    _, before = _core.metadata_cache_stats()
    lazy = pqsift.spark.plan_tasks(str(tmp_path), ["id", "day"], filter_text, lazy=True, target_task_bytes=20_000)
    _, after = _core.metadata_cache_stats()
    assert after - before <= 1  # the first file's footer, for the partition filter
    assert lazy.metrics["files_pruned_partition"] == 10
    assert sum(len(t.pieces) for t in lazy.tasks) == 20 and all(
        p.row_groups is None for t in lazy.tasks for p in t.pieces
    )
    assert "lazy planning: 20 of 30 file(s)" in lazy.explain
    metrics = pqsift.spark.ScanMetrics(spark)
    got = sorted(
        tuple(r)
        for r in pqsift.spark.read(
            spark, str(tmp_path), ["id", "day"], filter_text, lazy=True, metrics=metrics
        ).collect()
    )
    expected = sorted(
        tuple(r) for r in spark.read.parquet(str(tmp_path)).filter(filter_text).select("id", "day").collect()
    )
    eager = sorted(
        tuple(r) for r in pqsift.spark.read(spark, str(tmp_path), ["id", "day"], filter_text, lazy=False).collect()
    )
    assert got == expected == eager
    # Each task pruned its own files' row groups: of 250 ids each, those below 2,500 are
    # files p0 and p1 whole and half of p2, on each of the two days left.
    assert metrics.value["row_groups_read"] == 2 * (4 + 4 + 2)


def test_lazy_planning_splits_large_files_into_byte_ranges(spark: Any, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = pa.array(range(200_000), pa.int64())
    pq.write_table(pa.table({"id": ids}), tmp_path / "big.parquet", row_group_size=10_000)
    plan = pqsift.spark.plan_tasks(str(tmp_path), ["id"], lazy=True, target_task_bytes=200_000)
    assert len(plan.tasks) > 2 and all(t.pieces[0].file_range is not None for t in plan.tasks)
    rows = pqsift.spark.read(spark, str(tmp_path), ["id"], lazy=True, target_task_bytes=200_000).collect()
    assert sorted(r[0] for r in rows) == list(range(200_000))  # each row group read once


_AUTO_REGISTERED = r"""
import json, os, sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
frame = spark.read.format("pqsift").option("columns", "id").load(sys.argv[1]).filter("id >= 990")
print(json.dumps(sorted(row.id for row in frame.collect())))
spark.stop()
"""


def test_the_data_source_is_there_without_register(tmp_path: Path) -> None:
    """A fresh Spark session, pqsift installed and never registered: Spark 4 finds the
    ``pyspark_pqsift`` package and ``format("pqsift")`` reads (Spark's filter applied after)."""
    import subprocess

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": pa.array(range(1000), pa.int64())}), path)
    environment = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, "-c", _AUTO_REGISTERED, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == list(range(990, 1000))


def test_workers_that_cannot_import_pqsift_are_caught_before_a_task_runs(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3]}), path)
    monkeypatch.setattr(spark.sparkContext, "pythonExec", "/nonexistent/bin/python3")
    with pytest.raises(pqsift.PqsiftError, match="set PYSPARK_PYTHON") as raised:
        pqsift.spark.read(spark, path)
    assert raised.value.reason is not None and "/nonexistent/bin/python3" in raised.value.reason
    with pytest.raises(pqsift.PqsiftError, match="PYSPARK_PYTHON"):
        pqsift.spark.register(spark)


def test_arrow_java_reads_unchecked_in_the_driver_jvm(spark: Any, dataset: Path) -> None:
    """The session's JVM (where a local master's tasks run) reads Arrow vectors without
    Arrow Java's per-value bound and null checks once pqsift has registered or read in it,
    the rows still Spark's own."""
    from pqsift.spark.arrow_checks import UNCHECKED

    jvm = spark.sparkContext._jvm
    if any(jvm.java.lang.System.getenv(variable) is not None for _, variable, _ in UNCHECKED):
        pytest.skip("Arrow Java's checks are configured by this environment")
    expected = spark.read.parquet(str(dataset)).filter("small > 0").select("id", "small", "note", "tags")
    got = pqsift.spark.read(
        spark, dataset, columns=["id", "small", "note", "tags"], filter="small > 0", driver_read_bytes=0
    )

    def by_id(frame: Any) -> list[Any]:
        return sorted(frame.collect(), key=lambda row: row["id"])

    assert by_id(got) == by_id(expected)
    for name, _, value in UNCHECKED:
        assert jvm.java.lang.System.getProperty(name) == value
    assert jvm.org.apache.arrow.memory.BoundsChecking.BOUNDS_CHECKING_ENABLED is False
    assert jvm.org.apache.arrow.vector.NullCheckingForGet.NULL_CHECKING_ENABLED is False


def test_arrow_java_checks_given_by_the_user_are_left_as_given() -> None:
    from pqsift.spark.arrow_checks import EXECUTOR_SETTINGS, settings_to_make

    nothing: dict[str, str] = {}
    assert settings_to_make(nothing.get, nothing.get) == [
        ("arrow.enable_unsafe_memory_access", "true"),
        ("arrow.enable_null_check_for_get", "false"),
    ]
    # Either way of giving a setting, whatever its value, keeps pqsift's hands off it.
    properties = {"arrow.enable_unsafe_memory_access": "false"}
    environment = {"ARROW_ENABLE_NULL_CHECK_FOR_GET": "true"}
    assert settings_to_make(properties.get, nothing.get) == [("arrow.enable_null_check_for_get", "false")]
    assert settings_to_make(nothing.get, environment.get) == [("arrow.enable_unsafe_memory_access", "true")]
    assert settings_to_make(properties.get, environment.get) == []
    assert EXECUTOR_SETTINGS == {
        "spark.executorEnv.ARROW_ENABLE_UNSAFE_MEMORY_ACCESS": "true",
        "spark.executorEnv.ARROW_ENABLE_NULL_CHECK_FOR_GET": "false",
    }
    assert pqsift.spark.EXECUTOR_ARROW_SETTINGS is EXECUTOR_SETTINGS


def test_large_plans_reach_the_tasks_as_one_broadcast_variable(
    spark: Any, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``BROADCAST_PLAN_BYTES`` the tasks' plans travel as a broadcast variable, not in
    the function every task unpickles; the rows are Spark's."""
    made: list[Any] = []
    broadcast = spark.sparkContext.broadcast

    def recorded(value: Any) -> Any:
        made.append(broadcast(value))
        return made[-1]

    monkeypatch.setattr(spark.sparkContext, "broadcast", recorded)
    monkeypatch.setattr(pqsift.spark, "BROADCAST_PLAN_BYTES", 0)
    expected = spark.read.parquet(str(dataset)).filter("small > 50").select("id", "note")
    got = pqsift.spark.read(
        spark, dataset, columns=["id", "note"], filter="small > 50", driver_read_bytes=0, target_task_bytes=1
    )
    assert sorted(got.collect(), key=lambda row: row["id"]) == sorted(expected.collect(), key=lambda row: row["id"])
    (plans,) = made
    assert len(plans.value) == got.rdd.getNumPartitions() > 1
    assert all(piece[5] is not None for pieces in plans.value for piece in pieces)


def test_a_workers_connection_to_its_jvm_is_acknowledged_at_once() -> None:
    """On a loopback TCP connection (what a Python worker has to its JVM) both ends get
    ``TCP_NODELAY`` (and ``TCP_QUICKACK``); a listening socket, a datagram socket and a
    connection elsewhere are left alone."""
    import socket

    from pqsift.spark.worker_socket import acknowledge_jvm_connection

    if not hasattr(socket, "TCP_QUICKACK"):
        pytest.skip("TCP_QUICKACK is Linux's")
    with socket.create_server(("127.0.0.1", 0)) as listener, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as datagram:
        datagram.bind(("127.0.0.1", 0))
        with socket.create_connection(listener.getsockname()) as client:
            server, _ = listener.accept()
            with server:
                ends = (client, server)
                assert [end.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for end in ends] == [0, 0]
                assert acknowledge_jvm_connection() >= 2
                assert all(end.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for end in ends)
                assert listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
                # The connections are as they were: data still flows both ways.
                client.sendall(b"input")
                assert server.recv(16) == b"input"


def test_every_task_function_acknowledges_its_jvm_when_unpickled(monkeypatch: pytest.MonkeyPatch, dataset: Path) -> None:
    """Spark writes a Python task its function, then its input: the input was held back
    until the worker acknowledged the function, up to 40 ms. Every function pqsift hands
    Spark (planned or not, and the data source's reader) acknowledges the worker's
    connection when it is unpickled in a Spark worker, which the worker does before
    reading the input."""
    import cloudpickle
    from pyspark.sql.types import LongType, StructField, StructType

    from pqsift.spark import worker_socket
    from pqsift.spark.datasource import PqsiftReader
    from pqsift.spark.reader import planned_reader, reader

    acknowledged: list[int] = []
    monkeypatch.setattr(worker_socket, "acknowledge_jvm_connection", lambda: acknowledged.append(1) or 1)
    # Outside Spark's workers (this process) a function unpickled acknowledges nothing.
    cloudpickle.loads(cloudpickle.dumps(reader(["id"])))
    assert acknowledged == []
    monkeypatch.setattr(worker_socket, "in_a_spark_worker", lambda: True)
    plans = pqsift.spark.plan_tasks(str(dataset), ["id"], "small > 50", target_task_bytes=1)
    functions = {
        "reader": reader(["id"]),
        "planned reader": planned_reader([task.to_rows() for task in plans.tasks], ["id"], "small > 50"),
        "data source reader": PqsiftReader(
            {"path": str(dataset), "columns": "id"}, StructType([StructField("id", LongType())]), False
        ),
    }
    for name, function in functions.items():
        before = len(acknowledged)
        cloudpickle.loads(cloudpickle.dumps(function))
        assert len(acknowledged) == before + 1, name


def test_a_spark_worker_unpickling_a_task_function_acknowledges_its_jvm(spark: Any) -> None:
    """In a real Python worker, a function carrying the marker finds its connection to the
    JVM set to send at once by the time it runs. Each run then sets it back to Spark's
    default (no ``TCP_NODELAY``), so that a reused worker shows the next run's marker at
    work, not an earlier task's."""
    import socket

    from pqsift.spark.worker_socket import AcknowledgeOnLoad

    if not hasattr(socket, "TCP_QUICKACK") or spark.conf.get("spark.python.unix.domain.socket.enabled", "false") == "true":
        pytest.skip("the worker's connection is not TCP on Linux")

    def task(batches: Any, acknowledge: Any = AcknowledgeOnLoad()) -> Any:  # noqa: B008 - pickled with it
        import ipaddress
        import stat

        for _ in batches:
            pass
        nodelay, connections = [], []
        for name in os.listdir("/proc/self/fd"):
            try:
                if not stat.S_ISSOCK(os.fstat(int(name)).st_mode):
                    continue
                with socket.socket(fileno=os.dup(int(name))) as connection:
                    if connection.family != socket.AF_INET:
                        continue
                    if not ipaddress.ip_address(connection.getpeername()[0]).is_loopback:
                        continue
                    nodelay.append(connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                    # Its other descriptors (the worker reads and writes through
                    # duplicates) are the same connection: reset after all are read.
                    connections.append(os.dup(int(name)))
            except OSError:
                continue
        for descriptor in connections:
            with socket.socket(fileno=descriptor) as connection:
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
        yield pa.RecordBatch.from_pydict({"worker": [os.getpid()], "nodelay": [json.dumps(nodelay)]})

    runs = [spark.range(0, 1, 1, 1).mapInArrow(task, "worker long, nodelay string").collect()[0] for _ in range(4)]
    workers = [run["worker"] for run in runs]
    if len(set(workers)) == len(workers):
        pytest.skip(f"no worker ran twice ({workers}): every run may show an earlier task's setting")
    for run in runs:
        nodelay = json.loads(run["nodelay"])
        assert nodelay and all(nodelay), (workers, nodelay)


def test_a_workers_objects_are_frozen_for_the_cycle_collector(spark: Any, dataset: Path) -> None:
    """In a Spark task, pqsift freezes the worker's objects (PySpark's daemon collects after
    every task, visiting all of them); outside a task, or opted out, nothing is frozen."""
    import gc

    from pqsift.spark.worker_gc import OPT_OUT, REFREEZE_OBJECTS, freeze_worker_objects

    def probe(batches: Any) -> Any:
        for _ in batches:
            pass
        frozen = freeze_worker_objects()
        os.environ[OPT_OUT] = "0"
        try:
            opted_out = freeze_worker_objects()
        finally:
            del os.environ[OPT_OUT]
        row = {
            "frozen": frozen,
            "opted_out": opted_out,
            "kept": gc.get_freeze_count(),
            "unfrozen": len(gc.get_objects(generation=2)),
        }
        yield pa.RecordBatch.from_pylist([row])

    assert pqsift.spark.read(spark, dataset, columns=["id"], filter="small > 90", driver_read_bytes=0).count() > 0
    schema = "frozen boolean, opted_out boolean, kept long, unfrozen long"
    for row in spark.range(0, 2, 1, numPartitions=2).mapInArrow(probe, schema).collect():
        assert row.frozen and not row.opted_out
        assert row.kept > REFREEZE_OBJECTS  # the worker's modules: pyspark, pyarrow, pqsift
        assert row.unfrozen < REFREEZE_OBJECTS
    kept = gc.get_freeze_count()
    assert freeze_worker_objects() is False  # this process is no Spark worker
    assert gc.get_freeze_count() == kept


def test_the_data_sources_planning_workers_objects_are_frozen(spark: Any, dataset: Path, tmp_path: Path) -> None:
    """The workers that plan a Python data source's read (its schema, its reader's
    partitions) run outside any task, and PySpark's daemon collects after each of them
    too, while Spark goes on planning: the pqsift source freezes their objects as its tasks
    do. A probe source records, in each planning worker, its process and how many objects
    are frozen, then unfreezes them, before and after a pqsift read."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    log = tmp_path / "planning.jsonl"

    def record(step: str) -> None:
        import gc

        with open(log, "a") as out:
            out.write(json.dumps({"step": step, "worker": os.getpid(), "frozen": gc.get_freeze_count()}) + "\n")
        gc.unfreeze()

    class ProbeReader(DataSourceReader):
        # Filters offered (and all refused) as pqsift's reader is offered them: Spark
        # then plans both in workers of the same kind.
        def pushFilters(self, filters: list[Any]) -> Any:  # noqa: N802 - Spark's name
            yield from filters

        def partitions(self) -> list[InputPartition]:
            record("partitions")
            return [InputPartition(0)]

        def read(self, partition: InputPartition) -> Any:
            yield (1,)

    class Probe(DataSource):
        @classmethod
        def name(cls) -> str:
            return "planning_probe"

        def schema(self) -> str:
            record("schema")
            return "x int"

        def reader(self, schema: Any) -> DataSourceReader:
            return ProbeReader()

    spark.dataSource.register(Probe)
    probe = lambda: spark.read.format("planning_probe").load().filter("x > 0").collect()  # noqa: E731
    assert probe() == [(1,)]
    got = spark.read.format("pqsift").option("columns", "id,small").load(str(dataset)).filter("small > 90")
    assert got.count() > 0
    assert probe() == [(1,)]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    for step in ("schema", "partitions"):
        before, after = [r for r in records if r["step"] == step][-2:]
        if before["worker"] != after["worker"]:
            pytest.skip(f"{step}: the two probes ran in different workers ({before['worker']}, {after['worker']})")
        assert after["frozen"] > 0, (step, records)  # frozen by pqsift's planning in between


def test_sparks_parquet_options_have_sparks_meaning_or_are_refused_by_name(spark: Any, tmp_path: Path) -> None:
    for day in (1, 2):
        (tmp_path / f"day={day}").mkdir()
        pq.write_table(pa.table({"id": [day * 10, day * 10 + 1]}), tmp_path / f"day={day}" / "part-0.parquet")

    def read(**options: str) -> Any:
        reader = spark.read.format("pqsift")
        for key, value in options.items():
            reader = reader.option(key, value)
        return reader.load(str(tmp_path))

    for options in (
        {"recursiveFileLookup": "true"},
        {"datetimeRebaseMode": "CORRECTED", "int96RebaseMode": "EXCEPTION"},
    ):
        native = spark.read.options(**options).parquet(str(tmp_path))
        assert read(**options).columns == native.columns, options
        assert sorted(map(tuple, read(**options).collect())) == sorted(map(tuple, native.collect())), options
    assert read(recursiveFileLookup="true").columns == ["id"]  # no partition discovery
    for key, value, reason in (
        ("datetimeRebaseMode", "LEGACY", "proleptic Gregorian"),
        ("pathGlobFilter", "*.parquet", "not supported"),
        ("modifiedBefore", "2020-06-01T13:00:00", "modification time"),
    ):
        with pytest.raises(Exception, match=reason):
            read(**{key: value}).collect()
