"""The row-selection walkthrough: what a row selection saves on a selective query.

Run it with ``make demo-selection`` (or ``python -m pqsift.selection_demo``). It writes
a sample Parquet file if absent (sorted timestamps, amounts, a wide text column; page index
on), then follows the query

    SELECT description FROM events
    WHERE ts >= <t0> AND ts < <t1> AND amount > 900

through late materialization with :class:`pqsift.RowSelection`: the time range gives a
selection of a few long runs, the amount predicate — evaluated only on the rows that
survived — refines it with ``and_then``, and ``scan_ranges`` tells which pages of the wide
``description`` column must be read at all. The predicates are evaluated here with
pyarrow, step by step, to show the selections; then the same query runs through
``pqsift.scan`` (which does all of it in Rust) next to pyarrow.dataset.
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pqsift import RowSelection
from pqsift._core import column_pages

ROWS = 1_000_000
ROW_GROUP_ROWS = 250_000


def write_sample(path: Path, rows: int = ROWS, seed: int = 7) -> None:
    """Writes the sample events file: one event a second, sorted by time."""
    rng = np.random.default_rng(seed)
    start = np.datetime64("2026-01-01T00:00:00", "us")
    words = np.array(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"])
    description = pa.array(
        [" ".join(row) for row in words[rng.integers(0, len(words), size=(rows, 8))]], type=pa.string()
    )
    table = pa.table(
        {
            "ts": pa.array(start + np.arange(rows) * np.timedelta64(1, "s"), type=pa.timestamp("us", tz="UTC")),
            "user_id": pa.array(rng.integers(0, 50_000, rows), type=pa.int64()),
            "amount": pa.array(np.round(rng.uniform(0, 1000, rows), 2), type=pa.float64()),
            "description": description,
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        table,
        path,
        row_group_size=ROW_GROUP_ROWS,
        data_page_size=64 * 1024,
        write_page_index=True,
        compression="zstd",
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=Path("data/demo/events.parquet"))
    args = parser.parse_args(argv)

    if not args.path.exists():
        print(f"writing the sample file {args.path} ({ROWS:,} rows) ...")
        write_sample(args.path)
    file = pq.ParquetFile(args.path)
    print(f"{args.path}: {file.metadata.num_rows:,} rows in {file.metadata.num_row_groups} row groups\n")

    t0 = pa.scalar(datetime(2026, 1, 4, 10, tzinfo=UTC), type=pa.timestamp("us", tz="UTC"))
    t1 = pa.scalar(datetime(2026, 1, 4, 16, tzinfo=UTC), type=pa.timestamp("us", tz="UTC"))
    print(
        "SELECT description FROM events WHERE ts >= '2026-01-04 10:00' AND ts < '2026-01-04 16:00' AND amount > 900\n"
    )

    pages = column_pages(str(args.path), "description")
    total = {"rows": 0, "selected": 0, "pages": 0, "pages_read": 0, "bytes": 0, "bytes_read": 0}
    started = time.perf_counter()
    for rg, (rows, locations, dictionary) in enumerate(pages):
        # Step 1: the predicate on the sorted column — a few long runs.
        ts = file.read_row_group(rg, columns=["ts"]).column("ts")
        in_range = RowSelection.from_mask(pc.and_(pc.greater_equal(ts, t0), pc.less(ts, t1)))
        # Step 2: the amount predicate, decoded only for the rows that survived step 1.
        survivors = in_range.selected_ranges()
        amount = file.read_row_group(rg, columns=["amount"]).column("amount")
        amount_of_survivors = pa.chunked_array(
            [amount.slice(start, end - start) for start, end in survivors], type=pa.float64()
        )
        refined = in_range.and_then(RowSelection.from_mask(pc.greater(amount_of_survivors, 900.0)))
        # Step 3: which pages of the wide projected column hold a surviving row.
        ranges = refined.scan_ranges(locations, dictionary_page=dictionary)
        chunk_bytes = sum(size for _, size, _ in locations) + (dictionary[1] if dictionary else 0)
        read_bytes = sum(length for _, length in ranges)

        total["rows"] += rows
        total["selected"] += refined.selected_count
        total["pages"] += len(locations)
        total["pages_read"] += len(refined.scan_ranges(locations))
        total["bytes"] += chunk_bytes
        total["bytes_read"] += read_bytes
        if in_range.selects_any():
            print(f"row group {rg}: ts range -> {in_range!r}")
            print(f"             amount > 900 (and_then) -> {refined!r}")
            print(
                f"             policy: {in_range.policy()} after step 1, {refined.policy()} after step 2;"
                f" description pages read: {len(refined.scan_ranges(locations))} of {len(locations)}"
            )
        else:
            print(f"row group {rg}: no row in the time range, the whole row group is skipped")
    elapsed = time.perf_counter() - started

    print()
    print(f"rows selected:             {total['selected']:,} of {total['rows']:,}")
    print(f"description pages read:    {total['pages_read']:,} of {total['pages']:,}")
    print(
        f"description bytes read:    {total['bytes_read']:,} of {total['bytes']:,}"
        f" ({100 * total['bytes_read'] / max(total['bytes'], 1):.1f}%)"
    )
    print(f"planning time:             {elapsed * 1000:.0f} ms")

    # The same query through pqsift's reader, side by side with pyarrow.dataset.
    import pyarrow.dataset as ds

    import pqsift

    where = "ts >= TIMESTAMP '2026-01-04 10:00:00' AND ts < TIMESTAMP '2026-01-04 16:00:00' AND amount > 900"
    print("\n-- pqsift.scan(...).to_table() --")
    scan = pqsift.scan(args.path, columns=["ts", "amount", "description"], filter=where)
    started = time.perf_counter()
    table = scan.to_table()
    pqsift_seconds = time.perf_counter() - started
    print(scan.explain().splitlines()[0])
    metrics = scan.metrics
    print(
        f"rows out {metrics['rows_out']:,}; values decoded per column {metrics['rows_decoded_by_column']};"
        f" bytes read {metrics['bytes_read']:,}"
    )
    dataset = ds.dataset(args.path)
    expression = (ds.field("ts") >= t0) & (ds.field("ts") < t1) & (ds.field("amount") > 900)
    started = time.perf_counter()
    expected = dataset.to_table(columns=["ts", "amount", "description"], filter=expression)
    pyarrow_seconds = time.perf_counter() - started
    same = "same rows" if expected.num_rows == table.num_rows else "ROW COUNTS DIFFER"
    print(
        f"pqsift {pqsift_seconds * 1000:.1f} ms, pyarrow.dataset {pyarrow_seconds * 1000:.1f} ms"
        f" ({table.num_rows:,} rows, {same})"
    )


if __name__ == "__main__":
    main()
