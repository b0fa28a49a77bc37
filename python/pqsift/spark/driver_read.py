"""Small results read on the driver: when the driver's plan shows that little survives
pruning, :func:`pqsift.spark.read` reads it in the driver's process and hands Spark the
rows as Arrow batches (:mod:`pqsift.spark.driver_frame`; over Spark Connect
``spark.createDataFrame(arrow_table)``) instead of launching Python tasks.

Why: a query that keeps one row of a million still pays, through ``mapInArrow``, a Spark
job whose tasks start (or wake) Python workers, re-open the files and send their output
back to the JVM through Arrow. On two cores that costs ~100 ms, several times the read
itself (a bloom-filter point lookup reads in ~7 ms). Batches made on the driver need no
Python worker at all.

When: the plan's estimate of the compressed bytes the tasks would read
(:attr:`~pqsift.spark.planning.TaskPlan.selected_bytes`: the pages of the projected and
filtered columns that hold a selected row, see ``pqsift.planning.read_estimate`` in the
core) is at most ``driver_read_bytes``
(default :data:`DRIVER_READ_BYTES`, measured in ``benches/spark_bench.py --driver-sweep``),
and the rows read come to at most :data:`DRIVER_RESULT_BYTES` of Arrow data. The estimate
is of compressed bytes before the filter: a filter that keeps more than the estimate
suggests (text that compresses well) is caught by the second bound, where the read is
abandoned and the tasks read instead, so a large result never moves through the driver
and the work thrown away is bounded: once the output so far, scaled to all the row groups,
would pass that bound the read stops (a ~25% filter over the benchmark's 32 row groups
stops after its first batches, a few ms before the tasks start); without a filter, a plan
whose selected rows certainly pass it (:func:`output_floor`) begins none. A lazy plan (no
footer read on the driver) has no estimate and always runs as tasks.

How: the driver's own planned scan (:attr:`~pqsift.spark.planning.TaskPlan.scan`) is read
whole, as one stream over every file with all the cores, so no thread waits at the end of
one piece for the next to start and nothing is planned twice (read as the tasks' pieces,
one after another, the selective benchmark shape took 281 ms on the driver against 223 ms
in one stream). With ``ignore_corrupt_files``, a file that cannot be read sends the read
back to the pieces, one scan each (a few row groups at a time, the first alone), which
skip it as the tasks would.

On a local master (``local[N]``: the tasks would run on the driver's own cores) the first
bound is lifted by default: a selective filter over a wide text column leaves ~150 MiB of
pages to decompress but 1,893 rows, and read here with every core it skips the job's
Python workers and the hand-off to the JVM (``benches/spark_bench.py``: the peers
selective shape 3.32–3.75× Spark's native reader, 2.89–3.20× by tasks).

>>> pqsift.spark.read(spark, "events/", ["id", "note"], "id = 42")   # doctest: +SKIP
DataFrame[id: bigint, note: string]      # read on the driver: no MapInArrow in its plan
>>> pqsift.spark.read(spark, "events/", ["id"], "id = 42", driver_read_bytes=0)  # doctest: +SKIP
DataFrame[id: bigint]                    # always Python tasks (MapInArrow)
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from pqsift.errors import CorruptFileError, ReadBudgetError, UnsupportedError
from pqsift.scan import READ_OPTIONS, Scan
from pqsift.spark.planning import Piece, TableContext
from pqsift.spark.reader import READ_METRICS, STORE_METRICS, read_pieces

__all__ = [
    "CONNECT_RESULT_BYTES",
    "DRIVER_READ_BYTES",
    "DRIVER_RESULT_BYTES",
    "output_floor",
    "output_passes_the_bound",
    "read_on_driver",
    "result_bound",
]

#: At most this many compressed bytes left by the driver's plan are read on the driver.
#: The estimate counts every column of a kept row group, an upper bound of what late
#: materialization reads: a bloom-filter point lookup in the benchmark's 6 MiB row groups
#: reads 1.8 MiB. Measured (``benches/spark_bench.py --driver-sweep``, 2 cores): widening
#: the range shape's window, the driver is faster up to ~4 MiB selected, ~15 MiB of output
#: with text; beyond, the tasks read in parallel and hand rows over as they come. Output
#: is what decides (:data:`DRIVER_RESULT_BYTES`); this bound keeps the driver's reading
#: work small and lets through a point lookup in row groups of a few MiB.
DRIVER_READ_BYTES = 8 << 20

#: A read on the driver is abandoned (and the tasks read instead) once its output passes
#: this many bytes of Arrow data: the crossover of the same measurement, and a bound on
#: what goes through the driver's memory.
DRIVER_RESULT_BYTES = 16 << 20

#: The same bound for a Spark Connect client, whose rows reach Spark another way: sent to
#: the server, which makes them a local relation of JVM rows and ships those inside its
#: tasks, far slower per byte than Arrow batches. The bound sits where
#: ``benches/spark_bench.py --connect --driver-sweep`` puts the crossover (the runs and
#: their figures are in ``benches/results/spark_connect*.md`` and the docs): below it the
#: client's read wins; at the range shape's output the tasks read faster.
CONNECT_RESULT_BYTES = 2 << 20


def output_floor(rows: int, schema: pa.Schema) -> int:
    """The fewest bytes ``rows`` rows of ``schema`` take as Arrow data: the fixed-width
    columns' values and the strings' offsets (their bytes, and nested columns, counted as
    nothing). A read without a filter outputs every row its plan selects: when this
    passes the output bound (:func:`result_bound`), a read on the driver would be
    abandoned, so none is begun (a plain projection of 4M rows of two 8-byte columns: 64 MB).

    >>> output_floor(4_000_000, pa.schema([("id", pa.int64()), ("amount", pa.float64()), ("note", pa.string())]))
    80000000
    """
    width = 0.0
    for field in schema:
        kind = field.type
        if pa.types.is_boolean(kind):
            width += 1 / 8
        elif pa.types.is_string(kind) or pa.types.is_binary(kind):
            width += 4
        elif pa.types.is_large_string(kind) or pa.types.is_large_binary(kind):
            width += 8
        elif pa.types.is_string_view(kind) or pa.types.is_binary_view(kind):
            width += 16
        else:
            with contextlib.suppress(ValueError):  # nested: nothing counted
                width += kind.byte_width
    return int(rows * width)


def result_bound(connect: bool) -> int:
    """The output, in bytes of Arrow data, past which a read on the driver is abandoned:
    :data:`CONNECT_RESULT_BYTES` for a Spark Connect client, else :data:`DRIVER_RESULT_BYTES`."""
    return CONNECT_RESULT_BYTES if connect else DRIVER_RESULT_BYTES


def output_passes_the_bound(rows: int, schema: pa.Schema, bound: int) -> bool:
    """Whether ``rows`` rows of ``schema`` certainly take more than ``bound`` bytes
    (:func:`result_bound`)."""
    return output_floor(rows, schema) > bound


def _split(pieces: Iterable[Piece], row_groups: int) -> Iterator[Piece]:
    """``pieces`` with their row groups in runs of at most ``row_groups``, the first run of
    one: the output of the first runs predicts the rest, and a read abandoned after its
    first row group has little in flight to wait for."""
    run = 1
    for path, groups, values, deletion_vector, file_range, plan in pieces:
        if groups is None:
            yield (path, groups, values, deletion_vector, file_range, plan)
            continue
        start = 0
        while start < len(groups) or start == 0:
            # A run is not the piece the plan's bytes are of: it is planned here again
            # (from the driver's cached footers).
            whole = start == 0 and run >= len(groups)
            yield (path, groups[start : start + run], values, deletion_vector, file_range, plan if whole else None)
            start, run = start + run, row_groups


def read_on_driver(
    pieces: Iterable[Piece],
    columns: list[str] | None,
    filter: str | None,  # noqa: A002 - the public name
    *,
    schema: pa.Schema,
    partition_schema: list[tuple[str, str]],
    table: TableContext,
    ignore_corrupt_files: bool,
    threads: int | None,
    result_bytes: int | None = None,
    planned_scan: Scan | None = None,
    **options: Any,
) -> tuple[pa.Table | None, dict[str, Any]]:
    """Reads ``pieces`` here, as the tasks would (Spark's Arrow types), into a table of
    ``schema``: ``planned_scan`` (the driver's scan that planned them) as one stream if
    given, else piece by piece (:func:`~pqsift.spark.reader.read_pieces`). None once the
    output passes ``result_bytes`` (default :data:`DRIVER_RESULT_BYTES`), or the read its
    ``max_bytes_read`` option. Also returns what was read
    (:data:`~pqsift.spark.reader.READ_METRICS`), counted even for an abandoned read (but
    for a top-k's first pass stopped by ``max_bytes_read``, which ends before its stream
    exists)."""
    limit = DRIVER_RESULT_BYTES if result_bytes is None else result_bytes
    pieces = list(pieces)
    # What a read of the whole scan counted before it was given up for the pieces.
    spent = dict.fromkeys(READ_METRICS, 0)
    if planned_scan is not None:
        try:
            return _read_whole_scan(planned_scan, schema, limit, threads, options, spent), spent
        except ReadBudgetError:
            return None, spent
        except (CorruptFileError, UnsupportedError):
            if not ignore_corrupt_files:
                raise
        # Read again below, piece by piece, skipping what cannot be read.
    read: dict[str, Any] = {}
    batches: list[pa.RecordBatch] = []
    output_bytes = 0
    # Two row groups a thread per run: enough to keep the threads busy (one a thread left
    # them waiting on the slowest, +10% on the selective benchmark shape), few enough that
    # an output on course to pass the bound is seen early.
    pieces = list(_split(pieces, 2 * (threads or os.cpu_count() or 1)))
    weights = [1 if piece[1] is None else max(len(piece[1]), 1) for piece in pieces]
    total, done = sum(weights), [0]

    def in_order() -> Iterator[Piece]:
        for piece, weight in zip(pieces, weights, strict=True):
            yield piece
            done[0] += weight  # asked for the next one: this one is read

    stream = read_pieces(
        in_order(),
        columns,
        filter,
        partition_schema=partition_schema,
        table=table,
        ignore_corrupt_files=ignore_corrupt_files,
        threads=threads,
        report=read.update,
        **options,
    )
    try:
        for batches_seen, batch in enumerate(stream, start=1):
            output_bytes += batch.nbytes
            # Past the bound, or on course to pass it: the output so far scaled to all the
            # row groups, those read counted as the runs finished or the batches seen (a
            # batch holds at most a row group's rows; one without rows sends none).
            progress = max(done[0], batches_seen)
            if output_bytes > limit or output_bytes * total > limit * progress:
                return None, read
            batches.append(batch)
    except ReadBudgetError:
        return None, read
    finally:
        stream.close()  # runs the reader's finally: the counts are reported
        for name in READ_METRICS:
            read[name] = read.get(name, 0) + spent[name]
    return pa.Table.from_batches(batches, schema), read


def _read_whole_scan(
    planned: Scan,
    schema: pa.Schema,
    limit: int,
    threads: int | None,
    options: dict[str, Any],
    read: dict[str, Any],
) -> pa.Table | None:
    """The rows of ``planned`` as a table of ``schema``, read with ``threads`` and the read
    ``options``; None once the output passes ``limit`` or is on course to: scaled by the
    stream's progress (rows to scan over rows scanned), it would. Fills ``read`` with what
    was read."""
    read_options = {name: value for name, value in options.items() if name in READ_OPTIONS}
    whole = planned._with_read_options(**read_options, threads=threads, spark_output=True)
    # The driver's planning counts are its own; what planning this read adds is the read's.
    planned_before = planned._core.metrics()
    batches: list[pa.RecordBatch] = []
    output_bytes = 0
    try:
        # Batches as decoded (a row group, or a window of a large one: the first windows
        # small, so that a read on course to pass the bound stops after a few rows).
        stream = whole._stream(whole_batches="batch_size" not in options, first_batches_soon=True)
        for item in stream:
            batch = pa.record_batch(item)
            output_bytes += batch.nbytes
            batches.append(batch)
            # The output so far, scaled to all the rows to scan, must stay within the bound.
            scanned, total = stream.progress() or (0, 0)
            if output_bytes > limit or output_bytes * total > limit * scanned:
                return None
    finally:
        # Counted so far, an abandoned read too (its stream stops when dropped, on return).
        if whole._last_stream is not None:
            streamed, planning = whole._last_stream.metrics(), planned._core.metrics()
            for name in READ_METRICS:
                if name == "row_groups_read":
                    read[name] += int(planning.get("row_groups_selected", 0))
                elif name in STORE_METRICS:
                    read[name] += (
                        int(streamed.get(name, 0)) + int(planning.get(name, 0)) - int(planned_before.get(name, 0))
                    )
                else:
                    read[name] += int(streamed.get(name, 0))
    return pa.Table.from_batches(batches, schema)
