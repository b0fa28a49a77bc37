"""Type stubs and documentation of the native module ``pqsift._core`` (Rust, PyO3)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypedDict

__version__: str

RunLabel = Literal["skip", "select"]

class RowSelection:
    """Which rows of one row group to decode.

    A selection covers the rows ``0 .. row_count`` and marks each selected or skipped. It is
    backed either by *runs* (``("skip", n)`` / ``("select", n)``, cheap when runs are long)
    or by a *mask* (one bit per row, cheap when runs are short); every operation gives the
    same result for both, and :meth:`policy` says which one a reader should use.

    >>> s = RowSelection.from_runs([("skip", 100), ("select", 50), ("skip", 50)])
    >>> s.row_count, s.selected_count
    (200, 50)
    >>> s.and_then(RowSelection.from_runs([("select", 10), ("skip", 40)])).runs()
    [('skip', 100), ('select', 10), ('skip', 90)]

    Invalid operations (mismatched lengths, out-of-order ranges, negative or overflowing
    counts) raise :class:`pqsift.SelectionError`, a ``ValueError``. Selections are
    immutable: every operation returns a new one. ``==`` compares the selected rows, not the
    representation.
    """

    @staticmethod
    def from_runs(runs: Iterable[tuple[RunLabel, int]]) -> RowSelection:
        """Builds a run-backed selection from ``("skip" | "select", count)`` pairs in row
        order. Zero-length runs are dropped and neighbours of one kind merged.

        >>> RowSelection.from_runs([("select", 2), ("select", 3), ("skip", 0)]).runs()
        [('select', 5)]
        """

    @staticmethod
    def from_mask(mask: Iterable[bool | None] | Any) -> RowSelection:
        """Builds a mask-backed selection: one entry per row, ``True`` = selected.

        ``mask`` is any iterable of bools (``None`` counts as not selected, as a null
        predicate result does), or an Arrow boolean array or chunked array (anything with
        ``__arrow_c_array__`` / ``__arrow_c_stream__``, e.g. ``pyarrow.BooleanArray``),
        imported without copying; nulls are not selected.

        >>> RowSelection.from_mask([True, False, None, True]).runs()
        [('select', 1), ('skip', 2), ('select', 1)]
        """

    @staticmethod
    def from_ranges(ranges: Iterable[tuple[int, int]], row_count: int) -> RowSelection:
        """Selects the ``[start, end)`` ranges of ``row_count`` rows. Ranges must be sorted,
        non-overlapping and inside the rows.

        >>> RowSelection.from_ranges([(2, 4)], 6).to_mask()
        [False, False, True, True, False, False]
        """

    @staticmethod
    def select_all(row_count: int) -> RowSelection:
        """Selects every one of ``row_count`` rows."""

    @staticmethod
    def skip_all(row_count: int) -> RowSelection:
        """Skips every one of ``row_count`` rows."""

    def runs(self) -> list[tuple[RunLabel, int]]:
        """The normalised runs: no zero-length run, neighbours of different kinds."""

    def to_mask(self) -> list[bool]:
        """One bool per row."""

    def selected_ranges(self) -> list[tuple[int, int]]:
        """The selected rows as sorted ``(start, end)`` ranges."""

    @property
    def row_count(self) -> int:
        """Rows covered, selected and skipped."""

    @property
    def selected_count(self) -> int:
        """Rows selected."""

    @property
    def skipped_count(self) -> int:
        """Rows skipped."""

    @property
    def representation(self) -> Literal["selectors", "mask"]:
        """What backs this selection now (see :meth:`policy` for what a reader should use)."""

    def selects_any(self) -> bool:
        """``True`` when at least one row is selected."""

    def and_then(self, other: RowSelection) -> RowSelection:
        """Applies ``other`` to the rows this selection selects.

        ``other`` is in the coordinates of the selected rows and must cover exactly
        :attr:`selected_count` rows. This is how late materialization refines a selection,
        predicate after predicate.

        >>> a = RowSelection.from_mask([False, True, True, False, True])
        >>> a.and_then(RowSelection.from_mask([True, False, True])).to_mask()
        [False, True, False, False, True]
        """

    def intersection(self, other: RowSelection) -> RowSelection:
        """Rows selected by both; both must cover the same number of rows."""

    def union(self, other: RowSelection) -> RowSelection:
        """Rows selected by either; both must cover the same number of rows."""

    def split_off(self, n: int) -> tuple[RowSelection, RowSelection]:
        """The first ``n`` rows and the rest. An ``n`` past the end gives the whole
        selection and an empty one, like list slicing.

        >>> head, tail = RowSelection.from_ranges([(2, 6)], 8).split_off(4)
        >>> head.selected_ranges(), tail.selected_ranges()
        ([(2, 4)], [(0, 2)])
        """

    def offset(self, n: int) -> RowSelection:
        """Unselects the first ``n`` selected rows; the row count is unchanged."""

    def limit(self, n: int) -> RowSelection:
        """Keeps only the first ``n`` selected rows; the row count is unchanged (call
        :meth:`trim` to drop the trailing skip)."""

    def trim(self) -> RowSelection:
        """Drops trailing skipped rows."""

    def expand_to_batch_boundaries(self, batch_size: int) -> RowSelection:
        """Selects every whole batch of ``batch_size`` rows that holds a selected row."""

    def scan_ranges(
        self,
        pages: Iterable[tuple[int, int, int]],
        *,
        dictionary_page: tuple[int, int] | None = None,
        coalesce_gap: int | None = None,
    ) -> list[tuple[int, int]]:
        """The ``(offset, length)`` byte ranges of the data pages holding a selected row.

        ``pages`` are ``(offset, compressed_size, first_row_index)`` per data page, from the
        offset index; page *i* holds rows ``first_row_index[i] .. first_row_index[i+1]``.
        By default one range per page, no coalescing (the arrow-rs contract). With
        ``dictionary_page=(offset, length)`` the dictionary page is added when any data page
        is read; with ``coalesce_gap=g`` ranges at most ``g`` bytes apart are merged (the
        reader uses 64 KiB).

        >>> s = RowSelection.from_runs([("skip", 150), ("select", 10), ("skip", 40)])
        >>> s.scan_ranges([(0, 10, 0), (10, 10, 100)])
        [(10, 10)]
        """

    def policy(self, threshold: int = 32) -> Literal["mask", "selectors"]:
        """What the adaptive policy picks: ``"mask"`` when the average run length is below
        ``threshold`` (``row_count < run_count * threshold``), else ``"selectors"``.

        >>> RowSelection.from_mask([True, False] * 50).policy()
        'mask'
        """

    def with_policy(self, policy: Literal["auto", "selectors", "mask"] = "auto", threshold: int = 32) -> RowSelection:
        """The same rows, backed by what ``policy`` picks."""

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """The selection as an Arrow boolean array (Arrow PyCapsule interface):
        ``pyarrow.array(selection)`` works."""

    def __len__(self) -> int:
        """:attr:`row_count`."""

def allocator_settings() -> dict[str, int | bool] | None:
    """The settings this extension's jemalloc started with (``narenas``, ``dirty_decay_ms``,
    ``muzzy_decay_ms``, ``background_thread``), starting it if nothing has allocated yet;
    ``None`` where the system's allocator serves."""

def column_pages(path: str, column: str) -> list[tuple[int, list[tuple[int, int, int]], tuple[int, int] | None]]:
    """Per row group of the file at ``path``: ``(rows, pages, dictionary_page)`` of the leaf
    column ``column`` (a dotted path for nested fields). ``pages`` is the offset index as
    ``(offset, compressed_size, first_row_index)`` tuples — empty when the file has no
    page index — and ``dictionary_page`` is ``(offset, length)`` or ``None``. Reads metadata
    only. Raises :class:`pqsift.CorruptFileError` for a file that is not valid Parquet and
    ``KeyError`` for an unknown column."""

class ArrowFieldInfo(TypedDict):
    """A top-level field of the Arrow schema a file is read as."""

    name: str
    type: str  # as Arrow displays it: "Int64", "Timestamp(µs, \"UTC\")", ...
    nullable: bool

class ColumnInfo(TypedDict):
    """A leaf column of the Parquet schema."""

    path: str  # dotted path, "a.list.element" for nested fields
    physical_type: str  # "INT32", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY(16)", ...
    logical_type: str | None  # "STRING", "DECIMAL(9,2)", "TIMESTAMP(MICROS,utc=true)", ...
    converted_type: str | None  # legacy annotation: "UTF8", "DECIMAL", ...
    repetition: Literal["REQUIRED", "OPTIONAL", "REPEATED"]
    max_def_level: int
    max_rep_level: int
    arrow_type: str | None  # for top-level columns; None for nested leaves

class StatisticsInfo(TypedDict):
    """Column chunk statistics as the file stores them (no pruning rules applied)."""

    min: str | None  # rendered in the column's Arrow type; None when not written
    max: str | None
    min_exact: bool  # a value some row holds (not truncated)
    max_exact: bool
    null_count: int | None  # None when not written
    distinct_count: int | None
    deprecated_min_max: bool  # from the old signed-order min/max fields

class ColumnChunkInfo(TypedDict):
    """One leaf column in one row group."""

    column: str
    compression: str  # "SNAPPY", "ZSTD(ZstdLevel(1))", "UNCOMPRESSED", ...
    encodings: list[str]  # "PLAIN", "RLE_DICTIONARY", ...
    num_values: int
    compressed_bytes: int
    uncompressed_bytes: int
    dictionary_page: bool
    statistics: StatisticsInfo | None
    column_index: bool  # page index: per-page min/max
    offset_index: bool  # page index: page locations
    pages: int | None  # data pages, from the offset index
    bloom_filter: bool
    bloom_filter_bytes: int | None  # when the footer records the length

class RowGroupInfo(TypedDict):
    """One row group."""

    index: int
    num_rows: int
    compressed_bytes: int
    uncompressed_bytes: int
    columns: list[ColumnChunkInfo]  # in FileInfo["columns"] order

class FileInfo(TypedDict):
    """What :func:`inspect` returns."""

    path: str
    file_size: int
    num_rows: int
    version: int
    created_by: str | None
    key_value_metadata: list[tuple[str, str | None]]
    has_page_index: bool
    arrow_schema: list[ArrowFieldInfo]
    columns: list[ColumnInfo]
    row_groups: list[RowGroupInfo]

def inspect(path: str | os.PathLike[str], *, storage_options: dict[str, str] | None = None) -> FileInfo:
    """A summary of the metadata of the Parquet file at ``path`` (a local path, or a URL
    such as ``s3://bucket/key.parquet`` read with ``storage_options``) — schema (Parquet physical
    and logical types, Arrow types), row groups, and per column chunk its sizes, encodings,
    compression, statistics, page index and bloom filter — from the footer and page index
    alone (no column data is read). ``pqsift inspect`` prints it.

    >>> info = pqsift.inspect("alltypes_tiny_pages.parquet")   # doctest: +SKIP
    >>> info["num_rows"], info["columns"][0]["physical_type"]   # doctest: +SKIP
    (7300, 'INT32')
    >>> info["row_groups"][0]["columns"][0]["statistics"]["max"]   # doctest: +SKIP
    '7299'

    Raises :class:`pqsift.PqsiftIOError` for a file that cannot be read
    (:class:`pqsift.StorageError` from a store) and :class:`pqsift.CorruptFileError`
    (naming it) for one that is not valid Parquet."""

def parse_filter(
    text: str, path: str | None = None, *, session_time_zone: str = "UTC", case_sensitive: bool = False
) -> str:
    """Parses a filter in Spark SQL syntax and returns it in canonical form. With ``path``,
    also binds it to that Parquet file's schema, with Spark's type coercion. Raises
    :class:`pqsift.FilterError` naming the offending token or column. Reads no data."""

class Scan:
    """The native scan behind :class:`pqsift.scan.Scan`: files, filter, projection and
    options; plans from metadata alone. Use :func:`pqsift.scan` to build one.

    ``sources`` are files and directories; a directory's ``key=value`` subdirectories are
    partition columns (``partitioning``), typed as Spark infers them
    (``partition_type_inference``), below ``base_path`` when given. ``partition_values``
    gives the partition values of files planned elsewhere instead: ``(schema, rows)`` with
    ``schema`` as ``(name, Spark type name)`` pairs and one row of canonical text per file.
    A directory holding ``_delta_log/`` is a Delta table: its snapshot at ``version``, at
    ``timestamp`` (Spark timestamp text) or the latest. ``declared_schema`` (with
    ``partition_values``, and ``deletion_vector`` as ``(table root, descriptor JSON)`` for
    a single file) reads files of a Delta table planned elsewhere.

    ``plan()`` returns, per file, ``{"path", "note", "skipped", "row_groups"}`` (``skipped``:
    why the file was skipped on its partition values, its footer unread) where each row group is
    ``{"index", "rows", "decision" ("skip" | "scan" | "select"), "stage", "reason", "notes",
    "selected_rows", "selection" (RowSelection or None), "compressed_bytes", "read_bytes"}``.
    """

    def __init__(
        self,
        sources: list[str],
        columns: list[str] | None = None,
        filter: str | Callable[[_Schema], str | None] | None = None,  # noqa: A002 - the public name
        options: dict[str, Any] | None = None,
        *,
        order_by: list[tuple[str, bool, bool]] | None = None,
        top_n_limit: int | None = None,
        footer_threads: int | None = None,
        partition_values: tuple[list[tuple[str, str]], list[list[str | None]]] | None = None,
        declared_schema: str | None = None,
        deletion_vector: tuple[str, str] | None = None,
        table_pieces: list[bytes] | None = None,
        defer_manifests_above: int | None = None,
    ) -> None:
        """``options``: the planning options of :func:`pqsift.scan` (the names and defaults
        of :func:`scan_option_defaults`; a key left out takes its default, an unknown key is
        a ``TypeError`` naming the option it probably meant); ``schema`` as the text of
        :attr:`declared_schema`, ``storage_options`` as str values. ``order_by`` ((column,
        descending, nulls_first) keys) with ``top_n_limit``: TopN pruning of the row groups
        and pages that cannot hold one of the first rows. ``footer_threads``: the threads a
        footer of over 4 MiB is decoded on (the read's ``threads``; default as theirs).
        ``partition_values``,
        ``declared_schema`` and ``deletion_vector``: files planned elsewhere (a Spark task
        planning its own files), see above; ``table_pieces`` (:meth:`table_pieces`) does the
        same for files of any table, scanned as one, ``sources`` being those files in the
        same order, or (:meth:`manifest_pieces`, one alone) for a stripe of an Iceberg
        snapshot's data manifests, ``sources`` being :attr:`manifest_piece_source`. ``defer_manifests_above``: an Iceberg snapshot with
        more data manifests than this (left by their partition summaries) is not read past
        its manifest list — :attr:`deferred_manifests` lists them, and the scan has no file.
        ``filter`` is Spark SQL text, or a callable
        given the table schema (once the first footer or the declared schema is read) that
        returns it: how a pyarrow expression is written with the columns' types at hand."""
    @property
    def files(self) -> list[str]: ...
    def files_to_read(self) -> tuple[list[tuple[int, int]], dict[str, int]]:
        """The files left by partition values and a Delta log's statistics, as ``(position,
        size in bytes)``, and the pruning metrics so far — no footer read (but a Hive
        table's first file's, for the partition filter's types)."""
    @property
    def table_format(self) -> str:
        """``"files"``, ``"hive"``, ``"delta"`` or ``"iceberg"``."""
    @property
    def table_name(self) -> str:
        """The sources (or the Delta table's root), for messages."""
    @property
    def table_root(self) -> str | None:
        """A Delta table's root directory, or None."""
    @property
    def deletion_vectors(self) -> list[str | None]:
        """Per file, its Delta deletion vector descriptor as JSON, or None."""
    @property
    def table_version(self) -> int | None:
        """The Delta snapshot's version, or None."""
    @property
    def snapshot_id(self) -> int | None:
        """The Iceberg snapshot's id, or None."""
    @property
    def declared_schema(self) -> str | None:
        """The schema files are read into, as text for :func:`read`, or None while every file
        has the first file's columns: a Delta table's (the column mapping mode, a newline,
        the ``schemaString``), a merged one or the first file's (``arrow``, a newline, its
        Arrow IPC encoding in hexadecimal)."""
    def scan_schema(self) -> str | None:
        """:attr:`declared_schema`, else the first file's schema in the same text: what
        tasks planning their own files read every file into. None without files."""
    @property
    def partition_schema(self) -> list[tuple[str, str]]:
        """The partition columns as ``(name, Spark type name)`` pairs (empty without)."""
    @property
    def partition_values(self) -> list[list[str | None]]:
        """Per file, its partition values as canonical text (digits, float text, days or
        microseconds since the epoch for dates and timestamps, the string itself)."""
    @property
    def filter(self) -> str | None: ...
    @property
    def columns(self) -> list[str] | None: ...
    @property
    def session_time_zone(self) -> str: ...
    @property
    def case_sensitive(self) -> bool: ...
    @property
    def metadata_size_hint(self) -> int:
        """Bytes read from the end of each file in the first I/O for its metadata."""
    def plan(self, options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Per file a dict (``path``, ``note``, ``skipped``, ``row_groups``), each row group
        a tuple of :class:`pqsift.scan.RowGroupPlan`'s fields in their order; of the read
        ``options``, ``threads`` reads local footers at once."""
    def read(self, options: dict[str, Any] | None = None, first_batches_soon: bool = False) -> tuple[ScanStream, float]:
        """Plans the scan (the plan kept, as :meth:`plan` keeps it) and starts reading the
        plan's row groups and page selections with the read ``options`` (the names and
        defaults of :func:`read_option_defaults`; a key left out takes its default) over the
        footers planning read. Returns the stream and the seconds planning took.
        ``first_batches_soon``: the caller may stop after the first batches (a read on
        Spark's driver bounding its output), so a filtered read of local files starts with
        small windows of its large row groups."""
    def output_schema(self, options: dict[str, Any] | None = None) -> _Schema:
        """The schema a read with the read ``options`` outputs, from the first file's footer:
        nothing planned, no row read."""
    def count_rows(self, options: dict[str, Any] | None = None) -> int:
        """The rows the scan outputs (its limit aside): from the plan without a filter,
        else decoding the filter's columns only. Plans (the plan kept)."""
    def table_pieces(self, positions: list[int]) -> list[bytes]:
        """The files at ``positions``, one piece each, for tasks that plan them (lazy
        planning): what the table's metadata says of the file — the declared schema with
        its identity partition fills and equality-delete predicate, its partition values,
        the rows its deletes delete — for ``Scan(paths, ..., table_pieces=pieces)``, which
        scans the pieces of one scan together. No footer is read
        (but a plain table's first, whose schema every file is read into); no storage
        option travels."""
    @property
    def deferred_manifests(self) -> tuple[list[tuple[str, int | None]], int | None]:
        """The data manifests ``defer_manifests_above`` left unread — ``(recorded path, live
        files as the manifest list counts them, or None)`` — and the mean size in bytes of
        the data files of the first (read to learn it; None: it lists none)."""
    def manifest_pieces(self, stripes: list[tuple[list[int], int, int]]) -> list[bytes]:
        """Per ``(positions in deferred_manifests, stripe index, stripe count)``, a piece for
        a task that reads those manifests (and the snapshot's delete manifests) and keeps
        the live data files whose index among theirs is the index modulo the count — for
        ``Scan([manifest_piece_source], ..., table_pieces=[piece])``."""
    @property
    def manifest_piece_source(self) -> str | None:
        """The Iceberg metadata file read: the source of a manifest piece's scan."""
    def task_plans(self, pieces: list[tuple[int, list[int]]]) -> list[bytes]:
        """The pieces of the last plan (planning first when there is none) — ``(file
        position, row group indices)``, each row group one the plan reads — as task plans
        for :func:`read_task`, one per piece: the file's footer and page index, the row
        groups' selections, the projection, filter and declared schema; no storage option."""
    def explain(self) -> str: ...
    def metrics(self) -> dict[str, int]: ...

class _Schema:
    """An Arrow schema: ``pa.schema(it)``."""

    def __arrow_c_schema__(self) -> object: ...

class ScanStream:
    """A stream of record batches started by :meth:`Scan.read` or :func:`read`: iterate for objects exposing
    ``__arrow_c_array__`` (``pyarrow.record_batch(item)``), or hand the whole stream to an
    Arrow consumer with ``__arrow_c_stream__`` (once). Errors while reading raise pqsift
    exceptions when iterating."""

    def __iter__(self) -> ScanStream: ...
    def __next__(self) -> Any: ...
    def __arrow_c_schema__(self) -> object: ...
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    def progress(self) -> tuple[int, int] | None:
        """``(scanned, total)``: the rows (before the filter) of the row groups and windows
        whose output has been handed out, and of all to read; ``None`` once the stream was
        handed off. The output so far scaled by ``total / scanned`` estimates the whole."""
    def metrics(self) -> dict[str, Any]:
        """rows_out, rows_decoded, rows_decoded_by_column, bytes_read, cache_hits,
        cache_misses, time_predicates_s, time_projection_s, and the object store's
        requests, retries, bytes_requested, bytes_received, max_requests_in_flight,
        time_store_wait_s — so far."""

def metadata_cache_stats() -> tuple[int, int]:
    """``(hits, misses)`` of this process's metadata cache; a miss is a footer read."""

def metadata_cache_usage() -> tuple[int, int]:
    """``(bytes held, bound)`` of this process's metadata cache."""

def set_metadata_cache_bytes(capacity_bytes: int) -> int:
    """Bounds this process's metadata cache to ``capacity_bytes``, evicting down to it;
    returns the bound before."""

def clear_metadata_cache() -> None:
    """Empties this process's metadata cache: the next scan of each file reads its footer
    again, and of each Iceberg table its manifests (the counts of
    :func:`metadata_cache_stats` stay)."""

def scan_option_defaults() -> dict[str, Any]:
    """Every planning option of :func:`pqsift.scan` with its default: ``statistics``,
    ``bloom_filter``, ``page_index``, ``session_time_zone``, ``case_sensitive``,
    ``file_range``, ``row_groups``, ``metadata_size_hint``, ``footer_bytes_read_together``,
    ``partitioning``,
    ``partition_type_inference``, ``base_path``, ``version``, ``timestamp``,
    ``allowed_locations``, ``merge_schema``, ``schema``, ``match_field_ids``,
    ``ignore_missing_field_ids``, ``storage_options``."""

def check_read_options(options: dict[str, Any]) -> None:
    """Raises ``TypeError`` / ``ValueError`` naming the option for read ``options`` a read
    would refuse."""

def read_option_defaults() -> dict[str, Any]:
    """Every read option of :func:`pqsift.scan` with its default: ``pushdown_filters``,
    ``reorder_filters``, ``selection_policy``, ``selection_threshold``, ``batch_size``,
    ``threads``, ``limit``, ``cache_bytes``, ``spark_output``, ``coalesce_gap``,
    ``max_page_bytes``, ``decode_bytes``, ``string_view``, ``order_by`` (``(column,
    descending, nulls_first)`` triples), ``coerce_int96_timestamp_unit``, ``max_bytes_read``."""

def read_task(
    plan: bytes, options: dict[str, Any] | None = None, storage_options: dict[str, str] | None = None
) -> tuple[ScanStream, float]:
    """Starts reading a task plan (:meth:`Scan.task_plans`, made in another process) with
    the read ``options`` (see :func:`read_option_defaults`), its files' stores reached with
    ``storage_options``: nothing is planned and no footer read. Returns the stream and the
    seconds loading the plan took. A plan that is damaged or from another pqsift version
    raises :class:`pqsift.TaskPlanError`."""

def read(
    files: list[str],
    tasks: list[tuple[int, int, RowSelection | None]],
    *,
    columns: list[str] | None = None,
    filter: str | None = None,  # noqa: A002 - the public name
    session_time_zone: str = "UTC",
    case_sensitive: bool = False,
    metadata_size_hint: int = 524288,
    partition_schema: list[tuple[str, str]] | None = None,
    partition_values: list[list[str | None]] | None = None,
    declared_schema: str | None = None,
    table_name: str | None = None,
    storage_options: dict[str, str] | None = None,
    options: dict[str, Any] | None = None,
) -> ScanStream:
    """Starts reading ``tasks`` — ``(file index, row group, selection or None)``, in output
    order — of ``files`` (files planned elsewhere) with late materialization and the read
    ``options`` (see :func:`read_option_defaults`). With ``partition_schema``, each
    file's ``partition_values`` (one row of canonical text per file) are its partition
    columns: merged into the output as Spark merges them, and put in place of the columns
    in the filter. With ``declared_schema`` (:attr:`Scan.declared_schema` of a Delta table)
    the output columns are the declared ones, each file's columns mapped onto them (physical
    names, missing columns as nulls, widened types). ``files`` may be object store URLs,
    read with ``storage_options``. Errors raise pqsift exceptions
    naming the file: :class:`pqsift.CorruptFileError` for invalid data,
    :class:`pqsift.UnsupportedError` for features pqsift cannot read (encryption)."""
