"""How a result read by a Spark Connect client can reach the server, and what each way costs.

Issue 42 asks for Spark Connect's range shape at 3x Spark's native reader, "finding a way
for a small result to reach the server that is not a local relation of JVM rows". This
bench measures the ways there are, on a local Connect server (``local[*]``, the settings of
``benches/spark_bench.py``), for the range shape of ``benches/peers.py`` (21,600 rows with
a text column, 4.8 MiB of Arrow data, in ``data/bench``), each into Spark's ``noop`` sink:

* ``native``: ``spark.read.parquet(...).select(...).filter(...)``, the reference;
* ``pqsift tasks``: ``pqsift.spark.read(..., driver_read_bytes=0)``, one Python task;
* ``local relation``: the client's table (read once, before the runs) as
  ``spark.createDataFrame(table)`` — PySpark uploads it as an artifact and the server
  makes it a local relation of JVM rows;
* ``parquet file``: the client's table written uncompressed to a file the server reads
  with its native reader, schema given (possible only where the server shares the
  client's file system, as a local one does);
* ``closure bytes``: the table as Arrow IPC bytes inside a ``mapInArrow`` function over
  ``spark.range(1)``, yielded by one Python task;
* the floors: ``client scan`` (``pqsift.scan(...).to_table()`` in the client, nothing
  sent), ``one row`` (a local relation of one row: a job with no data), ``python task``
  (``spark.range(1).mapInArrow`` passing its input through: a job with one Python task).

After a warm-up, the ways run in turns, ``--repeat`` rounds; each cell is the median (best)
wall time. Writes ``benches/results/connect_handoff.md`` (``--out``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import shapes, write_dataset
from spark_bench import connect_spark, describe, noop


def ways(spark: Any, path: str, columns: list[str], where: str, workdir: Path) -> dict[str, Callable[[], None]]:
    """Each way of getting the range's rows into a server DataFrame, run to ``noop``."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.pandas.types import from_arrow_schema

    import pqsift
    import pqsift.spark

    table = pqsift.scan(path, columns=columns, filter=where).to_table()
    struct = from_arrow_schema(table.schema)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    payload = sink.getvalue().to_pybytes()
    written = iter(range(1 << 30))

    def parquet_file() -> None:
        target = workdir / f"result-{next(written)}.parquet"
        pq.write_table(table, target, compression="none")
        noop(spark.read.schema(struct).parquet(str(target)))

    def closure_bytes() -> None:
        def emit(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for _ in batches:
                pass
            yield from pa.ipc.open_stream(payload).read_all().to_batches()

        noop(spark.range(1).mapInArrow(emit, struct))

    return {
        "native": lambda: noop(spark.read.parquet(path).select(*columns).filter(where)),
        "pqsift tasks": lambda: noop(pqsift.spark.read(spark, path, columns, where, driver_read_bytes=0)),
        "local relation": lambda: noop(spark.createDataFrame(table)),
        "parquet file": parquet_file,
        "closure bytes": closure_bytes,
        "client scan": lambda: pqsift.scan(path, columns=columns, filter=where).to_table(),
        "one row": lambda: noop(spark.createDataFrame(table.slice(0, 1))),
        "python task": lambda: noop(spark.range(1).mapInArrow(lambda batches: batches, "id long")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/bench"), help="the peers dataset (default: data/bench)")
    parser.add_argument("--repeat", type=int, default=9, help="rounds of runs in turns after the warm-up")
    parser.add_argument("--out", type=Path, default=Path("benches/results/connect_handoff.md"))
    args = parser.parse_args()
    if not list(args.data.glob("*.parquet")):
        print(f"writing {args.data} ...", flush=True)
        write_dataset(args.data)
    shape = shapes()[0]
    spark, server = connect_spark()
    try:
        with tempfile.TemporaryDirectory(prefix="pqsift-handoff-") as workdir:
            runs = ways(spark, str(args.data.resolve()), shape.columns, shape.where, Path(workdir))
            for run in runs.values():
                run()
            times: dict[str, list[float]] = {name: [] for name in runs}
            for round_ in range(args.repeat):
                names = list(runs)
                for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
                    started = time.perf_counter()
                    runs[name]()
                    times[name].append((time.perf_counter() - started) * 1000)
                print(f"round {round_ + 1}/{args.repeat}", flush=True)
    finally:
        server.stop()
    native = statistics.median(times["native"])
    lines = [
        "# A client's result into a Spark Connect server: the ways and their cost",
        "",
        f"`python benches/connect_handoff.py --repeat {args.repeat}`; dataset: `{args.data}` "
        f"({describe(args.data)}); shape: {shape.name}, `{shape.where}` → {', '.join(shape.columns)}. "
        "A local Connect server (`local[*]`); each way into the `noop` sink, in turns after a warm-up. "
        "Median (best) wall ms; `native ÷` is the native reader's median over the way's.",
        "",
        "| way | ms | native ÷ |",
        "|---|---:|---:|",
    ]
    for name, values in times.items():
        median = statistics.median(values)
        lines.append(f"| {name} | {median:.0f} ({min(values):.0f}) | {native / median:.2f}× |")
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
