"""The ``pqsift`` command line: ``pqsift inspect FILE`` and ``pqsift scan SOURCE``.

Installed as the ``pqsift`` script, and runnable as ``python -m pqsift``::

    pqsift inspect data/events.parquet            # schema, row groups, column chunks
    pqsift inspect data/events.parquet --json     # the same, machine-readable
    pqsift scan data/ --filter "amount > 900" --columns id,amount --limit 10
    pqsift scan data/ --filter "kind = 'refund'" --explain
    pqsift scan data/ --filter "kind = 'refund'" --output refunds.parquet --metrics

Exit status: 0 on success, 2 for a usage error (argparse), 1 for an error pqsift reports
(bad filter, unreadable or corrupt file, an output that cannot be written), printed as one
line ``pqsift: error: ...`` on stderr, without a traceback.

The work is done by :func:`pqsift.scan` and :func:`pqsift.inspect`; this module parses
arguments and formats results.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import decimal
import json
import math
import os
import struct
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import pyarrow as pa

import pqsift
from pqsift.errors import PqsiftError

if TYPE_CHECKING:
    from pqsift._core import ColumnChunkInfo, FileInfo, StatisticsInfo

__all__ = ["main"]

PROG = "pqsift"
#: Rows printed by ``pqsift scan`` without ``--output`` unless ``--max-rows`` says otherwise.
DEFAULT_MAX_ROWS = 20
#: Longest cell printed before it is cut with an ellipsis.
MAX_CELL_WIDTH = 40
#: What ``pqsift scan`` prints on stdout (``--format``), and writes with ``--output``.
PRINT_FORMATS = ("table", "json", "ndjson", "csv")
FILE_FORMATS = ("csv", "parquet", "json", "ndjson")
#: A scan running longer than this shows its progress on stderr (when that is a terminal).
PROGRESS_AFTER_SECONDS = 1.0


class CommandError(Exception):
    """An error to report as ``pqsift: error: ...`` with exit status 1."""


# ----- argument parsing ----------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def _column_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"empty column name in {text!r}")
    return names


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pqsift`` command."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="pqsift: a selective Parquet reader. Inspect a file's metadata, or scan files with a filter.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {pqsift.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    inspect = commands.add_parser(
        "inspect",
        help="show a Parquet file's schema, row groups, column chunks, statistics, page index and bloom filters",
        description="Show a Parquet file's metadata (footer and page index; no column data is read).",
    )
    inspect.add_argument(
        "file",
        metavar="PATH",
        help="a Parquet file (a path, or a URL: s3://bucket/key.parquet), or a directory or table: a line per file",
    )
    inspect.add_argument("--json", action="store_true", help="print the metadata summary as JSON")
    _add_storage_option(inspect)
    inspect.set_defaults(run=_run_inspect)

    scan = commands.add_parser(
        "scan",
        help="read rows matching a filter: print them, write CSV/Parquet, or explain the plan",
        description=(
            "Scan Parquet files with a filter (Spark SQL), reading only what survives pruning. "
            "Prints the rows as a table, or writes them with --output; --explain prints the plan instead."
        ),
    )
    scan.add_argument(
        "source", metavar="SOURCE", nargs="+", help="Parquet file(s), directories (Hive partitions) or a Delta table"
    )
    scan.add_argument(
        "-f", "--filter", metavar="TEXT", help="filter in Spark SQL, e.g. \"amount > 900 AND kind = 'refund'\""
    )
    scan.add_argument(
        "-c", "--columns", metavar="A,B", type=_column_list, help="comma-separated columns to keep (default: all)"
    )
    scan.add_argument("-n", "--limit", metavar="N", type=_non_negative_int, help="stop after N rows")
    scan.add_argument(
        "--explain",
        action="store_true",
        help="print the plan (per file and row group, the decision and why) and read nothing",
    )
    scan.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="write the rows to PATH (.csv, .parquet, .json or .ndjson) instead of printing them",
    )
    scan.add_argument(
        "--format",
        choices=sorted({*PRINT_FORMATS, *FILE_FORMATS}),
        help="printed: table (default), json (an array of objects), ndjson (an object a line) or csv, every row; "
        "with --output: the file's format (default: from its extension)",
    )
    scan.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"show progress on stderr (default: when stderr is a terminal and the scan runs over {PROGRESS_AFTER_SECONDS:g} s)",
    )
    scan.add_argument("--metrics", action="store_true", help="print pruning and reading metrics to stderr afterwards")
    scan.add_argument(
        "--max-rows",
        metavar="N",
        type=_non_negative_int,
        default=DEFAULT_MAX_ROWS,
        help=f"rows to print without --output (default {DEFAULT_MAX_ROWS}); the rest are counted",
    )
    options = scan.add_argument_group("scan options (see pqsift.scan)")
    options.add_argument(
        "--threads", metavar="N", type=_positive_int, help="row groups read in parallel (default: cores)"
    )
    options.add_argument("--batch-size", metavar="N", type=_positive_int, help="rows per record batch (default 8192)")
    options.add_argument(
        "--no-pushdown",
        dest="pushdown_filters",
        action="store_false",
        help="decode every needed column, then filter (no late materialization)",
    )
    options.add_argument(
        "--no-reorder", dest="reorder_filters", action="store_false", help="keep predicates in their initial order"
    )
    options.add_argument(
        "--no-statistics", dest="statistics", action="store_false", help="do not prune row groups by statistics"
    )
    options.add_argument(
        "--no-bloom-filter", dest="bloom_filter", action="store_false", help="do not probe bloom filters"
    )
    options.add_argument(
        "--no-page-index", dest="page_index", action="store_false", help="do not prune pages by the page index"
    )
    options.add_argument(
        "--selection-policy", choices=("auto", "selectors", "mask"), help="row selection representation (default auto)"
    )
    options.add_argument(
        "--selection-threshold",
        metavar="N",
        type=_positive_int,
        help="auto policy: mask below this average run length (default 32)",
    )
    options.add_argument(
        "--cache-bytes", metavar="N", type=_non_negative_int, help="shared decoded-column cache size (default 64 MiB)"
    )
    options.add_argument(
        "--time-zone",
        dest="session_time_zone",
        metavar="TZ",
        help="session time zone for TIMESTAMP literals (default UTC)",
    )
    options.add_argument(
        "--case-sensitive", action="store_true", default=None, help="resolve column names case-sensitively"
    )
    options.add_argument(
        "--version-as-of", dest="version", metavar="N", type=_non_negative_int, help="Delta table: read version N"
    )
    options.add_argument(
        "--snapshot-id", dest="snapshot_id", metavar="ID", type=int, help="Iceberg table: read snapshot ID"
    )
    options.add_argument(
        "--timestamp-as-of",
        dest="timestamp",
        metavar="TS",
        help="Delta or Iceberg table: read the snapshot current at TS (in --time-zone)",
    )
    _add_storage_option(options)
    scan.set_defaults(run=_run_scan)
    return parser


def _storage_option(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def _add_storage_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument(
        "--storage-option",
        dest="storage_options",
        metavar="KEY=VALUE",
        type=_storage_option,
        action="append",
        help="object store option for s3:// gs:// az:// URLs (repeatable), e.g. aws_endpoint=http://127.0.0.1:9000; "
        "credentials also come from the usual environment variables",
    )


def _storage_options(args: argparse.Namespace) -> dict[str, str] | None:
    return dict(args.storage_options) if args.storage_options else None


# Command-line option → pqsift.scan keyword, for the options passed only when given.
_SCAN_OPTIONS = (
    ("threads", "threads"),
    ("batch_size", "batch_size"),
    ("pushdown_filters", "pushdown_filters"),
    ("reorder_filters", "reorder_filters"),
    ("statistics", "statistics"),
    ("bloom_filter", "bloom_filter"),
    ("page_index", "page_index"),
    ("selection_policy", "selection_policy"),
    ("selection_threshold", "selection_threshold"),
    ("cache_bytes", "cache_bytes"),
    ("session_time_zone", "session_time_zone"),
    ("case_sensitive", "case_sensitive"),
    ("version", "version"),
    ("snapshot_id", "snapshot_id"),
    ("timestamp", "timestamp"),
)
_SWITCHES_ON_BY_DEFAULT = {"pushdown_filters", "reorder_filters", "statistics", "bloom_filter", "page_index"}


def scan_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`pqsift.scan` that the command line sets."""
    options: dict[str, Any] = {}
    for attribute, keyword in _SCAN_OPTIONS:
        value = getattr(args, attribute)
        if attribute in _SWITCHES_ON_BY_DEFAULT:
            if value is False:
                options[keyword] = False
        elif value is not None:
            options[keyword] = value
    if args.limit is not None:
        options["limit"] = args.limit
    if args.storage_options:
        options["storage_options"] = _storage_options(args)
    return options


# ----- pqsift scan ---------------------------------------------------------------------


def _output_format(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    if args.output is None:
        if args.format is not None and args.format not in PRINT_FORMATS:
            parser.error(f"--format {args.format} is written to a file: give --output")
        return str(args.format or "table")
    if args.format is not None:
        if args.format not in FILE_FORMATS:
            parser.error(f"--format {args.format} is printed, not written: leave out --output")
        return str(args.format)
    extension: str = os.path.splitext(args.output)[1].lower().lstrip(".")
    extension = {"pq": "parquet", "jsonl": "ndjson"}.get(extension, extension)
    if extension in FILE_FORMATS:
        return extension
    parser.error(
        f"cannot tell the output format from {args.output!r}: use a .csv, .parquet, .json or .ndjson name, or --format"
    )
    return ""  # unreachable: parser.error exits


def _run_scan(args: argparse.Namespace, parser: argparse.ArgumentParser, out: TextIO, err: TextIO) -> None:
    output_format = _output_format(args, parser)
    if args.explain and args.output is not None:
        parser.error("--explain reads nothing: it cannot be combined with --output")
    source = args.source[0] if len(args.source) == 1 else args.source
    scan = pqsift.scan(source, columns=args.columns, filter=args.filter, **scan_options(args))
    show = err.isatty() if args.progress is None else args.progress
    progress = _Progress(err if show else None, scan)
    if args.explain:
        out.write(scan.explain().rstrip("\n") + "\n")
    elif args.output is not None:
        rows = _write(scan, args.output, output_format, progress)
        print(f"wrote {rows:,} row{'s' if rows != 1 else ''} to {args.output} ({output_format})", file=err)
    elif output_format == "table":
        _print_rows(scan, args.max_rows, out, progress)
    else:
        _print_all(scan, output_format, out, progress)
    if args.metrics:
        _print_metrics(scan.metrics, err)


class _Progress:
    """A line on ``err`` (None: silent) saying how far a scan has read — rows out, bytes
    read, seconds — once it has run :data:`PROGRESS_AFTER_SECONDS`, redrawn at most five
    times a second, cleared at the end."""

    def __init__(self, err: TextIO | None, scan: pqsift.Scan) -> None:
        self.err, self.scan = err, scan
        self.started = time.monotonic()
        self.drawn = 0.0
        self.shown = False

    def update(self, rows: int) -> None:
        if self.err is None:
            return
        now = time.monotonic()
        if now - self.started < PROGRESS_AFTER_SECONDS or now - self.drawn < 0.2:
            return
        self.drawn = now
        read = self.scan._last_stream.metrics() if self.scan._last_stream is not None else {}
        line = f"{rows:,} rows, {_size(int(read.get('bytes_read', 0)))} read, {now - self.started:.1f} s"
        self.err.write("\r" + line.ljust(60))
        self.err.flush()
        self.shown = True

    def done(self) -> None:
        if self.err is not None and self.shown:
            self.err.write("\r" + " " * 60 + "\r")
            self.err.flush()


def _batches(reader: pa.RecordBatchReader) -> Iterator[pa.RecordBatch]:
    """The reader's batches; an error while reading (it crosses the Arrow stream interface
    as a pyarrow exception, with pqsift's message) becomes a :class:`CommandError`."""
    batches = iter(reader)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except pa.ArrowException as error:
            message = str(error)
            # pyarrow frames errors coming through the C stream interface.
            raise CommandError(message.removeprefix("External error: ")) from error
        yield batch


def _write(scan: pqsift.Scan, path: str, output_format: str, progress: _Progress) -> int:
    """Streams the scan into ``path``, batch by batch (never the whole result in memory);
    returns the rows written."""
    if output_format in ("json", "ndjson"):
        try:
            with open(path, "w", encoding="utf-8") as file:
                return _print_all(scan, output_format, file, progress)
        except OSError as error:
            raise CommandError(f"cannot write {path} as {output_format.upper()}: {error}") from error
    import pyarrow.csv as csv
    import pyarrow.parquet as pq

    reader = scan.to_reader()
    rows = 0
    try:
        writer: csv.CSVWriter | pq.ParquetWriter = (
            csv.CSVWriter(path, reader.schema) if output_format == "csv" else pq.ParquetWriter(path, reader.schema)
        )
    except (pa.ArrowException, OSError) as error:
        raise CommandError(f"cannot write {path} as {output_format.upper()}: {error}") from error
    with writer:
        for batch in _batches(reader):
            try:
                writer.write_batch(batch)
            except (pa.ArrowException, OSError) as error:
                raise CommandError(f"cannot write {path} as {output_format.upper()}: {error}") from error
            rows += batch.num_rows
            progress.update(rows)
    progress.done()
    return rows


def _print_all(scan: pqsift.Scan, output_format: str, out: TextIO, progress: _Progress) -> int:
    """Every row to ``out`` as JSON (an array of objects), NDJSON (an object a line) or CSV,
    batch by batch; returns the rows."""
    reader = scan.to_reader()
    rows = 0
    if output_format == "csv":
        import pyarrow.csv as csv

        sink = pa.BufferOutputStream()
        writer = csv.CSVWriter(sink, reader.schema)
        for batch in _batches(reader):
            writer.write_batch(batch)
            out.write(sink.getvalue().to_pybytes().decode("utf-8"))
            sink = pa.BufferOutputStream()
            writer = csv.CSVWriter(sink, reader.schema, write_options=csv.WriteOptions(include_header=False))
            rows += batch.num_rows
            progress.update(rows)
        if rows == 0:
            out.write(sink.getvalue().to_pybytes().decode("utf-8"))
        progress.done()
        return rows
    if output_format == "json":
        out.write("[")
    for batch in _batches(reader):
        for row in batch.to_pylist():
            text = json_text(row)
            if output_format == "json":
                out.write(("\n  " if rows == 0 else ",\n  ") + text)
            else:
                out.write(text + "\n")
            rows += 1
        progress.update(rows)
    if output_format == "json":
        out.write("\n]\n" if rows else "]\n")
    progress.done()
    return rows


def json_text(value: object) -> str:
    """A value of a row as JSON text, as Spark's ``to_json`` writes it: NaN and the
    infinities as strings, decimals as exact numbers (``json.dumps`` would round them
    through a float), binary as base64, dates and timestamps in ISO 8601, structs as
    objects, maps as objects (string keys) or lists of pairs.

    >>> json_text(float("nan")), json_text(b"hi"), json_text(datetime.date(2026, 1, 2))
    ('"NaN"', '"aGk="', '"2026-01-02"')
    >>> json_text({"price": decimal.Decimal("12345678901234567890.12"), "tags": ["a", None]})
    '{"price": 12345678901234567890.12, "tags": ["a", null]}'
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return '"NaN"'
        if math.isinf(value):
            return '"Infinity"' if value > 0 else '"-Infinity"'
        return repr(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (bytes, bytearray)):
        return json.dumps(base64.b64encode(bytes(value)).decode("ascii"))
    if isinstance(value, (datetime.date, datetime.time)):
        return json.dumps(value.isoformat())
    if isinstance(value, datetime.timedelta):
        return repr(value.total_seconds())
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {json_text(v)}" for k, v in value.items()) + "}"
        )
    if isinstance(value, list):
        if value and all(isinstance(item, tuple) and len(item) == 2 for item in value):
            if all(isinstance(key, str) for key, _ in value):
                return json_text(dict(value))
            return "[" + ", ".join(f"[{json_text(k)}, {json_text(v)}]" for k, v in value) + "]"
        return "[" + ", ".join(json_text(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def _print_rows(scan: pqsift.Scan, max_rows: int, out: TextIO, progress: _Progress) -> None:
    """Prints the first ``max_rows`` rows as an aligned table and counts the rest (the scan
    is read to the end, keeping only the printed rows in memory)."""
    reader = scan.to_reader()
    head: list[pa.RecordBatch] = []
    kept = total = 0
    for batch in _batches(reader):
        total += batch.num_rows
        if kept < max_rows:
            part = batch.slice(0, max_rows - kept)
            head.append(part)
            kept += part.num_rows
        progress.update(total)
    progress.done()
    table = pa.Table.from_batches(head, schema=reader.schema)
    out.write(format_table(table))
    shown = f"{kept:,} of {total:,} rows" if kept < total else f"{total:,} row{'s' if total != 1 else ''}"
    out.write(f"({shown})\n")


def format_table(table: pa.Table) -> str:
    """``table`` as text: a header, a rule, one line per row, columns aligned (numbers to
    the right), nulls as ``null``, cells cut at :data:`MAX_CELL_WIDTH` characters.

    >>> print(format_table(pa.table({"id": [1, 22], "name": ["a", None]})), end="")
    id  name
    --  ----
     1  a
    22  null
    """
    names = table.column_names
    columns = [[_cell(value, column.type) for value in column.to_pylist()] for column in table.columns]
    numeric = [
        pa.types.is_integer(f.type) or pa.types.is_floating(f.type) or pa.types.is_decimal(f.type) for f in table.schema
    ]
    widths = [max([len(name)] + [len(c) for c in cells]) for name, cells in zip(names, columns, strict=True)]

    def line(cells: Iterable[str], right: Sequence[bool]) -> str:
        parts = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)]
        return "  ".join(parts).rstrip() + "\n"

    text = line(names, [False] * len(names)) + line(["-" * w for w in widths], [False] * len(names))
    for row in range(table.num_rows):
        text += line([cells[row] for cells in columns], numeric)
    return text


def _cell(value: object, data_type: pa.DataType | None = None) -> str:
    """A value as Spark's ``show`` prints it: ``null``; floats as Java prints them
    (``1.1`` for a float32 1.1, ``1.0E10``, ``NaN``, ``Infinity``); binary that is UTF-8
    text (strings Impala and Hive write without a UTF8 annotation) as that text, other
    binary as Spark's ``[68 69]``."""
    if value is None:
        text = "null"
    elif isinstance(value, float):
        text = java_float_text(value, single=data_type is not None and pa.types.is_float32(data_type))
    elif isinstance(value, (bytes, bytearray)):
        try:
            text = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        if not text.isprintable() or (not text and value):
            text = "[" + " ".join(f"{byte:02X}" for byte in value) + "]"
    else:
        text = str(value)
    text = text.replace("\n", "\\n")
    return text if len(text) <= MAX_CELL_WIDTH else text[: MAX_CELL_WIDTH - 1] + "…"


def java_float_text(value: float, *, single: bool = False) -> str:
    """``value`` as Java's ``Double.toString`` (``Float.toString`` with ``single``) writes
    it, which Spark's ``show`` uses: the shortest digits that read back to the same value
    (of a float32 with ``single``), plain from 0.001 up to 10 million, else as ``d.dddE±n``.

    >>> [java_float_text(v) for v in (1.0, 0.1, 1e7, 1.5e-4, -0.0, float("inf"))]
    ['1.0', '0.1', '1.0E7', '1.5E-4', '-0.0', 'Infinity']
    >>> java_float_text(1.100000023841858, single=True)
    '1.1'
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    digits = repr(value)
    if single:
        as_single = struct.unpack("f", struct.pack("f", value))[0]
        for precision in range(1, 10):
            candidate = f"{as_single:.{precision}g}"
            if struct.unpack("f", struct.pack("f", float(candidate)))[0] == as_single:
                digits = repr(float(candidate))
                break
    number = decimal.Decimal(digits)
    sign = "-" if number.is_signed() else ""
    magnitude = abs(number)
    if magnitude == 0:
        return sign + "0.0"
    if decimal.Decimal("0.001") <= magnitude < decimal.Decimal(10_000_000):
        text = format(magnitude, "f")
        return sign + (text if "." in text else text + ".0")
    _, digits_tuple, exponent = magnitude.normalize().as_tuple()
    significand = "".join(str(digit) for digit in digits_tuple)
    power = len(digits_tuple) + int(exponent) - 1
    return f"{sign}{significand[0]}.{significand[1:] or '0'}E{power}"


def _print_metrics(metrics: dict[str, Any], err: TextIO) -> None:
    print("metrics:", file=err)
    width = max(len(name) for name in metrics)
    for name, value in metrics.items():
        if isinstance(value, float):
            shown = f"{value:.6f}"
        elif isinstance(value, int) and not isinstance(value, bool):
            shown = f"{value:,}"
        else:
            shown = str(value)
        print(f"  {name.ljust(width)}  {shown}", file=err)


# ----- pqsift inspect ------------------------------------------------------------------


def _run_inspect(args: argparse.Namespace, parser: argparse.ArgumentParser, out: TextIO, err: TextIO) -> None:
    storage = _storage_options(args)
    if os.path.isdir(args.file) or (_is_url(args.file) and args.file.endswith("/")):
        _inspect_directory(args.file, storage, args.json, out)
        return
    info = pqsift.inspect(args.file, storage_options=storage)
    if args.json:
        out.write(json.dumps(info, indent=2) + "\n")
    else:
        out.write(format_inspect(info))


def _is_url(text: str) -> bool:
    return "://" in text


def _inspect_directory(source: str, storage: dict[str, str] | None, as_json: bool, out: TextIO) -> None:
    """One line per Parquet file of a directory, a table's files as a scan finds them
    (Hive partitions, a Delta table's active files), and the totals."""
    files = pqsift.scan(source, storage_options=storage).files
    summaries: list[dict[str, Any]] = []
    for path in files:
        info = pqsift.inspect(path, storage_options=storage)
        summaries.append(
            {
                "path": path,
                "file_size": info["file_size"],
                "num_rows": info["num_rows"],
                "row_groups": len(info["row_groups"]),
                "columns": len(info["columns"]),
                "page_index": info["has_page_index"],
                "created_by": info["created_by"],
            }
        )
    total = {
        "files": len(summaries),
        "file_size": sum(s["file_size"] for s in summaries),
        "num_rows": sum(s["num_rows"] for s in summaries),
        "row_groups": sum(s["row_groups"] for s in summaries),
    }
    if as_json:
        out.write(json.dumps({"source": source, "files": summaries, "total": total}, indent=2) + "\n")
        return
    out.write(
        f"{source}: {total['files']:,} file{'s' if total['files'] != 1 else ''}, {total['num_rows']:,} rows in "
        f"{total['row_groups']:,} row groups, {_size(total['file_size'])}\n"
    )
    out.write(
        _plain_table(
            ["file", "size", "rows", "row groups", "columns", "page index", "created by"],
            [
                [
                    os.path.relpath(s["path"], source) if not _is_url(source) else s["path"],
                    _size(s["file_size"]),
                    f"{s['num_rows']:,}",
                    str(s["row_groups"]),
                    str(s["columns"]),
                    "yes" if s["page_index"] else "no",
                    _short(s["created_by"], 40),
                ]
                for s in summaries
            ],
        )
    )


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{n} B"  # unreachable


def _plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> str:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return indent + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip() + "\n"

    return line(headers) + line(["-" * w for w in widths]) + "".join(line(r) for r in rows)


def _short(text: str | None, width: int = 24) -> str:
    if text is None:
        return "-"
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"


def _exactness(stats: StatisticsInfo) -> str:
    flags = [name for name, exact in (("min", stats["min_exact"]), ("max", stats["max_exact"])) if exact]
    return ",".join(flags) if flags else "no"


def _page_index(chunk: ColumnChunkInfo) -> str:
    kinds = [
        name for present, name in ((chunk["column_index"], "column"), (chunk["offset_index"], "offset")) if present
    ]
    return "+".join(kinds) if kinds else "-"


def format_inspect(info: FileInfo) -> str:
    """The text of ``pqsift inspect`` for a summary from :func:`pqsift.inspect`."""
    row_groups = info["row_groups"]
    text = (
        f"file        {info['path']}\n"
        f"size        {_size(info['file_size'])} ({info['file_size']:,} bytes)\n"
        f"rows        {info['num_rows']:,} in {len(row_groups)} row group{'s' if len(row_groups) != 1 else ''}\n"
        f"created by  {info['created_by'] or '-'}\n"
        f"version     {info['version']}\n"
        f"page index  {'yes' if info['has_page_index'] else 'no'}\n"
    )
    keys = [key for key, _ in info["key_value_metadata"]]
    if keys:
        text += f"metadata    {', '.join(keys)}\n"

    text += f"\nschema ({len(info['columns'])} leaf column{'s' if len(info['columns']) != 1 else ''})\n"
    text += _plain_table(
        ["column", "physical", "logical", "converted", "repetition", "arrow"],
        [
            [
                c["path"],
                c["physical_type"],
                c["logical_type"] or "-",
                c["converted_type"] or "-",
                c["repetition"],
                c["arrow_type"] or "-",
            ]
            for c in info["columns"]
        ],
    )
    nested = [f for f in info["arrow_schema"] if not any(c["path"] == f["name"] for c in info["columns"])]
    if nested:
        text += "  nested Arrow fields: " + "; ".join(f"{f['name']}: {f['type']}" for f in nested) + "\n"

    # Per column, over all row groups.
    totals: dict[str, list[int]] = {c["path"]: [0, 0] for c in info["columns"]}
    for rg in row_groups:
        for chunk in rg["columns"]:
            entry = totals.setdefault(chunk["column"], [0, 0])
            entry[0] += chunk["compressed_bytes"]
            entry[1] += chunk["uncompressed_bytes"]
    all_compressed = sum(c for c, _ in totals.values()) or 1
    text += "\ncolumn sizes (all row groups)\n"
    text += _plain_table(
        ["column", "compressed", "uncompressed", "share"],
        [[name, _size(c), _size(u), f"{100 * c / all_compressed:.1f}%"] for name, (c, u) in totals.items()],
    )

    for rg in row_groups:
        text += (
            f"\nrow group {rg['index']}: {rg['num_rows']:,} rows, {_size(rg['compressed_bytes'])} compressed, "
            f"{_size(rg['uncompressed_bytes'])} uncompressed\n"
        )
        rows = []
        for chunk in rg["columns"]:
            stats = chunk["statistics"]
            bloom = "-"
            if chunk["bloom_filter"]:
                size = chunk["bloom_filter_bytes"]
                bloom = "yes" if size is None else f"yes ({_size(size)})"
            rows.append(
                [
                    chunk["column"],
                    chunk["compression"],
                    ",".join(chunk["encodings"]),
                    _size(chunk["compressed_bytes"]),
                    _size(chunk["uncompressed_bytes"]),
                    f"{chunk['num_values']:,}",
                    "-" if stats is None or stats["null_count"] is None else f"{stats['null_count']:,}",
                    "-" if stats is None else _short(stats["min"]),
                    "-" if stats is None else _short(stats["max"]),
                    "-" if stats is None else _exactness(stats),
                    _page_index(chunk),
                    "-" if chunk["pages"] is None else str(chunk["pages"]),
                    bloom,
                ]
            )
        text += _plain_table(
            [
                "column",
                "codec",
                "encodings",
                "compressed",
                "uncompressed",
                "values",
                "nulls",
                "min",
                "max",
                "exact",
                "page index",
                "pages",
                "bloom filter",
            ],
            rows,
        )
    return text


# ----- entry point ---------------------------------------------------------------------


def _one_line(error: BaseException) -> str:
    message = " ".join(str(error).split("\n")).strip()
    return message or type(error).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``pqsift`` command with ``argv`` (default: ``sys.argv[1:]``) and returns the
    exit status; argparse exits with status 2 (``SystemExit``) on a usage error."""
    parser = build_parser()
    args = parser.parse_args(argv)
    out, err = sys.stdout, sys.stderr
    try:
        args.run(args, parser, out, err)
        out.flush()
    except (PqsiftError, CommandError) as error:
        print(f"{PROG}: error: {_one_line(error)}", file=err)
        return 1
    except BrokenPipeError:
        # `pqsift scan ... | head`: the reader went away; not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=err)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
