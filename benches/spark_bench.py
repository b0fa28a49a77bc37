"""pqsift in Spark against Spark's native Parquet reader, side by side in one run.

Run with ``make bench-spark``. It uses the dataset and the five query shapes of
``benches/peers.py`` (written under ``data/bench`` if absent) and times, on local Spark
(``local[*]``), each shape read by

* ``spark.read.parquet(...).filter(...).select(...)`` — Spark's native reader with its
  defaults (row-group and page skipping, vectorized decoding, no late materialization);
* ``pqsift.spark.read(spark, ...)`` — pqsift's tasks through ``mapInArrow``;
* ``spark.read.format("pqsift")`` — the Python data source, filters pushed;

into Spark's ``noop`` sink (every row is produced, nothing is written), best of
``--repeat`` after a warm-up run. It prints the times and the ratio native / pqsift, checks
that every reader returns the same row count, and writes ``benches/results/spark.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import shapes, write_dataset  # noqa: E402


def needed(shape) -> list[str]:  # type: ignore[no-untyped-def]
    """The projected columns and those the filter names."""
    filtered = [name for name in ("ts", "id", "kind", "region", "amount", "quantity") if name in shape.where]
    return list(dict.fromkeys([*shape.columns, *filtered]))


def best_time(run: Callable[[], None], repeat: int) -> float:
    run()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/bench"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benches/results/spark.md"))
    args = parser.parse_args()
    if not list(args.data.glob("*.parquet")):
        print(f"writing {args.data} ...", flush=True)
        write_dataset(args.data)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import pqsift.spark

    spark = (
        SparkSession.builder.master("local[*]")
        .appName("pqsift-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    pqsift.spark.register(spark)
    path = str(args.data)

    def noop(df) -> None:  # type: ignore[no-untyped-def]
        df.write.format("noop").mode("overwrite").save()

    readers = {
        "spark native": lambda s: spark.read.parquet(path).filter(s.where or "true").select(*s.columns),
        "pqsift mapInArrow": lambda s: pqsift.spark.read(spark, path, s.columns, s.where or None),
        # A data source's schema must hold the filter's columns too (Spark filters by name).
        "pqsift data source": lambda s: spark.read.format("pqsift")
        .option("columns", ",".join(needed(s)))
        .load(path)
        .filter(s.where or "true")
        .select(*s.columns),
    }
    lines = [
        "| shape | rows | " + " | ".join(f"{name} (ms)" for name in readers) + " | native / mapInArrow | native / data source |",
        "|---|---:|" + "---:|" * (len(readers) + 2),
    ]
    print(f"{'shape':<28}{'rows':>9}" + "".join(f"{name:>22}" for name in readers) + f"{'native/pqsift':>15}")
    for shape in shapes():
        counts = {name: make(shape).count() for name, make in readers.items()}
        if len(set(counts.values())) != 1:
            raise SystemExit(f"{shape.name}: row counts differ: {counts}")
        times = {name: best_time(lambda m=make: noop(m(shape)), args.repeat) for name, make in readers.items()}
        native = times["spark native"]
        ratios = [native / times["pqsift mapInArrow"], native / times["pqsift data source"]]
        rows = next(iter(counts.values()))
        print(
            f"{shape.name:<28}{rows:>9,}"
            + "".join(f"{t * 1000:>20.0f}ms" for t in times.values())
            + f"{ratios[0]:>14.2f}x"
        )
        lines.append(
            f"| {shape.name} | {rows:,} | "
            + " | ".join(f"{t * 1000:.0f}" for t in times.values())
            + f" | {ratios[0]:.2f}× | {ratios[1]:.2f}× |"
        )
    spark.stop()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    header = (
        f"# pqsift in Spark vs Spark's native reader\n\nDataset: `{args.data}` (benches/peers.py), local[*] on"
        f" {os.cpu_count()} cores, noop sink, best of {args.repeat} after a warm-up. Ratio > 1: pqsift faster.\n\n"
    )
    args.out.write_text(header + "\n".join(lines) + "\n")
    print(f"\nwritten {args.out}")


if __name__ == "__main__":
    main()
