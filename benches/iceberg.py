"""Planning and reading an Iceberg table of many small files, side by side with pyiceberg
(its own scan planning, pyarrow reading) and Polars' ``scan_iceberg``.

The table (built once under ``data/iceberg_bench/``, reused while its files are there):
FILES Parquet files of ROWS rows written with pyarrow, ``id`` and ``ts`` increasing across
files (a time-ordered table, as streaming writers make), ``kind`` of five values,
``amount``, and a wide ``payload`` string; registered with pyiceberg's ``add_files``
PER_MANIFEST files at a time, so the snapshot's manifest list names FILES / PER_MANIFEST
manifests. The files carry no field ids: every reader goes through the table's name
mapping, as for a table migrated from plain Parquet.

Queries (each reader's result checked equal to pqsift's):

* point lookup — ``id = K``: one file of FILES can hold it;
* time range — ``ts`` over 0.5% of the table;
* selective with text — ``kind = 'refund' AND amount > 995`` projecting ``payload``: every
  file's bounds admit it;
* count — every row of one column.

Each reader runs cold as to its own caches where it can be made to: pqsift's process-wide
footer and manifest caches are emptied before each run (``_core.clear_metadata_cache()``);
pyiceberg and Polars re-load the table from the catalog each run — but Polars keeps the
manifests it read in the process, so after its first run it plans warm. "pqsift+cache"
keeps pqsift's caches across runs, to compare with that. The OS page cache is warm for all. Round
robin over readers and queries after one untimed round; the best of REPEAT, wall
(``perf_counter``) and CPU (``process_time``, all threads).

    .venv/bin/python benches/iceberg.py [--files 10000] [--per-manifest 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import And, EqualTo, GreaterThan, GreaterThanOrEqual, LessThan

import pqsift

ROOT = Path(__file__).resolve().parents[1]
ROWS = 100
KINDS = ["sale", "refund", "view", "click", "return"]
START = datetime.datetime(2026, 1, 1)


def write_files(directory: Path, files: int) -> list[Path]:
    """FILES Parquet files of ROWS rows (see the module documentation) in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(files):
        ids = range(k * ROWS, (k + 1) * ROWS)
        table = pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "ts": pa.array([START + datetime.timedelta(seconds=10 * i) for i in ids], pa.timestamp("us")),
                "kind": pa.array([KINDS[(i * 7) % 5] for i in ids]),
                "amount": pa.array([float((i * 37) % 1000) for i in ids]),
                "payload": pa.array([f"{i:08d}-" + "x" * 120 for i in ids]),
            }
        )
        path = directory / f"part-{k:05d}.parquet"
        pq.write_table(table, path)
        paths.append(path)
    return paths


def build(directory: Path, files: int, per_manifest: int) -> Path:
    """The table's catalog database (see the module documentation); built when absent."""
    done = directory / f"built-{files}-{per_manifest}.json"
    if done.exists():
        return Path(json.loads(done.read_text())["catalog"])
    shutil.rmtree(directory, ignore_errors=True)
    paths = [f"file://{path}" for path in write_files(directory / "files", files)]
    catalog_db = directory / "catalog.db"
    catalog = SqlCatalog("bench", uri=f"sqlite:///{catalog_db}", warehouse=f"file://{directory}/warehouse")
    catalog.create_namespace("db")
    schema = pq.read_schema(paths[0].removeprefix("file://"))
    table = catalog.create_table("db.events", schema=schema)
    for start in range(0, files, per_manifest):
        table.add_files(paths[start : start + per_manifest])
        table = catalog.load_table("db.events")
    done.write_text(json.dumps({"catalog": str(catalog_db), "location": str(table.location())}))
    return catalog_db


def bench_queries(files: int) -> dict[str, dict[str, Any]]:
    """The queries of the module documentation over a table of `files` files: per query its
    filter as pqsift's SQL, pyiceberg's expression and Polars' expression, and its columns."""
    point = files * ROWS // 2 + 17
    ts_from = START + datetime.timedelta(seconds=10 * files * ROWS * 40 // 100)
    ts_to = ts_from + datetime.timedelta(seconds=10 * files * ROWS // 200)
    ts_sql = (ts_from.isoformat(sep=" "), ts_to.isoformat(sep=" "))
    return {
        "point lookup": {
            "sql": f"id = {point}",
            "columns": ["id", "ts", "kind", "amount", "payload"],
            "pyiceberg": EqualTo("id", point),
            "polars": pl.col("id") == point,
        },
        "time range 0.5%": {
            "sql": f"ts >= TIMESTAMP '{ts_sql[0]}' AND ts < TIMESTAMP '{ts_sql[1]}'",
            "columns": ["id", "ts", "amount"],
            "pyiceberg": And(GreaterThanOrEqual("ts", ts_sql[0].replace(" ", "T")), LessThan("ts", ts_sql[1].replace(" ", "T"))),
            "polars": (pl.col("ts") >= ts_from) & (pl.col("ts") < ts_to),
        },
        "selective with text": {
            "sql": "kind = 'refund' AND amount > 995",
            "columns": ["id", "payload"],
            "pyiceberg": And(EqualTo("kind", "refund"), GreaterThan("amount", 995.0)),
            "polars": (pl.col("kind") == "refund") & (pl.col("amount") > 995),
        },
        "count one column": {"sql": None, "columns": ["id"], "pyiceberg": None, "polars": None},
    }


def timed(run: Callable[[], Any]) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--per-manifest", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "benches" / "results" / "iceberg.md")
    args = parser.parse_args()

    directory = ROOT / "data" / "iceberg_bench"
    started = time.perf_counter()
    catalog_db = build(directory, args.files, args.per_manifest)
    built = time.perf_counter() - started
    catalog = SqlCatalog("bench", uri=f"sqlite:///{catalog_db}", warehouse=f"file://{directory}/warehouse")
    root = str(catalog.load_table("db.events").location()).removeprefix("file://")
    allowed = [str(directory / "files")]  # add_files registered them where they were written

    queries = bench_queries(args.files)

    def run_pqsift(query: dict[str, Any]) -> pa.Table:
        pqsift._core.clear_metadata_cache()
        return pqsift.scan(root, columns=query["columns"], filter=query["sql"], allowed_locations=allowed).to_table()

    def run_pyiceberg(query: dict[str, Any]) -> pa.Table:
        table = catalog.load_table("db.events")
        scan = table.scan(selected_fields=tuple(query["columns"]))
        if query["pyiceberg"] is not None:
            scan = table.scan(row_filter=query["pyiceberg"], selected_fields=tuple(query["columns"]))
        return scan.to_arrow()

    def run_polars(query: dict[str, Any]) -> pa.Table:
        frame = pl.scan_iceberg(catalog.load_table("db.events"))
        if query["polars"] is not None:
            frame = frame.filter(query["polars"])
        return frame.select(query["columns"]).collect().to_arrow()

    def run_pqsift_cached(query: dict[str, Any]) -> pa.Table:
        # Footers, small files and manifests earlier scans read kept, as a process querying
        # the table again has them (and as Polars keeps the manifests it read).
        return pqsift.scan(root, columns=query["columns"], filter=query["sql"], allowed_locations=allowed).to_table()

    readers = {"pqsift": run_pqsift, "pyiceberg": run_pyiceberg, "polars": run_polars, "pqsift+cache": run_pqsift_cached}
    best: dict[tuple[str, str], tuple[float, float]] = {}
    plans: dict[str, dict[str, Any]] = {}
    for round_ in range(args.repeat + 1):
        for name, query in queries.items():
            expected = None
            for reader, run in readers.items():
                wall, cpu, result = timed(lambda run=run, query=query: run(query))  # type: ignore[misc]
                rows = sorted(result.column("id").to_pylist())
                if expected is None:
                    expected = rows
                elif rows != expected:
                    sys.exit(f"{reader} disagrees with pqsift on {name}: {len(rows)} rows against {len(expected)}")
                if round_ == 0:
                    continue
                old = best.get((name, reader))
                best[(name, reader)] = (min(wall, old[0]), min(cpu, old[1])) if old else (wall, cpu)
        if round_ == 0:
            for name, query in queries.items():
                pqsift._core.clear_metadata_cache()
                scan = pqsift.scan(root, columns=query["columns"], filter=query["sql"], allowed_locations=allowed)
                scan.to_table()
                plans[name] = {k: scan.metrics[k] for k in ("files_total", "files_pruned_manifest", "iceberg_manifests_read", "rows_out")}

    lines = [
        "# Iceberg: planning and reading a table of many small files",
        "",
        f"`benches/iceberg.py --files {args.files} --per-manifest {args.per_manifest} --repeat {args.repeat}`: "
        f"{args.files:,} files of {ROWS} rows in {args.files // args.per_manifest} manifests (name-mapped, no field ids), "
        f"{platform.machine()}, {platform.python_version()}, pqsift {pqsift.__version__}, "
        f"pyiceberg {__import__('pyiceberg').__version__}, polars {pl.__version__}. Table built in {built:.0f} s "
        "(or reused). Best of the runs, milliseconds, wall / CPU; ratio = pqsift's wall time ÷ the reader's (< 1: pqsift faster).",
        "",
        "| query | rows | files pruned by the manifests | pqsift | pyiceberg | polars | pqsift+cache | ratio vs pyiceberg | ratio vs polars |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in queries:
        cells = {r: best[(name, r)] for r in readers}
        plan = plans[name]
        lines.append(
            f"| {name} | {plan['rows_out']:,} | {plan['files_pruned_manifest']:,} of {plan['files_total']:,} | "
            + " | ".join(f"{cells[r][0] * 1e3:.0f} / {cells[r][1] * 1e3:.0f}" for r in readers)
            + f" | {cells['pqsift'][0] / cells['pyiceberg'][0]:.2f} | {cells['pqsift'][0] / cells['polars'][0]:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
