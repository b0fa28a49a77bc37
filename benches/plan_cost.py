"""Planning cost per row group on a many-file dataset.

Writes FILES files of ROW_GROUPS row groups each (an int64 key, an int64 value, a string; page
index and a bloom filter on the key), then times ``pqsift.scan(dir, filter=...).plan()``
for a few filters and prints the cost per row group. Footers are read on every run (no
cache across scans).

    python benches/plan_cost.py [files] [row_groups] [rows_per_row_group]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import pqsift


def write_dataset(root: Path, files: int, row_groups: int, rows: int) -> None:
    for f in range(files):
        start = f * row_groups * rows
        n = row_groups * rows
        table = pa.table(
            {
                # Even keys only, so odd keys inside a row group's range are absent.
                "key": pa.array(range(2 * start, 2 * (start + n), 2), pa.int64()),
                "value": pa.array([i % rows for i in range(n)], pa.int64()),
                "name": pa.array([f"n{i % 5000:05d}" for i in range(n)], pa.string()),
            }
        )
        pq.write_table(
            table,
            root / f"part-{f:05d}.parquet",
            row_group_size=rows,
            write_page_index=True,
            data_page_size=1024,
            write_batch_size=64,
            bloom_filter_options={"key": {"ndv": rows, "fpp": 0.01}},
        )


def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    row_groups = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    total_rgs = files * row_groups
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_dataset(root, files, row_groups, rows)
        last_key = 2 * (files * row_groups * rows - 1)
        middle = 2 * (files * row_groups * rows // 2)  # the first key of a row group
        cases = {
            "no filter": None,
            "key range (statistics)": f"key BETWEEN {last_key // 2} AND {last_key // 2 + 5000}",
            "key = absent odd value (bloom)": f"key = {middle + 3}",
            "key = present value (all stages)": f"key = {middle + 4}",
            "value > max - 10 OR value < 5 (page index)": f"value > {rows - 10} OR value < 5",
        }
        print(f"dataset: {files} files x {row_groups} row groups x {rows} rows")
        for label, text in cases.items():
            best = float("inf")
            for _ in range(3):
                started = time.perf_counter()
                scan = pqsift.scan(root, filter=text)
                scan.plan()
                best = min(best, time.perf_counter() - started)
            m = scan.metrics
            print(
                f"{label:48s} {best * 1e3:8.1f} ms total  {best / total_rgs * 1e6:7.1f} us/row group  "
                f"(pruned: stats {m['row_groups_pruned_statistics']}, bloom {m['row_groups_pruned_bloom_filter']}, "
                f"pages {m['pages_pruned']}/{m['pages_total']})"
            )


if __name__ == "__main__":
    main()
