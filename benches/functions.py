"""Functions in filters: string, date and arithmetic functions as data engineers write them
in a WHERE clause, pqsift beside Polars and DuckDB on the ``events`` dataset of
``benches/peers.py`` (8,000,000 rows, written there if absent).

    python benches/functions.py [--repeat 5] [--threads 2] [--only substr,hour] [--time-zone ZONE] [--out FILE]

Each case is one query three ways: pqsift's Spark SQL filter, DuckDB's SQL and a Polars
expression, each projecting ``event_id`` for the rows that pass; every engine must return
the same row count (the script stops otherwise). Per engine and case: the best wall time of
``--repeat`` runs after a warm-up, and the median CPU time (user + system, every thread of
the process); engines take turns within a case, the order rotating from case to case. The
ratio is the best peer's wall time over pqsift's (> 1: pqsift faster). Results:
``benches/results/functions.md`` unless ``--out`` names another file.

The session time zone is UTC (pqsift's default, DuckDB's ``TimeZone`` setting, Polars'
UTC-typed column), so the date functions see the same wall clock in every engine;
``--time-zone America/New_York`` sets another in each (Polars converts the column to it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers  # noqa: E402

ROOT = Path("data/bench-events")


@dataclass(frozen=True)
class Case:
    name: str
    #: pqsift's filter (Spark SQL).
    spark_sql: str
    #: DuckDB's WHERE clause.
    duckdb_sql: str
    #: The Polars expression, built when Polars is imported.
    polars: Callable[[Any], Any]


def cases(time_zone: str = "UTC") -> list[Case]:
    day = dt.date(2026, 1, 20)

    def ts(pl: Any) -> Any:
        return pl.col("ts").dt.convert_time_zone(time_zone)

    return [
        Case(
            "contains",
            "contains(url, 'shop.')",
            "contains(url, 'shop.')",
            lambda pl: pl.col("url").str.contains("shop.", literal=True),
        ),
        Case(
            "startswith",
            "startswith(url, 'https://m.')",
            "starts_with(url, 'https://m.')",
            lambda pl: pl.col("url").str.starts_with("https://m."),
        ),
        Case(
            "endswith",
            "endswith(user_agent, 'Chrome/100.0.6012 Safari/537.36')",
            "ends_with(user_agent, 'Chrome/100.0.6012 Safari/537.36')",
            lambda pl: pl.col("user_agent").str.ends_with("Chrome/100.0.6012 Safari/537.36"),
        ),
        Case(
            "LIKE",
            "url LIKE '%campaign=21%'",
            "url LIKE '%campaign=21%'",
            lambda pl: pl.col("url").str.contains("campaign=21", literal=True),
        ),
        # `_` is LIKE's one-character wildcard: Polars' regular expression says the same.
        Case(
            "LIKE with _",
            "url LIKE '%utm_campaign=21%'",
            "url LIKE '%utm_campaign=21%'",
            lambda pl: pl.col("url").str.contains("utm.campaign=21"),
        ),
        Case(
            "lower",
            "lower(user_agent) LIKE '%iphone%'",
            "lower(user_agent) LIKE '%iphone%'",
            lambda pl: pl.col("user_agent").str.to_lowercase().str.contains("iphone", literal=True),
        ),
        Case(
            "length",
            "length(referrer) > 30",
            "length(referrer) > 30",
            lambda pl: pl.col("referrer").str.len_chars() > 30,
        ),
        Case(
            "substr",
            "substr(url, 1, 12) = 'https://shop'",
            "substr(url, 1, 12) = 'https://shop'",
            lambda pl: pl.col("url").str.slice(0, 12) == "https://shop",
        ),
        Case(
            "concat",
            "concat(country, '-', kind) = 'DE-purchase'",
            "concat(country, '-', kind) = 'DE-purchase'",
            lambda pl: pl.concat_str([pl.col("country"), pl.lit("-"), pl.col("kind")]) == "DE-purchase",
        ),
        Case(
            "to_date",
            f"to_date(ts) = date'{day}'",
            f"CAST(ts AS DATE) = DATE '{day}'",
            lambda pl: ts(pl).dt.date() == day,
        ),
        Case("hour", "hour(ts) = 3", "hour(ts) = 3", lambda pl: ts(pl).dt.hour() == 3),
        Case(
            "date_add",
            f"date_add(to_date(ts), 7) = date'{day}'",
            f"CAST(ts AS DATE) + INTERVAL 7 DAY = DATE '{day}'",
            lambda pl: ts(pl).dt.date() + dt.timedelta(days=7) == day,
        ),
        Case("modulo", "user_id % 100 = 7", "user_id % 100 = 7", lambda pl: pl.col("user_id") % 100 == 7),
        Case(
            "arithmetic",
            "duration_ms / 1000 > 30",
            "duration_ms / 1000 > 30",
            lambda pl: pl.col("duration_ms") / 1000 > 30,
        ),
        Case(
            "coalesce",
            "coalesce(referrer, url) LIKE '%reddit%'",
            "coalesce(referrer, url) LIKE '%reddit%'",
            lambda pl: pl.coalesce("referrer", "url").str.contains("reddit", literal=True),
        ),
        Case(
            "CASE",
            "CASE WHEN status >= 400 THEN amount ELSE 0 END > 100",
            "CASE WHEN status >= 400 THEN amount ELSE 0 END > 100",
            lambda pl: pl.when(pl.col("status") >= 400).then(pl.col("amount")).otherwise(0) > 100,
        ),
        # Spark and DuckDB round half away from zero, Polars to even unless told.
        Case(
            "round",
            "round(amount, 0) = 45",
            "round(amount, 0) = 45",
            lambda pl: pl.col("amount").round(0, mode="half_away_from_zero") == 45,
        ),
    ]


def timed(run: Callable[[], int], repeat: int) -> tuple[int, float, float]:
    """Rows, best wall and median CPU seconds of `repeat` runs after a warm-up."""
    rows = run()
    walls, cpus = [], []
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        if run() != rows:
            raise SystemExit("an engine returned a different row count from one run to the next")
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return rows, min(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--time-zone", default="UTC", help="the session time zone of every engine")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "functions.md")
    args = parser.parse_args()

    os.environ["POLARS_MAX_THREADS"] = str(args.threads)
    import duckdb
    import polars as pl

    import pqsift

    if not ROOT.exists():
        peers.write_events(ROOT)
    files = str(ROOT / "*.parquet")
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    con.execute(f"SET TimeZone = '{args.time_zone}'")
    engines: dict[str, Callable[[Case], int]] = {
        "pqsift": lambda case: (
            pqsift.scan(
                str(ROOT),
                columns=["event_id"],
                filter=case.spark_sql,
                threads=args.threads,
                session_time_zone=args.time_zone,
            )
            .to_table()
            .num_rows
        ),
        "Polars": lambda case: pl.scan_parquet(files).filter(case.polars(pl)).select("event_id").collect().height,
        # con.sql, not con.execute: a DB-API result's Arrow output is copied once more.
        "DuckDB": lambda case: (
            con.sql(f"SELECT event_id FROM read_parquet('{files}') WHERE {case.duckdb_sql}").to_arrow_table().num_rows
        ),
    }
    only = set(args.only.split(",")) if args.only else None
    selected = [case for case in cases(args.time_zone) if only is None or case.name in only]
    lines = [
        "# Functions in filters",
        "",
        f"Produced by `python benches/functions.py --repeat {args.repeat} --threads {args.threads}"
        f" --time-zone {args.time_zone}` on "
        f"{dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}, {os.cpu_count()} CPUs, "
        f"{platform.platform()}; pqsift {pqsift.__version__}, polars {pl.__version__}, duckdb {duckdb.__version__}. "
        f"`data/bench-events` (8M rows), `event_id` of the rows that pass; best wall / median CPU ms of "
        f"{args.repeat} runs after a warm-up, engines in turns. Ratio: the best peer's wall over pqsift's.",
        "",
        "| case | pqsift filter | rows | pqsift | Polars | DuckDB | best peer ÷ pqsift |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    names = list(engines)
    for index, case in enumerate(selected):
        order = names[index % len(names) :] + names[: index % len(names)]
        results = {name: timed(lambda name=name, case=case: engines[name](case), args.repeat) for name in order}
        counts = {name: rows for name, (rows, _, _) in results.items()}
        if len(set(counts.values())) != 1:
            raise SystemExit(f"{case.name}: the engines disagree on the row count: {counts}")
        cell = {name: f"{wall * 1e3:.1f} / {cpu * 1e3:.1f}" for name, (_, wall, cpu) in results.items()}
        best_peer = min(results[name][1] for name in names if name != "pqsift")
        ratio = best_peer / results["pqsift"][1]
        line = (
            f"| {case.name} | `{case.spark_sql}` | {counts['pqsift']:,} | {cell['pqsift']} | {cell['Polars']} | "
            f"{cell['DuckDB']} | {ratio:.2f}× |"
        )
        print(line, flush=True)
        lines.append(line)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
