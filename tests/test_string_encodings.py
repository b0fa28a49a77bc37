"""Strings and binaries in every encoding writers use for them — PLAIN, a dictionary,
DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY (prefix-compressed), in v1 and v2 data pages —
read as pyarrow reads them, whichever way the reader decodes them (its own PLAIN decoder,
the crate's as views, as dictionaries or as stored): every row, a filter on another column
(the strings filtered after decoding), a filter on the strings themselves, strings out as
views, and the row filter off. Values: NULLs, empty strings, non-ASCII text, values sharing
long prefixes and values longer than a view's 12 inline bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import pqsift

ROWS = 6_000


def _values(rng: np.random.Generator) -> list[str | None]:
    words = ["", "a", "é", "日本語のテキスト", "https://www.example.com/a/very/long/path/", "prefix-shared-"]
    out: list[str | None] = []
    for i in range(ROWS):
        if rng.random() < 0.15:
            out.append(None)
        else:
            out.append(f"{words[i % len(words)]}{i // 7}")
    return out


@pytest.mark.parametrize("compression", ["snappy", "zstd"])
@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
@pytest.mark.parametrize("encoding", ["PLAIN", "DICTIONARY", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY"])
def test_strings_in_every_encoding_read_as_pyarrow_reads_them(
    tmp_path: Path, encoding: str, page_version: str, compression: str
) -> None:
    rng = np.random.default_rng(11)
    strings = pa.array(_values(rng), pa.string())
    table = pa.table(
        {
            "n": pa.array(np.arange(ROWS), pa.int64()),
            "s": strings,
            "b": strings.cast(pa.binary()),
        }
    )
    options: dict[str, Any] = {
        "data_page_version": page_version,
        "write_page_index": True,
        "data_page_size": 2048,
        "compression": compression,
    }
    if encoding == "DICTIONARY":
        options["use_dictionary"] = ["s", "b"]
    else:
        options["use_dictionary"] = False
        options["column_encoding"] = {"s": encoding, "b": encoding, "n": "PLAIN"}
    path = tmp_path / "strings.parquet"
    pq.write_table(table, path, row_group_size=ROWS // 2, **options)
    written = pq.ParquetFile(path).metadata.row_group(0).column(1).encodings
    assert any(encoding in e for e in written), written

    def check(got: pa.Table, want: pa.Table) -> None:
        assert got.num_rows == want.num_rows
        for name in want.column_names:
            assert got.column(name).cast(want.schema.field(name).type).to_pylist() == want.column(name).to_pylist(), (
                name
            )

    check(pqsift.scan(path).to_table(), table)
    check(pqsift.scan(path, string_view=True).to_table(), table)
    every_third = table.filter(pc.equal(pc.bit_wise_and(table["n"], 3), 0))
    for options_ in ({}, {"string_view": True}, {"pushdown_filters": False}, {"selection_policy": "mask"}):
        check(pqsift.scan(path, filter="n % 4 = 0", **options_).to_table(), every_third)
    long_ones = table.filter(pc.fill_null(pc.greater(pc.utf8_length(table["s"]), 12), False))
    check(pqsift.scan(path, filter="length(s) > 12").to_table(), long_ones)
    check(pqsift.scan(path, filter="s IS NULL").to_table(), table.filter(pc.is_null(table["s"])))
    # A column only a predicate reads is evaluated as it is decoded, a few pages at a time:
    # every selected row, and those an earlier predicate left.
    has_one = pc.fill_null(pc.match_substring(table["s"], "1"), False)
    for where, want in (
        ("s LIKE '%1%'", has_one),
        ("n % 4 = 0 AND s LIKE '%1%'", pc.and_(pc.equal(pc.bit_wise_and(table["n"], 3), 0), has_one)),
        ("b > X'68'", pc.fill_null(pc.greater(table["b"], pa.scalar(b"h")), False)),
    ):
        check(pqsift.scan(path, columns=["n"], filter=where).to_table(), table.select(["n"]).filter(want))
        # Read again by the projection: the values of the rows that pass are kept for it.
        check(pqsift.scan(path, columns=["s", "b", "n"], filter=where).to_table(), table.filter(want))
    # Two predicates on one column: the second reads what the first kept.
    long_with_one = pc.and_(has_one, pc.fill_null(pc.greater(pc.utf8_length(table["s"]), 3), False))
    for columns in (["n"], ["n", "s"]):
        got = pqsift.scan(path, columns=columns, filter="s LIKE '%1%' AND length(s) > 3").to_table()
        check(got, table.select(columns).filter(long_with_one))
