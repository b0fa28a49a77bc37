"""Long IN lists (issue 15): evaluated and pruned as a set, with Spark's semantics."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import pqsift

ROWS, ROW_GROUP = 40_000, 10_000


def test_long_list_prunes_row_groups_pages_and_bloom_filters(tmp_path: Path) -> None:
    path = tmp_path / "ids.parquet"
    ids = pa.array(range(0, 2 * ROWS, 2), pa.int64())  # even ids, sorted
    pq.write_table(pa.table({"id": ids}), path, row_group_size=ROW_GROUP, write_page_index=True, max_rows_per_page=1000,
                   write_batch_size=1000, bloom_filter_options={"id": {"ndv": ROW_GROUP, "fpp": 0.001}})
    rng = random.Random(4)
    # 1,000 values inside row group 1's range (ids 20,000..39,998): half present.
    wanted = rng.sample(range(20_000, 40_000), 1_000)
    scan = pqsift.scan(str(path), filter=f"id IN ({', '.join(map(str, wanted))})")
    assert sorted(scan.to_table().column("id").to_pylist()) == sorted(v for v in wanted if v % 2 == 0)
    assert scan.metrics["row_groups_pruned_statistics"] == 3
    # Odd values only: none present; the bloom filter rules the last row group out.
    odd = [v | 1 for v in wanted[:50]]
    scan = pqsift.scan(str(path), filter=f"id IN ({', '.join(map(str, odd))})")
    assert scan.to_table().num_rows == 0
    assert scan.metrics["row_groups_pruned_statistics"] + scan.metrics["row_groups_pruned_bloom_filter"] == 4
    # NOT IN a long list keeps everything else.
    scan = pqsift.scan(str(path), filter=f"id NOT IN ({', '.join(map(str, wanted))})")
    assert scan.to_table().num_rows == ROWS - len({v for v in wanted if v % 2 == 0})


def test_lists_from_arrays_and_pyarrow_expressions_find_what_pyarrow_finds(tmp_path: Path) -> None:
    """A semi-join's 20,000 ids as a numpy array, a pyarrow array and a pyarrow ``isin``
    expression: each finds the rows pyarrow's own filter finds."""
    import numpy as np
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    path = tmp_path / "ids.parquet"
    rng = np.random.default_rng(3)
    ids = rng.permutation(ROWS * 4)[:ROWS].astype(np.int64)
    pq.write_table(pa.table({"id": ids, "n": np.arange(ROWS)}), path, row_group_size=ROW_GROUP)
    wanted = np.concatenate([rng.integers(0, ROWS * 4, 20_000), [-(2**40), 2**40, -5]])
    expected = sorted(ds.dataset(path).to_table(filter=pc.field("id").isin(wanted)).column("n").to_pylist())
    assert 0 < len(expected) < ROWS
    for written in (pqsift.col("id").isin(wanted), pqsift.col("id").isin(pa.array(wanted)), pc.field("id").isin(wanted)):
        got = pqsift.scan(str(path), columns=["n"], filter=written).to_table().column("n").to_pylist()
        assert sorted(got) == expected


def test_long_list_semantics_match_spark(tmp_path: Path) -> None:
    """NULL in the list, NaN = NaN, -0.0 = 0.0, NULL rows: as Spark evaluates IN."""
    path = tmp_path / "f.parquet"
    values = [0.0, -0.0, math.nan, 1.5, None, 2.5, -math.nan, 7.0, 8.0, 9.0]
    pq.write_table(pa.table({"f": pa.array(values, pa.float64()), "i": pa.array(range(len(values)))}), path, row_group_size=3)
    items = ["CAST('NaN' AS DOUBLE)", "CAST('-0.0' AS DOUBLE)", "1.5D", "100D", "101D", "102D", "103D", "104D", "105D"]
    got = pqsift.scan(str(path), columns=["i"], filter=f"f IN ({', '.join(items)})").to_table().column("i").to_pylist()
    assert sorted(got) == [0, 1, 2, 3, 6]
    # NOT IN with a NULL in the list is never true.
    assert pqsift.scan(str(path), filter=f"f NOT IN ({', '.join(items)}, NULL)").to_table().num_rows == 0
    # Without the NULL: rows not in the list, NULL rows left out.
    got = pqsift.scan(str(path), columns=["i"], filter=f"f NOT IN ({', '.join(items)})").to_table().column("i").to_pylist()
    assert sorted(got) == [5, 7, 8, 9]


def test_bloom_filters_are_probed_with_the_values_inside_each_row_groups_bounds(tmp_path: Path) -> None:
    """A long list mostly outside a row group's range: its bloom filter is asked only about
    the values inside, so the false positives of the thousands outside cannot keep it."""
    path = tmp_path / "ids.parquet"
    ids = pa.array(list(range(0, 20_000, 2)) + list(range(20_000, 40_000)), pa.int64())  # even ids, then all
    pq.write_table(pa.table({"id": ids}), path, row_group_size=10_000, bloom_filter_options={"id": {"ndv": 10_000, "fpp": 0.001}})
    absent = list(range(1, 41, 2))  # 20 odd ids inside row group 0's bounds, none there
    present = list(range(20_000, 40_000))  # 20,000 ids of row groups 1 and 2
    scan = pqsift.scan(str(path), filter=f"id IN ({', '.join(map(str, absent + present))})")
    assert scan.to_table().num_rows == len(present)
    plan = scan.plan()
    assert [rg.decision for rg in plan.files[0].row_groups] == ["skip", "scan", "scan"]
    assert "none of the 20 value(s) the filter accepts for id within the row group's bounds" in plan.files[0].row_groups[0].reason
    # Every value probed, the 20,000 from row groups 1 and 2 would find false positives here
    # (1 in 1,000 each): the bounds are what prunes.
    assert scan.metrics["row_groups_pruned_bloom_filter"] == 1
