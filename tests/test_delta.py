"""Delta Lake tables through ``pqsift.scan``: the latest snapshot, a version or a timestamp,
deletion vectors applied, partition values and column mapping resolved, and the documented
failures. Every oracle is independent of pqsift:

- golden tables (written by Spark + Delta, ``../shared/delta-testing/golden``): their
  Spark-written ``expected/`` rows, or for the structural ones what their ``_delta_log``
  says, read here by hand;
- delta-kernel-rs's tables (``../shared/delta-testing/tables``) and tables written here with
  ``deltalake.write_deltalake``: delta-rs's own reader, ``QueryBuilder`` SQL over a
  ``DeltaTable`` (it applies deletion vectors and column mapping; its
  ``to_pyarrow_table`` does not, so it is never used);
- the column names and types: the table's Delta schema mapped by the contract
  (long→int64 … timestamp→timestamp[us, UTC], timestamp_ntz→timestamp[us], void→null).
"""

from __future__ import annotations

import collections
import datetime
import json
import math
import os
import shutil
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import pqsift

deltalake = pytest.importorskip("deltalake")
from deltalake import DeltaTable, QueryBuilder, write_deltalake  # noqa: E402

TESTING = (Path(__file__).resolve().parents[1] / ".." / "shared" / "delta-testing").resolve()
GOLDEN_ROOT = TESTING / "golden"
KERNEL_ROOT = TESTING / "tables"
UTC = datetime.UTC


# --- the test data ----------------------------------------------------------------------


@dataclass(frozen=True)
class Golden:
    """One golden table: ``name`` is its folder (``hive/SUB`` for the tables of ``hive/``)."""

    name: str
    path: Path
    expected: Path | None


def _golden_tables() -> list[Golden]:
    """Every folder of ``golden/``, found at collection time; ``hive/`` holds one table per
    subfolder with a ``_delta_log``; a folder without any log (``no-delta-log-folder``) is
    a table too: one that must not read as Delta."""
    if not GOLDEN_ROOT.is_dir():
        return []
    tables = []
    for folder in sorted(p for p in GOLDEN_ROOT.iterdir() if p.is_dir()):
        delta = folder / "delta"
        expected = folder / "expected" if (folder / "expected").is_dir() else None
        subtables = sorted(p for p in delta.iterdir() if (p / "_delta_log").is_dir()) if delta.is_dir() else []
        if not (delta / "_delta_log").is_dir() and subtables:
            tables += [Golden(f"{folder.name}/{sub.name}", sub, None) for sub in subtables]
        else:
            tables.append(Golden(folder.name, delta, expected))
    return tables


def _kernel_tables() -> list[str]:
    """Every folder of ``tables/`` (at any depth) holding a ``_delta_log``."""
    found: list[str] = []
    stack = [KERNEL_ROOT] if KERNEL_ROOT.is_dir() else []
    while stack:
        folder = stack.pop()
        if (folder / "_delta_log").is_dir():
            found.append(folder.relative_to(KERNEL_ROOT).as_posix())
            continue
        stack += [p for p in folder.iterdir() if p.is_dir() and "=" not in p.name and not p.name.startswith(("_", "."))]
    return sorted(found)


GOLDEN = _golden_tables()
GOLDEN_BY_NAME = {g.name: g for g in GOLDEN}
KERNEL = _kernel_tables()


def test_the_delta_test_data_is_there() -> None:
    """The parametrized tests below are built from these folders: without them they would
    silently test nothing."""
    assert len(GOLDEN) >= 85, f"{len(GOLDEN)} golden tables under {GOLDEN_ROOT}"
    assert sum(g.expected is not None for g in GOLDEN) >= 60
    assert len(KERNEL) >= 35, f"{len(KERNEL)} kernel tables under {KERNEL_ROOT}"


# --- oracles ----------------------------------------------------------------------------


def _oracle(table: Path, sql: str = "select * from t", version: int | None = None) -> pa.Table:
    """delta-rs's reader: DataFusion SQL over the table (``t``) at ``version``."""
    reader = QueryBuilder().register("t", DeltaTable(str(table), version=version)).execute(sql)
    return pa.table(reader)


def _delta_fields(table: Path, version: int | None = None) -> list[dict[str, Any]]:
    """The fields of the table's Delta schema (its ``schemaString``), in order."""
    fields: list[dict[str, Any]] = json.loads(DeltaTable(str(table), version=version).schema().to_json())["fields"]
    return fields


def _read_expected(directory: Path) -> pa.Table:
    """Spark's ``expected/`` rows. Its files are read one by one (flat today; any Hive
    ``k=v`` subfolder would be a layout this reads wrongly, so it is refused), INT96
    timestamps as microseconds (nanoseconds overflow before 1677 and after 2262)."""
    files = sorted(p for p in directory.rglob("*.parquet") if not p.name.startswith((".", "_")))
    assert files and all(p.parent == directory for p in files), f"unexpected layout of {directory}"
    tables = [pq.read_table(p, partitioning=None, coerce_int96_timestamp_unit="us") for p in files]
    return pa.concat_tables(tables, promote_options="permissive")


# --- types ------------------------------------------------------------------------------

_PRIMITIVES = {
    "long": pa.int64(),
    "integer": pa.int32(),
    "short": pa.int16(),
    "byte": pa.int8(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "binary": pa.binary(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
    "void": pa.null(),
}


def _arrow_type(delta_type: Any) -> pa.DataType:
    """The Arrow type the contract gives a Delta type (a schemaString type, parsed)."""
    if isinstance(delta_type, str):
        if delta_type.startswith("decimal("):
            precision, scale = delta_type[len("decimal(") : -1].split(",")
            return pa.decimal128(int(precision), int(scale))
        return _PRIMITIVES[delta_type]
    kind = delta_type["type"]
    if kind == "array":
        return pa.list_(_arrow_type(delta_type["elementType"]))
    if kind == "map":
        return pa.map_(_arrow_type(delta_type["keyType"]), _arrow_type(delta_type["valueType"]))
    if kind == "struct":
        return pa.struct([pa.field(f["name"], _arrow_type(f["type"])) for f in delta_type["fields"]])
    raise AssertionError(f"unknown Delta type {delta_type!r}")


def _shape(t: pa.DataType) -> Any:
    """A type without the names of list and map children and without nullability (neither
    is in the contract); everything else exact (``list`` is not ``large_list``, ``string``
    not ``string_view``)."""
    if pa.types.is_list(t):
        return ("list", _shape(t.value_type))
    if pa.types.is_map(t):
        return ("map", _shape(t.key_type), _shape(t.item_type))
    if pa.types.is_struct(t):
        return ("struct", tuple((f.name, _shape(f.type)) for f in t))
    return str(t)


def _assert_logical_schema(table: pa.Table, fields: list[dict[str, Any]], context: str) -> None:
    """Column names in the Delta schema's order (partition columns where it puts them),
    each with the contract's type."""
    assert table.column_names == [f["name"] for f in fields], context
    for f in fields:
        got, want = table.schema.field(f["name"]).type, _arrow_type(f["type"])
        assert _shape(got) == _shape(want), f"{context}: column {f['name']} is {got}, the contract says {want}"


# --- comparing rows ---------------------------------------------------------------------


def _comparable_type(t: pa.DataType, timestamps: pa.DataType) -> pa.DataType:
    """The type values are compared in. Every timestamp (any unit, with or without a zone:
    Spark's expected files may hold INT96 or zone-less timestamps, delta-rs gives
    ``timestamp[us, UTC]``) becomes ``timestamps``: first ``timestamp[us, UTC]`` (a safe
    cast, so sub-microsecond values would fail rather than round), then ``int64`` µs since
    the epoch, the instant itself, safe from Python's datetime range. String, binary and
    list encodings (view, large, dictionary) become the plain ones. The types themselves
    are checked by ``_assert_logical_schema``, not here."""
    if pa.types.is_timestamp(t):
        return timestamps
    if pa.types.is_dictionary(t):
        return _comparable_type(t.value_type, timestamps)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_map(t):
        return pa.map_(_comparable_type(t.key_type, timestamps), _comparable_type(t.item_type, timestamps))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        return pa.list_(_comparable_type(t.value_type, timestamps))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _comparable_type(f.type, timestamps)) for f in t])
    return t


def _comparable(table: pa.Table, columns: list[str]) -> pa.Table:
    table = table.select(columns)
    for timestamps in (pa.timestamp("us", tz="UTC"), pa.int64()):
        table = table.cast(pa.schema([pa.field(f.name, _comparable_type(f.type, timestamps)) for f in table.schema]))
    return table


def _value(v: Any, t: pa.DataType) -> Any:
    """A hashable value compared as Spark compares: NaN equals NaN, -0.0 equals 0.0;
    decimals numerically (``Decimal`` equality; same scale on both sides anyway); a map
    as its set of entries (a map's order is not part of its value); a struct as its
    (name, value) pairs in order."""
    if v is None:
        return None
    if pa.types.is_floating(t):
        return "NaN" if math.isnan(v) else v + 0.0
    if pa.types.is_map(t):
        entries = [(_value(k, t.key_type), _value(x, t.item_type)) for k, x in v]
        return ("map", tuple(sorted(entries, key=repr)))
    if pa.types.is_list(t):
        return tuple(_value(x, t.value_type) for x in v)
    if pa.types.is_struct(t):
        return tuple((f.name, _value(v[f.name], f.type)) for f in t)
    return v


def _row_counter(table: pa.Table) -> collections.Counter[tuple[Any, ...]]:
    types = [f.type for f in table.schema]
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return collections.Counter(tuple(_value(v, t) for v, t in zip(row, types, strict=True)) for row in zip(*columns, strict=True))


def _same_when_sorted(a: pa.Table, b: pa.Table) -> bool:
    """Multiset equality of flat tables in Arrow, for the large ones (a million rows of
    decimals take 20 s through Python): both sorted on every column, then equal column by
    column, null with null and NaN with NaN."""
    keys = [(name, "ascending") for name in a.column_names]
    a, b = a.sort_by(keys), b.sort_by(keys)
    for name in a.column_names:
        x, y = a.column(name), b.column(name)
        same = pc.or_(pc.fill_null(pc.equal(x, y), False), pc.and_(pc.is_null(x), pc.is_null(y)))
        if pa.types.is_floating(x.type):
            same = pc.or_(same, pc.fill_null(pc.and_(pc.is_nan(x), pc.is_nan(y)), False))
        if not pc.all(same).as_py():
            return False
    return True


def _assert_same_rows(actual: pa.Table, expected: pa.Table, context: str) -> None:
    """``actual`` holds the rows of ``expected`` as a multiset (order is not defined),
    columns matched by name."""
    assert sorted(actual.column_names) == sorted(expected.column_names), (context, actual.column_names, expected.column_names)
    columns = expected.column_names
    mine, theirs = _comparable(actual, columns), _comparable(expected, columns)
    flat = not any(pa.types.is_nested(f.type) or pa.types.is_null(f.type) for f in theirs.schema)
    if flat and mine.num_rows == theirs.num_rows > 10_000 and _same_when_sorted(mine, theirs):
        return
    got, want = _row_counter(mine), _row_counter(theirs)
    if got != want:
        missing, extra = sorted(want - got, key=repr), sorted(got - want, key=repr)
        raise AssertionError(
            f"{context}: {mine.num_rows} rows, {theirs.num_rows} expected (columns {columns}); "
            f"{len(missing)} expected rows missing, e.g. {missing[:3]}; {len(extra)} rows not expected, e.g. {extra[:3]}"
        )


def _same_files(scan: pqsift.Scan, table: Path, version: int | None = None) -> None:
    """The scan's files are the snapshot's active files, as delta-rs replays the log."""
    oracle = DeltaTable(str(table), version=version)
    assert sorted(os.path.normpath(p) for p in scan.files) == sorted(os.path.normpath(p) for p in oracle.file_uris()), table


def _check_snapshot_metrics(scan: pqsift.Scan, table: Path, version: int | None = None) -> None:
    """After a read: the version and active files the metrics report are delta-rs's."""
    oracle = DeltaTable(str(table), version=version)
    metrics = scan.metrics
    assert metrics["delta_version"] == oracle.version(), metrics
    assert metrics["delta_active_files"] == len(oracle.file_uris()), metrics


def _fails_naming(table: Path, error: type[Exception], **options: Any) -> pytest.ExceptionInfo[Exception]:
    """Reading ``table`` raises ``error`` (not rows) whose message names the table."""
    with pytest.raises(error) as info:
        pqsift.scan(str(table), **options).to_table()
    assert str(table) in str(info.value), f"the message does not name {table}: {info.value}"
    return info


# --- logs with placeholder data files ---------------------------------------------------


def _with_data_files(table: Path, root: Path, files: dict[str, int], column: str, type_: pa.DataType) -> Path:
    """A copy of ``table``'s log in ``root``, each data file it names in ``files`` (as
    the log writes it, percent-encoded) written as a one-row Parquet file ``{column:
    value}``. The golden structural tables' data files are 1-byte placeholders or absent:
    with real ones, which rows come back shows which files a scan took as active. The
    commits' ``add.size`` of those files is set to the real size (a reader may trust it);
    nothing else in the log changes."""
    root.mkdir(parents=True)
    sizes = {}
    for encoded, value in files.items():
        path = root / urllib.parse.unquote(encoded)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({column: pa.array([value], type_)}), path)
        sizes[encoded] = path.stat().st_size
    log = root / "_delta_log"
    log.mkdir()
    for source in sorted((table / "_delta_log").iterdir()):
        if source.suffix != ".json":
            shutil.copyfile(source, log / source.name)
            continue
        lines = []
        for line in source.read_text().splitlines():
            action = json.loads(line)
            if "add" in action and action["add"]["path"] in sizes:
                action["add"]["size"] = sizes[action["add"]["path"]]
                line = json.dumps(action)
            lines.append(line)
        (log / source.name).write_text("\n".join(lines) + "\n")
    return root


def _int_col(table: pa.Table) -> list[int]:
    return sorted(table.column(0).to_pylist())


# --- golden tables ----------------------------------------------------------------------

# Options per golden table. `data-reader-partition-values` has a timestamp partition column
# whose value is written "2021-09-08 11:11:11", no zone: Spark reads it in the session time
# zone, and its expected/ says 18:11:11 UTC, i.e. the writer's session was
# America/Los_Angeles (PDT, Spark's own test default). delta-kernel-rs reads UTC and skips
# the table; in pqsift the zone is the `session_time_zone` option (see also
# test_timestamp_partition_value_is_read_in_the_session_time_zone).
GOLDEN_OPTIONS: dict[str, dict[str, Any]] = {
    "data-reader-partition-values": {"session_time_zone": "America/Los_Angeles"},
}

# Tables a reader must refuse with a clear error, per the README, plus three with no
# expected/ whose logs decide it: `data-reader-absolute-paths-escaped-chars` has a protocol
# and two adds but no metaData at all; `deltalog-commit-info` and `update-deleted-directory`
# have a metaData without `schemaString` (no schema to read with: delta-rs refuses both).
MUST_FAIL: dict[str, type[Exception]] = {
    "deltalog-invalid-protocol-version": pqsift.UnsupportedError,  # minReaderVersion 99
    "deltalog-state-reconstruction-from-checkpoint-missing-metadata": pqsift.TableError,
    "deltalog-state-reconstruction-without-metadata": pqsift.TableError,
    "deltalog-state-reconstruction-without-protocol": pqsift.TableError,
    "versions-not-contiguous": pqsift.TableError,  # commits 0 and 2
    "data-reader-absolute-paths-escaped-chars": pqsift.TableError,
    "deltalog-commit-info": pqsift.TableError,
    "update-deleted-directory": pqsift.TableError,
}


def _check_expected(golden: Golden) -> None:
    """The latest snapshot is Spark's expected/ rows, with the Delta schema's names and
    types; its files and version are delta-rs's."""
    assert golden.expected is not None
    scan = pqsift.scan(str(golden.path), **GOLDEN_OPTIONS.get(golden.name, {}))
    table = scan.to_table()
    _assert_logical_schema(table, _delta_fields(golden.path), golden.name)
    _assert_same_rows(table, _read_expected(golden.expected), golden.name)
    _same_files(scan, golden.path)
    _check_snapshot_metrics(scan, golden.path)


def _check_against_oracle(golden: Golden) -> None:
    """A table with no expected/ (the tables of ``hive/``): delta-rs's rows."""
    scan = pqsift.scan(str(golden.path))
    table = scan.to_table()
    _assert_logical_schema(table, _delta_fields(golden.path), golden.name)
    _assert_same_rows(table, _oracle(golden.path), golden.name)
    _same_files(scan, golden.path)


def _check_checkpoint(golden: Golden, tmp_path: Path) -> None:
    """`checkpoint`: commit N removes file "N" and adds "N+1" (commit 0 adds "1"), with a
    classic checkpoint at 10 and `_last_checkpoint` pointing at it; the latest version is
    14, whose one active file is "15"."""
    root = _with_data_files(golden.path, tmp_path / "t", {str(k): k for k in range(1, 16)}, "intCol", pa.int32())
    scan = pqsift.scan(str(root))
    assert _int_col(scan.to_table()) == [15]
    metrics = scan.metrics
    assert metrics["delta_version"] == 14 and metrics["delta_active_files"] == 1, metrics
    # Read through its checkpoint: 13 action rows (`_last_checkpoint`'s size), one add.
    assert metrics["delta_checkpoint_rows_total"] == 13, metrics
    assert 1 <= metrics["delta_checkpoint_rows_selected"] <= 13, metrics
    assert metrics["delta_checkpoint_values_decoded"] > 0, metrics
    # Before the checkpoint the commits alone; after it, checkpoint + commits.
    for version in (0, 9, 12):
        assert _int_col(pqsift.scan(str(root), version=version).to_table()) == [version + 1], version
    # With the commits up to 10 gone the table still reads, from the checkpoint; version 5
    # can no longer be rebuilt.
    for k in range(11):
        (root / "_delta_log" / f"{k:020d}.json").unlink()
    assert _int_col(pqsift.scan(str(root)).to_table()) == [15]
    _fails_naming(root, pqsift.TableError, version=5)


def _check_canonicalized(golden: Golden, tmp_path: Path) -> None:
    """`canonicalized-paths-*`: version 0 adds an absolute path, version 1 removes the same
    file written differently (`file:/…`, `file:///…`, escaped characters): no active file
    at version 1, so no row, the Delta schema's one column."""
    scan = pqsift.scan(str(golden.path))
    assert scan.files == []
    table = scan.to_table()
    assert table.num_rows == 0 and table.schema.names == ["id"] and table.schema.field("id").type == pa.int32()
    assert scan.metrics["delta_version"] == 1
    # At version 0 the one file (absent: only listed, never read), its path decoded: an
    # absolute path outside the table, refused unless allowed.
    with pytest.raises(pqsift.TableError, match="outside its root"):
        pqsift.scan(str(golden.path), version=0)
    before = pqsift.scan(str(golden.path), version=0, allowed_locations="any")
    name = "/some/unqualified/with space/p@#h" if "special" in golden.name else "/some/unqualified/absolute/path"
    assert [os.path.normpath(p) for p in before.files] == [name]


def _check_delete_re_add(golden: Golden, tmp_path: Path) -> None:
    """`delete-re-add-same-file-different-transactions`: "foo" added (0), removed (1),
    added again (2), "bar" added (3): the latest snapshot has both; version 1 neither."""
    root = _with_data_files(golden.path, tmp_path / "t", {"foo": 1, "bar": 2}, "intCol", pa.int32())
    expected = {None: [1, 2], 0: [1], 1: [], 2: [1], 3: [1, 2]}
    for version, rows in expected.items():
        assert _int_col(pqsift.scan(str(root), version=version).to_table()) == rows, version


def _check_special_characters_b(golden: Golden, tmp_path: Path) -> None:
    """`log-replay-special-characters-b`: one add whose path is `special%20p@%23h`, the file
    `special p@#h` (absent here: written by this test)."""
    root = _with_data_files(golden.path, tmp_path / "t", {"special%20p@%23h": 7}, "intCol", pa.int32())
    scan = pqsift.scan(str(root))
    assert [Path(p).name for p in scan.files] == ["special p@#h"]
    assert _int_col(scan.to_table()) == [7]


def _check_no_delta_log(golden: Golden, tmp_path: Path) -> None:
    """`no-delta-log-folder`: two Parquet files, no `_delta_log`. Asked for a version or a
    timestamp it is not a Delta table (TableError naming it); asked for nothing it is what
    it is, a directory of Parquet files (the plain-Parquet fallback the README allows)."""
    _fails_naming(golden.path, pqsift.TableError, version=0)
    _fails_naming(golden.path, pqsift.TableError, timestamp="2030-01-01 00:00:00")
    files = sorted(golden.path.glob("*.parquet"))
    _assert_same_rows(pqsift.scan(str(golden.path)).to_table(), pa.concat_tables(pq.read_table(f) for f in files), golden.name)


STRUCTURAL: dict[str, Callable[[Golden, Path], None]] = {
    "checkpoint": _check_checkpoint,
    "canonicalized-paths-normal-a": _check_canonicalized,
    "canonicalized-paths-normal-b": _check_canonicalized,
    "canonicalized-paths-special-a": _check_canonicalized,
    "canonicalized-paths-special-b": _check_canonicalized,
    "delete-re-add-same-file-different-transactions": _check_delete_re_add,
    "log-replay-special-characters-b": _check_special_characters_b,
    "no-delta-log-folder": _check_no_delta_log,
}


@pytest.mark.parametrize("name", [g.name for g in GOLDEN])
def test_golden_table(name: str, tmp_path: Path) -> None:
    """Every golden table: Spark's expected/ rows, the README's (or its log's) structural
    check, the documented failure, or, for the tables of ``hive/``, delta-rs's rows."""
    golden = GOLDEN_BY_NAME[name]
    if name in MUST_FAIL:
        _fails_naming(golden.path, MUST_FAIL[name])
    elif golden.expected is not None:
        _check_expected(golden)
    elif name in STRUCTURAL:
        STRUCTURAL[name](golden, tmp_path)
    elif name.startswith("hive/"):
        _check_against_oracle(golden)
    else:
        pytest.fail(f"golden table {name} has no expected/ and no check here: read its _delta_log and add one")


def test_timestamp_partition_value_is_read_in_the_session_time_zone() -> None:
    """`data-reader-partition-values`' "2021-09-08 11:11:11" partition value: in the
    default session zone (UTC) it is 11:11:11 UTC, as delta-rs reads it; the Los Angeles
    reading (Spark's expected/) is checked in test_golden_table."""
    table = GOLDEN_BY_NAME["data-reader-partition-values"].path
    scan = pqsift.scan(str(table))
    _assert_same_rows(scan.to_table(), _oracle(table), "data-reader-partition-values in UTC")
    values = pqsift.scan(str(table), columns=["as_timestamp"]).to_table().column(0).to_pylist()
    assert sorted(values, key=lambda v: (v is None, v)) == [datetime.datetime(2021, 9, 8, 11, 11, 11, tzinfo=UTC)] * 2 + [None]


# --- time travel on golden tables --------------------------------------------------------

# (table, version, golden table whose expected/ is that version's rows). The snapshot-data*
# tables and snapshot-repartitioned share their first commits (the same files), as do the
# time-travel-start* tables; time-travel-partition-changes-b is -a then an overwrite that
# repartitions.
_SNAPSHOTS = ["snapshot-data0", "snapshot-data1", "snapshot-data2", "snapshot-data3"]
_STARTS = ["time-travel-start", "time-travel-start-start20", "time-travel-start-start20-start40"]
TIME_TRAVEL: list[tuple[str, int, str]] = [
    *[(table, v, _SNAPSHOTS[v]) for k, table in enumerate(_SNAPSHOTS) for v in range(k + 1)],
    *[("snapshot-repartitioned", v, _SNAPSHOTS[v]) for v in range(4)],
    ("snapshot-repartitioned", 5, "snapshot-repartitioned"),
    ("snapshot-vacuumed", 5, "snapshot-vacuumed"),
    *[(table, v, _STARTS[v]) for k, table in enumerate(_STARTS) for v in range(k + 1)],
    ("time-travel-partition-changes-a", 0, "time-travel-partition-changes-a"),
    ("time-travel-partition-changes-b", 0, "time-travel-partition-changes-a"),
    ("time-travel-partition-changes-b", 1, "time-travel-partition-changes-b"),
    ("time-travel-schema-changes-a", 0, "time-travel-schema-changes-a"),
]


@pytest.mark.parametrize(("name", "version", "source"), TIME_TRAVEL, ids=[f"{n}@{v}" for n, v, _ in TIME_TRAVEL])
def test_golden_version_equals_the_expected_rows_of_that_version(name: str, version: int, source: str) -> None:
    """``version=N`` reads the rows Spark wrote as expected/ for the table that stopped at
    version N, with that version's schema (partition-changes-b repartitions at 1)."""
    table = GOLDEN_BY_NAME[name].path
    scan = pqsift.scan(str(table), version=version)
    rows = scan.to_table()
    _assert_logical_schema(rows, _delta_fields(table, version), f"{name}@{version}")
    expected = GOLDEN_BY_NAME[source].expected
    assert expected is not None
    _assert_same_rows(rows, _read_expected(expected), f"{name}@{version}")
    _same_files(scan, table, version)
    assert scan.metrics["delta_version"] == version


def test_golden_version_without_expected_rows_equals_delta_rs() -> None:
    """snapshot-repartitioned at 4 (a DELETE) has no expected/: delta-rs's rows of that
    version."""
    table = GOLDEN_BY_NAME["snapshot-repartitioned"].path
    _assert_same_rows(pqsift.scan(str(table), version=4).to_table(), _oracle(table, version=4), "snapshot-repartitioned@4")


@pytest.mark.parametrize("version", range(5))
def test_vacuumed_versions_fail_rather_than_return_part_of_their_rows(version: int) -> None:
    """snapshot-vacuumed's files before version 5 were deleted by VACUUM: reading those
    versions must fail, not return what is left."""
    with pytest.raises(pqsift.PqsiftError):
        pqsift.scan(str(GOLDEN_BY_NAME["snapshot-vacuumed"].path), version=version).to_table()


def test_version_beyond_the_log_is_a_table_error() -> None:
    table = GOLDEN_BY_NAME["snapshot-data3"].path
    _fails_naming(table, pqsift.TableError, version=4)


# --- projections and filters on Spark-written tables ------------------------------------


@pytest.mark.parametrize(
    ("name", "columns"),
    [
        ("dv-with-columnmapping", ["col2", "part"]),
        # Only a partition column: no data column is decoded, and the deletion vectors still apply.
        ("dv-with-columnmapping", ["part"]),
        ("data-reader-nested-struct", ["b"]),
        ("table-with-columnmapping-mode-name", ["StringType", "nested_struct"]),
    ],
)
def test_golden_projection(name: str, columns: list[str]) -> None:
    """``columns=`` keeps those columns of expected/'s rows (deleted rows stay deleted)."""
    golden = GOLDEN_BY_NAME[name]
    assert golden.expected is not None
    table = pqsift.scan(str(golden.path), columns=columns).to_table()
    _assert_same_rows(table, _read_expected(golden.expected).select(columns), f"{name} {columns}")


# (table under delta-testing/, pqsift filter in Spark SQL, the same in DataFusion SQL)
SPARK_TABLE_FILTERS = [
    ("golden/dv-with-columnmapping/delta", "part = 0 AND col1 > 5", None),
    ("golden/dv-with-columnmapping/delta", "col2 LIKE '%1%' OR part IS NULL", None),
    ("tables/basic_partitioned", "letter IS NULL OR number > 4", None),
    ("tables/table-with-dv-small", "value > 4", None),
    ("golden/hive/delta/deltatbl-special-chars-in-partition-column", "c2 = '+ =%0'", None),
    ("golden/hive/delta/deltatbl-partition-prune", "`date` = '20180520' AND city <> 'bj'", "\"date\" = '20180520' AND city <> 'bj'"),
]


@pytest.mark.parametrize(("relative", "where", "datafusion"), SPARK_TABLE_FILTERS)
def test_filters_on_spark_written_tables(relative: str, where: str, datafusion: str | None) -> None:
    """Deletion vectors, column mapping, null and escaped partition values under a filter:
    delta-rs's rows for the same predicate."""
    table = TESTING / relative
    got = pqsift.scan(str(table), filter=where).to_table()
    _assert_same_rows(got, _oracle(table, f"select * from t where {datafusion or where}"), f"{relative} where {where}")


# --- delta-kernel-rs's tables -----------------------------------------------------------

# Tables whose readerFeatures pqsift cannot honour: geometry/geography columns.
KERNEL_MUST_FAIL: dict[str, type[Exception]] = {"table-with-geo": pqsift.UnsupportedError}


@pytest.mark.parametrize("name", KERNEL)
def test_kernel_table(name: str) -> None:
    """Every kernel table: delta-rs's rows (deletion vectors applied, column mapping
    resolved), the Delta schema's names and types, delta-rs's active files. A table whose
    rows delta-rs cannot read is skipped with its reason (after the active files, where it
    can at least replay the log); type-widening has its own test below."""
    table = KERNEL_ROOT / name
    if name in KERNEL_MUST_FAIL:
        _fails_naming(table, KERNEL_MUST_FAIL[name])
        return
    if name == "type-widening":
        pytest.skip("delta-rs refuses typeWidening-preview: test_type_widening_reads_old_files_as_the_new_types")
    try:
        fields = _delta_fields(table)
    except Exception as error:  # noqa: BLE001 - whatever delta-rs raises is its reason
        pytest.skip(f"deltalake cannot load {name}: {error}")
    scan = pqsift.scan(str(table))
    _same_files(scan, table)
    try:
        expected = _oracle(table)
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"deltalake cannot read the rows of {name} (its active files agree): {error}")
    rows = scan.to_table()
    _assert_logical_schema(rows, fields, name)
    _assert_same_rows(rows, expected, name)
    _check_snapshot_metrics(scan, table)


def test_table_with_dv_small_has_8_of_its_10_rows() -> None:
    """The README's counts: 10 rows written (version 0), 2 deleted by a deletion vector
    (version 1)."""
    table = KERNEL_ROOT / "table-with-dv-small"
    scan = pqsift.scan(str(table))
    assert scan.to_table().num_rows == 8
    assert scan.metrics["rows_deleted"] == 2
    before = pqsift.scan(str(table), version=0)
    assert before.to_table().num_rows == 10
    assert before.metrics["rows_deleted"] == 0
    _assert_same_rows(before.to_table(), _oracle(table, version=0), "table-with-dv-small@0")


def _replay_commits(table: Path) -> tuple[list[dict[str, Any]], list[Path]]:
    """The last metaData's schema fields and the active files of a log made of JSON
    commits only (no checkpoint), replayed by hand: newest action per path wins."""
    schema = None
    active: dict[str, bool] = {}
    for commit in sorted((table / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "metaData" in action:
                schema = json.loads(action["metaData"]["schemaString"])
            for kind in ("add", "remove"):
                if kind in action:
                    active[urllib.parse.unquote(action[kind]["path"])] = kind == "add"
    assert schema is not None and not list((table / "_delta_log").glob("*.checkpoint*"))
    return schema["fields"], sorted(table / path for path, present in active.items() if present)


def test_type_widening_reads_old_files_as_the_new_types() -> None:
    """type-widening (delta-rs refuses its typeWidening-preview feature): version 2 widened
    every column (byte→long, float→double, int→decimal(11,1), date→timestamp_ntz, …) and
    added a file; the file written before holds the old types. Oracle: each active file
    read by pyarrow and cast to the widened types, which is what widening means (a float
    widens to the double of the same value, a date to its midnight)."""
    table = KERNEL_ROOT / "type-widening"
    fields, files = _replay_commits(table)
    schema = pa.schema([pa.field(f["name"], _arrow_type(f["type"])) for f in fields])
    scan = pqsift.scan(str(table))
    rows = scan.to_table()
    _assert_logical_schema(rows, fields, "type-widening")
    assert len(files) == 2 and sorted(Path(f) for f in scan.files) == files
    expected = pa.concat_tables(pq.read_table(f).cast(schema) for f in files)
    _assert_same_rows(rows, expected, "type-widening")
    assert sorted(rows.column("byte_long").to_pylist()) == [1, 2**63 - 1]


# --- tables written here with deltalake ------------------------------------------------

KINDS = ["a/b", "with space", "50%", None, "c=d", "x:y", "ünï"]


def _events(start: int, count: int, extra: bool = False) -> pa.Table:
    """Rows ``start`` … ``start + count - 1``: partitioned on ``event_day`` (a date) and
    ``kind`` (strings a path must escape, and null); ``score`` holds NaN and -0.0."""
    ids = range(start, start + count)
    columns: dict[str, pa.Array] = {
        "id": pa.array(ids, pa.int64()),
        "amount": pa.array([None if i % 9 == 0 else i * 1.25 for i in ids], pa.float64()),
        "score": pa.array([math.nan if i % 5 == 0 else -0.0 if i % 5 == 1 else i / 3 for i in ids], pa.float32()),
        "event_day": pa.array([datetime.date(2026, 1, 1 + i % 3) for i in ids], pa.date32()),
        "kind": pa.array([KINDS[i % len(KINDS)] for i in ids], pa.string()),
        "note": pa.array([f"note {i}" for i in ids], pa.string()),
        "ts": pa.array([datetime.datetime(2026, 1, 1, tzinfo=UTC) + datetime.timedelta(minutes=37 * i) for i in ids], pa.timestamp("us", tz="UTC")),
    }
    if extra:
        columns["extra"] = pa.array([f"x{i}" if i % 2 else None for i in ids], pa.string())
    return pa.table(columns)


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Written by delta-rs: version 0 a partitioned write; 1 an append; 2 a DELETE
    (``amount > 200``: files rewritten without those rows); 3 an overwrite of one
    partition (``kind = 'x:y'``), then a checkpoint of version 3; 4 an append with a new
    column ``extra`` (``schema_mode="merge"``: the older files lack it)."""
    path = tmp_path_factory.mktemp("delta") / "events"
    write_deltalake(path, _events(0, 120), partition_by=["event_day", "kind"])
    write_deltalake(path, _events(120, 80), mode="append")
    DeltaTable(str(path)).delete("amount > 200")
    replacement = _events(1000, 30)
    replacement = replacement.filter(pc.equal(replacement["kind"], "x:y"))
    write_deltalake(path, replacement, mode="overwrite", predicate="kind = 'x:y'")
    DeltaTable(str(path)).create_checkpoint()
    write_deltalake(path, _events(2000, 40, extra=True), mode="append", schema_mode="merge")
    assert DeltaTable(str(path)).version() == 4
    return path


@pytest.mark.parametrize("version", [None, 0, 1, 2, 3, 4])
def test_written_table_every_version_equals_delta_rs(events: Path, version: int | None) -> None:
    """Each version (latest: through the checkpoint of 3 plus commit 4) is delta-rs's rows
    of it, with that version's schema (``extra`` from 4 on, null in the older files)."""
    scan = pqsift.scan(str(events), version=version)
    rows = scan.to_table()
    _assert_logical_schema(rows, _delta_fields(events, version), f"events@{version}")
    _assert_same_rows(rows, _oracle(events, version=version), f"events@{version}")
    _same_files(scan, events, version)
    _check_snapshot_metrics(scan, events, version)


def test_written_table_version_0_is_what_was_written_first(events: Path) -> None:
    """Independent of any reader: version 0 holds exactly the first table written."""
    _assert_same_rows(pqsift.scan(str(events), version=0).to_table(), _events(0, 120), "events@0")


def test_written_table_new_column_is_null_in_older_files(events: Path) -> None:
    """``extra`` came with version 4's rows (ids from 2000); every older row has it null."""
    table = pqsift.scan(str(events), columns=["id", "extra"]).to_table()
    written = _events(2000, 40, extra=True).select(["id", "extra"])
    new = table.filter(pc.greater_equal(table["id"], 2000))
    _assert_same_rows(new, written, "rows of version 4")
    old = table.filter(pc.less(table["id"], 2000))
    assert old.num_rows > 0 and old["extra"].null_count == old.num_rows


def test_written_table_checkpoint_is_read(events: Path, tmp_path: Path) -> None:
    """The latest snapshot comes from the checkpoint of version 3 (its action rows
    counted) plus commit 4; version 2 predates it. With commits 0–3 deleted the table reads
    the same."""
    latest = pqsift.scan(str(events))
    latest.to_table()
    metrics = latest.metrics
    assert metrics["delta_checkpoint_rows_total"] > 0, metrics
    assert 0 < metrics["delta_checkpoint_rows_selected"] <= metrics["delta_checkpoint_rows_total"], metrics
    assert metrics["delta_checkpoint_values_decoded"] > 0, metrics
    before = pqsift.scan(str(events), version=2)
    before.to_table()
    assert before.metrics["delta_checkpoint_rows_total"] == 0, before.metrics
    copy = tmp_path / "events"
    shutil.copytree(events, copy)
    for k in range(4):
        (copy / "_delta_log" / f"{k:020d}.json").unlink()
    _assert_same_rows(pqsift.scan(str(copy)).to_table(), _oracle(events), "events from the checkpoint alone")


# (pqsift filter in Spark SQL, the same in DataFusion SQL when it differs, whether a filter
# on the partition columns must skip files by their partition values)
FILTERS: list[tuple[str, str | None, bool]] = [
    ("kind = 'a/b'", None, True),
    ("kind IS NULL", None, True),
    ("event_day = DATE '2026-01-02' AND kind IS NOT NULL", None, True),
    ("kind IN ('with space', '50%', 'ünï') AND id > 40", None, True),
    ("NOT (kind <=> 'c=d') AND amount > 100", "(kind IS DISTINCT FROM 'c=d') AND amount > 100", True),
    ("amount > 150.5", None, False),
    ("kind = 'x:y' OR amount IS NULL", None, False),
    ("extra IS NULL AND id < 60", None, False),
    ("note LIKE 'note 1%' AND ts >= TIMESTAMP '2026-01-02 00:00:00'", None, False),
]


@pytest.mark.parametrize(("where", "datafusion", "prunes"), FILTERS)
def test_written_table_filters_equal_delta_rs(events: Path, where: str, datafusion: str | None, prunes: bool) -> None:
    """Partition, data, mixed and IS NULL filters: delta-rs's rows for the same predicate;
    a filter on the partition columns skips files by their partition values."""
    scan = pqsift.scan(str(events), filter=where)
    rows = scan.to_table()
    expected = _oracle(events, f"select * from t where {datafusion or where}")
    _assert_same_rows(rows, expected, f"events where {where}")
    metrics = scan.metrics
    if prunes:
        assert metrics["files_pruned_partition"] > 0, metrics


def test_written_table_log_statistics_skip_files(events: Path) -> None:
    """delta-rs writes per-file statistics into the log: ``id > 100000`` is false for
    every file by them, so files are skipped without being opened."""
    scan = pqsift.scan(str(events), filter="id > 100000")
    assert scan.to_table().num_rows == 0
    assert scan.metrics["files_pruned_log_stats"] > 0, scan.metrics


def test_written_table_partition_paths_are_decoded(events: Path) -> None:
    """delta-rs escapes partition directories (``kind=a%2Fb``, ``kind=%C3%BCn%C3%AF``) and
    the log's ``add.path`` once more (``kind=a%252Fb``): every file the scan names exists."""
    files = pqsift.scan(str(events)).files
    assert files and all(Path(f).is_file() for f in files)
    assert any("kind=a%2Fb" in f for f in files) and any("%C3%BC" in f for f in files)


# Commit times of the timed table: (version, instant). Both what Delta reads as a commit's
# time (its file's modification time) and its commitInfo.timestamp are set to these.
COMMIT_TIMES = [
    datetime.datetime(2024, 1, 1, 0, 0, tzinfo=UTC),
    datetime.datetime(2024, 2, 1, 3, 0, tzinfo=UTC),
    datetime.datetime(2024, 3, 1, 0, 0, tzinfo=UTC),
]


@pytest.fixture(scope="module")
def timed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Version 0 ids 0–9, 1 appends 10–19, 2 overwrites with 100–104; commits at
    ``COMMIT_TIMES``."""
    path = tmp_path_factory.mktemp("delta") / "timed"
    write_deltalake(path, pa.table({"id": pa.array(range(10), pa.int64())}))
    write_deltalake(path, pa.table({"id": pa.array(range(10, 20), pa.int64())}), mode="append")
    write_deltalake(path, pa.table({"id": pa.array(range(100, 105), pa.int64())}), mode="overwrite")
    for version, instant in enumerate(COMMIT_TIMES):
        commit = path / "_delta_log" / f"{version:020d}.json"
        millis = int(instant.timestamp() * 1000)
        lines = []
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "commitInfo" in action:
                action["commitInfo"]["timestamp"] = millis
                assert "inCommitTimestamp" not in action["commitInfo"]
            lines.append(json.dumps(action))
        commit.write_text("\n".join(lines) + "\n")
        os.utime(commit, ns=(millis * 1_000_000, millis * 1_000_000))
    return path


TIMED_ROWS = {0: list(range(10)), 1: list(range(20)), 2: list(range(100, 105))}

TIMESTAMPS: list[tuple[str | datetime.datetime, dict[str, Any], int]] = [
    ("2024-01-15 00:00:00", {}, 0),
    ("2024-02-01 02:59:59", {}, 0),
    ("2024-02-01 03:00:00", {}, 1),  # at a commit's time: that commit
    ("2024-02-01 00:30:00", {}, 0),
    ("2024-02-01 00:30:00", {"session_time_zone": "America/New_York"}, 1),  # 05:30 UTC
    ("2024-02-29 23:00:00", {"session_time_zone": "Asia/Tokyo"}, 1),  # 14:00 UTC
    (datetime.datetime(2024, 2, 1, 3, 0, tzinfo=UTC), {}, 1),
    (datetime.datetime(2024, 1, 31, 22, 0, tzinfo=ZoneInfo("America/New_York")), {}, 1),  # 03:00 UTC
    (datetime.datetime(2024, 1, 31, 21, 59, tzinfo=ZoneInfo("America/New_York")), {}, 0),
    ("2030-01-01 00:00:00", {}, 2),
]


@pytest.mark.parametrize(("when", "options", "version"), TIMESTAMPS)
def test_timestamp_reads_the_newest_version_committed_at_or_before_it(
    timed: Path, when: str | datetime.datetime, options: dict[str, Any], version: int
) -> None:
    """``timestamp=``: a string read in ``session_time_zone`` (UTC by default) or a
    zone-aware ``datetime``; the rows are those written up to that version."""
    scan = pqsift.scan(str(timed), timestamp=when, **options)
    rows = scan.to_table()
    assert sorted(rows.column("id").to_pylist()) == TIMED_ROWS[version]
    assert scan.metrics["delta_version"] == version


def test_timestamp_before_the_first_commit_is_a_table_error(timed: Path) -> None:
    _fails_naming(timed, pqsift.TableError, timestamp="2023-12-31 23:59:59")


def test_version_equals_delta_rs_and_what_was_written(timed: Path) -> None:
    """``version=N`` on the timed table: the rows written up to N, delta-rs's too."""
    for version, ids in TIMED_ROWS.items():
        rows = pqsift.scan(str(timed), version=version).to_table()
        assert sorted(rows.column("id").to_pylist()) == ids
        _assert_same_rows(rows, _oracle(timed, version=version), f"timed@{version}")
