"""The floor of reading through Python tasks in Spark: ``mapInArrow`` handing the JVM Arrow
batches that cost nothing to make, against pqsift's tasks and Spark's native reader.

The projection shape of ``benches/spark_bench.py`` (``id``, ``amount`` of the 4,000,000
rows of ``data/bench``) reads every row. pqsift decodes it in-process in ~40 ms at two
threads, yet in Spark its tasks take ~280 ms against the native reader's ~230. This times,
interleaved, into the ``noop`` sink:

* ``hand-off only``: two Python tasks whose ``mapInArrow`` function yields 2,000,000 rows
  each of the same types, made with numpy (nothing read): the worker, the Arrow stream to
  the JVM, and the JVM's rows from Arrow vectors;
* ``pqsift tasks``: ``pqsift.spark.read(..., driver_read_bytes=0)``;
* ``spark native``: ``spark.read.parquet(...).select("id", "amount")``.

Run: ``python benches/spark_handoff.py [--rounds N]``; prints the median and best of each
(ms) and writes ``benches/results/spark_handoff.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_bench import interleaved_times, local_spark, noop

ROWS_PER_TASK = 2_000_000


def generated(batches: Iterator) -> Iterator:  # type: ignore[type-arg]
    """Per task id: ROWS_PER_TASK rows of (bigint, double) made with numpy, in one batch."""
    import numpy as np
    import pyarrow as pa

    for batch in batches:
        for task in batch.column(0).to_pylist():
            ids = pa.array(np.arange(task * ROWS_PER_TASK, (task + 1) * ROWS_PER_TASK, dtype=np.int64))
            amounts = pa.array(np.random.default_rng(task).random(ROWS_PER_TASK))
            yield pa.RecordBatch.from_arrays([ids, amounts], names=["id", "amount"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("data/bench"))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path("benches/results/spark_handoff.md"))
    args = parser.parse_args()
    if not args.data.exists():
        from peers import write_dataset

        write_dataset(args.data)
    import pqsift.spark

    spark = local_spark()
    data = str(args.data.resolve())
    runs = {
        "hand-off only": lambda: noop(spark.range(0, 2, 1, numPartitions=2).mapInArrow(generated, "id long, amount double")),
        "pqsift tasks": lambda: noop(pqsift.spark.read(spark, data, ["id", "amount"], driver_read_bytes=0)),
        "spark native": lambda: noop(spark.read.parquet(data).select("id", "amount")),
    }
    times = interleaved_times(runs, args.rounds)
    lines = [
        "# The floor of Python tasks in Spark: `mapInArrow` hand-off vs pqsift tasks vs native",
        "",
        f"`python benches/spark_handoff.py --rounds {args.rounds}`: local[*] on 2 cores, noop sink, 4,000,000 rows "
        "of (bigint, double), interleaved after a warm-up; median (best) wall ms.",
        "",
        "| run | median (best) ms |",
        "|---|---:|",
    ]
    for name, seconds in times.items():
        lines.append(f"| {name} | {statistics.median(seconds) * 1000:.0f} ({min(seconds) * 1000:.0f}) |")
    lines += [
        "",
        "The native reader runs slower here than in `benches/spark_bench.py` (one query shape: the JVM's",
        "code is less warmed up); the hand-off is what to compare with the native time there.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text)
    spark.stop()


if __name__ == "__main__":
    main()
