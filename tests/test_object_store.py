"""Object storage: pqsift reading S3 — single objects, prefixes, Hive and Delta tables —
through a local emulator, against oracles that do not go through pqsift's store code.

The store is moto's S3 server in-process with the latency / fault-injecting proxy of
``tests/s3_harness.py`` in front (fixtures ``s3_emulator`` and ``s3`` in ``conftest.py``).
Uploads go straight to moto (uncounted); every read goes through the proxy, whose request
log is the oracle for the request metrics and for what was fetched. Rows are compared with
pyarrow reading the same local files, or — for corpus files, Hive and Delta tables, whose
local reading is checked against pyarrow, Spark and delta-rs elsewhere — with pqsift
reading the local copy, plus an independent check where one is cheap.

The API under test (see the report of the S3 work): ``pqsift.scan(url_or_prefix_or_list,
storage_options={...})``, ``scan.files`` as URL strings, the store metrics ``requests``,
``retries``, ``bytes_requested``, ``time_store_wait_s`` (0 for local files),
``pqsift.StorageError`` (a ``PqsiftIOError``; a missing object also a
``FileNotFoundError``), ``pqsift.inspect(url, storage_options=...)``, the CLI's
``--storage-option KEY=VALUE`` and ``pqsift.spark.read(..., storage_options=...)`` / the
data source option ``storage_options`` (JSON).

Two tests rely on the retry option ``max_retries`` (the object_store retry count, in
``rust/storage/registry.rs``) to fail fast; their slow twins use the default policy.
"""

from __future__ import annotations

import importlib.util
import json
import math
import socket
import subprocess
import sys
import time
import traceback
import urllib.parse
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import pqsift
from conftest import CORPUS

pytest.importorskip("moto.server", reason="moto[s3] is not installed (requirements-dev.txt)")

from s3_harness import FAULT_KINDS, LatencyProxy, RequestRecord, S3Emulator

REPO = Path(__file__).resolve().parents[1]
CORPUS_DATA = CORPUS.resolve() / "data"
DELTA_TESTING = (REPO / ".." / "shared" / "delta-testing").resolve()

#: A distinctive secret access key: moto does not check signatures, so any value works, and
#: this one must never appear in an error message, a plan or a repr.
SECRET = "SeCrEt-DoNotLeak-123"
SECRET_FRAGMENTS = (SECRET, "DoNotLeak")

#: The store metrics every scan reports (0 for local files).
STORE_METRICS = ("requests", "retries", "bytes_requested", "time_store_wait_s")


# --- the benchmark dataset, small ---------------------------------------------------------


def _load_peers() -> ModuleType:
    """``benches/peers.py`` as a private module whose dataset is small: 2 files of 40,000
    rows in row groups of 10,000 (page index on, bloom filter on ``id``, as there)."""
    spec = importlib.util.spec_from_file_location("pqsift_test_peers_small", REPO / "benches" / "peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    module.FILES, module.ROWS_PER_FILE, module.ROW_GROUP_ROWS = 2, 40_000, 10_000  # type: ignore[attr-defined]
    return module


PEERS = _load_peers()
PEER_FILES = ["part-000.parquet", "part-001.parquet"]
#: An id of the small dataset (file 0: ids are a permutation of 0..39,999, times 7, plus 3).
POINT = 12_345 * 7 + 3


def _ts(hour: int, minute: int = 0) -> pa.Scalar:
    return pa.scalar(datetime(2026, 1, 1, hour, minute, tzinfo=UTC), type=pa.timestamp("us", tz="UTC"))


def _small_shapes() -> list[Any]:
    """The five query shapes of ``benches/peers.py``; the two whose constants are for the
    full dataset (a time range on 2026-01-20, an id beyond 560,000) moved into the small
    one, so that every shape returns rows (ts is 2026-01-01 plus one second per row)."""
    shapes = {shape.name: shape for shape in PEERS.shapes()}
    assert len(shapes) == 5, sorted(shapes)
    shapes["range on sorted ts"] = replace(
        shapes["range on sorted ts"],
        where="ts >= TIMESTAMP '2026-01-01 03:00:00' AND ts < TIMESTAMP '2026-01-01 09:00:00'",
        arrow_filter=(ds.field("ts") >= _ts(3)) & (ds.field("ts") < _ts(9)),
    )
    shapes["point lookup (bloom)"] = replace(
        shapes["point lookup (bloom)"], where=f"id = {POINT}", arrow_filter=ds.field("id") == POINT
    )
    return list(shapes.values())


SHAPES = _small_shapes()
SHAPES_BY_NAME = {shape.name: shape for shape in SHAPES}
#: A narrow time range: 600 rows, in one row group of one file.
NARROW_RANGE = replace(
    SHAPES_BY_NAME["range on sorted ts"],
    name="narrow time range",
    where="ts >= TIMESTAMP '2026-01-01 03:00:00' AND ts < TIMESTAMP '2026-01-01 03:10:00'",
    arrow_filter=(ds.field("ts") >= _ts(3)) & (ds.field("ts") < _ts(3, 10)),
)


def _pyarrow_rows(root: Path, shape: Any) -> pa.Table:
    """pyarrow.dataset's answer to ``shape`` on the local files: the oracle."""
    return ds.dataset(str(root), format="parquet").to_table(columns=shape.columns, filter=shape.arrow_filter)


# --- uploads --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Uploaded:
    """A local directory and its copy in an emulator under ``scheme://bucket/prefix/``
    (``s3``; ``gs`` in tests/test_gcs.py)."""

    local: Path
    bucket: str
    prefix: str
    scheme: str = "s3"

    @property
    def url(self) -> str:
        """The prefix as a directory URL (trailing slash)."""
        return f"{self.scheme}://{self.bucket}/{self.prefix}/"

    @property
    def root_url(self) -> str:
        """The prefix without a trailing slash (how a Delta table root is named)."""
        return f"{self.scheme}://{self.bucket}/{self.prefix}"

    def key(self, relative: str) -> str:
        return f"{self.prefix}/{relative}"

    def url_of(self, relative: str) -> str:
        return f"{self.scheme}://{self.bucket}/{self.key(relative)}"


def _upload(emulator: Any, local: Path, prefix: str, bucket: str | None = None, scheme: str = "s3") -> Uploaded:
    """``local`` uploaded to ``emulator`` (an S3Emulator, or a GcsEmulator with ``scheme="gs"``)."""
    bucket = bucket or emulator.new_bucket()
    emulator.upload_dir(local, bucket, prefix)
    return Uploaded(local, bucket, prefix, scheme)


def _fresh_copy(emulator: S3Emulator, uploaded: Uploaded, tag: str) -> Uploaded:
    """The same files under a new prefix: URLs no earlier scan has seen, so nothing about
    them (footers, sizes) can come from a cache and every request is made."""
    return _upload(emulator, uploaded.local, f"{tag}-{uuid.uuid4().hex[:8]}", uploaded.bucket)


def _same_object(url: str, bucket: str, key: str) -> bool:
    """``url`` names ``s3://bucket/key``, the key written raw or percent-encoded."""
    raw = f"s3://{bucket}/{key}"
    return url == raw or urllib.parse.unquote(url) == raw


def _assert_files_are(files: list[str], bucket: str, keys: Iterable[str]) -> None:
    """The scan's files are exactly the objects ``keys`` (in any order)."""
    expected = sorted(keys)
    assert len(files) == len(expected), (files, expected)
    unmatched = [k for k in expected if not any(_same_object(f, bucket, k) for f in files)]
    assert not unmatched, f"objects not among the scan's files: {unmatched}; files: {files}"


def _options(proxy: LatencyProxy, **extra: str) -> dict[str, str]:
    return {**proxy.storage_options, **extra}


@pytest.fixture(scope="module")
def peers(s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory) -> Uploaded:
    """The small benchmark dataset, local and in its own bucket under ``events/``."""
    root = tmp_path_factory.mktemp("peers") / "events"
    PEERS.write_dataset(root)
    assert sorted(p.name for p in root.iterdir()) == PEER_FILES
    return _upload(s3_emulator, root, "events")


# --- comparing tables ---------------------------------------------------------------------


def _normal(value: Any) -> Any:
    """A Python value with NaN made equal to itself (as Spark compares)."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_normal(v) for v in value)
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    return value


def _row_multiset(table: pa.Table) -> list[str]:
    """The rows as a sorted list of their reprs: a multiset that nested values, NaN and
    nulls all fit in."""
    return sorted(repr(_normal(row)) for row in table.to_pylist())


def _assert_same_table(got: pa.Table, expected: pa.Table, what: str) -> None:
    """Same column names and types, same rows as a multiset (order is not compared)."""
    assert got.schema.names == expected.schema.names, f"{what}: columns {got.schema.names} vs {expected.schema.names}"
    assert got.schema.types == expected.schema.types, f"{what}: types\n{got.schema}\nvs\n{expected.schema}"
    assert got.num_rows == expected.num_rows, f"{what}: {got.num_rows} rows, expected {expected.num_rows}"
    if not got.equals(expected):
        assert _row_multiset(got) == _row_multiset(expected), f"{what}: the rows differ"


# --- what the proxy saw --------------------------------------------------------------------


def _object_gets(proxy: LatencyProxy, key_suffix: str = "") -> list[RequestRecord]:
    """The GETs of objects (not listings) whose key ends with ``key_suffix``."""
    return [
        r
        for r in proxy.log()
        if r.method == "GET" and r.key and "list-type" not in r.query and r.key.endswith(key_suffix)
    ]


def _assert_store_metrics_agree(
    scan: pqsift.Scan, proxy: LatencyProxy, *, retries: int | None = 0, check_bytes: bool = True
) -> dict[str, Any]:
    """After a read: pqsift's ``requests`` is the number of requests the proxy saw (the
    proxy was fresh or reset before the scan was made), ``retries`` is ``retries`` (when
    given), the bytes asked for cover the object bytes received, and some time was spent
    waiting on the store. Returns the metrics."""
    metrics = scan.metrics
    snapshot = proxy.snapshot()
    for name in STORE_METRICS:
        assert name in metrics, f"metric {name} is missing: {sorted(metrics)}"
    assert metrics["requests"] == snapshot["requests"], (
        f"pqsift counted {metrics['requests']} requests, the store saw {snapshot['requests']}: {snapshot['by_method']}"
    )
    if retries is not None:
        assert metrics["retries"] == retries, (metrics["retries"], snapshot)
    if check_bytes:
        received = sum(r.response_bytes for r in _object_gets(proxy) if r.status in (200, 206))
        assert metrics["bytes_requested"] >= received > 0, (metrics["bytes_requested"], received)
    assert metrics["time_store_wait_s"] > 0
    return metrics


@dataclass(frozen=True)
class Layout:
    """Where a Parquet file's row groups lie: ``[start, end)`` of each row group's column
    chunks, and where the column data ends (bloom filters, page index, footer follow)."""

    size: int
    row_groups: list[tuple[int, int]]

    @property
    def data_end(self) -> int:
        return max(end for _, end in self.row_groups)


def _layout(path: Path) -> Layout:
    meta = pq.ParquetFile(path).metadata
    spans = []
    for index in range(meta.num_row_groups):
        row_group = meta.row_group(index)
        starts, ends = [], []
        for column in range(row_group.num_columns):
            chunk = row_group.column(column)
            start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
            starts.append(start)
            ends.append(start + chunk.total_compressed_size)
        spans.append((min(starts), max(ends)))
    return Layout(path.stat().st_size, spans)


def _byte_range(record: RequestRecord, size: int) -> tuple[int, int]:
    """``[start, end)`` of a GET: its Range header (``a-b``, ``a-``, ``-n``), or the whole
    object without one."""
    if not record.range:
        return 0, size
    first, _, last = record.range.removeprefix("bytes=").partition("-")
    if not first:
        return max(0, size - int(last)), size
    return int(first), min(size, int(last) + 1) if last else size


def _row_groups_fetched(proxy: LatencyProxy, key: str, layout: Layout) -> set[int]:
    """The row groups whose column data some GET of ``key`` fetched. A GET reaching the
    end of the file is a metadata read (footer, page index, bloom filters: a suffix or a
    metadata size hint may take some column data along) and is not counted."""
    fetched: set[int] = set()
    for record in _object_gets(proxy, key):
        if record.key != key:
            continue
        start, end = _byte_range(record, layout.size)
        if end >= layout.size or start >= layout.data_end:
            continue
        fetched |= {i for i, (s, e) in enumerate(layout.row_groups) if start < e and s < end}
    return fetched


def _matching_row_groups(path: Path, arrow_filter: pc.Expression) -> set[int]:
    """The row groups of ``path`` holding a row that matches (pyarrow)."""
    file = pq.ParquetFile(path)
    names = file.schema_arrow.names
    return {
        index
        for index in range(file.metadata.num_row_groups)
        if file.read_row_group(index, columns=names).filter(arrow_filter).num_rows > 0
    }


def _chunk_bytes(path: Path, row_groups: set[int], columns: Iterable[str]) -> int:
    """Compressed bytes of ``columns``' chunks in ``row_groups``."""
    meta = pq.ParquetFile(path).metadata
    wanted = set(columns)
    return sum(
        meta.row_group(rg).column(c).total_compressed_size
        for rg in row_groups
        for c in range(meta.num_columns)
        if meta.row_group(rg).column(c).path_in_schema in wanted
    )


def _closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _assert_no_secret(*texts: str) -> None:
    for text in texts:
        for fragment in SECRET_FRAGMENTS:
            assert fragment not in text, f"the secret access key leaked: {text[:2000]}"


def _error_texts(error: BaseException) -> list[str]:
    """Everything an error shows: its message, repr and full traceback (causes included)."""
    return [str(error), repr(error), "".join(traceback.format_exception(error))]


# ===========================================================================================
# The five query shapes: the same rows as pyarrow on the local files
# ===========================================================================================


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.name for shape in SHAPES])
def test_query_shapes_return_pyarrows_rows(shape: Any, s3: LatencyProxy, peers: Uploaded) -> None:
    """Each shape of benches/peers.py on the prefix, through 5 ms of latency: pyarrow's
    rows, the files as URLs, and store metrics that agree with the proxy's count."""
    s3.delay = 0.005
    scan = pqsift.scan(peers.url, columns=shape.columns, filter=shape.where or None, storage_options=s3.storage_options)
    got = scan.to_table()
    expected = _pyarrow_rows(peers.local, shape)
    assert expected.num_rows > 0, "every shape must return rows on the small dataset"
    _assert_same_table(got.sort_by("id"), expected.sort_by("id"), shape.name)
    _assert_files_are(scan.files, peers.bucket, [peers.key(name) for name in PEER_FILES])
    metrics = _assert_store_metrics_agree(scan, s3)
    assert metrics["rows_out"] == expected.num_rows
    assert metrics["time_store_wait_s"] >= 0.005  # every request waited 5 ms at the proxy


def test_a_single_object_and_a_list_of_urls(s3: LatencyProxy, peers: Uploaded) -> None:
    """One object by its URL, and a list of URLs: pyarrow's rows of those files."""
    shape = SHAPES_BY_NAME["moderate (~25%)"]
    one = pqsift.scan(
        peers.url_of(PEER_FILES[1]), columns=shape.columns, filter=shape.where, storage_options=s3.storage_options
    )
    expected = ds.dataset(str(peers.local / PEER_FILES[1])).to_table(columns=shape.columns, filter=shape.arrow_filter)
    _assert_same_table(one.to_table().sort_by("id"), expected.sort_by("id"), "one object")
    assert one.files == [peers.url_of(PEER_FILES[1])]
    urls = [peers.url_of(name) for name in reversed(PEER_FILES)]
    both = pqsift.scan(urls, columns=shape.columns, filter=shape.where, storage_options=s3.storage_options)
    _assert_same_table(both.to_table().sort_by("id"), _pyarrow_rows(peers.local, shape).sort_by("id"), "a list of URLs")
    assert sorted(both.files) == sorted(urls)


def test_store_metrics_are_zero_for_local_files(peers: Uploaded) -> None:
    scan = pqsift.scan(peers.local, columns=["id", "amount"], filter="amount > 990")
    assert scan.to_table().num_rows > 0
    metrics = scan.metrics
    assert {name: metrics[name] for name in STORE_METRICS} == dict.fromkeys(STORE_METRICS, 0)


# ===========================================================================================
# Corpus files: the same table as pqsift reading them locally
# ===========================================================================================

# Files the local reader reads (tests/test_corpus.py checks them against pyarrow): nested
# types, dictionaries, page indexes with tiny pages, bloom filters, v2 pages, encodings,
# codecs, a file of 192 bytes (smaller than any footer read) and one with no rows.
CORPUS_FILES = [
    "alltypes_tiny_pages.parquet",
    "alltypes_tiny_pages_plain.parquet",
    "data_index_bloom_encoding_stats.parquet",
    "data_index_bloom_encoding_with_length.parquet",
    "nested_structs.rust.parquet",
    "nested_maps.snappy.parquet",
    "nested_lists.snappy.parquet",
    "nullable.impala.parquet",
    "alltypes_dictionary.parquet",
    "delta_byte_array.parquet",
    "byte_stream_split.zstd.parquet",
    "datapage_v2.snappy.parquet",
    "fixed_length_decimal.parquet",
    "int32_with_null_pages.parquet",
    "lz4_raw_compressed_larger.parquet",
    "rle_boolean_encoding.parquet",
    "column_chunk_key_value_metadata.parquet",
]

# (file, filter): selective reads of page-indexed files, pages pruned from the page index.
CORPUS_FILTERS = [
    ("alltypes_tiny_pages.parquet", "id > 3000 AND bool_col"),
    ("alltypes_tiny_pages_plain.parquet", "int_col IN (1, 5) OR float_col > 8"),
    ("data_index_bloom_encoding_stats.parquet", "String = 'Hello'"),
    ("int32_with_null_pages.parquet", "int32_field IS NULL OR int32_field > 100000000"),
]


@pytest.fixture(scope="module")
def corpus_bucket(s3_emulator: S3Emulator) -> str:
    """The corpus files above, under ``corpus/<name>``."""
    bucket = s3_emulator.new_bucket("corpus")
    for name in CORPUS_FILES:
        s3_emulator.upload_file(CORPUS_DATA / name, bucket, f"corpus/{name}")
    return bucket


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_file_reads_as_locally(name: str, s3: LatencyProxy, corpus_bucket: str) -> None:
    url = f"s3://{corpus_bucket}/corpus/{name}"
    scan = pqsift.scan(url, storage_options=s3.storage_options)
    got = scan.to_table()
    _assert_same_table(got, pqsift.scan(CORPUS_DATA / name).to_table(), name)
    assert scan.files == [url]
    _assert_store_metrics_agree(scan, s3, check_bytes=False)


@pytest.mark.parametrize(("name", "where"), CORPUS_FILTERS)
def test_corpus_file_filtered_reads_as_locally(name: str, where: str, s3: LatencyProxy, corpus_bucket: str) -> None:
    url = f"s3://{corpus_bucket}/corpus/{name}"
    got = pqsift.scan(url, filter=where, storage_options=s3.storage_options)
    local = pqsift.scan(CORPUS_DATA / name, filter=where)
    _assert_same_table(got.to_table(), local.to_table(), f"{name} where {where}")
    for metric in ("row_groups_pruned_statistics", "row_groups_pruned_bloom_filter", "pages_pruned", "rows_selected"):
        assert got.metrics[metric] == local.metrics[metric], metric


# ===========================================================================================
# Requests: few, small, coalesced, and counted exactly
# ===========================================================================================


def test_a_footer_read_again_asks_for_the_bytes_it_needed_the_first_time(
    s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded
) -> None:
    """Each file read in a group of its own, the metadata cache off: the second file's footer
    is read when planning (its last ``metadata_size_hint`` bytes) and again when the read
    reaches it — then only the bytes at its end that its footer and page index take, which
    the first read found, not the hint again."""
    copy = _fresh_copy(s3_emulator, peers, "tail")
    hint = 1 << 20
    before = pqsift.set_metadata_cache_bytes(0)
    try:
        scan = pqsift.scan(
            copy.url,
            columns=["id"],
            footer_bytes_read_together=1,
            metadata_size_hint=hint,
            storage_options=s3.storage_options,
        )
        table = scan.to_table()
    finally:
        pqsift.set_metadata_cache_bytes(before)
    assert table.num_rows == sum(pq.ParquetFile(peers.local / name).metadata.num_rows for name in PEER_FILES)
    name = PEER_FILES[1]
    path = peers.local / name
    layout = _layout(path)
    assert layout.size > hint, "the hint must be a part of the file for this test"
    footer = int.from_bytes(path.read_bytes()[-8:-4], "little") + 8
    tails = [
        end - start
        for start, end in (
            _byte_range(r, layout.size) for r in _object_gets(s3, copy.key(name)) if r.key == copy.key(name)
        )
        if end == layout.size
    ]
    assert len(tails) >= 2 and tails[0] == hint, tails
    # The footer, the page index (and what lies between), no column data.
    assert all(footer <= tail <= layout.size - layout.data_end for tail in tails[1:]), (tails, footer, layout.data_end)


@pytest.mark.parametrize("shape", [SHAPES_BY_NAME["point lookup (bloom)"], NARROW_RANGE], ids=lambda s: s.name)
def test_selective_reads_fetch_only_the_row_groups_that_match(
    shape: Any, s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded
) -> None:
    """A point lookup on the bloom-filtered id and a 10-minute time range: the only column
    data fetched is that of row groups holding a match (pyarrow says which), the bytes
    are the footers plus those row groups' chunks — a fraction of the files — and the
    requests few. Fresh URLs: no footer comes from a cache."""
    copy = _fresh_copy(s3_emulator, peers, "selective")
    hint = 128 << 10  # the metadata size hint: the footer, page index and bloom filters fit
    scan = pqsift.scan(
        copy.url, columns=shape.columns, filter=shape.where, metadata_size_hint=hint, storage_options=s3.storage_options
    )
    got = scan.to_table()
    expected = _pyarrow_rows(peers.local, shape)
    assert 0 < expected.num_rows <= 600
    _assert_same_table(got.sort_by("id"), expected.sort_by("id"), shape.name)
    _assert_store_metrics_agree(scan, s3)

    read_columns = set(shape.columns) | {"ts", "id"}
    total_size = bound = matching_groups = 0
    for name in PEER_FILES:
        path = peers.local / name
        layout = _layout(path)
        matching = _matching_row_groups(path, shape.arrow_filter)
        fetched = _row_groups_fetched(s3, copy.key(name), layout)
        assert fetched <= matching, (
            f"{name}: column data of row groups {sorted(fetched - matching)} fetched, none of their rows match"
        )
        total_size += layout.size
        matching_groups += len(matching)
        # The footer read, one more pass over the metadata (bloom filters, page index read on
        # their own), and the chunks of the columns read in the row groups that match.
        tail = layout.size - layout.data_end
        bound += min(layout.size, max(hint, tail)) + tail + _chunk_bytes(path, matching, read_columns)
    snapshot = s3.snapshot()
    assert snapshot["response_bytes"] <= 1.05 * bound + (16 << 10), (snapshot["response_bytes"], bound)
    assert snapshot["response_bytes"] < 0.35 * total_size, (snapshot["response_bytes"], total_size)
    gets = _object_gets(s3)
    assert len(gets) <= 3 * len(PEER_FILES) + 3 * matching_groups, [(r.key, r.range) for r in gets]


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.name for shape in SHAPES])
def test_tasks_reading_the_drivers_plan_make_no_more_requests_than_one_scan(
    shape: Any, s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded
) -> None:
    """A query planned into tasks on a driver (``plan_tasks``, two tasks a core as Spark
    would run them) and each task's pieces read from the plans they carry, as a Spark task
    reads them: the requests of planning and all the tasks together are at most 1.05x those
    of one in-process scan of the same query — the tasks fetch no footer and plan nothing.
    The same pieces without their plans (each task planning its file again, as before)
    cost more. Fresh URLs each time: no footer comes from a cache."""
    from pqsift.spark.planning import plan_tasks
    from pqsift.spark.reader import read_pieces

    options = {"storage_options": s3.storage_options}
    expected = _pyarrow_rows(peers.local, shape)

    def requests_of(read: Any) -> tuple[pa.Table, int]:
        copy = _fresh_copy(s3_emulator, peers, "tasks")
        s3.reset()
        table = read(copy.url)
        return table, s3.snapshot()["requests"]

    def in_process(url: str) -> pa.Table:
        return pqsift.scan(url, shape.columns, shape.where or None, **options).to_table()

    def in_tasks(url: str, keep_plans: bool = True) -> pa.Table:
        plan = plan_tasks(url, shape.columns, shape.where or None, parallelism=4, **options)
        plans = [piece.plan for task in plan.tasks for piece in task.pieces]
        assert all(plans) and not any(fragment.encode() in p for p in plans if p for fragment in SECRET_FRAGMENTS)
        counts: list[dict[str, Any]] = []
        batches = [
            batch
            for task in plan.tasks
            for batch in read_pieces(
                [row if keep_plans else (*row[:5], None) for row in task.to_rows()],
                shape.columns,
                shape.where or None,
                report=counts.append,
                **options,
            )
        ]
        if keep_plans:
            assert sum(c["time_task_planning_s"] for c in counts) < 0.5
        return pa.Table.from_batches(batches) if batches else expected.slice(0, 0)

    scanned, scan_requests = requests_of(in_process)
    tasks_read, task_requests = requests_of(in_tasks)
    replanned, replanned_requests = requests_of(lambda url: in_tasks(url, keep_plans=False))
    for got in (scanned, tasks_read.cast(expected.schema), replanned.cast(expected.schema)):
        _assert_same_table(got.sort_by("id"), expected.sort_by("id"), shape.name)
    assert task_requests <= 1.05 * scan_requests, (task_requests, scan_requests)
    assert replanned_requests > task_requests, (replanned_requests, task_requests)


@pytest.fixture(scope="module")
def paged(s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory) -> Uploaded:
    """One file of 1.5 MB: 4 row groups x 5 columns in pages of 1,000 rows (20 pages per
    chunk, 400 pages); no dictionaries but one, so that the data is not small."""
    root = tmp_path_factory.mktemp("paged")
    rng = np.random.default_rng(5)
    n = 80_000
    table = pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "x": pa.array(rng.normal(size=n)),
            "name": pa.array([f"row {i} {'x' * (i % 17)}" for i in range(n)]),
            "kind": pa.array(np.array(["a", "b", "c", "d"])[rng.integers(0, 4, n)]),
            "flag": pa.array(rng.random(n) < 0.3),
        }
    )
    pq.write_table(
        table,
        root / "paged.parquet",
        row_group_size=20_000,
        max_rows_per_page=1_000,
        write_page_index=True,
        compression="snappy",
        use_dictionary=["kind"],
    )
    return _upload(s3_emulator, root, "paged")


def test_full_projection_is_coalesced_per_row_group(s3: LatencyProxy, paged: Uploaded) -> None:
    """Reading every column of every row group of a file of 400 pages makes at most one
    request per row group (plus the footer's), not one per column chunk or page, and
    fetches each byte about once."""
    path = paged.local / "paged.parquet"
    info = pqsift.inspect(path)
    row_groups = len(info["row_groups"])
    assert row_groups == 4 and all(chunk["pages"] >= 20 for rg in info["row_groups"] for chunk in rg["columns"])
    scan = pqsift.scan(paged.url_of("paged.parquet"), storage_options=s3.storage_options)
    _assert_same_table(scan.to_table(), pq.read_table(path), "full projection")
    _assert_store_metrics_agree(scan, s3)
    gets = _object_gets(s3, "paged.parquet")
    assert len(gets) <= row_groups + 2, [r.range for r in gets]
    size = path.stat().st_size
    assert size > 3 * (512 << 10) // 2, "the file must be larger than what a footer read takes along"
    # Every byte but the leading magic is needed; beyond the file, at most a footer read's worth twice.
    assert size - 4 <= s3.snapshot()["response_bytes"] <= size + (512 << 10)


# ===========================================================================================
# Round trips: the listing, and the projection with the predicate columns
# ===========================================================================================


def test_a_prefix_is_listed_in_one_request(s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded) -> None:
    """A directory URL: the listing itself tells whether it holds a Delta log — one LIST
    request, no other — and the listing's sizes open the files without a HEAD."""
    copy = _fresh_copy(s3_emulator, peers, "listing")
    s3.delay = 0.03
    scan = pqsift.scan(copy.url, storage_options=s3.storage_options)
    _assert_files_are([f.path for f in scan.plan().files], copy.bucket, [copy.key(name) for name in PEER_FILES])
    lists = [r for r in s3.log() if "list-type" in r.query]
    assert len(lists) == 1, [r.target for r in lists]
    assert not [r for r in s3.log() if r.method == "HEAD"]


#: More keys than a listing's page, all sorting before ``_delta_log`` ('.' < '_') and left
#: out of a table as hidden.
HIDDEN_KEYS = 1_100


def _with_hidden_keys(emulator: S3Emulator, uploaded: Uploaded, tag: str) -> Uploaded:
    copy = _fresh_copy(emulator, uploaded, tag)
    for i in range(HIDDEN_KEYS):
        emulator.put_object(copy.bucket, copy.key(f".hidden/{i:05d}"), b"x")
    return copy


def test_a_prefix_of_more_than_a_page_is_listed_whole(
    s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded
) -> None:
    """Past a page of keys without a Delta log, the log is asked about directly while the
    listing's other pages come: the directory's files are all found, the rows pyarrow's."""
    copy = _with_hidden_keys(s3_emulator, peers, "paged-listing")
    scan = pqsift.scan(copy.url, storage_options=s3.storage_options)
    _assert_files_are(scan.files, copy.bucket, [copy.key(name) for name in PEER_FILES])
    assert scan.table_format != "delta"
    assert scan.count_rows() == sum(pq.ParquetFile(peers.local / name).metadata.num_rows for name in PEER_FILES)
    delimited = [r for r in s3.log() if "list-type" in r.query and "delimiter" in r.query]
    assert len(delimited) == 1, [r.target for r in s3.log() if "list-type" in r.query]


def test_a_delta_log_behind_a_page_of_keys_is_found(
    s3: LatencyProxy, s3_emulator: S3Emulator, delta_tables: dict[str, Uploaded]
) -> None:
    """A Delta table whose first listing page holds none of its log (keys sorting before
    ``_delta_log``): asked about directly, the log is found and read, as locally."""
    table = _with_hidden_keys(s3_emulator, delta_tables["tables/table-with-dv-small"], "delta-behind-keys")
    scan = pqsift.scan(table.root_url, storage_options=s3.storage_options)
    _assert_delta_scan_as_local(scan, pqsift.scan(str(table.local)), table, "delta behind a page of keys")


def test_a_directory_written_without_its_slash_is_probed_in_one_round_trip(
    s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded
) -> None:
    """``s3://bucket/table`` (no trailing slash, no extension) may be an object or a
    prefix: the HEAD asking the one and the listing asking the other go together, two
    requests in flight at once; a name with an extension is asked by a HEAD alone."""
    copy = _fresh_copy(s3_emulator, peers, "no-slash")
    s3.delay = 0.03
    scan = pqsift.scan(copy.url.rstrip("/"), storage_options=s3.storage_options)
    _assert_files_are([f.path for f in scan.plan().files], copy.bucket, [copy.key(name) for name in PEER_FILES])
    probes = [r for r in s3.log() if "list-type" in r.query or r.method == "HEAD"]
    assert sorted(r.method for r in probes) == ["GET", "HEAD"], [r.target for r in probes]
    first_answered = min(r.started + r.duration for r in probes)
    assert max(r.started for r in probes) < first_answered, "a probe waited for another"
    s3.reset()
    one = pqsift.scan(f"{copy.url}{PEER_FILES[0]}", storage_options=s3.storage_options)
    assert one.files and [r.method for r in s3.log()] == ["HEAD"]


def test_most_pages_holding_survivors_come_with_the_predicate_columns(
    s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded
) -> None:
    """~25% of rows pass ``amount > 737.5``: every page of ``id`` and ``kind`` holds a row
    that passes, so each row group's projection is fetched in the round trip of its
    predicate column — one request per row group, the pages coalesced — not after the
    filter in a second; the rows are pyarrow's."""
    shape = SHAPES_BY_NAME["moderate (~25%)"]
    copy = _fresh_copy(s3_emulator, peers, "one-trip")
    scan = pqsift.scan(copy.url, columns=shape.columns, filter=shape.where, storage_options=s3.storage_options)
    _assert_same_table(scan.to_table().sort_by("id"), _pyarrow_rows(peers.local, shape).sort_by("id"), shape.name)
    metrics = _assert_store_metrics_agree(scan, s3)
    row_groups = 0
    for name in PEER_FILES:
        layout = _layout(peers.local / name)
        row_groups += len(layout.row_groups)
        for index, (start, end) in enumerate(layout.row_groups):
            data_gets = [
                r
                for r in _object_gets(s3, copy.key(name))
                if (lambda s_e: s_e[0] < end and start < s_e[1] and s_e[1] < layout.size)(_byte_range(r, layout.size))
            ]
            assert len(data_gets) == 1, f"{name} row group {index}: {[r.range for r in data_gets]}"
    assert metrics["projections_fetched_with_predicates"] == row_groups


def test_a_needles_projection_is_fetched_for_its_page_only(
    s3: LatencyProxy, s3_emulator: S3Emulator, tmp_path: Path
) -> None:
    """One row of 30,000 passes an unsorted filter (no statistics narrow it), over small
    pages: almost no page of the wide column holds it, so its pages are fetched after the
    filter, only the one holding the row — a fraction of the column, in a second round
    trip — and no row group fetches its projection with the predicate column."""
    rows = 30_000
    values = pa.array([(i * 7_919) % rows for i in range(rows)], pa.int64())  # a permutation
    # 2 MB of text a row group: more than a request is worth (the 1 MiB coalescing gap).
    text = pa.array([f"row {i:06d} " + "x" * 390 for i in range(rows)])
    path = _mkdir(tmp_path / "needle") / "needle.parquet"
    pq.write_table(
        pa.table({"v": values, "text": text}),
        path,
        row_group_size=5_000,
        data_page_size=8 << 10,
        write_batch_size=64,
        write_page_index=True,
        compression="none",
        use_dictionary=False,
    )
    bucket = s3_emulator.new_bucket("needle")
    s3_emulator.upload_dir(tmp_path / "needle", bucket, "t")
    scan = pqsift.scan(
        f"s3://{bucket}/t/", columns=["v", "text"], filter="v = 12345", storage_options=s3.storage_options
    )
    got = scan.to_table()
    assert got.column("v").to_pylist() == [12_345]
    metrics = _assert_store_metrics_agree(scan, s3)
    assert metrics["projections_fetched_with_predicates"] == 0
    text_bytes = sum(pq.ParquetFile(path).metadata.row_group(i).column(1).total_compressed_size for i in range(6))
    received = sum(r.response_bytes for r in _object_gets(s3))
    assert received < text_bytes / 4, (received, text_bytes)


# ===========================================================================================
# Concurrency: footers fetched at once
# ===========================================================================================


def test_planning_fetches_footers_concurrently(s3: LatencyProxy, s3_emulator: S3Emulator, tmp_path: Path) -> None:
    """Planning 8 files behind 30 ms of latency: their footers are fetched at once, one
    request each."""
    many = _mkdir(tmp_path / "many")
    for i in range(8):
        table = pa.table(
            {"id": pa.array(range(i * 1000, (i + 1) * 1000), pa.int64()), "v": pa.array([float(i)] * 1000)}
        )
        pq.write_table(table, many / f"part-{i}.parquet", row_group_size=500)
    pq.write_table(pa.table({"id": [1]}), _mkdir(tmp_path / "warm") / "warm.parquet")
    bucket = s3_emulator.new_bucket("concurrent")
    s3_emulator.upload_dir(tmp_path, bucket)
    options = s3.storage_options
    # The client and a connection to the store exist before the clock starts.
    assert pqsift.scan(f"s3://{bucket}/warm/", storage_options=options).to_table().num_rows == 1
    s3.reset()
    s3.delay = 0.03
    scan = pqsift.scan(f"s3://{bucket}/many/", filter="id >= 0", storage_options=options)
    plan = scan.plan()
    snapshot = s3.snapshot()
    assert len(plan.files) == 8 and all(len(f.row_groups) == 2 for f in plan.files)
    assert {r.key for r in _object_gets(s3)} == {f"many/part-{i}.parquet" for i in range(8)}
    # Every footer in one wave: concurrency shown by the proxy, not by a timed assertion
    # (speed is for the benchmarks).
    assert snapshot["max_in_flight"] >= 7, snapshot
    footers = [r for r in _object_gets(s3) if r.key.startswith("many/")]
    assert len(footers) == 8, [r.key for r in footers]


def test_footers_are_fetched_ahead_in_windows_each_once(
    s3: LatencyProxy, s3_emulator: S3Emulator, tmp_path: Path
) -> None:
    """150 files, more than two windows of footers fetched ahead: every footer is fetched
    once, concurrently but never more than 16 at a time, and the rows of the three files
    the filter keeps are pyarrow's."""
    files = 150
    many = _mkdir(tmp_path / "windows")
    for i in range(files):
        pq.write_table(
            pa.table({"id": pa.array(range(i * 10, (i + 1) * 10), pa.int64())}), many / f"part-{i:03d}.parquet"
        )
    bucket = s3_emulator.new_bucket("windows")
    s3_emulator.upload_dir(tmp_path, bucket)
    s3.reset()
    s3.delay = 0.005
    # Rows of files 0, 70 and 149: in the first window, the second and the last.
    where = "id < 10 OR (id >= 700 AND id < 710) OR id >= 1490"
    scan = pqsift.scan(f"s3://{bucket}/windows/", filter=where, storage_options=s3.storage_options)
    got = scan.to_table()
    snapshot = s3.snapshot()
    gets = Counter(r.key for r in _object_gets(s3) if r.key.startswith("windows/"))
    assert set(gets) == {f"windows/part-{i:03d}.parquet" for i in range(files)}
    # A file this small is read whole with its footer: one request each, never again.
    assert set(gets.values()) == {1}, {key: n for key, n in gets.items() if n != 1}
    assert 8 <= snapshot["max_in_flight"] <= 16 + 2, snapshot
    assert sorted(got.column("id").to_pylist()) == [*range(10), *range(700, 710), *range(1490, 1500)]


# ===========================================================================================
# Retries
# ===========================================================================================


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_transient_failures_are_retried(kind: str, s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded) -> None:
    """The first two GETs of objects fail (500, 503, a dropped or reset connection, a body
    cut in half): the read retries and returns pyarrow's rows; ``retries`` counts them."""
    copy = _fresh_copy(s3_emulator, peers, f"retry-{kind}")
    shape = SHAPES_BY_NAME["selective, text projected"]
    s3.inject(kind, count=2, methods=("GET",), path_contains=".parquet")
    scan = pqsift.scan(copy.url, columns=shape.columns, filter=shape.where, storage_options=s3.storage_options)
    got = scan.to_table()
    _assert_same_table(got.sort_by("id"), _pyarrow_rows(peers.local, shape).sort_by("id"), f"after {kind}")
    snapshot = s3.snapshot()
    assert snapshot["by_fault"] == {kind: 2} and s3.pending_faults() == 0, snapshot
    assert scan.metrics["retries"] >= 2, scan.metrics
    if kind in ("500", "503"):  # an error status is exactly one failed attempt
        _assert_store_metrics_agree(scan, s3, retries=2)


@pytest.mark.parametrize("kind", ["500", "503", "drop", "reset", "truncate"])
def test_a_failed_listing_is_retried(kind: str, s3: LatencyProxy, peers: Uploaded) -> None:
    """The first two LISTs fail — an error status, no response, or a body cut in half (the
    object store crate retries the others; pqsift asks a cut listing again whole)."""
    shape = SHAPES_BY_NAME["moderate (~25%)"]
    s3.inject(kind, count=2, methods=("GET",), path_contains="list-type=2")
    scan = pqsift.scan(peers.url, columns=shape.columns, filter=shape.where, storage_options=s3.storage_options)
    _assert_same_table(
        scan.to_table().sort_by("id"), _pyarrow_rows(peers.local, shape).sort_by("id"), f"list after {kind}"
    )
    assert s3.snapshot()["by_fault"] == {kind: 2}
    if kind in ("500", "503"):  # an error status is exactly one failed attempt
        _assert_store_metrics_agree(scan, s3, retries=2)
    else:
        assert scan.metrics["retries"] >= 2, scan.metrics


def test_a_delta_log_listing_cut_short_is_retried(s3: LatencyProxy, delta_tables: dict[str, Uploaded]) -> None:
    table = delta_tables["tables/table-with-dv-small"]
    s3.inject("truncate", count=3, methods=("GET",), path_contains="list-type=2")
    scan = pqsift.scan(table.root_url, storage_options=s3.storage_options)
    _assert_same_table(scan.to_table(), pqsift.scan(str(table.local)).to_table(), "delta after cut listings")
    assert s3.snapshot()["by_fault"] == {"truncate": 3}


def test_a_permanent_failure_raises_naming_the_url(s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded) -> None:
    """Every GET of the object fails with a 500: with ``max_retries=2`` the request is
    tried 3 times, then a pqsift error naming the URL — not a hang, not a crash."""
    key = f"permanent-{uuid.uuid4().hex[:8]}/part-000.parquet"
    s3_emulator.upload_file(peers.local / PEER_FILES[0], peers.bucket, key)
    url = f"s3://{peers.bucket}/{key}"
    s3.inject("500", count=1000, methods=("GET",), path_contains=key.split("/")[0])
    started = time.perf_counter()
    with pytest.raises(pqsift.PqsiftError) as info:
        pqsift.scan(url, storage_options=_options(s3, max_retries="2", aws_secret_access_key=SECRET)).to_table()
    assert time.perf_counter() - started < 30
    assert url in str(info.value)
    assert not isinstance(info.value, FileNotFoundError)
    _assert_no_secret(*_error_texts(info.value))
    assert len(_object_gets(s3, key)) == 3  # the first attempt and 2 retries


# A child process reading one URL with the default retry policy; prints the outcome as JSON.
_READ_IN_CHILD = r"""
import json, sys, pqsift
url, options = sys.argv[1], json.loads(sys.argv[2])
try:
    pqsift.scan(url, storage_options=options).to_table()
    print(json.dumps({"raised": None}))
except BaseException as error:
    print(json.dumps({"raised": [c.__name__ for c in type(error).__mro__], "message": str(error)}))
"""


@pytest.mark.parametrize("failure", ["500 forever", "closed port"])
def test_permanent_failure_with_the_default_retry_policy_ends(
    failure: str, s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded
) -> None:
    """With the default retry policy (object_store: 10 retries, 3 minutes at most) a store
    that always answers 500, or a port nothing listens on, ends in a pqsift error naming
    the URL. Run in a child process, killed after 5 minutes: a hang fails the test."""
    key = f"default-policy-{uuid.uuid4().hex[:8]}/part-000.parquet"
    s3_emulator.upload_file(peers.local / PEER_FILES[0], peers.bucket, key)
    url = f"s3://{peers.bucket}/{key}"
    options = _options(s3, aws_secret_access_key=SECRET)
    if failure == "500 forever":
        s3.inject("500", count=100_000, methods=("GET", "HEAD"), path_contains=key.split("/")[0])
    else:
        options["aws_endpoint"] = f"http://127.0.0.1:{_closed_port()}"
    done = subprocess.run(
        [sys.executable, "-c", _READ_IN_CHILD, url, json.dumps(options)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["raised"] is not None and "PqsiftError" in outcome["raised"], outcome
    assert url in outcome["message"]
    _assert_no_secret(outcome["message"], done.stderr)


# ===========================================================================================
# Errors
# ===========================================================================================


def test_missing_object_is_a_storage_error_and_file_not_found(s3: LatencyProxy, peers: Uploaded) -> None:
    assert issubclass(pqsift.StorageError, pqsift.PqsiftIOError)
    assert issubclass(pqsift.StorageError, OSError) and issubclass(pqsift.StorageError, pqsift.PqsiftError)
    url = f"s3://{peers.bucket}/events/no-such-file.parquet"
    with pytest.raises(pqsift.StorageError) as info:
        pqsift.scan(url, storage_options=_options(s3, aws_secret_access_key=SECRET)).to_table()
    assert isinstance(info.value, FileNotFoundError)
    assert url in str(info.value)
    _assert_no_secret(*_error_texts(info.value))
    with pytest.raises(pqsift.StorageError) as inspected:
        pqsift.inspect(url, storage_options=_options(s3, aws_secret_access_key=SECRET))
    assert isinstance(inspected.value, FileNotFoundError) and url in str(inspected.value)


def test_a_prefix_with_nothing_below_is_not_found(s3: LatencyProxy, peers: Uploaded) -> None:
    """As a local directory that does not exist: no object and no prefix at the URL."""
    url = f"s3://{peers.bucket}/no-such-prefix/"
    with pytest.raises(pqsift.StorageError) as info:
        pqsift.scan(url, storage_options=s3.storage_options).to_table()
    assert isinstance(info.value, FileNotFoundError) and url.rstrip("/") in str(info.value)


def test_missing_bucket_is_a_storage_error(s3: LatencyProxy) -> None:
    url = f"s3://pqsift-no-such-bucket-{uuid.uuid4().hex[:8]}/data/x.parquet"
    with pytest.raises(pqsift.StorageError) as info:
        pqsift.scan(url, storage_options=_options(s3, aws_secret_access_key=SECRET)).to_table()
    assert url in str(info.value)
    _assert_no_secret(*_error_texts(info.value))


def test_unreachable_endpoint_is_a_storage_error(s3: LatencyProxy, peers: Uploaded) -> None:
    """A port nothing listens on: connections are refused; with ``max_retries=1`` the
    error comes at once and names the URL."""
    url = peers.url_of(PEER_FILES[0])
    options = _options(
        s3, aws_endpoint=f"http://127.0.0.1:{_closed_port()}", max_retries="1", aws_secret_access_key=SECRET
    )
    started = time.perf_counter()
    with pytest.raises(pqsift.StorageError) as info:
        pqsift.scan(url, storage_options=options).to_table()
    assert time.perf_counter() - started < 30
    assert url in str(info.value)
    assert not isinstance(info.value, FileNotFoundError)
    _assert_no_secret(*_error_texts(info.value))


def test_unknown_scheme_is_a_pqsift_error_naming_the_url(s3: LatencyProxy) -> None:
    url = "ftp://x/y"
    with pytest.raises(pqsift.PqsiftError) as info:
        pqsift.scan(url, storage_options=s3.storage_options).to_table()
    assert url in str(info.value)


def test_an_object_that_is_not_parquet_is_a_corrupt_file(
    s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded
) -> None:
    key = f"junk-{uuid.uuid4().hex[:8]}/not-parquet.parquet"
    s3_emulator.put_object(peers.bucket, key, b"this is not a parquet file at all" * 10)
    url = f"s3://{peers.bucket}/{key}"
    with pytest.raises(pqsift.CorruptFileError) as info:
        pqsift.scan(url, storage_options=_options(s3, aws_secret_access_key=SECRET)).to_table()
    assert url in str(info.value)
    _assert_no_secret(*_error_texts(info.value))


def test_the_secret_is_in_no_plan_repr_or_metrics(s3: LatencyProxy, peers: Uploaded) -> None:
    options = _options(s3, aws_secret_access_key=SECRET)
    scan = pqsift.scan(peers.url, columns=["id"], filter="id < 100", storage_options=options)
    plan = scan.plan()
    scan.to_table()
    texts = [scan.explain(), plan.explain(), repr(scan), repr(plan), str(scan.metrics), repr(scan.files)]
    _assert_no_secret(*texts)
    assert peers.url_of(PEER_FILES[0]) in scan.explain()
    _assert_no_secret(json.dumps(pqsift.inspect(peers.url_of(PEER_FILES[0]), storage_options=options)))


# ===========================================================================================
# Hive-partitioned tables
# ===========================================================================================

HIVE_DAYS = ["2026-01-01", "2026-01-02", "2026-01-03"]
# Partition value -> its directory name, escaped as Spark escapes it ('=', '/', '%' are;
# spaces and non-ASCII letters are not).
HIVE_KINDS = {"view": "view", "a b": "a b", "c=d": "c%3Dd", "x/y": "x%2Fy", "ünï": "ünï", "50%": "50%25"}


def write_hive_table(root: Path) -> Path:
    """At ``root``: ``day=…/kind=…/part-00000.parquet`` (18 partitions, 20 rows each), with what writers
    leave beside the data and readers must ignore: ``_SUCCESS``, hidden ``.crc`` files,
    ``_temporary/``, a hidden staging directory and a ``._COPYING_`` file — junk bytes
    that fail any read that does not skip them."""
    next_id = 0
    for day in HIVE_DAYS:
        for kind, directory in HIVE_KINDS.items():
            folder = root / f"day={day}" / f"kind={directory}"
            folder.mkdir(parents=True)
            ids = list(range(next_id, next_id + 20))
            next_id += 20
            table = pa.table(
                {
                    "id": pa.array(ids, pa.int64()),
                    "amount": pa.array([None if i % 9 == 0 else (i * 37 % 100) + 0.5 for i in ids], pa.float64()),
                    "note": pa.array([f"{kind} #{i}" for i in ids]),
                }
            )
            pq.write_table(table, folder / "part-00000.parquet", row_group_size=10)
            # Hadoop's local file system would check part-00000.parquet against its own
            # `.part-00000.parquet.crc`: the junk checksum is of a file that is not there.
            (folder / ".part-00009.parquet.crc").write_bytes(b"crc junk")
    (root / "_SUCCESS").write_bytes(b"")
    _mkdir(root / "_temporary" / "0")
    (root / "_temporary" / "0" / "part-99999.parquet").write_bytes(b"half-written junk")
    _mkdir(root / ".spark-staging")
    (root / ".spark-staging" / "part-99998.parquet").write_bytes(b"staging junk")
    (root / f"day={HIVE_DAYS[0]}" / "kind=view" / "part-00001.parquet._COPYING_").write_bytes(b"copy junk")
    return root


@pytest.fixture(scope="module")
def hive(s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory) -> Uploaded:
    """The Hive table of :func:`write_hive_table`, in its own bucket."""
    root = write_hive_table(tmp_path_factory.mktemp("hive") / "events")
    return _upload(s3_emulator, root, "warehouse/events")


HIVE_FILTERS = [
    None,
    "day = DATE '2026-01-02'",
    "kind = 'c=d' OR kind = 'x/y' OR kind = '50%'",
    "day > DATE '2026-01-01' AND kind IN ('a b', 'ünï') AND amount > 40",
    "note LIKE 'view%' AND amount IS NOT NULL",
]


@pytest.mark.parametrize("where", HIVE_FILTERS)
def test_hive_table_reads_as_locally(where: str | None, s3: LatencyProxy, hive: Uploaded) -> None:
    """The same rows, partition columns (typed as Spark infers them) and partition pruning
    as the local scan; no object of a pruned partition is requested but the footer that
    gives the table's schema; the junk is never read (it would fail the scan)."""
    local = pqsift.scan(hive.local, filter=where)
    expected = local.to_table()
    scan = pqsift.scan(hive.url, filter=where, storage_options=s3.storage_options)
    got = scan.to_table()
    _assert_same_table(got, expected, f"hive where {where}")
    assert scan.table_format == local.table_format == "hive"
    assert scan.partition_schema == local.partition_schema == [("day", "date"), ("kind", "string")]
    relative = [Path(f).relative_to(hive.local).as_posix() for f in local.files]
    assert len(relative) == len(HIVE_DAYS) * len(HIVE_KINDS)
    _assert_files_are(scan.files, hive.bucket, [hive.key(r) for r in relative])
    for metric in ("files_total", "files_pruned", "files_pruned_partition", "row_groups_pruned_statistics", "rows_out"):
        assert scan.metrics[metric] == local.metrics[metric], metric
    pruned = {Path(f.path).relative_to(hive.local).as_posix() for f in local.plan().files if f.skipped}
    # Of a pruned partition's objects only the first file's footer is read: the table's
    # schema (the filter's types) is the first file's, read cold (an empty footer cache).
    gets = _object_gets(s3)
    read_pruned = [r.key for r in gets if r.key in {hive.key(r) for r in pruned}]
    assert len(read_pruned) <= 1, f"objects of pruned partitions were requested: {read_pruned}"
    assert all(r.key.endswith(".parquet") for r in _object_gets(s3)), "junk was requested"
    if where is not None and "note" not in where:
        assert scan.metrics["files_pruned_partition"] > 0
    _assert_store_metrics_agree(scan, s3)


def test_hive_partition_values_are_decoded(s3: LatencyProxy, hive: Uploaded) -> None:
    """Independently of the local scan: every (id, day, kind) written, the escaped
    directory names decoded (``c%3Dd`` is ``c=d``, ``50%25`` is ``50%``)."""
    got = pqsift.scan(hive.url, columns=["id", "day", "kind"], storage_options=s3.storage_options).to_table()
    written = []
    next_id = 0
    for day in HIVE_DAYS:
        for kind in HIVE_KINDS:
            written += [(i, day, kind) for i in range(next_id, next_id + 20)]
            next_id += 20
    rows = [(r["id"], r["day"].isoformat(), r["kind"]) for r in got.to_pylist()]
    assert sorted(rows) == sorted(written)


# ===========================================================================================
# Delta tables
# ===========================================================================================

DELTA_TABLES = [
    "golden/dv-with-columnmapping/delta",  # deletion vectors, column mapping, partitions, checkpoint
    "golden/multi-part-checkpoint/delta",  # a checkpoint in parts
    "golden/v2-checkpoint-json/delta",  # a v2 checkpoint with _sidecars/
    "golden/data-reader-escaped-chars/delta",  # keys with '+' and '%25'
    "golden/hive/delta/deltatbl-special-chars-in-partition-column",  # keys with ' ', '+', '%'
    "golden/time-travel-partition-changes-b/delta",  # repartitioned at version 1
    "tables/table-with-dv-small",  # 10 rows, 2 deleted by a deletion vector
    "tables/basic_partitioned",  # a null partition value
]

DELTA_FILTERS = [
    ("golden/dv-with-columnmapping/delta", "part = 0 AND col1 > 5"),
    ("golden/hive/delta/deltatbl-special-chars-in-partition-column", "c2 = '+ =%0'"),
    ("golden/time-travel-partition-changes-b/delta", "id >= 3 AND part2 = 1"),
    ("tables/basic_partitioned", "letter IS NULL OR number > 4"),
]

DELTA_VERSIONS = [
    ("golden/dv-with-columnmapping/delta", 4),  # before the checkpoint: commits only
    ("golden/dv-with-columnmapping/delta", 12),  # the checkpoint at 10, then commits
    ("golden/time-travel-partition-changes-b/delta", 0),
    ("tables/table-with-dv-small", 0),  # before the deletion vector
]


@pytest.fixture(scope="module")
def delta_tables(s3_emulator: S3Emulator) -> dict[str, Uploaded]:
    """Each table of DELTA_TABLES, uploaded whole (log, data, deletion vectors, junk)."""
    bucket = s3_emulator.new_bucket("delta")
    return {
        relative: _upload(s3_emulator, DELTA_TESTING / relative, f"lake/{relative.replace('/', '-')}", bucket)
        for relative in DELTA_TABLES
    }


def _assert_delta_scan_as_local(scan: pqsift.Scan, local: pqsift.Scan, table: Uploaded, what: str) -> None:
    _assert_same_table(scan.to_table(), local.to_table(), what)
    assert scan.table_format == "delta"
    assert scan.table_version == local.table_version
    assert scan.partition_schema == local.partition_schema
    _assert_files_are(
        scan.files, table.bucket, [table.key(Path(f).relative_to(table.local).as_posix()) for f in local.files]
    )
    for metric in (
        "delta_version",
        "delta_active_files",
        "rows_deleted",
        "files_pruned",
        "files_pruned_partition",
        "files_pruned_log_stats",
    ):
        assert scan.metrics[metric] == local.metrics[metric], f"{what}: {metric}"


@pytest.mark.parametrize("relative", DELTA_TABLES)
def test_delta_table_reads_as_locally(relative: str, s3: LatencyProxy, delta_tables: dict[str, Uploaded]) -> None:
    table = delta_tables[relative]
    scan = pqsift.scan(table.root_url, storage_options=s3.storage_options)
    _assert_delta_scan_as_local(scan, pqsift.scan(str(table.local)), table, relative)
    _assert_store_metrics_agree(scan, s3, check_bytes=False)


@pytest.mark.parametrize(("relative", "where"), DELTA_FILTERS)
def test_delta_table_filtered_reads_as_locally(
    relative: str, where: str, s3: LatencyProxy, delta_tables: dict[str, Uploaded]
) -> None:
    table = delta_tables[relative]
    scan = pqsift.scan(table.root_url, filter=where, storage_options=s3.storage_options)
    local = pqsift.scan(str(table.local), filter=where)
    _assert_delta_scan_as_local(scan, local, table, f"{relative} where {where}")


@pytest.mark.parametrize(
    ("relative", "version"), DELTA_VERSIONS, ids=[f"{relative}@{version}" for relative, version in DELTA_VERSIONS]
)
def test_delta_time_travel_reads_as_locally(
    relative: str, version: int, s3: LatencyProxy, delta_tables: dict[str, Uploaded]
) -> None:
    table = delta_tables[relative]
    scan = pqsift.scan(table.root_url, version=version, storage_options=s3.storage_options)
    local = pqsift.scan(str(table.local), version=version)
    assert local.table_version == version
    _assert_delta_scan_as_local(scan, local, table, f"{relative}@{version}")


def test_delta_timestamp_time_travel(s3: LatencyProxy, delta_tables: dict[str, Uploaded]) -> None:
    """A commit's time on S3 is its object's LastModified (the upload) unless the commit
    has an in-commit timestamp: a far-future timestamp is the latest version, one before
    the upload a TableError naming the table's URL."""
    table = delta_tables["tables/table-with-dv-small"]
    latest = pqsift.scan(table.root_url, timestamp="2100-01-01 00:00:00", storage_options=s3.storage_options)
    assert latest.to_table().num_rows == 8 and latest.table_version == 1
    with pytest.raises(pqsift.TableError) as info:
        pqsift.scan(table.root_url, timestamp="2000-01-01 00:00:00", storage_options=s3.storage_options).to_table()
    assert table.root_url in str(info.value)


def test_delta_version_beyond_the_log_names_the_url(s3: LatencyProxy, delta_tables: dict[str, Uploaded]) -> None:
    table = delta_tables["tables/table-with-dv-small"]
    with pytest.raises(pqsift.TableError) as info:
        pqsift.scan(table.root_url, version=7, storage_options=s3.storage_options).to_table()
    assert table.root_url in str(info.value)


# ===========================================================================================
# CLI and inspect
# ===========================================================================================


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m pqsift ARGS`` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "pqsift", *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )


def _cli_options(options: dict[str, str]) -> list[str]:
    return [arg for key, value in options.items() for arg in ("--storage-option", f"{key}={value}")]


def _without_path(info: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in info.items() if k != "path"}


def test_inspect_an_object_as_a_local_file(s3: LatencyProxy, peers: Uploaded) -> None:
    url = peers.url_of(PEER_FILES[0])
    info = pqsift.inspect(url, storage_options=s3.storage_options)
    local = pqsift.inspect(peers.local / PEER_FILES[0])
    assert info["path"] == url
    assert _without_path(info) == _without_path(local)
    assert info["file_size"] == (peers.local / PEER_FILES[0]).stat().st_size


def test_cli_inspect_and_scan_an_object(s3: LatencyProxy, peers: Uploaded, tmp_path: Path) -> None:
    url = peers.url_of(PEER_FILES[0])
    options = _cli_options(s3.storage_options)
    inspected = _cli("inspect", url, "--json", *options)
    assert inspected.returncode == 0, inspected.stderr
    # Through JSON both ways: the CLI prints lists where the API gives tuples.
    local = json.loads(json.dumps(pqsift.inspect(peers.local / PEER_FILES[0])))
    assert _without_path(json.loads(inspected.stdout)) == _without_path(local)

    shape = SHAPES_BY_NAME["selective, text projected"]
    out = tmp_path / "out.parquet"
    scanned = _cli(
        "scan", peers.url, "--filter", shape.where, "--columns", ",".join(shape.columns), "--output", out, *options
    )
    assert scanned.returncode == 0, scanned.stderr
    _assert_same_table(pq.read_table(out).sort_by("id"), _pyarrow_rows(peers.local, shape).sort_by("id"), "CLI scan")

    explained = _cli("scan", peers.url, "--filter", f"id = {POINT}", "--explain", *options)
    assert explained.returncode == 0, explained.stderr
    assert url in explained.stdout and "bloom filter" in explained.stdout


def test_cli_errors_name_the_url_and_hide_the_secret(s3: LatencyProxy, peers: Uploaded) -> None:
    url = f"s3://{peers.bucket}/events/missing.parquet"
    for command in ("scan", "inspect"):
        result = _cli(command, url, *_cli_options(_options(s3, aws_secret_access_key=SECRET)))
        assert result.returncode == 1, (command, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("pqsift: error: ") and url in lines[0], result.stderr
        _assert_no_secret(result.stdout, result.stderr)


# ===========================================================================================
# Keys with spaces, '=', '+', '%' and non-ASCII letters
# ===========================================================================================

# Keys a URL can name as they are (no '%': in a URL it would be read as an escape).
ODD_KEYS = [
    "odd keys/with space/part 0.parquet",
    "odd keys/x=a b/y=ünï/part-1.parquet",
    "odd keys/ünïcödé 名前/part+2.parquet",
    "odd keys/k=v=w/part-3.parquet",
]
# Keys holding '%' (a Hive writer's escapes), reached by listing their prefix.
PERCENT_KEYS = ["odd keys/p=100%25/part-4.parquet", "odd keys/q=a%2Fb c/part-5.parquet"]


@pytest.fixture(scope="module")
def odd(s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, pa.Table]]:
    """A file of distinct rows under each odd key; returns the bucket and key -> rows."""
    root = tmp_path_factory.mktemp("odd")
    bucket = s3_emulator.new_bucket("odd")
    tables = {}
    for i, key in enumerate(ODD_KEYS + PERCENT_KEYS):
        table = pa.table({"id": pa.array(range(i * 100, i * 100 + 50), pa.int64()), "key": pa.array([key] * 50)})
        local = root / f"{i}.parquet"
        pq.write_table(table, local, row_group_size=20)
        s3_emulator.upload_file(local, bucket, key)
        tables[key] = pq.read_table(local)
    return bucket, tables


@pytest.mark.parametrize("key", ODD_KEYS)
def test_odd_keys_read_by_url(key: str, s3: LatencyProxy, odd: tuple[str, dict[str, pa.Table]]) -> None:
    bucket, tables = odd
    url = f"s3://{bucket}/{key}"
    scan = pqsift.scan(url, storage_options=s3.storage_options, partitioning=False)
    _assert_same_table(scan.to_table(), tables[key], key)
    _assert_files_are(scan.files, bucket, [key])
    # A small object is read whole by its footer read: one GET, no second for the pages.
    assert [r.key for r in _object_gets(s3)] == [key]


def test_odd_keys_listed_under_their_prefix(s3: LatencyProxy, odd: tuple[str, dict[str, pa.Table]]) -> None:
    """The prefix listed (without partition discovery: the directories do not form one
    table): every object, '%' keys included, read from its exact key."""
    bucket, tables = odd
    scan = pqsift.scan(f"s3://{bucket}/odd keys/", storage_options=s3.storage_options, partitioning=False)
    got = scan.to_table()
    _assert_same_table(got.sort_by("id"), pa.concat_tables(tables.values()).sort_by("id"), "odd keys listed")
    _assert_files_are(scan.files, bucket, tables)
    assert {r.key for r in _object_gets(s3)} == set(tables)


def test_listed_urls_read_back_the_same_objects(s3: LatencyProxy, odd: tuple[str, dict[str, pa.Table]]) -> None:
    """A URL from ``scan.files`` is a source again (as Spark tasks and the CLI use them),
    naming the same object — also for keys with '%' in them."""
    bucket, tables = odd
    listed = pqsift.scan(f"s3://{bucket}/odd keys/", storage_options=s3.storage_options, partitioning=False).files
    assert len(listed) == len(tables)
    for url in listed:
        rows = pqsift.scan(url, storage_options=s3.storage_options, partitioning=False).to_table()
        key = rows.column("key")[0].as_py()
        assert _same_object(url, bucket, key), (url, key)
        _assert_same_table(rows, tables[key], url)


def test_a_listing_of_more_than_a_thousand_keys_is_complete(
    s3: LatencyProxy, s3_emulator: S3Emulator, tmp_path: Path
) -> None:
    """ListObjectsV2 answers 1,000 keys a page: 1,001 ignored objects sort before the
    three files, which are all on the second page."""
    bucket = s3_emulator.new_bucket("pages")
    for i in range(1001):
        s3_emulator.put_object(bucket, f"big/_junk/{i:05d}", b"")
    for i in range(3):
        pq.write_table(pa.table({"id": [i]}), tmp_path / f"{i}.parquet")
        s3_emulator.upload_file(tmp_path / f"{i}.parquet", bucket, f"big/zz-part-{i}.parquet")
    scan = pqsift.scan(f"s3://{bucket}/big/", storage_options=s3.storage_options)
    assert sorted(scan.to_table().column("id").to_pylist()) == [0, 1, 2]
    _assert_files_are(scan.files, bucket, [f"big/zz-part-{i}.parquet" for i in range(3)])


# ===========================================================================================
# Spark
# ===========================================================================================


def _spark_rows(frame: Any) -> list[str]:
    return sorted(repr(tuple(row)) for row in frame.collect())


def test_spark_read_and_data_source_on_s3(spark: Any, s3: LatencyProxy, hive: Uploaded) -> None:
    """``pqsift.spark.read`` on the Hive table's URL (partition directories with '%'
    escapes, so the tasks reopen keys holding '%') and the data source with the option
    ``storage_options``: the rows and schema of the same reads of the local copy, which
    are Spark's own (tests/test_tables.py)."""
    import pqsift.spark

    options = s3.storage_options
    columns = ["id", "amount", "day", "kind"]
    where = "day >= DATE '2026-01-02' AND (amount > 20 OR kind = '50%')"
    metrics = pqsift.spark.ScanMetrics(spark)
    s3.reset()
    frame = pqsift.spark.read(spark, hive.url, columns, where, storage_options=options, metrics=metrics)
    local = pqsift.spark.read(spark, str(hive.local), columns, where)
    native = spark.read.parquet(str(hive.local)).filter(where).select(*columns)
    assert frame.schema == local.schema == native.schema
    assert _spark_rows(frame) == _spark_rows(local) == _spark_rows(native)
    # The driver's planning and the tasks' reads are counted (the schema probe is not).
    assert 0 < metrics.value["requests"] <= s3.snapshot()["requests"], (metrics.value, s3.snapshot())
    assert metrics.value["retries"] == 0 and metrics.value["bytes_requested"] > 0

    source = (
        spark.read.format("pqsift")
        .option("storage_options", json.dumps(options))
        .option("columns", ",".join(columns))
        .load(hive.url)
        .filter(where)
    )
    assert _spark_rows(source) == _spark_rows(native)


def test_spark_tasks_make_no_more_requests_than_one_scan(
    spark: Any, s3: LatencyProxy, s3_emulator: S3Emulator, peers: Uploaded
) -> None:
    """``pqsift.spark.read`` with every row group its own task, read in Spark's Python
    workers from the driver's plans: every request the proxy sees (the driver's planning,
    the output schema, all the tasks) is at most 1.05x those of one in-process scan of the
    same query. (When tasks planned their files again, 1.12-1.24x: each re-read a footer.)"""
    import pqsift.spark

    shape = SHAPES_BY_NAME["selective, text projected"]
    options = s3.storage_options
    copy = _fresh_copy(s3_emulator, peers, "one-scan")
    s3.reset()
    expected = pqsift.scan(copy.url, shape.columns, shape.where, storage_options=options).to_table()
    in_process = s3.snapshot()["requests"]
    copy = _fresh_copy(s3_emulator, peers, "spark-tasks")
    s3.reset()
    metrics = pqsift.spark.ScanMetrics(spark)
    frame = pqsift.spark.read(
        spark,
        copy.url,
        shape.columns,
        shape.where,
        storage_options=options,
        target_task_bytes=1,
        driver_read_bytes=0,
        metrics=metrics,
    )
    rows = frame.collect()
    in_tasks = s3.snapshot()["requests"]
    assert len(rows) == expected.num_rows > 0 and metrics.tasks > 1
    assert in_tasks <= 1.05 * in_process, (in_tasks, in_process)
    assert metrics.value["requests"] == in_tasks
    assert metrics.value["time_task_planning_s"] < 0.1 * metrics.tasks


def test_spark_reads_a_delta_table_on_s3(spark: Any, s3: LatencyProxy, delta_tables: dict[str, Uploaded]) -> None:
    """Deletion vectors applied in the tasks (8 of 10 rows), time travel, both entries."""
    import pqsift.spark

    table = delta_tables["tables/table-with-dv-small"]
    options = s3.storage_options
    frame = pqsift.spark.read(spark, table.root_url, storage_options=options)
    assert sorted(r.value for r in frame.collect()) == sorted(
        pqsift.scan(str(table.local)).to_table().column("value").to_pylist()
    )
    assert frame.count() == 8
    assert pqsift.spark.read(spark, table.root_url, version=0, storage_options=options).count() == 10

    def source() -> Any:
        return spark.read.format("pqsift").option("storage_options", json.dumps(options))

    assert source().load(table.root_url).count() == 8
    assert source().option("versionAsOf", "0").load(table.root_url).count() == 10
