"""The process-wide metadata cache's bound: ``pqsift.set_metadata_cache_bytes``,
``pqsift.metadata_cache_usage`` and ``PQSIFT_METADATA_CACHE_BYTES`` read at import (how
Spark's executors set it, through ``spark.executorEnv``). The footers the cache keeps
are seen through ``_core.metadata_cache_stats``: a hit is a footer not read again."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift
from pqsift import _core

MiB = 1 << 20


@pytest.fixture
def bound_restored() -> Iterator[int]:
    """The bound before the test, set back after it (the cache is the process's)."""
    before = pqsift.metadata_cache_usage()[1]
    yield before
    pqsift.set_metadata_cache_bytes(before)


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    paths = []
    for number in range(3):
        path = tmp_path / f"part-{number}.parquet"
        pq.write_table(pa.table({f"c{i}": [number] for i in range(200)}), path)
        paths.append(path)
    return paths


def scan_twice(paths: list[Path]) -> tuple[int, int]:
    """Hits and misses of the metadata cache over two scans of each file."""
    hits, misses = _core.metadata_cache_stats()
    for _ in range(2):
        for path in paths:
            assert pqsift.scan(path, columns=["c0"]).to_table().num_rows == 1
    after = _core.metadata_cache_stats()
    return after[0] - hits, after[1] - misses


def test_the_default_bound_keeps_footers(bound_restored: int, files: list[Path]) -> None:
    assert bound_restored == 256 * MiB
    _core.clear_metadata_cache()
    hits, misses = scan_twice(files)
    assert misses == len(files) and hits >= len(files)
    held, bound = pqsift.metadata_cache_usage()
    assert 0 < held <= bound == 256 * MiB


def test_a_bound_of_zero_keeps_nothing(bound_restored: int, files: list[Path]) -> None:
    scan_twice(files)
    assert pqsift.metadata_cache_usage()[0] > 0
    assert pqsift.set_metadata_cache_bytes(0) == bound_restored
    assert pqsift.metadata_cache_usage() == (0, 0)
    hits, misses = scan_twice(files)
    assert hits == 0 and misses >= 2 * len(files)
    assert pqsift.metadata_cache_usage() == (0, 0)


def test_a_lowered_bound_evicts_the_least_recently_used(bound_restored: int, files: list[Path]) -> None:
    _core.clear_metadata_cache()
    scan_twice(files)
    held, _ = pqsift.metadata_cache_usage()
    one = held // len(files)
    # Room for about one footer: the last file read stays, the first goes.
    pqsift.set_metadata_cache_bytes(one + one // 2)
    held, bound = pqsift.metadata_cache_usage()
    assert 0 < held <= bound == one + one // 2
    hits, misses = _core.metadata_cache_stats()
    pqsift.scan(files[-1], columns=["c0"]).to_table()
    assert _core.metadata_cache_stats() == (hits + 1, misses)
    pqsift.scan(files[0], columns=["c0"]).to_table()
    assert _core.metadata_cache_stats() == (hits + 1, misses + 1)


@pytest.mark.parametrize("bad", [-1, 1.5, "1", True, None])
def test_a_bound_that_is_not_bytes_is_refused(bound_restored: int, bad: object) -> None:
    error = ValueError if bad == -1 else TypeError
    with pytest.raises(error, match="metadata cache"):
        pqsift.set_metadata_cache_bytes(bad)  # type: ignore[arg-type]
    assert pqsift.metadata_cache_usage()[1] == bound_restored


def _import_with(value: str) -> subprocess.CompletedProcess[str]:
    code = "import pqsift; print(pqsift.metadata_cache_usage()[1])"
    env = {**os.environ, "PQSIFT_METADATA_CACHE_BYTES": value}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)


def test_the_environment_sets_the_bound_at_import() -> None:
    done = _import_with(" 12345 ")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "12345"


@pytest.mark.parametrize("value", ["12 MiB", "-5", ""])
def test_a_bad_environment_value_fails_the_import_naming_the_variable(value: str) -> None:
    done = _import_with(value)
    assert done.returncode != 0
    assert "ValueError" in done.stderr and "PQSIFT_METADATA_CACHE_BYTES" in done.stderr, done.stderr


def test_the_modules_example_runs(bound_restored: int) -> None:
    import doctest

    import pqsift.caches

    result = doctest.testmod(pqsift.caches)
    assert result.attempted > 0 and result.failed == 0
    assert pqsift.metadata_cache_usage()[1] == bound_restored
