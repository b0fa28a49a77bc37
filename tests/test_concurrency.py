"""Many scans at once from Python threads — sharing the process-wide metadata cache and
each using several reader threads — return the same rows as the same scans run one by one."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("concurrent")
    rng = np.random.default_rng(11)
    for f in range(3):
        n = 20_000
        amount = rng.uniform(0, 100, n)
        amount[rng.random(n) < 0.03] = np.nan
        table = pa.table(
            {
                "id": pa.array(np.arange(f * n, (f + 1) * n, dtype=np.int64)),
                "kind": pa.array(np.array(["a", "b", "c", "d"])[rng.integers(0, 4, n)]),
                "amount": pa.array(amount, mask=rng.random(n) < 0.03),
                "text": pa.array([f"row {i}" for i in range(f * n, (f + 1) * n)]),
            }
        )
        pq.write_table(table, root / f"part-{f}.parquet", row_group_size=4000, write_page_index=True, max_rows_per_page=500)
    return root


def scans(root: Path, corpus: Path) -> list[tuple[object, dict]]:
    tiny_pages = corpus / "data" / "alltypes_tiny_pages_plain.parquet"
    return [
        (root, {"filter": "kind = 'b' AND amount > 50", "columns": ["id", "text", "amount"]}),
        (root, {"filter": "id >= 1000 AND id < 1500 OR amount IS NULL", "columns": ["id", "kind"]}),
        (root, {"filter": "text LIKE 'row 5%'", "selection_policy": "mask"}),
        (root, {"filter": "amount <= 10", "pushdown_filters": False, "batch_size": 777}),
        (root, {"columns": ["id"], "limit": 12345}),
        (tiny_pages, {"filter": "id > 3000 AND bool_col", "columns": ["id", "string_col"]}),
        (tiny_pages, {"filter": "int_col IN (1, 5) OR float_col > 8"}),
    ]


def test_parallel_scans_equal_sequential_scans(files: Path, corpus: Path) -> None:
    plans = scans(files, corpus)
    sequential = [pqsift.scan(source, threads=1, **options).to_table() for source, options in plans]

    def run(index: int) -> pa.Table:
        source, options = plans[index % len(plans)]
        # Small shared caches force eviction while other threads read.
        return pqsift.scan(source, threads=3, cache_bytes=256 << 10, **options).to_table()

    jobs = list(range(len(plans) * 6))
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(run, jobs))
    for index, table in zip(jobs, results, strict=True):
        expected = sequential[index % len(plans)]
        assert table.schema.equals(expected.schema)
        assert table.num_rows == expected.num_rows, plans[index % len(plans)]
        assert table.equals(expected) or table.to_pylist() == expected.to_pylist() or _same_with_nan(table, expected)


def _same_with_nan(a: pa.Table, b: pa.Table) -> bool:
    def norm(rows: list[dict]) -> list[dict]:
        return [{k: ("NaN" if isinstance(v, float) and v != v else v) for k, v in r.items()} for r in rows]

    return norm(a.to_pylist()) == norm(b.to_pylist())


def test_iteration_interleaved_across_threads(files: Path) -> None:
    """Several streams consumed at once, batch by batch, from different threads."""

    def consume(kind: str) -> int:
        return sum(batch.num_rows for batch in pqsift.scan(files, filter=f"kind = '{kind}'", batch_size=1000, threads=2))

    with ThreadPoolExecutor(max_workers=4) as pool:
        counts = list(pool.map(consume, ["a", "b", "c", "d"] * 3))
    table = pq.read_table(files)
    expected = [sum(1 for k in table["kind"].to_pylist() if k == kind) for kind in ["a", "b", "c", "d"] * 3]
    assert counts == expected
