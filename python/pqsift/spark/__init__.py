"""pqsift inside PySpark: the Rust reader runs in Spark's Python workers.

Two ways in, both returning exactly the rows ``spark.read.parquet(path).filter(f)
.select(cols)`` returns, with Spark's schema:

* :func:`read` plans on the driver — files and row groups pruned from footers, the
  survivors packed into tasks balanced by compressed bytes, one task per partition — and
  reads them with ``DataFrame.mapInArrow`` and the function :func:`reader` returns::

      import pqsift.spark
      metrics = pqsift.spark.ScanMetrics(spark)
      df = pqsift.spark.read(spark, "events/", columns=["id", "note"],
                             filter="kind = 'refund' AND amount > 900", metrics=metrics)
      df.show(); metrics.value   # row groups / pages pruned, rows decoded, bytes read

* :func:`register` adds the data source ``"pqsift"``; Spark's filters on it are pushed into
  pqsift (``pushFilters``)::

      pqsift.spark.register(spark)
      spark.read.format("pqsift").option("columns", "id,note").load("events/").filter("amount > 900")

Both work over Spark Connect (``SparkSession.builder.remote(...)``) as in classic mode:
no ``sparkContext`` is used there, relative paths are resolved where they were typed (the
client's working directory), and :class:`ScanMetrics` travel with the query's result
(``DataFrame.observe``) instead of an accumulator.

Your own task DataFrame works too: any DataFrame with a ``path`` column (and optionally
``row_groups`` or ``range_start`` / ``range_length``) can be read with
``tasks.mapInArrow(pqsift.spark.reader(cols, filter), pqsift.spark.schema(files, cols))``.

On a classic session the first :func:`read` or :func:`register` turns Arrow Java's
per-value checks off in the driver's JVM unless they were configured
(:mod:`pqsift.spark.arrow_checks`; a cluster's executors take
:data:`EXECUTOR_ARROW_SETTINGS`).

This module imports ``pyspark``; ``import pqsift`` alone does not (Spark's workers import
only :mod:`pqsift.spark.reader`, which does not either).
"""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pyarrow as pa
from pyspark.accumulators import AccumulatorParam

from pqsift import _core
from pqsift.errors import PqsiftError, PqsiftIOError
from pqsift.expr import FilterLike, _split_column_name, filter_sql
from pqsift.scan import PLANNING_OPTIONS, Scan, _order_by, scan
from pqsift.spark.arrow_checks import EXECUTOR_SETTINGS as EXECUTOR_ARROW_SETTINGS
from pqsift.spark.arrow_checks import uncheck_driver_arrow
from pqsift.spark.driver_frame import arrow_frame
from pqsift.spark.driver_read import DRIVER_READ_BYTES, output_passes_the_bound, read_on_driver, result_bound
from pqsift.spark.planning import (
    DEFAULT_TARGET_TASK_BYTES,
    Piece,
    TableContext,
    Task,
    TaskPiece,
    TaskPlan,
    absolute_path,
    absolute_source,
    plan_tasks,
)
from pqsift.spark.reader import (
    METRICS_COLUMN,
    READ_METRICS,
    STORE_METRICS,
    TASK_COLUMNS,
    PlanFile,
    Planned,
    _check_options,
    plan_bytes,
    planned_reader,
    reader,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
    from pyspark.sql.types import StructType

__all__ = [
    "BROADCAST_PLAN_BYTES",
    "CONNECT_CLOSURE_PLAN_BYTES",
    "CONNECT_DEFAULT_PARALLELISM",
    "CONNECT_PLAN_FILE_BYTES",
    "CONNECT_PLAN_FILE_TASKS",
    "DRIVER_READ_BYTES",
    "EXECUTOR_ARROW_SETTINGS",
    "TASK_COLUMNS",
    "ScanMetrics",
    "Task",
    "TaskPiece",
    "TaskPlan",
    "arrow_schema",
    "default_parallelism",
    "is_connect",
    "plan_tasks",
    "read",
    "reader",
    "register",
    "runs_in_the_driver",
    "schema",
]


#: The tasks :func:`read` spreads a scan over on Spark Connect when the session does not
#: say how many cores it has (see :func:`default_parallelism`).
CONNECT_DEFAULT_PARALLELISM = 16

#: The plans' bytes (every task's together) past which a classic session's :func:`read`
#: hands them to its tasks as a broadcast variable rather than in its function's closure.
BROADCAST_PLAN_BYTES = 1 << 20

#: On Spark Connect, :func:`read` hands the plans to its tasks in a file added to the
#: session, each task reading its own (:class:`~pqsift.spark.reader.PlanFile`), rather than
#: in its function's closure, which every task unpickles, when they go to at least this
#: many tasks and the plans' bytes times the tasks reach :data:`CONNECT_PLAN_FILE_BYTES`:
#: the file costs an upload (a fixed part, then by its bytes), the closure each task.
CONNECT_PLAN_FILE_TASKS = 8

#: See :data:`CONNECT_PLAN_FILE_TASKS`: the bytes all the tasks together would unpickle.
CONNECT_PLAN_FILE_BYTES = 32 << 20

#: On Spark Connect, the plans' bytes past which :func:`read` hands them in a file however
#: few the tasks: the function travels in one request, which the client and the server
#: refuse past 128 MiB by default (``spark.connect.grpc.maxInboundMessageSize``).
CONNECT_CLOSURE_PLAN_BYTES = 64 << 20


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (``pyspark.sql.connect``), which has no
    ``sparkContext``, accumulators or ``_jvm``. Asked of the session itself, not of
    ``pyspark.sql.utils.is_remote()``: that says whether the *process* went into Connect
    mode, and a process may hold a classic session and a Connect client at once."""
    module = sys.modules.get("pyspark.sql.connect.session")  # never loaded: no Connect session exists
    return module is not None and isinstance(spark, module.SparkSession)


class _SessionConf:
    """A session's configurations, as one read consults them. Over Spark Connect each
    ``spark.conf.get`` is a round trip to the server (a read asked ten, a large part of a
    point lookup's time), so there one ``getAll`` is taken first: it lists every
    configuration that is set, so one it does not list is unset. The session time zone,
    whose default is the server JVM's zone, is asked alone when not listed. A classic
    session is asked directly (the JVM is in this process)."""

    def __init__(self, spark: Any) -> None:
        self._spark = spark
        self._listed: dict[str, str] | None = None
        if is_connect(spark):
            try:
                self._listed = dict(spark.conf.getAll)
            except Exception:  # noqa: BLE001 - a server that will not list them: asked one by one
                self._listed = None

    def get(self, name: str) -> str | None:
        """The configuration's value, None if unset or not shown."""
        if self._listed is not None:
            value = self._listed.get(name)
        else:
            try:
                value = self._spark.conf.get(name, None)
            except Exception:  # noqa: BLE001 - a server may refuse to show a configuration
                return None
        return value if value not in (None, "") else None

    def flag(self, name: str) -> bool:
        """A boolean SQL configuration (unset: false, as these are in Spark)."""
        return (self.get(name) or "false").lower() == "true"

    def time_zone(self) -> str:
        """``spark.sql.session.timeZone``, which is never unset (its default: the JVM's zone)."""
        listed = self.get("spark.sql.session.timeZone")
        return listed or self._spark.conf.get("spark.sql.session.timeZone") or "UTC"


def default_parallelism(spark: SparkSession) -> int:
    """How many tasks a scan is spread over at least (the cluster's cores), as
    :func:`plan_tasks` takes it.

    Classic sessions: ``sparkContext.defaultParallelism``, what Spark's own file source
    uses. Spark Connect has no ``sparkContext``, and no API that says how many cores the
    cluster has; the first of these that is set answers: the SQL configurations Spark's file
    source reads for the same purpose (``spark.sql.files.minPartitionNum``,
    ``spark.sql.leafNodeDefaultParallelism``), ``spark.default.parallelism``, the cores a
    local master names (``local[N]``, ``local[*]``: this machine's cores, where a local
    server runs; ``local-cluster[n, cores, memory]``), ``spark.executor.instances`` ×
    ``spark.executor.cores``; else :data:`CONNECT_DEFAULT_PARALLELISM`. Erring high costs
    little (tasks are never smaller than 4 MiB), erring low leaves cores idle.
    """
    return _default_parallelism(spark, _SessionConf(spark))


def _default_parallelism(spark: Any, conf: _SessionConf) -> int:
    if not is_connect(spark):
        return int(spark.sparkContext.defaultParallelism)
    for name in (
        "spark.sql.files.minPartitionNum",
        "spark.sql.leafNodeDefaultParallelism",
        "spark.default.parallelism",
    ):
        value = conf.get(name)
        if value is not None and value.strip().isdigit() and int(value) > 0:
            return int(value)
    cores = _master_cores(conf.get("spark.master") or "")
    if cores:
        return cores
    instances, executor_cores = conf.get("spark.executor.instances"), conf.get("spark.executor.cores")
    if (
        instances
        and executor_cores
        and instances.isdigit()
        and executor_cores.isdigit()
        and int(instances) * int(executor_cores) > 0
    ):
        return int(instances) * int(executor_cores)
    return CONNECT_DEFAULT_PARALLELISM


def runs_in_the_driver(spark: Any) -> bool:
    """Whether ``spark``'s tasks run on this process's machine and cores: a classic session
    on a local master (``local``, ``local[N]``, ``local[*]``; not ``local-cluster``, whose
    executors are processes of their own), or a Spark Connect client of a server reached
    over the loopback (``sc://localhost``, as ``SparkSession.builder.remote("local[2]")``
    starts one) whose master is local. Any other Connect server may be anywhere: False."""
    return _runs_in_the_driver(spark, _SessionConf(spark))


def _runs_in_the_driver(spark: Any, conf: _SessionConf) -> bool:
    if is_connect(spark):
        return _loopback_host(spark) and _is_local_master(conf.get("spark.master") or "")
    return _is_local_master(str(spark.sparkContext.master))


def _prepare_session(spark: Any) -> None:
    """What :func:`read` and :func:`register` do first: check that a local master's workers
    import pqsift, and on a classic session turn Arrow Java's checks off in the driver's JVM
    where not configured (:mod:`pqsift.spark.arrow_checks`)."""
    _check_workers_import_pqsift(spark)
    if not is_connect(spark):
        uncheck_driver_arrow(spark)


#: Worker interpreters found to import pqsift, by path (one check per process each).
_WORKERS_CHECKED: set[str] = set()


def _check_workers_import_pqsift(spark: Any) -> None:
    """On a classic session with a local master, whether the interpreter Spark starts its
    Python workers with (``spark.pyspark.python``, ``PYSPARK_PYTHON``, else ``python3``) can
    import pqsift: a clear error now rather than a task failing later with ``No module
    named 'pqsift'``. Remote executors (and Spark Connect's server) are not checked."""
    if is_connect(spark) or not _is_local_master(str(spark.sparkContext.master)):
        return
    worker = str(getattr(spark.sparkContext, "pythonExec", None) or os.environ.get("PYSPARK_PYTHON") or "python3")
    if worker in _WORKERS_CHECKED:
        return
    import shutil
    import subprocess

    found = shutil.which(worker)
    done = None if found is None else subprocess.run([found, "-c", "import pqsift"], capture_output=True, check=False)
    if done is None or done.returncode != 0:
        reason = "is not found" if done is None else "cannot import pqsift"
        raise PqsiftError(
            f"Spark's Python workers run {worker!r}, which {reason}: set PYSPARK_PYTHON to the interpreter "
            f"pqsift is installed in ({sys.executable}) before the Spark session starts",
            reason=f"the workers' Python ({worker}) {reason}",
        )
    _WORKERS_CHECKED.add(worker)


def _is_local_master(master: str) -> bool:
    master = master.strip()
    return master == "local" or re.fullmatch(r"local\[[^]]*\]", master) is not None


def _loopback_host(spark: Any) -> bool:
    """Whether a Connect client reaches its server over the loopback interface."""
    try:
        host = str(spark.client.host).strip("[]")
    except Exception:  # noqa: BLE001 - a client without the attribute: assume elsewhere
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _master_cores(master: str) -> int | None:
    """The cores a local master names: ``local`` 1, ``local[N]`` / ``local[N, F]`` N,
    ``local[*]`` this machine's, ``local-cluster[n, c, m]`` n × c; None for others."""
    master = master.strip()
    if master == "local":
        return 1
    match = re.fullmatch(r"local\[\s*(\*|\d+)\s*(?:,\s*\d+\s*)?\]", master)
    if match:
        return (os.cpu_count() or 1) if match.group(1) == "*" else int(match.group(1)) or None
    match = re.fullmatch(r"local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,\s*\d+\s*\]", master)
    if match:
        return int(match.group(1)) * int(match.group(2)) or None
    return None


def _functions(spark: Any) -> Any:
    """``pyspark.sql.functions`` for ``spark``'s kind of session: the Connect ones for a
    Connect session even in a process that also holds a classic one."""
    if is_connect(spark):
        from pyspark.sql.connect import functions
    else:
        from pyspark.sql import functions  # type: ignore[no-redef]
    return functions


def arrow_schema(
    source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    columns: Iterable[str] | None = None,
    *,
    case_sensitive: bool = False,
    **table_options: Any,
) -> pa.Schema:
    """The Arrow schema the reader sends Spark for ``columns`` of ``source``: its first
    file's columns with the partition columns merged in, in Spark's types, every field
    nullable (see ``rust/reading/spark_output.rs``). ``table_options`` are the table options of
    :func:`pqsift.scan` (``partitioning``, ``partition_type_inference``, ``base_path``,
    ``session_time_zone``)."""
    table = scan(source, case_sensitive=case_sensitive, **table_options)
    declared = TableContext(table._core.declared_schema, table._core.table_root, table._core.table_name)
    if not table.files and declared.declared_schema is None:
        raise PqsiftIOError(f"no Parquet files in {source!r}")
    first = (table.files[0], table._core.partition_values[0]) if table.files else None
    return _arrow_schema_of(
        first, columns, case_sensitive, table.partition_schema, declared, table_options.get("storage_options")
    )


def _arrow_schema_of(
    first: tuple[str, list[str | None]] | None,
    columns: Iterable[str] | None,
    case_sensitive: bool,
    partition_schema: list[tuple[str, str]],
    table: TableContext,
    storage_options: dict[str, str] | None = None,
) -> pa.Schema:
    """The output schema of ``columns``: a Delta table's from its declared schema, other
    tables' from ``first`` (a file and its partition values)."""
    column_list = None if columns is None else list(columns)
    files, values = ([first[0]], [first[1]]) if first is not None else ([], [])
    stream = _core.read(
        files,
        [],
        columns=column_list,
        case_sensitive=case_sensitive,
        partition_schema=partition_schema,
        partition_values=values,
        declared_schema=table.declared_schema,
        table_name=table.table_name,
        storage_options=storage_options,
        options={"spark_output": True},
    )
    return pa.schema(stream)


def _planned_output_schema(planned: Scan) -> pa.Schema:
    """The output schema (Spark's types) of a scan planned here: a read of its first file's
    plan with no row group, from the footer planning read (no request)."""
    (first,) = planned._core.task_plans([(0, [])])
    stream, _ = _core.read_task(first, {"spark_output": True, "threads": 1})
    return pa.schema(stream)


def schema(
    source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    columns: Iterable[str] | None = None,
    *,
    case_sensitive: bool = False,
    **table_options: Any,
) -> StructType:
    """The Spark ``StructType`` of ``columns`` (all when ``None``) of ``source``: what
    ``spark.read.parquet`` infers — partition columns included, typed as Spark infers
    them — with every field nullable as Spark makes them. Raises
    :class:`pqsift.UnsupportedError` for a column Spark has no type for."""
    return _struct_type(arrow_schema(source, columns, case_sensitive=case_sensitive, **table_options))


def _struct_type(arrow: pa.Schema) -> StructType:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow, prefer_timestamp_ntz=True)


class ScanMetrics:
    """Counts of a Spark scan: the driver's pruning (``files_total``,
    ``row_groups_pruned_statistics``, ``pages_pruned``, ... as in ``pqsift.Scan.metrics``),
    ``tasks``, and reading summed over the tasks (``rows_out``, ``rows_decoded``,
    ``bytes_read``, ``cache_hits``, ``cache_misses``, ``row_groups_read``,
    ``time_task_planning_s``: seconds the tasks spent planning — loading the driver's plans,
    near zero, or with lazy planning reading and pruning their footers —, and
    ``files_skipped``: the paths skipped by ``ignore_corrupt_files``); from an object store,
    ``requests``, ``retries`` and ``bytes_requested`` of the driver and the tasks together.

    How the reading counts travel: on a classic session, through an accumulator — complete
    once the job that consumed the DataFrame has finished; a DataFrame computed twice counts
    twice, as Spark accumulators do. On Spark Connect (no accumulators), each task ends its
    output with one row of its counts, which :func:`read` observes (``DataFrame.observe``:
    the values come back with the action's result) and filters out — the counts of the
    latest action that ran the DataFrame, or a DataFrame derived from it, to the end (an
    action that stops early, as ``show`` or ``limit`` may, leaves out the tasks it cut
    short; a query made from a temporary view of it is not seen). That costs every output
    row a little (an extra null column, a filter): only a DataFrame read with ``metrics``
    pays it. The planning counts are known on the client in both modes, and so are the
    reading counts of a small result :func:`read` read on the driver (``read_on_driver``
    is then True and ``tasks`` 0).

    The data source (:func:`register`) plans in a Python worker and reads in others, so all
    its counts travel in-band: read it with the option ``metrics`` and pass the DataFrame
    through :meth:`observe`, in either mode. (A classic session's observation keeps the
    first action's counts; Spark Connect's, the latest's.)
    """

    def __init__(self, spark: SparkSession) -> None:
        self.connect = is_connect(spark)
        # Classic: Spark sums the tasks' counts; Connect: one observation per read.
        self.accumulator = None if self.connect else spark.sparkContext.accumulator({}, _MetricsParam())
        self._observations: list[Any] = []
        self._driver_reading: dict[str, Any] = {}
        self.planning: dict[str, int] = {}
        self.tasks = 0
        self.read_on_driver = False
        self.explain = ""

    def observe(self, frame: DataFrame) -> DataFrame:
        """``frame`` — the ``"pqsift"`` data source read with the option ``metrics`` —
        without its counts column and rows, its counts collected here::

            metrics = pqsift.spark.ScanMetrics(spark)
            df = metrics.observe(spark.read.format("pqsift").option("metrics", True).load(path))
            df.filter("amount > 900").count(); metrics.value
        """
        if METRICS_COLUMN not in frame.columns:
            raise ValueError(
                f"ScanMetrics.observe: the DataFrame has no {METRICS_COLUMN} column; read the pqsift data source with .option('metrics', True)"
            )
        return self._observe(frame)

    def _observe(self, frame: DataFrame) -> DataFrame:
        """``frame`` (the reader's output with :data:`METRICS_COLUMN`) observed — the tasks'
        count rows collected — and without those rows and that column."""
        if self.connect:
            from pyspark.sql.connect import functions as connect_functions
            from pyspark.sql.connect.observation import Observation as ConnectObservation

            connect_observation = ConnectObservation()
            self._observations.append(connect_observation)
            counts = connect_functions.collect_list(connect_functions.col(METRICS_COLUMN)).alias("tasks")
            # A Connect session's DataFrame, whose observe takes a Connect Observation.
            observed = cast("ConnectDataFrame", frame).observe(connect_observation, counts)
            return observed.filter(connect_functions.col(METRICS_COLUMN).isNull()).drop(METRICS_COLUMN)

        from pyspark.sql import Observation, functions

        observation = Observation()
        self._observations.append(observation)
        observed = frame.observe(observation, functions.collect_list(functions.col(METRICS_COLUMN)).alias("tasks"))
        return observed.filter(functions.col(METRICS_COLUMN).isNull()).drop(METRICS_COLUMN)

    def _observed(self) -> Iterable[dict[str, Any]]:
        """Each count row the observations hold (none before their DataFrame's first
        action: a classic observation would wait for it)."""
        for observation in self._observations:
            if self.connect:
                if getattr(observation, "_result", None) is None:
                    continue
            elif observation._jo is None or not observation._jo.future().isCompleted():
                continue
            for text in observation.get.get("tasks") or []:
                yield json.loads(text)

    def _reading(self) -> dict[str, Any]:
        """The tasks' counts (and the driver's, for a small result read there), summed; a
        data source's planning counts (see :meth:`observe`) taken out of them."""
        totals: dict[str, Any] = {}
        _MetricsParam().addInPlace(totals, self._driver_reading)
        if self.accumulator is not None:
            _MetricsParam().addInPlace(totals, dict(self.accumulator.value))
        for counts in self._observed():
            planning = counts.pop("planning", None)
            if planning is not None:
                self.planning, self.tasks, self.explain = planning["metrics"], planning["tasks"], planning["explain"]
            _MetricsParam().addInPlace(totals, counts)
        return totals

    @property
    def value(self) -> dict[str, Any]:
        """Planning and reading counts, merged."""
        reading: dict[str, Any] = {name: 0 for name in READ_METRICS}
        reading["files_skipped"] = []
        reading.update(self._reading())
        merged = {**self.planning, "tasks": self.tasks, **reading}
        for name in STORE_METRICS:  # the driver's requests (planning) and the tasks'
            merged[name] = self.planning.get(name, 0) + reading.get(name, 0)
        return merged

    def __repr__(self) -> str:
        return f"pqsift.spark.ScanMetrics({self.value})"


class _MetricsParam(AccumulatorParam[dict[str, Any]]):
    """Sums counts and concatenates lists (the skipped files) of task metrics."""

    def zero(self, value: dict[str, Any]) -> dict[str, Any]:
        return {}

    def addInPlace(self, total: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:  # noqa: N802 - pyspark's name
        for name, value in more.items():
            total[name] = total.get(name, [] if isinstance(value, list) else 0) + value
        return total


#: ``target_task_bytes`` for a plan whose tasks are as many as ``parallelism`` asks.
_NO_TASK_BYTES_BOUND = 1 << 62


def read(
    spark: SparkSession,
    source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    columns: Iterable[str] | None = None,
    filter: FilterLike | None = None,  # noqa: A002 - the public name
    *,
    target_task_bytes: int | None = None,
    ignore_corrupt_files: bool = False,
    metrics: ScanMetrics | None = None,
    threads: int = 1,
    parallelism: int | None = None,
    lazy: bool | None = None,
    driver_read_bytes: int | None = None,
    **options: Any,
) -> DataFrame:
    """A DataFrame of ``columns`` of the rows of ``source`` matching ``filter`` (Spark SQL
    text or an :class:`~pqsift.Expr`), read by pqsift in Spark's Python workers.

    On the driver: list the files, prune files and row groups from footers (statistics,
    bloom filters, page index), and pack the surviving row groups into tasks of about
    ``target_task_bytes`` (see :func:`plan_tasks`; default
    :data:`~pqsift.spark.planning.DEFAULT_TARGET_TASK_BYTES`, and for a top-k read no
    bound, see below), one task per partition, spread over at least ``parallelism`` tasks
    where the data allows (default: the cluster's cores, see :func:`default_parallelism`).
    Each task
    then reads its row groups with late materialization (:func:`reader`). The filter is
    read with the session's ``spark.sql.session.timeZone`` and ``spark.sql.caseSensitive``
    unless ``session_time_zone`` / ``case_sensitive`` are given, and files of different
    schemas by Spark's rules (``merge_schema`` defaults to the session's
    ``spark.sql.parquet.mergeSchema``, ``match_field_ids`` and ``ignore_missing_field_ids``
    to its ``spark.sql.parquet.fieldId.read.enabled`` and ``...ignoreMissing``; ``schema``
    may be a Spark ``StructType``, its ``parquet.field.id`` metadata the fields' ids).
    ``options`` are those of
    :func:`pqsift.scan`; ``threads`` is per task (default 1: Spark runs a task per core).
    ``source`` may be an object store URL (``s3://bucket/events/``) read with
    ``storage_options``: the tasks read the store themselves, no Hadoop connector needed.
    A corrupt file fails the job with its path in the message, or with
    ``ignore_corrupt_files=True`` is skipped and listed in ``metrics``.

    At scale (``lazy``, default: above :data:`~pqsift.spark.planning.LAZY_PLANNING_FILES`
    files) the driver reads no footer: it prunes files on partition values and a Delta
    log's statistics, packs them into tasks by size, and each task reads and prunes its own
    footers (see :func:`plan_tasks`).

    A small result is read on the driver instead (:mod:`pqsift.spark.driver_read`): when
    the plan leaves at most ``driver_read_bytes`` compressed bytes to read (default
    :data:`DRIVER_READ_BYTES`, and no bound on a local master, whose tasks would run on
    the driver's cores anyway: see :func:`runs_in_the_driver`; 0: never) and the rows come
    to at most :data:`~pqsift.spark.driver_read.DRIVER_RESULT_BYTES` (over Spark Connect,
    where the rows are read by the client and sent to the server,
    :data:`~pqsift.spark.driver_read.CONNECT_RESULT_BYTES`), the DataFrame is made of them
    and no Python task runs.

    ``order_by`` (with ``limit``: a top-k query) as in :func:`pqsift.scan`: the driver's
    plan skips what cannot hold a top row. A top-k whose plan is too large to read on the
    driver is still tried there (but for lazy planning), with the read option
    ``max_bytes_read`` set to ``driver_read_bytes``: a top-k reads its keys best bound first
    and stops once no unread row can make the top ``limit`` (the latest rows of a kind, on
    a sorted key: a page or two), so its bytes are not its plan's. Only when that read
    passes the bound do tasks read it: each task outputs its first ``limit`` rows in
    that order, and the DataFrame is Spark's ``orderBy(...).limit(k)`` of them. Unless
    ``target_task_bytes`` is given, a top-k read is spread over ``parallelism`` tasks
    whatever its bytes: a task reads its keys first and its other columns for its own
    first ``limit`` rows alone, so its cost is not its bytes, and each task more decodes
    ``limit`` more rows of the other columns and learns its running threshold afresh.

    Relative paths (``source``, ``base_path``) are made absolute here, against this
    process's working directory: the tasks run elsewhere (on Spark Connect, in the server's
    Python workers). A classic or a Spark Connect session alike; on Connect, ``metrics``
    travel with the action's result (see :class:`ScanMetrics`).
    """
    if metrics is not None and metrics.connect != is_connect(spark):
        raise ValueError("metrics: a ScanMetrics of another kind of session (classic / Spark Connect) than spark")
    _prepare_session(spark)
    filter = filter_sql(filter)  # noqa: A001 - the public parameter, as SQL text
    source = absolute_source(source)
    if options.get("base_path") is not None:
        options["base_path"] = absolute_path(options["base_path"])
    conf = _SessionConf(spark)
    if "session_time_zone" not in options:
        options["session_time_zone"] = conf.time_zone()
    options.setdefault("case_sensitive", conf.flag("spark.sql.caseSensitive"))
    options.setdefault("merge_schema", conf.flag("spark.sql.parquet.mergeSchema"))
    options.setdefault("match_field_ids", conf.flag("spark.sql.parquet.fieldId.read.enabled"))
    options.setdefault("ignore_missing_field_ids", conf.flag("spark.sql.parquet.fieldId.read.ignoreMissing"))
    if options.get("schema") is not None and not isinstance(options["schema"], pa.Schema):
        from pqsift.spark.datasource import scan_schema_of

        options["schema"] = scan_schema_of(options["schema"])  # a Spark StructType
    _check_options(options)
    column_list = None if columns is None else list(columns)
    order_by = _order_by(options.get("order_by"))
    top_k = order_by is not None and options.get("limit") is not None
    if target_task_bytes is None:
        # A top-k task's cost is its keys and its own first `limit` rows, not its bytes:
        # no byte bound, the tasks as many as `parallelism` (see the docstring).
        target_task_bytes = _NO_TASK_BYTES_BOUND if top_k else DEFAULT_TARGET_TASK_BYTES
    # Sort keys not among the columns are read too, and dropped after the sort.
    sort_only = [key for key, _, _ in order_by or [] if column_list is not None and key not in column_list]
    if sort_only and column_list is not None:
        column_list = column_list + sort_only
    pruning = {
        name: value
        for name, value in options.items()
        if name in PLANNING_OPTIONS or (name in ("order_by", "limit") and order_by)
    }
    plan = plan_tasks(
        source,
        column_list,
        filter,
        target_task_bytes=target_task_bytes,
        parallelism=_default_parallelism(spark, conf) if parallelism is None else parallelism,
        lazy=lazy,
        **pruning,
    )
    if not plan.files and plan.table.declared_schema is None:
        raise PqsiftIOError(f"no Parquet files in {source!r}")
    if plan.scan is not None and plan.files:
        schema_of = _planned_output_schema(plan.scan)
    else:
        first = (plan.files[0], plan.partition_values[0]) if plan.files else None
        schema_of = _arrow_schema_of(
            first,
            column_list,
            options["case_sensitive"],
            plan.partition_schema,
            plan.table,
            options.get("storage_options"),
        )
    struct = _struct_type(schema_of)
    if metrics is not None:
        metrics.planning = dict(plan.metrics)
        metrics.tasks = len(plan.tasks)
        metrics.explain = plan.explain
    planned = [task.to_rows() for task in plan.tasks]
    if not planned:
        return spark.createDataFrame([], struct)
    request = _PlannedRead(
        planned, column_list, filter, plan, schema_of, struct, ignore_corrupt_files, metrics, options
    )
    frame = None
    if driver_read_bytes is None:
        driver_read_bytes = (1 << 62) if _runs_in_the_driver(spark, conf) else DRIVER_READ_BYTES
    result_bytes = result_bound(is_connect(spark))
    if (
        plan.selected_bytes is not None
        and driver_read_bytes > 0
        and plan.selected_bytes <= driver_read_bytes
        and not _too_large_for_the_driver(request, result_bytes)
    ):
        frame = _read_small_result(spark, request, result_bytes)
    elif top_k and plan.scan is not None and driver_read_bytes > 0:
        # A top-k's bytes are not its plan's: it reads its keys best bound first and stops
        # once no unread row can make the first `limit` rows (a sorted key: a page or two).
        # So it is tried here, stopped once it has read `driver_read_bytes`, and handed to
        # the tasks only then.
        given = request.options.get("max_bytes_read")
        bound = driver_read_bytes if given is None else min(given, driver_read_bytes)
        bounded = {**request.options, "max_bytes_read": bound}
        frame = _read_small_result(spark, replace(request, options=bounded), result_bytes)
    if frame is None:
        frame = _read_in_tasks(spark, request, threads)
    if not order_by:
        return frame
    # Each task outputs its own first rows in order; Spark merges them.
    functions = _functions(spark)
    frame = frame.orderBy(
        *[
            _sort_column(functions, key, column_list, descending, nulls_first)
            for key, descending, nulls_first in order_by
        ]
    )
    if options.get("limit") is not None:
        frame = frame.limit(options["limit"])
    return frame.drop(*[_output_name(key) for key in sort_only]) if sort_only else frame


@dataclass(frozen=True)
class _PlannedRead:
    """A planned read, as both ways of reading it take it: the tasks' pieces, the columns
    and filter, the plan, the output schema (Arrow and Spark), and the options."""

    planned: list[list[Piece]]
    columns: list[str] | None
    filter: str | None
    plan: TaskPlan
    arrow_schema: pa.Schema
    struct: StructType
    ignore_corrupt_files: bool
    metrics: ScanMetrics | None
    options: dict[str, Any]


def _too_large_for_the_driver(request: _PlannedRead, result_bytes: int) -> bool:
    """Whether the plan alone shows the output passing ``result_bytes``, what the driver
    takes, so that a read on the driver would be abandoned after reading that much. Without
    a filter (or deletion vectors) every row the plan selects is output; with one, at least
    the rows the page index shows pass it (a range on a sorted column: those of the pages
    inside the range), their size estimated from the footer's average row. An estimate
    a little off errs near the bound, which sits where either way of reading costs about
    the same."""
    if any(piece[3] is not None for task in request.planned for piece in task):
        return False
    limit = request.options.get("limit")
    if request.filter is not None:
        certain = request.plan.certain_output_bytes
        return limit is None and certain is not None and certain > result_bytes
    rows = sum(task.rows for task in request.plan.tasks)
    if limit is not None:
        rows = min(rows, limit)
    return output_passes_the_bound(rows, request.arrow_schema, result_bytes)


def _read_small_result(spark: SparkSession, request: _PlannedRead, result_bytes: int) -> DataFrame | None:
    """The rows of the plan read here, handed to Spark as Arrow batches; None when they
    came to more than ``result_bytes`` (the tasks read them instead)."""
    metrics = request.metrics
    rows, read = read_on_driver(
        [piece for task in request.planned for piece in task],
        request.columns,
        request.filter,
        schema=request.arrow_schema,
        partition_schema=request.plan.partition_schema,
        table=request.plan.table,
        ignore_corrupt_files=request.ignore_corrupt_files,
        threads=None,
        result_bytes=result_bytes,
        planned_scan=request.plan.scan,
        **request.options,
    )
    if metrics is not None:
        # An abandoned read counts too: its bytes were read.
        _MetricsParam().addInPlace(metrics._driver_reading, read)
    if rows is None:
        return None
    if metrics is not None:
        metrics.tasks = 0
        metrics.read_on_driver = True
    return _arrow_frame(spark, rows.combine_chunks(), request.struct)


def _arrow_frame(spark: SparkSession, rows: pa.Table, struct: StructType) -> DataFrame:
    """A DataFrame of ``rows``, in one partition (the rows are few, at most
    ``DRIVER_RESULT_BYTES``, and each task costs more than it spreads): on a classic
    session the Arrow batch parallelized as it is (:func:`~pqsift.spark.driver_frame.arrow_frame`);
    a Spark Connect client sends it to the server, which makes it a local relation."""
    frame = spark.createDataFrame(rows, struct) if is_connect(spark) else arrow_frame(spark, rows, struct)
    return _with_known_schema(frame, struct)


def _read_in_tasks(spark: SparkSession, request: _PlannedRead, threads: int) -> DataFrame:
    """The DataFrame whose Python tasks read the plan, one task per partition (``threads``
    each)."""
    planned, plan, metrics = request.planned, request.plan, request.metrics
    # Connect: no accumulator; the tasks' counts come as rows of an extra column.
    in_band = metrics is not None and metrics.accumulator is None
    carried = _carried_plans(spark, planned)
    function = planned_reader(
        carried,
        request.columns,
        request.filter,
        partition_schema=plan.partition_schema,
        table=plan.table,
        ignore_corrupt_files=request.ignore_corrupt_files,
        metrics=None if in_band else metrics,
        metrics_schema=request.arrow_schema if in_band else None,
        threads=threads,
        **request.options,
    )
    # One task per partition: a range of n ids in n partitions has exactly one id in each
    # (a hash repartition would leave some empty and double others up), and is made in the
    # JVM; the reader looks the id up in the plan it carries.
    tasks = _with_known_schema(spark.range(0, len(planned), 1, numPartitions=len(planned)), _range_schema())
    if in_band and metrics is not None:  # (in_band implies metrics; spelled out for the type checker)
        from pyspark.sql.types import StringType, StructField, StructType

        output = StructType([*request.struct.fields, StructField(METRICS_COLUMN, StringType(), True)])
        return metrics._observe(tasks.mapInArrow(function, output))
    return tasks.mapInArrow(function, request.struct)


def _range_schema() -> StructType:
    """The schema of ``spark.range``'s DataFrame: one non-null ``bigint`` column ``id``."""
    from pyspark.sql.types import LongType, StructField, StructType

    return StructType([StructField("id", LongType(), False)])


def _with_known_schema(frame: DataFrame, schema: StructType) -> DataFrame:
    """``frame``, told its ``schema`` where PySpark caches one. ``mapInArrow`` needs its
    input's columns, and the schema of the tasks' input is known here: a Spark Connect
    DataFrame would ask the server for it (an analysis request, a round trip), a classic
    one its JVM object (two Py4J calls, and a JSON schema parsed). A DataFrame that knows
    its schema already, or whose PySpark caches it elsewhere, is left as it is. Looked up in
    the instance's own attributes: asking a classic DataFrame for an attribute it lacks
    looks it up among its columns, which asks the JVM for the schema."""
    attributes = vars(frame)
    if "_cached_schema" in attributes:  # Spark Connect
        if attributes["_cached_schema"] is None:
            attributes["_cached_schema"] = schema
    elif "schema" not in attributes and isinstance(getattr(type(frame), "schema", None), functools.cached_property):
        attributes["schema"] = schema  # classic: a cached property
    return frame


def _carried_plans(spark: SparkSession, planned: list[list[Piece]]) -> Planned:
    """How the tasks get their plans. Each task unpickles the function's closure, every
    task's plan in it: past :data:`BROADCAST_PLAN_BYTES` a classic session sends them as a
    broadcast variable, which a reused worker loads once; a Connect session, which has no
    broadcast variables, when many tasks would unpickle them (see
    :data:`CONNECT_PLAN_FILE_TASKS`) or past :data:`CONNECT_CLOSURE_PLAN_BYTES`, in a
    :class:`~pqsift.spark.reader.PlanFile` added to the session as an artifact, from which
    each task reads its own."""
    carried_bytes = plan_bytes(planned)
    if carried_bytes <= BROADCAST_PLAN_BYTES:
        return planned
    if not is_connect(spark):
        return spark.sparkContext.broadcast(planned)
    tasks = len(planned)
    many = tasks >= CONNECT_PLAN_FILE_TASKS and carried_bytes * tasks >= CONNECT_PLAN_FILE_BYTES
    if not many and carried_bytes <= CONNECT_CLOSURE_PLAN_BYTES:
        return planned
    with tempfile.TemporaryDirectory(prefix="pqsift-plans-") as directory:
        plans = PlanFile.write(planned, Path(directory))
        try:
            spark.addArtifacts(str(Path(directory) / plans.name), file=True)
        except Exception as error:  # the server's refusal, of whatever kind
            if carried_bytes <= CONNECT_CLOSURE_PLAN_BYTES:
                return planned  # slower for many tasks, but it reaches them
            raise PqsiftError(
                f"the tasks' plans ({carried_bytes} bytes) are too large for one Spark Connect request, and the "
                f"server did not take them as a file (addArtifacts: {type(error).__name__}: {error})"
            ) from error
    return plans


def _output_name(column: str) -> str:
    """The name of the output column a (possibly nested) column path gives."""
    return _split_column_name(column)[-1]


def _sort_column(functions: Any, key: str, columns: list[str] | None, descending: bool, nulls_first: bool) -> Column:
    """The Spark sort expression of an ``order_by`` key (``functions``: the session's, see
    :func:`_functions`)."""
    name = key if columns is None else "`" + _output_name(key).replace("`", "``") + "`"
    column: Column = functions.col(name)
    if descending:
        return column.desc_nulls_first() if nulls_first else column.desc_nulls_last()
    return column.asc_nulls_first() if nulls_first else column.asc_nulls_last()


def register(spark: SparkSession, *, filter_pushdown: bool = True) -> None:
    """Registers the Python data source ``"pqsift"`` with ``spark``::

        spark.read.format("pqsift").option("columns", "a,b").load(path).filter("x > 5")

    Options: ``columns`` (comma-separated; Spark 4.3 does not tell Python sources which
    columns a query needs), ``filter`` (Spark SQL, applied by pqsift), ``sessionTimeZone``,
    ``ignoreCorruptFiles``, ``targetTaskBytes``, ``parallelism``, and the options of
    :func:`pqsift.scan` (case and underscores do not matter: ``pushdownFilters`` =
    ``pushdown_filters``). ``sessionTimeZone``, ``matchFieldIds`` and
    ``ignoreMissingFieldIds`` default to the session's (``spark.sql.session.timeZone``,
    ``spark.sql.parquet.fieldId.read.*``) at registration, ``parallelism`` (the fewest
    tasks a scan is spread over where the data allows) to the cluster's cores then
    (:func:`default_parallelism`). A user-given schema (``.schema("a int, b string")``) is
    the schema every file is read into, by Spark's rules (as ``schema=`` of
    :func:`pqsift.scan`; fields with a ``parquet.field.id`` found by it when field ids are
    matched). With the option ``metrics``, pass the DataFrame through
    :meth:`ScanMetrics.observe` to collect the scan's counts (the option adds a column only
    ``observe`` removes).

    A relative path given to ``load`` (or option ``basePath``) is resolved against this
    process's working directory at registration: the source's methods run in Spark's Python
    workers, whose working directory is another (on Spark Connect, the server's). URLs are
    left as they are.

    With ``filter_pushdown`` (default), Spark's filters are handed to pqsift (``pushFilters``:
    equalities, comparisons, IN, IS [NOT] NULL, NOT, starts/ends with, contains); those it
    evaluates exactly are removed from Spark's plan, the others stay. This needs
    ``spark.sql.python.filterPushdown.enabled``, which this function sets to ``true`` for the
    session.
    """
    _prepare_session(spark)
    from pqsift.spark.datasource import data_source_class

    if filter_pushdown:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    conf = _SessionConf(spark)
    field_ids = (
        conf.flag("spark.sql.parquet.fieldId.read.enabled"),
        conf.flag("spark.sql.parquet.fieldId.read.ignoreMissing"),
    )
    spark.dataSource.register(
        data_source_class(
            filter_pushdown,
            conf.time_zone(),
            base_directory=os.getcwd(),
            field_ids=field_ids,
            parallelism=_default_parallelism(spark, conf),
        )
    )
