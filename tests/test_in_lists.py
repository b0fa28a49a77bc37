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
