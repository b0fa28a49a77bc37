"""Cost against the size of the metadata (issue 42): does planning stay linear?

    python benches/scaling.py [--axis row_groups,columns,files,rows] [--sizes 10,1000] [--repeat 3]

Four axes, each a selective query (100 rows) that pqsift, Polars and DuckDB answer, the
engines interleaved; wall time is the best of ``--repeat`` rounds, CPU time
(``time.process_time``) the median:

- **row groups**: one file of 2,000,000 rows written with 40 to 10,000 row groups (what
  streaming writers — Flink, Kafka sinks, small batches — produce), ``id`` sorted;
- **columns**: one file of 200,000 rows in 20 row groups, 10 to 2,000 int64 columns (wide
  footers), two projected;
- **files**: 1 to 100,000 files of 1,000 rows (one row group each), ``id`` sorted across
  them;
- **rows**: one file of 1M to 100M rows in row groups of 1M (pyarrow's default), ``id``
  sorted — the query's 100 rows in one row group whatever the size ("per unit": per
  million rows).

pqsift's planning (``scan(...).plan()``) is timed on its own as well, with the statistics
stage and without it; its "per unit" column is that time divided by the row groups,
columns, files or millions of rows — flat when planning is linear. Every pqsift run reads
its footers: pqsift's process-wide metadata cache (which the peers do not have) is emptied
before each run, outside its timing (a fresh process has nothing to drop) — but for the
query's second column, which runs it again as a
long-lived process (a Spark Python worker) does, its footers cached. Results go to
``benches/results/scaling.md`` (``--out``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

import pqsift

DEFAULT_SIZES = {
    "row_groups": [40, 500, 2_000, 4_000, 8_000, 10_000],
    "columns": [10, 100, 500, 1_000, 2_000],
    "files": [1, 10, 100, 1_000, 10_000, 100_000],
    "rows": [1_000_000, 10_000_000, 100_000_000],
}
# What "per unit" divides planning time by: a row group, a column, a file, a million rows.
UNIT = {"row_groups": 1, "columns": 1, "files": 1, "rows": 1_000_000}


@dataclass
class Case:
    """One point of an axis: its files, the query's filter (on ``id``) and columns."""

    paths: list[Path]
    source: str  # a file or a directory, as all three engines take it
    low: int
    columns: list[str]

    @property
    def filter(self) -> str:
        return f"id >= {self.low} AND id < {self.low + 100}"


def write_case(axis: str, size: int, root: Path) -> Case:
    if axis == "row_groups":
        path = root / f"rg{size}.parquet"
        if not path.exists():
            rows = 2_000_000
            ids = np.arange(rows, dtype=np.int64)
            pq.write_table(pa.table({"id": ids, "v": ids % 1000}), path, row_group_size=rows // size)
        return Case([path], str(path), 1_000_000, ["id", "v"])
    if axis == "columns":
        path = root / f"cols{size}.parquet"
        if not path.exists():
            rows = 200_000
            ids = np.arange(rows, dtype=np.int64)
            table = pa.table({"id": ids, **{f"c{i}": ids + i for i in range(1, size)}})
            pq.write_table(table, path, row_group_size=rows // 20)
        return Case([path], str(path), 100_000, ["id", "c1"])
    if axis == "rows":
        path = root / f"rows{size}.parquet"
        if not path.exists():
            schema = pa.schema([("id", pa.int64()), ("v", pa.int64())])
            with pq.ParquetWriter(path, schema) as writer:  # 1M rows at a time: memory stays small
                for start in range(0, size, 1_000_000):
                    ids = np.arange(start, min(start + 1_000_000, size), dtype=np.int64)
                    writer.write_table(pa.table({"id": ids, "v": ids % 1000}, schema=schema), row_group_size=1_000_000)
        return Case([path], str(path), size // 2, ["id", "v"])
    directory = root / f"files{size}"
    if not directory.exists():
        directory.mkdir(parents=True)
        for f in range(size):
            ids = np.arange(f * 1_000, (f + 1) * 1_000, dtype=np.int64)
            pq.write_table(pa.table({"id": ids, "v": ids % 1000}), directory / f"part-{f:05d}.parquet")
    paths = sorted(directory.iterdir())
    return Case(paths, str(directory), (size // 2) * 1_000, ["id", "v"])


#: The runs that read their footers again: the metadata cache is emptied before each, outside
#: the timed run (dropping the footers held is the bench's reset, not the query's work).
COLD_RUNS = ("plan", "plan, no statistics", "pqsift")


def engines(case: Case, connection: duckdb.DuckDBPyConnection) -> dict[str, Callable[[], int]]:
    """Per engine, a run returning its row count (planning runs: the files planned)."""
    glob = case.source if case.source.endswith(".parquet") else f"{case.source}/*.parquet"
    peer_filter = (pl.col("id") >= case.low) & (pl.col("id") < case.low + 100)

    def plan(**options: bool) -> int:
        return len(pqsift.scan(case.source, filter=case.filter, **options).plan().files)

    def query() -> int:
        return pqsift.scan(case.source, columns=case.columns, filter=case.filter).to_table().num_rows

    return {
        "plan": plan,
        "plan, no statistics": lambda: plan(statistics=False),
        "pqsift": query,
        "pqsift, footers cached": query,
        "Polars": lambda: pl.scan_parquet(glob).filter(peer_filter).select(case.columns).collect().height,
        "DuckDB": lambda: len(
            connection.sql(
                f"SELECT {', '.join(case.columns)} FROM read_parquet('{glob}') WHERE {case.filter}"
            ).fetchall()
        ),
    }


def timed(run: Callable[[], int], walls: list[float], cpus: list[float]) -> int:
    wall, cpu = time.perf_counter(), time.process_time()
    rows = run()
    walls.append(time.perf_counter() - wall)
    cpus.append(time.process_time() - cpu)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--axis", default="row_groups,columns,files,rows")
    parser.add_argument("--sizes", help="the points of each axis, comma-separated (default: the axis's own)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=Path("data/scaling"))
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "scaling.md")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    connection = duckdb.connect()
    lines = [
        "# Cost against the size of the metadata (`benches/scaling.py`)",
        "",
        f"A query selecting 100 rows; best wall time of {args.repeat} interleaved rounds, median CPU "
        "time in brackets, ms. pqsift reads its footers on every run (its metadata cache emptied "
        "before the timed run), but for the `footers cached` column (a query run again in one process).",
    ]
    for axis in args.axis.split(","):
        lines += [
            "",
            f"## {axis.replace('_', ' ')}",
            "",
            f"| {axis.replace('_', ' ')} | pqsift plan | per unit | plan, statistics off | pqsift query "
            "| pqsift query, footers cached | Polars query | DuckDB query | pqsift ÷ best peer |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        print("\n".join(lines[-4:]), flush=True)
        sizes = [int(size) for size in args.sizes.split(",")] if args.sizes else DEFAULT_SIZES[axis]
        for size in sizes:
            case = write_case(axis, size, args.data)
            runs = engines(case, connection)
            walls: dict[str, list[float]] = {name: [] for name in runs}
            cpus: dict[str, list[float]] = {name: [] for name in runs}
            for name, run in runs.items():  # warm-up; the queries agree
                if name in COLD_RUNS:
                    pqsift._core.clear_metadata_cache()
                rows = run()
                assert name.startswith("plan") or rows == 100, (axis, size, name, rows)
            for _ in range(args.repeat):
                for name, run in runs.items():
                    if name in COLD_RUNS:
                        pqsift._core.clear_metadata_cache()
                    timed(run, walls[name], cpus[name])

            def cell(name: str, walls: dict[str, list[float]] = walls, cpus: dict[str, list[float]] = cpus) -> str:
                return f"{min(walls[name]) * 1000:.1f} ({statistics.median(cpus[name]) * 1000:.0f})"

            best_peer = min(min(walls["Polars"]), min(walls["DuckDB"]))
            lines.append(
                f"| {size:,} | {cell('plan')} | {min(walls['plan']) / (size / UNIT[axis]) * 1e6:.1f} µs "
                f"| {cell('plan, no statistics')} | {cell('pqsift')} | {cell('pqsift, footers cached')} "
                f"| {cell('Polars')} | {cell('DuckDB')} "
                f"| {min(walls['pqsift']) / best_peer:.2f} |"
            )
            print(lines[-1], flush=True)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
