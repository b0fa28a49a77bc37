"""Distributed planning of an Iceberg table with many manifests in Spark: the driver reading
every manifest (then lazy planning: tasks read footers) against the tasks reading the
manifests (the driver reads the manifest list and one manifest).

The table is ``benches/iceberg.py``'s (``--files`` files of 100 rows, ``--per-manifest``
files a manifest, built once under ``data/iceberg_bench/``), and so are the queries.

1. **Driver planning**: ``plan_tasks(..., lazy=True)`` with ``MANIFESTS_READ_BY_TASKS``
   above the table's manifests ("driver reads manifests") and at its default ("tasks read
   manifests"), pqsift's caches emptied before each run: wall and CPU seconds, tasks.
2. **Spark** (``local[2]``, one session, warmed up first): ``pqsift.spark.read(...)``
   collected (``count()`` for the count query) in both modes, the driver's caches emptied
   before each run (the Python workers keep theirs between tasks, as they do in a job).

Round robin over modes and queries after one untimed round; the best of ``--repeat``.
Results go to ``benches/results/iceberg_planning.md``.

    .venv/bin/python benches/iceberg_planning.py [--files 10000] [--per-manifest 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pqsift
import pqsift.spark
from iceberg import ROOT, bench_queries, build, timed
from pqsift.spark import planning

#: add_files registered the data files where they were written, outside the table's root.
ALLOWED = [str(ROOT / "data" / "iceberg_bench" / "files")]
MODES = {"driver reads manifests": 1 << 40, "tasks read manifests": planning.MANIFESTS_READ_BY_TASKS}


def table_root(files: int, per_manifest: int) -> str:
    directory = ROOT / "data" / "iceberg_bench"
    build(directory, files, per_manifest)
    return str(json.loads((directory / f"built-{files}-{per_manifest}.json").read_text())["location"]).removeprefix(
        "file://"
    )


def plan_once(root: str, query: dict[str, Any], mode: str) -> tuple[float, float, int]:
    pqsift._core.clear_metadata_cache()
    planning.MANIFESTS_READ_BY_TASKS = MODES[mode]
    wall, cpu, plan = timed(
        lambda: planning.plan_tasks(
            root, query["columns"], query["sql"], lazy=True, parallelism=2, allowed_locations=ALLOWED
        )
    )
    return wall, cpu, len(plan.tasks)


def spark_once(spark: Any, root: str, name: str, query: dict[str, Any], mode: str) -> tuple[float, float, int]:
    pqsift._core.clear_metadata_cache()
    planning.MANIFESTS_READ_BY_TASKS = MODES[mode]

    def run() -> int:
        frame = pqsift.spark.read(spark, root, query["columns"], query["sql"], lazy=True, allowed_locations=ALLOWED)
        return frame.count() if name.startswith("count") else len(frame.collect())

    return timed(run)


def local_spark() -> Any:
    """A ``local[2]`` Spark session, its JVM warmed up by a first job."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.range(10).collect()
    return spark


def ms(result: tuple[float, float, int]) -> str:
    """A best run as ``wall / CPU`` milliseconds."""
    return f"{result[0] * 1e3:,.0f} / {result[1] * 1e3:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--per-manifest", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benches" / "results" / "iceberg_planning.md")
    args = parser.parse_args()
    root = table_root(args.files, args.per_manifest)
    queries = bench_queries(args.files)
    manifests = args.files // args.per_manifest
    if manifests <= planning.MANIFESTS_READ_BY_TASKS:
        raise SystemExit(f"{manifests} manifests: distributed planning starts above {planning.MANIFESTS_READ_BY_TASKS}")

    best: dict[tuple[str, str, str], tuple[float, float, int]] = {}

    def keep(key: tuple[str, str, str], result: tuple[float, float, int]) -> None:
        if key not in best or result[0] < best[key][0]:
            best[key] = result

    for round_ in range(args.repeat + 1):
        for name, query in queries.items():
            for mode in MODES:
                result = plan_once(root, query, mode)
                if round_:
                    keep(("plan", name, mode), result)

    spark = local_spark()
    rows_of: dict[str, int] = {}
    for round_ in range(args.repeat + 1):
        for name, query in queries.items():
            for mode in MODES:
                result = spark_once(spark, root, name, query, mode)
                if rows_of.setdefault(name, result[2]) != result[2]:
                    raise SystemExit(f"{name}: {mode} gave {result[2]} rows, the other mode {rows_of[name]}")
                if round_:
                    keep(("spark", name, mode), result)
    spark.stop()

    driver, tasks = MODES
    lines = [
        "# Iceberg distributed planning in Spark",
        "",
        f"`benches/iceberg_planning.py --files {args.files} --per-manifest {args.per_manifest} --repeat {args.repeat}`: "
        f"{manifests} manifests; {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. "
        "Best of the runs; wall / driver CPU in ms.",
        "",
        "## Driver planning (`plan_tasks`, caches cold)",
        "",
        f"| query | {driver} | tasks | {tasks} | tasks | time ratio |",
        "|---|---|---|---|---|---|",
    ]
    for name in queries:
        a, b = best[("plan", name, driver)], best[("plan", name, tasks)]
        lines.append(f"| {name} | {ms(a)} | {a[2]} | {ms(b)} | {b[2]} | {b[0] / a[0]:.2f} |")
    lines += [
        "",
        "## Spark, `local[2]` (planning and reading)",
        "",
        f"| query | rows | {driver} | {tasks} | time ratio |",
        "|---|---|---|---|---|",
    ]
    for name in queries:
        a, b = best[("spark", name, driver)], best[("spark", name, tasks)]
        lines.append(f"| {name} | {rows_of[name]:,} | {ms(a)} | {ms(b)} | {b[0] / a[0]:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
