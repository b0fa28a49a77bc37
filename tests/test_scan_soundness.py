"""Soundness of pruning, property-based: on random tables written with random row group
and page sizes, no row group or page holding a row the filter accepts is ever pruned.

The oracle is a row-by-row Spark SQL reference written here in Python: three-valued
logic, NULL comparisons are NULL, NaN is the greatest double and equals NaN, -0.0 = 0.0,
strings compare by code point (= UTF-8 bytes).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqsift

Row = dict[str, Any]
Pred = tuple[str, Callable[[Row], bool | None]]

BASE_DATE = dt.date(2024, 1, 1)
WORDS = ["", "a", "ab", "abc", "abd", "b", "ba", "bz", "zz", "é", "éa"]


def spark_cmp(a: Any, b: Any) -> int | None:
    if a is None or b is None:
        return None
    if isinstance(a, float) or isinstance(b, float):
        a_nan = isinstance(a, float) and math.isnan(a)
        b_nan = isinstance(b, float) and math.isnan(b)
        if a_nan or b_nan:
            return (a_nan > b_nan) - (a_nan < b_nan)
    return (a > b) - (a < b)


OPS: dict[str, Callable[[int], bool]] = {
    "=": lambda c: c == 0,
    "!=": lambda c: c != 0,
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
}


def not3(v: bool | None) -> bool | None:
    return None if v is None else not v


def and3(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def or3(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


# Terms: (sql, python function of the row, literal strategy rendering (sql, value)).
def int_literal() -> st.SearchStrategy[tuple[str, Any]]:
    return st.integers(-30, 30).map(lambda v: (str(v), v))


def double_literal() -> st.SearchStrategy[tuple[str, Any]]:
    return st.one_of(
        st.sampled_from([-1.5, 0.0, 2.5, 7.0, 1e300]).map(lambda v: (f"CAST('{v!r}' AS DOUBLE)", v)),
        st.just(("CAST('NaN' AS DOUBLE)", math.nan)),
        st.just(("CAST('-0.0' AS DOUBLE)", -0.0)),
    )


def string_literal() -> st.SearchStrategy[tuple[str, Any]]:
    return st.sampled_from(WORDS).map(lambda w: ("'" + w + "'", w))


def date_literal() -> st.SearchStrategy[tuple[str, Any]]:
    return st.integers(-3, 20).map(lambda d: (f"DATE '{BASE_DATE + dt.timedelta(days=d)}'", BASE_DATE + dt.timedelta(days=d)))


def decimal_literal() -> st.SearchStrategy[tuple[str, Any]]:
    return st.integers(-500, 500).map(lambda c: (f"CAST('{Decimal(c) / 100}' AS DECIMAL(10,2))", Decimal(c) / 100))


EPOCH = dt.datetime(1970, 1, 1)
BASE_NS = int((dt.datetime(2024, 1, 1) - EPOCH).total_seconds()) * 10**9
BYTES2 = [b"\x00\x01", b"\x00\xff", b"\x01\x00", b"ab", b"b\x00", b"\xff\x00", b"\xff\xff"]


def timestamp_literal() -> st.SearchStrategy[tuple[str, Any]]:
    """TIMESTAMP literals (microseconds) around the nanosecond column's values; the value is
    the instant in microseconds since the epoch."""

    def render(micros: int) -> tuple[str, Any]:
        text = (EPOCH + dt.timedelta(microseconds=micros)).strftime("%Y-%m-%d %H:%M:%S.%f")
        return f"TIMESTAMP '{text}'", micros

    return st.integers(-3, 60).map(lambda k: render(BASE_NS // 1000 + k * 7))


def binary_literal() -> st.SearchStrategy[tuple[str, Any]]:
    # Literals of other widths than the fixed-size column's too: they equal no value.
    return st.one_of(st.sampled_from(BYTES2), st.sampled_from([b"", b"a", b"\x00\x01\x00"])).map(lambda b: (f"X'{b.hex()}'", b))


def _neg(v: Any) -> Any:
    return None if v is None else -v


TERMS: list[tuple[str, Callable[[Row], Any], Callable[[], st.SearchStrategy[tuple[str, Any]]]]] = [
    ("i", lambda r: r["i"], int_literal),
    ("i + 1", lambda r: None if r["i"] is None else r["i"] + 1, int_literal),
    ("-i", lambda r: _neg(r["i"]), int_literal),
    ("i * 2", lambda r: None if r["i"] is None else r["i"] * 2, int_literal),
    ("i * -3", lambda r: None if r["i"] is None else r["i"] * -3, int_literal),
    ("CAST(i AS DOUBLE)", lambda r: None if r["i"] is None else float(r["i"]), double_literal),
    ("f", lambda r: r["f"], double_literal),
    ("-f", lambda r: _neg(r["f"]), double_literal),
    ("f * 2", lambda r: None if r["f"] is None else r["f"] * 2, double_literal),
    ("s", lambda r: r["s"], string_literal),
    ("d", lambda r: r["d"], date_literal),
    ("m", lambda r: r["m"], decimal_literal),
    ("m + 1", lambda r: None if r["m"] is None else r["m"] + 1, decimal_literal),
    # Types pruning reads through a cast: nanosecond timestamps (truncated to Spark's
    # microseconds), date64, fixed-size binary, dictionaries.
    ("tn", lambda r: None if r["tn"] is None else r["tn"] // 1000, timestamp_literal),
    ("d64", lambda r: r["d"], date_literal),
    ("fb", lambda r: r["fb"], binary_literal),
    ("ds", lambda r: r["s"], string_literal),
    ("di", lambda r: r["i"], int_literal),
    # Functions: the order-preserving ones prune, the others must decide nothing.
    ("year(d) - 2000", lambda r: None if r["d"] is None else r["d"].year - 2000, int_literal),
    ("datediff(d, DATE '2024-01-01')", lambda r: None if r["d"] is None else (r["d"] - BASE_DATE).days, int_literal),
    ("datediff(DATE '2024-01-10', d)", lambda r: None if r["d"] is None else (dt.date(2024, 1, 10) - r["d"]).days, int_literal),
    ("date_add(d, 3)", lambda r: None if r["d"] is None else r["d"] + dt.timedelta(days=3), date_literal),
    ("round(m, 1)", lambda r: None if r["m"] is None else r["m"].quantize(Decimal("0.1"), rounding=ROUND_HALF_UP), decimal_literal),
    ("floor(m)", lambda r: None if r["m"] is None else Decimal(math.floor(r["m"])), decimal_literal),
    ("ceil(i)", lambda r: r["i"], int_literal),
    ("substring(s, 1, 1)", lambda r: None if r["s"] is None else r["s"][:1], string_literal),
    ("lower(s)", lambda r: None if r["s"] is None else r["s"].lower(), string_literal),
    ("length(s)", lambda r: None if r["s"] is None else len(r["s"]), int_literal),
    ("i % 7", lambda r: None if r["i"] is None else int(math.fmod(r["i"], 7)), int_literal),
    ("coalesce(i, -5)", lambda r: -5 if r["i"] is None else r["i"], int_literal),
    ("CASE WHEN i > 0 THEN i ELSE 0 END", lambda r: r["i"] if r["i"] is not None and r["i"] > 0 else 0, int_literal),
]


@st.composite
def leaf(draw: st.DrawFn) -> Pred:
    sql, fn, literal = draw(st.sampled_from(TERMS))
    kind = draw(st.sampled_from(["cmp", "cmp", "cmp", "in", "null", "between", "nullsafe", "like"]))
    if kind == "cmp":
        op = draw(st.sampled_from(list(OPS)))
        lsql, lval = draw(literal())
        if draw(st.booleans()):
            return f"{sql} {op} {lsql}", lambda r: (lambda c: None if c is None else OPS[op](c))(spark_cmp(fn(r), lval))
        flipped = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
        return f"{lsql} {flipped} {sql}", lambda r: (lambda c: None if c is None else OPS[op](c))(spark_cmp(fn(r), lval))
    if kind == "nullsafe":
        lsql, lval = draw(literal())

        def nullsafe(r: Row) -> bool:
            v = fn(r)
            return v is None if lval is None else (v is not None and spark_cmp(v, lval) == 0)

        return f"{sql} <=> {lsql}", nullsafe
    if kind == "in":
        # Past 8 values a list is evaluated and pruned as a set.
        items = draw(st.lists(literal(), min_size=1, max_size=14))
        with_null = draw(st.booleans())
        negated = draw(st.booleans())
        text = ", ".join([s for s, _ in items] + (["NULL"] if with_null else []))

        def in_list(r: Row) -> bool | None:
            v = fn(r)
            if v is None:
                return None
            if any(spark_cmp(v, x) == 0 for _, x in items):
                result: bool | None = True
            else:
                result = None if with_null else False
            return not3(result) if negated else result

        return f"{sql} {'NOT IN' if negated else 'IN'} ({text})", in_list
    if kind == "null":
        negated = draw(st.booleans())
        return f"{sql} IS {'NOT ' if negated else ''}NULL", lambda r: (fn(r) is not None) if negated else (fn(r) is None)
    if kind == "like":
        prefix = draw(st.sampled_from(["a", "ab", "b", "é", "z"]))
        exact = draw(st.booleans())
        negated = draw(st.booleans())
        pattern = prefix if exact else prefix + "%"
        # `startswith(s, p)` is `s LIKE 'p%'` to pruning.
        function = not exact and draw(st.booleans())

        def like(r: Row) -> bool | None:
            v = r["s"]
            if v is None:
                return None
            result = v == prefix if exact else v.startswith(prefix)
            return not result if negated else result

        if function:
            return f"{'NOT ' if negated else ''}startswith(s, '{prefix}')", like
        return f"s {'NOT ' if negated else ''}LIKE '{pattern}'", like
    (lo_sql, lo), (hi_sql, hi) = draw(literal()), draw(literal())

    def between(r: Row) -> bool | None:
        v = fn(r)
        a, b = spark_cmp(v, lo), spark_cmp(v, hi)
        return and3(None if a is None else a >= 0, None if b is None else b <= 0)

    return f"{sql} BETWEEN {lo_sql} AND {hi_sql}", between


def predicate(depth: int = 2) -> st.SearchStrategy[Pred]:
    if depth == 0:
        return leaf()
    sub = predicate(depth - 1)
    return st.one_of(
        leaf(),
        st.tuples(sub, sub).map(lambda ab: (f"({ab[0][0]}) AND ({ab[1][0]})", lambda r, a=ab[0][1], b=ab[1][1]: and3(a(r), b(r)))),
        st.tuples(sub, sub).map(lambda ab: (f"({ab[0][0]}) OR ({ab[1][0]})", lambda r, a=ab[0][1], b=ab[1][1]: or3(a(r), b(r)))),
        sub.map(lambda a: (f"NOT ({a[0]})", lambda r, f=a[1]: not3(f(r)))),
    )


@st.composite
def table(draw: st.DrawFn) -> list[Row]:
    n = draw(st.integers(1, 120))
    sorted_like = draw(st.booleans())
    rows = []
    for k in range(n):
        base = k // 7 - 8 if sorted_like else draw(st.integers(-20, 20))
        rows.append(
            {
                "i": None if draw(st.integers(0, 9)) == 0 else base,
                "f": draw(st.one_of(st.none(), st.sampled_from([math.nan, -0.0, 0.0, 2.5, -1.5, 7.0, math.inf]), st.floats(-10, 10))),
                "s": None if draw(st.integers(0, 9)) == 0 else draw(st.sampled_from(WORDS)),
                "d": None if draw(st.integers(0, 9)) == 0 else BASE_DATE + dt.timedelta(days=(base % 20)),
                "m": None if draw(st.integers(0, 9)) == 0 else Decimal(base * 37 % 500) / 100,
                # Nanoseconds after BASE_NS, mostly sub-microsecond steps.
                "tn": None if draw(st.integers(0, 9)) == 0 else BASE_NS + (k if sorted_like else draw(st.integers(0, 120))) * 3_500,
                "fb": None if draw(st.integers(0, 9)) == 0 else draw(st.sampled_from(BYTES2)),
            }
        )
    return rows


def write(rows: list[Row], path: Path, row_group_size: int, page_rows: int, bloom: bool, page_index: bool = True) -> None:
    t = pa.table(
        {
            "i": pa.array([r["i"] for r in rows], pa.int64()),
            "f": pa.array([r["f"] for r in rows], pa.float64()),
            "s": pa.array([r["s"] for r in rows], pa.string()),
            "d": pa.array([r["d"] for r in rows], pa.date32()),
            "m": pa.array([r["m"] for r in rows], pa.decimal128(10, 2)),
            "tn": pa.array([r["tn"] for r in rows], pa.int64()).cast(pa.timestamp("ns", tz="UTC")),
            "d64": pa.array([r["d"] for r in rows], pa.date32()).cast(pa.date64()),
            "fb": pa.array([r["fb"] for r in rows], pa.binary(2)),
            "ds": pa.array([r["s"] for r in rows], pa.string()).dictionary_encode(),
            "di": pa.array([r["i"] for r in rows], pa.int32()).dictionary_encode(),
        }
    )
    pq.write_table(
        t,
        path,
        row_group_size=row_group_size,
        data_page_size=1,
        write_batch_size=page_rows,
        # Without a page index, pages are pruned by the statistics in their headers.
        write_page_index=page_index,
        use_dictionary=False,
        bloom_filter_options={c: {"ndv": 64, "fpp": 0.05} for c in ["i", "s", "d", "m", "tn", "d64", "fb", "ds", "di"]} if bloom else None,
    )


def assert_sound(path: Path, rows: list[Row], sql: str, fn: Callable[[Row], bool | None], **options: Any) -> dict[str, int]:
    scan = pqsift.scan(str(path), filter=sql, **options)
    plan = scan.plan()
    (file,) = plan.files
    start = 0
    for rg in file.row_groups:
        mask = rg.selection.to_mask() if rg.selection is not None else None
        for k in range(rg.rows):
            row = rows[start + k]
            if fn(row) is True:
                assert rg.decision != "skip", f"row {start + k} {row} matches {sql!r} but row group {rg.index} is skipped: {rg.reason}"
                if mask is not None:
                    assert mask[k], f"row {start + k} {row} matches {sql!r} but the page index drops it: {rg.reason}"
        start += rg.rows
    assert start == len(rows)
    return plan.metrics


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    rows=table(),
    pred=predicate(),
    row_group_size=st.integers(1, 60),
    page_rows=st.integers(1, 16),
    bloom=st.booleans(),
    page_index=st.booleans(),
)
def test_pruning_never_drops_a_matching_row(
    tmp_path: Path, rows: list[Row], pred: Pred, row_group_size: int, page_rows: int, bloom: bool, page_index: bool
) -> None:
    path = tmp_path / "t.parquet"
    write(rows, path, row_group_size, page_rows, bloom, page_index)
    sql, fn = pred
    metrics = assert_sound(path, rows, sql, fn)
    assert metrics["rows_total"] == len(rows)


# Columns whose names joined with dots coincide: a top-level `a.b` beside the field `b` of a
# struct `a`, a struct `a.b` with field `c` beside `a`.`b`.`c`, a field `x.y` of `s` beside
# `s`.`x`.`y`. Each stage must tell them apart (zone maps were read once per joined name,
# so one column's statistics pruned on the other's filter).
def _struct(**fields: pa.Array) -> pa.StructArray:
    return pa.StructArray.from_arrays(list(fields.values()), list(fields))


def _colliding_tables() -> list[tuple[str, pa.Table, str]]:
    small = pa.array([i % 10 for i in range(100)], pa.int64())
    large = pa.array(range(1000, 1100), pa.int64())
    return [
        ("`a.b` beside a.b", pa.table({"a.b": small, "a": _struct(b=large)}), "`a.b` < 100 AND a.b >= 1000"),
        ("`a.b`.c beside a.b.c", pa.table({"a.b": _struct(c=small), "a": _struct(b=_struct(c=large))}), "`a.b`.c < 10 AND a.b.c >= 1000"),
        ("s.`x.y` beside s.x.y", pa.table({"s": _struct(**{"x.y": small, "x": _struct(y=large)})}), "s.`x.y` < 10 AND s.x.y >= 1000"),
    ]


def test_columns_whose_joined_names_collide_are_told_apart(tmp_path: Path) -> None:
    for number, (case, table, where) in enumerate(_colliding_tables()):
        path = tmp_path / f"collide{number}.parquet"
        pq.write_table(table, path, row_group_size=50)
        unpruned = pqsift.scan(path, filter=where, statistics=False, bloom_filter=False, page_index=False).to_table()
        assert unpruned.num_rows == 100, case  # every row: the small column < 10, the large >= 1000
        for options in ({}, {"page_index": False}, {"statistics": False}):
            scan = pqsift.scan(path, filter=where, **options)
            assert scan.to_table().num_rows == 100, (case, options, scan.explain())
        # The contradiction on one column is not the other's.
        none = pqsift.scan(path, filter=where.replace(">= 1000", ">= 2000"))
        assert none.to_table().num_rows == 0, case


# Names built from the characters that break joined-name keys: dots, back-quotes, spaces,
# case pairs, non-ASCII letters.
HOSTILE_NAME = st.text(alphabet=st.sampled_from(["a", "A", "b", ".", "`", " ", "é", "É", "_"]), min_size=1, max_size=4)


def _quoted(parts: list[str]) -> str:
    return ".".join("`" + part.replace("`", "``") + "`" for part in parts)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(HOSTILE_NAME, min_size=2, max_size=4, unique=True),
    nested=st.lists(st.booleans(), min_size=4, max_size=4),
    picks=st.lists(st.tuples(st.integers(0, 7), st.sampled_from(["<", ">=", "="]), st.integers(-5, 120)), min_size=1, max_size=3),
)
def test_hostile_column_names_never_lose_rows(tmp_path: Path, names: list[str], nested: list[bool], picks: list[tuple[int, str, int]]) -> None:
    """Columns named with dots, back-quotes, case pairs and non-ASCII letters, some inside
    structs, and one top-level column whose name is another column's dotted path: a filter
    on any of them, with every pruning stage on, keeps exactly the rows a per-row oracle
    keeps. Each column holds its own range, so mixing two columns up prunes wrongly."""
    rows = 100
    columns: dict[str, pa.Array] = {}
    leaves: list[tuple[list[str], list[int]]] = []  # (path, values)
    for number, name in enumerate(names):
        values = [(i * (number + 3)) % 37 + number * 40 for i in range(rows)]
        array = pa.array(values, pa.int64())
        if nested[number]:
            columns[name] = _struct(**{name: array})
            leaves.append(([name, name], values))
        else:
            columns[name] = array
            leaves.append(([name], values))
    # A top-level column named as the first struct path written with a dot.
    first_nested = next((path for path, _ in leaves if len(path) == 2), None)
    if first_nested is not None and ".".join(first_nested) not in columns:
        values = [rows - i for i in range(rows)]
        columns[".".join(first_nested)] = pa.array(values, pa.int64())
        leaves.append(([".".join(first_nested)], values))
    path = tmp_path / "hostile.parquet"
    pq.write_table(pa.table(columns), path, row_group_size=20, data_page_size=64, write_page_index=True)

    conditions = []
    expected = [True] * rows
    for leaf_number, op, literal in picks:
        leaf_path, values = leaves[leaf_number % len(leaves)]
        conditions.append(f"{_quoted(leaf_path)} {op} {literal}")
        compare = {"<": lambda v, c: v < c, ">=": lambda v, c: v >= c, "=": lambda v, c: v == c}[op]
        expected = [keep and compare(values[i], literal) for i, keep in enumerate(expected)]
    where = " AND ".join(conditions)
    # Names equal but for case are ambiguous to Spark's default resolution: read them
    # case-sensitively (spark.sql.caseSensitive=true), as Spark would have to.
    case_sensitive = len({name.lower() for name in columns}) < len(columns)
    want = sum(expected)
    for options in ({}, {"statistics": False, "bloom_filter": False, "page_index": False}):
        scan = pqsift.scan(path, filter=where, case_sensitive=case_sensitive, **options)
        assert scan.to_table().num_rows == want, (where, options, scan.explain())
