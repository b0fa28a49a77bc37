"""Planning at scale (issue 14): eager planning (every footer read on the driver) against
lazy planning (no footer read; the tasks plan their own files), at N small files.

    python benches/lazy_planning.py [--files 1000,10000,100000] [--store-files 1000,10000]
                                    [--delay 25] [--no-spark]

The table: N files of 1,000 rows (``id`` int64 in 4 row groups, ``v`` double) in ten Hive
partitions ``day=0..9``; the query ``day >= 5 AND id < 100`` keeps half the files by
partition value and one row group of each by statistics.

1. **Driver planning, local files**: ``plan_tasks`` eager and lazy, each in a fresh process
   (the metadata cache cold): seconds, tasks, footers read on the driver.
2. **Planning + first row in Spark, local files** (``local[*]``, one JVM per N, warmed up on
   another table first): ``spark.read.parquet(...).filter(...).select("id").limit(1)
   .collect()`` against ``pqsift.spark.read(...)`` (eager, lazy) with the same
   ``limit(1).collect()``; a cold pqsift metadata cache on the driver for each.
3. **Driver planning from an object store**: the same table uploaded to moto behind a proxy
   adding ``--delay`` ms to every request (``benches/object_store.py``'s server), planned
   eager and lazy in fresh processes: seconds and the requests the proxy saw. Spark's
   native reader is not measured there: it needs the hadoop-aws jars, which this machine
   cannot download.

Results go to ``benches/results/lazy_planning.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

FILTER = "day >= 5 AND id < 100"

CHILD = """
import json, sys, time
from pqsift import _core
from pqsift.spark.planning import plan_tasks
options = json.loads(sys.argv[3])
started = time.perf_counter()
plan = plan_tasks(sys.argv[1], ["id"], sys.argv[4], lazy=sys.argv[2] == "lazy", parallelism=8, **options)
print(json.dumps({"seconds": time.perf_counter() - started, "tasks": len(plan.tasks), "footers": _core.metadata_cache_stats()[1]}))
"""


def ensure(root: Path, files: int) -> None:
    """Writes the table of ``files`` files under ``root`` unless it is there."""
    if len(list(root.glob("day=*/*.parquet"))) == files:
        return
    table = pa.table({"id": pa.array(range(1000), pa.int64()), "v": pa.array([float(i) for i in range(1000)])})
    for i in range(files):
        directory = root / f"day={i % 10}"
        directory.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, directory / f"f{i:06d}.parquet", row_group_size=250)


def plan_in_child(source: str, mode: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """``plan_tasks`` of ``source`` in a fresh process: seconds, tasks, footers read."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, source, mode, json.dumps(options or {}), FILTER], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


def driver_planning(counts: list[int]) -> list[str]:
    lines = ["| files | mode | plan (s) | tasks | footers read on the driver |", "|---:|---|---:|---:|---:|"]
    for files in counts:
        root = Path(f"data/lazy-{files}")
        ensure(root, files)
        for mode in ("eager", "lazy"):
            result = plan_in_child(str(root), mode)
            lines.append(f"| {files:,} | {mode} | {result['seconds']:.3f} | {result['tasks']} | {result['footers']:,} |")
            print(lines[-1], flush=True)
    return lines


SPARK_CHILD = """
import json, sys, time
from pyspark.sql import SparkSession
import pqsift.spark
from pqsift import _core
root, warm = sys.argv[1], sys.argv[2]
spark = (SparkSession.builder.master("local[*]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.memory", "4g").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
filter_text = sys.argv[3]
# Warm the JVM and the Python workers on another table.
spark.read.parquet(warm).filter(filter_text).select("id").limit(1).collect()
pqsift.spark.read(spark, warm, ["id"], filter_text, lazy=True).limit(1).collect()
pqsift.spark.read(spark, warm, ["id"], filter_text, lazy=False, driver_read_bytes=0).limit(1).collect()
results = {}
def timed(name, run):
    started = time.perf_counter()
    rows = run()
    results[name] = {"seconds": time.perf_counter() - started, "rows": len(rows)}
timed("spark native", lambda: spark.read.parquet(root).filter(filter_text).select("id").limit(1).collect())
# Lazy first: eager fills the driver's metadata cache.
timed("pqsift lazy", lambda: pqsift.spark.read(spark, root, ["id"], filter_text, lazy=True).limit(1).collect())
timed("pqsift eager", lambda: pqsift.spark.read(spark, root, ["id"], filter_text, lazy=False).limit(1).collect())
print("RESULT " + json.dumps(results))
"""


def spark_first_row(counts: list[int]) -> list[str]:
    lines = [
        "| files | spark.read.parquet (s) | pqsift eager (s) | pqsift lazy (s) | native / lazy |",
        "|---:|---:|---:|---:|---:|",
    ]
    warm = Path("data/lazy-warm")
    ensure(warm, 20)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    for files in counts:
        root = Path(f"data/lazy-{files}")
        ensure(root, files)
        out = subprocess.run(
            [sys.executable, "-c", SPARK_CHILD, str(root.resolve()), str(warm.resolve()), FILTER], capture_output=True, text=True, env=env
        )
        result_line = next((line for line in out.stdout.splitlines() if line.startswith("RESULT ")), None)
        if result_line is None:
            raise SystemExit(f"spark child failed:\n{out.stderr[-3000:]}")
        results = json.loads(result_line.removeprefix("RESULT "))
        native, eager, lazy = (results[name]["seconds"] for name in ("spark native", "pqsift eager", "pqsift lazy"))
        lines.append(f"| {files:,} | {native:.2f} | {eager:.2f} | {lazy:.2f} | {native / lazy:.1f}× |")
        print(lines[-1], flush=True)
    return lines


def store_planning(counts: list[int], delay_ms: float) -> list[str]:
    from object_store import S3Server

    lines = [
        "| files | mode | plan (s) | tasks | requests (LIST) | footers read on the driver |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    with S3Server(delay=delay_ms / 1000) as server:
        for files in counts:
            root = Path(f"data/lazy-{files}")
            ensure(root, files)
            bucket = server.new_bucket("lazy")
            started = time.perf_counter()
            server.upload_dir(root, bucket, "table")
            print(f"uploaded {files:,} files in {time.perf_counter() - started:.0f} s", flush=True)
            url = f"s3://{bucket}/table/"
            for mode in ("eager", "lazy"):
                server.reset()
                result = plan_in_child(url, mode, {"storage_options": server.storage_options})
                seen = server.snapshot()
                lines.append(
                    f"| {files:,} | {mode} | {result['seconds']:.2f} | {result['tasks']} | {seen['requests']:,} ({seen['lists']}) | {result['footers']:,} |"
                )
                print(lines[-1], flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", default="1000,10000,100000")
    parser.add_argument("--store-files", default="1000,10000")
    parser.add_argument("--delay", type=float, default=25.0, help="ms the proxy adds to every request")
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("benches/results/lazy_planning.md"))
    args = parser.parse_args()
    counts = [int(n) for n in args.files.split(",") if n]
    store_counts = [int(n) for n in args.store_files.split(",") if n]
    sections = [
        "# Planning at scale: eager against lazy (`benches/lazy_planning.py`)",
        "",
        f"{os.cpu_count()} cores. N files of 1,000 rows in ten partitions `day=0..9`, query `{FILTER}`: half the files",
        "kept by partition value, one row group of four in each by statistics. Each figure is one cold run.",
        "",
        "## Driver planning, local files (`plan_tasks`, fresh process)",
        "",
        *driver_planning(counts),
    ]
    if not args.no_spark:
        sections += [
            "",
            "## Planning + first row in Spark, local files (`limit(1).collect()`, JVM warmed up on another table)",
            "",
            *spark_first_row(counts),
        ]
    if store_counts:
        sections += [
            "",
            f"## Driver planning from S3 (moto behind a proxy adding {args.delay:g} ms per request, fresh process)",
            "",
            *store_planning(store_counts, args.delay),
        ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(sections) + "\n")
    print(f"\nwritten {args.out}")


if __name__ == "__main__":
    main()
