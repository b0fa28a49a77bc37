"""ORDER BY ... LIMIT k (issue 13, seed 003's TopN pruner): the first k rows in Spark's
order, reading only the row groups and pages whose statistics let them hold one."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqsift

ROWS, ROW_GROUP, PAGE = 8_000, 1_000, 100


def write(path: Path, ts: list[int | None], page_index: bool = True, **columns: Any) -> Path:
    table = pa.table({"ts": pa.array(ts, pa.int64()), "id": pa.array(range(len(ts)), pa.int64()), **columns})
    # Unique text is not dictionary-encoded (as writers fall back to plain for it). Without
    # a page index, pages are judged by the statistics in their headers.
    pq.write_table(
        table, path, row_group_size=ROW_GROUP, max_rows_per_page=PAGE, write_batch_size=PAGE, write_page_index=page_index,
        use_dictionary=[c for c in table.column_names if c != "note"],
    )
    return path


def spark_key(value: Any, descending: bool, nulls_first: bool) -> tuple[int, float]:
    """A Python sort key giving Spark's order: NULLs placed as asked, NaN the greatest."""
    if value is None:
        return (0 if nulls_first else 2, 0.0)
    number = math.inf if isinstance(value, float) and math.isnan(value) else float(value)
    nan_rank = 1 if isinstance(value, float) and math.isnan(value) else 0
    return (1, -number if descending else number, -nan_rank if descending else nan_rank)  # type: ignore[return-value]


def oracle(values: list[Any], descending: bool, nulls_first: bool, limit: int) -> list[Any]:
    return sorted(values, key=lambda v: spark_key(v, descending, nulls_first))[:limit]


def same(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("page_index", [True, False])
def test_sorted_column_reads_only_the_last_row_group_and_pages(tmp_path: Path, page_index: bool) -> None:
    rng = random.Random(1)
    notes = pa.array([rng.randbytes(25).hex() for _ in range(ROWS)])
    path = write(tmp_path / "sorted.parquet", list(range(ROWS)), page_index, note=notes)
    scan = pqsift.scan(str(path), columns=["id", "note"], order_by=[("ts", "desc")], limit=10)
    table = scan.to_table()
    assert table.column("id").to_pylist() == list(range(ROWS - 1, ROWS - 11, -1))
    assert table.column_names == ["id", "note"]  # ts read to sort by, not output
    metrics = scan.metrics
    assert metrics["row_groups_pruned_topn"] == 7
    # Of the last row group's 10 pages only the last can hold one of the 10 greatest.
    assert metrics["topn_rows_pruned"] == ROW_GROUP - PAGE
    assert metrics["rows_decoded_by_column"].get("note", 0) <= PAGE
    explain = scan.explain()
    assert "row group 0: skipped by topn: best ts 999 is worse than 7000, the worst of 10 rows guaranteed by 1 row group(s)" in explain
    assert "row group 7: select 100 of 1000 rows: 1 of 10 pages can hold a top row: the others' best ts is worse than 7900" in explain
    assert "TopN: 7 row group(s) and 900 more rows skipped" in explain
    full = pqsift.scan(str(path), columns=["id", "note"])
    full.to_table()
    # Both passes' bytes. Without an offset index the reader reads each skipped page's
    # header to find the next.
    assert scan.metrics["bytes_read"] * (20 if page_index else 12) < full.metrics["bytes_read"]


def test_unsorted_column_gives_the_same_rows(tmp_path: Path) -> None:
    rng = random.Random(7)
    ts = rng.sample(range(10 * ROWS), ROWS)
    path = write(tmp_path / "unsorted.parquet", ts)
    for direction in ("asc", "desc"):
        table = pqsift.scan(str(path), order_by=(("ts", direction),), limit=25).to_table()
        assert table.column("ts").to_pylist() == sorted(ts, reverse=direction == "desc")[:25]


def test_a_filter_keeps_only_proven_row_groups_as_guarantees(tmp_path: Path) -> None:
    path = write(tmp_path / "f.parquet", list(range(ROWS)), kind=pa.array(["a" if i % 2 else "b" for i in range(ROWS)]))
    scan = pqsift.scan(str(path), filter="kind = 'a'", order_by=[("ts", "desc")], limit=5)
    assert scan.to_table().column("ts").to_pylist() == [7999, 7997, 7995, 7993, 7991]
    # 'kind' has both values everywhere: no row group guarantees a row, none is skipped.
    assert scan.metrics["row_groups_pruned_topn"] == 0
    # A filter statistics prove true for the last row groups: they give the bound.
    scan = pqsift.scan(str(path), filter="ts >= 100", order_by=[("ts", "desc")], limit=5)
    assert scan.to_table().column("ts").to_pylist() == [7999, 7998, 7997, 7996, 7995]
    assert scan.metrics["row_groups_pruned_topn"] == 7


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("nulls_first", [False, True])
def test_nulls_and_nan_in_spark_order(tmp_path: Path, descending: bool, nulls_first: bool) -> None:
    rng = random.Random(3)
    values: list[float | None] = [float(i) for i in range(ROWS)]
    for i in rng.sample(range(ROWS), 40):
        values[i] = None
    for i in rng.sample(range(ROWS), 40):
        values[i] = -math.nan if i % 2 else math.nan  # both signs: Spark has one NaN
    values[17] = -0.0
    path = write(tmp_path / "n.parquet", list(range(ROWS)), f=pa.array(values, pa.float64()))
    order = ("f", "desc" if descending else "asc", "nulls_first" if nulls_first else "nulls_last")
    got = pqsift.scan(str(path), columns=["id", "f"], order_by=[order], limit=100).to_table().column("f").to_pylist()
    assert same(got, oracle(values, descending, nulls_first, 100)), got[:10]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("nulls_first", [False, True])
def test_a_long_read_keeps_a_full_sorts_first_rows(tmp_path: Path, descending: bool, nulls_first: bool) -> None:
    # More rows than the top-k holds before its first trim, so later batches meet the
    # running threshold: few distinct keys (ties across batches), NULLs, NaNs of both
    # signs, -0.0; `id` orders the ties, from later rows first, so a tie that comes late
    # must still displace one held.
    rng = random.Random(11)
    rows = 200_000
    choices: list[float | None] = [None, math.nan, -math.nan, -0.0, 0.0, *(float(q) / 4 for q in range(-30, 30))]
    values = [rng.choice(choices) for _ in range(rows)]
    path = tmp_path / "long.parquet"
    pq.write_table(pa.table({"f": pa.array(values, pa.float64()), "id": pa.array(range(rows), pa.int64())}), path, row_group_size=50_000)
    order = ("f", "desc" if descending else "asc", "nulls_first" if nulls_first else "nulls_last")
    for limit in (1, 37, 5_000):
        got = pqsift.scan(str(path), order_by=[order, ("id", "desc")], limit=limit, threads=1).to_table()
        expected = sorted(range(rows), key=lambda i: (*spark_key(values[i], descending, nulls_first), -i))[:limit]
        assert got.column("id").to_pylist() == expected, limit
        keys_only = pqsift.scan(str(path), columns=["f"], order_by=[order], limit=limit).to_table()
        assert same(keys_only.column("f").to_pylist(), oracle(values, descending, nulls_first, limit))


def test_several_keys_and_bad_keys(tmp_path: Path) -> None:
    path = write(tmp_path / "k.parquet", [i // 10 for i in range(ROWS)])
    table = pqsift.scan(str(path), columns=["id"], order_by=[("ts", "desc"), ("id", "asc")], limit=3).to_table()
    assert table.column("id").to_pylist() == [7990, 7991, 7992]
    with pytest.raises(ValueError, match="direction of 'ts'"):
        pqsift.scan(str(path), order_by=[("ts", "down")], limit=3)
    with pytest.raises(TypeError, match="order_by"):
        pqsift.scan(str(path), order_by=[3], limit=3)
    with pytest.raises(pqsift.FilterError, match="nope"):
        pqsift.scan(str(path), order_by="nope", limit=3).to_table()


def test_order_by_without_limit_sorts_everything(tmp_path: Path) -> None:
    rng = random.Random(5)
    ts = rng.sample(range(ROWS), ROWS)
    path = write(tmp_path / "all.parquet", ts)
    scan = pqsift.scan(str(path), order_by="ts", batch_size=1000)
    batches = list(scan)
    assert all(b.num_rows <= 1000 for b in batches)
    assert pa.Table.from_batches(batches).column("ts").to_pylist() == sorted(ts)
    assert scan.metrics["row_groups_pruned_topn"] == 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    values=st.lists(st.one_of(st.none(), st.integers(-50, 50).map(float), st.just(math.nan), st.just(-0.0)), min_size=1, max_size=150),
    sorted_like=st.sampled_from(["no", "ascending", "descending"]),
    row_group_size=st.integers(1, 40),
    page_rows=st.integers(1, 10),
    limit=st.integers(0, 30),
    descending=st.booleans(),
    nulls_first=st.booleans(),
    filtered=st.booleans(),
    page_index=st.booleans(),
)
def test_topn_pruning_never_loses_a_top_row(
    tmp_path: Path, values: list[float | None], sorted_like: str, row_group_size: int, page_rows: int, limit: int,
    descending: bool, nulls_first: bool, filtered: bool, page_index: bool,
) -> None:
    # A sorted key, either way, is read page by page within its row groups (page index).
    if sorted_like != "no":
        values = sorted(values, key=lambda v: spark_key(v, sorted_like == "descending", True))
    path = tmp_path / "h.parquet"
    table = pa.table({"f": pa.array(values, pa.float64()), "g": pa.array([i % 3 for i in range(len(values))], pa.int64())})
    pq.write_table(
        table, path, row_group_size=row_group_size, data_page_size=1, write_batch_size=page_rows, write_page_index=page_index
    )
    order = ("f", "desc" if descending else "asc", "nulls_first" if nulls_first else "nulls_last")
    kept = [v for i, v in enumerate(values) if not filtered or i % 3 != 0]
    # `g` projected too: the read runs in two passes (the key first, then the rows it keeps).
    scan = pqsift.scan(str(path), columns=["g", "f"], filter="g != 0" if filtered else None, order_by=[order], limit=limit)
    got = scan.to_table().column("f").to_pylist()
    assert same(got, oracle(kept, descending, nulls_first, limit)), (got, scan.explain())


def test_same_rows_as_spark_order_by_limit(tmp_path: Path, spark: Any) -> None:
    """Spark's `ORDER BY f DESC, id LIMIT k` (NaN first, NULLs last) against pqsift, in
    Python and through pqsift.spark.read, on a sorted and an unsorted column, with the
    bytes each reads against a full scan."""
    import pqsift.spark

    rng = random.Random(11)
    directory = tmp_path / "t"
    directory.mkdir()
    unsorted = [float(v) for v in rng.sample(range(ROWS), ROWS)]
    for i in rng.sample(range(ROWS), 30):
        unsorted[i] = math.nan
    for i in rng.sample(range(ROWS), 30):
        unsorted[i] = None  # type: ignore[call-overload]
    write(directory / "a.parquet", list(range(ROWS)), f=pa.array(unsorted, pa.float64()))
    write(directory / "b.parquet", list(range(ROWS, 2 * ROWS)), f=pa.array([float(i) for i in range(ROWS)], pa.float64()))
    spark.read.parquet(str(directory)).createOrReplaceTempView("topn_t")
    for key, limit in (("f", 50), ("ts", 20)):
        expected = [tuple(r) for r in spark.sql(f"SELECT id, {key} FROM topn_t ORDER BY {key} DESC NULLS LAST, id LIMIT {limit}").collect()]
        order = [(key, "desc", "nulls_last"), ("id", "asc")]
        got = pqsift.scan(str(directory), columns=["id", key], order_by=order, limit=limit).to_table()
        assert same([v for r in got.to_pylist() for v in r.values()], [v for r in expected for v in r])
        frame = pqsift.spark.read(spark, str(directory), ["id", key], order_by=order, limit=limit)
        assert same([v for r in frame.collect() for v in r], [v for r in expected for v in r])
    # Sorted ts: the top 20 are in the last row group of b.parquet; f of a.parquet is unsorted.
    top = pqsift.scan(str(directory), columns=["id"], order_by=[("ts", "desc")], limit=20)
    top.to_table()
    assert top.metrics["row_groups_pruned_topn"] == 15


def test_a_top_k_read_by_tasks_is_spread_over_parallelism_tasks(tmp_path: Path, spark: Any, monkeypatch: Any) -> None:
    """Read by tasks, a top-k read takes `parallelism` tasks whatever its bytes (each task
    more decodes its own first k rows' other columns), where the same read unordered is
    cut by bytes; the rows are Spark's either way, and a given `target_task_bytes` holds."""
    import pqsift.spark

    rng = random.Random(5)
    directory = tmp_path / "t"
    directory.mkdir()
    for part in range(4):
        ids = list(range(part * ROWS, (part + 1) * ROWS))
        notes = pa.array([rng.randbytes(16).hex() for _ in ids])
        write(directory / f"{part}.parquet", [rng.randrange(10**6) for _ in ids], note=notes)
    # Bytes per task small enough that the unordered read needs many tasks.
    monkeypatch.setattr(pqsift.spark, "DEFAULT_TARGET_TASK_BYTES", 64 << 10)
    monkeypatch.setattr(pqsift.spark.planning, "MIN_TASK_BYTES", 1)
    spark.read.parquet(str(directory)).createOrReplaceTempView("spread_t")
    expected = [tuple(r) for r in spark.sql("SELECT id, note FROM spread_t ORDER BY ts DESC, id LIMIT 25").collect()]

    def tasks_of(**options: Any) -> tuple[int, list[tuple[Any, ...]]]:
        metrics = pqsift.spark.ScanMetrics(spark)
        frame = pqsift.spark.read(spark, str(directory), ["id", "note"], driver_read_bytes=0, parallelism=2, metrics=metrics, **options)
        rows = [tuple(r) for r in frame.collect()]
        return metrics.tasks, rows

    unordered, rows = tasks_of()
    assert unordered > 2 and len(rows) == 4 * ROWS
    order = {"order_by": [("ts", "desc"), ("id", "asc")], "limit": 25}
    assert tasks_of(**order) == (2, expected)
    given, rows = tasks_of(**order, target_task_bytes=64 << 10)
    assert given > 2 and rows == expected  # (more than unordered: the key's bytes count too)


def test_partition_keys_sort_but_do_not_prune(tmp_path: Path) -> None:
    """A partition column replaces a file column of its name: the file's statistics on it
    say nothing, so TopN does not prune on it; the rows are still Spark's."""
    for day, start in ((1, 0), (2, 100)):
        directory = tmp_path / f"day={day}"
        directory.mkdir()
        # The file's own `day` column holds values unrelated to the directory's.
        pq.write_table(pa.table({"day": pa.array(range(start, start + 100), pa.int64()), "id": pa.array(range(start, start + 100), pa.int64())}), directory / "f.parquet", row_group_size=10)
    scan = pqsift.scan(str(tmp_path), columns=["id", "day"], order_by=[("day", "desc"), ("id", "asc")], limit=3)
    assert scan.to_table().to_pylist() == [{"id": 100, "day": 2}, {"id": 101, "day": 2}, {"id": 102, "day": 2}]
    assert scan.metrics["row_groups_pruned_topn"] == 0


def test_unsorted_key_decodes_wide_columns_only_for_top_rows(tmp_path: Path) -> None:
    """Where statistics prune nothing, a first pass over the key alone finds the k-th
    value; the read proper filters on it, so the text column is decoded only for rows
    that can make the top k."""
    rng = random.Random(9)
    ts = rng.sample(range(10 * ROWS), ROWS)
    path = write(tmp_path / "wide.parquet", ts, note=pa.array([rng.randbytes(25).hex() for _ in range(ROWS)]))
    scan = pqsift.scan(str(path), columns=["note", "id"], order_by=[("ts", "desc")], limit=20)
    table = scan.to_table()
    expected = sorted(range(ROWS), key=lambda i: -ts[i])[:20]
    assert table.column("id").to_pylist() == expected
    assert scan.metrics["row_groups_pruned_topn"] == 0
    decoded = scan.metrics["rows_decoded_by_column"]
    assert decoded["note"] < ROWS // 10, decoded
    # Ascending with NULLs first: NULL keys are the best rows.
    keys = [None if i % 500 == 0 else v for i, v in enumerate(ts)]
    path = write(tmp_path / "nulls.parquet", keys, note=pa.array([str(i) for i in range(ROWS)]))
    table = pqsift.scan(str(path), columns=["id"], order_by=[("ts", "asc", "nulls_first"), ("id", "asc")], limit=20).to_table()
    nulls = [i for i in range(ROWS) if keys[i] is None]
    rest = sorted((i for i in range(ROWS) if keys[i] is not None), key=lambda i: keys[i])  # type: ignore[arg-type, return-value]
    assert table.column("id").to_pylist() == (nulls + rest)[:20]


@pytest.mark.parametrize("limit", [1, 3, 30])
def test_the_read_proper_reads_only_the_top_rows(tmp_path: Path, limit: int) -> None:
    """With no statistics on the key, none rules a row group out, but the first pass
    learns where the top rows lie: the read proper reads those rows alone (with the filter
    run after decoding, the row groups holding them), and explain names the others."""
    rng = random.Random(21)
    ts = rng.sample(range(10 * ROWS), ROWS)
    day = [t % 7 for t in ts]
    row_group = 200
    groups = ROWS // row_group
    table = pa.table({
        "ts": pa.array(ts, pa.int64()), "day": pa.array(day, pa.int64()), "id": pa.array(range(ROWS), pa.int64()),
        "note": pa.array([rng.randbytes(25).hex() for _ in range(ROWS)]),
    })
    path = tmp_path / "wide.parquet"
    pq.write_table(table, path, row_group_size=row_group, write_statistics=["id", "note"])
    passing = [i for i in range(ROWS) if i % 3 != 0]
    expected = sorted(passing, key=lambda i: -ts[i])[:limit]
    holding = {i // row_group for i in expected}
    for pushdown in (True, False):
        scan = pqsift.scan(
            str(path), columns=["note", "id"], filter="id % 3 != 0", order_by=[("ts", "desc")], limit=limit,
            pushdown_filters=pushdown,
        )
        assert scan.to_table().column("id").to_pylist() == expected
        metrics = scan.metrics
        assert metrics["row_groups_skipped_by_threshold"] == 0
        assert metrics["row_groups_without_top_rows"] == groups - len(holding)
        decoded = metrics["rows_decoded_by_column"]
        if pushdown:
            # The key of the rows passing the filter in the first pass, then of the top rows.
            assert decoded["ts"] == len(passing) + limit, decoded
            assert decoded["note"] == limit, decoded
            # The bytes the first pass read count too: every chunk of `id` and `ts`.
            footer = pq.ParquetFile(path).metadata
            first_pass = sum(footer.row_group(g).column(c).total_compressed_size for g in range(groups) for c in (0, 2))
            assert metrics["bytes_read"] >= first_pass, (metrics["bytes_read"], first_pass)
        else:
            # Every row's in the first pass, then those of the row groups holding a top row.
            assert decoded["ts"] == ROWS + len(holding) * row_group, decoded
            assert decoded["note"] == len(holding) * row_group, decoded
        named = re.findall(r"wide\.parquet row group (\d+): not read again \(no top row\)", scan.explain())
        assert sorted(int(g) for g in named) == sorted(set(range(groups)) - holding)
    # Several keys: the first pass orders by all of them, ties on the first broken by the second.
    scan = pqsift.scan(str(path), columns=["id", "note"], order_by=[("day", "desc"), ("ts", "asc")], limit=limit)
    expected = sorted(range(ROWS), key=lambda i: (-day[i], ts[i]))[:limit]
    assert scan.to_table().column("id").to_pylist() == expected
    assert scan.metrics["row_groups_without_top_rows"] == groups - len({i // row_group for i in expected})


@pytest.mark.parametrize("direction", ["asc", "desc"])
def test_a_filtered_top_k_learns_its_threshold_while_reading(tmp_path: Path, direction: str) -> None:
    """"The 10 latest purchases": 8 files x 4 row groups, ts sorted across files, a filter
    statistics cannot prove true anywhere (every row group holds every kind), so nothing
    is pruned at planning. The first pass reads the row groups best bound first and stops
    once the running 10th key rules the others out."""
    rng = random.Random(11)
    kinds = ["view", "cart", "purchase", "refund"]
    rows_per_file, files = 4_000, 8
    expected: list[tuple[int, str]] = []
    for f in range(files):
        ts = list(range(f * rows_per_file, (f + 1) * rows_per_file))
        kind = [kinds[rng.randrange(4)] for _ in ts]
        note = [rng.randbytes(20).hex() for _ in ts]
        expected += [(t, n) for t, k, n in zip(ts, kind, note, strict=True) if k == "purchase"]
        table = pa.table({"ts": pa.array(ts, pa.int64()), "event_type": kind, "note": note})
        pq.write_table(table, tmp_path / f"part-{f}.parquet", row_group_size=1_000)
    scan = pqsift.scan(
        str(tmp_path), columns=["ts", "note"], filter="event_type = 'purchase'", order_by=[("ts", direction)], limit=10,
        threads=2,
    )
    got = scan.to_table()
    want = sorted(expected, reverse=direction == "desc")[:10]
    assert list(zip(got.column("ts").to_pylist(), got.column("note").to_pylist(), strict=True)) == want
    metrics = scan.metrics
    assert metrics["row_groups_pruned_topn"] == 0  # planning could not prove a row anywhere
    # The first wave reads the two best row groups (one per thread): the best holds the top
    # 10, the second none; the threshold keeps the other 30 out.
    assert metrics["row_groups_skipped_by_threshold"] == 30
    assert metrics["row_groups_without_top_rows"] == 1
    explain = scan.explain()
    assert "reading: 30 more row group(s) not read: every row of the top 10 meets `ts` " in explain, explain
    # Each row group kept out, named.
    named = re.findall(r"part-(\d)\.parquet row group (\d): not read \(threshold\)", explain)
    best = [(7, 3), (7, 2)] if direction == "desc" else [(0, 0), (0, 1)]
    assert sorted(named) == sorted((str(f), str(g)) for f in range(files) for g in range(4) if (f, g) not in best)
    assert re.findall(r"part-(\d)\.parquet row group (\d): not read again \(no top row\)", explain) == [tuple(map(str, best[1]))]
    # The key of a wave of row groups (one per thread) in the first pass, of one row group
    # in the second: not the 32,000 rows of every row group.
    assert metrics["rows_decoded_by_column"]["ts"] <= 3 * 1_000
    assert metrics["rows_decoded_by_column"]["note"] <= 10


@pytest.mark.parametrize("direction", ["asc", "desc"])
@pytest.mark.parametrize("rare", [False, True], ids=["common", "rare"])
@pytest.mark.parametrize("page_index", [True, False], ids=["page-index", "page-headers"])
def test_a_sorted_key_is_read_page_by_page_within_a_row_group(tmp_path: Path, direction: str, rare: bool, page_index: bool) -> None:
    """One row group of 20,000 rows, ts sorted, in pages of 500: the first pass reads the
    key's best pages first (its page statistics show it sorted: the page index, or without
    one, as pyarrow writes by default, the page headers), and the running threshold,
    evaluated on them, keeps the rest of the row group out of the read. A rare kind takes
    waves that double until 10 rows are found; an unsorted key is not split."""
    rng = random.Random(5)
    rows = 20_000
    kinds = ["view", "cart", "purchase", "refund"]
    kind = [("gift" if rng.randrange(400) == 0 else "view") if rare else kinds[rng.randrange(4)] for _ in range(rows)]
    note = [rng.randbytes(8).hex() for _ in range(rows)]
    amount = [rng.random() for _ in range(rows)]
    table = pa.table({"ts": pa.array(range(rows), pa.int64()), "amount": amount, "kind": kind, "note": note})
    path = tmp_path / "one.parquet"
    pq.write_table(table, path, row_group_size=rows, max_rows_per_page=500, write_batch_size=500, write_page_index=page_index)
    wanted = "gift" if rare else "purchase"
    for key in ("ts", "amount"):
        scan = pqsift.scan(
            str(path), columns=["ts", "note"], filter=f"kind = '{wanted}'", order_by=[(key, direction)], limit=10, threads=2
        )
        got = scan.to_table()
        matching = [i for i in range(rows) if kind[i] == wanted]
        order = sorted(matching, key=lambda i: i if key == "ts" else amount[i], reverse=direction == "desc")
        assert got.column("ts").to_pylist() == order[:10], (key, direction)
        metrics = scan.metrics
        if key == "amount":
            # Every page spans about the whole range: read as one part, nothing skipped.
            assert metrics["pages_skipped_by_threshold"] == 0
            continue
        skipped = metrics["pages_skipped_by_threshold"]
        # The filter's column is decoded by the first pass alone (the read proper takes the
        # rows it found): every page planning kept (the pages of `kind` align with those of
        # `ts`) is either read there or skipped by the threshold.
        read = metrics["rows_decoded_by_column"]["kind"]
        assert read == 500 * (40 - metrics["pages_pruned"] - skipped), (read, skipped)
        if not rare:
            # One wave of two pages (a page per thread) holds ten purchases.
            assert skipped == 38, scan.explain()
        else:
            assert 0 < skipped < 38
        assert metrics["row_groups_skipped_by_threshold"] == 0
        explain = scan.explain()
        assert f"reading: {skipped} page(s) of the first sort key not read in the row groups read in part" in explain
        assert "`ts` >= " in explain if direction == "desc" else "`ts` <= " in explain


@pytest.mark.parametrize("pushdown", [True, False])
def test_the_running_threshold_filters_rows_before_the_other_predicates(tmp_path: Path, pushdown: bool) -> None:
    """An unsorted key and a filter on a wide text column: after the first wave the running
    threshold is a predicate of the row filter, cheap and selective, so the text is
    decoded only for rows whose key can still make the top 10 — not for every row."""
    rng = random.Random(3)
    rows, groups = 16_000, 8
    amount = [rng.random() for _ in range(rows)]
    note = [("error " if rng.randrange(3) == 0 else "ok ") + rng.randbytes(30).hex() for _ in range(rows)]
    table = pa.table({"amount": amount, "note": note, "id": pa.array(range(rows), pa.int64())})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=rows // groups, use_dictionary=["id"])
    scan = pqsift.scan(
        str(tmp_path / "t.parquet"), columns=["id"], filter="note LIKE 'error%'", order_by=[("amount", "desc")],
        limit=10, threads=2, pushdown_filters=pushdown,
    )
    got = scan.to_table().column("id").to_pylist()
    matching = [i for i in range(rows) if note[i].startswith("error")]
    assert got == sorted(matching, key=lambda i: -amount[i])[:10]
    decoded = scan.metrics["rows_decoded_by_column"]["note"]
    if pushdown:
        # The first wave (two row groups, one per thread) reads `note` whole; later waves
        # read it for the rows the threshold lets through.
        assert decoded < rows // 2, decoded
    else:
        assert decoded >= rows  # the filter runs on decoded rows: every note is decoded


def test_the_first_wave_reads_only_the_heads_of_large_row_groups(tmp_path: Path) -> None:
    """Two row groups of 150,000 rows: with no threshold yet, the first wave reads the
    head of each (65,536 rows), and the rest is read with the threshold those gave, so the
    filter's wide column is decoded for fewer rows than one row group holds."""
    rng = random.Random(4)
    rows = 300_000
    amount = [rng.random() for _ in range(rows)]
    # A wide column, more bytes than the key's: the row filter runs the threshold first.
    note = [("error " if rng.randrange(3) == 0 else "ok ") + rng.randbytes(24).hex() for _ in range(rows)]
    table = pa.table({"amount": amount, "note": note, "id": pa.array(range(rows), pa.int64())})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=rows // 2)
    scan = pqsift.scan(
        str(tmp_path / "t.parquet"), columns=["id"], filter="note LIKE 'error%'", order_by=[("amount", "desc")],
        limit=10, threads=2,
    )
    got = scan.to_table().column("id").to_pylist()
    matching = [i for i in range(rows) if note[i].startswith("error")]
    assert got == sorted(matching, key=lambda i: -amount[i])[:10]
    decoded = scan.metrics["rows_decoded_by_column"]["note"]
    assert 2 * 65_536 <= decoded < rows // 2, decoded


@pytest.mark.parametrize(
    ("values", "arrow_type"),
    [
        ([f"k{i:05d}" for i in range(4_000)], pa.string()),
        ([1_700_000_000_000_000 + i * 1_000 for i in range(4_000)], pa.timestamp("us", "UTC")),
        ([i / 4 for i in range(4_000)], pa.float32()),
    ],
    ids=["string", "timestamp", "float32"],
)
def test_the_threshold_skips_row_groups_on_keys_of_other_types(tmp_path: Path, values: list[Any], arrow_type: pa.DataType) -> None:
    table = pa.table({"k": pa.array(values, arrow_type), "g": pa.array([i % 2 for i in range(4_000)], pa.int64())})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=500)
    kept = table.filter(pa.compute.equal(table["g"], 1))
    for direction, order in (("asc", "ascending"), ("desc", "descending")):
        scan = pqsift.scan(
            str(tmp_path / "t.parquet"), columns=["k", "g"], filter="g = 1", order_by=[("k", direction)], limit=5, threads=2
        )
        got = scan.to_table().column("k").to_pylist()
        assert got == kept.sort_by([("k", order)]).column("k").to_pylist()[:5]
        # pyarrow writes no NaN counts: a float row group may hide a NaN, which Spark orders
        # above every number, so no statistics rule a row group out of a descending top 5.
        may_hide_nan = pa.types.is_floating(arrow_type) and direction == "desc"
        # The first wave reads two row groups (one per thread): the threshold rules out the
        # other six, and one of the two read holds no top row.
        metrics = scan.metrics
        assert metrics["row_groups_skipped_by_threshold"] == (0 if may_hide_nan else 6), direction
        assert metrics["row_groups_skipped_by_threshold"] + metrics["row_groups_without_top_rows"] == 7


def _latest_purchases(directory: Path, files: int = 8) -> list[tuple[int, str]]:
    """`files` files of 4 row groups, ts sorted across them, a kind no statistics can prove;
    returns the (ts, note) rows of kind 'purchase'."""
    rng = random.Random(23)
    kinds = ["view", "cart", "purchase", "refund"]
    purchases: list[tuple[int, str]] = []
    for f in range(files):
        ts = list(range(f * 4_000, (f + 1) * 4_000))
        kind = [kinds[rng.randrange(4)] for _ in ts]
        note = [rng.randbytes(40).hex() for _ in ts]
        purchases += [(t, n) for t, k, n in zip(ts, kind, note, strict=True) if k == "purchase"]
        table = pa.table({"ts": pa.array(ts, pa.int64()), "kind": kind, "note": note})
        pq.write_table(table, directory / f"part-{f}.parquet", row_group_size=1_000)
    return purchases


def test_max_bytes_read_stops_a_read_that_reads_more(tmp_path: Path) -> None:
    """`max_bytes_read`: a read that reads more bytes raises ReadBudgetError naming both
    figures; one that reads fewer returns every row. A top-k that stops early (a sorted
    key) stays under a bound its plan's bytes are far over; one that must read every key
    (an unsorted key) passes it."""
    purchases = _latest_purchases(tmp_path)
    whole = pqsift.scan(str(tmp_path), columns=["ts", "note"])
    rows = whole.to_table()
    bytes_read = whole.metrics["bytes_read"]
    assert rows.num_rows == 32_000
    with pytest.raises(pqsift.ReadBudgetError) as raised:
        pqsift.scan(str(tmp_path), columns=["ts", "note"], max_bytes_read=bytes_read // 4).to_table()
    assert f"max_bytes_read of {bytes_read // 4}" in raised.value.reason
    assert isinstance(raised.value, pqsift.PqsiftError)
    assert pqsift.scan(str(tmp_path), columns=["ts", "note"], max_bytes_read=bytes_read).to_table().equals(rows)

    latest = {"filter": "kind = 'purchase'", "order_by": [("ts", "desc")], "limit": 10}
    unbounded = pqsift.scan(str(tmp_path), columns=["ts", "note"], **latest)
    assert unbounded.to_table().to_pylist() == [{"ts": t, "note": n} for t, n in sorted(purchases, reverse=True)[:10]]
    top_bytes = unbounded.metrics["bytes_read"]
    assert top_bytes * 8 < bytes_read
    bounded = pqsift.scan(str(tmp_path), columns=["ts", "note"], max_bytes_read=2 * top_bytes, **latest)
    assert bounded.to_table().equals(unbounded.to_table())
    # Every key and kind must be read for the largest notes' rows: the first pass passes the bound.
    with pytest.raises(pqsift.ReadBudgetError):
        pqsift.scan(
            str(tmp_path),
            columns=["ts"],
            filter="kind = 'purchase'",
            order_by=[("note", "desc")],
            limit=10,
            max_bytes_read=2 * top_bytes,
        ).to_table()


def test_a_top_k_too_large_for_the_driver_by_its_plan_is_still_read_there(tmp_path: Path, spark: Any) -> None:
    """pqsift.spark.read with a driver bound below the plan's bytes (as on a cluster): the
    latest purchases, a sorted key's top-k that stops after a row group or two, are read
    on the driver (no task); a top-k on an unsorted key passes the bound there and is read
    by tasks. Both give Spark's rows."""
    import pqsift.spark

    _latest_purchases(tmp_path)
    spark.read.parquet(str(tmp_path)).createOrReplaceTempView("latest_t")
    bound = 256 << 10
    plan_bytes = sum(p.stat().st_size for p in tmp_path.glob("*.parquet"))
    assert plan_bytes > 4 * bound
    for key, read_on_driver in (("ts", True), ("note", False)):
        expected = [
            tuple(r)
            for r in spark.sql(
                f"SELECT ts, note FROM latest_t WHERE kind = 'purchase' ORDER BY {key} DESC LIMIT 10"
            ).collect()
        ]
        metrics = pqsift.spark.ScanMetrics(spark)
        frame = pqsift.spark.read(
            spark,
            str(tmp_path),
            ["ts", "note"],
            filter="kind = 'purchase'",
            order_by=[(key, "desc")],
            limit=10,
            driver_read_bytes=bound,
            metrics=metrics,
        )
        assert [tuple(r) for r in frame.collect()] == expected
        assert metrics.read_on_driver is read_on_driver, key
        assert (metrics.tasks == 0) is read_on_driver, (key, metrics.tasks)


def test_a_top_k_on_a_key_without_statistics_is_refused_before_it_reads(tmp_path: Path) -> None:
    """INT96 timestamps have no statistics (parquet-java writes none; nor does pyarrow): no
    threshold can rule a row group out, so every key is read. A top-k bounded below those
    bytes raises before reading anything; one bounded above them reads Spark's rows."""
    import datetime

    rows = 40_000
    start = datetime.datetime(2026, 1, 1)
    ts = [start + datetime.timedelta(seconds=i) for i in range(rows)]
    table = pa.table({"ts": pa.array(ts, pa.timestamp("us")), "id": pa.array(range(rows), pa.int64())})
    path = tmp_path / "int96.parquet"
    pq.write_table(table, path, row_group_size=5_000, use_deprecated_int96_timestamps=True)
    metadata = pq.ParquetFile(path).metadata
    statistics = metadata.row_group(0).column(0).statistics
    assert statistics is None or not statistics.has_min_max
    key_bytes = sum(metadata.row_group(r).column(0).total_compressed_size for r in range(metadata.num_row_groups))
    latest = {"order_by": [("ts", "desc")], "limit": 5, "columns": ["id"]}
    with pytest.raises(pqsift.ReadBudgetError, match="without its statistics") as raised:
        pqsift.scan(path, max_bytes_read=key_bytes // 2, **latest).to_table()
    assert "at least" in raised.value.reason
    got = pqsift.scan(path, max_bytes_read=2 * key_bytes + (1 << 20), **latest).to_table()
    assert got.column("id").to_pylist() == list(range(rows - 1, rows - 6, -1))
