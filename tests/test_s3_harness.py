"""Self-test of the local S3 harness (tests/s3_harness.py), with independent clients only:
pyarrow's S3FileSystem (the AWS C++ SDK over curl) and raw http.client, through the proxy."""

from __future__ import annotations

import http.client
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("moto.server", reason="moto[s3] is not installed (requirements-dev.txt)")

from s3_harness import (
    FAULT_KINDS,
    HOST,
    LatencyProxy,
    S3Emulator,
    list_keys_raw,
    s3_auth_header,
    s3_path,
)

# Relative paths as Hive and Delta writers make them: `=`, percent-encoded partition values
# (the `%` is literal in the key), `+`, spaces, non-ASCII, and a `_delta_log/`.
TREE = {
    "_delta_log/00000000000000000000.json": b'{"protocol":{"minReaderVersion":1}}\n',
    "_delta_log/00000000000000000001.checkpoint.parquet": bytes(range(256)) * 3,
    "x=a%20b/part-00000-0f1e2d3c.c000.snappy.parquet": b"PAR1" + b"\x00\x01" * 500 + b"PAR1",
    "x=100%25/y=1+2/part-00001.c000.snappy.parquet": b"second file",
    "z=%3A%2F%3D/with space/file name.bin": b"\xff" * 70,
    "unicod\u00e9 \u00fc/\u00e7\u00f8d\u00e9.bin": "\u00e9".encode() * 11,
    "empty.bin": b"",
}


def _raw(proxy: LatencyProxy, conn: http.client.HTTPConnection, method: str, path: str, **headers: str):
    headers["Authorization"] = s3_auth_header()
    body = headers.pop("body", None)
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    return resp, resp.read()


def _write_tree(root: Path) -> None:
    for rel, data in TREE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def test_everything_is_on_loopback(s3: LatencyProxy, s3_emulator: S3Emulator) -> None:
    assert s3_emulator.host == HOST and s3_emulator.port > 0
    assert s3_emulator._server._server.socket.getsockname()[0] == HOST
    assert s3.host == HOST and s3.port > 0 and s3.port != s3_emulator.port
    assert s3.endpoint == f"http://{HOST}:{s3.port}"
    assert s3.storage_options == {
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
        "aws_region": "us-east-1",
        "aws_endpoint": s3.endpoint,
        "aws_allow_http": "true",
    }
    assert s3.env["AWS_ENDPOINT_URL"] == s3.endpoint
    assert s3.snapshot()["requests"] == 0


def test_bucket_names_need_three_characters(s3_emulator: S3Emulator) -> None:
    with pytest.raises(ValueError):
        s3_emulator.create_bucket("ab")
    assert s3_emulator.create_bucket("abc") == "abc"


def test_upload_dir_keys_round_trip_and_bytes_read_back_equal(
    s3: LatencyProxy, s3_emulator: S3Emulator, tmp_path: Path
) -> None:
    _write_tree(tmp_path)
    bucket = s3_emulator.new_bucket()
    keys = s3_emulator.upload_dir(tmp_path, bucket, "tables/t1")
    expected = sorted(f"tables/t1/{rel}" for rel in TREE)
    assert sorted(keys) == expected
    assert s3.snapshot()["requests"] == 0  # uploads bypass the proxy

    # a raw ListObjectsV2 through the proxy: moto stores the keys literally
    assert sorted(list_keys_raw(s3.host, s3.port, bucket, "tables/")) == expected
    # pyarrow through the proxy: same listing, same bytes
    fs = s3.filesystem()
    from pyarrow.fs import FileSelector, FileType

    infos = fs.get_file_info(FileSelector(f"{bucket}/tables/t1", recursive=True))
    files = sorted(i.path for i in infos if i.type == FileType.File)
    assert files == [f"{bucket}/{k}" for k in expected]
    for rel, data in TREE.items():
        with fs.open_input_file(f"{bucket}/tables/t1/{rel}") as f:
            assert f.read() == data, rel
    snap = s3.snapshot()
    assert snap["by_method"]["GET"] >= len(TREE) - 1  # the empty object may need no GET
    read = {r.key for r in s3.log() if r.method == "GET" and r.key}
    assert read <= set(expected) and len(read) >= len(TREE) - 1
    assert snap["in_flight"] == 0


def test_upload_through_the_proxy_chunked_put(s3: LatencyProxy, s3_emulator: S3Emulator) -> None:
    # the AWS SDK sends PUTs with Transfer-Encoding: chunked, aws-chunked content and
    # Expect: 100-continue: the proxy de-chunks, answers 100 itself and forwards the rest
    bucket = s3_emulator.new_bucket()
    fs = s3.filesystem(allow_delayed_open=True)
    payload = bytes(range(256)) * 4000
    with fs.open_output_stream(f"{bucket}/x=a%20b/up load.bin", compression=None) as out:
        out.write(payload)
    assert s3_emulator.get_object(bucket, "x=a%20b/up load.bin") == payload
    assert s3_emulator.list_keys(bucket) == ["x=a%20b/up load.bin"]
    snap = s3.snapshot()
    assert snap["by_method"] == {"PUT": 1} and snap["request_bytes"] >= len(payload)


def test_parquet_read_through_proxy_equals_local(
    s3: LatencyProxy, s3_emulator: S3Emulator, tmp_path: Path
) -> None:
    table = pa.table(
        {
            "id": pa.array(range(20_000), pa.int64()),
            "name": pa.array([f"row {i}" for i in range(20_000)]),
            "value": pa.array([i * 0.5 for i in range(20_000)]),
        }
    )
    local = tmp_path / "data.parquet"
    pq.write_table(table, local, row_group_size=5_000)
    bucket = s3_emulator.new_bucket()
    s3_emulator.upload_file(local, bucket, "p=1%2F2/data.parquet")

    remote = pq.read_table(f"{bucket}/p=1%2F2/data.parquet", filesystem=s3.filesystem())
    assert remote.equals(pq.read_table(local))
    snap = s3.snapshot()
    assert snap["ranged_gets"] >= 1
    assert all(r.status in (200, 206) for r in s3.log())
    assert snap["response_bytes"] >= local.stat().st_size * 0.9


def test_delay_is_added_to_every_request(s3: LatencyProxy, s3_emulator: S3Emulator) -> None:
    bucket = s3_emulator.new_bucket()
    s3_emulator.put_object(bucket, "k", b"abc")
    fs = s3.filesystem()
    s3.delay = 0.15
    start = time.monotonic()
    assert fs.get_file_info(f"{bucket}/k").size == 3
    assert time.monotonic() - start >= 0.15
    (record,) = s3.log()
    assert record.method == "HEAD" and record.duration >= 0.15


def test_ranged_get_counts(s3: LatencyProxy, s3_emulator: S3Emulator) -> None:
    bucket = s3_emulator.new_bucket()
    data = bytes(range(256)) * 40
    s3_emulator.put_object(bucket, "dir/obj.bin", data)
    fs = s3.filesystem()
    with fs.open_input_file(f"{bucket}/dir/obj.bin") as f:  # one HEAD for the size
        assert s3.snapshot()["by_method"] == {"HEAD": 1}
        s3.reset()
        assert f.read_at(10, 5) == data[5:15]
        snap = s3.snapshot()
        assert snap["by_method"] == {"GET": 1}
        assert snap["ranged_gets"] == 1 and snap["response_bytes"] == 10
        assert snap["by_status"] == {206: 1}
        (record,) = s3.log()
        assert record.range == "bytes=5-14" and record.path == f"/{bucket}/dir/obj.bin"
        assert (record.bucket, record.key) == (bucket, "dir/obj.bin")
        assert f.read_at(100, 1000) == data[1000:1100]
    snap = s3.snapshot()
    assert snap["by_method"] == {"GET": 2} and snap["response_bytes"] == 110


def test_keep_alive_connection_survives_every_kind_of_response(
    s3: LatencyProxy, s3_emulator: S3Emulator
) -> None:
    bucket = s3_emulator.new_bucket()
    data = b"0123456789" * 10
    s3_emulator.put_object(bucket, "a=1/b c%2F.bin", data)
    path = s3_path(bucket, "a=1/b c%2F.bin")
    conn = http.client.HTTPConnection(s3.host, s3.port, timeout=10)
    try:
        resp, body = _raw(s3, conn, "HEAD", path)
        assert (resp.status, body, resp.getheader("Content-Length")) == (200, b"", "100")
        etag = resp.getheader("ETag")
        assert etag and etag.startswith('"')
        resp, body = _raw(s3, conn, "GET", path, Range="bytes=-5")  # suffix range
        assert (resp.status, body, resp.getheader("Content-Range")) == (206, b"56789", "bytes 95-99/100")
        resp, body = _raw(s3, conn, "HEAD", path, Range="bytes=0-3")
        assert (resp.status, body, resp.getheader("Content-Length")) == (206, b"", "4")
        resp, body = _raw(s3, conn, "GET", path, Range="bytes=100-")
        assert resp.status == 416 and b"InvalidRange" in body
        resp, body = _raw(s3, conn, "GET", s3_path(bucket, "missing"))
        assert resp.status == 404 and b"NoSuchKey" in body
        resp, body = _raw(s3, conn, "HEAD", s3_path(bucket, "missing"))
        assert (resp.status, body) == (404, b"")
        s3.inject("500")
        resp, body = _raw(s3, conn, "GET", path)
        assert resp.status == 500 and b"<Code>InternalError</Code>" in body
        s3.inject(503, methods=("HEAD",))
        resp, body = _raw(s3, conn, "HEAD", path)
        assert (resp.status, body) == (503, b"")
        s3.inject("503")
        resp, body = _raw(s3, conn, "GET", path)
        assert resp.status == 503 and b"<Code>SlowDown</Code>" in body
        resp, body = _raw(s3, conn, "PUT", s3_path(bucket, "new key"), body=b"xyz")
        assert resp.status == 200
        resp, body = _raw(s3, conn, "GET", s3_path(bucket, "new key"))
        assert (resp.status, body) == (200, b"xyz")
    finally:
        conn.close()
    snap = s3.snapshot()
    assert snap["connections"] == 1
    assert {r.connection for r in s3.log()} == {1}
    assert s3.log()[0].key == "a=1/b c%2F.bin" and s3.log()[0].path == path
    assert snap["requests"] == 11 and snap["faults_injected"] == 3
    assert snap["by_fault"] == {"500": 1, "503": 2}


@pytest.mark.parametrize("kind", ["drop", "reset", "truncate"])
def test_broken_connections_raw(kind: str, s3: LatencyProxy, s3_emulator: S3Emulator) -> None:
    bucket = s3_emulator.new_bucket()
    s3_emulator.put_object(bucket, "k", b"x" * 1000)
    s3.inject(kind)
    conn = http.client.HTTPConnection(s3.host, s3.port, timeout=10)
    with pytest.raises((http.client.HTTPException, ConnectionError)):
        resp, _ = _raw(s3, conn, "GET", s3_path(bucket, "k"))
    conn.close()
    resp, body = _raw(s3, conn, "GET", s3_path(bucket, "k"))  # reconnects
    assert (resp.status, len(body)) == (200, 1000)
    conn.close()
    snap = s3.snapshot()
    assert snap["connections"] == 2 and snap["by_fault"] == {kind: 1}
    first = s3.log()[0]
    assert first.fault == kind
    assert first.response_bytes == (500 if kind == "truncate" else 0)


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_fault_seen_by_client_without_retries(kind: str, s3: LatencyProxy, s3_emulator: S3Emulator) -> None:
    bucket = s3_emulator.new_bucket()
    s3_emulator.put_object(bucket, "k", bytes(10_000))
    fs = s3.filesystem(max_attempts=1)
    with fs.open_input_file(f"{bucket}/k") as f:
        # curl itself re-sends a request once when a *reused* connection dies before any
        # response byte: two drops/resets are needed for the error to surface
        s3.inject(kind, count=2 if kind in ("drop", "reset") else 1, methods="GET")
        with pytest.raises(OSError) as err:
            f.read_at(5_000, 0)
    message = str(err.value)
    expected = {  # the AWS SDK's error categories
        "500": "INTERNAL_FAILURE",
        "503": ("SLOW_DOWN", "SERVICE_UNAVAILABLE"),  # the SDK names a 503 either way
        "drop": "NETWORK_CONNECTION",  # curl: "Server returned nothing"
        "reset": "NETWORK_CONNECTION",  # curl: "Failure when receiving data from the peer"
        "truncate": "NETWORK_CONNECTION",  # curl: "Transferred a partial file"
    }[kind]
    assert any(name in message for name in ((expected,) if isinstance(expected, str) else expected)), message
    snap = s3.snapshot()
    assert snap["by_method"] == {"HEAD": 1, "GET": 2 if kind in ("drop", "reset") else 1}
    assert s3.pending_faults() == 0


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_fault_retried_by_client_is_counted(kind: str, s3: LatencyProxy, s3_emulator: S3Emulator) -> None:
    bucket = s3_emulator.new_bucket()
    data = bytes(range(256)) * 40
    s3_emulator.put_object(bucket, "k", data)
    fs = s3.filesystem()  # pyarrow's default: AwsStandardS3RetryStrategy(max_attempts=3)
    with fs.open_input_file(f"{bucket}/k") as f:
        s3.inject(kind, methods="GET")
        assert f.read_at(5_000, 100) == data[100:5_100]
    snap = s3.snapshot()
    assert snap["by_method"] == {"HEAD": 1, "GET": 2}  # the failed GET and its retry
    assert snap["by_fault"] == {kind: 1}
    gets = [r for r in s3.log() if r.method == "GET"]
    assert gets[0].fault == kind and gets[1].fault is None and gets[1].status == 206
    assert gets[0].range == gets[1].range == "bytes=100-5099"


def test_fault_filters_by_method_and_path(s3: LatencyProxy, s3_emulator: S3Emulator) -> None:
    bucket = s3_emulator.new_bucket()
    s3_emulator.put_object(bucket, "good", b"g" * 2000)
    s3_emulator.put_object(bucket, "x=bad%20key", b"b" * 2000)
    s3.inject("500", count=5, methods="GET", path_contains="bad")
    conn = http.client.HTTPConnection(s3.host, s3.port, timeout=10)
    try:
        assert _raw(s3, conn, "GET", s3_path(bucket, "good"))[0].status == 200
        assert _raw(s3, conn, "HEAD", s3_path(bucket, "x=bad%20key"))[0].status == 200
        assert _raw(s3, conn, "GET", s3_path(bucket, "x=bad%20key"))[0].status == 500
    finally:
        conn.close()
    assert s3.pending_faults() == 4
    s3.clear_faults()
    assert s3.pending_faults() == 0
    with pytest.raises(ValueError):
        s3.inject("404")


def test_concurrency_is_recorded(s3: LatencyProxy, s3_emulator: S3Emulator) -> None:
    bucket = s3_emulator.new_bucket()
    data = bytes(range(256)) * 100
    s3_emulator.put_object(bucket, "k", data)
    fs = s3.filesystem()
    size = fs.get_file_info(f"{bucket}/k").size
    s3.reset()
    s3.delay = 0.2
    results: dict[int, bytes] = {}

    def read(i: int) -> None:
        with fs.open_input_file(f"{bucket}/k") as f:
            results[i] = f.read_at(1000, i * 1000)

    threads = [threading.Thread(target=read, args=(i,)) for i in range(4)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    assert size == len(data)
    assert all(results[i] == data[i * 1000 : (i + 1) * 1000] for i in range(4))
    snap = s3.snapshot()
    assert snap["max_in_flight"] > 1 and snap["in_flight"] == 0
    assert snap["connections"] > 1
    assert elapsed < 8 * 0.2  # 8 requests (HEAD + GET per thread), not run one at a time


def test_reset_and_close_connections(s3: LatencyProxy, s3_emulator: S3Emulator) -> None:
    bucket = s3_emulator.new_bucket()
    s3_emulator.put_object(bucket, "k", b"abc")
    conn = http.client.HTTPConnection(s3.host, s3.port, timeout=10)
    assert _raw(s3, conn, "GET", s3_path(bucket, "k"))[1] == b"abc"
    assert s3.snapshot()["requests"] == 1
    s3.reset()
    assert s3.snapshot() == {
        "requests": 0,
        "by_method": {},
        "by_status": {},
        "response_bytes": 0,
        "request_bytes": 0,
        "ranged_gets": 0,
        "max_in_flight": 0,
        "in_flight": 0,
        "connections": 0,
        "faults_injected": 0,
        "by_fault": {},
    }
    assert s3.log() == []
    assert s3.close_connections() == 1  # the idle keep-alive connection
    conn.close()
    assert _raw(s3, conn, "GET", s3_path(bucket, "k"))[1] == b"abc"
    conn.close()
    assert s3.snapshot()["connections"] == 1
