"""pqsift in Spark against Spark's native Parquet reader, side by side in one run.

Run with ``make bench-spark`` (options through ``ARGS``). It uses the dataset and the five
query shapes of ``benches/peers.py`` (written under ``data/bench`` if absent) and times, on
local Spark (``local[*]``), each shape read by

* ``spark.read.parquet(...).filter(...).select(...)`` — Spark's native reader with its
  defaults (row-group and page skipping, vectorized decoding, no late materialization);
* ``pqsift.spark.read(spark, ...)`` — pqsift as a user gets it: a small result read on the
  driver (``pqsift.spark.driver_read``), anything else by Python tasks (``mapInArrow``);
* the same with ``driver_read_bytes=0``: always Python tasks;
* ``spark.read.format("pqsift")`` — the Python data source, filters pushed;

into Spark's ``noop`` sink (every row is produced, nothing is written). After a warm-up,
the readers run in turns, ``--repeat`` rounds (times on two shared cores are noisy: each
reader sees the same noise), and the median and best of each are reported with the ratio
native / pqsift of the medians. It checks that every reader returns the same row count,
and writes ``benches/results/spark.md``.

``--driver-sweep`` adds the measurement behind ``DRIVER_READ_BYTES``: the range shape's
window widened from 1 to 384 hours, read on the driver and by tasks.

``--dataset events-spark`` times the first five shapes of ``peers.py``'s ``events`` dataset
(the range, the point lookup without a bloom filter, the selective shape with text, ~25%, a
projection) on those 8,000,000 rows as **Spark itself writes them** (``data/bench-events-spark``,
written here if absent): range-partitioned and sorted by ``ts`` into two files, with
Spark's defaults — snappy, 128 MiB row groups, 1 MiB pages, parquet-java's column index,
``ts`` as INT96 (``spark.sql.parquet.outputTimestampType``'s default, which keeps Spark from
pushing a filter on it down to the statistics).

``--topn`` times top-k queries instead (``benches/topn.py``'s: ``ORDER BY key DESC LIMIT
k`` with a wide column projected, sorted and unsorted keys, with and without a filter):
Spark's ``orderBy(...).limit(k)`` over its native reader against ``pqsift.spark.read(...,
order_by=..., limit=k)``, read on the driver and by tasks, each checked to return the same
keys as Spark; ``--dataset events`` or ``events-spark`` (``results/spark_topn.md``).

``--connect`` runs the same readers as a Spark Connect client (Spark 4's default client) of
a local Connect server (``local[*]``, the same settings, in a child process:
``tests/connect_harness.py``), and writes ``benches/results/spark_connect.md``. There the
client is not the driver: a small result is read in the client's process and sent to the
server as a local relation (the 8 MiB bound of a remote cluster), the rest by tasks.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import (
    EVENT_FILES,
    EVENT_ROW_GROUP_ROWS,
    EVENT_ROWS_PER_FILE,
    START,
    Dataset,
    Shape,
    _sql_ts,
    event_shapes,
    shapes,
    write_dataset,
    write_events,
)


def needed(shape: Shape) -> list[str]:
    """The projected columns and those the filter reads."""
    return list(dict.fromkeys([*shape.columns, *shape.filter_columns]))


def write_spark_events(spark: Any, root: Path) -> None:
    """The `events` rows (``peers.write_events``) as Spark writes them with its defaults:
    range-partitioned by ``ts`` into two files, each sorted by ``ts`` (a table clustered by
    time), snappy, 128 MiB row groups, INT96 timestamps."""
    source = root.with_name(root.name + ".source")
    write_events(source)
    try:
        rows = spark.read.parquet(str(source.resolve()))
        rows.repartitionByRange(2, "ts").sortWithinPartitions("ts").write.mode("overwrite").parquet(str(root.resolve()))
    finally:
        for path in source.glob("*"):
            path.unlink()
        source.rmdir()


def interleaved_times(runs: dict[str, Callable[[], None]], rounds: int) -> dict[str, list[float]]:
    """Each run once to warm up, then ``rounds`` rounds of each in turn, each round starting
    one further along (a run that leaves the JVM garbage to collect does not always charge
    it to the same next one): wall seconds."""
    for run in runs.values():
        run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for round_ in range(rounds):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            started = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - started)
    return times


#: The benchmark session's settings: no UI or progress bars, UTC, a 4 GiB driver.
SETTINGS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "4g",
}


#: JVM options giving Arrow Java's two checks (``pqsift.spark.arrow_checks``) explicitly,
#: which pqsift then leaves as they are: ``--arrow-checks on`` / ``off``.
ARROW_CHECKS_JAVA_OPTIONS = {
    "on": "-Darrow.enable_unsafe_memory_access=false -Darrow.enable_null_check_for_get=true",
    "off": "-Darrow.enable_unsafe_memory_access=true -Darrow.enable_null_check_for_get=false",
}


def _with_arrow_checks(settings: dict[str, str], arrow_checks: str) -> dict[str, str]:
    """``settings`` with the driver JVM's options for ``arrow_checks`` (``default``: none,
    what pqsift does by itself)."""
    if arrow_checks == "default":
        return dict(settings)
    return {**settings, "spark.driver.extraJavaOptions": ARROW_CHECKS_JAVA_OPTIONS[arrow_checks]}


def local_spark(arrow_checks: str = "default") -> Any:
    """A local Spark session for the benchmarks (``local[*]``, :data:`SETTINGS`, quiet),
    with the ``pqsift`` data source registered; Arrow Java's checks as pqsift leaves them
    in the driver's JVM, or ``arrow_checks`` ``on`` / ``off`` given to the JVM."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import pqsift.spark

    builder = SparkSession.builder.master("local[*]").appName("pqsift-bench")
    for key, value in _with_arrow_checks(SETTINGS, arrow_checks).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    pqsift.spark.register(spark)
    return spark


def connect_spark(arrow_checks: str = "default") -> tuple[Any, Any]:
    """A Spark Connect client session of a local Connect server (``local[*]``,
    :data:`SETTINGS`) started here, with the ``pqsift`` data source registered; and the
    server, to stop. pqsift cannot reach the server's JVM: its Arrow Java checks are on
    unless ``arrow_checks`` is ``off``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import pqsift.spark
    from connect_harness import ConnectServer, missing_modules

    if missing := missing_modules():
        raise SystemExit(f"--connect needs the [connect] extra's modules: {', '.join(missing)} missing")
    server = ConnectServer(_with_arrow_checks(SETTINGS, arrow_checks), master="local[*]").start()
    spark = server.session()
    pqsift.spark.register(spark)
    return spark, server


def describe(root: Path) -> str:
    """Files, rows, row groups (and their median compressed size) and codecs of a dataset."""
    import pyarrow.parquet as pq

    paths = sorted(root.glob("*.parquet"))
    metadata = [pq.ParquetFile(path).metadata for path in paths]
    groups = [m.row_group(i) for m in metadata for i in range(m.num_row_groups)]
    sizes = sorted(sum(g.column(c).total_compressed_size for c in range(g.num_columns)) for g in groups)
    codecs = sorted({g.column(c).compression for g in groups for c in range(g.num_columns)})
    writer = metadata[0].created_by if metadata else "?"
    return (
        f"{sum(m.num_rows for m in metadata):,} rows in {len(paths)} files, {len(groups)} row groups of"
        f" {sizes[len(sizes) // 2] / 2**20:.0f} MiB (median, compressed), {'/'.join(codecs)}, written by {writer}"
    )


def noop(df: Any) -> None:
    """Runs ``df`` to the end into Spark's noop sink: every row made, nothing written."""
    df.write.format("noop").mode("overwrite").save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dataset",
        choices=("peers", "events", "events-spark"),
        default="peers",
        help="the rows and shapes (default: peers)",
    )
    parser.add_argument(
        "--data", type=Path, default=None, help="default: data/bench, data/bench-events, data/bench-events-spark"
    )
    parser.add_argument("--repeat", type=int, default=9, help="rounds of interleaved runs after the warm-up")
    parser.add_argument("--driver-sweep", action="store_true", help="also measure the driver-read threshold")
    parser.add_argument("--connect", action="store_true", help="run as a Spark Connect client of a local server")
    parser.add_argument("--topn", action="store_true", help="time top-k queries (events or events-spark)")
    parser.add_argument("--limit", type=int, default=100, help="k of the --topn queries")
    parser.add_argument(
        "--arrow-checks",
        choices=("default", "on", "off"),
        default="default",
        help="Arrow Java's checks in the driver's (or Connect server's) JVM: as pqsift leaves them, or given",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="default: benches/results/spark.md (spark_connect.md with --connect)"
    )
    args = parser.parse_args()
    spark_written = args.dataset == "events-spark"
    if args.data is None:
        args.data = Path(
            {"peers": "data/bench", "events": "data/bench-events", "events-spark": "data/bench-events-spark"}[
                args.dataset
            ]
        )
    if args.out is None:
        stem = (
            "spark_topn"
            if args.topn
            else {"peers": "spark", "events": "spark_events_pyarrow", "events-spark": "spark_events"}[args.dataset]
        )
        args.out = Path(f"benches/results/{stem}{'_connect' if args.connect else ''}.md")
    if args.driver_sweep and args.dataset != "peers":
        raise SystemExit("--driver-sweep is for the peers dataset")
    if args.topn and args.dataset == "peers":
        raise SystemExit("--topn is for the events datasets")
    if args.dataset == "events":
        Dataset("events", args.data, EVENT_FILES, EVENT_ROWS_PER_FILE, EVENT_ROW_GROUP_ROWS).ensure()
    elif not spark_written and not list(args.data.glob("*.parquet")):
        print(f"writing {args.data} ...", flush=True)
        write_dataset(args.data)

    import pqsift.spark
    from pqsift.spark.planning import plan_tasks

    spark, server = connect_spark(args.arrow_checks) if args.connect else (local_spark(args.arrow_checks), None)
    if spark_written and not list(args.data.glob("*.parquet")):
        print(f"writing {args.data} with Spark ...", flush=True)
        write_spark_events(spark, args.data)
    shape_list = event_shapes(EVENT_FILES * EVENT_ROWS_PER_FILE)[:5] if args.dataset != "peers" else shapes()
    # Absolute: over Connect a relative path would be resolved by the server for the native
    # reader (pqsift resolves it on the client).
    path = str(args.data.resolve())
    if args.topn:
        lines = topn_lines(spark, path, args.limit, args.repeat)
        title = f"Top-k queries (`LIMIT {args.limit}`) in Spark{' over Spark Connect' if args.connect else ''}: pqsift vs Spark's native reader"
        finish(spark, server, args, title, lines)
        return

    readers = {
        "spark native": lambda s: spark.read.parquet(path).filter(s.where or "true").select(*s.columns),
        "pqsift read": lambda s: pqsift.spark.read(spark, path, s.columns, s.where or None),
        "pqsift tasks only": lambda s: pqsift.spark.read(spark, path, s.columns, s.where or None, driver_read_bytes=0),
        # A data source's schema must hold the filter's columns too (Spark filters by name).
        "pqsift data source": lambda s: (
            spark.read.format("pqsift")
            .option("columns", ",".join(needed(s)))
            .load(path)
            .filter(s.where or "true")
            .select(*s.columns)
        ),
    }
    lines = table_head("| shape | rows | read by |", "|---|---:|---|", list(readers))
    print(f"{'shape':<28}{'rows':>10}  {'read by':<8}" + "".join(f"{name:>22}" for name in readers))
    for shape in shape_list:
        counts = {name: make(shape).count() for name, make in readers.items()}
        if len(set(counts.values())) != 1:
            raise SystemExit(f"{shape.name}: row counts differ: {counts}")
        metrics = pqsift.spark.ScanMetrics(spark)
        pqsift.spark.read(spark, path, shape.columns, shape.where or None, metrics=metrics)
        read_by = "driver" if metrics.read_on_driver else f"{metrics.tasks} tasks"
        times = interleaved_times({name: lambda m=make: noop(m(shape)) for name, make in readers.items()}, args.repeat)  # noqa: B023 - called at once
        rows = next(iter(counts.values()))
        print(
            f"{shape.name:<28}{rows:>10,}  {read_by:<8}"
            + "".join(f"{statistics.median(t) * 1000:>14.0f} ms ({min(t) * 1000:.0f})" for t in times.values())
        )
        lines.append(f"| {shape.name} | {rows:,} | {read_by} | {table_cells(times)} |")
    sweep: list[str] = []
    if args.driver_sweep:
        columns = ["ts", "id", "amount", "text"]
        sweep = [
            "",
            "## Where the driver read stops paying (`--driver-sweep`)",
            "",
            "The range shape with its window widened. Selected: the plan's estimate of the compressed bytes to read",
            "(`TaskPlan.selected_bytes`, what `driver_read_bytes` is compared with); output: the rows' Arrow bytes.",
            "",
            "| window | rows | selected (MiB) | output (MiB) | driver (ms) | tasks (ms) | tasks / driver |",
            "|---:|---:|---:|---:|---:|---:|---:|",
        ]
        start = START + timedelta(hours=459)
        for hours in (1, 3, 6, 12, 24, 48, 96, 384):
            where = f"ts >= {_sql_ts(start)} AND ts < {_sql_ts(start + timedelta(hours=hours))}"
            selected = plan_tasks(path, columns, where, session_time_zone="UTC").selected_bytes or 0
            output = pqsift.scan(path, columns, where, spark_output=True, session_time_zone="UTC").to_table()
            times = interleaved_times(
                {
                    "driver": lambda w=where: noop(
                        pqsift.spark.read(spark, path, columns, w, driver_read_bytes=1 << 62)
                    ),
                    "tasks": lambda w=where: noop(pqsift.spark.read(spark, path, columns, w, driver_read_bytes=0)),
                },
                args.repeat,
            )
            driver, tasks = statistics.median(times["driver"]), statistics.median(times["tasks"])
            row = f"| {hours} h | {output.num_rows:,} | {selected / 2**20:.1f} | {output.nbytes / 2**20:.1f} | {driver * 1000:.0f} | {tasks * 1000:.0f} | {tasks / driver:.2f} |"
            print(row, flush=True)
            sweep.append(row)
    finish(
        spark,
        server,
        args,
        f"pqsift in Spark{' over Spark Connect' if args.connect else ''} vs Spark's native reader",
        lines + sweep,
    )


def table_head(first: str, first_rule: str, readers: list[str]) -> list[str]:
    """A results table's two header lines: the ``first`` columns (and their ``first_rule``),
    each reader's time, and Spark's native time over each pqsift reader's."""
    pqsift_readers = [name for name in readers if name != "spark native"]
    times = [f"{name} (ms)" for name in readers]
    ratios = [f"native / {name.removeprefix('pqsift ')}" for name in pqsift_readers]
    return [f"{first} {' | '.join(times + ratios)} |", first_rule + "---:|" * (len(times) + len(ratios))]


def table_cells(times: dict[str, list[float]]) -> str:
    """The cells :func:`table_head` names: each reader's median (best) ms, then Spark's
    native median over each pqsift reader's, with the middle half of the rounds' own
    ratios (each round's native time over the reader's, :func:`round_ratios`).

    >>> table_cells({"spark native": [0.30, 0.20, 0.25, 0.40], "pqsift read": [0.10, 0.10, 0.05, 0.10]})
    '275 (200) | 100 (50) | 2.75× (2.7–4.2)'
    """
    medians = {name: statistics.median(t) for name, t in times.items()}
    native = medians["spark native"]
    cells = [f"{medians[n] * 1000:.0f} ({min(times[n]) * 1000:.0f})" for n in times]
    cells += [f"{native / medians[n]:.2f}× {round_ratios(times, n)}".rstrip() for n in times if n != "spark native"]
    return " | ".join(cells)


def round_ratios(times: dict[str, list[float]], reader: str) -> str:
    """The first and third quartiles of the rounds' ratios, Spark's native time over
    ``reader``'s in the same round: how far one round's ratio strays from the medians'
    (Spark's side moves most as its JIT compiler warms up)."""
    ratios = [native / own for native, own in zip(times["spark native"], times[reader], strict=True)]
    if len(ratios) < 2:
        return ""
    first, _, third = statistics.quantiles(ratios, n=4, method="inclusive")
    return f"({first:.1f}–{third:.1f})"


#: A top-k query's DataFrame from (key, columns, filter).
TopReader = Callable[[str, list[str], str | None], Any]


def topn_lines(spark: Any, path: str, k: int, rounds: int) -> list[str]:
    """The ``--topn`` table: each of ``topn.QUERIES`` by Spark (``orderBy(...).limit(k)``
    over its native reader) and by ``pqsift.spark.read`` (as a user gets it on this local
    master; with the driver bound a cluster's master has, ``DRIVER_READ_BYTES``; and by
    tasks only), after checking that all return the same keys in the same order."""
    import pqsift.spark
    from pqsift.spark.driver_read import DRIVER_READ_BYTES
    from topn import QUERIES

    def pqsift_top(**options: Any) -> TopReader:
        return lambda key, columns, where: pqsift.spark.read(
            spark, path, columns, where, order_by=[(key, "desc")], limit=k, **options
        )

    readers: dict[str, TopReader] = {
        "spark native": lambda key, columns, where: (
            spark.read.parquet(path).filter(where or "true").select(*columns).orderBy(key, ascending=False).limit(k)
        ),
        "pqsift read": pqsift_top(),
        "pqsift cluster bound": pqsift_top(driver_read_bytes=DRIVER_READ_BYTES),
        "pqsift tasks only": pqsift_top(driver_read_bytes=0),
    }
    lines = table_head("| query | read by | read by, cluster bound |", "|---|---|---|", list(readers))
    for title, key, columns, where in QUERIES:
        keys = {name: [row[key] for row in make(key, columns, where).collect()] for name, make in readers.items()}
        if any(found != keys["spark native"] for found in keys.values()) or len(keys["spark native"]) != k:
            raise SystemExit(f"{title}: the readers' keys differ: {keys}")
        read_by = []
        for bound in (None, DRIVER_READ_BYTES):
            metrics = pqsift.spark.ScanMetrics(spark)
            pqsift_top(metrics=metrics, driver_read_bytes=bound)(key, columns, where).collect()
            read_by.append("driver" if metrics.read_on_driver else f"{metrics.tasks} tasks")
        times = interleaved_times(
            {name: lambda m=make: noop(m(key, columns, where)) for name, make in readers.items()},  # noqa: B023 - called at once
            rounds,
        )
        line = f"| {title} | {' | '.join(read_by)} | {table_cells(times)} |"
        print(line, flush=True)
        lines.append(line)
    lines += ["", "Queries (`ORDER BY key DESC LIMIT k`):", ""]
    lines += [
        f"- {title}: `{where or '(no filter)'}` → {', '.join(columns)}, key `{key}`"
        for title, key, columns, where in QUERIES
    ]
    return lines


def _arrow_checks_note(arrow_checks: str, connect: bool) -> str:
    """What the results header says of Arrow Java's checks in the JVM that made the rows."""
    jvm = "the Connect server's JVM" if connect else "the driver's JVM"
    if arrow_checks != "default":
        return f" Arrow Java's checks {arrow_checks} in {jvm}, given to it (`--arrow-checks {arrow_checks}`)."
    if connect:
        return f" Arrow Java's checks on in {jvm} (its default: pqsift cannot reach it)."
    return f" Arrow Java's checks off in {jvm}, as pqsift sets them."


def finish(spark: Any, server: Any, args: argparse.Namespace, title: str, lines: list[str]) -> None:
    """Stops Spark (and the Connect server) and writes the table to ``args.out``."""
    spark.stop()
    if server is not None:
        server.stop()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    header = (
        f"# {title}\n\n"
        f"Dataset: `{args.data}` ({describe(args.data)}), local[*] on"
        f" {os.cpu_count()} cores, noop sink. After a warm-up the readers run in turns (each round starting one reader further along), {args.repeat} rounds;"
        " each cell is the median (best) wall time in ms, ratios are of medians (> 1: pqsift faster), in brackets the"
        " first and third quartiles of the rounds' own ratios (a round's native time over the reader's)."
        " `read by`: where `pqsift.spark.read` read the rows (the driver, for a small result, or Python tasks"
        + (
            "; over Connect, `driver` is the client's process, its rows sent as a local relation"
            if args.connect
            else ""
        )
        + ")."
        + (
            " `cluster bound`: with `driver_read_bytes` at `DRIVER_READ_BYTES` (8 MiB), the bound a cluster's"
            " master has (a local master has none): a top-k is tried on the driver and handed to tasks once"
            " its read passes it."
            if args.topn
            else ""
        )
        + _arrow_checks_note(args.arrow_checks, args.connect)
        + "\n\n"
    )
    args.out.write_text(header + "\n".join(lines) + "\n")
    print(f"\nwritten {args.out}")


if __name__ == "__main__":
    main()
