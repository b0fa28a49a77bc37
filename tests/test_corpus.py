"""Every file of the parquet-testing corpus, through the public API.

For each ``*.parquet`` (and ``*.parquet.encrypted``) file under the corpus: pqsift reads it
completely and gets what pyarrow gets, or raises ``CorruptFileError`` /
``UnsupportedError`` naming the file and a reason. Which one is decided per file in
``EXPECTED_ERRORS`` (README "Reliability" says why), so that a file that starts failing,
or a bad file that starts "reading", is a test failure. Then filters made from each file's
data — a comparison on its first primitive column with a value from that column, IS NULL,
IS NOT NULL — against pyarrow-then-filter with Spark's rules (NULL not selected, NaN the
largest value and equal to itself, -0.0 = 0.0).
"""

from __future__ import annotations

import datetime
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import pqsift
from conftest import CORPUS
from pqsift import col

ROOT = CORPUS.resolve()
FILES = sorted(
    str(p.relative_to(ROOT))
    for p in ROOT.rglob("*")
    if p.is_file() and (p.name.endswith(".parquet") or p.name.endswith(".parquet.encrypted"))
)

_ENCRYPTED = "pqsift does not decrypt"
# File -> (exception class, words the reason must contain). Every other file must read.
EXPECTED_ERRORS: dict[str, tuple[type[Exception], str]] = {
    "bad_data/ARROW-GH-41317.parquet": (pqsift.CorruptFileError, ""),
    # pqsift finds the int64 chunk's definition levels cut short; the crate's reader, which
    # decodes that column for pqsift no longer, met a bit width of 254 in the same chunk.
    "bad_data/ARROW-GH-41321.parquet": (pqsift.CorruptFileError, "definition levels"),
    "bad_data/ARROW-GH-45185.parquet": (pqsift.CorruptFileError, "repetition level"),
    "bad_data/ARROW-GH-47662.parquet": (pqsift.CorruptFileError, "payload length"),
    # The footer's second column chunk (322 bytes at 129) runs past the data into the footer.
    "bad_data/ARROW-RS-GH-6229-DICTHEADER.parquet": (pqsift.CorruptFileError, "not inside the data part"),
    "bad_data/ARROW-RS-GH-6229-LEVELS.parquet": (pqsift.CorruptFileError, "repetition levels"),
    "bad_data/PARQUET-1481.parquet": (pqsift.CorruptFileError, "Type"),
    # 2 x 1 GiB strings in one column chunk: more than Arrow's 32-bit offsets hold in one
    # batch (pyarrow cannot read it either).
    # 2 x 1 GiB strings in pages of 1 GiB: refused from the page headers, before any is
    # decompressed (peak RSS in tests/test_memory_bounds.py).
    "data/large_string_map.brotli.parquet": (pqsift.UnsupportedError, "max_page_bytes"),
    # Spark's INT96 instants up to year 294,247: 9999-12-31 and beyond do not fit
    # timestamp[ns]; pyarrow and the crate wrap them into another instant, pqsift refuses.
    "data/int96_from_spark.parquet": (pqsift.UnsupportedError, "is outside the range of timestamp[ns]"),
}
EXPECTED_ERRORS.update({name: (pqsift.UnsupportedError, _ENCRYPTED) for name in FILES if name.endswith(".encrypted")})



def normal(value: Any) -> Any:
    """A Python value with NaN made comparable (NaN == NaN, as in Spark)."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, tuple):
        return tuple(normal(v) for v in value)
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items()}
    return value


def assert_same(got: pa.Table, expected: pa.Table, what: str) -> None:
    assert got.schema.equals(expected.schema), f"{what}: schema\n{got.schema}\nvs pyarrow\n{expected.schema}"
    assert got.num_rows == expected.num_rows, f"{what}: {got.num_rows} rows, pyarrow {expected.num_rows}"
    for name in got.column_names:
        a, b = got[name], expected[name]
        if a.equals(b):
            continue
        assert normal(a.to_pylist()) == normal(b.to_pylist()), f"{what}: column {name} differs"


def pyarrow_table(path: Path) -> pa.Table | None:
    """pyarrow's reading, with Arrow extension types off: pqsift outputs plain Arrow types
    (the UUID logical type as ``fixed_size_binary[16]``, not ``arrow.uuid``)."""
    try:
        return pq.read_table(path, arrow_extensions_enabled=False)
    except Exception:  # noqa: BLE001 - any failure means "no oracle"
        return None


@pytest.mark.parametrize("name", FILES)
def test_every_corpus_file_reads_like_pyarrow_or_fails_cleanly(name: str) -> None:
    path = ROOT / name
    expected_error = EXPECTED_ERRORS.get(name)
    if expected_error is not None:
        cls, words = expected_error
        with pytest.raises(cls) as info:
            pqsift.scan(path).to_table()
        assert path.name in str(info.value) and words in str(info.value), str(info.value)
        return
    got = pqsift.scan(path).to_table()
    oracle = pyarrow_table(path)
    if oracle is None:
        return  # pyarrow cannot read it (incorrect_map_schema): pqsift reading it is the point
    assert_same(got, oracle, name)


@pytest.mark.parametrize("name", [name for name in FILES if name not in EXPECTED_ERRORS])
def test_every_corpus_file_reads_the_same_as_string_views(name: str) -> None:
    """``string_view=True``: the top-level strings and binaries out as views (decoded as views
    where the read decodes them itself), the same values as the plain read."""
    path = ROOT / name
    plain = pqsift.scan(path).to_table()
    views = pqsift.scan(path, string_view=True).to_table()
    as_views = {pa.string(): pa.string_view(), pa.large_string(): pa.string_view(), pa.binary(): pa.binary_view(), pa.large_binary(): pa.binary_view()}
    assert [f.type for f in views.schema] == [as_views.get(f.type, f.type) for f in plain.schema], name
    assert_same(views.cast(plain.schema), plain, name)


def test_the_corpus_is_all_there() -> None:
    assert len(FILES) >= 220
    assert sum(name.startswith("bad_data/") for name in FILES) == 8


# ----- filters made from the data --------------------------------------------------------


def _comparable(t: pa.DataType) -> bool:
    return (
        (pa.types.is_integer(t) and not pa.types.is_dictionary(t))
        or pa.types.is_float32(t)
        or pa.types.is_float64(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_date32(t)
        or pa.types.is_boolean(t)
    )


def spark_compare(values: pa.ChunkedArray, op: str, value: Any) -> pa.ChunkedArray:
    """``values <op> value`` as a selection with Spark's rules (value is never NaN)."""
    result = {"=": pc.equal, "<": pc.less, ">=": pc.greater_equal}[op](values, pa.scalar(value, type=values.type))
    if pa.types.is_floating(values.type) and op == ">=":
        result = pc.or_(result, pc.is_nan(values))  # NaN is the largest value
    return pc.fill_null(result, False)


def filter_cases(table: pa.Table) -> list[tuple[str, Any, Any]]:
    """(label, pqsift filter, selection on ``table``) for the first comparable column."""
    for name in table.column_names:
        values = table[name]
        if not _comparable(values.type):
            continue
        cases: list[tuple[str, Any, Any]] = [
            (f"{name} IS NULL", col(name).is_null(), pc.is_null(values)),
            (f"{name} IS NOT NULL", ~col(name).is_null(), pc.is_valid(values)),
        ]
        present = [v for v in values.to_pylist() if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if present:
            value = present[len(present) // 2]
            if isinstance(value, datetime.datetime):
                return cases
            ops = ["="] if pa.types.is_boolean(values.type) else ["=", "<", ">="]
            for op in ops:
                expr = {"=": col(name) == value, "<": col(name) < value, ">=": col(name) >= value}[op]
                cases.append((f"{name} {op} {value!r}", expr, spark_compare(values, op, value)))
        return cases
    return []


READABLE = [name for name in FILES if name not in EXPECTED_ERRORS]


@pytest.mark.parametrize("name", READABLE)
def test_generated_filters_match_pyarrow_with_spark_semantics(name: str) -> None:
    path = ROOT / name
    oracle = pyarrow_table(path)
    if oracle is None:
        pytest.skip("pyarrow cannot read it: no oracle")
    for label, expr, selection in filter_cases(oracle):
        expected = oracle.filter(selection)
        for page_index in (True, False):
            got = pqsift.scan(path, filter=expr, page_index=page_index).to_table()
            assert_same(got, expected, f"{name}: {label} (page_index={page_index})")
