"""The ``metadata_size_hint`` read option: the same plan and rows whether the hint is
smaller than the footer, exactly the footer plus page index, or larger than the file
(the number of reads per hint is tested in ``tests/metadata_reading.rs``)."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

import pqsift


def footer_and_index_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    return struct.unpack("<I", data[-8:-4])[0] + 8, len(data)


def test_every_hint_gives_the_same_result(corpus: Path, tmp_path: Path) -> None:
    source = corpus / "data" / "alltypes_tiny_pages_plain.parquet"
    footer, size = footer_and_index_size(source)
    results = []
    for i, hint in enumerate([0, 8, footer - 1, footer, footer + 1, 64 << 10, size, size + 1, 1 << 30]):
        # A copy per hint: the metadata cache is keyed by path, so each hint really reads.
        path = tmp_path / f"copy{i}.parquet"
        shutil.copy(source, path)
        scan = pqsift.scan(path, filter="id > 6000 AND bool_col", columns=["id", "int_col"], metadata_size_hint=hint)
        plan = scan.plan()
        results.append((plan.metrics["pages_pruned"], plan.metrics["rows_selected"], scan.to_table().to_pydict()))
    assert all(r == results[0] for r in results)
    assert results[0][0] > 0, "the page index was read and used"


def test_bad_hints_are_rejected(corpus: Path) -> None:
    path = corpus / "data" / "alltypes_plain.parquet"
    with pytest.raises(TypeError, match="metadata_size_hint"):
        pqsift.scan(path, metadata_size_hint="big")
    with pytest.raises(ValueError, match="metadata_size_hint"):
        pqsift.scan(path, metadata_size_hint=-1)
    assert pqsift.scan(path, metadata_size_hint=16)._core.metadata_size_hint == 16
