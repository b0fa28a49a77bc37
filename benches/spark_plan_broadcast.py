"""Every task's plan in ``pqsift.spark.read``'s function (each task unpickles them all)
against a broadcast variable of them (a reused Python worker loads it once), past
``pqsift.spark.BROADCAST_PLAN_BYTES``.

Times ``pqsift.spark.read`` of two columns of ``data/scaling/cols2000.parquet`` (2,000
columns in 20 row groups: ``benches/scaling.py``'s widest file, its plans ~6 MiB) with a
task per row group (``target_task_bytes=1``), ``local[*]``, into the ``noop`` sink, the
plans carried each way, in turns within one Spark process after ``--warmup`` rounds.
Writes ``benches/results/spark_plan_broadcast.md`` unless ``--out`` says otherwise.

Run: ``python benches/spark_plan_broadcast.py [--rounds 15]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from spark_bench import interleaved_times, local_spark, noop  # noqa: E402

FILE = Path("data/scaling/cols2000.parquet")
COLUMNS = ["id", "c1"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benches/results/spark_plan_broadcast.md"))
    args = parser.parse_args()
    if not FILE.exists():
        from scaling import write_case

        FILE.parent.mkdir(parents=True, exist_ok=True)
        write_case("columns", 2000, FILE.parent)
    import pickle

    import pqsift.spark
    from pqsift.spark.planning import plan_tasks

    plan = plan_tasks(str(FILE), COLUMNS, None, target_task_bytes=1)
    plan_bytes = len(pickle.dumps([task.to_rows() for task in plan.tasks]))
    spark = local_spark()
    path = str(FILE.resolve())
    bounds = {"in the closure": 1 << 62, "broadcast": 0}

    def read(bound: int) -> None:
        pqsift.spark.BROADCAST_PLAN_BYTES = bound
        noop(pqsift.spark.read(spark, path, COLUMNS, driver_read_bytes=0, target_task_bytes=1))

    runs = {way: (lambda bound=bound: read(bound)) for way, bound in bounds.items()}
    for _ in range(args.warmup):
        for run in runs.values():
            run()
    times = interleaved_times(runs, args.rounds)
    spark.stop()
    lines = [
        "# Tasks' plans in the function's closure or as a broadcast variable",
        "",
        f"`python benches/spark_plan_broadcast.py --rounds {args.rounds} --warmup {args.warmup}`:"
        f" `pqsift.spark.read` of {', '.join(f'`{c}`' for c in COLUMNS)} of `{FILE}` with a task per row group"
        f" ({len(plan.tasks)} tasks, their plans {plan_bytes / 2**20:.1f} MiB pickled), local[*] on {os.cpu_count()}"
        " cores, noop sink; the two ways in turns in one Spark process. Median (best) wall ms.",
        "",
        "| plans | ms |",
        "|---|---:|",
    ]
    for way, seconds in times.items():
        lines.append(f"| {way} | {statistics.median(seconds) * 1000:.0f} ({min(seconds) * 1000:.0f}) |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
