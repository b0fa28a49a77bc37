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
