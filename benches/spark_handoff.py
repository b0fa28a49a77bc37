"""The floor of reading through Python in Spark: Arrow batches that are already made,
handed to the JVM by ``mapInArrow`` and by a Python data source, against pqsift's tasks,
pqsift's data source and Spark's native reader.

The projection shape of ``benches/spark_bench.py`` (two numeric columns, every row) is the
one where pqsift's tasks do not beat Spark's native reader, though pqsift decodes those
columns in-process in a fraction of Spark's time. This times, interleaved, into the
``noop`` sink, the same rows (count, types and batch size as the data's) each way:

* ``hand-off only``: two Python tasks whose ``mapInArrow`` function yields batches made
  once per Python worker (Spark reuses its workers) and kept there, so a timed run makes
  nothing: the worker, the Arrow stream to the JVM, and the JVM's rows from Arrow vectors;
* ``pqsift tasks``: ``pqsift.spark.read(..., driver_read_bytes=0)``;
* ``spark native``: ``spark.read.parquet(...).select(...)``;
* ``data source hand-off only``: a Python data source of two partitions yielding the same
  kept batches: Spark's planning workers and the data source's read path;
* ``pqsift data source``: ``spark.read.format("pqsift")``.

Run: ``python benches/spark_handoff.py [--dataset peers|events-spark] [--rounds N]
[--warmup N]``; prints the median and best of each (ms) and writes
``benches/results/spark_handoff.md`` (``spark_handoff_events_spark.md`` for the events
written by Spark) unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_bench import interleaved_times, local_spark, noop

TASKS = 2

#: The dataset's directory and the projection shape's two columns (bigint, double).
DATASETS = {
    "peers": (Path("data/bench"), ("id", "amount")),
    "events-spark": (Path("data/bench-events-spark"), ("user_id", "amount")),
}


def kept_batches(task: int, rows: int, batch_rows: int, names: tuple[str, str]) -> list[Any]:
    """Task `task`'s `rows` rows of (bigint, double) in batches of `batch_rows`, made with
    numpy the first time a Python worker asks and kept in that worker (on the `sys`
    module, which outlives the tasks a reused worker runs), so that later runs only hand
    them over."""
    import numpy as np
    import pyarrow as pa

    kept: dict[tuple[Any, ...], list[Any]] = sys.__dict__.setdefault("_pqsift_handoff_batches", {})
    key = (task, rows, batch_rows, names)
    if key not in kept:
        random = np.random.default_rng(task)
        kept[key] = [
            pa.RecordBatch.from_arrays(
                [
                    pa.array(np.arange(start, min(start + batch_rows, rows), dtype=np.int64)),
                    pa.array(random.random(min(batch_rows, rows - start))),
                ],
                names=list(names),
            )
            for start in range(0, rows, batch_rows)
        ]
    return kept[key]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=sorted(DATASETS), default="peers")
    parser.add_argument("--data", type=Path, default=None, help="default: the dataset's directory under data/")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--warmup", type=int, default=3, help="untimed rounds first: the JVM's code warms up over many queries"
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--arrow-checks",
        choices=("default", "on", "off"),
        default="default",
        help="Arrow Java's checks in the JVM: as pqsift leaves them (off), or given",
    )
    args = parser.parse_args()
    default_data, names = DATASETS[args.dataset]
    data_path: Path = args.data or default_data
    out: Path = args.out or Path(
        "benches/results/spark_handoff.md"
        if args.dataset == "peers"
        else f"benches/results/spark_handoff_{args.dataset.replace('-', '_')}.md"
    )
    if not list(data_path.glob("*.parquet")):
        if args.dataset != "peers":
            raise SystemExit(f"{data_path} holds no Parquet files: `python benches/spark_bench.py --dataset {args.dataset}` writes them")
        from peers import write_dataset

        write_dataset(data_path)
    import pyarrow.parquet as pq
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    import pqsift.spark

    footers = [pq.ParquetFile(path).metadata for path in sorted(data_path.glob("*.parquet"))]
    total_rows = sum(footer.num_rows for footer in footers)
    group_rows = sorted(footer.row_group(i).num_rows for footer in footers for i in range(footer.num_row_groups))
    # pqsift's tasks hand over a row group (or a window of one) a batch: so do these.
    batch_rows = group_rows[len(group_rows) // 2]
    rows_per_task = -(-total_rows // TASKS)
    schema = f"`{names[0]}` long, `{names[1]}` double"

    def handed_over(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            for task in batch.column(0).to_pylist():
                yield from kept_batches(task, rows_per_task, batch_rows, names)

    class KeptReader(DataSourceReader):
        def partitions(self) -> list[InputPartition]:
            return [InputPartition(task) for task in range(TASKS)]

        def read(self, partition: InputPartition) -> Iterator[Any]:
            yield from kept_batches(partition.value, rows_per_task, batch_rows, names)

    class KeptSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "handoff_kept_batches"

        def schema(self) -> str:
            return schema

        def reader(self, schema: Any) -> DataSourceReader:
            return KeptReader()

    spark = local_spark(args.arrow_checks)
    spark.dataSource.register(KeptSource)
    data = str(data_path.resolve())
    runs = {
        "hand-off only": lambda: noop(spark.range(0, TASKS, 1, numPartitions=TASKS).mapInArrow(handed_over, schema)),
        "pqsift tasks": lambda: noop(pqsift.spark.read(spark, data, list(names), driver_read_bytes=0)),
        "spark native": lambda: noop(spark.read.parquet(data).select(*names)),
        "data source hand-off only": lambda: noop(spark.read.format("handoff_kept_batches").load()),
        "pqsift data source": lambda: noop(spark.read.format("pqsift").option("columns", ",".join(names)).load(data)),
    }
    for _ in range(max(args.warmup - 1, 0)):
        for run in runs.values():
            run()
    times = interleaved_times(runs, args.rounds)
    lines = [
        "# The floor of Python in Spark: Arrow batches handed over vs pqsift vs native",
        "",
        f"`python benches/spark_handoff.py --dataset {args.dataset} --rounds {args.rounds} --warmup {args.warmup}"
        f" --arrow-checks {args.arrow_checks}`: "
        f"`{data_path}`, the columns {', '.join(f'`{n}`' for n in names)} (bigint, double) of its "
        f"{total_rows:,} rows, {TASKS} tasks, batches of {batch_rows:,} rows; local[*] on 2 cores, noop sink, "
        "interleaved after the warm-up rounds; median (best) wall ms. `hand-off only` and "
        "`data source hand-off only` make nothing while timed: their batches are kept in the Python workers. "
        + (
            "Arrow Java's checks off in the JVM, as pqsift sets them."
            if args.arrow_checks == "default"
            else f"Arrow Java's checks {args.arrow_checks} in the JVM, given to it."
        ),
        "",
        "| run | median (best) ms | native / run (medians) |",
        "|---|---:|---:|",
    ]
    native = statistics.median(times["spark native"])
    for name, seconds in times.items():
        median = statistics.median(seconds)
        lines.append(f"| {name} | {median * 1000:.0f} ({min(seconds) * 1000:.0f}) | {native / median:.2f}× |")
    text = "\n".join(lines) + "\n"
    print(text)
    out.write_text(text)
    spark.stop()


if __name__ == "__main__":
    main()
