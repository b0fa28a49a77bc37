"""The function handed to ``DataFrame.mapInArrow``: it reads the task rows it is given
(file path, and optionally row groups or a byte range) with the Rust core and yields
Arrow record batches in exactly the types Spark expects.

Python workers are reused between tasks (``spark.python.worker.reuse``), so the core's
process-wide metadata cache serves later tasks on the same files; each task reads with
``threads=1`` by default, since Spark already runs one task per core. A task starting in
a worker freezes the worker's objects for Python's cycle collector
(:mod:`pqsift.spark.worker_gc`).

What a task read (:data:`READ_METRICS`) goes back to the driver through a Spark accumulator
on a classic session; Spark Connect has no accumulators, so there each task ends its output
with one row of its counts as JSON in the column :data:`METRICS_COLUMN`, every other column
null, which :func:`pqsift.spark.read` observes (``DataFrame.observe``) and filters out.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa

from pqsift import _core
from pqsift.errors import CorruptFileError, PqsiftError, UnsupportedError
from pqsift.expr import FilterLike, filter_sql
from pqsift.scan import _WHOLE_BATCH_ROWS, PLANNING_OPTIONS, READ_OPTIONS, Scan, _order_by, _scan, _storage_options
from pqsift.spark.planning import Piece, TableContext
from pqsift.spark.worker_gc import freeze_worker_objects
from pqsift.spark.worker_socket import AcknowledgeOnLoad

__all__ = [
    "METRICS_COLUMN",
    "READ_METRICS",
    "STORE_METRICS",
    "TASK_COLUMNS",
    "PlanFile",
    "Planned",
    "ReaderFunction",
    "plan_bytes",
    "planned_reader",
    "read_pieces",
    "reader",
]

#: Columns of a task DataFrame the reader understands; only ``path`` is required.
#: ``row_groups`` (array<int>) restricts a row to those row groups; ``range_start`` and
#: ``range_length`` (bigint) to the row groups whose midpoint lies in that byte range.
TASK_COLUMNS = ("path", "row_groups", "range_start", "range_length")

#: Object store counts of a scan (zero for local files), summed over the driver and tasks.
STORE_METRICS = ("requests", "retries", "bytes_requested")

#: Reading counts summed over tasks (see :class:`pqsift.spark.ScanMetrics`).
READ_METRICS = (
    "rows_out",
    "rows_decoded",
    "bytes_read",
    "cache_hits",
    "cache_misses",
    "row_groups_read",
    # Seconds tasks spent planning: loading the driver's plans (no footer read), or with
    # lazy planning reading and pruning footers themselves.
    "time_task_planning_s",
    *STORE_METRICS,
)

#: On Spark Connect, the output column (string) that carries each task's reading counts:
#: null in every data row, the counts as JSON in one last row per task.
METRICS_COLUMN = "__pqsift_task_metrics"

ReaderFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


@runtime_checkable
class _HasValue(Protocol):
    """A Spark broadcast variable (``pyspark.Broadcast``), by what the reader uses of it."""

    @property
    def value(self) -> list[list[Piece]]: ...


@dataclass(frozen=True)
class PlanFile:
    """Every task's pieces in one file that Spark ships to each node with the job (on
    Spark Connect, a file added as an artifact: ``SparkSession.addArtifacts(path,
    file=True)``), each task's at its own span: a task reads and unpickles its own pieces,
    where a function's closure holding every task's would be unpickled by each task, and
    would have to fit in one Connect request (128 MiB by default).

    >>> plans = PlanFile.write([[piece_a], [piece_b, piece_c]], directory)  # doctest: +SKIP
    >>> spark.addArtifacts(str(directory / plans.name), file=True)          # doctest: +SKIP
    >>> plans.pieces(1)   # in a task: SparkFiles.get(plans.name), its second span  # doctest: +SKIP
    [piece_b, piece_c]
    """

    #: The file's name, as ``pyspark.SparkFiles.get`` finds it: named by its content, so
    #: the same plans added twice are one file, and different plans never share a name.
    name: str
    #: ``(offset, length)`` of each task's pickled pieces in the file, by task id.
    spans: tuple[tuple[int, int], ...]

    @classmethod
    def write(cls, planned: list[list[Piece]], directory: Path) -> PlanFile:
        """Writes ``planned`` into a new file in ``directory``, named as :attr:`name` says."""
        parts = [pickle.dumps(pieces, protocol=pickle.HIGHEST_PROTOCOL) for pieces in planned]
        digest = hashlib.sha256()
        spans = []
        offset = 0
        for part in parts:
            digest.update(part)
            spans.append((offset, len(part)))
            offset += len(part)
        plans = cls(f"pqsift-plans-{digest.hexdigest()[:40]}.bin", tuple(spans))
        with open(directory / plans.name, "wb") as file:
            for part in parts:
                file.write(part)
        return plans

    def pieces(self, task: int) -> list[Piece]:
        """Task ``task``'s pieces, read from the file where Spark put it on this node."""
        from pyspark import SparkFiles

        offset, length = self.spans[task]
        path = SparkFiles.get(self.name)
        try:
            with open(path, "rb") as file:
                file.seek(offset)
                part = file.read(length)
        except OSError as error:
            raise PqsiftError(f"the task plans' file {self.name} is not on this node ({path}): {error}") from error
        if len(part) != length:
            raise PqsiftError(
                f"the task plans' file {self.name} ends at {offset + len(part)}, before task {task}'s plan"
            )
        pieces: list[Piece] = pickle.loads(part)
        return pieces


#: Every task's pieces, by task id: a list; a broadcast variable of one (its ``value``),
#: which a reused Python worker loads once for all the tasks it runs, where a function's
#: closure is unpickled by each task; or a :class:`PlanFile`, from which each task reads
#: its own.
Planned = list[list[Piece]] | _HasValue | PlanFile


def reader(
    columns: list[str] | None = None,
    filter: FilterLike | None = None,  # noqa: A002 - the public name
    *,
    ignore_corrupt_files: bool = False,
    metrics: Any = None,
    threads: int = 1,
    **options: Any,
) -> ReaderFunction:
    """The function to hand to ``tasks.mapInArrow(f, schema)``, where ``tasks`` is a
    DataFrame with a ``path`` column and optionally ``row_groups`` (array<int>) or
    ``range_start`` / ``range_length`` (bigint) columns, and ``schema`` is
    :func:`pqsift.spark.schema` of the same files and ``columns``.

    Each task row is read with late materialization: ``filter`` (Spark SQL text or an
    :class:`~pqsift.Expr`, with Spark's semantics) is evaluated in the core, and only the
    surviving rows of ``columns`` come out, in Spark's Arrow types. ``options`` are those
    of :func:`pqsift.scan` (``session_time_zone`` should be the Spark session's);
    ``threads`` defaults to 1 per task. A corrupt or unsupported file fails the task with
    its path in the message, unless ``ignore_corrupt_files``: then it is skipped and counted
    (``files_skipped`` in ``metrics``, a :class:`pqsift.spark.ScanMetrics`).

    >>> from pqsift.spark import reader, schema                         # doctest: +SKIP
    >>> files = spark.createDataFrame([(p,) for p in paths], "path string")
    >>> files.mapInArrow(reader(["id"], "amount > 200"), schema(paths, ["id"]))
    """
    filter = filter_sql(filter)  # noqa: A001 - the public parameter, as SQL text
    _check_options(options)
    if metrics is not None and getattr(metrics, "accumulator", None) is None:
        raise ValueError(
            "pqsift.spark.reader(metrics=...) needs a classic Spark session (an accumulator); "
            "on Spark Connect, pqsift.spark.read(metrics=...) collects the metrics"
        )
    return _reader(columns, filter, ignore_corrupt_files, metrics, threads, options, planned=None)


def _check_options(options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - set(PLANNING_OPTIONS) - set(READ_OPTIONS))
    if unknown:
        raise TypeError(f"reader() got unexpected option(s): {', '.join(unknown)}")
    for name in ("file_range", "row_groups", "spark_output"):
        if name in options:
            raise TypeError(f"reader() sets option {name} itself (from the task rows / for Spark)")


def planned_reader(
    planned: Planned,
    columns: list[str] | None,
    filter: str | None,  # noqa: A002 - the public name
    *,
    partition_schema: list[tuple[str, str]] | None = None,
    table: TableContext | None = None,
    ignore_corrupt_files: bool = False,
    metrics: Any = None,
    metrics_schema: pa.Schema | None = None,
    threads: int = 1,
    **options: Any,
) -> ReaderFunction:
    """As :func:`reader`, for a task DataFrame of ``spark.range(len(planned))``: the row
    with ``id`` *i* reads the pieces ``planned[i]`` (``(path, row_groups,
    partition_values, deletion_vector)``, the values of the table's ``partition_schema``;
    ``table`` for a Delta table's files). The plan travels in the function's closure, so
    the task DataFrame is built in the JVM, without a Python round trip; or, as a Spark
    broadcast variable of it, read by each Python worker once rather than by each task; or
    in a :class:`PlanFile`, each task reading its own (see :data:`Planned`).

    ``metrics_schema`` (Spark Connect, instead of ``metrics``): the Arrow schema of the
    output; each batch then also has the string column :data:`METRICS_COLUMN`, null, and
    each task ends with one row of its reading counts as JSON there, nulls elsewhere."""
    options = {**options, "partition_schema": partition_schema or [], "table": table or TableContext()}
    return _reader(
        columns, filter, ignore_corrupt_files, metrics, threads, options, planned=planned, metrics_schema=metrics_schema
    )


def _reader(
    columns: list[str] | None,
    filter: str | None,  # noqa: A002
    ignore_corrupt_files: bool,
    metrics: Any,
    threads: int,
    options: dict[str, Any],
    planned: Planned | None,
    metrics_schema: pa.Schema | None = None,
) -> ReaderFunction:
    report = None if metrics is None else metrics.accumulator.add
    read_rows = _row_reader(columns, filter, ignore_corrupt_files, report, threads, options, metrics_schema)

    def rows_of(batch: pa.RecordBatch) -> Iterator[dict[str, Any]]:
        if planned is None:
            yield from batch.to_pylist()
            return
        for task in batch.column("id").to_pylist():
            for piece in _pieces_of(planned, task):
                yield _piece_row(piece)

    def read_tasks(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        freeze_worker_objects()
        return read_rows(row for batch in batches for row in rows_of(batch))

    # Pickled with the function (its `__dict__` travels): the worker that unpickles it
    # acknowledges the function at once, so that its input is not held back.
    read_tasks.__dict__["acknowledge"] = AcknowledgeOnLoad()
    return read_tasks


def plan_bytes(planned: list[list[Piece]]) -> int:
    """The bytes of every task's plans together (what a function carrying them weighs)."""
    return sum(len(plan or b"") for pieces in planned for *_, plan in pieces)


def _pieces_of(planned: Planned, task: int) -> list[Piece]:
    """Task ``task``'s pieces, however ``planned`` carries them."""
    if isinstance(planned, PlanFile):
        return planned.pieces(task)
    # A broadcast variable's value is loaded once per worker process and kept.
    tasks = planned.value if isinstance(planned, _HasValue) else planned
    return tasks[task]


def read_pieces(
    pieces: Iterable[Piece],
    columns: list[str] | None,
    filter: str | None,  # noqa: A002 - the public name
    *,
    partition_schema: list[tuple[str, str]] | None = None,
    table: TableContext | None = None,
    ignore_corrupt_files: bool = False,
    threads: int | None = 1,
    report: Callable[[dict[str, Any]], None] | None = None,
    metrics_schema: pa.Schema | None = None,
    planning: dict[str, Any] | None = None,
    **options: Any,
) -> Generator[pa.RecordBatch, None, None]:
    """Reads planned ``(path, row_groups, partition_values, deletion_vector)`` pieces as
    :func:`reader` reads task rows (the data source's ``read``, which gets its pieces as
    Python values, not as a DataFrame, and the driver's read of a small result).
    ``report`` is given the reading counts (:data:`READ_METRICS`, ``files_skipped``) when
    the read ends or is abandoned; with ``metrics_schema`` they come in-band instead, as
    :func:`planned_reader` sends them, with ``planning`` (the driver's counts, sent by one
    task) under the key ``"planning"``."""
    options = {**options, "partition_schema": partition_schema or [], "table": table or TableContext()}
    read_rows = _row_reader(columns, filter, ignore_corrupt_files, report, threads, options, metrics_schema, planning)
    return read_rows(_piece_row(piece) for piece in pieces)


def _piece_row(piece: Piece) -> dict[str, Any]:
    path, row_groups, values, deletion_vector, file_range, plan = piece
    row: dict[str, object] = {
        "path": path,
        "row_groups": row_groups,
        "partition_values": values,
        "deletion_vector": deletion_vector,
        "plan": plan,
    }
    if file_range is not None:
        row["range_start"], row["range_length"] = file_range
    return row


def _row_reader(
    columns: list[str] | None,
    filter: str | None,  # noqa: A002
    ignore_corrupt_files: bool,
    report: Callable[[dict[str, Any]], None] | None,
    threads: int | None,
    options: dict[str, Any],
    metrics_schema: pa.Schema | None = None,
    planning: dict[str, Any] | None = None,
) -> Callable[[Iterable[dict[str, Any]]], Generator[pa.RecordBatch, None, None]]:
    """Reads task rows (``path`` and optionally ``row_groups`` or a byte range), handing
    what each task read to ``report`` (an accumulator's ``add``) when it ends (or, with
    ``metrics_schema``, sending it in-band, ``planning`` too: see :func:`planned_reader`)."""
    settings = {**options, "threads": threads, "spark_output": True}
    partition_schema = settings.pop("partition_schema", None) or []
    table = settings.pop("table", None) or TableContext()
    # The driver chose the snapshot and the schema (it comes in the table context): a task
    # reads files, not the table.
    for decided in (
        "version",
        "snapshot_id",
        "timestamp",
        "schema",
        "merge_schema",
        "match_field_ids",
        "ignore_missing_field_ids",
    ):
        settings.pop(decided, None)
    column_list = None if columns is None else list(columns)

    def read_rows(rows: Iterable[dict[str, Any]]) -> Generator[pa.RecordBatch, None, None]:
        totals: dict[str, Any] = dict.fromkeys(READ_METRICS, 0)
        totals["time_task_planning_s"] = 0.0
        totals["files_skipped"] = []
        try:
            for scanned_together in _scans(rows, together=not ignore_corrupt_files):
                for batch in _read_rows(
                    scanned_together,
                    column_list,
                    filter,
                    settings,
                    partition_schema,
                    table,
                    ignore_corrupt_files,
                    totals,
                ):
                    yield batch if metrics_schema is None else _with_metrics_column(batch)
        finally:
            if report is not None:
                report(totals)
        if metrics_schema is not None:
            # Only a task that read all its rows: a failed one fails the job, and one whose
            # consumer stopped early (a LIMIT) is not asked for more output.
            yield _metrics_row(metrics_schema, totals if planning is None else {**totals, "planning": planning})

    return read_rows


def _with_metrics_column(batch: pa.RecordBatch) -> pa.RecordBatch:
    return batch.append_column(pa.field(METRICS_COLUMN, pa.string()), pa.nulls(batch.num_rows, pa.string()))


def _metrics_row(schema: pa.Schema, totals: dict[str, Any]) -> pa.RecordBatch:
    """One row: nulls in every output column, the task's counts as JSON in the last."""
    columns = [pa.nulls(1, field.type) for field in schema]
    return pa.RecordBatch.from_arrays(
        [*columns, pa.array([json.dumps(totals)], pa.string())],
        schema=schema.append(pa.field(METRICS_COLUMN, pa.string())),
    )


#: At most this many files a task plans itself are scanned together: a scan keeps the
#: footers of the files it reads until it ends (those its filter prunes it lets go), and a
#: footer of thousands of columns takes megabytes.
SCAN_FILES_TOGETHER = 64


def _scans(rows: Iterable[dict[str, Any]], together: bool) -> Iterator[list[dict[str, Any]]]:
    """The task rows in the scans that read them: with ``together``, consecutive whole files
    the task plans itself (lazy planning), up to :data:`SCAN_FILES_TOGETHER`, in one scan —
    planning and starting a stream per file costs more than reading a small file, and a
    limit or top-k threshold then carries from file to file — every other row alone. Apart,
    a corrupt file fails only its own scan, which ``ignore_corrupt_files`` needs."""
    group: list[dict[str, Any]] = []
    for row in rows:
        if together and _planned_by_task(row):
            if len(group) == SCAN_FILES_TOGETHER:
                yield group
                group = []
            group.append(row)
            continue
        if group:
            yield group
            group = []
        yield [row]
    if group:
        yield group


def _planned_by_task(row: dict[str, Any]) -> bool:
    """Whether a task row is a whole file whose table piece came with it (lazy planning)."""
    return (
        row.get("plan") is not None
        and row.get("row_groups") is None
        and row.get("range_start") is None
        and row.get("range_length") is None
    )


def _read_rows(
    rows: list[dict[str, Any]],
    columns: list[str] | None,
    filter: str | None,  # noqa: A002
    settings: dict[str, Any],
    partition_schema: list[tuple[str, str]],
    table: TableContext,
    ignore_corrupt_files: bool,
    totals: dict[str, Any],
) -> Iterator[pa.RecordBatch]:
    """Reads task rows in one scan: one row, or several that :func:`_scans` put together."""
    paths: list[str] = []
    for row in rows:
        if not isinstance(row.get("path"), str):
            raise ValueError(f"a task row needs a string 'path', got {row!r}")
        paths.append(row["path"])
    row, path = rows[0], paths[0]
    if row.get("plan") is not None and row.get("row_groups") is not None:
        yield from _read_planned(path, row["plan"], len(row["row_groups"]), settings, ignore_corrupt_files, totals)
        return
    options = dict(settings)
    if row.get("plan") is not None:
        # Lazy planning: what the table's metadata says of each file came with it.
        planned_elsewhere: dict[str, Any] = {"table_pieces": [r["plan"] for r in rows]}
    else:
        planned_elsewhere = table.planned_elsewhere(row.get("deletion_vector"))
        if partition_schema:
            # The driver's partition values: the task reads one file, no discovery.
            planned_elsewhere["partition_values"] = (partition_schema, [list(row.get("partition_values") or [])])
    if row.get("row_groups") is not None:
        options["row_groups"] = list(row["row_groups"])
    elif row.get("range_start") is not None or row.get("range_length") is not None:
        start = int(row.get("range_start") or 0)
        length = row.get("range_length")
        # No length: to the end of the file (a length past any file's end; no size is
        # asked of the file, which may be in an object store).
        options["file_range"] = (start, int(length) if length is not None else 1 << 62)
    task_scan = None
    try:
        task_scan = _scan(paths, columns, filter, options, **planned_elsewhere)
        # Without a batch_size asked for, the batches as decoded (at most `decode_bytes`):
        # each batch crossing into the JVM has a fixed cost, so small batches add up
        # (benches/results/spark_handoff.md).
        yield from task_scan._batches(whole_batches="batch_size" not in settings)
    except (CorruptFileError, UnsupportedError):
        if not ignore_corrupt_files:
            raise
        if path not in totals["files_skipped"]:  # a file read in several pieces is listed once
            totals["files_skipped"].append(path)
    finally:
        read = _metrics_of(task_scan)
        _add_read(totals, read, int(read.get("row_groups_selected", 0)), float(read.get("time_plan_s", 0.0)))


def _read_planned(
    path: str,
    plan: bytes,
    row_groups: int,
    settings: dict[str, Any],
    ignore_corrupt_files: bool,
    totals: dict[str, Any],
) -> Iterator[pa.RecordBatch]:
    """Reads a piece the driver planned (its plan's bytes, see
    :meth:`pqsift._core.Scan.task_plans`): no planning, no footer read."""
    read_options = {name: value for name, value in settings.items() if name in READ_OPTIONS}
    read_options["order_by"] = _order_by(read_options.get("order_by"))
    if "batch_size" not in settings:
        # The batches as decoded (see `_read_rows`).
        read_options["batch_size"] = _WHOLE_BATCH_ROWS
    stream = None
    loading = 0.0
    try:
        stream, loading = _core.read_task(plan, read_options, _storage_options(settings.get("storage_options")))
        for batch in stream:
            yield pa.record_batch(batch)
    except (CorruptFileError, UnsupportedError):
        if not ignore_corrupt_files:
            raise
        if path not in totals["files_skipped"]:
            totals["files_skipped"].append(path)
    finally:
        _add_read(totals, {} if stream is None else stream.metrics(), 0 if stream is None else row_groups, loading)


def _add_read(totals: dict[str, Any], read: dict[str, Any], row_groups: int, planning_seconds: float) -> None:
    """Adds what one piece read (a scan's or a stream's metrics) to a task's ``totals``."""
    for name in READ_METRICS:
        if name not in ("row_groups_read", "time_task_planning_s"):
            totals[name] += int(read.get(name, 0))
    totals["row_groups_read"] += row_groups
    totals["time_task_planning_s"] += planning_seconds


def _metrics_of(task_scan: Scan | None) -> dict[str, Any]:
    """What a task's scan read; nothing for a file that could not be opened or planned."""
    if task_scan is None:
        return {}
    try:
        return task_scan.metrics
    except PqsiftError:
        return {}
