"""Filters given as ``pyarrow.compute`` expressions keep pyarrow's meaning, and DuckDB (and
Polars, and pyarrow code) push projections and filters into a :func:`pqsift.dataset`.

The oracle for an expression is pyarrow evaluating it on the table in memory
(``Table.filter``): ``pyarrow.dataset`` itself is not one, since its statistics pruning
skips row groups whose NaN the statistics leave out (``x > 1`` loses a NaN row a
``~(x > 1)`` should keep). Each expression is checked as given and negated, which tells a
NULL result from a false one."""

from __future__ import annotations

import datetime
import decimal
import pickle
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqsift
from pqsift.arrow_filter import to_filter

NAN = float("nan")
UTC = datetime.UTC
ROWS = 48


def _table() -> pa.Table:
    def cycle(values: list[Any], n: int = ROWS) -> list[Any]:
        return [values[i % len(values)] for i in range(n)]

    return pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "i": pa.array(cycle([3, None, -1, 0, 7, 2, None, 5]), pa.int32()),
            "x": pa.array(cycle([1.5, NAN, None, -0.0, 0.0, 3.0, float("inf"), -2.0, NAN]), pa.float64()),
            "f": pa.array(cycle([1.25, None, NAN, -7.5, 0.0]), pa.float32()),
            "s": pa.array(cycle(["a", "b", None, "ab", "", "é", "B", "a_b"])),
            "bin": pa.array(cycle([b"\x00", b"\xff", None, b"ab"]), pa.binary()),
            "d": pa.array(cycle([datetime.date(2024, 1, 1), None, datetime.date(1999, 12, 31)]), pa.date32()),
            "ts": pa.array(
                cycle([datetime.datetime(2024, 1, 1, 12, 30), None, datetime.datetime(2024, 1, 1, 12, 30, 0, 1)]),
                pa.timestamp("us"),
            ),
            "tz": pa.array(
                cycle([datetime.datetime(2024, 1, 1, tzinfo=UTC), datetime.datetime(2023, 6, 1, 5, tzinfo=UTC), None]),
                pa.timestamp("us", "UTC"),
            ),
            "dec": pa.array(cycle([decimal.Decimal("1.50"), None, decimal.Decimal("-3.25")]), pa.decimal128(9, 2)),
            "b": pa.array(cycle([True, False, None]), pa.bool_()),
            "st": pa.array(cycle([{"y": 1, "z": "q"}, {"y": None, "z": None}, None, {"y": 9, "z": "r"}])),
            "a.b": pa.array(cycle([1, 2, 3]), pa.int16()),
        }
    )


TABLE = _table()


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("arrow_filter") / "t.parquet"
    pq.write_table(TABLE, path, row_group_size=8)
    return path


def _ids(table: pa.Table) -> list[int]:
    return sorted(table.column("id").to_pylist())


def _expected(expression: pc.Expression) -> list[int]:
    return _ids(TABLE.filter(expression))


CASES: list[pc.Expression] = [
    pc.field("x") > 1,
    pc.field("x") >= 0,
    pc.field("x") < 2,
    pc.field("x") <= -0.0,
    pc.field("x") == 0.0,
    pc.field("x") != 1.5,
    pc.Expression._call("less", [pc.scalar(1.0), pc.field("x")]),
    pc.field("x") == NAN,
    pc.field("x") != NAN,
    pc.field("x") > NAN,
    pc.field("x") > pc.field("i"),
    pc.field("x") != pc.field("f"),
    pc.field("f") > 1,
    pc.field("f") == pa.scalar(1.25, pa.float32()),
    pc.field("x").is_nan(),
    pc.field("x").is_null(nan_is_null=True),
    pc.field("x").is_null(),
    pc.field("x").is_valid(),
    pc.field("i") + 1 > pc.field("x"),
    pc.field("i") * 2 - 1 >= 3,
    pc.negate(pc.field("i")) < 0,
    pc.abs(pc.field("i")) == 1,
    pc.field("i").isin([3, 7]),
    pc.field("i").isin([3, None]),
    pc.field("i").isin([None]),
    pc.is_in(pc.field("i"), pa.array([3, None]), skip_nulls=True),
    pc.field("x").isin([NAN, 3.0]),
    pc.if_else(pc.field("b"), pc.field("i") > 2, pc.field("x") < 0),
    pc.if_else(pc.field("i").is_valid(), pc.field("i").isin([3, 5]), pa.scalar(None, pa.bool_())),
    pc.field("s") > "a",
    pc.field("s") < "b",
    pc.field("s") == "é",
    pc.field("s").isin(["a", "", None]),
    pc.starts_with(pc.field("s"), "a_"),
    pc.ends_with(pc.field("s"), "b"),
    pc.match_substring(pc.field("s"), "_"),
    pc.field("bin") > b"\x00",
    pc.field("bin") == b"\xff",
    pc.field("d") >= datetime.date(2000, 1, 1),
    pc.field("ts") > pa.scalar(datetime.datetime(2024, 1, 1, 12, 30), pa.timestamp("us")),
    pc.field("ts") == pa.scalar(datetime.datetime(2024, 1, 1, 12, 30, 0, 1), pa.timestamp("us")),
    pc.field("ts") < pa.scalar(1_704_112_200_000_000_000, pa.timestamp("ns")),
    pc.field("tz") > pa.scalar(datetime.datetime(2023, 12, 31, 23, tzinfo=UTC), pa.timestamp("us", "UTC")),
    pc.field("tz") <= pa.scalar(datetime.datetime(2023, 6, 1, 5, tzinfo=UTC), pa.timestamp("ms", "UTC")),
    pc.field("dec") > pa.scalar(decimal.Decimal("1.00"), pa.decimal128(9, 2)),
    pc.field("dec") == pa.scalar(decimal.Decimal("-3.25"), pa.decimal128(9, 2)),
    pc.field("b"),
    pc.field("b") == False,  # noqa: E712 - an expression, not a Python comparison
    pc.field("st", "y") > 1,
    pc.field("st", "z").is_null(),
    pc.field("st").is_null(),
    pc.field("a.b") == 2,
    (pc.field("i") > 0) & (pc.field("x") < 3),
    (pc.field("i") > 0) | pc.field("s").is_null(),
    ~((pc.field("x") > 1) | (pc.field("b") & (pc.field("i") < 3))),
    pc.scalar(True),
    pc.scalar(False) | (pc.field("id") < 4),
]


@pytest.mark.parametrize("negated", [False, True], ids=["as given", "negated"])
@pytest.mark.parametrize("expression", CASES, ids=[str(i) for i in range(len(CASES))])
def test_an_expression_selects_pyarrows_rows(data: Path, expression: pc.Expression, negated: bool) -> None:
    expression = ~expression if negated else expression
    expected = _expected(expression)
    scan = pqsift.scan(data, filter=expression)
    assert _ids(scan.to_table()) == expected, (str(expression), scan.filter)
    # Every pruning stage off: the same rows (pruning decided nothing the rows do not).
    unpruned = pqsift.scan(data, filter=expression, statistics=False, bloom_filter=False, page_index=False)
    assert _ids(unpruned.to_table()) == expected


def test_the_filter_is_written_as_spark_sql_with_the_columns_types() -> None:
    assert str(to_filter(pc.field("x") > 1, TABLE.schema)) == "`x` > 1 AND NOT isnan(`x`)"
    assert str(to_filter(pc.field("i") > 1, TABLE.schema)) == "`i` > 1"  # an int is never NaN
    assert str(to_filter(pc.field("a.b") == 2, TABLE.schema)) == "`a.b` = 2"
    assert str(to_filter(pc.field("st", "y") == 2, TABLE.schema)) == "`st`.`y` = 2"


def test_the_scan_shows_the_written_filter_and_prunes_with_it(data: Path) -> None:
    scan = pqsift.scan(data, filter=pc.field("id") < 8)
    assert scan.filter == "`id` < 8"
    plan = scan.plan()
    assert plan.metrics["row_groups_pruned_statistics"] == 5


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (pc.divide(pc.field("i"), 2) > 1, "'divide'.*integers"),
        (pc.field("i").cast(pa.string()) == "3", "'cast'"),
        (pc.and_(pc.field("b"), pc.field("b")), "non-Kleene and"),
        (pc.starts_with(pc.field("s"), "A", ignore_case=True), "ignore_case"),
        (pc.field("nope") > 1, "'nope': no such column"),
        (pc.field("x").isin([0.0, 1.5]), "tells -0.0 from 0.0"),
        (pc.field("ts") > pa.scalar(1, pa.timestamp("ns")), "microsecond"),
    ],
)
def test_what_pyarrow_means_otherwise_is_refused_by_name(data: Path, expression: pc.Expression, message: str) -> None:
    with pytest.raises(pqsift.FilterError, match=message):
        pqsift.scan(data, filter=expression)


def test_a_field_by_position_is_refused_before_any_file_is_read(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="fields are named"):
        pqsift.scan(tmp_path / "absent.parquet", filter=pc.field(0) > 1)


def test_the_spark_layer_asks_for_spark_sql() -> None:
    from pqsift.expr import filter_sql

    with pytest.raises(TypeError, match=r"pqsift\.scan"):
        filter_sql(pc.field("id") > 1)


# ----- random expressions ----------------------------------------------------------------

_COMPARABLE: dict[str, st.SearchStrategy[Any]] = {
    "i": st.sampled_from([-1, 0, 2, 3, 5, 7, 8]),
    "x": st.sampled_from([NAN, -2.0, 1.5, 3.0, float("inf")]),
    "s": st.sampled_from(["", "a", "ab", "b", "B", "é", "a_b"]),
    "d": st.sampled_from([datetime.date(1999, 12, 31), datetime.date(2024, 1, 1)]),
}


@st.composite
def _predicates(draw: st.DrawFn, depth: int = 0) -> pc.Expression:
    kind = draw(
        st.sampled_from(["compare", "compare", "in", "null", "nan"] + (["and", "or", "not"] if depth < 3 else []))
    )
    if kind in ("and", "or"):
        left, right = draw(_predicates(depth + 1)), draw(_predicates(depth + 1))
        return left & right if kind == "and" else left | right
    if kind == "not":
        return ~draw(_predicates(depth + 1))
    name = draw(st.sampled_from(sorted(_COMPARABLE)))
    column = pc.field(name)
    if kind == "null":
        return column.is_null() if draw(st.booleans()) else column.is_valid()
    if kind == "nan":
        return pc.field("x").is_nan()
    if kind == "in":
        values = draw(st.lists(st.one_of(st.none(), _COMPARABLE[name]), min_size=1, max_size=4))
        value_set = pa.array(values, TABLE.schema.field(name).type)
        return pc.is_in(column, value_set, skip_nulls=draw(st.booleans()))
    value = draw(_COMPARABLE[name])
    op = draw(st.sampled_from(["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"]))
    compared: pc.Expression = getattr(column, op)(value)
    return compared


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(expression=_predicates())
def test_random_expressions_select_pyarrows_rows(data: Path, expression: pc.Expression) -> None:
    assert _ids(pqsift.scan(data, filter=expression).to_table()) == _expected(expression), str(expression)


# ----- pqsift.dataset: what DuckDB and Polars push into -------------------------------------


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20 row groups of 1,000 rows, ids sorted, a text column to project."""
    path = tmp_path_factory.mktemp("arrow_dataset") / "wide.parquet"
    n = 20_000
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "x": pa.array([NAN if i % 50 == 0 else float(i % 97) for i in range(n)]),
            "a.b": pa.array([i % 7 for i in range(n)], pa.int32()),
            "note": pa.array([f"note {i} " * 4 for i in range(n)]),
        }
    )
    pq.write_table(table, path, row_group_size=1000)
    return path


QUERIES = [
    "select id from {t} where id < 3",
    "select count(*) from {t} where x > 90",
    "select sum(id) from {t} where x = 'NaN'::double",
    'select id, note from {t} where "a.b" = 3 and id between 100 and 130',
    "select count(*) from {t} where note like 'note 1%'",
    "select id from {t} where id in (5, 17000, 19999) order by id",
    "select count(*), min(id) from {t}",
]


@pytest.mark.parametrize("query", QUERIES)
def test_duckdb_reads_a_pqsift_dataset_as_it_reads_pyarrows(wide: Path, query: str) -> None:
    duckdb = pytest.importorskip("duckdb")
    mine = pqsift.dataset(wide)  # noqa: F841 - DuckDB finds it by its name
    theirs = ds.dataset(wide)  # noqa: F841
    assert duckdb.sql(query.format(t="mine")).fetchall() == duckdb.sql(query.format(t="theirs")).fetchall()


def test_duckdb_pushes_the_projection_and_the_filter_into_pqsift(wide: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    events = pqsift.dataset(wide)
    assert duckdb.sql("select id from events where id < 3").fetchall() == [(0,), (1,), (2,)]
    scan = events.last_scan
    assert scan is not None
    assert scan.columns == ["`id`"]
    assert scan.filter is not None and "`id` < 3" in scan.filter
    assert scan.metrics["row_groups_pruned_statistics"] == 19
    assert scan.metrics["rows_decoded"] == 1000  # one row group of one column, not 20,000 rows
    assert "note" not in scan.metrics["rows_decoded_by_column"]
    # DuckDB's IN (an if_else around is_in) arrives as Spark's IN, which statistics prune by.
    assert duckdb.sql("select id from events where id in (5, 19999)").fetchall() == [(5,), (19999,)]
    scan = events.last_scan
    assert scan is not None and scan.filter == "`id` IN (5, 19999)"
    assert scan.metrics["row_groups_pruned_statistics"] == 18


def test_the_datasets_own_filter_and_columns_hold_for_every_scanner(wide: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    late = pqsift.dataset(wide, columns=["id", "x"], filter="id >= 19990")
    assert late.schema.names == ["id", "x"]
    got = duckdb.sql("select id from late where id < 19993").fetchall()
    assert got == [(19990,), (19991,), (19992,)]
    assert late.to_table(filter=pc.field("x") > 200).num_rows == 0
    assert late.filter(pc.field("id") < 19992).count_rows() == 2
    assert late.count_rows() == 10
    assert late.head(3, columns=["x"]).column_names == ["x"]


def test_polars_scans_a_pqsift_dataset(wide: Path) -> None:
    polars = pytest.importorskip("polars")
    frame = polars.scan_pyarrow_dataset(pqsift.dataset(wide)).filter(polars.col("id") < 5).select("id").collect()
    assert frame["id"].to_list() == [0, 1, 2, 3, 4]


def test_a_dataset_pickles_as_itself_and_refuses_what_would_read_no_rows(wide: Path) -> None:
    events = pqsift.dataset(wide, filter="id < 10")
    again = pickle.loads(pickle.dumps(events))
    assert isinstance(again, pqsift.Dataset) and again.count_rows() == 10
    for refused in (events.get_fragments, lambda: events.sort_by("id"), lambda: events.take([0])):
        with pytest.raises(NotImplementedError, match="reads through scanner"):
            refused()
    with pytest.raises(ValueError, match="no column 'nope'"):
        events.to_table(columns=["nope"])
    with pytest.raises(TypeError, match="fragment_scan_options"):
        events.scanner(fragment_scan_options=object())


def test_the_modules_examples_run() -> None:
    import doctest

    import pqsift.arrow_filter
    import pqsift.expr

    for module in (pqsift.arrow_filter, pqsift.expr):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_importing_pqsift_leaves_pyarrow_dataset_to_a_datasets_user() -> None:
    import subprocess
    import sys

    probe = "import sys, pqsift; print('pyarrow.dataset' in sys.modules, pqsift.Dataset.__name__)"
    shown = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert shown.split() == ["False", "Dataset"]


def test_pyarrow_compute_is_imported_only_for_a_pyarrow_expression(tmp_path: Path) -> None:
    """``pyarrow.compute`` takes tens of milliseconds to import, paid by every fresh Spark
    worker and every command-line run: importing pqsift (and its Spark reader) and scanning
    with a text filter leave it unimported; a pyarrow expression still works, in a process
    where the caller imported it to build one."""
    import subprocess
    import sys

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3]}), path)
    check = f"""
import sys
import pqsift, pqsift.spark.reader
assert pqsift.scan({str(path)!r}, filter="id > 1").to_table().num_rows == 2
assert "pyarrow.compute" not in sys.modules, "imported"
import pyarrow.compute as pc
assert pqsift.scan({str(path)!r}, filter=pc.field("id") > 2).to_table().num_rows == 1
try:
    pqsift.expr.filter_sql(pc.field("id") > 2)
except TypeError as error:
    assert "pyarrow expression" in str(error)
else:
    raise AssertionError("filter_sql took a pyarrow expression")
"""
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
