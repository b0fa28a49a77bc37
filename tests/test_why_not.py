"""Explain says why a row group was kept: per stage, what could not be used (issue 13)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import pqsift


def _notes(path: Path, filter: str, **options: object) -> list[list[str]]:  # noqa: A002
    plan = pqsift.scan(str(path), filter=filter, **options).plan()
    return [rg.notes for rg in plan.files[0].row_groups if rg.decision != "skip"]


def test_nan_may_hide_named_only_where_it_alone_keeps_a_row_group(tmp_path: Path) -> None:
    """pyarrow records no nan_count: a float row group whose bounds alone would be pruned is
    kept because NaN may hide, and explain says so; with the bounds overlapping, no note."""
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"f": [0.1, 0.2, 0.3, 0.9, 1.0, 1.1]}), path, row_group_size=3)
    notes = _notes(path, "f > 0.5")
    assert any("statistics: NaN may hide in f (its statistics have no nan_count)" in n for n in notes[0]), notes
    assert not any("NaN" in n for n in notes[1]), notes
    assert "not pruned: statistics: NaN may hide in f" in pqsift.scan(str(path), filter="f > 0.5").explain()


def test_missing_statistics_bloom_filters_and_page_index_are_named(tmp_path: Path) -> None:
    path = tmp_path / "plain.parquet"
    table = pa.table({"id": pa.array(range(100), pa.int64()), "s": [f"v{i}" for i in range(100)]})
    pq.write_table(table, path, row_group_size=50, write_statistics=["s"], write_page_index=False)
    notes = _notes(path, "id = 7 AND s >= 'v'")
    assert "statistics: no min/max for id" in notes[0]
    assert "bloom filter: none for id" in notes[0]
    # No page index, and only s has statistics in its page headers.
    assert "page index: the file has none, nor statistics in the page headers of id" in notes[0]
    # s has statistics and its range overlaps: nothing to say about it.
    assert not any(" s" in n.split(":")[1] for n in notes[0] if n.startswith("statistics")), notes


def test_conditions_that_are_not_order_preserving_are_named(tmp_path: Path) -> None:
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"x": pa.array(range(10), pa.int64())}), path)
    (notes,) = _notes(path, "x * x > 50")
    assert notes[0] == "statistics: the condition on x is not an order-preserving function of one column compared with constants"


def test_pruned_and_fully_used_row_groups_have_no_notes(tmp_path: Path) -> None:
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"x": pa.array(range(100), pa.int64())}), path, row_group_size=50, write_page_index=True)
    plan = pqsift.scan(str(path), filter="x < 60").plan()
    assert [rg.notes for rg in plan.files[0].row_groups] == [[], []]
