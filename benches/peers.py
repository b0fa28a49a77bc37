"""pqsift side by side with pyarrow.dataset, DuckDB, Polars and DataFusion on the same files.

Run with ``make bench-peers`` (installs the peers into the project's venv first). It writes
a wide dataset under ``data/bench`` if absent — several files, a sorted timestamp, a
high-cardinality id with a bloom filter, low-cardinality strings, numeric columns with
nulls, a long text column, page index on — and times five query shapes with every engine,
best of ``--repeat`` runs after a warm-up (files in the page cache: this measures CPU and
decoding, not the disk). It prints each time, the ratio to the best peer, pqsift with
``pushdown_filters=False``, and the bytes pqsift read against the bytes of the pages that
hold matching rows. Row counts are cross-checked: every engine must return the same rows.

Results go to ``benches/results/peers.json`` (per shape: filter, columns, rows, best time
per engine) and are drawn into ``benches/results/peers.png`` by ``benches/plot_peers.py``
(``--no-plot`` to skip the chart).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

FILES = 8
ROWS_PER_FILE = 500_000
ROW_GROUP_ROWS = 125_000
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def write_dataset(root: Path, seed: int = 11) -> None:
    """The benchmark dataset: FILES files of ROWS_PER_FILE events, sorted by ts."""
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    kinds = np.array(["view", "click", "cart", "purchase", "refund"])
    regions = np.array(["eu", "us", "apac", "latam"])
    words = np.array(["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit"])
    for f in range(FILES):
        n = ROWS_PER_FILE
        first = f * n
        ts = np.datetime64("2026-01-01T00:00:00", "us") + (np.arange(first, first + n) * 1_000_000).astype("timedelta64[us]")
        amount = np.round(rng.uniform(0, 1000, n), 2)
        amount_nulls = rng.random(n) < 0.05
        text = [" ".join(words[rng.integers(0, len(words), 30)]) for _ in range(n)]
        table = pa.table(
            {
                "ts": pa.array(ts, type=pa.timestamp("us", tz="UTC")),
                "id": pa.array(rng.permutation(np.arange(first, first + n)) * 7 + 3, type=pa.int64()),
                "kind": pa.array(kinds[rng.choice(len(kinds), n, p=[0.6, 0.25, 0.08, 0.05, 0.02])]),
                "region": pa.array(regions[rng.integers(0, len(regions), n)]),
                "amount": pa.array(np.where(amount_nulls, None, amount), type=pa.float64()),
                "quantity": pa.array(rng.integers(1, 10, n), type=pa.int32()),
                "text": pa.array(text, type=pa.string()),
            }
        )
        pq.write_table(
            table,
            root / f"part-{f:03d}.parquet",
            row_group_size=ROW_GROUP_ROWS,
            write_page_index=True,
            max_rows_per_page=10_000,
            compression="zstd",
            bloom_filter_options={"id": {"ndv": n, "fpp": 0.01}},
        )


@dataclass
class Shape:
    """One query: pqsift/Spark SQL filter text, projected columns, and the same filter as
    a pyarrow expression (pyarrow.dataset has no SQL)."""

    name: str
    columns: list[str]
    where: str
    arrow_filter: pc.Expression | None


def shapes() -> list[Shape]:
    t1 = pa.scalar(datetime(2026, 1, 20, 3, tzinfo=timezone.utc), type=pa.timestamp("us", tz="UTC"))
    t2 = pa.scalar(datetime(2026, 1, 20, 9, tzinfo=timezone.utc), type=pa.timestamp("us", tz="UTC"))
    point = 1_234_567 * 7 + 3
    return [
        Shape(
            "range on sorted ts",
            ["ts", "id", "amount", "text"],
            "ts >= TIMESTAMP '2026-01-20 03:00:00' AND ts < TIMESTAMP '2026-01-20 09:00:00'",
            (ds.field("ts") >= t1) & (ds.field("ts") < t2),
        ),
        Shape("point lookup (bloom)", ["ts", "id", "kind", "amount", "text"], f"id = {point}", ds.field("id") == point),
        Shape(
            "selective, text projected",
            ["id", "text"],
            "kind = 'refund' AND region = 'eu' AND amount > 900",
            (ds.field("kind") == "refund") & (ds.field("region") == "eu") & (ds.field("amount") > 900),
        ),
        Shape("moderate (~25%)", ["id", "amount", "kind"], "amount > 737.5", ds.field("amount") > 737.5),
        Shape("projection scan", ["id", "amount"], "", None),
    ]


def sql(shape: Shape, table: str) -> str:
    where = f" WHERE {shape.where}" if shape.where else ""
    return f"SELECT {', '.join(shape.columns)} FROM {table}{where}"


def engines(root: Path) -> dict[str, Callable[[Shape], int]]:
    """Each engine runs a shape and returns the row count."""
    glob = str(root / "*.parquet")
    out: dict[str, Callable[[Shape], int]] = {}

    import pqsift

    def run_pqsift(shape: Shape, **options: object) -> int:
        scan = pqsift.scan(str(root), columns=shape.columns, filter=shape.where or None, **options)
        return scan.to_table().num_rows

    out["pqsift"] = run_pqsift
    out["pqsift (no pushdown)"] = lambda s: run_pqsift(s, pushdown_filters=False)

    dataset = ds.dataset(str(root), format="parquet")
    out["pyarrow.dataset"] = lambda s: dataset.to_table(columns=s.columns, filter=s.arrow_filter).num_rows

    try:
        import duckdb

        con = duckdb.connect()
        con.execute("SET TimeZone = 'UTC'")
        out["duckdb"] = lambda s: con.execute(sql(s, f"read_parquet('{glob}')")).to_arrow_table().num_rows
    except ImportError:
        pass
    try:
        import polars as pl

        ctx = pl.SQLContext(events=pl.scan_parquet(glob))
        out["polars"] = lambda s: ctx.execute(sql(s, "events").replace("TIMESTAMP ", "")).collect().height
    except ImportError:
        pass
    try:
        import datafusion

        config = (
            datafusion.SessionConfig()
            .set("datafusion.execution.parquet.pushdown_filters", "true")
            .set("datafusion.execution.parquet.reorder_filters", "true")
            .set("datafusion.execution.time_zone", "UTC")
        )
        dctx = datafusion.SessionContext(config)
        dctx.register_parquet("events", str(root))
        out["datafusion"] = lambda s: dctx.sql(sql(s, "events")).to_arrow_table().num_rows
    except ImportError:
        pass
    return out


def best_time(run: Callable[[], int], repeat: int) -> tuple[float, int]:
    rows = run()  # warm-up
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        rows = run()
        times.append(time.perf_counter() - started)
    return min(times), rows


def minimal_bytes(root: Path, shape: Shape) -> int:
    """Bytes of the pages, of the columns the query touches, that hold a matching row:
    what an ideal reader would fetch (dictionary pages not counted)."""
    from pqsift import RowSelection
    from pqsift._core import column_pages

    needed = set(shape.columns) | {name for name in ("ts", "id", "kind", "region", "amount") if name in shape.where}
    total = 0
    for path in sorted(root.glob("*.parquet")):
        file = pq.ParquetFile(path)
        pages = {column: column_pages(str(path), column) for column in needed}
        for rg in range(file.metadata.num_row_groups):
            rows = file.metadata.row_group(rg).num_rows
            if shape.arrow_filter is None:
                selection = RowSelection.select_all(rows)
            else:
                table = file.read_row_group(rg, columns=sorted(needed))
                table = table.append_column("__row", pa.array(np.arange(rows)))
                matching = table.filter(shape.arrow_filter).column("__row").to_numpy()
                mask = np.zeros(rows, dtype=bool)
                mask[matching] = True
                selection = RowSelection.from_mask(pa.array(mask))
            for column in needed:
                total += sum(length for _, length in selection.scan_ranges(pages[column][rg][1]))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/bench"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, default=Path("benches/results/peers.json"))
    parser.add_argument("--png", type=Path, default=Path("benches/results/peers.png"), help="the chart drawn from --json")
    parser.add_argument("--no-plot", action="store_true", help="do not draw the chart")
    parser.add_argument("--bytes", action="store_true", help="only compare pqsift's bytes read with the matching pages' bytes")
    args = parser.parse_args()
    if not any(args.data.glob("*.parquet")):
        print(f"writing {FILES} files x {ROWS_PER_FILE:,} rows to {args.data} ...")
        write_dataset(args.data)
    size = sum(p.stat().st_size for p in args.data.glob("*.parquet"))
    print(f"dataset: {FILES * ROWS_PER_FILE:,} rows, {size / 2**20:.0f} MiB in {FILES} files\n")

    if args.bytes:
        import pqsift

        for shape in shapes():
            scan = pqsift.scan(str(args.data), columns=shape.columns, filter=shape.where or None)
            scan.to_table()
            read, ideal = scan.metrics["bytes_read"], minimal_bytes(args.data, shape)
            print(f"{shape.name:28s} pqsift read {read / 2**20:8.1f} MiB; pages holding matches {ideal / 2**20:8.1f} MiB")
        return

    runners = engines(args.data)
    results: list[dict[str, object]] = []
    for shape in shapes():
        print(f"== {shape.name}: {shape.where or '(no filter)'}  -> {', '.join(shape.columns)}")
        timings: dict[str, float] = {}
        counts: dict[str, int] = {}
        for name, runner in runners.items():
            seconds, rows = best_time(lambda: runner(shape), args.repeat)
            timings[name], counts[name] = seconds, rows
        peers = {k: v for k, v in timings.items() if not k.startswith("pqsift")}
        best_peer = min(peers, key=peers.get) if peers else None
        for name, seconds in sorted(timings.items(), key=lambda kv: kv[1]):
            ratio = f"{peers[best_peer] / seconds:5.2f}x vs best peer" if best_peer and name.startswith("pqsift") else ""
            print(f"   {name:22s} {seconds * 1000:9.1f} ms  {counts[name]:>9,} rows  {ratio}")
        if len(set(counts.values())) != 1:
            print(f"   !! row counts differ: {counts}")
        results.append(
            {
                "name": shape.name,
                "filter": shape.where or None,
                "columns": shape.columns,
                "rows": counts.get("pqsift"),
                "seconds": timings,
            }
        )
        print()
    document = {
        "dataset": {"files": FILES, "rows": FILES * ROWS_PER_FILE, "bytes": size, "mib": round(size / 2**20)},
        "repeat": args.repeat,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": sys.version.split()[0]},
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "shapes": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {args.json}")
    if not args.no_plot:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from plot_peers import plot

        try:
            print(f"wrote {plot(args.json, args.png)}")
        except ImportError as error:  # matplotlib missing: the JSON is still written
            print(f"no chart: {error} (pip install -r requirements-bench.txt)")


if __name__ == "__main__":
    main()
