"""DuckDB querying Parquet through pqsift (issue 41): over a pqsift scan's Arrow stream,
which DuckDB reads whole, and over ``pqsift.dataset``, which DuckDB pushes its projection
and filters into — beside DuckDB over ``pyarrow.dataset`` (the same pushdown, pyarrow
reading) and DuckDB's own Parquet reader.

    python benches/duckdb_pushdown.py [--repeat 5]

The file (``data/duckdb-pushdown/t.parquet``, written if absent): 4,000,000 rows in 40 row
groups, page index on, zstd; ``id`` (int64, sorted), ``kind`` (one of 8 words), ``amount``
(float64), ``note`` (a 40-60 byte string). Each query runs once per engine per round, the
engines interleaved; wall time is the best round, CPU time (``time.process_time``, all
threads) the median. Every engine must return the same rows. Results go to
``benches/results/duckdb_pushdown.md``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

import pqsift

ROWS = 4_000_000
ROW_GROUP_ROWS = 100_000
QUERIES = {
    "range, text projected": "SELECT id, note FROM {t} WHERE id BETWEEN 2000000 AND 2000999",
    "point lookups (IN)": "SELECT id, note FROM {t} WHERE id IN (17, 1234567, 3999999)",
    "two predicates, text": "SELECT id, note FROM {t} WHERE kind = 'theta' AND amount > 999.0",
    "count, one predicate": "SELECT count(*) FROM {t} WHERE amount < 1.0",
}


def write_table(path: Path, seed: int = 41) -> None:
    rng = np.random.default_rng(seed)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])
    ids = np.arange(ROWS, dtype=np.int64)
    notes = [f"note {i} {words[i % 8]} " * 3 for i in range(ROWS)]
    table = pa.table(
        {
            "id": pa.array(ids),
            "kind": pa.array(words[rng.integers(0, 8, ROWS)]),
            "amount": pa.array(rng.uniform(0, 1000, ROWS)),
            "note": pa.array(notes),
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=ROW_GROUP_ROWS, compression="zstd", write_page_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--data", type=Path, default=Path("data/duckdb-pushdown/t.parquet"))
    args = parser.parse_args()
    if not args.data.exists():
        write_table(args.data)
    path = str(args.data)
    connection = duckdb.connect()
    scan = pqsift.scan(path)
    through = pqsift.dataset(path)
    arrow = ds.dataset(path)

    def over(name: str, table: object) -> Callable[[str], list[tuple[object, ...]]]:
        def run(query: str) -> list[tuple[object, ...]]:
            connection.register(name, table() if callable(table) else table)
            rows = connection.sql(query.format(t=name)).fetchall()
            connection.unregister(name)
            return sorted(rows)

        return run

    engines: dict[str, Callable[[str], list[tuple[object, ...]]]] = {
        "DuckDB over a pqsift stream": over("stream", lambda: pa.RecordBatchReader.from_stream(scan)),
        "DuckDB over pqsift.dataset": over("pushed", through),
        "DuckDB over pyarrow.dataset": over("arrow", arrow),
        "DuckDB's Parquet reader": lambda query: sorted(connection.sql(query.format(t=f"'{path}'")).fetchall()),
    }
    lines = [
        "# DuckDB through pqsift: projection and filters pushed (`benches/duckdb_pushdown.py`)",
        "",
        f"{ROWS:,} rows, {ROWS // ROW_GROUP_ROWS} row groups, zstd, page index; best wall time of "
        f"{args.repeat} interleaved rounds, median CPU time; ratio: time ÷ pqsift.dataset's.",
        "",
        "| query | engine | wall ms | CPU ms | wall ratio |",
        "|---|---|---:|---:|---:|",
    ]
    for label, query in QUERIES.items():
        expected = None
        walls: dict[str, list[float]] = {name: [] for name in engines}
        cpus: dict[str, list[float]] = {name: [] for name in engines}
        for name, run in engines.items():  # warm-up, and the rows agree
            rows = run(query)
            assert expected is None or rows == expected, (label, name)
            expected = rows
        for _ in range(args.repeat):
            for name, run in engines.items():
                wall, cpu = time.perf_counter(), time.process_time()
                run(query)
                walls[name].append(time.perf_counter() - wall)
                cpus[name].append(time.process_time() - cpu)
        base = min(walls["DuckDB over pqsift.dataset"])
        for name in engines:
            best = min(walls[name])
            lines.append(
                f"| {label} | {name} | {best * 1000:.1f} | {statistics.median(cpus[name]) * 1000:.1f} "
                f"| {best / base:.2f} |"
            )
        print("\n".join(lines[-len(engines) :]), flush=True)
    pushed = through.last_scan
    assert pushed is not None
    lines += ["", f"pqsift.dataset's last scan: filter `{pushed.filter}`, columns {pushed.columns}."]
    out = Path(__file__).parent / "results" / "duckdb_pushdown.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
