"""How far pqsift's Spark ratios could go: each shape read as pqsift reads it, and by
readers that take no time to read.

Run with ``python benches/spark_ceiling.py [--connect] [--repeat 15]``. For each of
``benches/spark_bench.py``'s shapes (``--shapes`` picks them by number) the rows are read
once beforehand, in the types pqsift hands Spark, and written to Arrow IPC files. Then,
into Spark's ``noop`` sink and in turns, as ``spark_bench.py`` times:

* ``spark native`` — ``spark.read.parquet(...).filter(...).select(...)``;
* ``pqsift read`` — ``pqsift.spark.read`` as a user gets it (on the driver for a small
  result, else by Python tasks);
* ``no read, as pqsift`` — the same rows reaching Spark the way that read hands over its
  own, with no reading: on the driver, the rows made a DataFrame as pqsift makes its own
  (``pqsift.spark.driver_frame`` on a classic session; over Connect, the client's
  ``createDataFrame``); by tasks, as many Python tasks (``mapInArrow`` over ``spark.range``)
  each yielding its share from a memory-mapped file;
* ``pqsift data source`` and ``no read, data source`` — ``spark.read.format("pqsift")``,
  and a Python data source whose reader yields the same rows from the files (as many
  partitions as pqsift's tasks).

``native / no read`` is the most any reader handing its rows over that way could be
ahead of Spark's own on that shape: what is left of a pqsift time once its reading is
gone is Spark's — its job, its Python tasks, its Connect server. Writes
``benches/results/spark_ceiling.md`` (``spark_ceiling_connect.md`` with ``--connect``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pqsift
import pqsift.spark
from peers import Shape, shapes, write_dataset
from pqsift.spark import _struct_type, is_connect
from pqsift.spark.driver_frame import arrow_frame
from pqsift.spark.worker_socket import AcknowledgeOnLoad
from spark_bench import connect_spark, describe, interleaved_times, local_spark, needed, noop, table_cells, table_head

#: The short name the no-read data source is registered under.
NO_READ_SOURCE = "pqsift_bench_no_read"

#: The readers each shape is timed with, in the table's order.
READERS = ("spark native", "pqsift read", "no read, as pqsift", "pqsift data source", "no read, data source")


def file_batches(path: str) -> list[pa.RecordBatch]:
    """The record batches of the Arrow IPC file at ``path``, memory-mapped."""
    return pa.ipc.open_file(pa.memory_map(path)).read_all().to_batches()


class NoReadReader(DataSourceReader):
    """Reads nothing: each partition yields the batches of one Arrow IPC file."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        # Acknowledges the JVM's connection when unpickled, as pqsift's reader does.
        self.acknowledge = AcknowledgeOnLoad()

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(path) for path in self.files]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        yield from file_batches(partition.value)


class NoReadSource(DataSource):
    """A Python data source whose reader reads nothing (:class:`NoReadReader`): its files
    are the option ``files``, one path a line."""

    @classmethod
    def name(cls) -> str:
        return NO_READ_SOURCE

    def reader(self, schema: Any) -> DataSourceReader:
        return NoReadReader(self.options["files"].splitlines())


def write_shares(rows: pa.Table, shares: int, directory: Path, stem: str) -> list[str]:
    """``rows`` cut into ``shares`` contiguous slices, each written to an Arrow IPC file in
    ``directory``: their paths."""
    paths = []
    step = -(-rows.num_rows // shares) if rows.num_rows else 0
    for index in range(shares):
        part = rows.slice(index * step, step) if step else rows
        path = directory / f"{stem}-{index}.arrow"
        with pa.ipc.new_file(path, part.schema) as writer:
            writer.write_table(part)
        paths.append(str(path))
    return paths


def task_reader(files: list[str]) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A ``mapInArrow`` function over ``spark.range(len(files))`` in as many partitions:
    the task given id ``i`` yields the batches of ``files[i]``."""
    acknowledge = AcknowledgeOnLoad()

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        assert acknowledge is not None  # keeps it in the closure: unpickled before the input
        for batch in batches:
            for task in batch.column(0).to_pylist():
                yield from file_batches(files[task])

    return read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/bench"))
    parser.add_argument("--repeat", type=int, default=15, help="rounds of interleaved runs after the warm-up")
    parser.add_argument("--connect", action="store_true", help="run as a Spark Connect client of a local server")
    parser.add_argument("--shapes", default="1,2,3,4,5", help="which shapes, by number (default: all five)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.out is None:
        args.out = Path(f"benches/results/spark_ceiling{'_connect' if args.connect else ''}.md")
    if not list(args.data.glob("*.parquet")):
        print(f"writing {args.data} ...", flush=True)
        write_dataset(args.data)

    spark, server = connect_spark() if args.connect else (local_spark(), None)
    spark.dataSource.register(NoReadSource)
    path = str(args.data.resolve())
    picked = [shapes()[int(number) - 1] for number in args.shapes.split(",")]
    lines = table_head("| shape | rows | read by |", "|---|---:|---|", list(READERS))
    try:
        with tempfile.TemporaryDirectory(prefix="pqsift-ceiling-") as scratch:
            for number, shape in enumerate(picked):
                lines.append(shape_line(spark, path, shape, Path(scratch), f"shape{number}", args.repeat))
                print(lines[-1], flush=True)
    finally:
        spark.stop()
        if server is not None:
            server.stop()
    header = (
        f"# pqsift in Spark{' over Spark Connect' if args.connect else ''}: its ratios and their ceiling\n\n"
        f"Dataset: `{args.data}` ({describe(args.data)}), local[*] on {os.cpu_count()} cores, noop sink,"
        f" {args.repeat} rounds in turns after a warm-up; each cell the median (best) wall time in ms, ratios of"
        " medians with the first and third quartiles of the rounds' own ratios in brackets. `no read`: the same"
        " rows, read beforehand, handed to Spark the way pqsift hands its own (see the script's docstring):"
        " `native / no read` is the most a reader handing its rows over that way could be ahead.\n\n"
    )
    args.out.write_text(header + "\n".join(lines) + "\n")
    print(f"\nwritten {args.out}")


def shape_line(spark: Any, path: str, shape: Shape, scratch: Path, stem: str, rounds: int) -> str:
    """One table row: ``shape``'s rows read once by pqsift, then the five readers timed."""
    where = shape.where or None
    metrics = pqsift.spark.ScanMetrics(spark)
    noop(pqsift.spark.read(spark, path, shape.columns, where, metrics=metrics))
    on_driver = metrics.read_on_driver
    tasks_only = pqsift.spark.ScanMetrics(spark)
    noop(pqsift.spark.read(spark, path, shape.columns, where, metrics=tasks_only, driver_read_bytes=0))
    shares = max(tasks_only.tasks, 1)
    rows = pqsift.scan(path, shape.columns, where, spark_output=True, session_time_zone="UTC").to_table()
    struct = _struct_type(rows.schema)
    task_files = write_shares(rows, 1 if on_driver else max(metrics.tasks, 1), scratch, f"{stem}-tasks")
    source_files = write_shares(rows, shares, scratch, f"{stem}-source")
    whole = rows.combine_chunks()

    def as_pqsift() -> Any:
        if on_driver:
            return spark.createDataFrame(whole, struct) if is_connect(spark) else arrow_frame(spark, whole, struct)
        count = len(task_files)
        return spark.range(0, count, 1, numPartitions=count).mapInArrow(task_reader(task_files), struct)

    readers: tuple[Callable[[], Any], ...] = (
        lambda: spark.read.parquet(path).filter(shape.where or "true").select(*shape.columns),
        lambda: pqsift.spark.read(spark, path, shape.columns, where),
        as_pqsift,
        lambda: (
            spark.read.format("pqsift")
            .option("columns", ",".join(needed(shape)))
            .load(path)
            .filter(shape.where or "true")
            .select(*shape.columns)
        ),
        lambda: spark.read.format(NO_READ_SOURCE).schema(struct).option("files", "\n".join(source_files)).load(),
    )
    makers = dict(zip(READERS, readers, strict=True))
    counts = {name: make().count() for name, make in makers.items()}
    if len(set(counts.values())) != 1:
        raise SystemExit(f"{shape.name}: row counts differ: {counts}")
    times = interleaved_times({name: lambda m=make: noop(m()) for name, make in makers.items()}, rounds)
    read_by = "driver" if on_driver else f"{metrics.tasks} tasks"
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(f"{shape.name}: " + ", ".join(f"{name} {ms * 1000:.0f} ms" for name, ms in medians.items()), flush=True)
    return f"| {shape.name} | {rows.num_rows:,} | {read_by} | {table_cells(times)} |"


if __name__ == "__main__":
    main()
