"""Task planning on the Spark driver (partitions as Databend's pruner pipeline makes them):
list the files, prune files and row groups from footers, and cut the survivors into tasks
balanced by compressed bytes.

>>> tasks = plan_tasks("events/", filter="kind = 'refund'", target_task_bytes=64 << 20)  # doctest: +SKIP
>>> tasks.tasks[0].pieces                                                               # doctest: +SKIP
(TaskPiece(path='events/part-0.parquet', row_groups=(0, 1, 2)),)
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pqsift.expr import FilterLike
from pqsift.scan import Scan, _scan

__all__ = [
    "DEFAULT_TARGET_TASK_BYTES",
    "LAZY_PLANNING_FILES",
    "MANIFESTS_READ_BY_TASKS",
    "MIN_TASK_BYTES",
    "Piece",
    "TableContext",
    "Task",
    "TaskPiece",
    "TaskPlan",
    "absolute_path",
    "absolute_source",
    "plan_tasks",
]

#: A piece as it travels to a worker: ``(path, row_groups, partition_values,
#: deletion_vector, file_range, plan)``. ``plan``: the driver's plan of it
#: (``pqsift._core.Scan.task_plans``: the footer, the row groups' selections, the bound
#: view), read by the task as it is. ``row_groups`` None: the task plans the file itself
#: (lazy planning), reading the row groups whose midpoint is in ``file_range`` if given.
Piece = tuple[str, list[int] | None, list[str | None], str | None, tuple[int, int] | None, bytes | None]

#: Above this many files (once partition values and a Delta log have pruned), :func:`plan_tasks`
#: reads no footer: it packs files into tasks by size and each task plans its own files
#: (Databend's lazy partitions). Footers read one after another on the driver are cheap from
#: a local disk but a request each from an object store.
LAZY_PLANNING_FILES = 1000

#: Above this many data manifests (once their partition summaries have pruned), unless
#: ``lazy=False``, the driver reads an Iceberg table's manifest list alone and the tasks
#: read the manifests (distributed planning): each task a stripe of some manifests' files.
MANIFESTS_READ_BY_TASKS = 100

#: Spark's ``spark.sql.files.maxPartitionBytes``: the most a task reads before the next one.
DEFAULT_TARGET_TASK_BYTES = 128 << 20
#: Spark's ``spark.sql.files.openCostInBytes``: below this, spreading over more tasks costs
#: more in task start-up than it saves.
MIN_TASK_BYTES = 4 << 20


# A URL: a scheme (letters, digits, + - .) then "://", as the core's Location::parse sees one.
_URL = re.compile(r"^[A-Za-z0-9+.-]+://")


def absolute_path(path: str | os.PathLike[str], base_directory: str | None = None) -> str:
    """``path`` made absolute against ``base_directory`` (default: this process's working
    directory), so that another process — a Spark task, a Spark Connect server's Python
    worker, each in a working directory of its own — reads the file the user named. URLs
    (``s3://...``, ``file://...``) and absolute paths are returned as they are.

    >>> absolute_path("events/day=1", "/home/me")
    '/home/me/events/day=1'
    >>> absolute_path("s3://bucket/events/", "/home/me")
    's3://bucket/events/'
    """
    text = os.fspath(path)
    if _URL.match(text) or os.path.isabs(text):
        return text
    base = os.getcwd() if base_directory is None else base_directory
    return os.path.normpath(os.path.join(base, text))


def absolute_source(
    source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    base_directory: str | None = None,
) -> str | list[str]:
    """A scan's ``source`` (a path, a URL, or several) with every relative path made
    absolute by :func:`absolute_path`."""
    if isinstance(source, (str, os.PathLike)):
        return absolute_path(source, base_directory)
    return [absolute_path(path, base_directory) for path in source]


@dataclass(frozen=True)
class TaskPiece:
    """Row groups of one file that one task reads (they survived the driver's pruning),
    the file's partition values (canonical text, one per partition column) and, in a Delta
    table, its deletion vector (the log's descriptor as JSON)."""

    path: str
    #: None: the task plans the file (lazy planning).
    row_groups: tuple[int, ...] | None
    partition_values: tuple[str | None, ...] = ()
    deletion_vector: str | None = None
    #: With lazy planning, a byte range of a large file: the row groups whose midpoint is in it.
    file_range: tuple[int, int] | None = None
    #: The driver's plan of the piece, as bytes (``pqsift._core.Scan.task_plans``): what the
    #: task reads without planning again or reading the footer. With lazy planning, what
    #: the table's metadata says of the file (``pqsift._core.Scan.table_pieces``), from
    #: which the task plans it.
    plan: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Task:
    """What one Spark task reads: pieces of one or more files, their row groups' compressed
    bytes and rows, and ``read_bytes``, the compressed bytes its read can take (the sum of
    their ``RowGroupPlan.read_bytes``; None where nothing below the file was planned)."""

    pieces: tuple[TaskPiece, ...]
    compressed_bytes: int
    rows: int
    read_bytes: int | None = None

    def to_rows(self) -> list[Piece]:
        """The pieces as plain :data:`Piece` tuples: what travels to the workers."""
        return [
            (
                piece.path,
                None if piece.row_groups is None else list(piece.row_groups),
                list(piece.partition_values),
                piece.deletion_vector,
                piece.file_range,
                piece.plan,
            )
            for piece in self.pieces
        ]


@dataclass(frozen=True)
class TaskPlan:
    """The tasks of a scan, and the driver's pruning counts (``pqsift.Scan.metrics``).
    ``partition_schema`` is the table's partition columns as ``(name, Spark type)``
    pairs, ``partition_values`` per file of ``files`` their values (canonical text). For a
    Delta table, ``table`` says how tasks read its files (the declared schema, where
    deletion vectors live)."""

    tasks: list[Task]
    files: list[str]
    metrics: dict[str, int] = field(default_factory=dict)
    #: The compressed bytes the tasks can read, from the plan: per kept row group, the
    #: chunks of the projected and filtered columns, and with a page index only their pages
    #: holding a selected row (``RowGroupPlan.read_bytes``). None for a lazy plan (no
    #: footer read: nothing known below the file).
    selected_bytes: int | None = None
    #: The Arrow bytes of the rows the page index shows pass the filter, estimated from the
    #: footers (``RowGroupPlan.certain_output_bytes`` of the kept row groups): about what a
    #: filtered read outputs at least, before deletion vectors and limits. None for a lazy
    #: plan.
    certain_output_bytes: int | None = None
    explain: str = ""
    partition_schema: list[tuple[str, str]] = field(default_factory=list)
    partition_values: list[list[str | None]] = field(default_factory=list)
    table: TableContext = field(default_factory=lambda: TableContext())
    #: The scan the driver planned, footers read (None for a lazy plan): a read on the
    #: driver streams it whole (:mod:`pqsift.spark.driver_read`).
    scan: Scan | None = None


@dataclass(frozen=True)
class TableContext:
    """What a task needs of a table beyond its files: for a Delta table the declared schema
    (``pqsift._core.Scan.declared_schema``), the table's root (deletion vectors are found
    from it) and its name for messages; all None for other tables."""

    declared_schema: str | None = None
    table_root: str | None = None
    table_name: str | None = None

    def planned_elsewhere(self, deletion_vector: str | None) -> dict[str, Any]:
        """What a task planning one file of the table itself tells the core's scan of the
        table (``pqsift._core.Scan``'s ``declared_schema`` and ``deletion_vector``)."""
        if self.declared_schema is None:
            return {}
        options: dict[str, Any] = {"declared_schema": self.declared_schema}
        if deletion_vector is not None:
            options["deletion_vector"] = (self.table_root, deletion_vector)
        return options


def plan_tasks(
    source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    columns: Iterable[str] | None = None,
    filter: FilterLike | None = None,  # noqa: A002 - the public name
    *,
    target_task_bytes: int = DEFAULT_TARGET_TASK_BYTES,
    parallelism: int | None = None,
    lazy: bool | None = None,
    **scan_options: Any,
) -> TaskPlan:
    """Plans the tasks of a scan of ``source``: footers, bloom filters and page indexes are
    read (through the process-wide metadata cache), pruned row groups dropped, and the
    surviving row groups, in file order, cut into as few tasks of equal bytes to read as keep
    each near ``target_task_bytes`` (a row group goes to the task its middle byte falls
    in). The bytes to read are the row groups' ``RowGroupPlan.read_bytes``, the chunks of
    the columns read and with a page index only their pages holding a selected row, not
    their whole size as in Spark's file source: a narrow projection of wide row groups is a
    few tasks, not one per row group. As in Spark's file source, the target shrinks to
    spread the data over
    ``parallelism`` tasks (the cluster's cores) but not below :data:`MIN_TASK_BYTES`; a
    large file becomes several row-group ranges and small files share a task. A row group
    is never split. ``scan_options`` are the pruning options of :func:`pqsift.scan`.

    ``lazy`` (default: above :data:`LAZY_PLANNING_FILES` files): no footer is read here —
    files pruned on partition values and a Delta log's statistics only, packed into tasks
    by file size (a file larger than the target split into byte ranges), and each task
    reads and prunes its own footers (Databend's lazy partitions).
    """
    if isinstance(target_task_bytes, bool) or not isinstance(target_task_bytes, int) or target_task_bytes <= 0:
        raise ValueError(f"target_task_bytes must be a positive int, got {target_task_bytes!r}")
    if parallelism is not None and (
        isinstance(parallelism, bool) or not isinstance(parallelism, int) or parallelism <= 0
    ):
        raise ValueError(f"parallelism must be a positive int, got {parallelism!r}")
    defer = None if lazy is False else MANIFESTS_READ_BY_TASKS
    planned = _scan(source, columns, filter, dict(scan_options), defer_manifests_above=defer)
    deferred, mean_file_bytes = planned._core.deferred_manifests
    if deferred:
        return _plan_manifests(planned, deferred, mean_file_bytes, target_task_bytes, parallelism)
    if lazy is None:
        lazy = len(planned.files) > LAZY_PLANNING_FILES
    if lazy:
        return _plan_lazily(planned, target_task_bytes, parallelism)
    plan = planned.plan()
    values = planned._core.partition_values
    deletion_vectors = planned._core.deletion_vectors
    units = [
        (position, rg.index, rg.compressed_bytes, rg.selected_rows, rg.read_bytes)
        for position, file in enumerate(plan.files)
        for rg in file.row_groups
        if rg.decision != "skip"
    ]
    total = selected_bytes = sum(read for _, _, _, _, read in units)
    certain_output_bytes = sum(
        rg.certain_output_bytes for file in plan.files for rg in file.row_groups if rg.decision != "skip"
    )
    target = target_task_bytes
    if parallelism:
        target = min(target, max(MIN_TASK_BYTES, math.ceil(total / parallelism)))
    # As many tasks as the target asks, of equal bytes to read: each row group goes to the
    # task its middle byte falls in. (Filling each task up to the target left a small
    # remainder: 16, 15 and 1 row groups on two cores, the third task run after the others.)
    count = max(1, math.ceil(total / target))
    cut: list[tuple[list[tuple[int, list[int]]], int, int, int]] = []  # per task: pieces, bytes, rows, read bytes
    pieces: list[tuple[int, list[int]]] = []
    task_bytes = task_rows = task_read = before = 0
    task_index = None
    for position, index, size, rows, read in units:
        at = min(count - 1, (2 * before + read) * count // (2 * total)) if total else 0
        before += read
        if pieces and at != task_index:
            cut.append((pieces, task_bytes, task_rows, task_read))
            pieces, task_bytes, task_rows, task_read = [], 0, 0, 0
        task_index = at
        if pieces and pieces[-1][0] == position:
            pieces[-1][1].append(index)
        else:
            pieces.append((position, [index]))
        task_bytes += size
        task_rows += rows
        task_read += read
    if pieces:
        cut.append((pieces, task_bytes, task_rows, task_read))
    # Each piece carries the driver's plan of it (footer, row groups' selections): its task
    # reads that as it is, planning nothing again.
    plans = iter(planned._core.task_plans([piece for task_pieces, _, _, _ in cut for piece in task_pieces]))
    tasks = [
        Task(
            pieces=tuple(
                TaskPiece(
                    plan.files[position].path,
                    tuple(row_groups),
                    tuple(values[position]),
                    deletion_vectors[position],
                    plan=next(plans),
                )
                for position, row_groups in task_pieces
            ),
            compressed_bytes=task_bytes,
            rows=task_rows,
            read_bytes=task_read,
        )
        for task_pieces, task_bytes, task_rows, task_read in cut
    ]
    return TaskPlan(
        tasks=tasks,
        files=planned.files,
        metrics=dict(plan.metrics),
        selected_bytes=selected_bytes,
        certain_output_bytes=certain_output_bytes,
        explain=plan.explain(),
        partition_schema=planned.partition_schema,
        partition_values=values,
        table=TableContext(planned._core.declared_schema, planned._core.table_root, planned._core.table_name),
        scan=planned,
    )


def _plan_manifests(
    planned: Any,
    deferred: list[tuple[str, int | None]],
    mean_file_bytes: int | None,
    target_task_bytes: int,
    parallelism: int | None,
) -> TaskPlan:
    """Tasks that read an Iceberg snapshot's data manifests themselves (the driver read the
    manifest list and one manifest): manifests packed by the files the list counts, a
    large one striped over several tasks. The list counts files, not bytes: the files of
    the manifest read give the mean size, and a task as many files as make its target
    bytes (shrunk, as for lazy planning, to spread them over ``parallelism`` tasks)."""
    counts = [max(1, files or 1) for _, files in deferred]
    file_bytes = max(1, mean_file_bytes or 1)
    total = sum(counts) * file_bytes
    target = target_task_bytes
    if parallelism:
        target = min(target, max(MIN_TASK_BYTES, math.ceil(total / parallelism)))
    most = max(1, target // file_bytes)
    stripes: list[tuple[list[int], int, int]] = []
    packed: list[int] = []
    packed_files = 0
    for position, files in enumerate(counts):
        if files > most:
            count = math.ceil(files / most)
            stripes.extend(([position], index, count) for index in range(count))
            continue
        if packed and packed_files + files > most:
            stripes.append((packed, 0, 1))
            packed, packed_files = [], 0
        packed.append(position)
        packed_files += files
    if packed:
        stripes.append((packed, 0, 1))
    source = planned._core.manifest_piece_source
    pieces = planned._core.manifest_pieces(stripes)
    tasks = [Task(pieces=(TaskPiece(source, None, plan=piece),), compressed_bytes=0, rows=0) for piece in pieces]
    explain = (
        f"distributed planning: {len(deferred)} data manifest(s) of {sum(counts):,} file(s) (~{file_bytes:,} bytes "
        f"each) left by their partition summaries, read by {len(tasks)} task(s) of at most {most} file(s), which "
        f"prune and read their files\n"
    )
    return TaskPlan(
        tasks=tasks,
        files=[],
        metrics=dict(planned.metrics),
        explain=planned.explain() + explain,
        table=TableContext(planned._core.scan_schema(), planned._core.table_root, planned._core.table_name),
    )


def _plan_lazily(planned: Any, target_task_bytes: int, parallelism: int | None) -> TaskPlan:
    """Tasks of whole files (or byte ranges of large ones) packed by size, no footer read."""
    files, metrics = planned._core.files_to_read()
    values = planned._core.partition_values
    deletion_vectors = planned._core.deletion_vectors
    paths = planned.files
    total = sum(size for _, size in files)
    target = target_task_bytes
    if parallelism:
        target = min(target, max(MIN_TASK_BYTES, math.ceil(total / parallelism)))
    tasks: list[Task] = []
    pieces: list[TaskPiece] = []
    task_bytes = 0

    # What the table's metadata says of each file (its declared schema with fills and
    # delete predicates, partition values, deleted rows) travels with it: the task plans the
    # file from its footer on, not from the table again.
    table_pieces = dict(zip((p for p, _ in files), planned._core.table_pieces([p for p, _ in files]), strict=True))

    def piece(position: int, file_range: tuple[int, int] | None) -> TaskPiece:
        return TaskPiece(
            paths[position],
            None,
            tuple(values[position]),
            deletion_vectors[position],
            file_range,
            plan=table_pieces[position],
        )

    for position, size in files:
        if size > target:
            # Row groups are read by the range holding their midpoint: each exactly once.
            for start in range(0, size, target):
                tasks.append(
                    Task(
                        pieces=(piece(position, (start, min(target, size - start))),),
                        compressed_bytes=min(target, size - start),
                        rows=0,
                    )
                )
            continue
        if pieces and task_bytes + size > target:
            tasks.append(Task(pieces=tuple(pieces), compressed_bytes=task_bytes, rows=0))
            pieces, task_bytes = [], 0
        pieces.append(piece(position, None))
        task_bytes += size
    if pieces:
        tasks.append(Task(pieces=tuple(pieces), compressed_bytes=task_bytes, rows=0))
    # The tasks read their files into one schema (the first file's, unless the table
    # declares or merges one): each task sees only its own files.
    table = TableContext(planned._core.scan_schema(), planned._core.table_root, planned._core.table_name)
    explain = (
        f"lazy planning: {len(files)} of {len(paths)} file(s) left by partition values and table statistics, "
        f"{total:,} bytes in {len(tasks)} task(s); footers are read and pruned by the tasks\n"
    )
    return TaskPlan(
        tasks=tasks,
        files=paths,
        metrics=dict(metrics),
        explain=explain,
        partition_schema=planned.partition_schema,
        partition_values=values,
        table=table,
    )
