"""Python's cycle collector in Spark's Python workers: pqsift's tasks with the workers'
objects frozen (``pqsift.spark.worker_gc``, the default) and not (``PQSIFT_FREEZE_WORKER_GC=0``).

A reused worker runs a full ``gc.collect()`` after every task (PySpark's daemon); with
pyspark, pyarrow and pandas imported it visits tens of thousands of objects each time.
This times ``pqsift.spark.read`` of two columns of ``data/bench`` (``peers.py``'s dataset)
spread over ``--tasks`` tasks (``local[*]``: a few workers each running many tasks in
turn) into the ``noop`` sink. The setting is read by the workers when Spark starts them,
so each way runs in a Spark process of its own, the two alternating ``--pairs`` times;
each process times ``--rounds`` reads after ``--warmup``. Writes
``benches/results/spark_worker_gc.md`` unless ``--out`` says otherwise.

Run: ``python benches/spark_worker_gc.py [--tasks 32] [--pairs 3] [--rounds 15]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path("data/bench")
COLUMNS = ["id", "amount"]


def child(tasks: int, rounds: int, warmup: int) -> None:
    """Times the reads in this process and prints them (seconds) as JSON."""
    sys.path.insert(0, str(HERE))
    import pqsift.spark
    from spark_bench import local_spark, noop

    spark = local_spark()
    data = str(DATA.resolve())

    def run() -> None:
        noop(pqsift.spark.read(spark, data, COLUMNS, driver_read_bytes=0, target_task_bytes=1, parallelism=tasks))

    for _ in range(warmup):
        run()
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    spark.stop()
    print(json.dumps(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=32)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("benches/results/spark_worker_gc.md"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.tasks, args.rounds, args.warmup)
        return
    if not list(DATA.glob("*.parquet")):
        sys.path.insert(0, str(HERE))
        from peers import write_dataset

        write_dataset(DATA)
    ways = {"frozen (default)": "1", "not frozen (PQSIFT_FREEZE_WORKER_GC=0)": "0"}
    lines = [
        "# Python's cycle collector in Spark's workers: pqsift's tasks with the workers' objects frozen and not",
        "",
        f"`python benches/spark_worker_gc.py --tasks {args.tasks} --pairs {args.pairs} --rounds {args.rounds}"
        f" --warmup {args.warmup}`: `pqsift.spark.read` of {', '.join(f'`{c}`' for c in COLUMNS)} of `{DATA}`"
        f" in {args.tasks} tasks, local[*] on {os.cpu_count()} cores, noop sink; each way in a Spark process of its own,"
        f" the two alternating; {args.rounds} reads a process after {args.warmup} untimed. Median (best) wall ms.",
        "",
        "| pair | " + " | ".join(ways) + " | not frozen / frozen (medians) |",
        "|---:|" + "---:|" * (len(ways) + 1),
    ]
    for pair in range(1, args.pairs + 1):
        medians = {}
        cells = []
        for way, setting in ways.items():
            done = subprocess.run(
                [sys.executable, __file__, "--child", "--tasks", str(args.tasks), "--rounds", str(args.rounds),
                 "--warmup", str(args.warmup)],
                env={**os.environ, "PQSIFT_FREEZE_WORKER_GC": setting},
                capture_output=True,
                text=True,
                check=True,
            )
            times = json.loads(done.stdout.strip().splitlines()[-1])
            medians[way] = statistics.median(times)
            cells.append(f"{medians[way] * 1000:.0f} ({min(times) * 1000:.0f})")
            print(f"pair {pair}, {way}: {cells[-1]} ms", flush=True)
        frozen, not_frozen = medians.values()
        lines.append(f"| {pair} | " + " | ".join(cells) + f" | {not_frozen / frozen:.2f}× |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
