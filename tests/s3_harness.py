"""A local S3 for tests: moto's server, with a latency and fault-injecting proxy in front.

Everything listens on 127.0.0.1 with an ephemeral port, and nothing connects anywhere else.

    emulator = S3Emulator().start()          # moto, in-process (a thread)
    bucket = emulator.new_bucket()           # a fresh, uniquely named bucket
    emulator.upload_dir(local_table, bucket, "tables/t1")   # straight to moto: not counted
    proxy = LatencyProxy(emulator, delay=0.03).start()
    proxy.storage_options                    # object_store-style options, pointed at the proxy
    proxy.filesystem()                       # a pyarrow S3FileSystem, pointed at the proxy
    proxy.inject("503", count=2, methods=("GET",))
    proxy.snapshot()["by_method"]["GET"]
    proxy.stop(); emulator.stop()

The proxy forwards every request unchanged (method, raw target with its percent-encoding,
headers including Range and the signature, body) and speaks HTTP/1.1 keep-alive to its
clients. moto's server (werkzeug) closes every connection after one response, so the proxy
opens a new upstream connection per request; clients still see one persistent connection.

Counters are committed *before* the response is written, so a client that has its answer
can read `snapshot()` without racing the proxy's threads.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import os
import socket
import struct
import threading
import time
import uuid
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"
HOST = "127.0.0.1"

FAULT_KINDS = ("500", "503", "drop", "reset", "truncate")

# Hop-by-hop headers (RFC 9110 7.6.1) are the proxy's own business on each side; Content-Length
# is recomputed since bodies are buffered (and de-chunked); Expect is answered by the proxy.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "expect",
        "content-length",
    }
)

_ERROR_BODIES = {
    "500": (
        500,
        "Internal Server Error",
        "InternalError",
        "We encountered an internal error. Please try again.",
    ),
    "503": (503, "Slow Down", "SlowDown", "Please reduce your request rate."),
}


def moto_available() -> bool:
    """True if moto's server (and its Flask dependencies) can be imported."""
    try:
        import moto.server  # noqa: F401
    except ImportError:
        return False
    return True


def storage_options(endpoint: str) -> dict[str, str]:
    """object_store-style (`AmazonS3Builder` config keys) options for a local endpoint."""
    return {
        "aws_access_key_id": ACCESS_KEY,
        "aws_secret_access_key": SECRET_KEY,
        "aws_region": REGION,
        "aws_endpoint": endpoint,
        "aws_allow_http": "true",
    }


def environment(endpoint: str) -> dict[str, str]:
    """The same as environment variables, for clients configured from the environment
    (e.g. a CLI in a subprocess, or object_store's `AmazonS3Builder::from_env`)."""
    return {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ENDPOINT": endpoint,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ALLOW_HTTP": "true",
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def pyarrow_s3fs(endpoint: str, *, max_attempts: int | None = None, **kwargs: Any) -> Any:
    """A `pyarrow.fs.S3FileSystem` for a local http endpoint ("http://127.0.0.1:PORT").

    `max_attempts` sets pyarrow's AwsStandardS3RetryStrategy (its default is 3 attempts;
    1 means no retry). Other keyword arguments go to S3FileSystem unchanged.
    """
    import pyarrow.fs as pafs

    scheme, _, authority = endpoint.partition("://")
    options: dict[str, Any] = {
        "access_key": ACCESS_KEY,
        "secret_key": SECRET_KEY,
        "region": REGION,
        "scheme": scheme,
        "endpoint_override": authority.rstrip("/"),
        "request_timeout": 10,
        "connect_timeout": 5,
    }
    if max_attempts is not None:
        options["retry_strategy"] = pafs.AwsStandardS3RetryStrategy(max_attempts=max_attempts)
    options.update(kwargs)
    return pafs.S3FileSystem(**options)


def _quiet_werkzeug() -> None:
    # werkzeug logs one INFO line per request to stderr unless the logger has a level.
    logger = logging.getLogger("werkzeug")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)


# --------------------------------------------------------------------------------------------
# The emulator


class S3Emulator:
    """moto's S3 server, in-process, on 127.0.0.1 with an ephemeral port.

    Uploads go straight to moto (one PutObject per file, through pyarrow's S3 client), so a
    proxy in front counts none of them. moto's state is process-global: use `new_bucket()`
    for isolation between tests, or `reset()` to drop every bucket.
    """

    def __init__(self) -> None:
        self._server: Any = None
        self._fs: Any = None
        self.host = HOST
        self.port = 0

    # life cycle ---------------------------------------------------------------------------
    def start(self) -> S3Emulator:
        from moto.server import ThreadedMotoServer

        _quiet_werkzeug()
        server = ThreadedMotoServer(ip_address=HOST, port=0, verbose=False)
        server.start()
        self._server = server
        self.host, self.port = server.get_host_and_port()
        if self.host != HOST:  # pragma: no cover - a guard, not a case
            self.stop()
            raise RuntimeError(f"moto bound {self.host}, not {HOST}")
        return self

    def stop(self) -> None:
        self._fs = None
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> S3Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def endpoint(self) -> str:
        """moto's own URL (bypasses any proxy)."""
        return f"http://{self.host}:{self.port}"

    @property
    def storage_options(self) -> dict[str, str]:
        """object_store-style options pointed straight at moto (no proxy)."""
        return storage_options(self.endpoint)

    def filesystem(self, **kwargs: Any) -> Any:
        """A pyarrow S3FileSystem pointed straight at moto (no proxy)."""
        return pyarrow_s3fs(self.endpoint, **kwargs)

    def reset(self) -> None:
        """Drop every bucket and object (moto's /moto-api/reset)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            conn.request("POST", "/moto-api/reset", body=b"")
            resp = conn.getresponse()
            resp.read()
            if resp.status != 200:
                raise RuntimeError(f"moto reset failed: HTTP {resp.status}")
        finally:
            conn.close()

    # data ---------------------------------------------------------------------------------
    @property
    def _uploader(self) -> Any:
        # allow_delayed_open: one PutObject per file instead of a three-request multipart
        # upload (so ETags are plain MD5s, as for a normal PUT) and no directory markers.
        if self._fs is None:
            self._fs = self.filesystem(allow_bucket_creation=True, allow_delayed_open=True)
        return self._fs

    def create_bucket(self, name: str) -> str:
        """Create `name` if it does not exist (S3 names: 3-63 chars, lowercase)."""
        if not 3 <= len(name) <= 63:
            raise ValueError(f"S3 bucket names have 3 to 63 characters: {name!r}")
        self._uploader.create_dir(name)
        return name

    def new_bucket(self, prefix: str = "test") -> str:
        """Create a bucket with a fresh unique name and return the name."""
        return self.create_bucket(f"{prefix}-{uuid.uuid4().hex[:12]}".lower())

    def put_object(self, bucket: str, key: str, data: bytes) -> str:
        """Store `data` under exactly `key` (no normalisation) and return the key."""
        _check_key(key)
        with self._uploader.open_output_stream(f"{bucket}/{key}", compression=None) as out:
            out.write(data)
        return key

    def upload_file(self, local: str | os.PathLike[str], bucket: str, key: str) -> str:
        """Upload one local file under exactly `key`; returns the key."""
        return self.put_object(bucket, key, Path(local).read_bytes())

    def upload_dir(
        self,
        local: str | os.PathLike[str],
        bucket: str,
        prefix: str = "",
        *,
        verify: bool = True,
    ) -> list[str]:
        """Upload every file under `local` to `prefix/<relative path>` and return the keys.

        Keys are the relative paths verbatim, '/'-separated: `=`, `%`, spaces and `+` in Hive
        or Delta directory names (`x=a%20b/`, `_delta_log/`) are kept byte for byte. No
        directory-marker objects are created. With `verify`, a listing through a raw HTTP
        client (not the uploader's SDK) must return exactly these keys under the prefix.
        """
        root = Path(local)
        if not root.is_dir():
            raise NotADirectoryError(root)
        prefix = prefix.strip("/")
        keys = []
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).as_posix()
            key = f"{prefix}/{rel}" if prefix else rel
            self.put_object(bucket, key, path.read_bytes())
            keys.append(key)
        if verify:
            listed = self.list_keys(bucket, f"{prefix}/" if prefix else "")
            if sorted(listed) != sorted(keys):
                raise AssertionError(
                    f"keys did not round-trip through S3: uploaded {sorted(keys)}, listed {sorted(listed)}"
                )
        return keys

    def list_keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every key under `prefix`, from ListObjectsV2 over raw HTTP to moto (paginated)."""
        return list_keys_raw(self.host, self.port, bucket, prefix)

    def get_object(self, bucket: str, key: str) -> bytes:
        """The object's bytes, read straight from moto."""
        with self._uploader.open_input_stream(f"{bucket}/{key}", compression=None) as f:
            return f.read()


def _check_key(key: str) -> None:
    if not key or key.startswith("/") or "//" in key:
        raise ValueError(f"refusing an S3 key that a client may normalise: {key!r}")


# --------------------------------------------------------------------------------------------
# Raw S3 over http.client (independent of any SDK)

_S3_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def s3_auth_header() -> str:
    """A SigV4-shaped Authorization header. moto does not check signatures, but reads the
    credential scope to route a request to S3."""
    date = time.strftime("%Y%m%d", time.gmtime())
    return (
        f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{date}/{REGION}/s3/aws4_request, "
        "SignedHeaders=host, Signature=" + "0" * 64
    )


def s3_path(bucket: str, key: str = "") -> str:
    """A path-style request path with the key percent-encoded as S3 clients do."""
    return f"/{bucket}/{quote(key, safe='/~')}" if key else f"/{bucket}"


def list_keys_raw(host: str, port: int, bucket: str, prefix: str = "") -> list[str]:
    keys: list[str] = []
    token: str | None = None
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        while True:
            query = f"list-type=2&prefix={quote(prefix, safe='')}"
            if token:
                query += f"&continuation-token={quote(token, safe='')}"
            conn.request("GET", f"/{bucket}?{query}", headers={"Authorization": s3_auth_header()})
            resp = conn.getresponse()
            body = resp.read()
            if resp.status != 200:
                raise RuntimeError(f"ListObjectsV2 {bucket}/{prefix}: HTTP {resp.status}: {body[:300]!r}")
            doc = ET.fromstring(body)
            keys += [el.text or "" for el in doc.iter(f"{_S3_NS}Key")]
            truncated = doc.findtext(f"{_S3_NS}IsTruncated") == "true"
            token = doc.findtext(f"{_S3_NS}NextContinuationToken")
            if not truncated or not token:
                return keys
    finally:
        conn.close()


# --------------------------------------------------------------------------------------------
# The proxy


@dataclass
class RequestRecord:
    """One request as the proxy saw it."""

    method: str
    target: str  # the raw request target, path and query, exactly as the client sent it
    path: str  # the raw path (still percent-encoded), without the query
    query: str  # the raw query string ("" if none)
    bucket: str  # from the path-style path ("" for ListBuckets)
    key: str  # the object key, percent-decoded ("" for bucket-level requests)
    range: str | None  # the Range header, if any
    status: int | None  # the status sent to the client; None if the connection was dropped
    request_bytes: int  # body bytes received from the client
    response_bytes: int  # body bytes sent to the client (0 for HEAD)
    fault: str | None  # the injected fault, if any
    connection: int  # the proxy-side connection number (1, 2, ...): shows keep-alive reuse
    started: float  # time.monotonic() when the request had been read
    duration: float  # seconds until the response was ready to send (includes the delay)


@dataclass
class _Fault:
    kind: str
    remaining: int
    methods: frozenset[str] | None
    path_contains: str | None

    def matches(self, method: str, target: str) -> bool:
        if self.methods is not None and method not in self.methods:
            return False
        return self.path_contains is None or self.path_contains in target


class _Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        # in_flight is left alone: requests under way still finish and decrement it.
        self.requests = 0
        self.by_method: Counter[str] = Counter()
        self.by_status: Counter[int] = Counter()
        self.by_fault: Counter[str] = Counter()
        self.response_bytes = 0
        self.request_bytes = 0
        self.ranged_gets = 0
        self.max_in_flight = getattr(self, "in_flight", 0)
        self.in_flight = getattr(self, "in_flight", 0)
        self.connections = 0
        self.log: list[RequestRecord] = []


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(): a name lookup we neither need nor want.
        import socketserver

        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def __init__(self, proxy: LatencyProxy) -> None:
        self.proxy = proxy
        self.open_sockets: set[socket.socket] = set()
        self.reset_sockets: set[socket.socket] = set()
        self.sockets_lock = threading.Lock()
        super().__init__((HOST, 0), _ProxyHandler)

    def shutdown_request(self, request: Any) -> None:
        with self.sockets_lock:
            reset = request in self.reset_sockets
            self.reset_sockets.discard(request)
        if reset:  # close with SO_LINGER 0: an RST, not a FIN
            self.close_request(request)
        else:
            super().shutdown_request(request)


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every response carries a Content-Length
    server: _ProxyServer
    # idle keep-alive connections are closed by LatencyProxy.stop()/close_connections()
    timeout = None

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        stats = self.server.proxy._stats
        with stats.lock:
            stats.connections += 1
            self.connection_number = stats.connections
        with self.server.sockets_lock:
            self.server.open_sockets.add(self.connection)

    def finish(self) -> None:
        with self.server.sockets_lock:
            self.server.open_sockets.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size_line = self.rfile.readline(65537)
                size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)  # the CRLF after the chunk
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _proxy(self) -> None:
        proxy = self.server.proxy
        method = self.command
        target = self.path
        path, _, query = target.partition("?")
        bucket, _, raw_key = path.lstrip("/").partition("/")
        key = unquote(raw_key)
        body = self._read_body()
        has_length = "Content-Length" in self.headers or "chunked" in self.headers.get(
            "Transfer-Encoding", ""
        ).lower()
        started = time.monotonic()
        stats = proxy._stats
        with stats.lock:
            stats.requests += 1
            stats.by_method[method] += 1
            stats.request_bytes += len(body)
            if method == "GET" and self.headers.get("Range"):
                stats.ranged_gets += 1
            stats.in_flight += 1
            stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        fault = proxy._take_fault(method, target)
        finished = False

        def finish(status: int | None, sent: int) -> None:
            nonlocal finished
            finished = True
            with stats.lock:
                stats.in_flight -= 1
                stats.response_bytes += sent
                if status is not None:
                    stats.by_status[status] += 1
                if fault is not None:
                    stats.by_fault[fault] += 1
                stats.log.append(
                    RequestRecord(
                        method=method,
                        target=target,
                        path=path,
                        query=query,
                        bucket=bucket,
                        key=key,
                        range=self.headers.get("Range"),
                        status=status,
                        request_bytes=len(body),
                        response_bytes=sent,
                        fault=fault,
                        connection=self.connection_number,
                        started=started,
                        duration=time.monotonic() - started,
                    )
                )

        try:
            delay = proxy.delay
            if delay > 0:
                time.sleep(delay)

            if fault in ("drop", "reset"):
                finish(None, 0)
                self.close_connection = True
                if fault == "reset":
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    with self.server.sockets_lock:
                        self.server.reset_sockets.add(self.connection)
                else:
                    self.connection.shutdown(socket.SHUT_RDWR)
                return

            if fault in _ERROR_BODIES:
                status, reason, code, message = _ERROR_BODIES[fault]
                request_id = uuid.uuid4().hex[:16].upper()
                payload = (
                    '<?xml version="1.0" encoding="UTF-8"?>\n'
                    f"<Error><Code>{code}</Code><Message>{message}</Message>"
                    f"<RequestId>{request_id}</RequestId></Error>"
                ).encode()
                headers = [
                    ("Content-Type", "application/xml"),
                    ("x-amz-request-id", request_id),
                ]
                if fault == "503":
                    headers.append(("Retry-After", "0"))
                self._respond(status, reason, headers, payload, finish)
                return

            try:
                status, reason, headers, payload = self._forward(method, target, body, has_length)
            except OSError as exc:
                payload = f"<Error><Code>BadGateway</Code><Message>{exc}</Message></Error>".encode()
                self._respond(502, "Bad Gateway", [("Content-Type", "application/xml")], payload, finish)
                return

            if fault == "truncate" and method != "HEAD" and len(payload) > 0:
                # the full Content-Length, half the body, then a closed connection
                half = len(payload) // 2
                finish(status, half)
                self.close_connection = True
                self.send_response_only(status, reason)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload[:half])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                return

            self._respond(status, reason, headers, payload, finish)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
        finally:
            if not finished:
                finish(None, 0)

    def _forward(
        self, method: str, target: str, body: bytes, has_length: bool
    ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        proxy = self.server.proxy
        # moto's werkzeug server closes every connection after one response: one per request.
        conn = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=60)
        try:
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for name, value in self.headers.items():
                if name.lower() not in _HOP_BY_HOP:
                    conn.putheader(name, value)
            if body or has_length:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body if body else None)
            resp = conn.getresponse()
            payload = resp.read()  # http.client knows HEAD, 204 and 304 have no body
            headers = [(k, v) for k, v in resp.getheaders() if k.lower() not in _HOP_BY_HOP]
            if method == "HEAD" and resp.getheader("Content-Length") is not None:
                # HEAD: the length of what a GET would return; there is no body to measure
                headers.append(("Content-Length", resp.getheader("Content-Length")))
            return resp.status, resp.reason, headers, payload
        finally:
            conn.close()

    def _respond(
        self,
        status: int,
        reason: str,
        headers: list[tuple[str, str]],
        payload: bytes,
        finish: Any,
    ) -> None:
        no_body = self.command == "HEAD" or 100 <= status < 200 or status in (204, 304)
        sent = 0 if no_body else len(payload)
        finish(status, sent)  # before writing: a client that has its answer sees the counts
        self.send_response_only(status, reason)
        has_length = False
        for name, value in headers:
            has_length |= name.lower() == "content-length"
            self.send_header(name, value)
        if not no_body or (not has_length and status not in (204, 304) and not 100 <= status < 200):
            self.send_header("Content-Length", str(len(payload)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if not no_body and payload:
            self.wfile.write(payload)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_OPTIONS = do_PATCH = _proxy  # noqa: N815 - http.server's names


class LatencyProxy:
    """A threaded HTTP/1.1 reverse proxy on 127.0.0.1 in front of an S3 endpoint.

    Attributes: `host`, `port`, `endpoint` ("http://127.0.0.1:PORT"), `delay` (seconds added
    to every request, settable at any time), `emulator` (the S3Emulator behind it, if given).
    """

    def __init__(self, upstream: S3Emulator | str, *, delay: float = 0.0) -> None:
        if isinstance(upstream, S3Emulator):
            self.emulator: S3Emulator | None = upstream
            self.upstream_host, self.upstream_port = upstream.host, upstream.port
        else:
            self.emulator = None
            authority = upstream.partition("://")[2] or upstream
            host, _, port = authority.rstrip("/").rpartition(":")
            self.upstream_host, self.upstream_port = host, int(port)
        if self.upstream_host not in (HOST, "localhost"):
            raise ValueError(f"the proxy only forwards to {HOST}, not {self.upstream_host}")
        self.delay = float(delay)
        self._stats = _Stats()
        self._faults: list[_Fault] = []
        self._faults_lock = threading.Lock()
        self._server: _ProxyServer | None = None
        self._thread: threading.Thread | None = None
        self.host = HOST
        self.port = 0

    # life cycle ---------------------------------------------------------------------------
    def start(self) -> LatencyProxy:
        server = _ProxyServer(self)
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
            name=f"s3-proxy-{self.port}",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        self._close_sockets(server)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> LatencyProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def close_connections(self) -> int:
        """Close every open client connection (idle keep-alives included); returns how many."""
        return self._close_sockets(self._server) if self._server else 0

    @staticmethod
    def _close_sockets(server: _ProxyServer) -> int:
        with server.sockets_lock:
            sockets = list(server.open_sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        return len(sockets)

    # addresses ----------------------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def storage_options(self) -> dict[str, str]:
        """object_store-style options (`aws_*` keys) pointed at this proxy."""
        return storage_options(self.endpoint)

    @property
    def env(self) -> dict[str, str]:
        """The same as AWS_* environment variables (for monkeypatch.setenv or a subprocess)."""
        return environment(self.endpoint)

    def filesystem(self, *, max_attempts: int | None = None, **kwargs: Any) -> Any:
        """A pyarrow S3FileSystem through this proxy (`max_attempts=1`: no retries)."""
        return pyarrow_s3fs(self.endpoint, max_attempts=max_attempts, **kwargs)

    @staticmethod
    def url(bucket: str, key: str = "") -> str:
        """The URL s3://bucket/key (or s3://bucket)."""
        return f"s3://{bucket}/{key}" if key else f"s3://{bucket}"

    # faults -------------------------------------------------------------------------------
    def inject(
        self,
        kind: str | int,
        count: int = 1,
        *,
        methods: str | tuple[str, ...] | list[str] | None = None,
        path_contains: str | None = None,
    ) -> None:
        """Make the next `count` matching requests fail.

        kind: "500" (InternalError XML), "503" (SlowDown XML), "drop" (close the connection
        without a response), "reset" (TCP RST without a response), "truncate" (forward, send the
        full Content-Length but half the body, then close; on a response without a body it is
        used up with no effect). Ints 500 and 503 are accepted. The request is read in full
        and the delay applied first; faulted requests never reach moto (except "truncate").
        methods: e.g. "GET" or ("GET", "HEAD"); None matches all. path_contains: a substring of
        the raw request target (percent-encoded, query included). Injections queue in order;
        a request takes the first one that matches.
        """
        kind = str(kind)
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; expected one of {FAULT_KINDS}")
        if count < 1:
            raise ValueError("count must be >= 1")
        if isinstance(methods, str):
            methods = (methods,)
        method_set = frozenset(m.upper() for m in methods) if methods is not None else None
        with self._faults_lock:
            self._faults.append(_Fault(kind, count, method_set, path_contains))

    def clear_faults(self) -> None:
        with self._faults_lock:
            self._faults.clear()

    def pending_faults(self) -> int:
        """How many injected failures have not been used yet."""
        with self._faults_lock:
            return sum(f.remaining for f in self._faults)

    def _take_fault(self, method: str, target: str) -> str | None:
        with self._faults_lock:
            for fault in self._faults:
                if fault.matches(method, target):
                    fault.remaining -= 1
                    if fault.remaining == 0:
                        self._faults.remove(fault)
                    return fault.kind
        return None

    # counters -----------------------------------------------------------------------------
    def reset(self) -> None:
        """Zero the counters and the request log (pending faults and the delay stay)."""
        with self._stats.lock:
            self._stats.reset()

    def snapshot(self) -> dict[str, Any]:
        """A consistent copy of the counters.

        requests, by_method {"GET": n, ...}, by_status {200: n, ...}, response_bytes (body
        bytes sent), request_bytes (body bytes received), ranged_gets (GETs with a Range
        header), max_in_flight, in_flight, connections (TCP connections accepted),
        faults_injected, by_fault {"503": n, ...}.
        """
        s = self._stats
        with s.lock:
            return {
                "requests": s.requests,
                "by_method": dict(s.by_method),
                "by_status": dict(s.by_status),
                "response_bytes": s.response_bytes,
                "request_bytes": s.request_bytes,
                "ranged_gets": s.ranged_gets,
                "max_in_flight": s.max_in_flight,
                "in_flight": s.in_flight,
                "connections": s.connections,
                "faults_injected": sum(s.by_fault.values()),
                "by_fault": dict(s.by_fault),
            }

    def log(self) -> list[RequestRecord]:
        """Every request since the last reset(), in completion order."""
        with self._stats.lock:
            return list(self._stats.log)

    def log_dicts(self) -> list[dict[str, Any]]:
        return [asdict(r) for r in self.log()]
