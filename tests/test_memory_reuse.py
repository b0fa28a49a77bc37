"""Freed buffers are kept a moment and reused: the extension's allocator is jemalloc,
keeping freed pages 10 s (``rust/allocator.rs``), given back by its background thread.

Each case runs in a fresh subprocess (huge pages left to the kernel's ``madvise`` mode, so
that every 4 KiB page first touched counts one minor fault) that reads a 32 MiB-decoded
file three times with ``to_table()``, dropping each table before the next read, and counts
the page faults of each read (``ru_minflt``): the second read decodes into the pages the
first one freed; the third comes after 1.6 s idle: into the same pages again with the
default decay time, into fresh memory with ``dirty_decay_ms:1000`` (pqsift's
``PQSIFT_MALLOC_CONF``), since the freed pages were given back. With ``dirty_decay_ms:0``
nothing is kept. Polars imported first (it writes its own settings into jemalloc's shared
variable, ``_RJEM_MALLOC_CONF``) changes none of this.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROW_GROUPS, ROWS_PER_GROUP = 4, 500_000

_READ_THREE_TIMES = r"""
import json, os, resource, sys, time
if sys.argv[2] == "polars first":
    import polars
import pqsift

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

path = sys.argv[1]
counts, sums = [], []
for pause in (0.0, 0.0, 1.6):
    time.sleep(pause)
    before = faults()
    table = pqsift.scan(path, threads=1).to_table()
    counts.append(faults() - before)
    sums.append(int(table.column("id").to_numpy().sum()))
    del table
print(json.dumps({"faults": counts, "sums": sums, "shared": os.environ.get("_RJEM_MALLOC_CONF")}))
"""


@pytest.fixture(scope="module")
def numeric_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 row groups of 500,000 rows: int64 `id` and float64 `value`, plain (4 MB a column
    and row group decoded)."""
    path = tmp_path_factory.mktemp("memory_reuse") / "numeric.parquet"
    rows = ROW_GROUPS * ROWS_PER_GROUP
    ids = np.arange(rows, dtype=np.int64)
    table = pa.table({"id": ids, "value": ids * 0.5})
    pq.write_table(table, path, row_group_size=ROWS_PER_GROUP, use_dictionary=False, compression="zstd")
    return path


def read_three_times(path: Path, decay_ms: int | None = None, polars_first: bool = False) -> list[int]:
    conf = "thp:default" + ("" if decay_ms is None else f",dirty_decay_ms:{decay_ms}")
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    env["PQSIFT_MALLOC_CONF"] = conf
    order = "polars first" if polars_first else "pqsift alone"
    done = subprocess.run(
        [sys.executable, "-c", _READ_THREE_TIMES, str(path), order],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    rows = ROW_GROUPS * ROWS_PER_GROUP
    assert got["sums"] == [rows * (rows - 1) // 2] * 3
    # pqsift put the shared variable back as it found it: Polars' own, or none.
    assert (got["shared"] is not None) == polars_first, got["shared"]
    faults: list[int] = got["faults"]
    return faults


def test_freed_buffers_are_reused_then_given_back(numeric_file: Path) -> None:
    first, second, after_pause = read_three_times(numeric_file, decay_ms=1000)
    # 32 MiB of output alone is 8,192 pages: the first read faults nearly all of them.
    assert first >= 7_000, (first, second, after_pause)
    assert second < first / 4, f"the second read should reuse the first one's pages: {(first, second, after_pause)}"
    assert after_pause > first / 2, f"freed pages should be given back after 1 s idle: {(first, second, after_pause)}"


@pytest.mark.parametrize("polars_first", [False, True], ids=["pqsift alone", "polars imported first"])
def test_freed_buffers_are_kept_through_a_pause_by_default(numeric_file: Path, polars_first: bool) -> None:
    if polars_first:
        pytest.importorskip("polars")
    first, second, after_pause = read_three_times(numeric_file, polars_first=polars_first)
    assert first >= 7_000, (first, second, after_pause)
    assert second < first / 4, (first, second, after_pause)
    assert after_pause < first / 4, (
        f"freed pages should outlive a 1.6 s pause by default: {(first, second, after_pause)}"
    )


def test_nothing_is_kept_when_decay_is_zero(numeric_file: Path) -> None:
    first, second, _ = read_three_times(numeric_file, decay_ms=0)
    assert second > first / 2, (first, second)


_STARTED_WITH = r"""
import json, os, sys
if sys.argv[1] == "polars first":
    import polars
import pqsift
from pqsift._allocator import STARTED_WITH
print(json.dumps({"started_with": STARTED_WITH, "shared": os.environ.get("_RJEM_MALLOC_CONF")}))
"""


@pytest.mark.parametrize(
    ("shared", "own", "order", "decay_ms"),
    [
        (None, None, "pqsift alone", 10_000),
        ("dirty_decay_ms:500,muzzy_decay_ms:1000", None, "pqsift alone", 10_000),
        (None, None, "polars first", 10_000),
        ("dirty_decay_ms:0", None, "polars first", 10_000),
        ("dirty_decay_ms:0", "dirty_decay_ms:1000", "pqsift alone", 1_000),
        (None, "dirty_decay_ms:1000,narenas:2", "polars first", 1_000),
    ],
)
def test_the_allocator_reads_its_own_variable(shared: str | None, own: str | None, order: str, decay_ms: int) -> None:
    """jemalloc's shared variable (which Polars writes when imported) leaves pqsift's
    allocator as built; ``PQSIFT_MALLOC_CONF`` overrides it; the shared variable is as it
    was after the import."""
    if order == "polars first":
        pytest.importorskip("polars")
    env = {k: v for k, v in os.environ.items() if k not in ("_RJEM_MALLOC_CONF", "PQSIFT_MALLOC_CONF")}
    if shared is not None:
        env["_RJEM_MALLOC_CONF"] = shared
    if own is not None:
        env["PQSIFT_MALLOC_CONF"] = own
    done = subprocess.run(
        [sys.executable, "-c", _STARTED_WITH, order], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["started_with"]["dirty_decay_ms"] == decay_ms, got
    assert got["started_with"]["narenas"] == (2 if own and "narenas:2" in own else 1), got
    if order == "polars first":
        # Polars' own settings, followed by what the variable held before.
        assert got["shared"].startswith("dirty_decay_ms:500"), got
        assert got["shared"].endswith(shared or "1000"), got
    else:
        assert got["shared"] == shared, got
