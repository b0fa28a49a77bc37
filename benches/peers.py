"""pqsift side by side with pyarrow.dataset, DuckDB, Polars and DataFusion on the same files.

Run with ``make bench-peers`` (installs the peers into the project's venv first; options
through ``ARGS``, e.g. ``make bench-peers ARGS=--quick``). Three datasets, ``--dataset
peers|events|events-v2|all`` (default ``all``), each written if absent (deterministic, ~1
minute), and a fourth only when asked for (``--dataset events-spark``):

- ``peers`` (``data/bench``): 4,000,000 rows in 8 files — a sorted timestamp, a
  high-cardinality id with a bloom filter, low-cardinality strings, numeric columns with
  nulls, a long text column; pages of <= 10,000 rows, page index on. Five query shapes.
- ``events`` (``data/bench-events``): 8,000,000 rows in 4 files of two 1,000,000-row row
  groups, 16 columns modelled on a real event table — numeric-heavy (int64 ids, a sorted
  timestamp, float64 amounts, int32 codes, booleans) and text-heavy (a 100-300 byte free-text
  message, URLs with millions of distinct values, a user agent, dictionary-encoded
  country and kind, a referrer that is null in ~30% of rows); zstd, page index on, pages of
  <= 20,000 rows (parquet-mr's default), no bloom filter. Seven shapes: the five kinds of
  ``peers`` plus a projection of the text-heavy columns and one of the numeric-heavy ones.
- ``events-v2`` (``data/bench-events-v2``): the same rows and shapes written with Parquet v2
  settings (:data:`V2_ENCODINGS`: v2 data pages, DELTA_BINARY_PACKED integers,
  BYTE_STREAM_SPLIT floats, DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY strings, a dictionary
  only for ``country`` and ``kind``).
- ``events-spark`` (``data/bench-events-spark``, shared with ``spark_bench.py``): the
  ``events`` rows as Spark writes them with its defaults (``spark_bench.write_spark_events``:
  two files sorted by ``ts``, snappy, 128 MiB row groups, ``ts`` as INT96 without
  statistics); written by a local Spark session (~2 minutes), always at full size. Its
  ``ts`` is a timestamp without a time zone in pyarrow, so pyarrow's filter compares it
  with zone-less bounds (the same instants, the session being UTC).

Every shape is timed with every engine at each thread count of ``--threads`` (default
``2,1``), in ``--passes`` passes over the engines (default 2), each engine taking a warm-up
and ``--repeat`` runs in a row in every pass (files in the page cache: this measures CPU and
decoding, not the disk). Each thread count runs in a fresh child process of this
script, so that every engine starts limited to that many threads: pqsift's ``threads=``,
DuckDB's ``SET threads``, DataFusion's ``target_partitions`` (and ``TOKIO_WORKER_THREADS``
for its runtime), pyarrow's ``set_cpu_count``/``set_io_thread_count``, and
``POLARS_MAX_THREADS`` (Polars reads it only at import). Around each run it reads the wall
clock (``time.perf_counter``) and the process's CPU time (``time.process_time``: user +
system time of all the threads of the process). It reports the best wall time of all the
timed runs and the median CPU time of a pass's runs, in the engine's best pass: a burst of
load from outside the process (other tenants of a shared host: a shape's CPU time moved
10-30% between minutes on the benchmark machine) that spans one engine's runs of a pass
does not decide its figure, while each engine's runs still follow each other (taking turns
run by run made each engine pay for the memory the one before it freed). It reports too
the ratios of pqsift to the best peer for both, and the CPU/wall ratio of each engine
(which shows whether an engine kept to its threads).
``pqsift (no pushdown)`` is pqsift with ``pushdown_filters=False``, timed on the shapes
that have a filter; ``pqsift (string_view)`` with ``string_view=True`` (strings out as
Arrow views). Row counts are cross-checked: every engine must return the same rows.

A full run takes about 13 minutes on 2 cores. Results go to ``benches/results/peers.json``
(``--json``; per dataset and thread count, per shape: filter, columns, rows, and per engine
the best wall time, the median CPU time, every run, and pqsift's ratio to each peer) and
``benches/results/peers.md`` (``--md``; a table per dataset and thread count);
``benches/plot_peers.py`` draws the 2-thread ``peers`` wall times into
``benches/results/peers.png`` (``--png``; ``--no-plot`` to skip the chart). ``--quick`` is a
smoke run: one timed run, datasets of 1/8 the rows (``data/bench-quick``,
``data/bench-events-quick``) and results under ``benches/out/``. ``--bytes`` only compares the
bytes pqsift reads with the bytes of the pages that hold matching rows.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

# The `peers` dataset. Other benchmarks (object_store.py, spark_bench.py, memory.py) import
# write_dataset, shapes, sql and Shape; object_store.py sets FILES and ROWS_PER_FILE.
FILES = 8
ROWS_PER_FILE = 500_000
ROW_GROUP_ROWS = 125_000
START = datetime(2026, 1, 1, tzinfo=UTC)

# The `events` dataset.
EVENT_FILES = 4
EVENT_ROWS_PER_FILE = 2_000_000
EVENT_ROW_GROUP_ROWS = 1_000_000
EVENT_DAYS = 30

QUICK_DIVISOR = 8  # --quick: datasets of 1/8 the rows (and row groups of 1/8 the rows)
DATASETS = ("peers", "events", "events-v2")
#: Timed only when asked for by name: writing it needs Spark.
OPT_IN_DATASETS = ("events-spark",)
PEER_ORDER = ("pyarrow.dataset", "duckdb", "polars", "datafusion")


# --------------------------------------------------------------------------------------------
# The `peers` dataset


def write_dataset(
    root: Path,
    seed: int = 11,
    *,
    files: int | None = None,
    rows_per_file: int | None = None,
    row_group_rows: int | None = None,
) -> None:
    """The `peers` dataset: `files` files (FILES) of `rows_per_file` (ROWS_PER_FILE) events,
    sorted by ts, one a second from 2026-01-01; ids are row * 7 + 3, shuffled in a file."""
    files = FILES if files is None else files
    n = ROWS_PER_FILE if rows_per_file is None else rows_per_file
    row_group_rows = ROW_GROUP_ROWS if row_group_rows is None else row_group_rows
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    kinds = np.array(["view", "click", "cart", "purchase", "refund"])
    regions = np.array(["eu", "us", "apac", "latam"])
    words = pa.array(["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit"])
    for f in range(files):
        first = f * n
        ts = np.datetime64("2026-01-01T00:00:00", "us") + (np.arange(first, first + n) * 1_000_000).astype("timedelta64[us]")
        amount = np.round(rng.uniform(0, 1000, n), 2)
        amount_nulls = rng.random(n) < 0.05
        # 30 random words a row, drawn in one call: the same stream (and so the same files)
        # as the row-by-row `rng.integers(0, 8, 30)` of the first version, 15x faster.
        picks = rng.integers(0, len(words), (n, 30))
        text = pc.binary_join_element_wise(*(pc.take(words, np.ascontiguousarray(picks[:, j])) for j in range(30)), " ")
        table = pa.table(
            {
                "ts": pa.array(ts, type=pa.timestamp("us", tz="UTC")),
                "id": pa.array(rng.permutation(np.arange(first, first + n)) * 7 + 3, type=pa.int64()),
                "kind": pa.array(kinds[rng.choice(len(kinds), n, p=[0.6, 0.25, 0.08, 0.05, 0.02])]),
                "region": pa.array(regions[rng.integers(0, len(regions), n)]),
                "amount": pa.array(np.where(amount_nulls, None, amount), type=pa.float64()),
                "quantity": pa.array(rng.integers(1, 10, n), type=pa.int32()),
                "text": text,
            }
        )
        pq.write_table(
            table,
            root / f"part-{f:03d}.parquet",
            row_group_size=row_group_rows,
            write_page_index=True,
            max_rows_per_page=10_000,
            compression="zstd",
            bloom_filter_options={"id": {"ndv": n, "fpp": 0.01}},
        )


@dataclass
class Shape:
    """One query: pqsift/Spark SQL filter text, projected columns, and the same filter as
    a pyarrow expression (pyarrow.dataset has no SQL); `filter_columns` are the columns the
    filter reads (for ``--bytes``)."""

    name: str
    columns: list[str]
    where: str
    arrow_filter: pc.Expression | None
    filter_columns: tuple[str, ...] = ()


def _utc(t: datetime) -> pa.Scalar:
    return pa.scalar(t, type=pa.timestamp("us", tz="UTC"))


def _zoneless(t: datetime) -> pa.Scalar:
    """`t` as a timestamp without a time zone (how pyarrow reads an INT96 column)."""
    return pa.scalar(t.replace(tzinfo=None), type=pa.timestamp("ns"))


def _sql_ts(t: datetime) -> str:
    return f"TIMESTAMP '{t:%Y-%m-%d %H:%M:%S}'"


def shapes(rows: int = FILES * ROWS_PER_FILE) -> list[Shape]:
    """The shapes of the `peers` dataset of `rows` rows. At its full size (the default) the
    range is 2026-01-20 03:00-09:00 (rows 1,652,400..1,673,999) and the point lookup is row
    1,234,567's id; a smaller dataset gets both moved in proportion, so they still match."""
    scale = rows / 4_000_000
    start = START + timedelta(hours=round(459 * scale))  # 459 h: 2026-01-20 03:00
    t1, t2 = start, start + timedelta(hours=6)
    point = round(1_234_567 * scale) * 7 + 3
    return [
        Shape(
            "range on sorted ts",
            ["ts", "id", "amount", "text"],
            f"ts >= {_sql_ts(t1)} AND ts < {_sql_ts(t2)}",
            (ds.field("ts") >= _utc(t1)) & (ds.field("ts") < _utc(t2)),
            ("ts",),
        ),
        Shape(
            "point lookup (bloom)",
            ["ts", "id", "kind", "amount", "text"],
            f"id = {point}",
            ds.field("id") == point,
            ("id",),
        ),
        Shape(
            "selective, text projected",
            ["id", "text"],
            "kind = 'refund' AND region = 'eu' AND amount > 900",
            (ds.field("kind") == "refund") & (ds.field("region") == "eu") & (ds.field("amount") > 900),
            ("kind", "region", "amount"),
        ),
        Shape("moderate (~25%)", ["id", "amount", "kind"], "amount > 737.5", ds.field("amount") > 737.5, ("amount",)),
        Shape("projection scan", ["id", "amount"], "", None),
    ]


# --------------------------------------------------------------------------------------------
# The `events` dataset


def event_ids(rows: np.ndarray) -> np.ndarray:
    """Unique, random-looking positive int64 event ids of the global row numbers `rows`:
    multiplying by an odd constant and an xor-shift are both bijections of [0, 2^63)."""
    x = (rows.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) & np.uint64((1 << 63) - 1)
    x ^= x >> np.uint64(29)
    return x.astype(np.int64)


def _strings(values: list[str]) -> pa.Array:
    return pa.array(values, type=pa.string())


def _pick(rng: np.random.Generator, values: pa.Array, n: int, p: np.ndarray | None = None) -> pa.Array:
    """`n` values drawn from `values` (with probabilities `p`), as a string array."""
    return pc.take(values, rng.choice(len(values), n, p=p))


def _zipf_weights(k: int, a: float = 1.1) -> np.ndarray:
    w = 1.0 / np.arange(1, k + 1) ** a
    return w / w.sum()


COUNTRIES = (
    "US GB DE FR IN BR CA JP ES IT MX AU NL PL TR SE ID KR AR CH BE AT NO DK IE FI PT ZA "
    "NZ CZ RO GR HU IL SG HK TW MY TH VN"
).split()
KINDS = ["page_view", "click", "scroll", "search", "add_to_cart", "checkout", "purchase", "refund"]
KIND_WEIGHTS = np.array([0.55, 0.2, 0.1, 0.06, 0.04, 0.025, 0.015, 0.01])
STATUSES = np.array([200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 429, 500, 502, 503], dtype=np.int32)
STATUS_WEIGHTS = _zipf_weights(len(STATUSES), 2.0)
SOURCES = ["google", "newsletter", "facebook", "twitter", "bing", "partner", "direct", "tiktok", "reddit", "email"]
SYSTEMS = [
    "Windows NT 10.0; Win64; x64",
    "Macintosh; Intel Mac OS X 10_15_7",
    "X11; Linux x86_64",
    "iPhone; CPU iPhone OS 17_4 like Mac OS X",
    "iPad; CPU OS 16_6 like Mac OS X",
    "Linux; Android 14; Pixel 8",
    "Linux; Android 13; SM-S918B",
    "Windows NT 6.1; Win64; x64",
    "X11; Ubuntu; Linux x86_64",
    "Linux; Android 12; M2101K6G",
]
BROWSERS = ["Chrome", "Firefox", "Safari", "Edg", "OPR", "SamsungBrowser"]
REFERRER_HOSTS = [
    "www.google.com", "www.bing.com", "t.co", "www.facebook.com", "duckduckgo.com", "news.ycombinator.com", "www.reddit.com"
]


def _vocabulary(rng: np.random.Generator, size: int = 4000) -> list[str]:
    """`size` distinct made-up words of 1-4 syllables."""
    syllables = (
        "ka lo mi ne ra tu se po vi da ri an el or us ta mo ke li su no pe ba di fa go hu je "
        "ly ma ni op qu re si te un va we xe yo za ch sh th st tr pr gr bl cl fl"
    ).split()
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:  # a few thousand words, not a loop over rows
        for count, picks in zip(rng.integers(1, 5, size), rng.integers(0, len(syllables), (size, 4)), strict=True):
            word = "".join(syllables[i] for i in picks[:count])
            if word not in seen:
                seen.add(word)
                words.append(word)
                if len(words) == size:
                    break
    return words


def _corpus(rng: np.random.Generator, vocabulary: list[str], words: int) -> tuple[bytes, np.ndarray, np.ndarray]:
    """`words` words of `vocabulary` (Zipf-distributed) separated by spaces, with the start
    and end (exclusive) byte of each word."""
    encoded = [w.encode() + b" " for w in vocabulary]
    lengths = np.array([len(w) for w in encoded], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    pool = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    picks = rng.choice(len(vocabulary), words, p=_zipf_weights(len(vocabulary)))
    sizes = lengths[picks]
    word_starts = np.zeros(words, dtype=np.int64)
    np.cumsum(sizes[:-1], out=word_starts[1:])
    data = pool[np.repeat(starts[picks] - word_starts, sizes) + np.arange(int(sizes.sum()))]
    return data.tobytes(), word_starts, word_starts + sizes - 1


def _messages(rng: np.random.Generator, corpus: tuple[bytes, np.ndarray, np.ndarray], n: int) -> pa.Array:
    """`n` texts of 100-300 bytes (whole words), each a slice of the corpus at a random
    word: built as string views into the corpus (no per-row work in Python), then cast."""
    data, word_starts, word_ends = corpus
    first = rng.integers(0, len(word_starts) - 200, n)
    start = word_starts[first]
    end = word_ends[np.searchsorted(word_ends, start + rng.integers(100, 290, n))]
    length = (end - start).astype(np.int32)
    u8 = np.frombuffer(data, dtype=np.uint8)
    views = np.zeros((n, 4), dtype="<i4")
    views[:, 0] = length
    views[:, 1] = u8[start[:, None] + np.arange(4)].copy().view("<i4").ravel()
    views[:, 3] = start
    array = pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(views), pa.py_buffer(data)])
    return array.cast(pa.string())


def write_events(
    root: Path,
    seed: int = 23,
    *,
    files: int = EVENT_FILES,
    rows_per_file: int = EVENT_ROWS_PER_FILE,
    row_group_rows: int = EVENT_ROW_GROUP_ROWS,
    parquet_v2: bool = False,
) -> None:
    """The `events` dataset (see the module's docstring), sorted by ts over EVENT_DAYS days;
    with `parquet_v2`, the same rows written as `events-v2` (:data:`V2_ENCODINGS`)."""
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    vocabulary = _vocabulary(rng)
    corpus = _corpus(rng, vocabulary, 3_000_000)
    words = _strings(vocabulary[:400])
    countries = _strings(COUNTRIES)
    country_weights = _zipf_weights(len(COUNTRIES), 1.3)
    kinds = _strings(KINDS)
    subdomains, tlds = ["www", "shop", "m", "app", "blog"] * 60, ["com", "net", "io", "co.uk", "de", "fr"] * 50
    hosts = _strings([f"{sub}.{w}.{tld}" for sub, w, tld in zip(subdomains, vocabulary[1000:1300], tlds, strict=True)])
    sources = _strings(SOURCES)
    systems = _strings(SYSTEMS)
    browsers = _strings(BROWSERS)
    referrers = _strings([f"https://{host}" for host in REFERRER_HOSTS])
    span = EVENT_DAYS * 86_400 * 1_000_000
    origin = int(START.timestamp()) * 1_000_000
    for f in range(files):
        n = rows_per_file
        first = f * n
        ts = np.sort(rng.integers(f * span // files, (f + 1) * span // files, n)) + origin
        user = (5_000_000 * rng.random(n) ** 3).astype(np.int64) * 7_919 % 5_000_011 + 1_000  # skewed, ~2.5M distinct
        amount = np.round(rng.lognormal(3.0, 1.2, n), 2)
        url = pc.binary_join_element_wise(
            "https://",
            _pick(rng, hosts, n),
            "/",
            _pick(rng, words, n),
            "/",
            pc.cast(pa.array(rng.integers(0, 5_000_000, n)), pa.string()),
            "?utm_source=",
            _pick(rng, sources, n),
            "&utm_campaign=",
            pc.cast(pa.array(rng.integers(0, 500, n)), pa.string()),
            "",
        )
        user_agent = pc.binary_join_element_wise(
            "Mozilla/5.0 (",
            _pick(rng, systems, n),
            ") AppleWebKit/537.36 (KHTML, like Gecko) ",
            _pick(rng, browsers, n),
            "/",
            pc.cast(pa.array(rng.integers(100, 131, n)), pa.string()),
            ".0.",
            pc.cast(pa.array(rng.integers(6000, 6050, n)), pa.string()),
            " Safari/537.36",
            "",
        )
        referrer = pc.binary_join_element_wise(_pick(rng, referrers, n), "/", _pick(rng, words, n), "")
        referrer = pc.if_else(pa.array(rng.random(n) < 0.3), pa.scalar(None, pa.string()), referrer)
        table = pa.table(
            {
                "ts": pa.array(ts, type=pa.timestamp("us", tz="UTC")),
                "event_id": pa.array(event_ids(np.arange(first, first + n)), type=pa.int64()),
                "user_id": pa.array(user, type=pa.int64()),
                "session_id": pa.array(user * 10_000 + rng.integers(0, 10_000, n), type=pa.int64()),
                "amount": pa.array(amount, type=pa.float64()),
                "duration_ms": pa.array(np.minimum(rng.lognormal(5.5, 1.5, n), 2**31 - 1).astype(np.int32)),
                "status": pa.array(STATUSES[rng.choice(len(STATUSES), n, p=STATUS_WEIGHTS)], type=pa.int32()),
                "quantity": pa.array(rng.integers(1, 10, n), type=pa.int32()),
                "is_mobile": pa.array(rng.random(n) < 0.55),
                "is_bot": pa.array(rng.random(n) < 0.03),
                "country": _pick(rng, countries, n, country_weights),
                "kind": _pick(rng, kinds, n, KIND_WEIGHTS),
                "url": url,
                "user_agent": user_agent,
                "referrer": referrer,
                "message": _messages(rng, corpus, n),
            }
        )
        v2: dict[str, Any] = {}
        if parquet_v2:
            v2 = {"data_page_version": "2.0", "use_dictionary": V2_DICTIONARY, "column_encoding": V2_ENCODINGS}
        pq.write_table(
            table,
            root / f"part-{f:03d}.parquet",
            row_group_size=row_group_rows,
            write_page_index=True,
            max_rows_per_page=20_000,
            compression="zstd",
            **v2,
        )


#: `events-v2`: what writers with Parquet v2 settings produce (parquet-mr's v2 writer, Spark
#: with `parquet.writer.version=v2`, pyarrow asked for them): v2 data pages, integers and
#: timestamps DELTA_BINARY_PACKED, floats BYTE_STREAM_SPLIT, free text
#: DELTA_LENGTH_BYTE_ARRAY, URLs and other prefix-sharing strings DELTA_BYTE_ARRAY, booleans
#: RLE; only the low-cardinality strings keep a dictionary.
V2_DICTIONARY = ["country", "kind"]
V2_ENCODINGS = {
    **dict.fromkeys(["ts", "event_id", "user_id", "session_id", "duration_ms", "status", "quantity"], "DELTA_BINARY_PACKED"),
    "amount": "BYTE_STREAM_SPLIT",
    "message": "DELTA_LENGTH_BYTE_ARRAY",
    **dict.fromkeys(["url", "user_agent", "referrer"], "DELTA_BYTE_ARRAY"),
    **dict.fromkeys(["is_mobile", "is_bot"], "RLE"),
}


EVENT_NUMERIC = ["ts", "event_id", "user_id", "session_id", "amount", "duration_ms", "status", "quantity", "is_mobile", "is_bot"]
EVENT_TEXT = ["country", "kind", "url", "user_agent", "referrer", "message"]


def event_shapes(rows: int, int96_ts: bool = False) -> list[Shape]:
    """The shapes of the `events` dataset of `rows` rows; `int96_ts`: its ``ts`` is INT96,
    read by pyarrow without a time zone (`events-spark`)."""
    t1 = START + timedelta(days=17, hours=9)
    t2 = t1 + timedelta(hours=6)
    bound = _zoneless if int96_ts else _utc
    point = int(event_ids(np.array([rows * 5 // 13]))[0])
    return [
        Shape(
            "range on sorted ts",
            ["ts", "event_id", "user_id", "amount", "url"],
            f"ts >= {_sql_ts(t1)} AND ts < {_sql_ts(t2)}",
            (ds.field("ts") >= bound(t1)) & (ds.field("ts") < bound(t2)),
            ("ts",),
        ),
        Shape(
            "point lookup by id (no bloom)",
            ["ts", "event_id", "kind", "amount", "message"],
            f"event_id = {point}",
            ds.field("event_id") == point,
            ("event_id",),
        ),
        Shape(
            "selective, text projected",
            ["event_id", "ts", "user_agent", "message"],
            "kind = 'refund' AND country = 'NZ' AND amount > 100",
            (ds.field("kind") == "refund") & (ds.field("country") == "NZ") & (ds.field("amount") > 100),
            ("kind", "country", "amount"),
        ),
        Shape(
            "moderate (~25%)",
            ["event_id", "amount", "kind", "country"],
            "amount > 45.0",
            ds.field("amount") > 45.0,
            ("amount",),
        ),
        Shape("projection scan", ["user_id", "amount"], "", None),
        Shape("text-heavy projection", EVENT_TEXT, "", None),
        Shape("numeric-heavy projection", EVENT_NUMERIC, "", None),
    ]


# --------------------------------------------------------------------------------------------
# Datasets: where they live, writing them, their shapes


@dataclass
class Dataset:
    name: str
    root: Path
    files: int
    rows_per_file: int
    row_group_rows: int

    def ensure(self) -> None:
        """Writes the dataset unless its directory already holds parquet files."""
        if any(self.root.glob("*.parquet")):
            return
        print(f"writing {self.name}: {self.files} files x {self.rows_per_file:,} rows to {self.root} ...", flush=True)
        started = time.perf_counter()
        sizes = {"files": self.files, "rows_per_file": self.rows_per_file, "row_group_rows": self.row_group_rows}
        if self.name == "peers":
            write_dataset(self.root, **sizes)
        elif self.name == "events-spark":
            from spark_bench import local_spark, write_spark_events

            spark = local_spark()
            try:
                write_spark_events(spark, self.root)
            finally:
                spark.stop()
        else:
            write_events(self.root, **sizes, parquet_v2=self.name == "events-v2")
        print(f"  written in {time.perf_counter() - started:.1f} s", flush=True)

    def describe(self) -> dict[str, Any]:
        paths = sorted(self.root.glob("*.parquet"))
        metadata = [pq.ParquetFile(p).metadata for p in paths]
        size = sum(p.stat().st_size for p in paths)
        return {
            "name": self.name,
            "path": str(self.root),
            "files": len(paths),
            "rows": sum(m.num_rows for m in metadata),
            "row_groups": sum(m.num_row_groups for m in metadata),
            "columns": metadata[0].num_columns if metadata else 0,
            "bytes": size,
            "mib": round(size / 2**20),
        }

    def shapes(self, rows: int) -> list[Shape]:
        return shapes(rows) if self.name == "peers" else event_shapes(rows, int96_ts=self.name == "events-spark")


def datasets(args: argparse.Namespace) -> list[Dataset]:
    quick = QUICK_DIVISOR if args.quick else 1
    known = {
        "peers": Dataset("peers", args.data, FILES, ROWS_PER_FILE // quick, ROW_GROUP_ROWS // quick),
        "events": Dataset("events", args.events_data, EVENT_FILES, EVENT_ROWS_PER_FILE // quick, EVENT_ROW_GROUP_ROWS // quick),
        "events-v2": Dataset(
            "events-v2", args.events_v2_data, EVENT_FILES, EVENT_ROWS_PER_FILE // quick, EVENT_ROW_GROUP_ROWS // quick
        ),
        # Spark decides its files and row groups; always at full size.
        "events-spark": Dataset("events-spark", args.events_spark_data, 2, EVENT_FILES * EVENT_ROWS_PER_FILE // 2, 0),
    }
    names = DATASETS if args.dataset == "all" else (args.dataset,)
    return [known[name] for name in names]


def default_datasets(name: str = "all") -> list[Dataset]:
    """:func:`datasets` at full size in their default directories (``data/bench``, ...),
    for the benches that reuse them."""
    return datasets(
        argparse.Namespace(
            quick=False,
            dataset=name,
            data=Path("data/bench"),
            events_data=Path("data/bench-events"),
            events_v2_data=Path("data/bench-events-v2"),
            events_spark_data=Path("data/bench-events-spark"),
        )
    )


def sql(shape: Shape, table: str) -> str:
    where = f" WHERE {shape.where}" if shape.where else ""
    return f"SELECT {', '.join(shape.columns)} FROM {table}{where}"


# --------------------------------------------------------------------------------------------
# Engines, each limited to `threads` threads


#: Read by Polars (its thread pool, at import) and by DataFusion's runtime: how the
#: environment limits them to a number of threads.
THREAD_VARIABLES = ("POLARS_MAX_THREADS", "TOKIO_WORKER_THREADS")


def thread_environment(threads: int) -> dict[str, str]:
    """The environment that limits Polars and DataFusion to `threads` threads: set it
    before either is imported (:func:`engines` imports them)."""
    return dict.fromkeys(THREAD_VARIABLES, str(threads))


def limit_threads(threads: int) -> dict[str, Any]:
    """Limits pyarrow to `threads` threads and checks Polars' pool (set by the parent through
    POLARS_MAX_THREADS before Polars was imported); returns what each engine reports."""
    pa.set_cpu_count(threads)
    pa.set_io_thread_count(threads)
    limits: dict[str, Any] = {"pyarrow": {"cpu_count": pa.cpu_count(), "io_thread_count": pa.io_thread_count()}}
    try:
        import polars as pl

        limits["polars"] = {"thread_pool_size": pl.thread_pool_size()}
        if pl.thread_pool_size() != threads:
            raise SystemExit(f"polars runs {pl.thread_pool_size()} threads, not {threads}: POLARS_MAX_THREADS is read at import")
    except ImportError:
        pass
    limits["env"] = {k: os.environ.get(k) for k in THREAD_VARIABLES}
    return limits


def engines(root: Path, threads: int | None = None, limits: dict[str, Any] | None = None) -> dict[str, Callable[[Shape], int]]:
    """Each engine runs a shape and returns the row count; `threads`: each limited to that
    many threads (None: their defaults). `limits` receives what the engines report."""
    glob = str(root / "*.parquet")
    out: dict[str, Callable[[Shape], int]] = {}
    limits = {} if limits is None else limits
    threading = {} if threads is None else {"threads": threads}

    import pqsift

    def run_pqsift(shape: Shape, **options: object) -> int:
        scan = pqsift.scan(str(root), columns=shape.columns, filter=shape.where or None, **threading, **options)
        return scan.to_table().num_rows

    out["pqsift"] = run_pqsift
    out["pqsift (no pushdown)"] = lambda s: run_pqsift(s, pushdown_filters=False)
    # Strings out as Arrow views (the option; Polars' own strings are views too).
    out["pqsift (string_view)"] = lambda s: run_pqsift(s, string_view=True)
    limits["pqsift"] = {"threads": threads}

    dataset = ds.dataset(str(root), format="parquet")
    out["pyarrow.dataset"] = lambda s: dataset.to_table(columns=s.columns, filter=s.arrow_filter).num_rows

    try:
        import duckdb

        con = duckdb.connect()
        con.execute("SET TimeZone = 'UTC'")
        if threads is not None:
            con.execute(f"SET threads = {threads}")
        limits["duckdb"] = {"threads": con.sql("SELECT current_setting('threads')").fetchall()[0][0]}
        # con.sql, not con.execute: DuckDB 2 copies the rows once more for Arrow output of a
        # DB-API result (and warns about it).
        out["duckdb"] = lambda s: con.sql(sql(s, f"read_parquet('{glob}')")).to_arrow_table().num_rows
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
        if threads is not None:
            config = config.with_target_partitions(threads)
        dctx = datafusion.SessionContext(config.with_information_schema(True))
        dctx.register_parquet("events", str(root))
        setting = "SELECT value FROM information_schema.df_settings WHERE name = 'datafusion.execution.target_partitions'"
        limits["datafusion"] = {"target_partitions": dctx.sql(setting).to_arrow_table().column(0)[0].as_py()}
        out["datafusion"] = lambda s: dctx.sql(sql(s, "events")).to_arrow_table().num_rows
    except ImportError:
        pass
    return out


# --------------------------------------------------------------------------------------------
# Timing


@dataclass
class Timing:
    rows: int
    wall: list[float]  # seconds, per timed run
    cpu: list[float]  # process CPU seconds (all threads), per timed run
    runs_per_pass: int = 0  # the runs are passes of this many (0: one pass)

    @property
    def best_wall(self) -> float:
        return min(self.wall)

    @property
    def median_cpu(self) -> float:
        """The median of a pass's runs, in the pass where it is lowest."""
        n = self.runs_per_pass or len(self.cpu)
        return min(statistics.median(self.cpu[i : i + n]) for i in range(0, len(self.cpu), n))

    def add_pass(self, other: Timing) -> None:
        """Appends the runs of another pass (of as many runs) over the same shape."""
        assert other.rows == self.rows, f"{other.rows} rows after {self.rows}"
        self.runs_per_pass = self.runs_per_pass or len(self.cpu)
        self.wall += other.wall
        self.cpu += other.cpu

    @property
    def parallelism(self) -> float:
        """CPU time over wall time (median over the runs): ~threads used at once."""
        return statistics.median(c / w for c, w in zip(self.cpu, self.wall, strict=True) if w > 0)


def measure(run: Callable[[], int], repeat: int) -> Timing:
    rows = run()  # warm-up
    timing = Timing(rows, [], [])
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        again = run()
        timing.wall.append(time.perf_counter() - wall)
        timing.cpu.append(time.process_time() - cpu)
        assert again == rows, f"{again} rows after {rows}"
    return timing


def settle(seconds: float = 0.05) -> float:
    """Sleeps so that the threads of the engine that ran last go idle before the next one
    starts; returns the CPU time the process used meanwhile (threads still spinning)."""
    cpu = time.process_time()
    time.sleep(seconds)
    return time.process_time() - cpu


def ratios(wall: dict[str, float], cpu: dict[str, float]) -> dict[str, Any]:
    """pqsift against each peer and against the best peer, for wall and CPU time: the
    peer's time over pqsift's (> 1: pqsift faster / cheaper)."""
    peers = [e for e in wall if not e.startswith("pqsift")]
    out: dict[str, Any] = {"vs": {p: {"wall": wall[p] / wall["pqsift"], "cpu": cpu[p] / cpu["pqsift"]} for p in peers}}
    if peers:
        best_wall, best_cpu = min(peers, key=wall.get), min(peers, key=cpu.get)
        out["best_peer"] = {
            "wall": {"peer": best_wall, "ratio": wall[best_wall] / wall["pqsift"]},
            "cpu": {"peer": best_cpu, "ratio": cpu[best_cpu] / cpu["pqsift"]},
        }
    return out


def run_dataset(dataset: Dataset, threads: int, repeat: int, passes: int) -> dict[str, Any]:
    """Every shape of `dataset` with every engine, limited to `threads` threads, in `passes`
    passes over the engines."""
    info = dataset.describe()
    size = f"{info['rows']:,} rows, {info['mib']} MiB in {info['files']} files"
    print(f"\n##### {dataset.name}: {size}, {threads} thread(s)\n", flush=True)
    limits: dict[str, Any] = {}
    runners = engines(dataset.root, threads, limits)
    idle: dict[str, float] = {}
    results: list[dict[str, Any]] = []
    for shape in dataset.shapes(info["rows"]):
        print(f"== {shape.name}: {shape.where or '(no filter)'}  -> {', '.join(shape.columns)}", flush=True)
        timings: dict[str, Timing] = {}
        for _ in range(passes):
            for name, runner in runners.items():
                if name == "pqsift (no pushdown)" and not shape.where:
                    continue  # without a filter it is the same scan as pqsift
                timing = measure(lambda: runner(shape), repeat)  # noqa: B023 - called at once
                if name in timings:
                    timings[name].add_pass(timing)
                else:
                    timings[name] = timing
                idle[name] = max(idle.get(name, 0.0), settle())  # the next engine starts on idle cores
        wall = {k: t.best_wall for k, t in timings.items()}
        cpu = {k: t.median_cpu for k, t in timings.items()}
        compared = ratios(wall, cpu)
        best = compared.get("best_peer")
        for name, t in sorted(timings.items(), key=lambda kv: kv[1].best_wall):
            note = ""
            if best and name.startswith("pqsift"):
                vs_wall, vs_cpu = wall[best["wall"]["peer"]] / wall[name], cpu[best["cpu"]["peer"]] / cpu[name]
                note = f"  {vs_wall:5.2f}x wall, {vs_cpu:5.2f}x CPU vs best peer"
            # CPU/wall above the limit on a run long enough to tell: the engine used more threads.
            flag = "  !! CPU/wall above the thread limit" if t.parallelism > threads + 0.2 and t.best_wall > 0.05 else ""
            print(
                f"   {name:22s} {t.best_wall * 1000:9.1f} ms wall {t.median_cpu * 1000:9.1f} ms CPU "
                f"(x{t.parallelism:4.2f})  {t.rows:>10,} rows{note}{flag}",
                flush=True,
            )
        counts = {k: t.rows for k, t in timings.items()}
        if len(set(counts.values())) != 1:
            raise SystemExit(f"{dataset.name}, {shape.name}: row counts differ: {counts}")
        results.append(
            {
                "name": shape.name,
                "filter": shape.where or None,
                "columns": shape.columns,
                "rows": counts["pqsift"],
                "wall_s": wall,
                "cpu_s": cpu,
                "parallelism": {k: round(t.parallelism, 3) for k, t in timings.items()},
                "runs": {k: {"wall_s": t.wall, "cpu_s": t.cpu} for k, t in timings.items()},
                "pqsift": compared,
            }
        )
        print(flush=True)
    return {
        "dataset": dataset.name,
        "threads": threads,
        "data": info,
        "limits": limits,
        "idle_cpu_s": idle,
        "shapes": results,
    }


def child(args: argparse.Namespace) -> None:
    """One thread count, in a process of its own: every dataset, written as JSON."""
    (threads,) = parse_threads(args.threads)
    limits = limit_threads(threads)
    runs = []
    for dataset in datasets(args):
        run = run_dataset(dataset, threads, args.repeat, args.passes)
        run["limits"] = {**limits, **run["limits"]}
        runs.append(run)
    args.child_out.write_text(json.dumps(runs) + "\n")


def parse_threads(text: str) -> list[int]:
    counts = [int(t) for t in text.split(",") if t.strip()]
    if not counts or min(counts) < 1:
        raise SystemExit(f"--threads: a comma-separated list of positive counts, not {text!r}")
    return counts


def spawn(args: argparse.Namespace, threads: int) -> list[dict[str, Any]]:
    """Runs this script as a child limited to `threads` threads and returns its runs."""
    env = dict(os.environ, **thread_environment(threads))
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "runs.json"
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--child",
            "--child-out",
            str(out),
            "--threads",
            str(threads),
            "--dataset",
            args.dataset,
            "--data",
            str(args.data),
            "--events-data",
            str(args.events_data),
            "--events-v2-data",
            str(args.events_v2_data),
            "--events-spark-data",
            str(args.events_spark_data),
            "--repeat",
            str(args.repeat),
            "--passes",
            str(args.passes),
        ]
        if args.quick:
            command.append("--quick")
        subprocess.run(command, env=env, check=True)
        return json.loads(out.read_text())


# --------------------------------------------------------------------------------------------
# Reports


def versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for package in ("pqsift", "pyarrow", "duckdb", "polars", "datafusion"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = None
    return out


def engine_order(shapes_: list[dict[str, Any]]) -> list[str]:
    seen: list[str] = []
    for shape in shapes_:
        for engine in shape["wall_s"]:
            if engine not in seen:
                seen.append(engine)
    ours = sorted((e for e in seen if e.startswith("pqsift")), key=lambda e: (e != "pqsift", e))
    peers = [e for e in PEER_ORDER if e in seen] + [e for e in seen if not e.startswith("pqsift") and e not in PEER_ORDER]
    return ours + peers


def table(run: dict[str, Any]) -> str:
    """The markdown table of one dataset at one thread count."""
    engines_ = engine_order(run["shapes"])
    lines = [
        "| shape | rows | " + " | ".join(engines_) + " | pqsift vs best peer, wall | pqsift vs best peer, CPU |",
        "|---|---:|" + "---:|" * len(engines_) + "---:|---:|",
    ]
    for shape in run["shapes"]:
        cells = []
        for engine in engines_:
            if engine in shape["wall_s"]:
                cells.append(f"{shape['wall_s'][engine] * 1000:.1f} / {shape['cpu_s'][engine] * 1000:.1f}")
            else:
                cells.append("—")
        best = shape["pqsift"].get("best_peer")
        wall = f"{best['wall']['ratio']:.2f}× ({best['wall']['peer']})" if best else "—"
        cpu = f"{best['cpu']['ratio']:.2f}× ({best['cpu']['peer']})" if best else "—"
        lines.append(f"| {shape['name']} | {shape['rows']:,} | " + " | ".join(cells) + f" | {wall} | {cpu} |")
    most = {e: max(s["parallelism"][e] for s in run["shapes"] if e in s["parallelism"]) for e in engines_}
    lines.append("")
    busiest = ", ".join(f"{e} {v:.2f}" for e, v in most.items())
    lines.append(f"Highest CPU/wall over the shapes (threads busy at once): {busiest}.")
    return "\n".join(lines)


def markdown(document: dict[str, Any], command: str, chart: str | None = None) -> str:
    """The results as markdown; `chart`: the chart's path relative to the markdown file."""
    m = document["machine"]
    v = ", ".join(f"{k} {value}" for k, value in document["versions"].items() if value)
    parts = [
        "# `benches/peers.py` — pqsift beside pyarrow.dataset, DuckDB, Polars, DataFusion",
        "",
        f"Produced by `{command}` on {document['date']}, {m['cpus']} CPUs, {m['platform']}, Python {m['python']}; {v}. "
        f"{document.get('passes', 1)} pass(es) over the engines, each engine taking a warm-up and "
        f"{document['repeat']} run(s) in a row in each, files in the page cache.",
        "",
        "Each cell: **best wall ms / CPU ms** — the best wall time of all the timed runs; the CPU time is the "
        "median over a pass's runs of the process's CPU time (`time.process_time()`: user + system time of all "
        "its threads) around each run, in the engine's best pass (a burst of load from outside the process "
        "then decides no figure alone). Ratios: the "
        "best peer's time over pqsift's (> 1: pqsift faster / cheaper); the best peer is picked separately for "
        "wall and for CPU time. Each thread count runs in a fresh process, every engine limited to it: pqsift "
        "`threads=`, DuckDB `SET threads`, DataFusion `target_partitions` and `TOKIO_WORKER_THREADS`, pyarrow "
        "`set_cpu_count`/`set_io_thread_count`, Polars `POLARS_MAX_THREADS`. `pqsift (no pushdown)` "
        "(`pushdown_filters=False`) runs only on shapes with a filter. Every engine returned the same row "
        "count for every shape.",
    ]
    for run in document["runs"]:
        d = run["data"]
        parts += [
            "",
            f"## {run['dataset']}, {run['threads']} thread{'s' if run['threads'] != 1 else ''}",
            "",
            f"`{d['path']}`: {d['rows']:,} rows, {d['columns']} columns, {d['mib']} MiB in {d['files']} files, "
            f"{d['row_groups']} row groups.",
            "",
            table(run),
        ]
    parts += ["", "Filters and projections:", ""]
    seen = set()
    for run in document["runs"]:
        for shape in run["shapes"]:
            key = (run["dataset"], shape["name"])
            if key not in seen:
                seen.add(key)
                where = shape["filter"] or "(none)"
                parts.append(f"- {run['dataset']}, {shape['name']}: `{where}` → {', '.join(shape['columns'])}")
    if chart:
        parts += ["", f"![chart: best wall time per shape (the peers dataset at 2 threads, if run)]({chart})"]
    return "\n".join(parts) + "\n"


def summary(document: dict[str, Any]) -> None:
    for run in document["runs"]:
        print(f"\n## {run['dataset']}, {run['threads']} thread(s): wall ms / CPU ms\n")
        print(table(run))


# --------------------------------------------------------------------------------------------
# --bytes


def minimal_bytes(root: Path, shape: Shape) -> int:
    """Bytes of the pages, of the columns the query touches, that hold a matching row:
    what an ideal reader would fetch (dictionary pages not counted)."""
    from pqsift import RowSelection
    from pqsift._core import column_pages

    needed = set(shape.columns) | set(shape.filter_columns)
    total = 0
    for path in sorted(root.glob("*.parquet")):
        file = pq.ParquetFile(path)
        pages = {column: column_pages(str(path), column) for column in needed}
        for rg in range(file.metadata.num_row_groups):
            rows = file.metadata.row_group(rg).num_rows
            if shape.arrow_filter is None:
                selection = RowSelection.select_all(rows)
            else:
                table_ = file.read_row_group(rg, columns=sorted(set(shape.filter_columns)))
                table_ = table_.append_column("__row", pa.array(np.arange(rows)))
                matching = table_.filter(shape.arrow_filter).column("__row").to_numpy()
                mask = np.zeros(rows, dtype=bool)
                mask[matching] = True
                selection = RowSelection.from_mask(pa.array(mask))
            for column in needed:
                total += sum(length for _, length in selection.scan_ranges(pages[column][rg][1]))
    return total


def compare_bytes(dataset: Dataset) -> None:
    import pqsift

    info = dataset.describe()
    print(f"{dataset.name}: {info['rows']:,} rows, {info['mib']} MiB")
    for shape in dataset.shapes(info["rows"]):
        scan = pqsift.scan(str(dataset.root), columns=shape.columns, filter=shape.where or None)
        scan.to_table()
        read, ideal = scan.metrics["bytes_read"], minimal_bytes(dataset.root, shape)
        print(f"   {shape.name:30s} pqsift read {read / 2**20:8.1f} MiB; pages holding matches {ideal / 2**20:8.1f} MiB")


# --------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dataset",
        choices=(*DATASETS, *OPT_IN_DATASETS, "all"),
        default="all",
        help=f"which dataset(s) to time (default: all, which is {', '.join(DATASETS)})",
    )
    parser.add_argument("--threads", default="2,1", help="thread counts, each run in a process of its own (default: 2,1)")
    parser.add_argument("--data", type=Path, default=None, help="the peers dataset (default: data/bench)")
    parser.add_argument("--events-data", type=Path, default=None, help="the events dataset (default: data/bench-events)")
    parser.add_argument("--events-v2-data", type=Path, default=None, help="the events-v2 dataset (default: data/bench-events-v2)")
    parser.add_argument(
        "--events-spark-data",
        type=Path,
        default=Path("data/bench-events-spark"),
        help="the events-spark dataset, written with Spark (default: data/bench-events-spark)",
    )
    parser.add_argument("--repeat", type=int, default=None, help="timed runs after the warm-up (default: 3; --quick: 1)")
    parser.add_argument("--passes", type=int, default=None, help="passes over the engines, each a warm-up and --repeat runs per engine (default: 2; --quick: 1)")
    parser.add_argument("--json", type=Path, default=None, help="default: benches/results/peers.json")
    parser.add_argument("--md", type=Path, default=None, help="default: benches/results/peers.md")
    parser.add_argument("--png", type=Path, default=None, help="the chart drawn from --json (default: benches/results/peers.png)")
    parser.add_argument("--no-plot", action="store_true", help="do not draw the chart")
    parser.add_argument("--bytes", action="store_true", help="only compare pqsift's bytes read with the matching pages' bytes")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 timed run, 1/8 of the rows (data/bench-quick, ...), results in benches/out/",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    suffix = "-quick" if args.quick else ""
    args.data = args.data or Path(f"data/bench{suffix}")
    args.events_data = args.events_data or Path(f"data/bench-events{suffix}")
    args.events_v2_data = args.events_v2_data or Path(f"data/bench-events-v2{suffix}")
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.passes = args.passes or (1 if args.quick else 2)
    results = Path("benches/out" if args.quick else "benches/results")
    args.json = args.json or results / f"peers{suffix}.json"
    args.md = args.md or results / f"peers{suffix}.md"
    args.png = args.png or results / f"peers{suffix}.png"

    if args.child:
        child(args)
        return

    for dataset in datasets(args):
        dataset.ensure()
    if args.bytes:
        for dataset in datasets(args):
            compare_bytes(dataset)
        return

    started = time.perf_counter()
    runs: list[dict[str, Any]] = []
    for threads in parse_threads(args.threads):
        runs += spawn(args, threads)
    document = {
        "repeat": args.repeat,
        "passes": args.passes,
        "threads": parse_threads(args.threads),
        "timing": {
            "wall_s": "best of the timed runs of all passes (time.perf_counter)",
            "cpu_s": "median of a pass's timed runs' process CPU time (time.process_time: user + system, all threads), in the engine's best pass",
            "pqsift": "peer time / pqsift time, per peer and for the best peer (> 1: pqsift faster)",
        },
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": sys.version.split()[0]},
        "versions": versions(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "elapsed_s": None,
        "runs": runs,
    }
    document["elapsed_s"] = round(time.perf_counter() - started, 1)
    summary(document)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(document, indent=2) + "\n")
    print(f"\nwrote {args.json}")
    command = "python benches/peers.py " + " ".join(sys.argv[1:]) if sys.argv[1:] else "make bench-peers"
    chart = None
    if not args.no_plot:
        chart = os.path.relpath(args.png.resolve(), args.md.resolve().parent)
    args.md.parent.mkdir(parents=True, exist_ok=True)
    args.md.write_text(markdown(document, command.strip(), chart))
    print(f"wrote {args.md} ({document['elapsed_s']:.0f} s)")
    if not args.no_plot:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from plot_peers import plot

        try:
            print(f"wrote {plot(args.json, args.png)}")
        except ImportError as error:  # matplotlib missing: the JSON is still written
            print(f"no chart: {error} (pip install -r requirements-bench.txt)")


if __name__ == "__main__":
    main()
