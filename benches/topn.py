"""TopN queries (issues 13, 42): `ORDER BY key DESC LIMIT k` with a wide text column projected,
on the `events` dataset of benches/peers.py (8M rows, 4 files, ts sorted), by pqsift
(TopN pruner + sorted read), pqsift without the pruner (full read, same sort), DuckDB and
Polars. Bytes read and row groups pruned are pqsift's own metrics; time is wall and
process CPU, best / median of the runs.

    python benches/topn.py [--repeat 5] [--limit 100]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import peers
import pqsift

# (title, key, columns, filter): the filter is one statistics cannot prove true for whole
# row groups ("the latest purchases"), which the threshold learnt while reading handles.
QUERIES = [
    ("sorted key: ts", "ts", ["event_id", "ts", "message"], None),
    ("unsorted key: amount", "amount", ["event_id", "amount", "message"], None),
    ("sorted key, filtered: latest purchases", "ts", ["event_id", "ts", "message"], "kind = 'purchase'"),
    # A filter on a wide text column: the threshold, once learnt, runs in the row filter
    # ahead of it.
    ("unsorted key, filtered on text", "amount", ["event_id", "amount", "url"], "message LIKE '%chstus%'"),
]


def polars_filter(where: str) -> Any:
    """The Polars expression of a query's filter."""
    import polars as pl

    return {
        "kind = 'purchase'": pl.col("kind") == "purchase",
        "message LIKE '%chstus%'": pl.col("message").str.contains("chstus", literal=True),
    }[where]


def timed(run: Callable[[], Any], repeat: int) -> tuple[float, float]:
    run()
    walls, cpus = [], []
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        run()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--data", type=Path, default=Path("data/bench-events"))
    args = parser.parse_args()
    dataset = peers.Dataset("events", args.data, peers.EVENT_FILES, peers.EVENT_ROWS_PER_FILE, peers.EVENT_ROW_GROUP_ROWS)
    dataset.ensure()
    root, k = str(args.data), args.limit
    import duckdb
    import polars as pl

    print(f"| query (LIMIT {k}) | engine | wall ms | CPU ms | bytes read | row groups pruned by TopN / threshold | pages of the key skipped by the threshold |")
    print("|---|---|---|---|---|---|---|")
    for title, key, columns, where in QUERIES:
        order = [(key, "desc")]

        def top(**options: Any) -> pqsift.Scan:
            scan = pqsift.scan(root, columns=columns, filter=where, order_by=order, limit=k, **options)  # noqa: B023 - called in this iteration
            scan.to_table()
            return scan

        def full_then_sort() -> Any:
            table = pqsift.scan(root, columns=columns, filter=where).to_table()  # noqa: B023 - called in this iteration
            return table.sort_by([(key, "descending")]).slice(0, k)  # noqa: B023

        with_pruner = top()
        full = pqsift.scan(root, columns=columns, filter=where)
        full.to_table()
        sql_where = f"WHERE {where}" if where else ""
        polars_frame = pl.scan_parquet(f"{root}/*.parquet")
        if where:
            polars_frame = polars_frame.filter(polars_filter(where))
        pruned_by_pqsift = with_pruner.metrics["row_groups_pruned_topn"] + with_pruner.metrics.get("row_groups_skipped_by_threshold", 0)
        rows = {
            "pqsift": (lambda: top(), with_pruner.metrics["bytes_read"], pruned_by_pqsift, with_pruner.metrics.get("pages_skipped_by_threshold", 0)),
            "pqsift, full read + sort": (full_then_sort, full.metrics["bytes_read"], 0, 0),
            "DuckDB": (lambda: duckdb.sql(f"SELECT {', '.join(columns)} FROM read_parquet('{root}/*.parquet') {sql_where} ORDER BY {key} DESC LIMIT {k}").arrow(), None, None, None),  # noqa: B023
            "Polars": (lambda: polars_frame.select(columns).top_k(k, by=key).collect(), None, None, None),  # noqa: B023
        }
        for engine, (run, read, pruned, pages) in rows.items():
            wall, cpu = timed(run, args.repeat)
            shown_bytes = f"{read / 2**20:.1f} MiB" if read is not None else "—"
            shown_pruned = f"{pruned} of {with_pruner.metrics['row_groups_total']}" if pruned is not None else "—"
            shown_pages = "—" if pages is None else str(pages)
            print(f"| {title} | {engine} | {wall * 1e3:.0f} | {cpu * 1e3:.0f} | {shown_bytes} | {shown_pruned} | {shown_pages} |", flush=True)


if __name__ == "__main__":
    main()
