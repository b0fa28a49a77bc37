"""Long IN lists (issue 15): ``col IN (k values)`` at k = 10, 1,000, 10,000, 100,000 on a
sorted column, an unsorted one, and the unsorted one with a bloom filter, pqsift beside
DuckDB, Polars, DataFusion and pyarrow.dataset; optionally through Spark (``--spark``):
the pqsift data source with Spark's ``In`` filter pushed, and Spark's native reader.

    python benches/in_lists.py [--sizes 10,1000,10000,100000] [--repeat 3] [--spark]

The table (``data/in-lists``, written if absent): 8,000,000 rows in 8 files of 4 row
groups, pages of 10,000 rows, page index on, zstd; ``seq`` (int64, sorted: 3 x row),
``key`` (the same values shuffled over the whole table), ``key_bloom`` (a copy of ``key``
with a bloom filter), ``note`` (a 20-40 byte string). Each list holds k distinct values,
half of them in the table and half not (numbers 1 above a multiple of 3: inside every
row group's bounds, so only a bloom filter can rule them out); the query projects the
column and ``note``.

Every run (the warm-up's too) draws a list of its own, the same lists for every engine, so
that no engine's cache of a parsed or bound list serves it. Each engine runs the query as
its users write it: SQL text ``WHERE c IN (...)`` for
pqsift, DuckDB and DataFusion, ``pl.col(c).is_in(values)`` for Polars (its SQL parser
takes minutes on 100,000 literals), ``pc.field(c).isin(values)`` for pyarrow. Wall time is
the best of ``--repeat`` runs after a warm-up (CPU time: the median of the runs); pqsift's
planning time (``time_plan_s``: parsing, binding, pruning) is given on its own. Every
engine must return the same row count. Results go to ``benches/results/in_lists.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

FILES = 8
ROWS_PER_FILE = 1_000_000
ROW_GROUP_ROWS = 250_000
COLUMNS = ("seq", "key", "key_bloom")


def write_table(root: Path, seed: int = 5) -> None:
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    total = FILES * ROWS_PER_FILE
    shuffled = rng.permutation(total).astype(np.int64) * 3
    words = pa.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])
    for f in range(FILES):
        rows = slice(f * ROWS_PER_FILE, (f + 1) * ROWS_PER_FILE)
        n = ROWS_PER_FILE
        picks = rng.integers(0, len(words), (n, 4))
        note = pc.binary_join_element_wise(*(pc.take(words, np.ascontiguousarray(picks[:, j])) for j in range(4)), " ")
        table = pa.table(
            {
                "seq": pa.array(np.arange(rows.start, rows.stop, dtype=np.int64) * 3),
                "key": pa.array(shuffled[rows]),
                "key_bloom": pa.array(shuffled[rows]),
                "note": note,
            }
        )
        pq.write_table(
            table,
            root / f"part-{f}.parquet",
            row_group_size=ROW_GROUP_ROWS,
            write_page_index=True,
            max_rows_per_page=10_000,
            compression="zstd",
            bloom_filter_options={"key_bloom": {"ndv": n, "fpp": 0.01}},
        )


def values(k: int, seed: int) -> list[int]:
    """k distinct values: half multiples of 3 below 3 x rows (in the table), half 1 above
    one (not in it, but inside the bounds)."""
    rng = np.random.default_rng(seed)
    total = FILES * ROWS_PER_FILE
    picked = rng.choice(total, k, replace=False).astype(np.int64) * 3
    picked[1::2] += 1
    return picked.tolist()


def engines(root: Path) -> dict[str, Callable[[str, list[int], str], tuple[int, dict[str, Any]]]]:
    """Each engine: (column, values, SQL list text) -> (rows, extra figures)."""
    import pqsift

    glob = str(root / "*.parquet")
    out: dict[str, Callable[[str, list[int], str], tuple[int, dict[str, Any]]]] = {}

    def run_pqsift(column: str, _: list[int], listed: str) -> tuple[int, dict[str, Any]]:
        scan = pqsift.scan(str(root), [column, "note"], f"{column} IN ({listed})")
        rows = scan.to_table().num_rows
        return rows, {"plan_s": scan.metrics["time_plan_s"]}

    out["pqsift"] = run_pqsift
    dataset = ds.dataset(str(root), format="parquet")
    out["pyarrow.dataset"] = lambda c, v, _: (dataset.to_table(columns=[c, "note"], filter=pc.field(c).isin(v)).num_rows, {})
    try:
        import duckdb

        con = duckdb.connect()
        out["duckdb"] = lambda c, _, listed: (con.sql(f"SELECT {c}, note FROM read_parquet('{glob}') WHERE {c} IN ({listed})").to_arrow_table().num_rows, {})
    except ImportError:
        pass
    try:
        import polars as pl

        out["polars"] = lambda c, v, _: (pl.scan_parquet(glob).select(c, "note").filter(pl.col(c).is_in(v)).collect().height, {})
    except ImportError:
        pass
    try:
        import datafusion

        config = datafusion.SessionConfig().set("datafusion.execution.parquet.pushdown_filters", "true").set("datafusion.execution.parquet.reorder_filters", "true")
        ctx = datafusion.SessionContext(config)
        ctx.register_parquet("t", str(root))
        out["datafusion"] = lambda c, _, listed: (ctx.sql(f"SELECT {c}, note FROM t WHERE {c} IN ({listed})").to_arrow_table().num_rows, {})
    except ImportError:
        pass
    return out


def spark_engines(root: Path) -> dict[str, Callable[[str, list[int], str], tuple[int, dict[str, Any]]]]:
    from pyspark.sql import functions as F  # noqa: N812 - Spark's usual name

    from spark_bench import local_spark, noop

    spark = local_spark()
    path = str(root)

    def count(df: Any) -> int:
        noop(df)
        return df.count()

    return {
        "spark native": lambda c, v, _: (count(spark.read.parquet(path).select(c, "note").filter(F.col(c).isin(v))), {}),
        "pqsift data source": lambda c, v, _: (count(spark.read.format("pqsift").option("columns", f"{c},note").load(path).filter(F.col(c).isin(v))), {}),
    }


def measure(run: Callable[[], tuple[int, dict[str, Any]]], repeat: int) -> tuple[int, float, float, dict[str, Any]]:
    rows, extra = run()
    walls, cpus, extras = [], [], []
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        _, extra = run()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        extras.append(extra)
    best = min(range(repeat), key=walls.__getitem__)
    return rows, walls[best], statistics.median(cpus), extras[best]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/in-lists"))
    parser.add_argument("--sizes", default="10,1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spark", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("benches/results/in_lists.md"))
    args = parser.parse_args()
    if not list(args.data.glob("*.parquet")):
        print(f"writing {args.data} ...", flush=True)
        write_table(args.data)
    runners = engines(args.data)
    if args.spark:
        runners.update(spark_engines(args.data))
    names = list(runners)
    peers = [n for n in names if n not in ("pqsift", "pqsift data source", "spark native")]
    header = (
        "| column | values | rows | pqsift plan (ms) | "
        + " | ".join(f"{n} (ms)" for n in names)
        + " | best peer / pqsift |"
        + (" native / data source |" if args.spark else "")
    )
    lines = [header, "|---|---:|---:|---:|" + "---:|" * len(names) + "---:|" + ("---:|" if args.spark else "")]
    print(header, flush=True)
    for column in COLUMNS:
        for k in (int(s) for s in args.sizes.split(",")):
            # A list of its own for every run (the warm-up's too), the same lists for every
            # engine: pqsift keeps its last few long filters parsed and bound, and a query
            # repeated word for word would find them.
            lists = [values(k, seed=k * 1_000 + run) for run in range(args.repeat + 1)]
            texts = [", ".join(map(str, picked)) for picked in lists]
            results = {}
            for name, runner in runners.items():
                drawn = iter(zip(lists, texts, strict=True))
                results[name] = measure(lambda r=runner, c=column, d=drawn: r(c, *next(d)), args.repeat)
            counts = {n: r[0] for n, r in results.items()}
            if len(set(counts.values())) != 1:
                raise SystemExit(f"{column} IN {k} values: row counts differ: {counts}")
            wall = {n: r[1] for n, r in results.items()}
            best_peer = min(peers, key=wall.__getitem__)
            line = (
                f"| {column} | {k:,} | {counts['pqsift']:,} | {results['pqsift'][3]['plan_s'] * 1000:.1f} | "
                + " | ".join(f"{wall[n] * 1000:.0f}" for n in names)
                + f" | {wall[best_peer] / wall['pqsift']:.2f}× ({best_peer}) |"
                + (f" {wall['spark native'] / wall['pqsift data source']:.2f}× |" if args.spark else "")
            )
            print(line, flush=True)
            lines.append(line)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        "# Long IN lists (`benches/in_lists.py`)\n\n"
        f"{os.cpu_count()} cores; `{args.data}`: {FILES * ROWS_PER_FILE:,} rows, {FILES} files, {FILES * ROWS_PER_FILE // ROW_GROUP_ROWS} row groups,"
        " pages of 10,000 rows, page index; `seq` sorted, `key` shuffled, `key_bloom` shuffled with a bloom filter; half the values absent."
        f" Best wall time of {args.repeat} runs after a warm-up, in ms; `column IN (...)` projecting the column and `note`.\n\n" + "\n".join(lines) + "\n"
    )
    print(f"\nwritten {args.out}")


if __name__ == "__main__":
    main()
