"""Page locations from real files, and errors that name the file."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift
from pqsift import RowSelection
from pqsift._core import column_pages


def test_column_pages_and_scan_ranges_on_a_written_file(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    table = pa.table({"x": pa.array(range(10_000), pa.int64()), "s": [f"row {i}" for i in range(10_000)]})
    pq.write_table(
        table,
        path,
        row_group_size=5_000,
        data_page_size=4096,
        write_batch_size=256,
        use_dictionary=False,
        write_page_index=True,
    )

    row_groups = column_pages(str(path), "x")
    assert [rows for rows, _, _ in row_groups] == [5_000, 5_000]
    rows, pages, _ = row_groups[1]
    assert len(pages) > 3
    assert pages[0][2] == 0
    first_rows = [first for _, _, first in pages]
    assert first_rows == sorted(first_rows)

    # Selecting the rows of the third page only reads the third page.
    start = pages[2][2]
    end = pages[3][2]
    selection = RowSelection.from_ranges([(start, end)], rows)
    assert selection.scan_ranges(pages) == [(pages[2][0], pages[2][1])]
    assert selection.scan_ranges(pages, coalesce_gap=0) == [(pages[2][0], pages[2][1])]
    # A selection spanning the last row of page 2 and the first of page 3 reads both,
    # and they are adjacent in the file, so coalescing makes them one read.
    straddle = RowSelection.from_ranges([(end - 1, end + 1)], rows)
    two = straddle.scan_ranges(pages)
    assert len(two) == 2
    assert straddle.scan_ranges(pages, coalesce_gap=0) == [(two[0][0], two[0][1] + two[1][1])]


def test_dictionary_page_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "dict.parquet"
    pq.write_table(pa.table({"tag": ["a", "b", "c"] * 1000}), path, use_dictionary=True, write_page_index=True)
    (_, pages, dictionary), = column_pages(str(path), "tag")
    assert dictionary is not None
    offset, length = dictionary
    assert offset + length == pages[0][0]


def test_corpus_tiny_pages(corpus: Path) -> None:
    row_groups = column_pages(str(corpus / "data" / "alltypes_tiny_pages.parquet"), "int_col")
    (rows, pages, _), = row_groups
    assert rows == 7300
    assert len(pages) > 100
    everything = RowSelection.select_all(rows)
    assert len(everything.scan_ranges(pages)) == len(pages)
    assert RowSelection.skip_all(rows).scan_ranges(pages) == []


def test_file_without_page_index(corpus: Path) -> None:
    (rows, pages, _), = column_pages(str(corpus / "data" / "alltypes_plain.parquet"), "id")
    assert rows == 8
    assert pages == []


@pytest.mark.parametrize("name", ["PARQUET-1481.parquet"])
def test_corrupt_footer_names_the_file(corpus: Path, name: str) -> None:
    path = corpus / "bad_data" / name
    with pytest.raises(pqsift.CorruptFileError, match=name):
        column_pages(str(path), "x")


def test_not_parquet_and_missing_files(tmp_path: Path) -> None:
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not a parquet file at all")
    with pytest.raises(pqsift.CorruptFileError, match=r"junk\.parquet"):
        column_pages(str(junk), "x")
    with pytest.raises(OSError, match=r"missing\.parquet"):
        column_pages(str(tmp_path / "missing.parquet"), "x")


def test_unknown_column(corpus: Path) -> None:
    with pytest.raises(KeyError, match="nope"):
        column_pages(str(corpus / "data" / "alltypes_plain.parquet"), "nope")


def test_a_wide_footer_reads_the_same_on_any_number_of_threads(tmp_path: Path) -> None:
    """A footer of several megabytes (1,000 columns × 40 row groups) is decoded in parts, one
    per read thread: the rows, the pruning on the last row groups' statistics and the schema
    are those of a decoding on one thread, and pyarrow's."""
    path = tmp_path / "wide.parquet"
    rows = 4_000
    columns = {f"c{i}": pa.array(range(i, i + rows), pa.int64()) for i in range(1, 1_000)}
    table = pa.table({"id": pa.array(range(rows), pa.int64()), **columns})
    pq.write_table(table, path, row_group_size=rows // 40)
    assert pq.ParquetFile(path).metadata.serialized_size > 4 << 20  # two parts of 2 MiB
    expected = table.filter(pa.compute.greater_equal(table["c999"], 4_850)).select(["id", "c500", "c999"])
    results = []
    for threads in (1, 2, 3):
        pqsift._core.clear_metadata_cache()
        scan = pqsift.scan(path, columns=["id", "c500", "c999"], filter="c999 >= 4850", threads=threads)
        decisions = [row_group.decision for row_group in scan.plan().files[0].row_groups]
        results.append((decisions, scan.to_table()))
    for decisions, result in results:
        assert decisions == results[0][0]
        assert decisions.count("skip") == 38  # the statistics of the last row groups, decoded apart
        assert result.equals(expected)
