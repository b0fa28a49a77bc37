"""Spark tasks read the driver's plan: each piece of a task carries the footer planning read
and its row groups' selections (``pqsift._core.Scan.task_plans``), and a task reads it as it
is — no footer fetched, nothing planned again — with the rows of a scan of the same query.
A plan that is damaged, cut short or of another format version is refused with
:class:`pqsift.TaskPlanError`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift
from pqsift import _core
from pqsift.spark.planning import TaskPlan, plan_tasks
from pqsift.spark.reader import read_pieces

DELTA = (Path(__file__).resolve().parents[1] / ".." / "shared" / "delta-testing").resolve()


@pytest.fixture(scope="module")
def hive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three day partitions of two files each; pages of 100 rows, 500-row row groups."""
    root = tmp_path_factory.mktemp("hive")
    for day in range(3):
        for part in range(2):
            start = (day * 2 + part) * 2000
            ids = pa.array(range(start, start + 2000), pa.int64())
            table = pa.table({"id": ids, "text": pa.array([f"row {i}" for i in ids.to_pylist()])})
            path = root / f"day={day}" / f"part-{part}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, path, row_group_size=500, max_rows_per_page=100, write_page_index=True)
    return root


@pytest.fixture(scope="module")
def evolved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two files, the second with a column the first lacks and a narrower type."""
    root = tmp_path_factory.mktemp("evolved")
    pq.write_table(pa.table({"id": pa.array(range(100), pa.int64()), "x": pa.array(range(100), pa.int64())}), root / "a.parquet")
    second = {"id": pa.array(range(100, 200), pa.int32()), "x": pa.array(range(100), pa.int64()), "y": pa.array(range(100), pa.int64())}
    pq.write_table(pa.table(second), root / "b.parquet", row_group_size=30)
    return root


def _read_in_tasks(plan: TaskPlan, columns: list[str] | None, where: str | None) -> tuple[pa.Table, list[dict[str, Any]]]:
    """Every task's pieces read as a Spark task reads them; the batches and each task's counts."""
    counts: list[dict[str, Any]] = []
    batches = [
        batch
        for task in plan.tasks
        for batch in read_pieces(
            task.to_rows(), columns, where, partition_schema=plan.partition_schema, table=plan.table, report=counts.append
        )
    ]
    return pa.Table.from_batches(batches), counts


def _sources(hive: Path, evolved: Path) -> list[tuple[str, Path, list[str] | None, str | None]]:
    return [
        ("hive, partition and page filter", hive, ["id", "text", "day"], "day >= 1 AND (id % 700 < 40 OR id BETWEEN 6100 AND 6170)"),
        ("hive, no filter", hive, ["text"], None),
        ("evolved schema", evolved, None, "id > 50 AND x % 7 < 3"),
        ("delta, deletion vectors", DELTA / "tables" / "table-with-dv-small", None, "value > 4"),
        ("delta, deletion vectors and column mapping", DELTA / "golden" / "dv-with-columnmapping" / "delta", None, "part = 0 AND col1 > 5"),
    ]


@pytest.mark.parametrize("case", range(5), ids=["hive-filtered", "hive-all", "evolved", "delta-dv", "delta-dv-mapping"])
def test_tasks_read_the_rows_of_a_scan_without_opening_a_file(case: int, hive: Path, evolved: Path) -> None:
    name, source, columns, where = _sources(hive, evolved)[case]
    if not source.exists():
        pytest.skip(f"{source} is not there")
    expected = pqsift.scan(source, columns, where, spark_output=True).to_table()
    plan = plan_tasks(source, columns, where, target_task_bytes=1)  # a task per row group
    pieces = [piece for task in plan.tasks for piece in task.pieces]
    assert pieces and all(piece.plan for piece in pieces), name
    before = _core.metadata_cache_stats()
    got, counts = _read_in_tasks(plan, columns, where)
    # No footer was asked of the metadata cache (hit or miss): the plans carried them.
    assert _core.metadata_cache_stats() == before, name
    assert got.num_rows == expected.num_rows > 0, name
    key = expected.schema.names[0]
    assert got.cast(expected.schema).sort_by(key).equals(expected.sort_by(key)), name
    assert sum(c["row_groups_read"] for c in counts) == sum(len(piece.row_groups or ()) for piece in pieces)
    assert sum(c["rows_out"] for c in counts) == expected.num_rows


def test_page_selections_travel_with_the_plan(hive: Path) -> None:
    """The driver's page-index selections reach the task: it decodes the selected pages'
    rows, not the row groups'."""
    where = "id BETWEEN 6100 AND 6170"
    plan = plan_tasks(hive, ["id"], where)
    got, counts = _read_in_tasks(plan, ["id"], where)
    assert got.column("id").to_pylist() == list(range(6100, 6171))
    assert sum(c["rows_decoded"] for c in counts) <= 200  # two 100-row pages, not a 500-row group


def _one_plan(hive: Path) -> bytes:
    plan = plan_tasks(hive, ["id"], "id < 10")
    (piece,) = [piece for task in plan.tasks for piece in task.pieces]
    assert piece.plan is not None
    return piece.plan


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda plan: plan[:-7], "checksum"),
        (lambda plan: plan[:-1] + bytes([plan[-1] ^ 0x20]), "checksum"),
        (lambda plan: plan[:8] + b"\x09\x00" + plan[10:], "format version 9"),
        (lambda plan: b"PAR1" + plan[4:], "not a pqsift task plan"),
        (lambda plan: b"", "not a pqsift task plan"),
    ],
    ids=["cut short", "a bit flipped", "another version", "not a plan", "empty"],
)
def test_a_damaged_plan_is_refused(hive: Path, damage: Any, reason: str) -> None:
    with pytest.raises(pqsift.TaskPlanError) as raised:
        _core.read_task(damage(_one_plan(hive)))
    assert isinstance(raised.value, ValueError)
    assert reason in str(raised.value) and raised.value.reason is not None and reason in raised.value.reason


def test_a_plan_reads_alone(hive: Path) -> None:
    """The bytes are all a task needs (with the read options): the rows, and how long
    loading the plan took."""
    stream, seconds = _core.read_task(_one_plan(hive), {"threads": 1})
    table = pa.Table.from_batches([pa.record_batch(batch) for batch in stream])
    assert table.column("id").to_pylist() == list(range(10))
    assert 0 <= seconds < 1


def test_a_tasks_error_names_the_row_group_by_its_number_in_the_file(tmp_path: Path) -> None:
    """A task's footer holds only the row groups it reads; its errors still name them as the
    file numbers them."""
    path = tmp_path / "damaged.parquet"
    pq.write_table(pa.table({"id": pa.array(range(4000), pa.int64())}), path, row_group_size=1000, compression="zstd")
    chunk = pq.ParquetFile(path).metadata.row_group(2).column(0)
    data = bytearray(path.read_bytes())
    middle = chunk.data_page_offset + chunk.total_compressed_size // 2
    data[middle : middle + 64] = b"\xff" * 64  # inside row group 2's compressed pages
    path.write_bytes(bytes(data))
    plan = plan_tasks(path, ["id"], None, target_task_bytes=1)  # a task per row group
    pieces = [piece for task in plan.tasks for piece in task.pieces]
    assert [list(piece.row_groups or ()) for piece in pieces] == [[0], [1], [2], [3]]
    assert all(piece.plan is not None for piece in pieces)
    for piece in pieces[:2] + pieces[3:]:
        stream, _ = _core.read_task(piece.plan, {"threads": 1})
        assert sum(pa.record_batch(batch).num_rows for batch in stream) == 1000
    with pytest.raises(pqsift.CorruptFileError) as raised:
        stream, _ = _core.read_task(pieces[2].plan, {"threads": 1})
        for _ in stream:
            pass
    assert "row group 2" in str(raised.value), str(raised.value)
    assert raised.value.path == str(path)
