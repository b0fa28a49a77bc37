"""Every task's plan in ``pqsift.spark.read``'s function (each task unpickles them all)
against a broadcast variable of them (a reused Python worker loads it once), past
``pqsift.spark.BROADCAST_PLAN_BYTES``; with ``--connect``, over Spark Connect, against a
file of them added to the session, from which each task reads its own
(``pqsift.spark.reader.PlanFile``).

Times ``pqsift.spark.read`` of two columns of ``data/scaling/cols2000.parquet`` (2,000
columns in 20 row groups: ``benches/scaling.py``'s widest file, its plans ~6 MiB) with a
task per row group (``target_task_bytes=1``), ``local[*]``, into the ``noop`` sink, the
plans carried each way, in turns within one Spark process after ``--warmup`` rounds.
Writes ``benches/results/spark_plan_broadcast.md`` unless ``--out`` says otherwise.

Run: ``python benches/spark_plan_broadcast.py [--rounds 15] [--connect] [--copies N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from spark_bench import connect_spark, interleaved_times, local_spark, noop  # noqa: E402

FILE = Path("data/scaling/cols2000.parquet")
COLUMNS = ["id", "c1"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--connect", action="store_true", help="a Connect client of a local server")
    parser.add_argument(
        "--copies", type=int, default=1, help="read this many copies of the file (hard links): as many times the tasks"
    )
    parser.add_argument("--out", type=Path, default=None, help="default: benches/results/spark_plan_broadcast[_connect].md")
    args = parser.parse_args()
    out = args.out or Path(f"benches/results/spark_plan_broadcast{'_connect' if args.connect else ''}.md")
    if not FILE.exists():
        from scaling import write_case

        FILE.parent.mkdir(parents=True, exist_ok=True)
        write_case("columns", 2000, FILE.parent)
    import pickle
    import tempfile

    import pqsift.spark
    from pqsift.spark.planning import plan_tasks

    copies = Path(tempfile.mkdtemp(prefix="copies-", dir=FILE.parent))  # hard links: the same file system
    for copy in range(args.copies):
        os.link(FILE, copies / f"part-{copy}.parquet")
    path = str(copies)
    plan = plan_tasks(path, COLUMNS, None, target_task_bytes=1)
    plan_bytes = len(pickle.dumps([task.to_rows() for task in plan.tasks]))
    spark, server = connect_spark() if args.connect else (local_spark(), None)
    # The bounds each way sets: (BROADCAST_PLAN_BYTES, CONNECT_PLAN_FILE_TASKS, CONNECT_PLAN_FILE_BYTES).
    bounds = {
        "in the closure": (1 << 62, 1 << 62, 1 << 62),
        "a file each task reads its own from" if args.connect else "broadcast": (0, 0, 0),
    }

    def read(bound: tuple[int, int, int]) -> None:
        spark_module = pqsift.spark
        spark_module.BROADCAST_PLAN_BYTES, spark_module.CONNECT_PLAN_FILE_TASKS, spark_module.CONNECT_PLAN_FILE_BYTES = bound
        noop(pqsift.spark.read(spark, path, COLUMNS, driver_read_bytes=0, target_task_bytes=1))

    runs = {way: (lambda bound=bound: read(bound)) for way, bound in bounds.items()}
    for _ in range(args.warmup):
        for run in runs.values():
            run()
    times = interleaved_times(runs, args.rounds)
    spark.stop()
    if server is not None:
        server.stop()
    for copy in copies.iterdir():
        copy.unlink()
    copies.rmdir()
    session = "a Spark Connect client of a local server, " if args.connect else ""
    lines = [
        "# Tasks' plans in the function's closure or "
        + ("in a file added to the session" if args.connect else "as a broadcast variable"),
        "",
        f"`python benches/spark_plan_broadcast.py --rounds {args.rounds} --warmup {args.warmup}"
        f" --copies {args.copies}{' --connect' if args.connect else ''}`:"
        f" `pqsift.spark.read` of {', '.join(f'`{c}`' for c in COLUMNS)} of {args.copies} copies of `{FILE}`"
        " with a task per row group"
        f" ({len(plan.tasks)} tasks, their plans {plan_bytes / 2**20:.1f} MiB pickled), {session}local[*] on"
        f" {os.cpu_count()} cores, noop sink; the two ways in turns in one Spark process. Median (best) wall ms.",
        "",
        "| plans | ms |",
        "|---|---:|",
    ]
    for way, seconds in times.items():
        lines.append(f"| {way} | {statistics.median(seconds) * 1000:.0f} ({min(seconds) * 1000:.0f}) |")
    text = "\n".join(lines) + "\n"
    print(text)
    out.write_text(text)


if __name__ == "__main__":
    main()
