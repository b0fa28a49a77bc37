"""A scan is read from its own plan, in the core: the row groups and page selections
planning kept become the reader's tasks over the footers planning read — no file is looked
up or opened again — and the read options have one definition, the core's."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift
from pqsift import _core


@pytest.fixture
def table_dir(tmp_path: Path) -> Path:
    for part in range(3):
        ids = pa.array(range(part * 1000, part * 1000 + 1000), pa.int64())
        pq.write_table(
            pa.table({"id": ids, "text": pa.array([f"t{i}" for i in range(1000)])}),
            tmp_path / f"part-{part}.parquet",
            row_group_size=100,
        )
    return tmp_path


def test_reading_opens_no_file_planning_opened(table_dir: Path) -> None:
    scan = pqsift.scan(table_dir, filter="id >= 1150 AND id < 1420", threads=1)
    hits, misses = _core.metadata_cache_stats()
    scan.plan()
    planned_hits, planned_misses = _core.metadata_cache_stats()
    table = scan.to_table()
    assert table.column("id").to_pylist() == list(range(1150, 1420))
    # The read re-plans in the core (statistics from the footers it holds) and opens nothing:
    # the metadata cache is not asked again.
    assert _core.metadata_cache_stats() == (planned_hits, planned_misses), (hits, misses)
    assert scan.metrics["row_groups_pruned_statistics"] == 26  # 4 of 30 row groups hold 1150..1419
    assert scan.metrics["time_plan_s"] >= 0


def test_a_pruned_scan_still_has_its_schema(table_dir: Path) -> None:
    table = pqsift.scan(table_dir, ["text"], filter="id < 0").to_table()
    assert table.num_rows == 0 and table.schema.names == ["text"]


def test_read_option_defaults_are_the_cores() -> None:
    defaults = _core.read_option_defaults()
    assert defaults["batch_size"] == 8192 and defaults["cache_bytes"] == 64 << 20
    assert defaults["threads"] is None and defaults["selection_policy"] == "auto"
    from pqsift.scan import _READ_OPTIONS

    assert defaults == _READ_OPTIONS


@pytest.mark.parametrize(
    ("given", "meant"), [("bach_size", "batch_size"), ("Statistics", "statistics"), ("page-index", "page_index")]
)
def test_a_misspelt_option_names_the_one_meant(table_dir: Path, given: str, meant: str) -> None:
    with pytest.raises(TypeError, match=f"unknown option '{given}'; did you mean '{meant}'"):
        pqsift.scan(table_dir, **{given: 1})


def test_the_core_refuses_an_unknown_read_option_too(table_dir: Path) -> None:
    core = _core.Scan([str(table_dir)])
    with pytest.raises(TypeError, match='unknown option "decode_byte"; did you mean "decode_bytes"'):
        core.read({"decode_byte": 1})
    with pytest.raises(TypeError, match="option batch_size"):
        core.read({"batch_size": "many"})
    stream, _ = core.read({"batch_size": 7, "limit": 10})
    assert sum(pa.record_batch(batch).num_rows for batch in stream) == 10
