"""Python's cycle collector in Spark's Python workers: pqsift's tasks with the workers'
objects frozen (``pqsift.spark.worker_gc``, the default) and not (``PQSIFT_FREEZE_WORKER_GC=0``).

A reused worker runs a full ``gc.collect()`` after every task (PySpark's daemon); with
pyspark, pyarrow and pandas imported it visits tens of thousands of objects each time.
This times ``pqsift.spark.read`` of two columns of ``data/bench`` (``peers.py``'s dataset)
spread over ``--tasks`` tasks (``local[*]``: a few workers each running many tasks in
turn) into the ``noop`` sink. ``--data-source`` times instead the five shapes of
``benches/spark_bench.py`` read through the ``pqsift`` data source, whose planning runs in
Python workers of their own (its schema, its reader's partitions), collected after each
step too. The setting is read by the workers when Spark starts them, so each way runs in a
Spark process of its own, the two alternating ``--pairs`` times; each process times
``--rounds`` reads after ``--warmup``. Writes ``benches/results/spark_worker_gc.md``
(``spark_worker_gc_data_source.md``) unless ``--out`` says otherwise.

Run: ``python benches/spark_worker_gc.py [--tasks 32] [--pairs 3] [--rounds 15] [--data-source]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path("data/bench")
COLUMNS = ["id", "amount"]


def child(tasks: int, rounds: int, warmup: int, data_source: bool) -> None:
    """Times the reads in this process and prints them (seconds, by case) as JSON."""
    sys.path.insert(0, str(HERE))
    import pqsift.spark
    from peers import shapes
    from spark_bench import local_spark, needed, noop

    spark = local_spark()
    data = str(DATA.resolve())
    cases: dict[str, Callable[[], None]] = {}
    if data_source:
        for shape in shapes():
            cases[shape.name] = lambda shape=shape: noop(
                spark.read.format("pqsift")
                .option("columns", ",".join(needed(shape)))
                .load(data)
                .filter(shape.where or "true")
                .select(*shape.columns)
            )
    else:
        cases[f"read in {tasks} tasks"] = lambda: noop(
            pqsift.spark.read(spark, data, COLUMNS, driver_read_bytes=0, target_task_bytes=1, parallelism=tasks)
        )
    times: dict[str, list[float]] = {case: [] for case in cases}
    for case, run in cases.items():
        for _ in range(warmup):
            run()
        for _ in range(rounds):
            started = time.perf_counter()
            run()
            times[case].append(time.perf_counter() - started)
    spark.stop()
    print(json.dumps(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=32)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--data-source", action="store_true", help="the five shapes through the data source")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.tasks, args.rounds, args.warmup, args.data_source)
        return
    out = args.out or Path(f"benches/results/spark_worker_gc{'_data_source' if args.data_source else ''}.md")
    if not list(DATA.glob("*.parquet")):
        sys.path.insert(0, str(HERE))
        from peers import write_dataset

        write_dataset(DATA)
    ways = {"frozen (default)": "1", "not frozen (PQSIFT_FREEZE_WORKER_GC=0)": "0"}
    what = (
        "the five shapes of `benches/spark_bench.py` through the `pqsift` data source"
        if args.data_source
        else f"`pqsift.spark.read` of {', '.join(f'`{c}`' for c in COLUMNS)} in {args.tasks} tasks"
    )
    lines = [
        "# Python's cycle collector in Spark's workers: pqsift with the workers' objects frozen and not",
        "",
        f"`python benches/spark_worker_gc.py --tasks {args.tasks} --pairs {args.pairs} --rounds {args.rounds}"
        f" --warmup {args.warmup}{' --data-source' if args.data_source else ''}`: {what}, `{DATA}`,"
        f" local[*] on {os.cpu_count()} cores, noop sink; each way in a Spark process of its own,"
        f" the two alternating; {args.rounds} reads a case and process after {args.warmup} untimed."
        " Median (best) wall ms.",
        "",
        "| pair | case | " + " | ".join(ways) + " | not frozen / frozen (medians) |",
        "|---:|---|" + "---:|" * (len(ways) + 1),
    ]
    flags = ["--tasks", str(args.tasks), "--rounds", str(args.rounds), "--warmup", str(args.warmup)]
    for pair in range(1, args.pairs + 1):
        by_way = {}
        for way, setting in ways.items():
            done = subprocess.run(
                [sys.executable, __file__, "--child", *flags, *(["--data-source"] if args.data_source else [])],
                env={**os.environ, "PQSIFT_FREEZE_WORKER_GC": setting},
                capture_output=True,
                text=True,
                check=True,
            )
            by_way[way] = json.loads(done.stdout.strip().splitlines()[-1])
        for case in next(iter(by_way.values())):
            medians = [statistics.median(times[case]) for times in by_way.values()]
            cells = [f"{statistics.median(t[case]) * 1000:.0f} ({min(t[case]) * 1000:.0f})" for t in by_way.values()]
            print(f"pair {pair}, {case}: " + " / ".join(cells) + " ms", flush=True)
            lines.append(f"| {pair} | {case} | " + " | ".join(cells) + f" | {medians[1] / medians[0]:.2f}× |")
    text = "\n".join(lines) + "\n"
    print(text)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
