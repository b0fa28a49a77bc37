"""Large freed buffers are kept a moment and reused (``rust/allocator/retained.rs``).

Each case runs in a fresh subprocess (huge pages off, so that every 4 KiB page first
touched counts one minor fault) that reads a 32 MiB-decoded file three times with
``to_table()``, dropping each table before the next read, and counts the page faults of
each read (``ru_minflt``): the second read decodes into the buffers the first one freed;
the third comes after 1.6 s idle: into the same buffers again with the default retention
(10 s), into fresh memory with ``PQSIFT_RETAIN_MS=1000``, since the kept blocks were given
back. With ``PQSIFT_RETAIN_MIB=0`` nothing is kept.
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
import json, resource, sys, time
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
print(json.dumps({"faults": counts, "sums": sums}))
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


def read_three_times(path: Path, retain_mib: int | None = None, retain_ms: int | None = None) -> dict[str, list[int]]:
    env = dict(os.environ, PQSIFT_HUGE_PAGES="0")
    for name, value in (("PQSIFT_RETAIN_MIB", retain_mib), ("PQSIFT_RETAIN_MS", retain_ms)):
        env.pop(name, None)
        if value is not None:
            env[name] = str(value)
    done = subprocess.run([sys.executable, "-c", _READ_THREE_TIMES, str(path)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    rows = ROW_GROUPS * ROWS_PER_GROUP
    assert got["sums"] == [rows * (rows - 1) // 2] * 3
    return got


def test_freed_buffers_are_reused_then_given_back(numeric_file: Path) -> None:
    first, second, after_pause = read_three_times(numeric_file, retain_ms=1000)["faults"]
    # 32 MiB of output alone is 8,192 pages: the first read faults nearly all of them (the
    # pages a block grown by `mremap` adds are populated by one madvise, which counts none).
    assert first >= 7_000, (first, second, after_pause)
    assert second < first / 4, f"the second read should reuse the first one's buffers: {(first, second, after_pause)}"
    assert after_pause > first / 2, f"kept blocks should be given back after 1 s idle: {(first, second, after_pause)}"


def test_freed_buffers_are_kept_through_a_pause_by_default(numeric_file: Path) -> None:
    first, second, after_pause = read_three_times(numeric_file)["faults"]
    assert first >= 7_000, (first, second, after_pause)
    assert second < first / 4, (first, second, after_pause)
    assert after_pause < first / 4, f"kept blocks should outlive a 1.6 s pause by default: {(first, second, after_pause)}"


def test_nothing_is_kept_when_retention_is_off(numeric_file: Path) -> None:
    first, second, _ = read_three_times(numeric_file, retain_mib=0)["faults"]
    assert second > first / 2, (first, second)
