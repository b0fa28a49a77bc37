"""Shared pytest fixtures."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "parquet-testing"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The public Apache parquet-testing corpus, beside the repository."""
    if not (CORPUS / "data").is_dir():
        pytest.fail(f"the parquet-testing corpus is missing at {CORPUS.resolve()}")
    return CORPUS.resolve()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Launches the Spark Connect test server (tests/connect_harness.py) if a selected test
    needs it, without waiting: its JVM starts while the tests before those run."""
    if any("connect_server" in getattr(item, "fixturenames", ()) for item in session.items):
        import connect_harness

        if not connect_harness.missing_modules():
            connect_harness.launch_shared()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stops the Spark Connect test server if it was launched and never used (stopped
    otherwise by its fixture)."""
    harness = sys.modules.get("connect_harness")
    if harness is not None:
        harness.stop_shared()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local Spark session shared by the Spark tests (pqsift registered as a data source)."""
    pytest.importorskip("pyspark")
    import pqsift.spark

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("pqsift-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.execution.arrow.pyspark.validateSchema.enabled", "true")
        .config("spark.sql.parquet.filterPushdown", "false")
        .config("spark.sql.session.timeZone", "America/New_York")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    pqsift.spark.register(session)
    yield session
    session.stop()


@pytest.fixture
def py4j_commands(spark: Any) -> Iterator[list[str]]:
    """The Py4J commands the classic session sends its JVM while the test runs (each
    ``"c\n<object>\n<method>\n..."`` for a call)."""
    from py4j import clientserver

    sent: list[str] = []
    original = clientserver.ClientServerConnection.send_command

    def send_command(connection: Any, command: str) -> Any:
        sent.append(command)
        return original(connection, command)

    clientserver.ClientServerConnection.send_command = send_command  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        clientserver.ClientServerConnection.send_command = original  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def s3_emulator() -> Iterator[Any]:
    """A local S3 (moto's server, in-process, on 127.0.0.1) shared by the session.

    See tests/s3_harness.py: `S3Emulator` (new_bucket, upload_dir, upload_file, put_object,
    list_keys, get_object, endpoint, storage_options). State persists across tests: use
    `new_bucket()` for a fresh bucket. Skipped if moto is not installed.
    """
    pytest.importorskip("moto.server", reason="moto[s3] is not installed (requirements-dev.txt)")
    from s3_harness import S3Emulator

    emulator = S3Emulator().start()
    yield emulator
    emulator.stop()


@pytest.fixture
def s3(s3_emulator: Any) -> Iterator[Any]:
    """A fresh `LatencyProxy` in front of `s3_emulator` for one test: no delay, no faults,
    zero counters — and pqsift's process-wide metadata cache empty, so that the requests a
    test counts are its reads' own, not served by an earlier test's footers and small files.
    Point clients at `s3.storage_options` / `s3.endpoint` / `s3.filesystem()`; set
    `s3.delay`, call `s3.inject(...)`, read `s3.snapshot()` / `s3.log()`."""
    import pqsift
    from s3_harness import LatencyProxy

    pqsift._core.clear_metadata_cache()
    proxy = LatencyProxy(s3_emulator).start()
    yield proxy
    proxy.stop()
