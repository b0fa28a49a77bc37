"""The Python data source ``"pqsift"`` (Spark 4.1+): ``spark.read.format("pqsift")``.

Planning (``partitions``) runs in the driver-side Python worker, reading (``read``) in
the executors' workers; both use the same planning and reader as :func:`pqsift.spark.read`.
``pushFilters`` turns Spark's pushed filters into pqsift's Spark SQL: a filter pqsift
translates is evaluated exactly (late materialization, Spark's semantics) and removed from
Spark's plan; every other filter is returned to Spark, which then evaluates it.

Spark 4.3 gives Python data sources no metrics of their own; with the option ``metrics``,
the source's schema ends with the string column :data:`~pqsift.spark.reader.METRICS_COLUMN`
and each task ends with one row of its counts there (the first task also carries the
planning counts), which :meth:`pqsift.spark.ScanMetrics.observe` collects
(``DataFrame.observe``: classic and Spark Connect alike) and filters out.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)
from pyspark.sql.types import StringType, StructField, StructType

from pqsift.expr import _datetime_text, _quote_identifier, lit
from pqsift.scan import PLANNING_OPTIONS, READ_OPTIONS
from pqsift.spark.planning import DEFAULT_TARGET_TASK_BYTES, absolute_path, absolute_source, plan_tasks
from pqsift.spark.reader import METRICS_COLUMN, read_pieces
from pqsift.spark.worker_gc import freeze_worker_objects
from pqsift.spark.worker_socket import AcknowledgeOnLoad

__all__ = ["data_source_class", "filter_to_sql"]

#: The keys of :data:`_COMPARISONS` as a tuple, for an ``isinstance`` the type checker narrows by.
_COMPARISON_FILTERS = (EqualTo, EqualNullSafe, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual)
_COMPARISONS: dict[type, str] = {
    EqualTo: "=",
    EqualNullSafe: "<=>",
    GreaterThan: ">",
    GreaterThanOrEqual: ">=",
    LessThan: "<",
    LessThanOrEqual: "<=",
}


def filter_to_sql(pushed: Filter) -> str | None:
    """pqsift's Spark SQL for one of Spark's pushed filters, or ``None`` when pqsift does
    not evaluate it exactly (Spark keeps those).

    >>> filter_to_sql(GreaterThan(("amount",), 200))
    '`amount` > 200'
    >>> filter_to_sql(Not(In(("s", "kind"), ["a", None])))
    "NOT (`s`.`kind` IN ('a', NULL))"
    >>> filter_to_sql(StringStartsWith(("name",), "50%"))   # exact: no LIKE wildcard to escape
    "startswith(`name`, '50%')"
    """
    if METRICS_COLUMN in getattr(pushed, "attribute", ()):
        return None  # the counts column (option `metrics`) is not in the files
    column = ".".join(_quote_identifier(part) for part in pushed.attribute) if hasattr(pushed, "attribute") else ""
    if isinstance(pushed, Not):
        inner = filter_to_sql(pushed.child)
        return None if inner is None else f"NOT ({inner})"
    if isinstance(pushed, IsNull):
        return f"{column} IS NULL"
    if isinstance(pushed, IsNotNull):
        return f"{column} IS NOT NULL"
    if type(pushed) in _COMPARISONS and isinstance(pushed, _COMPARISON_FILTERS):
        value = _literal(pushed.value)
        return None if value is None else f"{column} {_COMPARISONS[type(pushed)]} {value}"
    if isinstance(pushed, In):
        values = [_literal(v) for v in pushed.value]
        if not values or any(v is None for v in values):
            return None
        return f"{column} IN ({', '.join(v for v in values if v is not None)})"
    if isinstance(pushed, (StringStartsWith, StringEndsWith, StringContains)):
        if not isinstance(pushed.value, str):
            return None
        functions = {StringStartsWith: "startswith", StringEndsWith: "endswith", StringContains: "contains"}
        function = functions[type(pushed)]
        return f"{function}({column}, {lit(pushed.value).to_sql()})"
    return None


def _literal(value: Any) -> str | None:
    """The literal for a pushed value, typed as Spark typed it (``None`` if unknown)."""
    if value is None:
        return "NULL"
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            # TIMESTAMP_NTZ: a local date-time, whatever the session time zone.
            return f"CAST('{_datetime_text(value)}' AS TIMESTAMP_NTZ)"
        return lit(value).to_sql()
    if isinstance(value, float) and math.isnan(value):
        return "CAST('NaN' AS DOUBLE)"
    if isinstance(value, (bool, int, float, decimal.Decimal, str, bytes, bytearray, datetime.date)):
        return lit(value).to_sql()
    return None


# Options that decide the table's schema (partition discovery, name matching).
_TABLE_OPTIONS = (
    "storage_options",
    "partitioning",
    "partition_type_inference",
    "base_path",
    "session_time_zone",
    "case_sensitive",
    "version",
    "snapshot_id",
    "timestamp",
    "merge_schema",
    "allowed_locations",
)

# Delta's and Iceberg's own names for time travel (``spark.read.format("delta")
# .option("versionAsOf", 3)``, ``spark.read.format("iceberg").option("snapshot-id", 42)``).
_ALIASES = {
    "versionasof": "version",
    "timestampasof": "timestamp",
    "snapshot-id": "snapshot_id",
    "as-of-timestamp": "timestamp_ms",
}

# Spark's own Parquet read options, by their lower-case names: those pqsift gives Spark's
# meaning, and those it refuses with the reason (rather than as unknown).
_SPARK_OPTIONS = ("recursivefilelookup", "datetimerebasemode", "int96rebasemode")
_SPARK_OPTIONS_REFUSED = {
    "pathglobfilter": "pqsift reads every Parquet file below the path (as Spark leaves out names "
    "starting with '.' or '_'); give the files to read as paths instead",
    "modifiedbefore": "pqsift does not select files by modification time; give the files to read as paths",
    "modifiedafter": "pqsift does not select files by modification time; give the files to read as paths",
}

# Options set per task by the planner, never by users.
_PLANNER_OPTIONS = ("file_range", "row_groups", "spark_output")

# Options the data source reads itself, besides those of pqsift.scan.
_OWN_OPTIONS = (
    "path",
    "paths",
    "columns",
    "filter",
    "ignore_corrupt_files",
    "target_task_bytes",
    "parallelism",
    "metrics",
)


# Prefix of options passed to the object store one by one: ``storage.aws_endpoint``.
_STORAGE_PREFIX = "storage."


def _option_name(key: str) -> str:
    """Spark option keys are case-insensitive: ``sessionTimeZone``, ``session_time_zone``
    and ``sessiontimezone`` all name ``session_time_zone``; ``storage.KEY`` is kept (an
    object store option)."""
    if key.lower().startswith(_STORAGE_PREFIX):
        return key.lower()
    wanted = key.lower().replace("_", "")
    if wanted in _ALIASES:
        return _ALIASES[wanted]
    if wanted in _SPARK_OPTIONS:
        return wanted
    if wanted in _SPARK_OPTIONS_REFUSED:
        raise ValueError(
            f"pqsift data source: Spark's option {key!r} is not supported: {_SPARK_OPTIONS_REFUSED[wanted]}"
        )
    for name in (*_OWN_OPTIONS, *PLANNING_OPTIONS, *READ_OPTIONS):
        if name.replace("_", "") == wanted:
            return name
    raise ValueError(f"pqsift data source: unknown option {key!r}")


def _settings(options: Mapping[str, str], base_directory: str | None = None) -> dict[str, str]:
    """The options by canonical name; with ``base_directory``, relative ``path``, ``paths``
    and ``base_path`` made absolute against it (URLs kept)."""
    settings = {_option_name(key): value for key, value in options.items()}
    if "timestamp_ms" in settings:
        # Iceberg's as-of-timestamp: milliseconds since the epoch.
        instant = datetime.datetime.fromtimestamp(int(settings.pop("timestamp_ms")) / 1000, datetime.UTC)
        settings["timestamp"] = instant.isoformat()
    if base_directory is not None:
        for name in ("path", "base_path"):
            if settings.get(name):
                settings[name] = absolute_path(settings[name], base_directory)
        if settings.get("paths"):
            settings["paths"] = json.dumps(absolute_source(json.loads(settings["paths"]), base_directory))
    return settings


def _options_of(settings: dict[str, str]) -> dict[str, Any]:
    """pqsift.scan options from the data source's string options."""
    known = {**PLANNING_OPTIONS, **READ_OPTIONS}
    out: dict[str, Any] = {}
    storage: dict[str, str] = {}
    for name, text in settings.items():
        if name in _OWN_OPTIONS:
            continue
        if name.startswith(_STORAGE_PREFIX):
            storage[name[len(_STORAGE_PREFIX) :]] = text
            continue
        if name == "storage_options":
            # A JSON object of option names to values.
            parsed = json.loads(text)
            if not isinstance(parsed, dict):
                raise ValueError("pqsift data source: option 'storage_options' must be a JSON object")
            storage.update({str(k): v if isinstance(v, str) else json.dumps(v) for k, v in parsed.items()})
            continue
        if name == "allowed_locations":
            # "any", a JSON list, or prefixes separated by commas.
            out[name] = (
                text
                if text == "any"
                else json.loads(text)
                if text.lstrip().startswith("[")
                else [p.strip() for p in text.split(",") if p.strip()]
            )
            continue
        if name == "recursivefilelookup":
            # Spark's recursiveFileLookup: every file below the path, no partition discovery.
            if _bool(name, text):
                out["partitioning"] = False
            continue
        if name in ("datetimerebasemode", "int96rebasemode"):
            _rebase_mode(name, text)
            continue
        if name in _PLANNER_OPTIONS:
            raise ValueError(f"pqsift data source: option {name!r} is set per task by the planner")
        default = known[name]
        if isinstance(default, bool):
            out[name] = _bool(name, text)
        elif isinstance(default, int) or name in ("threads", "limit", "version", "snapshot_id"):
            out[name] = int(text)
        else:
            out[name] = text
    if storage:
        out["storage_options"] = storage
    return out


def _rebase_mode(name: str, text: str) -> None:
    """Spark's ``datetimeRebaseMode`` / ``int96RebaseMode``: pqsift reads dates and
    timestamps in the proleptic Gregorian calendar, as written — ``CORRECTED``, and also
    ``EXCEPTION``, Spark's default, which fails only on files a Spark 2 wrote in its legacy
    hybrid calendar with values before 1582-10-15, which pqsift reads as stored. ``LEGACY``
    (rebasing those values) is refused."""
    mode = text.strip().upper()
    if mode in ("CORRECTED", "EXCEPTION"):
        return
    spark_name = {"datetimerebasemode": "datetimeRebaseMode", "int96rebasemode": "int96RebaseMode"}[name]
    if mode == "LEGACY":
        raise ValueError(
            f"pqsift data source: {spark_name} LEGACY is not supported: pqsift reads dates and timestamps "
            "in the proleptic Gregorian calendar (CORRECTED) and does not rebase from the hybrid Julian one"
        )
    raise ValueError(f"pqsift data source: {spark_name} must be EXCEPTION, CORRECTED or LEGACY, not {text!r}")


def _bool(key: str, text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"pqsift data source: option {key!r} must be true or false, not {text!r}")


class _TaskPartition(InputPartition):
    """One planned task: ``value`` is ``(partition_schema, table, pieces, planning)``, the
    pieces :data:`~pqsift.spark.planning.Piece` tuples (each with the driver's plan of it,
    unless planned lazily), ``table`` a
    :class:`~pqsift.spark.planning.TableContext` and ``planning`` the driver's counts, for
    the first task of a read with the option ``metrics`` (else ``None``)."""


class PqsiftReader(DataSourceReader):
    """Plans tasks with the pushed filters and reads them with the pqsift core."""

    def __init__(
        self,
        options: dict[str, str],
        schema: StructType,
        user_schema: bool,
        base_directory: str | None = None,
        parallelism: int | None = None,
    ) -> None:
        # Spark writes each task the reader pickled, then the task's partition: the worker
        # that unpickles the reader acknowledges it at once, so that the partition is not
        # held back (see pqsift.spark.worker_socket).
        self.acknowledge = AcknowledgeOnLoad()
        settings = _settings(options, base_directory)
        self.path = _path_of(settings)
        self.columns = _columns_of(settings.get("columns"), schema, user_schema)
        self.filters = [settings["filter"]] if settings.get("filter") else []
        self.ignore_corrupt_files = _bool("ignore_corrupt_files", settings.get("ignore_corrupt_files", "false"))
        self.target_task_bytes = _positive_int(settings, "target_task_bytes") or DEFAULT_TARGET_TASK_BYTES
        self.parallelism = _positive_int(settings, "parallelism") or parallelism
        self.metrics = _metrics_wanted(settings)
        if self.metrics and user_schema:
            raise ValueError(
                f"pqsift data source: option 'metrics' adds the column {METRICS_COLUMN} to the source's schema; it does not go with a schema given by .schema(...)"
            )
        self.options = _options_of(settings)
        self.schema = schema
        self.cast_to = pa_schema(schema) if user_schema else None
        # With `metrics`: the output's Arrow schema without the counts column.
        self.data_schema = pa_schema(StructType(schema.fields[:-1])) if self.metrics else None
        if user_schema:
            # Spark's `.schema(...)`: every file is read into it by Spark's rules (missing
            # columns null, Spark's widenings, SchemaMismatchError otherwise; fields with a
            # `parquet.field.id` found by it), as pqsift.scan's `schema=`; the cast below
            # only settles Arrow details (nullability, metadata).
            self.options["schema"] = scan_schema_of(schema)

    def _filter(self) -> str | None:
        return " AND ".join(f"({f})" for f in self.filters) or None

    def partitions(self) -> list[InputPartition]:
        # Spark may call this in another planning worker than the one that made the
        # reader (which unpickles it): see pqsift.spark.worker_gc.
        freeze_worker_objects()
        pruning = {k: v for k, v in self.options.items() if k in PLANNING_OPTIONS}
        plan = plan_tasks(
            self.path,
            self.columns,
            self._filter(),
            target_task_bytes=self.target_task_bytes,
            parallelism=self.parallelism,
            **pruning,
        )
        tasks = [task.to_rows() for task in plan.tasks]
        planning = None
        if self.metrics:
            # The driver's counts travel with the first task (a task with nothing to read
            # when every file was pruned).
            planning = {"metrics": dict(plan.metrics), "tasks": len(tasks), "explain": plan.explain}
            tasks = tasks or [[]]
        return [
            _TaskPartition((plan.partition_schema, plan.table, rows, planning if i == 0 else None))
            for i, rows in enumerate(tasks)
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:
            # Spark's stand-in partition when `partitions` planned none (every file pruned).
            return
        freeze_worker_objects()
        options = {"threads": 1, **self.options}
        partition_schema, table, pieces, planning = partition.value
        batches = read_pieces(
            pieces,
            self.columns,
            self._filter(),
            partition_schema=partition_schema,
            table=table,
            ignore_corrupt_files=self.ignore_corrupt_files,
            metrics_schema=self.data_schema,
            planning=planning,
            **options,
        )
        for batch in batches:
            if self.cast_to is not None and batch.schema != self.cast_to:
                batch = batch.cast(self.cast_to)
            yield batch


class PushdownReader(PqsiftReader):
    """A reader that also takes Spark's filters (``spark.sql.python.filterPushdown.enabled``)."""

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:  # noqa: N802 - pyspark's name
        for pushed in filters:
            text = filter_to_sql(pushed)
            if text is None:
                yield pushed
            else:
                self.filters.append(text)


def _positive_int(settings: dict[str, str], name: str) -> int | None:
    """The option ``name`` as a positive integer, None when not given."""
    text = settings.get(name)
    if text is None:
        return None
    if not text.strip().isdigit() or int(text) <= 0:
        raise ValueError(f"pqsift data source: option {name!r} must be a positive integer, got {text!r}")
    return int(text)


def _metrics_wanted(settings: dict[str, str]) -> bool:
    return _bool("metrics", settings.get("metrics", "false"))


def _path_of(settings: dict[str, str]) -> str | list[str]:
    if "path" in settings:
        return settings["path"]
    if "paths" in settings:
        return list(json.loads(settings["paths"]))
    raise ValueError("pqsift data source: give a path, e.g. spark.read.format('pqsift').load(path)")


def _columns_of(text: str | None, schema: StructType, user_schema: bool) -> list[str] | None:
    if text:
        return [name.strip() for name in text.split(",") if name.strip()]
    if user_schema:
        return [field.name for field in schema.fields]
    return None


def pa_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects for ``schema``."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, timezone="UTC", prefers_large_types=False)


#: Where Spark keeps a field's Parquet field id (``StructField.metadata``).
SPARK_FIELD_ID_KEY = "parquet.field.id"


def scan_schema_of(schema: StructType) -> pa.Schema:
    """A Spark schema as ``pqsift.scan(schema=...)`` takes it: :func:`pa_schema`, with each
    field's Parquet field id (Spark's ``parquet.field.id`` metadata) as Arrow's
    ``PARQUET:field_id``, at every depth."""
    from pyspark.sql.types import ArrayType, MapType

    def with_ids(arrow: pa.DataType, spark: Any) -> pa.DataType:
        if isinstance(spark, StructType):
            return pa.struct([with_field_id(arrow.field(i), f) for i, f in enumerate(spark.fields)])
        if isinstance(spark, ArrayType):
            return pa.list_(arrow.value_field.with_type(with_ids(arrow.value_type, spark.elementType)))
        if isinstance(spark, MapType):
            key, item = with_ids(arrow.key_type, spark.keyType), with_ids(arrow.item_type, spark.valueType)
            return pa.map_(arrow.key_field.with_type(key), arrow.item_field.with_type(item))
        return arrow

    def with_field_id(arrow: pa.Field, spark: Any) -> pa.Field:
        arrow = arrow.with_type(with_ids(arrow.type, spark.dataType))
        field_id = (spark.metadata or {}).get(SPARK_FIELD_ID_KEY)
        return arrow if field_id is None else arrow.with_metadata({b"PARQUET:field_id": str(int(field_id)).encode()})

    arrow = pa_schema(schema)
    return pa.schema([with_field_id(arrow.field(i), f) for i, f in enumerate(schema.fields)])


def local_time_zone() -> str:
    """This host's time zone as a tz database name — ``TZ`` if set, else where
    ``/etc/localtime`` points — or ``"UTC"``: the JVM's default, so Spark's default
    ``spark.sql.session.timeZone`` on this host."""
    given = os.environ.get("TZ", "").lstrip(":")
    if given:
        return given
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        return "UTC"
    _, found, name = target.partition("zoneinfo/")
    return name if found and name else "UTC"


def data_source_class(
    filter_pushdown: bool = True,
    session_time_zone: str = "UTC",
    base_directory: str | None = None,
    field_ids: tuple[bool, bool] = (False, False),
    parallelism: int | None = None,
) -> type[DataSource]:
    """The data source class to register; with ``filter_pushdown`` its reader implements
    ``pushFilters``. ``session_time_zone``, ``field_ids`` (``match_field_ids``,
    ``ignore_missing_field_ids``) and ``parallelism`` (the cluster's cores: at least this
    many tasks where the data allows, as :func:`~pqsift.spark.read` spreads a scan) are the
    defaults of the options of those names (a Python data source does not see the Spark
    session's configuration, nor its cores). ``base_directory``
    (the registering process's working directory): what relative paths are resolved
    against — the source's methods run in a Python worker whose working directory is
    another (on Spark Connect, the server's); ``None`` leaves them to that worker."""
    reader_class = PushdownReader if filter_pushdown else PqsiftReader

    class PqsiftDataSource(DataSource):
        """``spark.read.format("pqsift")``: see :func:`pqsift.spark.register`."""

        @classmethod
        def name(cls) -> str:
            return "pqsift"

        def schema(self) -> StructType:
            from pqsift.spark import schema

            freeze_worker_objects()  # in a planning worker: see pqsift.spark.worker_gc
            settings = _settings(self.options, base_directory)
            columns = _columns_of(settings.get("columns"), StructType(), False)
            options = _options_of(settings)
            table_options = {k: v for k, v in options.items() if k in _TABLE_OPTIONS}
            table_options.setdefault("session_time_zone", session_time_zone)
            table_schema = schema(_path_of(settings), columns, **table_options)
            if _metrics_wanted(settings):
                table_schema = StructType([*table_schema.fields, StructField(METRICS_COLUMN, StringType(), True)])
            # Kept with the source, which Spark pickles after asking for its schema and
            # hands to the workers that plan the read: `reader` compares against it
            # there without reading the footers again.
            self.table_schema = table_schema
            return table_schema

        def reader(self, schema: StructType) -> DataSourceReader:
            freeze_worker_objects()
            if "columns" in _settings(self.options):
                user_schema = False
            else:
                # Spark asks for the schema only when none was given (`.schema(...)`).
                own = getattr(self, "table_schema", None)
                user_schema = schema != (own if own is not None else self.schema())
            options = dict(self.options)
            given = _settings(options)
            defaults: dict[str, str | bool] = {
                "session_time_zone": session_time_zone,
                "match_field_ids": field_ids[0],
                "ignore_missing_field_ids": field_ids[1],
            }
            for name, default in defaults.items():
                if name not in given:
                    options[name] = str(default).lower() if isinstance(default, bool) else default
            return reader_class(options, schema, user_schema, base_directory, parallelism)

    return PqsiftDataSource
