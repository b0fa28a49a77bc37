"""What a task's wait for its input costs: ``pqsift.spark.read`` by tasks as pqsift makes
them (each function acknowledging the worker's connection when unpickled,
``pqsift.spark.worker_socket``) against the same reads with each function padded past a
loopback segment instead (what pqsift did before, ``--padding`` bytes) and with neither.

Spark writes a Python task its function, then its input, on a loopback TCP connection.
The kernel holds the second write until the worker acknowledges the first (Nagle's
algorithm), and the worker delays acknowledging less than a full segment by up to 40 ms, so
a task whose function was small waited that long before reading anything.

Times, into the ``noop`` sink, interleaved in one Spark process after ``--warmup`` rounds:

* ``4 tasks over one file``: the ``id`` column of ``data/bench/part-000.parquet``, a task per
  row group (their plans together well under a segment);
* ``8 files planned lazily``: ``data/bench``'s files planned by the tasks themselves
  (``lazy=True``), whose functions carry no plan;
* the selective shapes of ``benches/spark_bench.py`` (``--dataset``: ``events-spark`` by
  default) read by tasks (``driver_read_bytes=0``), and over Connect also as
  ``pqsift.spark.read`` reads them.

``--connect``: as a client of a local Spark Connect server (where the range is read by one
task). Writes ``benches/results/spark_task_function[_connect].md`` unless ``--out`` says
otherwise.

Run: ``python benches/spark_task_function.py [--rounds 9] [--connect]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from peers import EVENT_FILES, EVENT_ROWS_PER_FILE, event_shapes, shapes  # noqa: E402
from spark_bench import connect_spark, interleaved_times, local_spark, noop  # noqa: E402

DATA = {"events-spark": Path("data/bench-events-spark"), "peers": Path("data/bench")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=sorted(DATA), default="events-spark")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--connect", action="store_true", help="a Connect client of a local server")
    parser.add_argument("--padding", type=int, default=128 << 10, help="bytes of the padded way (default 128 KiB)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(f"benches/results/spark_task_function{'_connect' if args.connect else ''}.md")
    data = DATA[args.dataset]
    if not list(data.glob("*.parquet")):
        raise SystemExit(f"{data} has no Parquet files: run benches/spark_bench.py --dataset {args.dataset} first")

    import pqsift.spark
    from pqsift.spark.worker_socket import AcknowledgeOnLoad

    spark, server = connect_spark() if args.connect else (local_spark(), None)
    path = str(data.resolve())
    one_file = str(Path("data/bench/part-000.parquet").resolve())
    selective = (event_shapes(EVENT_FILES * EVENT_ROWS_PER_FILE) if args.dataset == "events-spark" else shapes())[:3]

    cases = {
        "4 tasks over one file (by tasks)": lambda: noop(
            pqsift.spark.read(spark, one_file, ["id"], driver_read_bytes=0, target_task_bytes=1)
        ),
        # Tasks that plan their files themselves carry no plan.
        "8 files planned lazily (by tasks)": lambda: noop(
            pqsift.spark.read(spark, str(Path("data/bench").resolve()), ["id"], "id < 1000", driver_read_bytes=0, lazy=True)
        ),
    }
    # On a classic session `read` reads these on the driver, no task; over Connect the
    # range by one task.
    ways = (("by tasks", {"driver_read_bytes": 0}), ("read", {})) if args.connect else (("by tasks", {"driver_read_bytes": 0}),)
    for shape in selective:
        for way, bound in ways:
            cases[f"{shape.name} ({way})"] = lambda shape=shape, bound=bound: noop(
                pqsift.spark.read(spark, path, shape.columns, shape.where or None, **bound)
            )

    # What the marker pickles as in each way (the functions are pickled on this side).
    acknowledging = AcknowledgeOnLoad.__reduce__
    instead = {
        "acknowledged": acknowledging,
        "padded": lambda self: (bytes, (bytes(args.padding),)),
        "neither": lambda self: (tuple, ()),
    }

    def run_as(way: str, case: str) -> None:
        AcknowledgeOnLoad.__reduce__ = instead[way]  # type: ignore[method-assign]
        try:
            cases[case]()
        finally:
            AcknowledgeOnLoad.__reduce__ = acknowledging  # type: ignore[method-assign]

    named = {f"{case}|{way}": lambda case=case, way=way: run_as(way, case) for case in cases for way in instead}
    for _ in range(args.warmup):
        for run in named.values():
            run()
    times = interleaved_times(named, args.rounds)
    spark.stop()
    if server is not None:
        server.stop()
    session = "a Spark Connect client of a local server, " if args.connect else ""
    lines = [
        "# A task's wait for its input: the function acknowledged when unpickled, padded, or neither",
        "",
        f"`python benches/spark_task_function.py --dataset {args.dataset} --rounds {args.rounds} --warmup {args.warmup}"
        f"{' --connect' if args.connect else ''}`: `pqsift.spark.read` with each task's function acknowledging the"
        f" worker's connection when unpickled (pqsift's way), padded to {args.padding >> 10} KiB instead, or"
        f" neither; {session}local[*] on {os.cpu_count()} cores, noop sink; `{data}` for the shapes; every run in"
        " turns in one Spark process. Median (best) wall ms; the ratios are of medians.",
        "",
        "| case | acknowledged | padded | neither | padded / acknowledged | neither / acknowledged |",
        "|---|---:|---:|---:|---:|---:|",
    ]

    def cell(way: str, case: str) -> str:
        runs = times[f"{case}|{way}"]
        return f"{statistics.median(runs) * 1000:.0f} ({min(runs) * 1000:.0f})"

    for case in cases:
        median = {way: statistics.median(times[f"{case}|{way}"]) for way in instead}
        lines.append(
            f"| {case} | {' | '.join(cell(way, case) for way in instead)}"
            f" | {median['padded'] / median['acknowledged']:.2f}× | {median['neither'] / median['acknowledged']:.2f}× |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    out.write_text(text)


if __name__ == "__main__":
    main()
