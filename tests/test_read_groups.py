"""A read of many files takes them in groups (``footer_bytes_read_together``), opening each
group's footers when it reaches it: property-based, against rows computed here, every
group size reads the same rows in the same order — with filters, limits, batch sizes,
thread counts, empty files and files every row group of which the filter prunes."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pqsift

# One byte: every file is a group of its own. A gibibyte: all files in one group.
BUDGETS = [1, 1 << 30]


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 40), min_size=1, max_size=12),
    row_group_size=st.integers(1, 16),
    threshold=st.none() | st.integers(-5, 500),
    limit=st.none() | st.integers(0, 400),
    threads=st.sampled_from([1, 2]),
    batch_size=st.integers(1, 9),
    budget=st.sampled_from(BUDGETS),
)
def test_grouped_reads_return_the_rows_in_order(
    tmp_path_factory: pytest.TempPathFactory,
    sizes: list[int],
    row_group_size: int,
    threshold: int | None,
    limit: int | None,
    threads: int,
    batch_size: int,
    budget: int,
) -> None:
    root = tmp_path_factory.mktemp("groups")
    # File i holds x = 20 * i + j (sorted within and across files: statistics prune).
    everything: list[int] = []
    for number, size in enumerate(sizes):
        values = [20 * number + j for j in range(size)]
        everything += values
        pq.write_table(pa.table({"x": pa.array(values, pa.int64())}), root / f"part-{number:03d}.parquet", row_group_size=row_group_size)
    kept = [x for x in everything if threshold is None or x >= threshold]
    expected = kept if limit is None else kept[:limit]
    options = {"footer_bytes_read_together": budget, "threads": threads, "batch_size": batch_size}
    where = None if threshold is None else f"x >= {threshold}"
    scan = pqsift.scan(root, filter=where, limit=limit, **options)
    table = scan.to_table()
    assert table.column("x").to_pylist() == expected
    assert all(batch.num_rows <= batch_size for batch in pqsift.scan(root, filter=where, limit=limit, **options))
    assert pqsift.scan(root, filter=where, **options).count_rows() == len(kept)
