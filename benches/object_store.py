"""pqsift side by side with pyarrow.dataset, Polars, DuckDB and DataFusion, reading from S3.

Run with ``make bench-object-store``. It writes the dataset of ``benches/peers.py`` at a
smaller size under ``data/object_store`` if absent (``--files`` files of ``--rows`` rows,
default 4 x 500,000: row groups of 125,000 rows, page index, bloom filter on ``id``),
uploads it to a local S3 (moto's server, ``tests/s3_harness.py``) straight to moto, and puts
a ``LatencyProxy`` in front that adds ``--delay`` ms (default 25) to every request. Every
engine reads through that proxy, and every shape of ``benches/peers.py`` is timed with
every engine: best of ``--repeat`` runs after a warm-up.

Each run starts cold: a fresh session (pyarrow S3FileSystem, DataFusion SessionContext,
DuckDB connection, pqsift's metadata cache emptied) set up outside the timing, then the
timed part lists the objects, reads the footers and the data. The engine "pqsift+cached
footers" keeps pqsift's process-wide metadata cache across runs, as a Spark worker or a
notebook querying a table again does (the listing's sizes and versions validate the cached
footers: no request for them). For each engine and shape the best run's wall time, the CPU time
of this process during it (``time.process_time``: every thread of the engine), the requests
the proxy saw (GETs, LISTs among them, ranged GETs), the body bytes it sent, the most
requests in flight at once, and the server's CPU time are recorded, with the row count:
every engine must return the same rows (a mismatch is printed and marked).

The S3 side (moto and the proxy, both Python) runs in a child process, so that the CPU time
measured here is the engine's alone and the engine never competes with the server for this
interpreter's GIL. moto is not free: every GET costs it a few ms of CPU (it reads the whole
object for a ranged GET), and with many requests in flight it, not the delay, can set the
pace; the server's CPU time per run shows when that happens.

``--gaps 0,65536,262144,1048576,4194304`` also runs pqsift with each ``coalesce_gap`` (bytes:
ranges at most that far apart are fetched in one request), if pqsift has that option.

Results go to ``benches/results/object_store.json`` and ``benches/results/object_store.md``.
An engine that fails (pqsift before it reads S3, for one) is printed and recorded as an
error; an engine that cannot be pointed at the local endpoint is skipped with the reason.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import platform
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
for _folder in (ROOT / "benches", ROOT / "tests"):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

import peers  # noqa: E402 - needs the path above
from peers import Shape, shapes, sql  # noqa: E402
from s3_harness import ACCESS_KEY, REGION, SECRET_KEY, pyarrow_s3fs  # noqa: E402

FILES = 4
ROWS_PER_FILE = 500_000
DELAY_MS = 25.0
BUCKET_PREFIX = "bench"
PREFIX = "events"  # the key prefix the dataset is uploaded under
# peers.shapes() looks up the id of row 1,234,567 (ids are row * 7 + 3) and its ts range
# holds rows 1,652,400 .. 1,673,999 (one row a second from 2026-01-01): smaller datasets
# match fewer rows there, or none.
SHAPES_NEED_ROWS = 1_674_000
# What pqsift reports about its object-store reads (scan.metrics), kept in the results.
PQSIFT_METRICS = ("requests", "retries", "bytes_requested", "time_store_wait_s", "bytes_read")


# --------------------------------------------------------------------------------------------
# The dataset


def ensure_dataset(root: Path, files: int, rows_per_file: int) -> None:
    """Write peers' dataset with `files` files of `rows_per_file` rows to `root`, unless the
    files there already have exactly that shape."""
    paths = sorted(root.glob("*.parquet"))
    if len(paths) == files and all(pq.ParquetFile(p).metadata.num_rows == rows_per_file for p in paths):
        return
    for path in paths:
        path.unlink()
    print(f"writing {files} files x {rows_per_file:,} rows to {root} ...", flush=True)
    started = time.perf_counter()
    # peers.write_dataset reads its size from these module globals when called.
    saved = peers.FILES, peers.ROWS_PER_FILE
    peers.FILES, peers.ROWS_PER_FILE = files, rows_per_file
    try:
        peers.write_dataset(root)
    finally:
        peers.FILES, peers.ROWS_PER_FILE = saved
    print(f"  written in {time.perf_counter() - started:.1f} s")


def describe_dataset(root: Path) -> dict[str, int]:
    paths = sorted(root.glob("*.parquet"))
    metadata = [pq.ParquetFile(p).metadata for p in paths]
    size = sum(p.stat().st_size for p in paths)
    return {
        "files": len(paths),
        "rows": sum(m.num_rows for m in metadata),
        "row_groups": sum(m.num_row_groups for m in metadata),
        "bytes": size,
        "mib": round(size / 2**20),
    }


# --------------------------------------------------------------------------------------------
# The S3 side, in a child process


def _serve(conn: Connection, delay: float) -> None:
    """The child process: moto, a LatencyProxy in front of it, and a command loop on `conn`.

    Commands are (name, args) tuples; each gets ("ok", result) or ("error", text) back.
    """
    from s3_harness import LatencyProxy, S3Emulator

    emulator = S3Emulator().start()
    proxy = LatencyProxy(emulator, delay=delay).start()
    conn.send(("ok", proxy.endpoint))
    cpu_since = time.process_time()
    try:
        while True:
            command, args = conn.recv()
            if command == "stop":
                conn.send(("ok", None))
                return
            try:
                result: Any = None
                if command == "new_bucket":
                    result = emulator.new_bucket(*args)
                elif command == "upload_dir":  # straight to moto: the proxy counts none of it
                    result = emulator.upload_dir(*args)
                elif command == "set_delay":  # e.g. none while a table is built, then the bench's
                    proxy.delay = float(args[0])
                elif command == "reset":
                    proxy.reset()
                    cpu_since = time.process_time()
                elif command == "snapshot":
                    result = proxy.snapshot()
                    result["lists"] = sum(1 for r in proxy.log() if r.method == "GET" and not r.key)
                    result["server_cpu_s"] = time.process_time() - cpu_since
                else:
                    raise ValueError(f"unknown command {command!r}")
                conn.send(("ok", result))
            except Exception as error:  # noqa: BLE001 - reported to the parent
                conn.send(("error", f"{type(error).__name__}: {error}"))
    finally:
        proxy.stop()
        emulator.stop()


class S3Server:
    """moto and a LatencyProxy (tests/s3_harness.py) in a child process.

    `endpoint` is the proxy's URL; `storage_options` and `filesystem()` point at it.
    `reset()` zeroes the proxy's counters and the server's CPU clock; `snapshot()` is the
    proxy's snapshot() plus `lists` (ListObjects GETs) and `server_cpu_s` (CPU time of the
    child, moto and proxy together, since the last reset).
    """

    def __init__(self, delay: float) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of a process with threads
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, delay), name="s3-server", daemon=True)
        self._process.start()
        child.close()
        self.endpoint: str = self._receive()

    def _receive(self) -> Any:
        status, result = self._conn.recv()
        if status != "ok":
            raise RuntimeError(f"S3 server: {result}")
        return result

    def _call(self, command: str, *args: Any) -> Any:
        self._conn.send((command, args))
        return self._receive()

    def new_bucket(self, prefix: str) -> str:
        return self._call("new_bucket", prefix)

    def upload_dir(self, local: Path, bucket: str, prefix: str) -> list[str]:
        return self._call("upload_dir", str(local.resolve()), bucket, prefix)

    def reset(self) -> None:
        self._call("reset")

    def set_delay(self, seconds: float) -> None:
        """The delay the proxy adds to each request from now on."""
        self._call("set_delay", seconds)

    def snapshot(self) -> dict[str, Any]:
        return self._call("snapshot")

    @property
    def storage_options(self) -> dict[str, str]:
        """object_store-style options (the harness's `aws_*` keys) pointed at the proxy."""
        from s3_harness import storage_options

        return storage_options(self.endpoint)

    def filesystem(self) -> Any:
        """A pyarrow S3FileSystem pointed at the proxy (pyarrow's default retries)."""
        return pyarrow_s3fs(self.endpoint)

    def stop(self) -> None:
        if self._process.is_alive():
            with contextlib.suppress(EOFError, OSError, RuntimeError):
                self._call("stop")
            self._process.join(timeout=10)
            if self._process.is_alive():
                self._process.terminate()
                self._process.join(timeout=5)
        self._conn.close()

    def __enter__(self) -> S3Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --------------------------------------------------------------------------------------------
# The engines


# A query runs a shape in a session and returns the row count and the engine's own metrics.
Query = Callable[[Any, Shape], tuple[int, dict[str, Any]]]


@dataclass
class Engine:
    """An engine: `session()` makes a fresh session (untimed: connection, context, file
    system), `query(session, shape)` is what is timed: listing, footers, data."""

    name: str
    session: Callable[[], Any]
    query: Query


@dataclass
class Source:
    """Where the dataset is, and how to reach it."""

    server: S3Server
    bucket: str
    prefix: str

    @property
    def url(self) -> str:
        """The prefix as an s3:// URL with a trailing slash."""
        return f"s3://{self.bucket}/{self.prefix}/"


def pqsift_engine(source: Source, name: str = "pqsift", *, cached_footers: bool = False, **options: Any) -> Engine:
    """pqsift.scan on the s3:// prefix, with the proxy's storage options and `options`.

    Cold like the peers: the process-wide metadata cache is emptied before each run, so the
    run reads the footers — unless `cached_footers` (a process that has read the table
    before: the listing's sizes and versions validate the cached footers, no request)."""

    def query(pqsift: Any, shape: Shape) -> tuple[int, dict[str, Any]]:
        scan = pqsift.scan(
            source.url,
            columns=shape.columns,
            filter=shape.where or None,
            storage_options=source.server.storage_options,
            **options,
        )
        rows = scan.to_table().num_rows
        metrics = scan.metrics
        return rows, {key: metrics[key] for key in PQSIFT_METRICS if key in metrics}

    def session() -> Any:
        import pqsift

        if not cached_footers:
            pqsift._core.clear_metadata_cache()
        return pqsift

    return Engine(name, session, query)


def pyarrow_engine(source: Source) -> Engine:
    """pyarrow.dataset over an S3FileSystem (the filter as a pyarrow expression)."""

    def query(filesystem: Any, shape: Shape) -> tuple[int, dict[str, Any]]:
        dataset = ds.dataset(f"{source.bucket}/{source.prefix}", filesystem=filesystem, format="parquet")
        return dataset.to_table(columns=shape.columns, filter=shape.arrow_filter).num_rows, {}

    return Engine("pyarrow.dataset", source.server.filesystem, query)


def polars_engine(source: Source) -> Engine:
    """Polars' scan_parquet on an s3:// glob, the SQL of peers.py through a SQLContext.

    Polars takes object_store's configuration keys; the harness's (`aws_endpoint`,
    `aws_allow_http`, ...) are passed unchanged."""
    import polars as pl

    def query(_: None, shape: Shape) -> tuple[int, dict[str, Any]]:
        frame = pl.scan_parquet(f"{source.url}*.parquet", storage_options=source.server.storage_options)
        context = pl.SQLContext(events=frame)
        return context.execute(sql(shape, "events").replace("TIMESTAMP ", "")).collect().height, {}

    return Engine("polars", lambda: None, query)


def duckdb_engine(source: Source) -> Engine:
    """DuckDB's read_parquet over httpfs, if the extension is installed already (DuckDB
    downloads extensions from its own repository, never from PyPI): raises RuntimeError
    with the reason otherwise."""
    import duckdb

    config = {"autoinstall_known_extensions": False}
    with duckdb.connect(config=config) as probe:
        installed = probe.execute(
            "SELECT installed FROM duckdb_extensions() WHERE extension_name = 'httpfs'"
        ).fetchone()
    if not installed or not installed[0]:
        raise RuntimeError(
            "the httpfs extension is not installed, and DuckDB installs extensions from its "
            "own repository, not PyPI (run INSTALL httpfs where that is reachable)"
        )
    authority = source.server.endpoint.partition("://")[2]

    def session() -> Any:
        con = duckdb.connect(config=config)  # a new database: its file caches start empty
        con.execute("LOAD httpfs")
        con.execute("SET TimeZone = 'UTC'")
        con.execute(
            f"CREATE SECRET (TYPE s3, KEY_ID '{ACCESS_KEY}', SECRET '{SECRET_KEY}', REGION '{REGION}', "
            f"ENDPOINT '{authority}', URL_STYLE 'path', USE_SSL false)"
        )
        return con

    def query(con: Any, shape: Shape) -> tuple[int, dict[str, Any]]:
        table = f"read_parquet('{source.url}*.parquet')"
        return con.execute(sql(shape, table)).to_arrow_table().num_rows, {}

    return Engine("duckdb", session, query)


def datafusion_engine(source: Source) -> Engine:
    """DataFusion with an AmazonS3 object store on the proxy (filter pushdown on, as in
    peers.py); the table is registered inside the timing (listing and schema inference)."""
    import datafusion
    from datafusion.object_store import AmazonS3

    def session() -> Any:
        config = (
            datafusion.SessionConfig()
            .set("datafusion.execution.parquet.pushdown_filters", "true")
            .set("datafusion.execution.parquet.reorder_filters", "true")
            .set("datafusion.execution.time_zone", "UTC")
        )
        # A new context per run: DataFusion caches parquet metadata in its runtime.
        context = datafusion.SessionContext(config)
        store = AmazonS3(
            bucket_name=source.bucket,
            region=REGION,
            access_key_id=ACCESS_KEY,
            secret_access_key=SECRET_KEY,
            endpoint=source.server.endpoint,
            allow_http=True,
        )
        context.register_object_store("s3://", store, source.bucket)
        return context

    def query(context: Any, shape: Shape) -> tuple[int, dict[str, Any]]:
        context.register_parquet("events", source.url)
        return context.sql(sql(shape, "events")).to_arrow_table().num_rows, {}

    return Engine("datafusion", session, query)


ENGINES: dict[str, Callable[[Source], Engine]] = {
    "pqsift": pqsift_engine,
    "pqsift+cached footers": lambda source: pqsift_engine(source, "pqsift+cached footers", cached_footers=True),
    "pyarrow.dataset": pyarrow_engine,
    "polars": polars_engine,
    "duckdb": duckdb_engine,
    "datafusion": datafusion_engine,
}
# the package each engine comes from, for the versions in the results
PACKAGES = {name: {"pyarrow.dataset": "pyarrow"}.get(name, name.split("+")[0]) for name in ENGINES}


def engines(source: Source, names: list[str]) -> tuple[list[Engine], dict[str, str]]:
    """The engines among `names` that can be set up, and for the others why not."""
    ready: list[Engine] = []
    skipped: dict[str, str] = {}
    for name in names:
        try:
            ready.append(ENGINES[name](source))
        except ImportError as error:
            skipped[name] = f"not installed ({error})"
        except Exception as error:  # noqa: BLE001 - the reason is the report
            skipped[name] = f"{type(error).__name__}: {error}"
    return ready, skipped


# --------------------------------------------------------------------------------------------
# Timing


@dataclass
class Run:
    """One timed run of one engine on one shape."""

    seconds: float
    cpu_s: float  # this process's CPU time during the run (every thread)
    rows: int
    requests: int  # as the proxy saw them
    gets: int
    lists: int  # ListObjects GETs (bucket-level), counted in `gets` too
    heads: int
    ranged_gets: int
    response_bytes: int  # body bytes the proxy sent
    max_in_flight: int
    server_cpu_s: float  # moto and the proxy
    metrics: dict[str, Any] = field(default_factory=dict)  # the engine's own (pqsift's)


@dataclass
class Measurement:
    """The best of `repeat` runs after a warm-up, or the error that stopped the engine."""

    best: Run | None = None
    warmup_requests: int | None = None
    requests_per_run: list[int] = field(default_factory=list)
    error: str | None = None
    error_type: type[BaseException] | None = None


def run_once(engine: Engine, shape: Shape, server: S3Server) -> Run:
    session = engine.session()
    server.reset()
    cpu = time.process_time()
    started = time.perf_counter()
    rows, metrics = engine.query(session, shape)
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu
    snapshot = server.snapshot()
    by_method = snapshot["by_method"]
    return Run(
        seconds=seconds,
        cpu_s=cpu,
        rows=rows,
        requests=snapshot["requests"],
        gets=by_method.get("GET", 0),
        lists=snapshot["lists"],
        heads=by_method.get("HEAD", 0),
        ranged_gets=snapshot["ranged_gets"],
        response_bytes=snapshot["response_bytes"],
        max_in_flight=snapshot["max_in_flight"],
        server_cpu_s=snapshot["server_cpu_s"],
        metrics=metrics,
    )


def measure(
    engine: Engine, shape: Shape, server: S3Server, repeat: int, *, show_traceback: bool = False
) -> Measurement:
    """One warm-up, then the fastest of `repeat` runs; an exception is recorded, not raised
    (and its traceback printed with `show_traceback`)."""
    result = Measurement()
    try:
        result.warmup_requests = run_once(engine, shape, server).requests
        for _ in range(repeat):
            run = run_once(engine, shape, server)
            result.requests_per_run.append(run.requests)
            if result.best is None or run.seconds < result.best.seconds:
                result.best = run
    except Exception as error:  # noqa: BLE001 - one engine's failure is a result
        result.error = f"{type(error).__name__}: {error}".strip()
        result.error_type = type(error)
        if show_traceback:
            traceback.print_exc()
    return result


# --------------------------------------------------------------------------------------------
# Reporting


def mib(n: int) -> float:
    return n / 2**20


def number(value: Any) -> str:
    """An int with thousands separators, a float with 3 decimals, anything else as is."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,.3f}" if isinstance(value, float) else f"{value:,}"


def first_line(text: str, limit: int = 160) -> str:
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def best_peer(measurements: dict[str, Measurement]) -> str | None:
    """The fastest engine that is not pqsift and did not fail."""
    peers_ok = {n: m.best.seconds for n, m in measurements.items() if m.best and not n.startswith("pqsift")}
    return min(peers_ok, key=peers_ok.__getitem__) if peers_ok else None


def expected_rows(counts: dict[str, int]) -> int | None:
    """The row count the peers agree on (most of them, if they differ), pqsift's if no peer
    finished: an engine with another count is marked."""
    peer_counts = [rows for name, rows in counts.items() if not name.startswith("pqsift")]
    chosen = peer_counts or list(counts.values())
    return Counter(chosen).most_common(1)[0][0] if chosen else None


def print_shape(measurements: dict[str, Measurement], expected: int | None) -> None:
    """The shape's table: engines fastest first, then errors; an engine whose row count is
    not `expected` is marked."""
    peer = best_peer(measurements)
    peer_run = measurements[peer].best if peer else None
    reference = peer_run.seconds if peer_run else None
    print(
        f"   {'engine':18s} {'wall ms':>9s} {'cpu ms':>8s} {'srv cpu':>8s} {'requests':>8s} "
        f"{'GETs':>5s} {'ranged':>6s} {'LIST':>4s} {'MiB':>7s} {'in fl.':>6s} {'rows':>9s}  vs best peer"
    )
    done = sorted((m.best.seconds, n) for n, m in measurements.items() if m.best)
    for _, name in done:
        m = measurements[name]
        run = m.best
        assert run is not None
        ratio = f"{reference / run.seconds:5.2f}x" if reference else ""
        varied = ""
        if m.requests_per_run and min(m.requests_per_run) != max(m.requests_per_run):
            varied = f"  (requests per run {min(m.requests_per_run)}-{max(m.requests_per_run)})"
        if m.warmup_requests is not None and m.requests_per_run and m.warmup_requests > max(m.requests_per_run):
            varied += f"  (warm-up {m.warmup_requests} requests: cached across runs?)"
        print(
            f"   {name:18s} {run.seconds * 1000:9.1f} {run.cpu_s * 1000:8.1f} {run.server_cpu_s * 1000:8.1f} "
            f"{run.requests:8d} {run.gets:5d} {run.ranged_gets:6d} {run.lists:4d} {mib(run.response_bytes):7.2f} "
            f"{run.max_in_flight:6d} {run.rows:9,d}  {ratio}{varied}"
            + ("  !! ROWS DIFFER" if run.rows != expected else "")
        )
        if run.metrics:
            print(f"   {'':18s} its metrics: {', '.join(f'{k} {number(v)}' for k, v in run.metrics.items())}")
            if "requests" in run.metrics and run.metrics["requests"] != run.requests:
                print(f"   {'':18s} !! it counts {run.metrics['requests']} requests, the proxy saw {run.requests}")
    for name, m in measurements.items():
        if m.error:
            print(f"   {name:18s} ERROR {first_line(m.error)}")
    counts = {n: m.best.rows for n, m in measurements.items() if m.best}
    if len(set(counts.values())) > 1:
        print(f"   !!!! ROW COUNTS DIFFER: {counts}")


def sweep_gaps(source: Source, gaps: list[int], repeat: int, *, show_traceback: bool = False) -> list[dict[str, Any]]:
    """pqsift at each coalesce_gap on every shape. A TypeError (what pqsift.scan raises for an
    option it does not know) ends the sweep; a ValueError (a value it does not take) drops
    that gap from the sweep."""
    print(f"== pqsift coalesce_gap sweep: {', '.join(f'{g:,}' for g in gaps)} bytes")
    results: list[dict[str, Any]] = []
    gaps = list(gaps)
    for shape in shapes():
        for gap in list(gaps):
            engine = pqsift_engine(source, name=f"pqsift gap={gap}", coalesce_gap=gap)
            m = measure(engine, shape, source.server, repeat, show_traceback=show_traceback)
            if m.error_type is not None and issubclass(m.error_type, TypeError):
                print(f"   sweep stopped: pqsift did not take coalesce_gap: {first_line(m.error or '')}\n")
                return results
            if m.error_type is not None and issubclass(m.error_type, ValueError):
                print(f"   dropping coalesce_gap={gap:,} from the sweep: {first_line(m.error or '')}")
                gaps.remove(gap)
                continue
            entry: dict[str, Any] = {"shape": shape.name, "gap": gap, "error": m.error}
            if m.best:
                run = m.best
                entry.update(asdict(run))
                wait = run.metrics.get("time_store_wait_s", float("nan"))
                print(
                    f"   {shape.name:28s} gap {gap:>9,}  {run.seconds * 1000:8.1f} ms  {run.requests:5d} requests "
                    f"{mib(run.response_bytes):8.2f} MiB  store wait {wait:.3f} s"
                )
            else:
                print(f"   {shape.name:28s} gap {gap:>9,}  ERROR {first_line(m.error or '')}")
            results.append(entry)
    print()
    return results


def markdown(document: dict[str, Any]) -> str:
    """The results as a Markdown page: settings, one table per shape, the gap sweep."""
    data = document["dataset"]
    lines = [
        "# `benches/object_store.py` — pqsift and its peers reading from S3",
        "",
        f"Run on {document['date']}, {document['machine']['cpus']} CPUs. Dataset: {data['rows']:,} rows in "
        f"{data['files']} files, {data['row_groups']} row groups, {data['mib']} MiB (peers.py's layout: zstd, "
        "page index, bloom filter on `id`), on moto behind a proxy that adds "
        f"**{document['delay_ms']:g} ms to every request**. Best of {document['repeat']} runs after a warm-up; "
        "each run starts from a fresh session (listing, footers and data are all timed).",
        "",
        "Columns: wall time; CPU time of the benchmark's process (the engine's threads); CPU time of the "
        "S3 server (moto and the proxy, in a child process); requests the proxy saw, GETs among them "
        "(ranged, and LIST); body bytes sent; most requests in flight at once; rows. "
        "“vs best peer”: the best peer's time over this engine's (> 1: faster).",
        "",
    ]
    if document["skipped"]:
        lines += ["Skipped:", ""]
        lines += [f"- **{name}**: {reason}" for name, reason in document["skipped"].items()]
        lines.append("")
    for shape in document["shapes"]:
        lines += [
            f"## {shape['name']}",
            "",
            f"`{shape['filter'] or '(no filter)'}` → {', '.join(shape['columns'])}; "
            + (f"{shape['rows']:,} rows" if shape["rows"] is not None else "no engine finished")
            + ("" if shape["rows_agree"] else " — **ROW COUNTS DIFFER**"),
            "",
            "| engine | wall ms | CPU ms | server CPU ms | requests | GETs | ranged | LIST | MiB | in flight | rows "
            "| vs best peer |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        results = shape["engines"]
        peer_times = [r["seconds"] for n, r in results.items() if r.get("seconds") and not n.startswith("pqsift")]
        reference = min(peer_times) if peer_times else None
        ordered = sorted(results.items(), key=lambda kv: (kv[1].get("seconds") is None, kv[1].get("seconds") or 0))
        for name, r in ordered:
            if r.get("seconds") is None:
                lines.append(f"| {name} | error: {first_line(r.get('error') or '', 100).replace('|', '/')} |||||||||||")
                continue
            ratio = f"{reference / r['seconds']:.2f}×" if reference else ""
            rows = format(r["rows"], ",")
            rows = f"**{rows}** (differs)" if r["rows_mismatch"] else rows
            lines.append(
                f"| {name} | {r['seconds'] * 1000:.1f} | {r['cpu_s'] * 1000:.1f} | {r['server_cpu_s'] * 1000:.1f} | "
                f"{r['requests']} | {r['gets']} | {r['ranged_gets']} | {r['lists']} | {mib(r['response_bytes']):.2f} | "
                f"{r['max_in_flight']} | {rows} | {ratio} |"
            )
        lines.append("")
    if document["gap_sweep"]:
        lines += [
            "## pqsift `coalesce_gap` sweep",
            "",
            "| shape | gap (bytes) | wall ms | requests | MiB | store wait s |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for e in document["gap_sweep"]:
            if e.get("seconds") is None:
                lines.append(f"| {e['shape']} | {e['gap']:,} | error: {first_line(e.get('error') or '', 100)} |||")
            else:
                wait = e["metrics"].get("time_store_wait_s")
                lines.append(
                    f"| {e['shape']} | {e['gap']:,} | {e['seconds'] * 1000:.1f} | {e['requests']} | "
                    f"{mib(e['response_bytes']):.2f} | {'' if wait is None else f'{wait:.3f}'} |"
                )
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------


def versions(names: list[str]) -> dict[str, str]:
    """The installed version of every engine's package (and moto's)."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str] = {}
    for package in [PACKAGES[n] for n in names] + ["moto"]:
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = "not installed"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/object_store"), help="where the dataset is written")
    parser.add_argument("--files", type=int, default=FILES, help="files in the dataset")
    parser.add_argument("--rows", type=int, default=ROWS_PER_FILE, help="rows per file")
    parser.add_argument("--delay", type=float, default=DELAY_MS, help="ms the proxy adds to every request")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--engines", default=",".join(ENGINES), help=f"comma-separated, from: {', '.join(ENGINES)}"
    )
    parser.add_argument("--gaps", default="", help="comma-separated coalesce_gap values (bytes) to sweep pqsift over")
    parser.add_argument("--json", type=Path, default=Path("benches/results/object_store.json"))
    parser.add_argument("--md", type=Path, default=Path("benches/results/object_store.md"))
    parser.add_argument("--traceback", action="store_true", help="print the traceback of every engine error")
    args = parser.parse_args()
    names = [n.strip() for n in args.engines.split(",") if n.strip()]
    unknown = sorted(set(names) - set(ENGINES))
    if unknown:
        parser.error(f"unknown engine(s) {', '.join(unknown)}; known: {', '.join(ENGINES)}")
    gaps = [int(g) for g in args.gaps.split(",") if g.strip()]

    ensure_dataset(args.data, args.files, args.rows)
    dataset = describe_dataset(args.data)
    print(
        f"dataset: {dataset['rows']:,} rows, {dataset['row_groups']} row groups, "
        f"{dataset['bytes'] / 2**20:.0f} MiB in {dataset['files']} files"
    )
    if dataset["rows"] < SHAPES_NEED_ROWS:
        print(f"  (under {SHAPES_NEED_ROWS:,} rows the ts range and the point lookup match fewer rows, or none)")

    with S3Server(delay=args.delay / 1000) as server:
        bucket = server.new_bucket(BUCKET_PREFIX)
        started = time.perf_counter()
        keys = server.upload_dir(args.data, bucket, PREFIX)
        print(f"uploaded {len(keys)} objects to s3://{bucket}/{PREFIX}/ in {time.perf_counter() - started:.1f} s")
        print(f"proxy {server.endpoint}: {args.delay:g} ms per request; best of {args.repeat} after a warm-up\n")
        source = Source(server, bucket, PREFIX)
        ready, skipped = engines(source, names)
        for name, reason in skipped.items():
            print(f"skipping {name}: {reason}")
        if skipped:
            print()

        results: list[dict[str, Any]] = []
        for shape in shapes():
            print(f"== {shape.name}: {shape.where or '(no filter)'}  -> {', '.join(shape.columns)}", flush=True)
            measurements = {
                engine.name: measure(engine, shape, server, args.repeat, show_traceback=args.traceback)
                for engine in ready
            }
            counts = {n: m.best.rows for n, m in measurements.items() if m.best}
            mismatch = len(set(counts.values())) > 1
            expected = expected_rows(counts)
            print_shape(measurements, expected)
            print()
            results.append(
                {
                    "name": shape.name,
                    "filter": shape.where or None,
                    "columns": shape.columns,
                    "rows": expected,
                    "rows_agree": not mismatch,
                    "best_peer": best_peer(measurements),
                    "engines": {
                        n: {
                            **(asdict(m.best) if m.best else {}),
                            "error": m.error,
                            "warmup_requests": m.warmup_requests,
                            "requests_per_run": m.requests_per_run,
                            "rows_mismatch": m.best is not None and m.best.rows != expected,
                        }
                        for n, m in measurements.items()
                    },
                }
            )
        gap_sweep = sweep_gaps(source, gaps, args.repeat, show_traceback=args.traceback) if gaps else []

    document = {
        "dataset": dataset,
        "delay_ms": args.delay,
        "repeat": args.repeat,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": sys.version.split()[0]},
        "versions": versions(names),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "skipped": skipped,
        "shapes": results,
        "gap_sweep": gap_sweep,
    }
    for path, text in ((args.json, json.dumps(document, indent=2) + "\n"), (args.md, markdown(document))):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
