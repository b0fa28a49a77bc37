"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "parquet-testing"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The public Apache parquet-testing corpus, beside the repository."""
    if not (CORPUS / "data").is_dir():
        pytest.fail(f"the parquet-testing corpus is missing at {CORPUS.resolve()}")
    return CORPUS.resolve()
