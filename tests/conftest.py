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
