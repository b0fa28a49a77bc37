"""Filters with Spark SQL functions, drawn at random, against Spark 4.3 itself.

`test_functions_spark.py` checks a fixed list of filters. Here hypothesis composes them:
functions inside functions, `CASE`, `if` and `coalesce` with constants on either side,
comparisons of every type, `AND` / `OR` / `NOT`, over a table of hostile values (NaN,
-0.0, infinities, halves, extreme decimals, non-ASCII strings, timestamps at daylight
saving changes, NULLs in every column), in session time zones with and without daylight
saving and with fixed offsets. The oracle is Spark's reader: the ids of the rows where the
filter is true must be the same, and where Spark raises, pqsift must raise too, with the
filter in the reader (late materialization) and applied after decoding alike.

A raise on one side only is a difference too. Strings that do not cast raise in both.
Arithmetic and casts of numbers that overflow are left out: whether Spark reaches an
overflow depends on its plan (it substitutes a column's constant into the other conjuncts,
`ConstantPropagation`, rewrites a cast compared with a constant onto the uncast column,
`UnwrapCastInBinaryComparison`, and skips row groups by statistics unless filter pushdown
is off, as in these tests), and pqsift raises where a row it reads overflows (the filters
guide says so).
`make test` runs the same sample per zone every time; `-m slow` runs a longer campaign,
drawing new filters each run (hypothesis prints the failing one).
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqsift

UTC = dt.UTC
ROWS = 1_500
ZONES = ["America/New_York", "UTC", "+05:30", "Australia/Lord_Howe"]

# With line breaks (where Java's `$` and `.` differ from other dialects) and letters that
# fold to ASCII ones in Unicode (the Kelvin sign, the long s).
STRINGS = ["", " ", "  Hello ", "hello", "HELLO", "Straße", "İstanbul", "ΣΊΣΥΦΟΣ", "日本語", "a%_b", "x\\y", "abc-123",
           "\tTab\t", "ab", "Ab", "b", "zz", "é", "😀x", "k0150", "nan", "45", "line\n", "a\r\nb", "\u212a", "\u017f",
           "É", "x\u2028y", "45\r\n", "2024-03-10", " 2024-11-03 01:30:00 ", "1e3", "-0", "99999999999"]
BINARIES = [b"", b"\x00", b"\xff", b"abc", b"\x00\x01", b"ab", b"a", b"\x7f\x80", "héllo".encode()]
DOUBLES = [math.nan, -0.0, 0.0, math.inf, -math.inf, 2.5, -2.5, 0.125, 2.675, 1.005, 44.5, 45.5, -44.5, 1e300, -1e-300,
           5e-324, 0.1, 0.3, 123456.785, 1.0, -1.0, 3.0, 10.0]
DECIMALS = [Decimal("9999999999.99"), Decimal("-9999999999.99"), Decimal("0.00"), Decimal("2.55"), Decimal("-2.55"),
            Decimal("0.05"), Decimal("-0.05"), Decimal("99.95"), Decimal("5.00"), Decimal("100.00"), Decimal("1.25")]
# Instants at and around daylight saving changes (New York, Lord Howe's half hour), the epoch,
# before it, microseconds.
TIMESTAMPS = [
    dt.datetime(2024, 3, 10, 6, 59, 59, 999_999, tzinfo=UTC),
    dt.datetime(2024, 3, 10, 7, 0, tzinfo=UTC),
    dt.datetime(2024, 11, 3, 5, 30, tzinfo=UTC),
    dt.datetime(2024, 11, 3, 6, 30, tzinfo=UTC),
    dt.datetime(2024, 4, 6, 14, 45, tzinfo=UTC),
    dt.datetime(2024, 10, 5, 15, 30, tzinfo=UTC),
    dt.datetime(1970, 1, 1, tzinfo=UTC),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    dt.datetime(1960, 6, 1, 12, 0, 0, 1, tzinfo=UTC),
    dt.datetime(2037, 12, 31, 23, 59, 59, tzinfo=UTC),
    dt.datetime(2024, 2, 29, 18, 30, tzinfo=UTC),
    dt.datetime(2024, 12, 31, 23, 59, 59, tzinfo=UTC),
]


def _table(seed: int) -> pa.Table:
    rng = random.Random(seed)

    def some(pool: list[Any], nulls: float = 0.1) -> list[Any]:
        return [None if rng.random() < nulls else rng.choice(pool) for _ in range(ROWS)]

    start = dt.datetime(2024, 3, 1, tzinfo=UTC)
    ts = [None if rng.random() < 0.1 else (rng.choice(TIMESTAMPS) if rng.random() < 0.3 else
          start + dt.timedelta(minutes=rng.randrange(0, 400 * 24 * 60), microseconds=rng.choice([0, 1, 999_999])))
          for _ in range(ROWS)]
    days = [None if rng.random() < 0.1 else dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(-45_000, 30_000) if rng.random() < 0.2
            else rng.randrange(-10, 400)) for _ in range(ROWS)]
    return pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "i": pa.array(some([*range(-100, 101), 2_147_483_647, -2_147_483_647]), pa.int32()),
            "l": pa.array(some([-(2**63) + 1, 2**63 - 1, 0, 1, -1, 10**12, 7]), pa.int64()),
            "d": pa.array([None if rng.random() < 0.1 else (rng.choice(DOUBLES) if rng.random() < 0.5 else
                           round(rng.uniform(-60, 60), rng.choice([0, 1, 2, 3]))) for _ in range(ROWS)], pa.float64()),
            "m": pa.array([None if rng.random() < 0.1 else (rng.choice(DECIMALS) if rng.random() < 0.4 else
                           Decimal(rng.randrange(-20_000, 20_000)) / 100) for _ in range(ROWS)], pa.decimal128(12, 2)),
            "s": pa.array(some(STRINGS)),
            "day": pa.array(days, pa.date32()),
            "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
            "b": pa.array(some([True, False]), pa.bool_()),
            "f": pa.array([None if rng.random() < 0.1 else (rng.choice(DOUBLES) if rng.random() < 0.5 else
                           round(rng.uniform(-60, 60), rng.choice([0, 1, 2]))) for _ in range(ROWS)], pa.float32()),
            "sh": pa.array(some([*range(-50, 51), 32_767, -32_767]), pa.int16()),
            "big": pa.array([None if rng.random() < 0.1 else Decimal(rng.randrange(-10**20, 10**20)) / 10**10 for _ in range(ROWS)],
                            pa.decimal128(38, 10)),
            # A wall clock (no time zone): Spark reads it as TIMESTAMP_NTZ.
            "ntz": pa.array([None if v is None else v.replace(tzinfo=None) for v in ts], pa.timestamp("us")),
            "bin": pa.array(some(BINARIES), pa.binary()),
            # A struct that is NULL itself in some rows, its fields in others.
            "st": pa.StructArray.from_arrays(
                [pa.array(some([*range(-5, 6)]), pa.int32()), pa.array(some(["a", "B", "é", "", "hello"]))], names=["x", "y"],
                mask=pa.array([rng.random() < 0.1 for _ in range(ROWS)])),
        }
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("differential") / "t.parquet"
    # Small row groups and pages with a page index, dictionaries and plain pages: every
    # pruning stage sees the drawn filters.
    pq.write_table(_table(20261206), path, row_group_size=250, data_page_size=1_000, write_page_index=True,
                   use_dictionary=["s", "m", "i"])
    return path


# ---------------------------------------------------------------------------------------------
# The expressions: each strategy draws Spark SQL text of one type.

def _pick(*texts: str) -> st.SearchStrategy[str]:
    return st.sampled_from(list(texts))


INT_LIT = _pick("0", "1", "-1", "2", "3", "7", "50", "-100", "100", "2147483647")
DOUBLE_LIT = _pick("2.5", "-0.0", "0.0", "CAST('NaN' AS DOUBLE)", "CAST('Infinity' AS DOUBLE)", "1e300", "2.68", "45",
                   "44.5", "0.125", "3", "1.01", "-2.5")
# Divisors: a zero one raises for every row (ANSI), unless Spark's optimizer folds the
# division away (`e AND NOT e` is false), an error-only difference.
NONZERO_DOUBLE_LIT = _pick("2.5", "1e300", "2.68", "-2.5", "0.125", "CAST('NaN' AS DOUBLE)", "CAST('Infinity' AS DOUBLE)")
DECIMAL_LIT = _pick("5.00", "-9.99", "100", "2.6", "0.1", "9999999999.99", "-2.55")
STRING_LIT = _pick("''", "'hello'", "'Hello'", "'HELLO'", "'ab'", "'b'", "'straße'", "'STRASSE'", "'İstanbul'",
                   "'日本語'", "'45'", "'é'", "'x'", "'k0'", "'a%_b'", "'zz'")
DATE_LIT = _pick("DATE '2024-02-29'", "DATE '1970-01-01'", "DATE '2024-03-10'", "DATE '2024-11-03'",
                 "DATE '1900-01-01'", "DATE '2025-01-31'")
TS_LIT = _pick("TIMESTAMP '2024-03-10 03:00:00'", "TIMESTAMP '2024-11-03 01:30:00'", "TIMESTAMP '1970-01-01 00:00:00'",
               "TIMESTAMP '2024-04-07 02:00:00'", "TIMESTAMP '2024-06-01 12:00:00.000001'", "TIMESTAMP '2025-01-01 00:00:00'",
               "TIMESTAMP_NTZ '2024-03-10 02:30:00'", "TIMESTAMP_NTZ '2024-11-03 01:30:00'", "DATE '2024-03-10'")
UNITS = _pick("'MINUTE'", "'HOUR'", "'DAY'", "'WEEK'", "'MONTH'", "'QUARTER'", "'YEAR'")
COMPARE = _pick("=", "!=", "<>", "<", "<=", ">", ">=", "<=>")


@st.composite
def simple_bool(draw: st.DrawFn) -> str:
    """A condition without nesting, for CASE, if and the like."""
    return draw(st.one_of(
        st.builds(lambda op, v: f"i {op} {v}", COMPARE, INT_LIT),
        st.builds(lambda op, v: f"d {op} {v}", COMPARE, DOUBLE_LIT),
        st.builds(lambda v: f"s = {v}", STRING_LIT),
        _pick("b", "NOT b", "isnull(s)", "isnan(d)", "day > DATE '2024-06-01'", "hour(ts) < 12", "m > 0"),
    ))


@st.composite
def int_term(draw: st.DrawFn) -> str:
    k = draw(_pick("2", "7", "-7", "3", "100"))
    c = draw(INT_LIT)
    return draw(st.one_of(
        _pick("i", "abs(i)", "l", "length(s)", "char_length(s)", "year(day)", "month(day)", "day(day)", "quarter(day)",
              "year(ts)", "month(ts)", "hour(ts)", "minute(ts)", "second(ts)"),
        st.just(f"(i % {k})"), st.just(f"pmod(i, {k})"), st.just(f"mod(i, {k})"),
        st.just(f"coalesce(i, {c})"), st.just(f"nvl(i, {c})"), st.just(f"ifnull({c}, i)"), st.just(f"nullif(i, {c})"),
        st.just(f"coalesce(l, i, {c})"),
        st.builds(lambda t: f"datediff(day, {t})", DATE_LIT),
        st.just("datediff(to_date(ts), day)"),
        st.builds(lambda b: f"if({b}, i, {c})", simple_bool()),
        st.builds(lambda b: f"if({b}, {c}, length(s))", simple_bool()),
        st.builds(lambda b1, b2, c2: f"CASE WHEN {b1} THEN i WHEN {b2} THEN {c2} ELSE {c} END", simple_bool(), simple_bool(), INT_LIT),
        st.builds(lambda b1, c2: f"CASE WHEN {b1} THEN {c2} ELSE i END", simple_bool(), INT_LIT),
        st.builds(lambda c2: f"CASE i WHEN {c} THEN {c2} WHEN 3 THEN i ELSE 0 END", INT_LIT),
        st.just(f"nvl2(s, i, {c})"),
        # Arithmetic that cannot overflow, and casts: invalid casts raise where a row reaches them.
        st.just(f"(CAST(i AS BIGINT) + {c})"), st.just(f"(CAST(i AS BIGINT) * {k})"), st.just("-i"),
        _pick("CAST(m AS INT)", "CAST(s AS INT)", "sh", "abs(sh)", "(sh + 1)", "(sh * 3)", "hour(ntz)", "minute(ntz)",
              "month(ntz)", "st.x", "coalesce(st.x, i)", "length(bin)", "(st.x * i)",
              # TRY_CAST: NULL where the cast raises (a string that does not parse, an overflow).
              "try_cast(s AS INT)", "try_cast(l AS INT)", "try_cast(d AS INT)", "try_cast(big AS SMALLINT)",
              # Seconds since the epoch.
              "pmod(CAST(ts AS BIGINT), 3600)", "try_cast(ts AS INT)"),
    ))


@st.composite
def double_term(draw: st.DrawFn) -> str:
    c = draw(DOUBLE_LIT)
    scale = draw(_pick("0", "1", "2", "3", "-1"))
    return draw(st.one_of(
        _pick("d", "abs(d)", "round(d)"),
        st.just(f"round(d, {scale})"), st.just(f"round(abs(d), {scale})"),
        st.just(f"coalesce(d, {c})"), st.just(f"nullif(d, {c})"), st.just("(d % 2.5)"), st.just("(d % -3)"),
        st.just(f"(d + {c})"), st.just("(d * 2)"), st.builds(lambda v: f"(d / {v})", NONZERO_DOUBLE_LIT), st.just("(i / 7)"),
        _pick("CAST(i AS DOUBLE)", "CAST(m AS DOUBLE)", "CAST(s AS DOUBLE)", "(d - i)", "f", "round(f, 1)", "(f * 2)",
              "CAST(f AS DOUBLE)", "abs(f)", "(f + d)", "try_cast(s AS DOUBLE)", "try_cast(s AS FLOAT)",
              "(CAST(ts AS DOUBLE) / 1e9)"),
        st.builds(lambda b: f"if({b}, d, {c})", simple_bool()),
        st.builds(lambda b: f"CASE WHEN {b} THEN {c} ELSE d END", simple_bool()),
    ))


@st.composite
def decimal_term(draw: st.DrawFn) -> str:
    c = draw(DECIMAL_LIT)
    scale = draw(_pick("0", "1", "-1", "2"))
    return draw(st.one_of(
        _pick("m", "floor(m)", "ceil(m)", "abs(m)", "pmod(m, 3)"),
        st.just(f"round(m, {scale})"), st.just(f"coalesce(m, {c})"),
        st.just(f"(m + {c})"), st.just("(m * m)"), st.just("(m / 3)"), st.just("(m - i)"), st.just("(m * 1.005)"),
        _pick("CAST(i AS DECIMAL(12, 1))", "CAST(s AS DECIMAL(10, 2))", "big", "(big * m)", "(big + 1)", "round(big, 3)",
              "(big / 7)", "(big - m)", "floor(big)", "abs(big)", "try_cast(s AS DECIMAL(10, 2))",
              "try_cast(d AS DECIMAL(6, 2))", "try_cast(big AS DECIMAL(12, 2))"),
        st.builds(lambda b: f"if({b}, m, {c})", simple_bool()),
    ))


@st.composite
def string_term(draw: st.DrawFn) -> str:
    c = draw(STRING_LIT)
    a = draw(_pick("0", "1", "2", "-3", "-20"))
    n = draw(_pick("1", "2", "3", "22"))
    return draw(st.one_of(
        _pick("s", "lower(s)", "upper(s)", "trim(s)", "ltrim(s)", "rtrim(s)", "lower(upper(s))", "st.y", "concat(st.y, s)"),
        st.just(f"substring(s, {a}, {n})"), st.just(f"substr(s, {a})"),
        st.just(f"concat(s, {c})"), st.just(f"concat({c}, s)"), st.just("concat(s, '-', i)"),
        st.just(f"coalesce(s, {c})"), st.just(f"nvl(s, {c})"),
        # (Not doubles and timestamps: pqsift refuses those casts, see the filters guide.)
        _pick("CAST(i AS STRING)", "CAST(m AS STRING)", "CAST(day AS STRING)", "CAST(b AS STRING)", "CAST(l AS STRING)"),
        st.builds(lambda b: f"if({b}, s, {c})", simple_bool()),
        st.builds(lambda b: f"CASE WHEN {b} THEN lower(s) WHEN s IS NULL THEN {c} ELSE s END", simple_bool()),
    ))


@st.composite
def date_term(draw: st.DrawFn) -> str:
    k = draw(_pick("1", "-1", "30", "365"))
    return draw(st.one_of(
        _pick("day", "to_date(ts)", "date(ts)", "to_date(ntz)", "try_cast(s AS DATE)"),
        st.just(f"date_add(day, {k})"), st.just(f"date_sub(day, {k})"), st.just(f"date_add(to_date(ts), {k})"),
        st.builds(lambda t: f"coalesce(day, {t})", DATE_LIT),
    ))


@st.composite
def timestamp_term(draw: st.DrawFn) -> str:
    return draw(st.one_of(st.just("ts"), st.builds(lambda u: f"date_trunc({u}, ts)", UNITS), st.just("try_cast(s AS TIMESTAMP)"),
                          _pick("CAST(l AS TIMESTAMP)", "CAST(sh AS TIMESTAMP)", "CAST(m AS TIMESTAMP)", "try_cast(d AS TIMESTAMP)"),
                          st.just("ntz"), st.builds(lambda u: f"date_trunc({u}, ntz)", UNITS),
                          # A date is a timestamp at its midnight in the session zone.
                          st.builds(lambda u: f"date_trunc({u}, day)", UNITS)))


BINARY_LIT = _pick("X''", "X'00'", "X'FF'", "X'616263'", "X'6162'", "X'7F'", "X'0001'", "'abc'")


@st.composite
def comparison(draw: st.DrawFn) -> str:
    op = draw(COMPARE)
    return draw(st.one_of(
        st.builds(lambda t, v: f"{t} {op} {v}", int_term(), INT_LIT),
        st.builds(lambda t, v: f"{t} {op} {v}", double_term(), DOUBLE_LIT),
        st.builds(lambda t, v: f"{t} {op} {v}", decimal_term(), DECIMAL_LIT),
        st.builds(lambda t, v: f"{t} {op} {v}", string_term(), STRING_LIT),
        st.builds(lambda t, v: f"{t} {op} {v}", date_term(), DATE_LIT),
        st.builds(lambda t, v: f"{t} {op} {v}", timestamp_term(), TS_LIT),
        # Two different terms: Spark's optimizer folds `x <=> x` to true without evaluating
        # `x`, so an overflow in it raises in pqsift alone (an error-only difference).
        *(st.tuples(term(), term()).filter(lambda pair: pair[0] != pair[1]).map(lambda pair: f"{pair[0]} {op} {pair[1]}")
          for term in (int_term, string_term, date_term)),
        st.builds(lambda a, lo, hi: f"{a} BETWEEN {lo} AND {hi}", int_term(), INT_LIT, INT_LIT),
        st.builds(lambda a, vs: f"{a} IN ({', '.join(vs)})", int_term(), st.lists(INT_LIT, min_size=1, max_size=4)),
        st.builds(lambda a, vs: f"{a} NOT IN ({', '.join(vs)})", string_term(), st.lists(STRING_LIT, min_size=1, max_size=3)),
        # A NULL in the list: NULL (not false) where no other item is equal.
        st.builds(lambda a, vs, neg: f"{a} {neg}IN ({', '.join([*vs, 'NULL'])})", int_term(),
                  st.lists(INT_LIT, min_size=0, max_size=3), _pick("", "NOT ")),
        st.builds(lambda vs, neg: f"s {neg}IN ({', '.join(['NULL', *vs])})", st.lists(STRING_LIT, max_size=2), _pick("", "NOT ")),
        st.builds(lambda v: f"bin {op} {v}", BINARY_LIT),
        st.builds(lambda vs: f"bin IN ({', '.join(vs)})", st.lists(BINARY_LIT, min_size=1, max_size=3)),
        # Strings compared with other types are cast to them (raising where one does not cast).
        st.builds(lambda t, v: f"{t} {op} {v}", _pick("day", "date_add(day, 1)"),
                  _pick("'2024-03-10'", "'2024-02-29'", "'1970-01-01'", "' 2024-03-10 '")),
        st.builds(lambda t, v: f"{t} {op} {v}", _pick("ts", "ntz"),
                  _pick("'2024-03-10'", "'2024-03-10 02:30:00'", "'2024-11-03 01:30:00.5'", "'2024-03-10T03:00:00Z'")),
        st.builds(lambda t, v: f"{t} {op} {v}", _pick("i", "d", "m", "sh", "f"), _pick("'7'", "'2.5'", "' 45 '", "'-0.0'")),
        st.builds(lambda a, b: f"{a} {op} {b}", _pick("day", "to_date(ts)"), _pick("ts", "ntz")),
    ))


@st.composite
def java_regex(draw: st.DrawFn) -> str:
    """A Java regular expression as SQL text (its backslashes doubled for the literal).
    Not drawn: `\b`, which Java 17 and 19+ read differently for non-ASCII letters, and what
    pqsift refuses (multi-line anchors, look-around, back-references, classes and case
    classes under `(?iu)`)."""
    flags = draw(_pick("", "", "", "(?i)", "(?s)", "(?iu)", "(?d)", "(?x)", "(?is)"))
    atoms = ["a", "b", "h", "l", "s", "k", "K", "i", "ß", "é", "É", "日", ".", r"\\d", r"\\w", r"\\s", r"\\W", r"\\S",
             r"\\p{Alpha}", r"\\p{L}", r"\\p{IsAlphabetic}", r"\\p{Punct}", r"\\h", r"\\v", r"\\n", r"\\r",
             r"\\x{212A}", r"\\Q.\\E", "(?i:s)"]
    if "u" not in flags:
        atoms += [r"\\p{Lower}", r"\\p{Upper}", r"[\\d\\s]", "[a-z]", "[^a-z]", "[A-Z0-9]", "[a-f&&[^c]]", "[[:alpha:]]"]
    quantifier = _pick("", "", "*", "+", "?", "{1,2}", "*?", "+?")
    piece = st.builds(lambda a, q: a + q, st.sampled_from(atoms), quantifier)
    sequence = st.lists(piece, min_size=1, max_size=4).map("".join)
    body = st.one_of(sequence, st.builds(lambda a, b: f"({a}|{b})", sequence, sequence),
                     st.builds(lambda a, b: f"{a}|{b}", sequence, sequence))
    start = draw(_pick("", "", "^"))
    end = draw(_pick("", "", "$", r"\\Z"))
    return f"'{flags}{start}{draw(body)}{end}'"


@st.composite
def predicate(draw: st.DrawFn) -> str:
    """A boolean atom."""
    # Patterns of one affix, and ones with `_` or an inner `%` and a literal run of 3 bytes
    # or more (searched for before the expression runs).
    pattern = draw(_pick("'h%'", "'%o'", "'%ß%'", "'_b'", "'a\\\\%%'", "'%'", "''", "'h_llo'", "'%traß_'",
                         "'%日本_'", "'%abc%123'", "'_Hello%'"))
    needle = draw(_pick("'h'", "'ß'", "'_b'", "''", "'日'", "'LL'"))
    return draw(st.one_of(
        comparison(),
        st.builds(lambda t: f"startswith({t}, {needle})", string_term()),
        st.builds(lambda t: f"endswith({t}, {needle})", string_term()),
        st.builds(lambda t: f"contains({t}, {needle})", string_term()),
        st.builds(lambda t: f"{t} LIKE {pattern}", string_term()),
        st.builds(lambda t: f"{t} ILIKE {pattern}", string_term()),
        st.builds(lambda t, p: f"{t} LIKE {p} ESCAPE '!'", string_term(), _pick("'a!%%'", "'%!_%'", "'!!%'", "'h_!%'", "'%b'")),
        st.builds(lambda t, r: f"{t} RLIKE {r}", string_term(), java_regex()),
        st.builds(lambda r: f"s RLIKE {r}", java_regex()),
        st.builds(lambda t: f"isnull({t})", st.one_of(int_term(), string_term(), date_term(), double_term())),
        st.builds(lambda t: f"{t} IS NOT NULL", st.one_of(int_term(), decimal_term(), timestamp_term())),
        _pick("st IS NULL", "st IS NOT NULL", "isnull(st.y)", "bin IS NULL"),
        st.builds(lambda t: f"isnan({t})", double_term()),
        st.builds(lambda b, c: f"CASE WHEN {b} THEN {c} ELSE b END", simple_bool(), simple_bool()),
        st.builds(lambda b1, b2, b3: f"if({b1}, {b2}, {b3})", simple_bool(), simple_bool(), simple_bool()),
        st.just("b"),
    ))


def _combined(atoms: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Up to three `atoms` under AND, OR and NOT."""
    return st.recursive(
        atoms,
        lambda inner: st.one_of(
            st.builds(lambda a, b: f"({a}) AND ({b})", inner, inner),
            st.builds(lambda a, b: f"({a}) OR ({b})", inner, inner),
            st.builds(lambda a: f"NOT ({a})", inner),
        ),
        max_leaves=3,
    )


FILTERS = _combined(predicate())


def _spark_ids(spark: Any, path: Path, text: str) -> list[int] | BaseException:
    try:
        return sorted(r.id for r in spark.read.parquet(str(path)).where(text).select("id").collect())
    except Exception as error:  # noqa: BLE001 - Spark's failure is an outcome to compare
        return error


def _pqsift_ids(path: Path, text: str, zone: str, pushdown_filters: bool = True) -> list[int] | BaseException:
    try:
        table = pqsift.scan(path, columns=["id"], filter=text, session_time_zone=zone,
                            pushdown_filters=pushdown_filters).to_table()
    except pqsift.PqsiftError as error:
        return error
    return sorted(table.column("id").to_pylist())


def _check(spark: Any, path: Path, zone: str, text: str) -> str:
    """Asserts pqsift and Spark agree on `text`; returns what they agreed on: "raises",
    "none" (no row), "some" or "all" rows."""
    expected = _spark_ids(spark, path, text)
    got = _pqsift_ids(path, text, zone)
    if isinstance(expected, BaseException):
        assert isinstance(got, BaseException), f"[{zone}] Spark raises, pqsift returns {len(got)} rows: {text}\n{expected}"
        assert isinstance(_pqsift_ids(path, text, zone, pushdown_filters=False), BaseException), text
        return "raises"
    assert not isinstance(got, BaseException), f"[{zone}] pqsift raises, Spark returns {len(expected)} rows: {text}\n{got!r}"
    missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
    assert not missing and not extra, f"[{zone}] {text}: ids missing {missing[:10]}, extra {extra[:10]}"
    # The filter applied after decoding (no row filter, no late materialization) agrees.
    assert _pqsift_ids(path, text, zone, pushdown_filters=False) == got, f"[{zone}] pushdown_filters=False differs: {text}"
    return "none" if not got else "all" if len(got) == ROWS else "some"


def _campaign(spark: Any, data: Path, zone: str, examples: int, derandomize: bool) -> None:
    outcomes: Counter[str] = Counter()

    @settings(max_examples=examples, deadline=None, derandomize=derandomize,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(text=FILTERS)
    def run(text: str) -> None:
        outcomes[_check(spark, data, zone, text)] += 1

    run()
    # Agreement means little if most filters raise or select nothing: most must select
    # some rows, and few may raise.
    total = outcomes.total()
    assert outcomes["some"] >= total // 2 and outcomes["raises"] <= total // 4, outcomes


# ---------------------------------------------------------------------------------------------
# Filters Spark pushes into the data source (`spark.read.format("pqsift")`): comparisons of
# a column with a constant, IN, IS NULL, LIKE prefixes, suffixes and infixes, AND / OR /
# NOT. pqsift evaluates those it accepts and Spark does not filter them again, so the rows
# are pqsift's alone.

@st.composite
def pushable(draw: st.DrawFn) -> str:
    op = draw(_pick("=", "!=", "<", "<=", ">", ">=", "<=>"))
    column_and_value = draw(st.one_of(
        st.tuples(_pick("i", "st.x"), INT_LIT),
        st.tuples(st.just("l"), _pick("0", "-1", "7", "9223372036854775807", "-9223372036854775807", "1000000000000")),
        st.tuples(_pick("d", "f"), DOUBLE_LIT),
        st.tuples(st.just("m"), DECIMAL_LIT),
        st.tuples(st.just("big"), _pick("0", "1.5", "-12345678.9", "99999999999")),
        st.tuples(st.just("sh"), _pick("0", "-50", "32767", "7")),
        st.tuples(_pick("s", "st.y"), STRING_LIT),
        st.tuples(st.just("day"), DATE_LIT),
        st.tuples(_pick("ts", "ntz"), TS_LIT),
        st.tuples(st.just("bin"), BINARY_LIT),
        st.tuples(st.just("b"), _pick("true", "false")),
    ))
    column, value = column_and_value
    return draw(st.one_of(
        st.just(f"{column} {op} {value}"),
        st.builds(lambda vs: f"i IN ({', '.join(vs)})", st.lists(INT_LIT, min_size=1, max_size=4)),
        st.builds(lambda vs: f"s IN ({', '.join(vs)})", st.lists(STRING_LIT, min_size=1, max_size=4)),
        st.builds(lambda vs: f"ts IN ({', '.join(vs)})", st.lists(TS_LIT, min_size=1, max_size=3)),
        st.builds(lambda vs: f"d IN ({', '.join(vs)})", st.lists(DOUBLE_LIT, min_size=1, max_size=3)),
        st.builds(lambda vs: f"i IN ({', '.join([*vs, 'NULL'])})", st.lists(INT_LIT, max_size=2)),
        st.builds(lambda p: f"s LIKE {p}", _pick("'h%'", "'%o'", "'%ß%'", "'a\\\\%%'", "'İ%'", "'%\\t'", "'%'")),
        _pick("s IS NULL", "ts IS NOT NULL", "st IS NULL", "st.y IS NULL", "bin IS NOT NULL", "b", "NOT b"),
    ))


PUSHED_FILTERS = _combined(pushable())


def _data_source_campaign(spark: Any, data: Path, examples: int, derandomize: bool) -> None:
    outcomes: Counter[str] = Counter()

    @settings(max_examples=examples, deadline=None, derandomize=derandomize,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(text=PUSHED_FILTERS)
    def run(text: str) -> None:
        expected = _spark_ids(spark, data, text)
        assert not isinstance(expected, BaseException), f"Spark raises for a pushable filter: {text}"
        source = spark.read.format("pqsift").load(str(data)).where(text).select("id")
        got = sorted(r.id for r in source.collect())
        missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
        assert not missing and not extra, f"{text}: ids missing {missing[:10]}, extra {extra[:10]}"
        outcomes["none" if not got else "all" if len(got) == ROWS else "some"] += 1

    run()
    assert outcomes["some"] >= outcomes.total() // 2, outcomes


@pytest.fixture
def zone(spark: Any, request: pytest.FixtureRequest) -> Any:
    """Spark's session time zone set to the parameter for the test, then restored."""
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", request.param)
    yield request.param
    spark.conf.set("spark.sql.session.timeZone", before)


@pytest.mark.parametrize("zone", ZONES, indirect=True)
def test_drawn_filters_select_sparks_rows(spark: Any, data: Path, zone: str) -> None:
    _campaign(spark, data, zone, 60, derandomize=True)


@pytest.mark.slow
@pytest.mark.parametrize("zone", ZONES, indirect=True)
def test_drawn_filters_select_sparks_rows_long_campaign(spark: Any, data: Path, zone: str) -> None:
    _campaign(spark, data, zone, 1_500, derandomize=False)


@pytest.mark.parametrize("zone", ZONES, indirect=True)
def test_filters_pushed_into_the_data_source_select_sparks_rows(spark: Any, data: Path, zone: str) -> None:
    assert spark.conf.get("spark.sql.python.filterPushdown.enabled") == "true"
    _data_source_campaign(spark, data, 20, derandomize=True)


@pytest.mark.slow
@pytest.mark.parametrize("zone", ZONES, indirect=True)
def test_filters_pushed_into_the_data_source_select_sparks_rows_long_campaign(spark: Any, data: Path, zone: str) -> None:
    _data_source_campaign(spark, data, 300, derandomize=False)
