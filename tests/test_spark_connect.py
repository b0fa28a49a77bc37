"""pqsift's Spark layer over Spark Connect: pqsift.spark.read and the "pqsift" data source
return what Spark's native reader returns on the same Connect session, metrics travel
without accumulators, relative paths are resolved where the test typed them, and errors
name the file.

The server is a child process (tests/connect_harness.py), launched as soon as the tests are
collected (conftest.py) so that its JVM starts while earlier tests run: the classic
``spark`` fixture holds this process's one SparkContext, next to which
``remote("local[2]")`` cannot start its in-process server. Its working directory is not the
tests', and its Python workers run in a session directory of their own, as on a real
Connect server.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("pyspark")

import pqsift.spark
from connect_harness import ConnectServer, missing_modules, shared_server, stop_shared
from test_spark import FILTERS, READ_BY, ROWS, _rows, _table, assert_tasks_read_ids_100_to_199


@pytest.fixture(scope="session")
def connect_server() -> Iterator[ConnectServer]:
    """A local Spark Connect server (``local[2]``) for the session, in a child process."""
    missing = missing_modules()
    if missing:
        pytest.skip(f"Spark Connect client packages missing ({', '.join(missing)}): pip install -r requirements-dev.txt")
    # Launched by conftest.py when the tests were collected (its JVM starts meanwhile).
    yield shared_server()
    stop_shared()


@pytest.fixture(scope="session")
def connect(connect_server: ConnectServer) -> Iterator[Any]:
    """A Spark Connect client session of ``connect_server``, pqsift registered."""
    session = connect_server.session()
    pqsift.spark.register(session)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """As tests/test_spark.py's: three files, five row groups each, page index on."""
    root = tmp_path_factory.mktemp("connect_dataset")
    for part in range(3):
        pq.write_table(_table(part), root / f"part-{part}.parquet", row_group_size=700, max_rows_per_page=200, write_page_index=True, use_dictionary=["kind", "note"])
    (root / "_SUCCESS").write_text("")
    return root


COLUMNS = ["id", "x", "kind", "ts", "local", "amount", "attrs", "tags"]


def _native(session: Any, path: Path, filter_text: str | None, columns: list[str] | None) -> Any:
    df = session.read.parquet(str(path))
    if filter_text:
        df = df.filter(filter_text)
    return df.select(*columns) if columns else df


def test_the_session_is_connect_and_its_workers_run_elsewhere(connect: Any) -> None:
    assert pqsift.spark.is_connect(connect)
    with pytest.raises(Exception, match="JVM_ATTRIBUTE_NOT_SUPPORTED"):
        connect.sparkContext  # noqa: B018 - what the Connect path must not touch
    assert pqsift.spark.default_parallelism(connect) == 2  # from the master, local[2]
    assert pqsift.spark.runs_in_the_driver(connect)  # sc://localhost, local[2]: this machine's cores

    def cwd(batches: Iterator[Any]) -> Iterator[Any]:
        import os

        import pyarrow as pa

        for batch in batches:
            yield pa.RecordBatch.from_pydict({"cwd": [os.getcwd()] * batch.num_rows})

    # What makes the relative-path tests below mean something.
    (worker_cwd,) = {row.cwd for row in connect.range(2).mapInArrow(cwd, "cwd string").collect()}
    assert Path(worker_cwd).resolve() != Path.cwd().resolve()


@pytest.mark.parametrize(("host", "loopback"), [("localhost", True), ("127.0.0.1", True), ("127.8.0.1", True), ("[::1]", True), ("10.0.0.5", False), ("spark.example.com", False)])
def test_only_a_loopback_server_may_count_as_local(host: str, loopback: bool) -> None:
    """A Connect server elsewhere keeps the plan's byte bound whatever its master: the
    client would read across the network what the server's tasks read next to the data."""
    from types import SimpleNamespace

    from pqsift.spark import _loopback_host

    assert _loopback_host(SimpleNamespace(client=SimpleNamespace(host=host))) == loopback


# A few of test_spark.py's filters (the reading is the classic path's; what Connect changes
# is how the plan and the rows travel): NaN and -0.0, instants, local date-times, a struct.
CONNECT_FILTERS = [FILTERS[0], FILTERS[3], FILTERS[8], FILTERS[9], FILTERS[11]]


@pytest.mark.parametrize("read_by", list(READ_BY))
@pytest.mark.parametrize("filter_text", CONNECT_FILTERS)
def test_read_returns_what_spark_native_returns(connect: Any, dataset: Path, filter_text: str | None, read_by: str) -> None:
    metrics = pqsift.spark.ScanMetrics(connect)
    df = pqsift.spark.read(connect, dataset, COLUMNS, filter_text, driver_read_bytes=READ_BY[read_by], metrics=metrics)
    assert metrics.read_on_driver == (read_by == "driver")
    expected = _native(connect, dataset, filter_text, COLUMNS)
    assert df.schema == expected.schema
    assert _rows(df.toArrow()) == _rows(expected.toArrow())


@pytest.mark.parametrize("driver_read_bytes", [None, 1], ids=["local bound", "tried, then tasks"])
def test_read_top_rows_as_spark_orders_them(connect: Any, dataset: Path, driver_read_bytes: int | None) -> None:
    """A top-k as Spark orders it: read by the client (a local server's plan bound is
    lifted), and by tasks once the client's attempt passes a 1-byte bound."""
    from pyspark.sql.connect import functions

    path = dataset / "part-0.parquet"  # ids unique: the order is total
    metrics = pqsift.spark.ScanMetrics(connect)
    df = pqsift.spark.read(
        connect, path, ["id", "kind"], "kind IS NOT NULL", order_by=[("x", "desc"), "id"], limit=7,
        driver_read_bytes=driver_read_bytes, metrics=metrics,
    )
    assert metrics.read_on_driver is (driver_read_bytes is None)
    native = connect.read.parquet(str(path)).filter("kind IS NOT NULL")
    expected = native.orderBy(functions.col("x").desc_nulls_last(), functions.col("id").asc_nulls_first()).select("id", "kind").limit(7)
    assert df.columns == ["id", "kind"]
    assert [tuple(row) for row in df.collect()] == [tuple(row) for row in expected.collect()]


def test_metrics_travel_without_accumulators_as_in_classic(connect: Any, spark: Any, dataset: Path) -> None:
    where = "id BETWEEN 100 AND 199"
    metrics = pqsift.spark.ScanMetrics(connect)
    assert metrics.accumulator is None
    df = pqsift.spark.read(connect, dataset, ["id", "note"], where, metrics=metrics, target_task_bytes=1, driver_read_bytes=0)
    assert df.columns == ["id", "note"]  # the metrics column does not show
    rows = df.count()
    value = metrics.value
    assert_tasks_read_ids_100_to_199(value, rows)
    assert value["row_groups_read"] == 3
    assert value["rows_decoded"] >= rows
    assert value["files_skipped"] == []
    # The same counts as a classic session's accumulator gives.
    classic = pqsift.spark.ScanMetrics(spark)
    assert pqsift.spark.read(spark, dataset, ["id", "note"], where, metrics=classic, target_task_bytes=1, driver_read_bytes=0).count() == rows
    def comparable(counts: dict[str, Any]) -> dict[str, Any]:
        # Cache counts depend on what a worker read before; times differ run to run.
        return {name: count for name, count in counts.items() if not name.startswith(("cache_", "time_"))}

    assert comparable(value) == comparable(classic.value)
    # Another action replaces the reading counts (the latest run's), it does not add to them.
    assert len(df.toArrow()) == rows
    assert comparable(metrics.value) == comparable(value)
    # Read on the driver (the default for so small a result): the same reading counts.
    on_driver = pqsift.spark.ScanMetrics(connect)
    assert pqsift.spark.read(connect, dataset, ["id", "note"], where, metrics=on_driver).count() == rows
    assert on_driver.read_on_driver and on_driver.value["tasks"] == 0
    assert {name: on_driver.value[name] for name in ("rows_out", "row_groups_read", "bytes_read")} == {
        name: value[name] for name in ("rows_out", "row_groups_read", "bytes_read")
    }
    with pytest.raises(ValueError, match="another kind of session"):
        pqsift.spark.read(spark, dataset, ["id"], metrics=metrics)
    with pytest.raises(ValueError, match="Spark Connect"):
        pqsift.spark.reader(["id"], metrics=metrics)


@pytest.mark.parametrize("bound", ["tasks", "bytes"])
def test_large_plans_reach_connect_tasks_in_a_file_each_reads_its_own_of(connect: Any, dataset: Path, monkeypatch: pytest.MonkeyPatch, bound: str) -> None:
    """Past the bounds (many tasks, or plans near a Connect request's size) the tasks' plans
    travel in a file added to the session, not in the function: the function holds none of
    them, each task reads its own, and the rows are Spark's."""
    import cloudpickle

    from pqsift.spark.reader import PlanFile

    made: list[tuple[Any, Any]] = []
    planned_reader = pqsift.spark.planned_reader

    def recorded(planned: Any, *args: Any, **kwargs: Any) -> Any:
        made.append((planned, planned_reader(planned, *args, **kwargs)))
        return made[-1][1]

    monkeypatch.setattr(pqsift.spark, "planned_reader", recorded)
    monkeypatch.setattr(pqsift.spark, "BROADCAST_PLAN_BYTES", 0)
    monkeypatch.setattr(pqsift.spark, "CONNECT_PLAN_FILE_TASKS", 0 if bound == "tasks" else 1 << 30)
    monkeypatch.setattr(pqsift.spark, "CONNECT_PLAN_FILE_BYTES", 0)
    monkeypatch.setattr(pqsift.spark, "CONNECT_CLOSURE_PLAN_BYTES", 0 if bound == "bytes" else 1 << 40)
    expected = connect.read.parquet(str(dataset)).filter("small > 50").select("id", "note")
    got = pqsift.spark.read(connect, dataset, ["id", "note"], "small > 50", driver_read_bytes=0, target_task_bytes=1)
    assert sorted(got.collect(), key=lambda row: row["id"]) == sorted(expected.collect(), key=lambda row: row["id"])
    ((carried, function),) = made
    assert isinstance(carried, PlanFile)
    plans = pqsift.spark.plan_tasks(str(dataset), ["id", "note"], "small > 50", target_task_bytes=1)
    assert len(carried.spans) == len(plans.tasks) > 1
    pickled = cloudpickle.dumps(function)
    assert not any(piece[5] in pickled for task in plans.tasks for piece in task.to_rows())


def test_plans_the_server_will_not_take_as_a_file(connect: Any, dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server refusing the plans' file: plans a request can carry go in the function (the
    rows are Spark's), larger ones raise an error that says why."""
    from pqsift.errors import PqsiftError

    def refused(*paths: str, **kinds: Any) -> None:
        raise PermissionError("artifacts are disabled here")

    monkeypatch.setattr(connect, "addArtifacts", refused)
    monkeypatch.setattr(pqsift.spark, "BROADCAST_PLAN_BYTES", 0)
    monkeypatch.setattr(pqsift.spark, "CONNECT_PLAN_FILE_TASKS", 0)
    monkeypatch.setattr(pqsift.spark, "CONNECT_PLAN_FILE_BYTES", 0)
    expected = connect.read.parquet(str(dataset)).filter("small > 50").select("id")
    got = pqsift.spark.read(connect, dataset, ["id"], "small > 50", driver_read_bytes=0, target_task_bytes=1)
    assert sorted(got.collect()) == sorted(expected.collect())
    monkeypatch.setattr(pqsift.spark, "CONNECT_CLOSURE_PLAN_BYTES", 0)
    with pytest.raises(PqsiftError, match=r"too large for one Spark Connect request.*artifacts are disabled here"):
        pqsift.spark.read(connect, dataset, ["id"], "small > 50", driver_read_bytes=0, target_task_bytes=1)


def test_a_plan_file_not_on_the_node_is_a_clear_error(spark: Any, tmp_path: Path) -> None:
    """A task whose node lacks the plans' file (Spark did not ship it) fails naming it."""
    from pqsift.errors import PqsiftError
    from pqsift.spark.reader import PlanFile

    pieces = [[("a.parquet", [0], None, None, None, b"plan-a")], [("b.parquet", [1, 2], None, None, None, b"plan-b")]]
    plans = PlanFile.write(pieces, tmp_path)  # type: ignore[arg-type]
    assert (tmp_path / plans.name).stat().st_size == sum(length for _, length in plans.spans)
    assert PlanFile.write(pieces, tmp_path / ".." / tmp_path.name).name == plans.name  # type: ignore[arg-type]
    with pytest.raises(PqsiftError, match=re.escape(plans.name)):
        plans.pieces(1)  # not where SparkFiles looks: this process's Spark has no such file
    from pyspark import SparkFiles

    shutil.copy(tmp_path / plans.name, Path(SparkFiles.getRootDirectory()) / plans.name)
    try:
        assert plans.pieces(1) == pieces[1] and plans.pieces(0) == pieces[0]
    finally:
        (Path(SparkFiles.getRootDirectory()) / plans.name).unlink()


def test_connect_abandons_a_driver_read_at_its_own_bound(connect: Any, spark: Any, dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over Connect a result read by the client reaches Spark as a local relation, dearer a
    byte than a classic session's Arrow batches: its bound is lower. An output between the
    two bounds is read on a classic driver and by tasks over Connect, the same rows."""
    from pqsift.spark import driver_read

    where, columns = "id >= 0", ["id", "note"]
    output = pqsift.scan(dataset, columns, where, spark_output=True).to_table().nbytes
    monkeypatch.setattr(driver_read, "DRIVER_RESULT_BYTES", output * 2)
    monkeypatch.setattr(driver_read, "CONNECT_RESULT_BYTES", output // 2)
    classic, remote = pqsift.spark.ScanMetrics(spark), pqsift.spark.ScanMetrics(connect)
    on_classic = pqsift.spark.read(spark, dataset, columns, where, driver_read_bytes=1 << 40, metrics=classic)
    over_connect = pqsift.spark.read(connect, dataset, columns, where, driver_read_bytes=1 << 40, metrics=remote)
    assert classic.read_on_driver and not remote.read_on_driver
    assert _rows(over_connect.toArrow()) == _rows(on_classic.toArrow())
    monkeypatch.setattr(driver_read, "CONNECT_RESULT_BYTES", output * 2)
    remote = pqsift.spark.ScanMetrics(connect)
    pqsift.spark.read(connect, dataset, columns, where, driver_read_bytes=1 << 40, metrics=remote)
    assert remote.read_on_driver


def test_session_settings_are_read_in_one_request(connect: Any, dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read takes the session's settings it follows (case sensitivity, the time zone, the
    cores) from one listing of them, not a round trip each (~1.5 ms a request; a read asked
    ten); a setting changed on the session is followed by the next read."""
    listings, asked = [], []
    config = connect.client.config

    def counted(operation: Any) -> Any:
        kind = operation.WhichOneof("op_type")
        if kind == "get_all":
            listings.append(kind)
        else:  # pyspark's own createDataFrame asks a few of its settings
            request = getattr(operation, kind)
            fields = {field.name for field, _ in request.ListFields()}
            asked.extend(list(request.keys) if "keys" in fields else [pair.key for pair in request.pairs] if "pairs" in fields else [])
        return config(operation)

    monkeypatch.setattr(connect.client, "config", counted)
    assert pqsift.spark.read(connect, dataset, ["ID"], "ID < 5").count() == 15  # case-insensitive, as Spark
    assert len(listings) == 1
    assert not {"spark.sql.caseSensitive", "spark.sql.parquet.mergeSchema", "spark.master", "spark.default.parallelism"} & set(asked)
    connect.conf.set("spark.sql.caseSensitive", "true")
    try:
        with pytest.raises(Exception, match="ID"):
            pqsift.spark.read(connect, dataset, ["ID"], "ID < 5")
    finally:
        connect.conf.unset("spark.sql.caseSensitive")


def test_data_source_metrics_travel_as_in_classic(connect: Any, spark: Any, dataset: Path) -> None:
    where = "id BETWEEN 100 AND 199"

    def observed(session: Any) -> tuple[int, dict[str, Any]]:
        metrics = pqsift.spark.ScanMetrics(session)
        source = session.read.format("pqsift").option("columns", "id,note").option("targetTaskBytes", 1).option("metrics", True)
        df = metrics.observe(source.load(str(dataset)).filter(where))
        assert df.columns == ["id", "note"]
        assert metrics.value["tasks"] == 0  # no action yet
        rows = df.count()
        return rows, {name: count for name, count in metrics.value.items() if not name.startswith(("cache_", "time_"))}

    rows, value = observed(connect)
    assert_tasks_read_ids_100_to_199(value, rows)
    assert value["row_groups_read"] == 3
    assert (rows, value) == observed(spark)


def test_relative_paths_resolve_where_they_were_typed(connect: Any, dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where = "kind = 'refund' AND small > 50"
    columns = ["id", "small", "kind", "note"]
    expected = _rows(_native(connect, dataset, where, columns).toArrow())
    monkeypatch.chdir(dataset.parent)
    relative = dataset.name
    assert _rows(pqsift.spark.read(connect, relative, columns, where).toArrow()) == expected
    assert _rows(pqsift.spark.read(connect, [f"{relative}/part-{i}.parquet" for i in range(3)], columns, where).toArrow()) == expected
    # The data source resolves against the directory it was registered from.
    pqsift.spark.register(connect)
    source = connect.read.format("pqsift").option("columns", ",".join(columns))
    assert _rows(source.load(relative).filter(where).toArrow()) == expected
    assert _rows(source.load(f"./{relative}/../{relative}").filter(where).toArrow()) == expected


def test_relative_paths_in_classic_mode_too(spark: Any, dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The classic JVM's working directory is where the tests started, not this one.
    where = "kind = 'refund' AND small > 50"
    columns = ["id", "small", "kind", "note"]
    expected = _rows(_native(spark, dataset, where, columns).toArrow())
    monkeypatch.chdir(dataset.parent)
    assert _rows(pqsift.spark.read(spark, dataset.name, columns, where).toArrow()) == expected
    try:
        pqsift.spark.register(spark)
        loaded = spark.read.format("pqsift").option("columns", ",".join(columns)).load(dataset.name).filter(where)
        assert _rows(loaded.toArrow()) == expected
    finally:
        monkeypatch.undo()
        pqsift.spark.register(spark)  # as conftest.py registered it, from the tests' directory


def test_hive_base_path_relative(connect: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for day in (1, 2):
        (tmp_path / "events" / f"day={day}").mkdir(parents=True)
        pq.write_table(_table(day, 200).select(["id", "kind"]), tmp_path / "events" / f"day={day}" / "part-0.parquet")
    expected = _rows(connect.read.option("basePath", str(tmp_path / "events")).parquet(str(tmp_path / "events" / "day=2")).toArrow())
    monkeypatch.chdir(tmp_path)
    got = pqsift.spark.read(connect, "events/day=2", base_path="events")
    assert got.columns == ["id", "kind", "day"]
    assert _rows(got.toArrow()) == expected
    pqsift.spark.register(connect)
    loaded = connect.read.format("pqsift").option("basePath", "events").load("events/day=2")
    assert _rows(loaded.toArrow()) == expected


def test_errors_name_the_file(connect: Any, corpus: Path, dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(dataset / "part-0.parquet", tmp_path / "good.parquet")
    # A footer that reads and data that does not: the task fails, in the server's worker.
    shutil.copy(corpus / "bad_data" / "ARROW-GH-45185.parquet", tmp_path / "broken-pages.parquet")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception, match=r"broken-pages\.parquet"):
        pqsift.spark.read(connect, "broken-pages.parquet").collect()
    pqsift.spark.register(connect)
    with pytest.raises(Exception, match=r"broken-pages\.parquet"):
        connect.read.format("pqsift").load("broken-pages.parquet").collect()
    # A footer that does not read: planning fails, on the client for read and in the
    # server's worker for the data source.
    (tmp_path / "bad-footer").mkdir()
    shutil.copy(corpus / "bad_data" / "PARQUET-1481.parquet", tmp_path / "bad-footer" / "PARQUET-1481.parquet")
    with pytest.raises(pqsift.CorruptFileError, match=re.escape(str(tmp_path / "bad-footer" / "PARQUET-1481.parquet"))):
        pqsift.spark.read(connect, "bad-footer")
    with pytest.raises(Exception, match=r"PARQUET-1481\.parquet"):
        connect.read.format("pqsift").load("bad-footer/PARQUET-1481.parquet").collect()


def test_ignore_corrupt_files_lists_them_in_metrics(connect: Any, dataset: Path, tmp_path: Path) -> None:
    for part in dataset.glob("*.parquet"):
        (tmp_path / part.name).write_bytes(part.read_bytes())
    broken = bytearray((tmp_path / "part-1.parquet").read_bytes())
    for offset in range(4, min(len(broken) - 4096, 60_000), 7):  # a valid footer over garbage pages
        broken[offset] ^= 0x5A
    (tmp_path / "part-1.parquet").write_bytes(bytes(broken))
    with pytest.raises(Exception, match=r"part-1\.parquet"):
        pqsift.spark.read(connect, tmp_path, ["id", "note", "kind"]).collect()
    metrics = pqsift.spark.ScanMetrics(connect)
    df = pqsift.spark.read(connect, tmp_path, ["id", "note", "kind"], ignore_corrupt_files=True, metrics=metrics)
    assert {row.id for row in df.select("id").collect()} == set(range(ROWS))
    assert [Path(p).name for p in metrics.value["files_skipped"]] == ["part-1.parquet"]


def test_data_source_pushes_filters_over_connect(connect: Any, dataset: Path) -> None:
    columns = ["id", "x", "kind", "small", "ts", "day", "amount", "attrs", "tags"]
    for where in ("x > 100 AND kind IN ('refund', 'Ärger')", "ts > TIMESTAMP '2026-03-10 00:00:00' AND day <= DATE '2026-01-20'", "size(tags) > 2"):
        df = connect.read.format("pqsift").option("columns", ",".join(columns)).load(str(dataset)).filter(where)
        expected = connect.read.parquet(str(dataset)).select(*columns).filter(where)
        assert _rows(df.toArrow()) == _rows(expected.toArrow()), where


def test_connect_parallelism_from_the_session(connect: Any) -> None:
    from pqsift.spark import _master_cores

    assert _master_cores("local") == 1
    assert _master_cores("local[3]") == 3
    assert _master_cores("local[4, 2]") == 4
    assert _master_cores("local[*]") == (os.cpu_count() or 1)
    assert _master_cores("local-cluster[2, 3, 1024]") == 6
    assert _master_cores("spark://host:7077") is None
    connect.conf.set("spark.sql.leafNodeDefaultParallelism", "5")
    try:
        assert pqsift.spark.default_parallelism(connect) == 5
    finally:
        connect.conf.unset("spark.sql.leafNodeDefaultParallelism")
    assert pqsift.spark.default_parallelism(connect) == 2


ICEBERG = Path(__file__).resolve().parents[2] / "shared" / "iceberg-testing" / "data" / "persistent"


@pytest.mark.skipif(not ICEBERG.exists(), reason="../shared/iceberg-testing is not there")
def test_iceberg_tables_read_over_connect(connect: Any, tmp_path: Path) -> None:
    """Iceberg over Connect: equality deletes and identity partition fills travel in the
    task plans as in classic Spark, and the data source travels in time."""
    from test_iceberg_pyiceberg import catalog
    from test_iceberg_spark import expected, rows

    for name, condition in [
        ("equality_deletes/warehouse/mydb/mytable_partitioned", "id >= 2"),
        ("hive_partitioned_table", "event_type = 'view'"),
    ]:
        root = str(ICEBERG / name)
        want = expected(root, condition)
        assert want, name
        assert rows(pqsift.spark.read(connect, root, filter=condition).collect()) == want, name
        frame = connect.read.format("pqsift").load(root).filter(condition)
        assert rows(frame.collect()) == want, name
    table = catalog(tmp_path).create_table("db.t", schema=pa.schema([pa.field("id", pa.int64())]))
    table.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    first = table.current_snapshot()
    assert first is not None
    table.append(pa.table({"id": pa.array([3], pa.int64())}))
    root = str(table.location()).removeprefix("file://")
    assert sorted(r.id for r in connect.read.format("pqsift").load(root).collect()) == [1, 2, 3]
    travelled = connect.read.format("pqsift").option("snapshot-id", first.snapshot_id).load(root)
    assert sorted(r.id for r in travelled.collect()) == [1, 2]
