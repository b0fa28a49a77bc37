"""Pruning on every type DataFusion prunes (issue 13): for each Arrow type a file of 4 row
groups x 4 pages with disjoint, ascending ranges and a bloom filter; per filter, the same
rows as an independent oracle (pyarrow compute), and at least the pruning DataFusion does
on the same file (row groups by statistics + bloom filter; rows left after the page index).
Also NaN hidden from float statistics: pqsift keeps Spark's answer where DataFusion's
pruning changes it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import parquet_surgery as ps
import pqsift

ROW_GROUPS, ROW_GROUP, PAGE = 4, 400, 100
ROWS = ROW_GROUPS * ROW_GROUP


def write(path: Path, column: pa.Array) -> Path:
    """``i`` (the row number) and ``c``; 4 row groups of 4 pages each, page index and a
    bloom filter on ``c``."""
    table = pa.table({"i": pa.array(np.arange(ROWS), pa.int64()), "c": column})
    pq.write_table(
        table,
        path,
        row_group_size=ROW_GROUP,
        max_rows_per_page=PAGE,
        write_batch_size=PAGE,
        write_page_index=True,
        bloom_filter_options={"c": {"ndv": ROW_GROUP, "fpp": 0.01}},
    )
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == ROW_GROUPS
    assert all(meta.row_group(g).column(1).bloom_filter_offset is not None for g in range(ROW_GROUPS))
    return path


# ----- the types --------------------------------------------------------------------------
# Row i holds the key k = 2 * i, as the type's value: ascending, so row groups and pages
# have disjoint ranges, and an odd key is absent from every row group though inside one's
# range (only a bloom filter can prune it).

T0 = datetime(2024, 1, 1)


def _ts(k: int) -> datetime:
    return T0 + timedelta(seconds=10 * k)


def _ts_text(k: int) -> str:
    return f"TIMESTAMP '{_ts(k):%Y-%m-%d %H:%M:%S}'"


def _day(k: int) -> date:
    return date(2020, 1, 1) + timedelta(days=k)


def _be(k: int) -> bytes:
    return k.to_bytes(4, "big")


def _hex(k: int) -> str:
    return f"X'{k:08X}'"


@dataclass(frozen=True)
class Kind:
    name: str
    type: pa.DataType
    value: Callable[[int], Any]  # key -> Python value of the type
    spark: Callable[[int], str]  # key -> Spark SQL literal
    datafusion: Callable[[int], str]  # key -> DataFusion literal of the column's type
    dictionary: bool = False

    def array(self) -> pa.Array:
        column = pa.array([self.value(2 * i) for i in range(ROWS)], self.type)
        return column.dictionary_encode() if self.dictionary else column


KINDS = [
    Kind("timestamp_ns", pa.timestamp("ns"), _ts, _ts_text, _ts_text),
    Kind("timestamp_ns_utc", pa.timestamp("ns", tz="UTC"), lambda k: _ts(k).replace(tzinfo=UTC), _ts_text, _ts_text),
    Kind("timestamp_us", pa.timestamp("us"), _ts, _ts_text, _ts_text),  # control: not nanoseconds
    Kind("date64", pa.date64(), _day, lambda k: f"DATE '{_day(k)}'", lambda k: f"DATE '{_day(k)}'"),
    Kind("fixed_size_binary", pa.binary(4), _be, _hex, _hex),
    Kind("large_binary", pa.large_binary(), _be, _hex, lambda k: f"arrow_cast({_hex(k)}, 'LargeBinary')"),
    Kind("dict_utf8", pa.utf8(), lambda k: f"v{k:05d}", lambda k: f"'v{k:05d}'", lambda k: f"'v{k:05d}'", True),
    Kind("dict_large_utf8", pa.large_utf8(), lambda k: f"v{k:05d}", lambda k: f"'v{k:05d}'", lambda k: f"'v{k:05d}'", True),
    Kind("dict_binary", pa.binary(), _be, _hex, _hex, True),
    Kind("dict_large_binary", pa.large_binary(), _be, _hex, lambda k: f"arrow_cast({_hex(k)}, 'LargeBinary')", True),
    Kind("dict_int32", pa.int32(), int, str, lambda k: f"arrow_cast({k}, 'Int32')", True),
    Kind("dict_int64", pa.int64(), int, str, str, True),
    Kind("dict_uint32", pa.uint32(), int, str, lambda k: f"arrow_cast({k}, 'UInt32')", True),
    Kind("dict_decimal128", pa.decimal128(10, 2), Decimal, lambda k: f"{k}.00", lambda k: f"{k}.00", True),
]

# (id, operator, pyarrow.compute function, key). Keys: 360 cuts row group 0 inside its
# second page; 60 is in its first page; 61 is absent but inside row group 0's range;
# 2970 cuts row group 3 inside its third page.
FILTERS = [
    ("lt", "<", pc.less, 360),
    ("eq_present", "=", pc.equal, 60),
    ("eq_absent_bloom", "=", pc.equal, 61),
    ("ge", ">=", pc.greater_equal, 2970),
]

CASES = [pytest.param(kind, f, id=f"{kind.name}-{f[0]}") for kind in KINDS for f in FILTERS]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One file per type, written once for the module."""
    root = tmp_path_factory.mktemp("pruning_types")
    return {kind.name: write(root / f"{kind.name}.parquet", kind.array()) for kind in KINDS}


def oracle(path: Path, kind: Kind, op: Callable, key: int) -> pa.Table:
    """``i, c`` of the matching rows as pyarrow reads and filters them (``c`` decoded from
    a dictionary), sorted by ``i``."""
    table = pq.read_table(path)
    column = table["c"]
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    table = pa.table({"i": table["i"], "c": column})
    return table.filter(op(column, pa.scalar(kind.value(key), column.type))).sort_by("i")


@pytest.mark.parametrize("kind, flt", CASES)
def test_same_rows_as_the_oracle(files: dict[str, Path], kind: Kind, flt: tuple) -> None:
    """Pruning on these types must never drop a matching row, and the column must read
    (a dictionary of decimals included); the same rows with every pruning stage off."""
    _, operator, op, key = flt
    path = files[kind.name]
    text = f"c {operator} {kind.spark(key)}"
    expected = oracle(path, kind, op, key)
    for options in ({}, {"statistics": False, "bloom_filter": False, "page_index": False}):
        got = pqsift.scan(path, columns=["i", "c"], filter=text, **options).to_table().sort_by("i")
        assert got["i"].to_pylist() == expected["i"].to_pylist(), (text, options)
        values = got["c"]
        if pa.types.is_dictionary(values.type):
            values = values.cast(values.type.value_type)
        assert values.cast(expected["c"].type).to_pylist() == expected["c"].to_pylist(), (text, options)


# ----- pruning counts -----------------------------------------------------------------------


@dataclass(frozen=True)
class Pruning:
    row_groups_pruned: int  # by statistics + bloom filter
    by_statistics: int
    by_bloom_filter: int
    pages_pruned: int  # in the row groups left
    rows_left: int  # after the page index

    def __str__(self) -> str:
        return (
            f"{self.row_groups_pruned} row groups pruned ({self.by_statistics} statistics + "
            f"{self.by_bloom_filter} bloom), {self.pages_pruned} pages pruned, {self.rows_left} rows left"
        )


def pqsift_pruning(path: Path, text: str) -> Pruning:
    """Planning only (``explain`` decodes no column), so the counts do not depend on reading."""
    scan = pqsift.scan(path, columns=["i"], filter=text)
    scan.explain()
    m = scan.metrics
    statistics, bloom = m["row_groups_pruned_statistics"], m["row_groups_pruned_bloom_filter"]
    return Pruning(statistics + bloom, statistics, bloom, m["pages_pruned"], m["rows_selected"])


_COUNTED = re.compile(r"\b(\w+)=(\d+) total (?:→|->) (\d+) matched")
_PLAIN = re.compile(r"\b(\w+)=(\d+)(?=[,\]\s])(?! total)")


def datafusion_metrics(plan: str) -> dict[str, int]:
    """The pruning metrics of ``EXPLAIN ANALYZE`` as counts pruned, summed over the plan's
    scans: DataFusion 55 prints ``name=T total → M matched`` (pruned: T - M); older
    versions a plain ``name=N``."""
    out: dict[str, int] = {}
    for name, total, matched in _COUNTED.findall(plan):
        out[name] = out.get(name, 0) + int(total) - int(matched)
    plain: dict[str, int] = {}
    for name, n in _PLAIN.findall(plan):
        if name not in out:
            plain[name] = plain.get(name, 0) + int(n)
    return {**plain, **out}


class DataFusionCannot(Exception):  # noqa: N818 - reads as "DataFusion cannot" where it is caught
    """DataFusion raised running a query (it raises plain ``Exception``s)."""


def _rows(ctx: Any, sql: str) -> dict[str, list[Any]]:
    try:
        return ctx.sql(sql).to_pydict()
    except Exception as error:
        raise DataFusionCannot(str(error)) from error


def datafusion_pruning(path: Path, where: str, expected_ids: list[int]) -> Pruning:
    """DataFusion's pruning of ``SELECT i WHERE where`` on ``path``: one partition, bloom
    filters and the page index on. Its rows must be the oracle's (the DataFusion filter
    text must mean the Spark one), else the comparison would be meaningless."""
    datafusion = pytest.importorskip("datafusion")
    config = (
        datafusion.SessionConfig()
        .with_target_partitions(1)
        .set("datafusion.execution.parquet.pruning", "true")
        .set("datafusion.execution.parquet.pushdown_filters", "true")
        .set("datafusion.execution.parquet.bloom_filter_on_read", "true")
        .set("datafusion.execution.parquet.enable_page_index", "true")
    )
    ctx = datafusion.SessionContext(config)
    ctx.register_parquet("t", str(path))
    ids = sorted(_rows(ctx, f"SELECT i FROM t WHERE {where}")["i"])
    assert ids == expected_ids, f"DataFusion's `{where}` does not select the oracle's rows"
    plan = "\n".join(_rows(ctx, f"EXPLAIN ANALYZE SELECT i FROM t WHERE {where}")["plan"])
    m = datafusion_metrics(plan)
    if "row_groups_pruned_statistics" not in m:
        pytest.fail(f"no row group metrics in DataFusion's EXPLAIN ANALYZE:\n{plan}")
    if m.get("files_ranges_pruned_statistics", 0) > 0:  # the whole file, before its row groups
        return Pruning(ROW_GROUPS, ROW_GROUPS, 0, 0, 0)
    statistics, bloom = m["row_groups_pruned_statistics"], m.get("row_groups_pruned_bloom_filter", 0)
    page_rows = m.get("page_index_rows_pruned", 0)
    rows_left = ROW_GROUP * (ROW_GROUPS - statistics - bloom) - page_rows
    return Pruning(statistics + bloom, statistics, bloom, m.get("page_index_pages_pruned", 0), rows_left)


@pytest.mark.parametrize("kind, flt", CASES)
def test_prunes_at_least_what_datafusion_prunes(files: dict[str, Path], tmp_path: Path, kind: Kind, flt: tuple) -> None:
    """Issue 13's goal: on every type DataFusion prunes, pqsift prunes at least as many row
    groups (statistics + bloom filter) and leaves at most as many rows after the page index.
    Where DataFusion cannot read a dictionary file (pyarrow's dictionary of decimals), it
    is measured on a twin file written from the plain type: the same Parquet columns."""
    _, operator, op, key = flt
    path = files[kind.name]
    expected_ids = oracle(path, kind, op, key)["i"].to_pylist()
    where = f"c {operator} {kind.datafusion(key)}"
    try:
        theirs = datafusion_pruning(path, where, expected_ids)
    except DataFusionCannot as error:
        if not kind.dictionary:
            pytest.skip(f"DataFusion cannot run `{where}` on {kind.name}: {error}")
        twin = write(tmp_path / "plain.parquet", pa.array([kind.value(2 * i) for i in range(ROWS)], kind.type))
        try:
            theirs = datafusion_pruning(twin, where, expected_ids)
        except DataFusionCannot:
            pytest.skip(f"DataFusion cannot run `{where}` on {kind.name} (nor on its plain twin): {error}")
    ours = pqsift_pruning(path, f"c {operator} {kind.spark(key)}")
    assert ours.row_groups_pruned >= theirs.row_groups_pruned and ours.rows_left <= theirs.rows_left, (
        f"{kind.name} `{where}`: pqsift {ours}; DataFusion {theirs}"
    )


# ----- NaN ------------------------------------------------------------------------------------


def spark_gt(x: np.ndarray, bound: float) -> np.ndarray:
    """Spark's ``x > bound``: NaN is greater than every number."""
    return np.isnan(x) | (x > bound)


def spark_lt(x: np.ndarray, bound: float) -> np.ndarray:
    """Spark's ``x < bound``: NaN is greater than every number, so never less."""
    return ~np.isnan(x) & (x < bound)


NAN_ROWS = [50, 51, 250, 1000, 1010, 1550]  # in row groups 0, 2 and 3 (its last page: values > 2); none in 1
NAN_FILTERS = [  # (filter, Spark's selection, whether NaN rows are selected)
    ("f > 0.5", lambda f: spark_gt(f, 0.5), True),
    ("-f < -2", lambda f: spark_lt(-f, -2.0), False),  # -NaN is NaN: not less than -2
    ("-f > -0.5", lambda f: spark_gt(-f, -0.5), True),  # -NaN is NaN: greater than -0.5
]
NAN_IDS = [t for t, _, _ in NAN_FILTERS]


@pytest.fixture(scope="module")
def nan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Row groups with ranges [0, 0.4] + NaN, [0.1, 0.45], [0.6, 1] + NaN, [0.55, 3] + NaN:
    pyarrow leaves NaN out of min/max (and writes no nan_count), so statistics hide it."""
    f = np.concatenate(
        [np.linspace(0, 0.4, ROW_GROUP), np.linspace(0.1, 0.45, ROW_GROUP), np.linspace(0.6, 1, ROW_GROUP), np.linspace(0.55, 3, ROW_GROUP)]
    )
    f[NAN_ROWS] = np.nan
    path = tmp_path_factory.mktemp("nan") / "nan.parquet"
    table = pa.table({"i": pa.array(np.arange(ROWS), pa.int64()), "f": f})
    pq.write_table(table, path, row_group_size=ROW_GROUP, max_rows_per_page=PAGE, write_batch_size=PAGE, write_page_index=True)
    return path


def nan_oracle(path: Path, spark: Callable[[np.ndarray], np.ndarray]) -> list[int]:
    f = pq.read_table(path)["f"].to_numpy()
    return np.flatnonzero(spark(f)).tolist()


@pytest.mark.parametrize("text, spark, nan_selected", NAN_FILTERS, ids=NAN_IDS)
def test_nan_hidden_from_statistics_keeps_spark_rows(nan_file: Path, text: str, spark: Callable, nan_selected: bool) -> None:
    """Statistics and page index bounds leave NaN out: a row group or page whose bounds
    rule a comparison out may still hold NaN rows that match it (NaN greatest, -NaN NaN).
    Every pruning stage must keep them."""
    expected = nan_oracle(nan_file, spark)
    assert set(NAN_ROWS) <= set(expected) if nan_selected else not set(NAN_ROWS) & set(expected)
    for options in ({}, {"page_index": False}, {"statistics": False, "bloom_filter": False, "page_index": False}):
        got = pqsift.scan(nan_file, columns=["i"], filter=text, **options).to_table()
        assert sorted(got["i"].to_pylist()) == expected, (text, options)


@pytest.mark.parametrize("text, spark, nan_selected", NAN_FILTERS, ids=NAN_IDS)
def test_datafusion_differs_from_spark_on_nan(nan_file: Path, text: str, spark: Callable, nan_selected: bool) -> None:
    """Why DataFusion is no oracle on floats: it compares by IEEE total order (NaN above
    every number, -NaN below) and prunes row groups and pages by bounds that leave NaN out,
    so its rows are not Spark's here (pqsift's are: the test above). ``f > 0.5`` loses row
    group 0's NaN (pruned, max 0.4); ``-f < -2`` gains row 1550's (-NaN < -2);
    ``-f > -0.5`` loses them all."""
    datafusion = pytest.importorskip("datafusion")
    ctx = datafusion.SessionContext(datafusion.SessionConfig().with_target_partitions(1))
    ctx.register_parquet("t", str(nan_file))
    theirs = sorted(_rows(ctx, f"SELECT i FROM t WHERE {text}")["i"])
    expected = nan_oracle(nan_file, spark)
    assert theirs != expected
    assert set(theirs) ^ set(expected) <= set(NAN_ROWS)  # only NaN rows differ


def test_pyarrow_writes_no_nan_count(nan_file: Path) -> None:
    """The premise of the NaN tests: pyarrow writes neither Statistics.nan_count (field 9)
    nor ColumnIndex.nan_counts (field 8), so a reader must assume any float row group or
    page may hold NaN whatever its bounds."""
    data = nan_file.read_bytes()
    _, footer = ps.split(data)
    floats = [(cc, meta) for cc, meta in ps.chunks(footer) if meta.get(3).items == [b"f"]]  # path_in_schema
    assert len(floats) == ROW_GROUPS
    for cc, meta in floats:
        statistics = meta.get(12)
        assert statistics is not None and statistics.get(9) is None
        column_index, _ = ps.decode(data, cc.get(ps.CC_CI_OFFSET))
        assert column_index.get(8) is None
