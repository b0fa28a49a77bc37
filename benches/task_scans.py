"""Lazy planning in Spark: a task's files scanned one by one against scanned together.

With lazy planning each task is given whole small files with what the table's metadata says
of them (table pieces). A task used to scan each file alone, paying the planning and the
stream start of a scan per file; it now scans its files as one table. ``ignore_corrupt_files=True``
keeps the one-by-one reads (a corrupt file must fail only its own scan), so it is the "a
scan per file" mode here, with the same build.

Tables: ``benches/lazy_planning.py``'s (``--files`` files of 1,000 rows in ten Hive
partitions) and ``benches/iceberg.py``'s (10,000 files of 100 rows in 500 manifests, read
with the driver reading every manifest, then lazy planning). Spark ``local[2]``, one session
warmed up first; rounds interleave the modes (and Spark's own reader on the Hive table)
after one untimed round; the best of ``--repeat``, wall / driver CPU in ms. Results go to
``benches/results/task_scans.md``.

    .venv/bin/python benches/task_scans.py [--files 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pqsift
import pqsift.spark
from iceberg import ROOT, bench_queries, timed
from iceberg_planning import ALLOWED, local_spark, ms, table_root
from lazy_planning import ensure
from pqsift.spark import planning

MODES = {"a scan per file": {"ignore_corrupt_files": True}, "a scan per task": {}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benches" / "results" / "task_scans.md")
    args = parser.parse_args()
    hive = ROOT / "data" / f"lazy-{args.files}"
    ensure(hive, args.files)
    iceberg = table_root(10_000, 20)
    iceberg_queries = bench_queries(10_000)
    # The driver reads every manifest: the tasks get table pieces, not manifests.
    planning.MANIFESTS_READ_BY_TASKS = 1 << 40

    spark = local_spark()

    def pqsift_read(source: str, columns: list[str], sql: str | None, count: bool, **options: Any) -> Callable[[], int]:
        def run() -> int:
            pqsift._core.clear_metadata_cache()
            frame = pqsift.spark.read(spark, source, columns, sql, lazy=True, **options)
            return frame.count() if count else len(frame.collect())

        return run

    def native(columns: list[str], sql: str, count: bool) -> Callable[[], int]:
        def run() -> int:
            frame = spark.read.parquet(str(hive)).filter(sql).select(*columns)
            return frame.count() if count else len(frame.collect())

        return run

    queries: dict[str, dict[str, Callable[[], int]]] = {}
    hive_queries = {
        f"Hive, {args.files:,} files: day >= 5 AND id < 100": (["id", "v"], "day >= 5 AND id < 100", False),
        f"Hive, {args.files:,} files: count day >= 5": (["id"], "day >= 5", True),
    }
    for name, (columns, sql, count) in hive_queries.items():
        queries[name] = {
            mode: pqsift_read(str(hive), columns, sql, count, **options) for mode, options in MODES.items()
        }
        queries[name]["Spark's reader"] = native(columns, sql, count)
    for name in ("selective with text", "count one column"):
        query = iceberg_queries[name]
        queries[f"Iceberg, 10,000 files: {name}"] = {
            mode: pqsift_read(
                iceberg, query["columns"], query["sql"], name.startswith("count"), allowed_locations=ALLOWED, **options
            )
            for mode, options in MODES.items()
        }

    best: dict[tuple[str, str], tuple[float, float, int]] = {}
    rows_of: dict[str, int] = {}
    for round_ in range(args.repeat + 1):
        for name, runs in queries.items():
            for mode, run in runs.items():
                result = timed(run)
                if rows_of.setdefault(name, result[2]) != result[2]:
                    raise SystemExit(f"{name}: {mode} gave {result[2]} rows, another mode {rows_of[name]}")
                if round_ and ((name, mode) not in best or result[0] < best[(name, mode)][0]):
                    best[(name, mode)] = result
    spark.stop()

    per_file, per_task = MODES
    lines = [
        "# Lazy planning in Spark: a task's files scanned one by one or together",
        "",
        f"`benches/task_scans.py --files {args.files} --repeat {args.repeat}`: Spark `local[2]`; "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. "
        "Best of the runs; wall / driver CPU in ms.",
        "",
        f"| query | rows | {per_file} | {per_task} | time ratio | Spark's reader |",
        "|---|---:|---|---|---:|---|",
    ]
    for name in queries:
        a, b = best[(name, per_file)], best[(name, per_task)]
        native_run = best.get((name, "Spark's reader"))
        spark_cell = "–" if native_run is None else f"{native_run[0] * 1e3:,.0f}"
        lines.append(f"| {name} | {rows_of[name]:,} | {ms(a)} | {ms(b)} | {b[0] / a[0]:.2f} | {spark_cell} |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
