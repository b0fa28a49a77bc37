"""Table pieces scanned together: with lazy planning a Spark task is given what the table's
metadata says of each of its files (``Scan.table_pieces``) and scans all of them as one
table (``Scan(paths, table_pieces=pieces)``). That one scan must give the rows the whole
table gives — partition values, a Delta table's deletion vectors and column mapping, an
Iceberg table's identity fills, position and equality deletes — on every shared table
pqsift reads (tests/test_delta.py and tests/test_iceberg.py check those against the
expected rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import pqsift
from pqsift import _core
from pqsift.errors import PqsiftError
from pqsift.scan import _scan

SHARED = Path(__file__).resolve().parents[2] / "shared"
DELTA_GOLDEN = SHARED / "delta-testing" / "golden"
DELTA_KERNEL = SHARED / "delta-testing" / "tables"
ICEBERG = SHARED / "iceberg-testing" / "data" / "persistent"

# (table, filter): Delta tables with deletion vectors, column mapping, partitions and
# nested columns; Iceberg tables with equality and position deletes, identity fills, a
# name mapping.
TABLES = [
    (DELTA_GOLDEN / "dv-with-columnmapping" / "delta", None),
    (DELTA_GOLDEN / "log-replay-dv-key-cases" / "delta", None),
    (DELTA_GOLDEN / "table-with-columnmapping-mode-name" / "delta", None),
    (DELTA_GOLDEN / "data-reader-nested-struct" / "delta", None),
    (DELTA_GOLDEN / "time-travel-partition-changes-b" / "delta", None),
    (DELTA_GOLDEN / "data-reader-escaped-chars" / "delta", None),
    (DELTA_GOLDEN / "basic-decimal-table" / "delta", None),
    (DELTA_KERNEL / "table-with-dv-small", None),
    (ICEBERG / "equality_deletes/warehouse/mydb/mytable", None),
    (ICEBERG / "equality_deletes/warehouse/mydb/mytable_partitioned", "id >= 2"),
    (ICEBERG / "hive_partitioned_table", "event_type = 'view'"),
    (ICEBERG / "partition_integer", None),
    (ICEBERG / "iceberg_v1_repro/repro/merch_v1", None),
    (ICEBERG / "uuid", None),
]


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted((tuple(row.values()) for row in table.to_pylist()), key=repr)


def _pieces(root: Path, condition: str | None) -> tuple[pqsift.Scan, list[str], list[bytes]]:
    """The table's scan, and its files left by the table's metadata with their pieces."""
    planned = pqsift.scan(str(root), filter=condition)
    positions = [position for position, _ in planned._core.files_to_read()[0]]
    return planned, [planned.files[p] for p in positions], planned._core.table_pieces(positions)


@pytest.mark.parametrize(("root", "condition"), TABLES, ids=[f"{t[0].parent.name}/{t[0].name}" for t in TABLES])
def test_the_pieces_of_a_table_scanned_together_give_its_rows(root: Path, condition: str | None) -> None:
    if not root.is_dir():
        pytest.skip(f"{root} is not there")
    planned, paths, pieces = _pieces(root, condition)
    if len(pieces) < 2:
        pytest.skip("a table of fewer than two files scans nothing together")
    want = _rows(planned.to_table())
    together = _scan(paths, None, condition, {}, table_pieces=pieces)
    assert _rows(together.to_table()) == want
    assert together.metrics["files_total"] == len(pieces)
    # The same pieces scanned one by one, as a task with ignore_corrupt_files does.
    alone = [
        _scan([path], None, condition, {}, table_pieces=[piece]).to_table()
        for path, piece in zip(paths, pieces, strict=True)
    ]
    assert _rows(pa.concat_tables(alone)) == want


def test_a_limit_carries_from_one_piece_to_the_next(tmp_path: Path) -> None:
    """Scanned together, a limit counts the rows of every file: it is met in the second of
    six files and the last files are not read (one by one, a task would read all six, as
    each holds fewer matches than the limit). Small decode windows, about a file each; a
    window in flight when the limit is met may still be decoded."""
    import pyarrow.parquet as pq

    rows = 20_000
    for part in range(6):
        ids = pa.array(range(part * rows, (part + 1) * rows), pa.int64())
        pq.write_table(pa.table({"id": ids}), tmp_path / f"p{part}.parquet")
    _, paths, pieces = _pieces(tmp_path, None)
    options = {"limit": 12_000, "threads": 1, "decode_bytes": 1 << 20}
    together = _scan(paths, ["id"], "id % 2 = 0", options, table_pieces=pieces)
    assert together.to_table().column("id").to_pylist() == list(range(0, 24_000, 2))
    assert together.metrics["rows_decoded"] <= 3 * rows, str(together.metrics)


def test_pieces_must_match_their_sources_and_come_from_one_table(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    for table in ("a", "b"):
        (tmp_path / table).mkdir()
        for part in range(2):
            pq.write_table(pa.table({"id": [part]}), tmp_path / table / f"p{part}.parquet")
    _, paths, pieces = _pieces(tmp_path / "a", None)
    with pytest.raises(PqsiftError, match="read as 2 source"):
        _core.Scan(list(reversed(paths)), table_pieces=pieces)
    with pytest.raises(PqsiftError, match="read as 1 source"):
        _core.Scan(paths[:1], table_pieces=pieces)
    # A Hive table's pieces (partition values) beside a plain directory's.
    (tmp_path / "hive" / "day=1").mkdir(parents=True)
    pq.write_table(pa.table({"id": [7]}), tmp_path / "hive" / "day=1" / "p.parquet")
    _, hive_paths, hive_pieces = _pieces(tmp_path / "hive", None)
    with pytest.raises(PqsiftError, match="two tables"):
        _core.Scan([*paths, *hive_paths], table_pieces=[*pieces, *hive_pieces])
    with pytest.raises(PqsiftError, match="no table piece"):
        _core.Scan([], table_pieces=[])


def test_a_task_scans_its_lazy_files_together_and_every_other_row_alone() -> None:
    from pqsift.spark.reader import SCAN_FILES_TOGETHER, _scans

    def lazy(name: str) -> dict[str, Any]:
        return {"path": name, "plan": b"piece", "row_groups": None}

    ranged = {"path": "big", "plan": b"piece", "row_groups": None, "range_start": 0, "range_length": 10}
    planned = {"path": "p", "plan": b"plan", "row_groups": [0]}
    rows = [
        lazy("a"),
        lazy("b"),
        ranged,
        lazy("c"),
        planned,
        *(lazy(f"m{i}") for i in range(SCAN_FILES_TOGETHER + 1)),
    ]
    groups = [[row["path"] for row in group] for group in _scans(rows, together=True)]
    many = [f"m{i}" for i in range(SCAN_FILES_TOGETHER + 1)]
    assert groups == [["a", "b"], ["big"], ["c"], ["p"], many[:-1], many[-1:]]
    assert all(len(group) == 1 for group in _scans(rows, together=False))
