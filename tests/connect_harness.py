"""A local Spark Connect server in a child process, for tests/test_spark_connect.py.

``SparkSession.builder.remote("local[2]")`` would start the server inside the test process,
on a SparkContext of its own; pytest's classic ``spark`` fixture (conftest.py) already holds
that process's one SparkContext, and the in-process way refuses to start next to it
(``SESSION_OR_CONTEXT_EXISTS``). So the server is the pyspark wheel's own
``SparkConnectServer`` run by ``spark-submit`` as a child process — another JVM, as a real
Connect server is — bound to 127.0.0.1 on a free port, with an authentication token, in a
working directory of its own (so nothing resolves a relative path by the test's directory
by accident). The client is ``pyspark.sql.connect.session.SparkSession`` built directly:
``pyspark.sql.SparkSession.builder.remote(...)`` refuses while a classic context exists,
and would switch the whole process into Connect mode (``SPARK_CONNECT_MODE_ENABLED``,
which makes ``pyspark.sql.functions`` build Connect columns for the classic tests too).

Needs the ``[connect]`` extra's packages (requirements-dev.txt) and Java, as Spark does.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"

#: The test server's configuration, as conftest.py's classic session: the oracle without
#: Parquet filter pushdown (Spark's drops NaN rows by statistics), the same time zone.
TEST_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.execution.arrow.pyspark.validateSchema.enabled": "true",
    "spark.sql.parquet.filterPushdown": "false",
    "spark.sql.session.timeZone": "America/New_York",
    "spark.driver.memory": "1g",
}

#: The connect extra's modules (grpcio, grpcio-status, googleapis-common-protos, zstandard).
CONNECT_MODULES = ("grpc", "grpc_status", "google.rpc", "zstandard")


def missing_modules() -> list[str]:
    """The Connect client modules that cannot be imported."""
    import importlib

    missing = []
    for name in CONNECT_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ConnectServer:
    """``start()`` launches the server and waits until it listens; ``session()`` is a Connect
    client of it; ``stop()`` ends the server (the child process started here, by its pid)."""

    def __init__(self, conf: dict[str, str] | None = None, master: str = "local[2]", startup_timeout: float = 180.0) -> None:
        self.conf = dict(conf or {})
        self.master = master
        self.startup_timeout = startup_timeout
        self.port = 0
        self.token = str(uuid.uuid4())
        self.workdir = Path(tempfile.mkdtemp(prefix="pqsift-connect-server-"))
        self.log_path = self.workdir / "server.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._launched = 0.0
        self.startup_seconds = 0.0

    def start(self) -> ConnectServer:
        """Launches the server and waits until it listens."""
        return self.launch().wait()

    def launch(self) -> ConnectServer:
        """Starts the server's process, without waiting for it."""
        import pyspark

        spark_home = Path(pyspark.__file__).parent
        self.port = _free_port()
        command = [
            str(spark_home / "bin" / "spark-submit"),
            "--master",
            self.master,
            "--class",
            SERVER_CLASS,
            "--name",
            "pqsift-connect-tests",
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            f"spark.connect.grpc.binding.port={self.port}",
        ]
        for key, value in self.conf.items():
            command += ["--conf", f"{key}={value}"]
        env = dict(os.environ)
        for name in ("SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_API_MODE"):
            env.pop(name, None)
        env["SPARK_HOME"] = str(spark_home)
        env["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = self.token
        # The server's Python workers: this interpreter, which has pqsift installed.
        env["PYSPARK_PYTHON"] = sys.executable
        env["PYSPARK_DRIVER_PYTHON"] = sys.executable
        self._launched = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(command, cwd=self.workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        return self

    def wait(self) -> ConnectServer:
        """Waits until the launched server listens (raises, with its log, if it does not)."""
        if self.process is None:
            raise RuntimeError("the Spark Connect server was not launched (or was stopped)")
        deadline = self._launched + self.startup_timeout
        while not self._listening():
            if self.process.poll() is not None:
                raise RuntimeError(f"the Spark Connect server exited ({self.process.returncode}) while starting:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the Spark Connect server did not listen within {self.startup_timeout:.0f} s:\n{self.log_tail()}")
            time.sleep(0.2)
        if not self.startup_seconds:
            self.startup_seconds = time.monotonic() - self._launched
        return self

    def _listening(self) -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            return sock.connect_ex(("127.0.0.1", self.port)) == 0

    @property
    def url(self) -> str:
        # "localhost" + token: a local (unencrypted) gRPC channel carrying the token.
        return f"sc://localhost:{self.port}/;token={self.token}"

    def session(self) -> Any:
        """A new Connect client session of this server."""
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        return ConnectSession.builder.remote(self.url).create()

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()  # spark-submit execs the JVM: this is the server itself
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
        if process is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)  # its log, warehouse, metastore


_shared: ConnectServer | None = None


def launch_shared() -> None:
    """Starts the test session's server (``TEST_CONF``) without waiting: conftest.py calls
    this once the tests are collected, if one needs the server, so that its JVM starts while
    the tests before it run."""
    global _shared
    if _shared is None:
        _shared = ConnectServer(TEST_CONF).launch()
        atexit.register(stop_shared)  # however the test run ends


def shared_server() -> ConnectServer:
    """The test session's server, listening (launched now if it was not)."""
    launch_shared()
    assert _shared is not None
    return _shared.wait()


def stop_shared() -> None:
    """Stops the test session's server, if one was launched."""
    global _shared
    server, _shared = _shared, None
    if server is not None:
        server.stop()
