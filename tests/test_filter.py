"""Filter text through the public API: parsing, binding to real files, errors naming the
column or token. (Evaluation semantics are tested in Rust: rust/filter/.)"""

from __future__ import annotations

from pathlib import Path

import pytest

import pqsift
from pqsift import col


def test_canonical_text() -> None:
    assert pqsift.parse_filter("a > 1 and b in (1,2)") == "`a` > 1 AND `b` IN (1, 2)"
    assert pqsift.parse_filter("`a.b` = 'x' OR c.d IS NULL") == "`a.b` = 'x' OR `c`.`d` IS NULL"


def test_builder_text_parses_to_itself() -> None:
    expr = (col("x") > 5) & col("s").startswith("ab_") | ~col("flag") & col("d").isin([1, 2, None])
    text = str(expr)
    assert pqsift.parse_filter(text) == pqsift.parse_filter(pqsift.parse_filter(text))


@pytest.mark.parametrize("text, token", [("a >> 1", ">>"), ("a = ", ""), ("foo(a) = 1", "foo"), ("a = 1 garbage", "garbage")])
def test_syntax_errors_name_the_token(text: str, token: str) -> None:
    with pytest.raises(pqsift.FilterError) as info:
        pqsift.parse_filter(text)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert token in message or (token == ">>" and "ShiftRight" in message)


def test_binding_to_a_corpus_file(corpus: Path) -> None:
    path = str(corpus / "data" / "alltypes_plain.parquet")
    assert pqsift.parse_filter("ID > 3 AND string_col = '1'", path) == "`ID` > 3 AND `string_col` = '1'"
    with pytest.raises(pqsift.FilterError, match="nope"):
        pqsift.parse_filter("nope = 1", path)
    with pytest.raises(pqsift.FilterError, match=r"date_string_col|bool_col"):
        pqsift.parse_filter("bool_col > DATE '2020-01-01'", path)
    # Spark resolves names case-insensitively by default; spark.sql.caseSensitive=true does not.
    with pytest.raises(pqsift.FilterError, match="ID"):
        pqsift.parse_filter("ID > 3", path, case_sensitive=True)


def test_binding_errors_before_reading_a_corrupt_file(corpus: Path) -> None:
    with pytest.raises(pqsift.CorruptFileError, match="PARQUET-1481"):
        pqsift.parse_filter("a = 1", str(corpus / "bad_data" / "PARQUET-1481.parquet"))


def _filters_at_the_operator_limit() -> list[object]:
    """Filters of exactly the parser's most operators (1,000), each a chain nesting one level
    per operator, with the values of `a` (0..999 and a null) each keeps."""
    ors = " OR ".join(f"a = {v}" for v in range(500))  # 500 `=`, 499 `OR`
    ands = " AND ".join(f"a <> {v}" for v in range(500))
    sums = "a" + " + 1" * 999  # 999 `+`
    return [
        pytest.param(f"NOT ({ors})", list(range(500, 1000)), id="or-chain"),
        pytest.param(f"NOT ({ands})", list(range(500)), id="and-chain"),
        pytest.param(f"{sums} = 1500", [501], id="sum-chain"),
    ]


@pytest.mark.parametrize("text, kept", _filters_at_the_operator_limit())
def test_filters_at_the_operator_limit_fit_a_2_mib_thread_stack(tmp_path: Path, text: str, kept: list[int]) -> None:
    """Parsing, binding, pruning and evaluation recurse on a filter's nesting: within the
    operator limit they must not overflow a 2 MiB stack (Rust's default for a thread, and so
    the reader threads'), in the release build users install. A chain of additions at the
    limit crashed the process before those steps grew the stack. Parsing and binding run on
    the calling thread, here one started with a 2 MiB stack; evaluation on pqsift's reader
    threads. One operator more is refused."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"a": pa.array([*range(1000), None], pa.int64())}), path, row_group_size=300)

    def scan() -> list[int]:
        values: list[int] = pqsift.scan(str(path), filter=text, threads=2).to_table().column("a").to_pylist()
        with pytest.raises(pqsift.FilterError, match="too many operators"):
            pqsift.scan(str(path), filter=f"a > 0 AND ({text})")
        return values

    previous = threading.stack_size(2 << 20)  # for the threads started from here on
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            values = pool.submit(scan).result()  # an error raised in `scan` is raised here
    finally:
        threading.stack_size(previous)
    assert sorted(values) == kept
