"""The queries of ``benches/iceberg.py`` on S3: the table's metadata and data files in a
bucket of moto's S3 behind the latency proxy of ``benches/object_store.py`` (``--delay`` ms
added to every request, default 25), read by pqsift, pyiceberg (its planning, pyarrow's
S3 reading) and Polars' ``scan_iceberg``, with the requests each makes.

The table: ``--files`` files of 100 rows (``benches/iceberg.py``'s, written under
``data/iceberg_s3_bench/`` once) uploaded straight to moto, registered with pyiceberg's
``add_files`` ``--per-manifest`` at a time through a SQLite catalog whose warehouse is in
the bucket — so every path the metadata names is an ``s3://`` URL — while the proxy adds no
delay; then the delay is set and the readers run.

Each run is cold: pqsift's footer and manifest caches emptied, pyiceberg's manifest cache
too, and pyiceberg and Polars re-load the table from the catalog (Polars keeps caches of
its own: its request counts say). "pqsift+cache" keeps pqsift's caches across runs, as a
process querying the table again does. Round robin after one untimed round; per reader and query the best of
``--repeat`` runs, wall and CPU (this process; the S3 side runs in a child), and the
requests the proxy saw in that run. Every reader must return pqsift's rows.

    .venv/bin/python benches/iceberg_s3.py [--files 1000] [--per-manifest 20] [--delay 25] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import clear_manifest_cache

ROOT = Path(__file__).resolve().parents[1]
for _folder in (ROOT / "benches", ROOT / "tests"):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

import pqsift  # noqa: E402
from iceberg import ROWS, bench_queries, timed, write_files  # noqa: E402
from object_store import S3Server  # noqa: E402
from s3_harness import ACCESS_KEY, REGION, SECRET_KEY  # noqa: E402


def local_files(directory: Path, files: int) -> Path:
    """The data files, written once."""
    done = directory / f"written-{files}"
    if not done.exists():
        write_files(directory / "files", files)
        done.touch()
    return directory / "files"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1_000)
    parser.add_argument("--per-manifest", type=int, default=20)
    parser.add_argument("--delay", type=float, default=25.0, help="ms added to every request")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benches" / "results" / "iceberg_s3.md")
    args = parser.parse_args()

    files_dir = local_files(ROOT / "data" / "iceberg_s3_bench", args.files)
    with S3Server(delay=0.0) as server, tempfile.TemporaryDirectory() as catalog_dir:
        bucket = server.new_bucket("iceberg")
        server.upload_dir(files_dir, bucket, "files")
        names = sorted(p.name for p in files_dir.glob("*.parquet"))[: args.files]
        urls = [f"s3://{bucket}/files/{name}" for name in names]
        properties = {
            "s3.endpoint": server.endpoint,
            "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY,
            "s3.region": REGION,
        }
        catalog = SqlCatalog(
            "bench", uri=f"sqlite:///{catalog_dir}/catalog.db", warehouse=f"s3://{bucket}/warehouse", **properties
        )
        catalog.create_namespace("db")
        started = time.perf_counter()
        table = catalog.create_table("db.events", schema=pq.read_schema(files_dir / names[0]))
        for start in range(0, len(urls), args.per_manifest):
            table.add_files(urls[start : start + args.per_manifest])
        built = time.perf_counter() - started
        root = str(catalog.load_table("db.events").location())
        storage = server.storage_options
        allowed = [f"s3://{bucket}/files/"]  # add_files registered them where they were uploaded
        server.set_delay(args.delay / 1000)

        queries = bench_queries(args.files)

        def run_pqsift(query: dict[str, Any]) -> pa.Table:
            pqsift._core.clear_metadata_cache()
            scan = pqsift.scan(
                root, columns=query["columns"], filter=query["sql"], allowed_locations=allowed, storage_options=storage
            )
            return scan.to_table()

        def run_pqsift_cached(query: dict[str, Any]) -> pa.Table:
            # As a notebook querying the table again: footers, small files and manifests
            # that earlier scans read are kept in the process.
            scan = pqsift.scan(
                root, columns=query["columns"], filter=query["sql"], allowed_locations=allowed, storage_options=storage
            )
            return scan.to_table()

        def run_pyiceberg(query: dict[str, Any]) -> pa.Table:
            clear_manifest_cache()
            loaded = catalog.load_table("db.events")
            if query["pyiceberg"] is None:
                return loaded.scan(selected_fields=tuple(query["columns"])).to_arrow()
            return loaded.scan(row_filter=query["pyiceberg"], selected_fields=tuple(query["columns"])).to_arrow()

        def run_polars(query: dict[str, Any]) -> pa.Table:
            clear_manifest_cache()
            frame = pl.scan_iceberg(catalog.load_table("db.events"), storage_options=storage)
            if query["polars"] is not None:
                frame = frame.filter(query["polars"])
            return frame.select(query["columns"]).collect().to_arrow()

        readers = {
            "pqsift": run_pqsift,
            "pyiceberg": run_pyiceberg,
            "polars": run_polars,
            "pqsift+cache": run_pqsift_cached,
        }
        best: dict[tuple[str, str], tuple[float, float, int]] = {}
        first: dict[tuple[str, str], tuple[float, float, int]] = {}
        for round_ in range(args.repeat + 1):
            for name, query in queries.items():
                expected = None
                for reader, run in readers.items():
                    server.reset()
                    wall, cpu, result = timed(lambda run=run, query=query: run(query))  # type: ignore[misc]
                    requests = server.snapshot()["requests"]
                    rows = sorted(result.column("id").to_pylist())
                    if expected is None:
                        expected = rows
                    elif rows != expected:
                        sys.exit(f"{reader} disagrees with pqsift on {name}: {len(rows)} rows against {len(expected)}")
                    print(
                        f"round {round_} {name:22s} {reader:10s} {wall * 1e3:8.0f} ms {requests:6d} requests",
                        flush=True,
                    )
                    if round_ == 0:
                        first[(name, reader)] = (wall, cpu, requests)
                        continue
                    old = best.get((name, reader))
                    if old is None or wall < old[0]:
                        best[(name, reader)] = (wall, cpu, requests)

    lines = [
        "# Iceberg on S3: planning and reading a table of many small files",
        "",
        f"`benches/iceberg_s3.py --files {args.files} --per-manifest {args.per_manifest} --delay {args.delay:g} "
        f"--repeat {args.repeat}`: {args.files:,} files of {ROWS} rows in {args.files // args.per_manifest} manifests "
        f"in a bucket of moto's S3 behind a proxy adding {args.delay:g} ms to every request; {platform.machine()}, "
        f"{platform.python_version()}, pqsift {pqsift.__version__}, pyiceberg {__import__('pyiceberg').__version__}, "
        f"polars {pl.__version__}. Table registered in {built:.0f} s. Wall / CPU ms and the requests of the "
        "run; ratio = pqsift's wall time ÷ the reader's (< 1: pqsift faster).",
    ]

    def table(title: str, runs: dict[tuple[str, str], tuple[float, float, int]]) -> None:
        lines.extend(
            [
                "",
                title,
                "",
                "| query | pqsift | pyiceberg | polars | pqsift+cache | ratio vs pyiceberg | ratio vs polars |",
                "|---|---|---|---|---|---|---|",
            ]
        )
        for name in queries:
            cells = {r: runs[(name, r)] for r in readers}
            lines.append(
                f"| {name} | "
                + " | ".join(f"{c[0] * 1e3:.0f} / {c[1] * 1e3:.0f} ms, {c[2]:,} req" for c in cells.values())
                + f" | {cells['pqsift'][0] / cells['pyiceberg'][0]:.2f} | {cells['pqsift'][0] / cells['polars'][0]:.2f} |"
            )

    table(
        "First run of each query (pqsift and pyiceberg cold; Polars only on the first query, the point lookup: it keeps the manifests it read in the process):",
        first,
    )
    table(
        "Best of the later runs (Polars keeps the manifests it read in the process: a later point lookup reads none):",
        best,
    )
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
