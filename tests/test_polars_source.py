"""``pqsift.polars.scan``: a Polars LazyFrame read by pqsift gives the rows of Polars' own
``scan_parquet`` for the same query, and its projection, predicate and limit reach pqsift
(the filter pqsift is given is checked, not only the rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pl = pytest.importorskip("polars")

import pqsift.polars  # noqa: E402


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("polars") / "events.parquet"
    n = 5000
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "kind": pa.array([None if i % 17 == 0 else ["a", "b", "c"][i % 3] for i in range(n)]),
            "amount": pa.array([float("nan") if i % 101 == 0 else None if i % 13 == 0 else i * 0.25 for i in range(n)]),
            "ratio": pa.array([1.1 if i % 2 else i / 7 for i in range(n)], pa.float32()),
            "flag": pa.array([i % 4 == 0 for i in range(n)]),
            "a.b": pa.array([i % 9 for i in range(n)], pa.int32()),
            "note": pa.array([f"note {i}" for i in range(n)]),
        }
    )
    pq.write_table(table, path, row_group_size=500)
    return path


def _queries() -> list[tuple[str, Any]]:
    col = pl.col
    return [
        ("range", col("id").is_between(1200, 1450)),
        ("and of kinds", (col("amount") > 100) & (col("kind") == "b")),
        ("or", (col("id") < 20) | (col("kind").is_null() & (col("id") > 4980))),
        ("not equal and is_in with null", (col("kind") != "a") & col("kind").is_in(["b", None])),
        ("not is_in", ~col("kind").is_in(["a", "b"])),
        ("nan compares largest", col("amount") > 1200.0),
        ("float32 against a float literal", col("ratio") <= 1.1),
        ("boolean column", col("flag") & (col("id") >= 4000)),
        ("dotted name", (col("a.b") == 3) & (col("id") < 200)),
        ("between open", col("id").is_between(10, 20, closed="none")),
        ("an expression pqsift does not take", (col("note").str.len_chars() > 8) & (col("id") < 50)),
    ]


@pytest.mark.parametrize("query", _queries(), ids=[name for name, _ in _queries()])
def test_rows_are_polars_own(events: Path, query: tuple[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    name, predicate = query
    filters: list[str | None] = []
    original = pqsift.polars._pqsift_scan

    def recording(source: Any, columns: Any = None, filter: Any = None, **options: Any) -> Any:  # noqa: A002
        filters.append(filter)
        return original(source, columns, filter, **options)

    monkeypatch.setattr(pqsift.polars, "_pqsift_scan", recording)
    got = pqsift.polars.scan(events).filter(predicate).select("id", "kind", "amount").collect()
    expected = pl.scan_parquet(events).filter(predicate).select("id", "kind", "amount").collect()
    assert got.equals(expected), name
    pushed = filters[-1]
    if name in ("float32 against a float literal",):
        assert pushed is None, pushed  # left to Polars: the literal is rounded differently
    else:
        assert pushed is not None, name


def test_projection_and_limit_reach_pqsift(events: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, Any, dict[str, Any]]] = []
    original = pqsift.polars._pqsift_scan

    def recording(source: Any, columns: Any = None, filter: Any = None, **options: Any) -> Any:  # noqa: A002
        calls.append((columns, filter, options))
        return original(source, columns, filter, **options)

    monkeypatch.setattr(pqsift.polars, "_pqsift_scan", recording)
    frame = pqsift.polars.scan(events).filter(pl.col("id") >= 4000).select("id", "a.b").head(7).collect()
    assert frame["id"].to_list() == list(range(4000, 4007))
    columns, pushed, _ = calls[-1]
    assert sorted(columns) == ["`a.b`", "`id`"] and pushed == "(`id` >= 4000)"
    # Polars hands a limit to a source only without a predicate (it slices after filtering).
    assert pqsift.polars.scan(events).select("note").head(3).collect()["note"].to_list() == ["note 0", "note 1", "note 2"]
    columns, pushed, options = calls[-1]
    assert columns == ["`note`"] and pushed is None and options["limit"] == 3


def test_the_schema_is_pqsifts_without_reading(events: Path) -> None:
    frame = pqsift.polars.scan(events, ["id", "note"], "id < 3")
    assert frame.collect_schema().names() == ["id", "note"]
    assert frame.collect()["id"].to_list() == [0, 1, 2]
