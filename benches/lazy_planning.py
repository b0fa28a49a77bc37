"""Planning at scale (issue 14): time to plan Spark tasks for N small files, eager (every
footer read on the driver) against lazy (no footer read; tasks plan their own files), on
local files. Each run starts a fresh process, so the metadata cache is cold.

    python benches/lazy_planning.py [--files 1000,10000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

CHILD = """
import sys, time
from pqsift import _core
from pqsift.spark.planning import plan_tasks
started = time.perf_counter()
plan = plan_tasks(sys.argv[1], ["id"], "day >= 5 AND id < 100", lazy=sys.argv[2] == "lazy", parallelism=8)
print(f"{time.perf_counter() - started:.3f} {len(plan.tasks)} {_core.metadata_cache_stats()[1]}")
"""


def ensure(root: Path, files: int) -> None:
    if len(list(root.glob("day=*/*.parquet"))) == files:
        return
    table = pa.table({"id": pa.array(range(1000), pa.int64()), "v": pa.array([float(i) for i in range(1000)])})
    for i in range(files):
        directory = root / f"day={i % 10}"
        directory.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, directory / f"f{i:06d}.parquet", row_group_size=250)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", default="1000,10000")
    args = parser.parse_args()
    print("| files | mode | plan (s) | tasks | footers read on the driver |")
    print("|---|---|---|---|---|")
    for files in (int(n) for n in args.files.split(",")):
        root = Path(f"data/lazy-{files}")
        ensure(root, files)
        for mode in ("eager", "lazy"):
            out = subprocess.run([sys.executable, "-c", CHILD, str(root), mode], capture_output=True, text=True, check=True).stdout.split()
            print(f"| {files:,} | {mode} | {out[0]} | {out[1]} | {out[2]} |", flush=True)


if __name__ == "__main__":
    main()
