"""A scan is read from its own plan, in the core: the row groups and page selections
planning kept become the reader's tasks over the footers planning read — no footer is read
again — and the read options have one definition, the core's."""

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
    # The read re-plans in the core (statistics from the footers it holds) and reads no
    # footer again: no miss. (A footer the plan let go, a pruned file's, is looked up in the
    # metadata cache again: a hit.)
    assert _core.metadata_cache_stats()[1] == planned_misses, (hits, misses)
    assert _core.metadata_cache_stats()[0] <= planned_hits + 2, (hits, misses)
    assert scan.metrics["row_groups_pruned_statistics"] == 26  # 4 of 30 row groups hold 1150..1419
    assert scan.metrics["time_plan_s"] >= 0


def test_a_cleared_metadata_cache_reads_each_footer_again(table_dir: Path) -> None:
    """Planned twice, the three footers are read once; after `clear_metadata_cache`, again."""
    pqsift.scan(table_dir).plan()
    _, misses = _core.metadata_cache_stats()
    pqsift.scan(table_dir).plan()
    assert _core.metadata_cache_stats()[1] == misses
    _core.clear_metadata_cache()
    pqsift.scan(table_dir).plan()
    assert _core.metadata_cache_stats()[1] == misses + 3


def test_a_pruned_scan_still_has_its_schema(table_dir: Path) -> None:
    table = pqsift.scan(table_dir, ["text"], filter="id < 0").to_table()
    assert table.num_rows == 0 and table.schema.names == ["text"]


def test_read_option_defaults_are_the_cores() -> None:
    defaults = _core.read_option_defaults()
    assert defaults["batch_size"] == 8192 and defaults["cache_bytes"] == 64 << 20
    assert defaults["threads"] is None and defaults["selection_policy"] == "auto"
    assert defaults == pqsift.READ_OPTIONS


@pytest.mark.parametrize(
    ("given", "meant"), [("bach_size", "batch_size"), ("Statistics", "statistics"), ("page-index", "page_index")]
)
def test_a_misspelt_option_names_the_one_meant(table_dir: Path, given: str, meant: str) -> None:
    with pytest.raises(TypeError, match=f"unknown option '{given}'; did you mean '{meant}'"):
        pqsift.scan(table_dir, **{given: 1})


def test_the_core_refuses_an_unknown_read_option_too(table_dir: Path) -> None:
    core = _core.Scan([str(table_dir)])
    with pytest.raises(TypeError, match="unknown option 'decode_byte'; did you mean 'decode_bytes'"):
        core.read({"decode_byte": 1})
    with pytest.raises(TypeError, match="option batch_size"):
        core.read({"batch_size": "many"})
    stream, _ = core.read({"batch_size": 7, "limit": 10})
    assert sum(pa.record_batch(batch).num_rows for batch in stream) == 10


def test_the_typed_options_are_the_cores(table_dir: Path) -> None:
    """``pqsift.ScanOptions`` (the typed keyword arguments of ``scan``) names exactly the
    core's options, planning and reading apart; the options of files planned elsewhere
    (a Spark task's) are not among them."""
    typed = set(pqsift.ScanOptions.__annotations__)
    assert typed == set(pqsift.PLANNING_OPTIONS) | set(pqsift.READ_OPTIONS)
    assert not set(pqsift.PLANNING_OPTIONS) & set(pqsift.READ_OPTIONS)
    assert _core.scan_option_defaults() == pqsift.PLANNING_OPTIONS
    for internal in ("partition_values", "declared_schema", "deletion_vector"):
        with pytest.raises(TypeError, match=f"unknown option '{internal}'"):
            pqsift.scan(table_dir, **{internal: None})  # type: ignore[misc]


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"batch_size": True}, TypeError, "option batch_size: a bool"),
        ({"statistics": 1}, TypeError, "option statistics"),
        ({"metadata_size_hint": -1}, ValueError, "option metadata_size_hint must not be negative"),
        ({"row_groups": [0, -2]}, ValueError, "option row_groups must not be negative"),
        ({"decode_bytes": 0}, ValueError, "option decode_bytes must be at least 1"),
        ({"selection_policy": "fastest"}, ValueError, "option selection_policy"),
        ({"version": 1, "timestamp": "2026-01-01"}, ValueError, "version or a timestamp"),
        ({"session_time_zone": 3}, TypeError, "option session_time_zone"),
    ],
)
def test_the_core_checks_each_option(table_dir: Path, options: dict[str, object], error: type, words: str) -> None:
    source = table_dir / "part-0.parquet"
    with pytest.raises(error, match=words):
        pqsift.scan(source, **options)  # type: ignore[arg-type]


def test_a_read_of_many_files_refuses_one_rewritten_after_planning(tmp_path: Path) -> None:
    """A read of more files than it opens at once (here one: ``footer_bytes_read_together``
    below any footer) opens the later ones' footers when it reaches them, and checks each
    against the plan: a file rewritten in between is refused with its path, after the rows
    of the files before it, never read with the plan made for its old row groups."""
    files = 20
    for part in range(files):
        pq.write_table(pa.table({"id": pa.array([part], pa.int64())}), tmp_path / f"part-{part:03d}.parquet")
    reader = iter(pqsift.scan(tmp_path, threads=1, batch_size=1, footer_bytes_read_together=1))
    ids = [next(reader).column(0)[0].as_py()]
    last = tmp_path / f"part-{files - 1:03d}.parquet"
    pq.write_table(pa.table({"id": pa.array([7, 8], pa.int64())}), last, row_group_size=1)
    with pytest.raises(pqsift.CorruptFileError) as raised:
        ids.extend(batch.column(0)[0].as_py() for batch in reader)
    assert ids == list(range(files - 1))
    assert raised.value.path == str(last)
    assert "changed after the scan was planned" in str(raised.value)


def test_a_read_of_more_footers_than_the_cache_holds_finds_the_first_ones_cached(tmp_path: Path) -> None:
    """Eight files, each read in a group of its own, with the metadata cache bounded to four
    footers. Planning reads every footer and the read reopens files 2–8 in the same order:
    under plain LRU each footer planning cached was evicted before the read reached it (15
    footers read, and 15 again the next time). The scan's loads spare what it used itself,
    so files 1–4 stay cached: the read finds 2–4, and the next scan finds 1–4 when it plans
    and 2–4 again when it reads."""
    files = 8
    columns = {f"c{i}": pa.array(range(5), pa.int64()) for i in range(40)}
    pq.write_table(pa.table(columns), tmp_path / "part-0.parquet")
    for number in range(1, files):
        (tmp_path / f"part-{number}.parquet").write_bytes((tmp_path / "part-0.parquet").read_bytes())
    before = pqsift.metadata_cache_usage()[1]
    try:
        _core.clear_metadata_cache()
        pqsift.set_metadata_cache_bytes(1 << 30)
        pqsift.scan(tmp_path).plan()
        entry = pqsift.metadata_cache_usage()[0] // files
        _core.clear_metadata_cache()
        pqsift.set_metadata_cache_bytes(4 * entry + entry // 2)

        def footers_read() -> int:
            misses = _core.metadata_cache_stats()[1]
            table = pqsift.scan(tmp_path, threads=1, footer_bytes_read_together=1).to_table()
            assert table.num_rows == 5 * files
            return _core.metadata_cache_stats()[1] - misses

        assert footers_read() == files + (files - 4)
        assert footers_read() == 2 * (files - 4)
    finally:
        pqsift.set_metadata_cache_bytes(before)
        _core.clear_metadata_cache()
