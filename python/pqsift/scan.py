"""Scans: which files, row groups and pages a filtered read needs, from metadata alone.

>>> import pqsift
>>> scan = pqsift.scan("data/", filter="age > 50")        # doctest: +SKIP
>>> plan = scan.plan()                                    # doctest: +SKIP
>>> [rg.decision for rg in plan.files[0].row_groups]      # doctest: +SKIP
['skip', 'select', 'scan']
>>> print(scan.explain())                                 # doctest: +SKIP
>>> scan.metrics["row_groups_pruned_statistics"]          # doctest: +SKIP
1

The planning logic is in Rust (``pqsift._core.Scan``); this module checks arguments and
gives the plan readable Python objects.
"""

from __future__ import annotations

import datetime
import html
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack

import pyarrow as pa

from pqsift import _core
from pqsift._core import RowSelection
from pqsift.expr import FilterLike, filter_sql, is_arrow_expression

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

__all__ = ["PLANNING_OPTIONS", "READ_OPTIONS", "FilePlan", "Plan", "RowGroupPlan", "Scan", "ScanOptions", "scan"]

Decision = Literal["skip", "scan", "select"]

#: The planning options of :func:`scan` (pruning, tables, schema, object stores) and their
#: defaults, as the core defines them (``ScanOptionsArg`` in ``rust/python/options.rs``).
PLANNING_OPTIONS: Mapping[str, Any] = MappingProxyType(_core.scan_option_defaults())

#: The reading options of :func:`scan` (late materialization, threads, memory, output
#: types, ORDER BY / LIMIT) and their defaults, as the core defines them (``ReadOptionsArg``).
READ_OPTIONS: Mapping[str, Any] = MappingProxyType(_core.read_option_defaults())


class ScanOptions(TypedDict, total=False):
    """The keyword options of :func:`scan`, typed (their defaults: :data:`PLANNING_OPTIONS`
    and :data:`READ_OPTIONS`; what each does: :func:`scan`)."""

    # Planning: pruning stages and name matching.
    statistics: bool
    bloom_filter: bool
    page_index: bool
    session_time_zone: str
    case_sensitive: bool
    file_range: tuple[int, int] | None
    row_groups: Iterable[int] | None
    metadata_size_hint: int
    footer_bytes_read_together: int
    # Tables.
    partitioning: bool
    partition_type_inference: bool
    base_path: str | os.PathLike[str] | None
    version: int | None
    snapshot_id: int | None
    timestamp: str | datetime.datetime | datetime.date | None
    allowed_locations: Iterable[str | os.PathLike[str]] | Literal["any"] | None
    # Schemas.
    merge_schema: bool
    schema: pa.Schema | None
    match_field_ids: bool
    ignore_missing_field_ids: bool
    # Object stores.
    storage_options: Mapping[str, str | bool | int | float] | None
    # Reading.
    pushdown_filters: bool
    reorder_filters: bool
    selection_policy: Literal["auto", "selectors", "mask"]
    selection_threshold: int
    batch_size: int
    threads: int | None
    limit: int | None
    cache_bytes: int
    spark_output: bool
    coalesce_gap: int
    max_page_bytes: int
    decode_bytes: int
    string_view: bool
    order_by: str | tuple[str, ...] | Iterable[str | tuple[str, ...]] | None
    coerce_int96_timestamp_unit: Literal["s", "ms", "us", "ns"] | None
    max_bytes_read: int | None


# The most rows a decoded batch has (the core's cap): `to_table` takes batches whole.
_WHOLE_BATCH_ROWS = 1 << 20

# Store metrics summed over planning and reading (``max_requests_in_flight``: the larger).
_STORE_SUMS = ("requests", "retries", "bytes_requested", "bytes_received", "time_store_wait_s")


class _ItemAccess:
    """Fields readable as items too (``rg["decision"]`` is ``rg.decision``)."""

    def __getitem__(self, name: str) -> Any:
        if not isinstance(name, str) or name.startswith("_") or not hasattr(self, name):
            raise KeyError(name)
        return getattr(self, name)


@dataclass(frozen=True)
class RowGroupPlan(_ItemAccess):
    """How one row group is read: ``decision`` is ``"skip"``, ``"scan"`` (every row) or
    ``"select"`` (the rows of ``selection``); ``stage`` and ``reason`` say why. For a row
    group kept, ``notes`` say what each stage could not use and why (``"statistics: NaN
    may hide in f (its statistics have no nan_count)"``, ``"bloom filter: none for id"``,
    ``"page index: the file has none"``): how a writer could make it prunable.
    ``read_bytes``: the compressed bytes reading it can take — the column chunks of the
    projected and filtered columns, and with a page index only their pages holding a
    selected row — against ``compressed_bytes``, the whole row group's. ``certain_rows``:
    the rows the page index shows pass the filter (pages where it cannot be false and its
    columns hold no nulls; 0 where unknown), a lower bound of the rows read before deletion
    vectors and limits; ``certain_output_bytes``: the Arrow bytes their projected columns are
    estimated to take, from the footer's sizes."""

    index: int
    rows: int
    decision: Decision
    selected_rows: int
    selection: RowSelection | None = None
    compressed_bytes: int = 0
    read_bytes: int = 0
    stage: str | None = None
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    certain_rows: int = 0
    certain_output_bytes: int = 0


@dataclass(frozen=True)
class FilePlan(_ItemAccess):
    """The plan of one file: one :class:`RowGroupPlan` per row group, in file order."""

    path: str
    row_groups: list[RowGroupPlan] = field(default_factory=list)
    skipped: str | None = None
    """Why the whole file was skipped before its footer was read (its partition values), or
    None."""

    @property
    def pruned(self) -> bool:
        """True when no row group of the file is read."""
        return all(rg.decision == "skip" for rg in self.row_groups)


@dataclass(frozen=True)
class Plan(_ItemAccess):
    """The plan of a scan: per file, per row group, the decision; plus the counts."""

    files: list[FilePlan]
    metrics: dict[str, int]
    _text: str = field(repr=False, default="")

    def explain(self) -> str:
        """The plan in words: per file and row group, the decision and why."""
        return self._text


class Scan:
    """A scan of Parquet files with a filter; see :func:`scan`.

    Iterate over it for ``pyarrow.RecordBatch`` objects, call :meth:`to_table`, or hand it
    to any Arrow consumer: it implements ``__arrow_c_stream__``
    (``pa.RecordBatchReader.from_stream(scan)``, ``polars.from_arrow``, DuckDB).
    """

    def __init__(self, core: _core.Scan, read_options: dict[str, Any] | None = None) -> None:
        self._core = core
        self._read_options = dict(READ_OPTIONS if read_options is None else read_options)
        self._read_metrics: dict[str, Any] = {}
        self._last_stream: _core.ScanStream | None = None

    @property
    def files(self) -> list[str]:
        """The files scanned, in order."""
        return self._core.files

    @property
    def table_format(self) -> Literal["files", "hive", "delta", "iceberg"]:
        """What the source is: plain ``"files"``, a ``"hive"``-partitioned directory, a
        ``"delta"`` table or an ``"iceberg"`` table."""
        return self._core.table_format  # type: ignore[return-value]

    @property
    def table_version(self) -> int | None:
        """The version of the Delta snapshot read, or None for other tables."""
        return self._core.table_version

    @property
    def snapshot_id(self) -> int | None:
        """The id of the Iceberg snapshot read, or None (other tables, an Iceberg table
        without snapshots)."""
        return self._core.snapshot_id

    @property
    def partition_schema(self) -> list[tuple[str, str]]:
        """The partition columns as ``(name, Spark type name)`` pairs (empty without)."""
        return self._core.partition_schema

    @property
    def filter(self) -> str | None:
        """The filter in canonical Spark SQL, or None."""
        return self._core.filter

    @property
    def columns(self) -> list[str] | None:
        """The projected columns, or None for all."""
        return self._core.columns

    def plan(self) -> Plan:
        """Reads footers, bloom filters and page indexes (no column data) and decides, per
        row group, whether to skip it, scan it, or read a row selection of it. The footers
        of local files are read on the scan's ``threads``, those in an object store fetched
        several at once."""
        files = [
            FilePlan(
                path=f["path"],
                # Tuples in the order of the fields (the core's `file_dict`).
                row_groups=[RowGroupPlan(*rg) for rg in f["row_groups"]],
                skipped=f["skipped"],
            )
            for f in self._core.plan(self._read_options)
        ]
        return Plan(files=files, metrics=dict(self._core.metrics()), _text=self._core.explain())

    def explain(self) -> str:
        """Per file and row group: the decision and why (plans first if needed); once
        read with ``order_by`` and ``limit``, what the threshold learnt while reading kept
        out of the read, and the row groups the first pass found no top row in."""
        text: str = self._core.explain()
        read = {} if self._last_stream is None else self._last_stream.metrics()
        skipped = read.get("row_groups_skipped_by_threshold", 0)
        if skipped:
            text += (
                f"reading: {skipped} more row group(s) not read: every row of the top "
                f"{self._read_options.get('limit')} meets {read.get('threshold_key_condition', 'a condition on the key')} "
                "(learnt while reading), and their statistics show no row does\n"
            )
            for path, row_group in read.get("row_groups_skipped_by_threshold_list", []):
                text += f"  {path} row group {row_group}: not read (threshold)\n"
        pages = read.get("pages_skipped_by_threshold", 0)
        if pages:
            text += (
                f"reading: {pages} page(s) of the first sort key not read in the row groups read in part: "
                f"every row of the top {self._read_options.get('limit')} meets "
                f"{read.get('threshold_key_condition', 'a condition on the key')} (learnt while reading), "
                "and their page statistics show no row does\n"
            )
        without = read.get("row_groups_without_top_rows", 0)
        if without:
            text += (
                f"reading: {without} more row group(s) read for their keys only: "
                f"none holds a row of the top {self._read_options.get('limit')}\n"
            )
            for path, row_group in read.get("row_groups_without_top_rows_list", []):
                text += f"  {path} row group {row_group}: not read again (no top row)\n"
        return text

    @property
    def metrics(self) -> dict[str, Any]:
        """Counts over the whole scan: pruning (from the last :meth:`plan`, planning first
        if there was none) and, once read, reading: ``rows_out``, ``bytes_read``,
        ``rows_decoded`` (values decoded, summed over columns; per column in
        ``rows_decoded_by_column``), ``cache_hits``, ``cache_misses``,
        ``row_group_windows`` (windows of rows read for row groups larger than
        ``decode_bytes``: planned on the predicates' columns when there is a filter),
        ``projection_parts`` (parts the rows passing a row group's filter were decoded
        in, when they decode to more than ``decode_bytes``),
        ``row_groups_skipped_by_threshold`` (with ``order_by`` and ``limit``: row groups
        not read because their statistics rule out the k-th row's key, learnt while
        reading), ``pages_skipped_by_threshold`` (pages of the first key not read in the
        row groups read in part, where the key is sorted within them: the same threshold on
        their page statistics), ``row_groups_without_top_rows`` (row groups whose keys the first pass
        read and found none of the top rows in, not read again), and time per stage
        (``time_plan_s``, ``time_predicates_s``, ``time_projection_s``). From an object
        store, over planning and reading: ``requests`` (HTTP requests, retries included),
        ``retries``, ``bytes_requested``, ``bytes_received``, ``max_requests_in_flight``,
        ``time_store_wait_s`` (threads blocked on the store, summed) and
        ``projections_fetched_with_predicates`` (row groups whose projection came in the
        round trip of their predicate columns, most of its pages expected to hold a row
        that passes)."""
        metrics: dict[str, Any] = dict(self._core.metrics())
        if self._last_stream is not None:
            self._read_metrics.update(self._last_stream.metrics())
        planning = {name: metrics.get(name, 0) for name in (*_STORE_SUMS, "max_requests_in_flight")}
        metrics.update(self._read_metrics)
        if self._read_metrics:
            for name in _STORE_SUMS:
                metrics[name] = planning[name] + self._read_metrics.get(name, 0)
            metrics["max_requests_in_flight"] = max(
                planning["max_requests_in_flight"], self._read_metrics.get("max_requests_in_flight", 0)
            )
        return metrics

    # ----- reading ---------------------------------------------------------------------

    def _with_read_options(self, **options: Any) -> Scan:
        """This scan (its files, filter and planning) read with ``options`` — read options
        of :func:`scan` — instead of its own; checked as :func:`scan` checks them."""
        if "order_by" in options:
            options["order_by"] = _order_by(options["order_by"])
        _core.check_read_options(options)
        return Scan(self._core, {**self._read_options, **options})

    def _stream(self, *, whole_batches: bool = False, first_batches_soon: bool = False) -> _core.ScanStream:
        """Plans, then starts reading the row groups the plan keeps, in the core (the plan
        is not handed through Python, the footers planning read are read from);
        ``whole_batches``: batches as decoded (a row group or a window of one), not cut to
        ``batch_size``; ``first_batches_soon``: the caller may stop after the first batches
        (see :meth:`pqsift._core.Scan.read`)."""
        options = dict(self._read_options)
        if whole_batches:
            options["batch_size"] = max(options["batch_size"], _WHOLE_BATCH_ROWS)
        stream, planning_seconds = self._core.read(options, first_batches_soon)
        self._read_metrics = {"time_plan_s": planning_seconds}
        self._last_stream = stream
        return stream

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        """Reads the scan, one ``pyarrow.RecordBatch`` of at most ``batch_size`` rows at a
        time, in file and row-group order."""
        return self._batches()

    def _batches(self, *, whole_batches: bool = False) -> Iterator[pa.RecordBatch]:
        """As iterating, or with ``whole_batches`` the batches as decoded (see :meth:`_stream`)."""
        for batch in self._stream(whole_batches=whole_batches):
            yield pa.record_batch(batch)

    def to_table(self) -> pa.Table:
        """Reads the whole scan into a ``pyarrow.Table``. Its chunks are the batches as
        decoded — a row group's rows, or a window of a large one — not ``batch_size``
        slices: a table holds them all anyway, and each batch handed over costs a crossing."""
        stream = self._stream(whole_batches=True)
        schema = pa.schema(stream)
        return pa.Table.from_batches([pa.record_batch(b) for b in stream], schema=schema)

    def to_pandas(self, **options: Any) -> pd.DataFrame:
        """Reads the whole scan into a ``pandas.DataFrame`` (``options`` are
        ``pyarrow.Table.to_pandas``'s)."""
        frame: pd.DataFrame = self.to_table().to_pandas(**options)
        return frame

    def to_polars(self) -> pl.DataFrame:
        """Reads the whole scan into a ``polars.DataFrame`` (``polars.DataFrame(scan)`` is
        the same; ``polars.from_arrow(scan)`` makes a Series of structs of any Arrow
        stream, as Polars documents)."""
        import polars

        return polars.DataFrame(self)

    def head(self, n: int = 5) -> pa.Table:
        """The first ``n`` rows, in the scan's order (``order_by``, else file and row group
        order): reading stops once they are found."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"head(n): n must be a non-negative int, not {n!r}")
        limit = self._read_options.get("limit")
        return self._with_read_options(limit=n if limit is None else min(n, limit)).to_table()

    def count_rows(self) -> int:
        """The number of rows the scan returns. Without a filter the plan answers — row
        counts from the footers, less the rows deletion vectors delete — and no column is
        read; with one, only the filter's columns are decoded, in the row groups and pages
        the plan keeps. ``limit`` applies."""
        rows: int = self._core.count_rows(self._read_options)
        limit = self._read_options.get("limit")
        return rows if limit is None else min(rows, limit)

    @property
    def schema(self) -> pa.Schema:
        """The schema the scan outputs (its read options applied: ``spark_output``,
        ``string_view``, ...), from the first file's footer: nothing is planned or read."""
        return pa.schema(self._core.output_schema(self._read_options))

    def __arrow_c_schema__(self) -> object:
        """The Arrow PyCapsule schema interface: :attr:`schema` (``pa.schema(scan)``)."""
        return self._core.output_schema(self._read_options).__arrow_c_schema__()

    def _repr_html_(self) -> str:
        """A notebook's view of the scan: its source, filter and columns, and the plan's
        summary (planning first, from metadata alone, if it has not planned)."""
        metrics = self.metrics
        rows = [
            ("source", f"{len(self.files)} file(s), {self.table_format}"),
            ("filter", self.filter or "none"),
            ("columns", ", ".join(self.columns) if self.columns is not None else "all"),
            (
                "files",
                f"{metrics.get('files_total', 0) - metrics.get('files_pruned', 0)} of {metrics.get('files_total', 0)} kept",
            ),
            (
                "row groups",
                f"{metrics.get('row_groups_selected', 0)} of {metrics.get('row_groups_total', 0)} kept "
                f"({metrics.get('row_groups_pruned_statistics', 0)} pruned by statistics, "
                f"{metrics.get('row_groups_pruned_bloom_filter', 0)} by bloom filters, "
                f"{metrics.get('row_groups_pruned_page_index', 0)} by the page index)",
            ),
            ("pages", f"{metrics.get('pages_pruned', 0)} of {metrics.get('pages_total', 0)} pruned"),
            ("rows", f"{metrics.get('rows_selected', 0):,} of {metrics.get('rows_total', 0):,} selected by the plan"),
        ]
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>{html.escape(v)}</td></tr>"
            for k, v in rows
        )
        return f"<table><caption style='text-align:left'><b>pqsift.Scan</b></caption>{body}</table>"

    def to_reader(self) -> pa.RecordBatchReader:
        """The scan as a ``pyarrow.RecordBatchReader`` (read lazily)."""
        return pa.RecordBatchReader.from_stream(self._stream())

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """The Arrow PyCapsule stream interface: a fresh read of the scan."""
        return self._stream().__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        return f"pqsift.Scan({len(self.files)} file(s), filter={self.filter!r})"


def _sources(source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    if isinstance(source, (str, os.PathLike)):
        return [os.fspath(source)]
    if isinstance(source, Iterable):
        paths = [os.fspath(p) for p in source]
        return paths
    raise TypeError(f"source must be a path or a list of paths, not {type(source).__name__}")


def scan(
    source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    columns: Iterable[str] | None = None,
    filter: FilterLike | None = None,  # noqa: A002 - the public name
    **options: Unpack[ScanOptions],
) -> Scan:
    """A scan of ``source`` — a Parquet file, a directory (searched recursively, leaving
    out what Spark leaves out: names starting with ``.``, or with ``_`` unless they hold
    ``=``, and ``*.crc``), or a list of paths — keeping ``columns`` of the rows matching
    ``filter`` (Spark SQL text, an :class:`~pqsift.Expr`, pyarrow's DNF tuples such as
    ``[("id", "<", 10), ("kind", "in", ["a", "b"])]``: :func:`pqsift.from_dnf`, or a
    ``pyarrow.compute.Expression`` such as ``pc.field("id") < 10``, kept with pyarrow's
    meaning: :mod:`pqsift.arrow_filter`). A column is a top-level name or, as in Spark's
    ``select("a.b")``, a path to a struct field (back-quotes for names with dots): the
    output column is that field, named by its last part, null where a struct above it is.

    Options: ``statistics``, ``bloom_filter``, ``page_index`` (bools: the pruning stages),
    ``session_time_zone`` (``"UTC"``), ``case_sensitive`` (``False``), ``file_range``
    (``(offset, length)``: only the row groups whose midpoint lies in that byte range of a
    single file), ``row_groups`` (a list of row group indices: only those, of a single
    file — a task planned elsewhere, e.g. by :func:`pqsift.spark.read`),
    ``metadata_size_hint`` (bytes read from the end of each file in one I/O for its footer
    and page index, 512 KiB; what does not fit is read after),
    ``footer_bytes_read_together`` (a read opens its files in groups whose parsed footers
    take at most this much memory, 32 MiB, and holds one group's at a time; a read sorted
    by ``order_by`` opens them all at once).

    Object stores: ``source`` may be a URL — ``s3://bucket/key.parquet``, a prefix
    ``s3://bucket/events/`` (listed as a directory), a Delta table root — on S3
    (``s3://``, ``s3a://``), GCS (``gs://``) or Azure (``az://``, ``abfss://``), with
    ``storage_options`` (the ``object_store`` crate's names: ``aws_access_key_id``,
    ``aws_secret_access_key``, ``aws_region``, ``aws_endpoint``, ``aws_allow_http``,
    ``google_service_account``, ``azure_storage_account_name``, ... plus ``max_retries``
    and ``retry_timeout``); unset ones come from the usual environment variables. Footers
    are fetched concurrently, column data as coalesced byte ranges (``coalesce_gap``, 1
    MiB) of the pages that hold selected rows; transient failures are retried with
    backoff. A missing object raises :class:`pqsift.ObjectNotFoundError`, other store
    failures :class:`pqsift.StorageError`, both naming the URL.

    Table options: ``partitioning`` (``True``: ``key=value`` directories below the
    directory scanned are partition columns, appended after the file columns, as
    ``spark.read.parquet`` discovers them), ``partition_type_inference`` (``True``:
    Spark's type inference; ``False``: all strings), ``base_path`` (Spark's
    ``basePath``: partition directories start below it). A filter on partition columns
    skips files before their footers are read (``files_pruned_partition``).

    Delta tables: a directory holding ``_delta_log/`` is read as the table's latest
    snapshot — the files the log says are active, deleted rows (deletion vectors) left out,
    columns as the table's schema declares them (column mapping, added columns as nulls,
    widened types), partition columns typed from the schema. ``version`` (an int) or
    ``timestamp`` (Spark timestamp text or a ``datetime``; the newest commit at or before
    it) read an earlier snapshot. Files are pruned on partition values and on the log's
    statistics (``files_pruned_log_stats``) before any footer is read; ``metrics`` has the
    log replay's counts (``delta_*``). A Delta feature pqsift cannot read raises
    :class:`pqsift.UnsupportedError`; a broken log :class:`pqsift.TableError`. A table
    reads only below its root: a data file or deletion vector the log names elsewhere (an
    absolute path, ``../``, another bucket) raises :class:`pqsift.TableError` naming the
    table and the path, unless ``allowed_locations`` allows it — a list of path or URL
    prefixes (a shallow clone's source table), or ``"any"``.

    Iceberg tables: a directory holding ``metadata/`` with its metadata files
    (``vN.metadata.json`` or ``NNNNN-<uuid>.metadata.json``, gzipped too;
    ``version-hint.text`` when present) is read as its current snapshot; a metadata file
    given as the source reads that metadata version, ``snapshot_id`` (an int) or
    ``timestamp`` an earlier snapshot. Columns are matched by field id (renames, columns
    dropped and re-added), by the table's name mapping in files without ids; a column a
    file lacks is its identity partition value from the manifest, its initial default, or
    null. Files are pruned on the manifests' column statistics and partition values
    (``files_pruned_manifest``) before any footer is read; ``metrics`` has the metadata's
    counts (``iceberg_*``). Locations the metadata records below the table's recorded
    location are read below the root given (a moved table reads its own files). Equality
    deletes are applied as a predicate on each older data file of their partition (their
    columns read even when not projected, NULL equal to NULL); position deletes and
    deletion vectors leave their rows out of the plan (``rows_deleted``).

    Reading options: ``pushdown_filters`` (``True``: late materialization; ``False``
    decodes every projected column, then filters — the baseline), ``reorder_filters``
    (``True``: cheapest predicate first, re-ranked by observed cost per row removed),
    ``selection_policy`` (``"auto"``, ``"selectors"``, ``"mask"``),
    ``selection_threshold`` (32: average run length below which ``auto`` uses a mask),
    ``cache_bytes`` (64 MiB: decoded-column cache), ``batch_size`` (8192), ``threads``
    (default: the cores), ``limit`` (stop after that many rows), ``spark_output``
    (``False``; ``True`` outputs the Arrow types Spark accepts without a cast: see
    :mod:`pqsift.spark`).

    ``order_by``: the rows in this order, as Spark's ``ORDER BY`` — a column, or a list of
    keys, each a column or ``(column, "asc" | "desc")`` or ``(column, "asc" | "desc",
    "nulls_first" | "nulls_last")`` (NULLs first for ascending keys, last for descending
    ones, unless said; NaN above every number). With ``limit`` it is a top-k query: the
    first ``limit`` rows in that order, and planning skips the row groups and pages whose
    statistics on the first key show they cannot hold one of them (the TopN pruner:
    ``metrics["row_groups_pruned_topn"]``, ``explain()`` names the bound), holding about
    ``2 × limit`` rows while reading. A key column need not be among ``columns``.

    Memory options: ``decode_bytes`` (32 MiB: a row group whose read columns are estimated
    to decode to more is read in windows of rows of about this size — with a filter, the
    predicates' columns, and the projection of the rows that pass in parts of half this
    size — so memory is bounded by ``decode_bytes`` × tasks in flight, not by the row
    group), ``max_page_bytes`` (256
    MiB: a page whose header claims more uncompressed bytes raises
    :class:`pqsift.UnsupportedError` before it is decompressed), ``max_bytes_read``
    (``None``: a read that has read more bytes of its files raises
    :class:`pqsift.ReadBudgetError` — checked as batches come out and between a top-k's
    waves, so up to a window of row groups more may have been read, and before reading for
    a top-k whose key chunks without statistics alone pass it; what the Spark driver uses
    to try a top-k itself before it hands it to tasks).

    ``coerce_int96_timestamp_unit`` (``None``; ``"s"``, ``"ms"``, ``"us"``, ``"ns"``, as
    pyarrow names it): the unit INT96 timestamps (Spark's and Impala's legacy type) are read
    in. By default nanoseconds, as pyarrow and Polars read them — but microseconds, as Spark
    does, with ``spark_output`` or a Delta table's declared ``timestamp``. Spark writes INT96
    instants far beyond nanoseconds' year 2262 (year 290,000 in the Apache corpus): one the
    unit cannot hold raises :class:`pqsift.UnsupportedError` naming this option (pyarrow
    wraps it into another instant). INT96 inside structs, lists and maps is read in the
    option's unit too, and checked the same way: a value past nanoseconds' range in a row
    read raises (their INT96 leaves are decoded a second time, in seconds, to check).

    ``string_view`` (``False``): top-level string and binary columns come out as Arrow
    ``string_view`` / ``binary_view`` instead of ``string`` / ``binary`` (values may point
    into the decompressed pages instead of being copied; pyarrow, Polars and DuckDB read
    views, and Spark's Arrow path accepts them for ``string``; a page with few selected
    values has those copied instead, so that no whole page is kept for a few rows). Off by
    default: not every consumer of Arrow reads views, pyarrow's compute functions cover them
    only in part, and on the benchmarks they cost as much CPU as plain strings (views save
    the copy of the bytes but take 16 bytes a row where offsets take 4).

    Files with different columns (a table that grew a column): by default the scan schema
    is the first file's, as Spark's: every other file is read into it by name — a column
    it lacks comes out null (and prunes as all-null), a column it has beyond the schema is
    not read, a narrower type is widened (int to bigint, float to double, a larger decimal,
    date to timestamp_ntz). ``merge_schema=True`` (Spark's ``mergeSchema``) makes it the
    union of every file's columns, all footers read first; types must then be equal.
    ``schema`` (a ``pyarrow.Schema``, Spark's ``.schema(...)``) wins over both: every file
    is read into it by the same rules, the partition columns appended where it lacks them.
    With ``match_field_ids=True`` (Spark's ``spark.sql.parquet.fieldId.read.enabled``) a
    field of ``schema`` whose metadata has a Parquet field id (``PARQUET:field_id``, as
    Iceberg and Spark write them) is read from the file column with that id whatever its
    name — a renamed column is found, a dropped one whose name was reused is not — and
    is null where no column has it; a file with no field ids at all raises
    :class:`pqsift.SchemaMismatchError` unless ``ignore_missing_field_ids=True``, which
    reads such fields as nulls there. Fields without an id match by name.
    A column that cannot be read into the scan schema raises
    :class:`pqsift.SchemaMismatchError` naming both files (or the given schema), the column
    and both types.

    An unknown option raises ``TypeError``; a bad filter
    :class:`pqsift.FilterError` before any data is read; an unreadable file
    :class:`pqsift.CorruptFileError` naming it, a file using a feature pqsift cannot read
    (encryption) :class:`pqsift.UnsupportedError`.
    """
    return _scan(source, columns, filter, dict(options))


def _scan(
    source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    columns: Iterable[str] | None,
    filter: FilterLike | None,  # noqa: A002 - the public name
    options: dict[str, Any],
    **planned_elsewhere: Any,
) -> Scan:
    """:func:`scan` with ``options`` as a dict; ``planned_elsewhere``: the core's
    ``partition_values``, ``declared_schema`` and ``deletion_vector`` of one file of a
    table planned by another process (a Spark task planning its own files), not options a
    user gives. The options are checked by the core, which defines them; here they are only
    put in the form it takes."""
    reading = {name: options.pop(name) for name in list(options) if name in READ_OPTIONS}
    if "order_by" in reading:
        reading["order_by"] = _order_by(reading["order_by"])
    _core.check_read_options(reading)
    planning = _planning_options(options)
    # A pyarrow expression is written as Spark SQL once the core knows the table's schema.
    # (A callable is one already made so, by a pqsift dataset's scanner.)
    if callable(filter):
        filter_text: Any = filter
    elif is_arrow_expression(filter):
        from pqsift.arrow_filter import filter_for  # imports pyarrow.compute

        filter_text = filter_for(filter)
    else:
        filter_text = filter_sql(filter)
    if isinstance(columns, str):
        raise TypeError("columns must be a list of names, not a str")
    column_list = None if columns is None else [str(c) for c in columns]
    sources = _sources(source)
    for name in ("file_range", "row_groups"):
        if planning.get(name) is not None and (len(sources) != 1 or os.path.isdir(sources[0])):
            raise ValueError(f"option {name} needs a scan of exactly one file")
    order_by = reading.get("order_by")
    core = _core.Scan(
        sources,
        column_list,
        filter_text,
        planning,
        order_by=order_by,
        top_n_limit=reading.get("limit") if order_by else None,
        footer_threads=reading.get("threads"),
        **planned_elsewhere,
    )
    return Scan(core, {**READ_OPTIONS, **reading})


def _planning_options(options: dict[str, Any]) -> dict[str, Any]:
    """Planning ``options`` in the form the core takes them: paths as str, a schema as
    text, a timestamp as Spark timestamp text, storage option values as str, row groups
    as a list. Their names, types and ranges are checked by the core."""
    out = dict(options)
    if isinstance(out.get("base_path"), os.PathLike):
        out["base_path"] = os.fspath(out["base_path"])
    if "storage_options" in out:
        out["storage_options"] = _storage_options(out["storage_options"])
    if "schema" in out:
        out["schema"] = _schema_text(out["schema"])
    timestamp = out.get("timestamp")
    if isinstance(timestamp, datetime.datetime):
        out["timestamp"] = timestamp.isoformat(sep=" ")
    elif isinstance(timestamp, datetime.date):
        out["timestamp"] = timestamp.isoformat()
    row_groups = out.get("row_groups")
    if row_groups is not None and not isinstance(row_groups, (str, bytes, list)) and isinstance(row_groups, Iterable):
        out["row_groups"] = list(row_groups)
    return out


def _order_by(order_by: Any) -> list[tuple[str, bool, bool]] | None:
    """``order_by`` as ``(column, descending, nulls_first)`` triples: each key a column
    name, or ``(column, "asc" | "desc")``, or ``(column, "asc" | "desc", "nulls_first" |
    "nulls_last")``; NULLs go first for ``asc`` and last for ``desc`` unless said, as in
    Spark."""
    if order_by is None:
        return None
    one_key = isinstance(order_by, str) or (
        isinstance(order_by, tuple) and bool(order_by) and isinstance(order_by[0], str)
    )
    keys = [order_by] if one_key else order_by
    if not isinstance(keys, Iterable):
        raise TypeError(f"option order_by must be a column name or a list of keys, not {type(order_by).__name__}")
    out: list[tuple[str, bool, bool]] = []
    for key in keys:
        parts = (key,) if isinstance(key, str) else key
        if not isinstance(parts, tuple) or not 1 <= len(parts) <= 3 or not all(isinstance(p, str) for p in parts):
            raise TypeError(
                f"option order_by: a key is a column name or a (column, 'asc' | 'desc'[, 'nulls_first' | 'nulls_last']) tuple, not {key!r}"
            )
        column, direction, *nulls = (*parts, "asc")[:3] if len(parts) == 1 else parts
        if direction.lower() not in ("asc", "desc"):
            raise ValueError(f"option order_by: direction of {column!r} must be 'asc' or 'desc', not {direction!r}")
        descending = direction.lower() == "desc"
        if nulls and nulls[0].lower() not in ("nulls_first", "nulls_last"):
            raise ValueError(
                f"option order_by: NULL placement of {column!r} must be 'nulls_first' or 'nulls_last', not {nulls[0]!r}"
            )
        nulls_first = nulls[0].lower() == "nulls_first" if nulls else not descending
        out.append((column, descending, nulls_first))
    if not out:
        raise ValueError("option order_by must name at least one column")
    return out


def _schema_text(schema: pa.Schema | None) -> str | None:
    """A caller's schema as the core takes it: ``arrow``, a newline, the schema as an Arrow
    IPC stream of no batch in hexadecimal."""
    if schema is None:
        return None
    if not isinstance(schema, pa.Schema):
        raise TypeError(f"option schema must be a pyarrow.Schema, not {type(schema).__name__}")
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema):
        pass
    ipc_hex: str = sink.getvalue().to_pybytes().hex()
    return "arrow\n" + ipc_hex


def _storage_options(options: Any) -> dict[str, str] | None:
    """``storage_options`` as ``{str: str}``: bools become ``"true"``/``"false"`` and
    numbers their text, as the object_store crate reads them."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise TypeError(f"option storage_options must be a dict of str to str, not {type(options).__name__}")
    out: dict[str, str] = {}
    for key, value in options.items():
        if not isinstance(key, str):
            raise TypeError(f"storage_options keys must be str, not {type(key).__name__}")
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            out[key] = str(value)
        else:
            raise TypeError(f"storage option {key!r} must be a str, bool or number, not {type(value).__name__}")
    return out
