"""Rendering of the pure-Python filter builder (``pqsift.expr``) to Spark SQL text.

These tests need no native module: the builder only produces text, which the Rust parser's
own tests check parses back (see ``rust/filter/tests.rs``, ``python_builder_texts_parse``).
"""

from __future__ import annotations

import datetime
import decimal

import pytest

from pqsift.expr import Expr, col, lit


def sql(expr: Expr) -> str:
    return expr.to_sql()


class TestColumns:
    def test_plain_name_is_back_quoted(self) -> None:
        assert sql(col("price")) == "`price`"

    def test_dots_are_nested_fields(self) -> None:
        assert sql(col("a.b.c")) == "`a`.`b`.`c`"

    def test_back_quotes_make_one_name(self) -> None:
        assert sql(col("`a.b`")) == "`a.b`"
        assert sql(col("`a.b`.c")) == "`a.b`.`c`"

    def test_back_quote_inside_a_name_is_doubled(self) -> None:
        assert sql(col("`we``ird`")) == "`we``ird`"

    def test_reserved_words_and_spaces(self) -> None:
        assert sql(col("select")) == "`select`"
        assert sql(col("my col")) == "`my col`"

    @pytest.mark.parametrize("name", ["", "a.", ".a", "a..b", "`a", "`a`b", "a`b`"])
    def test_invalid_names(self, name: str) -> None:
        with pytest.raises(ValueError):
            col(name)

    def test_name_must_be_str(self) -> None:
        with pytest.raises(TypeError):
            col(3)  # type: ignore[arg-type]


class TestLiterals:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (None, "NULL"),
            (True, "true"),
            (False, "false"),
            (0, "0"),
            (-(2**31), "-2147483648"),
            (2**31 - 1, "2147483647"),
            (2**31, "2147483648L"),
            (-(2**63), "-9223372036854775808L"),
            (2**63, "9223372036854775808BD"),
            (10**37, "10000000000000000000000000000000000000BD"),
        ],
    )
    def test_booleans_and_integers(self, value: object, expected: str) -> None:
        assert sql(lit(value)) == expected  # type: ignore[arg-type]

    def test_integer_with_more_than_38_digits(self) -> None:
        with pytest.raises(ValueError):
            lit(10**38)

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (1.5, "1.5D"),
            (-0.0, "-0.0D"),
            (0.1, "0.1D"),
            (1e-300, "1e-300D"),
            (1e300, "1e+300D"),
            (5e-324, "5e-324D"),
            (float("nan"), "CAST('NaN' AS DOUBLE)"),
            (float("inf"), "CAST('Infinity' AS DOUBLE)"),
            (float("-inf"), "CAST('-Infinity' AS DOUBLE)"),
        ],
    )
    def test_floats_render_exactly(self, value: float, expected: str) -> None:
        assert sql(lit(value)) == expected

    def test_float_text_reads_back_exactly(self) -> None:
        for value in (0.1, 1 / 3, 2.0**-1074, 1.7976931348623157e308, 123456789.125):
            text = sql(lit(value))
            assert float(text.removesuffix("D")) == value

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("1.50", "1.50"),
            ("-0.05", "-0.05"),
            ("42", "42BD"),
            ("1E+3", "1000BD"),
            ("0.000", "0.000"),
        ],
    )
    def test_decimals_keep_their_scale(self, value: str, expected: str) -> None:
        assert sql(lit(decimal.Decimal(value))) == expected

    @pytest.mark.parametrize("value", ["NaN", "Infinity", "1" * 39, "0." + "1" * 39])
    def test_decimals_spark_cannot_hold(self, value: str) -> None:
        with pytest.raises(ValueError):
            lit(decimal.Decimal(value))

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("plain", "'plain'"),
            ("it's", "'it\\'s'"),
            ("back\\slash", "'back\\\\slash'"),
            ("50%_", "'50%_'"),
            ('"quoted"', "'\"quoted\"'"),
            ("é\n", "'é\n'"),
            ("", "''"),
        ],
    )
    def test_strings_escape_quote_and_backslash(self, value: str, expected: str) -> None:
        assert sql(lit(value)) == expected

    def test_bytes(self) -> None:
        assert sql(lit(b"\x00\xab")) == "X'00AB'"
        assert sql(lit(bytearray(b"z"))) == "X'7A'"
        assert sql(lit(b"")) == "X''"

    def test_dates(self) -> None:
        assert sql(lit(datetime.date(2024, 1, 31))) == "DATE '2024-01-31'"
        assert sql(lit(datetime.date(1, 2, 3))) == "DATE '0001-02-03'"

    def test_naive_datetime_is_read_in_the_session_time_zone(self) -> None:
        assert sql(lit(datetime.datetime(2024, 1, 31, 12, 5, 9))) == "TIMESTAMP '2024-01-31 12:05:09'"
        assert (
            sql(lit(datetime.datetime(2024, 1, 31, 0, 0, 0, 250000)))
            == "TIMESTAMP '2024-01-31 00:00:00.25'"
        )

    def test_aware_datetime_keeps_its_offset(self) -> None:
        utc = datetime.datetime(2024, 1, 31, tzinfo=datetime.UTC)
        assert sql(lit(utc)) == "TIMESTAMP '2024-01-31 00:00:00+00:00'"
        minus = datetime.timezone(-datetime.timedelta(hours=5, minutes=30))
        assert sql(lit(datetime.datetime(2024, 1, 31, 1, tzinfo=minus))) == "TIMESTAMP '2024-01-31 01:00:00-05:30'"

    def test_unsupported_values(self) -> None:
        with pytest.raises(TypeError):
            lit([1, 2])  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            lit(object())  # type: ignore[arg-type]

    def test_lit_of_expr_is_the_expr(self) -> None:
        c = col("a")
        assert lit(c) is c


class TestComparisons:
    @pytest.mark.parametrize(
        ("expr", "expected"),
        [
            (col("a") > 1, "`a` > 1"),
            (col("a") >= 1, "`a` >= 1"),
            (col("a") < 1, "`a` < 1"),
            (col("a") <= 1, "`a` <= 1"),
            (col("a") == "x", "`a` = 'x'"),
            (col("a") != None, "`a` != NULL"),  # noqa: E711 - builds SQL, not a test
            (col("a").eq_null_safe(None), "`a` <=> NULL"),
            (col("a") == col("b"), "`a` = `b`"),
        ],
    )
    def test_operators(self, expr: Expr, expected: str) -> None:
        assert sql(expr) == expected

    def test_reflected_comparison_keeps_the_column_left(self) -> None:
        assert sql(5 < col("a")) == "`a` > 5"  # type: ignore[operator]  # noqa: SIM300 - the reflected form is the test

    def test_comparison_of_comparisons_is_parenthesised(self) -> None:
        assert sql((col("a") == 1) == True) == "(`a` = 1) = true"  # noqa: E712

    def test_is_null(self) -> None:
        assert sql(col("a").is_null()) == "`a` IS NULL"
        assert sql(col("a").is_not_null()) == "`a` IS NOT NULL"
        assert sql((col("a") + 1).is_null()) == "`a` + 1 IS NULL"

    def test_isin(self) -> None:
        assert sql(col("a").isin([1, 2, 3])) == "`a` IN (1, 2, 3)"
        assert sql(col("a").isin(1, "x", None)) == "`a` IN (1, 'x', NULL)"
        assert sql(col("a").isin((2.5,))) == "`a` IN (2.5D)"
        with pytest.raises(ValueError):
            col("a").isin([])

    def test_isin_of_integers_writes_each_as_lit_does(self) -> None:
        edges = [0, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, -(2**63), 2**63, 10**37]
        assert sql(col("a").isin(edges)) == f"`a` IN ({', '.join(lit(v).to_sql() for v in edges)})"
        texts = ["a", "it's", "back\\slash", "ü", ""]
        assert sql(col("a").isin(texts)) == f"`a` IN ({', '.join(lit(v).to_sql() for v in texts)})"
        # bool is an int but not written as one.
        assert sql(col("a").isin([1, True])) == "`a` IN (1, true)"

    def test_isin_of_arrays(self) -> None:
        import numpy as np
        import pyarrow as pa

        assert sql(col("a").isin(pa.array([3, None, 2**40]))) == "`a` IN (3, NULL, 1099511627776L)"
        assert sql(col("a").isin(pa.chunked_array([["x"], ["it's"]]))) == "`a` IN ('x', 'it\\'s')"
        assert sql(col("a").isin(pa.array([datetime.date(2024, 1, 2)]))) == "`a` IN (DATE '2024-01-02')"
        assert sql(col("a").isin(np.array([5, -7], np.int32))) == "`a` IN (5, -7)"
        assert sql(col("a").isin(np.array([1.5, 2.0]))) == "`a` IN (1.5D, 2.0D)"
        assert sql(col("a").isin(np.array(["p", "q"]))) == "`a` IN ('p', 'q')"
        assert sql(col("a").isin(np.array([True]))) == "`a` IN (true)"
        with pytest.raises(TypeError, match="datetime64"):
            col("a").isin(np.array(["2024-01-01"], "datetime64[ns]"))
        with pytest.raises(TypeError, match="2-dimensional"):
            col("a").isin(np.array([[1, 2]]))

    def test_between(self) -> None:
        assert sql(col("a").between(1, 10)) == "`a` BETWEEN 1 AND 10"
        assert sql(col("a").between(col("b") - 1, col("b") + 1)) == "`a` BETWEEN `b` - 1 AND `b` + 1"
        assert (
            sql(col("d").between(datetime.date(2024, 1, 1), datetime.date(2024, 12, 31)))
            == "`d` BETWEEN DATE '2024-01-01' AND DATE '2024-12-31'"
        )

    def test_startswith_escapes_like_wildcards(self) -> None:
        assert sql(col("s").startswith("abc")) == "`s` LIKE 'abc%'"
        # The pattern is a\_b\%c\\% (backslash escapes); as a SQL string, each \ doubles.
        assert sql(col("s").startswith("a_b%c\\")) == "`s` LIKE 'a\\\\_b\\\\%c\\\\\\\\%'"
        assert sql(col("s").startswith("it's")) == "`s` LIKE 'it\\'s%'"

    def test_like(self) -> None:
        assert sql(col("s").like("a_%")) == "`s` LIKE 'a_%'"
        with pytest.raises(TypeError):
            col("s").like(5)  # type: ignore[arg-type]


class TestLogic:
    def test_and_or_not(self) -> None:
        a, b, c = col("a") > 1, col("b") > 2, col("c") > 3
        assert sql(a & b | c) == "`a` > 1 AND `b` > 2 OR `c` > 3"
        assert sql(a & (b | c)) == "`a` > 1 AND (`b` > 2 OR `c` > 3)"
        assert sql(a & (b & c)) == "`a` > 1 AND (`b` > 2 AND `c` > 3)"
        assert sql((a & b) & c) == "`a` > 1 AND `b` > 2 AND `c` > 3"
        assert sql(~(a | b)) == "NOT (`a` > 1 OR `b` > 2)"
        assert sql(~a) == "NOT `a` > 1"
        assert sql(~~col("flag")) == "NOT NOT `flag`"

    def test_python_booleans_combine(self) -> None:
        assert sql(True & (col("a") > 1)) == "true AND `a` > 1"  # type: ignore[operator]
        assert sql((col("a") > 1) | False) == "`a` > 1 OR false"

    def test_not_inside_a_comparison_is_parenthesised(self) -> None:
        assert sql(~col("f") == False) == "(NOT `f`) = false"  # noqa: E712

    def test_truth_value_is_an_error(self) -> None:
        with pytest.raises(TypeError, match="&"):
            bool(col("a") > 1)
        with pytest.raises(TypeError):
            _ = (col("a") > 1) and (col("b") > 1)
        with pytest.raises(TypeError):
            _ = 1 < col("a") < 3  # type: ignore[operator]
        with pytest.raises(TypeError):
            if col("a"):
                pass

    def test_unhashable(self) -> None:
        with pytest.raises(TypeError):
            {col("a")}


class TestArithmetic:
    def test_operators_and_precedence(self) -> None:
        a, b, c = col("a"), col("b"), col("c")
        assert sql(a + b * c) == "`a` + `b` * `c`"
        assert sql((a + b) * c) == "(`a` + `b`) * `c`"
        assert sql(a - (b - c)) == "`a` - (`b` - `c`)"
        assert sql((a - b) - c) == "`a` - `b` - `c`"
        assert sql(a / (b * c)) == "`a` / (`b` * `c`)"
        assert sql(a - 1 > 2) == "`a` - 1 > 2"

    def test_reflected_operands(self) -> None:
        assert sql(1 + col("a")) == "1 + `a`"
        assert sql(10 - col("a")) == "10 - `a`"
        assert sql(2 * col("a")) == "2 * `a`"
        assert sql(1 / col("a")) == "1 / `a`"

    def test_unary_minus_and_abs(self) -> None:
        assert sql(-col("a")) == "-(`a`)"
        assert sql(-(-col("a"))) == "-(-(`a`))"  # noqa: B002 - a double negation is the test
        assert sql(col("a") - -1) == "`a` - -1"
        assert sql(abs(col("a") - 5)) == "abs(`a` - 5)"
        assert sql(col("a").abs()) == "abs(`a`)"
        assert sql(+col("a")) == "`a`"

    def test_cast(self) -> None:
        assert sql(col("a").cast("decimal(10, 2)")) == "CAST(`a` AS DECIMAL(10, 2))"
        with pytest.raises(ValueError):
            col("a").cast("int); DROP TABLE x; --")


def test_repr_and_str() -> None:
    e = col("a") > 1
    assert str(e) == "`a` > 1"
    assert repr(e) == "Expr('`a` > 1')"
