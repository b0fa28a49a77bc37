"""pqsift.scan: planning from metadata (statistics, bloom filters, page index), explain,
metrics and errors, on files written here and on the parquet-testing corpus."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift
from pqsift import col
from pqsift._core import column_pages


def int_file(path: Path, n: int = 1000, row_group_size: int = 100, page_rows: int | None = None, **kw: Any) -> Path:
    table = pa.table({"x": pa.array(range(n), pa.int64()), "s": [f"k{i:04d}" for i in range(n)]})
    extra: dict[str, Any] = {"write_page_index": page_rows is not None}
    if page_rows is not None:
        extra.update(data_page_size=1, write_batch_size=page_rows)
    pq.write_table(table, path, row_group_size=row_group_size, use_dictionary=False, **extra, **kw)
    return path


def plan_rows_ok(plan: pqsift.Plan, rows: list[dict[str, Any]], matches: Callable[[dict[str, Any]], bool | None]) -> None:
    """No row the filter accepts is skipped or left out of a selection."""
    (file,) = plan.files
    start = 0
    for rg in file.row_groups:
        mask = rg.selection.to_mask() if rg.selection is not None else None
        for k in range(rg.rows):
            if matches(rows[start + k]) is True:
                assert rg.decision != "skip", (start + k, rg)
                assert mask is None or mask[k], (start + k, rg)
        start += rg.rows


# --- statistics -------------------------------------------------------------------------


def test_statistics_skip_row_groups_and_explain(tmp_path: Path) -> None:
    path = int_file(tmp_path / "t.parquet")
    scan = pqsift.scan(str(path), filter="x >= 850")
    plan = scan.plan()
    decisions = [rg.decision for rg in plan.files[0].row_groups]
    assert decisions == ["skip"] * 8 + ["scan"] * 2
    m = scan.metrics
    assert m["files_total"] == 1 and m["files_pruned"] == 0
    assert m["row_groups_total"] == 10
    assert m["row_groups_pruned_statistics"] == 8
    assert m["row_groups_pruned_bloom_filter"] == 0
    # No page index: the two row groups' pages (one each) are judged by their headers.
    assert m["pages_total"] == 2 and m["pages_pruned"] == 0
    assert m["rows_total"] == 1000 and m["rows_selected"] == 200
    text = scan.explain()
    assert "row group 0: skipped by statistics" in text
    assert "row group 0: skipped by statistics: max(x)=99 < 850" in text
    assert "row group 9: scan all 100 rows" in text
    assert plan.explain() == text
    rg = plan.files[0].row_groups[0]
    assert rg["decision"] == rg.decision == "skip" and rg.stage == "statistics" and rg.selection is None
    assert plan.files[0]["path"] == str(path) and plan["metrics"] == m


def test_filter_as_expr_and_no_filter(tmp_path: Path) -> None:
    path = int_file(tmp_path / "t.parquet")
    assert pqsift.scan(path, filter=(col("x") < 150) & (col("s") >= "k0100")).metrics["row_groups_pruned_statistics"] == 9
    plan = pqsift.scan(path).plan()
    assert all(rg.decision == "scan" for rg in plan.files[0].row_groups)
    assert plan.metrics["rows_selected"] == 1000


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("x + 1 > 950", [9]),
        ("-x > -150", [0, 1]),
        ("x * 2 < 250", [0, 1]),
        ("x / 2 >= 480", [9]),
        ("CAST(x AS DOUBLE) < 99.5", [0]),
        ("x * x > 980000", list(range(10))),  # not monotone: nothing pruned
        ("NOT (x < 900)", [9]),
        ("x BETWEEN 250 AND 320", [2, 3]),
        ("x NOT BETWEEN 100 AND 899", [0, 9]),
        ("x IN (5, 512)", [0, 5]),
        ("x IN (1, 2, 3) AND x IN (5, 6)", []),
        ("x IN (1, 200, 300) AND x IN (200, 300, 400)", [2, 3]),
        ("x = 5 OR x > 990", [0, 9]),
        ("x IS NULL", []),
        ("x IS NOT NULL", list(range(10))),
        ("x <=> 420", [4]),
        ("x != 5", list(range(10))),
        ("s LIKE 'k03%'", [3]),
        ("s LIKE 'k0%' AND NOT s LIKE 'k00%'", list(range(1, 10))),
        ("s = 'k0777'", [7]),
        ("x > 9999999999", []),
        ("x > 5 AND FALSE", []),
        ("x > 500 AND x < 300", []),
        ("x >= 300 AND x <= 300", [3]),
        ("x IN (1, 2, 700) AND x < 500", [0]),
        ("x IN (1, 2, 3) AND x > 3", []),
    ],
)
def test_statistics_decisions(tmp_path: Path, text: str, kept: list[int]) -> None:
    path = int_file(tmp_path / "t.parquet")
    plan = pqsift.scan(path, filter=text, bloom_filter=False).plan()
    assert [rg.index for rg in plan.files[0].row_groups if rg.decision != "skip"] == kept
    rows = pq.read_table(path).to_pylist()
    assert plan.metrics["rows_selected"] == 100 * len(kept)
    assert rows  # the soundness of these is covered by the property test


def test_stage_switches(tmp_path: Path) -> None:
    path = int_file(tmp_path / "t.parquet", page_rows=10)
    off = pqsift.scan(path, filter="x >= 850", statistics=False, page_index=False).plan()
    assert off.metrics["row_groups_pruned_statistics"] == 0 and off.metrics["rows_selected"] == 1000
    pages_only = pqsift.scan(path, filter="x >= 855", statistics=False).plan()
    assert pages_only.metrics["row_groups_pruned_page_index"] == 8
    assert pages_only.metrics["rows_selected"] == 150


@pytest.mark.parametrize(
    ("where", "reasons"),
    [
        ("x > 950", {0: "max(x)=99 <= 950", 1: "max(x)=199 <= 950"}),
        ("x <= 50", {1: "min(x)=100 > 50"}),
        ("x = 5", {1: "5 is outside [min(x)=100, max(x)=199]", 2: "5 is outside [min(x)=200, max(x)=299]"}),
        ("x IN (1, 2, 3, 4, 5, 6, 7)", {1: "none of (1, 2, 3, 4, 5, ... 7 values in all) is inside [min(x)=100, max(x)=199]"}),
        ("s IN ('k0001', 'k0002')", {2: "none of (k0001, k0002) is inside [min(s)=k0200, max(s)=k0299]"}),
        ("x < 50 AND s >= 'k0990'", {0: "max(s)=k0099 < k0990", 1: "min(x)=100 >= 50"}),
    ],
)
def test_statistics_reasons_name_the_bound_and_the_condition(tmp_path: Path, where: str, reasons: dict[int, str]) -> None:
    """Each row group the statistics skip is named by the conjunct that rules it out, its
    zone map's bound and the condition's values (the bounds formatted per row group, the
    values once per conjunct)."""
    row_groups = pqsift.scan(int_file(tmp_path / "t.parquet"), filter=where).plan().files[0].row_groups
    for index, reason in reasons.items():
        assert (row_groups[index].decision, row_groups[index].reason) == ("skip", reason)


def test_all_null_and_empty_row_groups(tmp_path: Path) -> None:
    path = tmp_path / "n.parquet"
    values = [None] * 100 + list(range(100))
    pq.write_table(pa.table({"x": pa.array(values, pa.int32())}), path, row_group_size=100)
    assert [rg.decision for rg in pqsift.scan(path, filter="x < 1000").plan().files[0].row_groups] == ["skip", "scan"]
    assert [rg.decision for rg in pqsift.scan(path, filter="x IS NULL").plan().files[0].row_groups] == ["scan", "skip"]
    assert [rg.decision for rg in pqsift.scan(path, filter="NOT (x = 5)").plan().files[0].row_groups] == ["skip", "scan"]
    assert [rg.decision for rg in pqsift.scan(path, filter="x <=> NULL").plan().files[0].row_groups] == ["scan", "skip"]
    text = pqsift.scan(path, filter="x < 5 AND x IS NULL").explain()
    assert "row group 0: skipped by statistics: all 100 values of x are NULL" in text
    assert "row group 1: skipped by statistics: null_count(x)=0" in text


def test_types_dates_timestamps_decimals_strings(tmp_path: Path) -> None:
    path = tmp_path / "types.parquet"
    n = 40
    table = pa.table(
        {
            "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(n)], pa.date32()),
            "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(hours=i) for i in range(n)], pa.timestamp("us", tz="UTC")),
            "m": pa.array([Decimal(i) / 4 for i in range(n)], pa.decimal128(9, 2)),
            "tiny": pa.array([i - 20 for i in range(n)], pa.int8()),
            "b": pa.array([i % 20 < 10 for i in range(n)], pa.bool_()),
            "u": pa.array(["a", "é", "z", "ab"] * 10, pa.string()),
        }
    )
    pq.write_table(table, path, row_group_size=10)

    def kept(text: str) -> list[int]:
        return [rg.index for rg in pqsift.scan(path, filter=text).plan().files[0].row_groups if rg.decision != "skip"]

    assert kept("d >= DATE '2024-02-01'") == [3]
    assert kept("CAST(d AS TIMESTAMP) < TIMESTAMP '2024-01-05 00:00:00'") == [0]
    assert kept("ts >= TIMESTAMP '2024-01-02 12:00:00'") == [3]
    assert kept("m > 7.5") == [3]
    assert kept("m = 2.25") == [0]
    assert kept("tiny > 1000") == []  # widened comparison: always false
    assert kept("tiny < -15") == [0]
    assert kept("b") == [0, 2]  # row groups 1 and 3 are all false
    assert kept("NOT b") == [1, 3]
    assert kept("u > 'é'") == []  # 'é' (U+00E9) is above every ASCII letter
    assert kept("u >= 'z'") == [0, 1, 2, 3]


# --- page index -------------------------------------------------------------------------


def test_page_index_selection_and_metrics(tmp_path: Path) -> None:
    path = int_file(tmp_path / "p.parquet", row_group_size=1000, page_rows=100)
    scan = pqsift.scan(path, filter="x >= 850")
    plan = scan.plan()
    (rg,) = plan.files[0].row_groups
    assert rg.decision == "select"
    assert rg.selection is not None and rg.selection.selected_ranges() == [(800, 1000)]
    m = scan.metrics
    assert (m["pages_total"], m["pages_pruned"], m["page_index_rows_pruned"]) == (10, 8, 800)
    assert "2 of 10 pages kept (page index)" in scan.explain()


def test_page_index_combines_unaligned_columns(tmp_path: Path) -> None:
    path = tmp_path / "u.parquet"
    n = 2000
    rows = [{"a": i, "b": f"{i:06d}" + "x" * 30} for i in range(n)]
    pq.write_table(pa.Table.from_pylist(rows), path, data_page_size=2000, write_batch_size=10, use_dictionary=False, write_page_index=True)
    a_pages = [first for _, first in ((p[0], p[2]) for p in column_pages(str(path), "a")[0][1])]
    b_pages = [first for _, first in ((p[0], p[2]) for p in column_pages(str(path), "b")[0][1])]
    assert a_pages != b_pages
    for text, fn in [
        ("a < 300 AND b >= '000200'", lambda r: 200 <= r["a"] < 300),
        ("a < 300 OR b >= '001900'", lambda r: r["a"] < 300 or r["a"] >= 1900),
        ("NOT (a >= 300) AND NOT (b < '000250')", lambda r: 250 <= r["a"] < 300),
    ]:
        plan = pqsift.scan(path, filter=text).plan()
        plan_rows_ok(plan, rows, fn)
        (rg,) = plan.files[0].row_groups
        assert rg.decision == "select"
        assert rg.selected_rows < n // 2


def test_file_without_page_index_or_page_statistics_still_plans(tmp_path: Path) -> None:
    path = int_file(tmp_path / "np.parquet", row_group_size=1000, data_page_size=1, write_batch_size=100, write_statistics=False)
    scan = pqsift.scan(path, filter="x >= 850")
    plan = scan.plan()
    assert [rg.decision for rg in plan.files[0].row_groups] == ["scan"]
    assert plan.metrics["pages_total"] == 0
    assert "page index: the file has none" in scan.explain()


@pytest.mark.parametrize("data_page_version", ["1.0", "2.0"])
def test_pages_are_pruned_by_their_header_statistics_without_a_page_index(tmp_path: Path, data_page_version: str) -> None:
    # pyarrow writes no page index by default, but puts each data page's statistics in
    # its header: pages are pruned by those, and the read decodes the kept pages only.
    path = tmp_path / "h.parquet"
    n = 1000
    table = pa.table(
        {
            "x": pa.array([None if i % 97 == 0 else i for i in range(n)], pa.int64()),
            "s": [f"k{i:04d}" for i in range(n)],
            "f": pa.array([math.nan if i % 89 == 0 else float(i) for i in range(n)], pa.float64()),
        }
    )
    pq.write_table(
        table, path, row_group_size=n, use_dictionary=False, data_page_size=1, write_batch_size=100,
        data_page_version=data_page_version,
    )
    assert not pq.ParquetFile(path).metadata.row_group(0).column(0).has_offset_index
    cases: list[tuple[str, Callable[[dict[str, Any]], bool | None], int]] = [
        ("x >= 850", lambda r: r["x"] is not None and r["x"] >= 850, 8),
        ("s < 'k0150'", lambda r: r["s"] < "k0150", 8),
        ("x IS NULL", lambda r: r["x"] is None, 0),
        # NaN is above every number in Spark, and a page header says nothing of NaN.
        ("f > 990", lambda r: math.isnan(r["f"]) or r["f"] > 990, 0),
        # Pages are counted per column: 8 of each column's 10.
        ("x < 100 OR s >= 'k0900'", lambda r: (r["x"] is not None and r["x"] < 100) or r["s"] >= "k0900", 16),
    ]
    rows = table.to_pylist()
    for text, matches, pruned in cases:
        scan = pqsift.scan(path, filter=text)
        plan = scan.plan()
        plan_rows_ok(plan, rows, matches)
        assert (scan.metrics["pages_total"] > 0, scan.metrics["pages_pruned"]) == (True, pruned), text
        if pruned:
            assert "pages kept (page headers)" in scan.explain()
        expected = [r for r in rows if matches(r) is True]
        got = pqsift.scan(path, filter=text).to_table().to_pylist()
        assert len(got) == len(expected) and all(a["s"] == b["s"] for a, b in zip(got, expected, strict=True)), text


def _expected_pages(path: Path, column: str, values: list[Any], keep: Callable[[Any], bool]) -> tuple[int, int, list[tuple[int, int]]]:
    """Pages of `column` and the ones with a row `keep` accepts (exact for one-sided ranges
    on exact bounds)."""
    (rows, pages, _), = column_pages(str(path), column)
    starts = [p[2] for p in pages] + [rows]
    kept = [(starts[k], starts[k + 1]) for k in range(len(pages)) if any(keep(v) for v in values[starts[k] : starts[k + 1]])]
    merged: list[tuple[int, int]] = []
    for start, end in kept:
        if merged and merged[-1][1] == start:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return len(pages), len(pages) - len(kept), merged


def test_corpus_alltypes_tiny_pages(corpus: Path) -> None:
    for name in ("alltypes_tiny_pages.parquet", "alltypes_tiny_pages_plain.parquet"):
        path = corpus / "data" / name
        rows = pq.read_table(path).to_pylist()
        ids = [r["id"] for r in rows]
        total, pruned, ranges = _expected_pages(path, "id", ids, lambda v: v < 100)
        scan = pqsift.scan(path, filter="id < 100")
        plan = scan.plan()
        (rg,) = plan.files[0].row_groups
        assert rg.decision == "select"
        assert rg.selection.selected_ranges() == ranges
        m = scan.metrics
        assert (m["pages_total"], m["pages_pruned"]) == (total, pruned)
        assert m["row_groups_pruned_statistics"] == 0
        assert m["page_index_rows_pruned"] == 7300 - sum(e - s for s, e in ranges)
        for text, fn in [
            ("int_col = 5 AND bool_col", lambda r: r["int_col"] == 5 and r["bool_col"]),
            ("string_col IN ('1', '2') OR id > 7000", lambda r: r["string_col"] in ("1", "2") or r["id"] > 7000),
            ("timestamp_col >= TIMESTAMP '2010-12-31 00:00:00'", lambda r: r["timestamp_col"] >= dt.datetime(2010, 12, 31)),
            ("tinyint_col + 1 > 9", lambda r: r["tinyint_col"] + 1 > 9),
            ("-bigint_col < -80", lambda r: -r["bigint_col"] < -80),
            ("float_col > 8.5", lambda r: r["float_col"] > 8.5),
            ("smallint_col BETWEEN 3 AND 4", lambda r: 3 <= r["smallint_col"] <= 4),
        ]:
            plan_rows_ok(pqsift.scan(path, filter=text).plan(), rows, fn)


def test_corpus_int32_with_null_pages(corpus: Path) -> None:
    path = corpus / "data" / "int32_with_null_pages.parquet"
    values = pq.read_table(path).column(0).to_pylist()
    rows = [{"v": v} for v in values]
    for text, keep in [
        ("int32_field > 0", lambda v: v is not None and v > 0),
        ("int32_field < -1000000", lambda v: v is not None and v < -1_000_000),
    ]:
        total, pruned, ranges = _expected_pages(path, "int32_field", values, keep)
        scan = pqsift.scan(path, filter=text)
        plan = scan.plan()
        assert (scan.metrics["pages_total"], scan.metrics["pages_pruned"]) == (total, pruned)
        plan_rows_ok(plan, rows, lambda r, keep=keep: keep(r["v"]))
        (rg,) = plan.files[0].row_groups
        if rg.decision == "select":
            assert rg.selection.selected_ranges() == ranges
    # IS NULL keeps exactly the pages holding a null (the null page among them).
    total, pruned, ranges = _expected_pages(path, "int32_field", values, lambda v: v is None)
    scan = pqsift.scan(path, filter="int32_field IS NULL")
    assert (scan.metrics["pages_total"], scan.metrics["pages_pruned"]) == (total, pruned)


def test_corpus_binary_truncated_min_max(corpus: Path) -> None:
    path = corpus / "data" / "binary_truncated_min_max.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    for column in ("utf8_full_truncation", "utf8_partial_truncation", "utf8_no_truncation"):
        for value in table.column(column).to_pylist():
            quoted = value.replace("'", "\\'")
            plan = pqsift.scan(path, filter=f"{column} = '{quoted}'").plan()
            plan_rows_ok(plan, rows, lambda r, c=column, v=value: r[c] == v)
            plan = pqsift.scan(path, filter=f"{column} >= '{quoted}'").plan()
            plan_rows_ok(plan, rows, lambda r, c=column, v=value: r[c] >= v)
    for column in ("binary_full_truncation", "binary_partial_truncation"):
        for value in table.column(column).to_pylist():
            plan = pqsift.scan(path, filter=f"{column} = X'{value.hex()}'").plan()
            plan_rows_ok(plan, rows, lambda r, c=column, v=value: r[c] == v)


def test_corpus_floating_orders_nan_count_keeps_nan_rows(corpus: Path) -> None:
    """Spark: `x > 100` must return the 14 NaN rows; pruning must keep them."""
    path = corpus / "data" / "floating_orders_nan_count.parquet"
    rows = pq.read_table(path).to_pylist()
    for column in ("float_ieee754", "float_typedef", "double_ieee754", "double_typedef"):
        scan = pqsift.scan(path, filter=f"{column} > 100")
        plan = scan.plan()
        nan_rows = [i for i, r in enumerate(rows) if math.isnan(r[column])]
        assert len(nan_rows) == 14
        plan_rows_ok(plan, rows, lambda r, c=column: math.isnan(r[c]))
        assert scan.metrics["rows_selected"] >= 14
        for text, fn in [
            (f"{column} = CAST('NaN' AS DOUBLE)", lambda r, c=column: math.isnan(r[c])),
            (f"{column} = 0.0", lambda r, c=column: r[c] == 0.0),
            (f"{column} < -4.5", lambda r, c=column: r[c] < -4.5),
            (f"-{column} > 4.5", lambda r, c=column: -r[c] > 4.5),
        ]:
            plan_rows_ok(pqsift.scan(path, filter=text).plan(), rows, fn)


# --- bloom filters ----------------------------------------------------------------------


def test_corpus_bloom_filter_files(corpus: Path) -> None:
    for name in ("data_index_bloom_encoding_stats.parquet", "data_index_bloom_encoding_with_length.parquet"):
        path = corpus / "data" / name
        present = pqsift.scan(path, filter="String = 'Hello'")
        assert present.metrics["row_groups_pruned_bloom_filter"] == 0
        assert present.metrics["rows_selected"] == 14
        # Within the min/max range, so only the bloom filter can rule it out.
        absent = pqsift.scan(path, filter="String = 'Hellp'")
        assert absent.metrics["row_groups_pruned_statistics"] == 0
        assert absent.metrics["row_groups_pruned_bloom_filter"] == 1
        assert absent.metrics["files_pruned"] == 1
        assert "skipped by bloom filter" in absent.explain()
        off = pqsift.scan(path, filter="String = 'Hellp'", bloom_filter=False)
        assert off.metrics["row_groups_pruned_bloom_filter"] == 0
        mixed = pqsift.scan(path, filter="String IN ('Hellp', 'dog') OR String = 'zzz'")
        assert mixed.metrics["row_groups_pruned_bloom_filter"] == 0


def test_bloom_filters_on_written_files_hash_the_physical_type(tmp_path: Path) -> None:
    path = tmp_path / "bloom.parquet"
    n = 400
    evens = list(range(0, 2 * n, 2))
    table = pa.table(
        {
            "i8": pa.array([v % 100 * 2 - 100 for v in range(n)], pa.int8()),
            "i16": pa.array([v * 2 - 300 for v in range(n)], pa.int16()),
            "i64": pa.array(evens, pa.int64()),
            "d": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=v) for v in evens], pa.date32()),
            "ts": pa.array([dt.datetime(2020, 1, 1) + dt.timedelta(seconds=v) for v in evens], pa.timestamp("us", tz="UTC")),
            "tms": pa.array([dt.datetime(2020, 1, 1) + dt.timedelta(seconds=v) for v in evens], pa.timestamp("ms", tz="UTC")),
            "m9": pa.array([Decimal(v) / 100 for v in evens], pa.decimal128(9, 2)),
            "m18": pa.array([Decimal(v) / 100 for v in evens], pa.decimal128(18, 2)),
            "m30": pa.array([Decimal(v) / 100 for v in evens], pa.decimal128(30, 2)),
            "f": pa.array([float(v) + 0.5 for v in evens], pa.float64()),
            "s": pa.array([f"v{v:05d}" for v in evens], pa.string()),
        }
    )
    pq.write_table(table, path, bloom_filter_options={c: {"ndv": 1000, "fpp": 0.01} for c in table.column_names})
    present = {
        "i8": "i8 = -2",
        "i16": "i16 = 2",
        "i64": "i64 = 402",
        "d": "d = DATE '2020-01-03'",
        "ts": "ts = TIMESTAMP '2020-01-01 00:00:04'",
        "tms": "tms = TIMESTAMP '2020-01-01 00:00:04'",
        "m9": "m9 = 4.02",
        "m18": "m18 = 4.02",
        "m30": "m30 = 4.02",
        "f": "f = 402.5",
        "s": "s = 'v00402'",
    }
    absent = {
        "i8": "i8 = -3",
        "i16": "i16 = 3",
        "i64": "i64 = 401",
        "d": "d = DATE '2020-01-04'",
        "ts": "ts = TIMESTAMP '2020-01-01 00:00:05'",
        "tms": "tms = TIMESTAMP '2020-01-01 00:00:05'",
        "m9": "m9 = 4.01",
        "m18": "m18 = 4.01",
        "m30": "m30 = 4.01",
        "f": "f = 401.5",
        "s": "s = 'v00401'",
    }
    for column in table.column_names:
        kept = pqsift.scan(path, filter=present[column]).metrics
        assert kept["row_groups_pruned_bloom_filter"] == 0, column
        assert kept["bloom_filters_checked"] == 1, column
        pruned = pqsift.scan(path, filter=absent[column]).metrics
        assert pruned["row_groups_pruned_statistics"] == 0, column
        assert pruned["row_groups_pruned_bloom_filter"] == 1, column


def test_bloom_filter_skips_float_zero_and_nan(tmp_path: Path) -> None:
    path = tmp_path / "fz.parquet"
    pq.write_table(pa.table({"f": pa.array([-0.0, 1.0, math.nan], pa.float64())}), path, bloom_filter_options={"f": {"ndv": 16, "fpp": 0.05}})
    assert pqsift.scan(path, filter="f = 0.0").metrics["rows_selected"] == 3
    assert pqsift.scan(path, filter="f = CAST('NaN' AS DOUBLE)").metrics["rows_selected"] == 3


# --- sources, options and errors --------------------------------------------------------


def test_directory_sources_and_lists(tmp_path: Path) -> None:
    # A plain subdirectory (a `key=value` one beside a top-level file would be Spark's
    # conflicting partition layout: see test_tables.py).
    (tmp_path / "sub").mkdir()
    int_file(tmp_path / "sub" / "a.parquet")
    int_file(tmp_path / "b.parquet", n=100)
    int_file(tmp_path / "_hidden.parquet")
    int_file(tmp_path / ".dot.parquet")
    (tmp_path / "_SUCCESS").write_text("")
    scan = pqsift.scan(tmp_path, filter="x >= 200")
    assert [Path(f).name for f in scan.files] == ["b.parquet", "a.parquet"]
    m = scan.metrics
    assert (m["files_total"], m["files_pruned"], m["row_groups_total"]) == (2, 1, 11)
    assert [Path(f.path).name for f in scan.plan().files if not f.pruned] == ["a.parquet"]
    listed = pqsift.scan([tmp_path / "b.parquet", str(tmp_path / "sub" / "a.parquet")], filter="x < 10")
    assert listed.metrics["files_pruned"] == 0


def test_file_range_keeps_row_groups_by_midpoint(tmp_path: Path) -> None:
    path = int_file(tmp_path / "r.parquet")
    size = path.stat().st_size
    halves = [pqsift.scan(path, file_range=(0, size // 2)).plan(), pqsift.scan(path, file_range=(size // 2, size)).plan()]
    kept = [[rg.index for rg in p.files[0].row_groups if rg.decision != "skip"] for p in halves]
    assert sorted(kept[0] + kept[1]) == list(range(10))
    assert kept[0] and kept[1]
    assert halves[0].metrics["row_groups_pruned_range"] == 10 - len(kept[0])
    with pytest.raises(ValueError, match="exactly one file"):
        pqsift.scan([path, path], file_range=(0, 10))


def test_errors(tmp_path: Path) -> None:
    path = int_file(tmp_path / "t.parquet")
    with pytest.raises(TypeError, match="bogus"):
        pqsift.scan(path, bogus=True)
    with pytest.raises(pqsift.FilterError):
        pqsift.scan(path, filter="x >>> 1")
    with pytest.raises(pqsift.FilterError, match="nope"):
        pqsift.scan(path, filter="nope = 1")
    with pytest.raises(pqsift.FilterError):
        pqsift.scan(path, columns=["nope"])
    with pytest.raises(TypeError):
        pqsift.scan(path, filter=42)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 this is not parquet PAR1")
    with pytest.raises(pqsift.CorruptFileError, match=r"bad\.parquet"):
        pqsift.scan(bad, filter="x > 1")
    with pytest.raises(pqsift.CorruptFileError, match=r"bad\.parquet"):
        pqsift.scan([path, bad], filter="x > 1").plan()
    with pytest.raises(pqsift.PqsiftIOError):
        pqsift.scan(tmp_path / "missing.parquet")


def test_case_insensitive_columns_and_options(tmp_path: Path) -> None:
    path = int_file(tmp_path / "t.parquet")
    assert pqsift.scan(path, filter="X >= 850").metrics["row_groups_pruned_statistics"] == 8
    with pytest.raises(pqsift.FilterError):
        pqsift.scan(path, filter="X >= 850", case_sensitive=True)


def test_bloom_filters_on_integer_stored_decimals(tmp_path: Path) -> None:
    path = tmp_path / "dec.parquet"
    values = [Decimal(v) / 100 for v in range(0, 800, 2)]
    table = pa.table({"m9": pa.array(values, pa.decimal128(9, 2)), "m18": pa.array(values, pa.decimal128(18, 2))})
    pq.write_table(table, path, store_decimal_as_integer=True, bloom_filter_options={c: {"ndv": 1000, "fpp": 0.01} for c in table.column_names})
    physical = [pq.ParquetFile(path).schema.column(i).physical_type for i in range(2)]
    assert physical == ["INT32", "INT64"]
    for column in ("m9", "m18"):
        assert pqsift.scan(path, filter=f"{column} = 4.02").metrics["row_groups_pruned_bloom_filter"] == 0
        assert pqsift.scan(path, filter=f"{column} = 4.01").metrics["row_groups_pruned_bloom_filter"] == 1


def test_empty_file_is_not_counted_as_pruned(tmp_path: Path) -> None:
    path = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"x": pa.array([], pa.int64())}), path)
    scan = pqsift.scan(path, filter="x > 1")
    m = scan.metrics
    assert (m["files_total"], m["files_pruned"], m["rows_total"]) == (1, 0, 0)
    assert "0 of 0 rows selected" in scan.explain() or "0 of" in scan.explain()


def test_dictionary_columns_are_pruned_through_their_values(tmp_path: Path) -> None:
    path = tmp_path / "dict.parquet"
    words = [w for w in ["apple", "banana", "cherry", "damson"] for _ in range(25)]
    table = pa.table({"c": pa.array(words).dictionary_encode()})
    pq.write_table(table, path, row_group_size=25, write_page_index=True)
    assert pq.ParquetFile(path).schema_arrow.field("c").type == pa.dictionary(pa.int32(), pa.string())
    rows = table.to_pylist()
    for text, fn in [
        ("c = 'banana'", lambda r: r["c"] == "banana"),
        ("c > 'b'", lambda r: r["c"] > "b"),
        ("c LIKE 'ch%'", lambda r: r["c"].startswith("ch")),
        ("c IN ('apple', 'damson')", lambda r: r["c"] in ("apple", "damson")),
    ]:
        plan = pqsift.scan(path, filter=text).plan()
        plan_rows_ok(plan, rows, fn)
        assert plan.metrics["rows_selected"] < 100, text
    assert pqsift.scan(path, filter="c = 'banana'").metrics["rows_selected"] == 25


def test_read_bytes_count_the_pages_of_the_columns_read(tmp_path: Path) -> None:
    """``read_bytes`` of a planned row group: the projected and filtered columns' pages
    holding a selected row (and their dictionaries), never the other columns — what the
    Spark layer weighs before reading a small result on the driver."""
    import numpy as np

    rows = 200_000
    rng = np.random.default_rng(3)
    data = {"id": np.arange(rows, dtype=np.int64)} | {f"c{i}": rng.integers(0, 1 << 40, rows) for i in range(12)}
    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table(data), path, row_group_size=rows, write_page_index=True, data_page_size=64 << 10, use_dictionary=False)
    chunks = pq.ParquetFile(path).metadata.row_group(0)
    sizes = {chunks.column(i).path_in_schema: chunks.column(i).total_compressed_size for i in range(chunks.num_columns)}
    pages = {name: column_pages(str(path), name)[0][1] for name in sizes}  # (offset, size, first row)

    def holding(name: str, first: int, last: int) -> int:
        """The compressed bytes of the pages of `name` holding a row of first..last."""
        located = pages[name]
        ends = [page[2] for page in located[1:]] + [rows]
        return sum(page[1] for page, end in zip(located, ends, strict=True) if page[2] <= last and end > first)

    scan = pqsift.scan(path, ["id", "c3"], "id = 150000")
    (rg,) = scan.plan().files[0].row_groups
    first = [page[2] for page in pages["id"] if page[2] <= 150_000][-1]  # the id page holding 150000
    last = first + rg.selected_rows - 1
    assert rg.decision == "select" and rg.compressed_bytes == sum(sizes.values())
    assert rg.read_bytes == holding("id", first, last) + holding("c3", first, last)
    assert rg.read_bytes * 5 < rg.compressed_bytes * rg.selected_rows // rows  # the old estimate: every column
    unfiltered = pqsift.scan(path, ["c3"]).plan().files[0].row_groups[0]
    assert unfiltered.read_bytes == sizes["c3"]
    everything = pqsift.scan(path).plan().files[0].row_groups[0]
    assert everything.read_bytes == rg.compressed_bytes
    from pqsift.spark.planning import plan_tasks

    assert plan_tasks(path, ["id", "c3"], "id = 150000").selected_bytes == rg.read_bytes


def test_a_scan_read_with_other_read_options_keeps_its_own(tmp_path: Path) -> None:
    """``Scan._with_read_options`` (how the Spark driver reads the scan it planned): the
    options given are checked and used, the scan's own (an ORDER BY already settled into
    triples among them) kept."""
    pq.write_table(pa.table({"id": list(range(100, 0, -1))}), tmp_path / "t.parquet", row_group_size=10)
    planned = pqsift.scan(tmp_path / "t.parquet", ["id"], order_by="id", limit=3)
    again = planned._with_read_options(threads=1, batch_size=2)
    assert again.to_table().column("id").to_pylist() == [1, 2, 3]
    descending = planned._with_read_options(order_by=("id", "desc"))
    assert descending._read_options["order_by"] == [("id", True, False)]
    with pytest.raises(TypeError, match=r"unknown option 'statistics'"):
        planned._with_read_options(statistics=False)
    with pytest.raises(ValueError, match="batch_size"):
        planned._with_read_options(batch_size=0)
